"""Scatters whose index is shared by every row and column (index_add, index_copy, index_put with
accumulate, scatter / scatter_add / scatter_reduce with a 1-D or an expanded index) take the bucketed path
when the destination spans several UB windows or the row updates are many: the index is sorted by
window first (index_bucket_* kernels) and each window applies only its updates, in index order. Checked
against the CPU (bit for bit where the CPU's order of additions is the same), with repeats, every dtype
the kernels take, both index dtypes, strided operands, rows wider than a tile, windows nobody updates,
and a bad index (a clear error naming the position; the device keeps working). Also the private copies
of integer counts into a short destination (bincount, histc)."""
import pytest
import torch

from torch_ops_nn import _C

pytestmark = pytest.mark.usefixtures("fallback_error")


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _bucketed(fn):
    """Runs fn, returns its result and whether the bucket kernels ran."""
    _C._reset_kernel_counters()
    out = fn()
    torch.npu.synchronize()
    return out, "index_bucket_place_kernel" in _C._kernel_counters()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64])
@pytest.mark.parametrize("idx_dtype", [torch.int64, torch.int32])
def test_index_add_rows(dtype, idx_dtype):
    g = _gen(0)
    x = (torch.randn(10000, 64, generator=g) * 10).to(dtype)
    src = (torch.randn(20000, 64, generator=g) * 10).to(dtype)
    i = torch.randint(0, 10000, (20000,), generator=g).to(idx_dtype)  # ~2 updates per row
    got, used = _bucketed(lambda: x.npu().index_add_(0, i.npu(), src.npu()))
    assert used
    want = x.clone().index_add_(0, i, src)
    if dtype in (torch.float16, torch.bfloat16):
        # Added in float, rounded once (the CPU's way with an int64 index; with int32 it rounds per update)
        if idx_dtype == torch.int64:
            assert torch.equal(got.cpu(), want)
        torch.testing.assert_close(got.cpu().float(), want.float(), rtol=1e-2, atol=0.07 if dtype == torch.float16 else 0.5)
    else:  # the same additions in the same order
        assert torch.equal(got.cpu(), want)


def test_index_add_inner_dim_wide_rows_and_alpha():
    g = _gen(1)
    # dim 1 of [4, 3000, 40]: the index is shared by the 4 outer rows
    x, src = torch.randn(4, 3000, 40, generator=g), torch.randn(4, 5000, 40, generator=g)
    i = torch.randint(0, 3000, (5000,), generator=g)
    got, used = _bucketed(lambda: x.npu().index_add(1, i.npu(), src.npu(), alpha=0.5))
    assert used
    torch.testing.assert_close(got.cpu(), x.index_add(1, i, src, alpha=0.5))
    # rows wider than a tile (5000 columns: 4096 + 904)
    x, src = torch.randn(300, 5000, generator=g), torch.randn(1000, 5000, generator=g)
    i = torch.randint(0, 300, (1000,), generator=g)
    got, used = _bucketed(lambda: x.npu().index_add_(0, i.npu(), src.npu()))
    assert used
    assert torch.equal(got.cpu(), x.clone().index_add_(0, i, src))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool])
def test_index_copy_and_index_put(dtype):
    g = _gen(2)
    x = (torch.randn(20000, 48, generator=g) * 10).to(dtype)
    i = torch.randperm(20000, generator=g)[:9000]
    src = (torch.randn(9000, 48, generator=g) * 10).to(dtype)
    got, used = _bucketed(lambda: x.npu().index_copy_(0, i.npu(), src.npu()))
    assert used
    assert torch.equal(got.cpu(), x.clone().index_copy_(0, i, src))
    if dtype in (torch.float32, torch.int64):
        r = torch.randint(-20000, 20000, (30000,), generator=g)  # negatives wrap; repeats accumulate
        v = (torch.randn(30000, 48, generator=g) * 10).to(dtype)
        got = x.npu().index_put_((r.npu(),), v.npu(), accumulate=True)
        want = x.clone().index_put_((r,), v, accumulate=True)
        torch.testing.assert_close(got.cpu(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64])
