"""Copy bandwidth: a 256 MiB host->npu->host round trip next to a CPU clone of the same tensor; then
on-device dtype casts (the cast kernel) next to the same casts on the CPU.

    python benchmarks/bench_copy.py [--mib 256]

Prints the times (torch.utils.benchmark, same process, same run) and GB/s counting bytes read plus
bytes written, and the npu/CPU ratio.
"""
import argparse

import torch
import torch.utils.benchmark as benchmark

import torch_ops_nn  # noqa: F401


def measure(stmt: str, env: dict, label: str) -> float:
    t = benchmark.Timer(stmt=stmt, globals=env, label=label, num_threads=torch.get_num_threads())
    return t.blocked_autorange(min_run_time=2.0).median


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=256)
    args = parser.parse_args()
    n = args.mib * 1024 * 1024 // 4
    x = torch.randn(n)
    d = x.to("npu")
    env = {"x": x, "d": d, "torch": torch}
    t_cpu = measure("x.clone()", env, "cpu clone")
    t_h2d = measure("x.to('npu'); torch.npu.synchronize()", env, "host->npu")
    t_d2h = measure("d.cpu()", env, "npu->host")
    t_rt = measure("x.to('npu').cpu()", env, "round trip")
    t_d2d = measure("d.clone(); torch.npu.synchronize()", env, "npu clone")
    nbytes = n * 4
    gbps = lambda t, copies: 2 * nbytes * copies / t / 1e9  # noqa: E731  (read + write per copy)
    print(f"{args.mib} MiB float32, {torch.get_num_threads()} threads, "
          f"{torch_ops_nn._C._host_threads()} npu host threads")
    print(f"{'case':<28}{'time (ms)':>12}{'GB/s':>10}{'vs CPU clone':>16}")
    for name, t, copies in [("CPU clone", t_cpu, 1), ("host->npu", t_h2d, 1), ("npu->host", t_d2h, 1),
                            ("host->npu->host", t_rt, 2), ("npu clone (device)", t_d2d, 1)]:
        print(f"{name:<28}{t * 1e3:>12.1f}{gbps(t, copies):>10.2f}{t / t_cpu:>15.2f}x")
    casts()


def casts() -> None:
    img = torch.randint(0, 255, (8, 3, 224, 224), dtype=torch.uint8)
    f = torch.rand(8, 3, 224, 224)
    ids = torch.randint(0, 1000, (4_000_000,))
    print(f"\n{'cast (each npu run synchronizes)':<36}{'CPU (ms)':>10}{'npu (ms)':>10}{'npu/CPU':>10}")
    for name, stmt, t in [("uint8 image -> float32", "t.float()", img), ("float32 -> uint8", "t.to(torch.uint8)", f),
                          ("float32 -> float16", "t.half()", f), ("float32 -> int64", "t.long()", f),
                          ("int64 4M -> float32", "t.float()", ids), ("int64 4M -> int32", "t.int()", ids)]:
        c = benchmark.Timer(stmt, globals={"t": t, "torch": torch}, num_threads=torch.get_num_threads())
        n = benchmark.Timer(stmt + "; torch.npu.synchronize()", globals={"t": t.npu(), "torch": torch},
                            num_threads=torch.get_num_threads())
        tc, tn = c.blocked_autorange(min_run_time=0.5).median, n.blocked_autorange(min_run_time=0.5).median
        print(f"{name:<36}{tc * 1e3:>10.3f}{tn * 1e3:>10.3f}{tn / tc:>10.2f}")


if __name__ == "__main__":
    main()
