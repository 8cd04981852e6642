"""Loaders: turn files into validated models, or raise one clear InputError.

TOML and JSON carry the same shapes and are chosen by extension. Every problem names the
file, the field path inside it (``connections[3].auth_type``) and what is wrong; values
under secret-looking keys are never echoed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import itertools
import json
import math
import operator
import os
import re
import stat
import sys
import tomllib
import types
import typing
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from omniladder import timefmt
from omniladder.engine.inputs import Catalogs, LoadedInputs, merge_catalogs
from omniladder.errors import InputError, InputErrors, UsageError, close_match
from omniladder.models import (
    IDENTIFIER_PATTERN,
    SECRET_KEYS,
    BillingCatalog,
    ConnectionsFile,
    ModelCatalog,
    QuotaFile,
    Reading,
    Record,
    Settings,
    SpendEvent,
    SpendFile,
    field_types,
    identifier_problem,
)

M = TypeVar("M", bound=BaseModel)

SHIPPED_PREFIX = "<shipped>"
BILLING_CATALOG_NAME = "connection-billing.toml"
MODEL_CATALOG_NAME = "models.toml"


def display_path(path: Path) -> str:
    """A path as an operator wants to read it: relative to the working directory if inside."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):  # outside; a symlink loop; a NUL byte
        return str(path)


def shipped_catalog_dir() -> Path:
    """The curated catalogs: inside an installed wheel, or at the top of a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_catalogs", here.parent / "catalogs"):
        if (candidate / BILLING_CATALOG_NAME).is_file():
            return candidate
    raise InputError("the shipped catalogs are missing from this installation",
                     file=str(here / "_catalogs"))


# --- raw documents -------------------------------------------------------------------------


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


def _size(count: int) -> str:
    mib = 1024 * 1024
    return f"{count // mib:,} MiB" if count % mib == 0 else f"{count:,} bytes"


def too_large(shown: str, limit: int) -> InputError:
    return InputError(f"larger than {_size(limit)}, the most omniladder reads from one input; "
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
                raise InputError(f"a line longer than {_size(INPUT_LIMIT)}; is it the right "
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


def read_document(path: Path, shown: str | None = None) -> dict[str, Any]:
    """Parse a TOML or JSON file into plain data (lists become tuples), or raise InputError."""
    name = shown or display_path(path)
    suffix, raw = _read_input(path, name)
    return _document(parse_text(decode_text(raw, name), suffix, name), name)


def _read_input(path: Path, name: str) -> tuple[str, bytes]:
    """The file's suffix and bytes, or the InputError read_document raises first."""
    suffix = path.suffix.lower()
    check_input_file(path, name)
    if suffix not in (".toml", ".json"):
        message = "unsupported file type; use a .toml or .json file"
        if Path(name).suffix.lower() != suffix:
            # name is where a link leads (/dev/stdin, a link without an extension): the
            # type is read from the name given, which the message must show.
            message += f" (the type is read from the name given, '{path}')"
        raise InputError(message, file=name)
    return suffix, read_bytes(path, name)


def long_number(text: str | bytes, name: str, kind: str, line: int | None = None
                ) -> InputError:
    """The InputError for an integer of more digits than Python converts
    (``sys.get_int_max_str_digits()``, 4,300 unless changed): json and tomllib raise a bare
    ValueError for one, a guard against the quadratic cost of converting it. The line is the
    first run of that many digits, when ``line`` (the line of a one-line document) is not
    given."""
    limit = sys.get_int_max_str_digits()
    if line is None and limit > 0:
        found = re.search(rf"[0-9_]{{{limit + 1},}}", text if isinstance(text, str)
                          else text.decode("utf-8", "replace"))
        if found is not None:
            line = found.string.count("\n", 0, found.start()) + 1
    return InputError(f"invalid {kind}: a number of more than {limit} digits", file=name,
                      line=line)


def parse_text(text: str, suffix: str, name: str) -> Any:
    """A ``.toml`` or ``.json`` document's plain data, or one InputError naming the line."""
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            line = _toml_error_line(str(exc))
            message = re.sub(r"\s*\(at line \d+, column \d+\)|\s*\(at end of document\)", "",
                             str(exc))
            message = _toml_twice(message, text, line)
            raise InputError(f"invalid TOML: {message}", file=name, line=line) from None
        except RecursionError:
            raise InputError("invalid TOML: nested too deeply", file=name) from None
        except ValueError:
            raise long_number(text, name, "TOML") from None
    return parse_json(text, name)


def parse_json(text: str | bytes, name: str, *, what: str = "invalid JSON", hint: str = "",
               first_line: int = 1) -> Any:
    """A JSON document's plain data, or one InputError naming the file and the line: the
    one reading of JSON text every input takes (the input files, snapshots, saved plans,
    candidate lists, an export's ``--current``).

    ``what`` starts the message of a document that is not JSON, ``hint`` ends it (what the
    option reads); ``first_line`` is the line of the file ``text`` starts at. A key given
    twice in one object is refused (``repeated_key``), as TOML refuses it, and so is a lone
    surrogate (``reject_lone_surrogates``).
    """
    more = f"; {hint}" if hint else ""
    try:
        data = json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKey:
        raise repeated_key(text, name, first_line) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{what}: {exc.msg} (column {exc.colno}){more}", file=name,
                         line=exc.lineno + first_line - 1) from None
    except RecursionError:
        raise InputError(f"{what}: nested too deeply", file=name) from None
    except ValueError:
        error = long_number(text, name, "JSON")
        if error.line is not None:
            error.line += first_line - 1
        raise error from None
    reject_lone_surrogates(text, data, name)
    return data


