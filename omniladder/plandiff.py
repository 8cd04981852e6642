"""Saved plans and their differences.

A saved plan is the §4.2 JSON document ``omniladder plan --out`` writes. It is read back with
``json`` and validated here, so a damaged or foreign file is one clear error naming the file
and the field. Two plans are compared the way an operator reads them: pool entries are
identified by ``(rung, provider, model)``, exclusions by ``(connection_id, model)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, model_validator

from omniladder.engine.plan import FORMAT_VERSION
from omniladder.errors import InputError
from omniladder.loading import (
    as_tuples,
    decode_text,
    display_path,
    parse_json,
    read_bytes,
    validate,
)
from omniladder.models import StrictModel, first_repeat

# --- the saved document --------------------------------------------------------------------


class _SavedModel(StrictModel):
    # A saved plan is this program's own output: keys added to format 1 by a later release
    # are ignored rather than refused, so an older omniladder can still compare it.
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class SavedRung(_SavedModel):
    rung: str
    state: str
    candidates: int
    connections: int
    note: str = ""


class SavedMark(_SavedModel):
    connection_id: str
    reason: str
    detail: str = ""


class SavedEntry(_SavedModel):
    position: int
    rung: str
    provider: str
    model: str
    allowed_connection_ids: tuple[str, ...]
    unverified_connection_ids: tuple[str, ...] = ()
    unverified: tuple[SavedMark, ...] = ()
    """Why each unverified connection is; absent from plans saved before it was added."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rung, self.provider, self.model)


class SavedExclusion(_SavedModel):
    connection_id: str
    provider: str
    model: str | None
    rung: str | None
    reason: str
    detail: str = ""
    fix: str | None = None
    """The remedy; absent from plans saved before it was added."""

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.connection_id, self.model)


class SavedConnection(_SavedModel):
    id: str
    provider: str
    billing: str
    overage: str


class SavedClamp(_SavedModel):
    connection_id: str
    rate_limited_until: str
    clamped_to: str
    cooling: bool


class SavedInput(_SavedModel):
    """One input file of a saved plan's stamp (``plan --out``)."""

    role: str
    path: str
    sha256: str


class SavedPlan(_SavedModel):
    format_version: str
    auto_id: str
    now: str
    rungs: tuple[SavedRung, ...]
    pool: tuple[SavedEntry, ...]
    excluded: tuple[SavedExclusion, ...]
    connections: tuple[SavedConnection, ...]
    summary: str = ""
    now_source: str | None = None
    clamps: tuple[SavedClamp, ...] = ()
    warnings: tuple[str, ...] = ()
    omniladder_version: str | None = None
    """Stamped by ``plan --out``; None in a plan printed by ``--json``."""
    inputs: tuple[SavedInput, ...] | None = None
    """Stamped by ``plan --out``; None in a plan printed by ``--json``."""

    @model_validator(mode="after")
    def _unique_keys(self) -> SavedPlan:
        # Moves are judged by list order and reported by position: a pool whose positions
        # are not its order (an edited file) would diff as "moved #1 -> #1".
        for index, entry in enumerate(self.pool):
            if entry.position != index + 1:
                raise ValueError(f"pool[{index}].position is {entry.position}, expected "
                                 f"{index + 1}: a saved plan lists its pool in dispatch "
                                 "order, from position 1")
        repeat = first_repeat(entry.key for entry in self.pool)
        if repeat is not None:
            first, again = repeat
            entry = self.pool[again]
            raise ValueError(f"pool[{again}] repeats pool[{first}]: "
                             f"{entry.rung} {entry.provider}/{entry.model}")
        repeat = first_repeat(x.key for x in self.excluded)
        if repeat is not None:
            first, again = repeat
            x = self.excluded[again]
            raise ValueError(f"excluded[{again}] repeats excluded[{first}]: "
                             f"{x.connection_id} ({x.model or 'all models'})")
        return self


_OTHER_DOCUMENTS = (
    (("policy", "expectations"), "an `omniladder check --json` document"),
    (("equal", "old", "new"), "an `omniladder diff --json` document"),
    (("connection_id", "connection"), "an `omniladder why --json` document"),
    (("from", "to", "steps"), "an `omniladder simulate --json` document"),
    (("billing_files", "model_files"), "an `omniladder catalog show --json` document"),
    (("ok", "problems"), "an `omniladder catalog check --json` document"),
)
"""Documents of this program that are not plans, known by keys only they have (no key here
is a key of a plan document)."""


