"""Codex CLI session logs (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) → readings.

Shape (SOURCES.md, Codex; openai/codex's protocol types ``RateLimitSnapshot`` /
``RateLimitWindow`` / ``CreditsSnapshot``): one JSON object per line;
``{"timestamp": ISO, "type": "event_msg", "payload": {"type": "token_count", "info": …,
"rate_limits": {"primary": {…}, "secondary": {…}, "credits": {…}, "plan_type": …}}}`` is one
reading at the line's ``timestamp``.

* A window is identified by ``window_minutes``, not by primary/secondary: 300 → ``session``,
  10080 → ``weekly``, any other length → ``{minutes}m`` (no catalog entry: every model). A
  window without ``window_minutes`` keeps the slot's name (``primary``), which no entry
  matches either.
* remaining = 100 − ``used_percent``.
* Reset: ``resets_at`` (epoch seconds), else the older ``resets_in_seconds`` counted from the
  line's ``timestamp``.
* ``credits``: ``has_credits`` or ``unlimited`` true → observed ``meters-to-paid``; both
  false → ``hard-stop``; absent → none.
* Lines of other types, and ``token_count`` events without ``rate_limits``, carry no
  reading. A line that is not JSON is an input error naming ``file:line``.

Files are read line by line: a long session's log is never held in memory whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from omniladder.errors import InputError
from omniladder.loading import check_input_file, input_lines, reject_lone_surrogates
from omniladder.models import ObservedOverage
from omniladder.sources import fields
from omniladder.sources.common import SourceReading, SourceWindow

NAME = "codex-sessions"
ROLLOUT_GLOB = "rollout-*.jsonl"
WINDOW_NAMES = {300: "session", 10080: "weekly"}
SLOTS = ("primary", "secondary")


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


def window_name(minutes: int | None, slot: str) -> str:
    if minutes is None:
        return slot
    return WINDOW_NAMES.get(minutes, f"{minutes}m")


def read_file(rollout: RolloutFile) -> Iterator[SourceReading]:
    """The readings of one rollout file, in line order."""
    for number, raw in input_lines(rollout.path, rollout.shown):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise InputError("not a JSON line", file=rollout.shown, line=number) from None
        reject_lone_surrogates(raw, line, rollout.shown, number)
        reading = parse_line(line, f"{rollout.shown}:{number}")
        if reading is not None:
            yield reading


def parse_line(line: Any, where: str) -> SourceReading | None:
    """One rollout line → its reading, or None when the line carries none."""
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
    windows = []
    for slot in SLOTS:
        path = f"payload.rate_limits.{slot}"
        window = fields.obj(limits.get(slot), where, path)
        if window is not None:
            windows.append(_window(window, slot, stamp, where, path))
    return SourceReading(checked_at=stamp, windows=tuple(windows),
                         overage=_overage(limits.get("credits"), where))


def _window(window: dict[str, Any], slot: str, stamp: datetime, where: str,
            path: str) -> SourceWindow:
    reset_at = fields.epoch(window.get("resets_at"), where, f"{path}.resets_at")
    if reset_at is None:
        relative = fields.seconds(window.get("resets_in_seconds"), where,
                                  f"{path}.resets_in_seconds")
        if relative is not None:
            reset_at = stamp + timedelta(seconds=relative)
    return SourceWindow(
        name=window_name(fields.minutes(window.get("window_minutes"), where,
                                        f"{path}.window_minutes"), slot),
        remaining_percent=fields.remaining_from_used(window.get("used_percent"), where,
                                                     f"{path}.used_percent"),
        reset_at=reset_at)


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
