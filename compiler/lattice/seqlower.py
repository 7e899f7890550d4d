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
a block or run list walked backwards moves its block or run down beside its position; a level whose
iterator cannot walk it backwards is converted to a SparseList before each call), of any fill (an
absent entry reads it: the result's fill is :func:`~compiler.lattice.seqderive.copy_fill`), under any
elementwise operator (:mod:`compiler.lattice.seqvalues`; a user function's own iteration algebra too),
summed whatever the summand's fill (the loops count what they sum and fold the fill in for the rest),
sliced with any step (a negative one walks the levels from their ends) and indexed by constants. Where the loops in the
output's order walk an input against its storage order, they run in another order where the
output allows it (a ``loop-order`` step, :func:`reordered`): a CSC written by a scatter
(:mod:`compiler.lattice.seqscatter`), any other sparse output with its two innermost loops swapped, its
entries or each group of them sorted before it appends them (:mod:`compiler.lattice.seqgroupsort`; a split's
groups straddling a concatenation's parts held across them first, :mod:`compiler.lattice.seqstraddlesort`), or, of
three modes or more, its loops in any order, every entry bucketed by its first stored mode and each bucket sorted
by the others (:mod:`compiler.lattice.seqentrysort`), and, where
no input could be read converted instead, a sum's loops around the output's (:mod:`compiler.lattice.seqhoist`;
a sparse matrix's terms bucketed by row, :mod:`compiler.lattice.seqsumscatter`), a sum under an operator into a
workspace the output's loops read after (:mod:`compiler.lattice.seqworkspace`; kept in sparse rows over both
indices of a sparse matrix output, :mod:`compiler.lattice.seqsumrows`) or a dense output's loops in any
order; a column-major flatten of a matrix stored row-major (``a.T.reshape(-1)``, beside a sparse vector re-sorted
into rows first) or of a 3-D tensor (``permute_dims(a3, (2, 1, 0)).reshape(-1)``) with its collapses undone, its
loops in the tensor's order, each entry at its flat coordinate (:mod:`compiler.lattice.seqcolmajor`). Else an
input the loops walk against its storage order (a CSC collapsed row-major) is read row-major, a
copy converted before
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

import math
from dataclasses import replace
from itertools import combinations, islice, permutations

import numpy as np

from ..errors import SparsescopeError, StrategyError
from ..imperative.blockcopy import block_copy
from ..imperative.rowspans import row_spans
from ..imperative.cleanup import cleanup
from ..imperative.copies import drop_copies
from ..imperative.samevalues import read_only, same_values
from ..imperative.deadstores import drop_dead_stores
from ..imperative.declarations import DECLARED_WHERE_SET, declare_where_set
from ..imperative.ir_dot import ir_artifact
from ..imperative.ir import Block, Buffer, Growable, Scalar
from ..notation.ast import Reduce, accesses, free_indices, walk
from ..notation.infer import infer_shapes
from ..trace import Trace
from ..values import same_value
from .coo_segments import flatten_segments
from .sequences import SequenceError
from ..format import Format, dense
from ..stand_in import conversion_cost, format_text, output_conversion_note
from .seqderive import ShapedFormat, copy_fill, input_fills, seq_lower
from .seqnesting import DiscordantWalk, LoopOrder
from .seqhoist import hoistable, hoistable_into_vector, order_note, unhoisted
from .seqworkspace import sums_under_operators, workspace_note
from .seqoutput import output_kind
from .seqparts import walked_whole
from .seqrewind import SplitOrder
from .seqstride import jumps, searched
from .seqscatter import scatter_note, scatters
from .seqgroupsort import group_sort_note, sorts_groups, swapped, unsorted
from .seqcolmajor import column_major, split_flatten
from .seqentrysort import entry_sorting
from .seqstraddle import straddle_refusal, straddle_scatter_note
from .seqstraddlesort import straddle_sorting
from .seqsumscatter import bucketed
from .seqsumrows import unbucketed
from .seqsumsort import sorts_sums
from .exprs import names_used
from .seqfunction import emit_function, kernel_helpers, output_fill
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
    info = infer_shapes(program, {t: shapes[t] for t in read})
    extents, out_shape = info.extents, info.output
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

    def adopted(low, step: str, data: dict):
        """``low``, a lowering in another loop order than the output's, its steps the kernel's trace's."""
        trace.record("loop-order", before=program, after=low.cin, note=step, data=data)
        trace.steps += low.trace.steps
        low.trace = trace
        return low

    low = None      # (a lowering in another loop order than the output's, to emit)
    unsearched_tried = False
    while True:
        try:
            # (the steps of a lowering that converts an input after all are not the kernel's)
            steps = Trace()
            if low is None:
                low = seq_lower(program, trace=steps, loop_order=None if out_format is None else out_format.mode_order,
                                result_fill=fill, **inputs)
            search = searched(low.cin)
            if search and not unsearched_tried:
                # (a search of each group for a minor coordinate is slower than a walk in another order
                # where the output allows one: a split vector's column sums add into a dense output)
                unsearched_tried = True
                other = reordered(program, inputs, out_format, fill, f"the loops in the output's order search "
                                  f"each group of a split for its minor coordinate ({search[0]})",
                                  sort_groups=any(not jumps(s) for s in search))
                if other is not None:
                    low = adopted(*other)
                    continue
            refused = straddle_refusal(program, low, out_format)
            if refused and not low.assembly:
                # (a scatter takes each part's half of a straddling group in turn: its fibers fill in the loops' order)
                other = reordered(program, inputs, out_format, fill, refused, scatter_only=True)
                if other is not None:
                    low = adopted(other[0], straddle_scatter_note(out, out_format, refused, other[2]["order"]),
                                  other[2])
                    continue
            spanned = straddle_sorting(program, low, out_format, refused) if refused else None
            if spanned is not None:
                # (each group held across the parts, then sorted and appended: compiler.lattice.seqstraddlesort)
                low, note = spanned
                steps.record("straddle", before=program, after=low.cin, note=note)
            elif refused:
                raise StrategyError(refused)
            notes = []
            fn = emit_function(low, formats, name or f"lattice_{out}", out_format, dtype, notes)
            trace.steps += steps.steps
            break
        except UnwalkableLevel as e:
            # (a level the walk cannot take as it is asked to: read as a SparseList, converted before
            # each call; one the walk cannot take as a SparseList either is refused)
            low = None
            target = walkable_format(formats[e.tensor], e.level)
            if target == formats[e.tensor]:
                raise StrategyError(f"{e}; {LOOPLETS}") from None
            convert_to(e.tensor, target, e.why)
        except (LoopOrder, SplitOrder) as e:
            # (where the input walked against could be read converted, as before, only the scatter is
            # tried first, measured faster than converting: benchmarks/bench_shape_order.py; a split's
            # indices in an order its minor walk cannot take are another order's too)
            convertible = isinstance(e, DiscordantWalk) and e.tensor not in converted and \
                not _natural(formats[e.tensor])
            other = reordered(program, inputs, out_format, fill, getattr(e, "walk", str(e)), scatter_only=convertible,
                              sort_groups=isinstance(e, SplitOrder))
            if other is None and isinstance(e, SplitOrder):
                # (a split's minor index stored before its major one, not only swapped innermost: every entry sorted)
                other = entry_sorting(program, inputs, out_format, fill, out_shape, str(e))
            if other is not None:
                low = adopted(*other)
                continue
            low = None
            if not isinstance(e, DiscordantWalk):
                raise StrategyError(f"{e}; {LOOPLETS}") from None
            t = e.tensor
            if t in converted or _natural(formats[t]):
                # (no order walks every input as stored, and the one walked against is stored in its
                # natural order: another, stored otherwise, is read converted, a CSC beside a CSR)
                t = next((x for x in read if x not in converted and not _natural(formats[x])), None)
                if t is None:
                    # (a column-major flatten of a row-major matrix: its collapse undone, the loops in the
                    # inputs' order, the entries sorted by the flat coordinate: compiler.lattice.seqcolmajor)
                    other = column_major(program, inputs, out_format, fill, getattr(e, "walk", str(e)))
                    # (else the output sorted from the inputs' order: a concatenation into a COO or CSF stored with
                    # its two innermost modes swapped, or into a COO or DCSR stored column-major)
                    other = other or reordered(program, inputs, out_format, fill, getattr(e, "walk", str(e)),
                                               sort_groups=True)
                    # (or every entry sorted, bucketed by the first stored mode: a 3-D one stored k, l, j)
                    other = other or entry_sorting(program, inputs, out_format, fill, out_shape,
                                                   getattr(e, "walk", str(e)))
                    if other is None:
                        why = unbucketed(program, out_format) or unsorted(program, out_format) or \
                            split_flatten(program) or unhoisted(program)
                        raise StrategyError(f"{e}{why}; {LOOPLETS}") from None
                    low = adopted(*other)
                    continue
            # (the sequences walk every level under its parent: a CSC collapsed row-major is read
            # as a CSR, its copy converted before each call, as the lattice reads any discordant input)
            convert_to(t, Format(formats[t].root, tuple(range(len(formats[t].mode_order)))), str(e))
        except (StrategyError, SequenceError) as e:
            low = None
            whole = [t for t in walked_whole(program, input_fills(program, formats), extents)
                     if t not in converted and formats[t] != _dense_like(formats[t])]
            if not whole:
                raise StrategyError(f"{e}; {LOOPLETS}") from None
            for t in whole:
                # (a part of another fill walks every coordinate of its own: read densely, it does so with no
                # union in a product's right operand, which the lattice does not take)
                convert_to(t, _dense_like(formats[t]), f"{e} (a concatenation's part of another fill than the "
                           f"result's walks every coordinate of its own, under a collapse or split; under a split "
                           f"it is walked as its stored entries and its universe, a union of products, only "
                           f"beside one other part, of the result's fill: with more, the cases of the split's "
                           f"loops multiply)")
    apart = [w for step in trace.find("cfir") for w in step.rewrites if w.rule == "fill-per-row"]
    if apart:
        # (what was read converted before: the front end weighs this kernel against its reshapes refined)
        trace.record("fill-rows", before=program, after=low.cin, data={"splits": len(apart)},
                     note=f"a split of a concatenation's ravel whose part of another fill walks every coordinate of "
                          f"its own: that part as its stored entries' product and its universe's, a union of "
                          f"products the split's groups walk (e.g. {apart[0].after}), no part read converted")
    found = searched(low.cin)
    if found and not convert:
        # (lower() choosing the strategy weighs the search against the looplets', as a conversion)
        refusal = StrategyError(f"{program}: the loops search each group of a split for the coordinate of its "
                                f"minor index, looped outside the major one ({found[0]}); {LOOPLETS}")
        refusal.searches = f"which searches each group of a split for its minor index's coordinate ({found[0]})"
        raise refusal
    if out_format is None:
        dtype = fn.param(f"{out}_val").dtype
        out_format = dense(len(program.lhs.indices), fill=output_fill(fill, dtype), dtype=dtype)
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
    after = replace(fn, body=Block(tuple(row_spans(fn.body.body, dtypes))))
    if after != fn:
        trace.record("row-spans", before=fn, after=after, artifacts=[ir_artifact(after)],
                     note="a loop over consecutive rows whose appends copy their entries unchanged appends all of "
                          "them as one run, then counts the rows from the input's positions (row by row when the "
                          "filter drops one)")
        fn = after
    after = replace(fn, body=Block(tuple(block_copy(fn.body.body, dtypes))))
    if after != fn:
        trace.record("block-copy", before=fn, after=after, artifacts=[ir_artifact(after)],
                     note="appends of a run of entries copied as a block when the filter drops none of them")
        fn = after
    for stage, run, note in (
            ("same-values", lambda b: same_values(b, read_only(fn.params)), "a local declared with what an earlier one still holds (a second search "
             "of a row for one column, its bounds loaded again) declared a copy of it"),
            ("copies", drop_copies, "locals that only copy another (neither changing while the copy lives) "
             "replaced by it"),
            ("dead-stores", drop_dead_stores, "assignments to locals that nothing reads after them dropped: a "
             "block copy's position past the run it copied"),
            ("declarations", declare_where_set, DECLARED_WHERE_SET)):
        after = replace(fn, body=Block(tuple(run(fn.body.body))))
        if after != fn:
            trace.record(stage, before=fn, after=after, artifacts=[ir_artifact(after)], note=note)
            fn = after
    fill = np.asarray(0 if fill is None else fill).astype(np.dtype(out_format.dtype)).item()
    shape = (math.prod(low.shape),) if low.flattened else tuple(int(n) for n in low.shape)
    return Lowered(fn, out, out_format, shape, fill, (), "fill", kernel_helpers(fn, low),
                   shapes=tuple((t, tuple(shapes[t])) for t in read),
                   conversions=tuple(converted.items()) + (() if built is None else ((out, out_format),)))


def _dense_like(fmt: Format) -> Format:
    """``fmt``'s tensor read densely: every level Dense, its fill and dtype kept."""
    return dense(len(fmt.mode_order), fill=fmt.fill, dtype=fmt.dtype)


def _natural(fmt) -> bool:
    return tuple(fmt.mode_order) == tuple(range(len(fmt.mode_order)))


#: at most this many loops are tried in every order (5! orders, each refused in about half a millisecond) for one
#: that walks the inputs as stored
MOST_LOOPS = 5
#: and of more loops at most this many orders (as many), the likeliest first (past them, sums under operators are
#: ordered one at a time: :func:`each_sum_ordered`)
MOST_ORDERS = math.factorial(MOST_LOOPS)


def interleavings(kept: tuple, placed: tuple):
    """Each order of ``kept`` and ``placed`` together keeping ``kept``'s order, those putting ``placed`` first
    first.

    >>> [''.join(x) for x in interleavings(("j", "m"), ("i",))]
    ['ijm', 'jim', 'jmi']
    >>> len(list(interleavings(("j", "m", "n"), ("i", "p", "o"))))
    120
    """
    n = len(kept) + len(placed)
    for spots in combinations(range(n), len(placed)):
        for some in permutations(placed):
            rest, mine = iter(kept), dict(zip(spots, some))
            yield tuple(mine[k] if k in mine else next(rest) for k in range(n))


def each_sum_ordered(program, under: list, outputs: tuple, inputs: dict):
    """One order of every loop of ``program`` whose sums ``under`` (under operators, each into its workspace) run
    around the output's loops (``outputs``, the output's indices in its order), found for each sum alone: the sum
    (doubled, under an operator) into an output of its free indices, its own indices placed among those in each way
    (:func:`interleavings`) until one walks its inputs as stored; the sums' orders then joined, each summed index
    just before the first of its sum's free indices that came after it (a sum's loops are its own: no other sum's
    index runs in them). The sums' interleavings are added, not multiplied: ``sum(stack, 0) + sum(stack2, (0, 3))
    [:, :, None] + sum(stack3, (0, 2, 3))[:, None, None]``'s 6 summed indices among 3 have 60480 orders together,
    4 + 12 + 24 one sum at a time. None where a sum has no such order, or its text does not parse alone (a user
    function in it).

    >>> from compiler.notation import parse
    >>> from compiler.lattice.seqderive import ShapedFormat
    >>> from compiler.format import parse_format
    >>> prog = parse("c[j, m] = sum[i](A[i, j, m]) + sum[p](B[j, p, m])")
    >>> csf = parse_format("csf", ndim=3)
    >>> A, B = ShapedFormat(csf, (2, 3, 4)), ShapedFormat(csf, (3, 2, 4))
    >>> each_sum_ordered(prog, sums_under_operators(prog), ("j", "m"), {"A": A, "B": B})
    ('i', 'j', 'p', 'm')
    """
    from ..notation import parse
    gaps = [[] for _ in range(len(outputs) + 1)]
    for s in under:
        own = tuple(str(i) for i in s.indices)
        free = tuple(x for x in outputs if x in {str(i) for i in free_indices(s)})
        try:
            alone = parse(f"{program.lhs.tensor}[{', '.join(free)}] = {s} * 2")
        except SparsescopeError:    # (a user function unknown to the text alone: every interleaving is tried)
            return None
        for order in interleavings(free, own):
            try:
                low = seq_lower(alone, trace=Trace(), loop_order=tuple(range(len(free))), hoisted=order,
                                sparse_rows=True, **inputs)
            except (StrategyError, SequenceError):
                continue
            if not searched(low.cin):
                break
        else:
            return None
        # (each summed index just before the first of the sum's free indices after it: their order kept)
        for x in own:
            after = [y for y in order[order.index(x):] if y in free]
            gaps[outputs.index(after[0]) if after else len(outputs)].append(x)
    return tuple(x for k, gap in enumerate(gaps) for x in gap + list(outputs[k:k + 1]))


def reordered(program, inputs: dict, out_format, fill, why: str, scatter_only: bool = False,
              sort_groups: bool = False):
    """``(lowering, note, data)``: ``program`` lowered with its loops in another order than the output's
    mode order, which walked an input against its storage order (``why``), where the output allows
    it: a dense output (written at random), a sum's loops around the output's (its terms added into
    a dense output or a sparse vector's workspace: :mod:`compiler.lattice.seqhoist`; bucketed by row
    into a sparse matrix: :mod:`compiler.lattice.seqsumscatter`; bucketed by the first mode, each
    bucket sorted, into a sparse output of 3 or more modes: :mod:`compiler.lattice.seqsumsort`), a sum under an
    operator into a workspace over its free indices, the output's loops after (:mod:`compiler.lattice.seqworkspace`:
    of a vector's extent, or a dense output's; a sparse matrix's in sparse rows, :mod:`compiler.lattice.seqsumrows`;
    a sparse output's of 3 or more modes sorted by key, :mod:`compiler.lattice.seqsumsort`, a sum over two of its
    modes in sparse rows; of more loops than :data:`MOST_LOOPS` the output's kept in order, the sums' placed among
    them, :func:`interleavings`, and, where those are more than :data:`MOST_ORDERS`, each sum's ordered alone first,
    :func:`each_sum_ordered`),
    or a sparse output built by a scatter
    (:mod:`compiler.lattice.seqscatter`); None where no order walks every
    input as stored. The first order that does is taken: the output's loops reordered alone first, then
    with the sum's among them. ``scatter_only``: the scatter alone (where the input could be read
    converted instead, which a sum walking a CSC's strided rows column by column does not beat). ``sort_groups``:
    any other sparse output may also run its two innermost loops swapped, its entries (or each group of
    the loops around the two) sorted before it is appended (:mod:`compiler.lattice.seqgroupsort`: a
    split's indices with a level below it looped between them, a split into a COO stored column-major)."""
    from ..format import dense
    under = sums_under_operators(program)
    if not under and any(isinstance(n, Reduce) and n is not program.rhs for n in walk(program.rhs)):
        # (a sum under an operator is summed again at each coordinate of the loops around it, which
        # the other order may multiply: left to the conversion, or to looplets)
        return None
    out = out_format if out_format is not None else dense(len(program.lhs.indices))
    names = [str(i) for i in program.lhs.indices]
    mine = tuple(names[m] for m in out.mode_order)
    kind = output_kind(out)
    summed = hoistable(program) or hoistable_into_vector(program, dense_output=kind == "dense",
                                                         bucketed_output=bucketed(out) or sorts_sums(out))
    rows = False
    tries = []
    if under:
        # (each sum into a workspace over its free indices first, its loops in the inputs' order, read by
        # the output's loops after: a dense one where the output is, else one of a vector's extent)
        free = tuple(dict.fromkeys(i for s in under for i in map(str, free_indices(s))))
        summed = tuple(dict.fromkeys(str(i) for s in under for i in s.indices))
        inside = tuple(x for x in mine if x in free) + summed
        # (a workspace over both indices of a sparse matrix output is kept in sparse rows: seqsumrows)
        # (of a sparse output of 3 or more modes, a sum over every index kept sparse, sorted by key: seqsumsort;
        # one over two of them in sparse rows, over 3 or more sorted by key too; one over one index dense)
        rows = bucketed(out) and len(free) == 2 or sorts_sums(out) and set(free) <= set(names)
        if not scatter_only and (kind == "dense" or len(free) == 1 or rows) and len(inside) <= MOST_LOOPS:
            tries += [(mine, order) for order in permutations(inside) if order != inside]
        elif not scatter_only and rows and sorts_sums(out):
            # (sums over several indices into a sparse output of 3 or more modes: its indices kept in its order,
            # the sums' placed among them in every way, not every order of them all)
            outputs = inside[:len(inside) - len(summed)]
            if math.perm(len(inside), len(summed)) > MOST_ORDERS:
                # (more orders than are tried: each sum's loops ordered alone, then joined, first)
                joined = each_sum_ordered(program, under, outputs, inputs)
                tries += [(mine, joined)] if joined is not None else []
            tries += [(mine, order) for order in islice(interleavings(outputs, summed), MOST_ORDERS) if order != inside]
    elif (kind == "dense" and not scatter_only or scatters(out)) and len(mine) <= MOST_LOOPS:
        tries += [(order, None) for order in permutations(mine) if order != mine]
    if summed and not under and not scatter_only and (kind == "dense" or len(names) == 1 or bucketed(out)
                                                      or sorts_sums(out)) \
            and len(mine) + len(summed) <= MOST_LOOPS:
        tries += [(None, order) for order in permutations(mine + summed) if order != mine + summed]
    if sort_groups and not scatter_only and sorts_groups(out):
        tries.append((swapped(mine), None))
    for order, hoisted in tries:
        scratch = Trace()
        try:
            low = seq_lower(program, trace=scratch, loop_order=None if order is None else
                            tuple(names.index(i) for i in order), result_fill=fill, hoisted=hoisted,
                            sparse_rows=rows, **inputs)
        except (StrategyError, SequenceError):
            continue
        if searched(low.cin):
            continue    # (another order is tried to walk, not to search each group of a split)
        if low.workspaces:
            return low, workspace_note(program.lhs.tensor, list(low.workspaces), hoisted, inside, why), \
                {"hoisted": list(hoisted), "workspaces": [w.name for w in low.workspaces],
                                       **({"sparse_rows": True} if rows else {})}
        if hoisted is not None:
            how = "scalar" if not names else "dense" if kind == "dense" else "sorted" if sorts_sums(out) \
                else "workspace" if not bucketed(out) else "rows" if hoisted[0] == mine[0] else "buckets"
            op = program.rhs.op.name if isinstance(program.rhs, Reduce) else "add"
            what = {"add": "sum", "mul": "prod", "or": "any", "and": "all"}.get(op, op)
            return low, order_note(program.lhs.tensor, hoisted, mine + summed, how, why, what), {"hoisted": list(hoisted)}
        data = {"order": [names.index(i) for i in order]}
        if kind == "dense":
            return low, (f"the loops in the output's order ({', '.join(mine)}) walk an input against its storage "
                         f"order ({why}); they run {', '.join(order)} instead, writing the dense output at random"), data
        if not scatters(out):
            return replace(low, assembly="group-sort"), group_sort_note(program.lhs.tensor, out, order, why), data
        return replace(low, assembly="scatter"), scatter_note(program.lhs.tensor, out, order, why), data
    return None


__all__ = ["each_sum_ordered", "interleavings", "lower_shape_lattice", "reordered"]
