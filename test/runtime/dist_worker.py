"""One rank of test_distributed.py: runs the collectives and a DDP training on npu tensors with the
hccl backend, and writes what it got to <out>/rank<r>.json (the test compares with the CPU)."""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

import torch_ops_nn  # noqa: F401


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 8, generator=g), torch.randn(16, 2, generator=g)


def train_on_my_half(net: nn.Module, rank: int, world: int) -> None:
    """Three SGD steps on this rank's share of the batch (the test compares with the whole batch)."""
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x_all, y_all = data()
    per = x_all.shape[0] // world
    for _ in range(3):
        x, y = x_all[rank * per:(rank + 1) * per].npu(), y_all[rank * per:(rank + 1) * per].npu()
        loss = nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def main(rank: int, world: int, init: str, out: str, backend: str) -> None:
    if init == "env://":  # under torchrun, with the device bound at init (eager connect)
        torch.npu.set_device(0)
        dist.init_process_group(backend, device_id=torch.device("npu", 0))
    else:
        dist.init_process_group(backend or None, init_method=init, rank=rank, world_size=world)
    pg = dist.distributed_c10d._get_default_group()
    res = {"backend": pg._get_backend_name() if hasattr(pg, "_get_backend_name") else "",
           "is_hccl_available": dist.is_hccl_available()}
    base = torch.arange(6, dtype=torch.float32).view(2, 3) + 1
    for name in ("SUM", "MAX", "MIN", "PRODUCT", "AVG"):
        t = (base * (rank + 1)).npu()
        dist.all_reduce(t, op=getattr(dist.ReduceOp, name))
        res[f"all_reduce_{name}"] = t.cpu().tolist()
    for name in ("SUM", "MIN"):  # large: the reduce-scatter + all-gather path, 10001 not a multiple of world
        t = (torch.arange(10001, dtype=torch.float32) * (rank + 1) - 5000).view(73, 137).npu()
        dist.all_reduce(t, op=getattr(dist.ReduceOp, name))
        res[f"all_reduce_large_{name}"] = t.cpu().flatten().tolist()
    ti = torch.tensor([rank + 1, 10 * (rank + 1)], dtype=torch.int64, device="npu")
    work = dist.all_reduce(ti, async_op=True)
    work.wait()
    res["all_reduce_int64_async"] = ti.cpu().tolist()
    strided = torch.zeros(3, 4, device="npu")[:, ::2]  # a non-contiguous tensor
    strided.fill_(rank + 1)
    dist.all_reduce(strided)
    res["all_reduce_strided"] = strided.cpu().tolist()
    b = torch.full((3,), float(rank), device="npu")
    dist.broadcast(b, src=1)
    res["broadcast"] = b.cpu().tolist()
    outs = [torch.empty(2, device="npu") for _ in range(world)]
    dist.all_gather(outs, torch.tensor([rank, rank + 0.5], device="npu"))
    res["all_gather"] = [o.cpu().tolist() for o in outs]
    big = torch.empty(world * 2, device="npu")
    dist.all_gather_into_tensor(big, torch.tensor([rank, rank + 0.5], device="npu"))
    res["all_gather_into_tensor"] = big.cpu().tolist()
    rs = torch.empty(2, device="npu")
    dist.reduce_scatter_tensor(rs, torch.arange(world * 2, dtype=torch.float32, device="npu") * (rank + 1))
    res["reduce_scatter_tensor"] = rs.cpu().tolist()
    rl = torch.empty(2, device="npu")
    dist.reduce_scatter(rl, [torch.full((2,), float(10 * j + rank), device="npu") for j in range(world)])
    res["reduce_scatter"] = rl.cpu().tolist()
    r = torch.full((2,), float(rank + 1), device="npu")
    dist.reduce(r, dst=0, op=dist.ReduceOp.MAX)
    res["reduce_root"] = r.cpu().tolist() if rank == 0 else None
    if rank == 0:
        dist.send(torch.tensor([7.0, 8.0], device="npu"), dst=1)
    else:
        got = torch.zeros(2, device="npu")
        dist.recv(got, src=0)
        res["recv"] = got.cpu().tolist()
    a2a = torch.empty(world, device="npu")
    dist.all_to_all_single(a2a, torch.arange(world, dtype=torch.float32, device="npu") + 10 * rank)
    res["all_to_all_single"] = a2a.cpu().tolist()
    try:
        dist.all_reduce(torch.ones(2, dtype=torch.int32, device="npu"), op=dist.ReduceOp.BAND)
        res["band_error"] = None
    except ValueError as e:
        res["band_error"] = str(e)
    gathered = [torch.empty(2, device="npu") for _ in range(world)] if rank == 0 else None
    dist.gather(torch.tensor([rank, -rank], dtype=torch.float32, device="npu"), gathered, dst=0)
    res["gather"] = [g.cpu().tolist() for g in gathered] if rank == 0 else None
    sc = torch.empty(2, device="npu")
    dist.scatter(sc, [torch.full((2,), 5.0 + q, device="npu") for q in range(world)] if rank == 1 else None, src=1)
    res["scatter"] = sc.cpu().tolist()
    a2l = [torch.empty(1, device="npu") for _ in range(world)]
    dist.all_to_all(a2l, [torch.tensor([100.0 * rank + q], device="npu") for q in range(world)])
    res["all_to_all"] = [t.item() for t in a2l]
    try:
        dist.all_gather_into_tensor(torch.empty(3, device="npu"), torch.ones(2, device="npu"))
        res["size_error"] = None
    except ValueError as e:
        res["size_error"] = str(e)
    cpu = torch.tensor([float(rank + 1)])
    dist.all_reduce(cpu)  # a CPU tensor in the same group goes to the inner Gloo group
    res["cpu_all_reduce"] = cpu.tolist()
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank})
    res["all_gather_object"] = objs
    dist.barrier()
    # DDP: each rank trains on its half of the batch; the result must be full-batch training's.
    net = model().npu()
    train_on_my_half(nn.parallel.DistributedDataParallel(net), rank, world)
    res["ddp_params"] = [p.detach().cpu().flatten().tolist() for p in net.parameters()]
    # FSDP2 (fully_shard on a device mesh): eager collectives for the training, functional ones for
    # full_tensor and a traced-style all_reduce.
    from torch.distributed._functional_collectives import all_reduce as f_all_reduce
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("npu", (world,))
    net = model().npu()
    for layer in net:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(net, mesh=mesh)
    train_on_my_half(net, rank, world)
    res["fsdp_params"] = [p.full_tensor().cpu().flatten().tolist() for p in net.parameters()]
    res["functional_all_reduce"] = f_all_reduce(torch.full((2,), float(rank + 1), device="npu"), "sum",
                                                mesh).cpu().tolist()
    res["fallback_ops"] = torch_ops_nn.fallback_ops()
    dist.destroy_process_group()
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    if sys.argv[1] == "torchrun":  # dist_worker.py torchrun <out>
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), "env://", sys.argv[2], "hccl")
    else:
        main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "hccl")
