"""`forecast`: pace per window, projected readings stepped by the one engine (issue: forecast).

The forecast is a simulation of the recorded readings plus projected ones; these tests hold
it to ``simulate`` over the same readings, to a reading at every step, and to the guardrails.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from omniladder import timefmt
from omniladder.analyses.forecast.pace import (
    MIN_CYCLE_READINGS,
    MIN_ELAPSED_FRACTION,
    SPEND_BASIS_HOURS,
    WindowLength,
    catalog_lengths,
    no_lengths,
)
from omniladder.analyses.forecast.projection import with_projection
from omniladder.analyses.forecast.walk import (
    BudgetOutlook,
    Forecast,
    PaidEstimate,
    budget_reached_at,
    forecast,
)
from omniladder.analyses.simulate import _walk as whole_fleet_walk
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.inputs.catalogs import load_catalogs
from omniladder.inputs.scopes import load_window_scopes
from omniladder.models import (
    BudgetSettings,
    Connection,
    LadderSettings,
    Reading,
    ReadingStatus,
    Rung,
    RungBudgets,
    Settings,
    SpendEvent,
    Window,
)
from omniladder.rendering.forecast_view import budget_lines
from tests.conftest import EXAMPLES
from tests.depth import deep
from tests.strategies import ONE_PLAN, input_sets
from tests.test_simulate_stepping import CATALOGS, FLEETS, T0

runner = CliRunner()
DAY = str(EXAMPLES / "day" / "omniladder.toml")
STEP = timedelta(minutes=5)


def five_hours(provider: str, window: Window) -> tuple[float | None, str]:
    """Every window is five hours long (what a catalog duration would say)."""
    return 18_000.0, "test"


def run(inputs: LoadedInputs, auto_id: str, now: datetime, hours: float = 6,
        step: timedelta = STEP, lengths: WindowLength = five_hours,
        dense: bool = False) -> Forecast:
    return forecast(inputs, parse_auto_id(auto_id), now, timedelta(hours=hours), step,
                    lengths=lengths, dense=dense)


# --- the day example ---------------------------------------------------------------------


def day_forecast(auto_id: str = "auto/thrifty") -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, ["forecast", auto_id, "--config", DAY, "--now",
                                 "2026-11-29T13:00:00Z", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_the_day_example_escalates_to_cheap_and_comes_back_at_the_reset() -> None:
    """R11 over the projection: 5h window at 51.5% burning 48.5%/h reaches the cutoff at
    14:01:15 (the instant itself, whatever the step), when cheap heads the pool; the 17:00
    reset brings it back."""
    document = day_forecast()
    (escalation,) = document["escalations"]
    assert escalation["at"] == "2026-11-29T14:01:15Z"
    assert (escalation["from"], escalation["to"]) == ("subscription", "cheap")
    assert escalation["back_at"] == "2026-11-29T17:00:00Z"
    assert escalation["wait_seconds"] == 2 * 3600 + 58 * 60 + 45
    assert escalation["text"] == "pay from 14:01:15Z until 17:00Z, or wait 2h58m"
    assert document["first_paid_at"] == "2026-11-29T14:01:15Z"
    assert document["pool_empty_at"] is None
    pace = next(p for p in document["pace"] if p["window"] == "5h")
    assert pace["burn_percent_per_hour"] == 48.5
    assert pace["cutoff_at"] == "2026-11-29T14:01:15Z"
    assert pace["elapsed_fraction"] == 0.2
    assert pace["lasts_to_reset"] is False
    assert document["hours_by_head"]["cheap"] == pytest.approx(2 + 58.75 / 60, abs=1e-3)
    cheap = next(p for p in document["paid_estimate"] if p["rung"] == "cheap")
    assert cheap["usd"] is not None
    assert "before now" in cheap["basis"]


def test_the_day_example_empties_auto_subscription() -> None:
    """R10 fails closed: the exhausted Pro plan is not projected, so the pool is empty."""
    document = day_forecast("auto/subscription")
    assert document["pool_empty_at"] == "2026-11-29T14:01:15Z"
    assert document["first_paid_at"] is None
    personal = next(c for c in document["connections"]
                    if c["connection_id"] == "claude-pro-personal")
    assert personal["projected"] is False
    assert "exhausted" in personal["note"]


def test_the_table_fits_80_columns_and_names_the_wait() -> None:
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now",
                                 "2026-11-29T13:00:00Z"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "  pay from 14:01:15Z until 17:00Z, or wait 2h58m" in lines
    assert any(line.startswith("  claude-max-work    5h        51.5%") for line in lines)


def test_markdown_lists_the_escalation() -> None:
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now",
                                 "2026-11-29T13:00:00Z", "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert "- pay from 14:01:15Z until 17:00Z, or wait 2h58m" in result.stdout


@pytest.mark.parametrize(("option", "value"), [("--horizon", "0m"), ("--step", "soon"),
                                               ("--horizon", "9999999d")])
def test_bad_spans_are_usage_errors_naming_the_option(option: str, value: str) -> None:
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, option, value])
    assert result.exit_code == 2, result.output
    assert option in result.stderr
    assert "Traceback" not in result.output


def test_the_json_document_keeps_to_its_schema() -> None:
    """Every key the document writes is documented, and every required key is written."""
    from tests.conftest import ROOT

    schema = json.loads((ROOT / "schemas" / "forecast.schema.json").read_text())
    for document in (day_forecast(), day_forecast("auto/subscription")):
        assert set(document) == set(schema["required"])
        for key in ("pace", "transitions", "escalations", "unprojected_windows"):
            item = schema["properties"][key]["items"]
            for row in document[key]:
                assert set(row) == set(item["required"]), key


# --- window lengths ------------------------------------------------------------------------


def test_catalog_durations_give_the_window_lengths() -> None:
    """Item 1: window_seconds first, else the catalog's duration (Copilot: the month)."""
    lengths = catalog_lengths(load_window_scopes())
    assert lengths("claude", Window(name="five_hour", remaining_percent=50))[0] == 18_000
    assert lengths("codex", Window(name="weekly", remaining_percent=50))[0] == 7 * 86_400
    assert lengths("codex", Window(name="weekly", remaining_percent=50,
                                   window_seconds=60))[0] == 60
    reset = datetime(2026, 12, 1, tzinfo=UTC)
    copilot = Window(name="premium_interactions", remaining_percent=50, reset_at=reset)
    assert lengths("github", copilot)[0] == 30 * 86_400
    assert lengths("acme", Window(name="5h", remaining_percent=50)) == (None, "unknown")


