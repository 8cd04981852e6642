"""R11's split and R12's order: the one seating of admitted pairs in the pool.

A pool entry is a candidate on one rung (R11: a candidate admitted on two rungs is two
entries); entries stand rung first, then in R12's candidate order, each allowlist in
connection-file order. ``Seating`` holds the admitted pairs of one auto id at one instant:
``make_plan`` seats every connection once and reads the entries, the ``Stepper`` moves the
connections whose decisions change and reads the counts per rung and the connections in
order of their first seat, and ``connection_plan`` asks ``position`` for the entries that
seat one connection without seating the whole fleet. All three read one order, ``seat_key``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from itertools import chain
from typing import Generic, NamedTuple, TypeAlias, TypeVar

from omniladder import timefmt
from omniladder.engine.quota import Verdict
from omniladder.engine.readings import figure, is_current
from omniladder.models import QUOTA_RUNGS, RUNGS, Reading, Rung, Window

RUNG_INDEX: dict[str, int] = {rung: index for index, rung in enumerate(RUNGS)}
"""Each rung's place in the ladder, cheapest first (R4)."""

M = TypeVar("M")
"""What marks an unverified seat: ``make_plan`` keeps its ``UnverifiedMark``; the stepper
needs only that one is there."""


Seat: TypeAlias = tuple[int, int, M | None]
"""One admitted pair of a connection: its rung's place in ``RUNGS``, its candidate's place in
R12's order (``Fleet.keys``), and None for a verified pair or, for an unverified one, the
caller's mark, returned with the entry. A plain tuple: a plan makes one per admitted pair."""


def seat_key(rung: int, candidate: int) -> tuple[int, int]:
    """R11 then R12: an entry's place in the pool, rung first, then candidate order (the
    first two items of a ``Seat``, compared as a tuple)."""
    return rung, candidate


class Entry(NamedTuple, Generic[M]):
    """One pool entry as the seating holds it: its place, and its members in file order."""

    position: int
    rung: Rung
    candidate: int
    members: tuple[int, ...]
    marks: tuple[M, ...]
    """The marks of its unverified members, in member order."""
    marked: tuple[int, ...] = ()
    """The members those marks belong to, in the same order."""


class _FirstSeats:
    """Connections ordered by their first seat (rung, candidate, connection index), in one
    small sorted list per (rung, candidate): a move shifts one connection within its
    bucket, never the whole fleet's list."""

    def __init__(self, ids: Sequence[str]) -> None:
        self._ids = ids
        self._buckets: dict[tuple[int, int], tuple[list[int], list[str]]] = {}
        self._order: list[tuple[int, int]] = []

    def move(self, seat: tuple[int, int, int], sign: int) -> None:
        """Add (sign 1) or remove (sign -1) the connection first seated at ``seat``."""
        where, index = seat[:2], seat[2]
        bucket = self._buckets.get(where)
        if bucket is None:
            bucket = self._buckets[where] = ([], [])
            bisect.insort(self._order, where)
        indexes, ids = bucket
        at = bisect.bisect_left(indexes, index)
        if sign > 0:
            indexes.insert(at, index)
            ids.insert(at, self._ids[index])
        else:
            del indexes[at], ids[at]

    def ids(self) -> tuple[str, ...]:
        return tuple(chain.from_iterable(self._buckets[where][1] for where in self._order))

    def first(self) -> str | None:
        """The first of ``ids``, without the others."""
        buckets = self._buckets
        return next((ids[0] for where in self._order if (ids := buckets[where][1])), None)


