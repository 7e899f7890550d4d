"""The loops a statement with shape operators becomes under the looplet strategy: the loops over its
indices as the operators making them ask (:mod:`compiler.looplets.shapes` has the table), each
loop's extent and depth, and the loops built around the innermost statement.

A collapsed index becomes two loops (its operand's indices), a strided slice's gets a loop of one
step after it, a concatenated index one loop per part (BURRITO's fissioned loops), and the output's
loops over a concordant split of a collapse are the collapse's. Where a CSC's columns or rows are
sliced, the loops move so that the operand is walked in its storage order, when the output takes
its writes so.

>>> from compiler.notation import parse
>>> from compiler.format import parse_format
>>> from compiler.notation.infer import infer_shapes
>>> stmt = parse("c[k] = collapse(A[i, j], (i, j) -> k)")
>>> formats = {"A": parse_format("csr")}
>>> ext = infer_shapes(stmt, {"A": (("A", 0), ("A", 1))}).extents
>>> planner = LoopPlanner(stmt, formats, stmt.rhs, ext, {"k", "i", "j"})
>>> loops, env, scope = planner.plan(tuple(stmt.lhs.indices), ["k"], stmt.rhs, Scope.empty(), True)
>>> loops, str(env[stmt.lhs.indices[0]])
(['i2', 'j2'], 'j2 + i2 * size(A, 1)')
"""

from __future__ import annotations

from dataclasses import dataclass

from ..algebra import lookup
from ..errors import StrategyError
from ..imperative.ir import Const
from ..lattice.iteration_graph import storage_levels
from ..notation import ast as N
from ..notation.infer import extent_text, same
from ..notation.shape import Collapse, Concat, ShapeOp, Slice, Split
from ..stand_in import scatters
from .index_walks import scope_walk, substitute
from .program import Block, Call, Extent, Index, Loop, Variable
from .shape_extents import extent_expr, extent_ir, plus, times
from .slice_order import stored_after, stored_before, walks_minor_first
from .stepped import steps_through
_DIV, _MOD = lookup("//"), lookup("%")


@dataclass(frozen=True)
class CollapsedPart:
    """The loops a concatenation's part made by a collapse walks in the part's place, outermost first, their
    extents, and the part's coordinate they make, row-major (``j' + i'·|j|``); a collapse of a collapse (a 3-D
    tensor's ravel) walks a loop for each index it collapses in the end. ``inner``: for each collapse of the
    chain, the coordinates its own indices take from the loops and the coordinate it makes (the first, ``at``'s,
    too).

    >>> from compiler.notation import parse
    >>> c = parse("y[k] = collapse(collapse(B[i, j, l], (i, j) -> m), (m, l) -> k)").rhs
    >>> extent = {"i": 2, "j": 3, "l": 4}
    >>> part = CollapsedPart.of(c, ["i2", "j2", "l2"], lambda x: extent[x.name], {c.operand.result: c.operand}.get)
    >>> print(part.at, "|", *part.coords(part.at))
    l2 + (j2 + i2 * 3) * 4 | j2 + i2 * 3 l2
    """

    loops: tuple
    extents: tuple
    at: object
    inner: tuple

    @classmethod
    def of(cls, top: Collapse, loops, extent_of, made=lambda x: None) -> "CollapsedPart":
        """The loops ``loops`` (names, one for each index the chain of collapses ``top`` collapses in the end, in
        order) walking it; ``extent_of(index)`` each index's extent, ``made(index)`` the collapse of the chain
        making an index (None: a loop's)."""
        names, extents, inner = iter(loops), [], []

        def bind(c) -> tuple:
            # (the coordinate the collapse c makes of the loops, and its extent, as expressions)
            coords = []
            for x in c.indices:
                below = made(x)
                if below is None:
                    extents.append(extent_of(x))
                    coords.append((Index(next(names)), extent_expr(extent_of(x))))
                else:
                    coords.append(bind(below))
            at, size = coords[0]
            for coord, extent in coords[1:]:
                at, size = plus(coord, times(at, extent)), times(size, extent)
            inner.append((tuple(coord for coord, _ in coords), at))
            return at, size
        at, _ = bind(top)
        return cls(tuple(loops), tuple(extents), at, tuple(inner))

    def coords(self, made) -> tuple | None:
        """The coordinates the indices of the collapse of this chain that makes ``made`` (a coordinate: the
        part's, or an inner collapse's) take from the loops; None where none makes it."""
        return next((c for c, at in self.inner if at == made), None)


