"""Convolution on the cube kernel vs PyTorch CPU: every distinct conv layer shape of torchvision's
ResNet-50 at batch 8 (float32), forward, NCHW (and optionally channels_last).

    PYTHONPATH=. python benchmarks/bench_conv.py [--batch 8] [--min-time 0.5] [--channels-last] [--backward]

Prints times (torch.utils.benchmark; the npu statement synchronizes), GFLOP/s and the npu/CPU
time ratio (< 1 means the npu is faster).
"""
import argparse

import torch
import torch.nn.functional as F
import torch.utils.benchmark as benchmark

import torch_ops_nn  # noqa: F401

# (C_in, C_out, kernel, stride, padding, H_in): the distinct conv layers of ResNet-50 (224x224 input).
RESNET50 = [
    (3, 64, 7, 2, 3, 224),
    (64, 64, 1, 1, 0, 56), (64, 64, 3, 1, 1, 56), (64, 256, 1, 1, 0, 56), (256, 64, 1, 1, 0, 56),
    (256, 128, 1, 1, 0, 56), (128, 128, 3, 2, 1, 56), (128, 512, 1, 1, 0, 28), (256, 512, 1, 2, 0, 56),
    (512, 128, 1, 1, 0, 28), (128, 128, 3, 1, 1, 28),
    (512, 256, 1, 1, 0, 28), (256, 256, 3, 2, 1, 28), (256, 1024, 1, 1, 0, 14), (512, 1024, 1, 2, 0, 28),
    (1024, 256, 1, 1, 0, 14), (256, 256, 3, 1, 1, 14),
    (1024, 512, 1, 1, 0, 14), (512, 512, 3, 2, 1, 14), (512, 2048, 1, 1, 0, 7), (1024, 2048, 1, 2, 0, 14),
    (2048, 512, 1, 1, 0, 7), (512, 512, 3, 1, 1, 7),
]


def measure(stmt: str, env: dict, min_time: float) -> float:
    t = benchmark.Timer(stmt=stmt, globals=env, num_threads=torch.get_num_threads())
    return t.blocked_autorange(min_run_time=min_time).median


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--backward", action="store_true", help="also time grad_input + grad_weight")
    p.add_argument("--precision", default="highest", choices=["highest", "high", "medium"],
                   help="torch.set_float32_matmul_precision: high/medium let float run bf16x3 on the cube (HF32 mode)")
    args = p.parse_args()
    torch.set_float32_matmul_precision(args.precision)
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format
    print(f"ResNet-50 conv layers, batch {args.batch}, float32, "
          f"{'channels_last' if args.channels_last else 'NCHW'}, {torch.get_num_threads()} CPU threads, "
          f"{torch_ops_nn._C._host_threads()} npu host threads")
    head = f"{'Cin':>5}{'Cout':>6}{'k':>3}{'s':>3}{'H':>5}{'cpu ms':>10}{'npu ms':>10}{'npu GF/s':>10}{'npu/cpu':>9}"
    if args.backward:
        head += f"{'bwd cpu':>10}{'bwd npu':>10}{'bwd n/c':>9}"
    print(head)
    tot_c = tot_n = 0.0
    for cin, cout, k, s, pad, h in RESNET50:
        x = torch.randn(args.batch, cin, h, h).contiguous(memory_format=fmt)
        w = torch.randn(cout, cin, k, k)
        xn, wn = x.npu().contiguous(memory_format=fmt), w.npu()
        env = {"F": F, "x": x, "w": w, "xn": xn, "wn": wn, "torch": torch, "s": s, "p": pad}
        tc = measure("F.conv2d(x, w, None, s, p)", env, args.min_time)
        tn = measure("F.conv2d(xn, wn, None, s, p); torch.npu.synchronize()", env, args.min_time)
        ho = (h + 2 * pad - k) // s + 1
        flops = 2.0 * args.batch * cout * ho * ho * cin * k * k
        tot_c += tc
        tot_n += tn
        line = f"{cin:>5}{cout:>6}{k:>3}{s:>3}{h:>5}{tc * 1e3:>10.2f}{tn * 1e3:>10.2f}{flops / tn / 1e9:>10.1f}{tn / tc:>8.2f}x"
        if args.backward:
            go = torch.randn(args.batch, cout, ho, ho).contiguous(memory_format=fmt)
            env.update(go=go, gon=go.npu().contiguous(memory_format=fmt))
            bc = ("torch.ops.aten.convolution_backward(go, x, w, None, (s, s), (p, p), (1, 1), False, (0, 0), 1, "
                  "(True, True, False))")
            bn = bc.replace("(go, x, w", "(gon, xn, wn") + "; torch.npu.synchronize()"
            tbc, tbn = measure(bc, env, args.min_time), measure(bn, env, args.min_time)
            line += f"{tbc * 1e3:>10.2f}{tbn * 1e3:>10.2f}{tbn / tbc:>8.2f}x"
        print(line, flush=True)
    print(f"total forward: cpu {tot_c * 1e3:.1f} ms, npu {tot_n * 1e3:.1f} ms, npu/cpu {tot_n / tot_c:.2f}x")


if __name__ == "__main__":
    main()
