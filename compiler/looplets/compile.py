"""From a loop program (or index notation) and tensors to a native kernel, with a trace.

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.looplets.language import loop_program
>>> @loop_program
... def spmv(y, A, x):
...     for i in _:
...         for j in _:
...             y[i] += A[i, j] * x[j]
>>> A = Tensor.from_numpy(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]), "csr")
>>> x = Tensor.from_numpy(np.array([1.0, 2.0, 3.0]), "dense")
>>> k = compile_program(spmv, y="dense", A=A, x=x)
>>> k(A=A, x=x).to_numpy()
array([ 4., 10.])
>>> [s for s in k.trace.stages() if not s.startswith(("lower:", "simplify", "unfurl"))]
['program', 'wrapperize', 'concordize', 'lifecycle', 'dimensionalize', 'cleanup', 'copies', 'promote', 'int-facts', 'imperative', 'value-facts', 'emit-c', 'compile']
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..algebra import NOVALUE, helper_impl
from ..binding import array_name, input_params
from ..errors import ShapeError, StrategyError, UsageError
from ..format import Format, parse_format
from ..imperative import ir
from ..imperative.blockcopy import block_copy
from ..imperative.counted_loops import counted_loops
from ..imperative.rowspans import row_spans
from ..imperative.cleanup import cleanup
from ..imperative.copies import drop_copies
from ..imperative.samevalues import read_only, same_values
from ..imperative.branchfree import branch_free_appends
from ..imperative.deadstores import drop_dead_stores
from ..imperative.declarations import DECLARED_WHERE_SET, declare_where_set
from ..imperative.ir_dot import ir_artifact
from ..imperative.ir import BinOp, Buffer, Const, Growable, Scalar, Select, Var
from ..imperative.traverse import var_names
from ..imperative.vectorize import vectorize
from ..outputs import Outputs
from ..levels import Element
from ..stand_in import output_conversion_note
from ..tensor import Tensor
from ..trace import Later, Trace
from .bounds import assuming, concat_part_sizes, input_facts, shape_equal_sizes
from .errors import ProgramError
from .language import LoopProgram, install_compiler, loop_program
from .coordinates import mark_computed
from .fibers import Namer, TensorInfo, UnfurlContext
from .gathers import gathered, gathered_in
from .looplet_provenance import MAX_LOOPLETS, printed_step
from .lowerers import Lowerer
from .notation_program import note_facts, notation_program
from .residual import residual_program
from .write_order import written_in_order
from .written_extents import INSIDE, allocate_temporaries, several_writes, write_bounds, written_sizes
from .kernel_names import c_name, is_input_size, reserved_names
from .int_facts_step import record_int_facts
from .statement_trees import statement_artifact, statement_trees
from .promote import promote
from .raveled import RaveledFiber
from .flat_reductions import FlatRaveled, ravel_reductions
from .stepped import StridedFiber
from .scalars import check_scalars
from .schedule import LOOPLETS_COMMAND_KINDS, LOOPLETS_COMMANDS, privatize_one, privatizations
from ..capabilities import program_kind
from .appends import check_sparse_writes
from .overwrites import fill_drops, mark_overwrites, overwriting
from .output_build import building_output
from .output_order import choose_output_order, loops_of
from .scatter import scatter_note, scatter_program, scatter_updates, scatters_output
from .assembly import nested_levels, output_params as nested_output_params
from .level_writers import marks_table, writer_of
from .outputs import check_outputs
from .passes import concordize, dimensionalize, lifecycle, wrapperize
from .flatten_passes import COPY_PASS
from .shape_extents import extent_ir
from ..output_extents import entry_tensors
from .shapes import shape_program
from .reserve import entry_bound, reserve_stmts
from .reset_outputs import reuse_refusals, runtime_resets
from ..notation.shape import has_shape_operators
from ..notation.shapedata import shape_data
from .program import Access, Block, Declare, Raveled, Strided, TensorRef, postmap, walk


def _as_program(program, dtype=None, formats=None, trace=None):
    """A LoopProgram from a LoopProgram, a Python function, or index notation (text or Assign;
    ``dtype``, its result's, when known; ``formats`` type its temporaries, and ``trace`` gets a
    ``hoist-reductions`` step when a reduction inside its right-hand side became one, or a
    ``residual`` step when the reduction adds into the output in a loop nest of its own)."""
    if isinstance(program, LoopProgram):
        return program
    if callable(program) and hasattr(program, "__code__"):
        return loop_program(program)
    from ..notation import parse
    from ..notation.ast import Assign as NAssign
    if isinstance(program, str):
        program = parse(program)
    if isinstance(program, NAssign):
        split = residual_program(program, dtype, formats)
        if split is not None:
            if trace is not None:
                trace.record("residual", before=program, after=str(split[0]), note=split[1])
            return split[0]
        prog, hoisted = notation_program(program, dtype, formats)
        note_facts(hoisted)
        if hoisted and trace is not None:
            trace.record("hoist-reductions", **printed_step(str(program), prog.body),
                         note="; ".join(f"{h}{': ' + h.why if h.why else ''}" for h in hoisted))
        return prog
    raise UsageError(f"cannot lower {type(program).__name__} with the looplet strategy")


def _written(body) -> set:
    return {n.tns.name for n in walk(body) if isinstance(n, Access) and n.mode == "update"
            and isinstance(n.tns, TensorRef)} | {n.tns.name for n in walk(body) if isinstance(n, Declare)}


def _walk_all(s):
    """walk() does not descend into Declare's tensor; include statements of all kinds."""
    yield from walk(s)


