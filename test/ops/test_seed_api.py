"""The ops-nn tutorial's API (torch_ops_nn.conv2d / matmul / relu / maxpool / batch_norm /
fused_conv_bn_relu) against PyTorch's CPU results, and its troubleshooting promises: bad shapes,
dtypes and devices raise a clear error naming the op, the argument and the numbers."""
import pytest
import torch
import torch.nn.functional as F

import torch_ops_nn


def close(got, want, tol=1e-4):
    assert got.device.type == "npu"
    assert got.shape == want.shape
    g = got.cpu().float()
    assert (g - want).abs().max().item() <= tol * max(want.abs().max().item(), 1.0)


def test_each_op_matches_the_cpu(fallback_error):
    torch.manual_seed(0)
    x, w, b = torch.randn(2, 6, 15, 13), torch.randn(8, 3, 3, 3) * 0.2, torch.randn(8)
    close(torch_ops_nn.conv2d(x.npu(), w.npu(), b.npu(), stride=2, padding=(1, 2), groups=2),
          F.conv2d(x, w, b, 2, (1, 2), 1, 2))
    a, m = torch.randn(5, 7, 9), torch.randn(9, 4)
    close(torch_ops_nn.matmul(a.npu(), m.npu()), a @ m)
    close(torch_ops_nn.relu(x.npu()), torch.relu(x), 0)
    close(torch_ops_nn.maxpool(x.npu(), 3, 2, 1), F.max_pool2d(x, 3, 2, 1), 0)
    close(torch_ops_nn.maxpool(x[0].npu()), F.max_pool2d(x[0], 2), 0)
    mean, var, g, beta = torch.randn(6), torch.rand(6) + 0.5, torch.randn(6), torch.randn(6)
    close(torch_ops_nn.batch_norm(x.npu(), mean.npu(), var.npu(), g.npu(), beta.npu()),
          F.batch_norm(x, mean, var, g, beta, training=False))
    # Training mode: batch statistics, and the running statistics updated in place as on the CPU.
    rm, rv, rm_n, rv_n = mean.clone(), var.clone(), mean.npu(), var.npu()
    close(torch_ops_nn.batch_norm(x.npu(), rm_n, rv_n, training=True), F.batch_norm(x, rm, rv, training=True))
    close(rm_n, rm)
    close(rv_n, rv)
    close(torch_ops_nn.batch_norm(x.npu()), F.batch_norm(x, None, None, training=True))
    xh = x.half().npu()
    assert torch_ops_nn.relu(xh).dtype == torch.float16


