"""Every op in PyTorch's OpInfo database (torch.testing._internal.common_methods_invocations.op_db)
on npu against the CPU: the first samples of each op, float32 (native kernels, or the CPU fallback
where an op has none), float64 (which the device runs on its host CPU: the fallback), float16 and
bfloat16 (see _half_compare for how rounding differences are told from wrong answers), int64, uint8
and bool, and the gradients of float32 samples. An op must give the CPU's values, or raise where the CPU raises, and
leave the device usable.

Ops left out say why: random results (compared by their own tests in test_random.py), inputs the
harness cannot move to npu as the op needs them, and the few dtypes / layouts npu does not have,
which are expected failures (strict: one that starts passing fails here until it is moved out).
"""
import warnings

import pytest
import torch
from torch.utils._pytree import tree_flatten, tree_map

pytest.importorskip("expecttest")  # torch.testing._internal imports it
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.testing._internal.opinfo.core import SampleInput  # noqa: E402

import torch_ops_nn  # noqa: E402,F401

SAMPLES = 10          # per op and dtype
GRAD_SAMPLES = 6

# Ops whose results are random draws: the npu generator is not the CPU's.
RANDOM = ("rand", "dropout", "bernoulli", "normal", "multinomial", "uniform", "exponential", "geometric",
          "cauchy", "log_normal", "poisson", "svd_lowrank", "pca_lowrank", "fractional_max_pool", "rrelu")
# Ops whose output values are undefined (uninitialized memory: empty, empty_like, new_empty_strided, ...).
UNDEFINED = ("empty",)
SKIP = {
    # The sample is a view at a storage offset of a larger base; .to("npu") copies just the view,
    # so an as_strided with an explicit storage_offset reads other elements (as on CUDA).
    "as_strided.partial_views": "the harness's copy to npu drops the sample's base storage",
}
XFAIL = {
    "chalf": "complex32 (ComplexHalf) is not an npu dtype",
    "hash_tensor": "uint64 is not an npu dtype",
    "sparse.mm.reduce": "sparse layouts are not supported on npu",
    "sparse.sampled_addmm": "sparse layouts are not supported on npu",
    "to_sparse": "sparse layouts are not supported on npu",
}


# Gradients whose float32 formula is ill-conditioned on some samples: the CPU's own float32 gradient
# is that far from the float64 one (logcumsumexp's samples of +-1e4: 2e-3).
GRAD_TOLERANCE = {"logcumsumexp": dict(atol=5e-3, rtol=1e-3)}


def _name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


OPS = sorted((op for op in op_db if not any(r in op.name for r in RANDOM + UNDEFINED)), key=_name)


def _params(ops):
    out = []
    for op in ops:
        marks = []
        if _name(op) in SKIP:
            marks.append(pytest.mark.skip(reason=SKIP[_name(op)]))
        elif _name(op) in XFAIL:
            marks.append(pytest.mark.xfail(reason=XFAIL[_name(op)], strict=True))
        out.append(pytest.param(op, id=_name(op), marks=marks))
    return out


def _random_sample(sample):
    """A sample that draws random numbers (dropout inside attention in training mode)."""
    if sample.kwargs.get("dropout_p", 0) > 0:
        return True
    flat = tree_flatten((sample.args, sample.kwargs))[0]
    return sample.kwargs.get("training", False) and any(isinstance(a, float) and 0 < a < 1 for a in flat)


def _to_npu(x):
    return x.detach().to("npu").requires_grad_(x.requires_grad) if isinstance(x, torch.Tensor) else x


def _to_cpu(x):
    return x.detach().cpu() if isinstance(x, torch.Tensor) and x.device.type == "npu" else x


# Ops whose tensor arguments other than the input stay on the CPU on every device (PyTorch's rule:
# tensor_split's indices tensor).
INPUT_ONLY = {"tensor_split"}


def _move(op, sample, move):
    args = tree_map(move, (sample.input, sample.args, sample.kwargs))
    return (args[0], sample.args, sample.kwargs) if op.name in INPUT_ONLY else args


def _run(op, sample, move):
    args = _move(op, sample, move)
    torch.manual_seed(0)
    return tree_map(_to_cpu, op(args[0], *args[1], **args[2]))


