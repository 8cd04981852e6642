"""docs/forecast.md#backtest: the forecast replayed at each past reading and judged by the
readings that followed."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.analyses.backtest import (
    Judged,
    Series,
    backtest,
    crossing_at,
    window_forecasts,
)
from omniladder.analyses.forecast.pace import SAME_RESET_SECONDS, no_lengths, outlook
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.quota import quota_readings, readings_until
from omniladder.models import Reading
from omniladder.rendering.backtest_view import backtest_lines
from tests.builders import conn, fleet
from tests.conftest import EXAMPLES, ROOT, benchmark_module
from tests.depth import deep
from tests.errors import one_error
from tests.test_init_schema import _valid

T0 = datetime(2026, 11, 29, 6, tzinfo=UTC)
CUTOFF = 2.0
KEY = ("5h", None)


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def raw(minutes: float, figure: float | None, reset: datetime | None = None, *,
        name: str = "5h", status: str | None = None, unlimited: bool = False,
        cid: str = "c") -> dict[str, Any]:
    """One reading dict of one window (none when ``figure`` and ``unlimited`` are not
    given)."""
    data: dict[str, Any] = {"connection": cid,
                            "checked_at": stamp(T0 + timedelta(minutes=minutes))}
    if status is not None:
        data["status"] = status
    if figure is not None or unlimited:
        item: dict[str, Any] = {"name": name}
        if unlimited:
            item["unlimited"] = True
        else:
            item["remaining_percent"] = figure
        if reset is not None:
            item["reset_at"] = stamp(reset)
        data["windows"] = [item]
    return data


def inputs_of(readings: list[dict[str, Any]], **ladder: Any) -> Any:
    fields = {"exit_cutoff_percent": CUTOFF, "reentry_min_remaining_percent": 5,
              "max_reading_age_seconds": 600, **ladder}
    return fleet([conn("c")], readings, settings={"ladder": fields})


# --- the pace at each reading is the forecast's ----------------------------------------------


def shown_as(draw: st.DrawFn, kind: str, minutes: int, figure: float,
             reset: datetime) -> dict[str, Any]:
    """The reading a history's step of ``kind`` writes: the window absent or unlimited, a
    reading with a drawn status, one without its reset (``noreset``), else the figure and
    reset."""
    if kind == "absent":
        return raw(minutes, None)
    if kind == "unlimited":
        return raw(minutes, None, unlimited=True)
    if kind == "status":
        return raw(minutes, round(figure, 1), reset,
                   status=draw(st.sampled_from(["ok", "unknown", "exhausted"])))
    return raw(minutes, round(figure, 1), None if kind == "noreset" else reset)


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A window's readings: burns, regains, resets that jitter by up to 90 s or move on,
    gaps, absent and unlimited windows, readings with a status."""
    out: list[dict[str, Any]] = []
    minutes = 0
    figure = draw(st.floats(5, 100))
    reset = T0 + timedelta(hours=draw(st.integers(1, 5)))
    for _ in range(draw(st.integers(1, 40))):
        minutes += draw(st.integers(1, 40))
        now = T0 + timedelta(minutes=minutes)
        kind = draw(st.sampled_from(["burn"] * 8 + ["regain", "jitter", "absent", "unlimited",
                                                    "status", "noreset"]))
        if reset <= now:
            reset = now + timedelta(hours=draw(st.integers(1, 5)))
            figure = 100.0
        figure = max(figure - draw(st.floats(0, 12)), 0.0)
        if kind == "regain":
            figure = min(figure + draw(st.floats(0, 20)), 100.0)
        shown = reset
        if kind == "jitter":
            shown = reset + timedelta(seconds=draw(st.integers(-90, 90)))
        out.append(shown_as(draw, kind, minutes, figure, shown))
    return out


