"""Documents: TOML and JSON text turned into plain data or a validated model, or one
InputError naming the file and the line.

``parse_json`` is the one reading of JSON text every input takes (the input files, snapshots,
saved plans, candidate lists, an export's ``--current``); ``read_document`` and ``load_model``
read a whole file. TOML and JSON carry the same shapes and are chosen by extension; a key given
twice, a lone surrogate and a secret-looking key are refused, and a secret's value is never
echoed.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from omniladder.errors import InputError
from omniladder.inputs.direct import forbids_unknown_keys_everywhere, from_json, no_key_repeats
from omniladder.inputs.files import check_input_file, decode_text, display_path, read_bytes
from omniladder.inputs.validation import format_loc, type_name, validate
from omniladder.models import SECRET_KEYS

M = TypeVar("M", bound=BaseModel)

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
    found = first_lone_surrogate(data)
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


def first_lone_surrogate(data: Any) -> tuple[tuple[str | int, ...], str, bool] | None:
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
        raise InputError(f"the top level must be a table/object, got {type_name(data)}",
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
        found = from_json(model, body)
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
            found = from_json(model, text)
            if found is not None:
                return found
    return validate(model, _document(data, name), name, path)


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
