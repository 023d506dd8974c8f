"""torchvision's video classifiers (Conv3d, BatchNorm3d, AdaptiveAvgPool3d) on npu with every op a native
kernel (TORCH_OPS_NN_FALLBACK=error): eval forward against the CPU, and a training step of r3d_18's
stem and first block against the CPU in float64 (full float32 convs)."""
import copy

import pytest
import torch

import torch_ops_nn  # noqa: F401

torchvision = pytest.importorskip("torchvision")
pytestmark = pytest.mark.slow


def rel_err(a, b):
    return ((a.float() - b.float()).abs().max() / b.float().abs().max()).item()


def make(name):
    torch.manual_seed(0)
    m = getattr(torchvision.models.video, name)(num_classes=10)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm3d):
                mod.running_mean.uniform_(-0.1, 0.1)
                mod.running_var.uniform_(0.8, 1.2)
    return m.eval()


@pytest.mark.parametrize("name", ["r3d_18", "r2plus1d_18", "mc3_18"])
def test_video_eval_matches_cpu(name, fallback_error):
    m = make(name)
    x = torch.randn(2, 3, 4, 64, 64)
    with torch.no_grad():
        ref = m(x)
        out = copy.deepcopy(m).npu()(x.npu()).cpu()
    assert out.shape == ref.shape
    assert rel_err(out, ref) <= 1e-4


def test_r3d_block_training_step(full_fp32_convs, fallback_error):
    torch.manual_seed(3)
    full = torchvision.models.video.r3d_18(num_classes=5)
    m = torch.nn.Sequential(full.stem, full.layer1, torch.nn.AdaptiveAvgPool3d(1), torch.nn.Flatten(),
                            torch.nn.Linear(64, 5)).train()
    x, target = torch.randn(2, 3, 4, 32, 32), torch.tensor([1, 3])
    ref = copy.deepcopy(m).double()
    loss_ref = torch.nn.functional.cross_entropy(ref(x.double()), target)
    loss_ref.backward()
    mn = copy.deepcopy(m).npu()
    loss = torch.nn.functional.cross_entropy(mn(x.npu()), target.npu())
    loss.backward()
    assert abs(loss.item() - loss_ref.item()) <= 1e-4 * abs(loss_ref.item())
    for (name, p), (_, q) in zip(mn.named_parameters(), ref.named_parameters()):
        assert rel_err(p.grad.cpu(), q.grad) <= 1e-3, name
