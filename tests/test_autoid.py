"""R13 auto ids and R14 the instant a plan is made for."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id, parse_instant, resolve_now
from omniladder.errors import UsageError
from omniladder.models import CATEGORIES
from tests.builders import at, conn, fleet, plan, pool_view, reading, rung_state, window
from tests.conftest import EXAMPLES
from tests.errors import one_error

runner = CliRunner()

VALID = (
    "auto/subscription", "auto/thrifty",
    *(f"auto/{category}:{tier}" for category in CATEGORIES
      for tier in ("subscription", "thrifty")),
)


@pytest.mark.parametrize("text", VALID)
def test_R13_valid_ids_parse(text: str) -> None:
    parsed = parse_auto_id(text)
    assert parsed.text == text
    assert parsed.tier == text.rsplit(":", 1)[-1].removeprefix("auto/")
    assert parsed.category == (text.removeprefix("auto/").split(":")[0] if ":" in text
                               else None)


CATEGORY_LIST = ", ".join(CATEGORIES)


@pytest.mark.parametrize(
    ("text", "lists"),
    [
        pytest.param("auto/coding", "both", id="R13-category-without-tier"),
        pytest.param("auto/coding:", "both", id="R13-empty-tier"),
        pytest.param("auto/:thrifty", "both", id="R13-empty-category"),
        pytest.param("auto/Coding:thrifty", "categories", id="R13-case-sensitive-category"),
        pytest.param("auto/a:b:c", "both", id="R13-two-colons"),
        pytest.param("auto/poetry:thrifty", "categories", id="R13-unknown-category"),
        pytest.param("auto/coding:premium", "tiers", id="R13-paid-tier-is-not-a-tier"),
        pytest.param("auto/coding:Thrifty", "tiers", id="R13-case-sensitive-tier"),
        pytest.param("auto/coding:cheap", "tiers", id="R13-unknown-tier"),
        pytest.param("auto/Thrifty", "both", id="R13-case-sensitive-flat-id"),
        pytest.param("AUTO/thrifty", "both", id="R13-case-sensitive-prefix"),
        pytest.param("auto/premium", "both", id="R13-paid-flat-id"),
        pytest.param("thrifty", "both", id="R13-no-prefix"),
        pytest.param("auto/thrifty ", "both", id="R13-trailing-space"),
        pytest.param(" auto/thrifty", "both", id="R13-leading-space"),
        pytest.param("auto/thrifty/", "both", id="R13-trailing-slash"),
        pytest.param("auto/", "both", id="R13-bare-prefix"),
        pytest.param("", "both", id="R13-empty"),
    ],
)
def test_R13_invalid_ids_are_usage_errors_that_list_what_is_valid(text: str,
                                                                  lists: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_auto_id(text)
    message = caught.value.message
    if lists in ("categories", "both"):
        assert CATEGORY_LIST in message, message
    if lists in ("tiers", "both"):
        assert "subscription" in message
        assert "thrifty" in message
    # and through the command line: exit 2, one line, no traceback
    result = runner.invoke(app, ["plan", text, "--config", str(EXAMPLES / "omniladder.toml")])
    one_error(result)


def test_R13_ids_lists_exactly_the_twelve_valid_ids() -> None:
    result = runner.invoke(app, ["ids"])
    assert result.exit_code == 0, result.output
    listed = result.stdout.splitlines()
    assert len(listed) == 12
    assert sorted(listed) == sorted(VALID)
    # flat ids first, then each category with both tiers, each parsing to what it names
    parsed = [parse_auto_id(text) for text in listed]
    assert [(a.text, a.category, a.tier) for a in parsed] == [
        ("auto/subscription", None, "subscription"), ("auto/thrifty", None, "thrifty"),
        *((f"auto/{category}:{tier}", category, tier) for category in CATEGORIES
          for tier in ("subscription", "thrifty"))]
    as_json = runner.invoke(app, ["ids", "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == listed


def test_R13_category_restricts_candidates_and_reports_the_rest() -> None:
    connections = [conn("c", models=["sonnet", "opus"]), conn("k", "openai", "apikey")]
    readings = [reading("c", window("5h", 60, at(hours=3)))]
    result = plan(fleet(connections, readings), "auto/reasoning:thrifty")
    assert pool_view(result) == [("subscription", "claude/opus", ("c",)),
                                 ("premium", "openai/gpt-big", ("k",))]
    out = {(x.connection_id, x.model): x.reason for x in result.excluded}
    assert out == {("c", "sonnet"): "not-in-category", ("k", "gpt-mini"): "not-in-category"}
    # a rung whose only pairs are out of category is empty, not exhausted
    assert rung_state(result, "cheap") == "empty"


def test_R13_category_no_model_carries_is_an_empty_pool_not_an_error() -> None:
    result = plan(fleet([conn("c")], [reading("c", window("5h", 60, at(hours=3)))]),
                  "auto/multimodal:thrifty")
    assert result.pool == ()
    assert {x.reason for x in result.excluded} == {"not-in-category"}
    assert "1 not in category" in result.summary
    assert [r.state for r in result.rungs] == ["empty"] * 5


def test_R13_category_subscription_tier_combines_both_rules() -> None:
    connections = [conn("c", models=["sonnet", "opus"]),
                   conn("seat", "copilot-web", "apikey", models=["gpt-4.1"])]
    readings = [reading(cid, window("5h", 60, at(hours=3))) for cid in ("c", "seat")]
    result = plan(fleet(connections, readings), "auto/chat:subscription")
    assert pool_view(result) == [("subscription", "claude/sonnet", ("c",))]
    assert {(x.connection_id, x.reason) for x in result.excluded} == {
        ("c", "not-in-category"), ("seat", "overage-not-hard-stop")}


def test_R13_not_in_category_hidden_from_the_table_unless_detail() -> None:
    config = str(EXAMPLES / "omniladder.toml")
    plain = runner.invoke(app, ["plan", "auto/vision:thrifty", "--config", config])
    detail = runner.invoke(app, ["plan", "auto/vision:thrifty", "--config", config, "--detail"])
    assert plain.exit_code == 0, plain.output
    assert detail.exit_code == 0, detail.output
    assert "not-in-category" in detail.stdout
    assert "not-in-category exclusions not listed" in plain.stdout
    table_rows = [line for line in plain.stdout.splitlines()
                  if "not-in-category" in line and "not listed" not in line]
    assert table_rows == []


# --- R14 -----------------------------------------------------------------------------------

FLAG = datetime(2026, 1, 1, tzinfo=UTC)
SNAPSHOT = datetime(2026, 2, 1, tzinfo=UTC)
CLOCK = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("flag", "taken_at", "expected"),
    [
        pytest.param(FLAG, SNAPSHOT, (FLAG, "flag"), id="R14-flag-beats-snapshot"),
        pytest.param(FLAG, None, (FLAG, "flag"), id="R14-flag-alone"),
        pytest.param(None, SNAPSHOT, (SNAPSHOT, "snapshot"), id="R14-snapshot-beats-clock"),
        pytest.param(None, None, (CLOCK, "clock"), id="R14-clock-last"),
    ],
)
def test_R14_now_precedence(flag: datetime | None, taken_at: datetime | None,
                            expected: tuple[datetime, str]) -> None:
    assert resolve_now(flag, taken_at, CLOCK) == expected


def test_R14_clock_is_the_current_time() -> None:
    before = datetime.now(UTC)
    now, source = resolve_now(None, None)
    assert source == "clock"
    assert before <= now <= datetime.now(UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2026-11-29T12:00:00Z", datetime(2026, 11, 29, 12, tzinfo=UTC),
                     id="R14-zulu"),
        pytest.param("2026-11-29T14:00:00+02:00", datetime(2026, 11, 29, 12, tzinfo=UTC),
                     id="R14-offset"),
    ],
)
def test_R14_now_flag_parses_rfc3339(text: str, expected: datetime) -> None:
    assert parse_instant(text) == expected


@pytest.mark.parametrize("text", ["2026-11-29T12:00:00", "2026-11-29", "noon", ""])
def test_R14_now_flag_needs_an_offset(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_instant(text)
    assert caught.value.field == "--now"


def _now_of(*args: str) -> tuple[str, str]:
    result = runner.invoke(app, ["plan", "auto/thrifty", "--json", *args])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    return document["now"], document["now_source"]


def test_R14_the_plan_prints_which_now_it_used(tmp_path: Path) -> None:
    config = ["--config", str(EXAMPLES / "omniladder.toml")]
    assert _now_of(*config) == ("2026-11-29T12:00:00Z", "snapshot")
    assert _now_of(*config, "--now", "2026-11-29T15:00:00+02:00") == (
        "2026-11-29T13:00:00Z", "flag")
    no_taken_at = tmp_path / "quota.json"
    no_taken_at.write_text('{"readings": []}', encoding="utf-8")
    now, source = _now_of("--connections", str(EXAMPLES / "connections.toml"),
                          "--quota", str(no_taken_at))
    assert source == "clock"
    assert abs((datetime.fromisoformat(now) - datetime.now(UTC)).total_seconds()) < 60
    human = runner.invoke(app, ["plan", "auto/thrifty", *config])
    assert "now 2026-11-29T12:00:00Z (from the quota snapshot)" in human.stdout


def test_R14_the_same_snapshot_plans_the_same_way() -> None:
    config = ["plan", "auto/thrifty", "--json", "--config", str(EXAMPLES / "omniladder.toml")]
    first = runner.invoke(app, config)
    second = runner.invoke(app, config)
    assert first.exit_code == 0, first.output
    assert first.stdout == second.stdout
