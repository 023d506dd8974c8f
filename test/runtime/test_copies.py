"""Host<->npu and npu<->npu copies: every dtype, non-contiguous views, casts, broadcasting, fills."""
import pytest
import torch

import torch_ops_nn  # noqa: F401

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]


def sample(shape, dtype):
    g = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_complex:
        return torch.randn(shape, dtype=dtype, generator=g)
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 100).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000), shape, generator=g, dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_every_dtype(dtype):
    x = sample((3, 17, 5), dtype)
    y = x.to("npu")
    assert y.dtype == dtype and y.device.type == "npu"
    assert torch.equal(y.cpu(), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool], ids=str)
def test_non_contiguous_both_sides(dtype):
    x = sample((6, 8, 10), dtype)
    src_views = [x.transpose(0, 2), x[:, ::2, 1::3], x.permute(1, 2, 0)[2:], x.expand(2, 6, 8, 10)[1]]
    for v in src_views:
        y = v.to("npu")  # non-contiguous host source
        assert torch.equal(y.cpu(), v)
        d = x.to("npu")
        dv = d.transpose(0, 2)[::2]  # non-contiguous npu source
        assert torch.equal(dv.cpu(), x.transpose(0, 2)[::2])
    # non-contiguous npu destination
    d = torch.zeros(6, 8, 10, dtype=dtype, device="npu")
    d.transpose(0, 1)[:, 1::2].copy_(x.transpose(0, 1)[:, 1::2])
    ref = torch.zeros(6, 8, 10, dtype=dtype)
    ref.transpose(0, 1)[:, 1::2].copy_(x.transpose(0, 1)[:, 1::2])
    assert torch.equal(d.cpu(), ref)
    # non-contiguous host destination
    host = torch.zeros(10, 8, 6, dtype=dtype).transpose(0, 2)
    host.copy_(x.to("npu"))
    assert torch.equal(host, x)


@pytest.mark.parametrize("src", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                                 torch.bool, torch.uint8, torch.float64], ids=str)
@pytest.mark.parametrize("dst", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8,
                                 torch.bool, torch.float64], ids=str)
def test_dtype_conversion_on_device(src, dst):
    x = sample((7, 9), src)
    if src.is_floating_point and not dst.is_floating_point and dst != torch.bool:
        x = x.clamp(-100, 100)  # stay inside the integer range (out-of-range casts are undefined)
    y = x.to("npu").to(dst)
    assert y.device.type == "npu" and y.dtype == dst
    assert torch.equal(y.cpu(), x.to(dst))
    # and host -> npu with a cast in the same copy
    assert torch.equal(torch.empty(7, 9, dtype=dst, device="npu").copy_(x).cpu(), x.to(dst))


def test_half_conversion_edge_values():
    vals = torch.tensor([0.0, -0.0, 1e-8, 5.96e-8, 6.1e-5, 65504.0, 65520.0, 1e6, float("inf"), float("-inf"),
                         1.0009765625, 1.00048828125, 2.0 ** -24 * 1.5, -3.14159])
    for dst in (torch.float16, torch.bfloat16):
        got = vals.to("npu").to(dst).cpu()
        assert torch.equal(got, vals.to(dst)), (dst, got, vals.to(dst))
    nan = torch.tensor([float("nan")]).to("npu").to(torch.float16).cpu()
    assert torch.isnan(nan).all()


def test_cross_device_copies():
    x = sample((64, 33), torch.float32)
    a = x.to("npu:0")
    b = a.to("npu:1")
    assert b.device == torch.device("npu", 1)
    assert torch.equal(b.cpu(), x)
    c = b.t().to("npu:0", dtype=torch.float16)
    assert torch.equal(c.cpu(), x.t().to(torch.float16))


