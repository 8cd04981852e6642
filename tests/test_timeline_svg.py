"""The timeline picture: `forecast --svg` projected from now, and `simulate --svg` at its edges.

One renderer draws both (omniladder/rendering/timeline.py): steps at or after the "projected
from" instant are projected (lighter, hatched, dashed outlines, after a labelled "now" line),
the steps before it recorded. These tests parse the SVG and hold its geometry: every
coordinate inside the viewBox, projected elements starting at the "now" x-coordinate and
recorded ones ending there, for the day example and for generated fleets, one-step and
zero-length spans included.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.analyses.forecast.walk import forecast
from omniladder.analyses.simulate import simulate
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.rendering.timeline import forecast_svg, timeline_svg
from tests.conftest import EXAMPLES
from tests.depth import deep
from tests.test_simulate_stepping import FLEETS, T0

runner = CliRunner()
DAY = str(EXAMPLES / "day" / "omniladder.toml")
NOW = "2026-11-29T13:00:00Z"
NS = "{http://www.w3.org/2000/svg}"
LEFT, CHART = 120.0, 960.0
"""The chart's left edge and width in the picture (where "now" sits in a forecast)."""
EPS = 0.011
"""Coordinates are written to two decimals."""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == f"{NS}svg"
    return root


def box(root: ET.Element) -> tuple[float, float]:
    x0, y0, width, height = map(float, root.attrib["viewBox"].split())
    assert (x0, y0) == (0, 0)
    return width, height


def assert_inside_the_view_box(root: ET.Element) -> None:
    """Every x, y, line end, rectangle and path point of the picture lies within it."""
    width, height = box(root)
    patterns = {id(e) for p in root.iter(f"{NS}pattern") for e in p.iter()}
    for element in root.iter():
        if element is root or id(element) in patterns:
            continue
        attributes = element.attrib
        for key, limit in (("x", width), ("x1", width), ("x2", width), ("y", height),
                           ("y1", height), ("y2", height)):
            if key in attributes:
                assert -EPS <= float(attributes[key]) <= limit + EPS, (element.tag, attributes)
        if element.tag == f"{NS}rect":
            right = float(attributes["x"]) + float(attributes["width"])
            bottom = float(attributes["y"]) + float(attributes["height"])
            assert float(attributes["width"]) >= 0
            assert float(attributes["height"]) >= 0
            assert right <= width + EPS, attributes
            assert bottom <= height + EPS, attributes
        if "d" in attributes:
            numbers = [float(n) for n in _NUMBER.findall(attributes["d"])]
            assert all(-EPS <= x <= width + EPS for x in numbers[0::2]), attributes
            assert all(-EPS <= y <= height + EPS for y in numbers[1::2]), attributes


