"""`omniladder check`: a declarative policy of expectations, and its evaluation.

A policy file lists expectations, each about the plan of one auto id at one instant: pool
size bounds, the head rung, allowed and forbidden rungs, connections that must or must not
be in the pool, billing classes that must not appear, a cap on unverified connections and
the reason codes some connections must be excluded with. Every expectation is judged on the
``Plan`` that ``make_plan`` returns; nothing here recomputes a routing decision. Two checks
look ahead instead: ``no_paid_within`` and ``max_paid_hours`` are judged on the ``forecast``
of the auto id over the expectation's ``horizon`` (default 24h, 5-minute steps). Three look
back on a traffic ledger: ``max_leak_usd`` on its audit (SPEC §7), ``max_regret_usd`` and
``added_seat_pays`` on its what-if replay (SPEC §10).

The policy is validated as strictly as every other input: unknown keys, unknown connection
ids, bad reason codes, rungs and billing classes are errors, never silent passes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from omniladder import findings, timefmt
from omniladder.analyses.whatif.scenario import AS_IS
from omniladder.engine.autoid import NowSource, parse_auto_id
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.engine.records import REASON_CODES, Plan
from omniladder.errors import InputError, UsageError, close_match
from omniladder.inputs.documents import load_model
from omniladder.inputs.files import display_path
from omniladder.inputs.validation import toml_line
from omniladder.models import RUNGS, NonBlank, Rung, StrictModel, Timestamp, first_repeat

if TYPE_CHECKING:
    from omniladder.analyses.audit import CandidatesDocument
    from omniladder.analyses.forecast.pace import WindowLength
    from omniladder.analyses.forecast.walk import Forecast
    from omniladder.analyses.traffic import TrafficAudit
    from omniladder.analyses.whatif.report import Scenario, WhatifReport
    from omniladder.analyses.whatif.run import Catalog

BillingClassName = Literal["subscription", "metered", "unknown", "keyless"]

CHECK_KEYS: tuple[str, ...] = (
    "min_pool", "max_pool", "head_rung", "allowed_rungs", "forbidden_rungs", "must_include",
    "must_exclude", "forbid_billing", "max_unverified", "expect_reason", "audit",
    "no_paid_within", "max_paid_hours", "max_leak_usd", "max_regret_usd", "added_seat_pays",
)
"""Every kind of check an expectation can make, in the order they are judged and shown."""
FORECAST_KEYS: tuple[str, ...] = ("no_paid_within", "max_paid_hours")
"""The checks judged on the auto id's forecast rather than on its plan at now."""
TRAFFIC_KEYS: tuple[str, ...] = ("max_leak_usd",)
"""The checks judged on the traffic audit of a ledger (SPEC §7) rather than on a plan."""
WHATIF_KEYS: tuple[str, ...] = ("max_regret_usd", "added_seat_pays")
"""The checks judged on the what-if replay of a ledger (SPEC §10) rather than on a plan."""
LEDGER_KEYS: tuple[str, ...] = (*TRAFFIC_KEYS, *WHATIF_KEYS)
"""The checks that read a traffic ledger (``traffic``, ``traffic_span``)."""
DEFAULT_HORIZON = "24h"
FORECAST_STEP = timedelta(minutes=5)

ExpectationNowSource = Literal["policy", "flag", "snapshot", "clock"]


def _valid_auto_id(value: str) -> str:
    try:
        parse_auto_id(value)
    except UsageError as exc:
        raise ValueError(exc.message) from None
    return value


def _valid_reason(value: str) -> str:
    if value not in REASON_CODES:
        match = close_match(value, REASON_CODES)
        hint = f"; did you mean {match!r}?" if match else ""
        raise ValueError(f"unknown reason code {value!r}{hint}; reason codes: "
                         f"{', '.join(REASON_CODES)}")
    return value


def _valid_span(value: str) -> str:
    from omniladder.analyses.simulate import parse_step

    try:
        parse_step(value)
    except UsageError:
        raise ValueError(f"not a duration: {value!r} (expected e.g. 30m, 4h, 1d or "
                         "1h30m)") from None
    return value


def _valid_span_or_zero(value: str) -> str:
    """A duration that may be zero (``0s``, ``0m``): ``no_paid_within = "0s"`` asks that no
    paid rung heads the pool at now."""
    if _is_zero(value):
        return value
    try:
        return _valid_span(value)
    except ValueError:
        raise ValueError(f"not a duration: {value!r} (expected e.g. 0s, 30m, 4h, 1d or "
                         "1h30m)") from None


def _is_zero(value: str) -> bool:
    import re

    return re.fullmatch(r"(0+[smhd])+", value.strip()) is not None


def _not_empty(value: Any) -> Any:
    if value is not None and len(value) == 0:
        raise ValueError("must not be empty: an empty list checks nothing")
    return value


def _only_true(value: bool) -> bool:
    if not value:
        raise ValueError("false checks nothing; give true or drop the key")
    return value


def _needs_one(value: tuple[Any, ...]) -> tuple[Any, ...]:
    if not value:
        raise ValueError("a policy needs at least one [[expect]] table")
    return value


AutoIdText = Annotated[str, AfterValidator(_valid_auto_id)]
ReasonCode = Annotated[str, AfterValidator(_valid_reason)]
Count = Annotated[int, Field(ge=0)]
RungList = Annotated[tuple[Rung, ...], AfterValidator(_not_empty)]
IdList = Annotated[tuple[NonBlank, ...], AfterValidator(_not_empty)]
BillingList = Annotated[tuple[BillingClassName, ...], AfterValidator(_not_empty)]
ReasonTable = Annotated[dict[NonBlank, ReasonCode], AfterValidator(_not_empty)]
Span = Annotated[str, AfterValidator(_valid_span)]
SpanOrZero = Annotated[str, AfterValidator(_valid_span_or_zero)]
Hours = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Dollars = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def span(text: str) -> timedelta:
    """A validated duration text (``4h``, or ``0s`` where zero is allowed) as a
    timedelta."""
    from omniladder.analyses.simulate import parse_step

    return timedelta(0) if _is_zero(text) else parse_step(text)


