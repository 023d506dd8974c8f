"""The seed's ops API: ``conv2d``, ``matmul``, ``relu``, ``maxpool``, ``batch_norm``.

Each takes and returns npu tensors, follows PyTorch's semantics (output sizes are floored), and
fails as the ops-nn tutorial's troubleshooting section promises: a non-positive output size names
the formula and the numbers, an unsupported dtype lists the supported ones, mixed devices say which
argument is where, and too little device memory reports requested/free/total bytes
(``torch.OutOfMemoryError`` from the allocator). The work itself runs in the npu kernels that the
same ATen ops reach (``torch.nn.functional``), so the seed API and PyTorch code share one path.
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

import torch
import torch.nn.functional as F

SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
IntPair = Union[int, Sequence[int]]


def _pair(op: str, name: str, value: IntPair) -> tuple[int, int]:
    if isinstance(value, int):
        return (int(value), int(value))
    if isinstance(value, tuple) and len(value) == 2 and type(value[0]) is int and type(value[1]) is int:
        return value
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"{op}: {name} must be an int or a pair of ints, got {value}")
    return value


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def check_tensors(op: str, **tensors: Optional[torch.Tensor]) -> torch.device:
    """All given tensors are npu tensors on one device, of one supported floating dtype."""
    # The common case in a few attribute reads per tensor (`device.type` alone costs ~0.25 us);
    # anything else goes through the checks below, which name the rule that fails.
    fast, dt, idx = True, None, -2
    for t in tensors.values():
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            fast = False
            break
        if dt is None:
            first, dt, idx = t, t.dtype, t.get_device()
        elif t.dtype is not dt or t.get_device() != idx:
            fast = False
            break
    if fast and dt in SUPPORTED_DTYPES and first.device.type == "npu":
        return first.device
    present = {k: t for k, t in tensors.items() if t is not None}
    for name, t in present.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{op}: {name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype not in SUPPORTED_DTYPES:
            raise TypeError(f"{op}: {name} has dtype {_dtype_name(t.dtype)}, which is not supported; "
                            f"supported dtypes: {', '.join(_dtype_name(d) for d in SUPPORTED_DTYPES)}")
    first_name, first = next(iter(present.items()))
    for name, t in present.items():
        if t.device.type != "npu":
            where = ", ".join(f"{n} on {v.device}" for n, v in present.items())
            raise RuntimeError(f"{op}: expected npu tensors, but {name} is on {t.device} ({where}); "
                               f"move them with .to('npu')")
        if t.device != first.device:
            raise RuntimeError(f"{op}: all tensors must be on one npu device, but {first_name} is on "
                               f"{first.device} and {name} is on {t.device}")
    for name, t in present.items():
        if t.dtype != first.dtype:
            raise TypeError(f"{op}: {first_name} is {_dtype_name(first.dtype)} but {name} is "
                            f"{_dtype_name(t.dtype)}; convert them to one dtype")
    return first.device


def _out_size(op: str, what: str, size: int, pad: int, dil: int, k: int, stride: int) -> int:
    out = (size + 2 * pad - dil * (k - 1) - 1) // stride + 1
    if out <= 0:
        raise ValueError(
            f"{op}: output {what} floor(({what[0].upper()} + 2*padding - dilation*(kernel-1) - 1)/stride) + 1 = "
            f"floor(({size} + 2*{pad} - {dil}*({k}-1) - 1)/{stride}) + 1 = {out} is not positive; "
            f"use a larger input, more padding or a smaller kernel/stride/dilation")
    return out


def conv2d_checks(op: str, x: torch.Tensor, w: torch.Tensor, bias: Optional[torch.Tensor], stride: IntPair,
                  padding: IntPair, dilation: IntPair, groups: int, **per_channel: Optional[torch.Tensor]) -> None:
    """The seed's conv2d argument rules (shared by conv2d and fused_conv_bn_relu)."""
    check_tensors(op, x=x, w=w, bias=bias, **per_channel)
    stride, padding, dilation = (_pair(op, "stride", stride), _pair(op, "padding", padding),
                                 _pair(op, "dilation", dilation))
    if x.dim() != 4:
        raise ValueError(f"{op}: x must be 4-D (N, C, H, W), got shape {tuple(x.shape)}")
    if w.dim() != 4:
        raise ValueError(f"{op}: w must be 4-D (O, C/groups, kH, kW), got shape {tuple(w.shape)}")
    if min(stride) < 1 or min(dilation) < 1 or min(padding) < 0 or groups < 1:
        raise ValueError(f"{op}: stride {stride} and dilation {dilation} must be >= 1, padding {padding} >= 0, "
                         f"groups {groups} >= 1")
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if c % groups or o % groups:
        raise ValueError(f"{op}: input channels {c} and output channels {o} must both be divisible by "
                         f"groups={groups}")
    if cg * groups != c:
        raise ValueError(f"{op}: w expects {cg} input channels per group x {groups} groups = {cg * groups}, "
                         f"but x has {c} channels (x {tuple(x.shape)}, w {tuple(w.shape)})")
    for name, t in (("bias", bias), *per_channel.items()):
        if t is not None and t.shape != (o,):
            raise ValueError(f"{op}: {name} must have shape ({o},) to match w's {o} output channels, "
                             f"got {tuple(t.shape)}")
    _out_size(op, "height", h, padding[0], dilation[0], kh, stride[0])
    _out_size(op, "width", wd, padding[1], dilation[1], kw, stride[1])


