"""CFIR to the imperative IR through the level iterators, and the ``lattice`` strategy.

Provenance: each lattice loop is wrapped in ``Tagged("lattice:<index>:<iterated>")`` and
each case in ``Tagged("lattice:<index>:<present operands>")`` (names joined by ``∩``,
``U`` for the dense range), so the explorer can colour the C lines of a lattice point.

Each :class:`~compiler.lattice.cfir.CForall` becomes: iterator initialization
(once for all its loops), one ``while`` per lattice loop (or a ``for`` when one
unique iterator or the dense range is all there is), coordinate loads, the
minimum as the resolved coordinate, segment ends for non-unique COO levels,
locates into Dense levels, an ``if / else if`` chain of cases most specific
first, and conditional increments (``pB += (int64_t)(iB == i)``). When several
regions of a loop do work (a union), the loop instead branches once on exactly
which iterators are at ``i``; each branch runs its cases and advances exactly
those iterators (the shape of scipy's merge, which predicts better). In an
intersection of two, a top-level fiber met again in every enclosing iteration (a
DCSR ``B``'s rows in ``A[i, k] * B[k, j]``) gallops to the other's coordinate
instead of stepping (:func:`compiler.imperative.search.gallop_stmts`).

Outputs: a dense output is stored by position (the runtime pre-fills it with
the output's fill); a sparse output (SparseList levels under Dense or SparseList
levels, or one SparseCOO level) is appended in storage order into growing
buffers, and a value equal to the fill is not stored.

>>> from compiler.notation import parse
>>> from compiler.format import csr, dense
>>> from compiler.trace import Trace
>>> low = lower_lattice(parse("y[i] = A[i, j] * x[j]"), {"A": csr(), "x": dense(1)}, Trace())
>>> print(low.function)
kernel lattice_y(int64 A0_size, in int64 A1_pos[], in int64 A1_idx[], in float64 A_val[], in float64 x_val[], inout float64 y_val[]) {
    for (int64 i = 0; i < A0_size; i++) {
        float64 t_j = 0.0;
        // fetch the entries 64 past this row's end: the CPU's own prefetcher falls behind short rows
        prefetch A1_idx[A1_pos[i + 1] + 64];
        prefetch A_val[A1_pos[i + 1] + 64];
        for (int64 pA1 = A1_pos[i]; pA1 < A1_pos[i + 1]; pA1++) {
            int64 j = A1_idx[pA1];
            t_j += A_val[pA1] * x_val[j];
        }
        y_val[i] = t_j;
    }
}
"""

from __future__ import annotations

import contextlib
import itertools
import re
from dataclasses import replace

import numpy as np

from .. import binding
from ..errors import StrategyError
from ..imperative.ir import (Allocate, Assign, BinOp, Block, Break, Buffer, Cast, Comment, CompoundAssign,
                             Const, Declare, For, Function, Grow, Growable, Helper, If, Load, OutScalar, Pragma,
                             Prefetch, Scalar, Select, Store, Tagged, UnOp, Var, View, While, and_)
from ..imperative.ir import RESERVED, c_name_problem
from ..imperative.ir import walk as ir_walk
from ..imperative.search import gallop_past
from ..imperative.sorting import bit_sort_words, sort_coordinates_ir
from ..imperative.cleanup import cleanup, first_grows, reuse_dead_locals
from ..imperative.prefetch import prefetch
from ..imperative.privatize import privatize
from ..imperative.vectorize import vectorize
from ..levels import Dense, SparseCOO, SparseList
from ..notation.ast import Access, Assign as NAssign
from ..trace import Artifact, Trace
from .cfir import (cfir_walk, headline, CAlloc, CAssign, CCase, CDenseWorkspace, CForall, CLoop, CSeq, CSkip, CWorkspace,
                   FlatLocator)
from .cfir_builder import build_cfir
from .plan import Setup
from .lattice import literal
from .reserve import count_scatters
from .exprs import apply_op, cast, const_of, not_fill, python_helper, to_ir
from .diagonal import Found
from .iterators import ModeIterator, WorkspaceIterator, hash_capacity_stmts
from .cin import expr_accesses
from .iteration_graph import is_all_dense
from .schedule import as_schedule
from .conversions import record_conversions, setup_converting

_COMPOUND = {"add": "+", "mul": "*", "bitand": "&", "bitor": "|", "bitxor": "^"}


