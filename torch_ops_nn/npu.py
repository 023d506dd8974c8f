"""``torch.npu``: the device module of the simulated (or real) Ascend NPU, shaped like ``torch.cuda``."""
from __future__ import annotations

from typing import Any, Optional, Union

import torch

from torch_ops_nn import _C

DeviceLike = Union[int, str, torch.device, None]

__all__ = [
    "is_available", "is_initialized", "init", "device_count", "current_device", "set_device", "device",
    "device_of", "synchronize", "get_device_name", "get_device_properties", "get_device_capability",
    "mem_get_info", "memory_summary", "set_per_process_memory_fraction",
    "get_per_process_memory_fraction", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "memory_stats", "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_cache", "Stream",
    "Event", "current_stream", "default_stream", "set_stream", "stream", "manual_seed", "manual_seed_all",
    "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all",
    "set_rng_state_all", "default_generators", "kernel_counters", "reset_kernel_counters",
    "get_amp_supported_dtype", "is_bf16_supported", "conv", "matmul", "StreamContext", "OutOfMemoryError",
    "set_sync_debug_mode", "get_sync_debug_mode", "device_memory_used", "can_device_access_peer",
    "is_current_stream_capturing", "get_arch_list", "get_allocator_backend", "ipc_collect",
]

OutOfMemoryError = torch.OutOfMemoryError  # what an allocation past the device's memory raises


def _index(device: DeviceLike, optional: bool = True) -> int:
    """The device index of ``device`` (None -> current device)."""
    if device is None:
        return _C._current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "npu":
            raise ValueError(f"expected an npu device, got {device}")
        return device.index if device.index is not None else _C._current_device()
    raise TypeError(f"expected a device index, 'npu:N' string or torch.device, got {type(device).__name__}")


def _check_index(index: int) -> int:
    count = device_count()
    if not 0 <= index < count:
        raise ValueError(f"invalid npu device index {index}: {count} device(s) visible"
                         + (f", valid indices are 0..{count - 1}" if count else ""))
    return index


def is_available() -> bool:
    return _C._device_count() > 0


def is_initialized() -> bool:
    return True


# PyTorch's own code reads these of a device module (torch.cuda's names): torch.utils.checkpoint saves
# and restores the device RNG state only when `_initialized` is true, so without it a checkpointed
# dropout drew a different mask in the recomputation and the gradients were silently wrong.
_initialized = True


def _lazy_init() -> None:
    """Nothing to do (the runtime is ready at import); torch.cuda parity for PyTorch internals."""


def init() -> None:
    """Nothing to do: the runtime initialises itself on first use (kept for torch.cuda parity)."""


def device_count() -> int:
    return _C._device_count()


def current_device() -> int:
    return _C._current_device()


def set_device(device: DeviceLike) -> None:
    index = _index(device)
    if index >= 0:
        _C._set_device(_check_index(index))


