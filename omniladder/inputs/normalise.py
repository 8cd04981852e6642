"""SPEC §2.2 (v1.2): a quota file's readings as the engine takes them, as pure functions.

A reset at the epoch is absent and one at or before its reading's ``checked_at`` is unusable;
an instant at or before the epoch is no instant; one connection's readings are in the order
of their instants, one per instant (identical ones are one, different ones an error); an
instant ahead of the clock is warned about.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from datetime import UTC, datetime, timedelta

from omniladder import timefmt
from omniladder.errors import InputError
from omniladder.models import QuotaFile, Reading

_CHECKED_AT = operator.attrgetter("checked_at")


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
AHEAD_SLACK = timedelta(minutes=5)
"""SPEC §2.2 (v1.2): an instant later than the clock by more than this is warned about."""


def resets_at_or_before(reading: Reading) -> bool:
    """A reset of the reading (top level or a window's) at or before its ``checked_at``."""
    # Asked of every reading a quota file holds (30,000 at 10,000 connections) and nearly
    # always False: a plain loop, without a generator for any(), takes half the time.
    checked = reading.checked_at
    reset = reading.reset_at
    if reset is not None and reset <= checked:
        return True
    if reading.windows is not None:
        for window in reading.windows:
            reset = window.reset_at
            if reset is not None and reset <= checked:
                return True
    return False


def without_unusable_resets(reading: Reading, index: int, unusable: list[str]) -> Reading:
    """SPEC §2.2 (v1.2): a reset at the epoch (a source's 0 for "not given") is absent; one
    at or before the reading's own ``checked_at`` is unusable, read as absent and noted."""
    checked = reading.checked_at
    noted: list[str] = []

    def kept(reset_at: datetime | None, where: str) -> datetime | None:
        if reset_at is None or reset_at > checked:
            return reset_at
        if reset_at > EPOCH:
            noted.append(f"{where}reset_at {timefmt.iso(reset_at)}")
        return None

    top = kept(reading.reset_at, "")
    windows = reading.windows
    if windows is not None:
        windows = tuple(
            window if window.reset_at is None or window.reset_at > checked
            else dataclasses.replace(window, reset_at=kept(window.reset_at,
                                                           f"window {window.name!r} "))
            for window in windows)
    if noted:
        unusable.append(f"readings[{index}] ({reading.connection} at "
                        f"{timefmt.iso(checked)}): {', '.join(noted)}")
    return dataclasses.replace(reading, reset_at=top, windows=windows)


def ahead_of_clock(taken_at: datetime | None, latest: datetime | None,
                   shown: str, now: datetime) -> list[str]:
    """SPEC §2.2 (v1.2): a snapshot or reading instant more than 5 minutes ahead of the
    clock (``now``); a plan made from it answers for an instant that has not happened."""
    limit = now + AHEAD_SLACK
    found: list[str] = []
    for what, instant in (("taken_at", taken_at), ("the latest checked_at", latest)):
        if instant is not None and instant > limit:
            found.append(f"{shown}: {what} {timefmt.iso(instant)} is ahead of the clock by "
                         f"more than 5 minutes; check the clock of whatever wrote it "
                         "(`omniladder quota prune --after` removes readings from the future)")
    return found


def in_order(history: list[Reading], quota: QuotaFile | None,
             shown: str) -> tuple[Reading, ...]:
    """One connection's readings in the order of their ``checked_at`` (a stable sort, in
    place), one per instant (``one_per_instant``)."""
    # 10,000 histories at 10,000 connections, nearly all without a repeated instant: one
    # look at neighbours decides that, and only a history with a repeat is walked again.
    if len(history) > 1:
        history.sort(key=_CHECKED_AT)
        previous = history[0].checked_at
        for reading in history[1:]:
            if reading.checked_at == previous:
                return one_per_instant(history, quota, shown)
            previous = reading.checked_at
    return tuple(history)


def one_per_instant(history: list[Reading], quota: QuotaFile | None,
                    shown: str) -> tuple[Reading, ...]:
    """SPEC §2.2 (v1.2): identical readings of one connection at one instant are one; two
    different ones are an input error naming both. ``history`` is in order of
    ``checked_at`` and repeats an instant (``in_order`` found one)."""
    for before, after in itertools.pairwise(history):
        if before.checked_at == after.checked_at and before != after:
            connection, at = before.connection, before.checked_at
            assert quota is not None
            found = [(index, settled(reading))
                     for index, reading in enumerate(quota.readings)
                     if reading.connection == connection and reading.checked_at == at]
            first = found[0][0]
            second = next(index for index, reading in found if reading != found[0][1])
            raise InputError(
                f"readings[{first}] and readings[{second}] are different readings of "
                f"connection {connection!r} at {timefmt.iso(at)}; two observations of "
                "one instant cannot disagree (remove one)",
                file=shown, field=f"readings[{second}]")
    out = [history[0]]
    for reading in history[1:]:
        if reading.checked_at != out[-1].checked_at:
            out.append(reading)
    return tuple(out)


def settled(reading: Reading) -> Reading:
    """A reading as the history holds it (unusable resets read as absent)."""
    return (without_unusable_resets(reading, 0, []) if resets_at_or_before(reading)
            else reading)


def quota_histories(quota: QuotaFile, known: set[str], shown: str, connections: str,
                    now: datetime) -> tuple[QuotaFile, dict[str, tuple[Reading, ...]], list[str]]:
    """A quota file (shown as ``shown``) as the engine reads it: the file with a ``taken_at``
    at or before the epoch read as absent, each known connection's history (in order, one
    per instant, unusable resets read as absent) and the warnings about readings of unknown
    connections (``connections`` names their file), unusable resets and instants ahead of
    ``now``."""
    if quota.taken_at is not None and quota.taken_at <= EPOCH:
        # SPEC §2.2 (v1.2): an instant at or before the epoch is no instant (a writer's 0
        # for "not given"), so the snapshot has no taken_at and R14 takes the clock.
        quota = quota.model_copy(update={"taken_at": None})
    warnings: list[str] = []
    histories: dict[str, list[Reading]] = {}
    unknown: dict[str, None] = {}
    unusable: list[str] = []
    latest: datetime | None = max(map(_CHECKED_AT, quota.readings), default=None)
    for index, reading in enumerate(quota.readings):
        history = histories.get(reading.connection)
        if history is None:
            if reading.connection not in known:
                unknown[reading.connection] = None
                continue
            history = histories[reading.connection] = []
        if resets_at_or_before(reading):
            reading = without_unusable_resets(reading, index, unusable)
        history.append(reading)
    if unknown:
        listed = ", ".join(sorted(unknown))
        warnings.append(f"{shown}: readings for connection ids not in {connections} were "
                        f"ignored: {listed}")
    if unusable:
        more = f" (and {len(unusable) - 5} more)" if len(unusable) > 5 else ""
        warnings.append(
            f"{shown}: a reset at or before its own reading's checked_at is unusable and "
            f"read as absent (SPEC §2.2): {'; '.join(unusable[:5])}{more}")
    warnings.extend(ahead_of_clock(quota.taken_at, latest, shown, now))
    readings = {cid: in_order(items, quota, shown) for cid, items in histories.items()}
    return quota, readings, warnings
