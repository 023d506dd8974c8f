"""NPU graphs (torch.npu.NPUGraph / graph / graph_pool_handle / make_graphed_callables), against
the CPU: a capture records work without running it, a replay repeats it on new data copied into the
captured inputs, the graph's memory stays its own, and what cannot be captured raises clearly."""
import copy

import pytest
import torch

import torch_ops_nn  # noqa: F401


def test_capture_records_without_running_and_replay_repeats():
    x = torch.zeros(5, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        x.add_(1.0)
        x.mul_(2.0)
    torch.npu.synchronize()
    assert torch.equal(x.cpu(), torch.zeros(5))  # captured, not run
    assert g.num_nodes() == 2
    for _ in range(3):
        g.replay()
    assert torch.equal(x.cpu(), torch.full((5,), 14.0))  # ((0+1)*2+1)*2+1)*2


def test_replay_reads_new_inputs_and_matches_cpu():
    torch.manual_seed(0)
    w, b = torch.randn(16, 32), torch.randn(32)
    static_x = torch.randn(8, 16).npu()
    wn, bn = w.npu(), b.npu()
    torch.relu(static_x @ wn + bn)  # eager warm-up
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        static_y = torch.softmax(torch.relu(static_x @ wn + bn), dim=1).sum(0)
    for _ in range(3):
        x = torch.randn(8, 16)
        static_x.copy_(x)
        g.replay()
        torch.testing.assert_close(static_y.cpu(), torch.softmax(torch.relu(x @ w + b), dim=1).sum(0),
                                   rtol=1e-5, atol=1e-5)


def _warm_and_capture(fn, static_x, warmup=3):
    """fn run eagerly `warmup` times (filling the weight caches), then captured: (graph, static output)."""
    for _ in range(warmup):
        fn(static_x)
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        static_y = fn(static_x)
    return g, static_y


def _conv_net():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 32, 3, stride=2, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10)).eval()


def test_replay_sees_weights_updated_in_place():
    # Eager calls fill the conv / Linear weight caches; a capture must not bake their copies in.
    torch.manual_seed(1)
    cpu = _conv_net()
    with torch.no_grad():
        cpu[1].running_mean.uniform_(-0.5, 0.5)
        cpu[1].running_var.uniform_(0.5, 2.0)
    net = copy.deepcopy(cpu).npu()
    static_x = torch.randn(2, 3, 12, 12).npu()
    with torch.no_grad():
        g, static_y = _warm_and_capture(net, static_x)
        for step in range(2):
            x = torch.randn(2, 3, 12, 12)
            static_x.copy_(x)
            g.replay()
            torch.testing.assert_close(static_y.cpu(), cpu(x), rtol=1e-4, atol=1e-4)
            for m_cpu, m_npu in zip(cpu.modules(), net.modules()):  # an in-place update of every parameter
                for p_cpu, p_npu in zip(m_cpu.parameters(recurse=False), m_npu.parameters(recurse=False)):
                    p_cpu.mul_(0.5).add_(0.1)
                    p_npu.mul_(0.5).add_(0.1)
            cpu[1].running_var.add_(0.25)
            net[1].running_var.add_(0.25)
            g.replay()
            torch.testing.assert_close(static_y.cpu(), cpu(x), rtol=1e-4, atol=1e-4)