class device:
    """Context manager that changes the current npu device (like ``torch.cuda.device``)."""

    def __init__(self, device: DeviceLike):
        self.idx = _index(device) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = current_device()
        if self.idx >= 0 and self.idx != self.prev_idx:
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.idx != self.prev_idx:
            _C._set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager that makes the device of ``obj`` (a tensor) current."""

    def __init__(self, obj: torch.Tensor):
        super().__init__(obj.get_device() if obj.device.type == "npu" else -1)


def synchronize(device: DeviceLike = None) -> None:
    """Wait for all work on every stream of ``device``; re-raises asynchronous kernel errors."""
    _C._synchronize(_check_index(_index(device)))


class _NpuDeviceProperties:
    __slots__ = ("name", "soc_name", "npu_arch", "cube_core_num", "vector_core_num", "ub_size", "l1_size",
                 "l0a_size", "l0b_size", "l0c_size", "bt_size", "fb_size", "total_memory", "hbm_size",
                 "hbm_bandwidth_gbps", "cube_fp16_tflops", "clock_ghz", "figures_verified", "physical_id",
                 "multi_processor_count", "simulated")

    def __init__(self, props: dict):
        for key, value in props.items():
            setattr(self, key, value)
        self.multi_processor_count = props["cube_core_num"]
        self.simulated = True

    def __repr__(self) -> str:
        return (f"_NpuDeviceProperties(name='{self.name}', npu_arch={self.npu_arch}, "
                f"cube_core_num={self.cube_core_num}, vector_core_num={self.vector_core_num}, "
                f"total_memory={self.total_memory // (1024 ** 2)}MB, ub_size={self.ub_size // 1024}KB, "
                f"l1_size={self.l1_size // 1024}KB, l0a_size={self.l0a_size // 1024}KB, "
                f"l0b_size={self.l0b_size // 1024}KB, l0c_size={self.l0c_size // 1024}KB, simulated=True)")


def get_device_properties(device: DeviceLike = None) -> _NpuDeviceProperties:
    return _NpuDeviceProperties(_C._device_properties(_check_index(_index(device))))


def get_device_name(device: DeviceLike = None) -> str:
    return get_device_properties(device).name


def get_device_capability(device: DeviceLike = None) -> tuple[int, int]:
    """The NPU architecture as (major, minor): (22, 1) for __NPU_ARCH__ 2201, (20, 2) for 2002."""
    arch = get_device_properties(device).npu_arch
    return divmod(arch, 100)


# ---- memory -------------------------------------------------------------------------------------

def memory_stats(device: DeviceLike = None) -> dict[str, Any]:
    """Caching-allocator statistics, keyed like ``torch.cuda.memory_stats``."""
    return dict(sorted(_C._memory_stats(_check_index(_index(device))).items()))


def memory_allocated(device: DeviceLike = None) -> int:
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: DeviceLike = None) -> int:
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: DeviceLike = None) -> int:
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: DeviceLike = None) -> int:
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: DeviceLike = None) -> None:
    _C._reset_peak_memory_stats(_check_index(_index(device)))


def reset_accumulated_memory_stats(device: DeviceLike = None) -> None:
    _C._reset_accumulated_memory_stats(_check_index(_index(device)))


def memory_summary(device: DeviceLike = None, abbreviated: bool = False) -> str:
    """A table of the caching allocator's statistics, as ``torch.cuda.memory_summary`` prints it: current,
    peak, total allocated and total freed, for bytes (all / large / small pool) and counts."""
    idx = _check_index(_index(device))
    stats = memory_stats(idx)

    def fmt_bytes(n: int) -> str:
        for unit in ("B  ", "KiB", "MiB", "GiB", "TiB"):
            if abs(n) < 1024 or unit == "TiB":
                return f"{n:6.0f} {unit}" if unit == "B  " else f"{n:6.1f} {unit}"
            n /= 1024
        return str(n)

    rows = [("allocated_bytes", "Allocated memory", fmt_bytes), ("active_bytes", "Active memory", fmt_bytes),
            ("requested_bytes", "Requested memory", fmt_bytes), ("reserved_bytes", "NPU reserved memory", fmt_bytes),
            ("inactive_split_bytes", "Non-releasable memory", fmt_bytes), ("allocation", "Allocations", str),
            ("active", "Active allocs", str), ("segment", "NPU reserved segments", str),
            ("inactive_split", "Non-releasable allocs", str)]
    width = 83
    lines = ["=" * width, f" PyTorch NPU memory summary, device ID {idx:<2}  (torch_ops_nn simulated NPU)".ljust(width),
             "-" * width, f"{'Metric':<26}|{'Cur Usage':>13} |{'Peak Usage':>13} |{'Tot Alloc':>13} |{'Tot Freed':>12}",
             "=" * width]
    pools = ("all",) if abbreviated else ("all", "large_pool", "small_pool")
    for key, title, f in rows:
        for pool in pools:
            name = title if pool == "all" else f"      from {pool.replace('_pool', '')} pool"
            vals = [stats.get(f"{key}.{pool}.{k}", 0) for k in ("current", "peak", "allocated", "freed")]
            lines.append(f"{name:<26}|" + "|".join(f"{f(v):>13} " for v in vals))
        lines.append("-" * width)
    lines.append(f"{'Device allocs / frees':<26}| {stats.get('num_device_alloc', 0):>12} | "
                 f"{stats.get('num_device_free', 0):>12} | OOMs {stats.get('num_ooms', 0)}, retries "
                 f"{stats.get('num_alloc_retries', 0)}")
    lines.append("=" * width)
    return "\n".join(lines) + "\n"


def set_per_process_memory_fraction(fraction: float, device: DeviceLike = None) -> None:
    """Cap this process's reserved device memory at ``fraction`` of the device's capacity, as
    ``torch.cuda.set_per_process_memory_fraction``: allocating past it raises ``torch.OutOfMemoryError``."""
    if not isinstance(fraction, (int, float)):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C._set_memory_fraction(float(fraction), _check_index(_index(device)))


def get_per_process_memory_fraction(device: DeviceLike = None) -> float:
    """The fraction set by ``set_per_process_memory_fraction`` (1.0 by default)."""
    return _C._get_memory_fraction(_check_index(_index(device)))


def mem_get_info(device: DeviceLike = None) -> tuple[int, int]:
    """(free, total) device memory in bytes; cached blocks count as used, as in CUDA."""
    return tuple(_C._mem_get_info(_check_index(_index(device))))


def device_memory_used(device: DeviceLike = None) -> int:
    """Device memory in use in bytes, as ``nvidia-smi`` reports it for ``torch.cuda.device_memory_used``:
    what the caching allocator holds (this process is the simulated device's only user)."""
    free, total = mem_get_info(device)
    return total - free


def can_device_access_peer(device: DeviceLike, peer_device: DeviceLike) -> bool:
    """Whether ``device`` can read ``peer_device``'s memory directly: simulated devices share the host's
    memory, so every pair of distinct devices can (a device is not its own peer, as in CUDA)."""
    d, p = _check_index(_index(device)), _check_index(_index(peer_device))
    return d != p


def is_current_stream_capturing() -> bool:
    """True while a torch.npu.NPUGraph captures the current stream."""
    return _C._is_current_stream_capturing()


def get_arch_list() -> list[str]:
    """The SoCs of the visible devices (torch.cuda.get_arch_list lists compute capabilities)."""
    return sorted({get_device_properties(i).name for i in range(device_count())})


def get_allocator_backend() -> str:
    """The device memory allocator in use: "native", our caching allocator (torch.cuda's spelling)."""
    return "native"


def ipc_collect() -> None:
    """torch.cuda.ipc_collect's twin: the npu shares no memory between processes, so there is nothing to
    release; CUDA code that calls it runs unchanged."""


def empty_cache() -> None:
    """Release cached device memory that no tensor uses."""
    _C._empty_cache()


# ---- streams and events -----------------------------------------------------------------------

class Stream(torch.Stream):
    """An npu stream: a FIFO of work that runs asynchronously from the host."""

    def __new__(cls, device: DeviceLike = None, priority: int = 0, **kwargs):
        if "stream_id" in kwargs:  # wrapping an existing stream
            return super().__new__(cls, stream_id=kwargs["stream_id"], device_index=kwargs["device_index"],
                                   device_type=kwargs["device_type"])
        return super().__new__(cls, device=torch.device("npu", _check_index(_index(device))), priority=priority)

    def wait_stream(self, stream: torch.Stream) -> None:
        """Make this stream wait for all work currently enqueued on ``stream``."""
        self.wait_event(stream.record_event())

    def wait_event(self, event) -> None:
        super().wait_event(Event._unwrap(event))

    def record_event(self, event=None):
        if event is None:
            event = Event(device=self.device_index)
        Event._unwrap(event).record(self)
        return event

    def __repr__(self) -> str:
        return f"<torch.npu.Stream device=npu:{self.device_index} id={self.stream_id}>"


def _wrap(s: torch.Stream) -> Stream:
    return Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)


