"""A damaged OmniRoute database: one line naming the file and what could not be read.

docs/sources.md#omniroute and SPEC §4.3: unreadable input is exit 2 with one message naming the
file, never a traceback. Every leaf page of the snapshot table and of its three indexes is
damaged in turn (``--since`` reads the table through each of them: the created_at ranges, the
(connection_id, created_at) walk for the value in force, a scan for the series); the import
either still answers or names the database and the table it could not read.
"""

from __future__ import annotations

import shutil
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from omniladder.errors import InputError
from tests.omniroute_db import REAL_SNAPSHOTS_DDL, build_db
from tests.omniroute_direct import NOW, run_import

MALFORMED = "(database disk image is malformed)"
ALLOWED = {f"storage.sqlite: cannot read table 'quota_snapshots' {MALFORMED}",
           f"storage.sqlite: cannot read the SQLite database {MALFORMED}"}
INSERT = ("INSERT INTO quota_snapshots (provider, connection_id, window_key, "
          "remaining_percentage, created_at) VALUES (?, ?, ?, ?, ?)")


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Path]]:
    """One copy of the database per leaf page of quota_snapshots and its indexes, that page
    overwritten; a database written in every created_at form, old history first."""
    base = tmp_path_factory.mktemp("damaged")
    clean = build_db(base / "clean.sqlite", snapshots=(), snapshots_ddl=REAL_SNAPSHOTS_DDL,
                     connections=(("c1", "claude", "oauth", "n", None, 1, None, None, None, 1),))
    db = sqlite3.connect(clean)
    for n in range(300):  # old history, long rows: many table pages nobody recent reads
        db.execute(INSERT, ("p" * 300, "c1", "weekly (7d)", 50,
                            f"2026-11-01T00:{n // 60:02d}:{n % 60:02d}.000Z"))
    for n in range(400):  # epoch milliseconds, then ISO text over a week
        db.execute(INSERT, ("x", "c1", "session (5h)", 50, 1795000000000 + n * 1000))
    for n in range(400):
        db.execute(INSERT, ("x", "c1", "session (5h)", 50,
                            f"2026-11-2{n // 100}T00:{(n % 100) // 60:02d}:{n % 60:02d}.000Z"))
    for n in range(3):
        db.execute(INSERT, ("x", "c1", "session (5h)", 40 - n, f"2026-11-29T11:0{n}:00.000Z"))
    db.commit()
    pages = db.execute("SELECT name, pageno FROM dbstat WHERE pagetype = 'leaf' AND (name = "
                       "'quota_snapshots' OR name LIKE 'idx_quota_snapshots_%')").fetchall()
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    copies = []
    for name, page in pages:
        copy = base / f"{name}-{page}.sqlite"
        shutil.copyfile(clean, copy)
        data = bytearray(copy.read_bytes())
        data[(page - 1) * page_size:page * page_size] = b"\xff" * page_size
        copy.write_bytes(bytes(data))
        copies.append((f"{name}:{page}", copy))
    return copies


@pytest.mark.parametrize("since", [None, timedelta(hours=2), timedelta(days=40)],
                         ids=["all", "2h", "40d"])
def test_a_damaged_page_is_answered_or_named_never_a_traceback(
        damaged: list[tuple[str, Path]], since: timedelta | None) -> None:
    refusals: dict[str, str] = {}
    for label, path in damaged:
        try:
            run_import(path, since=None if since is None else NOW - since)
        except InputError as exc:
            refusals[label] = str(exc)
    assert refusals
    assert {label: message for label, message in refusals.items()
            if message not in ALLOWED} == {}
