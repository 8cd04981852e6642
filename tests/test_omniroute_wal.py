"""`import omniroute` of a WAL-mode database (OmniRoute runs its SQLite in WAL mode): the
gateway's folder is left as it was, a live database is read with the committed rows its -wal
holds, and a folder the importer cannot write is read as an immutable snapshot, with a note
saying what may be missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app

runner = CliRunner()


# --- 5. a WAL-mode OmniRoute database in a folder the importer cannot write ----------------

_WAL_FIGURE = 33.0
"""A remaining_percentage only the -wal file holds (a row not yet checkpointed)."""


def _wal_database(folder: Path, *, pending_row: bool) -> Path:
    """OmniRoute's storage.sqlite in WAL mode (OmniRoute opens it with journal_mode=WAL), in
    ``folder``; with ``pending_row`` its -wal file holds one more snapshot row."""
    import shutil
    import sqlite3

    from tests.omniroute_db import build_db

    staging = folder.parent / f"{folder.name}-staging"
    staging.mkdir()
    source = build_db(staging / "storage.sqlite")
    db = sqlite3.connect(source)
    assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    db.close()  # the last connection checkpoints and removes -wal and -shm
    writer = sqlite3.connect(source)
    if pending_row:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("INSERT INTO quota_snapshots (provider, connection_id, window_key, "
                       "remaining_percentage, is_exhausted, next_reset_at, created_at) VALUES "
                       "('claude', 'conn-claude-work', '5h', ?, 0, '2026-11-29T15:00:00Z', "
                       "'2026-11-29T11:59:50Z')", (_WAL_FIGURE,))
        writer.commit()
    folder.mkdir()
    # what a backup of a live gateway's folder holds: the database and its log, no -shm
    for name in ("storage.sqlite", "storage.sqlite-wal"):
        if (staging / name).exists():
            shutil.copy(staging / name, folder / name)
    writer.close()
    return folder / "storage.sqlite"


def _figures(out: Path) -> set[float]:
    quota = json.loads((out / "quota.json").read_text(encoding="utf-8"))
    return {w["remaining_percent"] for r in quota["readings"]
            if r["connection"] == "conn-claude-work" for w in r.get("windows", ())}


def _import_args(db: Path, out: Path) -> list[str]:
    return ["import", "omniroute", str(db), "--out", str(out), "--now",
            "2026-11-29T12:00:00Z"]


def _without_dac_override() -> None:
    """In the child before exec: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the
    bounding set (prctl PR_CAPBSET_DROP), so a root process honours directory permissions
    after exec, as any user does. Needs CAP_SETPCAP, which root has."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.mark.parametrize("pending_row", [False, True])
def test_a_wal_database_in_a_read_only_folder_is_read_immutable_with_a_note(
        tmp_path: Path, pending_row: bool) -> None:
    """The real failure, reproduced: SQLite cannot create the -shm of a WAL database in a
    folder the user cannot write ("attempt to write a readonly database"). Root ignores
    directory permissions, so as root the import runs in a child process without
    CAP_DAC_OVERRIDE: the folder is then really read-only to it. Proves: the import succeeds
    from the main file, says the snapshot may be torn, and says (truthfully) that rows in the
    -wal file are missing."""
    import os
    import subprocess
    import sys

    db = _wal_database(tmp_path / "gateway", pending_row=pending_row)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "omniladder", *_import_args(db, out)]
    as_root = os.geteuid() == 0
    (tmp_path / "gateway").chmod(0o555)
    try:
        result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                                check=False,
                                preexec_fn=_without_dac_override if as_root else None)
    except subprocess.SubprocessError as exc:
        pytest.skip(f"cannot drop CAP_DAC_OVERRIDE in a child process here ({exc})")
    finally:
        (tmp_path / "gateway").chmod(0o755)
    assert result.returncode == 0, result.stderr
    assert "attempt to write a readonly database" not in result.stderr
    if not pending_row:
        # cleanly closed (no -wal): read immutable from the start, nothing to miss
        assert "immutable snapshot" not in result.stderr
        assert _figures(out)
        return
    note = next(line for line in result.stderr.splitlines()
                if "read it as an immutable snapshot instead" in line)
    assert note.startswith("omniladder: note: gateway/storage.sqlite: its folder is not "
                           "writable")
    assert "which may be torn if the gateway is writing" in note
    assert "copy the database with its -wal file to a folder you can write" in note
    assert ("-byte storage.sqlite-wal is not read" in note) is pending_row
    assert _WAL_FIGURE not in _figures(out)
    assert not (tmp_path / "gateway" / "storage.sqlite-shm").exists()
    if pending_row:
        # the remedy the note gives: a writable folder reads the pending row
        copy = runner.invoke(app, _import_args(db, tmp_path / "copy"))
        assert copy.exit_code == 0, copy.output
        assert _WAL_FIGURE in _figures(tmp_path / "copy")


