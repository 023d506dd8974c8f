"""The "torch.backends" entry point of torch_ops_nn (``import torch`` calls ``load``).

A top-level module, not inside the package, so that a checkout whose native extension is not built
(yet) cannot break ``import torch``: the failure becomes a warning and the npu device stays
unregistered; ``import torch_ops_nn`` itself still raises."""


def load() -> None:
    try:
        import torch_ops_nn  # noqa: F401  (importing registers the npu device)
    except ImportError as e:
        if "torch_npu" in str(e):
            raise
        import warnings

        warnings.warn(f"torch_ops_nn is installed but cannot be loaded ({e}); the npu device is not registered. "
                      "Build it with: pip install --no-build-isolation -e .", RuntimeWarning)
