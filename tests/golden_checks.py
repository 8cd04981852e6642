"""What every golden file must say, checked on the document it renders.

A golden file pins today's output byte for byte, and ``OMNILADDER_UPDATE_GOLDEN=1`` rewrites it
from whatever the code prints: a golden regenerated wrong would pass silently. So every golden
file has a checker here (``CHECKS``, keyed by the file's name), and the comparison helpers
(``compare`` in tests/test_golden.py, ``golden`` in tests/test_export.py) run it on the text they
compare, in both modes. A checker states what an operator would check, derived from the
example inputs (examples/*.toml, examples/*.json) and the rules (docs/rules.md), never from
the golden text; the text and markdown views are parsed and held to the JSON document of the
same run, so the views and the JSON cannot drift apart. tests/test_golden.py fails when a file
in tests/golden/ has no checker here.
"""

from __future__ import annotations

import json
import re
import tempfile
import tomllib
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.engine.records import REASON_CODES

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SETTINGS = {"thrifty": "omniladder.toml", "subscription": "omniladder.toml",
            "coding-thrifty": "omniladder.toml", "tight-thrifty": "omniladder-tight.toml"}
AUTO_IDS = {"thrifty": "auto/thrifty", "subscription": "auto/subscription",
            "coding-thrifty": "auto/coding:thrifty", "tight-thrifty": "auto/thrifty"}
LADDER = ("subscription", "keyless", "free", "cheap", "premium")
QUOTA_RUNGS = ("subscription", "keyless", "free")

Json = dict[str, Any]
CHECKS: dict[str, Callable[[str], None]] = {}
runner = CliRunner()


def check_golden(name: str, text: str) -> None:
    """Run the checker of golden file ``name`` on ``text`` (the output being compared)."""
    assert name in CHECKS, (
        f"golden file {name} has no checker in tests/golden_checks.py: add one that asserts what "
        "the document must say, derived from the example inputs and the rules")
    CHECKS[name](text)


def registers(*names: str) -> Callable[[Callable[[str], None]], Callable[[str], None]]:
    def register(function: Callable[[str], None]) -> Callable[[str], None]:
        for name in names:
            assert name not in CHECKS, name
            CHECKS[name] = function
        return function
    return register


# --- running the CLI on the examples ---------------------------------------------------------


def invoke(*args: str, exit_code: int = 0) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == exit_code, result.output
    return result


@cache
def plan_document(auto_id: str, settings: str = "omniladder.toml") -> Json:
    result = invoke("plan", auto_id, "--config", str(EXAMPLES / settings), "--json")
    document: Json = json.loads(result.stdout)
    return document


def plan_of(name: str) -> Json:
    return plan_document(AUTO_IDS[name], SETTINGS[name])


@cache
def fleet() -> list[Json]:
    """examples/connections.toml's connections, in file order."""
    data = tomllib.loads((EXAMPLES / "connections.toml").read_text(encoding="utf-8"))
    connections: list[Json] = data["connections"]
    return connections


def candidate_order() -> list[tuple[str, str]]:
    """R12: one candidate per (provider, model), in the order it first appears in the file."""
    order: list[tuple[str, str]] = []
    for connection in fleet():
        for model in connection.get("models", []):
            if (connection["provider"], model) not in order:
                order.append((connection["provider"], model))
    return order


def squash(text: str) -> str:
    return " ".join(text.split())


# --- facts every plan document holds ---------------------------------------------------------


def pool_facts(document: Json) -> list[tuple[str, str, list[str]]]:
    return [(e["rung"], f"{e['provider']}/{e['model']}", e["allowed_connection_ids"])
            for e in document["pool"]]


def exclusions(document: Json) -> dict[tuple[str, str | None], str]:
    return {(x["connection_id"], x["model"]): x["reason"] for x in document["excluded"]}


def check_plan_shape(document: Json) -> None:
    """R10–R12 and the verdict line, for any plan of the example fleet."""
    pool = document["pool"]
    assert [e["position"] for e in pool] == list(range(1, len(pool) + 1))
    # R11: ordered by rung, and within a rung by candidate order (R12)
    order = candidate_order()
    keys = [(LADDER.index(e["rung"]), order.index((e["provider"], e["model"]))) for e in pool]
    assert keys == sorted(keys), keys
    file_order = [c["id"] for c in fleet()]
    for entry in pool:
        # R12: the allowlist is the admitted subset of the candidate's connections, in file order
        allowed = entry["allowed_connection_ids"]
        assert allowed, entry
        serving = [c["id"] for c in fleet() if c["provider"] == entry["provider"]
                   and entry["model"] in c.get("models", [])]
        assert set(allowed) <= set(serving), entry
        assert allowed == sorted(allowed, key=file_order.index), entry
        assert entry["unverified_connection_ids"] == [u["connection_id"]
                                                      for u in entry["unverified"]]
        for unverified in entry["unverified"]:
            assert unverified["reason"] in REASON_CODES
            assert unverified["connection_id"] in allowed
        # R13: no pair is both in the pool and excluded
        for connection in allowed:
            assert (connection, entry["model"]) not in exclusions(document), entry
            assert (connection, None) not in exclusions(document), entry
    assert {x["reason"] for x in document["excluded"]} <= set(REASON_CODES)
    # every connection of the file is accounted for: in the pool, or excluded
    eligible = {c for e in pool for c in e["allowed_connection_ids"]}
    excluded = {x["connection_id"] for x in document["excluded"]}
    assert eligible | excluded == set(file_order)
    # the verdict line counts what the document holds
    unverified = {c for e in pool for c in e["unverified_connection_ids"]}
    head = f"{document['auto_id']}: {len(eligible)} of {len(file_order)} connections eligible"
    summary = document["summary"]
    assert summary.startswith(head), summary
    assert (f"({len(unverified)} unverified)" in summary) == bool(unverified), summary
    counts = [int(n) for n in re.findall(r"(\d+) [a-z]", summary.split(" — ")[1])]
    assert sum(counts) == len(file_order) - len(eligible), summary  # R13: counted once each
    for rung in document["rungs"]:
        assert rung["candidates"] == sum(1 for e in pool if e["rung"] == rung["rung"])
        assert rung["connections"] == len({c for e in pool if e["rung"] == rung["rung"]
                                           for c in e["allowed_connection_ids"]})


