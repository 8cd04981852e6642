"""`omniladder import omniroute` on databases written the way OmniRoute writes them, planned.

Every fixture row says which fact of docs/sources.md#omniroute it reproduces.
NOW is the import instant and the plan's now.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.omniroute_db import CANARIES, RAW_CANARY, REAL_SNAPSHOTS_DDL, build_db

runner = CliRunner()
NOW = "2026-11-29T12:00:00Z"
NEXT_WEEK = "2026-12-04T09:00:00.000Z"
SENTINEL = '{"fractionReported":false,"token":"' + RAW_CANARY + '"}'  # generation 3

# (id, provider, auth_type, name, display_name, is_active, test_status, rate_limited_until,
#  default_model, priority)
CONNECTIONS: tuple[tuple[Any, ...], ...] = (
    ("claude-a", "claude", "oauth", "me@work.example.com", "Max, work", 1, "active", None,
     None, 1),
    ("codex-a", "codex", "oauth", "codex", None, 1, "active", None, None, 2),
    ("github-a", "github", "oauth", "copilot@home.example.com", None, 1, "active", None,
     None, 3),
    ("github-old", "github", "oauth", "copilot old", None, 1, "active", None, None, 4),
    # unavailable is OmniRoute's cooldown, recovered once rate_limited_until passes
    ("claude-cool", "claude", "oauth", "cool", None, 1, "unavailable",
     "2026-11-29T11:30:00.000Z", None, 5),
    ("claude-failing", "claude", "oauth", "failing", None, 1, "unavailable", None, None, 6),
    ("claude-stuck", "claude", "oauth", "stuck", None, 1, "active", None, None, 7),
    ("claude-gen1", "claude", "oauth", "gen1", None, 1, "active", None, None, 8),
)

EXHAUSTED = {"quota-below-cutoff", "quota-below-reentry"}  # R6, R7
FRESH = "2026-11-29T11:58:00.138Z"  # ISO text with milliseconds and Z (current writers)

SNAPSHOTS: tuple[tuple[Any, ...], ...] = (
    # claude-a: generation 2 (is_exhausted per window). Change-only rows over the morning,
    # then a gateway restart at 11:58 re-writes every window once (rows within a second).
    ("claude-a", "session (5h)", 90, 0, "2026-11-29T13:00:00.000Z",
     "2026-11-29T08:00:00.000Z", None),
    ("claude-a", "weekly opus (7d)", 3, 0, NEXT_WEEK, "2026-11-29T08:00:00.000Z", None),
    ("claude-a", "weekly opus (7d)", 0, 1, NEXT_WEEK, "2026-11-29T10:00:00.000Z", None),
    ("claude-a", "session (5h)", 60, 0, "2026-11-29T13:00:00.000Z", FRESH, None),
    ("claude-a", "weekly (7d)", 70, 0, NEXT_WEEK, "2026-11-29T11:58:00.402Z", None),
    ("claude-a", "weekly opus (7d)", 0, 1, NEXT_WEEK, "2026-11-29T11:58:00.911Z", None),
    # codex-a: code review windows are no chat quota; created_at as epoch milliseconds
    ("codex-a", "session", 80, 0, "2026-11-29T15:00:00.000Z", 1795953540000, None),
    ("codex-a", "weekly", 90, 0, NEXT_WEEK, 1795953540000, None),
    ("codex-a", "code_review", 0, 1, NEXT_WEEK, 1795953540000, None),
    ("codex-a", "code_review_weekly", 0, 1, NEXT_WEEK, 1795953540000, None),
    # github-a: generation 3, unlimited chat/completions stored as 0 with
    # fractionReported false; SQLite datetime('now') text
    ("github-a", "premium_interactions", 50, 0, "2026-12-01T00:00:00.000Z",
     "2026-11-29 11:59:00", '{"fractionReported":true}'),
    ("github-a", "chat", 0, 0, None, "2026-11-29 11:59:00", SENTINEL),
    ("github-a", "completions", 0, 0, None, "2026-11-29 11:59:00", SENTINEL),
    # github-old: an older Copilot adapter stored unlimited chat as 0, no raw_data flag
    ("github-old", "premium_interactions", 40, 0, "2026-12-01T00:00:00.000Z", FRESH, None),
    ("github-old", "chat", 0, 0, None, FRESH, None),
    # claude-cool: healthy windows; its cooldown ended 30 minutes ago
    ("claude-cool", "session (5h)", 75, 0, "2026-11-29T14:00:00.000Z", FRESH, None),
    ("claude-cool", "weekly (7d)", 75, 0, NEXT_WEEK, FRESH, None),
    ("claude-failing", "session (5h)", 75, 0, "2026-11-29T14:00:00.000Z", FRESH, None),
    # claude-stuck: the weekly window reached 0 % three hours ago; change-only, nothing
    # written since (no value changed), its reset is next week
    ("claude-stuck", "session (5h)", 40, 0, "2026-11-29T13:00:00.000Z",
     "2026-11-29T08:00:00.000Z", None),
    ("claude-stuck", "weekly (7d)", 5, 0, NEXT_WEEK, "2026-11-29T08:00:00.000Z", None),
    ("claude-stuck", "weekly (7d)", 0, 0, NEXT_WEEK, "2026-11-29T09:00:00.000Z", None),
    # claude-gen1: generation 1 flags every window when all are at or below 0
    ("claude-gen1", "session (5h)", 0, 1, "2026-11-29T14:00:00.000Z", FRESH, None),
    ("claude-gen1", "weekly (7d)", 0, 1, NEXT_WEEK, FRESH, None),
)


def _import(db: Path, out: Path, *extra: str) -> Any:
    return runner.invoke(app, ["import", "omniroute", str(db), "--out", str(out), "--now", NOW,
                               *extra])


def _plan(out: Path, auto_id: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", auto_id, "--config", str(out / "omniladder.toml"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _served(plan: dict[str, Any]) -> dict[str, set[str]]:
    """connection id → models it serves in the pool."""
    served: dict[str, set[str]] = {}
    for entry in plan["pool"]:
        for cid in entry["allowed_connection_ids"]:
            served.setdefault(cid, set()).add(entry["model"])
    return served


def _rungs(plan: dict[str, Any], cid: str) -> set[str]:
    return {e["rung"] for e in plan["pool"] if cid in e["allowed_connection_ids"]}


def _reasons(plan: dict[str, Any], cid: str) -> dict[str | None, str]:
    return {x["model"]: x["reason"] for x in plan["excluded"] if x["connection_id"] == cid}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_db(tmp_path / "storage.sqlite", connections=CONNECTIONS, snapshots=SNAPSHOTS,
                    snapshots_ddl=REAL_SNAPSHOTS_DDL)


@pytest.fixture
def fleet(db: Path, tmp_path: Path) -> tuple[Path, Any]:
    out = tmp_path / "fleet"
    result = _import(db, out, "--since", "all")
    assert result.exit_code == 0, result.output
    return out, result


def _quota(out: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((out / "quota.json").read_text())
    return document


def _latest(out: Path, cid: str) -> dict[str, Any]:
    latest: dict[str, Any] = [r for r in _quota(out)["readings"] if r["connection"] == cid][-1]
    return latest


# --- what the plan makes of it -------------------------------------------------------------


def test_sonnet_is_served_while_the_weekly_opus_window_is_spent(fleet: tuple[Path, Any]) -> None:
    """R6 scoped by the window catalog: weekly opus (7d) limits only the Opus models."""
    out, _ = fleet
    plan = _plan(out, "auto/subscription")
    assert "claude-sonnet-4-5" in _served(plan)["claude-a"]
    assert not any("opus" in m for m in _served(plan)["claude-a"])
    opus = {m: r for m, r in _reasons(plan, "claude-a").items() if m and "opus" in m}
    assert opus
    assert set(opus.values()) <= EXHAUSTED


def test_codex_is_served_although_code_review_is_at_zero(fleet: tuple[Path, Any]) -> None:
    out, _ = fleet
    plan = _plan(out, "auto/subscription")
    assert _served(plan).get("codex-a")
    assert not _reasons(plan, "codex-a")
    names = {w["name"] for w in _latest(out, "codex-a")["windows"]}
    assert names == {"session", "weekly"}


def test_sentinel_zeros_are_not_exhaustion(fleet: tuple[Path, Any]) -> None:
    """Generation 3 (fractionReported false) and older Copilot adapters (chat stored as 0)."""
    out, result = fleet
    plan = _plan(out, "auto/thrifty")
    for cid in ("github-a", "github-old"):
        assert _served(plan).get(cid), cid
        assert "quota-below-cutoff" not in _reasons(plan, cid).values()
        assert {w["name"] for w in _latest(out, cid)["windows"]} == {"premium_interactions"}
    assert "fractionReported false" in result.output
    assert "zero_is_sentinel" in result.output


def test_github_oauth_copilot_lands_on_the_subscription_rung(fleet: tuple[Path, Any]) -> None:
    out, _ = fleet
    plan = _plan(out, "auto/thrifty")
    assert _rungs(plan, "github-a") == {"subscription"}
    assert {"gpt-4.1", "gpt-5-mini", "claude-sonnet-4-5"} <= _served(plan)["github-a"]
    billing = {c["id"]: c for c in plan["connections"]}["github-a"]
    assert (billing["billing"], billing["overage"]) == ("subscription", "unknown")
    # overage unknown: auto/subscription (fail closed) keeps it out
    assert set(_reasons(_plan(out, "auto/subscription"), "github-a").values()) == {
        "overage-not-hard-stop"}


def test_unavailable_whose_cooldown_passed_is_eligible(fleet: tuple[Path, Any]) -> None:
    out, _ = fleet
    plan = _plan(out, "auto/subscription")
    assert _served(plan).get("claude-cool")
    connections = (out / "connections.toml").read_text()
    assert '"unavailable"' not in connections
    # without rate_limited_until there is no instant to recover at: error, not terminal,
    # but not healthy either: out of the fail-closed id, unverified under auto/thrifty
    assert not _served(plan).get("claude-failing")
    assert set(_reasons(plan, "claude-failing").values()) == {"connection-status-unknown"}
    assert _served(_plan(out, "auto/thrifty")).get("claude-failing")


def test_is_exhausted_reads_as_zero_in_generation_one(fleet: tuple[Path, Any]) -> None:
    out, _ = fleet
    assert {w["remaining_percent"] for w in _latest(out, "claude-gen1")["windows"]} == {0}
    reasons = set(_reasons(_plan(out, "auto/thrifty"), "claude-gen1").values())
    assert reasons == {"quota-below-cutoff"}


def test_a_window_sitting_at_zero_is_excluded_under_auto_subscription(
        fleet: tuple[Path, Any]) -> None:
    out, _ = fleet
    latest = _latest(out, "claude-stuck")
    assert latest["checked_at"] == "2026-11-29T09:00:00Z"  # change-only: 3 hours old
    assert {w["name"]: w["remaining_percent"] for w in latest["windows"]} == {
        "session (5h)": 40, "weekly (7d)": 0}
    assert "claude-stuck" not in _served(_plan(out, "auto/subscription"))


def test_a_window_sitting_at_zero_is_excluded_under_auto_thrifty(
        fleet: tuple[Path, Any]) -> None:
    out, _ = fleet
    plan = _plan(out, "auto/thrifty")
    assert "claude-stuck" not in _served(plan)
    reasons = set(_reasons(plan, "claude-stuck").values())
    assert reasons
    assert reasons <= EXHAUSTED


# --- the import itself ---------------------------------------------------------------------


def test_restart_rows_form_one_reading_carrying_every_window(fleet: tuple[Path, Any]) -> None:
    out, _ = fleet
    readings = [r for r in _quota(out)["readings"] if r["connection"] == "claude-a"]
    assert [r["checked_at"] for r in readings] == [
        "2026-11-29T08:00:00Z", "2026-11-29T10:00:00Z", "2026-11-29T11:58:00.911000Z"]
    # 10:00 changed only the opus window: the reading still carries the 5h window
    assert {w["name"]: w["remaining_percent"] for w in readings[1]["windows"]} == {
        "session (5h)": 90, "weekly opus (7d)": 0}
    opus = [w for w in readings[2]["windows"] if w["name"] == "weekly opus (7d)"]
    assert opus[0]["models"] == ["claude-opus-4-5", "claude-opus-4-1"]


def test_labels_are_never_email_addresses(fleet: tuple[Path, Any]) -> None:
    out, _ = fleet
    text = (out / "connections.toml").read_text()
    assert "@" not in text
    assert 'label = "Max, work"' in text
    assert 'label = "codex"' in text


def test_confirmed_at_adds_one_reading_with_the_latest_values(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "confirmed"
    result = _import(db, out, "--confirmed-at", "now")
    assert result.exit_code == 0, result.output
    latest = _latest(out, "claude-stuck")
    assert latest["checked_at"] == NOW
    assert {w["name"]: w["remaining_percent"] for w in latest["windows"]} == {
        "session (5h)": 40, "weekly (7d)": 0}
    plan = _plan(out, "auto/thrifty")
    assert set(_reasons(plan, "claude-stuck").values()) <= EXHAUSTED
    assert "claude-stuck" not in _served(plan)


@pytest.mark.parametrize(("value", "message"), [
    ("2026-11-29T12:00:01Z", "after the import instant"),
    ("yesterday", "expected 'now' or an RFC 3339 instant"),
    ("2026-11-29T11:00:00", "has no offset"),
])
def test_bad_confirmed_at_is_exit_2_naming_the_option(db: Path, tmp_path: Path, value: str,
                                                      message: str) -> None:
    result = _import(db, tmp_path / "out", "--confirmed-at", value)
    assert result.exit_code == 2, result.output
    assert "--confirmed-at" in result.output
    assert message in result.output
    assert not (tmp_path / "out").exists()


def test_inputs_untouched_and_no_secret_anywhere(db: Path, tmp_path: Path) -> None:
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    out = tmp_path / "fleet"
    result = _import(db, out, "--confirmed-at", "now", "--since", "1h")
    assert result.exit_code == 0, result.output
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    texts = [result.output] + [p.read_text() for p in out.iterdir()]
    for canary in (*CANARIES, RAW_CANARY, "fractionReported\":"):
        assert not any(canary in text for text in texts), canary


@pytest.mark.parametrize(("row", "field"), [
    (("claude-a", "weekly (7d)", "plenty", 0, None, FRESH, None),
     "quota_snapshots[id=1].remaining_percentage"),
    (("claude-a", "weekly (7d)", 50, 0, "next monday", FRESH, None),
     "quota_snapshots[id=1].next_reset_at"),
    (("claude-a", "weekly (7d)", 50, 0, None, "today at noon", None),
     "quota_snapshots[id=1].created_at"),
])
@pytest.mark.parametrize("since", ["all", "1d"])
def test_unreadable_values_are_exit_2_naming_file_and_field(
        tmp_path: Path, row: tuple[Any, ...], field: str, since: str) -> None:
    db = build_db(tmp_path / "bad.sqlite", connections=CONNECTIONS[:1], snapshots=(row,),
                  snapshots_ddl=REAL_SNAPSHOTS_DDL)
    result = _import(db, tmp_path / "out", "--since", since)
    assert result.exit_code == 2, result.output
    assert f"bad.sqlite: {field}" in result.output
    assert "Traceback" not in result.output


# --- --since in SQL, for every created_at form ---------------------------------------------

SINCE = "2026-11-29T10:00:00Z"


def _form(instant: str, form: str) -> Any:
    """instant as ``YYYY-MM-DDTHH:MM:SS`` (UTC) in one of created_at's real forms."""
    from datetime import UTC, datetime

    parsed = datetime.fromisoformat(instant).replace(tzinfo=UTC)
    if form == "iso":
        return parsed.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    if form == "sqlite":
        return parsed.strftime("%Y-%m-%d %H:%M:%S")
    return int(parsed.timestamp() * 1000)


