"""Searches in a sorted coordinate array, as imperative IR: the gallop (exponential then
binary) a looplet's ``seek`` runs to skip ahead to a coordinate, and the binary search of a
located read.

A seek gallops from the cursor rather than bisecting the rest of the fiber: a cursor carried
across an outer loop (:mod:`.carried`) seeks once per row to a target just past it, and
bisecting the rest of a million-entry vector there cost Fig. 26a (``collapse(A) * b``) a
20-probe cache-missing search per row, twice the lattice kernel's time (issue 30).

>>> from compiler.imperative import pretty
>>> from compiler.imperative.ir import Buffer
>>> print(pretty(search_stmts(Var("q"), Buffer("A1_idx", "int64"), Var("q_stop"), Var("j"), str)[0]))
if (A1_idx[q] < j) {
    int64 step = 1;
    while (q + step < q_stop && A1_idx[q + step] < j) {
        step = step * 2;
    }
    int64 lo = q + step / 2 + 1;
    int64 hi = q + step < q_stop ? q + step : q_stop;
    while (lo < hi) {
        int64 mid = lo + (hi - lo) / 2;
        if (A1_idx[mid] < j) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    q = lo;
}
"""

from __future__ import annotations

from ..imperative.ir import Assign, BinOp, Const, Declare, If, Load, Var, While
from ..imperative.search import gallop_stmts
from . import extents as X


def search_stmts(q, idx_buf, hi, target, fresh) -> list:
    """Gallop: the first ``p`` in ``[q, hi)`` with ``idx[p] >= target``, into ``q``, in
    O(log distance) probes (at most about twice a bisection's where the target is far);
    nothing where ``idx[q] >= target`` is known (``target`` is 0 and ``idx`` holds coordinates:
    see :mod:`compiler.looplets.bounds`)."""
    if X.prove_le(target, Load(idx_buf, q)):
        return []
    return gallop_stmts(q, idx_buf, hi, target, fresh)


def lower_bound_stmts(var, lo_expr, hi_expr, idx_buf, target, fresh) -> list:
    """``var`` (declared) = the first ``p`` in ``[lo, hi)`` with ``idx[p] >= target`` (``hi`` if none)."""
    lo, top, mid = Var(fresh("lo")), Var(fresh("hi")), Var(fresh("mid"))
    return [Declare(lo, "int64", lo_expr), Declare(top, "int64", hi_expr),
            While(BinOp("<", lo, top), [
                Declare(mid, "int64", X.add(lo, BinOp("/", BinOp("-", top, lo), Const(2, "int64")))),
                If(BinOp("<", Load(idx_buf, mid), target), [Assign(lo, X.add(mid, 1))], [Assign(top, mid)]),
            ]),
            Assign(var, lo)]


def gallop_from(var, q, idx_buf, hi, target, fresh) -> list:
    """``var`` (declared) = the first ``p`` in ``[q, hi)`` with ``idx[p] >= target``, found by
    galloping from ``q``: the end of a phase is usually near (a diagonal ends one entry
    later), so this costs O(log distance) where a binary search of the fiber costs
    O(log length). There must be such a ``p`` (the caller checks ``target < last``)."""
    return [Assign(var, q)] + gallop_stmts(var, idx_buf, hi, target, fresh)
