"""Searches in a sorted coordinate array, as imperative IR: the gallop (exponential then
binary) a looplet's ``seek`` runs to skip ahead to a coordinate, and the binary search of a
located read. Each is one call of a C helper (:mod:`compiler.imperative.search`).

A seek gallops from the cursor rather than bisecting the rest of the fiber: a cursor carried
across an outer loop (:mod:`.carried`) seeks once per row to a target just past it, and
bisecting the rest of a million-entry vector there cost Fig. 26a (``collapse(A) * b``) a
20-probe cache-missing search per row, twice the lattice kernel's time (issue 30).

>>> from compiler.imperative import pretty
>>> from compiler.imperative.ir import Buffer, Var
>>> print(pretty(search_stmts(Var("q"), Buffer("A1_idx", "int64"), Var("q_stop"), Var("j"), str)[0]))
q = seek(A1_idx, q, q_stop, j);
"""

from __future__ import annotations

from ..imperative.ir import Assign, Load
from ..imperative.search import gallop_stmts, seek_back_call, seek_call
from . import extents as X
from .looplets import Descent


def search_stmts(q, idx_buf, hi, target, fresh) -> list:
    """Gallop: the first ``p`` in ``[q, hi)`` with ``idx[p] >= target``, into ``q``, in
    O(log distance) probes (at most about twice a bisection's where the target is far);
    nothing where ``idx[q] >= target`` is known (``target`` is 0 and ``idx`` holds coordinates:
    see :mod:`compiler.looplets.bounds`)."""
    if X.prove_le(target, Load(idx_buf, q)):
        return []
    return gallop_stmts(q, idx_buf, hi, target, fresh)


def gallop_from(var, q, idx_buf, hi, target, fresh=None) -> list:
    """``var`` (declared) = the first ``p`` in ``[q, hi)`` with ``idx[p] >= target``, found by
    galloping from ``q``: the end of a phase is usually near (a diagonal ends one entry
    later), so this costs O(log distance) where a binary search of the fiber costs
    O(log length). There must be such a ``p`` (the caller checks ``target < last``)."""
    return [Assign(var, seek_call(idx_buf, q, hi, target))]


def search_down_stmts(q, idx_buf, lo, target) -> list:
    """Gallop down: the first ``p`` in ``[lo, q)`` with ``idx[p] >= target`` (``q`` if none), into
    ``q``, where a cursor carried down a fiber (a slice with a negative step, :mod:`.carried`) moves
    to the entry at or past a lower target: ``seek_back``'s last position at or below ``target - 1``,
    plus one, in O(log distance) probes.

    >>> from compiler.imperative import pretty
    >>> from compiler.imperative.ir import Buffer, Var
    >>> print(pretty(search_down_stmts(Var("q"), Buffer("A1_idx", "int64"), Var("q_lo"), Var("j"))[0]))
    q = seek_back(A1_idx, q - 1, q_lo - 1, j - 1) + 1;
    """
    return [Assign(q, X.add(seek_back_call(idx_buf, X.sub(q, 1), X.sub(lo, 1), X.sub(target, 1)), 1))]


def descent_over_ends(r, r_stop, ends_b) -> Descent:
    """How a stepper over blocks or runs ``[r, r_stop)`` (each ending before ``ends[r]``) seeks down
    its fiber: a gallop down the ends, to the first block or run in ``[lo, r)`` that ends past the
    target, O(log distance) (a cursor carried down a fiber, :mod:`.carried`).

    >>> from compiler.imperative import pretty
    >>> from compiler.imperative.ir import Buffer, Var
    >>> d = descent_over_ends(Var("rA"), Var("rA_stop"), Buffer("A1_right", "int64"))
    >>> print(pretty(d.seek(Var("rA_lo"), Var("i"))[0]))
    rA = seek_back(A1_right, rA - 1, rA_lo - 1, i) + 1;
    """
    return Descent(r, r_stop, lambda lo, t: search_down_stmts(r, ends_b, lo, X.add(t, 1)))
