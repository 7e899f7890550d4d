"""Emission, output assembly of a run-length level: entries appended as runs of equal values.

A mixin of :class:`~compiler.lattice.emitter.Emitter`, for an output level that declares
``appends_runs`` (RunList, SparseRunList, SparseInterval), innermost under levels located by
coordinate (Dense), under an appended level (a SparseList's or SparseHash's entry kept if its
fiber got a run, the fiber closed then: :meth:`RunAssembly.runs_fiber_end`) or the output's only level. The kernel appends its entries in storage order,
as it appends a SparseList's (TACO's append), but into runs: an entry at the coordinate where
its fiber's last run ends, holding that run's value, extends the run; any other starts one. A
level that covers its fibers (RunList, ``full``) also appends a run of the fill over each gap
between entries and over the rest of a fiber after its last entry. The fibers are closed in
order as the entries reach them, and those left after the loops at the end, so a fiber the
loops skip still gets its one run of the fill. What the kernel builds is what
:meth:`Tensor.from_numpy <compiler.tensor.Tensor.from_numpy>` builds for the same values: C's
``==`` merges runs, and a NaN extends a run of NaN (:func:`~compiler.imperative.cints.same_value_of`;
a -0.0 after a 0.0 extends it, which keeps its first value).

Example: ``C[i, j] = A[i, j] * B[i, j]`` into ``Dense(RunList(Element(0.0)))``, at each entry::

    if (vC != 0.0) {
        while (C1_fiber < i) { close fiber C1_fiber: a run of the fill to C1_size; C1_pos[C1_fiber + 1] = pC1; ... }
        if (C1_end == j && C1_end > 0 && (C_val[pC1 - 1] == vC || (isnan(C_val[pC1 - 1]) && isnan(vC))))
            C1_right[pC1 - 1] = j + 1;
        else { grow to pC1 + 2; a run of the fill [C1_end, j) if j > C1_end; a run [j, j + 1) of vC }
        C1_end = j + 1;
    }
"""

from __future__ import annotations

import numpy as np

from .. import binding
from ..errors import StrategyError
from ..imperative.cints import same_value_of
from ..imperative.ir import (Assign, BinOp, Buffer, CompoundAssign, Const, Declare, Grow, Growable, If, Load,
                             OutScalar, Store, Var, While, and_)
from .exprs import cast, const_of, not_fill
from .output_level import OutputLevel, RunNames


