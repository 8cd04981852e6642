"""Validation wording: a model's problems with plain data, each said as one line naming the
field path (``connections[3].auth_type``), the line in a TOML file and what is wrong."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from omniladder.errors import InputError, InputErrors, close_match
from omniladder.inputs.files import decode_text, read_bytes
from omniladder.models import IDENTIFIER_PATTERN, Record, field_types, identifier_problem

M = TypeVar("M", bound=BaseModel)

def type_name(value: Any) -> str:
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


def is_model(annotation: Any) -> bool:
    """A model or a record: a type whose input is a table of known keys."""
    return isinstance(annotation, type) and issubclass(annotation, BaseModel | Record)


def _model_in(annotation: Any) -> type[BaseModel] | type[Record] | None:
    """The model inside an annotation such as ``tuple[Connection, ...] | None``."""
    if is_model(annotation):
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
    got = f", got {type_name(value)}" if found else ""
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
