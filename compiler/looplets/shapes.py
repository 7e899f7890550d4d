"""Index notation with shape operators as a loop program, where a wrapper expresses each operator.

The looplet strategy has no sequence combinators; it rewrites each operator into the index
expressions its wrappers lower (:mod:`compiler.looplets.wrappers`):

=========================================  ====================================================
operator                                   loop program
=========================================  ====================================================
``collapse(A[i, j], (i, j) -> k)``         the loop over ``k`` becomes loops over ``i`` then
                                           ``j``; ``k`` reads and writes ``j + i * |j|``
                                           (an offset by the outer index)
``split(b[k], k -> (i, j))``               ``b[j + i * |j|]``: an offset of ``j`` by ``i``
``concat((B[i, j], C[i, k]), (j, k)``     the loop over ``l`` becomes one loop per operand
``-> l)``                                  (BURRITO's fissioned loops): ``for j: D[i, j] =
                                           B[i, j]``, then ``for k: D[i, k + |j|] = C[i, k]``
``slice(A[j], j -> k, (s, e, 1))``         ``A[window(k, s, e)]``
``slice(A[j], j -> k, (s, e, r))``         ``A[t + (s + r * k)]`` under a loop ``t`` of one
                                           step: an offset by ``k`` (``r < 0`` too)
``broadcast(l, x[i])``                     ``x[i]`` inside the loop over ``l``
``A[2, j]``                                ``A[2, j]``
``sum[m](B[k, m])`` inside the right side  a scalar temporary computed just before the
                                           statement: ``t .= 0; for m: t[] += B[k, m]`` (before
                                           every loop when it has no free index)
=========================================  ====================================================

What no wrapper covers is refused with a :class:`~compiler.errors.StrategyError` saying why
(a split whose loops are not nested as the operator needs, a collapse or strided slice that
would walk a sparse operand against its storage order, a collapse, concat or strided slice of an
index another operator computes, a shape operator inside a reduction that is not at the top).

>>> from compiler.notation import parse
>>> from compiler.format import parse_format
>>> prog, _ = shape_program(parse("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]"),
...                         {"A": parse_format("csr"), "b": parse_format("sparse")})
>>> print(prog.body)
for i = 0:A0_size
  for j = 0:A1_size
    c[j + i * size(A, 1)] = A[i, j] + b[j + i * size(A, 1)]
"""

from __future__ import annotations

import numpy as np

from .. import values
from ..algebra import NOVALUE, lookup
from ..binding import array_name
from ..errors import StrategyError
from ..imperative.ir import BinOp, Const, Var
from ..notation import ast as N
from ..lattice.algebra import expr_facts
from ..shortcircuit import early_exit
from ..notation.dtypes import expr_dtype, reduce_dtype
from ..notation.infer import infer_shapes
from ..notation.shape import Broadcast, Collapse, Concat, Slice, Split
from . import extents as X
from .language import LoopProgram
from .program import Access, Assign, Block, Call, Declare, Extent, Index, Literal, Loop, Size, TensorRef
from .scalars import Scalar, ShortCircuitScalar

_ADD, _MUL = lookup("+"), lookup("*")


def extent_ir(entry, formats):
    """A runtime extent entry as an IR expression of the kernel's size parameters."""
    if isinstance(entry, int):
        return Const(entry, "int64")
    if isinstance(entry[0], str) and entry[0] not in ("+", "*", "//"):
        t, m = entry
        return Var(array_name(t, formats[t].mode_order.index(m), "size"))
    op, *args = entry
    args = [extent_ir(a, formats) for a in args]
    if op == "+":
        out = args[0]
        for a in args[1:]:
            out = X.add(out, a)
        return out
    return BinOp("*" if op == "*" else "/", args[0], args[1])


def _expr(entry):
    """A runtime extent entry as a program expression (sizes resolved by wrapperization)."""
    if isinstance(entry, int):
        return Literal(entry)
    if isinstance(entry[0], str) and entry[0] not in ("+", "*", "//"):
        return Size(None, "int64", entry[0], entry[1])
    op, *args = entry
    if op == "//":
        raise StrategyError("the looplet strategy indexes with sums and products of extents, and a split given only "
                            "its major extent makes the minor one a quotient: give the minor extent too, as in "
                            "k -> (i, j:n)")
    out = _expr(args[0])
    for a in args[1:]:
        out = Call(_ADD if op == "+" else _MUL, (out, _expr(a)))
    return out


def _plus(a, b):
    return Call(_ADD, (a, b))


def _times(a, b):
    return Call(_MUL, (a, b))


