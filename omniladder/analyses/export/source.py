"""What an export reads of a plan: the auto id, the instant, and the pool in dispatch order
with each entry's allowlist and unverified marks.

A plan comes as its plan document (``inputs/plan_document.py``): the one ``plan --out`` saved,
or the one written for a plan made now from an auto id and the usual input options, validated
the way ``show`` and ``diff`` read it. A saved plan is a file anyone can edit, so what would make
a gateway bill is checked again here: an ``auto/subscription`` plan holding a rung other than
``subscription`` (R10), an entry with an empty allowlist (OmniRoute reads an empty step
allowlist as every connection of the provider), or an unverified mark for a connection the
entry does not allow. Each is an input error naming the field, and nothing is exported.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

from omniladder import timefmt
from omniladder.engine.autoid import AutoId, parse_auto_id
from omniladder.errors import InputError, UsageError
from omniladder.inputs.plan_document import PlanDocument
from omniladder.models import RUNGS, Rung

MANAGED_PREFIX = "omniladder-"
"""Every name an export writes starts with it: the names omniladder manages on a gateway."""


def managed_name(auto_id: AutoId) -> str:
    """The stable gateway name of an auto id: ``auto/thrifty`` → ``omniladder-thrifty``,
    ``auto/coding:subscription`` → ``omniladder-coding-subscription``.

    Letters, digits and ``-`` only, well inside OmniRoute's combo name rule
    (``^[a-zA-Z0-9_/.\\-\\[\\] ]+$``, at most 100 characters: ``comboNameSchema`` in
    diegosouzapw/OmniRoute ``src/shared/validation/schemas/combo.ts``) and never an
    ``auto/…`` id, which OmniRoute resolves as its own virtual combo.
    """
    if auto_id.category is None:
        return f"{MANAGED_PREFIX}{auto_id.tier}"
    return f"{MANAGED_PREFIX}{auto_id.category}-{auto_id.tier}"


class ExportMark(NamedTuple):
    """Why one connection of an entry is unverified (its quota verdict was unknown, R11)."""

    connection_id: str
    reason: str
    detail: str


class ExportEntry(NamedTuple):
    position: int
    rung: Rung
    provider: str
    model: str
    allowed: tuple[str, ...]
    """The plan's allowlist for the entry, in its order (R12), unverified connections included."""
    unverified: tuple[ExportMark, ...]



class ExportExclusion(NamedTuple):
    """One refusal of the plan, as the OmniRoute report reads it (SPEC §5's items)."""

    connection_id: str
    provider: str
    model: str | None
    rung: str | None
    reason: str


class ExportClamp(NamedTuple):
    """A cooldown R9 ended at the connection's reset: ``cooling`` when it still runs."""

    connection_id: str
    rate_limited_until: str
    cooling: bool


class ExportPlan(NamedTuple):
    auto_id: AutoId
    now: str
    """The instant the plan was made for, RFC 3339 in UTC."""
    now_source: str | None
    entries: tuple[ExportEntry, ...]
    rung_notes: dict[str, str]
    """The ladder's note of each paid rung (its budget and spend), for the report."""
    warnings: tuple[str, ...]
    plan_file: str | None
    """The saved plan read, or None for a plan made from the inputs."""
    excluded: tuple[ExportExclusion, ...] = ()
    clamps: tuple[ExportClamp, ...] = ()
    expiring_first: bool = False
    """R15: the plan orders its quota rungs by urgency, an order that moves with time."""
    order_stale_at: dict[str, str] | None = None
    """Under ``expiring-first``, per quota rung the soonest reset among its ordered
    connections (RFC 3339): the order holds at most until then."""
    reserves: dict[str, float] | None = None
    """R16: each connection's ``reserve_percent``, for those that set one, in the plan's
    order of connections (None: none does)."""

    @property
    def name(self) -> str:
        return managed_name(self.auto_id)


