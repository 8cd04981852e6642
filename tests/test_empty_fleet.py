"""An empty connections file (zero bytes, a byte-order mark alone, `{}`) is never a green
`check`: `plan` warns and `check` answers no."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app

runner = CliRunner()


# --- 3. an empty connections file is never a green check -----------------------------------

_EMPTY = [("connections.toml", b""), ("connections.toml", b"\xef\xbb\xbf"),
          ("connections.json", b"{}")]
_EMPTY_IDS = ["zero-bytes", "bom-only", "empty-object"]
_NOW = ("--now", "2026-11-29T12:00:00Z")


def _policy(tmp_path: Path, extra: str = "max_unverified = 0\n") -> Path:
    policy = tmp_path / "policy.toml"
    policy.write_text('[[expect]]\nname = "nothing unverified"\nauto_id = "auto/thrifty"\n'
                      + extra, encoding="utf-8")
    return policy


@pytest.mark.parametrize(("name", "content"), _EMPTY, ids=_EMPTY_IDS)
def test_plan_warns_about_an_empty_connections_file(tmp_path: Path, name: str,
                                                    content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW,
                                 "--json"])
    assert result.exit_code == 0, result.output
    warning = (f"{path} lists no connection (empty, or a truncated export?): the plan has "
               "nothing to route, and `check` fails on it")
    assert json.loads(result.stdout)["warnings"][0] == warning
    table = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW])
    assert f"omniladder: warning: {warning}" in table.stderr
    assert path.read_bytes() == content


@pytest.mark.parametrize(("name", "content"), _EMPTY, ids=_EMPTY_IDS)
def test_check_answers_no_on_an_empty_connections_file(tmp_path: Path, name: str,
                                                       content: bytes) -> None:
    """SPEC §4.3: a check whose expectations would all pass on nothing is a "no" (exit 1),
    with the reason as a failed item in every output format."""
    path = tmp_path / name
    path.write_bytes(content)
    junit = tmp_path / "junit.xml"
    args = ["check", str(_policy(tmp_path)), "--connections", str(path), *_NOW]
    result = runner.invoke(app, [*args, "--json", "--junit", str(junit)])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["passed"] is False
    first, second = document["expectations"]
    assert (first["name"], first["passed"], second["passed"]) == (
        "the connections file lists connections", False, True)
    (check,) = first["checks"]
    assert (check["check"], check["actual"]) == ("connections", "0 connections")
    assert f"{path} lists no connection" in check["evidence"][0]
    assert "1 of 2 expectations failed: the connections file lists connections" in \
        result.stderr
    xml = junit.read_text(encoding="utf-8")
    assert 'failures="1"' in xml
    assert 'name="the connections file lists connections"' in xml
    markdown = runner.invoke(app, [*args, "--format", "markdown"])
    assert markdown.exit_code == 1
    assert ("| ❌ **FAIL** | the connections file lists connections | `inputs` | "
            "`connections` |") in markdown.stdout


def test_check_of_an_empty_file_is_a_no_even_when_the_policy_names_connections(
        tmp_path: Path) -> None:
    """Every id a policy names would be unknown in an empty file; the empty file is the
    answer (exit 1), not an unknown-id error (exit 2)."""
    path = tmp_path / "connections.toml"
    path.write_bytes(b"")
    policy = _policy(tmp_path, 'must_include = ["claude-max"]\n')
    result = runner.invoke(app, ["check", str(policy), "--connections", str(path), *_NOW])
    assert result.exit_code == 1, result.output
    assert "✗ FAIL the connections file lists connections" in result.stdout


def test_one_connection_is_not_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "connections.toml"
    path.write_text('[[connections]]\nid = "k"\nprovider = "ollama"\nauth_type = "none"\n'
                    'models = ["qwen"]\n', encoding="utf-8")
    policy = _policy(tmp_path, "min_pool = 1\n")
    result = runner.invoke(app, ["check", str(policy), "--connections", str(path), *_NOW,
                                 "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [e["name"] for e in document["expectations"]] == ["nothing unverified"]
    assert not any("lists no connection" in w for w in document["warnings"])
