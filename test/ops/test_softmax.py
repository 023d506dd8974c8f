"""softmax / log_softmax forward and backward on npu against PyTorch's CPU results.

Tolerances: float32 rtol 1e-5 / atol 1e-6 forward, rtol 1e-4 / atol 1e-5 backward (sums of products);
float16 and bfloat16 are compared with the CPU float32 result rounded to the dtype: rtol/atol 2e-3 (half),
1.6e-2 (bfloat16). Every test runs with TORCH_OPS_NN_FALLBACK=error (fallback_error).
"""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
FWD_TOL = {torch.float32: (1e-5, 1e-6), torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}
BWD_TOL = {torch.float32: (1e-4, 1e-5), torch.float16: (4e-3, 4e-3), torch.bfloat16: (3.2e-2, 3.2e-2)}
FUNCS = {"softmax": torch.softmax, "log_softmax": torch.log_softmax}


def npu(t):
    return t.to("npu")


def sample(shape, dtype=torch.float32, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * scale).to(dtype)


def close(out, ref, dtype, tol):
    assert out.device.type == "npu" and out.dtype == dtype
    rtol, atol = tol[dtype]
    torch.testing.assert_close(out.cpu().float(), ref.to(dtype).float(), rtol=rtol, atol=atol, equal_nan=True)


SHAPES = [
    ((64, 4096), -1),      # rows, packed
    ((7, 10), 1),          # short rows
    ((5, 33), 0),          # columns
    ((3, 5, 7), 1),        # columns, middle dim
    ((2, 3, 4, 5), 2),
    ((6, 129), 1),
    ((300,), 0),
    ((4, 1), 1),           # dim of size 1
    ((2, 30000), 1),       # rows longer than a tile: streamed
    ((1, 70000), -1),
    ((4, 3, 20000), 1),    # columns, wide
    ((2, 5000, 3), 1),     # columns, long dim: several row tiles per pass
    ((5000, 10), 1),       # many short rows: transposed to columns
    ((257, 64), 1),        # rows of one repeat: WholeReduce + Brcb / repeat-form per 255 rows
    ((40, 33), -1),        # a partial repeat (mask 33)
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(FUNCS))
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_forward(shape, dim, name, dtype):
    x = sample(shape, dtype, seed=len(shape))
    f = FUNCS[name]
    close(f(npu(x), dim), f(x.float(), dim), dtype, FWD_TOL)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(FUNCS))
@pytest.mark.parametrize("shape,dim", SHAPES[:8] + [SHAPES[8], SHAPES[11], SHAPES[12]])
def test_backward_via_autograd(shape, dim, name, dtype):
    f = FUNCS[name]
    x = sample(shape, dtype, seed=1)
    g = sample(shape, dtype, seed=2, scale=1.0)
    xc = x.float().requires_grad_()
    (ref,) = torch.autograd.grad(f(xc, dim), xc, g.float())
    xd = npu(x).requires_grad_()
    (got,) = torch.autograd.grad(f(xd, dim), xd, npu(g))
    close(got, ref, dtype, BWD_TOL)


@pytest.mark.parametrize("name", list(FUNCS))
def test_every_dim_of_a_4d_tensor(name):
    x = sample((3, 4, 5, 6))
    f = FUNCS[name]
    for dim in range(-4, 4):
        close(f(npu(x), dim), f(x, dim), torch.float32, FWD_TOL)


@pytest.mark.parametrize("name", list(FUNCS))
def test_non_contiguous_input(name):
    base = sample((20, 30))
    f = FUNCS[name]
    for view in (lambda t: t.t(), lambda t: t[::2, 3:], lambda t: t[:, :1].expand(20, 7)):
        close(f(view(npu(base)), 1), f(view(base), 1), torch.float32, FWD_TOL)


