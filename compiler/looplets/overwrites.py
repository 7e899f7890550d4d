"""Which writes of a loop program may overwrite what an earlier write stored at their coordinate.

A sparse output starts at its fill, so the ``fill-write`` rule (:mod:`.fill_write`) drops a write
of the fill into it: nothing is stored there yet. That holds only for a write no earlier write can
have reached. A write may overwrite, and keeps its fill write (which replaces the stored value, or
leaves the entry out), when

- it repeats its own coordinates: a loop around it inside the output's declaration is not pinned
  by its coordinates (``for i: for j: y[i] = A[i, j]`` writes ``y[i]`` once per ``j``; a computed
  coordinate, ``y[I[k]]``, may repeat), or
- another write of the output in the same declaration can run before it (earlier in the program,
  or later under a loop they share) at a coordinate it may write too: at no mode are their
  coordinates provably apart (``C[i, j]`` over ``j < n`` and ``C[i, k + n]`` are; ``C[i, j]`` twice
  is not).

:func:`mark_overwrites` decides this from the program's structure and marks such an assignment
(``Assign.overwrites``), for outputs whose levels do not all hold a slot per coordinate (those
keep every write anyway).

>>> from compiler.looplets import loop_program
>>> @loop_program
... def last(y, A):
...     for i in _:
...         for j in _:
...             y[i] = A[i, j]
>>> from compiler.format import parse_format
>>> from compiler.looplets.fibers import TensorInfo
>>> infos = {"y": TensorInfo("y", parse_format("sparse"), "output"), "A": TensorInfo("A", parse_format("csr"), "input")}
>>> marked = mark_overwrites(last.body, infos)
>>> [(s.line, reason) for s, reason in overwriting(marked)]
[(5, 'its loop over j does not pick its coordinate')]
"""

from __future__ import annotations

from dataclasses import replace

from ..algebra import Operator
from ..imperative.ir import Const
from .appends import collapse_row, one_step_loops, provably_below, span_of, summands
from .fill_write import drops_fill_writes
from .level_writers import fill_dropping
from .modifiers import Offset
from .program import (Assign, Block, Call, Declare, Define, Index, IndexModifier, Literal, Loop, Sieve, TensorRef, Value,
                      postmap, walk)


def _terms(x):
    """The summands of a write's coordinate ``x`` (``j + k * M + c``: ``j``, ``k * M``, ``c``; a
    window's or a permissive index's those of its index), or None for a computed one."""
    if isinstance(x, Offset):
        inner = _terms(x.index)
        return None if inner is None else inner + summands(x.delta)
    if isinstance(x, IndexModifier):
        return _terms(x.index)
    terms = summands(x)
    return terms if all(_affine(t) for t in terms) else None


def _affine(e) -> bool:
    """Whether ``e`` is made of indices, constants and sizes by sums and products (not a read)."""
    if isinstance(e, Call):
        return isinstance(e.op, Operator) and e.op.name in ("add", "sub", "mul", "neg") and all(map(_affine, e.args))
    return isinstance(e, (Index, Literal, Value))


def _indices(e) -> set:
    return {n for n in walk(e) if isinstance(n, Index)}


def _pinned(coords, loops) -> set:
    """The indices of ``loops`` whose values coordinates ``coords`` give (a one-step loop's is given):
    ``j + d`` gives ``j`` once ``d``'s indices are; a collapse ``j + c + o * M`` with ``j + c`` within
    ``[0, M)`` gives ``o`` and ``j``."""
    by_idx = {lp.idx: lp for lp in loops}
    known = set(one_step_loops(loops))

    def given(t, also=frozenset()):   # (an index of no loop of ``loops`` is fixed around them)
        return _indices(t) & set(by_idx) <= known | also
    while True:
        new = set()
        for x in coords:
            terms = _terms(x)
            free = [t for t in terms or () if not given(t)]
            if len(free) == 1 and isinstance(free[0], Index):
                new.add(free[0])
                continue
            row = collapse_row(_bare(x))
            if row is None or not isinstance(row[0][0], Index) or row[0][0] not in by_idx:
                continue
            (outer, scale), within = row
            inner = [t for t in _terms(within) or () if not given(t)]
            if len(inner) != 1 or inner[0] not in by_idx:
                continue
            at = span_of(_terms(within), [by_idx[inner[0]]], known)
            if at is not None and provably_below(at[1], scale) and provably_below(Const(0, "int64"), at[0]):
                new |= {outer, inner[0]}
        if new <= known:
            return known
        known |= new


