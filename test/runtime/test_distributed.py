"""torch.distributed on npu tensors through the hccl backend: two processes (each its own simulated
NPU) run every collective and a DDP training (dist_worker.py); the results are checked against what
the CPU computes. The workers run with TORCH_OPS_NN_FALLBACK=error: reductions are npu kernels."""
import json
import os
import subprocess
import sys
import warnings

import pytest
import torch
import torch.distributed as dist
import torch.nn as nn

import torch_ops_nn  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dist_worker  # noqa: E402

WORLD = 2


def run_ranks(tmp_path, backend="hccl"):
    init = "file://" + str(tmp_path / "store")
    env = dict(os.environ, TORCH_OPS_NN_FALLBACK="error", TORCH_OPS_NN_DEVICE_COUNT="1")
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "dist_worker.py"), str(r), str(WORLD), init,
                               str(tmp_path), backend], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for r in range(WORLD)]
    logs = []
    for p in procs:
        try:
            logs.append(p.communicate(timeout=300)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("a rank hung")
    for r, (p, log) in enumerate(zip(procs, logs)):
        assert p.returncode == 0, f"rank {r} failed:\n{log[-4000:]}"
    return [json.load(open(tmp_path / f"rank{r}.json")) for r in range(WORLD)]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    return run_ranks(tmp_path_factory.mktemp("hccl"))


def test_backend_is_registered_for_npu():
    assert "hccl" in dist.Backend.backend_list
    assert dist.Backend.default_device_backend_map.get("npu") == "hccl"
    assert dist.is_hccl_available()


def test_all_reduce_ops(ranks):
    base = torch.arange(6, dtype=torch.float32).view(2, 3) + 1
    per = [base * (r + 1) for r in range(WORLD)]
    stacked = torch.stack(per)
    want = {"SUM": stacked.sum(0), "MAX": stacked.amax(0), "MIN": stacked.amin(0), "PRODUCT": stacked.prod(0),
            "AVG": stacked.mean(0)}
    for res in ranks:
        assert res["backend"] == "hccl" and res["fallback_ops"] == []
        for name, w in want.items():
            assert torch.equal(torch.tensor(res[f"all_reduce_{name}"]), w), name
        assert res["all_reduce_int64_async"] == [3, 30]
        big = torch.stack([torch.arange(10001, dtype=torch.float32) * (q + 1) - 5000 for q in range(WORLD)])
        assert torch.equal(torch.tensor(res["all_reduce_large_SUM"]), big.sum(0))
        assert torch.equal(torch.tensor(res["all_reduce_large_MIN"]), big.amin(0))
        assert res["all_reduce_strided"] == [[3.0, 3.0]] * 3


def test_data_movement_collectives(ranks):
    for r, res in enumerate(ranks):
        assert res["broadcast"] == [1.0, 1.0, 1.0]
        assert res["all_gather"] == [[0.0, 0.5], [1.0, 1.5]]
        assert res["all_gather_into_tensor"] == [0.0, 0.5, 1.0, 1.5]
        full = sum(torch.arange(WORLD * 2, dtype=torch.float32) * (q + 1) for q in range(WORLD))
        assert res["reduce_scatter_tensor"] == full[2 * r:2 * r + 2].tolist()
        assert res["reduce_scatter"] == [float(sum(10 * r + q for q in range(WORLD)))] * 2
        assert res["all_to_all_single"] == [float(r + 10 * q) for q in range(WORLD)]
        assert res["all_gather_object"] == [{"rank": q} for q in range(WORLD)]
        assert res["cpu_all_reduce"] == [3.0]
        assert res["scatter"] == [5.0 + r] * 2
        assert res["all_to_all"] == [100.0 * q + r for q in range(WORLD)]
    assert ranks[0]["gather"] == [[float(q), float(-q)] for q in range(WORLD)]
    assert ranks[0]["reduce_root"] == [2.0, 2.0]
    assert ranks[1]["recv"] == [7.0, 8.0]


def test_bad_input_is_a_clear_error(ranks):
    for res in ranks:
        assert "ReduceOp.BAND is not supported" in res["band_error"] and "SUM" in res["band_error"]
        assert "all_gather_into_tensor output has 3 elements" in res["size_error"], res["size_error"]


def test_ddp_and_fsdp_match_full_batch_training(ranks):
    net = dist_worker.model()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x, y = dist_worker.data()
    for _ in range(3):
        loss = nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    want = [p.detach().flatten() for p in net.parameters()]
    for res in ranks:
        for key in ("ddp_params", "fsdp_params"):  # DDP, and FSDP2 (fully_shard + full_tensor)
            for got, w in zip(res[key], want):
                torch.testing.assert_close(torch.tensor(got), w, rtol=1e-5, atol=1e-6)
        assert res["functional_all_reduce"] == [3.0, 3.0]


def test_default_backend_for_npu_is_hccl(tmp_path):
    # init_process_group() without a backend name: npu maps to hccl as cuda maps to nccl.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_ranks(tmp_path, backend="")
    assert all(r["backend"] == "hccl" and r["all_reduce_SUM"][0] == [3.0, 6.0, 9.0] for r in res)


def test_torchrun_with_a_bound_device(tmp_path):
    # torchrun's env:// rendezvous and init_process_group(device_id=npu:0), which asks the group's npu
    # backend whether it can split.
    env = dict(os.environ, TORCH_OPS_NN_FALLBACK="error", TORCH_OPS_NN_DEVICE_COUNT="1")
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={WORLD}",
                        os.path.join(HERE, "dist_worker.py"), "torchrun", str(tmp_path)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = [json.load(open(tmp_path / f"rank{q}.json")) for q in range(WORLD)]
    assert all(x["backend"] == "hccl" and x["all_reduce_SUM"][0] == [3.0, 6.0, 9.0] for x in res)
