"""A column-major flatten of a row-major stored matrix under the sequence lowering (issue 30): numpy's
``a.T.reshape(-1)``, the paper's ``vec(X)``, one kernel.

``c[m] = collapse(A[i, j], (j, i) -> m)`` of a CSR ``A`` iterates ``j_A × i_A``: the product's left
operand is ``A``'s level 1, which the loops would reach before its parent (§13 of the note: a
discordant order). No other order of the output's one loop exists, and ``A`` is stored in its natural
order, so no conversion makes it concordant but a transpose of its whole structure. Instead the collapse
is undone (:func:`unflattened`): ``c[j, i] = A[i, j]``, whose loops run ``i, j``, the inputs' order, each
entry at ``m = j·I + i`` of ``c``. A dense output takes it at random. A sparse one needs its entries in
``m``'s order, which is ``j``'s, then ``i``'s: they are sorted before it appends them by a counting sort
keyed by ``j`` (:class:`~compiler.lattice.seqgroupsort.SortedOutput`: phase 1 counts each ``j``'s
entries, a prefix sum gives each ``j``'s start, phase 2 places each entry at its ``j``'s next slot; the
loops reach ``i`` in increasing order, so each ``j``'s entries stay in ``i``'s order and no bucket is
sorted). Elementwise operators and scalars around the collapse fuse in, and so do several such
collapses of one extent (``a.T.reshape(-1) + b.T.reshape(-1)``): they become one statement over
``(j, i)`` and go through one count and one placement; a dense vector read at ``m`` is split back
into ``(j, i)``, its entries a column apart stepped to. A sparse one (a SparseList or COO ``x``) would be
searched for each ``i`` in every group ``j``: instead ``A``'s entries are re-sorted by ``j`` first
(:func:`by_columns`: counted per ``j``, prefix-summed and placed, ``O(nnz(A) + J)``, as scipy's ``tocsc``) into
sparse rows ``w[j, i]`` (:class:`~compiler.lattice.seqsumrows.RowBuckets`, whose rows come out in order: no row
is summed or sorted), and the loops run ``j, i``, ``m``'s order, walking ``w`` beside ``x`` as stored (a union
for ``+``, an intersection for ``*``) and appending each entry of a sparse output as it comes: one sort, not
two. A dense ``A`` (whose every entry a sort would place) keeps its order, and ``x``'s entries are re-sorted by
``i`` into sparse rows ``w[i, j]`` walked beside ``A``'s (:func:`resorted_reads`; beside a dense ``A[i, j, k]``, into
``w[i, j, k]``, a Dense level over SparseLists: :mod:`compiler.lattice.seqsumsort`).

Collapses nested in one another flatten more modes the same way: ``xp.permute_dims(a3, (2, 1, 0)).reshape(-1)``,
``c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m)``, is ``c[k, j, i] = A[i, j, k]`` with its loops
in ``A``'s storage order (:func:`storage_order`: a CSF, a COO or Dense(Dense(SparseList)) stored ``i, j, k``), each
entry at ``m = (k·|j| + j)·|i| + i``. A sparse output's entries are sorted by ``m`` in a workspace of as many
(:mod:`compiler.lattice.seqflatsort`): by counting the flat coordinate of all its indices but the last (``|k|·|j|``
counts; the loops, in whatever order, reach the last in increasing order among one key's entries, so that counting
sort, stable, leaves them in ``m``'s order) where those keys are at most 8 times the entries, else by a merge sort,
chosen at run time. A vector read at ``m`` beside
it is split back twice (:func:`split_back`), and ``A``'s entries re-sorted by ``(k, j)`` (:func:`by_columns`): the
loops run ``k, j, i``, ``m``'s order. A vector beside a flatten of a matrix with no rows (``I = 0``) has no entry
and no groups to split into: it is read as its fill (:func:`emptied`).

>>> from compiler.notation import parse
>>> p = parse("c[m] = collapse(A[i, j], (j, i) -> m) * 2.0 + collapse(B[k, l], (l, k) -> m)")
>>> print(unflattened(p, {"A": (2, 3), "B": (2, 3)}))
c[j, i] = A[i, j] * 2.0 + B[i, j]
>>> from compiler.format import parse_format
>>> from compiler.names import FreshNames
>>> from compiler.imperative.ir import Var
>>> out = column_major_output("c", parse_format("dense", ndim=1), ("j", "i"), (3, 2), "float64",
...                           FreshNames({"i", "j"}), "m")
>>> print("\\n".join(str(s) for s in out.store(("j", "i"), Var("v"))))
int64 m = j * 2 + i;
c_val[m] = v;
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..algebra import lookup
from ..errors import ShapeError, StrategyError
from ..imperative.sorting import COUNTED_SPAN
from ..notation.ast import Access, Call, Literal, Reduce, free_indices
from ..notation.ast import walk as walk_notation
from ..notation.infer import infer_shapes
from ..notation.shape import Collapse, Split, distinct_bindings, rename_index
from ..trace import Trace
from . import seqcfir as cf
from .seqassembly import sequence_output
from .seqderive import seq_lower
from .seqflatsort import ColumnMajorOutput, FlatSortedOutput
from .seqgroupsort import SortedOutput
from .seqoutput import SeqOutput, output_kind
from .sequences import Empty, Intersect, Level, Project, SequenceError, Union
from .sequences import walk as walk_seq
from .seqstride import jumps, searched

I64 = "int64"


def unflattened(program, shapes: dict):
    """``out[j, i] = X`` for ``program`` ``out[m] = collapse(X, (j, i) -> m)``: each read of ``m`` a
    collapse into it, under elementwise operators, beside literals and scalars, the collapses of equal
    extents (each one's indices renamed to the first's); else None. ``shapes``: each tensor's extents.
    Collapses nested directly in one another flatten more modes: ``collapse(collapse(A[i, j, k], (k, j) ->
    l), (l, i) -> m)`` is ``out[k, j, i] = A[i, j, k]``.

    >>> from compiler.notation import parse
    >>> print(unflattened(parse("c[m] = collapse(A[i, j], (j, i) -> m) + s[]"), {"A": (2, 3), "s": ()}))
    c[j, i] = A[i, j] + s[]
    >>> print(unflattened(parse("c[m] = collapse(A[i, j], (j, i) -> m) + b[m]"), {"A": (2, 3), "b": (6,)}))
    c[j, i] = A[i, j] + split(b[m], m -> (j:3, i:2))
    >>> print(unflattened(parse("c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m)"), {"A": (2, 3, 4)}))
    c[k, j, i] = A[i, j, k]
    >>> print(unflattened(parse("c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m) * x[m]"),
    ...                   {"A": (2, 3, 4), "x": (24,)}))
    c[k, j, i] = A[i, j, k] * split(split(x[m], m -> (m1:12, i:2)), m1 -> (k:4, j:3))
    >>> unflattened(parse("c[m] = sum[k](collapse(A[i, j, k], (j, i) -> m))"), {"A": (2, 3, 2)}) is None
    True
    """
    if len(program.lhs.indices) != 1 or any(isinstance(n, Reduce) for n in walk_notation(program.rhs)):
        return None
    m = program.lhs.indices[0]
    # (each index bound once: a later collapse's are renamed to the first's, which nothing inside it binds)
    rhs = distinct_bindings(program.rhs, {str(m), program.lhs.tensor})
    first = next((n for n in walk_notation(rhs) if isinstance(n, Collapse) and n.result == m), None)
    if first is None:
        return None
    pair = collapsed(first)[1]
    try:
        extents = infer_shapes(program, shapes).extents
    except ShapeError:
        return None
    sizes = tuple(extents[i] for i in pair)
    taken = {str(x) for n in walk_notation(rhs) for a in ("indices", "results") for x in getattr(n, a, ())} | \
        {str(getattr(n, a)) for n in walk_notation(rhs) for a in ("index", "result") if hasattr(n, a)} | {str(m)}

    def visit(e):
        if m not in free_indices(e):
            return e if isinstance(e, (Literal, Access)) else None
        if isinstance(e, Call):
            args = [visit(a) for a in e.args]
            return None if any(a is None for a in args) else replace(e, args=tuple(args))
        if isinstance(e, Access) and e.indices == (m,):
            # (a vector read at m: split back into the pair, each group of it read a column apart; into more
            # indices, split again)
            return split_back(e, m, pair, sizes, taken)
        if not isinstance(e, Collapse) or e.result != m:
            return None
        out, indices = collapsed(e)
        if len(indices) != len(pair):
            return None
        for old, new in zip(indices, pair):
            out = rename_index(out, old, new)
        return out

    body = visit(rhs)
    if body is None:
        return None
    flat = replace(program, lhs=replace(program.lhs, indices=tuple(pair)), rhs=body)
    try:
        infer_shapes(flat, shapes)      # (the collapses' extents agree)
    except ShapeError:
        return None
    return flat


def split_flatten(program) -> str:
    """Why :func:`unflattened` takes no column-major collapse of ``program`` whose output is not its one index (a
    reshape to several axes of a transposed matrix, ``a.T.reshape(2, 12)``, or its sum): ``""`` where it has none such.

    >>> from compiler.notation import parse
    >>> print(split_flatten(parse("c[i, j] = split(collapse(A[l, k], (k, l) -> m), m -> (i:2, j:12))")))
    ; collapse(A[l, k], (k, l) -> m) flattens column-major (k, stored after l, major), and the output's indices are not its one result (a reshape to several axes): the lattice undoes such a collapse only into a vector output (compiler.lattice.seqcolmajor)
    >>> split_flatten(parse("c[m] = collapse(A[l, k], (k, l) -> m)")), split_flatten(parse("c[i, j] = A[i, j]"))
    ('', '')
    >>> "(reduced to a scalar)" in split_flatten(parse("c[] = sum[m](collapse(A[l, k], (k, l) -> m))"))
    True
    """
    if len(program.lhs.indices) == 1:
        return ""
    for c in walk_notation(program.rhs):
        if not isinstance(c, Collapse):
            continue
        read = next((a for a in walk_notation(c.operand) if isinstance(a, Access) and set(c.indices) <= set(a.indices)),
                    None)
        if read is not None and read.indices.index(c.indices[0]) > read.indices.index(c.indices[1]):
            how = "a reshape to several axes" if program.lhs.indices else "reduced to a scalar"
            return (f"; {c} flattens column-major ({c.indices[0]}, stored after {c.indices[1]}, major), and the output's "
                    f"indices are not its one result ({how}): the lattice undoes such a collapse only into a vector "
                    f"output (compiler.lattice.seqcolmajor)")
    return ""


def split_back(e, m, names: tuple, sizes: tuple, taken: set):
    """``e``, read at ``m``, split back into ``names`` (of extents ``sizes``, the major first): split in two, the
    last index minor, then its major part split again, each time at a fresh index (not in ``taken``, to which it
    is added).

    >>> print(split_back(Access("x", ("m",)), "m", ("k", "j", "i"), (4, 3, 2), {"m"}))
    split(split(x[m], m -> (m1:12, i:2)), m1 -> (k:4, j:3))
    """
    if len(names) == 2:
        return Split(e, m, names, sizes)
    q = next(f"{m}{k}" for k in range(1, len(taken) + 2) if f"{m}{k}" not in taken)
    taken.add(q)
    return split_back(Split(e, m, (q, names[-1]), (math.prod(sizes[:-1]), sizes[-1])), q, names[:-1], sizes[:-1],
                      taken)


def split_vectors(flat) -> set:
    """The vectors ``flat`` (:func:`unflattened`) reads split back into its indices.

    >>> from compiler.notation import parse
    >>> sorted(split_vectors(unflattened(parse("c[m] = collapse(A[i, j], (j, i) -> m) * x[m] + d[m]"),
    ...                                  {"A": (2, 3), "x": (6,), "d": (6,)})))
    ['d', 'x']
    """
    return {n.operand.tensor for n in walk_notation(flat.rhs) if isinstance(n, Split) and isinstance(n.operand, Access)}


def emptied(flat, inputs: dict):
    """``flat`` (:func:`unflattened`) with each vector split back read as its fill: its extent is 0, so it holds
    no entry, and the loops, one over an index of extent 0 among them, write none (a split into groups of 0 has
    no sequence). ``inputs``: each tensor's format (a fill).

    >>> from compiler.format import parse_format
    >>> from compiler.notation import parse
    >>> flat = unflattened(parse("c[m] = collapse(A[i, j], (j, i) -> m) + x[m]"), {"A": (0, 3), "x": (0,)})
    >>> print(emptied(flat, {"x": parse_format("sparse", ndim=1, fill=1.0)}))
    c[j, i] = A[i, j] + 1.0
    """
    def visit(e):
        if isinstance(e, Split):
            while isinstance(e, Split):
                e = e.operand
            return Literal(inputs[e.tensor].fill)
        if isinstance(e, Call):
            return replace(e, args=tuple(visit(a) for a in e.args))
        return e

    return replace(flat, rhs=visit(flat.rhs))


def collapsed(e: Collapse) -> tuple:
    """``(operand, indices)``: what the collapse ``e`` and those nested directly in it flatten, and the indices
    they do, the major first.

    >>> from compiler.notation import parse_expr
    >>> operand, indices = collapsed(parse_expr("collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m)"))
    >>> print(operand, *indices)
    A[i, j, k] k j i
    """
    inner, operand = {}, e.operand
    while isinstance(operand, Collapse):
        inner[operand.result] = operand.indices
        operand = operand.operand

    def expand(x):
        return tuple(y for z in inner.pop(x) for y in expand(z)) if x in inner else (x,)

    indices = expand(e.indices[0]) + expand(e.indices[1])
    # (a nested collapse whose result the outer ones do not consume: no flatten of the operand's modes)
    return (operand, indices) if not inner else (e.operand, e.indices)


def storage_order(flat, inputs: dict) -> tuple:
    """The loops of ``flat`` (:func:`unflattened`) in the storage order of the first tensor it reads at
    all its output's indices, as its format (in ``inputs``) stores its modes, or the output's reversed:
    positions among the output's indices.

    >>> from compiler.notation import parse
    >>> from compiler.format import csf
    >>> storage_order(parse("c[k, j, i] = A[i, j, k]"), {"A": csf(3)}), storage_order(parse("c[j, i] = 2.0"), {})
    ((2, 1, 0), (1, 0))
    """
    names = tuple(flat.lhs.indices)
    read = next((a for a in walk_notation(flat.rhs) if isinstance(a, Access) and set(a.indices) == set(names)), None)
    if read is None:
        return tuple(reversed(range(len(names))))
    return tuple(names.index(read.indices[mode]) for mode in inputs[read.tensor].mode_order)


def column_major(program, inputs: dict, out_format, fill, why: str):
    """``(lowering, note, data)``: ``program``, a column-major flatten (:func:`unflattened`) whose loop
    in the output's order walks an input against its storage order (``why``), lowered as ``out[j, i] =
    X`` with its loops ``i, j`` (those of more modes in the storage order of the tensor they flatten:
    :func:`storage_order`); None where it is no such flatten or those loops do not walk its inputs
    as stored either. ``inputs``: each tensor's :class:`~compiler.lattice.seqderive.ShapedFormat`;
    ``out_format``: the output's (None: dense)."""
    flat = unflattened(program, {t: f.shape for t, f in inputs.items()})
    if flat is None:
        return None
    names = tuple(map(str, flat.lhs.indices))
    # (a vector split into groups of 0, an extent 0 among the minor ones, has no sequence; it holds no entry)
    empty = any(isinstance(n, Split) and n.sizes[1] == 0 for n in walk_notation(flat.rhs))
    if empty:
        flat = emptied(flat, inputs)
    order, columns = storage_order(flat, inputs), None
    try:
        if len(names) > 2 and split_vectors(flat):
            # (a vector split back into three indices or more, sparse or not, is walked in m's order alone, or
            # re-sorted into fibers beside a dense A read in its order)
            low, sparse = None, split_vectors(flat)
        else:
            low = seq_lower(flat, trace=Trace(), loop_order=order, result_fill=fill, **inputs)
            sparse = {lv.tensor.rstrip("'") for s in searched(low.cin) if not jumps(s) for lv in walk_seq(s)
                      if isinstance(lv, Level)}
        if sparse:
            # (a sparse vector read at m, split back into (j, i), would be searched for each i in every group j:
            # the matrix's entries are re-sorted by j into sparse columns first, which the loops, in m's order,
            # walk beside the vector as stored; where that cannot be, the vector's re-sorted by i into rows)
            columns = by_columns(flat, names, order, fill, inputs)
            low = columns or seq_lower(resorted_reads(flat, sparse), trace=Trace(), loop_order=order,
                                       result_fill=fill, hoisted=names, sparse_rows=True, **inputs)
    except (StrategyError, SequenceError):
        return None
    if not all(jumps(s) for s in searched(low.cin)):
        return None     # (a split's groups still searched for a minor coordinate: no walk as stored)
    (m,) = map(str, program.lhs.indices)
    out = program.lhs.tensor
    major, minor = names[0] if len(names) == 2 else f"({', '.join(names[:-1])})", names[-1]
    walked, in_order = order, columns is not None
    if in_order:
        order = tuple(range(len(names)))
    whose = f"{m}'s" if in_order else "the inputs'"
    note = (f"{program} flattens column-major, and the loop over {m} walks an input against its storage order "
            f"({why}): the collapse undone, {flat}, its loops run {', '.join(names[k] for k in order)}, {whose} "
            f"order, each entry at {m} = {flat_text(names)} of {out}, ")
    if empty:
        note += "each vector split back (of extent 0, no entry) read as its fill, "
    for w in low.workspaces:
        (x,) = {a.tensor for a in walk_notation(w.total) if isinstance(a, Access)}
        # (A's entries by column, into w[j, i], or those of a vector beside a dense A by row, into w[i, j])
        came, key, how = ("its storage order", major, ", as scipy's tocsc") if in_order else \
            (f"{major}, {minor} order", minor, "")
        if not in_order and len(w.indices) > 2:
            # (beside a dense A of three modes or more: x's entries into fibers, seqsumsort's)
            note += (f"{x}'s entries (in {came}) re-sorted into {w.name}[{', '.join(w.indices)}] first (bucketed by "
                     f"{w.indices[0]}, each {w.indices[0]}'s terms then sorted by ({', '.join(w.indices[1:])}): a "
                     f"Dense level over SparseLists), which the loops walk beside the others as stored, ")
            continue
        note += (f"{x}'s entries (in {came}) re-sorted by {key} into the sparse rows of {w.name}"
                 f"[{', '.join(w.indices)}] first (a counting sort{how}: phase 1 counts each {key}'s entries, a prefix "
                 f"sum gives each {key}'s start, phase 2 places each entry), which the loops walk beside the others as "
                 f"stored, ")
    if out_format is None or output_kind(out_format) == "dense":
        note += f"written at random into the dense {out}"
    elif in_order:
        note += f"each entry appended to {out} as it comes ({m} increasing: no sort of the result)"
        if stored_walk(low.cin, out, len(names), inputs):
            note += (f", room for all the inputs' entries reserved up front: the loop around each store walks stored "
                     f"entries only, so {out} takes no more, and no append checks for room")
    elif len(names) > 2:
        note += (f"the entries sorted by {m} into a workspace of as many before {out} appends them: phase 1 counts the "
                 f"entries; where the {math.prod(low.shape[:-1])} coordinates of {major} are at most {COUNTED_SPAN} "
                 f"times the entries, phase 2 counts each {major}'s, a prefix sum gives each {major}'s start and phase "
                 f"3 places each entry at its {major}'s next slot (the loops reach {minor} in increasing order: a "
                 f"counting sort), else merge-sorted by {m} (phase 2 puts each entry's {m} and value in the loops' "
                 f"order, each fiber the innermost loop walks an ascending run), as the kernel finds them")
    else:
        note += (f"the entries sorted by {m} before {out} appends them: phase 1 counts each {major}'s entries, a "
                 f"prefix sum gives each {major}'s start, phase 2 places each entry at its {major}'s next slot "
                 f"(the loops reach {minor} in increasing order: a counting sort)")
    data = {"order": list(order), "program": str(flat), **({"resorted": [w.name for w in low.workspaces]}
                                                            if low.workspaces else {})}
    if in_order:
        data["walked"] = list(walked)
    return replace(low, assembly="flat" if in_order else "column-major", flattened=m), note, data


