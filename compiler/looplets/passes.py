"""Normal-form passes: wrapperize, dimensionalize, concordize, life-cycle automation.

* :func:`wrapperize` turns index expressions into index modifiers and masks:
  ``A[i + c]`` and ``A[i + j]`` (``j`` bound outside ``i``) read through
  :class:`Offset` (a ``Shift`` when unfurled), ``A[~i]`` through :class:`Permit`
  (out-of-bounds reads are ``missing``), and a comparison of two loop indices in
  an ``if`` (``i <= j``) becomes an access of a triangular/diagonal :class:`Mask`,
  indexed outer index first. Anything else that mixes a loop index into an index
  expression is an error (scatters through other tensors, ``A[I[i]]``, are kept).
* :func:`dimensionalize` gives every ``for i in _`` loop its extent from the
  tensors it indexes (conflicts are errors naming both sources).
* :func:`concordize` puts accesses in storage order; an index bound at a loop
  that does not match the storage order is read by a loop of length one at
  lowering time (Finch's ``for s = v:v``); writing a SparseList that way is an error.
* :func:`lifecycle` inserts declarations (outputs not declared start at their
  fill), ``@freeze`` and ``@thaw``, and rejects reading and writing one tensor in
  one statement of its scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..algebra import Operator, lookup
from ..imperative.ir import Const, Var
from . import extents as X
from .errors import ProgramError
from .looplets import Lookup, Phase, Run, Sequence
from .program import (Access, Assign, Block, Call, Declare, Define, Expr, Extent, Freeze, Index,
                      Literal, Loop, Sieve, TensorRef, Thaw, Value, Variable, block, postmap, walk)


@dataclass(frozen=True)
class Offset(Expr):
    """Index modifier: the access reads coordinate ``index + delta``."""

    index: Any
    delta: Any

    def __str__(self):
        return f"{self.index} + {self.delta}"


@dataclass(frozen=True)
class Permit(Expr):
    """Index modifier ``~index``: reads outside the tensor give ``missing``."""

    index: Any

    def __str__(self):
        return f"~{self.index}"


@dataclass(frozen=True)
class Protocol(Expr):
    """Index modifier ``gallop(i)`` / ``walk(i)``: how the access's level is traversed on ``i``.

    ``walk`` (the default) steps through stored entries, following the other operands;
    ``gallop`` unfurls a :class:`~compiler.looplets.looplets.Jumper` that leads: two
    galloping lists intersect by mutual lookahead (each skips to the other's coordinate).
    """

    index: Any
    name: str

    def __str__(self):
        return f"{self.name}({self.index})"


PROTOCOLS = ("walk", "gallop", "follow")


_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


@dataclass(frozen=True, eq=False)
class Mask:
    """A Boolean mask tensor ``M[o, n] = n <op> o`` (``o`` the outer index, ``n`` the inner).

    Column ``o`` unfurls to phases of runs, e.g. ``n <= o`` is
    ``Sequence(Phase(stop=o + 1, Run(true)), Phase(Run(false)))``.
    """

    op: str
    depth: int = 0
    at: Any = None
    is_leaf = False

    def label(self):
        sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[self.op]
        return f"Mask(n {sym} o)" if self.depth == 0 else f"MaskCol(n {sym} {self.at})"

    def __str__(self):
        return self.label()

    def unfurl(self, ctx, mode):
        if self.depth == 0:
            return Lookup(lambda o: Mask(self.op, 1, o), f"o -> MaskCol({self.op} o)")
        o = self.at
        T, F = Run(Literal(True)), Run(Literal(False))
        o1 = X.add(o, 1)
        phases = {"lt": [(o, T), (None, F)], "le": [(o1, T), (None, F)],
                  "gt": [(o1, F), (None, T)], "ge": [(o, F), (None, T)],
                  "eq": [(o, F), (o1, T), (None, F)], "ne": [(o, T), (o1, F), (None, T)]}[self.op]
        return Sequence(tuple(Phase(s, b) for s, b in phases))


# --------------------------------------------------------------------------- wrapperize


def _indices_in(e) -> list:
    return [n for n in walk(e) if isinstance(n, Index)]


def _outside_access(e) -> list:
    """Indices of ``e`` that are not inside a nested access (those are scatters, allowed)."""
    if isinstance(e, Index):
        return [e]
    if isinstance(e, Access):
        return []
    if isinstance(e, Call):
        return [i for a in e.args for i in _outside_access(a)]
    return []


def wrapperize(prog, tensors: dict):
    """Rewrite index expressions into :class:`Offset`/:class:`Permit` and comparisons into masks."""

    def visit(s, depth: dict):
        if isinstance(s, Loop):
            d = dict(depth)
            d[s.idx] = len(depth)
            return replace(s, body=visit(s.body, d))
        if isinstance(s, Block):
            return replace(s, stmts=tuple(visit(t, depth) for t in s.stmts))
        if isinstance(s, Define):
            return replace(s, val=expr(s.val, depth, s.line), body=visit(s.body, depth))
        if isinstance(s, Sieve):
            return replace(s, cond=cond(s.cond, depth, s.line), body=visit(s.body, depth))
        if isinstance(s, Assign):
            return replace(s, lhs=expr(s.lhs, depth, s.line), rhs=expr(s.rhs, depth, s.line))
        if isinstance(s, Declare):
            return s
        return s

    def cond(c, depth, line):
        def fn(n):
            if isinstance(n, Call) and isinstance(n.op, Operator) and n.op.name in _FLIP and \
                    all(isinstance(a, Index) and a in depth for a in n.args) and n.args[0] != n.args[1]:
                a, b = n.args
                if depth[a] > depth[b]:  # a is the inner index: n <op> o
                    return Access(Mask(n.op.name), (b, a), line=line)
                return Access(Mask(_FLIP[n.op.name]), (a, b), line=line)
            return None
        return expr(postmap(c, fn), depth, line)

    def expr(e, depth, line):
        def fn(n):
            if isinstance(n, Access) and isinstance(n.tns, TensorRef):
                return replace(n, idxs=tuple(index(x, depth, n, line) for x in n.idxs))
            return None
        return postmap(e, fn)

    def index(x, depth, acc, line):
        if isinstance(x, (Index, Offset, Permit, Protocol)):
            return x
        if isinstance(x, Call) and x.op == "permit":
            return Permit(index(x.args[0], depth, acc, line))
        if isinstance(x, Call) and x.op in PROTOCOLS:
            return Protocol(index(x.args[0], depth, acc, line), x.op)
        if isinstance(x, Call) and isinstance(x.op, Operator) and x.op.name in ("add", "sub"):
            a, b = x.args
            ia, ib = _outside_access(a), _outside_access(b)
            deep = max(ia + ib, key=lambda i: depth.get(i, -1), default=None)
            if deep is not None:
                if deep in ia and deep not in ib:
                    base = index(a, depth, acc, line)
                    delta = b if x.op.name == "add" else Call(lookup("neg"), (b,))
                    if isinstance(base, (Index, Offset, Permit, Protocol)):
                        return Offset(base, _fold(delta))
                elif deep in ib and deep not in ia and x.op.name == "add":
                    base = index(b, depth, acc, line)
                    if isinstance(base, (Index, Offset, Permit, Protocol)):
                        return Offset(base, _fold(a))
        if not _outside_access(x):
            return x  # bound by outer loops, or a scatter through another tensor
        raise ProgramError(f"no wrapper covers the index expression {x} of {acc.tns.name}; the looplet "
                           f"strategy accepts i, i + c, i - c, i + j (j bound outside i), ~i and indices "
                           f"read from other tensors", line)

    return visit(prog, {})


def _fold(e):
    from .simplify import simplify
    return simplify(e)


# --------------------------------------------------------------------------- concordize


def concordize(prog, tensors: dict):
    """Storage-order indices: ``A[i, j]`` of a CSC ``A`` becomes ``A[j, i]`` (storage order).

    Checks the number of indices of every access against the tensor's order.
    """
    def fn(n):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef):
            info = tensors.get(n.tns.name)
            if info is None:
                raise ProgramError(f"unknown tensor {n.tns.name}", n.line)
            if len(n.idxs) != info.ndim:
                raise ProgramError(f"{n.tns.name} has {info.ndim} mode(s) but is indexed with "
                                   f"{len(n.idxs)} index(es)", n.line)
            order = info.format.mode_order
            return replace(n, idxs=tuple(n.idxs[m] for m in order))
        return None
    return postmap(prog, fn)


def _base(x):
    while isinstance(x, (Offset, Permit, Protocol)):
        x = x.index
    return x


def _offset_const(x):
    d = 0
    permit = False
    while isinstance(x, (Offset, Permit, Protocol)):
        if isinstance(x, Permit):
            permit = True
        elif isinstance(x, Protocol):
            pass
        elif isinstance(x.delta, Literal) and isinstance(x.delta.value, int):
            d += x.delta.value
        else:
            return None, permit
        x = x.index
    return d, permit


# --------------------------------------------------------------------------- dimensionalize


@dataclass
class DimSource:
    """Where an extent came from: a tensor's storage mode (with an offset) or a range."""

    what: str
    extent: Extent
    value: Any = None  # (start, stop) as ints when known
    line: int = 0
    tensor: str | None = None
    mode: int | None = None
    delta: int = 0


def dimensionalize(prog, tensors: dict, shapes: dict):
    """Give each ``for i in _`` its extent; ``shapes`` holds concrete storage shapes where known.

    Returns ``(program, sources)`` with ``sources[index name]`` the sources that agreed.
    """
    sources: dict[Index, list[DimSource]] = {}

    def add(i, src):
        have = sources.setdefault(i, [])
        for h in have:
            if h.value is not None and src.value is not None and \
                    (h.value[1] - h.value[0] != src.value[1] - src.value[0] or h.value != src.value):
                raise ProgramError(
                    f"conflicting extents for index {i.name}: {h.what} gives {h.value[0]}:{h.value[1]} "
                    f"but {src.what} gives {src.value[0]}:{src.value[1]}", src.line or h.line)
        have.append(src)

    def collect(s):
        if isinstance(s, Loop) and s.ext is not None:
            v = None
            if isinstance(s.ext.start, Const) and isinstance(s.ext.stop, Const):
                v = (s.ext.start.value, s.ext.stop.value)
            add(s.idx, DimSource(f"the range of loop {s.idx.name}", s.ext, v, s.line))
        for n in walk(s):
            if isinstance(n, Access) and isinstance(n.tns, TensorRef):
                info = tensors[n.tns.name]
                shape = shapes.get(n.tns.name)
                if shape is None and info.role != "input":
                    continue  # an output without a shape takes its sizes from the loops
                for m, x in enumerate(n.idxs):
                    base = _base(x)
                    if not isinstance(base, Index):
                        continue
                    d, permit = _offset_const(x)
                    if permit or d is None:
                        continue
                    ext = Extent(X.neg(Const(d, "int64")) if d else Const(0, "int64"),
                                 X.sub(info.size(m), d))
                    v = None if shape is None else (-d, shape[m] - d)
                    add(base, DimSource(f"{n.tns.name} (storage mode {m}, size {'?' if shape is None else shape[m]})",
                                        ext, v, n.line, n.tns.name, m, d))
        if isinstance(s, (Loop,)):
            collect(s.body)
        elif isinstance(s, Block):
            for t in s.stmts:
                collect(t)
        elif isinstance(s, (Sieve, Define)):
            collect(s.body)

    collect(prog)

    def choose(i, line):
        srcs = sources.get(i, [])
        # prefer inputs (their sizes are known when the kernel runs), then ranges, then outputs
        def rank(src):
            if src.tensor is None:
                return 1
            return 0 if tensors[src.tensor].role == "input" else 2
        srcs = sorted(srcs, key=rank)
        if not srcs:
            raise ProgramError(f"cannot infer the extent of loop index {i.name}: no tensor is indexed by "
                               f"it alone; write `for {i.name} in range(n)`", line)
        return srcs[0].extent

    def fill(s):
        if isinstance(s, Loop):
            ext = s.ext if s.ext is not None else choose(s.idx, s.line)
            return replace(s, ext=ext, body=fill(s.body))
        if isinstance(s, Block):
            return replace(s, stmts=tuple(fill(t) for t in s.stmts))
        if isinstance(s, (Sieve, Define)):
            return replace(s, body=fill(s.body))
        return s

    return fill(prog), sources


# --------------------------------------------------------------------------- life cycle


def _tensors_used(s):
    reads, writes, lines = set(), set(), {}
    for n in walk(s):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef):
            (writes if n.mode == "update" else reads).add(n.tns.name)
            lines.setdefault(n.tns.name, n.line)
    return reads, writes, lines


