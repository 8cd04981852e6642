"""`simulate`: one step is `plan --now`, transitions and flaps are read right, the SVG parses."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.analyses.simulate import parse_step, simulate, step_instants
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.errors import UsageError
from omniladder.inputs.catalogs import load_catalogs
from omniladder.models import Connection, LadderSettings, Reading, Settings, Window
from omniladder.rendering.timeline import timeline_svg, transition_text
from tests.conftest import EXAMPLES

runner = CliRunner()
DAY = str(EXAMPLES / "day" / "omniladder.toml")
FLEET = str(EXAMPLES / "omniladder.toml")
DAY_RANGE = ["--from", "2026-11-29T06:00:00Z", "--to", "2026-11-30T00:00:00Z"]


def _json(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("config", [FLEET, DAY])
@pytest.mark.parametrize("auto_id", ["auto/subscription", "auto/thrifty", "auto/coding:thrifty"])
@pytest.mark.parametrize("at", ["2026-11-29T10:30:00Z", "2026-11-29T12:00:00Z",
                                "2026-11-29T17:00:00Z"])
def test_a_single_step_is_plan_now(config: str, auto_id: str, at: str) -> None:
    """R14: simulate from T to T plans exactly what `plan --now T` plans."""
    series = _json("simulate", auto_id, "--config", config, "--from", at, "--to", at)
    plan = _json("plan", auto_id, "--config", config, "--now", at)
    (step,) = series["steps"]
    assert step["at"] == plan["now"]
    assert step["rungs"] == [{k: r[k] for k in ("rung", "state", "candidates", "connections")}
                             for r in plan["rungs"]]
    assert step["pool_size"] == len(plan["pool"])
    assert step["head_rung"] == (plan["pool"][0]["rung"] if plan["pool"] else None)
    eligible = list(dict.fromkeys(c for e in plan["pool"] for c in e["allowed_connection_ids"]))
    assert step["eligible_connection_ids"] == eligible
    assert series["transitions"] == []


def test_the_day_example_escalates_resets_reenters_and_suppresses_a_flap() -> None:
    document = _json("simulate", "auto/thrifty", "--config", DAY, *DAY_RANGE)
    assert len(document["steps"]) == 217
    got = [(t["at"][11:16], t["from"], t["to"], t["cause"]) for t in document["transitions"]]
    assert got == [
        ("10:30", "subscription", "cheap", "claude-max-work 5h window at 1%"),
        ("11:20", "cheap", "subscription",
         "claude-max-work 5h window at 7%, above the re-entry floor 5%"),
        ("14:05", "subscription", "cheap", "claude-max-work 5h window at 1%"),
        ("17:00", "cheap", "subscription", "claude-max-work 5h window reset"),
    ]
    flaps = document["flaps"]
    assert (flaps["with_reentry_floor"], flaps["single_threshold"], flaps["avoided"]) == (4, 6, 2)
    assert [t["at"][11:16] for t in flaps["suppressed"]] == ["10:50", "10:55"]


def test_terminal_view_lists_transitions_and_flaps() -> None:
    result = runner.invoke(app, ["simulate", "auto/thrifty", "--config", DAY, *DAY_RANGE])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "14:05Z subscription → cheap: claude-max-work 5h window at 1%" in text
    assert "17:00Z back to subscription: claude-max-work 5h window reset" in text
    assert "Flaps avoided by the re-entry floor (5%): 2" in text
    head = next(line for line in text.splitlines() if line.startswith("head "))
    assert "S" in head
    assert "C" in head


# --- flaps on a constructed history --------------------------------------------------------

T0 = datetime(2026, 11, 29, 10, tzinfo=UTC)


def _constructed(figures: list[float]) -> LoadedInputs:
    """One subscription plan read every 5 minutes, and one cheap key to escalate to. Each
    window resets just before the next reading, so a rise is a real regain (R6.4)."""
    connections = (
        Connection(id="plan", provider="claude", auth_type="oauth",
                   models=("claude-sonnet-4-5",)),
        Connection(id="key", provider="openai", auth_type="apikey", models=("gpt-5-mini",)),
    )
    readings = tuple(
        Reading(connection="plan", checked_at=T0 + timedelta(minutes=5 * i),
                windows=(Window(name="5h", remaining_percent=figure,
                                reset_at=T0 + timedelta(minutes=5 * i + 4)),))
        for i, figure in enumerate(figures))
    return LoadedInputs(settings=Settings(ladder=LadderSettings(max_reading_age_seconds=600)),
                        connections=connections, readings={"plan": readings}, quota=None,
                        spend=None, catalogs=load_catalogs((), ()), files={})


@pytest.mark.parametrize(("figures", "with_floor", "single", "avoided"), [
    # R7: 1% drops out; 3% and 4% are above the cutoff but not the floor; 1.5% and 2% stay
    # out either way; 6% brings it back. A single threshold switches at every crossing.
    ([50, 1, 3, 1.5, 4, 2, 6, 40], 2, 6, 4),
    # Never below the cutoff: no transition at all.
    ([50, 40, 30, 20, 10], 0, 0, 0),
    # A clean drop and a return above the floor: nothing to suppress.
    ([50, 1, 1, 8, 9], 2, 2, 0),
])
def test_flaps_avoided_on_a_constructed_history(figures: list[float], with_floor: int,
                                                single: int, avoided: int) -> None:
    inputs = _constructed(figures)
    end = T0 + timedelta(minutes=5 * (len(figures) - 1))
    series = simulate(inputs, parse_auto_id("auto/thrifty"), T0, end, timedelta(minutes=5))
    assert [p.head for p in series.points][:2] == ["subscription",
                                                   "cheap" if figures[1] <= 2 else "subscription"]
    flaps = series.flaps
    assert (flaps.with_floor, flaps.single_threshold, flaps.avoided) == (
        with_floor, single, avoided)
    assert len(flaps.suppressed) == avoided


# --- SVG -----------------------------------------------------------------------------------


def test_svg_is_well_formed_and_carries_the_transitions(tmp_path: Path) -> None:
    target = tmp_path / "day.svg"
    result = runner.invoke(app, ["simulate", "auto/thrifty", "--config", DAY, *DAY_RANGE,
                                 "--svg", str(target)])
    assert result.exit_code == 0, result.output
    root = ET.parse(target).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = ["".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text")]
    document = _json("simulate", "auto/thrifty", "--config", DAY, *DAY_RANGE)
    assert len(document["transitions"]) == 4
    for number, transition in enumerate(document["transitions"], start=1):
        assert any(text.startswith(f"{number}. {transition['at'][11:16]}Z")
                   and transition["cause"] in text for text in texts), transition
    assert any("suppressed: 10:50Z" in text for text in texts)


def test_committed_day_svg_matches_what_the_command_makes() -> None:
    """The README's picture is the output of the command it shows."""
    from omniladder.commands.common import InputOptions

    inputs = InputOptions(config=Path(DAY)).load()
    series = simulate(inputs, parse_auto_id("auto/thrifty"),
                      datetime(2026, 11, 29, 6, tzinfo=UTC), datetime(2026, 11, 30, tzinfo=UTC),
                      timedelta(minutes=5))
    committed = (EXAMPLES / "day" / "timeline.svg").read_text(encoding="utf-8")
    assert committed == timeline_svg(series)
    assert all(transition_text(t, series) in committed for t in series.transitions)