def by_columns(flat, names: tuple, walked: tuple, fill, inputs: dict):
    """The lowering of ``flat`` (:func:`unflattened`, its indices ``names``, the major first) whose loops run in
    ``names``' order, that of the flat coordinate, each tensor read at all of them (not a vector split back into
    them) re-sorted first into a workspace of sparse rows over them, the major index's (a CSR ``A``'s CSC,
    ``w[j, i]``; :mod:`compiler.lattice.seqsumrows`), its entries walked in ``walked`` (positions among
    ``names``: its storage order); None where a tensor so read stores every entry (the counting sort would
    place them all), none is, or those loops would not walk the others as stored.

    >>> import numpy as np
    >>> from compiler import Tensor
    >>> from compiler.notation import parse
    >>> flat = unflattened(parse("c[m] = collapse(A[i, j], (j, i) -> m) * x[m]"), {"A": (2, 3), "x": (6,)})
    >>> A, x = Tensor.from_numpy(np.eye(2, 3), "csr"), Tensor.from_numpy(np.arange(6.0), "sparse")
    >>> print(by_columns(flat, ("j", "i"), (1, 0), None, {"A": A, "x": x}).cfir.text())
    while i <- i_A
      while j <- j_A
        w(j, i) += A(i_A, j_A)
    while j <- π0(m_x, 2) with j_w = π0(m_x, 2)
      while i <- i_w ∩ π1(m_x, 2)
        switch i
        case i_w ∩ π1(m_x, 2):
          c(j, i) = w(j_w, i_w) * x(m_x)
    """
    whole = {a.tensor for a in walk_notation(flat.rhs)
             if isinstance(a, Access) and set(map(str, a.indices)) == set(names)}
    if not whole or any(all(lv.located_by_coordinate for lv in inputs[t].levels) for t in whole):
        return None

    def visit(e):
        if isinstance(e, Access) and e.tensor in whole:
            return Reduce(lookup("add"), (), e)
        if isinstance(e, Call):
            return replace(e, args=tuple(visit(a) for a in e.args))
        return e

    try:
        low = seq_lower(replace(flat, rhs=visit(flat.rhs)), trace=Trace(), loop_order=tuple(range(len(names))),
                        result_fill=fill, hoisted=tuple(names[k] for k in walked), sparse_rows=True, **inputs)
    except (StrategyError, SequenceError):
        return None
    return low if not searched(low.cin) else None




