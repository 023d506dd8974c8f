"""FX graph passes of torch_ops_nn: Conv-BN(-Add)-activation fusion."""
from torch_ops_nn.fx.fuse import FusionReport, fuse, fuse_graph

__all__ = ["fuse", "fuse_graph", "FusionReport"]
