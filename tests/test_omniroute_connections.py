"""provider_connections rows → connection tables, and the notes an operator reads on stderr.

docs/sources.md#omniroute and the importer's docstring: id, provider, auth_type, is_active →
active, test_status → status (OmniRoute's terminal set kept; ``unavailable`` is a cooldown,
docs/sources.md#omniroute), rate_limited_until, display_name or else name → label unless it
looks like an e-mail address, models from the model catalog else default_model. An empty provider or
auth_type, a duplicate id or a bad instant is exit 2 naming the file and the row's field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from omniladder.errors import InputError
from omniladder.sources.omniroute.connections import map_connections
from omniladder.sources.omniroute.database import CONNECTION_COLUMNS
from tests.omniroute_direct import shipped


def _row(cid: Any, provider: Any = "mystery", auth_type: Any = "apikey", *,
         name: Any = None, display_name: Any = None, is_active: Any = 1,
         test_status: Any = None, rate_limited_until: Any = None,
         default_model: Any = "m-1", priority: Any = 1) -> dict[str, Any]:
    row = {"id": cid, "provider": provider, "auth_type": auth_type, "name": name,
           "display_name": display_name, "is_active": is_active, "test_status": test_status,
           "rate_limited_until": rate_limited_until, "default_model": default_model,
           "priority": priority}
    assert tuple(row) == CONNECTION_COLUMNS
    return row


def _map(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    notes: list[str] = []
    catalogs, _ = shipped()
    return map_connections(rows, catalogs, "storage.sqlite", notes), notes


def _refusal(rows: Sequence[dict[str, Any]]) -> str:
    with pytest.raises(InputError) as caught:
        _map(rows)
    return str(caught.value)


# --- refusals -------------------------------------------------------------------------------


def test_a_duplicate_id_names_the_column() -> None:
    assert _refusal([_row("c1"), _row(" c1 ")]) == (
        "storage.sqlite: provider_connections.id: duplicate connection id 'c1'")


@pytest.mark.parametrize(("provider", "auth_type", "field"), [
    ("", "oauth", "provider"), (None, "oauth", "provider"), ("claude", "  ", "auth_type"),
    ("claude", None, "auth_type"), (None, None, "provider"),
])
def test_an_empty_provider_or_auth_type_names_the_row_and_column(
        provider: Any, auth_type: Any, field: str) -> None:
    assert _refusal([_row("c1", provider, auth_type)]) == (
        f"storage.sqlite: provider_connections[id=c1].{field}: is empty")


def test_a_bad_rate_limited_until_names_the_row() -> None:
    assert _refusal([_row("c1", rate_limited_until="after lunch")]) == (
        "storage.sqlite: provider_connections[id=c1].rate_limited_until: not an ISO 8601 "
        "timestamp: 'after lunch'")


# --- the mapping and its notes ----------------------------------------------------------------


def test_rows_with_an_empty_id_are_skipped_and_the_rest_still_mapped() -> None:
    tables, notes = _map([_row(""), _row("c2"), _row(None), _row("c3")])
    assert [t["id"] for t in tables] == ["c2", "c3"]
    assert notes == ["skipped a provider_connections row with an empty id"] * 2


def test_status_mapping_and_its_notes() -> None:
    """R5: terminal statuses kept; unavailable is a cooldown (with an end) or error."""
    rows = [
        _row("cool-1", test_status="unavailable", rate_limited_until="2026-11-29T13:00:00Z"),
        _row("cool-2", test_status=" Unavailable ", rate_limited_until=1795957200000),
        _row("fail-1", test_status="UNAVAILABLE"),
        _row("fail-2", test_status="unavailable"),
        _row("odd-1", test_status="testing"), _row("odd-2", test_status="paused"),
        _row("odd-3", test_status="testing"),
        _row("ok-1", test_status="active"), _row("gone", test_status="banned"),
        _row("plain"),
    ]
    tables, notes = _map(rows)
    by_id = {t["id"]: t for t in tables}
    assert by_id["cool-1"] == {"id": "cool-1", "provider": "mystery", "auth_type": "apikey",
                               "models": ["m-1"], "active": True,
                               "rate_limited_until": "2026-11-29T13:00:00Z"}
    assert by_id["cool-2"]["rate_limited_until"] == "2026-11-29T13:00:00Z"
    assert "status" not in by_id["cool-2"]
    assert by_id["fail-1"]["status"] == by_id["fail-2"]["status"] == "error"
    assert "rate_limited_until" not in by_id["fail-1"]
    assert [by_id[c].get("status") for c in ("odd-1", "odd-2", "ok-1", "gone", "plain")] == [
        None, None, "ok", "banned", None]
    assert notes == [
        "test_status 'unavailable' is OmniRoute's cooldown, imported as rate_limited_until, "
        "not as a terminal status: cool-1, cool-2",
        "test_status 'unavailable' without rate_limited_until imported as status 'error' "
        "(not terminal): fail-1, fail-2",
        "test_status values that are neither terminal nor a connection status were imported "
        "as no status: 'paused' ×1, 'testing' ×2",
    ]


def test_no_notes_for_a_clean_fleet() -> None:
    tables, notes = _map([_row("c1", test_status="active"), _row("c2", test_status="banned")])
    assert notes == []
    assert [t["status"] for t in tables] == ["ok", "banned"]


def test_models_from_the_catalog_else_default_model_else_a_note() -> None:
    rows = [_row("n1", "nowhere", default_model=None), _row("n2", "nowhere", default_model=""),
            _row("d1", "nowhere", default_model=" d-model "), _row("cat", "claude", "oauth")]
    tables, notes = _map(rows)
    by_id = {t["id"]: t for t in tables}
    assert "models" not in by_id["n1"]
    assert "models" not in by_id["n2"]
    assert by_id["d1"]["models"] == ["d-model"]
    assert "claude-sonnet-4-5" in by_id["cat"]["models"]
    assert notes == [
        "no model known for n1, n2 (provider not in the model catalog and no default_model): "
        "add models to connections.toml or a model catalog overlay"]


@pytest.mark.parametrize(("raw", "active"), [
    (1, True), (0, False), (None, False), ("1", True), (" TRUE ", True), ("yes", True),
    ("Yes", True), ("0", False), ("false", False), ("no", False), ("", False),
])
def test_is_active_flag(raw: Any, active: bool) -> None:
    (table,), _ = _map([_row("c1", is_active=raw)])
    assert table["active"] is active


@pytest.mark.parametrize(("name", "display_name", "label"), [
    ("n", "Display", "Display"), ("n", "  ", "n"), ("n", "me@example.com", "n"),
    ("me@example.com", None, None), (None, None, None), (" spaced ", None, "spaced"),
])
def test_label_is_display_name_else_name_never_an_email(name: Any, display_name: Any,
                                                         label: str | None) -> None:
    (table,), _ = _map([_row("c1", name=name, display_name=display_name)])
    assert table.get("label") == label


def test_connections_are_ordered_by_priority_then_id() -> None:
    """Numbers first (as numbers, also when stored as text), then missing or unreadable ones
    (booleans, NULL, text that is no number, infinities), each group by id."""
    rows = [_row("z-none", priority=None), _row("y-ten", priority=10),
            _row("x-two-text", priority="2"), _row("w-bool", priority=True),
            _row("v-half", priority=0.5), _row("u-word", priority="high"),
            _row("t-inf", priority=float("inf")), _row("s-nan", priority=float("nan")),
            _row("r-two", priority=2), _row("q-neg", priority=-1)]
    tables, _ = _map(rows)
    assert [t["id"] for t in tables] == [
        "q-neg", "v-half", "r-two", "x-two-text", "y-ten",
        "s-nan", "t-inf", "u-word", "w-bool", "z-none"]
