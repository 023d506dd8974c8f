"""Printing npu tensors.

PyTorch formats a tensor by computing on it in its own device (abs, min/max in float64,
masked_select, ...). Those are host-side chores, not device work: as PyTorch does for xla/lazy/
ipu/mtia tensors, we format an npu tensor from a CPU copy of its values (one device-to-host copy,
which also waits for the stream, like ``print`` of a CUDA tensor). The repr still names the npu
device, grad_fn and dtype: only the number formatting reads the copy.
"""

from __future__ import annotations

import torch
import torch._tensor_str as _ts

_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    original = _ts._tensor_str

    def _tensor_str(self, indent):
        if self.device.type == "npu":
            with torch.no_grad():
                self = self.detach().to("cpu")
        return original(self, indent)

    _tensor_str.__wrapped__ = original  # type: ignore[attr-defined]
    _ts._tensor_str = _tensor_str
    _installed = True
