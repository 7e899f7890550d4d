"""The plan: what the lattice strategy knows about a program before it builds any CFIR.

:meth:`Setup.create` checks the program against the formats, names each access and its
level iterators, computes the output's dtype and fill, orders the concrete statement by the
iteration graph, applies a schedule, and decides the statement rewrites of
:mod:`compiler.lattice.plan_steps` (each recorded in :attr:`Setup.steps` as
``(stage, before, after, note)`` for the trace). The conversions of inputs read in another
order are decided around it (:mod:`compiler.lattice.conversions`).

>>> from compiler.notation import parse
>>> from compiler.format import csc, dense
>>> setup = Setup.create(parse("y[i] = A[i, j] * x[j] + z[i]"), {"A": csc(), "x": dense(1), "z": dense(1)})
>>> [stage for stage, *_ in setup.steps]
['precompute', 'sequence']
>>> print(setup.statement)
forall i:
  y[i] = z[i]
forall j:
  forall i:
    y[i] += A[i, j] * x[j]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import values
from ..algebra import NOVALUE
from ..dtypes import typed_scalar
from ..errors import StrategyError
from ..format import Format
from ..notation.ast import Access, Assign, Index, Reduce, assign_spelling
from ..notation.dtypes import check_output_dtype, expr_dtype, reduce_dtype
from ..values import same_value
from .algebra import derive, expr_facts
from .cin import (Assignment, Forall, Stmt, Where, as_update, concretize, expr_accesses, foralls, hoist_invariants,
                  loop_chain, scalar_promote, unshadow)
from .iteration_graph import IterationGraph, LoopOrderError, is_all_dense, storage_path
from .iterators import WorkspaceIterator, mode_iterators
from .output_build import assembles, placed_or_appended
from .lattice import nonfinite_fill, nonfinite_literal
from .ordering import order_statement, wheres
from .plan_steps import (as_sequence, auto_workspace, flat_positions, hoist_reductions, output_assignment,
                         output_order, rows_per_thread, straddles, terms_in_sequence)


def typed_fill(fmt: Format):
    """``fmt``'s fill as a scalar of its dtype: fills derived from it round as the kernel's arithmetic
    does, and a uint64 tensor's fill 0 shifted by a uint64 literal stays uint64 (a Python 0 made it
    float64, and numpy has no shift of floats)."""
    return fmt.fill if fmt.dtype is None else typed_scalar(fmt.fill, fmt.dtype)


@dataclass
class Setup:
    """Formats, names, dtypes and fills of a program's accesses, and its concrete statement."""

    program: Assign
    formats: dict
    output: Access
    output_format: Format
    statement: Stmt
    graph: IterationGraph
    names: dict          # access key -> name used in generated code
    iters: dict          # access key -> [ModeIterator]
    paths: dict          # access key -> storage-ordered indices
    flexible: set        # access keys of all-Dense tensors
    extents: dict        # Index -> size parameter name
    extent_uses: dict    # Index -> [(tensor, mode)]
    temps: dict          # temp name -> (Temporary, dtype)
    out_neutral: Any
    out_fill: Any
    out_dtype: str
    rhs_fill: Any
    lattices: list
    promoted: bool = False
    concrete: Stmt | None = None
    steps: list = field(default_factory=list)  # (stage, before, after, note) of transformations
    parallel: Index | None = None              # the loop run on OpenMP threads
    races: str = "none"                        # ... and what it does where threads update one element
    relations: tuple = ()                      # split / fuse / pos (compiler.lattice.derived)
    #: a scalar temporary's value where its operands are fill (``max[k](A[i, k])`` of a fill-0 A: 0),
    #: its fill where a loop it was hoisted out of reads it as a constant
    scalar_fills: dict = field(default_factory=dict)
    #: temporaries holding values that may be NaN or infinite where nothing is stored (an
    #: operand's fill, or a literal, is): no annihilator applies to them
    nonfinite_temps: set = field(default_factory=set)
    #: the automatic workspace that gathers the whole sparse output (an outer product: the
    #: reduction's loop runs outside every output loop), or None
    gathered: str | None = None
    #: the workspaces the schedule asked for (``precompute``), not the formats
    scheduled: frozenset = frozenset()
    #: the sparse format the output is built in by a scatter, its loops out of its storage order
    #: (:mod:`compiler.lattice.scatter_output`; ``output_format`` is then Dense), or None
    scattered: Format | None = None
    #: what the lowering assumed each input's stored values may hold (:func:`compiler.values.assumed`:
    #: finite outside :func:`compiler.values.assuming`), which its lattices' intersections rely on
    assumed: dict = field(default_factory=dict)
    #: the sparse format of three or more modes the output is built in by sorting every entry, its loops out of
    #: its storage order (:mod:`compiler.lattice.sorted_output`; ``output_format`` is that format in the loops'
    #: mode order, as the plan built it), or None
    entry_sorted: Format | None = None

    @property
    def out_fill_value(self):
        """The output's fill as a plain Python value (for comments, and for the runtime)."""
        return self.out_fill.item() if hasattr(self.out_fill, "item") else self.out_fill

    def fill_of(self, acc: Access):
        if acc.tensor in self.temps:
            t, dt = self.temps[acc.tensor]
            if self.scalar_fills.get(acc.tensor, NOVALUE) is not NOVALUE:
                return self.scalar_fills[acc.tensor]
            init = init_of(t, dt)
            if acc.tensor in self.nonfinite_temps and np.dtype(dt).kind == "f" and (not t.workspace or t.dense) \
                    and np.isfinite(init):
                # every entry is computed, and may be NaN though it starts finite: derive as if it
                # held NaN, so that nothing annihilates it (0 * t is NaN, not 0, where t is)
                return np.asarray(np.nan, dtype=dt)[()]
            return init
        return typed_fill(self.formats[acc.tensor])

    def scatter_start(self):
        """The value a dense output starts from when a reduction adds into it in place (the
        operator's identity, when that is not the output's fill), or None.

        ``forall i, j: y[i] += A[i, j] * t`` starts ``y`` at 0 whatever the fill of the sum:
        each visited row adds to it, and the rows' missing entries are folded or swept in.
        """
        s = output_assignment(self.statement)
        if not isinstance(s, Assignment) or s.op is None or s.lhs != self.output or self.program.op is not None:
            return None
        # the identity of the reduction's own dtype: an empty max of ints is INT64_MIN in a
        # float output too, as when it is reduced in a temporary first
        ident = s.op.identity_for(reduce_dtype(s.op, expr_dtype(s.rhs, self.dtype_of)))
        if ident is NOVALUE:
            return None
        ident = typed_scalar(ident, self.out_dtype)
        if self.out_neutral is not NOVALUE and same_value(ident, self.out_fill):
            return None
        return ident

    def access(self, key: str) -> Access:
        """The access named ``key``: an input's, or a workspace's that a consumer reads."""
        for a in expr_accesses(self.program.rhs) + stmt_accesses(self.statement):
            if str(a) == key:
                return a
        raise KeyError(key)

    def dtype_of(self, acc: Access) -> str:
        if acc.tensor in self.temps:
            return self.temps[acc.tensor][1]
        return np.dtype(self.formats[acc.tensor].dtype).name

    def record_steps(self, trace) -> None:
        """Record in ``trace`` the statement rewrites the plan decided on, in order (a ``precompute``,
        ``sequence``, ``hoist``, ``update`` or schedule step each)."""
        for stage, before, after, note in self.steps:
            trace.record(stage, before=before, after=after, note=note)

    @classmethod
    def create(cls, program: Assign, formats: dict, order=None, promote: bool = True, schedule=None) -> "Setup":
        """Check the program against the formats and build its ordered concrete statement."""
        program = unshadow(program)
        _check_identities(program)
        out = program.lhs
        inputs = expr_accesses(program.rhs)
        for acc in inputs:
            if acc.tensor not in formats:
                raise StrategyError(f"no format or tensor given for {acc.tensor}")
            if acc.tensor == out.tensor:
                raise StrategyError(f"output {out.tensor} is also read on the right-hand side; "
                                    f"the lattice strategy writes a fresh output. To combine {out.tensor}'s "
                                    f"values with the rest, write an update, which starts from them: "
                                    f"{out} += ... (or *=, max=, min=, <<f>>=)")
            if len(acc.indices) != formats[acc.tensor].ndim:
                raise StrategyError(f"{acc} uses {len(acc.indices)} indices but tensor {acc.tensor} "
                                    f"has {formats[acc.tensor].ndim} modes")
        # dtypes and fills
        rdt = check_output_dtype(program, formats)
        _, rhs_fill, _ = derive(program.rhs, lambda a: typed_fill(formats[a.tensor]))
        if program.op is not None and rhs_fill is not NOVALUE:
            # an update starts from the fill (identity) of the output
            ident = program.op.identity_for(np.asarray(rhs_fill).dtype)
            rhs_fill = rhs_fill if ident is not NOVALUE and same_value(rhs_fill, ident) else NOVALUE
        if out.tensor in formats:
            ofmt = formats[out.tensor]
            if ofmt.ndim != len(out.indices):
                raise StrategyError(f"output {out} has {len(out.indices)} indices but its format has "
                                    f"{ofmt.ndim} modes")
        else:
            from ..format import dense
            fill = 0 if rhs_fill is NOVALUE else rhs_fill
            if program.op is not None and program.op.identity_for(rdt) is not NOVALUE:
                fill = program.op.identity_for(rdt)   # an update starts at the identity (out_fill below)
            ofmt = dense(len(out.indices), fill=typed_scalar(fill, rdt).item(), dtype=rdt.name)
            formats = {**formats, out.tensor: ofmt}
        out_dtype = np.dtype(ofmt.dtype).name
        if is_all_dense(ofmt):
            out_fill = rhs_fill if rhs_fill is not NOVALUE else ofmt.fill
            if program.op is not None and program.op.identity_for(np.dtype(out_dtype)) is not NOVALUE:
                # a fresh output of an update starts at the identity, whatever its format's fill
                out_fill = program.op.identity_for(np.dtype(out_dtype))
            out_fill = typed_scalar(out_fill, out_dtype)
            neutral = out_fill if rhs_fill is not NOVALUE else NOVALUE
        else:
            out_fill = typed_scalar(ofmt.fill, out_dtype)
            neutral = out_fill
        # names and iterators per distinct access
        names, iters, paths, flexible = {}, {}, {}, set()
        count: dict[str, int] = {}
        for acc in inputs:
            key = str(acc)
            if key in names:
                continue
            k = count.get(acc.tensor, 0) + 1
            count[acc.tensor] = k
            names[key] = acc.tensor if k == 1 else f"{acc.tensor}_{k}"
            fmt = formats[acc.tensor]
            iters[key] = mode_iterators(names[key], acc.tensor, fmt)
            paths[key] = storage_path(acc, fmt)[0]
            if is_all_dense(fmt):
                flexible.add(key)
        extents, uses = {}, {}
        for acc in inputs:
            fmt = formats[acc.tensor]
            for sm, m in enumerate(fmt.mode_order):
                i = acc.indices[m]
                uses.setdefault(i, [])
                if (acc.tensor, m) not in uses[i]:
                    uses[i].append((acc.tensor, m))
                extents.setdefault(i, iters[str(acc)][sm].param("size"))
        for m, i in enumerate(out.indices):
            if i not in extents:
                raise StrategyError(f"output index {i} of {out} is used by no input, so its extent is unknown")
        graph = IterationGraph.build(program, formats)
        concrete = concretize(program)
        stmt = order_statement(concrete, graph, order)
        steps = []
        parallel, relations = None, ()
        if schedule is None:
            schedule = flat_positions(stmt, program, formats)
            automatic = schedule is not None
        else:
            automatic = False
        if schedule is not None:
            from .schedule import apply_schedule, as_schedule
            stmt, steps, parallel, relations = apply_schedule(as_schedule(schedule), stmt, graph, program, formats)
            if automatic:
                tensor = expr_accesses(program.rhs)[0].tensor
                steps = [(stage, before, after, f"automatic, as the loops read every entry of {tensor} and no "
                          f"row: {note}") for stage, before, after, note in steps]
        # (a derived loop stays where the schedule put it: no workspace takes it in)
        derived = {v for r in relations for v in vars(r).values() if isinstance(v, str)}
        scheduled = {w.temp.name for w in wheres(stmt)}
        # (nested workspaces only where no schedule or order was asked for: then the statement is the user's)
        nest = (automatic or schedule is None) and order is None
        dense_out = is_all_dense(ofmt)
        try:
            stmt, hoisted = hoist_reductions(stmt, graph, formats, dense_out, derived, nest=nest)
        except StrategyError as refused:
            retried = None
            # a misnested reduction inside one that does not use the loops around it
            # (y[j] = z[j] + sum[i](max[k](A[k, i])), CSR A): moved out of them first, its
            # loops are the statement's own, and its workspace can go around them
            lifted = hoist_invariants(stmt) if not relations else stmt
            if lifted != stmt:
                try:
                    retried = hoist_reductions(lifted, graph, formats, dense_out, derived, nest=nest)
                    steps.append(("hoist", stmt, lifted, _HOISTED))
                except StrategyError:
                    pass
            if retried is None:
                # (last, nested workspaces: max[j](prod[k](sum[l](A[k, j, l] * B[l, i]))) of a B stored l, i;
                # not where converting an input's order may remove the refusal, a LoopOrderError)
                if not nest or isinstance(refused, LoopOrderError):
                    raise refused from None
                try:
                    retried = hoist_reductions(stmt, graph, formats, dense_out, derived, nest=True, nest_refused=True)
                except StrategyError:
                    raise refused from None
            stmt, hoisted = retried
        steps += hoisted
        if dense_out:
            def dtype_of(e):   # None when it reads a temporary (a nested reduction's)
                if any(a.tensor not in formats for a in expr_accesses(e)):
                    return None
                return expr_dtype(e, lambda a: np.dtype(formats[a.tensor].dtype)).name
            # (a workspace the schedule asked for stays: only one the formats forced goes)
            seq = None if program.op is not None else as_sequence(stmt, out, out_dtype, dtype_of, scheduled,
                                                                   nested=parallel is None)
            if seq is not None:
                ws = [x.temp.name for x in wheres(stmt) if x.temp.workspace]
                if len(ws) == 1:
                    note = (f"{out.tensor} starts at what the workspace {ws[0]} was added to, and the reduction "
                            f"adds into {out.tensor} itself")
                else:
                    note = (f"{out.tensor} starts at what the workspaces {', '.join(ws)} were added to, and each "
                            f"reduction adds into {out.tensor} itself, one after another")
                steps.append(("sequence", stmt, seq, f"{note}: no workspace (taco's sequence statement, "
                              f"define; mutate)"))
                stmt = seq
            elif not relations and rows_per_thread(stmt, out, ofmt, parallel):
                split = terms_in_sequence(stmt, out, out_dtype, dtype_of, lambda a: typed_fill(formats[a.tensor]),
                                           lambda e: all(is_all_dense(formats[a.tensor]) for a in expr_accesses(e)),
                                           program.op, parallel)
                if split is not None:
                    seq, note = split
                    steps.append(("sequence", stmt, seq, note))
                    stmt = seq
        gathered = None
        if not is_all_dense(ofmt) and program.op is None:
            ws = auto_workspace(stmt, out, ofmt, gather=nest)
            if ws is not None:
                # (the new one: a workspace gathering the whole output holds the others, changed)
                old = {x.temp.name for x in wheres(stmt)}
                w = next(x.temp for x in wheres(ws) if x.temp.workspace and x.temp.name not in old)
                over = ", ".join(i.name for i in w.indices)
                red = [i.name for i in output_order(stmt) if i not in w.indices]
                how = ("(Gustavson)" if not w.dense else f"(a dense array, swept once: reductions run both "
                       f"outside and inside the loop over {over})") if len(w.indices) == 1 or not red \
                    else f"(the loop over {red[0]} runs outside them)"
                steps.append(("precompute", stmt, ws, f"the sparse output cannot be appended in this loop "
                              f"order: the result is gathered in a workspace {w.name}[{over}] {how}"))
                stmt = ws
                gathered = f"{w.name}[{over}]" if len(w.indices) > 1 and red else None
        promoted = False
        from .derived import Fuse
        if any(isinstance(r, Fuse) and straddles(stmt, r) for r in relations):
            promote = False   # a fused loop binds both indices: nothing comes between them
        from .schedule_compose import LoopOrder
        if any(isinstance(r, LoopOrder) for r in relations):
            promote = False   # loops moved past each other update the output itself, in any order
        if parallel is not None and out.indices and parallel in loop_chain(stmt)[0][1:]:
            from .schedule import races_of
            if races_of(schedule) == "atomics":
                promote = False   # an inner parallel loop's threads update the output atomically, not one scalar
        if promote:
            p = scalar_promote(stmt)
            promoted = p is not stmt
            stmt = p
        if not relations:   # derived loops are bound where the schedule put them
            hoisted = hoist_invariants(stmt)
            if hoisted != stmt:
                steps.append(("hoist", stmt, hoisted, _HOISTED))
                stmt = hoisted
        if program.op is not None:
            updated = as_update(stmt, out.tensor, program.op)
            if updated is not stmt:
                steps.append(("update", stmt, updated, f"{program} starts from {out.tensor}'s values: what a "
                              f"temporary gathered is added to them, not assigned"))
                stmt = updated
        temps = {}
        for s in wheres(stmt):
            if s.temp.name in temps:   # (generated names are fresh: two of one name would share storage)
                raise StrategyError(f"two temporaries of the statement are named {s.temp.name}: {stmt}")
            d = expr_dtype(temp_value(s), lambda a: np.dtype(
                temps[a.tensor][1] if a.tensor in temps else formats[a.tensor].dtype))
            temps[s.temp.name] = (s.temp, reduce_dtype(s.temp.op, d).name if s.temp.op is not None else d.name)
            if s.temp.dense:
                key = str(s.temp.access())
                names[key], iters[key], paths[key] = s.temp.name, [], tuple(s.temp.indices)
            elif s.temp.workspace:
                key = str(s.temp.access())
                names[key] = s.temp.name
                n, sizes = len(s.temp.indices), tuple(extents[i] for i in s.temp.indices)
                iters[key] = [WorkspaceIterator(s.temp.name, mode=m, sub=m, nsub=n, extents=sizes if n > 1 else ())
                              for m in range(n)]
                paths[key] = tuple(s.temp.indices)
        setup = cls(program, formats, out, ofmt, stmt, graph, names, iters, paths, flexible, extents,
                    uses, temps, neutral, out_fill, out_dtype, rhs_fill, [], promoted, concrete, steps)
        for s in wheres(stmt):
            if not s.temp.workspace and s.temp.op is not None:
                red = Reduce(s.temp.op, tuple(foralls(s.producer)) or (Index("_"),), temp_value(s))
                setup.scalar_fills[s.temp.name] = derive(red, setup.fill_of)[1]
        setup.nonfinite_temps = _nonfinite_temps(stmt, setup)
        setup.assumed = {a.tensor: values.assumed(a.tensor) for a in inputs}
        # a temporary may hold NaN or inf where an operand's fill is one (-inf * 0 is NaN), though
        # every given tensor's stored values are finite: say what it may hold, so that 0 * w is not
        # folded to 0 where w is present (temporaries reading temporaries: until nothing changes)
        for _ in range(len(setup.nonfinite_temps)):
            for w in wheres(stmt):
                if w.temp.name in setup.nonfinite_temps:
                    body = expr_facts(temp_value(w), setup.fill_of)
                    values.assume(w.temp.name, body if w.temp.op is None else values.of_reduce(w.temp.op, body))
        setup.check_output()
        setup.gathered = gathered
        setup.scheduled = frozenset(scheduled)
        setup.parallel = parallel
        setup.relations = relations
        if schedule is not None and parallel is not None:
            from .schedule import races_of
            setup.races = races_of(schedule)
        if parallel is not None:
            from .derived import check_parallel_blocks, parallel_origin
            from .schedule import check_parallel
            setup.races = check_parallel(parallel_origin(parallel, relations), setup, parallel)
            if out.indices and setup.races == "none":   # (a scalar's threads reduce into their own copy)
                check_parallel_blocks(parallel, relations, [i.name for i in storage_path(out, ofmt)[0]], out.tensor)
        return setup

    def check_output(self):
        """A sparse output must be appended in order: its indices outermost, in storage order."""
        fmt = self.output_format
        if is_all_dense(fmt):
            return
        names = [lvl.name for lvl in fmt.levels]
        for k, (n, lvl) in enumerate(zip(names, fmt.levels)):
            if not placed_or_appended(lvl) and not assembles(tuple(fmt.levels), k):
                raise StrategyError(f"output {self.output.tensor}: the lattice strategy cannot assemble "
                                    f"level {k} ({n})")
            if lvl.located_by_coordinate and not assembles(tuple(fmt.levels), k):
                raise StrategyError(f"output {self.output.tensor}: a Dense level under a sparse level "
                                    f"is assembled only under a SparseList, SparsePoint, SparseRunList, "
                                    f"SparseInterval, SparseByteMap, SparseBand, SparseBlockList or SparseHash "
                                    f"level, with Dense levels alone below it, or under a SparseList, SparsePoint, "
                                    f"SparseRunList, SparseInterval or SparseHash level over a SparseList, a "
                                    f"SparseHash or an innermost SparseByteMap")
            if lvl.coordinate_list and k != len(names) - 1:
                raise StrategyError(f"output {self.output.tensor}: {n} must be the innermost level")
        if self.program.op is not None:
            raise StrategyError(f"output {self.output.tensor} is sparse: an update ({assign_spelling(self.program.op)}) "
                                f"needs a dense output")
        path = storage_path(self.output, fmt)[0]
        order = output_order(self.statement)
        if list(order[:len(path)]) != list(path):
            raise StrategyError(
                f"sparse output {self.output.tensor} is assembled in storage order "
                f"({', '.join(i.name for i in path)}) but the loops run "
                f"{', '.join(i.name for i in order)}; the reduction is not innermost, so it would "
                f"scatter into {self.output.tensor}. Use a dense output (or a workspace)")


