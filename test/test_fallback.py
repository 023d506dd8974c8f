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


# ---- operands of a dtype a kernel lacks (float64, complex, integers in float-only ops): csrc/core/dtype_gate.h
def test_float64_operands_take_the_fallback(monkeypatch):
    monkeypatch.delenv("TORCH_OPS_NN_FALLBACK", raising=False)
    x = torch.randn(4, 6, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (torch.sigmoid, torch.nn.functional.gelu, lambda t: torch.where(t > 0, t, 0.5),
                   lambda t: torch.nn.functional.layer_norm(t, (6,)), lambda t: t.clamp(-0.5, 0.5),
                   lambda t: torch.logsumexp(t, 1), lambda t: torch.nn.functional.max_pool2d(t[None], 2)):
            got = fn(x.to("npu"))
            assert got.device.type == "npu" and got.dtype == torch.float64
            torch.testing.assert_close(got.cpu(), fn(x), rtol=0, atol=0)
    assert "aten::sigmoid" in torch_ops_nn.fallback_ops()


def test_float64_fallback_message_and_error_mode(fallback_error):
    # the error quotes the kernel's own dtype message
    with pytest.raises(NotImplementedError, match=r"'aten::sigmoid' has no native npu kernel for Double operands "
                                                  r"\(sigmoid: argument 'self' has dtype Double, which is not supported; "
                                                  r"supported dtypes: Float, Half, BFloat16\), and TORCH_OPS_NN_FALLBACK"):
        torch.sigmoid(torch.ones(3, dtype=torch.float64).to("npu"))
    # float32 and integer operands of the same ops stay native; views of float64 tensors too
    assert torch.sigmoid(torch.ones(3).to("npu")).cpu().tolist() == [torch.sigmoid(torch.ones(1)).item()] * 3
    v = torch.arange(6, dtype=torch.float64).to("npu").view(2, 3).t()[1]
    assert v.cpu().tolist() == [1.0, 4.0]
    with pytest.raises(NotImplementedError, match=r"'aten::gelu' has no native npu kernel for Long operands "
                                                  r"\(gelu: argument 'self' has dtype Long"):
        torch.nn.functional.gelu(torch.ones(3, dtype=torch.long).to("npu"))


def test_fallback_result_stays_on_npu_when_a_cpu_scalar_comes_first(monkeypatch):
    # rsub(t, 1) runs sub(wrapped 1, t): ATen's cpu_fallback would return on the first tensor's device
    # (the CPU scalar's); results go to the npu operand's device. Before this, 1 - t of a float64 npu
    # tensor came back on the CPU and the next op with an npu operand raised a device mismatch.
    monkeypatch.delenv("TORCH_OPS_NN_FALLBACK", raising=False)
    t = torch.randn(5, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = 1 - t.to("npu")
        assert got.device.type == "npu" and got.dtype == torch.float64
        torch.testing.assert_close(got.cpu(), 1 - t, rtol=0, atol=0)
        y = torch.rand(5, dtype=torch.float64)
        loss = torch.nn.functional.multilabel_soft_margin_loss(t.to("npu"), y.to("npu"))
        torch.testing.assert_close(loss.cpu(), torch.nn.functional.multilabel_soft_margin_loss(t, y))


def test_float64_reciprocal_and_arithmetic_say_which_dtype(fallback_error):
    # add / sub / mul / div and the unary math ops fall back through the dtype gate like every other op:
    # the error names the dtype (GradScaler calls reciprocal on float64 every step).
    d = torch.ones(2, dtype=torch.float64).to("npu")
    for fn, name in ((torch.reciprocal, "reciprocal"), (lambda a: a + a, "add.Tensor"), (lambda a: a / a, "div.Tensor")):
        with pytest.raises(NotImplementedError, match=rf"'aten::{name}' has no native npu kernel for Double operands"):
            fn(d)


def test_other_dtypes_a_kernel_lacks_take_the_fallback(monkeypatch):
    """uint8 images through pooling and interpolation (float kernels) give the CPU's results; a dtype
    the CPU lacks too gives the CPU's own error; the device keeps working."""
    monkeypatch.delenv("TORCH_OPS_NN_FALLBACK", raising=False)
    img = torch.randint(0, 256, (2, 3, 9, 11), dtype=torch.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (lambda t: torch.nn.functional.max_pool2d(t, 2),
                   lambda t: torch.nn.functional.interpolate(t, size=(5, 7), mode="bilinear"),
                   lambda t: torch.nn.functional.interpolate(t, size=(18, 22), mode="nearest"),
                   lambda t: torch.nn.functional.avg_pool2d(t.long(), 3)):
            got = fn(img.to("npu"))
            assert got.device.type == "npu" and torch.equal(got.cpu(), fn(img))
        with pytest.raises((RuntimeError, NotImplementedError), match="not implemented for 'Long'"):
            torch.nn.functional.gelu(torch.ones(3, dtype=torch.long).to("npu"))
    assert torch.equal(torch.ones(2).to("npu").add(1).cpu(), torch.full((2,), 2.0))


def test_float64_autograd_through_the_fallback(monkeypatch):
    """Ops whose npu autograd kernel is a composition (quantile, grid_sample): a float64 call goes
    to the CPU op through differentiable copies, so the gradient reaches the npu operand."""
    monkeypatch.delenv("TORCH_OPS_NN_FALLBACK", raising=False)
    x = torch.randn(5, 7, dtype=torch.float64, requires_grad=True)
    xn = x.detach().to("npu").requires_grad_()
    grid = torch.rand(1, 3, 4, 2, dtype=torch.float64) * 2 - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (lambda t, g: torch.quantile(t, 0.3, dim=1),
                   lambda t, g: torch.nn.functional.grid_sample(t[None, None], g, align_corners=False),
                   lambda t, g: torch.nn.functional.conv2d(t[None, None], t[None, None, :3, :3])):
            y, yn = fn(x, grid), fn(xn, grid.to("npu"))
            torch.testing.assert_close(yn.detach().cpu(), y.detach())
            gx, = torch.autograd.grad(y.sum(), x)
            gxn, = torch.autograd.grad(yn.sum(), xn)
            assert gxn.device.type == "npu"
            torch.testing.assert_close(gxn.cpu(), gx)