class _Emitter:
    def __init__(self, setup: Setup):
        self.setup = setup
        self.inputs: dict = {}
        self.bitmaps: set = set()   # the workspaces' bitmaps (their first scatters set them)
        self.listed_once: set = set()   # workspaces whose producer lists each coordinate once, in order
        self.unmarked: set = set()      # workspaces whose producer lists nothing (phase 1 counted the row)
        for key in setup.names:
            acc_tensor = setup.iters[key][0].tensor if setup.iters[key] else None
            if not acc_tensor:
                continue
            for p in binding.input_params(acc_tensor, setup.formats[acc_tensor]):
                self.inputs[p.name] = p
        self.used: dict = {}
        self.helpers: dict = {}
        self.parent: dict = {}
        self.found: set = set()   # the diagonal accesses whose last level is searched (-1: not stored)
        taken = set(self.inputs) | set(setup.temps) | {i.name for i in setup.extents} | {setup.output.tensor}
        taken |= {n for n in setup.names.values()}
        self.workspaces: dict = {}   # buffer name -> scratch array (name, dtype, length, init)
        for t, _ in setup.temps.values():
            if t.workspace and not t.dense:
                it = setup.iters[str(t.access())][0]
                taken |= {it.param(k) for k in ("idx", "set", "count")}
        self.allocs: list = []
        self.producing = 0   # > 0 while emitting a workspace's producer (it does not append)
        self.loop_stack: list = []   # the indices of the foralls around what is being emitted, outermost first
        self.taken = taken
        self.cache: dict = {}
        self.out_params: list = []
        self.init: list = []
        self.final: list = []
        self._setup_output()
        from .derived import Fuse, Pos, Split
        rels = setup.relations
        self.splits = {r.index: r for r in rels if isinstance(r, Split)}
        self.fuses = {r.outer: r for r in rels if isinstance(r, Fuse)}
        self.poses = {r.index: r for r in rels if isinstance(r, Pos)}
        self.derived_loops = set(self.splits) | set(self.fuses) | set(self.poses)
        self.fused_inner: dict = {}   # inner index of a fuse -> how the fused loop binds it
        self.phase = None             # "assemble" / "compute" while emitting a two-phase kernel
        self.notes: list = []         # decisions of the lowering, for the trace
        self.assembled: dict = {}     # workspace -> where a two-phase compute phase reads its coordinates
        self.drop_in_compute = False  # two-phase, CSR-like output: phase 2 drops the fill as it stores
        self.read_counter = None      # ... where it reads the coordinates phase 1 stored (None: it reads none)
        self.reading = False          # ... while emitting a consumer that reads them
        self.par_rows = False         # two-phase on threads: each row counts, then fills, its own entries
        self.bounded_rows = False     # ... counting its workspace's scatters, a bound of its entries
        self.row_ends = None          # ... where each row's entries end (phase 2 drops the fill)
        self.row_info = None          # ... the level whose pos[i] is row i's start (a scratch one for COO)
        self.row_fibers = None        # ... the forall whose shortest fiber bounds a row's entries
        self.shared_allocs: set = set()   # scratch arrays the threads share (one element per row)
        self.counting: dict = {}          # index -> the statement a case that ran at it adds (a fold's count)

    # -- names and parameters ------------------------------------------------------------

    def name(self, key, base: str) -> str:
        if key not in self.cache:
            name, k = base, 2
            while name in self.taken or name in RESERVED:   # i + f would make "if"
                name, k = f"{base}_{k}", k + 1
            self.taken.add(name)
            self.cache[key] = name
        return self.cache[key]

    def param(self, pname: str):
        if pname in self.workspaces:
            return pname
        if pname not in self.used:
            self.used[pname] = self.inputs[pname]
        return pname

    def size(self, pname: str) -> Var:
        return Var(self.param(pname))

    # -- the output ----------------------------------------------------------------------

    def _setup_output(self):
        s = self.setup
        out, fmt = s.output.tensor, s.output_format
        self.out_path = [s.output.indices[m] for m in fmt.mode_order]
        self.out_levels = list(fmt.levels)
        self.out_sizes = [Scalar(binding.array_name(out, m, "size"), "int64") for m in range(fmt.ndim)]
        self.out_dense = all(isinstance(lvl, Dense) for lvl in fmt.levels)
        self.val = binding.array_name(out, None, "val")
        self.levels_info = []
        if self.out_dense:
            self.out_params.append(Buffer(self.val, s.out_dtype, "inout"))
            return
        mode = 0
        for k, lvl in enumerate(fmt.levels):
            info = {"level": lvl, "k": k, "mode": mode}
            if isinstance(lvl, SparseList):
                idt = np.dtype(lvl.index_dtype).name
                info["counter"] = self.name(("count", k), f"p{out}{k}")
                self.out_params.append(OutScalar(info["counter"], "int64", 0))
                info["idx"] = [binding.array_name(out, k, "idx")]
                self.out_params.append(Growable(info["idx"][0], idt, info["counter"]))
                info["pos"] = binding.array_name(out, k, "pos")
                if all(isinstance(x, Dense) for x in fmt.levels[:k]):
                    info["pos_buffer"] = True
                    self.out_params.append(Buffer(info["pos"], idt, "inout"))
                else:
                    info["pos_buffer"] = False
                    info["pos_len"] = self.name(("poslen", k), f"{info['pos']}_len")
                    self.out_params.append(OutScalar(info["pos_len"], "int64", 1))
                    self.out_params.append(Growable(info["pos"], idt, info["pos_len"]))
                    self.init += [Grow(info["pos"], Const(1, "int64")), Store(info["pos"], 0, Const(0, idt))]
                info["idt"] = idt
            elif isinstance(lvl, SparseCOO):
                if k != 0:
                    raise StrategyError(f"output {out}: SparseCOO must be the only level of a sparse output")
                idt = np.dtype(lvl.index_dtype).name
                info["counter"] = self.name(("count", k), f"p{out}{k}")
                self.out_params.append(OutScalar(info["counter"], "int64", 0))
                info["idx"] = [binding.array_name(out, k, f"idx{j}") for j in range(lvl.ndim)]
                for name in info["idx"]:
                    self.out_params.append(Growable(name, idt, info["counter"]))
                info["pos"] = binding.array_name(out, k, "pos")
                info["pos_len"] = self.name(("poslen", k), f"{info['pos']}_len")
                self.out_params.append(OutScalar(info["pos_len"], "int64", 2))
                self.out_params.append(Growable(info["pos"], idt, info["pos_len"]))
                self.init += [Grow(info["pos"], Const(2, "int64")), Store(info["pos"], 0, Const(0, idt))]
                info["pos_buffer"] = False
                info["idt"] = idt
            self.levels_info.append(info)
            mode += lvl.nmodes
        last = self.levels_info[-1]
        self.out_params.append(Growable(self.val, s.out_dtype, last["counter"]))
        # finalization
        for info in self.levels_info:
            if isinstance(info["level"], Dense):
                continue
            k, counter = info["k"], Var(info["counter"])
            if isinstance(info["level"], SparseCOO):
                self.final.append(Store(info["pos"], 1, cast(counter, "int64", info["idt"])))
            elif info["pos_buffer"]:
                if k == 0:
                    self.final.append(Store(info["pos"], 1, cast(counter, "int64", info["idt"])))
                else:
                    self.final.append(self._prefix_sum(info, self._dense_count(info["mode"])))

    def _prefix_sum(self, info: dict, count) -> For:
        """Turn the ``count`` segment lengths in ``pos[1:]`` of a SparseList level into segment ends."""
        q = Var(self.name(("prefix", info["k"]), "q"))
        return For(q, 0, count, [Store(info["pos"], BinOp("+", q, 1), Load(info["pos"], q), "+")])

    def _dense_count(self, mode: int):
        count = None
        for m in range(mode):
            v = Var(self.out_sizes[m].name)
            count = v if count is None else BinOp("*", count, v)
        return count if count is not None else Const(1, "int64")

    def _dense_position(self, upto: int):
        """Position of the output's Dense levels ``0..upto`` from their indices."""
        pos = None
        for m in range(upto + 1):
            i = Var(self.out_path[m].name)
            pos = i if pos is None else BinOp("+", BinOp("*", pos, Var(self.out_sizes[m].name)), i)
        return pos

    # -- statements ------------------------------------------------------------------------

    def emit(self, n) -> list:
        if isinstance(n, CSkip):
            return []
        if isinstance(n, CSeq):
            return [s for x in n.stmts for s in self.emit(x)]
        if isinstance(n, CAlloc):
            return [Declare(Var(n.temp), n.dtype, const_of(n.init, n.dtype))] + self.emit(n.body)
        if isinstance(n, CAssign):
            return self.assign(n)
        if isinstance(n, CForall):
            self.loop_stack.append(n.index)
            try:
                return self.forall(n)
            finally:
                self.loop_stack.pop()
        if isinstance(n, CWorkspace):
            return self.workspace(n)
        if isinstance(n, CDenseWorkspace):
            return self.dense_workspace(n)
        raise TypeError(f"cannot lower {n!r}")

    def value_of(self, acc: Access):
        s = self.setup
        if acc.tensor in s.temps:
            if s.temps[acc.tensor][0].workspace:
                return Load(acc.tensor, self._workspace_position(acc)), s.temps[acc.tensor][1]
            return Var(acc.tensor), s.temps[acc.tensor][1]
        key = str(acc)
        fmt = s.formats[acc.tensor]
        dt = np.dtype(fmt.dtype).name
        if fmt.leaf.name == "Pattern":
            return Const(True, "bool"), "bool"
        pos = self.parent[(key, len(s.paths[key]))]
        v = Load(self.param(binding.array_name(acc.tensor, None, "val")), pos)
        if key in self.found:   # a diagonal's entry, -1 where its last level does not store it
            v = Select(BinOp(">=", pos, Const(0, "int64")), v, const_of(s.fill_of(acc), dt))
        return v, dt

    def expr(self, e):
        ir, dt, helpers = to_ir(e, self.value_of, {})
        self.helpers.update(helpers)
        return ir, dt

    def assign(self, n: CAssign, value=None) -> list:
        """The statements of ``n``; ``value`` (an IR expression and its dtype) replaces its right side."""
        s = self.setup
        v, dt = value if value is not None else self.expr(n.rhs)
        if not n.output and s.temps[n.lhs.tensor][0].dense:
            return self._store(n.lhs.tensor, self._workspace_position(n.lhs), n.op, v, dt, s.temps[n.lhs.tensor][1])
        if not n.output and s.temps[n.lhs.tensor][0].workspace:
            return self.scatter(n, v, dt)
        if not n.output:
            tdt = s.temps[n.lhs.tensor][1]
            t = Var(n.lhs.tensor)
            if n.op is None:
                return [Assign(t, cast(v, dt, tdt))]
            if not n.op.is_user and n.op.name in _COMPOUND and n.op.result_dtype(tdt, dt).name == tdt:
                return [CompoundAssign(_COMPOUND[n.op.name], t, cast(v, dt, tdt))]
            r, rdt = apply_op(n.op, [t, v], [tdt, dt], self._helper_sink())
            return [Assign(t, cast(r, rdt, tdt))]
        odt = s.out_dtype
        if self.out_dense:
            pos = self._dense_position(len(self.out_path) - 1) if self.out_path else Const(0, "int64")
            return self._store(self.val, pos, n.op, v, dt, odt)
        # sparse output: append at the innermost level
        out = []
        if isinstance(v, Var):
            val = cast(v, dt, odt)
        else:
            vname = Var(self.name(("value",), f"v{s.output.tensor}"))
            out.append(Declare(vname, odt, cast(v, dt, odt)))
            val = vname
        last = self.levels_info[-1]
        counter = Var(last["counter"])
        if isinstance(last["level"], SparseCOO):
            coords = [self.out_path[last["mode"] + j] for j in range(len(last["idx"]))]
        else:
            coords = [self.out_path[last["mode"]]]
        reserved = getattr(self, "reserved", False)
        store = [Store(name, counter, cast(Var(i.name), "int64", last["idt"])) for name, i in zip(last["idx"], coords)]
        store_val = Store(self.val, counter, val)
        one_more = CompoundAssign("+", counter, Const(1, "int64"))
        # (where room is made: store unconditionally, keep the entry only if it is not the fill)
        keep = CompoundAssign("+", counter, Cast("int64", not_fill(val, odt, s.out_fill)))
        if self.par_rows:
            # the row's own counter: phase 1 counts the entries, phase 2 stores them from the row's start
            if self.phase == "assemble":
                return [one_more]
            return out + store + [store_val, keep]
        if self.phase == "compute" and self.drop_in_compute:
            # two-phase, compute, one sparse level: phase 1 made room; the entry's coordinate moves
            # down over the dropped ones
            read = [CompoundAssign("+", Var(self.read_counter), Const(1, "int64"))] if self.reading else []
            return out + store + [store_val, keep, *read]
        if self.phase == "compute":
            # two-phase, compute: the assemble phase stored the coordinates and made room
            return out + [store_val, one_more]
        grow = [] if reserved else [Grow(name, BinOp("+", counter, 1)) for name in (*last["idx"], self.val)]
        if self.phase == "assemble":
            # two-phase, assemble: the structure only (every entry the loops produce; a value
            # equal to the fill is dropped by the compute phase, or after it)
            return grow + store + [one_more]
        if reserved and self.out_path and coords[-1] == self.out_path[-1]:
            return out + store + [store_val, keep]
        return out + [If(not_fill(val, odt, s.out_fill), grow + store + [store_val, one_more])]

    def _store(self, buf: str, pos, op, v, dt: str, odt: str) -> list:
        """``buf[pos] = v`` or ``buf[pos] op= v`` (a compound store when C has one)."""
        if op is None:
            return [Store(buf, pos, cast(v, dt, odt))]
        if buf == self.val and self.setup.races == "copies":
            # each thread updates its own copy of the output (:meth:`_thread_copies`)
            buf = self.name(("copy",), f"{self.setup.output.tensor}_copy")
        return self._update(buf, pos, op, v, dt, odt)

    def _update(self, buf: str, pos, op, v, dt: str, odt: str) -> list:
        """``buf[pos] op= v``, atomic on the output with ``races='atomics'``."""
        atomic = buf == self.val and self.setup.races == "atomics"
        if not op.is_user and op.name in _COMPOUND and op.result_dtype(odt, dt).name == odt:
            # threads that update one element of the output each do it atomically
            return [Pragma("omp atomic")] * atomic + [Store(buf, pos, cast(v, dt, odt), _COMPOUND[op.name])]
        if atomic:   # (check_parallel lets only atomic updates through: here the dtypes differ)
            out = self.setup.output.tensor
            raise StrategyError(f"parallelize({self.setup.parallel}, races='atomics') does not apply: the update "
                                f"of {out} by {op.name} computes in {op.result_dtype(odt, dt).name} and rounds to "
                                f"{out}'s {odt}, which one atomic update cannot do; give {out} a "
                                f"{op.result_dtype(odt, dt).name} format, or use races='copies'")
        r, rdt = apply_op(op, [Load(buf, pos), v], [odt, dt], self._helper_sink())
        return [Store(buf, pos, cast(r, rdt, odt))]

    # -- workspaces ------------------------------------------------------------------------

    def _workspace_position(self, acc: Access):
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
        out = [Comment(f"workspace {w}[{over}]: dense, row-major, starts at {_literal_text(n.init)}")]
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
        w, wset, wlist, wn = n.temp, it.param("set"), it.param("idx"), Var(it.param("count"))
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
        assembled = self._assembled_consumer(n, parts[1:])
        count = self._assembled_count() if assembled is not None else None
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
            elif count is not None:   # (_assembled_consumer admits only a loop over the whole list)
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

    def _assembled_consumer(self, n: CWorkspace, consumer: list):
        """In a two-phase compute phase, the output's coordinate of its next entry (a Load), if the
        consumer appends exactly one entry per coordinate of the list, at the output's innermost
        coordinate; else None (the list is sorted as in phase 1)."""
        if self.phase != "compute" or self.par_rows or not self._consumes_listed(n, consumer):
            return None
        last = self.levels_info[-1]
        if self.drop_in_compute:   # (the stores drop the fill: they lag behind where phase 1 stored)
            if self.read_counter is None:
                raise StrategyError(f"workspace {n.temp}: phase 2 reads the coordinates phase 1 stored, but no "
                                    f"read position was made for them (a bug in the lattice strategy)")
            return Load(last["idx"][-1], Var(self.read_counter))
        return Load(last["idx"][-1], Var(last["counter"]))

    def _reads_assembled(self, cfir) -> bool:
        """Whether a two-phase compute phase reads coordinates phase 1 stored (some workspace's
        consumer is one :meth:`_assembled_consumer` takes)."""
        return any(isinstance(n, CWorkspace) and self._consumes_listed(
            n, list(n.body.stmts)[1:] if isinstance(n.body, CSeq) else []) for n in cfir_walk(cfir))

    def _consumes_listed(self, n: CWorkspace, consumer: list) -> bool:
        """Whether ``consumer`` walks ``n``'s sorted list in one loop, appending one entry of the
        output per coordinate (a split, pos or fuse loop over the list walks it in blocks: no)."""
        return (n.ordered and n.index.name not in self.derived_loops and n.index.name not in self.fused_inner
                and self._one_entry_per_listed(n, consumer))

    def _assembled_count(self):
        """In a two-phase compute phase, the count of this row's entries that phase 1 stored at
        ``pos[row + 1]`` (the prefix sum comes after phase 2), when the output's last level is a
        SparseList under Dense levels only; else None (it is counted again by listing)."""
        last = self.levels_info[-1]
        if last["k"] == 0 or not isinstance(last["level"], SparseList) or not last["pos_buffer"]:
            return None
        row = self._dense_position(last["mode"] - 1)
        return cast(Load(last["pos"], BinOp("+", row, Const(1, "int64"))), last["idt"], "int64")

    def _one_entry_per_listed(self, n: CWorkspace, consumer: list) -> bool:
        """Whether ``consumer`` appends one entry of the output per coordinate in ``n``'s list, at
        the output's innermost coordinate, and nothing else."""
        if n.inner or len(consumer) != 1 or not isinstance(consumer[0], CForall):
            return False
        f = consumer[0]
        if f.index != n.index or len(f.loops) != 1 or self.out_dense or self.out_path[-1] != n.index:
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
        wset, wlist, wn = it.param("set"), it.param("idx"), Var(it.param("count"))
        tdt = self.setup.temps[w][1]
        j = self._workspace_position(n.lhs)
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
        if not n.op.is_user and n.op.name in _COMPOUND and n.op.result_dtype(tdt, dt).name == tdt:
            return [*pre, *mark, Store(w, j, cast(v, dt, tdt), _COMPOUND[n.op.name])]
        r, rdt = apply_op(n.op, [Load(w, j), v], [tdt, dt], self._helper_sink())
        return [*pre, *mark, Store(w, j, cast(r, rdt, tdt))]

    def _helper_sink(self):
        return self.helpers

    # -- foralls ---------------------------------------------------------------------------

    def _it_key(self, it) -> str:
        for key, name in self.setup.names.items():
            if name == it.name:
                return key
        raise KeyError(it.name)

    def _parent(self, it: ModeIterator):
        key = self._it_key(it)
        return self.parent[(key, it.mode)] if it.mode > 0 else Const(0, "int64")

    def _pvar(self, it: ModeIterator) -> Var:
        base = f"p{it.name}{it.level}" + (f"_{it.sub}" if it.sub else "")
        return Var(self.name(("p", it.name, it.mode), base))

    def _cvar(self, it: ModeIterator, index) -> Var:
        return Var(self.name(("c", it.name, it.mode), f"{index.name}{it.name}"))

    def _bounds(self, it: ModeIterator):
        lo, hi = it.bounds(self._parent(it))
        if isinstance(lo, Load):
            self.param(lo.buffer)
        self.param(it.param("idx"))
        return lo, hi

    def _fiber_length(self, it: ModeIterator):
        """The number of positions of ``it``'s current fiber (``hi - lo``; ``hi`` from 0)."""
        lo, hi = self._bounds(it)
        return hi if isinstance(lo, Const) and lo.value == 0 else BinOp("-", hi, lo)

    def _hash_capacity(self, it: ModeIterator) -> Var:
        """The capacity of a SparseHash level's table, computed once at the kernel's start.

        The kernel gets no capacity: like the looplet strategy, it recomputes
        ``table_capacity(nnz)`` from the level's stored count, ``pos`` at the number
        of fibers (the product of the Dense sizes above, through SparseList ``pos``).
        """
        key = ("hash-capacity", it.tensor, it.level)
        if key in self.cache:
            return Var(self.cache[key])
        cap = Var(self.name(key, f"{it.tensor}{it.level}_cap"))
        fibers = Const(1, "int64")
        for up in self.setup.iters[self._it_key(it)][:it.mode]:
            if up.level_name in ("Dense", "SparseByteMap"):
                size = Var(self.param(up.param("size")))
                fibers = size if isinstance(fibers, Const) else BinOp("*", fibers, size)
            else:   # SparseList, SparseHash: their stored count
                fibers = Load(self.param(up.param("pos")), fibers)
        self.init += [Comment(f"{it.tensor}'s level {it.level} (SparseHash): its table's capacity, "
                              f"the smallest power of two holding twice its keys")]
        self.init += hash_capacity_stmts(cap, Load(self.param(it.param("pos")), fibers))
        return cap

    def _locate_bytemaps(self, n: CForall) -> CForall:
        """Locate into SparseByteMap and SparseHash levels instead of iterating them where another operand drives.

        A locatable level (:attr:`ModeIterator.locatable`) iterated in a lattice loop is
        located instead (SparseByteMap: child ``parent * size + i``, a case tests
        ``tbl[child]``; SparseHash: the child is probed, a case tests ``child >= 0``) when in
        every loop of the forall each case that does work has it present together with
        another iterated operand (or the dense range), so the other iterators visit every
        coordinate where work is done. All or nothing per forall: the loops share positions.
        """
        def working(loop):
            return [c for c in loop.cases if not c.omit and not isinstance(c.body, CSkip)]
        candidates = {it for loop in n.loops for it in loop.iterated if getattr(it, "locatable", False)}
        chosen = set()
        for bm in sorted(candidates, key=lambda it: (it.name, it.mode)):
            key = self._it_key(bm)
            ok = True
            for loop in n.loops:
                if bm not in loop.iterated:
                    continue
                others = {self._it_key(it) for it in loop.iterated if it != bm and it not in chosen}
                if not others and not loop.universe:
                    ok = False
                for c in working(loop):
                    if key not in c.present or not (loop.universe or others & set(c.present)):
                        ok = False
            if ok:
                chosen.add(bm)
        if not chosen:
            return n
        for it in sorted(chosen, key=lambda it: (it.name, it.mode)):
            how = "probing its hash table" if it.level_name == "SparseHash" else "testing its table"
            self.notes.append(f"forall {n.index}: {it.label} ({it.level_name}) located by {how}, "
                              f"not iterated (the other operands visit every coordinate where work is done)")
        loops = []
        for loop in n.loops:
            iterated = tuple(it for it in loop.iterated if it not in chosen)
            located = loop.located + tuple(it for it in loop.iterated if it in chosen)
            single = len(iterated) == 1 and not loop.universe
            cases = tuple(replace(c, tests=() if single else tuple(t for t in c.tests if t not in chosen))
                          for c in loop.cases)
            loops.append(replace(loop, iterated=iterated, located=located, cases=cases))
        return replace(n, loops=tuple(loops))

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
        out = [Comment(f"the coordinates of {n.index} where no case runs hold the fill {_literal_text(f.fill)}: "
                       f"they are folded into {f.lhs.tensor if not f.lhs.indices else f.lhs} after the loop")]
        every = self._every_position_runs(n)
        if every is not None:
            # one case at every position of one fiber: the fiber's length counts the coordinates
            out += self._forall_loops(n, block)
            missing = BinOp("-", N, self._fiber_length(every))
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
        return out + [self._fold_update(f, missing)]

    def _fold_update(self, f, missing: Var):
        """``if (missing > 0)`` fold the fill into ``f.lhs``: once for an idempotent operator,
        ``missing`` times for ``+``."""
        if f.op.idempotent:
            update = self.assign(CAssign(f.lhs, f.op, literal(f.fill), f.output))
        else:
            times = Cast(f.dtype, missing)
            if not _same(f.fill, 1):
                times = BinOp("*", times, const_of(f.fill, f.dtype))
            update = self.assign(CAssign(f.lhs, f.op, literal(f.fill), f.output), value=(times, f.dtype))
        return If(BinOp(">", missing, Const(0, "int64")), update)

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
        return [Comment(f"{counts}[{j}] counts the coordinates of {n.index} where a case ran at {j}; the others "
                        f"hold the fill {_literal_text(f.fill)}, folded into {f.lhs} after the loop"), *loops,
                For(jv, 0, J, [Declare(missing, "int64", BinOp("-", N, Load(counts, jv))),
                               self._fold_update(f, missing)])]

    def _every_position_runs(self, n: CForall):
        """The iterator of ``n``'s one loop if its one case runs at every position (no tests), else None."""
        if len(n.loops) != 1 or n.index.name in self.derived_loops or n.index.name in self.fused_inner:
            return None
        loop = n.loops[0]
        if loop.universe or len(loop.iterated) != 1 or not loop.iterated[0].unique or not _one_case_always(loop):
            return None
        return loop.iterated[0]

    def _forall_loops(self, n: CForall, block=None) -> list:
        if block is None:
            n = self._locate_bytemaps(n)
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
        out = self._reserve(n, iters, universe, N)
        simple = len(n.loops) == 1 and len(iters) <= 1 and not (universe and iters) and block is None
        par = self._omp_for() if n.index == self.setup.parallel else []
        if par and (n.fold is not None or n.tally):
            raise StrategyError(f"parallelize({n.index}) does not apply: the loop over {n.index} counts the "
                                f"coordinates where a case ran, to fold the fill in after it, on one thread")
        if block is not None and self.setup.parallel is not None and self.setup.parallel.name == block.outer:
            raise StrategyError(f"parallelize({block.outer}) does not apply: the blocks of {block} over the sparse "
                                f"loop carry the iterators' positions from one block to the next (sequential)")
        if par and n.loops and not (simple and (not iters or iters[0].unique)):   # no loops: nothing runs
            what = (f"merges {' and '.join(it.described for it in iters)} in a while loop" if iters else
                    f"runs as {len(n.loops)} loops one after another")
            raise StrategyError(f"parallelize({n.index}) does not apply: the loop over {n.index} {what}, whose "
                                f"iterations depend on each other")
        if simple and not iters:
            return out + par + [self._tag(n.loops[0], For(i, 0, N, self.loop_body(n, n.loops[0], i, iterated=[],
                                                                                     advance=False)))]
        if simple and iters[0].unique:
            it = iters[0]
            p = self._pvar(it)
            lo, hi = self._bounds(it)
            coord = self.assembled.pop(it.name, None) if isinstance(it, WorkspaceIterator) else None
            coord = coord if coord is not None else it.coord(p)
            body = [Declare(i, "int64", coord)] + self.loop_body(n, n.loops[0], i, [it], single=True,
                                                                 advance=False)
            return out + par + [self._tag(n.loops[0], For(p, lo, hi, body))]
        for it in iters:
            p = self._pvar(it)
            lo, hi = self._bounds(it)
            out += [Declare(p, "int64", lo), Declare(Var(p.name + "_end"), "int64", hi)]
        if universe:
            out.append(Declare(i, "int64", Const(0, "int64")))
        loops_ir = []
        if block is not None:
            f = Const(block.factor, "int64")
            ceil = _ceil_div(N, f)
            o = Var(self.name(("split", block.outer), block.outer))
            limit = Var(self.name(("block_end", n.index.name), f"{n.index.name}_hi"))
            if block.direction == "down":
                nblocks, bsize = ceil, f
            else:
                bsize = Var(self.name(("block", n.index.name), f"{n.index.name}_block"))
                nblocks = Var(self.name(("blocks", n.index.name), f"{n.index.name}_blocks"))
                out += [Declare(bsize, "int64", ceil), Declare(nblocks, "int64", _at_most(f, N))]
            start = BinOp("*", o, bsize)
        for loop in n.loops:
            its = list(loop.iterated)
            conds = [self._has_entry(it) for it in its]
            if universe:
                conds.append(BinOp("<", i, N if block is None else limit))
            single = len(its) == 1 and not universe
            body = []
            coord = {}
            for it in its:
                p = self._pvar(it)
                if single:
                    body.append(Declare(i, "int64", it.coord(p)))
                    coord[it] = i
                else:
                    c = self._cvar(it, n.index)
                    body.append(Declare(c, "int64", it.coord(p)))
                    coord[it] = c
            busy = {frozenset(c.tests) for c in loop.cases if not c.omit}
            pair = (len(its) == 2 and not universe and all(it.unique for it in its) and not loop.located
                    and len(busy) >= 2 and block is None)
            if len(its) > 1 and not universe and not pair:
                m = coord[its[0]]
                for it in its[1:]:
                    c = coord[it]
                    m = Select(BinOp("<", c, m), c, m)
                body.append(Declare(i, "int64", m))
            if block is not None and not universe:
                # the block ends here: the positions stay for the next block
                body.append(If(BinOp(">=", i, limit), [Break()]))
            body += self.loop_body(n, loop, i, its, single=single, coord=coord, pair=pair)
            loops_ir.append(self._tag(loop, While(and_(*conds), body)))
        if block is None:
            return out + loops_ir
        guard = Comment(f"{block}: block {block.outer} holds the coordinates {n.index} < {limit.name} "
                        f"(the tail guard and the block's end); the loops walk {n.index} itself, so "
                        f"{block.inner} = {n.index} - {block.outer} * "
                        f"{'block' if block.direction == 'up' else block.factor} needs no variable")
        # (the block's end, start + block, is not computed past N: near 2^63 it would overflow)
        end = Select(BinOp("<", start, BinOp("-", N, bsize)), BinOp("+", start, bsize), N)
        blocks = [guard, Declare(limit, "int64", end)]
        if universe or not iters:
            return out + [For(o, 0, nblocks, blocks + loops_ir)]
        # a block that no operand has an entry in is skipped: the blocks of a hypersparse loop
        # (2^60 of them at n = 2^62) are not visited one by one
        nxt = Var(self.name(("next", n.index.name), f"{n.index.name}_next"))
        first, *others = iters
        blocks.append(Declare(nxt, "int64", Select(self._has_entry(first), first.coord(self._pvar(first)), N)))
        for it in others:
            c = it.coord(self._pvar(it))
            blocks.append(If(and_(self._has_entry(it), BinOp("<", c, nxt)), [Assign(nxt, c)]))
        skip = [Comment(f"no entry before {limit.name}: on to the block of {nxt.name} (none left: done)"),
                If(BinOp("==", nxt, N), [Break()]),
                Assign(o, BinOp("-", BinOp("/", nxt, bsize), Const(1, "int64")))]
        return out + [For(o, 0, nblocks, blocks + [If(BinOp(">=", nxt, limit), skip, loops_ir)])]

    def _has_entry(self, it):
        """``p < p_end``: whether iterator ``it`` has an entry left."""
        p = self._pvar(it)
        return BinOp("<", p, Var(p.name + "_end"))

    def _tag(self, loop: CLoop, stmt):
        """``stmt`` (a lattice loop, or a list of statements) tagged ``lattice:<index>:<point>``."""
        names = [it.name for it in loop.iterated] + (["U"] if loop.universe else [])
        return Tagged(f"lattice:{loop.index}:{'∩'.join(dict.fromkeys(names)) or 'U'}",
                      stmt if isinstance(stmt, list) else [stmt], headline(loop))

    def _case_tag(self, index, case: CCase, stmts: list) -> list:
        """A case's statements tagged ``lattice:<index>:<present operands>``."""
        names = [self.setup.names[k] for k in case.present]
        return ([Tagged(f"lattice:{index}:{'∩'.join(names) or '∅'}", stmts, headline(case))]
                if stmts else stmts)

    # -- derived iteration spaces (split, fuse, pos) -----------------------------------------

    def _iters(self, n: CForall) -> list:
        iters = []
        for loop in n.loops:
            for it in loop.iterated:
                if it not in iters:
                    iters.append(it)
        return iters

    def _parallel_pragma(self, var: str) -> list:
        p = self.setup.parallel
        return self._omp_for() if p is not None and p.name == var else []

    def _omp_for(self) -> list:
        """The pragma of the parallel loop (a scalar result's loops get their reduction clauses
        once the function is built: :meth:`_reduction_clauses`).

        Iterations go to the threads in shrinking chunks (guided: a long row late in the loop
        does not hold up the rest), except with ``races="copies"``: there each thread adds its
        iterations into its own copy of the output, and a fixed (static) split gives each copy
        the same iterations at every call, so a float result comes out the same each time.
        """
        how = "static" if self.setup.races == "copies" else "guided"
        return [Pragma(f"omp parallel for schedule({how})")]

    def _reduction_clauses(self, body: list) -> list:
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

    def _thread_copies(self, body: list, op) -> list:
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
        n = self._dense_count(len(self.out_sizes))
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
                   For(q, 0, n, [For(t, 0, count, self._update(self.val, q, op, Load(copies, BinOp(
                       "+", BinOp("*", t, n), q)), odt, odt))])]

        def with_copy(pragma, loop):
            if copy not in {x.buffer for x in ir_walk(loop) if isinstance(x, Store)}:
                return [pragma, loop]
            note = Comment(f"this thread's own copy of {out}, which its updates go to")
            return [pragma, first_in_loop(loop, [note, view])] + combine

        return map_parallel_loops(body, with_copy)

    def _derived_loop(self, var: str, lo, hi, body, what: str, v: Var | None = None, block_start=None) -> list:
        """``for v in [lo, hi): body`` (``v`` names ``var``), or its blocks when a split applies to ``var``.

        ``block_start(first)`` gives statements that open each block, ``first`` being the
        block's first value of ``v`` (a parallel block of fused positions finds its row).
        """
        split = self.splits.get(var)
        v = v or Var(self.name(("derived", var), var))
        if split is None:
            return self._parallel_pragma(var) + [For(v, lo, hi, body)]
        f = Const(split.factor, "int64")
        zero = isinstance(lo, Const) and lo.value == 0
        extent = hi if zero else BinOp("-", hi, lo)
        ceil = _ceil_div(extent, f)
        o = Var(self.name(("split", split.outer), split.outer))
        inner = Var(self.name(("split", split.inner), split.inner))
        pre = []
        if split.direction == "down":
            nblocks, bsize = ceil, f
        else:
            bsize = Var(self.name(("block", var), f"{var}_block"))
            nblocks = Var(self.name(("blocks", var), f"{var}_blocks"))
            pre += [Declare(bsize, "int64", ceil), Declare(nblocks, "int64", _at_most(f, extent))]
        opening = []
        if block_start is not None:
            first = BinOp("*", o, bsize)
            opening = block_start(first if zero else BinOp("+", lo, first))
        if split.direction == "down" and not self._derives(split.inner):
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
            return pre + self._parallel_pragma(split.outer) + [For(o, 0, nblocks, opening + block)]
        at = BinOp("+", BinOp("*", o, bsize), inner)
        guards = [Comment(f"{var} = {split.outer} * {'block' if split.direction == 'up' else split.factor} + "
                          f"{split.inner} ({split})"),
                  Declare(v, "int64", at if zero else BinOp("+", lo, at)),
                  If(BinOp(">=", v, hi), [Break()])]    # the tail guard: the last block is partial
        return pre + self._parallel_pragma(split.outer) + [For(o, 0, nblocks,
                                                               opening + [For(inner, 0, bsize, guards + body)])]

    def _derives(self, var: str) -> bool:
        """Whether another relation (a split, fuse or pos) transforms ``var``."""
        return any(var in (getattr(r, "index", None), getattr(r, "outer", None), getattr(r, "inner", None))
                   for r in self.setup.relations if var not in getattr(r, "derived", ()))

    def derived_forall(self, n: CForall) -> list:
        """A forall iterated through its derived variables (see :mod:`compiler.lattice.derived`)."""
        name = n.index.name
        i = Var(name)
        iters = self._iters(n)
        one_loop = len(n.loops) == 1
        loop = n.loops[0] if n.loops else None
        dense = one_loop and loop.universe and not iters
        ops = " and ".join(it.described for it in iters)
        if name in self.fused_inner:
            how = self.fused_inner.pop(name)
            if how[0] == "div":
                _, f, size = how
                return [Declare(i, "int64", BinOp("%", f, size))] + self.loop_body(n, loop, i, [], advance=False)
            _, it, p = how
            return [Declare(i, "int64", it.coord(p))] + self.loop_body(n, loop, i, [it], single=True, advance=False)
        N = self.size(n.extent)
        out = self._reserve(n, iters, bool(loop and loop.universe), N)
        fuse = self.fuses.get(name)
        if fuse is not None:
            pos = self.poses.get(fuse.fused)
            # the loop over the outer variable: the dense range, or (with pos) the compressed
            # row level of the tensor whose positions the fused loop follows, alone
            rows_it = (iters[0] if one_loop and not loop.universe and len(iters) == 1 and iters[0].unique
                       and pos is not None and iters[0].tensor == pos.tensor and iters[0].level_name == "SparseList"
                       else None)
            if not dense and rows_it is None:
                raise StrategyError(f"{fuse} does not apply: the loop over {name} iterates {ops or 'several loops'}; "
                                    f"only a dense outer loop, or the compressed row level of the tensor the "
                                    f"fused positions follow (pos), can be fused")
            inner = self._only_forall(loop, fuse)
            iters2 = self._iters(inner)
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
                return out + [self._tag(loop2, stmts)]
            return out + self._fused_positions(n, loop, loop2, inner, iters2, fuse, pos, rows_it)
        pos = self.poses.get(name)
        if pos is not None:
            it = self._pos_iterator(n, loop if one_loop else None, iters, pos, name)
            p = Var(self.name(("p", it.name, it.mode), pos.position))
            lo, hi = self._bounds(it)
            body = [Declare(i, "int64", it.coord(p))] + self.loop_body(n, loop, i, [it], single=True, advance=False)
            return out + [self._tag(loop, self._derived_loop(pos.position, lo, hi, body, str(pos), p))]
        split = self.splits[name]
        if not dense:
            # a coordinate split of a sparse (merged) loop: blocks of coordinates, positions carried over
            return self.forall(n, block=split)
        return out + [self._tag(loop, self._derived_loop(name, Const(0, "int64"), N,
                                                         self.loop_body(n, loop, i, [], advance=False), str(split), i))]

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
        key = self._it_key(it)
        row_it = self.setup.iters[key][it.mode - 1]
        posbuf = self.param(it.param("pos"))
        self.param(it.param("idx"))
        if rows_it is None:
            # Dense rows: the row pointer is i itself; pos is indexed by the row's position
            parent = self._parent(row_it)
            trivial = isinstance(parent, Const) and parent.value == 0
            r = i
            at = (lambda q: q) if trivial else (lambda q: row_it.locate(parent, q))  # noqa: E731
            rlo, rhi = Const(0, "int64"), N
            coord = []
        else:
            r = self._pvar(rows_it)
            self.notes.append(f"{fuse} over {pos.tensor}'s compressed row level: the row pointer {r.name} "
                              f"walks {pos.tensor}'s row positions")
            at = lambda q: q  # noqa: E731
            rlo, rhi = self._bounds(rows_it)
            coord = [Declare(i, "int64", rows_it.coord(r))]
        p = Var(self.name(("p", it.name, it.mode), pos.position))
        self.fused_inner[fuse.inner] = ("pos", it, p)
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
        if not {i.name, r.name} & _names_used(inner_body):
            # nothing reads the row (a reduction over every entry): no row pointer to walk, nor for a
            # parallel block to find by binary search
            self.notes.append(f"{fuse} with {pos}: the loop reads no row, so no row pointer walks")
            self.counting.pop(fuse.inner, None)
            self._check_consumed(fuse)
            return fold[0] + [self._tag(loop2, self._derived_loop(pos.position, lo, hi, inner_body, str(pos), p))] \
                + fold[1]
        body = walk + coord + inner_body
        if parallel:
            # each block starts at the row holding its first position: the first row whose
            # positions end after it (binary search over the row pointers)
            top, mid = (Var(self.name(("search", fuse.fused, x), x)) for x in (f"{r.name}_hi", f"{r.name}_mid"))
            first = Var(self.name(("search", fuse.fused, "first"), f"{pos.position}_first"))
            two, one = Const(2, "int64"), Const(1, "int64")

            def search(start):
                return [Comment(f"this block's first row: binary search for the row holding position "
                                f"{first.name}"),
                        Declare(first, "int64", start), Declare(r, "int64", rlo), Declare(top, "int64", rhi),
                        While(BinOp("<", r, top), [
                            Declare(mid, "int64", BinOp("+", r, BinOp("/", BinOp("-", top, r), two))),
                            If(BinOp("<=", Load(posbuf, BinOp("+", at(mid), one)), first),
                               [Assign(r, BinOp("+", mid, one))], [Assign(top, mid)])])]
            stmts = self._derived_loop(pos.position, lo, hi, body, str(pos), p, block_start=search)
            self.notes.append(f"the blocks of {split.outer} run on threads; each finds the row of its first "
                              f"position by binary search, then walks")
        else:
            stmts = [Declare(r, "int64", rlo)] + self._derived_loop(pos.position, lo, hi, body, str(pos), p)
        self.counting.pop(fuse.inner, None)
        self._check_consumed(fuse)
        return fold[0] + [self._tag(loop2, stmts)] + fold[1]

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
                       f"{_literal_text(f.fill)}: they are folded into {f.lhs.tensor} after the loop")
        if loop2 is not None and _one_case_always(loop2):
            return [note], [Declare(missing, "int64", BinOp("-", coordinates, positions)),
                            self._fold_update(f, missing)]
        if self.setup.parallel is not None:
            raise StrategyError(f"parallelize({self.setup.parallel}) does not apply: the fused loop counts the "
                                f"positions where a case ran, to fold the fill in after it, on one thread")
        ran = Var(self.name(("fold", name, id(inner)), f"{fuse.fused}_ran"))
        self.counting[name] = CompoundAssign("+", ran, Const(1, "int64"))
        return [note, Declare(ran, "int64", Const(0, "int64"))], [
            Declare(missing, "int64", BinOp("-", coordinates, ran)), self._fold_update(f, missing)]

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

    def _reserve(self, n: CForall, iters, universe: bool, N) -> list:
        """Grow the innermost output level once per fiber, for every entry the loops can append.

        The bound is the extent under the universe, else the sum of the iterated fibers'
        lengths (each loop iteration appends at most one entry), so appends need no check.
        """
        if self.out_dense or not self.out_path or n.index != self.out_path[-1] or self.producing \
                or self.phase == "compute" or self.par_rows:
            return []
        if universe or not iters:
            bound = N
        else:
            bound = None
            for it in iters:
                size = self._fiber_length(it)
                bound = size if bound is None else BinOp("+", bound, size)
        last = self.levels_info[-1]
        total = None if universe else self._total_bound(iters)
        # The up-front allocation covers every loop over a subset of the iterators it counted;
        # any other loop (another lattice point, a tail) reserves per fiber below.
        keys = frozenset(self._it_key(it) for it in iters)
        covered = getattr(self, "reserved_upfront", None)
        if covered is not None and not universe and keys <= covered:
            return []
        if total is not None and covered is None and not getattr(self, "reserved", False):
            # one allocation up front: all entries of the iterated levels, so no fiber needs more
            self.init += [Grow(name, total) for name in (*last["idx"], self.val)]
            self.reserved = True
            self.reserved_upfront = keys
            return []
        room = Var(self.name(("room",), f"n{self.setup.output.tensor}"))
        needed = BinOp("+", Var(last["counter"]), room)
        self.reserved = True
        return [Declare(room, "int64", bound)] + [Grow(name, needed) for name in (*last["idx"], self.val)]

    def _total_bound(self, iters):
        """Entries of the iterated levels over all their fibers, when their ancestors are all Dense
        and each fiber is visited once (the loops around index the tensor: an outer product
        visits ``z[j]``'s fiber once per ``i``)."""
        total = None
        accesses = {str(a): a for a in _accesses(self.setup)}
        for it in iters:
            if it.level_name != "SparseList":
                return None
            acc = accesses.get(self._it_key(it))
            if acc is None or any(i not in acc.indices for i in self.loop_stack):
                return None
            chain = self.setup.iters[self._it_key(it)][:it.mode]
            if any(c.level_name != "Dense" for c in chain):
                return None
            count = None
            for c in chain:
                v = Var(c.param("size"))
                count = v if count is None else BinOp("*", count, v)
            n = Load(it.param("pos"), count if count is not None else Const(0, "int64")) if count is not None \
                else Load(it.param("pos"), Const(1, "int64"))
            total = n if total is None else BinOp("+", total, n)
        return total

    def _segend(self, it, coord_var) -> tuple[Var, list]:
        p = self._pvar(it)
        s = Var(self.name(("s", it.name, it.mode), f"s{it.name}{it.level}" + (f"_{it.sub}" if it.sub else "")))
        end = Var(p.name + "_end")
        return s, [Declare(s, "int64", BinOp("+", p, 1)),
                   While(and_(BinOp("<", s, end), BinOp("==", it.coord(s), coord_var)),
                         [CompoundAssign("+", s, Const(1, "int64"))])]

    def loop_body(self, n: CForall, loop: CLoop, i: Var, iterated, single=False, coord=None,
                  advance=True, pair=False) -> list:
        s = self.setup
        body = []
        coord = coord or {it: i for it in iterated}
        segs = {}
        for it in iterated:
            if not it.unique:
                sv, stmts = self._segend(it, coord[it])
                segs[it] = sv
                body += stmts
        located, later = {}, []
        for loc in loop.located:
            if isinstance(loc, FlatLocator) and loc.tensor in s.temps:
                continue   # a dense workspace is read by coordinate (value_of)
            if isinstance(loc, FlatLocator):
                fmt = s.formats[loc.tensor]
                acc = next(a for a in _accesses(s) if str(a) == loc.key)
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
                key = self._it_key(loc)
                # a repeated index (a diagonal, B[i, i, j]) locates a level under one located just above
                if isinstance(loc, Found) and s.iters[key][loc.mode - 1].kind == "sparse":
                    # searched under the iterated level above, in each case it is at i (none: absent here)
                    later += [loc] if s.iters[key][loc.mode - 1] in iterated else []
                    continue
                parent = located[key][0] if located.get(key, (None, -1))[1] == loc.mode else self._parent(loc)
                if isinstance(loc, Found):   # a diagonal's sparse last level, searched for i
                    pv, stmts = self._find(loc, parent, i)
                    body += stmts
                elif loc.level_name == "SparseHash":
                    pv = self._pvar(loc)
                    fresh = lambda base, loc=loc: Var(self.name(("probe", loc.name, loc.mode, base),  # noqa: E731
                                                                f"{base}{loc.name}{loc.level}"))
                    body += loc.locate_stmts(pv, parent, i, fresh, self._hash_capacity(loc))
                elif isinstance(parent, Const) and parent.value == 0:
                    pv = i
                else:
                    pv = self._pvar(loc)
                    body.append(Declare(pv, "int64", loc.locate(parent, i)))
                located[self._it_key(loc)] = (pv, loc.mode + 1)
        busy = {frozenset(c.tests) for c in loop.cases if not c.omit}
        if single or len(iterated) > 4 or len(busy) < 2:
            # one region does the work (an intersection): test it, advance branch-free
            body += self._case_chain(loop, iterated, segs, located, coord, i, tested=True, later=later)
            body += self._advance(iterated, segs, coord, i, single, advance,
                                  self._galloping(loop, iterated, busy) if advance and not single else {})
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

    def _find(self, loc: Found, parent, i) -> tuple[Var, list]:
        """Search a diagonal's sparse last level ``loc`` for ``i`` under ``parent``: its position, or -1."""
        pv = self._pvar(loc.it)
        fresh = lambda base: Var(self.name(("find", loc.name, loc.mode, base),  # noqa: E731
                                           f"{base}{loc.name}{loc.level}"))
        cap = self._hash_capacity(loc.it) if loc.it.level_name == "SparseHash" else None
        self.found.add(self._it_key(loc))
        return pv, loc.find_stmts(pv, parent, i, fresh, cap)

    def _case_chain(self, loop, iterated, segs, located, coord, i, tested: bool, later=()) -> list:
        """The ``if / else if`` chain of a loop's cases (coordinate tests only when ``tested``); ``later``:
        a diagonal's last levels under iterated ones (DCSR's, COO's rows), searched in each case where
        that level is at i, once its position is known."""
        s = self.setup
        chain = []
        for case in loop.cases:
            conds = [BinOp("==", coord[t], i) for t in case.tests] if tested else []
            for loc in loop.located:
                if getattr(loc, "locatable", False) and self._it_key(loc) in case.present:
                    self.param(loc.param("tbl"))
                    conds.append(loc.present(located[self._it_key(loc)][0]))
            for key in case.value_tests:
                acc = s.access(key)
                if acc.tensor in s.formats and s.formats[acc.tensor].leaf.name == "Pattern":
                    continue
                if any(self._it_key(loc) == key for loc in later):
                    raise StrategyError(f"{acc} is a diagonal under a sparse level whose entries' values this "
                                        f"loop tests against the fill; the lattice strategy searches it only "
                                        f"in the case's body; store {acc.tensor} as csr or csc, or use "
                                        f"strategy='looplets'")
                self._set_parents(iterated, segs, located, case, i)
                v, dt = self.value_of(acc)
                conds.append(not_fill(v, dt, s.fill_of(acc)))
            if case.omit:
                stmts = [Comment("omitted: " + " ∩ ".join(self.setup.names[k] for k in case.present))]
            else:
                self._set_parents(iterated, segs, located, case, i)
                finds = []
                for loc in later:
                    key = self._it_key(loc)
                    if key in case.present:
                        pv, stmts = self._find(loc, self.parent[(key, loc.mode)], i)
                        self.parent[(key, loc.mode + 1)] = pv
                        finds += stmts
                stmts = self._case_tag(loop.index, case, finds + self.case_body(loop.index, self.emit(case.body)))
                if loop.index.name in self.counting:
                    stmts.append(self.counting[loop.index.name])
            chain.append((conds, stmts))
            if not conds:
                break
        while chain and chain[-1][1] and isinstance(chain[-1][1][0], Comment) and len(chain[-1][1]) == 1 \
                and chain[-1][0]:
            chain.pop()  # a trailing omitted case changes nothing
        return _if_chain(chain)

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
            parent = self._parent(it)
            if it.unique and it.level_name == "SparseList" and isinstance(parent, Const) and parent.value == 0:
                out[it] = other
        return out

    def _advance(self, iterated, segs, coord, i, single: bool, advance: bool, gallop=None) -> list:
        out = []
        for it in (iterated if advance else ()):
            p = self._pvar(it)
            if it in (gallop or {}):
                # behind the other iterator: gallop to its coordinate (no case runs in between)
                target = coord[gallop[it]]
                fresh = lambda base, p=p: self.name(("gallop", p.name, base), f"{base}_{p.name}")  # noqa: E731
                out.append(If(BinOp("<", coord[it], target),
                              gallop_past(p, it.param("idx"), Var(p.name + "_end"), target, fresh),
                              [CompoundAssign("+", p, Cast("int64", BinOp("==", coord[it], i)))]))
                continue
            if single:
                out.append(CompoundAssign("+", p, Const(1, "int64")) if it.unique else Assign(p, segs[it]))
            elif it.unique:
                out.append(CompoundAssign("+", p, Cast("int64", BinOp("==", coord[it], i))))
            else:
                out.append(If(BinOp("==", coord[it], i), [Assign(p, segs[it])]))
        return out

    def _set_parents(self, iterated, segs, located, case: CCase, i=None):
        for it in iterated:
            key = self._it_key(it)
            p = self._pvar(it)
            if it.level_name == "SparseByteMap":   # children are located by coordinate
                self.parent[(key, it.mode + 1)] = it.locate(self._parent(it), i)
                continue
            self.parent[(key, it.mode + 1)] = it.child(p, segs.get(it))
        for key, (pv, mode) in located.items():
            self.parent[(key, mode)] = pv

    def case_body(self, index, stmts: list) -> list:
        """Wrap a case body with the assembly of a sparse output level indexed by ``index``."""
        if self.par_rows and stmts and not self.producing and self.out_path[0] == index:
            return self._row_on_thread(stmts)
        if self.out_dense or not stmts or (self.phase == "compute" and not self.drop_in_compute) or self.producing:
            return stmts
        for info in self.levels_info[1:]:
            k = info["k"]
            if not isinstance(info["level"], SparseList):
                continue
            if self.out_path[info["mode"] - 1] != index:
                continue
            child = Var(info["counter"])
            begin = Var(self.name(("begin", k), f"{info['counter']}_begin"))
            pre = [Declare(begin, "int64", child)]
            prev_level = self.out_levels[k - 1]
            if isinstance(prev_level, Dense):
                ppos = self._dense_position(info["mode"] - 1)
                post = [Store(info["pos"], BinOp("+", ppos, 1), cast(BinOp("-", child, begin), "int64", info["idt"]))]
                if self.phase == "compute" and self.read_counter is not None:
                    # the next row's coordinates start where phase 1 stored this row's, plus their
                    # count (a case that does not read them, merging, moves the read position too)
                    read = Var(self.read_counter)
                    after = Var(self.name(("read_next", k), f"{self.read_counter}_next"))
                    count = cast(Load(info["pos"], BinOp("+", ppos, 1)), info["idt"], "int64")
                    pre.append(Declare(after, "int64", BinOp("+", read, count)))
                    post.append(Assign(read, after))
            else:
                pinfo = next(x for x in self.levels_info if x["k"] == k - 1)
                pc = Var(pinfo["counter"])
                post = [If(BinOp(">", child, begin), [
                    Grow(pinfo["idx"][0], BinOp("+", pc, 1)),
                    Store(pinfo["idx"][0], pc, Var(index.name) if pinfo["idt"] == "int64"
                          else Cast(pinfo["idt"], Var(index.name))),
                    CompoundAssign("+", pc, Const(1, "int64")),
                    Grow(info["pos"], BinOp("+", pc, 1)),
                    Store(info["pos"], pc, Cast(info["idt"], child) if info["idt"] != "int64" else child),
                    Assign(Var(info["pos_len"]), BinOp("+", pc, 1)),
                ])]
            return pre + stmts + post
        return stmts

    def _row_on_thread(self, stmts: list) -> list:
        """A row of a two-phase kernel on threads: phase 1 counts its entries into ``pos[i + 1]``;
        phase 2 stores them from the row's start ``pos[i]`` (after the prefix sum), and where
        they end (it drops the fill) into ``end[i]``."""
        info = self.row_info
        counter, row = Var(info["counter"]), self._dense_position(0)
        end = BinOp("+", row, 1)
        if self.phase == "assemble":
            if self.row_fibers is not None:
                # each step of the row's one loop appends at most one entry, and the loop stops
                # when its shortest fiber does: that fiber's length bounds the row (no merge)
                lengths, named = [], []
                for it in self.row_fibers.loops[0].iterated:
                    n = Var(self.name(("fiber", it.name, it.mode), f"n{it.label}"))
                    named.append(Declare(n, "int64", self._fiber_length(it)))
                    lengths.append(n)
                bound = lengths[0]
                for length in lengths[1:]:
                    bound = Select(BinOp("<", length, bound), length, bound)
                what = "its one fiber" if len(lengths) == 1 else "the shortest of its fibers"
                if len(lengths) == 1:
                    named, bound = [], named[0].init
                return [Comment(f"at most one entry per step of the row's loop: {what} bounds them"),
                        *named, Store(info["pos"], end, cast(bound, "int64", info["idt"]))]
            if self.bounded_rows:
                bound = self._count_row_scatters(stmts, counter)
                if bound is None:
                    self.bounded_rows = False
                else:
                    stmts = [Comment("at most one entry per scatter into the workspace: count those"), *bound]
            return [Declare(counter, "int64", Const(0, "int64")), *stmts,
                    Store(info["pos"], end, cast(counter, "int64", info["idt"]))]
        return [Declare(counter, "int64", cast(Load(info["pos"], row), info["idt"], "int64")), *stmts,
                Store(self.row_ends, row, counter)]

    def _count_row_scatters(self, stmts: list, counter: Var):
        """A row's count of its scatters into the workspace (:func:`count_scatters`), or None.

        The count may read the inputs and the names the row does not assign (its row number,
        the sizes); anything else and there is no count.
        """
        inputs = {n for n, p in self.inputs.items() if isinstance(p, Buffer)}
        nodes = list(ir_walk(tuple(stmts)))
        assigned = {n.var.name for n in nodes if isinstance(n, (Declare, For))} | \
                   {n.target.name for n in nodes if isinstance(n, (Assign, CompoundAssign))}
        fixed = {n.name for n in nodes if isinstance(n, Var)} - assigned
        return count_scatters(stmts, self.bitmaps, inputs, fixed, counter)

    def _row_body(self, cfir):
        """What each row of the output runs: the body of the row forall's one loop and one
        case, or None."""
        row = next((n for n in cfir_walk(cfir) if isinstance(n, CForall) and n.index == self.out_path[0]), None)
        if row is None or len(row.loops) != 1:
            return None
        cases = [c for c in row.loops[0].cases if not c.omit]
        return cases[0].body if len(cases) == 1 else None

    def _rows_from_one_workspace(self, cfir) -> bool:
        """Whether each row of the output takes its entries from one workspace, one per
        coordinate of its list (so the row's scatters into it bound its entries)."""
        n = self._row_body(cfir)
        if not isinstance(n, CWorkspace):
            return False
        parts = list(n.body.stmts) if isinstance(n.body, CSeq) else [n.body]
        return self._one_entry_per_listed(n, parts[1:])

    def _row_loop(self, cfir):
        """The forall over a CSR output's columns when each row runs it as one loop (an
        intersection, or one fiber) appending at most one entry per step, else None."""
        inner = self._row_body(cfir) if len(self.out_path) == 2 else None
        if not isinstance(inner, CForall) or inner.index != self.out_path[1]:
            return None
        if inner.fold is not None or len(inner.loops) != 1:
            return None
        loop = inner.loops[0]
        if loop.universe or not loop.iterated or not all(it.unique for it in loop.iterated):
            return None
        if not all(isinstance(c.body, CAssign) and c.body.output for c in loop.cases if not c.omit):
            return None
        return inner

    def _parallel_two_phase(self, cfir) -> list:
        """Two-phase assembly with each phase's rows on threads (a CSR, DCSR, COO or sparse-vector
        output over a parallel row loop).

        One shared counter cannot append from several threads, so the rows keep their own:
        phase 1 counts each row's entries, a prefix sum turns the counts into the rows' starts,
        the output gets room for exactly that many entries, and phase 2 stores each row's
        entries from its start (computing the coordinates again: phase 1 kept none). Phase 2
        drops the entries equal to the fill as it goes (on the threads) and records where
        each row's entries end in a scratch array, one element per row; a sequential pass
        then moves the rows down over the gaps, and moves nothing while there is no gap.
        A DCSR output is counted by row number, as a CSR one; every row is then an entry
        of its level 0, and the compaction drops the empty rows. A COO output (one level, no row
        positions) counts its rows in a scratch array of row starts instead, and so does a sparse
        vector, whose rows are its coordinates (one entry at most each).

        When each row's entries all come from one workspace (Gustavson's SpGEMM), phase 1
        counts the row's scatters into it instead (:mod:`compiler.lattice.reserve`: B's row
        lengths, no workspace), at least as many as its entries; the rest of the row's
        room is one more gap.
        """
        s, yes = self.setup, Const(True, "bool")
        self.value_tested = _value_tested(cfir)
        self.bounded_rows = self._rows_from_one_workspace(cfir)
        self.row_fibers = None if self.bounded_rows else self._row_loop(cfir)
        last = self.levels_info[-1]
        shared, k, out = last["counter"], last["k"], s.output.tensor
        rows = Var(self.out_sizes[0].name)
        one_level = len(self.levels_info) == 1
        if one_level:
            # a COO or sparse-vector output has no row positions: the rows count and start in a
            # scratch array (a sparse vector's rows are its coordinates, each one entry at most)
            starts_name = self.name(("rowstart", k), f"{out}{k}_start")
            self.allocs.append((starts_name, "int64", BinOp("+", rows, 1), Const(0, "int64")))
            self.shared_allocs.add(starts_name)
            self.row_info = {**last, "pos": starts_name, "idt": "int64"}
        else:
            self.row_info = self.levels_info[1]
        self.row_ends = self.name(("rowend", k), f"{out}{k}_end")
        self.allocs.append((self.row_ends, "int64", rows, None))
        self.shared_allocs.add(self.row_ends)
        compact = self._compaction()
        # each row appends with its own counter (a COO level's scratch row starts name it too)
        last["counter"] = self.row_info["counter"] = self.name(("rowcount", k), f"n{out}{k}")
        self.phase = "assemble"
        first = self.emit(cfir)
        last["counter"] = self.row_info["counter"] = self.name(("rowpos", k), f"{shared}_row")
        self.phase = "compute"
        second = self.emit(cfir)
        self.phase, last["counter"], self.row_info["counter"] = None, shared, shared
        total = cast(Load(self.row_info["pos"], rows), self.row_info["idt"], "int64")
        self.notes.append(f"parallelize({s.parallel}) with the sparse output {out}: each row counts "
                          + ("the scatters into its workspace (a bound of its entries)" if self.bounded_rows
                             else "the entries of its shortest fiber (a bound of its entries)"
                             if self.row_fibers is not None else "its entries")
                          + ", then fills them from its start (two-phase, on threads)")
        if one_level:
            staging, starts, final = [], [self._prefix_sum(self.row_info, rows)], []
        elif not isinstance(self.levels_info[0]["level"], Dense):   # DCSR
            # the rows are counted by row number, as in CSR; the compaction then drops the empty ones
            top, row = self.levels_info[0], Var(self.name(("rows", k), "row"))
            staging = [Comment(f"{out}'s rows count their entries at {last['pos']}[row + 1], as in CSR"),
                       Grow(last["pos"], BinOp("+", rows, 1)),
                       For(row, 0, rows, [Store(last["pos"], BinOp("+", row, 1), Const(0, last["idt"]))])]
            starts = [self._prefix_sum(last, rows)]
            every_row = [Comment(f"every row is an entry of {out}'s level 0 for now: the compaction keeps the "
                                 f"non-empty ones"),
                         Grow(top["idx"][0], rows),
                         For(row, 0, rows, [Store(top["idx"][0], row, cast(row, "int64", top["idt"]))]),
                         Assign(Var(top["counter"]), rows), Assign(Var(last["pos_len"]), BinOp("+", rows, 1))]
            final = every_row + self.final
        else:
            staging, starts, final = [], self.final, []
        if self.bounded_rows:
            counted, room = "its products (at most one entry each)", "room for that many"
        elif self.row_fibers is not None:
            counted, room = "the steps of its loop (at most one entry each)", "room for that many"
        else:
            counted, room = "its entries", "room for exactly their entries"
        row = "coordinate" if len(self.out_sizes) == 1 else "row"   # a sparse vector's "rows"
        return staging + [
            Comment(f"phase 1, count: each {row} of {out} counts {counted} ({row}s run on threads)"),
            If(yes, first),
            Comment(f"the {row}s' starts, and {room}"),
            *starts, *[Grow(name, total) for name in (*last["idx"], self.val)],
            Comment(f"phase 2, compute: each {row} stores its entries from its start, skipping the fill, and records "
                    f"where they end ({row}s run on threads)"),
            If(yes, second)] + final + compact + (self.final if one_level else [])

    def function(self, cfir, name: str, assembly: str = "one-pass") -> Function:
        s = self.setup
        if assembly == "two-phase" and s.parallel is not None:
            self._two_phase_check()
            self.par_rows = True
            phases = self._parallel_two_phase(cfir)   # emitting adds to init (a hash table's capacity)
            body = list(self.init) + phases
        elif assembly == "two-phase":
            self._two_phase_check()
            # one sparse level under dense ones (CSR): phase 2 stores each row's kept count and
            # drops the fill as it goes; above a sparse level, a compaction pass drops it after
            self.drop_in_compute = self._assembled_count() is not None
            compact = [] if self.drop_in_compute else self._compaction()
            yes = Const(True, "bool")
            self.value_tested = _value_tested(cfir)
            self.phase = "assemble"
            first = self.emit(cfir)
            self.phase = "compute"
            last = self.levels_info[-1]
            if self.drop_in_compute and self._reads_assembled(cfir):
                self.read_counter = self.name(("read", last["k"]), f"q{last['counter'][1:]}")
            second = self.emit(cfir)
            self.phase = None
            restart = [Assign(Var(last["counter"]), Const(0, "int64"))]
            if self.read_counter is not None:
                restart.append(Declare(Var(self.read_counter), "int64", Const(0, "int64")))
            fill = s.out_fill_value
            emitted = [*self._reserve_for_scatters(first),
                       Comment(f"phase 1, assemble: the structure of {s.output.tensor} (positions and coordinates)"),
                       If(yes, first),
                       Comment(f"phase 2, compute: the values, into the positions phase 1 assembled"
                               + (f"; an entry whose value is the fill ({fill!r}) is not kept"
                                  if self.drop_in_compute else "")),
                       *restart, If(yes, second)]
            body = list(self.init) + emitted + self.final + compact
        else:
            emitted = self.emit(cfir)
            body = list(self.init)
            if self.out_dense and s.statement is not None:
                body += self._scatter_init()
            body += self._reserve_for_scatters(emitted) + emitted + self.final
        if s.parallel is not None and not s.output.indices:
            body = self._reduction_clauses(body)
        from .schedule import output_update
        combine = output_update(s) if s.parallel is not None and s.races == "copies" else None
        if combine is not None:
            body = self._thread_copies(body, combine)
        for buf, dtype, length, init in reversed(self.allocs):
            body = [Allocate(buf, dtype, length, init, body, shared=buf in self.shared_allocs)]
        names = _names_used(body)
        sizes = [p for p in self.out_sizes if p.name in names]
        params = [p for p in self.inputs.values() if p.name in names]
        helpers = tuple(Helper(h, src) for h, (src, _) in sorted(self.helpers.items()) if src)
        return Function(name, tuple(params) + tuple(sizes) + tuple(self.out_params), body, helpers)

    def _reserve_for_scatters(self, emitted) -> list:
        """A sparse output filled from workspaces gets room for one entry per scatter, counted
        first (:mod:`compiler.lattice.reserve`): one allocation instead of doublings."""
        if self.out_dense or not self.levels_info or not self.bitmaps:
            return []
        counter = Var(self.name(("reserve",), "n_scatters"))
        inputs = {n for n, p in self.inputs.items() if isinstance(p, Buffer)}
        scalars = {n for n, p in self.inputs.items() if isinstance(p, Scalar)}
        count = count_scatters(emitted, self.bitmaps, inputs, scalars, counter)
        if count is None:
            return []
        last = self.levels_info[-1]
        self.notes.append(f"{self.setup.output.tensor} reserves one entry per scatter into a workspace, counted first")
        return [Comment(f"room for {self.setup.output.tensor}: at most one entry per scatter into the workspace; "
                        f"count them first"),
                Declare(counter, "int64", Const(0, "int64")), *count,
                *[Grow(name, counter, hint=True) for name in (*last["idx"], self.val)]]

    def _two_phase_check(self):
        """Refuse outputs two-phase assembly does not cover.

        It covers every sparse output one-pass assembly does: Dense levels followed by
        SparseList levels (CSR, DCSR, CSF, sparse vectors), or one SparseCOO level (COO).
        """
        s = self.setup
        out = s.output.tensor
        if self.out_dense:
            raise StrategyError(f"assembly='two-phase' does not apply: the output {out} is dense, so it has no "
                                f"structure to assemble")

    def _compaction(self) -> list:
        """Drop the entries phase 1 assembled whose computed value is the fill, bottom-up.

        The innermost level keeps its non-fill entries; each level above then keeps
        the entries whose child segment is still non-empty (as one-pass assembly
        never appends an empty segment), so the arrays equal one-pass assembly's.
        Each level is compacted in place, segment by segment of its parent. When the rows
        ran on threads, phase 2 already skipped the fill: the innermost level only closes
        the gaps (:meth:`_close_gaps`).
        """
        s = self.setup
        sparse = [x for x in self.levels_info if not isinstance(x["level"], Dense)]
        fill = s.out_fill_value
        if self.par_rows:
            head = f"phase 2 skipped the entries whose value is the fill ({fill!r}): close the gaps they left"
        else:
            head = f"drop the entries whose value is the fill ({fill!r}): it is not stored"
        out = [Comment(head + ("; then the entries above whose segment became empty" if len(sparse) > 1 else ""))]
        for t in range(len(sparse) - 1, -1, -1):
            info = sparse[t]
            k, idt, cnt = info["k"], info["idt"], Var(info["counter"])
            r, q, start, end, kept = (Var(self.name(("compact", k, x), f"{x}{k}"))
                                      for x in ("c_row", "c_q", "c_start", "c_end", "c_kept"))
            as_pos = (lambda v: v) if idt == "int64" else (lambda v: Cast(idt, v))  # noqa: E731
            as_int = (lambda v: v) if idt == "int64" else (lambda v: Cast("int64", v))  # noqa: E731
            if t == 0:
                parents = self._dense_count(info["mode"])
            else:
                parents = Var(sparse[t - 1]["counter"])
            moves = [Store(name, kept, Load(name, q)) for name in info["idx"]]
            more = CompoundAssign("+", kept, Const(1, "int64"))
            if t == len(sparse) - 1 and self.par_rows:
                if info["k"] == 0:   # the output's only level: its rows start in the scratch row_info
                    info, parents = {**self.row_info, "counter": info["counter"]}, Var(self.out_sizes[0].name)
                out += self._close_gaps(info, parents, kept)
                continue
            if t == len(sparse) - 1:
                moves.append(Store(self.val, kept, Load(self.val, q)))
                body = [If(not_fill(Load(self.val, q), s.out_dtype, s.out_fill), moves + [more])]
                pre, post = [], []
            else:
                # an entry is kept when its (already compacted) child segment [lo, hi) is not
                # empty; it carries the segment's end along
                child = sparse[t + 1]
                cpos, cidt = child["pos"], child["idt"]
                lo, hi = (Var(self.name(("compact", k, x), f"{x}{k}")) for x in ("c_lo", "c_hi"))
                read = Load(cpos, BinOp("+", q, 1))
                body = [Declare(hi, "int64", read if cidt == "int64" else Cast("int64", read)),
                        If(BinOp(">", hi, lo), moves + [Store(cpos, BinOp("+", kept, 1),
                                                              hi if cidt == "int64" else Cast(cidt, hi)), more]),
                        Assign(lo, hi)]
                pre = [Declare(lo, "int64", Const(0, "int64"))]
                post = [Assign(Var(child["pos_len"]), BinOp("+", kept, 1))]
            out += pre + [Declare(kept, "int64", Const(0, "int64"))]
            if isinstance(parents, Const) and parents.value == 1:
                # the root level: one segment
                out += [For(q, 0, as_int(Load(info["pos"], 1)), body), Store(info["pos"], 1, as_pos(kept))]
            else:
                out += [Declare(start, "int64", Const(0, "int64")),
                        For(r, 0, parents, [
                            Declare(end, "int64", as_int(Load(info["pos"], BinOp("+", r, 1)))),
                            For(q, start, end, body),
                            Assign(start, end), Store(info["pos"], BinOp("+", r, 1), as_pos(kept))])]
            out += [Assign(cnt, kept)] + post
        return out

    def _close_gaps(self, info: dict, rows, kept: Var) -> list:
        """Move each row's entries (phase 2 on threads left them at the row's start, up to
        its end in ``row_ends``) down to follow the previous row's; nothing moves before
        the first gap.

        A row without room has no entries (phase 2 may not have visited it, as a row a
        ``pos`` loop skips, so its ``row_ends`` element is unset and not read).
        """
        k, idt = info["k"], info["idt"]
        r, q, start, stop, end = (Var(self.name(("compact", k, x), f"{x}{k}"))
                                  for x in ("c_row", "c_q", "c_start", "c_stop", "c_end"))
        after = BinOp("+", r, 1)
        moves = [Store(name, kept, Load(name, q)) for name in (*info["idx"], self.val)]
        return [Comment(f"each row's entries end at {self.row_ends}[row]: they move down to follow the previous "
                        f"row's (nothing moves before the first gap)"),
                Declare(kept, "int64", Const(0, "int64")), Declare(start, "int64", Const(0, "int64")),
                For(r, 0, rows, [
                    Declare(stop, "int64", cast(Load(info["pos"], after), idt, "int64")),
                    Declare(end, "int64", Select(BinOp(">", stop, start), Load(self.row_ends, r), start)),
                    If(BinOp("==", kept, start), [Assign(kept, end)],
                       [For(q, start, end, moves + [CompoundAssign("+", kept, Const(1, "int64"))])]),
                    Assign(start, stop),
                    Store(info["pos"], after, cast(kept, "int64", idt))]),
                Assign(Var(info["counter"]), kept)]

    def _scatter_init(self) -> list:
        """Start a scattered-into dense output at the reduction's identity when that is not its fill."""
        s = self.setup
        ident = s.scatter_start()
        if ident is None:
            return []
        q = Var(self.name(("init",), "q"))
        count = self._dense_count(len(self.out_sizes))
        return [For(q, 0, count, [Store(self.val, q, const_of(ident, s.out_dtype))])]


