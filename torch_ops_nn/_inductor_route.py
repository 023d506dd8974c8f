"""``torch.compile(model)`` with the default backend on npu.

Inductor generates Triton (GPU) or C++/OpenMP (CPU) code and has no code generator for the npu
device: on a graph with npu tensors it failed deep in its scheduler with ``KeyError: 'npu'``. The
compiler for npu graphs is our "npu" backend (compile_backend.py), so a graph that touches the npu
goes there and every other graph still goes to Inductor. The first such graph is logged (INFO);
Inductor-only settings (``mode=``, ``options=``) warn once that they do not apply.

Installed at registration; imports nothing from torch._dynamo / torch._inductor until a graph is
compiled.
"""
from __future__ import annotations

import warnings

import torch

_routed_once = False
_warned_settings = False


def graph_uses_npu(gm, example_inputs) -> bool:
    def on_npu(v) -> bool:
        return isinstance(v, torch.Tensor) and v.device.type == "npu"

    if any(on_npu(t) for t in example_inputs):
        return True
    graph = getattr(gm, "graph", None)
    for node in (graph.nodes if graph is not None else ()):
        if on_npu(node.meta.get("example_value")) or on_npu(node.meta.get("val")):
            return True
        device = node.kwargs.get("device")
        if isinstance(device, (str, torch.device)) and torch.device(device).type == "npu":
            return True
    return False


def install() -> None:
    wrapper_cls = getattr(torch, "_TorchCompileInductorWrapper", None)
    if wrapper_cls is None or getattr(wrapper_cls.__call__, "_torch_ops_nn", False):
        return
    inductor_call = wrapper_cls.__call__

    def __call__(self, model_, inputs_, **kwargs):
        if not graph_uses_npu(model_, inputs_):
            return inductor_call(self, model_, inputs_, **kwargs)
        global _routed_once, _warned_settings
        if not _routed_once:
            _routed_once = True
            from torch_ops_nn._logging import logger
            logger.info("torch.compile: Inductor has no npu code generator; graphs on npu compile with "
                        "torch_ops_nn's 'npu' backend (Conv-BN fusion, AOTAutograd)")
        ignored = {**getattr(self, "config", {}), **(kwargs.get("config_patches") or {})}
        if ignored and not _warned_settings:
            _warned_settings = True
            warnings.warn(f"torch.compile: the Inductor settings {sorted(ignored)} do not apply to npu graphs, "
                              "which compile with torch_ops_nn's 'npu' backend (pass backend='npu' to choose it "
                              "explicitly)", stacklevel=2)
        from torch_ops_nn.compile_backend import npu_backend
        return npu_backend(model_, inputs_)

    __call__._torch_ops_nn = True
    wrapper_cls.__call__ = __call__
