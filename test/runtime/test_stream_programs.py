"""Random multi-stream programs against the same program run in order on the CPU: each step runs on a
random stream after waiting (events) for the last writer of what it touches and for the readers of
what it may write; tensors are created on one stream and freed with record_stream on every stream
that used them; copies go both ways through pinned memory with non_blocking=True. With correct
stream ordering, events and stream-aware freeing, the results are the CPU's."""
import random

import pytest
import torch


def _program(seed, iters):
    rnd = random.Random(seed)
    torch.manual_seed(seed)
    for it in range(iters):
        streams = [torch.npu.current_stream()] + [torch.npu.Stream() for _ in range(rnd.randint(1, 3))]
        n = rnd.choice([16, 1000, 50000])
        vals = [torch.randn(n) for _ in range(3)]
        dev, cpu = [v.to("npu") for v in vals], [v.clone() for v in vals]
        owner, readers = [streams[0]] * len(dev), [set() for _ in dev]
        for step in range(rnd.randint(3, 12)):
            s = rnd.choice(streams)
            k = rnd.choice(["add", "mul", "copy", "new", "del", "tohost", "fromhost"])
            i, j = rnd.randrange(len(dev)), rnd.randrange(len(dev))
            wait = set()
            for idx in {i, j}:
                wait |= {owner[idx]} | readers[idx]
            for w in wait:
                if w != s:
                    e = torch.npu.Event()
                    e.record(w)
                    s.wait_event(e)
            for idx in {i, j}:
                readers[idx].add(s)
            with torch.npu.stream(s):
                if k == "add":
                    dev[i].add_(dev[j]); cpu[i].add_(cpu[j]); owner[i] = s
                elif k == "mul":
                    dev[i].mul_(0.5).add_(1); cpu[i].mul_(0.5).add_(1); owner[i] = s
                elif k == "copy":
                    dev[i].copy_(dev[j] * 2); cpu[i].copy_(cpu[j] * 2); owner[i] = s
                elif k == "new":
                    dev.append(dev[i].exp().clamp_(max=10)); cpu.append(cpu[i].exp().clamp_(max=10))
                    owner.append(s); readers.append(set())
                elif k == "del" and len(dev) > 2:
                    t, o, rs = dev.pop(i), owner.pop(i), readers.pop(i)
                    cpu.pop(i)
                    for u in rs | {o}:
                        t.record_stream(u)
                    del t
                elif k == "tohost":
                    h = torch.empty(n, pin_memory=True)
                    h.copy_(dev[i], non_blocking=True)
                    e = torch.npu.Event()
                    e.record(s)
                    e.synchronize()
                    torch.testing.assert_close(h, cpu[i], msg=f"seed {seed} iteration {it} step {step}: D2H")
                elif k == "fromhost":
                    h = torch.randn(n).pin_memory()
                    dev[i].copy_(h, non_blocking=True); cpu[i].copy_(h); owner[i] = s
        torch.npu.synchronize()
        for a, b in zip(dev, cpu):
            torch.testing.assert_close(a.cpu(), b, msg=f"seed {seed} iteration {it}")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_stream_programs_match_the_cpu(seed):
    _program(seed, 40)
