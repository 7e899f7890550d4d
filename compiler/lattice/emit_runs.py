"""A sum over a run-length level by its runs: each run adds its value times its length.

A loop over a RunList or SparseRunList fiber walks each run's coordinates (see
:mod:`compiler.lattice.run_iterators`). When the loop's whole body adds one value that does not
depend on the coordinate to a scalar, ``t += A_val[r]`` (``s = A[i, j]``, ``y[i] = A[i, j]``),
every coordinate of a run adds the same value, so the loop runs over the runs instead and adds
the value once per run, times the run's length:

    for (rA1 = A1_pos[i]; rA1 < A1_pos[i + 1]; rA1++) t_j += A_val[rA1] * (double)(length of rA1)

That is exact for integers and for NaN and ±inf (a run is never empty: ``v * n`` is NaN or ±inf
exactly when ``n`` additions of ``v`` are), and for other floats it rounds once where the
additions round ``n`` times. A body that reads the coordinate (SpMV's ``A[i, j] * x[j]``), that
counts the coordinates it visits (the fill folded in after the loop), or that updates anything
else is left to the coordinate walk.

>>> from compiler.format import Format
>>> from compiler.levels import Dense, Element, RunList
>>> from compiler.imperative.ir import Load
>>> from compiler.imperative import pretty
>>> from compiler.lattice.iterators import mode_iterators
>>> it = mode_iterators("A", "A", Format(Dense(RunList(Element(0.0)))))[1]
>>> i, j, p, r, t = Var("i"), Var("j"), Var("pA1"), Var("rA1"), Var("t_j")
>>> body = [Declare(j, "int64", p), CompoundAssign("+", t, Load("A_val", r))]   # the walk's body
>>> print(pretty(sum_over_runs(it, body, [j, p], r, i, {"t_j": "float64"})[0]))
for (int64 rA1 = A1_pos[i]; rA1 < A1_pos[i + 1]; rA1++) {
    t_j += A_val[rA1] * (float64)(A1_right[rA1] - (rA1 == A1_pos[i] ? 0 : A1_right[rA1 - 1]));
}
>>> body[1] = CompoundAssign("+", t, Load("x_val", j))   # reads the coordinate: walked
>>> sum_over_runs(it, body, [j, p], r, i, {"t_j": "float64"}) is None
True
"""

from __future__ import annotations

import numpy as np

from ..imperative.ir import BinOp, Cast, Comment, CompoundAssign, Declare, For, Var
from ..imperative.traverse import untagged, walk


def sum_over_runs(it, body: list, walk_vars: list, run: Var, parent, temps: dict) -> list | None:
    """The loop over ``it``'s runs under ``parent`` that adds what ``body`` (the loop body over the
    fiber's coordinates, whose variables are ``walk_vars``) adds, or None when the body does more
    than add one value independent of the coordinate to a numeric scalar (``temps``: its dtype)."""
    if not getattr(it, "walks_runs", False):
        return None
    stmts = [s for s in untagged(body) if not isinstance(s, Comment)]
    coords = {v.name for v in walk_vars}
    # the coordinate's own declaration (``j = pA1``) may stay out: the value must not read it
    stmts = [s for s in stmts if not (isinstance(s, Declare) and s.var.name in coords)]
    if len(stmts) != 1 or not isinstance(stmts[0], CompoundAssign) or stmts[0].op != "+":
        return None
    add = stmts[0]
    dtype = temps.get(add.target.name)
    if dtype is None or np.dtype(dtype).kind not in "iuf":
        return None
    if any(isinstance(n, Var) and n.name in coords for n in walk(add.value)):
        return None
    first, end = it.run_bounds(parent)
    length = it.run_length(run, first)
    times = Cast(dtype, length) if np.dtype(dtype).kind == "f" else length
    return [For(run, first, end, [CompoundAssign("+", add.target, BinOp("*", add.value, times))])]


__all__ = ["sum_over_runs"]
