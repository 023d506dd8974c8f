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


# ---- F.scaled_dot_product_attention: the overrideable backend (csrc/aten/sdpa.cpp)

def sdpa_ops(fn):
    """The aten ops one call runs (to tell the overrideable path from the math composition)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as p:
        fn()
    return {e.key for e in p.key_averages()}


def qkv(B, H, L, S, E, Ev, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, H, L, E, generator=g).to(dtype), torch.randn(B, H, S, E, generator=g).to(dtype),
            torch.randn(B, H, S, Ev, generator=g).to(dtype))


MASKS = {
    "none": lambda B, H, L, S: None,
    "causal": lambda B, H, L, S: "causal",
    "bool_full": lambda B, H, L, S: torch.rand(B, H, L, S, generator=torch.Generator().manual_seed(1)) > 0.3,
    "bool_padding": lambda B, H, L, S: torch.arange(S).expand(B, 1, L, S) < torch.tensor([S, S // 2]).view(B, 1, 1, 1),
    "bool_2d": lambda B, H, L, S: torch.rand(L, S, generator=torch.Generator().manual_seed(2)) > 0.3,
    "float_bias": lambda B, H, L, S: torch.randn(B, 1, 1, S, generator=torch.Generator().manual_seed(3)),
}


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("shape", [(2, 3, 10, 12, 8, 8), (2, 3, 12, 10, 16, 5), (2, 4, 33, 1, 16, 16)])
def test_sdpa_overrideable_inference_matches_cpu(mask, shape):
    B, H, L, S, E, Ev = shape
    q, k, v = qkv(*shape)
    m = MASKS[mask](B, H, L, S)
    kw = dict(is_causal=True) if m == "causal" else dict(attn_mask=m)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
    kn = dict(kw)
    if isinstance(m, torch.Tensor):
        kn["attn_mask"] = m.to("npu")
    qn, kn_, vn = q.to("npu"), k.to("npu"), v.to("npu")
    ops = sdpa_ops(lambda: torch.nn.functional.scaled_dot_product_attention(qn, kn_, vn, **kn))
    assert "aten::_scaled_dot_product_fused_attention_overrideable" in ops
    out = torch.nn.functional.scaled_dot_product_attention(qn, kn_, vn, **kn)
    torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5)


def test_sdpa_overrideable_fully_masked_rows_and_16_bit():
    q, k, v = qkv(2, 3, 10, 12, 8, 8)
    m = torch.rand(2, 1, 10, 12) > 0.3
    m[0, 0, 4] = False  # query 4 of batch 0 sees no key: zeros, as the CPU's math path
    out = torch.nn.functional.scaled_dot_product_attention(q.to("npu"), k.to("npu"), v.to("npu"), attn_mask=m.to("npu"))
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)
    torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5)
    assert (out[0, :, 4].cpu() == 0).all()
    for dtype, tol in ((torch.float16, 2e-3), (torch.bfloat16, 2e-2)):
        q, k, v = qkv(1, 8, 128, 128, 64, 64, dtype)
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
        out = torch.nn.functional.scaled_dot_product_attention(q.to("npu"), k.to("npu"), v.to("npu"), is_causal=True)
        assert out.dtype == dtype
        torch.testing.assert_close(out.cpu().float(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_training_takes_math_and_the_forced_overrideable_backward_matches(causal):
    """With inputs that require grad the math path runs (cheaper than this backend's recompute); under
    sdpa_kernel(OVERRIDEABLE) the overrideable forward and backward run, and both match the CPU."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = qkv(2, 3, 10, 12, 8, 6, seed=4)
    mask = None if causal else torch.rand(2, 3, 10, 12, generator=torch.Generator().manual_seed(5)) > 0.3
    go = torch.randn(2, 3, 10, 6, generator=torch.Generator().manual_seed(6))
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    torch.nn.functional.scaled_dot_product_attention(*leaves, attn_mask=mask, is_causal=causal).backward(go)
    mn = None if mask is None else mask.to("npu")
    for forced in (False, True):
        nl = [t.to("npu").requires_grad_() for t in (q, k, v)]
        def run():
            out = torch.nn.functional.scaled_dot_product_attention(*nl, attn_mask=mn, is_causal=causal)
            out.backward(go.to("npu"))
            return out
        if forced:
            with sdpa_kernel(SDPBackend.OVERRIDEABLE):
                ops = sdpa_ops(run)
            assert "aten::_scaled_dot_product_fused_attention_overrideable_backward" in ops
        else:
            ops = sdpa_ops(run)
            assert "aten::_scaled_dot_product_fused_attention_overrideable" not in ops
        for a, b in zip(leaves, nl):
            torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-4, atol=1e-5)


