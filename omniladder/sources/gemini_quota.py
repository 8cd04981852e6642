"""Gemini Code Assist ``retrieveUserQuota`` JSON → one reading.

Shape (SOURCES.md, Gemini CLI; google-gemini/gemini-cli's Code Assist types):
``{"buckets": [{"modelId", "tokenType", "remainingFraction" (0–1 REMAINING),
"resetTime" (RFC 3339)}]}``; every bucket is model-specific.

* Each bucket is one window named after its ``modelId``, which the window-scope catalog
  scopes to the model of that name. When one model has several buckets (token types), each
  is named ``<modelId> (<tokenType>)`` so none hides another; the catalog scopes those to the
  model too (``{window_base}``).
* remaining = ``remainingFraction`` × 100 (0.25 is 25 %). A bucket without
  ``remainingFraction`` has no value and is dropped (reported, never read as 0).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from omniladder.errors import InputError
from omniladder.sources import fields
from omniladder.sources.common import SourceReading, SourceWindow

NAME = "gemini-quota"
OWN_KEYS = frozenset({"buckets"})
"""Top-level keys of a retrieveUserQuota response; a document without it is not one (SPEC §6)."""


def parse(document: Any, file: str, checked_at: datetime) -> SourceReading:
    """The reading one ``retrieveUserQuota`` response gives, observed at ``checked_at``."""
    top = fields.top_object(document, file)
    buckets = fields.array(top.get("buckets"), file, "buckets") or []
    parsed: list[tuple[str, str | None, SourceWindow]] = []
    for index, value in enumerate(buckets):
        path = f"buckets[{index}]"
        bucket = fields.obj(value, file, path)
        if bucket is None:
            continue
        model = fields.text(bucket.get("modelId"), file, f"{path}.modelId")
        if model is None:
            raise InputError("a bucket without a modelId cannot be scoped to a model",
                             file=file, field=f"{path}.modelId")
        token_type = fields.text(bucket.get("tokenType"), file, f"{path}.tokenType")
        parsed.append((model, token_type, SourceWindow(
            name=model,
            remaining_percent=fields.remaining_from_fraction(
                bucket.get("remainingFraction"), file, f"{path}.remainingFraction"),
            reset_at=fields.instant(bucket.get("resetTime"), file, f"{path}.resetTime"))))
    return SourceReading(checked_at=checked_at, windows=tuple(_named(parsed)))


def _named(parsed: list[tuple[str, str | None, SourceWindow]]) -> list[SourceWindow]:
    """Buckets named after their model; a model's several buckets told apart by token type."""
    per_model = Counter(model for model, _, _ in parsed)
    qualifiers = Counter((model, token_type) for model, token_type, _ in parsed)
    seen: Counter[tuple[str, str | None]] = Counter()
    out: list[SourceWindow] = []
    for model, token_type, window in parsed:
        if per_model[model] == 1:
            out.append(window)
            continue
        seen[(model, token_type)] += 1
        qualifier = token_type or "bucket"
        if qualifiers[(model, token_type)] > 1 or token_type is None:
            qualifier = f"{qualifier} {seen[(model, token_type)]}"
        out.append(SourceWindow(name=f"{model} ({qualifier})",
                                remaining_percent=window.remaining_percent,
                                reset_at=window.reset_at))
    return out
