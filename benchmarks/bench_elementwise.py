"""Memory-bound elementwise ops: npu (Ascend C kernels on the simulated NPU) vs PyTorch CPU.

    python benchmarks/bench_elementwise.py [--mib 64] [--min-time 1.0]

add of two 16M-element float32 tensors, relu and sigmoid of 16M elements (plus a few more; then
integer ops and erfinv / lgamma / digamma on 4M elements), each
measured with torch.utils.benchmark in the same process; the npu statement synchronizes so the
kernel's full run is timed. Prints times, GB/s (bytes read + written) and the npu/CPU ratio.
Note: out-of-place CPU ops pay page faults for their fresh 64 MiB outputs (the CPU allocator returns
them to the OS); the in-place row (add_) compares the pure streaming cost.
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # this checkout's torch_ops_nn

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.benchmark as benchmark  # noqa: E402

import torch_ops_nn  # noqa: E402


def measure(stmt: str, env: dict, min_time: float) -> float:
    t = benchmark.Timer(stmt=stmt, globals=env, num_threads=torch.get_num_threads())
    return t.blocked_autorange(min_run_time=min_time).median


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=64, help="size of one float32 operand (64 MiB = 16M elements)")
    parser.add_argument("--min-time", type=float, default=1.0)
    args = parser.parse_args()
    n = args.mib * 1024 * 1024 // 4
    x, y = torch.randn(n), torch.randn(n)
    dx, dy = x.to("npu"), y.to("npu")
    bias = torch.randn(n // 4096)
    cases = [  # name, statement on (a, b), operand bytes moved per element
        ("add", "a + b", 12),
        ("relu", "torch.relu(a)", 8),
        ("sigmoid", "torch.sigmoid(a)", 8),
        ("mul scalar", "a * 0.5", 8),
        ("gelu", "F.gelu(a)", 8),
        ("add_ (in place)", "a.add_(b)", 12),
        ("threshold_backward", "torch.ops.aten.threshold_backward(b, a, 0)", 12),
        ("bias add [4096, C]", "a.view(-1, 4096) + c.view(-1, 1)", 8),
        ("to(float16)", "a.half()", 6),
    ]
    print(f"{n / 2**20:g}M float32 elements, {torch.get_num_threads()} CPU threads, "
          f"{torch_ops_nn._C._host_threads()} npu host threads, torch_ops_nn from {torch_ops_nn.__file__}")
    print(f"{'op':<22}{'CPU ms':>10}{'npu ms':>10}{'npu GB/s':>10}{'npu/CPU':>10}")
    for name, stmt, bytes_per in cases:
        t_cpu = measure(stmt, {"a": x, "b": y, "c": bias, "torch": torch, "F": F}, args.min_time)
        t_npu = measure(stmt + "; torch.npu.synchronize()",
                        {"a": dx, "b": dy, "c": bias.to("npu"), "torch": torch, "F": F}, args.min_time)
        print(f"{name:<22}{t_cpu * 1e3:>10.3f}{t_npu * 1e3:>10.3f}{n * bytes_per / t_npu / 1e9:>10.2f}"
              f"{t_npu / t_cpu:>9.2f}x")
    # Integer dtypes and the special functions, on 1/4 of the elements (uint8 wraps through int32
    # lanes; int64 mul is ~30 int32 launches on the words).
    m = n // 4
    g = torch.Generator().manual_seed(0)
    u8 = [torch.randint(0, 256, (m,), dtype=torch.uint8, generator=g) for _ in range(2)]
    i32 = [torch.randint(-2**31, 2**31 - 1, (m,), dtype=torch.int32, generator=g) for _ in range(2)]
    i64 = [torch.randint(-2**40, 2**40, (m,), generator=g) for _ in range(2)]
    pos, unit = torch.rand(m, generator=g) * 10 + 0.1, torch.rand(m, generator=g) * 1.8 - 0.9
    int_cases = [  # name, statement, operands, bytes moved per element
        ("uint8 add", "a + b", u8, 3), ("uint8 > (compare)", "a > b", u8, 3), ("int32 & (bitwise)", "a & b", i32, 12),
        ("int32 << 3", "a << 3", i32, 8), ("int64 mul (exact)", "a * b", i64, 24),
        ("erfinv", "torch.erfinv(a)", [unit, unit], 8), ("lgamma", "torch.lgamma(a)", [pos, pos], 8),
        ("digamma", "torch.digamma(a)", [pos, pos], 8),
    ]
    print(f"{m / 2**20:g}M elements:")
    for name, stmt, (a, b), bytes_per in int_cases:
        t_cpu = measure(stmt, {"a": a, "b": b, "torch": torch}, args.min_time)
        t_npu = measure(stmt + "; torch.npu.synchronize()", {"a": a.to("npu"), "b": b.to("npu"), "torch": torch},
                        args.min_time)
        print(f"{name:<22}{t_cpu * 1e3:>10.3f}{t_npu * 1e3:>10.3f}{m * bytes_per / t_npu / 1e9:>10.2f}"
              f"{t_npu / t_cpu:>9.2f}x")


if __name__ == "__main__":
    main()
