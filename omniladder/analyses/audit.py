"""`omniladder audit omniroute`: hold a running gateway's candidate list against the plan.

OmniRoute lists what it would dispatch for an auto channel at
``GET /api/v1/auto-combo/{channel}/candidates`` (``open-sse/handlers/autoComboCandidates.ts``
and ``src/app/api/v1/auto-combo/[channel]/candidates/route.ts`` in OmniRoute's source): one
row per (candidate, allowlisted connection), each with the flags that say whether routing
would skip it. This module parses that document and compares the rows the gateway would
use with the ``Plan`` that ``make_plan`` returns for the same fleet. It never recomputes a
routing decision: every verdict here is read off the plan's own pair decisions.

Findings, by kind:

* ``would-bill`` — the gateway would use a (connection, model) the plan keeps out of this id
  for a billing, overage or budget reason, or uses a connection the plan puts on a paid rung
  inside one candidate with cheaper capacity (the mixed-allowlist leak of SPEC R11);
* ``would-dispatch-exhausted`` — the gateway would use a pair the plan excludes for a quota,
  cooldown or gate reason;
* ``would-dispatch-unknown`` — the gateway would use a connection or model the plan's inputs
  do not have (an unknown connection or model, a provider mismatch) under a fail-closed id
  (``auto/subscription``, ``auto/<category>:subscription``, R10) or under ``--strict``: the
  plan cannot vouch for it, so it is held to be a "no";
* ``unknown-to-plan`` — the same rows under ``auto/thrifty`` without ``--strict`` (reported,
  not a failure), and a model the plan leaves out of this id's category;
* ``missed-capacity`` — the plan admits a pair that the gateway skips or does not list.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from omniladder.engine.autoid import AutoId, NowSource, parse_auto_id
from omniladder.engine.records import ConnectionFacts, PairDecision, Plan
from omniladder.errors import InputError, UsageError
from omniladder.models import RUNGS, Rung
from omniladder.sources import fields

FindingKind = Literal["would-bill", "would-dispatch-exhausted", "would-dispatch-unknown",
                      "unknown-to-plan", "missed-capacity"]
KINDS: tuple[FindingKind, ...] = ("would-bill", "would-dispatch-exhausted",
                                  "would-dispatch-unknown", "unknown-to-plan", "missed-capacity")
"""Every kind of finding, in the order views list them."""
FAILING_KINDS: tuple[FindingKind, ...] = ("would-bill", "would-dispatch-exhausted",
                                          "would-dispatch-unknown")
"""The kinds that make the audit's answer "no" (exit 1, a failed check)."""

BILLING_REASONS: frozenset[str] = frozenset({
    "billing-not-subscription", "billing-uncurated", "keyless-not-subscription",
    "overage-not-hard-stop", "budget-disabled", "budget-spent",
})
"""Plan reasons that keep a pair out because using it would bill (or, for a keyless backend
in auto/subscription, because it is not the plan the id promises): ``would-bill``."""
EXHAUSTED_REASONS: frozenset[str] = frozenset({
    "inactive", "terminal-status", "cooldown", "quota-missing", "quota-unknown", "quota-stale",
    "quota-reset-since-reading", "quota-exhausted", "quota-below-cutoff",
    "quota-below-reentry", "quota-below-reserve", "connection-status-unknown",
})
"""Plan reasons of the R5 gates and the R6/R7 quota verdict: ``would-dispatch-exhausted``."""
UNVOUCHED_REASONS: frozenset[str] = frozenset({
    "unknown-connection", "unknown-model", "provider-mismatch"})
"""A used row the plan's inputs do not have, so the plan can say nothing about its billing or
quota: ``would-dispatch-unknown`` under a fail-closed id or ``--strict``, else
``unknown-to-plan``."""

AUDIT_REASONS: tuple[str, ...] = (
    "mixed-allowlist", "unknown-connection", "provider-mismatch", "unknown-model",
    "not-listed", "excluded", "connection-cooldown", "model-locked", "breaker-open",
    "unreachable", "free-access-exclusion",
)
"""Reason codes the audit adds to the plan's: the leak, the stale-import cases, and the
gateway's own skip flags (missed capacity)."""

PAID_RUNGS: tuple[Rung, ...] = ("cheap", "premium")


