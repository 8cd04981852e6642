"""Robustness: whatever the input files hold, a run ends with exit 0, 1 or 2 and one clear
message, never a traceback, and the input files are left byte-identical (SPEC §4.3).

Hypothesis mutates the example fleet's files one kind at a time (connections, quota,
settings, spend, billing and model catalogs) and plans them in-process with typer's
CliRunner; a few runs go through a real subprocess. Crashes found this way are kept below as
plain regression tests. The last section holds the promises at the process edges (README)
on every command path: outputs onto inputs, closed and failing standard streams, text that
cannot be printed, and devices and pipes as inputs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
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
from omniladder.inputs.credentials import KEY_PREFIXES, key_kind
from tests import strategies
from tests.conftest import EXAMPLES, ROOT
from tests.errors import ERROR_PREFIX, one_error

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
        assert result.stderr.startswith(ERROR_PREFIX), result.output
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


@pytest.mark.slow
@pytest.mark.parametrize("name", FILES)
@fuzz_settings(100)
@given(data=st.data())
def test_mutated_file_never_crashes(name: str, data: st.DataObject) -> None:
    documents = example_documents()
    mutate(data, documents[name], data.draw(st.integers(0, 4)))
    with fleet(documents) as folder:
        plan_in_process(folder)


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --- the edges of the command line: every input path, option and pipe ---------

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
    "audit traffic": ["audit", "traffic", "auto/thrifty", "--config", CONFIG, "--traffic",
                      str(ROOT / "examples" / "traffic.jsonl")],
    "whatif": ["whatif", "auto/thrifty", "--config",
               str(ROOT / "examples" / "whatif" / "omniladder.toml"), "--no-bound"],
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
    found["quota prune"] = (["quota", "prune", "--before", "2026-11-29T11:00:00Z", "--all",
                             "--quota", str(pruned)], pruned)
    ledger = tmp_path / "traffic.jsonl"
    spend_logs = SOURCE_FIXTURES / "litellm" / "spend-logs-payload-e2e.json"
    found["import litellm-spend"] = (["import", "litellm-spend", str(spend_logs), "--traffic",
                                      str(ledger), "--since", "all"], ledger)
    for name, (fixture, connection) in IMPORTS.items():
        quota = tmp_path / f"{name.split()[1]}.json"
        # --force: the example fleet's Gemini connection is an API key, which carries no
        # Code Assist quota (the fit check refuses it unforced)
        found[name] = ([*name.split(), str(SOURCE_FIXTURES / fixture), "--connection",
                        connection, "--connections", str(EXAMPLES / "connections.toml"),
                        "--quota", str(quota), "--force"], quota)
    return found


def test_every_command_meets_a_closed_stdout(tmp_path: Path) -> None:
    """Each command path of the application has a closed-stdout case above."""
    from tests.test_meta import command_paths

    paths = {" ".join(path) for path in command_paths()}
    covered = {" ".join(args[:2]) if args[0] in {"catalog", "audit", "import"} else args[0]
               for args in CLOSED_STDOUT.values() if not args[0].startswith("-")}
    covered |= set(writing_commands(tmp_path))
    assert paths <= covered, sorted(paths - covered)


# --- the process edges (docs/contract.md#edges) ---------------------------------------------
# Every command path with stdout closed, stdout on a full disk and stderr closed (every output
# option pointed at every file its run reads is tests/test_outputs_onto_inputs.py); a lone
# surrogate and control characters in every string field of every input kind; /dev/zero and
# a named pipe as every input path. Runs that could hang or exhaust memory on a regression
# (devices, pipes, closed streams) go through tests/forked.py: one interpreter, a forked child
# per command line, each with an alarm and a memory limit.

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _stream_cases(tmp_path: Path) -> dict[str, tuple[list[str], Path | None]]:
    """Every command path's cases: the command line, and the file it must write, if any."""
    tmp_path.mkdir()
    cases: dict[str, tuple[list[str], Path | None]] = {
        name: (args, None) for name, args in CLOSED_STDOUT.items()}
    for name, (args, written) in writing_commands(tmp_path).items():
        cases[name] = (args, written)
    return cases


