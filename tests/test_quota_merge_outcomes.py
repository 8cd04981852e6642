"""Merging imported readings into a quota file (SPEC §6, "Merging"): what the merge reports
back (added, skipped, created, written, taken_at — the import's stderr line says "created",
"updated" or "unchanged" from them), the exact bytes it writes in each format, and the
exact messages of the inputs it refuses.
"""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from omniladder.errors import InputError, UsageError
from omniladder.sources.merge import MergeOutcome, merge_readings


def _reading(connection: str, checked_at: Any, remaining: Any = 50) -> dict[str, Any]:
    return {"connection": connection, "checked_at": checked_at,
            "windows": [{"name": "5h", "remaining_percent": remaining}]}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work inside tmp_path, so files are shown by their plain names."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


# --- what the merge reports back -------------------------------------------------------------


def test_a_new_file_is_created_and_reported_so(here: Path) -> None:
    path = here / "quota.json"
    outcome = merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z")])
    assert outcome == MergeOutcome(path=path, created=True, added=1, skipped=0, written=True,
                                   taken_at=_at("2026-11-29T11:00:00+00:00"))


def test_an_updated_file_is_reported_written_not_created(here: Path) -> None:
    path = here / "quota.json"
    merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z")])
    outcome = merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z"),
                                    _reading("a", "2026-11-29T12:00:00Z")])
    assert outcome == MergeOutcome(path=path, created=False, added=1, skipped=1, written=True,
                                   taken_at=_at("2026-11-29T12:00:00+00:00"))


def test_nothing_new_leaves_the_file_unwritten_and_reports_its_taken_at(here: Path) -> None:
    path = here / "quota.json"
    path.write_text(json.dumps({"taken_at": "2026-11-29T13:00:00Z",
                                "readings": [_reading("a", "2026-11-29T11:00:00Z")]}))
    before = path.read_bytes()
    outcome = merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z"),
                                    _reading("a", "2026-11-29T11:00:00+00:00")])
    assert outcome == MergeOutcome(path=path, created=False, added=0, skipped=2, written=False,
                                   taken_at=_at("2026-11-29T13:00:00+00:00"))
    assert path.read_bytes() == before


def test_a_duplicate_does_not_stop_the_readings_after_it(here: Path) -> None:
    path = here / "quota.json"
    merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z")])
    outcome = merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z"),
                                    _reading("a", "2026-11-29T12:00:00Z"),
                                    _reading("b", "2026-11-29T11:00:00Z")])
    assert (outcome.added, outcome.skipped) == (2, 1)
    readings = json.loads(path.read_text())["readings"]
    assert [(r["connection"], r["checked_at"]) for r in readings] == [
        ("a", "2026-11-29T11:00:00Z"), ("a", "2026-11-29T12:00:00Z"),
        ("b", "2026-11-29T11:00:00Z")]


def test_a_snapshot_taken_after_its_readings_keeps_its_taken_at(here: Path) -> None:
    """taken_at never moves back: a later snapshot instant stays when older readings come."""
    path = here / "quota.json"
    path.write_text(json.dumps({"taken_at": "2026-11-29T12:00:00Z",
                                "readings": [_reading("a", "2026-11-29T09:00:00Z")]}))
    outcome = merge_readings(path, [_reading("a", "2026-11-29T10:00:00Z")])
    assert outcome.taken_at == _at("2026-11-29T12:00:00+00:00")
    assert json.loads(path.read_text())["taken_at"] == "2026-11-29T12:00:00Z"


def test_a_file_with_only_taken_at_takes_readings(here: Path) -> None:
    path = here / "quota.json"
    path.write_text(json.dumps({"taken_at": "2026-11-29T08:00:00Z"}))
    outcome = merge_readings(path, [_reading("a", "2026-11-29T10:00:00Z")])
    assert (outcome.created, outcome.added, outcome.written) == (False, 1, True)
    assert json.loads(path.read_text())["taken_at"] == "2026-11-29T10:00:00Z"


def test_importing_nothing_into_a_file_without_readings_changes_nothing(here: Path) -> None:
    path = here / "quota.json"
    path.write_text('{"taken_at": "2026-11-29T08:00:00Z", "readings": []}')
    outcome = merge_readings(path, [])
    assert outcome == MergeOutcome(path=path, created=False, added=0, skipped=0, written=False,
                                   taken_at=_at("2026-11-29T08:00:00+00:00"))
    assert path.read_text() == '{"taken_at": "2026-11-29T08:00:00Z", "readings": []}'


def test_importing_nothing_into_a_missing_file_creates_an_empty_quota_file(here: Path) -> None:
    path = here / "quota.json"
    outcome = merge_readings(path, [])
    assert outcome == MergeOutcome(path=path, created=True, added=0, skipped=0, written=True,
                                   taken_at=None)
    assert path.read_text() == '{\n  "readings": []\n}\n'


