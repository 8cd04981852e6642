"""Merging imported readings into a quota file (SPEC §6, "Merging")."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from omniladder.errors import InputError, UsageError
from omniladder.inputs.documents import load_model
from omniladder.models import QuotaFile
from omniladder.sources.merge import merge_readings


def _reading(connection: str, checked_at: str, remaining: float = 50,
             **extra: Any) -> dict[str, Any]:
    return {"connection": connection, "checked_at": checked_at,
            "windows": [{"name": "5h", "remaining_percent": remaining,
                         "reset_at": "2026-11-29T15:00:00Z"}], **extra}


OTHER = {"connection": "other", "checked_at": "2026-11-29T09:00:00+00:00",
         "remaining_percent": 12.5, "reset_at": "2026-11-29T10:00:00+00:00"}


def test_a_missing_file_is_created_with_readings_in_order_and_taken_at(tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    outcome = merge_readings(path, [_reading("b", "2026-11-29T11:00:00Z"),
                                    _reading("a", "2026-11-29T11:30:00Z"),
                                    _reading("a", "2026-11-29T10:00:00Z")])
    assert (outcome.created, outcome.added, outcome.skipped) == (True, 3, 0)
    data = json.loads(path.read_text())
    assert data["taken_at"] == "2026-11-29T11:30:00Z"
    assert [(r["connection"], r["checked_at"]) for r in data["readings"]] == [
        ("a", "2026-11-29T10:00:00Z"), ("a", "2026-11-29T11:30:00Z"),
        ("b", "2026-11-29T11:00:00Z")]
    load_model(QuotaFile, path)  # the planner's loader accepts it


def test_reimport_is_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    readings = [_reading("a", "2026-11-29T11:00:00Z", overage="hard-stop")]
    merge_readings(path, readings)
    before = path.read_bytes()
    again = merge_readings(path, readings)
    assert (again.added, again.skipped, again.written) == (0, 1, False)
    assert path.read_bytes() == before


def test_identical_means_the_same_instant_and_figure_however_written(tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    path.write_text(json.dumps({"readings": [
        _reading("a", "2026-11-29T12:00:00+00:00", 10.0)]}))
    before = path.read_bytes()
    outcome = merge_readings(path, [_reading("a", "2026-11-29T13:00:00+01:00", 10)])
    assert outcome.skipped == 1
    assert path.read_bytes() == before


def test_a_different_reading_at_the_same_instant_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z", 50)])
    before = path.read_bytes()
    with pytest.raises(InputError) as excinfo:
        merge_readings(path, [_reading("a", "2026-11-29T11:00:00.000Z", 40)])
    message = str(excinfo.value)
    assert message.startswith(f"{path}: readings[0] already holds a different reading")
    assert "'a'" in message
    assert "2026-11-29T11:00:00Z" in message
    assert excinfo.value.exit_code == 2
    assert path.read_bytes() == before


def test_two_different_readings_of_one_instant_in_one_import_are_an_error(
        tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    with pytest.raises(InputError, match="the import itself holds a different reading"):
        merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z", 50),
                              _reading("a", "2026-11-29T11:00:00Z", 49)])
    assert not path.exists()


def test_the_same_instant_of_another_connection_is_no_conflict(tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z", 50)])
    outcome = merge_readings(path, [_reading("b", "2026-11-29T11:00:00Z", 40)])
    assert outcome.added == 1


def test_other_connections_readings_are_untouched(tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    path.write_text(json.dumps({"taken_at": "2026-11-29T09:00:00Z", "readings": [OTHER]}))
    merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z")])
    readings = json.loads(path.read_text())["readings"]
    assert readings[1] == OTHER  # as written, offsets and all


def test_taken_at_becomes_the_latest_checked_at_and_never_moves_back(tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    path.write_text(json.dumps({"taken_at": "2026-11-29T09:00:00Z", "readings": [OTHER]}))
    merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z")])
    assert json.loads(path.read_text())["taken_at"] == "2026-11-29T11:00:00Z"
    merge_readings(path, [_reading("a", "2026-11-29T08:00:00Z")])
    assert json.loads(path.read_text())["taken_at"] == "2026-11-29T11:00:00Z"


def test_a_toml_quota_file_stays_toml_and_reimports_identically(tmp_path: Path) -> None:
    path = tmp_path / "quota.toml"
    path.write_text('taken_at = 2026-11-29T09:00:00Z\n\n[[readings]]\nconnection = "other"\n'
                    'checked_at = 2026-11-29T09:00:00Z\nstatus = "unknown"\n')
    readings = [_reading("a", "2026-11-29T11:00:00Z")]
    merge_readings(path, readings)
    data = tomllib.loads(path.read_text())
    assert [r["connection"] for r in data["readings"]] == ["a", "other"]
    assert load_model(QuotaFile, path).readings[0].windows is not None
    before = path.read_bytes()
    assert merge_readings(path, readings).skipped == 1
    assert path.read_bytes() == before


def test_an_invalid_existing_quota_file_is_named_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    path.write_text('{"readings": [{"connection": "a"}]}')
    with pytest.raises(InputError, match=r"quota\.json: readings\[0\]\.checked_at"):
        merge_readings(path, [_reading("a", "2026-11-29T11:00:00Z")])
    assert path.read_text() == '{"readings": [{"connection": "a"}]}'


def test_the_quota_file_must_be_json_or_toml(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"must be a \.json or \.toml file"):
        merge_readings(tmp_path / "quota.yaml", [])
