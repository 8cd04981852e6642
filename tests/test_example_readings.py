"""The shipped examples are data an operator learns from: each reading must be one a source
could have taken. A reading of a window checked before the window's cycle began (a 06:00
reading of a 5h window resetting at 12:00, whose cycle starts at 07:00) cannot be: the
day example had twelve, and a pace or a hold read from them would teach the wrong thing.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from omniladder.analyses.forecast.pace import catalog_lengths
from omniladder.commands.common import InputOptions
from omniladder.inputs.input_set import load_settings, resolve_files
from omniladder.inputs.scopes import load_window_scopes
from tests.conftest import EXAMPLES


def shipped_settings() -> dict[str, Path]:
    """Every settings file of the examples that names a quota file, by the quota file."""
    found: dict[str, Path] = {}
    for settings in sorted(EXAMPLES.rglob("omniladder*.toml")):
        quota = resolve_files(settings, load_settings(settings)).quota
        if quota is not None:
            found.setdefault(quota.resolve().relative_to(EXAMPLES).as_posix(), settings)
    return found


def readings_before_their_cycle(settings: Path) -> tuple[list[str], int]:
    """Each reading whose window (of a length the reading or the window catalog gives)
    began after the reading was taken, and how many windows of a known length there were."""
    inputs = InputOptions(config=settings).load()
    files = resolve_files(settings, inputs.settings)
    lengths = catalog_lengths(load_window_scopes(files.window_catalogs, include_shipped=True))
    providers = {connection.id: connection.provider for connection in inputs.connections}
    outside: list[str] = []
    checked = 0
    for cid, history in inputs.readings.items():
        for reading in history:
            for window in reading.all_windows():
                seconds, _ = lengths(providers[cid], window)
                if window.reset_at is None or seconds is None:
                    continue
                checked += 1
                start = window.reset_at - timedelta(seconds=seconds)
                if reading.checked_at < start:
                    outside.append(f"{cid} at {reading.checked_at:%Y-%m-%d %H:%M}Z: its "
                                   f"{window.name} window begins {start:%Y-%m-%d %H:%M}Z")
    return outside, checked


def test_the_examples_ship_quota_files() -> None:
    assert {"quota.json", "day/quota.json"} <= set(shipped_settings())


@pytest.mark.parametrize(("quota", "settings"), list(shipped_settings().items()))
def test_every_shipped_reading_lies_inside_its_windows_cycle(quota: str,
                                                            settings: Path) -> None:
    outside, checked = readings_before_their_cycle(settings)
    assert checked > 0, quota
    assert outside == [], quota