@pytest.fixture(scope="session")
def plain_streams(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each stream case run with stdout and stderr captured: what the edges compare with."""
    from tests.forked import Case, run_cases

    cases = _stream_cases(tmp_path_factory.mktemp("streams") / "plain")
    return dict(zip(cases, run_cases([Case(args) for args, _ in cases.values()]),
                    strict=True))


STREAM_EDGES = {
    "stdout closed": ("closed", "capture"),
    "stdout full": ("full", "capture"),
    "stdout reader gone": ("gone", "capture"),
    "stderr closed": ("capture", "closed"),
}
"""(stdout, stderr) of each edge, as tests/forked.py arranges them."""


@pytest.mark.slow
@pytest.mark.parametrize("edge", list(STREAM_EDGES))
def test_every_command_keeps_its_exit_code_at_the_stream_edges(
        edge: str, tmp_path: Path, plain_streams: dict[str, Any]) -> None:
    """Like ripgrep, a closed stdout or a reader gone is no error: the answer's exit code,
    nothing on stderr; stdout on a full disk is exit 2 with one error line when there was
    anything to write; a closed stderr changes no exit code. Files are written whole
    whatever happens to the streams."""
    from tests.forked import Case, run_cases
    from tests.test_meta import command_paths

    cases = _stream_cases(tmp_path / "edged")
    assert {" ".join(p) for p in command_paths()} <= {
        " ".join(args[:2]) if args[0] in {"catalog", "audit", "import", "quota"} else args[0]
        for args, _ in cases.values() if not args[0].startswith("-")}
    out, err = STREAM_EDGES[edge]
    results = run_cases([Case(args, stdout=out, stderr=err) for args, _ in cases.values()])
    failures = []
    for (name, (_, written)), after in zip(cases.items(), results, strict=True):
        before = plain_streams[name]
        full = edge == "stdout full" and before.stdout != ""
        expected = 2 if full else before.code
        problems = []
        if after.code != expected:
            problems.append(f"exit {after.code}, expected {expected}")
        if "Traceback" in after.stderr or "Broken" in after.stderr:
            problems.append(f"stderr {after.stderr!r}")
        if full:
            said = [line for line in after.stderr.splitlines()
                    if line.startswith("omniladder: error:")]
            if said != ["omniladder: error: standard output: No space left on device"]:
                problems.append(f"stderr {after.stderr!r}")
        elif edge != "stderr closed" and (
                after.stderr != before.stderr if written is None  # paths differ otherwise
                else "error" in after.stderr):
            problems.append(f"stderr {after.stderr!r}, expected {before.stderr!r}")
        if written is not None and not (written.is_file() and written.stat().st_size > 0):
            problems.append(f"{written.name} not written")
        if problems:
            failures.append(f"{name}: {'; '.join(problems)}")
    assert not failures, "\n".join(failures)


@pytest.mark.slow  # tests/test_edges_io.py keeps a device and a pipe in the default run
@pytest.mark.parametrize("bad", ["/dev/zero", "pipe.json"])
def test_a_device_or_a_named_pipe_as_any_input_is_one_clear_error(bad: str,
                                                                  tmp_path: Path) -> None:
    from tests.forked import Case, run_cases

    os.mkfifo(tmp_path / "pipe.json")
    commands = edge_commands(bad)
    results = run_cases([Case(args, cwd=str(tmp_path), timeout=20)
                         for args in commands.values()])
    failures = []
    for name, result in zip(commands, results, strict=True):
        lines = result.stderr.splitlines()
        if (result.code != 2 or result.stdout or len(lines) != 1
                or not lines[0].startswith(f"omniladder: error: {bad}: is a ")
                or "not a regular file" not in lines[0]):
            failures.append(f"{name}: exit {result.code}: {result.stderr!r}")
    assert not failures, "\n".join(failures)


# Every string field of every input kind: the example fleet as JSON (TOML cannot hold a
# lone surrogate), a saved plan, a gateway candidate list, a policy and a Claude snapshot.


def json_fleet() -> dict[str, Any]:
    """The example fleet, every file as JSON, the settings naming them."""
    documents = {name.rsplit(".", 1)[0] + ".json": document
                 for name, document in example_documents().items()}
    settings = documents["omniladder.json"]
    settings["inputs"] = {"connections": "connections.json", "quota": "quota.json",
                          "spend": "spend.json"}
    settings["catalogs"]["billing"] = ["billing-overlay.json"]
    settings["catalogs"]["models"] = ["models-overlay.json"]
    found: dict[str, Any] = json.loads(json.dumps(documents, default=str))
    return found


def string_fields(document: Any) -> dict[str, tuple[str | int, ...]]:
    """The first place of each string field of a document, by its path with indices
    blanked (``connections[].models[]``)."""
    found: dict[str, tuple[str | int, ...]] = {}
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), document)]
    while stack:
        path, value = stack.pop(0)
        if isinstance(value, str):
            pattern = "".join(f"[{'' if isinstance(p, int) else p}]" for p in path)
            found.setdefault(pattern, path)
        elif isinstance(value, dict):
            stack += [((*path, key), item) for key, item in value.items()]
        elif isinstance(value, list):
            stack += [((*path, index), item) for index, item in enumerate(value)]
    return found


def with_text(document: Any, path: tuple[str | int, ...], extra: str) -> Any:
    changed = json.loads(json.dumps(document))
    target = changed
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] += extra
    return changed


IDENTIFIERS = {
    "connections.json": {"connections.id", "connections.provider", "connections.auth_type",
                         "connections.models"},
    "quota.json": {"readings.connection", "readings.windows.name", "readings.windows.models"},
    "spend.json": {"events.connection", "events.model"},
    "omniladder.json": {"tiers.free_providers"},
    "billing-overlay.json": {"entries.provider", "entries.auth_type"},
    "models-overlay.json": {"models.provider", "models.model"},
}
"""The identifier fields of each input kind: a control character in one is exit 2."""


def _loc(path: tuple[str | int, ...]) -> str:
    from omniladder.inputs.validation import format_loc

    return format_loc(path)


def _bare(path: tuple[str | int, ...]) -> str:
    return ".".join(part for part in path if isinstance(part, str))


def _fleet_cases() -> list[tuple[str, tuple[str | int, ...]]]:
    return [(name, path) for name, document in json_fleet().items()
            for path in string_fields(document).values()]


FLEET_FIELDS = _fleet_cases()


@pytest.mark.parametrize("name", sorted({name for name, _ in FLEET_FIELDS}))
def test_every_string_field_of_the_fleet_refuses_a_lone_surrogate_and_escapes_controls(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    documents = json_fleet()
    plan_args = ["plan", "auto/thrifty", "--config", "omniladder.json", "--detail"]
    failures = []
    for file, path in FLEET_FIELDS:
        if file != name:
            continue
        for extra in ("\ud800", "\x1b[2J\x9b31m"):
            for each, document in documents.items():
                changed = with_text(document, path, extra) if each == file else document
                (tmp_path / each).write_text(json.dumps(changed))
            result = runner.invoke(app, plan_args)
            where = f"{file}: {_loc(path)}"
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                failures.append(f"{where} {extra!r}: {result.exception!r}")
            elif CONTROL.search(result.output):
                failures.append(f"{where} {extra!r}: a raw control character in the output")
            elif extra == "\ud800" and (
                    result.exit_code != 2
                    or f"{where}: contains a lone surrogate (\\ud800)" not in result.stderr):
                failures.append(f"{where}: lone surrogate: {result.output[-300:]!r}")
            elif (extra != "\ud800" and _bare(path) in IDENTIFIERS.get(file, set()) and (
                    result.exit_code != 2
                    or f"{where}: contains a control character" not in result.stderr)):
                failures.append(f"{where}: control character: {result.output[-300:]!r}")
            elif result.exit_code not in (0, 1, 2):
                failures.append(f"{where} {extra!r}: exit {result.exit_code}")
    assert not failures, "\n".join(failures)


def _policy() -> dict[str, Any]:
    """The example policy's first expectation (every kind of check), as JSON."""
    policy = tomllib.loads(POLICY_TEXT)
    return {"config": str(EXAMPLES / "omniladder.toml"), "expect": policy["expect"][:1]}


def _rollout_line() -> dict[str, Any]:
    """The token_count line of the Codex fixture from 2026, whole."""
    for line in ROLLOUT.read_text().splitlines():
        if '"rate_limits":{' in line:
            found: dict[str, Any] = json.loads(line)
            return found
    raise AssertionError(ROLLOUT)


POLICY_TEXT = (EXAMPLES / "policy.toml").read_text()
ROLLOUT = next((SOURCE_FIXTURES / "codex" / "sessions" / "2026").rglob("rollout-*.jsonl"))


def _document_cases() -> dict[str, tuple[Any, str, Callable[[str], list[list[str]]]]]:
    """Documents read whole by one command: the document, the file name to save a changed
    copy under, and the command lines to run on it."""
    config = ["--config", str(EXAMPLES / "omniladder.toml")]
    importing = ["--connections", str(EXAMPLES / "connections.toml"), "--quota", "q.json"]
    return {
        "policy": (_policy(), "doc.json", lambda f: [["check", f]]),
        "codex line": (_rollout_line(), "rollout-1.jsonl", lambda f: [
            ["import", "codex-sessions", f, "--connection", "codex-plus", *importing]]),
        "saved plan": (_json(EXAMPLES / "ci" / "plan-thrifty.json"), "doc.json", lambda f: [
            ["show", f], ["show", f, "--format", "markdown", "--detail"],
            ["diff", str(EXAMPLES / "ci" / "plan-thrifty.json"), f]]),
        "candidate list": (_json(EXAMPLES / "omniroute-candidates.json"), "doc.json", lambda f: [
            ["audit", "omniroute", f, *config], ["audit", "omniroute", f, *config, "--format",
                                                 "markdown"]]),
        "claude snapshot": (_json(SOURCE_FIXTURES / "claude" / "usage.json"), "doc.json",
                            lambda f: [["import", "claude-usage", f, "--connection",
                                        "claude-max-work", *importing, "--at",
                                        "2026-11-29T11:59:30Z"]]),
    }


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.mark.parametrize("kind", list(_document_cases()))
def test_every_string_field_of_a_document_refuses_a_lone_surrogate_and_escapes_controls(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    document, name, commands = _document_cases()[kind]
    failures = []
    for path in string_fields(document).values():
        for extra in ("\ud800", "\x1b[2J\x9b31m"):
            (tmp_path / name).write_text(json.dumps(with_text(document, path, extra)) + "\n")
            for args in commands(name):
                (tmp_path / "q.json").unlink(missing_ok=True)
                result = runner.invoke(app, args)
                where = f"{name}{':1' if name.endswith('.jsonl') else ''}: {_loc(path)}"
                if result.exception is not None and not isinstance(result.exception,
                                                                   SystemExit):
                    failures.append(f"{args[0]} {where} {extra!r}: {result.exception!r}")
                elif CONTROL.search(result.output):
                    failures.append(f"{args[0]} {where} {extra!r}: a raw control character")
                elif extra == "\ud800" and (
                        result.exit_code != 2
                        or f"{where}: contains a lone surrogate" not in result.stderr):
                    failures.append(f"{args[0]} {where}: lone surrogate: {result.output!r}")
                elif result.exit_code not in (0, 1, 2):
                    failures.append(f"{args[0]} {where} {extra!r}: exit {result.exit_code}")
    assert not failures, "\n".join(failures[:20])


# Every key of every input kind and of every importer's payload: a control character or a
# line break in a key is a clean run or one error line, with the key escaped.

HOSTILE_KEYS = ("\x1b[2Ja\nb", "\u2028\x85\x9b")
"""A terminal escape and a newline; a Unicode line separator and C1 controls (one of which
``str.splitlines`` breaks at)."""


def key_places(document: Any) -> dict[str, tuple[str | int, ...]]:
    """The first place of each key of a document, by its path with indices blanked: the
    path of the object holding it, and the key itself last."""
    found: dict[str, tuple[str | int, ...]] = {}
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), document)]
    while stack:
        path, value = stack.pop(0)
        if isinstance(value, dict):
            for key, item in value.items():
                pattern = "".join(f"[{'' if isinstance(p, int) else p}]"
                                  for p in (*path, key))
                found.setdefault(pattern, (*path, key))
                stack.append(((*path, key), item))
        elif isinstance(value, list):
            stack += [((*path, index), item) for index, item in enumerate(value)]
    return found


