"""The ``gallop`` protocol of sparse levels as looplets (``A[i, gallop(j)]``): a Jumper whose
leader skips ahead by galloping through the level's coordinates, for SparseList, SparseHash's
sorted view, SparseByteMap, SparseRunList and SparseBlockList.

>>> from compiler.format import csr
>>> from compiler.looplets.looplets import nest_text
>>> from compiler.looplets.fibers import TensorInfo, UnfurlContext
>>> info = TensorInfo.from_format("A", csr())
>>> "Jumper" in nest_text(unfurl_sparse_list_gallop(child_fiber(info.root(), Var("i")), UnfurlContext(), "read"))
True
"""

from __future__ import annotations

from ..errors import StrategyError
from ..imperative.ir import BinOp, CompoundAssign, Const, Declare, Load, Select, Var
from ..imperative.search import gallop_stmts
from . import extents as X
from .fibers import SubFiber, child_fiber, fiber_tag, fill_value
from .looplets import Fill, Jumper, Lookup, Phase, Run, Sequence, Spike, Stepper, Thunk


def gallop_segments(f: SubFiber, ctx, mode, ends: str, exclusive: bool, chunk_of):
    """A leading Jumper over a fiber stored as sorted segments (Looplets paper, Figure 6a).

    Segment ``q`` of the fiber ends at ``ends[q]`` (``ends`` the kind of a level's array) (exclusive) or ``ends[q] + 1``
    (``exclusive`` False: a SparseList entry) and ``chunk_of(q)`` is its looplet from the
    previous segment's end (a Spike for an entry, fill then a Run for a run, fill then the
    block). Coiterated with other jumpers the largest current end sets the step; a fiber
    whose segment ends the step contributes its chunk, the others skip ahead by galloping
    search (``gallop_stmts``) and step over what lies inside (a Stepper). Two galloping
    fibers intersect by mutual lookahead instead of a two-finger merge.
    """
    if mode != "read":
        raise StrategyError(f"output {f.tensor.name}: gallop is a read protocol")
    info, k = f.tensor, f.level
    pos_b, ends_b = info.array(k, f.lvl.starts_array), info.array(k, ends)
    t = fiber_tag(info)
    q, q_stop, last, j = (Var(ctx.fresh(n)) for n in (f"q{t}", f"q{t}_stop", f"last{t}", f"j{t}"))
    end_of = (lambda e: e) if exclusive else (lambda e: X.add(e, 1))  # noqa: E731
    pre = (Declare(q, "int64", Load(pos_b, f.pos)),
           Declare(q_stop, "int64", Load(pos_b, X.add(f.pos, 1))),
           Declare(last, "int64", Select(BinOp("<", q, q_stop), end_of(Load(ends_b, X.sub(q_stop, 1))),
                                         Const(0, "int64"))))
    # the first segment ending after `start`: its stored end is >= start (+ 1 when exclusive)
    seek = lambda start: tuple(gallop_stmts(q, ends_b, q_stop, end_of(start) if exclusive else start,  # noqa: E731
                                            ctx.fresh))
    chunk = chunk_of(q)
    nxt = (CompoundAssign("+", q, Const(1, "int64")),)

    def body(full):
        if full:
            return chunk
        j2 = Var(ctx.fresh(f"j{t}"))
        return Stepper(seek=seek, stop=j2, chunk=chunk, next=nxt,
                       preamble=(Declare(j2, "int64", end_of(Load(ends_b, q))),))
    jumper = Jumper(seek=seek, stop=j, body=body, next=nxt, preamble=(Declare(j, "int64", end_of(Load(ends_b, q))),))
    return Thunk(pre, Sequence((Phase(last, jumper), Phase(None, Fill(fill_value(info))))))


def unfurl_sparse_list_gallop(f: SubFiber, ctx, mode, child_of=None):
    """SparseList read, ``gallop`` protocol: entries as segments ending at ``idx[q] + 1``,
    each a Spike (``child_of(q)`` maps an entry to its child; SparseHash reads via ``ptr``)."""
    child_of = child_of or (lambda q: q)
    return gallop_segments(f, ctx, mode, f.lvl.crd_array, False,
                           lambda q: Spike(Fill(fill_value(f.tensor)), child_fiber(f, child_of(q))))


def unfurl_sparse_hash_gallop(f: SubFiber, ctx, mode):
    """SparseHash read, ``gallop``: its sorted view as a SparseList, each entry's child in the
    level's :attr:`~compiler.levels.Level.child_array` (``ptr``)."""
    child = f.tensor.array(f.level, f.lvl.child_array)
    return unfurl_sparse_list_gallop(f, ctx, mode, lambda q: Load(child, q))


def unfurl_sparse_byte_map_gallop(f: SubFiber, ctx, mode):
    """SparseByteMap read, ``gallop``: its sorted coordinates ``srt`` as a SparseList."""
    info, k = f.tensor, f.level
    srt_b = info.array(k, f.lvl.crd_array)
    base = Const(0, "int64") if isinstance(f.pos, Const) and f.pos.value == 0 else \
        BinOp("*", f.pos, info.size(info.storage_mode(k)))
    return gallop_segments(f, ctx, mode, f.lvl.crd_array, False,
                           lambda q: Spike(Fill(fill_value(info)), child_fiber(f, X.add(base, Load(srt_b, q)))))


def unfurl_sparse_run_list_gallop(f: SubFiber, ctx, mode):
    """SparseRunList read, ``gallop``: runs as segments ending at ``right[q]``, each fill
    up to ``left[q]`` then a Run of its child."""
    left_b = f.tensor.array(f.level, f.lvl.run_start_array)
    fill = Fill(fill_value(f.tensor))
    return gallop_segments(f, ctx, mode, f.lvl.run_end_array, True,
                           lambda q: Sequence((Phase(Load(left_b, q), fill), Phase(None, Run(child_fiber(f, q))))))


def unfurl_sparse_block_list_gallop(f: SubFiber, ctx, mode):
    """SparseBlockList read, ``gallop``: blocks as segments ending at ``idx[q]``, each fill
    up to the block's start then the block by random access."""
    info, k = f.tensor, f.level
    idx_b, ofs_b = (info.array(k, n) for n in f.lvl.appends_blocks)
    fill = Fill(fill_value(info))

    def chunk(q):
        q0 = Load(ofs_b, q)
        lo = X.sub(Load(idx_b, q), X.sub(Load(ofs_b, X.add(q, 1)), q0))
        look = Lookup(lambda i: child_fiber(f, X.add(X.sub(q0, lo), i)), f"i -> {info.name}.lvl{k + 1}[block + i]")
        return Sequence((Phase(lo, fill), Phase(None, look)))
    return gallop_segments(f, ctx, mode, f.lvl.appends_blocks[0], True, chunk)
