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
from ..imperative.ir import Assign, BinOp, Comment, CompoundAssign, Declare, For, Load, Pragma, Store, Var, View
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


__all__ = ["Threads", "atomic_updates", "check_shared_scalars"]