def test_replays_and_in_place_updates_apply_in_stream_order():
    # The copies of weights (conv in the cube's order, packed Linear, folded BN of the fused op) are
    # redone at a replay only when a weight changed since: no sync between the steps below.
    torch.manual_seed(3)
    w, lin = torch.randn(16, 4, 3, 3), torch.randn(24, 16)
    bn = [torch.rand(16) + 0.5, torch.randn(16), torch.randn(16) * 0.1, torch.rand(16) + 0.5]
    wn, linn, bnn = w.npu(), lin.npu(), [t.npu() for t in bn]

    def f_cpu(x):
        y = torch.nn.functional.conv2d(x, w, padding=1)
        y = torch.relu((y - bn[2][:, None, None]) / torch.sqrt(bn[3][:, None, None] + 1e-5) * bn[0][:, None, None]
                       + bn[1][:, None, None])
        return y.mean((2, 3)) @ lin.t()

    def f_npu(x):
        y = torch_ops_nn.fused_conv_bn_relu(x, wn, bn_weight=bnn[0], bn_bias=bnn[1], running_mean=bnn[2],
                                            running_var=bnn[3], padding=(1, 1))
        return torch.nn.functional.linear(y.mean((2, 3)), linn)

    x = torch.randn(2, 4, 10, 10)
    sx = x.npu()
    with torch.no_grad():
        g, sy = _warm_and_capture(f_npu, sx, warmup=2)
        outs, refs = [], []
        for step in range(4):
            g.replay()
            outs.append(sy.clone())
            refs.append(f_cpu(x))
            if step == 1:  # one step leaves every weight alone
                continue
            for t_cpu, t_npu in [(w, wn), (lin, linn)] + list(zip(bn, bnn)):
                t_cpu.mul_(0.75).add_(0.05)
                t_npu.mul_(0.75).add_(0.05)
    for o, r in zip(outs, refs):
        torch.testing.assert_close(o.cpu(), r, rtol=1e-4, atol=1e-4)


def test_a_batch_one_linear_replays_through_the_vector_gemv_and_follows_its_weights():
    # One row against a 2 MB weight: the vector GEMV with the weight's cached row-major copy (a guarded
    # region in the graph) and split K (the workspace comes from the graph's pool).
    torch.manual_seed(5)
    lin = torch.nn.Linear(1024, 500).eval()
    net = copy.deepcopy(lin).npu()
    sx = torch.randn(1, 1024).npu()
    torch.npu.reset_kernel_counters()
    with torch.no_grad():
        g, sy = _warm_and_capture(net, sx)
        for step in range(3):
            x = torch.randn(1, 1024)
            sx.copy_(x)
            g.replay()
            torch.testing.assert_close(sy.cpu(), lin(x), rtol=1e-4, atol=1e-4)
            lin.weight.mul_(0.5).add_(0.01)
            net.weight.mul_(0.5).add_(0.01)
    torch.npu.synchronize()
    assert torch.npu.kernel_counters()["gemv_kernel"]["launches"] >= 2 * 3


def test_a_weight_the_graph_updates_after_using_it_is_copied_again_at_every_replay():
    # An EMA teacher in one captured step: use the weights, then update them in place (no grad).
    torch.manual_seed(7)
    w_t, w_s = torch.randn(32, 3, 3, 3), torch.randn(32, 3, 3, 3)
    lin_t, lin_s = torch.randn(20, 32), torch.randn(20, 32)
    wt, ws, lt, ls = w_t.npu(), w_s.npu(), lin_t.npu(), lin_s.npu()
    x = torch.randn(2, 3, 9, 9)

    def step(t, w, ws_, lin, ls_):
        y = torch.nn.functional.linear(torch.nn.functional.conv2d(t, w, padding=1).mean((2, 3)), lin)
        w.mul_(0.5).add_(ws_, alpha=0.5)
        lin.mul_(0.5).add_(ls_, alpha=0.5)
        return y

    with torch.no_grad():
        g, sy = _warm_and_capture(lambda t: step(t, wt, ws, lt, ls), x.npu(), warmup=2)
        for _ in range(2):  # the warm-up updated the npu weights twice
            step(x, w_t, w_s, lin_t, lin_s)
        for _ in range(4):
            g.replay()
            torch.testing.assert_close(sy.cpu(), step(x, w_t, w_s, lin_t, lin_s), rtol=1e-4, atol=1e-4)