@st.composite
def long_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A window read every 10 to 60 minutes for a day and more (a time-of-day profile to
    learn): burns that follow the hour of the day, resets every few hours, regains, windows
    spent until their reset, absent and unlimited windows, readings with a status."""
    out: list[dict[str, Any]] = []
    every = draw(st.sampled_from([10, 20, 30, 60]))
    busy = draw(st.lists(st.integers(0, 23), min_size=1, max_size=12))
    pace = draw(st.floats(0.2, 4))
    figure = 100.0
    reset = T0 + timedelta(hours=draw(st.integers(1, 30)))
    steps = draw(st.integers(24 * 60 // every + 2, 40 * 60 // every))
    for step in range(steps):
        minutes = every * step + draw(st.integers(0, every - 1))
        now = T0 + timedelta(minutes=minutes)
        if reset <= now:
            reset = now + timedelta(hours=draw(st.integers(1, 30)))
            figure = 100.0
        burn = pace * every / 60 * (3.0 if now.hour in busy else 0.3)
        figure = max(figure - burn * draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])), 0.0)
        kind = draw(st.sampled_from(["burn"] * 60 + ["regain", "absent", "unlimited",
                                                     "status", "noreset"]))
        if kind == "regain":
            figure = min(figure + draw(st.floats(0, 20)), 100.0)
        out.append(shown_as(draw, kind, minutes, figure, reset))
    return out


@deep(150, deadline=None)
def test_the_pace_at_each_reading_is_the_forecasts_pace(examples: settings) -> None:
    """At every reading, the incremental pace (burn rate, band, cutoff instant) equals
    ``forecast.outlook`` given the readings up to that instant."""
    @examples
    @given(histories())
    def holds(readings: list[dict[str, Any]]) -> None:
        assert_the_forecasts_pace(readings)

    holds()


@deep(40, quick=8, deadline=None)
def test_the_profiled_pace_at_each_reading_is_the_forecasts_pace(examples: settings) -> None:
    """The same over a day and more of readings: the time-of-day profile learned reading
    after reading is the forecast's, to the last bit, and so are its crossings."""
    @examples
    @given(long_histories())
    def holds(
            readings: list[dict[str, Any]]) -> None:
        assert_the_forecasts_pace(readings)

    holds()


def assert_the_forecasts_pace(readings: list[dict[str, Any]]) -> None:
    inputs = inputs_of(readings)
    history = inputs.readings.get("c", ())
    quota = quota_readings(history)
    end = history[-1].checked_at if history else T0
    mine = {item.index: item for item in window_forecasts("claude", quota, KEY, CUTOFF,
                                                          no_lengths, T0, end)}
    for index, reading in enumerate(quota):
        now = reading.checked_at
        found = outlook("c", "claude", readings_until(history, now), now, inputs, no_lengths)
        pace = next((p for p in found.paces if p.window == "5h" and not p.past_reset), None)
        rate = None if pace is None or not found.projected else pace.burn_percent_per_hour
        item = mine.get(index)
        assert (item.rate if item is not None else None) == pytest.approx(rate), index
        if rate is None or item is None or pace is None:
            continue
        assert item.band == pytest.approx(pace.burn_band)
        assert item.profile == pace.profile
        assert crossing_at(item.window, rate, now, CUTOFF, item.profile) == pace.cutoff_at


# --- judging -----------------------------------------------------------------------------------


RESET = T0 + timedelta(hours=5)