def _at_most(f, n):
    """``min(f, n)``: split up runs no more blocks than there are elements (each holds one at
    least); a factor of 2^62 over 2 elements would otherwise run 2^62 empty blocks."""
    return Select(BinOp("<", f, n), f, n)


def _ceil_div(n, f):
    """``n / f + (n % f != 0)``: the number of blocks of ``f`` that cover ``n``, for ``n >= 0``.
    (``(n + f - 1) / f`` overflows for an extent near 2^63, and no block would run.)"""
    return BinOp("+", BinOp("/", n, f), Cast("int64", BinOp("!=", BinOp("%", n, f), Const(0, "int64"))))


def _one_case_always(loop: CLoop) -> bool:
    """Whether ``loop`` has one case that runs at every step: no test of a value or of a located level."""
    if len(loop.cases) != 1:
        return False
    case = loop.cases[0]
    return not (case.omit or case.value_tests or any(getattr(loc, "locatable", False) for loc in loop.located))


def compressible_indices(cfir) -> tuple[str, ...]:
    """The indices a workspace spans whose every loop visits only coordinates some operand
    stores: no loop over the universe, and no fill folded in for the coordinates skipped.

    A coordinate no operand stores is then never visited, so the kernel computes the same
    entries when the index is renumbered by the coordinates stored (see
    :attr:`compiler.lowering.Lowered.compressible`): Gustavson's SpGEMM over a hypersparse
    ``B`` with 10^12 columns then needs a workspace of ``B``'s distinct columns, not 10^12.
    """
    nodes = list(cfir_walk(cfir))
    spanned = {i.name for n in nodes if isinstance(n, (CWorkspace, CDenseWorkspace)) for i in n.indices}
    foralls = [n for n in nodes if isinstance(n, CForall)]
    folded = {f.fold.per.name for f in foralls if f.fold is not None and f.fold.per is not None}
    out = []
    for name in sorted(spanned - folded):
        loops = [f for f in foralls if f.index.name == name]
        if loops and all(f.fold is None and f.tally is None and not any(lp.universe for lp in f.loops)
                         for f in loops):
            out.append(name)
    return tuple(out)


