"""Writing output files safely: atomically, never over an input of the same run, and never
over an existing file unless asked."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from omniladder.errors import InputError, UsageError
from omniladder.inputs.files import SYMLINK_LOOP, display_path, not_regular

WRITES_ONLY_FILES = "omniladder writes only regular files, each replaced whole"


def write_files(directory: Path, files: Mapping[str, str], *, force: bool = False,
                refusal: str = "already exists; pass --force to overwrite it") -> list[Path]:
    """Write every file into directory atomically; refuse if any exists, unless force.

    Every target is checked before anything is written, so a refusal leaves the directory
    as it was.
    """
    if not force:
        refuse_existing(directory, files, refusal)
    make_directory(directory)
    written = []
    for name, text in files.items():
        target = directory / name
        write_atomic(target, text)
        written.append(target)
    return written


def refuse_existing(directory: Path, names: Iterable[str],
                    refusal: str = "already exists; pass --force to overwrite it") -> None:
    """Refuse (exit 2) when ``directory`` is a file or holds any of ``names``."""
    if directory.exists() and not directory.is_dir():
        raise InputError("is not a directory", file=display_path(directory))
    for name in names:
        if (directory / name).exists():
            raise InputError(refusal, file=display_path(directory / name))


def make_directory(directory: Path) -> None:
    """Create ``directory`` and its parents when missing; one clear line when it cannot."""
    if directory.exists() and not directory.is_dir():
        raise InputError("is not a directory", file=display_path(directory))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the directory ({exc.strerror})",
                         file=display_path(directory)) from None


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
    why = not_replaceable(real)
    if why is not None:
        raise InputError(why, file=shown)
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
    except FileNotFoundError:
        raise InputError(f"cannot write file (the directory {_as_given(real.parent)} does not "
                         "exist)", file=shown) from None
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


def not_replaceable(path: Path) -> str | None:
    """Why an existing path cannot be an output, or None for a regular file or a new one.

    The rename that replaces an output whole would replace a device (``--out /dev/null``
    run as root made /dev/null a regular file), a named pipe or a socket as a node, and it
    fails on a directory with an errno that names no directory ("Device or resource busy"
    for the working directory). A path that does not lead anywhere yet is for the write to
    create, or to say why it cannot.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return not_regular(mode, WRITES_ONLY_FILES)


def _no_directory_for(path: Path) -> str | None:
    """Why the directory an output goes into cannot take it, or None. The write would say
    "No such file or directory" of the file it was to create, and only once the work is
    done; the directory is named, before anything is written."""
    try:
        folder = Path(os.path.realpath(path)).parent
    except (OSError, ValueError):
        return None  # the write says what is wrong with such a path
    if folder.is_dir():
        return None
    shown = _as_given(folder)
    return (f"{shown} is not a directory" if folder.exists()
            else f"the directory {shown} does not exist")


def _through_links(target: Path, shown: str) -> Path:
    """The file a write to ``target`` must replace: the end of its symlinks, if any."""
    if not target.is_symlink():
        return target
    try:
        return target.resolve(strict=False)
    except (OSError, RuntimeError):  # RuntimeError: a loop, before Python 3.13
        raise InputError(SYMLINK_LOOP, file=shown) from None


# --- an output never replaces an input -----------------------------------------------------


class Output(NamedTuple):
    """A file a command will write, and the option that names it."""

    option: str
    path: Path


class _Place(NamedTuple):
    real: str
    inode: tuple[int, int] | None


def _place(path: Path) -> _Place:
    """Where a path leads: its real path, and the file's device and inode when it exists
    (the same file under another name, a symbolic or a hard link, has the same inode)."""
    try:
        info = os.stat(path)
        inode: tuple[int, int] | None = (info.st_dev, info.st_ino)
    except (OSError, ValueError):
        inode = None
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        real = str(path)
    return _Place(real, inode)


def _same(one: _Place, other: _Place) -> bool:
    return one.real == other.real or (one.inode is not None and one.inode == other.inode)


def refuse_overwriting(outputs: Sequence[Output], inputs: Iterable[tuple[str, Path]], *,
                       makes_directories: bool = False) -> None:
    """Raise the UsageError (exit 2) for an output that is ``-`` (taken for standard output
    by many tools, a file of that name here), not a regular file to replace (a directory, a
    device, a named pipe, a socket), an input of the same run, or the same file as another
    output, before anything is written.

    ``inputs`` are (what it is, path): every file the run reads, shipped catalogs included,
    but for the one a command updates on purpose (``import … --quota`` merges into the quota
    file; ``catalog check --write-baseline`` may rewrite its ``--baseline``); ``-``
    (standard input) is no file. Paths are compared as the files they lead to, through
    symbolic links and hard links. An output's directory must exist, unless the command
    ``makes_directories`` (``write_files``).
    """
    read = [(what, path, _place(path)) for what, path in inputs if str(path) != "-"]
    placed: list[tuple[Output, _Place]] = []
    for output in outputs:
        where = _place(output.path)
        shown = _as_given(output.path)
        if str(output.path) == "-":
            raise UsageError("'-' is not standard output here: an output option writes a file; "
                             "name one", file="-", field=output.option)
        why = not_replaceable(output.path) or (
            None if makes_directories else _no_directory_for(output.path))
        if why is not None:
            raise UsageError(why, file=shown, field=output.option)
        for what, path, place in read:
            if not _same(where, place):
                continue
            other = _as_given(path)
            link = "" if other == shown else f" ({other}, the same file through a link)"
            raise UsageError(f"this run reads it as {what}{link}; an output never replaces an "
                             "input (choose another file)", file=shown, field=output.option)
        for earlier, place in placed:
            if _same(where, place):
                raise UsageError(f"is the same file as {earlier.option} "
                                 f"{_as_given(earlier.path)}; each output needs a file of its "
                                 "own", file=shown, field=output.option)
        placed.append((output, where))


def _as_given(path: Path) -> str:
    """A path as the operator gave it, relative to the working directory when inside it, its
    links not followed (a message about a link must show the link)."""
    try:
        full, here = os.path.abspath(path), os.getcwd()
    except (OSError, ValueError):
        return str(path)
    inside = full.startswith(here.rstrip(os.sep) + os.sep)
    return os.path.relpath(full, here) if inside else full
