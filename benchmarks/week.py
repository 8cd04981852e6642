"""A generated week (``benchmarks/fleet.py --shape week``): one simulation writes the demand,
the readings the windows showed and the traffic the declared policy served.

The fleet: Claude and Codex seats of three sizes (weight 1, 5 and 20: Pro, Max 5x, Max 20x),
each with a five-hour window whose cycle starts at its first request and a weekly one on a
fixed schedule, some with background use by other clients; a cheap key (OpenAI gpt-5-mini)
and a premium one (Anthropic claude-sonnet-4-5) on every fourth place. The demand follows
the working day (UTC), each request a draw of input, output and cached tokens. The truth —
each window's percent per token unit and background burn — is drawn per seat and written to
``truth.json``; the week is served by ``omniladder``'s own replay of ``auto/thrifty`` under
``declared`` on that truth (so the traffic is what the policy did), and each seat's telemetry
is the replay's figure every ``--reading-minutes`` (jittered), rounded to a whole percent as
the vendors' endpoints round it.

``omniladder whatif auto/thrifty`` on the files written then fits the truth back from the
readings and the traffic, and its ``as-is`` replay is held to the week (docs/whatif.md).

With ``short_anchor="fixed"`` (``fleet.py --short-anchor fixed``) the five-hour windows run on
a schedule instead: each seat's cycles start at a phase of its own (drawn from a generator of
their own, so the fleet, the truth and the demand are the first-use week's), whether the
seat is used or not, and the week's settings name a window catalog (``quota-windows.toml``,
``[catalogs] windows``) that gives those windows anchor ``fixed``, as an operator's own
catalog would, so that ``whatif`` reads them as the week ran them.
"""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import tomli_w

from omniladder.analyses.whatif.demand import Request
from omniladder.analyses.whatif.replay import Replay, WindowModel
from omniladder.engine.autoid import parse_auto_id
from omniladder.inputs.input_set import load_inputs

START = datetime(2026, 11, 23, 0, 0, tzinfo=UTC)
"""A Monday."""
DAYS = 7
FIVE_HOURS = 5 * 3600
WEEK = 7 * 86_400

SEATS = (("claude", "oauth", "claude-sonnet-4-5", "five_hour", "seven_day"),
         ("codex", "oauth", "gpt-5.1-codex", "5h", "weekly"))
SHORT_ANCHORS = ("first-use", "fixed")
"""How the five-hour windows' cycles start: at the first request after a reset (as Claude's
and Codex's do), or on a fixed schedule."""
FIXED_CATALOG = "quota-windows.toml"
"""The window catalog a week of fixed five-hour windows names in its settings."""
KEYS = (("openai", "apikey", "gpt-5-mini"), ("anthropic", "apikey", "claude-sonnet-4-5"))
WEIGHTS = (1.0, 5.0, 20.0)
SEAT_PRICES = {1.0: 20.0, 5.0: 100.0, 20.0: 200.0}
"""US dollars a month: Claude Pro, Max 5x and Max 20x list at $20, $100 and $200 (ChatGPT
Plus and Pro at $20 and $200)."""
UNITS_PER_FIVE_HOURS = 0.5e6
"""Token units a weight-1 seat's five-hour window holds (about 23 mean requests)."""
WEEKLY_FIVE_HOURS = 12.0
"""A weekly window holds this many five-hour windows."""
SEAT_UNITS_PER_DAY = 1.0e6
"""Token units asked per day per unit of seat weight: the fleet's demand is this times its
total weight, a little more than the weekly windows hold, so quota runs short and paid keys
serve the rest."""
REQUEST_UNITS = 22_000
"""A mean request's token units (``_tokens``' draws, weighed by the token unit)."""


def _hourly(hour: int) -> float:
    """The working day: a peak at 14:00 UTC, a floor at night (mean 1 over the day)."""
    return 0.35 + 1.3 * max(0.0, math.sin(math.pi * (hour - 6) / 16)) if 6 <= hour < 22 \
        else 0.35


