"""What every command's help ends with: examples and its exit codes, from one table.

The exit-code meanings come from ``omniladder.errors.EXIT_MEANINGS`` (the README's table is
held to the same text by a test), so a command's help cannot drift from it. The CLI attaches
these epilogs when it registers the commands; importing this module costs nothing but a dict.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

from omniladder.errors import EXIT_MEANINGS, ExitCode

HELP_OPTION_NAMES = ["-h", "--help"]
"""``-h`` as well as ``--help``, on the root and every command and sub-command."""


class CommandHelp(NamedTuple):
    examples: tuple[str, ...]
    """Command lines as typed; a long one continues on the next line after `` \\``."""
    no: str | None
    """What exit 1 means for this command; None when it never answers "no"."""


COMMAND_HELP: dict[str, CommandHelp] = {
    # The quota sources' import commands: their examples are in quota_sources.QUOTA_SOURCES.
    "plan": CommandHelp(
        ("omniladder plan auto/thrifty --config examples/omniladder.toml",
         "omniladder plan auto/subscription --json --out plan.json --fail-on-empty",
         "omniladder plan auto/thrifty --compare plan.json",
         "omniladder plan auto/thrifty --format markdown >> \"$GITHUB_STEP_SUMMARY\""),
        "the pool is empty under --fail-on-empty, or the plan differs from --compare's"),
    "ids": CommandHelp(("omniladder ids", "omniladder ids --json"), None),
    "import omniroute": CommandHelp(
        ("omniladder import omniroute ~/.omniroute/omniroute.db --out fleet/",), None),
    "import litellm-spend": CommandHelp(
        ("omniladder import litellm-spend \"$DATABASE_URL\" --traffic traffic.jsonl \\\n"
         "  --config omniladder.toml --map litellm-map.toml",
         "curl -H \"Authorization: Bearer $KEY\" $PROXY/spend/logs > spend-logs.json",
         "omniladder import litellm-spend spend-logs.json --traffic traffic.jsonl"), None),
    "quota prune": CommandHelp(
        ("omniladder quota prune --connection claude-max-work \\\n"
         "  --before 2026-11-29T11:00:00Z --quota quota.json",
         "omniladder quota prune --before 2026-09-01T00:00:00Z --dry-run"), None),
    "catalog show": CommandHelp(
        ("omniladder catalog show", "omniladder catalog show --config omniladder.toml --json"),
        None),
    "catalog check": CommandHelp(
        ("omniladder catalog check --config omniladder.toml",
         "omniladder catalog check -c omniladder.toml --write-baseline accepted.toml",
         "omniladder catalog check -c omniladder.toml --baseline accepted.toml"),
        "a catalog problem was found that the --baseline does not accept"),
    "init": CommandHelp(("omniladder init", "omniladder init fleet/"), None),
    "schema": CommandHelp(
        ("omniladder schema connections > schemas/connections.schema.json",), None),
    "why": CommandHelp(
        ("omniladder why claude-max-work", "omniladder why codex-team auto/thrifty --json"),
        None),
    "who": CommandHelp(
        ("omniladder who claude/claude-opus-4-1",
         "omniladder who claude/claude-opus-4-1 auto/subscription --json",
         "omniladder who openai/gpt-5-mini --all-ids"), None),
    "simulate": CommandHelp(
        ("omniladder simulate auto/thrifty --step 15m --svg day.svg \\\n"
         "  --from 2026-11-29T00:00:00Z --to 2026-11-30T00:00:00Z",), None),
    "forecast": CommandHelp(
        ("omniladder forecast auto/thrifty --config examples/day/omniladder.toml \\\n"
         "  --now 2026-11-29T13:00:00Z",
         "omniladder forecast auto/subscription --horizon 6h --step 1m --json",
         "omniladder forecast auto/thrifty --backtest --from 2026-11-29T06:00:00Z \\\n"
         "  --to 2026-11-29T18:00:00Z --json"),
        None),
    "check": CommandHelp(
        ("omniladder check examples/policy.toml",
         "omniladder check policy.toml --junit omniladder-junit.xml",
         "omniladder check policy.toml --format markdown >> \"$GITHUB_STEP_SUMMARY\""),
        "an expectation failed"),
    "diff": CommandHelp(("omniladder diff old-plan.json new-plan.json",
                         "omniladder diff old-plan.json new-plan.json --format markdown"),
                        "the two plans route differently"),
    "show": CommandHelp(("omniladder show plan.json", "omniladder show plan.json --detail",
                         "omniladder show plan.json --format markdown"), None),
    "audit omniroute": CommandHelp(
        ("curl -s http://localhost:20128/api/v1/auto-combo/subscription/candidates \\\n"
         "  -o candidates.json",
         "omniladder audit omniroute candidates.json --config fleet/omniladder.toml",
         "omniladder audit omniroute - auto/thrifty --json < candidates.json"),
        "a row the gateway would use is would-bill or would-dispatch-exhausted"),
    "audit traffic": CommandHelp(
        ("omniladder audit traffic auto/thrifty --traffic traffic.jsonl \\\n"
         "  --config fleet/omniladder.toml",
         "omniladder audit traffic auto/subscription --from 2026-11-23T00:00:00Z \\\n"
         "  --to 2026-11-30T00:00:00Z --max-leak-usd 5 --json",
         "omniladder audit traffic auto/thrifty --format openmetrics > traffic.prom"),
        "the leak is more than --max-leak-usd, or a leak event cannot be priced"),
    "export": CommandHelp(
        ("omniladder export omniroute auto/thrifty --config fleet/omniladder.toml \\\n"
         "  --out combo.json",
         "omniladder export litellm auto/subscription --map litellm-map.toml \\\n"
         "  --out omniladder-subscription.yaml --current omniladder-subscription.yaml",
         "omniladder export litellm plan.json --map litellm-map.toml --format markdown"),
        "the export differs from the deployed configuration given by --current"),
    "whatif": CommandHelp(
        ("omniladder whatif auto/thrifty --config examples/omniladder.toml \\\n"
         "  --traffic examples/traffic.jsonl --order expiring-first",
         "omniladder whatif auto/thrifty --add claude-max-work --svg paid.svg",
         "omniladder whatif auto/thrifty --scenario scenarios.toml --json"), None),
    "completion": CommandHelp(
        ('eval "$(omniladder completion bash)"',
         "omniladder completion fish > ~/.config/fish/completions/omniladder.fish"), None),
}
"""Every command path (a group's sub-commands as ``group sub``); a test checks none lacks one."""


def exit_codes_text(no: str | None) -> str:
    """The exit-code lines of one command's help: exit 1 with what "no" means for it (the
    whole table's meaning when ``no`` is empty), or no exit-1 line when it is None."""
    lines = [f"  {int(ExitCode.ANSWERED)}  {EXIT_MEANINGS[ExitCode.ANSWERED]}"]
    if no == "":
        lines.append(f"  {int(ExitCode.NO)}  {EXIT_MEANINGS[ExitCode.NO]}")
    elif no is not None:
        answer = EXIT_MEANINGS[ExitCode.NO].split(":")[0]
        lines.append(f"  {int(ExitCode.NO)}  {answer}: {no}")
    lines.append(f"  {int(ExitCode.UNANSWERABLE)}  {EXIT_MEANINGS[ExitCode.UNANSWERABLE]}")
    return "\n".join(textwrap.fill(line, 78, subsequent_indent=" " * 5, break_on_hyphens=False)
                     for line in lines)


def command_help(path: str) -> CommandHelp:
    """The help entry of a command path: ``COMMAND_HELP``'s, or for ``import SOURCE`` of a
    quota source, its examples in ``quota_sources.QUOTA_SOURCES`` (imported only then)."""
    found = COMMAND_HELP.get(path)
    if found is not None:
        return found
    from omniladder.quota_sources import QUOTA_SOURCES

    return CommandHelp(QUOTA_SOURCES[path.removeprefix("import ")].examples, None)


def epilog(path: str) -> str:
    """The epilog of a command path: its examples, then its exit codes.

    Each block starts with click's ``\\b`` marker so its lines are kept as written.
    """
    found = command_help(path)
    examples = "\n".join(f"  {line}" for example in found.examples
                         for line in example.splitlines())
    return (f"\b\nExamples:\n{examples}\n\n"
            f"\b\nExit codes:\n{exit_codes_text(found.no)}")


ROOT_EPILOG = (
    "\b\nExamples:\n  omniladder plan auto/thrifty --config examples/omniladder.toml\n"
    "  omniladder COMMAND -h\n\n"
    f"\b\nExit codes:\n{exit_codes_text('')}")