def test_broadcasting_copy_and_fill():
    d = torch.empty(4, 5, device="npu")
    d.copy_(torch.arange(5, dtype=torch.float32))
    assert torch.equal(d.cpu(), torch.arange(5, dtype=torch.float32).expand(4, 5))
    d.fill_(2.5)
    assert torch.equal(d.cpu(), torch.full((4, 5), 2.5))
    d.zero_()
    assert torch.equal(d.cpu(), torch.zeros(4, 5))
    d[1:3, ::2].fill_(torch.tensor(7.0).to("npu"))
    ref = torch.zeros(4, 5)
    ref[1:3, ::2] = 7
    assert torch.equal(d.cpu(), ref)
    i = torch.empty(3, dtype=torch.int64, device="npu").fill_(2 ** 40)
    assert torch.equal(i.cpu(), torch.full((3,), 2 ** 40))
    with pytest.raises(RuntimeError, match="0-dimension"):
        d.fill_(torch.ones(2, device="npu"))
    # A source that does not broadcast is an error, as on the CPU, even into an empty destination;
    # an empty source broadcast into an empty destination is fine.
    for dst in (d, torch.empty(2, 0, 3, device="npu")):
        for src in (torch.ones(2, 3, 5, 5), torch.ones(2, 3, 5, 5, device="npu")):
            with pytest.raises(RuntimeError, match=r"copy_: the source of shape \[2, 3, 5, 5\] cannot be broadcast"):
                dst.copy_(src)
            with pytest.raises(RuntimeError):
                torch.empty(dst.shape).copy_(src.cpu())
    torch.empty(2, 0, 3, device="npu").copy_(torch.ones(0, 1))


def test_views_and_item():
    x = torch.arange(24, dtype=torch.float32)
    d = x.to("npu")
    v = d.view(2, 3, 4)
    assert v.shape == (2, 3, 4) and v.data_ptr() == d.data_ptr()
    assert v[1, 2, 3].item() == 23.0
    s = d.as_strided((3, 2), (4, 1), 2)
    assert torch.equal(s.cpu(), x.as_strided((3, 2), (4, 1), 2))
    assert torch.equal(d.reshape(4, 6).cpu(), x.reshape(4, 6))
    assert d[5].item() == 5.0
    assert torch.tensor(True).to("npu").item() is True
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        d.item()


def test_resize_and_set():
    d = torch.arange(6, dtype=torch.float32).to("npu")
    d.resize_(2, 3)
    assert torch.equal(d.cpu(), torch.arange(6, dtype=torch.float32).view(2, 3))
    d.resize_(4, 5)  # grows: the first 6 values are kept
    assert d.shape == (4, 5)
    assert torch.equal(d.view(-1)[:6].cpu(), torch.arange(6, dtype=torch.float32))
    e = torch.empty(0, device="npu")
    e.set_(d)
    assert e.data_ptr() == d.data_ptr() and e.shape == d.shape
    f = torch.empty(0, device="npu")
    f.set_(d.untyped_storage(), 2, (2, 2), (1, 2))
    assert torch.equal(f.cpu(), d.view(-1)[2:].as_strided((2, 2), (1, 2)).cpu())


def test_zero_size_and_clone():
    z = torch.empty(0, 3, device="npu")
    assert z.cpu().shape == (0, 3)
    x = torch.randn(5, 7)
    c = x.to("npu").clone()
    assert torch.equal(c.cpu(), x)
    cl = x.to("npu").contiguous(memory_format=torch.contiguous_format)
    assert torch.equal(cl.cpu(), x)
    n = torch.randn(2, 3, 4, 5).to("npu").to(memory_format=torch.channels_last)
    assert n.is_contiguous(memory_format=torch.channels_last)


def test_unsupported_dtype_is_a_clear_error():
    with pytest.raises(TypeError, match="npu: dtype .* is not supported; supported dtypes are"):
        torch.empty(2, dtype=torch.float8_e4m3fn, device="npu")


def test_non_blocking_copies():
    x = torch.randn(1000)
    y = x.to("npu", non_blocking=True)
    torch.npu.synchronize()
    assert torch.equal(y.cpu(), x)
    h = torch.empty(1000)
    h.copy_(y, non_blocking=True)
    torch.npu.current_stream().synchronize()
    assert torch.equal(h, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16, torch.int64, torch.uint8])
