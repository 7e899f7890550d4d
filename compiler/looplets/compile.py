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
['program', 'wrapperize', 'concordize', 'lifecycle', 'dimensionalize', 'promote', 'imperative', 'emit-c', 'compile']
"""

from __future__ import annotations

import numpy as np

from ..algebra import NOVALUE, lookup
from ..binding import array_name, input_args, input_params, output_tensor
from ..errors import ShapeError, StrategyError
from ..format import Format, parse_format
from ..imperative import ir
from ..imperative.ir import BinOp, Buffer, Const, Growable, OutScalar, Scalar, Select, UnOp, Var
from ..levels import Dense, Element, Pattern, SparseByteMap, SparseList
from ..tensor import Tensor
from ..trace import Artifact, Trace
from .errors import ProgramError
from .language import LoopProgram, loop_program
from .levels import Namer, SubFiber, TensorInfo, UnfurlContext
from .lowerers import Lowerer
from .promote import promote
from .passes import check_sparse_writes, concordize, dimensionalize, lifecycle, wrapperize
from .program import (Access, Assign, Block, Call, Declare, Index, Literal, Loop, TensorRef, postmap,
                      walk)


def _as_program(program):
    """A LoopProgram from a LoopProgram, a Python function, or index notation (text or Assign)."""
    if isinstance(program, LoopProgram):
        return program
    if callable(program) and hasattr(program, "__code__"):
        return loop_program(program)
    from ..notation import parse
    from ..notation.ast import Assign as NAssign
    if isinstance(program, str):
        program = parse(program)
    if isinstance(program, NAssign):
        return from_index_notation(program)
    raise TypeError(f"cannot lower {type(program).__name__} with the looplet strategy")


def from_index_notation(stmt) -> LoopProgram:
    """Index notation as a loop program: output indices outermost, then reduction indices.

    >>> from compiler.notation import parse
    >>> print(from_index_notation(parse("y[i] = A[i, j] * x[j]")))
    y .= 0
    for i = _
      for j = _
        y[i] += A[i, j] * x[j]
    """
    from ..notation import ast as N

    def conv(e):
        if isinstance(e, N.Access):
            return Access(TensorRef(e.tensor), tuple(Index(i.name) for i in e.indices))
        if isinstance(e, N.Literal):
            return Literal(e.value)
        if isinstance(e, N.Call):
            return Call(e.op, tuple(conv(a) for a in e.args))
        if isinstance(e, N.Reduce):
            raise StrategyError("the looplet strategy lowers index notation whose reductions are at the "
                                "top of the right-hand side (y[i] = sum[j](...)); split the statement")
        raise StrategyError(f"cannot convert {e!r}")

    rhs = stmt.rhs
    red_idx: tuple = ()
    op = stmt.op
    declare_init = None
    if isinstance(rhs, N.Reduce):
        red_idx = tuple(i.name for i in rhs.indices)
        if op is not None and op != rhs.op:
            raise StrategyError(f"{stmt}: the update and the reduction use different operators")
        if op is None:  # y[i] = sum_j(...): y starts at the reduction's identity
            ident = rhs.op.identity
            declare_init = Literal(ident if ident is not NOVALUE else 0)
        op = rhs.op
        rhs = rhs.body
    lhs = Access(TensorRef(stmt.lhs.tensor), tuple(Index(i.name) for i in stmt.lhs.indices), "update")
    body = Assign(lhs, op, conv(rhs))
    used = []
    for i in [*(x.name for x in stmt.lhs.indices), *red_idx]:
        if i not in used:
            used.append(i)
    for n in N.walk(stmt.rhs):
        if isinstance(n, N.Access):
            for i in n.indices:
                if i.name not in used:
                    used.append(i.name)
    for i in reversed(used):
        body = Loop(Index(i), None, body)
    stmts = [body]
    if declare_init is not None:
        stmts.insert(0, Declare(TensorRef(stmt.lhs.tensor), declare_init))
    names = []
    for n in N.walk(stmt):
        if isinstance(n, N.Access) and n.tensor not in names:
            names.append(n.tensor)
    return LoopProgram(stmt.lhs.tensor + "_kernel", tuple(names), Block(tuple(stmts)), str(stmt), 1)


def _written(body) -> set:
    return {n.tns.name for n in walk(body) if isinstance(n, Access) and n.mode == "update"
            and isinstance(n.tns, TensorRef)} | {n.tns.name for n in walk(body) if isinstance(n, Declare)}


def _walk_all(s):
    """walk() does not descend into Declare's tensor; include statements of all kinds."""
    yield from walk(s)