def spent_this_month() -> dict[str, float]:
    """R8 from examples/spend.json: November 2026 up to now (12:00Z on the 29th), by the rung
    each event's (connection, model) lands on (R4, with the tiers of the example settings)."""
    rung_of = {("openai-key", "gpt-5-mini"): "cheap", ("openai-key", "gpt-5.1"): "premium",
               ("deepseek-key", "deepseek-chat"): "cheap",
               ("claude-api", "claude-sonnet-4-5"): "premium"}
    ledger = json.loads((EXAMPLES / "spend.json").read_text(encoding="utf-8"))["events"]
    spent: Counter[str] = Counter()
    for event in ledger:
        if "2026-11-01T00:00:00Z" <= event["at"] <= "2026-11-29T12:00:00Z":
            rung = event.get("rung") or rung_of[(event["connection"], event["model"])]
            spent[rung] += event["cost_usd"]
    return {rung: round(total, 2) for rung, total in spent.items()}


# The thrifty plan of the example fleet at the snapshot's 12:00Z (cutoff 2%, re-entry floor
# 5%, readings stale after 180 s), worked out connection by connection from the inputs:
THRIFTY_POOL = [
    # claude-max-work: 5h window 37.5% read 50 s ago; claude-max-extra: 64% (its metered
    # overage does not matter under thrifty); claude-pro-personal is out (below)
    ("subscription", "claude/claude-sonnet-4-5", ["claude-max-work", "claude-max-extra"]),
    # codex-team: exhausted until 11:00Z, reset since → unknown, admitted unverified (R6.3)
    ("subscription", "codex/gpt-5.1-codex", ["codex-team"]),
    # (codex/gpt-5.1 has only codex-plus, cooling down: no entry)
    # copilot-seat: status unknown → admitted unverified on both its models
    ("subscription", "copilot-web/gpt-4.1", ["copilot-seat"]),
    ("subscription", "copilot-web/claude-sonnet-4-5", ["copilot-seat"]),
    # antigravity-main: read 10 minutes ago → stale, admitted unverified
    ("subscription", "antigravity/gemini-3-pro-preview", ["antigravity-main"]),
    # ollama-local: auth none → keyless, an unlimited window
    ("keyless", "ollama/qwen2.5-coder:32b", ["ollama-local"]),
    ("keyless", "ollama/llama3.3:70b", ["ollama-local"]),
    # openrouter-free: uncurated → metered, a model priced 0 → free rung, 64%
    ("free", "openrouter/deepseek/deepseek-chat-v3.1:free", ["openrouter-free"]),
    # metered keys: the cheap rung ($3.20 of $5) and the premium rung ($7.50 of $20) serve
    ("cheap", "openai/gpt-5-mini", ["openai-key"]),
    ("cheap", "deepseek/deepseek-chat", ["deepseek-key"]),
    ("premium", "claude/claude-sonnet-4-5", ["claude-api"]),
    ("premium", "openai/gpt-5.1", ["openai-key"]),
]
THRIFTY_UNVERIFIED = {"codex-team": "quota-reset-since-reading",
                      "copilot-seat": "quota-unknown", "antigravity-main": "quota-stale"}
THRIFTY_EXCLUDED: dict[tuple[str, str | None], str] = {
    # weekly-opus at 0% until 2 December keeps out Opus only (R6 scopes windows to models)
    ("claude-max-work", "claude-opus-4-1"): "quota-below-cutoff",
    # 1.5% at 10:30Z took it out; 3% and 4% since are not above the 5% floor (R7)
    ("claude-pro-personal", None): "quota-below-reentry",
    # rate limited until 18:00Z, clamped to its 5h reset at 12:30Z, still ahead (R9, R5)
    ("codex-plus", None): "cooldown",
    ("devin-team", None): "inactive",
    # a free provider at 0% until midnight
    ("gemini-free", None): "quota-below-cutoff",
    ("groq-key", None): "terminal-status",
}


