"""Give each thread of a parallel loop its own part of the scratch arrays the loop writes.

A workspace (Gustavson's row accumulator, its bitmap and coordinate list, a dense
temporary) is semantically created afresh for every iteration of the loop around it;
the lowering allocates it once, around the whole kernel, and resets what an iteration
touched. On threads that one array would be shared: every thread would scatter into it.
This pass allocates one part per thread (``thread_count()`` parts) and starts each
parallel iteration with a :class:`~compiler.imperative.ir.View` of its thread's part,
under the name the loop already uses, so the loop body is unchanged::

    double *w_all = alloc_array(length_product(n, thread_count()), ...);
    #pragma omp parallel for
    for (i = ...) {
        double *restrict w = w_all + thread_id() * n;
        ...   // as before

A parallel loop is a ``For`` right after a ``#pragma omp parallel for``. A scratch array
read or written outside every parallel loop is shared state, which a part per thread
would break: that is refused (the schedule checks keep such kernels sequential), unless
the array is marked ``shared`` (each parallel iteration touches only its own elements,
as a row's slot in an array indexed by row), which the pass leaves as it is.

>>> from compiler.imperative import Allocate, Block, For, Pragma, Store, Var, pretty
>>> i = Var("i")
>>> loop = [Pragma("omp parallel for"), For(i, 0, 4, [Store("w", 0, i)])]
>>> print(pretty(Block(tuple(privatize([Allocate("w", "int64", 8, 0, loop)])))))
int64 w_all[8 * thread_count()] = {0, ...};
#pragma omp parallel for
for (int64 i = 0; i < 4; i++) {
    // this thread's own part of w_all
    int64 w[8] = &w_all[thread_id() * 8];
    w[0] = i;
}
free(w_all);
"""

from __future__ import annotations

from dataclasses import replace

from ..names import FreshNames
from .ir import (Allocate, Assign, BinOp, Block, BufferArg, Call, Comment, CompoundAssign, Declare, For, Load, Pragma, Prefetch,
                 Stmt, Store, Tagged, Var, View)
from .traverse import map_bodies, walk


def is_parallel_pragma(s) -> bool:
    return isinstance(s, Pragma) and s.text.split()[:3] == ["omp", "parallel", "for"]


def with_clauses(pragma: Pragma, *clauses: str) -> Pragma:
    """A parallel loop's ``pragma`` with ``clauses`` right after ``omp parallel for`` (its own
    clauses, a schedule say, are kept after them).

    >>> with_clauses(Pragma("omp parallel for schedule(guided)"), "reduction(+:t)").text
    'omp parallel for reduction(+:t) schedule(guided)'
    """
    words = pragma.text.split()
    return Pragma(" ".join(words[:3] + list(clauses) + words[3:]))


def _parallel(stmts, k: int) -> For | None:
    """The loop ``stmts[k]`` if a parallel pragma precedes it (it may carry a provenance tag)."""
    s = stmts[k]
    while isinstance(s, Tagged) and len(s.body.body) == 1:
        s = s.body.body[0]
    return s if isinstance(s, For) and k > 0 and is_parallel_pragma(stmts[k - 1]) else None


def map_parallel_loops(stmts, fn) -> list:
    """``stmts`` with each parallel loop (a ``#pragma omp parallel for`` and the loop after it,
    perhaps in a tag) replaced by the statements ``fn(pragma, loop)``; the rest is walked into."""
    stmts, out, k = list(stmts), [], 0
    while k < len(stmts):
        if k + 1 < len(stmts) and _parallel(stmts, k + 1) is not None:
            out += fn(stmts[k], stmts[k + 1])
            k += 2
        else:
            out.append(map_bodies(stmts[k], lambda body: map_parallel_loops(body, fn)))
            k += 1
    return out


def first_in_loop(s, stmts: list):
    """The parallel loop ``s`` (or its tag) with ``stmts`` first in its body: what each
    iteration declares before the body (its thread's view of an array)."""
    if isinstance(s, Tagged):
        return replace(s, body=Block((first_in_loop(s.body.body[0], stmts),)))
    return replace(s, body=Block((*stmts, *s.body.body)))