def parse_saved_plan(data: Any, name: str) -> SavedPlan:
    """Validate a plan document (already parsed JSON); ``name`` is what errors call it."""
    if not isinstance(data, dict):
        raise InputError("not a saved omniladder plan: the top level must be an object",
                         file=name)
    for keys, what in _OTHER_DOCUMENTS:
        if all(key in data for key in keys):
            raise InputError(f"not a saved omniladder plan: this is {what} (write a plan "
                             "with `omniladder plan AUTO_ID --out FILE`)", file=name)
    if "format_version" not in data:
        raise InputError("not a saved omniladder plan: no format_version (write one with "
                         "`omniladder plan AUTO_ID --out FILE`)", file=name,
                         field="format_version")
    version = data["format_version"]
    if version != FORMAT_VERSION:
        raise InputError(f"plan format_version {version!r} is not supported; this omniladder "
                         f"reads format_version {FORMAT_VERSION!r} (save the plan again with "
                         "this version's `omniladder plan AUTO_ID --out FILE`)",
                         file=name, field="format_version")
    return validate(SavedPlan, as_tuples(data), name)


def load_saved_plan(path: Path) -> SavedPlan:
    """Read a saved plan with json and validate it, or raise one clear InputError."""
    return read_saved_plan(path)[0]


def read_saved_plan(path: Path) -> tuple[SavedPlan, str]:
    """A saved plan validated, and its text as read; or one clear InputError."""
    name = display_path(path)
    text = decode_text(read_bytes(path, name), name)
    data = parse_json(text, name,
                      hint="a saved plan is the JSON `omniladder plan --out` writes")
    return parse_saved_plan(data, name), text


# --- the differences -----------------------------------------------------------------------


@dataclass(frozen=True)
class PlanHeader:
    label: str
    auto_id: str
    now: str
    summary: str


@dataclass(frozen=True)
class EntryRef:
    """A pool entry present in only one of the plans."""

    position: int
    rung: str
    provider: str
    model: str
    allowed_connection_ids: tuple[str, ...]
    unverified_connection_ids: tuple[str, ...]


@dataclass(frozen=True)
class EntryMove:
    """An entry present in both whose place in the dispatch order changed."""

    rung: str
    provider: str
    model: str
    old_position: int
    new_position: int


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class RungChange:
    rung: str
    old_state: str
    new_state: str
    note: str
    """The new plan's note on the rung."""


@dataclass(frozen=True)
class ExclusionRef:
    connection_id: str
    model: str | None
    rung: str | None
    reason: str
    detail: str


@dataclass(frozen=True)
class ReasonChange:
    connection_id: str
    model: str | None
    old_reason: str
    new_reason: str
    detail: str
    """The new plan's detail."""


@dataclass(frozen=True)
class BillingChange:
    connection_id: str
    old_billing: str
    new_billing: str
    old_overage: str
    new_overage: str


@dataclass(frozen=True)
class InputChange:
    """An input file whose content (sha256) differs between the plans' stamps; a side that
    did not read a file of that role has None. Files are matched by role and rank within
    the role, not by path, so a plan saved from another directory still compares."""

    role: str
    old_path: str | None
    new_path: str | None
    old_sha256: str | None
    new_sha256: str | None


@dataclass(frozen=True)
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


NO_PROVENANCE = Provenance(None, None, None, None)


def _keyed(inputs: Sequence[SavedInput]) -> dict[tuple[str, int], SavedInput]:
    """Inputs by role and rank within the role (catalog overlays repeat a role)."""
    seen: dict[str, int] = {}
    keyed = {}
    for item in inputs:
        rank = seen.get(item.role, 0)
        seen[item.role] = rank + 1
        keyed[(item.role, rank)] = item
    return keyed


def provenance(old: SavedPlan, new: SavedPlan) -> Provenance:
    versions_differ = (None if old.omniladder_version is None or new.omniladder_version is None
                       else old.omniladder_version != new.omniladder_version)
    if old.inputs is None or new.inputs is None:
        return Provenance(old.omniladder_version, new.omniladder_version, versions_differ, None)
    before, after = _keyed(old.inputs), _keyed(new.inputs)
    changes = []
    for key in [*before, *(k for k in after if k not in before)]:
        was, now = before.get(key), after.get(key)
        if was is not None and now is not None and was.sha256 == now.sha256:
            continue  # the same content read from another path is the same input
        changes.append(InputChange(
            key[0], was.path if was else None, now.path if now else None,
            was.sha256 if was else None, now.sha256 if now else None))
    return Provenance(old.omniladder_version, new.omniladder_version, versions_differ,
                      bool(changes), tuple(changes))


COUNT_LABELS: dict[str, tuple[str, str]] = {
    "pool_added": ("pool entry added", "pool entries added"),
    "pool_removed": ("pool entry removed", "pool entries removed"),
    "pool_moved": ("pool entry moved", "pool entries moved"),
    "allowlist_changed": ("allowlist changed", "allowlists changed"),
    "rung_state_changed": ("rung state changed", "rung states changed"),
    "exclusion_added": ("new exclusion", "new exclusions"),
    "exclusion_removed": ("exclusion cleared", "exclusions cleared"),
    "reason_changed": ("reason changed", "reasons changed"),
    "billing_changed": ("billing class changed", "billing classes changed"),
}


