"""The narrowed plan ``why`` reads (``connection_plan``) and the narrowed inputs of its
comebacks (``focus``): exactly the whole fleet's answer about one connection, on a fleet with
a cooldown clamp (R9), an observed overage (R2a), a model missing from the catalog (R12), a
model outside the category (R13) and a budget ledger (R8)."""

from __future__ import annotations

from typing import Any

import pytest

from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import connection_plan, focus, make_plan
from omniladder.engine.records import Clamp
from tests.builders import NOW, at, conn, fleet, instant, reading, window


def _fleet(**kwargs: Any) -> LoadedInputs:
    return fleet(
        [conn("m", "openai", "apikey", models=["gpt-new", "gpt-mini"]),
         conn("t", "claude", "oauth", models=["opus", "sonnet"],
              rate_limited_until=at(hours=3)),
         conn("n", "claude", "oauth", models=["sonnet"])],
        [reading("t", at(minutes=-1), window("5h", 50, at(hours=2)),
                 window("weekly-opus", 0, at(seconds=-30), models=["opus"])),
         reading("n", at(minutes=-1), window("5h", 50, at(hours=2)),
                 overage="meters-to-paid")],
        **kwargs)


AUTO_IDS = ("auto/subscription", "auto/thrifty", "auto/chat:thrifty")


@pytest.mark.parametrize("auto_id", AUTO_IDS)
@pytest.mark.parametrize("cid", ["m", "t", "n"])
def test_the_narrowed_plan_is_the_whole_plans_answer(auto_id: str, cid: str) -> None:
    inputs = _fleet(settings={"budgets": {"rung_budget_usd": {"premium": 10}}},
                    spend=[{"at": at(hours=-1), "cost_usd": 2.0, "connection": "m",
                            "model": "gpt-new"}])
    parsed = parse_auto_id(auto_id)
    whole = make_plan(inputs, parsed, NOW, "flag")
    narrow = connection_plan(inputs, parsed, NOW, "flag", cid)
    assert narrow.decisions == tuple(d for d in whole.decisions if d.connection_id == cid)
    assert narrow.excluded == tuple(x for x in whole.excluded if x.connection_id == cid)
    assert narrow.connections == tuple(r for r in whole.connections if r.id == cid)
    assert narrow.clamps == tuple(c for c in whole.clamps if c.connection_id == cid)
    assert narrow.warnings == whole.warnings
    assert [(e.position, e.rung, e.model) for e in narrow.pool] == [
        (e.position, e.rung, e.model) for e in whole.pool if cid in e.allowed_connection_ids]


def test_the_clamp_of_a_connection_cooled_down_to_its_own_reset() -> None:
    """R9: t's cooldown ends at its weekly-opus reset, 30 s before now: clamped, not cooling."""
    narrow = connection_plan(_fleet(), parse_auto_id("auto/thrifty"), NOW, "flag", "t")
    assert narrow.clamps == (Clamp("t", instant(hours=3), instant(seconds=-30), False),)


def test_a_connection_whose_first_model_is_left_out_still_seats_the_second() -> None:
    """R13: opus is not a chat model; sonnet still takes its place in the pool."""
    narrow = connection_plan(_fleet(), parse_auto_id("auto/chat:thrifty"), NOW, "flag", "t")
    assert [(e.position, e.rung, e.model, e.allowed_connection_ids) for e in narrow.pool] == [
        (1, "subscription", "sonnet", ("t",))]
    assert [(x.model, x.reason) for x in narrow.excluded] == [("opus", "not-in-category")]


def test_the_narrowed_plan_counts_only_its_connection_in_rungs_and_summary() -> None:
    inputs = _fleet()
    narrow = connection_plan(inputs, parse_auto_id("auto/thrifty"), NOW, "flag", "m")
    assert [(r.rung, r.state, r.candidates, r.connections, r.note) for r in narrow.rungs] == [
        ("subscription", "empty", 0, 0, "no connection lands on this rung"),
        ("keyless", "empty", 0, 0, "no connection lands on this rung"),
        ("free", "empty", 0, 0, "no connection lands on this rung"),
        ("cheap", "serving", 1, 1, "1 of 1 connection usable"),
        ("premium", "serving", 1, 1, "1 of 1 connection usable"),
    ]
    assert narrow.summary == "auto/thrifty: 1 of 1 connections eligible"
    narrow = connection_plan(inputs, parse_auto_id("auto/subscription"), NOW, "flag", "n")
    assert narrow.summary == ("auto/subscription: 0 of 1 connections eligible, pool empty — "
                              "1 overage meters to paid")
    assert [(r.rung, r.state) for r in narrow.rungs][:2] == [
        ("subscription", "exhausted"), ("keyless", "not-in-id")]


