"""OpenMetrics text of a plan and of a forecast, for the node_exporter textfile collector.

Pure functions from the Plan (with the quota histories it was made from) and from the
Forecast to one text: only gauges, ``# HELP`` and ``# TYPE`` for every family, names
prefixed ``omniladder_`` with the unit in the name, ``# EOF`` last, no sample timestamps
(the textfile collector refuses a file that carries them). The same text parses as
OpenMetrics and as the Prometheus text format the collector reads.

Every series carries ``auto_id``, so the files of several auto ids can sit side by side in
one textfile directory; the plan's families and the forecast's (``omniladder_forecast_…``)
never share a name, so a plan file and a forecast file of one auto id can too. The help
texts are constants: the collector requires one family to have the same help in every file
(prometheus/node_exporter issue #3052).

Families come in the order of ``PLAN_FAMILIES`` / ``FORECAST_FAMILIES`` and samples in plan
order (connections in file order, windows in their reading's order, rungs in ladder order),
so a cron job's diff of two runs shows only what changed. An instant that does not exist (no
reset, no run-out before the reset, nothing paid within the horizon) is written ``NaN``:
the series stays, and an alert such as ``x - time() < 3600`` is false on it
(docs/metrics.md#nan).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from omniladder.models import RUNGS, Reading, Window

if TYPE_CHECKING:
    from omniladder.analyses.forecast.pace import Pace
    from omniladder.analyses.forecast.walk import Forecast
    from omniladder.engine.records import Plan
    from omniladder.models import LadderSettings


class Family(NamedTuple):
    """One gauge family: its full name, its labels in order, and its help text."""

    name: str
    labels: tuple[str, ...]
    help: str


_Item = TypeVar("_Item")
_Series = tuple[str, tuple[str, ...] | None]
"""A window's series within one connection: its name and the models it is scoped to."""

_WINDOW = ("auto_id", "connection", "window", "models")

PLAN_FAMILIES: tuple[Family, ...] = (
    Family("omniladder_plan_timestamp_seconds", ("auto_id",),
           "The instant the plan was made for (R14), in Unix seconds."),
    Family("omniladder_max_reading_age_seconds", ("auto_id",),
           "The age past which a reading is stale (max_reading_age_seconds)."),
    Family("omniladder_pool_entries", ("auto_id", "rung"),
           "Pool entries on each rung, all five rungs listed."),
    Family("omniladder_pool_connections", ("auto_id",),
           "Distinct connections the pool may dispatch to."),
    Family("omniladder_head_rung", ("auto_id", "rung"),
           "1 for the rung of the first pool entry, 0 for the others; all 0 when the pool "
           "is empty."),
    Family("omniladder_reading_age_seconds", ("auto_id", "connection"),
           "Age at the plan instant of the connection's latest reading in force; NaN when "
           "it has none."),
    Family("omniladder_quota_window_remaining_percent", _WINDOW,
           "Remaining percent of each window of the connection's latest reading in force; "
           "an unlimited window is 100."),
    Family("omniladder_quota_window_reset_timestamp_seconds", _WINDOW,
           "When each window of the connection's latest reading in force resets, in Unix "
           "seconds; NaN without a reset instant."),
)
"""The families ``plan --format openmetrics`` writes, in the order it writes them."""

