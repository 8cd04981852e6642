"""`simulate` re-decides only what changed; the whole-fleet re-plan at every step is the oracle.

Generated fleets mix every input that moves a decision in time: readings arriving, windows
and exhausted readings resetting, readings turning stale (R6.5) or held past their age by a
low window with a reset (R6.4), observed overage (R2a) narrowing or widening while fresh,
cooldowns and their clamp (R9), spend crossing a budget and a budget period starting (R8).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.changes import fresh_until
from omniladder.engine.inputs import LoadedInputs
from omniladder.loading import load_catalogs
from omniladder.models import (
    BudgetSettings,
    Connection,
    LadderSettings,
    Reading,
    ReadingStatus,
    RungBudgets,
    Settings,
    SpendEvent,
    TierSettings,
    Window,
)
from omniladder.rendering.timeline import series_json
from omniladder.simulate import simulate
from tests.conftest import EXAMPLES

CATALOGS = load_catalogs((), ())
T0 = datetime(2026, 11, 30, 22, tzinfo=UTC)
"""Two hours before a day, and a month, begins: budget periods start inside the range."""
_PROVIDERS = [("claude", "oauth", ("claude-sonnet-4-5", "claude-opus-4-1")),
              ("codex", "oauth", ("gpt-5.1-codex",)),
              ("cursor", "oauth", ("claude-sonnet-4-5",)),
              ("copilot-web", "apikey", ("gpt-4.1", "gpt-5-mini")),
              ("openai", "apikey", ("gpt-5-mini", "gpt-5.1")),
              ("gemini", "apikey", ("gemini-2.5-flash",)),
              ("ollama", "none", ("llama3.3:70b",)),
              ("acme", "apikey", ("acme-1",))]
_FIGURES = [0.0, 1.5, 2.0, 3.0, 5.0, 6.0, 50.0]


def minutes(draw: st.DrawFn, low: int, high: int) -> datetime:
    return T0 + timedelta(minutes=draw(st.integers(low, high)))


@st.composite
def windows(draw: st.DrawFn, models: tuple[str, ...]) -> tuple[Window, ...]:
    out: list[Window] = []
    for index in range(draw(st.integers(1, 3))):
        scoped = draw(st.booleans()) and len(models) > 1
        if draw(st.integers(0, 5)) == 0:
            out.append(Window(name=f"w{index}", unlimited=True))
            continue
        out.append(Window(
            name=f"w{index}", remaining_percent=draw(st.sampled_from(_FIGURES)),
            reset_at=None if draw(st.integers(0, 4)) == 0 else minutes(draw, -30, 180),
            models=(models[0],) if scoped else None))
    return tuple(out)


@st.composite
def fleets(draw: st.DrawFn) -> LoadedInputs:
    connections: list[Connection] = []
    readings: dict[str, tuple[Reading, ...]] = {}
    for index in range(draw(st.integers(1, 6))):
        provider, auth, models = draw(st.sampled_from(_PROVIDERS))
        cid = f"c{index}"
        cooling = draw(st.one_of(st.none(), st.integers(-30, 180)))
        connections.append(Connection(
            id=cid, provider=provider, auth_type=auth, models=models,
            active=draw(st.integers(0, 9)) > 0,
            overage=draw(st.sampled_from([None, None, None, "meters-to-paid"]))
            if provider == "claude" else None,
            rate_limited_until=None if cooling is None else T0 + timedelta(minutes=cooling)))
        history: list[Reading] = []
        for at in sorted(draw(st.lists(st.integers(-200, 150), max_size=4, unique=True))):
            status: ReadingStatus | None = draw(
                st.sampled_from([None, None, None, "ok", "exhausted", "unknown"]))
            top_level = status is None and draw(st.booleans())
            offset = timedelta(seconds=draw(st.sampled_from([0, 0, 0, 0.5, 30, 59.5])))
            history.append(Reading(
                connection=cid, checked_at=T0 + timedelta(minutes=at) + offset, status=status,
                remaining_percent=draw(st.sampled_from(_FIGURES)) if top_level else None,
                reset_at=(minutes(draw, -30, 180) if status == "exhausted" or top_level
                          else None),
                windows=None if status == "exhausted" or top_level
                else draw(windows(models)),
                overage=draw(st.sampled_from([None, None, "hard-stop", "meters-to-paid"]))))
        readings[cid] = tuple(history)
    spend: tuple[SpendEvent, ...] | None = None
    if draw(st.booleans()):
        events = []
        for _ in range(draw(st.integers(0, 5))):
            connection = draw(st.sampled_from(connections))
            events.append(SpendEvent(
                at=minutes(draw, -600, 180), cost_usd=draw(st.sampled_from([0.5, 1.0, 2.0])),
                connection=connection.id, model=connection.models[0]
                if connection.models else None)
                if draw(st.booleans()) else
                SpendEvent(at=minutes(draw, -600, 180), cost_usd=1.0,
                           rung=draw(st.sampled_from(["cheap", "premium"]))))
        spend = tuple(events)
    ladder = LadderSettings(
        max_reading_age_seconds=draw(st.sampled_from([0.0, 90.0, 180.0, 600.0, 3600.0])),
        reentry_min_remaining_percent=draw(st.sampled_from([2.0, 5.0])),
        clamp_cooldown_to_reset=draw(st.booleans()))
    budgets = BudgetSettings(
        period=draw(st.sampled_from(["day", "week", "month"])),
        rung_budget_usd=RungBudgets(cheap=draw(st.sampled_from([None, 0.0, 1.5, 3.0])),
                                    premium=draw(st.sampled_from([None, 0.0, 2.0]))))
    return LoadedInputs(
        settings=Settings(ladder=ladder, budgets=budgets,
                          tiers=TierSettings(free_providers=("gemini",))),
        connections=tuple(connections), readings=readings, quota=None, spend=spend,
        catalogs=CATALOGS, files={})


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(fleets(),
       st.sampled_from(["auto/thrifty", "auto/subscription", "auto/coding:thrifty"]),
       st.integers(-240, 60), st.integers(0, 300), st.sampled_from([1, 7, 15, 30]))
def test_stepping_equals_replanning_every_step(inputs: LoadedInputs, auto_id: str,
                                               start: int, length: int, step: int) -> None:
    """Every point, transition, cause, flap and warning equals the whole-fleet re-plan's."""
    first = T0 + timedelta(minutes=start)
    last = first + timedelta(minutes=length)
    every = timedelta(minutes=step)
    parsed = parse_auto_id(auto_id)
    stepped = simulate(inputs, parsed, first, last, every)
    replanned = simulate(inputs, parsed, first, last, every, replan=True)
    assert stepped == replanned
    assert series_json(stepped) == series_json(replanned)