class Event:
    """An npu event: record on a stream, wait, query, synchronize, elapsed_time (in milliseconds).

    Wraps a ``torch.Event`` (reachable as ``.event``), so it also works with ``torch.Stream`` APIs.
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 device: DeviceLike = None):
        if interprocess:
            raise NotImplementedError("npu events do not support interprocess=True")
        self.event = torch.Event(torch.device("npu", _check_index(_index(device))), enable_timing=enable_timing,
                                 blocking=blocking)

    @staticmethod
    def _unwrap(e):
        return e.event if isinstance(e, Event) else e

    def record(self, stream: Optional[torch.Stream] = None) -> None:
        self.event.record(stream if stream is not None else current_stream(self.event.device))

    def wait(self, stream: Optional[torch.Stream] = None) -> None:
        self.event.wait(stream if stream is not None else current_stream(self.event.device))

    def query(self) -> bool:
        return self.event.query()

    def synchronize(self) -> None:
        self.event.synchronize()

    def elapsed_time(self, end_event: "Event") -> float:
        return self.event.elapsed_time(self._unwrap(end_event))

    @property
    def device(self) -> torch.device:
        return self.event.device

    def __repr__(self) -> str:
        return f"<torch.npu.Event device={self.event.device}>"


def current_stream(device: DeviceLike = None) -> Stream:
    return _wrap(torch.accelerator.current_stream(torch.device("npu", _check_index(_index(device)))))


def default_stream(device: DeviceLike = None) -> Stream:
    index = _check_index(_index(device))
    return Stream(stream_id=0, device_index=index, device_type=current_stream(index).device_type)


def set_stream(stream: torch.Stream) -> None:
    if stream is not None:
        torch.accelerator.set_stream(stream)


class StreamContext:
    """Context manager that makes ``stream`` current on its device (None: no change), as
    ``torch.cuda.StreamContext``; ``torch.npu.stream(s)`` returns one."""

    def __init__(self, stream: Optional[torch.Stream]):
        self.stream = stream
        self._prev_device: Optional[int] = None
        self._prev_stream: Optional[torch.Stream] = None

    def __enter__(self) -> Optional[torch.Stream]:
        s = self.stream
        if s is None:
            return None
        self._prev_device = current_device()
        self._prev_stream = current_stream(s.device_index)
        if s.device_index != self._prev_device:
            set_device(s.device_index)
        torch.accelerator.set_stream(s)
        return s

    def __exit__(self, *exc) -> None:
        s = self.stream
        if s is None:
            return
        torch.accelerator.set_stream(self._prev_stream)
        if s.device_index != self._prev_device:
            set_device(self._prev_device)


def stream(stream: Optional[torch.Stream]) -> StreamContext:
    """Make ``stream`` current on its device for the block (None: no change)."""
    return StreamContext(stream)


# ---- sync debug mode ----------------------------------------------------------------------------

_SYNC_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode: Union[int, str]) -> None:
    """Report operations that make the host wait for the device, as ``torch.cuda.set_sync_debug_mode``:
    ``"default"`` / 0 allows them, ``"warn"`` / 1 warns, ``"error"`` / 2 raises RuntimeError. They are
    copies to host memory (``.cpu()``, ``.item()``, ``.tolist()``, an op that reads a value back, the
    CPU fallback) and blocking copies from host memory; explicit waits (``synchronize()``, events)
    are not reported."""
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = _SYNC_MODES[debug_mode]
    if not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"set_sync_debug_mode: expected an int or str, got {type(debug_mode).__name__}")
    _C._set_sync_debug_mode(debug_mode)


def get_sync_debug_mode() -> int:
    """The current sync debug mode: 0 default, 1 warn, 2 error."""
    return _C._get_sync_debug_mode()


# ---- random number generators -----------------------------------------------------------------

class _DefaultGenerators(tuple):
    pass


def _generators() -> tuple:
    global _default_generators_cache
    if _default_generators_cache is None:
        _default_generators_cache = _DefaultGenerators(_C._default_generator(i) for i in range(device_count()))
    return _default_generators_cache


_default_generators_cache = None


def get_amp_supported_dtype() -> list[torch.dtype]:
    """Dtypes torch.autocast("npu", dtype=...) accepts: the cube's 16-bit input types."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


