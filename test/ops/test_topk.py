"""topk (the topk kernel: float dtypes, rows up to 8192, k up to 64) against the CPU: values exactly,
indices pointing at those values (tie order is unspecified in PyTorch too), largest and smallest, any
dim, NaN counted as the largest and -inf kept, out=, and the fallback beyond the native limits."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape,k,dim", [((8, 1000), 5, 1), ((3, 17), 17, -1), ((4, 6, 9), 2, 1), ((300,), 1, 0),
                                         ((2, 8192), 64, 1), ((5, 3, 4), 3, 0)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_cpu(dtype, shape, k, dim, largest):
    g = torch.Generator().manual_seed(13)
    x = torch.randn(shape, generator=g).to(dtype)
    want_v, _ = torch.topk(x, k, dim, largest)
    got_v, got_i = torch.topk(x.to("npu"), k, dim, largest)
    assert got_v.dtype == dtype and got_i.dtype == torch.int64 and got_v.shape == want_v.shape
    assert torch.equal(got_v.cpu(), want_v)
    assert torch.equal(torch.gather(x, dim, got_i.cpu()), want_v)  # the indices point at the values


def test_topk_special_values_out_and_fallback():
    x = torch.tensor([[1.0, float("nan"), -float("inf"), 3.0, float("inf"), -2.0]])
    for largest in (True, False):
        want_v, want_i = torch.topk(x, 6, 1, largest)
        got_v, got_i = torch.topk(x.to("npu"), 6, 1, largest)
        torch.testing.assert_close(got_v.cpu(), want_v, equal_nan=True)
        assert torch.equal(got_i.cpu(), want_i)
    v, i = torch.empty(0, device="npu"), torch.empty(0, dtype=torch.long, device="npu")
    torch.topk(torch.arange(10.0).to("npu"), 3, out=(v, i))
    assert torch.equal(v.cpu(), torch.tensor([9.0, 8.0, 7.0])) and torch.equal(i.cpu(), torch.tensor([9, 8, 7]))
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(torch.ones(3, device="npu"), 4)
    with pytest.raises(NotImplementedError, match="topk"):  # k beyond the native limit: the CPU fallback
        torch.topk(torch.randn(100).to("npu"), 65)
