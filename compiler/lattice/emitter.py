"""Emission: a CFIR (:mod:`compiler.lattice.cfir`) to an imperative IR function, through the level iterators.

:class:`Emitter` holds what the emission of one kernel shares (the names taken, the parameters
read, the parents of each level's position, the phase of a two-phase kernel, the scratch arrays),
dispatches each CFIR node, and lowers assignments; the concerns live in its mixins, one module
each: :mod:`~compiler.lattice.emit_loops` (loops and coiteration),
:mod:`~compiler.lattice.emit_locate` (positions and locates), :mod:`~compiler.lattice.emit_derived`
(split, fuse, pos), :mod:`~compiler.lattice.emit_workspaces` (workspaces),
:mod:`~compiler.lattice.emit_output` (output assembly: store or append),
:mod:`~compiler.lattice.emit_run_output` (an output appended as runs),
:mod:`~compiler.lattice.emit_ranges` (appended bands and blocks),
:mod:`~compiler.lattice.emit_two_phase` (two-phase assembly),
:mod:`~compiler.lattice.emit_scatter` and :mod:`~compiler.lattice.emit_sorted` (an output its loops cannot
follow: scattered, or every entry sorted) and
:mod:`~compiler.lattice.emit_parallel` (threads).

>>> from compiler.notation import parse
>>> from compiler.format import dense, sparse_vector
>>> from compiler.lattice.plan import Setup
>>> from compiler.lattice.cfir_builder import build_cfir
>>> setup = Setup.create(parse("y[i] = x[i] * 2"), {"x": sparse_vector(), "y": dense(1)})
>>> print(Emitter(setup).function(build_cfir(setup.statement, setup), "scale"))
kernel scale(in int64 x0_pos[], in int64 x0_idx[], in float64 x_val[], inout float64 y_val[]) {
    for (int64 px0 = x0_pos[0]; px0 < x0_pos[1]; px0++) {
        int64 i = x0_idx[px0];
        y_val[i] = x_val[px0] * 2.0;
    }
}
"""

from __future__ import annotations


import numpy as np
from dataclasses import fields, is_dataclass

from .. import binding
from ..errors import StrategyError
from ..imperative.ir import (Allocate, Assign, BinOp, Comment, CompoundAssign, Const, Declare, Function, Helper, If,
                             Load, Pragma, Select, Store, Var)
from ..imperative.ir import RESERVED
from ..levels import Pattern
from ..notation.ast import Access, walk as walk_expr
from ..notation.node_provenance import computing
from .cfir import CAlloc, CAssign, CDenseWorkspace, CForall, CSeq, CSkip, CWorkspace
from .exprs import apply_op, cast, compound_of, const_of, names_used, to_ir
from .plan import Setup
from .emit_derived import DerivedLoops
from .emit_locate import Locating
from .emit_loops import Loops
from .emit_output import OutputAssembly
from .emit_parallel import Threads
from .emit_blocks import BlockAssembly
from .emit_ranges import RangeAssembly
from .emit_run_output import RunAssembly
from .emit_scatter import ScatterAssembly
from .emit_sorted import SortedAssembly
from .emit_two_phase import TwoPhase, value_tested_temps
from .emit_workspaces import Workspaces


