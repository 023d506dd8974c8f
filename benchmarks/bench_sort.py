"""Sorting: npu (the sort kernel: Sort32 + MrgSort in UB, merge passes over GM for long rows; long 1-D
integers as an LSD radix sort by bytes, other integers over 16-bit digits; topk beyond its kernel, median
and unique over the sort) vs PyTorch CPU.

    python benchmarks/bench_sort.py [--min-time 0.5]

Each case runs the same statement on CPU tensors and on npu tensors (the npu statement synchronizes),
with torch.utils.benchmark in one process, and prints both times and the npu/CPU ratio.
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # this checkout's torch_ops_nn

import torch  # noqa: E402

import torch_ops_nn  # noqa: E402,F401
from common import run_cases  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-time", type=float, default=0.5)
    args = parser.parse_args()
    g = torch.Generator().manual_seed(0)
    cases = [  # name, statement, tensors
        ("sort (1024,1000) dim 1", "torch.sort(x, dim=1)", dict(x=torch.randn(1024, 1000, generator=g))),
        ("sort (1024,1000) dim 1 half", "torch.sort(x, dim=1)",
         dict(x=torch.randn(1024, 1000, generator=g).half())),
        ("sort (64,4096) dim 1 descending", "torch.sort(x, dim=1, descending=True)",
         dict(x=torch.randn(64, 4096, generator=g))),
        ("sort (100000,8) dim 1", "torch.sort(x, dim=1)", dict(x=torch.randn(100000, 8, generator=g))),
        ("argsort (4096,256) dim 0", "torch.argsort(x, dim=0)", dict(x=torch.randn(4096, 256, generator=g))),
        ("sort 64K", "torch.sort(x)", dict(x=torch.randn(1 << 16, generator=g))),
        ("sort 1M", "torch.sort(x)", dict(x=torch.randn(1 << 20, generator=g))),
        ("argsort int64 1M (radix: 8 byte passes)", "torch.argsort(x)",
         dict(x=torch.randint(-(1 << 62), 1 << 62, (1 << 20,), generator=g))),
        ("argsort int64 1M ids < 2^20 (3 passes)", "torch.argsort(x)",
         dict(x=torch.randint(0, 1 << 20, (1 << 20,), generator=g))),
        ("argsort int32 (1024,1000) dim 1", "torch.argsort(x, dim=1)",
         dict(x=torch.randint(-(1 << 30), 1 << 30, (1024, 1000), generator=g, dtype=torch.int32))),
        ("topk k=100 of (64,50000)", "torch.topk(x, 100, dim=1)", dict(x=torch.randn(64, 50000, generator=g))),
        ("median (1024,1000) dim 1", "torch.median(x, dim=1)", dict(x=torch.randn(1024, 1000, generator=g))),
        ("unique 1M int64 (return_counts)", "torch.unique(x, return_counts=True)",
         dict(x=torch.randint(0, 1000, (1 << 20,), generator=g))),
    ]
    run_cases("Sorting: npu vs CPU in one run", cases, args.min_time)


if __name__ == "__main__":
    main()
