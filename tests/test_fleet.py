"""One fleet model under every planner: ``make_plan`` (every pair at one instant),
``connection_plan`` (``why``: one connection and the pool entries it needs) and ``Stepper``
(``simulate``, ``forecast``: the connections whose decisions change) read the same
``Fleet`` and the same rule functions.

Each test changes one rule in its one place (R7's threshold comparison in
``engine/quota.py``, R13's category membership and R12's candidate order in
``engine/fleet.py``) and shows the three planners change their answer together and still
agree with each other: no planner keeps a copy of the rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from omniladder.analyses.simulate import simulate
from omniladder.engine import fleet as fleet_module
from omniladder.engine import readings
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs, SourcedModelEntry
from omniladder.engine.plan import connection_plan, make_plan
from omniladder.engine.records import Plan
from omniladder.engine.stepping import Stepper
from omniladder.engine.tiers import rung_of
from omniladder.models import Connection, LadderSettings
from tests.builders import NOW, at, conn, fleet, reading, window

LADDER = {"exit_cutoff_percent": 2, "reentry_min_remaining_percent": 5,
          "max_reading_age_seconds": 600}


def _agreeing_plan(inputs: LoadedInputs, auto_id: str) -> Plan:
    """The whole plan, after checking that ``connection_plan`` and the ``Stepper``, on the
    same fleet, give the same answer about every connection."""
    parsed = parse_auto_id(auto_id)
    model = Fleet(inputs)
    whole = make_plan(inputs, parsed, NOW, "flag", model)
    for connection in inputs.connections:
        cid = connection.id
        narrow = connection_plan(inputs, parsed, NOW, "flag", cid, model)
        assert narrow.decisions == tuple(d for d in whole.decisions if d.connection_id == cid)
        assert [(e.position, e.rung, e.model) for e in narrow.pool] == [
            (e.position, e.rung, e.model) for e in whole.pool
            if cid in e.allowed_connection_ids]
        assert narrow.warnings == whole.warnings
    stepper = Stepper(inputs, parsed, [NOW], fleet=model)
    state = next(iter(stepper.steps()))
    assert state.eligible == whole.eligible_connection_ids
    assert state.unverified == whole.unverified_connection_ids
    assert state.pool_size == len(whole.pool)
    assert state.rungs == tuple((r.rung, r.state, r.candidates, r.connections)
                                for r in whole.rungs)
    budgets = stepper.budgets(NOW)
    for index, connection in enumerate(inputs.connections):
        assert stepper.decide(index, NOW, budgets) == tuple(
            d for d in whole.decisions if d.connection_id == connection.id)
    return whole


def _outcome(result: Plan, cid: str) -> list[tuple[str, bool, str | None]]:
    return [(d.model, d.admitted, d.reason) for d in result.decisions if d.connection_id == cid]


# --- R7: the re-entry comparison ----------------------------------------------------------


def _back_at_the_floor() -> LoadedInputs:
    """``back`` dropped out at 1% twenty minutes ago and now reads exactly the re-entry
    floor, 5% (a rolling window: no reset, so R6.4 holds nothing)."""
    return fleet(
        [conn("back", models=["sonnet"]), conn("steady", models=["sonnet"]),
         conn("paid", "openai", "apikey", models=["gpt-mini"])],
        [reading("back", at(minutes=-20), window("5h", 1)),
         reading("back", at(minutes=-1), window("5h", 5)),
         reading("steady", at(minutes=-1), window("5h", 50))],
        settings={"ladder": LADDER})


def _floor_admits(monkeypatch: pytest.MonkeyPatch) -> None:
    """R7 changed in its one function: a pair out of play comes back *at* the floor."""
    original = readings.below

    def below(figure: float, in_play: bool, ladder: LadderSettings) -> bool:
        if in_play:
            return original(figure, in_play, ladder)
        return figure < readings.threshold_of(in_play, ladder)

    monkeypatch.setattr(readings, "below", below)


@pytest.mark.parametrize("auto_id", ["auto/subscription", "auto/thrifty"])
def test_R7_reentry_is_one_comparison_that_plan_why_and_the_stepper_all_reach(
        monkeypatch: pytest.MonkeyPatch, auto_id: str) -> None:
    """At exactly the re-entry floor the pair stays out (R7: back only *above* the floor);
    changing the one comparison lets it back in every planner at once."""
    inputs = _back_at_the_floor()
    before = _agreeing_plan(inputs, auto_id)
    assert _outcome(before, "back") == [("sonnet", False, "quota-below-reentry")]
    _floor_admits(monkeypatch)
    after = _agreeing_plan(inputs, auto_id)
    assert _outcome(after, "back") == [("sonnet", True, None)]
    assert _outcome(after, "steady") == _outcome(before, "steady")


def test_R7_changed_in_one_place_keeps_simulate_equal_to_replanning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The stepper and the whole re-plan at every step still give the same series, and
    the changed rule shows in both: ``back`` serves from the first step."""
    inputs = _back_at_the_floor()
    parsed = parse_auto_id("auto/subscription")
    start, end, step = NOW - timedelta(minutes=30), NOW + timedelta(minutes=30), \
        timedelta(minutes=10)
    plain = simulate(inputs, parsed, start, end, step)
    assert "back" not in plain.points[3].eligible
    _floor_admits(monkeypatch)
    stepped = simulate(inputs, parsed, start, end, step)
    assert stepped == simulate(inputs, parsed, start, end, step, replan=True)
    assert "back" in stepped.points[3].eligible