def test_shape_errors_name_the_rule_and_the_numbers():
    x, w = torch.randn(1, 3, 8, 8).npu(), torch.randn(4, 3, 3, 3).npu()
    with pytest.raises(ValueError, match=r"conv2d: w expects 2 input channels per group x 1 groups = 2, but x has 3"):
        torch_ops_nn.conv2d(x, torch.randn(4, 2, 3, 3).npu())
    with pytest.raises(ValueError, match=r"conv2d: output width floor\(\(W \+ 2\*padding .* = floor\(\(8 \+ 2\*0 - 1\*\(9-1\) - 1\)/1\) \+ 1 = 0 is "
                                         r"not positive"):
        torch_ops_nn.conv2d(x, torch.randn(4, 3, 1, 9).npu())
    with pytest.raises(ValueError, match=r"conv2d: bias must have shape \(4,\) to match w's 4 output channels, got \(5,\)"):
        torch_ops_nn.conv2d(x, w, torch.zeros(5).npu())
    with pytest.raises(ValueError, match=r"conv2d: stride \(0, 1\) and dilation \(1, 1\) must be >= 1"):
        torch_ops_nn.conv2d(x, w, stride=(0, 1))
    with pytest.raises(ValueError, match=r"conv2d: padding must be an int or a pair of ints, got \(1, 1, 1\)"):
        torch_ops_nn.conv2d(x, w, padding=(1, 1, 1))
    with pytest.raises(ValueError, match=r"matmul: a has shape \(2, 3\) and b has shape \(4, 5\): a's last dimension \(3\)"):
        torch_ops_nn.matmul(torch.randn(2, 3).npu(), torch.randn(4, 5).npu())
    with pytest.raises(ValueError, match=r"maxpool: height padding 2 must be between 0 and half the kernel \(3 // 2 = 1\)"):
        torch_ops_nn.maxpool(x, 3, 1, 2)
    with pytest.raises(ValueError, match=r"maxpool: x must be 3-D \(C, H, W\) or 4-D"):
        torch_ops_nn.maxpool(torch.randn(8, 8).npu())
    with pytest.raises(ValueError, match=r"batch_norm: running_mean must have shape \(3,\) for x's 3 channels, got \(4,\)"):
        torch_ops_nn.batch_norm(x, torch.zeros(4).npu(), torch.ones(4).npu())
    with pytest.raises(ValueError, match=r"batch_norm: give both running_mean and running_var"):
        torch_ops_nn.batch_norm(x, torch.zeros(3).npu())
    with pytest.raises(ValueError, match=r"batch_norm: training needs more than 1 value per channel"):
        torch_ops_nn.batch_norm(torch.randn(1, 3, 1, 1).npu())
    # Empty inputs (no channels, or an empty batch) pass through as in F.batch_norm.
    for shape in ((2, 0, 3), (0, 3, 4)):
        assert torch_ops_nn.batch_norm(torch.randn(shape).npu()).shape == shape


def test_dtype_and_device_errors():
    x, w = torch.randn(1, 3, 8, 8), torch.randn(4, 3, 3, 3)
    with pytest.raises(TypeError, match=r"conv2d: x has dtype float64, which is not supported; supported dtypes: "
                                        r"float32, float16, bfloat16"):
        torch_ops_nn.conv2d(x.double().npu(), w.double().npu())
    with pytest.raises(TypeError, match=r"conv2d: x is float32 but w is float16; convert them to one dtype"):
        torch_ops_nn.conv2d(x.npu(), w.half().npu())
    with pytest.raises(RuntimeError, match=r"conv2d: expected npu tensors, but w is on cpu \(x on npu:0, w on cpu\)"):
        torch_ops_nn.conv2d(x.npu(), w)
    with pytest.raises(RuntimeError, match=r"relu: expected npu tensors, but x is on cpu"):
        torch_ops_nn.relu(x)
    with pytest.raises(TypeError, match=r"matmul: b must be a torch.Tensor, got list"):
        torch_ops_nn.matmul(x.npu(), [1.0])
    with pytest.raises(TypeError, match=r"batch_norm: weight has dtype int64"):
        torch_ops_nn.batch_norm(x.npu(), weight=torch.ones(3, dtype=torch.long).npu())
    # The process keeps working afterwards.
    close(torch_ops_nn.relu(x.npu()), torch.relu(x), 0)


@pytest.mark.skipif(torch.npu.device_count() < 2, reason="needs two npu devices")
def test_two_devices_error():
    x = torch.randn(1, 3, 8, 8).to("npu:0")
    w = torch.randn(4, 3, 3, 3).to("npu:1")
    with pytest.raises(RuntimeError, match=r"conv2d: all tensors must be on one npu device, but x is on npu:0 and w "
                                           r"is on npu:1"):
        torch_ops_nn.conv2d(x, w)


def test_out_of_memory_is_a_clear_error():
    free, total = torch.npu.mem_get_info()
    with pytest.raises(torch.OutOfMemoryError, match=r"(?i)npu.*out of memory"):
        torch_ops_nn.relu(torch.empty(int(total // 4) + 1024, device="npu"))
    close(torch_ops_nn.relu(torch.ones(4).npu()), torch.ones(4), 0)
