"""R1/R2/R2a as an operator reads them: the exact widening error (file, field, message), the
typo hint of an uncurated connection, and the exact R10 detail of each billing check."""

from __future__ import annotations

from typing import Any

import pytest

from omniladder.engine.billing import classify
from omniladder.errors import InputError
from omniladder.models import Connection, validate_record
from tests.builders import at, catalogs, conn, fleet, freeze, plan, reading, window


def _connection(**fields: Any) -> Connection:
    return validate_record(Connection, freeze(fields))


@pytest.mark.parametrize(
    ("provider", "auth_type", "override", "message"),
    [
        pytest.param(
            "openai", "apikey", {"billing": "subscription"},
            "override would widen 'metered' to 'subscription' for connection 'wide'; overrides "
            "only narrow (R2). To grant it, add a billing catalog overlay (--catalog FILE or "
            "[catalogs] billing) with an entry for provider 'openai', auth_type 'apikey'",
            id="R2-billing-metered-to-subscription"),
        pytest.param(
            "mystery", "cookie", {"billing": "subscription"},
            "override would widen 'unknown' to 'subscription' for connection 'wide'; overrides "
            "only narrow (R2). To grant it, add a billing catalog overlay (--catalog FILE or "
            "[catalogs] billing) with an entry for provider 'mystery', auth_type 'cookie'",
            id="R2-billing-uncurated-to-subscription"),
        pytest.param(
            "cursor", "oauth", {"overage": "hard-stop"},
            "override would widen 'unknown' to 'hard-stop' for connection 'wide'; overrides "
            "only narrow (R2). To grant it, add a billing catalog overlay (--catalog FILE or "
            "[catalogs] billing) with an entry for provider 'cursor', auth_type 'oauth'",
            id="R2-overage-unknown-to-hard-stop"),
        pytest.param(
            "devin-desktop", "oauth", {"overage": "hard-stop"},
            "override would widen 'meters-to-paid' to 'hard-stop' for connection 'wide'; "
            "overrides only narrow (R2). To grant it, add a billing catalog overlay (--catalog "
            "FILE or [catalogs] billing) with an entry for provider 'devin-desktop', auth_type "
            "'oauth'", id="R2-overage-meters-to-paid-to-hard-stop"),
    ],
)
def test_R2_a_widening_override_names_file_field_and_both_values(
        provider: str, auth_type: str, override: dict[str, str], message: str) -> None:
    with pytest.raises(InputError) as caught:
        classify(_connection(id="wide", provider=provider, auth_type=auth_type, **override),
                 catalogs(), "conns.toml")
    key = next(iter(override))
    assert str(caught.value) == f"conns.toml: connections[id=wide].{key}: {message}"


def test_R2_a_keyless_connection_is_not_sent_to_a_catalog_overlay_that_cannot_grant() -> None:
    """R1.1 decides a keyless backend before any catalog entry, so an overlay for auth_type
    'none' changes nothing: the error must not point to one."""
    bad = _connection(id="local", provider="ollama", auth_type="none", billing="subscription")
    with pytest.raises(InputError) as caught:
        classify(bad, catalogs(), "conns.toml")
    assert str(caught.value) == (
        "conns.toml: connections[id=local].billing: override would widen 'keyless' to "
        "'subscription' for connection 'local'; overrides only narrow (R2). A keyless backend "
        "(auth_type \"none\") is keyless whatever the billing catalog says (R1.1): "
        "auto/subscription never serves it, auto/thrifty serves it on the keyless rung")


def test_R2_a_widening_error_without_a_file_name_calls_the_file_connections() -> None:
    bad = _connection(id="w", provider="openai", auth_type="apikey", billing="subscription")
    with pytest.raises(InputError) as caught:
        classify(bad, catalogs())
    assert caught.value.file == "connections"


def test_R2_the_planner_names_the_connections_file_of_the_inputs() -> None:
    inputs = fleet([conn("w", "openai", "apikey", billing="subscription")])
    with pytest.raises(InputError) as caught:
        plan(inputs)
    assert caught.value.file == "connections.toml"
    assert caught.value.field == "connections[id=w].billing"
    # inputs that do not say which file the connections came from: the generic name
    with pytest.raises(InputError) as caught:
        plan(inputs._replace(files={}))
    assert caught.value.file == "connections"


@pytest.mark.parametrize(("provider", "auth_type", "near"), [
    ("claud", "oauth", "provider 'claude'"),
    ("claude", "oauht", "auth_type 'oauth'"),
    ("codex", "oath", "auth_type 'oauth'"),
    ("openai", "apikey", None),          # provider-wide entry: curated, nothing to hint
    ("zzz-unrelated", "oauth", None),
    ("claude", "zzzzzz", None),          # a curated provider, no auth type near it
])
def test_R1_4_near_catalog_key(provider: str, auth_type: str, near: str | None) -> None:
    cats = catalogs()
    first = classify(_connection(id="c", provider=provider, auth_type=auth_type), cats)
    assert first.near == near
    # asked again on the same catalogs (another connection, the memo answers): the same hint
    again = classify(_connection(id="d", provider=provider, auth_type=auth_type), cats)
    assert again.near == near


