"""out= and in-place ops take the dtype rules ATen applies on every backend, per op family, swept over
input x out (or self x other) dtypes against the CPU (both raise, or both give the same values and dtype):
  - unary ops (abs, neg, sign, floor..., bitwise_not, activations, clamp by scalars): out= has the
    result's dtype, no casting;
  - float unary / binary ops (exp, sigmoid, add, atan2, xlogy...): out= of any dtype the result casts to
    (not float to integer);
  - ops whose output dtype is fixed (index_select, gather, sort, topk, argmax, amax, isin, searchsorted,
    where, norm...): exactly that dtype;
  - reductions that take their dtype from out= (sum, prod, nansum, mean) and any / all (bool or uint8).
  - in place, the result must cast to self's dtype (an int tensor's xlogy_ / nextafter_ refuse), and
    addcdiv refuses two integer tensors.
Found by a differential fuzz: out= used to accept any dtype for all of these (a float32 abs into a
float16 out, a sort into a float16 values tensor), torch.mode(out=) raised for npu tensors, and the
in-place forms above computed."""
import warnings

import pytest
import torch

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8, torch.bool]
LONG = torch.long


def _x(dt):
    if dt == torch.bool:
        return torch.tensor([True, False, True, True])
    return torch.tensor([1, 3, 2, 3]).to(dt) if dt == torch.uint8 else torch.tensor([1, -2, 3, -2]).to(dt)


def _idx(x):
    return torch.empty(0, dtype=LONG, device=x.device)


OPS = {
    "abs": lambda x, o: torch.abs(x, out=o),
    "neg": lambda x, o: torch.neg(x, out=o),
    "sign": lambda x, o: torch.sign(x, out=o),
    "floor": lambda x, o: torch.floor(x, out=o),
    "round": lambda x, o: torch.round(x, out=o),
    "frac": lambda x, o: torch.frac(x, out=o),
    "bitwise_not": lambda x, o: torch.bitwise_not(x, out=o),
    "nan_to_num": lambda x, o: torch.nan_to_num(x, out=o),
    "signbit": lambda x, o: torch.signbit(x, out=o),
    "clamp": lambda x, o: torch.clamp(x, -1, 2, out=o),
    "hardtanh": lambda x, o: torch._C._nn.hardtanh(x, -1.0, 1.0, out=o),
    "leaky_relu": lambda x, o: torch._C._nn.leaky_relu(x, 0.1, out=o),
    "silu": lambda x, o: torch._C._nn.silu(x, out=o),
    "gelu": lambda x, o: torch._C._nn.gelu(x, out=o),
    "softshrink": lambda x, o: torch._C._nn.softshrink(x, 0.5, out=o),
    "threshold": lambda x, o: torch.threshold(x, 0.5, 2.0, out=o),
    "exp": lambda x, o: torch.exp(x, out=o),
    "sigmoid": lambda x, o: torch.sigmoid(x, out=o),
    "tanh": lambda x, o: torch.tanh(x, out=o),
    "log2": lambda x, o: torch.log2(x, out=o),
    "exp2": lambda x, o: torch.exp2(x, out=o),
    "sinc": lambda x, o: torch.sinc(x, out=o),
    "add": lambda x, o: torch.add(x, 2, out=o),
    "mul": lambda x, o: torch.mul(x, x, out=o),
    "div": lambda x, o: torch.div(x, x, out=o),
    "eq": lambda x, o: torch.eq(x, x, out=o),
    "atan2": lambda x, o: torch.atan2(x, x, out=o),
    "xlogy": lambda x, o: torch.xlogy(x, x, out=o),
    "copysign": lambda x, o: torch.copysign(x, x, out=o),
    "hypot": lambda x, o: torch.hypot(x, x, out=o),
    "heaviside": lambda x, o: torch.heaviside(x, x, out=o),
    "bitwise_and": lambda x, o: torch.bitwise_and(x, x, out=o),
    "lshift": lambda x, o: torch.bitwise_left_shift(x, x, out=o),
    "where": lambda x, o: torch.where(x > 0, x, x, out=o),
    "sum": lambda x, o: torch.sum(x, 0, out=o),
    "prod": lambda x, o: torch.prod(x, 0, out=o),
    "mean": lambda x, o: torch.mean(x, 0, out=o),
    "amax": lambda x, o: torch.amax(x, 0, out=o),
    "argmax": lambda x, o: torch.argmax(x, 0, out=o),
    "any": lambda x, o: torch.any(x, 0, out=o),
    "all": lambda x, o: torch.all(x, out=o),
    "norm": lambda x, o: torch.norm(x, 2, 0, out=o),
    "index_select": lambda x, o: torch.index_select(x, 0, torch.tensor([0, 2], device=x.device), out=o),
    "gather": lambda x, o: torch.gather(x, 0, torch.tensor([0, 2], device=x.device), out=o),
    "masked_select": lambda x, o: torch.masked_select(x, x != 1, out=o),
    "tril": lambda x, o: torch.tril(x.reshape(2, 2), out=o),
    "isin": lambda x, o: torch.isin(x, x, out=o),
    "searchsorted": lambda x, o: torch.searchsorted(torch.tensor([0, 2]).to(x), x, out=o),
    "sort": lambda x, o: torch.sort(x, out=(o, _idx(x))),
    "topk": lambda x, o: torch.topk(x, 2, out=(o, _idx(x))),
    "max_dim": lambda x, o: torch.max(x, 0, out=(o, _idx(x))),
    "kthvalue": lambda x, o: torch.kthvalue(x, 1, out=(o, _idx(x))),
    "mode": lambda x, o: torch.mode(x, 0, out=(o, _idx(x))),
    "aminmax": lambda x, o: torch.aminmax(x, out=(o, torch.empty(0, dtype=x.dtype, device=x.device))),
}

