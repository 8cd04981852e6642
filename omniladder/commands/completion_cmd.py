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

    # typer's own scripts (pinned typer <0.29): the shell calls `omniladder` back with
    # _OMNILADDER_COMPLETE set, which builds the whole application, every command included.
    from typer._completion_shared import get_completion_script

    from omniladder.cli import COMPLETE_VAR

    sys.stdout.write(get_completion_script(prog_name="omniladder", complete_var=COMPLETE_VAR,
                                           shell=shell.value).rstrip("\n") + "\n")
