"""What the ledger recorded, read once (SPEC §10.1, §10.4): the audited id's requests in the
span, the token units each connection served (what the consumption fit reads), and what the
recorded requests paid and where they were served (what the ``as-is`` replay is held to)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from omniladder.analyses.whatif.demand import Request
from omniladder.engine.fleet import Fleet
from omniladder.inputs.ledger.read import Ledger
from omniladder.models import PAID_RUNGS, RUNGS

Price = Callable[[int, str, Request], float | None]


@dataclass(slots=True, kw_only=True)
class Recorded:
    requests: list[Request] = field(default_factory=list)
    """The demand, in time order."""
    served: dict[str, list[tuple[datetime, float]]] = field(default_factory=dict)
    """Per connection, (instant, token units) of every request it served, whatever was
    asked for: what its quota windows saw."""
    served_by_model: dict[str, dict[str, list[tuple[datetime, float]]]] = field(
        default_factory=dict)
    """The same requests per connection and model: what a window that limits some models
    saw."""
    paid_usd: float = 0.0
    served_by_rung: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RUNGS, 0))
    unknown: int = 0
    """Served requests of a pair the connections file does not have."""
    unpriced: int = 0
    failed_everywhere: int = 0
    first: datetime | None = None
    last: datetime | None = None
    """The ledger's first and last events."""


def _request(at: datetime, data: dict[str, Any], connection: str | None) -> Request:
    cost = data.get("cost_usd")
    return Request(at=at, tokens_in=data.get("tokens_in"), tokens_out=data.get("tokens_out"),
                   cache_read=data.get("tokens_cache_read"),
                   cache_write=data.get("tokens_cache_write"), connection=connection,
                   model=data.get("model") if connection is not None else None,
                   cost_usd=float(cost) if cost else None)


def read_recorded(ledger: Ledger, ours: frozenset[str], all_requests: bool,
                  start: datetime | None, end: datetime | None, fleet: Fleet,
                  price: Price) -> Recorded:
    """One read of the ledger. A request is the audited id's when its ``requested`` names it
    (or names nothing, with ``all_requests``), as ``audit traffic`` selects (SPEC §7.3);
    a request whose every attempt failed (its ``request_id`` never served) is demand too,
    at its first attempt."""
    found = Recorded()
    failed: dict[str, tuple[datetime, dict[str, Any]]] = {}
    served_ids: set[str] = set()
    index_of = fleet.index
    pairs: dict[tuple[str, str], tuple[int, str] | None] = {}
    """(connection, model) → (its index, its pair's rung); None for a pair the fleet lacks
    (bounded by the fleet's pairs and the few a ledger adds)."""
    for _, at, connection, status, data in ledger.records():
        request_id = data.get("request_id")
        requested = data.get("requested")
        ours_too = requested in ours or (requested is None and all_requests)
        in_span = (start is None or at >= start) and (end is None or at <= end)
        if status != "served":
            if ours_too and in_span and request_id is not None and request_id not in failed:
                failed[request_id] = (at, data)
            continue
        request = _request(at, data, connection)
        item = (at, request.units)
        found.served.setdefault(connection, []).append(item)
        found.served_by_model.setdefault(connection, {}).setdefault(
            data["model"], []).append(item)
        if request_id is not None:
            served_ids.add(request_id)
        if not (ours_too and in_span):
            continue
        found.requests.append(request)
        model = data["model"]
        key = (connection, model)
        if key in pairs:
            pair = pairs[key]
        else:
            index = index_of.get(connection)
            found_pair = None if index is None else next(
                (p for p in fleet.pairs_of(index) if p.model == model), None)
            pair = pairs[key] = (None if index is None or found_pair is None
                                 else (index, found_pair.rung))
        if pair is None:
            found.unknown += 1
            continue
        index, rung = pair
        found.served_by_rung[rung] += 1
        if rung in PAID_RUNGS:
            cost = request.cost_usd if request.cost_usd else price(index, model, request)
            if cost is None:
                found.unpriced += 1
            else:
                found.paid_usd += cost
    for request_id, (at, data) in failed.items():
        if request_id not in served_ids:
            found.requests.append(_request(at, data, None))
            found.failed_everywhere += 1
    scan = ledger.scan()  # the read above scanned the ledger first: its span, kept
    found.first, found.last = scan.first, scan.last
    found.requests.sort(key=lambda r: r.at)
    for served in found.served.values():
        served.sort()
    for by_model in found.served_by_model.values():
        for served in by_model.values():
            served.sort()
    return found
