"""How the looplets strategy writes each output level format: the output protocol of a level.

A level's update unfurl (:mod:`compiler.looplets.levels`) says how a kernel writes one fiber; its
:class:`LevelWriter` says what surrounds those writes: the kernel parameters of an output whose
first level that is not Dense it is (buffers, out scalars, growing arrays), how the output is
declared (its counts restarted, a hash's table emptied, a block list's first start set) and
frozen (its starts carried past fibers never written, a hash's keys sorted, a byte map's marks
listed, a run list's empty fibers given a run of the fill), which of its arrays a copy may
reserve room in, and whether the runtime can start it clear. Writers are registered per level
class (:func:`register_output`) and found as the unfurls are, through the class's bases
(:func:`writer_for`), so a subclass is written as its parent and a new format is written once it
registers an unfurl and a writer; the strategy's central modules ask these, never a level's class.

>>> from compiler.levels import Element, SparseBand
>>> class MyBand(SparseBand):
...     name = "MyBand"
>>> writer_for(MyBand(Element(0.0))) is writer_for(SparseBand(Element(0.0)))
True
>>> from compiler.format import parse_format
>>> from compiler.looplets.fibers import TensorInfo
>>> info = TensorInfo("C", parse_format("csr"), "output")
>>> [p.name for p in writer_for(info.levels[1]).params(info, 1)]
['C1_pos', 'C1_nnz', 'C1_idx', 'C_val']
"""

from __future__ import annotations

from ..binding import array_name
from ..errors import StrategyError
from ..imperative import ir
from ..imperative.ir import (Assign as IAssign, BinOp, Buffer, CompoundAssign, Const, Declare, Growable, If, Load,
                             OutScalar, Store, Var, While)
from ..imperative.sorting import bit_sort_words, sort_coordinates_ir
from ..levels import (Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseCOO, SparseHash,
                      SparseList, SparsePoint, SparseRunList)
from . import extents as X
from .assembly import (Nested, declare_stmts as nested_declare, empty_table_stmts, freeze_stmts as nested_freeze,
                       nested_levels)
from .errors import ProgramError
from .levels import dense_block, for_class, not_fill
from .simplify import same_literal
from .stored_fills import drop_stored_fills_stmts


def value_text(v) -> str:
    """A fill or value as a message shows it (a numpy scalar as its Python value).

    >>> import numpy as np
    >>> value_text(np.float64(0.5)), value_text(3)
    ('0.5', '3')
    """
    return str(v.item() if hasattr(v, "item") else v)


def product(terms):
    """The IR product of ``terms`` (1 for none)."""
    out = terms[0] if terms else Const(1, "int64")
    for t in terms[1:]:
        out = BinOp("*", out, t)
    return out


def starts_of(info, k) -> str:
    """The name of level ``k``'s fiber starts in output ``info``'s kernel: the level says which of
    its arrays they are (:attr:`~compiler.levels.level.Level.starts_array`).

    >>> from compiler.format import parse_format
    >>> from compiler.looplets.fibers import TensorInfo
    >>> starts_of(TensorInfo("C", parse_format("csr"), "output"), 1)
    'C1_pos'
    """
    return info.array(k, info.levels[k].starts_array)


def refuse_other_start(info, s, init) -> None:
    """Refuse declaring a sparse output (``s``) to ``init`` other than its fill, naming the line."""
    if isinstance(init, Const) and not (same_literal(init.value, info.fill) or init.value == info.fill):
        raise ProgramError(f"{info.name} is {info.format.shorthand or info.format} with fill "
                           f"{value_text(info.fill)}: it starts at its fill, not at {value_text(init.value)}; "
                           f"give {info.name} the fill {value_text(init.value)} or a dense format", s.line)


def carry_forward(low, info, k) -> tuple:
    """``(fibers, stmts)``: fibers never visited kept start 0, so the running count is carried
    forward over the starts array (a SparseBand's is its ofs; an unvisited fiber keeps band end 0,
    an empty band); ``fibers`` counts the positions of the Dense levels above level ``k``."""
    n = product([info.size(m) for m in range(info.storage_mode(k))])
    p = Var(low.fresh("p"))
    pos = starts_of(info, k)
    return n, [ir.For(p, 0, n, [If(BinOp("<", Load(pos, X.add(p, 1)), Load(pos, p)),
                                   [Store(pos, X.add(p, 1), Load(pos, p))])])]


