"""The Conv-BN(-Add)-activation FX pass: what it fuses, what it must leave alone, on module-level,
Dynamo (torch-function) and ATen graphs. Numerics here are on the CPU reference of the fused op (the
pass is device independent); the npu kernel's numerics are in test_fused_ops.py."""
import operator

import pytest
import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

import torch_ops_nn  # noqa: F401
from torch_ops_nn.fx import fuse, fuse_graph

FUSED = torch.ops.torch_ops_nn.conv_bn_act.default


def fused_nodes(gm):
    return [n for n in gm.graph.nodes if n.target is FUSED]


def randomize_bn(bn: nn.BatchNorm2d):
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    return bn


def check(model, x, expect, atol=1e-5):
    model = model.eval()
    gm = fuse(model)
    assert dict(gm.fusion_report.fused) == expect, gm.fusion_report
    with torch.no_grad():
        torch.testing.assert_close(gm(x), model(x), atol=atol, rtol=1e-5)
    return gm


class ConvBnRelu(nn.Module):
    def __init__(self, bias=False, groups=1, dilation=1, inplace=False, act="relu"):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, padding=dilation, dilation=dilation, groups=groups, bias=bias)
        self.bn = randomize_bn(nn.BatchNorm2d(16))
        self.act = {"relu": nn.ReLU(inplace=inplace), "relu6": nn.ReLU6(), "silu": nn.SiLU()}[act]

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


X = torch.randn(2, 8, 10, 12)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("groups", [1, 2, 8])
@pytest.mark.parametrize("dilation", [1, 2])
def test_module_conv_bn_relu(bias, groups, dilation):
    check(ConvBnRelu(bias, groups, dilation), X, {"conv_bn_relu": 1})


@pytest.mark.parametrize("act", ["relu6", "silu"])
def test_other_activations(act):
    check(ConvBnRelu(act=act), X, {f"conv_bn_{act}": 1})


def test_inplace_relu_module():
    check(ConvBnRelu(inplace=True), X, {"conv_bn_relu": 1})


class Functional(nn.Module):
    def __init__(self, relu):
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 8, 3, 3) * 0.1)
        self.bn = randomize_bn(nn.BatchNorm2d(16))
        self.relu = relu

    def forward(self, x):
        y = F.conv2d(x, self.w, None, 1, 1)
        y = F.batch_norm(y, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, False)
        return self.relu(y)


@pytest.mark.parametrize("relu", [F.relu, torch.relu, lambda y: y.relu(), lambda y: F.relu(y, inplace=True),
                                  lambda y: y.relu_()], ids=["F.relu", "torch.relu", "method", "F.relu_inplace",
                                                             "relu_"])
def test_functional_forms(relu):
    check(Functional(relu), X, {"conv_bn_relu": 1})


def test_conv_bn_without_relu_and_conv_relu_without_bn():
    check(nn.Sequential(nn.Conv2d(8, 4, 1), randomize_bn(nn.BatchNorm2d(4))), X, {"conv_bn": 1})
    check(nn.Sequential(nn.Conv2d(8, 4, 3, stride=2), nn.ReLU()), X, {"conv_relu": 1})


class Residual(nn.Module):
    def __init__(self, inplace_add):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn = randomize_bn(nn.BatchNorm2d(8))
        self.inplace_add = inplace_add

    def forward(self, x):
        identity = x
        out = self.bn(self.conv(x))
        if self.inplace_add:
            out += identity
        else:
            out = out + identity
        return F.relu(out)


@pytest.mark.parametrize("inplace_add", [False, True])
def test_residual_add(inplace_add):
    gm = check(Residual(inplace_add), X, {"conv_bn_add_relu": 1})
    (node,) = fused_nodes(gm)
    assert node.args[7].op == "placeholder"  # the residual is the block input


def test_bn_in_training_mode_is_left_alone():
    m = ConvBnRelu()
    m.train()
    gm = fuse(m)
    assert gm.fusion_report.total == 0
    assert any("training mode" in r for _, r in gm.fusion_report.skipped)
    assert not fused_nodes(gm)


