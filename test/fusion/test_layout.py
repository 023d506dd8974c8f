"""The channels_last layout pass of the torch.compile backend (inference graphs): results and output
layouts match eager, views of 4-D activations still see the traced strides, and it can be turned off."""
import copy

import pytest
import torch
import torch.nn as nn

import torch_ops_nn  # noqa: F401
from torch_ops_nn import compile_backend


class Net(nn.Module):
    """conv-bn-relu, a pool, a residual, a flatten of a 7x7 map (a view that needs NCHW strides), a
    linear head, and a 4-D feature map returned as a second output."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 7 * 7, 10)

    def forward(self, x):
        y = self.pool(torch.relu(self.bn1(self.conv1(x))))
        z = torch.relu(self.bn2(self.conv2(y)) + y)
        return self.fc(z.flatten(1)), z


def _model():
    torch.manual_seed(0)
    m = Net().eval()
    with torch.no_grad():
        for bn in (m.bn1, m.bn2):
            bn.running_mean.uniform_(-0.2, 0.2)
            bn.running_var.uniform_(0.5, 1.5)
    return m


def rel(a, b):
    return ((a.cpu() - b).abs().max() / b.abs().max()).item()


@pytest.mark.parametrize("channels_last", [True, False])
def test_compiled_inference_matches_eager(channels_last, fallback_error):
    torch._dynamo.reset()
    compile_backend.stats.reset()
    m = _model()
    x = torch.randn(2, 3, 14, 14)
    ref_logits, ref_map = m(x)
    dm = _model().to("npu")
    opts = None if channels_last else {"channels_last": False}
    f = torch.compile(dm, backend="npu", options=opts)
    with torch.no_grad():
        logits, fmap = f(x.to("npu"))
    assert rel(logits, ref_logits) <= 1e-4 and rel(fmap, ref_map) <= 1e-4
    assert fmap.is_contiguous() and fmap.stride() == ref_map.stride()  # the traced (eager) layout
    assert (compile_backend.stats.channels_last_convs > 0) == channels_last


@pytest.mark.parametrize("train", [False, True])
def test_channels_last_input(train, fallback_error):
    # npu convs return channels_last for channels_last inputs (as on CPU) while the tracer assumes
    # contiguous outputs for out-of-tree devices: the flatten (a view) must still see the traced
    # strides, in inference and in training. Outputs come back in the traced layout.
    torch._dynamo.reset()
    m = _model().train(train)
    x = torch.randn(2, 3, 14, 14).contiguous(memory_format=torch.channels_last)
    ref_logits, ref_map = m(x)
    dm = _model().train(train).to("npu")
    f = torch.compile(dm, backend="npu")
    with torch.set_grad_enabled(train):
        logits, fmap = f(x.to("npu"))
    assert rel(logits.detach(), ref_logits.detach()) <= 1e-4 and rel(fmap.detach(), ref_map.detach()) <= 1e-4
    assert fmap.is_contiguous()
    if train:
        (logits.square().sum() + fmap.sum()).backward()
        (ref_logits.square().sum() + ref_map.sum()).backward()
        assert rel(dm.conv1.weight.grad, m.conv1.weight.grad) <= 1e-3


def test_training_graphs_are_left_in_their_layout(fallback_error):
    torch._dynamo.reset()
    compile_backend.stats.reset()
    m = _model().train()
    dm = _model().train().to("npu")
    x = torch.randn(2, 3, 14, 14)
    loss_ref = m(x)[0].square().sum()
    loss_ref.backward()
    loss = torch.compile(dm, backend="npu")(x.to("npu"))[0].square().sum()
    loss.backward()
    assert compile_backend.stats.channels_last_convs == 0
    assert abs(loss.item() - loss_ref.item()) <= 1e-4 * abs(loss_ref.item())
    assert rel(dm.conv1.weight.grad, m.conv1.weight.grad) <= 1e-3


class PoolHead(nn.Module):
    """conv -> max pool (a tuple-returning op) -> adaptive pool -> flatten of a 3x3 map, as VGG's head,
    and a conv whose BN is not fused (its output has two users)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 3 * 3 * 2, 5)

    def forward(self, x):
        c = self.conv(x)
        y = torch.relu(self.bn(c))
        p = nn.functional.adaptive_avg_pool2d(nn.functional.max_pool2d(y, 2), 3)
        q = nn.functional.adaptive_avg_pool2d(c, 3)
        return self.fc(torch.cat([p, q], 1).flatten(1))


@pytest.mark.parametrize("channels_last_input", [False, True])
def test_views_after_tuple_ops_see_traced_strides(channels_last_input, fallback_error):
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = PoolHead().eval()
    x = torch.randn(2, 3, 12, 12)
    if channels_last_input:
        x = x.contiguous(memory_format=torch.channels_last)
    ref = m(x)
    dm = PoolHead().eval()
    dm.load_state_dict(m.state_dict())
    f = torch.compile(dm.to("npu"), backend="npu")
    with torch.no_grad():
        out = f(x.to("npu"))
    assert rel(out, ref) <= 1e-4


def test_unknown_option_is_a_clear_error():
    torch._dynamo.reset()
    f = torch.compile(_model().to("npu"), backend="npu", options={"channels_lst": True})
    with pytest.raises(Exception, match="unknown options \\['channels_lst'\\]"):
        with torch.no_grad():
            f(torch.randn(1, 3, 14, 14).to("npu"))


@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
def test_compile_modes_are_accepted(mode):
    # torch.compile passes `mode` to a custom backend; the npu backend has one pipeline for all of them.
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = _model().eval()
    x = torch.randn(2, 3, 14, 14)
    with torch.no_grad():
        ref = m(x)
        out = torch.compile(copy.deepcopy(m).to("npu"), backend="npu", mode=mode)(x.to("npu"))
    assert len(out) == len(ref) and all(rel(o, r) <= 1e-4 for o, r in zip(out, ref))


def test_unknown_mode_is_a_clear_error():
    torch._dynamo.reset()
    f = torch.compile(_model().to("npu"), backend="npu", mode="fastest")
    with pytest.raises(Exception, match="unknown mode 'fastest'; supported: default, reduce-overhead"):
        with torch.no_grad():
            f(torch.randn(1, 3, 14, 14).to("npu"))