@pytest.mark.parametrize("shape,perm", [
    ((2, 64, 56, 56), "channels_last"),        # NCHW -> NHWC: the tiled-transpose path
    ((3, 37, 33, 9), "channels_last"),         # sizes that are not tile multiples
    ((2, 5, 13, 11), "channels_last"),         # 5 channels: the short-row transpose (no AVX2 tiles)
    ((4, 3, 29, 31), "channels_last"),         # an RGB batch to NHWC (3-element destination rows)
    ((2, 100), (1, 0)),                        # .t().contiguous() with 2-element destination rows
    ((3, 7, 4), (1, 2, 0)),                    # K = 7 < 8: the plain row path
    ((1000, 700), (1, 0)),                     # .t().contiguous()
    ((7, 130, 3, 45), (2, 0, 3, 1)),           # a batched transpose with outer dims on both sides
    # >= 1 MB of 4-byte elements: the streaming transpose (16-column blocks, non-temporal stores)
    ((8, 64, 56, 56), "channels_last"),        # NCHW <-> NHWC of a ResNet activation
    ((512, 256, 3, 3), (1, 2, 3, 0)),          # a conv weight for grad_input: K = 4608 rows of 512
    ((512, 256, 3, 3), "channels_last"),       # the forward's weight re-layout: K = 9 (masked row blocks)
    ((32, 3, 3, 8, 512), (4, 0, 3, 1, 2)),     # grad_weight's fractal -> OIHW: a gathered column run
    ((3, 1008, 250), (0, 2, 1)),               # outer dim, K = 250 not a multiple of 16
])
def test_transposing_copies_match_cpu(dtype, shape, perm):
    x = (torch.randn(shape) * 100).to(dtype)
    d = x.to("npu")
    if perm == "channels_last":
        want = x.contiguous(memory_format=torch.channels_last)
        got = d.contiguous(memory_format=torch.channels_last)
        back = got.contiguous()
        assert torch.equal(back.cpu(), x)  # NHWC -> NCHW, the transpose the other way
    else:
        want = x.permute(perm).contiguous()
        got = d.permute(perm).contiguous()
    assert got.stride() == want.stride()
    assert torch.equal(got.cpu(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16, torch.int64, torch.bool])
@pytest.mark.parametrize("k", [2, 3, 16])
@pytest.mark.parametrize("strided", [False, True])
def test_broadcast_innermost_dim_copies_match_cpu(dtype, k, strided):
    """A copy whose innermost dim is a broadcast (stride 0) of k under a dim the destination continues
    writes each source element k times (nearest upsampling's expanded view): rows of 37 elements cover
    the vector body and its scalar tail."""
    base = (torch.randn(3, 5, 74) * 100).to(dtype)
    pick = (lambda t: t[..., ::2]) if strided else (lambda t: t[..., :37])  # source stride 2 or 1
    want = pick(base)[..., None].expand(3, 5, 37, k).contiguous()
    got = pick(base.to("npu"))[..., None].expand(3, 5, 37, k).contiguous()
    assert torch.equal(got.cpu(), want)
    big = torch.randn(600, 1000)  # > 2^18 elements out: split over the host threads
    assert torch.equal(big.to("npu")[:, :, None].expand(600, 1000, k).contiguous().cpu(),
                       big[:, :, None].expand(600, 1000, k).contiguous())


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_matches_cpu(dim, fallback_error):
    g = torch.Generator().manual_seed(0)
    parts = [torch.randn(2, 3, 4, 5, generator=g), torch.randn(2, 3, 4, 5, generator=g).half(),
             torch.randn(2, 3, 4, 5, generator=g).transpose(2, 3).contiguous().transpose(2, 3)]
    want = torch.cat(parts, dim)
    got = torch.cat([p.to("npu") for p in parts], dim)
    assert got.dtype == want.dtype and torch.equal(got.cpu(), want)


def test_cat_layouts_empty_and_out(fallback_error):
    a = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    b = torch.randn(2, 6, 4, 5).contiguous(memory_format=torch.channels_last)
    got = torch.cat([a.to("npu"), b.to("npu")], 1)
    assert got.is_contiguous(memory_format=torch.channels_last) and torch.equal(got.cpu(), torch.cat([a, b], 1))
    e = torch.empty(0)
    assert torch.equal(torch.cat([e.to("npu"), a.to("npu"), e.to("npu")], 1).cpu(), torch.cat([e, a, e], 1))
    out = torch.empty(0, device="npu")
    torch.cat([a.to("npu"), a.to("npu")], 0, out=out)
    assert out.shape == (4, 3, 4, 5) and torch.equal(out.cpu(), torch.cat([a, a], 0))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1"):
        torch.cat([a.to("npu"), torch.randn(2, 3, 5, 5).to("npu")], 1)
    with pytest.raises(RuntimeError, match="tensor 1 is on cpu"):
        torch.cat([a.to("npu"), a], 0)