class LoopletKernel:
    """A compiled loop program: call it with the input tensors; it returns the output Tensor.

    ``c_source``, ``trace``, ``function`` (the imperative IR) and ``program`` (normalized).
    """

    def __init__(self, program, tensors, output, kernel, trace, sources, normalized, out_sizes):
        self.program = program
        self.tensors = tensors
        self.output = output
        self.kernel = kernel
        self.trace = trace
        self.sources = sources
        self.normalized = normalized
        self._out_sizes = out_sizes

    @property
    def c_source(self) -> str:
        return self.kernel.c_source

    @property
    def function(self):
        return self.kernel.function

    def arguments(self, **tensors) -> dict:
        """The keyword arguments of the C kernel for these input tensors (outputs allocated)."""
        args = {}
        sizes = {}
        for name, info in self.tensors.items():
            if info.role != "input":
                continue
            t = tensors.get(name)
            if t is None:
                raise TypeError(f"missing input tensor {name}")
            if not isinstance(t, Tensor):
                t = Tensor.from_numpy(np.asarray(t), info.format)
            if t.format != info.format:
                t = t.asformat(info.format)
            args.update(input_args(name, t))
            for m, s in enumerate(t.storage_shape):
                sizes[array_name(name, m, "size")] = int(s)
        out = self.tensors[self.output]
        shape = self.output_shape(sizes)
        args.update(_output_args(out, shape))
        return args, shape

    def output_shape(self, sizes: dict) -> tuple:
        """The storage shape of the output from the input sizes."""
        return tuple(int(_eval(e, sizes)) for e in self._out_sizes)

    def __call__(self, **tensors) -> Tensor:
        args, storage = self.arguments(**tensors)
        res = self.kernel(**args)
        info = self.tensors[self.output]
        arrays = {k: v for k, v in {**args, **res}.items() if isinstance(v, np.ndarray)}
        order = info.format.mode_order
        shape = [0] * len(order)
        for k, m in enumerate(order):
            shape[m] = storage[k]
        if not info.levels:
            return arrays[array_name(info.name, None, "vals")][0]
        return output_tensor(info.name, info.format, tuple(shape), arrays)


def _output_args(info: TensorInfo, storage_shape) -> dict:
    args = {array_name(info.name, m, "size"): int(s) for m, s in enumerate(storage_shape)}
    levels = info.levels
    dt = info.dtype
    count = 1
    for k, lvl in enumerate(levels):
        if isinstance(lvl, Dense):
            count *= int(storage_shape[info.storage_mode(k)])
        elif isinstance(lvl, SparseList):
            args[array_name(info.name, k, "pos")] = np.zeros(count + 1, dtype=lvl.index_dtype)
            break
    if all(isinstance(l, (Dense, SparseByteMap)) for l in levels) and any(isinstance(l, SparseByteMap) for l in levels):
        count = 1
        for k, lvl in enumerate(levels):
            size = int(storage_shape[info.storage_mode(k)])
            if isinstance(lvl, SparseByteMap):
                args[array_name(info.name, k, "pos")] = np.zeros(count + 1, dtype=lvl.index_dtype)
                args[array_name(info.name, k, "tbl")] = np.zeros(count * size, dtype=bool)
            count *= size
    if all(isinstance(l, (Dense, SparseByteMap)) for l in levels):
        args[array_name(info.name, None, "vals")] = np.full(count, info.fill, dtype=dt)
    return args


def _output_params(info: TensorInfo) -> tuple:
    params = [Scalar(array_name(info.name, m, "size"), "int64") for m in range(info.ndim)]
    levels = info.levels
    if all(isinstance(l, Dense) for l in levels):
        params.append(Buffer(array_name(info.name, None, "vals"), info.dtype, "inout"))
        return tuple(params)
    k = next(k for k, l in enumerate(levels) if not isinstance(l, Dense))
    lvl = levels[k]
    maps = [j for j, l in enumerate(levels) if isinstance(l, SparseByteMap)]
    if all(isinstance(l, (Dense, SparseByteMap)) for l in levels) and len(maps) == 1 and isinstance(info.leaf, Element):
        nnz = array_name(info.name, k, "nnz")
        return tuple(params) + (Buffer(array_name(info.name, k, "pos"), lvl.index_dtype.name, "inout"),
                                Buffer(array_name(info.name, k, "tbl"), "bool", "inout"),
                                OutScalar(nnz, "int64"),
                                Growable(array_name(info.name, k, "srt"), lvl.index_dtype.name, nnz),
                                Buffer(array_name(info.name, None, "vals"), info.dtype, "inout"))
    if not isinstance(lvl, SparseList) or k != len(levels) - 1:
        raise StrategyError(f"output {info.name}: the looplet strategy writes Dense levels over at most one "
                            f"innermost SparseList level, or Dense levels around one SparseByteMap level "
                            f"(with an Element leaf), not {info.format}")
    nnz = array_name(info.name, k, "nnz")
    params += [Buffer(array_name(info.name, k, "pos"), lvl.index_dtype.name, "inout"),
               OutScalar(nnz, "int64"),
               Growable(array_name(info.name, k, "idx"), lvl.index_dtype.name, nnz)]
    if isinstance(info.leaf, Element):
        params.append(Growable(array_name(info.name, None, "vals"), info.dtype, nnz))
    return tuple(params)


