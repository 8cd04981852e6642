"""A remedy for every "no": each exclusion's ``fix``, and why each unverified
connection is unverified (SPEC §4.2 ``unverified``)."""

from __future__ import annotations

import io
import json
import tomllib
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.engine.records import REASON_CODES, Exclusion, Plan
from omniladder.engine.remedies import REMEDIED_REASONS
from omniladder.models import BillingEntry
from omniladder.rendering import Format, render
from tests.builders import at, conn, fleet, instant, plan, reading, window
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"
CONFIG = str(EXAMPLES / "omniladder.toml")

FRESH_50 = window("5h", 50, at(hours=4))

# One fleet that produces every reason code under one of three auto ids.
CONNECTIONS = [
    conn("c-inactive", active=False),
    conn("c-terminal", status="expired"),
    conn("c-cooldown", rate_limited_until=at(hours=1)),
    conn("o-key", "openai", "apikey", models=["gpt-mini"]),
    conn("u-key", "mystery", "apikey", models=["m1"]),
    conn("k-local", "ollama", "none", models=["qwen"]),
    conn("cp-seat", "copilot-web", "apikey", models=["gpt-4.1"]),
    conn("c-missing"),
    conn("c-unknown"),
    conn("c-stale"),
    conn("c-reset"),
    conn("c-exhausted"),
    conn("c-low", models=["sonnet"]),
    conn("c-reentry", models=["sonnet"]),
    conn("o-big", "openai", "apikey", models=["gpt-big"]),
    conn("nm-key", "nobody", "apikey"),
    conn("c-doubt", status="error"),
    conn("c-reserve", models=["sonnet"], reserve_percent=10),
]
READINGS = [
    reading("c-inactive", FRESH_50), reading("c-terminal", FRESH_50),
    reading("c-cooldown", FRESH_50), reading("cp-seat", FRESH_50),
    reading("c-doubt", FRESH_50),
    reading("c-unknown", status="unknown"),
    reading("c-stale", at(hours=-1), window("5h", 50)),
    reading("c-reset", at(seconds=-60), window("5h", 50, at(seconds=-30))),
    reading("c-exhausted", status="exhausted", reset_at=at(hours=2)),
    reading("c-low", window("5h", 1, at(hours=3))),
    reading("c-reentry", at(hours=-2), window("5h", 0, at(hours=-1))),
    reading("c-reentry", window("5h", 4, at(hours=1))),
    reading("c-reserve", window("5h", 8, at(hours=2))),
]
SETTINGS = {"budgets": {"rung_budget_usd": {"cheap": 0, "premium": 1}}}
SPEND = [{"at": at(hours=-1), "rung": "premium", "cost_usd": 2.0}]


def _plans() -> dict[str, Plan]:
    inputs = fleet(CONNECTIONS, READINGS, settings=SETTINGS, spend=SPEND)
    return {auto_id: plan(inputs, auto_id)
            for auto_id in ("auto/subscription", "auto/thrifty", "auto/reasoning:thrifty")}


PLANS = _plans()


def _find(reason: str) -> Exclusion:
    for result in PLANS.values():
        for exclusion in result.excluded:
            if exclusion.reason == reason:
                return exclusion
    raise AssertionError(f"no exclusion with reason {reason}")


