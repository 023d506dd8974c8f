"""``torch.npu.memory``: the caching allocator's statistics, snapshot and history, as ``torch.cuda.memory``.

``memory_snapshot()`` lists every segment (one mapping of device memory) with its blocks in address
order and their states (``active_allocated``, ``active_pending_free``: freed while another stream may
still use it, ``inactive``: cached). ``_record_memory_history()`` records the allocator's events
(alloc, free_requested, free_completed, segment_alloc, segment_free, oom) with their time;
``_dump_snapshot()`` pickles both in the format https://pytorch.org/memory_viz reads. Frames (stack
traces) are not recorded: every ``frames`` list is empty.
"""
from __future__ import annotations

import pickle
import sys
from typing import Any, Optional

import torch

from torch_ops_nn import _C
from torch_ops_nn import npu as _npu
from torch_ops_nn.npu import (DeviceLike, _check_index, _index, device_count, empty_cache,  # noqa: F401
                              get_per_process_memory_fraction, max_memory_allocated, max_memory_reserved,
                              mem_get_info, memory_allocated, memory_reserved, memory_stats, memory_summary,
                              reset_accumulated_memory_stats, reset_peak_memory_stats,
                              set_per_process_memory_fraction)

__all__ = [
    "caching_allocator_alloc", "caching_allocator_delete", "empty_cache", "get_per_process_memory_fraction",
    "max_memory_allocated", "max_memory_cached", "max_memory_reserved", "mem_get_info", "memory_allocated",
    "memory_cached", "memory_reserved", "memory_snapshot", "memory_stats", "memory_stats_as_nested_dict",
    "memory_summary", "reset_accumulated_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
    "reset_peak_memory_stats", "set_per_process_memory_fraction",
]


def memory_stats_as_nested_dict(device: DeviceLike = None) -> dict[str, Any]:
    """``memory_stats`` with its dotted keys as nested dictionaries."""
    nested: dict[str, Any] = {}
    for key, value in memory_stats(device).items():
        node = nested
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return nested


def reset_max_memory_allocated(device: DeviceLike = None) -> None:
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: DeviceLike = None) -> None:
    reset_peak_memory_stats(device)


def memory_cached(device: DeviceLike = None) -> int:
    """Deprecated name of ``memory_reserved``."""
    return memory_reserved(device)


def max_memory_cached(device: DeviceLike = None) -> int:
    """Deprecated name of ``max_memory_reserved``."""
    return max_memory_reserved(device)


# ---- raw allocations through the caching allocator --------------------------------------------

_raw: dict[int, torch.Tensor] = {}


def caching_allocator_alloc(size: int, device: DeviceLike = None, stream: Optional[torch.Stream] = None) -> int:
    """Allocate ``size`` bytes from the caching allocator; returns the device address. Free it with
    ``caching_allocator_delete``."""
    if not isinstance(size, int) or size < 0:
        raise ValueError(f"caching_allocator_alloc: size must be a non-negative int, got {size!r}")
    idx = _check_index(_index(device))
    with _npu.device(idx), _npu.stream(stream):
        t = torch.empty(size, dtype=torch.uint8, device=f"npu:{idx}")
    ptr = t.data_ptr()
    if size:
        _raw[ptr] = t
    return ptr


def caching_allocator_delete(mem_ptr: int) -> None:
    """Free memory obtained from ``caching_allocator_alloc``."""
    if mem_ptr == 0:
        return
    if _raw.pop(mem_ptr, None) is None:
        raise ValueError(f"caching_allocator_delete: {mem_ptr:#x} was not allocated by caching_allocator_alloc")


# ---- snapshot and history ----------------------------------------------------------------------

def memory_snapshot() -> list[dict[str, Any]]:
    """The segments of every npu device, each with its blocks (as ``torch.cuda.memory_snapshot``)."""
    out: list[dict[str, Any]] = []
    for d in range(device_count()):
        out.extend(_C._memory_snapshot(d))
    return out


def _record_memory_history(enabled: Optional[str] = "all", context: Optional[str] = "all",
                           stacks: str = "all", max_entries: int = sys.maxsize, device: DeviceLike = None,
                           clear_history: bool = False, compile_context: bool = False,
                           global_record_annotations: bool = False) -> None:
    """Start (``enabled="all"`` or ``"state"``, or True) or stop (None or False) recording the
    allocator's events on ``device`` (the current device by default), keeping the last
    ``max_entries``; stopping keeps the recorded events for ``_snapshot`` (``clear_history=True``
    drops them). ``context``, ``stacks``, ``compile_context`` and ``global_record_annotations`` are
    accepted for compatibility with ``torch.cuda.memory``; no frames or annotations are recorded."""
    if enabled not in (None, False, True, "all", "state"):
        raise ValueError(f"_record_memory_history: enabled must be None, 'state' or 'all', got {enabled!r}")
    if not isinstance(max_entries, int) or max_entries <= 0:
        raise ValueError(f"_record_memory_history: max_entries must be a positive int, got {max_entries!r}")
    idx = _check_index(_index(device))
    if clear_history:
        _C._set_memory_history(idx, False, 0)
    if enabled in (None, False):
        _C._set_memory_history(idx, False, 1)
    else:
        _C._set_memory_history(idx, True, min(max_entries, 1 << 40))


def _snapshot(device: DeviceLike = None) -> dict[str, Any]:
    """``{"segments": memory_snapshot(), "device_traces": [events of device 0, 1, ...]}``."""
    traces = [_C._memory_history(d) for d in range(device_count())]
    return {"segments": memory_snapshot(), "device_traces": traces,
            "allocator_settings": {"PYTORCH_NPU_ALLOC_CONF": "", "backend": "torch_ops_nn"}}


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    """Pickle ``_snapshot()`` to ``filename`` (open it in https://pytorch.org/memory_viz)."""
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)