def test_sdpa_learned_bias_keeps_its_gradient_and_dropout_takes_math():
    q, k, v = qkv(2, 3, 10, 12, 8, 8, seed=7)
    bias = torch.randn(1, 3, 10, 12, generator=torch.Generator().manual_seed(8))
    bc, bn = bias.clone().requires_grad_(), bias.to("npu").requires_grad_()
    torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bc).sum().backward()
    torch.nn.functional.scaled_dot_product_attention(q.to("npu"), k.to("npu"), v.to("npu"), attn_mask=bn).sum().backward()
    torch.testing.assert_close(bn.grad.cpu(), bc.grad, rtol=1e-4, atol=1e-5)
    qn = q.to("npu")
    ops = sdpa_ops(lambda: torch.nn.functional.scaled_dot_product_attention(qn, qn, qn, dropout_p=0.5))
    assert "aten::_scaled_dot_product_fused_attention_overrideable" not in ops


def test_sdpa_math_forced_by_environment():
    from conftest import run_python
    code = ("import torch, torch_ops_nn\n"
            "from torch.profiler import profile, ProfilerActivity\n"
            "q = torch.randn(1, 2, 4, 8).to('npu')\n"
            "with profile(activities=[ProfilerActivity.CPU]) as p:\n"
            "    torch.nn.functional.scaled_dot_product_attention(q, q, q)\n"
            "print(any('overrideable' in e.key for e in p.key_averages()))\n")
    r = run_python(code, {"TORCH_OPS_NN_SDPA": "math"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("False")


@pytest.mark.parametrize("H,Hk,causal,mask", [(8, 2, False, None), (8, 2, True, None), (6, 3, False, "bool"),
                                              (4, 1, False, "float"), (8, 4, False, "full")])
def test_sdpa_grouped_query_attention(H, Hk, causal, mask):
    """enable_gqa: the query heads sharing a key / value head run as stacked rows of one product (no
    repeat of k / v), forward and (forced) backward equal to the CPU's."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    B, L, S, E = 2, 10, 12, 8
    g = torch.Generator().manual_seed(H * 10 + Hk)
    q, k, v = torch.randn(B, H, L, E, generator=g), torch.randn(B, Hk, S, E, generator=g), torch.randn(B, Hk, S, 5, generator=g)
    m = {None: None, "bool": torch.rand(B, 1, L, S, generator=g) > 0.3, "float": torch.randn(L, S, generator=g),
         "full": torch.rand(B, H, L, S, generator=g) > 0.3}[mask]
    kw = dict(is_causal=causal, attn_mask=m, enable_gqa=True)
    kn = dict(kw, attn_mask=None if m is None else m.to("npu"))
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
    qn, k_n, vn = q.to("npu"), k.to("npu"), v.to("npu")
    ops = sdpa_ops(lambda: torch.nn.functional.scaled_dot_product_attention(qn, k_n, vn, **kn))
    assert "aten::_scaled_dot_product_fused_attention_overrideable" in ops
    torch.testing.assert_close(torch.nn.functional.scaled_dot_product_attention(qn, k_n, vn, **kn).cpu(), ref,
                               rtol=1e-5, atol=1e-5)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    torch.nn.functional.scaled_dot_product_attention(*leaves, **kw).sum().backward()
    nl = [t.to("npu").requires_grad_() for t in (q, k, v)]
    with sdpa_kernel(SDPBackend.OVERRIDEABLE):
        torch.nn.functional.scaled_dot_product_attention(*nl, **kn).sum().backward()
    for a, b in zip(leaves, nl):
        torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-4, atol=1e-5)
