"""Adam / AdamW with fused=True on npu: the fused ops (_fused_adam_, _fused_adamw_) native and equal to
the CPU's fused kernels on the same gradients; grad_scale / found_inf as GradScaler passes them."""
import pytest
import torch

import torch_ops_nn


SMALL = [(5, 7), (7,), (3, 2, 4)]


def run(dev, cls, kw, steps=4, grad_scale=None, found_inf=None, shapes=SMALL, transpose_first=False):
    g = torch.Generator().manual_seed(11)
    params = [torch.randn(*s, generator=g) for s in shapes]
    if transpose_first:  # a non-contiguous leaf: the composition, not the one-pass kernel
        params[0] = params[0].t()
    # Gradients in their parameter's layout, as autograd makes them (the CPU fused kernel pairs
    # elements by memory order).
    grads = [[torch.empty_like(p).copy_(torch.randn(p.shape, generator=g) * 0.1) for p in params]
             for _ in range(steps)]
    ps = [p.clone().to(dev).requires_grad_() for p in params]
    opt = cls(ps, lr=0.01, fused=True, **kw)
    for s in range(steps):
        for p, gr in zip(ps, grads[s]):
            p.grad = gr.to(dev)
        if grad_scale is not None:
            opt.grad_scale = grad_scale.to(dev)
            opt.found_inf = found_inf.to(dev)
        opt.step()
    return [p.detach().cpu() for p in ps], [{k: v.cpu() if torch.is_tensor(v) else v for k, v in opt.state[p].items()}
                                             for p in ps]


@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.AdamW])
@pytest.mark.parametrize("kw", [{}, dict(weight_decay=0.1), dict(amsgrad=True, weight_decay=0.05),
                                dict(maximize=True, betas=(0.8, 0.95), eps=1e-6)])
def test_fused_adam_matches_cpu(fallback_error, cls, kw):
    (p_n, s_n), (p_c, s_c) = run("npu", cls, kw), run("cpu", cls, kw)
    for a, b in zip(p_n, p_c):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
    for a, b in zip(s_n, s_c):
        for k in b:
            torch.testing.assert_close(a[k], b[k], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.AdamW])
@pytest.mark.parametrize("kw", [dict(weight_decay=0.1), dict(amsgrad=True, maximize=True, weight_decay=0.05)])
def test_fused_adam_kernel_over_tiles_and_cores(fallback_error, cls, kw):
    """Contiguous float32 parameters take the one-pass adam_kernel (one launch per parameter and step):
    parameters spanning several tiles and cores, a ragged tail, and a non-contiguous leaf (composed
    instead) all match the CPU's fused kernel."""
    check_one_pass_kernel(cls, kw, "adam_kernel")


def check_one_pass_kernel(cls, kw, kernel):
    """Three steps over parameters spanning tiles and cores, a ragged tail and a non-contiguous leaf:
    `kernel` launched once per contiguous parameter and step, parameters and tensor states as the
    CPU's fused kernel leaves them."""
    shapes = [(300, 257), (8193,), (3, 5), (40, 30)]
    torch.npu.reset_kernel_counters()
    (p_n, s_n) = run("npu", cls, kw, steps=3, shapes=shapes, transpose_first=True)
    assert torch.npu.kernel_counters()[kernel]["launches"] == 3 * (len(shapes) - 1)
    (p_c, s_c) = run("cpu", cls, kw, steps=3, shapes=shapes, transpose_first=True)
    for a, b in zip(p_n, p_c):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
    for a, b in zip(s_n, s_c):
        for k in b:
            if torch.is_tensor(b[k]):
                torch.testing.assert_close(a[k], b[k], rtol=1e-5, atol=1e-7)


def test_fused_adam_grad_scale_and_found_inf(fallback_error):
    kw = dict(weight_decay=0.01)
    for found in (0.0, 1.0):  # found_inf = 1: the step leaves the parameters as they were
        (p_n, _), (p_c, _) = (run(dev, torch.optim.AdamW, kw, steps=2, grad_scale=torch.tensor(4.0),
                                  found_inf=torch.tensor(found)) for dev in ("npu", "cpu"))
        for a, b in zip(p_n, p_c):
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)


def test_fused_adam_half_params_take_the_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "silent")
    p = torch.randn(4).half().npu().requires_grad_()
    p.grad = torch.ones(4).half().npu()
    torch.optim.Adam([p], lr=0.1, fused=True).step()
    assert "aten::_fused_adam_" in torch_ops_nn.fallback_ops()
    q = p.detach().cpu().float()
    assert torch.all(q.isfinite())


@pytest.mark.parametrize("kw", [dict(momentum=0.9), dict(momentum=0.9, nesterov=True, weight_decay=0.01),
                                dict(momentum=0.8, dampening=0.1, maximize=True), dict(weight_decay=0.1),
                                dict(momentum=0.9, lr=torch.tensor(0.05))])
def test_fused_sgd_matches_cpu(fallback_error, kw):
    """SGD(fused=True): _fused_sgd_ (and its tensor-lr overload) native, one sgd_kernel launch per
    contiguous float32 parameter and step (the first step seeds the momentum buffer), a
    non-contiguous leaf composed; equal to the CPU's fused kernel."""
    kw = dict(kw)
    rate = kw.pop("lr", 0.05)

    def sgd(ps, lr=None, **more):  # run()'s lr replaced by this case's (a float or a device tensor)
        return torch.optim.SGD(ps, lr=rate.to(ps[0].device) if torch.is_tensor(rate) else rate, **more)

    check_one_pass_kernel(sgd, kw, "sgd_kernel")


def test_fused_sgd_grad_scale_and_found_inf(fallback_error):
    for found in (0.0, 1.0):  # found_inf = 1: the step leaves the parameters as they were
        (p_n, _), (p_c, _) = (run(dev, torch.optim.SGD, dict(momentum=0.9), steps=2, grad_scale=torch.tensor(4.0),
                                  found_inf=torch.tensor(found)) for dev in ("npu", "cpu"))
        for a, b in zip(p_n, p_c):
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