class Emitter(Loops, DerivedLoops, Locating, Workspaces, OutputAssembly, BlockAssembly, RunAssembly, RangeAssembly,
              TwoPhase, ScatterAssembly, SortedAssembly, Threads):
    """The emission of one kernel: its shared state, the dispatch of CFIR nodes, assignments."""

    def __init__(self, setup: Setup):
        self.setup = setup
        self.inputs: dict = {}
        self.bitmaps: set = set()   # the workspaces' bitmaps (their first scatters set them)
        self.listed_once: set = set()   # workspaces whose producer lists each coordinate once, in order
        self.unmarked: set = set()      # workspaces whose producer lists nothing (phase 1 counted the row)
        for key in setup.names:
            acc_tensor = setup.iters[key][0].tensor if setup.iters[key] else None
            if acc_tensor is None and key.endswith("[]") and key[:-2] in setup.formats:
                acc_tensor = key[:-2]   # a 0-d input, s[]: no level to iterate, one value
            if not acc_tensor:
                continue
            for p in binding.input_params(acc_tensor, setup.formats[acc_tensor]):
                self.inputs[p.name] = p
        self.used: dict = {}
        self.helpers: dict = {}
        self.parent: dict = {}
        self.found: set = set()   # the diagonal accesses whose last level is searched (-1: not stored)
        self.scalar_inputs: dict = {}   # 0-d input -> the declaration of the local that holds its value
        taken = set(self.inputs) | set(setup.temps) | {i.name for i in setup.extents} | {setup.output.tensor}
        taken |= {n for n in setup.names.values()}
        # (the output's arrays are named by its levels, so a counter named after its role, such as a
        # block list's ``C1_blocks``, must not take the name of an array a level calls so)
        out = setup.output.tensor
        taken |= {binding.array_name(out, k, kind) for k, kind, _ in
                  binding.level_arrays(setup.entry_sorted or setup.scattered or setup.output_format)}
        self.workspaces: dict = {}   # buffer name -> scratch array (name, dtype, length, init)
        for t, _ in setup.temps.values():
            if t.workspace and not t.dense:
                it = setup.iters[str(t.access())][0]
                taken |= {it.param(k) for k in (it.crd, "set", "count")}
        self.allocs: list = []
        self.producing = 0   # > 0 while emitting a workspace's producer (it does not append)
        self.loop_stack: list = []   # the indices of the foralls around what is being emitted, outermost first
        self.taken = taken
        self.cache: dict = {}
        self.out_params: list = []
        self.init: list = []
        self.final: list = []
        self.notes: list = []         # decisions of the lowering, for the trace
        self.middle = None            # two-phase on threads: CSF rows' two lists, the upper filled as Dense
        self.setup_output()
        self.middle_as_dense()
        from .derived import Fuse, Pos, Split
        rels = setup.relations
        self.splits = {r.index: r for r in rels if isinstance(r, Split)}
        self.fuses = {r.outer: r for r in rels if isinstance(r, Fuse)}
        self.poses = {r.index: r for r in rels if isinstance(r, Pos)}
        self.derived_loops = set(self.splits) | set(self.fuses) | set(self.poses)
        self.loop_vars: dict = {}     # a derived variable -> the C name of its loop (for a LoopOrder)
        self.fused_inner: dict = {}   # inner index of a fuse -> how the fused loop binds it
        self.phase = None             # "assemble" / "compute" while emitting a two-phase kernel
        self.assembled: dict = {}     # workspace -> where a two-phase compute phase reads its coordinates
        self.drop_in_compute = False  # two-phase, CSR-like output: phase 2 drops the fill as it stores
        self.read_counter = None      # ... where it reads the coordinates phase 1 stored (None: it reads none)
        self.reading = False          # ... while emitting a consumer that reads them
        self.par_rows = False         # two-phase on threads: each row counts, then fills, its own entries
        self.bounded_rows = False     # ... counting its workspace's scatters, a bound of its entries
        self.row_ends = None          # ... where each row's entries end (phase 2 drops the fill)
        self.row_info = None          # ... the level whose starts[i] is row i's start (a scratch one for COO)
        self.row_fibers = None        # ... the forall whose shortest fiber bounds a row's entries
        self.shared_allocs: set = set()   # scratch arrays the threads share (one element per row)
        self.counting: dict = {}          # index -> the statement a case that ran at it adds (a fold's count)
        self.read_as: dict = {}           # access key -> (variable, dtype) a merged loop's one case reads it from
        # (access key, mode) -> the condition its fiber is not empty under (an outer merged loop's one case:
        # an operand not at the coordinate above has none)
        self.empty_unless: dict = {}

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


    # -- statements ------------------------------------------------------------------------

    def emit(self, n) -> list:
        if isinstance(n, CSkip):
            return []
        if isinstance(n, CSeq):
            return [s for x in n.stmts for s in self.emit(x)]
        if isinstance(n, CAlloc):
            body = self.emit(self.assembly_alloc_body(n))
            if self.phase == "assemble" and n.temp not in names_used(body):   # (phase 1 needs no value of it)
                return body
            return [Declare(Var(n.temp), n.dtype, const_of(n.init, n.dtype))] + body
        if isinstance(n, CAssign):
            # (tagged with what it reads and writes: the explorer links the expression tree's nodes to it)
            return computing(self.assign(n), self.reads(n), n.lhs.tensor if n.output else None)
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

    def reads(self, *nodes) -> set:
        """The tensors the assignments in ``nodes`` (statements of the CIN or CFIR) read."""
        out: set = set()
        stack = list(nodes)
        while stack:
            n = stack.pop()
            if isinstance(n, CAssign):
                out |= {a.tensor for a in walk_expr(n.rhs) if isinstance(a, Access) and a.tensor not in self.setup.temps}
            elif is_dataclass(n):
                stack += [v for f in fields(n) for v in _parts(getattr(n, f.name))]
        return out

    def value_of(self, acc: Access):
        s = self.setup
        if acc.tensor in s.temps:
            if s.temps[acc.tensor][0].workspace:
                return Load(acc.tensor, self.workspace_position(acc)), s.temps[acc.tensor][1]
            return Var(acc.tensor), s.temps[acc.tensor][1]
        key = str(acc)
        if key in self.read_as:
            return self.read_as[key]
        fmt = s.formats[acc.tensor]
        dt = np.dtype(fmt.dtype).name
        if isinstance(fmt.leaf, Pattern):   # (its stored positions hold True)
            return Const(True, "bool"), "bool"
        if not acc.indices:   # a 0-d tensor, s[]: its one value, read once before the loops
            return self.scalar_input(acc.tensor, dt), dt
        pos = self.parent[(key, len(s.paths[key]))]
        v = Load(self.param(binding.array_name(acc.tensor, None, "val")), pos)
        if key in self.found:   # a diagonal's entry, -1 where its last level does not store it
            v = Select(BinOp(">=", pos, Const(0, "int64")), v, const_of(s.fill_of(acc), dt))
        return v, dt

    def scalar_input(self, tensor: str, dt: str) -> Var:
        """The local holding 0-d input ``tensor``'s value (``s_value = s_val[0]`` heads the kernel)."""
        if tensor not in self.scalar_inputs:
            name = f"{tensor}_value"
            while name in self.taken:
                name += "_"
            self.taken.add(name)
            load = Load(self.param(binding.array_name(tensor, None, "val")), Const(0, "int64"))
            self.scalar_inputs[tensor] = Declare(Var(name), dt, load)
        return self.scalar_inputs[tensor].var

    def expr(self, e):
        ir, dt, helpers = to_ir(e, self.value_of, {})
        self.helpers.update(helpers)
        return ir, dt

    def assign(self, n: CAssign, value=None) -> list:
        """The statements of ``n``; ``value`` (an IR expression and its dtype) replaces its right side."""
        s = self.setup
        v, dt = value if value is not None else self.expr(n.rhs)
        if not n.output and s.temps[n.lhs.tensor][0].dense:
            return self._store(n.lhs.tensor, self.workspace_position(n.lhs), n.op, v, dt, s.temps[n.lhs.tensor][1])
        if not n.output and s.temps[n.lhs.tensor][0].workspace:
            return self.scatter(n, v, dt)
        if not n.output:
            tdt = s.temps[n.lhs.tensor][1]
            t = Var(n.lhs.tensor)
            if n.op is None:
                return [Assign(t, cast(v, dt, tdt))]
            if compound_of(n.op, tdt, dt):
                return [CompoundAssign(compound_of(n.op, tdt, dt), t, cast(v, dt, tdt))]
            r, rdt = apply_op(n.op, [t, v], [tdt, dt], self.helper_sink())
            return [Assign(t, cast(r, rdt, tdt))]
        odt = s.out_dtype
        if self.out_dense:
            pos = self.dense_position(len(self.out_path) - 1) if self.out_path else Const(0, "int64")
            return self._store(self.val, pos, n.op, v, dt, odt)
        if s.scattered is not None:
            return self.scatter_entry(v, dt)
        if self.sorting:
            return self.sorted_entry(v, dt)
        if self.block is not None:
            return self.block_store(v, dt)
        return self.append(v, dt)

    def _store(self, buf: str, pos, op, v, dt: str, odt: str) -> list:
        """``buf[pos] = v`` or ``buf[pos] op= v`` (a compound store when C has one)."""
        if op is None:
            return [Store(buf, pos, cast(v, dt, odt))]
        if buf == self.val and self.setup.races == "copies":
            # each thread updates its own copy of the output (:meth:`thread_copies`)
            buf = self.name(("copy",), f"{self.setup.output.tensor}_copy")
        return self.update_store(buf, pos, op, v, dt, odt)

    def update_store(self, buf: str, pos, op, v, dt: str, odt: str) -> list:
        """``buf[pos] op= v``, atomic on the output with ``races='atomics'``."""
        atomic = buf == self.val and self.setup.races == "atomics"
        if compound_of(op, odt, dt):
            # threads that update one element of the output each do it atomically
            return [Pragma("omp atomic")] * atomic + [Store(buf, pos, cast(v, dt, odt), compound_of(op, odt, dt))]
        if atomic:   # (check_parallel lets only atomic updates through: here the dtypes differ)
            out = self.setup.output.tensor
            raise StrategyError(f"parallelize({self.setup.parallel}, races='atomics') does not apply: the update "
                                f"of {out} by {op.name} computes in {op.result_dtype(odt, dt).name} and rounds to "
                                f"{out}'s {odt}, which one atomic update cannot do; give {out} a "
                                f"{op.result_dtype(odt, dt).name} format, or use races='copies'")
        r, rdt = apply_op(op, [Load(buf, pos), v], [odt, dt], self.helper_sink())
        return [Store(buf, pos, cast(r, rdt, odt))]

    # -- workspaces ------------------------------------------------------------------------


    def helper_sink(self):
        return self.helpers

    # -- foralls ---------------------------------------------------------------------------


    # -- derived iteration spaces (split, fuse, pos) -----------------------------------------


    def function(self, cfir, name: str, assembly: str = "one-pass") -> Function:
        s = self.setup
        if s.scattered is not None:   # (its loops out of its storage order: counted, then scattered)
            body = list(self.init) + self.scatter_phases(cfir)
        elif s.entry_sorted is not None:   # (its loops out of its storage order: every entry sorted, then appended)
            body = list(self.init) + self.sorted_phases(cfir) + self.final
        elif assembly == "two-phase" and s.parallel is not None:
            self.two_phase_check()
            self.par_rows = True
            phases = self.parallel_two_phase(cfir)   # emitting adds to init (a hash table's capacity)
            body = self.tables_last(list(self.init) + phases) + (self.list_middle() if self.middle else [])
        elif assembly == "two-phase":
            self.two_phase_check()
            # one sparse level under dense ones (CSR): phase 2 stores each row's kept count and
            # drops the fill as it goes; above a sparse level, a compaction pass drops it after
            self.drop_in_compute = self.assembled_count() is not None
            compact = [] if self.drop_in_compute else self.compaction()
            yes = Const(True, "bool")
            self.value_tested = value_tested_temps(cfir)
            self.phase = "assemble"
            first = self.emit(cfir)
            self.phase = "compute"
            last = self.levels_info[-1]
            if self.drop_in_compute and self.reads_assembled(cfir):
                self.read_counter = self.name(("read", last.k), f"q{last.counter[1:]}")
            second = self.emit(cfir)
            self.phase = None
            restart = self.blocks_between_phases() + [Assign(Var(last.counter), Const(0, "int64"))]
            listed = self.slots_under_list()
            if listed is not None:   # (phase 2 moves the list's position over the slots as phase 1 did)
                restart.append(Assign(Var(self.levels_info[listed.k - 1].counter), Const(0, "int64")))
                # (the slots are counted after the compaction drops the list's empty entries)
                counted = Assign(Var(listed.slots), BinOp("*", Var(self.levels_info[listed.k - 1].counter),
                                                          Var(self.out_sizes[listed.mode].name)))
                self.final = [st for st in self.final if st != counted]
            if self.read_counter is not None:
                restart.append(Declare(Var(self.read_counter), "int64", Const(0, "int64")))
            fill = s.out_fill_value
            emitted = [*self.reserve_for_scatters(first),
                       Comment(f"phase 1, assemble: the structure of {s.output.tensor} (positions and coordinates)"),
                       If(yes, first),
                       Comment("phase 2, compute: the values, into the positions phase 1 assembled"
                               + (f"; an entry whose value is the fill ({fill!r}) is not kept"
                                  if self.drop_in_compute else "")),
                       *restart, If(yes, second)]
            body = self.tables_last(list(self.init) + emitted + self.final + compact)
        else:
            emitted = self.emit(cfir)
            body = list(self.init)
            if self.out_dense and s.statement is not None:
                body += self.scatter_init()
            body += self.reserve_for_scatters(emitted) + emitted + self.final
        if s.parallel is not None and not s.output.indices:
            body = self.reduction_clauses(body)
        from .schedule import output_update
        combine = output_update(s) if s.parallel is not None and s.races == "copies" else None
        if combine is not None:
            body = self.thread_copies(body, combine)
        for buf, dtype, length, init in reversed(self.allocs):
            body = [Allocate(buf, dtype, length, init, body, shared=buf in self.shared_allocs)]
        body = list(self.scalar_inputs.values()) + list(body)
        names = names_used(body)
        sizes = [p for p in self.out_sizes if p.name in names]
        params = [p for p in self.inputs.values() if p.name in names]
        helpers = tuple(Helper(h, src) for h, (src, _) in sorted(self.helpers.items()) if src)
        return Function(name, tuple(params) + tuple(sizes) + tuple(self.out_params), body, helpers)


__all__ = ["Emitter"]


def _parts(v) -> list:
    """The statements a field value of a CFIR node holds (a list of loops, of cases, a body)."""
    if isinstance(v, (list, tuple)):
        return [x for x in v if is_dataclass(x)]
    return [v] if is_dataclass(v) and not isinstance(v, type) else []
