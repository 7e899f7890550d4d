"""The lattice strategy's schedule: TACO's scheduling language over concrete index notation
(taco.md §2.10), Halide-style.

The algorithm (index notation) says what to compute; a :class:`~compiler.schedule.Schedule` (the
user's, shared by both strategies: :mod:`compiler.schedule`; importable from here too) says how:
a list of commands applied in order to the concrete statement. Each command records
a trace step ``schedule:<name>`` with the statement before and after; a command that
does not apply raises :class:`~compiler.errors.StrategyError` saying why.

=======================  ========================================================================
command                  effect
=======================  ========================================================================
``reorder(i, k, j)``     put the top chain of loops in this order (storage order is checked);
                         after split, pos or fuse, name the loops they made; a loop named between
                         a split's two loops runs inside each block (a tiling)
``precompute(j, w)``     gather the right-hand side in a workspace ``w[j]`` (a ``where``);
                         ``expr=`` names a sub-expression to compute first instead;
                         ``format=`` is ``sparse`` (over one index, the default: a dense array,
                         a bitmap and the list of coordinates set) or ``dense`` (a plain
                         array, visited and reset whole); several indices, ``("j", "k")``,
                         give a dense ``w[j, k]`` by default, or with ``format=sparse`` a
                         list of the row-major positions set, sorted and read mode by mode
``parallelize(i)``       run the loop ``i`` with OpenMP threads (a loop inside others when its output
                         is dense and ``i`` indexes it, or with ``races="atomics"``), each thread with its
                         own workspaces; a CSR, DCSR, CSF, COO or sparse-vector output is
                         assembled in two phases on threads (each row counts, then fills, its
                         own entries; a CSF's upper lists are filled as Dense levels and listed
                         after); a scalar result is reduced into each thread's own copy
                         (``races="copies"`` too), or with ``races="atomics"`` into one
                         accumulator, each update atomic;
                         refused when the threads would race (a scatter, a sparse output in
                         another order of levels, as ``SparseList(Dense(SparseList))``), unless
                         ``races="atomics"`` makes each update of a dense output atomic, or
                         ``races="copies"`` gives each thread its own copy of it; of
                         derived loops, the outer loop of a split (of ``i``, of ``pos(i)``
                         over a row level, or of fused positions with one output element each,
                         or with atomic updates: each block binary-searches its first row)
``split(i, i0, i1, s)``  iterate ``i`` as blocks (``down``: of size ``s``; ``up``: ``s`` blocks),
                         dense, position or sparse (merged) coordinate loops alike
``fuse(i, j, f)``        iterate two directly nested loops as one (a dense output)
``pos(i, ip, A)``        iterate the positions of ``A``'s level of ``i`` (or of a fused ``f``, over
                         a Dense (CSR) or compressed (DCSR) row level: the nnz-balanced loop; or
                         of a split's inner ``i1``: A's positions in each block ``i0`` of ``i``)
``privatize(t, copies)`` refused, naming the strategy that applies it (the looplets strategy's
                         command: :mod:`compiler.looplets.schedule`)
=======================  ========================================================================

``split``, ``fuse`` and ``pos`` build a derived iteration space (:mod:`compiler.lattice.derived`):
they add relations; the statement keeps its original foralls and the code generator
maps the derived variables back. A later ``reorder`` names the loops they made (TACO's SpMM:
``split(i, i0, i1, 16).pos(j, jpos, A).split(jpos, jpos0, jpos1, 8).reorder(i0, i1, jpos0, k,
jpos1)``) and a later ``precompute`` takes a loop they do not name
(:mod:`compiler.lattice.schedule_compose`).

Pass a schedule as ``lower(..., options={"schedule": s})``; commands may also be given
as tuples, ``[("reorder", "i", "k", "j"), ("precompute", "j")]``.

>>> import compiler
>>> s = Schedule().reorder("i", "k", "j").precompute("j", "w")
>>> s
Schedule(reorder(i, k, j), precompute(j, w))
>>> k = compiler.lower("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense",
...                    options={"schedule": Schedule().privatize("y")})
Traceback (most recent call last):
...
compiler.errors.StrategyError: schedule: privatize(y, 4) is a command of the looplets strategy (strategy='looplets'); the lattice strategy's schedule takes reorder, precompute, parallelize, split, fuse, pos
"""

