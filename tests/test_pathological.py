"""Pathological but valid inputs: empty fleets, long histories, the ends of the calendar and
figures exactly on every boundary. Each answers (exit 0) with the decision the SPEC rule gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app

runner = CliRunner()

NOW = "2026-11-29T12:00:00Z"
CONNECTION = ('[[connections]]\nid = "max"\nprovider = "claude"\nauth_type = "oauth"\n'
              'models = ["claude-sonnet-4-5"]\n')


def plan(tmp_path: Path, readings: list[dict[str, Any]], *extra: str,
         connections: str = CONNECTION, auto_id: str = "auto/subscription",
         events: list[dict[str, Any]] | None = None, period: str = "month") -> dict[str, Any]:
    (tmp_path / "connections.toml").write_text(connections, encoding="utf-8")
    (tmp_path / "quota.json").write_text(json.dumps({"readings": readings}), encoding="utf-8")
    (tmp_path / "spend.json").write_text(json.dumps({"events": events or []}),
                                         encoding="utf-8")
    (tmp_path / "omniladder.toml").write_text(
        '[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n'
        f'spend = "spend.json"\n[budgets]\nperiod = "{period}"\n'
        "rung_budget_usd = { cheap = 5.0 }\n", encoding="utf-8")
    result = runner.invoke(app, ["plan", auto_id, "--config", str(tmp_path / "omniladder.toml"),
                                 "--json", *extra])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def reason(document: dict[str, Any]) -> str | None:
    """The reason the one connection is out, or None when it is in the pool."""
    if document["pool"]:
        return None
    (exclusion,) = document["excluded"]
    value: str = exclusion["reason"]
    return value


def window(percent: float, reset_at: str = "2026-11-29T15:00:00Z") -> dict[str, Any]:
    return {"name": "5h", "remaining_percent": percent, "reset_at": reset_at}


def reading(checked_at: str, *windows: dict[str, Any], **top: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"connection": "max", "checked_at": checked_at, **top}
    if windows:
        item["windows"] = list(windows)
    return item


def test_empty_fleet_is_an_answer(tmp_path: Path) -> None:
    document = plan(tmp_path, [], connections="", auto_id="auto/thrifty")
    assert document["pool"] == []
    assert [r["state"] for r in document["rungs"]] == ["empty"] * 5
    assert document["summary"].startswith("auto/thrifty: 0 of 0 connections eligible")


def test_empty_fleet_fails_only_under_fail_on_empty(tmp_path: Path) -> None:
    plan(tmp_path, [], connections="")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(tmp_path / "omniladder.toml"), "--fail-on-empty"])
    assert result.exit_code == 1, result.output
    assert "pool empty" in result.stdout


def test_ten_thousand_readings_replay_to_the_right_state(tmp_path: Path) -> None:
    """R7 over a long history: it ends out (1%), so the latest 4% is below the re-entry floor.
    Each window resets as the next reading arrives, so no rise is a regain before a reset."""

    def stamp(i: int) -> str:
        return f"2026-11-29T{9 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"

    readings = [reading(stamp(i), window(80 if i % 2 else 1, reset_at=stamp(i + 1)))
                for i in range(9_999)]
    readings.append(reading("2026-11-29T11:59:00Z", window(4)))
    readings.reverse()  # history comes in any order (§2.2)
    document = plan(tmp_path, readings, "--now", NOW)
    assert reason(document) == "quota-below-reentry"
    readings[0] = reading("2026-11-29T11:59:00Z", window(6))
    assert reason(plan(tmp_path, readings, "--now", NOW)) is None


@pytest.mark.parametrize(("figure", "earlier", "expected"), [
    (2, None, "quota-below-cutoff"),  # R6.6: at the exit cutoff is exhausted
    (2.0001, None, None),
    (5, 1, "quota-below-reentry"),  # R7: at the re-entry floor stays out
    (5.0001, 1, None),
    (0, None, "quota-below-cutoff"),
    (100, 0, None),
])
def test_figures_exactly_on_the_boundaries(tmp_path: Path, figure: float,
                                           earlier: float | None, expected: str | None) -> None:
    readings = [reading("2026-11-29T11:59:00Z", window(figure))]
    if earlier is not None:
        # its window resets before the later reading: a real regain (R6.4)
        readings.append(reading("2026-11-29T11:00:00Z",
                                window(earlier, reset_at="2026-11-29T11:30:00Z")))
    assert reason(plan(tmp_path, readings, "--now", NOW)) == expected


@pytest.mark.parametrize(("readings", "expected"), [
    # R6: a window whose reset_at is now is no longer current: the reading is outdated.
    ([reading("2026-11-29T11:59:00Z", window(50, reset_at=NOW))], "quota-reset-since-reading"),
    ([reading("2026-11-29T11:59:00Z", window(50, reset_at="2026-11-29T12:00:01Z"))], None),
    # R6.3: an exhausted reading whose reset is exactly now no longer excludes.
    ([reading("2026-11-29T11:59:00Z", status="exhausted", reset_at=NOW)],
     "quota-reset-since-reading"),
    ([reading("2026-11-29T11:59:00Z", status="exhausted",
              reset_at="2026-11-29T12:00:01Z")], "quota-exhausted"),
    # R6.5: exactly max_reading_age_seconds (180) old is fresh; a second more is stale.
    ([reading("2026-11-29T11:57:00Z", window(50))], None),
    ([reading("2026-11-29T11:56:59Z", window(50))], "quota-stale"),
    # R6: a reading checked exactly at now exists.
    ([reading(NOW, window(50))], None),
    ([reading("2026-11-29T12:00:01Z", window(50))], "quota-missing"),
], ids=["window-reset-at-now", "window-reset-after-now", "exhausted-reset-at-now",
        "exhausted-reset-after-now", "age-exactly-max", "age-max-plus-one", "checked-at-now",
        "checked-after-now"])
def test_instants_exactly_at_now(tmp_path: Path, readings: list[dict[str, Any]],
                                 expected: str | None) -> None:
    assert reason(plan(tmp_path, readings, "--now", NOW)) == expected


FAR_PAST = "0001-01-01T00:00:00-14:00"  # 14:00Z on the first day of year 1
FAR_FUTURE = "9999-12-31T23:59:59+14:00"  # 09:59:59Z on the last day of year 9999


# At each instant: why auto/subscription leaves "max" out (R6), whether "key" is still
# cooling down (R5: until after now), and the cheap spend counted in the period (R8).
ENDS = {
    # before every reading: none exists yet; the cooldown runs; the FAR_PAST event is future
    "0001-01-01T00:00:00Z": ("quota-missing", True, 0.0),
    # exactly FAR_PAST: the exhausted reading's reset is at now (R6.3); the event counts
    "0001-01-01T00:00:00-14:00": ("quota-reset-since-reading", True, 1.0),
    # after FAR_FUTURE: its window has reset long ago and the reading is old (R6.5)
    "9999-12-31T23:59:59Z": ("quota-stale", False, 1.0),
    # exactly FAR_FUTURE: a reading a second old whose window resets at now (R6.7); cooldown
    # over
    "9999-12-31T23:59:59+14:00": ("quota-reset-since-reading", False, 1.0),
    NOW: ("quota-reset-since-reading", True, 0.0),
}


@pytest.mark.parametrize("now", list(ENDS))
@pytest.mark.parametrize("period", ["day", "week", "month"])
def test_the_ends_of_the_calendar(tmp_path: Path, now: str, period: str) -> None:
    """Year 1 and 9999, with offsets, everywhere a timestamp goes: no OverflowError, and the
    decision each rule gives at that instant."""
    connections = CONNECTION + (
        '[[connections]]\nid = "key"\nprovider = "openai"\nauth_type = "apikey"\n'
        f'models = ["gpt-5-mini"]\nrate_limited_until = "{FAR_FUTURE}"\n')
    readings = [  # one instant holds one reading of a connection (SPEC §2.2, v1.2)
        reading("0001-01-01T13:59:58Z", window(1, reset_at=FAR_FUTURE)),
        reading("9999-12-31T09:59:58Z", window(50, reset_at=FAR_FUTURE)),
        reading("0001-01-01T13:59:59Z", remaining_percent=0, reset_at=FAR_PAST,
                status="exhausted"),
        {"connection": "key", "checked_at": FAR_PAST, "remaining_percent": 3,
         "reset_at": FAR_FUTURE},
    ]
    events = [{"at": FAR_PAST, "rung": "cheap", "cost_usd": 1.0},
              {"at": FAR_FUTURE, "connection": "key", "model": "gpt-5-mini", "cost_usd": 1.0}]
    max_reason, cooling, spent = ENDS[now]
    documents = {auto_id: plan(tmp_path, readings, "--now", now, connections=connections,
                               auto_id=auto_id, events=events, period=period)
                 for auto_id in ("auto/subscription", "auto/thrifty")}
    subscription, thrifty = documents["auto/subscription"], documents["auto/thrifty"]
    assert subscription["pool"] == []
    assert [(x["connection_id"], x["reason"]) for x in subscription["excluded"]] == [
        ("max", max_reason), ("key", "billing-uncurated")]
    # thrifty admits the unknown verdict unverified (R11); the key waits for its cooldown
    assert [(e["rung"], e["allowed_connection_ids"], e["unverified_connection_ids"])
            for e in thrifty["pool"]] == [
        ("subscription", ["max"], ["max"]), *([] if cooling else [("cheap", ["key"], [])])]
    assert [(x["connection_id"], x["reason"]) for x in thrifty["excluded"]] == (
        [("key", "cooldown")] if cooling else [])
    assert next(r["spent_usd"] for r in thrifty["rungs"] if r["rung"] == "cheap") == spent


@pytest.mark.parametrize("instant", ["0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01"])
def test_an_instant_outside_utc_is_an_input_error(tmp_path: Path, instant: str) -> None:
    """Regression: these crashed with OverflowError when converted to UTC for a detail."""
    plan(tmp_path, [])
    (tmp_path / "quota.json").write_text(json.dumps({"readings": [
        reading("2026-11-29T11:59:00Z", window(50, reset_at=instant))]}), encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(tmp_path / "omniladder.toml")])
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"omniladder: error: {tmp_path / 'quota.json'}: "
                             "readings[0].windows[0].reset_at: timestamp out of range: in UTC "
                             "it falls before year 1 or after year 9999\n")
    plan(tmp_path, [])
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(tmp_path / "omniladder.toml"), "--now", instant])
    assert result.exit_code == 2, result.output
    assert "--now" in result.stderr
    assert "out of range" in result.stderr
