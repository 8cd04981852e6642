"""Time what-if's bound (SPEC §10.6, docs/whatif.md#bound) on generated weeks of demand.

    python benchmarks/whatif_bench.py --replay                  # whatif vs audit traffic, 1M events
    python benchmarks/whatif_bench.py --bound                   # 10, 100, 300, 1000 seats
    python benchmarks/whatif_bench.py --bound --connections 10 100 --widths 15
    python benchmarks/whatif_bench.py --bound --run-lengths 1   # first-use stretches of one
                                                                # window length only

Each fleet is seats with a five-hour first-use window and a seven-day fixed one, generated
from a seed: every seat's weekly reset at its own hour of the week with what it showed at the
start (25-100 %), its five-hour window idle or part used, and a week of demand of about 20
requests per seat a day, busier in working hours, every request with a paid option (a key
at $3 per million token units). One request takes 1-4 % of a seat's five-hour window and a
tenth of that of its weekly one, so both bind: the weekly window holds about 70 % of the
week's demand, the five-hour one turns a seat away in its busiest hours.

Each row is one ``solve`` in a child process (its peak memory its own), timed by the bound
itself (building and solving the program, not importing HiGHS), with the CPU seconds the
process spent on it beside (what a busy machine's other work does not add to), stopped after
``--timeout`` seconds. The target: a week of 100 seats at 15-minute buckets in at most 30 s.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from week import poisson  # noqa: E402

START = datetime(2026, 3, 2, tzinfo=UTC)
"""A Monday, 00:00Z: the generated week's start."""
DAYS = 7
PER_DAY = 20
"""Requests per seat a day, on average."""
MEAN_UNITS = 20_000.0
"""A request's token units on average."""
USD_PER_UNIT = 3e-6
"""The paid key's price per token unit ($3 a million)."""
HOURLY = [0.3] * 7 + [1.0, 1.6, 2.0, 2.0, 1.8, 1.4, 1.8, 2.0, 2.0, 1.8, 1.4, 1.0] + [0.6] * 5
"""The demand's weight by hour of the day (UTC): busy from 07:00 to 19:00."""


def week(connections: int, seed: int) -> dict[str, object]:
    """A fleet and its week of demand, as plain data (what ``problem`` builds the bound's
    input from)."""
    rng = random.Random(seed)
    seats = []
    for number in range(connections):
        # percent a unit, for a request of the mean's units: 8-15 % of the five hours,
        # 1.2-2 % of the week
        five_hour = rng.uniform(8.0, 15.0) / MEAN_UNITS
        weekly = rng.uniform(1.2, 2.0) / MEAN_UNITS
        phase = rng.uniform(0, 7 * 24)  # the weekly reset's hour of the week
        busy = rng.random() < 0.5
        seats.append({
            "connection": f"seat-{number:04d}",
            "five_hour_ppu": five_hour,
            "weekly_ppu": weekly,
            "weekly_phase_hours": phase,
            "weekly_left": rng.uniform(25.0, 100.0),
            "five_hour_left": rng.uniform(0.0, 100.0) if busy else 100.0,
            "five_hour_reset_hours": rng.uniform(0.1, 5.0) if busy else None,
        })
    weights = [HOURLY[hour % 24] for hour in range(DAYS * 24)]
    total = connections * PER_DAY * DAYS
    scale = sum(weights)
    instants: list[float] = []
    for hour, weight in enumerate(weights):
        count = poisson(rng, total * weight / scale)
        instants += [hour + rng.random() for _ in range(count)]
    instants.sort()
    # lognormal, capped: the mean of lognormvariate(mu, 0.9) is exp(mu + 0.405)
    units = [min(200_000.0, rng.lognormvariate(math.log(MEAN_UNITS) - 0.405, 0.9))
             for _ in instants]
    return {"seats": seats, "hours": instants, "units": units}


