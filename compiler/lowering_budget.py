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

from .errors import StrategyError

_HOOK: ContextVar = ContextVar("cfir_hook", default=None)
_SPLITS: ContextVar = ContextVar("splits", default=False)


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


@contextlib.contextmanager
def splittable():
    """Lower for a caller that computes a statement refused as one in pieces (the array front end: its operands
    computed apart), so a kernel too long to be worth lowering may be refused (:func:`splits`).

    >>> splits()
    False
    >>> with splittable():
    ...     splits()
    True
    """
    token = _SPLITS.set(True)
    try:
        yield
    finally:
        _SPLITS.reset(token)


def splits() -> bool:
    """Whether the caller computes a statement refused as one in pieces (:func:`splittable`)."""
    return _SPLITS.get()


#: the lines of a lattice kernel's sequence CFIR, and of its C, above which a statement that looplets refuse as one
#: is refused where the caller computes it in pieces (:func:`splittable`: the array front end, its operands computed
#: apart): a minimum of four columns of a CSC matrix stacked beside a COO one was a lattice of 16 points, each
#: holding loops of 14 to 29, 117,914 lines of C, 79 s to lower (looplets' pieces: 0.3 s). Three and ten times
#: the lengths past which the default strategy asks looplets for a shorter kernel (compiler.lowering.LONG_CFIR,
#: LONG_LATTICE)
TOO_LONG_CFIR = 3_000
TOO_LONG_LATTICE = 40_000


class TooLongFused(StrategyError):
    """A lattice kernel too long to be worth lowering, of a statement looplets refuse as one, refused where the
    caller computes it in pieces (:data:`TOO_LONG_CFIR`)."""


class Abandoned(Exception):
    """A lowering ended by :func:`too_long`, on its way out of the lattice's, which tries other ways on a
    StrategyError: the default strategy raises it as :class:`TooLongFused`."""


def too_long(lines: int, cfir: bool, refusal: str) -> None:
    """Raise :class:`Abandoned` where the caller splits (:func:`splits`) and ``lines`` (of the sequence CFIR if
    ``cfir``, else of C) are more than :data:`TOO_LONG_CFIR` (:data:`TOO_LONG_LATTICE`), looplets having refused
    the statement as one (``refusal``, theirs).

    >>> too_long(5_000, True, "a refusal")
    >>> with splittable():
    ...     too_long(5_000, True, "a refusal")
    Traceback (most recent call last):
    ...
    compiler.lowering_budget.Abandoned: the lattice strategy's sequence CFIR is 5,000 lines (more than 3,000), and looplets refuse the statement as one (a refusal): its operands computed apart instead
    """
    limit = TOO_LONG_CFIR if cfir else TOO_LONG_LATTICE
    if splits() and lines > limit:
        what = "sequence CFIR" if cfir else "kernel's C"
        raise Abandoned(f"the lattice strategy's {what} is {lines:,} lines (more than {limit:,}), and looplets "
                        f"refuse the statement as one ({refusal}): its operands computed apart instead")


__all__ = ["Abandoned", "LoweredInstead", "TOO_LONG_CFIR", "TOO_LONG_LATTICE", "TooLongFused", "ask", "checked_cfir",
           "splittable", "splits", "too_long"]
