"""Views of the effective catalogs (`catalog show`) and of lint findings (`catalog check`).

JSON documents are plain data for json.dumps; tables go through rich with every
user-supplied string as ``Text``; lint findings are plain, grep-able lines.
"""

from __future__ import annotations

from typing import Any, TextIO

from omniladder.analyses.catalog_check import CatalogCheck, Problem
from omniladder.engine.inputs import Catalogs
from omniladder.engine.tiers import economic_tier
from omniladder.inputs.scopes import WindowScopes
from omniladder.models import TierSettings

FORMAT_VERSION = "1"


def catalog_document(catalogs: Catalogs, tiers: TierSettings,
                     windows: WindowScopes | None = None) -> dict[str, Any]:
    """The effective catalogs, each entry with the file it came from; window scopes in the
    order they are tried."""
    billing = [
        {"provider": s.entry.provider, "auth_type": s.entry.auth_type,
         "billing": s.entry.billing, "overage": s.entry.overage, "reason": s.entry.reason,
         "source": s.entry.source,
         "reviewed": s.entry.reviewed.isoformat() if s.entry.reviewed else None,
         "file": s.file}
        for s in catalogs.billing.values()
    ]
    models = []
    for (provider, model), s in catalogs.models.items():
        tier = economic_tier(provider, model, catalogs, tiers)
        models.append(
            {"provider": provider, "model": model,
             "input_usd_per_mtok": s.entry.input_usd_per_mtok,
             "output_usd_per_mtok": s.entry.output_usd_per_mtok,
             "categories": list(s.entry.categories), "tier": s.entry.tier,
             "effective_tier": tier.tier, "tier_source": tier.source,
             "as_of": s.entry.as_of.isoformat() if s.entry.as_of else None,
             "source": s.entry.source, "file": s.file})
    document: dict[str, Any] = {
        "format_version": FORMAT_VERSION, "billing_files": list(catalogs.billing_files),
        "model_files": list(catalogs.model_files), "billing": billing, "models": models}
    if windows is not None:
        document["window_files"] = list(windows.files)
        document["windows"] = [
            {"provider": s.entry.provider, "window": s.entry.window,
             "models": list(s.entry.models) if s.entry.models is not None else None,
             "exclude_models": list(s.entry.exclude_models), "ignore": s.entry.ignore,
             "reason": s.entry.reason, "source": s.entry.source,
             "reviewed": s.entry.reviewed.isoformat() if s.entry.reviewed else None,
             "file": s.file}
            for s in windows.entries]
        document["window_aliases"] = [
            {"provider": a.entry.provider, "window": a.entry.window,
             "models": list(a.entry.models), "reason": a.entry.reason,
             "source": a.entry.source,
             "reviewed": a.entry.reviewed.isoformat() if a.entry.reviewed else None,
             "file": a.file}
            for a in windows.aliases]
    return document