# --- the gateway's document ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GatewayRow:
    """One row of OmniRoute's candidate list, in either field naming."""

    index: int
    provider: str
    connection_id: str
    model: str
    model_ref: str | None
    """``modelStr`` (newer: ``modelReference``): the provider-prefixed model."""
    excluded: bool
    reachable: bool
    breaker_state: str | None
    connection_cooldown: bool
    model_locked: bool
    free_access_exclusion: str | None

    @property
    def skipped_by(self) -> tuple[str, ...]:
        """The gateway's own reasons to skip this row, as audit reason codes; () if used.

        OmniRoute's routing path drops candidates excluded for the calling key, cooling
        down, model-locked or behind an open breaker (``reachable`` is false for the last
        three), and, under the strict zero-cost policy, those with a
        ``freeAccessExclusion`` (the field is null whenever that policy is off).
        """
        out: list[str] = []
        if self.excluded:
            out.append("excluded")
        if self.connection_cooldown:
            out.append("connection-cooldown")
        if self.model_locked:
            out.append("model-locked")
        if self.breaker_open:
            out.append("breaker-open")
        if not self.reachable and not out:
            out.append("unreachable")
        if self.free_access_exclusion is not None:
            out.append("free-access-exclusion")
        return tuple(out)

    @property
    def breaker_open(self) -> bool:
        # OmniRoute's breaker states (src/shared/utils/circuitBreaker.ts) are CLOSED,
        # DEGRADED, OPEN and HALF_OPEN; only OPEN short-circuits every request (HALF_OPEN's
        # probe shows in ``reachable``). Its tests and its OpenAPI example differ in case.
        return (self.breaker_state or "").strip().lower() == "open"

    @property
    def used(self) -> bool:
        return not self.skipped_by

    def flags(self) -> dict[str, Any]:
        """The gateway's flags under the documented field names."""
        return {
            "row": self.index,
            "excluded": self.excluded,
            "reachable": self.reachable,
            "breakerState": self.breaker_state,
            "connectionCooldown": self.connection_cooldown,
            "modelLocked": self.model_locked,
            "freeAccessExclusion": self.free_access_exclusion,
            "used": self.used,
        }


@dataclass(frozen=True, kw_only=True)
class CandidatesDocument:
    file: str
    channel: str | None
    rows: tuple[GatewayRow, ...]


_NAMINGS: tuple[tuple[str, str, str], ...] = (
    # (the field, the documented name, the newer name)
    ("provider", "provider", "providerId"),
    ("model", "model", "modelId"),
    ("model_ref", "modelStr", "modelReference"),
)


def _either(row: dict[str, Any], older: str, newer: str, file: str, path: str) -> str | None:
    """One text field under either of its names; both present and different is an error."""
    first = fields.text(row.get(older), file, fields.join(path, older))
    second = fields.text(row.get(newer), file, fields.join(path, newer))
    if first is not None and second is not None and first != second:
        raise InputError(f"{older} {first!r} and {newer} {second!r} disagree",
                         file=file, field=fields.join(path, older))
    return first if first is not None else second


def _flag(row: dict[str, Any], key: str, default: bool, file: str, path: str) -> bool:
    found = fields.flag(row.get(key), file, fields.join(path, key))
    return default if found is None else found


def _row(value: Any, index: int, file: str) -> GatewayRow:
    path = f"candidates[{index}]"
    row = fields.obj(value, file, path)
    if row is None:
        raise fields.fail(file, path, "an object", value)
    connection_id = fields.text(row.get("connectionId"), file, f"{path}.connectionId")
    if connection_id is None:
        raise InputError("missing: every row names the connection it would use",
                         file=file, field=f"{path}.connectionId")
    found: dict[str, str | None] = {}
    for name, older, newer in _NAMINGS:
        found[name] = _either(row, older, newer, file, path)
    provider = found["provider"]
    if provider is None:
        raise InputError("missing (provider or providerId)", file=file,
                         field=f"{path}.provider")
    model = found["model"]
    model_ref = found["model_ref"]
    if model is None:
        if model_ref is None:
            raise InputError("missing (model, modelId, modelStr or modelReference)",
                             file=file, field=f"{path}.model")
        model = model_ref
    breaker = row.get("breakerState")
    if breaker is not None and not isinstance(breaker, str):
        raise fields.fail(file, f"{path}.breakerState", "a string", breaker)
    exclusion = row.get("freeAccessExclusion")
    if exclusion is not None and not isinstance(exclusion, str):
        raise fields.fail(file, f"{path}.freeAccessExclusion", "a string or null", exclusion)
    # A flag the document leaves out does not skip the row: an audit that looks for
    # billing assumes the gateway uses what it lists unless it says otherwise.
    return GatewayRow(
        index=index, provider=provider, connection_id=connection_id, model=model,
        model_ref=model_ref,
        excluded=_flag(row, "excluded", False, file, path),
        reachable=_flag(row, "reachable", True, file, path),
        breaker_state=breaker,
        connection_cooldown=_flag(row, "connectionCooldown", False, file, path),
        model_locked=_flag(row, "modelLocked", False, file, path),
        free_access_exclusion=exclusion or None)


