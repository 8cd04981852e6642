"""The one hypothesis strategy for whole input sets: every property test draws its fleets here.

``input_sets()`` draws what ``load_inputs`` hands the planner: connections with every field a
connections file accepts, quota histories (windows, model-scoped windows, resets before and
after their reading, statuses, top-level figures, empty readings, observed overage, window
lengths), a spend ledger, budgets and ladder settings. Everything is written as plain data and
validated by the same models the loaders use (tests/builders.py ``fleet``), and the loader's
checks across records hold too (one id per connection, one reading per connection and
instant), so a drawn input set is one the loader could have read from files.

The few variations the properties need are parameters: the instant the fleet is drawn
around, the catalogs and the provider profiles, how many connections, the spans of reading,
reset and spend instants, whether spend and cooldowns appear, fixed settings, and a steady
fleet (every connection read twice with the same figures). tests/test_strategies.py fails
when an input field is never generated, so a new field is taught here once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from omniladder.engine.inputs import Catalogs, LoadedInputs
from omniladder.inputs.catalogs import load_catalogs
from tests.builders import NOW, catalogs, fleet


@dataclass(frozen=True)
class Profile:
    """A kind of connection: provider, auth type and the models it is drawn with."""

    provider: str
    auth_type: str
    models: tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    """Catalogs and the profiles that make sense with them, most telling first (hypothesis
    leans to the first choices while shrinking)."""

    catalogs: Catalogs
    profiles: tuple[Profile, ...]


SHIPPED = Catalog(load_catalogs((), ()), (
    Profile("claude", "oauth", ("claude-sonnet-4-5", "claude-opus-4-1")),
    Profile("codex", "oauth", ("gpt-5.1-codex",)),
    Profile("cursor", "oauth", ("claude-sonnet-4-5",)),
    Profile("copilot-web", "apikey", ("gpt-4.1", "gpt-5-mini")),
    Profile("openai", "apikey", ("gpt-5-mini", "gpt-5.1")),
    Profile("gemini", "apikey", ("gemini-2.5-flash",)),
    Profile("ollama", "none", ("llama3.3:70b",)),
    Profile("claude", "apikey", ("claude-sonnet-4-5",)),
    Profile("devin-desktop", "oauth", ("swe-1.5",)),
    Profile("acme", "apikey", ("acme-1",)),
))
"""The shipped catalogs (billing facts and prices as an operator gets them)."""

SMALL = Catalog(catalogs(), (
    Profile("claude", "oauth", ("sonnet", "opus")),
    Profile("codex", "oauth", ("gpt-codex",)),
    Profile("openai", "apikey", ("gpt-mini", "gpt-big")),
    Profile("claude", "apikey", ("sonnet", "opus")),
    Profile("ollama", "none", ("qwen",)),
    Profile("openrouter", "apikey", ("free-model",)),
    Profile("claude", "oauth", ("sonnet", "opus")),
    Profile("copilot-web", "apikey", ("gpt-4.1",)),
    Profile("devin-desktop", "oauth", ("devin",)),
    Profile("mystery", "apikey", ("m1",)),
    Profile("cursor", "oauth", ()),
))
"""tests/builders.py's small catalogs: a provider with no billing entry, a provider-wide
metered entry, free models, overage of every kind."""

ONE_PLAN = Catalog(SHIPPED.catalogs, (Profile("claude", "oauth", ("claude-sonnet-4-5",)),))
"""One subscription plan and model: a steady fleet, or one connection's history."""

PERCENT = st.one_of(st.sampled_from([60.0, 0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 50.0, 100.0]),
                    st.floats(0, 100))
"""Around the default cutoff (2 %) and re-entry floor (5 %), and anything else."""
RESERVE = st.one_of(st.sampled_from([10.0, 0.0, 2.0, 3.0, 4.5, 50.0, 100.0]), st.floats(0, 100))
"""A connection's reserve (R16): at, below and above the drawn exit cutoffs and figures."""
WINDOW_NAMES = ("5h", "weekly", "daily", "opus")
RUNG = st.sampled_from(["cheap", "premium", "cheap", "premium", "subscription", "keyless",
                        "free"])
"""A spend event's rung: a budget is kept for the paid ones; the loader takes any rung."""
SECONDS = st.sampled_from([0.0, 0.0, 0.0, 0.5, 30.0, 59.5])
"""Readings off the whole minute: a stale instant falls between two steps."""


