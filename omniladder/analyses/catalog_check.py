"""Lint the curated catalogs, and list what a fleet uses that nobody curated.

The strict loader stops at the first invalid entry. The linter reads each file as a raw
document and validates entry by entry with the same models, so every problem of every entry
is reported at once; the valid entries then form the effective catalogs (later files
override earlier ones, as when loading) that the fleet is checked against.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ValidationError

from omniladder.engine.billing import classify
from omniladder.engine.inputs import Catalogs, merge_catalogs
from omniladder.inputs.catalogs import SHIPPED_PREFIX
from omniladder.inputs.documents import read_document
from omniladder.inputs.scopes import WindowScopes, glob_matches, ordered
from omniladder.inputs.validation import describe_errors, format_loc
from omniladder.models import (
    BillingEntry,
    Connection,
    ModelEntry,
    StrictModel,
    parse_date,
)
from omniladder.scope_models import SourceProvidersEntry, WindowAliasEntry, WindowScopeEntry

ProblemCode = Literal[
    "not-a-catalog", "unknown-key", "invalid-entry", "duplicate-key", "missing-reason",
    "missing-source", "missing-reviewed", "missing-as-of", "review-stale", "review-in-future",
    "unknown-category", "negative-price", "uncurated", "model-not-in-catalog",
    "shadowed-entry", "release-age",
]
CatalogKind = Literal["billing", "models", "windows"]
_TableKind = Literal["billing", "models", "windows", "aliases", "sources"]

DEFAULT_MAX_AGE_DAYS = 180

_PRICE_FIELDS = ("input_usd_per_mtok", "output_usd_per_mtok")


@dataclass(frozen=True, kw_only=True)
class Problem:
    file: str
    where: str
    """The field path inside the file (``entries[3].reviewed``); empty for a whole file."""
    key: str
    """What the problem is about: ``provider/auth_type``, ``provider/model``, ..."""
    code: ProblemCode
    message: str
    shipped: bool = False
    """In a catalog shipped with omniladder, which the user cannot edit: reported as a note,
    never a failure (only the files the user owns fail a check)."""


def is_shipped(shown: str) -> bool:
    """Whether a catalog file's display name is one of the shipped catalogs."""
    return shown.startswith(f"{SHIPPED_PREFIX}/")


def release_date() -> date:
    """The date this omniladder was released (``omniladder.RELEASED``)."""
    from omniladder import RELEASED

    return date.fromisoformat(RELEASED)


@dataclass(frozen=True, kw_only=True)
class LintResult:
    problems: tuple[Problem, ...]
    catalogs: Catalogs
    """The effective catalogs built from every entry that validated."""
    windows: WindowScopes = dataclasses.field(default_factory=lambda: WindowScopes((), ()))
    """The effective window-scope catalog built from every entry that validated."""


@dataclass(frozen=True, kw_only=True)
class _Spec:
    kind: _TableKind
    table: str
    model: type[BaseModel]
    required: tuple[tuple[str, ProblemCode], ...]
    dated: str
    repeated: str = "the later entry silently replaces the earlier one"
    """What a second entry with the same key in one file does."""


_SPECS: Mapping[CatalogKind, _Spec] = {
    "billing": _Spec(kind="billing", table="entries", model=BillingEntry,
                     required=(("reason", "missing-reason"), ("source", "missing-source"),
                               ("reviewed", "missing-reviewed")), dated="reviewed"),
    "models": _Spec(kind="models", table="models", model=ModelEntry,
                    required=(("source", "missing-source"), ("as_of", "missing-as-of")),
                    dated="as_of"),
    "windows": _Spec(kind="windows", table="windows", model=WindowScopeEntry,
                     required=(("reason", "missing-reason"), ("source", "missing-source"),
                               ("reviewed", "missing-reviewed")), dated="reviewed"),
}
_ALIASES = _Spec(kind="aliases", table="aliases", model=WindowAliasEntry,
                 required=(("reason", "missing-reason"), ("source", "missing-source"),
                           ("reviewed", "missing-reviewed")), dated="reviewed")
_SOURCES = _Spec(kind="sources", table="sources", model=SourceProvidersEntry,
                  required=(("reason", "missing-reason"), ("source", "missing-source"),
                            ("reviewed", "missing-reviewed")), dated="reviewed",
                  repeated="the file is refused when loaded")
