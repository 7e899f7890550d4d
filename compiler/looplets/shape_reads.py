"""The right side of a statement with shape operators as the loop program reads it inside the loops
:mod:`compiler.looplets.loop_plan` planned: each operator's operand read at the index its loops make
(an offset, a window, a stride, a part of a concatenation), or where no loop walks it, at an index
let-bound before the statement (a gather: each entry located); a reduction inside it computed into
a scalar temporary just before the statement.

>>> from compiler.notation import parse
>>> from compiler.format import parse_format
>>> from compiler.notation.infer import infer_shapes
>>> from compiler.looplets.loop_plan import LoopPlanner, Scope
>>> stmt = parse("c[k] = slice(b[j], j -> k, (1, 7, 2))")
>>> formats = {"b": parse_format("sparse")}
>>> ext = infer_shapes(stmt, {"b": (("b", 0),)}).extents
>>> planner = LoopPlanner(stmt, formats, stmt.rhs, ext, {"k", "j"})
>>> loops, env, scope = planner.plan(tuple(stmt.lhs.indices), ["k"], stmt.rhs, Scope.empty(), True)
>>> print(ShapeReads(planner).read(stmt.rhs, env, env, scope, {}))
b[t + (1 + k * 2)]
"""

from __future__ import annotations

from ..algebra import NOVALUE, lookup
from ..errors import StrategyError
from ..lattice.algebra import expr_facts
from ..notation import ast as N
from ..notation.dtypes import expr_dtype, reduce_dtype
from ..notation.shape import Broadcast, Collapse, Concat, ShapeOp, Slice, Split
from ..shortcircuit import early_exit
from .. import values
from .index_walks import affine, fresh_temp, indices_in, part_step, read_permissively, walks_on
from .program import Access, Assign, Block, Call, Declare, Define, Index, Literal, Raveled, Strided, TensorRef, Variable
from .raveled import ravels
from .scalars import Scalar, ShortCircuitScalar
from .shape_extents import extent_expr, plus, times
from .slice_order import check_collapse_concordant, check_stride_concordant

_SUB, _DIV, _MOD = lookup("-"), lookup("//"), lookup("%")


