"""The ``lattice`` strategy's driver: plan, CFIR, emission, then the imperative IR's passes.

:func:`lower_lattice` runs the stages in the order of DESIGN.md's pipeline and records each in
the trace: the plan and its conversions (:mod:`compiler.lattice.plan`,
:mod:`compiler.lattice.conversions`), the iteration graph, the lattices and the CFIR
(:mod:`compiler.lattice.cfir_builder`), the emission to the imperative IR
(:class:`compiler.lattice.emitter.Emitter` and its mixins), then privatize, cleanup, prefetch,
vectorize and reuse-locals.

Provenance: each lattice loop is wrapped in ``Tagged("lattice:<index>:<iterated>")`` and
each case in ``Tagged("lattice:<index>:<present operands>")`` (names joined by ``∩``,
``U`` for the dense range), so the explorer can colour the C lines of a lattice point.

Each :class:`~compiler.lattice.cfir.CForall` becomes: iterator initialization
(once for all its loops), one ``while`` per lattice loop (or a ``for`` when one
unique iterator or the dense range is all there is), coordinate loads, the
minimum as the resolved coordinate, segment ends for non-unique COO levels,
locates into Dense levels, an ``if / else if`` chain of cases most specific
first, and conditional increments (``pB += (int64_t)(iB == i)``). When several
regions of a loop do work (a union), the loop instead branches once on exactly
which iterators are at ``i``; each branch runs its cases and advances exactly
those iterators (the shape of scipy's merge, which predicts better). In an
intersection of two, a top-level fiber met again in every enclosing iteration (a
DCSR ``B``'s rows in ``A[i, k] * B[k, j]``) gallops to the other's coordinate
instead of stepping (:func:`compiler.imperative.search.gallop_stmts`).

Outputs: a dense output is stored by position (the runtime pre-fills it with
the output's fill); a sparse output (SparseList levels under Dense or SparseList
levels, or one SparseCOO level) is appended in storage order into growing
buffers, and a value equal to the fill is not stored. Any other output format is
built with SparseList levels in place of the others and converted after the call
(:mod:`compiler.lattice.output_build`). An output the loops cannot visit in its storage order is
scattered (Dense levels over one SparseList: :mod:`compiler.lattice.scatter_output`), has every
entry sorted in the kernel (a CSF or COO of three or more modes: :mod:`compiler.lattice.sorted_output`),
or is built in the loops' order and converted after the call. A sum whose plan reads an input converted is,
where the tensors' shapes are given (the array front end gives them), lowered by the sequence lowering with
its terms bucketed by the output's rows instead (:mod:`compiler.lattice.bucketed_sums`).

>>> from compiler.notation import parse
>>> from compiler.format import csr, dense
>>> from compiler.trace import Trace
>>> low = lower_lattice(parse("y[i] = A[i, j] * x[j]"), {"A": csr(), "x": dense(1)}, Trace())
>>> print(low.function)
kernel lattice_y(int64 A0_size, in int64 A1_pos[], in int64 A1_idx[], in float64 A_val[], in float64 x_val[], inout float64 y_val[]) {
    for (int64 i = 0; i < A0_size; i++) {
        float64 t_j = 0.0;
        // fetch the entries 64 past this row's end: the CPU's own prefetcher falls behind short rows
        prefetch A1_idx[A1_pos[i + 1] + 64];
        prefetch A_val[A1_pos[i + 1] + 64];
        for (int64 pA1 = A1_pos[i]; pA1 < A1_pos[i + 1]; pA1++) {
            int64 j = A1_idx[pA1];
            t_j += A_val[pA1] * x_val[j];
        }
        y_val[i] = t_j;
    }
}
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import replace

import numpy as np

from .. import binding
from ..errors import StrategyError
from ..imperative.ir import Allocate, Block, Buffer, Function, OutScalar, Scalar, View
from ..imperative.ir import c_name_problem
from ..imperative.traverse import names_read, walk as ir_walk
from ..imperative.cleanup import cleanup, first_grows, reuse_dead_locals
from ..imperative.copies import drop_copies
from ..imperative.declarations import DECLARED_WHERE_SET, declare_where_set
from ..imperative.ir_dot import ir_artifact
from ..imperative.prefetch import prefetch
from ..imperative.privatize import privatize
from ..imperative.vectorize import vectorize
from ..notation.ast import Assign as NAssign
from ..notation.ast import IndexValue
from ..notation.ast import walk as notation_walk
from ..trace import Artifact, Later, Trace, with_parts
from .cfir import cfir_walk, CAlloc, CAssign, CDenseWorkspace, CForall, CSeq, CSkip, CWorkspace
from .cfir_builder import build_cfir
from .cfir_dot import cfir_line_spans, cfir_line_tags, cfir_tree, lattice_line_spans, lattice_line_tags, lattice_node_tags
from .plan import Setup
from .exprs import python_helper
from .iteration_graph import is_all_dense
from .early_exit import add_early_exits, exits
from .emitter import Emitter
from .emit_parallel import check_shared_scalars
from .cin import loop_chain
from .schedule import as_schedule
from ..notation.shape import has_shape_operators
from .conversions import record_conversions, setup_converting
from .scatter_output import scatter_note, scatter_setup
from .sorted_output import entry_sort_setup, sort_over_converting
from .seqlower import lower_shape_lattice
from .bucketed_sums import buckets_over_converting


def compressible_indices(cfir) -> tuple[str, ...]:
    """The indices a workspace spans whose every loop visits only coordinates some operand
    stores: no loop over the universe, and no fill folded in for the coordinates skipped.

    A coordinate no operand stores is then never visited, so the kernel computes the same
    entries when the index is renumbered by the coordinates stored (see
    :attr:`compiler.lowering.Lowered.compressible`): Gustavson's SpGEMM over a hypersparse
    ``B`` with 10^12 columns then needs a workspace of ``B``'s distinct columns, not 10^12.
    """
    nodes = list(cfir_walk(cfir))
    spanned = {i.name for n in nodes if isinstance(n, (CWorkspace, CDenseWorkspace)) for i in n.indices}
    foralls = [n for n in nodes if isinstance(n, CForall)]
    folded = {f.fold.per.name for f in foralls if f.fold is not None and f.fold.per is not None}
    out = []
    for name in sorted(spanned - folded):
        loops = [f for f in foralls if f.index.name == name]
        if loops and all(f.fold is None and f.tally is None and not any(lp.universe for lp in f.loops)
                         for f in loops):
            out.append(name)
    return tuple(out)


def _fibers(formats: dict) -> dict:
    """What the fibers under each position array of ``formats`` are, for the prefetch comment: a
    2-D tensor's second level holds rows when it stores by rows, columns when by columns; deeper
    levels hold fibers.

    >>> from compiler.format import csc, csf
    >>> _fibers({"A": csc(), "T": csf(3)})
    {'A1_pos': 'column', 'T1_pos': 'fiber', 'T2_pos': 'fiber'}
    """
    out = {}
    for tensor, fmt in formats.items():
        order = fmt.mode_order
        for level, lvl in enumerate(fmt.levels[1:], 1):
            word = ("row" if order[level] == 1 else "column") if len(order) == 2 else "fiber"
            out[binding.array_name(tensor, level, lvl.starts_array)] = word
    return out


def _without_unread_inputs(fn: Function) -> Function:
    """``fn`` without the input scalars and buffers its body no longer reads.

    The passes after lowering drop reads (a sum over all of ``A`` never needs ``A1_idx`` once the
    unused coordinate is gone), and C warns of a parameter nothing reads. The caller passes a
    kernel only the arguments its signature names.
    """
    # (remembered per statement: asked after each pass, of a body most of which the pass kept)
    names = set().union(*map(names_read, fn.body.body))
    kept = tuple(p for p in fn.params
                 if not isinstance(p, (Scalar, Buffer)) or (isinstance(p, Buffer) and p.intent == "inout")
                 or p.name in names)
    return fn if kept == fn.params else replace(fn, params=kept)


@contextlib.contextmanager
def _renamings_explained(program: NAssign):
    """A refusal that names an index renamed apart (``j_2``) says which index of the program it is."""
    try:
        yield
    except StrategyError as e:
        from .cin import index_names, unshadow
        new = sorted(index_names(unshadow(program)) - index_names(program))
        shown = [n for n in new if re.search(rf"\b{n}\b", str(e))]
        if not shown:
            raise
        what = "; ".join(f"{n} is the index {n.rsplit('_', 1)[0]} of an inner reduction, renamed apart from the "
                         f"{n.rsplit('_', 1)[0]} around it" for n in shown)
        raise StrategyError(f"{e} ({what})") from None


@contextlib.contextmanager
def _schedule_named(schedule):
    """A refusal after a schedule was applied that names none of its commands says it came with them:
    ``precompute(j, w, A[i, j])`` may apply and leave a loop order the output cannot be assembled in."""
    try:
        yield
    except StrategyError as e:
        try:
            commands = as_schedule(schedule).commands
        except StrategyError:
            raise e from None
        if not commands or any(f"{c.name}(" in str(e) for c in commands):
            raise
        raise StrategyError(f"{e} (with the schedule {', '.join(str(c) for c in commands)})") from None


def lower_lattice(program: NAssign, formats: dict, trace: Trace, order=None, verify: bool = True,
                  name: str | None = None, schedule=None, assembly: str | None = None, shapes=None, **options):
    """The ``lattice`` strategy: index notation to a :class:`~compiler.lower.Lowered` kernel.

    ``order`` fixes the loop order of the outer forall chain (``reorder``);
    ``verify`` checks every lattice against brute-force enumeration; ``assembly``
    is ``"one-pass"`` (a sparse output appended into growing buffers) or
    ``"two-phase"`` (the loops run twice: assemble the structure, allocate, compute
    the values, dropping entries equal to the fill: as it stores them for a CSR-like output,
    after it for outputs with several sparse levels, in a compaction pass). By default it is
    one-pass, except for a sparse output filled by a parallel loop: its rows cannot
    share one counter, so each counts its entries first (two-phase, on threads).
    """
    if not isinstance(program, NAssign):
        # (a loop program, or a Python function of one: its loops are its own, which lattices do not take)
        what = getattr(program, "name", None) or getattr(program, "__name__", type(program).__name__)
        raise StrategyError(f"{what} is a loop program: the lattice strategy lowers index notation "
                            f"(\"y[i] = A[i, j] * x[j]\"); lower a loop program with strategy='looplets'")
    if has_shape_operators(program):
        # BURRITO's sequence expressions, lattices and CFIR (shapes: the tensors', given by lower())
        convert = options.pop("convert", True)
        extra = sorted(k for k, v in (("order", order), ("schedule", schedule), ("assembly", assembly)) if v is not None)
        if options or extra:
            raise StrategyError(f"{program}: the lattice strategy lowers shape operators without "
                                f"{', '.join(sorted(options) + extra)}; drop it or lower it with strategy='looplets'")
        return lower_shape_lattice(program, formats, trace, shapes, name, convert=convert)
    if not isinstance(verify, bool):
        raise StrategyError(f"verify={verify!r}: give True (check every lattice by enumeration) or False")
    if options:
        raise StrategyError(f"the lattice strategy has no option(s) {', '.join(sorted(options))}; "
                            f"it takes order=[...], schedule=, assembly=, verify= and name=")
    if order is not None and (not isinstance(order, (list, tuple))
                              or not all(isinstance(getattr(i, "name", i), str) for i in order)):
        raise StrategyError(f"order={order!r}: give the loop order as a list of index names, e.g. "
                            f"order=['i', 'j']")
    if assembly not in (None, "one-pass", "two-phase"):
        raise StrategyError(f"assembly={assembly!r}: the lattice strategy assembles 'one-pass' or 'two-phase'")
    problem = name is not None and c_name_problem(name)
    if problem:
        raise StrategyError(f"name={name!r}: the kernel's name must be a C identifier: {problem}")
    from ..runtime import Lowered
    with _schedule_named(schedule), _renamings_explained(program):
        read, setup, conversions = setup_converting(program, formats, order, schedule, assembly)
    if order is None and schedule is None and assembly is None:
        # (a sum whose plan reads an input converted: its terms bucketed in one kernel, for the shapes given)
        bucketed = buckets_over_converting(read, formats, conversions, shapes, trace, name)
        if bucketed is not None:
            return bucketed
    # (an output converted only for its mode order is built in its own by a scatter, where it can be)
    scattered = scatter_setup(read, formats, order, schedule, assembly, conversions)
    if scattered is not None:
        setup, conversions = scattered, ()
    # (an output of three or more modes converted only for its mode order: its entries sorted in the kernel)
    sorting = entry_sort_setup(read, formats, setup, conversions, schedule, assembly) if scattered is None else None
    if sorting is None and scattered is None:   # (or one input converted where sorting the output costs less)
        sorting = sort_over_converting(read, formats, setup, conversions, order, schedule, assembly)
    if sorting is not None:
        setup, conversions = sorting[0], ()
    threaded = setup.parallel is not None and not is_all_dense(setup.output_format)
    if assembly is None:
        assembly = "two-phase" if threaded else "one-pass"
    elif assembly == "one-pass" and threaded:
        raise StrategyError(f"assembly='one-pass' does not apply with parallelize({setup.parallel}): it appends "
                            f"{setup.output.tensor}'s entries through one counter the threads would share; "
                            f"use assembly='two-phase' (the default with parallelize), where each row counts "
                            f"its entries first")
    renamed = f"; a reduction over an index bound around it is renamed apart: {setup.program.rhs}" \
        if setup.program != read else ""
    trace.record("concretize", before=program, after=setup.concrete,
                 note="top-level reductions become compound assignments, nested ones where + temporaries" + renamed)
    record_conversions(trace, program, read, conversions)
    if setup.scattered is not None:
        trace.record("output-order", before=program, after=read, note=scatter_note(setup))
    if sorting is not None:
        trace.record("output-order", before=program, after=read, note=sorting[1])
    program = read
    setup.record_steps(trace)
    g = setup.graph
    order_now = _order_text(setup.statement)
    trace.record("iteration-graph", before=setup.concrete, after=setup.statement,
                 artifacts=[Artifact("iteration-graph", program.lhs.tensor, g.text(), g.dot())],
                 note=f"loop order {order_now}" + ("; reduction accumulated in a scalar temporary"
                                                   if setup.promoted else ""))
    with _schedule_named(schedule), _renamings_explained(program):
        cfir = build_cfir(setup.statement, setup, verify_lattices=verify)
    seen = set()
    for L in setup.lattices:
        text = L.text()
        if text in seen:
            continue
        seen.add(text)
        trace.record("lattice", before=setup.statement, after=L,
                     artifacts=[Artifact("lattice", f"forall {L.index}", text, L.dot(),
                                         data={"node_tags": lattice_node_tags(L, setup.names),
                                               "line_tags": lattice_line_tags(L, setup.names),
                                               "line_spans": lattice_line_spans(L, setup.names)})],
                     rewrites=L.rewrites, note=f"forall {L.index}: {len(L.points)} points, {len(L.loops)} loops",
                     # (where its heading and accesses are printed, made when read)
                     data=Later(lambda L=L: with_parts({"index": str(L.index)}, {"after": L})))
    tree = cfir_tree(cfir, setup.names)
    trace.record("cfir", before=setup.statement, after=cfir,
                 artifacts=[Artifact("cfir", program.lhs.tensor, str(cfir), tree.source(),
                                     data={"node_tags": tree.node_tags,
                                           "line_tags": cfir_line_tags(cfir, setup.names),
                                           "line_spans": cfir_line_spans(cfir, setup.names)})])
    em = Emitter(setup)
    fn = em.function(cfir, name or f"lattice_{program.lhs.tensor}", assembly)
    fn = em.ordered_loops(fn)
    if setup.parallel is not None and setup.parallel in loop_chain(setup.statement)[0][1:]:
        check_shared_scalars(list(fn.body.body), setup.parallel)   # (an inner parallel loop: what it shares)
    notes = (["two-phase assembly: assemble the structure, then compute the values"]
             if assembly == "two-phase" and not threaded else []) + list(dict.fromkeys(em.notes))
    trace.record("lower", before=cfir, after=fn, artifacts=[ir_artifact(fn)], note="; ".join(notes))
    fn = _stop_early(fn, setup, trace)
    if setup.parallel is not None:
        private = replace(fn, body=Block(tuple(privatize(fn.body.body, {p.name for p in fn.params}))))
        if private != fn:
            parts = {n.buffer for n in ir_walk(private.body) if isinstance(n, View)}
            parts = [n.buffer for n in ir_walk(fn.body) if isinstance(n, Allocate) and n.buffer in parts]
            trace.record("privatize", before=fn, after=private, artifacts=[ir_artifact(private)],
                         note=f"each thread of the parallel loop gets its own {', '.join(parts)}")
            fn = private
    narrow = {p.name for p in fn.params if isinstance(p, Buffer) and np.dtype(p.dtype).itemsize < 8}
    counters = {p.name: p.init for p in fn.params if isinstance(p, OutScalar) and p.dtype == "int64"}
    for stage, apply, note in (
            ("cleanup", lambda body: first_grows(cleanup(body), counters),
             "tests of known flags, locals nothing reads, assignments and stores replaced before a read, and "
             "scratch arrays nothing reads dropped; an empty output's first growth tests no capacity"),
            ("copies", drop_copies, "locals that only copy another (neither changing while the copy lives) "
             "replaced by it: a lattice point's coordinate j = jA, a fiber's end"),
            ("prefetch", lambda body: prefetch(body, narrow, _fibers(setup.formats)),
             "each row (or column, or fiber) fetches the entries of the ones after it ahead, and each entry the "
             "row that a coordinate a few entries ahead picks"),
            ("vectorize", vectorize, "map loops and contiguous sum loops run in SIMD lanes"),
            ("reuse-locals", reuse_dead_locals,
             "a loop's local that would hide a local of the same name, dead by then, assigns that one"),
            ("declarations", declare_where_set, DECLARED_WHERE_SET)):
        after = _without_unread_inputs(replace(fn, body=Block(tuple(apply(fn.body.body)))))
        if after != fn:
            trace.record(stage, before=fn, after=after, artifacts=[ir_artifact(after)], note=note)
            fn = after
    out_shape = tuple(setup.extent_uses[i][0] for i in program.lhs.indices)
    extents = tuple((i.name, tuple(uses)) for i, uses in setup.extent_uses.items() if len(uses) > 1)
    helpers = tuple((h, python_helper(op, h)) for h, (_, op) in em.helpers.items())
    fill = setup.out_fill_value
    # (an index read as a value must keep its coordinates: renumbering it would change the value)
    valued = {n.index.name for n in notation_walk(program.rhs) if isinstance(n, IndexValue)}
    initial = "output" if program.op is not None else "none" if writes_everything(cfir, setup) else "fill"
    return Lowered(fn, program.lhs.tensor, setup.entry_sorted or setup.scattered or setup.output_format, out_shape, fill,
                   extents, initial, helpers,
                   tuple((tensor, fmt) for tensor, _, fmt, _, _ in conversions),
                   tuple((tensor, source) for tensor, _, _, _, source in conversions if source is not None),
                   tuple(i for i in compressible_indices(cfir) if i not in valued))


def _stop_early(fn, setup: Setup, trace: Trace):
    """``fn`` with each scalar reduction that may stop at its annihilator breaking out of its loops
    (:mod:`compiler.lattice.early_exit`); an ``early-exit`` step says which, and which may not."""
    stops, not_stopped = exits(setup)
    notes = [f"{t} does not stop early: {why}" for t, why in not_stopped.items()]
    body, done = add_early_exits(fn.body.body, {t: test for t, (test, _) in stops.items()}, setup.temps)
    notes = [f"{t} stops its loops early: {stops[t][1]}" for t in done] + notes
    if not notes:
        return fn
    after = replace(fn, body=Block(tuple(body))) if done else fn
    trace.record("early-exit", before=fn, after=after, artifacts=[ir_artifact(after)],
                 note="; ".join(notes))
    return after


def writes_everything(cfir, setup: Setup) -> bool:
    """Whether the kernel stores every element of its dense output (so it needs no pre-fill).

    True when the output's loops are full dense loops, outermost in storage order, whose
    single unconditional case ends in a plain ``=`` to the output (SpMV, TTV on CSF). In a
    sequence, the first statement that writes the output must (``y = z; y += A x``: the
    definition stores every element before the mutation reads any).
    """
    if not setup.output_format.is_dense or setup.scattered is not None or setup.program.op is not None:
        return False
    path = [setup.output.indices[m] for m in setup.output_format.mode_order]
    n, k = cfir, 0
    while True:
        if isinstance(n, CAlloc):
            n = n.body
        elif isinstance(n, CSeq):
            writing = [x for x in n.stmts if any(isinstance(c, CAssign) and c.output or isinstance(c, CForall)
                                                 and c.fold is not None and c.fold.output for c in cfir_walk(x))]
            n = writing[0] if writing else CSkip()   # (a where's producer writes temporaries only)
        elif isinstance(n, CForall):
            if k >= len(path) or n.index != path[k] or len(n.loops) != 1:
                return False
            loop = n.loops[0]
            if not loop.universe or loop.iterated or len(loop.cases) != 1:
                return False
            case = loop.cases[0]
            if case.tests or case.value_tests or case.omit:
                return False
            n, k = case.body, k + 1
        elif isinstance(n, CAssign):
            return n.output and n.op is None and k == len(path)
        else:
            return False


def _order_text(s) -> str:
    from .cin import foralls
    return ", ".join(i.name for i in foralls(s))


__all__ = ["lower_lattice"]
