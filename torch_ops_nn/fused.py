"""Fused Conv2d + eval-mode BatchNorm (+ residual Add) (+ activation) as one custom op.

``torch.ops.torch_ops_nn.conv_bn_act`` has
- an npu kernel: the convolution on the cube with the BN scale/shift, the residual add and the
  activation applied to the accumulator tile before it leaves, so the conv result crosses device
  memory once;
- a reference implementation for every other device (the unfused ATen sequence);
- a fake implementation for tracing (torch.compile), and autograd.

BN parameters stay live inputs: on npu they are folded (scale = gamma / sqrt(var + eps),
shift = beta - mean * scale) at run time, cached by the parameters' version counters, so an update
of the parameters is never missed.
"""
from __future__ import annotations

import weakref
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


@torch.library.custom_op("torch_ops_nn::conv_bn_act", mutates_args=())
def conv_bn_act(x: Tensor, weight: Tensor, bias: Optional[Tensor], bn_weight: Optional[Tensor],
                bn_bias: Optional[Tensor], running_mean: Optional[Tensor], running_var: Optional[Tensor],
                residual: Optional[Tensor], eps: float, stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], groups: int, activation: str) -> Tensor:
    _check_activation(activation)
    return reference(x, weight, bias, bn_weight, bn_bias, running_mean, running_var, residual, eps, stride,
                     padding, dilation, groups, activation).contiguous(
        memory_format=memory_format_of(x))


