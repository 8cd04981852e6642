"""The console script's exit: every byte written, the status main's SystemExit carries,
and nothing kept when main runs in-process.

``python -m omniladder`` and the ``omniladder`` script end with os._exit after flushing
(omniladder.commands.lifetime); these run them in a child process, as operators do.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.commands import lifetime
from tests.conftest import EXAMPLES, ROOT

SETTINGS = str(EXAMPLES / "omniladder.toml")


def child(*args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "omniladder", *args], env=env, cwd=ROOT,
                          stdout=stdout, stderr=subprocess.PIPE, text=True, check=False)


def test_a_large_document_reaches_a_pipe_whole_before_the_process_ends(
        tmp_path: Path) -> None:
    generated = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fleet.py"), str(tmp_path / "fleet"),
         "--connections", "400", "--seed", "3", "--connections-format", "json"],
        capture_output=True, text=True, check=True)
    settings = generated.stdout.strip()
    done = child("plan", "auto/thrifty", "--config", settings, "--json")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) > 256 * 1024  # four times a pipe's 64 KiB buffer, and more
    in_process = CliRunner().invoke(app, ["plan", "auto/thrifty", "--config", settings,
                                          "--json"])
    assert done.stdout == in_process.stdout
    assert len(json.loads(done.stdout)["connections"]) == 400


def test_a_file_redirect_gets_every_byte_too(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    with out.open("w") as handle:
        done = child("plan", "auto/thrifty", "--config", SETTINGS, "--json",
                     stdout=handle.fileno())
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["auto_id"] == "auto/thrifty"


@pytest.mark.parametrize(("args", "status"), [
    (("plan", "auto/thrifty", "--config", SETTINGS), 0),
    (("plan", "auto/thrifty", "--config", SETTINGS, "--fail-on-empty",
      "--now", "2030-01-01T00:00:00Z"), None),
    (("plan", "auto/nonsense", "--config", SETTINGS), 2),
    (("plan", "auto/subscription", "--config", SETTINGS, "--fail-on-empty", "--now",
      "2026-11-29T12:00:00Z", "--connections", str(EXAMPLES / "connections.toml"),
      "--quota", str(EXAMPLES / "quota.json")), None),
    (("--version",), 0),
    (("no-such-command",), 2),
])
def test_the_exit_status_is_the_one_main_raises(args: tuple[str, ...],
                                                status: int | None) -> None:
    done = child(*args)
    if status is None:  # whatever main says in-process
        status = CliRunner().invoke(app, list(args)).exit_code
    assert done.returncode == status, done.stderr


def test_an_error_message_is_flushed_before_the_exit() -> None:
    done = child("plan", "auto/nonsense", "--config", SETTINGS)
    assert done.returncode == 2
    assert done.stderr.startswith("omniladder: error: AUTO_ID: invalid auto id 'auto/nonsense'")
    assert done.stderr.endswith("\n")


@pytest.mark.parametrize(("code", "status", "said"), [
    (None, 0, ""), (0, 0, ""), (1, 1, ""), (2, 2, ""), ("stopped", 1, "stopped\n")])
def test_exit_status_reads_a_system_exit_as_the_interpreter_does(
        code: object, status: int, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert lifetime.exit_status(code) == status
    assert capsys.readouterr().err == said
    interpreter = subprocess.run([sys.executable, "-c", f"raise SystemExit({code!r})"],
                                 capture_output=True, text=True, check=False)
    assert interpreter.returncode == status
    assert interpreter.stderr == said


def test_in_process_nothing_is_held() -> None:
    assert lifetime._held is None
    result = CliRunner().invoke(app, ["plan", "auto/thrifty", "--config", SETTINGS, "--json"])
    assert result.exit_code == 0, result.output
    assert lifetime._held is None
    lifetime.hold(object())  # a no-op until keep_until_exit
    assert lifetime._held is None


def test_the_console_script_and_python_m_both_end_through_run() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"omniladder": "omniladder.cli:run"}
    assert "run()" in (ROOT / "omniladder" / "__main__.py").read_text()


# --- the fast exit steps aside for profilers, coverage and OMNILADDER_SLOW_EXIT -------------

_WITH_EXIT_HANDLER = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('exit handler ran\\n'))\n"
    "sys.argv = ['omniladder', 'check', sys.argv[1], '--config', sys.argv[2]]\n"
    "from omniladder.cli import run\n"
    "run()\n")


@pytest.mark.parametrize(("variable", "handler_runs"), [("", False), ("1", True)])
def test_slow_exit_variable_lets_the_interpreter_end_as_usual(variable: str,
                                                              handler_runs: bool) -> None:
    """The fast exit skips exit handlers; OMNILADDER_SLOW_EXIT ends as any program does,
    with the same exit status (1: the failing example policy says no)."""
    env = {**os.environ, "NO_COLOR": "1", lifetime.SLOW_EXIT_VARIABLE: variable}
    done = subprocess.run(
        [sys.executable, "-c", _WITH_EXIT_HANDLER, str(EXAMPLES / "policy-failing.toml"),
         str(EXAMPLES / "omniladder.toml")],
        env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert ("exit handler ran" in done.stderr) is handler_runs


def test_a_profile_is_written_under_cprofile(tmp_path: Path) -> None:
    """`python -m cProfile -o FILE -m omniladder …` writes its profile: the fast exit would
    end the process before cProfile saves it."""
    out = tmp_path / "out.prof"
    env = {k: v for k, v in os.environ.items() if k != lifetime.SLOW_EXIT_VARIABLE}
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m",
                           "omniladder", "ids"], env=env, cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0


def test_sigterm_while_writing_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A terminated run (SIGTERM) removes the output it was writing, as Ctrl-C does, and
    exits 143: no ``.plan.json.*.tmp`` is left beside the target, and no target is made.
    The child holds its write open (its fsync waits) until the signal arrives."""
    out = tmp_path / "plan.json"
    script = (
        "import os, sys, time\n"
        "ready, settings, out = sys.argv[1:]\n"
        "def held(fd):\n"
        "    open(ready, 'w').close()\n"
        "    time.sleep(60)\n"
        "os.fsync = held\n"
        "from omniladder.cli import main\n"
        "sys.argv = ['omniladder', 'plan', 'auto/thrifty', '--config', settings,\n"
        "            '--out', out]\n"
        "main()\n")
    ready = tmp_path / "writing"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", script, str(ready), SETTINGS, str(out)],
                               env=env, cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if ready.exists() or process.poll() is not None:
                break
            time.sleep(0.05)
        assert ready.exists(), process.communicate(timeout=5)
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["writing"]
