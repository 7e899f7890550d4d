"""The C function of a sequence lowering (shape-operators.md §8): its parameters (the tensors read, a located
entry's stand-ins, a sum's workspaces), the output's assembly that the lowering chose, and the loops of
:class:`~compiler.lattice.seqemit.SeqEmitter` between the output's start and end.

>>> from compiler.format import parse_format
>>> from compiler.lattice.seqderive import ShapedFormat, seq_lower
>>> v = parse_format("sparse", ndim=1)
>>> low = seq_lower("c[i] = a[i] * 2", a=ShapedFormat(v, (3,)))
>>> fn = emit_function(low, {"a": v}, "twice")
>>> [p.name for p in fn.params][:3]
['a0_pos', 'a0_idx', 'a_val']
"""

from __future__ import annotations

import numpy as np

from ..algebra import lookup
from ..binding import input_params
from ..imperative import ir
from ..notation.dtypes import expr_dtype
from . import seqcfir as cf
from .exprs import names_used, python_helper
from .seqassembly import sequence_output
from .seqcolmajor import column_major_output, stored_walk
from .seqemit import SeqEmitter
from .seqentrysort import SortedEntries
from .seqgroupsort import group_sorted
from .seqhoist import plain_zero
from .seqlocated import located_stmts, stand_in_format
from .seqrewind import loop_repeats, product_rewinds, walked_again
from .seqscatter import ScatteredOutput
from .seqstmts import cin_parts
from .seqstraddlesort import straddle_sorted
from .seqsumrows import emit_producers, workspace_codes
from .seqsumsort import summed_output
from .seqwhiles import inner_sequences, whiles
from .sequences import Product, walk


def output_fill(fill, dtype):
    """The fill of a dense output of ``dtype`` whose fill the sequences' algebra computed (None: 0).

    >>> output_fill(-3784425932234851461, "uint64"), output_fill(None, "float64")
    (14662318141474700155, 0)
    """
    fill = 0 if fill is None else fill
    if isinstance(fill, int) and np.dtype(dtype).kind in "iu":
        # (a product of integer fills is computed in int64, wrapping: its bits are the dtype's product's, 3 ** 43)
        fill = np.asarray(fill).astype(dtype).item()
    return fill


