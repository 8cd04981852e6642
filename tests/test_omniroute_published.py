"""`omniladder import omniroute` on rows OmniRoute's own tests write.

Each SQL file in tests/fixtures/sources/omniroute/ reproduces, field for field, rows that
OmniRoute's test suite writes into its database (the README there gives repository, path and
commit); the file is run against a database made with the DDL of tests/omniroute_db.py.
Connection rows a published set lacks are written here, with canaries in every secret
column, and say so.
"""

from __future__ import annotations

import json
import sqlite3
import tomllib
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from omniladder.cli import app
from tests.omniroute_db import CANARIES, REAL_SNAPSHOTS_DDL, build_db

runner = CliRunner()
PUBLISHED = Path(__file__).parent / "fixtures" / "sources" / "omniroute"
NOW = "2026-07-24T12:00:00Z"  # the instant each fixture fixes the writer's clock at


def _import(sql: str, tmp_path: Path,
            connections: tuple[tuple[Any, ...], ...] = ()) -> tuple[Path, str]:
    db = build_db(tmp_path / "storage.sqlite", connections=connections, snapshots=(),
                  snapshots_ddl=REAL_SNAPSHOTS_DDL)
    written = sqlite3.connect(db)
    try:
        written.executescript((PUBLISHED / sql).read_text())
        written.commit()
    finally:
        written.close()
    out = tmp_path / "fleet"
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", str(out),
                                 "--now", NOW, "--since", "all"])
    assert result.exit_code == 0, result.output
    return out, result.output


def _connections(out: Path) -> dict[str, dict[str, Any]]:
    document = tomllib.loads((out / "connections.toml").read_text())
    return {c["id"]: c for c in document["connections"]}


def _readings(out: Path) -> list[dict[str, Any]]:
    readings: list[dict[str, Any]] = json.loads((out / "quota.json").read_text())["readings"]
    return readings


def _no_secret(out: Path, output: str, secrets: tuple[str, ...]) -> None:
    written = output + "".join(p.read_text() for p in sorted(out.iterdir()))
    for secret in secrets:
        assert secret not in written, secret


def test_glm_recovery_connections(tmp_path: Path) -> None:
    """provider-limits-recovery.test.ts: a cooldown and the three terminal statuses."""
    out, output = _import("glm-recovery-connections.sql", tmp_path)
    connections = _connections(out)
    assert set(connections) == {"glm-cooldown", "glm-credits-exhausted", "glm-banned",
                                "glm-expired"}
    cooling = connections["glm-cooldown"]
    # unavailable with rate_limited_until is OmniRoute's cooldown: no status, the instant kept
    assert "status" not in cooling
    assert cooling["rate_limited_until"] == "2026-07-24T12:01:00Z"
    assert cooling["auth_type"] == "apikey"
    assert cooling["active"] is True  # is_active left to the column's DEFAULT 1
    for cid, status in (("glm-credits-exhausted", "credits_exhausted"),
                        ("glm-banned", "banned"), ("glm-expired", "expired")):
        assert connections[cid]["status"] == status  # OmniRoute's terminal set (R5)
        assert "rate_limited_until" not in connections[cid]
    assert _readings(out) == []
    assert "no model known for" in output
    _no_secret(out, output, ("glm-test-key", "rate limit exceeded", "permanent failure"))


# Written here: the #8431 test writes snapshot rows only. The reporter's connection is
# codebuddy-cn over OAuth asking for deepseek-v4-pro; the test's second case asks gpt-5.
CODEBUDDY_CONNECTIONS: tuple[tuple[Any, ...], ...] = (
    ("conn-codebuddy-cn-8431", "codebuddy-cn", "oauth", "codebuddy", None, 1, "active", None,
     "deepseek-v4-pro", 1),
    ("conn-single-window-8431", "openai", "apikey", "openai", None, 1, "active", None, "gpt-5",
     2),
)


def test_codebuddy_bonus_packs_8431(tmp_path: Path) -> None:
    """Issue #8431: nine windows, three of them spent; 216 rows read as one reading."""
    out, output = _import("codebuddy-8431.sql", tmp_path, CODEBUDDY_CONNECTIONS)
    assert "from 217 snapshot rows" in output
    readings = {r["connection"]: r for r in _readings(out)}
    assert set(readings) == {"conn-codebuddy-cn-8431", "conn-single-window-8431"}
    codebuddy = readings["conn-codebuddy-cn-8431"]
    # the cold rows and the hot rows are within --group-seconds: one reading, at the last row
    assert codebuddy["checked_at"] == "2026-07-24T11:59:00.001000Z"
    windows = {w["name"]: (w["remaining_percent"], w["reset_at"]) for w in codebuddy["windows"]}
    cold = (80, "2099-01-01T00:00:00Z")
    hot = (0, "2099-01-08T00:00:00Z")
    assert windows == {"Bonus Pack 1": cold, "Bonus Pack 2": cold, "Bonus Pack 3": cold,
                       "Bonus Pack 4": cold, "Weekly": cold, "Daily": cold,
                       "Monthly": hot, "Bonus Pack 5": hot, "Bonus Pack 6": hot}
    # no window-scope catalog entry: each window is read as limiting every model
    assert "windows not in the window-scope catalog" in output
    single = readings["conn-single-window-8431"]
    assert single["windows"] == [{"name": "weekly", "remaining_percent": 0}]
    assert _connections(out)["conn-codebuddy-cn-8431"]["models"] == ["deepseek-v4-pro"]
    _no_secret(out, output, CANARIES)
