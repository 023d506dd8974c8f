"""NPU graphs: ``torch.npu.NPUGraph``, ``torch.npu.graph``, ``torch.npu.graph_pool_handle`` and
``torch.npu.make_graphed_callables``, shaped like their ``torch.cuda`` twins.

A capture records the device work launched on one stream (kernel launches and device copies: each
kernel with its tiling and device addresses) instead of running it; ``replay()`` runs the recorded
work again as one task on the current stream, with no Python, dispatcher or host-side tiling in
between. As on CUDA:

- Replays read and write the same device memory as the capture: feed new data by copying into the
  captured input tensors, read results from the captured outputs. Tensors allocated during capture
  come from the graph's private memory pool, which other allocations never reuse until ``reset()``.
- What makes the host wait for the device (a sync, ``.item()``, ``.cpu()``, an op that reads a value
  back, the CPU fallback), and events and stream waits raise during capture and invalidate it;
  ``capture_end`` then raises too.
- The weight copies eager mode caches (conv, Linear, folded BN) are captured as regions a replay reruns
  only when a weight's version counter changed, so a replay always sees the weights' current values.
- Random ops draw new numbers at every replay: what the same ops would draw eagerly at that point
  from their generator.
- ``capture_error_mode`` is accepted for compatibility; the capture is always of one stream (work
  other threads launch on that stream is captured too).
"""
from __future__ import annotations

import gc
from typing import Any, Callable, Optional, Union

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from torch_ops_nn import _C

__all__ = ["NPUGraph", "graph", "graph_pool_handle", "make_graphed_callables", "is_current_stream_capturing"]

_CAPTURE_ERROR_MODES = ("global", "thread_local", "relaxed")


def is_current_stream_capturing() -> bool:
    """True while an NPUGraph captures the current npu stream."""
    return _C._is_current_stream_capturing()


def graph_pool_handle() -> tuple[int, int]:
    """An opaque token naming a memory pool several graphs may share (``capture_begin(pool=...)``)."""
    return (0, _C._graph_pool_handle())


def _pool_id(pool: Any) -> int:
    if pool is None:
        return 0
    if isinstance(pool, tuple) and len(pool) == 2 and all(isinstance(p, int) for p in pool) and pool[1] > 0:
        return pool[1]
    raise TypeError(f"NPUGraph: pool must be a token from torch.npu.graph_pool_handle() or another graph's "
                    f"pool(), got {pool!r}")


class NPUGraph:
    """A capture of npu work for replay (``torch.cuda.CUDAGraph``'s twin)."""

    def __init__(self, keep_graph: bool = False):
        self._g = _C._NPUGraph()
        self._debug = False
        self._keep_graph = keep_graph

    def capture_begin(self, pool: Optional[tuple[int, int]] = None, capture_error_mode: str = "global") -> None:
        """Start capturing the current stream's work (``torch.npu.graph`` calls this for you)."""
        if capture_error_mode not in _CAPTURE_ERROR_MODES:
            raise ValueError(f"NPUGraph.capture_begin: capture_error_mode must be one of {_CAPTURE_ERROR_MODES}, "
                             f"got {capture_error_mode!r}")
        self._g.capture_begin(_pool_id(pool))

    def capture_end(self) -> None:
        """End the capture; raises if an operation not allowed during capture invalidated it."""
        self._g.capture_end()

    def instantiate(self) -> None:
        """Nothing to do: a capture is ready to replay when it ends (kept for ``keep_graph=True`` code)."""
        if not self._g.captured():
            raise RuntimeError("NPUGraph.instantiate: the graph holds no capture")

    def replay(self) -> None:
        """Run the captured work again, asynchronously, on the current stream."""
        self._g.replay()

    def reset(self) -> None:
        """Drop the capture (waiting for replays in flight) and release the graph's memory pool."""
        self._g.reset()

    def pool(self) -> tuple[int, int]:
        """The token of this graph's memory pool, to share it with a later capture."""
        pid = self._g.pool()
        if pid == 0:
            raise RuntimeError("NPUGraph.pool: the graph has no memory pool (capture it first)")
        return (0, pid)

    def enable_debug_mode(self) -> None:
        self._debug = True

    def debug_dump(self, debug_path: str) -> None:
        """Write the captured tasks (kernel and shapes, one per line, in replay order) to ``debug_path``."""
        if not self._debug:
            raise RuntimeError("NPUGraph.debug_dump: call enable_debug_mode() before capture_end")
        with open(debug_path, "w") as f:
            for i, line in enumerate(self._g.describe()):
                f.write(f"{i}: {line}\n")

    def num_nodes(self) -> int:
        """How many tasks (kernel launches, copies) a replay runs."""
        return self._g.num_nodes()

    def __del__(self):
        g = getattr(self, "_g", None)
        if g is not None:
            try:
                g.reset()
            except Exception:
                pass

    def __repr__(self) -> str:
        state = "capturing" if self._g.capturing() else f"{self._g.num_nodes()} tasks" if self._g.captured() else "empty"
        return f"<torch.npu.NPUGraph {state}>"