def _is_in_bad_fork() -> bool:
    """True in a process forked after the npu runtime started its threads (as CUDA's): any device use
    there raises. torch.manual_seed asks this and then leaves the npu generators alone."""
    return _C._is_in_bad_fork()


def __getattr__(name: str):
    if name == "default_generators":
        return _generators()
    raise AttributeError(f"module 'torch.npu' has no attribute '{name}'")


def _gen(device: DeviceLike) -> torch.Generator:
    return _generators()[_check_index(_index(device))]


def manual_seed(seed: int) -> None:
    """Seed the current device's generator."""
    _gen(None).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for g in _generators():
        g.manual_seed(int(seed))


def seed() -> None:
    _gen(None).seed()


def seed_all() -> None:
    for g in _generators():
        g.seed()


def initial_seed() -> int:
    return _gen(None).initial_seed()


def get_rng_state(device: DeviceLike = "npu") -> torch.Tensor:
    return _gen(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: DeviceLike = "npu") -> None:
    _gen(device).set_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [g.get_state() for g in _generators()]


def set_rng_state_all(new_states) -> None:
    for g, s in zip(_generators(), new_states):
        g.set_state(s)


# ---- Ascend C kernel counters -----------------------------------------------------------------

def kernel_counters() -> dict[str, dict[str, int]]:
    """Per-kernel counters of this process: launches, blocks, bytes GM->local and local->GM,
    vector element operations and cube MACs."""
    return dict(sorted(_C._kernel_counters().items()))