# --- R6.4: the hold ------------------------------------------------------------------------


def _held_then_full() -> LoadedInputs:
    """``held`` read 1% of its 5h window an hour ago and reads 80% now, before that
    window's reset: R6.4 holds the 1% until the reset, two hours ahead."""
    return fleet(
        [conn("held", models=["sonnet"]), conn("paid", "openai", "apikey", models=["gpt-mini"])],
        [reading("held", at(minutes=-60), window("5h", 1, at(hours=2))),
         reading("held", at(minutes=-1), window("5h", 80, at(hours=2)))],
        settings={"ladder": LADDER})


def _only_empty_windows_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """R6.4 changed in its one function: only a window that reads 0% is low enough to hold."""
    original = readings.is_low
    monkeypatch.setattr(readings, "is_low", lambda window, threshold: original(window, 0.0))


@pytest.mark.parametrize("auto_id", ["auto/subscription", "auto/thrifty"])
def test_R6_4_hold_is_one_function_that_plan_why_and_the_stepper_all_reach(
        monkeypatch: pytest.MonkeyPatch, auto_id: str) -> None:
    """The 1% window holds the pair out; narrowing ``readings.is_low`` releases it in every
    planner at once, and simulate still equals re-planning."""
    inputs = _held_then_full()
    before = _agreeing_plan(inputs, auto_id)
    assert _outcome(before, "held") == [("sonnet", False, "quota-below-reentry")]
    _only_empty_windows_hold(monkeypatch)
    after = _agreeing_plan(inputs, auto_id)
    assert _outcome(after, "held") == [("sonnet", True, None)]
    parsed = parse_auto_id(auto_id)
    start, end, step = NOW - timedelta(minutes=30), NOW + timedelta(hours=3), \
        timedelta(minutes=30)
    stepped = simulate(inputs, parsed, start, end, step)
    assert stepped == simulate(inputs, parsed, start, end, step, replan=True)


# --- R13: category membership -------------------------------------------------------------


def _claude_pair() -> LoadedInputs:
    return fleet(
        [conn("b", models=["opus"]), conn("a", models=["sonnet", "opus"]),
         conn("k", "ollama", "none", models=["qwen"]),
         conn("m", "openai", "apikey", models=["gpt-mini", "gpt-big"])],
        [reading("a", at(minutes=-1), window("5h", 50)),
         reading("b", at(minutes=-1), window("5h", 50))],
        settings={"ladder": LADDER})