# --- generated histories -------------------------------------------------------------------


def recorded_plus_projected(inputs: LoadedInputs, result: Forecast) -> LoadedInputs:
    instants = [p.at for p in result.timeline]
    projected, _ = with_projection(inputs, result.outlooks, instants)
    return projected


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(FLEETS, st.sampled_from(["auto/thrifty", "auto/subscription"]),
       st.integers(-120, 60), st.sampled_from([5, 15]))
def test_simulating_the_projected_readings_as_recorded_gives_the_same_transitions(
        inputs: LoadedInputs, auto_id: str, start: int, step: int) -> None:
    """docs/forecast.md#instants: the projection written as recorded readings and planned
    whole at every instant of the forecast's timeline (simulate's re-plan, the oracle of
    the stepping engine) gives the forecast's transitions at the same instants, and its
    heads."""
    now = T0 + timedelta(minutes=start)
    result = run(inputs, auto_id, now, hours=4, step=timedelta(minutes=step))
    instants = [p.at for p in result.timeline]
    points, transitions = whole_fleet_walk(recorded_plus_projected(inputs, result),
                                           parse_auto_id(auto_id), instants)
    assert transitions == result.transitions
    assert [p.head for p in points] == [p.head for p in result.timeline]


def answers(result: Forecast) -> tuple[object, ...]:
    return (result.first_paid_at, result.pool_empty_at,
            [(e.at, e.previous, e.head, e.cause, e.back_at, e.back_cause)
             for e in result.escalations],
            [(t.at, t.previous, t.head, t.cause) for t in result.transitions],
            {rung: round(hours, 9) for rung, hours in result.hours_by_head.items()})


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(FLEETS, st.sampled_from(["auto/thrifty", "auto/subscription"]),
       st.integers(-120, 60))
def test_the_answers_are_the_same_whatever_the_step(inputs: LoadedInputs, auto_id: str,
                                                    start: int) -> None:
    """docs/forecast.md#instants: first_paid_at, pool_empty_at, every escalation and
    comeback (and the hours per head) are the same at 1m, 5m, 1h and 4h steps, and each
    instant is one the plan was decided at."""
    now = T0 + timedelta(minutes=start)
    results = [run(inputs, auto_id, now, hours=4, step=timedelta(minutes=minutes))
               for minutes in (1, 5, 60, 240)]
    first = answers(results[0])
    for result in results[1:]:
        assert answers(result) == first
    decided = {p.at for p in results[0].timeline}
    for at in (results[0].first_paid_at, results[0].pool_empty_at):
        assert at is None or at in decided
    assert sum(results[-1].hours_by_head.values()) == pytest.approx(4.0)


@pytest.mark.parametrize("step", ["5m", "1h", "3h", "4h"])
def test_the_day_example_pays_from_the_cutoff_instant_at_every_step(step: str) -> None:
    """At 13:00 the Max plan's 5h window reaches the cutoff at 14:01:15: the forecast
    used to say 14:05 at 5m steps, 15:00 at 1h, 16:00 at 3h and "no paid rung" at 4h."""
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now",
                                 "2026-11-29T13:00:00Z", "--step", step, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    pace = next(p for p in document["pace"] if p["window"] == "5h")
    assert document["first_paid_at"] == pace["cutoff_at"] == "2026-11-29T14:01:15Z"
    (escalation,) = document["escalations"]
    assert escalation["back_at"] == "2026-11-29T17:00:00Z"


@pytest.mark.parametrize(("horizon", "step", "listed"), [
    ("5m", "7m", ["13:00", "13:05"]), ("1h", "25m", ["13:00", "13:25", "13:50", "14:00"])])
def test_the_hours_add_up_to_the_horizon_when_the_step_does_not_divide_it(
        horizon: str, step: str, listed: list[str]) -> None:
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now",
                                 "2026-11-29T13:00:00Z", "--horizon", horizon, "--step", step,
                                 "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    seconds = timefmt.from_rfc3339(document["end"]) - timefmt.from_rfc3339(document["now"])
    assert sum(document["hours_by_head"].values()) == pytest.approx(
        seconds.total_seconds() / 3600, abs=1e-4)
    assert document["end"][11:16] == listed[-1]
    table = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now",
                                "2026-11-29T13:00:00Z", "--horizon", horizon, "--step", step])
    (line,) = [ln for ln in table.stdout.splitlines() if ln.startswith("Hours heading")]
    assert line.startswith("Hours heading the pool: subscription ")


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(FLEETS, st.sampled_from(["auto/thrifty", "auto/subscription"]),
       st.integers(-120, 60), st.sampled_from([1, 5, 15]))