_HOISTED = "a nested reduction that does not use a loop around it is computed once, outside that loop"


def _check_identities(program: Assign) -> None:
    """Refuse a reduction with nothing to start from: its operator has no identity, and no
    given output's values start it (an update such as ``y[i] <<maxu>>= A[i, j]`` starts from y).

    >>> from compiler import user_function
    >>> from compiler.notation import parse
    >>> maxu = user_function("maxu", max, "return x > y ? x : y;", idempotent=True, commutative=True,
    ...                      associative=True)
    >>> _check_identities(parse("y[i] = maxu[j](A[i, j])", {"maxu": maxu}))
    Traceback (most recent call last):
    ...
    compiler.errors.StrategyError: maxu[j](A[i, j]) reduces by maxu, which has no identity, so it has no value to start from; declare one (user_function(..., identity=...), -inf for a max)
    """
    from ..notation.ast import walk
    top = program.rhs if isinstance(program.rhs, Reduce) and program.op is not None \
        and program.rhs.op == program.op else None   # folded into the update: starts from the output
    for n in walk(program.rhs):
        if isinstance(n, Reduce) and n is not top and n.op.identity is NOVALUE:
            raise StrategyError(f"{n} reduces by {n.op.name}, which has no identity, so it has no value to start "
                                f"from; declare one (user_function(..., identity=...), -inf for a max)")