def test_R13_membership_is_decided_once_for_plan_why_and_the_stepper(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """opus is no chat model, so ``auto/chat:thrifty`` leaves it out everywhere; putting it
    in the category in the fleet's one membership function admits it everywhere."""
    inputs = _claude_pair()
    before = _agreeing_plan(inputs, "auto/chat:thrifty")
    assert _outcome(before, "b") == [("opus", False, "not-in-category")]
    original = fleet_module.carries

    def carries(sourced: SourcedModelEntry | None, category: str | None) -> bool:
        return original(sourced, category) or (
            sourced is not None and sourced.entry.model == "opus")

    monkeypatch.setattr(fleet_module, "carries", carries)
    after = _agreeing_plan(inputs, "auto/chat:thrifty")
    assert _outcome(after, "b") == [("opus", True, None)]
    assert [(e.rung, e.model) for e in after.pool][:2] == [
        ("subscription", "opus"), ("subscription", "sonnet")]


# --- R12: candidate order -----------------------------------------------------------------


def test_R12_candidate_order_is_built_once_for_plan_why_and_the_stepper(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """First appearance puts claude/opus (b, then a) before claude/sonnet; reversing the
    fleet's one candidate list reverses the pool, the positions ``why`` reports and the
    order the stepper seats the eligible connections in, together."""
    inputs = _claude_pair()
    before = _agreeing_plan(inputs, "auto/thrifty")
    assert [(e.rung, e.model, e.allowed_connection_ids) for e in before.pool] == [
        ("subscription", "opus", ("b", "a")), ("subscription", "sonnet", ("a",)),
        ("keyless", "qwen", ("k",)), ("cheap", "gpt-mini", ("m",)),
        ("premium", "gpt-big", ("m",))]
    assert before.eligible_connection_ids == ("b", "a", "k", "m")
    original = fleet_module.first_appearance

    def reversed_order(connections: tuple[Connection, ...], models: Any
                       ) -> dict[tuple[str, str], list[int]]:
        return dict(reversed(original(connections, models).items()))

    monkeypatch.setattr(fleet_module, "first_appearance", reversed_order)
    after = _agreeing_plan(inputs, "auto/thrifty")
    assert [(e.rung, e.model, e.allowed_connection_ids) for e in after.pool] == [
        ("subscription", "sonnet", ("a",)), ("subscription", "opus", ("b", "a")),
        ("keyless", "qwen", ("k",)), ("cheap", "gpt-mini", ("m",)),
        ("premium", "gpt-big", ("m",))]
    assert after.eligible_connection_ids == ("a", "b", "k", "m")


# --- the fleet itself ---------------------------------------------------------------------


def test_a_fleet_of_other_inputs_is_refused() -> None:
    inputs = _claude_pair()
    other = Fleet(_back_at_the_floor())
    parsed = parse_auto_id("auto/thrifty")
    with pytest.raises(ValueError, match="other inputs"):
        make_plan(inputs, parsed, NOW, "flag", other)
    with pytest.raises(ValueError, match="other inputs"):
        connection_plan(inputs, parsed, NOW, "flag", "a", other)
    with pytest.raises(ValueError, match="other inputs"):
        Stepper(inputs, parsed, [NOW], fleet=other)


def test_R3_warnings_name_spend_event_models_first_then_candidates_in_R12_order() -> None:
    """A metered connection's model outside the catalog is warned about once per plan: the
    ones spend events named (in ledger order, within the budget period) before the
    candidates (R12 order); an event outside the period names nothing."""
    inputs = fleet(
        [conn("m", "openai", "apikey", models=["zeta", "alpha"])], [],
        settings={"budgets": {"rung_budget_usd": {"premium": 10}}},
        spend=[{"at": at(hours=-1), "cost_usd": 1.0, "connection": "m", "model": "omega"},
               {"at": at(hours=-2), "cost_usd": 1.0, "connection": "m", "model": "alpha"},
               {"at": at(days=-40), "cost_usd": 1.0, "connection": "m", "model": "old"}])
    whole = _agreeing_plan(inputs, "auto/thrifty")
    named = [w.split("'")[1] for w in whole.warnings if "not in the model catalog" in w]
    assert named == ["omega", "alpha", "zeta"]


def _pairs(model: Fleet) -> Iterator[tuple[str, str, int, str]]:
    for connection, pairs in zip(model.connections, model.pairs, strict=True):
        for pair in pairs:
            yield connection.id, pair.model, pair.candidate, pair.rung


def test_candidates_members_and_rungs_are_those_of_each_pair_in_file_order() -> None:
    """R12's members and R4's rungs as read pair by pair, in a fleet that repeats a
    combination of provider and models out of order (with a model listed twice) and mixes
    billing classes under one candidate: a subscription, an override to metered and an
    uncurated auth type (unknown, treated as metered) all serve claude/opus."""
    inputs = fleet(
        [conn("a", models=["sonnet", "opus", "sonnet"]), conn("x", auth_type="apikey",
                                                                models=["opus"]),
         conn("b", models=["sonnet", "opus", "sonnet"]),
         conn("m", billing="metered", models=["opus", "unlisted-model"]),
         conn("c", models=["sonnet", "opus", "sonnet"]),
         conn("y", auth_type="apikey", models=["unlisted-model"])], [])
    model = Fleet(inputs)
    members: dict[tuple[str, str], list[int]] = {}
    for index, connection in enumerate(inputs.connections):
        assert connection.models is not None
        for served in dict.fromkeys(connection.models):
            members.setdefault((connection.provider, served), []).append(index)
    assert list(model.keys) == list(members)
    assert list(model.members) == list(members.values())
    assert [[rung_of(model.classified[m], tier) for m in found]
            for found, tier in zip(members.values(), model.tiers, strict=True)] == list(
        model.rungs)
    assert model.models[0] == model.models[2] == ("sonnet", "opus")
    assert {rung for rungs in model.rungs for rung in rungs} > {"subscription"}
    assert model.unlisted == (("claude", "unlisted-model"),)


def test_each_connections_pairs_come_in_candidate_order_with_their_rung() -> None:
    """R12 and R4 as the fleet holds them: a connection listing sonnet before opus still
    has opus first when another connection brought opus in first."""
    model = Fleet(_claude_pair())
    assert list(_pairs(model)) == [
        ("b", "opus", 0, "subscription"), ("a", "opus", 0, "subscription"),
        ("a", "sonnet", 1, "subscription"), ("k", "qwen", 2, "keyless"),
        ("m", "gpt-mini", 3, "cheap"), ("m", "gpt-big", 4, "premium")]
    assert [model.pairs_of(index) for index in range(4)] == list(model.pairs)
    fresh = Fleet(model.inputs)
    assert [fresh.pairs_of(index) for index in range(4)] == list(model.pairs)