from __future__ import annotations

import numpy as np

from ..capabilities import applied_by
from ..errors import ParseError, StrategyError
from ..notation.ast import Index
from ..schedule import Command, Schedule, as_schedule
from .output_build import listed_after_threads

#: the commands the lattice strategy applies (the rest of :data:`compiler.schedule.COMMANDS` it refuses,
#: naming the strategy that takes them)
LATTICE_COMMANDS = ("reorder", "precompute", "parallelize", "split", "fuse", "pos")
DERIVED = ("split", "fuse", "pos")
#: what ``parallelize`` does where threads would update the same elements of the output
RACES = ("none", "atomics", "copies")
#: the updates OpenMP can make atomic (``#pragma omp atomic``: ``x op= e``)
ATOMIC_UPDATES = ("add", "mul", "bitand", "bitor", "bitxor")


def races_of(schedule) -> str:
    """What the schedule's ``parallelize`` does where threads would race: ``"none"``, ``"atomics"``
    or ``"copies"``.

    >>> races_of(Schedule().parallelize("j", races="atomics")), races_of(Schedule())
    ('atomics', 'none')
    """
    return next((c.args[1] for c in as_schedule(schedule).commands if c.name == "parallelize" and c.args[1:]),
                "none")


def apply_schedule(schedule: Schedule, stmt, graph, program, formats) -> tuple:
    """``(statement, steps, parallel index or None, relations)`` after applying every command in order."""
    from .ordering import order_statement
    from .derived import SuchThat, add_relation
    steps, parallel, relations = [], None, ()
    for c in schedule.commands:
        if c.name not in LATTICE_COMMANDS:
            raise StrategyError(f"schedule: {c} is {applied_by(c.name)}; the lattice strategy's schedule takes "
                                f"{', '.join(LATTICE_COMMANDS)}")
        before = SuchThat(stmt, relations) if relations else stmt
        if c.name in DERIVED:
            relations = add_relation(c, stmt, relations, program, formats)
            r = relations[-1]
            note = {"split": "derived loops {1}, {2} iterate {0} ({4}, factor {3})",
                    "fuse": "one loop {2} iterates {0} and {1}",
                    "pos": "{1} iterates the positions of {2}'s level of {0}"}[c.name]
            steps.append((f"schedule:{c.name}", before, SuchThat(stmt, relations),
                          note.format(*[getattr(r, f) for f in r.__dataclass_fields__])))
            continue
        if c.name == "reorder" and relations:
            stmt, relations, note = _reorder_derived(c, stmt, graph, relations)
            steps.append((f"schedule:{c.name}", before, SuchThat(stmt, relations), note))
            continue
        if c.name == "precompute" and relations:
            from .schedule_compose import check_precompute_after
            check_precompute_after(c, relations)
        named = c.args if c.name == "reorder" else c.args[:1]   # (parallelize's races is a word too)
        if c.name in ("reorder", "parallelize") and not all(isinstance(a, str) for a in named):
            raise StrategyError(f"schedule: {c} needs index names (strings), e.g. {c.name}('i')")
        if c.name == "reorder":
            stmt = order_statement(stmt, graph, list(c.args))
            note = f"loops in the order {', '.join(str(a) for a in c.args)}"
        elif c.name == "precompute":
            stmt, note = _precompute(c, stmt, graph, program, formats)
        else:  # parallelize
            if len(c.args) not in (1, 2):
                raise StrategyError(f"schedule: {c} needs exactly one index (and optionally races='atomics' or "
                                    f"'copies')")
            if c.args[1:] and c.args[1] not in RACES:
                raise StrategyError(f"schedule: {c} does not apply: races is one of {', '.join(map(repr, RACES))}, "
                                    f"not {c.args[1]!r}")
            if parallel is not None:
                raise StrategyError(f"schedule: {c} does not apply: parallelize({parallel}) came first; one loop "
                                    f"runs on threads (the outermost, or a loop split out of it)")
            parallel = Index(c.args[0])
            from .cin import foralls
            loops = [i.name for i in foralls(stmt)] + [v for r in relations for v in r.derived]
            if parallel.name not in loops:
                raise StrategyError(f"schedule: {c} does not apply: {parallel} is not a loop of the statement "
                                    f"(loops {', '.join(dict.fromkeys(loops))})")
            note = f"{parallel} runs on OpenMP threads" + {
                ("atomics",): ", each update of the output atomic",
                ("copies",): ", each thread updating its own copy of the output"}.get(tuple(c.args[1:]), "")
        steps.append((f"schedule:{c.name}", before, SuchThat(stmt, relations) if relations else stmt, note))
    return stmt, steps, parallel, relations


