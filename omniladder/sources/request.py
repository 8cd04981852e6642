"""The options every ``omniladder import <source>`` command takes, as plain data.

Kept apart from ``run`` so the command line can name it without importing the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class ImportRequest:
    connection_id: str
    quota: Path | None = None
    """The quota file to create or merge into; default: the settings file's [inputs] quota."""
    config: Path | None = None
    connections: Path | None = None
    windows_catalogs: tuple[Path, ...] = ()
    models_catalogs: tuple[Path, ...] = ()
    no_shipped_catalogs: bool = False
    force: bool = False
    """Import onto a connection whose provider the source does not serve (SPEC §6)."""
