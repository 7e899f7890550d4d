"""Cursors carried across an outer loop: a read whose windows ascend with the loop walks its fiber once.

``D[i, j] = split(c[k], k -> (i, j:m))`` is the loop program ``for i: for j = 0:m: D[i, j] = c[j + i * m]``
(:mod:`.shapes`). Unfurled on ``j`` inside each ``i``, the read of ``c`` would declare its cursor at
the fiber's start every row and search the whole vector for the row's first entry. Row ``i`` reads
the window ``[i * m, i * m + m)`` of ``c`` and row ``i + 1`` starts where it ends; a walk over a
window consumes only the entries before its end, so the cursor row ``i`` leaves is at or before the
first entry of row ``i + 1``, where a search from the fiber's start would land: the search may start
from it. So the fiber's preamble (its cursor, the cursor's stop, its last coordinate) is declared once
before the loop over ``i``, and each row's walk goes on from where the last one stopped: the row's
search becomes a test and the split one pass over ``c``.

The rule, for a loop over ``i``: a read, directly inside a loop ``j`` of its body (no loop between),
of a fiber unfurled outside ``i`` (so the same fiber every iteration), indexed ``j + a * i + b`` with
``a`` and ``b`` static (integers, sizes, outer indices) and ``a`` at least the length of ``j``'s
extent, so that each window starts at or after the end of the one before. A strided slice
``x[t + (s + r * k)]`` under its one-step loop ``t`` is the case of length 1 (``r >= 1``).

Windows that descend (``a`` at most minus the length: each ends at or before the start of the one
before, a slice with a negative step ``r <= -1``) walk the fiber downward: its cursor starts at
the fiber's end, and each window's seek moves it down from where the last one left it (to the
first entry at or past the window's start, a gallop down: ``q = seek_back(idx, q - 1, q_lo - 1,
start - 1) + 1``), never below the fiber's first position ``q_lo``; the walk over the window then
goes up as any does, to at most the start of the one before. The fiber's steppers must say how to
seek down (their :class:`~compiler.looplets.looplets.Descent`: a SparseList's gallops down its
coordinates, a SparseBlockList's and a run list's down their blocks' or runs' ends); else each window
searches from the fiber's start, as before. A permissive read,
``x[~(q + p * J)]`` of a split of a concatenation, is carried too: it reads missing outside the
fiber, and a row whose window lies before the fiber's start leaves the cursor where it was.
An output written through such windows (``out[i, t + j]`` of a strided slice ``a[:, ::2]``) is carried
up the same way: its fiber is opened once before the loop and closed after it, not at every window
(a RunList's closing fill run up to the fiber's end was appended after each one). So is one written
by a nest of loops through a collapse of a collapse, ``out[l + (k + j * K) * L]`` over ``j``, ``k``,
``l`` (a flatten of three modes): the window of a ``j`` is ``[j * K * L, (j + 1) * K * L)`` when ``l``
spans at most ``L`` and ``k`` at most ``K``, so the fiber is opened before the loop over ``j``, not
before each ``k`` loop (a RunList restarted its coverage and its run bookkeeping at each ``j`` and
wrote empty runs). A read through such windows is carried up the same way (``x[l + (k + j * K) * L]``
of a sparse ``x`` beside a flatten of three modes): its cursor is declared before the loop over ``j``
and each ``l`` loop's seek goes on from where the last one stopped, where it restarted at the fiber's
start at each ``j`` and searched the vector for that ``j``'s first window.

>>> from compiler.looplets.program import Call, Index, Literal
>>> from compiler.algebra import lookup
>>> i = Index("i")
>>> a, b = affine_in(Call(lookup("+"), (Literal(3), Call(lookup("*"), (i, Literal(6))))), i)
>>> print(a, b)
6 3
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..algebra import Operator
from ..imperative.ir import Assign, BinOp, Const, Declare, Var
from . import extents as X
from .appends import summands
from .fibers import SubFiber
from .levels import unfurl
from .looplets import Case, Phase, Sequence, Stepper, Switch, Thunk
from .modifiers import Offset, Permit
from .program import Access, Block, Call, Define, Loop, Sieve, postmap
from .wrappers import modifier_chain, static_ir


@dataclass(frozen=True, eq=False)
class CarriedFiber:
    """A fiber unfurled before an outer loop: its preamble is declared there, so each unfurl on the
    inner loop goes on from the cursor the last iteration left (``nest`` is the thunk's body)."""

    fiber: SubFiber
    nest: Any
    is_leaf = False

    def unfurl(self, ctx, mode):
        return self.nest

    # (a permissive read's padding asks the fiber which tensor, level and mode it reads)
    tensor = property(lambda self: self.fiber.tensor)
    level = property(lambda self: self.fiber.level)
    seg = property(lambda self: self.fiber.seg)
    #: the fiber's extent where it spans several modes (a raveled matrix's), else None
    extent = property(lambda self: getattr(self.fiber, "extent", None))

    def label(self):
        return f"{self.fiber.label()} (carried)"

    def __str__(self):
        return self.label()


def _times(a, b):
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value * b.value, "int64")
    for x, y in ((a, b), (b, a)):
        if isinstance(x, Const) and x.value in (0, 1):
            return y if x.value == 1 else Const(0, "int64")
    return BinOp("*", a, b)


