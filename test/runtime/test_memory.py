"""Device memory: caching allocator stats, empty_cache, out-of-memory errors and recovery."""
import gc

import pytest
import torch

import torch_ops_nn  # noqa: F401
from conftest import run_python


def test_stats_return_to_baseline():
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