def _reorder_derived(c: Command, stmt, graph, relations) -> tuple:
    """``(statement, relations, note)`` after a ``reorder`` that names derived loops
    (:mod:`compiler.lattice.schedule_compose`)."""
    from .cin import loop_chain
    from .ordering import order_statement
    from .schedule_compose import derived_order
    loops = [i.name for i in loop_chain(stmt)[0]]
    order, added = derived_order(list(c.args), loops, relations, str(c))
    stmt = order_statement(stmt, graph, order)
    note = f"loops in the order {', '.join(str(a) for a in c.args)} (the original loops {', '.join(order)})"
    if added:
        note += "; the loops of different original loops interleave: the emitter moves them into this order"
    return stmt, relations + added, note


def _precompute(c: Command, stmt, graph, program, formats):
    """``(statement, note)`` after ``precompute(index, workspace[, expr])``."""
    from ..notation import parse_expr
    from ..notation.ast import Expr
    from .algebra import derive
    from .ordering import order_statement, wheres
    from .cin import loop_chain, expr_accesses, foralls, index_names
    from .precompute import precompute, with_workspace_kind
    if not c.args or len(c.args) > 4:
        raise StrategyError(f"schedule: {c} needs the workspace's index, then optionally its name, the "
                            f"expression and the workspace's format, e.g. precompute(j, w, C[i, j] + D[i, j]) "
                            f"or precompute(j, w, format=dense)")
    index, name = c.args[0], (c.args[1] if len(c.args) > 1 else None) or "w"
    if not isinstance(index, (str, tuple, list)) or not all(isinstance(i, str) for i in index):
        raise StrategyError(f"schedule: {c} does not apply: the workspace's index is {index!r}; name it (a "
                            f"string, e.g. 'j', or a tuple of strings)")
    indices = list(index) if isinstance(index, (tuple, list)) else index.replace(",", " ").split()
    kind = (c.args[3] if len(c.args) > 3 else None) or "auto"
    if kind not in ("auto", "dense", "sparse"):
        raise StrategyError(f"schedule: {c} does not apply: a workspace's format is dense or sparse, not {kind!r}")
    from ..imperative.ir import c_name_problem
    from ..notation.ast import walk
    problem = c_name_problem(name, {program.lhs.tensor, *formats})
    if problem:
        raise StrategyError(f"schedule: {c} does not apply: workspace name {name!r} cannot name an array of "
                            f"the generated C: {problem}")
    if name in {program.lhs.tensor} | set(formats):
        raise StrategyError(f"schedule: {c} does not apply: workspace name {name} is already a tensor")
    if name in index_names(program) | {i.name for i in foralls(stmt)}:
        raise StrategyError(f"schedule: {c} does not apply: workspace name {name} is already an index")
    if name in {w.temp.name for w in wheres(stmt)}:
        raise StrategyError(f"schedule: {c} does not apply: workspace name {name} is already a temporary")
    expr = c.args[2] if len(c.args) > 2 else None
    if isinstance(expr, str):
        try:
            expr = parse_expr(expr, {op.name: op for op in _user_ops(program.rhs)})
        except ParseError as e:   # (the caret is under the schedule's text, not the program's: say so)
            raise ParseError(f"schedule: {c}: its expression does not parse: {e.reason}", e.source,
                             e.offset) from None
    if expr is not None and not isinstance(expr, Expr):
        raise StrategyError(f"schedule: {c} does not apply: the expression must be index notation (a string), "
                            f"not {type(expr).__name__}")
    if expr is not None and not any(n == expr for n in walk(program.rhs)):
        # max[j](A[i, j]) as the user wrote it, where the program's reduction was renamed apart (j_2)
        expr = next((n for n in walk(program.rhs) if _alpha_equal(expr, n, {})), expr)
    from ..notation.ast import Reduce
    from .cin import assignments
    if isinstance(expr, Reduce) and expr == program.rhs and program.op is None and \
            not any(n == expr for a in assignments(stmt) for n in walk(a.rhs)):
        # y[i] = max[j](A[i, j]) is concretized as y[i] max= A[i, j]: the reduction is the update
        raise StrategyError(f"schedule: {c} does not apply: {expr} is the whole right-hand side, and its "
                            f"reduction over {', '.join(i.name for i in expr.indices)} is the output's own update "
                            f"({program.lhs} {expr.op.name}= {expr.body}); precompute part of its body, "
                            f"{expr.body}, or leave the expression out to gather the right-hand side")

    def fill_of(e):
        try:
            return derive(e, lambda a: formats[a.tensor].fill)[1]
        except KeyError:   # reads an earlier workspace: its fill is not a format's
            from ..algebra import NOVALUE
            return NOVALUE

    # the producer's loops iterate the expression's tensors alone
    sub = graph.restricted(expr_accesses(expr)) if expr is not None else graph
    new = precompute(stmt, indices, name, expr, fill_of=fill_of, order_fn=lambda loops: sub.order(loops, prefer=loops),
                     kind="dense" if kind == "dense" else "auto")   # (a sparse one is made so below)
    if expr is not None:
        # the new where's loops follow the formats; the loops around it are kept
        new = order_statement(new, graph, loop_chain(new)[0])
    if kind != "auto":
        new = with_workspace_kind(new, name, kind)
    what = f"{name}[{', '.join(indices)}]"
    kind = "dense" if len(indices) > 1 or kind == "dense" else "sparse: values, a bitmap and a coordinate list"
    return new, (f"workspace {what} ({kind}) holds {expr}, computed before its use" if expr is not None
                 else f"workspace {what} ({kind}) gathers the right-hand side")


