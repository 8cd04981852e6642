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


def test_paired_runs_report_each_pair_and_the_least_cpu_times() -> None:
    """``--ratios``' pairs: each command run once per pair, the pairs' ratios sorted, the
    medians and the ratio of the least CPU times reported. Which side is faster is the
    benchmark's figure, never a test's: a loaded machine moves it."""
    command = [sys.executable, "-c", "pass"]
    result = run_module().paired(command, command, 3)
    assert len(result.ratios) == 3
    assert result.ratios == sorted(result.ratios)
    assert all(ratio > 0 for ratio in result.ratios)
    assert min(result.first, result.second, result.cpu_ratio) > 0


def test_the_spread_is_the_middle_half_of_the_ratios() -> None:
    assert run_module().spread([1.0, 1.1, 1.2, 1.3, 1.9, 4.0, 9.0, 9.5]) == "1.20-9.00x"


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