def _instant(anchor: datetime, minutes: int, seconds: float = 0.0) -> str:
    found = anchor + timedelta(minutes=minutes, seconds=seconds)
    return found.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class _Spans:
    anchor: datetime
    readings: tuple[int, int]
    resets: tuple[int, int]
    spend: tuple[int, int]

    def reset(self, draw: st.DrawFn) -> str:
        return _instant(self.anchor, draw(st.integers(*self.resets)))


def _window(draw: st.DrawFn, spans: _Spans, name: str, models: Sequence[str],
            *, steady: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name}
    if not steady and draw(st.integers(0, 4)) == 0:
        data["unlimited"] = True
    else:
        data["remaining_percent"] = draw(PERCENT)
    if steady or draw(st.integers(0, 4)) > 0:
        data["reset_at"] = spans.reset(draw)
    if len(models) > 0 and draw(st.booleans()):
        data["models"] = [draw(st.sampled_from(models))]
    if draw(st.integers(0, 3)) == 0:
        data["window_seconds"] = draw(st.sampled_from([18_000.0, 604_800.0, 60.0, 0.5]))
    return data


def _windows(draw: st.DrawFn, spans: _Spans, models: Sequence[str], *, steady: bool,
             low: int = 0) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(WINDOW_NAMES), min_size=low, max_size=3,
                          unique=True))
    return [_window(draw, spans, name, models, steady=steady) for name in names]


def _reading(draw: st.DrawFn, spans: _Spans, cid: str, checked_at: str,
             models: Sequence[str], empty: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"connection": cid, "checked_at": checked_at}
    status = draw(st.sampled_from([None, None, None, "ok", "exhausted", "unknown"]))
    if status is not None:
        data["status"] = status
    shape = draw(st.sampled_from(["windows", "windows", "top", "empty" if empty else "top"]))
    if shape == "windows":
        data["windows"] = _windows(draw, spans, models, steady=False, low=0 if empty else 1)
    elif shape == "top":
        data["remaining_percent"] = draw(PERCENT)
    if shape != "windows" and draw(st.integers(0, 3)) > 0:
        data["reset_at"] = spans.reset(draw)
    if draw(st.integers(0, 3)) == 0:
        data["overage"] = draw(st.sampled_from(["hard-stop", "meters-to-paid"]))
    return data


def _history(draw: st.DrawFn, spans: _Spans, cid: str, models: Sequence[str],
             readings: tuple[int, int], steady: bool, empty: bool) -> list[dict[str, Any]]:
    if steady:
        windows = _windows(draw, spans, models, steady=True, low=1)
        return [{"connection": cid, "checked_at": _instant(spans.anchor, minutes),
                 "windows": windows} for minutes in (-60, 0)]
    low, high = spans.readings
    instants = st.integers(low, high)
    if max(low, -2) <= min(high, 0):  # readings of the last two minutes: fresh at any max age
        instants = st.integers(max(low, -2), min(high, 0)) | instants
    minutes = draw(st.lists(instants, min_size=readings[0], max_size=readings[1],
                            unique=True))
    return [_reading(draw, spans, cid, _instant(spans.anchor, m, draw(SECONDS)), models,
                     empty) for m in sorted(minutes)]


