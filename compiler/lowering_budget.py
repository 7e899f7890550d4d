"""A strategy's long intermediate ends its lowering early where the caller has a shorter kernel in its place.

The default strategy lowers a statement with shape operators by the lattice and, where the lattice's C is
long, by looplets too, keeping the looplets' kernel where it is at most half as long
(:func:`compiler.lowering.lower`). The lattice's C is many times its CFIR (11 to 33 lines of C per line of
CFIR, measured on stacks, splits and cross products), and emitting and cleaning up that C is most of the
lowering's time: ``linalg.cross`` of a 2 x 3 CSR matrix and a vector had a CFIR of 4,089 lines and 47,345 lines
of C, 9 s to lower, for looplets' 173 (its CFIR is 121 lines now, of three walks of the matrix's rows; with a dense
matrix, 3,592). So the caller may ask, once the CFIR is built, whether it has a kernel in its
place (:func:`checked_cfir`; the lattice strategy asks in :func:`~compiler.lattice.seqcfir.sequence_trace`):
given how many lines of C the CFIR makes at the least (:func:`compiler.lattice.seqstmts.c_lines_at_least`), it
returns one or None; one ends the lowering with :class:`LoweredInstead`.

>>> seen = []
>>> with checked_cfir(lambda lines: seen.append(lines)):
...     ask(3)
>>> seen
[3]
>>> with checked_cfir(lambda lines: "a kernel"):
...     ask(2)
Traceback (most recent call last):
...
compiler.lowering_budget.LoweredInstead: the lowering's CFIR (2 lines) was replaced by another kernel
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Any, Callable

_HOOK: ContextVar = ContextVar("cfir_hook", default=None)


class LoweredInstead(Exception):
    """The kernel a :func:`checked_cfir` hook gave in place of the lowering it ended (``kernel``)."""

    def __init__(self, kernel: Any, lines: int):
        super().__init__(f"the lowering's CFIR ({lines} lines) was replaced by another kernel")
        self.kernel = kernel


@contextlib.contextmanager
def checked_cfir(hook: Callable[[int], Any] | None):
    """Lower with ``hook`` asked of each sequence CFIR built (:func:`ask`); None: asked of none."""
    token = _HOOK.set(hook)
    try:
        yield
    finally:
        _HOOK.reset(token)


def ask(lines: int) -> None:
    """Ask the hook in force (if any) for a kernel in place of a CFIR making at least ``lines`` lines of C;
    raise :class:`LoweredInstead` with the one it gives. The hook runs with none in force (it may lower)."""
    hook = _HOOK.get()
    if hook is None:
        return
    with checked_cfir(None):
        other = hook(lines)
    if other is not None:
        raise LoweredInstead(other, lines)


__all__ = ["LoweredInstead", "ask", "checked_cfir"]
