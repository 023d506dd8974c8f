"""Test session set-up: two simulated devices (so cross-device paths are exercised), before torch loads."""
import os
import subprocess
import sys

os.environ.setdefault("TORCH_OPS_NN_DEVICE_COUNT", "2")
# Poison each block's local memory before it runs, so a kernel reading UB it never wrote fails the
# tests (NaN) and stays deterministic across host threads (off by default for speed: ascendc_core.cpp).
os.environ.setdefault("TORCH_OPS_NN_POISON_UB", "1")

import pytest  # noqa: E402


def assert_matches_cpu_with_grads(fn, *leaves, atol=1e-4, rtol=1e-4):
    """fn(*leaves) on npu equals fn on the CPU, and so do the gradients of every leaf (None leaves are
    passed through) for the same random output gradient."""
    import torch

    cpu = [t.detach().clone().requires_grad_() if t is not None else None for t in leaves]
    npu = [t.detach().npu().requires_grad_() if t is not None else None for t in leaves]
    want, got = fn(*cpu), fn(*npu)
    assert got.shape == want.shape
    torch.testing.assert_close(got.detach().cpu(), want.detach(), atol=atol, rtol=rtol)
    g = torch.randn(want.shape)
    want.backward(g)
    got.backward(g.npu())
    for n, c in zip(npu, cpu):
        if c is not None:
            torch.testing.assert_close(n.grad.cpu(), c.grad, atol=atol, rtol=rtol)


def run_python(code: str, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter (for env-var driven behaviour and autoload)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env,
                          timeout=timeout)


@pytest.fixture
def fallback_error(monkeypatch):
    """Native-coverage tests: any op without an npu kernel raises instead of running on the CPU."""
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "error")


@pytest.fixture
def full_fp32_convs():
    """Convolutions in full float32 (torch.npu.conv.allow_hf32 = False) for the test, then back."""
    import torch

    old = torch.npu.conv.allow_hf32
    torch.npu.conv.allow_hf32 = False
    yield
    torch.npu.conv.allow_hf32 = old