# reason -> (the connection it is found on, fragments its fix must carry)
EXPECTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "inactive": ("c-inactive", ("set active = true", "connection 'c-inactive'")),
    "terminal-status": ("c-terminal", ("status 'expired' is terminal", 'status = "ok"')),
    "cooldown": ("c-cooldown", (f"cooldown ends at {at(hours=1)}", "rate_limited_until")),
    "billing-not-subscription": ("o-key", ("none by design", "auto/thrifty serves it on the "
                                           "cheap rung", "grants subscription status")),
    "billing-uncurated": ("u-key", ("GRANTS subscription status", 'provider = "mystery"',
                                    'auth_type = "apikey"', "--catalog FILE")),
    "keyless-not-subscription": ("k-local", ("none by design", "keyless rung")),
    "overage-not-hard-stop": ("cp-seat", ("GRANTS subscription status",
                                          'provider = "copilot-web"', "observed hard-stop")),
    "quota-missing": ("c-missing", ("omniladder import", "--connection c-missing")),
    "quota-unknown": ("c-unknown", ("status unknown", "fresh reading")),
    "quota-stale": ("c-stale", ("max_reading_age_seconds = 180", "--confirmed-at",
                                at(hours=-1))),
    "quota-reset-since-reading": ("c-reset", ("reset since", "fresh reading")),
    "quota-exhausted": ("c-exhausted", (f"next reset {at(hours=2)}",)),
    "quota-below-cutoff": ("c-low", (f"next reset {at(hours=3)}", "re-entry floor 5%",
                                     "window 5h")),
    "quota-below-reentry": ("c-reentry", (f"next reset {at(hours=1)}", "re-entry floor 5%")),
    "budget-disabled": ("o-key", ("[budgets] rung_budget_usd.cheap = 0",)),
    "budget-spent": ("o-big", ("$2.00 of $1.00 spent", "next month starts at "
                               "2026-12-01T00:00:00Z", "rung_budget_usd.premium")),
    "not-in-category": ("c-low", ("claude/sonnet is served by auto/coding:thrifty, "
                                  "auto/chat:thrifty, auto/vision:thrifty",
                                  "--models-catalog")),
    "no-models": ("nm-key", ('models = ["…"]', "provider 'nobody'")),
    "connection-status-unknown": ("c-doubt", ("status 'error'", 'status = "ok"',
                                              "auto/thrifty admits it unverified")),
    # R16: the reserve of 10% raises the re-entry floor to 13% (the ladder's gap of 3)
    "quota-below-reserve": ("c-reserve", (f"next reset {at(hours=2)}", "re-entry floor 13%",
                                          "reserve_percent = 10 on connection 'c-reserve'")),
}


def test_every_reason_code_has_a_remedy() -> None:
    assert set(REASON_CODES) == REMEDIED_REASONS
    assert set(EXPECTED) == set(REASON_CODES)


@pytest.mark.parametrize("reason", REASON_CODES)
def test_each_reason_gets_its_own_remedy(reason: str) -> None:
    cid, fragments = EXPECTED[reason]
    found = [x for result in PLANS.values() for x in result.excluded
             if x.reason == reason and x.connection_id == cid]
    assert found, (reason, cid)
    fix = found[0].fix
    assert fix is not None
    for fragment in fragments:
        assert fragment in fix, (reason, fix)


def _stub(fix: str) -> dict[str, Any]:
    start = fix.index("[[entries]]")
    return tomllib.loads(fix[start:])


@pytest.mark.parametrize("reason", ["billing-uncurated", "overage-not-hard-stop"])
def test_the_overlay_stub_is_a_valid_billing_entry(reason: str) -> None:
    exclusion = _find(reason)
    assert exclusion.fix is not None
    (entry,) = _stub(exclusion.fix)["entries"]
    parsed = BillingEntry.model_validate(entry)
    connection = next(c for c in CONNECTIONS if c["id"] == exclusion.connection_id)
    assert (parsed.provider, parsed.auth_type) == (connection["provider"],
                                                   connection["auth_type"])
    assert (parsed.billing, parsed.overage) == ("subscription", "hard-stop")
    assert parsed.reviewed is not None
    assert parsed.reviewed.isoformat() == "2026-11-29"


def test_an_overlay_stub_applied_serves_the_connection(tmp_path: Any) -> None:
    """The stub does what its remedy says: pasted as an overlay, the connection is served."""
    exclusion = _find("billing-uncurated")
    assert exclusion.fix is not None
    entries = [BillingEntry.model_validate(e).model_dump(exclude_none=True)
               for e in _stub(exclusion.fix)["entries"]]
    from tests.builders import BILLING

    inputs = fleet([conn("u-key", "mystery", "apikey", models=["m1"])],
                   [reading("u-key", FRESH_50)], billing=[*BILLING, *entries])
    assert plan(inputs, "auto/subscription").eligible_connection_ids == ("u-key",)


