"""The one path from imported readings into a quota file (SPEC §6, "Merging").

* The file is created when missing, else loaded and validated like any quota file.
* Readings of other connections are kept as they were.
* A reading identical to one already there is skipped, so importing the same telemetry
  again leaves the file's bytes unchanged (nothing is written when nothing is added). A
  window the file holds without ``window_seconds`` is identical to the same window with one
  (a file written before its importer read the source's window length).
* A *different* reading with the same connection and ``checked_at`` is an input error naming
  the file, the connection and the instant: two observations cannot disagree about one
  moment.
* ``taken_at`` becomes the latest ``checked_at`` known; it never moves back (a snapshot
  taken later than its readings keeps its instant).
* Readings are written ordered by connection, then ``checked_at``; the file keeps its
  format (JSON, or TOML for a ``.toml`` file); the write is atomic.

Readings are compared as the planner reads them: ``…Z`` and ``+00:00`` are one instant,
``10`` and ``10.0`` one percent.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from omniladder import timefmt
from omniladder.errors import InputError, UsageError, close_match
from omniladder.inputs.documents import as_tuples, read_document
from omniladder.inputs.files import display_path
from omniladder.inputs.validation import validate
from omniladder.inputs.writing import write_atomic
from omniladder.models import QuotaFile, Reading, validate_record

FORMATS = (".json", ".toml")
_INSTANT_KEYS = frozenset({"taken_at", "checked_at", "reset_at"})


@dataclass(frozen=True, kw_only=True)
class MergeOutcome:
    path: Path
    created: bool
    added: int
    skipped: int
    """Readings identical to one already in the file (or earlier in the same import)."""
    written: bool
    taken_at: datetime | None


@dataclass
class _Entry:
    document: dict[str, Any]
    reading: Reading


def merge_readings(path: Path, documents: Sequence[dict[str, Any]]) -> MergeOutcome:
    """Merge quota-file readings (SPEC §2.2 documents) into the quota file at ``path``."""
    shown = display_path(path)
    suffix = _format(path, shown)
    created = not path.exists()
    entries: list[_Entry] = []
    taken_at: datetime | None = None
    if not created:
        raw = read_document(path)
        quota = validate(QuotaFile, raw, shown, path)
        taken_at = quota.taken_at
        stored = raw.get("readings", ())
        # quota.readings is validated item by item from these very documents: the lengths
        # agree
        pairs = zip(stored, quota.readings, strict=True)
        entries = [_Entry(_thaw(document), reading) for document, reading in pairs]
    existing = len(entries)
    index: dict[tuple[str, datetime], int] = {}
    for number, entry in enumerate(entries):
        index.setdefault(_key(entry.reading), number)

    added = skipped = 0
    for incoming in documents:
        reading = _validated(incoming)
        key = _key(reading)
        position = index.get(key)
        if position is not None:
            if _same(entries[position].reading, reading):
                skipped += 1
                continue
            holder = (f"readings[{position}] already holds" if position < existing
                      else "the import itself holds")
            raise InputError(
                f"{holder} a different reading of connection {reading.connection!r} at "
                f"{timefmt.iso(reading.checked_at)}; two observations of one instant "
                "cannot disagree (remove one, or import into another file)",
                file=shown)
        index[key] = len(entries)
        entries.append(_Entry(dict(incoming), reading))
        added += 1

    latest = max((entry.reading.checked_at for entry in entries), default=None)
    if latest is not None:
        taken_at = latest if taken_at is None else max(taken_at, latest)
    if not created and added == 0:
        return MergeOutcome(path=path, created=created, added=added, skipped=skipped, written=False,
                            taken_at=taken_at)

    entries.sort(key=lambda entry: _key(entry.reading))
    _write(path, suffix, taken_at, [entry.document for entry in entries])
    return MergeOutcome(path=path, created=created, added=added, skipped=skipped, written=True,
                        taken_at=taken_at)


def _format(path: Path, shown: str) -> str:
    """The quota file's format, by its suffix: ``.json`` or ``.toml``."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"the quota file must be a .json or .toml file, got {shown!r}",
                         field="--quota")
    return suffix


def _write(path: Path, suffix: str, taken_at: datetime | None,
           readings: list[Any]) -> None:
    """The quota file, atomically: ``taken_at`` (when known), then the readings."""
    document: dict[str, Any] = {}
    if taken_at is not None:
        document["taken_at"] = timefmt.iso(taken_at)
    document["readings"] = readings
    write_atomic(path, _render(document, suffix))


