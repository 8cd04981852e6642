"""quota_snapshots rows → readings, and the notes an operator reads on stderr.

The importer's docstring and docs/sources.md#omniroute: rows of one connection within the
tolerance form one reading stamped with the group's latest created_at, carrying every
window's latest value; ``is_exhausted = 1`` is 0 %; ``fractionReported: false``, a stored 0
of a ``zero_is_sentinel`` window (older Copilot adapters, docs/sources.md#omniroute) and NULL
are no value; rows of unknown connections or after the import instant are skipped and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from omniladder.errors import InputError
from omniladder.sources.omniroute.database import RAW_DATA, SNAPSHOT_COLUMNS
from omniladder.sources.omniroute.options import ImportOptions
from omniladder.sources.omniroute.snapshots import map_snapshots
from tests.omniroute_direct import NOW, shipped

CONNECTIONS: list[dict[str, Any]] = [
    {"id": "gh", "provider": "github", "auth_type": "oauth",
     "models": ["claude-sonnet-4-5", "gpt-4.1"]},
    {"id": "cl", "provider": "claude", "auth_type": "oauth",
     "models": ["claude-sonnet-4-5", "claude-opus-4-5"]},
    {"id": "none", "provider": "nowhere", "auth_type": "apikey"},
]
_ids = iter(range(1, 10_000))


def _row(cid: Any, window: Any, remaining: Any, created: Any, *, exhausted: Any = 0,
         reset: Any = None, raw: Any = None, row_id: Any = None) -> dict[str, Any]:
    row = {"id": next(_ids) if row_id is None else row_id, "connection_id": cid,
           "window_key": window, "remaining_percentage": remaining, "is_exhausted": exhausted,
           "next_reset_at": reset, "created_at": created, RAW_DATA: raw}
    assert tuple(row) == (*SNAPSHOT_COLUMNS, RAW_DATA)
    return row


def _map(rows: Sequence[dict[str, Any]], *, since: datetime | None = None,
         group_seconds: float = 2.0, confirmed_at: datetime | None = None,
         connections: Sequence[dict[str, Any]] = CONNECTIONS
         ) -> tuple[list[dict[str, Any]], int, list[str]]:
    notes: list[str] = []
    _, scopes = shipped()
    options = ImportOptions(now=NOW, since=since, group_seconds=group_seconds,
                            confirmed_at=confirmed_at)
    readings, count = map_snapshots(rows, connections, options, scopes, "storage.sqlite",
                                    notes)
    return readings, count, notes


def _windows(reading: dict[str, Any]) -> dict[str, Any]:
    return {w["name"]: w["remaining_percent"] for w in reading.get("windows", ())}


T = "2026-11-29T11:00:00.000Z"


# --- values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("remaining", "exhausted", "raw", "written"), [
    (40, 1, None, 0),                                   # the writer's verdict: 0 %
    (40, "1", None, 0), (40, "true", None, 0),
    (40, 0, '{"fractionReported": true}', 40),
    (40, 0, '{"fractionReported": false}', None),        # no value
    (40, 1, '{"fractionReported": false}', 0),           # exhausted wins over the flag
    (40, 0, '["fractionReported", false]', 40),          # another shape says nothing
    (40, 0, '{"fractionReported": "false"}', 40),
    (40, 0, "fractionReported: false", 40),              # not JSON says nothing
    ("55.5", 0, None, 55.5), (None, 0, None, None), (True, 0, None, None),
])
def test_value_of_a_row(remaining: Any, exhausted: Any, raw: Any, written: Any) -> None:
    readings, _, _ = _map([_row("cl", "session (5h)", remaining, T, exhausted=exhausted,
                                raw=raw)])
    (reading,) = readings
    assert _windows(reading).get("session (5h)") == written


@pytest.mark.parametrize(("provider_window", "written"), [
    (("gh", "chat"), None),               # zero_is_sentinel: a stored 0 is no value
    (("gh", "premium_interactions"), 0),  # a real window at 0 is exhausted
    (("cl", "session (5h)"), 0),
])
def test_a_stored_zero_is_no_value_only_in_a_zero_is_sentinel_window(
        provider_window: tuple[str, str], written: Any) -> None:
    cid, window = provider_window
    rows = [_row(cid, window, 0, T), _row(cid, window, 0, "2026-11-29T11:30:00.000Z")]
    readings, _, notes = _map(rows)
    assert [_windows(r).get(window) for r in readings] == [written, written]
    sentinel = [n for n in notes if n.startswith("snapshot rows read as no value")]
    if written is None:
        assert sentinel == [
            "snapshot rows read as no value, not as exhaustion: 2 storing 0 in a window the "
            "window-scope catalog marks zero_is_sentinel (their windows are left out of the "
            "readings)"]
    else:
        assert sentinel == []


def test_the_sentinel_note_counts_each_kind() -> None:
    rows = [_row("cl", "session (5h)", 10, T, raw='{"fractionReported": false}'),
            _row("cl", "weekly (7d)", 10, T, raw='{"fractionReported": false}'),
            _row("gh", "chat", 0, T),
            _row("gh", "premium_interactions", None, T),
            _row("cl", "weekly opus (7d)", None, T),
            _row("cl", "weekly opus (7d)", None, "2026-11-29T11:30:00.000Z")]
    _, count, notes = _map(rows)
    assert count == 6
    assert ("snapshot rows read as no value, not as exhaustion: 2 with fractionReported "
            "false, 1 storing 0 in a window the window-scope catalog marks zero_is_sentinel, "
            "3 with no remaining_percentage (their windows are left out of the readings)"
            ) in notes


@pytest.mark.parametrize("raw", ["plenty", "nan", "inf", float("nan"), float("-inf")])
def test_an_unreadable_percentage_names_the_row(raw: Any) -> None:
    with pytest.raises(InputError) as caught:
        _map([_row("cl", "session (5h)", raw, T, row_id=42)])
    assert str(caught.value) == ("storage.sqlite: quota_snapshots[id=42].remaining_percentage: "
                                 f"not a number: {raw!r}")


def test_a_bad_reset_names_the_row() -> None:
    with pytest.raises(InputError) as caught:
        _map([_row("cl", "session (5h)", 5, T, reset="next week", row_id=7)])
    assert str(caught.value) == ("storage.sqlite: quota_snapshots[id=7].next_reset_at: not an "
                                 "ISO 8601 timestamp: 'next week'")


def test_rows_without_an_instant_a_window_or_a_connection_are_skipped() -> None:
    rows = [_row("cl", "session (5h)", 10, None), _row("cl", " ", 10, T),
            _row(None, "session (5h)", 10, T), _row("", "session (5h)", 10, T),
            _row("cl", "session (5h)", 30, T)]
    readings, count, notes = _map(rows)
    assert [_windows(r) for r in readings] == [{"session (5h)": 30}]
    assert count == 5
    assert not any("not in provider_connections" in n for n in notes)


# --- what is skipped, and counted ------------------------------------------------------------


def test_unknown_connections_are_counted_once_each() -> None:
    rows = [_row("ghost", "5h", 1, T), _row("ghost", "5h", 2, T), _row("spook", "5h", 3, T),
            _row("cl", "session (5h)", 30, T)]
    readings, count, notes = _map(rows)
    assert count == 4
    assert [r["connection"] for r in readings] == ["cl"]
    assert notes[0] == ("2 connection id(s) in quota_snapshots are not in provider_connections; "
                        "their rows were skipped")


def test_rows_after_the_import_instant_are_skipped_and_counted() -> None:
    after = NOW + timedelta(milliseconds=1)
    rows = [_row("cl", "session (5h)", 30, NOW.isoformat()),
            _row("cl", "session (5h)", 20, after.isoformat()),
            _row("gh", "premium_interactions", 20, after.isoformat())]
    readings, _, notes = _map(rows)
    assert [(r["checked_at"], _windows(r)) for r in readings] == [
        ("2026-11-29T12:00:00Z", {"session (5h)": 30})]
    assert notes[0] == "2 quota_snapshots row(s) dated after the import instant were skipped"


def test_a_connection_whose_rows_are_all_after_now_gets_no_reading() -> None:
    rows = [_row("gh", "premium_interactions", 20, (NOW + timedelta(hours=1)).isoformat()),
            _row("cl", "session (5h)", 30, T)]
    readings, _, _ = _map(rows)
    assert [r["connection"] for r in readings] == ["cl"]


# --- --since: the latest row before since per window ----------------------------------------


def test_the_latest_row_before_since_per_window_is_in_force() -> None:
    """Ties on created_at go to the higher row id (the later write)."""
    since = datetime(2026, 11, 29, 10, tzinfo=UTC)
    rows = [_row("cl", "session (5h)", 90, "2026-11-29T08:00:00.000Z", row_id=1),
            _row("cl", "session (5h)", 70, "2026-11-29T09:00:00.000Z", row_id=3),
            _row("cl", "session (5h)", 80, "2026-11-29T09:00:00.000Z", row_id=2),
            _row("cl", "weekly (7d)", 60, "2026-11-29T07:00:00.000Z", row_id=4),
            _row("cl", "session (5h)", 50, "2026-11-29T10:00:00.000Z", row_id=5)]
    readings, count, _ = _map(rows, since=since)
    assert count == 5
    assert [(r["checked_at"], _windows(r)) for r in readings] == [
        ("2026-11-29T09:00:00Z", {"session (5h)": 70, "weekly (7d)": 60}),
        ("2026-11-29T10:00:00Z", {"session (5h)": 50, "weekly (7d)": 60})]
    # the same rows in another order: the same answer
    again, _, _ = _map(list(reversed(rows)), since=since)
    assert again == readings


# --- grouping --------------------------------------------------------------------------------


@pytest.mark.parametrize(("gap", "tolerance", "groups"), [
    (2.0, 2.0, 1), (2.001, 2.0, 2), (0.0, 0.0, 1), (0.001, 0.0, 2),
])
def test_rows_within_the_tolerance_of_the_first_form_one_reading(
        gap: float, tolerance: float, groups: int) -> None:
    first = datetime(2026, 11, 29, 11, tzinfo=UTC)
    rows = [_row("cl", "session (5h)", 50, first.isoformat()),
            _row("cl", "weekly (7d)", 40, (first + timedelta(seconds=gap)).isoformat())]
    readings, _, _ = _map(rows, group_seconds=tolerance)
    assert len(readings) == groups
    assert _windows(readings[-1]) == {"session (5h)": 50, "weekly (7d)": 40}


def test_a_group_is_measured_from_its_first_row_not_chained() -> None:
    first = datetime(2026, 11, 29, 11, tzinfo=UTC)
    rows = [_row("cl", "session (5h)", 50 - n, (first + timedelta(seconds=1.5 * n)).isoformat())
            for n in range(3)]
    readings, _, _ = _map(rows)
    assert [(r["checked_at"], _windows(r)) for r in readings] == [
        ("2026-11-29T11:00:01.500000Z", {"session (5h)": 49}),
        ("2026-11-29T11:00:03Z", {"session (5h)": 48})]


# --- readings and scoping --------------------------------------------------------------------


def test_readings_follow_connection_order_then_time() -> None:
    rows = [_row("cl", "session (5h)", 50, "2026-11-29T11:30:00.000Z"),
            _row("gh", "premium_interactions", 40, "2026-11-29T11:40:00.000Z"),
            _row("cl", "session (5h)", 60, "2026-11-29T10:30:00.000Z"),
            _row("none", "monthly", 30, "2026-11-29T09:00:00.000Z")]
    readings, _, _ = _map(rows)
    assert [(r["connection"], r["checked_at"]) for r in readings] == [
        ("gh", "2026-11-29T11:40:00Z"), ("cl", "2026-11-29T10:30:00Z"),
        ("cl", "2026-11-29T11:30:00Z"), ("none", "2026-11-29T09:00:00Z")]


def test_a_reading_whose_windows_all_drop_is_status_unknown() -> None:
    rows = [_row("gh", "chat", 0, T), _row("cl", "session (5h)", 30, T)]
    readings, _, _ = _map(rows)
    assert readings[0] == {"connection": "gh", "checked_at": "2026-11-29T11:00:00Z",
                           "status": "unknown"}
    assert "status" not in readings[1]


def test_scoping_notes_count_each_connection_window_once() -> None:
    """Across readings and across the value in force before since, one count per
    (connection, window name)."""
    since = datetime(2026, 11, 29, 10, tzinfo=UTC)
    rows = [_row("cl", "mystery-window", 20, "2026-11-29T08:00:00.000Z"),
            _row("cl", "mystery-window", 30, "2026-11-29T11:00:00.000Z"),
            _row("cl", "other-window", 30, "2026-11-29T11:00:00.000Z"),
            _row("cl", "weekly opus (7d)", 30, "2026-11-29T11:00:00.000Z"),  # cl has Opus
            _row("gh", "mystery-window", 30, "2026-11-29T11:00:00.000Z"),
            _row("gh", "mystery-window", 40, "2026-11-29T11:30:00.000Z"),
            _row("sonnet", "weekly opus (7d)", 40, "2026-11-29T11:30:00.000Z"),
            _row("sonnet", "session (5h)", 40, "2026-11-29T11:30:00.000Z")]
    connections = [{"id": "idle", "provider": "claude", "auth_type": "oauth",
                    "models": ["claude-opus-4-5"]}, *CONNECTIONS,
                   {"id": "sonnet", "provider": "claude", "auth_type": "oauth",
                    "models": ["claude-sonnet-4-5"]}]
    readings, _, notes = _map(rows, since=since, connections=connections)
    assert notes == [
        "windows dropped: they limit none of the connection's models (count: connections): "
        "'weekly opus (7d)' ×1",
        "windows not in the window-scope catalog: read as limiting every model "
        "(count: connections): 'mystery-window' ×2, 'other-window' ×1"]
    assert [_windows(r) for r in readings if r["connection"] == "sonnet"] == [
        {"session (5h)": 40}]


def test_confirmed_at_adds_a_reading_only_where_it_is_newer() -> None:
    rows = [_row("cl", "session (5h)", 30, "2026-11-29T11:00:00.000Z", reset=None),
            _row("gh", "premium_interactions", 40, "2026-11-29T11:30:00.000Z"),
            _row("none", "monthly", 20, "2026-11-29T10:00:00.000Z")]
    at = datetime(2026, 11, 29, 11, 30, tzinfo=UTC)
    readings, _, notes = _map(rows, confirmed_at=at)
    assert [(r["connection"], r["checked_at"], _windows(r)) for r in readings] == [
        ("gh", "2026-11-29T11:30:00Z", {"premium_interactions": 40}),
        ("cl", "2026-11-29T11:00:00Z", {"session (5h)": 30}),
        ("cl", "2026-11-29T11:30:00Z", {"session (5h)": 30}),
        ("none", "2026-11-29T10:00:00Z", {"monthly": 20}),
        ("none", "2026-11-29T11:30:00Z", {"monthly": 20})]
    assert notes[-1] == ("--confirmed-at 2026-11-29T11:30:00Z: 2 connection(s) got one more "
                         "reading carrying their latest values (the others have none, or a "
                         "newer reading)")


@pytest.mark.parametrize("order", [1, -1], ids=["as-stored", "reversed"])
def test_a_row_id_that_is_no_integer_loses_a_tie_before_since(order: int) -> None:
    """Ties on created_at before since go to the higher integer id; an id that is no integer
    (a database not created by OmniRoute's schema) counts as 0, whatever the read order."""
    since = datetime(2026, 11, 29, 10, tzinfo=UTC)
    at = "2026-11-29T09:00:00.000Z"
    rows = [_row("cl", "session (5h)", 70, at, row_id="x"),
            _row("cl", "session (5h)", 80, at, row_id=1),
            _row("cl", "session (5h)", 50, "2026-11-29T10:30:00.000Z", row_id=9)][::order]
    readings, _, _ = _map(rows, since=since)
    assert [_windows(r) for r in readings] == [{"session (5h)": 80}, {"session (5h)": 50}]
