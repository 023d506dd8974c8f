"""The torch.compile backend: ``torch.compile(model, backend="npu")`` (also ``backend="torch_ops_nn"``).

Dynamo captures the graph; AOTAutograd lowers it to ATen (functionalized; forward and backward graphs
in training); our compiler runs the Conv-BN(-Add)-activation fusion pass on each graph and executes it
eagerly on the device (each node an npu kernel, the fused chains one kernel each). "npu" is the name a
torch_npu user types; the two packages cannot be installed together, so it is unambiguous.
"""
from __future__ import annotations

import dataclasses

import torch
import torch.fx as fx
from functorch.compile import make_boxed_compiler
from torch._dynamo.backends.common import aot_autograd

from torch_ops_nn.fx.fuse import FusionReport, fuse_graph

BACKEND_NAMES = ("npu", "torch_ops_nn")


@dataclasses.dataclass
class CompileStats:
    graphs_compiled: int = 0
    report: FusionReport = dataclasses.field(default_factory=FusionReport)

    def reset(self) -> None:
        self.graphs_compiled = 0
        self.report = FusionReport()


stats = CompileStats()


def _fusing_compiler(gm: fx.GraphModule, example_inputs):
    stats.graphs_compiled += 1
    stats.report.merge(fuse_graph(gm))
    return gm


_backend = aot_autograd(fw_compiler=make_boxed_compiler(_fusing_compiler),
                        bw_compiler=make_boxed_compiler(_fusing_compiler))


def npu_backend(gm: fx.GraphModule, example_inputs):
    """Dynamo backend entry point."""
    return _backend(gm, example_inputs)

# Dynamo finds npu_backend under BACKEND_NAMES through the "torch_dynamo_backends" entry points
# (setup.py), so nothing is imported from torch._dynamo until torch.compile is used.
