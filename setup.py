"""Build torch_ops_nn and its C++ extension against the installed torch.

    pip install --no-build-isolation -e .

Supported and tested: Python 3.11, torch 2.14.1 (+ torchvision 0.29.1 for the ResNet tests).
The extension is portable x86-64 / aarch64 code: SIMD paths are chosen at run time, never with
-march=native.
"""
import glob
import os

# Building must not autoload an installed (possibly stale or unbuilt) torch_ops_nn through torch's
# "torch.backends" entry point while setup.py imports torch.
os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"

from setuptools import find_packages, setup  # noqa: E402
from torch.utils.cpp_extension import BuildExtension, CppExtension  # noqa: E402

ROOT = os.path.dirname(os.path.abspath(__file__))

CXX_FLAGS = ["-O3", "-std=c++20", "-fno-math-errno", "-Wno-unused-parameter", "-Wno-unknown-pragmas"]


def sources():
    files = sorted(glob.glob("csrc/**/*.cpp", recursive=True)) + sorted(glob.glob("ascendc_kernels/*.cpp"))
    return files


setup(
    name="torch_ops_nn",
    version="0.1.0",
    description="PyTorch out-of-tree backend for Huawei Ascend NPUs, with a simulated NPU that runs Ascend C kernels on the CPU",
    packages=find_packages(include=["torch_ops_nn", "torch_ops_nn.*"]),
    py_modules=["torch_ops_nn_autoload"],
    python_requires=">=3.10",
    install_requires=["torch>=2.14"],
    ext_modules=[
        CppExtension(
            "torch_ops_nn._C",
            sources(),
            include_dirs=[os.path.join(ROOT, d) for d in ("csrc", "csrc/ascendc", "ascendc_kernels")],
            extra_compile_args={
                "cxx": CXX_FLAGS + ['-DTORCH_OPS_NN_CXX_FLAGS="' + " ".join(CXX_FLAGS) + '"'],
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    entry_points={
        # `import torch` loads torch_ops_nn through this (torch's device-backend autoload).
        "torch.backends": ["torch_ops_nn = torch_ops_nn_autoload:load"],
        "console_scripts": ["torch-ops-nn = torch_ops_nn.__main__:main"],
        # torch.compile(model, backend="npu") finds our backend through this, without importing
        # torch._dynamo when torch loads.
        "torch_dynamo_backends": [
            "npu = torch_ops_nn.compile_backend:npu_backend",
            "torch_ops_nn = torch_ops_nn.compile_backend:npu_backend",
        ],
    },
)