def same_reset(a: datetime | None, b: datetime | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs((a - b).total_seconds()) <= SAME_RESET_SECONDS


def walked(readings: tuple[Reading, ...], index: int, max_age: float) -> Judged:
    """The judging rule as written in docs/forecast.md#backtest, one reading after another:
    what ``Series`` must find without the walk."""
    first = next(w for w in readings[index].all_windows() if w.name == "5h")
    reset_at, last_at, last = first.reset_at, readings[index].checked_at, first.figure
    for reading in readings[index + 1:]:
        at = reading.checked_at
        if reset_at is not None and at >= reset_at:
            gap = (reset_at - last_at).total_seconds()
            return Judged("reading-jump" if gap > max_age else "lasted")
        mine = next((w for w in reading.all_windows() if w.name == "5h"), None)
        if mine is None:
            continue
        if mine.unlimited:
            return Judged("reading-jump")
        if not same_reset(mine.reset_at, reset_at):
            if reset_at is None:
                return Judged("new-cycle")
            if (reset_at - at).total_seconds() > SAME_RESET_SECONDS:
                return Judged("reset-early")
            gap = (at - last_at).total_seconds()
            return Judged("reading-jump" if gap > max_age else "lasted")
        if mine.figure > last:
            return Judged("reading-jump")
        if mine.figure <= CUTOFF:
            gap = (at - last_at).total_seconds()
            return Judged("reading-jump") if gap > max_age else Judged("crossed", at, last_at)
        last_at, last = at, mine.figure
    return Judged("no-later-reading")


@deep(150, deadline=None)
def test_the_series_judges_as_the_walk_does(examples: settings) -> None:
    @examples
    @given(histories(), st.sampled_from([300, 600, 1800]))
    def holds(readings: list[dict[str, Any]], max_age: float) -> None:
        history = quota_readings(inputs_of(readings).readings.get("c", ()))
        series = Series(history, KEY, CUTOFF, max_age)
        for index in series.where:
            assert series.judge(series.position(index)) == walked(tuple(history), index, max_age)

    holds()


def judged(readings: list[dict[str, Any]], index: int = 0, max_age: float = 600
           ) -> tuple[str, datetime | None]:
    inputs = inputs_of(readings, max_reading_age_seconds=max_age)
    series = Series(quota_readings(inputs.readings["c"]), KEY, CUTOFF, max_age)
    found = series.judge(series.position(index))
    return found.kind, found.truth


def test_the_truth_is_the_first_reading_at_or_below_the_cutoff() -> None:
    readings = [raw(0, 50, RESET), raw(5, 30, RESET), raw(10, 2, RESET), raw(15, 1, RESET)]
    assert judged(readings) == ("crossed", T0 + timedelta(minutes=10))


def test_a_reading_at_or_after_the_reset_says_the_window_lasted() -> None:
    readings = [raw(0, 50, RESET), raw(295, 30, RESET), raw(301, 100)]
    assert judged(readings) == ("lasted", None)
    # a new cycle a second before the reset shown: the reset, jittered
    early = [raw(0, 50, RESET), raw(295, 30, RESET),
             raw(299.99, 99, RESET + timedelta(hours=5))]
    assert judged(early) == ("lasted", None)


@pytest.mark.parametrize(("readings", "kind"), [
    ([raw(0, 50, RESET), raw(5, 40, RESET + timedelta(hours=1))], "reset-early"),
    ([raw(0, 50, RESET), raw(5, 60, RESET)], "reading-jump"),
    ([raw(0, 50, RESET), raw(30, 1, RESET)], "reading-jump"),  # a 30-minute gap
    ([raw(0, 50, RESET), raw(5, 40, RESET)], "no-later-reading"),
    ([raw(0, 50, RESET), raw(200, 40, RESET), raw(320, 100)], "reading-jump"),
    ([raw(0, 100), raw(5, 90, RESET)], "new-cycle"),
])
def test_forecasts_the_readings_cannot_judge_are_excluded(readings: list[dict[str, Any]],
                                                          kind: str) -> None:
    assert judged(readings)[0] == kind


def test_a_reading_without_the_window_says_nothing_of_it() -> None:
    readings = [raw(0, 50, RESET), raw(5, None, status="unknown"), raw(8, 1, RESET)]
    assert judged(readings) == ("crossed", T0 + timedelta(minutes=8))


# --- the whole backtest ------------------------------------------------------------------------


def steady(rate_per_hour: float, minutes: int, every: int = 5) -> list[dict[str, Any]]:
    """A window burning evenly from 100% from T0, read every ``every`` minutes."""
    return [raw(m, round(max(100 - rate_per_hour * m / 60, 0), 3), RESET)
            for m in range(0, minutes + 1, every)]


def test_a_steady_burn_is_forecast_exactly() -> None:
    """40%/h from 100%: the cutoff (2%) is reached at 2h27m; each forecast's p50 is the
    reading where it is first seen (2h30m) to within the five minutes between readings."""
    inputs = inputs_of(steady(40, 160))
    result = backtest(inputs, parse_auto_id("auto/thrifty"), T0, T0 + timedelta(hours=3))
    assert result.samples
    assert all(s.truth == T0 + timedelta(minutes=150) for s in result.samples)
    assert all(abs(s.error_seconds) <= 300 for s in result.samples)
    assert result.coverage == 1.0
    rows = {row.label: row for row in result.by_lead()}
    assert rows["1-3h"].samples > 0
    assert rows["> 6h"].samples == 0
    assert sum(row.samples for row in rows.values()) == len(result.samples)


def test_a_connection_with_a_reserve_crosses_at_its_reserve() -> None:
    """R16: the same 40%/h burn on a connection keeping 20% reaches its exit cutoff, the
    reserve, at 2h00m (the reading at 20%), not the ladder's 2% at 2h27m; each forecast's
    p50 is that instant. A reserve at or below the ladder's cutoff changes nothing."""
    readings = steady(40, 160)
    span = (parse_auto_id("auto/thrifty"), T0, T0 + timedelta(hours=3))
    for reserve, crossing in ((20, 120), (2, 150)):
        inputs = fleet([conn("c", reserve_percent=reserve)], readings,
                       settings={"ladder": {"exit_cutoff_percent": CUTOFF,
                                            "reentry_min_remaining_percent": 5,
                                            "max_reading_age_seconds": 600}})
        result = backtest(inputs, *span)
        assert result.samples
        assert {s.truth for s in result.samples} == {T0 + timedelta(minutes=crossing)}
        assert all(abs(s.error_seconds) <= 300 for s in result.samples)
        assert result.cutoff_percent == CUTOFF
        assert result.reserved == (reserve > CUTOFF)
        span_line = " ".join(" ".join(backtest_lines(result)).split())
        assert ("(exit cutoff 2%; 1 connection at its reserve)" in span_line) == (
            reserve > CUTOFF)


def test_a_burn_that_doubles_falls_below_the_band() -> None:
    """20%/h for an hour, then 60%/h: the forecasts made in the first hour expect the
    cutoff hours later than it comes, and the band (no history of faster burns) misses."""
    readings = steady(20, 60)
    figure = 100 - 20.0
    for m in range(65, 200, 5):
        figure = max(figure - 5.0, 0.0)
        readings.append(raw(m, figure, RESET))
    result = backtest(inputs_of(readings), parse_auto_id("auto/thrifty"), T0,
                      T0 + timedelta(minutes=60))
    assert result.samples
    assert all(s.truth < (s.p10 or RESET) for s in result.samples[1:])
    bias = result.overall().bias_seconds
    assert bias is not None
    assert bias > 3600


def test_the_span_and_the_auto_id_choose_the_forecasts() -> None:
    inputs = inputs_of(steady(40, 160))
    late = backtest(inputs, parse_auto_id("auto/thrifty"), T0 + timedelta(hours=2),
                    T0 + timedelta(hours=3))
    assert all(s.at >= T0 + timedelta(hours=2) for s in late.samples)
    assert 0 < len(late.samples) < len(backtest(
        inputs, parse_auto_id("auto/thrifty"), T0, T0 + timedelta(hours=3)).samples)


# --- on the command line -----------------------------------------------------------------------


runner = CliRunner()
DAY = str(EXAMPLES / "day" / "omniladder.toml")


def run(*args: str, code: int = 0) -> Any:
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--backtest",
                                 *args])
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result