def dropped_fills(low, info, fibers=None) -> list:
    """The statements that leave out of output ``info`` the entries a write of the fill emptied,
    where a write may leave the fill over a stored entry (:mod:`compiler.looplets.stored_fills`;
    ``fibers``: its first sparse level's, a SparseList's, under Dense levels)."""
    dropping = low.ctx.drops_fills.get(info.name)
    return drop_stored_fills_stmts(info, dropping, low.fresh, fibers) if dropping else []


class LevelWriter:
    """What the looplets strategy needs to write an output whose first level that is not Dense is
    of this writer's format (level ``k``; ``low`` is the :class:`~compiler.looplets.lowerers.Lowerer`,
    with its ``fresh`` names and unfurl context). The defaults are a level appended in order as a
    SparseList is: a count ``nnz`` restarted at 0, its fibers' starts carried forward at the freeze."""

    #: the level marks the slots written in a table of flags (a byte map): the strategy writes one such
    #: level per output, and the runtime can start one clear that is the last level under Dense ones
    marks_table: bool = False
    #: an input of this level counts its stored entries in ``pos[parents]``, each its own child, and an
    #: output of it appends one entry per entry written: a copy may reserve room for them up front
    counts_entries: bool = False
    #: an output of it is appended only in its coordinates' order: a write out of order is refused
    appends_in_order: bool = False
    #: a write enters its entry (locates or inserts it before, keeps it after the writes): two writes of
    #: one entry in one iteration share the entry's looplets, or each would insert it (a hash's key twice)
    enters_entries: bool = False
    #: its freeze can leave out, its storage compacted, an entry whose value a write left the fill (a
    #: hash's key over the leaf), :mod:`compiler.looplets.stored_fills`
    drops_stored_fills: bool = False
    #: ... and an entry whose fiber below that emptied (a hash's key, a SparseList's coordinate)
    drops_emptied_entries: bool = False

    def params(self, info, k) -> tuple | None:
        """The kernel parameters after the output's sizes, or None when this writer cannot write
        the output (the strategy then says what it writes)."""
        return None

    def declare(self, low, info, k, s, init) -> list:
        """The statements of the output's declaration ``s`` (its value ``init``)."""
        if not s.implicit:
            # (an entry a sparse output appends starts at its fill, as in Finch: there is no other start)
            refuse_other_start(info, s, init)
        nested = nested_levels(info)
        below = nested_declare(info, nested, low.fresh) if nested else []
        return self.start(low, info, k, below)

    def start(self, low, info, k, below) -> list:
        """A sparse output's declaration: its counts restart (``below``: the nested levels')."""
        return [IAssign(Var(info.array(k, "nnz")), Const(0, "int64"))] + below

    def freeze(self, low, info, k) -> list:
        """The statements of the output's freeze: :meth:`finish`, then its nested hashes' keys sorted."""
        nested = nested_levels(info) or Nested(k, (), None)
        hashes = []
        for kk in nested.hashed:
            # (a hash under a hash or a SparseList: one fiber per entry above, its sorted view's pos growing)
            fibers = Var(info.array(kk - 1, "nnz"))
            hashes += [ir.Grow(starts_of(info, kk), X.add(fibers, 1)),
                       *writer_for(info.levels[kk]).freeze_keys(low, info, kk, fibers),
                       IAssign(Var(info.array(kk, "npos")), X.add(fibers, 1))]
        return self.finish(low, info, k, nested, hashes)

    def finish(self, low, info, k, nested, hashes) -> list:
        """A sparse output's freeze: its starts carried forward, the entries a write of the fill
        emptied left out (:func:`dropped_fills`), the nested levels' lengths."""
        n, carry = carry_forward(low, info, k)
        return carry + dropped_fills(low, info, n) + nested_freeze(info, nested) + hashes

    def freeze_keys(self, low, info, k, fibers=None) -> list:
        """The freeze of a level written at random under an appended one (``inserts_nested``)."""
        raise StrategyError(f"output {info.name}: level {k} ({info.levels[k].name}) is not inserted under "
                            f"the level above it by the looplet strategy")

    def reserve_arrays(self, info, k) -> tuple:
        """The growing arrays besides the values that one entry per entry written fills (a copy
        reserves room in them up front); none by default."""
        return ()

    def allocate_workspace(self, t, info, n, body) -> tuple | None:
        """``(decls, body)``: a temporary of this level as scratch arrays of ``n`` slots around ``body``,
        or None when the strategy allocates none of it."""
        return None


def _values(info, count) -> list:
    """The values of an output over an Element leaf, growing to ``count``; none over a Pattern."""
    return [Growable(array_name(info.name, None, "vals"), info.dtype, count)] if isinstance(info.leaf, Element) \
        else []


