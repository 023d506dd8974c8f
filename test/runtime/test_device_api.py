"""torch.npu device API, device guard, streams, events and RNG."""
import pytest
import torch

import torch_ops_nn  # noqa: F401


def test_registration():
    assert torch._C._get_privateuse1_backend_name() == "npu"
    assert torch.npu.is_available()
    assert torch.npu.device_count() == 2
    x = torch.zeros(2, device="npu")
    assert x.device == torch.device("npu", 0) and x.is_npu
    assert torch.zeros(2).npu().is_npu
    m = torch.nn.Linear(2, 2).npu()
    assert m.weight.device.type == "npu"
    assert torch.accelerator.current_accelerator().type == "npu"


def test_device_properties():
    p = torch.npu.get_device_properties(0)
    assert p.name == "Ascend910B2" and torch.npu.get_device_name() == "Ascend910B2"
    assert (p.cube_core_num, p.vector_core_num) == (24, 48)
    assert (p.ub_size, p.l1_size, p.l0a_size, p.l0b_size, p.l0c_size) == (
        192 * 1024, 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024)
    assert p.total_memory == 64 * 1024 ** 3
    assert torch.npu.get_device_capability() == (22, 1)
    with pytest.raises(ValueError, match="invalid npu device index 5: 2 device"):
        torch.npu.get_device_properties(5)


def test_set_device_and_context_manager():
    assert torch.npu.current_device() == 0
    with torch.npu.device(1):
        assert torch.npu.current_device() == 1
        assert torch.empty(3, device="npu").device.index == 1
    assert torch.npu.current_device() == 0
    torch.npu.set_device("npu:1")
    try:
        assert torch.npu.current_device() == 1
    finally:
        torch.npu.set_device(0)
    with pytest.raises(ValueError, match="invalid npu device index 7"):
        torch.npu.set_device(7)
    with pytest.raises((RuntimeError, ValueError), match="invalid npu device index 3"):
        torch.empty(1, device="npu:3")


def test_streams_are_ordered_and_switchable():
    s = torch.npu.Stream()
    assert s.device_index == 0 and s.stream_id != 0
    assert torch.npu.current_stream().stream_id == 0
    with torch.npu.stream(s):
        assert torch.npu.current_stream().stream_id == s.stream_id
        x = torch.arange(1000, dtype=torch.float32).to("npu")
        y = x.to(torch.float64)
    s.synchronize()
    assert s.query()
    assert torch.npu.current_stream().stream_id == 0
    assert torch.equal(y.cpu(), torch.arange(1000, dtype=torch.float64))
    # torch.Stream / torch.accelerator reach the same streams through the device guard.
    ts = torch.Stream(device="npu")
    assert ts.device_type == torch.device("npu").type or ts.device.type == "npu"


def test_stream_fifo_order():
    from torch_ops_nn import _C

    s = torch.npu.Stream()
    with torch.npu.stream(s):
        _C._test_enqueue_sleep(30)  # the copy below must wait behind it
        x = torch.ones(4, device="npu")
        x.fill_(5)
    assert not s.query() or True  # may already be done on a slow machine; the order is what matters
    s.synchronize()
    assert torch.equal(x.cpu(), torch.full((4,), 5.0))


def test_wait_stream_orders_across_streams():
    from torch_ops_nn import _C

    s1, s2 = torch.npu.Stream(), torch.npu.Stream()
    with torch.npu.stream(s1):
        x = torch.zeros(1000, device="npu")
        _C._test_enqueue_sleep(20)
        x.fill_(3)
    s2.wait_stream(s1)
    with torch.npu.stream(s2):
        y = x.to(torch.float64)
    s2.synchronize()
    assert torch.equal(y.cpu(), torch.full((1000,), 3.0, dtype=torch.float64))


def test_event_timing_and_query():
    from torch_ops_nn import _C

    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    _C._test_enqueue_sleep(25)
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert 20 <= ms < 2000
    # torch.Event works too
    a, b = torch.Event("npu", enable_timing=True), torch.Event("npu", enable_timing=True)
    a.record()
    _C._test_enqueue_sleep(5)
    b.record()
    b.synchronize()
    assert a.elapsed_time(b) >= 4


def test_elapsed_time_needs_timing_and_records():
    a, b = torch.npu.Event(), torch.npu.Event()
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises((RuntimeError, ValueError), match="enable_timing"):
        a.elapsed_time(b)
    c, d = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    with pytest.raises((RuntimeError, ValueError), match="recorded"):
        c.elapsed_time(d)


def test_event_wait_on_other_device_stream():
    e = torch.npu.Event()
    x = torch.arange(10, dtype=torch.float32, device="npu:0")
    e.record()
    with torch.npu.device(1):
        e.wait(torch.npu.current_stream(1))
        y = x.to("npu:1")
    assert torch.equal(y.cpu(), torch.arange(10, dtype=torch.float32))


