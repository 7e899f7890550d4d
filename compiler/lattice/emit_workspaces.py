"""Emission, workspaces and reductions into them: a ``where``'s dense or listed workspace.

A mixin of :class:`~compiler.lattice.emitter.Emitter`. A :class:`~compiler.lattice.cfir.CWorkspace`
is values, a bitmap and a list of the coordinates set: the producer scatters into it (listing a
coordinate the first time), the list is sorted when the consumer needs order, and the entries
the producer set are reset after the consumer. A :class:`~compiler.lattice.cfir.CDenseWorkspace`
is a dense array over several indices, reset whole.

Example: Gustavson's SpGEMM ``C[i, j] = A[i, k] * B[k, j]`` (CSR) gathers each row in ``w[j]``::

    if (!w_set[j]) { w_set[j] = true; w_list[w_n] = j; w_n += 1; }
    w[j] += A_val[pA1] * B_val[pB1];
"""

from __future__ import annotations

from dataclasses import replace


from ..errors import StrategyError
from ..imperative.ir import (BinOp, Block, Break, Comment, CompoundAssign, Const, Declare, For, If, Load, Store, Tagged,
                             UnOp, Var)
from ..imperative.traverse import walk as ir_walk
from ..imperative.sorting import bit_sort_words, sort_coordinates_ir
from ..notation.ast import Access
from .cfir import CAssign, CDenseWorkspace, CForall, CSeq, CWorkspace
from .exprs import apply_op, cast, compound_of, const_of, literal_text
from .iterators import WorkspaceIterator


