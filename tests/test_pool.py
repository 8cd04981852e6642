"""The one seating of the pool (``engine/pool.py``, R11 and R12): moved connection by
connection, as the stepper moves it, it holds what a seating made at once holds; its counts,
its order of connections and ``position`` agree with the entries it lists."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from omniladder.engine.pool import RUNG_INDEX, Seat, Seating, position
from omniladder.models import RUNGS

CONNECTIONS = 6
CANDIDATES = 5

seat_sets = st.lists(
    st.sets(st.tuples(st.integers(0, len(RUNGS) - 1), st.integers(0, CANDIDATES - 1),
                      st.booleans()), max_size=4),
    min_size=CONNECTIONS, max_size=CONNECTIONS)


def _seats(found: set[tuple[int, int, bool]]) -> list[Seat[bool]]:
    # a candidate sits on one rung per connection
    by_candidate = {candidate: (rung, shaky) for rung, candidate, shaky in sorted(found)}
    return [(rung, candidate, True if shaky else None)
            for candidate, (rung, shaky) in by_candidate.items()]


def _made_at_once(state: list[list[Seat[bool]]]) -> Seating[bool]:
    seating: Seating[bool] = Seating([f"c{i}" for i in range(CONNECTIONS)], track=True)
    for index, seats in enumerate(state):
        if seats:
            seating.place(index, seats, 1)
    return seating


@given(seat_sets, seat_sets, st.lists(st.integers(0, CONNECTIONS - 1), max_size=8))
def test_moving_connections_one_by_one_equals_seating_at_once(
        before: list[set[tuple[int, int, bool]]], after: list[set[tuple[int, int, bool]]],
        moves: list[int]) -> None:
    state = [_seats(found) for found in before]
    moving = _made_at_once(state)
    for index in moves:
        moving.place(index, state[index], -1)
        state[index] = _seats(after[index])
        moving.place(index, state[index], 1)
    fresh = _made_at_once(state)
    assert moving.pool() == fresh.pool()
    assert moving.eligible() == fresh.eligible()
    assert moving.unverified() == fresh.unverified()
    assert (moving.entries, moving.connections) == (fresh.entries, fresh.connections)


@given(seat_sets)
def test_counts_order_and_positions_read_off_the_entries(
        found: list[set[tuple[int, int, bool]]]) -> None:
    state = [_seats(seats) for seats in found]
    seating = _made_at_once(state)
    pool = seating.pool()
    # R11 then R12: rung first, then candidate order; positions 1..n
    assert [(RUNG_INDEX[e.rung], e.candidate) for e in pool] == sorted(
        (RUNG_INDEX[e.rung], e.candidate) for e in pool)
    assert [e.position for e in pool] == list(range(1, len(pool) + 1))
    for rung_index, rung in enumerate(RUNGS):
        on = [e for e in pool if e.rung == rung]
        assert seating.entries[rung_index] == len(on)
        assert seating.connections[rung_index] == len({m for e in on for m in e.members})
    first_seen = dict.fromkeys(f"c{m}" for e in pool for m in e.members)
    assert seating.eligible() == tuple(first_seen)
    assert seating.head() == (pool[0].rung if pool else None)
    # make_plan fills each entry at once, in file order: the same seating
    filled: Seating[bool] = Seating([f"c{i}" for i in range(CONNECTIONS)])
    for entry in pool:
        flagged = {m: True for m in entry.members
                   if any(s[:2] == (RUNG_INDEX[entry.rung], entry.candidate) and s[2]
                          for s in state[m])}
        filled.fill(RUNG_INDEX[entry.rung], entry.candidate, list(entry.members), flagged)
    assert filled.pool() == pool
    existing = {(e.rung, e.candidate) for e in pool}
    for entry in pool:
        assert position(RUNG_INDEX[entry.rung], entry.candidate, CANDIDATES,
                        lambda rung, candidate: (rung, candidate) in existing) == entry.position
        assert list(entry.members) == sorted(entry.members)
