"""The tour of ``python -m torch_ops_nn demo`` (the ops-nn tutorial's): the environment check, Conv2D,
MatMul / ReLU / MaxPool, fused Conv+BN+ReLU against the separate ops, and ResNet-50 on npu against the
CPU. Every npu op runs as an Ascend C kernel on the simulated NPU."""
from __future__ import annotations

import time

import torch


def _step(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 74 - len(title)))


def _time(fn, repeat: int) -> float:
    """Median seconds of ``fn`` (which synchronizes), after one warm-up."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def _compare(name: str, npu_out: torch.Tensor, cpu_out: torch.Tensor) -> bool:
    err = (npu_out.cpu().float() - cpu_out.float()).abs().max().item()
    scale = cpu_out.float().abs().max().item() or 1.0
    ok = err / scale <= 1e-4
    print(f"  {name:<34} shape {str(tuple(npu_out.shape)):<22} max |npu - cpu| / max|cpu| = {err / scale:.1e} "
          f"{'OK' if ok else 'MISMATCH'}")
    return ok


def run(quick: bool = False) -> int:
    import torch_ops_nn
    from torch_ops_nn.__main__ import info

    _step("1. Environment check")
    if info() != 0:
        return 1
    ok = True
    torch.manual_seed(0)

    _step("2. Conv2D on the cube (img2col LoadData -> Mmad -> Fixpipe)")
    x = torch.randn(1, 3, 224, 224)
    w = torch.randn(64, 3, 7, 7) * 0.1
    x_dev, w_dev = x.to("npu"), w.to("npu")
    y = torch_ops_nn.conv2d(x_dev, w_dev, stride=(2, 2), padding=(3, 3))
    ok &= _compare("conv2d 7x7/2", y, torch.nn.functional.conv2d(x, w, stride=2, padding=3))

    _step("3. MatMul, ReLU, MaxPool")
    a, b = torch.randn(256, 512), torch.randn(512, 128)
    ok &= _compare("matmul 256x512 @ 512x128", torch_ops_nn.matmul(a.to("npu"), b.to("npu")), a @ b)
    ok &= _compare("relu", torch_ops_nn.relu(y), torch.relu(y.cpu()))
    pooled = torch_ops_nn.maxpool(torch_ops_nn.relu(y), kernel=(3, 3), stride=(2, 2), padding=(1, 1))
    ok &= _compare("maxpool 3x3/2", pooled, torch.nn.functional.max_pool2d(torch.relu(y.cpu()), 3, 2, 1))
    try:
        torch_ops_nn.conv2d(torch.randn(1, 3, 4, 4).to("npu"), w_dev)
    except ValueError as e:
        print(f"  a bad shape is a clear error:\n    {e}")

    _step("4. Fused Conv+BN+ReLU vs separate ops (one kernel, the conv result crosses memory once)")
    c = w.shape[0]
    bn = [torch.rand(c) + 0.5, torch.randn(c) * 0.1, torch.randn(c) * 0.1, torch.rand(c) + 0.5]
    bn_dev = [t.to("npu") for t in bn]

    def separate():
        z = torch.nn.functional.conv2d(x_dev, w_dev, stride=2, padding=3)
        z = torch.nn.functional.batch_norm(z, bn_dev[2], bn_dev[3], bn_dev[0], bn_dev[1], training=False)
        torch.relu(z)
        torch.npu.synchronize()

    def fused():
        torch_ops_nn.fused_conv_bn_relu(x_dev, w_dev, bn_weight=bn_dev[0], bn_bias=bn_dev[1],
                                        running_mean=bn_dev[2], running_var=bn_dev[3], stride=(2, 2), padding=(3, 3))
        torch.npu.synchronize()

    ref = torch.relu(torch.nn.functional.batch_norm(torch.nn.functional.conv2d(x, w, stride=2, padding=3), bn[2],
                                                    bn[3], bn[0], bn[1], training=False))
    out = torch_ops_nn.fused_conv_bn_relu(x_dev, w_dev, bn_weight=bn_dev[0], bn_bias=bn_dev[1],
                                          running_mean=bn_dev[2], running_var=bn_dev[3], stride=(2, 2),
                                          padding=(3, 3))
    ok &= _compare("fused_conv_bn_relu", out, ref)
    reps = 5 if quick else 50
    t_sep, t_fused = _time(separate, reps), _time(fused, reps)
    print(f"  {'separate conv + bn + relu':<34} {t_sep * 1e3:8.2f} ms")
    print(f"  {'fused_conv_bn_relu':<34} {t_fused * 1e3:8.2f} ms   speed-up {t_sep / t_fused:.2f}x")

    _step("5. ResNet-50 (torchvision, random weights) on npu vs CPU")
    try:
        import torchvision
    except ImportError:
        print("  torchvision is not installed: skipped (pip install torchvision==0.29.1)")
    else:
        model = torchvision.models.resnet50().eval()
        batch = 1 if quick else 8
        xb = torch.randn(batch, 3, 224, 224)
        with torch.no_grad():
            t0 = time.perf_counter()
            ref = model(xb)
            t_cpu = time.perf_counter() - t0
            model_dev = model.to("npu")
            xb_dev = xb.to("npu")
            model_dev(xb_dev)
            torch.npu.synchronize()
            t0 = time.perf_counter()
            out = model_dev(xb_dev).cpu()
            t_npu = time.perf_counter() - t0
        ok &= _compare(f"resnet50 batch {batch}", out, ref)
        print(f"  CPU {t_cpu * 1e3:.0f} ms, npu {t_npu * 1e3:.0f} ms (npu/CPU {t_npu / t_cpu:.2f}); "
              f"peak npu memory {torch.npu.max_memory_allocated() / 2**20:.0f} MiB")
    fallbacks = torch_ops_nn.fallback_ops()
    print(f"\nops that ran through the CPU fallback: {', '.join(fallbacks) if fallbacks else 'none'}")
    print("\nDemo " + ("finished: all results match the CPU" if ok else "FAILED: see MISMATCH lines above"))
    return 0 if ok else 1
