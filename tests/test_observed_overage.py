"""R2a: a reading may carry the provider's own report of overage; what it may change."""

from __future__ import annotations

import json
from typing import Any

import pytest

from omniladder.rendering.json_view import plan_json
from tests.builders import at, conn, fleet, plan, reading, window

CURSOR = {"provider": "cursor", "auth_type": "oauth", "models": ["sonnet"]}  # unknown overage
CLAUDE = {"provider": "claude", "auth_type": "oauth"}   # catalog: subscription, hard-stop
DEVIN = {"provider": "devin-desktop", "auth_type": "oauth"}  # catalog: meters-to-paid
WIDE_UNKNOWN = {"provider": "acme", "auth_type": "oauth"}
UNCURATED = {"provider": "mystery", "auth_type": "cookie", "models": ["m1"]}

ACME = {"provider": "acme", "billing": "subscription", "overage": "unknown"}


def _fleet(kind: dict[str, Any], *readings: dict[str, Any], **fields: Any) -> Any:
    from tests.builders import BILLING, MODELS
    models = (*MODELS, {"provider": "acme", "model": "a1", "input_usd_per_mtok": 1.0,
                        "output_usd_per_mtok": 2.0})
    connection = conn("c", **{**kind, **fields})
    return fleet([connection], list(readings), billing=(*BILLING, ACME), models=models)


def _record(inputs: Any, auto_id: str = "auto/subscription") -> tuple[str, str, Any]:
    result = plan(inputs, auto_id)
    (facts,) = result.facts
    (record,) = result.connections
    assert record.overage == facts.billing.overage
    return record.overage, record.overage_source, result


def _served(result: Any) -> bool:
    return "c" in result.eligible_connection_ids


@pytest.mark.parametrize(
    ("kind", "readings", "fields", "overage", "source", "served"),
    [
        pytest.param(CURSOR, [], {}, "unknown", "catalog", False,
                     id="no-observation-keeps-the-catalog"),
        pytest.param(CURSOR, [reading("c", window("5h", 50, at(hours=2)),
                                      overage="hard-stop")], {},
                     "hard-stop", "observed", True,
                     id="fresh-hard-stop-widens-a-catalog-unknown"),
        pytest.param(WIDE_UNKNOWN, [reading("c", window("5h", 50, at(hours=2)),
                                            overage="hard-stop")], {"models": ["a1"]},
                     "hard-stop", "observed", True,
                     id="fresh-hard-stop-widens-a-provider-wide-unknown"),
        pytest.param(CURSOR, [reading("c", at(seconds=-180), window("5h", 50, at(hours=2)),
                                      overage="hard-stop")], {},
                     "hard-stop", "observed", True,
                     id="exactly-max-age-old-is-still-fresh"),
        pytest.param(CURSOR, [reading("c", at(seconds=-181), window("5h", 50, at(hours=2)),
                                      overage="hard-stop")], {},
                     "unknown", "catalog", False,
                     id="stale-hard-stop-widens-nothing"),
        pytest.param(DEVIN, [reading("c", window("5h", 50, at(hours=2)),
                                     overage="hard-stop")], {},
                     "meters-to-paid", "catalog", False,
                     id="hard-stop-never-widens-a-catalog-meters-to-paid"),
        pytest.param(CURSOR, [reading("c", window("5h", 50, at(hours=2)),
                                      overage="hard-stop")], {"overage": "unknown"},
                     "unknown", "override", False,
                     id="hard-stop-never-widens-the-connections-own-setting"),
        pytest.param(UNCURATED, [reading("c", window("5h", 50, at(hours=2)),
                                         overage="hard-stop")], {},
                     "unknown", "uncurated", False,
                     id="hard-stop-never-widens-an-uncurated-unknown"),
        pytest.param(CLAUDE, [reading("c", at(days=-20), window("5h", 50, at(hours=2)),
                                      overage="meters-to-paid"),
                              reading("c", window("5h", 50, at(hours=2)))], {},
                     "meters-to-paid", "observed", False,
                     id="meters-to-paid-narrows-whatever-its-age"),
        pytest.param(CLAUDE, [reading("c", window("5h", 50, at(hours=2)),
                                      overage="meters-to-paid")], {"overage": "unknown"},
                     "meters-to-paid", "observed", False,
                     id="meters-to-paid-narrows-past-an-override-too"),
        pytest.param(CLAUDE, [reading("c", at(minutes=-10), window("5h", 50, at(hours=2)),
                                      overage="meters-to-paid"),
                              reading("c", at(minutes=-1), window("5h", 50, at(hours=2)),
                                      overage="hard-stop")], {},
                     "hard-stop", "catalog", True,
                     id="the-latest-report-is-the-observation"),
        pytest.param(CURSOR, [reading("c", window("5h", 50, at(hours=2)),
                                      overage="hard-stop"),
                              reading("c", at(minutes=1), window("5h", 50, at(hours=2)),
                                      overage="meters-to-paid")], {},
                     "hard-stop", "observed", True,
                     id="a-report-after-now-does-not-exist-yet"),
    ],
)
def test_R2a_observed_overage(kind: dict[str, Any], readings: list[dict[str, Any]],
                              fields: dict[str, Any], overage: str, source: str,
                              served: bool) -> None:
    inputs = _fleet(kind, *readings, **fields)
    got_overage, got_source, result = _record(inputs)
    assert (got_overage, got_source) == (overage, source)
    assert _served(result) is served