@pytest.mark.parametrize("form", ["iso", "sqlite", "epoch-ms"])
def test_since_filters_in_sql_for_every_created_at_form(tmp_path: Path, form: str) -> None:
    rows: list[tuple[Any, ...]] = [
        ("claude-a", "weekly (7d)", value, 0, NEXT_WEEK, _form(at, form), None)
            for at, value in (("2026-11-28T10:00:00", 10), ("2026-11-29T09:59:59", 20),
                              ("2026-11-29T10:00:00", 30), ("2026-11-29T11:00:00", 40))]
    # an untouched window whose last row is long before since is still in force
    rows.append(("claude-a", "session (5h)", 55, 0, None, _form("2026-11-20T00:00:00", form),
                 None))
    db = build_db(tmp_path / "forms.sqlite", connections=CONNECTIONS[:1], snapshots=rows,
                  snapshots_ddl=REAL_SNAPSHOTS_DDL)
    out = tmp_path / "out"
    result = _import(db, out, "--since", SINCE)
    assert result.exit_code == 0, result.output
    readings = _quota(out)["readings"]
    weekly = [next(w["remaining_percent"] for w in r["windows"] if w["name"] == "weekly (7d)")
              for r in readings]
    assert weekly == [20, 30, 40]
    assert all(any(w["name"] == "session (5h)" and w["remaining_percent"] == 55
                   for w in r["windows"]) for r in readings)


