"""`omniladder schema KIND`: the JSON Schema of an input kind or of a document a command
writes, for editors and CI."""

from __future__ import annotations

from typing import Annotated

import typer

from omniladder.commands.common import user_errors

KIND_NAMES = ("connections", "quota", "settings", "spend", "traffic", "billing-catalog",
              "model-catalog", "window-catalog", "plan", "whatif-scenarios", "audit-traffic",
              "forecast",
              "forecast-backtest", "export", "export-litellm", "export-omniroute", "whatif")
"""Written out, so the help and the shell's completion are built without importing the
models; a test holds it to omniladder.inputs.schemas.ALL_KINDS, which the command checks."""


def _complete(incomplete: str) -> list[str]:
    return [name for name in KIND_NAMES if name.startswith(incomplete)]


def schema(
    kind: Annotated[str, typer.Argument(
        metavar="KIND", help="Which document's schema to print: " + ", ".join(KIND_NAMES)
        + ".", autocompletion=_complete, show_default=False)],
) -> None:
    """Print the JSON Schema of an input kind, of the plan document, or of a document a
    command writes (the files committed under schemas/)."""
    with user_errors():
        import sys

        from omniladder.inputs.schemas import schema_text

        sys.stdout.write(schema_text(kind))