def flat_text(names: tuple) -> str:
    """The flat coordinate of ``names`` (the major first), as the trace writes it.

    >>> flat_text(("j", "i")), flat_text(("k", "j", "i"))
    ('j·|i| + i', '(k·|j| + j)·|i| + i')
    """
    out = names[0]
    for k, x in enumerate(names[1:]):
        out = f"{out if k == 0 else f'({out})'}·|{x}| + {x}"
    return out


def resorted_reads(flat, tensors: set):
    """``flat`` (:func:`unflattened`) with each split read of a vector of ``tensors`` a sum over no index
    (printed ``sum[]``, which no text spells: the lowering's own device): the value itself, which the sequence
    lowering computes into a workspace first, in the vector's order
    (:mod:`compiler.lattice.seqworkspace`), kept in sparse rows by the statement's outer loop
    (:mod:`compiler.lattice.seqsumrows`).

    >>> from compiler.notation import parse
    >>> flat = unflattened(parse("c[m] = collapse(A[i, j], (j, i) -> m) * x[m]"), {"A": (2, 3), "x": (6,)})
    >>> print(resorted_reads(flat, {"x"}))
    c[j, i] = A[i, j] * sum[](split(x[m], m -> (j:3, i:2)))
    """
    def visit(e):
        read = e
        while isinstance(read, Split):     # (split back into three indices or more: once per index)
            read = read.operand
        if isinstance(e, Split) and isinstance(read, Access) and read.tensor in tensors:
            return Reduce(lookup("add"), (), e)
        if isinstance(e, Call):
            return replace(e, args=tuple(visit(a) for a in e.args))
        return e

    return replace(flat, rhs=visit(flat.rhs))


