"""torchvision's detection ops on npu against torchvision's CPU kernels.

nms runs natively (nms_kernel: IoU masks on the vector cores, the greedy pass on one core) and must
give exactly the CPU's indices: same stable score order, same float IoU, same comparison with the
double threshold.
"""
import pytest
import torch

torchvision = pytest.importorskip("torchvision")
from torchvision.ops import batched_nms, nms  # noqa: E402


def rand_boxes(n, seed, scale=100.0):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * scale
    wh = torch.rand(n, 2, generator=g) * scale / 4
    return torch.cat([xy, xy + wh], 1), torch.rand(n, generator=g)


@pytest.mark.parametrize("n", [1, 5, 64, 65, 300, 2049, 5000])  # 2049: a second chunk of 2048 boxes
@pytest.mark.parametrize("thr", [0.0, 0.3, 0.7, 1.0, -0.1])
def test_nms_matches_cpu(fallback_error, n, thr):
    boxes, scores = rand_boxes(n, seed=n)
    if n > 10:
        scores[3] = scores[7]  # a tie: the stable sort keeps index order
    ref = nms(boxes, scores, thr)
    out = nms(boxes.to("npu"), scores.to("npu"), thr)
    assert out.device.type == "npu" and out.dtype == torch.int64
    torch.testing.assert_close(out.cpu(), ref, rtol=0, atol=0)


def test_nms_edge_boxes_and_thresholds(fallback_error):
    boxes, scores = rand_boxes(100, seed=1)
    boxes[5] = boxes[6]                 # duplicates: IoU exactly 1
    boxes[10, 2:] = boxes[10, :2]       # zero area: IoU 0 / 0 = NaN never suppresses
    boxes[20] = boxes[21] * 1.0000001   # near duplicates
    for thr in (0.5, 1.0 / 3.0, 0.1):   # 1/3 is no float: compared as the double the CPU compares
        torch.testing.assert_close(nms(boxes.to("npu"), scores.to("npu"), thr).cpu(), nms(boxes, scores, thr),
                                   rtol=0, atol=0)
    empty = nms(torch.zeros(0, 4, device="npu"), torch.zeros(0, device="npu"), 0.5)
    assert empty.shape == (0,) and empty.dtype == torch.int64 and empty.device.type == "npu"


def test_batched_nms_and_16_bit_boxes(fallback_error):
    boxes, scores = rand_boxes(3000, seed=2)
    idxs = torch.randint(0, 20, (3000,), generator=torch.Generator().manual_seed(3))
    ref = batched_nms(boxes, scores, idxs, 0.5)
    out = batched_nms(boxes.to("npu"), scores.to("npu"), idxs.to("npu"), 0.5)
    torch.testing.assert_close(out.cpu(), ref, rtol=0, atol=0)
    # float16 (the CPU kernel refuses it): computed in float from the half values
    b16, s16 = boxes.half(), scores.half()
    ref16 = nms(b16.float(), s16.float(), 0.5)
    torch.testing.assert_close(nms(b16.to("npu"), s16.to("npu"), 0.5).cpu(), ref16, rtol=0, atol=0)


def test_nms_bad_input_says_why(fallback_error):
    b, s = rand_boxes(10, seed=4)
    bn, sn = b.to("npu"), s.to("npu")
    with pytest.raises(RuntimeError, match=r"torchvision::nms: boxes should have 4 elements in dimension 1, got 5"):
        nms(torch.zeros(10, 5, device="npu"), sn, 0.5)
    with pytest.raises(RuntimeError, match=r"boxes and scores should have same number of elements in dimension 0, "
                                           r"got 10 and 9"):
        nms(bn, sn[:9], 0.5)
    with pytest.raises(RuntimeError, match=r"torchvision::nms: argument 'scores' is on cpu"):
        nms(bn, s, 0.5)
    torch.testing.assert_close(nms(bn, sn, 0.5).cpu(), nms(b, s, 0.5), rtol=0, atol=0)  # still working


def test_nms_float64_takes_the_fallback(monkeypatch):
    b, s = rand_boxes(50, seed=5)
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "error")
    with pytest.raises(RuntimeError, match="torchvision::nms"):
        nms(b.double().to("npu"), s.double().to("npu"), 0.5)
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "silent")
    torch.testing.assert_close(nms(b.double().to("npu"), s.double().to("npu"), 0.5).cpu(), nms(b, s, 0.5),
                               rtol=0, atol=0)


def rand_rois(n, batch, h, w, scale, seed):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * torch.tensor([w / scale, h / scale])
    wh = torch.rand(n, 2, generator=g) * 80 + 1
    b = torch.randint(0, batch, (n, 1), generator=g).float()
    return torch.cat([b, xy - 10, xy + wh], 1)  # some start left of / above the map