def test_the_read_only_fallback_in_process(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The same path on any machine: SQLite's refusal is simulated at the first read of a
    `mode=ro` connection (what SQLITE_READONLY_DIRECTORY looks like to Python), so this proves
    the fallback and its note, not SQLite's behaviour (the test above proves that)."""
    import sqlite3

    db = _wal_database(tmp_path / "gateway", pending_row=True)
    opened: list[str] = []
    real_connect = sqlite3.connect

    class Refusing(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql.startswith("PRAGMA schema_version"):
                raise sqlite3.OperationalError("attempt to write a readonly database")
            return super().execute(sql, *args)

    def connect(database: str, **kwargs: Any) -> sqlite3.Connection:
        opened.append(database)
        factory = sqlite3.Connection if "immutable=1" in database else Refusing
        return real_connect(database, factory=factory, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    result = runner.invoke(app, _import_args(db, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert [uri.split("?", 1)[1] for uri in opened] == ["mode=ro", "mode=ro&immutable=1"]
    assert f"omniladder: note: {db}: its folder is not writable" in result.stderr
    assert _figures(tmp_path / "out")


# --- the gateway's folder is left as it was ---------------------------------------------


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Each file of the folder: (size, modification time in ns)."""
    return {path.name: (path.stat().st_size, path.stat().st_mtime_ns)
            for path in folder.iterdir()}


def _wal_call_logs(folder: Path) -> Path:
    """OmniRoute's database in WAL mode with call_logs, cleanly closed (no -wal, no -shm)."""
    import sqlite3

    from tests.test_omniroute_traffic import BUILT, build

    folder.mkdir()
    path = build(folder / "storage.sqlite", BUILT)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    db.close()
    return path


def test_a_cleanly_closed_wal_database_leaves_its_folder_as_it_was(tmp_path: Path) -> None:
    db = _wal_call_logs(tmp_path / "gateway")
    before = _listing(tmp_path / "gateway")
    assert sorted(before) == ["storage.sqlite"]
    result = runner.invoke(app, _import_args(db, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert _listing(tmp_path / "gateway") == before  # no -wal, no -shm left behind
    assert "immutable snapshot" not in result.stderr
    assert (tmp_path / "out" / "traffic.jsonl").read_text(encoding="utf-8").count("\n") == 3


def test_a_live_wal_database_is_read_with_its_committed_rows(tmp_path: Path) -> None:
    """The gateway holds the database open: a committed row lives in the -wal only (no
    checkpoint), and a transaction is under way. The import reads the committed row, not the
    uncommitted one, and creates nothing in the folder."""
    import sqlite3

    db = _wal_call_logs(tmp_path / "gateway")
    gateway = sqlite3.connect(db, isolation_level=None)
    try:
        gateway.execute("PRAGMA wal_autocheckpoint=0")
        insert = ("INSERT INTO call_logs (id, timestamp, status, model, provider, "
                  "connection_id, tokens_in, tokens_out, correlation_id) "
                  "VALUES (?, ?, 200, 'gpt-5-mini', 'openai', 'conn-openai', 3, 4, ?)")
        gateway.execute(insert, ("live-1", "2026-11-29T11:40:00.000Z", "req-live-1"))
        gateway.execute("BEGIN IMMEDIATE")
        gateway.execute(insert, ("live-2", "2026-11-29T11:41:00.000Z", "req-live-2"))
        before = _listing(tmp_path / "gateway")
        assert {"storage.sqlite-wal", "storage.sqlite-shm"} <= set(before)
        result = runner.invoke(app, _import_args(db, tmp_path / "out"))
        assert result.exit_code == 0, result.output
        assert sorted(_listing(tmp_path / "gateway")) == sorted(before)
        ledger = (tmp_path / "out" / "traffic.jsonl").read_text(encoding="utf-8")
        assert '"request_id": "req-live-1"' in ledger
        assert "req-live-2" not in ledger
        gateway.execute("ROLLBACK")
    finally:
        gateway.close()