def _value_tested(cfir) -> set:
    """Names of the temporaries whose values some case tests (the assemble phase must compute them)."""
    return {k.split("[")[0] for c in cfir_walk(cfir) if isinstance(c, CCase) for k in c.value_tests}


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


def _literal_text(v) -> str:
    return str(v.item() if hasattr(v, "item") else v)


def _same(a, b) -> bool:
    from .algebra import same_value
    return same_value(a, b)


def _accesses(setup: Setup):
    return expr_accesses(setup.program.rhs)


def _names_used(stmts) -> set:
    from ..imperative.ir import walk
    out = set()
    for s in stmts:
        for n in walk(s):
            if isinstance(n, Var):
                out.add(n.name)
            elif isinstance(n, (Load, Store, Grow, Prefetch)):
                out.add(n.buffer)
    return out


def _fibers(formats: dict) -> dict:
    """What the fibers under each position array of ``formats`` are, for the prefetch comment: a
    2-D tensor's second level holds rows when it stores by rows, columns when by columns; deeper
    levels hold fibers.

    >>> from compiler.format import csc, csf
    >>> _fibers({"A": csc(), "T": csf(3)})
    {'A1_pos': 'column', 'T1_pos': 'fiber', 'T2_pos': 'fiber'}
    """
    out = {}
    for tensor, fmt in formats.items():
        order = fmt.mode_order
        for level in range(1, len(order)):
            word = ("row" if order[level] == 1 else "column") if len(order) == 2 else "fiber"
            out[binding.array_name(tensor, level, "pos")] = word
    return out


