"""`--format openmetrics` and `--metrics-out` on `plan` and `forecast` (docs/metrics.md).

Every text is parsed with both parsers a scrape meets: ``prometheus_client.openmetrics``
(strict OpenMetrics) and ``prometheus_client.parser`` (the Prometheus text format the
node_exporter textfile collector reads), and its series are checked against the Plan or the
Forecast they were written from.
"""

from __future__ import annotations

import math
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as prometheus_families
from typer.testing import CliRunner

from omniladder.analyses.forecast.walk import Forecast, forecast
from omniladder.cli import app
from omniladder.commands.common import InputOptions
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.engine.quota import in_force, resolved
from omniladder.engine.readings import held_to
from omniladder.engine.records import Plan
from omniladder.models import RUNGS, Reading
from omniladder.rendering.openmetrics import (
    DEPRECATED_FAMILIES,
    FORECAST_FAMILIES,
    PLAN_FAMILIES,
    escape_label,
    forecast_metrics,
    number,
    plan_metrics,
    plan_samples,
)
from tests.builders import NOW, at, fleet, plan
from tests.conftest import EXAMPLES
from tests.depth import deep
from tests.errors import one_error
from tests.strategies import input_sets as plan_fleets
from tests.test_autoid import VALID
from tests.test_simulate_stepping import FLEETS as FORECAST_FLEETS
from tests.test_simulate_stepping import T0

runner = CliRunner()
CONFIG = str(EXAMPLES / "omniladder.toml")
DAY = str(EXAMPLES / "day" / "omniladder.toml")
DAY_NOW = "2026-11-29T13:00:00Z"

Series = dict[tuple[str, frozenset[tuple[str, str]]], float]


# --- reading the text back ---------------------------------------------------------------------


def series_of(families: list[object]) -> tuple[Series, list[tuple[str, str, str]]]:
    """(name, labels) → value, and each family's (name, type, help) in order."""
    found: Series = {}
    heads = []
    for family in families:
        heads.append((family.name, family.type, family.documentation))  # type: ignore[attr-defined]
        for sample in family.samples:  # type: ignore[attr-defined]
            key = (sample.name, frozenset(sample.labels.items()))
            assert key not in found, f"duplicate series {key}"
            assert sample.timestamp is None, "the textfile collector refuses timestamps"
            found[key] = sample.value
    return found, heads


def parse_both(text: str) -> Series:
    """The series of ``text``, which both parsers must read alike."""
    assert text.endswith("\n# EOF\n")
    # the OpenMetrics parser is not annotated
    strict, strict_heads = series_of(list(openmetrics_families(text)))  # type: ignore[no-untyped-call]
    plain, plain_heads = series_of(list(prometheus_families(text)))
    assert strict_heads == plain_heads
    assert all(kind == "gauge" for _, kind, _ in strict_heads)
    assert strict.keys() == plain.keys()
    for key, value in strict.items():
        other = plain[key]
        assert value == other or (math.isnan(value) and math.isnan(other)), key
    return strict


def value(found: Series, name: str, **labels: str) -> float:
    return found[(name, frozenset(labels.items()))]


def named(found: Series, name: str) -> dict[frozenset[tuple[str, str]], float]:
    return {labels: v for (family, labels), v in found.items() if family == name}


def joined(models: tuple[str, ...] | None) -> str:
    """The ``models`` label as docs/metrics.md spells it: comma-separated, a comma or a
    backslash inside a model name escaped with a backslash; empty for every model."""
    if models is None:
        return ""
    return ",".join(re.sub(r"([\\,])", r"\\\1", model) for model in models)


def split_models(label: str) -> tuple[str, ...] | None:
    """A ``models`` label read back into the models it names."""
    if label == "":
        return None
    found, current, escaped = [], "", False
    for char in label:
        if escaped:
            current, escaped = current + char, False
        elif char == "\\":
            escaped = True
        elif char == ",":
            found.append(current)
            current = ""
        else:
            current += char
    assert not escaped, label
    return (*found, current)


def same(left: float, right: float) -> bool:
    return left == right or (math.isnan(left) and math.isnan(right))


def stamp(instant: datetime | None) -> float:
    return math.nan if instant is None else instant.timestamp()


# --- checks against the objects -------------------------------------------------------------


def latest_reading(inputs: LoadedInputs, result: Plan, cid: str) -> Reading | None:
    """The reading R6 judges at the plan's now, at the connection's own thresholds (R16)."""
    connection = next(f.connection for f in result.facts if f.connection.id == cid)
    ladder = held_to(inputs.settings.ladder, connection.reserve_percent)
    readings = in_force(inputs.readings.get(cid, ()), result.now, ladder.exit_cutoff_percent)
    return readings[-1] if readings else None


