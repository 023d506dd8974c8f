"""The ``hccl`` process-group backend: torch.distributed collectives on npu tensors.

``import torch`` (autoload) registers it for the ``npu`` device, so the code written for Ascend runs
unchanged: ``dist.init_process_group("hccl")`` (or no backend name: ``npu`` maps to ``hccl`` as ``cuda``
maps to ``nccl``), ``dist.all_reduce(npu_tensor)``, ``DistributedDataParallel(model.npu())``.

On the simulated NPU each process drives its own device, and the interconnect is modelled by the host:
a collective stages each npu tensor to host memory, moves the bytes between processes with an inner
Gloo group (data movement only), and does every reduction (SUM, AVG, PRODUCT, MIN, MAX: the ops
HCCL has) on the npu with the reduction kernels, as HCCL reduces on the AI cores. CPU tensors handed to
this group go straight to the inner Gloo group. Every collective has completed when it returns
(``async_op=True`` gives a finished Work).
"""
from __future__ import annotations

from datetime import timedelta

import torch
import torch.distributed as dist

# The reductions HCCL has, over dim 0 of the ranks' stacked copies, on the npu's kernels.
_REDUCERS = {
    "SUM": lambda s: s.sum(0, dtype=s.dtype),
    "PRODUCT": lambda s: s.prod(0, dtype=s.dtype),
    "MIN": lambda s: s.amin(0),
    "MAX": lambda s: s.amax(0),
    "AVG": lambda s: s.mean(0),
}


def _done(result):
    from torch._C._distributed_c10d import _create_work_from_future

    fut = torch.futures.Future()
    fut.set_result(result)
    return _create_work_from_future(fut)


def _check_op(op, dtype: torch.dtype | None = None) -> str:
    """The ReduceOp's name; a clear error for the ops HCCL lacks (before any data moves)."""
    name = next((n for n in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM")
                 if op == getattr(dist.ReduceOp, n)), str(op))
    if name not in _REDUCERS:
        raise ValueError(f"hccl: ReduceOp.{name} is not supported; supported: {', '.join(_REDUCERS)}")
    if name == "AVG" and dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"hccl: ReduceOp.AVG needs a floating-point tensor, got {dtype}")
    return name


def _reduce_rows(stacked: torch.Tensor, op) -> torch.Tensor:
    """Reduces [world, ...] over dim 0 on the npu."""
    return _REDUCERS[_check_op(op, stacked.dtype)](stacked)


def _host(tensors) -> list:
    """Host copies of npu tensors (the interconnect's staging)."""
    return [t.detach().to("cpu").contiguous() for t in tensors]


def _host_like(tensors) -> list:
    return [torch.empty(t.shape, dtype=t.dtype) for t in tensors]


def _copy_back(dsts, hosts) -> None:
    for d, h in zip(dsts, hosts):
        d.copy_(h)


def _on_npu(tensors) -> bool:
    kinds = {t.device.type for t in tensors}
    if len(kinds) > 1:
        raise ValueError(f"hccl: the tensors of one collective must be on one device type, got {sorted(kinds)}")
    return kinds == {"npu"}


class _BackendStub(torch._C._distributed_c10d.Backend):
    """The npu entry of ProcessGroupHCCL's backend table: properties only (the base class's
    supports_splitting recurses through its Python binding)."""

    @property
    def supports_splitting(self) -> bool:
        return False


