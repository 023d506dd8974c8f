"""Matmul on the cube kernel vs PyTorch CPU (MKL) in the same process.

    PYTHONPATH=. python benchmarks/bench_mm.py [--sizes 1024 2048] [--min-time 1.0]   (from the repo root)

Square mm in float32 / float16 / bfloat16, plus the transposed-operand (nn.Linear backward) form
and a ResNet-50 fc layer. Prints times (torch.utils.benchmark; the npu statement synchronizes),
GFLOP/s and the npu/CPU time ratio (< 1 means the npu is faster).
"""
import argparse

import torch
import torch.utils.benchmark as benchmark

import torch_ops_nn  # noqa: F401


def measure(stmt: str, env: dict, min_time: float) -> float:
    t = benchmark.Timer(stmt=stmt, globals=env, num_threads=torch.get_num_threads())
    return t.blocked_autorange(min_run_time=min_time).median


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    p.add_argument("--min-time", type=float, default=1.0)
    p.add_argument("--precision", default="highest", choices=["highest", "high", "medium"],
                   help="torch.set_float32_matmul_precision: high/medium let float run bf16x3 on the cube (HF32 mode)")
    args = p.parse_args()
    torch.set_float32_matmul_precision(args.precision)
    rows = []
    cases = []
    for n in args.sizes:
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            cases.append((f"mm {n}x{n}x{n}", dt, (n, n), (n, n), False))
    cases.append(("mm A^T B (grad W) 1024", torch.float32, (1024, 1024), (1024, 1024), True))
    cases.append(("linear 8x2048 -> 1000", torch.float32, (8, 2048), (2048, 1000), False))
    for name, dt, sa, sb, ta in cases:
        a = torch.randn(sa).to(dt)
        b = torch.randn(sb).to(dt)
        if ta:
            a = a.t().contiguous().t()  # column-major view, as autograd passes it
        an = a.t().contiguous().npu().t() if ta else a.npu()
        bn = b.npu()
        env = {"a": a, "b": b, "an": an, "bn": bn, "torch": torch}
        t_cpu = measure("torch.mm(a, b)", env, args.min_time)
        t_npu = measure("torch.mm(an, bn); torch.npu.synchronize()", env, args.min_time)
        flops = 2.0 * sa[0] * sa[1] * sb[1]
        rows.append((name, str(dt).replace("torch.", ""), t_cpu, t_npu, flops))
    print(f"{torch.get_num_threads()} CPU threads, {torch_ops_nn._C._host_threads()} npu host threads")
    print(f"{'case':<26}{'dtype':<10}{'cpu ms':>9}{'npu ms':>9}{'cpu GF/s':>10}{'npu GF/s':>10}{'npu/cpu':>9}")
    for name, dt, tc, tn, fl in rows:
        print(f"{name:<26}{dt:<10}{tc * 1e3:>9.2f}{tn * 1e3:>9.2f}{fl / tc / 1e9:>10.1f}{fl / tn / 1e9:>10.1f}"
              f"{tn / tc:>8.2f}x")


if __name__ == "__main__":
    main()
