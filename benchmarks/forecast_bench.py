"""Time `forecast` with its band against the forecast before the band, on one fleet.

    python benchmarks/run.py --forecast-band            # through the table's runner
    python benchmarks/forecast_bench.py --repeats 5     # more rounds
    python benchmarks/forecast_bench.py --baseline REV  # another revision to compare with

The fleet is benchmarks/fleet.py's burning fleet (``--shape burning``, 10,000 connections,
seed 1): three in four a Claude plan whose 5h window has six readings 5 minutes apart in its
current cycle, so every window has a burn rate and a band, the rest API keys. Each side runs
``forecast auto/thrifty --now <snapshot> --horizon 24h --step 5m --json`` as an operator
does (a whole process, output discarded), in interleaved rounds so that a busy machine slows
every side alike; each figure is the median of the rounds' wall times, beside the least CPU
time (user and system) of each side.

The sides: this checkout (the band: three burns); this checkout with the band turned off
(``forecast(..., band=False)``: the middle walk alone, what the band adds to); and each
baseline revision, its ``omniladder`` package and catalogs taken from git (``git archive``)
into a scratch directory. The first baseline is, by default, the forecast before the band:
the target is at most 2x its time. The second, by default, is the forecast before exact
instants (it sampled the steps), for scale. ``--baseline`` replaces both (the first one
given is the one the target line reads).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import FORECAST_FROM, fmt_seconds, run_measured

ROOT = Path(__file__).resolve().parent.parent
BEFORE_BAND = "d5fe685e0b29e60cc53d794fe72fdb963a0a80db"
"""The last revision of the forecast before the band (exact instants, one walk)."""
BEFORE_INSTANTS = "d796cc3f146a7fd9967c63d3bf95f099d96dbec2"
"""The last revision of the forecast that sampled the steps instead of exact instants."""
TARGET = 2.0
NO_BAND = ("import functools, sys\n"
           "import omniladder.analyses.forecast.walk as forecast\n"
           "forecast.forecast = functools.partial(forecast.forecast, band=False)\n"
           "from omniladder.cli import run\n"
           "sys.argv[0] = 'omniladder'\n"
           "run()\n")
"""This checkout's forecast with the band turned off (the command reads ``forecast`` from
its module when it runs)."""


def forecast_args(settings: Path) -> list[str]:
    return ["forecast", "auto/thrifty", "--config", str(settings), "--now", FORECAST_FROM,
            "--horizon", "24h", "--step", "5m", "--json"]


def burning_fleet(scratch: Path, connections: int) -> Path:
    """Generate the fleet in a child process (as run.py's fleets are)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fleet.py"), str(scratch / "fleet"),
         "--connections", str(connections), "--shape", "burning", "--seed", "1",
         "--connections-format", "json"], capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def revision_tree(scratch: Path, revision: str) -> Path:
    """The revision's package and catalogs, extracted from git into the scratch directory."""
    out = scratch / f"rev-{revision[:12]}"
    out.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "omniladder",
                              "catalogs"], capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"git archive {revision} failed (this benchmark needs the "
                         f"repository's history): {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="rounds (at least 3)")
    parser.add_argument("--connections", type=int, default=10_000)
    parser.add_argument("--baseline", action="append", default=None,
                        help="a revision to compare with (repeatable; default: the "
                        "forecast before the band, then the one before exact instants)")
    args = parser.parse_args()
    rounds = max(3, args.repeats)
    baselines = args.baseline or [BEFORE_BAND, BEFORE_INSTANTS]
    with tempfile.TemporaryDirectory(prefix="omniladder-forecast-") as name:
        scratch = Path(name)
        settings = burning_fleet(scratch, args.connections)
        print(f"  generated {args.connections:,} burning connections", file=sys.stderr)
        sides: list[tuple[str, list[str], Path]] = [
            ("this checkout, with the band", [sys.executable, "-m", "omniladder",
                                             *forecast_args(settings)], ROOT),
            ("this checkout, band turned off", [sys.executable, "-c", NO_BAND,
                                               *forecast_args(settings)], ROOT)]
        for revision in baselines:
            sides.append((f"revision {revision[:10]}",
                          [sys.executable, "-m", "omniladder", *forecast_args(settings)],
                          revision_tree(scratch, revision)))
        walls: list[list[float]] = [[] for _ in sides]
        cpus: list[list[float]] = [[] for _ in sides]
        peaks = [0.0 for _ in sides]
        for round_ in range(rounds):
            for index, (_, argv, root) in enumerate(sides):
                wall, mib, cpu = run_measured(argv, root=root)
                walls[index].append(wall)
                cpus[index].append(cpu)
                peaks[index] = max(peaks[index], mib)
            print(f"  round {round_ + 1} of {rounds}", file=sys.stderr)
    medians = [statistics.median(runs) for runs in walls]
    print(f"python {sys.version.split()[0]}; forecast auto/thrifty --horizon 24h --step 5m "
          f"--json on {args.connections:,} burning connections; median of {rounds} "
          "interleaved rounds of the whole process\n")
    print("| side | median | least CPU | peak memory | band vs. side (median) |")
    print("|---|---:|---:|---:|---:|")
    for (label, _, _), median, cpu, peak in zip(sides, medians, cpus, peaks, strict=True):
        print(f"| {label} | {fmt_seconds(median)} | {fmt_seconds(min(cpu))} | "
              f"{peak:,.0f} MiB | {medians[0] / median:.2f}x |")
    ratio = medians[0] / medians[2] if len(sides) > 2 else medians[0] / medians[1]
    against = sides[2][0] if len(sides) > 2 else sides[1][0]
    print(f"\nthe band against the first baseline ({against}): {ratio:.2f}x of the "
          f"median, {min(cpus[0]) / min(cpus[2 if len(sides) > 2 else 1]):.2f}x of the least "
          f"CPU; target <= {TARGET:.1f}x: {'met' if ratio <= TARGET else 'not met'}")


if __name__ == "__main__":
    main()
