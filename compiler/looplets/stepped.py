"""A strided slice walked in the stored entries it keeps: ``stride(A, m, s:e:r)[.., k, ..]``.

A strided slice ``A[t + (s + r * k)]`` under its one-step loop ``t`` (:mod:`compiler.looplets.shapes`)
seeks the coordinate ``s + r * k`` for every ``k``. Where the sliced level's fiber is opened afresh
inside an outer loop (a CSC's rows sliced, each column's row level walked inside the loop over its
columns), that is a seek per output row in every column: rows times columns. A sorted compressed
level can instead walk the entries the slice keeps: those whose coordinate ``c`` lies in the slice's
range with ``c - s`` a multiple of ``r``, each at ``k = (c - s) / r``, in ascending positions for
``r > 0`` and descending ones (the fiber walked backwards) for ``r < 0``. The walk is a
:class:`~compiler.looplets.looplets.Stepper` of spikes over ``k`` that skips the entries off the
stride: a pass over the column's stored entries.

A level offers it by registering its stepped unfurl in :data:`STEPPED` (a SparseList's);
:func:`steps_through` asks. :class:`StridedFiber` carries the slice down the tensor's levels to the
sliced one: the levels above unfurl as they always do, their children strided in turn.

>>> from compiler.format import csc, csr
>>> from compiler.looplets.fibers import TensorInfo, UnfurlContext
>>> from compiler.looplets.looplets import nest_text
>>> steps_through(csc().levels[1]), steps_through(csr().levels[0])
(True, False)
>>> A = TensorInfo.from_format("A", csc()).root()
>>> column = StridedFiber(A, 1, 8, -1, -2).unfurl(UnfurlContext(), "read").body(Var("j"))
>>> print(column.label())
stride(A.lvl1[j], 8:-1:-2)
>>> print(nest_text(column.unfurl(UnfurlContext(), "read")).splitlines()[-3].strip())
tail: A.lvl2[qA]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from ..imperative.ir import Assign, BinOp, CompoundAssign, Const, Declare, Load, Select, Var, While, and_
from ..imperative.search import lower_bound_call, seek_back_call, seek_call
from ..levels import SparseList
from . import extents as X
from .fibers import SubFiber, child_fiber, fiber_tag, fill_value
from .levels import for_class, unfurl
from .looplets import Fill, Phase, Positions, Sequence, Spike, Stepper, Thunk, map_nest


def unfurl_sparse_list_stepped(f: SubFiber, ctx, start: int, stop: int, step: int):
    """A SparseList fiber read at ``start + step * k`` for the coordinates ``[start, stop)`` (``(stop,
    start]`` for ``step < 0``): a Stepper over ``k`` of one spike per entry the slice keeps, up to one
    past the last kept entry's ``k``, then the fill."""
    info, lvl = f.tensor, f.level
    pos_b, idx_b = info.array(lvl, f.lvl.starts_array), info.array(lvl, f.lvl.crd_array)
    t = fiber_tag(info)
    q, q_lo, q_hi, last, k = (Var(ctx.fresh(n)) for n in (f"q{t}", f"q{t}_lo", f"q{t}_hi", f"last{t}", f"k{t}"))
    s, r = Const(start, "int64"), Const(abs(step), "int64")
    one, zero = Const(1, "int64"), Const(0, "int64")
    up = step > 0
    lo_row, hi_row = (start, stop) if up else (stop + 1, start + 1)
    # the entries of the slice's rows: positions [q_lo, q_hi)
    first, end = Load(pos_b, f.pos), Load(pos_b, X.add(f.pos, 1))
    pre = [Declare(q_lo, "int64", first if lo_row <= 0 else lower_bound_call(idx_b, first, end,
                                                                             Const(lo_row, "int64"))),
           Declare(q_hi, "int64", lower_bound_call(idx_b, q_lo, end, Const(max(hi_row, 0), "int64")))]
    if step == -1:
        return reversed_run(f, ctx, pre, (q_lo, q_hi, last, k), s, idx_b)

    def offset(p):     # (how far the entry at p is from the slice's start, along the stride)
        c = Load(idx_b, p)
        return X.sub(c, s) if up else X.sub(s, c)

    def off_stride(p):
        return BinOp("!=", BinOp("%", offset(p), r), zero)

    def skip(var, move: str, bound, at=None):
        """``var`` moved (``move`` is ``+`` or ``-``) past the entries off the stride while ``bound``
        holds (always, where None), testing the entry at ``at`` (``var`` itself by default); a step
        of one keeps all."""
        if abs(step) == 1:
            return ()
        off = off_stride(var if at is None else at)
        return (While(off if bound is None else and_(bound, off), [CompoundAssign(move, var, one)]),)

    if up:
        # the last entry kept: back from the range's end past those off the stride; the walk goes up
        pre += skip(q_hi, "-", BinOp("<", q_lo, q_hi), at=X.sub(q_hi, 1))
        kept, walk_from = X.sub(q_hi, 1), q_lo
    else:
        # the lowest row kept is the walk's last: up from the range's start past those off the stride
        pre += skip(q_lo, "+", BinOp("<", q_lo, q_hi))
        kept, walk_from = q_lo, X.sub(q_hi, 1)
    move = "+" if up else "-"
    pre += [Declare(last, "int64", Select(BinOp("<", q_lo, q_hi), X.add(BinOp("/", offset(kept), r), one), zero)),
            Declare(q, "int64", walk_from)]

    def seek(at):
        # (there is a kept entry at or past the target: the phase stops at the last one's k)
        if isinstance(at, Const):
            if at.value == 0:    # (the slice's first row: the walk starts at the range's first entry)
                return skip(q, move, None)
            far = Const(at.value * abs(step), "int64")
        else:
            far = at if abs(step) == 1 else BinOp("*", at, r)
        target = X.add(s, far) if up else X.sub(s, far)
        if up:
            return (Assign(q, seek_call(idx_b, q, q_hi, target)), *skip(q, "+", None))
        return (Assign(q, seek_back_call(idx_b, q, X.sub(q_lo, 1), target)), *skip(q, "-", None))

    bound = BinOp("<", q, q_hi) if up else BinOp(">=", q, q_lo)
    stepper = Stepper(
        seek=seek,
        stop=X.add(k, one),
        chunk=Spike(Fill(fill_value(info)), child_fiber(f, q)),
        next=(CompoundAssign(move, q, one), *skip(q, move, bound)),
        preamble=(Declare(k, "int64", BinOp("/", offset(q), r)),))
    return Thunk(tuple(pre), Sequence((Phase(last, stepper), Phase(None, Fill(fill_value(info))))))