# Where the CPU has no kernel for the dtype (npu computes; those pairs are not compared).
CPU_LACKS = {("isin", torch.bool), ("searchsorted", torch.bool), ("nansum", torch.int32), ("mode", torch.bool),
             ("kthvalue", torch.bool)}


def _outcome(fn, a, b, written):
    """fn(a, b), then what it wrote into `written` (out=, or self in place), or the exception."""
    try:
        fn(a, b)
        if a.device.type == "npu":
            torch.npu.synchronize()
        return written.cpu(), None
    except Exception as e:  # noqa: BLE001 - whether it raises is what is compared
        return None, e


def _difference(label, want, want_err, got, got_err):
    """How the npu outcome differs from the CPU's (both raise, or the same values and dtype), or None."""
    if (want_err is None) != (got_err is None):
        return f"{label}: CPU {want_err!r:.120} / npu {got_err!r:.160}"
    if want_err is None and (got.dtype != want.dtype or got.shape != want.shape or not torch.allclose(
            got.double(), want.double(), rtol=1e-2, atol=1e-2, equal_nan=True)):
        return f"{label}: CPU {want.tolist()} / npu {got.tolist()}"
    return None


@pytest.mark.parametrize("name", list(OPS))
def test_out_dtype_rules_match_cpu(name):
    fn = OPS[name]
    diffs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for di in DTYPES:
            if (name, di) in CPU_LACKS:
                continue
            for do in DTYPES:
                out, out_d = torch.empty(0, dtype=do), torch.empty(0, dtype=do, device="npu")
                diffs.append(_difference(f"{di} -> out {do}", *_outcome(fn, _x(di), out, out),
                                         *_outcome(fn, _x(di).to("npu"), out_d, out_d)))
    diffs = [d for d in diffs if d]
    assert not diffs, f"{name}: {len(diffs)} of the input x out dtype pairs differ:\n" + "\n".join(diffs[:6])