def check_plan_series(inputs: LoadedInputs, result: Plan, found: Series) -> None:
    """What an operator reads off the file, against the Plan it was written from."""
    auto_id = result.auto_id.text
    assert value(found, "omniladder_plan_timestamp_seconds", auto_id=auto_id) == (
        result.now.timestamp())
    # pool entries per rung: all five rungs, each the plan's count
    entries = named(found, "omniladder_pool_entries")
    assert entries == {frozenset({("auto_id", auto_id), ("rung", rung)}):
                       sum(1 for e in result.pool if e.rung == rung) for rung in RUNGS}
    # the head rung: exactly one 1 iff the pool is non-empty, and it is the first entry's
    heads = named(found, "omniladder_head_rung")
    assert len(heads) == len(RUNGS)
    ones = [dict(labels)["rung"] for labels, v in heads.items() if v == 1]
    assert all(v in (0, 1) for v in heads.values())
    assert ones == ([result.pool[0].rung] if result.pool else [])
    assert value(found, "omniladder_pool_connections", auto_id=auto_id) == len(
        result.eligible_connection_ids)
    # a reading age per connection; windows from its latest reading in force
    ages = named(found, "omniladder_reading_age_seconds")
    assert len(ages) == len(result.facts)
    remaining = named(found, "omniladder_quota_window_remaining_percent")
    resets = named(found, "omniladder_quota_window_reset_timestamp_seconds")
    assert remaining.keys() == resets.keys()
    expected_windows = 0
    for facts in result.facts:
        cid = facts.connection.id
        age = value(found, "omniladder_reading_age_seconds", auto_id=auto_id, connection=cid)
        latest = latest_reading(inputs, result, cid)
        if latest is None:
            assert math.isnan(age), cid
            continue
        assert age == (result.now - latest.checked_at).total_seconds()
        keys = {(w.name, w.models) for w in latest.all_windows()}
        expected_windows += len(keys)
        for name, models in keys:
            labels = {"auto_id": auto_id, "connection": cid, "window": name,
                      "models": joined(models)}
            shown = [w for w in latest.all_windows() if (w.name, w.models) == (name, models)]
            low = min(shown, key=lambda w: w.figure)
            assert value(found, "omniladder_quota_window_remaining_percent", **labels) == (
                low.figure)
            assert same(value(found, "omniladder_quota_window_reset_timestamp_seconds",
                              **labels), stamp(low.reset_at))
    assert len(remaining) == expected_windows
    # the age is that of the reading the plan's own verdicts judged
    for decision in result.decisions:
        verdict = resolved(decision.quota)
        if verdict is not None and verdict.reading is not None:
            assert value(found, "omniladder_reading_age_seconds", auto_id=auto_id,
                         connection=decision.connection_id) == (
                result.now - verdict.reading.checked_at).total_seconds()
    assert {name for name, _ in found} <= {f.name for f in PLAN_FAMILIES}


def check_forecast_series(result: Forecast, found: Series) -> None:
    auto_id = result.auto_id.text
    assert value(found, "omniladder_forecast_timestamp_seconds", auto_id=auto_id) == (
        result.now.timestamp())
    assert value(found, "omniladder_forecast_horizon_end_timestamp_seconds",
                 auto_id=auto_id) == result.end.timestamp()
    assert same(value(found, "omniladder_forecast_first_paid_timestamp_seconds",
                      auto_id=auto_id), stamp(result.first_paid_at))
    assert same(value(found, "omniladder_forecast_pool_empty_timestamp_seconds",
                      auto_id=auto_id), stamp(result.pool_empty_at))
    assert value(found, "omniladder_forecast_escalations", auto_id=auto_id) == len(
        result.escalations)
    hours = named(found, "omniladder_forecast_head_hours")
    assert hours == {frozenset({("auto_id", auto_id), ("rung", rung)}):
                     round(result.hours_by_head.get(rung, 0.0), 4) for rung in RUNGS}
    empty = value(found, "omniladder_forecast_empty_pool_hours", auto_id=auto_id)
    assert empty == round(result.hours_by_head.get("empty", 0.0), 4)
    horizon = (result.end - result.now).total_seconds() / 3600
    assert sum(hours.values()) + empty == pytest.approx(horizon, abs=1e-3)
    head_seconds = named(found, "omniladder_forecast_head_seconds")
    assert head_seconds.keys() == hours.keys()
    for rung_labels, spent in head_seconds.items():
        assert spent == pytest.approx(hours[rung_labels] * 3600, abs=0.5)
    empty_seconds = value(found, "omniladder_forecast_empty_pool_seconds", auto_id=auto_id)
    assert empty_seconds == pytest.approx(empty * 3600, abs=0.5)
    assert sum(head_seconds.values()) + empty_seconds == pytest.approx(horizon * 3600, abs=1)
    cutoffs = named(found, "omniladder_forecast_window_cutoff_timestamp_seconds")
    paces = {(p.connection_id, p.window, p.models): p
             for o in result.outlooks for p in o.paces}
    assert len(cutoffs) == len(paces)
    for (cid, window, models), pace in paces.items():
        labels = {"auto_id": auto_id, "connection": cid, "window": window,
                  "models": joined(models)}
        if sum(1 for o in result.outlooks for p in o.paces
               if (p.connection_id, p.window, p.models) == (cid, window, models)) == 1:
            assert same(value(found, "omniladder_forecast_window_cutoff_timestamp_seconds",
                              **labels), stamp(pace.cutoff_at))
            burn = pace.burn_percent_per_hour
            assert same(value(found, "omniladder_forecast_window_burn_percent_per_hour",
                              **labels), math.nan if burn is None else round(burn, 3))
    assert {name for name, _ in found} <= {f.name for f in FORECAST_FAMILIES}