class Expectation(StrictModel):
    """One ``[[expect]]`` table: what must be true of one auto id's plan at one instant."""

    name: NonBlank
    auto_id: AutoIdText
    now: Timestamp | None = None
    min_pool: Count | None = None
    max_pool: Count | None = None
    head_rung: Rung | None = None
    allowed_rungs: RungList | None = None
    forbidden_rungs: RungList | None = None
    must_include: IdList | None = None
    must_exclude: IdList | None = None
    forbid_billing: BillingList | None = None
    max_unverified: Count | None = None
    expect_reason: ReasonTable | None = None
    audit: NonBlank | None = None
    """A gateway's saved candidate list (``audit omniroute``), relative to the policy file."""
    no_paid_within: SpanOrZero | None = None
    """No paid rung heads the pool of the forecast at or before now plus this duration."""
    max_paid_hours: Hours | None = None
    """At most this many hours with a paid rung at the head of the pool over the horizon."""
    horizon: Span | None = None
    """How far the forecast of ``no_paid_within`` and ``max_paid_hours`` looks (24h)."""
    percentile: Literal["p10", "p50", "p90"] | None = None
    """Which edge of the forecast's band the forecast checks judge: p10 (the default, the
    pessimistic edge: the earliest paid instant, the most paid hours), p50 or p90."""
    max_leak_usd: Dollars | None = None
    """At most this many US dollars paid off plan or early in the traffic ledger (SPEC §7.3)."""
    max_regret_usd: Dollars | None = None
    """At most this many US dollars paid above the least any schedule could have paid, in
    the ``as-is`` replay of the traffic ledger (SPEC §10.6)."""
    added_seat_pays: Annotated[bool, AfterValidator(_only_true)] | None = None
    """Every seat the ``scenario`` file adds saves at least its price per period in the
    replay of the traffic ledger (SPEC §10.5)."""
    scenario: NonBlank | None = None
    """The scenario file (``whatif --scenario``) whose added seats ``added_seat_pays``
    judges, relative to the policy file."""
    traffic: NonBlank | None = None
    """The traffic ledger ``max_leak_usd``, ``max_regret_usd`` and ``added_seat_pays`` read,
    relative to the policy file; default: the settings' ``[inputs] traffic``."""
    traffic_span: Span | None = None
    """How far back from the expectation's instant those checks look; default: the whole
    ledger."""

    @property
    def forecast_horizon(self) -> timedelta:
        return span(self.horizon or DEFAULT_HORIZON)

    @property
    def needs_forecast(self) -> bool:
        return any(getattr(self, key) is not None for key in FORECAST_KEYS)

    @property
    def needs_whatif(self) -> bool:
        return self.max_regret_usd is not None or self.added_seat_pays is not None

    @model_validator(mode="after")
    def _coherent(self) -> Expectation:
        if all(getattr(self, key) is None for key in CHECK_KEYS):
            raise ValueError(f"expectation {self.name!r} checks nothing; give at least one "
                             f"of {', '.join(CHECK_KEYS)}")
        if (self.min_pool is not None and self.max_pool is not None
                and self.min_pool > self.max_pool):
            raise ValueError(f"min_pool ({self.min_pool}) is above max_pool ({self.max_pool})")
        both = set(self.allowed_rungs or ()) & set(self.forbidden_rungs or ())
        if both:
            raise ValueError(f"rung {_listing(both)} is both allowed and forbidden")
        if self.head_rung is not None:
            if self.head_rung in (self.forbidden_rungs or ()):
                raise ValueError(f"head_rung {self.head_rung!r} is a forbidden rung")
            if self.allowed_rungs is not None and self.head_rung not in self.allowed_rungs:
                raise ValueError(f"head_rung {self.head_rung!r} is not an allowed rung")
        if self.percentile is not None and not self.needs_forecast:
            raise ValueError(f"percentile is read only by {' and '.join(FORECAST_KEYS)}; "
                             "give one of them or drop it")
        if self.horizon is not None and not self.needs_forecast:
            raise ValueError(f"horizon is read only by {' and '.join(FORECAST_KEYS)}; give "
                             "one of them or drop it")
        for key in ("traffic", "traffic_span"):
            if getattr(self, key) is not None and all(
                    getattr(self, check) is None for check in LEDGER_KEYS):
                raise ValueError(f"{key} is read only by {_either(LEDGER_KEYS, 'and')}; give "
                                 f"one of them or drop {key}")
        if self.scenario is not None and self.added_seat_pays is None:
            raise ValueError("scenario is read only by added_seat_pays; give it or drop "
                             "scenario")
        if self.added_seat_pays is not None and self.scenario is None:
            raise ValueError("added_seat_pays judges the seats a scenario file adds: give "
                             "scenario (a whatif --scenario file that adds a seat)")
        if (self.no_paid_within is not None
                and span(self.no_paid_within) > self.forecast_horizon):
            raise ValueError(f"no_paid_within ({self.no_paid_within}) looks past the horizon "
                             f"({self.horizon or DEFAULT_HORIZON}); raise horizon")
        clash = set(self.must_include or ()) & set(self.must_exclude or ())
        if clash:
            raise ValueError(f"connection {_listing(clash)} is in both must_include and "
                             "must_exclude")
        return self


class Policy(StrictModel):
    """A policy file: an optional settings file and at least one expectation."""

    config: NonBlank | None = None
    """Settings file, relative to the policy file; ``--config`` overrides it."""
    expect: Annotated[tuple[Expectation, ...], AfterValidator(_needs_one)]

    @model_validator(mode="after")
    def _unique_names(self) -> Policy:
        repeat = first_repeat(expectation.name for expectation in self.expect)
        if repeat is not None:
            first, again = repeat
            raise ValueError(f"duplicate expectation name {self.expect[again].name!r} "
                             f"(expect[{first}] and expect[{again}])")
        return self