@pytest.mark.parametrize("B,C,H,W,n,out,scale,sampling,aligned", [
    (2, 16, 20, 24, 30, (7, 7), 0.25, 2, False),
    (2, 16, 20, 24, 30, (7, 7), 0.25, 0, True),      # adaptive sampling grid
    (1, 256, 50, 68, 200, (7, 7), 0.25, 2, False),   # an FPN level's channels
    (1, 3, 10, 10, 5, (2, 3), 1.0, -1, False),
    (3, 13, 33, 17, 40, (5, 4), 0.5, 3, True),       # channels not a multiple of 8
    (1, 8, 200, 272, 50, (14, 14), 0.25, 0, False),  # wide map: many samples per bin
    (1, 1000, 7, 9, 10, (3, 3), 1 / 16, 2, False),   # channels split into passes
])
def test_roi_align_matches_cpu(fallback_error, B, C, H, W, n, out, scale, sampling, aligned):
    x = torch.randn(B, C, H, W, generator=torch.Generator().manual_seed(n))
    rois = rand_rois(n, B, H, W, scale, seed=C)
    ref = torchvision.ops.roi_align(x, rois, out, scale, sampling, aligned)
    got = torchvision.ops.roi_align(x.to("npu"), rois.to("npu"), out, scale, sampling, aligned)
    assert got.device.type == "npu" and got.shape == ref.shape and got.is_contiguous()
    torch.testing.assert_close(got.cpu(), ref, rtol=1e-5, atol=1e-5)


def test_roi_align_layouts_dtypes_and_multiscale(fallback_error):
    x = torch.randn(2, 32, 40, 48)
    rois = rand_rois(25, 2, 40, 48, 0.5, seed=7)
    ref = torchvision.ops.roi_align(x, rois, (7, 7), 0.5, 2, True)
    xc = x.to("npu").contiguous(memory_format=torch.channels_last)  # used as it is, no copy
    torch.testing.assert_close(torchvision.ops.roi_align(xc, rois.to("npu"), (7, 7), 0.5, 2, True).cpu(), ref,
                               rtol=1e-5, atol=1e-5)
    half = torchvision.ops.roi_align(x.half().to("npu"), rois.half().to("npu"), (7, 7), 0.5, 2, True)
    ref_half = torchvision.ops.roi_align(x.half().float(), rois.half().float(), (7, 7), 0.5, 2, True)
    assert half.dtype == torch.float16
    torch.testing.assert_close(half.cpu().float(), ref_half, rtol=2e-3, atol=2e-3)
    empty = torchvision.ops.roi_align(x.to("npu"), torch.zeros(0, 5, device="npu"), (7, 7), 0.5)
    assert empty.shape == (0, 32, 7, 7)
    # FPN pooling as the detection heads use it (rois per image as box lists)
    pool = torchvision.ops.MultiScaleRoIAlign(["p2", "p3"], 7, 2)
    feats = {"p2": torch.randn(1, 16, 64, 64), "p3": torch.randn(1, 16, 32, 32)}
    boxes = [rand_rois(40, 1, 64, 64, 0.25, seed=9)[:, 1:].clamp(0, 250)]
    boxes[0][:, 2:] = boxes[0][:, 2:].maximum(boxes[0][:, :2] + 1)
    ref = pool(feats, boxes, [(256, 256)])
    got = pool({k: v.to("npu") for k, v in feats.items()}, [b.to("npu") for b in boxes], [(256, 256)])
    torch.testing.assert_close(got.cpu(), ref, rtol=1e-5, atol=1e-5)


def test_roi_align_bad_input_says_why(fallback_error):
    x = torch.randn(2, 4, 10, 10, device="npu")
    rois = torch.tensor([[0.0, 1, 1, 5, 5], [2.0, 1, 1, 5, 5]], device="npu")
    with pytest.raises(RuntimeError, match=r"torchvision::roi_align: a RoI's batch index \(rois\[:, 0\]\) is outside "
                                           r"\[0, 2\)"):
        torchvision.ops.roi_align(x, rois, (2, 2), 1.0)
    with pytest.raises(RuntimeError, match=r"rois should be a \[K, 5\] tensor"):
        torch.ops.torchvision.roi_align(x, rois[:, :4], 1.0, 2, 2, -1, False)
    with pytest.raises(RuntimeError, match=r"input and rois should have the same dtype, got Float and Half"):
        torch.ops.torchvision.roi_align(x, rois.half(), 1.0, 2, 2, -1, False)
    with pytest.raises(RuntimeError, match=r"torchvision::roi_align: a RoI has a coordinate that is inf or NaN"):
        torchvision.ops.roi_align(x, torch.tensor([[0.0, 1, float("nan"), 5, 5]], device="npu"), (2, 2), 1.0)
    huge = torch.tensor([[0.0, 0, 0, 1e9, 1e9]], device="npu")  # the adaptive grid would be 1.4e8^2 samples
    with pytest.raises(RuntimeError, match=r"adaptive sampling grid \(sampling_ratio <= 0\) exceeds 2\^24 samples"):
        torchvision.ops.roi_align(x, huge, (7, 7), 1.0, sampling_ratio=0)
    fixed = torchvision.ops.roi_align(x, huge, (7, 7), 1.0, sampling_ratio=2)  # a fixed grid is bounded
    torch.testing.assert_close(fixed.cpu(), torchvision.ops.roi_align(x.cpu(), huge.cpu(), (7, 7), 1.0, sampling_ratio=2))
    ok = torchvision.ops.roi_align(x, rois[:1], (2, 2), 1.0)  # the process keeps working
    torch.testing.assert_close(ok.cpu(), torchvision.ops.roi_align(x.cpu(), rois[:1].cpu(), (2, 2), 1.0))