def _nonfinite_temps(stmt, setup) -> set:
    """The temporaries (scalars and workspaces) whose values may be NaN or infinite: their producer
    reads an operand whose fill or stored values (as the lowering assumes them) are not finite, a
    non-finite literal, or such a temporary (``w[j] = sum[k](B[j] * A[j, k])`` over a B of
    fill NaN)."""
    temps = list(wheres(stmt))
    out: set = set()

    def nonfinite(a) -> bool:
        if a.tensor in setup.temps:
            return a.tensor in out
        return a.tensor in setup.formats and (nonfinite_fill(setup.formats[a.tensor].fill)
                                              or not values.assumed(a.tensor).small)

    changed = True
    while changed:   # (a temporary may read another)
        changed = False
        for w in temps:
            value = temp_value(w)
            if w.temp.name not in out and (nonfinite_literal(value) or
                                           any(nonfinite(a) for a in expr_accesses(value))):
                out.add(w.temp.name)
                changed = True
    return out


def temp_value(w: Where):
    s = w.producer
    while isinstance(s, (Forall, Where)):
        s = s.body if isinstance(s, Forall) else s.consumer
    return s.rhs


def init_of(t, dtype):
    """A temporary's initial value as a ``dtype`` value. A reduction starts at its operator's
    identity for that dtype: ``min`` over int64 at INT64_MAX (not ``inf`` cast to an integer),
    ``max`` over bool at False."""
    if t.init is NOVALUE:
        return NOVALUE
    if t.op is not None and t.op.identity is not NOVALUE and same_value(np.asarray(t.init)[()],
                                                                       np.asarray(t.op.identity)[()]):
        typed = t.op.identity_for(np.dtype(dtype))
        if typed is not NOVALUE:
            return typed
    return typed_scalar(t.init, dtype)


def stmt_accesses(s) -> list[Access]:
    if isinstance(s, Assignment):
        return [a for a in expr_accesses(s.rhs)]
    if isinstance(s, Forall):
        return stmt_accesses(s.body)
    if isinstance(s, Where):
        return stmt_accesses(s.producer) + stmt_accesses(s.consumer)
    return []


__all__ = ["Setup", "init_of", "stmt_accesses"]
