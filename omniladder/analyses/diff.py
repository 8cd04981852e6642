"""The differences of two saved plans (``diff``, ``show``'s neighbour ``plan --compare``).

Plans are read as ``PlanDocument`` (``omniladder.inputs.plan_document``) and compared the way an
operator reads them: pool entries are identified by ``(rung, provider, model)``, exclusions
by ``(connection_id, model)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from omniladder.inputs.plan_document import (
    DocumentEntry,
    DocumentExclusion,
    DocumentInput,
    PlanDocument,
)
from omniladder.models import QUOTA_RUNGS

# --- the differences -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PlanHeader:
    label: str
    auto_id: str
    now: str
    summary: str


@dataclass(frozen=True, kw_only=True)
class EntryRef:
    """A pool entry present in only one of the plans."""

    position: int
    rung: str
    provider: str
    model: str
    allowed_connection_ids: tuple[str, ...]
    unverified_connection_ids: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class EntryMove:
    """An entry present in both whose place in the dispatch order changed."""

    rung: str
    provider: str
    model: str
    old_position: int
    new_position: int


@dataclass(frozen=True, kw_only=True)
class AllowlistChange:
    rung: str
    provider: str
    model: str
    old_position: int
    new_position: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    now_unverified: tuple[str, ...]
    """Kept in the allowlist but no longer verified."""
    now_verified: tuple[str, ...]
    """Kept in the allowlist and verified where it was not."""
    added_unverified: tuple[str, ...] = ()
    """The connections of ``added`` that the new plan admits unverified (additive field)."""


@dataclass(frozen=True, kw_only=True)
class OrderChange:
    """R15: an entry whose place within its rung, or whose allowlist's order, changed while
    its rung holds the same entries and its allowlist the same connections. The gateway
    dispatches differently, but no rung serves anything it did not."""

    rung: str
    provider: str
    model: str
    old_position: int
    new_position: int
    old_order: tuple[str, ...]
    new_order: tuple[str, ...]
    """The allowlist in each plan, in dispatch order (the same connections)."""
    moved: bool
    """The entry's place among its rung's entries changed."""


@dataclass(frozen=True, kw_only=True)
class RungChange:
    rung: str
    old_state: str
    new_state: str
    note: str
    """The new plan's note on the rung."""


@dataclass(frozen=True, kw_only=True)
class ExclusionRef:
    connection_id: str
    model: str | None
    rung: str | None
    reason: str
    detail: str


@dataclass(frozen=True, kw_only=True)
class ReasonChange:
    connection_id: str
    model: str | None
    old_reason: str
    new_reason: str
    detail: str
    """The new plan's detail."""


@dataclass(frozen=True, kw_only=True)
class BillingChange:
    connection_id: str
    old_billing: str
    new_billing: str
    old_overage: str
    new_overage: str


@dataclass(frozen=True, kw_only=True)
class InputChange:
    """An input file whose content (sha256) differs between the plans' stamps; a side that
    did not read a file of that role has None. Files are matched by role and rank within
    the role, not by path, so a plan saved from another directory still compares."""

    role: str
    old_path: str | None
    new_path: str | None
    old_sha256: str | None
    new_sha256: str | None


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """How the two plans were made, from their ``plan --out`` stamps. Never a routing
    difference: it does not count toward ``equal`` or the exit code."""

    old_version: str | None
    new_version: str | None
    versions_differ: bool | None
    """None when either plan carries no version stamp."""
    inputs_differ: bool | None
    """None when either plan carries no input stamp."""
    inputs: tuple[InputChange, ...] = ()


NO_PROVENANCE = Provenance(old_version=None, new_version=None, versions_differ=None,
                           inputs_differ=None)