class RepeatedKey(Exception):
    """An object of the document being read gives one key twice."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object as a dict, or ``RepeatedKey`` when it gives a key twice.

    Python's parser keeps the last of two values silently, so a reading written with its
    keys in either order would plan two ways. Only a length is compared per object (about
    a third more than a plain parse): the key and its place are found again, on a
    refusal only, by ``repeated_key``."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise RepeatedKey
    return found


class _Pairs(list[tuple[str, Any]]):
    """An object's members as the parser gave them, repeats kept."""


def repeated_key(text: str | bytes, name: str, first_line: int = 1,
                 line: int | None = None) -> InputError:
    """The InputError for JSON text one of whose objects gives a key twice: the first
    such object in document order, its field path and key; the line of the second when
    the key is spelled exactly twice in the whole text (``line`` when the caller knows
    it: a line-oriented file)."""
    document = json.loads(text, object_pairs_hook=_Pairs)
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Pairs):
            seen: set[str] = set()
            for key, _ in value:
                if key in seen:
                    if line is None:
                        line = _second_spelling(text, key)
                        line = None if line is None else line + first_line - 1
                    return InputError(
                        f"key {key!r} is given twice in one object; a JSON key is given once "
                        "(which of the two values counts is not defined: remove one)",
                        file=name, field=format_loc((*path, key)), line=line)
                seen.add(key)
            stack.extend(((*path, key), item) for key, item in reversed(value))
        elif isinstance(value, list):
            stack.extend(((*path, index), item)
                         for index, item in reversed(list(enumerate(value))))
    raise AssertionError("a repeated key was found, then not found")