def problem(data: dict[str, object], bucket_minutes: float) -> object:
    sys.path.insert(0, str(ROOT))
    from omniladder.analyses.whatif.bound import BoundProblem, QuotaOption, QuotaWindow

    end = START + timedelta(days=DAYS)
    week_length = timedelta(days=7)
    options = []
    for seat in data["seats"]:  # type: ignore[attr-defined]
        first = START + timedelta(hours=seat["weekly_phase_hours"]) - week_length
        cycles = ((first, first + week_length, seat["weekly_left"]),
                  (first + week_length, first + 2 * week_length, 100.0))
        reset = seat["five_hour_reset_hours"]
        options.append(QuotaOption(connection=seat["connection"], windows=(
            QuotaWindow(name="5h", percent_per_unit=seat["five_hour_ppu"],
                        first_use_seconds=5 * 3600.0, start_capacity=seat["five_hour_left"],
                        start_reset=None if reset is None else START + timedelta(hours=reset)),
            QuotaWindow(name="7d", percent_per_unit=seat["weekly_ppu"], cycles=cycles))))
    units = data["units"]
    return BoundProblem(
        start=START, end=end,
        at=[START + timedelta(hours=hour) for hour in data["hours"]],  # type: ignore[attr-defined]
        units=units,  # type: ignore[arg-type]
        paid_usd=[u * USD_PER_UNIT for u in units],  # type: ignore[attr-defined]
        quota=options, may_block=0, bucket_seconds=bucket_minutes * 60)


def one(connections: int, minutes: float, seed: int, run_lengths: tuple[int, ...] | None
        ) -> dict[str, object]:
    """Solve one fleet at one bucket width (in this process): the figures as a dict."""
    sys.path.insert(0, str(ROOT))
    from omniladder.analyses.whatif import bound

    if run_lengths is not None:
        bound.RUN_LENGTHS = run_lengths
    data = week(connections, seed)
    built = problem(data, minutes)
    bound.solve(problem(week(1, seed), minutes))  # type: ignore[arg-type]  # HiGHS loaded
    began, cpu_before = time.perf_counter(), _cpu()
    result = bound.solve(built)  # type: ignore[arg-type]
    wall = time.perf_counter() - began
    return {"connections": connections, "minutes": minutes, "buckets": result.buckets,
            "variables": result.variables, "constraints": result.constraints,
            "seconds": result.seconds, "wall": wall, "usd": result.usd,
            "paid_all_usd": sum(built.paid_usd),  # type: ignore[attr-defined]
            "requests": len(data["units"]),  # type: ignore[arg-type]
            "solver": result.solver,
            "cpu": _cpu() - cpu_before,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(connections: int, minutes: float, seed: int, run_lengths: str | None,
          timeout: float) -> dict[str, object] | None:
    """``one`` in a child process; None when it ran past ``timeout`` seconds."""
    argv = [sys.executable, __file__, "--one", str(connections), str(minutes), "--seed",
            str(seed)] + (["--run-lengths", run_lengths] if run_lengths else [])
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=ROOT, check=False)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    figures: dict[str, object] = json.loads(done.stdout)
    return figures


TWO_SCENARIOS = ('[[scenarios]]\nname = "one codex seat fewer"\nremove = ["codex-000001"]\n'
                 '[[scenarios]]\nname = "a claude seat more"\nadd = ["claude-000000"]\n')
"""The two scenarios ``--replay`` replays beside ``as-is``, on traffic_bench.py's fleet."""