def from_document(saved: PlanDocument, name: str | None) -> ExportPlan:
    """The export's view of a plan document: one saved (``name`` is what errors call the
    file) or one just written for a plan made now (``name`` is None). An export reads a
    plan only through its document, so a plan exported as it is made and the same plan saved
    and exported later give the same bytes."""
    try:
        auto_id = parse_auto_id(saved.auto_id)
    except UsageError as exc:
        raise InputError(exc.message, file=name, field="auto_id") from None
    entries: list[ExportEntry] = []
    for index, entry in enumerate(saved.pool):
        if entry.rung not in RUNGS:
            raise InputError(f"unknown rung {entry.rung!r}; rungs: {', '.join(RUNGS)}",
                             file=name, field=f"pool[{index}].rung")
        rung: Rung = RUNGS[RUNGS.index(entry.rung)]
        marks = tuple(ExportMark(m.connection_id, m.reason, m.detail) for m in entry.unverified)
        given = {mark.connection_id for mark in marks}
        marks += tuple(ExportMark(cid, "quota-unknown", "")
                       for cid in entry.unverified_connection_ids if cid not in given)
        entries.append(ExportEntry(position=entry.position, rung=rung, provider=entry.provider,
                                   model=entry.model,
                                   allowed=entry.allowed_connection_ids, unverified=marks))
    notes = {r.rung: budget_part(r.note) for r in saved.rungs if r.rung in ("cheap", "premium")}
    expiring = (saved.settings is not None
                and saved.settings.within_rung_order == "expiring-first")
    stale: dict[str, str] = {}
    for entry in saved.pool:
        reset = entry.order_stale_at
        if reset is not None and (entry.rung not in stale
                                  or _instant(reset) < _instant(stale[entry.rung])):
            stale[entry.rung] = reset
    result = ExportPlan(
        auto_id=auto_id, now=saved.now, now_source=saved.now_source, entries=tuple(entries),
        rung_notes=notes, warnings=saved.warnings, plan_file=name,
        excluded=tuple(ExportExclusion(e.connection_id, e.provider, e.model, e.rung, e.reason)
              for e in saved.excluded),
        clamps=tuple(ExportClamp(c.connection_id, c.rate_limited_until, c.cooling)
              for c in saved.clamps),
        expiring_first=expiring, order_stale_at=stale if expiring else None,
        reserves={c.id: c.reserve_percent for c in saved.connections
                  if c.reserve_percent is not None} or None)
    check(result, name)
    return result


def _instant(text: str) -> datetime:
    """An RFC 3339 instant of a plan document, for ordering; an unreadable one sorts last."""
    try:
        return timefmt.from_rfc3339(text)
    except ValueError:
        return datetime.max.replace(tzinfo=UTC)


def budget_part(note: str) -> str:
    """The budget of a ladder note (``$3.20 of $5.00 spent this month``), without its
    connection counts; empty when the note names no amount."""
    return "; ".join(part for part in note.split("; ") if "$" in part)


def check(plan: ExportPlan, name: str | None) -> None:
    """Refuse a plan whose export could bill or widen an allowlist (see the module doc)."""
    last = 0
    for index, entry in enumerate(plan.entries):
        where = f"pool[{index}]"
        if plan.auto_id.tier == "subscription" and entry.rung != "subscription":
            raise InputError(
                f"{plan.auto_id.text} holds a {entry.rung} entry ({entry.provider}/"
                f"{entry.model}); auto/subscription never exports a rung but subscription "
                "(R10): plan it again", file=name, field=f"{where}.rung")
        if not entry.allowed:
            raise InputError(
                f"{entry.provider}/{entry.model} has an empty allowlist; a gateway reads an "
                "empty allowlist as every connection of the provider, so it is never "
                "exported (R10, R12)", file=name, field=f"{where}.allowed_connection_ids")
        if len(set(entry.allowed)) != len(entry.allowed):
            raise InputError(f"{entry.provider}/{entry.model} repeats a connection in its "
                             "allowlist", file=name, field=f"{where}.allowed_connection_ids")
        stray = [mark.connection_id for mark in entry.unverified
                 if mark.connection_id not in entry.allowed]
        if stray:
            raise InputError(f"unverified connection {stray[0]!r} is not in the entry's "
                             "allowlist", file=name, field=f"{where}.unverified")
        if entry.position <= last:
            raise InputError(f"positions must increase in dispatch order; {entry.position} "
                             f"follows {last}", file=name, field=f"{where}.position")
        last = entry.position
