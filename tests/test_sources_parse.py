"""Each quota source parses its telemetry in its own units (SPEC §6, docs/sources.md#unit-traps).

Every test here would fail on a unit mix-up an operator would notice: a used percent read as
remaining, a fraction read as a percent, epoch seconds read wrong, a null read as 0.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from omniladder.errors import InputError
from omniladder.inputs.scopes import load_window_scopes, window_base
from omniladder.sources import claude_usage, codex_sessions, copilot_user, gemini_quota
from omniladder.sources.codex_sessions import RolloutFile, find_rollouts, read_file
from omniladder.sources.common import SourceReading, SourceWindow
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "sources"
AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def _load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _windows(reading: SourceReading) -> dict[str, SourceWindow]:
    return {window.name: window for window in reading.windows}


def _error(excinfo: pytest.ExceptionInfo[InputError]) -> str:
    return str(excinfo.value)


# --- Claude: utilization is percent USED ----------------------------------------------------


def test_claude_utilization_is_used_so_remaining_is_its_complement() -> None:
    reading = claude_usage.parse(_load("claude/usage.json"), "usage.json", AT)
    windows = _windows(reading)
    assert windows["seven_day"].remaining_percent == 10  # utilization 90, not 90 remaining
    assert windows["five_hour"].remaining_percent == 63
    assert windows["seven_day_opus"].remaining_percent == 0
    assert reading.checked_at == AT


def test_claude_null_windows_are_absent_not_zero() -> None:
    windows = _windows(claude_usage.parse(_load("claude/usage.json"), "usage.json", AT))
    assert set(windows) == {"five_hour", "seven_day", "seven_day_opus"}


def test_claude_reset_instants_keep_their_offset_and_fraction() -> None:
    windows = _windows(claude_usage.parse(_load("claude/usage.json"), "usage.json", AT))
    assert windows["five_hour"].reset_at == datetime(2026, 11, 29, 15, 0, 0, 412345, tzinfo=UTC)
    # "+00:00" and "Z" are one instant
    assert windows["seven_day"].reset_at == windows["seven_day_opus"].reset_at


def test_claude_extra_usage_is_the_observed_overage_never_a_window() -> None:
    off = claude_usage.parse(_load("claude/usage.json"), "usage.json", AT)
    on = claude_usage.parse(_load("claude/usage-extra-enabled.json"), "usage.json", AT)
    assert off.overage == "hard-stop"
    assert on.overage == "meters-to-paid"
    assert "extra_usage" not in _windows(on)
    assert claude_usage.parse({"five_hour": None}, "usage.json", AT).overage is None


def test_claude_future_windows_are_read_and_other_objects_are_not() -> None:
    windows = _windows(claude_usage.parse(_load("claude/usage-extra-enabled.json"),
                                          "usage.json", AT))
    assert windows["seven_day_future"].remaining_percent == 95
    assert "plan_info" not in windows
    assert windows["five_hour"].reset_at is None  # resets_at null: no reset, not an error


def test_claude_usage_past_the_plan_reads_as_nothing_left() -> None:
    reading = claude_usage.parse({"five_hour": {"utilization": 104.5}}, "usage.json", AT)
    assert _windows(reading)["five_hour"].remaining_percent == 0


@pytest.mark.parametrize(("value", "shown"), [
    ("abc", '"abc"'), (-1, "-1"), (True, "true"), ([], "[]"),
])
def test_claude_bad_utilization_names_file_and_field(value: Any, shown: str) -> None:
    with pytest.raises(InputError) as excinfo:
        claude_usage.parse({"seven_day": {"utilization": value}}, "usage.json", AT)
    assert _error(excinfo) == (f"usage.json: seven_day.utilization: expected a number 0–100 "
                               f"(percent used), got {shown}")


@pytest.mark.parametrize("value", ["next tuesday", "2026-12-02T08:00:00", 1796284800])
def test_claude_bad_reset_names_the_field(value: Any) -> None:
    with pytest.raises(InputError) as excinfo:
        claude_usage.parse({"seven_day": {"utilization": 5, "resets_at": value}},
                           "usage.json", AT)
    assert _error(excinfo).startswith("usage.json: seven_day.resets_at: expected an RFC 3339")


def test_claude_document_must_be_an_object() -> None:
    with pytest.raises(InputError, match=r"usage\.json: the top level: expected an object"):
        claude_usage.parse([1, 2], "usage.json", AT)


# --- Codex: used_percent is USED, resets_at is epoch seconds --------------------------------


def _codex_readings() -> list[SourceReading]:
    files = find_rollouts([(FIXTURES / "codex", "codex")])
    return [reading for rollout in files for reading in read_file(rollout)]


def test_codex_finds_rollouts_recursively_in_path_order() -> None:
    files = find_rollouts([(FIXTURES / "codex", "codex")])
    assert [Path(f.shown).parts[-4:-1] for f in files] == [("2025", "10", "01"),
                                                           ("2026", "11", "29")]


def test_codex_each_token_count_with_rate_limits_is_one_reading_at_the_line_time() -> None:
    readings = _codex_readings()
    assert [r.checked_at for r in readings] == [
        datetime(2025, 10, 1, 9, 0, 10, 500000, tzinfo=UTC),
        datetime(2026, 11, 29, 10, 0, 4, 250000, tzinfo=UTC),
        datetime(2026, 11, 29, 10, 20, tzinfo=UTC),
    ]


def test_codex_used_percent_is_used_and_resets_at_is_epoch_seconds() -> None:
    current = _windows(_codex_readings()[1])
    assert current["session"].remaining_percent == 58  # used 42
    assert current["weekly"].remaining_percent == 24.5  # used 75.5
    assert current["session"].reset_at == datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    assert current["weekly"].reset_at == datetime(2026, 12, 3, 8, 0, tzinfo=UTC)


def test_codex_windows_are_named_by_length_not_by_slot() -> None:
    # The last line lists `secondary` (10080 minutes) first, at 100 % used.
    last = _windows(_codex_readings()[2])
    assert last["weekly"].remaining_percent == 0
    assert last["session"].remaining_percent == 45
    swapped = codex_sessions.parse_line(_token_count(
        {"primary": {"used_percent": 90, "window_minutes": 10080},
         "secondary": {"used_percent": 10, "window_minutes": 300}}), "x.jsonl:1")
    assert swapped is not None
    assert _windows(swapped)["weekly"].remaining_percent == 10
    assert _windows(swapped)["session"].remaining_percent == 90


def test_codex_older_resets_in_seconds_counts_from_the_line_timestamp() -> None:
    old = _windows(_codex_readings()[0])
    line_time = datetime(2025, 10, 1, 9, 0, 10, 500000, tzinfo=UTC)
    assert old["session"].reset_at == line_time + timedelta(hours=1)
    assert old["weekly"].reset_at == line_time + timedelta(days=1)


def test_codex_credits_are_the_observed_overage() -> None:
    old, exhausted, funded = _codex_readings()
    assert old.overage is None  # older files carry no credits
    assert exhausted.overage == "hard-stop"
    assert funded.overage == "meters-to-paid"
    unlimited = codex_sessions.parse_line(_token_count(
        {"credits": {"has_credits": False, "unlimited": True}}), "x.jsonl:1")
    assert unlimited is not None
    assert unlimited.overage == "meters-to-paid"


def test_codex_other_window_lengths_keep_their_length_in_the_name() -> None:
    reading = codex_sessions.parse_line(_token_count(
        {"primary": {"used_percent": 5, "window_minutes": 60},
         "secondary": {"used_percent": 7}}), "x.jsonl:1")
    assert reading is not None
    assert set(_windows(reading)) == {"60m", "secondary"}


def _token_count(limits: dict[str, Any] | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"type": "token_count", "info": None}
    if limits is not None:
        payload["rate_limits"] = limits
    return {"timestamp": "2026-11-29T10:00:00Z", "type": "event_msg", "payload": payload}


def test_codex_lines_without_rate_limits_carry_no_reading() -> None:
    assert codex_sessions.parse_line(_token_count(None), "x.jsonl:1") is None
    assert codex_sessions.parse_line({"type": "event_msg", "payload": {
        "type": "agent_message"}}, "x.jsonl:1") is None
    assert codex_sessions.parse_line({"type": "session_meta"}, "x.jsonl:1") is None


def test_codex_a_line_that_is_not_json_names_file_and_line(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-1.jsonl"
    rollout.write_text(json.dumps(_token_count({})) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        list(read_file(RolloutFile(rollout, "rollout-1.jsonl")))
    assert _error(excinfo) == "rollout-1.jsonl:2: not a JSON line"


@pytest.mark.parametrize(("limits", "field", "expected"), [
    ({"primary": {"used_percent": "lots", "window_minutes": 300}},
     "payload.rate_limits.primary.used_percent", "a number 0–100 (percent used)"),
    ({"primary": {"used_percent": 5, "resets_at": "2026-11-29T15:00:00Z"}},
     "payload.rate_limits.primary.resets_at", "epoch seconds"),
    ({"secondary": {"used_percent": 5, "window_minutes": 7.5}},
     "payload.rate_limits.secondary.window_minutes", "a whole number of minutes > 0"),
    ({"credits": {"has_credits": "yes"}},
     "payload.rate_limits.credits.has_credits", "true or false"),
])
def test_codex_bad_values_name_file_line_and_field(limits: dict[str, Any], field: str,
                                                   expected: str) -> None:
    with pytest.raises(InputError) as excinfo:
        codex_sessions.parse_line(_token_count(limits), "rollout-1.jsonl:7")
    assert _error(excinfo).startswith(f"rollout-1.jsonl:7: {field}: expected {expected}, got")


def test_codex_a_folder_without_rollouts_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no rollout-\*\.jsonl files"):
        find_rollouts([(tmp_path, "empty")])
    with pytest.raises(InputError, match=r"missing: file or folder not found"):
        find_rollouts([(tmp_path / "missing", "missing")])


# --- Copilot: percent_remaining is REMAINING, quota_reset_at is epoch seconds ---------------


def test_copilot_paid_plan_unlimited_chat_and_spent_premium_requests() -> None:
    reading = copilot_user.parse(_load("copilot/user.json"), "user.json", AT)
    windows = _windows(reading)
    assert windows["chat"].unlimited
    assert windows["chat"].remaining_percent is None
    assert windows["premium_interactions"].remaining_percent == 0
    assert windows["premium_interactions"].reset_at == datetime(2026, 12, 1, tzinfo=UTC)
    assert reading.overage == "hard-stop"  # overage_permitted false


def test_copilot_percent_remaining_is_remaining_and_epoch_resets_win() -> None:
    reading = copilot_user.parse(_load("copilot/user-free.json"), "user.json", AT)
    windows = _windows(reading)
    assert windows["chat"].remaining_percent == 40  # not 60
    assert windows["chat"].reset_at == datetime(2026, 11, 29, 16, 30, tzinfo=UTC)
    # no quota_reset_at and no quota_reset_date_utc: quota_reset_date at 00:00Z
    assert windows["premium_interactions"].reset_at == datetime(2026, 12, 15, tzinfo=UTC)
    assert windows["premium_interactions"].remaining_percent == 0  # -6 %: overage drawn
    assert reading.overage == "meters-to-paid"


@pytest.mark.parametrize(("value", "expected"), [
    (150, "a number 0–100 (percent remaining)"), ("abc", "a number 0–100 (percent remaining)"),
])
def test_copilot_bad_percent_names_the_field(value: Any, expected: str) -> None:
    document = {"quota_snapshots": {"chat": {"percent_remaining": value}}}
    with pytest.raises(InputError) as excinfo:
        copilot_user.parse(document, "user.json", AT)
    assert _error(excinfo).startswith(
        f"user.json: quota_snapshots.chat.percent_remaining: expected {expected}")


def test_copilot_bad_reset_date_names_the_field() -> None:
    with pytest.raises(InputError, match=r"user\.json: quota_reset_date: expected a date"):
        copilot_user.parse({"quota_reset_date": "soon"}, "user.json", AT)


# --- Gemini: remainingFraction is a FRACTION remaining --------------------------------------


def test_gemini_fraction_becomes_percent() -> None:
    windows = _windows(gemini_quota.parse(_load("gemini/quota.json"), "quota.json", AT))
    assert windows["gemini-2.5-pro"].remaining_percent == 25  # 0.25, not 0.25 %
    assert windows["gemini-2.5-pro"].reset_at == datetime(2026, 11, 30, tzinfo=UTC)
    assert windows["gemini-2.0-flash"].remaining_percent == 90


def test_gemini_missing_fraction_has_no_value() -> None:
    windows = _windows(gemini_quota.parse(_load("gemini/quota.json"), "quota.json", AT))
    assert windows["gemini-2.5-flash"].remaining_percent is None
    assert not windows["gemini-2.5-flash"].unlimited


def test_gemini_several_buckets_of_one_model_keep_distinct_names() -> None:
    windows = _windows(gemini_quota.parse(_load("gemini/quota.json"), "quota.json", AT))
    assert windows["gemini-2.5-flash-lite (REQUESTS)"].remaining_percent == 100
    assert windows["gemini-2.5-flash-lite (TOKENS)"].remaining_percent == 0
    assert "gemini-2.5-flash-lite" not in windows
    twice = gemini_quota.parse({"buckets": [{"modelId": "m", "remainingFraction": 0.5},
                                            {"modelId": "m", "remainingFraction": 0.1}]},
                               "quota.json", AT)
    assert [w.name for w in twice.windows] == ["m (bucket 1)", "m (bucket 2)"]


@pytest.mark.parametrize(("bucket", "field", "expected"), [
    ({"modelId": "m", "remainingFraction": 25}, "remainingFraction", "a fraction 0–1"),
    ({"modelId": "m", "remainingFraction": "0.5"}, "remainingFraction", "a fraction 0–1"),
    ({"modelId": "m", "resetTime": "midnight"}, "resetTime", "an RFC 3339 timestamp"),
])
def test_gemini_bad_values_name_the_bucket_field(bucket: dict[str, Any], field: str,
                                                 expected: str) -> None:
    with pytest.raises(InputError) as excinfo:
        gemini_quota.parse({"buckets": [{"modelId": "ok"}, bucket]}, "quota.json", AT)
    assert _error(excinfo).startswith(f"quota.json: buckets[1].{field}: expected {expected}")


def test_gemini_a_bucket_without_model_cannot_be_scoped() -> None:
    with pytest.raises(InputError, match=r"quota\.json: buckets\[0\].modelId: a bucket without"):
        gemini_quota.parse({"buckets": [{"remainingFraction": 0.5}]}, "quota.json", AT)


# --- window scopes of the new window names -------------------------------------------------


def test_window_base_drops_only_a_trailing_qualifier() -> None:
    assert window_base("gemini-2.5-pro (TOKENS)") == "gemini-2.5-pro"
    assert window_base("gemini-2.5-pro") == "gemini-2.5-pro"
    assert window_base("weekly opus (7d)") == "weekly opus"


@pytest.mark.parametrize("provider", ["gemini", "gemini-cli"])
def test_shipped_catalog_scopes_gemini_buckets_to_their_model(provider: str) -> None:
    scopes = load_window_scopes()
    models = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"]
    lite = scopes.scope(provider, "gemini-2.5-flash-lite (TOKENS)", models)
    assert lite.models == ("gemini-2.5-flash-lite",)
    assert scopes.scope(provider, "gemini-2.5-pro", models).models == ("gemini-2.5-pro",)
    assert scopes.scope(provider, "gemini-2.0-flash", models).kind == "none"


def test_shipped_catalog_scopes_claude_and_codex_source_windows() -> None:
    scopes = load_window_scopes()
    claude = ["claude-sonnet-4-5", "claude-opus-4-1"]
    assert scopes.scope("claude", "seven_day_opus", claude).models == ("claude-opus-4-1",)
    assert scopes.scope("claude", "seven_day", claude).kind == "all"
    unknown = scopes.scope("claude", "seven_day_future", claude)
    assert unknown.kind == "all"
    assert unknown.matched is None
    assert scopes.scope("codex", "60m", ["gpt-5.1"]).matched is None
