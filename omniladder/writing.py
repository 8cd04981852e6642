"""Writing output files safely: atomically, and never over an existing file unless asked."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from omniladder.errors import InputError
from omniladder.loading import display_path


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


def write_atomic(target: Path, text: str) -> None:
    """Write text to target through a temporary file in the same directory and os.replace."""
    try:
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                        dir=target.parent)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror})", file=display_path(target)) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, target)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise InputError(f"cannot write ({exc.strerror})", file=display_path(target)) from None
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