def _without_unread_inputs(fn: Function) -> Function:
    """``fn`` without the input scalars and buffers its body no longer reads.

    The passes after lowering drop reads (a sum over all of ``A`` never needs ``A1_idx`` once the
    unused coordinate is gone), and C warns of a parameter nothing reads. The caller passes a
    kernel only the arguments its signature names.
    """
    names = _names_used(fn.body.body)
    kept = tuple(p for p in fn.params
                 if not isinstance(p, (Scalar, Buffer)) or (isinstance(p, Buffer) and p.intent == "inout")
                 or p.name in names)
    return fn if kept == fn.params else replace(fn, params=kept)


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


@contextlib.contextmanager
def _renamings_explained(program: NAssign):
    """A refusal that names an index renamed apart (``j_2``) says which index of the program it is."""
    try:
        yield
    except StrategyError as e:
        from .cin import index_names, unshadow
        new = sorted(index_names(unshadow(program)) - index_names(program))
        shown = [n for n in new if re.search(rf"\b{n}\b", str(e))]
        if not shown:
            raise
        what = "; ".join(f"{n} is the index {n.rsplit('_', 1)[0]} of an inner reduction, renamed apart from the "
                         f"{n.rsplit('_', 1)[0]} around it" for n in shown)
        raise StrategyError(f"{e} ({what})") from None


