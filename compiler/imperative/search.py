"""Searches of a sorted index array, in the imperative IR: galloping (exponential, then binary).

Both strategies skip ahead in a fiber with it: the looplets' ``gallop`` protocol and
phases that seek, and the lattice strategy's intersection with a fiber it scans again
for every enclosing iteration (a DCSR ``B``'s rows in ``A[i, k] * B[k, j]``).

>>> from compiler.imperative import Var, pretty
>>> names = iter(["step", "lo", "hi", "mid"])
>>> print("\\n".join(pretty(s) for s in gallop_stmts(Var("q"), "idx", Var("q_end"), Var("k"), lambda _: next(names))))
if (idx[q] < k) {
    int64 step = 1;
    while (q + step < q_end && idx[q + step] < k) {
        step = step * 2;
    }
    int64 lo = q + step / 2 + 1;
    int64 hi = q + step < q_end ? q + step : q_end;
    while (lo < hi) {
        int64 mid = lo + (hi - lo) / 2;
        if (idx[mid] < k) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    q = lo;
}
"""

from __future__ import annotations

from .ir import Assign, BinOp, Const, Declare, If, Load, Select, Var, While, and_


def gallop_stmts(q, idx_buf, hi, target, fresh) -> list:
    """Exponential then binary search: move ``q`` to the first ``p`` in ``[q, hi)`` with
    ``idx[p] >= target`` (``hi`` if none) in O(log distance): short hops stay short.
    ``q`` must be below ``hi``; ``fresh(base)`` names the search's locals."""
    return [If(BinOp("<", Load(idx_buf, q), target), gallop_past(q, idx_buf, hi, target, fresh))]


def gallop_past(q, idx_buf, hi, target, fresh) -> list:
    """:func:`gallop_stmts` where ``idx[q] < target`` is known (the caller tested it)."""
    step, lo, top, mid = (Var(fresh(n)) for n in ("step", "lo", "hi", "mid"))
    one = Const(1, "int64")
    at = BinOp("+", q, step)
    return [
        Declare(step, "int64", one),
        While(and_(BinOp("<", at, hi), BinOp("<", Load(idx_buf, at), target)),
              [Assign(step, BinOp("*", step, Const(2, "int64")))]),
        Declare(lo, "int64", BinOp("+", BinOp("+", q, BinOp("/", step, Const(2, "int64"))), one)),
        Declare(top, "int64", Select(BinOp("<", at, hi), at, hi)),
        While(BinOp("<", lo, top), [
            Declare(mid, "int64", BinOp("+", lo, BinOp("/", BinOp("-", top, lo), Const(2, "int64")))),
            If(BinOp("<", Load(idx_buf, mid), target), [Assign(lo, BinOp("+", mid, one))], [Assign(top, mid)]),
        ]),
        Assign(q, lo),
    ]


def gallop_back_stmts(q, idx_buf, lo, target, fresh) -> list:
    """:func:`gallop_stmts` walking down: move ``q`` to the last ``p`` in ``(lo, q]`` with
    ``idx[p] <= target`` (``lo`` if none), a fiber iterated from its end (a slice with a negative
    step). ``q`` must be above ``lo``.

    >>> from compiler.imperative import pretty
    >>> names = iter(["step", "lo", "hi", "mid"])
    >>> print("\\n".join(pretty(s) for s in gallop_back_stmts(Var("q"), "idx", Var("q_lo"), Var("k"),
    ...                                                       lambda _: next(names))))
    if (idx[q] > k) {
        int64 step = 1;
        while (q - step > q_lo && idx[q - step] > k) {
            step = step * 2;
        }
        int64 lo = q - step > q_lo ? q - step : q_lo;
        int64 hi = q - step / 2;
        while (hi - lo > 1) {
            int64 mid = lo + (hi - lo) / 2;
            if (idx[mid] <= k) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        q = lo;
    }
    """
    step, bottom, top, mid = (Var(fresh(n)) for n in ("step", "lo", "hi", "mid"))
    one, two = Const(1, "int64"), Const(2, "int64")
    at = BinOp("-", q, step)
    # (idx[top] > target; idx[bottom] <= target or bottom is lo: the answer is bottom)
    return [If(BinOp(">", Load(idx_buf, q), target), [
        Declare(step, "int64", one),
        While(and_(BinOp(">", at, lo), BinOp(">", Load(idx_buf, at), target)),
              [Assign(step, BinOp("*", step, two))]),
        Declare(bottom, "int64", Select(BinOp(">", at, lo), at, lo)),
        Declare(top, "int64", BinOp("-", q, BinOp("/", step, two))),
        While(BinOp(">", BinOp("-", top, bottom), one), [
            Declare(mid, "int64", BinOp("+", bottom, BinOp("/", BinOp("-", top, bottom), two))),
            If(BinOp("<=", Load(idx_buf, mid), target), [Assign(bottom, mid)], [Assign(top, mid)]),
        ]),
        Assign(q, bottom),
    ])]
