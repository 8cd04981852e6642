"""`omniladder check` as an operator reads a failure: the exact validation errors of a policy
file (file, line, field, message), and the exact actual/evidence lines of each check, judged
on small in-memory fleets (docs/ci.md#check)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from omniladder.analyses.check import (
    Expectation,
    check_connection_ids,
    describe_now,
    evaluate,
    judge,
    load_policy,
)
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.plan import make_plan
from omniladder.engine.records import REASON_CODES, Plan
from omniladder.errors import InputError
from omniladder.inputs.validation import validate
from tests.builders import NOW, at, conn, fleet, reading, window

HEAD = '[[expect]]\nname = "a"\nauto_id = "auto/thrifty"\n'


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Errors name the policy file as given, here relative to the working directory."""
    monkeypatch.chdir(tmp_path)


def _error(tmp_path: Path, text: str) -> str:
    path = Path("policy.toml")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_policy(path)
    return str(caught.value)


@pytest.mark.parametrize(("text", "message"), [
    pytest.param(HEAD + 'expect_reason = { k = "budget-gone" }\n',
                 "policy.toml:4: expect[0].expect_reason.k: unknown reason code 'budget-gone'; "
                 "did you mean 'budget-spent'?; reason codes: " + ", ".join(REASON_CODES),
                 id="bad-reason-code"),
    pytest.param(HEAD + "must_include = []\n",
                 "policy.toml:4: expect[0].must_include: must not be empty: an empty list "
                 "checks nothing", id="empty-list"),
    pytest.param("expect = []\n",
                 "policy.toml: expect: a policy needs at least one [[expect]] table",
                 id="no-expectation"),
    pytest.param(HEAD + 'allowed_rungs = ["free", "cheap"]\nforbidden_rungs = ["cheap", "free"]\n',
                 "policy.toml:1: expect[0]: rung 'cheap', 'free' is both allowed and forbidden",
                 id="two-rungs-both-allowed-and-forbidden"),
])
def test_a_bad_policy_is_one_exact_error(tmp_path: Path, text: str, message: str) -> None:
    assert _error(tmp_path, text) == message


@pytest.mark.parametrize(("body", "message"), [
    pytest.param('must_include = ["ghost"]\nmust_exclude = ["a"]\n',
                 "policy.toml:4: expect[0].must_include[0]: unknown connection id 'ghost': it is "
                 "not in connections.toml", id="must_include-beside-must_exclude"),
    pytest.param('must_include = ["a"]\nmust_exclude = ["zzzzz"]\n',
                 "policy.toml:5: expect[0].must_exclude[0]: unknown connection id 'zzzzz': it is "
                 "not in connections.toml", id="must_exclude-without-a-near-id"),
])
def test_an_unknown_connection_id_in_a_policy(tmp_path: Path, body: str, message: str) -> None:
    path = Path("policy.toml")
    path.write_text(HEAD + body, encoding="utf-8")
    loaded = load_policy(path)
    with pytest.raises(InputError) as caught:
        check_connection_ids(loaded, ["a", "b"], "connections.toml")
    assert str(caught.value) == message


# --- judging -------------------------------------------------------------------------------


def _expect(**keys: Any) -> Expectation:
    data: dict[str, Any] = {"name": "e", "auto_id": "auto/thrifty"}
    data.update({k: tuple(v) if isinstance(v, list) else v for k, v in keys.items()})
    return validate(Expectation, data, "policy")


def _check(plan: Plan, **keys: Any) -> tuple[bool, str, tuple[str, ...]]:
    (result,) = judge(_expect(**keys), plan)
    return result.passed, result.actual, result.evidence


def _empty_plan() -> Plan:
    inputs = fleet([conn("m", "openai", "apikey", models=["gpt-mini"])])
    return make_plan(inputs, parse_auto_id("auto/subscription"), NOW, "flag")


def _shared_plan() -> Plan:
    """Two metered connections sharing gpt-mini (cheap) and gpt-big (premium)."""
    inputs = fleet([conn("k1", "openai", "apikey", models=["gpt-mini", "gpt-big"]),
                    conn("k2", "openai", "apikey", models=["gpt-mini", "gpt-big"])])
    return make_plan(inputs, parse_auto_id("auto/thrifty"), NOW, "flag")


def test_an_empty_pool_is_said_as_such_in_the_actual_column() -> None:
    plan = _empty_plan()
    assert _check(plan, allowed_rungs=["cheap"]) == (True, "pool empty", ())
    assert _check(plan, forbidden_rungs=["cheap"]) == (True, "pool empty", ())
    assert _check(plan, forbid_billing=["metered"]) == (True, "pool billing: pool empty", ())


