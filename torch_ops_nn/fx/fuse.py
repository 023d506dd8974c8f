"""Rewrite Conv2d -> BatchNorm (eval) -> [Add residual] -> [ReLU | ReLU6 | SiLU] chains into the fused
``torch_ops_nn::conv_bn_act`` op.

Works on the three kinds of FX graph PyTorch produces:
- module-level graphs (``torch.fx.symbolic_trace``): ``call_module`` Conv2d / BatchNorm2d / ReLU ...;
- Dynamo's torch-function graphs: ``torch.conv2d``, ``F.batch_norm(..., training=False)``, ``F.relu``;
- ATen graphs (AOTAutograd, export): ``aten.convolution``, ``aten._native_batch_norm_legit_no_training``
  + ``getitem``, ``aten.relu``, ``aten.add.Tensor``.

A chain is fused only when it is provably equivalent: the conv is a plain 2-D convolution (zero padding
mode, not transposed, numeric padding), the BN is in eval mode with running statistics, every intermediate
value has exactly one user (a conv or BN output used elsewhere is left alone, so nothing is computed twice),
and a residual does not depend on the chain. Every skipped candidate is reported with its reason.
"""
from __future__ import annotations

import collections
import dataclasses
import operator
import types
from typing import Any, Optional, Union

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

import torch_ops_nn.fused  # noqa: F401  (registers torch.ops.torch_ops_nn.conv_bn_act)

aten = torch.ops.aten
FUSED_OP = torch.ops.torch_ops_nn.conv_bn_act.default


@dataclasses.dataclass
class FusionReport:
    fused: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    skipped: list = dataclasses.field(default_factory=list)  # (node name, reason)

    @property
    def total(self) -> int:
        return sum(self.fused.values())

    @property
    def conv_bn_pairs(self) -> int:
        return sum(n for k, n in self.fused.items() if "_bn" in k)

    def merge(self, other: "FusionReport") -> None:
        self.fused.update(other.fused)
        self.skipped.extend(other.skipped)

    def __str__(self) -> str:
        lines = [f"fused {self.total} chains: " + (", ".join(f"{k} x{v}" for k, v in sorted(self.fused.items()))
                                                   or "none")]
        for name, reason in self.skipped:
            lines.append(f"  skipped {name}: {reason}")
        return "\n".join(lines)


@dataclasses.dataclass
class _Conv:
    x: Any
    weight: Any
    bias: Any
    stride: list
    padding: list
    dilation: list
    groups: int


@dataclasses.dataclass
class _BN:
    input: Any
    weight: Any
    bias: Any
    mean: Any
    var: Any
    eps: float
    out: fx.Node  # the node whose value is the normalized tensor (a getitem for ATen)


class _Skip(Exception):
    pass


def _pair(v) -> list:
    return [int(v), int(v)] if isinstance(v, int) else [int(i) for i in v]


