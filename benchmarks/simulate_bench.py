"""Time `simulate` over 24 hours at 1-minute steps on the example fleets; prints its figures.

Run from the repository root:  python benchmarks/simulate_bench.py
Standard library only. The figure that matters is the whole command's wall time, measured
in a fresh process (imports, loading, 1,441 steps with hysteresis plus 1,441 with a single
threshold, each step re-deciding only the connections whose inputs changed, and the
terminal chart), the way an operator would run it. benchmarks/run.py times the fleet-scale
rows.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5
CASES = (
    ("example fleet", "examples/omniladder.toml", "2026-11-29T00:00:00Z",
     "2026-11-30T00:00:00Z"),
    ("day example", "examples/day/omniladder.toml", "2026-11-29T00:00:00Z",
     "2026-11-30T00:00:00Z"),
)


def command(config: str, start: str, end: str) -> list[str]:
    return [sys.executable, "-m", "omniladder", "simulate", "auto/thrifty", "--config", config,
            "--from", start, "--to", end, "--step", "1m"]


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    sys.path.insert(0, str(ROOT))
    from omniladder.analyses.simulate import parse_step, simulate
    from omniladder.commands.common import InputOptions
    from omniladder.engine.autoid import parse_auto_id, parse_instant

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, best and median of {RUNS}")
    for name, config, start, end in CASES:
        walls: list[float] = []
        for _ in range(RUNS):
            began = time.perf_counter()
            subprocess.run(command(config, start, end), cwd=ROOT, env=env, check=True,
                           stdout=subprocess.DEVNULL)
            walls.append(time.perf_counter() - began)
        inputs = InputOptions(config=ROOT / config).load()
        cores: list[float] = []
        for _ in range(RUNS):
            began = time.perf_counter()
            series = simulate(inputs, parse_auto_id("auto/thrifty"), parse_instant(start),
                              parse_instant(end), parse_step("1m"))
            cores.append(time.perf_counter() - began)
        steps = len(series.points)
        print(f"{name}: {len(inputs.connections)} connections, {steps} steps at 1m")
        print(f"  whole command     best {min(walls):.2f}s  median "
              f"{statistics.median(walls):.2f}s")
        print(f"  simulate() alone  best {min(cores):.2f}s  median "
              f"{statistics.median(cores):.2f}s  "
              f"({min(cores) / steps * 1e3:.2f} ms per step, both walks)")


if __name__ == "__main__":
    main()