def _bare(x):
    """``x`` without the windows and permissive marks around its offsets."""
    while isinstance(x, IndexModifier) and not isinstance(x, Offset):
        x = x.index
    return x


class _Write:
    """An assignment to an output, the loops around it inside the output's declaration, which
    declaration (its epoch) and place in the program it is in, and whether the output's last level
    is appended in order (``sorted_last``)."""

    def __init__(self, stmt, loops, epoch, order, sorted_last):
        self.stmt, self.loops, self.epoch, self.order = stmt, loops, epoch, order
        self.sorted_last = sorted_last


def _repeats(w: _Write):
    """Why ``w`` may write one coordinate twice, or None: a loop around it its coordinates do not pick."""
    if any(_terms(x) is None for x in w.stmt.lhs.idxs):
        return "its coordinate is computed, so two iterations may write the same one"
    if w.sorted_last:
        # (appends.check_sparse_writes proved the loops of its coordinates walk them in order, once
        # each: only a loop inside them that no coordinate reads repeats one)
        pinned = set(one_step_loops(w.loops)) | {i for x in w.stmt.lhs.idxs for i in _indices(x)}
    else:
        pinned = _pinned(w.stmt.lhs.idxs, w.loops)
    free = [lp for lp in w.loops if lp.idx not in pinned]
    return f"its loop over {free[0].idx.name} does not pick its coordinate" if free else None


def _apart(a: _Write, b: _Write) -> bool:
    """Whether write ``a`` provably never writes a coordinate before ``b`` writes it: the loops they
    share are pinned by coordinates they write alike (another iteration of those loops writes
    elsewhere), and ``a`` comes after ``b`` in one iteration of them or, at some mode, those loops'
    terms cancelled, their coordinates' spans do not meet."""
    shared = [lp for lp, lq in zip(a.loops, b.loops) if lp is lq]
    alike = [x for x, y in zip(a.stmt.lhs.idxs, b.stmt.lhs.idxs) if x == y]
    if shared and not {lp.idx for lp in shared} <= _pinned(alike, shared):
        return False
    if a.order > b.order:
        return True
    own = {lp.idx for lp in a.loops + b.loops if lp not in shared}   # (the others are one value for both)
    for x, y in zip(a.stmt.lhs.idxs, b.stmt.lhs.idxs):
        tx, ty = _terms(x), _terms(y)
        if tx is None or ty is None:
            continue
        common = [t for t in tx if t in ty and _indices(t) and not _indices(t) & own]
        tx = [t for t in tx if t not in common]
        ty = [t for t in ty if t not in common]
        sx = span_of(tx, [lp for lp in a.loops if lp not in shared], one_step_loops(a.loops)) if tx else None
        sy = span_of(ty, [lp for lp in b.loops if lp not in shared], one_step_loops(b.loops)) if ty else None
        if sx is not None and sy is not None and (provably_below(sx[1], sy[0]) or provably_below(sy[1], sx[0])):
            return True
    return False


def _collect(prog, tensors) -> dict:
    """``{output: [_Write, ...]}`` in program order, for the outputs whose fill writes are dropped."""
    writes: dict = {}
    scope: dict = {}   # output -> (loops around its declaration, epoch)

    def visit(s, loops):
        if isinstance(s, Loop):
            visit(s.body, loops + (s,))
        elif isinstance(s, Block):
            for t in s.stmts:
                visit(t, loops)
        elif isinstance(s, (Sieve, Define)):
            visit(s.body, loops)
        elif isinstance(s, Declare):
            scope[s.tns.name] = (len(loops), scope.get(s.tns.name, (0, 0))[1] + 1)
        elif isinstance(s, Assign) and isinstance(s.lhs.tns, TensorRef):
            t = s.lhs.tns.name
            if t in tensors and drops_fill_writes(tensors[t]):
                depth, epoch = scope.get(t, (0, 0))
                out = writes.setdefault(t, [])
                out.append(_Write(s, loops[depth:], epoch, len(out), not tensors[t].levels[-1].random_write))
    visit(prog, ())
    return writes


