"""A sparse output whose loops run out of its storage order: reorder the loops, or build it in
the loops' order and convert it after the call.

A sorted sparse output level is appended in index order, so the loops around a write must
visit the output's indices in its storage order: a CSC ``C[i, j] = A[i, j] + B[i, j]`` needs
``j`` outside ``i``. Index notation fixes no loop order, so :func:`choose_output_order`
puts the output's indices in its storage order when that reads no more inputs out of their
own order than the given order does (every input is then walked, not searched); otherwise,
and always for a loop program (whose loops are the user's), the kernel builds the output in
the mode order its loops write (CSR for the CSC above) and the runtime converts it to the
format asked after each call (``Tensor.asformat``), as the lattice strategy does. An output
written at random (every level dense) needs no order: index notation's loops then run in the
order that reads the fewest inputs out of their storage order (:func:`_read_in_order`: column
sums of a CSR matrix walk its rows). The choice is the trace's ``output-order`` step.

>>> from compiler.format import parse_format
>>> from compiler.looplets import from_index_notation
>>> from compiler.notation import parse
>>> prog = from_index_notation(parse("C[i, j] = A[i, j] + B[i, j]"))
>>> fmts = {"A": parse_format("csc"), "B": parse_format("csc"), "C": parse_format("csc")}
>>> choice = choose_output_order(prog, "C", fmts, fixed=False)
>>> choice.built is None, [l.idx.name for l in loops_of(choice.program.body)]
(True, ['j', 'i'])
>>> fmts = {"A": parse_format("csr"), "B": parse_format("csr"), "C": parse_format("csc")}
>>> print(choose_output_order(prog, "C", fmts, fixed=False).built)
Dense(SparseList(Element(0.0)))
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from ..algebra import lookup
from ..format import Format
from ..imperative.ir import Const
from ..stand_in import stand_in
from .errors import ProgramError
from .program import Access, Assign, Block, Call, Declare, Define, Extent, Index, Loop, Sieve, TensorRef, walk


@dataclass(frozen=True)
class OutputOrder:
    """The program to lower (its loops perhaps reordered), the format to build the output in
    when it is not the one asked (None: the one asked), and why (the trace's note; "" when the
    loops already write the output in its order)."""

    program: object
    built: Format | None
    note: str


def loops_of(stmt) -> list:
    """The loops of a perfect nest, outermost first (a Block's loop nest after its declarations)."""
    out = []
    while True:
        if isinstance(stmt, Block):
            nests = [s for s in stmt.stmts if isinstance(s, Loop)]
            if len(nests) != 1:
                return out
            stmt = nests[0]
        elif isinstance(stmt, Loop):
            out.append(stmt)
            stmt = stmt.body
        else:
            return out


#: the extent of a loop of one step, a strided slice's (:mod:`compiler.looplets.shapes`)
_ONE_STEP = Extent(Const(0, "int64"), Const(1, "int64"))


def one_step_loops(body) -> set:
    """The indices of the loops of one step in ``body`` (a strided slice's ``for t = 0:1``)."""
    return {n.idx for n in walk(body) if isinstance(n, Loop) and n.ext == _ONE_STEP}


def written_loop(x, one_step: set):
    """The loop an output is written at by its index ``x``: a loop's own, or one under a loop of one
    step ``t`` (``t + k``: a strided slice's kept column, always ``k``); else None.

    >>> str(written_loop(Call(lookup("+"), (Index("t"), Index("k"))), {Index("t")}))
    'k'
    """
    if isinstance(x, Index):
        return x
    if isinstance(x, Call) and x.op == lookup("+") and x.args[0] in one_step and isinstance(x.args[1], Index):
        return x.args[1]
    return None


def _write_order(body, out: str):
    """The output's logical modes in the order its writes' loops visit them, when every write
    agrees and indexes the output by loop indices alone (:func:`written_loop`); else None."""
    orders = set()
    one_step = one_step_loops(body)

    def visit(s, loops):
        if isinstance(s, Loop):
            visit(s.body, loops + [s.idx])
        elif isinstance(s, Assign) and isinstance(s.lhs.tns, TensorRef):
            if s.lhs.tns.name == out:
                idxs = [written_loop(x, one_step) for x in s.lhs.idxs]
                if not all(x in loops for x in idxs) or len(set(idxs)) != len(idxs):
                    orders.add(None)
                else:
                    orders.add(tuple(sorted(range(len(idxs)), key=lambda m: loops.index(idxs[m]))))
        elif isinstance(s, Block):
            for t in s.stmts:
                visit(t, loops)
        elif isinstance(s, (Sieve, Define)):
            visit(s.body, loops)
    visit(body, [])
    return orders.pop() if len(orders) == 1 else None


def reads_out_of_order(body, out: str, formats: dict) -> int:
    """How many input accesses the loops of ``body`` visit out of their storage order."""
    order = [lp.idx for lp in loops_of(body)]
    count = 0
    for n in walk(body):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name != out \
                and n.tns.name in formats and all(isinstance(x, Index) and x in order for x in n.idxs):
            seq = [order.index(n.idxs[m]) for m in formats[n.tns.name].mode_order]
            count += seq != sorted(seq)
    return count


def movable(body) -> list:
    """The loops of ``body``'s nest (after the output's declarations) that may run in any order: down
    to the first whose body is more than one loop. Below it, statements before or after an inner
    loop (a reduction's scalar declared, then written out) run at that loop's depth.

    >>> from compiler.looplets import from_index_notation
    >>> from compiler.notation import parse
    >>> [lp.idx.name for lp in movable(from_index_notation(parse("C[i, k] = A[i, j] * B[j, k]")).body)]
    ['i', 'k', 'j']
    """
    if isinstance(body, Block):
        nests = [s for s in body.stmts if isinstance(s, Loop)]
        return movable(nests[0]) if len(nests) == 1 else []
    out = []
    while isinstance(body, Loop):
        out.append(body)
        body = body.body
    return out


def reordered(body, first: list):
    """``body``'s loop nest with the indices ``first`` outermost (in that order), all of them
    :func:`movable`."""
    if isinstance(body, Block):
        return replace(body, stmts=tuple(reordered(s, first) if isinstance(s, Loop) else s for s in body.stmts))
    nest = movable(body)
    assert all(any(lp.idx == i for lp in nest) for i in first), "reordered: a loop below an imperfect one"
    inner = nest[-1].body
    ordered = [lp for i in first for lp in nest if lp.idx == i] + [lp for lp in nest if lp.idx not in first]
    for lp in reversed(ordered):
        inner = replace(lp, body=inner)
    return inner


def perfect_nest(body):
    """``(loops, assignment)`` of a nest whose only statement is the innermost assignment (the
    output's declarations before it), else None: only such a nest may run its loops in any order."""
    if isinstance(body, Block):
        *decls, body = body.stmts
        if not all(isinstance(d, Declare) for d in decls):
            return None
    loops = []
    while isinstance(body, Loop):
        loops.append(body)
        body = body.body
    return (loops, body) if loops and isinstance(body, Assign) else None


def _read_in_order(prog, out: str, formats: dict) -> OutputOrder:
    """Index notation into an output written at random (a dense one): the loops in the order that
    reads the fewest inputs out of their storage order, the given order on a tie. Column sums
    ``y[j] = A[i, j]`` of a CSR ``A`` then walk A's rows and add each entry into ``y[j]`` (O(nnz)),
    where ``j`` outermost searched every row for ``j``.

    >>> from compiler.format import parse_format
    >>> from compiler.looplets import from_index_notation
    >>> from compiler.notation import parse
    >>> prog = from_index_notation(parse("y[j] = A[i, j]"))
    >>> choice = _read_in_order(prog, "y", {"A": parse_format("csr"), "y": parse_format("dense", ndim=1)})
    >>> [lp.idx.name for lp in loops_of(choice.program.body)]
    ['i', 'j']
    """
    nest = perfect_nest(prog.body)
    before = reads_out_of_order(prog.body, out, formats)
    if nest is None or before == 0 or len(nest[0]) > 5:
        return OutputOrder(prog, None, "")
    loops, assign = nest
    order = [lp.idx for lp in loops]
    # (a reduction's terms are added in another order: its operator must not care)
    if not set(order) <= set(assign.lhs.idxs) and not (assign.op is not None and assign.op.commutative
                                                       and assign.op.associative):
        return OutputOrder(prog, None, "")
    best, after = fewest_reads_out_of_order(prog.body, out, formats)
    if best == order:
        return OutputOrder(prog, None, "")
    names = lambda idxs: ", ".join(i.name for i in idxs)  # noqa: E731
    return OutputOrder(replace(prog, body=reordered(prog.body, best)), None,
                       f"{out} is written at random ({_text(formats[out])}), so its indices need not be outermost: the "
                       f"loops run {names(best)} (outermost first), reading {after} input access"
                       f"{'' if after == 1 else 'es'} out of their storage order ({before} in the order {names(order)})")


def fewest_reads_out_of_order(body, out: str, formats: dict) -> tuple[list, int]:
    """``(order, count)``: the order of ``body``'s perfect loop nest (outermost first) that reads
    the fewest inputs out of their storage order (the given order on a tie), and how many it does.

    >>> from compiler.format import parse_format
    >>> from compiler.looplets import from_index_notation
    >>> from compiler.notation import parse
    >>> prog = from_index_notation(parse("y[j] = A[i, j]"))
    >>> order, count = fewest_reads_out_of_order(prog.body, "y", {"A": parse_format("csr")})
    >>> [i.name for i in order], count
    (['i', 'j'], 0)
    """
    order = [lp.idx for lp in movable(body)]
    best, least = order, reads_out_of_order(body, out, formats)
    for perm in itertools.permutations(order):
        n = reads_out_of_order(reordered(body, list(perm)), out, formats)
        if n < least:
            best, least = list(perm), n
    return best, least


def _text(fmt: Format) -> str:
    return fmt.shorthand or str(fmt) if hasattr(fmt, "shorthand") else str(fmt)


def choose_output_order(prog, out: str, formats: dict, fixed: bool, asked_format: Format | None = None) -> OutputOrder:
    """How output ``out`` of ``prog`` (a LoopProgram) is written in order (see the module's
    docstring); ``fixed``: the loops are the user's (a loop program), not index notation's;
    ``asked_format``: the format the user asked, when ``formats`` holds its stand-in (the note names it)."""
    fmt = formats.get(out)
    if fmt is None or all(lvl.random_write for lvl in fmt.levels):
        return OutputOrder(prog, None, "") if fixed else _read_in_order(prog, out, formats)
    written = next((n for n in walk(prog.body) if isinstance(n, Assign) and isinstance(n.lhs.tns, TensorRef)
                    and n.lhs.tns.name == out), None)
    if written is not None and len(written.lhs.idxs) != len(fmt.mode_order):
        # (before any order is chosen: the order names each of the format's modes by its index)
        raise ProgramError(f"{out} has {len(fmt.mode_order)} mode(s) but is indexed with {len(written.lhs.idxs)} "
                           f"index(es)", written.line)
    order = _write_order(prog.body, out)
    if order is None or tuple(order) == tuple(fmt.mode_order):
        return OutputOrder(prog, None, "")
    lhs, one_step = written.lhs, one_step_loops(prog.body)
    names = lambda modes: ", ".join(written_loop(lhs.idxs[m], one_step).name for m in modes)  # noqa: E731
    shown = _text(asked_format or fmt)
    asked = f"{out} is {shown}, stored in the order {names(fmt.mode_order)}"
    if not fixed and set(lhs.idxs) <= {lp.idx for lp in movable(prog.body)}:
        moved = replace(prog, body=reordered(prog.body, [lhs.idxs[m] for m in fmt.mode_order]))
        before, after = reads_out_of_order(prog.body, out, formats), reads_out_of_order(moved.body, out, formats)
        if after <= before:
            return OutputOrder(moved, None, f"{asked}: the loops run {names(fmt.mode_order)} (outermost first) "
                                                f"to append it in order, reading {after} input access"
                                                f"{'' if after == 1 else 'es'} out of its own order ({before} in "
                                                f"the order {names(order)})")
    # (a level holding at most one entry per fiber may not hold the fibers of the loops' order: a
    # SparsePoint per column need not be one per row, so that level is built as a SparseList)
    held = stand_in(fmt, lambda levels, k: not levels[k].at_most_one)
    built = Format((held[0] if held else fmt).root, tuple(order))
    why = (f"the program's loops run {names(order)} (outermost first)" if fixed else
           f"the loops run {names(order)}, which read fewer inputs out of their storage order than "
           f"{names(fmt.mode_order)} would")
    held_note = f", its {' and '.join(held[1])} as a SparseList (one entry per fiber of {names(fmt.mode_order)} " \
        f"need not be one per fiber of {names(order)})" if held else ""
    return OutputOrder(prog, built, f"{asked}, and {why}: the kernel builds {out} as {_text(built)} (stored in the "
                                    f"order {names(order)}{held_note}) and converts it to {shown} after each call "
                                    f"({out}.asformat)")