def with_key(document: Any, path: tuple[str | int, ...], extra: str) -> Any:
    """The document with the key at ``path`` renamed (``extra`` appended), its place in
    its object kept."""
    changed = json.loads(json.dumps(document))
    target = changed
    for part in path[:-1]:
        target = target[part]
    key = path[-1]
    assert isinstance(target, dict)
    assert isinstance(key, str)
    items = [(f"{name}{extra}" if name == key else name, item)
             for name, item in target.items()]
    target.clear()
    target.update(items)
    return changed


def _key_documents() -> dict[str, tuple[Any, str, Callable[[str], list[list[str]]]]]:
    """The documents read whole, the fleet's files and every importer's payload."""
    cases = _document_cases()
    importing = ["--connections", str(EXAMPLES / "connections.toml"), "--quota", "q.json",
                 "--at", "2026-11-29T11:59:30Z"]

    def snapshot(source: str, connection: str) -> Callable[[str], list[list[str]]]:
        return lambda f: [["import", source, f, "--connection", connection, "--force",
                           *importing]]

    for source, fixture, connection in (("copilot-user", "copilot/user.json", "copilot-seat"),
                                        ("gemini-quota", "gemini/quota.json", "gemini-free")):
        cases[f"{source} snapshot"] = (_json(SOURCE_FIXTURES / fixture), "doc.json",
                                       snapshot(source, connection))
    cases["litellm map"] = (
        tomllib.loads((EXAMPLES / "litellm-map.toml").read_text()), "doc.json",
        lambda f: [["export", "litellm", "auto/thrifty", "--config",
                    str(EXAMPLES / "omniladder.toml"), "--map", f]])
    return cases