def _why(w: _Write, others: list, line):
    """Why write ``w`` may overwrite an earlier write's coordinate, or None (``line``: a line of the
    program as its file numbers it)."""
    if w.stmt.op is not None:
        return None
    why = _repeats(w)
    if why is not None or w.sorted_last:
        # (two statements never write one coordinate of a last level appended in order: check_sparse_writes
        # refuses those that may, as it proves the others in order)
        return why
    for o in others:
        if o is w or o.epoch != w.epoch:
            continue
        before = o.order < w.order or any(lp is lq for lp, lq in zip(o.loops, w.loops))
        if before and not _apart(o, w):
            return f"the write of line {line(o.stmt.line)} may reach its coordinate first"
    return None


def _entry_loop(w: _Write):
    """The loop at which ``w``'s output locates the entry of ``w``'s coordinates, so that the writes
    inside one iteration of it share the entry: the innermost loop its coordinates read, when its last
    coordinate (its last level's) reads it; None when the entry is located at each write (a constant
    last coordinate, loops out of the output's storage order)."""
    read = {i for x in w.stmt.lhs.idxs for i in _indices(x)}
    inner = next((lp for lp in reversed(w.loops) if lp.idx in read), None)
    return inner if inner is not None and inner.idx in _indices(w.stmt.lhs.idxs[-1]) else None


def _updated_again(w: _Write):
    """Why update ``w`` may enter an entry that an earlier iteration of it stored, or None: a loop
    around where the entry is located (:func:`_entry_loop`) that its coordinates do not pick."""
    if any(_terms(x) is None for x in w.stmt.lhs.idxs):
        return "its coordinate is computed, so two iterations may update one entry"
    at = _entry_loop(w)
    around = w.loops[:w.loops.index(at) + 1] if at is not None else w.loops
    free = [lp for lp in around if lp.idx not in _pinned(w.stmt.lhs.idxs, around)]
    return f"its loop over {free[0].idx.name} updates an entry again" if free else None


def _moves_away(w: _Write, others: list) -> bool:
    """Whether ``w``'s entry, once not the fill, never holds the fill again: every write of its output
    in its declaration updates by ``w``'s operator, idempotent, commutative and associative (``min``,
    ``max``, ``or``): from the fill each update moves the value along the operator's order, away
    from the fill (``max(f, x) > f`` stays above ``f``)."""
    op = w.stmt.op
    return op.idempotent and op.commutative and op.associative and \
        all(o.stmt.op == op for o in others if o.epoch == w.epoch)


def _why_updated(w: _Write, others: list, line):
    """Why update ``w`` (``y[...] <<op>>= v``) may find its entry stored by an earlier entry into it,
    so that what it leaves there may be the fill (``+=`` cancelling), or None: it updates an entry
    again (:func:`_updated_again`), or another write of the output, not one sharing its entry, may
    store the entry first."""
    if w.stmt.op is None or _moves_away(w, others):
        return None
    why = _updated_again(w)
    if why is not None:
        return why
    at = _entry_loop(w)
    for o in others:
        shares = at is not None and _entry_loop(o) is at and o.stmt.lhs.idxs == w.stmt.lhs.idxs
        if o is w or o.epoch != w.epoch or shares:
            continue
        before = o.order < w.order or any(lp is lq for lp, lq in zip(o.loops, w.loops))
        if before and not _apart(o, w):
            return f"the write of line {line(o.stmt.line)} may store its entry first"
    return None


