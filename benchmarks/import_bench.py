"""Time `omniladder import omniroute` on a large OmniRoute database, and print a table.

    python benchmarks/import_bench.py                 # 400,000 rows over 90 days
    python benchmarks/import_bench.py --rows 100000 --repeats 3

Builds an OmniRoute-shaped SQLite database once (cached under the temp directory, keyed by
its size and seed) with the tables, columns and indexes of OmniRoute's migrations
(``001_initial_schema.sql`` for provider_connections, ``013_quota_snapshots.sql`` for
quota_snapshots, github.com/diegosouzapw/OmniRoute): change-only rows of every window of
every connection over 90 days (the gateway keeps 90 days), a gateway restart every three
days re-writing every window, ``created_at`` in the three forms real databases hold (SQLite
``datetime('now')`` text for the oldest month, ISO text with milliseconds and Z after it,
epoch milliseconds for one provider), and the third writer generation's sentinels.

Then it runs the import as a subprocess several times per ``--since`` and reports the median
wall time of the whole process and its peak resident memory (``ru_maxrss`` of the child,
read with ``os.wait4``: the same figure ``getrusage(RUSAGE_CHILDREN)`` reports for one
child). Targets for ``--since 1d`` on 400,000 rows: at most 0.6 s and 80 MiB.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import run_child

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
DAYS = 90
POLL = timedelta(minutes=5)
RESTART_EVERY = timedelta(days=3)
TARGET_SECONDS = 0.6
TARGET_MIB = 80.0
SCHEMA_VERSION = 1  # bump when the generated database changes shape

CONNECTIONS_DDL = """
CREATE TABLE provider_connections (
  id TEXT PRIMARY KEY, provider TEXT NOT NULL, auth_type TEXT, name TEXT, email TEXT,
  priority INTEGER DEFAULT 0, is_active INTEGER DEFAULT 1, access_token TEXT,
  refresh_token TEXT, test_status TEXT, rate_limited_until TEXT, api_key TEXT, id_token TEXT,
  provider_specific_data TEXT, display_name TEXT, global_priority INTEGER,
  default_model TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
)"""
SNAPSHOTS_DDL = """
CREATE TABLE quota_snapshots (
  id INTEGER PRIMARY KEY AUTOINCREMENT, provider TEXT NOT NULL,
  connection_id TEXT NOT NULL, window_key TEXT NOT NULL, remaining_percentage REAL,
  is_exhausted INTEGER DEFAULT 0, next_reset_at TEXT, window_duration_ms INTEGER,
  raw_data TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now'))
)"""
INDEXES = (
    "CREATE INDEX idx_quota_snapshots_provider_time ON quota_snapshots(provider, created_at)",
    "CREATE INDEX idx_quota_snapshots_connection_time "
    "ON quota_snapshots(connection_id, created_at)",
    "CREATE INDEX idx_quota_snapshots_created_at ON quota_snapshots(created_at)",
)

# provider, auth_type, window keys as OmniRoute writes them (docs/sources.md#omniroute, window keys)
PROVIDERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("claude", "oauth", ("session (5h)", "weekly (7d)", "weekly opus (7d)",
                         "weekly sonnet (7d)")),
    ("codex", "oauth", ("session", "weekly", "code_review", "code_review_weekly")),
    ("antigravity", "oauth", ("gemini-3-pro-preview", "claude-opus-4-6-thinking",
                              "gemini_weekly", "claude_gpt_weekly", "credits")),
    ("github", "oauth", ("premium_interactions", "chat", "completions")),
    ("kiro", "oauth", ("agentic_request",)),
)
CONNECTIONS = 60


def created_at(instant: datetime, provider: str) -> Any:
    """The three created_at forms: epoch ms (kiro), datetime('now') (oldest month), ISO."""
    if provider == "kiro":
        return int(instant.timestamp() * 1000)
    if instant < NOW - timedelta(days=60):
        return instant.strftime("%Y-%m-%d %H:%M:%S")
    return instant.strftime("%Y-%m-%dT%H:%M:%S.") + f"{instant.microsecond // 1000:03d}Z"


def build(path: Path, rows: int, seed: int = 1) -> Path:
    """Write the database at path: ``rows`` snapshot rows over 90 days before NOW."""
    rng = random.Random(seed)
    db = sqlite3.connect(path)
    try:
        db.execute(CONNECTIONS_DDL)
        db.execute(SNAPSHOTS_DDL)
        series: list[tuple[str, str, str]] = []
        for index in range(CONNECTIONS):
            provider, auth_type, windows = PROVIDERS[index % len(PROVIDERS)]
            cid = f"{provider}-{index:03d}"
            db.execute(
                "INSERT INTO provider_connections (id, provider, auth_type, name, email, "
                "priority, is_active, access_token, refresh_token, test_status, "
                "display_name, created_at, updated_at) VALUES "
                "(?, ?, ?, ?, ?, ?, 1, 'bench-secret', 'bench-secret', 'active', ?, ?, ?)",
                (cid, provider, auth_type, f"{cid}@example.com", f"{cid}@example.com",
                 index, f"bench {cid}", "2026-08-01T00:00:00.000Z", "2026-08-01T00:00:00.000Z"))
            series += [(cid, provider, window) for window in windows]
        start = NOW - timedelta(days=DAYS)
        polls = int((NOW - start) / POLL)
        restarts = int((NOW - start) / RESTART_EVERY)
        # every series gets the same share of change rows; restarts re-write every window
        per_series = max(1, (rows - restarts * len(series)) // len(series))
        batch: list[tuple[Any, ...]] = []
        total = 0
        for cid, provider, window in series:
            steps = sorted(rng.sample(range(polls), min(per_series, polls)))
            value = rng.uniform(20, 100)
            for step in steps:
                instant = start + step * POLL + timedelta(milliseconds=rng.randrange(1000))
                value = max(0.0, min(100.0, value + rng.uniform(-12, 10)))
                batch.append(_row(rng, cid, provider, window, value, instant))
            total += len(steps)
        for restart in range(1, restarts + 1):
            instant = start + restart * RESTART_EVERY
            for cid, provider, window in series:
                batch.append(_row(rng, cid, provider, window, rng.uniform(0, 100), instant))
        batch.sort(key=lambda row: str(row[-1]))  # roughly insertion (time) order
        db.executemany(
            "INSERT INTO quota_snapshots (provider, connection_id, window_key, "
            "remaining_percentage, is_exhausted, next_reset_at, window_duration_ms, "
            "raw_data, created_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)", batch)
        for statement in INDEXES:
            db.execute(statement)
        db.commit()
    finally:
        db.close()
    return path


def _row(rng: random.Random, cid: str, provider: str, window: str, value: float,
         instant: datetime) -> tuple[Any, ...]:
    reset = (instant + timedelta(days=rng.randrange(1, 7))).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    raw = f'{{"used":{round(100 - value)},"limit":100,"source":"bench"}}'
    remaining: float = round(value, 1)
    exhausted = 1 if remaining <= 0 else 0
    if (provider, window) in (("github", "chat"), ("github", "completions"),
                              ("antigravity", "credits")):
        remaining, exhausted = 0.0, 0
        raw = '{"fractionReported":false}'  # generation 3 sentinels
    return (provider, cid, window, remaining, exhausted, reset, raw,
            created_at(instant, provider))


def cached_db(rows: int, seed: int) -> Path:
    folder = Path(tempfile.gettempdir()) / "omniladder-import-bench"
    folder.mkdir(exist_ok=True)
    path = folder / f"omniroute-v{SCHEMA_VERSION}-{rows}-{seed}.db"
    if not path.exists():
        print(f"  building {path} ({rows:,} rows) ...", file=sys.stderr)
        scratch = path.with_suffix(".tmp")
        scratch.unlink(missing_ok=True)
        build(scratch, rows, seed)
        os.replace(scratch, path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--since", nargs="*", default=["1d", "7d", "all"])
    args = parser.parse_args()

    db = cached_db(args.rows, args.seed)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as check:
        count = check.execute("SELECT count(*) FROM quota_snapshots").fetchone()[0]
    lines = ["| --since | whole process (median) | peak memory | target |",
             "|---|---:|---:|---|"]
    with tempfile.TemporaryDirectory(prefix="omniladder-import-bench-") as scratch:
        for since in args.since:
            argv = [sys.executable, "-m", "omniladder", "import", "omniroute", str(db),
                    "--out", str(Path(scratch) / since), "--now", NOW.strftime(
                        "%Y-%m-%dT%H:%M:%SZ"), "--since", since, "--force"]
            repeats = args.repeats if since != "all" else max(1, min(args.repeats, 3))
            runs = [run_child(argv) for _ in range(repeats)]
            seconds = statistics.median(t for t, _ in runs)
            peak = max(m for _, m in runs)
            target = (f"<= {TARGET_SECONDS} s, <= {TARGET_MIB:.0f} MiB: "
                      + ("met" if seconds <= TARGET_SECONDS and peak <= TARGET_MIB
                         else "MISSED")) if since == "1d" else "-"
            lines.append(f"| {since} | {seconds * 1000:,.0f} ms | {peak:,.0f} MiB | {target} |")
            print(f"  measured --since {since}", file=sys.stderr)
    print(f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, "
          f"{os.cpu_count()} CPUs; {count:,} quota_snapshots rows over {DAYS} days; "
          f"median of {args.repeats} runs (3 for all)\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
