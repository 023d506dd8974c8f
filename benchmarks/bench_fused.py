"""Fused Conv+BN+ReLU vs the separate ops on npu (warm-up, then 50 runs each; torch.utils.benchmark):
the seed's case (1x3x224x224, 64x3x7x7, stride 2, padding 3) and ResNet-50's 3x3 64-channel 56x56
layer at batch 8. Also the CPU time of the separate ops for reference.

    python benchmarks/bench_fused.py
"""
import torch
import torch.nn.functional as F

import torch_ops_nn
from common import header, median_seconds


def case(name, x, w, stride, padding):
    c = w.shape[0]
    bn = [torch.rand(c) + 0.5, torch.randn(c) * 0.1, torch.randn(c) * 0.1, torch.rand(c) + 0.5]
    env_cpu = {"x": x, "w": w, "g": bn[0], "b": bn[1], "m": bn[2], "v": bn[3], "F": F, "s": stride, "p": padding}
    env = {k: (v.to("npu") if isinstance(v, torch.Tensor) else v) for k, v in env_cpu.items()}
    env["ops"] = torch_ops_nn
    sep = "torch.relu(F.batch_norm(F.conv2d(x, w, None, s, p), m, v, g, b, False))"
    fused = "ops.fused_conv_bn_relu(x, w, bn_weight=g, bn_bias=b, running_mean=m, running_var=v, stride=s, padding=p)"
    ref = eval(sep, {"torch": torch}, env_cpu)
    out = eval(fused, {"torch": torch}, env).cpu()
    err = ((out - ref).abs().max() / ref.abs().max()).item()
    t_sep = median_seconds(sep + "; torch.npu.synchronize()", env)
    t_fused = median_seconds(fused + "; torch.npu.synchronize()", env)
    t_cpu = median_seconds(sep, env_cpu)
    print(f"{name:<44}{t_sep * 1e3:>10.3f}{t_fused * 1e3:>10.3f}{t_sep / t_fused:>9.2f}x{t_cpu * 1e3:>10.3f}"
          f"{t_fused / t_cpu:>9.2f}   rel.err {err:.1e}")


def main() -> None:
    header("Fused Conv+BN+ReLU vs separate ops on npu")
    print(f"{'case':<44}{'sep (ms)':>10}{'fused':>10}{'speedup':>10}{'CPU sep':>10}{'fused/CPU':>9}")
    case("seed: 1x3x224x224, 64x3x7x7 s2 p3", torch.randn(1, 3, 224, 224), torch.randn(64, 3, 7, 7) * 0.1, (2, 2),
         (3, 3))
    case("resnet50 layer1: 8x64x56x56, 64x64x3x3 p1", torch.randn(8, 64, 56, 56), torch.randn(64, 64, 3, 3) * 0.05,
         (1, 1), (1, 1))


if __name__ == "__main__":
    main()
