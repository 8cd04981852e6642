"""GitHub's ``GET /copilot_internal/user`` JSON → one reading.

Shape (docs/sources.md#copilot-user; VS Code Copilot Chat's own parser): ``quota_snapshots``
``{chat, completions, premium_interactions}``, each ``{entitlement, remaining,
percent_remaining (0–100 REMAINING), unlimited, overage_permitted, overage_count,
quota_reset_at (epoch s, some versions), timestamp_utc (some versions)}``, and the
top-level ``quota_reset_date_utc`` (ISO) / ``quota_reset_date`` (YYYY-MM-DD).

* Each snapshot is one window named by its key; ``unlimited: true`` → an unlimited window,
  else ``percent_remaining`` as is (already remaining; below 0, overage drawn, reads as 0).
* Without ``percent_remaining`` and without ``unlimited: true`` (responses published in 2026, e.g.
  ``{"entitlement": 1500, "remaining": -3821}``): ``entitlement: -1`` → unlimited; else
  remaining = ``quota_remaining`` (the same count with decimals), or ``remaining``,
  ÷ ``entitlement`` × 100; below 0 (past the allowance) reads as 0; more left than the
  entitlement is an error. An entitlement of 0, or none, gives no value: the window is
  dropped and counted, never read as exhausted.
* Reset: the snapshot's ``quota_reset_at``, else ``quota_reset_date_utc``, else
  ``quota_reset_date`` at 00:00Z. ``quota_reset_at: 0`` (every snapshot of live 2026
  responses) means "not given" (SPEC §2.2 v1.2: an instant at or before the epoch is none),
  so the top-level date holds.
* Copilot Free's older shape (VS Code's "legacy free SKU quota"): ``limited_user_quotas``
  ``{chat, completions}`` are the counts *left* and ``monthly_quotas`` the allowances, so
  each key is a window of that name at left ÷ allowance × 100; an allowance of 0, or none,
  gives no value. Reset: ``quota_reset_date_utc``, else ``quota_reset_date``, else
  ``limited_user_reset_date`` (YYYY-MM-DD) at 00:00Z. A ``quota_snapshots`` entry of the
  same name wins over it, as in VS Code.
* ``premium_interactions.overage_permitted`` false → observed ``hard-stop``, true →
  ``meters-to-paid``.
* Not read: ``token_based_billing`` (premium requests counted in AI credits; the same
  entitlement and remaining, no evidence about overage), ``credits_used`` (the used part of
  the entitlement, already in ``remaining``), ``has_quota`` (undocumented), ``overage_count``,
  ``timestamp_utc``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from omniladder.errors import InputError
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
FREE_LEFT = "limited_user_quotas"
FREE_ALLOWANCE = "monthly_quotas"
UNLIMITED_ENTITLEMENT = -1
"""``entitlement: -1`` is how responses without ``unlimited`` say a quota never limits."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse(document: Any, file: str, checked_at: datetime) -> SourceReading:
    """The reading one ``copilot_internal/user`` response gives, observed at ``checked_at``."""
    top = fields.top_object(document, file)
    plan_reset = _given(
        fields.instant(top.get("quota_reset_date_utc"), file, "quota_reset_date_utc")
        or fields.calendar_day(top.get("quota_reset_date"), file, "quota_reset_date"))
    windows = {window.name: window for window in _free_windows(top, file, plan_reset)}
    snapshots = fields.obj(top.get(SNAPSHOTS), file, SNAPSHOTS) or {}
    overage: ObservedOverage | None = None
    for key, value in snapshots.items():
        path = f"{SNAPSHOTS}.{key}"
        fields.name(key, file, path)
        snapshot = fields.obj(value, file, path)
        if snapshot is None:
            continue
        reset_at = _given(fields.epoch(snapshot.get("quota_reset_at"), file,
                                       f"{path}.quota_reset_at")) or plan_reset
        windows[key] = _window(key, snapshot, file, path, reset_at)
        if key == OVERAGE_WINDOW:
            permitted = fields.flag(snapshot.get("overage_permitted"), file,
                                    f"{path}.overage_permitted")
            if permitted is not None:
                overage = "meters-to-paid" if permitted else "hard-stop"
    return SourceReading(checked_at=checked_at, windows=tuple(windows.values()),
                         overage=overage)