def _listing(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in sorted(values))


@dataclass(frozen=True, kw_only=True)
class LoadedPolicy:
    policy: Policy
    path: Path
    shown: str

    @property
    def settings_path(self) -> Path | None:
        """The policy's own settings file, resolved against the policy file's folder."""
        return None if self.policy.config is None else self.path.parent / self.policy.config


def load_policy(path: Path) -> LoadedPolicy:
    """Read and validate a policy file (TOML or JSON), or raise one clear InputError."""
    return LoadedPolicy(policy=load_model(Policy, path), path=path, shown=display_path(path))


def check_connection_ids(loaded: LoadedPolicy, known: Sequence[str],
                         connections_file: str) -> None:
    """Every connection id the policy names must be in the connections file."""
    ids = set(known)
    for index, expectation in enumerate(loaded.policy.expect):
        named: list[tuple[tuple[str | int, ...], str]] = []
        for key in ("must_include", "must_exclude"):
            values: tuple[str, ...] | None = getattr(expectation, key)
            named += [((key, at), cid) for at, cid in enumerate(values or ())]
        named += [(("expect_reason", cid), cid) for cid in (expectation.expect_reason or {})]
        for loc, cid in named:
            if cid not in ids:
                field_path = f"expect[{index}].{loc[0]}"
                field_path += f"[{loc[1]}]" if isinstance(loc[1], int) else f".{loc[1]}"
                match = close_match(cid, ids)
                hint = f"; did you mean {match!r}?" if match else ""
                raise InputError(
                    f"unknown connection id {cid!r}: it is not in {connections_file}{hint}",
                    file=loaded.shown, field=field_path,
                    line=toml_line(loaded.path, ("expect", index, str(loc[0]))))


# --- results -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """One key of an expectation, judged: what was expected, what was found, and why not."""

    check: str
    expected: str
    passed: bool
    actual: str
    evidence: tuple[str, ...] = ()
    """Why it failed, one line per offending item; empty when it passed."""


@dataclass(frozen=True, kw_only=True)
class ExpectationResult:
    index: int
    name: str
    auto_id: str
    now: datetime
    now_source: ExpectationNowSource
    checks: tuple[CheckResult, ...]
    plan_summary: str
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    @property
    def failed_checks(self) -> tuple[CheckResult, ...]:
        return tuple(check for check in self.checks if not check.passed)


@dataclass(frozen=True, kw_only=True)
class PolicyResult:
    policy_file: str
    expectations: tuple[ExpectationResult, ...]
    files: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.expectations)

    @property
    def failed(self) -> tuple[ExpectationResult, ...]:
        return tuple(result for result in self.expectations if not result.passed)

    @property
    def summary(self) -> str:
        total = len(self.expectations)
        failed = self.failed
        text = f"check: {total - len(failed)} of {total} expectations passed"
        if failed:
            text += f", {len(failed)} failed: " + ", ".join(r.name for r in failed)
        return text


# --- evaluation ----------------------------------------------------------------------------


def evaluate(loaded: LoadedPolicy, inputs: LoadedInputs, default_now: datetime,
             default_source: NowSource, lengths: WindowLength | None = None,
             windows: Catalog | None = None) -> PolicyResult:
    """Plan every expectation's auto id at its instant and judge each of its checks.

    An expectation's own ``now`` wins; otherwise the instant the command resolved (R14).
    ``lengths`` gives the forecast its window lengths (the window catalog's durations);
    without it, only readings' ``window_seconds``. ``windows`` gives the what-if replay the
    window catalog's lengths and anchors.
    """
    results: list[ExpectationResult] = []
    warnings: dict[str, None] = {}
    documents = load_audits(loaded)
    fleet = Fleet(inputs)
    for index, expectation in enumerate(loaded.policy.expect):
        started = time.perf_counter()
        auto_id = parse_auto_id(expectation.auto_id)
        document = documents.get(index)
        if document is not None:
            from omniladder.analyses.audit import audit_auto_id

            _, mismatch = audit_auto_id(document, expectation.auto_id)
            if mismatch is not None:
                warnings[f"expect[{index}].audit: {mismatch}"] = None
        source: ExpectationNowSource
        if expectation.now is not None:
            now, source = expectation.now, "policy"
            # Equivalent mutants: the plan only carries its now_source, which neither judge nor
            # the result reads (the result has its own source).
            plan = make_plan(inputs, auto_id, now, "flag", fleet)  # pragma: no mutate (unread)
        else:
            now, source = default_now, default_source
            plan = make_plan(inputs, auto_id, now, default_source, fleet)
        warnings.update(dict.fromkeys(plan.warnings))
        ahead: Forecast | None = None
        if expectation.needs_forecast:
            from omniladder.analyses.forecast.pace import no_lengths
            from omniladder.analyses.forecast.walk import forecast

            _within_calendar(loaded.shown, index, now, expectation)
            ahead = forecast(inputs, auto_id, now, expectation.forecast_horizon,
                             FORECAST_STEP, now_source="flag" if source == "policy" else source,
                             lengths=lengths or no_lengths)
        audited = (traffic_audit(loaded, index, expectation, inputs, fleet, now)
                   if expectation.max_leak_usd is not None else None)
        replayed = (_whatif_report(expectation, loaded=loaded, index=index, inputs=inputs,
                                   now=now, windows=windows)
                    if expectation.needs_whatif else None)
        results.append(ExpectationResult(
            index=index, name=expectation.name, auto_id=expectation.auto_id, now=now,
            now_source=source,
            checks=judge(expectation, plan, document, ahead, audited, replayed),
            plan_summary=plan.summary, seconds=time.perf_counter() - started))
    if not inputs.connections:
        results.insert(0, empty_fleet_result(inputs, default_now, default_source))
    return PolicyResult(policy_file=loaded.shown, expectations=tuple(results),
                        files=dict(inputs.files), warnings=tuple(warnings))


