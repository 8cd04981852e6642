"""The what-if replay (SPEC §10.3) on hand-computed fleets: where each request goes under both
orders, what it pays, what expires, and that the plan in force at every request is exactly
``make_plan`` on the replayed readings."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

import pytest

from omniladder.analyses.whatif.demand import Request
from omniladder.analyses.whatif.replay import Outcome, Replay, WindowModel
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.models import Connection
from tests.builders import NOW, conn, fleet

MILLION = 1_000_000
PER_REQUEST = 10.0
"""Percent of a seat's window one request of a million input tokens takes."""
END_HOURS = 6.0
"""The replayed span: six hours from NOW."""
PAID = 0.25
"""A million input tokens of gpt-mini ($0.25 per million)."""


def _seats(order: str) -> LoadedInputs:
    return fleet([conn("seat-a", models=["sonnet"]), conn("seat-b", models=["sonnet"]),
                  conn("key", "openai", "apikey", models=["gpt-mini"])],
                 settings={"ladder": {"within_rung_order": order}})


def _window(remaining: float, reset: datetime, length: float = 5 * 3600.0) -> WindowModel:
    return WindowModel(name="session", models=None, window_seconds=None,
                       length_seconds=length, first_use=False,
                       percent_per_unit=PER_REQUEST / MILLION, background_percent_per_hour=0.0,
                       remaining=remaining, reset_at=reset)


def _requests(*hours: float) -> list[Request]:
    return [Request(at=NOW + timedelta(hours=h), tokens_in=MILLION, tokens_out=0)
            for h in hours]


def _price(connection: Connection, model: str, request: Request) -> float | None:
    assert model == "gpt-mini"
    return PAID * (request.tokens_in or 0) / MILLION


def _replay(inputs: LoadedInputs, demand: list[Request],
            models: dict[str, tuple[WindowModel, ...]], *, check: bool = True) -> Outcome:
    auto_id = parse_auto_id("auto/thrifty")
    replay = Replay(inputs, auto_id, NOW, NOW + timedelta(hours=END_HOURS), models, _price,
                    keep_served=True)
    if check:
        def watch(request: Request, target: tuple[int, str, int] | None) -> None:
            at = request.at
            held = replay.inputs._replace(readings=replay.readings_at(at))
            plan = make_plan(held, auto_id, at, "flag")
            if target is None:
                assert not plan.pool
                return
            index, rung, candidate = target
            first = plan.pool[0]
            assert (first.rung, first.model, first.allowed_connection_ids[0]) == (
                rung, replay.fleet.keys[candidate][1],
                replay.fleet.connections[index].id), at
        replay.watch = watch
    return replay.run(demand)


def _served(outcome: Outcome, inputs: LoadedInputs) -> list[str | None]:
    ids = [c.id for c in inputs.connections]
    return [None if s is None else ids[s[0]] for s in outcome.served_by]


# Seat A: 50 % left, resets in 10 h; seat B: 50 % left, resets in 2 h, then every 5 h. Each
# request takes 10 %: six before B's reset, twelve after it.
DEMAND_HOURS = (1.0, 1.1, 1.2, 1.3, 1.4, 1.5, *(3.0 + k / 10 for k in range(12)))


def _models() -> dict[str, tuple[WindowModel, ...]]:
    return {"seat-a": (_window(50.0, NOW + timedelta(hours=10)),),
            "seat-b": (_window(50.0, NOW + timedelta(hours=2)),)}


def test_declared_spends_the_later_seat_first_and_pays_for_it() -> None:
    # A serves five (50 → 0, out), B one (50 → 40: 40 % expire at B's reset). After it, B
    # (100) serves ten, A is out until its reset: the last two are paid.
    inputs = _seats("declared")
    outcome = _replay(inputs, _requests(*DEMAND_HOURS), _models())
    assert _served(outcome, inputs) == (["seat-a"] * 5 + ["seat-b"] * 11 + ["key"] * 2)
    assert outcome.paid_usd == pytest.approx(2 * PAID)
    assert outcome.served_by_rung["subscription"] == 16
    assert outcome.served_by_rung["cheap"] == 2
    assert [(e.connection, round(e.percent, 6)) for e in outcome.expired] == [("seat-b", 40.0)]