def test_scatter_add_1d_many_windows(dtype):
    """1-D: the pairs carry the values (<= 4-byte elements) or the positions (int64)."""
    g = _gen(3)
    x = (torch.randn(300000, generator=g) * 10).to(dtype)
    i = torch.randint(0, 300000, (1 << 20,), generator=g)
    s = (torch.randn(1 << 20, generator=g) * 10).to(dtype)
    got, used = _bucketed(lambda: x.npu().scatter_add_(0, i.npu(), s.npu()))
    assert used
    want = x.clone().scatter_add_(0, i, s)
    if dtype in (torch.float16, torch.bfloat16):
        # rounded after every update here; the CPU's sum accumulates a run of updates in float
        torch.testing.assert_close(got.cpu().float(), want.float(), rtol=2e-2, atol=0.5)
    else:
        assert torch.equal(got.cpu(), want)
    # strided src and index (every other element)
    got = x.npu().scatter_add_(0, i.npu()[::2], s.npu()[::2])
    want = x.clone().scatter_add_(0, i[::2], s[::2])
    torch.testing.assert_close(got.cpu().float(), want.float(), rtol=2e-2, atol=0.5)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_1d_and_expanded_index(reduce):
    g = _gen(4)
    x = torch.randn(200000, generator=g)
    i = torch.randint(0, 200000, (400000,), generator=g)
    s = torch.randn(400000, generator=g)
    got, used = _bucketed(lambda: x.npu().scatter_reduce(0, i.npu(), s.npu(), reduce, include_self=False))
    assert used
    torch.testing.assert_close(got.cpu(), x.scatter_reduce(0, i, s, reduce, include_self=False))
    # an index expanded over the columns (torch_scatter's form), src transposed (strided rows)
    xe = torch.randn(5000, 32, generator=g)
    ie = torch.randint(0, 5000, (20000, 1), generator=g).expand(-1, 32)
    se = torch.randn(32, 20000, generator=g).t()
    got, used = _bucketed(lambda: xe.npu().scatter_reduce(0, ie[:, :1].npu().expand(-1, 32), se.npu(), reduce))
    assert used
    torch.testing.assert_close(got.cpu(), xe.scatter_reduce(0, ie, se, reduce))


def test_scatter_value_and_untouched_windows():
    g = _gen(5)
    x = torch.randn(1 << 20, generator=g)
    i = torch.tensor([5, 900000, 5, 1048575])  # three windows of many updated, the rest kept as they are
    got, used = _bucketed(lambda: x.npu().scatter_(0, i.npu(), 2.5))
    assert used
    assert torch.equal(got.cpu(), x.clone().scatter_(0, i, 2.5))
    got = x.npu().index_add_(0, i.npu(), torch.ones(4, device="npu"))
    assert torch.equal(got.cpu(), x.clone().index_add_(0, i, torch.ones(4)))
    # one value into whole rows (a Duplicate per row), rows wider than a tile
    xr = torch.randn(300, 5000, generator=g)
    ir = torch.randint(0, 300, (1000, 1), generator=g)
    got, used = _bucketed(lambda: xr.npu().scatter_(0, ir.npu().expand(-1, 5000), -3.5))
    assert used
    assert torch.equal(got.cpu(), xr.clone().scatter_(0, ir.expand(-1, 5000), -3.5))
    xh = xr.half()
    assert torch.equal(xh.npu().scatter_(0, ir.npu().expand(-1, 5000), 1.25).cpu(),
                       xh.clone().scatter_(0, ir.expand(-1, 5000), 1.25))
    # bincount / histc count through scatter_add of a broadcast one
    v = torch.randint(0, 200000, (300000,), generator=g)
    assert torch.equal(torch.bincount(v.npu(), minlength=200000).cpu(), torch.bincount(v, minlength=200000))


def test_bad_index_is_a_clear_error_and_the_device_keeps_working():
    x = torch.zeros(300000, device="npu")
    i = torch.randint(0, 300000, (100000,))
    i[77777] = 300000
    with pytest.raises(RuntimeError, match=r"index_bucket_scan_kernel: .*index 300000 is out of bounds for dimension "
                                           r"with size 300000 \(at position 77777 of index\)"):
        x.scatter_add_(0, i.npu(), torch.ones(100000, device="npu"))
        torch.npu.synchronize()
    rows = torch.zeros(10000, 16, device="npu")
    with pytest.raises(RuntimeError, match=r"index -1 is out of bounds for dimension with size 10000 "
                                           r"\(at position 3 of index\)"):
        rows.index_add_(0, torch.tensor([0, 1, 2, -1] * 2000, device="npu"), torch.ones(8000, 16, device="npu"))
        torch.npu.synchronize()
    i[77777] = 7
    got = torch.zeros(300000).npu().scatter_add_(0, i.npu(), torch.ones(100000, device="npu"))
    assert torch.equal(got.cpu(), torch.zeros(300000).scatter_add_(0, i, torch.ones(100000)))