class ListWriter(LevelWriter):
    """A sorted list of coordinates per fiber (SparseList; SparsePoint, a list of at most one)."""

    drops_emptied_entries = True

    def __init__(self, counts_entries: bool, appends_in_order: bool):
        self.counts_entries, self.appends_in_order = counts_entries, appends_in_order

    def params(self, info, k):
        if k != len(info.levels) - 1:
            return None
        lvl, nnz = info.levels[k], array_name(info.name, k, "nnz")
        return (Buffer(starts_of(info, k), lvl.index_dtype.name, "inout"), OutScalar(nnz, "int64"),
                Growable(array_name(info.name, k, lvl.crd_array), lvl.index_dtype.name, nnz), *_values(info, nnz))

    def reserve_arrays(self, info, k):
        return (info.array(k, info.levels[k].crd_array),)


class CoordinateListWriter(LevelWriter):
    """SparseCOO: tuples of coordinates appended in lexicographic order, one array per mode."""

    counts_entries = True

    def params(self, info, k):
        if k != len(info.levels) - 1:
            return None
        lvl, nnz = info.levels[k], array_name(info.name, k, "nnz")
        idt = lvl.index_dtype.name
        return (Buffer(starts_of(info, k), idt, "inout"), OutScalar(nnz, "int64"),
                *(Growable(array_name(info.name, k, lvl.crd_of(d)), idt, nnz) for d in range(lvl.ndim)),
                *_values(info, nnz))

    def reserve_arrays(self, info, k):
        return tuple(info.array(k, info.levels[k].crd_of(d)) for d in range(info.levels[k].ndim))


class BandWriter(LevelWriter):
    """SparseBand: one band per fiber, its start in :attr:`starts_array` and its end in :attr:`appends_band`."""

    def params(self, info, k):
        if k != len(info.levels) - 1 or not isinstance(info.leaf, Element):
            return None
        lvl, nnz = info.levels[k], array_name(info.name, k, "nnz")
        idt = lvl.index_dtype.name
        return (Buffer(starts_of(info, k), idt, "inout"),
                Buffer(array_name(info.name, k, lvl.appends_band), idt, "inout"),
                OutScalar(nnz, "int64"), Growable(array_name(info.name, None, "vals"), info.dtype, nnz))


class BlockWriter(LevelWriter):
    """SparseBlockList: blocks of consecutive coordinates, counted by ``nblk``, their ends and
    starts (:attr:`appends_blocks`) one more than the blocks."""

    def params(self, info, k):
        if k != len(info.levels) - 1:
            return None
        lvl = info.levels[k]
        nnz, nblk, nofs = (array_name(info.name, k, x) for x in ("nnz", "nblk", "nofs"))
        ends, starts = lvl.appends_blocks
        idt = lvl.index_dtype.name
        return (Buffer(starts_of(info, k), idt, "inout"),
                OutScalar(nnz, "int64"), OutScalar(nblk, "int64"), OutScalar(nofs, "int64"),
                Growable(array_name(info.name, k, ends), idt, nblk),
                Growable(array_name(info.name, k, starts), idt, nofs), *_values(info, nnz))

    def start(self, low, info, k, below):
        # (no blocks yet; starts[0] = 0 starts the first)
        ofs = info.array(k, info.levels[k].appends_blocks[1])
        return [IAssign(Var(info.array(k, "nnz")), Const(0, "int64")),
                IAssign(Var(info.array(k, "nblk")), Const(0, "int64")),
                ir.Grow(ofs, Const(1, "int64")), Store(ofs, Const(0, "int64"), Const(0, "int64"))]

    def finish(self, low, info, k, nested, hashes):
        # (the starts hold one more entry than there are blocks)
        return carry_forward(low, info, k)[1] + [IAssign(Var(info.array(k, "nofs")),
                                                         X.add(Var(info.array(k, "nblk")), 1))]


class RunWriter(LevelWriter):
    """RunList and SparseRunList: runs of equal values, each's end in :attr:`run_end_array` and, for
    a level that is not full, its start in :attr:`run_start_array`; a full level covers each fiber."""

    def params(self, info, k):
        if k != len(info.levels) - 1 or not isinstance(info.leaf, Element):
            return None
        lvl, nnz = info.levels[k], array_name(info.name, k, "nnz")
        idt = lvl.index_dtype.name
        ends = tuple(a for a in (lvl.run_start_array, lvl.run_end_array) if a is not None)
        return (Buffer(starts_of(info, k), idt, "inout"), OutScalar(nnz, "int64"),
                *(Growable(array_name(info.name, k, e), idt, nnz) for e in ends),
                Growable(array_name(info.name, None, "vals"), info.dtype, nnz))

    def finish(self, low, info, k, nested, hashes):
        if not info.levels[k].full:
            return super().finish(low, info, k, nested, hashes)
        n, carry = carry_forward(low, info, k)
        return carry + freeze_run_list(low, info, k, n)


