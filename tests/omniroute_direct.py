"""Call the OmniRoute importer directly (no CLI): the shipped catalogs, a fixed instant."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from omniladder.engine.inputs import Catalogs
from omniladder.inputs.catalogs import load_catalogs
from omniladder.inputs.scopes import WindowScopes, load_window_scopes
from omniladder.sources.omniroute.importer import ImportResult, import_omniroute
from omniladder.sources.omniroute.options import ImportOptions

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


@cache
def shipped() -> tuple[Catalogs, WindowScopes]:
    return (load_catalogs((), (), include_shipped=True),
            load_window_scopes((), include_shipped=True))


def run_import(path: Path, *, shown: str = "storage.sqlite", since: datetime | None = None,
               now: datetime = NOW, group_seconds: float = 2.0,
               confirmed_at: datetime | None = None) -> ImportResult:
    catalogs, scopes = shipped()
    options = ImportOptions(now=now, since=since, group_seconds=group_seconds,
                            confirmed_at=confirmed_at)
    return import_omniroute(path, shown, catalogs, scopes, options)
