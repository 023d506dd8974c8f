"""index_select (the index_select kernel) and embedding through it, against PyTorch's CPU results:
every dtype (rows move as bytes), dims, int32/int64 indices with repeats, non-contiguous inputs, out=,
0-d and empty cases, and bad input (out-of-range indices raise at the next synchronization with the
index and its position; the device stays usable)."""
import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.usefixtures("fallback_error")

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16, torch.uint8, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [((10, 7), 0), ((10, 7), 1), ((3, 5, 9), 1), ((3, 5, 9), -1), ((1000, 300), 0),
                                       ((5,), 0), ((2, 70000), 1),
                                       # short rows (the gather path): many slices per item and core
                                       ((300, 40), 1), ((7, 33, 6), 2), ((130, 3, 2), 1),
                                       # rows of 64 B - 1 KB with D <= 4 x the index count: gather path
                                       # too (2-byte dtypes: 70 B rows, 2-byte lanes); 1.2 KB rows: not
                                       ((6, 20, 30), 1), ((7, 9, 35), 1), ((4, 40, 300), 1)])
@pytest.mark.parametrize("idx_dtype", [torch.int64, torch.int32])
def test_index_select_matches_cpu(dtype, shape, dim, idx_dtype):
    g = torch.Generator().manual_seed(7)
    x = (torch.randn(shape, generator=g) * 10).to(dtype)
    idx = torch.randint(0, x.shape[dim], (13,), generator=g, dtype=idx_dtype)
    got = x.to("npu").index_select(dim, idx.to("npu"))
    want = x.index_select(dim, idx)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(got.cpu(), want)


def test_embedding_noncontiguous_out_and_edge_cases():
    w, i = torch.randn(50, 16), torch.randint(0, 50, (4, 7))
    assert torch.equal(F.embedding(i.to("npu"), w.to("npu")).cpu(), F.embedding(i, w))
    x, idx = torch.randn(8, 6).t(), torch.tensor([5, 0, 5, 2])
    assert torch.equal(x.to("npu").index_select(1, idx.to("npu")).cpu(), x.index_select(1, idx))
    out = torch.empty(0, device="npu")
    torch.index_select(w.to("npu"), 0, idx.to("npu"), out=out)
    assert torch.equal(out.cpu(), w.index_select(0, idx))
    s = torch.tensor(3.5)
    for j in [torch.tensor(0), torch.tensor([0])]:
        got = s.to("npu").index_select(0, j.to("npu"))
        assert got.shape == s.index_select(0, j).shape and got.item() == 3.5
    empty = w.to("npu").index_select(0, torch.tensor([], dtype=torch.long, device="npu"))
    assert empty.shape == (0, 16)


def test_index_select_bad_input():
    x = torch.randn(5, 3).to("npu")
    with pytest.raises(RuntimeError, match=r"index 5 is out of range for dimension size 5 \(at position 1 of index\)"):
        x.index_select(0, torch.tensor([1, 5, 2], device="npu"))
        torch.npu.synchronize()
    with pytest.raises(RuntimeError, match=r"index -1 is out of range for dimension size 5"):
        x.index_select(0, torch.tensor([-1], device="npu"))
        torch.npu.synchronize()
    assert torch.equal(x.index_select(0, torch.tensor([4], device="npu")).cpu(), x.cpu()[4:5])  # still usable
    with pytest.raises(RuntimeError, match=r"index 3 is out of range for dimension size 3 \(at position 2 of index\)"):
        x.index_select(1, torch.tensor([0, 2, 3], device="npu"))  # the gather path (4-byte rows)
        torch.npu.synchronize()
    assert torch.equal(x.index_select(1, torch.tensor([2, 0], device="npu")).cpu(), x.cpu()[:, [2, 0]])
    with pytest.raises(IndexError, match=r"Index is supposed to be a vector, got a 2-D tensor"):
        x.index_select(0, torch.tensor([[1]], device="npu"))
    with pytest.raises(TypeError, match=r"Expected dtype int32 or int64 for index, got Float"):
        x.index_select(0, torch.tensor([1.0], device="npu"))
    with pytest.raises(IndexError, match=r"Dimension out of range"):
        x.index_select(2, torch.tensor([0], device="npu"))
    with pytest.raises(RuntimeError, match=r"index_select.*index.*cpu"):
        x.index_select(0, torch.tensor([0]))
    # A 0-dim self takes exactly one index (as on the CPU).
    s = torch.tensor(3.0, device="npu")
    with pytest.raises(IndexError, match=r"index_select\(\): Index to scalar can have only 1 value, got 3 value\(s\)"):
        s.index_select(0, torch.tensor([0, 0, 0], device="npu"))
    assert s.index_select(0, torch.tensor([0], device="npu")).cpu() == 3.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("V,D,shape,pad", [(50, 16, (4, 7), None), (10, 300, (3, 33), 2), (1000, 64, (8, 128), 0),
                                           (5, 3, (200,), None), (7, 5000, (3,), None)])