def test_sparse_projected_readings_decide_as_a_reading_at_every_step(
        inputs: LoadedInputs, auto_id: str, start: int, step: int) -> None:
    """The engine told that projected connections keep reporting (no staleness, a reading
    only at resets, cutoffs, cooldown ends and budget steps) walks exactly as the engine fed
    a projected reading at every step: every point (head, pool, rung states, seated and
    unverified connections) and every transition with its causes. Generated fleets cross a
    budget period and carry cooldowns, spend and R2a reports."""
    now = T0 + timedelta(minutes=start)
    every = timedelta(minutes=step)
    sparse = run(inputs, auto_id, now, hours=4, step=every)
    dense = run(inputs, auto_id, now, hours=4, step=every, dense=True)
    assert sparse.transitions == dense.transitions
    assert sparse.points == dense.points
    assert sparse.projected_readings <= dense.projected_readings


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(FLEETS, st.integers(-120, 60))
def test_guardrails_hold_on_generated_histories(inputs: LoadedInputs, start: int) -> None:
    """Item 2: a burn rate only from two readings of the cycle, 5% of the window elapsed and
    a fresh reading; never an exhaustion after the window's own reset."""
    now = T0 + timedelta(minutes=start)
    result = run(inputs, "auto/thrifty", now, hours=1)
    max_age = inputs.settings.ladder.max_reading_age_seconds
    for item in result.outlooks:
        for pace in item.paces:
            if pace.burn_percent_per_hour is None:
                assert pace.note or pace.remaining_percent is None
                continue
            assert item.projected
            assert (now - pace.checked_at).total_seconds() <= max_age
            assert pace.readings >= MIN_CYCLE_READINGS
            if pace.elapsed_fraction is not None:  # else: the note says it was skipped
                assert pace.elapsed_fraction >= MIN_ELAPSED_FRACTION
            else:
                assert "without the early-cycle guardrail" in pace.note
            if pace.cutoff_at is not None:
                assert pace.reset_at is not None
                assert pace.cutoff_at < pace.reset_at
                assert pace.lasts_to_reset is False
        if not item.projected:
            assert all(p.burn_percent_per_hour is None for p in item.paces)


# --- zero burn and resets ------------------------------------------------------------------


STEADY = input_sets(anchor=T0, catalog=ONE_PLAN, connections=(1, 4),
                    resets_between=(20, 400), spend=False, cooldowns=False, observed=False,
                    settings={"ladder": {"max_reading_age_seconds": 180}}, steady=True)
"""Subscription connections, each read twice with the same figures: zero burn, and no
state_as_of (a state observed later changes the plan before any reset)."""


@deep(100, quick=20, deadline=None)
def test_zero_burn_holds_the_current_plan_until_each_reset(examples: settings) -> None:
    @examples
    @given(STEADY, st.sampled_from(["auto/thrifty", "auto/subscription"]))
    def holds(inputs: LoadedInputs,
             auto_id: str) -> None:
        result = run(inputs, auto_id, T0, hours=8)
        first_reset = min(w.reset_at for h in inputs.readings.values()
                          for w in h[-1].all_windows() if w.reset_at is not None)
        plan = make_plan(inputs, parse_auto_id(auto_id), T0, "flag")
        head = plan.pool[0].rung if plan.pool else None
        for point in result.points:
            if point.at >= first_reset:
                break
            assert (point.head, point.pool_size) == (head, len(plan.pool))
        assert all(p.burn_percent_per_hour == 0 for o in result.outlooks for p in o.paces
                   if p.note == "")

    holds()


@deep(100, quick=20, deadline=None)
def test_a_reset_always_ends_a_projected_exhaustion(examples: settings) -> None:
    """Every window is back above the cutoff at the first step at or after its reset."""
    @examples
    @given(STEADY)
    def holds(inputs: LoadedInputs) -> None:
        result = run(inputs, "auto/subscription", T0, hours=8)
        projected = recorded_plus_projected(inputs, result)
        for cid, history in inputs.readings.items():
            for window in history[-1].windows or ():
                assert window.reset_at is not None
                after = next(r for r in projected.readings[cid] if r.checked_at >= window.reset_at)
                (shown,) = [w for w in after.windows or () if w.name == window.name]
                assert shown.figure == 100.0
                assert shown.reset_at is not None
                assert shown.reset_at > after.checked_at

    holds()


