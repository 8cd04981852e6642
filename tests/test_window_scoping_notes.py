"""Scoping imported windows to a connection's models (SPEC §6, window scopes): the reading
each import writes, window by window, and the exact notes that say what was dropped or kept
unscoped. Also where the window-scope catalog files come from and what names they go by.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from omniladder.errors import InputError
from omniladder.inputs.documents import as_tuples
from omniladder.inputs.scopes import (
    WINDOW_CATALOG_NAME,
    WindowScopes,
    load_window_scopes,
    ordered,
    window_catalog_paths,
)
from omniladder.scope_models import WindowScopeEntry
from omniladder.sources.common import ScopeReport, SourceReading, SourceWindow, reading_document

MODELS = ["claude-opus-4-1", "claude-sonnet-4-5"]
T1 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
T2 = datetime(2026, 11, 29, 11, 0, 30, 250000, tzinfo=UTC)


def _scopes() -> WindowScopes:
    entries = [WindowScopeEntry.model_validate(as_tuples(entry)) for entry in (
        {"provider": "p", "window": "code_review", "ignore": True},
        {"provider": "p", "window": "weekly opus", "models": ["*OPUS*"]},  # any case
        {"provider": "p", "window": "weekly haiku", "models": ["*haiku*"]},
        {"provider": "p", "window": "everything", "models": ["*"]},
        {"provider": "p", "window": "* (*)", "models": ["*"],
         "exclude_models": ["{window_base}"]},
    )]
    return ordered([("overlay.toml", entries)])


def _import(readings: list[SourceReading]) -> tuple[list[dict[str, Any]], ScopeReport]:
    scopes = _scopes()
    report = ScopeReport()
    documents = [reading_document("conn", "p", MODELS, reading, scopes, report)
                 for reading in readings]
    return documents, report


FIRST = SourceReading(checked_at=T1, windows=(
    SourceWindow("weekly opus", 40, reset_at=T2),
    SourceWindow("code_review", 50),
    SourceWindow("everything", 30),
    SourceWindow("weekly haiku", 20),
    SourceWindow("60m", 10),
    SourceWindow("m", None),
    SourceWindow("claude-opus-4-1 (TOKENS)", 100 / 3),
    SourceWindow("chat", unlimited=True),
), overage="hard-stop")
SECOND = SourceReading(checked_at=T2, status="exhausted", windows=(
    SourceWindow("60m", 100.5), SourceWindow("primary", -0.25)))


def test_each_window_is_written_scoped_in_name_order_with_its_figure() -> None:
    """Names sorted; ignored, no-value and limits-none windows dropped; unmatched windows
    written without models (every model); percents integral as integers, else 4 places."""
    documents, _ = _import([FIRST, SECOND])
    assert json.dumps(documents[0]) == json.dumps({
        "connection": "conn", "checked_at": "2026-11-29T10:00:00Z",
        "windows": [
            {"name": "60m", "remaining_percent": 10},
            {"name": "chat", "unlimited": True},
            {"name": "claude-opus-4-1 (TOKENS)", "remaining_percent": 33.3333,
             "models": ["claude-sonnet-4-5"]},
            {"name": "everything", "remaining_percent": 30},
            {"name": "weekly opus", "remaining_percent": 40,
             "reset_at": "2026-11-29T11:00:30.250000Z", "models": ["claude-opus-4-1"]},
        ],
        "overage": "hard-stop"})


def test_status_is_written_only_when_the_source_reported_one() -> None:
    documents, _ = _import([FIRST, SECOND])
    assert "status" not in documents[0]
    assert documents[1]["status"] == "exhausted"


def test_percents_past_either_end_are_kept_inside_0_to_100() -> None:
    documents, _ = _import([SECOND])
    assert json.dumps(documents[0]["windows"]) == json.dumps([
        {"name": "60m", "remaining_percent": 100},
        {"name": "primary", "remaining_percent": 0}])


def test_a_reading_with_no_window_kept_has_no_windows_key() -> None:
    documents, _ = _import([SourceReading(checked_at=T1, windows=(
        SourceWindow("code_review", 5),))])
    assert documents == [{"connection": "conn", "checked_at": "2026-11-29T10:00:00Z"}]


def test_the_notes_count_each_outcome_per_window_name_exactly() -> None:
    _, report = _import([FIRST, SECOND])
    assert report.notes() == [
        "windows ignored as the window-scope catalog says (no chat quota or a sentinel): "
        "'code_review' ×1",
        "windows dropped: they limit none of the connection's models: 'weekly haiku' ×1",
        "windows dropped: no value reported (a sentinel, not exhaustion): 'm' ×1",
        "windows not in the window-scope catalog: read as limiting every model: "
        "'60m' ×2, 'chat' ×1, 'primary' ×1",
    ]
    assert report.notes(" of provider p")[0] == (
        "windows ignored as the window-scope catalog says (no chat quota or a sentinel) of "
        "provider p: 'code_review' ×1")


def test_a_report_with_nothing_to_say_has_no_notes() -> None:
    _, report = _import([SourceReading(checked_at=T1, windows=(
        SourceWindow("everything", 5), SourceWindow("weekly opus", 6)))])
    assert report.notes() == []


# --- the catalog: patterns, answers, files --------------------------------------------------


def test_model_patterns_match_whatever_the_case() -> None:
    """SPEC §6 / quota-windows.toml: patterns are matched case-insensitively."""
    scope = _scopes().scope("p", "weekly opus", ["Claude-Opus-4-1", "claude-sonnet-4-5"])
    assert (scope.kind, scope.models) == ("models", ("Claude-Opus-4-1",))


def test_an_exclusion_may_name_the_window_itself() -> None:
    scope = _scopes().scope("p", "claude-sonnet-4-5 (REQUESTS)", MODELS)
    assert scope.models == ("claude-opus-4-1",)


def test_the_same_question_is_answered_once_and_remembered() -> None:
    """An import asks for every reading of a connection; the answer is kept, not rebuilt."""
    scopes = _scopes()
    first = scopes.scope("p", "weekly opus", MODELS)
    assert scopes.scope("p", "weekly opus", MODELS) is first
    assert scopes.scope("p", "weekly opus", MODELS[:1]) is not first


def test_the_shipped_catalog_comes_first_unless_left_out(tmp_path: Path) -> None:
    from omniladder.inputs.catalogs import SHIPPED_PREFIX, shipped_catalog_dir

    overlay = tmp_path / "windows.toml"
    paths = window_catalog_paths([overlay])
    assert paths[0] == (shipped_catalog_dir() / WINDOW_CATALOG_NAME,
                        f"{SHIPPED_PREFIX}/{WINDOW_CATALOG_NAME}")
    assert [path for path, _ in paths[1:]] == [overlay]
    assert window_catalog_paths([overlay], include_shipped=False)[0][0] == overlay


def test_without_the_shipped_catalog_only_the_overlays_scope(tmp_path: Path) -> None:
    overlay = tmp_path / "windows.toml"
    overlay.write_text('[[windows]]\nprovider = "claude"\nwindow = "x"\nmodels = ["*"]\n',
                       encoding="utf-8")
    alone = load_window_scopes([overlay], include_shipped=False)
    assert [s.entry.window for s in alone.entries] == ["x"]
    assert len(alone.files) == 1
    assert alone.match("claude", "seven_day_opus") is None
    assert load_window_scopes([overlay]).match("claude", "seven_day_opus") is not None


def test_a_broken_shipped_window_catalog_is_named_as_shipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import omniladder.inputs.catalogs

    (tmp_path / WINDOW_CATALOG_NAME).write_text(
        '[[windows]]\nprovider = 5\nwindow = "w"\nmodels = ["*"]\n', encoding="utf-8")
    monkeypatch.setattr(omniladder.inputs.catalogs, "shipped_catalog_dir", lambda: tmp_path)
    with pytest.raises(InputError) as excinfo:
        load_window_scopes()
    assert str(excinfo.value) == (f"<shipped>/{WINDOW_CATALOG_NAME}:2: windows[0].provider: "
                                  "must be a valid string, got an integer")
