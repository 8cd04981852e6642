"""The one table of traffic findings (SPEC §7.3): what ``audit traffic`` calls a served
event once it is held against the plan in force at its instant.

Each row is a finding's kind, its rule (a predicate over what the plan had for the event's
pair, tried in the table's order: the first that holds is the finding), the one line the
views print for it, whether its cost counts toward the leak, and how the verdict words its
leak. The audit (``analyses/traffic.py``), its views (``rendering/traffic_view.py``: the
table, markdown, JSON, OpenMetrics, ``why --traffic`` and ``simulate --traffic``), the check
gate's evidence, ``audit traffic --help`` (``commands/traffic_cmd.py``), the committed schema
of ``audit traffic --json`` (``inputs/schemas.py``) and docs/traffic.md's table all read it;
each reads the table when it runs, never a copy taken at import. It imports only the
vocabulary, so the help names the findings without loading pydantic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from omniladder.vocabulary import PAID_RUNGS, QUOTA_RUNGS, RUNGS, Rung

BILLING_REASONS = frozenset({"keyless-not-subscription", "overage-not-hard-stop"})
BILLING_PREFIXES = ("billing-", "budget-")
"""Exclusion reasons that make a served pair ``off-plan-billed``; any other reason (quota,
cooldown, gates, category) makes it ``served-excluded``."""
_RANK: dict[str, int] = {rung: index for index, rung in enumerate(RUNGS)}


class Seen(NamedTuple):
    """What the plan in force had for a served event's pair, as the rules read it."""

    known: bool
    """Whether the connections file has the connection serving that model."""
    admitted: bool
    reason: str | None
    """The plan's reason code for leaving the pair out; None when it admitted it."""
    rung: Rung | None
    head: Rung | None
    """The head rung of the plan's pool; None when the pool was empty."""


UNKNOWN = Seen(known=False, admitted=False, reason=None, rung=None, head=None)
"""What the plan had for a pair the connections file lacks."""


class Finding(NamedTuple):
    rule: Callable[[Seen], bool]
    """Whether an event's pair gets this finding, once every finding before it in the table
    did not hold."""
    meaning: str
    """The one line the views print beside the finding."""
    leaks: bool = False
    """Whether its events' cost is the leak (§7.3); an event of an unknown pair never is."""
    off_plan: bool = True
    """Whether the views list it among the events served off plan (by connection, by
    hour)."""
    verdict: str | None = None
    """How the verdict line words a leak of it, after its dollars (``early-paid`` is worded
    from its events' rungs instead)."""


def billing_reason(reason: str | None) -> bool:
    """Whether an exclusion reason is a billing one (§7.3 rule 2)."""
    return reason is not None and (reason in BILLING_REASONS
                                   or reason.startswith(BILLING_PREFIXES))


def _early(seen: Seen) -> bool:
    return seen.rung in PAID_RUNGS and seen.head in QUOTA_RUNGS


def _above_head(seen: Seen) -> bool:
    return (seen.head is not None and seen.rung is not None
            and _RANK[seen.rung] > _RANK[seen.head])


FINDINGS: dict[str, Finding] = {
    "unknown-connection": Finding(
        lambda seen: not seen.known,
        "the connection or model is not in the connections file"),
    "off-plan-billed": Finding(
        lambda seen: not seen.admitted and billing_reason(seen.reason),
        "served by a pair the plan excluded for billing", leaks=True,
        verdict="billed on pairs the plan excluded for billing"),
    "served-excluded": Finding(
        lambda seen: not seen.admitted,
        "served by a pair the plan held out (quota, cooldown, gate, category)"),
    "early-paid": Finding(
        _early, "paid while the head rung of the plan was a quota rung", leaks=True),
    "above-head": Finding(
        _above_head, "served on a rung above the head rung, not paid"),
    "on-plan": Finding(
        lambda seen: True, "served as the plan had it", off_plan=False),
}
"""Every finding, in the order its rule is tried (§7.3); the last always holds."""


def kinds() -> tuple[str, ...]:
    """Every finding's kind, in the table's order."""
    return tuple(FINDINGS)


def leaking() -> tuple[str, ...]:
    """The findings whose cost is the leak, in the table's order."""
    return tuple(kind for kind, found in FINDINGS.items() if found.leaks)


def in_words(names: tuple[str, ...], last: str = "and") -> str:
    """Names as a sentence lists them: ``a, b and c`` (``last`` joins the last two)."""
    return f" {last} ".join(filter(None, (", ".join(names[:-1]), *names[-1:])))


def finding_of(seen: Seen) -> str:
    """The first finding whose rule holds for ``seen``."""
    return next(kind for kind, found in FINDINGS.items() if found.rule(seen))
