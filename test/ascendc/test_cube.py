"""Cube unit of the Ascend C host model: the Mmad micro-kernel and the cube instructions.

Compiles two C++ programs with g++ (no torch needed) into test/_build/ and checks their output:
  * cube_gemm_check.cpp   — the micro-kernel (csrc/ascendc/cube_gemm.cpp) against a naive GEMM over
                            odd sizes, float/half/bfloat16, init/accumulate/bias, every ISA variant;
  * cube_kernel_check.cpp — hand-written cube kernels through kernel_operator.h: GM -> L1 (Nd2Nz) ->
                            L0A/L0B (LoadData 2D) -> Mmad -> Fixpipe with tails, GEMV, bias, the
                            epilogue extension, Load3D img2col vs a naive im2col, the 2002 CO2 path,
                            and every broken rule raising a KernelError.
"""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / "csrc" / "ascendc"
BUILD = ROOT / "test" / "_build" / "cube"
CXX = os.environ.get("CXX", "g++")
FLAGS = ["-O2", "-std=c++20", "-Wno-psabi", f"-I{SRC}", f"-I{ROOT / 'csrc'}"]

pytestmark = pytest.mark.skipif(shutil.which(CXX) is None, reason="needs a C++ compiler")


def _compile_object(src: pathlib.Path) -> pathlib.Path:
    """Compiles one translation unit, reusing the object while it is newer than every input."""
    BUILD.mkdir(parents=True, exist_ok=True)
    obj = BUILD / (src.stem + ".o")
    headers = list(SRC.glob("*.h")) + list(SRC.glob("*.inc"))
    newest = max(p.stat().st_mtime for p in [src, *headers])
    if not obj.exists() or obj.stat().st_mtime < newest:
        subprocess.run([CXX, *FLAGS, "-c", str(src), "-o", str(obj)], check=True)
    return obj


def _build(main_cpp: str, sources: list[pathlib.Path], exe_name: str) -> pathlib.Path:
    objs = [_compile_object(ROOT / "test" / "ascendc" / main_cpp)]
    objs += [_compile_object(s) for s in sources]
    exe = BUILD / exe_name
    subprocess.run([CXX, *[str(o) for o in objs], "-pthread", "-o", str(exe)], check=True)
    return exe


@pytest.fixture(scope="module")
def gemm_exe():
    return _build("cube_gemm_check.cpp", [SRC / "cube_gemm.cpp"], "cube_gemm_check")


@pytest.fixture(scope="module")
def kernel_exe():
    if not (SRC / "kernel_operator.h").exists():
        pytest.skip("kernel_operator.h (the core of the model) is not there yet")
    return _build("cube_kernel_check.cpp", sorted(SRC.glob("*.cpp")), "cube_kernel_check")


def test_micro_kernel_matches_naive_gemm(gemm_exe):
    out = subprocess.run([str(gemm_exe), "check"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "OK" in out.stdout


@pytest.fixture(scope="module")
def kernel_lines(kernel_exe):
    out = subprocess.run([str(kernel_exe)], capture_output=True, text=True, timeout=120)
    lines = [l for l in out.stdout.splitlines() if l.startswith(("PASS", "FAIL"))]
    return out, lines


def _check(kernel_lines, prefix):
    out, lines = kernel_lines
    mine = [l for l in lines if l.split()[1].rstrip(":").startswith(prefix)]
    assert mine, f"no '{prefix}' checks ran:\n{out.stdout}\n{out.stderr}"
    bad = [l for l in mine if l.startswith("FAIL")]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("prefix", ["matmul_", "gemv_", "epilogue_", "load3d_", "co2_path"])
def test_cube_kernels(kernel_lines, prefix):
    _check(kernel_lines, prefix)


def test_cube_rules_raise(kernel_lines):
    _check(kernel_lines, "err_")
    out, _ = kernel_lines
    assert out.returncode == 0, out.stdout + out.stderr
