"""cumsum (the cumsum kernel) against the CPU: float dtypes in float (within rounding of the CPU's
double accumulation), integers and bool exactly into int64, every dim (column and line modes),
0-d, in place, dtype=, and the position-ids idiom."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")

CASES = [((10, 7), 1), ((10, 7), 0), ((3, 5, 9), 1), ((3, 5, 9), -1), ((5000,), 0), ((4, 3000), 1),
         ((2, 300, 70), 1), ((), 0), ((64, 5), 0),
         ((300, 1000), 1),  # many rows along their length: transposed into the column mode
         ((700, 3000), 0),  # column tiles of fewer rows than R: the carry between tiles
         ((3, 40, 5000), 1)]  # column chunks of 4096 and a remainder


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


# ---- cumprod: the same kernel with a running product ------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool])
@pytest.mark.parametrize("shape,dim", [((5, 7), 1), ((5, 7), 0), ((3, 4, 6), 1), ((2000,), 0), ((4, 3000), 1), ((40, 30), 1),
                                       ((3, 70, 2), 1)])
def test_cumprod_matches_cpu(dtype, shape, dim):
    g = torch.Generator().manual_seed(9)
    if dtype == torch.bool:
        x = torch.rand(shape, generator=g) > 0.2
    elif dtype.is_floating_point:
        x = (torch.rand(shape, generator=g) * 0.4 + 0.8).to(dtype)  # long products stay in range
    else:
        x = torch.randint(-3, 4, shape, generator=g, dtype=dtype)  # int64 products wrap as on the CPU
    got, want = torch.cumprod(x.npu(), dim), torch.cumprod(x, dim)
    assert got.device.type == "npu" and got.dtype == want.dtype
    if dtype.is_floating_point:
        # float accumulates in float (the CPU in double): relative error grows with the length
        rel = ((got.cpu().float() - want.float()).abs() / want.float().abs().clamp_min(1e-30)).max().item()
        assert rel <= (1e-4 if dtype == torch.float32 else 2e-2)
    else:
        assert torch.equal(got.cpu(), want)


def test_cumprod_backward_inplace_out_and_dtype():
    x = torch.rand(4, 5, requires_grad=True)
    x.cumprod(1).sum().backward()
    xd = x.detach().npu().requires_grad_()
    xd.cumprod(1).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), x.grad)
    y = torch.tensor([1.5, 2.0, -1.0], device="npu")
    y.cumprod_(0)
    assert y.cpu().tolist() == [1.5, 3.0, -3.0]
    out = torch.empty(0, device="npu", dtype=torch.float32)
    torch.cumprod(torch.tensor([2, 3, 4], device="npu"), 0, dtype=torch.float32, out=out)
    assert out.cpu().tolist() == [2.0, 6.0, 24.0]
    with pytest.raises(IndexError, match=r"Dimension out of range"):
        torch.cumprod(torch.ones(3, device="npu"), 1)


# ---- prod: the last element of the running product ----------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64, torch.bool])
@pytest.mark.parametrize("args", [(), (1,), (2, True), (-1,), (0,)])
def test_prod_matches_cpu(dtype, args):
    g = torch.Generator().manual_seed(12)
    if dtype == torch.bool:
        x = torch.rand(4, 6, 5, generator=g) > 0.1
    elif dtype.is_floating_point:
        x = (torch.rand(4, 6, 5, generator=g) * 0.5 + 0.75).to(dtype)
    else:
        x = torch.randint(-3, 4, (4, 6, 5), generator=g, dtype=dtype)
    got, want = x.npu().prod(*args), x.prod(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    if dtype == torch.float16:
        # float16 multiplies in float and rounds once (as CUDA); the CPU rounds every step
        assert torch.equal(got.cpu(), x.float().prod(*args).half())
    elif dtype.is_floating_point:
        torch.testing.assert_close(got.cpu(), want)
    else:
        assert torch.equal(got.cpu(), want)


def test_prod_edge_cases_and_gradient():
    assert torch.equal(torch.zeros(3, 0).npu().prod(1).cpu(), torch.ones(3))
    assert torch.tensor(2.5).npu().prod().item() == 2.5
    assert torch.arange(1, 6).npu().prod(dtype=torch.float32).item() == 120.0
    x = torch.rand(3, 4, requires_grad=True)
    xd = x.detach().npu().requires_grad_()
    x.prod(1).sum().backward()
    xd.prod(1).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), x.grad)


@pytest.mark.parametrize("n", [32768, 100003, 1 << 20])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_cumsum_long_line_segmented(n, dtype):
    # One long line takes the segmented scan (segments side by side as columns, plus the exclusive
    # scan of their totals); the line mode's sequential float sum drifted with n (1e6 elements: 8.6e-6
    # relative against float64, the CPU's double accumulation 6e-8). n = 100003 leaves a padded tail.
    g = torch.Generator().manual_seed(3)
    scale = 0.05 if dtype == torch.float16 else 1.0  # float16's running sums stay below its 65504
    x = ((torch.rand(n, generator=g) + 0.5) * scale).to(dtype)
    ref = x.double().cumsum(0)
    got = torch.cumsum(x.npu(), 0).cpu()
    assert got.dtype == dtype
    rel = ((got.double() - ref).abs() / ref).max().item()
    # float32: a few units of float rounding; 16-bit dtypes: one rounding to the dtype (the CPU: 5.3e-4)
    bound = 4e-6 if dtype == torch.float32 else (2 ** -10 if dtype == torch.float16 else 2 ** -7)
    assert rel <= bound, f"relative error {rel}"
    # as a row of a 2-D tensor (dim=-1) and with out= too
    out = torch.empty(0, dtype=dtype, device="npu")
    torch.cumsum(x.npu().view(1, n), -1, out=out)
    assert torch.equal(out.cpu().view(n), got)