def test_rng_api():
    torch.npu.manual_seed(123)
    assert torch.npu.initial_seed() == 123
    state = torch.npu.get_rng_state()
    assert state.dtype == torch.uint8 and state.numel() == 16
    torch.npu.manual_seed(7)
    torch.npu.set_rng_state(state)
    assert torch.npu.initial_seed() == 123
    torch.manual_seed(99)  # torch.manual_seed seeds npu generators too
    assert torch.npu.initial_seed() == 99
    assert all(g.initial_seed() == 99 for g in torch.npu.default_generators)
    g = torch.Generator(device="npu")
    g.manual_seed(5)
    assert g.initial_seed() == 5 and g.device.type == "npu"
    torch.npu.seed()
    assert len(torch.npu.get_rng_state_all()) == 2
    with pytest.raises(RuntimeError, match="16 bytes"):
        torch.npu.set_rng_state(torch.zeros(3, dtype=torch.uint8))


@pytest.mark.parametrize("make", [
    lambda: torch.randn(3, 4),
    lambda: torch.randn(3000),  # summarized with "..."
    lambda: torch.randn(2, 3).half(),
    lambda: torch.randn(4, 2).to(torch.bfloat16).t(),
    lambda: torch.randn(2, 3) > 0,
    lambda: torch.arange(6).view(2, 3),
    lambda: torch.ones(2, dtype=torch.float64),
    lambda: torch.empty(0, 3),
    lambda: torch.tensor(3.5),
    lambda: torch.tensor([1.0, float("nan"), float("inf"), -1e-8]),
    lambda: torch.randn(1, 3, 2, 2).to(memory_format=torch.channels_last),
], ids=["float", "summarized", "half", "bf16_t", "bool", "int64", "float64", "empty", "scalar", "nonfinite",
        "channels_last"])
def test_repr_matches_cpu_without_fallback(make, fallback_error):
    """print(npu_tensor) formats the same numbers as the CPU, names the device, and needs no CPU
    fallback op (PyTorch's formatter computes in float64 with ops we do not run natively)."""
    import warnings
    x = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = repr(x.to("npu"))
    expected = repr(x)
    assert "device='npu:0'" in s
    assert _same_numbers(s, expected), (s, expected)


def _same_numbers(a: str, b: str) -> bool:
    import re
    num = re.compile(r"-?(?:\d+\.?\d*(?:e[+-]?\d+)?|nan|inf)")
    return num.findall(a.replace("npu:0", "")) == num.findall(b)


def test_repr_keeps_grad_fn():
    w = torch.randn(2, 2, requires_grad=True)
    s = repr(w.to("npu") * 2)
    assert "grad_fn=<MulBackward0>" in s and "device='npu:0'" in s


def test_stream_context_and_cuda_style_names():
    s = torch.npu.Stream()
    ctx = torch.npu.StreamContext(s)
    assert isinstance(torch.npu.stream(s), torch.npu.StreamContext)
    with ctx as entered:
        assert entered is s and torch.npu.current_stream().stream_id == s.stream_id
    assert torch.npu.current_stream().stream_id == 0
    with torch.npu.StreamContext(None) as none:
        assert none is None and torch.npu.current_stream().stream_id == 0
    assert torch.npu.OutOfMemoryError is torch.OutOfMemoryError
    from torch.npu.memory import memory_allocated  # a submodule, as torch.cuda.memory
    assert memory_allocated() == torch.npu.memory_allocated()