def _keyed(inputs: Sequence[DocumentInput]) -> dict[tuple[str, int], DocumentInput]:
    """Inputs by role and rank within the role (catalog overlays repeat a role)."""
    seen: dict[str, int] = {}
    keyed = {}
    for item in inputs:
        rank = seen.get(item.role, 0)
        seen[item.role] = rank + 1
        keyed[(item.role, rank)] = item
    return keyed


def provenance(old: PlanDocument, new: PlanDocument) -> Provenance:
    versions_differ = (None if old.omniladder_version is None or new.omniladder_version is None
                       else old.omniladder_version != new.omniladder_version)
    if old.inputs is None or new.inputs is None:
        return Provenance(old_version=old.omniladder_version, new_version=new.omniladder_version,
                          versions_differ=versions_differ, inputs_differ=None)
    before, after = _keyed(old.inputs), _keyed(new.inputs)
    changes = []
    for key in [*before, *(k for k in after if k not in before)]:
        was, now = before.get(key), after.get(key)
        if was is not None and now is not None and was.sha256 == now.sha256:
            continue  # the same content read from another path is the same input
        changes.append(InputChange(role=key[0], old_path=was.path if was else None,
                                   new_path=now.path if now else None,
                                   old_sha256=was.sha256 if was else None,
                                   new_sha256=now.sha256 if now else None))
    return Provenance(old_version=old.omniladder_version, new_version=new.omniladder_version,
                      versions_differ=versions_differ, inputs_differ=bool(changes),
                      inputs=tuple(changes))


COUNT_LABELS: dict[str, tuple[str, str]] = {
    "pool_added": ("pool entry added", "pool entries added"),
    "pool_removed": ("pool entry removed", "pool entries removed"),
    "pool_moved": ("pool entry moved", "pool entries moved"),
    "allowlist_changed": ("allowlist changed", "allowlists changed"),
    "order_changed": ("order changed within a rung", "orders changed within rungs"),
    "rung_state_changed": ("rung state changed", "rung states changed"),
    "exclusion_added": ("new exclusion", "new exclusions"),
    "exclusion_removed": ("exclusion cleared", "exclusions cleared"),
    "reason_changed": ("reason changed", "reasons changed"),
    "billing_changed": ("billing class changed", "billing classes changed"),
}


@dataclass(frozen=True, kw_only=True)
class PlanDiff:
    old: PlanHeader
    new: PlanHeader
    pool_added: tuple[EntryRef, ...]
    pool_removed: tuple[EntryRef, ...]
    pool_moved: tuple[EntryMove, ...]
    allowlists: tuple[AllowlistChange, ...]
    rungs: tuple[RungChange, ...]
    exclusions_added: tuple[ExclusionRef, ...]
    exclusions_removed: tuple[ExclusionRef, ...]
    reasons: tuple[ReasonChange, ...]
    billing: tuple[BillingChange, ...]
    provenance: Provenance = NO_PROVENANCE
    orders: tuple[OrderChange, ...] = ()

    def counts(self) -> dict[str, int]:
        """How many differences of each kind, keyed as in COUNT_LABELS."""
        return {
            "pool_added": len(self.pool_added),
            "pool_removed": len(self.pool_removed),
            "pool_moved": len(self.pool_moved),
            "allowlist_changed": len(self.allowlists),
            "order_changed": len(self.orders),
            "rung_state_changed": len(self.rungs),
            "exclusion_added": len(self.exclusions_added),
            "exclusion_removed": len(self.exclusions_removed),
            "reason_changed": len(self.reasons),
            "billing_changed": len(self.billing),
        }

    @property
    def total(self) -> int:
        return sum(self.counts().values())

    @property
    def equal(self) -> bool:
        return self.total == 0

    @property
    def summary(self) -> str:
        if self.equal:
            return "no differences: the two plans route the same way"
        parts = [f"{n} {COUNT_LABELS[kind][n != 1]}" for kind, n in self.counts().items() if n]
        total = self.total
        return f"{total} difference{'s' if total != 1 else ''}: " + ", ".join(parts)


