"""The JSON view (SPEC §4.2): plain json.dumps of plain data, never through rich."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TextIO

from omniladder import timefmt
from omniladder.engine.records import FORMAT_VERSION, ConnectionRecord, Plan, PoolEntry
from omniladder.rendering.json_text import dumps, write_json

__all__ = ["dumps", "plan_document", "plan_json", "write_plan_json"]



def plan_document(plan: Plan) -> dict[str, Any]:
    """The §4.2 document as plain data, keys in the documented order."""
    return {
        "format_version": FORMAT_VERSION,
        "auto_id": plan.auto_id.text,
        "category": plan.auto_id.category,
        "tier": plan.auto_id.tier,
        "now": timefmt.iso(plan.now),
        "now_source": plan.now_source,
        "settings": plan.settings,
        "rungs": [
            {"rung": r.rung, "state": r.state, "candidates": r.candidates,
             "connections": r.connections, "budget_usd": r.budget_usd,
             "spent_usd": r.spent_usd, "note": r.note}
            for r in plan.rungs
        ],
        "pool": ([_entry(e) for e in plan.pool] if plan.settings.get("within_rung_order")
                 else [{"position": e.position, "rung": e.rung, "provider": e.provider,
                        "model": e.model,
                        "allowed_connection_ids": list(e.allowed_connection_ids),
                        "unverified_connection_ids": list(e.unverified_connection_ids),
                        "unverified": [{"connection_id": u.connection_id, "reason": u.reason,
                                        "detail": u.detail} for u in e.unverified]}
                       for e in plan.pool]),
        "excluded": [
            {"connection_id": x.connection_id, "provider": x.provider, "model": x.model,
             "rung": x.rung, "reason": x.reason, "detail": x.detail, "fix": x.fix}
            for x in plan.excluded
        ],
        "connections": _with_seats([_connection(c) for c in plan.connections] if any(
            c.capacity_weight is not None for c in plan.connections) else [
            {"id": c.id, "provider": c.provider, "auth_type": c.auth_type,
             "billing": c.billing, "overage": c.overage, "billing_source": c.billing_source,
             "catalog_file": c.catalog_file, "override": c.override,
             "overage_source": c.overage_source}
            for c in plan.connections], plan),
        "clamps": [
            {"connection_id": c.connection_id,
             "rate_limited_until": timefmt.iso(c.rate_limited_until),
             "clamped_to": timefmt.iso(c.clamped_to), "cooling": c.cooling}
            for c in plan.clamps
        ],
        "warnings": list(plan.warnings),
        "summary": plan.summary,
    }


def _entry(e: PoolEntry) -> dict[str, Any]:
    """One pool entry of an ``expiring-first`` plan; on a quota rung with
    ``order_reasons``, R15's reason for each allowed connection's place, and
    ``order_stale_at``, the soonest reset among them (a plan made with ``declared`` writes
    its entries inline, as before the setting existed)."""
    found: dict[str, Any] = {
        "position": e.position, "rung": e.rung, "provider": e.provider, "model": e.model,
        "allowed_connection_ids": list(e.allowed_connection_ids),
        "unverified_connection_ids": list(e.unverified_connection_ids),
        "unverified": [{"connection_id": u.connection_id, "reason": u.reason,
                        "detail": u.detail} for u in e.unverified]}
    if e.order:
        found["order_reasons"] = [o.reason for o in e.order]
        resets = [o.reset_at for o in e.order if o.reset_at is not None]
        found["order_stale_at"] = _iso(min(resets)) if resets else None
    return found


def _iso(instant: datetime) -> str:
    return timefmt.iso(instant)


def _connection(c: ConnectionRecord) -> dict[str, Any]:
    """One connection record of a fleet where some weight is given; ``capacity_weight``
    only when the connections file gives it."""
    found: dict[str, Any] = {
        "id": c.id, "provider": c.provider, "auth_type": c.auth_type,
        "billing": c.billing, "overage": c.overage, "billing_source": c.billing_source,
        "catalog_file": c.catalog_file, "override": c.override,
        "overage_source": c.overage_source}
    if c.capacity_weight is not None:
        found["capacity_weight"] = c.capacity_weight
    return found


def _with_seats(records: list[dict[str, Any]], plan: Plan) -> list[dict[str, Any]]:
    """The connection records, each with its reserve and seat price when it sets them
    (additive keys, SPEC §9); the records as they are when no connection sets one."""
    for c in plan.connections:  # a loop: cheaper than attrgetter's lookups (seat_flags)
        if c.reserve_percent is not None or c.seat_price_usd is not None \
                or c.seat_period is not None:
            break
    else:
        return records
    for record, c in zip(records, plan.connections, strict=True):
        if c.reserve_percent is not None:
            record["reserve_percent"] = c.reserve_percent
        if c.seat_price_usd is not None:
            record["seat_price_usd"] = c.seat_price_usd
        if c.seat_period is not None:
            record["seat_period"] = c.seat_period
    return records


def plan_json(plan: Plan) -> str:
    return dumps(plan_document(plan))


def write_plan_json(plan: Plan, out: TextIO) -> None:
    """The plan document and a newline, written a piece at a time."""
    write_json(plan_document(plan), out)