@registers("thrifty.json")
def thrifty_json(text: str) -> None:
    document = json.loads(text)
    check_plan_shape(document)
    assert (document["auto_id"], document["now"], document["now_source"]) == (
        "auto/thrifty", "2026-11-29T12:00:00Z", "snapshot")  # R14: the snapshot's taken_at
    assert pool_facts(document) == THRIFTY_POOL
    unverified = {u["connection_id"]: u["reason"] for e in document["pool"]
                  for u in e["unverified"]}
    assert unverified == THRIFTY_UNVERIFIED
    assert exclusions(document) == THRIFTY_EXCLUDED
    assert [(r["rung"], r["state"]) for r in document["rungs"]] == [
        (rung, "serving") for rung in LADDER]
    spent = spent_this_month()
    paid = {r["rung"]: (r["budget_usd"], r["spent_usd"]) for r in document["rungs"]}
    assert paid["cheap"] == (5.0, spent["cheap"]) == (5.0, 3.2)
    assert paid["premium"] == (20.0, spent["premium"]) == (20.0, 7.5)
    assert [c["connection_id"] for c in document["clamps"]] == ["codex-plus"]
    assert document["clamps"][0]["clamped_to"] == "2026-11-29T12:30:00Z"
    billing = {c["id"]: c["billing"] for c in document["connections"]}
    assert billing["ollama-local"] == "keyless"
    assert {billing[i] for i in ("claude-api", "openrouter-free", "gemini-free")} == {"unknown"}


@registers("subscription.json")
def subscription_json(text: str) -> None:
    document = json.loads(text)
    check_plan_shape(document)
    # R10: only claude-max-work is certainly paid for, with a hard stop, and usable
    assert pool_facts(document) == [
        ("subscription", "claude/claude-sonnet-4-5", ["claude-max-work"])]
    assert all(e["unverified"] == [] for e in document["pool"])  # R10 admits no doubt
    assert exclusions(document) == {
        ("claude-max-work", "claude-opus-4-1"): "quota-below-cutoff",
        ("claude-pro-personal", None): "quota-below-reentry",
        ("claude-max-extra", None): "overage-not-hard-stop",  # its own override (R2)
        ("claude-api", None): "billing-uncurated",
        ("codex-plus", None): "cooldown",
        ("codex-team", None): "quota-reset-since-reading",  # unknown excludes under R10
        ("copilot-seat", None): "overage-not-hard-stop",  # catalog overage unknown
        ("devin-team", None): "overage-not-hard-stop",  # billing checks come before gates
        ("antigravity-main", None): "quota-stale",
        ("ollama-local", None): "keyless-not-subscription",
        ("openrouter-free", None): "billing-uncurated",
        ("gemini-free", None): "billing-uncurated",
        ("openai-key", None): "billing-not-subscription",
        ("deepseek-key", None): "billing-not-subscription",
        ("groq-key", None): "billing-not-subscription",
    }
    assert [(r["rung"], r["state"]) for r in document["rungs"]] == [
        ("subscription", "serving"), *[(rung, "not-in-id") for rung in LADDER[1:]]]


@registers("coding-thrifty.json")
def coding_thrifty_json(text: str) -> None:
    """R13: the thrifty plan, less the one model of the fleet that is not a coding model."""
    document = json.loads(text)
    check_plan_shape(document)
    assert document["category"] == "coding"
    assert pool_facts(document) == [e for e in THRIFTY_POOL
                                    if e[1] != "ollama/llama3.3:70b"]
    assert exclusions(document) == {
        **THRIFTY_EXCLUDED, ("ollama-local", "llama3.3:70b"): "not-in-category"}


@registers("tight-thrifty.json")
def tight_thrifty_json(text: str) -> None:
    """R8 under examples/omniladder-tight.toml: cheap's $3 is spent, premium's $0 disables it,
    the quota rungs are as under thrifty."""
    document = json.loads(text)
    check_plan_shape(document)
    assert pool_facts(document) == [e for e in THRIFTY_POOL if e[0] in QUOTA_RUNGS]
    assert exclusions(document) == {
        **THRIFTY_EXCLUDED,
        ("openai-key", "gpt-5-mini"): "budget-spent", ("openai-key", "gpt-5.1"): "budget-disabled",
        ("deepseek-key", None): "budget-spent", ("claude-api", None): "budget-disabled"}
    rungs = {r["rung"]: r for r in document["rungs"]}
    assert (rungs["cheap"]["state"], rungs["cheap"]["budget_usd"]) == ("budget-spent", 3.0)
    assert rungs["cheap"]["spent_usd"] == spent_this_month()["cheap"] >= 3.0
    assert (rungs["premium"]["state"], rungs["premium"]["budget_usd"]) == ("disabled", 0.0)
    assert [rungs[r]["state"] for r in QUOTA_RUNGS] == ["serving"] * 3


# --- the table view, parsed ------------------------------------------------------------------

LABELS = ("allowlist:", "at:", "detail:", "why:")