def _alpha_equal(a, b, env: dict) -> bool:
    """Whether expressions ``a`` and ``b`` are equal up to the names of their reduction indices."""
    from ..notation.ast import Access, Call, Reduce
    if isinstance(a, Access):
        return isinstance(b, Access) and a.tensor == b.tensor and \
            tuple(env.get(i, i) for i in a.indices) == tuple(b.indices)
    if isinstance(a, Call):
        return isinstance(b, Call) and a.op == b.op and len(a.args) == len(b.args) and \
            all(_alpha_equal(x, y, env) for x, y in zip(a.args, b.args))
    if isinstance(a, Reduce):
        return isinstance(b, Reduce) and a.op == b.op and len(a.indices) == len(b.indices) and \
            _alpha_equal(a.body, b.body, {**env, **dict(zip(a.indices, b.indices))})
    return a == b


def _user_ops(e) -> list:
    """The user functions ``e`` calls or reduces by (``addu[j](A[i, j])``)."""
    from ..notation.ast import Call, Reduce, walk
    return [n.op for n in walk(e) if isinstance(n, (Call, Reduce)) and n.op.is_user]


def _parts(s) -> list:
    """The statements of a (nested) sequence, in order."""
    from .cin import Sequence
    return [*_parts(s.define), *_parts(s.mutate)] if isinstance(s, Sequence) else [s]