_TABLES: Mapping[CatalogKind, tuple[_Spec, ...]] = {
    "billing": (_SPECS["billing"],),
    "models": (_SPECS["models"],),
    "windows": (_SPECS["windows"], _ALIASES, _SOURCES),
}
"""The tables each kind of catalog file may hold, linted entry by entry alike."""


def _key(kind: _TableKind, item: Mapping[str, Any]) -> tuple[Any, ...]:
    if kind == "billing":
        return (item.get("provider"), item.get("auth_type"))
    if kind == "windows":
        return (item.get("provider"), item.get("window"))
    if kind == "sources":
        return (item.get("importer"), None)
    if kind == "aliases":
        window = item.get("window")
        return (item.get("provider"), window.casefold() if isinstance(window, str) else window)
    return (item.get("provider"), item.get("model"))


def key_text(kind: _TableKind, key: tuple[Any, ...]) -> str:
    first, second = key
    if kind == "billing" and second is None:
        return f"{first}/*"
    if kind == "windows":
        return f"{first}: {second}"
    if kind == "sources":
        return f"{first}"
    if kind == "aliases":
        return f"{first}: alias {second}"
    return f"{first}/{second}"


def _as_date(value: Any) -> date | None:
    try:
        parsed: date = parse_date(value)
    except ValueError:
        return None
    return parsed


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def lint_file(kind: CatalogKind, path: Path, shown: str, today: date,
              max_age_days: int, released: date | None = None
              ) -> tuple[list[Problem], list[BaseModel]]:
    """Every problem of one catalog file, and its entries that validated, in file order
    (table by table).

    A shipped file (``<shipped>/...``) has its review dates judged against ``released``
    (default: this version's release date) instead of ``today``, and its problems are marked
    ``shipped``: the user cannot edit it, so they never fail a check.
    """
    specs = _TABLES[kind]
    document = read_document(path, shown)
    shipped = is_shipped(shown)
    reference = today
    as_of_text = "today"
    if shipped:
        reference = released if released is not None else release_date()
        from omniladder import __version__

        as_of_text = f"the release of omniladder {__version__} ({reference.isoformat()})"
    problems: list[Problem] = []
    tables = [spec.table for spec in specs]
    for name in document:
        if name not in tables:
            held = " and ".join(f"[[{table}]]" for table in tables)
            problems.append(Problem(file=shown, where=name, key="", code="unknown-key",
                                    message=f"unknown top-level key {name!r}; a {kind} catalog "
                                    f"holds only {held}", shipped=shipped))
    valid: list[BaseModel] = []
    dates = _Dates(today, reference, as_of_text)
    for spec in specs:
        found, entries = _lint_table(spec, document.get(spec.table, ()), shown, dates,
                                     max_age_days, shipped)
        problems += found
        valid += entries
    return problems, valid


class _Dates(NamedTuple):
    today: date
    reference: date
    """What review ages are judged against: today, or a shipped file's release date."""
    as_of_text: str


def _lint_table(spec: _Spec, items: Any, shown: str, dates: _Dates, max_age_days: int,
                shipped: bool) -> tuple[list[Problem], list[BaseModel]]:
    today, reference, as_of_text = dates
    problems: list[Problem] = []
    if not isinstance(items, tuple):
        problems.append(Problem(file=shown, where=spec.table, key="", code="not-a-catalog",
                                message=f"{spec.table} must be an array of tables",
                                shipped=shipped))
        return problems, []
    valid: list[BaseModel] = []
    seen: dict[tuple[Any, ...], int] = {}
    for index, item in enumerate(items):
        where = f"{spec.table}[{index}]"
        if not isinstance(item, dict):
            problems.append(Problem(file=shown, where=where, key="", code="not-a-catalog",
                                    message="must be a table",
                                    shipped=shipped))
            continue
        key = _key(spec.kind, item)
        label = key_text(spec.kind, key)

        def add(code: ProblemCode, message: str, field: str | None = None,
                where: str = where, label: str = label) -> None:
            problems.append(Problem(file=shown, where=f"{where}.{field}" if field else where,
                                    key=label,
                                    code=code, message=message, shipped=shipped))

        if key in seen:
            add("duplicate-key", f"same key as {spec.table}[{seen[key]}] in this file; "
                f"{spec.repeated}")
        else:
            seen[key] = index
        for field, code in spec.required:
            if _blank(item.get(field)):
                add(code, f"{field} is missing: every curated fact says "
                    + {"reason": "why it holds", "source": "where it comes from",
                       "reviewed": "when it was last checked",
                       "as_of": "when the price was last checked"}[field], field)
        when = _as_date(item.get(spec.dated))
        if when is not None:
            age = (reference - when).days
            if age > max_age_days:
                add("review-stale", f"{spec.dated} {when.isoformat()} is {age} days old "
                    + ("" if not shipped else f"at {as_of_text} ")
                    + f"(more than {max_age_days}); check the fact again", spec.dated)
            elif age < 0:
                add("review-in-future", f"{spec.dated} {when.isoformat()} is after "
                    + (f"today ({today.isoformat()})" if not shipped else as_of_text),
                    spec.dated)
        try:
            valid.append(spec.model.model_validate(item))
        except ValidationError as exc:
            for loc, kind_of_error, message in describe_errors(exc, item):
                field = format_loc(loc)
                if loc[:1] == ("categories",) and kind_of_error == "literal_error":
                    add("unknown-category", message, field)
                elif (loc[:1] and loc[0] in _PRICE_FIELDS
                      and kind_of_error == "greater_than_equal"):
                    add("negative-price", message, field)
                else:
                    add("invalid-entry", message, field or None)
    return problems, valid


