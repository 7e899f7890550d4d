"""The plan's conversions: inputs read (or the output built) in another mode order than stored.

When the formats given leave no loop order (``C[i, j] = A[i, j] + B[j, i]``, CSR A and B),
would gather a whole sparse output in a workspace (an outer product), or would merge rows for
every pair of the output's coordinates (an inner product), :func:`setup_converting` tries the
fewest conversions that avoid it, each a :meth:`~compiler.lattice.plan.Setup.create` of the
program over the converted formats, and :func:`record_conversions` records each in the trace
(a ``convert`` step).

>>> from compiler.format import csc, csr
>>> from compiler.notation import parse
>>> _, setup, conv = setup_converting(parse("C[i, k] = A[i, j] * B[j, k]"), {"A": csc(), "B": csr(), "C": csr()},
...                                   None, None)
>>> [(name, new.shorthand) for name, _, new, _, _ in conv]
[('A', 'csr')]
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from ..errors import StrategyError
from ..format import Format
from ..notation.ast import Access, Assign as NAssign, Call as NCall, Reduce as NReduce
from ..stand_in import conversion_cost, format_text, output_conversion_note
from ..trace import Trace
from .cin import Forall, Sequence, Where, expr_accesses, foralls
from .iteration_graph import LoopOrderError, is_all_dense, storage_levels, storage_path
from .output_build import building_output
from .plan import Setup
from .schedule import as_schedule


# Loop orders looked at for conversions (7 indices have 5040), and the sets of conversions tried
# (each try builds a setup: a few milliseconds).
MAX_ORDERS = 5040


MAX_CONVERSION_PLANS = 12


def setup_converting(program: NAssign, formats: dict, order, schedule, assembly: str | None = None):
    """As :func:`_setup_converting`, building an output the lattice emission cannot assemble in
    its stand-in (:mod:`compiler.lattice.output_build`), converted after each call: its entry in
    ``conversions`` holds the format asked and the one built (in the loops' mode order, when
    that differs too).

    >>> from compiler.format import csr, parse_format
    >>> from compiler.notation import parse
    >>> hashed = parse_format("Dense(SparseHash(Element(0.0)))")
    >>> _, setup, conv = setup_converting(parse("C[j, i] = A[i, j]"), {"A": csr(), "C": hashed}, None, None)
    >>> [(name, str(given), new.shorthand) for name, given, new, _, _ in conv]
    [('C', 'Dense(SparseHash(Element(0.0)))', 'csc')]
    """
    out = program.lhs.tensor
    given = formats.get(out)
    one_pass = assembled_in_one_pass(assembly, schedule)
    # (a two-phase kernel fills a SparseList's blocks, a byte map's slots and a hash's entries in
    # phase 2, under any schedule whose loops run in the output's storage order (else the fallback
    # below builds the stand-in in the loops' order), its rows on threads with parallelize, the
    # default assembly there)
    threaded = any(c.name == "parallelize" for c in as_schedule(schedule).commands)
    two_phase = assembly == "two-phase" or (assembly is None and threaded)
    found = None if given is None else building_output(given, out, one_pass, two_phase, threaded)
    if found is None:
        fallback = None if given is None else building_output(given, out, one_pass=False)
        if fallback is None:
            return _setup_converting(program, formats, order, schedule)
        # a format assembled only in one pass and in storage order: where its loops would need an
        # input converted, or run out of its order, the stand-in built in the loops' order is
        # converted alone instead
        try:
            native = _setup_converting(program, formats, order, schedule)
        except StrategyError:
            native = None
        if native is not None and not native[2]:
            return native
        found = fallback
    built, why = found
    wanted = [getattr(i, "name", i) for i in order or ()]
    if all(i.name in wanted for i in program.lhs.indices):   # (the loop order given: built as it writes)
        built = Format(built.root, tuple(sorted(range(built.ndim), key=lambda m: wanted.index(
            program.lhs.indices[m].name))))
    # (converted after the call anyway, the output costs nothing more built in another mode order)
    read, setup, conversions = _setup_converting(program, {**formats, out: built}, order, schedule, free=out)
    ordered = next((c for c in conversions if c[0] == out), None)
    entry = (out, given, built, why, None) if ordered is None else \
        (out, given, ordered[2], f"{why}; {ordered[3]}", None)
    return read, setup, tuple(c for c in conversions if c[0] != out) + (entry,)


def assembled_in_one_pass(assembly: str | None, schedule) -> bool:
    """Whether the kernel assembles its output in one pass, as its loops first run (a block of Dense
    slots per appended coordinate, a byte map's marks, a hash's keys, a band or blocks per fiber:
    :func:`~compiler.lattice.output_build.assembles`): not in two phases, and not on threads
    (``parallelize``: each row counts its entries first, two-phase). A split or a ``pos`` loop
    binds the output's coordinates as the loop it derives from does, and a precomputed
    workspace's consumer stores them as the loops would, so they append as the unscheduled
    kernel does; loops out of the output's storage order make it a stand-in
    (:func:`setup_converting`).

    >>> assembled_in_one_pass(None, [("reorder", "i", "j")]), assembled_in_one_pass(None, [("parallelize", "i")])
    (True, False)
    >>> assembled_in_one_pass(None, [("split", "i", "i0", "i1", 4)]), assembled_in_one_pass("two-phase", None)
    (True, False)
    """
    return assembly != "two-phase" and all(c.name != "parallelize" for c in as_schedule(schedule).commands)


def _setup_converting(program: NAssign, formats: dict, order, schedule, free: str | None = None):
    """``(program, setup, conversions)``: the program's setup, with inputs read in another mode
    order when the formats given leave no loop order (``C[i, j] = A[i, j] + B[j, i]``, CSR A and B),
    would gather a whole sparse output in a workspace over all its entries (CSC ``A`` times CSR
    ``B``: an outer product, n x m values), or would merge rows for every pair of the output's
    coordinates (``A[i, k] * B[j, k]``: an inner product, see :func:`sweeps_pairs`). Converting
    an input costs O(nnz + extent) per call; the workspace, O(n m). ``conversions`` holds
    ``(tensor, its format, the format read, why, source)``: ``source`` is None, or for a
    converted copy (``B_csc`` in ``B[i, j] + B[j, i]``), the tensor copied, and ``program``
    reads the copy where it reads that order.

    >>> from compiler.format import csc, csr
    >>> from compiler.notation import parse
    >>> p = parse("C[i, k] = A[i, j] * B[j, k]")
    >>> _, setup, conv = setup_converting(p, {"A": csc(), "B": csr(), "C": csr()}, None, None)
    >>> [(name, new.shorthand) for name, _, new, _, _ in conv], setup.gathered
    ([('A', 'csr')], None)
    >>> p, _, conv = setup_converting(parse("A[i, j] = B[i, j] + B[j, i]"), {"B": csr()}, None, None)
    >>> str(p), [(name, new.shorthand, source) for name, _, new, _, source in conv]
    ('A[i, j] = B[i, j] + B_csc[j, i]', [('B_csc', 'csc', 'B')])
    """
    # (an order or a schedule the user gave is taken as it is: converting is then only to make
    # the formats agree, not to avoid a workspace or an inner product)
    asked = order is not None or bool(as_schedule(schedule).commands)
    try:
        setup = Setup.create(program, formats, order=order, schedule=schedule)
    except LoopOrderError as e:
        refused, setup, why = e, None, e.conflicts
    else:
        pairs = None if setup.gathered is not None or asked else sweeps_pairs(setup, formats)
        if setup.gathered is None and pairs is None:
            return program, setup, ()
        refused = None
        why = pairs or (f"{program.lhs.tensor} would be gathered in a workspace {setup.gathered} over all its "
                        f"entries (an outer product: the reduction's loop runs outside {program.lhs.tensor}'s loops)")
    accesses = expr_accesses(program.rhs)
    blocked = None   # (the fewest conversions that remove the disagreement, what then refuses them)
    for plan, copies in _conversion_plans(program, formats, order, free):
        rewritten = _with_copies(program, copies)
        try:
            converted = Setup.create(rewritten, {**formats, **plan}, order=order, schedule=schedule)
        except LoopOrderError:
            continue
        except StrategyError as e:
            blocked = blocked or (plan, copies, e)
            continue
        if asked or (converted.gathered is None and sweeps_pairs(converted, {**formats, **plan}) is None):
            sources = {copy: accesses[k].tensor for k, copy in copies.items()}
            return rewritten, converted, tuple((t, formats.get(sources.get(t, t)), f, why, sources.get(t))
                                               for t, f in plan.items())
    if refused is not None and blocked is not None:
        plan, copies, e = blocked
        what = " and ".join(f"{t} as {format_text(f)}" if t in formats else
                            f"{', '.join(str(accesses[k]) for k, c in copies.items() if c == t)} from a copy "
                            f"in {format_text(f)}" for t, f in plan.items())
        raise LoopOrderError(f"{refused} (reading {what} would remove the disagreement, but then: {e})",
                             refused.conflicts) from None
    if refused is not None:
        raise LoopOrderError(f"{refused} (reading some of the tensors in another mode order, or building the "
                             f"output in another, does not remove the disagreement)", refused.conflicts) from None
    return program, setup, ()


def sweeps_pairs(setup: Setup, formats: dict) -> str | None:
    """Why the loops would visit every pair of the output's coordinates, each reducing over
    operands' entries (an inner product: ``C[i, j] = A[i, k] * B[j, k]``, CSR A and B, loops
    i, j, k: n * m merges of a row of A with a row of B, however few entries C gets; with B read
    as CSC the loops run i, k, j, in O(n * m) for a dense C, O(products) for a sparse one); None
    when they do not.

    The output's index ``j`` (inside another loop) is swept when no operand stores it in a
    sparse level (each reads its ``j`` densely) and a loop over a reduction index runs inside it.

    >>> from compiler.format import csr
    >>> from compiler.notation import parse
    >>> f = {"A": csr(), "B": csr(), "C": csr()}
    >>> sweeps_pairs(Setup.create(parse("C[i, j] = A[i, k] * B[j, k]"), f), f)
    'the loop over j visits every j (no operand stores j sparsely: B[j, k] reads it densely) and, in each, reduces over k: C would be computed pair by pair over all (i, j), an inner product'
    >>> sweeps_pairs(Setup.create(parse("C[i, j] = A[i, k] * B[k, j]"), f), f) is None
    True
    """
    program = setup.program
    out_indices = {i.name for i in program.lhs.indices}
    accesses = expr_accesses(program.rhs)

    for st, outer in _loops(setup.statement, []):
        name = st.index.name
        if outer and name in out_indices:
            reads = _swept(accesses, name, formats)
            inner = [i.name for i in foralls(st.body) if i.name not in out_indices]
            if reads is not None and inner:
                return (f"the loop over {name} visits every {name} (no operand stores {name} sparsely: "
                        f"{', '.join(str(a) for a in reads)} {'reads' if len(reads) == 1 else 'read'} it densely) "
                        f"and, in each, reduces over {', '.join(dict.fromkeys(inner))}: {program.lhs.tensor} would "
                        f"be computed pair by pair over all ({', '.join(outer + [name])}), an inner product")
    return None


def _loops(st, outer: list):
    """Each forall of statement ``st`` with the names of the loops around it (``outer`` and those in ``st``),
    outermost first, a where's consumer before its producer."""
    if isinstance(st, Forall):
        yield st, outer
        yield from _loops(st.body, outer + [st.index.name])
    elif isinstance(st, Where):
        yield from _loops(st.consumer, outer)
        yield from _loops(st.producer, outer)
    elif isinstance(st, Sequence):
        yield from _loops(st.define, outer)
        yield from _loops(st.mutate, outer)


