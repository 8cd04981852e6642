"""The benchmark script reads valgrind's instruction count (benchmarks/run.py --instructions)."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest

from tests.conftest import benchmark_module


def run_module() -> ModuleType:
    return benchmark_module("run")


# The summary valgrind 3.19's cachegrind writes with --cache-sim=no, as printed on this
# project's machines (the process id varies).
REPORT = """\
==5289== Cachegrind, a cache and branch-prediction profiler
==5289== Copyright (C) 2002-2017, and GNU GPL'd, by Nicholas Nethercote et al.
==5289== Using Valgrind-3.19.0 and LibVEX; rerun with -h for copyright info
==5289== Command: .venv/bin/python -c import\\ typer
==5289==
==5289==
==5289== I   refs:      895,700,724
"""


def test_the_instruction_count_is_read_from_the_summary() -> None:
    assert run_module().instruction_count(REPORT) == 895_700_724


def test_a_report_without_a_count_is_an_error_that_shows_it() -> None:
    with pytest.raises(ValueError, match="no 'I refs:' line") as caught:
        run_module().instruction_count("==1== Command: python\n")
    assert "Command: python" in str(caught.value)


def test_paired_runs_report_the_least_cpu_times_of_each_side() -> None:
    """``--ratios``' pairs: the ratio of the least CPU times of the second command to the
    first's. A child that spins for a fifth of a second against one that exits at once
    shows it, with the wall-time medians beside it."""
    quick = [sys.executable, "-c", "pass"]
    busy = [sys.executable, "-c",
            "import time\nend = time.process_time() + 0.2\n"
            "while time.process_time() < end: pass"]
    result = run_module().paired(quick, busy, 2)
    assert result.cpu_ratio > 1.5
    assert result.second > result.first
    assert len(result.ratios) == 2
    assert result.ratios == sorted(result.ratios)


def test_the_forecast_benchmarks_side_without_the_band_walks_the_middle_burn_only() -> None:
    """benchmarks/forecast_bench.py's "band turned off" side runs the command with
    ``forecast(..., band=False)``: its first_paid_at band is the point, where the command's
    own spans 13:49Z to 14:21:39Z around the same p50."""
    import json
    import subprocess

    from tests.conftest import EXAMPLES

    bench = benchmark_module("forecast_bench")
    args = ["forecast", "auto/thrifty", "--config", str(EXAMPLES / "day" / "omniladder.toml"),
            "--now", "2026-11-29T13:00:00Z", "--json"]
    env = run_module().child_env()
    sides = [subprocess.run(argv, capture_output=True, text=True, env=env, check=True,
                            cwd=bench.ROOT)
             for argv in ([sys.executable, "-m", "omniladder", *args],
                          [sys.executable, "-c", bench.NO_BAND, *args])]
    band, point = (json.loads(side.stdout)["first_paid_at_band"] for side in sides)
    assert (band["p10"], band["p90"]) == ("2026-11-29T13:49:00Z", "2026-11-29T14:21:39Z")
    assert point == {"p10": band["p50"], "p50": band["p50"], "p90": band["p50"]}
