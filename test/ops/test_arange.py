"""torch.arange on npu (the arange kernel) against the CPU: integer results exact, float results within
the float arithmetic CUDA's arange also uses (start + i * step in float: at most a few ulp from the CPU's
double-based values for fractional steps, exact for integral ones), sizes, out=, and ATen's errors."""
import pytest
import torch

CASES = [(10,), (0, 10, 3), (5, -7, -2), (0, 100000), (0, 70000, 7), (3, 3), (-40, 40, 9)]
FRACTIONAL = [(0, 1, 0.1), (-3.5, 4.2, 0.37), (1.0, 2.0, 1e-4), (2.5,)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, None])
@pytest.mark.parametrize("args", CASES)
def test_arange_integral_steps_exact(fallback_error, dtype, args):
    want = torch.arange(*args, dtype=dtype)
    if dtype in (torch.float16, torch.bfloat16):
        # Values past the dtype's integer precision round to nearest (the exact value, rounded once);
        # the CPU's vectorized half path can land one spacing lower there.
        want = torch.arange(*args, dtype=torch.float64).to(dtype)
    got = torch.arange(*args, dtype=dtype, device="npu")
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(got.cpu(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("args", FRACTIONAL)
def test_arange_fractional_steps(fallback_error, dtype, args):
    want = torch.arange(*args, dtype=dtype)
    got = torch.arange(*args, dtype=dtype, device="npu")
    assert got.dtype == want.dtype and got.shape == want.shape
    step = args[2] if len(args) == 3 else 1.0
    # float arithmetic: within a few ulp of the value or of the step's contribution
    tol = 4 * torch.finfo(dtype).eps * (want.float().abs() + abs(step) * want.numel())
    assert ((got.cpu().float() - want.float()).abs() <= tol).all()


def test_arange_out_and_errors(fallback_error):
    out = torch.empty(10, device="npu")[::2]
    torch.arange(5, out=out)
    assert torch.equal(out.cpu(), torch.arange(5, dtype=torch.float32))
    out = torch.empty(3, dtype=torch.long, device="npu")
    torch.arange(7, out=out)  # resized
    assert torch.equal(out.cpu(), torch.arange(7))
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 5, 0, device="npu")
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent with step sign"):
        torch.arange(5, 0, 1, device="npu")
    with pytest.raises(RuntimeError, match="unsupported range"):
        torch.arange(0, float("inf"), device="npu")


def test_arange_beyond_int32_takes_the_fallback(fallback_error):
    """int64 values beyond int32 are not computed natively: the CPU fallback (an error here)."""
    with pytest.raises(NotImplementedError, match="arange"):
        torch.arange(0, 6_000_000_000, 2_000_000_000, device="npu")
