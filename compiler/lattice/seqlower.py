"""The lattice strategy over index notation with shape operators (issue 30, item 3): BURRITO's
pipeline end to end, each stage a trace step.

``seq-derive`` (Fig. 11: each loop's sequence expression, :mod:`compiler.lattice.seqderive`), one
``lattice`` step per forall (Figs. 12, 13, 27: the lattice with its edge sequences,
:mod:`compiler.lattice.seqlattice`), ``cfir`` (Fig. 15, :mod:`compiler.lattice.seqcfir`), then
``lower``: the CFIR emitted through the iterator model (:mod:`compiler.lattice.seqemit`), and
the imperative IR's cleanup. The sequences hold the extents of the tensors lowered for, so the
kernel is specialized to their shapes (a call with other shapes is refused; lower again).

It writes dense outputs, or appends to a sparse vector, CSR, CSC or COO (:mod:`compiler.lattice.seqoutput`;
the loops run in the output's mode order);
inputs are Dense, SparseList and SparseCOO levels of any fill (an absent entry reads it: the
result's fill is :func:`~compiler.lattice.seqderive.copy_fill`), under any elementwise operator
(:mod:`compiler.lattice.seqvalues`; a user function's own iteration algebra too), summed whatever the
summand's fill (the loops count what they sum and fold the fill in for the rest), sliced with any step (a
negative one walks the levels from their ends) and indexed by constants; an input the loops walk
against its storage order (a CSC collapsed row-major) is read row-major, a copy converted before
each call (a ``convert`` step; lower() choosing the strategy passes ``convert=False`` first,
and the refusal carries ``converts``: that tensor and how it would be converted, which it weighs
against the looplets' kernel; so is a search of a split's groups for its minor coordinate,
:mod:`compiler.lattice.seqstride`, ``searches``). What it cannot lower is refused naming
``strategy='looplets'``, which lowers every shape operator (and which :func:`compiler.lower` takes
then, given no strategy).

>>> import numpy as np, compiler as ss
>>> A = ss.Tensor.from_numpy(np.array([[0, 1.0, 0], [2.0, 0, 3.0]]), "csr")
>>> k = ss.lower("c[k] = collapse(A[i, j], (i, j) -> k)", strategy="lattice", A=A)
>>> k(A=A).to_numpy()
array([0., 1., 0., 2., 0., 3.])
>>> [s.stage for s in k.trace][1:6]
['shapes', 'seq-derive', 'lattice', 'cfir', 'lower']
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np

from .. import values
from ..errors import StrategyError
from ..imperative.blockcopy import block_copy
from ..imperative.cleanup import cleanup
from ..imperative.copies import drop_copies
from ..imperative.deadstores import drop_dead_stores
from ..imperative.ir_dot import ir_artifact
from ..imperative.ir import Block, Buffer, Growable, Scalar
from ..notation.ast import Call, Literal, accesses, walk
from ..notation.infer import infer_shapes
from ..trace import Trace
from .coo_segments import flatten_segments
from .sequences import SequenceError
from ..format import Format
from ..stand_in import conversion_cost, format_text
from .seqderive import DiscordantWalk, ShapedFormat, copy_fill, input_fills, seq_lower
from .seqrewind import SplitOrder
from .seqstride import searched
from .seqcfir import same_value
from .seqvalues import call_kind
from .exprs import names_used
from .seqemit import emit_function, kernel_helpers
from .seqoutput import output_kind

LOOPLETS = "lower it with strategy='looplets'"


def lower_shape_lattice(program, formats: dict, trace: Trace, shapes, name: str | None = None, convert: bool = True):
    """The :class:`~compiler.runtime.Lowered` kernel of ``program`` (index notation with shape
    operators) for tensors of ``formats`` and ``shapes`` (``((name, shape), ...)``). An input the
    loops walk against its storage order (a CSC collapsed row-major) is read row-major, converted
    before each call (a ``convert`` step), unless ``convert`` is False (then refused)."""
    from ..format import dense
    from ..runtime import Lowered
    shapes = dict(shapes or ())
    out = program.lhs.tensor
    read = list(dict.fromkeys(a.tensor for a in accesses(program.rhs)))
    missing = [t for t in read if t not in shapes]
    if missing:
        raise StrategyError(f"{program}: the lattice strategy lowers shape operators for tensors of known shapes "
                            f"(their sequences hold the extents); give {', '.join(missing)} as arrays or tensors, "
                            f"not only formats, or {LOOPLETS}")
    inputs = {t: ShapedFormat(formats[t], tuple(shapes[t])) for t in read}
    out_format = formats.get(out)
    extents = infer_shapes(program, {t: shapes[t] for t in read}).extents
    try:
        fill = copy_fill(program, {t: formats[t] for t in read}, extents)
    except StrategyError as e:
        raise StrategyError(f"{e}; {LOOPLETS}") from None
    if out_format is not None:
        if output_kind(out_format) is None:
            raise StrategyError(f"{program}: the lattice strategy appends shape operators' results in the loops' "
                                f"order to a dense output, a sparse vector, CSR, CSC or COO, not {out} as "
                                f"{out_format}; {LOOPLETS}")
        want = 0 if fill is None else fill
        # (where the loops' algebra takes the result's fill for 0, a literal added, they walk every
        # coordinate: an output of fill 0 is written whole too)
        walked = copy_fill(program, {t: formats[t] for t in read}, extents, exact=False)
        if same_value(out_format.fill, 0 if walked is None else walked):
            fill = walked
        elif not same_value(out_format.fill, want):
            raise StrategyError(f"{program}: {out} has fill {out_format.fill}, and the result's is {want} (the "
                                f"lattice strategy writes the entries it walks, leaving the rest at the output's "
                                f"fill); give {out} fill {want}, or {LOOPLETS}")
    wild = [t for t in read if not values.assumed(t).finite]
    fills = input_fills(program, {t: formats[t] for t in read})
    if wild and any(isinstance(n, Call) and call_kind(n, fills, extents) == "product"
                    and sum(not isinstance(a, Literal) for a in n.args) > 1 for n in walk(program.rhs)):
        # the sequences of * are intersections: a factor's unstored 0 skips the other's NaN or inf (a
        # constant factor is there at every coordinate: it skips nothing)
        raise StrategyError(f"{program}: {', '.join(wild)} may hold NaN or inf, and the lattice strategy's "
                            f"intersections skip where a factor of * is 0 (0 * inf is NaN); {LOOPLETS}")
    converted = {}     # (a tensor the loops walk against its storage order: read row-major)
    order = None if out_format is None else out_format.mode_order
    while True:
        try:
            low = seq_lower(program, trace=trace, loop_order=order, result_fill=fill, **inputs)
            break
        except SplitOrder as e:
            # (a dense output takes its entries in any order: its loops may take the split's indices in
            # one its minor walk can, A's row's fiber under the minor index of split(A[l, j], l -> (i, k)))
            free = None if out_format is not None and output_kind(out_format) != "dense" else \
                next(iter(free_orders(program, fill, inputs)), None)
            if free is None:
                raise StrategyError(f"{e}; {LOOPLETS}") from None
            order = free
            trace.record("loop-order", before=program, after=program,
                         note=f"{e.args[0]}: the output is dense, so its loops run "
                              f"{', '.join(str(program.lhs.indices[m]) for m in order)}, not in its mode order",
                         data={"order": list(order)})
        except DiscordantWalk as e:
            t = e.tensor
            fmt = formats[t]
            if t in converted or tuple(fmt.mode_order) == tuple(range(len(fmt.mode_order))):
                raise StrategyError(f"{e}; {LOOPLETS}") from None
            # (the sequences walk every level under its parent: a CSC collapsed row-major is read
            # as a CSR, its copy converted before each call, as the lattice reads any discordant input)
            natural = Format(fmt.root, tuple(range(len(fmt.mode_order))))
            how = f"{t} read as {format_text(natural)}, converted before each call ({t}.asformat, " \
                  f"{conversion_cost(fmt, natural)})"
            if not convert:
                refusal = StrategyError(f"{e}; {LOOPLETS}")
                # (lower() choosing the strategy weighs that conversion against the looplets' gather)
                refusal.converts = (t, how)
                raise refusal from None
            converted[t] = natural
            formats = {**formats, t: natural}
            inputs[t] = ShapedFormat(natural, tuple(shapes[t]))
            trace.record("convert", before=program, after=program,
                         note=f"{t} is {format_text(fmt)}: {e}; the kernel reads {t} as {format_text(natural)}, "
                              f"converted before each call ({t}.asformat, {conversion_cost(fmt, natural)})")
        except (StrategyError, SequenceError) as e:
            raise StrategyError(f"{e}; {LOOPLETS}") from None
    found = searched(low.cin)
    if found and not convert:
        # (lower() choosing the strategy weighs the search against the looplets', as a conversion)
        refusal = StrategyError(f"{program}: the loops search each group of a split for the coordinate of its "
                                f"minor index, looped outside the major one ({found[0]}); {LOOPLETS}")
        refusal.searches = f"which searches each group of a split for its minor index's coordinate ({found[0]})"
        raise refusal
    dtype = None if out_format is None else np.dtype(out_format.dtype).name
    fn = emit_function(low, formats, name or f"lattice_{out}", out_format, dtype)
    if out_format is None:
        out_format = dense(len(program.lhs.indices), fill=0 if fill is None else fill,
                           dtype=fn.param(f"{out}_val").dtype)
    loops = sum(1 for line in low.cfir.text().splitlines() if line.lstrip().startswith("while "))
    trace.record("lower", before=low.cfir.cfir, after=fn, artifacts=[ir_artifact(fn)],
                 note=f"the CFIR's {loops} loop(s) through the iterator model: one cursor per level, "
                      f"initialized once per series of loops",
                 data={"loops": loops, "shapes": {t: list(s) for t, s in shapes.items() if t in read}})
    body = tuple(cleanup(fn.body.body))
    # (an input the cleanup left unread is no parameter: C warns of it)
    used = names_used(body)
    params = tuple(p for p in fn.params if not isinstance(p, (Scalar, Buffer)) or p.name in used
                   or isinstance(p, Buffer) and p.intent == "inout")
    after = replace(fn, params=params, body=Block(body))
    if after != fn:
        trace.record("cleanup", before=fn, after=after, artifacts=[ir_artifact(after)],
                     note="assignments replaced before a read and locals nothing reads dropped")
        fn = after
    dtypes = {p.name: p.dtype for p in fn.params if isinstance(p, (Buffer, Growable))}
    after = replace(fn, body=Block(tuple(flatten_segments(fn.body.body, dtypes))))
    if after != fn:
        trace.record("flatten-segments", before=fn, after=after, artifacts=[ir_artifact(after)],
                     note="a COO part whose entries land one after the other in the output walked as one loop "
                          "over its positions, not row by row: one block copy of the whole part")
        fn = after
    after = replace(fn, body=Block(tuple(block_copy(fn.body.body, dtypes))))
    if after != fn:
        trace.record("block-copy", before=fn, after=after, artifacts=[ir_artifact(after)],
                     note="appends of a run of entries copied as a block when the filter drops none of them")
        fn = after
    for stage, run, note in (
            ("copies", drop_copies, "locals that only copy another (neither changing while the copy lives) "
             "replaced by it"),
            ("dead-stores", drop_dead_stores, "assignments to locals that nothing reads after them dropped: a "
             "block copy's position past the run it copied")):
        after = replace(fn, body=Block(tuple(run(fn.body.body))))
        if after != fn:
            trace.record(stage, before=fn, after=after, artifacts=[ir_artifact(after)], note=note)
            fn = after
    fill = np.asarray(0 if fill is None else fill).astype(np.dtype(out_format.dtype)).item()
    return Lowered(fn, out, out_format, tuple(int(n) for n in low.shape), fill, (), "fill", kernel_helpers(fn, low),
                   shapes=tuple((t, tuple(shapes[t])) for t in read), conversions=tuple(converted.items()))


def free_orders(program, fill, inputs: dict):
    """The loop orders (permutations of the output's modes, the mode order's first) of ``program`` whose
    split indices the sequence layer takes (for a dense output, written in any order), lowered for
    ``inputs`` with a scratch trace.

    >>> from compiler.format import parse_format
    >>> from compiler.notation import parse
    >>> A = ShapedFormat(parse_format("csr", ndim=2), (6, 4))
    >>> next(free_orders(parse("C[i, j, k] = split(A[l, j], l -> (i:2, k:3))"), None, {"A": A}))
    (0, 2, 1)
    """
    for order in itertools.permutations(range(len(program.lhs.indices))):
        try:
            seq_lower(program, trace=Trace(), loop_order=order, result_fill=fill, **inputs)
        except (StrategyError, SequenceError):
            continue
        yield order


__all__ = ["lower_shape_lattice", "free_orders"]
