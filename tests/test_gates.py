"""R5 connection gates and R9 the cooldown clamp."""

from __future__ import annotations

from typing import Any

import pytest

from omniladder.engine.quota import cooldown
from omniladder.models import Connection, validate_record
from tests.builders import (
    NOW,
    at,
    conn,
    fleet,
    freeze,
    history,
    instant,
    ladder,
    plan,
    reading,
    reason,
    window,
)


def fresh(cid: str) -> dict[str, Any]:
    return reading(cid, remaining_percent=50)


# --- R5 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({}, None, id="R5-no-gate"),
        pytest.param({"active": False}, "inactive", id="R5-inactive"),
        *(pytest.param({"status": status}, "terminal-status", id=f"R5-terminal-{status}")
          for status in ("banned", "expired", "credits_exhausted", "deactivated",
                         "unavailable")),
        *(pytest.param({"status": status}, None, id=f"R5-status-{status}-is-not-terminal")
          for status in ("ok", "unknown", "error")),
        pytest.param({"rate_limited_until": at(minutes=5)}, "cooldown",
                     id="R5-cooldown-after-now"),
        pytest.param({"rate_limited_until": at()}, None, id="R5-cooldown-ending-at-now-is-over"),
        pytest.param({"rate_limited_until": at(minutes=-5)}, None,
                     id="R5-cooldown-in-the-past"),
        pytest.param({"active": False, "status": "banned", "rate_limited_until": at(hours=1)},
                     "inactive", id="R5-order-inactive-first"),
        pytest.param({"status": "expired", "rate_limited_until": at(hours=1)},
                     "terminal-status", id="R5-order-terminal-before-cooldown"),
    ],
)
@pytest.mark.parametrize(
    "base",
    [
        pytest.param(conn("c", "claude", "oauth", models=["sonnet"]), id="subscription"),
        pytest.param(conn("c", "ollama", "none", models=["qwen"]), id="keyless"),
        pytest.param(conn("c", "openrouter", "apikey", models=["free-model"]), id="free"),
        pytest.param(conn("c", "openai", "apikey", models=["gpt-mini"]), id="cheap"),
        pytest.param(conn("c", "openai", "apikey", models=["gpt-big"]), id="premium"),
    ],
)
def test_R5_gates_apply_to_every_rung(base: dict[str, Any], fields: dict[str, Any],
                                      expected: str | None) -> None:
    result = plan(fleet([{**base, **fields}], [fresh("c")]))
    assert reason(result, "c") == expected
    assert bool(result.pool) == (expected is None)


def test_R5_gate_excludes_the_whole_connection_with_model_null() -> None:
    result = plan(fleet([conn("c", models=["sonnet", "opus"], active=False)], [fresh("c")]))
    [only] = result.excluded
    assert (only.model, only.reason) == (None, "inactive")


# --- R9 ------------------------------------------------------------------------------------


def cooldown_of(until: str, *readings: dict[str, Any], **settings: Any) -> tuple[str, bool]:
    """(effective end as ISO text, cooling at NOW) for a connection with a cooldown."""
    connection = validate_record(Connection, freeze(conn("c", rate_limited_until=until)))
    result = cooldown(connection, history(*readings), NOW, ladder(**settings))
    assert result is not None
    return result.end.isoformat().replace("+00:00", "Z"), result.cooling