VIEW_OPS = {
    "unfold": lambda t: t.unfold(2, 3, 2),
    "diagonal": lambda t: t.diagonal(0, 1, 2),
    "as_strided": lambda t: t.as_strided((2, 2), (1, 2), 3),
    "movedim": lambda t: t.movedim(0, 2),
    "unflatten": lambda t: t.unflatten(2, (2, 4)),
    "split": lambda t: t.split([2, 4], 1)[1],
    "unbind": lambda t: t.unbind(0)[1],
    "select_narrow": lambda t: t.select(1, 2).narrow(1, 1, 5),
    "expand": lambda t: t[:, :1].expand(4, 6, 8),
    "squeeze_unsqueeze": lambda t: t[:, :1].squeeze(1).unsqueeze(0),
    "view_dtype": lambda t: t.view(torch.int32),
    "mT": lambda t: t.mT,
    "indexing": lambda t: t[1:3, ::2, None, 4],
    "view_as_real": lambda t: torch.view_as_real(torch.view_as_complex(t.unflatten(2, (4, 2)))),
}


@pytest.mark.parametrize("name", sorted(VIEW_OPS))
def test_view_ops_alias_their_base(name, fallback_error):
    """A view op on npu returns a view: same values as CPU, and a write through it reaches the base
    (a CPU-fallback 'view' would be a copy and lose the write)."""
    x = torch.randn(4, 6, 8)
    d = x.to("npu")
    got, want = VIEW_OPS[name](d), VIEW_OPS[name](x)
    assert got.shape == want.shape and got.stride() == want.stride()
    assert torch.equal(got.cpu(), want)
    got.zero_()
    want.zero_()
    assert torch.equal(d.cpu(), x)


def test_pinned_host_memory():
    t = torch.randn(1000)
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned() and p[10:].is_pinned()
    assert torch.equal(p, t)
    d = p.to("npu", non_blocking=True)
    torch.npu.synchronize()
    assert torch.equal(d.cpu(), t)
    assert torch.empty(64, pin_memory=True).is_pinned()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 3)), batch_size=4,
                                         pin_memory=True)
    assert all(batch[0].is_pinned() for batch in loader)
    del p  # the block goes back: a new host tensor at that address is not pinned
    assert not torch.randn(1000).is_pinned()


def test_conjugate_and_negative_views_copy_their_values(monkeypatch):
    # z.conj() and z.conj().imag are lazy bits over unchanged memory: every copy must apply them
    # (the raw copy gave z.conj().resolve_conj() == z: a silent wrong answer).
    torch.manual_seed(4)
    z = torch.randn(3, 4, dtype=torch.complex64)
    d = z.to("npu")
    assert torch.equal(d.conj().resolve_conj().cpu(), z.conj().resolve_conj())
    assert torch.equal(d.conj().cpu().resolve_conj(), z.conj().resolve_conj())
    assert torch.equal(z.conj().to("npu").cpu().resolve_conj(), z.conj().resolve_conj())  # host -> npu
    assert torch.equal(d.conj().clone().cpu().resolve_conj(), z.conj().resolve_conj())
    neg = d.conj().imag                                  # a float32 view with the negative bit
    assert neg.is_neg()
    assert torch.equal(neg.resolve_neg().cpu(), -z.imag)
    assert torch.equal(neg.clone().cpu().resolve_neg(), -z.imag)
    assert torch.equal((neg + 0).cpu(), -z.imag)
    buf = torch.zeros(3, 4, dtype=torch.complex64, device="npu")
    buf.copy_(d.conj())
    assert torch.equal(buf.cpu(), z.conj().resolve_conj())
    assert d[0, 0].conj().item() == z[0, 0].conj().item()


# ---- casts between complex and other dtypes (each part through the one copy path)
@pytest.mark.parametrize("src_dtype,dst_dtype", [(torch.float32, torch.complex64), (torch.float64, torch.complex128),
                                                 (torch.int64, torch.complex64), (torch.float16, torch.complex64),
                                                 (torch.complex64, torch.complex128),
                                                 (torch.complex128, torch.complex64)])
def test_complex_casts_match_cpu(src_dtype, dst_dtype):
    x = (torch.randn(3, 5) * 10).to(src_dtype) if not src_dtype.is_complex else torch.randn(3, 5, dtype=src_dtype)
    got = x.to("npu").to(dst_dtype)
    assert got.device.type == "npu" and got.dtype == dst_dtype
    torch.testing.assert_close(got.cpu(), x.to(dst_dtype))
    # into a strided destination, broadcasting the source
    dst = torch.zeros(5, 3, dtype=dst_dtype).to("npu").t()
    dst.copy_(x.to("npu")[1])
    torch.testing.assert_close(dst.cpu(), x[1].to(dst_dtype).expand(3, 5))