def _shadowed(entries: Sequence[WindowScopeEntry], shown: str) -> list[Problem]:
    """Window-scope entries no window can reach: an earlier entry of the same provider in the
    same file matches every name this entry's pattern matches (first match wins)."""
    problems: list[Problem] = []
    for index, entry in enumerate(entries):
        for before in entries[:index]:
            if (before.provider == entry.provider and before.window != entry.window
                    and glob_matches(before.window, entry.window)
                    and ("*" in before.window or "?" in before.window)):
                problems.append(Problem(
                    file=shown, where=f"windows[{index}]",
                    key=key_text("windows", (entry.provider, entry.window)),
                    code="shadowed-entry",
                    message=f"never used: the earlier entry for window {before.window!r} matches "
                    "every name this one does; put the narrower entry first",
                    shipped=is_shipped(shown)))
                break
    return problems


def lint_catalogs(billing_paths: Sequence[tuple[Path, str]],
                  model_paths: Sequence[tuple[Path, str]], today: date,
                  max_age_days: int = DEFAULT_MAX_AGE_DAYS,
                  window_paths: Sequence[tuple[Path, str]] = (),
                  released: date | None = None) -> LintResult:
    """Lint every catalog file; build the effective catalogs from the valid entries.

    Shipped files are judged against ``released`` (default: this version's release date),
    their problems marked ``shipped``; when the release is more than ``max_age_days`` before
    ``today``, a ``release-age`` note (shipped, never a failure) says so.
    """
    released = released if released is not None else release_date()
    problems: list[Problem] = []
    billing: list[tuple[str, list[BillingEntry]]] = []
    models: list[tuple[str, list[ModelEntry]]] = []
    for path, shown in billing_paths:
        found, entries = lint_file("billing", path, shown, today, max_age_days, released)
        problems += found
        billing.append((shown, [entry for entry in entries if isinstance(entry, BillingEntry)]))
    for path, shown in model_paths:
        found, entries = lint_file("models", path, shown, today, max_age_days, released)
        problems += found
        models.append((shown, [entry for entry in entries if isinstance(entry, ModelEntry)]))
    window_files: list[tuple[str, list[WindowScopeEntry]]] = []
    alias_files: list[tuple[str, list[WindowAliasEntry]]] = []
    for path, shown in window_paths:
        found, entries = lint_file("windows", path, shown, today, max_age_days, released)
        scoped = [entry for entry in entries if isinstance(entry, WindowScopeEntry)]
        problems += found + _shadowed(scoped, shown)
        window_files.append((shown, scoped))
        alias_files.append((shown, [entry for entry in entries
                                    if isinstance(entry, WindowAliasEntry)]))
    shipped = [shown for _, shown in (*billing_paths, *model_paths, *window_paths)
               if is_shipped(shown)]
    age = (today - released).days
    if shipped and age > max_age_days:
        from omniladder import __version__

        problems.append(Problem(
            file=SHIPPED_PREFIX, where="", key="", code="release-age",
            message=f"omniladder {__version__} was released on {released.isoformat()}, {age} days "
            f"before {today.isoformat()} (more than {max_age_days}); its shipped catalogs "
            f"({', '.join(shipped)}) were reviewed for that release and are judged against "
            "its date, never a failure here: upgrade omniladder for newer facts, or overlay "
            "the entries you rely on (--catalog, --models-catalog, --windows-catalog)",
            shipped=True))
    return LintResult(problems=tuple(problems), catalogs=merge_catalogs(billing, models),
                      windows=ordered(window_files, alias_files))


