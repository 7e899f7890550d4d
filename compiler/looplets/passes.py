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

from dataclasses import dataclass, replace
from typing import Any

from ..algebra import Operator, lookup
from ..imperative.ir import Const, Var
from . import extents as X
from .errors import ProgramError
from .looplets import Lookup, Phase, Run, Sequence
from .program import (Access, Assign, Block, Call, Declare, Define, Extent, Freeze, Index, IndexModifier,
                      Literal, Loop, Raveled, Sieve, Size, Strided, Swizzle, TensorRef, Thaw, postmap, show_expr,
                      walk)
from .modifiers import PROTOCOLS, Offset, Permit, Protocol, Window
from .wrappers import modifier_chain, static_ir, static_value


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
    """Rewrite index expressions into index modifiers and comparisons into masks.

    ``A[i + 1]`` -> ``offset(A, 1)[i]``; ``A[window(i, 2, 5)]`` / ``A[2:5][i]`` ->
    ``offset(window(A, 2:5), 2)[i]``; ``A[~i]`` -> ``permissive(A, true)[i]``;
    ``swizzle(A, 1, 0)[i, j]`` -> ``A[j, i]`` (compiled away); ``if i <= j`` -> a mask
    access; ``size(A, m)`` is resolved to ``A``'s size parameter.
    """

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
            return replace(s, init=expr(s.init, depth, s.line))
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
            if isinstance(n, Size):
                return _resolve_size(n, tensors, line)
            if isinstance(n, Access) and isinstance(n.tns, TensorRef):
                n = _unswizzle(n, tensors, n.line or line)
                return replace(n, idxs=tuple(_normalize(index(x, depth, n, n.line or line)) for x in n.idxs))
            return None
        return postmap(e, fn)

    def index(x, depth, acc, line):
        if isinstance(x, (Index, IndexModifier)):
            return x
        if isinstance(x, Call) and x.op == "permit":
            return Permit(index(x.args[0], depth, acc, line))
        if isinstance(x, Call) and x.op in PROTOCOLS:
            return Protocol(index(x.args[0], depth, acc, line), x.op)
        if isinstance(x, Call) and x.op == "window":
            return window(x, depth, acc, line)
        if isinstance(x, Call) and isinstance(x.op, Operator) and x.op.name in ("add", "sub"):
            a, b = x.args
            ia, ib = _outside_access(a), _outside_access(b)
            deep = max(ia + ib, key=lambda i: depth.get(i, -1), default=None)
            if deep is not None:
                if deep in ia and deep not in ib:
                    base = index(a, depth, acc, line)
                    delta = b if x.op.name == "add" else Call(lookup("neg"), (b,))
                    if isinstance(base, (Index, IndexModifier)):
                        return Offset(base, _fold(delta))
                elif deep in ib and deep not in ia and x.op.name == "add":
                    base = index(b, depth, acc, line)
                    if isinstance(base, (Index, IndexModifier)):
                        return Offset(base, _fold(a))
        if not _outside_access(x):
            return x  # bound by outer loops, or a scatter through another tensor
        raise ProgramError(f"no wrapper covers the index expression {show_expr(x)} of {acc.tns.name}; the "
                           f"looplet strategy accepts i, i + c, i - c, i + j (j bound outside i), ~i, "
                           f"window(i, lo, hi) (A[lo:hi][i]) and indices read from other tensors", line)

    def window(x, depth, acc, line):
        if len(x.args) != 3:
            raise ProgramError(f"window(i, lo, hi) takes an index and two bounds, got {len(x.args)} "
                               f"argument(s) in the access of {acc.tns.name}", line)
        inner, lo, hi = x.args
        for b in (lo, hi):
            if not _is_static(b):
                raise ProgramError(f"the bounds of a window of {acc.tns.name} must be integers or tensor "
                                   f"sizes (A.shape[m], len(A)) and + - * of them; {show_expr(b)} is not", line)
        if isinstance(lo, Literal) and isinstance(hi, Literal) and lo.value > hi.value:
            raise ProgramError(f"the window {lo.value}:{hi.value} of {acc.tns.name} has its bounds reversed: "
                               f"windows are half-open lo:hi with lo <= hi", line)
        base = index(inner, depth, acc, line)
        if not isinstance(base, (Index, IndexModifier)):
            raise ProgramError(f"window(i, lo, hi) of {acc.tns.name} needs a loop index, not "
                               f"{show_expr(inner)}", line)
        # Finch.jl: A[I(k)] -> offset(window(A, I), start(I)); window(i, lo, hi) reads lo + i
        return Window(Offset(base, lo), lo, hi)

    return visit(prog, {})


