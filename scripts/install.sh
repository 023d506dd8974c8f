#!/usr/bin/env bash
# Installs torch (the tested version), the test tools, and torch_ops_nn built against that torch.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q torch==2.14.1 torchvision==0.29.1 pytest expecttest
# Build the C++ extension against the installed torch (ninja, all host cores).
MAX_JOBS="${MAX_JOBS:-$(nproc)}" python -m pip install -q --no-build-isolation -e .