def _within_calendar(shown: str, index: int, now: datetime,
                     expectation: Expectation) -> None:
    """Raise the InputError naming the expectation's horizon when its forecast would step
    past the end of the calendar (year 9999), as ``forecast --horizon`` says it."""
    from omniladder.analyses.simulate import MAX_STEPS

    horizon = expectation.horizon or DEFAULT_HORIZON
    if timefmt.shifted(now, expectation.forecast_horizon) is None:
        raise InputError(f"the forecast horizon {horizon} from {timefmt.iso(now)} runs past "
                         "the end of the calendar (year 9999)", file=shown,
                         field=f"expect[{index}].horizon")
    steps = int(expectation.forecast_horizon / FORECAST_STEP) + 1
    if steps > MAX_STEPS:
        longest = timefmt.duration((MAX_STEPS - 1) * FORECAST_STEP.total_seconds())
        raise InputError(f"the forecast horizon {horizon} is {steps:,} steps of "
                         f"{timefmt.duration(FORECAST_STEP.total_seconds())}; at most "
                         f"{MAX_STEPS:,} ({longest}): shorten horizon", file=shown,
                         field=f"expect[{index}].horizon")


EMPTY_FLEET_NAME = "the connections file lists connections"
"""The name of the failed item a check reports for a connections file with no connection."""


def empty_fleet_result(inputs: LoadedInputs, now: datetime,
                       source: NowSource) -> ExpectationResult:
    """The item that fails every check of an empty connections file (0 bytes, a byte-order
    mark alone, ``{}``): a truncated export must never pass a gate. It is reported first, as
    an expectation of its own (index -1), so the JSON, JUnit and markdown views carry it."""
    shown = inputs.files.get("connections", "the connections file")
    check = CheckResult(
        check="connections", expected=f"at least 1 connection in {shown}", passed=False,
        actual="0 connections",
        evidence=(f"{shown} lists no connection: an empty file, a byte-order mark alone or `{{}}` "
         "plans nothing, so no expectation about it means anything; export the gateway's "
         "connections again",))
    return ExpectationResult(index=-1, name=EMPTY_FLEET_NAME, auto_id="inputs", now=now,
                             now_source=source, checks=(check,),
                             plan_summary=f"no plan: {shown} lists no connection")


def load_audits(loaded: LoadedPolicy) -> dict[int, CandidatesDocument]:
    """The gateway candidate lists the expectations name, read before any plan is made."""
    from omniladder.analyses.audit import parse_candidates
    from omniladder.inputs.files import check_input_file, read_bytes

    out: dict[int, CandidatesDocument] = {}
    for index, expectation in enumerate(loaded.policy.expect):
        if expectation.audit is None:
            continue
        path = loaded.path.parent / expectation.audit
        shown = display_path(path)
        check_input_file(path, shown)
        out[index] = parse_candidates(read_bytes(path, shown), shown)
    return out


def judge(expectation: Expectation, plan: Plan,
          document: CandidatesDocument | None = None,
          ahead: Forecast | None = None,
          traffic: TrafficAudit | None = None,
          whatif: WhatifReport | None = None) -> tuple[CheckResult, ...]:
    """Judge every check the expectation makes against one plan, in CHECK_KEYS order.

    ``document`` is the gateway candidate list its ``audit`` names, already read; ``ahead``
    the auto id's forecast over the expectation's horizon, for ``FORECAST_KEYS``;
    ``traffic`` the traffic audit of its ledger, for ``TRAFFIC_KEYS``; ``whatif`` the
    what-if replay of its ledger, for ``WHATIF_KEYS``.
    """
    out: list[CheckResult] = []
    for key in CHECK_KEYS:
        value = getattr(expectation, key)
        if value is None:
            continue
        if key == "audit":
            if document is None:
                raise ValueError(f"expectation {expectation.name!r}: audit file not read")
            out.append(_audit(document, plan))
        elif key in TRAFFIC_KEYS:
            if traffic is None:
                raise ValueError(f"expectation {expectation.name!r}: no traffic audited")
            out.append(_max_leak_usd(value, traffic))
        elif key in WHATIF_KEYS:
            if whatif is None:
                raise ValueError(f"expectation {expectation.name!r}: no what-if replay made")
            out.append(_max_regret_usd(value, whatif) if key == "max_regret_usd"
                       else _added_seat_pays(whatif))
        elif key in FORECAST_KEYS:
            if ahead is None:
                raise ValueError(f"expectation {expectation.name!r}: no forecast made")
            out.append(_FORECAST_JUDGES[key](value, ahead, expectation.percentile or "p10"))
        else:
            out.append(_JUDGES[key](value, plan))
    return tuple(out)


def _audit(document: CandidatesDocument, plan: Plan) -> CheckResult:
    """The gateway's rows against the plan: no row in use that would bill, that the plan
    finds exhausted, or (under a subscription id) that the plan cannot vouch for (the exit-1
    kinds of ``audit omniroute``)."""
    from omniladder.analyses.audit import audit_plan, finding_line

    audit = audit_plan(document, plan)
    counts = audit.counts
    actual = (f"{counts['would-bill']} would-bill, {counts['would-dispatch-exhausted']} "
              f"would-dispatch-exhausted, {counts['would-dispatch-unknown']} "
              f"would-dispatch-unknown ({audit.used} of {audit.rows} gateway rows in use)")
    return CheckResult(check="audit", expected=f"no would-bill, would-dispatch-exhausted or "
                       f"would-dispatch-unknown row in {document.file}", passed=audit.passed,
                       actual=actual,
                       evidence=tuple(finding_line(f) for f in audit.failing))