class Seating(Generic[M]):
    """The admitted pairs of one auto id, seated in pool entries (R11, R12).

    ``place`` adds (sign 1) or removes (sign -1) one connection's seats. With ``track``,
    the seating also keeps what a step reads without building the pool: entries and
    connections per rung, and the eligible and unverified connections in pool order.
    """

    __slots__ = ("_buckets", "_eligible", "_marks", "_on_rung", "_track", "_unverified",
                 "connections", "entries")

    def __init__(self, ids: Sequence[str], *, track: bool = False) -> None:
        self._buckets: dict[tuple[int, int], list[int]] = {}
        self._marks: dict[tuple[int, int], dict[int, M]] = {}
        self._track = track
        self._on_rung: dict[tuple[int, int], int] = {}
        self._eligible = _FirstSeats(ids)
        self._unverified = _FirstSeats(ids)
        self.entries = [0] * len(RUNGS)
        """Per rung: how many entries have a member."""
        self.connections = [0] * len(RUNGS)
        """Per rung: how many connections have an admitted pair there."""

    def place(self, index: int, seats: Iterable[Seat[M]], sign: int) -> None:
        """Seat (sign 1) or unseat (sign -1) connection ``index``'s admitted pairs."""
        track = self._track
        first: tuple[int, int, int] | None = None
        shaky: tuple[int, int, int] | None = None
        buckets = self._buckets
        for rung, candidate, mark in seats:
            where = (rung, candidate)  # seat_key, inline: one per admitted pair of a plan
            members = buckets.get(where)
            if members is None:
                members = buckets[where] = []
            if sign > 0:
                if not members or members[-1] < index:
                    members.append(index)  # seated in file order: the common case
                else:
                    bisect.insort(members, index)
                if mark is not None:
                    self._marks.setdefault(where, {})[index] = mark
            else:
                del members[bisect.bisect_left(members, index)]
                if mark is not None:
                    del self._marks[where][index]
            if not track:
                continue
            if len(members) == (1 if sign > 0 else 0):
                self.entries[rung] += sign
            member = (index, rung)
            before = self._on_rung.get(member, 0)
            self._on_rung[member] = before + sign
            if (before == 0) != (before + sign == 0):
                self.connections[rung] += sign
            key = (rung, candidate, index)
            if first is None or key < first:
                first = key
            if mark is not None and (shaky is None or key < shaky):
                shaky = key
        if first is not None:
            self._eligible.move(first, sign)
        if shaky is not None:
            self._unverified.move(shaky, sign)

    def fill(self, rung: int, candidate: int, members: list[int],
             marks: dict[int, M] | None = None) -> None:
        """Seat one entry's admitted members at once, in file order, in an untracked
        seating (with the marks of its unverified ones): how ``make_plan`` fills its pool,
        one call per entry rather than one per pair."""
        where = (rung, candidate)  # seat_key
        assert where not in self._buckets, "an entry is filled once"
        self._buckets[where] = members
        if marks:
            self._marks[where] = marks

    def eligible(self) -> tuple[str, ...]:
        """The seated connections in pool order (their first entry, then file order);
        kept only with ``track``."""
        return self._eligible.ids()

    def leader(self) -> str | None:
        """The first of ``eligible``: the connection seated first in the pool."""
        return self._eligible.first()

    def unverified(self) -> tuple[str, ...]:
        """The connections seated unverified somewhere, in pool order; only with ``track``."""
        return self._unverified.ids()

    def head(self) -> Rung | None:
        """The lowest rung with an entry; only with ``track``."""
        return next((rung for rung, n in zip(RUNGS, self.entries, strict=True) if n), None)

    def pool(self) -> list[Entry[M]]:
        """The entries with a member, in pool order, each with its 1-based position."""
        found: list[Entry[M]] = []
        for where in sorted(self._buckets):
            members = self._buckets[where]
            if not members:
                continue
            marks = self._marks.get(where)
            marked = tuple(sorted(marks)) if marks else ()
            found.append(Entry(position=len(found) + 1, rung=RUNGS[where[0]],
                               candidate=where[1], members=tuple(members),
                               marks=tuple(map(marks.__getitem__, marked))
                               if marks else (), marked=marked))
        return found


def position(rung: int, candidate: int, candidates: int,
             exists: Callable[[Rung, int], bool]) -> int:
    """The 1-based position of the entry (rung, candidate) among ``candidates`` candidates,
    asking ``exists`` only about the entries before it in pool order: what ``why`` needs to
    place one connection's entries without seating the fleet."""
    key = seat_key(rung, candidate)
    before = sum(1 for on in range(rung + 1) for other in range(candidates)
                 if seat_key(on, other) < key and exists(RUNGS[on], other))
    return before + 1