# --- focus ---------------------------------------------------------------------------------


def test_focus_without_a_ledger_keeps_the_budgets_unenforced() -> None:
    inputs = _fleet(settings={"budgets": {"rung_budget_usd": {"premium": 10}}})
    narrowed = focus(inputs, "m", NOW)
    assert narrowed.spend is None
    assert [c.id for c in narrowed.connections] == ["m"]
    result = make_plan(narrowed, parse_auto_id("auto/thrifty"), NOW, "flag")
    assert result.budgets["premium"].state == "unenforced"


def test_focus_attributes_only_the_other_connections_unattributed_events() -> None:
    """R8: an event's own rung stands; another connection's event gets its rung now; the
    focused connection's own events are left for the narrowed plan to attribute."""
    inputs = _fleet(spend=[
        {"at": at(hours=-1), "cost_usd": 1.0, "connection": "m", "model": "gpt-mini",
         "rung": "premium"},
        {"at": at(hours=-2), "cost_usd": 2.0, "connection": "m", "model": "gpt-mini"},
        {"at": at(hours=-3), "cost_usd": 3.0, "connection": "t", "model": "opus"},
        {"at": at(hours=-4), "cost_usd": 4.0, "connection": "ghost", "model": "x"},
    ])
    narrowed = focus(inputs, "t", NOW)
    assert narrowed.spend is not None
    assert [(e.connection, e.rung) for e in narrowed.spend] == [
        ("m", "premium"), ("m", "cheap"), ("t", None), ("ghost", None)]
    narrowed = focus(inputs, "m", NOW)
    assert narrowed.spend is not None
    assert [(e.connection, e.rung) for e in narrowed.spend] == [
        ("m", "premium"), ("m", None), ("t", "subscription"), ("ghost", None)]


@pytest.mark.parametrize("auto_id", AUTO_IDS)
def test_a_narrowed_pool_entry_keeps_its_unverified_mark(auto_id: str) -> None:
    """R11/§4.2: n's reading is 10 minutes old (stale): admitted unverified where its rung
    reads the quota; the narrowed entry carries the same mark as the whole plan's."""
    inputs = fleet([conn("a", "claude", "oauth", models=["sonnet"]),
                    conn("n", "claude", "oauth", models=["sonnet"])],
                   [reading("a", window("5h", 50, at(hours=2))),
                    reading("n", at(minutes=-10), window("5h", 50, at(hours=2)))])
    parsed = parse_auto_id(auto_id)
    whole = make_plan(inputs, parsed, NOW, "flag")
    for cid in ("a", "n"):  # a fresh (verified), n stale
        narrow = connection_plan(inputs, parsed, NOW, "flag", cid)
        cut = [(e.position, e.rung, e.provider, e.model, (cid,),
                tuple(c for c in e.unverified_connection_ids if c == cid),
                tuple(m for m in e.unverified if m.connection_id == cid))
               for e in whole.pool if cid in e.allowed_connection_ids]
        assert [tuple(e)[:7] for e in narrow.pool] == cut
        assert bool(cut) == (cid == "a" or auto_id != "auto/subscription")  # R10 fails closed
        assert any(entry.unverified for entry in narrow.pool) == (
            cid == "n" and auto_id != "auto/subscription")


def test_a_connection_left_out_by_a_spent_budget_gets_the_whole_plans_remedy() -> None:
    """R8: $20 spent of a $10 premium budget closes the rung; m's exclusion and its fix
    are the whole plan's."""
    inputs = _fleet(settings={"budgets": {"rung_budget_usd": {"premium": 10}}},
                    spend=[{"at": at(hours=-1), "cost_usd": 20.0, "connection": "m",
                            "model": "gpt-new"}])
    parsed = parse_auto_id("auto/thrifty")
    whole = make_plan(inputs, parsed, NOW, "flag")
    narrow = connection_plan(inputs, parsed, NOW, "flag", "m")
    mine = tuple(x for x in whole.excluded if x.connection_id == "m")
    assert narrow.excluded == mine
    assert [x.reason for x in mine] == ["budget-spent"]
    assert mine[0].fix is not None