def _connection(draw: st.DrawFn, spans: _Spans, cid: str, catalog: Catalog, profile: Profile,
                cooldowns: bool, observed: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {"id": cid, "provider": profile.provider,
                            "auth_type": profile.auth_type}
    if profile.models and draw(st.integers(0, 3)) > 0:
        data["models"] = draw(st.lists(st.sampled_from([*profile.models, "unlisted"]),
                                       min_size=1, max_size=3))
    if draw(st.integers(0, 7)) == 0:
        data["active"] = False
    if draw(st.integers(0, 3)) == 0:
        data["status"] = draw(st.sampled_from(
            ["ok", "unknown", "error", "banned", "expired", "credits_exhausted",
             "deactivated", "unavailable"]))
    until: int | None = None
    if cooldowns and draw(st.integers(0, 3)) == 0:
        until = draw(st.integers(*spans.resets))
        data["rate_limited_until"] = _instant(spans.anchor, until)
    if observed and draw(st.integers(0, 2)) == 0:
        # the state observed at one instant (SPEC §7.2 v1.4), the cooldown's recorded start
        # before or after it
        data["state_as_of"] = _instant(spans.anchor, draw(st.integers(*spans.resets)),
                                       draw(SECONDS))
        if until is not None and draw(st.booleans()):
            data["rate_limited_since"] = _instant(
                spans.anchor, until - draw(st.integers(1, 240)), draw(SECONDS))
    if draw(st.integers(0, 5)) == 0:
        data["label"] = draw(st.sampled_from(["work seat", "Équipe ☕", ""]))
    # R2: an override only narrows what the catalog says (a widening one is refused).
    billing, overage = _catalog_class(catalog, profile)
    if draw(st.integers(0, 4)) == 0:
        data["billing"] = draw(st.sampled_from(
            ["metered", "subscription"] if billing == "subscription" else ["metered"]))
    if draw(st.integers(0, 4)) == 0:
        data["overage"] = draw(st.sampled_from(
            ["meters-to-paid", "unknown", "hard-stop"] if overage == "hard-stop"
            else ["meters-to-paid", "unknown"]))
    # R16 and SPEC §9's seat: a reserve around the figures PERCENT leans to, and a price
    # with or without its period (a period alone is a warning).
    if draw(st.integers(0, 3)) == 0:
        data["reserve_percent"] = draw(RESERVE)
    if draw(st.integers(0, 5)) == 0:
        data["seat_price_usd"] = draw(st.sampled_from([200.0, 0.0, 20.0]))
    if draw(st.integers(0, 5)) == 0:
        data["seat_period"] = draw(st.sampled_from(["month", "day", "week"]))
    return data


def _catalog_class(catalog: Catalog, profile: Profile) -> tuple[str, str]:
    """(billing, overage) of a connection with no override (R1)."""
    if profile.auth_type == "none":
        return "keyless", "hard-stop"
    found = (catalog.catalogs.billing.get((profile.provider, profile.auth_type))
             or catalog.catalogs.billing.get((profile.provider, None)))
    return ("unknown", "unknown") if found is None else (found.entry.billing,
                                                         found.entry.overage)


def _spend(draw: st.DrawFn, spans: _Spans,
           connections: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 5))):
        event: dict[str, Any] = {"at": _instant(spans.anchor, draw(st.integers(*spans.spend))),
                                 "cost_usd": draw(st.sampled_from([0.5, 1.0, 2.0, 0.25]))}
        named = [c for c in connections if c.get("models")]
        if len(named) > 0 and draw(st.booleans()):
            connection = draw(st.sampled_from(named))
            event["connection"] = connection["id"]
            event["model"] = connection["models"][0]
            if draw(st.integers(0, 3)) == 0:
                event["rung"] = draw(RUNG)
        else:
            event["rung"] = draw(RUNG)
        events.append(event)
    return events


def _seat_order(draw: st.DrawFn, drawn: list[dict[str, Any]], table: dict[str, Any],
                drawn_settings: bool) -> None:
    """R15's setting and the seats' sizes, drawn after everything else."""
    for data in drawn:
        if draw(st.integers(0, 3)) == 0:
            data["capacity_weight"] = draw(st.sampled_from([1.0, 0.5, 2.0, 20.0]))
    if drawn_settings:
        table["ladder"] = {**table["ladder"], "within_rung_order": draw(
            st.sampled_from(["declared", "expiring-first"]))}


def _settings(draw: st.DrawFn) -> dict[str, Any]:
    budgets: dict[str, float] = {}
    for rung, figures in (("cheap", [None, 0.0, 1.0, 1.5, 3.0, 5.0]),
                          ("premium", [None, 0.0, 1.0, 2.0, 5.0])):
        budget = draw(st.sampled_from(figures))
        if budget is not None:
            budgets[rung] = budget
    return {
        "ladder": {"exit_cutoff_percent": draw(st.sampled_from([2.0, 0.0, 5.0, 100.0])),
                   "reentry_min_remaining_percent": draw(st.sampled_from([5.0, 0.0, 2.0, 3.0,
                                                                         10.0, 100.0])),
                   "max_reading_age_seconds": draw(st.sampled_from([180.0, 90.0, 600.0,
                                                                   3600.0, 0.0])),
                   "clamp_cooldown_to_reset": draw(st.booleans())},
        "budgets": {"period": draw(st.sampled_from(["day", "week", "month"])),
                    "rung_budget_usd": budgets},
        "tiers": {"free_providers": draw(st.sampled_from([[], ["openai"], ["gemini"]])),
                  "cheap_max_input_usd_per_mtok": draw(st.sampled_from([1.0, 0.5, 2.0]))},
    }


