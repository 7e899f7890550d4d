"""Emission, threads: the OpenMP pragmas of a ``parallelize`` schedule and what races need.

A mixin of :class:`~compiler.lattice.emitter.Emitter`: the parallel loop's pragma, the
reduction clauses of a scalar result's accumulators, and each thread's copy of a dense output
with ``races="copies"`` (added into the output after the loop).

Example: ``s = sum[i](x[i])`` parallelized over ``i``::

    #pragma omp parallel for schedule(guided) reduction(+:t_i)
    for (int64 i = 0; i < x0_size; i++) t_i += x_val[i];
"""

from __future__ import annotations


import numpy as np

from ..errors import StrategyError
from ..imperative.ir import (Assign, BinOp, Comment, CompoundAssign, Const, Declare, For, If, Load, Pragma, Select, Store,
                             Var, View, or_)
from ..imperative.traverse import walk as ir_walk
from .exprs import const_of


class Threads:
    """Pragmas, reduction clauses and thread copies (a mixin of the emitter)."""

    def parallel_pragma(self, var: str) -> list:
        p = self.setup.parallel
        return self.omp_for() if p is not None and p.name == var else []

    def omp_for(self) -> list:
        """The pragma of the parallel loop (a scalar result's loops get their reduction clauses
        once the function is built: :meth:`reduction_clauses`).

        Iterations go to the threads in shrinking chunks (guided: a long row late in the loop
        does not hold up the rest), except with ``races="copies"``: there each thread adds its
        iterations into its own copy of the output, and a fixed (static) split gives each copy
        the same iterations at every call, so a float result comes out the same each time.
        """
        how = "static" if self.setup.races == "copies" else "guided"
        return [Pragma(f"omp parallel for schedule({how})")]

    def reduction_clauses(self, body: list) -> list:
        """``body`` with a ``reduction(op:t)`` clause on each parallel loop for each accumulator
        ``t`` of a scalar result it reduces into (declared outside the loop): each thread reduces
        into its own copy, and OpenMP combines the copies. A combiner OpenMP lacks (a float max
        that keeps a NaN) is declared once, first.

        ``s = sum[i, j](A[i, j]) + max[i, j](B[i, j])`` runs two parallel loops, each with
        the clause of its own accumulator.
        """
        from ..imperative.privatize import map_parallel_loops, with_clauses
        from .schedule import omp_declared_reduction, omp_reduction, scalar_wheres
        accumulators = {w.temp.name for w in scalar_wheres(self.setup)}
        declared = []

        def reducing(pragma, loop):
            nodes = list(ir_walk(loop))
            local = {n.var.name for n in nodes if isinstance(n, Declare)}
            reduced = [t for t in dict.fromkeys(n.target.name for n in nodes if isinstance(n, (Assign, CompoundAssign)))
                       if t in accumulators and t not in local]
            if self.setup.races == "atomics":
                return [pragma, atomic_updates(loop, set(reduced), self.setup.parallel)]
            clauses = [omp_reduction(self.setup, t) for t in reduced]
            if None in clauses:   # (check_parallel refuses these first)
                raise StrategyError(f"parallelize({self.setup.parallel}) does not apply: OpenMP cannot combine the "
                                    f"threads' partial results of {reduced[clauses.index(None)]}")
            for t in reduced:
                d = omp_declared_reduction(self.setup, t)
                if d is not None and d not in declared:
                    declared.append(d)
            return [with_clauses(pragma, *clauses), loop]

        body = map_parallel_loops(body, reducing)
        return [Pragma(d) for d in declared] + body

    def thread_copies(self, body: list, op) -> list:
        """``body`` with each thread's copy of a dense output (``races='copies'``), combined by ``op``: the parallel
        loop's updates go to its thread's copy, which starts at the update's identity, and a
        parallel pass over the elements then adds the copies into the output::

            y_copies = n * thread_count() elements, each 0
            #pragma omp parallel for
            for (j = ...) { y_copy = &y_copies[thread_id() * n]; ... y_copy[i] += ... }
            for (q = 0; q < n; q++) for (t = 0; t < n_copies; t++) y[q] += y_copies[t * n + q]
        """
        from ..imperative.ir import Call
        from ..imperative.privatize import first_in_loop, map_parallel_loops
        s, odt = self.setup, self.setup.out_dtype
        out = s.output.tensor
        n = self.dense_count(len(self.out_sizes))
        copy = self.name(("copy",), f"{out}_copy")
        copies = self.name(("copies",), f"{out}_copies")
        ident = op.identity_for(np.dtype(odt))
        self.allocs.append((copies, odt, BinOp("*", n, Call("thread_count")), const_of(ident, odt)))
        self.shared_allocs.add(copies)
        view = View(copy, odt, copies, BinOp("*", Call("thread_id"), n), n)
        q, t = Var(self.name(("copies", "q"), "q")), Var(self.name(("copies", "t"), "t"))
        count = Var(self.name(("copies", "n"), "n_copies"))
        combine = [Comment(f"add the threads' copies of {out} into {out}, element by element"),
                   Declare(count, "int64", Call("thread_count")),
                   Pragma("omp parallel for schedule(static)"),
                   For(q, 0, n, [For(t, 0, count, self.update_store(self.val, q, op, Load(copies, BinOp(
                       "+", BinOp("*", t, n), q)), odt, odt))])]

        def with_copy(pragma, loop):
            if copy not in {x.buffer for x in ir_walk(loop) if isinstance(x, Store)}:
                return [pragma, loop]
            note = Comment(f"this thread's own copy of {out}, which its updates go to")
            return [pragma, first_in_loop(loop, [note, view])] + combine

        return map_parallel_loops(body, with_copy)


    def check_parallel_blocks(self, n, block, iters) -> None:
        """Refuse parallel blocks of a sparse loop that a block cannot start in the middle of."""
        what = f"parallelize({block.outer}) does not apply"
        if n.fold is not None or n.tally:
            raise StrategyError(f"{what}: the loop over {n.index} counts the coordinates where a case ran, to fold "
                                f"the fill in after it, on one thread")
        for it in iters:
            if not it.entered_by_search:
                raise StrategyError(f"{what}: each block of {block} on its own thread would find its first position "
                                    f"in {it.described}, which has no search by coordinate; the blocks carry "
                                    f"their positions from one to the next (sequential)")

    def parallel_blocks(self, n, block, o: Var, nblocks, bsize, limit: Var, N, starts, universe: bool, guard,
                        loops_ir: list) -> list:
        """The blocks of a split sparse loop on threads: each block binary-searches each iterator's
        fiber for its first coordinate, then runs the loops up to the block's end. Only the blocks
        holding a stored coordinate run, found from the stored coordinates themselves (see
        :func:`block_leaders`), so a hypersparse loop costs its entries, not its blocks::

            #pragma omp parallel for schedule(guided)
            for (qA0 = A0_pos[0]; qA0 < pA0_end; qA0++) {
                i0 = A0_idx[qA0] / 8;
                if (qA0 == A0_pos[0] || A0_idx[qA0 - 1] / 8 < i0) {   // the block's first entry
                    i_lo = i0 * 8; i_hi = ...; pA0 = qA0;
                    while (pA0 < pA0_end) { i = A0_idx[pA0]; if (i >= i_hi) break; ... }
                }
            }
        """
        first = Var(self.name(("block_start", n.index.name), f"{n.index.name}_lo"))
        end = Select(BinOp("<", first, BinOp("-", N, bsize)), BinOp("+", first, bsize), N)
        head = [guard, Declare(first, "int64", BinOp("*", o, bsize)), Declare(limit, "int64", end)]
        leaders = None if universe else block_leaders(n, [it for *_, it in starts])
        if leaders is None:   # (the dense range runs every block)
            body = head + [Comment(f"this block's first positions: a binary search for {first.name} in each fiber")]
            body += [Declare(p, "int64", it.first_at_least(lo, hi, first)) for p, lo, hi, it in starts]
            if universe:
                body.append(Declare(Var(n.index.name), "int64", first))
            self.notes.append(f"the blocks of {block.outer} run on threads; each finds its first positions by "
                              f"binary search, then walks")
            return [*self.omp_for(), For(o, 0, nblocks, body + loops_ir)]
        fibers = {it: (p, lo, hi) for p, lo, hi, it in starts}
        q = {it: Var(self.name(("block_entry", it.name, it.level, it.sub), "q" + self.pvar(it).name[1:]))
             for it in leaders}
        one = Const(1, "int64")

        def block_of(it, at):
            return BinOp("/", self.coord(it, at), bsize)

        def starts_block(it, blk):
            """Whether position q[it] (in block ``blk``) is its fiber's first in that block."""
            lo = fibers[it][1]
            return or_(BinOp("==", q[it], lo), BinOp("<", block_of(it, BinOp("-", q[it], one)), blk))

        searched = [Declare(p, "int64", q[it] if len(leaders) == 1 and it is leaders[0] else
                            it.first_at_least(lo, hi, first)) for p, lo, hi, it in starts]
        run = head + [Comment(f"this block's first positions: a binary search for {first.name} in each fiber"
                              + (f" but {leaders[0].name}'s, whose first entry here is {q[leaders[0]].name}"
                                 if len(leaders) == 1 else ""))] + searched + loops_ir
        names = " or ".join(f"{it.described}" for it in leaders)
        why = Comment(f"the blocks of {block.outer} holding an entry of {names} run, each once, from the entry that "
                      f"starts it: the empty blocks of a hypersparse loop are not visited")
        self.notes.append(f"the blocks of {block.outer} run on threads, each block holding an entry of {names} once; "
                          f"each finds its first positions by binary search, then walks")
        if len(leaders) == 1:
            (it,) = leaders
            p, lo, hi = fibers[it]
            body = [Declare(o, "int64", block_of(it, q[it])), If(starts_block(it, o), run)]
            return [why, *self.omp_for(), For(q[it], lo, hi, body)]
        # one loop over the leaders' positions one after another; a block with an entry of an
        # earlier leader is that leader's to run
        k = Var(self.name(("block_entry", n.index.name), "q"))
        ends, total = [], None   # (the end of each leader's share of k: its fiber's size, added up)
        for it in leaders:
            size = BinOp("-", fibers[it][2], fibers[it][1])
            total = size if total is None else BinOp("+", total, size)
            ends.append(total)
        branches = []
        for m, it in enumerate(leaders):
            p, lo, hi = fibers[it]
            c = Var(self.name(("block_of", it.name, it.level, it.sub), "c" + self.pvar(it).name[1:]))
            take = [Assign(o, c)]
            for other in reversed(leaders[:m]):
                s = Var(self.name(("block_probe", other.name, other.level, other.sub), "s" + self.pvar(other).name[1:]))
                _, olo, ohi = fibers[other]
                take = [Declare(s, "int64", other.first_at_least(olo, ohi, BinOp("*", c, bsize))),
                        If(or_(BinOp("==", s, ohi), BinOp(">", block_of(other, s), c)), take)]
            at = BinOp("+", lo, k if m == 0 else BinOp("-", k, ends[m - 1]))
            branches.append([Declare(q[it], "int64", at), Declare(c, "int64", block_of(it, q[it])),
                             If(starts_block(it, c), take)])
        chain = branches[-1]
        for m in range(len(leaders) - 2, -1, -1):
            chain = [If(BinOp("<", k, ends[m]), branches[m], chain)]
        parts = ", then ".join(f"{it.name}'s" for it in leaders)
        body = [Comment(f"position {k.name} is one of {parts}; it runs its block if it is its fiber's first entry "
                        f"there and no fiber before has one"),
                Declare(o, "int64", Const(-1, "int64")), *chain,
                If(BinOp(">=", o, Const(0, "int64")), run)]
        return [why, *self.omp_for(), For(k, 0, total, body)]


