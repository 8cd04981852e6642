"""Time omniladder on the example fleet and on synthetic fleets, and print a table.

    python benchmarks/run.py              # example, 10k and 20k connections
    python benchmarks/run.py --large      # also 100k connections
    python benchmarks/run.py --repeats 7

For each fleet it reports the median wall time of the whole ``omniladder plan --json``
process (a subprocess, output discarded), the median time of the engine alone (load the
inputs and make the plan in this process, no rendering), and the peak memory of the child
process (``ru_maxrss``). The baseline is ``python -c "import typer, rich.table, pydantic"``:
what any typer + rich + pydantic command pays before doing anything. Doubling a fleet must
at most double its cost (within 2.2x); the script prints the ratio.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from fleet import FleetSize, generate  # noqa: E402

AUTO_ID = "auto/thrifty"


@dataclass(frozen=True)
class Row:
    name: str
    process_s: float
    engine_s: float | None
    peak_mib: float


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    # Run from bytecode, as an installed package does: without .pyc files every run would
    # also pay for compiling omniladder's own modules.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_child(argv: Sequence[str]) -> tuple[float, float]:
    """Run one child process; return (wall seconds, peak resident MiB)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=child_env(), cwd=ROOT)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{err.decode()}")
    return elapsed, usage.ru_maxrss / 1024  # ru_maxrss is KiB on Linux


def time_process(argv: Sequence[str], repeats: int) -> tuple[float, float]:
    runs = [run_child(argv) for _ in range(repeats)]
    return statistics.median(t for t, _ in runs), max(m for _, m in runs)


def time_engine(settings: Path, repeats: int) -> float:
    from omniladder.autoid import parse_auto_id, resolve_now
    from omniladder.loading import load_inputs
    from omniladder.plan import make_plan

    auto_id = parse_auto_id(AUTO_ID)
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        inputs = load_inputs(settings)
        now, source = resolve_now(None, inputs.quota.taken_at if inputs.quota else None)
        make_plan(inputs, auto_id, now, source)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def plan_argv(settings: Path) -> list[str]:
    return [sys.executable, "-m", "omniladder", "plan", AUTO_ID, "--config", str(settings),
            "--json"]


def measure(name: str, settings: Path, repeats: int) -> Row:
    process_s, peak = time_process(plan_argv(settings), repeats)
    return Row(name, process_s, time_engine(settings, repeats), peak)


def table(rows: Sequence[Row], baseline: float) -> str:
    lines = ["| run | whole process (median) | vs. imports | engine alone (median) "
             "| peak memory |",
             "|---|---:|---:|---:|---:|"]
    for row in rows:
        engine = f"{row.engine_s * 1000:,.0f} ms" if row.engine_s is not None else "-"
        lines.append(f"| {row.name} | {row.process_s * 1000:,.0f} ms | "
                     f"{row.process_s / baseline:.2f}x | {engine} | {row.peak_mib:,.0f} MiB |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--connections", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--readings", type=int, default=3)
    parser.add_argument("--large", action="store_true", help="also plan 100,000 connections")
    args = parser.parse_args()

    gc.disable()  # as omniladder.cli.main does
    rows: list[Row] = []
    imports = [sys.executable, "-c", "import typer, rich.table, pydantic"]
    baseline, peak = time_process(imports, args.repeats)
    rows.append(Row("python -c 'import typer, rich.table, pydantic'", baseline, None, peak))
    version, peak = time_process([sys.executable, "-m", "omniladder", "--version"],
                                 args.repeats)
    rows.append(Row("omniladder --version", version, None, peak))
    rows.append(measure("example plan (15 connections)", ROOT / "examples" / "omniladder.toml",
                        args.repeats))

    sizes = [args.connections, 2 * args.connections]
    if args.large:
        sizes.append(100_000)
    by_size: dict[int, Row] = {}
    with tempfile.TemporaryDirectory(prefix="omniladder-bench-") as scratch:
        for count in sizes:
            size = FleetSize(count, args.models, args.readings, count // 10)
            settings = generate(Path(scratch) / str(count), size, seed=1)
            repeats = args.repeats if count <= 20_000 else max(1, min(args.repeats, 3))
            row = measure(f"{count:,} connections x {args.models} models x "
                          f"{args.readings} readings", settings, repeats)
            by_size[count] = row
            rows.append(row)
            print(f"  measured {row.name}", file=sys.stderr)

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, median of "
          f"{args.repeats} runs, `omniladder plan {AUTO_ID} --json`\n")
    print(table(rows, baseline))
    small, double = by_size[sizes[0]], by_size[sizes[1]]
    assert small.engine_s is not None
    assert double.engine_s is not None
    print(f"\ndoubling {sizes[0]:,} -> {sizes[1]:,} connections: whole process "
          f"{double.process_s / small.process_s:.2f}x, engine "
          f"{double.engine_s / small.engine_s:.2f}x (linear: at most 2.2x)")


if __name__ == "__main__":
    main()