def test_R2a_an_observation_names_itself_in_the_exclusion_detail() -> None:
    inputs = _fleet(CLAUDE, reading("c", at(minutes=-1), window("5h", 50, at(hours=2)),
                                    overage="meters-to-paid"))
    result = plan(inputs, "auto/subscription")
    (excluded,) = result.excluded
    assert excluded.reason == "overage-not-hard-stop"
    assert excluded.detail == ("overage meters-to-paid (reported at 11:59Z): past the plan it "
                               "bills")


def test_R2a_thrifty_keeps_an_observed_meters_to_paid_plan_on_its_rung() -> None:
    """Overage decides only auto/subscription (R10); thrifty still dispatches the plan first."""
    inputs = _fleet(CLAUDE, reading("c", window("5h", 50, at(hours=2)),
                                    overage="meters-to-paid"))
    result = plan(inputs, "auto/thrifty")
    assert [(e.rung, e.allowed_connection_ids) for e in result.pool] == [
        ("subscription", ("c",)), ("subscription", ("c",))]


def test_R2a_overage_source_is_in_the_json_document() -> None:
    inputs = _fleet(CURSOR, reading("c", window("5h", 50, at(hours=2)), overage="hard-stop"))
    document = json.loads(plan_json(plan(inputs, "auto/subscription")))
    (record,) = document["connections"]
    assert (record["overage"], record["overage_source"]) == ("hard-stop", "observed")
    assert record["billing_source"] == "catalog"


def test_R2a_why_shows_the_observation_used_and_the_one_refused() -> None:
    from omniladder.analyses.why import explain
    from omniladder.engine.autoid import parse_auto_id
    from omniladder.engine.plan import make_plan
    from omniladder.rendering.why_view import why_document
    from tests.builders import NOW

    used = _fleet(CURSOR, reading("c", window("5h", 50, at(hours=2)), overage="hard-stop"))
    trace = explain(used, [make_plan(used, parse_auto_id("auto/subscription"), NOW, "flag")],
                    "c")
    billing = why_document(trace)["billing"]
    assert billing["overage_source"] == "observed"
    assert billing["observation"]["applied"] is True
    assert "widens the catalog's unknown to hard-stop" in billing["observation"]["note"]

    stale = _fleet(CURSOR, reading("c", at(hours=-1), window("5h", 50, at(hours=2)),
                                   overage="hard-stop"))
    trace = explain(stale, [make_plan(stale, parse_auto_id("auto/subscription"), NOW,
                                      "flag")], "c")
    billing = why_document(trace)["billing"]
    assert billing["overage_source"] == "catalog"
    assert billing["observation"]["applied"] is False
    assert billing["observation"]["fresh"] is False
    assert "only a fresh report widens" in billing["observation"]["note"]


