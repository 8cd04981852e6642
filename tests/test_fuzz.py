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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import tomli_w
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
    docs["models-overlay.toml"] = MODELS_OVERLAY
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