def check_collapse_concordant(e: Collapse, formats: dict) -> None:
    """Refuse a collapse whose loops (the major index outside the minor one) would walk an operand
    stored minor index first in a level that cannot be located: each coordinate would be searched
    for, not walked (a column-major collapse of a CSR matrix)."""
    i, j = e.indices
    for acc in N.accesses(e.operand):
        fmt = formats.get(acc.tensor)
        if fmt is None or i not in acc.indices or j not in acc.indices:
            continue
        order = fmt.mode_order
        if order.index(acc.indices.index(j)) < order.index(acc.indices.index(i)) and \
                not all(lvl.locatable for lvl in fmt.levels):
            raise StrategyError(
                f"{e}: {acc.tensor} stores {j} before {i}, but the collapse walks {i} outside {j} (the first listed "
                f"index is the major one): a discordant walk of its sparse levels; store {acc.tensor} with {i} "
                f"first, or collapse ({j}, {i}) -> {e.result}")


def check_stride_concordant(e: Slice, env: dict, depth: dict, formats: dict) -> None:
    """Refuse a strided slice whose operand stores a mode looped inside the slice's loop before the
    sliced one: its one-step loop follows the slice's, so that tensor would be walked out of order."""
    k = depth[e.result.name]
    for acc in N.accesses(e.operand):
        if e.index not in acc.indices or acc.tensor not in formats:
            continue
        order = formats[acc.tensor].mode_order
        at = order.index(acc.indices.index(e.index))
        for q in order[:at]:
            x = acc.indices[q]
            loop = env.get(x) if isinstance(x, N.Index) else None
            if isinstance(loop, Index) and depth.get(loop.name, -1) > k:
                raise StrategyError(
                    f"{e}: {acc} is stored with {x} before {e.index}, and the loop over {x} is inside the one over "
                    f"{e.result}: the strided walk of {e.index} would be discordant; store {acc.tensor} with "
                    f"{e.index} first (e.g. csr for rows), or slice with step 1")