def _output_params(info: TensorInfo) -> tuple:
    """The kernel parameters of a written tensor: its sizes, then its values when its levels are
    Dense, else what its nested levels (:mod:`.assembly`) or its first level that is not Dense
    (:mod:`.level_writers`) take."""
    params = [Scalar(array_name(info.name, m, "size"), "int64") for m in range(info.ndim)]
    levels = info.levels
    k = next((k for k, lvl in enumerate(levels) if not lvl.located_by_coordinate), None)
    if k is None:
        params.append(Buffer(array_name(info.name, None, "vals"), info.dtype, "inout"))
        return tuple(params)
    nested = nested_levels(info)
    if nested is not None:   # (DCSR, CSF, SparseList(Dense): levels appended under an appended one)
        return nested_output_params(info, nested)
    maps = [j for j, lvl in enumerate(levels) if marks_table(lvl)]
    if len(maps) > 1:
        raise StrategyError(f"output {info.name}: the looplet strategy cannot write level {maps[1]} "
                            f"({levels[maps[1]].name}) under level {maps[0]} ({levels[maps[0]].name}) of {info.format}: "
                            f"it writes one byte-map level per output, with Dense levels around it")
    own = writer_of(info, k).params(info, k)
    if own is None:
        raise StrategyError(f"output {info.name}: the looplet strategy writes Dense levels over at most one "
                            f"innermost SparseList, SparsePoint, SparseBlockList, SparseBand, SparseCOO, "
                            f"RunList, SparseRunList or SparseInterval level, or Dense levels around one SparseByteMap "
                            f"level (with an Element leaf), not {info.format}")
    return tuple(params) + own


def compile_program(program, *, trace: Trace | None = None, checked: bool = False,
                    name: str | None = None, output: str | None = None, schedule=None, **tensors):
    """Lower and compile ``program`` for ``tensors`` (Tensors for inputs; formats for outputs).

    A thin convenience over ``compiler.lower(program, strategy="looplets", ...)``: it
    returns the shared runtime's :class:`~compiler.runtime.Kernel`. The output is the
    tensor the program writes (or ``output=``); ``schedule`` privatizes outputs
    (:mod:`compiler.looplets.schedule`). Errors in the program raise
    :class:`ProgramError` naming its line.
    """
    from ..lowering import lower
    # (index notation goes as it is: lowered for the tensors, its temporaries take their dtypes and facts)
    prog = program if isinstance(program, (str, NAssignType())) else _as_program(program)
    options = {k: v for k, v in (("name", name), ("output", output), ("schedule", schedule)) if v is not None}
    # concrete shapes: outputs take theirs, and conflicting extents are reported at the program's line
    # (lower() gives a loop program's outputs' alone, compiler.lowering.loop_shapes)
    shapes = {t: tuple(v.shape) for t, v in tensors.items() if isinstance(v, (Tensor, np.ndarray))}
    if shapes:
        options["shapes"] = tuple(sorted(shapes.items()))
    kernel = lower(prog, "looplets", checked=checked, trace=trace, options=options, **tensors)
    return ProgramKernel.of(kernel)


def _runtime_kernel():
    from ..runtime import Kernel
    return Kernel


class ProgramKernel(_runtime_kernel()):
    """The runtime's :class:`~compiler.runtime.Kernel`, except that a 0-d output comes back
    as its value (a numpy scalar) rather than a 0-d Tensor: ``float(k(A=A))`` (each 0-d one
    of a program's several outputs too)."""

    @classmethod
    def of(cls, kernel):
        out = cls.__new__(cls)
        out.__dict__.update(kernel.__dict__)  # share, do not mutate, the cached kernel
        return out

    def for_values(self, tensors):
        # (the variant lowered for other values is the runtime's Kernel: it keeps this one's calls)
        kernel = super().for_values(tensors)
        return kernel if kernel is self else ProgramKernel.of(kernel)

    def __call__(self, *given, **tensors):
        # (the runtime's __call__, its two steps called here: calling it would pack the tensors again)
        out = None if given else self._first(tensors)
        if out is None:
            out = self._call(given, tensors)
        # (the fast call path returns the runtime's 0-d Tensors: _run is not where it passes; whether
        # an output is 0-d is its format's, known once: a genexpr over the outputs cost 5% of a call)
        scalars = self.__dict__.get("_scalar_outputs")
        if scalars is None:
            scalars = self._scalar_outputs = any(o.output_format.ndim == 0
                                                 for o in self.lowered.outputs or (self.lowered,))
        if not scalars:
            return out
        if isinstance(out, Outputs):
            return out._make(t.to_numpy()[()] if t.__class__ is Tensor and t.ndim == 0 else t for t in out)
        return out.to_numpy()[()] if out.__class__ is Tensor and out.ndim == 0 else out

    def _run(self, runner, tensors):
        out = super()._run(runner, tensors)
        if isinstance(out, Outputs):   # (several outputs: each as one output comes back)
            return out._make(t.to_numpy()[()] if t.ndim == 0 else t for t in out)
        return out.to_numpy()[()] if out.ndim == 0 else out