def test_stepping_equals_replanning_on_the_day_example() -> None:
    from omniladder.loading import load_inputs

    inputs = load_inputs(EXAMPLES / "day" / "omniladder.toml")
    start = datetime(2026, 11, 29, tzinfo=UTC)
    for auto_id in ("auto/thrifty", "auto/subscription", "auto/coding:thrifty"):
        parsed = parse_auto_id(auto_id)
        stepped = simulate(inputs, parsed, start, start + timedelta(days=1),
                           timedelta(minutes=5))
        replanned = simulate(inputs, parsed, start, start + timedelta(days=1),
                             timedelta(minutes=5), replan=True)
        assert stepped.transitions, "the day example has transitions to compare"
        assert stepped == replanned


def test_a_superseded_overage_report_still_turns_stale() -> None:
    """R2a keeps the latest reading that carries an overage report, even under newer
    readings without one: its turning stale ends the widening at that step, not later."""
    ladder = LadderSettings(max_reading_age_seconds=600.0)
    readings = (
        Reading(connection="c", checked_at=T0, overage="hard-stop",
                windows=(Window(name="5h", remaining_percent=50.0),)),
        Reading(connection="c", checked_at=T0 + timedelta(minutes=5),
                windows=(Window(name="5h", remaining_percent=40.0),)),
        Reading(connection="c", checked_at=T0 + timedelta(minutes=9, seconds=30),
                windows=(Window(name="5h", remaining_percent=30.0),)),
    )
    inputs = LoadedInputs(
        settings=Settings(ladder=ladder),
        connections=(Connection(id="c", provider="cursor", auth_type="oauth",
                                models=("claude-sonnet-4-5",)),),
        readings={"c": readings}, quota=None, spend=None, catalogs=CATALOGS, files={})
    parsed = parse_auto_id("auto/subscription")
    first, last = T0, T0 + timedelta(minutes=20)
    stepped = simulate(inputs, parsed, first, last, timedelta(minutes=1))
    assert [p.head for p in stepped.points][9:12] == ["subscription", "subscription", None]
    assert stepped == simulate(inputs, parsed, first, last, timedelta(minutes=1), replan=True)


