"""Whether the loops a shape operator becomes walk its operands in their storage order.

A slice or a collapse reads its operand by the loops of the statement (:mod:`compiler.looplets.shapes`);
a sparse level is walked only when its loop runs inside those of the modes stored before it. These
ask the formats which loops must run outside which, and refuse, naming the fix, what would walk an
operand against its order, or say when a reduction goes through a dense workspace so that its loops
may walk the operand (:func:`needs_workspace`).
"""

from __future__ import annotations

import numpy as np

from ..algebra import NOVALUE
from ..errors import StrategyError
from ..notation import ast as N
from ..notation.shape import Collapse, ShapeOp, Slice
from ..values import same_value
from .program import Index


def check_collapse_concordant(e: Collapse, formats: dict) -> None:
    """Refuse a collapse whose loops (the major index outside the minor one) would walk an operand
    stored minor index first in a level that cannot be located: each coordinate would be searched
    for, not walked (a column-major collapse of a CSR matrix)."""
    i, j = e.indices
    for acc in N.accesses(e.operand):
        if stores_minor_first(e, acc, formats):
            raise StrategyError(
                f"{e}: {acc.tensor} stores {j} before {i}, but the collapse walks {i} outside {j} (the first listed "
                f"index is the major one): a discordant walk of its sparse levels; store {acc.tensor} with {i} "
                f"first, or collapse ({j}, {i}) -> {e.result}")


def stores_minor_first(e: Collapse, acc: N.Access, formats: dict) -> bool:
    """Whether ``acc`` (in the collapse ``e``'s operand) stores the collapse's minor index before its
    major one in levels that cannot all be located: walked only by loops minor index first (a CSC's
    row-major flatten, ``c_csc.reshape(4)``)."""
    (i, j), fmt = e.indices, formats.get(acc.tensor)
    if fmt is None or i not in acc.indices or j not in acc.indices:
        return False
    order = fmt.mode_order
    return order.index(acc.indices.index(j)) < order.index(acc.indices.index(i)) and \
        not all(lvl.locatable for lvl in fmt.levels)


def walks_minor_first(e: Collapse, rhs, formats: dict) -> bool:
    """Whether the collapse ``e`` in the expression ``rhs`` can be walked by its loops minor index
    first, its writes and the other reads of its index then out of order: its operand, one access,
    :func:`stores_minor_first`, every other read of its index locates it (``x[k]`` of a dense ``x``
    beside ``c_csc.reshape(4)``), and no other shape operator reads or makes that index.

    >>> from compiler.format import parse_format
    >>> from compiler.notation import parse
    >>> rhs = parse("y[k] = x[k] + collapse(c[i, j], (i, j) -> k)").rhs
    >>> e = next(n for n in N.walk(rhs) if isinstance(n, Collapse))
    >>> [walks_minor_first(e, rhs, {"c": parse_format(f), "x": parse_format(g, ndim=1)})
    ...  for f, g in (("csc", "dense"), ("csc", "sparse_vector"), ("csr", "dense"))]
    [True, False, False]
    """
    k, acc = e.result, e.operand
    if not isinstance(acc, N.Access) or not stores_minor_first(e, acc, formats):
        return False
    for x in N.walk(rhs):
        if isinstance(x, N.Access) and k in x.indices and x is not acc:
            fmt = formats.get(x.tensor)
            if fmt is None or not all(lvl.locatable for lvl in fmt.levels):
                return False
        elif x is not e and isinstance(x, ShapeOp) and (k in x.produced() or any(
                k in x.consumed(m) for m in range(len(x.children())))):
            return False
    return True


def stored_before(e: Slice, formats: dict):
    """``(access, index)`` for each index an access of the slice ``e``'s operand stores before the
    sliced one: the loops that must run outside the slice's (a CSC's columns, its rows sliced). A
    strided slice's one-step loop follows the slice's, so every such mode's; a window's only where a
    level cannot be located (a CSC's rows: no loop to walk its row level by otherwise). The planner
    moves such loops outside (``columns_outside`` in :func:`shape_program`) and
    :func:`check_stride_concordant` refuses those it could not: one list for both.

    >>> from compiler.format import parse_format
    >>> e = Slice(N.Access("A", (N.Index("j"), N.Index("i"))), N.Index("j"), N.Index("k"), 1, 9, 2)
    >>> [(str(acc), str(x)) for acc, x in stored_before(e, {"A": parse_format("csc")})]
    [('A[j, i]', 'i')]
    >>> list(stored_before(e, {"A": parse_format("csr")}))
    []
    """
    for acc in N.accesses(e.operand):
        fmt = formats.get(acc.tensor)
        if fmt is None or e.index not in acc.indices or e.step == 1 and all(lvl.locatable for lvl in fmt.levels):
            continue
        order = fmt.mode_order
        for q in order[:order.index(acc.indices.index(e.index))]:
            yield acc, acc.indices[q]

