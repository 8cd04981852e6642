"""What an operator can do about each "no": one remedy per exclusion, from the plan's data.

Pure: a remedy is computed once, where the planner builds an exclusion, from the facts that
decided it (the connection, its billing, its cooldown, its quota verdict, the budgets and the
settings). Every view prints the same string; none recomputes it.

A remedy never widens silently. One that would grant subscription status or a hard stop
(a billing overlay, removing a narrowing override) says in words what it grants and when it
is true. Reasons that are the intended answer (a keyless backend under
``auto/subscription``) say so and name the id that serves the connection instead.
"""

import functools
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import NamedTuple

from omniladder import timefmt
from omniladder.engine.autoid import AutoId
from omniladder.engine.billing import BillingInfo
from omniladder.engine.budgets import BudgetPosition, Spent, next_period_start
from omniladder.engine.quota import Cooldown, DeferredVerdict, HeldWindow, Verdict, resolved
from omniladder.engine.readings import Reset, held_to, next_reset
from omniladder.models import Connection, LadderSettings

IMPORT_HINT = "omniladder import SOURCE … --connection {cid} --quota QUOTA_FILE"
"""How a fresh reading gets in (docs/sources.md); SOURCE is the telemetry the operator has."""
PRUNE_HINT = "omniladder quota prune --connection {cid} --before {before} --quota QUOTA_FILE"
"""How readings that no longer tell the truth (an early reset, a plan upgrade) go (R6.4)."""


# Files are named by kind, not path: a remedy, like the rest of the plan, must not depend on
# where the inputs live (a saved plan compares equal after a move).
CONNECTIONS_FILE = "the connections file"
SETTINGS_FILE = "the settings file"


class RemedyContext(NamedTuple):
    """What every remedy of one plan may read besides the exclusion itself."""

    auto_id: AutoId
    now: datetime
    ladder: LadderSettings
    budgets: Mapping[str, BudgetPosition]
    categories_of: Callable[[str, str], tuple[str, ...] | None]
    """The catalog categories of ``(provider, model)``; None when the model is not listed."""


def overlay_stub(connection: Connection, *, billing: str, overage: str, reason: str,
                 today: datetime) -> str:
    """A billing-catalog overlay entry for the connection's provider and auth type, as TOML
    to paste into an overlay file (format: catalogs/connection-billing.toml, SPEC §2.5)."""
    return _stub(connection.provider, connection.auth_type, billing, overage, reason,
                 today.astimezone(UTC).date().isoformat())


@functools.lru_cache(maxsize=1024)
def _stub(provider: str, auth_type: str, billing: str, overage: str, reason: str,
          day: str) -> str:
    # Cached: a fleet has many connections of one uncurated provider, and each exclusion
    # then shares one string.
    return "\n".join([
        "[[entries]]",
        f"provider = {_toml_string(provider)}",
        f"auth_type = {_toml_string(auth_type)}",
        f"billing = {_toml_string(billing)}",
        f"overage = {_toml_string(overage)}",
        f"reason = {_toml_string(reason)}",
        'source = "your account terms (say where you checked)"',
        f"reviewed = {day}",
    ])


_TOML_ESCAPES = {ord('"'): '\\"', ord("\\"): "\\\\", 0x7F: "\\u007f",
                 **{code: f"\\u{code:04x}" for code in range(0x20)}}


def _toml_string(text: str) -> str:
    """A TOML basic string (the escapes TOML and JSON share: quote, backslash, controls)."""
    return '"' + text.translate(_TOML_ESCAPES) + '"'


_OVERLAY_USE = "put it in an overlay file passed with --catalog FILE (or [catalogs] billing)"


def remedy(reason: str, connection: Connection, billing: BillingInfo,
           cooldown: Cooldown | None, model: str | None, rung: str | None,
           verdict: Verdict | DeferredVerdict | None, ctx: RemedyContext) -> str | None:
    """The remedy for one exclusion: what to change, or when it changes by itself.

    ``model`` is None when the exclusion covers every model of the connection; a deferred
    ``verdict`` is computed only by the remedies that read it (the quota ones). Every reason
    code of SPEC §4.2 (and ``no-models``) has one; None only for a code this version does
    not know (a later release may add codes).
    """
    handler = _HANDLERS.get(reason)
    if handler is None:
        return None
    return handler(_Case(reason, connection, billing, cooldown, model, rung, verdict, ctx))


