"""Codex CLI session logs (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) → readings.

Shape (docs/sources.md#codex-sessions; openai/codex's protocol types ``RateLimitSnapshot`` /
``RateLimitWindow`` / ``CreditsSnapshot``): one JSON object per line;
``{"timestamp": ISO, "type": "event_msg", "payload": {"type": "token_count", "info": …,
"rate_limits": {"limit_id": …, "limit_name": …, "primary": {…}, "secondary": {…},
"credits": {…}, "plan_type": …}}}`` is one reading at the line's ``timestamp``.

* A window is identified by ``window_minutes``, not by primary/secondary: 300 → ``session``,
  10080 → ``weekly``, any other length → ``{minutes}m`` (no catalog entry: every model). A
  window without ``window_minutes`` keeps the slot's name (``primary``), which no entry
  matches either.
* ``limit_id``: ``"codex"``, or none, is the plan's own limit, named as above. Any other id
  is a per-model limit: its windows are named after the limit, ``<limit>_<window>`` with
  ``<limit>`` the ``limit_name`` (else the ``limit_id``) in lower case, every run of other
  characters an ``_`` — ``GPT-5.3-Codex-Spark`` → ``gpt_5_3_codex_spark_weekly``, the key
  OmniRoute writes for it — so they never share a name with the plan's windows, and the
  window-scope catalog scopes them to their model (``*spark*``).
* remaining = 100 − ``used_percent``.
* Length: ``window_minutes`` × 60 is the window's ``window_seconds`` (what ``forecast``
  reads the elapsed part of the window from); a window without ``window_minutes`` gets none,
  and neither does one longer than a quota file's ``window_seconds`` may be (a leap year).
* Reset: ``resets_at`` (epoch seconds), else the older ``resets_in_seconds`` counted from the
  line's ``timestamp``.
* ``credits``: ``has_credits`` or ``unlimited`` true → observed ``meters-to-paid``; both
  false → ``hard-stop``; absent → none.
* A line whose ``primary`` and ``secondary`` are both ``null`` says nothing about windows:
  its reading has none (only its credits overage, if any).
* Lines of other types, and ``token_count`` events without ``rate_limits``, carry no
  reading. A line that is not JSON is an input error naming ``file:line`` — except the last
  line of a file when it has no newline: Codex appends to its rollouts while it runs, so that
  line may be one it is still writing; it is skipped with a note.
* A zero placeholder — every window of a limit at 0 % used with its reset exactly one full
  window after the line, while the previous reading of that limit showed one of those
  windows running until after the line — is no observation (a window cannot restart before
  it resets): it is not imported, and a note counts it.

Files are read line by line: a long session's log is never held in memory whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from omniladder.errors import InputError
from omniladder.inputs.documents import (
    RepeatedKey,
    long_number,
    reject_lone_surrogates,
    repeated_key,
    unique_keys,
)
from omniladder.inputs.files import check_input_file, input_lines
from omniladder.models import MAX_WINDOW_SECONDS, ObservedOverage
from omniladder.sources import fields
from omniladder.sources.common import SourceReading, SourceWindow

NAME = "codex-sessions"
OWN_KEYS = frozenset({"timestamp", "type", "payload"})
"""Keys of a rollout line; a file whose first line has none of them is no rollout (SPEC §6)."""
ROLLOUT_GLOB = "rollout-*.jsonl"
WINDOW_NAMES = {300: "session", 10080: "weekly"}
SLOTS = ("primary", "secondary")
PLAN_LIMIT_ID = "codex"
PLACEHOLDER_SLACK_SECONDS = 1.0
"""How far a placeholder's reset may sit from one full window after the line: the line's
timestamp has milliseconds, ``resets_at`` whole seconds."""
_NOT_NAME = re.compile(r"[^0-9a-z]+")


@dataclass(frozen=True)
class RolloutFile:
    path: Path
    shown: str


def find_rollouts(paths: Iterable[tuple[Path, str]]) -> list[RolloutFile]:
    """Files as given, and every ``rollout-*.jsonl`` under each folder, in path order."""
    found: list[RolloutFile] = []
    for path, shown in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob(ROLLOUT_GLOB) if p.is_file())
            if not inside:
                raise InputError(f"no {ROLLOUT_GLOB} files in this folder or below it",
                                 file=shown)
            found += [RolloutFile(p, str(Path(shown) / p.relative_to(path))) for p in inside]
        elif path.is_file():
            found.append(RolloutFile(path, shown))
        else:
            check_input_file(path, shown)
            raise InputError("file or folder not found", file=shown)
    return list(dict.fromkeys(found))


def window_name(minutes: int | None, slot: str, limit: str | None = None) -> str:
    """``session`` / ``weekly`` / ``<minutes>m`` / the slot; a per-model limit's window has
    the limit's key in front: ``gpt_5_3_codex_spark_weekly``."""
    base = slot if minutes is None else WINDOW_NAMES.get(minutes, f"{minutes}m")
    return base if limit is None else f"{limit}_{base}"