def stored_after(e: Slice, formats: dict, windows: bool = False):
    """``(access, index)`` for each index an access of the strided slice ``e``'s operand stores after
    the sliced one: the loops that must run inside the slice's (a CSC's rows, its columns strided:
    each kept column's row level walked, its Dense column level read at ``s + r * k``). The planner
    moves the slice's loop outside them where the output takes its writes so (``kept_outside`` in
    :func:`~compiler.looplets.shapes.shape_program`); a window's too when ``windows`` (``A_csc[:, 1:9]``:
    its columns read at ``k + 1``, each walked).

    >>> from compiler.format import parse_format
    >>> e = Slice(N.Access("A", (N.Index("i"), N.Index("j"))), N.Index("j"), N.Index("k"), 0, 9, 2)
    >>> [(str(acc), str(x)) for acc, x in stored_after(e, {"A": parse_format("csc")})]
    [('A[i, j]', 'i')]
    >>> list(stored_after(e, {"A": parse_format("csr")}))
    []
    >>> window = Slice(N.Access("A", (N.Index("i"), N.Index("j"))), N.Index("j"), N.Index("k"), 1, 9, 1)
    >>> [len(list(stored_after(window, {"A": parse_format("csc")}, w))) for w in (False, True)]
    [0, 1]
    """
    if e.step == 1 and not windows:
        return
    for acc in N.accesses(e.operand):
        fmt = formats.get(acc.tensor)
        if fmt is None or e.index not in acc.indices:
            continue
        order = fmt.mode_order
        for q in order[order.index(acc.indices.index(e.index)) + 1:]:
            yield acc, acc.indices[q]


def check_stride_concordant(e: Slice, env: dict, depth: dict, formats: dict, loop: str) -> None:
    """Refuse a slice with a mode :func:`stored_before` the sliced one looped inside the slice's loop
    (named ``loop``): that tensor would be walked out of order. The statement's own loops put such a
    mode's loop outside the slice's where the output allows it (``columns_outside`` in
    :func:`shape_program`: a dense or CSC output of a CSC's rows sliced)."""
    k = depth[loop]
    for acc, x in stored_before(e, formats):
        loop = env.get(x) if isinstance(x, N.Index) else None
        if isinstance(loop, Index) and depth.get(loop.name, -1) > k:
            raise StrategyError(
                f"{e}: {acc} is stored with {x} before {e.index}, and the loop over {x} is inside the one over "
                f"{e.result}: the {'strided ' if e.step != 1 else ''}walk of {e.index} would be discordant; "
                f"store {acc.tensor} with {e.index} first (e.g. csr for rows)"
                + (", or slice with step 1" if e.step != 1 else ""))


def needs_workspace(stmt: N.Assign, formats: dict) -> bool:
    """Whether ``stmt`` reduces an index that a sliced operand stores before the sliced one (a
    CSC's columns summed, its rows sliced: ``out[i] = sum[j](slice(A[k, j], k -> i, ...))``), or
    reduces a strided slice of a mode stored before one of the output's (a CSR's rows sliced and
    summed), into an output appended in order (a sparse vector): the reduction's loop must run
    outside the output's, the operand walked, and the output cannot take its writes so; or collapses
    an operand stored minor index first (``x + c_csc.reshape(4)``: walked column by column). Or the
    output's fill is not the reduction's identity (a CSR of fill 1 summed: ``out`` of fill 7), where
    a sparse output, starting at its fill, could not start its sums.

    >>> from compiler.format import parse_format
    >>> from compiler.notation import parse
    >>> stmt, csc = parse("out[i] = sum[j](slice(A[k, j], k -> i, (1, 9, 2)))"), parse_format("csc")
    >>> [needs_workspace(stmt, {"A": csc, "out": parse_format(f, ndim=1)}) for f in ("sparse_vector", "dense")]
    [True, False]
    """
    out = formats.get(stmt.lhs.tensor)
    if stmt.op is not None or out is None or all(lvl.random_write for lvl in out.levels):
        return False
    if not isinstance(stmt.rhs, N.Reduce):
        # (a collapse walked minor index first: its writes out of order)
        return any(isinstance(n, Collapse) and n.result in stmt.lhs.indices and walks_minor_first(n, stmt.rhs, formats)
                   for n in N.walk(stmt.rhs))
    ident = stmt.rhs.op.identity_for(np.dtype(out.dtype))
    if ident is not NOVALUE and not same_value(ident, out.fill):
        return True
    red, slices = stmt.rhs.indices, [n for n in N.walk(stmt.rhs) if isinstance(n, Slice)]
    return any(x in red for n in slices for _, x in stored_before(n, formats)) or \
        any(n.result in red and x in stmt.lhs.indices for n in slices for _, x in stored_after(n, formats))


__all__ = ["check_collapse_concordant", "check_stride_concordant", "needs_workspace", "stored_after", "stored_before",
           "stores_minor_first", "walks_minor_first"]
