"""Shared fixtures: the examples, a pinned terminal, and a CLI runner."""

from __future__ import annotations

import functools
import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer.testing
from hypothesis import HealthCheck, settings

# Property and fuzz tests draw the same examples on every run, so a green CI run is
# repeatable; `--hypothesis-profile=explore` searches fresh examples.
settings.register_profile(
    "repeatable", derandomize=True, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("explore", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("repeatable")

# typer's CliRunner turns the application into click commands on every invoke (about 25 ms
# for omniladder's, half of a small plan); the commands are stateless, so each application
# is turned once per test process. The key holds the application itself, so an id reused by
# a later application never finds an earlier one's commands.
_BUILT: dict[int, tuple[Any, Any]] = {}
_build_command = typer.testing._get_command  # type: ignore[attr-defined]


def _command_once(app: Any) -> Any:
    found = _BUILT.get(id(app))
    if found is None or found[0] is not app:
        found = _BUILT[id(app)] = (app, _build_command(app))
    return found[1]


typer.testing._get_command = _command_once  # type: ignore[attr-defined,assignment]


def click_tree() -> Any:
    """omniladder's application as click's command tree, the one the CliRunner runs, built
    once per test process; read it, never change it."""
    from omniladder.cli import app

    return _command_once(app)


# tomllib is pure Python: the shipped catalogs and the examples, parsed again by every run of
# a command, took nearly half of tests/test_outputs_onto_inputs.py's time. Each process
# parses a text once and hands every caller a fresh copy of its tables and arrays (the other
# values are immutable), so a caller that changes what it got changes nothing another
# reads; a text that is no TOML raises from the parser itself every time.
_parse_toml = tomllib.loads


@functools.lru_cache(maxsize=512)
def _toml_once(text: str) -> dict[str, Any]:
    return _parse_toml(text)


def _fresh(value: Any) -> Any:
    if type(value) is dict:
        return {key: _fresh(item) for key, item in value.items()}
    if type(value) is list:
        return [_fresh(item) for item in value]
    return value


def _toml_loads(text: str, /, **options: Any) -> dict[str, Any]:
    if options or type(text) is not str:
        return _parse_toml(text, **options)
    return _fresh(_toml_once(text))  # type: ignore[no-any-return]


tomllib.loads = _toml_loads

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def benchmark_module(name: str) -> ModuleType:
    """A script of ``benchmarks/`` (not a package), imported as the module ``name``."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _pinned_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stable output: fixed width, no colour, no terminal detection."""
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "dumb")


@pytest.fixture
def at_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the test at the repository's root (``pytestmark = usefixtures("at_the_root")``)."""
    monkeypatch.chdir(ROOT)
