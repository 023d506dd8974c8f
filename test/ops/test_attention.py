"""Attention on npu against the CPU: nn.MultiheadAttention's inference fast path
(_native_multi_head_attention), nn.TransformerEncoderLayer's (_transformer_encoder_layer_fwd), the
training path through scaled_dot_product_attention's math (which needs isneginf), with every op native
(fallback_error)."""
import copy
import warnings

import pytest
import torch

import torch_ops_nn  # noqa: F401

pytestmark = pytest.mark.usefixtures("fallback_error")


def close(got, want, tol=2e-6):
    got = got.cpu()
    assert got.shape == want.shape
    assert torch.equal(got.isnan(), want.isnan())
    g, w = got.nan_to_num(0.0), want.nan_to_num(0.0)
    assert (g - w).abs().max().item() <= tol * max(w.abs().max().item(), 1e-30)


@pytest.mark.parametrize("E,H,B,T", [(64, 4, 2, 10), (48, 3, 3, 7), (30, 3, 2, 6)])  # head dims 16, 16, 10
def test_multihead_attention_fast_path(E, H, B, T):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True).eval()
    md = copy.deepcopy(mha).npu()
    x = torch.randn(B, T, E)
    xn = x.npu()
    kpm = torch.rand(B, T) < 0.3
    kpm[0, :] = True  # a fully masked row
    am = torch.rand(T, T) < 0.3
    with torch.no_grad():
        for kw in [dict(need_weights=False), dict(need_weights=True), dict(need_weights=True, average_attn_weights=False),
                   dict(key_padding_mask=kpm, need_weights=False), dict(key_padding_mask=kpm, need_weights=True),
                   dict(attn_mask=am, need_weights=True), dict(attn_mask=am, need_weights=False)]:
            want = mha(x, x, x, **kw)
            dkw = {k: (v.npu() if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
            got = md(xn, xn, xn, **dkw)
            close(got[0], want[0])
            if kw["need_weights"]:
                close(got[1], want[1])
        y = torch.randn(B, T, E)  # cross attention: the Python path, scaled_dot_product_attention's math
        close(md(xn, y.npu(), y.npu(), need_weights=False)[0], mha(x, y, y, need_weights=False)[0])


def test_native_multi_head_attention_bad_args():
    mha = torch.nn.MultiheadAttention(64, 4, batch_first=True).eval().npu()
    x = torch.randn(2, 5, 64).npu()
    with pytest.raises(RuntimeError, match=r"_native_multi_head_attention: passed-in embed_dim 48 didn't match"):
        torch._native_multi_head_attention(x, x, x, 48, 4, mha.in_proj_weight, mha.in_proj_bias,
                                           mha.out_proj.weight, mha.out_proj.bias)
    with pytest.raises(RuntimeError, match=r"must divide evenly by `num_heads` \(5\)"):
        torch._native_multi_head_attention(x, x, x, 64, 5, mha.in_proj_weight, mha.in_proj_bias,
                                           mha.out_proj.weight, mha.out_proj.bias)


@pytest.mark.parametrize("norm_first,activation", [(False, "relu"), (True, "gelu")])
def test_transformer_encoder_layer_fast_path(norm_first, activation):
    torch.manual_seed(1)
    enc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True, norm_first=norm_first, activation=activation),
        2, enable_nested_tensor=False).eval()
    dev = copy.deepcopy(enc).npu()
    x = torch.randn(2, 9, 64)
    kpm = torch.rand(2, 9) < 0.3
    with torch.no_grad():
        close(dev(x.npu()), enc(x))
        close(dev(x.npu(), src_key_padding_mask=kpm.npu()), enc(x, src_key_padding_mask=kpm))


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_nested_tensor_fast_path(fallback_error, activation):
    # The default enable_nested_tensor=True: in eval mode with a (left-aligned) padding mask the encoder packs
    # the real tokens into a nested tensor, runs each layer on it and pads the result back with zeros.
    torch.manual_seed(2)
    enc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, activation=activation), 3,
        norm=torch.nn.LayerNorm(32)).eval()
    dev = copy.deepcopy(enc).npu()
    x = torch.randn(3, 7, 32)
    kpm = torch.arange(7)[None] >= torch.tensor([7, 4, 1])[:, None]  # lengths 7, 4, 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's "nested tensors are a prototype" warning
        with torch.no_grad():
            got = dev(x.npu(), src_key_padding_mask=kpm.npu())
            want = enc(x, src_key_padding_mask=kpm)
    assert got.shape == want.shape == (3, 7, 32)
    close(got, want)
    assert torch.equal(got.cpu()[kpm], torch.zeros(int(kpm.sum()), 32))


def test_nested_tensor_ops_without_a_kernel_say_so(fallback_error):
    nt = torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)], device="npu")
    assert nt.is_nested and nt.device.type == "npu"
    with pytest.raises(NotImplementedError, match=r"npu: 'aten::add.Tensor' is not supported for nested tensors on npu"):
        nt + 1
    padded = torch.ops.aten._nested_tensor_from_mask(torch.randn(2, 3, 4).npu(),
                                                      torch.tensor([[True, True, False], [True, False, False]]).npu())
    assert padded.to_padded_tensor(-1.0).cpu()[1, 1:].eq(-1).all()
    with pytest.raises(RuntimeError, match="_nested_tensor_from_mask: the mask must be left-aligned"):
        torch.ops.aten._nested_tensor_from_mask(torch.randn(1, 3, 4).npu(), torch.tensor([[False, True, True]]).npu())


def test_multihead_attention_training_step():
    """Training mode takes F.multi_head_attention_forward: the output and every gradient match."""
    torch.manual_seed(2)
    mha = torch.nn.MultiheadAttention(32, 4, batch_first=True)
    md = copy.deepcopy(mha).npu()
    x = torch.randn(3, 6, 32, requires_grad=True)
    xn = x.detach().npu().requires_grad_()
    am = torch.rand(6, 6) < 0.2
    out = mha(x, x, x, attn_mask=am, need_weights=False)[0]
    dout = md(xn, xn, xn, attn_mask=am.npu(), need_weights=False)[0]
    close(dout, out.detach())
    g = torch.randn_like(out)
    out.backward(g)
    dout.backward(g.npu())
    close(xn.grad, x.grad, 1e-5)
    for (n, p), (_, q) in zip(mha.named_parameters(), md.named_parameters()):
        close(q.grad, p.grad, 1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.bool])
def test_isposinf_isneginf(dtype):
    x = torch.tensor([1.0, -float("inf"), float("inf"), float("nan"), 0.0, -0.0])
    x = x.to(dtype) if dtype.is_floating_point else torch.tensor([1, 0, -3, 7, 0, 2]).to(dtype)
    for fn in (torch.isposinf, torch.isneginf):
        assert torch.equal(fn(x.npu()).cpu(), fn(x))
        out = torch.empty(0, dtype=torch.bool).npu()
        fn(x.npu(), out=out)
        assert torch.equal(out.cpu(), fn(x))