class _Case(NamedTuple):
    reason: str
    connection: Connection
    billing: BillingInfo
    cooldown: Cooldown | None
    model: str | None
    rung: str | None
    quota: Verdict | DeferredVerdict | None
    ctx: RemedyContext

    @property
    def verdict(self) -> Verdict | None:
        return resolved(self.quota)

    @property
    def cid(self) -> str:
        return self.connection.id

    @property
    def now(self) -> datetime:
        return self.ctx.now

    def thrifty_id(self) -> str:
        category = self.ctx.auto_id.category
        return f"auto/{category}:thrifty" if category else "auto/thrifty"


def _inactive(case: _Case) -> str:
    return (f"set active = true (or remove the key) on connection {case.cid!r} in "
            f"{CONNECTIONS_FILE}")


def _terminal(case: _Case) -> str:
    status = case.connection.status
    return (f"status {status!r} is terminal (R5): once the account works again, set "
            f'status = "ok" (or remove the key) on connection {case.cid!r} in '
            f"{CONNECTIONS_FILE}")


def _status_doubt(case: _Case) -> str:
    status = case.connection.status
    return (f"status {status!r} puts the connection itself in doubt, so {case.ctx.auto_id.text} "
            f"leaves it out (it fails closed; {case.thrifty_id()} admits it unverified): once "
            f'the account works, set status = "ok" (or remove the key) on connection '
            f"{case.cid!r} in {CONNECTIONS_FILE}, or import the gateway again "
            "(omniladder import omniroute) to refresh it")


def _cooldown(case: _Case) -> str:
    cool = case.cooldown
    if cool is None:  # pragma: no cover - a cooldown exclusion always has one
        return f"check rate_limited_until on connection {case.cid!r}"
    # The end of the cooldown is not a comeback: the quota may still hold the connection
    # (R6.4), and a clamp lasts only while the latest reading shows the reset it was cut to.
    text = f"the cooldown ends at {timefmt.iso(cool.end)}"
    if cool.clamped:
        text += (f" (clamped to its own quota reset, R9; a newer reading with no exhausted "
                 f"window restores the configured end {timefmt.iso(cool.until)})")
    return (text + f"; `omniladder why {case.cid}` gives the earliest comeback; if the limit "
            f"has lifted already, update or remove rate_limited_until on connection "
            f"{case.cid!r} in {CONNECTIONS_FILE}")


def _billing_not_subscription(case: _Case) -> str:
    override = case.billing.override or {}
    if override.get("billing") == "metered":
        return (f'connection {case.cid!r} sets billing = "metered" itself in '
                f"{CONNECTIONS_FILE}; removing that key restores the catalog's "
                "billing. That grants subscription status again: do it only if the account "
                "is a flat-rate plan")
    serves = f" on the {case.rung} rung" if case.rung else ""
    return (f"none by design: it is billed per token; {case.thrifty_id()} serves "
            f"it{serves}. Only if the account is in fact a flat-rate plan, a billing overlay "
            "entry for its provider and auth type with billing = \"subscription\" grants "
            "subscription status (--catalog FILE)")


def _billing_uncurated(case: _Case) -> str:
    lines = []
    if case.billing.near:
        lines.append(f"if you meant {case.billing.near}, fix the connection in "
                     f"{CONNECTIONS_FILE} instead.")
    lines.append(
        "uncurated is treated as metered. This entry GRANTS subscription status and a hard "
        "stop: add it only if the account is a flat-rate plan that refuses requests past its "
        'quota (one billed per token stays out: curate it as billing = "metered"); '
        + _OVERLAY_USE + ":")
    lines.append(overlay_stub(
        case.connection, billing="subscription", overage="hard-stop",
        reason="flat-rate plan; requests past its quota are refused, not billed",
        today=case.now))
    return "\n".join(lines)


def _keyless(case: _Case) -> str:
    return (f"none by design: a keyless backend is not a plan you pay for; "
            f"{case.thrifty_id()} serves it on the keyless rung")


