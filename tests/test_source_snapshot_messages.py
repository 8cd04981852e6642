"""Claude, Copilot and Gemini snapshot responses (docs/sources.md; SPEC §6): the exact message
for each unusable value, naming the file and the field path, and the fields that decide a
reading (which reset wins, which bucket is which window, null entries skipped).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from omniladder.errors import InputError
from omniladder.sources import claude_usage, copilot_user, gemini_quota
from omniladder.sources.common import SourceReading, SourceWindow

AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def _message(parse: Any, document: Any, file: str) -> str:
    with pytest.raises(InputError) as excinfo:
        parse(document, file, AT)
    return str(excinfo.value)


def _windows(reading: SourceReading) -> dict[str, SourceWindow]:
    return {window.name: window for window in reading.windows}


# --- Claude ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("document", "expected"), [
    ({"extra_usage": 5}, "usage.json: extra_usage: expected an object, got 5"),
    ({"extra_usage": {"is_enabled": "yes"}},
     'usage.json: extra_usage.is_enabled: expected true or false, got "yes"'),
    ({"five_hour": {"utilization": 5}, "extra_usage": {"is_enabled": 1}},
     "usage.json: extra_usage.is_enabled: expected true or false, got 1"),
])
def test_claude_bad_extra_usage_names_file_and_field(document: dict[str, Any],
                                                     expected: str) -> None:
    assert _message(claude_usage.parse, document, "usage.json") == expected


def test_claude_extra_usage_without_is_enabled_reports_no_overage() -> None:
    assert claude_usage.parse({"extra_usage": {"utilization": 3}}, "u.json", AT).overage is None


# --- Copilot ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("document", "expected"), [
    ([], "user.json: the top level: expected an object, got []"),
    ({"quota_reset_date_utc": "soon"},
     'user.json: quota_reset_date_utc: expected an RFC 3339 timestamp, got "soon"'),
    ({"quota_snapshots": 5}, "user.json: quota_snapshots: expected an object, got 5"),
    ({"quota_snapshots": {"chat": "full"}},
     'user.json: quota_snapshots.chat: expected an object, got "full"'),
    ({"quota_snapshots": {"chat": {"unlimited": "yes", "percent_remaining": 5}}},
     'user.json: quota_snapshots.chat.unlimited: expected true or false, got "yes"'),
    ({"quota_snapshots": {"premium_interactions": {"percent_remaining": 5,
                                                   "overage_permitted": "no"}}},
     "user.json: quota_snapshots.premium_interactions.overage_permitted: expected true or "
     'false, got "no"'),
])
def test_copilot_bad_values_name_file_and_field(document: Any, expected: str) -> None:
    assert _message(copilot_user.parse, document, "user.json") == expected


def test_copilot_plan_reset_instant_wins_over_the_plain_date() -> None:
    """docs/sources.md#copilot-user: reset = quota_reset_at, else quota_reset_date_utc, else
    quota_reset_date at 00:00Z."""
    reading = copilot_user.parse({
        "quota_reset_date_utc": "2026-12-01T08:30:00+02:00",
        "quota_reset_date": "2026-12-05",
        "quota_snapshots": {"chat": {"percent_remaining": 40},
                            "completions": {"percent_remaining": 50,
                                            "quota_reset_at": 1796284800}}}, "user.json", AT)
    windows = _windows(reading)
    assert windows["chat"].reset_at == datetime(2026, 12, 1, 6, 30, tzinfo=UTC)
    assert windows["completions"].reset_at == datetime(2026, 12, 3, 8, 0, tzinfo=UTC)


def test_copilot_a_null_snapshot_is_skipped_and_the_rest_are_read() -> None:
    reading = copilot_user.parse({"quota_snapshots": {
        "chat": None, "completions": {"unlimited": True},
        "premium_interactions": {"percent_remaining": 12.5, "overage_permitted": True}}},
        "user.json", AT)
    assert [w.name for w in reading.windows] == ["completions", "premium_interactions"]
    assert _windows(reading)["premium_interactions"].remaining_percent == 12.5
    assert reading.overage == "meters-to-paid"


@pytest.mark.parametrize("document", [
    {"quota_snapshots": {"chat": {"percent_remaining": 40, "overage_permitted": False}}},
    {"quota_snapshots": {"premium_interactions": {"percent_remaining": 40}}},
    {},
])
def test_copilot_overage_comes_only_from_premium_interactions(document: Any) -> None:
    """Only premium_interactions' overage_permitted is an observed overage; otherwise none."""
    assert copilot_user.parse(document, "user.json", AT).overage is None


# --- Gemini ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("document", "expected"), [
    ("quota", 'quota.json: the top level: expected an object, got "quota"'),
    ({"buckets": {"modelId": "m"}},
     'quota.json: buckets: expected an array, got {"modelId": "m"}'),
    ({"buckets": [5]}, "quota.json: buckets[0]: expected an object, got 5"),
    ({"buckets": [{"modelId": "a"}, {"modelId": 7}]},
     "quota.json: buckets[1].modelId: expected a non-empty string, got 7"),
    ({"buckets": [{"remainingFraction": 0.5}]},
     "quota.json: buckets[0].modelId: a bucket without a modelId cannot be scoped to a model"),
    ({"buckets": [{"modelId": "m", "tokenType": " "}]},
     'quota.json: buckets[0].tokenType: expected a non-empty string, got " "'),
])
def test_gemini_bad_values_name_file_and_field(document: Any, expected: str) -> None:
    assert _message(gemini_quota.parse, document, "quota.json") == expected


def test_gemini_a_null_bucket_is_skipped_and_the_rest_are_read() -> None:
    reading = gemini_quota.parse({"buckets": [None, {"modelId": "m", "remainingFraction": 0.5},
                                              None, {"modelId": "n", "remainingFraction": 1}]},
                                 "quota.json", AT)
    assert [(w.name, w.remaining_percent) for w in reading.windows] == [("m", 50), ("n", 100)]


RESET = "2026-11-30T00:00:00Z"


@pytest.mark.parametrize(("buckets", "names"), [
    ([("m", "REQUESTS"), ("m", "TOKENS")], ["m (REQUESTS)", "m (TOKENS)"]),
    ([("m", "REQUESTS"), ("m", "REQUESTS")], ["m (REQUESTS 1)", "m (REQUESTS 2)"]),
    ([("m", "REQUESTS"), ("m", "REQUESTS"), ("m", "REQUESTS")],
     ["m (REQUESTS 1)", "m (REQUESTS 2)", "m (REQUESTS 3)"]),
    ([("m", "REQUESTS"), ("m", None)], ["m (REQUESTS)", "m (bucket 1)"]),
    ([("m", None), ("m", None)], ["m (bucket 1)", "m (bucket 2)"]),
    ([("m", "REQUESTS"), ("n", "TOKENS")], ["m", "n"]),
])
def test_gemini_buckets_of_one_model_get_names_that_tell_them_apart(
        buckets: list[tuple[str, str | None]], names: list[str]) -> None:
    """A model's several buckets are told apart by token type, numbered when the type does
    not tell them apart (or is missing); a model's only bucket keeps the bare model id. The
    qualified windows keep their figure and reset."""
    document = {"buckets": [
        {"modelId": model, "remainingFraction": 0.5, "resetTime": RESET,
         **({"tokenType": token} if token is not None else {})} for model, token in buckets]}
    reading = gemini_quota.parse(document, "quota.json", AT)
    assert [w.name for w in reading.windows] == names
    assert {(w.remaining_percent, w.reset_at) for w in reading.windows} == {
        (50, datetime(2026, 11, 30, tzinfo=UTC))}