def merges_again(setup: Setup, formats: dict) -> str | None:
    """Why the loops would merge an operand's entries again at every coordinate of an output index the operand
    does not have (with the operands of ``formats``); None when they do not. ``out[i, j, k] = sum[l](A[j, k, l]
    * B[l, i])``, CSF ``A``, ``B`` read as CSC (or as a COO stored ``i, l``): the loops run i, j, k, l, and at
    every i merge each fiber of ``A`` with ``B``'s column i, walking all of ``A`` once per i however few entries
    the column has (an inner product, as :func:`sweeps_pairs` finds inside an outer loop; here the loop may be
    the outermost, and iterate its index sparsely). A loop locating the other factor instead (a dense ``B``)
    does the work it must, and is not counted, nor an operand merged at its first loop (a COO ``B[l, k]``'s
    ``l`` list swept at each ``(i, j)``, as a dense one would be looked up).

    >>> from compiler.format import csc, csf, csr
    >>> from compiler.notation import parse
    >>> p = parse("out[i, j, k] = sum[l](A[j, k, l] * B[l, i])")
    >>> f = {"A": csf(3), "B": csc(), "out": csf(3)}
    >>> merges_again(Setup.create(p, f), f)
    'at every i the loops walk A[j, k, l] again, merging A[j, k, l] with B[l, i] over l'
    >>> f = {"A": csr(), "x": csr(), "y": csr()}
    >>> merges_again(Setup.create(parse("y[i, k] = sum[j](A[i, j] * x[j, k])"), f), f) is None
    True
    """
    program = setup.program
    out_indices = {i.name for i in program.lhs.indices}
    accesses = expr_accesses(program.rhs)

    def merged_inside(name, body):
        inside = [i.name for i in foralls(body)]
        for inner in dict.fromkeys(i for i in inside if i not in out_indices):
            merged = [a for a in accesses if formats.get(a.tensor) is not None
                      and any(i.name == inner for i in a.indices) and not _stored_densely(a, inner, formats)]
            # (an operand without ``name`` whose loops above the merge run inside ``name``'s: walked whole again;
            # one merged at its own first loop is a list swept per coordinate, as a located one is looked up)
            between = set(inside[:inside.index(inner)])
            again = [a for a in merged if all(i.name != name for i in a.indices) and any(i.name in between
                                                                                           for i in a.indices)]
            if len(merged) > 1 and again:
                return (f"at every {name} the loops walk {', '.join(str(a) for a in again)} again, merging "
                        f"{' with '.join(str(a) for a in merged)} over {inner}")
        return None

    return next((found for st, _ in _loops(setup.statement, []) if st.index.name in out_indices
                 for found in [merged_inside(st.index.name, st.body)] if found), None)


