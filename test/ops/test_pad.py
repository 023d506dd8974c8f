"""Reflection and replication padding on npu (F.pad modes "reflect" / "replicate": index_select
gathers forward, deterministic index_add scatters backward; 1-D, 2-D and 3-D padding) vs PyTorch CPU,
and bad inputs."""
import pytest
import torch
import torch.nn.functional as F

CASES = [
    ((2, 3, 5, 6), (1, 2, 3, 1)),   # 4-D, all four sides
    ((3, 4, 7), (2, 3)),            # 1-D padding of a 3-D input
    ((4, 5, 6), (1, 1, 2, 2)),      # 2-D padding of an unbatched 3-D input
    ((1, 2, 4, 4), (-1, 2, 0, 3)),  # a negative pad crops
    ((2, 3, 5, 6), (0, 0, 4, 0)),   # one side only, the largest reflect pad
    ((5, 9), (8, 1)),               # 2-D input, 1-D padding
    ((2, 3, 4, 5, 6), (1, 2, 0, 3, 2, 1)),  # 5-D, 3-D padding
    ((3, 4, 5, 6), (2, 0, 1, 1, 3, 3)),     # unbatched 4-D, 3-D padding
    ((1, 2, 150, 170), (3, 2, 1, 4)),       # a plane too large for one gather: one pass per dim
    ((0, 2, 5, 6), (1, 1, 1, 1)),           # an empty batch
]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_matches_cpu(fallback_error, mode, shape, pad, dtype):
    x = torch.randn(*shape).to(dtype)
    want = F.pad(x.float(), pad, mode=mode).to(dtype)
    got = F.pad(x.npu(), pad, mode=mode)
    assert got.device.type == "npu" and got.dtype == dtype
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)  # a gather: exact


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", CASES)
def test_backward_matches_cpu(fallback_error, mode, shape, pad):
    x = torch.randn(*shape, requires_grad=True)
    y = F.pad(x, pad, mode=mode)
    g = torch.randn_like(y)
    y.backward(g)
    xd = x.detach().npu().requires_grad_()
    F.pad(xd, pad, mode=mode).backward(g.npu())
    torch.testing.assert_close(xd.grad.cpu(), x.grad, rtol=1e-6, atol=1e-6)


def test_module_and_int_dtype(fallback_error):
    x = torch.randint(-50, 50, (2, 3, 6, 6), dtype=torch.int32)
    got = torch.nn.ReflectionPad2d(2)(x.npu())
    assert torch.equal(got.cpu(), torch.nn.ReflectionPad2d(2)(x))
    got = torch.nn.ReplicationPad2d((1, 0, 2, 3))(x.npu().float())
    assert torch.equal(got.cpu(), torch.nn.ReplicationPad2d((1, 0, 2, 3))(x.float()))


def test_bad_input(fallback_error):
    x = torch.randn(1, 2, 3, 4).npu()
    with pytest.raises(RuntimeError, match=r"[Pp]adding size should be less than|must be smaller than its size"):
        F.pad(x, (1, 1, 3, 0), mode="reflect")
    with pytest.raises(RuntimeError, match=r"reflection_pad2d: padding \(1, 3\) of dim 2 must be smaller than its size 3"):
        torch.ops.aten.reflection_pad2d(x, [1, 1, 1, 3])
    with pytest.raises(RuntimeError, match=r"replication_pad2d: padding must have 4 values, got 2"):
        torch.ops.aten.replication_pad2d(x, [1, 1])
    with pytest.raises(RuntimeError, match=r"replication_pad1d: dim 2 of size 4 padded by \(-2, -2\) is empty"):
        torch.ops.aten.replication_pad1d(x[0], [-2, -2])
    # The device keeps working.
    assert torch.equal(F.pad(x, (1, 1, 1, 1), mode="reflect").cpu(), F.pad(x.cpu(), (1, 1, 1, 1), mode="reflect"))


@pytest.mark.parametrize("mode", ["replicate", "reflect"])
@pytest.mark.parametrize("pad", [(-4, 5, 0, 0), (5, -4, -4, 3), (-5, 6, 1, -3), (-3, 2, 0, 0), (-5, 2, 0, 0)])
def test_negative_padding_crops_as_on_the_cpu(mode, pad):
    """A negative pad crops that side (even all of it); replicate then repeats the nearest kept element."""
    x = torch.randn(2, 3, 4, 4, requires_grad=True)
    try:
        want = F.pad(x, pad, mode=mode)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            F.pad(x.detach().npu(), pad, mode=mode)
        return
    xn = x.detach().npu().requires_grad_()
    got = F.pad(xn, pad, mode=mode)
    torch.testing.assert_close(got.detach().cpu(), want.detach())
    g = torch.randn(want.shape)
    want.backward(g)
    got.backward(g.npu())
    torch.testing.assert_close(xn.grad.cpu(), x.grad)