def test_the_json_document_keeps_to_its_schema() -> None:
    schema = json.loads((ROOT / "schemas" / "forecast-backtest.schema.json").read_text())
    document = json.loads(run("--json").stdout)
    assert _valid(document, schema, schema)
    assert set(document) == set(schema["required"])
    assert document["kind"] == "forecast-backtest"
    assert document["samples"] == sum(row["samples"] for row in document["by_lead"])
    assert document["samples"] == sum(row["samples"] for row in document["by_window"])
    assert document["samples"] > 0
    assert 0 <= document["coverage"] <= 1


def test_the_views_carry_the_same_figures() -> None:
    document = json.loads(run("--json").stdout)
    table = run().stdout
    markdown = run("--format", "markdown").stdout
    assert document["summary"] in " ".join(table.split())
    assert f"**{document['summary']}**" in markdown
    for row in document["by_lead"]:
        assert f"| {row['samples']} |" in markdown or row["samples"] == 0
    assert all(len(line) <= 80 for line in table.splitlines())


def test_the_span_defaults_to_the_history_and_narrows_the_forecasts() -> None:
    whole = json.loads(run("--json").stdout)
    assert (whole["from"], whole["to"]) == ("2026-11-29T06:00:00Z", "2026-11-29T23:55:00Z")
    morning = json.loads(run("--from", "2026-11-29T06:00:00Z", "--to",
                             "2026-11-29T12:00:00Z", "--json").stdout)
    assert morning["to"] == "2026-11-29T12:00:00Z"
    assert 0 < morning["forecasts"] < whole["forecasts"]


