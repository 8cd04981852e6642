"""The one error type users see, and the exit codes of the command line (SPEC §4.3)."""

from __future__ import annotations

import difflib
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
    "exhausted or unknown connections, an export that differs from the deployed configuration",
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
        return ": ".join(parts)


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