# --- the families, in full ------------------------------------------------------------------


def test_the_plan_families_are_pinned_in_full() -> None:
    """A dashboard or an alert names these: dropping or renaming one fails here."""
    window = ("auto_id", "connection", "window", "models")
    assert [(f.name, f.labels) for f in PLAN_FAMILIES] == [
        ("omniladder_plan_timestamp_seconds", ("auto_id",)),
        ("omniladder_max_reading_age_seconds", ("auto_id",)),
        ("omniladder_pool_entries", ("auto_id", "rung")),
        ("omniladder_pool_connections", ("auto_id",)),
        ("omniladder_head_rung", ("auto_id", "rung")),
        ("omniladder_reading_age_seconds", ("auto_id", "connection")),
        ("omniladder_quota_window_remaining_percent", window),
        ("omniladder_quota_window_reset_timestamp_seconds", window),
    ]


def test_the_forecast_families_are_pinned_in_full() -> None:
    window = ("auto_id", "connection", "window", "models")
    assert [(f.name, f.labels) for f in FORECAST_FAMILIES] == [
        ("omniladder_forecast_timestamp_seconds", ("auto_id",)),
        ("omniladder_forecast_horizon_end_timestamp_seconds", ("auto_id",)),
        ("omniladder_forecast_first_paid_timestamp_seconds", ("auto_id",)),
        ("omniladder_forecast_pool_empty_timestamp_seconds", ("auto_id",)),
        ("omniladder_forecast_escalations", ("auto_id",)),
        ("omniladder_forecast_head_hours", ("auto_id", "rung")),
        ("omniladder_forecast_empty_pool_hours", ("auto_id",)),
        ("omniladder_forecast_head_seconds", ("auto_id", "rung")),
        ("omniladder_forecast_empty_pool_seconds", ("auto_id",)),
        ("omniladder_forecast_window_burn_percent_per_hour", window),
        ("omniladder_forecast_window_cutoff_timestamp_seconds", window),
        *((f"omniladder_forecast_{answer}_{edge}_timestamp_seconds", ("auto_id",))
          for answer in ("first_paid", "pool_empty") for edge in ("p10", "p50", "p90")),
        ("omniladder_forecast_unprojected_windows", ("auto_id",)),
    ]


def test_the_families_follow_the_naming_rules_and_never_collide() -> None:
    """Plan and forecast files of one auto id can share a textfile directory: no family name
    in both; every series is labelled auto_id; every name says its unit or is a count."""
    names = [f.name for f in (*PLAN_FAMILIES, *FORECAST_FAMILIES)]
    assert len(set(names)) == len(names)
    for family in (*PLAN_FAMILIES, *FORECAST_FAMILIES):
        assert family.name.startswith("omniladder_")
        assert family.labels[0] == "auto_id"
        assert "\n" not in family.help
        assert "\\" not in family.help
        assert not family.name.endswith(("_total", "_created", "_count", "_sum", "_info"))
    for family in FORECAST_FAMILIES:
        assert family.name.startswith("omniladder_forecast_")
    assert all(not f.name.startswith("omniladder_forecast_") for f in PLAN_FAMILIES)


# promlint's unit rules (prometheus/client_golang prometheus/testutil/promlint/validations/
# units.go and generic_name_validations.go, commit 61d2041642d37398a2804a5481ce0ffa00925599):
# a name's first "_"-separated word naming a unit (or a prefixed unit) must name the base
# unit, and no word may be a unit abbreviation.
NON_BASE_UNITS = {"minutes", "hours", "days", "weeks", "kelvins", "fahrenheit", "rankine",
                  "inches", "yards", "miles", "bits", "calories", "pounds", "ounces"}
BASE_UNITS = {"amperes", "bytes", "celsius", "grams", "joules", "kelvin", "meters", "metres",
              "seconds", "volts"}