def reset_kernel_counters() -> None:
    _C._reset_kernel_counters()


# ---- HF32: the cube's reduced-precision float mode ----------------------------------------------

class _ConvBackend:
    """``torch.npu.conv``: ``allow_hf32`` (default True, as in torch_npu and as
    ``torch.backends.cudnn.allow_tf32`` on CUDA) lets float convolutions, forward and backward and
    the fused Conv-BN-ReLU, run the cube in HF32 mode. Set it to False for full float32."""

    @property
    def allow_hf32(self) -> bool:
        return bool(_C._conv_allow_hf32())

    @allow_hf32.setter
    def allow_hf32(self, value: bool) -> None:
        _C._set_conv_allow_hf32(bool(value))

    def __repr__(self) -> str:
        return f"torch.npu.conv(allow_hf32={self.allow_hf32})"


class _MatmulBackend:
    """``torch.npu.matmul``: ``allow_hf32`` (default False, as in torch_npu) is the matmul ops' HF32
    switch. Like ``torch.backends.cuda.matmul.allow_tf32`` it is a view of
    ``torch.get_float32_matmul_precision()``: True means "high", False "highest"."""

    @property
    def allow_hf32(self) -> bool:
        return torch.get_float32_matmul_precision() != "highest"

    @allow_hf32.setter
    def allow_hf32(self, value: bool) -> None:
        torch.set_float32_matmul_precision("high" if value else "highest")

    def __repr__(self) -> str:
        return f"torch.npu.matmul(allow_hf32={self.allow_hf32})"


conv = _ConvBackend()
matmul = _MatmulBackend()


# ---- legacy tensor types (torch.npu.FloatTensor ...), as torch.cuda's --------------------------------

class _LegacyTensorType(type):
    """The metaclass of ``torch.npu.FloatTensor`` and its kin: ``isinstance(t, torch.npu.FloatTensor)``
    is true for a strided float32 npu tensor, ``t.type(torch.npu.HalfTensor)`` converts, and calling
    the type builds a tensor on the current npu as the legacy constructors do: ``()`` empty, sizes
    (uninitialized), a sequence (its values), or an npu tensor of this type (itself)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return (isinstance(obj, torch.Tensor) and obj.device.type == "npu" and obj.dtype == cls.dtype
                and obj.layout == torch.strided)

    def __call__(cls, *args: Any, device: DeviceLike = None) -> torch.Tensor:
        dev = torch.device("npu", _index(device))
        if not args:
            return torch.empty(0, dtype=cls.dtype, device=dev)
        if len(args) == 1 and isinstance(args[0], torch.Tensor):
            if not isinstance(args[0], cls):
                raise TypeError(f"{cls.__name__}(): expected an npu tensor of dtype {cls.dtype}, got a "
                                f"{args[0].device.type} tensor of dtype {args[0].dtype}")
            return args[0]
        sizes = args[0] if len(args) == 1 and isinstance(args[0], torch.Size) else args
        if all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
            return torch.empty(tuple(sizes), dtype=cls.dtype, device=dev)
        if len(args) == 1:
            return torch.tensor(args[0], dtype=cls.dtype, device=dev)
        raise TypeError(f"{cls.__name__}(): expected sizes, a sequence or a tensor, got {args!r}")


def _legacy_type(name: str, dtype: torch.dtype) -> type:
    t = _LegacyTensorType(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False, "__module__": __name__})
    # Tensor.type(cls) reads the C-level type name, which for a Python class is __name__: the dotted
    # name lets it parse as "torch.npu.FloatTensor" (the string form Tensor.type() returns).
    t.__name__ = f"torch.npu.{name}"
    t.__qualname__ = name
    return t


for _name, _dtype in [("FloatTensor", torch.float32), ("DoubleTensor", torch.float64), ("HalfTensor", torch.float16),
                      ("BFloat16Tensor", torch.bfloat16), ("ByteTensor", torch.uint8), ("CharTensor", torch.int8),
                      ("ShortTensor", torch.int16), ("IntTensor", torch.int32), ("LongTensor", torch.int64),
                      ("BoolTensor", torch.bool)]:
    globals()[_name] = _legacy_type(_name, _dtype)
    __all__.append(_name)
del _name, _dtype