def forecast_cli(tmp_path: Path, readings: list[dict], auto_id: str,  # type: ignore[type-arg]
                 now: str) -> dict:  # type: ignore[type-arg]
    """``omniladder forecast AUTO_ID --json`` over one Claude plan login and its readings."""
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "c"\nprovider = "claude"\nauth_type = "oauth"\n'
        'models = ["claude-sonnet-4-5"]\n', encoding="utf-8")
    (tmp_path / "quota.json").write_text(json.dumps({"readings": readings}), encoding="utf-8")
    config = tmp_path / "omniladder.toml"
    config.write_text('[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n',
                      encoding="utf-8")
    result = runner.invoke(app, ["forecast", auto_id, "--config", str(config), "--now", now,
                                 "--horizon", "2h", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_a_held_reset_after_now_reads_a_projected_reading_not_a_stale_one(
        tmp_path: Path) -> None:
    """R6.4 and R6.6 over the projection: the latest reading shows 0% with no reset, so the
    plan stays out for the whole horizon. An earlier reading's reset (held, R6.4) is a step
    at which the engine re-decides the connection; it must read a projected reading there,
    not the recorded one turned stale (which auto/thrifty would admit, unverified)."""
    document = forecast_cli(tmp_path, [
        {"connection": "c", "checked_at": "2026-11-30T21:59:00Z", "remaining_percent": 0,
         "reset_at": "2026-11-30T22:04:00Z"},
        {"connection": "c", "checked_at": "2026-11-30T22:00:00Z", "remaining_percent": 0},
    ], "auto/thrifty", "2026-11-30T22:00:00Z")
    assert document["pool_empty_at"] == "2026-11-30T22:00:00Z"
    assert document["transitions"] == []


def test_a_reset_between_the_reading_and_now_is_projected_from_now(tmp_path: Path) -> None:
    """The projection carries the reading to now: a window that reset between the reading
    and now starts its new cycle at 100% at now, not at the window's next reset five hours
    on (docs/forecast.md: the projection starts at now)."""
    document = forecast_cli(tmp_path, [
        {"connection": "c", "checked_at": "2026-11-30T21:59:00Z", "windows": [
            {"name": "5h", "remaining_percent": 50, "reset_at": "2026-11-30T22:00:00Z",
             "window_seconds": 18000}]},
    ], "auto/subscription", "2026-11-30T22:00:00Z")
    assert document["transitions"] == []
    # the new cycle's burn is unknown: one reading of it (none, at now)
    assert document["answers_known"] is False


def test_a_stale_reading_gets_no_projection_and_stays_unknown() -> None:
    """Unknown remaining is never headroom: a stale reading is not refreshed by the forecast."""
    reading = Reading(connection="c", checked_at=T0 - timedelta(minutes=10),
                      windows=(Window(name="5h", remaining_percent=80.0,
                                      reset_at=T0 + timedelta(hours=3)),))
    inputs = LoadedInputs(
        settings=Settings(ladder=LadderSettings(max_reading_age_seconds=300)),
        connections=(Connection(id="c", provider="claude", auth_type="oauth",
                                models=("claude-sonnet-4-5",)),),
        readings={"c": (reading,)}, quota=None, spend=None, catalogs=CATALOGS, files={})
    result = run(inputs, "auto/subscription", T0, hours=2)
    (item,) = result.outlooks
    assert not item.projected
    assert "stale" in item.note
    assert result.projected_readings == 0
    # docs/forecast.md#unknown: the engine reads the stale reading (the pool is empty), and
    # the answers are unknown from now, never "the empty pool throughout"
    assert result.projected_pool_empty_at == T0
    assert not result.answers_known
    assert result.pool_empty_at is None
    ((cid, window, reason),) = [(u.connection_id, u.window, u.reason)
                                for u in result.unprojected]
    assert (cid, window) == ("c", "5h")
    assert "stale" in reason


@pytest.mark.parametrize("status", ["ok", None])
def test_a_reading_with_only_a_status_is_not_projected(status: ReadingStatus | None) -> None:
    """§2.2: a reading may carry a status and no figure; the forecast has nothing to burn
    from it and says so instead of failing with a traceback."""
    reading = Reading(connection="c", checked_at=T0, status=status)
    inputs = LoadedInputs(
        settings=Settings(), connections=(Connection(id="c", provider="claude",
                                                     auth_type="oauth",
                                                     models=("claude-sonnet-4-5",)),),
        readings={"c": (reading,)}, quota=None, spend=None, catalogs=CATALOGS, files={})
    result = run(inputs, "auto/thrifty", T0, hours=1)
    (item,) = result.outlooks
    assert not item.projected
    assert ("nothing to project" in item.note) == (status == "ok")  # else: no reading
    assert result.projected_readings == 0


@pytest.mark.parametrize(("elapsed_minutes", "forecasts"), [(14, False), (15, True)])
def test_no_forecast_before_five_percent_of_the_window(elapsed_minutes: int,
                                                       forecasts: bool) -> None:
    """Boundary of item 2: 15 minutes of a 5h window is exactly 5%."""
    reset = T0 + timedelta(hours=5) - timedelta(minutes=elapsed_minutes)
    history = tuple(Reading(connection="c", checked_at=T0 - timedelta(minutes=m),
                            windows=(Window(name="5h", remaining_percent=90.0 + m,
                                            reset_at=reset),)) for m in (5, 0))
    inputs = LoadedInputs(
        settings=Settings(), connections=(Connection(id="c", provider="claude",
                                                     auth_type="oauth"),),
        readings={"c": history}, quota=None, spend=None, catalogs=CATALOGS, files={})
    (item,) = run(inputs, "auto/thrifty", T0, hours=1).outlooks
    (pace,) = item.paces
    assert (pace.burn_percent_per_hour is not None) is forecasts
    if not forecasts:
        assert "no burn rate before 5%" in pace.note


def test_one_reading_in_the_cycle_gives_no_forecast() -> None:
    reset = T0 + timedelta(hours=2)
    history = (Reading(connection="c", checked_at=T0 - timedelta(minutes=5),
                       windows=(Window(name="5h", remaining_percent=50.0,
                                       reset_at=reset - timedelta(hours=5)),)),
               Reading(connection="c", checked_at=T0,
                       windows=(Window(name="5h", remaining_percent=90.0, reset_at=reset),)))
    inputs = LoadedInputs(
        settings=Settings(), connections=(Connection(id="c", provider="claude",
                                                     auth_type="oauth"),),
        readings={"c": history}, quota=None, spend=None, catalogs=CATALOGS, files={})
    (item,) = run(inputs, "auto/thrifty", T0 + timedelta(seconds=1), hours=1).outlooks
    (pace,) = item.paces
    assert pace.readings == 1
    assert pace.burn_percent_per_hour is None
    assert "1 reading in this cycle" in pace.note


def test_without_a_window_length_two_readings_still_give_a_burn_rate() -> None:
    """docs/forecast.md#unknown: a burn rate needs two readings of one cycle and nothing
    else; the window's length only gates the early-cycle guardrail, and the note says the
    guardrail was skipped. 60% then 50% ten minutes later burns 60%/h: the 2% cutoff falls
    48 minutes after the latest reading, before the reset an hour on."""
    history = tuple(Reading(connection="c", checked_at=T0 - timedelta(minutes=m),
                            windows=(Window(name="5h", remaining_percent=50.0 + m,
                                            reset_at=T0 + timedelta(hours=1)),))
                    for m in (10, 0))
    inputs = LoadedInputs(
        settings=Settings(), connections=(Connection(id="c", provider="claude",
                                                     auth_type="oauth"),),
        readings={"c": history}, quota=None, spend=None, catalogs=CATALOGS, files={})
    result = run(inputs, "auto/thrifty", T0, hours=1, lengths=no_lengths)
    (pace,) = result.outlooks[0].paces
    assert pace.burn_percent_per_hour == pytest.approx(60.0)
    assert "window length unknown" in pace.note
    assert "without the early-cycle guardrail" in pace.note
    assert pace.cutoff_at == T0 + timedelta(minutes=48)
    assert result.answers_known


def test_a_budget_period_start_re_decides_a_projected_connection_on_its_own_reading(
        tmp_path: Path) -> None:
    """R8 with the engine's kept-fresh connections: a metered connection with a free model
    (a quota rung) and a cheap one is re-decided whole when the cheap budget's period
    starts; the forecast writes it a reading at that step, so its free pair reads a fresh
    one (verified, as with a reading at every step) rather than a stale one (unverified)."""
    overlay = tmp_path / "models.toml"
    overlay.write_text("".join(
        f'[[models]]\nprovider = "acme"\nmodel = "{model}"\ninput_usd_per_mtok = {price}\n'
        f'output_usd_per_mtok = {price}\ncategories = ["chat"]\nas_of = 2026-11-01\n'
        'source = "test"\n\n' for model, price in (("acme-free", 0.0), ("acme-1", 0.1))))
    reset = T0 + timedelta(hours=3)
    history = tuple(
        Reading(connection="m", checked_at=T0 - timedelta(minutes=minutes),
                windows=(Window(name="5h", remaining_percent=figure, reset_at=reset),))
        for minutes, figure in ((30, 80.0), (0, 79.0)))
    inputs = LoadedInputs(
        settings=Settings(ladder=LadderSettings(max_reading_age_seconds=600),
                          budgets=BudgetSettings(period="day",
                                                 rung_budget_usd=RungBudgets(cheap=1.0))),
        connections=(Connection(id="m", provider="acme", auth_type="apikey",
                                models=("acme-free", "acme-1")),),
        readings={"m": history}, quota=None,
        spend=(SpendEvent(at=T0 - timedelta(hours=1), cost_usd=2.0, rung="cheap"),),
        catalogs=load_catalogs((), (overlay,)), files={})
    sparse = run(inputs, "auto/thrifty", T0, hours=4)
    dense = run(inputs, "auto/thrifty", T0, hours=4, dense=True)
    assert sparse.points == dense.points
    midnight = next(p for p in sparse.points if p.at == T0 + timedelta(hours=2))
    assert midnight.unverified == ()
    assert midnight.entries_on("cheap") == 1
    assert sparse.projected_readings < dense.projected_readings


def test_the_paid_estimate_adds_spend_as_r8_does(tmp_path: Path) -> None:
    """The estimate's basis adds the ledger's dollars as R8 adds a budget's spend (as the
    decimals written): 0.1 and 0.2 make 0.3, an hour-rate of 0.3/24, where float addition
    gives 0.30000000000000004 and a rate one digit off in the JSON."""
    overlay = tmp_path / "models.toml"
    overlay.write_text(
        '[[models]]\nprovider = "acme"\nmodel = "acme-1"\ninput_usd_per_mtok = 0.1\n'
        'output_usd_per_mtok = 0.1\ncategories = ["chat"]\nas_of = 2026-11-01\n'
        'source = "test"\n')
    inputs = LoadedInputs(
        settings=Settings(), connections=(Connection(id="m", provider="acme",
                                                     auth_type="apikey", models=("acme-1",)),),
        readings={}, quota=None,
        spend=tuple(SpendEvent(at=T0 - timedelta(hours=hours), cost_usd=cost, rung="cheap")
                    for hours, cost in ((2, 0.1), (1, 0.2))),
        catalogs=load_catalogs((), (overlay,)), files={})
    assert (0.1 + 0.2) / SPEND_BASIS_HOURS != 0.3 / SPEND_BASIS_HOURS
    estimates = run(inputs, "auto/thrifty", T0, hours=2).paid
    assert estimates is not None
    cheap = next(e for e in estimates if e.rung == "cheap")
    assert cheap.usd_per_hour == 0.3 / SPEND_BASIS_HOURS
    assert cheap.usd == 0.3 / SPEND_BASIS_HOURS * cheap.hours


def test_a_cutoff_crossing_on_a_step_is_written_where_the_projection_shows_it() -> None:
    """docs/forecast.md, "Where the contract was silent": a projected reading is written at
    the step where a window reaches the cutoff. 30% at 21:47 and 26% at 22:00 burn
    4%/13min, so the 2% cutoff falls on the 23:18 step; the rate is a float, so the
    projection there reads a hair above 2% and the window is first at or below the cutoff
    a step later. That step must get a reading too, or the forecast keeps the connection
    in play (reading the one at 23:18) until the reset, as if it never ran out."""
    reset = T0 + timedelta(hours=4)
    history = tuple(Reading(connection="c", checked_at=T0 - timedelta(minutes=minutes),
                            windows=(Window(name="5h", remaining_percent=figure,
                                            reset_at=reset, window_seconds=18_000),))
                    for minutes, figure in ((13, 30.0), (0, 26.0)))
    inputs = LoadedInputs(
        settings=Settings(), connections=(Connection(id="c", provider="claude",
                                                     auth_type="oauth",
                                                     models=("claude-sonnet-4-5",)),),
        readings={"c": history}, quota=None, spend=None, catalogs=CATALOGS, files={})
    minute = timedelta(minutes=1)
    sparse = run(inputs, "auto/subscription", T0, step=minute)
    dense = run(inputs, "auto/subscription", T0, step=minute, dense=True)
    (pace,) = sparse.outlooks[0].paces
    assert pace.cutoff_at is not None
    assert T0 + timedelta(minutes=78) <= pace.cutoff_at <= T0 + timedelta(minutes=78, seconds=1)
    assert sparse.pool_empty_at == pace.cutoff_at
    assert sparse.points == dense.points
    assert sparse.transitions == dense.transitions


@pytest.mark.parametrize(("first", "last", "reset", "now"), [
    # readings written with an offset: 17:30+05:30 is 12:00Z
    ("2026-11-30T16:30:00+05:30", "2026-11-30T17:30:00+05:30", "2026-11-30T20:30:00+05:30",
     "2026-11-30T12:00:00Z"),
    # the latest reading was taken on the UTC day before now
    ("2026-11-30T22:58:00Z", "2026-11-30T23:58:00Z", "2026-12-01T03:00:00Z",
     "2026-12-01T00:02:00Z"),
])
def test_the_table_words_the_cutoff_in_utc_on_nows_day(tmp_path: Path, first: str,
                                                        last: str, reset: str,
                                                        now: str) -> None:
    """docs/forecast.md: the pace shows "the instant the window reaches the exit cutoff".
    80% then 60% an hour later burns 20%/h: the 2% cutoff is 2h54m after the latest
    reading. The table's column words it as every instant is worded, in UTC against now."""
    readings = [{"connection": "c", "checked_at": at, "windows": [
        {"name": "5h", "remaining_percent": figure, "reset_at": reset,
         "window_seconds": 18000}]} for at, figure in ((first, 80), (last, 60))]
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "c"\nprovider = "claude"\nauth_type = "oauth"\n'
        'models = ["claude-sonnet-4-5"]\n', encoding="utf-8")
    (tmp_path / "quota.json").write_text(json.dumps({"readings": readings}), encoding="utf-8")
    config = tmp_path / "omniladder.toml"
    config.write_text('[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n'
                      '[ladder]\nmax_reading_age_seconds = 600\n', encoding="utf-8")
    result = runner.invoke(app, ["forecast", "auto/subscription", "--config", str(config),
                                 "--now", now, "--horizon", "1h"])
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("  c  ")]
    cutoff = {"2026-11-30": "14:54Z", "2026-12-01": "02:52Z"}[now[:10]]
    assert row.endswith(f"20.0%/h {cutoff:>6}"), row