def text_sections(text: str) -> dict[str, list[str]]:
    """A human view cut at its headings (the lines that start in column 0)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        line = line.rstrip()
        if line and not line[0].isspace():
            current = found.setdefault(line, [])
        elif current is not None:
            current.append(line)
    return found


def text_rows(lines: list[str]) -> list[tuple[list[str], dict[str, str]]]:
    """A section's rows, as a table (header, rule, wrapped last column) or stacked (the first
    columns on one line, the long ones labelled below): the cells and the labelled values."""
    table = any(line.strip().startswith("─") for line in lines)
    if table:
        lines = lines[[line.strip().startswith("─") for line in lines].index(True) + 1:]
    rows: list[tuple[list[str], dict[str, str]]] = []
    label = ""
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= 2:
            rows.append((re.split(r"\s{2,}", line.strip()), {}))
            label = ""
        elif table:
            rows[-1][0][-1] += " " + line.strip()
        elif line.strip().startswith(LABELS):
            label, value = line.strip().split(": ", 1)
            rows[-1][1][label] = value
        elif label:
            rows[-1][1][label] += " " + line.strip()
        else:
            rows[-1][0].append(line.strip())
    return rows


def allowlist_text(entry: Json) -> str:
    return ", ".join(c + (" (unverified)" if c in entry["unverified_connection_ids"] else "")
                     for c in entry["allowed_connection_ids"])


def positions_of(document: Json, connection: str) -> str:
    return ", ".join(f"#{e['position']}" for e in document["pool"]
                     if connection in e["unverified_connection_ids"])


def expected_views(document: Json, detail: bool) -> dict[str, list[tuple[str, ...]]]:
    """The rows every view of a plan shows, from its JSON document."""
    excluded = [x for x in document["excluded"]
                if detail or x["reason"] != "not-in-category"]
    unverified = {u["connection_id"]: u for e in document["pool"] for u in e["unverified"]}
    return {
        "ladder": [(r["rung"], r["state"], str(r["candidates"]), str(r["connections"]),
                    squash(r["note"])) for r in document["rungs"]],
        "pool": [(str(e["position"]), e["rung"], f"{e['provider']}/{e['model']}",
                  allowlist_text(e)) for e in document["pool"]],
        "unverified": [(u["connection_id"], u["reason"], positions_of(document, c),
                        squash(u["detail"])) for c, u in unverified.items()],
        "excluded": [(x["connection_id"], x["model"] or "all models", x["rung"] or "-",
                      x["reason"], squash(x["detail"])) for x in excluded],
    }


def parsed_text_views(text: str) -> dict[str, list[tuple[str, ...]]]:
    sections = text_sections(text)
    found: dict[str, list[tuple[str, ...]]] = {"unverified": [], "excluded": []}
    found["ladder"] = [(*c[:4], squash(c[4] if len(c) > 4 else f["why"]))
                       for c, f in text_rows(sections["Ladder"])]
    found["pool"] = [(*c[:3], squash(c[3] if len(c) > 3 else f["allowlist"]))
                     for c, f in text_rows(sections["Pool, in dispatch order"])]
    if "Unverified (admitted, quota unknown)" in sections:
        found["unverified"] = [
            (c[0], c[1], c[2] if len(c) > 2 else f["at"], squash(c[3] if len(c) > 3
                                                               else f["detail"]))
            for c, f in text_rows(sections["Unverified (admitted, quota unknown)"])]
    if "Excluded" in sections:
        found["excluded"] = [(*c[:4], squash(c[4] if len(c) > 4 else f["detail"]))
                             for c, f in text_rows(sections["Excluded"])]
    return found


def check_plan_text(name: str, text: str, detail: bool) -> None:
    document = plan_of(name)
    assert parsed_text_views(text) == expected_views(document, detail)
    lines = text.splitlines()
    assert lines[0] == f"omniladder plan {document['auto_id']}"
    assert lines[1].startswith(f"now {document['now']} (from the quota snapshot) · "
                               f"{len(fleet())} connections · ")
    assert lines[-1] == document["summary"]
    hidden = sum(x["reason"] == "not-in-category" for x in document["excluded"])
    note = [line for line in lines if "not-in-category exclusion" in line]
    assert note == ([] if detail or not hidden else [
        f"{hidden} not-in-category exclusion{'s' if hidden != 1 else ''} not listed "
        "(--detail or --json lists them)"])
    clamps = text_sections(text).get("Cooldown clamps (R9)", [])
    assert [line.split(":")[0].strip() for line in clamps if line.startswith("  ")
            and not line.startswith("   ")] == [c["connection_id"] for c in document["clamps"]]


for _name in ("thrifty", "subscription", "coding-thrifty", "tight-thrifty"):
    CHECKS[f"{_name}.txt"] = partial(check_plan_text, _name, detail=False)
for _columns in (60, 80, 120):
    CHECKS[f"thrifty-detail-{_columns}.txt"] = partial(check_plan_text, "thrifty", detail=True)


# --- markdown, parsed ------------------------------------------------------------------------


def unmark(cell: str) -> str:
    return re.sub(r"\\(.)", r"\1", cell.replace("`", "")).strip()


def markdown_tables(text: str) -> dict[str, list[list[str]]]:
    """Each table of a markdown view under the bold or #### heading above it, unescaped."""
    found: dict[str, list[list[str]]] = {}
    heading = ""
    for line in text.splitlines():
        if line.startswith(("**", "#### ")):
            heading = line.strip("*# ").split("**")[0]
        elif line.startswith("| ") and not line.startswith("| ---"):
            found.setdefault(heading, []).append(
                [unmark(cell) for cell in line[2:-2].split(" | ")])
    return {h: rows[1:] for h, rows in found.items()}  # less each header row


@registers("thrifty.md")
def thrifty_markdown(text: str) -> None:
    document = plan_of("thrifty")
    tables = markdown_tables(text)
    expected = expected_views(document, detail=True)
    assert [tuple(r) for r in tables["Ladder"]] == expected["ladder"]
    assert [tuple(r) for r in tables["Pool, in dispatch order"]] == expected["pool"]
    assert [tuple(r) for r in tables["Unverified"]] == expected["unverified"]
    assert [tuple(r) for r in tables["Excluded"]] == expected["excluded"]
    assert text.splitlines()[-1] == f"**{document['summary']}**"
    assert "…" not in text


