"""nn.LSTM / nn.GRU / nn.RNN and their cells on npu (ATen's fused LSTM / GRU cells: the LSTM cell's
Ascend C kernel when no gradient is needed, compositions of native kernels otherwise): outputs, final
states and every gradient against the CPU, packed sequences, float16, and clear errors for bad cell
input."""
import copy

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

pytestmark = pytest.mark.usefixtures("fallback_error")


def check_module(m, x, *state, rtol=1e-5, atol=1e-5):
    md = copy.deepcopy(m).npu()
    x = x.clone().requires_grad_()
    xd = x.detach().npu().requires_grad_()
    sd = [tuple(t.npu() for t in s) if isinstance(s, tuple) else s.npu() for s in state]
    out, outd = m(x, *state), md(xd, *sd)
    flat = lambda o: [t for t in (o if isinstance(o, tuple) else (o,)) for t in (t if isinstance(t, tuple) else (t,))]
    loss = sum((t * (i + 1)).square().sum() for i, t in enumerate(flat(out)))
    lossd = sum((t * (i + 1)).square().sum() for i, t in enumerate(flat(outd)))
    loss.backward()
    lossd.backward()
    for g, w in zip(flat(outd), flat(out)):
        torch.testing.assert_close(g.detach().cpu(), w.detach(), rtol=rtol, atol=atol)
    torch.testing.assert_close(xd.grad.cpu(), x.grad, rtol=rtol, atol=atol)
    for (name, p), pd in zip(m.named_parameters(), md.parameters()):
        torch.testing.assert_close(pd.grad.cpu(), p.grad, rtol=rtol, atol=atol, msg=name)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_modules_match_cpu(kind, bidirectional, batch_first):
    torch.manual_seed(3)
    m = getattr(torch.nn, kind)(12, 20, num_layers=2, bidirectional=bidirectional, batch_first=batch_first)
    x = torch.randn(4, 6, 12)
    check_module(m, x)


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")  # the CPU reference's
def test_lstm_with_projection_bias_free_and_initial_state():
    torch.manual_seed(4)
    m = torch.nn.LSTM(10, 24, num_layers=2, proj_size=8, bias=False)
    x = torch.randn(7, 3, 10)
    h0, c0 = torch.randn(2, 3, 8), torch.randn(2, 3, 24)
    check_module(m, x, (h0, c0))
    g = torch.nn.GRU(10, 16)
    check_module(g, x, torch.randn(1, 3, 16))


@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_cpu(cell):
    torch.manual_seed(5)
    m = getattr(torch.nn, cell)(9, 17)
    check_module(m, torch.randn(6, 9))


def test_packed_sequences():
    torch.manual_seed(6)
    m = torch.nn.LSTM(8, 16, batch_first=True)
    md = copy.deepcopy(m).npu()
    x = torch.randn(3, 5, 8)
    lengths = torch.tensor([5, 3, 2])
    out, (h, c) = m(pack_padded_sequence(x, lengths, batch_first=True))
    outd, (hd, cd) = md(pack_padded_sequence(x.npu(), lengths, batch_first=True))
    y, _ = pad_packed_sequence(out, batch_first=True)
    yd, _ = pad_packed_sequence(outd, batch_first=True)
    torch.testing.assert_close(yd.cpu(), y, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(hd.cpu(), h, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(cd.cpu(), c, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("hidden,batch", [(48, 5), (512, 16), (100, 3), (7, 1000), (2300, 2), (2500, 2)])
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_kernel_without_grad(hidden, batch, bias):
    """Inference (no_grad): the fused cell kernel; batches over several units, a hidden size that is
    no multiple of 8, one too wide for the kernel (the composition), with and without bias."""
    torch.manual_seed(hidden + batch)
    m = torch.nn.LSTM(24, hidden, 2, bias=bias)
    md = copy.deepcopy(m).npu()
    x = torch.randn(3, batch, 24)
    with torch.no_grad():
        want, (h, c) = m(x)
        got, (hd, cd) = md(x.npu())
    for g, w in ((got, want), (hd, h), (cd, c)):
        torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-5)
    ig, hg, cx = torch.randn(batch, 4 * hidden), torch.randn(batch, 4 * hidden), torch.randn(batch, hidden)
    hy, cy, ws = torch.ops.aten._thnn_fused_lstm_cell(ig.npu(), hg.npu(), cx.npu())
    gates = (ig + hg).chunk(4, 1)
    i, f, gg, o = gates[0].sigmoid(), gates[1].sigmoid(), gates[2].tanh(), gates[3].sigmoid()
    torch.testing.assert_close(cy.cpu(), f * cx + i * gg, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(hy.cpu(), o * (f * cx + i * gg).tanh(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ws.cpu(), torch.cat([i, f, gg, o], 1), rtol=1e-5, atol=1e-5)


def test_half():
    torch.manual_seed(7)
    m = torch.nn.LSTM(16, 32)
    x = torch.randn(5, 2, 16)
    want, _ = m(x)
    got, _ = copy.deepcopy(m).npu().half()(x.half().npu())
    torch.testing.assert_close(got.float().cpu(), want, rtol=2e-2, atol=2e-2)


def test_bad_cell_input_is_a_clear_error():
    ig = torch.randn(3, 8, device="npu")
    with pytest.raises(RuntimeError, match=r"_thnn_fused_lstm_cell: the state \[3, 3\] must be \[batch, hidden\]"):
        torch.ops.aten._thnn_fused_lstm_cell(ig, ig, torch.randn(3, 3, device="npu"))
    with pytest.raises(RuntimeError, match=r"_thnn_fused_gru_cell: input_gates \[3, 8\] and hidden_gates \[3, 9\]"):
        torch.ops.aten._thnn_fused_gru_cell(ig, torch.randn(3, 9, device="npu"), torch.randn(3, 3, device="npu"))
    with pytest.raises(RuntimeError, match=r"a bias of 5 elements for gates of width 8"):
        torch.ops.aten._thnn_fused_lstm_cell(ig, ig, torch.randn(3, 2, device="npu"), torch.randn(5, device="npu"))
    hy, cy, ws = torch.ops.aten._thnn_fused_lstm_cell(ig, ig, torch.zeros(3, 2, device="npu"))
    assert hy.shape == cy.shape == (3, 2) and ws.shape == (3, 8)