def _check_key_run(result: Any, where: str, failures: list[str],
                   files: tuple[str, ...]) -> None:
    """A clean run, or exit 2 with one line per problem, each naming one of ``files``
    first (a line break in a key that split a line would start a line with the rest of
    the key)."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        failures.append(f"{where}: {result.exception!r}")
    elif result.exit_code not in (0, 1, 2):
        failures.append(f"{where}: exit {result.exit_code}")
    elif CONTROL.search(result.output) or "\u2028" in result.output:
        failures.append(f"{where}: a raw control character: {result.output[-300:]!r}")
    elif result.exit_code == 2 and (not result.stderr or not all(
            line.startswith(tuple(f"omniladder: error: {file}" for file in files))
            for line in result.stderr.splitlines())):
        failures.append(f"{where}: not one line per problem: {result.stderr!r}")


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(_key_documents()))
def test_every_key_of_a_document_reaches_the_error_wording_escaped(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    document, name, commands = _key_documents()[kind]
    failures: list[str] = []
    for path in key_places(document).values():
        for extra in HOSTILE_KEYS:
            text = json.dumps(with_key(document, path, extra))
            (tmp_path / name).write_text(text + "\n")
            for args in commands(name):
                (tmp_path / "q.json").unlink(missing_ok=True)
                _check_key_run(runner.invoke(app, args), f"{args[:2]} {_loc(path)} {extra!r}",
                               failures, (name, "q.json"))
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("name", sorted({name for name, _ in FLEET_FIELDS}))
def test_every_key_of_the_fleet_reaches_the_error_wording_escaped(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown key is exit 2 in every input file; the message is one line whatever the
    key holds."""
    monkeypatch.chdir(tmp_path)
    documents = json_fleet()
    failures: list[str] = []
    for path in key_places(documents[name]).values():
        for extra in HOSTILE_KEYS:
            for each, document in documents.items():
                changed = with_key(document, path, extra) if each == name else document
                (tmp_path / each).write_text(json.dumps(changed))
            result = runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.json"])
            where = f"{name}: {_loc(path)} {extra!r}"
            _check_key_run(result, where, failures, tuple(documents))
            if result.exit_code != 2 and not failures:
                failures.append(f"{where}: an unknown key was accepted (exit "
                                f"{result.exit_code})")
    assert not failures, "\n".join(failures[:20])