def test_expiring_first_spends_the_seat_that_resets_first_and_pays_nothing() -> None:
    # B's 50 % expire in 2 h (25 %/h), A's in 10 h (5 %/h): B serves five, A one (50 → 40).
    # After B's reset (100 %, next reset at 7 h), at 3.0 + k/10 h: B = left_B / (7 − t),
    # A = left_A / (10 − t). B leads through k = 7 (30 % / 3.3 h = 9.1 against 40 / 6.3 =
    # 6.3); at k = 8 B's 20 / 3.2 = 6.25 falls under A's 40 / 6.2 = 6.45: A; k = 9 B (20 /
    # 3.1 = 6.45 > 30 / 6.1 = 4.9); k = 10 A (10 / 3 = 3.3 < 30 / 6 = 5); k = 11 B (10 / 2.9
    # = 3.45 > 20 / 5.9 = 3.39). Nothing is paid, nothing expires in the span.
    inputs = _seats("expiring-first")
    outcome = _replay(inputs, _requests(*DEMAND_HOURS), _models())
    assert _served(outcome, inputs) == (["seat-b"] * 5 + ["seat-a"] + ["seat-b"] * 8
                                        + ["seat-a", "seat-b", "seat-a", "seat-b"])
    assert outcome.paid_usd == 0.0
    assert outcome.expired == []


def test_a_first_use_window_starts_its_cycle_at_the_first_request() -> None:
    # A first-use window at rest: the first request starts a 5 h cycle, its reset then comes
    # 5 h later and refills it.
    inputs = _seats("declared")
    model = WindowModel(name="session", models=None, window_seconds=None,
                        length_seconds=5 * 3600.0, first_use=True,
                        percent_per_unit=60.0 / MILLION, background_percent_per_hour=0.0,
                        remaining=100.0, reset_at=None)
    outcome = _replay(inputs, _requests(1.0, 2.0, 3.0, 5.5),
                      {"seat-a": (model,), "seat-b": (model,)})
    # 1 h: A 100 → 40; 2 h: A 40 → 0 (out until 6 h); 3 h: B starts (→ 40); 5.5 h: B again
    # (A's cycle runs to 6 h)
    assert _served(outcome, inputs) == ["seat-a", "seat-a", "seat-b", "seat-b"]
    assert outcome.paid_usd == 0.0


def test_background_burn_takes_a_seat_out_at_the_computed_instant() -> None:
    # A burns 10 %/h by itself from 50 %: it reaches the 2 % cutoff at 4.8 h, so a request at
    # 4.7 h goes to A and one at 4.9 h to B.
    inputs = _seats("declared")
    burning = WindowModel(name="session", models=None, window_seconds=None,
                          length_seconds=None, first_use=False, percent_per_unit=0.0,
                          background_percent_per_hour=10.0, remaining=50.0, reset_at=None)
    outcome = _replay(inputs, _requests(4.7, 4.9),
                      {"seat-a": (burning,), "seat-b": (_window(50.0, NOW + timedelta(
                          hours=20)),)})
    assert _served(outcome, inputs) == ["seat-a", "seat-b"]


def test_a_request_with_no_pool_entry_is_blocked() -> None:
    inputs = fleet([conn("seat-a", models=["sonnet"])])
    outcome = _replay(inputs, _requests(1.0, 1.1, 1.2, 1.3, 1.4, 1.5),
                      {"seat-a": (_window(50.0, NOW + timedelta(hours=10)),)})
    assert outcome.blocked == 1
    assert _served(outcome, inputs)[-1] is None


def test_a_window_of_some_models_is_fitted_against_their_requests_alone() -> None:
    """A weekly Opus window falls 10 points while the seat served 100,000 units of Sonnet
    and none of Opus: the Sonnet requests explain none of it (SPEC §10.2)."""
    from omniladder.analyses.whatif.recorded import Recorded
    from omniladder.analyses.whatif.run import consumption
    from tests.builders import at, reading, window

    inputs = fleet([conn("seat", models=["sonnet", "opus"])], [
        reading("seat", at(hours=-3), window("weekly", 80, at(hours=100)),
                window("weekly-opus", 50, at(hours=100), models=["opus"])),
        reading("seat", at(hours=-1), window("weekly", 70, at(hours=100)),
                window("weekly-opus", 40, at(hours=100), models=["opus"]))])
    served = [(NOW - timedelta(hours=2), 100_000.0)]
    recorded = Recorded(served={"seat": served}, served_by_model={"seat": {"sonnet": served}})
    fits = consumption(inputs, recorded)["seat"]
    assert fits["weekly"].percent_per_unit == pytest.approx(10 / 100_000)
    assert fits["weekly-opus"].percent_per_unit == 0.0
    assert fits["weekly-opus"].background_percent_per_hour == pytest.approx(5.0)


def test_a_background_of_next_to_nothing_never_crosses() -> None:
    # A fitted background of 1e-12 %/h would reach the cutoff some 5e13 hours on, past
    # what a datetime holds: no crossing, and the replay runs (it raised OverflowError).
    inputs = _seats("declared")
    faint = dataclasses.replace(_window(50.0, NOW + timedelta(hours=10)),
                                background_percent_per_hour=1e-12)
    outcome = _replay(inputs, _requests(1.0, 2.0),
                      {"seat-a": (faint,), "seat-b": (_window(50.0, NOW + timedelta(hours=2)),)})
    assert _served(outcome, inputs) == ["seat-a", "seat-a"]
