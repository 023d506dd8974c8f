"""normal with tensor mean/std, randperm, multinomial and linspace on npu (compositions of the native
kernels). Random results come from the npu generator, so the tests check laws (moments, frequencies,
permutation property), shapes, reproducibility under a seed, the CPU's results for linspace, and the
argument errors."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")


@pytest.mark.parametrize("form", ["tensor_float", "float_tensor", "tensor_tensor", "broadcast", "out"])
def test_normal_tensor_parameters(form):
    torch.manual_seed(0)
    n = 200_000
    m, s = torch.full((n,), 3.0, device="npu"), torch.full((n,), 2.0, device="npu")
    if form == "tensor_float":
        x = torch.normal(m, 2.0)
    elif form == "float_tensor":
        x = torch.normal(3.0, s)
    elif form == "tensor_tensor":
        x = torch.normal(m, s)
    elif form == "broadcast":
        x = torch.normal(m.view(1, -1), s[:3].view(-1, 1))
        assert x.shape == (3, n)
    else:
        x = torch.empty(0, device="npu")
        torch.normal(m, s, out=x)
    assert x.device.type == "npu" and x.dtype == torch.float32
    assert abs(x.mean().item() - 3.0) < 0.02 and abs(x.std().item() - 2.0) < 0.02
    # Per-element parameters are honoured.
    y = torch.normal(torch.tensor([0.0, 100.0], device="npu").repeat(1000), torch.tensor([1.0, 0.0], device="npu").repeat(1000))
    assert torch.all(y.cpu()[1::2] == 100.0) and abs(y.cpu()[0::2].mean().item()) < 0.2


def test_normal_seeded_and_bad_input():
    torch.manual_seed(5)
    a = torch.normal(torch.zeros(64, device="npu"), 1.0).cpu()
    torch.manual_seed(5)
    assert torch.equal(torch.normal(torch.zeros(64, device="npu"), 1.0).cpu(), a)
    with pytest.raises(RuntimeError, match=r"normal: expects std >= 0.0, but found std -1"):
        torch.normal(torch.zeros(3, device="npu"), -1.0)
    with pytest.raises(RuntimeError, match=r"normal: expects all elements of std >= 0.0"):
        torch.normal(0.0, torch.tensor([1.0, -1.0], device="npu"))
    assert torch.normal(torch.zeros(3, device="npu"), 1.0).shape == (3,)  # still usable


@pytest.mark.parametrize("n,dtype", [(1, torch.int64), (7, torch.int64), (100_000, torch.int64), (50, torch.int32),
                                     (50, torch.float32)])
def test_randperm_is_a_permutation(n, dtype):
    p = torch.randperm(n, device="npu", dtype=dtype).cpu()
    assert p.dtype == dtype and p.shape == (n,)
    assert torch.equal(p.sort().values, torch.arange(n, dtype=dtype))


def test_randperm_uniform_positions_and_errors():
    torch.manual_seed(1)
    counts = torch.zeros(5, 5)
    for _ in range(2000):
        counts[torch.arange(5), torch.randperm(5, device="npu").cpu()] += 1
    # Each value lands in each position ~400 times (sd ~18).
    assert counts.min().item() > 320 and counts.max().item() < 480
    assert torch.randperm(0, device="npu").numel() == 0
    with pytest.raises(RuntimeError, match=r"negative dimension -1|n must be non-negative"):
        torch.randperm(-1, device="npu")


def test_multinomial_frequencies():
    torch.manual_seed(2)
    p = torch.tensor([0.1, 0.0, 0.6, 0.3], device="npu")
    s = torch.multinomial(p, 100_000, replacement=True).cpu()
    assert s.dtype == torch.int64 and s.shape == (100_000,)
    freq = torch.bincount(s, minlength=4).float() / 100_000
    assert freq[1] == 0 and torch.allclose(freq, torch.tensor([0.1, 0.0, 0.6, 0.3]), atol=0.01)
    # Without replacement: distinct, never a zero-probability category, first pick ~ p.
    picks = torch.stack([torch.multinomial(p, 3) for _ in range(2000)]).cpu()
    assert (picks != 1).all()
    assert all(len(set(r.tolist())) == 3 for r in picks)
    first = torch.bincount(picks[:, 0], minlength=4).float() / 2000
    assert torch.allclose(first, torch.tensor([0.1, 0.0, 0.6, 0.3]), atol=0.04)
    # Unnormalised rows, 2-D input (a batch of LM-sized distributions).
    w = torch.rand(8, 50_000, device="npu") * 5
    assert torch.multinomial(w, 1).shape == (8, 1)
    out = torch.empty(0, dtype=torch.long, device="npu")
    torch.multinomial(w, 4, replacement=True, out=out)
    assert out.shape == (8, 4) and int(out.cpu().max()) < 50_000


def test_multinomial_bad_input():
    with pytest.raises(RuntimeError, match=r"probability tensor contains either `inf`, `nan` or element < 0"):
        torch.multinomial(torch.tensor([0.5, -0.1], device="npu"), 1)
    with pytest.raises(RuntimeError, match=r"probability tensor contains either `inf`, `nan` or element < 0"):
        torch.multinomial(torch.tensor([0.5, float("nan")], device="npu"), 1)
    with pytest.raises(RuntimeError, match=r"invalid multinomial distribution \(sum of probabilities <= 0\)"):
        torch.multinomial(torch.zeros(2, device="npu"), 1)
    with pytest.raises(RuntimeError, match=r"not enough non-negative category to sample"):
        torch.multinomial(torch.tensor([1.0, 0.0], device="npu"), 2)
    with pytest.raises(RuntimeError, match=r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement"):
        torch.multinomial(torch.tensor([1.0, 0.0], device="npu"), 3)
    with pytest.raises(RuntimeError, match=r"prob_dist must be 1 or 2 dim"):
        torch.multinomial(torch.ones(2, 2, 2, device="npu"), 1)
    assert torch.multinomial(torch.tensor([0.0, 1.0], device="npu"), 1).item() == 1  # still usable


@pytest.mark.parametrize("start,end,steps", [(0, 1, 10), (-3.5, 7.25, 1001), (5, 5, 4), (1, -1, 7), (0, 1, 1), (2, 3, 0)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_linspace_matches_cpu(start, end, steps, dtype):
    got = torch.linspace(start, end, steps, device="npu", dtype=dtype)
    want = torch.linspace(start, end, steps, dtype=dtype)
    assert got.device.type == "npu" and got.dtype == dtype and got.shape == want.shape
    # Within one unit in the last place: the CPU's own result depends on its vector width (it adds
    # the step per lane), and for 16-bit dtypes it steps in that dtype where the npu rounds once.
    ulp = {torch.float32: 2.0**-23, torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}[dtype]
    if steps:
        tol = ulp * max(abs(start), abs(end), 1) * 1.01
        assert (got.cpu().float() - want.float()).abs().max().item() <= tol
        assert got[0].item() == want[0].item() and got[-1].item() == want[-1].item()