def _stored_densely(acc: Access, name: str, formats: dict) -> bool:
    """Whether every level of ``acc``'s tensor (of ``formats``) at index ``name`` is located by coordinate."""
    fmt = formats[acc.tensor]
    return all(lvl.located_by_coordinate for i, lvl in zip(storage_path(acc, fmt)[0], storage_levels(fmt))
               if i.name == name)


def _swept(accesses: list, name: str, formats: dict) -> list | None:
    """The accesses reading index ``name`` when every one stores it densely (its loop visits every coordinate),
    else None."""
    reads = [a for a in accesses if any(i.name == name for i in a.indices) and formats.get(a.tensor) is not None]
    if not reads or not all(_stored_densely(a, name, formats) for a in reads):
        return None
    return reads


def output_only_setup(program: NAssign, formats: dict, schedule):
    """``(setup, format)``: the setup of ``program`` (over ``formats``) with its output alone built in another
    mode order (``format``), no input converted, whose loops neither gather the whole output in a workspace nor
    sweep pairs; None when no loop order allows it.

    >>> from compiler.format import csf, csr
    >>> from compiler.notation import parse
    >>> p = parse("out[i, j, k] = sum[l](A[j, k, l] * B[l, i])")
    >>> setup, fmt = output_only_setup(p, {"A": csf(3), "B": csr(), "out": csf(3)}, None)
    >>> fmt.mode_order
    (1, 2, 0)
    """
    out = program.lhs.tensor
    for plan, copies in _conversion_plans(program, formats, None, free=out):
        if copies or set(plan) != {out}:
            continue
        try:
            setup = Setup.create(program, {**formats, **plan}, schedule=schedule)
        except StrategyError:
            continue
        if setup.gathered is None and sweeps_pairs(setup, {**formats, **plan}) is None:
            return setup, plan[out]
    return None