def _second_spelling(text: str | bytes, key: str) -> int | None:
    """The line of the second of exactly two spellings of ``key`` as a member name."""
    source = text if isinstance(text, str) else text.decode("utf-8", "replace")
    spelled = re.compile(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:")
    found = [match.start() for match in spelled.finditer(source)]
    if len(found) != 2:
        return None
    return source.count("\n", 0, found[1]) + 1


# The surrogate patterns are compiled when a JSON document first takes the plain path
# (about 3 million instructions that a run whose files pydantic reads straight from JSON
# text never spends, docs/performance.md#start-up).


@functools.cache
def _surrogate_escape(text_type: type[str] | type[bytes]) -> re.Pattern[Any]:
    """A ``\\u`` escape naming half of a surrogate pair, in JSON text of ``text_type``."""
    escape = r"\\u[dD][89a-fA-F]"
    return re.compile(escape if text_type is str else escape.encode())


@functools.cache
def _surrogate() -> re.Pattern[str]:
    """Half of a surrogate pair, alone in a parsed string."""
    return re.compile("[\ud800-\udfff]")


def reject_lone_surrogates(text: str | bytes, data: Any, name: str,
                           line: int | None = None) -> None:
    """Raise the InputError naming the first string of parsed JSON that holds a lone
    surrogate, if any.

    JSON lets a ``\\u`` escape name half of a surrogate pair (``"\\ud800"``) and Python's
    parser accepts it, but no output can encode such a string: every view would fail on it.
    Only a ``\\ud8..``-``\\udf..`` escape in the text can produce one (raw UTF-8 cannot), so a
    document without one is not walked.
    """
    if _surrogate_escape(type(text)).search(text) is None:
        return
    found = _first_lone_surrogate(data)
    if found is None:
        return
    where, value, in_key = found
    char = _surrogate().search(value)
    assert char is not None
    subject = f"key '{escape_surrogates(value)}' holds" if in_key else "contains"
    raise InputError(f"{subject} a lone surrogate ({escape_surrogates(char.group())}); JSON "
                     "text must encode whole characters (an escaped surrogate needs its pair)",
                     file=name, field=format_loc(where) or None, line=line)


def escape_surrogates(value: str) -> str:
    """``value`` with each lone surrogate written as its ``\\uXXXX`` escape."""
    return _surrogate().sub(lambda match: f"\\u{ord(match.group()):04x}", value)


def _first_lone_surrogate(data: Any) -> tuple[tuple[str | int, ...], str, bool] | None:
    """(field path, the string, whether it is a key) of the first string holding a lone
    surrogate, walking without recursion (a document may nest as deep as the parser went)."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if _surrogate().search(value):
                return path, value, False
        elif isinstance(value, dict):
            items = list(value.items())
            for key in value:
                if isinstance(key, str) and _surrogate().search(key):
                    return path, key, True
            stack.extend(((*path, key), item) for key, item in reversed(items))
        elif isinstance(value, list | tuple):
            stack.extend(((*path, index), item)
                         for index, item in reversed(list(enumerate(value))))
    return None


def _document(data: Any, name: str) -> dict[str, Any]:
    """The parsed top level as the models take it: a table, lists as tuples, no secrets."""
    if not isinstance(data, dict):
        raise InputError(f"the top level must be a table/object, got {_type_name(data)}",
                         file=name)
    try:
        frozen = _freeze(data)
    except _SecretKey:
        _reject_secrets(data, name, ())
        raise AssertionError("a secret key was found, then not found") from None
    except RecursionError:
        raise InputError("nested too deeply to be an omniladder file", file=name) from None
    assert isinstance(frozen, dict)
    return frozen


def _toml_twice(message: str, text: str, line: int | None) -> str:
    """tomllib's words for a key or table given twice, said with the name the file uses.

    tomllib names a table as a Python tuple (``Cannot declare ('ladder',) twice``) and a key
    not at all (``Cannot overwrite a value``): the key is read off the line it points at.
    Any other message is returned as it is.
    """
    import ast

    table = re.fullmatch(r"Cannot declare (\(.*\)) twice", message)
    frozen = re.fullmatch(r"Cannot mutate immutable namespace (\(.*\))", message)
    found = table or frozen
    if found is not None:
        try:
            dotted = ".".join(ast.literal_eval(found.group(1)))
        except (ValueError, SyntaxError, TypeError):
            return message
        if table is not None:
            return (f"table [{dotted}] is declared twice; a TOML table is declared once "
                    "(merge the two)")
        return (f"{dotted} was written whole (an inline table or array), so it cannot be "
                "extended here")
    if message == "Cannot overwrite a value":
        lines = text.splitlines()
        key = (lines[line - 1].partition("=")[0].strip()
               if line is not None and 0 < line <= len(lines) else "")
        return (f"key {key} is set twice; a TOML key is set once" if key
                else "a key is set twice; a TOML key is set once")
    return message


def _toml_error_line(message: str) -> int | None:
    match = re.search(r"at line (\d+)", message)
    return int(match.group(1)) if match else None


class _SecretKey(Exception):
    """A secret-looking key is somewhere in the document (``_reject_secrets`` says where)."""


_CONTAINERS = (dict, list)


def _freeze(value: Any) -> Any:
    """Lists become tuples, in one pass that also stops at any secret-looking key.

    Scalars are copied without a call: a large quota file has hundreds of thousands.
    """
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and key.strip().lower() in SECRET_KEYS:
                raise _SecretKey
            out[key] = _freeze(item) if isinstance(item, _CONTAINERS) else item
        return out
    if isinstance(value, list):
        return tuple([_freeze(item) if isinstance(item, _CONTAINERS) else item
                      for item in value])
    return value


def as_tuples(value: Any) -> Any:
    """Plain data as the loaders hand it to the strict models: arrays become tuples."""
    if isinstance(value, dict):
        return {key: as_tuples(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return tuple(as_tuples(item) for item in value)
    return value


def _reject_secrets(value: Any, name: str, path: tuple[str | int, ...]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.strip().lower() in SECRET_KEYS:
                raise InputError(
                    f"key {key!r} looks like a secret; omniladder never needs credentials, "
                    "remove it (its value is never shown)",
                    file=name, field=format_loc((*path, key)),
                )
            _reject_secrets(item, name, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _reject_secrets(item, name, (*path, index))


def _type_name(value: Any) -> str:
    names = {dict: "a table", list: "an array", tuple: "an array", str: "a string",
             bool: "a boolean", int: "an integer", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def format_loc(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


# --- validation ----------------------------------------------------------------------------


def validate(model: type[M], data: dict[str, Any], name: str, text_path: Path | None = None) -> M:
    """Validate plain data against a model; every problem becomes one line of an InputError.

    Each problem names its field path and, in a TOML file, its line; an unknown key says
    which known key it is closest to.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems: list[InputError] = []
        for error in _errors(exc):
            loc = tuple(part for part in error["loc"] if isinstance(part, str | int))
            message = _explain(error["type"], error["msg"], loc, error.get("ctx"), data)
            if error["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
                match = close_match(loc[-1], field_names(model, loc[:-1]))
                if match is not None:
                    message = (f"unknown key {loc[-1]!r}; did you mean {match!r}? (unknown "
                               "keys are not ignored)")
            line = toml_line(text_path, loc) if text_path is not None else None
            problems.append(InputError(message, file=name, field=format_loc(loc) or None,
                                       line=line))
        if len(problems) == 1:
            raise problems[0] from None
        raise InputErrors(problems, file=name) from None


_AS_A_MODEL_SAYS = {
    # A record (a dataclass) words a few problems as a function's arguments; a model's words
    # are the ones the messages are made of.
    "unexpected_keyword_argument": ("extra_forbidden", "Extra inputs are not permitted"),
    "unexpected_positional_argument": ("extra_forbidden", "Extra inputs are not permitted"),
    "missing_argument": ("missing", "Field required"),
    "missing_keyword_only_argument": ("missing", "Field required"),
    "missing_positional_only_argument": ("missing", "Field required"),
}


def _errors(exc: ValidationError) -> list[ErrorDetails]:
    """The problems of a validation error, each worded as a model words it; an identifier
    that fails its pattern, as the Python check it stands for words it."""
    out = exc.errors(include_url=False)
    for error in out:
        kind = error["type"]
        if (kind == "string_pattern_mismatch"
                and (error.get("ctx") or {}).get("pattern") == IDENTIFIER_PATTERN
                and isinstance(error["input"], str)):
            problem = identifier_problem(error["input"]) or "not an identifier"
            error["type"], error["msg"] = "value_error", f"Value error, {problem}"
            error["ctx"] = {"error": ValueError(problem)}
        elif kind in _AS_A_MODEL_SAYS:
            error["type"], error["msg"] = _AS_A_MODEL_SAYS[kind]
        elif kind in ("dataclass_type", "dataclass_exact_type"):
            name = str((error.get("ctx") or {}).get("class_name", "?"))
            error["type"] = "model_type"
            error["msg"] = f"Input should be a valid dictionary or instance of {name}"
    return out


def _did_you_mean(word: str, known: Iterable[str]) -> str:
    match = close_match(word, known)
    return f"; did you mean {match!r}?" if match else ""


def field_names(model: type[BaseModel] | type[Record], loc: Sequence[str | int]
                ) -> tuple[str, ...]:
    """The keys the model takes at ``loc`` (a field path inside it); () if not a model."""
    current: type[BaseModel] | type[Record] | None = model
    for part in loc:
        if isinstance(part, int):
            continue
        fields = field_types(current) if current is not None else {}
        current = _model_in(fields[part]) if part in fields else None
        if current is None:
            return ()
    return tuple(field_types(current)) if current is not None else ()


def _is_model(annotation: Any) -> bool:
    """A model or a record: a type whose input is a table of known keys."""
    return isinstance(annotation, type) and issubclass(annotation, BaseModel | Record)


def _model_in(annotation: Any) -> type[BaseModel] | type[Record] | None:
    """The model inside an annotation such as ``tuple[Connection, ...] | None``."""
    if _is_model(annotation):
        model: type[BaseModel] | type[Record] = annotation
        return model
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _lookup(data: Any, loc: Sequence[str | int]) -> tuple[bool, Any]:
    current = data
    for part in loc:
        if isinstance(current, dict) and isinstance(part, str) and part in current:
            current = current[part]
        elif isinstance(current, tuple) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
        else:
            return False, None
    return True, current


def describe_errors(exc: ValidationError, data: dict[str, Any]
                    ) -> list[tuple[tuple[str | int, ...], str, str]]:
    """Every problem of a validation error as (field path, error type, readable message)."""
    out: list[tuple[tuple[str | int, ...], str, str]] = []
    for error in _errors(exc):
        loc = tuple(part for part in error["loc"] if isinstance(part, str | int))
        out.append((loc, error["type"],
                    _explain(error["type"], error["msg"], loc, error.get("ctx"), data)))
    return out


def _explain(kind: str, msg: str, loc: Sequence[str | int], ctx: dict[str, Any] | None,
             data: dict[str, Any]) -> str:
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        key = loc[-1] if loc else "?"
        if len(loc) >= 2 and loc[-2] == "rung_budget_usd":
            return (f"no budget for rung {key!r}: only cheap and premium take a budget "
                    "(quota rungs are never billed)")
        return f"unknown key {key!r} (check the spelling; unknown keys are not ignored)"
    found, value = _lookup(data, loc)
    got = f", got {_type_name(value)}" if found else ""
    if kind == "literal_error" and ctx is not None:
        expected = str(ctx.get("expected", ""))
        text = f"must be one of {expected}" + (
            f", got {value!r}" if found and isinstance(value, str) else got)
        if found and isinstance(value, str):
            text += _did_you_mean(value, re.findall(r"'([^']*)'", expected))
        return text
    if kind in ("greater_than_equal", "less_than_equal") and found:
        return f"{msg.replace('Input should be', 'must be')}, got {value!r}"
    if kind in ("value_error", "assertion_error"):
        return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    text = (msg.replace("Input should be", "must be")
            .replace("a valid tuple", "an array").replace("a valid list", "an array")
            .replace("a valid dictionary", "a table"))
    return text + got if kind.endswith("_type") else text


_HEADER = r"^\s*\[\[\s*([A-Za-z0-9_.\-]+)\s*\]\]\s*(#.*)?$"
"""An array-of-tables header line; compiled (by ``re``, which keeps it) only when an error
asks for a line."""


def toml_line(path: Path | None, loc: Sequence[str | int]) -> int | None:
    """Best effort: the line of an array-of-tables item, or of its key, in a TOML file."""
    if path is None or path.suffix.lower() != ".toml" or len(loc) < 2:
        return None
    table, index = loc[0], loc[1]
    if not isinstance(table, str) or not isinstance(index, int):
        return None
    try:
        lines = decode_text(read_bytes(path, str(path)), str(path)).splitlines()
    except InputError:
        return None
    seen = -1
    start = None
    for number, text in enumerate(lines, start=1):
        match = re.match(_HEADER, text)
        if match and match.group(1) == table:
            seen += 1
            if seen == index:
                start = number
                break
    if start is None:
        return None
    if len(loc) >= 3 and isinstance(loc[2], str):
        key = re.compile(rf"^\s*{re.escape(loc[2])}\s*=")
        for number in range(start, len(lines)):
            text = lines[number]
            if text.lstrip().startswith("["):
                break
            if key.match(text):
                return number + 1
    return start


def load_model(model: type[M], path: Path, shown: str | None = None) -> M:
    """Read and validate one file, or raise the InputError(s) saying what is wrong.

    A strict model that forbids unknown keys everywhere (every input model) is validated
    straight from JSON text by pydantic's own parser: no Python walk over the document. Any
    problem at all, a secret-looking key included (it is an unknown key), sends the file
    down the plain path, which finds the same problem and says it as always.
    """
    name = shown or display_path(path)
    suffix, raw = _read_input(path, name)
    direct = forbids_unknown_keys_everywhere(model)
    if direct and suffix == ".json":
        body = raw.removeprefix(b"\xef\xbb\xbf")
        found = _from_json(model, body)
        if found is not None:
            _refuse_repeated_keys(body, name, found)
            return found
    data = parse_text(decode_text(raw, name), suffix, name)
    if direct and suffix == ".toml" and isinstance(data, dict):
        # tomllib is pure Python and gives plain data; the C encoder turns it into JSON
        # faster than a Python walk turns its lists into tuples. Native TOML dates and
        # times, NaN and infinities are not JSON: those files take the plain path.
        try:
            text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            pass
        else:
            found = _from_json(model, text)
            if found is not None:
                return found
    return validate(model, _document(data, name), name, path)


_CLOSED: dict[type[BaseModel] | type[Record], bool] = {}


def forbids_unknown_keys_everywhere(model: type[BaseModel] | type[Record]) -> bool:
    """The model and every model or record inside it are strict and forbid unknown keys,
    and none takes a free-form table: then a secret-looking key anywhere is a validation
    error."""
    found = _CLOSED.get(model)
    if found is None:
        _CLOSED[model] = True  # a model inside itself is judged by its other fields
        config = (model.model_config if issubclass(model, BaseModel)
                  else model.__pydantic_config__)
        found = config.get("extra") == "forbid" and config.get("strict") is True and all(
            _closed_annotation(annotation) for annotation in field_types(model).values())
        _CLOSED[model] = found
    return found


def _closed_annotation(annotation: Any) -> bool:
    if _is_model(annotation):
        return forbids_unknown_keys_everywhere(annotation)
    if (typing.get_origin(annotation) or annotation) in (dict, typing.Any):
        return False
    return all(_closed_annotation(arg) for arg in typing.get_args(annotation))


def _refuse_repeated_keys(text: bytes, name: str, found: BaseModel) -> None:
    """The InputError ``parse_json`` raises for a key given twice, for a document pydantic
    read straight from its text as ``found`` (its parser keeps the last value of a repeated
    key, as Python's does).

    Most documents are cleared without a second parse (``no_key_repeats``); any other is
    parsed again with ``unique_keys``, which finds a repeat wherever it is."""
    if no_key_repeats(text, found):
        return
    try:
        json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKey:
        raise repeated_key(text, name) from None
    except (ValueError, RecursionError):  # read by pydantic, whose limits differ: its word
        return


def no_key_repeats(text: bytes, found: BaseModel) -> bool:
    """True only when no object of the JSON ``text`` pydantic validated as ``found`` gives a
    key twice; False when that is not shown this way (then it is looked for by parsing).

    Two counts meet: at most ``keys_spelled_at_most(text)`` member names are written in the
    text, and ``found`` holds at least ``keys_given_at_least(found)`` distinct keys, summed
    over its objects (each a model or a record: a closed model has no other object). Every
    object gives at least as many names as distinct keys, and more exactly when it repeats
    one; so when the names written are no more than the distinct keys held, none repeats.
    """
    spelled = keys_spelled_at_most(text)
    if spelled is None:
        return False
    given = keys_given_at_least(type(found), [found])
    return given is not None and spelled <= given


def keys_spelled_at_most(text: bytes) -> int | None:
    """At least the number of member names the JSON text writes; None when it writes white
    space where a name could end.

    A member name is a string followed by optional white space and a colon. When no tab or
    carriage return is in the text and no space or line feed stands before a colon, each
    name's closing quote is followed by its colon: one ``":`` per name (a string value
    holding ``":`` only adds to the count). Each test is a C search of the bytes: about
    nine instructions a byte in all, where a parse costs over a hundred."""
    if b"\t" in text or b"\r" in text or b" :" in text:
        return None
    newline = text.find(b"\n")
    if -1 < newline < len(text) - 1 and b"\n:" in text:
        return None
    return text.count(b'":')


_REQUIRED = object()
"""The default of a field that has none: its key is given in every object."""


class _Members(NamedTuple):
    """The fields of a model or record as ``keys_given_at_least`` counts them."""

    required: int
    """How many fields have no default: each object gives their keys."""
    unset: operator.attrgetter[Any] | None
    """The fields whose default is None, fetched together (a tuple, or one value)."""
    unset_count: int
    others: tuple[tuple[str, Any], ...]
    """Each other field with a default, and that default."""
    inside: tuple[tuple[str, type[BaseModel] | type[Record], bool], ...]
    """Each field holding a model or record (``False``) or a tuple of them (``True``)."""


def keys_given_at_least(kind: type[BaseModel] | type[Record], items: list[Any]) -> int | None:
    """At least the number of keys the objects ``items`` (all validated as ``kind``) and the
    objects inside them were given, summed; None when that is not counted this way.

    A field whose value is not its default was given (a required one always is); a field
    given its default is not counted, which only makes the count smaller. This holds since
    no validator of an input model sets a field; a type with a default made by a factory or
    a field read under an alias (two fields could then read one key) is not counted. The
    walk is a few C calls per object: the fields defaulting to None are fetched as one
    tuple and their Nones counted."""
    members = _members(kind)
    if members is None:
        return None
    count = len(items)
    total = members.required * count
    if members.unset is not None:
        fetched = map(members.unset, items)
        total += members.unset_count * count - (
            sum(map(tuple.count, fetched, itertools.repeat(None)))
            if members.unset_count > 1 else list(fetched).count(None))
    for name, default in members.others:
        total += count - list(map(operator.attrgetter(name), items)).count(default)
    for name, holds, many in members.inside:
        held = [value for value in map(operator.attrgetter(name), items) if value is not None]
        if many:
            held = list(itertools.chain.from_iterable(held))
        inside = keys_given_at_least(holds, held) if held else 0
        if inside is None:
            return None
        total += inside
    return total


_MEMBERS: dict[type[BaseModel] | type[Record], _Members | None] = {}


def _members(kind: type[BaseModel] | type[Record]) -> _Members | None:
    """The fields of a model or record, or None when one cannot be counted."""
    if kind not in _MEMBERS:
        _MEMBERS[kind] = _count_members(kind)
    return _MEMBERS[kind]


def _count_members(kind: type[BaseModel] | type[Record]) -> _Members | None:
    defaults: dict[str, Any] = {}
    if issubclass(kind, BaseModel):
        if kind.model_config.get("validate_default"):
            return None
        for name, info in kind.model_fields.items():
            if (info.default_factory is not None or info.validate_default
                    or info.alias is not None or info.validation_alias is not None):
                return None  # an alias may let two fields read one key
            defaults[name] = _REQUIRED if info.is_required() else info.default
    else:
        for item in dataclasses.fields(typing.cast(Any, kind)):
            if (item.default_factory is not dataclasses.MISSING
                    or isinstance(item.default, FieldInfo)):
                return None
            defaults[item.name] = (_REQUIRED if item.default is dataclasses.MISSING
                                   else item.default)
    unset: list[str] = []
    others: list[tuple[str, Any]] = []
    inside: list[tuple[str, type[BaseModel] | type[Record], bool]] = []
    for name, annotation in field_types(kind).items():
        holds = _holds(annotation)
        if holds is None:
            return None
        if holds[0] is not None:
            inside.append((name, holds[0], holds[1]))
        if defaults[name] is None:
            unset.append(name)
        elif defaults[name] is not _REQUIRED:
            others.append((name, defaults[name]))
    required = sum(default is _REQUIRED for default in defaults.values())
    return _Members(required=required,
                    unset=operator.attrgetter(*unset) if unset else None,
                    unset_count=len(unset), others=tuple(others), inside=tuple(inside))


def _holds(annotation: Any) -> tuple[type[BaseModel] | type[Record] | None, bool] | None:
    """The model or record an annotation's value is (``False``) or is a tuple of
    (``True``), None inside it standing for no value; ``(None, False)`` when it holds no
    model; None when it holds one any other way."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if _is_model(annotation):
        return annotation, False
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        kept = [arg for arg in args if arg is not type(None)]
        if len(kept) == 1:
            return _holds(kept[0])
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        inner = _holds(args[0])
        if inner is not None and inner[0] is not None and not inner[1]:
            return inner[0], True
    return None if _model_in_any(annotation) else (None, False)


def _model_in_any(annotation: Any) -> bool:
    """A model or record anywhere inside an annotation."""
    return _is_model(annotation) or any(_model_in_any(arg)
                                        for arg in typing.get_args(annotation))


def _from_json(model: type[M], text: str | bytes) -> M | None:
    """The model validated from JSON text; None on any problem (the plain path says it)."""
    try:
        return model.model_validate_json(text)
    except (ValidationError, ValueError, RecursionError):
        return None


# --- catalogs ------------------------------------------------------------------------------


def catalog_paths(billing_files: Iterable[Path], model_files: Iterable[Path],
                  include_shipped: bool = True
                  ) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """The billing and model catalog files in override order, with their display names."""
    billing_paths: list[tuple[Path, str]] = []
    model_paths: list[tuple[Path, str]] = []
    if include_shipped:
        shipped = shipped_catalog_dir()
        billing_paths.append((shipped / BILLING_CATALOG_NAME,
                              f"{SHIPPED_PREFIX}/{BILLING_CATALOG_NAME}"))
        model_paths.append((shipped / MODEL_CATALOG_NAME, f"{SHIPPED_PREFIX}/{MODEL_CATALOG_NAME}"))
    billing_paths += [(path, display_path(path)) for path in billing_files]
    model_paths += [(path, display_path(path)) for path in model_files]
    return billing_paths, model_paths


def load_catalogs(billing_files: Iterable[Path], model_files: Iterable[Path],
                  include_shipped: bool = True) -> Catalogs:
    billing_paths, model_paths = catalog_paths(billing_files, model_files, include_shipped)

    return merge_catalogs(
        [(shown, load_model(BillingCatalog, path, shown).entries)
         for path, shown in billing_paths],
        [(shown, load_model(ModelCatalog, path, shown).models) for path, shown in model_paths])


# --- the whole input set -------------------------------------------------------------------


class InputFiles(NamedTuple):
    """Which files to read, after the settings file and the flags are combined."""

    settings_file: Path | None = None
    connections: Path | None = None
    quota: Path | None = None
    spend: Path | None = None
    billing_catalogs: tuple[Path, ...] = ()
    model_catalogs: tuple[Path, ...] = ()
    no_shipped_catalogs: bool = False
    window_catalogs: tuple[Path, ...] = ()
    named_in_settings: tuple[tuple[str, Path], ...] = ()
    """Each path the settings file gave rather than a flag, with its key there
    (``[inputs] quota``, ``[catalogs] billing``)."""


def _as_named(path: Path) -> str:
    """A path as the operator named it, relative to the working directory when inside it,
    without following links (``display_path`` shows where a link leads)."""
    try:
        return str(Path(os.path.abspath(path)).relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def find_settings(explicit: Path | None) -> Path | None:
    if explicit is not None:
        return explicit
    default = Path("omniladder.toml")
    return default if default.is_file() else None


def resolve_files(settings_path: Path | None, settings: Settings, *,
                  connections: Path | None = None, quota: Path | None = None,
                  spend: Path | None = None, catalogs: Sequence[Path] = (),
                  models_catalogs: Sequence[Path] = (),
                  no_shipped_catalogs: bool = False,
                  windows_catalogs: Sequence[Path] = ()) -> InputFiles:
    """Flags win over the settings file's [inputs]; settings paths are relative to the folder
    of the settings file as it is named (a link's own folder, not the one it leads to, as
    git resolves a relative include: docs/inputs.md#s2-3)."""
    base = settings_path.parent if settings_path is not None else Path(".")
    named: list[tuple[str, Path]] = []

    def from_settings(value: str | None, key: str) -> Path | None:
        if value is None:
            return None
        named.append((f"[inputs] {key}", base / value))
        return base / value

    chosen = {"connections": connections or from_settings(settings.inputs.connections,
                                                          "connections"),
              "quota": quota or from_settings(settings.inputs.quota, "quota"),
              # a traffic ledger is a spend ledger (SPEC §7.1): the one named for spend
              "spend": spend or from_settings(settings.inputs.spend, "spend")
              or from_settings(settings.inputs.traffic, "traffic")}
    for key, paths in (("billing", settings.catalogs.billing),
                       ("models", settings.catalogs.models),
                       ("windows", settings.catalogs.windows)):
        named += [(f"[catalogs] {key}", base / path) for path in paths]
    return InputFiles(
        settings_file=settings_path,
        connections=chosen["connections"],
        quota=chosen["quota"],
        spend=chosen["spend"],
        billing_catalogs=tuple(base / p for p in settings.catalogs.billing) + tuple(catalogs),
        model_catalogs=tuple(base / p for p in settings.catalogs.models) + tuple(models_catalogs),
        no_shipped_catalogs=no_shipped_catalogs or not settings.catalogs.include_shipped,
        window_catalogs=(tuple(base / p for p in settings.catalogs.windows)
                         + tuple(windows_catalogs)),
        named_in_settings=tuple(named),
    )


LINE_SUFFIXES = (".jsonl", ".ndjson")
"""The endings of a ledger written one JSON event per line (SPEC §7.1)."""


def _traffic_spend(path: Path, shown: str, warnings: list[str]) -> tuple[SpendEvent, ...]:
    """The spend events of a traffic ledger given where a spend ledger goes (SPEC §7.1),
    with the notes its reading made added to ``warnings``."""
    from omniladder.inputs.traffic import spend_events

    spend, notes = spend_events(path, shown)
    warnings.extend(notes)
    return spend


@contextlib.contextmanager
def named_by_settings(files: InputFiles) -> Iterator[None]:
    """An error about a file the settings file named (missing, a directory, unreadable)
    names the settings file and the key too: ``omniladder.toml: [inputs] quota:
    data/quota.json: file not found (…)``. An error inside the file names it alone."""
    try:
        yield
    except InputErrors:
        raise
    except InputError as exc:
        settings = files.settings_file
        if settings is None or exc.field is not None or exc.line is not None:
            raise
        for key, path in files.named_in_settings:
            shown = display_path(path)
            if exc.file != shown:
                continue
            named = _as_named(settings)
            folder = str(Path(named).parent)
            link = (" (a link: not the folder it leads to)" if settings.is_symlink() else "")
            raise InputError(
                f"{shown}: {exc.message}; paths in {key.split()[0]} are relative to the folder "
                f"of the settings file as named, {folder}{link}", file=named,
                field=key) from None
        raise


def load_settings(path: Path | None) -> Settings:
    return Settings() if path is None else load_model(Settings, path)


def load_inputs(settings_path: Path | None = None, **flags: Any) -> LoadedInputs:
    """Read and validate every input: settings, connections, quota, spend and catalogs."""
    settings = load_settings(settings_path)
    files = resolve_files(settings_path, settings, **flags)
    return load_files(files, settings)


_CHECKED_AT = operator.attrgetter("checked_at")


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
AHEAD_SLACK = timedelta(minutes=5)
"""SPEC §2.2 (v1.2): an instant later than the clock by more than this is warned about."""


def clock() -> datetime:
    """The current time, for the checks that compare inputs with it (tests replace it)."""
    return datetime.now(UTC)


def _resets_at_or_before(reading: Reading) -> bool:
    """A reset of the reading (top level or a window's) at or before its ``checked_at``."""
    # Asked of every reading a quota file holds (30,000 at 10,000 connections) and nearly
    # always False: a plain loop, without a generator for any(), takes half the time.
    checked = reading.checked_at
    reset = reading.reset_at
    if reset is not None and reset <= checked:
        return True
    if reading.windows is not None:
        for window in reading.windows:
            reset = window.reset_at
            if reset is not None and reset <= checked:
                return True
    return False


def _without_unusable_resets(reading: Reading, index: int, unusable: list[str]) -> Reading:
    """SPEC §2.2 (v1.2): a reset at the epoch (a source's 0 for "not given") is absent; one
    at or before the reading's own ``checked_at`` is unusable, read as absent and noted."""
    checked = reading.checked_at
    noted: list[str] = []

    def kept(reset_at: datetime | None, where: str) -> datetime | None:
        if reset_at is None or reset_at > checked:
            return reset_at
        if reset_at > EPOCH:
            noted.append(f"{where}reset_at {timefmt.iso(reset_at)}")
        return None

    top = kept(reading.reset_at, "")
    windows = reading.windows
    if windows is not None:
        windows = tuple(
            window if window.reset_at is None or window.reset_at > checked
            else dataclasses.replace(window, reset_at=kept(window.reset_at,
                                                           f"window {window.name!r} "))
            for window in windows)
    if noted:
        unusable.append(f"readings[{index}] ({reading.connection} at "
                        f"{timefmt.iso(checked)}): {', '.join(noted)}")
    return dataclasses.replace(reading, reset_at=top, windows=windows)


def _ahead_of_clock(taken_at: datetime | None, latest: datetime | None,
                    shown: str) -> list[str]:
    """SPEC §2.2 (v1.2): a snapshot or reading instant more than 5 minutes ahead of the
    clock; a plan made from it answers for an instant that has not happened."""
    limit = clock() + AHEAD_SLACK
    found: list[str] = []
    for what, instant in (("taken_at", taken_at), ("the latest checked_at", latest)):
        if instant is not None and instant > limit:
            found.append(f"{shown}: {what} {timefmt.iso(instant)} is ahead of the clock by "
                         f"more than 5 minutes; check the clock of whatever wrote it "
                         "(`omniladder quota prune --after` removes readings from the future)")
    return found


def _in_order(history: list[Reading], quota: QuotaFile | None,
              shown: dict[str, str]) -> tuple[Reading, ...]:
    """One connection's readings in the order of their ``checked_at`` (a stable sort, in
    place), one per instant (``_one_per_instant``)."""
    # 10,000 histories at 10,000 connections, nearly all without a repeated instant: one
    # look at neighbours decides that, and only a history with a repeat is walked again.
    if len(history) > 1:
        history.sort(key=_CHECKED_AT)
        previous = history[0].checked_at
        for reading in history[1:]:
            if reading.checked_at == previous:
                return _one_per_instant(history, quota, shown)
            previous = reading.checked_at
    return tuple(history)


def _one_per_instant(history: list[Reading], quota: QuotaFile | None,
                     shown: dict[str, str]) -> tuple[Reading, ...]:
    """SPEC §2.2 (v1.2): identical readings of one connection at one instant are one; two
    different ones are an input error naming both. ``history`` is in order of
    ``checked_at`` and repeats an instant (``_in_order`` found one)."""
    for before, after in itertools.pairwise(history):
        if before.checked_at == after.checked_at and before != after:
            connection, at = before.connection, before.checked_at
            assert quota is not None
            found = [(index, _settled(reading))
                     for index, reading in enumerate(quota.readings)
                     if reading.connection == connection and reading.checked_at == at]
            first = found[0][0]
            second = next(index for index, reading in found if reading != found[0][1])
            raise InputError(
                f"readings[{first}] and readings[{second}] are different readings of "
                f"connection {connection!r} at {timefmt.iso(at)}; two observations of "
                "one instant cannot disagree (remove one)",
                file=shown["quota"], field=f"readings[{second}]")
    out = [history[0]]
    for reading in history[1:]:
        if reading.checked_at != out[-1].checked_at:
            out.append(reading)
    return tuple(out)


def _settled(reading: Reading) -> Reading:
    """A reading as the history holds it (unusable resets read as absent)."""
    return (_without_unusable_resets(reading, 0, []) if _resets_at_or_before(reading)
            else reading)


def load_files(files: InputFiles, settings: Settings) -> LoadedInputs:
    with named_by_settings(files):
        return _load_files(files, settings)


def _load_files(files: InputFiles, settings: Settings) -> LoadedInputs:
    warnings: list[str] = []
    shown: dict[str, str] = {}
    if files.settings_file is not None:
        shown["settings"] = display_path(files.settings_file)
    ladder = settings.ladder
    if ladder.reentry_min_remaining_percent < ladder.exit_cutoff_percent:
        warnings.append(
            f"{shown.get('settings', 'settings')}: ladder.reentry_min_remaining_percent "
            f"({ladder.reentry_min_remaining_percent:g}) is below exit_cutoff_percent "
            f"({ladder.exit_cutoff_percent:g}); the effective re-entry floor is the cutoff"
        )

    if files.connections is None:
        raise UsageError(
            "no connections file: pass --connections, or --config with [inputs] connections "
            "(or run where an omniladder.toml is)"
        )
    shown["connections"] = display_path(files.connections)
    fleet = load_model(ConnectionsFile, files.connections)
    connections = fleet.connections
    known = {connection.id for connection in connections}
    duplicate = fleet.first_duplicate() if len(known) < len(connections) else None
    if duplicate is not None:
        first, again = duplicate
        raise InputError(
            f"duplicate connection id {fleet.connections[again].id!r} "
            f"(first at connections[{first}]); ids must be unique",
            file=shown["connections"], field=f"connections[{again}].id",
            line=toml_line(files.connections, ("connections", again, "id")))

    quota: QuotaFile | None = None
    histories: dict[str, list[Reading]] = {}
    if files.quota is not None:
        shown["quota"] = display_path(files.quota)
        quota = load_model(QuotaFile, files.quota)
        if quota.taken_at is not None and quota.taken_at <= EPOCH:
            # SPEC §2.2 (v1.2): an instant at or before the epoch is no instant (a writer's 0
            # for "not given"), so the snapshot has no taken_at and R14 takes the clock.
            quota = quota.model_copy(update={"taken_at": None})
        unknown: dict[str, None] = {}
        unusable: list[str] = []
        latest: datetime | None = max(map(_CHECKED_AT, quota.readings), default=None)
        for index, reading in enumerate(quota.readings):
            history = histories.get(reading.connection)
            if history is None:
                if reading.connection not in known:
                    unknown[reading.connection] = None
                    continue
                history = histories[reading.connection] = []
            if _resets_at_or_before(reading):
                reading = _without_unusable_resets(reading, index, unusable)
            history.append(reading)
        if unknown:
            listed = ", ".join(sorted(unknown))
            warnings.append(f"{shown['quota']}: readings for connection ids not in "
                            f"{shown['connections']} were ignored: {listed}")
        if unusable:
            more = f" (and {len(unusable) - 5} more)" if len(unusable) > 5 else ""
            warnings.append(
                f"{shown['quota']}: a reset at or before its own reading's checked_at is "
                f"unusable and read as absent (SPEC §2.2): {'; '.join(unusable[:5])}{more}")
        warnings.extend(_ahead_of_clock(quota.taken_at, latest, shown["quota"]))
    else:
        warnings.append("no quota file: every connection has no reading (quota-missing)")
    readings = {cid: _in_order(items, quota, shown) for cid, items in histories.items()}

    spend: tuple[SpendEvent, ...] | None = None
    if files.spend is not None:
        shown["spend"] = display_path(files.spend)
        # SPEC §7.1: a traffic ledger is a spend ledger too. One event per line is one;
        # a document is read as a spend ledger first (the common case, parsed once), and
        # only one that is not is asked whether it is a traffic ledger.
        if files.spend.suffix.lower() in LINE_SUFFIXES:
            spend = _traffic_spend(files.spend, shown["spend"], warnings)
        else:
            try:
                spend = load_model(SpendFile, files.spend).events
            except InputError:
                from omniladder.inputs.traffic import is_traffic

                if not is_traffic(files.spend, shown["spend"]):
                    raise
                spend = _traffic_spend(files.spend, shown["spend"], warnings)
        if not math.isfinite(sum(event.cost_usd for event in spend)):
            raise InputError("the events' cost_usd add up to more than a number can hold; "
                             "a ledger of real spend never does (check the units)",
                             file=shown["spend"], field="events[].cost_usd")

    catalogs = load_catalogs(files.billing_catalogs, files.model_catalogs,
                             include_shipped=not files.no_shipped_catalogs)
    read = [(role, shown[role], path) for role, path in (
        ("settings", files.settings_file), ("connections", files.connections),
        ("quota", files.quota), ("spend", files.spend)) if path is not None]
    billing_paths, model_paths = catalog_paths(files.billing_catalogs, files.model_catalogs,
                                               not files.no_shipped_catalogs)
    read += [("billing-catalog", name, path) for path, name in billing_paths]
    read += [("models-catalog", name, path) for path, name in model_paths]
    return LoadedInputs(settings=settings, connections=connections, readings=readings,
                        quota=quota, spend=spend, catalogs=catalogs, files=shown,
                        warnings=tuple(warnings), read=tuple(read))

