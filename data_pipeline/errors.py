"""Typed errors of the data layer, and the base of every error that is the user's to fix.

Every malformed input raises :class:`DataFormatError`, whose message names the file, the line and
what was expected, so a user can open the file at that line and see the problem.

:class:`UserError` is the base of all errors a user can fix (bad data, config, flag, run directory):
the command line prints them as one ``error: …`` line and exits with status 2; any other exception
is a bug and keeps its traceback.
"""

from __future__ import annotations

import os


class UserError(ValueError):
    """A mistake in what the user gave (file, config key, flag, directory); the message names it and
    says what was expected."""


class DataFormatError(UserError):
    """A data file does not have the layout its reader expects.

    Args:
        path: the file (or directory) being read.
        line: 1-based line number of the offending line, or ``None`` when the problem is the
            file as a whole (for example a missing layer).
        message: what was expected and what was found.
    """

    def __init__(self, path: str | os.PathLike | None, line: int | None, message: str):
        self.path = None if path is None else os.fspath(path)
        self.line = line
        self.message = message
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")