def _checked_uses(srcs, infos):
    """The sources of a loop's extent that each call checks equal: the inputs read unshifted."""
    return [s for s in srcs if s.tensor is not None and s.delta == 0 and infos[s.tensor].role == "input"]


def _equal_sizes(sources, infos):
    """Per loop, the size parameters its call checks equal (see :func:`_checked_uses`)."""
    groups = [[infos[s.tensor].size(s.mode) for s in _checked_uses(srcs, infos)] for srcs in sources.values()]
    return [g for g in groups if len(g) > 1]


def _compile(prog, trace, checked, name, output, tensors, given_shapes=None, max_looplets=MAX_LOOPLETS,
             known_sizes=None, shaped=None, check_coordinates=True, privatized=(), scattered=None, counted=None,
             extents=None):
    body = prog.body
    missing = [t for t in prog.tensors if t not in tensors]
    if missing:
        raise UsageError(f"{prog.name}: give a tensor or a format for {', '.join(missing)}")
    written = _written(body)
    infos, shapes = {}, {}
    for t in prog.tensors:
        v = tensors[t]
        if isinstance(v, Tensor):
            fmt = v.format
            shapes[t] = v.storage_shape
        elif isinstance(v, np.ndarray):
            fmt = parse_format("dense", ndim=v.ndim, dtype=v.dtype)
            shapes[t] = v.shape
        elif isinstance(v, str):
            nd = next((len(n.idxs) for n in walk(body) if isinstance(n, Access) and isinstance(n.tns, TensorRef)
                       and n.tns.name == t), None)
            fmt = parse_format(v, ndim=nd)
        else:
            fmt = parse_format(v)
        if given_shapes and t in given_shapes:
            shapes[t] = tuple(given_shapes[t][m] for m in fmt.mode_order)
        role = "output" if t in written else "input"
        infos[t] = TensorInfo(t, fmt, role, shapes.get(t))
    for t, fmt in prog.temporaries:
        infos[t] = TensorInfo(t, parse_format(fmt), "temporary")
    # (a loop program's statements drawn as trees, whose nodes link the code they compute)
    trees = [statement_artifact(prog.body, prog.name)] if statement_trees(prog.body) else []
    trace.record("program", **printed_step(after=prog.body), note=f"loop program {prog.name}", artifacts=trees)

    step = wrapperize(body, infos)
    trace.record("wrapperize", **printed_step(body, step), note="index expressions to offsets, "
                 "permissive indices and masks")
    body, step = step, concordize(step, infos)
    trace.record("concordize", **printed_step(body, step), note="accesses in storage order")
    body, step = step, ravel_reductions(step, infos)
    if step is not body:
        trace.record("ravel", **printed_step(body, step), note="a reduction of every entry of a matrix: "
                     "one walk over its raveled entries, rows then columns, as they are stored")
    body = step
    step = lifecycle(body, infos)
    trace.record("lifecycle", **printed_step(body, step), note="declare, freeze and thaw")
    body = step
    step, sources = dimensionalize(body, infos, shapes)
    trace.record("dimensionalize", **printed_step(body, step),
                 note="; ".join(f"{i.name}: {', '.join(s.what for s in srcs)}" for i, srcs in sources.items()))
    body = step
    normalized = body
    unordered = check_sparse_writes(body, infos, prog.first_line, skip=(scattered,))
    step = mark_overwrites(body, infos, prog.first_line)
    if step is not body:
        trace.record("overwrites", **printed_step(body, step),
                     note="; ".join(f"line {s.line + prog.first_line - 1}: {why}" for s, why in overwriting(step))
                     + " (a fill written there replaces what was stored)")
    body = step
    drops_fills = fill_drops(body, infos, trace, prog.first_line)
    check_scalars(body, infos)
    outs = check_outputs(prog, body, infos, output)
    writes = {t: write_bounds(t, infos[t], body) for t in outs}
    if known_sizes is None:
        out_sizes = {t: written_sizes(t, infos[t], body, shapes, writes[t]) for t in outs}
    else:   # (from shape inference: the one output's logical sizes, in storage order)
        out_sizes = {t: [Const(shapes[t][m], "int64") if shapes.get(t) is not None else known_sizes[m]
                         for m in range(infos[t].ndim)] for t in outs}
    # (a temporary written by several statements, a workspace of a concatenation's parts ``w[k]`` then
    # ``w[l + size(A, 0)]``, reaches as far as its farthest write, not its first's loop)
    temp_sizes = {t: written_sizes(t, infos[t], body, shapes, several_writes(t, infos[t], body),
                                   read_sized=shaped is not None)
                  for t, _ in prog.temporaries}
    # the output's own sizes are scalar parameters: loops whose extent is the output's size use them
    ctx = UnfurlContext(Namer(reserved_names(infos)), input_facts(
        infos, _equal_sizes(sources, infos) if not shaped else shape_equal_sizes(shaped, infos)))
    for size in concat_part_sizes(shaped, infos) if shaped is not None else ():
        ctx.facts.bound(size, 0, None, "an extent of a concatenation's part: its parts' windows follow in order")
    for t in outs:   # (a computed coordinate of an output of fixed extent may be proved inside it)
        for m, size in enumerate(out_sizes[t]):
            if isinstance(size, Const):
                ctx.facts.value_range(array_name(t, m, "size"), size.value, size.value,
                                      f"{t}'s extent of storage mode {m}, fixed when the kernel is compiled",
                                      entries=False)

    raveled: dict = {}   # (one fiber per matrix read raveled, as per tensor read: its reads share one walk)

    def bind(n):
        if isinstance(n, Access) and isinstance(n.tns, Raveled):
            key = (n.tns.name, n.mode, isinstance(n.tns, FlatRaveled))
            if key not in raveled:
                raveled[key] = RaveledFiber(infos[n.tns.name].root(n.mode), flat=key[2])
            return Access(raveled[key], n.idxs, n.mode, line=n.line, source=n.tns.name)
        if isinstance(n, Access) and isinstance(n.tns, Strided):
            info, t = infos[n.tns.name], n.tns
            return Access(StridedFiber(info.root(n.mode), info.format.mode_order.index(t.mode), t.start, t.stop,
                                       t.step), n.idxs, n.mode, line=n.line, source=t.name)
        if isinstance(n, Access) and isinstance(n.tns, TensorRef):
            return Access(infos[n.tns.name].root(n.mode), n.idxs, n.mode, line=n.line, source=n.tns.name)
        return None
    if check_coordinates:   # (index notation's constant indices are checked against the shapes at each call)
        body = mark_computed(body, infos, prog.where)
    body = postmap(body, bind)
    ctx.reset = runtime_resets(normalized, {t: infos[t] for t in outs})
    ctx.in_order = written_in_order(normalized)
    if scattered is not None:   # (its loops lowered twice: count, then store; compiler.looplets.scatter)
        ctx.scattered[scattered] = None
    ctx.drops_fills = drops_fills
    refusals = reuse_refusals(normalized, {t: infos[t] for t in outs})
    low = Lowerer(infos, ctx, trace, max_looplets=max_looplets)
    with assuming(ctx.facts):
        stmts = low.lower(body)
    if ctx.in_range:
        trace.record("coordinate-ranges", after="\n".join(ctx.in_range),
                     note="computed coordinates every value of which is inside the extent: no check")
    counted = entry_bound(counted, {t: i.format for t, i in infos.items()}, ctx.fresh, extents) if counted else None
    hints = [h for t in outs for h in reserve_stmts(infos[t], counted[1])] if counted else []
    if hints:   # (a copy, or an elementwise operator of sparse operands: room for their entries, reserved once)
        stmts = list(counted[0]) + hints + list(stmts)
        trace.record("reserve", after="\n".join(str(h) for h in (*counted[0], *hints)),
                     note=f"room for at most {counted[1]} entries, one per stored entry of the operands, "
                          f"reserved up front instead of doubling")
    params = []
    for t in prog.tensors:
        info = infos[t]
        if info.role == "input":
            params.extend(input_params(t, info.format))
        elif t in outs:
            if not info.levels:
                params.append(Buffer(array_name(t, None, "vals"), info.dtype, "inout"))
                params.extend(Scalar(array_name(t, m, "size"), "int64") for m in range(info.ndim))
            else:
                params.extend(_output_params(info))
        else:
            raise ProgramError(f"temporary tensor {t} is not supported yet by the looplet strategy")
    buffer_dtypes = {p.name: p.dtype for p in params if isinstance(p, (Buffer, Growable))}
    promotable = {p.name: p.dtype for p in params if isinstance(p, Buffer) and p.intent == "inout"
                  and p.name.endswith("_val")}
    # the imperative passes, each a step in the trace when it changed something
    for stage, run, note in (
            ("cleanup", cleanup, "tests of known flags, locals nothing reads and stores overwritten at once dropped"),
            ("row-spans", lambda b: row_spans(b, buffer_dtypes, ctx.fresh, low.merged_walks),
             "a loop over consecutive rows whose appends copy their entries unchanged appends all of them as "
             "one run, then counts the rows from the input's positions (row by row when the filter drops one)"),
            ("block-copy", lambda b: block_copy(b, buffer_dtypes, ctx.fresh, low.merged_walks),
             "appends of a run of entries copied as a block when the filter drops none of them (not a tail "
             "left by a merge)"),
            ("same-values", lambda b: same_values(b, read_only(params)), "a local declared with what an earlier one still holds (a second search "
             "of a row for one column, its bounds loaded again) declared a copy of it"),
            ("copies", drop_copies, "locals that only copy another (neither changing while the copy lives) "
             "replaced by it: a walk's end that no search narrows, a phase's stop that is one fiber's last, a COO "
             "row's end"),
            ("dead-stores", drop_dead_stores, "assignments to locals that nothing reads after them dropped: a "
             "block copy's position past the run it copied"),
            ("branch-free", branch_free_appends, "an append whose test chose whether to store its coordinate and "
             "count it stores it always and counts the test's 0 or 1 (no branch to mispredict)"),
            # (the schedule's privatize: each a step of its own, with what it did)
            *(("privatize", lambda b, step=step: privatize_one(b, step, infos, outs, out_sizes, ctx.fresh),
               step) for step in privatized),
            ("promote", lambda b: promote(b, promotable, ctx.fresh), "loop-invariant output slots kept in locals"),
            ("counted-loops", lambda b: counted_loops(b, ctx.fresh, buffer_dtypes),
             "walks that only count their position up to a fixed end, whose loop would run in SIMD lanes, "
             "written as for loops"),
            ("vectorize", vectorize, "map loops and contiguous sum loops run in SIMD lanes"),
            ("declarations", declare_where_set, DECLARED_WHERE_SET)):
        after = run(stmts)
        if stage == "privatize":
            after, note = after
        if after != stmts:
            trace.record(stage, before=_printed(stmts), after=_printed(after), note=note)
        stmts = after
    record_int_facts(trace, ctx.facts, stmts)
    stmts = allocate_temporaries(stmts, infos, temp_sizes, ctx.fresh)
    # (an input's extent the body never reads, A1_size of an SpMV, is no parameter: each argument
    # costs every call its conversion, and C warns of a parameter nothing reads)
    read = var_names(tuple(stmts))   # (remembered per statement: the cleanup passes asked it before)
    params = [p for p in params if not (isinstance(p, Scalar) and p.name not in read
                                        and is_input_size(p.name, infos))]
    fn = ir.Function(name or c_name(prog.name), tuple(params), ir.Block(tuple(stmts)),
                     tuple(low.helpers.values()))
    trace.record("imperative", before=str(normalized), after=fn, note="the lowered kernel",
                 artifacts=[ir_artifact(fn)])
    # an output the program never assigns (no `y[...] = v` before its first write) starts from
    # its values when given (Finch thaws it), not from its fill; one it assigns first thing, outside
    # any loop or branch, is written whole by the kernel's declaration, before anything reads it
    starts = {}
    for t in outs:
        first = next((n for n in walk(normalized) if isinstance(n, Declare) and n.tns.name == t), None)
        starts[t] = ("thawed" if first is not None and first.implicit else
                     "reset" if t in ctx.was_reset else
                     "declared" if isinstance(normalized, Block) and any(s is first for s in normalized.stmts)
                     else "fill")
    return fn, infos, outs, out_sizes, sources, starts, refusals, writes, unordered, low.helper_ops