# A key given twice in one object, at every place a key stands in every JSON input and every
# importer's payload: exit 2 naming the file, the field and the key, never the last value.


def with_key_twice(document: Any, path: tuple[str | int, ...]) -> str:
    """The document as JSON text, the key at ``path`` given twice with its value."""

    def dump(value: Any, at: tuple[str | int, ...]) -> str:
        if isinstance(value, dict):
            members = []
            for key, item in value.items():
                member = f"{json.dumps(key)}: {dump(item, (*at, key))}"
                members.append(member)
                if (*at, key) == path:
                    members.append(member)
            return "{" + ", ".join(members) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(dump(item, (*at, index))
                                   for index, item in enumerate(value)) + "]"
        return json.dumps(value)

    return dump(document, ())


def _repeated(result: Any, where: str, file: str, path: tuple[str | int, ...],
              failures: list[str]) -> None:
    said = f"{_loc(path)}: key {path[-1]!r} is given twice in one object"
    lines = result.stderr.splitlines()
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        failures.append(f"{where}: {result.exception!r}")
    elif (result.exit_code != 2 or len(lines) != 1
          or not lines[0].startswith(f"omniladder: error: {file}") or said not in lines[0]):
        failures.append(f"{where}: exit {result.exit_code}: {result.output[-300:]!r}")


