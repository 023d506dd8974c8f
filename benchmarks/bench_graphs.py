"""NPU graph replay versus eager launches, npu vs CPU eager in one run.

A replay runs the captured kernels back to back on the stream's executor: no Python, dispatcher,
argument checks or tiling per op. It pays off where the host's per-op work is a large share of a
step (small batches, many small ops).

    python benchmarks/bench_graphs.py
"""
import torch
import torchvision

import torch_ops_nn  # noqa: F401
from common import header, median_seconds, table


def graphed(fn, static_x):
    g = torch.npu.NPUGraph()
    for _ in range(3):
        fn(static_x)
    with torch.npu.graph(g):
        static_y = fn(static_x)
    return g, static_y


def main() -> None:
    header("NPU graphs: eager launches vs replay (replay: copy the input in, replay, synchronize)")
    torch.manual_seed(0)
    rows = []
    with torch.no_grad():
        # ResNet-18, batch 1, eval.
        model = torchvision.models.resnet18().eval()
        x = torch.randn(1, 3, 224, 224)
        m_npu = torchvision.models.resnet18().eval().npu()
        m_npu.load_state_dict(model.state_dict())
        sx = x.npu()
        g, _ = graphed(m_npu, sx)
        t_cpu = median_seconds("model(x)", {"model": model, "x": x}, 2.0)
        rows.append(("resnet18 b1 eval, eager", median_seconds(
            "m(sx); torch.npu.synchronize()", {"m": m_npu, "sx": sx}, 2.0), t_cpu))
        rows.append(("resnet18 b1 eval, graph replay", median_seconds(
            "sx.copy_(xn); g.replay(); torch.npu.synchronize()", {"g": g, "sx": sx, "xn": x.npu()}, 2.0), t_cpu))
        del g
        for mode in ("default", "reduce-overhead"):
            torch._dynamo.reset()
            f = torch.compile(m_npu, backend="npu", mode=mode)
            for _ in range(3):
                f(sx)
            rows.append((f"resnet18 b1 eval, compiled {mode}", median_seconds(
                "f(xn); torch.npu.synchronize()", {"f": f, "xn": x.npu()}, 2.0), t_cpu))

        # A small MLP block (LayerNorm, two Linears, GELU, residual) at batch 4: per-op overhead bound.
        mlp = torch.nn.Sequential(torch.nn.LayerNorm(256), torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                  torch.nn.Linear(1024, 256)).eval()

        def block(m, t):
            for _ in range(4):
                t = t + m(t)
            return t

        mlp_npu = torch.nn.Sequential(*[torch.nn.LayerNorm(256), torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                        torch.nn.Linear(1024, 256)]).eval().npu()
        mlp_npu.load_state_dict(mlp.state_dict())
        h = torch.randn(4, 256)
        sh = h.npu()
        g, _ = graphed(lambda t: block(mlp_npu, t), sh)
        t_cpu = median_seconds("block(mlp, h)", {"block": block, "mlp": mlp, "h": h})
        rows.append(("4 MLP blocks, 4x256, eager", median_seconds(
            "block(m, sh); torch.npu.synchronize()", {"block": block, "m": mlp_npu, "sh": sh}), t_cpu))
        rows.append(("4 MLP blocks, 4x256, graph replay", median_seconds(
            "sh.copy_(hn); g.replay(); torch.npu.synchronize()", {"g": g, "sh": sh, "hn": h.npu()}), t_cpu))
        del g
    table(rows)


if __name__ == "__main__":
    main()
