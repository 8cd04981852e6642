"""What the engine reads: the loaded inputs and the effective catalogs.

``inputs.input_set`` builds these records from files; the rules read them and nothing else of I/O.
Catalog files are merged here, once, for planning and for ``catalog check`` alike: a later
file's entry replaces an earlier one with the same key.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from omniladder.models import (
    BillingEntry,
    Connection,
    ModelEntry,
    QuotaFile,
    Reading,
    Settings,
    SpendEvent,
)


class SourcedBillingEntry(NamedTuple):
    entry: BillingEntry
    file: str


class SourcedModelEntry(NamedTuple):
    entry: ModelEntry
    file: str


@dataclass(frozen=True)
class Catalogs:
    """The effective catalogs: later files override earlier entries with the same key."""

    billing: dict[tuple[str, str | None], SourcedBillingEntry]
    models: dict[tuple[str, str], SourcedModelEntry]
    billing_files: tuple[str, ...]
    model_files: tuple[str, ...]
    memo: dict[tuple[str, ...], Any] = field(default_factory=dict, init=False, compare=False,
                                             repr=False)
    """Answers derived from the catalogs alone (models of a provider, a near key), kept for
    the next connection that asks: a fleet repeats a few providers thousands of times."""

    def models_of(self, provider: str) -> tuple[str, ...]:
        key = ("models_of", provider)
        found: tuple[str, ...] | None = self.memo.get(key)
        if found is None:
            found = tuple(model for (prov, model) in self.models if prov == provider)
            self.memo[key] = found
        return found


def merge_catalogs(billing_files: Iterable[tuple[str, Iterable[BillingEntry]]],
                   model_files: Iterable[tuple[str, Iterable[ModelEntry]]]) -> Catalogs:
    """The effective catalogs of files given in override order, each as (display name,
    entries): a later entry with the same key, (provider, auth_type) or (provider, model),
    replaces the earlier one, and each entry remembers the file it came from."""
    billing: dict[tuple[str, str | None], SourcedBillingEntry] = {}
    billing_names: list[str] = []
    for shown, entries in billing_files:
        billing_names.append(shown)
        for entry in entries:
            billing[(entry.provider, entry.auth_type)] = SourcedBillingEntry(entry, shown)
    models: dict[tuple[str, str], SourcedModelEntry] = {}
    model_names: list[str] = []
    for shown, model_entries in model_files:
        model_names.append(shown)
        for model in model_entries:
            models[(model.provider, model.model)] = SourcedModelEntry(model, shown)
    return Catalogs(billing, models, tuple(billing_names), tuple(model_names))


class LoadedInputs(NamedTuple):
    settings: Settings
    connections: tuple[Connection, ...]
    readings: dict[str, tuple[Reading, ...]]
    """Each connection's history, sorted by checked_at."""
    quota: QuotaFile | None
    spend: tuple[SpendEvent, ...] | None
    catalogs: Catalogs
    files: dict[str, str]
    """Display names of the files read: settings, connections, quota, spend."""
    warnings: tuple[str, ...] = ()
    read: tuple[tuple[str, str, Path], ...] = ()
    """Every file read, catalogs included, in reading order: (role, display name, path)."""
