"""Codex rollout files and lines (docs/sources.md#codex-sessions; SPEC §6): which lines are
readings, and the exact message an operator gets for each unusable one, naming ``file:line``
and the field.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from omniladder.errors import InputError
from omniladder.inputs.files import SYMLINK_LOOP
from omniladder.sources.codex_sessions import RolloutFile, find_rollouts, parse_line, read_file

WHERE = "rollout-1.jsonl:7"
STAMP = "2026-11-29T10:00:00Z"


def _line(limits: Any = None, *, timestamp: Any = STAMP, kind: str = "event_msg",
          payload_type: str = "token_count") -> dict[str, Any]:
    payload: dict[str, Any] = {"type": payload_type, "info": None}
    if limits is not None:
        payload["rate_limits"] = limits
    line: dict[str, Any] = {"type": kind, "payload": payload}
    if timestamp is not None:
        line["timestamp"] = timestamp
    return line


def _message(line: Any) -> str:
    with pytest.raises(InputError) as excinfo:
        parse_line(line, WHERE)
    return str(excinfo.value)


# --- which lines carry a reading -----------------------------------------------------------

LIMITS = {"primary": {"used_percent": 10, "window_minutes": 300}}


@pytest.mark.parametrize("line", [
    [1, 2], "token_count", 5, None,                        # JSON that is not an object
    {"type": "response_item", "payload": {"type": "token_count", "rate_limits": LIMITS},
     "timestamp": STAMP},                                  # not an event_msg
    {"type": "event_msg", "payload": "token_count"},       # payload not an object
    {"type": "event_msg", "payload": [LIMITS]},
    {"type": "event_msg", "timestamp": STAMP,
     "payload": {"type": "agent_message", "rate_limits": LIMITS}},  # another event
])
def test_only_token_count_events_are_readings_and_other_lines_are_skipped(line: Any) -> None:
    """docs/sources.md#codex-sessions: lines of other types carry no reading (and are no error)."""
    assert parse_line(line, WHERE) is None