def parse_candidates(raw: bytes, file: str) -> CandidatesDocument:
    """OmniRoute's candidate list, or one InputError naming the file and the field."""
    document = fields.top_object(fields.load_json(raw, file), file)
    channel = fields.text(document.get("channel"), file, "channel")
    if "candidates" not in document:
        raise InputError("missing: the gateway's candidate rows", file=file,
                         field="candidates")
    rows = fields.array(document["candidates"], file, "candidates")
    if rows is None:
        raise fields.fail(file, "candidates", "an array", None)
    return CandidatesDocument(file=file, channel=channel,
                              rows=tuple(_row(value, index, file)
                                         for index, value in enumerate(rows)))


def audit_auto_id(document: CandidatesDocument, given: str | None
                  ) -> tuple[AutoId, str | None]:
    """The auto id to plan: the one given, else the document's ``channel``.

    A channel that is not an omniladder auto id (OmniRoute has its own, ``auto/best-coding``)
    is fine when an id is given, an error otherwise. A given id that differs from a valid
    channel is planned as given, with a warning.
    """
    channel_id: AutoId | None = None
    problem = ""
    if document.channel is not None:
        try:
            channel_id = parse_auto_id(document.channel)
        except UsageError as exc:
            problem = exc.message
    if given is not None:
        chosen = parse_auto_id(given)
        if channel_id is not None and channel_id.text != chosen.text:
            return chosen, (f"{document.file}: channel {document.channel!r} is not "
                            f"{chosen.text}; the rows are held against the plan of "
                            f"{chosen.text}")
        return chosen, None
    if channel_id is not None:
        return channel_id, None
    if document.channel is None:
        raise InputError("missing: give AUTO_ID, or a document with its channel",
                         file=document.file, field="channel")
    raise InputError(f"{document.channel!r} is not an omniladder auto id ({problem}); "
                     "give AUTO_ID", file=document.file, field="channel")


# --- the comparison ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    kind: FindingKind
    connection_id: str
    provider: str
    model: str
    reason: str
    detail: str
    plan_rung: Rung | None
    gateway: GatewayRow | None
    """The row the finding is about; None when the gateway does not list the pair."""


@dataclass(frozen=True, kw_only=True)
class Audit:
    auto_id: AutoId
    now: datetime
    now_source: NowSource
    file: str
    channel: str | None
    rows: int
    used: int
    findings: tuple[Finding, ...]
    plan_summary: str
    warnings: tuple[str, ...]
    files: dict[str, str]
    strict: bool = False
    """``--strict``: a row the plan cannot vouch for fails under ``auto/thrifty`` too."""

    @property
    def counts(self) -> dict[str, int]:
        found = Counter(f.kind for f in self.findings)
        return {kind: found.get(kind, 0) for kind in KINDS}

    @property
    def failing(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind in FAILING_KINDS)

    @property
    def passed(self) -> bool:
        return not self.failing

    def of_kind(self, kind: FindingKind) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind == kind)

    @property
    def counts_text(self) -> str:
        counts = self.counts
        return ", ".join(f"{counts[kind]} {kind}" for kind in KINDS)

    @property
    def unjudged(self) -> tuple[Finding, ...]:
        """Used rows reported, not failed, that the plan cannot vouch for (unknown to it)."""
        return tuple(f for f in self.findings
                     if f.kind == "unknown-to-plan" and f.reason in UNVOUCHED_REASONS)

    @property
    def summary(self) -> str:
        """The verdict line. A pass says what it vouches for: rows the plan's inputs do not
        have are not "nothing the plan keeps out" but rows nobody judged."""
        rows = f"{self.used} of {self.rows} gateway row{'' if self.rows == 1 else 's'} in use"
        text = f"audit {self.auto_id.text}: {rows} — {self.counts_text}"
        if not self.passed:
            return text + "; the gateway does not do what the plan says"
        unjudged = len(self.unjudged)
        if unjudged:
            rows_text = f"{unjudged} row{'' if unjudged == 1 else 's'} in use"
            return (text + f"; the plan cannot vouch for {rows_text} (unknown to its inputs: "
                    "import the gateway again, or --strict to fail on them)")
        return text + "; the gateway dispatches nothing the plan keeps out"