def check_shared_scalars(body: list, parallel) -> None:
    """Refuse a parallel loop that sets a scalar declared around it (not one a reduction clause
    or an atomic update covers): a loop parallelized inside others might otherwise share one.

    >>> from compiler.imperative.ir import For, Var
    >>> check_shared_scalars([Pragma("omp parallel for"), For(Var("j"), 0, 4, [Assign(Var("t"), Var("j"))])], "j")
    Traceback (most recent call last):
    ...
    compiler.errors.StrategyError: parallelize(j) does not apply: the loop sets t, declared around it, which its \
threads would share (t = j;)
    """
    from ..imperative.privatize import map_parallel_loops

    def shared(pragma, loop):
        nodes = list(ir_walk(loop))
        local = {n.var.name for n in nodes if isinstance(n, Declare)} | {n.var.name for n in nodes if isinstance(n, For)}
        covered = {t.split(":")[1].rstrip(")") for t in pragma.text.split() if t.startswith("reduction(")}
        for k, n in enumerate(nodes):
            if isinstance(n, (Assign, CompoundAssign)) and n.target.name not in local | covered:
                raise StrategyError(f"parallelize({parallel}) does not apply: the loop sets {n.target.name}, declared "
                                    f"around it, which its threads would share ({str(n).strip()})")
        return [pragma, loop]
    map_parallel_loops(body, shared)


