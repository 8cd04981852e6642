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