class Scope:
    """What one scope's loops (the statement's, or those of a reduction inside it) made of the shape
    operators over their indices, keyed by the notation's index (an inner scope's over the outer's):
    ``collapsed`` k -> (i', j', |i|, |j|),
    ``steps`` k -> (its one-step loop, k's loop), ``fissions`` l -> [(part's loop, extent)], ``parts``
    a fissioned loop's name -> its index, ``extent_of`` each loop's extent, ``part_steps`` a
    part's loop -> the one-step loop inside it (the part is a strided slice), ``part_collapsed`` a
    part's loop -> the :class:`CollapsedPart` whose loops walk it in its place, ``walked`` a split of
    a collapse walked by the collapse's loops -> its results' let bindings.

    >>> Scope.empty().writes(["i"])
    1
    """

    def __init__(self, collapsed, steps, fissions, parts, extent_of, part_steps, part_collapsed):
        self.collapsed, self.steps, self.fissions = collapsed, steps, fissions
        self.parts, self.extent_of, self.part_steps = parts, extent_of, part_steps
        self.part_collapsed = part_collapsed
        self.walked: dict = {}

    @classmethod
    def empty(cls):
        return cls({}, {}, {}, {}, {}, {}, {})

    def inner(self, extent_of: dict) -> "Scope":
        """A scope inside this one, its loops' extents ``extent_of``: the operators over the outer
        indices are seen, no loop of it is split into parts yet."""
        return Scope(dict(self.collapsed), dict(self.steps), dict(self.fissions), {}, extent_of,
                     dict(self.part_steps), dict(self.part_collapsed))

    def writes(self, loops: list) -> int:
        """How many times the statement is written inside ``loops``: once in each part of each loop
        split into parts (a concatenated index's), as :meth:`LoopPlanner.build` makes them."""
        count = 1
        for name in loops:
            if name in self.parts:
                count *= len(self.fissions[self.parts[name]])
        return count