def emit_function(low, formats: dict, name: str, out_format=None, dtype: str | None = None,
                  notes: list | None = None) -> ir.Function:
    """The kernel of ``low`` (a :class:`~compiler.lattice.seqderive.SeqLowering`) over tensors of
    ``formats``, writing its output in ``out_format`` (default all Dense, in mode order; see
    :mod:`compiler.lattice.seqoutput` and :mod:`compiler.lattice.seqassembly` for the sparse ones);
    ``notes`` gets how it assembles the output."""
    from ..format import dense
    program = low.program
    out = program.lhs.tensor
    values, indices = cin_parts(low.cin)
    reads = {v.tensor for v in values if isinstance(v, cf.Read)}
    names = {t: t.rstrip("'") for t in reads}
    # (and a level no access reads: the rows the columns of a COO are located in, seqlocated.rows_walked)
    names |= {lv.tensor: lv.rows_of for lv in low.row_walks}
    # (an entry read at constants only is a 0-d stand-in, located in its tensor before the loops: seqlocated)
    located = {r.name: (r, fmt) for r, fmt in low.located}
    formats = {**formats, **{s: stand_in_format(fmt, r) for s, (r, fmt) in located.items()}}
    # (a sum's workspace is read as a Dense input of the sum's type, or a CSR one, its arrays the kernel's own)
    work = {w.name: w.format(expr_dtype(w.total, lambda a: formats[a.tensor].dtype)) for w in low.workspaces}
    inputs = sorted((set(names.values()) - set(work) - set(located)) | {r.tensor for r, _ in located.values()})
    if dtype is None:
        # (the statement's type: x > y is bool, a sum of int32 values int64, as numpy's)
        dtype = expr_dtype(program.rhs, lambda a: formats[a.tensor].dtype).name
    if out_format is None:
        out_format = dense(1 if low.flattened else len(program.lhs.indices), fill=output_fill(low.fill, dtype),
                           dtype=dtype)
    params = [p for t in inputs for p in input_params(t, formats[t])]
    # (and the loops a product's nesting added: compiler.lattice.seqproductnest; and a workspace's parameters)
    cfir_loops = list(whiles(low.cfir.cfir))
    taken = {str(i) for i in program.lhs.indices} | indices | {w.index for w in cfir_loops} \
        | {p.name for p in params} | {p.name for w, fmt in work.items() for p in input_params(w, fmt)}
    em = SeqEmitter({**formats, **work}, names, dtype, taken)
    prelude = []
    for stand_in, (r, fmt) in located.items():
        if r.index is not None:     # (located where it is read: seqlocated.RowLocates)
            em.row_located[stand_in] = (r, fmt)
            continue
        stmts, var = located_stmts(r, fmt, em.fresh)
        prelude += stmts
        em.located[stand_in] = var
    for lv in low.row_walks:
        em.row_walks.setdefault(lv.rows_of, []).append(lv)
    em.workspaces = workspace_codes(low, work, em.fresh)
    em.rewinding = frozenset(p.group_key for w in cfir_loops
                             for p in w.rewind + loop_repeats(w.seq, inner_sequences(w))) \
        | frozenset(p.group_key for w in cfir_loops for s in (w.seq, *(x for pair in w.locs for x in pair))
                    for n in walk(s) if isinstance(n, Product) for p in product_rewinds(n) + walked_again(n))
    if low.assembly == "accumulate":
        em.out = summed_output(out, out_format, tuple(str(i) for i in program.lhs.indices), low.shape, dtype,
                               em.fresh, zero=not plain_zero(low.fill), cin=low.cin)
    elif low.assembly == "scatter":
        em.out = ScatteredOutput(out, out_format, low.shape, dtype, em.fresh)
    elif low.assembly in ("column-major", "flat"):
        walked = stored_walk(low.cin, out, len(program.lhs.indices), {t: formats[t] for t in inputs})
        em.out = column_major_output(out, out_format, tuple(str(i) for i in program.lhs.indices), low.shape, dtype,
                                     em.fresh, low.flattened, low.assembly == "flat", walked)
    else:
        indices = tuple(str(i) for i in program.lhs.indices)
        em.out = sequence_output(out, out_format, indices, low.shape, dtype, em.fresh)
        if low.assembly == "group-sort":
            em.out = group_sorted(em.out, indices, low, dtype, em.fresh)
        elif low.assembly == "straddle-sort":
            em.out = straddle_sorted(em.out, indices, out_format, low, dtype, em.fresh)
        elif low.assembly == "sort":
            em.out = SortedEntries(em.out, out_format, indices, low.shape, dtype, em.fresh)
    # (a workspace kept in sparse rows lives from its sum's loops through the statement's: seqsumrows)
    loops = emit_producers(em, low.cfir.cfir, em.out.around)
    for code in em.workspaces.values():
        loops = code.wrap(loops)
    body = prelude + em.out.start({t: formats[t] for t in inputs}, program.rhs) + loops + em.out.end()
    if notes is not None:
        notes += em.out.notes
    used = names_used(body)
    params = [p for p in params if p.name in used] + em.out.params()
    helpers = tuple(ir.Helper(h, src) for h, (src, _) in sorted(em.helpers.items()) if src)
    return ir.Function(name, tuple(params), ir.Block(tuple(body)), helpers)


def kernel_helpers(fn: ir.Function, low) -> tuple:
    """``(name, Python implementation)`` of each helper ``fn`` calls, for the IR interpreter (a
    helper is named ``ss_<operator>_<dtypes>``)."""
    ops = {}
    for v in cin_parts(low.cin)[0]:
        if isinstance(v, cf.Op):
            ops.setdefault(v.op.name, v.op)
    # (and a reduction's operator, where C computes it by a helper: a complex product's t = ss_mul_complex128(t, v))
    stack = [low.cin]
    while stack:
        x = stack.pop()
        if isinstance(x, cf.Block):
            stack += x.stmts
        elif isinstance(x, cf.Forall):
            stack.append(x.body)
        elif isinstance(x, cf.Reduce) and x.op is not None:
            ops.setdefault(x.op.name, x.op)
    # (an integer product's fill folded in to the power of the coordinates skipped: no value of the CIN)
    ops.setdefault("pow", lookup("pow"))
    return tuple((h.name, python_helper(op, h.name)) for h in fn.helpers for op in ops.values()
                 if h.name.startswith(f"ss_{op.name}_"))


__all__ = ["emit_function", "kernel_helpers", "output_fill"]
