"""`diff` says when an added connection is unverified."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from omniladder.cli import app

runner = CliRunner()


# --- 7. diff says when an added connection is unverified -----------------------------------


def _saved(entries: list[tuple[list[str], list[str]]]) -> dict[str, Any]:
    """A minimal saved plan: one pool entry per (allowlist, unverified) pair."""
    return {
        "format_version": "1", "auto_id": "auto/thrifty", "now": "2026-11-29T12:00:00Z",
        "rungs": [{"rung": "subscription", "state": "serving", "candidates": len(entries),
                   "connections": 1}],
        "pool": [{"position": i + 1, "rung": "subscription", "provider": "codex",
                  "model": f"m{i}", "allowed_connection_ids": ids,
                  "unverified_connection_ids": unverified}
                 for i, (ids, unverified) in enumerate(entries)],
        "excluded": [], "connections": []}


def _diff(tmp_path: Path, old: dict[str, Any], new: dict[str, Any], *args: str) -> Any:
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), encoding="utf-8")
    return runner.invoke(app, ["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"),
                               *args])


def test_diff_marks_an_added_connection_unverified_and_a_verified_one_not(
        tmp_path: Path) -> None:
    old = _saved([(["plan"], []), (["plan"], [])])
    new = _saved([(["plan", "codex-plus", "codex-team"], ["codex-plus"]),
                  (["plan"], []), (["codex-plus"], ["codex-plus"])])
    table = _diff(tmp_path, old, new)
    assert table.exit_code == 1, table.output
    assert ("  ~ #1 subscription codex/m0 allowlist: +codex-plus (unverified), +codex-team"
            in table.stdout)
    assert "  + #3 subscription codex/m2 [codex-plus (unverified)]" in table.stdout
    document = json.loads(_diff(tmp_path, old, new, "--json").stdout)
    (change,) = document["pool"]["allowlist_changed"]
    assert (change["added"], change["added_unverified"]) == (
        ["codex-plus", "codex-team"], ["codex-plus"])
    markdown = _diff(tmp_path, old, new, "--format", "markdown").stdout
    assert "+codex-plus (unverified), +codex-team" in markdown


def test_diff_of_a_connection_already_unverified_stays_as_it_was(tmp_path: Path) -> None:
    """Only a newly added connection is marked on its `+`; one that stays is reported by
    `now unverified` / `now verified` as before."""
    old = _saved([(["a", "b"], ["b"])])
    new = _saved([(["a", "b"], ["a"])])
    out = _diff(tmp_path, old, new).stdout
    assert "allowlist: a now unverified, b now verified" in out
    assert "(unverified)" not in out