UNIT_PREFIXES = ("pico", "nano", "micro", "milli", "centi", "deci", "deca", "hecto", "kilo",
                 "kibi", "mega", "mibi", "giga", "gibi", "tera", "tebi", "peta", "pebi")
UNIT_ABBREVIATIONS = {"s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m",
                      "h", "d"}


def unit_problems(name: str) -> list[str]:
    words = name.split("_")
    problems = [f"abbreviated unit {word!r}" for word in words if word in UNIT_ABBREVIATIONS]
    for word in words:
        bare = next((word[len(p):] for p in UNIT_PREFIXES if word.startswith(p)
                     and word[len(p):] in BASE_UNITS | NON_BASE_UNITS), word)
        if bare in BASE_UNITS | NON_BASE_UNITS:
            if word != bare or bare in NON_BASE_UNITS:
                problems.append(f"non-base unit {word!r}")
            break
    return problems


def test_every_family_but_the_deprecated_passes_the_unit_rules() -> None:
    """promlint flagged the _hours gauges; each has a _seconds twin, and the _hours ones stay
    one release, listed as deprecated."""
    assert unit_problems("omniladder_forecast_head_hours") == ["non-base unit 'hours'"]
    assert unit_problems("x_request_milliseconds") == ["non-base unit 'milliseconds'"]
    assert unit_problems("x_latency_ms") == ["abbreviated unit 'ms'"]
    names = {f.name for f in (*PLAN_FAMILIES, *FORECAST_FAMILIES)}
    assert set(DEPRECATED_FAMILIES) <= names
    assert set(DEPRECATED_FAMILIES.values()) <= names
    for name in sorted(names - set(DEPRECATED_FAMILIES)):
        assert unit_problems(name) == [], name
    page = (EXAMPLES.parent / "docs" / "metrics.md").read_text(encoding="utf-8")
    deprecated = page.split('<a id="deprecated"></a>', 1)[1]
    for old, new in DEPRECATED_FAMILIES.items():
        assert f"`{old}` | `{new}`" in deprecated, old


def test_docs_list_every_family() -> None:
    page = (EXAMPLES.parent / "docs" / "metrics.md").read_text(encoding="utf-8")
    for family in (*PLAN_FAMILIES, *FORECAST_FAMILIES):
        row = next((line for line in page.splitlines()
                    if line.startswith(f"| `{family.name}` |")), None)
        assert row is not None, family.name
        assert row.split("|")[2].strip() == ", ".join(f"`{label}`" for label in family.labels)


# --- the examples ------------------------------------------------------------------------------


def example_plan(auto_id: str, config: str, now: str | None = None
                 ) -> tuple[LoadedInputs, Plan, str]:
    """The plan of an example fleet, and the metrics the CLI prints for it."""
    from omniladder.commands.common import now_for

    inputs = InputOptions(config=Path(config)).load()
    instant, source, inputs = now_for(now, inputs)
    result = make_plan(inputs, parse_auto_id(auto_id), instant, source)
    args = ["plan", auto_id, "--config", config, "--format", "openmetrics"]
    cli = runner.invoke(app, [*args, "--now", now] if now else args)
    assert cli.exit_code == 0, cli.output
    assert cli.stdout == plan_metrics(result, inputs.readings, inputs.settings.ladder)
    return inputs, result, cli.stdout


@pytest.mark.parametrize("auto_id", ["auto/thrifty", "auto/subscription", "auto/coding:thrifty"])
def test_plan_metrics_of_the_example_fleet(auto_id: str) -> None:
    inputs, result, text = example_plan(auto_id, CONFIG)
    found = parse_both(text)
    check_plan_series(inputs, result, found)


def test_plan_metrics_show_what_the_example_quota_file_says() -> None:
    """examples/quota.json: the Max plan's 5h window at 37.5%, its Opus window scoped to one
    model at 0%, its unlimited monthly window at 100 with no reset (NaN)."""
    _, _, text = example_plan("auto/thrifty", CONFIG)
    found = parse_both(text)
    window = "omniladder_quota_window_remaining_percent"
    reset = "omniladder_quota_window_reset_timestamp_seconds"
    work = {"auto_id": "auto/thrifty", "connection": "claude-max-work"}
    assert value(found, window, **work, window="5h", models="") == 37.5
    assert value(found, reset, **work, window="5h", models="") == datetime(
        2026, 11, 29, 15, tzinfo=UTC).timestamp()
    assert value(found, window, **work, window="weekly-opus", models="claude-opus-4-1") == 0
    assert value(found, window, **work, window="monthly", models="") == 100
    assert math.isnan(value(found, reset, **work, window="monthly", models=""))
    assert value(found, "omniladder_reading_age_seconds", **work) == 50
    assert value(found, "omniladder_head_rung", auto_id="auto/thrifty", rung="subscription") == 1


