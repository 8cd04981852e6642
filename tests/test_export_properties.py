"""Invariants of every export over generated fleets (tests/strategies.py), for every auto id
and both gateways: the deployments / steps in order are the plan's pool and allowlists,
auto/subscription never exports a paid rung, no allowlist is ever empty, and every document
is what the gateway's documented fields allow. The LiteLLM text is read back with a YAML
parser, also with arbitrary text in every name."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omniladder.analyses.export.core import export
from omniladder.analyses.export.litellm import document_text, parse_deployment_id
from omniladder.analyses.export.routes import ConnectionRoute
from omniladder.analyses.export.source import ExportEntry, ExportMark, ExportPlan
from omniladder.commands.export_cmd import exported_plan
from omniladder.engine.autoid import all_auto_ids, parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.errors import UsageError
from tests.builders import plan
from tests.strategies import input_sets
from tests.test_export import (
    LITELLM_SCHEMA,
    OMNIROUTE_SCHEMA,
    exported_litellm_pool,
    schema_errors,
)

PAID = {"cheap", "premium"}
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def routes_for(inputs: LoadedInputs, unmapped: frozenset[str]) -> dict[str, ConnectionRoute]:
    return {c.id: ConnectionRoute(id=c.id, model_prefix="openai/",
                                  api_base=f"http://proxy.internal/{c.id}/v1",
                                  api_key_env=f"KEY_{c.id.upper()}")
            for c in inputs.connections if c.id not in unmapped}


@SETTINGS
@given(inputs=input_sets(), auto_id=st.sampled_from(all_auto_ids()),
       verified_only=st.booleans(), data=st.data())
def test_litellm_exports_follow_the_plan_and_never_bill_auto_subscription(
        inputs: LoadedInputs, auto_id: str, verified_only: bool, data: st.DataObject) -> None:
    made = plan(inputs, auto_id)
    source = exported_plan(made)
    ids = [c.id for c in inputs.connections]
    unmapped = frozenset(data.draw(st.lists(st.sampled_from(ids), unique=True)
                                   if ids else st.just([])))
    routes = routes_for(inputs, unmapped)
    wanted = {cid for entry in made.pool for cid in entry.allowed_connection_ids}
    if wanted and not wanted & set(routes):  # an empty group for a full pool: refused
        with pytest.raises(UsageError, match="--map"):
            export("litellm", source, routes=routes, verified_only=verified_only)
        return
    result = export("litellm", source, routes=routes, verified_only=verified_only)
    loaded = yaml.safe_load(result.text)
    assert loaded == result.document
    assert schema_errors(loaded, LITELLM_SCHEMA, LITELLM_SCHEMA) == []
    expected = []
    for entry in made.pool:
        kept = [cid for cid in entry.allowed_connection_ids if cid not in unmapped
                and not (verified_only and cid in entry.unverified_connection_ids)]
        if kept:
            expected.append((f"{entry.provider}/{entry.model}", kept))
    assert [(candidate, cids) for _, candidate, cids in exported_litellm_pool(loaded)] \
        == expected
    orders = [d["litellm_params"]["order"] for d in loaded["model_list"]]
    assert orders == sorted(orders)
    assert sorted(set(orders)) == list(range(1, len(set(orders)) + 1))
    ids_written = [d["model_info"]["id"] for d in loaded["model_list"]]
    assert len(ids_written) == len(set(ids_written))
    rung_of = {(f"{e.provider}/{e.model}"): e.rung for e in made.pool}
    rungs = {rung_of["/".join(_candidate(d["model_info"]["id"]))]
             for d in loaded["model_list"]}
    if made.auto_id.tier == "subscription":
        assert rungs <= {"subscription"}
        assert not rungs & PAID
    assert "router_settings" not in loaded
    assert bool(loaded["model_list"]) != ("empty-export" in {f.code for f in result.fidelity})


def _candidate(identity: str) -> tuple[str, str]:
    parsed = parse_deployment_id(identity)
    assert parsed is not None
    assert ":" not in identity
    return parsed[2], parsed[3]


@SETTINGS
@given(inputs=input_sets(), auto_id=st.sampled_from(all_auto_ids()), verified_only=st.booleans())
def test_omniroute_exports_follow_the_plan_and_never_bill_auto_subscription(
        inputs: LoadedInputs, auto_id: str, verified_only: bool) -> None:
    made = plan(inputs, auto_id)
    result = export("omniroute", exported_plan(made), verified_only=verified_only)
    document = json.loads(result.text)
    assert schema_errors(document, OMNIROUTE_SCHEMA, OMNIROUTE_SCHEMA) == []
    expected = []
    for entry in made.pool:
        kept = [cid for cid in entry.allowed_connection_ids
                if not (verified_only and cid in entry.unverified_connection_ids)]
        if kept:
            expected.append((f"{entry.provider}/{entry.model}", kept,
                             entry.rung == "subscription"))
    assert [(s["model"], s["allowedConnectionIds"],
             s.get("fallbackOnlyOnQuotaExhaustion", False)) for s in document["models"]] \
        == expected
    if made.auto_id.tier == "subscription":
        assert all(s.get("fallbackOnlyOnQuotaExhaustion") for s in document["models"])
        assert all(e.rung == "subscription" for e in made.pool)
    assert all(step["allowedConnectionIds"] for step in document["models"])


TEXT = st.text(min_size=1, max_size=12)
"""Any text at all: control characters, line separators, lone surrogates, astral planes."""


@st.composite
def odd_plans(draw: st.DrawFn) -> tuple[ExportPlan, dict[str, ConnectionRoute]]:
    entries = []
    routes: dict[str, ConnectionRoute] = {}
    for position in range(1, draw(st.integers(1, 4)) + 1):
        # a connection id is never blank (ConnectionRoute refuses one): any other text
        allowed = tuple(draw(st.lists(TEXT.filter(str.strip), min_size=1, max_size=3,
                                      unique=True)))
        entries.append(ExportEntry(position=position, rung="free", provider=draw(TEXT),
                                   model=draw(TEXT), allowed=allowed,
                                   unverified=(ExportMark(allowed[0], draw(TEXT), draw(TEXT)),)))
        for cid in allowed:
            routes[cid] = ConnectionRoute(id=cid, model_prefix=draw(st.text(max_size=6)))
    source = ExportPlan(auto_id=parse_auto_id("auto/thrifty"), now="2026-11-29T12:00:00Z",
                        now_source="flag",
                        entries=tuple(entries), rung_notes={}, warnings=(), plan_file=None)
    return source, routes


@SETTINGS
@given(odd=odd_plans())
def test_the_litellm_text_reads_back_the_same_in_yaml_whatever_the_names(
        odd: tuple[ExportPlan, dict[str, ConnectionRoute]]) -> None:
    """JSON is YAML only where YAML 1.1 allows the characters: the writer escapes the rest,
    so PyYAML (what LiteLLM loads its config with) and json read the same document."""
    source, routes = odd
    result = export("litellm", source, routes=routes)
    text = document_text(source, result.document)
    assert yaml.safe_load(text) == result.document
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    parsed: Any = json.loads(body)
    assert parsed == result.document
    text.encode("utf-8", errors="strict")  # no lone surrogate reaches the file raw
