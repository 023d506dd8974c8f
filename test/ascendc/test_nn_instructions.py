"""Host-model instructions added for the nn kernels: Gather, GatherMask, Scatter, the sort instructions (Sort32,
MrgSort, Extract), half <-> uint8 Cast, ascendc_assert.

Builds test/ascendc/nn_instr_test.cpp against csrc/ascendc (objects shared with test_ascendc_host.py's
cache) and runs one case per argv.
"""
import importlib.util
import pathlib
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_ascendc_host_build", HERE / "test_ascendc_host.py")
host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(host)


@pytest.fixture(scope="session")
def nn_instr_binary():
    host.BUILD.mkdir(parents=True, exist_ok=True)
    headers = [p for p in host.SRC.iterdir() if p.suffix in (".h", ".inc")]
    hd = host._digest(headers, " ".join(host.FLAGS))
    sources = [s for s in sorted(host.SRC.glob("*.cpp")) if not s.name.startswith("cube_")]
    sources.append(HERE / "nn_instr_test.cpp")
    objs = []
    for src in sources:
        obj, err = host._compile(src, hd)
        if obj is None:
            pytest.fail(f"{src.name} does not compile:\n{err}")
        objs.append(obj)
    exe = host.BUILD / f"nn_instr_test-{host._digest([pathlib.Path(o) for o in objs])}"
    if not exe.exists():
        # cube_ops.cpp is needed for the symbols kernel_operator.h pulls in
        cube = [s for s in sorted(host.SRC.glob("cube_*.cpp"))]
        for src in cube:
            obj, err = host._compile(src, hd)
            if obj is not None:
                objs.append(obj)
        r = subprocess.run([host.CXX, *map(str, objs), "-o", str(exe), "-lpthread"], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.fail(f"link failed:\n{r.stderr}")
    return exe


def _run(exe, case):
    r = subprocess.run([str(exe), case], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("case", ["gather", "gather_mask", "scatter", "cast_u8", "assert", "sort"])
def test_nn_instruction(nn_instr_binary, case):
    rc, out = _run(nn_instr_binary, case)
    assert rc == 0 and f"PASS {case}" in out, out


def test_gather_errors(nn_instr_binary):
    _, out = _run(nn_instr_binary, "gather")
    assert "ERROR err_gather_range: Gather srcOffset[5] = 256 B (+ base 0 B) is outside the 256 B src" in out, out
    assert "ERROR err_gather_align: Gather srcOffset[3] = 14 B" in out and "not element-aligned" in out, out


def test_scatter_errors(nn_instr_binary):
    _, out = _run(nn_instr_binary, "scatter")
    assert "ERROR err_scatter_range: Scatter dstOffset[4] = 16 B (+ base 240 B) is outside the 256 B dst" in out, out


def test_assert_messages(nn_instr_binary):
    _, out = _run(nn_instr_binary, "assert")
    assert "ERROR err_assert: Assertion `t < classes' failed: target 7 is out of bounds [0, 5)" in out, out
    assert "ERROR err_assert_plain: Assertion `false' failed" in out, out


def test_gather_mask_rejects_what_the_model_does_not_cover(nn_instr_binary):
    _, out = _run(nn_instr_binary, "gather_mask")
    assert "ERROR err_gather_mask_normal: GatherMask: normal mode (reduceMode = false) is not modelled" in out, out
    assert "ERROR err_gather_mask_repeats: GatherMask: counter mode is modelled with repeatTimes = 1" in out, out
    assert "ERROR err_gather_mask_dst: GatherMask dst footprint of 256 B exceeds the VECCALC tensor's 96 B" in out, out


def test_sort_instruction_errors(nn_instr_binary):
    _, out = _run(nn_instr_binary, "sort")
    assert "ERROR err_sort_nan: Sort32: score 7 is NaN" in out, out
    assert ("ERROR err_mrgsort_unsorted: MrgSort queue 1 is not sorted: element 1 (2) is greater than element 0 (0)"
            in out), out
    assert "ERROR err_mrgsort_validbit: MrgSort validBit 0x1: it must be 0b11, 0b111 or 0b1111" in out, out
    assert "ERROR err_mrgsort_len: MrgSort elementCountList[0] = 4096 exceeds 4095 structures" in out, out
    assert "ERROR err_mrgsort_overlap: MrgSort: dst overlaps queue 2" in out, out