def _key(reading: Reading) -> tuple[str, datetime]:
    return (reading.connection, reading.checked_at)


def _same(old: Reading, new: Reading) -> bool:
    """Field by field, the windows too; a window the file holds without ``window_seconds``
    matches the incoming one that states it (the file was written before the importer read
    the source's length): re-importing the same telemetry stays idempotent."""
    if old == new:
        return True
    if old.windows is None or new.windows is None or len(old.windows) != len(new.windows):
        return False
    windows = tuple(
        dataclasses.replace(mine, window_seconds=None)
        if kept.window_seconds is None and mine.window_seconds is not None else mine
        for kept, mine in zip(old.windows, new.windows, strict=True))
    return old == dataclasses.replace(new, windows=windows)


def _validated(document: dict[str, Any]) -> Reading:
    try:
        return validate_record(Reading, as_tuples(document))
    except ValidationError as exc:  # a source produced a reading the quota file rejects
        raise AssertionError(f"an imported reading is not a valid reading: {exc}") from None


def _thaw(value: Any) -> Any:
    """Loaded documents hold tuples; the writers want lists."""
    if isinstance(value, dict):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_thaw(item) for item in value]
    return value


def _render(document: dict[str, Any], suffix: str) -> str:
    if suffix == ".toml":
        import tomli_w

        return tomli_w.dumps(_toml_instants(document))
    return json.dumps(document, indent=2, default=_json_default, ensure_ascii=False,
                      ) + "\n"


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return timefmt.iso(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _toml_instants(value: Any, key: str | None = None) -> Any:
    """Instants as TOML datetimes, the way a hand-written TOML quota file carries them."""
    if isinstance(value, dict):
        return {k: _toml_instants(item, k) for k, item in value.items()}
    if isinstance(value, list):
        return [_toml_instants(item) for item in value]
    if key in _INSTANT_KEYS and isinstance(value, str):
        return timefmt.from_rfc3339(value)
    return value


# --- pruning (R6.4's way out, and the answer to a quota file that only grows) ----------------


@dataclass(frozen=True)
class Pruned:
    index: int
    """The reading's position in the file before the prune."""
    connection: str
    checked_at: datetime


@dataclass(frozen=True, kw_only=True)
class PruneOutcome:
    path: Path
    removed: tuple[Pruned, ...]
    kept: int
    written: bool
    taken_at: datetime | None


def prune_readings(path: Path, connections: Sequence[str], before: datetime | None,
                   after: datetime | None, *, dry_run: bool = False,
                   emptying: bool = False, force: bool = False) -> PruneOutcome:
    """Remove the readings of ``connections`` (every connection when empty) checked before
    ``before``, after ``after``, or with both, between them; the other readings keep their
    bytes' meaning and order.

    A prune that would leave a connection with no reading is a usage error naming each such
    connection, unless ``emptying`` (``--all``): a connection without readings plans as
    quota unknown, which an operator should choose, not stumble into. A TOML file the
    rewrite would lose something of (its comments, its own spelling) is a usage error saying
    what, unless ``force``; a read-only file is an input error naming it, never replaced.

    ``taken_at`` follows the readings back only when it came from a removed one (it was the
    removed reading's instant, later than every kept reading): a snapshot instant the
    operator set stays. The write is atomic; nothing is written when nothing is removed.
    """
    if before is None and after is None:
        raise UsageError("say which readings go: --before T, --after T or both",
                         field="--before")
    if before is not None and after is not None and after >= before:
        raise UsageError(f"{timefmt.iso(after)} is not earlier than --before "
                         f"{timefmt.iso(before)}: together they remove the readings between "
                         "the two instants (to remove those outside a span, prune twice)",
                         field="--after")
    shown = display_path(path)
    suffix = _format(path, shown)
    raw = read_document(path, shown)
    quota = validate(QuotaFile, raw, shown, path)
    known = {reading.connection for reading in quota.readings}
    for connection in connections:
        if connection not in known:
            near = close_match(connection, known)
            hint = f"; did you mean {near!r}?" if near else ""
            raise UsageError(f"{shown} holds no reading of connection {connection!r}{hint}",
                             field="--connection")
    wanted = set(connections)
    documents = raw.get("readings", ())
    removed: list[Pruned] = []
    kept: list[tuple[Any, Reading]] = []
    for index, (item, reading) in enumerate(zip(documents, quota.readings, strict=True)):
        chosen = not wanted or reading.connection in wanted
        if chosen and _in_span(reading.checked_at, before, after):
            removed.append(Pruned(index, reading.connection, reading.checked_at))
        else:
            kept.append((item, reading))
    if not emptying:
        _refuse_emptying(shown, removed, {reading.connection for _, reading in kept})
    if removed:
        _refuse_read_only(path, shown)
        if suffix == ".toml" and not force:
            _refuse_losing(path, shown, quota.taken_at, [_thaw(item) for item in documents])
    taken_at = quota.taken_at
    latest = max((reading.checked_at for _, reading in kept), default=None)
    if (taken_at is not None and any(item.checked_at == taken_at for item in removed)
            and (latest is None or latest < taken_at)):
        taken_at = latest
    if not removed or dry_run:
        return PruneOutcome(path=path, removed=tuple(removed), kept=len(kept), written=False,
                            taken_at=taken_at)
    _write(path, suffix, taken_at, [_thaw(item) for item, _ in kept])
    return PruneOutcome(path=path, removed=tuple(removed), kept=len(kept), written=True,
                        taken_at=taken_at)


def _refuse_read_only(path: Path, shown: str) -> None:
    """The input error for a quota file marked read-only: the rename that rewrites a file
    whole would replace it regardless of its mode (and root may write anything), so the
    mode is asked first."""
    import os
    import stat

    mode = stat.S_IMODE(os.stat(path).st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK):
        raise InputError("is read-only; the prune would replace it (make it writable first); "
                         "nothing written", file=shown)


def _refuse_losing(path: Path, shown: str, taken_at: datetime | None,
                   readings: list[Any]) -> None:
    """The usage error for a TOML quota file the rewrite would lose something of.

    A pruned file is written whole, as omniladder writes TOML: a file already in that
    spelling loses nothing; any other loses its comments, and the spelling of what it holds
    (instants in UTC with ``Z``, its own layout and quoting)."""
    from omniladder.inputs.files import decode_text, read_bytes

    text = decode_text(read_bytes(path, shown), shown)
    document: dict[str, Any] = {}
    if taken_at is not None:
        document["taken_at"] = timefmt.iso(taken_at)
    document["readings"] = readings
    if _render(document, ".toml") == text:
        return
    comments = toml_comment_lines(text)
    lost = (f"its {comments} comment line{'' if comments == 1 else 's'} and " if comments
            else "")
    raise UsageError(f"the prune rewrites a TOML quota file whole, losing {lost}the spelling "
                     "of what it holds (instants in UTC, its layout and quoting); pass "
                     "--force to rewrite it anyway; nothing written", file=shown,
                     field="--force")


def toml_comment_lines(text: str) -> int:
    """How many lines of a TOML text hold a comment (a ``#`` outside every string)."""
    count = 0
    quote: str | None = None  # the delimiter of the string being read: ", ', \"\"\" or '''
    at = 0
    commented = False
    while at < len(text):
        char = text[at]
        if quote is None:
            if char == "#":
                commented = True
                at = text.find("\n", at)
                if at < 0:
                    break
                continue
            if char == "\n":
                count += commented
                commented = False
            elif char in "\"'":
                quote = char * 3 if text.startswith(char * 3, at) else char
                at += len(quote)
                continue
        elif quote[0] == '"' and char == "\\":
            at += 2  # an escape in a basic string, an escaped quote included
            continue
        elif text.startswith(quote, at):
            at += len(quote)
            quote = None
            continue
        elif char == "\n" and len(quote) == 1:
            quote = None  # an unclosed one-line string: TOML refused it at load already
        at += 1
    return count + commented


def _in_span(instant: datetime, before: datetime | None, after: datetime | None) -> bool:
    """Whether a reading checked at ``instant`` goes: strictly before ``before`` and strictly
    after ``after``, each bound only when given."""
    return ((before is None or instant < before)
            and (after is None or instant > after))


def _refuse_emptying(shown: str, removed: Sequence[Pruned], left: set[str]) -> None:
    """The usage error for a prune that takes every reading of a connection, naming each."""
    emptied: dict[str, int] = {}
    for item in removed:
        if item.connection not in left:
            emptied[item.connection] = emptied.get(item.connection, 0) + 1
    if not emptied:
        return
    named = ", ".join(f"{connection!r} ({count} reading{'' if count == 1 else 's'})"
                      for connection, count in emptied.items())
    which = "connection" if len(emptied) == 1 else "connections"
    raise UsageError(f"the prune would remove every reading of {which} {named}, which would "
                     "then plan as quota unknown (quota-missing); pass --all to remove them "
                     "all, or narrow --before/--after/--connection; nothing written",
                     file=shown, field="--all")