#: what ``lower(..., strategy="looplets", options=...)`` takes
_OPTIONS = frozenset({"name", "output", "shapes", "max_looplets", "schedule"})


def lower_for_runtime(program, formats: dict, trace, **options):
    """The strategy entry point for :mod:`compiler.lowering`: ``(program, formats, trace) -> Lowered``.

    ``program`` is index notation (an Assign) or a loop program; ``formats`` maps
    every tensor name to its Format. The output's shape is given as IR expressions
    of the input size parameters (``A0_size`` ...). ``max_looplets`` bounds the looplet
    lowerings (:data:`~compiler.looplets.looplet_provenance.MAX_LOOPLETS` by default); any other
    option but ``name`` (and :func:`compile_program`'s ``output`` and ``shapes``) is refused.
    """
    from ..lowering import OPTION_NAMES
    from ..imperative.ir import c_name_problem
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        # (an option the strategy would not act on is refused, never silently dropped; the
        # strategies' options that looplets lack are the lattice strategy's)
        lattice = [o for o in unknown if o in OPTION_NAMES]
        why = (f"; {', '.join(lattice)} {'is an option' if len(lattice) == 1 else 'are options'} of the lattice "
               f"strategy (strategy='lattice'): under looplets a loop program states its loops itself"
               if lattice else "")
        raise StrategyError(f"the looplets strategy has no option(s) {', '.join(unknown)}; it takes name=, "
                            f"max_looplets= and schedule= (privatize only; and, from compile_program, output= and "
                            f"shapes=){why}")
    privatized = privatizations(options.get("schedule"), program_kind(program))
    limit = options.get("max_looplets", MAX_LOOPLETS)
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
        raise StrategyError(f"max_looplets={limit!r}: give the most looplet lowerings the program may take, a "
                            f"positive integer (default {MAX_LOOPLETS})")
    problem = options.get("name") is not None and c_name_problem(options["name"])
    if problem:
        raise StrategyError(f"name={options['name']!r}: the kernel's name must be a C identifier: {problem}")
    result_dtype, implicit_fill = np.dtype("float64"), 0.0
    if isinstance(program, NAssignType()):
        from ..notation.dtypes import check_output_dtype
        result_dtype = check_output_dtype(program, formats)   # (a loop program's stores convert as C does)
        implicit_fill = np.zeros((), result_dtype).item()
        elementwise = _fill_of(program.rhs, formats) if program.op is None else None
        if elementwise is not None:   # (as the oracle's: the right side on the inputs' fills)
            implicit_fill = np.asarray(elementwise).astype(result_dtype).item()
        if program.op is not None and program.op.identity_for(result_dtype) is not NOVALUE:
            # an update of an output not given starts at the identity (y[i] min= ...: at +inf)
            implicit_fill = np.asarray(program.op.identity_for(result_dtype)).astype(result_dtype).item()
    shaped, transposed, copied = None, False, False
    if isinstance(program, NAssignType()) and has_shape_operators(program):
        prog, shaped, reads = shape_program(program, formats, result_dtype)
        trace.record("shape-operators", **printed_step(str(program), prog.body, shape_data(program)),
                     note=f"shape operators as wrappers: {shaped.text()}")
        for stage, note in reads:   # (how a collapse under a split or a slice is read: walked or gathered)
            trace.record(stage, **printed_step(after=prog.body), note=note)
        # (loops the planner ran out of the output's order for it to scatter: A_csc[:, ::2] into a CSR)
        transposed = any(stage == "transpose" for stage, _ in reads)
        # (its first pass copies the other operand into every entry: compiler.looplets.flatten_passes)
        copied = any(stage == COPY_PASS for stage, _ in reads)
        for t, why in gathered_in(prog, formats, program.lhs.tensor, discordant_only=True).items():
            # (the loops a shape operator became are not reordered: such a level is searched for each
            # coordinate they visit, where lower() given no strategy prefers the lattice's conversion)
            trace.record("gather", **printed_step(after=prog.body),
                         note=f"{why}: {t} located at each coordinate the loops visit")
    else:
        prog = _as_program(program, result_dtype if isinstance(program, NAssignType()) else None, formats, trace)
    formats = dict(formats)
    for t in prog.tensors:
        if t not in formats:  # the output of index notation may come without a format: dense, of the result's dtype
            nd = next((len(n.idxs) for n in walk(prog.body) if isinstance(n, Access)
                       and isinstance(n.tns, TensorRef) and n.tns.name == t), 0)
            formats[t] = parse_format("dense", ndim=nd, fill=implicit_fill, dtype=result_dtype.name) if nd else \
                Format(Element(implicit_fill, dtype=result_dtype.name))
    if isinstance(program, NAssignType()) and program.op is not None:
        out_fmt = formats[program.lhs.tensor]
        if not all(lvl.slot_per_coordinate for lvl in out_fmt.levels):
            # (a sparse output is assembled afresh from its fill: it would neither start from the
            # given tensor's entries nor from the operator's identity; a byte map's slots are there)
            from ..notation.ast import assign_spelling
            raise StrategyError(f"output {program.lhs.tensor} is {out_fmt.shorthand or out_fmt}: an update "
                                f"({assign_spelling(program.op)}) needs a dense output under looplets, which "
                                f"assemble a sparse output afresh")
    temporaries = {t for t, _ in prog.temporaries}
    written = sorted(t for t in _written(prog.body) if t not in temporaries)
    out_name = options.get("output") or (written[0] if len(written) == 1 else None)
    built, scattered = None, None
    if out_name in formats:
        # (an output level the looplets do not assemble is built as a SparseList, converted after each call)
        asked, stood = formats[out_name], building_output(formats[out_name], out_name)
        if stood is not None:
            formats[out_name] = stood[0]
        # (the loops a shape operator became are its meaning: they are not reordered, the output converted)
        fixed = not isinstance(program, NAssignType()) or shaped is not None
        try:
            choice = choose_output_order(prog, out_name, formats, fixed=fixed, asked_format=asked)
        except ProgramError as e:   # (a format of another order than the output's indices)
            raise prog.error(e) from None
        scattering = None
        notation = isinstance(program, NAssignType())
        if stood is None and (shaped is None or transposed) and (not notation or program.op is None) and \
                not privatized and scatters_output(prog, out_name, asked, alone=not notation):
            scattering = scatter_program(prog, choice, out_name, asked, formats, fixed=fixed)
        if scattering is not None:
            # (assembled in its own order by a two-phase scatter: no conversion after the call)
            trace.record("output-order", **printed_step(prog.body, scattering.body),
                         note=scatter_note(out_name, asked, [lp.idx.name for lp in loops_of(scattering.body)],
                                           scatter_updates(scattering, out_name)))
            prog, built, scattered = scattering, None, out_name
        else:
            if choice.note:
                trace.record("output-order", **printed_step(prog.body, choice.program.body), note=choice.note)
            prog, built = choice.program, choice.built
        if built is not None:   # (the runtime converts the output it returns to the format asked)
            formats[out_name] = built
        if stood is not None:
            built = formats[out_name]
            trace.record("convert", **printed_step(prog.body, prog.body),
                         note=output_conversion_note(out_name, asked, built, stood[1]))
    shaped_sizes = None
    if shaped is not None and shaped.output:
        order = formats[program.lhs.tensor].mode_order
        shaped_sizes = [extent_ir(shaped.output[m], formats) for m in order]
    try:
        fn, infos, outs, out_sizes, sources, starts, refusals, writes, unordered, helper_ops = _compile(
            prog, trace, False, options.get("name"), options.get("output"), formats,
            dict(options.get("shapes") or ()), int(limit), shaped_sizes,
            program if shaped is not None else None, not isinstance(program, NAssignType()), privatized,
            scattered, program if isinstance(program, NAssignType()) and scattered is None else None,
            shaped.extents if shaped is not None else None)
    except ProgramError as e:
        if shaped is not None:
            # (the user wrote index notation: say what its shape operators became, not a line of ours)
            loops = "\n".join("    " + line for line in str(prog.body).splitlines())
            raise StrategyError(f"{program}: {e.reason}; in the loops its shape operators become:\n{loops}") from None
        if e.reason != str(e):
            raise
        raise prog.error(e) from None
    given_shapes = dict(options.get("shapes") or ())
    by_param = {array_name(t, m, "size"): (t, i.format.mode_order[m]) for t, i in infos.items()
                if i.role in ("input", "output") for m in range(i.ndim)}
    for t in outs:
        if given_shapes.get(t) is not None:   # (a loop sized by an output given to compile_program: its extent then)
            by_param.update((array_name(t, m, "size"), int(given_shapes[t][lm]))
                            for m, lm in enumerate(infos[t].format.mode_order))
    extents = []
    # (under shape operators a loop's index reads operands of other extents: a concat's first part
    # reads x[l] as x[j], |j| < |l|; shape inference checks each call's extents instead)
    for i, srcs in (sources.items() if shaped is None else ()):
        uses = tuple((s.tensor, infos[s.tensor].format.mode_order[s.mode]) for s in _checked_uses(srcs, infos))
        if len(uses) > 1:
            extents.append((i.name, uses))
    helpers = tuple((h, helper_impl(op, h)) for h, op in helper_ops.items())
    # (shape operators give the output's shape from shape inference; a kernel built in another
    # order than asked returns its output converted)
    lowered = [_lowered_output(program, prog, fn, t, infos[t], out_sizes[t], by_param, tuple(extents), helpers,
                               "copied" if copied and t == program.lhs.tensor else starts[t], writes[t],
                               unordered.get(t, ""), given_shapes,
                               shaped.output if shaped is not None and shaped.output else None,
                               built is not None and t == out_name, refusals.get(t, ""))
               for t in outs]
    if shaped is not None and shaped.agree:   # (two flattens of one index walked as one: each call checks)
        lowered = [replace(low, agree=shaped.agree) for low in lowered]
    if len(lowered) == 1:
        return lowered[0]
    # several outputs: the first describes itself and carries them all (the runtime returns them in order)
    return replace(lowered[0], outputs=tuple(lowered))