class graph:
    """Context manager that captures the npu work of its block into ``npu_graph``, as
    ``torch.cuda.graph``: it synchronizes the device, empties the cache, makes ``stream`` (or a side
    stream of its own) current and captures it. If the block raises, the capture is dropped and the
    block's exception propagates."""

    default_capture_stream: Optional[torch.Stream] = None

    def __init__(self, npu_graph: NPUGraph, pool: Optional[tuple[int, int]] = None,
                 stream: Optional[torch.Stream] = None, capture_error_mode: str = "global"):
        if not isinstance(npu_graph, NPUGraph):
            raise TypeError(f"torch.npu.graph: expected a torch.npu.NPUGraph, got {type(npu_graph).__name__}")
        import torch_ops_nn.npu as npu

        if stream is None and graph.default_capture_stream is None:
            graph.default_capture_stream = npu.Stream()
        self.npu_graph = npu_graph
        self.pool = pool
        self.capture_stream = stream if stream is not None else graph.default_capture_stream
        self.capture_error_mode = capture_error_mode
        self._stream_ctx = npu.stream(self.capture_stream)

    def __enter__(self) -> None:
        import torch_ops_nn.npu as npu

        npu.synchronize()
        gc.collect()
        npu.empty_cache()
        self._stream_ctx.__enter__()
        try:
            self.npu_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.npu_graph.capture_end()
            else:
                self.npu_graph.reset()  # the block failed: drop the partial capture, keep its error
        finally:
            self._stream_ctx.__exit__(exc_type, exc, tb)


def _static(t: Any, what: str) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"make_graphed_callables: {what} must be tensors, got {type(t).__name__}")
    if t.device.type != "npu":
        raise ValueError(f"make_graphed_callables: {what} must be npu tensors, got one on {t.device}")
    return t


