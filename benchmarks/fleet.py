"""Generate a synthetic fleet: connections, quota history, spend ledger and settings.

    python benchmarks/fleet.py OUTDIR --connections 10000 --models 5 --readings 3 --seed 1
    python benchmarks/fleet.py OUTDIR --connections 10000 --shape burning
    python benchmarks/fleet.py OUTDIR --connections 100 --week 7 --seed 1   # a backtest week

Writes ``connections.toml``, ``quota.json``, ``spend.json`` and ``omniladder.toml`` into
OUTDIR. The same arguments always write the same bytes. The default fleet (``--shape
mixed``) mixes every billing class (subscription plans, keyless backends, free tiers, cheap
and premium metered keys, uncurated providers), so a plan of it exercises every rung and most
reason codes.

``--shape burning`` is the fleet a forecast projects (``burning_history``): three in four
connections a Claude plan with six readings 5 minutes apart in the current cycle of a ``5h``
window that gives its ``window_seconds``, each burning at its own pace with noise between
readings (so every window has a burn rate and a band), the rest metered API keys without
readings. ``--readings`` is ignored there.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import tomli_w

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

# provider, auth_type, models it serves (catalogued first, then uncatalogued variants)
PROVIDERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("claude", "oauth", ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5",
                         "claude-opus-4-5")),
    ("codex", "oauth", ("gpt-5.1-codex", "gpt-5.1", "gpt-5.1-codex-mini")),
    ("copilot-web", "apikey", ("gpt-4.1", "claude-sonnet-4-5", "gpt-5-mini")),
    ("antigravity", "oauth", ("gemini-3-pro-preview", "claude-sonnet-4-5")),
    ("cursor", "oauth", ("claude-sonnet-4-5", "gpt-5.1")),
    ("ollama", "none", ("qwen2.5-coder:32b", "llama3.3:70b")),
    ("gemini", "apikey", ("gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite")),
    ("openai", "apikey", ("gpt-5-mini", "gpt-5.1", "gpt-5-nano", "gpt-4.1", "o4-mini", "o3")),
    ("deepseek", "apikey", ("deepseek-chat", "deepseek-reasoner")),
    ("mistral", "apikey", ("mistral-medium-latest", "codestral-latest",
                           "mistral-large-latest")),
    ("acme-llm", "apikey", ("acme-1", "acme-2")),
)


@dataclass(frozen=True)
class FleetSize:
    connections: int
    models: int
    readings: int
    spend_events: int


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def models_for(rng: random.Random, provider_models: tuple[str, ...], count: int) -> list[str]:
    """``count`` models: the provider's own first, then numbered variants of them."""
    names = list(provider_models)
    variant = 2
    while len(names) < count:
        names += [f"{name}-v{variant}" for name in provider_models]
        variant += 1
    start = rng.randrange(len(provider_models))
    rotated = names[start:] + names[:start]
    return rotated[:count]


def connection(rng: random.Random, index: int, size: FleetSize) -> dict[str, Any]:
    provider, auth_type, provider_models = PROVIDERS[index % len(PROVIDERS)]
    item: dict[str, Any] = {
        "id": f"{provider}-{index:06d}",
        "provider": provider,
        "auth_type": auth_type,
        "models": models_for(rng, provider_models, size.models),
    }
    roll = rng.random()
    if roll < 0.02:
        item["active"] = False
    elif roll < 0.04:
        item["status"] = "expired"
    elif roll < 0.07:
        item["rate_limited_until"] = stamp(NOW + timedelta(minutes=rng.randrange(-60, 360)))
    if provider == "claude" and rng.random() < 0.1:
        item["overage"] = "meters-to-paid"
    if rng.random() < 0.3:
        item["label"] = f"synthetic account {index}"
    return item