def check_parallel(index: Index, setup, written: Index | None = None) -> str:
    """Refuse ``parallelize(index)`` when the threads would race or it is not the outer loop;
    return the race strategy the loop needs: ``setup.races`` as scheduled, or ``"none"`` when
    each thread owns its rows of a dense output (then no update needs an atomic or a copy).

    Workspaces inside the loop are fine: each thread gets its own
    (:mod:`compiler.imperative.privatize`). A sparse output is filled on threads when it
    is CSR or DCSR, a level over ``index`` above one SparseList level, or one level (COO,
    a sparse vector): each row then counts its entries and fills them from its start
    (two-phase assembly); a block of
    rows (a split of ``index`` or of its positions) keeps its rows on one thread. (Fused
    positions, whose blocks could split a row between threads, never reach here with a
    sparse output: ``fuse`` itself refuses one.)
    """
    from .cin import Sequence, Where, loop_chain, foralls
    from .derived import blocks_split_rows
    from .iteration_graph import is_all_dense, storage_path
    order, body = loop_chain(setup.statement)
    what = f"parallelize({written or index}) does not apply"
    if not order and isinstance(body, Sequence) and all(loop_chain(p)[0][:1] == [index] for p in _parts(body)):
        # a sum's terms one after another (y = a; y += b; y += c; _terms_in_sequence): each loop
        # nest runs on the threads, over the same rows; checking the first checks them all
        order, body = loop_chain(_parts(body)[0])
    elif not order and isinstance(body, Sequence):
        # define; mutate (y = z; y += A x): the threads take the outer loop of one of them, and
        # the others run on one thread, before or after
        parts = _parts(body)
        part = next((p for p in parts if loop_chain(p)[0][:1] == [index]), None)
        if part is not None and any(index in foralls(p) for p in parts if p is not part):
            where = ("two loop nests (a sequence), and {} runs in both: outermost in one, inside the other"
                     if len(parts) == 2 else f"{len(parts)} loop nests (a sequence), and {{}} runs in more than "
                     f"one: outermost in one, inside another")
            raise StrategyError(f"{what}: {setup.output.tensor} is defined, then updated, by "
                                f"{where.format(index)}, where its iterations would race")
        if part is not None:
            order, body = loop_chain(part)
    if not setup.output.indices:
        # a scalar: each thread reduces into its own copy, combined at the end (OpenMP's reduction
        # clause: races='copies' is that too), or with races='atomics' every update of the one
        # accumulator is atomic, as TACO's parallelizeAtomicReduction
        _check_parallel_reduction(index, setup, what, atomic=setup.races == "atomics")
        return "atomics" if setup.races == "atomics" else "none"
    if not order and isinstance(body, Where):
        _computes_first(what, "the statement", body, setup.scheduled)
    plain = written is None or written == index   # (a derived loop runs on threads only outermost)
    if plain and index in order[1:] and is_all_dense(setup.output_format):
        return _inner_parallel(index, setup, what)
    if not order or order[0] != index:
        loops = list(dict.fromkeys(foralls(setup.statement)))
        if plain and index in loops and is_all_dense(setup.output_format) and index not in setup.output.indices \
                and setup.races == "none":
            _inner_parallel(index, setup, what)   # (refuses: say that atomics would do)
        hint = (f"; put {index} first with reorder({', '.join([index.name] + [i.name for i in loops if i != index])})"
                f" before parallelize, where the formats allow it" if index in loops else "")
        raise StrategyError(f"{what}: only the outermost loop can be parallelized, and the loops run "
                            f"{', '.join(i.name for i in loops) or '(none)'}{hint}")
    out, fmt = setup.output.tensor, setup.output_format
    path = storage_path(setup.output, fmt)[0]
    if setup.races != "none" and is_all_dense(fmt) and path and path[0] == index \
            and blocks_split_rows(written or index, setup.relations, [i.name for i in path]) is None:
        # each thread updates its own elements of the output (an update y[i] += t_j of a given y
        # included): no update needs an atomic, and no thread a copy
        return "none"
    if setup.races != "none":
        _check_race_strategy(setup, what)   # then threads may update one element
        return setup.races
    if not path or path[0] != index:
        hint = (f"; parallelize({written or index}, races='atomics') makes each update of {out} atomic, and "
                f"races='copies' gives each thread its own copy of {out}" if is_all_dense(fmt) else "")
        raise StrategyError(f"{what}: {index} does not index the output {out}'s outer mode, so "
                            f"iterations of {index} add into the same elements of {out} (a race){hint}")
    if not is_all_dense(fmt):
        names = [lvl.name for lvl in fmt.levels]
        # (a row's entries in a level that marks its slots, or keeps its keys, are its own too:
        # its slots, and keys ``row * size + j``)
        shape = ["dense" if lvl.located_by_coordinate else "list" if lvl.compressed and lvl.appends_nested
                 else "slots" if lvl.marks_slots or lvl.keys_in_table is not None
                 else "coo" if lvl.coordinate_list else "other" for lvl in fmt.levels]
        if shape[-1] == "dense" and shape != ["dense"] * len(shape):   # (blocks of Dense slots: as their level)
            shape = shape[:max(q for q, x in enumerate(shape) if x != "dense") + 1]
        # (a fiber under Dense levels only counts, then fills, its own entries: i * n + j is row i's)
        fibers = shape[-1] in ("list", "slots") and all(x == "dense" for x in shape[:-1])
        # (CSF rows, Dense(SparseList(SparseList)), and CSF, SparseList(SparseList(SparseList)): filled as
        # Dense(Dense(SparseList)), the upper lists listed after)
        fibers = fibers or listed_after_threads(tuple(fmt.levels)) is not None
        if not fibers and shape not in (["list", "list"], ["list", "slots"], ["coo"]):
            raise StrategyError(f"{what}: the sparse output {out} ({', '.join(names)}) would be appended through "
                                f"one counter the threads share (a race); on threads the lattice strategy fills "
                                f"CSR and DCSR outputs (rows over {index}, then a SparseList, a SparseByteMap or "
                                f"a SparseHash, under more Dense levels too, a fiber per position of theirs), COO "
                                f"outputs and sparse vectors (a SparseList, SparseByteMap or SparseHash), with blocks "
                                f"of Dense levels under such a SparseList or SparseHash or a DCSR's SparseList, and a "
                                f"SparseByteMap or SparseHash under a DCSR's rows, and CSF outputs (SparseList "
                                f"levels only, three or more, or two or more under Dense levels), each fiber from "
                                f"its own start")
    return "none"


