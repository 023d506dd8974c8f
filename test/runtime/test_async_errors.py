"""Errors raised inside asynchronous stream work surface at the next sync; ASCEND_LAUNCH_BLOCKING."""
import pytest
import torch

import torch_ops_nn  # noqa: F401
from conftest import run_python
from torch_ops_nn import _C


def test_async_error_surfaces_at_sync_and_stream_recovers():
    _C._test_enqueue_failure("simulated kernel fault")
    with pytest.raises(RuntimeError, match="test_failing_task: simulated kernel fault"):
        torch.npu.synchronize()
    # The stream is usable afterwards and the error is not raised twice.
    x = torch.arange(4.0).to("npu")
    assert torch.equal(x.cpu(), torch.arange(4.0))
    torch.npu.synchronize()


def test_async_error_surfaces_at_device_to_host_copy():
    x = torch.ones(3).to("npu")
    _C._test_enqueue_failure("boom in a later task")
    with pytest.raises(RuntimeError, match="boom in a later task"):
        x.cpu()
    assert torch.equal(x.cpu(), torch.ones(3))


def test_launch_is_asynchronous():
    import time

    t0 = time.perf_counter()
    _C._test_enqueue_sleep(200)
    enqueue = time.perf_counter() - t0
    torch.npu.synchronize()
    total = time.perf_counter() - t0
    assert enqueue < 0.1 and total >= 0.19


def test_launch_blocking_reports_at_the_call():
    code = r"""
import time, torch, torch_ops_nn
from torch_ops_nn import _C
t0 = time.perf_counter(); _C._test_enqueue_sleep(100); print("waited", time.perf_counter() - t0 >= 0.09)
try:
    _C._test_enqueue_failure("fault here")
except RuntimeError as e:
    print("raised at call:", "fault here" in str(e))
"""
    r = run_python(code, {"ASCEND_LAUNCH_BLOCKING": "1"})
    assert r.returncode == 0, r.stderr
    assert "waited True" in r.stdout and "raised at call: True" in r.stdout
