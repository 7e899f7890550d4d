"""Reduction vectorization: a contiguous sum loop is marked ``#pragma omp simd reduction``.

``for (j = lo; j < hi; j++) acc += a[q + j] * x[j];`` runs at one add per
floating-point latency (about four cycles): each add waits for the one before,
because C's floating-point addition is not associative and the C compiler keeps
the written order. The pragma lets it keep one partial sum per SIMD lane and add
the lanes at the end, which only changes rounding (the tests compare floats with
a tolerance). Only loops that read memory contiguously are marked: with an
indirect read such as ``x[idx[q]]`` the lanes would need gathers, which cost more
than the add chain saves.

>>> from compiler.imperative.ir import Var, For, Load, CompoundAssign, Block
>>> j, acc = Var("j"), Var("acc")
>>> loop = For(j, 0, Var("n"), [CompoundAssign("+", acc, Load("a", j) * Load("x", j))])
>>> for s in vectorize([loop], {"acc": "float64"}):
...     print(str(s).strip())
#pragma omp simd reduction(+:acc)
for (int64 j = 0; j < n; j++) {
    acc += a[j] * x[j];
}
>>> gather = For(j, 0, Var("n"), [CompoundAssign("+", acc, Load("x", Load("idx", j)))])
>>> vectorize([gather], {"acc": "float64"}) == [gather]
True
"""

from __future__ import annotations

from dataclasses import replace

from .ir import (Allocate, Block, Call, CompoundAssign, Const, Declare, Expr, For, If, Load, MATH_FUNCTIONS, Pragma,
                 Tagged, Var, While, walk)

#: the reductions the pragma may reorder (C's ``+`` and ``*`` on the accumulator)
REDUCTION_OPS = ("+", "*")


def _contiguous(e: Expr) -> bool:
    """Whether every load in ``e`` has an index without loads (no gathers) and every call is math."""
    for n in walk(e):
        if isinstance(n, Load) and any(isinstance(m, Load) for m in walk(n.index)):
            return False
        if isinstance(n, Call) and n.function not in MATH_FUNCTIONS:
            return False
    return True


def _untagged(stmts) -> list:
    """``stmts`` with provenance tags (the explorer's colours) dropped."""
    out = []
    for s in stmts:
        out += _untagged(s.body.body) if isinstance(s, Tagged) else [s]
    return out


def reduction(loop) -> CompoundAssign | None:
    """The ``acc op= value`` a ``For`` loop's body ends with, if the loop may run in SIMD lanes.

    The body is that one statement, after declarations of index arithmetic.
    """
    if not isinstance(loop, For):
        return None
    body = _untagged(loop.body.body)
    if not body or not isinstance(body[-1], CompoundAssign):
        return None
    s = body[-1]
    if s.op not in REDUCTION_OPS or s.target.name == loop.var.name:
        return None
    for d in body[:-1]:  # index arithmetic such as ``p = i * n + j``; a load here would be a gather
        if (not isinstance(d, Declare) or d.init is None or d.var.name == s.target.name
                or any(isinstance(n, (Load, Call)) for n in walk(d.init))):
            return None
    used = {n.name for n in walk(s.value) if isinstance(n, Var)}
    if s.target.name in used or not _contiguous(s.value) or isinstance(s.value, Const):
        return None
    return s


def vectorize(stmts, dtypes: dict | None = None) -> list:
    """``stmts`` with each contiguous floating-point sum loop preceded by ``#pragma omp simd reduction``.

    ``dtypes`` maps names declared outside ``stmts`` to their dtypes. Integer sums are left
    alone: integer addition is associative, so the C compiler already vectorizes them as it
    sees fit, and forcing SIMD lanes on short integer loops (sorting's rank counts) is slower.
    """
    dtypes = dict(dtypes or {})
    # generated names are fresh, so one map serves the whole tree (tags are not C scopes)
    dtypes.update({d.var.name: d.dtype for d in walk(tuple(stmts)) if isinstance(d, Declare)})
    out = []
    for s in stmts:
        r = reduction(s)
        if r is not None and dtypes.get(r.target.name, "").startswith("float"):
            out += [Pragma(f"omp simd reduction({r.op}:{r.target.name})"), s]
        elif isinstance(s, (For, While, Allocate, Tagged)):
            out.append(replace(s, body=Block(tuple(vectorize(s.body.body, dtypes)))))
        elif isinstance(s, If):
            out.append(replace(s, then=Block(tuple(vectorize(s.then.body, dtypes))),
                               otherwise=None if s.otherwise is None else
                               Block(tuple(vectorize(s.otherwise.body, dtypes)))))
        elif isinstance(s, Block):
            out.append(Block(tuple(vectorize(s.body, dtypes))))
        else:
            out.append(s)
    return out