def lint_fleet(connections: Sequence[Connection], catalogs: Catalogs,
               connections_file: str) -> list[Problem]:
    """Providers and auth types in use that no catalog entry covers (R1.4: treated as
    metered), and models of metered connections missing from the model catalog (R3:
    treated as premium)."""
    uncurated: dict[tuple[str, str], list[str]] = {}
    missing: dict[tuple[str, str], list[str]] = {}
    for connection in connections:
        info = classify(connection, catalogs, connections_file)
        if info.step == 4:
            uncurated.setdefault((connection.provider, connection.auth_type),
                                 []).append(connection.id)
        if info.treated_as_metered and connection.models is not None:
            for model in connection.models:
                if (connection.provider, model) not in catalogs.models:
                    missing.setdefault((connection.provider, model), []).append(connection.id)
    problems = [
        Problem(file=connections_file, where="", key=f"{provider}/{auth_type}", code="uncurated",
                message=f"no billing catalog entry for provider {provider!r}, auth_type "
                f"{auth_type!r}: treated as metered; used by {', '.join(ids)}")
        for (provider, auth_type), ids in uncurated.items()
    ]
    problems += [
        Problem(file=connections_file, where="", key=f"{provider}/{model}",
                code="model-not-in-catalog",
                message=f"model {model!r} of provider {provider!r} is not in the model catalog: "
                f"its metered connections are treated as premium; used by {', '.join(ids)}")
        for (provider, model), ids in missing.items()
    ]
    return problems


# --- the check: catalogs, fleet and baseline, judged ---------------------------------------


@dataclass(frozen=True, kw_only=True)
class CatalogCheck:
    """What ``catalog check`` found: the user's own findings, the shipped catalogs' notes, and
    the baseline they were judged against."""

    problems: tuple[Problem, ...]
    """Findings in the files the user owns (catalog overlays, the connections file)."""
    notes: tuple[Problem, ...]
    """Findings in the shipped catalogs: reported, never a failure."""
    files: tuple[str, ...]
    """Every catalog file read, as shown."""
    connections: str | None
    """The connections file checked against the catalogs, as shown."""
    day: date
    max_age_days: int
    released: date
    judged: Judged | None
    """The findings split by the baseline; None without one."""
    baseline: Baseline | None
    """The baseline judged against: the one read, or the one to write (``--write-baseline``)."""
    against: str | None
    """The baseline file, as shown."""

    @property
    def failing(self) -> tuple[Problem, ...]:
        """The findings that fail the check: the new ones with a baseline, else all."""
        return self.judged.new if self.judged is not None else self.problems

    def verdict(self) -> str | None:
        """Why the check fails, or None when it passes."""
        if not self.failing:
            return None
        count = len(self.failing)
        new = "new " if self.judged is not None else ""
        accepted = (f" ({len(self.judged.accepted)} accepted by {self.against})"
                    if self.judged is not None else "")
        return f"{count} {new}catalog problem{'' if count == 1 else 's'} found{accepted}"


def check_catalogs(*, billing_paths: Sequence[tuple[Path, str]],
                   model_paths: Sequence[tuple[Path, str]],
                   window_paths: Sequence[tuple[Path, str]],
                   fleet: tuple[Sequence[Connection], str] | None, day: date,
                   max_age_days: int, baseline: Baseline | None, against: str | None,
                   rewrite: bool = False, released: date | None = None) -> CatalogCheck:
    """``catalog check``: lint the catalog files, check the fleet (its connections and the
    name it is shown by) against the catalogs that validated, and judge the findings by the
    baseline. Only the files the user owns fail; a shipped catalog's findings are notes. With
    ``rewrite`` the baseline becomes one accepting every finding (keeping the notes of the
    entries that still match), for the command to write and judge against."""
    released = released if released is not None else release_date()
    result = lint_catalogs(billing_paths, model_paths, day, max_age_days, window_paths,
                           released)
    problems = [p for p in result.problems if not p.shipped]
    if fleet is not None:
        problems += lint_fleet(fleet[0], result.catalogs, fleet[1])
    if rewrite:
        baseline = baseline_of(problems, baseline)
    return CatalogCheck(
        problems=tuple(problems), notes=tuple(p for p in result.problems if p.shipped),
        files=tuple(shown for _, shown in (*billing_paths, *model_paths, *window_paths)),
        connections=fleet[1] if fleet is not None else None, day=day,
        max_age_days=max_age_days, released=released,
        judged=judge(problems, baseline) if baseline is not None else None,
        baseline=baseline, against=against)