class _Matcher:
    def __init__(self, gm: fx.GraphModule):
        self.gm = gm
        self.modules = dict(gm.named_modules())

    # -- helpers ------------------------------------------------------------------------------------
    def module(self, node: fx.Node):
        return self.modules.get(node.target) if node.op == "call_module" else None

    def attr(self, node: fx.Node, name: str) -> Optional[fx.Node]:
        """A get_attr node for ``<module target>.name`` (None if the module has no such tensor)."""
        target = f"{node.target}.{name}"
        mod = self.modules[node.target]
        if getattr(mod, name, None) is None:
            return None
        with self.gm.graph.inserting_before(node):
            return self.gm.graph.get_attr(target)

    @staticmethod
    def arg(node: fx.Node, index: int, name: str, default=None):
        if len(node.args) > index:
            return node.args[index]
        return node.kwargs.get(name, default)

    # -- conv ---------------------------------------------------------------------------------------
    def conv(self, node: fx.Node) -> Optional[_Conv]:
        """The conv description of ``node``, None if it is no conv; raises _Skip if it is one we cannot fuse."""
        mod = self.module(node)
        if mod is not None:
            if not isinstance(mod, nn.Conv2d):
                return None
            if isinstance(mod, nn.ConvTranspose2d) or type(mod).__name__.startswith("ConvTranspose"):
                return None
            if mod.padding_mode != "zeros":
                raise _Skip(f"padding_mode '{mod.padding_mode}'")
            if isinstance(mod.padding, str):
                raise _Skip(f"string padding '{mod.padding}'")
            return _Conv(node.args[0], self.attr(node, "weight"), self.attr(node, "bias"), _pair(mod.stride),
                         _pair(mod.padding), _pair(mod.dilation), int(mod.groups))
        if node.op != "call_function":
            return None
        if node.target in (torch.conv2d, F.conv2d):
            padding = self.arg(node, 4, "padding", 0)
            if isinstance(padding, str):
                raise _Skip(f"string padding '{padding}'")
            return _Conv(node.args[0], self.arg(node, 1, "weight"), self.arg(node, 2, "bias"),
                         _pair(self.arg(node, 3, "stride", 1)), _pair(padding), _pair(self.arg(node, 5, "dilation", 1)),
                         int(self.arg(node, 6, "groups", 1)))
        if node.target is aten.convolution.default:
            x, w, b, stride, padding, dilation, transposed, output_padding, groups = node.args[:9]
            if transposed:
                return None
            if len(stride) != 2:
                raise _Skip(f"{len(stride)}-D convolution")
            return _Conv(x, w, b, list(stride), list(padding), list(dilation), int(groups))
        return None

    # -- batch norm ---------------------------------------------------------------------------------
    def bn(self, node: fx.Node, producer: fx.Node) -> Optional[_BN]:
        mod = self.module(node)
        if mod is not None:
            if not isinstance(mod, nn.BatchNorm2d):
                return None
            if mod.training:
                raise _Skip(f"BatchNorm2d '{node.target}' is in training mode")
            if not mod.track_running_stats or mod.running_mean is None:
                raise _Skip(f"BatchNorm2d '{node.target}' has no running statistics")
            return _BN(node.args[0], self.attr(node, "weight"), self.attr(node, "bias"),
                       self.attr(node, "running_mean"), self.attr(node, "running_var"), float(mod.eps), node)
        if node.op != "call_function":
            return None
        if node.target is F.batch_norm:
            training = self.arg(node, 5, "training", False)
            if training is not False:
                raise _Skip("batch_norm in training mode")
            mean, var = self.arg(node, 1, "running_mean"), self.arg(node, 2, "running_var")
            if mean is None or var is None:
                raise _Skip("batch_norm without running statistics")
            return _BN(node.args[0], self.arg(node, 3, "weight"), self.arg(node, 4, "bias"), mean, var,
                       float(self.arg(node, 7, "eps", 1e-5)), node)
        aten_bn = {aten._native_batch_norm_legit_no_training.default: (5, 6, None),
                   aten._native_batch_norm_legit.default: (5, 7, 5),
                   aten.native_batch_norm.default: (5, 7, 5)}
        if node.target in aten_bn:
            _, eps_idx, training_idx = aten_bn[node.target]
            if training_idx is not None and node.args[training_idx] is not False:
                raise _Skip("batch norm in training mode")
            x, w, b, mean, var = node.args[:5]
            if mean is None or var is None:
                raise _Skip("batch norm without running statistics")
            users = list(node.users)
            if any(u.target is not operator.getitem for u in users):
                raise _Skip("batch norm result used as a tuple")
            outs = [u for u in users if u.args[1] == 0]
            if len(outs) != 1 or len(users) != 1:
                raise _Skip("batch norm statistics outputs are used")
            return _BN(x, w, b, mean, var, float(node.args[eps_idx]), outs[0])
        return None

    # -- add / activation ---------------------------------------------------------------------------
    def add_other(self, node: fx.Node, value: fx.Node) -> Optional[Any]:
        """The other operand if ``node`` is ``value + other`` (alpha 1), else None."""
        is_add = (node.op == "call_function" and node.target in (operator.add, operator.iadd, torch.add,
                                                                  aten.add.Tensor, aten.add_.Tensor)) or (
            node.op == "call_method" and node.target in ("add", "add_"))
        if not is_add or len(node.args) < 2:
            return None
        if node.kwargs.get("alpha", 1) != 1 or (node.target in (aten.add.Tensor, aten.add_.Tensor)
                                                 and len(node.args) > 2 and node.args[2] != 1):
            return None
        a, b = node.args[0], node.args[1]
        other = b if a is value else (a if b is value else None)
        if not isinstance(other, fx.Node) or other is value:
            return None
        return other

    def activation(self, node: fx.Node) -> Optional[str]:
        mod = self.module(node)
        if mod is not None:
            if isinstance(mod, nn.ReLU):
                return "relu"
            if isinstance(mod, nn.ReLU6):
                return "relu6"
            if isinstance(mod, nn.SiLU):
                return "silu"
            if isinstance(mod, nn.Hardtanh) and (mod.min_val, mod.max_val) == (0.0, 6.0):
                return "relu6"
            return None
        if node.op == "call_method":
            return "relu" if node.target in ("relu", "relu_") else None
        if node.op != "call_function":
            return None
        if node.target in (F.relu, torch.relu, torch.relu_, aten.relu.default, aten.relu_.default):
            return "relu"
        if node.target in (F.relu6,):
            return "relu6"
        if node.target in (F.silu, aten.silu.default, aten.silu_.default):
            return "silu"
        if node.target in (F.hardtanh, aten.hardtanh.default, aten.hardtanh_.default):
            lo = self.arg(node, 1, "min_val", -1.0)
            hi = self.arg(node, 2, "max_val", 1.0)
            return "relu6" if (lo, hi) == (0.0, 6.0) else None
        return None