def test_out_dtype_errors_name_the_op_and_dtypes():
    x = torch.randn(4, device="npu")
    with pytest.raises(RuntimeError, match=r"abs\.out: Found dtype Half but expected Float"):
        torch.abs(x, out=torch.empty(4, dtype=torch.half, device="npu"))
    with pytest.raises(RuntimeError, match=r"index_select: expected out tensor to have dtype Float, but got Half"):
        torch.index_select(x, 0, torch.tensor([0], device="npu"), out=torch.empty(1, dtype=torch.half, device="npu"))
    with pytest.raises(RuntimeError, match=r"result type Float can't be cast to the desired output type Int"):
        torch.exp(x, out=torch.empty(4, dtype=torch.int32, device="npu"))
    with pytest.raises(RuntimeError, match=r"where.*expected out type to be Float but got Half"):
        torch.where(x > 0, x, x, out=torch.empty(4, dtype=torch.half, device="npu"))
    # the process goes on: the same ops with a matching out
    o = torch.empty(4, device="npu")
    torch.testing.assert_close(torch.abs(x, out=o).cpu(), x.cpu().abs())


def test_sum_into_bool_is_any_of_the_elements_as_bool():
    # ATen casts the input to the result's dtype first: -4 + 0 + 4 in bool is True, not bool(0)
    b = torch.tensor([[-4, 0], [0, -5], [4, -8]], dtype=torch.int32)
    for dims in (0, 1, (0, 1)):
        want = b.sum(dims, dtype=torch.bool)
        assert torch.equal(b.to("npu").sum(dims, dtype=torch.bool).cpu(), want)
        o = torch.empty(0, dtype=torch.bool, device="npu")
        assert torch.equal(torch.sum(b.to("npu"), dims, out=o).cpu(), want)


INPLACE = {
    "add_": lambda a, b: a.add_(b, alpha=2),
    "mul_s": lambda a, b: a.mul_(2.5),
    "div_": lambda a, b: a.div_(b),
    "div_floor_": lambda a, b: a.div_(b, rounding_mode="floor"),
    "pow_s": lambda a, b: a.pow_(0.5),
    "clamp_s": lambda a, b: a.clamp_(0.5, 1.5),
    "addcmul_": lambda a, b: a.addcmul_(b, b),
    "addcdiv_": lambda a, b: a.addcdiv_(b, b),
    "lerp_": lambda a, b: a.lerp_(b, 0.5),
    "atan2_": lambda a, b: a.atan2_(b),
    "xlogy_": lambda a, b: a.xlogy_(b),
    "nextafter_": lambda a, b: a.nextafter_(b),
    "copysign_": lambda a, b: a.copysign_(b),
    "bitwise_and_": lambda a, b: a.bitwise_and_(b),
    "lshift_": lambda a, b: a.__ilshift__(b),
    "eq_": lambda a, b: a.eq_(b),
    "logical_and_": lambda a, b: a.logical_and_(b),
    "masked_fill_": lambda a, b: a.masked_fill_(a != 0, b[0]),
    "index_add_": lambda a, b: a.index_add_(0, torch.tensor([0, 1, 2, 3], device=a.device), b),
    "scatter_": lambda a, b: a.scatter_(0, torch.tensor([3, 2, 1, 0], device=a.device), b),
    "copy_": lambda a, b: a.copy_(b),
    "sigmoid_": lambda a, b: a.sigmoid_(),
    "neg_": lambda a, b: a.neg_(),
}
INPLACE_DTYPES = DTYPES + [torch.int8]


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_dtype_rules_match_cpu(name):
    fn = INPLACE[name]
    diffs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for da in INPLACE_DTYPES:
            for db in INPLACE_DTYPES:
                a, a_d = _x(da), _x(da).to("npu")
                diffs.append(_difference(f"self {da}, other {db}", *_outcome(fn, a, _x(db), a),
                                         *_outcome(fn, a_d, _x(db).to("npu"), a_d)))
    diffs = [d for d in diffs if d]
    assert not diffs, f"{name}: {len(diffs)} of the dtype pairs differ:\n" + "\n".join(diffs[:6])