def test_an_empty_pool_past_the_horizon_is_not_worded_as_paying(tmp_path: Path) -> None:
    """docs/forecast.md: each escalation is printed with the reset that ends it. Under
    auto/subscription the window running out empties the pool (R10): no paid rung heads
    it, so the escalation is worded as the empty pool it is, as it is when the reset
    falls inside the horizon ("empty from … until …"), never as paying."""
    document = forecast_cli(tmp_path, [
        {"connection": "c", "checked_at": at, "windows": [
            {"name": "5h", "remaining_percent": figure, "reset_at": "2026-11-30T16:30:00Z",
             "window_seconds": 18000}]}
        for at, figure in (("2026-11-30T11:00:00Z", 40), ("2026-11-30T12:00:00Z", 20))],
        "auto/subscription", "2026-11-30T12:00:00Z")
    assert document["first_paid_at"] is None
    (escalation,) = document["escalations"]
    assert (escalation["at"], escalation["to"], escalation["back_at"]) == (
        "2026-11-30T12:54:00Z", None, None)
    assert escalation["text"] == "empty from 12:54Z past the horizon"


def test_a_horizon_past_the_calendars_end_is_a_usage_error_naming_it() -> None:
    """docs/contract.md#edges: a number beyond the clock is exit 2 naming its option, never
    a traceback. 24 hours from 9999-12-31T23:00Z lies past year 9999."""
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now",
                                 "9999-12-31T23:00:00Z"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    (line,) = result.stderr.splitlines()
    assert line.startswith("omniladder: error: --horizon: "), line


