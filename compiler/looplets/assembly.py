"""Sparse outputs nested under an appended level: DCSR, CSF and SparseList(Dense).

The first sparse level of an output (under Dense levels) keeps a ``pos`` buffer the runtime
allocates, one entry per parent position. A level below it is appended as its parent's
entries are: a SparseList there (the level says ``appends_nested``) grows its ``pos`` with
its parent's entries, a fiber starting where the one before it ended; Dense levels down to an
Element leaf (a sparse-over-dense output) give each entry a block of values, filled with the
fill when the entry opens and dropped when no value of it differs from the fill; SparseHash
levels under it or under a SparseHash (``inserts_nested``) key their tables by the position of
the entry above, so their writes come in any order. This module
says which outputs nest so (:func:`nested_levels`), and gives their parameters, their declare
and their freeze; the appends themselves are the levels' (``looplets.levels``).

>>> from compiler.format import parse_format
>>> from compiler.looplets.fibers import TensorInfo
>>> plan = nested_levels(TensorInfo("C", parse_format("dcsr"), "output"))
>>> plan.appended, plan.block
((1,), None)
>>> print("\\n".join(str(s) for s in declare_stmts(TensorInfo("C", parse_format("dcsr"), "output"), plan, str)))
C1_nnz = 0;
grow C1_pos to 1;
C1_pos[0] = 0;
"""

from __future__ import annotations

from dataclasses import dataclass

from ..binding import array_name
from ..errors import StrategyError
from ..imperative import ir
from ..imperative.ir import BinOp, Buffer, Const, Growable, OutScalar, Var
from ..levels import Element
from .fibers import TensorInfo
from .levels import dense_block


@dataclass(frozen=True)
class Nested:
    """The output's first sparse level ``top``, the levels appended below it (``appended``) and
    the first level of a Dense block down to the leaf (``block``, or None)."""

    top: int
    appended: tuple
    block: int | None
    #: levels inserted at random under the level above (a SparseHash under a SparseHash)
    hashed: tuple = ()


def nested_levels(info: TensorInfo) -> Nested | None:
    """How ``info``'s levels below its first sparse one are assembled (None when none are: the
    sparse level is the last, or the output is all Dense). Refuses, naming the level and why,
    an output whose lower levels cannot be appended so."""
    levels = info.levels
    top = next((k for k, lvl in enumerate(levels) if not (lvl.slot_per_coordinate and not lvl.array_dtypes())),
               None)
    if top is None or top == len(levels) - 1:
        return None
    if levels[top].inserts_nested and all(lvl.inserts_nested for lvl in levels[top + 1:]):
        return Nested(top, (), None, tuple(range(top + 1, len(levels))))
    if not levels[top].appends_nested:
        return None   # (its own unfurl says what it takes below it: the leaf, mostly)
    appended, k = [], top + 1
    while k < len(levels):
        lvl, parent = levels[k], levels[k - 1]
        if dense_block(info, k) is not None:
            return Nested(top, tuple(appended), k)
        if all(below.inserts_nested for below in levels[k:]):   # (hashes keyed by the entries above)
            return Nested(top, tuple(appended), None, tuple(range(k, len(levels))))
        if ends_under_appended(levels, k, info.leaf):   # (the innermost level, its runs, band or blocks per entry)
            return Nested(top, tuple(appended) + (k,), None)
        if not lvl.appends_nested:   # (its parent is: the top level or one appended below it)
            why = (f"under an appended level the looplet strategy appends SparseList levels (a fiber after the one "
                   f"before) or Dense levels down to an Element leaf (a block of values per entry), and "
                   f"{lvl.name} is neither")
            raise StrategyError(f"output {info.name} ({info.format}): the looplet strategy cannot assemble level {k} "
                                f"({lvl.name}) under level {k - 1} ({parent.name}): {why}")
        appended.append(k)
        k += 1
    return Nested(top, tuple(appended), None)


def runs_under_appended(levels: tuple, k: int, leaf) -> bool:
    """Whether level ``k`` of ``levels`` is a run-length level that stores only its runs
    (``appends_runs``, not full: SparseRunList, SparseInterval) as the innermost level over an Element
    leaf: under an appended level its fibers are appended as a SparseList's are, each entry above
    getting the runs written under it (a fiber that gets none keeps its parent's entry out).

    >>> from compiler.levels import RunList, SparseList, SparseRunList
    >>> rows = SparseList(SparseRunList(Element(0.0)))
    >>> runs_under_appended((rows, rows.child), 1, Element(0.0))
    True
    >>> runs_under_appended((rows, RunList(Element(0.0))), 1, Element(0.0))   # (a gap would be a run of the fill)
    False
    """
    lvl = levels[k]
    return k == len(levels) - 1 and lvl.appends_runs and not lvl.full and isinstance(leaf, Element)