class Workspaces:
    """Workspaces: scatter, sort, consume, reset (a mixin of the emitter)."""

    def workspace_position(self, acc: Access):
        """Row-major position of ``acc`` in its workspace (the coordinate itself over one index)."""
        pos = None
        for i in acc.indices:
            v = Var(i.name)
            pos = v if pos is None else BinOp("+", BinOp("*", pos, self.size(self.setup.extents[i])), v)
        return pos

    def dense_workspace(self, n: CDenseWorkspace) -> list:
        """Producer, consumer, reset: a dense array over several indices, allocated once at its fill.

        It is semantically recreated for every enclosing iteration, so inside a loop (or
        before the second phase of a two-phase kernel) every entry goes back to the fill.
        """
        w = n.temp
        size = None
        for e in n.extents:
            size = self.size(e) if size is None else BinOp("*", size, self.size(e))
        init = const_of(n.init, n.dtype)
        if w not in self.workspaces:
            self.workspaces[w] = True
            self.allocs.append((w, n.dtype, size, init))
        over = ", ".join(i.name for i in n.indices)
        out = [Comment(f"workspace {w}[{over}]: dense, row-major, starts at {literal_text(n.init)}")]
        producer, consumer = n.body.stmts
        self.producing += 1
        out += self.emit(producer)
        self.producing -= 1
        out += self.emit(consumer)
        if self.loop_stack or self.phase == "assemble":
            q = Var(self.name(("reset", w), f"p{w}_reset"))
            out.append(For(q, 0, size, [Store(w, q, init)]))
        return out

    def workspace(self, n: CWorkspace) -> list:
        """Producer, sort, consumer, reset; the arrays are allocated once around the kernel.

        An ordered consumer needs the coordinate list sorted
        (:func:`compiler.imperative.sorting.sort_coordinates_ir`: a bitmap scan, a rank
        sort or a merge of its ascending runs, chosen per list at run time).

        The workspace is semantically recreated for every enclosing iteration; instead
        of reallocating it, the entries the producer set (its list) are reset after the
        consumer, so each iteration costs only what it touched (pitfall 12).
        """
        it = WorkspaceIterator(n.temp)
        w, wset, wlist, wn = n.temp, it.param("set"), it.param(it.crd), Var(it.param("count"))
        N = None
        for e in n.extents:   # over several indices: their row-major product
            N = self.size(e) if N is None else BinOp("*", N, self.size(e))
        init = const_of(n.init, n.dtype)
        if w not in self.workspaces:
            for name in (w, wset, wlist):
                self.workspaces[name] = True
            self.bitmaps.add(wset)
            self.allocs += [(w, n.dtype, N, init), (wset, "bool", N, Const(False, "bool")),
                            (wlist, "int64", N, None)]
            if n.ordered and not n.once:
                nwords, nsummary = bit_sort_words(N)
                for name in (wlist + "_tmp", wlist + "_bits", wlist + "_sum"):
                    self.workspaces[name] = True
                self.allocs += [(wlist + "_tmp", "int64", N, None), (wlist + "_bits", "int64", nwords, Const(0, "int64")),
                                (wlist + "_sum", "int64", nsummary, Const(0, "int64"))]
        parts = list(n.body.stmts) if isinstance(n.body, CSeq) else [n.body]
        over = ", ".join(i.name for i in n.indices)
        listed = "row-major positions" if n.inner else "coordinates"
        assembled = self.assembled_consumer(n, parts[1:])
        count = self.assembled_count() if assembled is not None else None
        if count is not None:
            # phase 1 counted this row's coordinates: the producer only adds values, listing nothing
            self.unmarked.add(w)
        out = [Declare(wn, "int64", Const(0, "int64") if count is None else count)]
        if n.once:
            self.listed_once.add(w)
        self.producing += 1
        out += self.emit(parts[0])
        self.producing -= 1
        self.unmarked.discard(w)
        if assembled is not None:
            # two-phase, compute: phase 1 stored this row's coordinates in order, one per
            # entry of the list; the consumer reads them there instead of sorting again
            self.assembled[w] = assembled
            out.append(Comment(f"phase 1 stored these coordinates in order: read {assembled.buffer}"
                               f"[{assembled.index.name}] instead of sorting {wlist} again"))
        elif n.ordered and not n.once and not (self.par_rows and self.phase == "assemble" and not n.inner):
            # (counting needs no order; over several indices the consumer's segments do)
            fresh = lambda base: Var(self.name(("sort", w, base), base))  # noqa: E731
            out += sort_coordinates_ir(wlist, wlist + "_tmp", wn, N, wset, fresh, n.index.name,
                                       wlist + "_bits", wlist + "_sum")
        self.reading = assembled is not None and self.drop_in_compute
        consumer = [y for x in parts[1:] for y in self.emit(x)]
        self.reading = False
        if self.loop_stack or self.phase == "assemble":   # used again: back to the fill
            # an assemble phase that only marks coordinates left the values at the fill
            marked_only = self.phase == "assemble" and w not in self.value_tested
            reset = lambda j: [*([] if marked_only else [Store(w, j, init)]),  # noqa: E731
                               *([] if count is not None else [Store(wset, j, Const(False, "bool"))])]
            fused = _reset_in_last_list_loop(consumer, wlist, wn, reset, assembled)
            if fused is not None:
                consumer = fused  # the consumer visits every listed coordinate: reset each there
            elif count is not None:   # (assembled_consumer admits only a loop over the whole list)
                raise StrategyError(f"workspace {w}: phase 2 lists no coordinates, but its consumer does not "
                                    f"visit each of them (a bug in the lattice strategy)")
            else:
                q = Var(self.name(("reset", w), f"p{w}_reset"))
                j = Var(self.name(("reset_j", w), f"{n.index.name}_reset"))
                consumer.append(For(q, 0, wn, [Declare(j, "int64", Load(wlist, q)), *reset(j)]))
        if n.once and not any(isinstance(x, Load) and x.buffer == wset for x in ir_walk(tuple(consumer))):
            # nothing tests the bitmap: cleanup drops it
            about = f"values {w}, {listed} {wlist}[0:{wn.name}], listed once each, in order, by the producer"
        elif count is not None:
            about = f"values {w}; phase 1 counted this row's {wn.name} coordinates and stored them in order"
        else:
            about = f"values {w}, bitmap {wset}, {listed} {wlist}[0:{wn.name}]"
        return [Comment(f"workspace {w}[{over}]: {about}"), *out, *consumer]

    def consumes_listed(self, n: CWorkspace, consumer: list) -> bool:
        """Whether ``consumer`` walks ``n``'s sorted list in one loop, appending one entry of the
        output per coordinate (a split, pos or fuse loop over the list walks it in blocks: no)."""
        return (n.ordered and n.index.name not in self.derived_loops and n.index.name not in self.fused_inner
                and self.one_entry_per_listed(n, consumer))

    def one_entry_per_listed(self, n: CWorkspace, consumer: list) -> bool:
        """Whether ``consumer`` appends one entry of the output per coordinate in ``n``'s list, at
        the output's innermost coordinate, and nothing else."""
        if n.inner or len(consumer) != 1 or not isinstance(consumer[0], CForall):
            return False
        f = consumer[0]
        if f.index != n.index or len(f.loops) != 1 or self.out_dense or self.block is not None \
                or self.out_path[-1] != n.index:
            return False
        loop = f.loops[0]
        cases = [c for c in loop.cases if not c.omit]
        return not (loop.universe or loop.located or [it.name for it in loop.iterated] != [n.temp]
                    or len(cases) != 1 or cases[0].tests or cases[0].value_tests
                    or not isinstance(cases[0].body, CAssign) or not cases[0].body.output)

    def scatter(self, n: CAssign, v, dt) -> list:
        """``w[j] op= v`` into a workspace, recording ``j`` in its list the first time."""
        w = n.lhs.tensor
        it = WorkspaceIterator(w)
        wset, wlist, wn = it.param("set"), it.param(it.crd), Var(it.param("count"))
        tdt = self.setup.temps[w][1]
        j = self.workspace_position(n.lhs)
        pre = []
        if not isinstance(j, Var):   # over several indices: its row-major position, computed once
            at = Var(self.name(("at", w), f"{w}_at"))
            pre, j = [Declare(at, "int64", j)], at
        mark = [Store(wset, j, Const(True, "bool")), Store(wlist, wn, j), CompoundAssign("+", wn, Const(1, "int64"))]
        if w not in self.listed_once:   # else the producer reaches each coordinate once
            mark = [If(UnOp("!", Load(wset, j)), mark)]
        if w in self.unmarked:   # (a two-phase compute phase: phase 1 listed and counted them)
            mark = []
        if self.phase == "assemble" and w not in self.value_tested:
            return [*pre, *mark]   # the structure needs only which coordinates are set
        if n.op is None:
            return [*pre, *mark, Store(w, j, cast(v, dt, tdt))]
        if compound_of(n.op, tdt, dt):
            return [*pre, *mark, Store(w, j, cast(v, dt, tdt), compound_of(n.op, tdt, dt))]
        r, rdt = apply_op(n.op, [Load(w, j), v], [tdt, dt], self.helper_sink())
        return [*pre, *mark, Store(w, j, cast(r, rdt, tdt))]