def test_plan_metrics_of_the_day_example_with_an_empty_pool() -> None:
    """auto/subscription on the day example at 14:10 (the Max plan's 5h window spent) has an
    empty pool: all five head-rung gauges are 0 and every pool count is 0."""
    inputs, result, text = example_plan("auto/subscription", DAY, "2026-11-29T14:10:00Z")
    found = parse_both(text)
    check_plan_series(inputs, result, found)
    assert result.pool == ()
    assert set(named(found, "omniladder_head_rung").values()) == {0}
    assert set(named(found, "omniladder_pool_entries").values()) == {0}


def test_plan_metrics_of_the_day_example_thrifty() -> None:
    inputs, result, text = example_plan("auto/thrifty", DAY, DAY_NOW)
    check_plan_series(inputs, result, parse_both(text))
    assert result.pool


def day_forecast(auto_id: str) -> tuple[Forecast, str]:
    from omniladder.analyses.forecast.pace import catalog_lengths
    from omniladder.analyses.forecast.walk import parse_span
    from omniladder.inputs.scopes import load_window_scopes

    inputs = InputOptions(config=Path(DAY)).load()
    now = datetime(2026, 11, 29, 13, tzinfo=UTC)
    result = forecast(inputs, parse_auto_id(auto_id), now, parse_span("24h", "--horizon"),
                      parse_span("5m", "--step"),
                      lengths=catalog_lengths(load_window_scopes(())))
    cli = runner.invoke(app, ["forecast", auto_id, "--config", DAY, "--now", DAY_NOW,
                              "--format", "openmetrics"])
    assert cli.exit_code == 0, cli.output
    return result, cli.stdout


def test_forecast_metrics_of_the_day_example() -> None:
    """docs/forecast.md: the Max plan's 5h window runs out at 14:01:15, when auto/thrifty
    starts paying; no empty pool within the day (NaN)."""
    result, text = day_forecast("auto/thrifty")
    found = parse_both(text)
    check_forecast_series(result, found)
    assert text == forecast_metrics(result)
    first = value(found, "omniladder_forecast_first_paid_timestamp_seconds",
                  auto_id="auto/thrifty")
    assert first == datetime(2026, 11, 29, 14, 1, 15, tzinfo=UTC).timestamp()
    assert math.isnan(value(found, "omniladder_forecast_pool_empty_timestamp_seconds",
                            auto_id="auto/thrifty"))
    cutoff = value(found, "omniladder_forecast_window_cutoff_timestamp_seconds",
                   auto_id="auto/thrifty", connection="claude-max-work", window="5h",
                   models="")
    assert datetime.fromtimestamp(cutoff, UTC).strftime("%H:%M") == "14:01"
    assert value(found, "omniladder_forecast_window_burn_percent_per_hour",
                 auto_id="auto/thrifty", connection="claude-max-work", window="5h",
                 models="") == 48.5


def test_forecast_metrics_of_a_subscription_pool_that_empties() -> None:
    """auto/subscription never pays (NaN) and is empty from 14:01:15, when the Max plan's 5h
    window runs out."""
    result, text = day_forecast("auto/subscription")
    found = parse_both(text)
    check_forecast_series(result, found)
    assert value(found, "omniladder_forecast_pool_empty_timestamp_seconds",
                 auto_id="auto/subscription") == datetime(
        2026, 11, 29, 14, 1, 15, tzinfo=UTC).timestamp()
    assert math.isnan(value(found, "omniladder_forecast_first_paid_timestamp_seconds",
                            auto_id="auto/subscription"))
    assert value(found, "omniladder_forecast_empty_pool_hours", auto_id="auto/subscription") > 0
    assert value(found, "omniladder_forecast_head_hours", auto_id="auto/subscription",
                 rung="cheap") == 0


def test_files_of_several_auto_ids_sit_side_by_side() -> None:
    """One textfile directory, one file per auto id and command: read together they hold no
    series twice, and each family has the same help in every file (the collector requires
    it, prometheus/node_exporter issue #3052)."""
    texts = [example_plan(a, CONFIG)[2] for a in ("auto/thrifty", "auto/subscription")]
    texts += [day_forecast(a)[1] for a in ("auto/thrifty", "auto/subscription")]
    seen: set[tuple[str, frozenset[tuple[str, str]]]] = set()
    helps: dict[str, str] = {}
    for text in texts:
        found = parse_both(text)
        assert not seen & found.keys()
        seen |= found.keys()
        for family in prometheus_families(text):
            assert helps.setdefault(family.name, family.documentation) == family.documentation


