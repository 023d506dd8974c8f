"""The stream's hand-off between host threads and its executor: a lock-free ring of task slots.

Several host threads may enqueue onto one stream at once (producers serialize among themselves),
the executor may fall asleep between any two tasks and must be woken, and a synchronizing thread
may fall asleep waiting for completion and must be woken. These run the paths a single fast loop
never reaches and compare every result with the CPU."""
import threading

import torch

import torch_ops_nn  # noqa: F401
from conftest import run_python
from torch_ops_nn import _C


def test_threads_enqueue_onto_one_stream():
    n_threads, n_ops = 4, 1500
    accs = [torch.zeros(3, device="npu") for _ in range(n_threads)]
    torch.npu.synchronize()
    errors = []

    def work(i):
        try:
            for k in range(n_ops):
                accs[i].add_(1.0)
                if k % 257 == 0:
                    torch.npu.synchronize()  # waiting threads and producers interleave
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.npu.synchronize()
    assert not errors, errors
    for acc in accs:
        assert torch.equal(acc.cpu(), torch.full((3,), float(n_ops)))


def test_threads_wait_while_the_queue_is_full():
    # Each thread runs far ahead of a slow stream (a 300 ms task first), so producers wait for room
    # in the bounded queue at the same time; every op still runs exactly once, in order per thread.
    acc = [torch.zeros(1, device="npu") for _ in range(3)]
    torch.npu.synchronize()
    _C._test_enqueue_sleep(300)

    def work(i):
        for _ in range(1200):
            acc[i].mul_(1.0).add_(1.0)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [a.item() for a in acc] == [1200.0] * 3


def test_sleeping_executor_and_waiters_are_woken():
    # TORCH_OPS_NN_SPIN_US=0: the executor sleeps whenever its queue is empty and a synchronize sleeps
    # at once, so every op goes through a wake-up; an error raised while both sleep still surfaces.
    code = r"""
import time, torch, torch_ops_nn
from torch_ops_nn import _C
x = torch.arange(6.0).to("npu")
cpu = torch.arange(6.0)
for i in range(300):
    x = x * 1.5 - 0.25
    cpu = cpu * 1.5 - 0.25
    if i % 3 == 0:
        time.sleep(0.0005)   # the executor falls asleep here
    if i % 7 == 0:
        _C._test_enqueue_sleep(1)
        torch.npu.synchronize()   # and this thread sleeps until the task is done
assert torch.allclose(x.cpu(), cpu, rtol=1e-5), (x.cpu(), cpu)
_C._test_enqueue_sleep(20)
_C._test_enqueue_failure("fault while everyone sleeps")
try:
    torch.npu.synchronize()
except RuntimeError as e:
    assert "test_failing_task: fault while everyone sleeps" in str(e), e
else:
    raise AssertionError("the task's error was lost")
assert torch.equal((torch.ones(2, device="npu") * 2).cpu(), torch.full((2,), 2.0))
print("ok")
"""
    r = run_python(code, env={"TORCH_OPS_NN_SPIN_US": "0"})
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


def test_query_and_event_after_idle_executor():
    s = torch.npu.current_stream()
    _C._test_enqueue_sleep(50)
    assert not s.query()
    e = torch.npu.Event()
    e.record()
    e.synchronize()
    assert s.query() and e.query()


def test_forked_child_gets_a_clear_error_not_a_hang():
    # fork() copies only the calling thread: the runtime's stream and pool threads are gone in the child,
    # so device work there would wait forever. As with CUDA, the child raises instead; CPU work and
    # torch.manual_seed (which skips the npu generators there) still run.
    code = r"""
import multiprocessing as mp, torch, torch_ops_nn
assert (torch.ones(2, device="npu") + 1).cpu().tolist() == [2.0, 2.0]   # the runtime's threads run
assert not torch.npu._is_in_bad_fork()

def child(q):
    out = [torch.npu._is_in_bad_fork(), (torch.ones(2) + 1).tolist()]
    torch.manual_seed(0)
    for use in (lambda: torch.ones(2, device="npu"), lambda: torch.npu.synchronize()):
        try:
            use()
            out.append("no error")
        except RuntimeError as e:
            out.append(str(e))
    q.put(out)

ctx = mp.get_context("fork")
q = ctx.Queue()
p = ctx.Process(target=child, args=(q,))
p.start()
p.join(60)
assert not p.is_alive(), "the forked child hung"
bad, cpu, alloc, sync = q.get(timeout=5)
assert bad is True and cpu == [2.0, 2.0], (bad, cpu)
for msg in (alloc, sync):
    assert "cannot use the npu in a forked subprocess" in msg and "'spawn'" in msg, msg
# os.fork() with a normal exit (static destructors run): the child must not wait on the parent's threads
import os, sys
pid = os.fork()
if pid == 0:
    sys.exit(0)
_, status = os.waitpid(pid, 0)
assert status == 0, status
assert (torch.ones(2, device="npu") * 3).cpu().tolist() == [3.0, 3.0]   # the parent is unaffected
print("ok")
"""
    r = run_python(code, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout[-2000:] + r.stderr[-3000:]