@lru_cache(maxsize=256)
def limit_key(limit_id: str | None, limit_name: str | None) -> str | None:
    """The key of a per-model limit (None for the plan's own): its name, else its id, in
    lower case with every run of other characters an ``_``."""
    if limit_id is None or limit_id == PLAN_LIMIT_ID:
        return None
    text = limit_name if limit_name is not None else limit_id
    return _NOT_NAME.sub("_", text.lower()).strip("_") or limit_id


class _Line(NamedTuple):
    """One parsed token_count line: its reading, the limit it reports (None: the plan's
    own) and each window's length in minutes."""

    reading: SourceReading
    limit: str | None
    minutes: tuple[int | None, ...]


@dataclass
class RolloutReader:
    """Reads rollout files in order, remembering each limit's latest reading (for zero
    placeholders) and what to tell the operator (``notes``)."""

    notes: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    """Where each zero placeholder was found (``file:line``)."""
    _latest: dict[str | None, SourceReading] = field(default_factory=dict)

    def read_all(self, rollouts: Iterable[RolloutFile]) -> Iterator[SourceReading]:
        """The readings of every file, then one note counting the placeholders left out."""
        for rollout in rollouts:
            yield from self.read(rollout)
        self.finish()

    def finish(self) -> None:
        """One note counting the zero placeholders left out, after the last file."""
        if self.placeholders:
            count = len(self.placeholders)
            self.notes.append(
                f"{count} zero placeholder line{'s' if count != 1 else ''} not imported "
                "(every window 0 % used, reset exactly one window after the line, while the "
                "previous reading showed the window running past it): first at "
                f"{self.placeholders[0]}")

    def read(self, rollout: RolloutFile) -> Iterator[SourceReading]:
        """The readings of one rollout file, in line order."""
        number, raw = 0, b""
        for number, raw in input_lines(rollout.path, rollout.shown):
            if not raw.endswith(b"\n"):
                break  # the last line, and it has no newline: handled below
            reading = self._line(raw, rollout.shown, number, last=False)
            if reading is not None:
                yield reading
        else:
            return
        reading = self._line(raw, rollout.shown, number, last=True)
        if reading is not None:
            yield reading

    def _line(self, raw: bytes, shown: str, number: int, *, last: bool
              ) -> SourceReading | None:
        if not raw.strip():
            return None
        try:
            line = json.loads(raw, object_pairs_hook=unique_keys)
        except RepeatedKey:
            raise repeated_key(raw, shown, line=number) from None
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            if last:
                self.notes.append(
                    f"{shown}:{number}: the last line has no newline and is not JSON (a line "
                    "Codex is still writing): skipped")
                return None
            raise InputError("not a JSON line", file=shown, line=number) from None
        except ValueError:
            raise long_number(raw, shown, "JSON", number) from None
        reject_lone_surrogates(raw, line, shown, number)
        where = f"{shown}:{number}"
        parsed = _parse(line, where)
        if parsed is None:
            return None
        reading = parsed.reading
        if self._is_placeholder(parsed):
            self.placeholders.append(where)
            return None
        if reading.windows:
            seen = self._latest.get(parsed.limit)
            if seen is None or seen.checked_at <= reading.checked_at:
                self._latest[parsed.limit] = reading
        return reading

    def _is_placeholder(self, parsed: _Line) -> bool:
        reading = parsed.reading
        windows = reading.windows
        # the cheap refusals first: nearly every line shows some use
        if not windows or windows[0].remaining_percent != 100.0:
            return False
        before = self._latest.get(parsed.limit)
        if before is None or before.checked_at > reading.checked_at:
            return False
        for window, minutes in zip(windows, parsed.minutes, strict=True):
            if minutes is None or window.remaining_percent != 100.0 or window.reset_at is None:
                return False
            gap = (window.reset_at - reading.checked_at).total_seconds() - minutes * 60
            if abs(gap) > PLACEHOLDER_SLACK_SECONDS:
                return False
        running = {w.name: w.reset_at for w in before.windows
                   if w.reset_at is not None and w.reset_at > reading.checked_at}
        return any(window.name in running and running[window.name] != window.reset_at
                   for window in reading.windows)