def _inner_parallel(index: Index, setup, what: str) -> str:
    """The race strategy of ``parallelize(index)`` of a loop inside others (TACO's sptv,
    ``parallelize(j)`` of ``y[j] = A[i, j, k] * x[k]``): the loops around it run on one thread, and
    a parallel region opens in each of their iterations. The output must be dense; when ``index``
    indexes it, each iteration sets its own elements, else ``races='atomics'`` makes each update
    atomic (the updates then go to the output itself: no scalar gathers them around the loop).
    """
    out = setup.output.tensor
    if setup.races == "copies":
        raise StrategyError(f"{what}: races='copies' gives each thread a copy of {out} for a loop run once per "
                            f"iteration of the loops around it; parallelize an outer loop, or use races='atomics'")
    if index not in setup.output.indices and setup.races != "atomics":
        outer = [i.name for i in _outer(index, setup)]
        raise StrategyError(f"{what}: {index} runs inside the loop{'s' * (len(outer) > 1)} {', '.join(outer)} "
                            f"and does not index the output {out}, so its iterations add into the same elements of "
                            f"{out} (a race); parallelize({index}, races='atomics') makes each update atomic")
    if setup.races == "atomics":
        _check_race_strategy(setup, what)
    return setup.races


def _outer(index: Index, setup) -> list:
    """The loops around ``index``'s (through the ``where`` that scalar promotion makes)."""
    from .cin import loop_chain
    order, body = loop_chain(setup.statement)
    return order if index not in order else order[:order.index(index)]


def _check_race_strategy(setup, what: str) -> None:
    """Refuse ``races='atomics'`` or ``'copies'`` unless the output is dense and each update of it
    can be made that way: ``atomics`` needs an atomic form (``y[i] += v``: OpenMP's ``atomic``
    covers ``+ * & | ^`` on numbers), ``copies`` an identity (each thread's copy starts there;
    the copies are then combined by the same update). A plain assignment ``y[i] = t`` needs
    neither: its loops all index ``y``, so each element is written once."""
    from ..algebra import NOVALUE
    from .iteration_graph import is_all_dense
    out, races = setup.output.tensor, setup.races
    if not is_all_dense(setup.output_format):
        raise StrategyError(f"{what}: " + (
            f"races='atomics' updates the elements of a dense output; the output {out} is sparse, and its entries "
            f"are appended, not updated in place" if races == "atomics" else
            f"races='copies' gives each thread a copy of a dense output; the output {out} is sparse"))
    for a in _updates_of_output(setup):
        if races == "atomics" and (a.op.is_user or a.op.name not in ATOMIC_UPDATES or setup.out_dtype == "bool"):
            raise StrategyError(f"{what}: with races='atomics' each update of {out} is atomic, which OpenMP "
                                f"has for +, *, &, | and ^ of numbers; {out} is updated by {a.op.name} "
                                f"({setup.out_dtype}) in {a}")
        if races == "copies" and a.op.identity_for(np.dtype(setup.out_dtype)) is NOVALUE:
            raise StrategyError(f"{what}: with races='copies' each thread's copy of {out} starts at the identity "
                                f"of its update, and {a.op.name} in {a} has none")