def test_minus_inf_and_large_values():
    x = torch.tensor([[1.0, float("-inf"), 2.0, 0.5],
                      [float("-inf")] * 4,                # all -inf: NaN, as on CPU
                      [1e4, -1e4, 3e4, 3e4],               # max-subtracted: no overflow
                      [-1e30, 0.0, 1e30, 5.0]])
    d = npu(x)
    for name, f in FUNCS.items():
        torch.testing.assert_close(f(d, 1).cpu(), f(x, 1), equal_nan=True)
    long = torch.full((3, 50000), float("-inf"))
    long[:, 123] = 0.0
    long[1, 40000] = 0.0
    torch.testing.assert_close(torch.softmax(npu(long), 1).cpu(), torch.softmax(long, 1))
    torch.testing.assert_close(torch.log_softmax(npu(long), 1).cpu(), torch.log_softmax(long, 1))


def test_half_to_float():
    x = sample((13, 77), torch.float16)
    y = torch._softmax(npu(x), 1, True)
    assert y.dtype == torch.float32
    torch.testing.assert_close(y.cpu(), torch.softmax(x.float(), 1), rtol=1e-5, atol=1e-6)
    ly = torch._log_softmax(npu(x), 0, True)
    torch.testing.assert_close(ly.cpu(), torch.log_softmax(x.float(), 0), rtol=1e-5, atol=1e-5)
    g = sample((13, 77), seed=3, scale=1.0)
    gi = torch._softmax_backward_data(npu(g), y, 1, torch.float16)
    assert gi.dtype == torch.float16
    ref = torch._softmax_backward_data(g, torch.softmax(x.float(), 1), 1, torch.float32)
    close(gi, ref, torch.float16, BWD_TOL)
    lgi = torch._log_softmax_backward_data(npu(g), ly, 0, torch.float16)
    ref = torch._log_softmax_backward_data(g, torch.log_softmax(x.float(), 0), 0, torch.float32)
    close(lgi, ref, torch.float16, BWD_TOL)


def test_softmax_dtype_argument():
    x = sample((9, 17), torch.float16)
    y = torch.softmax(npu(x), 1, dtype=torch.float32)
    assert y.dtype == torch.float32
    torch.testing.assert_close(y.cpu(), torch.softmax(x.float(), 1))


def test_zero_dim_and_empty():
    s = npu(torch.tensor(2.5))
    assert torch.softmax(s, 0).cpu() == 1.0 and torch.log_softmax(s, -1).cpu() == 0.0
    e = npu(torch.empty(0, 5))
    assert torch.softmax(e, 1).shape == (0, 5) and torch.log_softmax(e, 0).shape == (0, 5)


def test_out_variants():
    x = sample((6, 10))
    d = npu(x)
    out = npu(torch.empty(0))
    assert torch._softmax(d, 1, False, out=out) is out
    torch.testing.assert_close(out.cpu(), torch.softmax(x, 1))
    out = npu(torch.empty(0))
    torch._log_softmax(d, 0, False, out=out)
    torch.testing.assert_close(out.cpu(), torch.log_softmax(x, 0))
    y = torch.softmax(x, 1)
    g = sample((6, 10), seed=5)
    out = npu(torch.empty(0))
    torch._softmax_backward_data(npu(g), npu(y), 1, torch.float32, grad_input=out)
    torch.testing.assert_close(out.cpu(), torch._softmax_backward_data(g, y, 1, torch.float32), rtol=1e-4, atol=1e-5)
    ly = torch.log_softmax(x, 1)
    out = npu(torch.empty(0))
    torch._log_softmax_backward_data(npu(g), npu(ly), 1, torch.float32, out=out)
    torch.testing.assert_close(out.cpu(), torch._log_softmax_backward_data(g, ly, 1, torch.float32),
                               rtol=1e-4, atol=1e-5)


