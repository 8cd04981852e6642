"""The one error type users see, and the exit codes of the command line (SPEC §4.3)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes. The README carries the same table; a test keeps them in step."""

    ANSWERED = 0
    """The question was answered (an empty pool is an answer)."""
    NO = 1
    """The answer is "no": empty pool under --fail-on-empty, a failed check, a changed plan."""
    UNANSWERABLE = 2
    """Usage error, unreadable or invalid input."""


EXIT_MEANINGS: dict[ExitCode, str] = {
    ExitCode.ANSWERED: "the question was answered (an empty pool is an answer)",
    ExitCode.NO: 'the answer is "no": an empty pool under --fail-on-empty, a failed check, '
    "a changed plan, a new catalog problem, a gateway audit that would bill or dispatch "
    "exhausted or unknown connections, an export that differs from the deployed configuration, "
    "traffic that leaked more than its allowance or whose leak could not be priced",
    ExitCode.UNANSWERABLE: "the question could not be answered: usage error, unreadable or "
    "invalid input",
}
"""The one exit-code table: every command's help prints it, and the README's table holds the
same text (tests/test_help.py)."""


class OmniladderError(Exception):
    """A problem with the user's input or invocation.

    Carries the file, the field path inside it, and one plain sentence. The command line
    prints it on one line and exits with ``exit_code``; nothing else turns it into text.
    """

    exit_code: ExitCode = ExitCode.UNANSWERABLE

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None,
                 line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.field = field
        self.line = line

    def __str__(self) -> str:
        parts: list[str] = []
        if self.file:
            parts.append(f"{self.file}:{self.line}" if self.line else self.file)
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return one_line(": ".join(parts))


_LINE_BREAKS = "[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]"
"""Every character ``str.splitlines`` breaks a line at (compiled by ``re``, which keeps it,
only when a message holds an unprintable character)."""


def one_line(text: str) -> str:
    """``text`` with every character that would start a new line written as its escape
    (``\\n``, ``\\u2028``).

    A problem is one line whatever key, value or file name it quotes: a newline in a
    payload's key would otherwise split it, and the second half would read as a message of
    its own. The other control characters are the views' to escape
    (omniladder.rendering.escape), as they are for every line on stderr.
    """
    if text.isprintable():  # a fast C test that every character escaped here fails
        return text
    return re.sub(_LINE_BREAKS, lambda match: repr(match.group())[1:-1], text)


class InputError(OmniladderError):
    """An input file is missing, unreadable or invalid."""


class InputErrors(InputError):
    """Several problems with one input file, each with its own file:line and field.

    Printed one line per problem (each a whole ``file:line: field: message``), the first
    ``SHOWN`` of them, then a count of the rest.
    """

    SHOWN = 20

    def __init__(self, problems: list[InputError], file: str | None = None) -> None:
        first = problems[0]
        super().__init__(first.message, file=first.file, field=first.field, line=first.line)
        self.problems = problems
        self.summary_file = file

    def __str__(self) -> str:
        lines = [OmniladderError.__str__(problem) for problem in self.problems[:self.SHOWN]]
        rest = len(self.problems) - self.SHOWN
        if rest > 0:
            where = f"{self.summary_file}: " if self.summary_file else ""
            lines.append(f"{where}and {rest} more problem{'s' if rest != 1 else ''}")
        return "\n".join(lines)


class UsageError(OmniladderError):
    """The command line itself is wrong (bad auto id, bad option value)."""


def close_match(word: str, known: Iterable[str]) -> str | None:
    """The known word closest to ``word``, when one is close enough to be a typo."""
    found = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return found[0] if found else None
