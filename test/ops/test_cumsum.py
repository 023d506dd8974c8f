"""cumsum (the cumsum kernel) against the CPU: float dtypes in float (within rounding of the CPU's
double accumulation), integers and bool exactly into int64, every dim (column and line modes),
0-d, in place, dtype=, and the position-ids idiom."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")

CASES = [((10, 7), 1), ((10, 7), 0), ((3, 5, 9), 1), ((3, 5, 9), -1), ((5000,), 0), ((4, 3000), 1),
         ((2, 300, 70), 1), ((), 0), ((64, 5), 0)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool])
@pytest.mark.parametrize("shape,dim", CASES)
def test_cumsum_matches_cpu(dtype, shape, dim):
    g = torch.Generator().manual_seed(9)
    x = torch.randn(shape, generator=g) * (100 if dtype in (torch.int32, torch.int64) else 3)
    x = (x > 0) if dtype == torch.bool else x.to(dtype)
    want, got = torch.cumsum(x, dim), torch.cumsum(x.to("npu"), dim)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.is_floating_point():
        tol = 1e-5 if dtype == torch.float32 else 1e-2
        torch.testing.assert_close(got.cpu().float(), want.float(), rtol=tol, atol=tol * (want.float().abs().max().item() + 1))
    else:
        assert torch.equal(got.cpu(), want)


def test_cumsum_inplace_dtype_and_position_ids():
    x = torch.randn(4, 6)
    d = x.to("npu")
    d.cumsum_(1)
    torch.testing.assert_close(d.cpu(), x.cumsum(1), rtol=1e-6, atol=1e-6)
    ones = torch.ones(3, 4, dtype=torch.long)
    got = torch.cumsum(ones.to("npu"), 1, dtype=torch.float32)
    assert got.dtype == torch.float32 and torch.equal(got.cpu(), torch.cumsum(ones, 1, dtype=torch.float32))
    mask = torch.tensor([[1, 1, 0, 1], [0, 1, 1, 1]])
    assert torch.equal((mask.to("npu").cumsum(-1) - 1).cpu(), mask.cumsum(-1) - 1)
    with pytest.raises(IndexError, match=r"Dimension out of range"):
        torch.cumsum(d, 2)