# --- who ----------------------------------------------------------------------------------


def listing(provider: str, model: str) -> list[str]:
    return [c["id"] for c in fleet() if c["provider"] == provider
            and model in c.get("models", [])]


def check_who_document(document: Json, auto_ids: list[str]) -> None:
    """Every verdict `who` gives is the plan's own: the same positions, the same reasons."""
    assert [a["auto_id"] for a in document["auto_ids"]] == auto_ids
    provider, model = document["provider"], document["model"]
    for answer in document["auto_ids"]:
        plan = plan_document(answer["auto_id"])
        entries = [e for e in plan["pool"] if (e["provider"], e["model"]) == (provider, model)]
        assert [(p["position"], p["rung"], p["allowed_connection_ids"]) for p in answer["pool"]
                ] == [(e["position"], e["rung"], e["allowed_connection_ids"]) for e in entries]
        assert answer["served"] == bool(entries)
        assert [c["connection_id"] for c in answer["connections"]] == listing(provider, model)
        excluded = exclusions(plan)
        for row in answer["connections"]:
            connection = row["connection_id"]
            if row["state"] == "in":
                entry = next(e for e in entries if e["position"] == row["position"])
                assert connection in entry["allowed_connection_ids"]
                assert row["reason"] is None
                assert row["rung"] == entry["rung"]
            else:
                assert row["state"] == "out"
                assert row["position"] is None
                reason = excluded.get((connection, model)) or excluded[(connection, None)]
                assert row["reason"] == reason, row


def who_text_rows(text: str) -> list[tuple[str, ...]]:
    """The tree's id lines (column 4) and connection lines (column 8), as (kind, …)."""
    rows: list[tuple[str, ...]] = []
    for line in text.splitlines():
        body = line.lstrip("│├└─ ")
        column = len(line) - len(body)
        top = re.match(r"(auto/\S+): (served|not served)", body)
        if column == 4 and top:
            rows.append(("id", top[1], str(top[2] == "served")))
        row = re.match(r"(\S+) \((\w+)\): (?:in at #(\d+)|out — ([a-z-]+):)", body)
        if column == 8 and row:
            rows.append(("connection", row[1], row[2], row[3] or "", row[4] or ""))
    return rows


def check_who_text(args: list[str], text: str) -> None:
    document = json.loads(invoke("who", *args, "--config", str(EXAMPLES / "omniladder.toml"),
                                 "--json").stdout)
    expected: list[tuple[str, ...]] = []
    for answer in document["auto_ids"]:
        expected.append(("id", answer["auto_id"], str(answer["served"])))
        expected += [("connection", c["connection_id"], c["rung"],
                      str(c["position"] or ""), c["reason"] or "")
                     for c in answer["connections"]]
    assert who_text_rows(text) == expected
    lines = text.splitlines()
    assert lines[0] == f"omniladder who {args[0]}"
    count = len(listing(document["provider"], document["model"]))
    assert lines[1].endswith(f" · {count} connections list it")


@registers("who-sonnet.json")
def who_sonnet_json(text: str) -> None:
    document = json.loads(text)
    # by default `who` answers for both tiers of the plain ids
    check_who_document(document, ["auto/subscription", "auto/thrifty"])
    verdicts = {(a["auto_id"], c["connection_id"]): (c["state"], c["reason"])
                for a in document["auto_ids"] for c in a["connections"]}
    assert verdicts == {
        ("auto/subscription", "claude-max-work"): ("in", None),
        ("auto/subscription", "claude-pro-personal"): ("out", "quota-below-reentry"),
        ("auto/subscription", "claude-max-extra"): ("out", "overage-not-hard-stop"),
        ("auto/subscription", "claude-api"): ("out", "billing-uncurated"),
        ("auto/thrifty", "claude-max-work"): ("in", None),
        ("auto/thrifty", "claude-pro-personal"): ("out", "quota-below-reentry"),
        ("auto/thrifty", "claude-max-extra"): ("in", None),
        ("auto/thrifty", "claude-api"): ("in", None),  # on the premium rung
    }


@registers("who-codex-coding.json")
def who_codex_json(text: str) -> None:
    document = json.loads(text)
    check_who_document(document, ["auto/coding:subscription"])
    # codex-plus cools down until 12:30Z; codex-team's reading is outdated, which R10 refuses
    assert document["auto_ids"][0]["served"] is False
    assert [(c["connection_id"], c["reason"]) for c in document["auto_ids"][0]["connections"]
            ] == [("codex-plus", "cooldown"), ("codex-team", "quota-reset-since-reading")]


CHECKS["who-sonnet.txt"] = lambda text: check_who_text(["claude/claude-sonnet-4-5"], text)
CHECKS["who-codex-coding.txt"] = lambda text: check_who_text(
    ["codex/gpt-5.1-codex", "auto/coding:subscription"], text)


# --- audit omniroute ---------------------------------------------------------------------


@cache
def gateway_rows() -> list[Json]:
    rows: list[Json] = json.loads(
        (EXAMPLES / "omniroute-candidates.json").read_text(encoding="utf-8"))["candidates"]
    return rows