def _overage(case: _Case) -> str:
    billing = case.billing
    connection = case.connection
    if billing.overage_source == "observed" and billing.observation is not None:
        return (f"the provider itself reported overage {billing.observation.overage!r} at "
                f"{timefmt.iso(billing.observation.checked_at)} (R2a: an observed "
                "meters-to-paid always narrows): switch off usage past the plan (extra usage, "
                "overage) at the provider, then import a fresh reading "
                f"({IMPORT_HINT.format(cid=case.cid)})")
    override = billing.override or {}
    if "overage" in override:
        catalog = (billing.matched.entry.overage if billing.matched is not None
                   else "unknown (uncurated)")
        return (f"connection {case.cid!r} sets overage = {override['overage']!r} itself in "
                f"{CONNECTIONS_FILE}; removing that key restores the catalog's "
                f"overage ({catalog}). Do it only if the account refuses requests past its "
                "plan: that grants the hard stop")
    if billing.overage == "meters-to-paid":
        first = ("the catalog says this provider bills past the plan. Only if your account "
                 "has that switched off (requests past the quota are refused), curate it")
    else:
        first = ("the catalog does not know whether this provider bills past the plan. If "
                 "your account refuses requests past its quota, import a reading carrying the "
                 "provider's own overage report (R2a: a fresh observed hard-stop lifts a "
                 "catalog 'unknown'), or curate it")
    return "\n".join([
        first + ". This entry GRANTS subscription status and a hard stop to every connection "
        "of this provider and auth type; " + _OVERLAY_USE + ":",
        overlay_stub(connection, billing="subscription", overage="hard-stop",
                     reason="overage switched off; requests past the quota are refused",
                     today=case.now),
    ])


def _quota_missing(case: _Case) -> str:
    verdict = case.verdict
    if verdict is not None and verdict.first_after is not None:
        return (f"every reading of {case.cid!r} lies after now: plan at "
                f"--now {timefmt.iso(verdict.first_after)} or later, or check the readings' "
                "checked_at (and the snapshot's taken_at)")
    return f"import a reading of {case.cid!r} ({IMPORT_HINT.format(cid=case.cid)})"


def _quota_unknown(case: _Case) -> str:
    verdict = case.verdict
    reading = verdict.reading if verdict is not None else None
    if reading is not None and reading.status == "unknown":
        what = "its latest reading reports status unknown"
    else:
        what = "its latest reading has no window that applies to the model"
    return f"{what}: import a fresh reading with quota windows ({IMPORT_HINT.format(cid=case.cid)})"


def _quota_stale(case: _Case) -> str:
    verdict = case.verdict
    reading = verdict.reading if verdict is not None else None
    max_age = case.ctx.ladder.max_reading_age_seconds
    when = f" of {timefmt.iso(reading.checked_at)}" if reading is not None else ""
    return (f"its reading{when} is older than max_reading_age_seconds = {max_age:g} "
            f"([ladder] in {SETTINGS_FILE}): import a fresh reading "
            f"({IMPORT_HINT.format(cid=case.cid)}; `import omniroute --confirmed-at now` adds "
            "one when the gateway was still polling and nothing changed), or raise "
            "max_reading_age_seconds")


def _quota_reset_since(case: _Case) -> str:
    return (f"a window of its reading has reset since it was taken: import a fresh reading "
            f"({IMPORT_HINT.format(cid=case.cid)})")


def _next_reset(case: _Case) -> Reset | None:
    """When the exhaustion the verdict saw can lift by itself (``readings.next_reset``)."""
    verdict = case.verdict
    if verdict is None or verdict.reading is None:
        return None
    return next_reset(verdict.reading, verdict.threshold, case.model, case.now)


def _quota_exhausted(case: _Case) -> str:
    reset = _next_reset(case)
    # R16: a connection's reserve above the exit cutoff raises both of its thresholds.
    ladder = held_to(case.ctx.ladder, case.connection.reserve_percent)
    raised = ladder is not case.ctx.ladder
    # R7: the reading that excludes the pair takes it out of play (or keeps it out), so the
    # reading after the reset is held to the re-entry floor, not to the exit cutoff.
    if ladder.reentry_floor <= ladder.exit_cutoff_percent:
        setting = "reserve_percent" if raised else "exit_cutoff_percent"
        back = (f"a reading above the exit cutoff {timefmt.pct(ladder.exit_cutoff_percent)} "
                f"({setting}) brings it back")
    else:
        verdict = case.verdict
        out_before = case.reason == "quota-below-reentry" or (
            case.reason == "quota-below-reserve" and verdict is not None
            and verdict.floor_applied)
        earlier = "it dropped out earlier" if out_before else "this reading takes it out of play"
        setting = ("reserve_percent plus the ladder's gap" if raised
                   else "reentry_min_remaining_percent")
        back = (f"a reading above the re-entry floor {timefmt.pct(ladder.reentry_floor)} "
                f"({setting}; {earlier}) brings it back")
    why = f"`omniladder why {case.cid}` gives the earliest comeback"
    if case.reason == "quota-below-reserve":
        reserve = case.connection.reserve_percent or 0.0
        why = (f"reserve_percent = {reserve:g} on connection {case.cid!r} in "
               f"{CONNECTIONS_FILE} keeps {timefmt.pct(reserve)} of each window for use "
               "outside the gateway: lower it to let the gateway spend more; " + why)
    verdict = case.verdict
    held = verdict.window if verdict is not None else None
    if isinstance(held, HeldWindow) and held.held_from is not None and verdict is not None:
        assert verdict.reading is not None
        # R6.4: the hold ends at the reset; only the operator knows of an early one.
        prune = PRUNE_HINT.format(cid=case.cid, before=timefmt.iso(verdict.reading.checked_at))
        why += (f"; if the window really reset early (a plan upgrade), `{prune}` removes the "
                "earlier readings that hold it")
    if reset is None:
        return (f"no reset instant is known: import a fresh reading "
                f"({IMPORT_HINT.format(cid=case.cid)}); {back}; {why}")
    at, what = reset
    return f"next reset {timefmt.iso(at)} ({what}); after it, {back}; {why}"


