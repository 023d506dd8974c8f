"""The explicit CPU fallback: warns once per op, errors under TORCH_OPS_NN_FALLBACK=error, is listed."""
import warnings

import pytest
import torch

import torch_ops_nn

# An op we will never give a native kernel: it only exists to exercise the fallback.
OP = torch.special.bessel_j0
NAME = "aten::special_bessel_j0.out"  # the structured op falls back through its out= variant


def test_fallback_warns_once_and_computes(monkeypatch):
    monkeypatch.delenv("TORCH_OPS_NN_FALLBACK", raising=False)
    x = torch.linspace(0, 5, 11)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = OP(x.to("npu"))
        y2 = OP(x.to("npu"))
    msgs = [str(m.message) for m in w if "no native npu kernel" in str(m.message)]
    assert len(msgs) <= 1  # once per op per process (0 if an earlier test already triggered it)
    assert y.device.type == "npu"
    assert torch.allclose(y.cpu(), OP(x)) and torch.allclose(y2.cpu(), OP(x))
    assert NAME in torch_ops_nn.fallback_ops()


def test_fallback_warning_text():
    from conftest import run_python

    r = run_python("import torch, torch_ops_nn; torch.special.bessel_j0(torch.ones(2).to('npu')); "
                   "torch.special.bessel_j0(torch.ones(2).to('npu')); print(torch_ops_nn.fallback_ops())")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("no native npu kernel") == 1
    assert f"'{NAME}'" in r.stderr and "TORCH_OPS_NN_FALLBACK=error" in r.stderr
    assert NAME in r.stdout


def test_fallback_error_mode(fallback_error):
    with pytest.raises(NotImplementedError, match=f"'{NAME}' has no native npu kernel"):
        OP(torch.ones(2).to("npu"))