def _entry_text(position: int, plan: Plan) -> str:
    entry = plan.pool[position - 1]
    return f"#{entry.position} {entry.rung} {entry.provider}/{entry.model}"


def _entries(size: int) -> str:
    return f"{size} pool entr{'y' if size == 1 else 'ies'}"


def _pool_size(plan: Plan) -> str:
    return _entries(len(plan.pool))


def _pool_listing(plan: Plan) -> tuple[str, ...]:
    if not plan.pool:
        return (f"the pool is empty: {plan.summary}",)
    return tuple(f"{_entry_text(e.position, plan)} [{', '.join(e.allowed_connection_ids)}]"
                 for e in plan.pool)


def _min_pool(value: int, plan: Plan) -> CheckResult:
    passed = len(plan.pool) >= value
    return CheckResult(check="min_pool", expected=f"at least {_entries(value)}", passed=passed,
                       actual=_pool_size(plan),
                       evidence=() if passed else _why_small(plan))


def _why_small(plan: Plan) -> tuple[str, ...]:
    lines = [f"the pool has {_pool_size(plan)}: {plan.summary}"]
    lines += [f"{rung.rung}: {rung.state} — {rung.note}" for rung in plan.rungs
              if rung.state not in ("serving", "not-in-id")]
    return tuple(lines)


def _max_pool(value: int, plan: Plan) -> CheckResult:
    passed = len(plan.pool) <= value
    return CheckResult(check="max_pool", expected=f"at most {_entries(value)}", passed=passed,
                       actual=_pool_size(plan),
                       evidence=() if passed else _pool_listing(plan))


def _head_rung(value: Rung, plan: Plan) -> CheckResult:
    if not plan.pool:
        return CheckResult(check="head_rung", expected=f"position 1 on {value}", passed=False,
                           actual="pool empty",
                           evidence=_why_small(plan))
    head = plan.pool[0]
    passed = head.rung == value
    evidence: tuple[str, ...] = ()
    if not passed:
        evidence = (f"position 1 is {_entry_text(1, plan)} "
                    f"[{', '.join(head.allowed_connection_ids)}]",)
        evidence += tuple(f"{rung.rung}: {rung.state} — {rung.note}" for rung in plan.rungs
                          if rung.rung == value
                          or RUNGS.index(rung.rung) < RUNGS.index(head.rung))
    return CheckResult(check="head_rung", expected=f"position 1 on {value}", passed=passed,
                       actual=f"{head.rung}", evidence=evidence)


def _rungs_in_pool(plan: Plan) -> str:
    rungs = dict.fromkeys(entry.rung for entry in plan.pool)
    return ", ".join(rungs) if rungs else "pool empty"


def _allowed_rungs(value: tuple[Rung, ...], plan: Plan) -> CheckResult:
    offending = [e for e in plan.pool if e.rung not in value]
    return CheckResult(
        check="allowed_rungs", expected=f"only {', '.join(value)}", passed=not offending,
        actual=_rungs_in_pool(plan),
        evidence=tuple(f"{_entry_text(e.position, plan)} "
                       f"[{', '.join(e.allowed_connection_ids)}] is on "
                       f"rung {e.rung}" for e in offending))


def _forbidden_rungs(value: tuple[Rung, ...], plan: Plan) -> CheckResult:
    offending = [e for e in plan.pool if e.rung in value]
    return CheckResult(
        check="forbidden_rungs", expected=f"none on {', '.join(value)}", passed=not offending,
        actual=_rungs_in_pool(plan),
        evidence=tuple(f"{_entry_text(e.position, plan)} "
                       f"[{', '.join(e.allowed_connection_ids)}] is on "
                       f"forbidden rung {e.rung}" for e in offending))


def _positions_of(cid: str, plan: Plan) -> list[str]:
    return [_entry_text(e.position, plan) for e in plan.pool if cid in e.allowed_connection_ids]


def _exclusions_of(cid: str, plan: Plan) -> list[str]:
    return [f"{x.reason}{f' ({x.model})' if x.model else ''}: {x.detail}"
            for x in plan.excluded if x.connection_id == cid]


def _must_include(value: tuple[str, ...], plan: Plan) -> CheckResult:
    eligible = set(plan.eligible_connection_ids)
    missing = [cid for cid in value if cid not in eligible]
    evidence: list[str] = []
    for cid in missing:
        # a connection outside the pool always has an exclusion (a refused pair or no models)
        evidence += [f"{cid} is not in the pool: {reason}" for reason in _exclusions_of(cid, plan)]
    return CheckResult(check="must_include", expected=", ".join(value), passed=not missing,
                       actual=f"{len(value) - len(missing)} of {len(value)} in the pool",
                       evidence=tuple(evidence))


def _must_exclude(value: tuple[str, ...], plan: Plan) -> CheckResult:
    eligible = set(plan.eligible_connection_ids)
    present = [cid for cid in value if cid in eligible]
    return CheckResult(
        check="must_exclude", expected=f"none of {', '.join(value)}", passed=not present,
        actual=f"{len(present)} of {len(value)} in the pool",
        evidence=tuple(f"{cid} is in the pool at {', '.join(_positions_of(cid, plan))}"
              for cid in present))


def _forbid_billing(value: tuple[str, ...], plan: Plan) -> CheckResult:
    eligible = set(plan.eligible_connection_ids)
    offending = [c for c in plan.connections if c.id in eligible and c.billing in value]
    evidence = []
    for record in offending:
        source = record.billing_source
        if record.catalog_file:
            source += f" {record.catalog_file}"
        evidence.append(f"{record.id} bills as {record.billing} ({source}) and is in the pool "
                        f"at {', '.join(_positions_of(record.id, plan))}")
    billing = dict.fromkeys(c.billing for c in plan.connections if c.id in eligible)
    return CheckResult(check="forbid_billing",
                       expected=f"no {_either(value)} connection in the pool",
                       passed=not offending,
                       actual="pool billing: " + (", ".join(billing) if billing else "pool empty"),
                       evidence=tuple(evidence))