@pytest.mark.parametrize(("args", "words"), [
    (["--from", "2026-11-29T12:00:00Z", "--to", "2026-11-29T09:00:00Z"],
     "--from: 2026-11-29T12:00:00Z is after --to 2026-11-29T09:00:00Z"),
    (["--from", "2027-01-01T00:00:00Z"], "--from: no reading from 2027-01-01T00:00:00Z"),
    (["--to", "2026-11-28T00:00:00Z"], "--to: no reading from"),
    (["--from", "yesterday"], "--from: not an RFC 3339 timestamp"),
    (["--from", "2026-11-29T12:00:00"], "no offset"),
    (["--now", "2026-11-29T12:00:00Z"], "--now: --now does not go with --backtest"),
    (["--horizon", "2h"], "--horizon: --horizon does not go with --backtest"),
    (["--step", "1m"], "--step"),
    (["--svg", "x.svg"], "--svg"),
    (["--metrics-out", "x.prom"], "--metrics-out"),
    (["--format", "openmetrics"], "--format openmetrics does not go with --backtest"),
])
def test_bad_spans_and_options_are_one_line_usage_errors(args: list[str], words: str) -> None:
    one_error(run(*args, code=2), words)


@pytest.mark.parametrize("option", ["--from", "--to"])
def test_a_span_without_backtest_is_a_usage_error(option: str) -> None:
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, option,
                                 "2026-11-29T06:00:00Z"])
    one_error(result, f"{option}: a span to replay, only with --backtest")


def test_no_quota_history_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "c"\nprovider = "claude"\nauth_type = "oauth"\n')
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--connections",
                                 str(tmp_path / "connections.toml"), "--backtest"])
    one_error(result, "--backtest: no quota reading of a connection serving auto/thrifty")


# --- the worked examples of docs/forecast.md ---------------------------------------------------


def documented(anchor: str) -> str:
    text = (ROOT / "docs" / "forecast.md").read_text(encoding="utf-8")
    found = re.search(r"```text\n(.*?)```", text.split(f'<a id="{anchor}"></a>', 1)[1], re.S)
    assert found is not None
    return found.group(1)


def test_the_day_example_backtest_is_what_the_command_prints() -> None:
    assert run().stdout == documented("backtest-day")


@pytest.mark.slow
def test_the_generated_week_backtest_is_what_the_command_prints(tmp_path: Path) -> None:
    """docs/forecast.md's week: benchmarks/fleet.py --connections 20 --week 7 --seed 1."""
    settings = benchmark_module("fleet").generate_week(tmp_path, 20, 7, seed=1)
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", str(settings),
                                 "--backtest"])
    assert result.exit_code == 0, result.output
    assert result.stdout == documented("backtest-week")