def test_errors():
    d = npu(sample((3, 4)))
    with pytest.raises(IndexError, match=r"_softmax: Dimension out of range \(expected to be in range of \[-2, 1\], "
                                         r"but got 2\)"):
        torch.softmax(d, 2)
    with pytest.raises(IndexError, match=r"_log_softmax: Dimension out of range .* but got -3"):
        torch.log_softmax(d, -3)
    with pytest.raises(NotImplementedError, match="_softmax: argument 'self' has dtype Long, which is not supported"):
        torch.softmax(npu(torch.ones(3, dtype=torch.long)), 0)
    with pytest.raises(RuntimeError, match="_softmax: half_to_float conversion is supported for Half input only"):
        torch._softmax(d, 1, True)
    y = torch.softmax(d, 1)
    with pytest.raises(RuntimeError, match=r"_softmax_backward_data: grad_output of shape \[3, 5\] does not match "
                                           r"output of shape \[3, 4\]"):
        torch._softmax_backward_data(npu(torch.ones(3, 5)), y, 1, torch.float32)
    with pytest.raises(RuntimeError, match="_softmax_backward_data: grad_output has dtype Half but output has dtype"):
        torch._softmax_backward_data(y.half(), y, 1, torch.float32)
    with pytest.raises(RuntimeError, match="_log_softmax_backward_data: input_dtype BFloat16 with grad_output of dtype "
                                           "Float is not supported"):
        torch._log_softmax_backward_data(y, y, 1, torch.bfloat16)


def test_mixed_devices_are_refused():
    d = npu(sample((3, 4)))
    y = torch.softmax(d, 1)
    with pytest.raises(RuntimeError, match=r"_softmax_backward_data: argument 'grad_output' is on cpu, but npu "
                                           r"tensors are expected"):
        torch._softmax_backward_data(torch.ones(3, 4), y, 1, torch.float32)
    with pytest.raises(RuntimeError, match=r"_softmax: argument 'out' is on cpu"):
        torch._softmax(d, 1, False, out=torch.empty(3, 4))
    if torch.npu.device_count() > 1:
        with pytest.raises(RuntimeError, match=r"argument 'output' is on npu:1 but 'grad_output' is on npu:0"):
            torch._log_softmax_backward_data(d, y.to("npu:1"), 1, torch.float32)


def test_310p_is_refused_with_a_reason():
    """The kernels need DataCopyPad (arch 2201): a 2002 SoC gets a clear error before any launch."""
    from conftest import run_python

    code = ("import torch, torch_ops_nn\n"
            "x = torch.randn(10, 10).to('npu:1')\n"
            "for f in (lambda: torch.softmax(x, 1), lambda: x.sum(), lambda: x.argmax(1)):\n"
            "    try:\n        f()\n    except RuntimeError as e:\n        print(e)\n"
            "print(torch.ones(4, 4).to('npu:0').sum().item())\n")
    r = run_python(code, {"TORCH_OPS_NN_DEVICE_COUNT": "2", "TORCH_OPS_NN_SOC": "Ascend910B2,Ascend310P3"})
    assert r.returncode == 0, r.stderr
    for op in ("_softmax", "sum", "argmax"):
        assert f"{op}: npu:1 is an Ascend310P3 (arch 2002); this op's Ascend C kernel needs DataCopyPad" in r.stdout
    assert r.stdout.strip().endswith("16.0")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("R", [7, 128, 1000, 20000])  # packed rows, and (20000) a row streamed in tiles
