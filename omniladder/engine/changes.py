"""When a connection's decisions can change by time alone: the one source of change instants.

A pair's decision reads its connection's readings (R6, R7, R9, R2a), its cooldown (R9) and,
through its rung, the budgets (R8). Between two instants where none of those inputs changes,
the decision is the same. ``connection_changes`` lists those instants for one connection;
``simulate``'s stepper maps them onto its steps (``stepping.change_steps``) and ``why``'s
earliest comeback probes each one after now, and ``audit traffic`` walks them
(``change_instants``). The budget
period's start is fleet-wide and each caller adds it in its own terms.

Under R15's ``expiring-first`` the order within a quota rung also changes by time alone:
urgencies grow as resets near, and two of them cross. ``next_order_change`` computes the
first such crossing after now (never sampled) from the urgencies' terms; a reset or a
reading that changes a term is a change instant of its connection already.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from itertools import pairwise
from typing import NamedTuple

from omniladder.engine.pool import Terms, rate_at
from omniladder.engine.quota import carries_quota
from omniladder.engine.readings import is_low, stale_after
from omniladder.models import Connection, LadderSettings, Reading


class Change(NamedTuple):
    """One instant where a connection's decisions can change."""

    at: datetime
    exclusive: bool
    """True when the change comes just after ``at`` (a reading turns stale once it is *older*
    than the max age), False when it comes at ``at``."""
    until: datetime | None
    """The change counts only if it comes before this instant, when a newer reading that
    carries quota supersedes the one it belongs to; None: it always counts."""

    def counts(self) -> bool:
        return self.until is None or self.at < self.until


def connection_changes(history: Sequence[Reading], connection: Connection | None,
                       max_age_seconds: float, cutoff: float) -> Iterator[Change]:
    """Every instant at which one connection's decisions can change, in no particular order.

    ``history`` is the connection's readings sorted by ``checked_at``. Each reading counts at
    its arrival. Its resets and its turning stale matter only while it is the latest reading
    that carries quota (R6 and R9 read the latest one; R7's replay judges each reading at its
    own ``checked_at``; a reading without quota supersedes nothing, SPEC §2.2 v1.2), with two
    exceptions: R2a keeps the latest reading that *carries* an overage report, fresh or not,
    so such a reading's turning stale always counts; and a window at or below ``cutoff``
    holds in later readings until its reset (R6.4), so such a reset always counts. The
    connection's own instants count too (``state_changes``); None: a connection without
    them.
    """
    superseded_by: list[datetime | None] = []
    later: datetime | None = None
    for reading in reversed(history):  # the next reading that carries quota, for each
        superseded_by.append(later)
        if carries_quota(reading):
            later = reading.checked_at
    superseded_by.reverse()
    for reading, superseded in zip(history, superseded_by, strict=True):
        yield Change(reading.checked_at, False, None)
        if reading.reset_at is not None:
            yield Change(reading.reset_at, False, superseded)
        for window in reading.all_windows():
            if window.reset_at is not None:
                held = is_low(window, cutoff)
                yield Change(window.reset_at, False, None if held else superseded)
        stale_at = stale_after(reading.checked_at, max_age_seconds)
        if stale_at is not None:
            yield Change(stale_at, True,
                         None if reading.overage is not None else superseded)
    if connection is not None:
        yield from state_changes(connection)


def state_changes(connection: Connection) -> Iterator[Change]:
    """The instants of the connections file's own state: the cooldown's configured end (its
    R9 clamp is a reset of the latest reading), the instant its state was observed
    (``state_as_of``, SPEC §7.2 v1.4: ``active``, ``status`` and the cooldown hold from
    there on) and, before that instant, the cooldown's recorded start."""
    until = connection.rate_limited_until
    if until is not None:
        yield Change(until, False, None)
    as_of = connection.state_as_of
    if as_of is not None:
        yield Change(as_of, False, None)
        since = connection.rate_limited_since
        if since is not None and since < as_of:
            yield Change(since, False, None)


def change_instants(history: Sequence[Reading], connection: Connection | None,
                    ladder: LadderSettings, start: datetime, end: datetime | None = None
                    ) -> set[tuple[datetime, bool]]:
    """The instants after ``start`` (up to ``end``, when given) at which one connection's
    decisions can change by time alone, as (instant, exclusive): each change
    ``connection_changes`` lists under the ladder's max age and exit cutoff that counts.

    An exclusive change comes just after its instant: one at ``start`` counts (a reading
    exactly max-age old at ``start`` is still fresh and goes stale just after), one at
    ``end`` does not."""
    found: set[tuple[datetime, bool]] = set()
    for change in connection_changes(history, connection,
                                     ladder.max_reading_age_seconds,
                                     ladder.exit_cutoff_percent):
        at, exclusive = change.at, change.exclusive
        if (at > start or (exclusive and at == start)) and (
                end is None or at < end or (at == end and not exclusive)) and change.counts():
            found.add((at, exclusive))
    return found


# --- R15: crossings of urgencies ----------------------------------------------------------

_MARGIN = timedelta(milliseconds=1)
"""A computed crossing is taken this much early: planning again early is harmless, late
is not, and the instants are floats until they become datetimes."""


def overtakes(ahead: Terms, behind: Terms, now: datetime) -> tuple[datetime, bool] | None:
    """The first instant after now at which ``behind``'s urgency can exceed ``ahead``'s
    (``pool.rate_at``), before either's first reset (a change instant of its own), as
    (instant, exclusive): ``exclusive`` when it is just after now. None when it never does.

    Each urgency is the highest of terms ``c / (R - t)``; two terms are equal where
    ``c (S - t) = d (R - t)``, so the difference of the two urgencies changes sign only at
    such instants: between consecutive ones it keeps the sign it has at their midpoint.
    """
    resets = [reset for _, reset in ahead + behind if reset > now]
    if not behind or not resets:
        return None
    horizon = (min(resets) - now).total_seconds()
    found: set[float] = set()
    for c, ahead_reset in ahead:
        for d, behind_reset in behind:
            if c == d:
                continue
            r = (ahead_reset - now).total_seconds()
            s = (behind_reset - now).total_seconds()
            at = (d * r - c * s) / (d - c)
            if 0 < at < horizon:
                found.add(at)
    edges = [0.0, *sorted(found), horizon]
    for start, end in pairwise(edges):
        middle = now + timedelta(seconds=(start + end) / 2)
        if rate_at(behind, middle) > rate_at(ahead, middle):
            if start == 0.0:
                return now, True
            return now + timedelta(seconds=start) - _MARGIN, False
    return None


def next_order_change(groups: Iterable[Sequence[Terms]],
                      now: datetime) -> tuple[datetime, bool] | None:
    """The first instant after now at which an order sorted by urgency can change: the
    first overtaking of neighbours in any group (each group is one sorted order: an
    allowlist, or a quota rung's entries, each entry's terms those of all its members)."""
    first: tuple[datetime, bool] | None = None
    for group in groups:
        for ahead, behind in pairwise(group):
            found = overtakes(ahead, behind, now)
            if found is not None and (first is None or found < first):
                first = found
    return first
