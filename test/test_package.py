"""Autoload, the torch_npu conflict check, logging levels and the info CLI."""
import os
import re
import subprocess
import sys
import textwrap

from conftest import run_python


def test_import_torch_alone_autoloads():
    r = run_python("import torch; x = torch.ones(2).to('npu'); print(x.device, hasattr(torch, 'npu'))")
    assert r.returncode == 0, r.stderr
    assert "npu:0 True" in r.stdout


def test_autoload_can_be_disabled():
    r = run_python("import torch; print(torch._C._get_privateuse1_backend_name())",
                   {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode == 0 and "privateuseone" in r.stdout


def test_torch_npu_conflict_is_a_clear_error(tmp_path):
    fake = tmp_path / "torch_npu"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    r = run_python("import torch_ops_nn", {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0",
                                           "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})
    assert r.returncode != 0
    assert "cannot be used together with torch_npu" in r.stderr


def test_debug_log_level_logs_launches():
    r = run_python("import torch, torch_ops_nn; x = torch.ones(8).to('npu'); y = torch.relu(x); "
                   "torch.npu.synchronize()", {"ASCEND_GLOBAL_LOG_LEVEL": "0"})
    assert r.returncode == 0, r.stderr
    assert re.search(r"\[DEBUG\] torch_ops_nn: npu:0 stream 0 ran copy_ \(cpu->npu\) Float\[8\] strides \[1\] -> "
                     r"Float strides \[1\] in [0-9.]+ us", r.stderr), r.stderr
    assert "ran relu_kernel self=Float[8]" in r.stderr and "blockDim=1" in r.stderr
    r = run_python("import torch, torch_ops_nn; x = torch.ones(8).to('npu'); torch.npu.synchronize()")
    assert "[DEBUG]" not in r.stderr


def run_cli(*args, env=None):
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "torch_ops_nn", *args], capture_output=True, text=True,
                          env=full, timeout=300)


def test_info_cli_reports_devices():
    r = run_cli("info", env={"TORCH_OPS_NN_DEVICE_COUNT": "3", "TORCH_OPS_NN_SOC": "Ascend910B2,Ascend910B4,Ascend310P3"})
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    for needle in ("torch_ops_nn:", "build:", "g++", "runtime:      simulator", "kernels:", "Ascend910B4",
                   "distributed:  hccl backend registered for npu",
                   "Ascend310P3", "| 2   ", "HBM-Usage(MB)", "Result: OK - 3 simulated npu device(s) ready"):
        assert needle in out, needle
    assert "| 0   | 0      | Ascend910B2 | 2201 | 24  | 48  |" in out
    assert "Ascend310P3 | 2002 | 8   | 0   |" in out


def test_kernels_refuse_a_310p_device_clearly():
    r = run_python("import torch, torch_ops_nn\nx = torch.ones(4, 4).to('npu')\nprint(torch.relu(x).cpu().sum().item())"
                   "\ntry:\n    torch.mm(x, x)\n"
                   "except NotImplementedError as e:\n    print(e)", {"TORCH_OPS_NN_SOC": "Ascend310P3"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("16.0")  # the vector kernels that avoid DataCopyPad run on 310P
    assert "matmul_kernel: the torch_ops_nn kernels are built for __NPU_ARCH__ 2201" in r.stdout
    assert "npu:0 is an Ascend310P3 (arch 2002)" in r.stdout


def test_info_cli_fails_with_a_reason():
    r = run_cli("info", env={"TORCH_OPS_NN_SOC": "Ascend999"})
    assert r.returncode != 0
    assert "Result: FAILED" in r.stdout and "unknown SoC profile 'Ascend999'" in r.stdout
    r = run_cli("info", env={"ASCEND_RT_VISIBLE_DEVICES": "5"})
    assert r.returncode != 0 and "no npu device is visible" in r.stdout


def test_visible_devices_remap():
    r = run_python("import torch; print(torch.npu.device_count(), torch.npu.get_device_properties(0).physical_id)",
                   {"TORCH_OPS_NN_DEVICE_COUNT": "4", "ASCEND_RT_VISIBLE_DEVICES": "2,3"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["2", "2"]