def test_a_now_within_a_day_of_the_calendars_start_still_estimates_the_spend() -> None:
    """docs/forecast.md: the paid estimate reads the spend in the 24 hours before now; at
    0001-01-01T00:00Z those hours lie before the calendar, so no event is in them (a
    forecast, not an OverflowError traceback)."""
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now",
                                 "0001-01-01T00:00:00Z", "--horizon", "1h", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [e["usd"] for e in document["paid_estimate"]] == [None, None]


def test_a_window_burning_a_sliver_an_hour_lasts_to_its_reset(tmp_path: Path) -> None:
    """docs/forecast.md: the pace gives the instant the window reaches the cutoff at its
    burn rate, and whether it lasts to its reset. A source that words its percentages
    finely (99.9999999% then 99.9999998% an hour later) burns 1e-7%/h: the cutoff lies
    some hundred million years ahead, long after the reset, so the window lasts (it is not
    an OverflowError from placing that instant on the calendar)."""
    document = forecast_cli(tmp_path, [
        {"connection": "c", "checked_at": at, "windows": [
            {"name": "5h", "remaining_percent": figure, "reset_at": "2026-11-30T15:00:00Z",
             "window_seconds": 18000}]}
        for at, figure in (("2026-11-30T11:00:00Z", 99.9999999),
                           ("2026-11-30T12:00:00Z", 99.9999998))],
        "auto/subscription", "2026-11-30T12:00:00Z")
    (pace,) = document["pace"]
    assert pace["burn_percent_per_hour"] == 0.0  # 1e-7, rounded to 3 places
    assert (pace["cutoff_at"], pace["lasts_to_reset"]) == (None, True)
    assert document["transitions"] == []


