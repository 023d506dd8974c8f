"""The speed targets of issue #6 in one run: each an npu/CPU ratio measured side by side in this process
with torch.utils.benchmark (lower is better), with the achieved throughput. The two sides of each row
are timed in alternating blocks (5 rounds), so a drift of the machine's speed hits both alike.

    python benchmarks/bench_targets.py [--quick]

Targets: mm 2048^2 fp32 <= 0.6; ResNet-50 batch 8 eval through torch.compile(backend="npu") <= 0.75 of
CPU eager; ResNet-18 batch 1 eval (eager npu) <= 1.2; a 1-element add, launch to completion, <= 3;
fused Conv+BN+ReLU >= 1.3x faster than the separate ops (the seed's case and ResNet-50's layer1 3x3).

Rows with convolutions run twice: with the default torch.npu.conv.allow_hf32 = True (HF32 convs, as
torch_npu and cuDNN's TF32 default) and with it False (full float32 convs). The CPU side is float32."""
import argparse
import copy

import torch
import torch.nn.functional as F
import torchvision

import torch_ops_nn
from common import header, paired_seconds

SYNC = "; torch.npu.synchronize()"
# Multiply-adds of one 224x224 image through the network (convolutions and the classifier).
RESNET_GMAC = {"resnet18": 1.814, "resnet50": 4.089}


def row(name, t_npu, t_base, goal, better, work=""):
    ratio = t_npu / t_base
    ok = ratio <= goal if better == "<=" else ratio >= goal
    print(f"{name:<50}{t_npu * 1e3:>10.3f}{t_base * 1e3:>10.3f}{ratio:>8.2f}{better:>5}{goal:<5}"
          f"{'yes' if ok else 'NO':>5}   {work}")


def fused_case(x, w, stride, padding):
    c = w.shape[0]
    g, b, m, v = torch.rand(c) + 0.5, torch.randn(c) * 0.1, torch.randn(c) * 0.1, torch.rand(c) + 0.5
    env = {k: t.to("npu") for k, t in dict(x=x, w=w, g=g, b=b, m=m, v=v).items()}
    env.update(F=F, ops=torch_ops_nn, s=stride, p=padding)
    sep, fused = paired_seconds(
        "torch.relu(F.batch_norm(F.conv2d(x, w, None, s, p), m, v, g, b, False))" + SYNC, env,
        "ops.fused_conv_bn_relu(x, w, bn_weight=g, bn_bias=b, running_mean=m, running_var=v, stride=s, padding=p)"
        + SYNC, env)
    n, _, h, wd = x.shape
    oh = (h + 2 * padding[0] - w.shape[2]) // stride[0] + 1
    ow = (wd + 2 * padding[1] - w.shape[3]) // stride[1] + 1
    gflop = 2 * n * oh * ow * w.numel() / 1e9
    return fused, sep, f"fused conv {gflop / fused:.0f} GFLOP/s"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="shorter timing runs")
    args = parser.parse_args()
    t = 0.5 if args.quick else 2.0
    header("Speed targets (issue #6): npu/CPU in one run")
    print(f"{'target':<50}{'npu (ms)':>10}{'base (ms)':>10}{'ratio':>8}{'goal':>10}{'met':>5}   throughput")

    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    da, db = a.to("npu"), b.to("npu")
    t_npu, t_cpu = paired_seconds("torch.mm(a, b)" + SYNC, {"a": da, "b": db}, "torch.mm(a, b)", {"a": a, "b": b}, t)
    flop = 2 * 2048**3 / 1e9
    row("mm 2048^2 fp32", t_npu, t_cpu, 0.6, "<=", f"npu {flop / t_npu:.0f} GFLOP/s, CPU {flop / t_cpu:.0f}")

    with torch.no_grad():
        m50 = torchvision.models.resnet50().eval()
        x = torch.randn(8, 3, 224, 224)
        compiled = torch.compile(copy.deepcopy(m50).to("npu"), backend="npu")
        dx = x.to("npu")
        flop = 2 * 8 * RESNET_GMAC["resnet50"]
        for hf32 in (True, False):
            torch.npu.conv.allow_hf32 = hf32
            compiled(dx)
            t_npu, t_cpu = paired_seconds("m(x)" + SYNC, {"m": compiled, "x": dx}, "m(x)", {"m": m50, "x": x}, t)
            row(f"resnet50 b8 eval, compiled vs CPU eager, {'HF32' if hf32 else 'fp32'}", t_npu, t_cpu, 0.75,
                "<=", f"npu {flop / t_npu:.0f} GFLOP/s, CPU {flop / t_cpu:.0f}")
        torch.npu.conv.allow_hf32 = True

        m18 = torchvision.models.resnet18().eval()
        x = torch.randn(1, 3, 224, 224)
        d18, dx = copy.deepcopy(m18).to("npu"), x.to("npu")
        t_npu, t_cpu = paired_seconds("m(x)" + SYNC, {"m": d18, "x": dx}, "m(x)", {"m": m18, "x": x}, t)
        flop = 2 * RESNET_GMAC["resnet18"]
        row("resnet18 b1 eval, eager", t_npu, t_cpu, 1.2, "<=",
            f"npu {flop / t_npu:.0f} GFLOP/s, CPU {flop / t_cpu:.0f}")

    a, b = torch.ones(1), torch.ones(1)
    t_npu, t_cpu = paired_seconds("torch.add(a, b)" + SYNC, {"a": a.to("npu"), "b": b.to("npu")}, "torch.add(a, b)",
                                  {"a": a, "b": b}, t)
    row("1-element add, launch to completion", t_npu, t_cpu, 3.0, "<=", f"{t_npu * 1e6:.1f} us per op")

    for hf32 in (True, False):
        torch.npu.conv.allow_hf32 = hf32
        tag = "HF32" if hf32 else "fp32"
        fused, sep, work = fused_case(torch.randn(1, 3, 224, 224), torch.randn(64, 3, 7, 7) * 0.1, (2, 2), (3, 3))
        row(f"fused vs separate: seed 1x3x224x224 7x7 s2, {tag}", sep, fused, 1.3, ">=", work)
        fused, sep, work = fused_case(torch.randn(8, 64, 56, 56), torch.randn(64, 64, 3, 3) * 0.05, (1, 1), (1, 1))
        row(f"fused vs separate: r50 8x64x56x56 3x3, {tag}", sep, fused, 1.3, ">=", work)
    torch.npu.conv.allow_hf32 = True
    print("(fused rows: 'npu' is the separate ops, 'base' the fused op, ratio = speedup)")


if __name__ == "__main__":
    main()