@dataclass(frozen=True)
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

    def counts(self) -> dict[str, int]:
        """How many differences of each kind, keyed as in COUNT_LABELS."""
        return {
            "pool_added": len(self.pool_added),
            "pool_removed": len(self.pool_removed),
            "pool_moved": len(self.pool_moved),
            "allowlist_changed": len(self.allowlists),
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


def _ref(entry: SavedEntry) -> EntryRef:
    return EntryRef(entry.position, entry.rung, entry.provider, entry.model,
                    entry.allowed_connection_ids, entry.unverified_connection_ids)


def _exclusion(x: SavedExclusion) -> ExclusionRef:
    return ExclusionRef(x.connection_id, x.model, x.rung, x.reason, x.detail)


def _stable_order(old: Sequence[tuple[tuple[str, str, str], int]],
                  new: Sequence[tuple[tuple[str, str, str], int]]) -> set[tuple[str, str, str]]:
    """The longest run of shared entries whose relative order both plans agree on (LCS).

    Among equally long runs, the one keeping the most entries at their old position wins, so
    a swap reports the two swapped entries, not a bystander.
    """
    rows, cols = len(old), len(new)
    # Equivalent mutants: one more row or column is never read (the loops stop at rows and
    # cols), and boundary cells one higher in a component shift every cell and comparison alike.
    table = [[(0, 0)] * (cols + 1) for _ in range(rows + 1)]  # pragma: no mutate
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


def diff_plans(old: SavedPlan, new: SavedPlan, old_label: str, new_label: str) -> PlanDiff:
    """Every way ``new`` routes differently from ``old``.

    An entry has *moved* when its place relative to the other shared entries changed; a
    shift caused only by an entry added or removed above it is not a move.
    """
    old_pool = {e.key: e for e in old.pool}
    new_pool = {e.key: e for e in new.pool}
    added = tuple(_ref(e) for e in new.pool if e.key not in old_pool)
    removed = tuple(_ref(e) for e in old.pool if e.key not in new_pool)
    shared_old = [(e.key, e.position) for e in old.pool if e.key in new_pool]
    shared_new = [(e.key, e.position) for e in new.pool if e.key in old_pool]
    stable = _stable_order(shared_old, shared_new)
    moved: list[EntryMove] = []
    allowlists: list[AllowlistChange] = []
    for entry in new.pool:
        before = old_pool.get(entry.key)
        if before is None:
            continue
        if entry.key not in stable:
            moved.append(EntryMove(entry.rung, entry.provider, entry.model, before.position,
                                   entry.position))
        old_ids, new_ids = before.allowed_connection_ids, entry.allowed_connection_ids
        kept = [cid for cid in new_ids if cid in old_ids]
        was_unverified = set(before.unverified_connection_ids)
        is_unverified = set(entry.unverified_connection_ids)
        joined = tuple(cid for cid in new_ids if cid not in old_ids)
        change = AllowlistChange(
            entry.rung, entry.provider, entry.model, before.position, entry.position,
            joined,
            tuple(cid for cid in old_ids if cid not in new_ids),
            tuple(cid for cid in kept if cid in is_unverified and cid not in was_unverified),
            tuple(cid for cid in kept if cid in was_unverified and cid not in is_unverified),
            tuple(cid for cid in joined if cid in is_unverified))
        if change.added or change.removed or change.now_unverified or change.now_verified:
            allowlists.append(change)

    old_rungs = {r.rung: r for r in old.rungs}
    rungs = tuple(RungChange(r.rung, old_rungs[r.rung].state, r.state, r.note)
                  for r in new.rungs
                  if r.rung in old_rungs and old_rungs[r.rung].state != r.state)

    old_excluded = {x.key: x for x in old.excluded}
    new_excluded = {x.key: x for x in new.excluded}
    exclusions_added = tuple(_exclusion(x) for x in new.excluded if x.key not in old_excluded)
    exclusions_removed = tuple(_exclusion(x) for x in old.excluded if x.key not in new_excluded)
    reasons = tuple(
        ReasonChange(x.connection_id, x.model, old_excluded[x.key].reason, x.reason, x.detail)
        for x in new.excluded
        if x.key in old_excluded and old_excluded[x.key].reason != x.reason)

    old_connections = {c.id: c for c in old.connections}
    billing = tuple(
        BillingChange(c.id, old_connections[c.id].billing, c.billing,
                      old_connections[c.id].overage, c.overage)
        for c in new.connections
        if c.id in old_connections and (old_connections[c.id].billing, old_connections[c.id]
                                        .overage) != (c.billing, c.overage))

    return PlanDiff(
        PlanHeader(old_label, old.auto_id, old.now, old.summary),
        PlanHeader(new_label, new.auto_id, new.now, new.summary),
        added, removed, tuple(moved), tuple(allowlists), rungs, exclusions_added,
        exclusions_removed, reasons, billing, provenance(old, new))
