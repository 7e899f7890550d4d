"""Room for a sparse output reserved up front, from its operands' stored entries.

A shape operator's kernel copies stored entries: ``D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)``
appends at most one entry of ``D`` per stored entry of ``B`` and of ``C``, and a collapse or a
split one per stored entry of its operand. Growing the output by doubling from 16 entries
reallocates it some twenty times (copying it about once and touching about twice its memory);
on a CSR vstack of 200,000 entries that was half the kernel's time. So the kernel first asks
for room for the sum of its operands' stored entries (:func:`reserve_stmts`)::

    D1_idx: reserve B1_pos[B0_size] + C1_pos[C0_size]
    D_val: reserve B1_pos[B0_size] + C1_pos[C0_size]

The count is a *hint* (a :class:`~compiler.imperative.ir.Grow` with ``hint``): the per-entry
growth checks stay, so a value equal to the fill that is not kept, or a bound that is too low,
is still right, and without the memory the kernel grows as before. A slice of the rows of a
CSR matrix (its Dense level over a SparseList) counts the entries of the rows it keeps, in a loop
over them (``pos[stop] - pos[start]`` for a window); one of unit step keeping every coordinate (a
CSC's rows reversed, ``A_csc[::-1]``), all its operand's (where the sliced extent is the operand's,
known at the call, only when it is the slice's count there); any other slice keeps no hint (it may keep
few of its operand's entries: reserving them all could ask for far more than it writes). An
elementwise operator of such operands (``C[i, j] = A[i, j] + B[i, j]``, a slice times a matrix)
writes at most where one of them stores an entry when its result on their fills is the output's
fill (the fill of an output given no format): the sum of theirs is reserved, as the lattice does
(where it is not, ``1 / A``, the hint is low and the output grows as before). An expression with a
constant (``B[i] + 1`` writes where ``B`` stores none) or a reduction keeps no hint.

>>> from compiler.notation import parse
>>> from compiler.format import parse_format
>>> from compiler.looplets.fibers import Namer
>>> stmt = parse("D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)")
>>> print(entry_bound(stmt, {"B": parse_format("csr"), "C": parse_format("coo")}, Namer())[1])
(int64)B1_pos[B0_size] + (int64)C0_pos[1]
>>> stmts, n = entry_bound(parse("D[k, i] = slice(A[j, i], j -> k, (1, 6, 2))"), {"A": parse_format("csr")}, Namer())
>>> for s in stmts:
...     print(s)
int64 n_kept = 0;
for (int64 r = 0; r < 3; r++) {
    n_kept += (int64)A1_pos[r * 2 + 2] - (int64)A1_pos[r * 2 + 1];
}
>>> print(n)
n_kept
>>> print(entry_bound(parse("C[i, j] = A[i, j] * B[i, j]"), {"A": parse_format("csr"), "B": parse_format("csr")},
...                   Namer())[1])
(int64)A1_pos[A0_size] + (int64)B1_pos[B0_size]
>>> print(entry_bound(parse("C[i, j] = A[i, j] * A[i, j] - A[i, j]"), {"A": parse_format("csr")}, Namer())[1])
(int64)A1_pos[A0_size]
"""

from __future__ import annotations

from ..binding import array_name
from ..imperative import ir
from ..imperative.ir import BinOp, Cast, Const, Load, Select, Var
from ..kept_rows import kept_row_entries
from ..levels import Element
from ..notation import ast as N
from ..notation.shape import Broadcast, Collapse, Concat, Slice, Split
from . import extents as X
from .level_writers import writer_for
from .shape_extents import extent_ir


def stored_entries(tensor: str, fmt):
    """An IR expression for how many entries ``tensor`` (an input of format ``fmt``) stores, or
    None when its levels are not Dense levels over one level that counts its entries in ``pos``
    (a SparseList or SparseCOO, whose writer says ``counts_entries``: the positions below it are its
    entries, ``pos`` at the parent's position count).

    >>> from compiler.format import parse_format
    >>> print(stored_entries("A", parse_format("csr")))
    (int64)A1_pos[A0_size]
    """
    count, sparse = Const(1, "int64"), False
    mode = 0
    for k, lvl in enumerate(fmt.levels):
        if lvl.located_by_coordinate and not sparse:
            count = Var(array_name(tensor, mode, "size")) if count == Const(1, "int64") else \
                ir.BinOp("*", count, Var(array_name(tensor, mode, "size")))
        elif _counts_entries(lvl) and not sparse:
            count, sparse = Cast("int64", Load(array_name(tensor, k, lvl.starts_array), count)), True
        else:
            return None
        mode += lvl.nmodes
    return count if sparse and isinstance(fmt.leaf, Element) else None


def _counts_entries(lvl) -> bool:
    writer = writer_for(lvl)
    return writer is not None and writer.counts_entries