def atomic_updates(loop, accumulators: set, parallel):
    """``loop`` with each update of a shared accumulator (``t += v``) made atomic: the threads of
    ``parallelize(i, races='atomics')`` of a scalar result all add into one ``t``.

    >>> from compiler.imperative.ir import For, Var
    >>> print(atomic_updates(For(Var("i"), 0, 4, [CompoundAssign("+", Var("t"), Var("i"))]), {"t"}, "i"))
    for (int64 i = 0; i < 4; i++) {
        #pragma omp atomic
        t += i;
    }
    """
    from ..imperative.traverse import map_bodies

    def stmts(body):
        out = []
        for s in body:
            if isinstance(s, Assign) and s.target.name in accumulators:
                raise StrategyError(f"parallelize({parallel}, races='atomics') does not apply: {s.target.name} is "
                                    f"set, not updated, in the loop ({s}), which one atomic update cannot do")
            out += [Pragma("omp atomic"), s] if isinstance(s, CompoundAssign) and s.target.name in accumulators \
                else [map_bodies(s, stmts)]
        return out
    return map_bodies(loop, stmts)


def block_leaders(n, iters: list) -> list | None:
    """The iterators whose stored coordinates name every block of a split loop where a case of
    ``n``'s loops does something: for each case that runs, one iterator it tests (a block with no
    entry of any of them runs no case). None if a loop runs the dense range (every block works).

    ``y[i] = A[i, j] * x[j] + b[i]`` (A's rows and b merged): ``[A0, b0]``; ``A[i] * B[i]``: ``[A0]``.
    """
    leaders = []
    for loop in n.loops:
        if loop.universe:
            return None
        for case in loop.cases:
            needs = case.tests or loop.iterated
            if case.omit or any(it in leaders for it in needs):
                continue
            if not needs or needs[0] not in iters:
                return None
            leaders.append(needs[0])
    return leaders or None


__all__ = ["Threads", "atomic_updates", "block_leaders", "check_shared_scalars"]