def _conversion_plans(program: NAssign, formats: dict, order, free: str | None = None):
    """Conversions to try, fewest first, as ``(formats, copies)``: ``formats`` maps each tensor to
    convert to the format to read it in, ``copies`` maps an access's position (among the
    program's accesses, left to right, the output last) to a copy of its tensor. For each loop
    order (``order`` alone when given), a sparse tensor it would visit against its storage order
    is read in the mode order it visits. A tensor accessed in two orders (``B[i, j] + B[j, i]``)
    keeps its name where the loop order reads it in storage order (or where it is met first),
    and is read as a converted copy, ``B_csc``, where the other order is. Among plans of one
    size, those converting tensors met earlier come first; ``free`` (an output converted after
    the call anyway) is not counted.

    >>> from compiler.format import csr
    >>> from compiler.notation import parse
    >>> p = parse("A[i, j] = B[i, j] + C[j, i] + D[j, i]")
    >>> [{t: f.shorthand for t, f in plan.items()} for plan, _ in
    ...  _conversion_plans(p, {"B": csr(), "C": csr(), "D": csr(), "A": csr()}, None)]
    [{'B': 'csc', 'A': 'csc'}, {'C': 'csc', 'D': 'csc'}]
    >>> [(plan["B_csc"].shorthand, copies) for plan, copies in
    ...  _conversion_plans(parse("A[i, j] = B[i, j] + B[j, i]"), {"B": csr()}, None)]
    [('csc', {1: 'B_csc'}), ('csc', {0: 'B_csc'})]
    """
    accesses = [*expr_accesses(program.rhs), program.lhs]
    rank = {}
    for acc in accesses:
        rank.setdefault(acc.tensor, len(rank))
    names = list(dict.fromkeys(i.name for acc in accesses for i in acc.indices))
    orders = [list(order)] if order else itertools.islice(itertools.permutations(names), MAX_ORDERS)
    plans = {}
    for loop in orders:
        found = _plan_for_order(loop, accesses, formats)
        if found is not None and found[0]:
            plan, copies = found
            plans.setdefault((tuple(sorted((t, f.mode_order) for t, f in plan.items())),
                              tuple(sorted(copies.items()))), found)
    sources = {copy: accesses[k].tensor for _, copies in plans.values() for k, copy in copies.items()}
    ranked = sorted(plans.values(), key=lambda pc: (len([t for t in pc[0] if t != free]),
                                                    sorted(rank[sources.get(t, t)] for t in pc[0])))
    return ranked[:MAX_CONVERSION_PLANS]


