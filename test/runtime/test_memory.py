"""Device memory: caching allocator stats, empty_cache, out-of-memory errors and recovery."""
import gc

import pytest
import torch

import torch_ops_nn  # noqa: F401
from conftest import run_python


def test_stats_return_to_baseline():
    gc.collect()  # earlier tests' garbage (tensors held by cycles, e.g. caught exceptions) must not free meanwhile
    torch.npu.synchronize()
    base = torch.npu.memory_allocated()
    xs = [torch.empty(n, device="npu") for n in (1, 100, 10_000, 1_000_000, 3_000_000)]
    assert torch.npu.memory_allocated() >= base + 4 * (1 + 100 + 10_000 + 1_000_000 + 3_000_000)
    peak = torch.npu.max_memory_allocated()
    assert peak >= torch.npu.memory_allocated()
    stats = torch.npu.memory_stats()
    assert stats["allocation.all.current"] >= 5
    assert stats["allocated_bytes.small_pool.current"] > 0 and stats["allocated_bytes.large_pool.current"] > 0
    del xs
    gc.collect()
    assert torch.npu.memory_allocated() == base
    assert torch.npu.memory_reserved() > 0
    torch.npu.reset_peak_memory_stats()
    assert torch.npu.max_memory_allocated() == base
    torch.npu.empty_cache()
    assert torch.npu.memory_reserved() <= torch.npu.memory_stats()["reserved_bytes.all.peak"]


def test_cached_blocks_are_reused():
    torch.npu.synchronize()
    x = torch.empty(5_000_000, device="npu")
    ptr = x.data_ptr()
    del x
    segments_before = torch.npu.memory_stats()["segment.all.allocated"]
    y = torch.empty(5_000_000, device="npu")
    assert y.data_ptr() == ptr  # same block from the cache, no new segment
    assert torch.npu.memory_stats()["segment.all.allocated"] == segments_before


def test_mem_get_info():
    free, total = torch.npu.mem_get_info()
    assert total == torch.npu.get_device_properties().total_memory
    assert 0 <= free <= total


def test_out_of_memory_message_and_recovery():
    code = r"""
import torch, torch_ops_nn
keep = torch.empty(16 * 1024 * 1024, dtype=torch.uint8, device="npu")   # 16 MiB of 64
try:
    torch.empty(100 * 1024 * 1024, dtype=torch.uint8, device="npu")
except torch.OutOfMemoryError as e:
    print("OOM:", e)
y = torch.ones(1000).to("npu")          # still usable
print("after:", y.cpu().sum().item() if False else y.cpu()[0].item(), torch.npu.memory_stats()["num_ooms"])
"""
    r = run_python(code, {"TORCH_OPS_NN_DEVICE_MEMORY": "64MB"})
    assert r.returncode == 0, r.stderr
    assert "OOM: npu out of memory: tried to allocate 100.00 MiB (104857600 bytes) on npu:0" in r.stdout
    assert "free 48.00 MiB" in r.stdout and "of total 64.00 MiB (67108864 bytes)" in r.stdout
    assert "after: 1.0 1" in r.stdout


def test_oom_inside_python_process_is_recoverable():
    huge = 10 * 1024 ** 4  # 10 TiB on a 64 GiB device
    with pytest.raises(torch.OutOfMemoryError, match=r"tried to allocate 10\.00 TiB .* of total 64\.00 GiB"):
        torch.empty(huge, dtype=torch.uint8, device="npu")
    assert torch.equal(torch.ones(3).to("npu").cpu(), torch.ones(3))


def test_bad_memory_env_is_reported():
    r = run_python("import torch, torch_ops_nn; print(torch.npu.device_count()); torch.zeros(1, device='npu')",
                   {"TORCH_OPS_NN_DEVICE_MEMORY": "12 parsecs"})
    assert r.returncode != 0
    assert "TORCH_OPS_NN_DEVICE_MEMORY" in r.stderr


def test_queued_work_does_not_hold_device_memory():
    """Device memory is stream-ordered: a temporary freed while its copy/kernel is still queued goes
    back to the cache at once and the next queued op reuses it (no new segments while the stream is
    busy)."""
    from torch_ops_nn import _C
    x = torch.randn(64, 64, 32, device="npu")
    y = x.permute(2, 0, 1).contiguous()  # warm the cache with one block of each size
    del y
    torch.npu.synchronize()
    allocated, segments = torch.npu.memory_allocated(), torch.npu.memory_stats()["segment.all.allocated"]
    _C._test_enqueue_sleep(200)  # the stream is busy: everything below stays queued for a while
    for _ in range(40):
        y = x.permute(2, 0, 1).contiguous() * 2  # a strided copy and a kernel, each a fresh temporary
    assert torch.npu.memory_allocated() - allocated <= 2 * x.nbytes
    assert torch.npu.memory_stats()["segment.all.allocated"] - segments <= 1
    torch.npu.synchronize()
    assert torch.equal(y.cpu(), x.cpu().permute(2, 0, 1) * 2)


