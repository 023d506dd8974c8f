"""Shared by the benchmark scripts: time npu and CPU statements in the same run with
torch.utils.benchmark and print npu/CPU ratios."""
from __future__ import annotations

import torch
import torch.utils.benchmark as benchmark


def median_seconds(stmt: str, env: dict, min_run_time: float = 1.0) -> float:
    env = dict(env)
    env.setdefault("torch", torch)
    timer = benchmark.Timer(stmt=stmt, globals=env, num_threads=torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=min_run_time).median


def paired_seconds(stmt_a: str, env_a: dict, stmt_b: str, env_b: dict, min_run_time: float = 1.0,
                   rounds: int = 5) -> tuple[float, float]:
    """Medians of two statements timed in alternating short blocks (a, b, a, b, ...), so that a
    drift of this shared VM's speed during the run hits both sides alike."""
    import statistics
    per = max(min_run_time / rounds, 0.1)
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(median_seconds(stmt_a, env_a, per))
        tb.append(median_seconds(stmt_b, env_b, per))
    return statistics.median(ta), statistics.median(tb)


def header(title: str) -> None:
    import torch_ops_nn

    print(f"\n{title}")
    print(f"(torch {torch.__version__}, {torch.get_num_threads()} CPU threads, "
          f"{torch_ops_nn._C._host_threads()} npu host threads, SoC {torch.npu.get_device_name()}, "
          f"cube micro-kernels {torch_ops_nn._C._build_info()['cube']}, "
          f"convs {'HF32' if torch.npu.conv.allow_hf32 else 'fp32'}, matmuls {'HF32' if torch.npu.matmul.allow_hf32 else 'fp32'})")


def table(rows: list[tuple], extra: str | None = None) -> None:
    """rows: (case, npu seconds, cpu seconds[, extra value])."""
    cols = f"{'case':<46}{'npu (ms)':>11}{'CPU (ms)':>11}{'npu/CPU':>9}"
    print(cols + (f"{extra:>14}" if extra else ""))
    for row in rows:
        case, t_npu, t_cpu = row[:3]
        line = f"{case:<46}{t_npu * 1e3:>11.3f}{t_cpu * 1e3:>11.3f}{t_npu / t_cpu:>9.2f}"
        if extra and len(row) > 3:
            line += f"{row[3]:>14}"
        print(line)


def run_cases(title: str, cases: list[tuple[str, str, dict]], min_run_time: float) -> None:
    """Each (name, statement, CPU tensors): the statement on the CPU tensors and on their npu copies
    (synchronized), printed as one table."""
    header(title)
    rows = []
    for name, stmt, env in cases:
        t_cpu = median_seconds(stmt, env, min_run_time)
        denv = {k: v.to("npu") for k, v in env.items()}
        rows.append((name, median_seconds(stmt + "; torch.npu.synchronize()", denv, min_run_time), t_cpu))
    table(rows)
