"""The JSON view (SPEC §4.2): plain json.dumps of plain data, never through rich."""

from __future__ import annotations

import json
from typing import Any

from omniladder import timefmt
from omniladder.plan import FORMAT_VERSION, Plan


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
        "pool": [
            {"position": e.position, "rung": e.rung, "provider": e.provider, "model": e.model,
             "allowed_connection_ids": list(e.allowed_connection_ids),
             "unverified_connection_ids": list(e.unverified_connection_ids),
             "unverified": [{"connection_id": u.connection_id, "reason": u.reason,
                             "detail": u.detail} for u in e.unverified]}
            for e in plan.pool
        ],
        "excluded": [
            {"connection_id": x.connection_id, "provider": x.provider, "model": x.model,
             "rung": x.rung, "reason": x.reason, "detail": x.detail, "fix": x.fix}
            for x in plan.excluded
        ],
        "connections": [
            {"id": c.id, "provider": c.provider, "auth_type": c.auth_type,
             "billing": c.billing, "overage": c.overage, "billing_source": c.billing_source,
             "catalog_file": c.catalog_file, "override": c.override,
             "overage_source": c.overage_source}
            for c in plan.connections
        ],
        "clamps": [
            {"connection_id": c.connection_id,
             "rate_limited_until": timefmt.iso(c.rate_limited_until),
             "clamped_to": timefmt.iso(c.clamped_to), "cooling": c.cooling}
            for c in plan.clamps
        ],
        "warnings": list(plan.warnings),
        "summary": plan.summary,
    }


def plan_json(plan: Plan) -> str:
    return dumps(plan_document(plan))


def dumps(document: Any) -> str:
    """Exactly ``json.dumps(document, indent=2, ensure_ascii=False)``, several times faster.

    With an indent the standard library encodes in pure Python, one generator step per
    token; a plan of 100,000 connections has millions. Here a dict or list of plain scalars
    (most of a plan: allowlists, exclusions, connection records) is encoded in one join.
    Anything unexpected falls back to ``json.dumps`` itself.
    """
    parts: list[str] = []
    try:
        _encode(document, "\n", parts)
    except _Unexpected:
        return json.dumps(document, indent=2, ensure_ascii=False)
    return "".join(parts)


class _Unexpected(Exception):
    """A value this encoder leaves to the standard library (a non-str key, a custom type)."""


_quote = json.encoder.encode_basestring  # the C version when available; ensure_ascii=False
_INF = float("inf")


def _scalar(value: Any) -> str | None:
    """A scalar as json.dumps writes it; None for a container."""
    kind = type(value)
    if kind is str:
        return _quote(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value:
            return "NaN"
        if value == _INF:
            return "Infinity"
        if value == -_INF:
            return "-Infinity"
        return float.__repr__(value)
    if kind is dict or kind is list or kind is tuple:
        return None
    raise _Unexpected


def _encode(value: Any, newline: str, out: list[str]) -> None:
    """Append ``value`` at the indent ``newline`` carries ("\n" plus two spaces a level)."""
    kind = type(value)
    if kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        scalars: list[str] = []
        for key, item in value.items():
            if type(key) is not str:
                raise _Unexpected
            text = _scalar(item)
            if text is None:
                break
            scalars.append(_quote(key) + ": " + text)
        else:
            out.append("{" + inner + ("," + inner).join(scalars) + newline + "}")
            return
        out.append("{")
        first = True
        for key, item in value.items():
            out.append((inner if first else "," + inner) + _quote(key) + ": ")
            first = False
            text = _scalar(item)
            if text is None:
                _encode(item, inner, out)
            else:
                out.append(text)
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        texts = [_scalar(item) for item in value]
        if None not in texts:
            out.append("[" + inner + ("," + inner).join(texts) + newline + "]")  # type: ignore[arg-type]
            return
        out.append("[")
        for index, (item, text) in enumerate(zip(value, texts, strict=True)):
            out.append(inner if index == 0 else "," + inner)
            if text is None:
                _encode(item, inner, out)
            else:
                out.append(text)
        out.append(newline + "]")
    else:
        text = _scalar(value)
        assert text is not None
        out.append(text)