def band_under_appended(levels: tuple, k: int, leaf) -> bool:
    """Whether level ``k`` of ``levels`` stores a band per fiber (``appends_band``: SparseBand) as the
    innermost level over an Element leaf: under an appended level each entry above gets its band as
    its fiber (its start in ``ofs``, its end in ``idx``, one per entry), kept once the band holds a value.

    >>> from compiler.levels import SparseBand, SparseList
    >>> rows = SparseList(SparseBand(Element(0.0)))
    >>> band_under_appended((rows, rows.child), 1, Element(0.0)), band_under_appended((rows.child,), 0, None)
    (True, False)
    """
    return k == len(levels) - 1 and levels[k].appends_band is not None and isinstance(leaf, Element)


def blocks_under_appended(levels: tuple, k: int, leaf) -> bool:
    """Whether level ``k`` of ``levels`` stores each fiber as blocks (``appends_blocks``:
    SparseBlockList) as the innermost level over an Element leaf: under an appended level each
    entry above gets its blocks as its fiber (``pos`` growing with the entries, the blocks' ends and
    starts with the blocks), kept once a block holds a value.

    >>> from compiler.levels import SparseBlockList, SparseList
    >>> rows = SparseList(SparseBlockList(Element(0.0)))
    >>> blocks_under_appended((rows, rows.child), 1, Element(0.0))
    True
    """
    return k == len(levels) - 1 and levels[k].appends_blocks is not None and isinstance(leaf, Element)


def ends_under_appended(levels: tuple, k: int, leaf) -> bool:
    """Whether level ``k`` is appended innermost under an appended level as its runs
    (:func:`runs_under_appended`), its band (:func:`band_under_appended`) or its blocks
    (:func:`blocks_under_appended`) per entry above."""
    return any(f(levels, k, leaf) for f in (runs_under_appended, band_under_appended, blocks_under_appended))


def coordinate_kinds(lvl) -> tuple:
    """``(kind, length)`` of the growing arrays of an appended level besides its starts, ``length``
    the count they hold: a SparseList's coordinates or each run's start and end (``run_start_array``,
    ``run_end_array``), one per entry (``nnz``); a band's end (``appends_band``), one per entry above
    (``fibers``); a block list's ends and starts (``appends_blocks``), one per block (``nblk``) and one
    more (``nofs``)."""
    if lvl.appends_band is not None:
        return ((lvl.appends_band, "fibers"),)
    if lvl.appends_blocks is not None:
        ends, starts = lvl.appends_blocks
        return ((ends, "nblk"), (starts, "nofs"))
    if lvl.appends_runs:
        return tuple((a, "nnz") for a in (lvl.run_start_array, lvl.run_end_array) if a is not None)
    return ((lvl.crd_array, "nnz"),)


def _nnz(info, k):
    return array_name(info.name, k, "nnz")


def output_params(info: TensorInfo, plan: Nested) -> tuple:
    """The kernel parameters of a nested output: the sizes, the top level's starts (its
    :attr:`~compiler.levels.level.Level.starts_array`, an inout buffer the runtime allocates) and
    growing coordinates (its ``crd_array``), each appended level's growing starts and coordinates
    with their lengths, and the values (a block's length counted on its own); the level names
    each array.

    >>> from compiler.format import parse_format
    >>> info = TensorInfo("C", parse_format("dcsr"), "output")
    >>> [p.name for p in output_params(info, nested_levels(info))][2:]
    ['C0_pos', 'C0_nnz', 'C0_idx', 'C1_npos', 'C1_pos', 'C1_nnz', 'C1_idx', 'C_val']
    """
    name, levels = info.name, info.levels
    params = [ir.Scalar(array_name(name, m, "size"), "int64") for m in range(info.ndim)]
    if levels[plan.top].inserts_nested:
        return tuple(params) + _hash_params(info, plan)
    top = levels[plan.top]
    idt = top.index_dtype.name
    params += [Buffer(array_name(name, plan.top, top.starts_array), idt, "inout"),
               OutScalar(_nnz(info, plan.top), "int64"),
               Growable(array_name(name, plan.top, top.crd_array), idt, _nnz(info, plan.top))]
    for k in plan.appended:
        idt, npos = levels[k].index_dtype.name, array_name(name, k, "npos")
        params += [OutScalar(npos, "int64"), Growable(array_name(name, k, levels[k].starts_array), idt, npos),
                   OutScalar(_nnz(info, k), "int64")]
        kinds = coordinate_kinds(levels[k])
        lengths = {"nnz": _nnz(info, k), "fibers": _nnz(info, k - 1)}
        for _, length in kinds:
            if length not in lengths:   # (a count of the level's own: its blocks)
                lengths[length] = array_name(name, k, length)
                params.append(OutScalar(lengths[length], "int64"))
        params += [Growable(array_name(name, k, kind), idt, lengths[length]) for kind, length in kinds]
    if plan.hashed:
        return tuple(params) + _hash_params(info, plan)
    if plan.block is not None:
        nvals = array_name(name, plan.block, "nvals")
        params += [OutScalar(nvals, "int64"), Growable(array_name(name, None, "vals"), info.dtype, nvals)]
    elif isinstance(info.leaf, Element):
        last = plan.appended[-1] if plan.appended else plan.top
        params.append(Growable(array_name(name, None, "vals"), info.dtype, _nnz(info, last)))
    return tuple(params)


