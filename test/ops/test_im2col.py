"""im2col / col2im (F.unfold / F.fold, nn.Unfold / nn.Fold) on npu: a strided window copy and its
adjoint (strided adds per tap), forward and backward against the CPU, and bad inputs."""
import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.usefixtures("fallback_error")

CASES = [
    ((2, 3, 8, 9), dict(kernel_size=3)),
    ((1, 4, 10, 7), dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2), stride=(2, 3))),
    ((3, 5, 5), dict(kernel_size=2, stride=2)),                   # unbatched
    ((1, 2, 6, 6), dict(kernel_size=6)),                           # one block
    ((2, 8, 16, 16), dict(kernel_size=4, stride=4)),               # ViT-style patches
    ((1, 3, 9, 9), dict(kernel_size=3, padding=1, stride=2)),      # overlapping, padded
]


@pytest.mark.parametrize("shape,kw", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_unfold_matches_cpu(shape, kw, dtype):
    x = (torch.randn(shape) * 10).to(dtype)
    got = F.unfold(x.npu(), **kw) if len(shape) == 4 else torch.nn.Unfold(**kw)(x.npu())
    want = F.unfold(x, **kw) if len(shape) == 4 else torch.nn.Unfold(**kw)(x)
    assert got.dtype == dtype and torch.equal(got.cpu(), want)  # a copy: exact


@pytest.mark.parametrize("shape,kw", CASES)
def test_fold_and_both_backwards_match_cpu(shape, kw):
    x = torch.randn(shape, requires_grad=True)
    cols = F.unfold(x, **kw)
    g = torch.randn_like(cols)
    cols.backward(g)
    xd = x.detach().npu().requires_grad_()
    F.unfold(xd, **kw).backward(g.npu())
    torch.testing.assert_close(xd.grad.cpu(), x.grad, rtol=1e-6, atol=1e-6)
    c = cols.detach().requires_grad_()
    out = F.fold(c, shape[-2:], **kw)
    go = torch.randn_like(out)
    out.backward(go)
    cd = cols.detach().npu().requires_grad_()
    outd = F.fold(cd, shape[-2:], **kw)
    outd.backward(go.npu())
    torch.testing.assert_close(outd.detach().cpu(), out.detach(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(cd.grad.cpu(), c.grad, rtol=0, atol=0)


def test_bad_input():
    x = torch.randn(1, 2, 4, 4).npu()
    with pytest.raises(RuntimeError, match=r"calculated shape of the array of sliding blocks as \(0, 0\)|must be at least one"):
        F.unfold(x, kernel_size=5)
    with pytest.raises(RuntimeError, match=r"divisible by the product of kernel_size"):
        F.fold(torch.randn(1, 5, 9).npu(), (4, 4), kernel_size=2)
    with pytest.raises(RuntimeError, match=r"match the calculated number of sliding blocks"):
        F.fold(torch.randn(1, 8, 8).npu(), (4, 4), kernel_size=2)
    with pytest.raises(RuntimeError, match=r"stride should be greater than zero|stride_height: 0"):
        torch.ops.aten.im2col(x, [2, 2], [1, 1], [0, 0], [0, 1])
    assert torch.equal(F.unfold(x, 2).cpu(), F.unfold(x.cpu(), 2))  # still usable