def stored_walk(cin, out: str, ndim: int, formats: dict) -> bool:
    """Whether the loops of ``cin`` around each store into ``out`` (of ``ndim`` indices, flattened in order:
    :func:`by_columns`) take it only at stored entries of what they read: two loops (each coordinate of the outer
    once), the inner one over a union or intersection of sparse levels (and of their projections), no dense level or
    universe but under an intersection, and each input (``formats``: name -> format) stores one coordinate per
    position where it is not dense (a list of coordinates: no run, block or band covering several). Then ``out``
    takes at most one entry per stored entry of the inputs, and room reserved for them all up front holds every one
    (no append checks for room).

    >>> import numpy as np
    >>> from compiler import Tensor
    >>> from compiler.notation import parse
    >>> flat = unflattened(parse("c[m] = collapse(A[i, j], (j, i) -> m) + x[m]"), {"A": (2, 3), "x": (6,)})
    >>> A, x = Tensor.from_numpy(np.eye(2, 3), "csr"), Tensor.from_numpy(np.arange(6.0), "sparse")
    >>> formats = {"A": A.format, "x": x.format}
    >>> stored_walk(by_columns(flat, ("j", "i"), (1, 0), None, {"A": A, "x": x}).cin, "c", 2, formats)
    True
    >>> flat = unflattened(parse("c[m] = collapse(A[i, j], (j, i) -> m) + 1.0"), {"A": (2, 3)})
    >>> stored_walk(by_columns(flat, ("j", "i"), (1, 0), None, {"A": A}).cin, "c", 2, formats)   # (every one)
    False
    """
    def stored(s) -> bool:
        if isinstance(s, (Union, Intersect)):
            # (a union walks the coordinates of both, an intersection those of either)
            sides = (stored(s.a), stored(s.b))
            return all(sides) if isinstance(s, Union) else any(sides)
        if isinstance(s, Project):
            return stored(s.a)
        return isinstance(s, Empty) or isinstance(s, Level) and not s.dense

    def visit(s, around: tuple) -> bool:
        if isinstance(s, cf.Block):
            return all(visit(x, around) for x in s.stmts)
        if isinstance(s, cf.Forall):
            return visit(s.body, around + (s.seq,))
        if isinstance(s, cf.Assign) and s.out == out:
            return len(around) == 2 and stored(around[-1])
        return isinstance(s, (cf.Assign, cf.Reduce, cf.Alloc, cf.Fold, cf.Skip))

    listed = all(lvl.located_by_coordinate or lvl.appends_coordinates or lvl.coordinate_list
                 for fmt in formats.values() for lvl in fmt.levels)
    return ndim == 2 and listed and visit(cin, ())


