"""Many command lines through the console script's own ``run``, each in a child process,
for the price of one interpreter start.

``python -m tests.forked`` reads a JSON list of cases on stdin, imports omniladder once,
and for each case forks a child that arranges its standard streams as the case says (a file,
closed, /dev/full, /dev/null), changes directory and calls ``omniladder.cli.run`` — the
function the ``omniladder`` script and ``python -m omniladder`` call, which ends the child
with ``os._exit``. The parent waits, and prints one JSON result per case: exit status (or
the signal), and what the child wrote on stdout and stderr. A child that runs past its
alarm is killed (SIGALRM) and one that asks for more than a few GiB of memory fails: a
regression reading an endless device or a pipe ends the test instead of the machine.

The driver itself is single-threaded, so forking it is safe (forking pytest's own process,
which runs threads under xdist, would not be). A handful of tests still start real
``python -m omniladder`` processes with closed descriptors, as a shell does
(tests/test_edges_io.py), so the start-up path (Python making ``sys.stdout`` None) is
covered too.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent


class Case(NamedTuple):
    args: Sequence[str]
    cwd: str = str(ROOT)
    stdout: str = "capture"
    stderr: str = "capture"
    stdin: str = "null"
    """``null`` (/dev/null), ``closed``, or a file path to read."""
    timeout: int = 60


class Result(NamedTuple):
    code: int
    """The exit status, or minus the signal that ended the child."""
    stdout: str
    stderr: str
    stdout_bytes: str = ""
    """What the child wrote on stdout, byte for byte, in hexadecimal (``stdout`` is it read
    as UTF-8)."""


def run_cases(cases: Sequence[Case], env: Mapping[str, str] | None = None) -> list[Result]:
    """Run every case in forked children of one driver process, started with ``env`` added
    to the environment (``PYTHONIOENCODING``: every child's streams are the driver's)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "NO_COLOR": "1",
           "TERM": "dumb", **(env or {})}
    done = subprocess.run([sys.executable, "-m", "tests.forked"], cwd=ROOT, env=env,
                          input=json.dumps([case._asdict() for case in cases]),
                          capture_output=True, text=True, check=False,
                          timeout=60 + sum(case.timeout for case in cases))
    assert done.returncode == 0, done.stderr
    return [Result(**found) for found in json.loads(done.stdout)]


# --- the driver ----------------------------------------------------------------------------

_MEMORY = 4 * 1024 ** 3


def _arrange(fd: int, how: str, capture: str) -> None:
    if how == "closed":
        os.close(fd)
        return
    if how == "gone":
        read, write = os.pipe()
        os.close(read)
        os.dup2(write, fd)
        os.close(write)
        return
    target = {"capture": capture, "full": "/dev/full", "null": os.devnull}.get(how, how)
    flags = os.O_RDONLY if fd == 0 else os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    opened = os.open(target, flags, 0o600)
    os.dup2(opened, fd)
    os.close(opened)


def _child(case: dict[str, Any], out: str, err: str) -> None:
    signal.alarm(case["timeout"])
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))
    os.chdir(case["cwd"])
    _arrange(0, case["stdin"], "")
    _arrange(1, case["stdout"], out)
    _arrange(2, case["stderr"], err)
    sys.argv = ["omniladder", *case["args"]]
    from omniladder.cli import run

    run()


def _drive(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Imported once, before the children: each child then pays only for its command.
    for module in ("omniladder.cli", "omniladder.commands.common",
                   "omniladder.inputs.input_set",
                   "omniladder.engine.plan", "omniladder.rendering.table"):
        importlib.import_module(module)

    results = []
    with tempfile.TemporaryDirectory(prefix="omniladder-forked-") as scratch:
        for number, case in enumerate(cases):
            out = os.path.join(scratch, f"{number}.out")
            err = os.path.join(scratch, f"{number}.err")
            pid = os.fork()
            if pid == 0:  # the child never returns: run() ends it
                try:
                    _child(case, out, err)
                finally:
                    os._exit(70)
            _, status = os.waitpid(pid, 0)
            results.append({"code": os.waitstatus_to_exitcode(status),
                            "stdout": _read(out), "stderr": _read(err),
                            "stdout_bytes": _raw(out)})
    return results


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="backslashreplace") as stream:
            return stream.read()
    except FileNotFoundError:
        return ""


def _raw(path: str) -> str:
    try:
        with open(path, "rb") as stream:
            return stream.read().hex()
    except FileNotFoundError:
        return ""


if __name__ == "__main__":
    sys.stdout.write(json.dumps(_drive(json.load(sys.stdin))))