class HashWriter(LevelWriter):
    """SparseHash: keys ``parent * size + i`` inserted at random in a table, sorted at the freeze."""

    enters_entries = True
    drops_stored_fills = True
    drops_emptied_entries = True

    def params(self, info, k):
        if k != len(info.levels) - 1 or not isinstance(info.leaf, Element):
            return None
        lvl = info.levels[k]
        nnz, cap = array_name(info.name, k, "nnz"), array_name(info.name, k, "cap")
        idt = lvl.index_dtype.name
        return (Buffer(starts_of(info, k), idt, "inout"),
                OutScalar(nnz, "int64"), OutScalar(cap, "int64"),
                Growable(array_name(info.name, k, lvl.keys_in_table[0]), "int64", nnz),
                Growable(array_name(info.name, k, lvl.keys_in_table[1]), "int64", cap),
                Growable(array_name(info.name, k, lvl.crd_array), idt, nnz),
                Growable(array_name(info.name, k, lvl.child_array), idt, nnz),
                Growable(array_name(info.name, None, "vals"), info.dtype, nnz))

    def start(self, low, info, k, below):
        # an empty table of the smallest capacity (each hash's)
        return empty_table_stmts(info, k, low.fresh) + below

    def finish(self, low, info, k, nested, hashes):
        return dropped_fills(low, info) + self.freeze_keys(low, info, k) + hashes

    def freeze_keys(self, low, info, k, fibers=None):
        return freeze_hash(low, info, k, fibers)


class ByteMapWriter(LevelWriter):
    """SparseByteMap: a slot per coordinate and a flag per slot; its freeze lists the flagged slots.
    Written under Dense levels (or alone), one per output; a temporary one is a workspace."""

    marks_table = True

    def params(self, info, k):
        if not all(lvl.slot_per_coordinate for lvl in info.levels) or not isinstance(info.leaf, Element):
            return None
        lvl, nnz = info.levels[k], array_name(info.name, k, "nnz")
        return (Buffer(starts_of(info, k), lvl.index_dtype.name, "inout"),
                Buffer(array_name(info.name, k, lvl.mark_array), "bool", "inout"),
                OutScalar(nnz, "int64"),
                Growable(array_name(info.name, k, lvl.crd_array), lvl.index_dtype.name, nnz),
                Buffer(array_name(info.name, None, "vals"), info.dtype, "inout"))

    def declare(self, low, info, k, s, init):
        if info.role == "temporary" and k == 0:
            return declare_workspace(low, info, s, init)
        if not all(lvl.slot_per_coordinate for lvl in info.levels):
            return super().declare(low, info, k, s, init)
        if s.implicit:
            return []  # the runtime pre-fills the values and clears the byte tables
        # (its freeze keeps only the slots written: the others read as the fill, not as init)
        refuse_other_start(info, s, init)
        first, low.ctx.reset = info.name in low.ctx.reset, low.ctx.reset - {info.name}
        if first and isinstance(init, Const):
            # (the runtime starts it clear, as an output not declared: a fresh table, or an earlier
            # result's given back, whose entries alone it clears; compiler.reused_outputs; a later
            # declaration, in a loop, is the kernel's. The byte map is the last level, under Dense
            # ones or alone: compiler.looplets.reset_outputs)
            low.ctx.was_reset.add(info.name)
            low.ctx.listed.add(info.name)
            note_order(low, info, s)
            return [IAssign(Var(info.array(k, "nnz")), Const(0, "int64"))]
        n = product([info.size(m) for m in range(info.ndim)])
        p = Var(low.fresh("p"))
        out = [ir.For(p, 0, n, [Store(info.array(None, "vals"), p, init)])]
        nt = product([info.size(m) for m in range(info.storage_mode(k) + 1)])
        p2 = Var(low.fresh("p"))
        out += [ir.For(p2, 0, nt, [Store(info.array(k, info.levels[k].mark_array), p2, Const(False, "bool"))])]
        if k == len(info.levels) - 1 and isinstance(info.leaf, Element):
            # (its table is clear: the writes list the slots they mark, from none)
            low.ctx.listed.add(info.name)
            note_order(low, info, s)
            out.append(IAssign(Var(info.array(k, "nnz")), Const(0, "int64")))
        return out

    def freeze(self, low, info, k):
        if info.role == "temporary":
            return freeze_workspace(low, info)
        if info.name in low.ctx.listed:
            low.ctx.listed.discard(info.name)
            ordered = info.name in low.ctx.ordered
            low.ctx.ordered.discard(info.name)
            return freeze_listed_byte_map(low, info, k, ordered)
        return freeze_byte_map(low, info, k)

    def allocate_workspace(self, t, info, n, body):
        """A workspace vector: flags (the level's ``mark_array``, ``tbl``), the coordinates written
        since its declaration (``crd_array``, ``srt``), in write order until it is frozen, ``tmp``,
        ``bits`` and ``sum`` scratch for sorting them, the starts (``starts_array``) and the local
        count ``nnz``."""
        if len(info.levels) != 1:
            return None
        decls = [ir.Declare(Var(array_name(t, 0, "nnz")), "int64", Const(0, "int64"))]
        idt = info.levels[0].index_dtype.name
        nwords, nsummary = bit_sort_words(n)
        body = [ir.Allocate(array_name(t, 0, info.levels[0].starts_array), idt, 2, Const(0, "int64"), body)]
        body = [ir.Allocate(array_name(t, 0, "sum"), "int64", nsummary, Const(0, "int64"), body)]
        body = [ir.Allocate(array_name(t, 0, "bits"), "int64", nwords, Const(0, "int64"), body)]
        body = [ir.Allocate(array_name(t, 0, "tmp"), idt, n, None, body)]
        body = [ir.Allocate(array_name(t, 0, info.levels[0].crd_array), idt, n, None, body)]
        body = [ir.Allocate(array_name(t, 0, info.levels[0].mark_array), "bool", n, Const(False, "bool"), body)]
        return decls, body