def _hash_params(info: TensorInfo, plan: Nested) -> tuple:
    """A hash's arrays (its sorted view's starts an inout buffer at the top, growing below it,
    where the fibers are the parent's entries; its coordinates and children, ``crd_array`` and
    ``child_array``), each level's count and capacity, then the values."""
    name, out = info.name, []
    for k in ((plan.top,) if info.levels[plan.top].inserts_nested else ()) + plan.hashed:
        arr = lambda kind: array_name(name, k, kind)  # noqa: E731
        lvl, nnz = info.levels[k], _nnz(info, k)
        idt, starts = lvl.index_dtype.name, arr(lvl.starts_array)
        if k == plan.top:
            out.append(Buffer(starts, idt, "inout"))
        else:
            out += [OutScalar(arr("npos"), "int64"), Growable(starts, idt, arr("npos"))]
        key, tbl = lvl.keys_in_table
        out += [OutScalar(nnz, "int64"), OutScalar(arr("cap"), "int64"), Growable(arr(key), "int64", nnz),
                Growable(arr(tbl), "int64", arr("cap")), Growable(arr(lvl.crd_array), idt, nnz),
                Growable(arr(lvl.child_array), idt, nnz)]
    if isinstance(info.leaf, Element):
        out.append(Growable(array_name(name, None, "vals"), info.dtype, _nnz(info, plan.hashed[-1])))
    return tuple(out)


def empty_table_stmts(info: TensorInfo, k: int, fresh) -> list:
    """A hash level starts with no keys and an empty table of the smallest capacity."""
    tbl = array_name(info.name, k, info.levels[k].keys_in_table[1])
    cap, s = Var(array_name(info.name, k, "cap")), Var(fresh("s"))
    return [ir.Assign(Var(_nnz(info, k)), Const(0, "int64")), ir.Assign(cap, Const(8, "int64")),
            ir.Grow(tbl, cap), ir.For(s, 0, cap, [ir.Store(tbl, s, Const(0, "int64"))])]


def declare_stmts(info: TensorInfo, plan: Nested, fresh) -> list:
    """Each appended level starts empty: no entries, its first fiber starting at 0; each hash
    below the top level with an empty table."""
    out = []
    for k in plan.appended:
        pos = array_name(info.name, k, info.levels[k].starts_array)
        out += [ir.Assign(Var(_nnz(info, k)), Const(0, "int64")), ir.Grow(pos, Const(1, "int64")),
                ir.Store(pos, Const(0, "int64"), Const(0, "int64"))]
        if info.levels[k].appends_blocks is not None:   # (no blocks yet; the first block's values start at 0)
            starts = array_name(info.name, k, info.levels[k].appends_blocks[1])
            out += [ir.Assign(Var(array_name(info.name, k, "nblk")), Const(0, "int64")),
                    ir.Grow(starts, Const(1, "int64")), ir.Store(starts, Const(0, "int64"), Const(0, "int64"))]
    for k in plan.hashed:
        out += empty_table_stmts(info, k, fresh)
    return out


def freeze_stmts(info: TensorInfo, plan: Nested) -> list:
    """The lengths of the growing arrays: an appended level has one fiber per entry of its parent
    (and one more start); a block holds its size of values per entry of its parent."""
    out = [ir.Assign(Var(array_name(info.name, k, "npos")), BinOp("+", Var(_nnz(info, k - 1)), Const(1, "int64")))
           for k in plan.appended]
    out += [ir.Assign(Var(array_name(info.name, k, "nofs")), BinOp("+", Var(array_name(info.name, k, "nblk")),
                                                                  Const(1, "int64")))
            for k in plan.appended if info.levels[k].appends_blocks is not None]
    if plan.block is not None:
        out.append(ir.Assign(Var(array_name(info.name, plan.block, "nvals")),
                             BinOp("*", Var(_nnz(info, plan.block - 1)), dense_block(info, plan.block))))
    return out