def lifecycle(prog, tensors: dict):
    """Insert declare/freeze/thaw; reject reading and writing one tensor in one statement."""

    def scope(stmts, mine: dict, outer: dict | None = None) -> list:
        out = []
        outer = outer or {}
        for s in stmts:
            if isinstance(s, Declare):
                if s.tns.name not in tensors:
                    raise ProgramError(f"unknown tensor {s.tns.name}", s.line)
                if tensors[s.tns.name].role == "input":
                    raise ProgramError(f"{s.tns.name} is an input; it cannot be declared (reset)", s.line)
                if mine.get(s.tns.name) == "update":
                    out.append(Freeze(s.tns))
                mine[s.tns.name] = "update"
                out.append(s)
                continue
            reads, writes, lines = _tensors_used(s)
            # tensors an enclosing scope declared (and not this block) keep that scope's state
            # and tensors declared inside this statement belong to the block that declares them
            inner = {n.tns.name for n in walk(s) if isinstance(n, Declare)} - set(mine)
            reads = {n for n in reads if (n in mine or n not in outer) and n not in inner}
            writes = {n for n in writes if (n in mine or n not in outer) and n not in inner}
            both = reads & writes
            if both:
                name = sorted(both)[0]
                raise ProgramError(f"{name} is read and written in the same statement; looplets assume a "
                                   f"tensor is either read or updated in one scope. Write into a temporary "
                                   f"(or use `{name}[...] op= value` to update it)", _line_of(s, name))
            for name in writes:
                info = tensors[name]
                if info.role == "input":
                    raise ProgramError(f"{name} is an input tensor and cannot be written; pass a format "
                                       f"for it to make it an output", lines.get(name) or s.line)
                if name not in mine:
                    # an undeclared output starts at its fill value
                    mine[name] = "update"
                    out.append(Declare(TensorRef(name), Literal(info.fill), implicit=True))
                elif mine[name] == "read":
                    out.append(Thaw(TensorRef(name)))
                    mine[name] = "update"
            for name in reads:
                if mine.get(name) == "update":
                    out.append(Freeze(TensorRef(name)))
                    mine[name] = "read"
            out.append(nested(s, {**outer, **mine}))
        return out

    def nested(s, outer):
        # blocks inside loops are scopes of their own for tensors declared there
        if isinstance(s, Loop):
            return replace(s, body=nested(s.body, outer))
        if isinstance(s, (Sieve, Define)):
            return replace(s, body=nested(s.body, outer))
        if isinstance(s, Block):
            if any(isinstance(t, Declare) for t in s.stmts):
                mine: dict = {}
                inner = scope(s.stmts, mine, outer)
                inner += [Freeze(TensorRef(n)) for n, m in mine.items() if m == "update"]
                return Block(tuple(inner))
            return replace(s, stmts=tuple(nested(t, outer) for t in s.stmts))
        return s

    stmts = prog.stmts if isinstance(prog, Block) else (prog,)
    mine: dict = {}
    out = scope(stmts, mine)
    out += [Freeze(TensorRef(n)) for n, m in mine.items() if m == "update"]
    return Block(tuple(out))


