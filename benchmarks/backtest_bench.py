"""Time `forecast --backtest` on a generated week and print the band's calibration.

    python benchmarks/backtest_bench.py                    # 100 accounts x 7 days, seed 1
    python benchmarks/backtest_bench.py --connections 20   # a quicker look
    python benchmarks/backtest_bench.py --connections 40 --noise 0.5   # a calmer week

The week is benchmarks/fleet.py's (``--week``; the noise model is in docs/forecast.md
#calibration, and ``--noise SCALE`` scales its noise terms, 1 by default): every account
read every 5 minutes. The backtest runs as an operator runs it (``omniladder forecast
auto/thrifty --backtest --json``, in a child process, output kept for its figures); memory
is the child's peak ``ru_maxrss``. The targets: the whole backtest of 100 accounts x 7 days
in at most 60 s; on that week, the p10-p90 band's coverage within 70-90% and the p50's
median absolute error at 1-3 h lead at most 20 minutes. The figures are also printed per
window name (5h, weekly) and lead time, from the same analysis run in this process.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import child_env

ROOT = Path(__file__).resolve().parent.parent


def generate_week(out: Path, connections: int, days: int, seed: int, noise: float = 1.0
                  ) -> Path:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fleet.py"), str(out), "--connections",
         str(connections), "--week", str(days), "--seed", str(seed), "--noise", repr(noise)],
        capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def run_measured_json(settings: Path) -> tuple[float, float, float, dict[str, object]]:
    """(wall seconds, CPU seconds, peak MiB, the JSON document) of one backtest run."""
    argv = [sys.executable, "-m", "omniladder", "forecast", "auto/thrifty", "--config",
            str(settings), "--backtest", "--json"]
    with tempfile.TemporaryFile() as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.PIPE, env=child_env(),
                                cwd=ROOT)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stderr.close()
        if proc.returncode != 0:
            raise SystemExit(f"backtest exited {proc.returncode}:\n{err.decode()}")
        sink.seek(0)
        document = json.loads(sink.read())
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, document


def by_name(settings: Path) -> list[str]:
    """The figures per window name and lead time, from the analysis run in this process."""
    sys.path.insert(0, str(ROOT))
    from omniladder.analyses.backtest import (
        LEADS,
        backtest,
        reading_instants,
        serving_connections,
    )
    from omniladder.analyses.forecast.pace import catalog_lengths
    from omniladder.commands.common import InputOptions
    from omniladder.engine.autoid import parse_auto_id
    from omniladder.inputs.input_set import find_settings, resolve_files
    from omniladder.inputs.scopes import load_window_scopes

    inputs = InputOptions(config=settings).load()
    auto_id = parse_auto_id("auto/thrifty")
    files = resolve_files(find_settings(settings), inputs.settings, no_shipped_catalogs=False)
    scopes = load_window_scopes(files.window_catalogs, include_shipped=True)
    instants = reading_instants(inputs, serving_connections(inputs, auto_id))
    result = backtest(inputs, auto_id, instants[0], instants[-1],
                      lengths=catalog_lengths(scopes))
    lines = ["| window | lead | samples | in band | p50 median error | bias | p50 lasts |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for name in sorted({s.window for s in result.samples}):
        for label, low, high in LEADS:
            picked = [s for s in result.samples if s.window == name and low <= s.lead_seconds
                      and (high is None or s.lead_seconds < high)]
            if not picked:
                continue
            errors = [s.error_seconds for s in picked]
            lines.append(
                f"| {name} | {label} | {len(picked):,} | "
                f"{sum(s.inside for s in picked) / len(picked):.1%} | "
                f"{statistics.median(abs(e) for e in errors) / 60:.0f} min | "
                f"{statistics.median(errors) / 60:+.0f} min | "
                f"{sum(s.p50 is None for s in picked) / len(picked):.0%} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--noise", type=float, default=1.0, metavar="SCALE",
                        help="the week's noise scale (benchmarks/fleet.py --noise; default 1)")
    args = parser.parse_args()
    if not 0.0 <= args.noise <= 1.0:
        parser.error(f"--noise {args.noise}: a scale from 0 to 1")
    with tempfile.TemporaryDirectory(prefix="omniladder-backtest-") as name:
        settings = generate_week(Path(name), args.connections, args.days, args.seed,
                                 args.noise)
        readings = len(json.loads((settings.parent / "quota.json").read_text())["readings"])
        wall, cpu, peak, document = run_measured_json(settings)
        detail = by_name(settings)
    coverage = document["coverage"]
    lead = {row["lead"]: row for row in document["by_lead"]}  # type: ignore[attr-defined]
    mae = lead["1-3h"]["mae_seconds"]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; one run of the whole "
          "process\n")
    print(f"backtest of {args.connections} accounts x {args.days} days ({readings:,} "
          f"readings, seed {args.seed}, noise {args.noise:g}): {wall:.1f} s wall, "
          f"{cpu:.1f} s CPU, {peak:,.0f} MiB peak; target <= 60 s: "
          f"{'met' if wall <= 60 else 'NOT met'}")
    print(f"{document['forecasts']:,} window forecasts, {document['samples']:,} crossings "
          f"judged")
    print(f"band p10-p90 coverage {coverage:.1%}; target 70-90%: "
          f"{'met' if coverage is not None and 0.7 <= coverage <= 0.9 else 'NOT met'}")
    met = mae is not None and mae <= 1200
    print(f"p50 median absolute error at 1-3 h lead {mae / 60:.1f} min "
          f"({lead['1-3h']['samples']:,} samples); target <= 20 min: "
          f"{'met' if met else 'NOT met'}")
    if not met:
        print("  (reported, not gated: the error of the median of the generator's own futures, "
              "the best p50 there is, is printed by")
        print("  benchmarks/backtest_oracle.py with the same arguments; "
              "docs/forecast.md#oracle)")
    print()
    print("\n".join(detail))


if __name__ == "__main__":
    main()