def _eval(e, env):
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, BinOp):
        a, b = _eval(e.left, env), _eval(e.right, env)
        return {"+": a + b, "-": a - b, "*": a * b, "<": a < b, ">": a > b}[e.op]
    if isinstance(e, Select):
        return _eval(e.then, env) if _eval(e.cond, env) else _eval(e.otherwise, env)
    if isinstance(e, UnOp) and e.op == "-":
        return -_eval(e.operand, env)
    raise ShapeError(f"cannot compute an output size from {e}")


def compile_program(program, *, trace: Trace | None = None, checked: bool = False,
                    name: str | None = None, output: str | None = None, **tensors) -> LoopletKernel:
    """Lower and compile ``program`` for ``tensors`` (Tensors for inputs; formats for outputs).

    The output is the tensor the program writes that was given as a format (or
    ``output=``). Errors in the program raise :class:`ProgramError` naming its line.
    """
    prog = _as_program(program)
    trace = trace if trace is not None else Trace()
    try:
        return _compile(prog, trace, checked, name, output, tensors)
    except ProgramError as e:
        if e.reason != str(e):  # already located
            raise
        raise prog.error(e) from None


def _compile(prog, trace, checked, name, output, tensors, lower_only=False):
    body = prog.body
    missing = [t for t in prog.tensors if t not in tensors]
    if missing:
        raise TypeError(f"{prog.name}: give a tensor or a format for {', '.join(missing)}")
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
        role = "output" if t in written else "input"
        infos[t] = TensorInfo(t, fmt, role, shapes.get(t))
    trace.record("program", after=str(prog), note=f"loop program {prog.name}")

    step = wrapperize(body, infos)
    trace.record("wrapperize", before=str(body), after=str(step), note="index expressions to offsets, "
                 "permissive indices and masks")
    body, step = step, concordize(step, infos)
    trace.record("concordize", before=str(body), after=str(step), note="accesses in storage order")
    body = step
    step = lifecycle(body, infos)
    trace.record("lifecycle", before=str(body), after=str(step), note="declare, freeze and thaw")
    body = step
    step, sources = dimensionalize(body, infos, shapes)
    trace.record("dimensionalize", before=str(body), after=str(step),
                 note="; ".join(f"{i.name}: {', '.join(s.what for s in srcs)}" for i, srcs in sources.items()))
    body = step
    normalized = body
    check_sparse_writes(body, infos)
    outs = [t for t in prog.tensors if infos[t].role == "output"]
    if output is None:
        if len(outs) != 1:
            raise ProgramError(f"the looplet strategy needs exactly one output tensor; this program writes "
                               f"{', '.join(outs) or 'nothing'}")
        output = outs[0]

    # output sizes: from the extent of the index of each storage mode of the output
    out_info = infos[output]
    out_sizes = []
    out_acc = next((n for n in walk(body) if isinstance(n, Access) and n.mode == "update"
                    and isinstance(n.tns, TensorRef) and n.tns.name == output), None)
    if out_info.ndim and out_acc is None:
        raise ProgramError(f"output {output} is never written")
    if out_info.ndim:
        ext_of = {}
        for n in walk(body):
            if isinstance(n, Loop):
                ext_of[n.idx] = n.ext
        for m, x in enumerate(out_acc.idxs):
            if shapes.get(output) is not None:
                out_sizes.append(Const(shapes[output][m], "int64"))
                continue
            if not isinstance(x, Index) or x not in ext_of:
                raise ProgramError(f"cannot size output {output}: storage mode {m} is indexed by {x}")
            ext = ext_of[x]
            from .extents import sub as xsub
            out_sizes.append(xsub(ext.stop, ext.start) if not (isinstance(ext.start, Const) and ext.start.value == 0)
                             else ext.stop)
    # the output's own sizes are scalar parameters: loops whose extent is the output's size use them
    ctx = UnfurlContext(Namer(_reserved(infos)))

    def bind(n):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef):
            return Access(infos[n.tns.name].root(n.mode), n.idxs, n.mode, line=n.line)
        return None
    body = postmap(body, bind)
    low = Lowerer(infos, ctx, trace)
    stmts = low.lower(body)
    params = []
    for t in prog.tensors:
        info = infos[t]
        if info.role == "input":
            params.extend(input_params(t, info.format))
        elif t == output:
            if not info.levels:
                params.append(Buffer(array_name(t, None, "vals"), info.dtype, "inout"))
                params.extend(Scalar(array_name(t, m, "size"), "int64") for m in range(info.ndim))
            else:
                params.extend(_output_params(info))
        else:
            raise ProgramError(f"temporary tensor {t} is not supported yet by the looplet strategy")
    promotable = {p.name: p.dtype for p in params if isinstance(p, Buffer) and p.intent == "inout"
                  and p.name.endswith("_val")}
    promoted = promote(stmts, promotable, ctx.fresh)
    if promoted != stmts:
        trace.record("promote", before="\n".join(str(s) for s in stmts),
                     after="\n".join(str(s) for s in promoted),
                     note="loop-invariant output slots kept in locals")
    stmts = promoted
    fn = ir.Function(name or _cname(prog.name), tuple(params), ir.Block(tuple(stmts)),
                     tuple(low.helpers.values()))
    trace.record("imperative", before=str(normalized), after=fn, note="the lowered kernel",
                 artifacts=[Artifact("ir", fn.name, str(fn))])
    if lower_only:
        return fn, infos, output, out_sizes, sources
    from ..backend import compile_function
    kernel = compile_function(fn, checked=checked, trace=trace)
    return LoopletKernel(prog, infos, output, kernel, trace, sources, normalized, out_sizes)


