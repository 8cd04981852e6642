"""A document validated straight from its JSON text by pydantic's own parser: which models
can be (``forbids_unknown_keys_everywhere``), and the two counts that clear such a document of
a key given twice without parsing it again (``no_key_repeats``)."""

from __future__ import annotations

import dataclasses
import itertools
import operator
import types
import typing
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from omniladder.inputs.validation import is_model
from omniladder.models import Record, field_types

M = TypeVar("M", bound=BaseModel)

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
    if is_model(annotation):
        return forbids_unknown_keys_everywhere(annotation)
    if (typing.get_origin(annotation) or annotation) in (dict, typing.Any):
        return False
    return all(_closed_annotation(arg) for arg in typing.get_args(annotation))


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
    if is_model(annotation):
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
    return is_model(annotation) or any(_model_in_any(arg)
                                        for arg in typing.get_args(annotation))


def from_json(model: type[M], text: str | bytes) -> M | None:
    """The model validated from JSON text; None on any problem (the plain path says it)."""
    try:
        return model.model_validate_json(text)
    except (ValidationError, ValueError, RecursionError):
        return None