def history(rng: random.Random, cid: str, models: list[str], count: int) -> list[dict[str, Any]]:
    """``count`` readings, a minute apart, the latest one to ten minutes before NOW."""
    out: list[dict[str, Any]] = []
    latest = NOW - timedelta(seconds=rng.randrange(0, 600))
    remaining = rng.uniform(0, 100)
    for step in range(count):
        checked = latest - timedelta(minutes=count - 1 - step)
        remaining = max(0.0, min(100.0, remaining + rng.uniform(-15, 10)))
        reading: dict[str, Any] = {"connection": cid, "checked_at": stamp(checked)}
        roll = rng.random()
        if roll < 0.03:
            reading["status"] = "unknown"
        elif roll < 0.06:
            reading["status"] = "exhausted"
            # a reset after its own reading (SPEC §2.2 v1.2), sometimes before NOW
            reading["reset_at"] = stamp(checked + timedelta(minutes=rng.randrange(1, 360)))
        elif roll < 0.3:
            reading["remaining_percent"] = round(remaining, 1)
            reading["reset_at"] = stamp(NOW + timedelta(hours=rng.randrange(1, 6)))
        else:
            windows: list[dict[str, Any]] = [
                {"name": "5h", "remaining_percent": round(remaining, 1),
                 "reset_at": stamp(checked + timedelta(minutes=rng.randrange(1, 300)))},
                {"name": "weekly", "remaining_percent": round(rng.uniform(0, 100), 1),
                 "reset_at": stamp(NOW + timedelta(days=rng.randrange(1, 7)))},
            ]
            if rng.random() < 0.3:
                windows.append({"name": "weekly-model", "models": [models[0]],
                                "remaining_percent": round(rng.uniform(0, 20), 1),
                                "reset_at": stamp(NOW + timedelta(days=2))})
            if rng.random() < 0.1:
                windows.append({"name": "monthly", "unlimited": True})
            if rng.random() < 0.05:  # only a per-model window: the other models have none
                windows = [{"name": "daily-model", "models": [models[-1]],
                            "remaining_percent": round(remaining, 1)}]
            reading["windows"] = windows
        out.append(reading)
    rng.shuffle(out)
    return out


BURNING_READINGS = 6
BURNING_INTERVAL = timedelta(minutes=5)
FIVE_HOURS = timedelta(hours=5)
API_KEYS = ("openai", "deepseek", "mistral", "gemini")
"""The providers of the burning fleet's metered keys (cheap, premium and free rungs)."""


