"""Projected readings: each fresh connection's windows burnt at their pace, back to 100% at
each reset, written at now and at each instant where a decision can change (a reset, a cutoff
or floor crossing, a budget period), computed as instants (docs/forecast.md#instants)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from omniladder import timefmt
from omniladder.analyses.forecast.pace import (
    TICK,
    ConnectionOutlook,
    crossings,
    projected_window,
    whole_second,
    window_resets,
)
from omniladder.engine import readings as rules
from omniladder.engine.budgets import (
    next_period_start,
)
from omniladder.engine.changes import connection_changes
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.quota import in_force, readings_until
from omniladder.engine.readings import held_to
from omniladder.models import (
    PAID_RUNGS,
    Connection,
    ObservedOverage,
    Reading,
)

# --- projected readings ----------------------------------------------------------------------


def _projection_parts(history: Sequence[Reading], outlook_: ConnectionOutlook, now: datetime,
                      end: datetime, inputs: LoadedInputs, connection: Connection | None
                      ) -> tuple[set[datetime], set[datetime]]:
    """The instants after now at which a projected connection's decisions can change, in
    two parts: those that do not depend on the burn (each projected reset, and each instant
    its recorded history alone re-decides it: an earlier window's reset R6.4 holds, the end
    of its cooldown) and the crossings of the exit cutoff, which do (a connection's exit
    cutoff: its reserve when it has one above the ladder's, R16). A projected reading is
    written at each (and at now)."""
    ladder = held_to(inputs.settings.ladder, outlook_.reserve_percent)
    readings = in_force(history, now, ladder.exit_cutoff_percent)
    if not outlook_.projected or not readings:
        return set(), set()
    latest = readings[-1]
    fixed: set[datetime] = set()
    for window, pace in zip(latest.all_windows(), outlook_.paces, strict=True):
        fixed.update(window_resets(window, pace, end))
    for change in connection_changes(history, connection,
                                     ladder.max_reading_age_seconds,
                                     ladder.exit_cutoff_percent):
        if change.counts() and not change.exclusive:
            fixed.add(change.at)
    return ({at for at in fixed if now < at <= end},
            cutoff_crossings(latest, outlook_, now, end, ladder.exit_cutoff_percent))


def cutoff_crossings(latest: Reading, outlook_: ConnectionOutlook, now: datetime,
                      end: datetime, cutoff: float) -> set[datetime]:
    """Each projected crossing of the exit cutoff of a connection's windows after now, up
    to ``end`` (``latest``: its reading in force at now)."""
    # The re-entry floor is crossed upwards only at a reset (a projected window only falls
    # between two), which is listed already: only the cutoff is an instant here.
    found: set[datetime] = set()
    for window, pace in zip(latest.all_windows(), outlook_.paces, strict=True):
        found.update(crossings(window, pace, latest.checked_at, cutoff, end))
    return {at for at in found if now < at <= end}


def recorded_instants(inputs: LoadedInputs, connection_ids: Collection[str], now: datetime,
                      end: datetime) -> set[datetime]:
    """The instants after now at which the recorded inputs alone change a decision: for
    each connection not projected, its readings' resets, their turning stale (the
    microsecond after their last fresh one) and its state's instants (the cooldown's end,
    ``changes.state_changes``); for the fleet, each budget period start and each spend
    event (R8)."""
    found: set[datetime] = set()
    for connection in inputs.connections:
        if connection.id not in connection_ids:
            continue
        ladder = held_to(inputs.settings.ladder, connection.reserve_percent)
        for change in connection_changes(inputs.readings.get(connection.id, ()),
                                         connection, ladder.max_reading_age_seconds,
                                         ladder.exit_cutoff_percent):
            if change.counts():
                at = change.at
                if change.exclusive:
                    at = whole_second(timefmt.shifted(at, TICK) or at)
                found.add(at)
    found.update(budget_instants(inputs, now, end))
    return {at for at in found if now < at <= end}


def budget_instants(inputs: LoadedInputs, now: datetime, end: datetime) -> set[datetime]:
    """Each budget period start after now up to ``end``, and each spend event there; none
    without a budget above 0 on a paid rung (R8: no budget never gates, and a budget of 0
    or less closes its rung whatever the period or the spend)."""
    budgets = inputs.settings.budgets.rung_budget_usd
    if not any((budgets.for_rung(rung) or 0) > 0 for rung in PAID_RUNGS):
        return set()
    period = inputs.settings.budgets.period
    found = {e.at for e in inputs.spend or () if now < e.at <= end}
    at = now
    while True:
        try:
            at = next_period_start(at, period)
        except (OverflowError, ValueError):
            break
        if at > end:
            break
        found.add(at)
    return found


def projected_readings(connection_id: str, history: Sequence[Reading],
                       outlook_: ConnectionOutlook, instants: Sequence[datetime],
                       inputs: LoadedInputs, dense: bool = False,
                       wanted: Collection[datetime] = (), kept_fresh: bool = False
                       ) -> list[Reading]:
    """The readings the projection adds for one connection: one at now (``instants[0]``,
    the burn carried from the reading to now) unless the reading was taken at now, and one
    at each of the ``wanted`` instants (where a decision can change).

    ``dense`` writes one at every instant (what the sparse choice is tested against).
    Without ``kept_fresh`` the readings stand on their own, as if recorded: one also at
    each instant at which the previous one would have turned stale (keep-alive).
    """
    if not outlook_.projected or not instants:
        return []
    ladder = held_to(inputs.settings.ladder, outlook_.reserve_percent)
    now = instants[0]
    readings = in_force(history, now, ladder.exit_cutoff_percent)
    latest = readings[-1]
    windows = latest.all_windows()
    paces = outlook_.paces
    origin = latest.checked_at
    max_age = ladder.max_reading_age_seconds
    overage = _overage_in_force(history, now, max_age)
    out: list[Reading] = []
    last = origin
    # Kept fresh, only now and the wanted instants can get a reading: the loop need not
    # visit the others (the fleet's instants are many times a connection's own).
    visit = sorted({now, *wanted}) if kept_fresh and not dense else instants
    for at in visit:
        if at <= origin:
            continue
        if not dense and at != now and at not in wanted and (
                kept_fresh or rules.is_fresh(last, at, max_age)):
            continue
        projected = tuple(projected_window(window, pace, origin, at)
                          for window, pace in zip(windows, paces, strict=True))
        if latest.windows is None:  # a top-level figure stays one
            (only,) = projected
            reading = Reading(connection=connection_id, checked_at=at,
                              remaining_percent=only.remaining_percent, reset_at=only.reset_at,
                              overage=overage)
        else:
            reading = Reading(connection=connection_id, checked_at=at, windows=projected,
                              overage=overage)
        out.append(reading)
        last = at
    return out


def _overage_in_force(history: Sequence[Reading], now: datetime,
                      max_age: float) -> ObservedOverage | None:
    """R2a's observation at now, carried by the projected readings while it is fresh (the
    provider is assumed to keep saying it); a stale one is left to the recorded reading."""
    for reading in reversed(readings_until(history, now)):
        if reading.overage is not None:
            return reading.overage if rules.is_fresh(reading.checked_at, now, max_age) else None
    return None


def projections_wanted(inputs: LoadedInputs, outlooks: Sequence[ConnectionOutlook],
                       now: datetime, end: datetime) -> dict[str, set[datetime]]:
    """Per projected connection, the instants after now that need a projected reading: its
    own (``_projection_parts``) and the budget instants, where the engine re-decides a
    whole rung."""
    return {cid: fixed | crossed
            for cid, (fixed, crossed) in wanted_parts(inputs, outlooks, now, end).items()}


def wanted_parts(inputs: LoadedInputs, outlooks: Sequence[ConnectionOutlook],
                  now: datetime, end: datetime
                  ) -> dict[str, tuple[set[datetime], set[datetime]]]:
    """``projections_wanted`` in two parts: the instants that do not depend on the burn
    (the budget instants among them) and the cutoff crossings."""
    by_id = {o.connection_id: o for o in outlooks}
    budgets = budget_instants(inputs, now, end)
    out: dict[str, tuple[set[datetime], set[datetime]]] = {}
    for connection in inputs.connections:
        found = by_id.get(connection.id)
        if found is None or not found.projected:
            continue
        history = readings_until(inputs.readings.get(connection.id, ()), now)
        fixed, crossed = _projection_parts(history, found, now, end, inputs, connection)
        out[connection.id] = (fixed | budgets, crossed)
    return out


def with_projection(inputs: LoadedInputs, outlooks: Sequence[ConnectionOutlook],
                    instants: Sequence[datetime], dense: bool = False,
                    kept_fresh: bool = False,
                    wanted: dict[str, set[datetime]] | None = None
                    ) -> tuple[LoadedInputs, dict[str, list[Reading]]]:
    """The inputs with every projected reading added to its connection's history.

    ``instants`` starts at now. By default the readings stand on their own, as if
    recorded: a keep-alive reading at each instant where the previous one would have
    turned stale. ``kept_fresh`` writes them for an engine told that the projected
    connections keep reporting (what ``forecast`` steps): a reading only where a decision
    can change (``_projection_parts`` and the budget instants).
    """
    by_id = {o.connection_id: o for o in outlooks}
    now, end = instants[0], instants[-1]
    if wanted is None:
        wanted = projections_wanted(inputs, outlooks, now, end)
    # Only what was recorded at or before now counts: the rest is what the forecast projects.
    readings = {cid: tuple(readings_until(history, now))
                for cid, history in inputs.readings.items()}
    added: dict[str, list[Reading]] = {}
    for connection in inputs.connections:
        found = by_id.get(connection.id)
        if found is None or not found.projected:
            continue
        history = readings.get(connection.id, ())
        projected = projected_readings(connection.id, history, found, instants, inputs,
                                       dense, wanted.get(connection.id, ()), kept_fresh)
        if projected:
            readings[connection.id] = (*history, *projected)
            added[connection.id] = projected
    return inputs._replace(readings=readings), added


