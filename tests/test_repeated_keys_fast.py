"""The check for a key given twice clears most JSON inputs without parsing them again.

``direct.no_key_repeats`` compares an upper bound of the member names a JSON text writes
(``keys_spelled_at_most``) with a lower bound of the distinct keys the validated model
holds (``keys_given_at_least``); only when it cannot clear a document is the document
parsed again with ``unique_keys``. These tests hold each bound on generated documents
(escaped keys, white space anywhere, strings holding ``":``, repeats at any depth) and the
whole fast path to the exact check: it never clears a document that repeats a key.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from omniladder.errors import InputError
from omniladder.inputs import direct
from omniladder.inputs.direct import keys_given_at_least, keys_spelled_at_most, no_key_repeats
from omniladder.inputs.documents import RepeatedKey, load_model, unique_keys
from omniladder.models import ConnectionsFile, QuotaFile, Record, SpendFile, StrictModel
from tests.depth import deep
from tests.test_fuzz import json_fleet


class Obj(tuple[tuple[str, Any], ...]):
    """A JSON object as its members in order, a key possibly given twice."""


WHITE = st.sampled_from(["", "", "", " ", "  ", "\n", "\t", "\r\n", " \n  "])
KEYS = st.sampled_from(["a", "b", "name", 'q"', 'x":y', "\\", '"', "é", ":", ""]) | st.text(
    alphabet='ab":\\ \u00e9', max_size=3)
LEAVES = (st.none() | st.booleans() | st.integers(-5, 5)
          | st.text(alphabet='ab": \\\u00e9{}[],', max_size=5))
TREES = st.recursive(
    LEAVES,
    lambda inner: (st.lists(inner, max_size=3)
                   | st.lists(st.tuples(KEYS, inner), max_size=4).map(Obj)),
    max_leaves=14)


def spell(text: str, data: st.DataObject) -> str:
    """A JSON string for ``text``, each character written plainly or escaped at random
    (``\\"`` or ``\\u0022`` for a quote)."""
    out = ['"']
    for char in text:
        plain = {'"': '\\"', "\\": "\\\\"}.get(char, char)
        escaped = f"\\u{ord(char):04x}"
        out.append(data.draw(st.sampled_from([plain, escaped]))
                   if plain == char or char in '"\\' else plain)
    out.append('"')
    return "".join(out)


def render(value: Any, data: st.DataObject) -> str:
    """JSON text for a tree, with white space drawn around every token."""
    def space() -> str:
        return data.draw(WHITE)
    if isinstance(value, Obj):
        members = [space() + spell(key, data) + space() + ":" + space() + render(item, data)
                   + space() for key, item in value]
        return "{" + space() + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + space() + ",".join(space() + render(item, data) + space()
                                        for item in value) + "]"
    if isinstance(value, str):
        return spell(value, data)
    return json.dumps(value)


def counts(text: str | bytes) -> tuple[int, int]:
    """Member names written and distinct keys, summed over the objects (the exact parse)."""
    written: list[int] = []
    distinct: list[int] = []

    def hook(pairs: list[tuple[str, Any]]) -> None:
        written.append(len(pairs))
        distinct.append(len(dict(pairs)))

    json.loads(text, object_pairs_hook=hook)
    return sum(written), sum(distinct)


def repeats(text: str | bytes) -> bool:
    try:
        json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKey:
        return True
    return False


@deep(200, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_names_written_are_never_undercounted(examples: settings) -> None:
    @examples
    @given(tree=TREES, data=st.data())
    def holds(tree: Any, data: st.DataObject) -> None:
        text = render(tree, data)
        written, distinct = counts(text)
        assert repeats(text) == (written > distinct)
        spelled = keys_spelled_at_most(text.encode())
        assert spelled is None or spelled >= written, text
        if spelled is not None:
            assert not any(space in text for space in ("\t", "\r", " :", "\n:"))

    holds()


def test_a_name_written_with_white_space_before_its_colon_is_not_counted() -> None:
    for text in ('{"a" :1}', '{"a"\t:1}', '{"a"\n:1}', '{"a"\r\n:1}', '{"a":1,\n"a"  :2}'):
        assert keys_spelled_at_most(text.encode()) is None, text
    assert keys_spelled_at_most(b'{"a": 1, "b": "x"}\n') == 2
    assert keys_spelled_at_most(b'{"a": 1, "b": ":"}\n') == 3  # a value's ": only adds


# Documents of the input models: the validated model's count meets the text's.

TIMES = st.sampled_from(["2026-11-29T11:55:33Z", "2026-11-29T12:00:00+00:00"])
NAMES = st.sampled_from(["claude-000000", "codex-1", "copilot-web-2"])


def window(draw: Any) -> list[tuple[str, Any]]:
    members: list[tuple[str, Any]] = [("name", draw(st.sampled_from(["5h", "weekly"])))]
    if draw(st.booleans()):
        members.append(("unlimited", True))
    else:
        members.append(("remaining_percent", draw(st.sampled_from([0.0, 12.5, 100]))))
        if draw(st.booleans()):
            members.append(("unlimited", False))
    if draw(st.booleans()):
        members.append(("reset_at", draw(TIMES)))
    if draw(st.booleans()):
        members.append(("models", draw(st.lists(NAMES, min_size=1, max_size=2))))
    return members


@st.composite
def quota_documents(draw: Any) -> Obj:
    readings = []
    for _ in range(draw(st.integers(0, 3))):
        members: list[tuple[str, Any]] = [("connection", draw(NAMES)),
                                          ("checked_at", draw(TIMES))]
        if draw(st.booleans()):
            members.append(("windows", [Obj(draw(st.permutations(window(draw))))
                                        for _ in range(draw(st.integers(0, 2)))]))
        elif draw(st.booleans()):
            members.append(("remaining_percent", 50.0))
        if draw(st.booleans()):
            members.append(("status", draw(st.sampled_from(["ok", "expired"]))))
        readings.append(Obj(draw(st.permutations(members))))
    top: list[tuple[str, Any]] = [("readings", readings)]
    if draw(st.booleans()):
        top.append(("taken_at", draw(TIMES)))
    return Obj(top)


@st.composite
def connection_documents(draw: Any) -> Obj:
    connections = []
    for index in range(draw(st.integers(0, 3))):
        members: list[tuple[str, Any]] = [("id", f"c-{index}"), ("provider", "claude"),
                                          ("auth_type", "oauth")]
        if draw(st.booleans()):
            members.append(("label", draw(st.sampled_from(['a": b', '"', 'x\\":', "plain"]))))
        if draw(st.booleans()):
            members.append(("active", draw(st.booleans())))
        if draw(st.booleans()):
            members.append(("models", draw(st.lists(NAMES, max_size=2))))
        connections.append(Obj(draw(st.permutations(members))))
    return Obj([("connections", connections)])


def objects(tree: Any) -> list[Obj]:
    found = [tree] if isinstance(tree, Obj) else []
    items = [item for _, item in tree] if isinstance(tree, Obj) else (
        tree if isinstance(tree, list) else [])
    for item in items:
        found += objects(item)
    return found


@st.composite
def with_repeat(draw: Any, documents: Any) -> Obj:
    """A document, one of whose objects (any depth) may give one of its keys once more,
    with its own value or another one's."""
    document = draw(documents)
    if draw(st.booleans()):
        return document  # type: ignore[no-any-return]
    places = [each for each in objects(document) if each]
    if not places:
        return document  # type: ignore[no-any-return]
    target = draw(st.sampled_from(places))
    key, value = draw(st.sampled_from(list(target)))
    if draw(st.booleans()):
        value = draw(st.sampled_from([item for _, item in target]))
    members = list(target)
    members.insert(draw(st.integers(0, len(members))), (key, value))

    def swap(tree: Any) -> Any:
        if tree is target:
            return Obj(members)
        if isinstance(tree, Obj):
            return Obj((name, swap(item)) for name, item in tree)
        if isinstance(tree, list):
            return [swap(item) for item in tree]
        return tree
    return swap(document)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("model", "documents"), [(QuotaFile, quota_documents()),
                                                  (ConnectionsFile, connection_documents())])
@deep(80, quick=16, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_fast_path_never_clears_a_repeated_key(model: Any, documents: Any,
                                                   examples: settings) -> None:
    @examples
    @given(data=st.data())
    def holds(data: st.DataObject) -> None:
        tree = data.draw(with_repeat(documents))
        text = render(tree, data).encode()
        found = direct.from_json(model, text)
        if found is None:
            return  # refused by validation: the plain path words it
        _, distinct = counts(text)
        given_keys = keys_given_at_least(model, [found])
        assert given_keys is not None
        assert given_keys <= distinct
        if no_key_repeats(text, found):
            assert not repeats(text), text

    holds()


def given_by_fields(value: Any) -> int:
    """The keys ``keys_given_at_least`` counts, counted field by field with ``getattr``: a
    field with no default, or whose value is not its default, and the same inside."""
    if isinstance(value, tuple):
        return sum(map(given_by_fields, value))
    if not isinstance(value, (BaseModel, Record)):
        return 0
    if isinstance(value, BaseModel):
        defaults = {name: (info.default if not info.is_required() else dataclasses.MISSING)
                    for name, info in type(value).model_fields.items()}
    else:
        defaults = {item.name: item.default for item in dataclasses.fields(cast(Any, value))}
    total = 0
    for name, default in defaults.items():
        held = getattr(value, name)
        total += default is dataclasses.MISSING or not (held is default or held == default)
        total += given_by_fields(held)
    return total


@pytest.fixture(params=["compiled", "by name"])
def walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each kind's objects walked by its compiled loop, or field by field by name (the walk
    of a list shorter than ``COMPILE_AT``)."""
    monkeypatch.setattr(direct, "_WALKERS", {})
    monkeypatch.setattr(direct, "COMPILE_AT", 0 if request.param == "compiled" else 10**9)


@pytest.mark.usefixtures("walk")
@pytest.mark.parametrize(("model", "documents"), [(QuotaFile, quota_documents()),
                                                  (ConnectionsFile, connection_documents())])
@deep(40, quick=8, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_walk_counts_each_field_not_at_its_default(model: Any, documents: Any,
                                                       examples: settings) -> None:
    """Both walks count exactly what reading each field with ``getattr`` counts."""
    @examples
    @given(data=st.data())
    def holds(data: st.DataObject) -> None:
        found = direct.from_json(model, render(data.draw(documents), data).encode())
        if found is not None:
            assert keys_given_at_least(model, [found]) == given_by_fields(found)

    holds()


@pytest.mark.usefixtures("walk")
def test_the_walk_counts_every_field_of_a_seated_connection() -> None:
    """Every field of a connection, the seat's (SPEC §9) included, counts once it is not at
    its default, and not before."""
    bare = {"id": "c", "provider": "claude", "auth_type": "oauth"}
    seat = {"capacity_weight": 2.0, "reserve_percent": 10.0, "seat_price_usd": 200.0,
            "seat_period": "week", "active": False, "label": "x"}
    for extra in ({}, seat, {"active": True, "reserve_percent": 0.0}):
        found = ConnectionsFile.model_validate_json(json.dumps({"connections": [
            {**bare, **extra}]}))
        # the file's connections key, the three required keys, and each other key given a
        # value that is not its default (active = true is its default)
        counted = 1 + 3 + sum(key != "active" or value is False for key, value in extra.items())
        assert keys_given_at_least(ConnectionsFile, [found]) == counted == given_by_fields(
            found)


def test_every_file_of_a_fleet_is_cleared_without_a_second_parse(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet as ``json.dumps`` writes it (the benchmark fleet's format): no file is
    parsed again to look for a repeated key."""
    documents = json_fleet()
    parsed: list[Any] = []
    real = json.loads

    def counted(*args: Any, **kwargs: Any) -> Any:
        parsed.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(json, "loads", counted)
    for name, model in (("quota.json", QuotaFile), ("connections.json", ConnectionsFile),
                        ("spend.json", SpendFile)):
        path = tmp_path / name
        path.write_text(json.dumps(documents[name]) + "\n")
        assert isinstance(load_model(model, path), model)
    assert parsed == []


def test_a_key_given_twice_is_still_refused_with_its_place(tmp_path: Path) -> None:
    path = tmp_path / "quota.json"
    path.write_text('{"readings": [{"connection": "a", "checked_at": "2026-11-29T11:55:33Z",'
                    ' "windows": [{"name": "5h", "remaining_percent": 5, '
                    '"\\u006eame": "weekly"}]}]}')
    with pytest.raises(InputError) as caught:
        load_model(QuotaFile, path)
    assert caught.value.field == "readings[0].windows[0].name"
    assert "key 'name' is given twice in one object" in str(caught.value)


class _Aliased(StrictModel):
    first: int | None = None
    second: int | None = Field(default=None, alias="other")


@dataclasses.dataclass(frozen=True, slots=True)
class _FieldDefault(Record):
    figure: int = Field(default=3)


def test_a_model_whose_fields_may_share_a_key_is_not_counted() -> None:
    """A field read under another name (an alias) could share its key with another field,
    one key counted twice: such a model, and one whose default is not a plain value, is
    left to the exact check."""
    found = _Aliased.model_validate_json('{"first": 1}')
    assert keys_given_at_least(_Aliased, [found]) is None
    assert not no_key_repeats(b'{"first": 1}', found)
    assert keys_given_at_least(_FieldDefault, [_FieldDefault()]) is None