def _either(values: Sequence[str], word: str = "or") -> str:
    if len(values) == 1:
        return values[0]
    return ", ".join(values[:-1]) + f" {word} " + values[-1]


def _max_unverified(value: int, plan: Plan) -> CheckResult:
    unverified = plan.unverified_connection_ids
    passed = len(unverified) <= value
    evidence: list[str] = []
    if not passed:
        for cid in unverified:
            why = dict.fromkeys(f"{mark.reason}: {mark.detail}" for entry in plan.pool
                                for mark in entry.unverified if mark.connection_id == cid)
            evidence.append(f"{cid} is admitted unverified: {'; '.join(why)}")
    return CheckResult(check="max_unverified", expected=f"at most {value} unverified",
                       passed=passed,
                       actual=f"{len(unverified)} unverified", evidence=tuple(evidence))


def _expect_reason(value: dict[str, str], plan: Plan) -> CheckResult:
    evidence: list[str] = []
    matched = 0
    for cid, reason in value.items():
        mine = [x for x in plan.excluded if x.connection_id == cid]
        if any(x.reason == reason for x in mine):
            matched += 1
            continue
        if mine:
            found = "; ".join(_exclusions_of(cid, plan))
            evidence.append(f"{cid}: expected {reason}, excluded with {found}")
        else:
            where = ", ".join(_positions_of(cid, plan))
            # the ids exist (check_connection_ids) and one not excluded is in the pool
            evidence.append(f"{cid}: expected {reason}, but it is not excluded "
                            f"(in the pool at {where})")
    expected = ", ".join(f"{cid} {reason}" for cid, reason in value.items())
    return CheckResult(check="expect_reason", expected=expected, passed=not evidence,
                       actual=f"{matched} of {len(value)} excluded as expected",
                       evidence=tuple(evidence))


_JUDGES: dict[str, Callable[[Any, Plan], CheckResult]] = {
    "min_pool": _min_pool,
    "max_pool": _max_pool,
    "head_rung": _head_rung,
    "allowed_rungs": _allowed_rungs,
    "forbidden_rungs": _forbidden_rungs,
    "must_include": _must_include,
    "must_exclude": _must_exclude,
    "forbid_billing": _forbid_billing,
    "max_unverified": _max_unverified,
    "expect_reason": _expect_reason,
}


# --- forecast checks ------------------------------------------------------------------------


def _paid_escalations(ahead: Forecast, until: datetime) -> tuple[str, ...]:
    """One line per escalation to a paid rung at or before ``until``: when, why, how long."""
    from omniladder.analyses.forecast.walk import wait_text
    from omniladder.models import PAID_RUNGS

    now = ahead.now
    return tuple(
        f"{timefmt.short(e.at, now)} {e.previous or 'empty'} -> {e.head}: {e.cause}; "
        f"{wait_text(e, now)}"
        for e in ahead.escalations if e.head in PAID_RUNGS and e.at <= until)


def _over(ahead: Forecast) -> str:
    return (f"the forecast from {timefmt.iso(ahead.now)} over "
            f"{timefmt.duration(ahead.horizon.total_seconds())}")


def _unknown(key: str, expected: str, ahead: Forecast) -> CheckResult:
    """A gate on an unknown answer fails, saying which windows make it unknown."""
    return CheckResult(check=key, expected=expected, passed=False, actual="unknown", evidence=(
        f"{_over(ahead)} cannot answer: {len(ahead.unprojected)} window"
        f"{'' if len(ahead.unprojected) == 1 else 's'} cannot be projected, so the answer is "
        "unknown from now (docs/forecast.md#unknown)",
        *(f"{u.connection_id}{'' if u.window is None else ' ' + u.window}: {u.reason}"
          for u in ahead.unprojected)))


def _no_paid_within(value: str, ahead: Forecast, percentile: str = "p10") -> CheckResult:
    limit = ahead.now + span(value)
    expected = f"no paid rung heads the pool within {value}"
    if not ahead.answers_known:
        return _unknown("no_paid_within", expected, ahead)
    band = ahead.first_paid_band
    first = ahead.first_paid_at if band is None else getattr(band, percentile)
    if first is None:
        return CheckResult(check="no_paid_within", expected=expected, passed=True,
                           actual=f"no paid rung heads the pool at {percentile} in {_over(ahead)}")
    after = timefmt.duration((first - ahead.now).total_seconds())
    actual = f"first paid at {percentile} {timefmt.short(first, ahead.now)} ({after} after now)"
    if first > limit:
        return CheckResult(check="no_paid_within", expected=expected, passed=True, actual=actual)
    evidence = (f"a paid rung heads the pool at {timefmt.iso(first)} at {percentile} of the "
                f"band, {after} after now, within {value} ({_over(ahead)})",
                *_paid_escalations(ahead, max(limit, ahead.end)))
    return CheckResult(check="no_paid_within", expected=expected, passed=False, actual=actual,
                       evidence=evidence)