def parts(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{NS}rect") if e.attrib.get("class") == name]


def span(rect: ET.Element) -> tuple[float, float]:
    x = float(rect.attrib["x"])
    return x, x + float(rect.attrib["width"])


def now_x(root: ET.Element) -> float:
    (line,) = [e for e in root.iter(f"{NS}line") if e.attrib.get("id") == "now"]
    assert line.attrib["x1"] == line.attrib["x2"]
    return float(line.attrib["x1"])


def assert_split_at_now(root: ET.Element, *, recorded: bool) -> float:
    """Projected elements start at the now line (the first at it), recorded ones end there
    (the last at it); returns the now line's x."""
    x = now_x(root)
    projected = parts(root, "projected")
    assert projected, "a projected picture draws its projected part"
    assert all(span(rect)[0] >= x - EPS for rect in projected)
    assert min(span(rect)[0] for rect in projected) == pytest.approx(x, abs=EPS)
    before = parts(root, "recorded")
    assert bool(before) == recorded
    assert all(span(rect)[1] <= x + EPS for rect in before)
    if before:
        assert max(span(rect)[1] for rect in before) == pytest.approx(x, abs=EPS)
    return x


def texts(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(f"{NS}text")]


def head_bands(root: ET.Element) -> list[ET.Element]:
    (group,) = [g for g in root.iter(f"{NS}g") if g.attrib.get("id") == "head"]
    return list(group.iter(f"{NS}rect"))


# --- the day example -------------------------------------------------------------------------


def day_svg(tmp_path: Path, auto_id: str = "auto/thrifty", *more: str) -> ET.Element:
    target = tmp_path / "forecast.svg"
    result = runner.invoke(app, ["forecast", auto_id, "--config", DAY, "--now", NOW,
                                 "--svg", str(target), *more])
    assert result.exit_code == 0, result.output
    return ET.parse(target).getroot()


def test_the_day_forecast_is_projected_from_now_at_the_left_edge(tmp_path: Path) -> None:
    """The forecast holds no recorded history: "now" is the chart's left edge, every band is
    projected, and the picture says so in its legend and on the now line."""
    root = day_svg(tmp_path)
    assert_inside_the_view_box(root)
    assert assert_split_at_now(root, recorded=False) == LEFT
    shown = texts(root)
    assert "now 13:00Z" in shown
    assert "projected (after now)" in shown
    bands = head_bands(root)
    assert all(b.attrib["class"] == "projected" for b in bands)
    assert all(b.attrib["fill-opacity"] == "0.4" and b.attrib["stroke-dasharray"]
               for b in bands)


def test_the_day_forecast_shows_the_escalation_its_comeback_and_first_paid(
        tmp_path: Path) -> None:
    """R11 over the projection: subscription until the cutoff at 14:01:15, cheap until the
    17:00 reset, then subscription again. The bands are drawn at the listed 5-minute steps
    (cheap from the 14:05 step); first_paid_at is marked at its instant and the wait
    listed."""
    root = day_svg(tmp_path)
    step_w = CHART / 289  # 24 hours every 5 minutes, both ends

    def x_of(minutes: float) -> float:
        return LEFT + minutes * 60 / 86_400 * (CHART - step_w)

    heads = [(b.attrib["fill"], *span(b)) for b in head_bands(root)]
    assert [h[0] for h in heads] == ["#2e7d32", "#ef6c00", "#2e7d32"]
    assert heads[1][1] == pytest.approx(x_of(65), abs=EPS)   # 14:05
    assert heads[2][1] == pytest.approx(x_of(240), abs=EPS)  # 17:00
    assert heads[2][2] == pytest.approx(LEFT + CHART, abs=EPS)
    shown = texts(root)
    assert "1. 14:01:15Z subscription → cheap: claude-max-work 5h window at 1.98958%" in shown
    assert "2. 17:00Z back to subscription: claude-max-work 5h window reset" in shown
    assert "pay from 14:01:15Z until 17:00Z, or wait 2h58m" in shown
    (marker,) = [e for e in root.iter(f"{NS}g") if e.attrib.get("id") == "markers"]
    (line,) = marker.iter(f"{NS}line")
    assert float(line.attrib["x1"]) == pytest.approx(x_of(61.25), abs=EPS)
    assert ["".join(t.itertext()) for t in marker.iter(f"{NS}text")] == [
        "first paid 14:01:15Z"]


def test_the_day_forecast_marks_the_pool_emptying(tmp_path: Path) -> None:
    root = day_svg(tmp_path, "auto/subscription")
    assert_inside_the_view_box(root)
    assert "pool empty 14:01:15Z" in texts(root)
    assert "first paid" not in " ".join(texts(root))


def test_committed_day_forecast_svg_matches_what_the_command_makes(tmp_path: Path) -> None:
    """docs/forecast.md's picture is the output of the command it shows."""
    target = tmp_path / "forecast.svg"
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now", NOW,
                                 "--svg", str(target)])
    assert result.exit_code == 0, result.output
    committed = EXAMPLES / "day" / "forecast.svg"
    assert committed.read_text(encoding="utf-8") == target.read_text(encoding="utf-8")


def test_json_stays_on_stdout_when_the_picture_is_written(tmp_path: Path) -> None:
    target = tmp_path / "forecast.svg"
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now", NOW,
                                 "--json", "--svg", str(target)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("{")
    assert result.stdout.rstrip().endswith("}")
    assert "wrote" not in result.stderr
    assert_inside_the_view_box(ET.parse(target).getroot())


