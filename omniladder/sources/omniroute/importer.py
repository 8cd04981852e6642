"""The one entry: a database read in one transaction into the connections and quota
documents (and the call_logs traffic ledger), and the files written from them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omniladder import timefmt
from omniladder.engine.inputs import Catalogs
from omniladder.inputs.scopes import WindowScopes
from omniladder.sources.omniroute.connections import connection_rows, map_connections
from omniladder.sources.omniroute.database import Database
from omniladder.sources.omniroute.options import ImportOptions
from omniladder.sources.omniroute.snapshots import map_snapshots, snapshot_rows

if TYPE_CHECKING:
    from omniladder.sources.omniroute.custom import CustomPricing
    from omniladder.sources.omniroute_traffic import TrafficImport

@dataclass(frozen=True, kw_only=True)
class ImportResult:
    connections: dict[str, Any]
    """The connections document (``{"connections": [...]}``)."""
    quota: dict[str, Any]
    """The quota document (``{"taken_at": ..., "readings": [...]}``)."""
    notes: tuple[str, ...] = field(default=())
    """What an operator should know about the import (stderr talk)."""
    counts: dict[str, int] = field(default_factory=dict)
    traffic: TrafficImport | None = None
    """The traffic ledger read from call_logs in the same transaction (omniroute_traffic)."""
    custom: CustomPricing | None = None
    """Catalog entries for the models custom OpenAI-compatible providers served."""


def import_omniroute(path: Path, shown: str, catalogs: Catalogs, scopes: WindowScopes,
                     options: ImportOptions) -> ImportResult:
    """Read an OmniRoute database and build the connections and quota documents."""
    notes: list[str] = []
    with Database(path, shown, notes) as reader:
        connections = map_connections(connection_rows(reader), catalogs, shown, notes,
                                      options.now)
        readings, rows = map_snapshots(snapshot_rows(reader, options.since),
                                       connections, options, scopes, shown, notes)
        from omniladder.sources.omniroute_traffic import read_call_logs

        until = (options.traffic_until if options.traffic_until is not None
                 else datetime.now(UTC))
        traffic = read_call_logs(reader.db, shown, {c["id"]: None for c in connections},
                                 options.since, until)
    from omniladder.sources.omniroute.custom import price_custom_models

    custom = price_custom_models(traffic.models, {c["id"]: c["provider"] for c in connections},
                                 catalogs)
    notes += custom.notes()
    if options.since is not None:
        notes.append(f"history before --since {timefmt.iso(options.since)}: only the value in "
                     "force at that instant was read, for every window")
    quota = {"taken_at": timefmt.iso(options.now), "readings": readings}
    with_history = len({reading["connection"] for reading in readings})
    counts = {"connections": len(connections), "readings": len(readings),
              "connections_with_readings": with_history, "snapshot_rows": rows}
    return ImportResult(connections={"connections": connections}, quota=quota, notes=tuple(notes),
                        counts=counts, traffic=traffic,
                        custom=custom)


SETTINGS_NAME = "omniladder.toml"
CONNECTIONS_NAME = "connections.toml"
QUOTA_NAME = "quota.json"


def quota_text(quota: Mapping[str, Any]) -> str:
    """The quota document with one reading per line: valid JSON, diff-friendly, and written
    by json's C encoder (an indented dump of 100,000 readings takes seconds)."""
    readings = quota["readings"]
    head = json.dumps(quota["taken_at"])  # an RFC 3339 instant: ASCII
    if not readings:
        return f'{{"taken_at": {head}, "readings": []}}\n'
    lines = ",\n".join("  " + json.dumps(reading, ensure_ascii=False)
                        for reading in readings)
    return f'{{"taken_at": {head}, "readings": [\n{lines}\n]}}\n'


def render_files(result: ImportResult, source: str, traffic: str | None = None
                 ) -> dict[str, str]:
    """The three files' text, by file name: connections, quota, then the settings naming them
    (and the traffic ledger, when one is given: ``[inputs] traffic``; and the catalog of
    custom providers' models, when there is one: ``[catalogs] models``)."""
    import tomli_w

    from omniladder.sources.omniroute.custom import CATALOG_NAME

    header = (f"# Imported by `omniladder import omniroute` from {source}\n"
              f"# at {result.quota['taken_at']}. No credential was read.\n\n")
    custom = result.custom.entries if result.custom is not None else []
    connections = header + tomli_w.dumps(result.connections)
    quota = quota_text(result.quota)
    settings = header + (
        "# Readings keep their real created_at. The gateway writes a row only when a value\n"
        "# changes, so an unchanged window looks old: re-import with --confirmed-at now, or\n"
        "# raise [ladder] max_reading_age_seconds, if you trust the gateway to keep polling.\n\n"
    ) + tomli_w.dumps({"inputs": {"connections": CONNECTIONS_NAME, "quota": QUOTA_NAME,
                                  **({"traffic": traffic} if traffic is not None else {})},
                       **({"catalogs": {"models": [CATALOG_NAME]}} if custom else {})})
    files = {CONNECTIONS_NAME: connections, QUOTA_NAME: quota, SETTINGS_NAME: settings}
    if custom:
        files[CATALOG_NAME] = header + tomli_w.dumps({"models": custom})
    return files