@pytest.fixture(autouse=True)
def _full_precision():
    """float32 convolutions and matmuls in full float32 (not HF32), the CPU fallback allowed."""
    old = torch.npu.conv.allow_hf32, torch.npu.matmul.allow_hf32
    torch.npu.conv.allow_hf32 = torch.npu.matmul.allow_hf32 = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    torch.npu.conv.allow_hf32, torch.npu.matmul.allow_hf32 = old


# Ops whose tied values' indices are unspecified (stable=False): integer and bool samples are full of
# ties, so there the values must agree and the indices only in shape and dtype (the sort tests check
# index order on their own).
TIED_INDICES = {"sort", "topk", "kthvalue", "mode"}  # (mode: the index of any occurrence of the value)
TIED_INDICES_SKIP = {"argsort": "indices only, and ties among integers come in an unspecified order"}


def _values_agree(got, expected):
    torch.testing.assert_close(got[0], expected[0], atol=0, rtol=0)
    assert got[1].shape == expected[1].shape and got[1].dtype == expected[1].dtype


def _check_sample(sample, run, compare):
    """run(move) on the CPU and on npu: a description of how they differ, or None. Where the CPU
    rejects the sample npu must reject it too."""
    try:
        expected = run(lambda x: x)
    except Exception as e:
        expected = e
    try:
        got = run(_to_npu)
        torch.npu.synchronize()
    except Exception as e:
        got = e
    if isinstance(expected, Exception) or isinstance(got, Exception):
        if isinstance(expected, Exception) != isinstance(got, Exception):
            return f"{sample!r:.300}: CPU {expected!r:.200} / npu {got!r:.300}"
        return None
    try:
        compare(got, expected)
    except AssertionError as e:
        return f"{sample!r:.300}: {e}"
    return None


def _compare_forward(op, dtype, make_compare=None):
    if dtype not in op.supported_dtypes("cpu"):
        pytest.skip(f"the CPU has no {dtype} {_name(op)}")

    def compare(got, expected):
        torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4, equal_nan=True, check_stride=False)

    failures = []
    for sample in list(op.sample_inputs("cpu", dtype))[:SAMPLES]:
        if _random_sample(sample):
            continue
        cmp = make_compare(sample) if make_compare else compare
        if op.name in TIED_INDICES and (not dtype.is_floating_point or dtype.itemsize == 2):
            cmp = _values_agree  # ties abound among integers and half-precision values
        failures.append(_check_sample(sample, lambda move: _run(op, sample, move), cmp))
        torch.testing.assert_close(torch.ones(2, device="npu").add(1).cpu(), torch.full((2,), 2.0))
    failures = [f for f in failures if f]
    assert not failures, f"{len(failures)} sample(s) differ:\n" + "\n".join(failures[:3])


@pytest.mark.parametrize("op", _params(OPS))
def test_float32_matches_cpu(op):
    _compare_forward(op, torch.float32)


@pytest.mark.parametrize("op", _params(OPS))
def test_float64_matches_cpu(op):
    _compare_forward(op, torch.float64)


# float16 / bfloat16. The two devices round at different steps (npu kernels mostly compute in float
# and round once; some CPU kernels round every step, grid_sample even its coordinates; compositions
# such as conv3d round each tap), so a result passes when it is
#   - within HALF_TOLERANCE of the CPU's elementwise, or
#   - within HALF_SCALE of the output's largest magnitude (a sum that cancels keeps the rounding error
#     of its terms, a few ulps of their size, not of the small result), or
#   - no farther from the float64 result of the same inputs than the CPU's is (+ HALF_TOLERANCE).
# A wrong value, NaN or shape fails all three.
HALF_TOLERANCE = {torch.float16: dict(atol=1e-2, rtol=1e-2), torch.bfloat16: dict(atol=5e-2, rtol=5e-2)}
HALF_SCALE = {torch.float16: 2.0 ** -8, torch.bfloat16: 2.0 ** -5}
# ComplexHalf: complex outputs of float16 inputs.
HALF_XFAIL = {(name, torch.float16) for name in ("complex", "polar", "view_as_complex")}


