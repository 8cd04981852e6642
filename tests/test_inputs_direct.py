"""Input models validated straight from JSON text give what the plain path gives.

``load_model`` lets pydantic parse JSON (and TOML re-encoded as JSON) itself; on any
problem it falls back to the plain path (parse, walk for secret keys, validate), which
words every error. These tests hold the two paths to the same models and the same errors.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from omniladder import models as model_module
from omniladder.errors import OmniladderError
from omniladder.inputs import documents
from omniladder.inputs.direct import forbids_unknown_keys_everywhere
from omniladder.inputs.documents import load_model, read_document
from omniladder.inputs.validation import validate
from omniladder.models import (
    BillingCatalog,
    ConnectionsFile,
    ModelCatalog,
    QuotaFile,
    Record,
    Settings,
    SpendFile,
    StrictModel,
    field_types,
)
from tests.conftest import EXAMPLES, ROOT


def _plain(model: type[BaseModel], path: Path) -> BaseModel:
    return validate(model, read_document(path), str(path), path)


def _strict_models() -> list[type[StrictModel] | type[Record]]:
    found: list[type[StrictModel] | type[Record]] = [
        value for value in vars(model_module).values()
        if isinstance(value, type) and value is not StrictModel and (
            issubclass(value, StrictModel)
            or (issubclass(value, Record) and dataclasses.is_dataclass(value)))]
    from omniladder.analyses.check import Expectation, Policy

    return [*found, Policy, Expectation]


def _annotation_types(annotation: Any) -> list[Any]:
    out = [annotation]
    for arg in typing.get_args(annotation):
        out += _annotation_types(arg)
    return out


INPUT_MODELS = [Settings, ConnectionsFile, QuotaFile, SpendFile, BillingCatalog, ModelCatalog]


@pytest.mark.parametrize("model", _strict_models(), ids=lambda m: m.__name__)
def test_only_closed_models_take_the_direct_path(model: type[StrictModel] | type[Record]
                                                 ) -> None:
    """A secret-looking key must be an unknown key for the direct path to be taken: no
    free-form table anywhere, every model inside strict and forbidding unknown keys."""
    closed = True
    for annotation in field_types(model).values():
        for kind in _annotation_types(annotation):
            origin = typing.get_origin(kind) or kind
            if origin is dict or kind is Any:
                closed = False
            if isinstance(kind, type) and issubclass(kind, BaseModel | Record):
                closed = closed and forbids_unknown_keys_everywhere(kind)
    assert forbids_unknown_keys_everywhere(model) == closed
    if model in INPUT_MODELS:
        assert closed, f"{model.__name__} would be walked in Python"


def test_a_secret_key_in_a_policy_table_is_still_refused(tmp_path: Path) -> None:
    from omniladder.analyses.check import Policy

    assert not forbids_unknown_keys_everywhere(Policy)


CASES = [
    (Settings, EXAMPLES / "omniladder.toml"),
    (Settings, EXAMPLES / "day" / "omniladder.toml"),
    (ConnectionsFile, EXAMPLES / "connections.toml"),
    (QuotaFile, EXAMPLES / "quota.json"),
    (QuotaFile, EXAMPLES / "day" / "quota.json"),
    (SpendFile, EXAMPLES / "spend.json"),
    (BillingCatalog, ROOT / "catalogs" / "connection-billing.toml"),
    (ModelCatalog, ROOT / "catalogs" / "models.toml"),
]


@pytest.mark.parametrize(("model", "path"), CASES, ids=lambda v: getattr(v, "name", ""))
def test_direct_path_equals_plain_path_on_the_examples(model: type[BaseModel],
                                                       path: Path) -> None:
    assert path.is_file()
    assert load_model(model, path) == _plain(model, path)


def _connections(extra: str = "") -> str:
    return ('{"connections": [{"id": "a", "provider": "claude", "auth_type": "oauth", '
            '"models": ["m1", "m1", "m2"], "rate_limited_until": "2026-11-29T12:00:00+02:00"'
            + extra + '}]}')


GOOD_JSON = [
    _connections(),
    _connections(', "label": "caf\\u00e9 \u00e9"'),
    "\ufeff" + _connections(),  # a byte-order mark
    "  \n" + _connections() + "\n\n",
]
BAD_JSON = [
    _connections(', "id": "b"'),  # a repeated key: refused both ways, as TOML refuses it
    _connections(', "api_key": "sk-live-123"'),
    _connections(', "label": {"token": "sk-live-123"}'),
    '{"connections": {"Password": "x"}}',
    _connections(', "active": NaN'),
    _connections(', "label": "a\nb"'),
    _connections(', "label": "\\ud800"'),  # a lone surrogate: refused at load, both ways
    _connections() + " trailing",
    '[1, 2]',
    '{"connections": [' * 600 + ']' * 600 + '}',
]


def _both_ways(path: Path, model: type[BaseModel] = ConnectionsFile) -> list[Any]:
    """The file (a connections file unless told) loaded by the direct path and by the plain
    one: the model, or the error each raised."""
    outcomes: list[Any] = []
    for load in (load_model, _plain):
        try:
            outcomes.append(load(model, path))
        except OmniladderError as exc:
            outcomes.append((type(exc), str(exc)))
    return outcomes


@pytest.mark.parametrize("text", GOOD_JSON + BAD_JSON)
def test_direct_path_equals_plain_path_on_awkward_json(tmp_path: Path, text: str) -> None:
    path = tmp_path / "connections.json"
    path.write_text(text, encoding="utf-8")
    outcomes = _both_ways(path)
    assert outcomes[0] == outcomes[1]
    assert (text in GOOD_JSON) == isinstance(outcomes[0], ConnectionsFile)
    assert "sk-live" not in repr(outcomes[0])


@pytest.mark.parametrize("text", [
    '[[connections]]\nid = "a"\nprovider = "p"\nauth_type = "x"\nmodels = ["m"]\n',
    '[[connections]]\nid = "a"\nprovider = "p"\nauth_type = "x"\n'
    'rate_limited_until = 2026-11-29T12:00:00Z\n',  # a native TOML timestamp
    '[[connections]]\nid = "a"\nprovider = "p"\nauth_type = "x"\naccess_token = "t"\n',
])
def test_direct_path_equals_plain_path_on_toml(tmp_path: Path, text: str) -> None:
    path = tmp_path / "connections.toml"
    path.write_text(text, encoding="utf-8")
    outcomes = _both_ways(path)
    assert outcomes[0] == outcomes[1]


def test_settings_numbers_keep_their_type(tmp_path: Path) -> None:
    path = tmp_path / "omniladder.json"
    path.write_text(json.dumps({"ladder": {"max_reading_age_seconds": 180,
                                           "exit_cutoff_percent": 2}}), encoding="utf-8")
    direct = load_model(Settings, path)
    assert direct == _plain(Settings, path)
    assert repr(direct.ladder.max_reading_age_seconds) == repr(
        _plain(Settings, path).ladder.max_reading_age_seconds)  # type: ignore[attr-defined]


TIMESTAMPS = [
    '"2026-11-29T12:00:00Z"', '"2026-11-29t12:00:00z"', '"2026-11-29T12:00:00.123456789-00:00"',
    '" 2026-11-29 12:00:00+05:30 "', '"2026-11-29T12:00:00+14:00"', '"2024-02-29T00:00:00Z"',
    '"0001-01-01T00:00:00-01:00"', '"9999-12-31T23:59:59+01:00"',
    # refused, by the plain path's words
    '"1700000000"', '"2026-11-29T12:00:00"', '"0001-01-01T00:00:00+01:00"',
    '"2026-11-29T24:00:00Z"', '"2026-11-29T12:00:60Z"', '"2023-02-29T00:00:00Z"', '""',
    '1700000000', 'true', '["2026-11-29T12:00:00Z"]', '{"at": "2026-11-29T12:00:00Z"}',
]


@pytest.mark.parametrize("value", TIMESTAMPS)
def test_timestamps_from_json_text_are_the_plain_paths(tmp_path: Path, value: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A timestamp read from JSON text is looked up in the plain path's own cache: the same
    instant, offset and object; any other value takes the plain path and its message."""
    path = tmp_path / "connections.json"
    path.write_text(_connections().replace('"2026-11-29T12:00:00+02:00"', value),
                    encoding="utf-8")
    direct, plain = _both_ways(path)
    assert direct == plain
    if isinstance(direct, ConnectionsFile):
        assert isinstance(plain, ConnectionsFile)
        instant = direct.connections[0].rate_limited_until
        assert instant is plain.connections[0].rate_limited_until
        assert instant is not None
        assert type(instant.tzinfo) is timezone

        def no_plain_path(*args: Any) -> None:
            raise AssertionError("took the plain path")

        monkeypatch.setattr(documents, "validate", no_plain_path)
        assert load_model(ConnectionsFile, path) == direct


WINDOWS = [
    '{"name": "5h", "remaining_percent": 40}', '{"name": "month", "unlimited": true}',
    '{"name": "5h", "remaining_percent": 0, "unlimited": false}',
    # refused, each at the window's own field path
    '{"name": "5h"}', '{"name": "5h", "unlimited": false}',
    '{"name": "5h", "remaining_percent": 40, "unlimited": true}',
]


@pytest.mark.parametrize("second", WINDOWS)
def test_windows_from_json_text_keep_their_figure_rule(tmp_path: Path, second: str) -> None:
    """A window without exactly one figure sends the file down the plain path, which says so
    at the window's field path."""
    path = tmp_path / "quota.json"
    path.write_text('{"readings": [{"connection": "a", "checked_at": "2026-11-29T12:00:00Z", '
                    f'"windows": [{WINDOWS[0]}, {second}]}}]}}', encoding="utf-8")
    direct, plain = _both_ways(path, QuotaFile)
    assert direct == plain
    assert isinstance(direct, QuotaFile) == (WINDOWS.index(second) < 3)
    if not isinstance(direct, QuotaFile):
        assert "readings[0].windows[1]" in direct[1]
