"""Writing output files safely: atomically, and never over an existing file unless asked."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from omniladder.errors import InputError
from omniladder.loading import SYMLINK_LOOP, display_path


def write_files(directory: Path, files: Mapping[str, str], *, force: bool = False,
                refusal: str = "already exists; pass --force to overwrite it") -> list[Path]:
    """Write every file into directory atomically; refuse if any exists, unless force.

    Every target is checked before anything is written, so a refusal leaves the directory
    as it was.
    """
    if directory.exists() and not directory.is_dir():
        raise InputError("is not a directory", file=display_path(directory))
    if not force:
        for name in files:
            if (directory / name).exists():
                raise InputError(refusal, file=display_path(directory / name))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the directory ({exc.strerror})",
                         file=display_path(directory)) from None
    written = []
    for name, text in files.items():
        target = directory / name
        write_atomic(target, text)
        written.append(target)
    return written


def write_atomic(target: Path, text: str | Iterable[str]) -> None:
    """Write a file whole or not at all: a temporary file beside it, then ``os.replace``.

    ``text`` is the whole text or its pieces in order (a long JSON document, written as
    it is encoded).

    A symlink is written through: the file it points to is replaced and the link kept. An
    existing file keeps its mode; a new one gets the mode the umask allows (0644 under
    umask 022), as ``open`` would give it, not ``mkstemp``'s private 0600.
    """
    shown = display_path(target)
    real = _through_links(target, shown)
    try:
        mode: int | None = stat.S_IMODE(real.stat().st_mode)
    except OSError:
        mode = None
    if mode is None:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    try:
        handle, temp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp",
                                        dir=real.parent)
    except OSError as exc:
        raise InputError(f"cannot write file ({exc.strerror})", file=shown) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            if isinstance(text, str):
                stream.write(text)
            else:
                for piece in text:
                    stream.write(piece)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, mode)
        os.replace(temp, real)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise InputError(f"cannot write file ({exc.strerror})", file=shown) from None
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _through_links(target: Path, shown: str) -> Path:
    """The file a write to ``target`` must replace: the end of its symlinks, if any."""
    if not target.is_symlink():
        return target
    try:
        return target.resolve(strict=False)
    except (OSError, RuntimeError):  # RuntimeError: a loop, before Python 3.13
        raise InputError(SYMLINK_LOOP, file=shown) from None