def test_graph_memory_is_private_until_reset():
    x = torch.randn(1000, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        t = x * 2.0  # freed during capture: a replay still writes it
        y = t + 1.0
        del t
    others = [torch.full((1000,), float(i), device="npu") for i in range(8)]
    for _ in range(2):
        g.replay()
    torch.testing.assert_close(y.cpu(), x.cpu() * 2 + 1)
    for i, o in enumerate(others):
        assert torch.equal(o.cpu(), torch.full((1000,), float(i))), "a replay wrote memory allocated after capture"
    torch.npu.empty_cache()  # keeps the graph's pool
    g.replay()
    torch.testing.assert_close(y.cpu(), x.cpu() * 2 + 1)
    reserved = torch.npu.memory_reserved()
    del y
    g.reset()
    torch.npu.empty_cache()
    assert torch.npu.memory_reserved() < reserved  # the pool joined the general cache and was released


def test_shared_pool_graphs_replay_in_capture_order():
    a = torch.randn(64, 64, device="npu")
    pool = torch.npu.graph_pool_handle()
    g1, g2 = torch.npu.NPUGraph(), torch.npu.NPUGraph()
    with torch.npu.graph(g1, pool=pool):
        b = (a @ a).relu()
    with torch.npu.graph(g2, pool=g1.pool()):
        c = b.sum(1) * 0.5
    assert g1.pool() == pool == g2.pool()
    for _ in range(2):
        a.copy_(torch.randn(64, 64))
        g1.replay()
        g2.replay()
        ref = (a.cpu() @ a.cpu()).relu()
        torch.testing.assert_close(b.cpu(), ref, rtol=1e-4, atol=1e-3)
        torch.testing.assert_close(c.cpu(), ref.sum(1) * 0.5, rtol=1e-4, atol=1e-3)


def test_replay_inside_another_capture():
    x = torch.ones(4, device="npu")
    inner, outer = torch.npu.NPUGraph(), torch.npu.NPUGraph()
    with torch.npu.graph(inner):
        x.add_(1.0)
    with torch.npu.graph(outer):
        inner.replay()
        x.mul_(3.0)
    outer.replay()
    assert torch.equal(x.cpu(), torch.full((4,), 6.0))


def test_capturing_flag_and_streams():
    assert not torch.npu.is_current_stream_capturing()
    g = torch.npu.NPUGraph()
    before = torch.npu.current_stream()
    with torch.npu.graph(g):
        assert torch.npu.is_current_stream_capturing()
        assert torch.npu.current_stream() != before  # a side stream, as torch.cuda.graph
        torch.ones(2, device="npu")
    assert not torch.npu.is_current_stream_capturing()
    assert torch.npu.current_stream() == before


@pytest.mark.parametrize("what, action", [
    ("synchroniz", lambda x: x.sum().item()),
    ("synchroniz", lambda x: x.cpu()),
    ("synchroniz", lambda x: torch.npu.synchronize()),
    ("synchroniz", lambda x: x[x > 0]),
    ("recording an event", lambda x: torch.npu.Event().record()),
])
def test_forbidden_operations_raise_and_the_stream_recovers(what, action):
    x = torch.randn(8, device="npu")
    g = torch.npu.NPUGraph()
    with pytest.raises(RuntimeError, match=f"(?s){what}.*not allowed while an npu graph captures"):
        with torch.npu.graph(g):
            y = x * 2.0
            action(y)
    assert not torch.npu.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="holds no capture"):
        g.replay()
    # The same graph object captures again, and ordinary work runs.
    with torch.npu.graph(g):
        z = x + 1.0
    g.replay()
    torch.testing.assert_close(z.cpu(), x.cpu() + 1.0)
    torch.testing.assert_close((x * 3.0).cpu(), x.cpu() * 3.0)


def test_random_numbers_in_a_graph_are_new_at_every_replay_and_follow_the_generator():
    # Each replay draws what the same launches would draw eagerly from the generator at that point.
    x = torch.ones(64, 33, device="npu")
    gen = torch.Generator(device="npu")

    def f(t):
        a = torch.nn.functional.dropout(t, 0.5, training=True)
        b = torch.rand(100, device="npu") + torch.randn(7, device="npu").sum()
        c = torch.empty(50, device="npu").uniform_(-1, 1, generator=gen)
        return a.sum(1), b, c

    g, outs = _warm_and_capture(f, x, warmup=1)
    torch.npu.manual_seed(123)
    gen.manual_seed(7)
    replays = []
    for _ in range(3):
        g.replay()
        replays.append([o.clone() for o in outs])
    torch.npu.manual_seed(123)
    gen.manual_seed(7)
    for r in replays:
        for got, want in zip(r, f(x)):
            assert torch.equal(got.cpu(), want.cpu())
    assert not torch.equal(replays[0][0].cpu(), replays[1][0].cpu())  # a new dropout mask each replay
    assert not torch.equal(replays[1][2].cpu(), replays[2][2].cpu())


