"""A document validated straight from its JSON text by pydantic's own parser: which models
can be (``forbids_unknown_keys_everywhere``), and the two counts that clear such a document of
a key given twice without parsing it again (``no_key_repeats``)."""

from __future__ import annotations

import dataclasses
import itertools
import keyword
import operator
import types
import typing
from collections.abc import Callable, Sequence
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


Walk = Callable[[Sequence[Any]], tuple[int, tuple[list[Any], ...]]]
"""Over objects of one kind: how many of their fields hold a value other than the field's
default, and the values of each field holding models or records that are not None."""


class _Members(NamedTuple):
    """The fields of a model or record as ``keys_given_at_least`` counts them."""

    required: int
    """How many fields have no default: each object gives their keys."""
    checked: tuple[tuple[str, Any], ...]
    """Each field with a default, and that default."""
    collected: tuple[str, ...]
    """Each field holding a model or record, or a tuple of them."""
    inside: tuple[tuple[type[BaseModel] | type[Record], bool], ...]
    """For each of ``collected``, the model or record it holds (``False``) or holds a
    tuple of (``True``)."""


COMPILE_AT = 256
"""Objects of one kind in one list from which the kind's loop is compiled (``_walker``):
compiling costs about 0.8 M instructions, which a few hundred objects walked by
``_walk_by_name`` cost too, so a small file is walked without it."""


def keys_given_at_least(kind: type[BaseModel] | type[Record], items: list[Any]) -> int | None:
    """At least the number of keys the objects ``items`` (all validated as ``kind``) and the
    objects inside them were given, summed; None when that is not counted this way.

    A field whose value is not its default was given (a required one always is); a field
    given its default is not counted, which only makes the count smaller. This holds since
    no validator of an input model sets a field; a type with a default made by a factory or
    a field read under an alias (two fields could then read one key) is not counted. Each
    kind's objects are walked by one loop of its own (``_walker``)."""
    members = _members(kind)
    if members is None:
        return None
    walk = _WALKERS.get(kind)
    if walk is None and len(items) >= COMPILE_AT:
        walk = _WALKERS[kind] = _walker(members.checked, members.collected)
    given, collected = (walk(items) if walk is not None
                        else _walk_by_name(members.checked, members.collected, items))
    total = members.required * len(items) + given
    for (holds, many), held in zip(members.inside, collected, strict=True):
        if many:
            held = list(itertools.chain.from_iterable(held))
        inside = keys_given_at_least(holds, held) if held else 0
        if inside is None:
            return None
        total += inside
    return total


_MEMBERS: dict[type[BaseModel] | type[Record], _Members | None] = {}
_WALKERS: dict[type[BaseModel] | type[Record], Walk] = {}


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
    checked: list[tuple[str, Any]] = []
    collected: list[str] = []
    inside: list[tuple[type[BaseModel] | type[Record], bool]] = []
    for name, annotation in field_types(kind).items():
        holds = _holds(annotation)
        if holds is None or not name.isidentifier() or keyword.iskeyword(name):
            return None
        if holds[0] is not None:
            collected.append(name)
            inside.append((holds[0], holds[1]))
        if defaults[name] is not _REQUIRED:
            checked.append((name, defaults[name]))
    required = sum(default is _REQUIRED for default in defaults.values())
    return _Members(required=required, checked=tuple(checked), collected=tuple(collected),
                    inside=tuple(inside))


def _walk_by_name(checked: tuple[tuple[str, Any], ...], collected: tuple[str, ...],
                  items: Sequence[Any]) -> tuple[int, tuple[list[Any], ...]]:
    """What ``_walker``'s loop answers, field after field by ``operator.attrgetter``: for a
    few objects, where compiling the loop would cost more than it saves."""
    given = 0
    for name, default in checked:
        values = list(map(operator.attrgetter(name), items))
        given += len(values) - values.count(default)
    return given, tuple([value for value in map(operator.attrgetter(name), items)
                         if value is not None] for name in collected)


def _walker(checked: tuple[tuple[str, Any], ...], collected: tuple[str, ...]) -> Walk:
    """One kind's ``Walk``: a loop over its objects that reads each field by its name.

    A field read by name in a loop costs the interpreter a few dozen instructions once it
    has seen the class; ``operator.attrgetter`` looks the name up afresh on each call, and a
    function called per object (``map``) pays for a call each time: on a 10,000-connection
    fleet the walk took some 215 M instructions that way (docs/performance.md#loading). The
    loop is written for the kind's fields and compiled once; each field's default is a name
    of the loop's own, compared as ``list.count`` compares (the very object, or equal)."""
    namespace: dict[str, Any] = {}
    lines = ["def walk(items):", "    given = 0"]
    lines += [f"    held{index} = []" for index in range(len(collected))]
    lines.append("    for item in items:")
    body: list[str] = []
    for index, (name, default) in enumerate(checked):
        if default is None:
            body.append(f"if item.{name} is not None: given += 1")
        else:
            namespace[f"default{index}"] = default
            body += [f"value = item.{name}",
                     f"if not (value is default{index} or value == default{index}): given += 1"]
    for index, name in enumerate(collected):
        body += [f"value = item.{name}", f"if value is not None: held{index}.append(value)"]
    lines += [f"        {line}" for line in body or ["pass"]]
    lines.append("    return given, (" + "".join(f"held{index}, "
                                               for index in range(len(collected))) + ")")
    exec("\n".join(lines), namespace)  # the names are identifiers, checked by the caller
    walk: Walk = namespace["walk"]
    return walk


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
