"""Checked counts: an output level whose ``pos`` is narrower than int64 (int32, as scipy's
arrays) must not wrap when its entry count passes what that dtype holds.

A kernel counts an output's entries in int64 (``D1_nnz``) and stores the count of each fiber's
end into the level's ``pos``: into an int32 ``pos``, a count past 2147483647 would wrap to a
negative number, and a kernel that reads ``pos`` back as a position (a two-pass assembly's
prefix sum, then its writes) would write out of bounds. The runtime refuses an extent the index
dtype cannot hold before the call; a count is known only as the kernel runs, so
:func:`check_counts` puts a :class:`~compiler.imperative.guard.CheckCoordinate` before each store
of a count into such a ``pos`` (once per fiber, not per entry, in the usual append), and the
kernel leaves with the error the runtime raises, naming the output and the index dtype to use.
A store that copies a value the array already holds (``pos[p + 1] = pos[p]``) needs no check.

>>> from compiler.imperative.ir import Store, Var, BinOp, Const
>>> s = Store("D1_pos", BinOp("+", Var("j"), Const(1, "int64")), Var("D1_nnz"))
>>> out = check_counts([s], {"D1_pos": (2 ** 31, "D", 1, "output D, level 1 (SparseList): int32 pos")})
>>> print(out[0])
check 0 <= D1_nnz < 2147483648;  // D, mode 1: output D, level 1 (SparseList): int32 pos
>>> out[1] == s
True
"""

from __future__ import annotations

from .guard import CheckCoordinate
from .ir import BinOp, Cast, Const, Load, Pragma, Store
from .traverse import map_bodies, walk


def check_counts(stmts, limits: dict) -> list:
    """``stmts`` with a check before each store into a buffer of ``limits`` (``{buffer: (limit,
    tensor, mode, where)}``: its values must stay in ``[0, limit)``; it is an array of the level
    of that output storing that (logical) mode, and ``where`` says so for the error) of a value
    not read from that buffer itself."""
    out, parallel = [], False
    for k, s in enumerate(stmts):
        if (isinstance(s, Pragma) and s.text.startswith("omp simd") and k + 1 < len(stmts)
                and _checked_stores(stmts[k + 1], limits)):
            # (no branch may leave a SIMD loop either: such a loop runs as written, its counts checked)
            continue
        if parallel:
            # (no branch may leave an OpenMP region: its per-row counts are bounded by the row's
            # extent, which the runtime checks; the serial prefix sum after it is checked)
            out.append(s)
        elif isinstance(s, Store) and s.buffer in limits and not _copied(s) and not _fits(s, limits[s.buffer][0]):
            limit, tensor, mode, where = limits[s.buffer]
            value = _widened(s.value)
            value = value if s.op is None else BinOp(s.op, Cast("int64", Load(s.buffer, s.index)), value)
            out.append(CheckCoordinate(value, Const(limit, "int64"), tensor, mode, where, noun="entry count"))
            out.append(s)
        else:
            out.append(map_bodies(s, lambda body: check_counts(list(body), limits)))
        parallel = isinstance(s, Pragma) and s.text.startswith("omp parallel")
    return out


def _checked_stores(s, limits: dict) -> bool:
    """Whether ``s`` holds a store that :func:`check_counts` checks."""
    return any(isinstance(n, Store) and n.buffer in limits and not _copied(n) for n in walk(s))


def _widened(value):
    """The count a store converts (``(int32)nC1`` stores ``nC1``): the check reads it unconverted."""
    while isinstance(value, Cast) and value.dtype.startswith("int"):
        value = value.value
    return value


def _fits(s: Store, limit: int) -> bool:
    """Whether ``s`` stores a constant count below ``limit`` (``pos[0] = 0``): a check of it could never
    fail, dead code in the kernel.

    >>> _fits(Store("C1_pos", Const(0, "int64"), Const(0, "int32")), 2 ** 31), _fits(Store("C1_pos", Const(1, "int64"), Load("n", Const(0, "int64"))), 2 ** 31)
    (True, False)
    """
    value = _widened(s.value)
    return s.op is None and isinstance(value, Const) and 0 <= value.value < limit


def _copied(s: Store) -> bool:
    """Whether ``s`` stores a value the buffer already holds (``pos[p + 1] = pos[p]``)."""
    return s.op is None and isinstance(s.value, Load) and s.value.buffer == s.buffer


__all__ = ["check_counts"]
