"""tril / triu (the tril kernel) against the CPU: every dtype, diagonals inside and outside the matrix,
batches, wide and tall matrices, in-place (contiguous and not), out=, and the 1-D error."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (9, 4), (2, 3, 6, 6), (1, 1), (0, 4), (64, 5000)])
@pytest.mark.parametrize("k", [0, 1, -2, 10, -10])
def test_tril_triu_match_cpu(dtype, shape, k):
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(3)) * 5).to(dtype)
    for fn in (torch.tril, torch.triu):
        got = fn(x.to("npu"), k)
        assert got.dtype == dtype and got.shape == x.shape
        assert torch.equal(got.cpu(), fn(x, k))


def test_tril_triu_inplace_out_and_errors():
    x = torch.randn(6, 8)
    d = x.to("npu")
    d.tril_(1)
    assert torch.equal(d.cpu(), x.tril(1))
    nc = torch.randn(8, 6).to("npu").t()  # non-contiguous in place
    ref = nc.cpu().triu(-1)
    nc.triu_(-1)
    assert torch.equal(nc.cpu(), ref)
    out = torch.empty(0, device="npu")
    torch.triu(x.to("npu"), 2, out=out)
    assert torch.equal(out.cpu(), x.triu(2))
    causal = torch.full((4, 4), float("-inf")).to("npu").triu(1)  # the attention-mask idiom
    assert torch.equal(causal.cpu(), torch.full((4, 4), float("-inf")).triu(1))
    with pytest.raises(RuntimeError, match=r"tril: input tensor must have at least 2 dimensions, got 1"):
        torch.tril(torch.ones(3, device="npu"))