def _max_paid_hours(value: float, ahead: Forecast, percentile: str = "p10") -> CheckResult:
    from omniladder.analyses.forecast.walk import hours_text
    from omniladder.models import PAID_RUNGS

    # Whole seconds from the steps, so that a bound equal to the paid time passes (the
    # forecast's float hours add up 5-minute twelfths with rounding errors).
    seconds = dict.fromkeys(PAID_RUNGS, 0.0)
    for here, after in pairwise(ahead.timeline):
        if here.head in seconds:
            seconds[here.head] += (after.at - here.at).total_seconds()
    hours = {rung: paid / 3600.0 for rung, paid in seconds.items()}
    total = sum(hours.values())
    expected = (f"at most {value:g}h with a paid rung at the head over "
                f"{timefmt.duration(ahead.horizon.total_seconds())}")
    if not ahead.answers_known:
        return _unknown("max_paid_hours", expected, ahead)
    band = ahead.paid_hours_band
    at_edge = total if band is None or percentile == "p50" else band[
        ("p10", "p50", "p90").index(percentile)]
    actual = f"{hours_text(at_edge)} paid at {percentile}"
    if percentile == "p50" or band is None:
        within = sum(seconds.values()) <= value * 3600.0 + 1e-6
    else:
        within = at_edge <= value + 1e-9
    if within:
        return CheckResult(check="max_paid_hours", expected=expected, passed=True, actual=actual)
    evidence = (f"{_over(ahead)} has a paid rung at the head for {hours_text(at_edge)} at "
                f"{percentile} of the band; at p50 {hours_text(total)} ("
                + ", ".join(f"{rung} {hours_text(h)}" for rung, h in hours.items() if h)
                + ")",
                *_paid_escalations(ahead, ahead.end))
    return CheckResult(check="max_paid_hours", expected=expected, passed=False, actual=actual,
                       evidence=evidence)


_FORECAST_JUDGES: dict[str, Callable[[Any, Forecast, str], CheckResult]] = {
    "no_paid_within": _no_paid_within,
    "max_paid_hours": _max_paid_hours,
}


# --- traffic checks -------------------------------------------------------------------------


def ledger_path(loaded: LoadedPolicy, index: int, expectation: Expectation,
                inputs: LoadedInputs, check: str) -> Path:
    """The traffic ledger ``check`` reads: the expectation's ``traffic``, else the
    settings' ``[inputs] traffic``; one InputError when there is neither."""
    if expectation.traffic is not None:
        return loaded.path.parent / expectation.traffic
    named = inputs.settings.inputs.traffic
    settings = next((p for role, _, p in inputs.read if role == "settings"), None)
    if named is None:
        raise InputError(f"{check} needs a traffic ledger: give traffic, or [inputs] traffic "
                         "in the settings file", file=loaded.shown,
                         field=f"expect[{index}].traffic")
    return (settings.parent if settings is not None else Path(".")) / named


def ledger_start(loaded: LoadedPolicy, index: int, expectation: Expectation,
                 now: datetime) -> datetime | None:
    """Where the ledger's span starts: ``traffic_span`` back from now (the span then ends
    at now); None for the whole ledger."""
    if expectation.traffic_span is None:
        return None
    start = timefmt.shifted(now, -span(expectation.traffic_span))
    if start is None:
        raise InputError(f"traffic_span {expectation.traffic_span} before "
                         f"{timefmt.iso(now)} runs past the start of the calendar",
                         file=loaded.shown, field=f"expect[{index}].traffic_span")
    return start


def traffic_audit(loaded: LoadedPolicy, index: int, expectation: Expectation,
                  inputs: LoadedInputs, fleet: Fleet, now: datetime) -> TrafficAudit:
    """The traffic audit ``max_leak_usd`` judges: the expectation's ledger (else the
    settings' ``[inputs] traffic``) over ``traffic_span`` up to now (else the whole
    ledger)."""
    from omniladder.analyses.traffic import audit_traffic
    from omniladder.inputs.ledger.read import Ledger

    path = ledger_path(loaded, index, expectation, inputs, "max_leak_usd")
    start = ledger_start(loaded, index, expectation, now)
    return audit_traffic(inputs, parse_auto_id(expectation.auto_id), Ledger(path),
                         start=start, end=now if start is not None else None,
                         max_leak_usd=expectation.max_leak_usd or 0.0, fleet=fleet)


def _max_leak_usd(value: float, audited: TrafficAudit) -> CheckResult:
    over = ("an empty ledger" if audited.start is None or audited.end is None else
            f"{timefmt.iso(audited.start)} to {timefmt.iso(audited.end)}")
    leak = audited.leak_usd
    expected = (f"at most {timefmt.usd_exact(value, leak)} of leak in {audited.ledger} "
                f"({over})")
    actual = (f"{timefmt.usd_exact(leak, value)} leaked over {audited.audited} audited "
              f"events, {audited.leak_unpriced} leak events unpriced")
    if audited.passed:
        return CheckResult(check="max_leak_usd", expected=expected, passed=True, actual=actual)
    evidence = [audited.verdict]
    evidence += [f"{timefmt.iso(j.at)} {j.connection} {j.model} {j.finding} "
                 f"{timefmt.usd_exact(j.cost_usd or 0.0)}: {j.detail}"
                 for j in audited.top_leaks]
    evidence += [f"{timefmt.iso(j.at)} {j.connection} {j.model} {j.finding}: unpriced "
                 f"({j.where})" for j in audited.unpriced_events if j.finding in
                 findings.leaking()]
    return CheckResult(check="max_leak_usd", expected=expected, passed=False, actual=actual,
                       evidence=tuple(evidence))


# --- what-if checks -------------------------------------------------------------------------


def _whatif_report(expectation: Expectation, *, loaded: LoadedPolicy, index: int,
                   inputs: LoadedInputs, now: datetime,
                   windows: Catalog | None) -> WhatifReport:
    """The what-if answer ``max_regret_usd`` and ``added_seat_pays`` judge: ``omniladder
    whatif`` of the expectation's auto id over its ledger (``ledger_path``) and span
    (``ledger_start`` up to now, else the whole ledger), with the scenarios of its
    ``scenario`` file (relative to the policy file)."""
    from omniladder.analyses.whatif.run import Catalog, whatif
    from omniladder.analyses.whatif.scenario import from_entries
    from omniladder.inputs.ledger.read import Ledger
    from omniladder.inputs.scenarios import load_scenarios

    check = next(key for key in WHATIF_KEYS if getattr(expectation, key) is not None)
    ledger = ledger_path(loaded, index, expectation, inputs, check)
    start = ledger_start(loaded, index, expectation, now)
    scenarios = []
    if expectation.scenario is not None:
        path = loaded.path.parent / expectation.scenario
        scenarios = from_entries(load_scenarios(path), display_path(path))
    return whatif(inputs, parse_auto_id(expectation.auto_id), Ledger(ledger),
                  scenarios=scenarios, start=start, end=now if start is not None else None,
                  catalog=windows if windows is not None else Catalog())