def affine_in(e, i):
    """``(a, b)`` (IR) with ``e == a * i + b``, ``a`` and ``b`` static; None if ``e`` is not so."""
    if e == i:
        return Const(1, "int64"), Const(0, "int64")
    s = static_ir(e)
    if s is not None:
        return Const(0, "int64"), s
    if not (isinstance(e, Call) and isinstance(e.op, Operator) and e.op.name in ("add", "sub", "mul", "neg")):
        return None
    parts = [affine_in(x, i) for x in e.args]
    if any(p is None for p in parts):
        return None
    if e.op.name == "neg":
        (a, b), = parts
        return X.neg(a), X.neg(b)
    (a1, b1), (a2, b2) = parts
    if e.op.name == "add":
        return X.add(a1, a2), X.add(b1, b2)
    if e.op.name == "sub":
        return X.sub(a1, a2), X.sub(b1, b2)
    # a product is affine when one side does not move with i
    if isinstance(a1, Const) and a1.value == 0:
        return _times(b1, a2), _times(b1, b2)
    if isinstance(a2, Const) and a2.value == 0:
        return _times(a1, b2), _times(b1, b2)
    return None


def _nested_windows_ascend(terms: list, i, loops) -> bool:
    """Whether ``l + sum(terms)``, ``l`` the index of the last of ``loops`` (a nest, outermost first,
    directly inside the loop over ``i``), ascends with ``i``, each ``i``'s window after the last's:
    ``terms`` are static ones and ``D * M``, ``l``'s extent at most ``M`` long and ``D`` such a
    coordinate of the loops before (``k + j * K``), down to the outermost loop's ``k + a * i + b``
    with ``k``'s extent at most ``a`` long. (As ``D``'s windows ascend, the smallest ``D`` of an
    ``i`` exceeds the largest of the ``i`` before, and ``l`` spanning at most ``M`` keeps the
    ``l + D * M`` of the two apart too.)"""
    inner = loops[-1]
    if inner.ext is None:
        return False
    length = X.sub(inner.ext.stop, inner.ext.start)
    if len(loops) == 1:
        parts = [affine_in(t, i) for t in terms]
        if any(p is None for p in parts):
            return False
        a = Const(0, "int64")
        for p in parts:
            a = X.add(a, p[0])
        return not (isinstance(a, Const) and a.value == 0) and X.prove_le(length, a)
    moving = [t for t in terms if static_ir(t) is None]
    if len(moving) != 1 or not (isinstance(moving[0], Call) and isinstance(moving[0].op, Operator)
                                and moving[0].op.name == "mul" and len(moving[0].args) == 2):
        return False
    a, b = moving[0].args
    d, m = (a, static_ir(b)) if static_ir(b) is not None else (b, static_ir(a))
    outer = loops[-2].idx
    inside = summands(d)
    if m is None or inside.count(outer) != 1 or not X.prove_le(length, m):
        return False
    rest = [t for t in inside if t != outer]
    return bool(rest) and _nested_windows_ascend(rest, i, loops[:-1])


def _carries(n, i, inner: Loop, loops: tuple = ()):
    """``"up"`` when read ``n`` in loop ``inner`` (directly inside the loop over ``i``) reads windows
    that ascend with ``i``, each starting at or after the end of the one before; ``"down"`` when
    they descend, each ending at or before the start of the one before; else None. ``loops`` are
    the loops inside ``inner`` around ``n``, outermost first: a write there is carried when its
    windows ascend (:func:`_nested_windows_ascend`)."""
    # (a fiber over several modes that carries, a raveled matrix's, seeks forward from its cursor too)
    if not (isinstance(n, Access) and n.mode in ("read", "update") and n.idxs and inner.ext is not None and
            (isinstance(n.tns, SubFiber) and not n.tns.is_leaf or getattr(n.tns, "carries", False))):
        return None
    mods, base = modifier_chain(n.idxs[0])
    if loops:
        # (an output opened once across the loop over i; a read's cursor goes on from window to
        # window across it as well, up only: its windows ascend through every loop of the nest)
        nest = (inner, *loops)
        return "up" if base == nest[-1].idx and len(mods) == 1 and \
            isinstance(mods[0], Offset) and _nested_windows_ascend(summands(mods[0].delta), i, nest) else None
    # (a permissive read, ~(j + a * i + b), reads missing outside the fiber: its windows still
    # ascend, a row before the fiber's start leaving the cursor where it was)
    offsets = [m for m in mods if not isinstance(m, Permit)]
    if base != inner.idx or len(offsets) != 1 or not isinstance(offsets[0], Offset):
        return None
    ab = affine_in(offsets[0].delta, i)
    if ab is None or (isinstance(ab[0], Const) and ab[0].value == 0):
        return None
    length = X.sub(inner.ext.stop, inner.ext.start)
    if X.prove_le(length, ab[0]):
        return "up"
    # (a permissive read is carried up only; so is a write: an output fiber is appended in order)
    if X.prove_le(ab[0], X.neg(length)) and len(mods) == 1 and n.mode == "read":
        return "down"
    return None


