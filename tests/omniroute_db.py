"""Build small OmniRoute-shaped SQLite databases for the importer's tests.

Shapes come from OmniRoute (github.com/diegosouzapw/OmniRoute): provider_connections from
migration 001_initial_schema.sql (later columns such as display_name, default_model and
global_priority included), quota_snapshots from 013_quota_snapshots.sql (with raw_data and
``created_at TEXT NOT NULL DEFAULT (datetime('now'))``, and its three indexes); writer
behaviour from docs/sources.md#omniroute.

Every credential column, the provider-specific JSON and the e-mail column hold a canary that
must never appear in anything omniladder writes or prints.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CANARIES = ("CANARY-ACCESS-7f3a", "CANARY-REFRESH-91bc", "CANARY-APIKEY-d00d",
            "CANARY-IDTOKEN-5e5e", "CANARY-PSD-c0ffee", "canary-mail-0b0e@example.com")

CONNECTIONS_DDL = """
CREATE TABLE provider_connections (
  id TEXT PRIMARY KEY, provider TEXT NOT NULL, auth_type TEXT, name TEXT,
  display_name TEXT, email TEXT, is_active INTEGER DEFAULT 1, test_status TEXT,
  rate_limited_until TEXT, default_model TEXT, priority INTEGER,
  provider_specific_data TEXT, access_token TEXT, refresh_token TEXT, api_key TEXT,
  id_token TEXT, created_at TEXT, updated_at TEXT
)"""

SNAPSHOTS_DDL = """
CREATE TABLE quota_snapshots (
  id INTEGER PRIMARY KEY AUTOINCREMENT, provider TEXT, connection_id TEXT, window_key TEXT,
  remaining_percentage REAL, is_exhausted INTEGER DEFAULT 0, next_reset_at TEXT,
  window_duration_ms INTEGER, created_at TEXT
)"""

# 013_quota_snapshots.sql as OmniRoute ships it: raw_data, and the created_at indexes.
REAL_SNAPSHOTS_DDL = """
CREATE TABLE quota_snapshots (
  id INTEGER PRIMARY KEY AUTOINCREMENT, provider TEXT NOT NULL, connection_id TEXT NOT NULL,
  window_key TEXT NOT NULL, remaining_percentage REAL, is_exhausted INTEGER DEFAULT 0,
  next_reset_at TEXT, window_duration_ms INTEGER, raw_data TEXT,
  created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX idx_quota_snapshots_provider_time ON quota_snapshots(provider, created_at);
CREATE INDEX idx_quota_snapshots_connection_time ON quota_snapshots(connection_id, created_at);
CREATE INDEX idx_quota_snapshots_created_at ON quota_snapshots(created_at)"""
RAW_CANARY = "CANARY-RAWDATA-4b1d"
"""Sits in raw_data next to fractionReported: raw_data is never printed or written."""

# (id, provider, auth_type, name, display_name, is_active, test_status, rate_limited_until,
#  default_model, priority)
CONNECTIONS: tuple[tuple[Any, ...], ...] = (
    ("conn-codex-banned", "codex", "oauth", "codex old", None, 1, "banned", None, None, 5),
    ("conn-claude-work", "claude", "oauth", "claude-work", "Max plan, work", 1, "active",
     None, None, 1),
    ("conn-claude-home", "claude", "oauth", "claude-home", "", 1, "success", None, None, 2),
    ("conn-codex-cool", "codex", "oauth", "codex plus", None, 1, None,
     "2026-11-29T14:00:00", None, 3),
    ("conn-openai", "openai", "apikey", "openai key", None, 1, "testing", None, "gpt-5-mini",
     None),
    ("conn-mystery", "mystery", "cookie", "mystery", None, 1, "unknown", None, "mystery-1",
     4),
    ("conn-nomodel", "nowhere", "apikey", "nowhere", None, 1, None, None, None, 6),
    ("conn-off", "claude", "oauth", "switched off", None, 0, "active", None, None, 7),
)

# (connection_id, window_key, remaining_percentage, is_exhausted, next_reset_at, created_at)
SNAPSHOTS: tuple[tuple[Any, ...], ...] = (
    ("conn-claude-work", "5h", 90, 0, "2026-11-19T15:00:00Z", "2026-11-19 10:00:00"),
    ("conn-claude-work", "5h", 50, 0, "2026-11-29T15:00:00Z", "2026-11-29 11:00:00"),
    ("conn-claude-work", "weekly", 80, 0, "2026-12-02T00:00:00Z", "2026-11-29 11:00:01"),
    ("conn-claude-work", "5h", 40, 0, "2026-11-29T15:00:00Z", "2026-11-29T11:59:30Z"),
    ("conn-claude-home", "5h", 12.5, 1, "2026-11-29T14:30:00Z", "2026-11-29 11:59:00"),
    ("conn-ghost", "5h", 10, 0, None, "2026-11-29 11:00:00"),
    ("conn-openai", "monthly", None, 0, None, 1795953540000),
)


def build_db(path: Path, *, connections: Sequence[tuple[Any, ...]] = CONNECTIONS,
             snapshots: Sequence[tuple[Any, ...]] = SNAPSHOTS,
             connections_ddl: str = CONNECTIONS_DDL,
             snapshots_ddl: str | None = SNAPSHOTS_DDL) -> Path:
    """Create the database at path, secrets filled with canaries."""
    db = sqlite3.connect(path)
    try:
        db.execute(connections_ddl)
        if snapshots_ddl is not None:
            db.executescript(snapshots_ddl)
        columns = [row[1] for row in db.execute("PRAGMA table_info(provider_connections)")]
        for row in connections:
            values = dict(zip(
                ("id", "provider", "auth_type", "name", "display_name", "is_active",
                 "test_status", "rate_limited_until", "default_model", "priority"), row,
                strict=True))
            values.update({
                "access_token": CANARIES[0], "refresh_token": CANARIES[1],
                "api_key": CANARIES[2], "id_token": CANARIES[3],
                "provider_specific_data": f'{{"cookie": "{CANARIES[4]}"}}',
                "email": CANARIES[5],
            })
            values = {k: v for k, v in values.items() if k in columns}
            names = ", ".join(values)
            marks = ", ".join("?" for _ in values)
            db.execute(f"INSERT INTO provider_connections ({names}) VALUES ({marks})",
                       tuple(values.values()))
        if snapshots_ddl is not None:
            has_raw = "raw_data" in snapshots_ddl
            for row in snapshots:
                connection_id, window, remaining, exhausted, reset, created = row[:6]
                raw = row[6] if len(row) > 6 else None
                names = ("provider, connection_id, window_key, remaining_percentage, "
                         "is_exhausted, next_reset_at, window_duration_ms, created_at")
                row_values: tuple[Any, ...] = ("x", connection_id, window, remaining,
                                               exhausted, reset, None, created)
                if has_raw:
                    names += ", raw_data"
                    row_values += (raw,)
                marks = ", ".join("?" for _ in row_values)
                db.execute(f"INSERT INTO quota_snapshots ({names}) VALUES ({marks})",
                           row_values)
        db.commit()
    finally:
        db.close()
    return path