def _as_is(report: WhatifReport) -> Scenario | None:
    return next((s for s in report.scenarios if s.name == AS_IS), None)


def _dollars(value: float | None) -> str:
    return "unknown" if value is None else timefmt.usd_exact(value)


def _over_span(report: WhatifReport) -> str:
    return (f"the {AS_IS} replay of {report.auto_id} from {timefmt.iso(report.start)} to "
            f"{timefmt.iso(report.end)}")


def _max_regret_usd(value: float, report: WhatifReport) -> CheckResult:
    """The ``as-is`` replay paid at most ``value`` dollars above the bound (SPEC §10.6).
    Without a bound the regret is unknown, and with unpriced paid requests its size is: a
    gate on an unknown answer fails."""
    as_is = _as_is(report)
    beside = () if as_is is None or as_is.regret_usd is None else (as_is.regret_usd,)
    expected = (f"at most {timefmt.usd_exact(value, *beside)} of regret in "
                f"{_over_span(report)}")
    if as_is is None:
        return CheckResult(check="max_regret_usd", expected=expected, passed=False,
                           actual="no as-is replay", evidence=(
                               f"the what-if answer holds no {AS_IS} scenario, so the fleet's "
                               "regret is unknown",))
    regret, paid = as_is.regret_usd, as_is.paid_usd
    if regret is None:
        return CheckResult(check="max_regret_usd", expected=expected, passed=False,
                           actual="regret unknown", evidence=(
                               f"no bound: {report.bound_note or 'it was not computed'}",
                               f"the {AS_IS} replay paid {timefmt.usd_exact(paid)}; without "
                               "the least any schedule could have paid, its regret is "
                               "unknown"))
    bound = as_is.bound_usd if as_is.bound_usd is not None else report.bound_usd
    unpriced = as_is.unpriced
    actual = (f"{timefmt.usd_exact(regret, value)} regret: paid {timefmt.usd_exact(paid)}, "
              f"bound {_dollars(bound)}"
              + (f", {unpriced} paid request{'' if unpriced == 1 else 's'} unpriced"
                 if unpriced else ""))
    within = round(regret, timefmt.MONEY_PLACES) <= value
    if within and not unpriced:
        return CheckResult(check="max_regret_usd", expected=expected, passed=True,
                           actual=actual)
    evidence: list[str] = []
    if not within:
        evidence.append(f"the {AS_IS} replay paid {timefmt.usd_exact(paid)}, "
                        f"{timefmt.usd_exact(regret, value)} above the least any schedule "
                        f"could have paid ({_dollars(bound)}): more than "
                        f"{timefmt.usd_exact(value, regret)}")
    if unpriced:
        evidence.append(f"{unpriced} paid request{'' if unpriced == 1 else 's'} of the "
                        f"{AS_IS} replay could not be priced: the regret is at least "
                        f"{timefmt.usd_exact(regret)}, its size unknown")
    evidence += [f"{s.name} ({', '.join(s.changes)}) would have paid "
                 f"{timefmt.usd_exact(s.paid_usd)}, regret {_dollars(s.regret_usd)}"
                 for s in report.scenarios if s is not as_is]
    if report.fidelity.warning:
        evidence.append(f"fidelity: {report.fidelity.warning}")
    return CheckResult(check="max_regret_usd", expected=expected, passed=False, actual=actual,
                       evidence=tuple(evidence))


def _added_seat_pays(report: WhatifReport) -> CheckResult:
    """Every seat a scenario adds saves at least its price per period (its break-even is at
    or above its ``seat_price_usd``). A seat without a price, or in a scenario whose paid
    requests are not all priced (what it saved is then an upper estimate), is unknown and
    fails; so does an answer in which no scenario adds a seat."""
    seats = [(scenario, seat) for scenario in report.scenarios for seat in scenario.added]
    expected = "every added seat saves at least its price per period"
    if not seats:
        return CheckResult(check="added_seat_pays", expected=expected, passed=False,
                           actual="no added seat", evidence=(
                               f"no scenario of the replay of {report.auto_id} adds a seat "
                               "(add in the scenario file), so none can be shown to pay",))
    evidence: list[str] = []
    for scenario, seat in seats:
        saved = (f"{scenario.name}: {seat.connection} (like {seat.like}) saves "
                 f"{timefmt.usd_exact(seat.break_even_usd)} a {seat.seat_period}")
        price = seat.seat_price_usd
        if price is None:
            evidence.append(f"{saved} and has no seat_price_usd, so whether it pays is "
                            "unknown")
        elif (round(seat.break_even_usd, timefmt.MONEY_PLACES)
              < round(price, timefmt.MONEY_PLACES)):
            evidence.append(f"{saved}, less than its price "
                            f"{timefmt.usd_exact(price, seat.break_even_usd)}")
        elif scenario.unpriced:
            evidence.append(f"{saved}, at least its price {timefmt.usd_exact(price)}, but "
                            f"{scenario.unpriced} paid request"
                            f"{'' if scenario.unpriced == 1 else 's'} of the scenario could "
                            "not be priced, so what it saved is not known")
    paying = len(seats) - len(evidence)
    return CheckResult(check="added_seat_pays", expected=expected, passed=not evidence,
                       actual=f"{paying} of {len(seats)} added seat"
                              f"{'' if len(seats) == 1 else 's'} pay for themselves",
                       evidence=tuple(evidence))


def describe_now(result: ExpectationResult) -> str:
    return f"{timefmt.iso(result.now)} ({result.now_source})"
