"""Time omniladder at fleet scale and print the table of its targets and floors.

    python benchmarks/run.py              # every row but 100,000 connections
    python benchmarks/run.py --large      # also plan 100,000 connections
    python benchmarks/run.py --repeats 7  # more runs per row (default 5; 3 for long rows)
    python benchmarks/run.py --ratios     # only the two ratio rows (start-up and 10,000)
    python benchmarks/run.py --instructions  # the same two, as instructions (valgrind),
                                             # and the 10,000 plan with expiring-first
    python benchmarks/run.py --traffic    # audit traffic on 1M and 2M events (traffic_bench.py)
    python benchmarks/run.py --litellm-import  # import litellm-spend, 1M rows from PostgreSQL
                                               # (litellm_bench.py; OMNILADDER_TEST_POSTGRES_URL)
    python benchmarks/run.py --forecast-band  # forecast with its band against the forecast
                                              # before it (forecast_bench.py; needs git)
    python benchmarks/run.py --backtest   # forecast --backtest on 100 accounts x 7 days of
                                          # 5-minute readings: time, coverage, p50 error
                                          # (backtest_bench.py)
    python benchmarks/run.py --whatif     # whatif with two scenarios vs audit traffic, 1M events
    python benchmarks/run.py --whatif-bound  # what-if's bound on a week of 10 to 1,000 seats
                                             # at 5-, 15- and 60-minute buckets
                                             # (whatif_bench.py --bound; needs highspy)

Every figure is the median wall time of repeated runs of the whole process (a subprocess,
output discarded), as an operator runs it; memory is the child's peak ``ru_maxrss``.

The *floor* of a fleet is a process that imports the libraries this project chose
(``import typer, rich.table; from pydantic import BaseModel``) and parses the fleet's input
files with the standard library (json.loads, tomllib for TOML): what no implementation on
this stack can avoid. Each row prints its ratio to the floor of its own fleet. The fleets
write their connections as JSON (omniladder reads both); the TOML row shows what the same
connections cost as TOML, whose parser, tomllib, is pure Python.

The forecast row projects the 10,000-connection fleet from its snapshot over 24 hours at
5-minute steps and prints its ratio to `simulate` over the same steps.

Two rows are ratios with a target, each timed in interleaved pairs so that a busy machine
slows both sides alike: the example's table view (the README's first command) against
``python -c "import typer, rich.table; from pydantic import BaseModel"`` (at most 1.35x), and
``plan --json`` on 10,000 connections against the floor of its own fleet (at most 2.0x).

``--instructions`` counts, instead of timing, the instructions each side of those two ratios
retires (valgrind's cachegrind tool, no cache simulation, hash seed fixed): the same figures
on every run whatever else the machine is doing, so a change's effect shows to the tenth of a
percent where wall time moves by fifteen. An instruction ratio is not a time ratio (parsing
JSON, the bulk of a fleet's floor, does more per instruction than the interpreter): compare
counts before and after a change, and time the targets themselves.

Doubling rows compare 10,000 with 20,000 connections for plan, why and simulate per step
(the cost of a 73-step simulate less that of a 1-step one, divided by 72): at most 2.2x.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "import typer, rich.table; from pydantic import BaseModel"
ONE_MODEL = (BASELINE + "; from pydantic import Field\n"
             "class Reading(BaseModel):\n    remaining_percent: float = Field(ge=0, le=100)")
"""The baseline plus one validated model: declaring any pydantic model with a field
imports pydantic.fields, pydantic.types, annotated_types and, for its validator, pydantic's
plugin loader with importlib.metadata. Printed beside the start-up row for scale."""
DAY = ("2026-11-29T00:00:00Z", "2026-11-30T00:00:00Z")
"""The day of the synthetic snapshot (taken at 12:00Z): readings arrive, resets pass."""
WINDOW = ("2026-11-29T09:00:00Z", "2026-11-29T15:00:00Z")
"""Six hours around the snapshot, for the per-step doubling."""
FORECAST_FROM = "2026-11-29T12:00:00Z"
"""The synthetic snapshot's taken_at: the forecast's now, and where its simulate starts."""
FORECAST_SPAN = (FORECAST_FROM, "2026-11-30T12:00:00Z")
"""The same 289 steps as ``forecast --horizon 24h --step 5m`` from the snapshot."""
COOLING = "claude-000121"
"""A connection of the seed-1 synthetic fleet in cooldown at the snapshot."""


def child_env(root: Path = ROOT) -> dict[str, str]:
    """The environment of a child that runs omniladder from ``root`` (this checkout, or
    another revision's tree: ``benchmarks/forecast_bench.py``)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    env["NO_COLOR"] = "1"
    # Run from bytecode, as an installed package does.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_child(argv: Sequence[str], codes: tuple[int, ...] = (0,),
              shown: int | None = None) -> tuple[float, float]:
    """Run one child process; return (wall seconds, peak resident MiB)."""
    wall, mib, _ = run_measured(argv, codes, shown)
    return wall, mib


