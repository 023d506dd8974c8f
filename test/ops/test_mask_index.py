"""Boolean-mask ops (the nonzero kernel: per-core counts, read back, then in-order writes of the set
positions): nonzero / argwhere, masked_select and x[mask] against PyTorch's CPU results over sizes that
span one chunk, several chunks and several cores (with tails), every mask density, any dtype for
nonzero, broadcasting and non-contiguous inputs; bad input; independence of the host thread count."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")

SHAPES = [(1,), (7,), (5, 4), (3, 7, 11), (8192,), (8193,), (70001,), (300007,), (2, 3, 0), (4, 1, 5, 6)]


def _mask(shape, density, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g) < density


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("density", [0.0, 0.03, 0.5, 1.0])
def test_nonzero_and_masked_select_match_cpu(shape, density):
    m = _mask(shape, density)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    mn, xn = m.npu(), x.npu()
    got = torch.nonzero(mn)
    assert got.dtype == torch.int64 and got.device.type == "npu"
    assert torch.equal(got.cpu(), torch.nonzero(m))
    assert torch.equal(torch.argwhere(mn).cpu(), torch.argwhere(m))
    assert torch.equal(torch.masked_select(xn, mn).cpu(), torch.masked_select(x, m))
    assert torch.equal(xn[mn].cpu(), x[m])
    for a, b in zip(mn.nonzero(as_tuple=True), m.nonzero(as_tuple=True)):
        assert torch.equal(a.cpu(), b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                                   torch.uint8, torch.bool])
def test_nonzero_of_any_dtype(dtype):
    g = torch.Generator().manual_seed(3)
    x = (torch.randint(-2, 3, (37, 29), generator=g)).to(dtype)
    if dtype.is_floating_point:
        x[0, 0], x[1, 1], x[2, 2] = float("nan"), -0.0, float("inf")  # NaN and inf are nonzero, -0.0 is not
    assert torch.equal(torch.nonzero(x.npu()).cpu(), torch.nonzero(x))
    assert torch.equal(torch.count_nonzero(x.npu()).cpu(), torch.count_nonzero(x))


def test_masked_select_broadcasts_and_takes_noncontiguous_inputs():
    x = torch.randn(6, 9)
    m_row = torch.tensor([True, False, True, True, False, False, True, False, True])
    assert torch.equal(torch.masked_select(x.npu(), m_row.npu()).cpu(), torch.masked_select(x, m_row))
    m_col = torch.rand(6, 1) < 0.5
    assert torch.equal(torch.masked_select(x.npu(), m_col.npu()).cpu(), torch.masked_select(x, m_col))
    xt, mt = x.t(), (torch.rand(6, 9) < 0.4).t()
    assert torch.equal(torch.masked_select(xt.npu(), mt.npu()).cpu(), torch.masked_select(xt, mt))
    assert torch.equal(torch.nonzero(mt.npu()).cpu(), torch.nonzero(mt))
    # masked_select of a scalar self broadcast over the mask
    s, m = torch.tensor(2.5), torch.rand(4, 3) < 0.5
    assert torch.equal(torch.masked_select(s.npu(), m.npu()).cpu(), torch.masked_select(s, m))
    out = torch.empty(0, device="npu")
    torch.masked_select(x.npu(), (x > 0).npu(), out=out)
    assert torch.equal(out.cpu(), x[x > 0])
    out_i = torch.empty(0, dtype=torch.long, device="npu")
    torch.nonzero((x > 0).npu(), out=out_i)
    assert torch.equal(out_i.cpu(), torch.nonzero(x > 0))


def test_mask_index_in_the_middle_and_of_integer_data():
    x = torch.arange(4 * 5 * 6).reshape(4, 5, 6)
    m = _mask((5, 6), 0.5, seed=4)
    assert torch.equal(x.npu()[:, m.npu()].cpu(), x[:, m])
    m2 = _mask((4, 5), 0.5, seed=5)
    assert torch.equal(x.npu()[m2.npu()].cpu(), x[m2])
    assert torch.equal(x.npu()[x.npu() % 7 == 0].cpu(), x[x % 7 == 0])
    h = torch.randn(3, 8, dtype=torch.float16)
    assert torch.equal(h.npu()[h.npu() > 0].cpu(), h[h > 0])


def test_bad_input_is_a_clear_error_and_the_device_keeps_working():
    x, m = torch.randn(3, 4), torch.rand(3, 4) < 0.5
    with pytest.raises(RuntimeError, match="masked_select: expected BoolTensor for mask"):
        torch.masked_select(x.npu(), m.to(torch.uint8).npu())
    with pytest.raises(IndexError, match=r"shape of the mask \[3, 5\] at index 1 does not match"):
        x.npu()[torch.ones(3, 5, dtype=torch.bool).npu()]
    with pytest.raises(RuntimeError, match="must match the size"):
        torch.masked_select(x.npu(), torch.ones(5, dtype=torch.bool).npu())
    with pytest.raises(RuntimeError, match="masked_select.*mask.*cpu|mask.*npu"):
        torch.masked_select(x.npu(), m)
    with pytest.raises(TypeError, match="nonzero: Expected object of scalar type Long as out, but got Float"):
        torch.nonzero(m.npu(), out=torch.empty(0, device="npu"))
    assert torch.equal(x.npu()[m.npu()].cpu(), x[m])


def test_results_do_not_depend_on_host_threads():
    from conftest import run_python

    code = ("import torch, torch_ops_nn; g = torch.Generator().manual_seed(0); "
            "m = (torch.rand(1000003, generator=g) < 0.3).to('npu'); x = torch.randn(1000003, generator=g).to('npu'); "
            "print(torch.nonzero(m).sum().item(), x[m].sum().item(), torch.nonzero(m).shape)")
    runs = [run_python(code, {"TORCH_OPS_NN_HOST_THREADS": n}) for n in ("1", "3")]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout == runs[1].stdout