def _normalize(x):
    """One canonical modifier chain: adjacent offsets merged (zero ones dropped) and a
    ``Permit`` moved nearest the tensor.

    ``~`` commutes with offsets and windows (a permissive window is missing outside the
    window as well as outside the tensor), so ``~i + 1`` and ``~(i + 1)`` are one wrapper;
    having it outermost lets the simplifier see at a glance that the access may be missing.
    """
    mods, out = modifier_chain(x)
    if not mods:
        return x
    for m in reversed(mods):  # rebuild from the index outwards
        if isinstance(m, Permit):
            continue
        if isinstance(m, Offset):
            if isinstance(out, Offset):
                out = Offset(out.index, _fold(Call(lookup("+"), (out.delta, m.delta))))
            else:
                out = Offset(out, m.delta)
            if out.delta == Literal(0):
                out = out.index
            continue
        out = replace(m, index=out)
    return Permit(out) if any(isinstance(m, Permit) for m in mods) else out


def _unswizzle(acc, tensors, line):
    """``swizzle(A, *axes)[idxs]`` as ``A[permuted idxs]`` (SwizzleTensor is compiled away)."""
    t = acc.tns
    if not isinstance(t, Swizzle):
        return acc
    info = tensors.get(t.name)
    text = f"swizzle({t.name}, {', '.join(str(a) for a in t.axes)})"
    if info is not None and len(t.axes) != info.ndim:
        raise ProgramError(f"{text} names {len(t.axes)} axes but {t.name} has {info.ndim} mode(s); "
                           f"give a permutation of 0..{info.ndim - 1}", line)
    if len(acc.idxs) != len(t.axes):
        raise ProgramError(f"{text} has {len(t.axes)} mode(s) but is indexed with {len(acc.idxs)} "
                           f"index(es)", line)
    return replace(acc, tns=TensorRef(t.name), idxs=t.permute(acc.idxs))


def _resolve_size(n, tensors, line):
    if n.expr is not None:
        return None
    info = tensors.get(n.tensor)
    if info is None:
        raise ProgramError(f"size of unknown tensor {n.tensor}", line)
    if not 0 <= n.mode < info.ndim:
        raise ProgramError(f"size({n.tensor}, {n.mode}): {n.tensor} has {info.ndim} mode(s)", line)
    return replace(n, expr=info.size(info.format.mode_order.index(n.mode)))


def _nonneg_ir(e, tensors) -> bool:
    """Whether an IR extent is provably >= 0: sizes, non-negative constants, and sums,
    products, minima and maxima of them."""
    from ..imperative.ir import BinOp, Select
    if isinstance(e, Const):
        return isinstance(e.value, int) and e.value >= 0
    if isinstance(e, Var):
        return any(e == info.size(m) for info in tensors.values() for m in range(info.ndim))
    if isinstance(e, BinOp) and e.op in "+*":
        return _nonneg_ir(e.left, tensors) and _nonneg_ir(e.right, tensors)
    if isinstance(e, Select):
        return _nonneg_ir(e.then, tensors) and _nonneg_ir(e.otherwise, tensors)
    return False


def _nonnegative(e) -> bool:
    """Whether a static expression is provably >= 0 (sizes and non-negative constants)."""
    if isinstance(e, Literal):
        return isinstance(e.value, int) and e.value >= 0
    if isinstance(e, Size):
        return True
    if isinstance(e, Call) and isinstance(e.op, Operator) and e.op.name in ("add", "mul"):
        return all(_nonnegative(a) for a in e.args)
    return False


def _is_static(e) -> bool:
    """An integer known before the kernel's loops run: constants, sizes and + - * of them."""
    if isinstance(e, Literal):
        return isinstance(e.value, int) and not isinstance(e.value, bool)
    if isinstance(e, Size):
        return True
    if isinstance(e, Call) and isinstance(e.op, Operator) and e.op.name in ("add", "sub", "mul", "neg"):
        return all(_is_static(a) for a in e.args)
    return False


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
            if isinstance(n.tns, Raveled):   # (one index over its modes, rows first: in storage order)
                if len(n.idxs) != 1 or info.ndim != 2:
                    raise ProgramError(f"ravel({n.tns.name}) is a matrix read at one index, not {len(n.idxs)} "
                                       f"index(es) of a tensor of {info.ndim} mode(s)", n.line)
                return None
            if len(n.idxs) != info.ndim:
                raise ProgramError(f"{n.tns.name} has {info.ndim} mode(s) but is indexed with "
                                   f"{len(n.idxs)} index(es)", n.line)
            order = info.format.mode_order
            return replace(n, idxs=tuple(n.idxs[m] for m in order))
        return None
    return postmap(prog, fn)


