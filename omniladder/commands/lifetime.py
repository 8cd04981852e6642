"""The end of the process: what a command keeps until it exits, and how it exits.

A plan of a large fleet is millions of small objects. Freeing them one by one when a
command returns, and again when the interpreter tears its modules down, costs a sixth of
the run at 100,000 connections (1.6 s of 9.5 s measured). The console script therefore
keeps the inputs and the plans a command ``hold``\\ s, flushes its streams, and leaves with
``os._exit``, which returns the memory to the system at once; mypy ends its runs the same
way (``mypy/util.py``, ``hard_exit``). omniladder writes its files explicitly and registers
no exit handlers, so nothing is lost. Called in-process (the tests), ``main`` keeps nothing.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import NoReturn

_held: list[object] | None = None


def keep_until_exit() -> None:
    """From now on, ``hold`` keeps what it is given until the process exits."""
    global _held
    _held = []


def hold(*objects: object) -> None:
    """Keep ``objects`` alive until exit, when the console script is running."""
    if _held is not None:
        _held.extend(objects)


def exit_status(code: object) -> int:
    """The status ``SystemExit(code)`` ends a process with, as the interpreter decides it:
    None is 0, an int is itself, anything else is printed to stderr and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    if sys.stderr is not None:  # None: Python found it closed, and no one replaced it
        _flushed(sys.stderr.write, f"{code}\n")
    return 1


SLOW_EXIT_VARIABLE = "OMNILADDER_SLOW_EXIT"
"""Set to a non-empty value, the console script ends as any Python program does."""


def fast_exit_wanted() -> bool:
    """The fast exit skips the interpreter's teardown, and with it what a profiler or a
    coverage tool writes at exit (``python -m cProfile -o out.prof -m omniladder …``,
    ``coverage run -m omniladder …``): switched off while one runs, or by
    ``OMNILADDER_SLOW_EXIT``."""
    if os.environ.get(SLOW_EXIT_VARIABLE):
        return False
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return False
    return not any(name in sys.modules for name in ("coverage", "cProfile", "profile"))


def hard_exit(status: int) -> NoReturn:
    """Flush standard output and error, then end the process without tearing it down
    (or, when ``fast_exit_wanted`` says no, as any Python program ends)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            _flushed(stream.flush)
    if not fast_exit_wanted():
        raise SystemExit(status & 0xFF)
    os._exit(status & 0xFF)


def _flushed(call: Callable[..., object], *args: object) -> None:
    # a closed or broken stream: there is no one left to tell
    with contextlib.suppress(OSError, ValueError):
        call(*args)