def _updates_of_output(setup) -> list:
    """The assignments that update the output (``y[i] += t``), not those that set it."""
    from .cin import assignments
    return [a for a in assignments(setup.statement) if a.lhs.tensor == setup.output.tensor and a.op is not None]


def output_update(setup):
    """The operator that updates the output (``add`` of ``y[i] += t``), or None when it is only set.
    (The program's update, or the reduction that adds into the output directly: never both.)

    >>> from compiler.format import csr, dense
    >>> from compiler.lattice.plan import Setup
    >>> from compiler.notation import parse
    >>> output_update(Setup.create(parse("y[i] += A[i, j]"), {"A": csr(), "y": dense(1)})).name
    'add'
    """
    ups = _updates_of_output(setup)
    return ups[0].op if ups else None


#: OpenMP's reduction identifiers for the operators whose partial results threads may combine
_OMP_REDUCTIONS = {"add": "+", "mul": "*", "bitand": "&", "bitor": "|", "bitxor": "^", "and": "&&", "or": "||",
                   "max": "max", "min": "min"}


def scalar_wheres(setup) -> list:
    """The ``where`` statements outside every loop of a scalar result, each reducing into its
    own accumulator (none when the result has indices).

    >>> from compiler.format import csr
    >>> from compiler.lattice.plan import Setup
    >>> from compiler.notation import parse
    >>> setup = Setup.create(parse("s = sum[i, j](A[i, j]) + max[i, j](B[i, j])"), {"A": csr(), "B": csr()})
    >>> sorted(w.temp.name for w in scalar_wheres(setup))
    ['t_ij', 't_ij_2']
    """
    from .cin import Where
    if setup.output.indices:
        return []
    found, stack = [], [setup.statement]
    while stack:
        s = stack.pop()
        if isinstance(s, Where):
            found.append(s)
            stack += [s.consumer, s.producer]
    return found


def omp_reduction(setup, temp: str) -> str | None:
    """The ``reduction(op:temp)`` clause of a parallel loop that reduces into the scalar
    accumulator ``temp`` (one of :func:`scalar_wheres`), or None.

    ``s = sum[i, j](A[i, j])`` accumulates in the scalar ``t_ij`` (scalar promotion): each
    thread sums its rows into its own copy, and OpenMP adds the copies at the end.

    >>> from compiler.format import csr
    >>> from compiler.lattice.plan import Setup
    >>> from compiler.notation import parse
    >>> omp_reduction(Setup.create(parse("s = sum[i, j](A[i, j])"), {"A": csr()},
    ...                            schedule=Schedule().parallelize("i")), "t_ij")
    'reduction(+:t_ij)'
    """
    where = next((w for w in scalar_wheres(setup) if w.temp.name == temp), None)
    if where is None or where.temp.workspace or where.temp.op is None:
        return None
    op = _OMP_REDUCTIONS.get(where.temp.op.name)
    if op in _KEEPING_NAN and np.dtype(setup.temps[temp][1]).kind == "f":
        op = _KEEPING_NAN[op][0]   # OpenMP's max drops a NaN partial result; numpy's (and ours) keeps it
    return f"reduction({op}:{temp})" if op is not None else None


#: a float max or min whose threads' partial results keep a NaN: its name, comparison and identity
_KEEPING_NAN = {"max": ("max_keeping_nan", ">", "-INFINITY"), "min": ("min_keeping_nan", "<", "INFINITY")}


