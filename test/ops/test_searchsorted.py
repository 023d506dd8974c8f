"""searchsorted / bucketize on npu (the searchsorted kernel: a vectorized binary search over float
copies) against the CPU: boundary counts around powers of two and the UB-block tail, ties, left and
right, N-D rows, NaN and inf, sorter, side, out_int32, scalars, and bad input."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")


@pytest.mark.parametrize("m", [0, 1, 2, 3, 7, 8, 9, 100, 1000, 5000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32])
@pytest.mark.parametrize("right", [False, True])
def test_matches_cpu(m, dtype, right):
    g = torch.Generator().manual_seed(m)
    if dtype.is_floating_point:
        b = torch.randn(m, generator=g).to(dtype).sort().values
        v = (torch.randn(3, 777, generator=g) * 2).to(dtype)
        v[0, : min(m, 5)] = b[:5]  # values equal to boundaries: left and right differ there
    else:
        b = torch.randint(-50, 50, (m,), generator=g, dtype=dtype).sort().values
        v = torch.randint(-60, 60, (3, 777), generator=g, dtype=dtype)
    got = torch.searchsorted(b.npu(), v.npu(), right=right)
    want = torch.searchsorted(b, v, right=right)
    assert got.dtype == torch.int64 and torch.equal(got.cpu(), want)


def test_rows_nan_inf_sorter_side_and_scalars():
    g = torch.Generator().manual_seed(0)
    b = torch.randn(4, 6, 33, generator=g).sort(-1).values
    v = torch.randn(4, 6, 50, generator=g)
    for right in (False, True):
        assert torch.equal(torch.searchsorted(b.npu(), v.npu(), right=right).cpu(), torch.searchsorted(b, v, right=right))
    b = torch.tensor([-1.0, 0.0, 0.0, 2.0, float("inf")])
    v = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, 5.0])
    for right in (False, True):
        assert torch.equal(torch.searchsorted(b.npu(), v.npu(), right=right).cpu(), torch.searchsorted(b, v, right=right))
    u = torch.randn(20, generator=g)
    s = u.argsort()
    assert torch.equal(torch.searchsorted(u.npu(), v.npu(), sorter=s.npu(), side="right").cpu(),
                       torch.searchsorted(u, v, sorter=s, side="right"))
    got = torch.searchsorted(b.npu(), v.npu(), out_int32=True)
    assert got.dtype == torch.int32 and torch.equal(got.cpu(), torch.searchsorted(b, v, out_int32=True))
    assert torch.searchsorted(b.npu(), 0.5).item() == torch.searchsorted(b, 0.5).item()
    out = torch.empty(0, dtype=torch.long, device="npu")
    torch.searchsorted(b.npu(), v.npu(), out=out)
    assert torch.equal(out.cpu(), torch.searchsorted(b, v))


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_matches_cpu(right):
    x = torch.randn(10_000, generator=torch.Generator().manual_seed(1)) * 3
    bd = torch.linspace(-2, 2, 17)
    assert torch.equal(torch.bucketize(x.npu(), bd.npu(), right=right).cpu(), torch.bucketize(x, bd, right=right))
    assert torch.bucketize(1.0, bd.npu(), right=right).item() == torch.bucketize(1.0, bd, right=right).item()


def test_bad_input():
    b = torch.tensor([0.0, 1.0, 2.0], device="npu")
    with pytest.raises(RuntimeError, match=r"side can only be 'left' or 'right'"):
        torch.searchsorted(b, b, side="middle")
    with pytest.raises(RuntimeError, match=r"side and right can't be set to opposites"):
        torch.searchsorted(b, b, side="left", right=True)
    with pytest.raises(RuntimeError, match=r"first N-1 dimensions of boundaries tensor and input value tensor must match"):
        torch.searchsorted(torch.zeros(2, 3, device="npu"), torch.zeros(3, 3, device="npu"))
    with pytest.raises(RuntimeError, match=r"boundaries tensor must be 1 dimension"):
        torch.bucketize(b, torch.zeros(2, 2, device="npu"))
    with pytest.raises(RuntimeError, match=r"sorter must be a tensor of long dtype"):
        torch.searchsorted(b, b, sorter=torch.tensor([0, 1, 2], dtype=torch.int32, device="npu"))
    assert torch.searchsorted(b, torch.tensor([1.5], device="npu")).item() == 2  # still usable
