"""Policy expectations: every check kind passing and failing on the example plans, and the
policy validation that turns typos and bad ids into errors instead of silent passes."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from omniladder.analyses.check import (
    CHECK_KEYS,
    FORECAST_KEYS,
    FORECAST_STEP,
    TRAFFIC_KEYS,
    WHATIF_KEYS,
    Expectation,
    check_connection_ids,
    judge,
    load_policy,
    span,
)
from omniladder.analyses.forecast.walk import Forecast, forecast
from omniladder.engine.autoid import parse_auto_id, parse_instant
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.engine.records import Plan
from omniladder.errors import InputError
from omniladder.inputs.input_set import load_inputs
from omniladder.inputs.validation import validate
from tests.conftest import EXAMPLES, ROOT

SNAPSHOT = "2026-11-29T12:00:00Z"


@cache
def _inputs() -> LoadedInputs:
    return load_inputs(EXAMPLES / "omniladder.toml")


@cache
def example_plan(auto_id: str, now: str = SNAPSHOT) -> Plan:
    return make_plan(_inputs(), parse_auto_id(auto_id), parse_instant(now), "flag")


def expectation(**keys: Any) -> Expectation:
    data: dict[str, Any] = {"name": "e", "auto_id": "auto/thrifty"}
    data.update({k: tuple(v) if isinstance(v, list) else v for k, v in keys.items()})
    return validate(Expectation, data, "policy")


# Each row: an auto id, one check, whether it passes on the example fleet, and a phrase the
# evidence must carry when it fails. The examples' thrifty pool has 12 entries: 5 on
# subscription (3 unverified), 2 keyless, 1 free, 2 cheap, 2 premium.
CASES: list[tuple[str, str, str, Any, bool, str]] = [
    ("min_pool-pass", "auto/thrifty", "min_pool", 12, True, ""),
    ("min_pool-fail", "auto/thrifty", "min_pool", 13, False,
     "the pool has 12 pool entries: auto/thrifty: 10 of 15"),
    ("min_pool-fail-empty-R10", "auto/multimodal:subscription", "min_pool", 1, False,
     "pool empty"),
    ("max_pool-pass", "auto/thrifty", "max_pool", 12, True, ""),
    ("max_pool-fail", "auto/thrifty", "max_pool", 11, False,
     "#12 premium openai/gpt-5.1 [openai-key]"),
    ("head_rung-pass-R11", "auto/thrifty", "head_rung", "subscription", True, ""),
    ("head_rung-fail-R11", "auto/thrifty", "head_rung", "keyless", False,
     "position 1 is #1 subscription claude/claude-sonnet-4-5 [claude-max-work, "
     "claude-max-extra]"),
    ("head_rung-fail-empty-R10", "auto/multimodal:subscription", "head_rung", "subscription",
     False, "the pool has 0 pool entries"),
    ("allowed_rungs-pass-R10", "auto/subscription", "allowed_rungs", ["subscription"], True,
     ""),
    ("allowed_rungs-fail-R11", "auto/thrifty", "allowed_rungs",
     ["subscription", "keyless", "free"], False,
     "#9 cheap openai/gpt-5-mini [openai-key] is on rung cheap"),
    ("forbidden_rungs-pass-R10", "auto/subscription", "forbidden_rungs", ["cheap", "premium"],
     True, ""),
    ("forbidden_rungs-fail-R11", "auto/thrifty", "forbidden_rungs", ["premium"], False,
     "#11 premium claude/claude-sonnet-4-5 [claude-api] is on forbidden rung premium"),
    ("must_include-pass", "auto/thrifty", "must_include", ["claude-max-work", "ollama-local"],
     True, ""),
    ("must_include-fail-R7", "auto/subscription", "must_include", ["claude-pro-personal"],
     False, "claude-pro-personal is not in the pool: quota-below-reentry: 5h window at 1.5%"),
    ("must_exclude-pass-R10", "auto/subscription", "must_exclude", ["claude-api"], True, ""),
    ("must_exclude-fail-R11", "auto/thrifty", "must_exclude", ["openai-key"], False,
     "openai-key is in the pool at #9 cheap openai/gpt-5-mini, #12 premium openai/gpt-5.1"),
    ("forbid_billing-pass-R10", "auto/subscription", "forbid_billing",
     ["metered", "unknown", "keyless"], True, ""),
    ("forbid_billing-fail-R1.4", "auto/thrifty", "forbid_billing", ["unknown"], False,
     "claude-api bills as unknown (uncurated) and is in the pool at #11 premium"),
    ("forbid_billing-fail-keyless-R1.1", "auto/thrifty", "forbid_billing", ["keyless"], False,
     "ollama-local bills as keyless (keyless)"),
    ("max_unverified-pass-R10", "auto/subscription", "max_unverified", 0, True, ""),
    ("max_unverified-fail-R11", "auto/thrifty", "max_unverified", 2, False,
     "copilot-seat is admitted unverified: quota-unknown"),
    ("expect_reason-pass-R10", "auto/subscription", "expect_reason",
     {"claude-api": "billing-uncurated", "antigravity-main": "quota-stale"}, True, ""),
    ("expect_reason-pass-one-model-R6", "auto/thrifty", "expect_reason",
     {"claude-max-work": "quota-below-cutoff"}, True, ""),
    ("expect_reason-fail-other-reason-R10", "auto/subscription", "expect_reason",
     {"openai-key": "budget-spent"}, False,
     "openai-key: expected budget-spent, excluded with billing-not-subscription"),
    ("expect_reason-fail-in-pool-R8", "auto/thrifty", "expect_reason",
     {"openai-key": "budget-spent"}, False,
     "expected budget-spent, but it is not excluded (in the pool at #9 cheap"),
    ("audit-pass-R10", "auto/subscription", "audit",
     "tests/fixtures/sources/omniroute-candidates/example-fleet-clean.json", True, ""),
    ("audit-fail-R10", "auto/subscription", "audit", "examples/omniroute-candidates.json",
     False, "would-bill claude-max-extra claude/claude-sonnet-4-5: overage-not-hard-stop"),
]


# The forecast checks look ahead on the day example from 13:00 (docs/forecast.md): its
# auto/thrifty steps up to cheap at 14:01:15 (61m15s on, the instant the Max plan's 5h
# window reaches the cutoff) and is back at the 17:00 reset, 2h58m45s on a paid rung over the
# 24-hour horizon; auto/subscription never pays. The gates judge the band's p10 by default
# (the high burn): never later than the p50, never fewer paid hours.
CASES += [
    ("no_paid_within-pass", "auto/thrifty", "no_paid_within", "10m", True, ""),
    ("no_paid_within-fail-by-the-p50", "auto/thrifty", "no_paid_within", "1h1m15s", False,
     "14:01:15Z subscription -> cheap: claude-max-work 5h window at 1.98958%; pay from "
     "14:01:15Z until 17:00Z, or wait 2h58m"),
    ("no_paid_within-pass-never-pays", "auto/subscription", "no_paid_within", "24h", True, ""),
    ("max_paid_hours-pass", "auto/thrifty", "max_paid_hours", 8, True, ""),
    ("max_paid_hours-fail", "auto/thrifty", "max_paid_hours", 2, False,
     "at p10 of the band; at p50 2.98h (cheap 2.98h)"),
]
DAY_NOW = "2026-11-29T13:00:00Z"

# The traffic check reads examples/traffic.jsonl (docs/traffic.md): $3.00 of early-paid leak
# under auto/thrifty, $0.075 off-plan-billed under auto/subscription.
CASES += [
    ("max_leak_usd-pass", "auto/thrifty", "max_leak_usd", 3.01, True, ""),
    ("max_leak_usd-fail", "auto/thrifty", "max_leak_usd", 2.99, False,
     "2026-11-29T11:12:14Z openai-key gpt-5.1 early-paid $1.93"),
]


# The what-if checks judge hand-built answers (tests/test_whatif_views.py): under
# auto/thrifty the as-is replay paid $41.24 against a bound of $12.50 ($28.7371 of regret) and
# the second seat saves $163.48 a month against its $200 price; under auto/subscription the
# same seat is priced at $150.
CASES += [
    ("max_regret_usd-pass", "auto/thrifty", "max_regret_usd", 28.7371, True, ""),
    ("max_regret_usd-fail", "auto/thrifty", "max_regret_usd", 28.73, False,
     "expiring-first (--order expiring-first) would have paid $30.05, regret $17.55"),
    ("added_seat_pays-pass", "auto/subscription", "added_seat_pays", True, True, ""),
    ("added_seat_pays-fail", "auto/thrifty", "added_seat_pays", True, False,
     "second seat: claude-max-2 (like claude-max-work) saves $163.48 a month, less than its "
     "price $200.00"),
]


def _whatif(key: str, auto_id: str) -> Any:
    if key not in WHATIF_KEYS:
        return None
    from tests.test_whatif_views import priced_seat_report

    return priced_seat_report(200.0 if auto_id == "auto/thrifty" else 150.0)


@cache
def day_forecast(auto_id: str, horizon: str = "24h") -> Forecast:
    from omniladder.analyses.forecast.pace import catalog_lengths
    from omniladder.inputs.scopes import load_window_scopes

    return forecast(load_inputs(EXAMPLES / "day" / "omniladder.toml"), parse_auto_id(auto_id),
                    parse_instant(DAY_NOW), span(horizon), FORECAST_STEP,
                    lengths=catalog_lengths(load_window_scopes(())))


def _forecast(key: str, auto_id: str) -> Forecast | None:
    return day_forecast(auto_id) if key in FORECAST_KEYS else None


def _traffic(key: str, auto_id: str, value: Any) -> Any:
    if key not in TRAFFIC_KEYS:
        return None
    from omniladder.analyses.traffic import audit_traffic
    from omniladder.inputs.ledger.read import Ledger

    return audit_traffic(_inputs(), parse_auto_id(auto_id),
                         Ledger(EXAMPLES / "traffic.jsonl"), max_leak_usd=value)


def _audit_document(key: str, value: Any) -> Any:
    """The candidate list an ``audit`` check names, read as ``check`` reads it."""
    if key != "audit":
        return None
    from omniladder.analyses.audit import parse_candidates

    return parse_candidates((ROOT / value).read_bytes(), value)


@pytest.mark.parametrize(("auto_id", "key", "value", "passes", "evidence"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_each_check_kind(auto_id: str, key: str, value: Any, passes: bool,
                         evidence: str) -> None:
    scenario = {"scenario": "second-seat.toml"} if key == "added_seat_pays" else {}
    (result,) = judge(expectation(auto_id=auto_id, **{key: value}, **scenario),
                      example_plan(auto_id), _audit_document(key, value),
                      _forecast(key, auto_id), _traffic(key, auto_id, value),
                      _whatif(key, auto_id))
    assert result.check == key
    assert result.passed is passes, result
    if passes:
        assert result.evidence == ()
    else:
        joined = "\n".join(result.evidence)
        assert evidence in joined, joined


def test_cases_cover_every_check_kind_both_ways() -> None:
    seen = {(case[2], case[4]) for case in CASES}
    assert seen == {(key, outcome) for key in CHECK_KEYS for outcome in (True, False)}


def test_checks_are_judged_in_the_documented_order() -> None:
    exp = expectation(expect_reason={"groq-key": "terminal-status"}, max_pool=20, min_pool=1)
    results = judge(exp, example_plan("auto/thrifty"))
    assert [r.check for r in results] == ["min_pool", "max_pool", "expect_reason"]


def test_a_later_instant_changes_the_verdict_R9() -> None:
    """codex-plus is cooling down at the snapshot; its cooldown is clamped to 12:30Z."""
    exp = expectation(must_include=["codex-plus"])
    (at_snapshot,) = judge(exp, example_plan("auto/thrifty"))
    (after_reset,) = judge(exp, example_plan("auto/thrifty", "2026-11-29T12:31:00Z"))
    assert not at_snapshot.passed
    assert "cooldown" in at_snapshot.evidence[0]
    assert after_reset.passed


# --- validation ----------------------------------------------------------------------------


def _policy_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_policy(path)
    return str(caught.value)


HEAD = '[[expect]]\nname = "a"\nauto_id = "auto/thrifty"\n'

INVALID: list[tuple[str, str, str]] = [
    ("unknown-key", HEAD + "min_pol = 3\n", "expect[0].min_pol: unknown key 'min_pol'"),
    ("unknown-top-level-key", 'settings = "x"\n' + HEAD + "min_pool = 1\n",
     "unknown key 'settings'"),
    ("bad-reason-code", HEAD + 'expect_reason = { openai-key = "budget-gone" }\n',
     "expect[0].expect_reason.openai-key: unknown reason code 'budget-gone'"),
    ("bad-rung", HEAD + 'head_rung = "gold"\n', "expect[0].head_rung: must be one of"),
    ("bad-rung-in-list", HEAD + 'allowed_rungs = ["subscription", "paid"]\n',
     "expect[0].allowed_rungs[1]: must be one of"),
    ("bad-billing-class", HEAD + 'forbid_billing = ["free"]\n',
     "expect[0].forbid_billing[0]: must be one of 'subscription', 'metered', 'unknown' or "
     "'keyless', got 'free'"),
    ("bad-auto-id-R13", '[[expect]]\nname = "a"\nauto_id = "auto/coding"\nmin_pool = 1\n',
     "expect[0].auto_id: invalid auto id 'auto/coding'"),
    ("bad-now-R14", HEAD + 'now = "2026-11-29T12:00:00"\nmin_pool = 1\n',
     "expect[0].now: timestamp has no offset"),
    ("checks-nothing", HEAD, "expectation 'a' checks nothing"),
    ("negative-count", HEAD + "max_unverified = -1\n", "expect[0].max_unverified"),
    ("boolean-count", HEAD + "min_pool = true\n", "expect[0].min_pool: must be a valid integer"),
    ("min-above-max", HEAD + "min_pool = 3\nmax_pool = 2\n",
     "min_pool (3) is above max_pool (2)"),
    ("allowed-and-forbidden", HEAD + 'allowed_rungs = ["free"]\nforbidden_rungs = ["free"]\n',
     "rung 'free' is both allowed and forbidden"),
    ("head-forbidden", HEAD + 'head_rung = "free"\nforbidden_rungs = ["free"]\n',
     "head_rung 'free' is a forbidden rung"),
    ("head-not-allowed", HEAD + 'head_rung = "free"\nallowed_rungs = ["cheap"]\n',
     "head_rung 'free' is not an allowed rung"),
    ("include-and-exclude", HEAD + 'must_include = ["x"]\nmust_exclude = ["x"]\n',
     "connection 'x' is in both must_include and must_exclude"),
    ("empty-list", HEAD + "must_include = []\n", "must not be empty"),
    ("empty-table", HEAD + "expect_reason = {}\n", "must not be empty"),
    ("no-expectations", 'config = "omniladder.toml"\n', "expect: required field is missing"),
    ("empty-expectations", "expect = []\n", "at least one [[expect]] table"),
    ("duplicate-names", HEAD + "min_pool = 1\n" + HEAD + "min_pool = 2\n",
     "duplicate expectation name 'a' (expect[0] and expect[1])"),
    ("negative-regret", HEAD + "max_regret_usd = -1\n", "expect[0].max_regret_usd"),
    ("seat-pays-false", HEAD + 'added_seat_pays = false\nscenario = "s.toml"\n',
     "expect[0].added_seat_pays: false checks nothing; give true or drop the key"),
    ("seat-pays-no-scenario", HEAD + "added_seat_pays = true\n",
     "added_seat_pays judges the seats a scenario file adds: give scenario"),
    ("scenario-alone", HEAD + 'max_regret_usd = 5\nscenario = "s.toml"\n',
     "scenario is read only by added_seat_pays"),
    ("traffic-alone", HEAD + 'min_pool = 1\ntraffic = "t.jsonl"\n',
     "traffic is read only by max_leak_usd, max_regret_usd and added_seat_pays"),
]


@pytest.mark.parametrize(("text", "message"), [case[1:] for case in INVALID],
                         ids=[case[0] for case in INVALID])
def test_invalid_policies_are_errors(tmp_path: Path, text: str, message: str) -> None:
    error = _policy_error(tmp_path, text)
    assert message in error, error
    assert error.startswith("policy.toml") or "policy.toml" in error


def test_an_error_names_the_toml_line(tmp_path: Path) -> None:
    error = _policy_error(tmp_path, HEAD + "min_pool = 1\n\n" + HEAD.replace('"a"', '"b"')
                          + 'head_rung = "gold"\n')
    assert ":9: expect[1].head_rung" in error, error


def test_unknown_connection_ids_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(HEAD + 'must_include = ["claude-max-work"]\n\n' + HEAD.replace('"a"', '"b"')
                    + 'expect_reason = { claude-maxwork = "inactive" }\n', encoding="utf-8")
    loaded = load_policy(path)
    known = [c.id for c in _inputs().connections]
    with pytest.raises(InputError) as caught:
        check_connection_ids(loaded, known, "examples/connections.toml")
    assert str(caught.value).endswith(
        "expect[1].expect_reason.claude-maxwork: unknown connection id 'claude-maxwork': it is "
        "not in examples/connections.toml; did you mean 'claude-max-work'?")
    assert "policy.toml:9: " in str(caught.value)


def test_the_policy_names_its_settings_relative_to_itself(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "policy.json"
    path.parent.mkdir()
    path.write_text('{"config": "../omniladder.toml", "expect": [{"name": "a", '
                    '"auto_id": "auto/thrifty", "min_pool": 1}]}', encoding="utf-8")
    loaded = load_policy(path)
    assert loaded.settings_path == path.parent / "../omniladder.toml"
    assert loaded.policy.config == "../omniladder.toml"
    assert [(e.name, e.auto_id, e.min_pool) for e in loaded.policy.expect] == [
        ("a", "auto/thrifty", 1)]
    path.write_text('{"expect": [{"name": "a", "auto_id": "auto/thrifty", "min_pool": 1}]}',
                    encoding="utf-8")
    assert load_policy(path).settings_path is None


def test_an_expectation_instant_is_kept_with_its_offset() -> None:
    exp = expectation(now="2026-11-29T14:00:00+02:00", min_pool=1)
    assert exp.now == datetime.fromisoformat("2026-11-29T12:00:00+00:00")


# --- the forecast checks (issue: forecast, item 5) ------------------------------------------


def test_max_paid_hours_passes_at_exactly_the_paid_hours() -> None:
    """The bound is inclusive: 2h58m45s on cheap passes ``max_paid_hours = 2h58m45s`` in
    hours, and fails a minute less."""
    exp = expectation(max_paid_hours=2 + 58.75 / 60, percentile="p50")
    (result,) = judge(exp, example_plan("auto/thrifty"), None, day_forecast("auto/thrifty"))
    assert result.passed, result
    exp = expectation(max_paid_hours=2 + 57.75 / 60, percentile="p50")
    (result,) = judge(exp, example_plan("auto/thrifty"), None, day_forecast("auto/thrifty"))
    assert not result.passed


def test_the_horizon_bounds_what_max_paid_hours_counts() -> None:
    """Over 2 hours from 13:00 the paid head starts at 14:01:15: 58m45s paid."""
    exp = expectation(max_paid_hours=1, horizon="2h", percentile="p50")
    ahead = day_forecast("auto/thrifty", "2h")
    (result,) = judge(exp, example_plan("auto/thrifty"), None, ahead)
    assert result.passed, result
    assert result.actual == "0.98h paid at p50"


@pytest.mark.parametrize(("keys", "message"), [
    ({"horizon": "6h", "min_pool": 1}, "horizon is read only by no_paid_within and "
     "max_paid_hours"),
    ({"no_paid_within": "25h"}, "no_paid_within (25h) looks past the horizon (24h)"),
    ({"no_paid_within": "4 hours"}, "not a duration: '4 hours'"),
    ({"max_paid_hours": 1, "horizon": "0h"}, "not a duration: '0h'"),
    ({"max_paid_hours": -1}, "greater than or equal to 0"),
    ({"max_paid_hours": 1, "horizon": "soon"}, "not a duration: 'soon'"),
])
def test_bad_forecast_keys_are_input_errors(keys: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        expectation(**keys)
    assert message in caught.value.message, caught.value.message


def test_check_fails_with_the_forecasts_evidence_in_json_and_junit(tmp_path: Path) -> None:
    """Exit 1; the JSON and the JUnit report carry the escalation that pays and its wait."""
    import json

    from typer.testing import CliRunner

    from omniladder.cli import app

    policy = tmp_path / "policy.toml"
    policy.write_text(f'config = "{EXAMPLES / "day" / "omniladder.toml"}"\n'
                      '[[expect]]\nname = "no paid soon"\nauto_id = "auto/thrifty"\n'
                      f'now = {DAY_NOW}\nno_paid_within = "4h"\nmax_paid_hours = 2\n')
    junit = tmp_path / "junit.xml"
    result = CliRunner().invoke(app, ["check", str(policy), "--json", "--junit", str(junit)])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    (item,) = document["expectations"]
    checks = {check["check"]: check for check in item["checks"]}
    assert set(checks) == {"no_paid_within", "max_paid_hours"}
    wait = "pay from 14:01:15Z until 17:00Z, or wait 2h58m"
    assert any(wait in line for line in checks["no_paid_within"]["evidence"])
    assert checks["max_paid_hours"]["actual"].endswith("h paid at p10")
    assert wait in junit.read_text()


@pytest.mark.parametrize("keys", ['now = "9999-12-31T23:00:00Z"\nno_paid_within = "2h"\n',
                                  'now = "9999-12-30T00:00:00Z"\nmax_paid_hours = 1\n'
                                  'horizon = "3d"\n'])
def test_a_forecast_horizon_past_the_calendar_names_the_horizon(tmp_path: Path,
                                                                keys: str) -> None:
    """A forecast check whose horizon steps past year 9999 is exit 2 naming the
    expectation's horizon, as ``forecast --horizon`` is (docs/forecast.md), never an
    OverflowError out of the stepping."""
    from omniladder.analyses.check import evaluate

    path = tmp_path / "policy.toml"
    path.write_text(HEAD + keys, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        evaluate(load_policy(path), _inputs(), parse_instant(SNAPSHOT), "flag")
    assert "expect[0].horizon: the forecast horizon " in str(caught.value)
    assert "runs past the end of the calendar (year 9999)" in str(caught.value)
