"""Time `audit traffic` on a generated ledger against the floor of reading it.

    python benchmarks/traffic_bench.py                 # 1,000,000 and 2,000,000 events
    python benchmarks/traffic_bench.py --events 200000 # a quicker look
    python benchmarks/traffic_bench.py --baseline REV  # beside another revision

The fleet is benchmarks/fleet.py's 10,000-connection fleet (seed 1). The ledger holds
served events over the 7 days up to the fleet's snapshot, one per line, spread over every
connection and its models (a tenth with a recorded cost, the others with tokens), with a
failed attempt before one event in twenty. The *floor* is a process that reads the ledger's
lines and parses each with ``json.loads``: what no audit can avoid. The audit runs as an
operator runs it (``omniladder audit traffic auto/thrifty --json``, output discarded);
memory is the child's peak ``ru_maxrss``. The target: at most 3x the floor, at most 400 MiB,
and memory that does not grow with the ledger (1M against 2M events).

Each repeat runs the floor, then the audit of this checkout, then that of each ``--baseline``
revision (its package and catalogs taken from git into a scratch directory), so a busy
machine slows every side alike; the table gives each side's best wall time and its least
CPU time (user and system), which waiting for a shared core does not add to.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from forecast_bench import revision_tree
from run import run_measured

ROOT = Path(__file__).resolve().parent.parent
END = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SPAN = timedelta(days=7)
FLOOR = ("import json, sys\n"
         "with open(sys.argv[1], 'rb') as stream:\n"
         "    for line in stream:\n"
         "        json.loads(line)\n")


def generate_fleet(out: Path) -> Path:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fleet.py"), str(out), "--connections",
         "10000", "--models", "5", "--readings", "3", "--seed", "1",
         "--connections-format", "json"], capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def generate_ledger(settings: Path, path: Path, count: int, seed: int = 1) -> None:
    """``count`` served events over the 7 days before the snapshot, written in time order."""
    rng = random.Random(seed)
    fleet = json.loads((settings.parent / "connections.json").read_text())["connections"]
    pairs = [(c["id"], model) for c in fleet for model in c.get("models") or ()]
    start = END - SPAN
    step = SPAN / count
    with path.open("w", encoding="utf-8") as out:
        for index in range(count):
            at = (start + step * index).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
            cid, model = pairs[rng.randrange(len(pairs))]
            request = f"req-{index:08d}"
            if index % 20 == 0:
                other, other_model = pairs[rng.randrange(len(pairs))]
                out.write(json.dumps({"at": at, "connection": other, "model": other_model,
                                      "requested": "auto/thrifty", "status": "failed",
                                      "request_id": request}) + "\n")
            event: dict[str, object] = {"at": at, "connection": cid, "model": model,
                                        "requested": "auto/thrifty",
                                        "tokens_in": rng.randrange(100, 50_000),
                                        "tokens_out": rng.randrange(10, 4_000),
                                        "request_id": request}
            if index % 10 == 0:
                event["cost_usd"] = round(rng.uniform(0.0001, 0.5), 6)
            out.write(json.dumps(event) + "\n")


def audit_argv(settings: Path, ledger: Path) -> list[str]:
    return [sys.executable, "-m", "omniladder", "audit", "traffic", "auto/thrifty",
            "--config", str(settings), "--traffic", str(ledger), "--json",
            "--max-leak-usd", "1000000000"]


def floor_argv(ledger: Path) -> list[str]:
    return [sys.executable, "-c", FLOOR, str(ledger)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="*", default=[1_000_000, 2_000_000])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--baseline", action="append", default=[],
                        help="a revision to time beside this checkout (repeatable)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="omniladder-traffic-") as name:
        scratch = Path(name)
        settings = generate_fleet(scratch / "fleet")
        print("  generated 10,000 connections", file=sys.stderr)
        sides = [("this checkout", ROOT)] + [(f"revision {revision[:10]}",
                                              revision_tree(scratch, revision))
                                             for revision in args.baseline]
        for count in args.events:
            ledger = scratch / f"traffic-{count}.jsonl"
            generate_ledger(settings, ledger, count)
            size = ledger.stat().st_size / 2**20
            print(f"  generated {count:,} events ({size:,.0f} MiB)", file=sys.stderr)
            floors: list[float] = []
            runs: list[list[tuple[float, float, float]]] = [[] for _ in sides]
            for _ in range(args.repeats):
                floors.append(run_measured(floor_argv(ledger))[0])
                for index, (_, root) in enumerate(sides):
                    # exit 1 is an answer too: the leak is over the allowance or unpriced
                    runs[index].append(run_measured(audit_argv(settings, ledger), (0, 1),
                                                    root=root))
            floor = min(floors)
            for (label, _), found in zip(sides, runs, strict=True):
                rows.append((count, size, floor, label, min(w for w, _, _ in found),
                             min(c for _, _, c in found), max(m for _, m, _ in found)))
            ledger.unlink()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; best of {args.repeats} "
          "run(s) of the whole process\n")
    print("| events | ledger | json.loads floor | side | audit traffic | least CPU | "
          "ratio (<= 3x) | peak memory (<= 400 MiB) |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|")
    for count, size, floor, label, wall, cpu, peak in rows:
        print(f"| {count:,} | {size:,.0f} MiB | {floor:.2f} s | {label} | {wall:.2f} s | "
              f"{cpu:.2f} s | {wall / floor:.2f}x | {peak:,.0f} MiB |")
    mine = [row for row in rows if row[3] == "this checkout"]
    if len(mine) > 1:
        print(f"\nmemory {mine[0][0]:,} -> {mine[-1][0]:,} events: {mine[0][6]:,.0f} -> "
              f"{mine[-1][6]:,.0f} MiB ({mine[-1][6] / mine[0][6]:.2f}x)")


if __name__ == "__main__":
    main()
