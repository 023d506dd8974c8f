"""torch.amp.GradScaler on npu: its device ops (_amp_foreach_non_finite_check_and_unscale_,
_amp_update_scale_) native and equal to the CPU's; a mixed-precision training loop that skips a step with
an inf gradient and backs the scale off, as on the CPU."""
import copy

import pytest
import torch

import torch_ops_nn


def unscale_and_update(dev, found_values):
    gs = [torch.tensor([1.0, 2.0, -4.0], device=dev), torch.tensor([[float("inf"), 1.0]], device=dev),
          torch.tensor([float("nan")], device=dev), torch.tensor([8.0, 3.0], device=dev).half()]
    fi, inv = torch.zeros(1, device=dev), torch.tensor([0.25], device=dev)
    torch._amp_foreach_non_finite_check_and_unscale_(gs[:1] + gs[3:], fi, inv)
    clean = fi.item()
    torch._amp_foreach_non_finite_check_and_unscale_(gs, fi, inv)
    steps = []
    for found, tracker in found_values:
        s = torch.tensor([1024.0], device=dev)
        t = torch.tensor([tracker], dtype=torch.int32, device=dev)
        torch._amp_update_scale_(s, t, torch.tensor([found], device=dev), 2.0, 0.5, 3)
        steps.append((s.item(), t.item()))
    big = torch.tensor([3e38], device=dev)
    t = torch.tensor([2], dtype=torch.int32, device=dev)
    torch._amp_update_scale_(big, t, torch.zeros(1, device=dev), 2.0, 0.5, 3)  # growth would overflow: kept
    return [g.cpu() for g in gs], clean, fi.item(), steps, (big.item(), t.item())


def test_amp_ops_match_cpu(fallback_error):
    cases = [(0.0, 0), (0.0, 1), (0.0, 2), (1.0, 2), (2.0, 0)]
    got, want = unscale_and_update("npu", cases), unscale_and_update("cpu", cases)
    for a, b in zip(got[0], want[0]):
        assert a.dtype == b.dtype and torch.equal(a.nan_to_num(), b.nan_to_num())
    assert got[1:] == want[1:]
    assert got[1] == 0.0 and got[2] == 1.0


def test_amp_ops_bad_input(fallback_error):
    g = [torch.ones(3).npu()]
    with pytest.raises(RuntimeError, match=r"found_inf must be a one-element tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, torch.zeros(2).npu(), torch.ones(1).npu())
    with pytest.raises(TypeError, match=r"growth_tracker must be Int"):
        torch._amp_update_scale_(torch.ones(1).npu(), torch.zeros(1).npu(), torch.zeros(1).npu(), 2.0, 0.5, 3)


def test_grad_scaler_training_matches_cpu():
    # GradScaler's own float64 reciprocal of the scale is the one op on the CPU fallback (no float64 on the
    # vector unit); everything else is native.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
    runs = {}
    for dev in ("cpu", "npu"):
        m = copy.deepcopy(model).to(dev)
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        scaler = torch.amp.GradScaler(dev, init_scale=256.0, growth_interval=2)
        losses, scales = [], []
        for step in range(6):
            loss = torch.nn.functional.cross_entropy(m(x.to(dev)), y.to(dev))
            scaler.scale(loss).backward()
            if step == 3:  # an overflowing gradient: the step is skipped and the scale halves
                next(m.parameters()).grad[0, 0] = float("inf")
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
            losses.append(loss.item())
            scales.append(scaler.get_scale())
        runs[dev] = (losses, scales, [p.detach().cpu() for p in m.parameters()])
    assert runs["npu"][1] == runs["cpu"][1] == [256.0, 512.0, 512.0, 256.0, 256.0, 512.0]
    torch.testing.assert_close(torch.tensor(runs["npu"][0]), torch.tensor(runs["cpu"][0]), rtol=1e-4, atol=1e-5)
    for a, b in zip(runs["npu"][2], runs["cpu"][2]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    assert set(torch_ops_nn.fallback_ops()) & {"aten::_amp_foreach_non_finite_check_and_unscale_",
                                               "aten::_amp_update_scale_"} == set()
