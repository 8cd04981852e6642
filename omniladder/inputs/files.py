"""File safety: the one way an input's bytes are read.

A path is read only when it is a regular file (not a directory, a named pipe, a device, a
socket or a symlink loop), of at most ``INPUT_LIMIT`` bytes, and as UTF-8 text; each refusal
is one InputError naming the file. Its writing partner is ``writing.py``: an output never
replaces an input.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

from omniladder.errors import InputError


def display_path(path: Path) -> str:
    """A path as an operator wants to read it: relative to the working directory if inside."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):  # outside; a symlink loop; a NUL byte
        return str(path)


SYMLINK_LOOP = "symlink loop: following its links never reaches a file"
IS_A_DIRECTORY = "is a directory, not a file"

INPUT_LIMIT = 256 * 1024 * 1024
"""The largest input omniladder reads into memory: 256 MiB. A 100,000-connection fleet's
quota file with three readings of five models each is about 71 MB; a file past the cap is
an endless device, a runaway export or the wrong file, and reading it would exhaust memory
before saying anything. (The OmniRoute database is opened by SQLite, not read: no cap.)"""

STREAMED_LIMIT = 1024 * 1024 * 1024
"""The cap on a file read a line at a time (Codex rollouts): 1 GiB, far past a long session's
log; each of its lines is capped at ``INPUT_LIMIT``."""

_NOT_REGULAR = (
    (stat.S_ISFIFO, "is a named pipe (FIFO), not a regular file"),
    (stat.S_ISCHR, "is a character device, not a regular file"),
    (stat.S_ISBLK, "is a block device, not a regular file"),
    (stat.S_ISSOCK, "is a socket, not a regular file"),
)
READS_ONLY_FILES = "omniladder reads only regular files"


def not_regular(mode: int, only: str = READS_ONLY_FILES) -> str | None:
    """Why a file of this mode is not read (or, with ``only`` saying so, not written), or
    None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return IS_A_DIRECTORY
    for test, what in _NOT_REGULAR:
        if test(mode):
            return f"{what}; {only}"
    return f"is not a regular file; {only}"


def check_input_file(path: Path, shown: str) -> None:
    """Raise the InputError for a path that is a directory, a symlink loop, or anything else
    that is not a regular file (a named pipe, a device such as /dev/zero, a socket).

    A missing or unreadable path is left to the read, which says why.
    """
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(SYMLINK_LOOP, file=shown) from None
        return
    except ValueError:  # an embedded NUL byte
        raise InputError("not a valid path (it holds a NUL byte)", file=shown) from None
    why = not_regular(mode)
    if why is not None:
        raise InputError(why, file=shown)


def open_input(path: Path, shown: str) -> typing.BinaryIO:
    """The one way an input file is opened: a regular file, or one InputError saying why not.

    The file is opened without blocking (a named pipe with no writer would otherwise hold
    the open forever) and what was opened is checked, not what the path named a moment
    before, so a path swapped for a pipe or a device between a check and the open is refused
    too.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        handle = os.open(path, flags)
    except FileNotFoundError:
        raise InputError("file not found", file=shown) from None
    except IsADirectoryError:
        raise InputError(IS_A_DIRECTORY, file=shown) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(SYMLINK_LOOP, file=shown) from None
        raise InputError(f"cannot read file ({exc.strerror})", file=shown) from None
    except ValueError:  # an embedded NUL byte
        raise InputError("not a valid path (it holds a NUL byte)", file=shown) from None
    try:
        why = not_regular(os.fstat(handle).st_mode)
    except OSError as exc:
        os.close(handle)
        raise InputError(f"cannot read file ({exc.strerror})", file=shown) from None
    if why is not None:
        os.close(handle)
        raise InputError(why, file=shown)
    return os.fdopen(handle, "rb")


def byte_size(count: int) -> str:
    """A limit as a message gives it: whole mebibytes, else bytes."""
    mib = 1024 * 1024
    return f"{count // mib:,} MiB" if count % mib == 0 else f"{count:,} bytes"