def test_make_graphed_module_with_dropout_trains():
    torch.manual_seed(6)
    net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                              torch.nn.Linear(64, 1)).npu()
    graphed = torch.npu.make_graphed_callables(net, (torch.randn(32, 16, device="npu"),))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    x = torch.randn(32, 16)
    t = x.sum(1, keepdim=True)
    losses = []
    for _ in range(60):
        loss = torch.nn.functional.mse_loss(graphed(x.npu()), t.npu())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0], losses[::10]


def test_manual_capture_end_reports_the_invalidating_operation():
    x = torch.randn(4, device="npu")
    s = torch.npu.Stream()
    g = torch.npu.NPUGraph()
    with torch.npu.stream(s):
        g.capture_begin()
        try:
            x.sum().item()
        except RuntimeError:
            pass
        with pytest.raises(RuntimeError, match="capture was invalidated: synchroniz"):
            g.capture_end()
    assert (x + 1).cpu().shape == (4,)


def test_a_kernel_error_in_a_replay_names_the_node_and_the_stream_recovers():
    x = torch.randn(10, 4)
    xn = x.npu()
    idx = torch.tensor([1, 2, 3], device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        y = torch.index_select(xn, 0, idx) * 2.0
    idx.copy_(torch.tensor([1, 20, 3]))
    g.replay()
    with pytest.raises(RuntimeError, match=r"graph replay, node 0 \(index_select_kernel\).*index 20 is out of range"):
        torch.npu.synchronize()
    idx.copy_(torch.tensor([4, 0, 9]))
    g.replay()
    torch.testing.assert_close(y.cpu(), x[[4, 0, 9]] * 2.0)


def test_bad_usage_errors():
    g = torch.npu.NPUGraph()
    with pytest.raises(RuntimeError, match="holds no capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="not capturing"):
        g.capture_end()
    with pytest.raises(RuntimeError, match="no memory pool"):
        g.pool()
    with pytest.raises(TypeError, match="graph_pool_handle"):
        g.capture_begin(pool=7)
    with pytest.raises(ValueError, match="capture_error_mode"):
        g.capture_begin(capture_error_mode="strict")
    with pytest.raises(TypeError, match="NPUGraph"):
        torch.npu.graph(object())
    x = torch.zeros(2, device="npu")
    with torch.npu.graph(g):
        x.add_(1)
        with pytest.raises(RuntimeError, match="already capturing"):
            g.capture_begin()
    with pytest.raises(RuntimeError, match="call reset"):
        with torch.npu.graph(g):
            pass
    g.replay()
    assert torch.equal(x.cpu(), torch.ones(2))


def test_debug_dump_lists_the_captured_kernels(tmp_path):
    x = torch.randn(4, 4, device="npu")
    g = torch.npu.NPUGraph()
    g.enable_debug_mode()
    with torch.npu.graph(g):
        torch.relu(x @ x)
    path = tmp_path / "graph.txt"
    g.debug_dump(str(path))
    lines = path.read_text().splitlines()
    assert len(lines) == g.num_nodes() >= 2
    assert any("relu" in line for line in lines)


def test_make_graphed_module_trains_like_eager():
    torch.manual_seed(2)
    cpu = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    net = copy.deepcopy(cpu).npu()
    sample = torch.randn(6, 12, device="npu")
    graphed = torch.npu.make_graphed_callables(net, (sample,))
    opt_cpu = torch.optim.SGD(cpu.parameters(), lr=0.1)
    opt_npu = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(4):
        x, t = torch.randn(6, 12), torch.randn(6, 4)
        loss_cpu = torch.nn.functional.mse_loss(cpu(x), t)
        loss_npu = torch.nn.functional.mse_loss(graphed(x.npu()), t.npu())
        opt_cpu.zero_grad()
        opt_npu.zero_grad()
        loss_cpu.backward()
        loss_npu.backward()
        opt_cpu.step()
        opt_npu.step()
        torch.testing.assert_close(loss_npu.item(), loss_cpu.item(), rtol=1e-5, atol=1e-6)
    for p_cpu, p_npu in zip(cpu.parameters(), net.parameters()):
        torch.testing.assert_close(p_npu.cpu(), p_cpu, rtol=1e-5, atol=1e-6)
    net.eval()  # another training mode: the ordinary forward
    x = torch.randn(3, 12)
    torch.testing.assert_close(net(x.npu()).cpu(), cpu.eval()(x), rtol=1e-5, atol=1e-6)


def test_make_graphed_function_gradients_and_argument_checks():
    w = torch.randn(5, 5, requires_grad=True)
    w_npu = w.detach().npu().requires_grad_()

    def f(a, b):
        return (a @ w_npu).tanh() * b

    a0 = torch.randn(3, 5, device="npu", requires_grad=True)
    b0 = torch.randn(3, 5, device="npu")
    gf = torch.npu.make_graphed_callables(f, (a0, b0))
    a, b = torch.randn(3, 5, requires_grad=True), torch.randn(3, 5)
    a_npu = a.detach().npu().requires_grad_()
    out = gf(a_npu, b.npu())
    out.sum().backward()
    ((a @ w).tanh() * b).sum().backward()
    torch.testing.assert_close(a_npu.grad.cpu(), a.grad, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"argument 0 must match the captured sample: \(3, 5\)"):
        gf(torch.randn(4, 5, device="npu", requires_grad=True), b.npu())
    with pytest.raises(ValueError, match="must be npu tensors"):
        torch.npu.make_graphed_callables(f, (a, b))


@pytest.mark.parametrize("name, fn, shape", [
    ("interpolate bilinear", lambda x: torch.nn.functional.interpolate(x, scale_factor=1.7, mode="bilinear"),
     (2, 3, 9, 11)),
    ("interpolate nearest", lambda x: torch.nn.functional.interpolate(x, size=(5, 13), mode="nearest"), (2, 3, 9, 11)),
    ("interpolate bicubic", lambda x: torch.nn.functional.interpolate(x, scale_factor=2, mode="bicubic"), (1, 2, 6, 7)),
    ("pad reflect", lambda x: torch.nn.functional.pad(x, (2, 3, 1, 2), mode="reflect"), (2, 3, 9, 11)),
    ("pad replicate", lambda x: torch.nn.functional.pad(x, (2, 3, 1, 2), mode="replicate"), (2, 3, 9, 11)),
    ("adaptive_max_pool2d", lambda x: torch.nn.functional.adaptive_max_pool2d(x, (4, 3)), (2, 3, 9, 11)),
    ("avg_pool3d", lambda x: torch.nn.functional.avg_pool3d(x, 3, stride=2, padding=1), (1, 2, 7, 8, 9)),
    ("quantile", lambda x: torch.quantile(x.flatten(1), 0.3, dim=1), (4, 3, 5, 5)),
])
def test_ops_with_host_built_tables_capture_without_a_sync(name, fn, shape):
    # Their index / weight tables are built on the host and copied without waiting (the copy task
    # holds the table), so they neither sync eagerly nor break a capture.
    x = torch.randn(*shape)
    sx = x.npu()
    torch.npu.synchronize()
    torch.npu.set_sync_debug_mode("error")
    try:
        fn(sx)
    finally:
        torch.npu.set_sync_debug_mode("default")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        sy = fn(sx)
    x2 = torch.randn(*shape)
    sx.copy_(x2)
    g.replay()
    torch.testing.assert_close(sy.cpu(), fn(x2), rtol=1e-5, atol=1e-5)


def test_compile_reduce_overhead_replays_inference_graphs():
    from torch_ops_nn.compile_backend import stats

    torch._dynamo.reset()
    stats.reset()
    torch.manual_seed(4)
    cpu = _conv_net()
    net = copy.deepcopy(cpu).npu()
    f = torch.compile(net, backend="npu", mode="reduce-overhead")
    held = []
    with torch.no_grad():
        for _ in range(4):
            x = torch.randn(2, 3, 12, 12)
            y = f(x.npu())
            torch.testing.assert_close(y.cpu(), cpu(x), rtol=1e-4, atol=1e-4)
            held.append((y, cpu(x)))
        assert stats.npu_graphs_captured == 1  # eager first call, captured at the second, replayed after
        for y, ref in held:  # a replay does not overwrite what an earlier call returned
            torch.testing.assert_close(y.cpu(), ref, rtol=1e-4, atol=1e-4)
        for p_cpu, p_npu in zip(cpu.parameters(), net.parameters()):
            p_cpu.mul_(0.5)
            p_npu.mul_(0.5)
        x = torch.randn(2, 3, 12, 12)
        torch.testing.assert_close(f(x.npu()).cpu(), cpu(x), rtol=1e-4, atol=1e-4)
    assert stats.npu_graphs_captured == 1


def test_compile_reduce_overhead_runs_uncapturable_graphs_without_graphs():
    torch._dynamo.reset()

    def wave(x):  # histc without a range reads the data's min / max back: no capture
        return torch.relu(x) + torch.histc(x, bins=5)

    f = torch.compile(wave, backend="npu", mode="reduce-overhead")
    with torch.no_grad(), pytest.warns(UserWarning, match="runs without an NPU graph: .*synchroniz"):
        for _ in range(3):
            x = torch.randn(5)
            torch.testing.assert_close(f(x.npu()).cpu(), torch.relu(x) + torch.histc(x, bins=5))


def test_a_graph_replayed_first_inside_another_capture_still_fills_its_weight_copies():
    torch.manual_seed(5)
    w = torch.randn(8, 3, 3, 3)
    wn = w.npu()
    sx = torch.randn(1, 3, 8, 8).npu()
    with torch.no_grad():
        inner, sy = _warm_and_capture(lambda t: torch.nn.functional.conv2d(t, wn, padding=1), sx)
        outer = torch.npu.NPUGraph()
        with torch.npu.graph(outer):
            inner.replay()  # captured, not run: the inner graph's weight copy is still to be made
        x = torch.randn(1, 3, 8, 8)
        sx.copy_(x)
        inner.replay()
        torch.testing.assert_close(sy.cpu(), torch.nn.functional.conv2d(x, w, padding=1), rtol=1e-4, atol=1e-4)
        outer.replay()
        torch.testing.assert_close(sy.cpu(), torch.nn.functional.conv2d(x, w, padding=1), rtol=1e-4, atol=1e-4)


def test_a_weight_used_many_times_in_a_graph_is_copied_once(tmp_path):
    torch.manual_seed(8)
    cpu = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32)).eval()
    net = copy.deepcopy(cpu).npu()

    def unrolled(m, t):
        for _ in range(4):
            t = t + m(t)
        return t

    x = torch.randn(4, 32)
    with torch.no_grad():
        g = torch.npu.NPUGraph()
        g.enable_debug_mode()
        for _ in range(3):
            unrolled(net, x.npu())
        sx = x.npu()
        with torch.npu.graph(g):
            sy = unrolled(net, sx)
        g.debug_dump(str(tmp_path / "g.txt"))
        regions = {line.split("[copy ")[1].split("]")[0] for line in (tmp_path / "g.txt").read_text().splitlines()
                   if "[copy " in line}
        assert len(regions) == 2, regions  # one packed copy per Linear weight, not one per use
        for _ in range(2):
            g.replay()
            torch.testing.assert_close(sy.cpu(), unrolled(cpu, x), rtol=1e-4, atol=1e-4)
            for p_cpu, p_npu in zip(cpu.parameters(), net.parameters()):
                p_cpu.mul_(0.9)
                p_npu.mul_(0.9)


