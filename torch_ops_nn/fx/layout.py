"""Channels-last layout for the convolutions of an inference ATen graph.

The cube convolution reads its input feature map as NHWC (C0-wide slabs of channels): an NCHW input
is first transposed on the device, every conv. In channels_last the activations are already in that
order and every conv, BN, activation, add and pool keeps it, so the transposes disappear (ResNet-50
batch 8: about a fifth of the forward time).

`channels_last_graph(gm)` rewrites an ATen graph (what AOTAutograd hands a backend) in place:
- each convolution's 4-D input goes through ``_as_channels_last`` (free when it already is);
- the layout then flows only through ops known to be layout-agnostic (elementwise, BN, pooling,
  the fused conv, reductions that keep the channel dim); every other consumer of a value that may be
  channels_last, and every graph output, gets ``_as_traced_layout``, which restores the layout the
  graph was traced with (a no-op when it already matches), so views, reshapes and strided ops see
  exactly the strides they were traced for.

Conversion is only for inference graphs (no backward): in training the layout of saved activations
stays as traced, and the pass only guards against layout surprises (convert=False).
"""
from __future__ import annotations

import torch
import torch.fx as fx

aten = torch.ops.aten


def _as_channels_last(x: torch.Tensor) -> torch.Tensor:
    return x.contiguous(memory_format=torch.channels_last) if x.dim() == 4 else x


def _as_contiguous(x: torch.Tensor) -> torch.Tensor:
    return x.contiguous()


def _conv_targets():
    targets = {aten.convolution.default}
    fused = getattr(torch.ops.torch_ops_nn, "conv_bn_act", None)
    if fused is not None:
        targets.add(fused.default)
    return targets


# Ops whose output follows the layout of their (4-D) inputs and whose result does not depend on it.
_AGNOSTIC = {
    aten.relu.default, aten.hardtanh.default, aten.silu.default, aten.sigmoid.default, aten.tanh.default,
    aten.gelu.default, aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default,
    aten.hardswish.default, aten.hardsigmoid.default, aten.leaky_relu.default,
    aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor, aten.div.Tensor, aten.add.Scalar, aten.mul.Scalar,
    aten._native_batch_norm_legit_no_training.default, aten.max_pool2d_with_indices.default, aten.max_pool2d.default,
    aten.avg_pool2d.default, aten.adaptive_avg_pool2d.default, aten._adaptive_avg_pool2d.default,
    aten.mean.dim, aten.sum.dim_IntList, aten.amax.default, aten.dropout.default, aten.clone.default,
}
_GETITEM = ("getitem",)


def _is_4d(node) -> bool:
    val = node.meta.get("val") if isinstance(node, fx.Node) else None
    return isinstance(val, torch.Tensor) and val.dim() == 4


def _traced_contiguous(node: fx.Node) -> bool:
    val = node.meta.get("val")
    return isinstance(val, torch.Tensor) and val.is_contiguous()


def channels_last_graph(gm: fx.GraphModule, convert: bool = True) -> int:
    """Rewrite in place; returns the number of convolutions given a channels_last input.

    convert=False only guards: a convolution on npu returns channels_last when its input is (as on
    CPU), while PyTorch's tracer assumes contiguous outputs for out-of-tree devices, so a graph
    traced with contiguous metadata could meet channels_last values at run time (a channels_last
    model input or weights). Every value derived from a convolution is restored to its traced
    layout before an op that is not layout-agnostic and at the outputs (no-ops when it matches)."""
    graph = gm.graph
    convs = _conv_targets()
    conv_nodes = [n for n in graph.nodes if n.op == "call_function" and n.target in convs and _is_4d(n.args[0])
                  and _is_4d(n)]
    conv_bwd = [n for n in graph.nodes if n.op == "call_function" and n.target is aten.convolution_backward.default]
    if not conv_nodes and not conv_bwd:
        return 0
    # 1. convs take a channels_last input; their outputs may be channels_last.
    maybe_cl: set[fx.Node] = set(conv_bwd)
    for conv in conv_nodes:
        if convert:
            x = conv.args[0]
            with graph.inserting_before(conv):
                cl = graph.call_function(_as_channels_last, (x,))
            cl.meta.update(x.meta)
            conv.replace_input_with(x, cl)
        maybe_cl.add(conv)
    # 2. propagate through layout-agnostic ops (graph order is topological).
    for node in graph.nodes:
        if node.op != "call_function" or node in maybe_cl:
            continue
        inputs = [a for a in node.all_input_nodes if a in maybe_cl]
        if not inputs:
            continue
        if node.target in _AGNOSTIC or (getattr(node.target, "__name__", "") in _GETITEM):
            # Its result (a tensor, or a tuple its getitems unpack, as max_pool2d_with_indices and
            # batch norm return) may differ from the traced layout too: keep following it.
            maybe_cl.add(node)
            continue
        if node.target is _as_channels_last:
            continue
        # 3. any other consumer sees the traced layout.
        for a in inputs:
            _restore_before(graph, node, a)
    # 4. graph outputs come back in the traced layout.
    out = next(n for n in graph.nodes if n.op == "output")
    for a in [a for a in out.all_input_nodes if a in maybe_cl]:
        _restore_before(graph, out, a)
    graph.lint()
    gm.recompile()
    return len(conv_nodes) if convert else 0


def _restore_before(graph: fx.Graph, user: fx.Node, value: fx.Node) -> None:
    val = value.meta.get("val")
    if not isinstance(val, torch.Tensor):
        return
    if val.is_contiguous():
        fn = _as_contiguous
    elif val.dim() == 4 and val.is_contiguous(memory_format=torch.channels_last):
        fn = _as_channels_last
    else:
        fn = _restore_strides(tuple(val.stride()))
    with graph.inserting_before(user):
        fixed = graph.call_function(fn, (value,))
    fixed.meta.update(value.meta)
    user.replace_input_with(value, fixed)


def _restore_strides(strides):
    def _as_traced_strides(x: torch.Tensor) -> torch.Tensor:
        if x.stride() == strides:
            return x
        return torch.empty_strided(x.shape, strides, dtype=x.dtype, device=x.device).copy_(x)

    return _as_traced_strides
