"""R1 billing classification and R2 narrowing overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omniladder.engine.billing import classify
from omniladder.errors import InputError
from omniladder.inputs.catalogs import load_catalogs
from omniladder.models import Connection, validate_record
from tests.builders import BILLING, BILLING_FILE, catalogs, conn, fleet, freeze, plan


def connection(**fields: Any) -> Connection:
    return validate_record(Connection, freeze(fields))


WIDE_AND_EXACT = (
    *BILLING,
    {"provider": "acme", "billing": "metered", "overage": "meters-to-paid"},
    {"provider": "acme", "auth_type": "oauth", "billing": "subscription", "overage": "hard-stop"},
    {"provider": "ollama", "auth_type": "none", "billing": "metered", "overage": "unknown"},
)


@pytest.mark.parametrize(
    ("provider", "auth_type", "billing", "overage", "source", "step"),
    [
        pytest.param("ollama", "none", "keyless", "hard-stop", "keyless", 1,
                     id="R1.1-keyless-wins-over-a-catalog-entry"),
        pytest.param("mystery", "none", "keyless", "hard-stop", "keyless", 1,
                     id="R1.1-keyless-uncurated-provider"),
        pytest.param("claude", "oauth", "subscription", "hard-stop", "catalog", 2,
                     id="R1.2-exact-provider-and-auth-type"),
        pytest.param("acme", "oauth", "subscription", "hard-stop", "catalog", 2,
                     id="R1.2-exact-beats-provider-wide"),
        pytest.param("acme", "apikey", "metered", "meters-to-paid", "catalog-provider-wide", 3,
                     id="R1.3-provider-wide"),
        pytest.param("openai", "apikey", "metered", "meters-to-paid", "catalog-provider-wide", 3,
                     id="R1.3-provider-wide-any-auth-type"),
        pytest.param("claude", "OAuth", "unknown", "unknown", "uncurated", 4,
                     id="R1.2-auth-type-is-case-sensitive"),
        pytest.param("Claude", "oauth", "unknown", "unknown", "uncurated", 4,
                     id="R1.2-provider-is-case-sensitive"),
        pytest.param("claude", "apikey", "unknown", "unknown", "uncurated", 4,
                     id="R1.4-uncurated-auth-type-of-a-curated-provider"),
        pytest.param("mystery", "apikey", "unknown", "unknown", "uncurated", 4,
                     id="R1.4-uncurated-provider"),
    ],
)
def test_classification(provider: str, auth_type: str, billing: str, overage: str, source: str,
                        step: int) -> None:
    info = classify(connection(id="c", provider=provider, auth_type=auth_type),
                    catalogs(WIDE_AND_EXACT))
    assert (info.billing, info.overage, info.source, info.step) == (billing, overage, source,
                                                                    step)
    assert (info.matched is not None) == (step in (2, 3))
    if info.matched is not None:
        assert info.matched.entry.provider == provider
        assert info.matched.file == BILLING_FILE


def test_R1_4_uncurated_is_treated_as_metered() -> None:
    info = classify(connection(id="c", provider="mystery", auth_type="apikey"), catalogs())
    assert info.treated_as_metered
    assert not classify(connection(id="c", provider="claude", auth_type="oauth"),
                        catalogs()).treated_as_metered


def test_R1_later_catalog_files_override_and_the_plan_records_the_file(tmp_path: Path) -> None:
    first = tmp_path / "first.toml"
    second = tmp_path / "second.toml"
    first.write_text('[[entries]]\nprovider = "acme"\nauth_type = "oauth"\n'
                     'billing = "metered"\noverage = "meters-to-paid"\n'
                     '[[entries]]\nprovider = "beta"\nbilling = "metered"\n'
                     'overage = "meters-to-paid"\n', encoding="utf-8")
    second.write_text('[[entries]]\nprovider = "acme"\nauth_type = "oauth"\n'
                      'billing = "subscription"\noverage = "hard-stop"\n', encoding="utf-8")
    loaded = load_catalogs([first, second], [], include_shipped=False)
    acme = classify(connection(id="a", provider="acme", auth_type="oauth"), loaded)
    beta = classify(connection(id="b", provider="beta", auth_type="oauth"), loaded)
    assert (acme.billing, acme.overage) == ("subscription", "hard-stop")
    assert acme.matched is not None
    assert acme.matched.file.endswith("second.toml")
    assert beta.matched is not None
    assert beta.matched.file.endswith("first.toml")


def test_R1_plan_records_the_matched_entry_per_connection() -> None:
    result = plan(fleet([conn("sub"), conn("key", "openai", "apikey"),
                         conn("loc", "ollama", "none"), conn("new", "mystery", "apikey")]))
    records = {r.id: (r.billing, r.overage, r.billing_source, r.catalog_file)
               for r in result.connections}
    assert records == {
        "sub": ("subscription", "hard-stop", "catalog", BILLING_FILE),
        "key": ("metered", "meters-to-paid", "catalog-provider-wide", BILLING_FILE),
        "loc": ("keyless", "hard-stop", "keyless", None),
        "new": ("unknown", "unknown", "uncurated", None),
    }


@pytest.mark.parametrize(
    ("provider", "auth_type", "override", "billing", "overage"),
    [
        pytest.param("claude", "oauth", {"billing": "metered"}, "metered", "hard-stop",
                     id="R2-subscription-narrowed-to-metered"),
        pytest.param("claude", "oauth", {"overage": "meters-to-paid"}, "subscription",
                     "meters-to-paid", id="R2-hard-stop-narrowed-to-meters-to-paid"),
        pytest.param("claude", "oauth", {"overage": "unknown"}, "subscription", "unknown",
                     id="R2-hard-stop-narrowed-to-unknown"),
        pytest.param("claude", "oauth", {"billing": "subscription", "overage": "hard-stop"},
                     "subscription", "hard-stop", id="R2-restating-the-catalog-is-allowed"),
        pytest.param("openai", "apikey", {"billing": "metered"}, "metered", "meters-to-paid",
                     id="R2-metered-stays-metered"),
        pytest.param("mystery", "apikey", {"billing": "metered"}, "metered", "unknown",
                     id="R2-uncurated-declared-metered"),
        pytest.param("ollama", "none", {"billing": "metered"}, "metered", "hard-stop",
                     id="R2-keyless-narrowed-to-metered"),
    ],
)
def test_R2_narrowing_overrides(provider: str, auth_type: str, override: dict[str, str],
                                billing: str, overage: str) -> None:
    info = classify(connection(id="c", provider=provider, auth_type=auth_type, **override),
                    catalogs())
    assert (info.billing, info.overage, info.source) == (billing, overage, "override")
    assert info.override == override


@pytest.mark.parametrize(
    ("provider", "auth_type", "override"),
    [
        pytest.param("openai", "apikey", {"billing": "subscription"},
                     id="R2-metered-to-subscription"),
        pytest.param("mystery", "apikey", {"billing": "subscription"},
                     id="R2-uncurated-to-subscription"),
        pytest.param("ollama", "none", {"billing": "subscription"},
                     id="R2-keyless-to-subscription"),
        pytest.param("devin-desktop", "oauth", {"overage": "hard-stop"},
                     id="R2-meters-to-paid-to-hard-stop"),
        pytest.param("cursor", "oauth", {"overage": "hard-stop"},
                     id="R2-unknown-overage-to-hard-stop"),
        pytest.param("mystery", "apikey", {"overage": "hard-stop"},
                     id="R2-uncurated-overage-to-hard-stop"),
    ],
)
def test_R2_widening_override_is_an_input_error(provider: str, auth_type: str,
                                                override: dict[str, str]) -> None:
    with pytest.raises(InputError) as caught:
        classify(connection(id="wide", provider=provider, auth_type=auth_type, **override),
                 catalogs(), "conns.toml")
    error = caught.value
    assert error.file == "conns.toml"
    assert error.field is not None
    assert error.field.endswith(next(iter(override)))
    assert "wide" in error.field
    # R1.1 decides a keyless backend before any catalog entry: no overlay can grant it
    granted_by = "(R1.1)" if auth_type == "none" else "catalog overlay"
    assert granted_by in error.message


def test_R2_overridden_connection_leaves_the_subscription_rung() -> None:
    result = plan(fleet([conn("extra", models=["sonnet"], billing="metered")],
                        [{"connection": "extra", "checked_at": "2026-11-29T11:59:00Z",
                          "remaining_percent": 50}]))
    assert [(e.rung, e.allowed_connection_ids) for e in result.pool] == [
        ("premium", ("extra",))]
    record = result.connections[0]
    assert record.billing_source == "override"
    assert record.override == {"billing": "metered"}
