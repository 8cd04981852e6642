"""The three files `import omniroute` writes, byte for byte, and the import's own figures.

docs/sources.md#omniroute: connections.toml and omniladder.toml carry a header naming the source
and the import instant; quota.json is valid JSON written one reading per line (diff-friendly),
non-ASCII kept as is; the summary on stderr counts connections, readings, connections with
quota history and snapshot rows read; with --since a note says only the value in force at
since was read.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from omniladder.sources.omniroute.importer import render_files
from tests.omniroute_db import build_db
from tests.omniroute_direct import NOW, run_import

CONNECTIONS = (
    ("zürich-1", "nowhere", "oauth", "Zürich", None, 1, "active", None, "m-1", 1),
    ("idle", "nowhere", "apikey", None, None, 0, None, None, "m-2", 2),
)
SNAPSHOTS = (
    ("zürich-1", "session (5h)", 40, 0, "2026-11-29T15:00:00Z", "2026-11-29T10:00:00.000Z"),
    ("zürich-1", "session (5h)", 30, 0, "2026-11-29T15:00:00Z", "2026-11-29T11:30:00.000Z"),
    ("zürich-1", "session (5h)", 35, 0, "2026-11-29T15:00:00Z", "2026-11-29T11:30:01.000Z"),
)
HEADER = ("# Imported by `omniladder import omniroute` from storage.sqlite\n"
          "# at 2026-11-29T12:00:00Z. No credential was read.\n\n")


def _db(tmp_path: Path, snapshots: Any = SNAPSHOTS) -> Path:
    return build_db(tmp_path / "s.sqlite", connections=CONNECTIONS, snapshots=snapshots)


def test_the_three_files_byte_for_byte(tmp_path: Path) -> None:
    files = render_files(run_import(_db(tmp_path)), "storage.sqlite")
    assert list(files) == ["connections.toml", "quota.json", "omniladder.toml"]
    assert files["connections.toml"] == HEADER + (
        '[[connections]]\nid = "zürich-1"\nprovider = "nowhere"\nauth_type = "oauth"\n'
        'models = [\n    "m-1",\n]\nactive = true\nstatus = "ok"\n'
        'state_as_of = "2026-11-29T12:00:00Z"\nlabel = "Zürich"\n\n'
        '[[connections]]\nid = "idle"\nprovider = "nowhere"\nauth_type = "apikey"\n'
        'models = [\n    "m-2",\n]\nactive = false\nstate_as_of = "2026-11-29T12:00:00Z"\n')
    window = '"name": "session (5h)", "remaining_percent": {}, "reset_at": "2026-11-29T15:00:00Z"'
    assert files["quota.json"] == (
        '{"taken_at": "2026-11-29T12:00:00Z", "readings": [\n'
        '  {"connection": "zürich-1", "checked_at": "2026-11-29T10:00:00Z", "windows": [{'
        + window.format(40) + '}]},\n'
        '  {"connection": "zürich-1", "checked_at": "2026-11-29T11:30:01Z", "windows": [{'
        + window.format(35) + '}]}\n'
        ']}\n')
    assert files["omniladder.toml"] == HEADER + (
        "# Readings keep their real created_at. The gateway writes a row only when a value\n"
        "# changes, so an unchanged window looks old: re-import with --confirmed-at now, or\n"
        "# raise [ladder] max_reading_age_seconds, if you trust the gateway to keep polling."
        "\n\n[inputs]\nconnections = \"connections.toml\"\nquota = \"quota.json\"\n")
    assert json.loads(files["quota.json"])["readings"][1]["connection"] == "zürich-1"


def test_an_import_without_readings_writes_an_empty_list(tmp_path: Path) -> None:
    files = render_files(run_import(_db(tmp_path, ())), "storage.sqlite")
    assert files["quota.json"] == '{"taken_at": "2026-11-29T12:00:00Z", "readings": []}\n'


def test_counts_and_the_since_note(tmp_path: Path) -> None:
    path = _db(tmp_path)
    every = run_import(path)
    assert every.counts == {"connections": 2, "readings": 2, "connections_with_readings": 1,
                            "snapshot_rows": 3}
    unscoped = ("windows not in the window-scope catalog: read as limiting every model "
                "(count: connections): 'session (5h)' ×1")
    assert every.notes == (unscoped,)
    since = NOW - timedelta(hours=1)
    recent = run_import(path, since=since)
    assert recent.counts == {"connections": 2, "readings": 2, "connections_with_readings": 1,
                             "snapshot_rows": 3}
    assert recent.notes == (
        unscoped, "history before --since 2026-11-29T11:00:00Z: only the value in force at "
        "that instant was read, for every window")
    assert recent.quota == every.quota