class RunAssembly:
    """The parameters, appends and fiber ends of a run-length output level (a mixin of the emitter)."""

    def run_level(self, info: OutputLevel, lvl):
        """The parameters of a level appended as runs: its runs' count (``counter``), ``starts`` (a
        buffer over the located levels above, written as each fiber closes), the runs' bounds
        (``appended``: its start array, if any, then its end array), the fiber being appended
        (``fiber``) and where its last run ends (``end``, 0 before its first)."""
        k, out = info.k, self.setup.output.tensor
        idt = np.dtype(lvl.index_dtype).name
        info.counter = self.name(("count", k), f"p{out}{k}")
        bounds = ([lvl.run_start_array] if lvl.run_start_array else []) + [lvl.run_end_array]
        info.appended = [binding.array_name(out, k, a) for a in bounds]
        info.index_type = idt
        located = all(above.located_by_coordinate for above in self.out_levels[:k])
        info.runs = RunNames(self.name(("runs", "fiber"), f"{out}{k}_fiber"), self.name(("runs", "end"), f"{out}{k}_end"),
                             fill=lvl.full, located=located)
        self.out_params.append(OutScalar(info.counter, "int64", 0))
        if located:
            info.starts, info.starts_buffer = binding.array_name(out, k, lvl.starts_array), False
            self.out_params.append(Buffer(info.starts, idt, "inout"))
        else:   # (under an appended level: a fiber closed as its parent keeps it, :meth:`runs_fiber_end`)
            self.fiber_starts(info, binding.array_name(out, k, lvl.starts_array))
        self.out_params += [Growable(name, idt, info.counter) for name in info.appended]
        fiber, end = Var(info.runs.fiber), Var(info.runs.end)
        self.init.append(Declare(end, "int64", Const(0, "int64")))
        if located and info.mode == 0:   # (one fiber: closed after the loops)
            self.final += self.close_fiber(info)
        elif located:   # (after the loops: the fibers they did not reach too, each of the fill alone)
            self.init.append(Declare(fiber, "int64", Const(0, "int64")))
            self.final.append(While(BinOp("<", fiber, self.dense_count(info.mode)), self.close_fiber(info)))
        gaps = ("; a gap between entries, and a fiber's end after its last entry, is a run of the fill"
                if lvl.full else "; each call checks that no fiber holds more than one run" if lvl.at_most_one else "")
        self.notes.append(f"{out}'s level {k} ({lvl.name}) is appended in storage order as runs: an entry at the "
                          f"coordinate where its fiber's last run ends, of that run's value, extends the run, "
                          f"any other starts one{gaps} (TACO's append into a run-length level)")

    def unit_level(self, info: OutputLevel, lvl):
        """The parameters of a run-length level that does not cover its fibers (SparseRunList,
        SparseInterval) above other levels: appended as a SparseList is, each coordinate whose
        fiber below got entries kept as its own run ``[i, i + 1)``
        (:meth:`~compiler.lattice.emit_output.OutputAssembly.keep_coordinate`), as
        ``Tensor.from_numpy`` builds it (it merges runs of equal values only, not of equal fibers).

        Example (``SparseRunList(SparseList(Element(0.0)))``), as row ``i`` is kept::

            C0_left[pC0] = i; C0_right[pC0] = i + 1; pC0 += 1; C1_pos[pC0] = pC1;
        """
        k, out = info.k, self.setup.output.tensor
        idt = np.dtype(lvl.index_dtype).name
        info.counter = self.name(("count", k), f"p{out}{k}")
        bounds = ([lvl.run_start_array] if lvl.run_start_array else []) + [lvl.run_end_array]
        info.appended, info.index_type, info.units = [binding.array_name(out, k, a) for a in bounds], idt, True
        self.out_params.append(OutScalar(info.counter, "int64", 0))
        self.out_params += [Growable(name, idt, info.counter) for name in info.appended]
        self.fiber_starts(info, binding.array_name(out, k, lvl.starts_array))   # (compiler.lattice.emit_ranges)
        if lvl.full:   # (covering its fiber: where its last run ends, for the run of the fill over a gap)
            info.covers = self.name(("covers", k), f"{out}{k}_end")
            self.init.append(Declare(Var(info.covers), "int64", Const(0, "int64")))
        self.notes.append(f"{out}'s level {k} ({lvl.name}) is appended in storage order as a SparseList is, each "
                          f"coordinate whose fiber below got entries its own run [i, i + 1)"
                          + ((f"; a gap between them, and the rest after the last, a run of the fill over "
                              f"{'a block of the fill' if self.block is not None and self.block.k == k + 1 else 'an empty fiber'}")
                             if lvl.full else "")
                          + ("; each call checks that no fiber holds more than one run" if lvl.at_most_one else ""))

    def gap_run(self, info: OutputLevel, below: OutputLevel, at, stop) -> list:
        """A covering level ``info`` above another (``below``) closes the gap before ``stop`` (an int64
        expression) with a run of the fill: its child ``below``'s fiber there empty, starting at ``at``
        (above blocks of Dense slots, ``below`` is None).

        Example (``RunList(SparseList(Element(0.0)))``), before row ``i`` is kept::

            if (C0_end < i) { C0_right[pC0] = i; pC0 += 1; C1_pos[pC0] = pC1_begin; }
        """
        counter = Var(info.counter)
        one = Const(1, "int64")
        # (over blocks of Dense slots, ``below`` None: the gap's block is the one at its position, at the fill)
        fiber = [] if below is None else [
            Grow(below.starts, BinOp("+", counter, one)), Store(below.starts, counter, cast(at, "int64", below.index_type)),
            Assign(Var(below.starts_len), BinOp("+", counter, one))]
        return [If(BinOp("<", Var(info.covers), stop), self.fill_run(info, stop) + fiber)]

    def fill_run(self, info: OutputLevel, stop) -> list:
        """Append a run of the fill ending at ``stop`` to a covering level ``info`` above others (its
        value is its child's, an empty fiber or a block of the fill)."""
        counter, one = Var(info.counter), Const(1, "int64")
        return [Grow(info.appended[-1], BinOp("+", counter, one)),
                Store(info.appended[-1], counter, cast(stop, "int64", info.index_type)), CompoundAssign("+", counter, one)]

    def run_arrays(self, info: OutputLevel) -> list:
        """The arrays that grow by one element per run: its bounds and the values."""
        return [*info.appended, self.val]

    def grow_runs(self, info: OutputLevel, more: int) -> list:
        """Make room for ``more`` runs."""
        return [Grow(name, BinOp("+", Var(info.counter), Const(more, "int64"))) for name in self.run_arrays(info)]

    def new_run(self, info: OutputLevel, start, stop, value) -> list:
        """Append the run ``[start, stop)`` of ``value`` (IR expressions, int64 coordinates), in room made."""
        counter, idt = Var(info.counter), info.index_type
        bounds = [start, stop] if len(info.appended) == 2 else [stop]
        return ([Store(name, counter, cast(b, "int64", idt)) for name, b in zip(info.appended, bounds)]
                + [Store(self.val, counter, value), CompoundAssign("+", counter, Const(1, "int64"))])

    def runs_fiber_end(self, info: OutputLevel) -> list:
        """Under an appended parent, a fiber that got runs as the parent keeps it: a covering
        level's rest a run of the fill (the next fiber starts with no run: ``end`` 0)."""
        s = self.setup
        end, size = Var(info.runs.end), Var(self.out_sizes[info.mode].name)
        out = []
        if info.runs.fill:
            out.append(If(BinOp("<", end, size), self.grow_runs(info, 1) + self.new_run(
                info, end, size, const_of(s.out_fill_value, s.out_dtype))))
        return out

    def close_fiber(self, info: OutputLevel) -> list:
        """End the fiber being appended (a covering level's rest a run of the fill) and start the next."""
        s = self.setup
        runs, counter = info.runs, Var(info.counter)
        fiber, end = Var(runs.fiber), Var(runs.end)
        size = Var(self.out_sizes[info.mode].name)
        out = []
        if runs.fill:
            out.append(If(BinOp("<", end, size), self.grow_runs(info, 1) + self.new_run(
                info, end, size, const_of(s.out_fill_value, s.out_dtype))))
        if info.mode == 0:
            return out + [Store(info.starts, Const(1, "int64"), cast(counter, "int64", info.index_type))]
        return out + [Store(info.starts, BinOp("+", fiber, Const(1, "int64")), cast(counter, "int64", info.index_type)),
                      CompoundAssign("+", fiber, Const(1, "int64")), Assign(end, Const(0, "int64"))]

    def append_run(self, info: OutputLevel, val) -> list:
        """Append the entry ``val`` (a variable of the output's dtype) at the coordinates the loops
        bind: dropped if it is the fill, else extending the fiber's last run or starting one."""
        s = self.setup
        if self.phase is not None or self.par_rows:
            raise StrategyError(f"output {s.output.tensor}: a {info.level.name} level is assembled in one pass")
        runs, counter = info.runs, Var(info.counter)
        fiber, end = Var(runs.fiber), Var(runs.end)
        i = Var(self.out_path[info.mode].name)
        one = Const(1, "int64")
        last = BinOp("-", counter, one)
        body = []
        if info.mode > 0 and runs.located:   # (the fibers before this entry's are done)
            body.append(While(BinOp("<", fiber, self.dense_position(info.mode - 1)), self.close_fiber(info)))
        start = self.new_run(info, i, BinOp("+", i, one), val)
        if runs.fill:   # (room for a run of the fill before it too)
            start = self.grow_runs(info, 2) + [If(BinOp("<", end, i), self.new_run(
                info, end, i, const_of(s.out_fill_value, s.out_dtype)))] + start
        else:
            start = self.grow_runs(info, 1) + start
        extends = and_(BinOp("==", end, i), BinOp(">", end, Const(0, "int64")),
                       same_value_of(Load(self.val, last), val, s.out_dtype))
        body += [If(extends, [Store(info.appended[-1], last, cast(BinOp("+", i, one), "int64", info.index_type))], start),
                 Assign(end, BinOp("+", i, one))]
        return [If(not_fill(val, s.out_dtype, s.out_fill), body)]


__all__ = ["RunAssembly"]
