"""Gemini Code Assist ``retrieveUserQuota`` JSON → one reading.

Shape (docs/sources.md#gemini-quota; google-gemini/gemini-cli's Code Assist types):
``{"buckets": [{"modelId", "tokenType", "remainingFraction" (0–1 REMAINING),
"resetTime" (RFC 3339), "remainingAmount" (a count, often a string)}]}``; every bucket is
model-specific.

* Each bucket is one window named after its ``modelId``, which the window-scope catalog
  scopes to the model of that name and, through its ``[[aliases]]``, to every other model
  the bucket id is the quota of (``gemini-3-flash`` limits ``gemini-3.5-flash`` and
  ``gemini-3.8-flash`` too; docs/sources.md#gemini-quota has the table).
* A ``<model>_vertex`` twin bucket is the same model's quota on the Vertex route: its window
  is named ``<model> (vertex)``, so the catalog scopes it to that model too and the lower
  of the two figures decides (a router cannot tell which route a request draws on).
* When one model has several buckets on one route (token types), each is named
  ``<modelId> (<tokenType>)`` (``<model> (vertex <tokenType>)`` on the Vertex route) so none
  hides another; the catalog scopes those to the model too (``{window_base}``).
* remaining = ``remainingFraction`` × 100 (0.25 is 25 %). Without ``remainingFraction``, a
  ``remainingAmount`` of 0 is 0 % (nothing left, whatever the limit); any other bucket
  without a fraction has no value and is dropped (reported, never read as 0).
* ``resetTime`` at or before the Unix epoch (``1970-01-01T00:00:00Z``) is no reset (SPEC §2.2
  v1.2): with ``remainingFraction: 0`` it marks a model this tier does not serve, read as
  0 % with no reset.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any, NamedTuple

from omniladder.errors import InputError
from omniladder.sources import fields
from omniladder.sources.common import SourceReading, SourceWindow

NAME = "gemini-quota"
OWN_KEYS = frozenset({"buckets"})
"""Top-level keys of a retrieveUserQuota response; a document without it is not one (SPEC §6)."""
VERTEX_SUFFIX = "_vertex"
VERTEX_ROUTE = "vertex"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class _Bucket(NamedTuple):
    model: str
    """The bucket's model id without a route suffix."""
    route: str | None
    token_type: str | None
    remaining_percent: float | None
    reset_at: datetime | None


def parse(document: Any, file: str, checked_at: datetime) -> SourceReading:
    """The reading one ``retrieveUserQuota`` response gives, observed at ``checked_at``."""
    top = fields.top_object(document, file)
    buckets = fields.array(top.get("buckets"), file, "buckets") or []
    parsed: list[_Bucket] = []
    for index, value in enumerate(buckets):
        path = f"buckets[{index}]"
        bucket = fields.obj(value, file, path)
        if bucket is None:
            continue
        model_id = fields.text(bucket.get("modelId"), file, f"{path}.modelId")
        if model_id is None:
            raise InputError("a bucket without a modelId cannot be scoped to a model",
                             file=file, field=f"{path}.modelId")
        fields.name(model_id, file, f"{path}.modelId")
        model, route = model_id, None
        if model_id.endswith(VERTEX_SUFFIX) and len(model_id) > len(VERTEX_SUFFIX):
            model, route = model_id[:-len(VERTEX_SUFFIX)], VERTEX_ROUTE
        token_type = fields.text(bucket.get("tokenType"), file, f"{path}.tokenType")
        if token_type is not None:
            fields.name(token_type, file, f"{path}.tokenType")
        reset_at = fields.instant(bucket.get("resetTime"), file, f"{path}.resetTime")
        if reset_at is not None and reset_at <= _EPOCH:
            reset_at = None
        parsed.append(_Bucket(model, route, token_type, _remaining(bucket, file, path),
                              reset_at))
    return SourceReading(checked_at=checked_at, windows=tuple(_named(parsed)))


def _remaining(bucket: dict[str, Any], file: str, path: str) -> float | None:
    fraction = fields.remaining_from_fraction(bucket.get("remainingFraction"), file,
                                              f"{path}.remainingFraction")
    if fraction is not None:
        return fraction
    amount = _amount(bucket.get("remainingAmount"), file, f"{path}.remainingAmount")
    return 0.0 if amount == 0 else None


def _amount(value: Any, file: str, path: str) -> float | None:
    """``remainingAmount``: a count ≥ 0, as a number or as a string (an int64 in the API)."""
    return fields.number_or_text(value, file, path, negative=False)


def _named(parsed: list[_Bucket]) -> list[SourceWindow]:
    """Buckets named after their model; a twin on another route marked with the route; a
    model's several buckets on one route told apart by token type."""
    per_route = Counter((b.model, b.route) for b in parsed)
    qualifiers = Counter((b.model, b.route, b.token_type) for b in parsed)
    seen: Counter[tuple[str, str | None, str | None]] = Counter()
    out: list[SourceWindow] = []
    for bucket in parsed:
        parts = [bucket.route] if bucket.route else []
        if per_route[(bucket.model, bucket.route)] > 1:
            key = (bucket.model, bucket.route, bucket.token_type)
            seen[key] += 1
            qualifier = bucket.token_type or "bucket"
            if qualifiers[key] > 1 or bucket.token_type is None:
                qualifier = f"{qualifier} {seen[key]}"
            parts.append(qualifier)
        name = f"{bucket.model} ({' '.join(parts)})" if parts else bucket.model
        out.append(SourceWindow(name=name, remaining_percent=bucket.remaining_percent,
                                reset_at=bucket.reset_at))
    return out