@st.composite
def input_sets(draw: st.DrawFn, *, anchor: datetime = NOW, catalog: Catalog = SMALL,
               connections: tuple[int, int] = (0, 8), readings: tuple[int, int] = (0, 3),
               readings_between: tuple[int, int] = (-240, 10),
               resets_between: tuple[int, int] = (-240, 1440),
               spend_between: tuple[int, int] = (-60 * 24 * 40, 60),
               spend: bool = True, cooldowns: bool = True, observed: bool = True,
               settings: Mapping[str, Any] | None = None,
               steady: bool = False, empty_readings: bool = True,
               seat_order: bool = False) -> LoadedInputs:
    """A whole input set drawn around ``anchor`` (spans in minutes from it).

    ``connections`` and ``readings`` (per connection) are (fewest, most). ``settings``, when
    given, is the settings table instead of drawn settings. ``steady``: every connection is
    read an hour before ``anchor`` and at ``anchor`` with the same windows, each with a
    reset: nothing but the resets changes the fleet's quota. ``empty_readings=False``: no
    reading without a window, a figure and a status, and no empty window list (§2.2).
    ``observed=False``: no connection says when its state was observed (``state_as_of``).
    ``seat_order``: R15's ``within_rung_order`` (when the settings are drawn) and the seats'
    ``capacity_weight`` are drawn too, after everything else; without it the fleets are
    those drawn before R15 existed."""
    spans = _Spans(anchor, readings_between, resets_between, spend_between)
    drawn: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    for index in range(draw(st.integers(*connections))):
        profile = draw(st.sampled_from(catalog.profiles))
        data = _connection(draw, spans, f"c{index}", catalog, profile, cooldowns, observed)
        drawn.append(data)
        models = list(dict.fromkeys(data.get("models", profile.models)))
        history += _history(draw, spans, data["id"], models, readings, steady,
                            empty_readings)
    taken_at = None
    if history and draw(st.integers(0, 3)) == 0:
        taken_at = max(r["checked_at"] for r in history)
    ledger = _spend(draw, spans, drawn) if spend and draw(st.integers(0, 3)) > 0 else None
    table = dict(settings) if settings is not None else _settings(draw)
    if seat_order:
        _seat_order(draw, drawn, table, settings is None)
    return fleet(drawn, history, settings=table, spend=ledger, taken_at=taken_at,
                 catalog=catalog.catalogs)


# --- hostile values: what a pasted key, a key with a control character look like ----------

_KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


@st.composite
def pasted_keys(draw: st.DrawFn) -> str:
    """A value shaped like a provider's key: one of the prefixes keys are issued with and a
    random tail of 20-60 letters and digits (``omniladder.inputs.credentials.KEY_PREFIXES``), or a
    bare random string of 24-64 that mixes lower-case letters and digits (the shape of a
    key without a known prefix, a hex secret among them)."""
    from omniladder.inputs.credentials import KEY_PREFIXES

    tail = draw(st.text(_KEY_ALPHABET, min_size=20, max_size=60))
    if draw(st.booleans()):
        prefix = draw(st.sampled_from([prefix for prefix, _ in KEY_PREFIXES]))
        return prefix + tail
    body = draw(st.text(_KEY_ALPHABET.lower() if draw(st.booleans()) else _KEY_ALPHABET,
                        min_size=22, max_size=62))
    return f"a{body}7"  # one lower-case letter and one digit at the least


ENV_NAMES = st.from_regex(r"[A-Z][A-Z0-9]{0,11}(_[A-Z0-9]{1,12}){0,5}", fullmatch=True)
"""Variable names as operators write them: upper case, words joined by ``_``
(``ANTHROPIC_API_KEY_WORK_2``); none of them is key-shaped."""

HOSTILE_TEXT = st.text(st.characters(codec="utf-8", categories=("Cc", "Zl", "Zp")),
                       min_size=1, max_size=3)
"""Control characters and line or paragraph separators: what a key or a value must never
carry raw into a message."""