def run_measured(argv: Sequence[str], codes: tuple[int, ...] = (0,),
                 shown: int | None = None, root: Path = ROOT) -> tuple[float, float, float]:
    """Run one child process, whose exit code must be one of ``codes``; return (wall
    seconds, peak resident MiB, CPU seconds: the child's user and system time, which
    waiting for a busy machine's cores does not add to). A failure names the first
    ``shown`` arguments only, when the rest may hold a secret (a database URL). ``root``:
    the tree the child runs omniladder from (its working directory, first on its path)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=child_env(root), cwd=root)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # reaped by wait4 (for its resource usage): Popen is told so
    proc.stderr.close()
    if code not in codes:
        named = " ".join(argv[:shown]) + (" …" if shown is not None else "")
        raise SystemExit(f"{named} exited {code}:\n{err.decode()}")
    # ru_maxrss is KiB on Linux
    return elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def timed(argv: Sequence[str], repeats: int) -> tuple[float, float]:
    """(median wall seconds, peak MiB) over ``repeats`` runs."""
    runs = [run_child(argv) for _ in range(repeats)]
    return statistics.median(t for t, _ in runs), max(m for _, m in runs)


class Paired(NamedTuple):
    """Two commands run alternately: the medians of their wall times, the peak of the
    second, the pairs' ratios (second/first, sorted) and the ratio of their least CPU times."""

    first: float
    second: float
    peak: float
    ratios: list[float]
    cpu_ratio: float


def paired(first: Sequence[str], second: Sequence[str], pairs: int) -> Paired:
    """Run ``first`` and ``second`` alternately ``pairs`` times."""
    firsts: list[float] = []
    seconds: list[float] = []
    first_cpu: list[float] = []
    second_cpu: list[float] = []
    peak = 0.0
    for _ in range(pairs):
        wall, _, cpu = run_measured(first)
        firsts.append(wall)
        first_cpu.append(cpu)
        wall, mib, cpu = run_measured(second)
        seconds.append(wall)
        second_cpu.append(cpu)
        peak = max(peak, mib)
    ratios = sorted(b / a for a, b in zip(firsts, seconds, strict=True))
    return Paired(first=statistics.median(firsts), second=statistics.median(seconds),
                  peak=peak, ratios=ratios, cpu_ratio=min(second_cpu) / min(first_cpu))


def spread(ratios: Sequence[float]) -> str:
    """The middle half of the pairs' ratios: how much the machine moved the figure."""
    count = len(ratios)
    return f"{ratios[count // 4]:.2f}-{ratios[(3 * count) // 4]:.2f}x"