def _all_fixes() -> list[str]:
    found = [x.fix for result in PLANS.values() for x in result.excluded if x.fix]
    runner = CliRunner()
    for auto_id in ("auto/subscription", "auto/thrifty"):
        done = runner.invoke(app, ["plan", auto_id, "--config", CONFIG, "--json"])
        assert done.exit_code == 0, done.output
        found += [x["fix"] for x in json.loads(done.stdout)["excluded"]]
    return found


def test_no_remedy_widens_silently() -> None:
    """Every remedy that grants subscription status or a hard stop says so in words."""
    widening = 0
    for fix in _all_fixes():
        grants = ('billing = "subscription"' in fix or 'overage = "hard-stop"' in fix
                  or "removing that key" in fix)
        if grants:
            widening += 1
            assert "grants" in fix.lower(), fix
    assert widening >= 4


def test_a_narrowing_override_remedy_names_the_key_and_the_grant() -> None:
    inputs = fleet([conn("c-extra", overage="meters-to-paid")], [reading("c-extra", FRESH_50)])
    (exclusion,) = plan(inputs, "auto/subscription").excluded
    assert exclusion.reason == "overage-not-hard-stop"
    assert exclusion.fix is not None
    assert "sets overage = 'meters-to-paid' itself" in exclusion.fix
    assert "catalog's overage (hard-stop)" in exclusion.fix
    assert "grants the hard stop" in exclusion.fix
    assert "[[entries]]" not in exclusion.fix


def test_an_observed_meters_to_paid_points_at_the_provider_not_an_overlay() -> None:
    inputs = fleet([conn("c-obs")], [reading("c-obs", FRESH_50, overage="meters-to-paid")])
    (exclusion,) = plan(inputs, "auto/subscription").excluded
    assert exclusion.reason == "overage-not-hard-stop"
    assert exclusion.fix is not None
    assert "the provider itself reported overage 'meters-to-paid'" in exclusion.fix
    assert "[[entries]]" not in exclusion.fix


def test_a_connection_whose_readings_all_lie_after_now_is_told_when_they_start() -> None:
    inputs = fleet([conn("c", models=["sonnet"])], [reading("c", at(hours=2), FRESH_50)])
    (exclusion,) = plan(inputs, "auto/subscription").excluded
    assert exclusion.reason == "quota-missing"
    assert exclusion.fix is not None
    assert f"plan at --now {at(hours=2)} or later" in exclusion.fix
    assert "omniladder import" not in exclusion.fix


@pytest.mark.parametrize(("reset", "expected"), [
    (at(hours=3), f"next reset {at(hours=3)}"),
    (None, "no reset instant is known"),
])
def test_a_quota_remedy_names_the_reset_or_how_to_get_a_reading(reset: str | None,
                                                                 expected: str) -> None:
    inputs = fleet([conn("c", models=["sonnet"])], [reading("c", window("5h", 0, reset))])
    (exclusion,) = plan(inputs, "auto/thrifty").excluded
    assert exclusion.reason == "quota-below-cutoff"
    assert exclusion.fix is not None
    assert expected in exclusion.fix


@pytest.mark.parametrize("low", [
    {"windows": [window("5h", 1, at(hours=3))]},
    {"status": "exhausted", "reset_at": at(hours=3)},
])
def test_R7_the_remedy_of_a_reading_that_takes_a_pair_out_names_the_reentry_floor(
        low: dict[str, Any]) -> None:
    """R7: the reading that leaves a pair out of play (at or below the cutoff, or exhausted)
    hands the next one the re-entry floor, so a reading after the reset at 3% (above the
    cutoff 2%, not above the floor 5%) still leaves it out; the remedy must say the floor."""
    windows = low.pop("windows", ())
    inputs = fleet([conn("c", models=["sonnet"])], [reading("c", *windows, **low)])
    (exclusion,) = plan(inputs, "auto/subscription").excluded
    assert exclusion.fix is not None
    assert "a reading above the re-entry floor 5%" in exclusion.fix
    assert "exit cutoff" not in exclusion.fix
    after = fleet([conn("c", models=["sonnet"])], [
        reading("c", *windows, **low),
        reading("c", at(hours=3, minutes=1), window("5h", 3, at(hours=8)))])
    (still,) = plan(after, "auto/subscription", now=instant(hours=3, minutes=1)).excluded
    assert still.reason == "quota-below-reentry"