def _lowered_output(program, prog, fn, output, info, out_sizes, by_param, extents, helpers, begins, writes,
                    unordered, given_shapes, known_shape=None, converted=False, refused=""):
    """What the runtime needs to allocate, fill and build one output of the kernel (``begins``: whether
    the program thaws it, declares it first thing, copies an operand into all of it first, or neither;
    ``known_shape``: its shape from shape inference; ``converted``: built in another order, converted by
    the runtime; ``refused``: why a call may not give it as ``reuse(...)``, for a byte map declared first
    thing the runtime cannot start clear)."""
    from ..runtime import Lowered  # the shared runtime
    given = given_shapes.get(output)
    storage = list(out_sizes)
    logical = [None] * len(storage)
    for k, m in enumerate(info.format.mode_order):
        logical[m] = storage[k]
    shape = tuple(_extent_entry(e, by_param, output) for e in logical) if known_shape is None else known_shape
    initial, start = "fill", info.fill
    if isinstance(program, NAssignType()) and program.op is not None:
        initial = "output"
        ident = program.op.identity_for(np.dtype(info.dtype))
        if ident is not NOVALUE and all(lvl.slot_per_coordinate for lvl in info.levels):
            # a fresh output of an update starts at the identity, whatever its format's fill (as the oracle's)
            start = np.asarray(ident).astype(info.dtype).item()
    elif not isinstance(program, NAssignType()) and begins == "thawed":
        # (a dense output, or byte map, given at the call starts from its values; a sparse
        # one is assembled afresh, so the runtime refuses one given with entries)
        initial = "output" if all(lvl.slot_per_coordinate for lvl in info.levels) else "assembled"
    elif begins == "copied" and info.levels and isinstance(info.leaf, Element) and \
            all(lvl.located_by_coordinate for lvl in info.levels):
        # (its first pass copies the other operand into every entry, in order: filling the buffer
        # first wrote it twice, a write over the whole output before scipy's copy-then-scatter's one)
        initial = "none"
    elif begins == "reset":
        # (declared first thing to its fill: the runtime starts it clear, its values at the fill;
        # a call may give an earlier result to reuse, whose entries alone it clears)
        initial = "fill"
    elif not isinstance(program, NAssignType()) and begins == "declared" and info.levels and \
            isinstance(info.leaf, Element) and all(lvl.slot_per_coordinate for lvl in info.levels):
        # (its declaration stores every value, as BFS's `_F[...] = -1` does each round: filling the
        # buffer first, as for any other output, wrote it twice)
        initial = "none"
    fmt = info.format.plain() if hasattr(info.format, "plain") else info.format  # a Scalar kind: its storage
    if fmt.dtype is None:   # (a level spec given without one: the result holds the kernel's values)
        fmt = Format(_with_leaf_dtype(fmt.root, info.dtype), fmt.mode_order)
    bounds = ()
    if writes and not isinstance(program, NAssignType()):
        # each write's reach, checked against the output's shape before the kernel runs
        bounds = tuple((info.format.mode_order[m], _extent_entry(stop, by_param, output), prog.where(line))
                       for m, stop, line in writes if stop is not INSIDE and stop is not None)
        if given is not None and all(t in given_shapes for _, stop, _ in bounds for t in entry_tensors(stop)):
            # (else each call checks them: lower() gives the output's shape alone, not the inputs')
            _check_writes(output, tuple(given), bounds, given_shapes)
    return Lowered(fn, output, fmt, tuple(shape), start, extents, initial, helpers,
                   output_writes=bounds, validate_output=unordered, reset=begins == "reset",
                   reuse_refused=refused, conversions=((output, fmt),) if converted else ())