def test_odd_json_lines_in_a_file_are_skipped_not_fatal(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-1.jsonl"
    lines = ["[1, 2]", '"text"', "5", "null", json.dumps(_line(LIMITS)), ""]
    rollout.write_text("\n".join(lines) + "\n", encoding="utf-8")
    readings = list(read_file(RolloutFile(rollout, "rollout-1.jsonl")))
    assert [r.checked_at for r in readings] == [datetime(2026, 11, 29, 10, 0, tzinfo=UTC)]


# --- exact messages: file:line, field path, problem ----------------------------------------


@pytest.mark.parametrize(("line", "expected"), [
    (_line(5), f"{WHERE}: payload.rate_limits: expected an object, got 5"),
    (_line(LIMITS, timestamp="yesterday"),
     f'{WHERE}: timestamp: expected an RFC 3339 timestamp, got "yesterday"'),
    (_line(LIMITS, timestamp=None),
     f"{WHERE}: timestamp: a token_count event without a timestamp"),
    (_line({"primary": 5}), f"{WHERE}: payload.rate_limits.primary: expected an object, got 5"),
    (_line({"secondary": []}),
     f"{WHERE}: payload.rate_limits.secondary: expected an object, got []"),
    (_line({"primary": {"used_percent": 1, "resets_in_seconds": -1}}),
     f"{WHERE}: payload.rate_limits.primary.resets_in_seconds: expected a number of "
     "seconds ≥ 0, got -1"),
    (_line({"credits": "plenty"}),
     f'{WHERE}: payload.rate_limits.credits: expected an object, got "plenty"'),
    (_line({"credits": {"has_credits": True, "unlimited": "no"}}),
     f'{WHERE}: payload.rate_limits.credits.unlimited: expected true or false, got "no"'),
])
def test_unusable_values_name_file_line_and_field(line: dict[str, Any], expected: str) -> None:
    assert _message(line) == expected


def test_a_reading_without_a_timestamp_is_an_error_not_skipped() -> None:
    """A token_count event with rate limits but no timestamp cannot be placed in time."""
    with pytest.raises(InputError) as excinfo:
        parse_line(_line(LIMITS, timestamp=None), WHERE)
    assert (excinfo.value.file, excinfo.value.field) == (WHERE, "timestamp")


def test_read_file_names_the_line_of_a_bad_value(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-1.jsonl"
    rollout.write_text(json.dumps(_line(LIMITS)) + "\n\n"
                       + json.dumps(_line({"primary": {"used_percent": "x"}})) + "\n",
                       encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        list(read_file(RolloutFile(rollout, "logs/rollout-1.jsonl")))
    assert str(excinfo.value) == ('logs/rollout-1.jsonl:3: payload.rate_limits.primary.'
                                  'used_percent: expected a number 0–100 (percent used), '
                                  'got "x"')


def test_relative_reset_is_counted_from_the_line_time() -> None:
    reading = parse_line(_line({"primary": {"used_percent": 1, "resets_in_seconds": 90}}),
                         WHERE)
    assert reading is not None
    assert reading.windows[0].reset_at == datetime(2026, 11, 29, 10, 0, tzinfo=UTC) + \
        timedelta(seconds=90)


# --- credits → observed overage, each flag on its own --------------------------------------


@pytest.mark.parametrize(("credits", "overage"), [
    ({"has_credits": True}, "meters-to-paid"),
    ({"has_credits": False}, "hard-stop"),
    ({"unlimited": True}, "meters-to-paid"),
    ({"unlimited": False}, "hard-stop"),
    ({"has_credits": False, "unlimited": False}, "hard-stop"),
    ({"has_credits": True, "unlimited": False}, "meters-to-paid"),
    ({"has_credits": None, "unlimited": None}, None),
    ({}, None),
])
def test_either_credit_flag_alone_decides_the_overage(credits: dict[str, Any],
                                                      overage: str | None) -> None:
    """docs/sources.md#codex-sessions: has_credits or unlimited true → meters-to-paid; both false →
    hard-stop; absent → none. One flag present is enough."""
    reading = parse_line(_line({"credits": credits}), WHERE)
    assert reading is not None
    assert reading.overage == overage


# --- finding rollout files -----------------------------------------------------------------


def _rollout(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(_line(LIMITS)) + "\n", encoding="utf-8")
    return path


def test_files_and_folders_given_together_are_all_read(tmp_path: Path) -> None:
    one = _rollout(tmp_path / "a" / "2026" / "11", "rollout-1.jsonl")
    two = _rollout(tmp_path / "b", "rollout-2.jsonl")
    three = _rollout(tmp_path / "c", "rollout-3.jsonl")
    found = find_rollouts([(tmp_path / "a", "a"), (tmp_path / "b", "b"), (three, "c/r3")])
    assert found == [RolloutFile(one, str(Path("a/2026/11/rollout-1.jsonl"))),
                     RolloutFile(two, str(Path("b/rollout-2.jsonl"))),
                     RolloutFile(three, "c/r3")]


def test_a_file_given_directly_is_read_under_the_name_given(tmp_path: Path) -> None:
    path = _rollout(tmp_path, "session.jsonl")  # any name: the glob is for folders only
    found = find_rollouts([(path, "my-session.jsonl")])
    assert found == [RolloutFile(path, "my-session.jsonl")]
    assert len(list(read_file(found[0]))) == 1


def test_the_same_file_twice_is_read_once(tmp_path: Path) -> None:
    path = _rollout(tmp_path, "rollout-1.jsonl")
    assert find_rollouts([(path, "r"), (path, "r")]) == [RolloutFile(path, "r")]


def test_a_folder_without_rollouts_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError) as excinfo:
        find_rollouts([(tmp_path, "sessions")])
    assert str(excinfo.value) == "sessions: no rollout-*.jsonl files in this folder or below it"


def test_a_missing_path_names_itself(tmp_path: Path) -> None:
    with pytest.raises(InputError) as excinfo:
        find_rollouts([(tmp_path / "gone", "gone")])
    assert str(excinfo.value) == "gone: file or folder not found"


def test_a_symlink_loop_names_the_path_given(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    with pytest.raises(InputError) as excinfo:
        find_rollouts([(loop, "loop")])
    assert str(excinfo.value) == f"loop: {SYMLINK_LOOP}"


@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: p.mkdir(), "is a directory, not a file"),
    (lambda p: None, "file not found"),
    (lambda p: os.mkfifo(p), "is a named pipe (FIFO), not a regular file; omniladder reads "
     "only regular files"),
])
def test_a_rollout_that_cannot_be_opened_names_the_file_and_why(
        tmp_path: Path, make: Any, reason: str) -> None:
    path = tmp_path / "rollout-1.jsonl"
    make(path)
    with pytest.raises(InputError) as excinfo:
        list(read_file(RolloutFile(path, "logs/rollout-1.jsonl")))
    assert str(excinfo.value) == f"logs/rollout-1.jsonl: {reason}"
