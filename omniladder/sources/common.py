"""What every quota source shares: its parsed readings and how they become quota readings.

A source module only parses its telemetry into ``SourceReading``s, in its provider's units
converted to percent *remaining* 0–100 and UTC instants. ``reading_document`` then scopes
each window to the connection's models through the window-scope catalog (SPEC §6) and
builds the reading exactly as the quota file carries it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from omniladder import timefmt
from omniladder.inputs.scopes import Scope, WindowScopes
from omniladder.models import ObservedOverage, ReadingStatus


@dataclass(frozen=True)
class SourceWindow:
    """One window as a source reported it, already in percent remaining (0–100)."""

    name: str
    remaining_percent: float | None = None
    """None together with ``unlimited``; a window with neither is no reading and dropped."""
    unlimited: bool = False
    reset_at: datetime | None = None
    window_seconds: float | None = None
    """The window's length, only when the source states it (Codex ``window_minutes``);
    written as the quota file's ``window_seconds``."""


@dataclass(frozen=True)
class SourceReading:
    """One observation of one connection at ``checked_at``."""

    checked_at: datetime
    windows: tuple[SourceWindow, ...] = ()
    status: ReadingStatus | None = None
    overage: ObservedOverage | None = None
    notes: tuple[str, ...] = ()
    """What the parser saw and did not read (a money cap is no window), for the import's
    notes; never written to the quota file."""


@dataclass
class ScopeReport:
    """What scoping did, for the import's notes: window name → count, per outcome."""

    ignored: dict[str, int] = field(default_factory=dict)
    unscoped: dict[str, int] = field(default_factory=dict)
    """Windows no catalog entry matched: they limit every model."""
    limits_none: dict[str, int] = field(default_factory=dict)
    no_value: dict[str, int] = field(default_factory=dict)

    def notes(self, provider_of: str = "") -> list[str]:
        out: list[str] = []
        for counts, text in (
            (self.ignored, "ignored as the window-scope catalog says (no chat quota or a "
                           "sentinel)"),
            (self.limits_none, "dropped: they limit none of the connection's models"),
            (self.no_value, "dropped: no value reported (a sentinel, not exhaustion)"),
            (self.unscoped, "not in the window-scope catalog: read as limiting every model"),
        ):
            if counts:
                listed = ", ".join(f"{name!r} ×{n}" for name, n in sorted(counts.items()))
                out.append(f"windows {text}{provider_of}: {listed}")
        return out


def clamp_percent(value: float) -> float:
    """A percent kept inside 0–100 (sources round past the ends)."""
    return min(100.0, max(0.0, value))


def number(value: float) -> float | int:
    """A percent as the quota file writes it: integral values as integers."""
    return int(value) if float(value).is_integer() else round(value, 4)


def _count(counts: dict[str, int], name: str) -> None:
    counts[name] = counts.get(name, 0) + 1


def scope_windows(provider: str, models: Sequence[str], windows: Sequence[SourceWindow],
                  scopes: WindowScopes, report: ScopeReport | None = None
                  ) -> list[dict[str, Any]]:
    """The windows a quota reading keeps, each with its concrete ``models`` list.

    Windows are written in name order, so a re-import writes the same reading.
    """
    out: list[dict[str, Any]] = []
    for window in sorted(windows, key=lambda w: w.name):
        if window.remaining_percent is None and not window.unlimited:
            if report is not None:
                _count(report.no_value, window.name)
            continue
        scope: Scope = scopes.scope(provider, window.name, models)
        if report is not None:
            if scope.kind == "ignore":
                _count(report.ignored, window.name)
            elif scope.kind == "none":
                _count(report.limits_none, window.name)
            elif scope.matched is None:
                _count(report.unscoped, window.name)
        if not scope.kept:
            continue
        item: dict[str, Any] = {"name": window.name}
        if window.unlimited:
            item["unlimited"] = True
        else:
            assert window.remaining_percent is not None
            item["remaining_percent"] = number(clamp_percent(window.remaining_percent))
        if window.reset_at is not None:
            item["reset_at"] = timefmt.iso(window.reset_at)
        if window.window_seconds is not None:
            item["window_seconds"] = number(window.window_seconds)
        if scope.models is not None:
            item["models"] = list(scope.models)
        out.append(item)
    return out


def reading_document(connection_id: str, provider: str, models: Sequence[str],
                     reading: SourceReading, scopes: WindowScopes,
                     report: ScopeReport | None = None) -> dict[str, Any]:
    """One reading as the quota file carries it (SPEC §2.2), windows scoped (SPEC §6)."""
    document: dict[str, Any] = {"connection": connection_id,
                                "checked_at": timefmt.iso(reading.checked_at)}
    if reading.status is not None:
        document["status"] = reading.status
    windows = scope_windows(provider, models, reading.windows, scopes, report)
    if windows:
        document["windows"] = windows
    if reading.overage is not None:
        document["overage"] = reading.overage
    return document
