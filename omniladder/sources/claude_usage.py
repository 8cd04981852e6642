"""Claude's OAuth usage JSON (``GET /api/oauth/usage``) → one reading.

Shape (SOURCES.md, Claude; several third-party clients agree): top-level windows
``five_hour``, ``seven_day``, ``seven_day_opus``, ``seven_day_sonnet``,
``seven_day_oauth_apps``, … each ``null`` or ``{"utilization": percent USED 0–100,
"resets_at": ISO or null}``, and ``extra_usage.is_enabled``.

* Every top-level key whose value is an object carrying ``utilization`` is a window named by
  the key, so a window Anthropic adds later is read too; which models it limits is the
  window-scope catalog's business (unmatched: every model). ``extra_usage`` also carries a
  ``utilization`` (of the paid overage allowance): it is no plan window and is not one here.
* A ``null`` window is absent, not 0; a window whose ``utilization`` is null has no value.
* remaining = 100 − utilization.
* ``extra_usage.is_enabled`` true → observed overage ``meters-to-paid``, false →
  ``hard-stop``, absent → none.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from omniladder.models import ObservedOverage
from omniladder.sources import fields
from omniladder.sources.common import SourceReading, SourceWindow

NAME = "claude-usage"
OWN_KEYS = frozenset({"five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet",
                      "seven_day_oauth_apps", "extra_usage", "limits", "spend"})
"""Top-level keys of a usage response; a document with none of them is not one (SPEC §6)."""
OVERAGE_KEY = "extra_usage"


def parse(document: Any, file: str, checked_at: datetime) -> SourceReading:
    """The reading one usage response gives, observed at ``checked_at``."""
    top = fields.top_object(document, file)
    windows: list[SourceWindow] = []
    for key, value in top.items():
        if key == OVERAGE_KEY or not isinstance(value, dict) or "utilization" not in value:
            continue
        windows.append(SourceWindow(
            name=key,
            remaining_percent=fields.remaining_from_used(
                value.get("utilization"), file, f"{key}.utilization"),
            reset_at=fields.instant(value.get("resets_at"), file, f"{key}.resets_at"),
        ))
    return SourceReading(checked_at=checked_at, windows=tuple(windows),
                         overage=_overage(top.get(OVERAGE_KEY), file))


def _overage(value: Any, file: str) -> ObservedOverage | None:
    extra = fields.obj(value, file, OVERAGE_KEY)
    if extra is None:
        return None
    enabled = fields.flag(extra.get("is_enabled"), file, f"{OVERAGE_KEY}.is_enabled")
    if enabled is None:
        return None
    return "meters-to-paid" if enabled else "hard-stop"
