"""`omniladder completion SHELL`: the shell completion script, to source or install."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class Shell(StrEnum):
    BASH = "bash"
    ZSH = "zsh"
    FISH = "fish"
    POWERSHELL = "powershell"


def completion(
    shell: Annotated[Shell, typer.Argument(
        metavar="SHELL", help="bash, zsh, fish or powershell.", show_default=False)],
) -> None:
    """Print the shell completion script for SHELL (source it, or save it where your shell
    loads completions)."""
    import sys

    from omniladder.commands import completion_script

    sys.stdout.write(completion_script(shell.value).rstrip("\n") + "\n")
