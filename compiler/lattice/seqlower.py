"""The lattice strategy over index notation with shape operators (issue 30, item 3): BURRITO's
pipeline end to end, each stage a trace step.

``seq-derive`` (Fig. 11: each loop's sequence expression, :mod:`compiler.lattice.seqderive`), one
``lattice`` step per forall (Figs. 12, 13, 27: the lattice with its edge sequences,
:mod:`compiler.lattice.seqlattice`), ``cfir`` (Fig. 15, :mod:`compiler.lattice.seqcfir`), then
``lower``: the CFIR emitted through the iterator model (:mod:`compiler.lattice.seqemit`), and
the imperative IR's cleanup. The sequences hold the extents of the tensors lowered for, so the
kernel is specialized to their shapes (a call with other shapes is refused; lower again).

It writes dense outputs, appends to a sparse vector, CSR, CSC or COO (:mod:`compiler.lattice.seqoutput`;
the loops run in the output's mode order), and assembles every other output level the lattice emission
assembles in one pass by its code (:mod:`compiler.lattice.seqassembly`: DCSR, CSF, hashes, byte maps,
bands, blocks, runs); a level it does not (a band above a hash) is built as its SparseList stand-in,
converted after each call (a ``convert`` step);
inputs are of any level the lattice's iterators read, walked as they say (:mod:`compiler.lattice.seqwalk`;
a block or run level walked backwards is converted to a SparseList before each call), of any fill (an
absent entry reads it: the result's fill is :func:`~compiler.lattice.seqderive.copy_fill`), under any
elementwise operator (:mod:`compiler.lattice.seqvalues`; a user function's own iteration algebra too),
summed whatever the summand's fill (the loops count what they sum and fold the fill in for the rest),
sliced with any step (a negative one walks the levels from their ends) and indexed by constants; an input the loops walk
against its storage order (a CSC collapsed row-major) is read row-major, a copy converted before
each call (a ``convert`` step; lower() choosing the strategy passes ``convert=False`` first,
and the refusal carries ``converts``: that tensor and how it would be converted, which it weighs
against the looplets' kernel). What it cannot lower is refused naming
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

from dataclasses import replace

import numpy as np

from ..errors import StrategyError
from ..imperative.blockcopy import block_copy
from ..imperative.cleanup import cleanup
from ..imperative.copies import drop_copies
from ..imperative.deadstores import drop_dead_stores
from ..imperative.ir_dot import ir_artifact
from ..imperative.ir import Block, Buffer, Growable, Scalar
from ..notation.ast import accesses
from ..notation.infer import infer_shapes
from ..trace import Trace
from .coo_segments import flatten_segments
from .sequences import SequenceError
from ..format import Format, dense
from ..stand_in import conversion_cost, format_text, output_conversion_note
from .seqderive import DiscordantWalk, ShapedFormat, copy_fill, input_fills, seq_lower
from .seqparts import walked_whole
from .seqcfir import same_value
from .exprs import names_used
from .seqemit import emit_function, kernel_helpers
from .seqwalk import UnwalkableLevel, walkable_format
from .seqassembly import sequence_building

LOOPLETS = "lower it with strategy='looplets'"


def lower_shape_lattice(program, formats: dict, trace: Trace, shapes, name: str | None = None, convert: bool = True):
    """The :class:`~compiler.runtime.Lowered` kernel of ``program`` (index notation with shape
    operators) for tensors of ``formats`` and ``shapes`` (``((name, shape), ...)``). An input the
    loops walk against its storage order (a CSC collapsed row-major) is read row-major, converted
    before each call (a ``convert`` step), unless ``convert`` is False (then refused)."""
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
    built = None if out_format is None else sequence_building(out_format, out)
    if built is not None:
        # (an output level the lattice emission does not assemble: built as a SparseList, converted after each call)
        trace.record("convert", before=program, after=program,
                     note=output_conversion_note(out, out_format, built[0], built[1]))
        out_format = built[0]
    if out_format is not None:
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
    dtype = None if out_format is None else np.dtype(out_format.dtype).name
    converted = {}     # (a tensor the loops walk against its storage order: read row-major; a part read densely)

    def convert_to(t: str, target: Format, why: str):
        """Read ``t`` as ``target``, converted before each call; ``why``: the refusal where ``convert`` is False."""
        nonlocal formats
        fmt = formats[t]
        how = f"{t} read as {format_text(target)}, converted before each call ({t}.asformat, " \
              f"{conversion_cost(fmt, target)})"
        if not convert:
            refusal = StrategyError(f"{why}; {LOOPLETS}")
            # (lower() choosing the strategy weighs that conversion against the looplets' kernel)
            refusal.converts = (t, how)
            raise refusal from None
        converted[t] = target
        formats = {**formats, t: target}
        inputs[t] = ShapedFormat(target, tuple(shapes[t]))
        trace.record("convert", before=program, after=program,
                     note=f"{t} is {format_text(fmt)}: {why}; the kernel reads {t} as {format_text(target)}, "
                          f"converted before each call ({t}.asformat, {conversion_cost(fmt, target)})")

    while True:
        try:
            # (the steps of a lowering that converts an input after all are not the kernel's)
            steps = Trace()
            low = seq_lower(program, trace=steps, loop_order=None if out_format is None else out_format.mode_order,
                            result_fill=fill, **inputs)
            notes = []
            fn = emit_function(low, formats, name or f"lattice_{out}", out_format, dtype, notes)
            trace.steps += steps.steps
            break
        except (UnwalkableLevel, DiscordantWalk) as e:
            t = e.tensor
            fmt = formats[t]
            if isinstance(e, UnwalkableLevel):
                # (a level the walk cannot take as it is asked to: read as a SparseList, converted before
                # each call; one the walk cannot take as a SparseList either is refused)
                target, why = walkable_format(fmt, e.level), e.why
                if target == fmt:
                    raise StrategyError(f"{e}; {LOOPLETS}") from None
            else:
                if t in converted or tuple(fmt.mode_order) == tuple(range(len(fmt.mode_order))):
                    raise StrategyError(f"{e}; {LOOPLETS}") from None
                # (the sequences walk every level under its parent: a CSC collapsed row-major is read
                # as a CSR, its copy converted before each call, as the lattice reads any discordant input)
                target, why = Format(fmt.root, tuple(range(len(fmt.mode_order)))), str(e)
            convert_to(t, target, why)
        except (StrategyError, SequenceError) as e:
            whole = [t for t in walked_whole(program, input_fills(program, formats), extents)
                     if t not in converted and formats[t] != _dense_like(formats[t])]
            if not whole:
                raise StrategyError(f"{e}; {LOOPLETS}") from None
            for t in whole:
                # (a part of another fill walks every coordinate of its own: read densely, it does so with no
                # union in a product's right operand, which the lattice does not take)
                convert_to(t, _dense_like(formats[t]), f"{e} (a concatenation's part of another fill than the "
                           f"result's walks every coordinate of its own, under a collapse or split)")
    if out_format is None:
        out_format = dense(len(program.lhs.indices), fill=0 if fill is None else fill,
                           dtype=fn.param(f"{out}_val").dtype)
    loops = sum(1 for line in low.cfir.text().splitlines() if line.lstrip().startswith("while "))
    trace.record("lower", before=low.cfir.cfir, after=fn, artifacts=[ir_artifact(fn)],
                 note="; ".join([f"the CFIR's {loops} loop(s) through the iterator model: one cursor per level, "
                                 f"initialized once per series of loops", *notes]),
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
                   shapes=tuple((t, tuple(shapes[t])) for t in read),
                   conversions=tuple(converted.items()) + (() if built is None else ((out, out_format),)))


def _dense_like(fmt: Format) -> Format:
    """``fmt``'s tensor read densely: every level Dense, its fill and dtype kept."""
    return dense(len(fmt.mode_order), fill=fmt.fill, dtype=fmt.dtype)


__all__ = ["lower_shape_lattice"]