def read_file(rollout: RolloutFile, notes: list[str] | None = None
              ) -> Iterator[SourceReading]:
    """The readings of one rollout file, in line order; what to tell the operator goes to
    ``notes``."""
    reader = RolloutReader() if notes is None else RolloutReader(notes)
    return reader.read_all([rollout])


def parse_line(line: Any, where: str) -> SourceReading | None:
    """One rollout line → its reading, or None when the line carries none."""
    parsed = _parse(line, where)
    return None if parsed is None else parsed.reading


def _parse(line: Any, where: str) -> _Line | None:
    if not isinstance(line, dict) or line.get("type") != "event_msg":
        return None
    payload = line.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "token_count":
        return None
    limits = fields.obj(payload.get("rate_limits"), where, "payload.rate_limits")
    if limits is None:
        return None
    stamp = fields.instant(line.get("timestamp"), where, "timestamp")
    if stamp is None:
        raise InputError("a token_count event without a timestamp", file=where,
                         field="timestamp")
    limit_id = limits.get("limit_id")
    limit = None if limit_id is None or limit_id == PLAN_LIMIT_ID else limit_key(
        fields.text(limit_id, where, "payload.rate_limits.limit_id"),
        fields.text(limits.get("limit_name"), where, "payload.rate_limits.limit_name"))
    windows: list[SourceWindow] = []
    spans: list[int | None] = []
    for slot in SLOTS:
        path = f"payload.rate_limits.{slot}"
        window = fields.obj(limits.get(slot), where, path)
        if window is not None:
            minutes = fields.minutes(window.get("window_minutes"), where,
                                     f"{path}.window_minutes")
            windows.append(_window(window, window_name(minutes, slot, limit), minutes, stamp,
                                   where, path))
            spans.append(minutes)
    reading = SourceReading(checked_at=stamp, windows=tuple(windows),
                            overage=_overage(limits.get("credits"), where))
    return _Line(reading, limit, tuple(spans))


def _window(window: dict[str, Any], name: str, minutes: int | None, stamp: datetime,
            where: str, path: str) -> SourceWindow:
    reset_at = fields.epoch(window.get("resets_at"), where, f"{path}.resets_at")
    if reset_at is None:
        relative = fields.seconds(window.get("resets_in_seconds"), where,
                                  f"{path}.resets_in_seconds")
        if relative is not None:
            reset_at = stamp + timedelta(seconds=relative)
    return SourceWindow(
        name=name,
        remaining_percent=fields.remaining_from_used(window.get("used_percent"), where,
                                                     f"{path}.used_percent"),
        reset_at=reset_at, window_seconds=_length(minutes))


def _length(minutes: int | None) -> float | None:
    """``window_minutes`` in seconds; None when the line gives none (``fields.minutes``
    refuses zero and negatives) or one past what a quota file's ``window_seconds`` takes."""
    if minutes is None or minutes * 60 > MAX_WINDOW_SECONDS:
        return None
    return float(minutes * 60)


def _overage(value: Any, where: str) -> ObservedOverage | None:
    path = "payload.rate_limits.credits"
    credits = fields.obj(value, where, path)
    if credits is None:
        return None
    has = fields.flag(credits.get("has_credits"), where, f"{path}.has_credits")
    unlimited = fields.flag(credits.get("unlimited"), where, f"{path}.unlimited")
    if has is None and unlimited is None:
        return None
    return "meters-to-paid" if has or unlimited else "hard-stop"
