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

from omniladder.analyses.simulate import simulate
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.readings import stale_after
from omniladder.models import (
    BudgetSettings,
    Connection,
    LadderSettings,
    Reading,
    RungBudgets,
    Settings,
    SpendEvent,
    Window,
)
from omniladder.rendering.timeline import series_json
from tests.conftest import EXAMPLES
from tests.depth import deep
from tests.strategies import SHIPPED, input_sets

CATALOGS = SHIPPED.catalogs
T0 = datetime(2026, 11, 30, 22, tzinfo=UTC)
"""Two hours before a day, and a month, begins: budget periods start inside the range."""
FLEETS = input_sets(anchor=T0, catalog=SHIPPED, connections=(1, 6), readings=(0, 4),
                    readings_between=(-200, 150), resets_between=(-30, 180),
                    spend_between=(-600, 180))
"""Readings arriving through the range, resets and cooldown ends inside it, spend around it."""


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(FLEETS,
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


T_WEEK = datetime(2026, 12, 6, 22, tzinfo=UTC)
"""Two hours before an ISO week (Monday 2026-12-07) begins, inside a month: a weekly
budget's period starts inside the range, a monthly one's does not."""
WEEK_FLEETS = input_sets(anchor=T_WEEK, catalog=SHIPPED, connections=(1, 6), readings=(0, 4),
                         readings_between=(-200, 150), resets_between=(-30, 180),
                         spend_between=(-600, 180))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(WEEK_FLEETS, st.sampled_from(["auto/thrifty", "auto/coding:thrifty"]),
       st.integers(-240, 60), st.integers(0, 300), st.sampled_from([1, 7, 15, 30]))
def test_stepping_equals_replanning_across_a_week_start(inputs: LoadedInputs, auto_id: str,
                                                        start: int, length: int,
                                                        step: int) -> None:
    """R8's ISO week from Monday: stepping across the week start equals re-planning."""
    first = T_WEEK + timedelta(minutes=start)
    last = first + timedelta(minutes=length)
    every = timedelta(minutes=step)
    parsed = parse_auto_id(auto_id)
    assert simulate(inputs, parsed, first, last, every) == simulate(
        inputs, parsed, first, last, every, replan=True)


def test_stepping_equals_replanning_on_the_day_example() -> None:
    from omniladder.inputs.input_set import load_inputs

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
def test_stale_after_is_the_last_instant_r6_5_calls_fresh(max_age: float) -> None:
    """R6.5: a reading is stale once its age in seconds exceeds the max age. The last fresh
    instant the change schedule uses matches that comparison to the microsecond, also for a
    max age that is no whole number of microseconds."""
    last = stale_after(T0, max_age)
    assert last is not None
    assert (last - T0).total_seconds() <= max_age
    assert (last + timedelta(microseconds=1) - T0).total_seconds() > max_age


def test_a_max_age_past_the_calendar_end_never_goes_stale() -> None:
    """R6.5: no stale instant is scheduled when it would lie after year 9999."""
    assert stale_after(T0, 1e12) is None
    assert stale_after(T0, 1.7e308) is None


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


@deep(60, quick=12, deadline=None)
def test_each_steps_leader_is_the_first_seated(examples: settings) -> None:
    """A step's ``leader`` is the first of its ``eligible`` at every step, also when the
    steps are asked to list no one (what ``audit traffic``'s walk reads)."""
    @examples
    @given(FLEETS, st.sampled_from(["auto/thrifty", "auto/subscription", "auto/coding:thrifty"]),
           st.integers(-240, 60), st.integers(0, 300), st.sampled_from([1, 7, 30]))
    def holds(inputs: LoadedInputs, auto_id: str,
              start: int, length: int, step: int) -> None:
        from omniladder.engine.stepping import Stepper

        first = T0 + timedelta(minutes=start)
        instants = [first + timedelta(minutes=minute) for minute in range(0, length + 1, step)]
        parsed = parse_auto_id(auto_id)
        listed = list(Stepper(inputs, parsed, instants).steps())
        unlisted = list(Stepper(inputs, parsed, instants, seated_at=()).steps())
        assert [state.leader for state in listed] == [
            state.eligible[0] if state.eligible else None for state in listed]
        assert [state.leader for state in unlisted] == [state.leader for state in listed]

    holds()