def test_the_last_of_several_low_windows_is_the_reset_that_matters() -> None:
    inputs = fleet([conn("c", models=["sonnet"])], [reading(
        "c", window("5h", 0, at(hours=1)), window("weekly", 1, at(hours=30)),
        window("monthly", 90, at(hours=300)))])
    (exclusion,) = plan(inputs, "auto/thrifty").excluded
    assert exclusion.fix is not None
    assert f"next reset {at(hours=30)} (windows 5h, weekly)" in exclusion.fix


def test_a_mixed_rung_metered_connection_names_no_rung() -> None:
    inputs = fleet([conn("o-key", "openai", "apikey", models=["gpt-mini", "gpt-big"])], [],
                   settings={"tiers": {"cheap_max_input_usd_per_mtok": 1.0}})
    (exclusion,) = plan(inputs, "auto/subscription").excluded
    assert exclusion.rung is None
    assert exclusion.fix is not None
    assert "auto/thrifty serves it." in exclusion.fix


# --- JSON and the views --------------------------------------------------------------------


def _plan_json(*args: str) -> dict[str, Any]:
    done = CliRunner().invoke(app, ["plan", *args, "--config", CONFIG, "--json"])
    assert done.exit_code == 0, done.output
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_every_json_exclusion_carries_a_fix() -> None:
    for auto_id in ("auto/subscription", "auto/thrifty", "auto/coding:thrifty"):
        for exclusion in _plan_json(auto_id)["excluded"]:
            assert list(exclusion)[-1] == "fix"
            assert isinstance(exclusion["fix"], str), exclusion
            assert exclusion["fix"], exclusion


def test_json_pool_entries_say_why_each_unverified_connection_is() -> None:
    document = _plan_json("auto/thrifty")
    marks = {}
    for entry in document["pool"]:
        assert [u["connection_id"] for u in entry["unverified"]] == \
            entry["unverified_connection_ids"]
        for mark in entry["unverified"]:
            assert set(mark) == {"connection_id", "reason", "detail"}
            marks[mark["connection_id"]] = (mark["reason"], mark["detail"])
    assert marks == {
        "codex-team": ("quota-reset-since-reading",
                       "reading at 10:30Z said exhausted until 11:00Z; reset since, no newer "
                       "reading"),
        "copilot-seat": ("quota-unknown", "reading at 11:58Z has status unknown"),
        "antigravity-main": ("quota-stale", "reading at 11:50Z is 10m old (max 3m)"),
    }


@pytest.mark.parametrize(("readings", "reason"), [
    ([], "quota-missing"),
    ([reading("c", at(hours=-1), window("5h", 50))], "quota-stale"),
    ([reading("c", status="unknown")], "quota-unknown"),
])
def test_an_unverified_mark_carries_the_quota_reason(readings: list[dict[str, Any]],
                                                     reason: str) -> None:
    result = plan(fleet([conn("c", models=["sonnet"])], readings), "auto/thrifty")
    (entry,) = result.pool
    assert entry.unverified_connection_ids == ("c",)
    (mark,) = entry.unverified
    assert (mark.connection_id, mark.reason) == ("c", reason)
    assert mark.detail


def test_a_verified_connection_has_no_mark() -> None:
    result = plan(fleet([conn("c", models=["sonnet"])], [reading("c", FRESH_50)]))
    (entry,) = result.pool
    assert entry.unverified == ()
    assert entry.unverified_connection_ids == ()


def _table(result: Plan, width: int = 80) -> str:
    out = io.StringIO()
    import os

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        render(result, Format.TABLE, out)
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    return out.getvalue()


def test_an_empty_pool_says_what_to_change_right_under_it() -> None:
    inputs = fleet([conn("u-key", "mystery", "apikey", models=["m1"])],
                   [reading("u-key", FRESH_50)])
    text = _table(plan(inputs, "auto/subscription"))
    empty = text.index("Pool: empty")
    change = text.index("To change this")
    assert empty < change < text.index("Excluded")
    assert "u-key (all models) billing-uncurated" in text
    assert '      provider = "mystery"' in text  # the stub, unwrapped, ready to paste


