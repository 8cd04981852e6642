"""The input records (connections, readings, windows, spend events) validate and read like
the models.

They are slots dataclasses, not pydantic models, for memory; pydantic words a few of their
problems as a function's arguments (``unexpected_keyword_argument``, ``dataclass_type``).
These tests hold every message to the words a model gives, on both loading paths.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from omniladder.errors import InputError
from omniladder.inputs.documents import load_model
from omniladder.models import (
    Connection,
    ConnectionsFile,
    QuotaFile,
    Reading,
    Record,
    SpendEvent,
    SpendFile,
    Window,
    validate_record,
)

AT = "2026-11-29T11:55:33Z"

CASES = [
    (QuotaFile, "a.json",
     '{"readings": ["x", {"connection": "a", "checked_at": "' + AT + '", "windows": '
     '[{"nam": "5h", "unlimited": true}, {"name": "w", "unlimited": true, "reset": 1}]}]}',
     "a.json: readings[0]: must be a table or instance of Reading, got a string\n"
     "a.json: readings[1].windows[0].name: required field is missing\n"
     "a.json: readings[1].windows[0].nam: unknown key 'nam'; did you mean 'name'? "
     "(unknown keys are not ignored)\n"
     "a.json: readings[1].windows[1].reset: unknown key 'reset'; did you mean 'reset_at'? "
     "(unknown keys are not ignored)"),
    (ConnectionsFile, "b.toml",
     '[[connections]]\nid = "a"\nprovider = "claude"\n\n[[connections]]\nid = "b"\n'
     'provider = "codex"\nauth_type = "oauth"\nmodles = ["x"]\n',
     "b.toml:1: connections[0].auth_type: required field is missing\n"
     "b.toml:9: connections[1].modles: unknown key 'modles'; did you mean 'models'? "
     "(unknown keys are not ignored)"),
    (ConnectionsFile, "c.toml", 'connections = [3]\n',
     "c.toml: connections[0]: must be a table or instance of Connection, got an integer"),
    (QuotaFile, "d.json",
     '{"readings": [{"connection": "a", "checked_at": "' + AT + '", "windows": '
     '[{"name": "5h", "unlimited": true, "Api_Key": "CANARY"}]}]}',
     "d.json: readings[0].windows[0].Api_Key: key 'Api_Key' looks like a secret; omniladder "
     "never needs credentials, remove it (its value is never shown)"),
    (QuotaFile, "e.json",
     '{"readings": [{"connection": " ", "checked_at": "' + AT + '", "remaining_percent": 3, '
     '"windows": [{"name": "w", "unlimited": true, "remaining_percent": 4}]}]}',
     "e.json: readings[0].connection: must not be empty\n"
     "e.json: readings[0].windows[0]: give remaining_percent or unlimited = true, not both"),
    (SpendFile, "f.json",
     '{"events": [{"at": "' + AT + '", "cost_usd": 1, "connection": "c"}, '
     '{"at": "' + AT + '", "cost_usd": 1, "rung": "cheep", "cost": 2}]}',
     "f.json: events[0]: an event needs a rung, or both connection and model\n"
     "f.json: events[1].rung: must be one of 'subscription', 'keyless', 'free', 'cheap' or "
     "'premium', got 'cheep'; did you mean 'cheap'?\n"
     "f.json: events[1].cost: unknown key 'cost'; did you mean 'cost_usd'? "
     "(unknown keys are not ignored)"),
]


@pytest.mark.parametrize(("model", "name", "text", "says"), CASES, ids=[c[1] for c in CASES])
def test_a_record_s_problems_are_worded_as_a_model_s(
        model: type[QuotaFile | ConnectionsFile | SpendFile], name: str, text: str, says: str,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path(name).write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_model(model, Path(name))
    assert str(raised.value) == says
    assert "CANARY" not in str(raised.value)


def test_a_record_takes_a_table_strictly() -> None:
    reading = validate_record(Reading, {"connection": "a", "checked_at": AT,
                                        "remaining_percent": 40})
    assert reading.checked_at == datetime(2026, 11, 29, 11, 55, 33, tzinfo=UTC)
    assert reading.remaining_percent == 40.0
    assert type(reading.remaining_percent) is float
    with pytest.raises(ValidationError):  # strict: a string is not a number
        validate_record(Reading, {"connection": "a", "checked_at": AT,
                                  "remaining_percent": "40"})
    with pytest.raises(ValidationError):  # strict: a list is not a tuple in Python
        validate_record(Connection, {"id": "a", "provider": "p", "auth_type": "none",
                                     "models": ["m"]})
    connection = validate_record(Connection, {"id": "a", "provider": "p", "auth_type": "none",
                                              "models": ("m",)})
    assert connection.keyless
    assert connection.models == ("m",)


def test_records_keep_no_dict() -> None:
    reading = validate_record(Reading, {"connection": "a", "checked_at": AT, "windows": (
        {"name": "w", "unlimited": True},)})
    for record in (reading, reading.all_windows()[0],
                   validate_record(Connection, {"id": "a", "provider": "p", "auth_type": "x"})):
        assert isinstance(record, Record)
        assert not hasattr(record, "__dict__")


def test_a_top_level_figure_is_one_window_built_once() -> None:
    reading = validate_record(Reading, {"connection": "a", "checked_at": AT,
                                        "remaining_percent": 12.5, "reset_at": AT})
    assert reading._top_level_window is None  # built when first asked for
    windows = reading.all_windows()
    assert windows == (Window(name="quota", remaining_percent=12.5, unlimited=False,
                              reset_at=reading.reset_at, models=None),)
    assert reading.all_windows() is windows
    assert reading == dataclasses.replace(reading)  # the cached window is not a field
    bare = validate_record(Reading, {"connection": "a", "checked_at": AT, "status": "unknown"})
    assert bare.all_windows() == ()
    built = Reading(connection="a", checked_at=reading.checked_at, remaining_percent=12.5,
                    reset_at=reading.reset_at)  # no validation: explain's probes, tests
    assert built.all_windows() == windows
    assert built.all_windows() is built.all_windows()
    from_json = QuotaFile.model_validate_json(
        f'{{"readings": [{{"connection": "a", "checked_at": "{AT}", '
        f'"remaining_percent": 12.5, "reset_at": "{AT}"}}]}}').readings[0]
    assert from_json.all_windows() == windows
    assert from_json.all_windows() is from_json.all_windows()


def test_a_spend_event_attributed_keeps_its_other_fields() -> None:
    event = validate_record(SpendEvent, {"at": AT, "cost_usd": 0.5, "connection": "c",
                                         "model": "m"})
    attributed = event.attributed("cheap")
    assert attributed.rung == "cheap"
    assert dataclasses.replace(attributed, rung=None) == event
    assert event.rung is None


def test_the_identifier_pattern_passes_what_the_python_check_passes() -> None:
    """Identifiers are matched natively against IDENTIFIER_PATTERN (docs/performance.md,
    loading): it must pass exactly the strings ``identifier_problem`` passes, for every
    code point alone and after a letter (a lone surrogate never reaches it: the JSON parser
    refuses one and the plain path reports it at load)."""
    from pydantic import TypeAdapter

    from omniladder.models import Identifier, identifier_problem

    texts = [text for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF
             for text in (chr(point), "a" + chr(point))]
    texts += ["", " ", "  a ", "a\tb", "\u3000", "x\u0085"]
    try:
        TypeAdapter(list[Identifier]).validate_python(texts)
        refused: set[int] = set()
    except ValidationError as exc:
        refused = {int(error["loc"][0]) for error in exc.errors()}
    python = {index for index, text in enumerate(texts) if identifier_problem(text)}
    assert refused == python
    assert len(python) > 150  # the controls and the blanks, alone and after "a"


@pytest.mark.parametrize(("value", "message"), [
    ("  ", "must not be empty"),
    ("a\x07b", r"contains a control character (\x07 at character 2); an identifier is "
     "printed on terminals and in reports, so it may hold none"),
])
def test_an_identifier_s_problem_is_worded_as_before(tmp_path: Path, value: str,
                                                     message: str) -> None:
    """The pattern's mismatch reaches the operator as the Python check words it, on the
    JSON and the TOML path alike."""
    import json

    for name, shown, text in (
            ("c.json", "c.json", json.dumps({"connections": [
                {"id": value, "provider": "p", "auth_type": "oauth"}]})),
            ("c.toml", "c.toml:2", f'[[connections]]\nid = {json.dumps(value)}\nprovider = "p"\n'
                       'auth_type = "oauth"\n')):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as caught:
            load_model(ConnectionsFile, path, name)
        assert str(caught.value) == f"{shown}: connections[0].id: {message}"


def test_every_record_the_plan_loads_has_a_docstring_of_its_own() -> None:
    """Without one, ``dataclasses`` prints the class's signature for it at every import,
    pydantic's annotations and all (docs/performance.md#record-docstrings)."""
    import importlib
    import pkgutil

    import omniladder.engine
    import omniladder.models

    modules = [omniladder.models] + [
        importlib.import_module(found.name)
        for found in pkgutil.iter_modules(omniladder.engine.__path__, "omniladder.engine.")]
    generated = [f"{module.__name__}.{name}" for module in modules
                 for name, kind in vars(module).items()
                 if isinstance(kind, type) and dataclasses.is_dataclass(kind)
                 and kind.__module__ == module.__name__
                 and (kind.__doc__ or "").startswith(f"{name}(")]
    assert generated == []
