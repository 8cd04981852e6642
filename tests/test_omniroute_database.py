"""Opening and reading an OmniRoute database: what is refused, and the exact message.

docs/sources.md#omniroute: the database is opened read-only, only the mapped columns can be read
(an SQLite authorizer refuses everything else), and a database that is missing, not a file,
not SQLite or not OmniRoute's shape is exit 2 with one line naming the file and the problem.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from omniladder.errors import InputError
from omniladder.inputs.files import IS_A_DIRECTORY
from omniladder.sources.omniroute.database import open_readonly
from tests.omniroute_db import CONNECTIONS_DDL, SNAPSHOTS_DDL, build_db
from tests.omniroute_direct import NOW, run_import


def _refusal(path: Path, **kwargs: object) -> str:
    with pytest.raises(InputError) as caught:
        run_import(path, **kwargs)  # type: ignore[arg-type]
    return str(caught.value)


# --- the file itself -------------------------------------------------------------------------


def test_a_missing_database_names_the_file(tmp_path: Path) -> None:
    assert _refusal(tmp_path / "gone.sqlite") == "storage.sqlite: file not found"


def test_a_directory_names_the_file(tmp_path: Path) -> None:
    assert _refusal(tmp_path) == f"storage.sqlite: {IS_A_DIRECTORY}"


def test_a_fifo_is_not_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert _refusal(fifo) == ("storage.sqlite: is a named pipe (FIFO), not a regular file; "
                              "omniladder reads only regular files")


def test_a_file_that_is_not_sqlite_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"these are notes, not a database; " * 40)
    assert _refusal(path) == ("storage.sqlite: cannot read the SQLite database "
                              "(file is not a database)")


# --- OmniRoute's shape -----------------------------------------------------------------------


@pytest.mark.parametrize(("connections_ddl", "snapshots_ddl", "message"), [
    ("CREATE TABLE other (x)", SNAPSHOTS_DDL,
     "table 'provider_connections' is missing; is this an OmniRoute database?"),
    (CONNECTIONS_DDL, None,
     "table 'quota_snapshots' is missing; is this an OmniRoute database?"),
    (CONNECTIONS_DDL.replace("test_status TEXT,", "").replace("priority INTEGER,", ""),
     SNAPSHOTS_DDL, "table 'provider_connections' has no column 'test_status', 'priority'"),
    (CONNECTIONS_DDL, SNAPSHOTS_DDL.replace("next_reset_at TEXT,", ""),
     "table 'quota_snapshots' has no column 'next_reset_at'"),
], ids=["no-connections", "no-snapshots", "two-columns", "one-column"])
def test_a_database_of_another_shape_names_the_file_table_and_columns(
        tmp_path: Path, connections_ddl: str, snapshots_ddl: str | None, message: str) -> None:
    path = build_db(tmp_path / "old.sqlite", connections=(), snapshots=(),
                    connections_ddl=connections_ddl, snapshots_ddl=snapshots_ddl)
    assert _refusal(path) == f"storage.sqlite: {message}"


# --- the column allowlist --------------------------------------------------------------------


def _view_db(tmp_path: Path, view: str) -> Path:
    """A database whose table ``view`` is a view over a table the importer may not read."""
    path = build_db(tmp_path / "view.sqlite", connections=(), snapshots=())
    db = sqlite3.connect(path)
    db.execute(f"ALTER TABLE {view} RENAME TO hidden")
    db.execute(f"CREATE VIEW {view} AS SELECT * FROM hidden")
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize(("view", "since"), [
    ("provider_connections", None), ("quota_snapshots", None),
    ("quota_snapshots", NOW - timedelta(days=7)),
], ids=["connections", "snapshots-all", "snapshots-since"])
def test_a_view_over_an_unlisted_table_is_refused_naming_the_table(
        tmp_path: Path, view: str, since: object) -> None:
    """A view reads its base table: the authorizer sees that table, which is not allowed."""
    message = _refusal(_view_db(tmp_path, view), since=since)
    assert message == (f"storage.sqlite: cannot read table '{view}' "
                       "(access to hidden.id is prohibited)")


@pytest.mark.parametrize("statement", [
    "PRAGMA user_version",
    "PRAGMA table_list",
    "SELECT lower(provider) FROM provider_connections",
    "SELECT sqlite_version()",
])
def test_the_importer_connection_refuses_other_pragmas_and_functions(
        tmp_path: Path, statement: str) -> None:
    """Only PRAGMA table_info and the instr function its own queries use are allowed."""
    connection = open_readonly(build_db(tmp_path / "o.sqlite"), "o.sqlite")
    try:
        connection.execute("PRAGMA table_info(provider_connections)").fetchall()
        connection.execute("SELECT instr(provider, 'c') FROM provider_connections").fetchall()
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            connection.execute(statement).fetchall()
    finally:
        connection.close()


def test_a_connection_row_problem_names_the_database_file(tmp_path: Path) -> None:
    path = build_db(tmp_path / "o.sqlite", snapshots=(), connections=(
        ("c1", "", "oauth", "n", None, 1, None, None, None, 1),))
    assert _refusal(path) == "storage.sqlite: provider_connections[id=c1].provider: is empty"


def test_the_importer_waits_two_seconds_for_a_busy_gateway(tmp_path: Path) -> None:
    """A gateway writing at that moment holds the lock briefly: the import waits up to 2 s
    (SQLite's busy timeout) rather than failing at once or hanging on."""
    connection = open_readonly(build_db(tmp_path / "o.sqlite"), "o.sqlite")
    try:
        connection.set_authorizer(None)
        assert connection.execute("PRAGMA busy_timeout").fetchone() == (2000,)
    finally:
        connection.close()


def test_a_file_sqlite_cannot_open_names_the_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite refusing the file (permission denied for a user; faked here, the tests may run
    as root) is one line naming the file and SQLite's reason."""
    path = build_db(tmp_path / "o.sqlite")

    def refuse(*_args: object, **_kwargs: object) -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")
    monkeypatch.setattr(sqlite3, "connect", refuse)
    assert _refusal(path) == ("storage.sqlite: cannot open the SQLite database (unable to "
                              "open database file)")
