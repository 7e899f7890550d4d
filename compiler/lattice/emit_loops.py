"""Emission, loops and coiteration: a :class:`~compiler.lattice.cfir.CForall` in the imperative IR.

A mixin of :class:`~compiler.lattice.emitter.Emitter`. Each forall becomes iterator
initialization, one ``while`` per lattice loop (a ``for`` when one unique iterator or the dense
range is all there is), the least coordinate as ``i``, segment ends of non-unique levels,
locates, the ``if / else if`` chain of its cases and conditional increments; a loop where several
regions work branches once on exactly which iterators are at ``i``. A loop the lattice merged from
several (:func:`~compiler.lattice.lattice.merge_loops`) runs while one of them would, an iterator
out of entries at the extent, a coordinate no case tests true; its one case, where it has one
(:class:`~compiler.lattice.cfir.CCase` ``fill_absent``), reads each operand as its value where its
iterator is at ``i`` and as its fill elsewhere; at an outer level, its fiber below ends where it
starts where its iterator is not at ``i`` (``pA1_end = iA == i ? A1_pos[pA0 + 1] : pA1``). A fold of
the fill counts the coordinates where a case ran and folds the fill in for the others after the loop.

Example: ``a[i] = b[i] + c[i]`` over two sparse vectors::

    while (pb0 < pb0_end && pc0 < pc0_end) {
        int64 ib = b0_idx[pb0]; int64 ic = c0_idx[pc0];
        int64 i = ic < ib ? ic : ib;
        if (ib == i && ic == i) ... else if (ib == i) ... else ...
        pb0 += (int64)(ib == i); pc0 += (int64)(ic == i);
    }
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from .. import binding
from ..errors import StrategyError
from ..imperative.ir import (Assign, BinOp, Break, Cast, Comment, CompoundAssign, Const, Declare, For, If, Load, Origin, Select,
                             Store, Tagged, UnOp, Var, While, and_, or_)
from ..imperative.search import gallop_past
from ..levels import Pattern
from ..notation.node_provenance import computing
from ..opimpls import real_part_dtype
from ..values import same_value
from .cfir import CAssign, CCase, CForall, CLoop, FlatLocator, case_tag, headline, loop_tag, one_case_always
from .cin import expr_accesses
from .diagonal import Found
from .exprs import const_of, literal_text, not_fill
from .iterators import WorkspaceIterator
from .lattice import literal

from .emit_derived import at_most, ceil_div
from .emit_runs import sum_over_runs

class Loops:
    """The loops of a forall, their cases and folds (a mixin of the emitter)."""

    def forall(self, n: CForall, block=None) -> list:
        """The loops of a forall; ``block`` (a :class:`~compiler.lattice.derived.Split`) runs them in blocks
        of coordinates (a coordinate split of a sparse loop). A fold (:class:`CFold`) counts the
        coordinates where a case ran, then folds the fill in for the others."""
        if n.fold is None or n.index.name in self.fused_inner or n.index.name in self.fuses:
            return self._forall_loops(n, block)   # fused positions fold after the flat loop
        if n.fold.per is not None:
            return self._fold_per_coordinate(n, block)
        f, N = n.fold, self.size(n.extent)
        missing = N
        out = [Comment(f"the coordinates of {n.index} where no case runs hold the fill {literal_text(f.fill)}: "
                       f"they are folded into {f.lhs.tensor if not f.lhs.indices else f.lhs} after the loop")]
        every = self._every_position_runs(n)
        if every is not None:
            # one case at every position of one fiber: the fiber's length counts the coordinates
            out += self._forall_loops(n, block)
            missing = BinOp("-", N, self.fiber_length(every))
        elif n.loops:
            ran = Var(self.name(("fold", n.index.name, id(n)), f"{n.index.name}_ran"))
            self.counting[n.index.name] = CompoundAssign("+", ran, Const(1, "int64"))
            out += [Declare(ran, "int64", Const(0, "int64")), *self._forall_loops(n, block)]
            del self.counting[n.index.name]
            missing = BinOp("-", N, ran)
        if not isinstance(missing, Var):
            named = Var(self.name(("missing", n.index.name, id(n)), f"{n.index.name}_missing"))
            out.append(Declare(named, "int64", missing))
            missing = named
        return out + self.fold_update(f, missing, self.reads(n))

    def fold_update(self, f, missing: Var, summand: set = frozenset()):
        """``if (missing > 0)`` fold the fill into ``f.lhs``: once for an idempotent operator,
        ``missing`` times for ``+``. ``summand``: the tensors the reduced value reads, whose fills
        it computes with (the expression tree's nodes of the summand are linked with it)."""
        if f.op.idempotent:
            update = self.assign(CAssign(f.lhs, f.op, literal(f.fill), f.output))
        else:
            # (a complex fill's parts each times the count, as the sum of its copies: C's real times complex, where a
            # complex count's product makes inf * 0 of inf + 0j)
            times = Cast(real_part_dtype(f.dtype).name, missing)
            if not same_value(f.fill, 1):
                times = BinOp("*", times, const_of(f.fill, f.dtype))
            update = self.assign(CAssign(f.lhs, f.op, literal(f.fill), f.output), value=(times, f.dtype))
        return computing([If(BinOp(">", missing, Const(0, "int64")), update)], (), f.lhs.tensor if f.output else None,
                         fills=summand)

    def _fold_per_coordinate(self, n: CForall, block=None) -> list:
        """A reduction over ``i`` into a dense ``y[j]`` (:class:`CFold` with ``per``): the loop
        over ``j`` counts, per ``j``, the coordinates of ``i`` where a case ran, into a scratch
        array; after the loop over ``i`` each ``y[j]`` that missed one takes the fill."""
        f, N = n.fold, self.size(n.extent)
        j = f.per
        J = self.size(self.setup.extents[j])
        counts = self.name(("tally", j.name, id(n)), f"{j.name}_ran")   # one per nest of a sequence
        self.allocs.append((counts, "int64", J, Const(0, "int64")))
        self.counting[j.name] = Store(counts, Var(j.name), Const(1, "int64"), "+")
        loops = self._forall_loops(n, block)
        del self.counting[j.name]
        jv = Var(j.name)
        missing = Var(self.name(("missing", n.index.name, id(n)), f"{n.index.name}_missing"))
        # (inside other loops the counts start at zero again for their next iteration)
        again = [Store(counts, jv, Const(0, "int64"))] if f.again else []
        return [Comment(f"{counts}[{j}] counts the coordinates of {n.index} where a case ran at {j}; the others "
                        f"hold the fill {literal_text(f.fill)}, folded into {f.lhs} after the loop"), *loops,
                For(jv, 0, J, [Declare(missing, "int64", BinOp("-", N, Load(counts, jv))),
                               *self.fold_update(f, missing, self.reads(n)), *again])]

    def _every_position_runs(self, n: CForall):
        """The iterator of ``n``'s one loop if its one case runs at every position (no tests), else None."""
        if len(n.loops) != 1 or n.index.name in self.derived_loops or n.index.name in self.fused_inner:
            return None
        loop = n.loops[0]
        if loop.universe or len(loop.iterated) != 1 or not loop.iterated[0].unique or not one_case_always(loop) \
                or not loop.iterated[0].visits_every_position:
            return None
        return loop.iterated[0]

    def _forall_loops(self, n: CForall, block=None) -> list:
        if block is None:
            n = self.locate_bytemaps(n)
        if block is None and (n.index.name in self.fused_inner or n.index.name in self.derived_loops):
            return self.derived_forall(n)
        i = Var(n.index.name)
        N = self.size(n.extent)
        universe = bool(n.loops) and n.loops[0].universe
        iters = []
        for loop in n.loops:
            for it in loop.iterated:
                if it not in iters:
                    iters.append(it)
        out = self.reserve(n, iters, universe, N)
        simple = len(n.loops) == 1 and len(iters) <= 1 and not (universe and iters) and block is None
        par = self.omp_for() if n.index == self.setup.parallel else []
        if par and (n.fold is not None or n.tally):
            raise StrategyError(f"parallelize({n.index}) does not apply: the loop over {n.index} counts the "
                                f"coordinates where a case ran, to fold the fill in after it, on one thread")
        # parallel blocks: each finds its iterators' first positions by binary search, as TACO's
        # parallel split of a sparse loop does; a serial split carries them from block to block
        threads = block is not None and self.setup.parallel is not None and self.setup.parallel.name == block.outer
        if threads:
            self.check_parallel_blocks(n, block, iters)
        if par and n.loops and not (simple and (not iters or iters[0].unique)):   # no loops: nothing runs
            what = (f"merges {' and '.join(it.described for it in iters)} in a while loop" if iters else
                    f"runs as {len(n.loops)} loops one after another")
            hint = (f"; split it and run its blocks on threads, each finding its first positions by a binary "
                    f"search: split({n.index}, {n.index}0, {n.index}1, 256).parallelize({n.index}0)"
                    if iters and all(it.entered_by_search for it in iters) else "")
            raise StrategyError(f"parallelize({n.index}) does not apply: the loop over {n.index} {what}, whose "
                                f"iterations depend on each other{hint}")
        if simple and not iters:
            # (the pragma inside the tag: a prefetch put before the loop goes before the pragma too)
            return out + [self.tag_loop(n.loops[0], par + [For(i, 0, N, self.loop_body(n, n.loops[0], i, iterated=[],
                                                                                         advance=False))])]
        if simple and iters[0].unique:
            it = iters[0]
            p = self.pvar(it)
            lo, hi = self.bounds(it)
            coord = self.assembled.pop(it.name, None) if isinstance(it, WorkspaceIterator) else None
            coord = coord if coord is not None else self.coord(it, p)
            inner = self.loop_body(n, n.loops[0], i, [it], single=True, advance=False)
            runs = None if par else self.sum_runs(n, it, inner, [i, p])
            if runs is not None:
                return out + [self.tag_loop(n.loops[0], runs)]
            body = self.block_sync(it, p) + [Declare(i, "int64", coord)] + inner
            return out + self.block_decl(it) + [self.tag_loop(n.loops[0], par + [For(p, lo, hi, body)])]
        starts = []
        for it in iters:
            p = self.pvar(it)
            lo, hi = self.bounds(it, start=p)
            end = Var(p.name + "_end")
            if threads:
                starts.append((p, lo, end, it))
                out.append(Declare(end, "int64", hi))
            else:
                out += [Declare(p, "int64", lo), Declare(end, "int64", hi), *self.block_decl(it)]
        if universe and not threads:
            out.append(Declare(i, "int64", Const(0, "int64")))
        loops_ir = []
        if block is not None:
            f = Const(block.factor, "int64")
            ceil = ceil_div(N, f)
            o = Var(self.name(("split", block.outer), block.outer))
            limit = Var(self.name(("block_end", n.index.name), f"{n.index.name}_hi"))
            if block.direction == "down":
                nblocks, bsize = ceil, f
            else:
                bsize = Var(self.name(("block", n.index.name), f"{n.index.name}_block"))
                nblocks = Var(self.name(("blocks", n.index.name), f"{n.index.name}_blocks"))
                out += [Declare(bsize, "int64", ceil), Declare(nblocks, "int64", at_most(f, N))]
            start = BinOp("*", o, bsize)
        for loop in n.loops:
            its = list(loop.iterated)
            conds = [self.has_entry(it) for it in its]
            if loop.any_of:
                # the loops merged into this one (lattice.merge_loops): on while one of them would be,
                # an iterator out of entries at the extent, a coordinate no case tests true
                conds = [] if universe else [or_(*(and_(*(self.has_entry(it) for it in part))
                                                   for part in loop.any_of))]
            if universe:
                conds.append(BinOp("<", i, N if block is None else limit))
            single = len(its) == 1 and not universe and not loop.any_of
            body = []
            coord = {}
            for it in its:
                p = self.pvar(it)
                body += self.block_sync(it, p)
                if single:
                    body.append(Declare(i, "int64", self.coord(it, p)))
                    coord[it] = i
                else:
                    c = self.cvar(it, n.index)
                    at = self.coord(it, p)
                    body.append(Declare(c, "int64", Select(self.has_entry(it), at, N) if loop.any_of else at))
                    coord[it] = c
            busy = {frozenset(c.tests) for c in loop.cases if not c.omit}
            pair = (len(its) == 2 and not universe and all(it.unique for it in its) and not loop.located
                    and len(busy) >= 2 and block is None)
            if len(its) > 3 and not universe:
                # (one comparison a line: nested, the least of n coordinates repeats the first 2^(n-1) times)
                body.append(Declare(i, "int64", coord[its[0]]))
                body += [Assign(i, Select(BinOp("<", coord[it], i), coord[it], i)) for it in its[1:]]
            elif len(its) > 1 and not universe and not pair:
                m = coord[its[0]]
                for it in its[1:]:
                    c = coord[it]
                    m = Select(BinOp("<", c, m), c, m)
                body.append(Declare(i, "int64", m))
            if block is not None and not universe:
                # the block ends here: the positions stay for the next block
                body.append(If(BinOp(">=", i, limit), [Break()]))
            body += self.loop_body(n, loop, i, its, single=single, coord=coord, pair=pair)
            loops_ir.append(self.tag_loop(loop, While(and_(*conds), body)))
        if block is None:
            return out + loops_ir
        guard = Comment(f"{block}: block {block.outer} holds the coordinates {n.index} < {limit.name} "
                        f"(the tail guard and the block's end); the loops walk {n.index} itself, so "
                        f"{block.inner} = {n.index} - {block.outer} * "
                        f"{'block' if block.direction == 'up' else block.factor} needs no variable")
        # (the block's end, start + block, is not computed past N: near 2^63 it would overflow)
        end = Select(BinOp("<", start, BinOp("-", N, bsize)), BinOp("+", start, bsize), N)
        if threads:
            return out + self.parallel_blocks(n, block, o, nblocks, bsize, limit, N, starts, universe, guard,
                                              loops_ir)
        blocks = [guard, Declare(limit, "int64", end)]
        if universe or not iters:
            return out + [For(o, 0, nblocks, blocks + loops_ir)]
        # a block that no operand has an entry in is skipped: the blocks of a hypersparse loop
        # (2^60 of them at n = 2^62) are not visited one by one
        nxt = Var(self.name(("next", n.index.name), f"{n.index.name}_next"))
        first, *others = iters
        blocks += [If(self.has_entry(it), sync) for it in iters
                   for sync in [self.block_sync(it, self.pvar(it))] if sync]
        blocks.append(Declare(nxt, "int64", Select(self.has_entry(first), self.coord(first, self.pvar(first)), N)))
        for it in others:
            c = self.coord(it, self.pvar(it))
            blocks.append(If(and_(self.has_entry(it), BinOp("<", c, nxt)), [Assign(nxt, c)]))
        skip = [Comment(f"no entry before {limit.name}: on to the block of {nxt.name} (none left: done)"),
                If(BinOp("==", nxt, N), [Break()]),
                Assign(o, BinOp("-", BinOp("/", nxt, bsize), Const(1, "int64")))]
        return out + [For(o, 0, nblocks, blocks + [If(BinOp(">=", nxt, limit), skip, loops_ir)])]

    def sum_runs(self, n: CForall, it, body: list, walk_vars: list) -> list | None:
        """The loop over ``it``'s runs adding each run's value times its length, when ``body``
        only adds a value the coordinate does not change to a scalar (:mod:`.emit_runs`)."""
        r = self.block_var(it)
        if r is None:
            return None
        scalars = {name: dt for name, (t, dt) in self.setup.temps.items() if not t.dense and not t.workspace}
        runs = sum_over_runs(it, body, walk_vars, r, self.parent_of(it), scalars)
        if runs is not None:
            self.notes.append(f"forall {n.index}: each run of {it.described} holds one value, so the sum over "
                              f"{n.index} adds it once per run, times the run's length")
        return runs

    def tag_loop(self, loop: CLoop, stmt):
        """``stmt`` (a lattice loop, or a list of statements) tagged ``lattice:<index>:<point>``."""
        operands = tuple(dict.fromkeys(it.name for it in loop.iterated))
        return Tagged(loop_tag(loop),
                      stmt if isinstance(stmt, list) else [stmt], headline(loop),
                      Origin("lattice", str(loop.index), operands))

    def _case_tag(self, index, case: CCase, stmts: list) -> list:
        """A case's statements tagged ``lattice:<index>:<present operands>``."""
        names = [self.setup.names[k] for k in case.present]
        return ([Tagged(case_tag(index, names), stmts, headline(case),
                        Origin("lattice", str(index), tuple(names)))]
                if stmts else stmts)

    def iters(self, n: CForall) -> list:
        iters = []
        for loop in n.loops:
            for it in loop.iterated:
                if it not in iters:
                    iters.append(it)
        return iters

    def loop_body(self, n: CForall, loop: CLoop, i: Var, iterated, single=False, coord=None,
                  advance=True, pair=False) -> list:
        s = self.setup
        body = []
        coord = coord or {it: i for it in iterated}
        segs = {}
        for it in iterated:
            if not it.unique:
                sv, stmts = self.segend(it, coord[it])
                segs[it] = sv
                body += stmts
        located, later = {}, []
        for loc in loop.located:
            if isinstance(loc, FlatLocator) and loc.tensor in s.temps:
                continue   # a dense workspace is read by coordinate (value_of)
            if isinstance(loc, FlatLocator):
                fmt = s.formats[loc.tensor]
                acc = next(a for a in expr_accesses(s.program.rhs) if str(a) == loc.key)
                pos = None
                for sm, m in enumerate(fmt.mode_order):
                    idx = Var(acc.indices[m].name)
                    size = self.size(binding.array_name(loc.tensor, sm, "size"))
                    pos = idx if pos is None else BinOp("+", BinOp("*", pos, size), idx)
                pos = pos if pos is not None else Const(0, "int64")
                if isinstance(pos, Var):
                    pv = pos
                else:
                    pv = Var(self.name(("flat", loc.name), f"p{loc.name}"))
                    body.append(Declare(pv, "int64", pos))
                located[loc.key] = (pv, len(s.paths[loc.key]))
            else:
                key = self.it_key(loc)
                # a repeated index (a diagonal, B[i, i, j]) locates a level under one located just above
                above = s.iters[key][loc.mode - 1]
                if isinstance(loc, Found) and above.kind == "sparse":
                    # searched under the level above, iterated or located (a hash's row, -1 where it
                    # is not stored), in each case the access is present at i (none: absent here)
                    later += [loc] if above in iterated or above in loop.located else []
                    continue
                parent = located[key][0] if located.get(key, (None, -1))[1] == loc.mode else self.parent_of(loc)
                if isinstance(loc, Found):   # a diagonal's sparse last level, searched for i
                    pv, stmts = self.find_on_diagonal(loc, parent, i)
                    body += stmts
                elif loc.probed:
                    pv = self.pvar(loc)
                    fresh = lambda base, loc=loc: Var(self.name(("probe", loc.name, loc.mode, base),  # noqa: E731
                                                                f"{base}{loc.name}{loc.level}"))
                    body += loc.locate_stmts(pv, parent, i, fresh, self.hash_capacity(loc))
                elif isinstance(parent, Const) and parent.value == 0:
                    pv = i
                else:
                    pv = self.pvar(loc)
                    body.append(Declare(pv, "int64", loc.locate(parent, i)))
                located[self.it_key(loc)] = (pv, loc.mode + 1)
        busy = {frozenset(c.tests) for c in loop.cases if not c.omit}
        if single or len(iterated) > 4 or len(busy) < 2:
            # one region does the work (an intersection): test it, advance branch-free
            body += self._case_chain(loop, iterated, segs, located, coord, i, tested=True, later=later)
            body += self._advance(iterated, segs, coord, i, single, advance,
                                  self._galloping(loop, iterated, busy) if advance and not single
                                  and not loop.any_of else {})
        else:
            # dispatch on exactly which iterators are at i: each branch runs its cases and
            # advances exactly those iterators (most specific first; the last is the else)
            subsets = [frozenset(c) for r in range(len(iterated), 0, -1)
                       for c in itertools.combinations(iterated, r)]
            if loop.universe:
                subsets.append(frozenset())
            branches = []
            for q in subsets:
                cases = [c for c in loop.cases if set(c.tests) <= q]
                stmts = self._case_chain(replace(loop, cases=tuple(cases)), iterated, segs, located, coord, i,
                                         tested=False, later=later)
                at = [it for it in iterated if it in q]
                stmts += self._advance(at, segs, coord, i, True, advance)
                conds = [BinOp("==", coord[it], i) for it in at]
                if pair:
                    # two iterators: compare their coordinates directly, as scipy's merge does
                    a, b = (coord[it] for it in iterated)
                    conds = [BinOp("==", a, b)] if len(at) == 2 else [BinOp("<", a, b)] if at == [iterated[0]] else []
                    stmts = [Declare(i, "int64", coord[at[0]])] + stmts
                branches.append((conds, stmts))
            last_conds, last = branches[-1]
            branches[-1] = ([], last)
            body += _if_chain(branches)
        if loop.universe and advance:
            body.append(CompoundAssign("+", i, Const(1, "int64")))
        return body

    def _case_chain(self, loop, iterated, segs, located, coord, i, tested: bool, later=()) -> list:
        """The ``if / else if`` chain of a loop's cases (coordinate tests only when ``tested``); ``later``:
        a diagonal's last levels under iterated ones (DCSR's, COO's rows), searched in each case where
        that level is at i, once its position is known."""
        s = self.setup
        chain = []
        for case in loop.cases:
            conds = [BinOp("==", coord[t], i) for t in case.tests] if tested else []
            if case.fill_absent and not loop.universe and not self._each_alone(loop):
                # (where one of the merged loops would have run a case)
                conds.append(or_(*(and_(*(BinOp("==", coord[it], i) for it in part)) for part in loop.any_of)))
            for loc in loop.located:
                if getattr(loc, "locatable", False) and self.it_key(loc) in case.present:
                    self.param(loc.param(loc.presence_array))
                    conds.append(loc.present(located[self.it_key(loc)][0]))
            for key in case.value_tests:
                acc = s.access(key)
                if acc.tensor in s.formats and isinstance(s.formats[acc.tensor].leaf, Pattern):
                    continue
                if any(self.it_key(loc) == key for loc in later):
                    raise StrategyError(f"{acc} is a diagonal under a sparse level whose entries' values this "
                                        f"loop tests against the fill; the lattice strategy searches it only "
                                        f"in the case's body; store {acc.tensor} as csr or csc, or use "
                                        f"strategy='looplets'")
                self.set_parents(iterated, segs, located, case, i)
                v, dt = self.value_of(acc)
                conds.append(not_fill(v, dt, s.fill_of(acc)))
            if case.omit:
                stmts = [Comment("omitted: " + " ∩ ".join(self.setup.names[k] for k in case.present))]
            else:
                self.set_parents(iterated, segs, located, case, i)
                finds = []
                for loc in later:
                    key = self.it_key(loc)
                    if key in case.present:
                        pv, stmts = self.find_on_diagonal(loc, self.parent[(key, loc.mode)], i)
                        self.parent[(key, loc.mode + 1)] = pv
                        finds += stmts
                reads = self._read_or_fill(case, iterated, coord, i)
                outer = dict(self.empty_unless)
                if case.fill_absent and not isinstance(case.body, CAssign):
                    # (an outer level's one case: an operand not at i has an empty fiber below)
                    self.empty_unless.update({(self.it_key(it), it.mode + 1): BinOp("==", coord[it], i)
                                              for it in iterated if self.it_key(it) in case.fill_absent})
                try:
                    body = self.case_body(loop.index, self.emit(case.body))
                finally:
                    self.read_as.clear()
                    self.empty_unless = outer
                stmts = self._case_tag(loop.index, case, finds + reads + body)
                if loop.index.name in self.counting:
                    stmts.append(self.counting[loop.index.name])
            chain.append((conds, stmts))
            if not conds:
                break
        while chain and chain[-1][1] and isinstance(chain[-1][1][0], Comment) and len(chain[-1][1]) == 1 \
                and chain[-1][0]:
            chain.pop()  # a trailing omitted case changes nothing
        return _if_chain(chain)

    def _each_alone(self, loop: CLoop) -> bool:
        """Whether each iterator of merged ``loop`` is one of the loops merged (a union of them all):
        the loop runs while one has entries and ``i`` is the least coordinate, so one is always at ``i``."""
        alone = {self.it_key(part[0]) for part in loop.any_of if len(part) == 1}
        return all(self.it_key(it) in alone for it in loop.iterated)

    def _read_or_fill(self, case: CCase, iterated, coord, i) -> list:
        """The values a merged loop's one case reads (``vb = ib == i ? b_val[pb] : 0.0``), each
        iterated access it names as its stored value where its iterator is at ``i``, else its fill;
        the case's expression then reads these (``value_of``)."""
        s = self.setup
        read = {str(a) for a in expr_accesses(case.body.rhs)} if isinstance(case.body, CAssign) else set()
        out = []
        for it in iterated:
            key = self.it_key(it)
            if key not in case.fill_absent or key not in read:
                continue
            acc = s.access(key)
            if acc.tensor in s.temps:
                continue   # (a workspace is read at i: it holds its initial value, its fill, where not set)
            v, dt = self.value_of(acc)
            var = Var(self.name(("or_fill", key), f"v{it.name}"))
            out.append(Declare(var, dt, Select(BinOp("==", coord[it], i), v, const_of(s.fill_of(acc), dt))))
            self.read_as[key] = (var, dt)
        return out

    def _galloping(self, loop: CLoop, iterated, busy) -> dict:
        """The iterators of a two-way intersection that skip ahead by galloping, each to the
        other's coordinate: a top-level fiber inside an enclosing loop (a DCSR ``B``'s rows,
        scanned again for every row of ``A`` in ``A[i, k] * B[k, j]``), as long as no case
        runs where it alone is at a coordinate. A plain merge steps through the whole fiber
        for every enclosing iteration; galloping costs O(log distance) per skip."""
        if len(iterated) != 2 or loop.universe or len(self.loop_stack) < 2 \
                or any(set(c) != set(iterated) for c in busy):
            return {}
        out = {}
        for it, other in (iterated, reversed(iterated)):
            parent = self.parent_of(it)
            if it.unique and it.compressed and isinstance(parent, Const) and parent.value == 0:
                out[it] = other
        return out

    def _advance(self, iterated, segs, coord, i, single: bool, advance: bool, gallop=None) -> list:
        out = []
        for it in (iterated if advance else ()):
            p = self.pvar(it)
            if it in (gallop or {}):
                # behind the other iterator: gallop to its coordinate (no case runs in between)
                target = coord[gallop[it]]
                fresh = lambda base, p=p: self.name(("gallop", p.name, base), f"{base}_{p.name}")  # noqa: E731
                out.append(If(BinOp("<", coord[it], target),
                              gallop_past(p, it.param(it.crd), Var(p.name + "_end"), target, fresh),
                              [CompoundAssign("+", p, Cast("int64", BinOp("==", coord[it], i)))]))
                continue
            if single:
                out.append(CompoundAssign("+", p, Const(1, "int64")) if it.unique else Assign(p, segs[it]))
            elif it.unique:
                out.append(CompoundAssign("+", p, Cast("int64", BinOp("==", coord[it], i))))
            else:
                out.append(If(BinOp("==", coord[it], i), [Assign(p, segs[it])]))
        return out



def _if_chain(chain) -> list:
    """``if / else if`` from ``[(conditions, body)]``; a case without conditions ends the chain.

    An omitted case (its body only says so in a comment) tests its conditions for the cases
    after it: ``if (!(c)) {...}`` rather than an empty ``if (c) {} else {...}``.
    """
    if not chain:
        return []
    conds, body = chain[0]
    if not conds:
        return list(body)
    rest = _if_chain(chain[1:])
    if rest and all(isinstance(x, Comment) for x in body):
        return [*body, If(_negated(and_(*conds)), rest)]
    return [If(and_(*conds), body, rest if rest else None)]


def _negated(e):
    """``!e``, with ``a != b`` as ``a == b`` and back (exact even for NaN, unlike ``<``)."""
    if isinstance(e, BinOp) and e.op in ("==", "!="):
        return BinOp("!=" if e.op == "==" else "==", e.left, e.right)
    if isinstance(e, UnOp) and e.op == "!":
        return e.operand
    return UnOp("!", e)


__all__ = ["Loops"]
