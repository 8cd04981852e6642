"""`omniladder init [DIR]`: commented starter settings and connections files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import say, user_errors


def init(
    directory: Annotated[Path, typer.Argument(
        metavar="DIR", help="Where to write omniladder.toml and connections.toml.")] = Path("."),
) -> None:
    """Write a commented starter omniladder.toml and connections.toml (never overwriting)."""
    with user_errors():
        from omniladder.inputs.files import display_path
        from omniladder.inputs.starter import write_starter

        written = write_starter(directory)
        for path in written:
            typer.echo(display_path(path))
        settings = display_path(directory / "omniladder.toml")
        say(f"omniladder: next: edit the connections, then "
            f"`omniladder plan auto/thrifty --config {settings}`")
