"""The one table of quota sources: the ``omniladder import`` sources that merge one
connection's readings into a quota file (SPEC §6).

Each row names the module that parses the source (its ``NAME``, the ``OWN_KEYS`` the fit
check reads, and ``parse`` for saved responses), the import command's help, which arguments
it takes and the examples its help shows. The import commands (``commands/import_cmd.py``,
``commands/help.py``), the fit check (``sources/fit.py``) and the window-scope catalog's
``[[sources]] importer`` (``scope_models.QuotaSource``) all read it.
Modules are named, never imported here: the command line lists the sources without paying
for their parsers, and the ground imports no source.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Reads = Literal["responses", "rollouts"]
"""What an import command takes: saved JSON responses (``FILE...`` and ``--at``), or Codex
CLI rollout files and the folders holding them (``PATH...``)."""


class QuotaSourceEntry(NamedTuple):
    module: str
    """The source's module: ``NAME``, ``OWN_KEYS``, and ``parse`` when it reads responses."""
    help: str
    """The import command's one line."""
    examples: tuple[str, ...]
    """The command lines its help shows (``commands/help.py``'s ``CommandHelp.examples``)."""
    reads: Reads = "responses"


QUOTA_SOURCES: dict[str, QuotaSourceEntry] = {
    "claude-usage": QuotaSourceEntry(
        "omniladder.sources.claude_usage",
        "Import Claude's OAuth usage JSON (GET /api/oauth/usage) into a quota file.",
        ("omniladder import claude-usage usage.json --connection claude-max-work \\\n"
         "  --quota quota.json",)),
    "codex-sessions": QuotaSourceEntry(
        "omniladder.sources.codex_sessions",
        "Import the rate limits logged in Codex CLI session files into a quota file.",
        ("omniladder import codex-sessions ~/.codex/sessions --connection codex-plus \\\n"
         "  --quota quota.json",), "rollouts"),
    "copilot-user": QuotaSourceEntry(
        "omniladder.sources.copilot_user",
        "Import GitHub's copilot_internal/user JSON (Copilot quotas) into a quota file.",
        ("gh api /copilot_internal/user > copilot.json",
         "omniladder import copilot-user copilot.json --connection copilot-seat \\\n"
         "  --quota quota.json")),
    "gemini-quota": QuotaSourceEntry(
        "omniladder.sources.gemini_quota",
        "Import Gemini Code Assist's retrieveUserQuota JSON into a quota file.",
        ("omniladder import gemini-quota gemini.json --connection gemini-free \\\n"
         "  --quota quota.json",)),
}
"""Every quota source, in the order ``import --help`` lists them."""