def updating_stored(prog, tensors: dict, first_line: int = 1) -> list:
    """``[(update, why), ...]``: the updates of ``prog`` (``y[...] <<op>>= v``, ``tensors`` as for
    :func:`mark_overwrites`) that may find their entry already stored, so that the value they leave
    there may be the fill (``y[i] += a[i]`` then ``y[i] += b[i]`` with ``b = -a``): their output's
    freeze leaves out such an entry (:mod:`compiler.looplets.stored_fills`). The updates inside one
    iteration of the loop where the entry is located share it, and so do not count; an update by
    ``min``, ``max`` or ``or`` alone never brings a value back to the fill.

    >>> from compiler.looplets import loop_program
    >>> @loop_program
    ... def outer(C, A, B):
    ...     for k in _:
    ...         for i in _:
    ...             for j in _:
    ...                 C[i, j] += A[i, k] * B[k, j]
    >>> from compiler.format import Format, parse_format
    >>> from compiler.levels import Dense, Element, SparseHash
    >>> from compiler.looplets.fibers import TensorInfo
    >>> infos = {"C": TensorInfo("C", Format(Dense(SparseHash(Element(0.0)))), "output"),
    ...          "A": TensorInfo("A", parse_format("csc"), "input"), "B": TensorInfo("B", parse_format("csr"), "input")}
    >>> [(s.line, why) for s, why in updating_stored(outer.body, infos)]
    [(6, 'its loop over k updates an entry again')]
    """
    def line(n):
        return n + first_line - 1
    return [(w.stmt, why) for ws in _collect(prog, tensors).values() for w in ws
            if (why := _why_updated(w, ws, line)) is not None]


def mark_overwrites(prog, tensors: dict, first_line: int = 1):
    """``prog`` with each assignment that may overwrite what an earlier write stored (see the
    module docstring) marked ``overwrites``, why; ``tensors`` maps names to
    :class:`~compiler.looplets.fibers.TensorInfo`; ``first_line``: the program's first line in its
    file. See the module docstring's example."""
    def line(n):
        return n + first_line - 1
    reasons = {id(w.stmt): why for ws in _collect(prog, tensors).values() for w in ws
               if (why := _why(w, ws, line)) is not None}
    if not reasons:
        return prog
    return postmap(prog, lambda n: replace(n, overwrites=reasons[id(n)]) if isinstance(n, Assign) and id(n) in reasons
                   else None)


def overwriting(prog) -> list:
    """``[(assignment, why), ...]``: the assignments of ``prog`` marked by :func:`mark_overwrites`.

    >>> overwriting(Block(()))
    []
    """
    return [(n, n.overwrites) for n in walk(prog) if isinstance(n, Assign) and n.overwrites]


def fill_drops(prog, tensors: dict, trace, first_line: int = 1) -> dict:
    """``{output: levels}``: the outputs of ``prog`` (marked by :func:`mark_overwrites`) a write may
    leave the fill in a stored entry of (overwriting it, or an update finding it stored,
    :func:`updating_stored`), with the levels whose freeze leaves such an entry out
    (:func:`~compiler.looplets.level_writers.fill_dropping`); a step ``stored-fills`` of ``trace``
    says which and why, and which sparse level above them keeps the entry.

    >>> from compiler.trace import Trace
    >>> fill_drops(Block(()), {}, Trace())
    {}
    """
    out, notes = {}, []
    updates = updating_stored(prog, tensors, first_line)
    for t in dict.fromkeys(s.lhs.tns.name for s, _ in overwriting(prog) + updates):
        levels, keeper = fill_dropping(tensors[t])
        if levels:
            out[t] = levels
            names = ", ".join(f"{k} ({tensors[t].levels[k].name})" for k in levels)
            notes.append(f"{t}: its freeze leaves out the entries a write of the fill emptied, at level(s) {names}")
            notes += [f"{t}: line {s.line + first_line - 1} may leave the fill in a stored entry: {why}"
                      for s, why in updates if s.lhs.tns.name == t]
        if keeper is not None:
            notes.append(f"{t}: level {keeper} ({tensors[t].levels[keeper].name}) cannot leave out an entry, so it "
                         f"keeps one whose fiber the fills emptied")
    if notes:
        trace.record("stored-fills", after="\n".join(notes),
                     note="a write of the fill over a stored entry leaves no explicit fill where a level can drop it")
    return out