def _base(x):
    while isinstance(x, IndexModifier):
        x = x.index
    return x


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
    #: the constant offset from the tensor's mode; None through a window (the extent is the
    #: window's, not the tensor's, so the runtime's equal-size checks leave it out)
    delta: int | None = 0
    #: a permissive window: its extent is used only when nothing else sizes the loop, and
    #: never conflicts (outside the window the access is missing)
    weak: bool = False
    #: a window: the runtime does not check its extent against the other sources, so the
    #: loop runs over the intersection of all of them
    window: bool = False


def _mode_range(x, acc, info, m, shape, tensors, shapes):
    """The extent of the bare index of ``x`` (indexing storage mode ``m`` of ``info``), from
    the tensor side outwards: ``(Extent, (start, stop) ints or None, delta, description)``.

    None when the index is unbounded (``~`` without a window) or shifted by an outer loop
    index. Checks windows against the coordinates the tensor has (out of bounds, reversed);
    a permissive window may reach outside the tensor (padding) and still gives the extent.
    """
    mods, _ = modifier_chain(x)
    permit = any(isinstance(mod, Permit) for mod in mods)
    if permit and not any(isinstance(mod, Window) for mod in mods):
        return None
    start, stop = Const(0, "int64"), info.size(m)
    known = shape is not None
    vstart, vstop = 0, (shape[m] if known else None)
    delta, what = 0, None
    lmode = info.format.mode_order[m]
    for mod in mods:
        if isinstance(mod, Offset):
            if not _is_static(mod.delta):
                return None
            d, dv = static_ir(mod.delta), static_value(mod.delta, tensors, shapes)
            start, stop = X.sub(start, d), X.sub(stop, d)
            if dv is None:
                known = False
            else:
                vstart, vstop = vstart - dv, (None if vstop is None else vstop - dv)
                delta = None if delta is None else delta + dv
        elif isinstance(mod, Window):
            lo, hi = static_ir(mod.lo), static_ir(mod.hi)
            lv, hv = static_value(mod.lo, tensors, shapes), static_value(mod.hi, tensors, shapes)
            text = f"{show_expr(mod.lo)}:{show_expr(mod.hi)}"
            vals = "" if (lv, hv) == (mod.lo.value if isinstance(mod.lo, Literal) else None,
                                      mod.hi.value if isinstance(mod.hi, Literal) else None) \
                else f" (= {lv}:{hv})"
            if lv is not None and hv is not None and lv > hv:
                raise ProgramError(f"the window {text}{vals} of {acc.tns.name} (mode {lmode}) has its bounds "
                                   f"reversed: windows are half-open lo:hi with lo <= hi", acc.line)
            if not permit and known and vstop is not None and lv is not None and hv is not None and \
                    (lv < vstart or hv > vstop):
                within = f"{vstart}:{vstop}" + (f" (after the offset {-vstart})" if vstart else "")
                raise ProgramError(f"the window {text}{vals} of {acc.tns.name} is out of bounds: mode {lmode} "
                                   f"of {acc.tns.name} has size {shape[m]}, so a window must lie within "
                                   f"{within}; read it as permissive (~) to pad with missing", acc.line)
            if permit:
                start, stop = lo, hi  # reads outside the tensor are missing: no clipping needed
            else:
                # clip to the coordinates the tensor has when the kernel runs, as numpy clips
                # a[3:9]: a kernel compiled for one shape may be called with a smaller tensor
                low = lo if X.prove_le(start, lo) or (start == Const(0, "int64") and _nonnegative(mod.lo)) \
                    else X.imax(lo, start)
                # ... and never reversed (an empty window, not a negative size)
                clipped = X.imin(hi, stop)
                if not (X.prove_le(low, clipped) or (low == Const(0, "int64") and _nonneg_ir(clipped, tensors))):
                    clipped = X.imax(clipped, low)
                start, stop = low, clipped
            vstart, vstop = lv, hv
            known = lv is not None and hv is not None
            delta = None
            what = f"the window {text}{vals} of {acc.tns.name} (mode {lmode})"
    v = (vstart, vstop) if known and vstart is not None and vstop is not None else None
    return Extent(start, stop), v, delta, what, permit


