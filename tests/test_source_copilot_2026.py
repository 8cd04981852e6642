"""`omniladder import copilot-user` on the responses clients published in 2026 (SPEC §6 v1.2;
docs/sources.md#copilot-user), through the CLI and through `plan`.

Fixtures: tests/fixtures/sources/copilot (README.md names where each body was published).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.errors import InputError
from omniladder.sources import copilot_user
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "sources" / "copilot"
runner = CliRunner()

SEAT = """\
[[connections]]
id = "copilot-seat"
provider = "github"
auth_type = "oauth"
models = ["gpt-4.1", "claude-sonnet-4-5"]
"""

TOKEN_BILLING_AT = "2026-09-15T12:00:00Z"  # the pro seat's reset is 2026-10-01
OVERAGE_AT = "2026-01-20T12:00:00Z"  # the overage seat's reset is 2026-02-01


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    (tmp_path / "connections.toml").write_text(SEAT, encoding="utf-8")
    return tmp_path


def _import(fleet: Path, fixture: str, at: str) -> Any:
    return runner.invoke(app, ["import", "copilot-user", str(FIXTURES / fixture),
                               "--connection", "copilot-seat", "--connections",
                               str(fleet / "connections.toml"), "--quota",
                               str(fleet / "quota.json"), "--at", at])


def _windows(fleet: Path) -> dict[str, dict[str, Any]]:
    (reading,) = json.loads((fleet / "quota.json").read_text(encoding="utf-8"))["readings"]
    return {w["name"]: w for w in reading.get("windows", [])}


def _plan(fleet: Path, auto_id: str, now: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", auto_id, "--connections",
                                 str(fleet / "connections.toml"), "--quota",
                                 str(fleet / "quota.json"), "--now", now, "--json"])
    assert result.exit_code == 0, result.output
    plan: dict[str, Any] = json.loads(result.stdout)
    return plan


def _served(plan: dict[str, Any]) -> dict[str, list[str]]:
    return {e["model"]: e["allowed_connection_ids"] for e in plan["pool"]}


def _excluded(plan: dict[str, Any]) -> dict[str | None, str]:
    return {e["model"]: e["reason"] for e in plan["excluded"]
            if e["connection_id"] == "copilot-seat"}


# --- quota_reset_at: 0 is "not given" (SPEC §2.2 v1.2) ----------------------------------------


def test_quota_reset_at_zero_leaves_the_top_level_reset_date_in_force(fleet: Path) -> None:
    result = _import(fleet, "user-token-billing-2026.json", TOKEN_BILLING_AT)
    assert result.exit_code == 0, result.output
    windows = _windows(fleet)
    assert windows["premium_interactions"]["reset_at"] == "2026-10-01T00:00:00Z"
    assert windows["premium_interactions"]["remaining_percent"] == 100
    assert windows["chat"] == {"name": "chat", "unlimited": True,
                               "reset_at": "2026-10-01T00:00:00Z"}
    assert "1970" not in (fleet / "quota.json").read_text(encoding="utf-8")


def test_healthy_seat_with_quota_reset_at_zero_serves_auto_subscription(fleet: Path) -> None:
    """R10 with R2a: the fresh hard-stop report widens github's unknown overage and the
    100 % window resets on 2026-10-01, so the seat is usable; read as a 1970 reset, the
    window would be 'reset since the reading' and the seat excluded."""
    assert _import(fleet, "user-token-billing-2026.json", TOKEN_BILLING_AT).exit_code == 0
    plan = _plan(fleet, "auto/subscription", "2026-09-15T12:01:00Z")
    assert _served(plan) == {"gpt-4.1": ["copilot-seat"],
                             "claude-sonnet-4-5": ["copilot-seat"]}
    assert _excluded(plan) == {}


def test_spent_allowance_with_quota_reset_at_zero_stays_out_of_auto_thrifty(
        fleet: Path) -> None:
    """R6.4/R11: the premium window at 0 % resets on 2026-10-01, so Sonnet (a premium model)
    is exhausted under thrifty, whatever the reading's age; GPT-4.1 draws no premium
    requests and keeps serving. A 1970 reset would have admitted Sonnet as unverified."""
    assert _import(fleet, "trap-reset-at-zero-exhausted.json", TOKEN_BILLING_AT).exit_code == 0
    assert _windows(fleet)["premium_interactions"]["reset_at"] == "2026-10-01T00:00:00Z"
    for now in ("2026-09-15T12:01:00Z", "2026-09-30T23:59:59Z"):
        plan = _plan(fleet, "auto/thrifty", now)
        assert "claude-sonnet-4-5" not in _served(plan), now
        assert _excluded(plan)["claude-sonnet-4-5"] == "quota-below-cutoff", now
        assert _served(plan)["gpt-4.1"] == ["copilot-seat"], now


def test_the_spent_allowance_is_back_in_question_at_its_reset(fleet: Path) -> None:
    """R6.7, the other side of the boundary: at the reset instant the window no longer
    exists, and thrifty admits Sonnet again (unverified) until a new reading."""
    assert _import(fleet, "trap-reset-at-zero-exhausted.json", TOKEN_BILLING_AT).exit_code == 0
    plan = _plan(fleet, "auto/thrifty", "2026-10-01T00:00:00Z")
    assert _served(plan)["claude-sonnet-4-5"] == ["copilot-seat"]
    (entry,) = [e for e in plan["pool"] if e["model"] == "claude-sonnet-4-5"]
    assert entry["unverified_connection_ids"] == ["copilot-seat"]


def test_a_real_epoch_reset_still_wins_over_the_plan_date() -> None:
    document = {"quota_reset_date": "2026-10-01",
                "quota_snapshots": {"chat": {"percent_remaining": 50,
                                             "quota_reset_at": 1790000000}}}
    (window,) = copilot_user.parse(document, "user.json", datetime(2026, 9, 1, tzinfo=UTC)).windows
    assert window.reset_at == datetime.fromtimestamp(1790000000, UTC)


@pytest.mark.parametrize("zero", [0, 0.0])
def test_quota_reset_at_zero_with_no_plan_date_is_no_reset(zero: float) -> None:
    document = {"quota_snapshots": {"chat": {"percent_remaining": 50, "quota_reset_at": zero}}}
    (window,) = copilot_user.parse(document, "user.json", datetime(2026, 9, 1, tzinfo=UTC)).windows
    assert window.reset_at is None
    assert window.remaining_percent == 50


# --- snapshots without percent_remaining ------------------------------------------------------


def test_entitlement_minus_one_is_unlimited_and_negative_remaining_is_zero_left(
        fleet: Path) -> None:
    result = _import(fleet, "user-overage-no-percent-2026.json", OVERAGE_AT)
    assert result.exit_code == 0, result.output
    windows = _windows(fleet)
    assert windows["chat"] == {"name": "chat", "unlimited": True,
                               "reset_at": "2026-02-01T00:00:00Z"}
    assert windows["premium_interactions"] == {
        "name": "premium_interactions", "remaining_percent": 0,
        "reset_at": "2026-02-01T00:00:00Z", "models": ["claude-sonnet-4-5"]}
    (reading,) = json.loads((fleet / "quota.json").read_text())["readings"]
    assert reading["overage"] == "meters-to-paid"


def test_a_seat_billing_overage_is_not_on_the_subscription_rung_of_auto_subscription(
        fleet: Path) -> None:
    """R2a/R10: overage_permitted true is observed meters-to-paid, which narrows whatever its
    age: the seat leaves auto/subscription for every model, GPT-4.1 included."""
    assert _import(fleet, "user-overage-no-percent-2026.json", OVERAGE_AT).exit_code == 0
    for now in ("2026-01-20T12:01:00Z", "2026-01-25T00:00:00Z"):
        plan = _plan(fleet, "auto/subscription", now)
        assert plan["pool"] == [], now
        assert _excluded(plan) == {None: "overage-not-hard-stop"}, now
        (record,) = plan["connections"]
        assert (record["overage"], record["overage_source"]) == ("meters-to-paid", "observed")


def test_under_thrifty_the_overage_seat_serves_only_models_that_draw_no_premium_requests(
        fleet: Path) -> None:
    assert _import(fleet, "user-overage-no-percent-2026.json", OVERAGE_AT).exit_code == 0
    plan = _plan(fleet, "auto/thrifty", "2026-01-20T12:01:00Z")
    assert _served(plan) == {"gpt-4.1": ["copilot-seat"]}
    assert _excluded(plan) == {"claude-sonnet-4-5": "quota-below-cutoff"}


def test_entitlement_zero_without_percent_is_no_value_dropped_and_noted(fleet: Path) -> None:
    result = _import(fleet, "trap-entitlement-zero.json", OVERAGE_AT)
    assert result.exit_code == 0, result.output
    assert "premium_interactions" not in _windows(fleet)
    assert any("no value reported" in line and "'premium_interactions' ×1" in line
               for line in result.stderr.splitlines())


def test_entitlement_zero_is_not_read_as_an_exhausted_allowance(fleet: Path) -> None:
    """A sentinel is not exhaustion: with no premium figure, Sonnet's only window is the
    unlimited chat one and thrifty serves it; read as 0 %, Sonnet would be out. The seat's
    observed overage still keeps it out of auto/subscription."""
    assert _import(fleet, "trap-entitlement-zero.json", OVERAGE_AT).exit_code == 0
    plan = _plan(fleet, "auto/thrifty", "2026-01-20T12:01:00Z")
    assert _served(plan) == {"gpt-4.1": ["copilot-seat"], "claude-sonnet-4-5": ["copilot-seat"]}
    assert _excluded(_plan(fleet, "auto/subscription", "2026-01-20T12:01:00Z")) == {
        None: "overage-not-hard-stop"}


@pytest.mark.parametrize(("snapshot", "percent"), [
    ({"entitlement": 300, "remaining": 75}, 25),
    ({"entitlement": 300, "remaining": 300}, 100),
    ({"entitlement": 300, "remaining": 0}, 0),
    ({"entitlement": 300, "remaining": -1}, 0),
    ({"entitlement": 1500, "remaining": -3821}, 0),
    ({"entitlement": 1000, "remaining": 964, "quota_remaining": 964.1234}, 96.41234),
    ({"entitlement": "300", "remaining": "150"}, 50),
    ({"entitlement": 300, "remaining": 75, "unlimited": False}, 25),
])
def test_remaining_over_entitlement_is_the_percent_left(snapshot: dict[str, Any],
                                                        percent: float) -> None:
    document = {"quota_snapshots": {"premium_interactions": snapshot}}
    (window,) = copilot_user.parse(document, "u.json", datetime(2026, 9, 1, tzinfo=UTC)).windows
    assert window.remaining_percent == pytest.approx(percent)
    assert not window.unlimited


@pytest.mark.parametrize("snapshot", [
    {"entitlement": 0, "remaining": 0},
    {"entitlement": 0},
    {"remaining": 10},
    {"entitlement": 300},
    {},
])
def test_a_snapshot_with_nothing_to_divide_has_no_value(snapshot: dict[str, Any]) -> None:
    document = {"quota_snapshots": {"premium_interactions": snapshot}}
    (window,) = copilot_user.parse(document, "u.json", datetime(2026, 9, 1, tzinfo=UTC)).windows
    assert window.remaining_percent is None
    assert not window.unlimited


def test_percent_remaining_wins_over_the_counts_when_both_are_given() -> None:
    document = {"quota_snapshots": {"premium_interactions": {
        "entitlement": 300, "remaining": 150, "percent_remaining": 40}}}
    (window,) = copilot_user.parse(document, "u.json", datetime(2026, 9, 1, tzinfo=UTC)).windows
    assert window.remaining_percent == 40


@pytest.mark.parametrize(("snapshot", "message"), [
    ({"entitlement": 300, "remaining": 301},
     "u.json: quota_snapshots.premium_interactions.remaining: 301 left is more than the "
     "entitlement of 300"),
    ({"entitlement": -2, "remaining": 0},
     "u.json: quota_snapshots.premium_interactions.entitlement: expected a count ≥ 0, or -1 "
     "for unlimited, got -2"),
    ({"entitlement": "lots", "remaining": 0},
     "u.json: quota_snapshots.premium_interactions.entitlement: expected a number, got "
     "\"lots\""),
    ({"entitlement": 300, "remaining": True},
     "u.json: quota_snapshots.premium_interactions.remaining: expected a number, got true"),
])
def test_unusable_counts_name_the_file_and_field(snapshot: dict[str, Any],
                                                  message: str) -> None:
    document = {"quota_snapshots": {"premium_interactions": snapshot}}
    with pytest.raises(InputError) as caught:
        copilot_user.parse(document, "u.json", datetime(2026, 9, 1, tzinfo=UTC))
    assert str(caught.value) == message


def test_a_bad_count_is_exit_2_with_one_line_and_no_traceback(fleet: Path) -> None:
    bad = fleet / "bad.json"
    bad.write_text(json.dumps({"quota_snapshots": {"chat": {"entitlement": 10,
                                                            "remaining": 11}}}))
    result = runner.invoke(app, ["import", "copilot-user", str(bad), "--connection",
                                 "copilot-seat", "--connections",
                                 str(fleet / "connections.toml"), "--quota",
                                 str(fleet / "quota.json"), "--at", OVERAGE_AT])
    assert result.exit_code == 2
    assert "quota_snapshots.chat.remaining: 11 left is more than the entitlement of 10" in \
        result.stderr
    assert "Traceback" not in result.output
    assert not (fleet / "quota.json").exists()


# --- the newer fields are accepted, and are not evidence ------------------------------------


def test_newer_fields_change_nothing_the_reading_says() -> None:
    """token_based_billing, credits_used, quota_remaining (with a percent), has_quota: the
    same reading with and without them."""
    at = datetime(2026, 9, 15, 12, tzinfo=UTC)
    published = json.loads((FIXTURES / "user-token-billing-2026.json").read_text())
    stripped = json.loads((FIXTURES / "user-token-billing-2026.json").read_text())
    stripped.pop("token_based_billing")
    for key in ("token_based_billing", "credits_used", "quota_remaining", "has_quota"):
        stripped["quota_snapshots"]["premium_interactions"].pop(key)
    assert copilot_user.parse(published, "u.json", at) == copilot_user.parse(stripped, "u.json",
                                                                             at)
    flipped = json.loads((FIXTURES / "user-token-billing-2026.json").read_text())
    flipped["quota_snapshots"]["premium_interactions"]["has_quota"] = False
    assert copilot_user.parse(flipped, "u.json", at) == copilot_user.parse(published, "u.json",
                                                                           at)


def test_the_february_2026_response_reads_as_before(fleet: Path) -> None:
    """A complete published response with percent_remaining and no quota_reset_at: 70.28 %
    of premium requests left until quota_reset_date_utc, overage permitted."""
    result = _import(fleet, "user-pro-2026-02.json", "2026-02-10T13:41:00Z")
    assert result.exit_code == 0, result.output
    windows = _windows(fleet)
    assert windows["premium_interactions"]["remaining_percent"] == 70.28
    assert windows["premium_interactions"]["reset_at"] == "2026-03-01T00:00:00Z"
    assert windows["chat"]["unlimited"] is True
    (reading,) = json.loads((fleet / "quota.json").read_text())["readings"]
    assert reading["overage"] == "meters-to-paid"


# --- Copilot Free's older shape: limited_user_quotas over monthly_quotas ---------------------

FREE_AT = "2026-02-01T12:00:00Z"  # the free seat's reset is 2026-02-11


def test_free_seat_counts_left_over_the_monthly_quota_are_its_chat_window(fleet: Path) -> None:
    """docs/sources.md#copilot-user: a published Copilot Free body carries no quota_snapshots;
    410 of 500 chat requests left is 82 % until limited_user_reset_date, completions are
    ignored as the catalog says."""
    result = _import(fleet, "user-free-limited-2026.json", FREE_AT)
    assert result.exit_code == 0, result.output
    assert _windows(fleet) == {"chat": {"name": "chat", "remaining_percent": 82,
                                        "reset_at": "2026-02-11T00:00:00Z"}}
    assert "'completions' ×1" in result.stderr


def test_free_seat_with_its_chat_spent_stays_out_of_auto_thrifty(fleet: Path) -> None:
    """R6.4/R11: the spent chat window limits every model until 2026-02-11; read as no
    window, the seat would be quota-unknown and thrifty would serve it unverified."""
    result = _import(fleet, "trap-free-chat-spent.json", FREE_AT)
    assert result.exit_code == 0, result.output
    assert _windows(fleet)["chat"]["remaining_percent"] == 0
    plan = _plan(fleet, "auto/thrifty", "2026-02-01T12:01:00Z")
    assert _served(plan) == {}
    assert _excluded(plan) == {None: "quota-below-cutoff"}


def test_a_snapshot_of_the_same_name_wins_over_the_older_free_shape() -> None:
    document = {"limited_user_quotas": {"chat": 0}, "monthly_quotas": {"chat": 50},
                "limited_user_reset_date": "2026-02-11", "quota_reset_date": "2026-03-01",
                "quota_snapshots": {"chat": {"percent_remaining": 40}}}
    (window,) = copilot_user.parse(document, "u.json", datetime(2026, 2, 1, tzinfo=UTC)).windows
    assert (window.name, window.remaining_percent) == ("chat", 40)
    assert window.reset_at == datetime(2026, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize(("document", "percent"), [
    ({"limited_user_quotas": {"chat": 25}, "monthly_quotas": {"chat": 50}}, 50),
    ({"limited_user_quotas": {"chat": "25"}, "monthly_quotas": {"chat": "50"}}, 50),
    ({"limited_user_quotas": {"chat": -3}, "monthly_quotas": {"chat": 50}}, 0),
    ({"limited_user_quotas": {"chat": 25}, "monthly_quotas": {"chat": 0}}, None),
    ({"limited_user_quotas": {"chat": 25}}, None),
    ({"limited_user_quotas": {"chat": None}, "monthly_quotas": {"chat": 50}}, None),
])
def test_free_counts_give_the_percent_left_or_no_value(document: dict[str, Any],
                                                       percent: float | None) -> None:
    (window,) = copilot_user.parse(document, "u.json", datetime(2026, 2, 1, tzinfo=UTC)).windows
    assert window.remaining_percent == percent
    assert not window.unlimited


def test_free_counts_above_the_monthly_quota_name_the_field() -> None:
    document = {"limited_user_quotas": {"chat": 51}, "monthly_quotas": {"chat": 50}}
    with pytest.raises(InputError) as caught:
        copilot_user.parse(document, "u.json", datetime(2026, 2, 1, tzinfo=UTC))
    assert str(caught.value) == ("u.json: limited_user_quotas.chat: 51 left is more than the "
                                 "monthly quota of 50")
