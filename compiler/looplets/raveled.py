"""A row-major matrix read as the vector of its raveled entries: ``ravel(A)[n]`` is ``A[n // |j|, n % |j|]``.

A collapse read at an index another operator computes, ``split(collapse(A[i, j], (i, j) -> k), k ->
(p, q))`` into a sorted sparse output, or a stack of matrices split into rows that straddle its
operands (``xp.stack([A, B]).reshape(5, 8)``), reads ``A`` at ``q + p * J``. Read through the
quotient and remainder (a gather, :func:`compiler.looplets.shapes.shape_program`'s ``let``), each of
the row's coordinates is searched for in its row of ``A``. But ``A``'s stored entries, rows in
order and each row's columns in order, are already in raveled order: ``ravel(A)`` unfurls to one
walk over them, a :class:`~compiler.looplets.looplets.Stepper` of spikes whose coordinate is
``r * |j| + idx[q]``, the row ``r`` moving on as the position ``q`` passes each row's end. A
window of it (an output row) seeks once, to the row of its start by a division and to the column
by a gallop in that row, and then walks: no search per entry.

Where the matrix's levels allow (:func:`ravels`): a first level that holds a slot per coordinate
(Dense) over a compressed one (a SparseList: CSR) or another Dense (a dense matrix, whose raveled
slots are the matrix's own: a lookup), or one list of sorted coordinate tuples (COO, each tuple at
``crd0[q] * |j| + crd1[q]``: no row to carry, so its walk loops over the positions directly).

>>> from compiler.format import coo, csc, csr
>>> from compiler.looplets.fibers import TensorInfo, UnfurlContext
>>> from compiler.looplets.looplets import nest_text
>>> nest = RaveledFiber(TensorInfo.from_format("A", csr()).root()).unfurl(UnfurlContext(), "read")
>>> print(nest_text(nest).splitlines()[2].strip())
Phase(stop=lastA)
>>> ravels(csr()), ravels(csc()), ravels(coo())
(True, False, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..imperative import ir
from ..imperative.ir import Assign, BinOp, CompoundAssign, Const, Declare, Load, Select, Var, While
from ..imperative.search import lower_bound_call, seek_call
from . import extents as X
from .fibers import SubFiber, fiber_tag, fill_value
from .looplets import Fill, Lookup, Phase, Positions, Sequence, Spike, Stepper, Thunk
from .searching import search_stmts


def ravels(fmt, stored: bool = False, flat: bool = False) -> bool:
    """Whether a matrix of format ``fmt`` unfurls raveled (row-major, its entries walked in order):
    two levels of one mode each, stored rows first, the first with a slot per coordinate and the
    second one too or a compressed list whose positions are its children. With ``stored``, raveled
    in its storage order, whichever mode that stores first (a CSC's columns, then their rows). With
    ``flat`` (a walk whose coordinates are read through its positions only,
    :attr:`RaveledFiber.flat`), the first level may be a compressed list too (DCSR's stored rows).

    >>> from compiler.format import csc, dcsr
    >>> ravels(csc()), ravels(csc(), stored=True), ravels(dcsr()), ravels(dcsr(), flat=True)
    (False, True, False, True)
    """
    levels = fmt.levels
    if not stored and tuple(fmt.mode_order) != (0, 1):
        return False
    if len(levels) == 1:    # (a COO's one list of sorted tuples)
        return levels[0].nmodes == 2 and levels[0].coordinate_list
    if len(levels) != 2 or any(lvl.nmodes != 1 for lvl in levels):
        return False
    outer, inner = levels
    listed = inner.compressed and inner.child_array is None
    return (outer.located_by_coordinate and (inner.located_by_coordinate or listed)
            or flat and listed and outer.compressed and outer.child_array is None)


@dataclass(frozen=True, eq=False)
class RaveledFiber:
    """The root of a matrix read raveled: one mode of extent ``|i| * |j|`` (``fiber`` is the root)."""

    fiber: SubFiber
    is_leaf = False
    seg = None
    #: whether no looplet reads its coordinates but through its walk's :class:`Positions`: a reduction of
    #: every entry (:mod:`compiler.looplets.flat_reductions`), whose walk of the positions never asks for
    #: the row of an entry (a search if it did), where a window's walk carries the row from entry to entry
    flat: bool = False
    #: its seek moves the row and the position forward only, so a cursor carried from one window to
    #: the next, ascending, seeks on from where the last stopped (:mod:`compiler.looplets.carried`)
    carries = True

    # (a permissive read's padding asks the fiber which tensor it reads and its extent)
    tensor = property(lambda self: self.fiber.tensor)
    level = property(lambda self: self.fiber.level)

    def extent(self):
        """The raveled extent, ``|i| * |j|`` (IR)."""
        info = self.fiber.tensor
        return BinOp("*", info.size(0), info.size(1))

    def label(self):
        return f"ravel({self.fiber.tensor.name})"

    def __str__(self):
        return self.label()

    def unfurl(self, ctx, mode):
        if mode != "read":
            raise ValueError(f"{self.label()} is read only")
        info = self.fiber.tensor
        if len(info.levels) == 1:
            return _walk_tuples(info, ctx, self.flat)
        if not info.levels[0].located_by_coordinate:
            if not self.flat:
                raise ValueError(f"{self.label()}: a first level of stored rows is walked flat only (ravels)")
            return _walk_stored_rows(info, ctx)
        if info.levels[1].located_by_coordinate:
            # (a dense matrix's slot of (r, c) is r * |j| + c: the raveled coordinate itself)
            return Lookup(lambda n: SubFiber(info, 2, n), f"n -> {info.name}.lvl2[n]")
        return _walk(info, ctx, self.flat)


def _walk(info, ctx, flat=False):
    """Dense over a compressed level: the stored entries in order, each at ``r * |j| + idx[q]``."""
    n0, n1 = info.size(0), info.size(1)
    inner = info.levels[1]
    pos_b, idx_b = info.array(1, inner.starts_array), info.array(1, inner.crd_array)
    t = fiber_tag(info)
    q, q_stop, r, last, n = (Var(ctx.fresh(x)) for x in (f"q{t}", f"q{t}_stop", f"r{t}", f"last{t}", f"n{t}"))
    zero, one = Const(0, "int64"), Const(1, "int64")
    # (one past the last entry's raveled coordinate: its row is the first whose end reaches q_stop)
    last_row = X.sub(lower_bound_call(pos_b, zero, X.add(n0, 1), q_stop), 1)
    last_at = X.add(X.add(BinOp("*", last_row, n1), Load(idx_b, X.sub(q_stop, 1))), 1)
    pre = (Declare(q, "int64", Load(pos_b, zero)), Declare(q_stop, "int64", Load(pos_b, n0)),
           Declare(r, "int64", zero),
           Declare(last, "int64", Select(BinOp("<", q, q_stop), last_at, zero)))

    def seek(start):
        # the row of start by a division (rows only move forward), then its column by a gallop in that row
        row_end, rs = Load(pos_b, X.add(r, 1)), Var(ctx.fresh(f"r{t}_seek"))
        return (Declare(rs, "int64", Select(BinOp(">", n1, zero), BinOp("/", start, n1), zero)),
                ir.If(BinOp(">", rs, r), [
                    Assign(r, Select(BinOp("<", rs, n0), rs, n0)),
                    ir.If(BinOp("<", q, Load(pos_b, r)), [Assign(q, Load(pos_b, r))])]),
                ir.If(BinOp("<", r, n0), search_stmts(q, idx_b, row_end, X.sub(start, BinOp("*", r, n1)), ctx.fresh)))

    def at(p):
        # (the row of position p by a search: read only where the walk of the positions needs a coordinate)
        return X.add(BinOp("*", X.sub(lower_bound_call(pos_b, zero, X.add(n0, 1), X.add(p, one)), 1), n1),
                     Load(idx_b, p))

    def search(var, target):
        # (the first position from q on at or past target: the row of target, then its column in that row)
        row = Var(ctx.fresh(f"r{t}_seek"))
        return [Declare(row, "int64", Select(BinOp(">", n1, zero), BinOp("/", target, n1), zero)),
                ir.If(BinOp(">=", row, n0), [Assign(var, q_stop)], [
                    Assign(var, Select(BinOp("<", q, Load(pos_b, row)), Load(pos_b, row), q)),
                    *search_stmts(var, idx_b, Load(pos_b, X.add(row, 1)), X.sub(target, BinOp("*", row, n1)),
                                  ctx.fresh)])]

    # (the position passed its row's end: on to the row holding it, over empty rows)
    preamble = (While(ir.and_(BinOp("<", r, n0), BinOp("<=", Load(pos_b, X.add(r, 1)), q)), [CompoundAssign("+", r, one)]),
                Declare(n, "int64", X.add(BinOp("*", r, n1), Load(idx_b, q))))
    return _entries(info, ctx, pre, last, (q, 2, n), seek, preamble,
                    Positions(q, q_stop, last, at, search, walks_whole=True) if flat else None)


def _entries(info, ctx, pre, last, entry, seek, preamble, positions):
    """The walk over a matrix's stored entries in raveled order that each walker makes: after ``pre``, a
    :class:`Stepper` of spikes until ``last`` (one past the last entry's raveled coordinate), then the fill.
    ``entry`` is ``(q, level, n)``: the position, the level its spike's fiber is at and the raveled coordinate
    that ``preamble`` declares; ``seek`` moves the walk to a window's start."""
    q, level, n = entry
    if info.role == "input":   # (an input's coordinates are validated when it is built)
        ctx.facts.bound(last, Const(0, "int64"), BinOp("*", info.size(0), info.size(1)),
                        f"one past the last raveled coordinate of {info.name}, or 0: below |i| * |j|")
    stepper = Stepper(seek=seek, stop=X.add(n, 1), chunk=Spike(Fill(fill_value(info)), SubFiber(info, level, q)),
                      next=(CompoundAssign("+", q, Const(1, "int64")),), preamble=preamble, positions=positions)
    return Thunk(pre, Sequence((Phase(last, stepper), Phase(None, Fill(fill_value(info))))))


def _walk_stored_rows(info, ctx):
    """Compressed rows over compressed columns (DCSR), walked flat: the entries of every stored row in
    order, each at ``idx0[r] * |j| + idx1[q]`` where ``r`` is the stored row holding ``q``."""
    n1 = info.size(1)
    outer, inner = info.levels
    pos0, idx0 = info.array(0, outer.starts_array), info.array(0, outer.crd_array)
    pos1, idx1 = info.array(1, inner.starts_array), info.array(1, inner.crd_array)
    t = fiber_tag(info)
    r0, r_stop, q, q_stop, r, last, n = (Var(ctx.fresh(x)) for x in (f"r{t}_start", f"r{t}_stop", f"q{t}",
                                                                      f"q{t}_stop", f"r{t}", f"last{t}", f"n{t}"))
    zero, one = Const(0, "int64"), Const(1, "int64")

    def at(p):
        # (the stored row holding position p, by a search: the last with pos1[r] <= p)
        held = X.sub(lower_bound_call(pos1, r0, X.add(r_stop, one), X.add(p, one)), one)
        return X.add(BinOp("*", Load(idx0, held), n1), Load(idx1, p))

    def search(var, target):
        # (the first position from q on at or past target: the first stored row at or past target's row, then
        # target's column in it where it is target's row)
        row, rs = Var(ctx.fresh(f"r{t}_row")), Var(ctx.fresh(f"r{t}_seek"))
        return [Declare(row, "int64", Select(BinOp(">", n1, zero), BinOp("/", target, n1), zero)),
                Declare(rs, "int64", lower_bound_call(idx0, r, r_stop, row)),
                ir.If(BinOp(">=", rs, r_stop), [Assign(var, q_stop)], [
                    Assign(var, Select(BinOp("<", q, Load(pos1, rs)), Load(pos1, rs), q)),
                    ir.If(BinOp("==", Load(idx0, rs), row),
                          search_stmts(var, idx1, Load(pos1, X.add(rs, one)), X.sub(target, BinOp("*", row, n1)),
                                       ctx.fresh))])]

    pre = (Declare(r0, "int64", Load(pos0, zero)), Declare(r_stop, "int64", Load(pos0, one)),
           Declare(q, "int64", Load(pos1, r0)), Declare(q_stop, "int64", Load(pos1, r_stop)),
           Declare(r, "int64", r0),
           Declare(last, "int64", Select(BinOp("<", q, q_stop), X.add(at(X.sub(q_stop, one)), one), zero)))
    preamble = (While(ir.and_(BinOp("<", r, r_stop), BinOp("<=", Load(pos1, X.add(r, 1)), q)),
                      [CompoundAssign("+", r, one)]),
                Declare(n, "int64", X.add(BinOp("*", Load(idx0, r), n1), Load(idx1, q))))
    # (a seek searches: the row follows in the preamble, as it moves forward only)
    return _entries(info, ctx, pre, last, (q, 2, n), lambda start: tuple(search(q, start)), preamble,
                    Positions(q, q_stop, last, at, search, walks_whole=True))


def _walk_tuples(info, ctx, flat=False):
    """A COO's tuples in order, each at ``crd0[q] * |j| + crd1[q]``: a walk over its positions (a
    seek gallops to the row's first tuple, then to the column among the row's)."""
    n1 = info.size(1)
    lvl = info.levels[0]
    pos_b, rows_b, cols_b = info.array(0, lvl.starts_array), info.array(0, lvl.crd_of(0)), info.array(0, lvl.crd_of(1))
    t = fiber_tag(info)
    q, q_stop, last, n = (Var(ctx.fresh(x)) for x in (f"q{t}", f"q{t}_stop", f"last{t}", f"n{t}"))
    zero, one = Const(0, "int64"), Const(1, "int64")

    def at(p):
        return X.add(BinOp("*", Load(rows_b, p), n1), Load(cols_b, p))
    pre = (Declare(q, "int64", Load(pos_b, zero)), Declare(q_stop, "int64", Load(pos_b, one)),
           Declare(last, "int64", Select(BinOp("<", q, q_stop), X.add(at(X.sub(q_stop, 1)), 1), zero)))

    def search(var, target):
        # (the first position from q on at or past target: its row's tuples, then its column among them)
        row, row_end = Var(ctx.fresh(f"r{t}_seek")), Var(ctx.fresh(f"r{t}_end"))
        return [Declare(row, "int64", Select(BinOp(">", n1, zero), BinOp("/", target, n1), zero)),
                Assign(var, seek_call(rows_b, q, q_stop, row)),
                Declare(row_end, "int64", seek_call(rows_b, var, q_stop, X.add(row, 1))),
                Assign(var, seek_call(cols_b, var, row_end, X.sub(target, BinOp("*", row, n1))))]

    return _entries(info, ctx, pre, last, (q, 1, n), lambda start: tuple(search(q, start)),
                    (Declare(n, "int64", at(q)),), Positions(q, q_stop, last, at, search, walks_whole=flat))


__all__ = ["RaveledFiber", "ravels"]
