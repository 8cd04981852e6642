"""`omniladder ids`: every valid auto id (R13)."""

from __future__ import annotations

from typing import Annotated

import typer


def ids(
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
) -> None:
    """List every valid auto id, as a gateway would advertise them."""
    import json

    from omniladder.engine.autoid import all_auto_ids

    if json_out:
        typer.echo(json.dumps(list(all_auto_ids())))
    else:
        typer.echo("\n".join(all_auto_ids()))