def _budget_key(rung: str | None) -> str:
    return f"[budgets] rung_budget_usd.{rung or 'RUNG'}"


def _budget_disabled(case: _Case) -> str:
    position = case.ctx.budgets.get(case.rung or "")
    period = position.period if position is not None else "period"
    return (f"{_budget_key(case.rung)} = 0 in {SETTINGS_FILE} disables the rung: a "
            f"positive budget opens it to paid traffic up to that amount each {period} "
            "(enforced only with a spend ledger)")


def _budget_spent(case: _Case) -> str:
    position = case.ctx.budgets.get(case.rung or "")
    period = position.period if position is not None else "month"
    starts = next_period_start(case.now, period)
    spent = (f"{timefmt.usd(position.spent_usd)} of {timefmt.usd(position.budget_usd)} spent; "
             if isinstance(position, Spent) else "")
    return (f"{spent}the next {period} starts at {timefmt.iso(starts)}; raising "
            f"{_budget_key(case.rung)} in {SETTINGS_FILE} allows more paid traffic "
            "now")


def _not_in_category(case: _Case) -> str:
    provider, model = case.connection.provider, case.model or "?"
    wanted = case.ctx.auto_id.category
    categories = case.ctx.categories_of(provider, model) if case.model else None
    tier = case.ctx.auto_id.tier
    overlay = (f"to put it in {wanted!r}, list the category in a model catalog overlay entry "
               f"for {provider}/{model} (--models-catalog FILE)")
    if categories is None:
        return f"{provider}/{model} is not in the model catalog; {overlay}"
    if not categories:
        return f"{provider}/{model} carries no category; {overlay}"
    ids = ", ".join(f"auto/{c}:{tier}" for c in categories)
    return f"{provider}/{model} is served by {ids}; {overlay}"


def _no_models(case: _Case) -> str:
    if case.connection.models is not None:  # an empty list: a catalog overlay cannot help
        return (f'list the models it serves (models = ["…"]) on connection {case.cid!r} in '
                f"{CONNECTIONS_FILE}, or remove its empty models list to serve the model "
                f"catalog's models of provider {case.connection.provider!r}")
    return (f'list the models it serves (models = ["…"]) on connection {case.cid!r} in '
            f"{CONNECTIONS_FILE}, or add models of provider "
            f"{case.connection.provider!r} in a model catalog overlay (--models-catalog FILE)")


_HANDLERS: dict[str, Callable[[_Case], str]] = {
    "inactive": _inactive,
    "terminal-status": _terminal,
    "cooldown": _cooldown,
    "billing-not-subscription": _billing_not_subscription,
    "billing-uncurated": _billing_uncurated,
    "keyless-not-subscription": _keyless,
    "overage-not-hard-stop": _overage,
    "quota-missing": _quota_missing,
    "quota-unknown": _quota_unknown,
    "quota-stale": _quota_stale,
    "quota-reset-since-reading": _quota_reset_since,
    "quota-exhausted": _quota_exhausted,
    "quota-below-cutoff": _quota_exhausted,
    "quota-below-reentry": _quota_exhausted,
    "quota-below-reserve": _quota_exhausted,
    "budget-disabled": _budget_disabled,
    "budget-spent": _budget_spent,
    "not-in-category": _not_in_category,
    "no-models": _no_models,
    "connection-status-unknown": _status_doubt,
}

REMEDIED_REASONS: frozenset[str] = frozenset(_HANDLERS)
"""Every reason code that has a remedy: all of them (a test holds it to REASON_CODES)."""
