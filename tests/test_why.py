"""`why` agrees with `plan`, explains every step, finds the earliest comeback, fails clearly."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from typer.testing import CliRunner

from omniladder.analyses.why import explain
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.engine.records import Plan
from omniladder.models import (
    Reading,
    Window,
)
from tests.conftest import EXAMPLES
from tests.depth import deep
from tests.strategies import SHIPPED, input_sets

runner = CliRunner()
CONFIG = str(EXAMPLES / "omniladder.toml")
FLAT_IDS = ("auto/subscription", "auto/thrifty")
EXAMPLE_IDS = (
    "claude-max-work", "claude-pro-personal", "claude-max-extra", "claude-api", "codex-plus",
    "codex-team", "copilot-seat", "devin-team", "antigravity-main", "ollama-local",
    "openrouter-free", "gemini-free", "openai-key", "deepseek-key", "groq-key",
)


def _invoke(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--config", CONFIG, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _plan_view(plan_doc: dict[str, Any], cid: str) -> tuple[list[Any], list[Any]]:
    """Where the plan puts a connection: its pool positions and its exclusions."""
    seats = sorted((e["model"], e["position"], e["rung"],
                    cid in e["unverified_connection_ids"])
                   for e in plan_doc["pool"] if cid in e["allowed_connection_ids"])
    left = sorted((x["model"], x["reason"], x["detail"])
                  for x in plan_doc["excluded"] if x["connection_id"] == cid)
    return seats, left


@pytest.mark.parametrize("auto_id", FLAT_IDS)
def test_why_agrees_with_plan_on_every_example_connection(auto_id: str) -> None:
    """R10/R11: why reports exactly the pool seats and exclusions the plan reports."""
    plan_doc = _invoke("plan", auto_id)
    assert {c["id"] for c in plan_doc["connections"]} == set(EXAMPLE_IDS)
    for cid in EXAMPLE_IDS:
        why_doc = _invoke("why", cid, auto_id)
        (verdict,) = why_doc["verdicts"]
        assert verdict["auto_id"] == auto_id
        seats = sorted((s["model"], s["position"], s["rung"], s["unverified"])
                       for s in verdict["pool"])
        plan_seats, plan_left = _plan_view(plan_doc, cid)
        assert seats == plan_seats, cid
        assert verdict["in_pool"] == bool(plan_seats)
        models = why_doc["connection"]["models"]
        for model, reason, detail in plan_left:
            # A plan exclusion with model null covers every model of the connection.
            expected = models if model is None else [model]
            got = sorted((x["model"], x["reason"], x["detail"]) for x in verdict["excluded"]
                         if x["model"] in expected)
            assert got == sorted((m, reason, detail) for m in expected), cid
        assert len(verdict["excluded"]) + len(verdict["pool"]) == len(models), cid


def test_why_defaults_to_both_flat_ids() -> None:
    document = _invoke("why", "claude-max-extra")
    verdicts = {v["auto_id"]: v for v in document["verdicts"]}
    assert list(verdicts) == list(FLAT_IDS)
    assert verdicts["auto/subscription"]["excluded"][0]["reason"] == "overage-not-hard-stop"
    assert verdicts["auto/thrifty"]["pool"][0]["position"] == 1


def test_billing_resolution_names_the_catalog_entry_and_override() -> None:
    """R1.2 match with its file, reason, source and reviewed; the R2 override shown."""
    billing = _invoke("why", "claude-max-extra")["billing"]
    assert billing["step"] == 2
    entry = billing["catalog_entry"]
    assert entry["file"] == "<shipped>/connection-billing.toml"
    assert entry["reviewed"] == "2026-08-22"
    assert entry["reason"]
    assert entry["source"]
    assert billing["override"] == {"overage": "meters-to-paid"}
    assert billing["overage"] == "meters-to-paid"
    uncurated = _invoke("why", "claude-api")["billing"]
    assert (uncurated["step"], uncurated["catalog_entry"]) == (4, None)
    assert _invoke("why", "ollama-local")["billing"]["step"] == 1
    overlay = _invoke("why", "openai-key")["billing"]
    assert overlay["step"] == 3
    assert overlay["catalog_entry"]["file"].endswith("billing-overlay.toml")


def test_replay_table_ends_in_the_reentry_floor() -> None:
    """R7: 1.5% drops it out; the later 3% and 4% come before that window's reset, so the
    1.5% holds (R6.4, no regain before a reset), judged against the 5% floor."""
    (model, *_) = _invoke("why", "claude-pro-personal", "--model", "claude-sonnet-4-5")["models"]
    assert [(s["figure"], s["state_before"], s["state_after"]) for s in model["replay"]] == [
        (30, "in play", "in play"), (1.5, "in play", "out"), (1.5, "out", "out")]
    assert model["latest"]["figure"] == 1.5
    assert (model["threshold"], model["threshold_kind"]) == (5, "re-entry floor")
    assert model["out_since"] == "2026-11-29T10:30:00Z"
    assert model["quota"]["reason"] == "quota-below-reentry"


def test_windows_are_marked_per_model() -> None:
    """R6: weekly-opus applies to opus only; the limiting window is marked."""
    document = _invoke("why", "claude-max-work")
    by_model = {m["model"]: {w["name"]: w for w in m["windows"]} for m in document["models"]}
    assert not by_model["claude-sonnet-4-5"]["weekly-opus"]["applicable"]
    opus = by_model["claude-opus-4-1"]["weekly-opus"]
    assert (opus["applicable"], opus["current"], opus["limiting"]) == (True, True, True)
    assert by_model["claude-sonnet-4-5"]["5h"]["limiting"]
    assert document["reading"]["age_seconds"] == 50
    assert document["reading"]["stale"] is False


def test_budget_position_of_a_paid_rung() -> None:
    """R8: spent and remaining of the rung the model lands on."""
    models = {m["model"]: m for m in _invoke("why", "openai-key")["models"]}
    cheap = models["gpt-5-mini"]["budget"]
    assert (cheap["rung"], cheap["spent_usd"], cheap["remaining_usd"]) == ("cheap", 3.2, 1.8)
    assert models["gpt-5.1"]["budget"]["rung"] == "premium"
    assert _invoke("why", "codex-team")["models"][0]["budget"] is None


def test_cooldown_shows_both_instants_and_the_comeback() -> None:
    """R9: configured and clamped ends; thrifty readmits at the clamped reset, unverified."""
    document = _invoke("why", "codex-plus", "auto/thrifty")
    cooldown = document["gates"]["cooldown"]
    assert cooldown["rate_limited_until"] == "2026-11-29T18:00:00Z"
    assert cooldown["ends_at"] == "2026-11-29T12:30:00Z"
    assert (cooldown["clamped"], cooldown["cooling"]) == (True, True)
    (comeback, _) = document["verdicts"][0]["comeback"]
    earliest = comeback["earliest"]
    assert earliest["at"] == "2026-11-29T12:30:00Z"
    assert not earliest["needs_fresh_reading"]
    assert earliest["unverified"]


def test_comeback_under_subscription_needs_a_fresh_reading_above_the_floor() -> None:
    document = _invoke("why", "claude-pro-personal", "auto/subscription")
    for comeback in document["verdicts"][0]["comeback"]:
        assert comeback["without_new_reading"] is None
        fresh = comeback["with_fresh_reading"]
        assert fresh["needs_fresh_reading"]
        assert (fresh["threshold_percent"], fresh["threshold_kind"]) == (5, "re-entry floor")


def test_tree_view_walks_every_step() -> None:
    result = runner.invoke(app, ["why", "claude-pro-personal", "--config", CONFIG])
    assert result.exit_code == 0, result.output
    text = result.stdout
    for needle in ("billing (R1, R2, R2a): subscription, overage hard-stop", "reviewed: 2026-08-22",
                   "gates (R5): pass", "hysteresis replay (R7)",
                   "threshold that applied: re-entry floor 5%, out since 10:30Z",
                   "auto/subscription: out", "auto/thrifty: out", "earliest comeback"):
        assert needle in text, needle


@pytest.mark.parametrize(("args", "message"), [
    (["why", "codex-plu"], "did you mean codex-plus"),
    (["why", "nobody-at-all-xyz"], "known ids: claude-max-work"),
    (["why", "codex-plus", "auto/Coding:thrifty"], "unknown category"),
    (["why", "codex-plus", "--model", "gpt-5.2"], "did you mean gpt-5.1"),
    (["why", "codex-plus", "--now", "2026-11-29T12:00:00"], "has no offset"),
])
def test_bad_input_is_exit_2_with_one_clear_line(args: list[str], message: str) -> None:
    result = runner.invoke(app, [*args, "--config", CONFIG])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


# --- property: generated fleets ------------------------------------------------------------

T0 = datetime(2026, 11, 29, 12, tzinfo=UTC)
FLEETS = input_sets(anchor=T0, catalog=SHIPPED, connections=(1, 5), readings=(0, 4),
                    readings_between=(-300, 0), resets_between=(-60, 600))
"""Fleets read up to the instant asked about, with resets and cooldown ends either side."""


def _admitted(plan: Plan, cid: str) -> bool:
    return any(cid in e.allowed_connection_ids for e in plan.pool)


def _pair_admitted(plan: Plan, cid: str, model: str) -> bool:
    return any(cid in e.allowed_connection_ids and e.model == model for e in plan.pool)


@deep(60, quick=12, deadline=None)
def test_why_agrees_with_plan_on_generated_fleets(examples: settings) -> None:
    """For both flat ids, why's seats and exclusions are the plan's; and each comeback is
    the first instant the plan (with no new reading) admits the pair."""
    @examples
    @given(FLEETS)
    def holds(inputs: LoadedInputs) -> None:
        now = T0
        plans = [make_plan(inputs, parse_auto_id(a), now, "flag") for a in FLAT_IDS]
        for connection in inputs.connections:
            trace = explain(inputs, plans, connection.id)
            for plan, verdict in zip(plans, trace.verdicts, strict=True):
                assert verdict.in_pool == _admitted(plan, connection.id)
                seats = {(e.model, e.position) for e in plan.pool
                         if connection.id in e.allowed_connection_ids}
                assert {(s.model, s.position) for s in verdict.seats} == seats
                reasons = {(x.model, x.reason) for x in plan.excluded
                           if x.connection_id == connection.id and x.model is not None}
                reasons |= {(m, x.reason) for x in plan.excluded
                            if x.connection_id == connection.id and x.model is None
                            for m in trace.facts.models}
                assert {(x.model, x.reason) for x in verdict.left} == reasons
                for comeback in verdict.comebacks:
                    route = comeback.without_reading
                    if route is None:
                        continue
                    frozen = inputs._replace(readings={
                        cid: tuple(r for r in h if r.checked_at <= now)
                        for cid, h in inputs.readings.items()})
                    before = route.at - timedelta(seconds=1) if not route.exclusive else route.at
                    for probe in (now + (before - now) / 2, before):
                        if probe <= now:
                            continue
                        later = make_plan(frozen, plan.auto_id, probe, "flag")
                        # the pair's comeback: the connection may serve its other models meanwhile
                        assert not _pair_admitted(later, connection.id, comeback.model), (
                            probe, route)
                    after = route.at + timedelta(microseconds=1 if route.exclusive else 0)
                    assert _pair_admitted(make_plan(frozen, plan.auto_id, after, "flag"),
                                          connection.id, comeback.model)

    holds()


def test_comeback_of_a_low_reading_is_its_reset_not_its_staleness() -> None:
    """R6.4: a reading exactly max-age old goes stale just after now, but its window at 0%
    stays low until its reset a minute later: that reset, not the staleness, brings it back
    (unverified, under auto/thrifty)."""
    from tests import builders as b

    inputs = b.fleet(
        [b.conn("c4", models=["sonnet"])],
        [b.reading("c4", b.at(minutes=-3), b.window("5h", 0, b.at(minutes=1)))])
    plan = make_plan(inputs, parse_auto_id("auto/thrifty"), b.NOW, "flag")
    assert not _admitted(plan, "c4")
    just_after = make_plan(inputs, plan.auto_id, b.NOW + timedelta(microseconds=1), "flag")
    assert not _admitted(just_after, "c4")
    (left,) = [d for d in just_after.decisions if d.connection_id == "c4"]
    assert left.reason == "quota-below-cutoff"
    assert "still low until that reset" in left.detail
    (verdict,) = explain(inputs, [plan], "c4").verdicts
    (comeback,) = verdict.comebacks
    route = comeback.without_reading
    assert route is not None
    assert (route.at, route.exclusive) == (b.instant(minutes=1), False)
    assert route.unverified
    assert "the 5h window resets at 12:01Z" in route.steps
    assert _admitted(make_plan(inputs, plan.auto_id, b.instant(minutes=1), "flag"), "c4")


def test_fresh_comeback_waits_for_an_older_low_window_to_reset() -> None:
    """R6.4: a reading at 1.5% until 13:00 is followed by one at 0% until 12:30. Once 12:30
    passes, the older low window holds again until 13:00, so a fresh reading brings the
    connection back at 13:00 — not at 12:30, and not days later at the next budget period."""
    from tests import builders as b

    inputs = b.fleet(
        [b.conn("c4", models=["sonnet"])],
        [b.reading("c4", b.at(minutes=-20), b.window("5h", 1.5, b.at(minutes=60))),
         b.reading("c4", b.at(minutes=-1), b.window("5h", 0, b.at(minutes=30)))])
    plan = make_plan(inputs, parse_auto_id("auto/subscription"), b.NOW, "flag")
    assert not _admitted(plan, "c4")
    (verdict,) = explain(inputs, [plan], "c4").verdicts
    (comeback,) = verdict.comebacks
    route = comeback.with_reading
    assert route is not None
    assert (route.at, route.exclusive) == (b.instant(minutes=60), False)
    assert "a fresh reading at or after 13:00Z whose figure is above the re-entry floor 5%" \
        in route.steps

    def with_fresh_reading(at: datetime) -> bool:
        fresh = Reading(connection="c4", checked_at=at,
                        windows=(Window(name="5h", remaining_percent=100.0),))
        probed = inputs._replace(readings={"c4": (*inputs.readings["c4"], fresh)})
        return _admitted(make_plan(probed, plan.auto_id, at, "flag"), "c4")

    assert not with_fresh_reading(b.instant(minutes=59, seconds=59))
    assert with_fresh_reading(b.instant(minutes=60))


def test_comeback_under_a_max_age_past_the_calendar_end() -> None:
    """R6.5: a max age so long that no reading goes stale before year 9999 is valid; why
    still finds the comeback (the window's reset) instead of failing on the date."""
    from tests import builders as b

    inputs = b.fleet(
        [b.conn("c4", models=["sonnet"])],
        [b.reading("c4", b.at(minutes=-1), b.window("5h", 0, b.at(minutes=30)))],
        settings={"ladder": {"max_reading_age_seconds": 1e12}})
    plan = make_plan(inputs, parse_auto_id("auto/thrifty"), b.NOW, "flag")
    (verdict,) = explain(inputs, [plan], "c4").verdicts
    (comeback,) = verdict.comebacks
    assert comeback.with_reading is not None
    assert comeback.with_reading.at == b.instant(minutes=30)


@pytest.mark.parametrize("config", ["omniladder.toml", "omniladder-tight.toml"])
def test_focus_decides_a_connection_as_the_whole_fleet_does(config: str) -> None:
    """R8, R10, R11: narrowed to one connection, with the others' spend still counted, a
    plan decides every pair of that connection exactly as the whole fleet's plan does."""
    from pathlib import Path

    from omniladder.engine.plan import focus
    from omniladder.inputs.input_set import load_inputs

    inputs = load_inputs(Path(EXAMPLES / config))
    assert inputs.quota is not None
    assert inputs.quota.taken_at is not None
    now = inputs.quota.taken_at
    for auto_id in FLAT_IDS:
        whole = make_plan(inputs, parse_auto_id(auto_id), now, "snapshot")
        for connection in inputs.connections:
            narrowed = make_plan(focus(inputs, connection.id, now), parse_auto_id(auto_id),
                                 now, "snapshot")
            mine = [d for d in whole.decisions if d.connection_id == connection.id]
            assert list(narrowed.decisions) == mine, (auto_id, connection.id)
            assert narrowed.budgets == whole.budgets


def test_why_names_the_window_that_keeps_a_stale_reading_exhausted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """R6.4 in the trace: the held window is marked, and the tree says until when."""
    import io

    from omniladder.rendering.why_view import render_why, why_document
    from tests import builders as b

    inputs = b.fleet(
        [b.conn("c5", models=["sonnet", "opus"])],
        [b.reading("c5", b.at(hours=-3), b.window("5h", 60, b.at(hours=1)),
                   b.window("weekly-opus", 0, b.at(days=4), models=["opus"]))])
    plan = make_plan(inputs, parse_auto_id("auto/thrifty"), b.NOW, "flag")
    trace = explain(inputs, [plan], "c5")
    models = {m["model"]: m for m in why_document(trace)["models"]}
    assert models["opus"]["held_past_age"] is True
    assert models["opus"]["limiting_window"] == "weekly-opus"
    assert models["sonnet"]["held_past_age"] is False
    monkeypatch.setenv("COLUMNS", "200")
    out = io.StringIO()
    render_why(trace, out)
    text = out.getvalue()
    assert ("R6.4: the reading is stale, but its weekly-opus window at 0% can only fall until it "
            "resets at 2026-12-03 12:00Z: exhausted until then, whatever its age") in text
    assert text.count("R6.4:") == 1


# --- the narrowed plan `why` reads -----------------------------------------------------------


def _narrowed_equals_whole(inputs: LoadedInputs, now: datetime, ids: tuple[str, ...]) -> None:
    from omniladder.engine.plan import connection_plan
    from omniladder.rendering.why_view import render_why, why_json

    for auto_id in ids:
        parsed = parse_auto_id(auto_id)
        whole = make_plan(inputs, parsed, now, "flag")
        for connection in inputs.connections:
            narrow = connection_plan(inputs, parsed, now, "flag", connection.id)
            assert narrow.warnings == whole.warnings
            assert narrow.budgets == whole.budgets
            assert narrow.settings == whole.settings
            assert narrow.decisions == tuple(d for d in whole.decisions
                                             if d.connection_id == connection.id)
            assert narrow.excluded == tuple(x for x in whole.excluded
                                            if x.connection_id == connection.id)
            seats = [(e.position, e.rung, e.provider, e.model,
                      connection.id in e.unverified_connection_ids)
                     for e in whole.pool if connection.id in e.allowed_connection_ids]
            assert [(e.position, e.rung, e.provider, e.model, bool(e.unverified_connection_ids))
                    for e in narrow.pool] == seats
            traced = explain(inputs, [narrow], connection.id)
            assert traced == explain(inputs, [whole], connection.id)
            assert why_json(traced) == why_json(explain(inputs, [whole], connection.id))
            ours, theirs = io.StringIO(), io.StringIO()
            render_why(traced, ours)
            render_why(explain(inputs, [whole], connection.id), theirs)
            assert ours.getvalue() == theirs.getvalue()


@pytest.mark.parametrize("config", ["omniladder.toml", "day/omniladder.toml"])
def test_narrowed_why_equals_the_whole_plans_on_the_examples(config: str) -> None:
    from omniladder.inputs.input_set import load_inputs

    inputs = load_inputs(EXAMPLES / config)
    for at in ("2026-11-29T10:45:00Z", "2026-11-29T12:00:00Z", "2026-11-29T17:00:00Z"):
        _narrowed_equals_whole(inputs, datetime.fromisoformat(at),
                               ("auto/subscription", "auto/thrifty", "auto/coding:thrifty"))


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(FLEETS)
def test_narrowed_why_equals_the_whole_plans_on_generated_fleets(inputs: LoadedInputs) -> None:
    _narrowed_equals_whole(inputs, T0, ("auto/subscription", "auto/thrifty"))


def test_narrowed_why_names_an_unknown_id_as_the_whole_plan_does() -> None:
    from omniladder.engine.plan import connection_plan
    from omniladder.errors import UsageError
    from omniladder.inputs.input_set import load_inputs

    inputs = load_inputs(EXAMPLES / "omniladder.toml")
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    parsed = parse_auto_id("auto/thrifty")
    for wrong in ("claude-max-wrk", "nothing-like-it"):
        with pytest.raises(UsageError) as whole:
            explain(inputs, [make_plan(inputs, parsed, now, "flag")], wrong)
        with pytest.raises(UsageError) as narrow:
            connection_plan(inputs, parsed, now, "flag", wrong)
        assert str(narrow.value) == str(whole.value)


# --- pace (forecast, item 2) ---------------------------------------------------------------

_DAY = str(EXAMPLES / "day" / "omniladder.toml")


def _why_day(connection_id: str, *extra: str) -> Any:
    result = runner.invoke(app, ["why", connection_id, "--config", _DAY, "--now",
                                 "2026-11-29T13:00:00Z", *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_why_shows_the_pace_of_each_window_of_the_latest_reading() -> None:
    """Item 2: the Max plan's 5h window, 20% elapsed and 48.5% used, burns 48.5%/h and
    reaches the 2% cutoff at 14:01, before its 17:00 reset (docs/forecast.md)."""
    text = " ".join(_why_day("claude-max-work").replace("│", " ").split())
    assert "pace (forecast): 2 windows of the latest reading" in text
    assert ("5h window at 51.5%, 20% of it elapsed (even pace 20.0% used, actual 48.5%: "
            "+28.5 points); burning 48.5%/h, at the cutoff 2% 14:01:15Z, before its reset"
            in text)
    document = json.loads(_why_day("claude-max-work", "--json"))
    windows = {w["window"]: w for w in document["pace"]["windows"]}
    assert document["pace"]["projected"] is True
    assert windows["5h"]["burn_percent_per_hour"] == 48.5
    assert windows["5h"]["cutoff_at"] == "2026-11-29T14:01:15Z"
    assert windows["5h"]["lasts_to_reset"] is False


def test_why_gives_the_reason_instead_of_a_pace_for_an_exhausted_reading() -> None:
    """Guardrail: an exhausted reading is not projected; its reason is shown, no burn."""
    text = " ".join(_why_day("claude-pro-personal").replace("│", " ").split())
    assert ("pace (forecast): reading at 09:40Z says exhausted until 19:00Z: no projection"
            in text)
    assert "burning" not in text
    document = json.loads(_why_day("claude-pro-personal", "--json"))
    assert document["pace"] == {"projected": False, "windows": [], "note": (
        "reading at 09:40Z says exhausted until 19:00Z: no projection")}


@pytest.mark.parametrize("auto_id", FLAT_IDS)
def test_a_cooldown_remedy_promises_no_comeback_the_quota_denies(auto_id: str) -> None:
    """R5 with R6.4: the cooldown ends at 12:10Z but the 5h window at 0% holds until
    12:30Z. `cooldown` is the reason shown, yet the pair is not back when the cooldown
    ends; the remedy names the cooldown's end without promising a return then, and sends
    the operator to `why`, whose comeback is the reset."""
    from tests import builders as b

    inputs = b.fleet(
        [b.conn("c4", models=["sonnet"], rate_limited_until=b.at(minutes=10))],
        [b.reading("c4", b.at(minutes=-1), b.window("5h", 0, b.at(minutes=30)))])
    plan = make_plan(inputs, parse_auto_id(auto_id), b.NOW, "flag")
    (left,) = [x for x in plan.excluded if x.connection_id == "c4"]
    assert left.reason == "cooldown"
    assert not _admitted(make_plan(inputs, plan.auto_id, b.instant(minutes=10), "flag"), "c4")
    assert left.fix is not None
    assert "it is back" not in left.fix
    assert "the cooldown ends at 2026-11-29T12:10:00Z" in left.fix
    assert "`omniladder why c4` gives the earliest comeback" in left.fix
    (verdict,) = explain(inputs, [plan], "c4").verdicts
    (comeback,) = verdict.comebacks
    earliest = comeback.earliest
    assert earliest is None or earliest.at >= b.instant(minutes=30)


def test_a_clamped_cooldown_remedy_says_a_newer_reading_lifts_the_clamp() -> None:
    """R9, decided: the clamp reads only the latest reading, so a fresh reading without a low
    window restores the configured end. The example's codex-plus is clamped from 18:00Z to
    12:30Z; its remedy must say that the configured end stands after such a reading, since
    `why`'s comeback with a fresh reading is 18:00Z."""
    document = _invoke("plan", "auto/subscription")
    (left,) = [x for x in document["excluded"] if x["connection_id"] == "codex-plus"]
    fix = left["fix"]
    assert "it is back" not in fix
    assert "the cooldown ends at 2026-11-29T12:30:00Z (clamped to its own quota reset, R9" in fix
    assert "2026-11-29T18:00:00Z" in fix