@dataclass(frozen=True, eq=False)
class LoopIndex:
    """The index of one loop: sibling loops may reuse a name with different extents
    (``for i: C[0:n][i] = A[i]`` then ``for i: C[n:][i] = B[i]``)."""

    name: str
    line: int = 0


def dimensionalize(prog, tensors: dict, shapes: dict):
    """Give each ``for i in _`` its extent; ``shapes`` holds concrete storage shapes where known.

    Returns ``(program, sources)`` with ``sources[loop]`` (a :class:`LoopIndex`, one per
    loop, with the index's ``name``) the sources that agreed.
    """
    sources: dict[LoopIndex, list[DimSource]] = {}
    keys: dict[int, LoopIndex] = {}
    #: per loop, the least value its index may take so that no write lands below coordinate 0
    lows: dict[LoopIndex, list] = {}

    def add(i, src):
        have = sources.setdefault(i, [])
        for h in have:
            # (reads at different offsets of one extent, x[i] + x[i + 1], meet in the intersection)
            shifted = h.delta is not None and src.delta is not None and h.delta != src.delta
            if h.value is not None and src.value is not None and not (h.weak or src.weak) and \
                    (h.value[1] - h.value[0] != src.value[1] - src.value[0] or (h.value != src.value and not shifted)):
                raise ProgramError(
                    f"conflicting extents for index {i.name}: {h.what} gives {h.value[0]}:{h.value[1]} "
                    f"but {src.what} gives {src.value[0]}:{src.value[1]}", src.line or h.line)
        have.append(src)

    def accesses(e, scope):
        for n in walk(e):
            # (a raveled read's index is an offset of an outer loop or permissive: it sizes no loop)
            if isinstance(n, Access) and isinstance(n.tns, TensorRef) and not isinstance(n.tns, Raveled):
                info = tensors[n.tns.name]
                shape = shapes.get(n.tns.name)
                # a write of an output: its shape only suggests the loop's extent (where nothing read
                # gives one); the reads size the loop and the call checks the writes fit the output
                written = n.mode == "update" and info.role == "output"
                for m, x in enumerate(n.idxs):
                    base = _base(x)
                    # (a strided read's mode runs over the slice's length, its loop's own extent)
                    if not isinstance(base, Index) or isinstance(n.tns, Strided) and \
                            info.format.mode_order[m] == n.tns.mode:
                        continue
                    low = _write_low(x) if n.mode == "update" and info.role != "input" else None
                    if low is not None and base in scope:
                        lows.setdefault(scope[base], []).append(low)
                    if shape is None and info.role != "input":
                        continue  # an output without a shape takes its sizes from the loops
                    got = _mode_range(x, n, info, m, shape, tensors, shapes)
                    if got is None or base not in scope:
                        continue  # permissive (unbounded), or shifted by an outer index (Toeplitz)
                    ext, v, delta, what, weak = got
                    if written and delta is not None:
                        weak = True   # (a window of the output still bounds its loop)
                    size = '?' if shape is None else shape[m]
                    add(scope[base], DimSource(what or f"{n.tns.name} (storage mode {m}, size {size})",
                                               ext, v, n.line, n.tns.name, m, delta, weak,
                                               what is not None and not weak))

    def collect(s, scope):
        if isinstance(s, Loop):
            key = keys[id(s)] = LoopIndex(s.idx.name, s.line)
            sources.setdefault(key, [])
            if s.ext is not None:
                v = None
                if isinstance(s.ext.start, Const) and isinstance(s.ext.stop, Const):
                    v = (s.ext.start.value, s.ext.stop.value)
                add(key, DimSource(f"the range of loop {s.idx.name}", s.ext, v, s.line))
            collect(s.body, {**scope, s.idx: key})
        elif isinstance(s, Block):
            for t in s.stmts:
                collect(t, scope)
        elif isinstance(s, Sieve):
            accesses(s.cond, scope)
            collect(s.body, scope)
        elif isinstance(s, Define):
            accesses(s.val, scope)
            collect(s.body, scope)
        elif isinstance(s, Assign):
            accesses(s.lhs, scope)
            accesses(s.rhs, scope)

    collect(prog, {})

    def choose(i, line):
        srcs = sources.get(i, [])
        if not srcs:
            # a loop indexing only temporaries or unsized outputs takes the extent of a sibling
            # loop of the same name (Gustavson: `for j` over B fills w[j], `for j` copies w[j])
            srcs = [src for k, v in sources.items() if k.name == i.name for src in v]
        # prefer inputs (their sizes are known when the kernel runs), then ranges, then outputs
        def rank(src):
            if src.weak:
                return 3
            if src.tensor is None:
                return 1
            return 0 if tensors[src.tensor].role == "input" else 2
        srcs = sorted(srcs, key=rank)
        if not srcs:
            raise ProgramError(f"cannot infer the extent of loop index {i.name}: no tensor is indexed by "
                               f"it alone; write `for {i.name} in range(n)`", line)
        if any(src.window for src in srcs) or len({src.delta for src in srcs if not src.weak}) > 1:
            # sources that agree at compile time fold to one bound; at run time every access
            # of the loop stays within its tensor (and its window)
            strong = [src for src in srcs if not src.weak]
            return Extent(X.imax(*[src.extent.start for src in strong]),
                          X.imin(*[src.extent.stop for src in strong]))
        return srcs[0].extent

    def fill(s):
        if isinstance(s, Loop):
            ext = s.ext if s.ext is not None else choose(keys[id(s)], s.line)
            # (a write at i + n, n a size, is never below 0 for i >= 0: no bound to add)
            low = [b for b in lows.get(keys[id(s)], ()) if not X.prove_le(b, ext.start)
                   and not (_nonnegative_start(ext.start) and _nonneg_ir(X.neg(b), tensors))]
            if low:
                # Finch: a loop runs over what all its accesses allow, and no output has a
                # coordinate below 0 (y[i] = x[i + 1] runs i over 0:n-1, not -1:n-1)
                ext = Extent(X.imax(ext.start, *low), ext.stop)
            return replace(s, ext=ext, body=fill(s.body))
        if isinstance(s, Block):
            return replace(s, stmts=tuple(fill(t) for t in s.stmts))
        if isinstance(s, (Sieve, Define)):
            return replace(s, body=fill(s.body))
        return s

    return fill(prog), {k: v for k, v in sources.items() if v}