def _tokens(rng: random.Random) -> tuple[int, int, int, int]:
    tokens_in = int(rng.lognormvariate(math.log(8_000), 0.8))
    tokens_out = int(rng.lognormvariate(math.log(900), 0.7))
    cache_read = int(rng.lognormvariate(math.log(40_000), 0.9)) if rng.random() < 0.8 else 0
    cache_write = int(rng.lognormvariate(math.log(4_000), 0.8)) if rng.random() < 0.3 else 0
    return tokens_in, tokens_out, cache_read, cache_write


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_week(out: Path, connections: int, seed: int = 1, reading_minutes: float = 30.0,
               days: int = DAYS, weights: tuple[float, ...] = WEIGHTS,
               demand_scale: float = 1.0, short_anchor: str = "first-use") -> Path:
    """Write the week's connections, settings, readings, traffic and truth into ``out``: one
    in four connections a paid key, the others seats of the given weights; the five-hour
    windows anchored ``short_anchor``."""
    if short_anchor not in SHORT_ANCHORS:
        raise ValueError(f"short_anchor: one of {', '.join(SHORT_ANCHORS)}, not {short_anchor}")
    fixed = short_anchor == "fixed"
    rng = random.Random(seed)
    phases = random.Random(f"{seed} five-hour phases")
    out.mkdir(parents=True, exist_ok=True)
    end = START + timedelta(days=days)
    items: list[dict[str, Any]] = []
    truth: dict[str, dict[str, Any]] = {}
    weight_total = 0.0
    for index in range(connections):
        if index % 4 == 3:
            provider, auth_type, model = KEYS[(index // 4) % len(KEYS)]
            items.append({"id": f"{provider}-key-{index:05d}", "provider": provider,
                          "auth_type": auth_type, "models": [model]})
            continue
        provider, auth_type, model, short, weekly = SEATS[index % 2]
        weight = weights[rng.randrange(len(weights))]
        cid = f"{provider}-seat-{index:05d}"
        item: dict[str, Any] = {"id": cid, "provider": provider, "auth_type": auth_type,
                                "models": [model]}
        if weight != 1.0:
            item["capacity_weight"] = weight
        if weight in SEAT_PRICES:
            item["seat_price_usd"] = SEAT_PRICES[weight]
            item["seat_period"] = "month"
        items.append(item)
        weight_total += weight
        per_unit = 100.0 / (UNITS_PER_FIVE_HOURS * weight) * rng.uniform(0.8, 1.25)
        background = rng.choice((0.0, 0.0, rng.uniform(0.3, 2.0)))
        short_window: dict[str, Any] = {
            "percent_per_unit": per_unit, "background_percent_per_hour": background,
            "first_use": not fixed, "seconds": FIVE_HOURS}
        if fixed:  # a cycle in progress at the start, full, ending at the seat's phase
            short_window["reset_at"] = START + timedelta(
                seconds=round(phases.uniform(1, FIVE_HOURS)))
        truth[cid] = {
            "weight": weight,
            short: short_window,
            weekly: {"percent_per_unit": per_unit / WEEKLY_FIVE_HOURS,
                     "background_percent_per_hour": background / WEEKLY_FIVE_HOURS,
                     "first_use": False, "seconds": WEEK,
                     "remaining": rng.uniform(40.0, 100.0),
                     # whole seconds, as the readings write it
                     "reset_at": START + timedelta(seconds=round(rng.uniform(24, 144) * 3600))},
        }
    (out / "connections.toml").write_text(tomli_w.dumps({"connections": items}))
    settings: dict[str, Any] = {
        "inputs": {"connections": "connections.toml", "quota": "quota.json",
                   "traffic": "traffic.jsonl"},
        "ladder": {"max_reading_age_seconds": 3600}}
    if fixed:
        (out / FIXED_CATALOG).write_text(tomli_w.dumps({"windows": [
            {"provider": provider, "window": short, "duration": "5h", "anchor": "fixed",
             "models": ["*"], **({"exclude_models": ["*spark*"]} if provider == "codex"
                                 else {}),
             "reason": "The generated week's five-hour window on a fixed schedule."}
            for provider, _, _, short, _ in SEATS]}))
        settings["catalogs"] = {"windows": [FIXED_CATALOG]}
    (out / "omniladder.toml").write_text(tomli_w.dumps(settings))
    (out / "quota.json").write_text(json.dumps({"readings": []}))
    (out / "traffic.jsonl").write_text("")
    # the demand
    demand: list[Request] = []
    per_hour = SEAT_UNITS_PER_DAY * demand_scale * max(weight_total, 1.0) / 24 / REQUEST_UNITS
    """Requests per hour at a mean hour."""
    hour = START
    while hour < end:
        count = poisson(rng, per_hour * _hourly(hour.hour))
        for at in sorted(hour + timedelta(seconds=rng.uniform(0, 3600)) for _ in range(count)):
            tokens_in, tokens_out, cache_read, cache_write = _tokens(rng)
            demand.append(Request(at=at, tokens_in=tokens_in, tokens_out=tokens_out,
                                  cache_read=cache_read, cache_write=cache_write))
        hour += timedelta(hours=1)
    # the week served by the replay on the truth
    inputs = load_inputs(out / "omniladder.toml")
    models = {
        cid: tuple(WindowModel(
            name=name, models=None, window_seconds=None, length_seconds=float(w["seconds"]),
            first_use=w["first_use"], percent_per_unit=w["percent_per_unit"],
            background_percent_per_hour=w["background_percent_per_hour"],
            remaining=w.get("remaining", 100.0), reset_at=w.get("reset_at"))
            for name, w in seat.items() if name != "weight")
        for cid, seat in truth.items()}
    samples: list[tuple[datetime, str]] = []
    for cid in truth:
        at = START
        while at < end:
            samples.append((at, cid))
            at += timedelta(minutes=reading_minutes * rng.uniform(0.7, 1.3))
    replay = Replay(inputs, parse_auto_id("auto/thrifty"), START, end, models,
                    _price(inputs), keep_served=True, samples=samples)
    outcome = replay.run(demand)
    ids = [c.id for c in replay.fleet.connections]
    with (out / "traffic.jsonl").open("w") as ledger:
        for number, (request, served) in enumerate(zip(demand, outcome.served_by,
                                                       strict=True)):
            if served is None:
                continue
            index, rung, model = served
            event: dict[str, Any] = {
                "at": request.at.isoformat().replace("+00:00", "Z"), "connection": ids[index],
                "model": model, "requested": "auto/thrifty", "request_id": f"r{number:08d}",
                "tokens_in": request.tokens_in, "tokens_out": request.tokens_out,
                "tokens_cache_read": request.cache_read,
                "tokens_cache_write": request.cache_write}
            if rung in ("cheap", "premium"):
                cost = _price(inputs)(replay.fleet.connections[index], model, request)
                if cost is not None:
                    event["cost_usd"] = round(cost, 8)
            ledger.write(json.dumps(event) + "\n")
    readings = []
    for sample in outcome.samples:
        windows = []
        for window in sample.windows or ():
            shown: dict[str, Any] = {"name": window.name,
                                     "remaining_percent": float(round(window.figure))}
            if window.reset_at is not None:
                shown["reset_at"] = _iso(window.reset_at)
            windows.append(shown)
        readings.append({"connection": sample.connection, "checked_at": _iso(sample.checked_at),
                         "windows": windows})
    readings.sort(key=lambda r: (r["checked_at"], r["connection"]))
    (out / "quota.json").write_text(json.dumps({"readings": readings}))
    (out / "truth.json").write_text(json.dumps({
        "paid_usd": outcome.paid_usd, "served_by_rung": outcome.served_by_rung,
        "blocked": outcome.blocked, "requests": len(demand),
        "seats": {cid: {name: {k: v for k, v in w.items() if k in (
            "percent_per_unit", "background_percent_per_hour")}
            for name, w in seat.items() if name != "weight"} for cid, seat in truth.items()},
    }, indent=1, sort_keys=True))
    return out / "omniladder.toml"


def _price(inputs: Any) -> Any:
    from omniladder.analyses.whatif.money import pricer

    return pricer(inputs)


def poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw (a normal one for a large mean)."""
    if mean > 50:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k