# --- budgets the estimate reaches (docs/forecast.md, "Where the contract was silent") ------


def day_with_budget(tmp_path: Path, spend: list[dict] | None,  # type: ignore[type-arg]
                    budgets: str, *args: str) -> Result:
    """The day example at 13:00 with its own spend ledger and budgets."""
    day = EXAMPLES / "day"
    lines = ['[inputs]', f'connections = "{day / "connections.toml"}"',
             f'quota = "{day / "quota.json"}"']
    if spend is not None:
        (tmp_path / "spend.json").write_text(json.dumps({"events": spend}), encoding="utf-8")
        lines.append('spend = "spend.json"')
    lines += ['[ladder]', 'exit_cutoff_percent = 2', 'reentry_min_remaining_percent = 5',
              'max_reading_age_seconds = 600', 'clamp_cooldown_to_reset = true',
              '[budgets]', budgets,
              '[catalogs]', f'billing = ["{EXAMPLES / "billing-overlay.toml"}"]']
    config = tmp_path / "omniladder.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", str(config),
                                 "--now", "2026-11-29T13:00:00Z", *args])
    assert result.exit_code == 0, result.output
    return result


TWELVE_TODAY = [{"at": "2026-11-29T10:00:00Z", "rung": "cheap", "cost_usd": 12.0}]
"""$12 of cheap spend at 10:00: $0.50/h over the 24 hours before 13:00, all of it today."""


def test_the_estimate_reaching_a_daily_budget_is_reported_with_its_instant(
        tmp_path: Path) -> None:
    """R8 closes a rung once the period's spend reaches its budget; the forecast does not
    project spend, so it reports where the estimate reaches it. Cheap heads the pool from
    14:01:15 at $12/24h = $0.50/h; $12.25 - $12 = $0.25 is left today, spent in half an
    hour: 14:31:15Z. Premium has a budget but no spend in the basis: no instant."""
    result = day_with_budget(tmp_path, TWELVE_TODAY,
                             'period = "day"\nrung_budget_usd = { cheap = 12.25, '
                             'premium = 20.0 }', "--json")
    document = json.loads(result.stdout)
    assert document["first_paid_at"] == "2026-11-29T14:01:15Z"
    cheap, premium = document["paid_estimate"]
    assert cheap["usd_per_hour"] == 0.5
    assert cheap["budget_usd"] == 12.25
    assert cheap["budget_period"] == "day"
    assert cheap["budget_left_usd"] == 0.25
    assert cheap["budget_reached_at"] == "2026-11-29T14:31:15Z"
    assert premium["budget_left_usd"] == 20.0
    assert premium["budget_reached_at"] is None
    # the engine's plan is not changed: cheap still heads until the 17:00 reset
    (escalation,) = document["escalations"]
    assert escalation["back_at"] == "2026-11-29T17:00:00Z"
    table = day_with_budget(tmp_path, TWELVE_TODAY,
                            'period = "day"\nrung_budget_usd = { cheap = 12.25 }').stdout
    assert ("Budget cheap: $0.25 of $12.25 left today; the estimate reaches it at 14:31:15Z; "
            "spend is not projected, so the rung stays open after it") in " ".join(
                line.strip() for line in table.splitlines())
    markdown = day_with_budget(tmp_path, TWELVE_TODAY,
                               'period = "day"\nrung_budget_usd = { cheap = 12.25 }',
                               "--format", "markdown").stdout
    assert "- Budget cheap: $0.25 of $12.25 left today; the estimate reaches it" in markdown