def test_host_waits_when_far_ahead_of_the_stream():
    """The launch queue is bounded (1024 tasks, like a device's): a loop that never synchronizes
    blocks instead of queueing without limit, and every result is still right."""
    import time
    from torch_ops_nn import _C
    acc = torch.zeros(1, device="npu")
    torch.npu.synchronize()
    t0 = time.perf_counter()
    _C._test_enqueue_sleep(500)
    for _ in range(3000):
        acc.add_(1)
    # The loop cannot have finished before the stream got through the sleep and ~2000 adds.
    assert time.perf_counter() - t0 >= 0.5
    torch.npu.synchronize()
    assert acc.item() == 3000


def test_memory_summary_reports_the_allocator():
    torch.npu.empty_cache()
    torch.npu.reset_peak_memory_stats()
    x = torch.empty(1024, 1024, device="npu")  # 4 MiB
    s = torch.npu.memory_summary()
    row = next(line for line in s.splitlines() if line.startswith("Allocated memory"))
    assert "4.0 MiB" in row.split("|")[1], s
    assert "device ID 0" in s and "from large pool" in s
    assert "from large pool" not in torch.npu.memory_summary(abbreviated=True)
    del x
    row = next(line for line in torch.npu.memory_summary().splitlines() if line.startswith("Allocated memory"))
    assert "4.0 MiB" not in row.split("|")[1]