def make_graphed_callables(callables, sample_args, num_warmup_iters: int = 3, allow_unused_input: bool = False,
                           pool: Optional[tuple[int, int]] = None):
    """Graphed versions of callables or modules, as ``torch.cuda.make_graphed_callables``: each one's
    forward and backward are captured once (after ``num_warmup_iters`` eager runs on a side stream)
    and replayed on every call. ``sample_args`` is a tuple of npu tensors per callable (a tuple of
    such tuples for several callables, which then share one memory pool and must be called in the
    order given). Calls must use the sample arguments' shapes, dtypes and requires_grad; a module in a
    different training mode than at capture runs its ordinary forward."""
    import torch_ops_nn.npu as npu

    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    if len(callables) != len(sample_args):
        raise ValueError(f"make_graphed_callables: {len(callables)} callables but {len(sample_args)} sample_args")
    if torch.is_autocast_enabled("npu"):
        raise RuntimeError("make_graphed_callables: autocast must be off while graphing (enable it in the callables)")

    flat_args, arg_specs, module_params = [], [], []
    for i, (fn, args) in enumerate(zip(callables, sample_args)):
        if isinstance(fn, torch.nn.Module):
            if fn._backward_hooks or fn._forward_hooks or fn._forward_pre_hooks:
                raise ValueError(f"make_graphed_callables: module {i} has hooks, which a replay would not run")
            for b in fn.buffers():
                if b.requires_grad:
                    raise ValueError(f"make_graphed_callables: module {i} has a buffer that requires grad")
            params = tuple(fn.parameters())
        else:
            params = ()
        flat, spec = tree_flatten(args)
        flat_args.append(tuple(_static(t, "sample_args") for t in flat))
        arg_specs.append(spec)
        module_params.append(params)

    static_inputs = [fa + mp for fa, mp in zip(flat_args, module_params)]
    grad_mask = [tuple(t.requires_grad for t in si) for si in static_inputs]
    shared_pool = graph_pool_handle() if pool is None else pool
    fwd_graphs = [NPUGraph() for _ in callables]
    bwd_graphs = [NPUGraph() for _ in callables]

    def run(fn, spec, flat):
        out = fn(*tree_unflatten(list(flat), spec))
        outs, out_spec = tree_flatten(out)
        return tuple(_static(o, "outputs") for o in outs), out_spec

    def grads_of(outs, inputs, mask, grad_outs):
        need = tuple(o for o in outs if o.requires_grad)
        wrt = tuple(t for t, m in zip(inputs, mask) if m)
        if not need or not wrt:
            return ()
        gos = tuple(g for o, g in zip(outs, grad_outs) if o.requires_grad)
        return torch.autograd.grad(need, wrt, grad_outputs=gos, only_inputs=True, allow_unused=allow_unused_input)

    npu.synchronize()
    side = npu.Stream()
    side.wait_stream(npu.current_stream())
    with npu.stream(side):
        for fn, spec, fa, si, mask in zip(callables, arg_specs, flat_args, static_inputs, grad_mask):
            for _ in range(num_warmup_iters):
                outs, _ = run(fn, spec, fa)
                grads_of(outs, si, mask, tuple(torch.ones_like(o) for o in outs))
                del outs
    npu.current_stream().wait_stream(side)
    npu.synchronize()

    # Forwards in order, then backwards in reverse order, all in one pool: replays must come in that
    # order (as a training step runs them), since later captures reuse memory earlier ones freed.
    static_outputs, out_specs = [], []
    for fn, spec, fa, g in zip(callables, arg_specs, flat_args, fwd_graphs):
        with graph(g, pool=shared_pool):
            outs, out_spec = run(fn, spec, fa)
        static_outputs.append(outs)
        out_specs.append(out_spec)

    static_grad_outputs, static_grad_inputs = [None] * len(callables), [None] * len(callables)
    for i in reversed(range(len(callables))):
        outs = static_outputs[i]
        grad_outs = tuple(torch.empty_like(o) if o.requires_grad else None for o in outs)
        with graph(bwd_graphs[i], pool=shared_pool):
            grads = grads_of(outs, static_inputs[i], grad_mask[i], grad_outs)
        it = iter(grads)
        static_grad_inputs[i] = tuple(next(it) if m else None for m in grad_mask[i])
        static_grad_outputs[i] = grad_outs
        # Same memory, no autograd graph: the captured one (AccumulateGrad nodes made on the capture
        # stream) must not stay alive into the calls, which run on the caller's stream.
        static_outputs[i] = tuple(o.detach() for o in outs)

    results = []
    for i, fn in enumerate(callables):
        results.append(_graphed(fn, fwd_graphs[i], bwd_graphs[i], static_inputs[i], static_outputs[i],
                                static_grad_outputs[i], static_grad_inputs[i], len(flat_args[i]),
                                arg_specs[i], out_specs[i]))
    return results[0] if just_one else tuple(results)


def _graphed(fn, fwd_graph, bwd_graph, static_inputs, static_outputs, static_grad_outputs, static_grad_inputs,
             num_user_args, arg_spec, out_spec):
    class Graphed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            for static, given in zip(static_inputs[:num_user_args], inputs):
                if static.data_ptr() != given.data_ptr():
                    static.copy_(given)
            fwd_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grads):
            for static, given in zip(static_grad_outputs, grads):
                if static is not None and given is not None and static.data_ptr() != given.data_ptr():
                    static.copy_(given)
                elif static is not None and given is None:
                    static.zero_()
            bwd_graph.replay()
            return tuple(g.detach() if g is not None else None for g in static_grad_inputs)

    def functionalized(*user_args):
        flat, spec = tree_flatten(user_args)
        if len(flat) != num_user_args:
            raise ValueError(f"graphed callable: expected {num_user_args} tensor arguments as captured, got {len(flat)}")
        for k, (static, given) in enumerate(zip(static_inputs, flat)):
            if not isinstance(given, torch.Tensor) or given.shape != static.shape or given.dtype != static.dtype \
                    or given.device != static.device:
                raise ValueError(
                    f"graphed callable: argument {k} must match the captured sample: {tuple(static.shape)} "
                    f"{static.dtype} on {static.device}, got "
                    + (f"{tuple(given.shape)} {given.dtype} on {given.device}" if isinstance(given, torch.Tensor)
                       else type(given).__name__))
        outs = Graphed.apply(*(tuple(flat) + static_inputs[num_user_args:]))
        return tree_unflatten(list(outs), out_spec)

    if isinstance(fn, torch.nn.Module):
        training = fn.training
        eager_forward = fn.forward

        def forward(*args, **kwargs):
            if fn.training == training and not kwargs:
                return functionalized(*args)
            return eager_forward(*args, **kwargs)

        fn.forward = forward
        return fn
    return functionalized