def test_series_come_in_family_then_plan_order() -> None:
    """A cron job's diff stays quiet: families in the listed order, connections in file
    order, rungs in ladder order."""
    inputs, _result, text = example_plan("auto/thrifty", CONFIG)
    names = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")]
    assert names == [f.name for f in PLAN_FAMILIES]
    ages = [line for line in text.splitlines()
            if line.startswith("omniladder_reading_age_seconds{")]
    assert [line.split('connection="')[1].split('"')[0] for line in ages] == [
        c.id for c in inputs.connections]
    rungs = [line.split('rung="')[1].split('"')[0] for line in text.splitlines()
             if line.startswith("omniladder_pool_entries{")]
    assert rungs == list(RUNGS)


# --- the text itself ----------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "written"), [
    ("plain", "plain"),
    ('a"b', 'a\\"b'),
    ("a\\b", "a\\\\b"),
    ("a\nb", "a\\nb"),
    ('\\"\n', '\\\\\\"\\n'),
])
def test_label_values_are_escaped(raw: str, written: str) -> None:
    assert escape_label(raw) == written


def test_escaped_ids_parse_back_to_themselves() -> None:
    """A connection id or window name holding a quote or a backslash reads back whole."""
    cid, name = 'odd"id\\x', 'w"\\'
    inputs = fleet([{"id": cid, "provider": "claude", "auth_type": "oauth",
                     "models": ["claude-sonnet-4-5"]}],
                   [{"connection": cid, "checked_at": at(minutes=-1),
                     "windows": [{"name": name, "remaining_percent": 12.25,
                                  "reset_at": at(hours=2)}]}])
    result = plan(inputs)
    found = parse_both(plan_metrics(result, inputs.readings, inputs.settings.ladder))
    assert value(found, "omniladder_quota_window_remaining_percent", auto_id="auto/thrifty",
                 connection=cid, window=name, models="") == 12.25
    check_plan_series(inputs, result, found)


@pytest.mark.parametrize(("raw", "written"), [
    (0.0, "0"), (-0.0, "0"), (37.5, "37.5"), (1795953600.0, "1795953600"),
    (1795960874.226804, "1795960874.226804"), (1e-05, "1e-05"), (2.0**53, "9007199254740992.0"),
    (math.nan, "NaN"), (math.inf, "+Inf"), (-math.inf, "-Inf"),
])
def test_numbers_are_written_as_both_formats_read_them(raw: float, written: str) -> None:
    assert number(raw) == written
    parsed = float(written)
    assert same(parsed, raw)


def test_two_windows_of_one_name_and_scope_are_one_series_the_lower() -> None:
    """Two windows of one reading with the same name and models: the one R6 binds on."""
    inputs = fleet([{"id": "c", "provider": "claude", "auth_type": "oauth",
                     "models": ["claude-sonnet-4-5", "claude-opus-4-1"]}],
                   [{"connection": "c", "checked_at": at(minutes=-1), "windows": [
                       {"name": "weekly", "remaining_percent": 40, "reset_at": at(hours=9)},
                       {"name": "weekly", "remaining_percent": 30, "reset_at": at(hours=8)},
                       {"name": "weekly", "remaining_percent": 5, "reset_at": at(hours=7),
                        "models": ["claude-opus-4-1"]}]}])
    found = parse_both(plan_metrics(plan(inputs), inputs.readings, inputs.settings.ladder))
    remaining = named(found, "omniladder_quota_window_remaining_percent")
    assert sorted(remaining.values()) == [5, 30]
    assert value(found, "omniladder_quota_window_reset_timestamp_seconds",
                 auto_id="auto/thrifty", connection="c", window="weekly", models="") == (
        (NOW + timedelta(hours=8)).timestamp())


@pytest.mark.parametrize("scopes", [
    (["a,b"], ["a", "b"]),
    (["a\\", "b"], ["a\\,b"]),
    (["a\\,", "b"], ["a\\", ",b"]),
    (['a"=b', "c"], ['a"', "=b,c"]),
], ids=["comma", "backslash-comma", "trailing", "quote-equals"])
def test_windows_whose_models_join_alike_stay_distinct_series(scopes: tuple[list[str],
                                                                            list[str]]) -> None:
    """A comma in a model name merged two windows into one series written twice (the
    textfile collector refuses the whole file); each scope is now its own label value,
    and reads back as the models it names."""
    models = sorted({m for scope in scopes for m in scope})
    inputs = fleet([{"id": "c", "provider": "claude", "auth_type": "oauth", "models": models}],
                   [{"connection": "c", "checked_at": at(minutes=-1), "windows": [
                       {"name": "weekly", "remaining_percent": 40.0 + i, "reset_at": at(hours=9),
                        "models": scope} for i, scope in enumerate(scopes)]}])
    result = plan(inputs)
    found = parse_both(plan_metrics(result, inputs.readings, inputs.settings.ladder))
    remaining = named(found, "omniladder_quota_window_remaining_percent")
    assert {split_models(dict(labels)["models"]): v for labels, v in remaining.items()} == {
        tuple(scope): 40.0 + i for i, scope in enumerate(scopes)}
    check_plan_series(inputs, result, found)