# --- bad inputs ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [
    ("30s", 30), ("5m", 300), ("1h", 3600), ("1h30m", 5400), ("1d", 86400)])
def test_parse_step(text: str, seconds: int) -> None:
    assert parse_step(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["", "5", "m", "0m", "5x", "-5m", "5 m", "1.5h", "5m1"])
def test_parse_step_rejects(text: str) -> None:
    with pytest.raises(UsageError):
        parse_step(text)


def test_absurd_step_counts_are_usage_errors() -> None:
    start = datetime(2026, 11, 29, tzinfo=UTC)
    assert len(step_instants(start, start + timedelta(seconds=99_999), timedelta(seconds=1))) \
        == 100_000
    with pytest.raises(UsageError, match="at most 100,000"):
        step_instants(start, start + timedelta(seconds=100_000), timedelta(seconds=1))


@pytest.mark.parametrize(("args", "message"), [
    (["--step", "0m"], "longer than zero"),
    (["--step", "fast"], "not a step"),
    (["--step", "1s", "--to", "2026-12-31T00:00:00Z"], "at most 100,000"),
    (["--to", "2026-11-28T00:00:00Z"], "is after --to 2026-11-28T00:00:00Z"),
    (["--from", "2026-11-29T06:00:00"], "has no offset"),
    (["--from", "yesterday"], "not an RFC 3339 timestamp"),
])
def test_bad_options_are_exit_2(args: list[str], message: str) -> None:
    base = ["simulate", "auto/thrifty", "--config", DAY, *DAY_RANGE]
    result = runner.invoke(app, [*base, *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["simulate", "auto/coding", "--config", DAY], "invalid auto id"),
    (["simulate", "auto/thrifty", "--config", str(EXAMPLES / "nope.toml")], "file not found"),
])
def test_bad_inputs_of_the_core_are_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, [*args, *DAY_RANGE])
    assert result.exit_code == 2, result.output
    assert message in result.output