def omp_declared_reduction(setup, temp: str) -> str | None:
    """The ``omp declare reduction`` pragma that :func:`omp_reduction`'s clause names, or None.

    OpenMP's own ``max`` combines two threads' maxima with ``>``, which passes a NaN over;
    numpy's max is NaN when any entry is. A float max or min declares its own combiner,
    which keeps a NaN as the loop body's running max does.

    >>> from compiler.format import csr
    >>> from compiler.lattice.plan import Setup
    >>> from compiler.notation import parse
    >>> print(omp_declared_reduction(Setup.create(parse("s = max[i, j](A[i, j])"), {"A": csr()},
    ...                                           schedule=Schedule().parallelize("i")), "t_ij"))
    omp declare reduction(max_keeping_nan : double : omp_out = isnan(omp_out) || omp_out > omp_in ? omp_out : omp_in) \
initializer(omp_priv = -INFINITY)
    """
    from ..dtypes import c_type
    clause = omp_reduction(setup, temp)
    for name, cmp, identity in _KEEPING_NAN.values():
        if clause is not None and clause.startswith(f"reduction({name}:"):
            return (f"omp declare reduction({name} : {c_type(setup.temps[temp][1])} : omp_out = isnan(omp_out) || "
                    f"omp_out {cmp} omp_in ? omp_out : omp_in) initializer(omp_priv = {identity})")
    return None


def _computes_first(what: str, who: str, where, scheduled=frozenset()) -> None:
    """Refuse a parallel loop because a ``where`` outside every loop computes something first
    (said in the user's terms: the workspace, whether the schedule's ``scheduled`` ones or one the
    formats forced, or the reduction the temporary holds)."""
    from ..notation.ast import Reduce
    from .cin import loop_chain, assignments
    if where.temp.workspace and where.temp.name in scheduled:
        first = f"the workspace {where.temp.name} (the schedule's precompute)"
    elif where.temp.workspace:
        first = (f"the workspace {where.temp.name}, which the formats need (a reduction stored in an order that "
                 f"does not nest in the loops around it: see the trace's precompute step)")
    else:
        loops, _ = loop_chain(where.producer)
        (a, *_) = assignments(where.producer)
        first = f"the reduction {Reduce(where.temp.op, tuple(loops), a.rhs) if loops else a.rhs}"
    raise StrategyError(f"{what}: {who} first computes {first}, outside every loop, so no loop encloses all of it")


def _check_parallel_reduction(index: Index, setup, what: str, atomic: bool = False) -> None:
    """Refuse ``parallelize(index)`` of a scalar result unless the threads can combine partial results.

    Each reduction outside every loop (:func:`scalar_wheres`) whose loops start with
    ``index`` runs on threads, each thread into its own copy of the accumulator; one whose
    loops do not include ``index`` runs on one thread.
    """
    from .cin import Where, loop_chain
    out = setup.output.tensor
    wheres = scalar_wheres(setup)
    if not wheres:
        raise StrategyError(f"{what}: the result {out} is a scalar that every iteration of {index} would "
                            f"write (a race)")
    for w in wheres:
        if w.temp.workspace:
            _computes_first(what, "the statement", w, setup.scheduled)
    on_threads = 0
    for w in wheres:
        loops, _ = loop_chain(w.producer)
        if index not in loops:
            continue
        if loops[0] != index:
            raise StrategyError(f"{what}: only the outermost loop of the reduction into {out} can be "
                                f"parallelized, and its loops run {', '.join(i.name for i in loops)}")
        op, dt = w.temp.op.name, setup.temps[w.temp.name][1]
        if atomic and (w.temp.op.is_user or op not in ATOMIC_UPDATES or dt == "bool"):
            raise StrategyError(f"{what}: with races='atomics' each update of the result {out} is atomic, which "
                                f"OpenMP has for +, *, &, | and ^ of numbers; {out} is a reduction by {op} of {dt} "
                                f"values (leave races out: each thread then reduces into its own copy)")
        if not atomic and omp_reduction(setup, w.temp.name) is None:
            raise StrategyError(f"{what}: the result {out} is a reduction by {op} of {dt} values over {index}, "
                                f"and OpenMP cannot combine the threads' partial results of {op}")
        on_threads += 1
    if not on_threads:
        loops, inner = loop_chain(wheres[0].producer)
        if not loops and isinstance(inner, Where):
            _computes_first(what, f"the reduction into {out}", inner, setup.scheduled)
        raise StrategyError(f"{what}: only the outermost loop of the reduction into {out} can be parallelized, "
                            f"and its loops run {', '.join(i.name for i in loops) or '(none)'}")


__all__ = ["ATOMIC_UPDATES", "LATTICE_COMMANDS", "RACES", "Command", "Schedule", "as_schedule", "apply_schedule", "check_parallel",
           "omp_declared_reduction", "omp_reduction", "races_of", "scalar_wheres"]