def test_a_reading_turns_stale_at_the_first_step_past_its_age() -> None:
    """R6.5 to the microsecond: 180.5 s old is stale at max 180, the step it happens."""
    ladder = LadderSettings(max_reading_age_seconds=180.0)
    reading = Reading(connection="c", checked_at=T0 - timedelta(seconds=0.5),
                      windows=(Window(name="5h", remaining_percent=50.0),))
    inputs = LoadedInputs(
        settings=Settings(ladder=ladder),
        connections=(Connection(id="c", provider="claude", auth_type="oauth",
                                models=("claude-sonnet-4-5",)),),
        readings={"c": (reading,)}, quota=None, spend=None, catalogs=CATALOGS, files={})
    first, last = T0, T0 + timedelta(minutes=5)
    for auto_id, expected in (("auto/thrifty", [(), (), (), ("c",), ("c",), ("c",)]),
                              ("auto/subscription", [(), (), (), (), (), ()])):
        parsed = parse_auto_id(auto_id)
        stepped = simulate(inputs, parsed, first, last, timedelta(minutes=1))
        assert [p.unverified for p in stepped.points] == expected
        if auto_id == "auto/subscription":
            assert [p.head for p in stepped.points] == ["subscription"] * 3 + [None] * 3
        assert stepped == simulate(inputs, parsed, first, last, timedelta(minutes=1),
                                   replan=True)


@pytest.mark.parametrize("max_age", [0.0, 1.5e-6, 0.1, 90.0, 180.0000005, 1e9])
def test_fresh_until_is_the_last_instant_r6_5_calls_fresh(max_age: float) -> None:
    """R6.5: a reading is stale once its age in seconds exceeds the max age. The last fresh
    instant the change schedule uses matches that comparison to the microsecond, also for a
    max age that is no whole number of microseconds."""
    last = fresh_until(T0, max_age)
    assert last is not None
    assert (last - T0).total_seconds() <= max_age
    assert (last + timedelta(microseconds=1) - T0).total_seconds() > max_age


def test_a_max_age_past_the_calendar_end_never_goes_stale() -> None:
    """R6.5: no stale instant is scheduled when it would lie after year 9999."""
    assert fresh_until(T0, 1e12) is None
    assert fresh_until(T0, 1.7e308) is None


def test_spend_crossing_a_budget_and_a_new_period_reopen_the_rung() -> None:
    """R8: the step a spend event crosses the cheap budget closes the rung; the month that
    starts at midnight opens it again; a spend event that closes nothing re-decides nothing
    it should not."""
    events = (
        SpendEvent(at=T0 - timedelta(hours=3), cost_usd=0.5, rung="cheap"),
        SpendEvent(at=T0 + timedelta(minutes=20), cost_usd=0.25, connection="k",
                   model="gpt-5-mini"),
        SpendEvent(at=T0 + timedelta(minutes=50), cost_usd=1.0, connection="k",
                   model="gpt-5-mini"),
        SpendEvent(at=T0 + timedelta(hours=2, minutes=40), cost_usd=2.0, rung="cheap"),
    )
    inputs = LoadedInputs(
        settings=Settings(budgets=BudgetSettings(period="month",
                                                 rung_budget_usd=RungBudgets(cheap=1.5))),
        connections=(Connection(id="k", provider="openai", auth_type="apikey",
                                models=("gpt-5-mini",)),),
        readings={}, quota=None, spend=events, catalogs=CATALOGS, files={})
    parsed = parse_auto_id("auto/thrifty")
    first, last = T0, T0 + timedelta(hours=3)
    stepped = simulate(inputs, parsed, first, last, timedelta(minutes=10))
    heads = [p.head for p in stepped.points]
    assert heads[:5] == ["cheap"] * 5  # 0.75 of 1.5 spent
    assert heads[5:12] == [None] * 7  # 1.75 spent from 22:50
    assert heads[12:16] == ["cheap"] * 4  # a new month at midnight
    assert heads[16:] == [None] * 3  # 2.0 more at 00:40
    assert stepped == simulate(inputs, parsed, first, last, timedelta(minutes=10),
                               replan=True)