def test_fused_module_refuses_train_mode():
    gm = fuse(ConvBnRelu().eval())
    with pytest.raises(RuntimeError, match="fused .* for inference"):
        gm.train()
    gm.eval()  # still fine


class ConvOutputReused(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
        self.bn = randomize_bn(nn.BatchNorm2d(8))

    def forward(self, x):
        y = self.conv(x)
        return F.relu(self.bn(y)) + y  # the conv output has a second user


def test_conv_output_with_other_users_is_left_alone():
    gm = check(ConvOutputReused(), X, {})
    assert any("conv output has 2 users" in r for _, r in gm.fusion_report.skipped)


class BnOutputReused(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
        self.bn = randomize_bn(nn.BatchNorm2d(8))

    def forward(self, x):
        z = self.bn(self.conv(x))
        return F.relu(z) * z  # BN output used twice: fuse conv+bn, keep relu separate


def test_bn_output_with_other_users_fuses_conv_bn_only():
    check(BnOutputReused(), X, {"conv_bn": 1})


class ResidualFromChain(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return F.relu(y + y)  # "residual" is the conv output itself


def test_residual_depending_on_the_conv_is_not_fused():
    gm = check(ResidualFromChain(), X, {})
    assert gm.fusion_report.total == 0


def test_reflect_padding_and_string_padding_are_skipped():
    m = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, padding_mode="reflect"), nn.ReLU())
    gm = check(m, X, {})
    assert any("padding_mode 'reflect'" in r for _, r in gm.fusion_report.skipped)
    m = nn.Sequential(nn.Conv2d(8, 8, 3, padding="same"), nn.ReLU())
    gm = check(m, X, {})
    assert any("string padding" in r for _, r in gm.fusion_report.skipped)


def test_transposed_conv_is_not_a_candidate():
    m = nn.Sequential(nn.ConvTranspose2d(8, 8, 3), nn.ReLU())
    check(m, X, {})


def test_aten_graph_from_aot_autograd():
    from functorch.compile import make_boxed_compiler
    from torch._dynamo.backends.common import aot_autograd

    reports = []

    def compiler(gm, _):
        reports.append(fuse_graph(gm))
        assert any(n.target is FUSED for n in gm.graph.nodes)
        assert not any(n.target is torch.ops.aten.convolution.default for n in gm.graph.nodes)
        return gm

    m = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1, bias=False), randomize_bn(nn.BatchNorm2d(16)),
                      nn.ReLU(inplace=True)).eval()
    torch._dynamo.reset()
    with torch.no_grad():
        out = torch.compile(m, backend=aot_autograd(fw_compiler=make_boxed_compiler(compiler)))(X)
        torch.testing.assert_close(out, m(X))
    assert dict(reports[0].fused) == {"conv_bn_relu": 1}


def test_dynamo_torch_function_graph():
    captured = {}

    def backend(gm, _):
        captured["report"] = fuse_graph(gm)
        return gm

    m = Residual(False).eval()
    torch._dynamo.reset()
    with torch.no_grad():
        out = torch.compile(m, backend=backend)(X)
        torch.testing.assert_close(out, m(X))
    assert dict(captured["report"].fused) == {"conv_bn_add_relu": 1}


@pytest.mark.parametrize("name,expected", [
    ("resnet18", {"conv_bn_relu": 9, "conv_bn_add_relu": 8, "conv_bn": 3}),
    ("resnet50", {"conv_bn_relu": 33, "conv_bn_add_relu": 16, "conv_bn": 4}),
])
def test_resnet_counts(name, expected):
    torchvision = pytest.importorskip("torchvision")
    m = getattr(torchvision.models, name)().eval()
    gm = fuse(m)
    assert dict(gm.fusion_report.fused) == expected
    assert gm.fusion_report.conv_bn_pairs == (20 if name == "resnet18" else 53)
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(gm(x), m(x), atol=1e-4, rtol=1e-4)
