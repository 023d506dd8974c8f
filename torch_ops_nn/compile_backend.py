"""The torch.compile backend: ``torch.compile(model, backend="npu")`` (also ``backend="torch_ops_nn"``).

Dynamo captures the graph; AOTAutograd lowers it to ATen (functionalized; forward and backward graphs
in training); our compiler runs the Conv-BN(-Add)-activation fusion pass on each graph and executes it
eagerly on the device (each node an npu kernel, the fused chains one kernel each). "npu" is the name a
torch_npu user types; the two packages cannot be installed together, so it is unambiguous.
"""
from __future__ import annotations

import dataclasses

import torch
import torch.fx as fx
from functorch.compile import make_boxed_compiler
from torch._dynamo.backends.common import aot_autograd

from torch_ops_nn.fx.fuse import FusionReport, fuse_graph
from torch_ops_nn.fx.layout import channels_last_graph

BACKEND_NAMES = ("npu", "torch_ops_nn")


@dataclasses.dataclass
class CompileStats:
    graphs_compiled: int = 0
    report: FusionReport = dataclasses.field(default_factory=FusionReport)
    channels_last_convs: int = 0  # convolutions of inference graphs given channels_last inputs

    def reset(self) -> None:
        self.graphs_compiled = 0
        self.report = FusionReport()
        self.channels_last_convs = 0


stats = CompileStats()


def _fusing_compiler(gm: fx.GraphModule, example_inputs):
    stats.graphs_compiled += 1
    stats.report.merge(fuse_graph(gm))
    channels_last_graph(gm, convert=False)  # values keep their traced layouts where it matters
    return gm


def _inference_compiler(gm: fx.GraphModule, example_inputs, channels_last: bool = True):
    stats.graphs_compiled += 1
    stats.report.merge(fuse_graph(gm))
    stats.channels_last_convs += channels_last_graph(gm, convert=channels_last)
    return gm


def _make_backend(channels_last: bool):
    return aot_autograd(fw_compiler=make_boxed_compiler(_fusing_compiler),
                        bw_compiler=make_boxed_compiler(_fusing_compiler),
                        inference_compiler=make_boxed_compiler(
                            lambda gm, inputs: _inference_compiler(gm, inputs, channels_last)))


_backends = {True: _make_backend(True), False: _make_backend(False)}


# torch.compile's modes, which it passes to a custom backend as `mode=`. The npu backend has one
# pipeline (the Conv-BN-ReLU fusion pass, then the native kernels): no autotuning to widen and no graph
# capture to reduce launch overhead with, so every mode compiles the same graph.
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def npu_backend(gm: fx.GraphModule, example_inputs, options: dict | None = None, mode: str | None = None):
    """Dynamo backend entry point. ``torch.compile(m, backend="npu", options={"channels_last": False})``
    keeps inference graphs in their traced layout (by default their convolutions run channels_last,
    which the cube reads without a transpose; outputs keep the traced layout either way). Any of
    torch.compile's modes is accepted and compiles the same graph (see COMPILE_MODES)."""
    if mode is not None and mode not in COMPILE_MODES:
        raise ValueError(f"torch.compile(backend='npu'): unknown mode {mode!r}; supported: {', '.join(COMPILE_MODES)}")
    options = dict(options or {})
    channels_last = bool(options.pop("channels_last", True))
    if options:
        raise ValueError(f"torch.compile(backend='npu'): unknown options {sorted(options)}; "
                         "supported: channels_last")
    return _backends[channels_last](gm, example_inputs)

# Dynamo finds npu_backend under BACKEND_NAMES through the "torch_dynamo_backends" entry points
# (setup.py), so nothing is imported from torch._dynamo until torch.compile is used.
