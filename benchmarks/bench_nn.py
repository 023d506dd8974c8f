"""Pooling and normalization on npu next to the same ops on the CPU, in one process.

    python benchmarks/bench_nn.py [--min-run-time 1.0] [--only NAME] [--threads N]

Cases: max_pool2d 3x3 s2 p1 on (8, 64, 112, 112) (forward with indices, and backward; the forward also on a
channels_last input, the layout our torch.compile backend runs ResNet in); batch_norm eval
and train on (8, 256, 56, 56); adaptive_avg_pool2d (8, 2048, 7, 7) -> 1x1 (the npu kernel through
aten::_adaptive_avg_pool2d: F.adaptive_avg_pool2d(x, 1) itself lowers to mean(), a reduction op);
layer_norm (64, 4096); dropout on (8, 64, 112, 112); softmax / log_softmax over rows of 64 and their
backward (16384, 64); reflection pad 2 and nearest x2 upsampling of (8, 64, 56, 56); nll_loss and
cross_entropy (+ backward) of (4096, 1000) logits. Each npu statement synchronizes. Prints the medians
(torch.utils.benchmark) and the npu/CPU ratio; the target is <= 5x for every op and <= 1.5x for the
memory-bound ones. --threads N runs both sides on N threads (torch.set_num_threads and
TORCH_OPS_NN_HOST_THREADS); on a machine shared with other jobs, --threads 1 gives the steadier comparison.
"""
import argparse

import threads_arg

if __name__ == "__main__":
    threads_arg.apply()  # before torch loads torch_ops_nn

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.benchmark as benchmark  # noqa: E402

import torch_ops_nn  # noqa: F401,E402


def measure(stmt: str, env: dict, min_run_time: float) -> float:
    t = benchmark.Timer(stmt=stmt, globals=env, num_threads=torch.get_num_threads())
    return t.blocked_autorange(min_run_time=min_run_time).median


def cases():
    torch.manual_seed(0)
    x = torch.randn(8, 64, 112, 112)
    y, idx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    g = torch.randn(y.shape)
    bn_x = torch.randn(8, 256, 56, 56)
    c = 256
    w, b, rm, rv = torch.randn(c), torch.randn(c), torch.randn(c), torch.rand(c) + 0.5
    ap = torch.randn(8, 2048, 7, 7)
    apg = torch.randn(8, 2048, 1, 1)
    ln = torch.randn(64, 4096)
    lw, lb = torch.randn(4096), torch.randn(4096)
    xcl = x.contiguous(memory_format=torch.channels_last)
    sm = torch.randn(16384, 64)
    smy, smg = sm.softmax(-1), torch.randn(16384, 64)
    act = torch.randn(8, 64, 56, 56)
    logits, target = torch.randn(4096, 1000), torch.randint(0, 1000, (4096,))
    cpu = dict(x=x, xcl=xcl, idx=idx, g=g, bn_x=bn_x, w=w, b=b, rm=rm, rv=rv, ap=ap, apg=apg, ln=ln, lw=lw, lb=lb,
               sm=sm, smy=smy, smg=smg, act=act, logits=logits, target=target)
    dev = {k: v.to("npu") for k, v in cpu.items()}
    cpu["lg"] = logits.clone().requires_grad_()
    dev["lg"] = dev["logits"].clone().requires_grad_()
    mp_bwd = "torch.ops.aten.max_pool2d_with_indices_backward(g, x, [3, 3], [2, 2], [1, 1], [1, 1], False, idx)"
    return [
        ("max_pool2d 3x3 s2 p1 (8,64,112,112)", "F.max_pool2d(x, 3, 2, 1, return_indices=True)", cpu, dev),
        ("max_pool2d channels_last (8,64,112,112)", "F.max_pool2d(xcl, 3, 2, 1, return_indices=True)", cpu, dev),
        ("max_pool2d backward", mp_bwd, cpu, dev),
        ("batch_norm eval (8,256,56,56)", "F.batch_norm(bn_x, rm, rv, w, b, False)", cpu, dev),
        ("batch_norm train (8,256,56,56)", "F.batch_norm(bn_x, rm, rv, w, b, True)", cpu, dev),
        ("adaptive_avg_pool2d (8,2048,7,7)->1", "torch._adaptive_avg_pool2d(ap, (1, 1))", cpu, dev),
        ("  same through F (mean, as in ResNet)", "F.adaptive_avg_pool2d(ap, 1)", cpu, dev),
        ("  backward", "torch.ops.aten._adaptive_avg_pool2d_backward(apg, ap)", cpu, dev),
        ("layer_norm (64,4096)", "F.layer_norm(ln, (4096,), lw, lb)", cpu, dev),
        ("dropout p=0.5 (8,64,112,112)", "torch.ops.aten.native_dropout(x, 0.5, True)", cpu, dev),
        ("softmax rows of 64 (16384,64)", "sm.softmax(-1)", cpu, dev),
        ("  backward", "torch._softmax_backward_data(smg, smy, -1, torch.float32)", cpu, dev),
        ("log_softmax rows of 64 (16384,64)", "F.log_softmax(sm, -1)", cpu, dev),
        ("reflection pad 2 (8,64,56,56)", "F.pad(act, (2, 2, 2, 2), mode='reflect')", cpu, dev),
        ("nearest x2 upsample (8,64,56,56)", "F.interpolate(act, scale_factor=2)", cpu, dev),
        ("nll_loss (4096,1000)", "F.nll_loss(logits, target)", cpu, dev),
        ("cross_entropy fwd+bwd (4096,1000)", "F.cross_entropy(lg, target).backward()", cpu, dev),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-run-time", type=float, default=1.0)
    parser.add_argument("--only", default="")
    parser.add_argument("--threads", type=int, default=0, help="threads for both sides (default: all)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads, "
          f"{torch_ops_nn._C._host_threads()} npu host threads")
    print(f"{'op':<40}{'cpu (ms)':>10}{'npu (ms)':>10}{'npu/cpu':>9}")
    for name, stmt, cpu_env, npu_env in cases():
        if args.only and args.only not in name:
            continue
        env_c = dict(cpu_env, F=F, torch=torch)
        env_n = dict(npu_env, F=F, torch=torch)
        t_cpu = measure(stmt, env_c, args.min_run_time)
        t_npu = measure(stmt + "; torch.npu.synchronize()", env_n, args.min_run_time)
        print(f"{name:<40}{t_cpu * 1e3:>10.2f}{t_npu * 1e3:>10.2f}{t_npu / t_cpu:>8.2f}x", flush=True)


if __name__ == "__main__":
    main()
