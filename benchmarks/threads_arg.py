"""`--threads N` for benchmark scripts: both sides on N threads. Imported before torch, because
torch's autoload loads torch_ops_nn, which sizes its host thread pool once
(TORCH_OPS_NN_HOST_THREADS); torch.set_num_threads(N) is the script's part."""
import argparse
import os
import sys


def apply() -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--threads", type=int, default=0)
    n = pre.parse_known_args(sys.argv[1:])[0].threads
    if n > 0:
        os.environ["TORCH_OPS_NN_HOST_THREADS"] = str(n)
    return n
