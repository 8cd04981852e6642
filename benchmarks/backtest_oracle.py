"""The least p50 error the generated week allows: a forecaster that knows the generator.

    python benchmarks/backtest_oracle.py                    # 100 accounts x 7 days, seed 1
    python benchmarks/backtest_oracle.py --connections 20   # a quicker look
    python benchmarks/backtest_oracle.py --connections 40 --noise 0.5   # a calmer week

The backtest's 1-3 h target is a median absolute error of the p50; how low can it go on
benchmarks/fleet.py's week? This script replays the generator (the same calls in the same
order, checked against the readings it wrote) to recover each account's hidden state at
every reading: the use of its 5h window to the fraction, its drift, whether it is idle.
For each crossing of a 5h window that the backtest judged at 1-3 h lead, it runs the
generator's own step (``fleet.advance``) forward from that state ``--futures`` times, with
draws of its own, and takes the median instant the window first shows the cutoff (a
future that lasts to the reset counting as later than any crossing): the best p50 for
absolute error a forecaster could give, knowing everything the readings only hint at.
Its median absolute error over the same crossings is printed beside the forecast's.
``--noise SCALE`` generates and replays the week with its noise terms scaled (fleet.py
``--noise``; 1, the default, is the documented model), the futures too; at 0 the futures
are the generator's one deterministic path, so the oracle misses only by the readings lost.
``--drift-unknown`` also prints a second oracle that knows all but the drift: each of its
futures starts from a drift drawn from the drift's stationary law, not the account's own,
as a forecaster that knows the account's demand and scale exactly but not where its pace
has wandered to.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fleet

from omniladder.analyses.backtest import Sample, backtest, reading_instants, serving_connections
from omniladder.analyses.forecast.pace import catalog_lengths
from omniladder.commands.common import InputOptions
from omniladder.engine.autoid import parse_auto_id
from omniladder.inputs.input_set import find_settings, resolve_files
from omniladder.inputs.scopes import load_window_scopes

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
CUTOFF = 2.0
"""The generated week's exit cutoff (``fleet.WEEK_SETTINGS``)."""


def hidden_states(connections: int, days: int, seed: int, written: list[dict[str, Any]],
                  noise: float = 1.0) -> dict[tuple[str, datetime], fleet.Account]:
    """Each account's state after the step of each reading instant, replaying
    ``fleet.generate_week``'s draws at ``noise``; the readings it would write must be
    those written."""
    rng = random.Random(seed)
    accounts = [fleet.account(rng, index) for index in range(connections)]
    states: dict[tuple[str, datetime], fleet.Account] = {}
    replayed: list[dict[str, Any]] = []
    for item, at, reading in fleet.week_steps(rng, accounts, days, noise):
        states[(item.cid, at)] = copy.copy(item)
        if reading is not None:
            replayed.append(reading)
    if replayed != written:
        raise SystemExit("the replay does not write the generated readings: "
                         "benchmarks/fleet.py changed its draws")
    return states