@pytest.mark.parametrize(
    ("kind", "fields", "report", "age_s", "overage", "source", "applied", "fresh", "note"),
    [
        pytest.param(DEVIN, {}, "meters-to-paid", 60, "meters-to-paid", "catalog", False, True,
                     "reported meters-to-paid at 11:59Z; agrees with the catalog overage",
                     id="agreeing-meters-to-paid-changes-nothing"),
        pytest.param(CLAUDE, {}, "hard-stop", 60, "hard-stop", "catalog", False, True,
                     "reported hard-stop at 11:59Z; agrees with the catalog overage",
                     id="agreeing-hard-stop-changes-nothing"),
        pytest.param(CLAUDE, {}, "hard-stop", 3600, "hard-stop", "catalog", False, False,
                     "reported hard-stop at 11:00Z; agrees with the catalog overage",
                     id="an-old-agreeing-report-is-recorded-as-not-fresh"),
        pytest.param(CLAUDE, {}, "meters-to-paid", 60, "meters-to-paid", "observed", True, True,
                     "reported meters-to-paid at 11:59Z: narrows hard-stop to meters-to-paid "
                     "(R2a)", id="narrowing-is-applied"),
        pytest.param(CURSOR, {}, "hard-stop", 60, "hard-stop", "observed", True, True,
                     "reported hard-stop at 11:59Z: widens the catalog's unknown to hard-stop "
                     "while fresh (R2a)", id="widening-is-applied"),
        pytest.param(CURSOR, {"overage": "unknown"}, "hard-stop", 60, "unknown", "override",
                     False, True, "reported hard-stop at 11:59Z; not used: the connection's "
                     "own overage setting is final", id="refused-past-an-override"),
        pytest.param(DEVIN, {}, "hard-stop", 60, "meters-to-paid", "catalog", False, True,
                     "reported hard-stop at 11:59Z; not used: it never widens a catalog "
                     "meters-to-paid", id="refused-past-a-catalog-meters-to-paid"),
        pytest.param(UNCURATED, {}, "hard-stop", 60, "unknown", "uncurated", False, True,
                     "reported hard-stop at 11:59Z; not used: only a catalog unknown may be "
                     "widened, this one is uncurated", id="refused-for-an-uncurated-provider"),
        pytest.param(CURSOR, {}, "hard-stop", 181, "unknown", "catalog", False, False,
                     "reported hard-stop at 11:56:59Z; not used: the reading is 181s old "
                     "(max 3m); only a fresh report widens", id="refused-when-stale"),
    ],
)
def test_R2a_the_observation_record(kind: dict[str, Any], fields: dict[str, Any], report: str,
                                    age_s: int, overage: str, source: str, applied: bool,
                                    fresh: bool, note: str) -> None:
    """What `why` shows of an observation: the report, its freshness, whether it was used
    and why, exactly."""
    inputs = _fleet(kind, reading("c", at(seconds=-age_s), window("5h", 50, at(hours=2)),
                                  overage=report), **fields)
    (facts,) = plan(inputs, "auto/subscription").facts
    billing = facts.billing
    assert (billing.overage, billing.overage_source) == (overage, source)
    observation = billing.observation
    assert observation is not None
    assert (observation.overage, observation.applied, observation.fresh) == (
        report, applied, fresh)
    assert observation.note == note


@pytest.mark.parametrize(("provider", "auth_type", "hint"), [
    ("claud", "oauth", "(did you mean provider 'claude'?)"),
    ("claude", "oauht", "(did you mean auth_type 'oauth'?)"),
    ("zzz-unrelated", "oauth", None),
])
def test_an_uncurated_connection_close_to_a_catalog_key_says_which(
        provider: str, auth_type: str, hint: str | None) -> None:
    inputs = _fleet({"provider": provider, "auth_type": auth_type, "models": ["m"]})
    (excluded,) = plan(inputs, "auto/subscription").excluded
    assert excluded.reason == "billing-uncurated"
    if hint is None:
        assert "did you mean" not in excluded.detail
    else:
        assert excluded.detail.endswith(hint)