def test_a_history_of_years_is_weighted_as_the_forecast_weighs_it() -> None:
    """Ratios more than 400 half-lives apart: the weights are rebased instead of
    overflowing, and the band at the late readings is still the forecast's."""
    late = 600 * 24 * 60  # 600 days on
    readings = [raw(m, f, T0 + timedelta(hours=10)) for m, f in
                ((0, 100), (60, 90), (120, 70), (180, 65))]
    readings += [raw(late + m, f, T0 + timedelta(days=600, hours=10)) for m, f in
                 ((0, 100), (60, 95), (120, 85), (180, 80), (240, 60))]
    inputs = inputs_of(readings)
    history = inputs.readings["c"]
    quota = quota_readings(history)
    items = list(window_forecasts("claude", quota, KEY, CUTOFF, no_lengths, T0,
                                  history[-1].checked_at))
    last = items[-1]
    now = quota[last.index].checked_at
    found = outlook("c", "claude", readings_until(history, now), now, inputs, no_lengths)
    assert last.band == pytest.approx(found.paces[0].burn_band)
    assert last.band is not None
    assert last.rate is not None
    assert last.band[1] == pytest.approx(last.rate * 4.0)  # the late cycle's own ratios


def test_a_history_imported_from_codex_rollouts_replays(tmp_path: Path) -> None:
    """Any quota history replays: here the readings `import codex-sessions` takes from the
    published rollout fixtures (tests/fixtures/sources/codex): the 10:00 reading of the 5h
    ("session") window is a forecast, whose cycle the history ends before judging."""
    connections = tmp_path / "connections.toml"
    connections.write_text('[[connections]]\nid = "codex-pro"\nprovider = "codex"\n'
                           'auth_type = "oauth"\n', encoding="utf-8")
    quota = tmp_path / "quota.json"
    imported = runner.invoke(app, ["import", "codex-sessions",
                                   str(ROOT / "tests" / "fixtures" / "sources" / "codex"),
                                   "--connection", "codex-pro", "--quota", str(quota),
                                   "--connections", str(connections)])
    assert imported.exit_code == 0, imported.output
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--backtest", "--json",
                                 "--quota", str(quota), "--connections", str(connections)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["forecasts"] == 1
    assert document["excluded"]["no-later-reading"] == 1
    assert document["samples"] == 0
    assert document["coverage"] is None


@pytest.mark.parametrize(("max_age", "warned"), [(180, True), (600, False)])
def test_readings_further_apart_than_the_max_age_are_named_as_the_reason_for_the_jumps(
        tmp_path: Path, max_age: int, warned: bool) -> None:
    """Readings polled every 5 minutes judged with a max reading age of 3 minutes make each
    outcome a reading jump: the warning names the gap, the setting and the count, and is
    gone once the setting covers the polling interval."""
    settings_path = benchmark_module("fleet").generate_week(tmp_path, connections=2, days=1,
                                                            seed=4)
    text = settings_path.read_text(encoding="utf-8")
    settings_path.write_text(re.sub(r"max_reading_age_seconds = \d+",
                                    f"max_reading_age_seconds = {max_age}", text),
                             encoding="utf-8")
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", str(settings_path),
                                 "--backtest", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    found = [w for w in document["warnings"] if "max_reading_age_seconds" in w]
    if warned:
        jumps = document["excluded"]["reading-jump"]
        assert jumps > 0
        assert found == [f"the readings are 5m apart (median) but [ladder] "
                         f"max_reading_age_seconds is 180: an outcome seen after a longer gap "
                         f"is a reading jump, so {jumps} forecasts were excluded for it; set "
                         "max_reading_age_seconds to at least the polling interval to judge "
                         "them"]
    else:
        assert found == []
