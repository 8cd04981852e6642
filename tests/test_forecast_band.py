"""docs/forecast.md#band: each window's burn has a spread from its history, and every answer
is reported as p10 / p50 / p90 over the low, middle and high burns."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.analyses.forecast.pace import (
    MIN_SPREAD,
    WindowLength,
    burn_band,
    history_rates,
    outlook,
    window_series,
)
from omniladder.analyses.forecast.walk import (
    _at_burn,
    _band_heads,
    _walk_projection,
    forecast,
    listed_instants,
)
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.models import Reading, Window
from tests.builders import fleet
from tests.conftest import EXAMPLES
from tests.depth import deep
from tests.strategies import SHIPPED, _settings
from tests.test_simulate_stepping import FLEETS, T0

runner = CliRunner()
DAY = str(EXAMPLES / "day" / "omniladder.toml")
NOW = "2026-11-29T13:00:00Z"


def readings(figures: list[tuple[int, float, int]]) -> list[Reading]:
    """(minutes after T0, remaining, reset in hours after T0) per reading."""
    return [Reading(connection="c", checked_at=T0 + timedelta(minutes=m),
                    windows=(Window(name="5h", remaining_percent=f,
                                    reset_at=T0 + timedelta(hours=r)),))
            for m, f, r in figures]


SPANS = [(0, 100.0, 10), (30, 95.0, 10), (60, 90.0, 10), (90, 80.0, 10), (120, 70.0, 10),
         (180, 65.0, 10), (660, 100.0, 15), (720, 70.0, 15)]
"""One cycle read in spans of an hour: 10%/h, then 20%/h (twice the span before), then 5%/h
(a quarter); then a reset and a span of 30%/h with no span before it in its cycle."""


def test_the_history_is_each_hour_long_span_against_the_span_before() -> None:
    history = readings(SPANS)
    now = T0 + timedelta(minutes=720)
    ratios = history_rates(window_series(history, history[-1].windows[0]), now)  # type: ignore[index]
    assert [round(ratio, 6) for ratio, _ in ratios] == [2.0, 0.25]
    older, newer = (weight for _, weight in ratios)
    assert older < newer  # weighted to the recent
    # readings a few minutes apart make the same spans: the band is about hours
    dense = readings([(m, 100.0 - m / 6, 10) for m in range(0, 61, 5)]
                     + [(m, 90.0 - (m - 60) / 3, 10) for m in range(65, 121, 5)])
    ratios = history_rates(window_series(dense, dense[-1].windows[0]), now)  # type: ignore[index]
    assert [round(ratio, 6) for ratio, _ in ratios] == [2.0]


def test_the_band_spans_the_history_and_at_least_the_minimum_spread() -> None:
    history = readings(SPANS)
    window = history[-1].windows[0]  # type: ignore[index]
    low, high = burn_band(window_series(history, window), 30.0, T0 + timedelta(minutes=720))
    assert low == pytest.approx(30.0 * 0.25)  # the span that slowed to a quarter
    assert high == pytest.approx(30.0 * 2.0)  # the span that doubled
    steady = readings([(0, 90.0, 5), (60, 80.0, 5), (120, 70.0, 5)])
    low, high = burn_band(window_series(steady, steady[-1].windows[0]),  # type: ignore[index]
                          10.0, T0 + timedelta(hours=2))
    assert (low, high) == pytest.approx((10.0 * (1 - MIN_SPREAD), 10.0 * (1 + MIN_SPREAD)))


def day_json(*args: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now", NOW,
                                 "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_the_day_example_reports_each_answer_as_a_band() -> None:
    document = day_json()
    band = document["first_paid_at_band"]
    assert band["p50"] == document["first_paid_at"] == "2026-11-29T14:01:15Z"
    assert band["p10"] < band["p50"] < band["p90"]
    assert document["pool_empty_at_band"] == {"p10": None, "p50": None, "p90": None}
    pace = next(p for p in document["pace"] if p["window"] == "5h")
    low, high = pace["burn_band_percent_per_hour"]
    assert low <= 48.5 * (1 - MIN_SPREAD) + 1e-3
    assert high >= 48.5 * (1 + MIN_SPREAD) - 1e-3
    assert f"first paid at 14:01:15Z ({band['p10'][11:16]}Z–" in document["summary"]
    metrics = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now", NOW,
                                  "--format", "openmetrics"]).stdout
    for edge in ("p10", "p50", "p90"):
        assert f"omniladder_forecast_first_paid_{edge}_timestamp_seconds" in metrics


@pytest.mark.parametrize(("percentile", "passes"), [(None, False), ("p10", False),
                                                    ("p50", False), ("p90", True)])
def test_check_gates_judge_the_p10_unless_told(tmp_path: Path, percentile: str | None,
                                               passes: bool) -> None:
    """At p50 cheap heads the pool at 14:01:15, 1h1m15s on (a bound that includes it
    fails); the low burn pays later, so at p90 the same bound passes."""
    policy = tmp_path / "policy.toml"
    chosen = "" if percentile is None else f'percentile = "{percentile}"\n'
    policy.write_text(f'[[expect]]\nname = "a"\nauto_id = "auto/thrifty"\nnow = "{NOW}"\n'
                      f'no_paid_within = "1h1m15s"\n{chosen}', encoding="utf-8")
    result = runner.invoke(app, ["check", str(policy), "--config", DAY])
    assert result.exit_code == (0 if passes else 1), result.output


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(FLEETS, st.sampled_from(["auto/thrifty", "auto/subscription"]),
       st.integers(-120, 60))
def test_the_band_is_ordered_and_centred_on_the_point(inputs: LoadedInputs, auto_id: str,
                                                      start: int) -> None:
    now = T0 + timedelta(minutes=start)
    result = forecast(inputs, parse_auto_id(auto_id), now, timedelta(hours=4),
                      timedelta(minutes=5))
    for band, point in ((result.first_paid_band, result.first_paid_at),
                        (result.pool_empty_band, result.pool_empty_at)):
        if band is None:
            assert not result.answers_known
            continue
        assert band.p50 == point
        if band.p10 is not None and band.p50 is not None:
            assert band.p10 <= band.p50
        if band.p90 is not None:
            assert band.p50 is not None
            assert band.p50 <= band.p90


# --- the band's walks decide again only what the middle walk does not give ------------------


@st.composite
def burning_fleets(draw: st.DrawFn) -> LoadedInputs:
    """Plans whose windows burn through several readings of one cycle (a rate and a band
    each), beside metered keys: a 5h window resetting within the horizon, often a weekly
    one (sometimes below the cutoff, holding the plan out until its own reset while the 5h
    window's figure passes the floor) or one that names a model, figures drawn down towards
    the cutoff and the floor at paces far apart, cooldowns ending inside the horizon,
    budgets and spend."""
    table = _settings(draw)
    table["ladder"]["max_reading_age_seconds"] = draw(st.sampled_from([600.0, 3600.0]))
    connections: list[dict[str, object]] = []
    history: list[dict[str, object]] = []
    for index in range(draw(st.integers(1, 6))):
        cid = f"c{index}"
        plan = draw(st.integers(0, 3)) > 0
        item: dict[str, object] = {
            "id": cid, "provider": "claude" if plan else "openai",
            "auth_type": "oauth" if plan else "apikey",
            "models": ["claude-sonnet-4-5", "claude-opus-4-1"] if plan else ["gpt-5-mini"]}
        if draw(st.integers(0, 4)) == 0:
            item["rate_limited_until"] = _at(draw(st.integers(-30, 600)))
        connections.append(item)
        if not plan:
            continue
        count = draw(st.integers(2, 5))
        last = -draw(st.integers(0, 8))
        gap = draw(st.sampled_from([1, 5, 15]))
        reset = draw(st.integers(10, 300))
        figure = draw(st.sampled_from([100.0, 60.0, 30.0, 20.0, 8.0, 5.5, 3.0]))
        pace = draw(st.sampled_from([0.0, 0.5, 2.0, 10.0, 40.0, 60.0]))
        weekly = draw(st.sampled_from([None, 50.0, 6.0, 1.0]))
        weekly_reset = draw(st.sampled_from([15, 25, 40, 95, 200, 600]))
        scoped = draw(st.booleans())
        length = draw(st.sampled_from([18_000, None]))
        for step in range(count):
            figure = max(figure - pace * gap / 60 * draw(st.sampled_from([0.5, 1.0, 1.5])),
                         0.0)
            at = last - gap * (count - 1 - step)
            windows: list[dict[str, object]] = [
                {"name": "5h", "remaining_percent": round(figure, 3), "reset_at": _at(reset),
                 **({"window_seconds": length} if length else {})}]
            if weekly is not None:
                windows.append({"name": "weekly", "remaining_percent": weekly,
                                "reset_at": _at(weekly_reset)})
            if scoped:
                windows.append({"name": "opus", "models": ["claude-opus-4-1"],
                                "remaining_percent": round(min(figure * 2, 100.0), 3),
                                "reset_at": _at(reset + 60)})
            history.append({"connection": cid, "checked_at": _at(at), "windows": windows})
    return fleet(connections, history, settings=table, catalog=SHIPPED.catalogs,
                 spend=[{"at": _at(-30), "rung": "cheap", "cost_usd": 1.0}])


def _at(minutes: int) -> str:
    return (T0 + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def five_hours(provider: str, window: Window) -> tuple[float | None, str]:
    return 18_000.0, "test"


@deep(150, deadline=None)
def test_the_band_walks_equal_whole_walks_at_each_edge(examples: settings) -> None:
    """``_band_heads`` (the middle walk's decisions reused, moved or decided again) gives
    the heads of the whole walk at the high and the low burn, at every instant it decides
    at: the band's answers and paid hours are the whole walks'."""
    @examples
    @given(st.one_of(burning_fleets(), FLEETS),
           st.sampled_from(["auto/thrifty", "auto/subscription"]),
           st.sampled_from([4, 12, 30]))
    def holds(inputs: LoadedInputs, auto_id: str, hours: int) -> None:
        assert_band_walks_are_whole_walks(inputs, auto_id, T0 + timedelta(hours=hours),
                                          five_hours)

    holds()


def assert_band_walks_are_whole_walks(inputs: LoadedInputs, auto_id: str, end: datetime,
                                      lengths: WindowLength) -> None:
    """The band's walks from ``T0`` to ``end`` (every 15 minutes listed) give the heads of
    the whole walks at the high and the low burn."""
    parsed = parse_auto_id(auto_id)
    listed = listed_instants(T0, end, timedelta(minutes=15))
    outlooks = tuple(outlook(c.id, c.provider, inputs.readings.get(c.id, ()), T0, inputs,
                             lengths)
                     for c in inputs.connections if inputs.readings.get(c.id))
    middle = _walk_projection(inputs, parsed, T0, end, listed, outlooks, False, keep_log=True)
    for edge in ("high", "low"):
        burnt = _at_burn(outlooks, edge)
        whole = _walk_projection(inputs, parsed, T0, end, listed, burnt, False).heads
        assert _band_heads(inputs, parsed, T0, end, listed, middle, outlooks,
                           burnt) == whole


def test_a_plan_held_out_comes_back_at_the_burn_whose_figure_clears_the_floor() -> None:
    """The weekly window (at the cutoff) holds the plan out until its reset 25 minutes on;
    then the 5h window decides: at the middle burn (60 %/h) it shows 5 %, under the floor,
    at the low one (45 %/h) 11.25 %, above it, though neither has crossed the cutoff. The
    low walk must not take the middle walk's decision there."""
    windows = [(-10, 40.0), (-5, 35.0), (0, 30.0)]
    inputs = fleet(
        [{"id": "plan", "provider": "claude", "auth_type": "oauth",
          "models": ["claude-sonnet-4-5"]},
         {"id": "key", "provider": "openai", "auth_type": "apikey", "models": ["gpt-5-mini"]}],
        [{"connection": "plan", "checked_at": _at(at),
          "windows": [{"name": "5h", "remaining_percent": figure, "reset_at": _at(200)},
                      {"name": "weekly", "remaining_percent": 1.0, "reset_at": _at(25)}]}
         for at, figure in windows],
        settings={"ladder": {"exit_cutoff_percent": 2, "reentry_min_remaining_percent": 10,
                             "max_reading_age_seconds": 600}},
        catalog=SHIPPED.catalogs)
    parsed = parse_auto_id("auto/thrifty")
    end = T0 + timedelta(hours=2)
    listed = listed_instants(T0, end, timedelta(minutes=15))
    outlooks = tuple(outlook(c.id, c.provider, inputs.readings[c.id], T0, inputs, five_hours)
                     for c in inputs.connections if c.id in inputs.readings)
    (pace, _) = outlooks[0].paces
    assert pace.burn_percent_per_hour == pytest.approx(60.0)
    assert pace.burn_band is not None
    assert pace.burn_band[0] == pytest.approx(45.0)
    middle = _walk_projection(inputs, parsed, T0, end, listed, outlooks, False, keep_log=True)
    low = _at_burn(outlooks, "low")
    whole = _walk_projection(inputs, parsed, T0, end, listed, low, False).heads
    back = T0 + timedelta(minutes=25)
    assert dict(middle.heads.heads)[back] == "cheap"
    assert dict(whole.heads)[back] == "subscription"
    assert _band_heads(inputs, parsed, T0, end, listed, middle, outlooks, low) == whole