def test_without_room_for_the_workspace_the_unbucketed_scatter_runs():
    """The bucket workspace takes 8 bytes per update: on a device too small for it the scatter still
    runs (walking every index per window), with the same result."""
    from conftest import run_python
    code = """
import torch, torch_ops_nn
from torch_ops_nn import _C
g = torch.Generator().manual_seed(0)
x = torch.randn(1 << 18, generator=g)
i = torch.randint(0, 1 << 18, (3 << 20,), generator=g, dtype=torch.int32)
s = torch.randn(3 << 20, generator=g)
_C._reset_kernel_counters()
got = x.npu().index_add_(0, i.npu(), s.npu()).cpu()
print("bucketed:", "index_bucket_place_kernel" in _C._kernel_counters())
print("equal:", torch.equal(got, x.index_add(0, i, s)))
"""
    r = run_python(code, {"TORCH_OPS_NN_DEVICE_MEMORY": "40MB"})
    assert r.returncode == 0, r.stderr
    assert "bucketed: False" in r.stdout and "equal: True" in r.stdout


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_counts_into_a_short_destination_use_private_copies(dtype):
    """Many integer additions into a short 1-D destination (bincount, histc): each block adds into its own
    zeroed copy, the copies' sum is added to self (exact for integers, whatever the order)."""
    g = _gen(6)
    x = torch.randint(-100, 100, (3000,), generator=g, dtype=dtype)
    i = torch.randint(0, 3000, (200000,), generator=g)
    s = torch.randint(-1000, 1000, (200000,), generator=g, dtype=dtype)
    _C._reset_kernel_counters()
    got = x.npu().scatter_add_(0, i.npu(), s.npu())
    torch.npu.synchronize()
    assert "scatter_add_private_kernel" in _C._kernel_counters()
    assert torch.equal(got.cpu(), x.clone().scatter_add_(0, i, s))
    v = torch.randint(0, 700, (300000,), generator=g)
    assert torch.equal(torch.bincount(v.npu()).cpu(), torch.bincount(v))
    h = torch.randn(300000, generator=g)
    assert torch.equal(torch.histc(h.npu(), bins=50, min=-2, max=2).cpu(), torch.histc(h, bins=50, min=-2, max=2))
    i[123456] = 3000
    with pytest.raises(RuntimeError, match=r"scatter_add_private_kernel: .*index 3000 is out of bounds for dimension "
                                           r"with size 3000"):
        x.npu().scatter_add_(0, i.npu(), s.npu())
        torch.npu.synchronize()


def test_a_bad_index_in_the_first_block_leaves_the_chain_consistent():
    """A failing block stops the launch's later blocks: the count kernel therefore never fails (it records
    the bad index for the scan kernel to report), so every later kernel reads counts and offsets that
    were all written. With bounds checks on, the valid updates land and nothing reads out of range."""
    from conftest import run_python
    code = """
import torch, torch_ops_nn
g = torch.Generator().manual_seed(0)
x = torch.zeros(1 << 20)
i = torch.randint(0, 1 << 20, (1 << 20,), generator=g)
s = torch.randn(1 << 20, generator=g)
i[0] = -5
d = x.npu()
try:
    d.index_add_(0, i.npu(), s.npu())
    torch.npu.synchronize()
except RuntimeError as e:
    print("error:", str(e).splitlines()[0][:300])
keep = i >= 0
print("valid updates:", torch.equal(d.cpu(), x.index_add(0, i[keep], s[keep])))
"""
    r = run_python(code, {"TORCH_OPS_NN_BOUNDS_CHECK": "1"})
    assert r.returncode == 0, r.stderr
    assert "index_bucket_scan_kernel" in r.stdout and "index -5 is out of bounds" in r.stdout, r.stdout
    assert "(at position 0 of index)" in r.stdout and "valid updates: True" in r.stdout, r.stdout
