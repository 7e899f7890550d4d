"""Which writes of a loop program append to one fiber of a sparse output, and whether in order.

A sorted sparse output level (SparseList, SparseCOO, RunList, ...) is appended: each fiber is
opened once, its coordinates written in increasing order, and closed. So the loops around a
write must be the loops of its indices in storage order, one loop nest must write each fiber,
and two loops writing one fiber must write it one after the other (a concatenation through
windows: ``C[:n][i] = A[i]`` then ``C[n:][i] = B[i]``). Two statements in one iteration of the
loops of a sorted level's entry that has levels below it (a row of a DCSR: ``for i: for j: D[i, j]
= A[i, j]``, then ``for k: D[i, k + n] = B[i, k]``) append that entry once, together: the looplets
share it, and its fiber is written by each statement in turn, its order checked as any fiber's. Two
statements in one iteration writing two entries must write each after the one before and before the next
iteration's (an interleave, ``y[t + o * 2]`` then ``y[t + 1 + o * 2]`` under a one-step ``t``; not ``y[j]``
then ``y[j + 1]``, which the next iteration writes again); so must the rows of two loops each writing a
row whole (``D[t + o * 2, j]`` over ``j``, then ``D[t + 1 + o * 2, k]`` over ``k``: an interleave of rows,
into a CSR, a COO or a DCSR, whose row level it appends in order). :func:`check_sparse_writes` refuses what can
never be in order (a second loop starting where the first does, or writing only coordinates before the
first's) and returns what only a call can tell: the outputs whose every call must validate that the second
loop's coordinates follow the first's.

>>> from compiler.looplets import loop_program
>>> from compiler.looplets.compile import compile_program
>>> @loop_program
... def twice(C, A, B):
...     for i in _:
...         C[i] += A[i]
...     for i in _:
...         C[i] += B[i]
>>> import numpy as np; from compiler import Tensor
>>> A = Tensor.from_numpy(np.array([1.0, 0.0]), "sparse")
>>> from compiler.looplets import ProgramError
>>> try:
...     compile_program(twice, C="sparse", A=A, B=A)
... except ProgramError as e:
...     print(e.reason.split(", so ")[0])
output C is written by two loops over i (lines 4 and 6) into one fiber of its SparseList level (storage level 0), whose coordinates are appended in increasing order: both loops start at i = 0
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ..algebra import Operator
from ..imperative.ir import BinOp, Const, Select, Var
from . import extents as X
from .errors import ProgramError
from .modifiers import Offset, Window
from .program import Assign, Block, Call, Define, Index, IndexModifier, Loop, Sieve, TensorRef, show_expr, walk

_ELSEWHERE = "or store {t} in SparseHash or SparseByteMap, which accept writes in any order"


@dataclass(frozen=True)
class _Append:
    """One write to a sorted level: the loops of its parent fibers, the loops of the level's
    modes, whether each of its coordinates there is the loop's index itself (no window, no
    offset), its line."""

    parents: tuple
    loops: tuple
    plain: tuple         # per loop of the level's modes
    line: int
    coords: tuple = ()   # the write's index expressions of the parent modes
    own: tuple = ()      # ... and per loop of the level's modes, the mode's that loop walks last
                         # (None for a collapse's outer loop: j + o * M's o)
    at: tuple = ()       # the write's index expressions of the level's modes
    write: object = None   # the write's left side, ``y[j + 1]``
    # per parent mode, its index expression and the loops that walk it (several for a collapse's: ``n + (m + l * M)
    # * N`` by l, m and n), however many loops each takes
    parent_walks: tuple = ()


def _base(x):
    while isinstance(x, IndexModifier):
        x = x.index
    return x


def _walk(x, ext_of: dict, loops: list) -> list:
    """The loops a write's coordinate ``x`` increases with, outermost first: its index's, or for
    ``j + o * M`` (``j + o``: ``M = 1``) with ``o`` an outer loop and ``j``'s loop within ``[0, M)``
    (a row-major collapse; a slice's one-step loop), ``o``'s then ``j``'s: that coordinate grows with
    ``(o, j)`` in lexicographic order, so appends in that loop order are in order. A one-step loop's
    ``t + (q + o * M)`` (a strided part of an hstack's ravel) walks ``q + o * M``'s loops, then ``t``."""
    from .wrappers import static_ir
    base = _base(x)
    if not (isinstance(x, Offset) and isinstance(x.index, Index) and x.index in ext_of):
        return [base]
    d = _outer_term(x.delta)
    ext = ext_of[x.index]
    if d is None and (ext.start, ext.stop) == (Const(0, "int64"), Const(1, "int64")):
        terms = summands(x.delta)
        inner = [t for t in terms if isinstance(t, Index) and t in loops and loops.index(t) < loops.index(x.index)]
        if len(inner) == 1 and inner[0] in ext_of:
            rest = [t for t in terms if t is not inner[0]]
            walk = _walk(Offset(inner[0], _sum(rest, x.delta.op)), ext_of, loops)
            if len(walk) == 2:
                return [*walk, base]
    if d is None:
        return [base]
    if isinstance(d, Index):
        outer, scale = d, Const(1, "int64")
    elif isinstance(d, Call) and isinstance(d.op, Operator) and d.op.name == "mul" and len(d.args) == 2:
        a, b = d.args
        outer, scale = (a, static_ir(b)) if static_ir(b) is not None else (b, static_ir(a))
        # (a collapse of a concatenation's part: j + (o + |p|) * M grows with (o, j) as j + o * M does)
        nested = None if isinstance(outer, Index) else _collapsed_walk(outer, ext_of, loops)
        if nested is not None and scale is not None and ext.start == Const(0, "int64") and \
                (ext.stop == scale or provably_below(ext.stop, scale)) and \
                all(loops.index(o) < loops.index(x.index) for o in nested):
            # (a collapse of a collapse, l + (j + i * J) * L: the coordinate grows with (i, j, l))
            return [*nested, base]
        outer = outer if isinstance(outer, Index) else _outer_term(outer)
    else:
        return [base]
    if not (isinstance(outer, Index) and outer in loops and loops.index(outer) < loops.index(x.index)
            and scale is not None and ext.start == Const(0, "int64")
            and (ext.stop == scale or provably_below(ext.stop, scale))):
        return [base]
    return [outer, base]


def _collapsed_walk(e, ext_of: dict, loops: list):
    """The loops ``e`` grows with, outermost first, where ``e`` is itself a collapse's coordinate
    ``j + i * J`` of loops (the row of an outer collapse, ``l + (j + i * J) * L``), or None."""
    terms = summands(e)
    inner = [t for t in terms if isinstance(t, Index) and t in ext_of and t in loops]
    if len(inner) != 1 or len(terms) < 2 or not (isinstance(e, Call) and isinstance(e.op, Operator)):
        return None
    rest = [t for t in terms if t is not inner[0]]
    walk = _walk(Offset(inner[0], _sum(rest, e.op)), ext_of, loops)
    return walk if len(walk) >= 2 else None


def _outer_term(d):
    """The one term of an offset ``d`` that is not static (``o`` or ``o * M`` of ``o + |j| + 2``: a
    strided part of a concatenation is written at ``t + (o + |j|)``), or None."""
    from .wrappers import static_ir
    terms = summands(d)
    rest = [t for t in terms if static_ir(t) is None]
    return rest[0] if len(rest) == 1 else None


def _sum(terms: list, add):
    """The terms added by ``add`` (a binary Call each), left to right."""
    out = terms[0]
    for t in terms[1:]:
        out = Call(add, (out, t))
    return out


def summands(d) -> list:
    """The terms of a sum ``d`` (itself, if it is no sum).

    >>> from compiler.algebra import lookup
    >>> summands(Call(lookup("+"), (Index("j"), Call(lookup("+"), (Index("o"), Index("c"))))))
    [Index(name='j'), Index(name='o'), Index(name='c')]
    """
    if isinstance(d, Call) and isinstance(d.op, Operator) and d.op.name == "add":
        return [t for a in d.args for t in summands(a)]
    return [d]


def _at_least_zero(e) -> bool:
    """Whether an IR bound is provably >= 0: a constant, or a max with such an operand
    (dimensionalization's ``max(0, -n)`` start of a loop writing at an offset)."""
    if isinstance(e, Const):
        return e.value >= 0
    if isinstance(e, Select) and isinstance(e.cond, BinOp) and e.cond.op == ">" and \
            e.cond.left == e.then and e.cond.right == e.otherwise:
        return _at_least_zero(e.then) or _at_least_zero(e.otherwise)
    return False


def _terms(e) -> list:
    return _terms(e.left) + _terms(e.right) if isinstance(e, BinOp) and e.op == "+" else [e]


def provably_below(a, b) -> bool:
    """Whether ``a <= b`` is provable, sizes being >= 0: ``b`` is ``a`` plus sizes and constants.

    >>> n = Var("A1_size")
    >>> provably_below(n, BinOp("+", n, Var("B1_size"))), provably_below(BinOp("+", n, Var("B1_size")), n)
    (True, False)
    """
    if X.prove_le(a, b):
        return True
    rest = _terms(b)
    for t in _terms(a):
        if t not in rest:
            return False
        rest.remove(t)
    return all(_nonnegative_term(t) for t in rest)


def _reach(x, loop, one_step=frozenset()):
    """``(lo, hi)``: a parent write at ``x`` (the loop's index, or it at a static offset, or a
    one-step loop's index of ``one_step`` offset by those: a strided part's ``t + (o + |j|)``)
    lands in ``[lo, hi)``, or None."""
    from .wrappers import static_ir
    if loop.ext is None or not _at_least_zero(loop.ext.start):
        return None
    if isinstance(x, Index) and x == loop.idx:
        return Const(0, "int64"), loop.ext.stop
    if isinstance(x, Offset) and x.index == loop.idx:
        d = static_ir(x.delta)
        return None if d is None else (d, X.add(d, loop.ext.stop))
    if isinstance(x, Offset) and x.index in one_step and loop.idx in summands(x.delta):
        rest = [t for t in summands(x.delta) if t != loop.idx]
        d = static_ir(_sum(rest, x.delta.op)) if rest else Const(0, "int64")
        return None if d is None else (d, X.add(d, loop.ext.stop))
    return None


def one_step_loops(loops) -> frozenset:
    """The indices of the loops of ``loops`` that run once (``for t = 0:1``).

    >>> from compiler.looplets.program import Block, Extent
    >>> t, j = Index("t"), Index("j")
    >>> one_step_loops([Loop(t, Extent(Const(0, "int64"), Const(1, "int64")), Block()), Loop(j, None, Block())])
    frozenset({Index(name='t')})
    """
    return frozenset(lp.idx for lp in loops if lp.ext is not None and lp.ext.start == Const(0, "int64")
                     and lp.ext.stop == Const(1, "int64"))


def _strides(loops, coords) -> frozenset:
    """The one-step loops of ``loops`` (:func:`one_step_loops`) that walk no parent coordinate of their own:
    a strided part's ``t`` of ``t + (o + |j|)``, not a loop whose index is a coordinate by itself or at
    a static offset (a one-row part of a concatenation by rows, ``out[k, j]`` over ``k = 0:1``, then
    ``out[m + 1, j]``: ``roll(A, 1, axis=0)``)."""
    from .wrappers import static_ir
    own = {x for x in coords if isinstance(x, Index)}
    own |= {x.index for x in coords if isinstance(x, Offset) and isinstance(x.index, Index)
            and static_ir(x.delta) is not None}
    # (and the part's own loop in the offset, ``o`` of ``t + (o + |j|)``, though it runs once: a strided
    # slice that keeps one row, ``A[0:1:2]``, walks its row there)
    own |= {d for x in coords if isinstance(x, Offset) and isinstance(x.index, Index) for d in summands(x.delta)
            if isinstance(d, Index) and d != x.index}
    return one_step_loops(loops) - own


def never_runs(loop) -> bool:
    """Whether ``loop`` runs no iteration, its extent empty by constants (``for p = 0:0``, the part
    ``A[0:0]`` of a concatenation).

    >>> from compiler.looplets.program import Extent
    >>> [never_runs(Loop(Index("p"), Extent(Const(0, "int64"), Const(s, "int64")), Block())) for s in (0, 1)]
    [True, False]
    """
    ext = loop.ext
    return ext is not None and isinstance(ext.start, Const) and isinstance(ext.stop, Const) \
        and ext.stop.value <= ext.start.value


def _disjoint(earlier: list, here: _Append) -> bool:
    """Whether a nest's writes land in fibers no earlier nest wrote: at the first parent mode where
    their loops differ, its coordinates all come after the earlier's (a vstack's rows after the
    first operand's; a 3-D ravel's rows, then a vector's: :func:`_spans_follow`)."""
    return bool(earlier) and (_coords_follow(earlier, here) or _spans_follow(earlier, here))


def _coords_follow(earlier: list, here: _Append) -> bool:
    """:func:`_disjoint` where each parent mode's coordinate is walked by one loop (a strided part's by its
    one-step loop too)."""
    if not here.coords:
        return False
    def walked(w):   # (a strided part's one-step loop walks no parent coordinate of its own)
        return [lp for lp in w.parents if lp.idx not in _strides(w.parents, w.coords)]

    for seen in earlier:
        if not seen.coords:
            return False
        for a, b, x, y in zip(walked(seen), walked(here), seen.coords, here.coords):
            if a is b:
                if x != y:
                    return False
                continue
            ra, rb = (_reach(x, a, _strides(seen.parents, seen.coords)),
                      _reach(y, b, _strides(here.parents, here.coords)))
            if ra is None or rb is None or not provably_below(ra[1], rb[0]):
                return False
            break
        else:
            return False
    return True


def _spans_follow(earlier: list, here: _Append) -> bool:
    """Whether at the first parent mode where a nest's loops differ from each earlier nest's, the span of its
    coordinates there provably starts where the earlier's ends, each mode's coordinate walked by its own loops (a
    collapse's by several: ``out[n + (m + l * |m|) * |n|, j]``, then ``out[q + |l|·|m|·|n|, j]``)."""
    for seen in earlier:
        for (x, la), (y, lb) in zip(seen.parent_walks, here.parent_walks):
            if len(la) == len(lb) and all(a is b for a, b in zip(la, lb)):
                if x != y:
                    return False
                continue
            spans = (span_of(coordinate_terms(x), la, one_step_loops(seen.parents)),
                     span_of(coordinate_terms(y), lb, one_step_loops(here.parents)))
            if None in spans or not provably_below(spans[0][1], spans[1][0]):
                return False
            break
        else:
            return False
    return True


def _interleaved(p: _Append, here: _Append, m0: int) -> bool:
    """Whether ``here``, written after ``p`` in one iteration of the same loops, provably appends after
    ``p`` and before ``p``'s entry of the next iteration: both in one parent fiber, their coordinates
    the same but the last, a collapse's row ``t + c + o * M`` of a one-step loop ``t`` whose ``c``'s
    are increasing within ``[0, M)`` (``y[t + o * 2]`` then ``y[t + 1 + o * 2]``: an interleave)."""
    d = len(p.loops) - 1
    if len(here.loops) != len(p.loops) or d < 0 or p.write.idxs[:m0] != here.write.idxs[:m0] \
            or p.own[:d] != here.own[:d] or p.at[:-1] != here.at[:-1]:
        return False
    last = p.loops[d]
    one_step = last.ext is not None and (last.ext.start, last.ext.stop) == (Const(0, "int64"), Const(1, "int64"))
    return one_step and _after_at(p, here, d)


def _written_at(write) -> str:
    """Where a write lands, in the program's terms: ``y[j + 1]`` (a window's ``y[4:8][j]``: ``y[j + 4]``)."""
    def text(x):
        if isinstance(x, Offset):
            delta = show_expr(x.delta)
            return f"{text(x.index)} - {delta[1:]}" if delta.startswith("-") else f"{text(x.index)} + {delta}"
        return text(x.index) if isinstance(x, IndexModifier) else show_expr(x)
    return f"{write.tns.name}[{', '.join(text(x) for x in write.idxs)}]"


def _after(p: _Append, here: _Append) -> bool:
    """Whether ``here``'s coordinates provably follow ``p``'s in the fiber they share: at their first
    differing loop, ``p`` writes below some bound at which ``here`` starts (``for j: C[j]``, then
    ``for k: C[k + |j|]``; under a shared outer loop ``o`` of a collapse, ``C[j + o * M]`` then
    ``C[k + |j| + o * M]``, each within ``[0, M)`` of its row: an hstack's ravel; or by rows, ``C[i +
    j * M]`` over rows ``j`` below ``|j|``, then ``C[i + (p + |j|) * M]``: a vstack's ravel)."""
    d = next((d for d, (a, b) in enumerate(zip(p.loops, here.loops)) if a is not b), None)
    if d is None:
        return False
    if d + 1 < min(len(p.own), len(here.own)) and p.own[d] is None and here.own[d] is None:
        return _rows_after(p, here, d)   # (the differing loops are two collapses' row loops)
    return _after_at(p, here, d)


def _follows(p: _Append, here: _Append) -> bool:
    """Whether every coordinate ``here`` writes in a level provably comes after every one ``p`` writes, their
    nests however deep: from their first differing loop on, ``p``'s span ends where ``here``'s starts (a ravel
    ``l + k * |l|`` over ``[0, |k|·|l|)``, then ``m + |k|·|l|``: a concatenation of a collapse and a vector), at
    the first of the level's modes they write apart."""
    d = next((d for d, (a, b) in enumerate(zip(p.loops, here.loops)) if a is not b), None)
    if d is None or len(p.at) != len(here.at) or not p.at:
        return False
    # (a level of several modes, a COO's, appended in the order of its coordinates' tuples: compared at the first
    # mode they write apart, the modes before it written alike by the loops both share, ``out[i, ...]`` under a
    # row's broadcast; ``out[..., j]`` with a column's after it)
    e = next((e for e, (x, y) in enumerate(zip(p.at, here.at)) if x != y), None)
    if e is None or not all(x in p.own[:d] for x in p.at[:e]):
        return False
    spans = [span_of(coordinate_terms(w.at[e]), w.loops[d:], one_step_loops(w.parents + w.loops)) for w in (p, here)]
    return None not in spans and provably_below(spans[0][1], spans[1][0])


def _window_of(w: _Append):
    """``(lo, hi)``: the static bounds of the window a write goes through at the level's last mode
    (a COO's row ``i`` before it), or None."""
    from .wrappers import static_ir
    x = w.at[-1] if w.at else None
    if not isinstance(x, Window):
        return None
    lo, hi = static_ir(x.lo), static_ir(x.hi)
    return None if lo is None or hi is None else (lo, hi)


def _windows_may_meet(p: _Append, here: _Append) -> bool:
    """Whether the windows ``p`` and ``here`` write through may share a coordinate: at the level's
    other modes they write alike, and ``p``'s window does not provably end where ``here``'s starts or
    before (``C[0:4][i]`` then ``C[2:][i]``)."""
    a, b = _window_of(p), _window_of(here)
    return a is not None and b is not None and p.at[:-1] == here.at[:-1] and not provably_below(a[1], b[0])


def _window_text(w: _Append) -> str:
    """A write's window as the program gives it (``[2:c.shape[0]]``)."""
    x = w.at[-1]
    return f"[{show_expr(x.lo)}:{show_expr(x.hi)}]"


def coordinate_terms(x):
    """The summands of a write's coordinate (``l + k * M + c``'s ``l``, ``k * M``, ``c``), or None
    for one through another modifier (a window, a permissive index).

    >>> from compiler.looplets.program import Literal
    >>> coordinate_terms(Offset(Index("j"), Literal(2)))
    [Index(name='j'), Literal(value=2)]
    """
    if isinstance(x, Offset):
        inner = coordinate_terms(x.index)
        return None if inner is None else inner + summands(x.delta)
    return None if isinstance(x, IndexModifier) else summands(x)


def span_of(terms, loops, zero=frozenset()):
    """``(lo, hi)``: the sum of ``terms`` lies in ``[lo, hi)`` as ``loops`` run (any other loop's index
    in it: None). A sum is static terms plus a loop's index, or a collapse's ``j + o * M``, ``j``'s span
    within ``[0, M)``, ``o`` such a sum too (a collapse of a collapse); the index of a one-step loop
    (of ``zero``) adds 0.

    >>> from compiler.looplets.program import Block, Extent, Literal
    >>> j = Index("j")
    >>> lo, hi = span_of([j, Literal(2)], [Loop(j, Extent(Const(0, "int64"), Var("A0_size")), Block())])
    >>> print(lo, hi)
    2 A0_size + 2
    """
    from .wrappers import static_ir
    if terms is None:
        return None
    by_idx = {lp.idx: lp for lp in loops}
    fixed = [static_ir(t) for t in terms]
    c = Const(0, "int64")
    for f in fixed:
        c = c if f is None else X.add(c, f)
    vary = [t for t, f in zip(terms, fixed) if f is None and t not in zero]
    if not vary:
        return c, X.add(c, 1)
    if len(vary) == 1 and isinstance(vary[0], Index) and vary[0] in by_idx:
        ext = by_idx[vary[0]].ext
        if ext is None or not _at_least_zero(ext.start):
            return None
        lo = X.add(c, ext.start) if isinstance(ext.start, Const) else c
        return lo, X.add(c, ext.stop)
    rows = [t for t in vary if isinstance(t, Call) and isinstance(t.op, Operator) and t.op.name == "mul"
            and len(t.args) == 2 and any(static_ir(a) is not None for a in t.args)]
    if len(vary) != 2 or len(rows) != 1:
        return None
    a, b = rows[0].args
    outer, scale = (a, static_ir(b)) if static_ir(b) is not None else (b, static_ir(a))
    inner = span_of(summands(next(t for t in vary if t is not rows[0])), loops, zero)
    row = span_of(summands(outer), loops, zero)
    if inner is None or row is None or not (_nonnegative(inner[0]) and _nonnegative(scale)
                                            and provably_below(inner[1], scale)):
        return None
    return X.add(c, _product(row[0], scale)), X.add(c, _product(row[1], scale))


def _product(a, b):
    """``a * b`` spelled as :func:`~compiler.looplets.wrappers.static_ir` spells a product of sizes."""
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value * b.value, "int64")
    if Const(0, "int64") in (a, b):
        return Const(0, "int64")
    if a == Const(1, "int64") or b == Const(1, "int64"):
        return b if a == Const(1, "int64") else a
    return BinOp("*", a, b)


def _after_at(p: _Append, here: _Append, d: int) -> bool:
    """:func:`_after` where the ``d``-th loops walk the coordinates (within a row their shared
    outer loop makes)."""
    if d >= len(p.own) or d >= len(here.own) or p.own[d] is None or here.own[d] is None:
        return False
    x, y = p.own[d], here.own[d]
    rows = collapse_row(x), collapse_row(y)
    if rows[0] is not None or rows[1] is not None:
        if rows[0] is None or rows[1] is None or rows[0][0] != rows[1][0]:
            return False
        outer, scale = rows[0][0]
        if not any(lp.idx == outer for lp in p.loops[:d]):   # (the row's loop must be one both share)
            return False
        x, y = rows[0][1], rows[1][1]
    ra, rb = _reach(x, p.loops[d], one_step_loops(p.loops)), _reach(y, here.loops[d], one_step_loops(here.loops))
    if ra is None or rb is None or not provably_below(ra[1], rb[0]):
        return False
    return rows[0] is None or (_nonnegative(ra[0]) and provably_below(rb[1], scale))


def _rows_after(p: _Append, here: _Append, d: int) -> bool:
    """Whether ``here``'s rows provably follow ``p``'s, their loops the ``d``-th: each writes
    ``i + c + r * M`` with ``r`` its row loop at a static offset (a vstack's part ``p + |j|``) and
    ``i + c`` within ``[0, M)``, and ``p``'s rows end where ``here``'s start."""
    a, b = collapse_row(p.own[d + 1], any_row=True), collapse_row(here.own[d + 1], any_row=True)
    if a is None or b is None or a[0][1] != b[0][1]:
        return False
    (ra, rest_a), (rb, rest_b) = a, b
    scale = ra[1]
    rows = _reach(_as_offset(ra[0]), p.loops[d]), _reach(_as_offset(rb[0]), here.loops[d])
    within = (_reach(rest_a, p.loops[d + 1], one_step_loops(p.loops)),
              _reach(rest_b, here.loops[d + 1], one_step_loops(here.loops)))
    return None not in rows and None not in within and provably_below(rows[0][1], rows[1][0]) and \
        all(_nonnegative(lo) and provably_below(hi, scale) for lo, hi in within)


def _as_offset(e):
    """``o + c`` (``c`` static terms) as the index ``o`` at offset ``c``, which :func:`_reach` reads."""
    from .wrappers import static_ir
    terms = summands(e)
    loops = [t for t in terms if static_ir(t) is None]
    if len(loops) != 1 or not isinstance(loops[0], Index):
        return None
    rest = [t for t in terms if t is not loops[0]]
    return Offset(loops[0], _sum(rest, e.op)) if rest else loops[0]


def collapse_row(x, any_row=False):
    """``((o, M), rest)`` for a collapse's write ``j + c + o * M`` (``o`` an index, or with ``any_row``
    any expression, ``M`` and ``c`` static): the row ``o`` it is in, of ``M`` coordinates, and where
    in it (``j + c``), or None.

    >>> from compiler.algebra import lookup
    >>> from compiler.looplets.program import Literal
    >>> (o, m), at = collapse_row(Offset(Index("j"), Call(lookup("*"), (Index("o"), Literal(4)))))
    >>> o.name, m, at
    ('o', Const(value=4, dtype='int64'), Index(name='j'))
    """
    from .wrappers import static_ir
    if not isinstance(x, Offset):
        return None
    terms = summands(x.delta)
    rows = [t for t in terms if static_ir(t) is None and isinstance(t, Call) and isinstance(t.op, Operator)
            and t.op.name == "mul" and len(t.args) == 2]
    if len(rows) != 1:
        return None
    a, b = rows[0].args
    outer, scale = (a, static_ir(b)) if static_ir(b) is not None else (b, static_ir(a))
    if not (isinstance(outer, Index) or any_row) or scale is None:
        return None
    rest = [t for t in terms if t is not rows[0]]
    return (outer, scale), (Offset(x.index, _sum(rest, x.delta.op)) if rest else x.index)


def _nonnegative(e) -> bool:
    """Whether an IR sum is provably >= 0: of sizes, constants >= 0 and their products."""
    return all(_nonnegative_term(t) for t in _terms(e))


def _nonnegative_term(t) -> bool:
    if isinstance(t, BinOp) and t.op == "*":
        return _nonnegative_term(t.left) and _nonnegative_term(t.right)
    return (isinstance(t, Var) and t.name.endswith("_size")) or (isinstance(t, Const) and t.value >= 0)


def _one_entry(info, k, a, b, m) -> bool:
    """Whether writes ``a`` and ``b`` (assignments in one iteration of the loops over their first ``m``
    storage modes) append one entry of level ``k`` of output ``info`` together: they write it at the same
    coordinates, and each sorted level down to ``k`` stores one mode per entry, so the looplets enter the
    entry once for both (:meth:`~compiler.looplets.lowerers.Lowerer.unfurl_accesses`), each statement
    writing its own part of the entry's fiber."""
    return a.lhs.idxs[:m] == b.lhs.idxs[:m] and \
        all(l.nmodes == 1 for l in info.levels[:k + 1] if not l.random_write)


def _record(s, loops, nest, info, k):
    """``(write, want, n0, m0)``: assignment ``s``'s write to level ``k`` of output ``info`` (an
    :class:`_Append`) under ``loops`` (the loop nodes ``nest``); the loops its coordinates walk down to
    the level, outermost first (``want``), how many walk the parent fibers (``n0``), the level's first mode."""
    lvl = info.levels[k]
    m0 = sum(l.nmodes for l in info.levels[:k])   # the level's first mode (a SparseCOO stores several)
    ext_of = {l.idx: l.ext for l in nest}
    walks = [_walk(x, ext_of, loops) for x in s.lhs.idxs[:m0 + lvl.nmodes]]
    want = [i for w in walks for i in w]
    n0 = sum(len(w) for w in walks[:m0])   # (the loops of the parent fibers' coordinates)
    # (per loop of the level's modes: a collapsed mode's outer loop walks no coordinate alone, its
    # inner ones the write's, j + o * M, or a strided part's t + (q + o * M) as q then t)
    own = tuple(c for w, x in zip(walks[m0:], s.lhs.idxs[m0:m0 + lvl.nmodes])
                for c in ([None] + [x] * (len(w) - 1) if len(w) > 1 else [x]))
    bounds = list(itertools.accumulate([len(w) for w in walks[:m0]], initial=0))
    here = _Append(nest[:n0], nest[n0:len(want)], tuple(isinstance(x, Index) for x in own),
                   s.line, tuple(s.lhs.idxs[:m0]) if n0 - len(_strides(nest[:n0], s.lhs.idxs[:m0])) == m0
                   else (), own, tuple(s.lhs.idxs[m0:m0 + lvl.nmodes]), s.lhs,
                   tuple((x, tuple(nest[a:b])) for x, a, b in zip(s.lhs.idxs[:m0], bounds[:-1], bounds[1:])))
    return here, want, n0, m0


def _rows_interleaved(p: _Append, here: _Append, m0: int):
    """The loop of the rows, if ``here`` (written after ``p``, each by its own loops inside loops they share) writes a
    row of its level that provably follows ``p``'s in one iteration of the shared loops and precedes
    ``p``'s of the next: at a shared one-step loop's mode, a collapse's ``t + c + o * M``, the same row
    ``o`` and ``here``'s ``c`` past ``p``'s, within ``[0, M)`` (``D[t + o * 2, j]`` then ``D[t + 1 + o *
    2, k]``, each over its own loop: an interleave of rows), everything of ``p``'s after that mode
    before ``here``'s; else None."""
    if p.write.idxs[:m0] != here.write.idxs[:m0]:
        return None
    shared = next((d for d, (a, b) in enumerate(zip(p.loops, here.loops)) if a is not b),
                  min(len(p.loops), len(here.loops)))
    one_step = one_step_loops(p.loops[:shared])
    for e in range(shared):
        if p.own[e] != here.own[e]:
            return p.loops[e] if p.loops[e].idx in one_step and _after_at(p, here, e) else None
    return None


def check_sparse_writes(prog, tensors: dict, first_line: int = 1, skip=()) -> dict:
    """Refuse writes that cannot append a sparse output's sorted level in order (a
    :class:`ProgramError` naming the output, the level and the lines); return
    ``{output: why}`` for the outputs whose order only a call can check (two loops append one
    fiber, the second through a window or an offset: a concatenation if its coordinates
    follow the first's). ``first_line`` is the program's first line in its file."""
    first: dict = {}
    later: dict = {}
    nests: dict = {}   # per output, the nests appending fibers of their own, in order
    appended: dict = {}   # per output, the loops appending one fiber one after another
    rows: dict = {}    # per nested output, the first write's row nest
    seen_stmt: dict = {}   # per output, the first write
    iterations: dict = {}   # per output, the writes in one iteration of the first write's loops
    written: dict = {}   # per output, each write so far, its loops and their nodes

    def line(n: int) -> int:
        return n + first_line - 1

    def lines(a: int, b: int) -> str:
        """`` (lines 4 and 6)`` of the user's program; nothing for one a shape operator wrote (no lines:
        the message shows its loops)."""
        return f" (lines {line(a)} and {line(b)})" if a and b else ""

    def of_line(n: int, which: str) -> str:
        """``of line 6``, or which loop it is where the program has no lines."""
        return f"of line {line(n)}" if n else f"of the {which}"

    def visit(s, loops, nest=()):
        if isinstance(s, Loop):
            if never_runs(s):   # (an empty part of a concatenation, A[0:0]: it writes nothing)
                return
            visit(s.body, loops + [s.idx], nest + (s,))
        elif isinstance(s, Block):
            for t in s.stmts:
                visit(t, loops, nest)
        elif isinstance(s, (Sieve, Define)):
            visit(s.body, loops, nest)
        elif isinstance(s, Assign) and isinstance(s.lhs.tns, TensorRef):
            check(s, loops, nest)

    def check(s, loops, nest):
        if s.lhs.tns.name in skip:
            return
        # (a one-step loop the write's coordinates do not read, a strided slice's t of an operand read
        # at t + j * 2 under a collapse, runs once per step of the loop around it: it orders no write)
        used = {n for x in s.lhs.idxs for n in walk(x) if isinstance(n, Index)}
        once = one_step_loops(nest) - used
        if once:
            kept = [(i, lp) for i, lp in zip(loops, nest) if i not in once]
            loops, nest = [i for i, _ in kept], tuple(lp for _, lp in kept)
        info = tensors[s.lhs.tns.name]
        earlier = list(written.get(s.lhs.tns.name, ()))
        written.setdefault(s.lhs.tns.name, []).append((s, loops, nest))

        def after_rows(w, nw, kk):
            # (w's row of level kk before this write's, and after it w's next; the loops inside the rows'
            # loop each write's own, at least one: one loop writing both rows would go back and forth
            # between them, and entries of one level in one iteration are an interleave's, checked below)
            here_kk, _, _, m0_kk = _record(s, loops, nest, info, kk)
            row = _rows_interleaved(_record(w, [lp.idx for lp in nw], nw, info, kk)[0], here_kk, m0_kk)
            inner = next((d for d, (a, b) in enumerate(zip(nw, nest)) if a is not b), min(len(nw), len(nest)))
            return row is not None and any(lp is row for lp in nw) and inner < min(len(nw), len(nest)) and \
                next(d for d, lp in enumerate(nw) if lp is row) + 1 == inner

        def interleaved_rows(k):
            # (an interleave of rows: each earlier write's rows of some level at or above k before this
            # one's, and this one's before the earlier's next, each row appended whole in turn)
            return bool(earlier) and any(all(after_rows(w, nw, kk) for w, _, nw in earlier) for kk in range(k + 1))
        # (the innermost sorted level: its writes' loops cover the levels above it too, so a
        # DCSR's rows appended twice are caught as its row fibers are)
        k = max((k for k, l in enumerate(info.levels) if not l.random_write), default=None)
        if k is None:
            return
        lvl, t = info.levels[k], info.name
        top = min(j for j, l in enumerate(info.levels) if not l.random_write)
        if top < len(info.levels) - 1:
            # (a sorted level over other levels, DCSR's or SparseList(Dense)'s rows: each write's nest
            # appends the row it is in, so two writes in one row would append it twice)
            mt = sum(l.nmodes for l in info.levels[:top + 1])
            other = rows.setdefault(t, (nest[:mt], s))
            if other[1] is not s and len(other[0]) == mt and all(a is b for a, b in zip(other[0], nest[:mt])) \
                    and not _one_entry(info, top, other[1], s, mt) and not interleaved_rows(top):
                row = ", ".join(i.name for i in loops[:mt])
                raise ProgramError(
                    f"output {t} is written by two statements{lines(other[1].line, s.line)} "
                    f"in one fiber of its {info.levels[top].name} level (storage level {top}), over {row}: each "
                    f"would append that entry, and the looplet strategy appends it from one statement. Write "
                    f"{t}'s entries there in one statement, or store {t} with Dense levels above its last "
                    f"sparse one (CSR) or in SparseHash levels", s.line)
        here, want, n0, m0 = _record(s, loops, nest, info, k)
        computed = [x for x in want if not isinstance(x, Index)]
        if computed:
            raise ProgramError(
                f"output {t} is written at a computed coordinate, {computed[0]}, of its {lvl.name} level "
                f"(storage level {k}), which is appended in index order: the loops cannot put such writes in "
                f"order. Store {t} with a Dense level there, or in SparseHash or SparseByteMap, which accept writes "
                f"in any order", s.line)
        try:
            at = loops.index(want[-1])
        except ValueError:
            at = -1
        if loops[:at + 1] != want:
            raise ProgramError(
                f"output {t} is written out of order: its {lvl.name} level (storage level {k}) "
                f"is appended in index order, so the loops around this write must be "
                f"{', '.join(i.name for i in want)} (outermost first), but they are "
                f"{', '.join(i.name for i in loops) or 'none'}. Reorder the loops, {_ELSEWHERE.format(t=t)}",
                s.line)
        if t in first and interleaved_rows(k):
            return   # (rows after each earlier write's, before their next: appended in order)
        seen = first.setdefault(t, here)
        seen_stmt.setdefault(t, s)
        if any(a is not b for a, b in zip(seen.parents, here.parents)) and _disjoint(nests.get(t, []), here):
            nests[t].append(here)
            return   # (this nest appends other fibers: a vstack's rows after the earlier operands')
        if seen is here:
            nests[t] = [here]
        if any(a is not b for a, b in zip(seen.parents, here.parents)):
            # (by identity, not by value: each loop node is one nest, whose fibers were closed when it ended)
            fibers = ", ".join(i.name for i in want[:n0])
            raise ProgramError(
                f"output {t} is written by two loop nests{lines(seen.line, s.line)}: each fiber "
                f"of its {lvl.name} level (storage level {k}) is appended in order once, inside one loop over "
                f"{fibers}, and the second nest would append to fibers the first closed. Write {t} in one loop "
                f"nest, {_ELSEWHERE.format(t=t)}", s.line)
        d = next((d for d, (a, b) in enumerate(zip(seen.loops, here.loops)) if a is not b), None)
        if d is None:
            if seen is here:
                return
            loops_of = ", ".join(i.name for i in want)
            # (the same fiber and coordinate: one entry of this level)
            m = m0 + lvl.nmodes
            if len(seen.loops) == len(here.loops) and seen.write.idxs[:m] == here.write.idxs[:m]:
                if k < len(info.levels) - 1 and _one_entry(info, k, seen_stmt[t], s, m0 + lvl.nmodes):
                    return   # (one entry of a level with levels below, appended once by both together)
                # (each write opens the entry: the second would append it again, or reset what the first
                # wrote there; the looplets append an entry from one statement)
                raise ProgramError(
                    f"output {t} is written by two statements{lines(seen.line, s.line)} at one "
                    f"entry of its {lvl.name} level (storage level {k}) in one iteration of the loops over "
                    f"{loops_of}: each would append that entry. Compute the entry into a "
                    f"Scalar and write it once, {_ELSEWHERE.format(t=t)}", s.line)
            # (two entries in one iteration: in order only if the second lies after the first, and before
            # the first's of the next iteration, as in an interleave's rows; else the fiber gets a
            # duplicate or goes back, which only SPARSESCOPE_VALIDATE_OUTPUTS would have noticed)
            together = iterations.setdefault(t, [seen])
            p = next((p for p in together if lvl.appends_runs or not _interleaved(p, here, m0)), None)
            if p is not None:
                why = (f"its {lvl.name} level (storage level {k}) appends runs, from one statement per iteration"
                       if lvl.appends_runs else
                       f"its {lvl.name} level (storage level {k}) is appended in increasing coordinate order, each "
                       f"coordinate once, and the second entry does not provably lie after the first's and before "
                       f"the first's of the next iteration (it would repeat or go back)")
                raise ProgramError(
                    f"output {t} is written by two statements{lines(p.line, s.line)} at "
                    f"{_written_at(p.write)} and {_written_at(here.write)} in one iteration of the loops over "
                    f"{loops_of}: {why}. Write {t} in one statement per iteration, {_ELSEWHERE.format(t=t)}", s.line)
            together.append(here)
            appended.setdefault(t, [seen]).append(here)   # (later loops over the fiber follow both)
            return
        first_loop, i = seen.loops[d], want[n0 + d].name
        walked = [[lp for lp in a.loops if lp.idx not in _strides(a.loops, [c for c in a.own if c is not None])]
                  for a in (seen, here)]
        earlier = appended.setdefault(t, [seen])
        same = len(walked[0]) == len(walked[1])
        # (provably after every earlier loop's coordinates: a concat's later part, its nest however deep)
        follows = all(_follows(p, here) or same and _after(p, here) for p in earlier)
        if not follows and not same:
            raise ProgramError(
                f"output {t} is written by two loops{lines(seen.line, s.line)} that walk one fiber "
                f"of its {lvl.name} level (storage level {k}) by different loop nests; write it in one loop nest, "
                f"{_ELSEWHERE.format(t=t)}", s.line)
        if lvl.full:   # (its runs cover each fiber up to its size: one loop writes it)
            raise ProgramError(
                f"output {t} is written by two loops over {i} (an earlier loop writes it too): each fiber of its "
                f"{lvl.name} level (storage level {k}) is written by one loop, which covers it up to its size. "
                f"Write it in one loop, or store {t} in SparseRunList, whose runs need not cover the fiber", s.line)
        where = (f"output {t} is written by two loops over {i}{lines(seen.line, s.line)} into "
                 f"one fiber of its {lvl.name} level (storage level {k}), whose coordinates are appended in "
                 f"increasing order")
        if seen.plain[d] and here.plain[d] and first_loop.ext is not None \
                and first_loop.ext.start == here.loops[d].ext.start:
            raise ProgramError(
                f"{where}: both loops start at {i} = {first_loop.ext.start}, so the second would go back over the "
                f"first's coordinates. Write {t} in one loop over {i}, {_ELSEWHERE.format(t=t)}",
                s.line)
        back = next((p for p in earlier if _follows(here, p) or same and _after(here, p)), None)
        if back is not None:
            raise ProgramError(
                f"{where}: the loop {of_line(s.line, 'second')} writes only coordinates before those "
                f"{of_line(back.line, 'first')}, so it would go back over them. Write the loops in the order of their "
                f"coordinates, {_ELSEWHERE.format(t=t)}", s.line)
        clash = next((p for p in earlier if _windows_may_meet(p, here)), None)
        if clash is not None and s.op is None:
            # (an entry appended in order is never taken back: a fill the second loop writes over the
            # first's entry would be dropped, keeping the first's value, and no check of the call's
            # output order sees it)
            raise ProgramError(
                f"{where}: the window {of_line(s.line, 'second')}, {_window_text(here)}, may overlap that "
                f"{of_line(clash.line, 'first')}, {_window_text(clash)}, and an entry the first appends cannot be replaced (a "
                f"fill the second writes over it would be dropped, keeping the first's value). Write {t} through windows that do not overlap, "
                f"{_ELSEWHERE.format(t=t)}", s.line)
        earlier.append(here)
        if follows:
            return
        later.setdefault(t, f"{where}: the second loop must write only coordinates after the first's")

    visit(prog, [])
    return later
