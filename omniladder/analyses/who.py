"""`who`: the inverse question, in the spirit of ``cargo tree -i``. For one ``provider/model``,
every connection that could serve it, its rung, and why it is in or out of each pool.

Nothing here decides anything: the answer reads the decisions, pool entries and exclusions
(with their remedies) of plans made by ``make_plan``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from omniladder.engine.records import Plan, PoolEntry, UnverifiedMark
from omniladder.errors import UsageError
from omniladder.models import Rung

RowState = Literal["in", "out", "not-serving"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WhoRow:
    """One connection that could serve the model, judged under one auto id."""

    connection_id: str
    rung: Rung | None
    """None for a connection of the provider that does not list the model."""
    state: RowState
    position: int | None
    """Its pool entry's position when it is in."""
    unverified: UnverifiedMark | None
    reason: str | None
    detail: str
    fix: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WhoForId:
    auto_id: str
    entries: tuple[PoolEntry, ...]
    """The pool entries of the model (one per rung it is served on), in dispatch order."""
    rows: tuple[WhoRow, ...]

    @property
    def served(self) -> bool:
        return bool(self.entries)


@dataclass(frozen=True, slots=True, kw_only=True)
class WhoAnswer:
    provider: str
    model: str
    now: datetime
    now_source: str
    in_model_catalog: bool
    answers: tuple[WhoForId, ...]
    warnings: tuple[str, ...]
    files: dict[str, str]

    @property
    def target(self) -> str:
        return f"{self.provider}/{self.model}"


def split_target(text: str) -> tuple[str, str]:
    """``provider/model`` split at its first slash (a model id may hold more slashes, as
    OpenRouter's do); a UsageError when either side is empty."""
    provider, slash, model = text.partition("/")
    if not slash or not provider.strip() or not model.strip():
        raise UsageError(f"{text!r} is not PROVIDER/MODEL (for example "
                         "claude/claude-sonnet-4-5)", field="PROVIDER/MODEL")
    return provider, model


def known_targets(plan: Plan, catalog: Iterable[tuple[str, str]]) -> list[str]:
    """Every ``provider/model`` the fleet serves (candidate order), then the catalog's."""
    seen: dict[str, None] = {}
    for facts in plan.facts:
        for model in facts.models:
            seen[f"{facts.connection.provider}/{model}"] = None
    for provider, model in catalog:
        seen[f"{provider}/{model}"] = None
    return list(seen)


def check_target(text: str, plan: Plan, catalog: Iterable[tuple[str, str]]
                 ) -> tuple[str, str, bool]:
    """(provider, model, in the model catalog) for a target the fleet or the model catalog
    knows; else a UsageError naming the closest known targets."""
    provider, model = split_target(text)
    catalog_keys = set(catalog)
    known = known_targets(plan, catalog_keys)
    if text in known:
        return provider, model, (provider, model) in catalog_keys
    close = difflib.get_close_matches(text, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    providers = sorted({f.connection.provider for f in plan.facts})
    listed = "" if close else f" (the fleet's providers: {', '.join(providers) or 'none'})"
    raise UsageError(f"no connection serves {text!r} and the model catalog does not list it"
                     f"{hint}{listed}", field="PROVIDER/MODEL")


def who(plans: Sequence[Plan], provider: str, model: str, in_model_catalog: bool) -> WhoAnswer:
    """The answer for ``provider/model`` under each plan (all made at the same now)."""
    if not plans:
        raise ValueError("who needs at least one plan")
    first = plans[0]
    answers = tuple(_for_id(p, provider, model) for p in plans)
    return WhoAnswer(provider=provider, model=model, now=first.now, now_source=first.now_source,
                     in_model_catalog=in_model_catalog, answers=answers, warnings=first.warnings,
                     files=dict(first.files))


def _for_id(plan: Plan, provider: str, model: str) -> WhoForId:
    entries = tuple(e for e in plan.pool if e.provider == provider and e.model == model)
    fixes: dict[tuple[str, str | None], str | None] = {
        (x.connection_id, x.model): x.fix for x in plan.excluded}
    decisions = {d.connection_id: d for d in plan.decisions
                 if d.provider == provider and d.model == model}
    rows: list[WhoRow] = []
    for facts in plan.facts:
        connection = facts.connection
        if connection.provider != provider:
            continue
        decision = decisions.get(connection.id)
        if decision is None:
            rows.append(WhoRow(connection_id=connection.id, rung=None, state="not-serving",
                               position=None, unverified=None, reason=None,
                               detail=(f"{model} is not among its models "
                                       f"({', '.join(facts.models) or 'none'})"),
                               fix=(f'add "{model}" to models of connection {connection.id!r} '
                                    "in the connections file, if the account can serve it")))
            continue
        if decision.admitted:
            entry = next(e for e in entries if e.rung == decision.rung)
            mark = next((u for u in entry.unverified if u.connection_id == connection.id),
                        None)
            rows.append(WhoRow(connection_id=connection.id, rung=decision.rung, state="in",
                               position=entry.position, unverified=mark, reason=None,
                               detail=decision.detail, fix=None))
            continue
        key = (connection.id, model)
        fix = fixes[key] if key in fixes else fixes.get((connection.id, None))
        rows.append(WhoRow(connection_id=connection.id, rung=decision.rung, state="out",
                           position=None, unverified=None, reason=decision.reason,
                           detail=decision.detail, fix=fix))
    return WhoForId(auto_id=plan.auto_id.text, entries=entries, rows=tuple(rows))