def _strip(model: str, provider: str) -> str:
    prefix = f"{provider}/"
    return model[len(prefix):] if model.startswith(prefix) else model


def _spellings(row: GatewayRow) -> list[str]:
    """The model names a row may mean, most literal first: as given, without the provider
    prefix, and without a first segment that may be a provider alias."""
    out: list[str] = []
    for text in (row.model, row.model_ref):
        if text is None:
            continue
        out += [text, _strip(text, row.provider)]
        if "/" in text:
            out.append(text.split("/", 1)[1])
    return list(dict.fromkeys(out))


def _flags_text(row: GatewayRow) -> str:
    skipped = row.skipped_by
    if not skipped:
        return "in use"
    parts = []
    for code in skipped:
        if code == "breaker-open":
            parts.append(f"breakerState {row.breaker_state}")
        elif code == "free-access-exclusion":
            parts.append(f"freeAccessExclusion {row.free_access_exclusion}")
        else:
            parts.append({"excluded": "excluded", "connection-cooldown": "connectionCooldown",
                          "model-locked": "modelLocked", "unreachable": "reachable false"}[code])
    return ", ".join(parts)


def gateway_text(finding: Finding) -> str:
    """The gateway's side of a finding in words: its skip flags, or that it uses the row."""
    if finding.gateway is None:
        return "not listed"
    return _flags_text(finding.gateway)


def kind_of_reason(reason: str) -> FindingKind:
    """The finding a plan reason makes when the gateway uses the pair anyway."""
    if reason in BILLING_REASONS:
        return "would-bill"
    if reason in EXHAUSTED_REASONS:
        return "would-dispatch-exhausted"
    return "unknown-to-plan"


