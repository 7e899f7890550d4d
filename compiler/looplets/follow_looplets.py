"""The ``follow`` protocol of sorted sparse levels as looplets (``A[i, follow(j)]``, and every read at a
bound coordinate: a constant index, an index of an outer loop read against the storage order): each
coordinate is located by a binary search of the fiber's entries, for SparseList and SparseCOO; and the
``locate`` protocol of SparseList, whose search's entry is one case (found or the fill).

A fiber that may be absent (:attr:`~.fibers.SubFiber.present`, a merged walk's child) has no entries
there: its bounds are empty and the search finds nothing.

>>> from compiler.format import parse_format
>>> from compiler.imperative.ir import Var
>>> from compiler.looplets.looplets import nest_text
>>> from compiler.looplets.fibers import TensorInfo, UnfurlContext
>>> info = TensorInfo.from_format("A", parse_format("SparseCOO(2, Element(0.0))"))
>>> print(nest_text(unfurl_sparse_coo_follow(info.root(), UnfurlContext(), "read")))
Thunk(preamble: int64 qA0_start = A0_pos[0]; int64 qA0_stop = A0_pos[1];)
  Lookup(i -> search A.lvl0 mode 0 for i: its tuples, none if absent)
"""

from __future__ import annotations

from ..imperative import ir
from ..imperative.ir import BinOp, Const, Declare, Load, Var
from ..imperative.search import lower_bound_call
from . import extents as X
from .absent_fibers import can_be_absent
from .fibers import SubFiber, child_fiber, fiber_tag, fill_value, when_present
from .looplets import Case, Fill, Lookup, Run, Switch, Thunk


def present_where(child: SubFiber, found) -> SubFiber:
    """``child`` (a fiber that can read as absent) present only where ``found`` holds too: a located
    coordinate's child is one case, its entries where found and its fill where not, so reads at
    several bound coordinates do not multiply their cases."""
    return SubFiber(child.tensor, child.level, child.pos, child.mode, child.dirty,
                    present=found if child.present is None else ir.and_(child.present, found))


def unfurl_sparse_list_follow(f: SubFiber, ctx, mode, child_of=None, as_value=False):
    """SparseList read, ``follow`` protocol (random access, notes: finch.md pitfall 21): each
    coordinate is located by a binary search of the fiber's entries,
    ``Lookup(i -> Thunk(search, Switch(found: child, else: fill)))``; the fiber's bounds are
    read once (none where it is absent). ``A[follow(j)]`` lets another operand lead the loop over ``j``.
    ``as_value`` (the ``locate`` protocol, :func:`unfurl_sparse_list_locate`): found or not is one case."""
    info, k = f.tensor, f.level
    pos_b, idx_b = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.crd_array)
    t = fiber_tag(info)
    q0, q_stop = Var(ctx.fresh(f"q{t}_start")), Var(ctx.fresh(f"q{t}_stop"))
    child_of = child_of or (lambda q: q)
    none = Const(0, "int64")

    def body(i):
        q = Var(ctx.fresh(f"q{t}"))
        search = [Declare(q, "int64", lower_bound_call(idx_b, q0, q_stop, i))]
        found = ir.and_(BinOp("<", q, q_stop), BinOp("==", Load(idx_b, q), i))
        child = child_fiber(f, child_of(q))
        if as_value and can_be_absent(child):   # (found or not, one case: the child reads as empty where absent)
            return Thunk(tuple(search), Run(present_where(child, found)))
        return Thunk(tuple(search), Switch((Case(found, Run(child)), Case(Const(True, "bool"), Fill(fill_value(info))))))
    pre = (Declare(q0, "int64", when_present(f, Load(pos_b, f.pos), none)),
           Declare(q_stop, "int64", when_present(f, Load(pos_b, X.add(f.pos, 1)), none)))
    return Thunk(pre, Lookup(body, f"i -> search {info.name}.lvl{k} for i"))


