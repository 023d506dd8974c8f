"""ResNet on npu vs CPU (same process): resnet18 batch 1 eval, resnet50 batch 8 eval (eager and
torch.compile(backend="npu") with the fusion pass, with peak npu memory), resnet18 training steps (b4 64x64,
b8 224) and an input gradient (b8 224, eval).
Each row times npu and CPU in alternating blocks (common.paired_seconds).

    python benchmarks/bench_resnet.py [--quick]
"""
import argparse
import copy

import torch
import torchvision

import torch_ops_nn  # noqa: F401
from common import header, paired_seconds, table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    t = 0.5 if args.quick else 3.0
    header("ResNet, npu vs CPU")
    rows = []
    with torch.no_grad():
        m18 = torchvision.models.resnet18().eval()
        x = torch.randn(1, 3, 224, 224)
        d18, dx = copy.deepcopy(m18).to("npu"), x.to("npu")
        rows.append(("resnet18 b1 eval (eager)",
                     *paired_seconds("m(x); torch.npu.synchronize()", {"m": d18, "x": dx}, "m(x)", {"m": m18, "x": x}, t)))
        m50 = torchvision.models.resnet50().eval()
        x = torch.randn(8, 3, 224, 224)
        d50, dx = copy.deepcopy(m50).to("npu"), x.to("npu")
        torch.npu.reset_peak_memory_stats()
        eager, cpu50 = paired_seconds("m(x); torch.npu.synchronize()", {"m": d50, "x": dx}, "m(x)", {"m": m50, "x": x}, t)
        peak_eager = torch.npu.max_memory_allocated()
        compiled = torch.compile(d50, backend="npu")
        compiled(dx)
        torch.npu.reset_peak_memory_stats()
        comp, cpu50c = paired_seconds("m(x); torch.npu.synchronize()", {"m": compiled, "x": dx}, "m(x)", {"m": m50, "x": x},
                                      t)
        peak_comp = torch.npu.max_memory_allocated()
        rows.append(("resnet50 b8 eval (eager)", eager, cpu50, f"{peak_eager / 2**20:.0f} MiB"))
        rows.append(("resnet50 b8 eval (compiled, fused)", comp, cpu50c, f"{peak_comp / 2**20:.0f} MiB"))
    m = torchvision.models.resnet18()
    dm = copy.deepcopy(m).to("npu")
    x, y = torch.randn(4, 3, 64, 64), torch.randint(0, 1000, (4,))
    step = ("opt.zero_grad()\nloss = torch.nn.functional.cross_entropy(m(x), y)\nloss.backward()\nopt.step()")
    cpu_env = {"m": m, "x": x, "y": y, "opt": torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)}
    npu_env = {"m": dm, "x": x.to("npu"), "y": y.to("npu"), "opt": torch.optim.SGD(dm.parameters(), lr=0.01,
                                                                                  momentum=0.9)}
    rows.append(("resnet18 train step b4 64x64 (SGD momentum)",
                 *paired_seconds(step + "\ntorch.npu.synchronize()", npu_env, step, cpu_env, t)))
    # ImageNet-sized: the stem's grad_weight (3 channels, 7x7) and the stride-2 / 7x7 layers weigh in.
    m = torchvision.models.resnet18()
    dm = copy.deepcopy(m).to("npu")
    x, y = torch.randn(8, 3, 224, 224), torch.randint(0, 1000, (8,))
    cpu_env = {"m": m, "x": x, "y": y, "opt": torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)}
    npu_env = {"m": dm, "x": x.to("npu"), "y": y.to("npu"), "opt": torch.optim.SGD(dm.parameters(), lr=0.01,
                                                                                  momentum=0.9)}
    rows.append(("resnet18 train step b8 224 (SGD momentum)",
                 *paired_seconds(step + "\ntorch.npu.synchronize()", npu_env, step, cpu_env, t)))
    # An input gradient (saliency, adversarial examples): the stem's grad_input, 3 output channels.
    m.eval()
    dm.eval()
    sal = "x.grad = None\nm(x).logsumexp(1).sum().backward()"
    cpu_env = {"m": m, "x": x.clone().requires_grad_()}
    npu_env = {"m": dm, "x": x.to("npu").requires_grad_()}
    rows.append(("resnet18 b8 224 input gradient (eval)",
                 *paired_seconds(sal + "\ntorch.npu.synchronize()", npu_env, sal, cpu_env, t)))
    table(rows, extra="peak npu mem")


if __name__ == "__main__":
    main()