def test_R1_4_an_auth_type_hint_never_names_a_provider_wide_entry() -> None:
    """A provider-wide entry has no auth type, so it cannot be what a typo meant."""
    cats = catalogs([{"provider": "acme", "billing": "metered", "overage": "unknown"},
                     {"provider": "claude", "auth_type": "oauth", "billing": "subscription",
                      "overage": "hard-stop"}])
    info = classify(_connection(id="c", provider="claude", auth_type="oauthh"), cats)
    assert info.near == "auth_type 'oauth'"


def test_R1_4_two_connections_with_the_same_typo_both_get_the_hint() -> None:
    inputs = fleet([conn("a", "claud", "oauth", models=["m"]),
                    conn("b", "claud", "oauth", models=["m"])])
    result = plan(inputs, "auto/subscription")
    details = {x.connection_id: (x.reason, x.detail) for x in result.excluded}
    expected = ("billing-uncurated", "provider 'claud' with auth_type 'oauth' is not in the "
                "billing catalog; treated as metered (did you mean provider 'claude'?)")
    assert details == {"a": expected, "b": expected}


def test_R1_4_each_uncurated_connection_gets_its_own_hint() -> None:
    inputs = fleet([conn("a", "claud", "oauth", models=["m"]),
                    conn("b", "codex", "oath", models=["m"]),
                    conn("c", "zzz-unrelated", "oauth", models=["m"])])
    result = plan(inputs, "auto/subscription")
    hints = {x.connection_id: x.detail.partition("treated as metered")[2]
             for x in result.excluded}
    assert hints == {"a": " (did you mean provider 'claude'?)",
                     "b": " (did you mean auth_type 'oauth'?)", "c": ""}


# --- R10's billing checks, the exact detail of each -----------------------------------------

FRESH = window("5h", 50, at(hours=2))


@pytest.mark.parametrize(("connection", "billing", "reason", "detail"), [
    pytest.param(conn("c", "ollama", "none", models=["qwen"]), None,
                 "keyless-not-subscription",
                 "keyless backend; auto/subscription serves only plans you pay for",
                 id="keyless"),
    pytest.param(conn("c", "openai", "apikey", models=["gpt-mini"]), None,
                 "billing-not-subscription", "billed per token (catalog)",
                 id="metered-by-catalog"),
    pytest.param(conn("c", "claude", "oauth", billing="metered", models=["sonnet"]), None,
                 "billing-not-subscription", "billed per token by override",
                 id="metered-by-override"),
    pytest.param(conn("c", "claude", "oauth", billing="metered", overage="meters-to-paid",
                      models=["sonnet"]), None,
                 "billing-not-subscription", "billed per token by override",
                 id="metered-by-override-with-an-overage-override-too"),
    pytest.param(conn("c", "mystery", "apikey", billing="metered", models=["m1"]), None,
                 "billing-not-subscription", "billed per token by override",
                 id="uncurated-declared-metered"),
    pytest.param(conn("c", "claude", "oauth", overage="meters-to-paid", models=["sonnet"]),
                 None, "overage-not-hard-stop",
                 "overage meters-to-paid by override: past the plan it bills",
                 id="overage-by-override"),
    pytest.param(conn("c", "cursor", "oauth", models=["sonnet"]), None,
                 "overage-not-hard-stop",
                 "overage unknown (catalog): whether it bills past the plan is unknown",
                 id="overage-unknown-by-catalog"),
    pytest.param(conn("c", "devin-desktop", "oauth", models=["devin"]), None,
                 "overage-not-hard-stop",
                 "overage meters-to-paid (catalog): past the plan it bills",
                 id="overage-meters-to-paid-by-catalog"),
    pytest.param(conn("c", "acme", "oauth", models=["a1"]),
                 [{"provider": "acme", "billing": "metered", "overage": "meters-to-paid"}],
                 "billing-not-subscription", "billed per token (catalog)",
                 id="metered-by-a-provider-wide-entry"),
])
def test_R10_billing_check_details(connection: dict[str, Any],
                                   billing: list[dict[str, Any]] | None, reason: str,
                                   detail: str) -> None:
    kwargs: dict[str, Any] = {} if billing is None else {"billing": billing}
    inputs = fleet([connection], [reading("c", FRESH)], **kwargs)
    result = plan(inputs, "auto/subscription")
    assert [(x.reason, x.detail) for x in result.excluded] == [(reason, detail)]


def test_R10_an_observation_that_was_not_applied_does_not_name_itself() -> None:
    """A refused report (stale) leaves the catalog as the source of the overage detail."""
    inputs = fleet([conn("c", "cursor", "oauth", models=["sonnet"])],
                   [reading("c", at(hours=-1), FRESH, overage="hard-stop")])
    result = plan(inputs, "auto/subscription")
    assert [(x.reason, x.detail) for x in result.excluded] == [
        ("overage-not-hard-stop",
         "overage unknown (catalog): whether it bills past the plan is unknown")]


def test_R10_an_applied_observation_names_when_it_was_reported() -> None:
    inputs = fleet([conn("c", "claude", "oauth", models=["sonnet"])],
                   [reading("c", at(minutes=-1), FRESH, overage="meters-to-paid")])
    result = plan(inputs, "auto/subscription")
    assert [(x.reason, x.detail) for x in result.excluded] == [
        ("overage-not-hard-stop",
         "overage meters-to-paid (reported at 11:59Z): past the plan it bills")]