def too_large(shown: str, limit: int) -> InputError:
    return InputError(f"larger than {byte_size(limit)}, the most omniladder reads from one input; "
                      "is it the right file?", file=shown)


_CHUNK = 1024 * 1024


def _read_capped(stream: typing.BinaryIO, shown: str, size_hint: int,
                 limit: int | None = None) -> bytes:
    """At most ``limit`` (``INPUT_LIMIT``) bytes of ``stream``, or the InputError past it:
    the stated size is read in one call, anything a growing file adds a megabyte at a
    time."""
    if limit is None:
        limit = INPUT_LIMIT
    if size_hint > limit:
        raise too_large(shown, limit)
    first = stream.read(size_hint) if size_hint > 0 else b""
    pieces = [first]
    total = len(first)
    while True:
        piece = stream.read(min(_CHUNK, limit + 1 - total))
        if not piece:
            break
        pieces.append(piece)
        total += len(piece)
        if total > limit:
            raise too_large(shown, limit)
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def read_bytes(path: Path, shown: str) -> bytes:
    """A file's bytes, or one InputError saying why they cannot be read: every input file
    omniladder loads is read here (a regular file of at most ``INPUT_LIMIT`` bytes)."""
    with open_input(path, shown) as stream:
        try:
            found = _read_capped(stream, shown, os.fstat(stream.fileno()).st_size)
        except OSError as exc:
            raise InputError(f"cannot read file ({exc.strerror})", file=shown) from None
    if _kept_digests is not None:
        import hashlib

        _kept_digests[os.fspath(path)] = hashlib.sha256(found).hexdigest()
    return found


_kept_digests: dict[str, str] | None = None
"""Inside ``digests_kept``: the sha256 of the bytes each path gave ``read_bytes``."""


@contextlib.contextmanager
def digests_kept() -> Iterator[dict[str, str]]:
    """The sha256 of every file read inside the block, by path, as the bytes read then.

    A saved plan's stamp records the files it was planned from. Reading them again to
    stamp them would record a version written in between (a scheduled import replacing the
    quota file during the plan), or fail on one deleted in between. Only runs that save a
    plan pay the hashing (about 10 ms for a 7 MB quota file).
    """
    global _kept_digests
    previous, _kept_digests = _kept_digests, {}
    try:
        yield _kept_digests
    finally:
        _kept_digests = previous


STDIN_NAME = "<stdin>"


def read_stdin() -> bytes:
    """Standard input (an argument ``-``) whole, capped like a file."""
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        return b""
    try:
        return _read_capped(stream, STDIN_NAME, 0)
    except OSError as exc:
        raise InputError(f"cannot read standard input ({exc.strerror})",
                         file=STDIN_NAME) from None


def input_lines(path: Path, shown: str) -> Iterator[tuple[int, bytes]]:
    """A regular file's lines, numbered from 1, one at a time: the reading function of
    line-oriented inputs (Codex rollouts). A line past ``INPUT_LIMIT`` or a file past
    ``STREAMED_LIMIT`` is an InputError."""
    with open_input(path, shown) as stream:
        number = total = 0
        while True:
            try:
                line = stream.readline(INPUT_LIMIT + 1)
            except OSError as exc:
                raise InputError(f"cannot read file ({exc.strerror})", file=shown) from None
            if not line:
                return
            number += 1
            total += len(line)
            if len(line) > INPUT_LIMIT:
                raise InputError(f"a line longer than {byte_size(INPUT_LIMIT)}; is it the right "
                                 "file?", file=shown, line=number)
            if total > STREAMED_LIMIT:
                raise too_large(shown, STREAMED_LIMIT)
            yield number, line


def decode_text(raw: bytes, shown: str) -> str:
    """UTF-8 text; a leading byte-order mark (as some Windows editors write) is dropped."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", file=shown) from None