def shape_program(stmt: N.Assign, formats: dict, dtype=None):
    """``(LoopProgram, ShapeInfo)`` for ``stmt`` (index notation with shape operators) and the
    formats of its tensors; the extents are the tensors' sizes (the kernel serves any shape)."""
    shapes = {t: tuple((t, m) for m in range(len(f.mode_order))) for t, f in formats.items()
              if t != stmt.lhs.tensor}
    info = infer_shapes(stmt, shapes)
    ext = info.extents
    rhs, red, op, init = stmt.rhs, (), stmt.op, None
    if isinstance(rhs, N.Reduce):
        red = tuple(rhs.indices)
        if op is not None and op != rhs.op:
            raise StrategyError(f"{stmt}: the update and the reduction use different operators")
        if op is None:
            ident = rhs.op.identity if dtype is None else rhs.op.identity_for(np.dtype(dtype))
            init = Literal(ident if ident is not NOVALUE else 0)
        op, rhs = rhs.op, rhs.body

    # -- the loops: output indices, then reduced ones; collapses and strided slices reshape them ------
    loops = [i for i in dict.fromkeys(tuple(stmt.lhs.indices) + red)]
    # (an operator's consumed indices are bound inside it: a collapse's loops may take their names)
    taken = {i.name for i in loops} | {i.name for n in N.walk(stmt) if hasattr(n, "produced") for i in n.produced()}

    def fresh(base: str) -> str:
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}{k}"
        taken.add(name)
        return name

    env: dict = {i: Index(i.name) for i in loops}
    extent_of: dict = {i.name: ext[i] for i in loops}
    collapsed: dict = {}   # k -> (i', j', |i|, |j|)
    steps: dict = {}       # k -> the one-step loop's name
    fissions: dict = {}    # l -> [(loop name, extent)] of each operand's part
    for n in N.walk(rhs):
        if isinstance(n, Collapse) and n.result in env:
            (i, j), k = n.indices, n.result
            if k in collapsed:
                if collapsed[k][2:] != (ext[i], ext[j]):
                    raise StrategyError(f"{n}: {k} is collapsed twice from indices of different extents; the "
                                        f"looplet strategy walks one pair of loops for it")
                continue
            ii, jj = fresh(i.name), fresh(j.name)
            collapsed[k] = (ii, jj, ext[i], ext[j])
            at = loops.index(k)
            loops[at:at + 1] = [N.Index(ii), N.Index(jj)]
            extent_of.update({ii: ext[i], jj: ext[j]})
            env[k] = _plus(Index(jj), _times(Index(ii), _expr(ext[j])))
        elif isinstance(n, Concat) and n.result in env and n.result in loops:
            sizes = tuple(ext[j] for j in n.indices)
            if n.result in fissions:
                if tuple(x for _, x in fissions[n.result]) != sizes:
                    raise StrategyError(f"{n}: {n.result} concatenates parts of other extents elsewhere; the "
                                        f"looplet strategy splits its loop one way")
                continue
            fissions[n.result] = [(fresh(j.name), x) for j, x in zip(n.indices, sizes)]
        elif isinstance(n, Slice) and n.step != 1 and n.result in env and n.result not in steps:
            t = fresh("t")
            steps[n.result] = t
            at = next(k for k, x in enumerate(loops) if x == n.result)
            loops.insert(at + 1, N.Index(t))
            extent_of[t] = 1
    for k, t in steps.items():
        # (a write inside the one-step loop is at t + k, so a sparse output still sees its loops in order)
        env[k] = _plus(Index(t), Index(k.name))
    depth = {i.name: k for k, i in enumerate(loops)}
    depth.update({name: depth[l.name] for l, parts in fissions.items() for name, _ in parts})

    def loop_index(x, node, role):
        if not (isinstance(x, Index) and x.name in depth):
            raise StrategyError(f"{node}: the looplet strategy lowers it where {role} is a loop of the kernel; "
                                f"here it is computed by another shape operator ({x}); compute the inner "
                                f"operator in a statement of its own first")
        return x

    def conv(e, env, top, choice):
        if isinstance(e, N.Access):
            idxs = tuple(Literal(i) if isinstance(i, int) else env[i] for i in e.indices)
            return Access(TensorRef(e.tensor), idxs)
        if isinstance(e, N.Literal):
            return Literal(e.value)
        if isinstance(e, N.Call):
            return Call(e.op, tuple(conv(a, env, top, choice) for a in e.args))
        if isinstance(e, N.Reduce):
            return reduce_into_scalar(e, env, top, choice)
        if isinstance(e, Collapse):
            (i, j), k = e.indices, e.result
            if k not in collapsed or env.get(k) != top.get(k):
                loop_index(env.get(k), e, f"the collapsed index {k}")
                # (a loop, but one another operator made: a concat's part of the collapsed index)
                raise StrategyError(f"{e}: the looplet strategy lowers a collapse whose index {k} is a loop of "
                                    f"the kernel's output; here another shape operator makes it ({env.get(k)}); "
                                    f"compute the collapse in a statement of its own first")
            ii, jj, _, _ = collapsed[k]
            check_collapse_concordant(e, formats)
            return conv(e.operand, {**env, i: Index(ii), j: Index(jj)}, top, choice)
        if isinstance(e, Split):
            k, (i, j) = e.index, e.results
            xi, xj = loop_index(env[i], e, f"{i}"), loop_index(env[j], e, f"{j}")
            if depth[xj.name] < depth[xi.name]:
                raise StrategyError(f"{e}: looplets read {k} = {i}·|{j}| + {j} as an offset of the loop over {j} "
                                    f"by the one over {i}, so {j} must be the inner loop; here the output's "
                                    f"index order puts {j} outside {i} (a column-major walk of a row-major "
                                    f"split is discordant)")
            return conv(e.operand, {**env, k: _plus(xj, _times(xi, _expr(ext[j])))}, top, choice)
        if isinstance(e, Concat):
            l = e.result
            if l not in choice or env.get(l) != top.get(l):
                raise StrategyError(f"{e}: the looplet strategy splits the loop over {l} into one loop per operand; "
                                    f"here {l} is computed by another shape operator ({env.get(l)}), not a loop")
            m = choice[l]
            return conv(e.operands[m], {**env, e.indices[m]: Index(fissions[l][m][0])}, top, choice)
        if isinstance(e, Slice):
            planned = e.result in steps and env[e.result] == top[e.result]
            xk = Index(e.result.name) if planned else loop_index(env[e.result], e, f"the sliced index {e.result}")
            if e.step != 1 and not planned:
                raise StrategyError(f"{e}: the looplet strategy lowers a strided slice where {e.result} is a loop "
                                    f"of the kernel; here it is computed by another shape operator")
            if e.step == 1:
                at = Call("window", (xk, Literal(e.start), Literal(e.stop)))
            else:
                check_stride_concordant(e, env, depth, formats)
                at = _plus(Index(steps[e.result]), _plus(Literal(e.start), _times(xk, Literal(e.step))))
            return conv(e.operand, {**env, e.index: at}, top, choice)
        if isinstance(e, Broadcast):
            return conv(e.operand, env, top, choice)
        raise StrategyError(f"the looplet strategy cannot lower {e!r}")

    pending: list = []         # the statements computing the scalars the statement being built reads
    temporaries: list = []     # (name, format) of each
    tensor_names = {a.tensor for a in N.accesses(stmt.rhs)} | {stmt.lhs.tensor}

    once: dict = {}            # a reduction of no free index -> its temporary, computed once before the loops
    prologue: list = []

    def reduce_into_scalar(e, env, top, choice):
        """A reduction inside the right-hand side, computed into a fresh scalar temporary just before
        the statement that reads it (its loops run where every loop of the kernel is bound), or once
        before every loop when it has no free index; its read."""
        nonlocal pending
        closed = not N.free_indices(e)
        if closed and e in once:   # (each part of a fissioned loop reads the one temporary)
            return Access(TensorRef(once[e]), ())
        if any(hasattr(n, "produced") for n in N.walk(e.body)):
            raise StrategyError(f"{e}: with shape operators, the looplet strategy lowers a reduction inside the "
                                f"right-hand side only where no shape operator is inside it; compute it in a "
                                f"statement of its own")
        inner, parts = dict(env), []
        for i in e.indices:
            name = fresh(i.name)
            inner[i] = Index(name)
            parts.append((name, ext[i]))
        outer, pending = pending, []
        body = Assign(Access(TensorRef(t := _fresh_temp(taken, tensor_names)), (), "update"), e.op,
                      conv(e.body, inner, top, choice))
        nested, pending = pending, outer
        if nested:
            body = Block((*nested, body))
        for name, size in reversed(parts):
            body = Loop(Index(name), Extent(Const(0, "int64"), extent_ir(size, formats)), body)
        dt = reduce_dtype(e.op, expr_dtype(e.body, lambda a: formats[a.tensor].dtype))
        ident = e.op.identity_for(dt)
        if ident is NOVALUE:
            raise StrategyError(f"{e}: the looplet strategy computes a reduction inside an expression into a "
                                f"temporary that starts at the operator's identity, and {e.op} has none")
        ident = ident.item() if hasattr(ident, "item") else ident
        fill_of = lambda a: formats[a.tensor].fill   # noqa: E731
        stops = early_exit(e.op, dt, expr_facts(e.body, fill_of))[0]
        temporaries.append((t, (ShortCircuitScalar if stops else Scalar)(ident, dtype=dt)))
        values.assume(t, expr_facts(e, fill_of))
        if closed:
            once[e] = t
            prologue.extend([Declare(TensorRef(t), Literal(ident)), body])
        else:
            pending += [Declare(TensorRef(t), Literal(ident)), body]
        return Access(TensorRef(t), ())

    def build(k, env, choice):
        """The loops from the ``k``-th in, a concatenated index's loop split into one loop per part."""
        nonlocal pending
        if k == len(loops):
            lhs = Access(TensorRef(stmt.lhs.tensor), tuple(env[i] for i in stmt.lhs.indices), "update")
            last = Assign(lhs, op, conv(rhs, env, env, choice))
            before, pending = pending, []
            return Block((*before, last)) if before else last
        i = loops[k]
        if i not in fissions:
            stop = extent_ir(extent_of[i.name], formats)
            return Loop(Index(i.name), Extent(Const(0, "int64"), stop), build(k + 1, env, choice))
        parts, offset = [], None
        for m, (name, size) in enumerate(fissions[i]):
            at = Index(name) if offset is None else _plus(Index(name), offset)
            parts.append(Loop(Index(name), Extent(Const(0, "int64"), extent_ir(size, formats)),
                              build(k + 1, {**env, i: at}, {**choice, i: m})))
            offset = _expr(size) if offset is None else _plus(offset, _expr(size))
        return Block(tuple(parts))

    body = build(0, env, {})
    stmts = [*prologue, body] if init is None else [Declare(TensorRef(stmt.lhs.tensor), init), *prologue, body]
    names = list(dict.fromkeys([stmt.lhs.tensor] + [a.tensor for a in N.accesses(stmt.rhs)]))
    return LoopProgram(stmt.lhs.tensor + "_kernel", tuple(names), Block(tuple(stmts)), str(stmt), 1,
                       tuple(temporaries)), info


def _fresh_temp(taken: set, tensors: set) -> str:
    """A name for a scalar temporary that no index or tensor of the statement has (``t``, ``t2``...)."""
    name, k = "t", 1
    while name in taken or name in tensors:
        k += 1
        name = f"t{k}"
    taken.add(name)
    return name


__all__ = ["shape_program", "extent_ir"]
