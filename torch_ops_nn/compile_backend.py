"""The torch.compile backend: ``torch.compile(model, backend="npu")`` (also ``backend="torch_ops_nn"``).

Dynamo captures the graph; AOTAutograd lowers it to ATen (functionalized; forward and backward graphs
in training); our compiler runs the Conv-BN(-Add)-activation fusion pass on each graph and executes it
eagerly on the device (each node an npu kernel, the fused chains one kernel each). With
``mode="reduce-overhead"`` an inference graph is also captured into an NPU graph (torch.npu.NPUGraph)
and replayed, as CUDA graphs serve that mode. "npu" is the name a torch_npu user types; the two
packages cannot be installed together, so it is unambiguous.
"""
from __future__ import annotations

import dataclasses
import warnings

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
    npu_graphs_captured: int = 0  # mode="reduce-overhead": captures (a re-capture counts again)

    def reset(self) -> None:
        self.graphs_compiled = 0
        self.report = FusionReport()
        self.channels_last_convs = 0
        self.npu_graphs_captured = 0


stats = CompileStats()


def _fusing_compiler(gm: fx.GraphModule, example_inputs):
    stats.graphs_compiled += 1
    stats.report.merge(fuse_graph(gm))
    channels_last_graph(gm, convert=False)  # values keep their traced layouts where it matters
    return gm


class _ReplayedGraph:
    """mode="reduce-overhead": a compiled inference graph run eagerly at its first call (warming the
    weight caches), captured into an NPUGraph at its second and replayed after that. Inputs that are
    parameters or buffers (AOTAutograd's static inputs) are read in place, and a change of their
    address re-captures; other inputs are copied into the graph's own input buffers; outputs are
    returned as fresh copies (a later replay cannot overwrite what a caller holds). A graph that
    cannot be captured (it syncs, returns a view of an input...) warns once and runs without an NPU
    graph."""

    def __init__(self, gm: fx.GraphModule, static_idx: set[int]):
        self.gm, self.static_idx = gm, static_idx
        self.calls, self.graph, self.disabled = 0, None, False

    def __call__(self, *args):
        if self.disabled:
            return self.gm(*args)
        if not all(isinstance(a, torch.Tensor) and a.device.type == "npu" for a in args) \
                or torch.is_grad_enabled() and any(a.requires_grad for a in args):
            return self._disable("its inputs are not all npu tensors without grad", args)
        if self.graph is not None and any(args[i].data_ptr() != self.inputs[i].data_ptr() for i in self.static_idx):
            self.graph.reset()  # a parameter or buffer moved: capture again
            self.graph, self.calls = None, 1
        if self.graph is None:
            self.calls += 1
            if self.calls < 2:
                return self.gm(*args)
            try:
                self._capture(args)
            except RuntimeError as e:
                if "npu graph capture" not in str(e) and "NPUGraph" not in str(e):
                    raise
                return self._disable(str(e).split("\n")[0], args)
            if self.disabled:
                return self.gm(*args)
        for i, (s, a) in enumerate(zip(self.inputs, args)):
            if i not in self.static_idx and s.data_ptr() != a.data_ptr():
                s.copy_(a)
        self.graph.replay()
        return type(self.outputs)(o.clone() if isinstance(o, torch.Tensor) else o for o in self.outputs)

    def _capture(self, args) -> None:
        from torch_ops_nn.graphs import NPUGraph, graph

        self.inputs = [a if i in self.static_idx else torch.empty_strided(a.size(), a.stride(), dtype=a.dtype,
                                                                          device=a.device).copy_(a)
                       for i, a in enumerate(args)]
        g = NPUGraph()
        with graph(g):
            outs = self.gm(*self.inputs)
        storages = {a.untyped_storage().data_ptr() for a in self.inputs}
        if any(isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() in storages for o in outs):
            g.reset()
            self.disabled, self.inputs = True, None
            warnings.warn("torch.compile(mode='reduce-overhead'): an npu graph returns a view of an input; "
                          "it runs without an NPU graph", stacklevel=3)
            return
        self.graph, self.outputs = g, outs
        stats.npu_graphs_captured += 1

    def _disable(self, why: str, args):
        self.disabled, self.inputs, self.outputs = True, None, None
        if self.graph is not None:
            self.graph.reset()
            self.graph = None
        warnings.warn(f"torch.compile(mode='reduce-overhead'): an npu graph runs without an NPU graph: {why}",
                      stacklevel=3)
        return self.gm(*args)


def _inference_compiler(gm: fx.GraphModule, example_inputs, channels_last: bool = True, graphs: bool = False):
    stats.graphs_compiled += 1
    stats.report.merge(fuse_graph(gm))
    stats.channels_last_convs += channels_last_graph(gm, convert=channels_last)
    if not graphs:
        return gm
    ctx = torch._guards.TracingContext.try_get()
    static = set(ctx.fw_metadata.static_input_indices) if ctx is not None and ctx.fw_metadata is not None else set()
    return _ReplayedGraph(gm, static)


def _make_backend(channels_last: bool, graphs: bool):
    return aot_autograd(fw_compiler=make_boxed_compiler(_fusing_compiler),
                        bw_compiler=make_boxed_compiler(_fusing_compiler),
                        inference_compiler=make_boxed_compiler(
                            lambda gm, inputs: _inference_compiler(gm, inputs, channels_last, graphs)))


_backends = {(cl, graphs): _make_backend(cl, graphs) for cl in (True, False) for graphs in (True, False)}


# torch.compile's modes, which it passes to a custom backend as `mode=`. The npu backend has one
# pipeline (the Conv-BN-ReLU fusion pass, then the native kernels) and no autotuning to widen;
# "reduce-overhead" also replays inference graphs through NPU graphs (training graphs run as in the
# other modes).
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def npu_backend(gm: fx.GraphModule, example_inputs, options: dict | None = None, mode: str | None = None):
    """Dynamo backend entry point. ``torch.compile(m, backend="npu", options={"channels_last": False})``
    keeps inference graphs in their traced layout (by default their convolutions run channels_last,
    which the cube reads without a transpose; outputs keep the traced layout either way). Any of
    torch.compile's modes is accepted; "reduce-overhead" replays inference graphs through NPU graphs
    (see COMPILE_MODES)."""
    if mode is not None and mode not in COMPILE_MODES:
        raise ValueError(f"torch.compile(backend='npu'): unknown mode {mode!r}; supported: {', '.join(COMPILE_MODES)}")
    options = dict(options or {})
    channels_last = bool(options.pop("channels_last", True))
    if options:
        raise ValueError(f"torch.compile(backend='npu'): unknown options {sorted(options)}; "
                         "supported: channels_last")
    return _backends[(channels_last, mode == "reduce-overhead")](gm, example_inputs)

# Dynamo finds npu_backend under BACKEND_NAMES through the "torch_dynamo_backends" entry points
# (setup.py), so nothing is imported from torch._dynamo until torch.compile is used.