def reversed_run(f: SubFiber, ctx, pre: list, names: tuple, s: Const, idx_b: str):
    """The walk of a step of -1 (``pre`` finds the slice's entries, positions ``[q_lo, q_hi)``; ``names``: ``q_lo``,
    ``q_hi``, ``last``, ``k``): every entry kept, the ``t``-th from the top at ``k = s - idx[q_top - t]``, so a
    Stepper whose :class:`~compiler.looplets.looplets.Positions` count ``t`` up to ``q_hi - q_lo``: the lowerer's
    walk of stored positions, one load and no test per entry, which :mod:`compiler.imperative.blockcopy` copies as
    a block, as scipy copies each column reversed (the stepped walk's test per entry made ``A_csc[::-1]`` 1.7x
    scipy's time)."""
    q_lo, q_hi, last, k = names
    tag = fiber_tag(f.tensor)
    top, n, t = (Var(ctx.fresh(x)) for x in (f"q{tag}_top", f"n{tag}", f"t{tag}"))
    one, zero = Const(1, "int64"), Const(0, "int64")

    def coord(p):
        return X.sub(s, Load(idx_b, X.sub(top, p)))

    def search(var, target):
        # (the first t with k >= target: the last position at or below q_top - t whose row is at most s - target)
        return [Assign(var, X.sub(top, seek_back_call(idx_b, X.sub(top, t), X.sub(q_lo, 1), X.sub(s, target))))]

    pre += [Declare(top, "int64", X.sub(q_hi, 1)), Declare(n, "int64", X.sub(q_hi, q_lo)),
            Declare(last, "int64", Select(BinOp("<", q_lo, q_hi), X.add(X.sub(s, Load(idx_b, q_lo)), one), zero)),
            Declare(t, "int64", zero)]
    stepper = Stepper(
        seek=lambda at: () if isinstance(at, Const) and at.value == 0 else tuple(search(t, at)),
        stop=X.add(k, one),
        chunk=Spike(Fill(fill_value(f.tensor)), child_fiber(f, X.sub(top, t))),
        next=(CompoundAssign("+", t, one),),
        preamble=(Declare(k, "int64", coord(t)),),
        positions=Positions(t, n, last, coord, search))
    return Thunk(tuple(pre), Sequence((Phase(last, stepper), Phase(None, Fill(fill_value(f.tensor))))))


#: level class -> its stepped unfurl ``(fiber, ctx, start, stop, step)``: the levels that walk a
#: strided slice in the entries it keeps
STEPPED: dict[type, Callable] = {SparseList: unfurl_sparse_list_stepped}


def steps_through(level) -> bool:
    """Whether ``level`` walks a strided slice of its mode in the stored entries the slice keeps."""
    return for_class(STEPPED, type(level)) is not None


@dataclass(frozen=True, eq=False)
class StridedFiber:
    """``fiber`` of a tensor whose storage level ``at`` is read at ``start + step * k`` (its
    coordinates ``[start, stop)``, ``(stop, start]`` for ``step < 0``): unfurled stepped at that level,
    as usual above it, the children strided in turn."""

    fiber: SubFiber
    at: int
    start: int
    stop: int
    step: int
    is_leaf = False

    tensor = property(lambda self: self.fiber.tensor)
    level = property(lambda self: self.fiber.level)
    seg = property(lambda self: self.fiber.seg)

    def unfurl(self, ctx, mode):
        if self.fiber.level == self.at:
            return for_class(STEPPED, type(self.fiber.lvl))(self.fiber, ctx, self.start, self.stop, self.step)
        # (the levels above unfurl as they do; each sub-fiber they reach is strided in turn)
        return map_nest(unfurl(self.fiber, ctx, mode),
                        lambda f: replace(self, fiber=f) if isinstance(f, SubFiber) else None)

    def label(self):
        if self.fiber.level == self.at:
            return f"stride({self.fiber.label()}, {self.start}:{self.stop}:{self.step})"
        return self.fiber.label()

    def __str__(self):
        return self.label()


__all__ = ["STEPPED", "StridedFiber", "reversed_run", "steps_through", "unfurl_sparse_list_stepped"]
