"""Per-op overhead: a 1-element add, launch to completion through the async stream, npu vs CPU eager.

    python benchmarks/bench_overhead.py
"""
import torch

import torch_ops_nn  # noqa: F401
from common import header, median_seconds, table


def main() -> None:
    header("Per-op overhead (1-element tensors)")
    a, b = torch.ones(1), torch.ones(1)
    da, db = a.to("npu"), b.to("npu")
    rows = [
        ("add, launch only (async)", median_seconds("torch.add(da, db)", {"da": da, "db": db}),
         median_seconds("torch.add(a, b)", {"a": a, "b": b})),
        ("add, launch to completion (synchronize)",
         median_seconds("torch.add(da, db); torch.npu.synchronize()", {"da": da, "db": db}),
         median_seconds("torch.add(a, b)", {"a": a, "b": b})),
        ("100 dependent adds, then synchronize",
         median_seconds("x = da\nfor _ in range(100): x = torch.add(x, db)\ntorch.npu.synchronize()",
                        {"da": da, "db": db}),
         median_seconds("x = a\nfor _ in range(100): x = torch.add(x, b)", {"a": a, "b": b})),
    ]
    table(rows)


if __name__ == "__main__":
    main()