def entry_bound(stmt, formats: dict, fresh, extents: dict | None = None):
    """``(stmts, bound)``: an upper bound on the entries ``stmt`` (index notation, with shape
    operators or without) writes, the sum of its operands' stored entries (what ``stmts`` count
    first for a row slice) when its right side only moves them or combines them elementwise
    (accesses under concat, collapse, split, broadcast, row slices, slices keeping every coordinate of the
    index they slice, whose extent ``extents`` gives, and operators), else None. ``fresh`` names the counting
    loop's locals.

    >>> from compiler.format import parse_format
    >>> from compiler.looplets.fibers import Namer
    >>> from compiler.notation import parse
    >>> from compiler.notation.ast import Index
    >>> print(entry_bound(parse("D[k, i] = slice(A[j, i], j -> k, (5, -1, -1))"), {"A": parse_format("csc")}, Namer(),
    ...                   {Index("j"): ("A", 0)})[1])
    A1_size == 6 ? (int64)A1_pos[A0_size] : 0
    """
    terms, stmts = [], []

    def whole(e) -> bool:
        """A unit step keeping every coordinate of the index it slices (``A_csc[::-1]``): its operand's
        entries, reordered, where that extent is the slice's count (an operand's, at the call: else none)."""
        if abs(e.step) != 1 or e.index not in (extents or {}):
            return False
        n, at = extent_ir(extents[e.index], formats), len(terms)
        if isinstance(n, Const) and n.value != e.count or not visit(e.operand):
            return False
        kept = terms[at]
        for t in terms[at + 1:]:
            kept = X.add(kept, t)
        terms[at:] = [kept if isinstance(n, Const) else Select(BinOp("==", n, Const(e.count, "int64")), kept,
                                                                Const(0, "int64"))]
        return True

    def visit(e) -> bool:
        if isinstance(e, N.Access):
            fmt = formats.get(e.tensor)
            n = stored_entries(e.tensor, fmt) if fmt is not None else None
            terms.append(n)
            return n is not None
        if isinstance(e, Concat):
            return all(visit(x) for x in e.operands)
        if isinstance(e, (Collapse, Split, Broadcast)):
            return visit(e.operand)
        if isinstance(e, N.Call):   # (elementwise: at most where one of its operands stores an entry)
            return all(visit(x) for x in _distinct_operands(e))
        if isinstance(e, Slice):
            counted = kept_rows(e, formats, fresh)
            if counted is None:
                return whole(e)
            stmts.extend(counted[0])
            terms.append(counted[1])
            return True
        return False   # (a computed value, a reduction)

    if not isinstance(stmt, N.Assign) or stmt.op is not None or not visit(stmt.rhs):
        return None
    total = terms[0]
    for t in terms[1:]:
        total = X.add(total, t)
    return stmts, total


def _distinct_operands(call) -> list:
    """The operands of the elementwise operators ``call`` is made of, each once: ``A * A - A`` writes where ``A``
    stores an entry, not three times as many (a concatenation of ``A`` with itself does write each twice)."""
    out = []

    def leaves(e):
        if isinstance(e, N.Call):
            for a in e.args:
                leaves(a)
        elif e not in out:
            out.append(e)
    leaves(call)
    return out


def kept_rows(e, formats: dict, fresh):
    """``(stmts, count)``: the entries of the rows a slice of a CSR matrix's rows keeps (the
    slice's index the Dense first level over a SparseList), else None."""
    acc = e.operand
    fmt = formats.get(acc.tensor) if isinstance(acc, N.Access) else None
    if fmt is None or stored_entries(acc.tensor, fmt) is None or len(fmt.levels) != 2 or \
            not fmt.levels[0].located_by_coordinate or fmt.levels[1].coordinate_list or \
            e.index not in acc.indices or fmt.mode_order[0] != acc.indices.index(e.index):
        return None
    pos = array_name(acc.tensor, 1, fmt.levels[1].starts_array)
    return kept_row_entries(pos, e.start, e.stop, e.step, fresh)


def reserve_stmts(info, bound) -> list:
    """Hints reserving ``bound`` entries in an output's appended buffers, when the output is
    Dense levels over one level appended an entry per entry written (its writer ``counts_entries``:
    a SparseList or SparseCOO) over an Element leaf (CSR, COO, a sparse vector), else none (and
    none for no entries: an empty slice)."""
    levels = info.levels
    if bound is None or bound == Const(0, "int64") or not levels or not isinstance(info.leaf, Element) or \
            not all(lvl.located_by_coordinate for lvl in levels[:-1]):
        return []
    k = len(levels) - 1
    writer = writer_for(levels[k])
    names = writer.reserve_arrays(info, k) if writer is not None and writer.counts_entries else ()
    return [ir.Grow(name, bound, hint=True) for name in (*names, info.array(None, "vals"))] if names else []


__all__ = ["entry_bound", "kept_rows", "reserve_stmts", "stored_entries"]