#: level class -> its writer (see :func:`writer_for`)
WRITERS: dict[type, LevelWriter] = {}


def register_output(cls: type, writer: LevelWriter) -> None:
    """Register how the looplets strategy writes outputs of level class ``cls`` (with its update
    unfurl, :func:`compiler.looplets.levels.register_unfurl`); its subclasses inherit it."""
    WRITERS[cls] = writer


def writer_for(lvl) -> LevelWriter | None:
    """The writer of level ``lvl``'s class or of its nearest registered base (None if none)."""
    return for_class(WRITERS, type(lvl))


def writer_of(info, k) -> LevelWriter:
    """The writer of level ``k`` of output ``info``, or a StrategyError naming the output and the level."""
    lvl = info.levels[k]
    writer = writer_for(lvl)
    if writer is None:
        raise StrategyError(f"output {info.name}: level {k} ({lvl.name}) has no looplet writer (register one with "
                            f"compiler.looplets.level_writers.register_output); the looplet strategy writes "
                            f"{', '.join(c.__name__ for c in WRITERS)} levels under Dense ones")
    return writer


def appends_in_order(lvl) -> bool:
    """Whether an output level ``lvl`` is appended only in its coordinates' order (a SparseList)."""
    writer = writer_for(lvl)
    return writer is not None and writer.appends_in_order


def enters_entries(lvl) -> bool:
    """Whether a write of output level ``lvl`` enters its entry, which two writes of it in one
    iteration share: a level appended in order (a SparseList) or keyed in a table (a SparseHash)."""
    writer = writer_for(lvl)
    return writer is not None and (writer.appends_in_order or writer.enters_entries)


def fill_dropping(info) -> tuple:
    """``(levels, keeper)``: the levels of output ``info`` whose freeze can leave out an entry a write
    of the fill emptied, its last level first and then each level above that can too (an empty
    fiber's entry), and the first sparse level above them that cannot (it keeps that entry), or None.

    >>> from compiler.format import Format
    >>> from compiler.levels import Dense, SparseHash, SparseList
    >>> from compiler.looplets.fibers import TensorInfo
    >>> [fill_dropping(TensorInfo("C", Format(f(Element(0.0))), "output")) for f in (
    ...     lambda x: SparseHash(SparseHash(x)), lambda x: Dense(SparseList(SparseHash(x))),
    ...     lambda x: SparseBand(SparseHash(x)), SparseList)]
    [((1, 0), None), ((2, 1), None), ((1,), 0), ((), None)]
    """
    levels = info.levels
    k, out = len(levels) - 1, []

    def drops(k):   # (the last level an entry holding the fill, each level above an entry whose fiber emptied)
        writer = writer_for(levels[k]) or LevelWriter
        return writer.drops_emptied_entries if out else writer.drops_stored_fills
    while isinstance(info.leaf, Element) and k >= 0 and drops(k):
        out.append(k)
        k -= 1
    keeper = k if out and k >= 0 and not levels[k].slot_per_coordinate else None
    return tuple(out), keeper