def test_a_served_pool_lists_remedies_after_the_exclusions() -> None:
    inputs = fleet([conn("ok"), conn("gone", active=False)],
                   [reading("ok", FRESH_50), reading("gone", FRESH_50)])
    text = _table(plan(inputs, "auto/thrifty"))
    assert text.index("Excluded") < text.index("To change this")
    assert "gone (all models) inactive" in text


def test_the_table_lists_unverified_reasons() -> None:
    result = plan(fleet([conn("c", models=["sonnet"])], [
        reading("c", at(hours=-1), window("5h", 50))]))
    text = _table(result)
    assert "Unverified" in text
    line = next(x for x in text.splitlines() if x.strip().startswith("c "))
    assert "quota-stale" in line
    assert "#1" in line


@pytest.mark.parametrize("width", [60, 80, 120])
def test_remedy_lines_but_toml_fit_the_width(width: int) -> None:
    text = _table(PLANS["auto/subscription"], width)
    start = text.index("To change this")
    section = text[start:text.index("\n\n", start)]
    assert section.count("\n") > 20
    for line in section.splitlines():
        if line.startswith("      ") and "=" in line:
            continue  # a TOML line to paste is never wrapped
        assert len(line.rstrip()) <= width, line


def test_why_carries_the_plan_s_remedy() -> None:
    done = CliRunner().invoke(app, ["why", "claude-api", "auto/subscription", "--config",
                                    CONFIG, "--json"])
    assert done.exit_code == 0, done.output
    (verdict,) = json.loads(done.stdout)["verdicts"]
    (left,) = verdict["excluded"]
    planned = {x["connection_id"]: x for x in _plan_json("auto/subscription")["excluded"]}
    assert left["fix"] == planned["claude-api"]["fix"]
    assert "[[entries]]" in left["fix"]
    tree = CliRunner().invoke(app, ["why", "claude-api", "auto/subscription", "--config",
                                    CONFIG])
    assert "to change this" in tree.stdout
    assert 'provider = "claude"' in tree.stdout


@pytest.mark.parametrize("text", ["plain", 'a "quoted" name', "back\\slash", "ctl\x01\x1f\x7f",
                                  "ünïcode"])
def test_the_stub_quotes_any_provider_as_toml(text: str) -> None:
    from datetime import UTC, datetime

    from omniladder.engine.remedies import overlay_stub
    from omniladder.models import Connection

    # Built without validation: a loaded provider never holds a control character (it is
    # refused at load), but the stub quotes whatever it is given.
    connection = Connection(id="x", provider=text, auth_type="apikey")
    stub = overlay_stub(connection, billing="subscription", overage="hard-stop", reason="r",
                        today=datetime(2026, 11, 29, 23, 30, tzinfo=UTC))
    (entry,) = tomllib.loads(stub)["entries"]
    assert entry["provider"] == text
    assert entry["reviewed"].isoformat() == "2026-11-29"


def test_one_remedy_for_many_connections_is_printed_once() -> None:
    inputs = fleet([conn(f"u-{n}", "mystery", "apikey", models=["m1"]) for n in range(3)],
                   [reading(f"u-{n}", FRESH_50) for n in range(3)])
    text = _table(plan(inputs, "auto/subscription"))
    assert text.count("[[entries]]") == 1
    assert "u-0 (all models), u-1 (all models), u-2 (all models) billing-uncurated" in text


def test_a_whole_connection_left_out_of_a_category_names_its_one_model_in_the_fix() -> None:
    """R13: a connection serving opus alone is left out of auto/vision:thrifty as a whole
    (model None); the remedy still names claude/opus and the ids that serve it."""
    result = plan(fleet([conn("c", models=["opus"])],
                        [reading("c", window("5h", 50, at(hours=2)))]), "auto/vision:thrifty")
    assert [(x.model, x.reason, x.fix) for x in result.excluded] == [
        (None, "not-in-category",
         "claude/opus is served by auto/coding:thrifty, auto/reasoning:thrifty; to put it in "
         "'vision', list the category in a model catalog overlay entry for claude/opus "
         "(--models-catalog FILE)")]