def _cname(name: str) -> str:
    import re
    n = re.sub(r"\W", "_", name)
    return n if n and not n[0].isdigit() else "k_" + n


def _reserved(infos) -> set:
    out = set()
    for t, info in infos.items():
        out.add(t)
        out.update(array_name(t, m, "size") for m in range(info.ndim))
        out.add(array_name(t, None, "vals"))
        for k, lvl in enumerate(info.levels):
            for kind in ("pos", "idx", "nnz", "ofs", "tbl", "srt", "lo", "hi", "right", "left", "ptr", "start"):
                out.add(array_name(t, k, kind))
    return out


def lower_for_runtime(program, formats: dict, trace, **options):
    """The strategy entry point for :mod:`compiler.lowering`: ``(program, formats, trace) -> Lowered``.

    ``program`` is index notation (an Assign) or a loop program; ``formats`` maps
    every tensor name to its Format. The output's shape is given as IR expressions
    of the input size parameters (``A0_size`` ...).
    """
    from ..lowering import Lowered  # the shared runtime
    prog = _as_program(program)
    formats = dict(formats)
    for t in prog.tensors:
        if t not in formats:  # the output of index notation may come without a format
            nd = next((len(n.idxs) for n in walk(prog.body) if isinstance(n, Access)
                       and isinstance(n.tns, TensorRef) and n.tns.name == t), 0)
            formats[t] = parse_format("dense", ndim=nd) if nd else Format(Element(0.0, dtype="float64"))
    try:
        fn, infos, output, out_sizes, sources = _compile(prog, trace, False, options.get("name"), options.get("output"),
                                                formats, lower_only=True)
    except ProgramError as e:
        if e.reason != str(e):
            raise
        raise prog.error(e) from None
    info = infos[output]
    if any(isinstance(l, SparseByteMap) for l in info.levels):
        raise StrategyError(f"output {output}: the shared runtime does not allocate SparseByteMap outputs yet; "
                            f"call compiler.looplets.compile_program for this kernel")
    shape = []
    by_param = {array_name(t, m, "size"): (t, i.format.mode_order[m]) for t, i in infos.items()
                if i.role == "input" for m in range(i.ndim)}
    storage = list(out_sizes)
    logical = [None] * len(storage)
    for k, m in enumerate(info.format.mode_order):
        logical[m] = storage[k]
    for e in logical:
        if isinstance(e, Const):
            shape.append(int(e.value))
        elif isinstance(e, Var) and e.name in by_param:
            shape.append(by_param[e.name])
        else:
            raise StrategyError(f"the looplet strategy cannot size output {output} from {e} for the runtime; "
                                f"pass the output tensor (with its shape)")
    extents = []
    for i, srcs in sources.items():
        uses = tuple((s.tensor, infos[s.tensor].format.mode_order[s.mode]) for s in srcs
                     if s.tensor is not None and s.delta == 0 and infos[s.tensor].role == "input")
        if len(uses) > 1:
            extents.append((i.name, uses))
    initial = "fill"
    if isinstance(program, NAssignType()) and program.op is not None:
        initial = "output"
    return Lowered(fn, output, info.format, tuple(shape), info.fill, tuple(extents), initial)


def NAssignType():
    from ..notation.ast import Assign as NAssign
    return NAssign


def register():
    """Register ``strategy="looplets"`` with :mod:`compiler.lowering` when it is available."""
    try:
        from ..lowering import register_strategy
    except ImportError:
        return False
    register_strategy("looplets", lower_for_runtime)
    return True
