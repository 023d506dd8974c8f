"""Command line: ``python -m torch_ops_nn info`` (environment check) and ``python -m torch_ops_nn demo``."""
from __future__ import annotations

import argparse
import os
import platform
import sys

ENV_VARS = [
    ("ASCEND_GLOBAL_LOG_LEVEL", "log level: 0 debug, 1 info, 2 warning, 3 error (default 3)"),
    ("ASCEND_LAUNCH_BLOCKING", "1: every launch waits for its kernel (errors reported where raised)"),
    ("ASCEND_RT_VISIBLE_DEVICES", "comma list of visible device ids"),
    ("TORCH_OPS_NN_DEVICE_COUNT", "number of simulated devices (default 1)"),
    ("TORCH_OPS_NN_SOC", "SoC profile, or a comma list per device (default Ascend910B2)"),
    ("TORCH_OPS_NN_DEVICE_MEMORY", "device memory per device, e.g. 8GB (default: the SoC's HBM)"),
    ("TORCH_OPS_NN_HOST_THREADS", "host threads the AI cores run on (default: host cores)"),
    ("TORCH_OPS_NN_FALLBACK", "warn (default) | error | silent: ops without an npu kernel"),
    ("TORCH_OPS_NN_BOUNDS_CHECK", "1: bounds-check every LocalTensor/GlobalTensor access in kernels"),
]


def _mb(n: int) -> int:
    return n // (1024 * 1024)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    return "\n".join([sep, line(headers), sep, *(line(r) for r in rows), sep])


def _device_self_test(index: int) -> str:
    """Round trip and one kernel on device ``index``; returns 'OK' or the reason it failed."""
    import torch

    saved = os.environ.get("TORCH_OPS_NN_FALLBACK")
    os.environ["TORCH_OPS_NN_FALLBACK"] = "error"  # the check must not hide behind the CPU fallback
    try:
        x = torch.arange(64, dtype=torch.float32) - 32
        with torch.npu.device(index):
            y = x.to(f"npu:{index}")
            if not torch.equal(y.cpu(), x):
                return "FAIL: host->npu->host round trip changed the data"
            r = torch.relu(y).cpu()
            if not torch.equal(r, torch.relu(x)):
                return "FAIL: relu kernel result differs from CPU"
            torch.npu.synchronize(index)
        return "OK"
    except Exception as e:  # noqa: BLE001 - the check reports any failure
        return f"FAIL: {type(e).__name__}: {e}"
    finally:
        if saved is None:
            os.environ.pop("TORCH_OPS_NN_FALLBACK", None)
        else:
            os.environ["TORCH_OPS_NN_FALLBACK"] = saved


def info() -> int:
    problems: list[str] = []
    print(f"torch_ops_nn environment check ({platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()})")
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print(f"  torch: NOT IMPORTABLE ({e})")
        return 2
    print(f"  torch:        {torch.__version__}")
    try:
        import torch_ops_nn
        from torch_ops_nn import _C
    except Exception as e:  # noqa: BLE001
        print(f"  torch_ops_nn: NOT IMPORTABLE: {type(e).__name__}: {e}")
        print("\nResult: FAILED - the package or its native extension cannot be loaded "
              "(rebuild with: pip install --no-build-isolation -e .)")
        return 2
    build = _C._build_info()
    print(f"  torch_ops_nn: {torch_ops_nn.__version__} ({os.path.dirname(torch_ops_nn.__file__)})")
    print(f"  build:        {build['compiler']}, C++{str(build['cplusplus'])[2:4]}, flags: {build['flags']}")
    print(f"  runtime:      {build['runtime']} (Ascend C kernels run on the host CPU), SIMD path: {build['simd']}, "
          f"cube micro-kernels: {build['cube']}, host threads: {_C._host_threads()}")
    print(f"  precision:    float convs {'HF32' if torch.npu.conv.allow_hf32 else 'float32'} "
          f"(torch.npu.conv.allow_hf32), float matmuls "
          f"{'HF32' if torch.npu.matmul.allow_hf32 else 'float32'} (torch.npu.matmul.allow_hf32)")
    kernels = torch_ops_nn.compiled_kernels()
    print(f"  kernels:      {len(kernels)} Ascend C kernels compiled" + (f": {', '.join(kernels)}" if kernels else ""))
    autoload = os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD", "1") == "1"
    print(f"  autoload:     {'on' if autoload else 'off (TORCH_DEVICE_BACKEND_AUTOLOAD=0)'} "
          "(import torch loads torch_ops_nn)")
    import torch.distributed as dist

    hccl = dist.is_available() and getattr(dist, "is_hccl_available", lambda: False)()
    print(f"  distributed:  {'hccl backend registered for npu' if hccl else 'unavailable'} "
          "(dist.init_process_group('hccl'), DDP, FSDP2)")
    print("\nEnvironment:")
    for name, meaning in ENV_VARS:
        value = os.environ.get(name)
        print(f"  {name:<28} {value if value is not None else '(unset)':<14} {meaning}")
    err = _C._config_error()
    if err:
        problems.append(err)
    count = torch.npu.device_count()
    print()
    rows = []
    for i in range(count):
        p = torch.npu.get_device_properties(i)
        free, total = torch.npu.mem_get_info(i)
        status = _device_self_test(i)
        if not status.startswith("OK"):
            problems.append(f"npu:{i}: {status}")
        rows.append([str(i), str(p.physical_id), p.name, str(p.npu_arch), str(p.cube_core_num),
                     str(p.vector_core_num), f"{_mb(total - free)} / {_mb(total)}", status])
    print(_table(["NPU", "Phy-ID", "Name", "Arch", "AIC", "AIV", "HBM-Usage(MB)", "Status"], rows))
    if count == 0 and not err:
        problems.append("no npu device is visible (check TORCH_OPS_NN_DEVICE_COUNT and ASCEND_RT_VISIBLE_DEVICES)")
    if problems:
        print("\nResult: FAILED")
        for p in problems:
            print(f"  - {p}")
        return 1
    print(f"\nResult: OK - {count} simulated npu device(s) ready")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_ops_nn", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="environment check (npu-smi style)")
    demo = sub.add_parser("demo", help="a tour of the seed's API on the npu device")
    demo.add_argument("--quick", action="store_true", help="smaller shapes, fewer repetitions")
    args = parser.parse_args(argv)
    if args.command == "info":
        return info()
    from torch_ops_nn import demo as demo_module

    return demo_module.run(quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