def _with_leaf_dtype(node, dtype):
    """The level spec ``node`` with its leaf of ``dtype``: ``SparseList(Element(0.0))`` to
    ``SparseList(Element(0.0, dtype='float64'))``."""
    child = getattr(node, "child", None)
    if child is None:
        return replace(node, dtype=np.dtype(dtype).name)
    return replace(node, child=_with_leaf_dtype(child, dtype))


def _check_writes(output, shape, bounds, shapes):
    """Refuse, when lowering, writes past a given output's shape that the tensors' shapes show."""
    from types import SimpleNamespace
    from ..output_extents import check_output_writes
    try:
        check_output_writes(output, shape, bounds, {t: SimpleNamespace(shape=v) for t, v in shapes.items()})
    except ShapeError as e:
        raise ProgramError(str(e)) from None


def _fill_of(e, formats):
    """The value of an index expression without reductions where every input holds its fill
    (a fresh dense output's fill, as the oracle's), or None (a reduction's depends on its extent).

    >>> from compiler.notation import parse
    >>> _fill_of(parse("y[i] = a[i] * 2 + 1").rhs, {"a": parse_format("sparse", fill=3.0)})
    7.0
    """
    from ..reference_fill import expression_fill
    try:
        # (no extents: a reduction raises KeyError)
        got = expression_fill(e, {name: fmt.fill for name, fmt in formats.items()}, {})
    except Exception:   # (that, or a user function's Python refusing these values: no fill then)
        return None
    return None if got is NOVALUE else np.asarray(got)[()].item()


