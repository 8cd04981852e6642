"""`.ci/start-postgres DIR`: the server runs as the postgres user, so a DIR it cannot reach
is refused with one line saying why and what to do, before anything is started."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / ".ci" / "start-postgres"


def _postgres_user() -> bool:
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return False
    return True


pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not _postgres_user()
    or not glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
    reason="needs root, the postgres user and Debian's postgresql (the script starts the "
    "server as postgres from root)")


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are 0700, which is the case tested)."""
    folder = Path(tempfile.mkdtemp(prefix="omniladder-start-postgres-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def test_a_dir_under_a_folder_postgres_cannot_enter_is_one_clear_line(
        open_folder: Path) -> None:
    closed = open_folder / "closed"
    closed.mkdir()
    closed.chmod(0o700)
    result = subprocess.run([str(SCRIPT), str(closed / "pg")], capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("start-postgres: the server runs as the postgres user, which "
                           f"cannot enter {closed.resolve()} (mode 700, owner root)")
    assert "mktemp -d" in line
    assert not (closed / "pg" / "data").exists()  # nothing was started
