"""The views of a what-if answer (SPEC §10.7): the JSON document against its committed
schema, the human view's order (the fidelity first) and its figures against the JSON's,
markdown's rows, the SVG picture; and the ``check`` gates on a what-if answer, judged on
reports built by hand."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from omniladder import timefmt
from omniladder.analyses.whatif.report import (
    AddedSeat,
    Bound,
    Consumption,
    Expired,
    Fidelity,
    Scenario,
    WhatifReport,
)
from omniladder.models import RUNGS
from omniladder.rendering import Format
from omniladder.rendering.whatif_view import (
    PALETTE,
    RENDERERS,
    render_whatif,
    whatif_document,
    whatif_svg,
)
from tests.conftest import ROOT
from tests.test_init_schema import _valid

START = datetime(2026, 11, 23, tzinfo=UTC)
END = START + timedelta(days=7)
SCHEMA = json.loads((ROOT / "schemas" / "whatif.schema.json").read_text(encoding="utf-8"))


def _over_time(*points: tuple[float, float]) -> tuple[tuple[datetime, float], ...]:
    """Cumulative paid dollars at (hours after the start, dollars)."""
    return tuple((START + timedelta(hours=hours), usd) for hours, usd in points)


AS_IS = Scenario(
    name="as-is", changes=(), paid_usd=41.2371, paid_by_rung={"cheap": 30.0, "premium": 11.2371},
    served_by_rung={"subscription": 1180, "cheap": 52, "premium": 8}, blocked=0, unpriced=0,
    expired_unused=(
        Expired(connection="claude-max-work", window="weekly",
                reset_at=START + timedelta(days=3, hours=9), percent=18.5, usd=9.25),
        Expired(connection="codex-plus", window="5h", reset_at=START + timedelta(hours=30),
                percent=42.0, usd=None)),
    paid_hours=13.25, bound_usd=12.5, regret_usd=28.7371,
    paid_over_time=_over_time((20, 4.5), (50, 19.0), (120, 41.2371)))
EXPIRING_FIRST = Scenario(
    name="expiring-first", changes=("--order expiring-first",), paid_usd=30.05,
    paid_by_rung={"cheap": 30.05}, served_by_rung={"subscription": 1199, "cheap": 41},
    blocked=0, unpriced=2, expired_unused=(), paid_hours=9.5, bound_usd=12.5,
    regret_usd=17.55, paid_over_time=_over_time((30, 10.0), (140, 30.05)))
SECOND_SEAT = Scenario(
    name="second seat", changes=("--add claude-max-work:claude-max-2",), paid_usd=3.1,
    paid_by_rung={"cheap": 3.1}, served_by_rung={"subscription": 1237, "cheap": 3},
    blocked=1, unpriced=0,
    expired_unused=(Expired(connection="claude-max-2", window="weekly",
                            reset_at=START + timedelta(days=6), percent=64.25, usd=32.125),),
    paid_hours=0.75, bound_usd=None, regret_usd=None,
    added=(AddedSeat(connection="claude-max-2", like="claude-max-work", seat_price_usd=200.0,
                     seat_period="month", break_even_usd=163.4821),),
    paid_over_time=_over_time((100, 3.1)))


def sample_report(**changes: Any) -> WhatifReport:
    """Three scenarios: as-is with its bound, one reordered, one with an added seat and no
    bound of its own; a consumption fit and an assumed one; a fidelity warning."""
    report = WhatifReport(
        auto_id="auto/thrifty", start=START, end=END, requests=1240, token_units=18_523_411.75,
        consumption=(
            Consumption(connection="claude-max-work", window="5h",
                        percent_per_unit=0.0000412345, background_percent_per_hour=0.31,
                        intervals=214, error_points=1.8734, assumed=False),
            Consumption(connection="claude-max-2", window="weekly",
                        percent_per_unit=0.00000515, background_percent_per_hour=0.0,
                        intervals=0, error_points=None, assumed=True, like="claude-max-work")),
        fidelity=Fidelity(
            paid_usd_recorded=39.9, paid_usd_replayed=41.2371,
            served_by_rung_recorded={"subscription": 1175, "cheap": 57, "premium": 8},
            served_by_rung_replayed={"subscription": 1180, "cheap": 52, "premium": 8},
            readings_mae_points=6.4321, readings_compared=87,
            warning="the as-is replay misses its recorded readings by 6.43 points on "
                    "average (more than 5): read its figures as rough"),
        bound_usd=12.5,
        bound=Bound(solver="HiGHS 1.16.0", bucket_seconds=900.0, variables=5231,
                    constraints=2890, seconds=0.4172,
                    relaxed=("a cycle that starts at first use may start at any bucket",)),
        bound_note=None, scenarios=(AS_IS, EXPIRING_FIRST, SECOND_SEAT),
        assumptions=("a request keeps its token counts whichever model serves it",),
        warnings=("codex-plus has no reading in the span",))
    return replace(report, **changes)


def rendered(report: WhatifReport, fmt: Format) -> str:
    out = io.StringIO()
    render_whatif(report, fmt, out)
    return out.getvalue()


# --- JSON ------------------------------------------------------------------------------------


@pytest.mark.parametrize("report", [
    sample_report(),
    sample_report(bound_usd=None, bound=None, bound_note="the bound needs HiGHS: pip install "
                  "'omniladder[whatif]'", fidelity=replace(
                      sample_report().fidelity, warning=None, readings_mae_points=None,
                      readings_compared=0)),
], ids=["bound", "no-bound"])
def test_the_document_keeps_to_its_committed_schema(report: WhatifReport) -> None:
    document = json.loads(rendered(report, Format.JSON))
    assert document == whatif_document(report)
    assert _valid(document, SCHEMA, SCHEMA)
    assert list(document) == SCHEMA["required"]
    for scenario in document["scenarios"]:
        assert list(scenario) == SCHEMA["$defs"]["scenario"]["required"]


def test_the_schema_refuses_what_the_document_never_holds() -> None:
    document = whatif_document(sample_report())
    for broken in ({**document, "kind": "audit-traffic"}, {**document, "extra": 1},
                   {**document, "scenarios": [{**document["scenarios"][0],
                                               "served_by_rung": {"gold": 1}}]},
                   {**document, "fidelity": {**document["fidelity"], "warning": 3}}):
        assert not _valid(broken, SCHEMA, SCHEMA)


def test_the_schema_names_every_rung_a_count_may_be_kept_under() -> None:
    counted = SCHEMA["$defs"]["served_by_rung"]["properties"]
    assert list(counted) == list(RUNGS)
    assert list(SCHEMA["$defs"]["paid_by_rung"]["properties"]) == list(RUNGS)


def test_the_document_names_what_spec_10_7_names() -> None:
    document = whatif_document(sample_report())
    assert (document["format_version"], document["kind"]) == ("1", "whatif")
    assert (document["from"], document["to"]) == ("2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z")
    assert document["demand"] == {"requests": 1240, "token_units": 18523411.75}
    assert set(document["fidelity"]) >= {
        "paid_usd_recorded", "paid_usd_replayed", "served_by_rung_recorded",
        "served_by_rung_replayed", "readings_mae_points"}
    assert set(document["consumption"][0]) >= {
        "percent_per_unit", "background_percent_per_hour", "intervals", "error_points",
        "assumed"}
    assert document["consumption"][0]["percent_per_unit"] == 0.0000412345
    assert document["scenarios"][0]["name"] == "as-is"
    assert document["scenarios"][0]["expired_unused"][0] == {
        "connection": "claude-max-work", "window": "weekly", "reset_at": "2026-11-26T09:00:00Z",
        "percent": 18.5, "usd": 9.25}
    assert document["scenarios"][2]["added"] == [{
        "connection": "claude-max-2", "like": "claude-max-work", "seat_price_usd": 200.0,
        "seat_period": "month", "break_even_usd": 163.4821}]
    assert "paid_over_time" not in document["scenarios"][0]


def test_sums_of_dollars_and_of_lapsed_quota_are_rounded_once() -> None:
    """0.1 + 0.2 lapsed dollars are $0.30 in the document, as the views print them; the
    percent sum keeps six significant digits; a cycle without a price is never summed as 0."""
    cycles = (Expired(connection="a", window="5h", reset_at=START, percent=10.1, usd=0.1),
              Expired(connection="a", window="5h", reset_at=END, percent=20.2, usd=0.2),
              Expired(connection="b", window="5h", reset_at=END, percent=5.0, usd=None))
    report = sample_report(scenarios=(replace(AS_IS, expired_unused=cycles),))
    [scenario] = whatif_document(report)["scenarios"]
    assert scenario["expired_unused_usd"] == 0.3
    assert scenario["expired_unused_percent"] == 35.3
    unpriced = sample_report(scenarios=(replace(AS_IS, expired_unused=cycles[2:]),))
    assert whatif_document(unpriced)["scenarios"][0]["expired_unused_usd"] is None
    assert "35.3%, $0.30 + unpriced" in rendered(report, Format.TABLE)


# --- the human view -------------------------------------------------------------------------


def test_the_human_view_leads_with_the_fidelity_warning() -> None:
    report = sample_report()
    lines = rendered(report, Format.TABLE).splitlines()
    assert lines[0] == f"warning: {report.fidelity.warning}"
    assert lines[1].startswith("as-is replayed against the record: auto/thrifty from "
                               "2026-11-23T00:00:00Z")
    assert lines[2].strip() == "paid: recorded $39.90, replayed $41.24"
    assert lines[3].strip() == ("served by rung: recorded subscription 1175, cheap 57, "
                                "premium 8; replayed subscription 1180, cheap 52, premium 8")
    assert lines[4].strip() == ("readings: replayed against recorded, mean absolute error "
                                "6.43 points over 87 readings")


def test_without_a_warning_the_record_comes_first() -> None:
    report = sample_report(fidelity=replace(sample_report().fidelity, warning=None))
    text = rendered(report, Format.TABLE)
    assert text.startswith("as-is replayed against the record")
    assert "warning" not in text.split("\n\n")[0]


def test_the_views_come_in_the_order_spec_10_7_gives() -> None:
    text = rendered(sample_report(), Format.TABLE)
    order = [text.index(words) for words in (
        "warning:", "paid: recorded", "scenarios", "expiring-first", "bound: $12.50",
        "consumption per token unit", "assumptions:")]
    assert order == sorted(order)
    assert "bound: $12.50, the least any schedule could have paid for the as-is fleet " \
           "(HiGHS 1.16.0, 15m buckets)" in text


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _numbers(value: Any) -> Iterator[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)


def _as_printed(value: float) -> set[str]:
    """Every way a view prints a figure: dollars, three significant digits (as a percent
    or hours too), a count, whole token units, a duration."""
    from omniladder.rendering.whatif_view import dollars, figure_text, units_text

    shown = figure_text(value)
    found = {dollars(value), shown, f"{shown}%", f"{shown}h", units_text(value),
             timefmt.duration(value)}
    if float(value).is_integer():
        found.add(str(int(value)))
    return found


def figures_not_in_the_json(text: str, document: dict[str, Any]) -> list[str]:
    """The words of ``text`` that hold a digit and are no figure of ``document`` as a view
    prints it, once every string of the document (ids, instants, notes) is taken out."""
    for string in sorted(_strings(document), key=len, reverse=True):
        if string.isdigit():  # format_version: no figure
            continue
        text = re.sub(rf"(?<![\w.$-]){re.escape(string)}(?![\w%-])", " ", text)
    printed = set().union(*(_as_printed(value) for value in _numbers(document)))
    words = (word.strip(",;:()|*") for word in re.split(r"[\s/]+", text))
    return [word for word in words if re.search(r"\d", word) and word not in printed]


@pytest.mark.parametrize("fmt", [Format.TABLE, Format.MARKDOWN])
def test_every_figure_of_the_view_is_in_the_json(fmt: Format) -> None:
    report = sample_report()
    document = whatif_document(report)
    text = rendered(report, fmt)
    assert figures_not_in_the_json(text, document) == []
    # the check can fail: a figure the JSON lacks is found
    assert figures_not_in_the_json(text + " 99.99 ", document) == ["99.99"]
    for figure in ("$41.24", "$28.74", "$17.55", "$163.48", "$200.00", "64.2%", "60.5%",
                   "13.2h", "4.12e-05", "5.15e-06", "1.87", "214", "18,523,412"):
        assert figure in text, figure


def test_a_scenario_row_says_what_the_scenario_did() -> None:
    text = rendered(sample_report(), Format.TABLE)
    rows = {line.split()[0]: line for line in text.splitlines()
            if line.split() and line.split()[0] in ("as-is", "expiring-first", "second")}
    assert re.search(r"as-is\s+\$41\.24\s+\$12\.50\s+\$28\.74\s+0\s+13\.2h\s+60\.5%, "
                     r"\$9\.25 \+", rows["as-is"])
    assert "$30.05 + 2 unpriced" in rows["expiring-first"]
    assert re.search(r"\$3\.10\s+-\s+unknown\s+1\s+0\.75h\s+64\.2%, \$32\.12\s+"
                     r"\$163\.48/month", text)
    assert "second seat: --add claude-max-work:claude-max-2" in text


def test_without_a_bound_the_view_says_why() -> None:
    report = sample_report(bound_usd=None, bound=None,
                           bound_note="the bound needs HiGHS: pip install 'omniladder[whatif]'")
    for fmt in (Format.TABLE, Format.MARKDOWN):
        assert ("bound: none (the bound needs HiGHS: pip install 'omniladder\\[whatif\\]')"
                if fmt == Format.MARKDOWN else
                "bound: none (the bound needs HiGHS: pip install 'omniladder[whatif]')"
                ) in rendered(report, fmt)


def _markdown_rows(text: str, heading: str) -> list[list[str]]:
    section = text.split(f"#### {heading}")[1].split("\n\n")[1]
    return [[cell.strip() for cell in line.strip("|").split(" | ")]
            for line in section.splitlines()[2:]]


def test_markdown_has_the_same_rows() -> None:
    report = sample_report()
    text = rendered(report, Format.MARKDOWN)
    assert text.startswith(f"**warning: {report.fidelity.warning}**\n")
    scenarios = _markdown_rows(text, "scenarios")
    assert [row[0] for row in scenarios] == ["`as-is`", "`expiring-first`", "`second seat`"]
    assert scenarios[0][1:6] == ["$41.24", "$12.50", "$28.74", "0", "13.2h"]
    assert scenarios[2][3] == "unknown"
    consumption = _markdown_rows(text, "consumption per token unit and per hour")
    assert [row[:2] for row in consumption] == [["`claude-max-work`", "`5h`"],
                                               ["`claude-max-2`", "`weekly`"]]
    assert consumption[1][-1] == "assumed like claude-max-work"
    assert "> **warning:** codex-plus has no reading in the span" in text
    assert "- a request keeps its token counts whichever model serves it" in text


def test_every_format_has_a_renderer() -> None:
    assert set(RENDERERS) == set(Format)


# --- SVG -------------------------------------------------------------------------------------


def test_the_picture_is_well_formed_with_one_line_per_scenario() -> None:
    report = sample_report()
    svg = whatif_svg(report)
    root = ET.fromstring(svg)
    ns = {"svg": "http://www.w3.org/2000/svg"}
    paths = root.findall(".//svg:g[@id='scenarios']/svg:path", ns)
    assert len(paths) == len(report.scenarios) == len(root.findall(".//svg:path", ns))
    assert [p.get("stroke") for p in paths] == list(PALETTE[:3])
    assert [p.findtext("svg:title", namespaces=ns) for p in paths] == [
        "as-is: paid $41.24", "expiring-first: paid $30.05", "second seat: paid $3.10"]
    assert whatif_svg(report) == svg  # the same bytes for the same report
    labels = [t.text for t in root.findall(".//svg:g[@id='time']/svg:text", ns)]
    assert labels[:2] == ["2026-11-23", "2026-11-24"]
    assert labels[-2] == "2026-11-30"  # the last tick, then the axis's "UTC"
    bound = root.find(".//svg:g[@id='bound']/svg:line", ns)
    assert bound is not None
    assert bound.get("stroke-dasharray") == "6,4"
    texts = " ".join(t.text or "" for t in root.iter(f"{{{ns['svg']}}}text"))
    assert "warning: the as-is replay misses" in texts
    assert "bound $12.50" in texts


def test_each_line_ends_at_what_its_scenario_paid_and_the_bound_sits_at_its_own() -> None:
    root = ET.fromstring(whatif_svg(sample_report()))
    ns = {"svg": "http://www.w3.org/2000/svg"}
    paths = root.findall(".//svg:g[@id='scenarios']/svg:path", ns)
    ends = [float((p.get("d") or "").split()[-1]) for p in paths]
    assert ends[0] < ends[1] < ends[2]  # more paid, higher on the picture (less y)
    bound = root.find(".//svg:g[@id='bound']/svg:line", ns)
    assert bound is not None
    assert ends[0] < float(bound.get("y1") or 0) < ends[2]  # $41.24 > $12.50 > $3.10


def test_names_are_escaped_and_a_short_span_marks_hours() -> None:
    odd = replace(SECOND_SEAT, name="<b>&\"seat\"</b>")
    report = sample_report(end=START + timedelta(hours=6), scenarios=(AS_IS, odd))
    root = ET.fromstring(whatif_svg(report))  # parses: the name is escaped
    ns = {"svg": "http://www.w3.org/2000/svg"}
    labels = [t.text for t in root.findall(".//svg:g[@id='time']/svg:text", ns)]
    assert labels[:3] == ["11-23 00:00", "01:00", "02:00"]
    assert any("<b>&\"seat\"</b>: paid" in (t.text or "")
               for t in root.iter(f"{{{ns['svg']}}}text"))


# --- the check gates -------------------------------------------------------------------------


def priced_seat_report(price: float | None, *, break_even: float = 163.4821,
                       unpriced: int = 0) -> WhatifReport:
    """The sample answer with its added seat priced at ``price`` a month."""
    [seat] = SECOND_SEAT.added
    second = replace(SECOND_SEAT, unpriced=unpriced, added=(
        replace(seat, seat_price_usd=price, break_even_usd=break_even),))
    return sample_report(scenarios=(AS_IS, EXPIRING_FIRST, second))


def _regret(value: float, report: WhatifReport) -> Any:
    from omniladder.analyses.check import _max_regret_usd

    return _max_regret_usd(value, report)


def _seat_pays(report: WhatifReport) -> Any:
    from omniladder.analyses.check import _added_seat_pays

    return _added_seat_pays(report)


def test_max_regret_usd_holds_the_as_is_regret_to_its_bound_inclusive() -> None:
    """The as-is regret is $28.7371: a bound of exactly that passes, a tenth of a cent less
    fails, each figure shown with the decimals that tell it from the other."""
    report = sample_report()
    passed = _regret(28.7371, report)
    assert passed.passed
    assert passed.evidence == ()
    assert passed.actual == "$28.74 regret: paid $41.24, bound $12.50"
    assert passed.expected == ("at most $28.74 of regret in the as-is replay of "
                               "auto/thrifty from 2026-11-23T00:00:00Z to 2026-11-30T00:00:00Z")
    failed = _regret(28.7361, report)
    assert not failed.passed
    assert failed.expected.startswith("at most $28.736 of regret")
    assert failed.evidence[0] == ("the as-is replay paid $41.24, $28.737 above the least any "
                                  "schedule could have paid ($12.50): more than $28.736")
    assert "second seat (--add claude-max-work:claude-max-2) would have paid $3.10, regret " \
           "unknown" in failed.evidence
    assert failed.evidence[-1].startswith("fidelity: the as-is replay misses")


def test_max_regret_usd_fails_without_a_bound_saying_why() -> None:
    note = "the bound needs HiGHS: pip install 'omniladder[whatif]'"
    report = sample_report(bound_usd=None, bound=None, bound_note=note, scenarios=(
        replace(AS_IS, bound_usd=None, regret_usd=None),))
    result = _regret(1000.0, report)
    assert not result.passed
    assert result.actual == "regret unknown"
    assert result.evidence == (
        f"no bound: {note}",
        "the as-is replay paid $41.24; without the least any schedule could have paid, its "
        "regret is unknown")


def test_max_regret_usd_fails_when_paid_requests_are_unpriced() -> None:
    """Unpriced paid requests make the regret's size unknown: within the bound is not
    enough."""
    report = sample_report(scenarios=(replace(AS_IS, unpriced=3), EXPIRING_FIRST))
    result = _regret(100.0, report)
    assert not result.passed
    assert result.actual.endswith(", 3 paid requests unpriced")
    assert result.evidence[0] == ("3 paid requests of the as-is replay could not be priced: "
                                  "the regret is at least $28.74, its size unknown")


def test_max_regret_usd_needs_an_as_is_replay() -> None:
    result = _regret(100.0, sample_report(scenarios=(EXPIRING_FIRST,)))
    assert not result.passed
    assert result.actual == "no as-is replay"


@pytest.mark.parametrize(("price", "break_even", "unpriced", "passes", "evidence"), [
    (150.0, 163.4821, 0, True, ""),
    (163.4821, 163.4821, 0, True, ""),  # saving exactly the price pays
    (163.49, 163.4821, 0, False, "saves $163.48 a month, less than its price $163.49"),
    (200.0, 163.4821, 0, False, "saves $163.48 a month, less than its price $200.00"),
    (None, 163.4821, 0, False, "saves $163.48 a month and has no seat_price_usd, so whether "
                               "it pays is unknown"),
    (150.0, 163.4821, 2, False, "at least its price $150.00, but 2 paid requests of the "
                                "scenario could not be priced, so what it saved is not known"),
    (150.0, -4.0, 0, False, "saves -$4.00 a month, less than its price $150.00"),
], ids=["pays", "exactly", "a-cent-short", "short", "no-price", "unpriced", "costs"])
def test_added_seat_pays_holds_each_seat_to_its_price(
        price: float | None, break_even: float, unpriced: int, passes: bool,
        evidence: str) -> None:
    result = _seat_pays(priced_seat_report(price, break_even=break_even, unpriced=unpriced))
    assert result.check == "added_seat_pays"
    assert result.passed is passes
    assert result.actual == f"{1 if passes else 0} of 1 added seat pay for themselves"
    if passes:
        assert result.evidence == ()
    else:
        [line] = result.evidence
        assert line.startswith("second seat: claude-max-2 (like claude-max-work) ")
        assert evidence in line


def test_added_seat_pays_judges_every_seat_of_every_scenario() -> None:
    """One of two seats short of its price fails the check, naming that one only."""
    [seat] = SECOND_SEAT.added
    two = replace(SECOND_SEAT, added=(replace(seat, seat_price_usd=100.0),
                                      replace(seat, connection="claude-max-3",
                                              seat_price_usd=180.0)))
    result = _seat_pays(sample_report(scenarios=(AS_IS, two)))
    assert not result.passed
    assert result.actual == "1 of 2 added seats pay for themselves"
    assert [line.split(" (like")[0] for line in result.evidence] == [
        "second seat: claude-max-3"]


def test_added_seat_pays_fails_when_no_scenario_adds_a_seat() -> None:
    result = _seat_pays(sample_report(scenarios=(AS_IS, EXPIRING_FIRST)))
    assert not result.passed
    assert result.actual == "no added seat"
    assert "adds a seat" in result.evidence[0]


def _policy(tmp_path: Path, body: str) -> Path:
    from tests.conftest import EXAMPLES

    path = tmp_path / "policy.toml"
    path.write_text(f'config = "{EXAMPLES / "omniladder.toml"}"\n[[expect]]\nname = "w"\n'
                    f'auto_id = "auto/thrifty"\ntraffic = "{EXAMPLES / "traffic.jsonl"}"\n'
                    + body, encoding="utf-8")
    return path


def test_an_output_never_replaces_the_scenario_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from omniladder.cli import app

    scenarios = tmp_path / "second-seat.toml"
    scenarios.write_text('[[scenarios]]\nname = "second seat"\nadd = ["claude-max-work"]\n',
                         encoding="utf-8")
    policy = _policy(tmp_path, 'added_seat_pays = true\nscenario = "second-seat.toml"\n')
    result = CliRunner().invoke(app, ["check", str(policy), "--junit", str(scenarios)])
    assert result.exit_code == 2, result.output
    assert "a scenario file the policy names" in result.stderr
    assert scenarios.read_text(encoding="utf-8").startswith("[[scenarios]]")


@pytest.mark.parametrize(("text", "expected"), [
    (timefmt.usd(-4.0), "-$4.00"),
    (timefmt.usd(-1234.5), "-$1,234.50"),
    (timefmt.usd(0.0), "$0.00"),
    (timefmt.usd(-0.001), "$0.00"),
    (timefmt.usd_exact(-0.0036), "-$0.0036"),
    (timefmt.usd_exact(-3.0025, -3.0), "-$3.002"),
    (timefmt.usd_exact(3.0025, 3.0), "$3.002"),
])
def test_a_negative_amount_puts_its_sign_before_the_dollar_sign(text: str,
                                                                expected: str) -> None:
    """A scenario that costs more saves a negative amount: -$4.00, never $-4.00."""
    assert text == expected