def replay(events: int) -> None:
    """``whatif`` with two scenarios (three replays, ``--no-bound``) against ``audit traffic``
    on traffic_bench.py's 10,000-connection fleet and a ledger of ``events`` events, one after
    the other, each in a child process: wall time, CPU time and peak memory. The target: at
    most 3x the audit's time, at most 1 GiB."""
    import tempfile

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from run import omniladder, run_measured
    from traffic_bench import generate_fleet, generate_ledger

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        settings = generate_fleet(folder / "fleet")
        ledger = folder / "ledger.jsonl"
        generate_ledger(settings, ledger, events)
        scenarios = folder / "two.toml"
        scenarios.write_text(TWO_SCENARIOS, encoding="utf-8")
        audit = run_measured(omniladder("audit", "traffic", "auto/thrifty", "--config",
                                        str(settings), "--traffic", str(ledger), "--json"),
                             codes=(0, 1))
        whatif = run_measured(omniladder("whatif", "auto/thrifty", "--config", str(settings),
                                         "--traffic", str(ledger), "--scenario",
                                         str(scenarios), "--no-bound", "--json"))
    print(f"| run, {events:,} events, 10,000 connections | wall | CPU | peak memory |")
    print("|---|---:|---:|---:|")
    for name, (wall, mib, cpu) in (("`audit traffic`", audit), ("`whatif`, two scenarios",
                                                                whatif)):
        print(f"| {name} | {wall:.1f} s | {cpu:.1f} s | {mib:,.0f} MiB |")
    ratio = whatif[2] / audit[2]
    print(f"\nwhatif / audit traffic: {ratio:.2f}x CPU ({whatif[0] / audit[0]:.2f}x wall); "
          f"target at most 3x and 1,024 MiB: "
          f"{'met' if ratio <= 3 and whatif[1] <= 1024 else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bound", action="store_true", help="time the bound")
    parser.add_argument("--replay", type=int, nargs="?", const=1_000_000, default=None,
                        metavar="EVENTS", help="time whatif against audit traffic on a "
                        "ledger of EVENTS events (default 1,000,000)")
    parser.add_argument("--connections", type=int, nargs="+", default=[10, 100, 300, 1000])
    parser.add_argument("--widths", type=float, nargs="+", default=[5, 15, 60],
                        help="bucket widths in minutes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds one solve may take before its row says so")
    parser.add_argument("--run-lengths", default=None, metavar="K,K,…",
                        help="first-use stretches in window lengths (default: the module's)")
    parser.add_argument("--one", nargs=2, metavar=("CONNECTIONS", "MINUTES"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    lengths = (tuple(int(k) for k in args.run_lengths.split(","))
               if args.run_lengths else None)
    if args.one:
        print(json.dumps(one(int(args.one[0]), float(args.one[1]), args.seed, lengths)))
        return
    if args.replay is not None:
        replay(args.replay)
        return
    if not args.bound:
        parser.error("say what to time: --bound or --replay")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; one solve per row in a "
          f"child process, seed {args.seed}"
          + (f", first-use stretches of {args.run_lengths} lengths" if lengths else "") + "\n")
    print("| seats | requests | bucket | buckets | variables | constraints | seconds | CPU | "
          "peak memory | bound | all paid |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    solver = None
    target: float | None = None
    for connections in args.connections:
        for minutes in args.widths:
            found = child(connections, minutes, args.seed, args.run_lengths, args.timeout)
            if found is None:
                print(f"| {connections:,} | | {minutes:g} min | | | | > {args.timeout:g} s "
                      "| | | | |", flush=True)
                continue
            solver = found["solver"]
            if (connections, minutes) == (100, 15):
                target = float(found["seconds"])  # type: ignore[arg-type]
            print(f"| {connections:,} | {found['requests']:,} | {minutes:g} min | "
                  f"{found['buckets']:,} | {found['variables']:,} | {found['constraints']:,} "
                  f"| {found['seconds']:.2f} s | {found['cpu']:.2f} s | "
                  f"{found['peak_mib']:,.0f} MiB | "
                  f"${found['usd']:,.2f} | ${found['paid_all_usd']:,.2f} |", flush=True)
    if solver:
        print(f"\n{solver}")
    if target is not None:
        print(f"target: a week of 100 seats at 15-minute buckets in at most 30 s: "
              f"{target:.1f} s, {'met' if target <= 30 else 'NOT met'}")


if __name__ == "__main__":
    main()