def _nonnegative_start(e) -> bool:
    return isinstance(e, Const) and isinstance(e.value, int) and e.value >= 0


def _write_low(x):
    """The least value of the bare index of a write ``x`` whose coordinate is not below 0:
    ``-c`` for ``i + c`` (an IR expression), None when that is no constant offset (a window is
    bounded by its own lower end)."""
    mods, _ = modifier_chain(x)
    delta = Const(0, "int64")
    for mod in mods:
        if isinstance(mod, Window) or (isinstance(mod, Offset) and not _is_static(mod.delta)):
            return None
        if isinstance(mod, Offset):
            delta = X.add(delta, static_ir(mod.delta))
    return X.neg(delta)


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
                raise ProgramError(_read_and_written(s, name), _line_of(s, name))
            for name in writes:
                info = tensors[name]
                if info.role == "input":
                    raise ProgramError(f"{name} is an input tensor and cannot be written; pass a format "
                                       f"for it to make it an output", lines.get(name) or s.line)
                if name not in mine:
                    # an undeclared output starts at its fill value
                    mine[name] = "update"
                    out.append(Declare(TensorRef(name), Literal(info.fill, dtype=info.dtype), implicit=True))
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


def _read_and_written(s, name) -> str:
    """Why statement ``s`` may not both read and write ``name``, naming the lines of the first read and write."""
    first = {}
    for n in walk(s):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name == name:
            first.setdefault("write" if n.mode == "update" else "read", n)
    read, write = first.get("read"), first.get("write")
    where = ""   # (program lines, not the file's: the order says it)
    if read is not None and write is not None and read.line and write.line:
        if read.line < write.line:
            where = " (read before it is written)"
        elif read.line > write.line:
            where = " (written, then read)"
    return (f"{name} is read and written in the same statement{where}; looplets assume a tensor is either read "
            f"or updated in one scope: a program reads what it wrote in a later loop nest, once the nest that "
            f"writes it is done. Write into a temporary (or use `{name}[...] op= value` to update it)")


def _line_of(s, name):
    for n in walk(s):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name == name and n.line \
                and n.mode == "update":
            return n.line
    for n in walk(s):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name == name and n.line:
            return n.line
    return getattr(s, "line", 0)