@pytest.mark.parametrize("idx_dtype", [torch.int64, torch.int32])
def test_embedding_backward_matches_cpu(dtype, V, D, shape, pad, idx_dtype):
    """embedding_dense_backward (the embedding_backward kernel): repeated indices summed in order
    (float32 bit-exact with the CPU), padding_idx skipped, wide rows chunked."""
    g = torch.Generator().manual_seed(11)
    w = torch.randn(V, D, generator=g).to(dtype).requires_grad_()
    wn = w.detach().to("npu").requires_grad_()
    i = torch.randint(0, V, shape, generator=g, dtype=idx_dtype)
    go = torch.randn(*shape, D, generator=g).to(dtype)
    F.embedding(i.long(), w, padding_idx=pad).backward(go)
    F.embedding(i.to("npu"), wn, padding_idx=pad).backward(go.to("npu"))
    if dtype == torch.float32:
        assert torch.equal(wn.grad.cpu(), w.grad)
    else:
        torch.testing.assert_close(wn.grad.cpu().float(), w.grad.float(), rtol=2e-2, atol=2e-2)


def test_embedding_backward_scale_grad_by_freq_takes_the_fallback():
    w = torch.randn(5, 3, device="npu", requires_grad=True)
    with pytest.raises(NotImplementedError, match="embedding_dense_backward"):
        F.embedding(torch.tensor([1, 2], device="npu"), w, scale_grad_by_freq=True).sum().backward()


@pytest.mark.parametrize("idx", [[0, 2, -1, 3], [[1, 0], [-2, 3]], 2, [-4, 3]])
@pytest.mark.parametrize("where", ["first", "second", "last", "after_slice"])
@pytest.mark.parametrize("idx_dtype", [torch.int64, torch.int32])
def test_advanced_indexing_with_one_index_tensor(idx, where, idx_dtype):
    """x[idx] with one integer tensor (any shape, negatives wrapped) runs on index_select."""
    x = torch.randn(6, 5, 4, generator=torch.Generator().manual_seed(1))
    i = torch.tensor(idx, dtype=idx_dtype)
    f = {"first": lambda t, j: t[j], "second": lambda t, j: t[:, j], "last": lambda t, j: t[..., j],
         "after_slice": lambda t, j: t[1:, j]}[where]
    got, want = f(x.to("npu"), i.to("npu")), f(x, i)
    assert got.shape == want.shape and torch.equal(got.cpu(), want)


def test_advanced_indexing_out_of_range_and_masks():
    d = torch.randn(6, 5).to("npu")
    with pytest.raises(RuntimeError, match=r"index 7 is out of range for dimension size 6"):
        d[torch.tensor([7], device="npu")]
        torch.npu.synchronize()
    assert torch.equal(d[d > 0].cpu(), d.cpu()[d.cpu() > 0])  # one boolean mask: native (test_mask_index.py)
    i = torch.tensor([0, 2], device="npu")
    m = torch.tensor([True, False, True, False, True, False], device="npu")
    with pytest.raises(IndexError, match=r"shape mismatch: .* shapes \[3\], \[2\]"):  # as the CPU's
        d[m, i]
    # a mask beside an index: its nonzero coordinates joined with the index (test_index_put.py)
    assert torch.equal(d[m, i[:1]].cpu(), d.cpu()[m.cpu(), i[:1].cpu()])