def _only_user(node: fx.Node) -> Optional[fx.Node]:
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _depends_on(node: fx.Node, ancestor: fx.Node, limit: int = 100000) -> bool:
    stack, seen = [node], set()
    while stack and len(seen) < limit:
        n = stack.pop()
        if n is ancestor:
            return True
        if n in seen:
            continue
        seen.add(n)
        stack.extend(a for a in n.all_input_nodes)
    return False


def fuse_graph(gm: fx.GraphModule) -> FusionReport:
    """Fuse in place; returns the report."""
    report = FusionReport()
    m = _Matcher(gm)
    graph = gm.graph
    for node in list(graph.nodes):
        if node.graph is not graph or node.op not in ("call_module", "call_function"):
            continue
        try:
            conv = m.conv(node)
        except _Skip as e:
            report.skipped.append((node.name, str(e)))
            continue
        if conv is None:
            continue
        chain = [node]
        last = node
        bn = residual = None
        act = "none"
        try:
            user = _only_user(last)
            if user is None:
                raise _Skip(f"conv output has {len(last.users)} users")
            bn = m.bn(user, last)
            if bn is not None:
                if bn.input is not last:
                    raise _Skip("batch norm input is not the conv output")
                chain.append(user)
                if bn.out is not user:
                    chain.append(bn.out)
                last = bn.out
                user = _only_user(last)
            if user is not None:
                other = m.add_other(user, last)
                if other is not None and not _depends_on(other, node):
                    residual = other
                    chain.append(user)
                    last = user
                    user = _only_user(last)
            if user is not None:
                a = m.activation(user)
                if a is not None:
                    act = a
                    chain.append(user)
                    last = user
            if bn is None and residual is None and act == "none":
                raise _Skip("no batch norm, residual add or activation follows the conv")
        except _Skip as e:
            if bn is None and len(chain) == 1:
                report.skipped.append((node.name, str(e)))
                continue
            report.skipped.append((node.name, f"{e} (fused what came before)"))
        # Insert the fused op just before the last node of the chain: every input exists by then.
        with graph.inserting_before(last):
            fused = graph.call_function(FUSED_OP, (
                conv.x, conv.weight, conv.bias,
                bn.weight if bn else None, bn.bias if bn else None, bn.mean if bn else None, bn.var if bn else None,
                residual, bn.eps if bn else 1e-5, conv.stride, conv.padding, conv.dilation, conv.groups, act))
        fused.meta.update(last.meta)
        last.replace_all_uses_with(fused)
        for n in reversed(chain):
            if n.graph is graph and not n.users:
                graph.erase_node(n)
        name = "conv" + ("_bn" if bn else "") + ("_add" if residual is not None else "") + (
            f"_{act}" if act != "none" else "")
        report.fused[name] += 1
    graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    return report


def _eval_only_train(self, mode: bool = True):
    if mode:
        raise RuntimeError("this module was fused by torch_ops_nn.fx.fuse for inference (BatchNorm folded in "
                           "eval mode); fuse the training-mode module again instead of calling .train() on it")
    return fx.GraphModule.train(self, False)


def fuse(model: Union[nn.Module, fx.GraphModule], inplace: bool = False) -> fx.GraphModule:
    """Fuse Conv-BN(-Add)-activation chains of ``model`` (an ``nn.Module`` is traced with
    ``torch.fx.symbolic_trace``). Returns the fused GraphModule; ``.fusion_report`` says what was
    fused and why each other candidate was skipped."""
    if isinstance(model, fx.GraphModule):
        gm = model if inplace else fx.GraphModule(model, _copy_graph(model.graph))
    else:
        gm = fx.symbolic_trace(model)
    report = fuse_graph(gm)
    gm.fusion_report = report
    if any("_bn" in k for k in report.fused) and not isinstance(model, fx.GraphModule):
        gm.train = types.MethodType(_eval_only_train, gm)
    return gm


def _copy_graph(graph: fx.Graph) -> fx.Graph:
    new = fx.Graph()
    out = new.graph_copy(graph, {})
    new.output(out)
    return new
