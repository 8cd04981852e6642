"""Every closed vocabulary of the product, listed in full: dropping, renaming or adding a
member fails here, so the change is made on purpose (with the docs and the JSON contract,
docs/contract.md) and never by accident.

Each list is written out by hand; the ``Literal`` types that mypy reads are checked against
the runtime tuples and sets they shadow.
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from omniladder.analyses.why import COMEBACK_REASONS
from omniladder.engine.autoid import TIERS, AutoTier, NowSource, all_auto_ids
from omniladder.engine.billing import BillingClass, BillingSource, OverageClass, OverageSource
from omniladder.engine.budgets import BudgetState
from omniladder.engine.quota import VerdictKind
from omniladder.engine.records import DOUBTFUL_STATUSES, REASON_CODES, RungState
from omniladder.engine.tiers import TierSource
from omniladder.errors import EXIT_MEANINGS, ExitCode, InputError
from omniladder.inputs.input_set import load_settings
from omniladder.inputs.scopes import ScopeKind
from omniladder.models import (
    CATEGORIES,
    PAID_RUNGS,
    QUOTA_RUNGS,
    RUNGS,
    SECRET_KEYS,
    TERMINAL_STATUSES,
    Billing,
    Category,
    ConnectionStatus,
    ObservedOverage,
    Overage,
    ReadingStatus,
    Rung,
    Tier,
)
from omniladder.scope_models import (
    QuotaSource,
    WindowAliasEntry,
    WindowAnchor,
    WindowScopeEntry,
)


def test_reason_codes_in_the_spec_order() -> None:
    """SPEC §4.2: every reason code a plan can give, in the SPEC's order, then this project's
    two additions (``no-models``, ``connection-status-unknown``), then SPEC v1.4's
    ``quota-below-reserve`` (R16)."""
    assert REASON_CODES == (
        "inactive", "terminal-status", "cooldown", "billing-not-subscription",
        "billing-uncurated", "keyless-not-subscription", "overage-not-hard-stop",
        "quota-missing", "quota-unknown", "quota-stale", "quota-reset-since-reading",
        "quota-exhausted", "quota-below-cutoff", "quota-below-reentry", "budget-disabled",
        "budget-spent", "not-in-category", "no-models", "connection-status-unknown",
        "quota-below-reserve",
    )
    assert sorted(COMEBACK_REASONS) == [
        "budget-spent", "cooldown", "quota-below-cutoff", "quota-below-reentry",
        "quota-below-reserve", "quota-exhausted", "quota-missing", "quota-reset-since-reading",
        "quota-stale", "quota-unknown",
    ]


SECRETS = ("api_key", "apikey", "access_token", "refresh_token", "id_token", "token",
           "password", "cookie", "secret", "client_secret", "authorization")


def test_secret_keys_the_guard_refuses() -> None:
    """Input files never hold credentials: every key name the loader refuses."""
    assert frozenset(SECRETS) == SECRET_KEYS
    assert len(SECRETS) == len(SECRET_KEYS)


@pytest.mark.parametrize("key", [*SECRETS, "API_Key", " Token "])
def test_each_secret_key_is_refused_without_showing_its_value(key: str,
                                                              tmp_path: Path) -> None:
    """Exit 2 semantics (InputError) naming the file and the key; the value never appears.
    Key names match whatever their case and surrounding spaces."""
    canary = "canary-7f3a9c"
    settings = tmp_path / "omniladder.toml"
    settings.write_text(f'[ladder]\n"{key}" = "{canary}"\n', encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_settings(settings)
    text = str(raised.value)
    assert "secret" in text
    assert raised.value.field is not None
    assert key in raised.value.field
    assert canary not in text


def test_connection_reading_and_terminal_statuses() -> None:
    """R5, R10, R11, SPEC §2: a connection's own status, a reading's status, and which
    connection statuses close it for good (terminal) or put it in doubt."""
    assert get_args(ConnectionStatus) == (
        "ok", "unknown", "error",
        "banned", "expired", "credits_exhausted", "deactivated", "unavailable",
    )
    assert sorted(TERMINAL_STATUSES) == ["banned", "credits_exhausted", "deactivated",
                                         "expired", "unavailable"]
    assert sorted(DOUBTFUL_STATUSES) == ["error", "unknown"]
    assert set(get_args(ConnectionStatus)) == TERMINAL_STATUSES | DOUBTFUL_STATUSES | {"ok"}
    assert get_args(ReadingStatus) == ("ok", "exhausted", "unknown")


def test_auto_id_categories_and_tiers() -> None:
    """R13: the auto-id grammar's categories and tiers, and so every auto id."""
    assert CATEGORIES == ("coding", "reasoning", "vision", "chat", "multimodal")
    assert get_args(Category) == CATEGORIES
    assert TIERS == ("subscription", "thrifty")
    assert get_args(AutoTier) == TIERS
    assert len(all_auto_ids()) == 2 + 5 * 2
    assert all_auto_ids()[:3] == ("auto/subscription", "auto/thrifty",
                                  "auto/coding:subscription")
    assert get_args(NowSource) == ("flag", "snapshot", "clock")