def test_the_table_run_says_where_the_picture_went(tmp_path: Path) -> None:
    target = tmp_path / "forecast.svg"
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now", NOW,
                                 "--svg", str(target)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1] == f"omniladder: wrote {target}"


def test_a_recorded_part_ends_where_the_projected_part_starts() -> None:
    """The one renderer with a "projected from" instant: simulate's day from 06:00 with the
    steps from 13:00 on drawn as projected."""
    from omniladder.commands.common import InputOptions

    inputs = InputOptions(config=Path(DAY)).load()
    series = simulate(inputs, parse_auto_id("auto/thrifty"),
                      datetime(2026, 11, 29, 6, tzinfo=UTC), datetime(2026, 11, 30, tzinfo=UTC),
                      timedelta(minutes=5))
    root = parse(timeline_svg(series, datetime(2026, 11, 29, 13, tzinfo=UTC)))
    assert_inside_the_view_box(root)
    x = assert_split_at_now(root, recorded=True)
    step_w = CHART / len(series.points)
    assert x == pytest.approx(LEFT + 7 / 18 * (CHART - step_w), abs=EPS)
    assert "now 13:00Z" in texts(root)
    # without the instant, nothing is split: simulate's own picture
    plain = parse(timeline_svg(series))
    assert not parts(plain, "projected")
    assert not parts(plain, "recorded")
    assert "projected (after now)" not in texts(plain)


# --- one step --------------------------------------------------------------------------------


@pytest.mark.parametrize("end", ["2026-11-29T13:00:00Z", "2026-11-29T13:04:59Z"])
def test_a_one_step_simulate_picture_stays_inside_its_view_box(tmp_path: Path,
                                                              end: str) -> None:
    """A single step (from == to, or a span shorter than the step) fills the chart; it used
    to be drawn from the chart's middle to past the picture's right edge."""
    target = tmp_path / "one.svg"
    result = runner.invoke(app, ["simulate", "auto/thrifty", "--config", DAY, "--from", NOW,
                                 "--to", end, "--svg", str(target)])
    assert result.exit_code == 0, result.output
    root = ET.parse(target).getroot()
    assert_inside_the_view_box(root)
    (band,) = head_bands(root)
    assert span(band) == (LEFT, LEFT + CHART)


def test_a_one_step_forecast_picture_is_all_projected(tmp_path: Path) -> None:
    root = day_svg(tmp_path, "auto/thrifty", "--horizon", "4m")
    assert_inside_the_view_box(root)
    assert_split_at_now(root, recorded=False)
    (band,) = head_bands(root)
    assert span(band) == (LEFT, LEFT + CHART)


# --- generated fleets ------------------------------------------------------------------------


@deep(60, quick=12, deadline=None)
def test_generated_forecast_pictures_are_projected_from_now_and_inside(examples: settings) -> None:
    """Zero-length, one-step and longer horizons: projected from the left edge, nothing
    recorded, every coordinate inside, and the markers at their instants."""
    @examples
    @given(FLEETS, st.sampled_from(["auto/thrifty", "auto/subscription"]),
           st.integers(-120, 60), st.sampled_from([0, 3, 5, 60, 240]), st.sampled_from([5, 15]))
    def holds(
            inputs: LoadedInputs, auto_id: str, start: int, horizon: int, step: int) -> None:
        now = T0 + timedelta(minutes=start)
        result = forecast(inputs, parse_auto_id(auto_id), now, timedelta(minutes=horizon),
                          timedelta(minutes=step))
        root = parse(forecast_svg(result))
        assert_inside_the_view_box(root)
        assert assert_split_at_now(root, recorded=False) == LEFT
        markers = [e for e in root.iter(f"{NS}g") if e.attrib.get("id") == "markers"]
        shown = " ".join("".join(t.itertext()) for g in markers for t in g.iter(f"{NS}text"))
        assert ("first paid" in shown) == (result.first_paid_at is not None)
        assert ("pool empty" in shown) == (result.pool_empty_at is not None)
        assert len(head_bands(root)) == 1 + len(result.transitions)

    holds()