@pytest.mark.parametrize(
    ("until", "readings", "settings", "end", "cooling"),
    [
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(minutes=30)),
                                           window("weekly", 45, at(days=3)))],
                     {}, at(minutes=30), True, id="R9-clamped-to-the-exhausted-window-reset"),
        pytest.param(at(hours=6), [reading("c", at(hours=-2),
                                           window("5h", 0, at(minutes=-30)))],
                     {}, at(minutes=-30), False,
                     id="R9-clamped-to-a-reset-already-past-ends-the-cooldown"),
        pytest.param(at(hours=1), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(hours=3)))],
                     {}, at(hours=1), True, id="R9-never-lengthens"),
        pytest.param(at(hours=1), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(hours=1)))],
                     {}, at(hours=1), True, id="R9-reset-equal-to-cooldown-end-unchanged"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(minutes=-1)))],
                     {}, at(hours=6), True, id="R9-reset-at-checked-at-leaves-it"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(minutes=-20)))],
                     {}, at(hours=6), True, id="R9-reset-before-checked-at-leaves-it"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(minutes=30)),
                                           window("weekly", 1, at(hours=2)))],
                     {}, at(hours=2), True, id="R9-latest-of-every-exhausted-window"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(minutes=30)),
                                           window("weekly", 2, None))],
                     {}, at(hours=6), True,
                     id="R9-an-exhausted-window-without-reset-leaves-it"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(minutes=30)),
                                           window("weekly", 40, at(minutes=10)))],
                     {}, at(minutes=30), True,
                     id="R9-windows-above-the-cutoff-do-not-count"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 4, at(minutes=30)))],
                     {"exit_cutoff_percent": 5}, at(minutes=30), True,
                     id="R9-at-or-below-the-configured-cutoff"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 40, at(minutes=30)))],
                     {}, at(hours=6), True, id="R9-no-exhausted-window-no-clamp"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("monthly", unlimited=True))],
                     {}, at(hours=6), True, id="R9-unlimited-window-no-clamp"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1), status="exhausted",
                                           reset_at=at(minutes=45))],
                     {}, at(minutes=45), True, id="R9-top-level-reset-of-exhausted-reading"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1), remaining_percent=0,
                                           reset_at=at(minutes=15))],
                     {}, at(minutes=15), True, id="R9-top-level-figure-at-zero"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-50),
                                           window("5h", 0, at(minutes=30))),
                                   reading("c", at(minutes=-1),
                                           window("5h", 50, at(minutes=20)))],
                     {}, at(hours=6), True, id="R9-only-the-latest-reading-counts"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(minutes=30))),
                                   reading("c", at(minutes=5),
                                           window("5h", 0, at(minutes=10)))],
                     {}, at(minutes=30), True, id="R9-readings-after-now-do-not-exist"),
        pytest.param(at(hours=6), [], {}, at(hours=6), True, id="R9-no-reading-no-clamp"),
        pytest.param(at(hours=6), [reading("c", at(minutes=-1),
                                           window("5h", 0, at(minutes=30)))],
                     {"clamp_cooldown_to_reset": False}, at(hours=6), True,
                     id="R9-clamp-switched-off"),
    ],
)
def test_R9_clamp(until: str, readings: list[dict[str, Any]], settings: dict[str, Any],
                  end: str, cooling: bool) -> None:
    assert cooldown_of(until, *readings, **settings) == (end, cooling)


def test_R9_clamp_is_shown_in_the_plan_and_decides_the_gate() -> None:
    connections = [
        conn("still", models=["sonnet"], rate_limited_until=at(hours=6)),
        conn("over", models=["sonnet"], rate_limited_until=at(hours=6)),
        conn("unclamped", models=["sonnet"], rate_limited_until=at(hours=1)),
    ]
    readings = [
        reading("still", at(minutes=-1), window("5h", 0, at(minutes=30))),
        reading("over", at(hours=-1), window("5h", 0, at(minutes=-10))),
        reading("unclamped", at(minutes=-1), window("5h", 0, at(hours=3))),
    ]
    result = plan(fleet(connections, readings), "auto/thrifty")
    clamps = {c.connection_id: (c.rate_limited_until, c.clamped_to, c.cooling)
              for c in result.clamps}
    assert clamps == {
        "still": (instant(hours=6), instant(minutes=30), True),
        "over": (instant(hours=6), instant(minutes=-10), False),
    }
    assert reason(result, "still") == "cooldown"
    assert "clamped" in next(x.detail for x in result.excluded if x.connection_id == "still")
    assert reason(result, "unclamped") == "cooldown"
    # the cooldown is over, so the gate passes; its outdated window leaves the verdict
    # unknown, which thrifty admits as unverified on a quota rung (R11)
    assert result.pool[0].allowed_connection_ids == ("over",)
    assert result.pool[0].unverified_connection_ids == ("over",)


@pytest.mark.parametrize(("readings", "end"), [
    pytest.param([reading("c", remaining_percent=50, reset_at=at(minutes=30))], at(hours=6),
                 id="R9-a-healthy-top-level-figure-with-a-reset-does-not-clamp"),
    pytest.param([reading("c", window("weekly", 80, at(days=2)),
                          window("5h", 0, at(minutes=40)))], at(minutes=40),
                 id="R9-a-healthy-window-listed-first-does-not-hide-the-exhausted-one"),
])
def test_R9_only_exhaustion_gives_a_reset_to_clamp_to(readings: list[dict[str, Any]],
                                                      end: str) -> None:
    assert cooldown_of(at(hours=6), *readings) == (end, True)