@pytest.mark.parametrize("B,C,H,W,n,out,scale,sampling,aligned", [
    (2, 16, 20, 24, 30, (7, 7), 0.25, 2, False),
    (2, 16, 20, 24, 30, (7, 7), 0.25, 0, True),
    (1, 256, 50, 68, 200, (7, 7), 0.25, 2, False),   # many overlapping RoIs on one image
    (3, 13, 33, 17, 40, (5, 4), 0.5, 3, True),
    (1, 1000, 7, 9, 10, (3, 3), 1 / 16, 2, False),
])
def test_roi_align_backward_matches_cpu(fallback_error, B, C, H, W, n, out, scale, sampling, aligned):
    """_roi_align_backward runs natively: one work item per (image, channel chunk) walks the RoIs in
    order, so overlapping RoIs add up deterministically (the same result twice, bit for bit)."""
    x = torch.randn(B, C, H, W, generator=torch.Generator().manual_seed(n))
    rois = rand_rois(n, B, H, W, scale, seed=C)
    go = torch.randn(n, C, *out, generator=torch.Generator().manual_seed(1))
    xc = x.clone().requires_grad_()
    torchvision.ops.roi_align(xc, rois, out, scale, sampling, aligned).backward(go)
    grads = []
    for _ in range(2):
        xn = x.to("npu").requires_grad_()
        torchvision.ops.roi_align(xn, rois.to("npu"), out, scale, sampling, aligned).backward(go.to("npu"))
        grads.append(xn.grad.cpu())
    torch.testing.assert_close(grads[0], xc.grad, rtol=1e-4, atol=1e-5)
    assert torch.equal(grads[0], grads[1])


@pytest.mark.parametrize("B,C,H,W,n,out,scale", [
    (2, 16, 20, 24, 30, (7, 7), 0.25),
    (1, 256, 50, 68, 200, (7, 7), 0.25),
    (3, 13, 33, 17, 40, (5, 4), 0.5),     # channels not a multiple of 64 (the Compare width)
    (1, 3, 10, 10, 5, (2, 3), 1.0),       # RoIs partly outside the map: empty bins (0, position -1)
    (1, 1000, 7, 9, 10, (3, 3), 1 / 16),  # channels in several passes
])
def test_roi_pool_and_backward_match_cpu(fallback_error, B, C, H, W, n, out, scale):
    """roi_pool is exact: the same maxima and the same first-maximum positions (ties included); the
    backward adds each bin's gradient at its position."""
    x = torch.randn(B, C, H, W, generator=torch.Generator().manual_seed(n))
    x[0, 0, 1, :] = x[0, 0, 1, 0]  # a row of ties
    rois = rand_rois(n, B, H, W, scale, seed=C)
    ref, ref_arg = torch.ops.torchvision.roi_pool(x, rois, scale, *out)
    got, got_arg = torch.ops.torchvision.roi_pool(x.to("npu"), rois.to("npu"), scale, *out)
    assert got_arg.dtype == torch.int32
    assert torch.equal(got.cpu(), ref) and torch.equal(got_arg.cpu(), ref_arg)
    go = torch.randn(n, C, *out, generator=torch.Generator().manual_seed(2))
    xc, xn = x.clone().requires_grad_(), x.to("npu").requires_grad_()
    torchvision.ops.roi_pool(xc, rois, out, scale).backward(go)
    torchvision.ops.roi_pool(xn, rois.to("npu"), out, scale).backward(go.to("npu"))
    torch.testing.assert_close(xn.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5)


def test_roi_pool_bad_input_says_why(fallback_error):
    x = torch.randn(2, 4, 10, 10, device="npu")
    rois = torch.tensor([[0.0, 1, 1, 5, 5], [-1.0, 1, 1, 5, 5]], device="npu")
    with pytest.raises(RuntimeError, match=r"torchvision::roi_pool: a RoI's batch index \(rois\[:, 0\]\) is outside"):
        torchvision.ops.roi_pool(x, rois, (2, 2), 1.0)
    with pytest.raises(RuntimeError, match=r"torchvision::roi_pool: a RoI has a coordinate that is inf or NaN"):
        torchvision.ops.roi_pool(x, torch.tensor([[0.0, 1, 1, float("inf"), 5]], device="npu"), (2, 2), 1.0)
    with pytest.raises(RuntimeError, match=r"output_size should be positive, got \(0, 2\)"):
        torch.ops.torchvision.roi_pool(x, rois[:1], 1.0, 0, 2)