def column_major_output(name: str, fmt, indices: tuple, shape: tuple, dtype: str, fresh, at: str,
                        in_order: bool = False, reserved: bool = False):
    """Output ``name`` of one mode, of ``fmt``, written by the loops of ``out[j, i] = X``
    (``indices``, of extents ``shape``) running ``i, j``: at random where dense, else its entries
    sorted by ``j`` first (:class:`~compiler.lattice.seqgroupsort.SortedOutput`; by the flat coordinate,
    :class:`~compiler.lattice.seqflatsort.FlatSortedOutput`, where there are more indices); ``at`` names the flat
    coordinate (a fresh name from it). ``in_order``: the loops run ``j, i`` (:func:`by_columns`), each entry
    appended as it comes; ``reserved``: at
    most one entry per stored entry of the inputs (:func:`stored_walk`), room for them all reserved up front."""
    at = fresh(at)
    shape = tuple(int(n) for n in shape)
    inner = sequence_output(name, fmt, (at,), (math.prod(shape),), dtype, fresh)
    if in_order and reserved and isinstance(inner, SeqOutput):
        inner.reserved = True
    if inner.kind == "dense" or in_order:
        return ColumnMajorOutput(inner, shape, at)
    if len(indices) == 2:
        return SortedOutput(ColumnMajorOutput(inner, shape, at), indices, tuple(reversed(indices)), shape, dtype, fresh)
    return FlatSortedOutput(inner, shape, dtype, fresh, at)


__all__ = ["by_columns", "collapsed", "column_major", "column_major_output", "split_flatten",
           "flat_text", "resorted_reads", "storage_order", "stored_walk", "unflattened"]
