"""Robustness: whatever the input files hold, a run ends with exit 0, 1 or 2 and one clear
message, never a traceback, and the input files are left byte-identical (SPEC §4.3).

Hypothesis mutates the example fleet's files one kind at a time (connections, quota,
settings, spend, billing and model catalogs) and plans them in-process with typer's
CliRunner; a few runs go through a real subprocess. Crashes found this way are kept below as
plain regression tests.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import EXAMPLES, ROOT

runner = CliRunner()

FILES = ("omniladder.toml", "connections.toml", "quota.json", "spend.json",
         "billing-overlay.toml", "models-overlay.toml")
MODELS_OVERLAY = {"models": [
    {"provider": "acme", "model": "acme-1", "input_usd_per_mtok": 0.5,
     "output_usd_per_mtok": 1.5, "categories": ["coding"], "as_of": "2026-11-01"},
]}


def example_documents() -> dict[str, Any]:
    """The example fleet as plain data, with a model catalog overlay added."""
    docs: dict[str, Any] = {}
    for name in FILES[:-1]:
        text = (EXAMPLES / name).read_text(encoding="utf-8")
        docs[name] = tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
    docs["omniladder.toml"]["catalogs"]["models"] = ["models-overlay.toml"]
    docs["models-overlay.toml"] = json.loads(json.dumps(MODELS_OVERLAY))
    return docs


def serialise(name: str, document: Any) -> bytes:
    if isinstance(document, bytes):
        return document
    if name.endswith(".json"):
        return json.dumps(document, default=str).encode()
    try:
        return tomli_w.dumps(document).encode()
    except (TypeError, ValueError):  # TOML has no null and no top-level array
        return json.dumps(document, default=str).encode()


def digest(folder: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.iterdir())}


@contextmanager
def fleet(documents: dict[str, Any]) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="omniladder-fuzz-") as scratch:
        folder = Path(scratch)
        for name, document in documents.items():
            (folder / name).write_bytes(serialise(name, document))
        yield folder


def plan_in_process(folder: Path, *extra: str) -> str:
    """Plan the fleet in ``folder``; check the run ended cleanly; return all its output."""
    before = digest(folder)
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(folder / "omniladder.toml"), "--json", *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.output, result.exception)
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert result.stderr.startswith("omniladder: error: "), result.output
        assert result.stdout == ""
    else:
        json.loads(result.stdout)
    assert digest(folder) == before
    return result.output


def plan_in_subprocess(folder: Path, *extra: str) -> str:
    before = digest(folder)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "omniladder", "plan", "auto/thrifty", "--config",
         str(folder / "omniladder.toml"), "--json", *extra],
        capture_output=True, text=True, env=env, check=False)
    assert done.returncode in (0, 1, 2), done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert digest(folder) == before
    return done.stdout + done.stderr


# --- crashes found by fuzzing, kept as regression tests -----------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(("name", "content"), [
    ("quota.json", ('{"readings": ' + nested(900) + "}").encode()),
    ("connections.toml", ("connections = " + nested(900) + "\n").encode()),
    ("connections.toml", ("x = " + "{a = " * 400 + "1" + "}" * 400 + "\n").encode()),
], ids=["json-array", "toml-array", "toml-inline-table"])
def test_deeply_nested_file_is_an_input_error(name: str, content: bytes) -> None:
    documents: dict[str, Any] = example_documents()
    documents[name] = content
    with fleet(documents) as folder:
        output = plan_in_process(folder)
        assert "nested too deeply" in output
        assert "nested too deeply" in plan_in_subprocess(folder)


# --- mutation fuzzing ---------------------------------------------------------------------

KEYS = ("id", "provider", "auth_type", "models", "active", "status", "rate_limited_until",
        "overage", "billing", "connection", "checked_at", "windows", "remaining_percent",
        "reset_at", "unlimited", "name", "at", "cost_usd", "model", "rung", "taken_at",
        "period", "rung_budget_usd", "cheap", "premium", "exit_cutoff_percent", "entries",
        "input_usd_per_mtok", "categories", "tier", "inputs", "quota", "connections", "")
INSTANTS = ("2026-11-29T12:00:00Z", "2026-11-29T12:00:00", "0001-01-01T00:00:00+14:00",
            "0001-01-01T00:00:00-14:00", "9999-12-31T23:59:59-14:00",
            "9999-12-31T23:59:59+14:00", "2026-02-30T00:00:00Z", "now", "")
scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats() | st.text(max_size=12) | st.sampled_from(INSTANTS)
           | st.sampled_from(KEYS) | st.sampled_from(("subscription", "metered", "oauth",
                                                       "none", "hard-stop", "premium")))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner,
                                        max_size=3), max_leaves=6)


def containers(document: Any) -> list[Any]:
    """Every dict and list in the document, outermost first."""
    found = [document]
    items = document.values() if isinstance(document, dict) else document
    for item in items:
        if isinstance(item, dict | list):
            found += containers(item)
    return found


TIME_KEYS = ("checked_at", "reset_at", "taken_at", "at", "rate_limited_until", "reviewed",
             "as_of")


def retime(data: st.DataObject, document: Any) -> None:
    """Move one timestamp of the document to an odd instant (the ends of the calendar)."""
    slots = [(c, key) for c in containers(document) if isinstance(c, dict)
             for key in c if key in TIME_KEYS]
    if slots:
        target, key = data.draw(st.sampled_from(slots))
        target[key] = data.draw(st.sampled_from(INSTANTS))


def mutate(data: st.DataObject, document: Any, rounds: int) -> None:
    if data.draw(st.booleans()):
        retime(data, document)
    for _ in range(rounds):
        target = data.draw(st.sampled_from(containers(document)))
        value = data.draw(values)
        if isinstance(target, dict):
            action = data.draw(st.sampled_from(("set", "delete", "add")))
            if action == "add" or not target:
                target[data.draw(st.sampled_from(KEYS) | st.text(max_size=6))] = value
            else:
                key = data.draw(st.sampled_from(sorted(target)))
                if action == "delete":
                    del target[key]
                else:
                    target[key] = value
        else:
            action = data.draw(st.sampled_from(("set", "delete", "append", "duplicate")))
            if action == "append" or not target:
                target.append(value)
            else:
                index = data.draw(st.integers(0, len(target) - 1))
                if action == "delete":
                    del target[index]
                elif action == "duplicate":
                    target.append(json.loads(json.dumps(target[index], default=str)))
                else:
                    target[index] = value


def fuzz_settings(examples: int) -> Callable[[Any], Any]:
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("name", FILES)
@fuzz_settings(100)
@given(data=st.data())
def test_mutated_file_never_crashes(name: str, data: st.DataObject) -> None:
    documents = example_documents()
    mutate(data, documents[name], data.draw(st.integers(0, 4)))
    with fleet(documents) as folder:
        plan_in_process(folder)


@pytest.mark.parametrize("name", FILES)
@fuzz_settings(40)
@given(content=st.binary(max_size=200) | st.text(max_size=200).map(str.encode)
       | values.map(lambda v: json.dumps(v, default=str).encode()))
def test_random_file_never_crashes(name: str, content: bytes) -> None:
    documents: dict[str, Any] = example_documents()
    documents[name] = content
    with fleet(documents) as folder:
        plan_in_process(folder)


@fuzz_settings(60)
@given(now=st.sampled_from(INSTANTS) | st.text(max_size=30),
       auto_id=st.sampled_from(("auto/thrifty", "auto/subscription", "auto/coding:thrifty",
                                "auto/vision:subscription")))
def test_any_now_and_auto_id_never_crash(now: str, auto_id: str) -> None:
    with fleet(example_documents()) as folder:
        before = digest(folder)
        result = runner.invoke(app, ["plan", auto_id, "--config",
                                     str(folder / "omniladder.toml"), "--now", now])
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.exit_code in (0, 2), result.output
        assert "Traceback" not in result.output
        assert digest(folder) == before


@pytest.mark.parametrize("name", FILES)
@fuzz_settings(3)
@given(data=st.data())
def test_mutated_file_in_a_subprocess(name: str, data: st.DataObject) -> None:
    documents = example_documents()
    mutate(data, documents[name], 3)
    with fleet(documents) as folder:
        plan_in_subprocess(folder)


# --- secrets ------------------------------------------------------------------------------

SECRET_KEYS = ("api_key", "access_token", "refresh_token", "token", "password", "cookie",
               "secret", "client_secret", "authorization", "API_KEY", " Token ")


@pytest.mark.parametrize("name", FILES)
@fuzz_settings(40)
@given(data=st.data())
def test_secret_canaries_are_never_shown(name: str, data: st.DataObject) -> None:
    """A value under a secret-looking key, anywhere in any file, never reaches an output."""
    canary = "sk-CANARY-" + data.draw(st.text("abcdef0123456789", min_size=8, max_size=8))
    documents = example_documents()
    mutate(data, documents[name], data.draw(st.integers(0, 2)))
    dicts = [c for c in containers(documents[name]) if isinstance(c, dict)]
    target = data.draw(st.sampled_from(dicts))
    target[data.draw(st.sampled_from(SECRET_KEYS))] = data.draw(
        st.sampled_from([canary, {"value": canary}, [canary]]))
    with fleet(documents) as folder:
        written = set(digest(folder))
        output = plan_in_process(folder)
        for extra in (("--detail",), ()):
            result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                         str(folder / "omniladder.toml"), *extra])
            output += result.output
        assert canary not in output
        assert "sk-CANARY" not in output
        assert set(digest(folder)) == written  # nothing new was written beside the inputs


# --- the edges of the command line (issue 10): every input path, option and pipe ---------

CONFIG = str(EXAMPLES / "omniladder.toml")
POLICY = str(EXAMPLES / "policy.toml")
PLAN_ARGS = ["plan", "auto/thrifty", "--config", CONFIG]
CANDIDATES = str(EXAMPLES / "omniroute-candidates.json")


def edge_commands(bad: str) -> dict[str, list[str]]:
    """Every command and option that reads an input file, with ``bad`` as that file."""
    importing = ["--connection", "claude-max-work", "--force", "--connections",
                 str(EXAMPLES / "connections.toml"), "--quota"]  # --force: any source
    return {
        "plan --config": ["plan", "auto/thrifty", "--config", bad],
        "plan --connections": [*PLAN_ARGS, "--connections", bad],
        "plan --quota": [*PLAN_ARGS, "--quota", bad],
        "plan --spend": [*PLAN_ARGS, "--spend", bad],
        "plan --catalog": [*PLAN_ARGS, "--catalog", bad],
        "plan --models-catalog": [*PLAN_ARGS, "--models-catalog", bad],
        "plan --compare": [*PLAN_ARGS, "--compare", bad],
        "check POLICY": ["check", bad],
        "check --connections": ["check", POLICY, "--connections", bad],
        "diff OLD": ["diff", bad, bad],
        "audit omniroute CANDIDATES": ["audit", "omniroute", bad, "--config", CONFIG],
        "audit omniroute --quota": ["audit", "omniroute", CANDIDATES, "--config", CONFIG,
                                    "--quota", bad],
        "show PLAN": ["show", bad],
        "why --quota": ["why", "claude-max-work", "--config", CONFIG, "--quota", bad],
        "who --quota": ["who", "claude/claude-sonnet-4-5", "--config", CONFIG, "--quota", bad],
        "simulate --spend": ["simulate", "auto/thrifty", "--config", CONFIG, "--from",
                             "2026-11-29T11:00:00Z", "--to", "2026-11-29T12:00:00Z",
                             "--spend", bad],
        "catalog show --catalog": ["catalog", "show", "--catalog", bad],
        "catalog check --windows-catalog": ["catalog", "check", "--windows-catalog", bad],
        "catalog check --baseline": ["catalog", "check", "--baseline", bad],
        "import omniroute DB": ["import", "omniroute", bad, "--out", bad + "-out"],
        "import claude-usage FILE": ["import", "claude-usage", bad, *importing, "q.json"],
        "import codex-sessions PATH": ["import", "codex-sessions", bad, *importing, "q.json"],
        "import copilot-user FILE": ["import", "copilot-user", bad, *importing, "q.json"],
        "import gemini-quota FILE": ["import", "gemini-quota", bad, *importing, "q.json"],
    }


def one_error(result: Any, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception)
    assert "Traceback" not in result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("omniladder: error: "), line
    for fragment in fragments:
        assert fragment in line, line


@pytest.mark.parametrize("option", list(edge_commands("x")))
def test_a_symlink_loop_is_named_for_every_input(option: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loop.json").symlink_to("loop.json")
    result = runner.invoke(app, edge_commands("loop.json")[option])
    one_error(result, "loop.json", "symlink loop")


@pytest.mark.parametrize("option", list(edge_commands("x")))
def test_a_directory_is_named_for_every_input(option: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    result = runner.invoke(app, edge_commands("folder")[option])
    if option == "import codex-sessions PATH":  # a folder is searched for rollouts
        one_error(result, "folder", "rollout-")
    else:
        one_error(result, "folder", "directory")


@pytest.mark.parametrize("name", ["connections.toml", "quota.json", "omniladder.toml"])
def test_a_byte_order_mark_is_accepted(name: str) -> None:
    documents = example_documents()
    documents[name] = b"\xef\xbb\xbf" + serialise(name, documents[name])
    with fleet(documents) as folder:
        result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                     str(folder / "omniladder.toml"), "--json"])
        assert result.exit_code == 0, result.output


HUGE = ("99999999999999h", "9" * 30 + "d", "inf", "nan", "-inf", "1e309", "-1")
NUMERIC_OPTIONS: dict[str, Callable[[str], list[str]]] = {
    "simulate --step": lambda v: ["simulate", "auto/thrifty", "--config", CONFIG, "--from",
                                  "2026-11-29T11:00:00Z", "--to", "2026-11-29T12:00:00Z",
                                  "--step", v],
    "import omniroute --since": lambda v: ["import", "omniroute", "absent.db", "--out", "o",
                                           "--since", v],
    "import omniroute --group-seconds": lambda v: ["import", "omniroute", "absent.db",
                                                   "--out", "o", f"--group-seconds={v}"],
    "catalog check --max-age-days": lambda v: ["catalog", "check", f"--max-age-days={v}"],
    "plan --now": lambda v: [*PLAN_ARGS, "--now", v],
    "audit omniroute --now": lambda v: ["audit", "omniroute", CANDIDATES, "--config", CONFIG,
                                        "--now", v],
    "who --now": lambda v: ["who", "claude/claude-sonnet-4-5", "--config", CONFIG, "--now", v],
    "simulate --from": lambda v: ["simulate", "auto/thrifty", "--config", CONFIG, "--from",
                                  v, "--to", "2026-11-29T12:00:00Z"],
    "import omniroute --now": lambda v: ["import", "omniroute", "absent.db", "--out", "o",
                                         "--now", v],
    "import omniroute --confirmed-at": lambda v: ["import", "omniroute", "absent.db", "--out",
                                                  "o", "--confirmed-at", v],
    "import claude-usage --at": lambda v: ["import", "claude-usage", "-", "--connection", "x",
                                           "--at", v],
}


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("option", list(NUMERIC_OPTIONS))
def test_huge_and_non_finite_numbers_are_usage_errors(option: str, value: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, NUMERIC_OPTIONS[option](value), input="")
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception)
    assert result.exit_code in (1, 2), result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("args", "says"), [
    (["simulate", "auto/thrifty", "--config", CONFIG, "--from", "2026-11-29T11:00:00Z",
      "--to", "2026-11-29T12:00:00Z", "--step", "99999999999999h"], "--step"),
    (["import", "omniroute", "absent.db", "--out", "o", "--since", "999999d"], "--since"),
    (["import", "omniroute", "absent.db", "--out", "o", "--group-seconds", "inf"],
     "--group-seconds"),
    (["import", "omniroute", "absent.db", "--out", "o", "--group-seconds", "nan"],
     "--group-seconds"),
], ids=["step", "since", "group-inf", "group-nan"])
def test_numbers_beyond_the_clock_name_their_option(args: list[str], says: str) -> None:
    one_error(runner.invoke(app, args), says)


def run_closing_stdout(args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run omniladder with a stdout pipe whose reader has already gone."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "omniladder", *args], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                              check=False)
    finally:
        os.close(write)


def expected_code(args: list[str], cwd: Path = ROOT) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "omniladder", *args], capture_output=True,
                          env=env, cwd=cwd, check=False).returncode


CLOSED_STDOUT = {
    "plan": PLAN_ARGS,
    "plan --json": [*PLAN_ARGS, "--json"],
    "plan --fail-on-empty": ["plan", "auto/subscription", "--config", CONFIG,
                             "--no-shipped-catalogs", "--fail-on-empty"],
    "ids": ["ids"],
    "why": ["why", "claude-max-work", "--config", CONFIG],
    "who": ["who", "claude/claude-sonnet-4-5", "--config", CONFIG],
    "who --json": ["who", "claude/claude-sonnet-4-5", "--config", CONFIG, "--json"],
    "simulate": ["simulate", "auto/thrifty", "--config", CONFIG, "--from",
                 "2026-11-29T11:00:00Z", "--to", "2026-11-29T12:00:00Z"],
    "forecast": ["forecast", "auto/thrifty", "--config", CONFIG, "--horizon", "2h"],
    "check": ["check", POLICY],
    "audit omniroute": ["audit", "omniroute", CANDIDATES, "--config", CONFIG],
    "audit omniroute --json": ["audit", "omniroute", CANDIDATES, "--config", CONFIG, "--json"],
    "diff": ["diff", str(EXAMPLES / "ci" / "plan-thrifty.json"),
             str(EXAMPLES / "ci" / "plan-thrifty.json")],
    "diff --format markdown": ["diff", str(EXAMPLES / "ci" / "plan-thrifty.json"),
                               str(EXAMPLES / "ci" / "plan-thrifty.json"), "--format",
                               "markdown"],
    "show": ["show", str(EXAMPLES / "ci" / "plan-thrifty.json")],
    "show --json": ["show", str(EXAMPLES / "ci" / "plan-thrifty.json"), "--json"],
    "plan --format markdown": [*PLAN_ARGS, "--format", "markdown"],
    "check --format markdown": ["check", POLICY, "--format", "markdown"],
    "catalog show": ["catalog", "show"],
    "catalog check": ["catalog", "check", "--today", "2026-11-29"],
    "schema": ["schema", "connections"],
    "completion": ["completion", "bash"],
    "help": ["--help"],
    "help -h": ["catalog", "check", "-h"],
    "export": ["export", "litellm", "auto/thrifty", "--config", CONFIG, "--map",
               str(EXAMPLES / "litellm-map.toml")],
    "export --json": ["export", "omniroute", "auto/thrifty", "--config", CONFIG, "--json"],
}


@pytest.mark.parametrize("name", list(CLOSED_STDOUT))
def test_a_closed_stdout_keeps_the_answer(name: str) -> None:
    """Like ripgrep: no traceback, nothing on stderr, the exit code of the answer."""
    args = CLOSED_STDOUT[name]
    done = run_closing_stdout(args)
    assert "Traceback" not in done.stderr
    assert "Broken pipe" not in done.stderr
    assert "BrokenPipe" not in done.stderr
    assert done.returncode == expected_code(args), done.stderr
    if done.returncode == 0:
        assert "error" not in done.stderr


def test_a_closed_stdout_still_writes_the_junit_report(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    done = run_closing_stdout(["check", POLICY, "--junit", str(report)])
    assert done.returncode == 0, done.stderr
    assert report.read_text(encoding="utf-8").startswith("<?xml")


SOURCE_FIXTURES = ROOT / "tests" / "fixtures" / "sources"
IMPORTS = {
    "import claude-usage": ("claude/usage.json", "claude-max-work"),
    "import codex-sessions": ("codex", "codex-plus"),
    "import copilot-user": ("copilot/user.json", "copilot-seat"),
    "import gemini-quota": ("gemini/quota.json", "gemini-free"),
}


def writing_commands(tmp_path: Path) -> dict[str, tuple[list[str], Path]]:
    """The commands whose work is a file: each command line, and the file it must write."""
    from tests.omniroute_db import build_db

    db = build_db(tmp_path / "omniroute.db")
    found = {
        "init": (["init", str(tmp_path / "starter")], tmp_path / "starter" / "omniladder.toml"),
        "import omniroute": (["import", "omniroute", str(db), "--out", str(tmp_path / "fleet")],
                             tmp_path / "fleet" / "quota.json"),
    }
    pruned = tmp_path / "pruned.json"
    pruned.write_bytes((EXAMPLES / "quota.json").read_bytes())
    found["quota prune"] = (["quota", "prune", "--before", "2026-11-29T11:00:00Z", "--quota",
                             str(pruned)], pruned)
    for name, (fixture, connection) in IMPORTS.items():
        quota = tmp_path / f"{name.split()[1]}.json"
        found[name] = ([*name.split(), str(SOURCE_FIXTURES / fixture), "--connection",
                        connection, "--connections", str(EXAMPLES / "connections.toml"),
                        "--quota", str(quota)], quota)
    return found


@pytest.mark.parametrize("name", ["init", "import omniroute", "quota prune", *IMPORTS])
def test_a_closed_stdout_still_writes_the_files(name: str, tmp_path: Path) -> None:
    """A command whose answer is a file writes it whole and exits 0 when stdout is gone."""
    args, written = writing_commands(tmp_path)[name]
    done = run_closing_stdout(args)
    assert "Traceback" not in done.stderr
    assert "Broken" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert written.stat().st_size > 0


def test_every_command_meets_a_closed_stdout(tmp_path: Path) -> None:
    """Each command path of the application has a closed-stdout case above."""
    from tests.test_meta import command_paths

    paths = {" ".join(path) for path in command_paths()}
    covered = {" ".join(args[:2]) if args[0] in {"catalog", "audit", "import"} else args[0]
               for args in CLOSED_STDOUT.values() if not args[0].startswith("-")}
    covered |= set(writing_commands(tmp_path))
    assert paths <= covered, sorted(paths - covered)