def _plan_for_order(loop, accesses: list, formats: dict):
    """``(formats, copies)`` (see :func:`_conversion_plans`) that let the loop order ``loop``
    read every sparse access in storage order, or None when none does: a diagonal access, or an
    output that would be read in another order than it is written."""
    at = {name: k for k, name in enumerate(loop)}
    wanted = {}   # tensor: [(access position, the mode order the loops visit it in)]
    for k, acc in enumerate(accesses):
        fmt = formats.get(acc.tensor)
        if fmt is None or fmt.ndim < 2 or is_all_dense(fmt):
            continue
        modes = [i.name for i in acc.indices]
        if len(set(modes)) != len(modes) or any(m not in at for m in modes):
            return None
        wanted.setdefault(acc.tensor, []).append((k, tuple(sorted(range(fmt.ndim), key=lambda m: at[modes[m]]))))
    plan, copies = {}, {}
    output = len(accesses) - 1
    for t, uses in wanted.items():
        own = formats[t].mode_order
        # the tensor keeps its name in its own order when some access reads it so, else in the first one's
        kept = own if any(w == own for _, w in uses) else uses[0][1]
        if kept != own:
            plan[t] = Format(formats[t].root, kept)
        named = {}
        for k, w in uses:
            if w == kept:
                continue
            if k == output:
                return None   # (the output is written under its own name)
            if w not in named:
                named[w] = _copy_name(t, Format(formats[t].root, w), {*formats, *plan})
                plan[named[w]] = Format(formats[t].root, w)
            copies[k] = named[w]
    return plan, copies


def _copy_name(tensor: str, fmt: Format, taken) -> str:
    """A fresh name for ``tensor`` read in ``fmt``: ``B_csc``, ``T_201`` (mode order 2, 0, 1)."""
    base = f"{tensor}_{fmt.shorthand or ''.join(str(m) for m in fmt.mode_order)}"
    name, k = base, 2
    while name in taken:
        name, k = f"{base}{k}", k + 1
    return name


def _with_copies(program: NAssign, copies: dict) -> NAssign:
    """``program`` with the accesses at the positions in ``copies`` reading the copies' names."""
    if not copies:
        return program
    count = itertools.count()

    def visit(e):
        if isinstance(e, Access):
            k = next(count)
            return replace(e, tensor=copies[k]) if k in copies else e
        if isinstance(e, NCall):
            return replace(e, args=tuple(visit(a) for a in e.args))
        if isinstance(e, NReduce):
            return replace(e, body=visit(e.body))
        return e

    return replace(program, rhs=visit(program.rhs))


def record_conversions(trace: Trace, program: NAssign, read: NAssign, conversions) -> None:
    """A ``convert`` step in ``trace`` per conversion :func:`setup_converting` chose for ``program``
    (``read``: the program as the kernel reads it, with the converted copies' names)."""
    for tensor, given, fmt, why, source in conversions:
        if source is not None:
            where = ", ".join(str(replace(a, tensor=source)) for a in expr_accesses(read.rhs) if a.tensor == tensor)
            how = f"reads {where} from {tensor}, a copy of {source} in {format_text(fmt)}, converted before each call"
            tensor = source
        elif tensor == program.lhs.tensor:
            trace.record("convert", before=program, after=read, note=output_conversion_note(tensor, given, fmt, why))
            continue
        else:
            how = f"reads {tensor} as {format_text(fmt)}, converted before each call"
        trace.record("convert", before=program, after=read,
                     note=f"{tensor} is {format_text(given)}: {why}; the kernel {how} ({tensor}.asformat, "
                          f"{conversion_cost(given, fmt)})")


__all__ = ["MAX_CONVERSION_PLANS", "MAX_ORDERS", "conversion_cost", "format_text", "merges_again", "output_only_setup",
           "record_conversions", "setup_converting", "sweeps_pairs"]
