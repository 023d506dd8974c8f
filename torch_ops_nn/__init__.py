"""torch_ops_nn: PyTorch on Huawei Ascend NPUs, with a simulated NPU that runs the same Ascend C
kernels on the CPU.

``import torch`` loads this package (torch's "torch.backends" entry point), which registers the
``npu`` device: ``tensor.to("npu")``, ``model.npu()`` and ``torch.npu.*`` work as their CUDA twins.
"""
from __future__ import annotations

import importlib.util
import sys

__version__ = "0.1.0"

_registered = False


def _check_no_torch_npu() -> None:
    if "torch_npu" in sys.modules or importlib.util.find_spec("torch_npu") is not None:
        raise ImportError(
            "torch_ops_nn cannot be used together with torch_npu: both register PyTorch's PrivateUse1 "
            "backend as the 'npu' device. Uninstall one of them (pip uninstall torch_npu), or use torch_npu "
            "alone on real Ascend hardware."
        )


def _register() -> None:
    global _registered
    if _registered:
        return
    _check_no_torch_npu()
    import torch

    if _registered:  # importing torch ran its autoload, which registered us already
        return
    from torch_ops_nn import _C, _logging  # noqa: F401  (loading _C registers the ATen kernels)

    if torch._C._get_privateuse1_backend_name() != "npu":
        torch.utils.rename_privateuse1_backend("npu")
    from torch_ops_nn import npu as npu_module

    torch._register_device_module("npu", npu_module)
    from torch_ops_nn import amp as amp_module, graphs as graphs_module, memory as memory_module

    # torch.npu.memory / torch.npu.amp / torch.npu.graphs as torch.cuda's submodules (also for
    # `from torch.npu.memory import`), and the memory and graph names torch.cuda has at top level.
    for sub_name, sub in (("memory", memory_module), ("amp", amp_module), ("graphs", graphs_module)):
        setattr(npu_module, sub_name, sub)
        sys.modules[f"torch.npu.{sub_name}"] = sub
    for name in ("memory_snapshot", "caching_allocator_alloc", "caching_allocator_delete", "memory_stats_as_nested_dict",
                 "reset_max_memory_allocated", "reset_max_memory_cached", "memory_cached", "max_memory_cached"):
        setattr(npu_module, name, getattr(memory_module, name))
    for name in ("NPUGraph", "graph", "graph_pool_handle", "make_graphed_callables"):
        setattr(npu_module, name, getattr(graphs_module, name))
    torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)
    _logging.configure(_C)
    from torch_ops_nn import _printing

    _printing.install()
    from torch_ops_nn import _inductor_route

    _inductor_route.install()  # torch.compile(model) on npu: our backend, not Inductor
    from torch_ops_nn import distributed as _distributed

    _distributed.register()  # dist.init_process_group("hccl") on npu tensors
    _registered = True


def _autoload() -> None:
    """Entry point torch calls on ``import torch`` (group "torch.backends")."""
    _register()


_register()

from torch_ops_nn import npu  # noqa: E402,F401


def fallback_ops() -> list[str]:
    """The ATen operators that ran through the CPU fallback in this process (first use order)."""
    from torch_ops_nn import _C

    return list(_C._fallback_ops())


def set_log_level(level: int) -> None:
    """Change the log level at run time (0 debug ... 3 error, as ASCEND_GLOBAL_LOG_LEVEL)."""
    from torch_ops_nn import _C, _logging

    _logging.set_level(_C, level)


def compiled_kernels() -> list[str]:
    """Names of the Ascend C kernels compiled into this build."""
    from torch_ops_nn import _C

    return sorted(_C._compiled_kernels())


from torch_ops_nn.ops import batch_norm, conv2d, matmul, maxpool, relu  # noqa: E402,F401
from torch_ops_nn.fused import fused_conv_bn_relu  # noqa: E402,F401