def _reset_in_last_list_loop(stmts: list, wlist: str, wn: Var, reset, assembled=None) -> list | None:
    """``stmts`` with ``reset(j)`` appended to the body of its last statement when that is a
    loop over the whole coordinate list, ``for (q = 0; q < n; q++) { j = list[q]; ... }``
    without a ``break`` (so it visits, and may reset, every coordinate after reading it);
    None otherwise. One pass over the list instead of two (Gustavson's copy-out). In a
    two-phase compute phase, ``j`` is read from where phase 1 stored the same coordinates
    in order (``assembled``, a Load) instead of from the list."""
    if not stmts:
        return None
    last = stmts[-1]
    if isinstance(last, Tagged):
        inner = _reset_in_last_list_loop(list(last.body.body), wlist, wn, reset, assembled)
        return None if inner is None else stmts[:-1] + [replace(last, body=Block(tuple(inner)))]
    if not (isinstance(last, For) and last.start == Const(0, "int64") and last.stop == wn and last.body.body):
        return None
    first = last.body.body[0]
    if not (isinstance(first, Declare) and first.init in (Load(wlist, last.var), assembled)) or \
            any(isinstance(x, Break) for x in ir_walk(last.body)):
        return None
    return stmts[:-1] + [For(last.var, last.start, last.stop, [*last.body.body, *reset(first.var)], last.dtype)]


__all__ = ["Workspaces"]