@contextlib.contextmanager
def _schedule_named(schedule):
    """A refusal after a schedule was applied that names none of its commands says it came with them:
    ``precompute(j, w, A[i, j])`` may apply and leave a loop order the output cannot be assembled in."""
    try:
        yield
    except StrategyError as e:
        try:
            commands = as_schedule(schedule).commands
        except StrategyError:
            raise e from None
        if not commands or any(f"{c.name}(" in str(e) for c in commands):
            raise
        raise StrategyError(f"{e} (with the schedule {', '.join(str(c) for c in commands)})") from None


def lower_lattice(program: NAssign, formats: dict, trace: Trace, order=None, verify: bool = True,
                  name: str | None = None, schedule=None, assembly: str | None = None, **options):
    """The ``lattice`` strategy: index notation to a :class:`~compiler.lower.Lowered` kernel.

    ``order`` fixes the loop order of the outer forall chain (``reorder``);
    ``verify`` checks every lattice against brute-force enumeration; ``assembly``
    is ``"one-pass"`` (a sparse output appended into growing buffers) or
    ``"two-phase"`` (the loops run twice: assemble the structure, allocate, compute
    the values, dropping entries equal to the fill: as it stores them for a CSR-like output,
    after it for outputs with several sparse levels, in a compaction pass). By default it is
    one-pass, except for a sparse output filled by a parallel loop: its rows cannot
    share one counter, so each counts its entries first (two-phase, on threads).
    """
    if not isinstance(program, NAssign):
        # (a loop program, or a Python function of one: its loops are its own, which lattices do not take)
        what = getattr(program, "name", None) or getattr(program, "__name__", type(program).__name__)
        raise StrategyError(f"{what} is a loop program: the lattice strategy lowers index notation "
                            f"(\"y[i] = A[i, j] * x[j]\"); lower a loop program with strategy='looplets'")
    if not isinstance(verify, bool):
        raise StrategyError(f"verify={verify!r}: give True (check every lattice by enumeration) or False")
    if options:
        raise StrategyError(f"the lattice strategy has no option(s) {', '.join(sorted(options))}; "
                            f"it takes order=[...], schedule=, assembly=, verify= and name=")
    if order is not None and (not isinstance(order, (list, tuple))
                              or not all(isinstance(getattr(i, "name", i), str) for i in order)):
        raise StrategyError(f"order={order!r}: give the loop order as a list of index names, e.g. "
                            f"order=['i', 'j']")
    if assembly not in (None, "one-pass", "two-phase"):
        raise StrategyError(f"assembly={assembly!r}: the lattice strategy assembles 'one-pass' or 'two-phase'")
    problem = name is not None and c_name_problem(name)
    if problem:
        raise StrategyError(f"name={name!r}: the kernel's name must be a C identifier: {problem}")
    from ..lowering import Lowered
    with _schedule_named(schedule), _renamings_explained(program):
        read, setup, conversions = setup_converting(program, formats, order, schedule)
    threaded = setup.parallel is not None and not is_all_dense(setup.output_format)
    if assembly is None:
        assembly = "two-phase" if threaded else "one-pass"
    elif assembly == "one-pass" and threaded:
        raise StrategyError(f"assembly='one-pass' does not apply with parallelize({setup.parallel}): it appends "
                            f"{setup.output.tensor}'s entries through one counter the threads would share; "
                            f"use assembly='two-phase' (the default with parallelize), where each row counts "
                            f"its entries first")
    renamed = f"; a reduction over an index bound around it is renamed apart: {setup.program.rhs}" \
        if setup.program != read else ""
    trace.record("concretize", before=program, after=setup.concrete,
                 note="top-level reductions become compound assignments, nested ones where + temporaries" + renamed)
    record_conversions(trace, program, read, conversions)
    program = read
    setup.record_steps(trace)
    g = setup.graph
    order_now = _order_text(setup.statement)
    trace.record("iteration-graph", before=setup.concrete, after=setup.statement,
                 artifacts=[Artifact("iteration-graph", program.lhs.tensor, g.text(), g.dot())],
                 note=f"loop order {order_now}" + ("; reduction accumulated in a scalar temporary"
                                                   if setup.promoted else ""))
    with _schedule_named(schedule), _renamings_explained(program):
        cfir = build_cfir(setup.statement, setup, verify_lattices=verify)
    seen = set()
    for L in setup.lattices:
        text = L.text()
        if text in seen:
            continue
        seen.add(text)
        trace.record("lattice", before=setup.statement, after=L,
                     artifacts=[Artifact("lattice", f"forall {L.index}", text, L.dot())],
                     rewrites=L.rewrites, note=f"forall {L.index}: {len(L.points)} points, {len(L.loops)} loops")
    trace.record("cfir", before=setup.statement, after=cfir,
                 artifacts=[Artifact("cfir", program.lhs.tensor, str(cfir))])
    em = _Emitter(setup)
    fn = em.function(cfir, name or f"lattice_{program.lhs.tensor}", assembly)
    notes = (["two-phase assembly: assemble the structure, then compute the values"]
             if assembly == "two-phase" and not threaded else []) + list(dict.fromkeys(em.notes))
    trace.record("lower", before=cfir, after=fn, artifacts=[Artifact("ir", fn.name, str(fn))],
                 note="; ".join(notes))
    if setup.parallel is not None:
        private = replace(fn, body=Block(tuple(privatize(fn.body.body, {p.name for p in fn.params}))))
        if private != fn:
            parts = {n.buffer for n in ir_walk(private.body) if isinstance(n, View)}
            parts = [n.buffer for n in ir_walk(fn.body) if isinstance(n, Allocate) and n.buffer in parts]
            trace.record("privatize", before=fn, after=private, artifacts=[Artifact("ir", fn.name, str(private))],
                         note=f"each thread of the parallel loop gets its own {', '.join(parts)}")
            fn = private
    narrow = {p.name for p in fn.params if isinstance(p, Buffer) and np.dtype(p.dtype).itemsize < 8}
    counters = {p.name: p.init for p in fn.params if isinstance(p, OutScalar) and p.dtype == "int64"}
    for stage, apply, note in (
            ("cleanup", lambda body: first_grows(cleanup(body), counters),
             "tests of known flags, locals nothing reads, assignments and stores replaced before a read, and "
             "scratch arrays nothing reads dropped; an empty output's first growth tests no capacity"),
            ("prefetch", lambda body: prefetch(body, narrow, _fibers(setup.formats)),
             "each row (or column, or fiber) fetches the entries of the ones after it ahead, and each entry the "
             "row that a coordinate a few entries ahead picks"),
            ("vectorize", vectorize, "map loops and contiguous sum loops run in SIMD lanes"),
            ("reuse-locals", reuse_dead_locals,
             "a loop's local that would hide a local of the same name, dead by then, assigns that one")):
        after = _without_unread_inputs(replace(fn, body=Block(tuple(apply(fn.body.body)))))
        if after != fn:
            trace.record(stage, before=fn, after=after, artifacts=[Artifact("ir", fn.name, str(after))], note=note)
            fn = after
    out_shape = tuple(setup.extent_uses[i][0] for i in program.lhs.indices)
    extents = tuple((i.name, tuple(uses)) for i, uses in setup.extent_uses.items() if len(uses) > 1)
    helpers = tuple((h, python_helper(op, h)) for h, (_, op) in em.helpers.items())
    fill = setup.out_fill_value
    initial = "output" if program.op is not None else "none" if writes_everything(cfir, setup) else "fill"
    return Lowered(fn, program.lhs.tensor, setup.output_format, out_shape, fill, extents, initial, helpers,
                   tuple((tensor, fmt) for tensor, _, fmt, _, _ in conversions),
                   tuple((tensor, source) for tensor, _, _, _, source in conversions if source is not None),
                   compressible_indices(cfir))