def _with_views(s, views: list):
    """The parallel loop ``s`` (or its tag) with ``views`` first in its body."""
    note = Comment(f"this thread's own part of {'each scratch array' if len(views) > 1 else views[0].of}")
    return first_in_loop(s, [note, *views])


def _bodies(s) -> list:
    """The statement lists directly inside ``s`` (see :func:`~compiler.imperative.traverse.map_bodies`)."""
    inner = []
    map_bodies(s, lambda body: inner.append(body) or body)
    return inner


def _parallel_loops(stmts) -> list[For]:
    """The parallel loops among ``stmts`` and inside them (not inside a parallel loop)."""
    out, stmts = [], list(stmts)
    for k, s in enumerate(stmts):
        loop = _parallel(stmts, k)
        if loop is not None:
            out.append(loop)
        else:
            out += [x for body in _bodies(s) for x in _parallel_loops(body)]
    return out


def _accessed(node) -> set[str]:
    names = set()
    for n in walk(node):
        if isinstance(n, (Load, Store, Prefetch, BufferArg)):
            names.add(n.buffer)
        elif isinstance(n, View):
            names.add(n.of)
    return names


def _written(node) -> set[str]:
    return {n.buffer for n in walk(node) if isinstance(n, Store)}


def _outside_parallel(stmts) -> set[str]:
    """Buffers accessed by ``stmts`` outside their parallel loops."""
    names, stmts = set(), list(stmts)
    for k, s in enumerate(stmts):
        if _parallel(stmts, k) is not None:
            continue
        names |= _accessed(map_bodies(s, lambda body: []))   # the statement itself, without its bodies
        for body in _bodies(s):
            names |= _outside_parallel(body)
    return names


def privatize(stmts, taken: set[str] | None = None) -> list[Stmt]:
    """``stmts`` with the scratch arrays their parallel loops write split into one part per thread.

    ``taken`` names already in use (fresh names for the whole arrays avoid them).
    """
    stmts = list(stmts)
    fresh = FreshNames(set(taken or ()) | {n.name for n in walk(tuple(stmts)) if isinstance(n, Var)}
                       | {n.buffer for n in walk(tuple(stmts)) if isinstance(n, (Allocate, View))})
    assigned = {n.target.name for n in walk(tuple(stmts)) if isinstance(n, (Assign, CompoundAssign))} \
        | {n.var.name for n in walk(tuple(stmts)) if isinstance(n, (For, Declare))}
    parts: dict[str, View] = {}   # private buffer -> the view each iteration makes

    def split(s):
        if not isinstance(s, Allocate):
            return map_bodies(s, lambda body: [split(x) for x in body])
        body = [split(x) for x in s.body.body]
        loops = _parallel_loops(body)
        if s.shared or not any(s.buffer in _written(loop.body) for loop in loops):
            return replace(s, body=Block(tuple(body)))
        if s.buffer in _outside_parallel(body):
            raise ValueError(f"privatize: scratch array {s.buffer} is written in a parallel loop and also used "
                             f"outside it, so a part per thread would not be the array the rest reads")
        moving = {v.name for v in walk(s.length) if isinstance(v, Var)} & assigned
        if moving:
            raise ValueError(f"privatize: the length of {s.buffer} reads {', '.join(sorted(moving))}, which the "
                             f"kernel assigns, so a parallel iteration cannot recompute it")
        whole = fresh(f"{s.buffer}_all")
        parts[s.buffer] = View(s.buffer, s.dtype, whole, BinOp("*", Call("thread_id"), s.length), s.length)
        return replace(s, buffer=whole, length=BinOp("*", s.length, Call("thread_count")), body=Block(tuple(body)))

    def view_parts(body: list) -> list:
        out = []
        for k, s in enumerate(body):
            loop = _parallel(body, k)
            if loop is not None:
                used = _accessed(loop.body)
                views = [parts[name] for name in order if name in parts and name in used]
                out.append(_with_views(s, views) if views else s)
            else:
                out.append(map_bodies(s, view_parts))
        return out

    order = [n.buffer for n in walk(tuple(stmts)) if isinstance(n, Allocate)]
    stmts = [split(s) for s in stmts]
    return view_parts(stmts) if parts else stmts


__all__ = ["first_in_loop", "is_parallel_pragma", "map_parallel_loops", "privatize"]