def _extent_entry(e, by_param, output):
    """An IR size expression of input sizes as a runtime extent entry (see ``extent_value``)."""
    if isinstance(e, Const):
        return int(e.value)
    if isinstance(e, Var) and e.name in by_param:
        return by_param[e.name]
    if isinstance(e, BinOp) and e.op in ("+", "*"):   # (a ravel's extent is a product of sizes)
        return (e.op, _extent_entry(e.left, by_param, output), _extent_entry(e.right, by_param, output))
    if isinstance(e, BinOp) and e.op == "-" and isinstance(e.right, Const):
        return ("+", _extent_entry(e.left, by_param, output), -int(e.right.value))
    if isinstance(e, Select) and isinstance(e.cond, BinOp) and e.cond.op in ("<", ">") \
            and e.cond.left == e.then and e.cond.right == e.otherwise:
        op = "min" if e.cond.op == "<" else "max"
        return (op, _extent_entry(e.then, by_param, output), _extent_entry(e.otherwise, by_param, output))
    raise StrategyError(f"the looplet strategy cannot size output {output} from {e}; "
                        f"pass the output tensor (with its shape)")


def NAssignType():
    from ..notation.ast import Assign as NAssign
    return NAssign


def register():
    """Register ``strategy="looplets"`` with :mod:`compiler.lowering` when it is available."""
    try:
        from ..lowering import register_strategy
    except ImportError:
        return False
    # (a ProgramError of index notation: an output or an extent looplets cannot build, their refusal)
    register_strategy("looplets", lower_for_runtime, read_function=loop_program, gathers=gathered,
                      refusals=(ProgramError,))
    from ..capabilities import Capabilities, register_capabilities
    from .levels import UNFURL, UPDATABLE

    # read from the unfurl registries at query time; its schedule applies privatize only (a loop
    # program states its loops: the lattice's commands have nothing to reorder), to loop programs; a
    # fiber's reads at one bound coordinate share one lookup (lowerers.Lowerer's concordization)
    register_capabilities("looplets", lambda: Capabilities(
        "looplets", tuple(c.name for c in UNFURL), tuple(c.name for c in UNFURL if c in UPDATABLE),
        LOOPLETS_COMMANDS, LOOPLETS_COMMAND_KINDS, shares_constant_reads=True, shares_constant_fibers=True))
    return True


def _printed(stmts) -> Later:
    """The statements' text, printed when the trace is read."""
    stmts = tuple(stmts)
    return Later(lambda: "\n".join(str(s) for s in stmts))


install_compiler(compile_program)