def _out_hw(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


@conv_bn_act.register_fake
def _(x, weight, bias, bn_weight, bn_bias, running_mean, running_var, residual, eps, stride, padding, dilation,
      groups, activation):
    n, _, h, w = x.shape
    o, _, kh, kw = weight.shape
    shape = (n, o, _out_hw(h, kh, stride[0], padding[0], dilation[0]), _out_hw(w, kw, stride[1], padding[1],
                                                                             dilation[1]))
    return x.new_empty(shape).contiguous(memory_format=memory_format_of(x))


# ---- npu: fold BN, run the conv kernel with the epilogue ------------------------------------------

_fold_cache: dict = {}


def _fingerprint(t: Optional[Tensor]):
    """What must be unchanged for a cached fold to stay valid: the same tensor object (a freed
    tensor's address and id can be reused), its storage, and its version counter."""
    if t is None:
        return None
    return (t.data_ptr(), t._version, t.dtype, tuple(t.shape))


def fold_batch_norm(bias: Optional[Tensor], bn_weight: Optional[Tensor], bn_bias: Optional[Tensor],
                    running_mean: Tensor, running_var: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """(scale, shift) in float32 such that bn(conv + bias) = conv * scale + shift, per output channel.
    Cached per tensor objects, checked against their version counters, so an in-place update of a
    parameter or running statistic is never missed."""
    tensors = (bias, bn_weight, bn_bias, running_mean, running_var)
    key = tuple(id(t) for t in tensors) + (eps,)
    hit = _fold_cache.get(key)
    if hit is not None:
        refs, prints, scale, shift = hit
        if all((r is None and t is None) or (r is not None and r() is t) for r, t in zip(refs, tensors)) and \
                prints == tuple(_fingerprint(t) for t in tensors):
            return scale, shift
    rm, rv = running_mean.float(), running_var.float()
    scale = torch.rsqrt(rv + eps)
    if bn_weight is not None:
        scale = scale * bn_weight.float()
    shift = -rm * scale
    if bias is not None:
        shift = shift + bias.float() * scale
    if bn_bias is not None:
        shift = shift + bn_bias.float()
    if len(_fold_cache) > 1024:
        _fold_cache.clear()
    refs = tuple(None if t is None else weakref.ref(t) for t in tensors)
    _fold_cache[key] = (refs, tuple(_fingerprint(t) for t in tensors), scale, shift)
    return scale, shift


@conv_bn_act.register_kernel("npu")
def _(x, weight, bias, bn_weight, bn_bias, running_mean, running_var, residual, eps, stride, padding, dilation,
      groups, activation):
    from torch_ops_nn import _C

    _check_activation(activation)
    scale = shift = None
    conv_bias = bias
    if running_mean is not None:
        scale, shift = fold_batch_norm(bias, bn_weight, bn_bias, running_mean, running_var, eps)
        conv_bias = None
    return _C._conv_epilogue(x, weight, conv_bias, scale, shift, residual, list(stride), list(padding),
                             list(dilation), groups, activation)


# ---- autograd -------------------------------------------------------------------------------------

def _setup_context(ctx, inputs, output):
    (x, weight, bias, bn_weight, bn_bias, running_mean, running_var, residual, eps, stride, padding, dilation,
     groups, activation) = inputs
    ctx.save_for_backward(x, weight, bias, bn_weight, bn_bias, running_mean, running_var, output)
    ctx.config = (eps, stride, padding, dilation, groups, activation, residual is not None)


def _backward(ctx, grad_out):
    x, weight, bias, bn_weight, bn_bias, running_mean, running_var, out = ctx.saved_tensors
    eps, stride, padding, dilation, groups, activation, has_residual = ctx.config
    if activation == "relu":
        g = torch.where(out > 0, grad_out, torch.zeros_like(grad_out))
    elif activation == "relu6":
        g = torch.where((out > 0) & (out < 6), grad_out, torch.zeros_like(grad_out))
    elif activation == "silu":
        # recompute the pre-activation (cheaper to store nothing extra in the common inference case)
        pre = reference(x, weight, bias, bn_weight, bn_bias, running_mean, running_var, None, eps, stride,
                        padding, dilation, groups, "none")
        if has_residual:
            raise NotImplementedError("conv_bn_act: backward of silu with a residual is not supported")
        sig = torch.sigmoid(pre)
        g = grad_out * sig * (1 + pre * (1 - sig))
    else:
        g = grad_out
    grad_residual = g if has_residual else None
    grad_bn_weight = grad_bn_bias = None
    if running_mean is not None:
        inv = torch.rsqrt(running_var + eps)
        z = F.conv2d(x, weight, bias, stride, padding, dilation, groups) if (
            bn_weight is not None and ctx.needs_input_grad[3]) else None
        if bn_bias is not None:
            grad_bn_bias = g.sum((0, 2, 3))
        if z is not None:
            xhat = (z - running_mean.view(1, -1, 1, 1)) * inv.view(1, -1, 1, 1)
            grad_bn_weight = (g * xhat).sum((0, 2, 3))
        s = inv * bn_weight if bn_weight is not None else inv
        g = g * s.view(1, -1, 1, 1)
    grad_x, grad_w, grad_b = torch.ops.aten.convolution_backward(
        g, x, weight, [weight.shape[0]] if bias is not None else None, list(stride), list(padding), list(dilation),
        False, [0, 0], groups, [ctx.needs_input_grad[0], ctx.needs_input_grad[1], bias is not None])
    return (grad_x, grad_w, grad_b, grad_bn_weight, grad_bn_bias, None, None, grad_residual, None, None, None, None,
            None, None)


conv_bn_act.register_autograd(_backward, setup_context=_setup_context)


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
    from torch_ops_nn.ops import conv2d_checks

    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    conv2d_checks("fused_conv_bn_relu", x, w, bias, stride, padding, dilation, groups,
                  bn_weight=bn_weight, bn_bias=bn_bias, running_mean=running_mean, running_var=running_var)
    c = w.shape[0]
    if running_mean is None:
        running_mean = torch.zeros(c, device=x.device, dtype=x.dtype)
    if running_var is None:
        running_var = torch.ones(c, device=x.device, dtype=x.dtype)
    return conv_bn_act(x, w, bias, bn_weight, bn_bias, running_mean, running_var, None, float(eps), list(stride),
                       list(padding), list(dilation), int(groups), "relu")