def burning_connection(rng: random.Random, index: int, size: FleetSize) -> dict[str, Any]:
    """Three in four a Claude plan (index % 4 < 3), the rest an API key of ``API_KEYS``."""
    if index % 4 < 3:
        provider, auth_type = "claude", "oauth"
    else:
        provider, auth_type = API_KEYS[(index // 4) % len(API_KEYS)], "apikey"
    provider_models = next(models for name, _, models in PROVIDERS if name == provider)
    return {"id": f"{provider}-{index:06d}", "provider": provider, "auth_type": auth_type,
            "models": models_for(rng, provider_models, size.models)}


def burning_history(rng: random.Random, cid: str) -> list[dict[str, Any]]:
    """Six readings 5 minutes apart of one ``5h`` window's current cycle, the latest up to
    four minutes before NOW (fresh at NOW under the settings' five minutes). The window
    resets 10 minutes to 4.5 hours after NOW (so the cycle began before the first reading
    and more than 5% of it has elapsed) and burns 2 to 40 %/h, each interval's burn drawn
    between half and one and a half times that pace: a rate and a spread to project."""
    latest = NOW - timedelta(seconds=rng.randrange(0, 240))
    reset_at = stamp(NOW + timedelta(minutes=rng.randrange(10, 270)))
    pace = rng.uniform(2.0, 40.0)
    remaining = rng.uniform(30.0, 100.0)
    out: list[dict[str, Any]] = []
    for step in range(BURNING_READINGS):
        if step:
            burnt = pace * BURNING_INTERVAL.total_seconds() / 3600.0 * rng.uniform(0.5, 1.5)
            remaining = max(remaining - burnt, 0.0)
        checked = latest - BURNING_INTERVAL * (BURNING_READINGS - 1 - step)
        out.append({"connection": cid, "checked_at": stamp(checked),
                    "windows": [{"name": "5h", "remaining_percent": round(remaining, 2),
                                 "reset_at": reset_at,
                                 "window_seconds": int(FIVE_HOURS.total_seconds())}]})
    return out


def spend(rng: random.Random, connections: list[dict[str, Any]], count: int
          ) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for _ in range(count):
        at = stamp(NOW - timedelta(minutes=rng.randrange(0, 60 * 24 * 40)))
        cost = round(rng.uniform(0, 0.05), 4)
        if rng.random() < 0.1:
            events.append({"at": at, "rung": rng.choice(["cheap", "premium"]),
                           "cost_usd": cost})
        else:
            picked = rng.choice(connections)
            events.append({"at": at, "connection": picked["id"],
                           "model": rng.choice(picked["models"]), "cost_usd": cost})
    return events


SETTINGS = """\
# A synthetic fleet generated by benchmarks/fleet.py.
[inputs]
connections = "connections.toml"
quota = "quota.json"
spend = "spend.json"

[ladder]
exit_cutoff_percent = 2
reentry_min_remaining_percent = 5
max_reading_age_seconds = 300

[budgets]
period = "month"
rung_budget_usd = { cheap = 1000.0, premium = 5000.0 }

[tiers]
free_providers = ["gemini"]
"""


SHAPES = ("mixed", "burning")


def generate(out: Path, size: FleetSize, seed: int = 1, connections_format: str = "toml",
             shape: str = "mixed") -> Path:
    """Write the fleet into ``out``; return the settings file.

    ``connections_format`` is ``toml`` (connections.toml, the default) or ``json``
    (connections.json: the same connections, which omniladder reads without tomllib).
    ``shape`` is ``mixed`` (every billing class, ``size.readings`` readings each) or
    ``burning`` (the forecast's fleet: ``burning_connection``, ``burning_history``).
    """
    if shape not in SHAPES:
        raise ValueError(f"shape {shape!r}: one of {', '.join(SHAPES)}")
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    readings: list[dict[str, Any]] = []
    if shape == "burning":
        connections = [burning_connection(rng, index, size)
                       for index in range(size.connections)]
        for item in connections:
            if item["provider"] == "claude":
                readings += burning_history(rng, item["id"])
    else:
        connections = [connection(rng, index, size) for index in range(size.connections)]
        for item in connections:
            readings += history(rng, item["id"], item["models"], size.readings)
    events = spend(rng, connections, size.spend_events)
    if connections_format == "json":
        (out / "connections.json").write_text(json.dumps({"connections": connections}),
                                              encoding="utf-8")
    else:
        (out / "connections.toml").write_text(tomli_w.dumps({"connections": connections}),
                                              encoding="utf-8")
    (out / "quota.json").write_text(
        json.dumps({"taken_at": stamp(NOW), "readings": readings}), encoding="utf-8")
    (out / "spend.json").write_text(json.dumps({"events": events}), encoding="utf-8")
    settings = out / "omniladder.toml"
    settings.write_text(SETTINGS.replace("connections.toml", f"connections.{connections_format}"),
                        encoding="utf-8")
    return settings


# --- a week of readings, for the forecast's backtest ----------------------------------------
#
# The noise model (docs/forecast.md#calibration). Each connection is one subscription account
# with a 5h window and a weekly window, read every 5 minutes for a week:
#
# * Diurnal demand: the account's burn follows its owner's working day, in a home time zone
#   drawn from UTC-8 to UTC+9: intensity 0.05 outside 08:00-20:00 local time and a sin^2 bump
#   peaking at 14:00 within it, 0.35 of that on Saturdays and Sundays.
# * Scale: the 5h window's burn at the day's peak is drawn per account, log-normal around
#   24%/h (sigma 0.45): a heavy account runs out of a 5h window in under three hours, a light
#   one never does.
# * Drift: the pace wanders over the hours, a multiplicative AR(1) in logs per 5 minutes
#   (rho 0.97, stationary sigma 0.4): a busy afternoon, a slow morning.
# * Bursts: each 5 minutes' use is that pace times a gamma draw of mean 1 (shape 1.5), and an
#   idle stretch (a meeting, lunch) starts with probability 0.03 per 5 minutes and lasts an
#   exponential 40 minutes on average.
# * Windows: the 5h window starts at the first use after the last one reset and resets 5
#   hours later (no reset instant while none runs; remaining 100%); the weekly window resets
#   at a fixed instant each week, and burns an eighth of what the 5h window burns. Use stops
#   while either window is spent.
# * Readings: every 5 minutes at the account's own second of the minute; 1% of them lost, and
#   a fifth of the accounts have one outage of 30-120 minutes in the week. Half the accounts
#   report whole percents, half one decimal; their resets are given to the second, and jitter
#   by up to a second for the half that derive it from a count of seconds left.
#
# ``--noise SCALE`` (``generate_week(noise=...)``, 0 to 1, default 1: the model above, to
# the byte) scales the noise terms only: the drift's stationary sigma is 0.4 x SCALE, the
# idle stretches start with probability 0.03 x SCALE, and each burst is
# 1 + sqrt(SCALE) x (g - 1) for the gamma draw g above (mean 1, variance SCALE x 2/3,
# exactly 1 at 0). Each term is drawn as at 1 and only scaled (a gamma of shape 1.5/SCALE
# would take other draws), so backtest_oracle.py's replay stays in step at every scale.
# The diurnal demand, the weekend, the log-normal scale per account, the lost readings and
# the outages are the same at every scale.

WEEK_START = datetime(2026, 11, 23, tzinfo=UTC)
"""A Monday, 00:00 UTC."""
READING_EVERY = timedelta(minutes=5)
WEEK_SETTINGS = """\
# A week of 5-minute readings generated by benchmarks/fleet.py --week.
[inputs]
connections = "connections.toml"
quota = "quota.json"

[ladder]
exit_cutoff_percent = 2
reentry_min_remaining_percent = 5
max_reading_age_seconds = 600
"""


def demand(local_hour: float, weekday: int) -> float:
    """The diurnal intensity (0-1) at a local hour of a weekday (0 is Monday)."""
    bump = 0.0
    if 8.0 <= local_hour < 20.0:
        bump = math.sin(math.pi * (local_hour - 8.0) / 12.0) ** 2
    level = 0.05 + 0.95 * bump
    return level * (0.35 if weekday >= 5 else 1.0)


@dataclass
class Account:
    """One generated account's state as its week runs."""

    cid: str
    offset_hours: int
    peak: float
    decimals: int
    jitter: bool
    weekly_reset: datetime
    drift: float = 0.0
    idle_until: datetime | None = None
    five_used: float = 0.0
    five_reset: datetime | None = None
    weekly_used: float = 0.0


def account(rng: random.Random, index: int) -> Account:
    return Account(
        cid=f"{'claude' if index % 2 == 0 else 'codex'}-{index:04d}",
        offset_hours=rng.randint(-8, 9), peak=24.0 * math.exp(rng.gauss(0.0, 0.45)),
        decimals=0 if index % 2 == 0 else 1, jitter=index % 2 == 1,
        weekly_reset=WEEK_START + timedelta(days=rng.randrange(1, 8),
                                            hours=rng.randrange(0, 24)))


def burst(rng: random.Random, noise: float) -> float:
    """One 5 minutes' burst: the gamma draw of mean 1 (shape 1.5) at ``noise`` 1; below,
    the same draw pulled towards 1 so that its variance is ``noise`` times as large."""
    drawn = rng.gammavariate(1.5, 1 / 1.5)
    if noise == 1.0:
        return drawn
    return 1.0 + math.sqrt(noise) * (drawn - 1.0)


DRIFT_RHO = 0.97
"""The drift's AR(1) coefficient per 5 minutes."""
DRIFT_SIGMA = 0.4
"""The drift's stationary standard deviation (in logs) at noise 1."""


def advance(rng: random.Random, item: Account, at: datetime, noise: float = 1.0) -> None:
    """Five minutes of use ending at ``at``, with the noise terms scaled by ``noise``."""
    if item.five_reset is not None and at >= item.five_reset:
        item.five_used, item.five_reset = 0.0, None
    while at >= item.weekly_reset:
        item.weekly_used = 0.0
        item.weekly_reset += timedelta(days=7)
    item.drift = DRIFT_RHO * item.drift + rng.gauss(
        0.0, DRIFT_SIGMA * noise * math.sqrt(1 - DRIFT_RHO ** 2))
    if item.idle_until is not None and at < item.idle_until:
        return
    if rng.random() < 0.03 * noise:
        item.idle_until = at + timedelta(minutes=rng.expovariate(1 / 40))
        return
    local = at + timedelta(hours=item.offset_hours)
    hours = READING_EVERY.total_seconds() / 3600.0
    use = (item.peak * demand(local.hour + local.minute / 60.0, local.weekday()) * hours
           * math.exp(item.drift) * burst(rng, noise))
    if use <= 0 or item.five_used >= 100.0 or item.weekly_used >= 100.0:
        return
    if item.five_reset is None:
        item.five_reset = at + FIVE_HOURS
    use = min(use, 100.0 - item.five_used, (100.0 - item.weekly_used) * 8.0)
    item.five_used += use
    item.weekly_used = min(item.weekly_used + use / 8.0, 100.0)


def week_reading(rng: random.Random, item: Account, checked: datetime) -> dict[str, Any]:
    def shown(used: float) -> float:
        return round(max(100.0 - used, 0.0), item.decimals)

    def reset(at: datetime) -> str:
        return stamp(at + timedelta(seconds=rng.choice((-1, 0, 1)) if item.jitter else 0))

    five: dict[str, Any] = {"name": "5h", "remaining_percent": shown(item.five_used)}
    if item.five_reset is not None:
        five["reset_at"] = reset(item.five_reset)
    weekly = {"name": "weekly", "remaining_percent": shown(item.weekly_used),
              "reset_at": reset(item.weekly_reset)}
    return {"connection": item.cid, "checked_at": stamp(checked), "windows": [five, weekly]}


def check_noise(noise: float) -> float:
    """``noise`` if it is a scale the model takes (0 to 1), else a ValueError."""
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise {noise!r}: a scale from 0 (no noise) to 1 (the documented "
                         "model)")
    return noise


def week_steps(rng: random.Random, accounts: list[Account], days: int, noise: float
               ) -> Iterator[tuple[Account, datetime, dict[str, Any] | None]]:
    """Each account's week, account after account, 5 minutes at a time: the account (its
    state after the step), the instant, and the reading written there (None: lost)."""
    steps = int(timedelta(days=days) / READING_EVERY)
    for item in accounts:
        phase = timedelta(seconds=rng.randrange(0, 300))
        outage: tuple[int, int] | None = None
        if rng.random() < 0.2:
            first = rng.randrange(steps)
            outage = (first, first + rng.randrange(6, 25))
        for step in range(steps):
            at = WEEK_START + phase + READING_EVERY * step
            advance(rng, item, at, noise)
            lost = rng.random() < 0.01 or (outage is not None and outage[0] <= step < outage[1])
            yield item, at, None if lost else week_reading(rng, item, at)


def generate_week(out: Path, connections: int, days: int = 7, seed: int = 1,
                  noise: float = 1.0) -> Path:
    """Write ``connections`` accounts' readings every 5 minutes for ``days`` days from
    ``WEEK_START`` into ``out``, by the noise model above with its noise terms scaled by
    ``noise`` (1: the model as documented); return the settings file."""
    check_noise(noise)
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    accounts = [account(rng, index) for index in range(connections)]
    readings = [reading for _, _, reading in week_steps(rng, accounts, days, noise)
                if reading is not None]
    listed = [{"id": item.cid, "provider": item.cid.split("-")[0], "auth_type": "oauth"}
              for item in accounts]
    (out / "connections.toml").write_text(tomli_w.dumps({"connections": listed}),
                                          encoding="utf-8")
    end = WEEK_START + timedelta(days=days)
    (out / "quota.json").write_text(
        json.dumps({"taken_at": stamp(end), "readings": readings}), encoding="utf-8")
    settings = out / "omniladder.toml"
    settings.write_text(WEEK_SETTINGS, encoding="utf-8")
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--models", type=int, default=5, help="models per connection")
    parser.add_argument("--readings", type=int, default=3, help="readings per connection")
    parser.add_argument("--spend-events", type=int, default=None,
                        help="spend events (default: one per ten connections)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--connections-format", choices=("toml", "json"), default="toml",
                        help="write connections.toml (default) or connections.json")
    parser.add_argument("--shape", choices=SHAPES, default="mixed",
                        help="mixed (every billing class, the default) or burning (the "
                        "forecast's fleet: Claude plans burning a 5h window, and API keys)")
    parser.add_argument("--week", type=int, default=None, metavar="DAYS",
                        help="instead, a backtest fleet: --connections accounts read every "
                        "5 minutes for DAYS days, with diurnal demand and the noise model of "
                        "docs/forecast.md#calibration")
    parser.add_argument("--noise", type=float, default=1.0, metavar="SCALE",
                        help="with --week: scale the noise model's drift, bursts and idle "
                        "stretches from 0 (none) to 1 (the documented model, the default)")
    parser.add_argument("--whatif-week", type=int, default=None, metavar="DAYS",
                        help="instead, a what-if week (benchmarks/week.py): --connections "
                        "seats and keys, the demand of DAYS days served by the declared "
                        "policy, the telemetry every --reading-minutes, and the truth")
    parser.add_argument("--reading-minutes", type=float, default=30.0,
                        help="with --whatif-week: minutes between a seat's readings")
    parser.add_argument("--weights", default="1,5,20",
                        help="with --whatif-week: the seat sizes drawn from")
    parser.add_argument("--demand-scale", type=float, default=1.0,
                        help="with --whatif-week: the demand against the fleet's weight")
    parser.add_argument("--short-anchor", choices=("first-use", "fixed"), default="first-use",
                        help="with --whatif-week: the five-hour windows' cycles start at first "
                        "use (the default, as Claude's and Codex's do) or on a fixed schedule "
                        "(the week's settings then name a window catalog saying so)")
    args = parser.parse_args()
    if args.whatif_week is not None:
        from week import write_week

        print(write_week(args.out, args.connections, args.seed, args.reading_minutes,
                         args.whatif_week, tuple(float(w) for w in args.weights.split(",")),
                         args.demand_scale, args.short_anchor))
        return
    if not 0.0 <= args.noise <= 1.0:
        parser.error(f"--noise {args.noise}: a scale from 0 to 1")
    if args.week is not None:
        print(generate_week(args.out, args.connections, args.week, args.seed, args.noise))
        return
    events = args.spend_events if args.spend_events is not None else args.connections // 10
    settings = generate(args.out, FleetSize(args.connections, args.models, args.readings,
                                            events), args.seed, args.connections_format,
                        args.shape)
    print(settings)


if __name__ == "__main__":
    main()
