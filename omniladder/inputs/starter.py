"""The starter files `omniladder init` writes: commented, and loading cleanly as they are."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from omniladder.inputs.writing import write_files

SETTINGS_TEXT = """\
# omniladder settings. Paths are relative to this file.
# Schema for editors: `omniladder schema settings` (see docs/inputs.md#schemas).
#
# Plan with:  omniladder plan auto/thrifty --config omniladder.toml

[inputs]
connections = "connections.toml"
# quota = "quota.json"        # a quota snapshot with history; without one every
#                             # connection reads quota-missing
# spend = "spend.json"        # a spend ledger; needed for rung budgets to be enforced

[ladder]
exit_cutoff_percent = 2              # a connection in play stays while remaining > 2%
reentry_min_remaining_percent = 5    # one that dropped out comes back only above 5%
max_reading_age_seconds = 180        # older readings are stale
clamp_cooldown_to_reset = true       # a cooldown ends no later than the plan's own reset
within_rung_order = "declared"       # or "expiring-first": the quota that lapses soonest first

[budgets]
period = "month"                     # day | week | month, UTC calendar
# rung_budget_usd = { cheap = 5.0, premium = 0 }   # 0 disables a rung outright

[tiers]
cheap_max_input_usd_per_mtok = 1.0   # free at 0, cheap up to this, premium above
free_providers = []                  # providers whose metered models are all free

[catalogs]
billing = []                         # your billing catalog overlays (omniladder catalog check)
models = []                          # your model catalog overlays
include_shipped = true
"""

CONNECTIONS_TEXT = """\
# Your connections: one [[connections]] table per account. Never put a credential here:
# omniladder does not need one, and secret-looking keys are rejected.
# Schema for editors: `omniladder schema connections`. To start from a gateway's database
# instead, see `omniladder import omniroute --help`.

[[connections]]
id = "claude-max"                    # required, unique
provider = "claude"                  # required
auth_type = "oauth"                  # required; "none" marks a keyless backend
label = "Claude Max plan"
# models = ["claude-sonnet-4-5"]     # default: every model the model catalog lists
# active = false                     # switched off
# status = "expired"                 # a terminal status keeps it out
# rate_limited_until = "2026-11-29T14:00:00Z"
# rate_limited_since = "2026-11-29T13:00:00Z"  # when that cooldown began
# state_as_of = "2026-11-29T13:30:00Z"  # active, status, cooldown observed then, not before
# overage = "meters-to-paid"         # narrowing override: "extra usage" is on
# capacity_weight = 20               # seat size against a weight-1 seat (expiring-first)
# reserve_percent = 10               # R16: keep 10% of every window for use outside the gateway
# seat_price_usd = 200               # what the seat costs per seat_period
# seat_period = "month"              # day | week | month (a month when not given)

[[connections]]
id = "local-ollama"
provider = "ollama"
auth_type = "none"                   # keyless: nothing to bill
models = ["qwen2.5-coder:32b"]
label = "Local backend"
"""

STARTER_FILES: Mapping[str, str] = {
    "omniladder.toml": SETTINGS_TEXT,
    "connections.toml": CONNECTIONS_TEXT,
}


def write_starter(directory: Path) -> list[Path]:
    """Write the starter files into directory, never overwriting one that exists."""
    return write_files(directory, STARTER_FILES,
                       refusal="already exists; init never overwrites a file")
