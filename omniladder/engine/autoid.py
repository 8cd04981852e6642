"""R13 auto ids and R14 the instant a plan is made for."""

import re
from datetime import UTC, datetime
from typing import Literal, NamedTuple

from omniladder import timefmt
from omniladder.errors import UsageError
from omniladder.timefmt import OUT_OF_RANGE, from_rfc3339, in_utc_range
from omniladder.vocabulary import CATEGORIES

AutoTier = Literal["subscription", "thrifty"]
TIERS: tuple[AutoTier, ...] = ("subscription", "thrifty")
_TIER_BY_NAME: dict[str, AutoTier] = {tier: tier for tier in TIERS}
NowSource = Literal["flag", "snapshot", "clock"]

_GRAMMAR = re.compile(
    r"auto/(?:(?P<flat>subscription|thrifty)|(?P<category>[^:/]+):(?P<tier>[^:/]+))"
)


class AutoId(NamedTuple):
    """A parsed auto id (R13): ``auto/TIER`` or ``auto/CATEGORY:TIER``, with its text."""

    text: str
    tier: AutoTier
    category: str | None = None


def all_auto_ids() -> tuple[str, ...]:
    """Every valid auto id, as a gateway would advertise them (R13)."""
    flat = tuple(f"auto/{tier}" for tier in TIERS)
    return flat + tuple(f"auto/{category}:{tier}" for category in CATEGORIES for tier in TIERS)


def _did_you_mean(word: str, known: tuple[str, ...]) -> str:
    """``; did you mean 'x'?`` when a known word is close enough to be a typo of ``word``."""
    import difflib

    found = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"; did you mean {found[0]!r}?" if found else ""


def parse_auto_id(text: str) -> AutoId:
    """Parse an auto id exactly (case-sensitive), or raise a UsageError listing what is valid
    and, for a near miss, the closest valid one."""
    match = _GRAMMAR.fullmatch(text)
    if match is not None:
        if match.group("flat"):
            return AutoId(text, _TIER_BY_NAME[match.group("flat")])
        category, tier = match.group("category"), match.group("tier")
        if category not in CATEGORIES:
            raise UsageError(f"unknown category {category!r} in {text!r}; categories: "
                             f"{', '.join(CATEGORIES)}{_did_you_mean(category, CATEGORIES)}",
                             field="AUTO_ID")
        if tier not in TIERS:
            raise UsageError(f"unknown tier {tier!r} in {text!r}; tiers: {', '.join(TIERS)} "
                             f"(neither is a paid tier){_did_you_mean(tier, TIERS)}",
                             field="AUTO_ID")
        return AutoId(text, _TIER_BY_NAME[tier], category)
    raise UsageError(
        f"invalid auto id {text!r}; expected auto/subscription, auto/thrifty or "
        f"auto/<category>:<tier> with category one of {', '.join(CATEGORIES)} and tier "
        f"{' or '.join(TIERS)} (run `omniladder ids` for the full list)"
        f"{_did_you_mean(text, all_auto_ids())}", field="AUTO_ID")


def parse_instant(text: str, what: str = "--now") -> datetime:
    if not text.strip():
        # `--now "$WHEN"` with WHEN unset: an error, never the option's default instant
        raise UsageError("empty: give an RFC 3339 timestamp such as 2026-11-29T12:00:00Z, or "
                         "'now' for the current time",
                         field=what)
    try:
        return aware_instant(text, what)
    except ValueError:
        raise UsageError(f"not an RFC 3339 timestamp: {text!r} (expected e.g. "
                         "2026-11-29T12:00:00Z)", field=what) from None


def aware_instant(text: str, what: str) -> datetime:
    """The instant an option ``what`` was given as RFC 3339 text, which must say its offset
    and lie where every UTC instant can be written (R14).

    Every option that takes an instant reads it here. Text that is no timestamp at all
    raises ValueError, for the caller to word with what else its option takes (``now``,
    ``all``, a duration); no offset, or an instant out of range, is a UsageError naming the
    option.
    """
    value = from_rfc3339(text)
    if value.utcoffset() is None:  # naive: fromisoformat gives no tzinfo or a fixed one
        raise UsageError(f"timestamp {text!r} has no offset; add one, e.g. Z or +02:00",
                         field=what)
    if not in_utc_range(value):
        raise UsageError(f"{text!r}: {OUT_OF_RANGE}", field=what)
    return value


def is_clock_word(text: str) -> bool:
    """``--now now``: the current time, said explicitly."""
    return text.strip().lower() == "now"


def parse_instant_or_now(text: str, what: str, clock: datetime | None = None) -> datetime:
    """An instant option that takes ``now`` for the current time (to the second) as well as
    an RFC 3339 timestamp: ``simulate --from``/``--to``, the importers' ``--now`` and ``--at``,
    ``quota prune``'s ``--before``/``--after``."""
    if is_clock_word(text):
        return (clock or datetime.now(UTC)).replace(microsecond=0)
    return parse_instant(text, what)


def stale_snapshot_warning(now: datetime, source: NowSource, max_age_seconds: float,
                           clock: datetime | None = None) -> str | None:
    """R14's default is the snapshot's taken_at; say so when the clock is well past it.

    "Well past" is the freshness limit readings have (max_reading_age_seconds): a plan
    made that far behind the clock answers for an instant that has gone.
    """
    if source != "snapshot":
        return None
    current = clock or datetime.now(UTC)
    if (current - now).total_seconds() <= max_age_seconds:
        return None
    return (f"planning at the quota snapshot's taken_at {timefmt.iso(now)}, more than "
            f"max_reading_age_seconds ({max_age_seconds:g}s) behind the clock: this plan "
            "answers for that instant, not for now (pass --now now to plan at the current "
            "time, or import fresh readings)")


def resolve_now(flag: datetime | None, taken_at: datetime | None,
                clock: datetime | None = None) -> tuple[datetime, NowSource]:
    """R14: --now, else the quota snapshot's taken_at, else the current time."""
    if flag is not None:
        return flag, "flag"
    if taken_at is not None:
        return taken_at, "snapshot"
    return (clock or datetime.now(UTC)), "clock"