def ratio_rows(big: Path, pairs: int, notes: list[str]) -> list[Row]:
    """The two ratio rows: the example's table view against the libraries' import, and
    ``plan --json`` on 10,000 connections against the floor of its fleet."""
    base, plan, peak, ratios, cpu_ratio = paired([sys.executable, "-c", BASELINE],
                                                  example_argv(), pairs)
    one_model = statistics.median(run_child([sys.executable, "-c", ONE_MODEL])[0]
                                  for _ in range(max(3, pairs // 3)))
    ratio = plan / base
    notes.append(f"start-up scale: the baseline with one pydantic model declared takes "
                 f"{fmt_seconds(one_model)} ({one_model / base:.2f}x the baseline); the "
                 f"example's table view takes {fmt_seconds(plan)} ({ratio:.2f}x; middle half "
                 f"of the pairs {spread(ratios)}; least CPU times {cpu_ratio:.2f}x)")
    rows = [Row(f"example plan, table view, vs. `python -c \"{BASELINE}\"` "
                f"({fmt_seconds(base)}; ratio of medians over {pairs} pairs)",
                plan, peak, f"<= 1.35x (here {ratio:.2f}x)", ratio <= 1.35, base)]
    big_pairs = max(3, pairs // 2)
    floor, plan_10k, peak, ratios, cpu_ratio = paired(floor_argv(big), plan_argv(big),
                                                      big_pairs)
    ratio = plan_10k / floor
    notes.append(f"10,000-connection plan --json: {fmt_seconds(plan_10k)} against its floor "
                 f"{fmt_seconds(floor)} ({ratio:.2f}x; middle half of the pairs "
                 f"{spread(ratios)}; least CPU times {cpu_ratio:.2f}x)")
    rows.append(Row(f"`plan --json`, 10,000 connections vs. the floor of its fleet "
                    f"({fmt_seconds(floor)}; ratio of medians over {big_pairs} pairs)",
                    plan_10k, peak, f"<= 2.0x (here {ratio:.2f}x)", ratio <= 2.0, floor))
    return rows


REFS_MARK = "I refs:"
"""How cachegrind's summary (on standard error) names the instructions it counted."""


def instruction_count(report: str) -> int:
    """The instruction count of cachegrind's summary (``==123== I   refs:   1,234,567``)."""
    for line in report.splitlines():
        words = line.split("==", 2)[-1].split()
        if " ".join(words[:2]) == REFS_MARK:
            return int(words[2].replace(",", ""))
    raise ValueError(f"no '{REFS_MARK}' line in valgrind's report:\n{report}")


def instructions(argv: Sequence[str]) -> int:
    """Instructions the whole process retires, counted by valgrind (output discarded)."""
    # once outside valgrind first, so that bytecode compiled on a first run is not counted
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env(),
                   cwd=ROOT, check=True)
    env = child_env()
    env["PYTHONHASHSEED"] = "0"  # string hashes move dict probes: fixed, the count repeats
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env=env, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} under valgrind exited {done.returncode}:\n"
                         f"{done.stderr}")
    return instruction_count(done.stderr)


def instruction_rows(big: Path) -> str:
    """The two ratios' sides as instruction counts, with their ratios."""
    sides = [("example plan, table view", example_argv(),
              f"`python -c \"{BASELINE}\"`", [sys.executable, "-c", BASELINE]),
             ("`plan --json`, 10,000 connections", plan_argv(big), "the floor of its fleet",
              floor_argv(big))]
    lines = ["| work | instructions | against | instructions | ratio |",
             "|---|---:|---|---:|---:|"]
    counted: dict[str, int] = {}
    for work, argv, against, floor in sides:
        mine, theirs = instructions(argv), instructions(floor)
        counted[work] = mine
        lines.append(f"| {work} | {mine / 1e6:,.0f} M | {against} | {theirs / 1e6:,.0f} M | "
                     f"{mine / theirs:.2f}x |")
    # R15: the same plan with expiring-first against declared (target: at most 1.10x)
    ordered = instructions(plan_argv(expiring_first_settings(big)))
    declared = counted["`plan --json`, 10,000 connections"]
    lines.append(f"| `plan --json`, 10,000 connections, expiring-first | {ordered / 1e6:,.0f} M "
                 f"| the same plan, declared (<= 1.10x) | {declared / 1e6:,.0f} M | "
                 f"{ordered / declared:.2f}x |")
    return "\n".join(lines)


def expiring_first_settings(settings: Path) -> Path:
    """A settings file beside the fleet's folder (so the floor does not read it) that plans
    the same inputs with R15's ``within_rung_order = "expiring-first"``."""
    text = settings.read_text(encoding="utf-8")
    for name in ("connections.json", "quota.json", "spend.json"):
        text = text.replace(f'"{name}"', json.dumps(str(settings.parent / name)))
    text = text.replace("[ladder]\n", '[ladder]\nwithin_rung_order = "expiring-first"\n')
    ordered = settings.parent.parent / f"{settings.parent.name}-expiring-first.toml"
    ordered.write_text(text, encoding="utf-8")
    return ordered


def example_argv() -> list[str]:
    return omniladder("plan", "auto/thrifty", "--config",
                      str(ROOT / "examples" / "omniladder.toml"))


def omniladder(*args: str) -> list[str]:
    return [sys.executable, "-m", "omniladder", *args]


def floor_argv(settings: Path) -> list[str]:
    files = sorted(p for p in settings.parent.iterdir()
                   if p.suffix in (".json", ".toml") and p != settings)
    code = (f"{BASELINE}; import json, tomllib, sys\n"
            "for name in sys.argv[1:]:\n"
            "    data = open(name, 'rb').read()\n"
            "    (tomllib.loads(data.decode()) if name.endswith('.toml') else json.loads(data))")
    return [sys.executable, "-c", code, *map(str, files)]


@dataclass(frozen=True)
class Row:
    work: str
    seconds: float
    peak_mib: float
    target: str
    met: bool | None
    """None when the row has no target."""
    floor: float | None


def fmt_seconds(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def table(rows: Sequence[Row]) -> str:
    lines = ["| work | median | peak memory | target | met | vs. floor |",
             "|---|---:|---:|---:|:---:|---:|"]
    for row in rows:
        ratio = f"{row.seconds / row.floor:.2f}x" if row.floor else "-"
        lines.append(f"| {row.work} | {fmt_seconds(row.seconds)} | {row.peak_mib:,.0f} MiB | "
                     f"{row.target} | {'-' if row.met is None else 'yes' if row.met else 'no'} "
                     f"| {ratio} |")
    return "\n".join(lines)


def fleet(scratch: Path, count: int, fmt: str = "json") -> Path:
    """Generate a fleet in a child process: a parent grown by a large fleet would inflate
    every later child's peak memory (Linux counts the pages a child had before exec) and
    slow every fork."""
    out = scratch / f"{count}-{fmt}"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fleet.py"), str(out), "--connections",
         str(count), "--models", "5", "--readings", "3", "--seed", "1",
         "--connections-format", fmt], capture_output=True, text=True, check=True)
    print(f"  generated {count:,} connections ({fmt})", file=sys.stderr)
    return Path(done.stdout.strip())