class ProcessGroupHCCL(dist.ProcessGroup):
    """torch.distributed on npu tensors (see the module docstring)."""

    def __init__(self, store, rank: int, size: int, timeout: timedelta):
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(dist.PrefixStore("hccl/gloo", store), rank, size, timeout)
        self._stage: dict[str, torch.Tensor] = {}
        # The collectives are this class's methods; the C++ side still asks the group for its npu
        # backend's properties (init_process_group(device_id=...) reads supports_splitting): a stub
        # answers them.
        self._stub = _BackendStub(rank, size)
        self._register_backend(torch.device("npu"), dist.ProcessGroup.BackendType.CUSTOM, self._stub)

    def getBackendName(self) -> str:  # noqa: N802 (ProcessGroup's names)
        return "hccl"

    # A ProcessGroup keeps its name on its C++ backends; this one has none, so it keeps them itself
    # (DeviceMesh, FSDP and group lookups by name need them).
    def getGroupName(self) -> str:  # noqa: N802
        return getattr(self, "_hccl_group_name", "")

    def setGroupName(self, name: str) -> None:  # noqa: N802
        self._hccl_group_name = name

    def getGroupDesc(self) -> str:  # noqa: N802
        return getattr(self, "_hccl_group_desc", "")

    def setGroupDesc(self, desc: str) -> None:  # noqa: N802
        self._hccl_group_desc = desc

    @property
    def _world(self) -> int:
        return self.size()

    def _gather_all(self, t: torch.Tensor) -> torch.Tensor:
        """Every rank's copy of t, as one npu tensor [world, *t.shape]."""
        host = t.detach().to("cpu").reshape(-1).contiguous()
        out = torch.empty(self._world * host.numel(), dtype=host.dtype)
        self._gloo._allgather_base(out, host).wait()
        return out.view((self._world,) + tuple(t.shape)).to(t.device)

    def _exchange(self, chunks_host: torch.Tensor, device) -> torch.Tensor:
        """All-to-all of [world, ...] rows: row j goes to rank j; returns [world, ...] (row j from rank j)."""
        out = torch.empty_like(chunks_host)
        self._gloo.alltoall_base(out, chunks_host.contiguous(), [], [], dist.AllToAllOptions()).wait()
        return out.to(device)

    def _staging(self, slot: str, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """A pinned host buffer of `numel` elements, kept per slot and grown as needed: a fresh pageable
        buffer per collective cost more in page faults than the copies (44 MB: ~20 ms each)."""
        nbytes = numel * torch.empty((), dtype=dtype).element_size()
        buf = self._stage.get(slot)
        if buf is None or buf.numel() < nbytes:
            buf = torch.empty(max(nbytes, 1 << 16), dtype=torch.uint8, pin_memory=True)
            self._stage[slot] = buf
        return buf[:nbytes].view(dtype)

    def _allreduce_one(self, t: torch.Tensor, op) -> None:
        """t = op over the ranks' t, as a reduce-scatter then an all-gather (a ring's traffic): rank r
        receives every rank's r-th chunk, reduces it on the npu, and the reduced chunks are gathered."""
        world = self._world
        n = t.numel()
        if n < 4096 or world == 1:  # small: one gather of everything, one reduction
            t.copy_(_reduce_rows(self._gather_all(t), op))
            return
        chunk = -(-n // world)
        send = self._staging("send", world * chunk, t.dtype)
        send[:n].copy_(t.detach().reshape(-1))
        send[n:].zero_()
        recv = self._staging("recv", world * chunk, t.dtype)
        self._gloo.alltoall_base(recv, send, [], [], dist.AllToAllOptions()).wait()
        reduced = self._staging("reduced", chunk, t.dtype)
        reduced.copy_(_reduce_rows(recv.view(world, chunk).to(t.device), op))  # rank j's chunk r, reduced
        full = self._staging("full", world * chunk, t.dtype)
        self._gloo._allgather_base(full, reduced).wait()
        t.copy_(full[:n].view(t.shape))

    # ---- reductions
    def allreduce(self, tensors, opts):
        if not _on_npu(tensors):
            return self._gloo.allreduce(tensors, opts)
        for t in tensors:
            _check_op(opts.reduceOp, t.dtype)
        for t in tensors:
            self._allreduce_one(t, opts.reduceOp)
        return _done(tensors)

    def allreduce_coalesced(self, tensors, opts):
        if not _on_npu(tensors):
            return self._gloo.allreduce_coalesced(tensors, opts)
        ar = dist.AllreduceOptions()
        ar.reduceOp = opts.reduceOp
        return self.allreduce(tensors, ar)

    def reduce(self, tensors, opts):
        if not _on_npu(tensors):
            return self._gloo.reduce(tensors, opts)
        _check_op(opts.reduceOp, tensors[0].dtype if tensors else None)
        for t in tensors:
            host = t.detach().to("cpu").contiguous()
            outs = [[torch.empty_like(host) for _ in range(self._world)]] if self.rank() == opts.rootRank else []
            gopts = dist.GatherOptions()
            gopts.rootRank = opts.rootRank
            self._gloo.gather(outs, [host], gopts).wait()
            if self.rank() == opts.rootRank:
                t.copy_(_reduce_rows(torch.stack(outs[0]).to(t.device), opts.reduceOp))
        return _done(tensors)

    def reduce_scatter(self, output_tensors, input_tensors, opts):
        if not _on_npu(output_tensors):
            return self._gloo.reduce_scatter(output_tensors, input_tensors, opts)
        _check_op(opts.reduceOp, output_tensors[0].dtype if output_tensors else None)
        for out, ins in zip(output_tensors, input_tensors):
            rows = torch.stack([i.detach().to("cpu") for i in ins])
            out.copy_(_reduce_rows(self._exchange(rows, out.device), opts.reduceOp))
        return _done(output_tensors)

    def reduce_scatter_single(self, output, input, opts):  # noqa: A002 (ProcessGroup's names)
        if not _on_npu([output, input]):
            return self._gloo._reduce_scatter_base(output, input, opts)
        _check_op(opts.reduceOp, output.dtype)
        if input.numel() != output.numel() * self._world:
            raise ValueError(f"hccl: reduce_scatter_tensor input has {input.numel()} elements, expected "
                             f"world_size ({self._world}) x output ({output.numel()})")
        rows = input.detach().to("cpu").reshape(self._world, -1).contiguous()
        output.copy_(_reduce_rows(self._exchange(rows, output.device), opts.reduceOp).view(output.shape))
        return _done([output])

    # ---- data movement
    def broadcast(self, tensors, opts):
        if not _on_npu(tensors):
            return self._gloo.broadcast(tensors, opts)
        hosts = _host(tensors)
        self._gloo.broadcast(hosts, opts).wait()
        if self.rank() != opts.rootRank:
            _copy_back(tensors, hosts)
        return _done(tensors)

    def allgather(self, output_tensors, input_tensors, opts=None):
        if not _on_npu(input_tensors):
            return self._gloo.allgather(output_tensors, input_tensors, opts or dist.AllgatherOptions())
        for outs, t in zip(output_tensors, input_tensors):
            gathered = self._gather_all(t)
            for o, g in zip(outs, gathered.unbind(0)):
                o.copy_(g)
        return _done(output_tensors)

    def all_gather_single(self, output, input, opts=None):  # noqa: A002
        if not _on_npu([output, input]):
            return self._gloo._allgather_base(output, input, opts or dist.AllgatherOptions())
        if output.numel() != input.numel() * self._world:
            raise ValueError(f"hccl: all_gather_into_tensor output has {output.numel()} elements, expected "
                             f"world_size ({self._world}) x input ({input.numel()})")
        output.copy_(self._gather_all(input).view(output.shape))
        return _done([output])

    def gather(self, output_tensors, input_tensors, opts):
        if not _on_npu(input_tensors):
            return self._gloo.gather(output_tensors, input_tensors, opts)
        houts = [_host_like(outs) for outs in output_tensors]  # the root's lists (none elsewhere)
        self._gloo.gather(houts, _host(input_tensors), opts).wait()
        for outs, hs in zip(output_tensors, houts):
            _copy_back(outs, hs)
        return _done(output_tensors)

    def scatter(self, output_tensors, input_tensors, opts):
        if not _on_npu(output_tensors):
            return self._gloo.scatter(output_tensors, input_tensors, opts)
        houts = _host_like(output_tensors)
        self._gloo.scatter(houts, [_host(ins) for ins in input_tensors], opts).wait()
        _copy_back(output_tensors, houts)
        return _done(output_tensors)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        if not _on_npu(input_tensors):
            return self._gloo.alltoall(output_tensors, input_tensors, opts or dist.AllToAllOptions())
        houts = _host_like(output_tensors)
        self._gloo.alltoall(houts, _host(input_tensors), dist.AllToAllOptions()).wait()
        _copy_back(output_tensors, houts)
        return _done(output_tensors)

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):  # noqa: A002
        if not _on_npu([output, input]):
            return self._gloo.alltoall_base(output, input, output_split_sizes, input_split_sizes,
                                            opts or dist.AllToAllOptions())
        (hout,) = _host_like([output])
        self._gloo.alltoall_base(hout, _host([input])[0], output_split_sizes, input_split_sizes,
                                 dist.AllToAllOptions()).wait()
        output.copy_(hout)
        return _done([output])

    def send(self, tensors, dst, tag):
        if not _on_npu(tensors):
            return self._gloo.send(tensors, dst, tag)
        self._gloo.send(_host(tensors), dst, tag).wait()
        return _done(tensors)

    def recv(self, tensors, src, tag):
        if not _on_npu(tensors):
            return self._gloo.recv(tensors, src, tag)
        hosts = _host_like(tensors)
        self._gloo.recv(hosts, src, tag).wait()
        _copy_back(tensors, hosts)
        return _done(tensors)

    def barrier(self, opts=None):
        self._gloo.barrier(opts or dist.BarrierOptions()).wait()
        return _done(None)


# ---- functional collectives (DTensor, FSDP2's full_tensor, traced collectives): the dispatcher's
# _c10d_functional ops look their group's backend up by device type, which this Python group does
# not register; their npu kernels call the group's collectives directly (synchronously, so
# wait_tensor has nothing to wait for).
def _group(name) -> ProcessGroupHCCL:
    pg = dist.distributed_c10d._resolve_process_group(name)
    if not isinstance(pg, ProcessGroupHCCL):
        raise RuntimeError(f"hccl: functional collective on npu tensors over group {name!r}, which is not an hccl group")
    return pg


def _reduce_opts(cls, reduce_op: str):
    opts = cls()
    opts.reduceOp = getattr(dist.ReduceOp, reduce_op.upper())
    return opts


def _f_all_reduce(input, reduce_op, group_name):  # noqa: A002 (the ops' argument names)
    out = input.clone(memory_format=torch.contiguous_format)
    _group(group_name).allreduce([out], _reduce_opts(dist.AllreduceOptions, reduce_op))
    return out


def _f_all_reduce_(input, reduce_op, group_name):  # noqa: A002
    _group(group_name).allreduce([input], _reduce_opts(dist.AllreduceOptions, reduce_op))
    return input


def _f_all_gather_into_tensor(input, group_size, group_name):  # noqa: A002
    out = input.new_empty((input.shape[0] * group_size,) + tuple(input.shape[1:]) if input.dim() else (group_size,))
    _group(group_name).all_gather_single(out, input.contiguous())
    return out


def _f_reduce_scatter_tensor(input, reduce_op, group_size, group_name):  # noqa: A002
    if input.dim() == 0 or input.shape[0] % group_size:
        raise ValueError(f"hccl: reduce_scatter_tensor dim 0 ({tuple(input.shape)}) must divide by group_size {group_size}")
    out = input.new_empty((input.shape[0] // group_size,) + tuple(input.shape[1:]))
    _group(group_name).reduce_scatter_single(out, input.contiguous(),
                                             _reduce_opts(dist.ReduceScatterOptions, reduce_op))
    return out


def _f_all_to_all_single(input, output_split_sizes, input_split_sizes, group_name):  # noqa: A002
    rows = sum(output_split_sizes) if output_split_sizes else input.shape[0]
    out = input.new_empty((rows,) + tuple(input.shape[1:]))
    _group(group_name).all_to_all_single(out, input.contiguous(), list(output_split_sizes), list(input_split_sizes))
    return out


def _f_broadcast_(input, src, group_name):  # noqa: A002
    opts = dist.BroadcastOptions()
    opts.rootRank = src  # as the C++ functional op passes it
    _group(group_name).broadcast([input], opts)
    return input


def _f_broadcast(input, src, group_name):  # noqa: A002
    return _f_broadcast_(input.clone(memory_format=torch.contiguous_format), src, group_name)


_functional_lib = None


def _register_functional() -> None:
    global _functional_lib
    import torch.distributed._functional_collectives  # noqa: F401  (defines the ops)

    if _functional_lib is not None:
        return
    lib = torch.library.Library("_c10d_functional", "IMPL")
    for name, fn in (("all_reduce", _f_all_reduce), ("all_reduce_", _f_all_reduce_),
                     ("all_gather_into_tensor", _f_all_gather_into_tensor),
                     ("reduce_scatter_tensor", _f_reduce_scatter_tensor),
                     ("all_to_all_single", _f_all_to_all_single), ("broadcast", _f_broadcast),
                     ("broadcast_", _f_broadcast_)):
        lib.impl(name, fn, "PrivateUse1")
    _functional_lib = lib


def _create(store, rank: int, size: int, timeout: timedelta) -> ProcessGroupHCCL:
    return ProcessGroupHCCL(store, rank, size, timeout)


def is_hccl_available() -> bool:
    """As torch_npu's ``torch.distributed.is_hccl_available``: the ``hccl`` backend is registered."""
    return dist.is_available() and "hccl" in dist.Backend.backend_list


def register() -> None:
    """Registers ``hccl`` for the npu device (idempotent; called on import)."""
    if not dist.is_available():
        return
    if "hccl" not in dist.Backend.backend_list:
        dist.Backend.register_backend("hccl", _create, devices=["npu"])
    dist.is_hccl_available = is_hccl_available
    _register_functional()