_X = torch.randn(6, 5)
_P, _IDX = torch.nn.functional.max_pool2d(torch.randn(2, 3, 8, 8), 2, return_indices=True)


@pytest.mark.parametrize("name, fn, good, bad, match", [
    ("binary_cross_entropy", lambda p: torch.nn.functional.binary_cross_entropy(p, torch.full_like(p, 0.25)),
     torch.rand(6, 5) * 0.9 + 0.05, torch.full((6, 5), 1.5), "all elements of input should be between 0 and 1"),
    ("multi_margin_loss", lambda t: torch.nn.functional.multi_margin_loss(_X.to(t.device, non_blocking=True), t),
     torch.tensor([0, 4, 2, 1, 3, 0]), torch.tensor([0, 5, 2, 1, 3, 0]), "target out of range"),
    ("multilabel_margin_loss", lambda t: torch.nn.functional.multilabel_margin_loss(_X.to(t.device, non_blocking=True), t),
     torch.tensor([[0, 3, -1, 0, 0]] * 6), torch.tensor([[0, 7, -1, 0, 0]] * 6), "target out of range"),
    ("max_unpool2d", lambda i: torch.nn.functional.max_unpool2d(_P.to(i.device, non_blocking=True), i, 2),
     _IDX, _IDX + 64, "Found an invalid max index"),
    ("one_hot", lambda t: torch.nn.functional.one_hot(t, 7), torch.tensor([0, 3, 6]), torch.tensor([0, 7, 1]),
     r"Class values must be smaller than num_classes \(7\)"),
])
def test_range_rules_are_checked_on_the_device_inside_graphs(name, fn, good, bad, match):
    # Eagerly these rules read a flag back and raise at the call; a graph cannot read back, so the
    # check runs on the device and a replay with bad values raises at the next synchronization.
    with pytest.raises(RuntimeError, match=match):
        fn(bad.npu())
    s = good.npu()
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        y = fn(s)
    g.replay()
    torch.testing.assert_close(y.cpu(), fn(good), rtol=1e-5, atol=1e-6)
    s.copy_(bad)
    g.replay()
    with pytest.raises(RuntimeError, match=f"(?s)device_check_kernel.*{match}"):
        torch.npu.synchronize()
    s.copy_(good)
    g.replay()
    torch.testing.assert_close(y.cpu(), fn(good), rtol=1e-5, atol=1e-6)


