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
from itertools import chain
from typing import Generic, NamedTuple, TypeAlias, TypeVar

from omniladder.models import RUNGS, Rung

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
            found.append(Entry(position=len(found) + 1, rung=RUNGS[where[0]],
                               candidate=where[1], members=tuple(members),
                               marks=tuple(map(marks.__getitem__, sorted(marks)))
                               if marks else ()))
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