@deep(60, quick=12, deadline=None)
def test_generated_simulate_pictures_split_at_any_instant(examples: settings) -> None:
    """Whatever the span (one step included) and wherever the projected part starts, even
    before or after every step, both parts meet at the now line inside the view box."""
    @examples
    @given(FLEETS, st.integers(-120, 60), st.sampled_from([0, 3, 5, 60, 240]),
           st.sampled_from([5, 15]), st.integers(-30, 300))
    def holds(
            inputs: LoadedInputs, start: int, minutes: int, step: int, split: int) -> None:
        first = T0 + timedelta(minutes=start)
        series = simulate(inputs, parse_auto_id("auto/thrifty"), first,
                          first + timedelta(minutes=minutes), timedelta(minutes=step))
        plain = parse(timeline_svg(series))
        assert_inside_the_view_box(plain)
        at = first + timedelta(minutes=split)
        root = parse(timeline_svg(series, at))
        assert_inside_the_view_box(root)
        x = now_x(root)
        projected, recorded = parts(root, "projected"), parts(root, "recorded")
        assert all(span(r)[0] >= x - EPS for r in projected)
        assert all(span(r)[1] <= x + EPS for r in recorded)
        assert bool(projected) == any(p.at >= at for p in series.points)
        assert bool(recorded) == any(p.at < at for p in series.points)

    holds()


def test_the_picture_and_the_metrics_cannot_share_a_file(tmp_path: Path) -> None:
    """Two outputs of one run onto one file: exit 2 naming both options, nothing written."""
    target = tmp_path / "out.txt"
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now", NOW,
                                 "--svg", str(target), "--metrics-out", str(target)])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "--svg" in line
    assert "--metrics-out" in line
    assert not target.exists()


# --- the band ----------------------------------------------------------------------------


def band_rects(root: ET.Element) -> list[ET.Element]:
    found = [g for g in root.iter(f"{NS}g") if g.attrib.get("id") == "bands"]
    return [rect for group in found for rect in group.iter(f"{NS}rect")]


def test_the_day_forecast_shades_first_paid_from_its_p10_to_its_p90(tmp_path: Path) -> None:
    """The band of first_paid_at (13:49Z at the high burn, 14:01:15Z at the middle, 14:21:39Z
    at the low) is a translucent span across the chart from the p10's x to the p90's, at the
    marker's scale, whose title names the three instants."""
    root = day_svg(tmp_path)
    assert_inside_the_view_box(root)
    step_w = CHART / 289

    def x_of(minutes: float) -> float:
        return LEFT + minutes * 60 / 86_400 * (CHART - step_w)

    (rect,) = band_rects(root)
    start, end = span(rect)
    assert start == pytest.approx(x_of(49), abs=EPS)
    assert end == pytest.approx(x_of(81 + 39 / 60), abs=EPS)
    assert float(rect.attrib["fill-opacity"]) < 0.5
    (title,) = rect.iter(f"{NS}title")
    assert title.text == "first paid: p10 13:49Z, p50 14:01:15Z, p90 14:21:39Z"


def test_the_emptying_pool_of_auto_subscription_is_shaded_too(tmp_path: Path) -> None:
    root = day_svg(tmp_path, "auto/subscription")
    (rect,) = band_rects(root)
    (title,) = rect.iter(f"{NS}title")
    assert title.text == "pool empty: p10 13:49Z, p50 14:01:15Z, p90 14:21:39Z"


def test_a_forecast_whose_answers_are_unknown_shades_no_band(tmp_path: Path) -> None:
    """Two days on, the readings are stale: the answers are unknown, and no span stands
    for a band the forecast does not have."""
    root = day_svg(tmp_path, "auto/subscription", "--now", "2026-12-01T13:00:00Z")
    assert_inside_the_view_box(root)
    assert band_rects(root) == []
    assert not [g for g in root.iter(f"{NS}g") if g.attrib.get("id") == "bands"]