# --- R15: expiring-first ----------------------------------------------------------------------

_SECONDS_PER_HOUR = 3600.0


class Urgency(NamedTuple):
    """R15: how fast one admitted pair's quota must be burnt to be used before it resets,
    in percent of a weight-1 seat per hour, and the window that says so."""

    rate: float
    window: str | None
    """The window whose expiry counts; None when nothing of the pair can expire unused."""
    reset_at: datetime | None
    left: float
    """The window's remaining percent: what can still expire unused."""
    weight: float
    why_zero: str = ""
    """Why the rate is 0 when no window counts: ``quota unknown``, ``no reset known``,
    ``unlimited``, ``nothing left``."""


def _no_urgency(why: str, weight: float) -> Urgency:
    return Urgency(0.0, None, None, 0.0, weight, why)


def _resets_last(limited: Sequence[Window]) -> Window | None:
    """The several-windows rule (docs/rules.md, R15): of the limited windows with a reset,
    the one that resets last (of those resetting at that instant, the one with least left,
    which stops the others first); None when no window gives a reset."""
    last: Window | None = None
    for window in limited:
        reset = window.reset_at
        if reset is None:
            continue
        if last is None or (reset, -figure(window)) > (last.reset_at, -figure(last)):
            last = window
    return last


def urgency(reading: Reading | None, model: str, weight: float, now: datetime) -> Urgency:
    """R15's urgency of an admitted pair whose quota verdict read ``reading`` (None for an
    unknown verdict): ``remaining × weight / hours until the reset`` of the current limited
    window that applies to ``model`` and resets last (``_resets_last``).

    The several-windows rule, chosen by the what-if's regret (docs/rules.md, R15): a
    shorter window refills before the longer one runs out, so what a seat can lose for good
    is the longest window's remaining quota; ordering by a shorter window's rate spends a
    seat whose weekly quota outlasts the week while another's lapses. Unlimited windows
    neither expire nor count.
    """
    if reading is None:
        return _no_urgency("quota unknown", weight)
    limited: list[Window] = []
    unlimited = False
    for window in reading.all_windows():
        if not window.applies_to(model) or not is_current(window, now):
            continue
        if window.unlimited:
            unlimited = True
        else:
            limited.append(window)
    last = _resets_last(limited)
    if last is None or last.reset_at is None:
        return _no_urgency("unlimited" if unlimited and not limited else "no reset known",
                           weight)
    left = figure(last)
    # as ``rate_at`` computes it, to the last bit: the stepper sorts by that one
    rate = left * weight * _SECONDS_PER_HOUR / (last.reset_at - now).total_seconds()
    found = Urgency(rate, last.name, last.reset_at, left, weight)
    if rate > 0:
        return found
    return found._replace(rate=0.0, why_zero="nothing left to expire")


Terms: TypeAlias = tuple[tuple[float, datetime], ...]
"""R15's urgency as a function of time until the next change of its inputs: per counted
window, ``expiring × weight`` and its reset; the rate at ``t`` is the highest
``expiring × weight / hours from t to the reset`` (``rate_at``)."""


def urgency_terms(reading: Reading | None, model: str, weight: float,
                  now: datetime) -> Terms:
    """The terms of ``urgency`` at now: the window that counts (the one that resets last),
    with its remaining quota, weighted. They hold until the window resets or another
    reading arrives, both change instants of the connection (``changes``)."""
    if reading is None:
        return ()
    last = _resets_last([window for window in reading.all_windows()
                         if window.applies_to(model) and is_current(window, now)
                         and not window.unlimited])
    if last is None or last.reset_at is None or figure(last) <= 0:
        return ()
    return ((figure(last) * weight, last.reset_at),)


def rate_at(terms: Terms, at: datetime) -> float:
    """The urgency the terms give at ``at`` (0 once every window has reset)."""
    return max((value * _SECONDS_PER_HOUR / (reset - at).total_seconds()
                for value, reset in terms if reset > at), default=0.0)


