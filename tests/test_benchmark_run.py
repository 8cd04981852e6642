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