def test_per_process_memory_fraction():
    cap = torch.npu.mem_get_info()[1]
    assert torch.npu.get_per_process_memory_fraction() == 1.0
    torch.npu.empty_cache()
    torch.npu.set_per_process_memory_fraction(0.01)
    try:
        assert torch.npu.get_per_process_memory_fraction() == 0.01
        with pytest.raises(torch.OutOfMemoryError, match=r"set_per_process_memory_fraction\(0.01\)"):
            torch.empty(int(cap * 0.02) // 4, device="npu")
        small = torch.ones(int(cap * 0.004) // 4, device="npu")  # within the cap: fine
        assert small[-1].item() == 1.0
        del small
    finally:
        torch.npu.set_per_process_memory_fraction(1.0)
    big = torch.empty(int(cap * 0.02) // 4, device="npu")  # the cap is gone
    del big
    with pytest.raises(ValueError, match=r"Invalid fraction value: 1.5. Allowed range: 0~1"):
        torch.npu.set_per_process_memory_fraction(1.5)


def _blocks_by_address():
    return {b["address"]: (seg, b) for seg in torch.npu.memory_snapshot() for b in seg["blocks"]}


def test_memory_snapshot_lists_segments_and_blocks():
    torch.npu.synchronize()
    x = torch.empty(3_000_000, device="npu")  # 12 MB: a large-pool segment of its own
    y = torch.empty(1000, device="npu")       # small pool
    snap = torch.npu.memory_snapshot()
    assert snap == torch.npu.memory.memory_snapshot()
    # The segments account for every reserved byte, their blocks tile each segment exactly.
    assert sum(s["total_size"] for s in snap) == torch.npu.memory_reserved()
    assert sum(s["allocated_size"] for s in snap) == torch.npu.memory_allocated()
    for seg in snap:
        addr = seg["address"]
        for b in seg["blocks"]:
            assert b["address"] == addr
            addr += b["size"]
        assert addr == seg["address"] + seg["total_size"]
        assert seg["segment_type"] in ("small", "large") and seg["device"] == 0
    blocks = _blocks_by_address()
    seg, b = blocks[x.data_ptr()]
    assert b["state"] == "active_allocated" and b["requested_size"] == 12_000_000 and seg["segment_type"] == "large"
    seg, b = blocks[y.data_ptr()]
    assert b["state"] == "active_allocated" and b["requested_size"] == 4000 and seg["segment_type"] == "small"
    ptr = x.data_ptr()
    del x
    torch.npu.synchronize()
    _, b = _blocks_by_address()[ptr]
    assert b["state"] == "inactive" and b["requested_size"] == 0
    nested = torch.npu.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == torch.npu.memory_allocated()


def test_memory_history_records_allocator_events(tmp_path):
    import pickle

    torch.npu.synchronize()
    torch.npu.empty_cache()  # so x needs a new segment
    torch.npu.memory._record_memory_history(max_entries=100_000, clear_history=True)
    try:
        x = torch.empty(9_250_000, device="npu")
        ptr = x.data_ptr()
        del x
        torch.npu.empty_cache()
        with pytest.raises(torch.npu.OutOfMemoryError):
            torch.empty(torch.npu.mem_get_info()[1], device="npu")
    finally:
        torch.npu.memory._record_memory_history(enabled=None)
    z = torch.empty(2_000_000, device="npu")  # not recorded: history stopped
    trace = torch.npu.memory._snapshot()["device_traces"][0]
    actions = [(e["action"], e["addr"]) for e in trace]
    i = actions.index(("alloc", ptr))
    assert ("free_requested", ptr) in actions[i:] and ("free_completed", ptr) in actions[i:]
    assert any(a == "segment_alloc" for a, _ in actions[:i + 1]) and any(a == "segment_free" for a, _ in actions[i:])
    assert trace[-1]["action"] == "oom" and trace[-1]["size"] == 4 * torch.npu.mem_get_info()[1]
    assert all(trace[k]["time_us"] <= trace[k + 1]["time_us"] for k in range(len(trace) - 1))
    assert ("alloc", z.data_ptr()) not in actions[i + 1:]
    path = tmp_path / "snap.pickle"
    torch.npu.memory._dump_snapshot(str(path))
    loaded = pickle.loads(path.read_bytes())
    assert loaded["device_traces"][0] == trace and "segments" in loaded
    # A ring of the newest events.
    torch.npu.memory._record_memory_history(max_entries=3, clear_history=True)
    for _ in range(5):
        torch.empty(10, device="npu")
    torch.npu.memory._record_memory_history(enabled=None)
    assert len(torch.npu.memory._snapshot()["device_traces"][0]) == 3
    torch.npu.memory._record_memory_history(enabled=None, clear_history=True)
    assert torch.npu.memory._snapshot()["device_traces"][0] == []
    with pytest.raises(ValueError, match="max_entries must be a positive int"):
        torch.npu.memory._record_memory_history(max_entries=0)


def test_caching_allocator_alloc_and_delete():
    torch.npu.synchronize()
    base = torch.npu.memory_allocated()
    ptr = torch.npu.caching_allocator_alloc(1 << 20)
    assert ptr != 0 and torch.npu.memory_allocated() >= base + (1 << 20)
    assert _blocks_by_address()[ptr][1]["state"] == "active_allocated"
    torch.npu.caching_allocator_delete(ptr)
    assert torch.npu.memory_allocated() == base
    with pytest.raises(ValueError, match="was not allocated by caching_allocator_alloc"):
        torch.npu.caching_allocator_delete(ptr)
    with pytest.raises(ValueError, match="non-negative int"):
        torch.npu.caching_allocator_alloc(-1)


@pytest.mark.parametrize("env,marked", [({}, False), ({"TORCH_OPS_NN_HUGEPAGES": "0"}, False),
                                        ({"TORCH_OPS_NN_HUGEPAGES": "1"}, True)])
def test_hugepage_marking_of_device_segments(env, marked):
    # Off by default: a huge page's first touch can cost ~9 ms in a VM (README, environment variables).
    code = r"""
import torch, torch_ops_nn
x = torch.ones(4_000_000, device="npu")
p = x.data_ptr()
flags = None
for line in open("/proc/self/smaps"):
    head = line.split()
    if "-" in head[0] and len(head[0].split("-")) == 2 and all(c in "0123456789abcdef-" for c in head[0]):
        lo, hi = (int(v, 16) for v in head[0].split("-"))
        inside = lo <= p < hi
    elif line.startswith("VmFlags:") and inside:
        flags = line.split()[1:]
print("hg" in flags, x.sum().item())
"""
    r = run_python(code, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(marked), "4000000.0"]


def test_record_stream_keeps_a_block_until_the_other_stream_has_run():
    # Tensor.record_stream(s) as on CUDA: a tensor allocated on the current stream and read on `s` is
    # not handed out again after `del` until `s`'s queued work has run. Without it the block is reused
    # at once (same stream), which would be a race for the work still queued on `s`.
    s = torch.npu.Stream()
    a = torch.randn(1024, 1024, device="npu")
    torch.npu.synchronize()
    reused = {}
    for record in (False, True):
        x = torch.randn(1 << 20, device="npu")
        ptr = x.data_ptr()
        s.wait_stream(torch.npu.current_stream())
        with torch.npu.stream(s):
            for _ in range(8):
                a @ a  # keeps s busy
            y = x * 2  # s reads x
        if record:
            x.record_stream(s)
        del x
        z = torch.empty(1 << 20, device="npu")
        busy = not s.query()
        reused[record] = (z.data_ptr() == ptr, busy)
        torch.npu.synchronize()
        del y, z
    assert reused[False] == (True, True) or not reused[False][1]  # reused at once (if s was still busy)
    if reused[True][1]:
        assert reused[True][0] is False
    # afterwards the block is free again, and the values on s were right
    with torch.npu.stream(s):
        x = torch.ones(8, device="npu")
        x.record_stream(s)
    torch.npu.synchronize()
    assert x.sum().item() == 8


def test_record_stream_rejects_other_devices():
    x = torch.ones(4, device="npu:0")
    with pytest.raises(RuntimeError, match="record_stream"):
        x.record_stream(torch.npu.Stream(device="npu:1"))
