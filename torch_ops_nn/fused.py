"""Fused Conv2d + eval-mode BatchNorm (+ residual Add) (+ activation) as one custom op.

``torch.ops.torch_ops_nn.conv_bn_act`` has
- an npu kernel: the convolution on the cube with the BN scale/shift, the residual add and the
  activation applied to the accumulator tile before it leaves, so the conv result crosses device
  memory once;
- a reference implementation for every other device (the unfused ATen sequence);
- a fake implementation for tracing (torch.compile), and autograd.

BN parameters stay live inputs: on npu they are folded (scale = gamma / sqrt(var + eps),
shift = beta - mean * scale) at run time, cached by the parameters' version counters, so an update
of the parameters is never missed (torch.npu.empty_cache() drops the cached folds).
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

ACTIVATIONS = ("none", "relu", "relu6", "silu")


def memory_format_of(x: Tensor) -> torch.memory_format:
    """channels_last for an NHWC-laid-out 4-D tensor (what a conv's output follows), else contiguous."""
    if x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last):
        return torch.channels_last
    return torch.contiguous_format


def _check_activation(activation: str) -> None:
    if activation not in ACTIVATIONS:
        raise ValueError(f"conv_bn_act: activation must be one of {ACTIVATIONS}, got {activation!r}")


def _apply_activation(y: Tensor, activation: str) -> Tensor:
    if activation == "relu":
        return torch.relu(y)
    if activation == "relu6":
        return F.hardtanh(y, 0.0, 6.0)
    if activation == "silu":
        return F.silu(y)
    return y


def reference(x: Tensor, weight: Tensor, bias: Optional[Tensor], bn_weight: Optional[Tensor],
              bn_bias: Optional[Tensor], running_mean: Optional[Tensor], running_var: Optional[Tensor],
              residual: Optional[Tensor], eps: float, stride: Sequence[int], padding: Sequence[int],
              dilation: Sequence[int], groups: int, activation: str) -> Tensor:
    """The unfused sequence the fused op is defined by."""
    y = F.conv2d(x, weight, bias, stride, padding, dilation, groups)
    if running_mean is not None:
        y = F.batch_norm(y, running_mean, running_var, bn_weight, bn_bias, training=False, eps=eps)
    if residual is not None:
        y = y + residual
    return _apply_activation(y, activation)


# The op, its npu kernel (BN fold cached by version counters, conv with the epilogue) and its autograd
# are C++ (csrc/aten/fused_conv.cpp): a Python custom op layer cost ~70 us per call. The reference
# (every device without a kernel, i.e. CPU) and the fake implementation for tracing are here.
from torch_ops_nn import _C  # noqa: E402,F401  (loading _C defines torch.ops.torch_ops_nn.conv_bn_act)
from torch_ops_nn.ops import conv2d_checks as _conv2d_checks  # noqa: E402

conv_bn_act = torch.ops.torch_ops_nn.conv_bn_act
_lib = torch.library.Library("torch_ops_nn", "IMPL")


def _reference_impl(x, weight, bias, bn_weight, bn_bias, running_mean, running_var, residual, eps, stride, padding,
                    dilation, groups, activation):
    _check_activation(activation)
    return reference(x, weight, bias, bn_weight, bn_bias, running_mean, running_var, residual, eps, stride,
                     padding, dilation, groups, activation).contiguous(memory_format=memory_format_of(x))


_lib.impl("conv_bn_act", _reference_impl, "CompositeExplicitAutograd")


def _out_hw(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


@torch.library.register_fake("torch_ops_nn::conv_bn_act", lib=_lib)
def _(x, weight, bias, bn_weight, bn_bias, running_mean, running_var, residual, eps, stride, padding, dilation,
      groups, activation):
    _check_activation(activation)
    n, _, h, w = x.shape
    o, _, kh, kw = weight.shape
    shape = (n, o, _out_hw(h, kh, stride[0], padding[0], dilation[0]), _out_hw(w, kw, stride[1], padding[1],
                                                                             dilation[1]))
    return x.new_empty(shape).contiguous(memory_format=memory_format_of(x))


# ---- the seed's API -------------------------------------------------------------------------------

def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def fused_conv_bn_relu(x: Tensor, w: Tensor, bias: Optional[Tensor] = None, bn_weight: Optional[Tensor] = None,
                       bn_bias: Optional[Tensor] = None, running_mean: Optional[Tensor] = None,
                       running_var: Optional[Tensor] = None, eps: float = 1e-5, stride=(1, 1), padding=(0, 0),
                       dilation=(1, 1), groups: int = 1) -> Tensor:
    """relu(batch_norm_eval(conv2d(x, w, bias))) in one kernel. Missing BN arguments take the identity
    values (weight 1, bias 0, running_mean 0, running_var 1), as in the seed's
    ``fused_conv_bn_relu(x_dev, w_dev, stride=(2, 2), padding=(3, 3))``."""
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    _conv2d_checks("fused_conv_bn_relu", x, w, bias, stride, padding, dilation, groups,
                   bn_weight=bn_weight, bn_bias=bn_bias, running_mean=running_mean, running_var=running_var)
    c = w.shape[0]
    if running_mean is None:
        running_mean = torch.zeros(c, device=x.device, dtype=x.dtype)
    if running_var is None:
        running_var = torch.ones(c, device=x.device, dtype=x.dtype)
    return conv_bn_act(x, w, bias, bn_weight, bn_bias, running_mean, running_var, None, float(eps), list(stride),
                       list(padding), list(dilation), int(groups), "relu")