def _half_compare(op, sample, dtype):
    tol = HALF_TOLERANCE[dtype]

    def float64_result():
        up = lambda x: x.double() if isinstance(x, torch.Tensor) and x.dtype == dtype else x  # noqa: E731
        try:
            inp, args, kwargs = tree_map(up, (sample.input, sample.args, sample.kwargs))
            return _run(op, SampleInput(inp, args=args, kwargs=kwargs), lambda x: x)
        except Exception:
            return None

    def compare(got, expected):
        try:
            torch.testing.assert_close(got, expected, equal_nan=True, check_stride=False, **tol)
            return
        except AssertionError as e:
            first = e
        g_flat, e_flat = tree_flatten(got)[0], tree_flatten(expected)[0]
        pairs = [(g, x) for g, x in zip(g_flat, e_flat) if isinstance(x, torch.Tensor) and x.is_floating_point()]
        if len(g_flat) != len(e_flat) or not pairs or any(g.shape != x.shape or g.dtype != x.dtype for g, x in pairs):
            raise first

        def close_to_scale(g, x):
            g, x = g.double(), x.double()
            finite = x.isfinite()
            if not torch.equal(g.isnan(), x.isnan()) or not torch.equal(g[~finite], x[~finite]):
                return False
            return x.numel() == 0 or (g - x)[finite].abs().max() <= HALF_SCALE[dtype] * x[finite].abs().max()

        if all(close_to_scale(g, x) for g, x in pairs):
            return
        truth = float64_result()
        if truth is not None:
            t_flat = [t for t in tree_flatten(truth)[0] if isinstance(t, torch.Tensor) and t.is_floating_point()]
            if len(t_flat) == len(pairs) and all(
                    ((g.double() - t).abs() <= (x.double() - t).abs() + tol["atol"] + tol["rtol"] * t.abs()).all()
                    for (g, x), t in zip(pairs, t_flat)):
                return
        raise first

    return compare


def _half_params():
    out = []
    for dtype in (torch.float16, torch.bfloat16):
        for p in _params(OPS):
            op = p.values[0]
            marks = list(p.marks)
            if (_name(op), dtype) in HALF_XFAIL:
                marks.append(pytest.mark.xfail(reason="complex32 (ComplexHalf) is not an npu dtype", strict=True))
            out.append(pytest.param(op, dtype, id=f"{_name(op)}-{dtype}", marks=marks))
    return out


@pytest.mark.parametrize("op,dtype", _half_params())
def test_half_precision_matches_cpu(op, dtype):
    if _name(op) in TIED_INDICES_SKIP:
        pytest.skip(TIED_INDICES_SKIP[_name(op)])
    _compare_forward(op, dtype, make_compare=lambda sample: _half_compare(op, sample, dtype))


@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("op", _params(OPS))
def test_integer_and_bool_match_cpu(op, dtype):
    if _name(op) in TIED_INDICES_SKIP:
        pytest.skip(TIED_INDICES_SKIP[_name(op)])
    _compare_forward(op, dtype)


def _grads(op, sample, move):
    args = _move(op, sample, move)
    leaves = [t for t in tree_flatten(args)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    torch.manual_seed(0)
    outs = [t for t in tree_flatten(op(args[0], *args[1], **args[2]))[0]
            if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
    if not outs or not leaves:
        return None
    g = torch.Generator().manual_seed(1)
    grads_out = [torch.randn(t.shape, generator=g, dtype=t.dtype).to(t.device) for t in outs]
    return [None if x is None else x.detach().cpu()
            for x in torch.autograd.grad(outs, leaves, grads_out, allow_unused=True)]


GRAD_OPS = [op for op in OPS if op.supports_autograd]


@pytest.mark.parametrize("op", _params(GRAD_OPS))
def test_float32_gradients_match_cpu(op):
    if torch.float32 not in op.supported_backward_dtypes("cpu"):
        pytest.skip(f"the CPU has no float32 gradient of {_name(op)}")
    tol = GRAD_TOLERANCE.get(_name(op), dict(atol=1e-4, rtol=1e-4))
    failures = []
    for sample in list(op.sample_inputs("cpu", torch.float32, requires_grad=True))[:GRAD_SAMPLES]:
        if _random_sample(sample):
            continue
        failures.append(_check_sample(
            sample, lambda move: _grads(op, sample, move),
            lambda got, expected: torch.testing.assert_close(got, expected, equal_nan=True, check_stride=False, **tol)))
    failures = [f for f in failures if f]
    assert not failures, f"{len(failures)} sample(s) differ:\n" + "\n".join(failures[:3])