class LoopPlanner:
    """The loops of one statement ``stmt`` (its right side planned ``rhs``: a reduction at the top is
    the statement's own loops) of tensors of ``formats``, the notation's extents ``ext``, the names
    ``taken`` by its indices, tensors and the loops planned so far; ``reads`` says for the trace how
    each operator's operand is walked or read. Each loop planned is nested at ``depth``;
    ``one_step`` holds the loops of one step (a strided slice's), ``split_steps`` a strided slice
    split by the loops -> the one-step loop after the split's inner one, ``stepped`` the strided
    slices walked in the entries they keep (no one-step loop), ``column_major`` the collapses whose
    loops run minor index first (their operand's order)."""

    def __init__(self, stmt: N.Assign, formats: dict, rhs, ext: dict, taken: set):
        self.stmt, self.formats, self.rhs, self.ext, self.taken = stmt, formats, rhs, ext, taken
        self.reads: list = []
        self.depth: dict = {}
        self.one_step: set = set()
        self.split_steps: dict = {}
        self.stepped: set = set()
        self.column_major: set = set()
        #: ``(index, walked, read)``: a second flatten of an index read at the first's loops, whose
        #: extents each call must find equal to theirs (:attr:`~compiler.notation.infer.ShapeInfo.agree`)
        self.agree: list = []

    def restart(self, rhs, taken: set) -> None:
        """Plan again from the start, the right side ``rhs``, the names ``taken`` alone."""
        self.rhs = rhs
        self.taken.clear()
        self.taken.update(taken)
        for made_by_plan in (self.depth, self.one_step, self.split_steps, self.stepped, self.column_major,
                              self.reads, self.agree):
            made_by_plan.clear()

    def fresh(self, base: str) -> str:
        """A loop name no index, tensor or loop has taken (``base``, ``base2``...)."""
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}{k}"
        self.taken.add(name)
        return name

    def one_step_loop(self) -> str:
        """A fresh loop of one step."""
        t = self.fresh("t")
        self.one_step.add(t)
        return t

    # -- planning -------------------------------------------------------------------------------------

    def plan(self, indices, names, body, outer: Scope, top_level: bool = False):
        """The loops over ``indices`` (named ``names``) as the shape operators in ``body`` that make
        them ask: a collapsed index becomes two loops, a strided slice's gets a one-step loop after
        it, a concatenated one a loop per part (built by :meth:`build`), and the output's loops
        over a concordant split of a collapse the collapse's (:meth:`walks_collapse`);
        ``(loops, env, scope)``."""
        ext = self.ext
        var = dict(zip(indices, names))
        loops = list(names)
        env = {i: Index(var[i]) for i in indices}
        sc = outer.inner({var[i]: ext[i] for i in indices})
        for i in indices:   # (an index bound again here is this scope's own)
            for table in (sc.collapsed, sc.steps, sc.fissions):
                table.pop(i, None)
        # (an index a collapse makes in one part of a concat and a concat in another is the collapse's
        # two loops; the concat is read where that index falls in each of its parts)
        collapsed = {n.result for n in scope_walk(body, set(indices)) if isinstance(n, Collapse)}
        for n in scope_walk(body, set(indices)):
            if top_level and self.walks_collapse(n, var, loops):
                self.plan_walked_split(n, var, loops, env, sc)
            elif isinstance(n, Collapse) and var.get(n.result) in loops:
                self.plan_collapse(n, var, loops, env, sc, top_level)
            elif isinstance(n, Collapse) and n.result in sc.collapsed and n.result in var:
                ii, jj, *walked = sc.collapsed[n.result]
                self.walk_beside(n, ii, jj, walked, [ext[n.indices[0]], ext[n.indices[1]]])
            elif isinstance(n, Concat) and var.get(n.result) in loops and n.result not in collapsed:
                self.plan_concat(n, var, sc)
            elif isinstance(n, Slice) and n.step != 1 and var.get(n.result) in loops and n.result not in sc.steps:
                t = self.one_step_loop()
                sc.steps[n.result] = (t, var[n.result])
                loops.insert(loops.index(var[n.result]) + 1, t)
                sc.extent_of[t] = 1
            elif isinstance(n, Split) and isinstance(n.operand, Slice) and n.operand.step not in (0, 1) and \
                    not isinstance(n.operand.operand, Collapse) and n.operand.result == n.index and \
                    var.get(n.results[1]) in loops and n.operand not in self.split_steps:
                # (a split of a strided slice: its read at t + (s + r·(q + p·|q|)) under a one-step loop t
                # after q's is a window of t's that ascends with q (descends, r < 0), so its cursor is
                # carried from q to q, up (down) the operand)
                t = self.one_step_loop()
                self.split_steps[n.operand] = t
                loops.insert(loops.index(var[n.results[1]]) + 1, t)
                sc.extent_of[t] = 1
        for n in scope_walk(body, set(indices)):
            if isinstance(n, Slice) and n.step != 1 and n.result in sc.collapsed and n not in self.split_steps and \
                    sc.collapsed[n.result][1] in loops and not isinstance(n.operand, Collapse):
                # (a strided slice beside a collapse making its index, x[7::-2] + c.reshape(4): read at
                # t + (s + r·(j' + i'·|j|)) under a one-step loop t after the collapse's inner loop j', as
                # a split's index: a window of t's ascending with j' (descending, r < 0), carried)
                t = self.one_step_loop()
                self.split_steps[n] = t
                loops.insert(loops.index(sc.collapsed[n.result][1]) + 1, t)
                sc.extent_of[t] = 1
        if top_level:
            self.order_slices(body, indices, var, loops, env, sc)
        for k, (t, name) in sc.steps.items():
            if k in var:
                # (a write inside the one-step loop is at t + k, so a sparse output still sees its loops in order)
                env[k] = plus(Index(t), Index(name))
        self.nest(loops, var, sc)
        return loops, env, sc

    def plan_walked_split(self, n: Split, var, loops, env, sc) -> None:
        """The output's loops p, q over a split of a collapse become the collapse's i, j, walking the
        operand in storage order; p and q are let-bound to m's quotient and remainder by |q|, for
        m = j + i·|j| the entry's place in both: the writes ascend as the output stores them."""
        ext = self.ext
        (i, j), k = n.operand.indices, n.operand.result
        p, q = n.results
        ii, jj = self.fresh(i.name), self.fresh(j.name)
        self.drop_steps(sc, loops, (var[p], var[q]))
        at = loops.index(var[p])
        loops[at:at + 2] = [ii, jj]
        sc.extent_of.update({ii: ext[i], jj: ext[j]})
        sc.collapsed[k] = (ii, jj, ext[i], ext[j])
        env[k] = plus(Index(jj), times(Index(ii), extent_expr(ext[j])))
        size = extent_expr(ext[q])
        env[p], env[q] = Variable(p.name), Variable(q.name)
        sc.walked[n] = ((env[p], Call(_DIV, (env[k], size))), (env[q], Call(_MOD, (env[k], size))))
        self.reads.append(("walk-reshape", f"{n}: the output's loops {p}, {q} are the collapse's {ii}, {jj}, "
                                           f"walking its operand in storage order; {p} = m // {size}, "
                                           f"{q} = m % {size} for m = {env[k]}"))
        var.update({i: ii, j: jj})
        env.update({i: Index(ii), j: Index(jj)})

    def plan_collapse(self, n: Collapse, var, loops, env, sc, top_level: bool) -> None:
        """The loop over a collapsed index ``k`` becomes two, over its operand's indices (minor index
        outside where the operand stores it first), ``k`` read at ``j' + i'·|j|``."""
        ext = self.ext
        (i, j), k = n.indices, n.result
        ii, jj = self.fresh(i.name), self.fresh(j.name)
        sc.collapsed[k] = (ii, jj, ext[i], ext[j])
        self.drop_steps(sc, loops, (var[k],))
        at = loops.index(var[k])
        loops[at:at + 1] = [ii, jj]
        env[k] = plus(Index(jj), times(Index(ii), extent_expr(ext[j])))
        if top_level and self.walks_column_major(n):
            # (the operand walked in its storage order, minor index first: each entry written
            # and read at t + (j' + i'·|j|) under a one-step loop t, an offset by the loops
            # outside it, where the output and the other reads take any coordinate)
            t = self.one_step_loop()
            loops[at:at + 2] = [jj, ii, t]
            sc.extent_of[t] = 1
            env[k] = plus(Index(t), env[k])
            self.column_major.add(n)
            self.reads.append(("walk-reshape", f"{n}: the loops run {jj} outside {ii}, walking "
                                               f"{n.operand.tensor} in its storage order; {k} = {env[k]} "
                                               f"written and read out of order"))
        sc.extent_of.update({ii: ext[i], jj: ext[j]})
        # (a collapse of a collapse: the outer one's index reads the loop this one replaced)
        env.update({x: substitute(v, Index(var[k]), env[k]) for x, v in env.items()})
        sc.walked = {n2: tuple((v, substitute(x, Index(var[k]), env[k])) for v, x in bs)
                     for n2, bs in sc.walked.items()}
        # (the collapse's own indices are these loops: a concat making one splits it)
        var.update({i: ii, j: jj})
        env.update({i: Index(ii), j: Index(jj)})

    def walk_beside(self, n: Collapse, ii: str, jj: str, walked: list, read: list) -> None:
        """A second flatten of an index, ``collapse(Z[p, q], (p, q) -> k)`` beside ``A``'s, read at the
        first's loops ``ii``, ``jj`` (:meth:`~.shape_reads.ShapeReads.read_collapse` binds ``p``, ``q``
        to them): its extents ``read``, the tensor's own, must equal theirs, ``walked``, which each call
        checks (:attr:`agree`) before the kernel reads ``Z`` at ``A``'s coordinates."""
        if walked == read:
            return
        if any(same(a, b) is False for a, b in zip(walked, read)):
            first, second = (" × ".join(extent_text(x) for x in pair) for pair in (walked, read))
            raise StrategyError(f"{n}: {n.result} flattens both {first} and {second}; the looplet strategy walks one "
                                f"pair of loops for a flattened index, so it cannot walk these two as one")
        self.agree.append((n.result.name, tuple(walked), tuple(read)))
        self.reads.append(("walk-reshape", f"{n}: read at the loops {ii}, {jj} of the first flatten of {n.result}, "
                                           f"both walked as one; each call checks that "
                                           f"{' × '.join(extent_text(x) for x in read)} equals "
                                           f"{' × '.join(extent_text(x) for x in walked)}"))

    @staticmethod
    def collapsed_leaves(c: Collapse, collapses: dict) -> list:
        """The indices the collapse ``c`` collapses in the end, in order: an index another collapse of
        ``collapses`` (by result) makes, that one's."""
        return [y for x in c.indices for y in (LoopPlanner.collapsed_leaves(collapses[x], collapses)
                                               if x in collapses else [x])]

    def plan_concat(self, n: Concat, var, sc) -> None:
        """The loop over a concatenated index split into one loop per part: a strided part's with a
        one-step loop inside, a collapsed part's the loops of its collapse (of each index a chain of collapses
        collapses in the end) in its place."""
        ext = self.ext
        sizes = tuple(ext[j] for j in n.indices)
        if n.result in sc.fissions:
            if tuple(x for _, x in sc.fissions[n.result]) != sizes:
                raise StrategyError(f"{n}: {n.result} concatenates parts of other extents elsewhere; the "
                                    f"looplet strategy splits its loop one way")
        else:
            sc.fissions[n.result] = [(self.fresh(j.name), x) for j, x in zip(n.indices, sizes)]
            sc.parts[var[n.result]] = n.result
        # a part that is a strided slice gets its one-step loop inside the part's loop
        for (part, _), j, operand in zip(sc.fissions[n.result], n.indices, n.operands):
            if part not in sc.part_steps and any(isinstance(x, Slice) and x.step != 1 and x.result == j
                                                 for x in scope_walk(operand, {j})):
                sc.part_steps[part] = self.one_step_loop()
        # a part that is a collapse walks its two loops in place of the part's (a stack's
        # ravels concatenated: each operand's rows, then its columns, in storage order)
        for (part, size), j, operand in zip(sc.fissions[n.result], n.indices, n.operands):
            makers = [x for x in scope_walk(operand, {j}) if isinstance(x, ShapeOp) and j in x.produced()]
            if not makers or not all(isinstance(x, Collapse) for x in makers) or part in sc.part_collapsed:
                continue
            # (a collapse of a collapse, a 3-D tensor's ravel, walks a loop for each index collapsed in the end)
            collapses = {x.result: x for x in scope_walk(operand, {j}) if isinstance(x, Collapse)}
            leaves = self.collapsed_leaves(makers[0], collapses)
            walked = [ext[x] for x in leaves]
            reads = [[ext[x.indices[0]], ext[x.indices[1]]] for x in makers[1:]]
            if part in sc.part_steps or any(same(w, r) is False for read in reads for w, r in zip(walked, read)) \
                    or len(leaves) > 2 and len(makers) > 1:
                raise StrategyError(f"{n}: its part {j} is made by collapses of other extents or a "
                                    f"strided slice too; the looplet strategy walks one set of loops "
                                    f"for a collapsed part")
            loops = [self.fresh(x.name) for x in leaves]
            sc.part_collapsed[part] = CollapsedPart.of(makers[0], loops, ext.__getitem__, collapses.get)
            for x, read in zip(makers[1:], reads):   # (each other flatten of the part read at these loops)
                self.walk_beside(x, *loops, walked, read)

    def order_slices(self, body, indices, var, loops, env, sc) -> None:
        """The statement's loops reordered around its slices so that each slice's operand is walked in
        its storage order, where the output takes the writes so (:meth:`columns_outside`,
        :meth:`kept_outside`); a strided slice whose column loop moved walks the entries it keeps."""
        slices = [n for n in scope_walk(body, set(indices)) if isinstance(n, Slice)]
        moved = {n.result for n in slices
                 if var.get(n.result) in loops and self.columns_outside(n, var, env, loops, sc, slices)}
        for k in moved & set(sc.steps):
            # (each column's row level walked in the entries a strided slice keeps, where every
            # slice making k can: no one-step loop, no seek per output row in every column)
            if all(self.walks_stepped(n) for n in slices if n.result == k):
                t = sc.steps.pop(k)[0]
                loops.remove(t)
                self.one_step.discard(t)
                self.stepped.update(n for n in slices if n.result == k)
        for n in slices:
            if var.get(n.result) in loops:
                self.kept_outside(n, var, env, loops, sc, slices)

    def nest(self, loops, var, sc) -> None:
        """Record how deep each of ``loops`` (and its parts' loops) is nested, inside those planned before."""
        depth = self.depth
        base = max(depth.values(), default=-1) + 1
        depth.update({name: base + k for k, name in enumerate(loops)})
        depth.update({name: depth[var[l]] for l, parts in sc.fissions.items() if l in var for name, _ in parts})
        depth.update({t: depth[part] + 0.5 for part, t in sc.part_steps.items() if part in depth})
        for part, walked in sc.part_collapsed.items():
            if part in depth:
                depth.update({x: depth[part] + k / len(walked.loops) for k, x in enumerate(walked.loops)})

    def drop_steps(self, sc: Scope, loops: list, replaced: tuple) -> None:
        """Forget the one-step loops of strided slices planned after the loops ``replaced`` (a collapse
        walked after the slice takes their place: the slice is then read at the index the collapse makes,
        refused or gathered where it is converted, not a KeyError over a loop that is gone)."""
        for result, (t, name) in list(sc.steps.items()):
            if name in replaced:
                del sc.steps[result]
                loops.remove(t)
                self.one_step.discard(t)

    # -- the loops' order around slices ---------------------------------------------------------------

    def anywhere(self) -> bool:
        """Whether the output takes writes at any coordinate (a dense one, or a scalar)."""
        out = self.formats.get(self.stmt.lhs.tensor)
        return out is None or all(lvl.random_write for lvl in out.levels)

    def columns_outside(self, e, var, env, loops, sc, slices) -> bool:
        """Move outside the loop of the slice ``e``'s result the statement's loops over the modes its
        operand stores before the sliced one, where :func:`check_stride_concordant` would refuse
        them inside (a CSC's rows sliced: each column's row level windowed, or strided by the slice's
        one-step loop, inside the loop over its columns), when the output takes its writes in that
        order: written at random (dense, or a scalar), or storing those modes first too (a CSC
        output). Such a mode's loop is its index's own, a reduced one's too (``sum(A_csc[1:9:2],
        axis=1)``), or that of a slice of it in ``slices`` (``A_csc[1:9:2, ::2]``: the columns' slice,
        moved with its one-step loop); whether it moved one."""
        stmt = self.stmt
        lhs, out = list(stmt.lhs.indices), self.formats.get(stmt.lhs.tensor)
        anywhere = self.anywhere()
        if e.result not in lhs and not anywhere:
            return False
        moved = False
        for _, x in stored_before(e, self.formats):
            if x not in var or env.get(x) != Index(var[x]):
                # (a slice of that mode: its loop walks it)
                x = next((s.result for s in slices if s.index == x and var.get(s.result) in loops), None)
                if x is None:
                    continue
            if var[x] not in loops or loops.index(var[x]) < loops.index(var[e.result]):
                continue
            if not anywhere and (x not in lhs or
                                 out.mode_order.index(lhs.index(x)) > out.mode_order.index(lhs.index(e.result))):
                if x not in lhs or not self.scattered(out):
                    continue
                # (an output storing the slice's result first takes the writes by a scatter: A_csc[::-1] into a CSR)
                self.reads.append(("transpose", f"{e}: the loop over {x} runs outside {e.result}'s, walking "
                                                f"{e.operand.tensor if isinstance(e.operand, N.Access) else e.operand} "
                                                f"in its storage order; {stmt.lhs.tensor}, stored {e.result} first, "
                                                f"is built by a scatter"))
            block = [var[x]] + ([sc.steps[x][0]] if x in sc.steps else [])
            for name in block:
                loops.remove(name)
            at = loops.index(var[e.result])
            loops[at:at] = block
            moved = True
        return moved

    def kept_outside(self, e, var, env, loops, sc, slices) -> None:
        """Move the loop of the slice ``e``'s result (with a strided one's one-step loop) outside the
        statement's loops over the modes its operand stores after the sliced one (:func:`stored_after`:
        ``A_csc[:, ::2]`` or ``A_csc[:, 1:9]``, whose columns' loop ran inside the rows'), where the
        output takes its writes in that order: written at random, storing the slice's result before
        those modes (a CSC output), or by a scatter (a CSR output). Each kept column is then read at
        ``s + r * k`` and its rows walked, where the rows' loop outside located each entry. Not where
        another of the ``slices`` would then walk its operand against its order
        (``A_csc[:, ::2] + B_csr[:, ::2]``: B's rows inside its columns)."""
        def discordant(order) -> int:
            return sum(var.get(y) in order and order.index(var[y]) > order.index(var[n.result])
                       for n in slices if var.get(n.result) in order for _, y in stored_before(n, self.formats))

        stmt = self.stmt
        lhs, out = list(stmt.lhs.indices), self.formats.get(stmt.lhs.tensor)
        anywhere = self.anywhere()
        if e.result not in lhs and not anywhere:
            return
        for _, x in stored_after(e, self.formats, windows=True):
            if x not in var or env.get(x) != Index(var[x]) or var[x] not in loops or \
                    loops.index(var[x]) > loops.index(var[e.result]):
                continue
            against = not anywhere and x in lhs and \
                out.mode_order.index(lhs.index(x)) < out.mode_order.index(lhs.index(e.result))
            # (an output storing x first takes the writes of k's loop outside x's by a scatter, as a
            # CSC of a CSR's row loops: A_csc[:, ::2] into a CSR walks A, where x's loop outside gathered)
            if against and not self.scattered(out):
                continue
            block = [var[e.result]] + ([sc.steps[e.result][0]] if e.result in sc.steps else [])
            order = [name for name in loops if name not in block]
            at = order.index(var[x])
            order[at:at] = block
            if discordant(order) <= discordant(loops):
                loops[:] = order
                if against:
                    self.reads.append(("transpose", f"{e}: the loop over {e.result} runs outside {x}'s, walking "
                                                    f"{e.operand.tensor} in its storage order; {stmt.lhs.tensor}, "
                                                    f"stored {x} first, is built by a scatter"))

    def walks_column_major(self, n) -> bool:
        """Whether the collapse ``n`` (of the statement's own loop) walks its minor index's loop outside
        its major one's (:func:`~.slice_order.walks_minor_first`: ``x + c_csc.reshape(4)``), the output
        taking writes anywhere (a dense one, a scalar, or the workspace of a sparse one)."""
        return self.anywhere() and walks_minor_first(n, self.rhs, self.formats)

    def scattered(self, out) -> bool:
        """Whether the output ``out`` can take the statement's writes out of its storage order by a
        scatter (:func:`~compiler.stand_in.scatters`): an assignment, no reduction, of a format that scatters."""
        return self.stmt.op is None and not isinstance(self.stmt.rhs, N.Reduce) and scatters(out)

    def walks_stepped(self, e) -> bool:
        """Whether the strided slice ``e`` reads one access directly, at its index alone, whose level
        storing the sliced mode walks the entries a slice keeps (:func:`~.stepped.steps_through`)."""
        acc = e.operand
        if not (e.step != 1 and isinstance(acc, N.Access) and acc.tensor in self.formats and
                list(acc.indices).count(e.index) == 1):
            return False
        fmt = self.formats[acc.tensor]
        # (by storage mode: a SparseCOO level stores several modes)
        return steps_through(storage_levels(fmt)[fmt.mode_order.index(acc.indices.index(e.index))])

    def walks_collapse(self, n, var, loops) -> bool:
        """Whether ``n`` is a split of a collapse that the output's loops can walk by the collapse's
        loops: ``C[.., p, q, ..] = split(collapse(A[.., i, j, ..], (i, j) -> k), k -> (p, q))`` with
        ``p``'s loop just outside ``q``'s, every access of the collapse storing ``i`` before ``j``
        (the operand walked in its storage order), an output taking writes at any coordinate (a
        dense one: each ``(i, j)`` writes the one entry ``(p, q)`` it moves to), ``p`` and ``q``
        read nowhere else."""
        if not (isinstance(n, Split) and isinstance(n.operand, Collapse) and n.operand.result == n.index):
            return False
        (p, q), (i, j) = n.results, n.operand.indices
        if var.get(p) not in loops or loops[loops.index(var[p]) + 1:loops.index(var[p]) + 2] != [var.get(q)]:
            return False
        out = self.formats.get(self.stmt.lhs.tensor)
        if p not in self.stmt.lhs.indices or q not in self.stmt.lhs.indices:
            return False
        # (a sorted sparse output appends each fiber under the loops of its modes: its writes at
        # p, q computed inside the loops over i, j are not, and it is read by a gather instead)
        if out is not None and not all(lvl.slot_per_coordinate for lvl in out.levels):
            return False
        # (a concat making i or j splits its loop into one per part: the let-bound p, q would read
        # the loop it replaced; the collapse is gathered, each part read where the index falls in it)
        if any(isinstance(x, Concat) and x.result in (i, j) for x in N.walk(n.operand.operand)):
            return False
        for acc in N.accesses(n.operand):
            fmt = self.formats.get(acc.tensor)
            if fmt is not None and i in acc.indices and j in acc.indices and \
                    fmt.mode_order.index(acc.indices.index(j)) < fmt.mode_order.index(acc.indices.index(i)):
                return False
        # (an access of p or q elsewhere would be read at the let-bound quotient: located, not walked)
        for x in N.walk(self.rhs):
            if x is n:
                continue
            if isinstance(x, N.Access) and {p, q} & set(x.indices) or \
                    isinstance(x, ShapeOp) and {p, q} & set(x.produced()):
                return False
        return True

    # -- building -------------------------------------------------------------------------------------

    def build(self, loops, sc: Scope, env, choice, leaf, k: int = 0):
        """The loops from the ``k``-th in, a concatenated index's loop split into one loop per part,
        around what ``leaf(env, choice)`` gives at the innermost."""
        if k == len(loops):
            return leaf(env, choice)
        name = loops[k]
        if name not in sc.parts:
            stop = extent_ir(sc.extent_of[name], self.formats)
            return Loop(Index(name), Extent(Const(0, "int64"), stop), self.build(loops, sc, env, choice, leaf, k + 1))
        i = sc.parts[name]
        parts, offset = [], None
        for m, (part, size) in enumerate(sc.fissions[i]):
            at = Index(part) if offset is None else plus(Index(part), offset)
            step = sc.part_steps.get(part)
            walked = sc.part_collapsed.get(part)
            if walked is not None:
                # (a collapsed part's loops: its write is at their row-major coordinate, jj + ii·|j|, after the
                # parts before)
                at = walked.at if offset is None else plus(walked.at, offset)
            # (a strided part's one-step loop: its write is at t + the part's, as a strided loop's)
            here = at if step is None else plus(Index(step), at)
            # (a collapse's index written through this loop, j + l·|j|, reads the part's coordinate)
            moved = {x: substitute(v, Index(name), here) for x, v in env.items()}
            inner = self.build(loops, sc, {**moved, i: here}, {**choice, i: m}, leaf, k + 1)
            if step is not None:
                inner = Loop(Index(step), Extent(Const(0, "int64"), Const(1, "int64")), inner)
            if walked is not None:
                for x, extent in reversed(tuple(zip(walked.loops, walked.extents))):
                    inner = Loop(Index(x), Extent(Const(0, "int64"), extent_ir(extent, self.formats)), inner)
                parts.append(inner)
            else:
                parts.append(Loop(Index(part), Extent(Const(0, "int64"), extent_ir(size, self.formats)), inner))
            offset = extent_expr(size) if offset is None else plus(offset, extent_expr(size))
        return Block(tuple(parts))


__all__ = ["LoopPlanner", "Scope"]