def test_complex_to_real_keeps_the_real_part_and_warns():
    z = torch.randn(4, dtype=torch.complex64)
    r = torch.empty(4).to("npu")
    r.copy_(z.to("npu"))
    torch.testing.assert_close(r.cpu(), z.real)
    from conftest import run_python  # the warning is once per process, as the CPU's

    p = run_python("import torch, torch_ops_nn; torch.empty(2).to('npu').copy_(torch.ones(2, dtype=torch.cfloat).to('npu'))")
    assert p.returncode == 0 and "Casting complex values to real discards the imaginary part" in p.stderr, p.stderr
    # a conjugate view: the real part is unchanged; .imag of it is the negated imaginary part
    torch.testing.assert_close(z.to("npu").conj().to(torch.complex128).cpu(), z.conj().to(torch.complex128))
    torch.testing.assert_close(torch.fft.fft(torch.arange(8.0).to("npu")).cpu(), torch.fft.fft(torch.arange(8.0)))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
def test_non_blocking_from_pageable_memory_takes_the_values_at_the_call(layout):
    # PyTorch: non_blocking only has an effect from pinned memory; a pageable source may be changed
    # right after the call (CUDA stages it). The npu copy task used to read it later, when the stream
    # reached it: behind queued work it copied the modified values.
    busy = torch.randn(1024, 1024, device="npu")
    for _ in range(3):
        base = torch.randn(256, 64)
        x = {"contiguous": base, "transposed": base.t(), "expanded": base[:, :1].expand(256, 64)}[layout]
        want = x.clone()
        for _ in range(4):
            busy @ busy  # work queued ahead of the copy
        y = torch.empty(x.shape, device="npu")
        y.copy_(x, non_blocking=True)
        base.zero_()  # the caller reuses its buffer at once
        torch.npu.synchronize()
        assert torch.equal(y.cpu(), want)


def test_non_blocking_from_pinned_memory_stays_asynchronous():
    busy = torch.randn(1024, 1024, device="npu")
    x = torch.randn(1 << 16).pin_memory()
    for _ in range(6):
        busy @ busy
    y = x.to("npu", non_blocking=True)
    assert not torch.npu.current_stream().query()  # returned with the copy still queued
    torch.npu.synchronize()
    assert torch.equal(y.cpu(), x)


@pytest.mark.parametrize("name", ["copy_ partial", "copy_ expanded dst", "copy_ same", "copy_ disjoint",
                                  "index_copy_", "index_add_", "scatter_", "scatter_ clone"])
def test_memory_overlap_rules_match_the_cpu(name):
    # ATen refuses a write whose destination partly overlaps an input, or has aliased elements (an
    # expanded view); the npu ops do as the CPU (the result would depend on the copy order).
    i2 = lambda x: torch.tensor([0, 1], device=x.device)
    fn = {
        "copy_ partial": lambda x: x[1:].copy_(x[:-1]),
        "copy_ expanded dst": lambda x: x.unsqueeze(0).expand(3, 5).copy_(torch.ones(3, 5, device=x.device)),
        "copy_ same": lambda x: x.copy_(x),
        "copy_ disjoint": lambda x: x[:2].copy_(x[3:]),
        "index_copy_": lambda x: x.index_copy_(0, i2(x), x[1:3]),
        "index_add_": lambda x: x.index_add_(0, i2(x), x[1:3]),
        "scatter_": lambda x: x.scatter_(0, i2(x), x[1:3]),
        "scatter_ clone": lambda x: x.scatter_(0, i2(x), x[1:3].clone()),
    }[name]
    x = torch.arange(5.0)
    try:
        fn(x)
        want_err = None
    except RuntimeError as e:
        want_err = e
    xd = torch.arange(5.0, device="npu")
    if want_err is not None:
        with pytest.raises(RuntimeError, match="unsupported operation"):
            fn(xd)
        assert torch.equal(xd.cpu(), torch.arange(5.0))  # refused before writing
    else:
        fn(xd)
        assert torch.equal(xd.cpu(), x)