def test_npu_amp_autocast_and_grad_scaler_match_torch_amp():
    # torch.npu.amp is the torch.cuda.amp spelling CUDA code uses.
    lin = torch.nn.Linear(16, 8).to("npu")
    x = torch.randn(4, 16, device="npu")
    with torch.npu.amp.autocast(dtype=torch.bfloat16):
        y = lin(x)
    assert y.dtype == torch.bfloat16
    with torch.npu.amp.autocast(enabled=False):
        assert lin(x).dtype == torch.float32
    with torch.autocast("npu", dtype=torch.bfloat16):
        ref = lin(x)
    assert torch.equal(y.cpu(), ref.cpu())
    scaler = torch.npu.amp.GradScaler(init_scale=1024.0)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    w0 = lin.weight.detach().clone()
    scaler.scale(lin(x).float().square().mean()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0 and not torch.equal(lin.weight.detach().cpu(), w0.cpu())


def test_sync_debug_mode_reports_host_waits():
    import warnings

    x = torch.arange(6, dtype=torch.float32, device="npu")
    assert torch.npu.get_sync_debug_mode() == 0
    try:
        torch.npu.set_sync_debug_mode("warn")
        assert torch.npu.get_sync_debug_mode() == 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = x * 2 + 1                                         # queued work: no wait
            x.to("npu", non_blocking=True)
            torch.npu.synchronize()                               # explicit: not reported
            assert not caught, [str(w.message) for w in caught]
            assert y[1].item() == 3.0                             # .item() waits
            assert any("synchronizing npu operation" in str(w.message) for w in caught)
            caught.clear()
            torch.ones(3).to("npu")                               # a blocking copy from host memory
            assert any("non_blocking=False" in str(w.message) for w in caught)
        torch.npu.set_sync_debug_mode(2)
        with pytest.raises(RuntimeError, match="called a synchronizing npu operation"):
            x.cpu()
        z = x + 1                                                 # the device keeps working
        torch.npu.set_sync_debug_mode("default")
        assert z.cpu().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    finally:
        torch.npu.set_sync_debug_mode(0)
    with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`"):
        torch.npu.set_sync_debug_mode("loud")
    with pytest.raises(ValueError, match=r"expected 0 \(default\), 1 \(warn\) or 2 \(error\), got 3"):
        torch.npu.set_sync_debug_mode(3)


def test_peer_access_memory_used_and_capture_queries():
    # Two simulated devices share the host's memory: each can read the other (not itself, as in CUDA),
    # and a copy between them needs no staging.
    assert torch.npu.can_device_access_peer(0, 1) and torch.npu.can_device_access_peer("npu:1", torch.device("npu:0"))
    assert not torch.npu.can_device_access_peer(1, 1)
    with pytest.raises(ValueError, match="invalid npu device index 5: 2 device"):
        torch.npu.can_device_access_peer(0, 5)
    x = torch.arange(6.0, device="npu:0")
    assert torch.equal(x.to("npu:1").cpu(), torch.arange(6.0))
    # device_memory_used: what the allocator holds on the device (nvidia-smi's "used").
    torch.npu.empty_cache()
    free, total = torch.npu.mem_get_info(0)
    before = torch.npu.device_memory_used(0)
    assert before == total - free == torch.npu.memory_reserved(0)
    y = torch.empty(8 << 20, dtype=torch.uint8, device="npu:0")  # no cached block holds it: a new segment
    assert torch.npu.device_memory_used(0) >= before + y.numel()
    del y
    assert torch.npu.is_current_stream_capturing() is False


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_activation_checkpoint_replays_dropout(use_reentrant):
    # torch.utils.checkpoint saves the device RNG state only when the device module says it is
    # initialized (torch.npu._initialized, torch.cuda's name); without it the recomputation drew a
    # different dropout mask and the gradients were silently wrong while the outputs matched.
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Dropout(0.5), torch.nn.ReLU(),
                            torch.nn.Linear(32, 4)).npu()
    x = torch.randn(8, 16, device="npu", requires_grad=True)
    torch.manual_seed(1)
    out = checkpoint(m, x, use_reentrant=use_reentrant)
    out.sum().backward()
    g_ckpt, x.grad = x.grad.clone(), None
    torch.manual_seed(1)
    ref = m(x)
    ref.sum().backward()
    torch.testing.assert_close(out.cpu(), ref.cpu())
    torch.testing.assert_close(g_ckpt.cpu(), x.grad.cpu())
    # and the comparison sees the mask: another seed's mask gives another gradient
    x.grad = None
    torch.manual_seed(2)
    m(x).sum().backward()
    assert not torch.allclose(g_ckpt.cpu(), x.grad.cpu())


def test_legacy_tensor_types_as_torch_cuda_has():
    """torch.npu.FloatTensor & co.: isinstance, Tensor.type(cls) and the legacy constructors."""
    x = torch.arange(6.0).reshape(2, 3)
    d = x.to("npu")
    assert isinstance(d, torch.npu.FloatTensor) and not isinstance(x, torch.npu.FloatTensor)
    assert not isinstance(d.half(), torch.npu.FloatTensor) and isinstance(d.half(), torch.npu.HalfTensor)
    h = x.type(torch.npu.HalfTensor)
    assert h.device.type == "npu" and h.dtype == torch.float16 and h.type() == "torch.npu.HalfTensor"
    assert torch.equal(d.type(torch.npu.LongTensor).cpu(), x.long())
    assert torch.npu.LongTensor([1, 2, 3]).cpu().tolist() == [1, 2, 3]
    e = torch.npu.IntTensor(2, 5)
    assert e.shape == (2, 5) and e.dtype == torch.int32 and e.device.type == "npu"
    assert torch.npu.FloatTensor().shape == (0,) and torch.npu.BoolTensor(torch.Size([4])).dtype == torch.bool
    assert torch.npu.FloatTensor(d) is d
    with pytest.raises(TypeError, match="expected an npu tensor of dtype torch.float32, got a cpu tensor"):
        torch.npu.FloatTensor(x)


def test_arch_list_allocator_backend_and_ipc_collect():
    assert torch.npu.get_arch_list() == [torch.npu.get_device_name(0)]
    assert torch.npu.get_allocator_backend() == "native"
    assert torch.npu.ipc_collect() is None