FORECAST_FAMILIES: tuple[Family, ...] = (
    Family("omniladder_forecast_timestamp_seconds", ("auto_id",),
           "The instant the forecast starts from, in Unix seconds."),
    Family("omniladder_forecast_horizon_end_timestamp_seconds", ("auto_id",),
           "The last step of the forecast's horizon, in Unix seconds."),
    Family("omniladder_forecast_first_paid_timestamp_seconds", ("auto_id",),
           "The first step a paid rung heads the pool, in Unix seconds; NaN when none "
           "within the horizon."),
    Family("omniladder_forecast_pool_empty_timestamp_seconds", ("auto_id",),
           "The first step the pool is empty, in Unix seconds; NaN when none within the "
           "horizon."),
    Family("omniladder_forecast_escalations", ("auto_id",),
           "Steps up the ladder within the horizon."),
    Family("omniladder_forecast_head_hours", ("auto_id", "rung"),
           "Hours each rung heads the pool over the horizon, all five rungs listed "
           "(deprecated: omniladder_forecast_head_seconds)."),
    Family("omniladder_forecast_empty_pool_hours", ("auto_id",),
           "Hours the pool is empty over the horizon (deprecated: "
           "omniladder_forecast_empty_pool_seconds)."),
    Family("omniladder_forecast_head_seconds", ("auto_id", "rung"),
           "Seconds each rung heads the pool over the horizon, all five rungs listed."),
    Family("omniladder_forecast_empty_pool_seconds", ("auto_id",),
           "Seconds the pool is empty over the horizon."),
    Family("omniladder_forecast_window_burn_percent_per_hour", _WINDOW,
           "Each window's burn rate over its current cycle; NaN when the pace gives none."),
    Family("omniladder_forecast_window_cutoff_timestamp_seconds", _WINDOW,
           "When each window reaches its connection's exit cutoff (its reserve when higher) "
           "at its burn rate, in Unix seconds; NaN when it lasts to its reset or has no rate."),
    *(Family(f"omniladder_forecast_{answer}_{edge}_timestamp_seconds", ("auto_id",),
             f"{what} at {edge} of the band over the low, middle and high burns, in Unix "
             "seconds; NaN when none within the horizon or unknown.")
      for answer, what in (("first_paid", "The first instant a paid rung heads the pool"),
                           ("pool_empty", "The first instant the pool is empty"))
      for edge in ("p10", "p50", "p90")),
    Family("omniladder_forecast_unprojected_windows", ("auto_id",),
           "Windows whose burn cannot be projected on connections that could move the "
           "answers; above 0, first paid and pool empty are unknown (NaN)."),
)
"""The families ``forecast --format openmetrics`` writes, in the order it writes them."""

DEPRECATED_FAMILIES: Mapping[str, str] = {
    "omniladder_forecast_head_hours": "omniladder_forecast_head_seconds",
    "omniladder_forecast_empty_pool_hours": "omniladder_forecast_empty_pool_seconds",
}
"""Families kept for one more release beside the one that replaces them (docs/metrics.md
#deprecated): their names are a contract, but their unit is not the base unit Prometheus
asks for (promlint's unit rule)."""

Sample = tuple[tuple[str, ...], float]
"""A sample: its label values (in the family's label order) and its value."""


# --- the text ---------------------------------------------------------------------------------