def _free_windows(top: dict[str, Any], file: str,
                  plan_reset: datetime | None) -> list[SourceWindow]:
    """Copilot Free's older shape: ``limited_user_quotas`` (counts left) over
    ``monthly_quotas`` (the allowances), one window per key of ``limited_user_quotas``.

    Without it a Free seat whose chat allowance is spent would import no window at all and
    read as quota unknown, which ``auto/thrifty`` still serves.
    """
    left_counts = fields.obj(top.get(FREE_LEFT), file, FREE_LEFT)
    if left_counts is None:
        return []
    allowances = fields.obj(top.get(FREE_ALLOWANCE), file, FREE_ALLOWANCE) or {}
    reset_at = plan_reset or _given(fields.calendar_day(
        top.get("limited_user_reset_date"), file, "limited_user_reset_date"))
    windows: list[SourceWindow] = []
    for key, value in left_counts.items():
        path = f"{FREE_LEFT}.{key}"
        fields.name(key, file, path)
        left = _count(value, file, path)
        allowance = _count(allowances.get(key), file, f"{FREE_ALLOWANCE}.{key}")
        windows.append(_share_left(key, left, allowance, "monthly quota", reset_at, file,
                                   path))
    return windows


def _given(instant: datetime | None) -> datetime | None:
    """An instant, or None for one at or before the Unix epoch (0 stands for "not given")."""
    return instant if instant is not None and instant > _EPOCH else None


def _window(key: str, snapshot: dict[str, Any], file: str, path: str,
            reset_at: datetime | None) -> SourceWindow:
    unlimited = fields.flag(snapshot.get("unlimited"), file, f"{path}.unlimited")
    if unlimited:
        return SourceWindow(name=key, unlimited=True, reset_at=reset_at)
    percent = fields.remaining_percent(snapshot.get("percent_remaining"), file,
                                       f"{path}.percent_remaining")
    if percent is not None:
        return SourceWindow(name=key, remaining_percent=percent, reset_at=reset_at)
    entitlement = _count(snapshot.get("entitlement"), file, f"{path}.entitlement")
    if entitlement == UNLIMITED_ENTITLEMENT:
        return SourceWindow(name=key, unlimited=True, reset_at=reset_at)
    if entitlement is not None and entitlement < 0:
        raise fields.fail(file, f"{path}.entitlement",
                          "a count ≥ 0, or -1 for unlimited", snapshot.get("entitlement"))
    if not entitlement:
        return SourceWindow(name=key, reset_at=reset_at)  # nothing to divide by: no value
    field = "quota_remaining" if snapshot.get("quota_remaining") is not None else "remaining"
    left = _count(snapshot.get(field), file, f"{path}.{field}")
    return _share_left(key, left, entitlement, "entitlement", reset_at, file,
                       f"{path}.{field}")


def _share_left(key: str, left: float | None, allowance: float | None, allowance_name: str,
                reset_at: datetime | None, file: str, field: str) -> SourceWindow:
    """The window of ``left`` counts out of ``allowance``: no value without either, or with
    nothing to divide by (never read as exhausted); a negative count, past the allowance,
    reads as 0; more left than the allowance is an error naming ``field``."""
    if left is None or allowance is None or allowance <= 0:
        return SourceWindow(name=key, reset_at=reset_at)
    if left > allowance:
        raise InputError(f"{_shown(left)} left is more than the {allowance_name} of "
                         f"{_shown(allowance)}", file=file, field=field)
    return SourceWindow(name=key, remaining_percent=max(0.0, left / allowance * 100.0),
                        reset_at=reset_at)


def _count(value: Any, file: str, path: str) -> float | None:
    """A count of requests (or credits); negative is allowed (past the allowance)."""
    return fields.number_or_text(value, file, path)


def _shown(number: float) -> str:
    return f"{number:g}"
