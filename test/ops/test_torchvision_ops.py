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
