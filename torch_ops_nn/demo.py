"""The tour of ``python -m torch_ops_nn demo``: the environment, then the seed's ops on npu against the CPU."""
from __future__ import annotations

import time

import torch


def _step(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def run(quick: bool = False) -> int:
    import torch_ops_nn
    from torch_ops_nn.__main__ import info

    _step("1. Environment check")
    rc = info()
    if rc != 0:
        return rc

    _step("2. Host <-> npu round trip")
    n = 1 << (20 if quick else 24)
    x = torch.randn(n)
    t0 = time.perf_counter()
    y = x.to("npu")
    back = y.cpu()
    dt = time.perf_counter() - t0
    ok = torch.equal(back, x)
    print(f"  {n * 4 / 2**20:.0f} MiB host->npu->host in {dt * 1e3:.1f} ms "
          f"({2 * n * 4 / dt / 1e9:.2f} GB/s), identical: {ok}")
    print(f"  npu memory allocated: {torch.npu.memory_allocated() / 2**20:.1f} MiB, "
          f"reserved: {torch.npu.memory_reserved() / 2**20:.1f} MiB")
    del y
    fallbacks = torch_ops_nn.fallback_ops()
    if fallbacks:
        print(f"\n  ops that ran through the CPU fallback: {', '.join(fallbacks)}")
    return 0 if ok else 1