def marks_table(lvl) -> bool:
    """Whether level ``lvl`` is written as a table of marked slots (a byte map)."""
    writer = writer_for(lvl)
    return writer is not None and writer.marks_table


# --- the freezes of the levels that keep tables or runs --------------------------------------------

def freeze_run_list(low, info, k, n) -> list:
    """A RunList fiber covers its whole extent: each fiber never written (a row a sieve
    skipped) gets one fill run, moving the runs after it up, from the last fiber down."""
    size = info.size(info.storage_mode(k))
    nnz = Var(info.array(k, "nnz"))
    pos, right, vals = starts_of(info, k), info.array(k, info.levels[k].run_end_array), info.array(None, "vals")
    extra, w, p, lo, hi, q = (Var(low.fresh(x)) for x in ("extra", "w", "p", "lo", "hi", "q"))
    one, zero = Const(1, "int64"), Const(0, "int64")
    empty = lambda at: BinOp("==", Load(pos, X.add(at, 1)), Load(pos, at))  # noqa: E731
    move = [Declare(hi, "int64", Load(pos, X.add(p, 1))), Declare(lo, "int64", Load(pos, p)),
            Store(pos, X.add(p, 1), w),
            If(BinOp("==", hi, lo),
               [CompoundAssign("-", w, one), Store(right, w, size),
                Store(vals, w, Const(info.fill, info.dtype))],
               [Declare(q, "int64", hi),
                While(BinOp(">", q, lo), [CompoundAssign("-", q, one), CompoundAssign("-", w, one),
                                          Store(right, w, Load(right, q)), Store(vals, w, Load(vals, q))])])]
    insert = [ir.Grow(right, X.add(nnz, extra)), ir.Grow(vals, X.add(nnz, extra)),
              Declare(w, "int64", X.add(nnz, extra)), Declare(p, "int64", n),
              While(BinOp(">", p, zero), [CompoundAssign("-", p, one)] + move),
              CompoundAssign("+", nnz, extra)]
    return [If(BinOp(">", size, zero), [
        Declare(extra, "int64", zero),
        ir.For(p, 0, n, [If(empty(p), [CompoundAssign("+", extra, one)])]),
        If(BinOp(">", extra, zero), insert)])]


def freeze_hash(low, info, k, fibers=None) -> list:
    """Sort the inserted keys into ``pos``/``idx``/``ptr`` in linear time: a counting sort
    by coordinate, then a stable one by fiber (LSD radix sort over (fiber, coordinate));
    ``fibers``: how many (the parent's positions; by default the Dense levels' above)."""
    n = fibers if fibers is not None else product([info.size(m) for m in range(info.storage_mode(k))])
    size = info.size(info.storage_mode(k))
    nnz = Var(info.array(k, "nnz"))
    lvl = info.levels[k]
    key, pos, idx, ptr = (info.array(k, x) for x in ("key", lvl.starts_array, lvl.crd_array, lvl.child_array))
    cnt, order, cur = (low.fresh(x) for x in ("cnt", "order", "cur"))
    q, r, c, p, t, acc, e = (Var(low.fresh(x)) for x in ("q", "r", "c", "p", "t", "acc", "e"))
    one = Const(1, "int64")
    coord = lambda kk: BinOp("%", kk, size)  # noqa: E731
    fiber = lambda kk: BinOp("/", kk, size)  # noqa: E731
    by_coord = [
        ir.For(q, 0, nnz, [Store(cnt, X.add(coord(Load(key, q)), 1), one, "+")]),
        ir.For(c, 0, size, [Store(cnt, X.add(c, 1), Load(cnt, c), "+")]),
        ir.For(q, 0, nnz, [Declare(e, "int64", coord(Load(key, q))),
                           Store(order, Load(cnt, e), q), Store(cnt, e, one, "+")]),
    ]
    by_fiber = [
        ir.For(p, 0, X.add(n, 1), [Store(pos, p, Const(0, "int64"))]),  # counts start at zero
        ir.For(q, 0, nnz, [Store(pos, X.add(fiber(Load(key, q)), 1), one, "+")]),
        ir.For(p, 0, n, [Store(pos, X.add(p, 1), Load(pos, p), "+"), Store(cur, p, Load(pos, p))]),
        ir.Grow(idx, nnz), ir.Grow(ptr, nnz),
        ir.For(r, 0, nnz, [Declare(t, "int64", Load(order, r)),
                           Declare(acc, "int64", Load(cur, fiber(Load(key, t)))),
                           Store(idx, acc, coord(Load(key, t))), Store(ptr, acc, t),
                           Store(cur, fiber(Load(key, t)), one, "+")]),
    ]
    return [ir.Allocate(cnt, "int64", X.add(size, 1), Const(0, "int64"), [
        ir.Allocate(order, "int64", nnz, None, by_coord + [
            ir.Allocate(cur, "int64", n, None, by_fiber)])])]


