"""torch.autocast("npu") applies CUDA's policy op for op (ATen's shared op lists): the same set of ops
carries an autocast kernel as on CUDA (but cuDNN's own), each policy gives CUDA's dtypes, and the values
agree with float32 on the CPU to 16-bit precision. Before, only 28 ops were listed: attention, conv1d/3d,
transposed convs, RNN cells and einsum ran in float32 under autocast, and sum / cumsum / upsampling /
most losses in 16 bits."""
import copy

import pytest
import torch
import torch.nn.functional as F

CUDNN_ONLY = {"aten::_cudnn_rnn", "aten::cudnn_convolution", "aten::cudnn_convolution_transpose",
              "aten::linalg_matrix_sqrth"}


def test_the_autocast_op_set_is_cudas():
    # (ATen's ops; torchvision, once imported, adds AutocastCUDA kernels of its own ops)
    cuda = {op for op in torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCUDA") if op.startswith("aten::")}
    npu = {op for op in torch._C._dispatch_get_registrations_for_dispatch_key("AutocastPrivateUse1") if op.startswith("aten::")}
    assert npu == cuda - CUDNN_ONLY, (sorted(cuda - CUDNN_ONLY - npu), sorted(npu - cuda))


def _t(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


CASES = {
    # lower precision: the cube ops
    "conv1d": (lambda x: F.conv1d(x[0], x[1]), [(2, 3, 9), (4, 3, 3)], "low"),
    "conv3d": (lambda x: F.conv3d(x[0], x[1]), [(1, 2, 4, 4, 4), (3, 2, 2, 2, 2)], "low"),
    "conv_transpose2d": (lambda x: F.conv_transpose2d(x[0], x[1]), [(1, 3, 4, 4), (3, 2, 3, 3)], "low"),
    "sdpa": (lambda x: F.scaled_dot_product_attention(x[0], x[1], x[2]), [(1, 2, 5, 8)] * 3, "low"),
    "einsum": (lambda x: torch.einsum("ij,jk->ik", x[0], x[1]), [(3, 4), (4, 5)], "low"),
    "mv": (lambda x: torch.mv(x[0], x[1]), [(3, 4), (4,)], "low"),
    "lstm_cell": (lambda x: torch.lstm_cell(x[0], (x[1], x[1]), x[2], x[3])[0], [(2, 3), (2, 4), (16, 3), (16, 4)],
                  "low"),
    # float32: exponentials, reductions, losses, upsampling
    "sum": (lambda x: (x[0] @ x[1]).sum(), [(4, 4), (4, 4)], "fp32"),
    "cumsum": (lambda x: (x[0] @ x[1]).cumsum(0), [(4, 4), (4, 4)], "fp32"),
    "softmax": (lambda x: (x[0] @ x[1]).softmax(-1), [(4, 4), (4, 4)], "fp32"),
    "pow": (lambda x: (x[0] @ x[1]).pow(2), [(4, 4), (4, 4)], "fp32"),
    "norm": (lambda x: (x[0] @ x[1]).norm(), [(4, 4), (4, 4)], "fp32"),
    "l1_loss": (lambda x: F.l1_loss(x[0] @ x[1], x[1]), [(4, 4), (4, 4)], "fp32"),
    "upsample": (lambda x: F.interpolate(F.conv2d(x[0], x[1]), scale_factor=2, mode="bilinear"),
                 [(1, 2, 5, 5), (2, 2, 3, 3)], "fp32"),
    "rms_norm": (lambda x: F.rms_norm(x[0] @ x[1], (4,)), [(4, 4), (4, 4)], "fp32"),
    # promote: the widest input dtype
    "addcmul": (lambda x: torch.addcmul(x[0], x[0] @ x[1], x[1]), [(4, 4), (4, 4)], "fp32"),
    # untouched ops keep their input's dtype
    "relu": (lambda x: F.relu(x[0] @ x[1]), [(4, 4), (4, 4)], "low"),
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("name", list(CASES))
def test_policy_dtypes_and_values(name, dtype):
    fn, shapes, kind = CASES[name]
    xs = [_t(*s, seed=i) for i, s in enumerate(shapes)]
    with torch.autocast("npu", dtype=dtype):
        got = fn([x.to("npu") for x in xs])
    assert got.dtype == (dtype if kind == "low" else torch.float32), (name, got.dtype)
    want = fn(xs)
    scale = want.abs().max().item() + 1e-3
    tol = 0.06 if dtype == torch.bfloat16 else 0.01
    assert (got.float().cpu() - want).abs().max().item() <= tol * max(1.0, scale)


def test_binary_cross_entropy_refuses_under_autocast_and_bce_with_logits_runs():
    x = torch.randn(4, device="npu")
    t = torch.rand(4, device="npu")
    with torch.autocast("npu", dtype=torch.bfloat16):
        with pytest.raises(RuntimeError, match="unsafe to autocast on npu.*binary_cross_entropy_with_logits"):
            F.binary_cross_entropy(torch.sigmoid(x), t)
        y = F.binary_cross_entropy_with_logits(x, t)
    assert y.dtype == torch.float32
    torch.testing.assert_close(y.cpu(), F.binary_cross_entropy_with_logits(x.cpu(), t.cpu()))
    assert F.binary_cross_entropy(torch.sigmoid(x), t).dtype == torch.float32  # outside autocast: fine


def test_autocast_training_step_with_grad_scaler_tracks_float32():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv1d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 6, 4))
    ref = copy.deepcopy(model)
    model = model.to("npu")
    x = torch.randn(5, 3, 8)
    target = torch.randint(0, 4, (5,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("npu", init_scale=256.0)
    for _ in range(3):
        opt.zero_grad()
        with torch.autocast("npu", dtype=torch.bfloat16):
            out = model(x.to("npu"))
            loss = F.cross_entropy(out, target.to("npu"))
        assert out.dtype == torch.bfloat16 and loss.dtype == torch.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        ropt.zero_grad()
        rloss = F.cross_entropy(ref(x), target)
        rloss.backward()
        ropt.step()
        assert abs(loss.item() - rloss.item()) < 0.05 * max(1.0, abs(rloss.item()))
    for p, q in zip(model.parameters(), ref.parameters()):
        assert p.dtype == torch.float32
        torch.testing.assert_close(p.detach().cpu(), q.detach(), atol=0.03, rtol=0.05)
