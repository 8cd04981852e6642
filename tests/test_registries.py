"""The two extension registries (docs/architecture.md#where-to-make-a-change): an export
target is one class plus one line of ``analyses/export/targets.py``'s ``TARGETS``; a quota
source is one module plus one line of ``quota_sources.py``'s ``QUOTA_SOURCES``.

This module is itself a fake of each: ``TARGET`` is an export target and ``NAME``,
``OWN_KEYS`` and ``parse`` make it a quota source. Each test registers it for its own run and
sees every surface pick it up: the command's choices and help, the export and its fidelity
report in every format, ``--current`` and ``--map``, the import command list, an import, and
the fit check's naming of a document as one source's or another's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest
import typer
from typer.testing import CliRunner

import omniladder.commands
from omniladder.analyses.export import targets
from omniladder.analyses.export.fidelity import Fidelity, item
from omniladder.analyses.export.routes import ConnectionRoute
from omniladder.analyses.export.source import ExportPlan
from omniladder.analyses.export.targets import Built, ExportTarget, Registered
from omniladder.cli import build_app
from omniladder.quota_sources import QUOTA_SOURCES, QuotaSourceEntry
from omniladder.scope_models import QuotaSource
from omniladder.sources import fit
from omniladder.sources.common import SourceReading, SourceWindow
from tests.conftest import EXAMPLES, ROOT
from tests.errors import one_error
from tests.test_meta import section

runner = CliRunner()
CONFIG = str(EXAMPLES / "omniladder.toml")
SOURCES = ROOT / "tests" / "fixtures" / "sources"


# --- this module as an export target --------------------------------------------------------


class Fake(ExportTarget):
    """A gateway that takes a plan as a list of ``provider/model`` lines."""

    name: ClassVar[str] = "fake"
    unit: ClassVar[str] = "line"
    group: ClassVar[str] = "line list"
    format: ClassVar[str] = "text"
    map_refusal: ClassVar[str | None] = "--map is not for fake: it routes by model alone"

    def build(self, plan: ExportPlan, routes: Mapping[str, ConnectionRoute] | None, *,
              verified_only: bool) -> Built:
        lines = [f"{entry.provider}/{entry.model}" for entry in plan.entries]
        found: list[Fidelity] = [item("snapshot"), item(
            "entry-dropped", "fake keeps no allowlist", provider=plan.entries[0].provider,
            model=plan.entries[0].model)]
        return Built({"lines": lines}, "".join(f"{line}\n" for line in lines), found,
                     len(lines), len(lines))

    def compare(self, name: str, document: dict[str, Any], text: str,
                shown: str) -> tuple[list[str], int]:
        deployed = text.splitlines()
        differ = [] if deployed == document["lines"] else [f"{shown} lists other lines"]
        return differ, len(deployed)


TARGET = Fake()


def fresh(monkeypatch: pytest.MonkeyPatch, command: str, module: str) -> typer.Typer:
    """The one-command application of ``command``, its module imported again as a new
    process would import it (the registries as patched); the old module is put back after."""
    name = f"omniladder.commands.{module}"
    monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(omniladder.commands, module, getattr(omniladder.commands, module))
    return build_app(command)


@pytest.fixture
def export_app(monkeypatch: pytest.MonkeyPatch) -> typer.Typer:
    monkeypatch.setitem(targets.TARGETS, "fake", Registered(__name__, "a list of lines"))
    return fresh(monkeypatch, "export", "export_cmd")


def test_a_registered_target_is_a_choice_of_the_command_and_in_its_help(
        export_app: typer.Typer) -> None:
    shown = runner.invoke(export_app, ["export", "-h"], terminal_width=200)
    assert shown.exit_code == 0
    assert ("The gateway: litellm (a config.yaml model_list fragment), omniroute (a combo "
            "for POST /api/combos) or fake (a list of lines).") in shown.output
    refused = runner.invoke(export_app, ["export", "traefik", "auto/thrifty"])
    assert refused.exit_code == 2
    assert "'traefik' is not one of 'litellm', 'omniroute', 'fake'" in refused.output


def test_a_registered_target_exports_with_its_fidelity_report_in_every_format(
        export_app: typer.Typer) -> None:
    table = runner.invoke(export_app, ["export", "FAKE", "auto/thrifty", "--config", CONFIG])
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines
    assert all("/" in line for line in lines)
    assert "omniladder export fake auto/thrifty → line list omniladder-thrifty" in table.stderr
    assert "fake keeps no allowlist" in table.stderr
    assert (f"export fake auto/thrifty → omniladder-thrifty: {len(lines)} lines for "
            f"{len(lines)} of {len(lines)} pool entries; 1 dropped, 0 warnings, 1 info"
            in table.stderr)
    report = json.loads(runner.invoke(export_app, ["export", "fake", "auto/thrifty",
                                                   "--config", CONFIG, "--json"]).stdout)
    assert report["target"] == "fake"
    assert report["document"] == {"lines": lines}
    assert [found["code"] for found in report["fidelity"]] == ["entry-dropped", "snapshot"]
    markdown = runner.invoke(export_app, ["export", "fake", "auto/thrifty", "--config", CONFIG,
                                          "--format", "markdown"]).stdout
    assert "```text\n" + "\n".join(lines) + "\n```" in markdown


def test_a_registered_target_compares_with_what_is_deployed_and_refuses_a_map(
        export_app: typer.Typer, tmp_path: Path) -> None:
    deployed = tmp_path / "deployed.txt"
    deployed.write_text("openai/gpt-5\n", encoding="utf-8")
    differs = runner.invoke(export_app, ["export", "fake", "auto/thrifty", "--config", CONFIG,
                                         "--current", str(deployed)])
    assert differs.exit_code == 1
    assert "deployed.txt lists other lines" in differs.stderr
    first = runner.invoke(export_app, ["export", "fake", "auto/thrifty", "--config", CONFIG,
                                       "--current", str(tmp_path / "none.txt"), "--json"])
    assert first.exit_code == 1
    assert "are to apply" in json.loads(first.stdout)["current"]["differences"][0]
    assert "lines are to apply" in json.loads(first.stdout)["current"]["differences"][0]
    one_error(runner.invoke(export_app, ["export", "fake", "auto/thrifty", "--config", CONFIG,
                                         "--map", str(EXAMPLES / "litellm-map.toml")]),
              "--map", "--map is not for fake")


def test_the_report_schema_and_the_docs_name_every_registered_target() -> None:
    schema = json.loads((ROOT / "schemas" / "export.schema.json").read_text(encoding="utf-8"))
    assert schema["properties"]["target"]["enum"] == list(targets.TARGETS)
    gateways = (ROOT / "docs" / "gateways.md").read_text(encoding="utf-8")
    for name, registered in targets.TARGETS.items():
        assert f'<a id="export-{name}"></a>' in gateways, name
        found = targets.target(name)
        assert found.name == name
        assert type(found).__module__ == registered.module


# --- this module as a quota source ----------------------------------------------------------

NAME = "fake-quota"
OWN_KEYS = frozenset({"fake_windows"})


def parse(document: Any, file: str, checked_at: datetime) -> SourceReading:
    """``{"fake_windows": {"NAME": percent remaining}}``, each resetting in an hour."""
    windows = document["fake_windows"]
    return SourceReading(checked_at, tuple(
        SourceWindow(name, float(left), reset_at=checked_at + timedelta(hours=1))
        for name, left in windows.items()))


CLOCK = datetime(2026, 11, 29, 12, 30, tzinfo=UTC)
CONNECTIONS = """\
[[connections]]
id = "claude-max"
provider = "claude"
auth_type = "oauth"
models = ["claude-sonnet-4-5"]
"""


@pytest.fixture
def import_app(monkeypatch: pytest.MonkeyPatch) -> typer.Typer:
    monkeypatch.setitem(QUOTA_SOURCES, NAME, QuotaSourceEntry(
        __name__, "Import a fake gateway's quota JSON into a quota file.",
        ("omniladder import fake-quota fake.json --connection claude-max",)))
    monkeypatch.setattr("omniladder.sources.run._now", lambda: CLOCK)
    return fresh(monkeypatch, "import", "import_cmd")


def _import(app: typer.Typer, tmp_path: Path, source: str, document: Any) -> Any:
    (tmp_path / "connections.toml").write_text(CONNECTIONS, encoding="utf-8")
    given = tmp_path / "response.json"
    given.write_text(json.dumps(document), encoding="utf-8")
    return runner.invoke(app, [
        "import", source, str(given), "--connection", "claude-max", "--quota",
        str(tmp_path / "quota.json"), "--connections", str(tmp_path / "connections.toml"),
        "--at", "2026-11-29T12:00:00Z"])


def test_a_registered_quota_source_is_an_import_command(import_app: typer.Typer,
                                                        tmp_path: Path) -> None:
    listed = runner.invoke(import_app, ["import", "-h"], terminal_width=200)
    assert listed.exit_code == 0
    assert "fake-quota" in listed.output
    assert "Import a fake gateway's quota JSON into a quota file." in listed.output
    assert listed.output.index("gemini-quota") < listed.output.index("fake-quota") < (
        listed.output.index("litellm-spend"))
    done = _import(import_app, tmp_path, NAME, {"fake_windows": {"five_hour": 40}})
    assert done.exit_code == 0, done.output
    assert "fake-quota: 1 reading added" in done.stderr
    assert "no window catalog says which providers fake-quota serves" in done.stderr
    written = json.loads((tmp_path / "quota.json").read_text(encoding="utf-8"))
    assert written["readings"][0]["windows"][0]["remaining_percent"] == 40


def test_the_fit_check_names_a_registered_quota_source(import_app: typer.Typer,
                                                       tmp_path: Path) -> None:
    claude = json.loads((SOURCES / "claude" / "usage.json").read_text(encoding="utf-8"))
    one_error(_import(import_app, tmp_path, NAME, claude),
              "a claude-usage document (", "not a fake-quota one")
    one_error(_import(import_app, tmp_path, "claude-usage", {"fake_windows": {}}),
              "a fake-quota document (fake_windows), not a claude-usage one",
              "`omniladder import fake-quota`")
    assert not (tmp_path / "quota.json").exists()
    assert fit.own_keys(NAME) == OWN_KEYS


def test_the_scope_model_and_the_docs_name_every_quota_source() -> None:
    from typing import get_args

    assert get_args(QuotaSource) == tuple(QUOTA_SOURCES)
    documented = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    for name in QUOTA_SOURCES:
        assert f'<a id="{name}"></a>' in documented, name



def test_the_architecture_page_names_each_registry_as_where_to_add_one() -> None:
    text = section("Where to make a change", "architecture")
    assert text is not None
    assert "`analyses/export/targets.py`'s `TARGETS`" in text
    assert "`quota_sources.py`'s `QUOTA_SOURCES`" in text