HOSTILE = st.text(alphabet=st.sampled_from(list('ab,="\\ {}#')), min_size=1, max_size=4).filter(
    lambda name: name.strip() != "")
"""Names built of what a label join could merge on: a comma, an equals sign, a quote, a
backslash, a brace (newlines and other control characters are refused at load)."""


@deep(80, quick=16, deadline=None)
def test_no_two_samples_of_a_family_share_a_label_set(examples: settings) -> None:
    """For any fleet whose ids, window names and models hold the characters a label join
    could merge on, every family's samples have distinct label sets, and both parsers read
    the same series back."""
    @examples
    @given(connections=st.lists(st.tuples(HOSTILE, st.lists(st.tuples(
        HOSTILE, st.none() | st.lists(HOSTILE, min_size=1, max_size=3)), min_size=1, max_size=4)),
        min_size=1, max_size=3, unique_by=lambda c: c[0]))
    def holds(
            connections: list[tuple[str, list[tuple[str, list[str] | None]]]]) -> None:
        rows, readings = [], []
        for cid, windows in connections:
            named_models = sorted({m for _, scope in windows for m in scope or ()} | {"m"})
            rows.append({"id": cid, "provider": "claude", "auth_type": "oauth",
                         "models": named_models})
            readings.append({"connection": cid, "checked_at": at(minutes=-1), "windows": [
                {"name": name, "remaining_percent": 50, "reset_at": at(hours=2),
                 **({"models": list(dict.fromkeys(scope))} if scope else {})}
                for name, scope in windows]})
        inputs = fleet(rows, readings)
        result = plan(inputs)
        found = plan_samples(result, inputs.readings, inputs.settings.ladder)
        for family, samples in found.items():
            labels = [values for values, _ in samples]
            assert len(labels) == len(set(labels)), family
        check_plan_series(inputs, result, parse_both(
            plan_metrics(result, inputs.readings, inputs.settings.ladder)))

    holds()


def test_a_window_held_at_a_reserve_shows_the_held_figure() -> None:
    """R16 with R6.4: the 5h window fell to 15% at 10:00, under the 20% reserve, and a
    reading at 11:00 shows 50% before the same reset. The plan holds the window at 15%
    until 14:00 (below the reserve: out), so the gauge shows 15%, not the 50% the ladder's
    own 2% cutoff would let through."""
    reset = at(hours=2)
    readings = [{"connection": "max", "checked_at": at(hours=-2),
                 "windows": [{"name": "5h", "remaining_percent": 15, "reset_at": reset}]},
                {"connection": "max", "checked_at": at(hours=-1),
                 "windows": [{"name": "5h", "remaining_percent": 50, "reset_at": reset}]}]
    labels = {"auto_id": "auto/thrifty", "connection": "max", "window": "5h", "models": ""}
    for reserve, shown in ((20, 15.0), (None, 50.0)):
        connection = {"id": "max", "provider": "claude", "auth_type": "oauth",
                      "models": ["claude-sonnet-4-5"], "reserve_percent": reserve}
        inputs = fleet([{k: v for k, v in connection.items() if v is not None}], readings,
                       settings={"ladder": {"max_reading_age_seconds": 86400}})
        result = plan(inputs)
        assert bool(result.excluded) == (reserve is not None)
        found = parse_both(plan_metrics(result, inputs.readings, inputs.settings.ladder))
        assert value(found, "omniladder_quota_window_remaining_percent", **labels) == shown
        check_plan_series(inputs, result, found)


def test_an_empty_fleet_still_parses() -> None:
    inputs = fleet([], [])
    found = parse_both(plan_metrics(plan(inputs), inputs.readings, inputs.settings.ladder))
    assert set(named(found, "omniladder_head_rung").values()) == {0}
    assert named(found, "omniladder_reading_age_seconds") == {}


# --- generated fleets ---------------------------------------------------------------------------


@deep(60, quick=12, deadline=None)
def test_plan_metrics_of_generated_fleets(examples: settings) -> None:
    @examples
    @given(inputs=plan_fleets(), auto_id=st.sampled_from(VALID))
    def holds(inputs: LoadedInputs, auto_id: str) -> None:
        result = plan(inputs, auto_id)
        check_plan_series(inputs, result, parse_both(
            plan_metrics(result, inputs.readings, inputs.settings.ladder)))

    holds()


