"""Emission, derived iteration spaces: split, fuse and pos loops (:mod:`compiler.lattice.derived`).

A mixin of :class:`~compiler.lattice.emitter.Emitter`. A split runs a loop in blocks (a dense
loop as ``for (o) for (i_in)``; a sparse, merged one as blocks of coordinates whose positions
carry over), a fuse runs two loops as one (``f / N2`` and ``f % N2``), and ``pos`` with a fuse walks
every position of a compressed matrix in one flat loop, its row tracked by a moving pointer.

Example: ``s[] = A[i, j]`` (CSR) runs ``fuse(i, j, ij) pos(ij, pA, A)``::

    for (int64 pA = A1_pos[0]; pA < A1_pos[A0_size]; pA++) t += A_val[pA];
"""

from __future__ import annotations



from ..errors import StrategyError
from ..imperative.ir import (Assign, BinOp, Break, Cast, Comment, CompoundAssign, Const, Declare, For, If, Load, Select,
                             Var, While)
from ..imperative.search import lower_bound_call
from .cfir import CForall, CLoop, one_case_always
from .exprs import literal_text, names_used


class DerivedLoops:
    """Loops of split, fused and position iteration spaces (a mixin of the emitter)."""

    def _derived_loop(self, var: str, lo, hi, body, what: str, v: Var | None = None, block_start=None) -> list:
        """``for v in [lo, hi): body`` (``v`` names ``var``), or its blocks when a split applies to ``var``.

        ``block_start(first)`` gives statements that open each block, ``first`` being the
        block's first value of ``v`` (a parallel block of fused positions finds its row).
        """
        split = self.splits.get(var)
        v = v or Var(self.name(("derived", var), var))
        if split is None:
            self.loop_vars[var] = v.name
            return self.parallel_pragma(var) + [For(v, lo, hi, body)]
        f = Const(split.factor, "int64")
        zero = isinstance(lo, Const) and lo.value == 0
        extent = hi if zero else BinOp("-", hi, lo)
        ceil = ceil_div(extent, f)
        o = Var(self.name(("split", split.outer), split.outer))
        inner = Var(self.name(("split", split.inner), split.inner))
        self.loop_vars.update({split.outer: o.name, split.inner: inner.name})
        pre = []
        if split.direction == "down":
            nblocks, bsize = ceil, f
        else:
            bsize = Var(self.name(("block", var), f"{var}_block"))
            nblocks = Var(self.name(("blocks", var), f"{var}_blocks"))
            pre += [Declare(bsize, "int64", ceil), Declare(nblocks, "int64", at_most(f, extent))]
        opening = []
        if block_start is not None:
            first = BinOp("*", o, bsize)
            opening = block_start(first if zero else BinOp("+", lo, first))
        if split.direction == "down" and not self._derives(split.inner) and not self._loops_move():
            # the tail guard is the inner loop's bound (the last block is cut at the end), not a
            # break inside it: a plain counted loop, which SIMD lanes can run
            if not zero and not isinstance(lo, (Var, Const)):
                start = Var(self.name(("start", var), f"{v.name}_start"))
                pre.append(Declare(start, "int64", lo))   # read once, not in every iteration
                lo = start
            left = BinOp("-", extent if zero else BinOp("-", hi, lo), BinOp("*", o, bsize))
            stop = Var(self.name(("stop", split.inner), f"{inner.name}_stop"))
            at = BinOp("+", BinOp("*", o, bsize), inner)
            block = [Declare(stop, "int64", Select(BinOp("<", left, bsize), left, bsize)),
                     For(inner, 0, stop, [Comment(f"{var} = {split.outer} * {split.factor} + {split.inner} "
                                                  f"({split}); the last block stops at the end"),
                                          Declare(v, "int64", at if zero else BinOp("+", lo, at)), *body])]
            return pre + self._derived_loop(split.outer, Const(0, "int64"), nblocks, opening + block, what, o)
        at = BinOp("+", BinOp("*", o, bsize), inner)
        guards = [Comment(f"{var} = {split.outer} * {'block' if split.direction == 'up' else split.factor} + "
                          f"{split.inner} ({split})"),
                  Declare(v, "int64", at if zero else BinOp("+", lo, at)),
                  If(BinOp(">=", v, hi), [Break()])]    # the tail guard: the last block is partial
        # (a split of the outer or the inner loop, a tile of tiles, is another derived loop of its own)
        inner_loop = self._derived_loop(split.inner, Const(0, "int64"), bsize, guards + body, what, inner)
        return pre + self._derived_loop(split.outer, Const(0, "int64"), nblocks, opening + inner_loop, what, o)

    def ordered_loops(self, fn):
        """``fn`` with the loops of a reorder after split, pos or fuse moved into its order
        (:class:`~compiler.lattice.schedule_compose.LoopOrder`); the derived loops were built
        together, each original loop's in one nest."""
        from dataclasses import replace
        from ..imperative.ir import Block
        from .schedule_compose import LoopOrder, moved_loops, permute_loops
        for r in self.setup.relations:
            if not isinstance(r, LoopOrder):
                continue
            what = f"reorder({', '.join(r.loops)}) does not apply"
            moving = moved_loops(r, self.setup.relations)
            made = {v for x in self.setup.relations for v in x.derived}
            merged = [n for n in moving if n in made and n not in self.loop_vars]
            if merged:
                raise StrategyError(f"{what}: {', '.join(merged)} {'runs' if len(merged) == 1 else 'run'} the blocks "
                                    f"of a split of a loop that merges "
                                    f"sparse levels (one while loop, its positions carried from one block to the "
                                    f"next), so no other loop can run between or around them; split a dense "
                                    f"loop or a pos loop, or reorder before the split")
            order = [self.loop_vars.get(n, n) for n in moving]
            body, moved = permute_loops(list(fn.body.body), order, what, self._set_once(r))
            if not moved:
                from ..imperative.traverse import walk as ir_walk
                counted = {x.var.name for x in ir_walk(fn.body) if isinstance(x, For)}
                lost = [n for n, c in zip(moving, order) if c not in counted]
                which = (f"{', '.join(lost)} {'is' if len(lost) == 1 else 'are'} not a counted loop of its own: "
                         if lost else "")
                raise StrategyError(f"{what}: its loops are not one nest of counted loops over {', '.join(order)} "
                                    f"({which}a loop over a sparse level iterates its positions, which depend on the "
                                    f"loops around it, so it cannot move out of them)")
            self.notes.append(f"loops moved into the order {', '.join(r.loops)}")
            fn = replace(fn, body=Block(tuple(body)))
        return fn

    def _loops_move(self) -> bool:
        """Whether a reorder moves loops past each other (a LoopOrder): then every split's inner loop
        runs the block's full size and breaks at the end (``if (i >= N) break``), so its bounds are
        the same in every block and other loops can move around it."""
        from .schedule_compose import LoopOrder
        return any(isinstance(r, LoopOrder) for r in self.setup.relations)

    def _set_once(self, order) -> frozenset:
        """The output's values when each iteration of the loops ``order`` moves sets its own element:
        a dense output indexed by every original loop they iterate (``C[i] = A[i] * B[i]`` tiled)."""
        from .iteration_graph import is_all_dense
        from .schedule_compose import origins
        made = origins(self.setup.relations)
        loops = {o for n in order.loops for o in made.get(n, (n,))}
        indices = {i.name for i in self.setup.output.indices}
        dense = is_all_dense(self.setup.output_format)
        return frozenset({self.val}) if dense and loops <= indices else frozenset()

    def _derives(self, var: str) -> bool:
        """Whether another relation (a split, fuse or pos) transforms ``var``."""
        return any(var in (getattr(r, "index", None), getattr(r, "outer", None), getattr(r, "inner", None))
                   for r in self.setup.relations if var not in getattr(r, "derived", ()))

    def derived_forall(self, n: CForall) -> list:
        """A forall iterated through its derived variables (see :mod:`compiler.lattice.derived`)."""
        name = n.index.name
        i = Var(name)
        iters = self.iters(n)
        one_loop = len(n.loops) == 1
        loop = n.loops[0] if n.loops else None
        dense = one_loop and loop.universe and not iters
        ops = " and ".join(it.described for it in iters)
        if name in self.fused_inner:
            how = self.fused_inner.pop(name)
            if how[0] == "div":
                _, f, size = how
                return [Declare(i, "int64", BinOp("%", f, size))] + self.loop_body(n, loop, i, [], advance=False)
            _, it, p, parent = how
            return [Declare(i, "int64", it.coord(p, parent))] + self.loop_body(n, loop, i, [it], single=True, advance=False)
        N = self.size(n.extent)
        out = self.reserve(n, iters, bool(loop and loop.universe), N)
        fuse = self.fuses.get(name)
        if fuse is not None:
            pos = self.poses.get(fuse.fused)
            # the loop over the outer variable: the dense range, or (with pos) the compressed
            # row level of the tensor whose positions the fused loop follows, alone
            rows_it = (iters[0] if one_loop and not loop.universe and len(iters) == 1 and iters[0].unique
                       and pos is not None and iters[0].tensor == pos.tensor and iters[0].compressed
                       else None)
            if not dense and rows_it is None:
                raise StrategyError(f"{fuse} does not apply: the loop over {name} iterates {ops or 'several loops'}; "
                                    f"only a dense outer loop, or the compressed row level of the tensor the "
                                    f"fused positions follow (pos), can be fused")
            inner = self._only_forall(loop, fuse)
            iters2 = self.iters(inner)
            loop2 = inner.loops[0] if len(inner.loops) == 1 else None
            N2 = self.size(inner.extent)
            if pos is None:
                if loop2 is None or not loop2.universe or iters2:
                    raise StrategyError(f"{fuse} does not apply: the loop over {fuse.inner} iterates "
                                        f"{' and '.join(it.described for it in iters2)}; fused alone, the "
                                        f"loop would visit the dense product of {fuse.outer} and {fuse.inner}. "
                                        f"Add pos({fuse.fused}, {fuse.fused}pos, <tensor>) to iterate its positions")
                f = Var(self.name(("derived", fuse.fused), fuse.fused))
                self.fused_inner[fuse.inner] = ("div", f, N2)
                body = [Declare(i, "int64", BinOp("/", f, N2))] + self.loop_body(n, loop, i, [], advance=False)
                stmts = self._derived_loop(fuse.fused, Const(0, "int64"), BinOp("*", N, N2), body, str(fuse), f)
                self._check_consumed(fuse)
                return out + [self.tag_loop(loop2, stmts)]
            return out + self._fused_positions(n, loop, loop2, inner, iters2, fuse, pos, rows_it)
        pos = self.poses.get(name)
        if pos is not None:
            it = self._pos_iterator(n, loop if one_loop else None, iters, pos, name)
            p = Var(self.name(("p", it.name, it.mode), pos.position))
            lo, hi = self.bounds(it)
            body = [Declare(i, "int64", self.coord(it, p))] + self.loop_body(n, loop, i, [it], single=True, advance=False)
            return out + [self.tag_loop(loop, self._derived_loop(pos.position, lo, hi, body, str(pos), p))]
        split = self.splits[name]
        block_pos = self.poses.get(split.inner)
        if block_pos is not None:
            it = self._pos_iterator(n, loop if one_loop else None, iters, block_pos, split.inner)
            return out + [self.tag_loop(loop, self._block_positions(n, loop, it, split, block_pos))]
        if not dense:
            # a coordinate split of a sparse (merged) loop: blocks of coordinates, positions carried over
            for v in (split.outer, split.inner):
                if v in self.splits:
                    raise StrategyError(f"{self.splits[v]} does not apply: {v} is a loop of {split}, a split of "
                                        f"the loop over {name}, which iterates {ops}: its blocks run in the one "
                                        f"while loop that merges them ({split.inner} is {name} less the block's "
                                        f"start, not a loop), so they cannot be split again; split a dense loop or "
                                        f"a pos loop, or split {name} once")
            return self.forall(n, block=split)
        return out + [self.tag_loop(loop, self._derived_loop(name, Const(0, "int64"), N,
                                                         self.loop_body(n, loop, i, [], advance=False), str(split), i))]

    def _block_positions(self, n: CForall, loop: CLoop, it, split, pos) -> list:
        """``split(i, i0, i1, b)`` + ``pos(i1, ip, A)``: for each block ``i0`` of coordinates
        ``[i0*b, i_hi)``, the positions of A's entries there.

        The block's first position is where the block before ended (carried); its end is the
        first position whose coordinate is ``i_hi`` or more (a binary search in A's sorted
        coordinates). A block holding no entry jumps to the block of the next entry, so a
        hypersparse loop costs its entries, not its blocks. On threads (``parallelize(i0)``)
        nothing is carried: each block finds both its first and its end position by a binary
        search, and every block is visited (a thread cannot jump its loop variable).
        """
        name = n.index.name
        if not it.entered_by_search:
            raise StrategyError(f"{pos} does not apply: a block of {split} finds its last position by a search "
                                f"of {it.described}'s coordinates, which it has no search for")
        if split.outer in self.splits:
            raise StrategyError(f"{self.splits[split.outer]} does not apply: {split.outer} runs the blocks of "
                                f"{split}, each over {pos}, one block's positions starting where the block before "
                                f"ended; split the positions {pos.position} instead")
        i, N = Var(name), self.size(n.extent)
        lo, hi = self.bounds(it)
        f = Const(split.factor, "int64")
        o = Var(self.name(("split", split.outer), split.outer))
        self.loop_vars[split.outer] = o.name
        pre = []
        if split.direction == "down":
            nblocks, bsize = ceil_div(N, f), f
        else:
            bsize = Var(self.name(("block", name), f"{name}_block"))
            nblocks = Var(self.name(("blocks", name), f"{name}_blocks"))
            pre += [Declare(bsize, "int64", ceil_div(N, f)), Declare(nblocks, "int64", at_most(f, N))]
        first = Var(self.name(("block_first", pos.position), f"{pos.position}_lo"))
        last = Var(self.name(("block_last", pos.position), f"{pos.position}_hi"))
        end = Var(self.name(("block_end", pos.position), f"{pos.position}_end"))
        limit = Var(self.name(("block_end", name), f"{name}_hi"))
        p = Var(self.name(("p", it.name, it.mode), pos.position))
        start = BinOp("*", o, bsize)
        body = [Declare(i, "int64", self.coord(it, p))] + self.loop_body(n, loop, i, [it], single=True, advance=False)
        nxt = self.coord(it, first)
        if self.setup.parallel is not None and self.setup.parallel.name == split.outer:
            since = Var(self.name(("block_start", name), f"{name}_lo"))
            block = [Comment(f"{split}, {pos}: block {split.outer} holds the coordinates {since.name} <= {name} < "
                             f"{limit.name}, at {it.tensor}'s positions [{first.name}, {last.name}); each block "
                             f"searches both ends, so the blocks run on threads in any order"),
                     Declare(since, "int64", start),
                     Declare(limit, "int64", Select(BinOp("<", since, BinOp("-", N, bsize)),
                                                    BinOp("+", since, bsize), N)),
                     Declare(first, "int64", it.first_at_least(lo, hi, since)),
                     Declare(last, "int64", it.first_at_least(first, hi, limit)),
                     *self._derived_loop(pos.position, first, last, body, str(pos), p)]
            return pre + self.parallel_pragma(split.outer) + [For(o, 0, nblocks, block)]
        block = [Comment(f"{split}, {pos}: block {split.outer} holds the coordinates {name} < {limit.name}, "
                         f"at {it.tensor}'s positions [{first.name}, {last.name})"),
                 If(BinOp("==", first, end), [Break()]),
                 # (the block's end, start + block, is not computed past N: near 2^63 it would overflow)
                 Declare(limit, "int64", Select(BinOp("<", start, BinOp("-", N, bsize)), BinOp("+", start, bsize), N)),
                 If(BinOp(">=", nxt, limit),
                    [Comment(f"no entry in this block: on to the block of {it.tensor}'s next entry"),
                     Assign(o, BinOp("-", BinOp("/", nxt, bsize), Const(1, "int64")))],
                    [Declare(last, "int64", it.first_at_least(first, end, limit)),
                     *self._derived_loop(pos.position, first, last, body, str(pos), p),
                     Assign(first, last)])]
        return pre + [Declare(first, "int64", lo), Declare(end, "int64", hi), For(o, 0, nblocks, block)]

    def _fused_positions(self, n: CForall, loop: CLoop, loop2: CLoop, inner: CForall, iters2, fuse, pos,
                         rows_it) -> list:
        """``fuse(i, j, f)`` + ``pos(f, fp, A)``: one loop over all of A's positions of ``j``.

        The row of a position is tracked by a moving row pointer, ``while (fp ==
        pos[r + 1]) r++`` (while, not if: empty rows are skipped). The rows are the
        coordinates ``i`` of a Dense parent level (CSR), or the positions ``r`` of a
        compressed one (DCSR: ``i = A0_idx[r]``). Sequentially the pointer is carried from
        block to block; a parallel block (``parallelize`` of the split's outer loop)
        first finds the row of its first position by binary search (pitfall 17).
        """
        name = n.index.name
        i = Var(name)
        N = self.size(n.extent)
        it = self._pos_iterator(inner, loop2, iters2, pos, fuse.inner)
        key = self.it_key(it)
        row_it = self.setup.iters[key][it.mode - 1]
        posbuf = self.param(it.param(it.starts))
        self.param(it.param(it.crd))
        if rows_it is None:
            # Dense rows: the row pointer is i itself; pos is indexed by the row's position
            parent = self.parent_of(row_it)
            trivial = isinstance(parent, Const) and parent.value == 0
            r = i
            at = (lambda q: q) if trivial else (lambda q: row_it.locate(parent, q))  # noqa: E731
            rlo, rhi = Const(0, "int64"), N
            coord = []
        else:
            r = self.pvar(rows_it)
            self.notes.append(f"{fuse} over {pos.tensor}'s compressed row level: the row pointer {r.name} "
                              f"walks {pos.tensor}'s row positions")
            at = lambda q: q  # noqa: E731
            rlo, rhi = self.bounds(rows_it)
            coord = [Declare(i, "int64", self.coord(rows_it, r))]
        p = Var(self.name(("p", it.name, it.mode), pos.position))
        self.fused_inner[fuse.inner] = ("pos", it, p, at(r))
        lo, hi = Load(posbuf, at(rlo)), Load(posbuf, at(rhi))
        fold = self._flat_fold(inner, loop2, fuse, BinOp("*", N, self.size(inner.extent)), BinOp("-", hi, lo))
        walk = [Comment(f"{r.name}: the row of position {p.name}; while, not if, to skip empty rows"),
                While(BinOp("==", p, Load(posbuf, BinOp("+", at(r), 1))), [CompoundAssign("+", r, Const(1, "int64"))])]
        if rows_it is None:
            inner_body = self.loop_body(n, loop, i, [], advance=False)
        else:
            inner_body = self.loop_body(n, loop, i, [rows_it], single=True, advance=False)
        split = self.splits.get(pos.position)
        parallel = split is not None and self.setup.parallel is not None and self.setup.parallel.name == split.outer
        if not {i.name, r.name} & names_used(inner_body):
            # nothing reads the row (a reduction over every entry): no row pointer to walk, nor for a
            # parallel block to find by binary search
            self.notes.append(f"{fuse} with {pos}: the loop reads no row, so no row pointer walks")
            self.counting.pop(fuse.inner, None)
            self._check_consumed(fuse)
            return fold[0] + [self.tag_loop(loop2, self._derived_loop(pos.position, lo, hi, inner_body, str(pos), p))] \
                + fold[1]
        body = walk + coord + inner_body
        if parallel:
            # each block starts at the row holding its first position: the first row whose
            # positions end after it, pos[r + 1] > first (one binary search over the row pointers)
            first = Var(self.name(("search", fuse.fused, "first"), f"{pos.position}_first"))
            one = Const(1, "int64")
            after = (lambda e: Const(e.value + 1, "int64") if isinstance(e, Const)  # noqa: E731
                     else BinOp("+", e, one))
            rows_at = BinOp("+", first, one)

            def search(start):
                k = lower_bound_call(posbuf, after(at(rlo)), after(at(rhi)), rows_at)
                # (the row pointers of a Dense level under others start at its fiber's first row)
                r0 = BinOp("-", k, one) if at(rlo) is rlo else BinOp("-", k, after(at(rlo)))
                return [Comment(f"this block's first row: binary search for the row holding position "
                                f"{first.name}"),
                        Declare(first, "int64", start), Declare(r, "int64", r0)]
            stmts = self._derived_loop(pos.position, lo, hi, body, str(pos), p, block_start=search)
            self.notes.append(f"the blocks of {split.outer} run on threads; each finds the row of its first "
                              f"position by binary search, then walks")
        else:
            stmts = [Declare(r, "int64", rlo)] + self._derived_loop(pos.position, lo, hi, body, str(pos), p)
        self.counting.pop(fuse.inner, None)
        self._check_consumed(fuse)
        return fold[0] + [self.tag_loop(loop2, stmts)] + fold[1]

    def _flat_fold(self, inner: CForall, loop2: CLoop, fuse, coordinates, positions) -> tuple[list, list]:
        """``(before, after)`` the flat loop of fused positions: the fold of the fill (the
        inner forall's :class:`CFold`) over every coordinate of the fused pair the loop skips.

        When the one case runs at every position, the missing coordinates are all of them
        (``coordinates``) less the positions; else each case that runs counts itself.
        """
        f = inner.fold
        if f is None:
            return [], []
        name = fuse.inner
        missing = Var(self.name(("missing", name, id(inner)), f"{fuse.fused}_missing"))
        note = Comment(f"the coordinates of ({fuse.outer}, {fuse.inner}) that no position holds have the fill "
                       f"{literal_text(f.fill)}: they are folded into {f.lhs.tensor} after the loop")
        if loop2 is not None and one_case_always(loop2):
            return [note], [Declare(missing, "int64", BinOp("-", coordinates, positions)),
                            *self.fold_update(f, missing, self.reads(inner))]
        if self.setup.parallel is not None:
            raise StrategyError(f"parallelize({self.setup.parallel}) does not apply: the fused loop counts the "
                                f"positions where a case ran, to fold the fill in after it, on one thread")
        ran = Var(self.name(("fold", name, id(inner)), f"{fuse.fused}_ran"))
        self.counting[name] = CompoundAssign("+", ran, Const(1, "int64"))
        return [note, Declare(ran, "int64", Const(0, "int64"))], [
            Declare(missing, "int64", BinOp("-", coordinates, ran)), *self.fold_update(f, missing, self.reads(inner))]

    def _only_forall(self, loop: CLoop, fuse) -> CForall:
        bodies = [c.body for c in loop.cases if not c.omit]
        body = bodies[0] if len(bodies) == 1 else None
        if not isinstance(body, CForall) or body.index.name != fuse.inner:
            raise StrategyError(f"{fuse} does not apply: the loop over {fuse.inner} is not the only statement "
                                f"in the loop over {fuse.outer}")
        return body

    def _check_consumed(self, fuse):
        if fuse.inner in self.fused_inner:
            del self.fused_inner[fuse.inner]
            raise StrategyError(f"{fuse} does not apply: the loop over {fuse.inner} is not directly inside "
                                f"the loop over {fuse.outer}")

    def _pos_iterator(self, n: CForall, loop, iters, pos, index: str):
        """The one iterator a position loop follows; every other operand must be located."""
        tensor_its = [it for it in iters if it.tensor == pos.tensor]
        others = [it for it in iters if it.tensor != pos.tensor]
        if loop is None or loop.universe or len(tensor_its) != 1 or others or not tensor_its[0].unique:
            what = (f"it also iterates {' and '.join(it.described for it in others)}, which cannot be located by "
                    f"coordinate" if others else
                    f"it visits every coordinate of {index} (a union with the dense range): where "
                    f"{pos.tensor} stores nothing, the value still counts, as it is neither the result's fill nor "
                    f"the identity of the reduction" if any(x.universe for x in n.loops)
                    else f"{pos.tensor} is not iterated there")
            raise StrategyError(f"{pos} does not apply: the loop over {index} must follow {pos.tensor}'s positions "
                                f"alone, but {what}")
        return tensor_its[0]



def at_most(f, n):
    """``min(f, n)``: split up runs no more blocks than there are elements (each holds one at
    least); a factor of 2^62 over 2 elements would otherwise run 2^62 empty blocks."""
    return Select(BinOp("<", f, n), f, n)


def ceil_div(n, f):
    """``n / f + (n % f != 0)``: the number of blocks of ``f`` that cover ``n``, for ``n >= 0``.
    (``(n + f - 1) / f`` overflows for an extent near 2^63, and no block would run.)"""
    return BinOp("+", BinOp("/", n, f), Cast("int64", BinOp("!=", BinOp("%", n, f), Const(0, "int64"))))


__all__ = ["DerivedLoops", "at_most", "ceil_div"]