@pytest.mark.parametrize("kind", list(_key_documents()))
def test_a_key_given_twice_is_refused_in_every_document(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    document, name, commands = _key_documents()[kind]
    failures: list[str] = []
    for path in key_places(document).values():
        (tmp_path / name).write_text(with_key_twice(document, path) + "\n")
        for args in commands(name):
            (tmp_path / "q.json").unlink(missing_ok=True)
            _repeated(runner.invoke(app, args), f"{args[:2]} {_loc(path)}", name, path,
                      failures)
            assert not (tmp_path / "q.json").exists()
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("name", sorted({name for name, _ in FLEET_FIELDS}))
def test_a_key_given_twice_is_refused_in_every_input_file(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file of the fleet, read by pydantic straight from its text or by the plain
    path alike."""
    monkeypatch.chdir(tmp_path)
    documents = json_fleet()
    for each, document in documents.items():
        (tmp_path / each).write_text(json.dumps(document))
    failures: list[str] = []
    for path in key_places(documents[name]).values():
        (tmp_path / name).write_text(with_key_twice(documents[name], path))
        result = runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.json"])
        _repeated(result, f"{name}: {_loc(path)}", name, path, failures)
    assert not failures, "\n".join(failures[:20])


# A key pasted into any map field: every kind of key, every field; real variable names pass.

MAP_FIELDS = ("api_key_env", "model_prefix")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=strategies.pasted_keys(), field=st.sampled_from((*MAP_FIELDS, "api_base")))
def test_a_key_pasted_into_any_map_field_is_refused_and_never_shown(key: str,
                                                                   field: str) -> None:
    value = f"https://proxy.internal/v1/{key}/chat" if field == "api_base" else key
    with tempfile.TemporaryDirectory() as scratch:
        routes = Path(scratch) / "map.json"
        routes.write_text(json.dumps({"connections": [{"id": "openai-key", field: value}]}))
        result = runner.invoke(app, ["export", "litellm", "auto/thrifty", "--config",
                                     str(EXAMPLES / "omniladder.toml"), "--map", str(routes)])
    if field == "api_base" and not key.startswith(tuple(
            prefix for prefix, _ in KEY_PREFIXES)):
        return  # a random-looking path segment may be an account id: only prefixes count
    assert result.exit_code == 2, result.output
    assert key not in result.output
    (line,) = result.stderr.splitlines()
    assert f"connections[0].{field}: {field} of connection 'openai-key' " in line, line
    assert "(the value is never shown)" in line


@settings(max_examples=60, deadline=None)
@given(name=strategies.ENV_NAMES)
def test_a_variable_name_is_never_key_shaped(name: str) -> None:
    assert key_kind(name) is None


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), hostile=strategies.HOSTILE_TEXT)
def test_any_control_character_in_any_payload_key_is_never_raw_and_never_a_traceback(
        data: st.DataObject, hostile: str) -> None:
    """Any C0/C1 control, line or paragraph separator appended to any key of any importer's
    payload (or of the quota file): a clean run, or exit 2 with one line per problem."""
    kinds = _key_documents()
    kind = data.draw(st.sampled_from(sorted(k for k in kinds if k != "saved plan")))
    document, name, commands = kinds[kind]
    places = list(key_places(document).values())
    path = data.draw(st.sampled_from(places))
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        previous = Path.cwd()
        os.chdir(folder)
        try:
            (folder / name).write_text(json.dumps(with_key(document, path, hostile)) + "\n")
            for args in commands(name):
                _check_key_run(runner.invoke(app, args), f"{kind} {_loc(path)} {hostile!r}",
                               failures, (name, "q.json"))
        finally:
            os.chdir(previous)
    assert not failures, failures