def in_use(row: Json) -> bool:
    """A gateway row the gateway would dispatch to: reachable, not excluded, not cooling down,
    not locked (docs/gateways.md)."""
    return (row["reachable"] and not row["excluded"] and not row["connectionCooldown"]
            and not row["modelLocked"])


BILLING_REASONS = {"billing-not-subscription", "billing-uncurated", "keyless-not-subscription",
                   "overage-not-hard-stop"}


@registers("audit-subscription.json")
def audit_json(text: str) -> None:
    """Each row the gateway uses that the subscription plan keeps out is a finding: a billing
    reason would bill, a quota or gate reason would dispatch to what cannot serve."""
    document = json.loads(text)
    rows = gateway_rows()
    plan = plan_of("subscription")
    excluded = exclusions(plan)
    expected = []
    for row in rows:
        reason = excluded.get((row["connectionId"], row["model"])) or excluded.get(
            (row["connectionId"], None))
        if in_use(row) and reason:
            kind = "would-bill" if reason in BILLING_REASONS else "would-dispatch-exhausted"
            expected.append((kind, row["connectionId"], row["model"], reason))
    found = [(f["kind"], f["connection_id"], f["model"], f["reason"])
             for f in document["findings"]]
    assert sorted(found) == sorted(expected)
    assert {f[1] for f in found} == {"claude-max-extra", "claude-api", "openai-key",
                                     "claude-pro-personal"}
    for finding in document["findings"]:
        row = rows[finding["gateway"]["row"]]  # the row is the candidate's index in the file
        assert (row["connectionId"], row["model"]) == (finding["connection_id"],
                                                       finding["model"])
        assert finding["gateway"]["used"] is True
    kinds = Counter(f["kind"] for f in document["findings"])
    assert document["counts"] == {
        "rows": len(rows), "used": sum(map(in_use, rows)), "would-bill": kinds["would-bill"],
        "would-dispatch-exhausted": kinds["would-dispatch-exhausted"],
        "would-dispatch-unknown": 0, "unknown-to-plan": 0, "missed-capacity": 0}
    assert document["passed"] is False  # the command exits 1
    assert document["plan_summary"] == plan["summary"]


def audit_document() -> Json:
    document: Json = json.loads(invoke(
        "audit", "omniroute", str(EXAMPLES / "omniroute-candidates.json"), "--config",
        str(EXAMPLES / "omniladder.toml"), "--json", exit_code=1).stdout)
    return document


def audit_rows(document: Json) -> dict[str, list[tuple[str, ...]]]:
    found: dict[str, list[tuple[str, ...]]] = {}
    for f in document["findings"]:
        found.setdefault(f["kind"], []).append(
            (f["connection_id"], f"{f['provider']}/{f['model']}", f["plan_rung"], f["reason"],
             "in use" if f["gateway"]["used"] else "not used", squash(f["detail"])))
    return found


@registers("audit-subscription.txt")
def audit_text(text: str) -> None:
    document = audit_document()
    found = {heading.split(" — ")[0]: [(*c[:5], squash(c[5])) for c, _ in text_rows(lines)]
             for heading, lines in text_sections(text).items()
             if heading.split(" — ")[0] in document["counts"]}
    assert found == audit_rows(document)
    assert text.splitlines()[-1] == document["summary"]


@registers("audit-subscription.md")
def audit_markdown(text: str) -> None:
    document = audit_document()
    found = {heading.split(" — ")[0]: [(*r[:5], squash(r[5])) for r in rows]
             for heading, rows in markdown_tables(text).items()}
    assert found == audit_rows(document)
    assert text.splitlines()[-1] == f"**{document['summary']}**"


# --- check ---------------------------------------------------------------------------------

# What each policy must report on the example fleet, by expectation: the checks that fail.
FAILING_CHECKS: dict[str, dict[str, list[str]]] = {
    "policy-failing.toml": {
        # thrifty climbs to the metered rungs: cheap and premium serve
        "auto/thrifty never bills per token": ["forbidden_rungs", "forbid_billing"],
        # codex-team, copilot-seat and antigravity-main are admitted unverified
        "every plan connection is verified": ["max_unverified"],
        # only claude-max-work serves; openai-key is out for its billing, not its budget
        "the personal Pro plan is serving": ["min_pool", "must_include", "expect_reason"],
        # the subscription rung leads every thrifty plan
        "the keyless backend leads coding work": ["head_rung"],
        "auto/subscription never bills": [],
    },
    "policy.toml": {name: [] for name in (
        "auto/subscription never bills", "auto/thrifty dispatches plans first",
        "auto/coding:thrifty keeps to coding models",
        "codex-plus returns once its 5h window resets (R9 clamp)")},
}


