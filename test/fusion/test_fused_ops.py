"""The fused Conv+BN(+Add)+activation op on npu against the unfused sequence on CPU, the seed's API,
BN parameter updates, autograd, and torch.compile(backend="npu") end to end."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_ops_nn
from torch_ops_nn import compile_backend
from torch_ops_nn.fused import reference

OP = torch.ops.torch_ops_nn.conv_bn_act


def rel(a, b):
    return ((a.float().cpu() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-12)).item()


def bn_params(c, g):
    return (torch.rand(c, generator=g) + 0.5, torch.randn(c, generator=g) * 0.2, torch.randn(c, generator=g) * 0.1,
            torch.rand(c, generator=g) + 0.5)


CASES = [  # (N, C, H, W), (O, C/g, kh, kw), stride, padding, dilation, groups
    ((2, 8, 13, 11), (16, 8, 3, 3), 1, 1, 1, 1),
    ((1, 3, 31, 29), (8, 3, 7, 7), 2, 3, 1, 1),
    ((2, 16, 9, 9), (16, 4, 3, 3), 1, 2, 2, 4),
    ((2, 12, 10, 10), (12, 1, 3, 3), 2, 1, 1, 12),  # depthwise
    ((3, 32, 7, 7), (64, 32, 1, 1), 1, 0, 1, 1),
    ((2, 8, 9, 10), (8, 8, 1, 1), 2, 1, 1, 1),  # padding of the kernel's size or more: a border of
    ((1, 4, 8, 8), (6, 4, 2, 2), 1, 2, 1, 1),   # pure-padding windows (as F.conv2d allows)
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-s{c[2]}p{c[3]}d{c[4]}g{c[5]}")
@pytest.mark.parametrize("activation", ["relu", "none", "relu6", "silu"])
@pytest.mark.parametrize("with_bn,with_bias,with_residual", [(True, False, False), (True, True, True),
                                                              (False, True, False), (False, False, True)])
def test_fused_matches_unfused_cpu(case, activation, with_bn, with_bias, with_residual, fallback_error):
    xs, ws, s, p, d, groups = case
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(xs, generator=g), torch.randn(ws, generator=g) * 0.2
    o = ws[0]
    bias = torch.randn(o, generator=g) if with_bias else None
    gamma, beta, mean, var = bn_params(o, g) if with_bn else (None,) * 4
    args = [x, w, bias, gamma, beta, mean, var]
    ref_no_res = reference(*args, None, 1e-5, [s, s], [p, p], [d, d], groups, "none")
    res = torch.randn(ref_no_res.shape, generator=g) if with_residual else None
    ref = reference(*args, res, 1e-5, [s, s], [p, p], [d, d], groups, activation)
    dev = [None if t is None else t.to("npu") for t in args + [res]]
    out = OP(*dev, 1e-5, [s, s], [p, p], [d, d], groups, activation)
    assert out.device.type == "npu" and out.shape == ref.shape
    assert rel(out, ref) <= 1e-4


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 5e-3), (torch.bfloat16, 3e-2)])
def test_fused_low_precision(dtype, tol, fallback_error):
    g = torch.Generator().manual_seed(1)
    x, w = torch.randn(2, 16, 12, 12, generator=g), torch.randn(32, 16, 3, 3, generator=g) * 0.1
    gamma, beta, mean, var = bn_params(32, g)
    ref = reference(x, w, None, gamma, beta, mean, var, None, 1e-5, [1, 1], [1, 1], [1, 1], 1, "relu")
    dev = [t.to("npu", dtype) for t in (x, w)] + [t.to("npu") for t in (gamma, beta, mean, var)]
    out = OP(dev[0], dev[1], None, *dev[2:], None, 1e-5, [1, 1], [1, 1], [1, 1], 1, "relu")
    assert out.dtype == dtype
    assert rel(out, ref) <= tol


def test_channels_last_input_gives_channels_last_output(fallback_error):
    x = torch.randn(2, 8, 10, 10).to(memory_format=torch.channels_last)
    w = torch.randn(8, 8, 3, 3) * 0.2
    gamma, beta, mean, var = bn_params(8, torch.Generator().manual_seed(2))
    ref = reference(x, w, None, gamma, beta, mean, var, None, 1e-5, [1, 1], [1, 1], [1, 1], 1, "relu")
    out = OP(x.to("npu"), w.to("npu"), None, *(t.to("npu") for t in (gamma, beta, mean, var)), None, 1e-5,
             [1, 1], [1, 1], [1, 1], 1, "relu")
    assert out.is_contiguous(memory_format=torch.channels_last)
    assert rel(out, ref) <= 1e-4


def test_seed_call_with_identity_bn(fallback_error):
    x, w = torch.randn(1, 3, 224, 224), torch.randn(64, 3, 7, 7) * 0.1
    out = torch_ops_nn.fused_conv_bn_relu(x.to("npu"), w.to("npu"), stride=(2, 2), padding=(3, 3))
    ref = torch.relu(F.batch_norm(F.conv2d(x, w, stride=2, padding=3), torch.zeros(64), torch.ones(64),
                                  training=False))
    assert out.shape == (1, 64, 112, 112)
    assert rel(out, ref) <= 1e-4


def test_bn_parameter_updates_are_never_missed(fallback_error):
    g = torch.Generator().manual_seed(3)
    x, w = torch.randn(1, 4, 8, 8, generator=g).to("npu"), (torch.randn(8, 4, 3, 3, generator=g) * 0.3).to("npu")
    gamma, beta, mean, var = (t.to("npu") for t in bn_params(8, g))
    call = lambda: torch_ops_nn.fused_conv_bn_relu(x, w, None, gamma, beta, mean, var, padding=(1, 1))  # noqa
    first = call().cpu()
    mean.add_(0.5)       # in-place update: the folded scale/shift must be recomputed
    gamma.mul_(2.0)
    second = call().cpu()
    ref = torch.relu(F.batch_norm(F.conv2d(x.cpu(), w.cpu(), padding=1), mean.cpu(), var.cpu(), gamma.cpu(),
                                  beta.cpu(), training=False))
    assert not torch.allclose(first, second)
    assert rel(second, ref) <= 1e-4


def test_seed_api_errors():
    x = torch.randn(1, 3, 8, 8).to("npu")
    w = torch.randn(4, 3, 3, 3).to("npu")
    with pytest.raises(ValueError, match=r"fused_conv_bn_relu: running_mean must have shape \(4,\)"):
        torch_ops_nn.fused_conv_bn_relu(x, w, running_mean=torch.zeros(5).to("npu"))
    with pytest.raises(ValueError, match=r"output height .* = -2 is not positive"):
        torch_ops_nn.fused_conv_bn_relu(x, torch.randn(4, 3, 11, 11).to("npu"))
    with pytest.raises(RuntimeError, match="w is on cpu"):
        torch_ops_nn.fused_conv_bn_relu(x, w.cpu())
    with pytest.raises(TypeError, match="supported dtypes: float32, float16, bfloat16"):
        torch_ops_nn.fused_conv_bn_relu(x.double(), w.double())
    with pytest.raises(ValueError, match="activation must be one of"):
        OP(x, w, None, None, None, None, None, None, 1e-5, [1, 1], [0, 0], [1, 1], 1, "gelu")


@pytest.mark.parametrize("activation", ["relu", "relu6", "silu", "none"])
@pytest.mark.parametrize("grads", ["all", "some"])
def test_autograd_through_the_fused_op(activation, grads, fallback_error):
    # Gradients of the fused op on npu against plain autograd through the unfused sequence on CPU.
    # "some": only the conv bias and the BN shift require grad, so the node's variable inputs skip
    # positions (x, w and gamma are plain inputs).
    g = torch.Generator().manual_seed(4)
    x, w = torch.randn(2, 4, 9, 9, generator=g), torch.randn(6, 4, 3, 3, generator=g) * 0.3
    bias = torch.randn(6, generator=g) * 0.1
    gamma, beta, mean, var = bn_params(6, g)
    res = None if activation == "silu" else torch.randn(2, 6, 9, 9, generator=g)
    wants = [True] * 5 if grads == "all" else [False, False, True, False, True]
    inputs = [x, w, bias, gamma, beta]
    leaves_cpu = [t.clone().requires_grad_(r) for t, r in zip(inputs, wants)]
    leaves_npu = [t.to("npu").requires_grad_(r) for t, r in zip(inputs, wants)]
    res_cpu = None if res is None else res.clone().requires_grad_()
    res_npu = None if res is None else res.to("npu").requires_grad_()
    y_ref = reference(*leaves_cpu, mean, var, res_cpu, 1e-5, [1, 1], [1, 1], [1, 1], 1, activation)
    (y_ref * y_ref).sum().backward()
    y = OP(*leaves_npu, mean.to("npu"), var.to("npu"), res_npu, 1e-5, [1, 1], [1, 1], [1, 1], 1, activation)
    (y * y).sum().backward()
    assert rel(y.detach(), y_ref.detach()) <= 1e-4
    for a, b, r in zip(leaves_npu + [res_npu], leaves_cpu + [res_cpu], wants + [True]):
        if a is None:
            continue
        if not r:
            assert a.grad is None
            continue
        assert a.grad is not None and a.grad.device.type == "npu"
        assert rel(a.grad, b.grad) <= 1e-4


def test_inference_needs_no_autograd_node(fallback_error):
    x, w = torch.randn(1, 4, 6, 6).to("npu"), torch.randn(4, 4, 3, 3).to("npu").requires_grad_()
    y = OP(x, w, None, None, None, None, None, None, 1e-5, [1, 1], [1, 1], [1, 1], 1, "relu")
    assert y.grad_fn is not None
    with torch.no_grad():
        y = OP(x, w, None, None, None, None, None, None, 1e-5, [1, 1], [1, 1], [1, 1], 1, "relu")
    assert y.grad_fn is None and not y.requires_grad


def test_bn_parameters_made_in_inference_mode(fallback_error):
    # Inference tensors have no version counter: the fold is recomputed on every call.
    g = torch.Generator().manual_seed(6)
    x, w = torch.randn(1, 4, 8, 8, generator=g), torch.randn(8, 4, 3, 3, generator=g) * 0.3
    params = bn_params(8, g)
    with torch.inference_mode():
        dev = [t.to("npu") for t in (x, w) + params]
        first = OP(*dev[:2], None, *dev[2:], None, 1e-5, [1, 1], [1, 1], [1, 1], 1, "relu").cpu()
        dev[4].add_(0.5)
        second = OP(*dev[:2], None, *dev[2:], None, 1e-5, [1, 1], [1, 1], [1, 1], 1, "relu").cpu()
    ref = reference(x, w, None, params[0], params[1], params[2] + 0.5, params[3], None, 1e-5, [1, 1], [1, 1],
                    [1, 1], 1, "relu")
    assert not torch.allclose(first, second)
    assert rel(second, ref) <= 1e-4


def test_cached_folds_do_not_keep_freed_parameters_alive(fallback_error):
    x, w = torch.randn(1, 4, 8, 8).to("npu"), torch.randn(8, 4, 3, 3).to("npu")
    torch.npu.empty_cache()  # also drops folds cached by earlier tests
    base = torch.npu.memory_allocated()
    params = [t.to("npu") for t in bn_params(8, torch.Generator().manual_seed(7))]
    y = OP(x, w, None, *params, None, 1e-5, [1, 1], [1, 1], [1, 1], 1, "relu")
    assert torch.npu.memory_allocated() > base
    del params, y
    torch.npu.empty_cache()
    assert torch.npu.memory_allocated() == base


def resnet(name):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)().eval()
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.1, 0.1)
                mod.running_var.uniform_(0.8, 1.2)
    return m


@pytest.mark.slow
@pytest.mark.parametrize("name,pairs", [("resnet18", 20), ("resnet50", 53)])
def test_compile_resnet_eval_matches_eager(name, pairs, fallback_error):
    m = resnet(name).to("npu")
    x = torch.randn(2, 3, 96, 96).to("npu")
    torch._dynamo.reset()
    compile_backend.stats.reset()
    compiled = torch.compile(m, backend="npu")
    with torch.no_grad():
        eager = m(x).cpu()
        out = compiled(x).cpu()
        compiled(x)
        compiled(x)
    assert rel(out, eager) <= 1e-4
    assert compile_backend.stats.report.conv_bn_pairs == pairs
    assert compile_backend.stats.graphs_compiled == 1  # repeated calls with the same shapes: no recompile


def test_compile_training_small_model_matches_eager(fallback_error):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
            self.c2 = nn.Conv2d(8, 8, 3, padding=1)
            self.fc = nn.Linear(8, 10)

        def forward(self, x):
            y = F.relu(self.b1(self.c1(x)))
            y = F.relu(self.c2(y)) + y
            return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))

    torch.manual_seed(0)
    base = Net()
    x, t = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    losses = {}
    torch._dynamo.reset()
    for mode in ("eager", "compiled"):
        m = copy.deepcopy(base).to("npu").train()
        run = torch.compile(m, backend="npu") if mode == "compiled" else m
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        losses[mode] = []
        for _ in range(4):
            opt.zero_grad()
            loss = F.cross_entropy(run(x.to("npu")), t.to("npu"))
            loss.backward()
            opt.step()
            losses[mode].append(loss.item())
    for a, b in zip(losses["compiled"], losses["eager"]):
        assert abs(a - b) <= 1e-4 * max(1.0, abs(b))


def test_default_torch_compile_runs_npu_graphs_through_our_backend(fallback_error):
    # Inductor has no npu code generator (it raised KeyError: 'npu'); npu graphs go to our backend,
    # CPU graphs still to Inductor, and Inductor-only settings warn that they do not apply.
    import warnings

    from torch_ops_nn import _inductor_route

    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 4, 1)).eval()
    m[1].running_mean.uniform_(-0.5, 0.5)
    m[1].running_var.uniform_(0.5, 1.5)
    x = torch.randn(2, 3, 12, 12)
    with torch.no_grad():
        ref = m(x)
        torch._dynamo.reset()
        compile_backend.stats.reset()
        out = torch.compile(copy.deepcopy(m).to("npu"))(x.to("npu"))
        assert out.device.type == "npu"
        assert rel(out.cpu(), ref) <= 1e-5
        assert compile_backend.stats.graphs_compiled == 1
        assert compile_backend.stats.report.conv_bn_pairs == 1
        # A CPU graph is Inductor's.
        lin = nn.Linear(4, 3)
        xc = torch.randn(5, 4)
        assert torch.allclose(torch.compile(lin)(xc), lin(xc), atol=1e-6)
        assert compile_backend.stats.graphs_compiled == 1
    _inductor_route._warned_settings = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin_npu = copy.deepcopy(lin).to("npu")
        torch._dynamo.reset()
        out = torch.compile(lin_npu, mode="max-autotune")(xc.to("npu"))
    assert torch.allclose(out.cpu(), lin(xc), atol=1e-5)
    assert any("max_autotune" in str(w.message) and "backend='npu'" in str(w.message) for w in caught)
    torch._dynamo.reset()
