"""F.embedding_bag / nn.EmbeddingBag on npu (searchsorted bags, index_select rows, index_add or
scatter_reduce into bags; autograd through those ops) against the CPU: sum / mean / max, offsets with
an empty bag, include_last_offset, padding_idx, per_sample_weights, 2-D input, gradients of the
weight and the sample weights, and bad input."""
import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.usefixtures("fallback_error")

W = torch.randn(20, 5, generator=torch.Generator().manual_seed(3))
INP = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0, 7])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4])
@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("idx_dtype", [torch.int64, torch.int32])
def test_matches_cpu_with_gradients(mode, padding_idx, include_last_offset, idx_dtype):
    off = torch.tensor([0, 4, 4, 8, 11] if include_last_offset else [0, 4, 4, 8], dtype=idx_dtype)
    inp = INP.to(idx_dtype)
    psw = torch.rand(11, generator=torch.Generator().manual_seed(1)) if mode == "sum" else None
    wc, wd = W.clone().requires_grad_(), W.clone().npu().requires_grad_()
    pc = psw.clone().requires_grad_() if psw is not None else None
    pd = psw.npu().requires_grad_() if psw is not None else None
    kw = dict(mode=mode, include_last_offset=include_last_offset, padding_idx=padding_idx)
    y = F.embedding_bag(inp, wc, off, per_sample_weights=pc, **kw)
    yd = F.embedding_bag(inp.npu(), wd, off.npu(), per_sample_weights=pd, **kw)
    torch.testing.assert_close(yd.detach().cpu(), y.detach())
    g = torch.randn(y.shape, generator=torch.Generator().manual_seed(2))
    y.backward(g)
    yd.backward(g.npu())
    torch.testing.assert_close(wd.grad.cpu(), wc.grad)
    if pc is not None:
        torch.testing.assert_close(pd.grad.cpu(), pc.grad)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_2d_input_and_module(mode):
    x = torch.randint(0, 20, (6, 3), generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(F.embedding_bag(x.npu(), W.npu(), mode=mode).cpu(), F.embedding_bag(x, W, mode=mode))
    m = torch.nn.EmbeddingBag(20, 5, mode=mode)
    md = torch.nn.EmbeddingBag(20, 5, mode=mode)
    md.load_state_dict(m.state_dict())
    torch.testing.assert_close(md.npu()(x.npu()).detach().cpu(), m(x).detach())


def test_bad_input():
    w = W.npu()
    with pytest.raises((RuntimeError, ValueError), match=r"per_sample_weights"):
        F.embedding_bag(INP.npu(), w, torch.tensor([0, 4]).npu(), mode="mean", per_sample_weights=torch.rand(11).npu())
    with pytest.raises(RuntimeError, match=r"input has to be 1D or 2D|has to be 1D or 2D"):
        torch.embedding_bag(w, torch.zeros(2, 2, 2, dtype=torch.long).npu(), torch.tensor([0]).npu())
    with pytest.raises(RuntimeError, match=r"out of range|out of bounds"):
        F.embedding_bag(torch.tensor([1, 25]).npu(), w, torch.tensor([0]).npu())
        torch.npu.synchronize()
    assert F.embedding_bag(torch.tensor([1, 2]).npu(), w, torch.tensor([0]).npu()).shape == (1, 5)  # still usable


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_negative_padding_idx_counts_from_the_end(mode):
    torch.manual_seed(0)
    w, idx, off = torch.randn(5, 4), torch.tensor([0, 4, 4, 1, 2, 3]), torch.tensor([0, 3])
    psw = torch.randn(6) if mode == "sum" else None
    for pidx in (-1, -5):
        want = F.embedding_bag(idx, w, off, mode=mode, per_sample_weights=psw, padding_idx=pidx)
        got = F.embedding_bag(idx.npu(), w.npu(), off.npu(), mode=mode,
                              per_sample_weights=None if psw is None else psw.npu(), padding_idx=pidx)
        torch.testing.assert_close(got.cpu(), want)
    with pytest.raises(RuntimeError, match=r"padding_idx must be within the number of embeddings, -5 through 4, "
                                           r"but got -6"):
        torch.embedding_bag(w.npu(), idx.npu(), off.npu(), False, 0, False, None, False, -6)