def verdict_terms(verdict: Verdict | None, model: str, weight: float,
                  now: datetime) -> Terms:
    """``urgency_terms`` of an admitted pair from its quota verdict: the reading a usable
    verdict read; an unknown verdict (an unverified seat) has none."""
    usable = verdict is not None and verdict.kind == "usable"
    return urgency_terms(verdict.reading if usable and verdict is not None else None, model,
                         weight, now)


def pool_order(entries: Sequence[Entry[M]]) -> tuple[list[int], list[int]]:
    """The connections of a pool in the order of their first seat, and the unverified ones
    in the order of their first unverified seat (what ``Seating.eligible`` and
    ``unverified`` give for the pool R12 seats, for a reordered one)."""
    seen: dict[int, None] = {}
    shaky: dict[int, None] = {}
    for entry in entries:
        seen.update(dict.fromkeys(entry.members))
        shaky.update(dict.fromkeys(entry.marked))
    return list(seen), list(shaky)


def urgency_reason(found: Urgency, now: datetime) -> str:
    """One position's reason: ``5h resets in 1h57m with 40% left: 20.5%/h``."""
    if found.window is None or found.reset_at is None:
        return f"{found.why_zero}: 0%/h"
    text = (f"{found.window} resets in {_until((found.reset_at - now).total_seconds())} "
            f"with {timefmt.pct(found.left)} left")
    if found.weight != 1.0:
        text += f", weight {found.weight:g}"
    return f"{text}: {rate_text(found.rate)}"


def _until(seconds: float) -> str:
    """How long until a reset, as the reasons say it: ``45m``, ``1h57m``, ``3d00h``."""
    minutes = max(round(seconds / 60), 1)
    return f"{minutes}m" if minutes < 60 else timefmt.hours_and_minutes(minutes)


def rate_text(rate: float) -> str:
    """An urgency as the reasons print it: ``20.5%/h``."""
    return f"{rate:.1f}%/h" if rate else "0%/h"


QUOTA_RUNG_INDEXES = frozenset(RUNG_INDEX[rung] for rung in QUOTA_RUNGS)
"""The places in ``RUNGS`` of the rungs R15 reorders."""


def expiring_first(entries: Sequence[Entry[M]],
                   rates: Callable[[Entry[M]], Sequence[float]]) -> list[Entry[M]]:
    """R15 on a seated pool (``Seating.pool``): within each quota rung, each allowlist by
    its members' rates (``rates(entry)``, one per member in member order: what ``rate_at``
    or ``urgency`` gives the pair of that member and the entry's candidate), highest first,
    and the rung's entries by their highest member's rate; stable sorts, so ties keep R12's
    order; paid rungs as they stand. The marks follow their members; positions are
    renumbered."""
    reordered: list[Entry[M]] = []
    group: list[tuple[float, Entry[M]]] = []

    def flush() -> None:
        group.sort(key=lambda item: -item[0])
        reordered.extend(entry for _, entry in group)
        group.clear()

    for entry in entries:
        if group and group[-1][1].rung != entry.rung:
            flush()
        if RUNG_INDEX[entry.rung] not in QUOTA_RUNG_INDEXES:
            reordered.append(entry)
            continue
        seated = entry.members
        rated = rates(entry)
        # highest first, stable: the places sorted by their negated rates (no key function
        # called per member: a plan sorts every admitted quota pair)
        negated = [-value for value in rated]
        members = tuple(map(seated.__getitem__, sorted(range(len(seated)),
                                                       key=negated.__getitem__)))
        marks, marked = entry.marks, entry.marked
        if marks and members != seated:
            by_member = dict(zip(marked, marks, strict=True))
            marked = tuple(filter(by_member.__contains__, members))
            marks = tuple(map(by_member.__getitem__, marked))
        group.append((max(rated),
                      entry._replace(members=members, marks=marks, marked=marked)))
    flush()
    return [entry._replace(position=place) for place, entry in enumerate(reordered, 1)]