def test_random_ops_with_tensor_parameters_check_them_on_the_device_inside_graphs():
    p = torch.full((100,), 0.5, device="npu")
    std = torch.ones(100, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        b = torch.bernoulli(p)
        n = torch.normal(torch.zeros(100, device="npu"), std)
    g.replay()
    assert set(b.cpu().unique().tolist()) <= {0.0, 1.0} and n.cpu().std() > 0.5
    p.fill_(1.5)
    g.replay()
    with pytest.raises(RuntimeError, match=r"expects p to be in \[0, 1\]"):
        torch.npu.synchronize()
    p.fill_(0.5)
    std.fill_(-1.0)
    g.replay()
    with pytest.raises(RuntimeError, match="expects all elements of std >= 0.0"):
        torch.npu.synchronize()


def test_integer_division_captures_with_its_rules_checked_on_the_device():
    # take_along_dim wraps its indices with %; i // j and i % 4 of index arithmetic. Eagerly one read
    # back checks for zero divisors and values beyond 2^24; in a graph both are device checks.
    i, j = torch.randint(-100, 100, (6,)), torch.randint(1, 7, (6,))
    si, sj = i.npu(), j.npu()
    src, idx = torch.arange(10.0).view(2, 5), torch.tensor([[1, -1], [0, 2]])
    ssrc, sidx = src.npu(), idx.npu()
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        q, r, t = si // sj, si % 4, torch.take_along_dim(ssrc, sidx, 1)
    g.replay()
    assert torch.equal(q.cpu(), i // j) and torch.equal(r.cpu(), i % 4)
    assert torch.equal(t.cpu(), torch.take_along_dim(src, idx, 1))
    sj.zero_()
    g.replay()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.npu.synchronize()
    sj.fill_(1)
    si.fill_(1 << 30)
    g.replay()
    with pytest.raises(RuntimeError, match=r"beyond \+-2\^24 are divided exactly only outside npu graphs"):
        torch.npu.synchronize()
    si.copy_(i)
    g.replay()
    assert torch.equal(q.cpu(), i)


def test_nonzero_static_captures():
    # The fixed-size nonzero (its count is not read back): padded with fill_value, truncated at size.
    x = torch.randn(5, 6) * (torch.rand(5, 6) > 0.5)
    sx = x.npu()
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        few, many = torch.nonzero_static(sx, size=4), torch.nonzero_static(sx, size=40, fill_value=-7)
    for _ in range(2):
        g.replay()
        assert torch.equal(few.cpu(), torch.nonzero_static(x, size=4))
        assert torch.equal(many.cpu(), torch.nonzero_static(x, size=40, fill_value=-7))
        x = torch.randn(5, 6) * (torch.rand(5, 6) > 0.3)
        sx.copy_(x)


def test_embedding_bag_captures():
    # A recommendation model's lookup: bags by offsets (no read back), replayed with new indices.
    torch.manual_seed(2)
    w = torch.randn(50, 8)
    idx, off = torch.randint(0, 50, (12,)), torch.tensor([0, 4, 4, 9])
    wn, sidx, soff = w.npu(), idx.npu(), off.npu()
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        sums = torch.nn.functional.embedding_bag(sidx, wn, soff, mode="sum")
        means = torch.nn.functional.embedding_bag(sidx, wn, soff, mode="mean")
    for _ in range(2):
        g.replay()
        torch.testing.assert_close(sums.cpu(), torch.nn.functional.embedding_bag(idx, w, off, mode="sum"))
        torch.testing.assert_close(means.cpu(), torch.nn.functional.embedding_bag(idx, w, off, mode="mean"))
        idx = torch.randint(0, 50, (12,))
        sidx.copy_(idx)


def test_multinomial_checks_its_distribution_on_the_device_inside_graphs():
    # A sampling step of a generation loop: eagerly one read back checks the rows; in a graph each rule
    # is a device check, and a replay with a bad distribution raises its message at the next sync.
    probs = torch.rand(4, 50, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        picks = torch.multinomial(probs, 3)
        draws = torch.multinomial(probs, 5, replacement=True)
    probs.zero_()
    probs[:, 7] = 1.0  # one category left for draws with replacement; two tiny ones for the picks
    probs[:, 8:10] = 1e-7
    g.replay()
    assert (draws.cpu() == 7).all() and (picks.cpu()[:, 0] == 7).all()
    assert (torch.sort(picks.cpu(), 1).values == torch.tensor([7, 8, 9])).all()
    probs[1, 3] = -0.5
    g.replay()
    with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
        torch.npu.synchronize()
    probs.fill_(0.0)
    g.replay()
    with pytest.raises(RuntimeError, match=r"sum of probabilities <= 0"):
        torch.npu.synchronize()
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        torch.multinomial(torch.tensor([[0.5, 0.0, 0.0]], device="npu"), 2)


def test_whole_training_step_captured_on_the_warm_up_stream_trains():
    # The torch.cuda docs' whole-network capture: forward, backward and optimizer.step in one graph.
    torch.manual_seed(9)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Dropout(p=0.2), torch.nn.Linear(64, 8)).npu()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sx, st = torch.randn(64, 32, device="npu"), torch.randn(64, 8, device="npu")
    s = torch.npu.Stream()
    s.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(s):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.mse_loss(model(sx), st).backward()
            opt.step()
    torch.npu.current_stream().wait_stream(s)
    g = torch.npu.NPUGraph()
    opt.zero_grad(set_to_none=True)
    with torch.npu.graph(g, stream=s):
        loss = torch.nn.functional.mse_loss(model(sx), st)
        loss.backward()
        opt.step()
    x = torch.randn(64, 32)
    sx.copy_(x)
    st.copy_(x[:, :8] * 2)
    losses = []
    for _ in range(30):
        g.replay()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses[::5]
