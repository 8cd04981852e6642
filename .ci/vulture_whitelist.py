"""Names `vulture` cannot see used, for `.ci/run`'s dead-code gate (`[tool.vulture]` in
pyproject.toml; docs/development.md#dead-code). Vulture matches a name wherever it is
defined, so each line is a name, with where it is defined and who uses it. A name that is
really unused is deleted, not listed here."""
# ruff: noqa: B018, F821

# typer: a command is found by name in cli.py's table, its enum members by their values
init  # commands/init_cmd.py: cli.py's _COMMANDS names it as a string
BASH, ZSH, FISH, POWERSHELL  # commands/completion_cmd.py: Shell's choices
QUOTA, TRAFFIC, BILLING_CATALOG, MODEL_CATALOG, WINDOW_CATALOG  # commands/schema_cmd.py: Kind

# Python's own hooks
__getattr__  # cli.py: the module's lazy attribute, and the plugin loader's replacement
__signature__, __annotations__  # commands/common.py: what typer reads of a wrapped command
frame  # cli.py: _terminated's second argument, the signal handler's signature
log_message, do_POST  # tests/test_gateways_litellm.py: http.server's handler methods
tz  # tests/test_omniroute_ledger.py: a datetime subclass's now(tz), the signature it overrides
read_only, itersize  # sources/litellm_spend.py: psycopg's connection and cursor settings
format_help_text  # commands/traffic_cmd.py: click's hook TrafficCommand overrides for its help

# fields read by name (getattr over a key list, a JSON echo, a model's schema)
forbid_billing, max_unverified, max_paid_hours  # analyses/check.py: Expectation, by key
budget_period  # engine/records.py PlanSettings, inputs/plan_document.py: the JSON echo
format_version  # inputs/plan_document.py: PlanDocument, the plan document's first key
tokens_cache_read, tokens_cache_write  # inputs/ledger/events.py: a ledger event's fields

# pytest: a fixture asked for by argument for its side effect
local_zone  # tests/test_omniroute_since.py

# the written form of an inline copy (the hot loop names it)
_bloom_positions  # inputs/ledger/read.py: the scan's Bloom filter, inline

# unused, kept where they are defined until their modules change next
INCLUDED  # analyses/traffic.py: docs/traffic.md's `included` price source, not produced
DEFAULT_SINCE  # sources/omniroute/options.py: import_cmd.py writes "7d" itself
SCHEMA_COMMIT  # sources/litellm_spend.py: the schema's commit, also in the module docstring