def simulate_argv(settings: Path, span: tuple[str, str], step: str) -> list[str]:
    return omniladder("simulate", "auto/thrifty", "--config", str(settings), "--from", span[0],
                      "--to", span[1], "--step", step)


def plan_argv(settings: Path) -> list[str]:
    return omniladder("plan", "auto/thrifty", "--config", str(settings), "--json")


def why_argv(settings: Path) -> list[str]:
    return omniladder("why", COOLING, "--config", str(settings))


def forecast_argv(settings: Path) -> list[str]:
    return omniladder("forecast", "auto/thrifty", "--config", str(settings), "--now",
                      FORECAST_FROM, "--horizon", "24h", "--step", "5m", "--json")


def per_step(settings: Path, repeats: int) -> float:
    """Seconds per simulate step: 73 steps less 1 step, over 72."""
    many, _ = timed(simulate_argv(settings, WINDOW, "5m"), repeats)
    one, _ = timed(simulate_argv(settings, (WINDOW[0], WINDOW[0]), "5m"), repeats)
    return (many - one) / 72


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=15,
                        help="pairs (baseline, example table view) to take the medians of; "
                        "half as many (at least 3) for 10,000 connections")
    parser.add_argument("--large", action="store_true", help="also plan 100,000 connections")
    parser.add_argument("--ratios", action="store_true",
                        help="only the two ratio rows (start-up and 10,000 connections)")
    parser.add_argument("--instructions", action="store_true",
                        help="count the two ratios' instructions with valgrind instead")
    parser.add_argument("--traffic", action="store_true",
                        help="only audit traffic on 1,000,000 and 2,000,000 events against "
                        "the json.loads floor (benchmarks/traffic_bench.py)")
    parser.add_argument("--litellm-import", action="store_true",
                        help="only import litellm-spend: 1,000,000 rows from the PostgreSQL "
                        "server OMNILADDER_TEST_POSTGRES_URL names, against the floor of "
                        "fetching them with the same driver and cursor "
                        "(benchmarks/litellm_bench.py)")
    parser.add_argument("--forecast-band", action="store_true",
                        help="only forecast with its band on 10,000 burning connections "
                        "against the forecast before the band, on the same fleet "
                        "(benchmarks/forecast_bench.py; --repeats rounds, at least 3)")
    parser.add_argument("--backtest", action="store_true",
                        help="only forecast --backtest on a generated week of 100 accounts' "
                        "5-minute readings: its time, the band's coverage and the p50's error "
                        "(benchmarks/backtest_bench.py)")
    parser.add_argument("--whatif", action="store_true",
                        help="only whatif with two scenarios against audit traffic on a "
                        "1,000,000-event ledger of 10,000 connections "
                        "(benchmarks/whatif_bench.py --replay)")
    parser.add_argument("--whatif-bound", action="store_true",
                        help="only what-if's bound on generated weeks of 10, 100, 300 and "
                        "1,000 seats (benchmarks/whatif_bench.py --bound; the whatif extra)")
    args = parser.parse_args()
    if args.whatif:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "whatif_bench.py"),
                               "--replay"], check=False)
        raise SystemExit(done.returncode)
    if args.whatif_bound:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "whatif_bench.py"),
                               "--bound"], check=False)
        raise SystemExit(done.returncode)
    if args.forecast_band:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "forecast_bench.py"),
                               "--repeats", str(max(3, args.repeats))], check=False)
        raise SystemExit(done.returncode)
    if args.backtest:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "backtest_bench.py")],
                              check=False)
        raise SystemExit(done.returncode)
    if args.litellm_import:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "litellm_bench.py")],
                              check=False)
        raise SystemExit(done.returncode)
    if args.traffic:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "traffic_bench.py")],
                              check=False)
        raise SystemExit(done.returncode)
    repeats, long_repeats = args.repeats, max(1, min(args.repeats, 3))
    rows: list[Row] = []
    notes: list[str] = []

    if args.instructions:
        with tempfile.TemporaryDirectory(prefix="omniladder-bench-") as name:
            counted = instruction_rows(fleet(Path(name), 10_000))
        print(f"python {sys.version.split()[0]}; instructions retired by the whole process "
              "(valgrind --tool=cachegrind --cache-sim=no, PYTHONHASHSEED=0)\n")
        print(counted)
        return

    if args.ratios:
        with tempfile.TemporaryDirectory(prefix="omniladder-bench-") as name:
            rows = ratio_rows(fleet(Path(name), 10_000), args.pairs, notes)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; wall time of the "
              "whole process\n")
        print(table(rows))
        print()
        for note in notes:
            print(note)
        return

    with tempfile.TemporaryDirectory(prefix="omniladder-bench-") as name:
        scratch = Path(name)
        small, big = fleet(scratch, 2_000), fleet(scratch, 10_000)
        double = fleet(scratch, 20_000)
        toml = fleet(scratch, 10_000, "toml")
        floors = {s: timed(floor_argv(s), repeats)[0] for s in (small, big, double, toml)}

        seconds, peak = timed(simulate_argv(big, DAY, "1m"), long_repeats)
        rows.append(Row("`simulate` 24 h at 1-minute steps, 10,000 connections", seconds, peak,
                        "<= 60 s", seconds <= 60, floors[big]))
        print("  measured simulate 10k", file=sys.stderr)
        seconds, peak = timed(forecast_argv(big), long_repeats)
        same_steps, _ = timed(simulate_argv(big, FORECAST_SPAN, "5m"), long_repeats)
        rows.append(Row(f"`forecast` 24 h at 5-minute steps, 10,000 connections "
                        f"({seconds / same_steps:.2f}x `simulate` over the same steps, "
                        f"{fmt_seconds(same_steps)})", seconds, peak, "<= 5 s", seconds <= 5,
                        floors[big]))
        print("  measured forecast 10k", file=sys.stderr)
        seconds, peak = timed(simulate_argv(small, DAY, "5m"), repeats)
        rows.append(Row("`simulate` 24 h at 5-minute steps, 2,000 connections", seconds, peak,
                        "<= 6 s", seconds <= 6, floors[small]))
        plan_10k, peak = timed(plan_argv(big), repeats)
        rows.append(Row("`plan --json`, 10,000 connections x 5 models x 3 readings", plan_10k,
                        peak, "<= 0.7 s", plan_10k <= 0.7, floors[big]))
        seconds, peak = timed(plan_argv(toml), repeats)
        rows.append(Row("`plan --json`, the same 10,000 connections as TOML", seconds, peak,
                        "-", None, floors[toml]))
        if args.large:
            large = fleet(scratch, 100_000)
            large_floor = timed(floor_argv(large), long_repeats)[0]
            seconds, peak = timed(plan_argv(large), long_repeats)
            rows.append(Row("`plan --json`, 100,000 connections", seconds, peak,
                            "<= 8 s, <= 0.8 GiB", seconds <= 8 and peak <= 0.8 * 1024,
                            large_floor))
        why_10k, peak = timed(why_argv(big), repeats)
        rows.append(Row("`why` one connection in cooldown, 10,000 connections", why_10k, peak,
                        "<= 1.0 s", why_10k <= 1.0, floors[big]))
        print("  measured plan and why", file=sys.stderr)

        rows.extend(ratio_rows(big, args.pairs, notes))

        plan_20k, _ = timed(plan_argv(double), repeats)
        why_20k, _ = timed(why_argv(double), repeats)
        step_10k, step_20k = per_step(big, long_repeats), per_step(double, long_repeats)
        notes.append(f"doubling 10,000 -> 20,000 connections (at most 2.2x): plan "
                     f"{plan_20k / plan_10k:.2f}x ({fmt_seconds(plan_20k)}), why "
                     f"{why_20k / why_10k:.2f}x ({fmt_seconds(why_20k)}), simulate per step "
                     f"{step_20k / step_10k:.2f}x ({step_10k * 1000:.1f} -> "
                     f"{step_20k * 1000:.1f} ms)")
        notes.append("floors: " + ", ".join(
            f"{label} {fmt_seconds(floors[s])}" for label, s in
            (("2,000 JSON", small), ("10,000 JSON", big), ("20,000 JSON", double),
             ("10,000 TOML", toml))))

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; median of {repeats} runs "
          f"({long_repeats} for the simulate, forecast and 100,000 rows) of the whole process\n")
    print(table(rows))
    print()
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