def test_a_budget_the_estimate_does_not_reach_adds_no_line(tmp_path: Path) -> None:
    """$12.25 left of a $24.25 day budget lasts 24.5 hours at $0.50/h, more than cheap heads
    the pool: no instant, and the table says nothing more than before."""
    result = day_with_budget(tmp_path, TWELVE_TODAY,
                             'period = "day"\nrung_budget_usd = { cheap = 24.25 }', "--json")
    cheap = json.loads(result.stdout)["paid_estimate"][0]
    assert (cheap["budget_left_usd"], cheap["budget_reached_at"]) == (12.25, None)
    table = day_with_budget(tmp_path, TWELVE_TODAY,
                            'period = "day"\nrung_budget_usd = { cheap = 24.25 }').stdout
    assert "Budget cheap" not in table


def test_without_a_ledger_or_a_budget_nothing_is_reported(tmp_path: Path) -> None:
    """No ledger: no estimate at all (hours only), as before. A ledger without a budget:
    the budget fields are null."""
    result = day_with_budget(tmp_path, None, 'rung_budget_usd = { cheap = 12.25 }', "--json")
    assert json.loads(result.stdout)["paid_estimate"] is None
    table = day_with_budget(tmp_path, None, 'rung_budget_usd = { cheap = 12.25 }').stdout
    assert "Budget cheap" not in table
    result = day_with_budget(tmp_path, TWELVE_TODAY, "", "--json")
    cheap = json.loads(result.stdout)["paid_estimate"][0]
    assert cheap["budget_usd"] is None
    assert cheap["budget_left_usd"] is None
    assert cheap["budget_reached_at"] is None


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.parametrize(("period", "reached"), [
    ("day", "2026-12-01T03:00:00Z"),    # a new day at midnight: $1.00 again
    ("month", "2026-12-01T03:00:00Z"),  # December starts at the same midnight
    ("week", "2026-12-01T01:30:00Z"),   # Monday 30 November's week goes on
])
def test_a_budget_period_starting_inside_the_horizon_starts_from_nothing_spent(
        period: str, reached: str) -> None:
    """R8 counts the spend of the period that contains the instant. From Monday 30 November
    22:00 with $0.75 of $1.00 left at $0.50/h: cheap heads 22:00-23:00 ($0.50, $0.25 left),
    then subscription until 01:00, then cheap. In the same period the $0.25 lasts until
    01:30; a period starting at midnight gives $1.00 again, which lasts two hours: 03:00."""
    heads: list[tuple[datetime, Rung | None]] = [
        (_at("2026-11-30T22:00:00Z"), "cheap"), (_at("2026-11-30T23:00:00Z"), "subscription"),
        (_at("2026-12-01T01:00:00Z"), "cheap"), (_at("2026-12-01T06:00:00Z"), "cheap")]
    assert budget_reached_at(heads, "cheap", usd_per_hour=0.5, left_usd=0.75,
                             budget_usd=1.0, period=period) == _at(reached)


def test_a_budget_spent_at_now_is_reached_again_only_in_the_next_period() -> None:
    """Nothing left at now: R8 has closed the rung already (not the estimate's doing); the
    next day's $1.00 lasts two hours of cheap from midnight."""
    heads: list[tuple[datetime, Rung | None]] = [
        (_at("2026-11-30T22:00:00Z"), "cheap"), (_at("2026-12-01T06:00:00Z"), None)]
    assert budget_reached_at(heads, "cheap", usd_per_hour=0.5, left_usd=0.0,
                             budget_usd=1.0, period="day") == _at("2026-12-01T02:00:00Z")
    assert budget_reached_at(heads, "cheap", usd_per_hour=0.5, left_usd=0.0,
                             budget_usd=1.0, period="week") is None


@pytest.mark.parametrize("period", ["day", "week", "month"])
def test_a_budget_period_without_a_next_one_on_the_calendar_still_reports(period: str) -> None:
    """The last period the calendar holds (December 9999) has no next start: the budget is
    reached inside it, with no traceback. $0.25 left at $0.50/h: half an hour."""
    heads: list[tuple[datetime, Rung | None]] = [
        (_at("9999-12-31T20:00:00Z"), "cheap"), (_at("9999-12-31T21:00:00Z"), "cheap")]
    assert budget_reached_at(heads, "cheap", usd_per_hour=0.5, left_usd=0.25,
                             budget_usd=1.0, period=period) == _at("9999-12-31T20:30:00Z")


def test_a_budget_reached_in_a_later_period_is_worded_as_that_periods(tmp_path: Path) -> None:
    """docs/forecast.md: a period starting inside the horizon starts from nothing spent, so
    an instant in it is where the estimate reaches that period's budget, not what is left
    today: the line says which."""
    result = forecast(LoadedInputs(
        settings=Settings(), connections=(), readings={}, quota=None, spend=(),
        catalogs=CATALOGS, files={}), parse_auto_id("auto/thrifty"), T0, timedelta(hours=1),
        STEP)
    def line(reached: datetime) -> str:
        budget = BudgetOutlook(budget_usd=1.0, period="day", left_usd=0.0, reached_at=reached)
        estimate = PaidEstimate(rung="cheap", hours=1.0, usd_per_hour=0.5, usd=0.5, basis="",
                                budget=budget)
        (text,) = budget_lines(dataclasses.replace(result, paid=(estimate,)))
        return text
    later = T0.replace(hour=2) + timedelta(days=1)
    assert line(later) == (
        f"Budget cheap: $0.00 of $1.00 left today; the estimate reaches a later day's budget "
        f"at {timefmt.short(later, T0)}; spend is not projected, so the rung stays open "
        "after it")
    assert "left today; the estimate reaches it at" in line(T0 + timedelta(minutes=30))