def conv2d(x: torch.Tensor, w: torch.Tensor, bias: Optional[torch.Tensor] = None, stride: IntPair = (1, 1),
           padding: IntPair = (0, 0), dilation: IntPair = (1, 1), groups: int = 1) -> torch.Tensor:
    """2-D convolution of an (N, C, H, W) input with an (O, C/groups, kH, kW) weight on the npu cube."""
    conv2d_checks("conv2d", x, w, bias, stride, padding, dilation, groups)
    stride, padding, dilation = (_pair("conv2d", "stride", stride), _pair("conv2d", "padding", padding),
                                 _pair("conv2d", "dilation", dilation))
    return F.conv2d(x, w, bias, stride, padding, dilation, groups)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Matrix product (2-D, or batched with broadcasting as torch.matmul) on the npu cube."""
    op = "matmul"
    check_tensors(op, a=a, b=b)
    if a.dim() < 1 or b.dim() < 1:
        raise ValueError(f"{op}: both arguments need at least 1 dimension, got shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.dim() >= 2 else b.shape[0]
    if k_a != k_b:
        raise ValueError(f"{op}: a has shape {tuple(a.shape)} and b has shape {tuple(b.shape)}: a's last "
                         f"dimension ({k_a}) must equal b's {'second-to-last' if b.dim() >= 2 else 'only'} "
                         f"dimension ({k_b})")
    return torch.matmul(a, b)


def relu(x: torch.Tensor) -> torch.Tensor:
    """max(x, 0) elementwise on the npu vector unit."""
    check_tensors("relu", x=x)
    return torch.relu(x)


def maxpool(x: torch.Tensor, kernel: IntPair = (2, 2), stride: Optional[IntPair] = None,
            padding: IntPair = (0, 0), dilation: IntPair = (1, 1), ceil_mode: bool = False) -> torch.Tensor:
    """2-D max pooling of an (N, C, H, W) or (C, H, W) input; ``stride`` defaults to ``kernel``."""
    op = "maxpool"
    check_tensors(op, x=x)
    kernel = _pair(op, "kernel", kernel)
    stride = kernel if stride is None else _pair(op, "stride", stride)
    padding, dilation = _pair(op, "padding", padding), _pair(op, "dilation", dilation)
    if x.dim() not in (3, 4):
        raise ValueError(f"{op}: x must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape {tuple(x.shape)}")
    if min(kernel) < 1 or min(stride) < 1 or min(dilation) < 1:
        raise ValueError(f"{op}: kernel {kernel}, stride {stride} and dilation {dilation} must be >= 1")
    for p, k, axis in zip(padding, kernel, ("height", "width")):
        if p < 0 or p > k // 2:
            raise ValueError(f"{op}: {axis} padding {p} must be between 0 and half the kernel ({k} // 2 = {k // 2})")
    _out_size(op, "height", x.shape[-2], padding[0], dilation[0], kernel[0], stride[0])
    _out_size(op, "width", x.shape[-1], padding[1], dilation[1], kernel[1], stride[1])
    return F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode=ceil_mode)


def batch_norm(x: torch.Tensor, running_mean: Optional[torch.Tensor] = None,
               running_var: Optional[torch.Tensor] = None, weight: Optional[torch.Tensor] = None,
               bias: Optional[torch.Tensor] = None, training: Optional[bool] = None, momentum: float = 0.1,
               eps: float = 1e-5) -> torch.Tensor:
    """Batch normalization over the channel dimension (dim 1) of x.

    With only ``x``, it normalizes with the batch's statistics (weight 1, bias 0). ``training``
    defaults to False when running statistics are given (inference) and to True when they are not;
    in training mode given running statistics are updated in place with ``momentum``.
    """
    op = "batch_norm"
    check_tensors(op, x=x, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    if x.dim() < 2:
        raise ValueError(f"{op}: x must have a channel dimension (N, C, ...), got shape {tuple(x.shape)}")
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise ValueError(f"{op}: {name} must have shape ({c},) for x's {c} channels, got {tuple(t.shape)}")
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{op}: give both running_mean and running_var, or neither")
    if training is None:
        training = running_mean is None
    if not training and running_mean is None:
        raise ValueError(f"{op}: inference (training=False) needs running_mean and running_var")
    # As PyTorch: exactly one value per channel is an error in training; empty x is not.
    if training and c > 0 and x.numel() // c == 1:
        raise ValueError(f"{op}: training needs more than 1 value per channel, got x of shape {tuple(x.shape)}")
    if eps <= 0:
        raise ValueError(f"{op}: eps must be positive, got {eps}")
    return F.batch_norm(x, running_mean, running_var, weight, bias, training=training, momentum=momentum, eps=eps)