def oracle_p50(state: fleet.Account, sample: Sample, futures: int,
               rng: random.Random, noise: float = 1.0, drift_known: bool = True
               ) -> datetime | None:
    """The median of the instants the window first shows the cutoff over ``futures`` runs
    of the generator at ``noise`` from ``state`` (None: the median future lasts to the
    reset); without ``drift_known``, each future's drift is drawn from its stationary law
    (``fleet.DRIFT_SIGMA``)."""
    reset_at = sample.reset_at
    assert reset_at is not None
    found: list[datetime | None] = []
    for _ in range(futures):
        item = copy.copy(state)
        if not drift_known:
            item.drift = rng.gauss(0.0, fleet.DRIFT_SIGMA * noise)
        at, crossed = sample.at, None
        while True:
            at += fleet.READING_EVERY
            if at >= reset_at:
                break
            fleet.advance(rng, item, at, noise)
            if round(max(100.0 - item.five_used, 0.0), item.decimals) <= CUTOFF:
                crossed = at
                break
        found.append(crossed)
    later = reset_at + timedelta(days=1)
    return sorted(found, key=lambda at: at or later)[futures // 2]


def crossing_errors(connections: int, days: int, seed: int, futures: int,
                    noise: float = 1.0, drift_unknown: bool = False
                    ) -> tuple[list[float], list[float], list[int], list[float]]:
    """(the oracle's, the forecast's) p50 errors in minutes, positive late, on each crossing
    of a 5h window the backtest judged at 1-3 h lead on the week of these arguments, the
    day of the week (0 is Monday, UTC) each was forecast on, and with ``drift_unknown``
    the errors of the oracle that does not know the drift (else empty)."""
    with tempfile.TemporaryDirectory(prefix="omniladder-oracle-") as name:
        settings = fleet.generate_week(Path(name), connections, days, seed, noise)
        written = json.loads((settings.parent / "quota.json").read_text())["readings"]
        states = hidden_states(connections, days, seed, written, noise)
        inputs = InputOptions(config=settings).load()
        files = resolve_files(find_settings(settings), inputs.settings,
                              no_shipped_catalogs=False)
        scopes = load_window_scopes(files.window_catalogs, include_shipped=True)
    auto_id = parse_auto_id("auto/thrifty")
    instants = reading_instants(inputs, serving_connections(inputs, auto_id))
    result = backtest(inputs, auto_id, instants[0], instants[-1],
                      lengths=catalog_lengths(scopes))
    picked = [s for s in result.samples
              if s.window == "5h" and 3600 <= s.lead_seconds < 3 * 3600]

    def errors(drift_known: bool) -> list[float]:
        rng = random.Random(seed + 1)
        found: list[float] = []
        for sample in picked:
            p50 = oracle_p50(states[(sample.connection_id, sample.at)], sample, futures,
                             rng, noise, drift_known)
            assert sample.reset_at is not None
            found.append(((p50 or sample.reset_at) - sample.truth).total_seconds() / 60)
        return found

    return (errors(True), [s.error_seconds / 60 for s in picked],
            [s.at.weekday() for s in picked], errors(False) if drift_unknown else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--futures", type=int, default=41, help="runs per crossing (odd)")
    parser.add_argument("--noise", type=float, default=1.0, metavar="SCALE",
                        help="the week's noise scale (benchmarks/fleet.py --noise; default 1)")
    parser.add_argument("--drift-unknown", action="store_true",
                        help="also the oracle that does not know the drift")
    args = parser.parse_args()
    if not 0.0 <= args.noise <= 1.0:
        parser.error(f"--noise {args.noise}: a scale from 0 to 1")
    oracle, forecast, weekdays, blind = crossing_errors(
        args.connections, args.days, args.seed, args.futures, args.noise,
        args.drift_unknown)
    print(f"5h windows' crossings at 1-3 h lead on {args.connections} accounts x "
          f"{args.days} days (seed {args.seed}, noise {args.noise:g}): {len(oracle):,}")
    rows = [("the generator's own median future", oracle)]
    if blind:
        rows.append(("the same, its drift unknown", blind))
    for label, errors in (*rows, ("the forecast's p50", forecast)):
        print(f"  {label}: median absolute error {statistics.median(map(abs, errors)):.1f} "
              f"min, bias {statistics.median(errors):+.1f} min")
    print("by the day forecast on (the first has no profile yet): crossings, median absolute "
          "error of the oracle and of the forecast")
    for day in sorted(set(weekdays)):
        pairs = [(o, f) for o, f, on in zip(oracle, forecast, weekdays, strict=True)
                 if on == day]
        print(f"  {DAYS[day]}: {len(pairs):,}, "
              f"{statistics.median(abs(o) for o, _ in pairs):.1f} min, "
              f"{statistics.median(abs(f) for _, f in pairs):.1f} min")


if __name__ == "__main__":
    main()
