"""``torch.npu.amp``: the device-specific spellings of ``torch.amp`` that CUDA code uses as
``torch.cuda.amp`` (``autocast()``, ``GradScaler()``, ``custom_fwd`` / ``custom_bwd``), for npu."""
from __future__ import annotations

import functools
from typing import Optional

import torch

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(torch.amp.autocast):  # noqa: N801  (the torch.cuda.amp spelling)
    """``torch.autocast("npu", ...)``; the dtype defaults to ``torch.get_autocast_dtype("npu")``."""

    def __init__(self, enabled: bool = True, dtype: Optional[torch.dtype] = None, cache_enabled: bool = True):
        super().__init__("npu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    """``torch.amp.GradScaler("npu", ...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        super().__init__("npu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)


custom_fwd = functools.partial(torch.amp.custom_fwd, device_type="npu")
custom_bwd = functools.partial(torch.amp.custom_bwd, device_type="npu")
