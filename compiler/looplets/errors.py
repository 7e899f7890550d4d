"""Errors of the looplet strategy, pointing at the line of the user's program.

>>> e = ProgramError("conflicting extents", 3)
>>> print(e.with_source("def k(y, x):\\n    for i in _:\\n        y[i] = x[i]\\n", "k", 10))
line 12 of k: conflicting extents
            y[i] = x[i]
"""

from __future__ import annotations

from ..errors import SparsescopeError


class ProgramError(SparsescopeError, ValueError):
    """A loop program the looplet compiler cannot lower; ``line`` is 1-based in the program
    source (0 when unknown)."""

    def __init__(self, message: str, line: int = 0):
        self.reason = message
        self.line = line or 0
        super().__init__(message)

    def with_source(self, source: str | None, name: str = "program", first_line: int = 1) -> "ProgramError":
        """A copy whose message names the line (in the file: ``first_line`` is the program's
        first line there) and quotes it."""
        if not self.line:
            err = ProgramError(f"{name}: {self.reason}", 0)
            return err
        lines = (source or "").splitlines()
        text = lines[self.line - 1] if 0 < self.line <= len(lines) else ""
        msg = f"line {self.line + first_line - 1} of {name}: {self.reason}"
        if text.strip():
            msg += "\n    " + text
        err = ProgramError(msg, self.line)
        err.reason = self.reason
        return err