def walked_down(nest, ctx):
    """``(statements, body)``: thunk ``nest`` (a fiber's unfurl) walked down the fiber, each stepper's
    cursor put at the fiber's end by ``statements`` (after the thunk's preamble) and each seek moving
    it down (not below the fiber's first position, kept in a local), or None when a stepper of it
    cannot seek down (a :class:`~compiler.looplets.looplets.Stepper` without a ``descent``) or the
    nest holds a looplet whose cursor is not a stepper's."""
    starts = []

    def down(l):
        if isinstance(l, Stepper):
            D = l.descent
            if D is None:
                raise LookupError
            lo = Var(ctx.fresh(f"{D.q.name}_lo"))
            starts.extend([Declare(lo, "int64", D.q), Assign(D.q, D.q_stop)])
            if l.positions is not None:
                # (the fiber's last is positive when it stores an entry, no longer when q < q_stop)
                ctx.facts.positive.pop(getattr(l.positions.last, "name", None), None)
            return replace(l, seek=lambda start, D=D, lo=lo: tuple(D.seek(lo, start)), from_end=True)
        if isinstance(l, Sequence):
            return Sequence(tuple(Phase(p.stop, down(p.body)) for p in l.phases))
        if isinstance(l, Switch):
            return Switch(tuple(Case(c.cond, down(c.body)) for c in l.cases))
        if isinstance(l, Thunk) or hasattr(l, "seek"):
            raise LookupError   # (host code or a cursor of its own: not known to move down)
        return l   # (a run, a fill, a spike, a lookup: no cursor)
    try:
        body = down(nest.body)
    except LookupError:
        return None
    return starts, body


def carry_cursors(i, body, ctx):
    """``(preamble, epilogue, body, carried)``: the reads of ``body`` (the loop over ``i``'s) whose
    fibers' cursors carry from one iteration to the next (see the module docstring) unfurled now,
    their thunks' preambles and epilogues to go before and after the loop, each read's fiber
    replaced by a :class:`CarriedFiber`; ``carried`` holds each one's ``(tensor, inner index)``."""
    pre, epi, carried = [], [], []

    def in_loop(inner: Loop):
        # identical reads in one inner loop share a nest (and a cursor), as their unfurl would
        shared = {}

        def visit(n, loops):
            way = _carries(n, i, inner, loops)
            if way is None:
                return None
            key = (id(n.tns.tensor), n.tns.level, repr(getattr(n.tns, "pos", None)), repr(n.tns.seg), repr(n.idxs),
                   type(n.tns))
            if key not in shared and n.mode == "update" and (
                    not isinstance(n.tns, SubFiber) or n.tns.tensor.name in ctx.scattered and n.tns.lvl.scatters):
                shared[key] = None   # (an output scattered, or not a level's fiber: written as it is)
            if key not in shared:
                nest = unfurl(n.tns, ctx, n.mode, None) if isinstance(n.tns, SubFiber) else n.tns.unfurl(ctx, "read")
                walk = walked_down(nest, ctx) if isinstance(nest, Thunk) and way == "down" else ([], nest.body) \
                    if isinstance(nest, Thunk) else None
                if walk is None:
                    shared[key] = None   # no cursor to carry (a dense level: random access), or not down
                else:
                    pre.extend([*nest.preamble, *walk[0]])
                    epi[:0] = list(nest.epilogue)
                    shared[key] = CarriedFiber(n.tns, walk[1])
                    carried.append((n.source or n.tns.label(),
                                    (loops or (inner,))[-1].idx.name + (" (down)" if way == "down" else "")))
            return None if shared[key] is None else replace(n, tns=shared[key])

        def within(s, loops):
            """``s`` with its accesses visited, ``loops`` the loops around it inside ``inner``."""
            if isinstance(s, Loop):
                body = within(s.body, (*loops, s))
                return s if body is s.body else replace(s, body=body)
            if isinstance(s, Block):
                stmts = tuple(within(x, loops) for x in s.stmts)
                return s if all(a is b for a, b in zip(stmts, s.stmts)) else replace(s, stmts=stmts)
            if isinstance(s, (Sieve, Define)):
                head = "cond" if isinstance(s, Sieve) else "val"
                new = {head: postmap(getattr(s, head), lambda n: visit(n, loops)), "body": within(s.body, loops)}
                return s if all(getattr(s, k) is v for k, v in new.items()) else replace(s, **new)
            return postmap(s, lambda n: visit(n, loops))
        return replace(inner, body=within(inner.body, ()))

    def rebuild(s):
        if isinstance(s, Block):
            return replace(s, stmts=tuple(rebuild(x) for x in s.stmts))
        if isinstance(s, (Sieve, Define)):
            return replace(s, body=rebuild(s.body))
        if isinstance(s, Loop):
            return in_loop(s)
        return s
    new = rebuild(body)
    return pre, epi, new, carried
