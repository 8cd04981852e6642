"""The benchmark script reads valgrind's instruction count (benchmarks/run.py --instructions)."""

from __future__ import annotations

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
