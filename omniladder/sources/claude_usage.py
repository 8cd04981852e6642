"""Claude's OAuth usage JSON (``GET /api/oauth/usage``) → one reading.

Shape (docs/sources.md#claude-usage; several third-party clients agree): top-level windows
``five_hour``, ``seven_day``, ``seven_day_opus``, ``seven_day_sonnet``,
``seven_day_oauth_apps``, … each ``null`` or ``{"utilization": percent USED 0–100,
"resets_at": ISO or null}``; since mid-2026 also ``limits[]``, ``spend`` and windows under
rotating code names, some of them money caps (``limit_dollars`` / ``used_dollars``).

* Every top-level key whose value is an object carrying ``utilization`` is a window named by
  the key, so a window Anthropic adds later is read too; which models it limits is the
  window-scope catalog's business (unmatched: every model). ``extra_usage`` also carries a
  ``utilization`` (of the paid overage allowance): it is no plan window and is not one here.
* A window object with a ``limit_dollars`` or ``used_dollars`` figure is a money cap (an
  Enterprise seat's spending budget), not a plan window: it is not read as a window, and the
  import says so in a note.
* ``limits[]``: each entry ``{kind, percent (USED), resets_at, scope}`` is a window.
  ``weekly_scoped`` entries are per-model weekly limits named ``weekly_scoped <model>``
  after ``scope.model.id``, else ``scope.model.display_name`` (else ``scope.surface``), for
  the window-scope catalog to scope (``weekly_scoped Fable`` → the ``*fable*`` models).
  An unscoped ``session`` / ``weekly_all`` entry is the same window as ``five_hour`` /
  ``seven_day`` and carries that name. ``severity`` and ``is_active`` are not read.
* One name, two figures (``five_hour`` and a ``session`` entry that disagree): the window
  keeps the lower remaining figure, with that entry's reset — a disagreement is never read in
  the direction that invents quota.
* A ``null`` window is absent, not 0; a window whose ``utilization`` is null has no value.
* remaining = 100 − utilization (or − percent).
* Overage: ``extra_usage.is_enabled`` and ``spend.enabled``; either true → observed
  ``meters-to-paid``, both known and false (or the only one known false) → ``hard-stop``,
  neither → none. They mirror each other wherever both appear; when they disagree the
  conservative word wins.
"""

from __future__ import annotations

import math
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
SPEND_KEY = "spend"
LIMITS_KEY = "limits"
NOT_WINDOWS = frozenset({OVERAGE_KEY, SPEND_KEY})
MONEY_FIELDS = ("limit_dollars", "used_dollars")
LIMIT_ALIASES = {"session": "five_hour", "weekly_all": "seven_day"}
"""Unscoped ``limits[]`` kinds that are the same window as a top-level key."""


def parse(document: Any, file: str, checked_at: datetime) -> SourceReading:
    """The reading one usage response gives, observed at ``checked_at``."""
    top = fields.top_object(document, file)
    windows: dict[str, SourceWindow] = {}
    notes: list[str] = []
    for key, value in top.items():
        if key in NOT_WINDOWS or not isinstance(value, dict) or "utilization" not in value:
            continue
        if _money_cap(value, file, key):
            notes.append(f"window {key!r} carries limit_dollars / used_dollars: a money cap, "
                         "not a plan window; not read as a quota window")
            continue
        _keep(windows, SourceWindow(
            name=fields.name(key, file, key),
            remaining_percent=fields.remaining_from_used(
                value.get("utilization"), file, f"{key}.utilization"),
            reset_at=fields.instant(value.get("resets_at"), file, f"{key}.resets_at"),
        ))
    for index, entry in enumerate(fields.array(top.get(LIMITS_KEY), file, LIMITS_KEY) or ()):
        window = _limit_window(entry, file, f"{LIMITS_KEY}[{index}]")
        if window is not None:
            _keep(windows, window)
    return SourceReading(checked_at=checked_at, windows=tuple(windows.values()),
                         overage=_overage(top, file), notes=tuple(notes))


def limit_window_name(kind: str, scope_key: str | None) -> str:
    """The name of a ``limits[]`` entry's window: ``weekly_scoped Fable``, ``five_hour``."""
    if scope_key is None:
        return LIMIT_ALIASES.get(kind, kind)
    return f"{kind} {scope_key}"


def _limit_window(entry: Any, file: str, path: str) -> SourceWindow | None:
    limit = fields.obj(entry, file, path)
    if limit is None:
        return None
    kind = fields.text(limit.get("kind"), file, f"{path}.kind")
    if kind is None:
        raise fields.fail(file, f"{path}.kind", "a non-empty string", None)
    return SourceWindow(
        name=limit_window_name(fields.name(kind, file, f"{path}.kind"),
                               _scope_key(limit.get("scope"), file, f"{path}.scope")),
        remaining_percent=fields.remaining_from_used(limit.get("percent"), file,
                                                     f"{path}.percent"),
        reset_at=fields.instant(limit.get("resets_at"), file, f"{path}.resets_at"))


def _scope_key(value: Any, file: str, path: str) -> str | None:
    """What a limit is scoped to: the model's id, else its display name, else the surface."""
    scope = fields.obj(value, file, path)
    if scope is None:
        return None
    model = fields.obj(scope.get("model"), file, f"{path}.model")
    if model is not None:
        for key in ("id", "display_name"):
            name = _name(model.get(key), file, f"{path}.model.{key}")
            if name is not None:
                return name
    return _name(scope.get("surface"), file, f"{path}.surface")


def _name(value: Any, file: str, path: str) -> str | None:
    """A name, or None for null or blank (a blank name names nothing)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise fields.fail(file, path, "a string", value)
    joined = " ".join(value.split())
    return fields.name(joined, file, path) if joined else None


def _money_cap(window: dict[str, Any], file: str, key: str) -> bool:
    """Whether a window object carries a dollar figure (``null`` dollars: a plan window)."""
    found = False
    for name in MONEY_FIELDS:
        value = window.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value):
            raise fields.fail(file, f"{key}.{name}", "a number of dollars", value)
        found = True
    return found


def _keep(windows: dict[str, SourceWindow], window: SourceWindow) -> None:
    """Add a window; a name seen twice keeps the lower remaining figure (a value beats none;
    a tie keeps the first unless only the second has a reset)."""
    seen = windows.get(window.name)
    if seen is None or seen.remaining_percent is None:
        windows[window.name] = window
        return
    if window.remaining_percent is None:
        return
    if window.remaining_percent < seen.remaining_percent or (
            window.remaining_percent == seen.remaining_percent
            and seen.reset_at is None and window.reset_at is not None):
        windows[window.name] = window


def _overage(top: dict[str, Any], file: str) -> ObservedOverage | None:
    said: list[bool] = []
    extra = fields.obj(top.get(OVERAGE_KEY), file, OVERAGE_KEY)
    if extra is not None:
        enabled = fields.flag(extra.get("is_enabled"), file, f"{OVERAGE_KEY}.is_enabled")
        if enabled is not None:
            said.append(enabled)
    spend = fields.obj(top.get(SPEND_KEY), file, SPEND_KEY)
    if spend is not None:
        enabled = fields.flag(spend.get("enabled"), file, f"{SPEND_KEY}.enabled")
        if enabled is not None:
            said.append(enabled)
    if not said:
        return None
    return "meters-to-paid" if any(said) else "hard-stop"
