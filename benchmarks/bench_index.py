"""Indexing ops: npu (the gather / scatter / index_put / index_select kernels) vs PyTorch CPU.

    python benchmarks/bench_index.py [--min-time 0.5]

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
    x1k = torch.randn(1024, 1000, generator=g)
    label = torch.randint(0, 1000, (1024, 1), generator=g)
    i1k = torch.randint(0, 1000, (1024, 1000), generator=g)
    s1k = torch.randn(1024, 1000, generator=g)
    x256 = torch.randn(4096, 256, generator=g)
    i256 = torch.randint(0, 4096, (4096, 256), generator=g)
    flat = torch.randn(1 << 20, generator=g)
    iflat = torch.randint(0, 1 << 20, (1 << 20,), generator=g)
    table = torch.randn(10000, 128, generator=g)
    rows = torch.randint(0, 10000, (50000,), generator=g)
    src_rows = torch.randn(50000, 128, generator=g)
    mask = torch.rand(4096, 256, generator=g) < 0.5
    # message passing: 100k edges into 10k nodes of 64 features
    nodes = torch.zeros(10000, 64)
    edge_dst = torch.randint(0, 10000, (100000,), generator=g)
    msg = torch.randn(100000, 64, generator=g)
    bins = torch.randint(0, 1000, (1 << 20,), generator=g)
    cases = [  # name, statement, tensors
        ("gather (1024,1000) dim 1, one per row", "torch.gather(x, 1, i)", dict(x=x1k, i=label)),
        ("gather (1024,1000) dim 1, full", "torch.gather(x, 1, i)", dict(x=x1k, i=i1k)),
        ("gather (4096,256) dim 0", "torch.gather(x, 0, i)", dict(x=x256, i=i256)),
        ("gather 1M -> 1M", "torch.gather(x, 0, i)", dict(x=flat, i=iflat)),
        ("scatter_ (1024,1000) dim 1", "x.scatter_(1, i, s)", dict(x=x1k.clone(), i=i1k, s=s1k)),
        ("scatter_add (1024,1000) dim 1", "x.scatter_add(1, i, s)", dict(x=x1k, i=i1k, s=s1k)),
        ("scatter_add (4096,256) dim 0", "x.scatter_add(0, i, s)", dict(x=x256, i=i256, s=x256)),
        ("scatter_add 1M -> 1M", "x.scatter_add(0, i, s)", dict(x=flat, i=iflat, s=flat)),
        ("index_add (10000,128) <- 50000 rows", "x.index_add(0, i, s)", dict(x=table, i=rows, s=src_rows)),
        ("index_add 1M -> 1M", "x.index_add(0, i, s)", dict(x=flat, i=iflat, s=flat)),
        ("scatter_add edges: (100k,64) expanded index", "x.scatter_add(0, i.view(-1, 1).expand(-1, 64), s)",
         dict(x=nodes, i=edge_dst, s=msg)),
        ("scatter_reduce amax edges (100k,64)",
         "x.scatter_reduce(0, i.view(-1, 1).expand(-1, 64), s, 'amax', include_self=False)",
         dict(x=nodes, i=edge_dst, s=msg)),
        ("bincount 1M into 1000", "torch.bincount(i, minlength=1000)", dict(i=bins)),
        ("x[i] += rows (index_put_ accumulate)", "x.index_put_((i,), s, accumulate=True)",
         dict(x=table.clone(), i=rows, s=src_rows)),
        ("x[i] = rows (index_put_)", "x.index_put_((i,), s)", dict(x=table.clone(), i=rows, s=src_rows)),
        ("x[i] (index_select) 50000 rows", "x[i]", dict(x=table, i=rows)),
        ("x[mask] = 0 (4096,256)", "x.__setitem__(m, 0.0)", dict(x=x256.clone(), m=mask)),
    ]
    run_cases("Indexing: npu vs CPU in one run", cases, args.min_time)


if __name__ == "__main__":
    main()