@settings(max_examples=25, deadline=None)
@given(inputs=FORECAST_FLEETS, auto_id=st.sampled_from(["auto/thrifty", "auto/subscription"]))
def test_forecast_metrics_of_generated_fleets(inputs: LoadedInputs, auto_id: str) -> None:
    result = forecast(inputs, parse_auto_id(auto_id), T0, timedelta(hours=4),
                      timedelta(minutes=15))
    check_forecast_series(result, parse_both(forecast_metrics(result)))


# --- the command line ---------------------------------------------------------------------------


PLAN = ["plan", "auto/thrifty", "--config", CONFIG]
FORECAST = ["forecast", "auto/thrifty", "--config", DAY, "--now", DAY_NOW, "--horizon", "6h"]


@pytest.mark.parametrize("args", [PLAN, FORECAST], ids=["plan", "forecast"])
def test_metrics_out_writes_what_format_openmetrics_prints(args: list[str],
                                                            tmp_path: Path) -> None:
    """--metrics-out with any --format, beside the view on stdout; no temporary file left."""
    target = tmp_path / "omniladder_thrifty.prom"
    printed = runner.invoke(app, [*args, "--format", "openmetrics"])
    written = runner.invoke(app, [*args, "--format", "json", "--metrics-out", str(target)])
    assert printed.exit_code == written.exit_code == 0, written.output
    assert target.read_text(encoding="utf-8") == printed.stdout
    assert written.stdout.startswith("{")
    assert os.listdir(tmp_path) == [target.name]
    parse_both(printed.stdout)


def test_plan_out_and_metrics_out_together(tmp_path: Path) -> None:
    """--out keeps its meaning (the stamped JSON plan); --metrics-out writes the metrics."""
    import json

    saved, metrics = tmp_path / "plan.json", tmp_path / "plan.prom"
    result = runner.invoke(app, [*PLAN, "--out", str(saved), "--metrics-out", str(metrics)])
    assert result.exit_code == 0, result.output
    assert json.loads(saved.read_text(encoding="utf-8"))["auto_id"] == "auto/thrifty"
    parse_both(metrics.read_text(encoding="utf-8"))
    assert "omniladder plan auto/thrifty" in result.stdout or "auto/thrifty" in result.stdout


def test_a_failed_write_leaves_the_previous_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Atomic: when the write fails the previous metrics stay whole, no temporary file is
    left, and the run exits 2 with one line naming the file."""

    target = tmp_path / "omniladder_thrifty.prom"
    target.write_text("# previous\n", encoding="utf-8")

    def refuse(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", refuse)
    result = runner.invoke(app, [*PLAN, "--format", "openmetrics", "--metrics-out",
                                 str(target)])
    one_error(result, "omniladder_thrifty.prom", "cannot write file", "No space left")
    assert target.read_text(encoding="utf-8") == "# previous\n"
    assert os.listdir(tmp_path) == [target.name]


@pytest.mark.parametrize("args", [PLAN, FORECAST], ids=["plan", "forecast"])
def test_metrics_out_never_replaces_an_input(args: list[str]) -> None:

    config = Path(args[args.index("--config") + 1])
    quota = config.parent / "quota.json"
    before = quota.read_bytes()
    result = runner.invoke(app, [*args, "--metrics-out", str(quota)])
    one_error(result, "--metrics-out", "quota.json", "an output never replaces an input")
    assert quota.read_bytes() == before


def test_metrics_out_and_out_need_files_of_their_own(tmp_path: Path) -> None:

    target = tmp_path / "both"
    result = runner.invoke(app, [*PLAN, "--out", str(target), "--metrics-out", str(target)])
    one_error(result, "--metrics-out", "is the same file as --out")
    assert not target.exists()


@pytest.mark.parametrize("args", [PLAN, FORECAST], ids=["plan", "forecast"])
def test_metrics_out_into_a_missing_directory(args: list[str], tmp_path: Path) -> None:

    target = tmp_path / "no-such-dir" / "x.prom"
    result = runner.invoke(app, [*args, "--format", "json", "--metrics-out", str(target)])
    one_error(result, "x.prom: --metrics-out: the directory ", "no-such-dir does not exist")


@pytest.mark.parametrize("args", [PLAN, FORECAST], ids=["plan", "forecast"])
def test_json_and_openmetrics_is_a_usage_error(args: list[str]) -> None:

    result = runner.invoke(app, [*args, "--json", "--format", "openmetrics"])
    one_error(result, "--json asks for json and --format asks for openmetrics")


def test_compare_has_no_openmetrics_view() -> None:

    result = runner.invoke(app, [*PLAN, "--compare", "examples/ci/plan-thrifty.json",
                                 "--format", "openmetrics"])
    one_error(result, "--compare", "openmetrics")


@pytest.mark.parametrize("command", ["show", "check", "diff", "export"])
def test_only_plan_and_forecast_take_openmetrics(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "openmetrics" not in result.stdout
