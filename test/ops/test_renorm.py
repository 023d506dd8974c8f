"""renorm and embedding max_norm (embedding_renorm_) on npu against the CPU: they took the CPU fallback."""
import pytest
import torch
import torch.nn.functional as F

import torch_ops_nn  # noqa: F401


@pytest.mark.parametrize("p,dim,maxnorm", [(2, 0, 3.0), (1, 1, 2.5), (3, -1, 1.0), (float("inf"), 0, 1.5),
                                           (2, 2, 100.0), (2, 1, 0.0)])
def test_renorm_matches_cpu(p, dim, maxnorm, fallback_error):
    torch.manual_seed(0)
    x = torch.randn(5, 4, 3) * 2
    ref = torch.renorm(x, p, dim, maxnorm)
    assert torch.allclose(torch.renorm(x.to("npu"), p, dim, maxnorm).cpu(), ref, atol=3e-7, rtol=1e-6)
    y = x.to("npu")
    y.renorm_(p, dim, maxnorm)
    assert torch.allclose(y.cpu(), ref, atol=3e-7, rtol=1e-6)
    h = torch.renorm(x.to("npu", torch.bfloat16), p, dim, maxnorm)
    assert h.dtype == torch.bfloat16 and torch.allclose(h.float().cpu(), ref, atol=3e-2, rtol=3e-2)


def test_renorm_errors(fallback_error):
    with pytest.raises(RuntimeError, match="renorm: input needs at least 2 dimensions, got 1"):
        torch.renorm(torch.ones(3).to("npu"), 2, 0, 1.0)
    with pytest.raises(RuntimeError, match="renorm: non-positive-norm not supported"):
        torch.renorm(torch.ones(3, 3).to("npu"), 0, 0, 1.0)
    with pytest.raises(RuntimeError, match="expected maxnorm to be >= 0 but got -1"):
        torch.renorm(torch.ones(3, 3).to("npu"), 2, 0, -1.0)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_max_norm_renormalizes_the_used_rows(norm_type, fallback_error):
    torch.manual_seed(1)
    w = torch.randn(10, 6) * 2
    idx = torch.tensor([[1, 3, 3], [7, 1, 0]])
    wc, wn = w.clone(), w.to("npu")
    ref = F.embedding(idx, wc, max_norm=1.5, norm_type=norm_type)
    out = F.embedding(idx.to("npu"), wn, max_norm=1.5, norm_type=norm_type)
    assert torch.allclose(out.cpu(), ref, atol=3e-7)
    assert torch.allclose(wn.cpu(), wc, atol=3e-7)          # the weight is renormalized in place
    assert not torch.equal(wc, w) and torch.equal(wc[2], w[2])  # only the rows the indices name
    emb = torch.nn.Embedding(10, 6, max_norm=1.0, norm_type=norm_type)
    dev = torch.nn.Embedding(10, 6, max_norm=1.0, norm_type=norm_type)
    dev.load_state_dict(emb.state_dict())
    dev = dev.to("npu")
    loss_ref, loss = emb(idx).square().sum(), dev(idx.to("npu")).square().sum()
    loss_ref.backward()
    loss.backward()
    assert torch.allclose(dev.weight.grad.cpu(), emb.weight.grad, atol=1e-6)
    assert torch.allclose(dev.weight.detach().cpu(), emb.weight.detach(), atol=3e-7)