class ShapeReads:
    """The reads of one statement's right side in the loops ``planner`` planned (its ``depth``,
    ``one_step``, ``split_steps``, ``stepped`` and ``column_major`` say how), and what the statements
    reading them need before them: ``pending`` the statements computing the scalars the statement
    being built reads, ``lets`` the ``(variable, value)`` it reads (a gathered collapse's indices),
    ``made`` the indices slices and splits made of their loops and gathers' quotients,
    ``temporaries`` ``(name, format)`` of each scalar, ``prologue`` the reductions of no free index,
    computed once before every loop (``once``: each -> its temporary)."""

    def __init__(self, planner):
        self.planner = planner
        self.stmt, self.formats, self.ext = planner.stmt, planner.formats, planner.ext
        self.pending: list = []
        self.lets: list = []
        self.made: list = []
        self.temporaries: list = []
        self.tensor_names = {a.tensor for a in N.accesses(self.stmt.rhs)} | {self.stmt.lhs.tensor}
        self.once: dict = {}
        self.prologue: list = []

    def note(self, stage: str, text: str) -> None:
        """Tell the trace how an operand was read, once (each part of a fissioned loop reads it again)."""
        if (stage, text) not in self.planner.reads:
            self.planner.reads.append((stage, text))

    def statement(self, make, bindings=()):
        """The statement ``make()`` builds at the innermost loop, after the scalars it reads are
        computed and under the lets it reads (``bindings`` first)."""
        (outer, self.pending), (outer_lets, self.lets) = (self.pending, []), (self.lets, [])
        built = make()
        (nested, self.pending), (mine, self.lets) = (self.pending, outer), (self.lets, outer_lets)
        return let_bound([*bindings, *mine], Block((*nested, built)) if nested else built)

    def read(self, e, env, top, sc, choice):
        """The notation expression ``e`` read in the loops whose indices ``env`` gives (``top`` the
        scope's own), a concatenated index's part ``choice``."""
        if isinstance(e, N.Access):
            idxs = tuple(Literal(i) if isinstance(i, int) else env[i] for i in e.indices)
            return Access(TensorRef(e.tensor), idxs)
        if isinstance(e, N.Literal):
            return Literal(e.value)
        if isinstance(e, N.Call):
            return Call(e.op, tuple(self.read(a, env, top, sc, choice) for a in e.args))
        if isinstance(e, N.Reduce):
            return self.reduce_into_scalar(e, env, top, sc, choice)
        if isinstance(e, Collapse):
            return self.read_collapse(e, env, top, sc, choice)
        if isinstance(e, Split):
            return self.read_split(e, env, top, sc, choice)
        if isinstance(e, Concat):
            l = e.result
            if l not in choice or env.get(l) != top.get(l):
                return self.concat_read(e, env, top, sc, choice)
            m = choice[l]
            part = sc.fissions[l][m][0]
            at = plus(Index(sc.part_steps[part]), Index(part)) if part in sc.part_steps else \
                sc.part_collapsed[part].at if part in sc.part_collapsed else Index(part)
            return self.read(e.operands[m], {**env, e.indices[m]: at}, top, sc, choice)
        if isinstance(e, Slice):
            return self.read_slice(e, env, top, sc, choice)
        if isinstance(e, Broadcast):
            return self.read(e.operand, env, top, sc, choice)
        raise StrategyError(f"the looplet strategy cannot lower {e!r}")

    def loop_index(self, x, node, role):
        """``x``, where it is a loop of the kernel; else refused."""
        if not (isinstance(x, Index) and x.name in self.planner.depth):
            raise StrategyError(f"{node}: the looplet strategy lowers it where {role} is a loop of the kernel; "
                                f"here it is computed by another shape operator ({x}); compute the inner "
                                f"operator in a statement of its own first")
        return x

    def read_collapse(self, e: Collapse, env, top, sc, choice):
        """A collapse read by its two loops (or a concatenation's part's), or gathered where another
        operator computes its index."""
        (i, j), k = e.indices, e.result
        if k not in sc.collapsed and (any(env.get(k) == at for at in self.made) or read_permissively(env.get(k))):
            return self.collapse_gather(e, env, top, sc, choice)
        walked = next((c for c in sc.part_collapsed.values() if c.coords(env.get(k)) is not None), None)
        if walked is not None:
            # (a concatenation's part: its loops are this collapse's, walked in storage order; of a collapse
            # of a collapse, the inner one's index is made of the loops the inner one walks)
            check_collapse_concordant(e, self.formats)
            coords = walked.coords(env.get(k)) if env.get(k) != walked.at or len(walked.loops) > 2 else \
                tuple(Index(x) for x in walked.loops)   # (a flatten beside the part's first, read at its loops)
            return self.read(e.operand, {**env, i: coords[0], j: coords[1]}, top, sc, choice)
        if k not in sc.collapsed or env.get(k) != top.get(k):
            self.loop_index(env.get(k), e, f"the collapsed index {k}")
            # (a loop, but one another operator made: a concat's part of the collapsed index)
            raise StrategyError(f"{e}: the looplet strategy lowers a collapse whose index {k} is a loop of "
                                f"the kernel's output; here another shape operator makes it ({env.get(k)}); "
                                f"compute the collapse in a statement of its own first")
        ii, jj, _, _ = sc.collapsed[k]
        if e not in self.planner.column_major:
            check_collapse_concordant(e, self.formats)
        # (a concat making i or j has split its loop: env holds the part's coordinate)
        return self.read(e.operand, {**env, i: env.get(i, Index(ii)), j: env.get(j, Index(jj))}, top, sc, choice)

    def read_split(self, e: Split, env, top, sc, choice):
        """A split read at ``j + i·|j|`` of the loops its results read, ``j``'s inside ``i``'s."""
        depth = self.planner.depth
        k, (i, j) = e.index, e.results
        if e in sc.walked:
            return self.read(e.operand, {**env, k: top[k]}, top, sc, choice)
        if not (isinstance(env[i], Index) and isinstance(env[j], Index)):
            # (a slice of the split's result, i = start + step·p: k = j + i·|j| read as an offset
            # by loops outside those j reads, as the split reads its own loops)
            xi, xj = affine(env[i]), affine(env[j])
            inner, outer = list(indices_in(xj)), list(indices_in(xi))
            if not inner or not outer or any(x.name not in depth for x in inner + outer) or \
                    max(depth[x.name] for x in outer) >= min(depth[x.name] for x in inner):
                raise StrategyError(f"{e}: looplets read a slice of {i} or {j} as an offset of the loops "
                                    f"{j} reads by those {i} reads, so {j}'s must be inside; here {i} is "
                                    f"{env[i]} and {j} is {env[j]}")
            self.made.append(plus(xj, times(xi, extent_expr(self.ext[j]))))    # (a collapse making k gathers)
            return self.read(e.operand, {**env, k: self.made[-1]}, top, sc, choice)
        xi, xj = self.loop_index(env[i], e, f"{i}"), self.loop_index(env[j], e, f"{j}")
        if depth[xj.name] < depth[xi.name]:
            raise StrategyError(f"{e}: looplets read {k} = {i}·|{j}| + {j} as an offset of the loop over {j} "
                                f"by the one over {i}, so {j} must be the inner loop; here the kernel's "
                                f"loops put {j} outside {i} (a column-major walk of a row-major split is "
                                f"discordant)")
        self.made.append(plus(xj, times(xi, extent_expr(self.ext[j]))))   # (a collapse making k gathers)
        return self.read(e.operand, {**env, k: self.made[-1]}, top, sc, choice)

    def read_slice(self, e: Slice, env, top, sc, choice):
        """A slice read at its loop's window, or ``t + (s + r·k)`` under its one-step loop, or walked
        in the entries it keeps; at ``s + r·`` an index another operator computes, gathered."""
        planner = self.planner
        planned = e.result in sc.steps and env[e.result] == top[e.result]
        step = sc.steps[e.result] if planned else part_step(env[e.result], sc.part_steps)
        beside = e.result in sc.collapsed and env[e.result] == top.get(e.result)
        if not step and (beside or any(env[e.result] == at for at in self.made)):
            # (a slice read at an index another operator computes, a split's q + p·|q| or a collapse's
            # beside it: its operand is read at start + step·that index; a collapse gathered there,
            # each entry located)
            at = affine(env[e.result])
            at = plus(Literal(e.start), at if e.step == 1 else times(at, Literal(e.step)))
            if e in planner.split_steps and planner.split_steps[e] in planner.depth and \
                    not isinstance(e.operand, Collapse):
                at = plus(Index(planner.split_steps[e]), at)
            elif e.step != 1 and not isinstance(e.operand, Collapse):
                at = self.stride_gather(e, at)
            self.made.append(at)
            return self.read(e.operand, {**env, e.index: at}, top, sc, choice)
        if e in planner.stepped and env[e.result] == top[e.result]:
            # (walked in the entries it keeps: its operand read at its loop, strided at unfurl)
            xk = self.loop_index(env[e.result], e, f"the sliced index {e.result}")
            check_stride_concordant(e, env, planner.depth, self.formats, xk.name)
            acc, mode = e.operand, e.operand.indices.index(e.index)
            idxs = tuple(xk if m == mode else Literal(i) if isinstance(i, int) else env[i]
                         for m, i in enumerate(acc.indices))
            return Access(Strided(acc.tensor, mode, e.start, e.stop, e.step), idxs)
        xk = Index(step[1]) if step else self.loop_index(env[e.result], e, f"the sliced index {e.result}")
        if e.step != 1 and not step:
            raise StrategyError(f"{e}: the looplet strategy lowers a strided slice where {e.result} is a loop "
                                f"of the kernel or a part of a concatenation's; here it is computed by another "
                                f"shape operator")
        check_stride_concordant(e, env, planner.depth, self.formats, xk.name)
        if e.step == 1:
            at = Call("window", (xk, Literal(e.start), Literal(e.stop)))
        else:
            at = plus(Index(step[0]), plus(Literal(e.start), times(xk, Literal(e.step))))
        self.made.append(at)       # (a collapse making e.index reads it by a gather)
        return self.read(e.operand, {**env, e.index: at}, top, sc, choice)

    def let_variable(self, base: str) -> Variable:
        """A fresh variable for a let, named after the index ``base`` and no tensor."""
        self.planner.taken.update(self.tensor_names)       # (a let's name is no tensor's either)
        return Variable(self.planner.fresh(base))

    def collapse_gather(self, e, env, top, sc, choice):
        """A collapse read at the index a slice or a split of it makes of its loops (``t + (s + r·p)``,
        ``window(p, s, e)``, a split's ``q + p·|q|``, or a gathered collapse's quotient): its indices
        are that index's quotient and remainder by the minor extent, let-bound before the
        statement, and the operand is read there, each entry located (a binary search in a sparse
        level: a pass over the output's length, not over the stored entries)."""
        (i, j), k = e.indices, e.result
        at = affine(env[k])
        # (a concatenation's part read where the index falls in it: the quotient is permissive, the
        # remainder of a floor division always in range)
        permissive = read_permissively(at)
        at = at.args[0] if permissive else at
        acc = e.operand
        if isinstance(acc, N.Access) and tuple(acc.indices) == (i, j) and acc.tensor in self.formats and \
                ravels(self.formats[acc.tensor]) and walks_on(at, self.planner.depth, self.planner.one_step):
            # (a row-major matrix's stored entries are in raveled order: one walk, each window
            # seeking once, where the quotient and remainder would search for every coordinate)
            self.note("walk-ravel", f"{e} read at {k} = {at}: ravel({acc.tensor}) walks its entries in storage order")
            return Access(Raveled(acc.tensor), (Call("permit", (at,)) if permissive else at,))
        major, minor = self.let_variable(i.name), self.let_variable(j.name)
        size = extent_expr(self.ext[j])
        self.lets.extend([(major, Call(_DIV, (at, size))), (minor, Call(_MOD, (at, size)))])
        # (a collapse of a collapse gathers at the quotient, a 3-D reshape; a concat read at the
        # remainder reads each part where it falls, an hstack raveled and split)
        self.made.extend([major, minor])
        self.note("gather", f"{e} read at {k} = {at}: {i} = {major.name}, {j} = {minor.name}, each entry located")
        return self.read(e.operand, {**env, i: Call("permit", (major,)) if permissive else major, j: minor},
                         top, sc, choice)

    def stride_gather(self, e, at):
        """The coordinate ``at`` (``s + r·(q + p·|q|)``) where a strided slice reads its operand at an
        index another operator computes: no offset of a loop, so let-bound before the statement and
        each entry located (a binary search in a sparse level), as a gathered collapse's indices."""
        var = self.let_variable(e.index.name)
        self.lets.append((var, at))
        self.note("gather", f"{e} read at {e.index} = {var.name} = {at}, each entry located")
        return var

    def concat_read(self, e, env, top, sc, choice):
        """A concat whose index another operator computes (a split's ``q + p·|q|``, or a gathered
        collapse's quotient: a vstack raveled and split): each part read permissively where that
        index falls in it, the first part present taken, as Finch's ``coalesce(x[~l], y[~(l - |x|)])``;
        a part's index must be read by its accesses directly or made by a collapse of them (or of such
        collapses)."""
        l = e.result
        at = affine(env.get(l))
        quotient = isinstance(at, Variable) and any(at == x for x in self.made)
        if not quotient and (not isinstance(at, (Index, Call)) or not list(indices_in(at)) or
                             any(x.name not in self.planner.depth for x in indices_in(at))):
            raise StrategyError(f"{e}: the looplet strategy splits the loop over {l} into one loop per operand, "
                                f"or reads it at an index of loops; here {l} is {env.get(l)}")
        # (Finch's coalesce takes the first part not missing there: a reduction, computed into a temporary
        # before the statement, holds its identity where its part's accesses are missing, never missing)
        summed = next((r for operand in e.operands for r in N.walk(operand) if isinstance(r, N.Reduce)), None)
        if summed is not None:
            raise StrategyError(f"{e}: the looplet strategy reads a concatenation at an index another operator "
                                f"computes ({l} = {env.get(l)}) by taking the first part whose accesses are not "
                                f"missing there, and {summed} is a reduction, whose value is never missing")
        parts, offset = [], None
        for j, operand in zip(e.indices, e.operands):
            reads = [a for a in N.walk(operand) if isinstance(a, N.Access) and j in a.indices]
            makers = [n for n in N.walk(operand) if isinstance(n, ShapeOp) and j in n.produced()]
            # (a collapse making the part's index is gathered where it falls in the part: a stack's
            # ravels concatenated, split into rows straddling two operands)
            if all(isinstance(n, Collapse) and reads_directly(n) for n in makers):
                reads, makers = reads + makers, []
            if not reads or makers:
                raise StrategyError(f"{e}: the looplet strategy reads a concatenation at an index another "
                                    f"operator computes ({l} = {env.get(l)}) where each part reads its index "
                                    f"{j} in its accesses directly")
            shifted = at if offset is None else Call(_SUB, (at, offset))
            parts.append(self.read(operand, {**env, j: Call("permit", (shifted,))}, top, sc, choice))
            offset = extent_expr(self.ext[j]) if offset is None else plus(offset, extent_expr(self.ext[j]))
        return Call("coalesce", tuple(parts))

    def reduce_into_scalar(self, e, env, top, sc, choice):
        """A reduction inside the right-hand side, computed into a fresh scalar temporary just before
        the statement that reads it (its loops run where every loop of the kernel is bound), or once
        before every loop when it has no free index; its read. Its loops are planned as the
        statement's are: a shape operator making a reduced index reshapes or splits its loop."""
        planner, formats = self.planner, self.formats
        closed = not N.free_indices(e)
        if closed and e in self.once:   # (each part of a fissioned loop reads the one temporary)
            return Access(TensorRef(self.once[e]), ())
        names = [planner.fresh(i.name) for i in e.indices]
        loops, inner, isc = planner.plan(tuple(e.indices), names, e.body, sc)
        t = fresh_temp(planner.taken, self.tensor_names)

        def leaf(env2, choice2):
            own = {**top, **{i: env2[i] for i in e.indices}}   # (where this reduction's loops bind its indices)
            return self.statement(lambda: Assign(Access(TensorRef(t), (), "update"), e.op,
                                                 self.read(e.body, env2, own, isc, choice2)))

        body = planner.build(loops, isc, {**env, **inner}, choice, leaf)
        dt = reduce_dtype(e.op, expr_dtype(e.body, lambda a: formats[a.tensor].dtype))
        ident = e.op.identity_for(dt)
        if ident is NOVALUE:
            raise StrategyError(f"{e}: the looplet strategy computes a reduction inside an expression into a "
                                f"temporary that starts at the operator's identity, and {e.op} has none")
        ident = ident.item() if hasattr(ident, "item") else ident
        fill_of = lambda a: formats[a.tensor].fill   # noqa: E731
        stops = early_exit(e.op, dt, expr_facts(e.body, fill_of))[0]
        self.temporaries.append((t, (ShortCircuitScalar if stops else Scalar)(ident, dtype=dt)))
        values.assume(t, expr_facts(e, fill_of))
        if closed:
            self.once[e] = t
            self.prologue.extend([Declare(TensorRef(t), Literal(ident)), body])
        else:
            self.pending.extend([Declare(TensorRef(t), Literal(ident)), body])
        return Access(TensorRef(t), ())


def let_bound(bindings: list, body):
    """``body`` under ``let v = x`` for each ``(v, x)`` of ``bindings``, the first outermost."""
    for var, val in reversed(bindings):
        body = Define(var, val, body)
    return body


def reads_directly(e: Collapse) -> bool:
    """Whether the collapse's indices are read by its accesses directly, or made by collapses whose indices are
    (a 3-D tensor's ravel: each gathered at the quotient and remainder of the one outside it).

    >>> from compiler.notation import parse
    >>> reads_directly(parse("y[k] = collapse(collapse(B[i, j, l], (i, j) -> m), (m, l) -> k)").rhs)
    True
    >>> reads_directly(parse("y[k] = collapse(slice(B[i, j], j -> m, (0, 2, 1)), (i, m) -> k)").rhs)
    False
    """
    for i in e.indices:
        makers = [n for n in N.walk(e.operand) if isinstance(n, ShapeOp) and i in n.produced()]
        if makers and not all(isinstance(n, Collapse) and reads_directly(n) for n in makers) or \
                not makers and not any(isinstance(a, N.Access) and i in a.indices for a in N.walk(e.operand)):
            return False
    return True


__all__ = ["ShapeReads", "let_bound", "reads_directly"]