def escape_label(value: str) -> str:
    """A label value as both formats write it: backslash, double quote and newline escaped."""
    if "\\" not in value and '"' not in value and "\n" not in value:
        return value  # the common case, tested first: a fleet writes ~20 labels a connection
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def number(value: float) -> str:
    """A sample value: a whole number without a fraction, ``NaN`` and ``±Inf`` spelled as
    both formats spell them, any other float as its shortest round-trip text."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def seconds(instant: datetime | None) -> float:
    """An instant in Unix seconds; NaN for none."""
    return math.nan if instant is None else instant.timestamp()


def _family_lines(family: Family, samples: Iterable[Sample]) -> Iterator[str]:
    yield f"# HELP {family.name} {family.help}\n"
    yield f"# TYPE {family.name} gauge\n"
    keys = [f'{name}="' for name in family.labels]
    for values, value in samples:
        labels = '",'.join([key + escape_label(text)
                            for key, text in zip(keys, values, strict=True)])
        yield f'{family.name}{{{labels}"}} {number(value)}\n'


def _text(families: Sequence[Family], samples: Mapping[str, list[Sample]]) -> str:
    lines: list[str] = []
    for family in families:
        lines += _family_lines(family, samples[family.name])
    lines.append("# EOF\n")
    return "".join(lines)


# --- windows ----------------------------------------------------------------------------------


def models_label(models: Sequence[str] | None) -> str:
    """The ``models`` label of a window: the models it is scoped to, comma-separated; empty
    for a window that applies to every model (an empty label is no label to Prometheus).

    A comma or a backslash inside a model name is escaped with a backslash (``a\\,b`` is
    the one model ``a,b``), so the label tells every scope apart: joined bare, the window
    of the model ``a,b`` and the window of the models ``a`` and ``b`` were one series
    written twice, which the textfile collector refuses whole."""
    if models is None:
        return ""
    return ",".join(model.replace("\\", "\\\\").replace(",", "\\,") for model in models)


def _lowest_per_series(items: Iterable[_Item], series: Callable[[_Item], _Series],
                       left: Callable[[_Item], float]) -> list[_Item]:
    """One item per series, in first-seen order: the lowest ``left`` (the one that binds, as
    R6 takes the minimum), the first on a tie."""
    kept: dict[_Series, _Item] = {}
    for item in items:
        key = series(item)
        found = kept.get(key)
        if found is None or left(item) < left(found):
            kept[key] = item
    return list(kept.values())


def binding(windows: Sequence[Window]) -> list[Window]:
    """The windows a reading's series come from: one per (name, models), in reading order.

    Two windows of one reading with the same name and models would be one series twice; the
    lower one is kept, the first on a tie.
    """
    return _lowest_per_series(windows, lambda window: (window.name, window.models),
                              lambda window: window.figure)


def latest_in_force(history: Sequence[Reading], now: datetime, cutoff: float) -> Reading | None:
    """The reading R6 judges at now (held windows included), or None."""
    from omniladder.engine.quota import in_force

    readings = in_force(history, now, cutoff)
    return readings[-1] if readings else None


# --- the plan -----------------------------------------------------------------------------------


def plan_samples(plan: Plan, histories: Mapping[str, Sequence[Reading]],
                 ladder: LadderSettings) -> dict[str, list[Sample]]:
    """Every sample of the plan's families, by family name.

    ``histories`` are the quota readings the plan was made from, by connection id (the
    loaded inputs' ``readings``): the plan keeps a connection's latest reading only inside
    the verdicts it asked for, and a connection with no candidate has none. ``ladder`` is
    the ladder it was made with: a connection's windows are read at the thresholds it is
    held to (``readings.held_to``: its reserve when above the exit cutoff, R16), so a
    window R6.4 holds at its reserve shows the figure the plan judged.
    """
    from omniladder.engine.readings import held_to

    auto_id = plan.auto_id.text
    now = plan.now
    out: dict[str, list[Sample]] = {family.name: [] for family in PLAN_FAMILIES}
    out["omniladder_plan_timestamp_seconds"].append(((auto_id,), seconds(now)))
    out["omniladder_max_reading_age_seconds"].append(
        ((auto_id,), float(plan.settings["max_reading_age_seconds"])))
    counts = dict.fromkeys(RUNGS, 0)
    for entry in plan.pool:
        counts[entry.rung] += 1
    head = plan.pool[0].rung if plan.pool else None
    for rung in RUNGS:
        out["omniladder_pool_entries"].append(((auto_id, rung), float(counts[rung])))
        out["omniladder_head_rung"].append(((auto_id, rung), 1.0 if rung == head else 0.0))
    out["omniladder_pool_connections"].append(
        ((auto_id,), float(len(plan.eligible_connection_ids))))
    for facts in plan.facts:
        cid = facts.connection.id
        cutoff = held_to(ladder, facts.connection.reserve_percent).exit_cutoff_percent
        latest = latest_in_force(histories.get(cid, ()), now, cutoff)
        age = math.nan if latest is None else (now - latest.checked_at).total_seconds()
        out["omniladder_reading_age_seconds"].append(((auto_id, cid), age))
        if latest is None:
            continue
        for window in binding(latest.all_windows()):
            labels = (auto_id, cid, window.name, models_label(window.models))
            out["omniladder_quota_window_remaining_percent"].append((labels, window.figure))
            out["omniladder_quota_window_reset_timestamp_seconds"].append(
                (labels, seconds(window.reset_at)))
    return out


def plan_metrics(plan: Plan, histories: Mapping[str, Sequence[Reading]],
                 ladder: LadderSettings) -> str:
    """The OpenMetrics text of a plan (``plan --format openmetrics`` / ``--metrics-out``)."""
    return _text(PLAN_FAMILIES, plan_samples(plan, histories, ladder))


# --- the forecast -------------------------------------------------------------------------------


def _binding_paces(paces: Sequence[Pace]) -> list[Pace]:
    """One pace per (window, models), as ``binding`` keeps one window (an unknown remaining
    percent counts as 100, so a known figure binds before it)."""
    return _lowest_per_series(
        paces, lambda pace: (pace.window, pace.models),
        lambda pace: 100.0 if pace.remaining_percent is None else pace.remaining_percent)


def forecast_samples(result: Forecast) -> dict[str, list[Sample]]:
    """Every sample of the forecast's families, by family name."""
    auto_id = (result.auto_id.text,)
    # Hours and burn rounded as the JSON document rounds them (rendering.forecast_view).
    out: dict[str, list[Sample]] = {family.name: [] for family in FORECAST_FAMILIES}
    out["omniladder_forecast_timestamp_seconds"].append((auto_id, seconds(result.now)))
    out["omniladder_forecast_horizon_end_timestamp_seconds"].append(
        (auto_id, seconds(result.end)))
    out["omniladder_forecast_first_paid_timestamp_seconds"].append(
        (auto_id, seconds(result.first_paid_at)))
    out["omniladder_forecast_pool_empty_timestamp_seconds"].append(
        (auto_id, seconds(result.pool_empty_at)))
    out["omniladder_forecast_escalations"].append((auto_id, float(len(result.escalations))))
    for rung in RUNGS:
        out["omniladder_forecast_head_hours"].append(
            ((*auto_id, rung), round(result.hours_by_head.get(rung, 0.0), 4)))
    out["omniladder_forecast_empty_pool_hours"].append(
        (auto_id, round(result.hours_by_head.get("empty", 0.0), 4)))
    for rung in RUNGS:
        out["omniladder_forecast_head_seconds"].append(
            ((*auto_id, rung), round(result.hours_by_head.get(rung, 0.0) * 3600, 3)))
    out["omniladder_forecast_empty_pool_seconds"].append(
        (auto_id, round(result.hours_by_head.get("empty", 0.0) * 3600, 3)))
    for outlook in result.outlooks:
        for pace in _binding_paces(outlook.paces):
            labels = (*auto_id, pace.connection_id, pace.window, models_label(pace.models))
            burn = pace.burn_percent_per_hour
            out["omniladder_forecast_window_burn_percent_per_hour"].append(
                (labels, math.nan if burn is None else round(burn, 3)))
            out["omniladder_forecast_window_cutoff_timestamp_seconds"].append(
                (labels, seconds(pace.cutoff_at)))
    for answer, band in (("first_paid", result.first_paid_band),
                         ("pool_empty", result.pool_empty_band)):
        for edge in ("p10", "p50", "p90"):
            out[f"omniladder_forecast_{answer}_{edge}_timestamp_seconds"].append(
                (auto_id, seconds(None if band is None else getattr(band, edge))))
    out["omniladder_forecast_unprojected_windows"].append(
        (auto_id, float(len(result.unprojected))))
    return out


def forecast_metrics(result: Forecast) -> str:
    """The OpenMetrics text of a forecast (``forecast --format openmetrics`` /
    ``--metrics-out``)."""
    return _text(FORECAST_FAMILIES, forecast_samples(result))

