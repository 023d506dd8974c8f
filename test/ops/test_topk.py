"""topk (the topk kernel: float dtypes, rows up to 8192, k up to 64; beyond, the first k of the npu sort)
against the CPU: values exactly,
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
    with pytest.raises(NotImplementedError, match="sort"):  # float64: the CPU fallback (through sort)
        torch.topk(torch.randn(100, dtype=torch.float64).to("npu"), 5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape,k,dim", [((4, 300), 65, 1), ((20000,), 10, 0), ((3, 9000), 100, -1), ((50, 7), 0, 0),
                                         ((6, 200), 200, 1), ((2, 9000), 8990, 1), ((3, 3000), 2990, 1),
                                         ((2, 70000), 5000, 1)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_beyond_the_kernel_takes_the_npu_sort(dtype, shape, k, dim, largest):
    # The sort kernel keeping the first k of every sorted run (one UB batch, one tile, merge passes).
    g = torch.Generator().manual_seed(5)
    x = torch.randint(-50, 50, shape, generator=g).to(dtype)  # ties: the sort keeps them in index order
    x.view(-1)[::97] = float("nan")
    x.view(-1)[5::89] = float("inf")  # with the NaN: the block the sort kernel rewrites, reaching the output
    want_v, want_i = torch.sort(x, dim=dim, descending=largest, stable=True)
    got_v, got_i = torch.topk(x.to("npu"), k, dim, largest)
    torch.testing.assert_close(got_v.cpu(), want_v.narrow(dim, 0, k), rtol=0, atol=0, equal_nan=True)
    assert torch.equal(got_i.cpu(), want_i.narrow(dim, 0, k))
    cpu_v = torch.topk(x, k, dim, largest)[0]  # and the same values as the CPU's topk
    torch.testing.assert_close(got_v.cpu(), cpu_v, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8])
def test_integer_topk_takes_the_npu_radix_sort(dtype):
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 200, (16, 500), generator=g).to(dtype)
    for largest in (True, False):
        want_v, want_i = torch.sort(x, dim=1, descending=largest, stable=True)
        got_v, got_i = torch.topk(x.to("npu"), 7, 1, largest)
        assert torch.equal(got_v.cpu(), want_v[:, :7]) and torch.equal(got_i.cpu(), want_i[:, :7])


def _select_launches():
    return torch.npu.kernel_counters().get("topk_select_kernel", {}).get("launches", 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("data", ["randn", "ties", "special"])
def test_topk_long_rows_by_selection(dtype, largest, data):
    # Rows of 50000 with k = 100: a sampled threshold, the select kernel's candidates, their sort.
    g = torch.Generator().manual_seed(11)
    if data == "randn":
        x = torch.randn(6, 50000, generator=g)
    elif data == "ties":
        x = torch.randint(-50, 50, (6, 50000), generator=g).float()
    else:  # NaN and +-inf here and there (NaN ranks first for largest, last for smallest)
        x = torch.randn(6, 50000, generator=g)
        x[:, ::997] = float("nan")
        x[:, 3::1499] = float("inf")
        x[:, 7::1301] = -float("inf")
    x = x.to(dtype)
    before = _select_launches()
    got_v, got_i = torch.topk(x.to("npu"), 100, 1, largest)
    assert _select_launches() == before + 1  # the selection path ran (and was not abandoned)
    want_v, want_i = torch.sort(x, dim=1, descending=largest, stable=True)
    torch.testing.assert_close(got_v.cpu(), want_v[:, :100], rtol=0, atol=0, equal_nan=True)
    assert torch.equal(got_i.cpu(), want_i[:, :100])


def test_topk_selection_falls_back_to_the_sort_when_the_threshold_keeps_too_much():
    x = torch.zeros(2, 20000)  # every element ties with the threshold: all are candidates
    x[1, 5] = 1.0
    got_v, got_i = torch.topk(x.to("npu"), 10, 1)
    want_v, want_i = torch.sort(x, dim=1, descending=True, stable=True)
    assert torch.equal(got_v.cpu(), want_v[:, :10]) and torch.equal(got_i.cpu(), want_i[:, :10])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8])
def test_zero_dim_input(dtype):
    x = torch.tensor(5).to(dtype)
    for k in (0, 1):
        v, i = torch.topk(x.npu(), k)
        ev, ei = torch.topk(x, k)
        assert torch.equal(v.cpu(), ev) and torch.equal(i.cpu(), ei)