@pytest.mark.parametrize("case", [
    "ij", "i_j_bcast", "mid_pair", "separated", "separated_slice", "three", "neg_int32", "scalar_tensor", "empty",
])
def test_advanced_indexing_with_several_index_tensors(case):
    """x[i, j, ...] with several integer tensors: one gather of their joint linear index, B placed as PyTorch
    places it (adjacent indexed dims: in their place; separated: first)."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(6, 5, 4, 3, generator=g)
    t = lambda v, dt=torch.int64: torch.tensor(v, dtype=dt)
    f, idx = {
        "ij": (lambda a, i, j: a[i, j], (t([0, 5, 2, 2]), t([4, 0, 1, 1]))),
        "i_j_bcast": (lambda a, i, j: a[i, j], (t([[0], [3], [5]]), t([1, 4]))),       # B = [3, 2]
        "mid_pair": (lambda a, i, j: a[:, i, j], (t([[4, 0], [2, 2]]), t([3, 1]))),    # dims 1, 2 in place
        "separated": (lambda a, i, j: a[i, :, j], (t([1, 5, 0]), t([3, 0, 2]))),      # B first
        "separated_slice": (lambda a, i, j: a[1:4, i, :, j], (t([4, 0]), t([2, 1]))),  # B first, then 3, 4
        "three": (lambda a, i, j: a[i, j, i - 2], (t([2, 3, 5]), t([0, 4, 1]))),
        "neg_int32": (lambda a, i, j: a[i, j], (t([-1, -6, 2], torch.int32), t([-5, 4, -1]))),
        "scalar_tensor": (lambda a, i, j: a[i, :, j], (t(3), t([0, 2, 1]))),
        "empty": (lambda a, i, j: a[i, j], (t([], torch.int64), t([], torch.int64))),
    }[case]
    got, want = f(x.to("npu"), *(v.to("npu") for v in idx)), f(x, *idx)
    assert got.shape == want.shape and torch.equal(got.cpu(), want)


def test_several_index_tensors_bad_input():
    d = torch.arange(30.0).reshape(6, 5).to("npu")
    # j = 5 is out of range for dim 1 although 0 * 5 + 5 is a valid linear position.
    with pytest.raises(RuntimeError, match=r"index_linear_kernel: .*index 5 is out of range for dimension 1 with size 5"):
        d[torch.tensor([0, 1], device="npu"), torch.tensor([2, 5], device="npu")]
        torch.npu.synchronize()
    with pytest.raises(RuntimeError, match=r"index -7 is out of range for dimension 0 with size 6"):
        d[torch.tensor([-7], device="npu"), torch.tensor([0], device="npu")]
        torch.npu.synchronize()
    with pytest.raises(IndexError, match=r"index: shape mismatch: indexing tensors could not be broadcast together "
                                         r"with shapes \[2\], \[3\]"):
        d[torch.tensor([0, 1], device="npu"), torch.tensor([0, 1, 2], device="npu")]
    with pytest.raises(IndexError, match=r"too many indices"):
        d[torch.tensor([0], device="npu"), torch.tensor([0], device="npu"), torch.tensor([0], device="npu")]
    got = d[torch.tensor([5, 0], device="npu"), torch.tensor([4, 1], device="npu")]  # still usable
    assert torch.equal(got.cpu(), torch.tensor([29.0, 1.0]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
def test_roll(dtype, fallback_error):
    """torch.roll on npu (two strided device copies per dimension): positive, negative, oversized
    and zero shifts, several dimensions, no dims (flattened), non-contiguous and empty inputs, and
    the gradient; bad arguments raise PyTorch's errors."""
    x = (torch.arange(3 * 4 * 5) % 7).reshape(3, 4, 5).to(dtype)
    for shifts, dims in [((2,), (1,)), ((-7,), (2,)), ((1, -2), (0, 2)), ((13,), ()), ((0,), (1,)), ((5, 5), (-1, -2))]:
        assert torch.equal(torch.roll(x.npu(), shifts, dims).cpu(), torch.roll(x, shifts, dims))
    t = x.transpose(0, 2)
    assert torch.equal(torch.roll(t.npu(), 3, 1).cpu(), torch.roll(t, 3, 1))
    assert torch.roll(torch.empty(0, 3, dtype=dtype).npu(), 1, 0).shape == (0, 3)
    if dtype == torch.float32:
        w = torch.randn(4, 6, requires_grad=True)
        wn = w.detach().npu().requires_grad_()
        g = torch.randn(4, 6)
        torch.roll(w, (1, -2), (0, 1)).backward(g)
        torch.roll(wn, (1, -2), (0, 1)).backward(g.npu())
        assert torch.equal(wn.grad.cpu(), w.grad)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        torch.roll(x.npu(), (1, 2), (0,))
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.roll(x.npu(), 1, 3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_flip(dtype, fallback_error):
    x = (torch.arange(2 * 3 * 5) % 7).reshape(2, 3, 5).to(dtype)
    for dims in [(0,), (1, 2), (-1,), (0, 1, 2), (), (2, 0)]:
        got = x.npu().flip(dims)
        assert torch.equal(got.cpu(), x.flip(dims))
        assert got.data_ptr() != x.npu().data_ptr() or not dims
    t = x.transpose(0, 2)
    assert torch.equal(t.npu().flip(1).cpu(), t.flip(1))
    assert torch.equal(torch.tensor(3.0).npu().flip(()).cpu(), torch.tensor(3.0))
    if dtype == torch.float32:
        w = torch.randn(3, 4, requires_grad=True)
        wn = w.detach().npu().requires_grad_()
        g = torch.randn(3, 4)
        w.flip(1).backward(g)
        wn.flip(1).backward(g.npu())
        assert torch.equal(wn.grad.cpu(), w.grad)
    with pytest.raises(RuntimeError, match="dims has duplicates"):
        x.npu().flip((0, -3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.npu().flip(3)


def test_one_hot(fallback_error):
    """F.one_hot with num_classes given is native (a broadcast compare); out-of-range classes raise."""
    y = torch.tensor([[0, 3, 4], [2, 1, 0]])
    got = F.one_hot(y.npu(), 5)
    assert got.dtype == torch.long and torch.equal(got.cpu(), F.one_hot(y, 5))
    assert F.one_hot(torch.empty(0, dtype=torch.long).npu(), 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match=r"Class values must be smaller than num_classes \(3\)"):
        F.one_hot(torch.tensor([0, 5]).npu(), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(torch.tensor([-1, 0]).npu(), 3)
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type LongTensor"):
        F.one_hot(torch.tensor([0.5]).npu(), 3)
    torch.npu.synchronize()
    assert torch.equal(F.one_hot(y.npu(), 6).cpu(), F.one_hot(y, 6))  # still usable after the errors


def test_cpu_index_tensors_are_accepted():
    # as PyTorch's device indexing: x[cpu_idx], x[cpu_mask], x[cpu_i, cpu_j] and their assignments
    x = torch.arange(12.0).view(3, 4)
    xd = x.npu()
    i, j, m = torch.tensor([2, 0]), torch.tensor([1, 3]), torch.tensor([True, False, True])
    for key in (i, m, (slice(None), j), (i, j)):
        assert torch.equal(xd[key].cpu(), x[key])
        y, z = xd.clone(), x.clone()
        y[key] = 7.0
        z[key] = 7.0
        assert torch.equal(y.cpu(), z)
    y, z = xd.clone(), x.clone()
    y.index_put_((i,), torch.ones(2, 4).npu(), accumulate=True)
    z.index_put_((i,), torch.ones(2, 4), accumulate=True)
    assert torch.equal(y.cpu(), z)