def declare_workspace(low, info, s, init) -> list:
    """A SparseByteMap workspace re-assembles only its dirty locations (Finch §3.3.2)."""
    from .program import Literal as PLiteral
    if not (isinstance(s.init, PLiteral) and same_literal(s.init.value, info.fill)):
        raise ProgramError(f"temporary {info.name} is a SparseByteMap workspace: declare it with its fill "
                           f"value ({info.fill}), e.g. {info.name}[...] = {info.fill}", s.line)
    nnz = Var(info.array(0, "nnz"))
    t = Var(low.fresh("t"))
    lvl = info.levels[0]
    srt, tbl, vals = info.array(0, lvl.crd_array), info.array(0, lvl.mark_array), info.array(None, "vals")
    return [ir.For(t, 0, nnz, [Store(tbl, Load(srt, t), Const(False, "bool")),
                               Store(vals, Load(srt, t), init)]),
            IAssign(nnz, Const(0, "int64"))]


def freeze_workspace(low, info) -> list:
    """Sort the workspace's written coordinates (as the lattice strategy's workspaces do:
    :func:`~compiler.imperative.sorting.sort_coordinates_ir`), then set ``pos``."""
    nnz, n = Var(info.array(0, "nnz")), info.size(0)
    lvl = info.levels[0]
    srt, tbl, pos, tmp, bits, summary = (info.array(0, x) for x in (lvl.crd_array, lvl.mark_array, lvl.starts_array,
                                                                    "tmp", "bits", "sum"))
    fresh = lambda base: Var(low.fresh(base))  # noqa: E731
    return sort_coordinates_ir(srt, tmp, nnz, n, tbl, fresh, "j", bits, summary) + [
        Store(pos, Const(0, "int64"), Const(0, "int64")), Store(pos, Const(1, "int64"), nnz)]


def note_order(low, info, s) -> None:
    """Note whether the writes after the declaration ``s`` of a listed byte map come in its
    coordinates' order (so its freeze need not sort the list)."""
    if low.ctx.in_order.get(s, False) and len(info.levels) == 1:
        low.ctx.ordered.add(info.name)
    else:
        low.ctx.ordered.discard(info.name)


