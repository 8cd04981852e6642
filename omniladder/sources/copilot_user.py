"""GitHub's ``GET /copilot_internal/user`` JSON → one reading.

Shape (SOURCES.md, GitHub Copilot; VS Code Copilot Chat's own parser): ``quota_snapshots``
``{chat, completions, premium_interactions}``, each ``{entitlement, remaining,
percent_remaining (0–100 REMAINING), unlimited, overage_permitted, overage_count,
quota_reset_at (epoch s, some versions), timestamp_utc (some versions)}``, and the
top-level ``quota_reset_date_utc`` (ISO) / ``quota_reset_date`` (YYYY-MM-DD).

* Each snapshot is one window named by its key; ``unlimited: true`` → an unlimited window,
  else ``percent_remaining`` as is (already remaining; below 0, overage drawn, reads as 0).
* Reset: the snapshot's ``quota_reset_at``, else ``quota_reset_date_utc``, else
  ``quota_reset_date`` at 00:00Z.
* ``premium_interactions.overage_permitted`` false → observed ``hard-stop``, true →
  ``meters-to-paid``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from omniladder.models import ObservedOverage
from omniladder.sources import fields
from omniladder.sources.common import SourceReading, SourceWindow

NAME = "copilot-user"
OWN_KEYS = frozenset({"quota_snapshots", "quota_reset_date", "quota_reset_date_utc",
                      "copilot_plan", "access_type_sku", "monthly_quotas",
                      "limited_user_quotas", "limited_user_reset_date"})
"""Top-level keys of a copilot_internal/user response (paid and free plans); a document with
none of them is not one (SPEC §6)."""
SNAPSHOTS = "quota_snapshots"
OVERAGE_WINDOW = "premium_interactions"


def parse(document: Any, file: str, checked_at: datetime) -> SourceReading:
    """The reading one ``copilot_internal/user`` response gives, observed at ``checked_at``."""
    top = fields.top_object(document, file)
    plan_reset = (fields.instant(top.get("quota_reset_date_utc"), file, "quota_reset_date_utc")
                  or fields.calendar_day(top.get("quota_reset_date"), file, "quota_reset_date"))
    snapshots = fields.obj(top.get(SNAPSHOTS), file, SNAPSHOTS) or {}
    windows: list[SourceWindow] = []
    overage: ObservedOverage | None = None
    for key, value in snapshots.items():
        path = f"{SNAPSHOTS}.{key}"
        snapshot = fields.obj(value, file, path)
        if snapshot is None:
            continue
        reset_at = fields.epoch(snapshot.get("quota_reset_at"), file,
                                f"{path}.quota_reset_at") or plan_reset
        if fields.flag(snapshot.get("unlimited"), file, f"{path}.unlimited"):
            windows.append(SourceWindow(name=key, unlimited=True, reset_at=reset_at))
        else:
            windows.append(SourceWindow(
                name=key,
                remaining_percent=fields.remaining_percent(
                    snapshot.get("percent_remaining"), file, f"{path}.percent_remaining"),
                reset_at=reset_at))
        if key == OVERAGE_WINDOW:
            permitted = fields.flag(snapshot.get("overage_permitted"), file,
                                    f"{path}.overage_permitted")
            if permitted is not None:
                overage = "meters-to-paid" if permitted else "hard-stop"
    return SourceReading(checked_at=checked_at, windows=tuple(windows), overage=overage)