class _Comparison:
    def __init__(self, document: CandidatesDocument, plan: Plan, strict: bool) -> None:
        self.document = document
        self.plan = plan
        # R10 fails closed: under a subscription id, or when asked, a row the plan cannot
        # vouch for is a "no", never a pass by default.
        self.unknown_kind: FindingKind = (
            "would-dispatch-unknown" if strict or plan.auto_id.tier == "subscription"
            else "unknown-to-plan")
        self.facts: dict[str, ConnectionFacts] = {f.connection.id: f for f in plan.facts}
        self.decisions: dict[tuple[str, str], PairDecision] = {
            (d.connection_id, d.model): d for d in plan.decisions}
        self.connections_file = plan.files.get("connections", "the connections file")

    def model_of(self, row: GatewayRow, facts: ConnectionFacts) -> str | None:
        known = set(facts.models)
        return next((m for m in _spellings(row) if m in known), None)

    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        used_pairs: dict[tuple[str, str], list[tuple[GatewayRow, PairDecision]]] = {}
        seen_rows: dict[tuple[str, str, str], list[GatewayRow]] = {}
        for row in self.document.rows:
            facts = self.facts.get(row.connection_id)
            model = self.model_of(row, facts) if facts is not None else None
            if facts is not None and model is not None \
                    and facts.connection.provider == row.provider:
                seen_rows.setdefault((row.connection_id, row.provider, model), []).append(row)
            if not row.used:
                continue
            shown_model = model if model is not None else _strip(row.model, row.provider)
            if facts is None:
                out.append(Finding(kind=self.unknown_kind, connection_id=row.connection_id,
                                   provider=row.provider, model=shown_model,
                                   reason="unknown-connection",
                                   detail=(f"connection {row.connection_id!r} is not in "
                                           f"{self.connections_file}; import the gateway again"),
                                   plan_rung=None, gateway=row))
                continue
            if facts.connection.provider != row.provider:
                out.append(Finding(kind=self.unknown_kind, connection_id=row.connection_id,
                                   provider=row.provider, model=shown_model,
                                   reason="provider-mismatch",
                                   detail=f"the gateway lists it under provider {row.provider!r}, "
                    f"{self.connections_file} under {facts.connection.provider!r}; import "
                    "the gateway again",
                                   plan_rung=None, gateway=row))
                continue
            if model is None:
                out.append(Finding(kind=self.unknown_kind, connection_id=row.connection_id,
                                   provider=row.provider, model=shown_model, reason="unknown-model",
                                   detail=(f"model {row.model!r} is not among the models of "
                                           f"{row.connection_id} in the plan's inputs "
                                           f"({', '.join(facts.models) or 'none'}); import "
                                           "the gateway again or add it to the model catalog"),
                                   plan_rung=None, gateway=row))
                continue
            decision = self.decisions[(row.connection_id, model)]
            if decision.admitted:
                used_pairs.setdefault((row.provider, model), []).append((row, decision))
                continue
            reason = decision.reason or ""
            out.append(Finding(kind=kind_of_reason(reason), connection_id=row.connection_id,
                               provider=row.provider, model=model, reason=reason,
                               detail=decision.detail, plan_rung=decision.rung, gateway=row))
        out += self._mixed(used_pairs)
        out += self._missed(seen_rows)
        order = {kind: i for i, kind in enumerate(KINDS)}
        unique = list(dict.fromkeys(out))
        return sorted(unique, key=lambda f: order[f.kind])  # stable: row order within a kind

    def _mixed(self, used: dict[tuple[str, str], list[tuple[GatewayRow, PairDecision]]]
               ) -> list[Finding]:
        """R11's split, missing at the gateway: a paid connection the gateway holds in one
        candidate with connections the plan puts on a cheaper rung."""
        out: list[Finding] = []
        for (provider, model), members in used.items():
            for row, decision in members:
                if decision.rung not in PAID_RUNGS:
                    continue
                rank = RUNGS.index(decision.rung)
                cheaper = [(r, d) for r, d in members if RUNGS.index(d.rung) < rank]
                if not cheaper:
                    continue
                mates = ", ".join(dict.fromkeys(f"{d.connection_id} ({d.rung})"
                                                for _, d in cheaper))
                out.append(Finding(kind="would-bill", connection_id=row.connection_id,
                                   provider=provider, model=model, reason="mixed-allowlist",
                                   detail=(f"the plan puts it on the {decision.rung} rung, apart "
                                           f"from {mates}; the gateway keeps them in one "
                                           f"candidate {provider}/{model}, so it can pay "
                                           "before the cheaper capacity the plan orders first"),
                                   plan_rung=decision.rung, gateway=row))
        return out

    def _missed(self, seen: dict[tuple[str, str, str], list[GatewayRow]]) -> list[Finding]:
        out: list[Finding] = []
        channel = self.document.channel or self.plan.auto_id.text
        for entry in self.plan.pool:
            for cid in entry.allowed_connection_ids:
                rows = seen.get((cid, entry.provider, entry.model), [])
                if any(row.used for row in rows):
                    continue
                admitted = f"the plan admits it at #{entry.position} on the {entry.rung} rung"
                if cid in entry.unverified_connection_ids:
                    admitted += " (unverified)"
                if rows:
                    row = rows[0]
                    out.append(Finding(kind="missed-capacity", connection_id=cid,
                                       provider=entry.provider, model=entry.model,
                                       reason=row.skipped_by[0],
                                       detail=f"{admitted}; the gateway skips it",
                                       plan_rung=entry.rung, gateway=row))
                else:
                    out.append(Finding(kind="missed-capacity", connection_id=cid,
                                       provider=entry.provider, model=entry.model,
                                       reason="not-listed",
                                       detail=(f"{admitted}; the gateway's list for {channel} "
                                               "has no row for it"),
                                       plan_rung=entry.rung, gateway=None))
        return out


def audit_plan(document: CandidatesDocument, plan: Plan,
               warnings: tuple[str, ...] = (), strict: bool = False) -> Audit:
    """Hold the gateway's rows against one plan made from the same fleet.

    ``strict`` fails on used rows the plan cannot vouch for under ``auto/thrifty`` too (a
    subscription id always does, R10).
    """
    findings = _Comparison(document, plan, strict).findings()
    used = sum(1 for row in document.rows if row.used)
    return Audit(auto_id=plan.auto_id, now=plan.now, now_source=plan.now_source, file=document.file,
                 channel=document.channel, rows=len(document.rows), used=used,
                 findings=tuple(findings), plan_summary=plan.summary,
                 warnings=tuple(dict.fromkeys((*warnings, *plan.warnings))), files=dict(plan.files),
                 strict=strict)


def finding_line(finding: Finding) -> str:
    """One finding as one plain line (check evidence, JUnit text)."""
    return (f"{finding.kind} {finding.connection_id} {finding.provider}/{finding.model}: "
            f"{finding.reason} — {finding.detail} (gateway: {gateway_text(finding)})")