def _line_of(s, name):
    for n in walk(s):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name == name and n.line \
                and n.mode == "update":
            return n.line
    for n in walk(s):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name == name and n.line:
            return n.line
    return getattr(s, "line", 0)


#: levels an output may write in any order (located writes)
RANDOM_WRITE = ("Dense", "SparseByteMap", "SparseHash")


def check_sparse_writes(prog, tensors: dict):
    """A sparse (non-Dense) output level is appended in index order, so the loops around
    a write must be exactly the loops of its indices, in storage order."""
    def visit(s, loops):
        if isinstance(s, Loop):
            visit(s.body, loops + [s.idx])
        elif isinstance(s, Block):
            for t in s.stmts:
                visit(t, loops)
        elif isinstance(s, (Sieve, Define)):
            visit(s.body, loops)
        elif isinstance(s, Assign) and isinstance(s.lhs.tns, TensorRef):
            info = tensors[s.lhs.tns.name]
            k = next((k for k, l in enumerate(info.levels) if l.name not in RANDOM_WRITE), None)
            if k is None:
                return
            want = [_base(x) for x in s.lhs.idxs[:k + 1]]
            try:
                at = loops.index(want[-1])
            except ValueError:
                at = -1
            if loops[:at + 1] != want:
                lvl = info.levels[k]
                raise ProgramError(
                    f"output {info.name} is written out of order: its {lvl.name} level (storage level {k}) "
                    f"is appended in index order, so the loops around this write must be "
                    f"{', '.join(i.name for i in want)} (outermost first), but they are "
                    f"{', '.join(i.name for i in loops) or 'none'}. Reorder the loops, or store "
                    f"{info.name} in SparseHash or SparseByteMap, which accept random writes", s.line)
    visit(prog, [])