# --- what it writes, byte for byte ---------------------------------------------------------


def test_json_is_written_indented_by_two_with_text_as_is(here: Path) -> None:
    path = here / "quota.json"
    document = {"connection": "zürich-1", "checked_at": "2026-11-29T11:00:00+01:00",
                "windows": [{"name": "wöchentlich", "remaining_percent": 5}]}
    merge_readings(path, [document])
    assert path.read_text(encoding="utf-8") == (
        '{\n'
        '  "taken_at": "2026-11-29T10:00:00Z",\n'
        '  "readings": [\n'
        '    {\n'
        '      "connection": "zürich-1",\n'
        '      "checked_at": "2026-11-29T11:00:00+01:00",\n'
        '      "windows": [\n'
        '        {\n'
        '          "name": "wöchentlich",\n'
        '          "remaining_percent": 5\n'
        '        }\n'
        '      ]\n'
        '    }\n'
        '  ]\n'
        '}\n')


def test_instants_given_as_datetimes_are_written_as_rfc3339(here: Path) -> None:
    path = here / "quota.json"
    at = datetime(2026, 11, 29, 12, 0, 0, 500000, tzinfo=timezone(timedelta(hours=1)))
    merge_readings(path, [_reading("a", at)])
    data = json.loads(path.read_text())
    assert data["readings"][0]["checked_at"] == "2026-11-29T11:00:00.500000Z"
    assert data["taken_at"] == "2026-11-29T11:00:00.500000Z"


def test_a_value_json_cannot_carry_is_refused_before_anything_is_written(here: Path) -> None:
    path = here / "quota.json"
    with pytest.raises(TypeError) as excinfo:
        merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z", Decimal("10.5"))])
    assert str(excinfo.value) == "cannot write Decimal to JSON"
    assert not path.exists()


def test_toml_instants_are_written_as_toml_datetimes(here: Path) -> None:
    """A TOML quota file carries instants as TOML datetimes, as a hand-written one does."""
    path = here / "quota.toml"
    document = _reading("a", "2026-11-29T11:00:00Z")
    document["windows"][0]["reset_at"] = "2026-11-29T15:00:00+00:00"
    merge_readings(path, [document])
    data = tomllib.loads(path.read_text())
    assert data["taken_at"] == datetime(2026, 11, 29, 11, tzinfo=UTC)
    assert data["readings"][0]["checked_at"] == datetime(2026, 11, 29, 11, tzinfo=UTC)
    assert data["readings"][0]["windows"][0]["reset_at"] == datetime(2026, 11, 29, 15,
                                                                     tzinfo=UTC)
    assert data["readings"][0]["windows"][0]["name"] == "5h"


# --- what it refuses -------------------------------------------------------------------------


def test_another_format_is_a_usage_error_naming_the_option(here: Path) -> None:
    with pytest.raises(UsageError) as excinfo:
        merge_readings(here / "quota.yaml", [])
    assert str(excinfo.value) == ("--quota: the quota file must be a .json or .toml file, got "
                                  "'quota.yaml'")
    assert excinfo.value.field == "--quota"


def test_a_conflicting_reading_is_refused_with_the_whole_reason(here: Path) -> None:
    path = here / "quota.json"
    merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z")])
    with pytest.raises(InputError) as excinfo:
        merge_readings(path, [_reading("a", "2026-11-29T12:00:00+01:00", 40)])
    assert str(excinfo.value) == (
        "quota.json: readings[0] already holds a different reading of connection 'a' at "
        "2026-11-29T11:00:00Z; two observations of one instant cannot disagree (remove one, "
        "or import into another file)")


def test_a_bad_toml_quota_file_is_named_with_its_line(here: Path) -> None:
    path = here / "quota.toml"
    text = ('taken_at = 2026-11-29T09:00:00Z\n\n[[readings]]\nconnection = "a"\n'
            'checked_at = "soon"\n')
    path.write_text(text)
    with pytest.raises(InputError) as excinfo:
        merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z")])
    assert str(excinfo.value).startswith("quota.toml:5: readings[0].checked_at: ")
    assert path.read_text() == text


def test_a_reading_no_quota_file_could_hold_is_a_program_error(here: Path) -> None:
    """Sources only build valid readings; one that is not is a bug, said as such."""
    with pytest.raises(AssertionError) as excinfo:
        merge_readings(here / "quota.json", [{"connection": "a"}])
    assert str(excinfo.value).startswith("an imported reading is not a valid reading: ")
    assert "checked_at" in str(excinfo.value)
    assert not (here / "quota.json").exists()