def test_since_on_a_date_mixing_text_forms(tmp_path: Path) -> None:
    """On one date every datetime('now') row sorts below every ISO row: the later one wins."""
    rows = [("claude-a", "weekly (7d)", 11, 0, NEXT_WEEK, "2026-11-29T08:00:00.000Z", None),
            ("claude-a", "weekly (7d)", 22, 0, NEXT_WEEK, "2026-11-29 09:30:00", None),
            ("claude-a", "weekly (7d)", 33, 0, NEXT_WEEK, "2026-11-29 10:30:00", None)]
    db = build_db(tmp_path / "mixed.sqlite", connections=CONNECTIONS[:1], snapshots=rows,
                  snapshots_ddl=REAL_SNAPSHOTS_DDL)
    out = tmp_path / "out"
    assert _import(db, out, "--since", SINCE).exit_code == 0
    assert [r["windows"][0]["remaining_percent"] for r in _quota(out)["readings"]] == [22, 33]


def test_since_and_all_agree_from_since_on(db: Path, tmp_path: Path) -> None:
    every = tmp_path / "all"
    recent = tmp_path / "recent"
    assert _import(db, every, "--since", "all").exit_code == 0
    assert _import(db, recent, "--since", SINCE).exit_code == 0
    kept = [r for r in _quota(every)["readings"] if r["checked_at"] >= SINCE]
    tail = [r for r in _quota(recent)["readings"] if r["checked_at"] >= SINCE]
    assert tail == kept