def unfurl_sparse_list_locate(f: SubFiber, ctx, mode):
    """SparseList read, ``locate`` protocol: :func:`unfurl_sparse_list_follow` whose search's entry is one
    case, the stored value where found and the fill where not (the child present where found), where the
    found/absent Switch nested every other located read's cases in each of its own (four CSFs read at
    constant coordinates: 1,868 lines of C, 256 searches). The lowering asks for it where the absent case
    still does something (:meth:`~.lowerers.Lowerer.absent_does_nothing`); where it does nothing, the
    Switch skips it (an inner product's ``C[i, j] += A[i, k] * B[k, j]`` adds only where ``B[k, j]`` is).

    >>> from compiler.format import csr
    >>> from compiler.looplets.fibers import TensorInfo, UnfurlContext, child_fiber
    >>> from compiler.looplets.looplets import nest_text
    >>> row = child_fiber(TensorInfo.from_format("A", csr()).root(), Var("i"))
    >>> at_j = unfurl_sparse_list_locate(row, UnfurlContext(), "read").body.body(Var("j"))
    >>> print(nest_text(at_j))
    Thunk(preamble: int64 qA = lower_bound(A1_idx, qA_start, qA_stop, j);)
      Run(A.lvl2[qA])
    >>> print(at_j.body.body.present)   # (its value read where this holds, the fill elsewhere)
    qA < qA_stop && A1_idx[qA] == j
    """
    return unfurl_sparse_list_follow(f, ctx, mode, as_value=True)


def unfurl_sparse_coo_follow(f: SubFiber, ctx, mode):
    """SparseCOO read, ``follow`` protocol, one mode at a time: the tuples ``[lo, hi)`` that share the
    modes before this one are sorted by it, so a coordinate's tuples are ``[q, q_next)``, two binary
    searches; before the last mode they are the next mode's segment (empty where the coordinate is
    not stored: all fill, no case of its own), at the last its entry, found or the fill. An entry
    the levels below can read as absent is one case (a child present where found, :attr:`SubFiber.present`),
    so several such reads at bound coordinates do not multiply their cases."""
    info, k = f.tensor, f.level
    m = 0 if f.seg is None else f.seg[0]
    pos_b, idx_b = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.crd_of(m))
    t = fiber_tag(info)
    none = Const(0, "int64")
    lo, hi = Var(ctx.fresh(f"q{t}{m}_start")), Var(ctx.fresh(f"q{t}{m}_stop"))
    bounds = (Load(pos_b, f.pos), Load(pos_b, X.add(f.pos, 1))) if f.seg is None else f.seg[1:]
    pre = (Declare(lo, "int64", when_present(f, bounds[0], none)), Declare(hi, "int64", when_present(f, bounds[1], none)))
    last = m + 1 == f.lvl.ndim

    def body(i):
        q = Var(ctx.fresh(f"q{t}{m}"))
        search = [Declare(q, "int64", lower_bound_call(idx_b, lo, hi, i))]
        if not last:
            nxt = Var(ctx.fresh(f"q{t}{m}_next"))
            search.append(Declare(nxt, "int64", lower_bound_call(idx_b, q, hi, X.add(i, 1))))
            return Thunk(tuple(search), Run(SubFiber(info, k, f.pos, f.mode, f.dirty, (m + 1, q, nxt), f.present)))
        found = ir.and_(BinOp("<", q, hi), BinOp("==", Load(idx_b, q), i))
        child = child_fiber(f, q)
        if can_be_absent(child):
            return Thunk(tuple(search), Run(present_where(child, found)))
        return Thunk(tuple(search), Switch((Case(found, Run(child)), Case(Const(True, "bool"), Fill(fill_value(info))))))
    what = "its tuples, none if absent" if not last else "its entry or the fill"
    return Thunk(pre, Lookup(body, f"i -> search {info.name}.lvl{k} mode {m} for i: {what}"))


__all__ = ["present_where", "unfurl_sparse_coo_follow", "unfurl_sparse_list_follow", "unfurl_sparse_list_locate"]