@registers("check-results.json")
def check_results(text: str) -> None:
    results = json.loads(text)
    assert [r["policy"] for r in results] == ["policy-failing.toml", "policy.toml",
                                              "policy.toml"]
    for result in results[:2]:
        failing = {e["name"]: [c["check"] for c in e["checks"] if not c["passed"]]
                   for e in result["expectations"]}
        assert failing == FAILING_CHECKS[result["policy"]]
        assert result["failed"] == [n for n, f in failing.items() if f]
        assert result["passed"] is (result["failed"] == [])
    custom = results[2]
    assert custom["passed"] is False
    assert {e["name"]: [c["check"] for c in e["checks"] if not c["passed"]]
            for e in custom["expectations"]} == {
        "every kind of check, failing": ["max_pool", "head_rung", "allowed_rungs",
                                         "must_exclude", "forbid_billing", "expect_reason"],
        "an empty pool": ["min_pool", "head_rung"],  # no multimodal model on a plan
        "one-item lists failing, every other check passing": ["forbidden_rungs",
                                                              "forbid_billing"]}
    thrifty = plan_of("thrifty")
    every = custom["expectations"][0]["checks"]
    # max_pool's evidence is the whole pool; allowed_rungs' is the entries on paid rungs
    assert len(every[0]["evidence"]) == len(thrifty["pool"])
    assert [line.split()[0] for line in every[2]["evidence"]] == [
        f"#{e['position']}" for e in thrifty["pool"] if e["rung"] not in QUOTA_RUNGS]
    # an expectation's own now wins (R14): codex-plus is back after its clamped cooldown
    clamp = results[1]["expectations"][3]
    assert (clamp["now"], clamp["now_source"]) == ("2026-11-29T12:31:00+00:00", "policy")


