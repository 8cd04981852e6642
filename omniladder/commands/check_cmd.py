"""`omniladder check POLICY`: judge a policy's expectations; exit 1 when any fails."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import (
    FormatOpt,
    InputOptions,
    NowOpt,
    answer_is_no,
    files_read,
    now_for,
    output_format,
    refuse_overwriting,
    say,
    user_errors,
    with_input_options,
    write_atomic,
)
from omniladder.commands.lifetime import hold


@with_input_options
def check(
    policy: Annotated[Path, typer.Argument(
        metavar="POLICY", help="Policy file (TOML or JSON) of [[expect]] tables.",
        show_default=False)],
    now: NowOpt = None,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the JSON check document (the same as --format json).")] = False,
    fmt: FormatOpt = None,
    junit: Annotated[Path | None, typer.Option(
        "--junit", help="Also write a JUnit XML report to this file (one testcase per "
        "expectation).", show_default=False)] = None,
    *,
    options: InputOptions,
) -> None:
    """Check a policy: every expectation, pass or fail with evidence; exit 1 if any fails.

    Two checks look ahead on the auto id's forecast (the same as `omniladder forecast`)
    over the expectation's horizon (default 24h): no_paid_within (no paid rung heads the
    pool within a duration) and max_paid_hours (at most so many hours with a paid rung at
    the head). Three look back on a traffic ledger: max_leak_usd (its audit, the same as
    `omniladder audit traffic`), max_regret_usd and added_seat_pays (its replay, the same
    as `omniladder whatif`).

    The policy may name its settings file (top-level config, relative to the policy file);
    --config overrides it. An expectation's own now wins over --now.
    """
    with user_errors():
        from omniladder.analyses.check import check_connection_ids, evaluate, load_policy
        from omniladder.rendering import Format
        from omniladder.rendering.check_view import junit_xml, render_check

        chosen = output_format(fmt, json_out)
        loaded = load_policy(policy)
        if options.config is None:
            options = options._replace(config=loaded.settings_path)
        inputs = options.load()
        refuse_overwriting([("--junit", junit)], [
            ("the policy", loaded.path), *files_read(inputs),
            *(("a gateway candidate list the policy names", loaded.path.parent / e.audit)
              for e in loaded.policy.expect if e.audit is not None),
            *(("a traffic ledger the policy names", loaded.path.parent / e.traffic)
              for e in loaded.policy.expect if e.traffic is not None),
            *(("a scenario file the policy names", loaded.path.parent / e.scenario)
              for e in loaded.policy.expect if e.scenario is not None)])
        if inputs.connections:
            # With no connection at all, every id would be unknown: the empty file is the
            # answer ("no", exit 1), reported as a failed item by evaluate.
            check_connection_ids(loaded, [c.id for c in inputs.connections],
                                 inputs.files.get("connections", "the connections file"))
        instant, source, inputs = now_for(
            now, inputs, snapshot_used=any(e.now is None for e in loaded.policy.expect))
        lengths = None
        windows = None
        if any(e.needs_forecast or e.needs_whatif for e in loaded.policy.expect):
            from omniladder.analyses.forecast.pace import catalog_lengths
            from omniladder.analyses.whatif.run import catalog_of
            from omniladder.inputs.input_set import find_settings, resolve_files
            from omniladder.inputs.scopes import load_window_scopes

            files = resolve_files(find_settings(options.config), inputs.settings,
                                  no_shipped_catalogs=options.no_shipped_catalogs)
            scopes = load_window_scopes(files.window_catalogs,
                                        include_shipped=not options.no_shipped_catalogs)
            lengths = catalog_lengths(scopes)
            windows = catalog_of(scopes)
        result = evaluate(loaded, inputs, instant, source, lengths, windows)
        hold(result)
        if chosen != Format.JSON:
            for warning in result.warnings:
                say(f"omniladder: warning: {warning}")
        render_check(result, chosen, sys.stdout)
        if junit is not None:
            write_atomic(junit, junit_xml(result))
        if not result.passed:
            failed = result.failed
            answer_is_no(f"{len(failed)} of {len(result.expectations)} expectation"
                         f"{'' if len(result.expectations) == 1 else 's'} failed: "
                         + ", ".join(e.name for e in failed))
