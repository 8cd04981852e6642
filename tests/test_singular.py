"""Small things an operator reads: one connection, one candidate, one import of each are
said in the singular."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import ROOT
from tests.test_audit_unvouched import _GHOSTS, _audit, _candidates
from tests.test_empty_fleet import _policy
from tests.test_omniroute_wal import _import_args

runner = CliRunner()

_NOW = ("--now", "2026-11-29T12:00:00Z")

CANDIDATES = ROOT / "tests" / "fixtures" / "sources" / "omniroute-candidates"
FLEET = CANDIDATES / "fleet" / "omniladder.toml"


# --- 9. small things an operator reads -----------------------------------------------------


def test_one_connection_and_one_candidate_are_singular(tmp_path: Path) -> None:
    path = tmp_path / "connections.toml"
    path.write_text('[[connections]]\nid = "k"\nprovider = "ollama"\nauth_type = "none"\n'
                    'models = ["qwen"]\n', encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW])
    assert result.exit_code == 0, result.output
    assert "(from --now) · 1 connection · 1 candidate\n" in result.stdout
    two = path.read_text(encoding="utf-8") + path.read_text(encoding="utf-8").replace(
        '"k"', '"k2"')
    path.write_text(two, encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW])
    assert "(from --now) · 2 connections · 1 candidate\n" in result.stdout


def test_an_import_of_one_of_each_is_singular(tmp_path: Path) -> None:
    from tests.omniroute_db import CONNECTIONS, SNAPSHOTS, build_db

    db = build_db(tmp_path / "storage.sqlite", connections=CONNECTIONS[1:2],
                  snapshots=SNAPSHOTS[3:4])
    result = runner.invoke(app, _import_args(db, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert ("omniladder: imported 1 connection and 1 reading (1 connection with quota history, "
            "from 1 snapshot row)") in result.stderr


def test_an_audit_of_one_row_is_singular(tmp_path: Path) -> None:
    result = _audit(_candidates(tmp_path, "auto/thrifty", _GHOSTS[0]))
    assert "· channel auto/thrifty · 1 row, 1 in use" in result.stdout


@pytest.mark.parametrize(("typed", "hint"), [
    ("auto/thrify", "did you mean 'auto/thrifty'?"),
    ("Auto/subscription", "did you mean 'auto/subscription'?"),
    ("auto/coding", "did you mean 'auto/coding:thrifty'?"),
    ("auto/codng:thrifty", "did you mean 'coding'?"),
    ("auto/chat:thrify", "did you mean 'thrifty'?"),
    ("auto/xyzzy", None),
])
def test_a_mistyped_auto_id_gets_the_closest_valid_one_R13(typed: str,
                                                           hint: str | None) -> None:
    result = runner.invoke(app, ["plan", typed, "--connections", str(CANDIDATES / "fleet" /
                                                                     "connections.toml")])
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith("omniladder: error: AUTO_ID: ")
    if hint is None:
        assert "did you mean" not in line
    else:
        assert line.endswith(hint)


@pytest.mark.parametrize(("typed", "hint"), [
    ("quota-stael", "; did you mean 'quota-stale'?"),
    ("conection-status-unknown", "; did you mean 'connection-status-unknown'?"),
    ("nonsense", ""),
])
def test_a_mistyped_reason_code_in_a_policy_gets_the_closest_one(
        tmp_path: Path, typed: str, hint: str) -> None:
    policy = _policy(tmp_path, f'expect_reason = {{ claude-max = "{typed}" }}\n')
    result = runner.invoke(app, ["check", str(policy), "--config", str(FLEET)])
    assert result.exit_code == 2, result.output
    assert f"unknown reason code {typed!r}{hint}; reason codes: inactive, " in result.stderr


def test_the_license_is_the_mit_license_pyproject_names() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"] == "MIT"
    assert text.startswith("MIT License\n\nCopyright (c) 2026 omniladder contributors\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text
