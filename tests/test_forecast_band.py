"""docs/forecast.md#band: each window's burn has a spread from its history, and every answer
is reported as p10 / p50 / p90 over the low, middle and high burns."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.forecast import MIN_SPREAD, burn_band, forecast, history_rates
from omniladder.models import Reading, Window
from tests.conftest import EXAMPLES
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
    ratios = history_rates(history, history[-1].windows[0], now)  # type: ignore[index]
    assert [round(ratio, 6) for ratio, _ in ratios] == [2.0, 0.25]
    older, newer = (weight for _, weight in ratios)
    assert older < newer  # weighted to the recent
    # readings a few minutes apart make the same spans: the band is about hours
    dense = readings([(m, 100.0 - m / 6, 10) for m in range(0, 61, 5)]
                     + [(m, 90.0 - (m - 60) / 3, 10) for m in range(65, 121, 5)])
    ratios = history_rates(dense, dense[-1].windows[0], now)  # type: ignore[index]
    assert [round(ratio, 6) for ratio, _ in ratios] == [2.0]


def test_the_band_spans_the_history_and_at_least_the_minimum_spread() -> None:
    history = readings(SPANS)
    window = history[-1].windows[0]  # type: ignore[index]
    low, high = burn_band(history, window, 30.0, T0 + timedelta(minutes=720))
    assert low == pytest.approx(30.0 * 0.25)  # the span that slowed to a quarter
    assert high == pytest.approx(30.0 * 2.0)  # the span that doubled
    steady = readings([(0, 90.0, 5), (60, 80.0, 5), (120, 70.0, 5)])
    low, high = burn_band(steady, steady[-1].windows[0],  # type: ignore[index]
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
