"""The questions every analysis asks of a reading, each answered once.

Is a reading fresh at an instant (R6.5, R2a), when does it turn stale, what figure does a
window show (R6.6), is a window low against a threshold (R6.4, R9), which threshold a pair is
held to (R7), and when can an exhausted pair's quota lift by itself (R6.3, R6.4). The engine's
rules and every analysis (``why``, ``forecast``, the remedies) ask here; a hot loop that keeps
an inline copy for speed names the function it copies, and a property test holds the two
together (``tests/test_readings.py``).
"""

import functools
from datetime import datetime, timedelta
from typing import NamedTuple

from omniladder.models import LadderSettings, Reading, Window

_CALENDAR_SECONDS = (datetime.max - datetime.min).total_seconds()


def age_seconds(checked_at: datetime, now: datetime) -> float:
    """How old a reading taken at ``checked_at`` is at ``now``, in seconds (negative before)."""
    return (now - checked_at).total_seconds()


def is_fresh(checked_at: datetime, now: datetime, max_age_seconds: float) -> bool:
    """R6.5 and R2a: a reading is fresh while its age is at most the max age; it turns
    stale the first microsecond after ``stale_after``."""
    return (now - checked_at).total_seconds() <= max_age_seconds


def stale_after(checked_at: datetime, max_age_seconds: float) -> datetime | None:
    """The last instant, to the microsecond, at which a reading taken at ``checked_at`` is
    still fresh (``is_fresh``); None when that instant lies past the calendar's end."""
    if max_age_seconds > _CALENDAR_SECONDS:
        return None
    micros = int(max_age_seconds * 1_000_000)
    # total_seconds() divides whole microseconds by 10**6: match it exactly at the edge.
    while (micros + 1) / 1_000_000 <= max_age_seconds:
        micros += 1
    while micros > 0 and micros / 1_000_000 > max_age_seconds:
        micros -= 1
    try:
        return checked_at + timedelta(microseconds=micros)
    except OverflowError:
        return None


def figure(window: Window) -> float:
    """R6.6: the remaining percent a window contributes; an unlimited window counts 100."""
    return 100.0 if window.unlimited else float(window.remaining_percent or 0.0)


def held_to(ladder: LadderSettings, reserve_percent: float | None) -> LadderSettings:
    """R16: the thresholds one connection is held to. Without a reserve, or with one at or
    below the exit cutoff, the ladder's own (the very object). A reserve above the cutoff is
    the connection's exit cutoff, and its re-entry floor keeps the ladder's hysteresis gap
    above it (``reserve + reentry_floor - exit_cutoff``); everything else is the ladder's.

    Every rule that reads a threshold of a connection (``threshold_of``, ``below``, R6.4's
    holds, R9's clamp, the change instants, the forecast's crossings) reads it from here.
    """
    if reserve_percent is None or reserve_percent <= ladder.exit_cutoff_percent:
        return ladder
    return _raised(ladder, reserve_percent)


@functools.lru_cache(maxsize=256)
def _raised(ladder: LadderSettings, reserve_percent: float) -> LadderSettings:
    # One object per (ladder, reserve): a fleet repeats a few reserves many times.
    gap = ladder.reentry_floor - ladder.exit_cutoff_percent
    return ladder.model_copy(update={"exit_cutoff_percent": reserve_percent,
                                     "reentry_min_remaining_percent": reserve_percent + gap})


def threshold_of(in_play: bool, ladder: LadderSettings) -> float:
    """R7: the figure a pair is held to, the exit cutoff while it is in play, the re-entry
    floor once it is out (the ladder ``held_to`` gives a connection with a reserve)."""
    return ladder.exit_cutoff_percent if in_play else ladder.reentry_floor


def below(value: float, in_play: bool, ladder: LadderSettings) -> bool:
    """R7, the one comparison of a figure with its threshold: at or below the exit cutoff a
    pair in play leaves; a pair out of play comes back only above the re-entry floor."""
    return value <= threshold_of(in_play, ladder)


def is_low(window: Window, threshold: float) -> bool:
    """R6.4 and R9: a limited window at or below ``threshold``. An unlimited window is never
    low: it holds nothing and clamps no cooldown."""
    return not window.unlimited and (window.remaining_percent or 0.0) <= threshold


def is_current(window: Window, at: datetime) -> bool:
    """R6.7: a window has not reset by ``at`` (a window without a reset never does)."""
    return window.reset_at is None or window.reset_at > at


def low_windows(reading: Reading, threshold: float, *, model: str | None = None,
                after: datetime | None = None,
                until: datetime | None = None) -> tuple[Window, ...]:
    """The windows of a reading that are low against ``threshold`` (``is_low``) and have a
    reset: those that apply to ``model`` (every window when None), whose reset falls after
    ``after`` and at or before ``until`` (either bound left open when None)."""
    return tuple(
        window for window in reading.all_windows()
        if (model is None or window.applies_to(model)) and window.reset_at is not None
        and (after is None or window.reset_at > after)
        and (until is None or window.reset_at <= until) and is_low(window, threshold))


class Reset(NamedTuple):
    """When an exhausted pair's quota lifts by itself, and what resets then."""

    at: datetime
    what: str
    """``"the exhausted reading's reset"``, ``"the reading's reset"``, or the low windows,
    ``"window 5h"`` / ``"windows 5h, weekly"``."""


def next_reset(reading: Reading, threshold: float | None, model: str | None,
               now: datetime) -> Reset | None:
    """R6.3 and R6.4: when the exhaustion a reading shows can lift by itself: an exhausted
    reading's reset, a top-level figure's reset, else the last reset among the current low
    windows that apply to ``model``; None when no such reset lies after now."""
    if reading.status == "exhausted":
        if reading.reset_at is not None and reading.reset_at > now:
            return Reset(reading.reset_at, "the exhausted reading's reset")
        return None
    if reading.windows is None:
        if reading.reset_at is not None and reading.reset_at > now:
            return Reset(reading.reset_at, "the reading's reset")
        return None
    if threshold is None:
        return None
    low = low_windows(reading, threshold, model=model, after=now)
    if not low:
        return None
    last = max(low, key=lambda window: window.reset_at or now)
    assert last.reset_at is not None
    names = ", ".join(sorted({window.name for window in low}))
    return Reset(last.reset_at, f"{'window' if len(low) == 1 else 'windows'} {names}")
