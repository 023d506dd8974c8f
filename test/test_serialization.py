"""torch.save of npu tensors and torch.load(map_location="npu")."""
import io

import torch

import torch_ops_nn  # noqa: F401


def test_save_load_round_trip(tmp_path):
    x = torch.randn(3, 4)
    state = {"w": x.to("npu"), "b": torch.arange(5).to("npu:1"), "cpu": x}
    path = tmp_path / "t.pt"
    torch.save(state, path)
    loaded = torch.load(path)
    assert loaded["w"].device == torch.device("npu", 0) and loaded["b"].device == torch.device("npu", 1)
    assert torch.equal(loaded["w"].cpu(), x) and torch.equal(loaded["b"].cpu(), torch.arange(5))
    on_cpu = torch.load(path, map_location="cpu")
    assert on_cpu["w"].device.type == "cpu" and torch.equal(on_cpu["w"], x)
    buf = io.BytesIO()
    torch.save(x, buf)
    buf.seek(0)
    moved = torch.load(buf, map_location="npu")
    assert moved.device.type == "npu" and torch.equal(moved.cpu(), x)


def test_module_state_dict_to_npu(tmp_path):
    m = torch.nn.Linear(4, 3)
    path = tmp_path / "m.pt"
    torch.save(m.state_dict(), path)
    sd = torch.load(path, map_location="npu")
    assert all(v.device.type == "npu" for v in sd.values())
    m2 = torch.nn.Linear(4, 3).npu()
    m2.load_state_dict(sd)
    assert torch.equal(m2.weight.cpu(), m.weight.detach())