# --- accepted findings (catalog check --baseline) -------------------------------------------


class AcceptedFinding(StrictModel):
    """A finding accepted on purpose: matched by code and key, and by where when given."""

    code: ProblemCode
    key: str
    """The finding's key (``provider/auth_type``, ``provider/model``, ...); ``""`` for a
    finding about a whole file or key."""
    where: str | None = None
    """The field path inside the file (``entries[3].reviewed``); absent: anywhere."""
    note: str | None = None
    """Why it is accepted, or the finding's message when the baseline was written."""

    def matches(self, problem: Problem) -> bool:
        return (self.code == problem.code and self.key == problem.key
                and (self.where is None or self.where == problem.where))

    def label(self) -> str:
        return " ".join(part for part in (self.code, self.key, self.where) if part)


class Baseline(StrictModel):
    """``catalog check --baseline FILE``: the findings a fleet accepts (like pip-audit's
    ``--ignore-vuln``), so the check fails only on new ones."""

    accepted: tuple[AcceptedFinding, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Judged:
    new: tuple[Problem, ...]
    """Findings no baseline entry accepts: these fail the check."""
    accepted: tuple[Problem, ...]
    stale: tuple[tuple[int, AcceptedFinding], ...]
    """(index, entry) of every baseline entry that matches no finding any more."""


def judge(problems: Sequence[Problem], baseline: Baseline) -> Judged:
    """Split the findings into new and accepted; list the baseline entries no finding uses."""
    used: set[int] = set()
    new: list[Problem] = []
    accepted: list[Problem] = []
    for problem in problems:
        hits = [i for i, entry in enumerate(baseline.accepted) if entry.matches(problem)]
        used.update(hits)
        (accepted if hits else new).append(problem)
    stale = tuple((i, entry) for i, entry in enumerate(baseline.accepted) if i not in used)
    return Judged(new=tuple(new), accepted=tuple(accepted), stale=stale)


def baseline_of(problems: Sequence[Problem], previous: Baseline | None = None) -> Baseline:
    """A baseline accepting exactly these findings (each once); an entry of ``previous`` that
    still matches keeps its note."""
    entries: list[AcceptedFinding] = []
    seen: set[tuple[str, str, str]] = set()
    for problem in problems:
        if (problem.code, problem.key, problem.where) in seen:
            continue
        seen.add((problem.code, problem.key, problem.where))
        kept = next((entry.note for entry in (previous.accepted if previous else ())
                     if entry.matches(problem) and entry.note), None)
        entries.append(AcceptedFinding(code=problem.code, key=problem.key,
                                       where=problem.where or None,
                                       note=kept or problem.message))
    return Baseline(accepted=tuple(entries))


BASELINE_HEADER = """\
# Catalog findings accepted on purpose. `omniladder catalog check --baseline THIS_FILE`
# counts them as accepted and fails only on new findings; an entry that matches no finding
# any more is reported as stale. An entry matches by code and key (and where, when given);
# note is free text. Rewrite it with `--write-baseline THIS_FILE`.
"""


def baseline_text(baseline: Baseline, suffix: str) -> str:
    """The baseline file: commented TOML, or JSON for a ``.json`` file."""
    rows = [entry.model_dump(exclude_none=True) for entry in baseline.accepted]
    if suffix == ".json":
        import json

        return json.dumps({"accepted": rows}, indent=2, ensure_ascii=False) + "\n"
    import tomli_w

    # [[accepted]] tables, one key a line (tomli_w would inline them); each value as
    # tomli_w writes it, so every string is escaped as TOML needs.
    tables = ["[[accepted]]\n" + "".join(tomli_w.dumps({key: value}) for key, value in row.items())
              for row in rows]
    return BASELINE_HEADER + "".join("\n" + table for table in tables)