def render_catalog_table(catalogs: Catalogs, tiers: TierSettings, out: TextIO,
                         windows: WindowScopes | None = None) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from omniladder.rendering.table import make_console

    document = catalog_document(catalogs, tiers, windows)
    console = make_console(out)
    billing = Table(title="Billing catalog (R1)", title_justify="left", box=box.SIMPLE_HEAD,
                    pad_edge=False)
    for name in ("provider", "auth_type", "billing", "overage", "reviewed", "file"):
        billing.add_column(name, no_wrap=name != "file", overflow="fold")
    for row in document["billing"]:
        billing.add_row(Text(row["provider"]), Text(row["auth_type"] or "* (provider-wide)"),
                        row["billing"], row["overage"], row["reviewed"] or "-",
                        Text(row["file"]))
    console.print(billing)
    models = Table(title="Model catalog (R3)", title_justify="left", box=box.SIMPLE_HEAD,
                   pad_edge=False)
    for name in ("provider", "model", "in $/Mtok", "out $/Mtok", "tier", "categories",
                 "file"):
        models.add_column(name, no_wrap=name in ("provider", "model", "tier"),
                          justify="right" if "$" in name else "left", overflow="fold")
    for row in document["models"]:
        tier = row["effective_tier"] + (" (set)" if row["tier"] else "")
        models.add_row(Text(row["provider"]), Text(row["model"]),
                       f"{row['input_usd_per_mtok']:g}", f"{row['output_usd_per_mtok']:g}",
                       tier, ", ".join(row["categories"]) or "-", Text(row["file"]))
    console.print(models)
    summary = (f"{len(document['billing'])} billing entries from "
               f"{len(catalogs.billing_files)} file(s), {len(document['models'])} "
               f"models from {len(catalogs.model_files)} file(s)")
    if windows is not None:
        scopes = Table(title="Quota-window scopes (SPEC §6), in the order they are tried",
                       title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for name in ("provider", "window", "limits", "reviewed", "file"):
            scopes.add_column(name, no_wrap=name in ("provider", "reviewed"), overflow="fold")
        for row in document["windows"]:
            if row["ignore"]:
                limits = "ignored"
            else:
                limits = ", ".join(row["models"] or ())
                if row["exclude_models"]:
                    limits += " except " + ", ".join(row["exclude_models"])
            scopes.add_row(Text(row["provider"]), Text(row["window"]), Text(limits),
                           row["reviewed"] or "-", Text(row["file"]))
        console.print(scopes)
        if document["window_aliases"]:
            aliases = Table(title="Window aliases (SPEC §6): ids that name other models",
                            title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
            for name in ("provider", "window", "limits", "reviewed", "file"):
                aliases.add_column(name, no_wrap=name in ("provider", "reviewed"),
                                   overflow="fold")
            for row in document["window_aliases"]:
                aliases.add_row(Text(row["provider"]), Text(row["window"]),
                                Text(", ".join(row["models"])), row["reviewed"] or "-",
                                Text(row["file"]))
            console.print(aliases)
        summary += (f", {len(document['windows'])} window scopes from "
                    f"{len(windows.files)} file(s)")
        if document["window_aliases"]:
            summary += f", {len(document['window_aliases'])} window aliases"
    console.print(Text(summary))


def lint_document(check: CatalogCheck) -> dict[str, Any]:
    """The JSON document. With a baseline, ``problems`` are the new findings only, and
    ``accepted``, ``stale`` and ``baseline`` are added (``ok``: no new finding); ``notes``
    are the findings in shipped catalogs, which never fail (``released``: the date the
    shipped catalogs are judged against)."""
    judged = check.judged
    document: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "ok": not check.failing,
        "today": check.day.isoformat(),
        "max_age_days": check.max_age_days,
        "files": list(check.files),
        "connections": check.connections,
        "problems": [_problem(p) for p in check.failing],
        "notes": [_problem(p) for p in check.notes],
        "released": check.released.isoformat(),
    }
    if judged is not None:
        document["baseline"] = check.against
        document["accepted"] = [_problem(p) for p in judged.accepted]
        document["stale"] = [{"index": index, **entry.model_dump(exclude_none=True)}
                             for index, entry in judged.stale]
    return document


def _problem(p: Problem) -> dict[str, str]:
    return {"file": p.file, "where": p.where, "key": p.key, "code": p.code,
            "message": p.message}


def lint_lines(check: CatalogCheck) -> list[str]:
    """One line per problem (with a baseline: per new problem), one ``note:`` line per
    finding in a shipped catalog (never a failure), then the verdict."""
    shown, judged, notes = check.failing, check.judged, check.notes
    lines = []
    for p in shown:
        parts = [p.file] + [part for part in (p.where, p.key) if part] + [p.code, p.message]
        lines.append(": ".join(parts))
    for p in notes:
        parts = [p.file] + [part for part in (p.where, p.key) if part] + [p.code, p.message]
        lines.append("note: " + ": ".join(parts))
    checked = (f"{len(check.files)} catalog file(s)"
               + (f" and {check.connections}" if check.connections else ""))
    new = "new " if judged is not None else ""
    if shown:
        verdict = f"catalog check: {len(shown)} {new}problem(s) in {checked}"
    else:
        verdict = f"catalog check: ok, no {new}problems in {checked}"
    if judged is not None:
        verdict += f"; {len(judged.accepted)} accepted by {check.against}"
        if judged.stale:
            verdict += f", {len(judged.stale)} stale baseline entr" + (
                "y" if len(judged.stale) == 1 else "ies")
    if notes:
        verdict += (f"; {len(notes)} note{'' if len(notes) == 1 else 's'} on the shipped "
                    "catalogs (never a failure)")
    lines.append(verdict)
    return lines