def writes_everything(cfir, setup: Setup) -> bool:
    """Whether the kernel stores every element of its dense output (so it needs no pre-fill).

    True when the output's loops are full dense loops, outermost in storage order, whose
    single unconditional case ends in a plain ``=`` to the output (SpMV, TTV on CSF). In a
    sequence, the first statement that writes the output must (``y = z; y += A x``: the
    definition stores every element before the mutation reads any).
    """
    if not all(isinstance(lvl, Dense) for lvl in setup.output_format.levels) or setup.program.op is not None:
        return False
    path = [setup.output.indices[m] for m in setup.output_format.mode_order]
    n, k = cfir, 0
    while True:
        if isinstance(n, CAlloc):
            n = n.body
        elif isinstance(n, CSeq):
            writing = [x for x in n.stmts if any(isinstance(c, CAssign) and c.output or isinstance(c, CForall)
                                                 and c.fold is not None and c.fold.output for c in cfir_walk(x))]
            n = writing[0] if writing else CSkip()   # (a where's producer writes temporaries only)
        elif isinstance(n, CForall):
            if k >= len(path) or n.index != path[k] or len(n.loops) != 1:
                return False
            loop = n.loops[0]
            if not loop.universe or loop.iterated or len(loop.cases) != 1:
                return False
            case = loop.cases[0]
            if case.tests or case.value_tests or case.omit:
                return False
            n, k = case.body, k + 1
        elif isinstance(n, CAssign):
            return n.output and n.op is None and k == len(path)
        else:
            return False


def _order_text(s) -> str:
    from .cin import foralls
    return ", ".join(i.name for i in foralls(s))


__all__ = ["lower_lattice"]
