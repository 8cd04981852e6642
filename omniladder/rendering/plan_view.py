"""What the human views of a plan read: made from a fresh ``Plan`` or from a saved plan.

``plan`` and ``show`` print the same views because both go through ``PlanView``; every
decision in it comes from the plan (or the saved document), none is recomputed.

Annotations are evaluated, as in the engine: the named tuples' fields then need no
``ForwardRef`` compiled at start-up (1 million instructions of the table view).
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from omniladder import timefmt

if TYPE_CHECKING:
    from omniladder.engine.records import Plan
    from omniladder.inputs.plan_document import PlanDocument


class RungLine(Protocol):
    @property
    def rung(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def candidates(self) -> int: ...
    @property
    def connections(self) -> int: ...
    @property
    def note(self) -> str: ...


class UnverifiedLine(Protocol):
    @property
    def connection_id(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def detail(self) -> str: ...


class EntryLine(Protocol):
    @property
    def position(self) -> int: ...
    @property
    def rung(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def allowed_connection_ids(self) -> tuple[str, ...]: ...
    @property
    def unverified_connection_ids(self) -> tuple[str, ...]: ...
    @property
    def unverified(self) -> Sequence[UnverifiedLine]: ...


class ExclusionLine(Protocol):
    @property
    def connection_id(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def rung(self) -> str | None: ...
    @property
    def reason(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def fix(self) -> str | None: ...


class ClampLine(NamedTuple):
    connection_id: str
    rate_limited_until: str
    clamped_to: str
    cooling: bool


class OrderLine(NamedTuple):
    """R15: one allowed connection's place in a pool entry and why."""

    position: int
    connection_id: str
    reason: str


class SavedFrom(NamedTuple):
    """Where a shown plan was read from, and the version its stamp names."""

    file: str
    omniladder_version: str | None


class PlanView(NamedTuple):
    """One plan as the table and markdown views print it. Its records are named tuples,
    like the planner's: a dataclass would be built (an ``exec``) on every table view's
    start-up."""

    auto_id: str
    now: str
    now_source: str | None
    """None for a saved plan that does not say."""
    connections: int
    candidates: int | None
    """Distinct ``provider/model`` pairs considered; a saved plan does not record it."""
    files: Mapping[str, str]
    """Input files by role, as the header lists them."""
    rungs: Sequence[RungLine]
    pool: Sequence[EntryLine]
    excluded: Sequence[ExclusionLine]
    clamps: Sequence[ClampLine]
    summary: str
    saved: SavedFrom | None = None
    warnings: Sequence[str] = ()
    """The table view leaves them to the command's stderr; markdown, a document, has them."""
    order: str = "declared"
    """R15's order within a quota rung; the views name it only when not ``declared``."""
    order_reasons: Sequence[OrderLine] = ()
    """Under ``expiring-first``, each place of the pool with its reason, in pool order."""

    def order_title(self) -> str | None:
        """What the views print under the pool's title about R15; None for ``declared``."""
        if self.order == "declared":
            return None
        return (f"order within quota rungs: {self.order} (R15): the quota that must be "
                "burnt fastest to be used before it resets goes first")

    def order_lines(self, detail: bool) -> list[OrderLine]:
        """The places to list: those of the quota rungs (a paid rung keeps R12's order);
        ``detail`` adds nothing yet."""
        return list(self.order_reasons)

    def header_counts(self) -> list[str]:
        """The header's second line, in parts: now and its source, the counts."""
        counts = [f"now {self.now}"
                  + (f" ({timefmt.now_source(self.now_source)})"
                     if self.now_source else ""),
                  f"{self.connections} connection{'' if self.connections == 1 else 's'}"]
        if self.candidates is not None:
            counts.append(f"{self.candidates} candidate{'' if self.candidates == 1 else 's'}")
        return counts

    def unverified_groups(self) -> dict[tuple[str, str, str], list[int]]:
        """Each (connection, reason, detail) of the pool's unverified marks, once, with the
        pool positions it is unverified at."""
        groups: dict[tuple[str, str, str], list[int]] = {}
        for entry in self.pool:
            for mark in entry.unverified:
                groups.setdefault((mark.connection_id, mark.reason, mark.detail), []).append(
                    entry.position)
        return groups

    def made_by(self) -> str | None:
        """``, made by omniladder X`` for a saved plan whose stamp names it."""
        made = self.saved.omniladder_version if self.saved is not None else None
        return f", made by omniladder {made}" if made else None


def view_of_plan(plan: "Plan") -> PlanView:
    return PlanView(
        auto_id=plan.auto_id.text, now=timefmt.iso(plan.now), now_source=plan.now_source,
        connections=len(plan.connections),
        candidates=len({(d.provider, d.model) for d in plan.decisions}),
        files=plan.files, rungs=plan.rungs, pool=plan.pool, excluded=plan.excluded,
        clamps=[ClampLine(c.connection_id, timefmt.iso(c.rate_limited_until),
                          timefmt.iso(c.clamped_to), c.cooling) for c in plan.clamps],
        summary=plan.summary, warnings=plan.warnings,
        order=plan.settings.get("within_rung_order", "declared"),
        order_reasons=[OrderLine(e.position, o.connection_id, o.reason)
                       for e in plan.pool for o in e.order])


_FILE_ROLES = ("settings", "connections", "quota", "spend")
"""The roles the header's ``inputs:`` line names, as a fresh plan's header does."""


def view_of_saved(saved: "PlanDocument", file: str) -> PlanView:
    files = {i.role: i.path for i in saved.inputs or () if i.role in _FILE_ROLES}
    return PlanView(
        auto_id=saved.auto_id, now=saved.now, now_source=saved.now_source,
        connections=len(saved.connections), candidates=None, files=files,
        rungs=saved.rungs, pool=saved.pool, excluded=saved.excluded,
        clamps=[ClampLine(c.connection_id, c.rate_limited_until, c.clamped_to, c.cooling)
                for c in saved.clamps],
        summary=saved.summary, saved=SavedFrom(file, saved.omniladder_version),
        warnings=saved.warnings,
        order=(saved.settings.within_rung_order if saved.settings is not None else None)
        or "declared",
        order_reasons=[OrderLine(e.position, cid, reason) for e in saved.pool
                       for cid, reason in zip(e.allowed_connection_ids, e.order_reasons,
                                              strict=False)])


def remedy_groups(shown: Sequence[ExclusionLine]
                  ) -> dict[tuple[str, str], list[ExclusionLine]]:
    """The listed exclusions by (reason, remedy): a remedy shared by several (one overlay
    entry for every connection of an uncurated provider) is given once, under all of them."""
    groups: dict[tuple[str, str], list[ExclusionLine]] = {}
    for x in shown:
        if x.fix:
            groups.setdefault((x.reason, x.fix), []).append(x)
    return groups