def _ref(entry: DocumentEntry) -> EntryRef:
    return EntryRef(position=entry.position, rung=entry.rung, provider=entry.provider,
                    model=entry.model, allowed_connection_ids=entry.allowed_connection_ids,
                    unverified_connection_ids=entry.unverified_connection_ids)


def _exclusion(x: DocumentExclusion) -> ExclusionRef:
    return ExclusionRef(connection_id=x.connection_id, model=x.model, rung=x.rung, reason=x.reason,
                        detail=x.detail)


def _stable_order(old: Sequence[tuple[tuple[str, str, str], int]],
                  new: Sequence[tuple[tuple[str, str, str], int]]) -> set[tuple[str, str, str]]:
    """The longest run of shared entries whose relative order both plans agree on (LCS).

    Among equally long runs, the one keeping the most entries at their old position wins, so
    a swap reports the two swapped entries, not a bystander.
    """
    rows, cols = len(old), len(new)
    # Equivalent mutants: one more row or column is never read (the loops stop at rows and
    # cols), and boundary cells one higher in a component shift every cell and comparison alike.
    table = [[(0, 0)] * (cols + 1) for _ in range(rows + 1)]  # pragma: no mutate (unread cells)
    for i in range(rows - 1, -1, -1):
        for j in range(cols - 1, -1, -1):
            best = max(table[i + 1][j], table[i][j + 1])
            if old[i][0] == new[j][0]:
                after = table[i + 1][j + 1]
                best = max(best, (after[0] + 1, after[1] + (old[i][1] == new[j][1])))
            table[i][j] = best
    kept: set[tuple[str, str, str]] = set()
    i = j = 0
    while i < rows and j < cols:
        if old[i][0] == new[j][0]:
            after = table[i + 1][j + 1]
            if table[i][j] == (after[0] + 1, after[1] + (old[i][1] == new[j][1])):
                kept.add(old[i][0])
                i += 1
                j += 1
                continue
        if table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return kept