def freeze_listed_byte_map(low, info, k, ordered: bool = False) -> list:
    """Sort the slots a declared byte map (its last level) listed as it marked them, keep those not
    written the fill, and give each fiber its coordinates and ``pos``: the cost of its entries,
    not of its slots (a BFS frontier of a few vertices among many), as Finch's freeze sorts its
    ``srt``. The sort (:func:`~compiler.imperative.sorting.sort_coordinates_ir`) scans the table
    instead when the slots listed are many; ``ordered``: the writes listed them in order (one loop
    writing the element it visits, :mod:`compiler.looplets.write_order`), so nothing is sorted."""
    fibers = product([info.size(m) for m in range(info.storage_mode(k))])
    size = info.size(info.storage_mode(k))
    one_fiber = isinstance(fibers, Const) and fibers.value == 1
    slots = size if one_fiber else BinOp("*", fibers, size)
    nnz = Var(info.array(k, "nnz"))
    lvl = info.levels[k]
    tbl, srt, pos = (info.array(k, x) for x in (lvl.mark_array, lvl.crd_array, lvl.starts_array))
    vals = info.array(None, "vals")
    tmp, words, summary = low.fresh("tmp"), low.fresh("words"), low.fresh("summary")
    fresh = lambda base: Var(low.fresh(base))  # noqa: E731
    nwords, nsummary = bit_sort_words(slots)
    one, zero = Const(1, "int64"), Const(0, "int64")
    if ordered and one_fiber:
        sort = [ir.Comment(f"{srt}[0:{nnz.name}] is in order already: one loop listed each coordinate as it "
                           f"visited it")]
    else:
        # (each scratch array in the branch that uses it: a round of a few vertices allocates none)
        scratch = {words: ("int64", nwords, zero), summary: ("int64", nsummary, zero),
                   tmp: ("int64", X.add(nnz, 1), None)}
        sort = sort_coordinates_ir(srt, tmp, nnz, slots, tbl, fresh, "j", words, summary, scratch)
    # (a slot written its fill is no entry, as a SparseList output keeps none: unmarked)
    t, w, s = Var(low.fresh("t")), Var(low.fresh("kept")), Var(low.fresh("slot"))
    keep = [Declare(w, "int64", zero),
            ir.For(t, 0, nnz, [Declare(s, "int64", Load(srt, t)),
                               If(not_fill(info, Load(vals, s)), [Store(srt, w, s), CompoundAssign("+", w, one)],
                                  [Store(tbl, s, Const(False, "bool"))])]),
            IAssign(nnz, w)]
    if one_fiber:   # its slots are its coordinates
        return [ir.Grow(srt, X.add(nnz, 1))] + sort + keep + [Store(pos, one, nnz)]
    # the slots of fiber f are f * size + i: pos[f] is where its first is, srt keeps the i
    p, f = Var(low.fresh("p")), Var(low.fresh("f"))
    split = [Declare(p, "int64", zero),
             ir.For(t, 0, nnz, [Declare(s, "int64", Load(srt, t)), Declare(f, "int64", BinOp("/", s, size)),
                                While(BinOp("<", p, f), [Store(pos, X.add(p, 1), t), CompoundAssign("+", p, one)]),
                                Store(srt, t, BinOp("-", s, BinOp("*", f, size)))]),
             While(BinOp("<", p, fibers), [Store(pos, X.add(p, 1), nnz), CompoundAssign("+", p, one)])]
    return [ir.Grow(srt, X.add(nnz, 1))] + sort + keep + split


def freeze_byte_map(low, info, k) -> list:
    """List the marked coordinates of each fiber in ``srt``, in order, and set ``pos``."""
    n = product([info.size(m) for m in range(info.storage_mode(k))])
    size = info.size(info.storage_mode(k))
    nnz = Var(info.array(k, "nnz"))
    lvl = info.levels[k]
    tbl, srt, pos = (info.array(k, x) for x in (lvl.mark_array, lvl.crd_array, lvl.starts_array))
    p, j = Var(low.fresh("p")), Var(low.fresh("j"))
    slot = X.add(BinOp("*", p, size), j)
    listed = [ir.Grow(srt, X.add(nnz, 1)), Store(srt, nnz, j), CompoundAssign("+", nnz, Const(1, "int64"))]
    block = dense_block(info, k + 1)
    if k == len(info.levels) - 1 and isinstance(info.leaf, Element):
        # a slot written its fill is no entry (as a SparseList output keeps none): unmarked
        listed = [If(not_fill(info, Load(info.array(None, "vals"), slot)), listed,
                     [Store(tbl, slot, Const(False, "bool"))])]
    elif block is not None:   # (likewise a slot whose block of Dense values is all the fill)
        keep, r = Var(low.fresh("keep")), Var(low.fresh("r"))
        lo = BinOp("*", slot, block)
        listed = [Declare(keep, "bool", Const(False, "bool")),
                  ir.For(r, lo, X.add(lo, block), [If(not_fill(info, Load(info.array(None, "vals"), r)),
                                                      [IAssign(keep, Const(True, "bool"))])]),
                  If(keep, listed, [Store(tbl, slot, Const(False, "bool"))])]
    return [IAssign(nnz, Const(0, "int64")),
            ir.For(p, 0, n, [
                ir.For(j, 0, size, [If(Load(tbl, slot), listed)]),
                Store(pos, X.add(p, 1), nnz)])]


register_output(SparseList, ListWriter(counts_entries=True, appends_in_order=True))
register_output(SparsePoint, ListWriter(counts_entries=False, appends_in_order=False))
register_output(SparseCOO, CoordinateListWriter())
register_output(SparseBand, BandWriter())
register_output(SparseBlockList, BlockWriter())
register_output(RunList, RunWriter())
register_output(SparseRunList, RunWriter())   # (and SparseInterval, a SparseRunList of one run per fiber)
register_output(SparseHash, HashWriter())
register_output(SparseByteMap, ByteMapWriter())
