"""Matmul on the cube kernel vs PyTorch CPU (MKL) in the same process.

    PYTHONPATH=. python benchmarks/bench_mm.py [--sizes 1024 2048] [--min-time 1.0]   (from the repo root)

    PYTHONPATH=. python benchmarks/bench_mm.py --gemv      (small-M inference Linear layers)

Square mm in float32 / float16 / bfloat16, plus the transposed-operand (nn.Linear backward) form
and a ResNet-50 fc layer. Prints times (torch.utils.benchmark; the npu statement synchronizes),
GFLOP/s and the npu/CPU time ratio (< 1 means the npu is faster).

--gemv: F.linear under no_grad with 1 or 2 rows (a batch-1 decoder step, a ResNet's fc at batch 1),
which run on the vector cores' GEMV (ascendc_kernels/gemv.cpp) with the weight's cached row-major
copy. Prints the weight's streaming rate (GB/s) beside the ratio; TORCH_OPS_NN_GEMV=0 runs the same
cases on the cube for comparison.
"""
import argparse

import torch
import torch.utils.benchmark as benchmark

import torch_ops_nn  # noqa: F401


def measure(stmt: str, env: dict, min_time: float) -> float:
    t = benchmark.Timer(stmt=stmt, globals=env, num_threads=torch.get_num_threads())
    return t.blocked_autorange(min_run_time=min_time).median


def gemv(min_time: float) -> None:
    import torch.nn.functional as F
    print(f"{torch.get_num_threads()} CPU threads, {torch_ops_nn._C._host_threads()} npu host threads")
    print(f"{'F.linear (rows x in -> out)':<30}{'dtype':<10}{'cpu us':>9}{'npu us':>9}{'npu GB/s':>10}{'npu/cpu':>9}")
    cases = [(1, 512, 1000), (1, 2048, 1000), (1, 768, 768), (1, 768, 3072), (1, 3072, 768), (2, 1024, 4096),
             (1, 4096, 4096)]
    for m, k, n in cases:
        for dt in (torch.float32, torch.bfloat16):
            w, b, x = torch.randn(n, k).to(dt), torch.randn(n).to(dt), torch.randn(m, k).to(dt)
            wn, bn, xn = w.npu(), b.npu(), x.npu()
            env = {"F": F, "torch": torch, "w": w, "b": b, "x": x, "wn": wn, "bn": bn, "xn": xn}
            with torch.no_grad():
                for _ in range(3):  # the second use caches the weight's row-major copy
                    F.linear(xn, wn, bn)
                t_cpu = measure("with torch.no_grad(): F.linear(x, w, b)", env, min_time)
                t_npu = measure("with torch.no_grad(): F.linear(xn, wn, bn)\ntorch.npu.synchronize()", env, min_time)
            gbs = n * k * w.element_size() / t_npu / 1e9
            print(f"{f'{m} x {k} -> {n}':<30}{str(dt).replace('torch.', ''):<10}{t_cpu * 1e6:>9.1f}{t_npu * 1e6:>9.1f}"
                  f"{gbs:>10.1f}{t_npu / t_cpu:>8.2f}x")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    p.add_argument("--min-time", type=float, default=1.0)
    p.add_argument("--precision", default="highest", choices=["highest", "high", "medium"],
                   help="torch.set_float32_matmul_precision: high/medium let float run bf16x3 on the cube (HF32 mode)")
    p.add_argument("--gemv", action="store_true", help="small-M inference Linear cases (the vector GEMV) only")
    args = p.parse_args()
    torch.set_float32_matmul_precision(args.precision)
    if args.gemv:
        gemv(args.min_time)
        return
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