def test_rungs_and_their_states() -> None:
    """R4, R8, R11: the rungs in ladder order, which are quota rungs and which paid, the
    economic tiers (R3) and every state a rung can be in."""
    assert RUNGS == ("subscription", "keyless", "free", "cheap", "premium")
    assert get_args(Rung) == RUNGS
    assert sorted(QUOTA_RUNGS) == ["free", "keyless", "subscription"]
    assert PAID_RUNGS == ("cheap", "premium")
    assert get_args(Tier) == ("free", "cheap", "premium")
    assert get_args(TierSource) == ("free-provider", "catalog-override", "price",
                                    "not-in-catalog")
    assert get_args(RungState) == ("serving", "exhausted", "empty", "disabled", "budget-spent",
                                   "not-in-id")
    assert get_args(BudgetState) == ("none", "disabled", "spent", "within", "unenforced")
    assert get_args(VerdictKind) == ("usable", "unknown", "exhausted")


def test_billing_and_overage_vocabulary() -> None:
    """R1, R2, R2a: billing classes and overage behaviours, as input and as resolved, and
    where each resolution came from."""
    assert get_args(Billing) == ("subscription", "metered")
    assert get_args(Overage) == ("hard-stop", "meters-to-paid", "unknown")
    assert get_args(ObservedOverage) == ("hard-stop", "meters-to-paid")
    assert get_args(BillingClass) == ("subscription", "metered", "unknown", "keyless")
    assert get_args(OverageClass) == get_args(Overage)
    assert get_args(BillingSource) == ("keyless", "catalog", "catalog-provider-wide",
                                       "uncurated", "override")
    assert get_args(OverageSource) == (*get_args(BillingSource), "observed")


def test_window_scope_entry_fields() -> None:
    """SPEC §6: the fields a window-scope catalog entry and an alias entry may carry (any
    other key is refused), a window's anchors, the kinds of answer a scope gives, and the
    import sources."""
    assert list(WindowScopeEntry.model_fields) == [
        "provider", "window", "models", "exclude_models", "ignore", "zero_is_sentinel",
        "duration", "anchor", "reason", "source", "reviewed",
    ]
    assert get_args(WindowAnchor) == ("first-use", "fixed")  # SPEC §10.3
    assert list(WindowAliasEntry.model_fields) == [
        "provider", "window", "models", "reason", "source", "reviewed",
    ]
    assert get_args(ScopeKind) == ("all", "models", "ignore", "none")
    assert get_args(QuotaSource) == ("claude-usage", "codex-sessions", "copilot-user",
                                     "gemini-quota")


def test_exit_codes_and_their_meanings() -> None:
    """SPEC §4.3: three exit codes, each with the one meaning the help, the README and
    docs/contract.md print."""
    assert [(int(code), code.name) for code in ExitCode] == [
        (0, "ANSWERED"), (1, "NO"), (2, "UNANSWERABLE")]
    assert {int(code): meaning for code, meaning in EXIT_MEANINGS.items()} == {
        0: "the question was answered (an empty pool is an answer)",
        1: 'the answer is "no": an empty pool under --fail-on-empty, a failed check, a '
           "changed plan, a new catalog problem, a gateway audit that would bill or dispatch "
           "exhausted or unknown connections, an export that differs from the deployed "
           "configuration, traffic that leaked more than its allowance or whose leak could "
           "not be priced",
        2: "the question could not be answered: usage error, unreadable or invalid input",
    }