def diff_plans(old: PlanDocument, new: PlanDocument, old_label: str, new_label: str) -> PlanDiff:
    """Every way ``new`` routes differently from ``old``.

    An entry has *moved* when its place relative to the other shared entries changed; a
    shift caused only by an entry added or removed above it is not a move. An allowlist
    holding the same connections in another order is an *order change* (R15), and so is a
    move within a quota rung that holds the same entries in both plans when either plan
    was made with ``expiring-first`` (under R12 alone, such a move comes from the
    connections file and stays a move).
    """
    old_pool = {e.key: e for e in old.pool}
    new_pool = {e.key: e for e in new.pool}
    added = tuple(_ref(e) for e in new.pool if e.key not in old_pool)
    removed = tuple(_ref(e) for e in old.pool if e.key not in new_pool)
    shared_old = [(e.key, e.position) for e in old.pool if e.key in new_pool]
    shared_new = [(e.key, e.position) for e in new.pool if e.key in old_pool]
    stable = _stable_order(shared_old, shared_new)
    same_rung = (_rungs_holding_the_same(old.pool, new.pool) & QUOTA_RUNGS
                 if _expiring_first(old) or _expiring_first(new) else set())
    moved: list[EntryMove] = []
    allowlists: list[AllowlistChange] = []
    orders: list[OrderChange] = []
    for entry in new.pool:
        before = old_pool.get(entry.key)
        if before is None:
            continue
        old_ids, new_ids = before.allowed_connection_ids, entry.allowed_connection_ids
        shifted = entry.key not in stable
        reordered = old_ids != new_ids and sorted(old_ids) == sorted(new_ids)
        if shifted and entry.rung not in same_rung:
            moved.append(EntryMove(rung=entry.rung, provider=entry.provider, model=entry.model,
                                   old_position=before.position, new_position=entry.position))
        elif shifted or reordered:
            orders.append(OrderChange(rung=entry.rung, provider=entry.provider,
                                      model=entry.model, old_position=before.position,
                                      new_position=entry.position, old_order=old_ids,
                                      new_order=new_ids, moved=shifted))
        kept = [cid for cid in new_ids if cid in old_ids]
        was_unverified = set(before.unverified_connection_ids)
        is_unverified = set(entry.unverified_connection_ids)
        joined = tuple(cid for cid in new_ids if cid not in old_ids)
        change = AllowlistChange(rung=entry.rung, provider=entry.provider, model=entry.model,
                                 old_position=before.position, new_position=entry.position,
                                 added=joined,
                                 removed=tuple(cid for cid in old_ids if cid not in new_ids),
                                 now_unverified=tuple(cid for cid in kept if cid in is_unverified
                                                      and cid not in was_unverified),
                                 now_verified=tuple(cid for cid in kept if cid in was_unverified
                                                    and cid not in is_unverified),
                                 added_unverified=tuple(cid for cid in joined
                                                        if cid in is_unverified))
        if change.added or change.removed or change.now_unverified or change.now_verified:
            allowlists.append(change)

    old_rungs = {r.rung: r for r in old.rungs}
    rungs = tuple(RungChange(rung=r.rung, old_state=old_rungs[r.rung].state, new_state=r.state,
                             note=r.note)
                  for r in new.rungs
                  if r.rung in old_rungs and old_rungs[r.rung].state != r.state)

    old_excluded = {x.key: x for x in old.excluded}
    new_excluded = {x.key: x for x in new.excluded}
    exclusions_added = tuple(_exclusion(x) for x in new.excluded if x.key not in old_excluded)
    exclusions_removed = tuple(_exclusion(x) for x in old.excluded if x.key not in new_excluded)
    reasons = tuple(
        ReasonChange(connection_id=x.connection_id, model=x.model,
                     old_reason=old_excluded[x.key].reason, new_reason=x.reason, detail=x.detail)
        for x in new.excluded
        if x.key in old_excluded and old_excluded[x.key].reason != x.reason)

    old_connections = {c.id: c for c in old.connections}
    billing = tuple(
        BillingChange(connection_id=c.id, old_billing=old_connections[c.id].billing,
                      new_billing=c.billing, old_overage=old_connections[c.id].overage,
                      new_overage=c.overage)
        for c in new.connections
        if c.id in old_connections and (old_connections[c.id].billing, old_connections[c.id]
                                        .overage) != (c.billing, c.overage))

    return PlanDiff(old=PlanHeader(label=old_label, auto_id=old.auto_id, now=old.now,
                                   summary=old.summary),
                    new=PlanHeader(label=new_label, auto_id=new.auto_id, now=new.now,
                                   summary=new.summary),
                    pool_added=added, pool_removed=removed, pool_moved=tuple(moved),
                    allowlists=tuple(allowlists), rungs=rungs, exclusions_added=exclusions_added,
                    exclusions_removed=exclusions_removed, reasons=reasons, billing=billing,
                    provenance=provenance(old, new), orders=tuple(orders))


def _expiring_first(plan: PlanDocument) -> bool:
    """Whether a plan was made with R15's ``expiring-first`` (its settings echo says so)."""
    return plan.settings is not None and plan.settings.within_rung_order == "expiring-first"


def _rungs_holding_the_same(old: Sequence[DocumentEntry],
                            new: Sequence[DocumentEntry]) -> set[str]:
    """The rungs whose entries are the same candidates in both plans: a move there is a
    change of order within the rung (R15), not of what the rung serves."""
    before: dict[str, set[tuple[str, str, str]]] = {}
    after: dict[str, set[tuple[str, str, str]]] = {}
    for entries, found in ((old, before), (new, after)):
        for entry in entries:
            found.setdefault(entry.rung, set()).add(entry.key)
    return {rung for rung, keys in after.items() if before.get(rung) == keys}
