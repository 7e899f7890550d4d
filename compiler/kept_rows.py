"""How many entries a slice of a CSR matrix's rows keeps, counted before a kernel's loops.

A row slice ``D[k, i] = slice(A[j, i], j -> k, (start, stop, step))`` of a CSR ``A`` copies the
entries of the rows it keeps, and no others: both strategies reserve a sparse output's room from
this count (a hint, :class:`~compiler.imperative.ir.Grow`) rather than from all of ``A``'s entries,
which for every other row of half the matrix is four times what the slice writes. A window
(``step`` 1) keeps one difference of positions; a strided slice sums its rows' in a loop over them:

>>> stmts, n = kept_row_entries("A1_pos", 1, 6, 2, {"n_kept": "n_kept", "r": "r"}.get)
>>> for s in stmts:
...     print(s)
int64 n_kept = 0;
for (int64 r = 0; r < 3; r++) {
    n_kept += (int64)A1_pos[r * 2 + 2] - (int64)A1_pos[r * 2 + 1];
}
>>> print(kept_row_entries("A1_pos", 3, 7, 1, str)[1])
(int64)A1_pos[7] - (int64)A1_pos[3]
"""

from __future__ import annotations

from .imperative import ir
from .imperative.ir import BinOp, Cast, Const, Load, Var


def _int(k: int) -> Const:
    return Const(int(k), "int64")


def _plus(base, k: int):
    """``base + k`` spelled as the looplets' extents spell it (``r * 2``, ``r * 2 + 1``, ``r * -2 - 1``)."""
    if k == 0:
        return base
    return BinOp("+", base, _int(k)) if k > 0 else BinOp("-", base, _int(-k))


def kept_row_entries(pos: str, start: int, stop: int, step: int, fresh):
    """``(stmts, count)``: the entries stored in rows ``range(start, stop, step)`` of a CSR whose
    row positions are array ``pos`` (int64 IR); ``stmts`` (none for a window) compute the count
    first, in locals ``fresh`` names (``fresh("n_kept")``, ``fresh("r")``)."""
    rows = len(range(start, stop, step))
    if step == 1 or rows == 0:
        if rows == 0:
            return [], _int(0)
        return [], BinOp("-", Cast("int64", Load(pos, _int(stop))), Cast("int64", Load(pos, _int(start))))
    n, r = Var(fresh("n_kept")), Var(fresh("r"))
    stride = BinOp("*", r, _int(step))
    return [ir.Declare(n, "int64", _int(0)),
            ir.For(r, _int(0), _int(rows), ir.Block((ir.CompoundAssign(
                "+", n, BinOp("-", Cast("int64", Load(pos, _plus(stride, start + 1))),
                              Cast("int64", Load(pos, _plus(stride, start))))),)))], n


__all__ = ["kept_row_entries"]