def test_rung_evidence_lists_every_connection_of_an_entry() -> None:
    plan = _shared_plan()
    assert _check(plan, allowed_rungs=["cheap"]) == (
        False, "cheap, premium", ("#2 premium openai/gpt-big [k1, k2] is on rung premium",))
    assert _check(plan, forbidden_rungs=["cheap"]) == (
        False, "cheap, premium",
        ("#1 cheap openai/gpt-mini [k1, k2] is on forbidden rung cheap",))
    assert _check(plan, forbid_billing=["metered", "unknown"]) == (
        False, "pool billing: metered",
        ("k1 bills as metered (catalog-provider-wide test-billing.toml) and is in the pool at "
         "#1 cheap openai/gpt-mini, #2 premium openai/gpt-big",
         "k2 bills as metered (catalog-provider-wide test-billing.toml) and is in the pool at "
         "#1 cheap openai/gpt-mini, #2 premium openai/gpt-big"))


def _two_model_plan() -> Plan:
    """c: sonnet's and opus's own windows both reset since the reading (two unverified
    seats, two different details); d: opus below the cutoff, sonnet usable; x: a
    meters-to-paid plan, which the thrifty tier still seats (R11)."""
    inputs = fleet(
        [conn("c", models=["sonnet", "opus"]), conn("d", models=["sonnet", "opus"]),
         conn("x", "devin-desktop", "oauth", models=["devin"])],
        [reading("c", at(minutes=-1), window("5h", 50, at(minutes=-0.5), models=["sonnet"]),
                 window("weekly-opus", 60, at(seconds=-10), models=["opus"])),
         reading("d", at(minutes=-1), window("5h", 50, at(hours=2)),
                 window("weekly-opus", 1, at(days=2), models=["opus"])),
         reading("x", at(minutes=-1), window("5h", 50, at(hours=2)))])
    return make_plan(inputs, parse_auto_id("auto/thrifty"), NOW, "flag")


def test_max_unverified_evidence_gives_each_unverified_seat_its_reason() -> None:
    assert _check(_two_model_plan(), max_unverified=0) == (
        False, "1 unverified",
        ("c is admitted unverified: quota-reset-since-reading: 5h window reset at 11:59:30Z, "
         "after the reading at 11:59Z; quota-reset-since-reading: weekly-opus window reset at "
         "11:59:50Z, after the reading at 11:59Z",))


def test_exclusion_evidence_names_the_model_of_a_per_model_exclusion() -> None:
    plan = _two_model_plan()
    assert _check(plan, expect_reason={"d": "inactive"}) == (
        False, "0 of 1 excluded as expected",
        ("d: expected inactive, excluded with quota-below-cutoff (opus): weekly-opus window at "
         "1% (cutoff 2%), resets 2026-12-01 12:00Z",))
    assert _check(plan, expect_reason={"x": "inactive"}) == (
        False, "0 of 1 excluded as expected",
        ("x: expected inactive, but it is not excluded (in the pool at #3 subscription "
         "devin-desktop/devin)",))


def test_several_exclusions_of_one_connection_are_joined() -> None:
    inputs = fleet([conn("d", models=["sonnet", "opus", "gpt-codex"])],
                   [reading("d", at(minutes=-1), window("5h", 1, at(hours=2), models=["sonnet"]),
                            window("weekly-opus", 1, at(days=2), models=["opus"]))])
    plan = make_plan(inputs, parse_auto_id("auto/chat:thrifty"), NOW, "flag")
    assert _check(plan, expect_reason={"d": "inactive"}) == (
        False, "0 of 1 excluded as expected",
        ("d: expected inactive, excluded with quota-below-cutoff (sonnet): 5h window at 1% "
         "(cutoff 2%), resets 14:00Z; not-in-category (opus): opus does not carry category "
         "'chat'; not-in-category (gpt-codex): gpt-codex does not carry category 'chat'",))


# --- evaluation ----------------------------------------------------------------------------


def test_evaluate_keeps_the_plans_warnings_times_each_expectation_and_says_its_now(
        tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(HEAD + "min_pool = 1\n\n" + HEAD.replace('"a"', '"b"')
                    + 'now = "2026-11-29T13:00:00Z"\nmin_pool = 1\n', encoding="utf-8")
    inputs = fleet([conn("m", "openai", "apikey", models=["gpt-new"])])
    result = evaluate(load_policy(path), inputs, NOW, "snapshot")
    assert result.warnings == (
        "model 'gpt-new' of provider 'openai' is not in the model catalog; its metered "
        "connections are treated as premium",)
    assert [describe_now(r) for r in result.expectations] == [
        "2026-11-29T12:00:00Z (snapshot)", "2026-11-29T13:00:00Z (policy)"]
    assert result.expectations[1].now == datetime(2026, 11, 29, 13, tzinfo=UTC)
    for expectation in result.expectations:
        assert 0 < expectation.seconds < 60