@registers("check-failing.md")
def check_markdown(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        junit = Path(folder) / "junit.xml"
        document = json.loads(invoke("check", str(EXAMPLES / "policy-failing.toml"), "--json",
                                     "--junit", str(junit), exit_code=1).stdout)
        suite = ET.parse(junit).getroot()
    checks = [(e["name"], e["auto_id"], c) for e in document["expectations"] for c in e["checks"]]
    rows = markdown_tables(text)[""]
    assert [(r[0].replace("*", ""), *r[1:6]) for r in rows] == [
        ("✅ pass" if c["passed"] else "❌ FAIL", name, auto_id, c["check"], c["expected"],
         c["actual"]) for name, auto_id, c in checks]
    failing = [e["name"] for e in document["expectations"] if not e["passed"]]
    assert failing == [n for n, f in FAILING_CHECKS["policy-failing.toml"].items() if f]
    assert re.findall(r"^- ❌ \*\*(.+?)\*\* — ", text, re.M) == failing
    assert text.splitlines()[-1] == f"**{document['summary']}**"
    # JUnit: one testcase per expectation, a failure for each failing one naming its checks
    assert (suite.get("tests"), suite.get("failures")) == (
        str(len(document["expectations"])), str(len(failing)))
    cases = suite.findall(".//testcase")
    assert [c.get("name") for c in cases] == [e["name"] for e in document["expectations"]]
    for case, expectation in zip(cases, document["expectations"], strict=True):
        failure = case.find("failure")
        assert (failure is None) is expectation["passed"]
        if failure is not None:
            names = [c["check"] for c in expectation["checks"] if not c["passed"]]
            assert failure.get("message", "").endswith(", ".join(names))


# --- export --------------------------------------------------------------------------------


@cache
def litellm_map() -> dict[str, Json]:
    data = tomllib.loads((EXAMPLES / "litellm-map.toml").read_text(encoding="utf-8"))
    return {c["id"]: c for c in data["connections"]}


def routed(connection: str, rung: str) -> bool:
    """A pool connection LiteLLM can reach as the plan says: mapped, and a subscription one
    only through a proxy (api_base) — docs/gateways.md."""
    route = litellm_map().get(connection)
    return route is not None and (rung != "subscription" or "api_base" in route)


def _escaped(text: str) -> str:
    """A model_info.id part: no ':' reaches an id (docs/gateways.md#export-litellm)."""
    return "".join(char if char.isascii() and (char.isalnum() or char in "._-")
                   else "".join(f"%{byte:02X}" for byte in char.encode()) for char in text)


@registers("export-litellm-thrifty.yaml")
def litellm_yaml(text: str) -> None:
    """The model list is the plan's pool in order, one deployment per routed connection, and
    litellm_params.order climbs with the pool entries that kept one."""
    document = yaml.safe_load(text)
    plan = plan_of("thrifty")
    expected = []
    kept = [e for e in plan["pool"] if any(routed(c, e["rung"])
                                           for c in e["allowed_connection_ids"])]
    for order, entry in enumerate(kept, start=1):
        for connection in entry["allowed_connection_ids"]:
            if routed(connection, entry["rung"]):
                route = litellm_map()[connection]
                params = {"model": route["model_prefix"] + entry["model"], "order": order}
                if "api_base" in route:
                    params["api_base"] = route["api_base"]
                if "api_key_env" in route:
                    params["api_key"] = f"os.environ/{route['api_key_env']}"
                parts = ("omniladder-thrifty", connection, entry["provider"], entry["model"])
                expected.append(("~".join(_escaped(part) for part in parts), params))
    assert [(d["model_info"]["id"], d["litellm_params"]) for d in document["model_list"]
            ] == expected
    assert {d["model_name"] for d in document["model_list"]} == {"omniladder-thrifty"}
    assert "router_settings" not in document  # no fallbacks out of the plan's pool


@registers("export-litellm-thrifty.txt")
def litellm_report(text: str) -> None:
    report = json.loads(invoke(
        "export", "litellm", "auto/thrifty", "--config", str(EXAMPLES / "omniladder.toml"),
        "--map", str(EXAMPLES / "litellm-map.toml"), "--json").stdout)
    plan = plan_of("thrifty")
    dropped = [e for e in plan["pool"] if not any(routed(c, e["rung"])
                                                  for c in e["allowed_connection_ids"])]
    assert [f["model"] for f in report["fidelity"] if f["code"] == "entry-dropped"] == [
        e["model"] for e in dropped]
    assert {f["connection_id"]: f["code"] for f in report["fidelity"]
            if f["code"].startswith("litellm-") and f["level"] == "dropped"} == {
        "copilot-seat": "litellm-not-mapped",
        "antigravity-main": "litellm-subscription-without-api-base"}
    deployments = sum(1 for e in plan["pool"] for c in e["allowed_connection_ids"]
                      if routed(c, e["rung"]))
    counts = Counter(f["level"] for f in report["fidelity"])
    assert text.splitlines()[-1] == (
        f"export litellm auto/thrifty → omniladder-thrifty: {deployments} deployments for "
        f"{len(plan['pool']) - len(dropped)} of {len(plan['pool'])} pool entries; "
        f"{counts['dropped']} dropped, {counts['warning']} warnings, {counts['info']} info")
    # the view lists each finding of the report under its level, with its code
    codes = [c for c in re.findall(r"^ ([a-z][a-z-]+)  ", text, re.M) if c != "code"]
    assert Counter(codes) == Counter(f["code"] for f in report["fidelity"])


@registers("export-omniroute-thrifty.json")
def omniroute_report(text: str) -> None:
    """The combo's steps are the plan's pool in order with the same allowlists; only the
    subscription steps fall back on quota exhaustion alone."""
    report = json.loads(text)
    plan = plan_of("thrifty")
    assert [(s["model"], s["allowedConnectionIds"], s["label"]) for s in
            report["document"]["models"]] == [
        (f"{e['provider']}/{e['model']}", e["allowed_connection_ids"], f"{e['rung']} rung")
        for e in plan["pool"]]
    assert [s.get("fallbackOnlyOnQuotaExhaustion", False) for s in
            report["document"]["models"]] == [e["rung"] == "subscription" for e in plan["pool"]]
    unverified = {c for e in plan["pool"] for c in e["unverified_connection_ids"]}
    assert {f["connection_id"] for f in report["fidelity"]
            if f["code"] == "unverified-exported"} == unverified
    levels = Counter(f["level"] for f in report["fidelity"])
    assert report["counts"] == {level: levels[level] for level in ("dropped", "warning",
                                                                    "info")}
    assert report["exported"]["pool_entries"] == len(plan["pool"])


# --- diff ----------------------------------------------------------------------------------


def expected_diff(old: Json, new: Json) -> dict[str, int]:
    """What two plans' documents differ in, counted from the documents themselves."""
    def entries(d: Json) -> dict[tuple[str, str, str], list[str]]:
        return {(e["rung"], e["provider"], e["model"]): e["allowed_connection_ids"]
                for e in d["pool"]}
    before, after = entries(old), entries(new)
    was, now = exclusions(old), exclusions(new)
    return {
        "pool_added": len(after.keys() - before.keys()),
        "pool_removed": len(before.keys() - after.keys()),
        "allowlist_changed": sum(before[k] != after[k] for k in before.keys() & after.keys()),
        "rung_state_changed": sum(a["state"] != b["state"]
                                  for a, b in zip(old["rungs"], new["rungs"], strict=True)),
        "exclusion_added": len(now.keys() - was.keys()),
        "exclusion_removed": len(was.keys() - now.keys()),
        "reason_changed": sum(was[k] != now[k] for k in was.keys() & now.keys()),
    }


@registers("plan-diffs.json")
def plan_diffs(text: str) -> None:
    found = json.loads(text)
    pairs = [("thrifty", "subscription"), ("thrifty", "tight-thrifty"),
             ("coding-thrifty", "thrifty"), ("thrifty", "thrifty")]
    assert len(found) == len(pairs)
    for (old, new), diff in zip(pairs, found, strict=True):
        counts = diff["counts"]
        expected = expected_diff(plan_of(old), plan_of(new))
        assert {k: counts[k] for k in expected} == expected, (old, new)
        assert counts["billing_changed"] == 0  # the same connections file throughout
    assert found[3]["summary"] == "no differences: the two plans route the same way"


@registers("diff-thrifty-tight.md")
def diff_markdown(text: str) -> None:
    rows = markdown_tables(text)[""]
    expected = expected_diff(plan_of("thrifty"), plan_of("tight-thrifty"))
    assert Counter((r[0], r[1]) for r in rows) == Counter({
        ("removed", "Pool"): expected["pool_removed"],
        ("changed", "Rungs"): expected["rung_state_changed"],
        ("added", "Exclusions"): expected["exclusion_added"]})
    tight = plan_of("tight-thrifty")
    removed = [r[2].split()[0] for r in rows if r[1] == "Pool"]
    assert removed == [f"#{e['position']}" for e in plan_of("thrifty")["pool"]
                       if e["rung"] not in QUOTA_RUNGS]
    assert {r[2].split(":")[0] for r in rows if r[1] == "Rungs"} == {
        r["rung"] for r in tight["rungs"] if r["state"] != "serving"}
    assert text.splitlines()[-1] == f"**{len(rows)} differences: " + ", ".join(
        part for part in (f"{expected['pool_removed']} pool entries removed",
                          f"{expected['rung_state_changed']} rung states changed",
                          f"{expected['exclusion_added']} new exclusions")) + "**"
