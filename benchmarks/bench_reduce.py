"""Reductions and softmax: npu (simulated, Ascend C kernels) vs PyTorch CPU, measured in the same run.

    python benchmarks/bench_reduce.py [--min-run-time 1.0] [--threads N]

Each npu statement ends with torch.npu.synchronize(), so it times the whole launch + kernel. Prints a table
of median times and the npu/CPU ratio (lower is better; the target for these memory-bound ops is <= 1.5).
--threads N runs both sides on N threads (torch.set_num_threads and TORCH_OPS_NN_HOST_THREADS); on a
machine shared with other jobs, --threads 1 gives the steadier comparison.
"""
import argparse

import threads_arg

if __name__ == "__main__":
    threads_arg.apply()  # before torch loads torch_ops_nn

import torch  # noqa: E402
import torch.utils.benchmark as benchmark  # noqa: E402

import torch_ops_nn  # noqa: F401,E402

CASES = [
    # name, shape, statement on `x`
    ("sum, 16M float32", (16 * 1024 * 1024,), "x.sum()"),
    ("softmax(-1), (64, 4096) float32", (64, 4096), "torch.softmax(x, -1)"),
    ("log_softmax(-1), (64, 4096) float32", (64, 4096), "torch.log_softmax(x, -1)"),
    ("mean((2, 3)), (8, 256, 56, 56) float32", (8, 256, 56, 56), "x.mean((2, 3))"),
    ("sum((0, 2, 3)), (8, 256, 56, 56) float32", (8, 256, 56, 56), "x.sum((0, 2, 3))"),
    ("amax(-1), (4096, 1000) float32", (4096, 1000), "x.amax(-1)"),
]


def measure(stmt: str, x: torch.Tensor, min_run_time: float) -> float:
    t = benchmark.Timer(stmt=stmt, globals={"x": x, "torch": torch}, num_threads=torch.get_num_threads())
    return t.blocked_autorange(min_run_time=min_run_time).median


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-run-time", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=0, help="threads for both sides (default: all)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"{torch.get_num_threads()} CPU threads, {torch_ops_nn._C._host_threads()} npu host threads")
    print(f"{'case':<44}{'CPU (ms)':>10}{'npu (ms)':>10}{'npu/CPU':>9}")
    for name, shape, stmt in CASES:
        x = torch.randn(shape)
        d = x.to("npu")
        eval(stmt, {"x": d, "torch": torch})  # warm up (allocator, first launch)
        torch.npu.synchronize()
        t_cpu = measure(stmt, x, args.min_run_time)
        t_npu = measure(stmt + "; torch.npu.synchronize()", d, args.min_run_time)
        print(f"{name:<44}{t_cpu * 1e3:>10.3f}{t_npu * 1e3:>10.3f}{t_npu / t_cpu:>9.2f}")


if __name__ == "__main__":
    main()