def test_safe_softmax_zeroes_fully_masked_rows(dtype, R):
    """_safe_softmax (scaled_dot_product_attention's softmax): a row of all -inf gives zeros, a row with a
    NaN among -inf values NaN, a partly masked row the plain softmax; the kernel examines only rows whose
    max is -inf."""
    x = sample((13, R))
    x[3] = float("-inf")
    x[5, : R // 2] = float("-inf")
    x[9] = float("-inf")
    x[9, R // 3] = float("nan")
    x[11, 0] = float("nan")
    x = x.to(dtype)
    ref = torch.ops.aten._safe_softmax(x.float(), -1)
    out = torch.ops.aten._safe_softmax(npu(x), -1)
    close(out, ref, dtype, FWD_TOL)
    assert (out[3].cpu() == 0).all() and out[9].cpu().isnan().all() and not out[5].cpu().isnan().any()
    up = torch.ops.aten._safe_softmax(npu(x), -1, torch.float32)  # the dtype argument converts first
    assert up.dtype == torch.float32
    torch.testing.assert_close(up.cpu(), torch.ops.aten._safe_softmax(x, -1, torch.float32), rtol=1e-5, atol=1e-6,
                               equal_nan=True)


@pytest.mark.parametrize("shape,dim", [((4, 6, 5), 1), ((3, 8), 0), ((5000, 16), 1)])
def test_safe_softmax_other_dims(shape, dim):
    """Over a dim other than the last, the composition of PyTorch's definition, on npu ops."""
    x = sample(shape)
    x.select((dim + 1) % x.dim(), 2).fill_(float("-inf"))  # every slice along dim through index 2 of another dim
    x.select(dim, 0).fill_(float("-inf"))  # and one position of every slice
    ref = torch.ops.aten._safe_softmax(x, dim)
    out = torch.ops.aten._safe_softmax(npu(x), dim)
    close(out, ref, torch.float32, FWD_TOL)


def test_safe_softmax_backward_and_sdpa_with_fully_masked_queries():
    q, k, v = (sample((2, 3, 10, 8), seed=s, scale=1.0) for s in (1, 2, 3))
    mask = torch.rand(2, 3, 10, 10, generator=torch.Generator().manual_seed(4)) > 0.5
    mask[0, 1, 4] = False  # a query that sees no key: zeros, not NaN
    qc, qn = q.clone().requires_grad_(), npu(q).requires_grad_()
    ref = torch.nn.functional.scaled_dot_product_attention(qc, k, v, attn_mask=mask)
    out = torch.nn.functional.scaled_dot_product_attention(qn, npu(k), npu(v), attn_mask=npu(mask))
    torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5)
    assert (out[0, 1, 4].cpu() == 0).all()
    ref.sum().backward()
    out.sum().backward()
    torch.testing.assert_close(qn.grad.cpu(), qc.grad, rtol=1e-4, atol=1e-5)
    for causal in (False, True):
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        out = torch.nn.functional.scaled_dot_product_attention(npu(q), npu(k), npu(v), is_causal=causal)
        torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_logsumexp(dtype):
    """logsumexp over a contiguous dim is the softmax kernel's log-sum-exp (one pass): rows of all -inf
    give -inf, a row with +inf gives +inf, a NaN gives NaN, as PyTorch's composition; other dims and
    several dims keep the composition; autograd's backward matches."""
    inf, nan = float("inf"), float("nan")
    g = torch.Generator().manual_seed(5)
    x = torch.randn(40, 300, generator=g) * 6
    x[1] = -inf
    x[2, 5] = inf
    x[3, 7] = nan
    x[4, 3], x[4, 9] = inf, nan
    x[5] = inf
    x[6, 0] = -inf
    x = x.to(dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-2, atol=1e-2)
    cases = [(x, -1, False), (x, 1, True), (x.t(), 0, False), (x.view(40, 300, 1), 1, False),
             (x.view(8, 5, 300), (0, 2), False), (x.view(8, 5, 300), 1, True)]
    for t, dim, keepdim in cases:
        got, want = torch.logsumexp(t.npu(), dim, keepdim=keepdim), torch.logsumexp(t, dim, keepdim=keepdim)
        assert got.device.type == "npu" and got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got.cpu().float(), want.float(), equal_nan=True, **tol)
    torch.npu.reset_kernel_counters()
    torch.logsumexp(x.npu(), -1)
    assert torch.npu.kernel_counters()["softmax_lse_kernel"]["launches"] == 1
    a = torch.randn(16, 65, generator=g, requires_grad=True)
    b = a.detach().npu().requires_grad_()
    torch.logsumexp(a, -1).sum().backward()
    torch.logsumexp(b, -1).sum().backward()
    torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-5, atol=1e-6)
