"""Emission, output assembly: the output tensor behind an append protocol.

A mixin of :class:`~compiler.lattice.emitter.Emitter`. A dense output is stored by position;
a sparse one (SparseList levels under Dense or SparseList ones, or one SparseCOO level) is
appended in storage order: :meth:`OutputAssembly.append` stores an entry at the innermost level
(dropping the fill), :meth:`OutputAssembly.case_body` closes a level's segment after the loop
that fills it, and room is reserved up front where the entries can be bounded.

Example: a CSR output ``A[i, j] = B[i, j] * C[i, j]`` appends each entry::

    if (vA != 0.0) { grow A1_idx, A_val to pA1 + 1; A1_idx[pA1] = j; A_val[pA1] = vA; pA1 += 1; }

and stores the row's length at ``A1_pos[i + 1]`` (a prefix sum turns them into ends).
"""

from __future__ import annotations


import numpy as np

from .. import binding
from ..errors import StrategyError
from ..imperative.ir import (Assign, BinOp, Buffer, Cast, Comment, CompoundAssign, Const, Declare, For, Grow, Growable,
                             If, Load, OutScalar, Scalar, Store, Var, While)
from .cfir import CForall
from .cin import expr_accesses
from .exprs import cast, const_of, not_fill
from .output_build import rows_of_fibers
from .output_level import OutputLevel
from .reserve import count_scatters


class OutputAssembly:
    """The output's parameters, appends, segments and reserved room (a mixin of the emitter)."""

    #: True while the loops of an output whose every entry is sorted first are emitted: they append nothing
    #: themselves (:mod:`compiler.lattice.emit_sorted`)
    sorting = False

    def setup_output(self, fmt=None):
        """The output's parameters and level records, for ``fmt`` (default: the format the kernel
        builds; on threads, CSF rows are filled as another: ``TwoPhase.middle_as_dense``)."""
        s = self.setup
        out, fmt = s.output.tensor, fmt or s.entry_sorted or s.scattered or s.output_format
        self.out_path = [s.output.indices[m] for m in fmt.mode_order]
        self.out_levels = list(fmt.levels)
        self.out_sizes = [Scalar(binding.array_name(out, m, "size"), "int64") for m in range(fmt.ndim)]
        self.out_dense = fmt.is_dense
        self.val = binding.array_name(out, None, "val")
        self.levels_info = []
        self.block = None
        if self.out_dense:
            self.out_params.append(Buffer(self.val, s.out_dtype, "inout"))
            return
        # the Dense levels under the last appended one (TACO's {sparse, dense}): a block of slots
        # per appended entry, located from its position (:meth:`block_fiber`)
        first = len(fmt.levels)
        while first > 0 and fmt.levels[first - 1].locates_under_appended:
            first -= 1
        if first < len(fmt.levels):   # (:mod:`.emit_blocks`)
            self.block = self.block_names(first, sum(lvl.nmodes for lvl in fmt.levels[:first]))
        mode = 0
        for k, lvl in enumerate(fmt.levels[:first]):
            info = OutputLevel(lvl, k, mode)
            if lvl.appends_coordinates:
                idt = np.dtype(lvl.index_dtype).name
                info.counter = self.name(("count", k), f"p{out}{k}")
                self.out_params.append(OutScalar(info.counter, "int64", 0))
                info.appended = [binding.array_name(out, k, lvl.crd_of(0))]
                self.out_params.append(Growable(info.appended[0], idt, info.counter))
                info.starts, info.index_type = binding.array_name(out, k, lvl.starts_array), idt
                if k and self.levels_info[-1].slots is not None:
                    self.fiber_starts(info, info.starts)   # (a fiber per slot of the level above)
                elif all(x.located_by_coordinate for x in fmt.levels[:k]):
                    info.starts_buffer = True
                    self.out_params.append(Buffer(info.starts, idt, "inout"))
                else:
                    self.grown_starts(info)
                    if rows_of_fibers(tuple(fmt.levels), k - 1):   # (Dense levels under an appended one: .emit_blocks)
                        self.row_fibers(info)
                if lvl.at_most_one:
                    self.notes.append(f"{out}'s level {k} ({lvl.name}) is appended in storage order as a SparseList "
                                      f"is; each call checks that no fiber holds more than one entry")
            elif lvl.marks_slots:
                self.marked_level(info, lvl, above=k < first - 1)
            elif lvl.keys_in_table is not None:
                self.keyed_level(info, lvl)
            elif lvl.appends_runs and k < len(fmt.levels) - 1:
                self.unit_level(info, lvl)   # (above other levels, each coordinate its own run: :mod:`.emit_run_output`)
            elif lvl.appends_runs:
                self.run_level(info, lvl)   # (:mod:`.emit_run_output`)
            elif lvl.appends_band is not None or lvl.appends_blocks is not None:
                self.ranged_level(info, lvl, above=k < first - 1)   # (compiler.lattice.emit_ranges)
            elif lvl.coordinate_list:
                if k != 0:
                    raise StrategyError(f"output {out}: SparseCOO must be the only level of a sparse output")
                idt = np.dtype(lvl.index_dtype).name
                info.counter = self.name(("count", k), f"p{out}{k}")
                self.out_params.append(OutScalar(info.counter, "int64", 0))
                info.appended = [binding.array_name(out, k, lvl.crd_of(j)) for j in range(lvl.ndim)]
                for name in info.appended:
                    self.out_params.append(Growable(name, idt, info.counter))
                info.starts = binding.array_name(out, k, lvl.starts_array)
                info.starts_len = self.name(("poslen", k), f"{info.starts}_len")
                self.out_params.append(OutScalar(info.starts_len, "int64", 2))
                self.out_params.append(Growable(info.starts, idt, info.starts_len))
                self.init += [Grow(info.starts, Const(2, "int64")), Store(info.starts, 0, Const(0, idt))]
                info.starts_buffer = False
                info.index_type = idt
            self.levels_info.append(info)
            mode += lvl.nmodes
        last = self.levels_info[-1]
        if self.block is not None:
            if last.covers is not None:   # (the rest of its fiber a run of the fill, before the values' length is set)
                self.final += self.block_tail(last)
            self.block_params(last)   # (:mod:`.emit_blocks`)
        else:
            self.out_params.append(Growable(self.val, s.out_dtype, last.slots or last.counter))
        # finalization
        for info, below in zip(self.levels_info, self.levels_info[1:]):
            if info.covers is not None:   # (a covering level above another: the rest of its fiber a run of the fill)
                self.final += self.gap_run(info, below, Var(below.counter), Var(self.out_sizes[info.mode].name))
        for info in self.levels_info:
            if info.level.located_by_coordinate:
                continue
            k, counter = info.k, Var(info.counter)
            if info.level.coordinate_list:
                self.final.append(Store(info.starts, 1, cast(counter, "int64", info.index_type)))
            elif info.ranged is not None:
                self.final += self.range_final(info) + (
                    [self.prefix_sum(info, Var(info.slotted))] if info.slotted is not None else
                    [] if k == 0 or not info.starts_buffer else [self.prefix_sum(info, self.dense_count(info.mode))])
            elif info.slotted is not None:   # (a fiber per slot of the level above: its lengths summed)
                self.final.append(self.prefix_sum(info, Var(info.slotted)))
            elif info.row_parent is not None:   # (a fiber per slot of the rows above: their lengths summed)
                self.final += self.rows_final(info)
            elif info.starts_buffer:
                if k == 0:
                    self.final.append(Store(info.starts, 1, cast(counter, "int64", info.index_type)))
                else:
                    self.final.append(self.prefix_sum(info, self.dense_count(info.mode)))
            if info.keyed is not None:   # (a two-phase kernel builds it after its compaction: :meth:`tables_last`)
                info.table_stmts = self.key_table(info)
                self.final += info.table_stmts

    def marked_level(self, info: OutputLevel, lvl, above: bool = False):
        """The parameters of a level that marks its slots (SparseByteMap) under Dense ones or an
        appended one: its coordinates appended as a SparseList's (its ``starts`` a buffer under Dense
        levels), its marks and the values one per slot, starting unmarked and at the fill (under an
        appended level, a block of slots per fiber: :meth:`~compiler.lattice.emit_ranges.RangeAssembly.fiber_start`);
        ``above`` another appended level (under located ones only), the values are that level's, a
        fiber of it per slot (:meth:`keep_slot`)."""
        s, k, out = self.setup, info.k, self.setup.output.tensor
        idt = np.dtype(lvl.index_dtype).name
        info.counter = self.name(("count", k), f"p{out}{k}")
        info.appended, info.index_type = [binding.array_name(out, k, lvl.crd_of(0))], idt
        info.slots = self.name(("slots", k), f"{out}{k}_slots")
        info.marks = binding.array_name(out, k, lvl.mark_array)
        self.out_params += [OutScalar(info.counter, "int64", 0), Growable(info.appended[0], idt, info.counter)]
        self.fiber_starts(info, binding.array_name(out, k, lvl.starts_array))   # (compiler.lattice.emit_ranges)
        if k and rows_of_fibers(tuple(self.out_levels), k - 1):   # (Dense levels under an appended one: .emit_blocks)
            self.row_fibers(info)
        self.out_params += [OutScalar(info.slots, "int64", 0), Growable(info.marks, "bool", info.slots)]
        self.notes.append(f"{out}'s level {k} ({lvl.name}) is appended in storage order, each entry marked and "
                          f"stored in its slot (TACO's insert into a level with a slot per coordinate)" if not above else
                          f"{out}'s level {k} ({lvl.name}) is appended in storage order, a fiber of level {k + 1} in "
                          f"each slot (their lengths summed after the loops), a coordinate marked and kept if the "
                          f"fiber in its slot got entries")
        if not info.starts_buffer and info.slotted is None and self.setup.parallel is None:
            self.slot_blocks(info)   # (a fiber per slot above: its slots are counted too)
            return
        # (under Dense levels, and on threads under an outermost SparseList, whose every row is an
        # entry until the compaction: slots for every row up front, moved as the compaction drops rows)
        slots = Var(info.slots)
        q = Var(self.name(("slots", "q"), "q"))
        fill = const_of(s.out_fill_value, s.out_dtype)
        self.init += [Assign(slots, self.dense_count(info.mode + 1)), Grow(info.marks, slots)]
        if above:
            self.init.append(For(q, 0, slots, [Store(info.marks, q, Const(False, "bool"))]))
            return
        if self.block is None:
            self.init += [Grow(self.val, slots),
                          For(q, 0, slots, [Store(info.marks, q, Const(False, "bool")), Store(self.val, q, fill)])]
            return
        # (a block of Dense slots per slot: the values of every block start at the fill)
        values = BinOp("*", slots, self.block_size())
        self.init += [For(q, 0, slots, [Store(info.marks, q, Const(False, "bool"))]), Grow(self.val, values),
                      For(q, 0, values, [Store(self.val, q, fill)])]

    def keyed_level(self, info: OutputLevel, lvl):
        """The parameters of a level that keeps its keys in a table (SparseHash) under Dense ones or a SparseList:
        its coordinates appended as a SparseList's, each entry its own child (``ptr``) and its key
        ``parent * size + i`` (``key``); the table is built after the loops (:meth:`key_table`)."""
        k, out = info.k, self.setup.output.tensor
        idt = np.dtype(lvl.index_dtype).name
        key, table = lvl.keys_in_table
        info.counter = self.name(("count", k), f"p{out}{k}")
        info.appended, info.index_type = [binding.array_name(out, k, lvl.crd_of(0))], idt
        info.keyed = [(binding.array_name(out, k, lvl.child_array), idt), (binding.array_name(out, k, key), "int64")]
        info.table = binding.array_name(out, k, table)
        info.capacity = self.name(("cap", k), f"{out}{k}_cap")
        self.out_params += [OutScalar(info.counter, "int64", 0), Growable(info.appended[0], idt, info.counter)]
        starts = binding.array_name(out, k, lvl.starts_array)
        if k and rows_of_fibers(tuple(self.out_levels), k - 1):
            # (Dense levels under an appended one: a row of fibers per entry, .emit_blocks; each key is its row's slot
            # times the size plus the coordinate)
            info.starts = starts
            self.grown_starts(info)
            self.row_fibers(info)
        else:
            self.fiber_starts(info, starts)   # (compiler.lattice.emit_ranges)
        self.out_params += [*[Growable(name, dt, info.counter) for name, dt in info.keyed],
                            OutScalar(info.capacity, "int64", 0), Growable(info.table, "int64", info.capacity)]
        self.notes.append(f"{out}'s level {k} ({lvl.name}) is appended in storage order, each entry keeping its key; "
                          f"its table is built after the loops, inserting the keys in order (TACO's insert into a "
                          f"hashed level)")

    def grown_starts(self, info: OutputLevel):
        """The starts of the fibers of ``info`` (its ``starts`` named), grown as they are appended, from a first 0."""
        idt = info.index_type
        info.starts_buffer = False
        info.starts_len = self.name(("poslen", info.k), f"{info.starts}_len")
        self.out_params += [OutScalar(info.starts_len, "int64", 1), Growable(info.starts, idt, info.starts_len)]
        self.init += [Grow(info.starts, Const(1, "int64")), Store(info.starts, 0, Const(0, idt))]

    def key_table(self, info: OutputLevel) -> list:
        """Insert the keys of a level that keeps them in a table, in order, by linear probing into
        the smallest power-of-two table at most half full (:mod:`compiler.levels.sparse_hash`)."""
        from ..levels.sparse_hash import MIN_CAPACITY
        from .iterators import hash_ir
        cap, n, table = Var(info.capacity), Var(info.counter), info.table
        q = Var(self.name(("table", "q"), "q"))
        h = Var(self.name(("table", "h"), "h"))
        two = Const(2, "int64")
        key = Load(info.keyed[1][0], q)
        return [Comment(f"{table}: the keys inserted in order, by linear probing"),
                Assign(cap, Const(MIN_CAPACITY, "int64")), While(BinOp("<", cap, BinOp("*", n, two)),
                                                                 [Assign(cap, BinOp("*", cap, two))]),
                Grow(table, cap), For(q, 0, cap, [Store(table, q, Const(0, "int64"))]),
                For(q, 0, n, [Declare(h, "int64", hash_ir(key, cap)),
                              While(BinOp("!=", Load(table, h), Const(0, "int64")),
                                    [Assign(h, BinOp("&", BinOp("+", h, Const(1, "int64")),
                                                     BinOp("-", cap, Const(1, "int64"))))]),
                              Store(table, h, BinOp("+", q, Const(1, "int64")))])]

    def keep_slot(self, info: OutputLevel, index, slot) -> list:
        """A level that marks its slots (``info``) above an appended level keeps the coordinate
        ``index`` whose slot ``slot`` got a fiber with entries: listed and marked.

        Example (``SparseByteMap(SparseList(Element(0.0)))``), after row ``i``::

            C1_pos[i + 1] = pC1 - pC1_begin;
            if (pC1 > pC1_begin) { C0_srt[pC0] = i; C0_tbl[i] = true; pC0 += 1; }
        """
        return (self.keep_coordinate(info, Var(index.name)) + [Store(info.marks, slot, Const(True, "bool")),
                                                               CompoundAssign("+", Var(info.counter), Const(1, "int64"))])

    def keep_coordinate(self, info: OutputLevel, i) -> list:
        """Store the coordinate ``i`` (an int64 variable) of the entry an appended level ``info``
        keeps at its counter: in its coordinate array, or as the run ``[i, i + 1)`` of a run-length
        level above others (:meth:`~compiler.lattice.emit_run_output.RunAssembly.unit_level`)."""
        at = Var(info.counter)
        bounds = [i, BinOp("+", i, Const(1, "int64"))][-len(info.appended):] if info.units else [i]
        return [stmt for name, b in zip(info.appended, bounds)
                for stmt in (Grow(name, BinOp("+", at, Const(1, "int64"))), Store(name, at, cast(b, "int64", info.index_type)))]

    def appended_arrays(self) -> tuple:
        """The arrays that grow by one element per entry appended at the innermost level (a level
        that marks its slots holds its values in them: not those)."""
        last = self.levels_info[-1]
        return (*last.appended, *[name for name, _ in (last.keyed or ())]) + (() if last.slots is not None else (self.val,))

    def prefix_sum(self, info: OutputLevel, count) -> For:
        """Turn the ``count`` segment lengths in ``pos[1:]`` of a SparseList level into segment ends."""
        q = Var(self.name(("prefix", info.k), "q"))
        return For(q, 0, count, [Store(info.starts, BinOp("+", q, 1), Load(info.starts, q), "+")])

    def dense_count(self, mode: int):
        count = None
        for m in range(mode):
            v = Var(self.out_sizes[m].name)
            count = v if count is None else BinOp("*", count, v)
        return count if count is not None else Const(1, "int64")

    def dense_position(self, upto: int):
        """Position of the output's Dense levels ``0..upto`` from their indices."""
        pos = None
        for m in range(upto + 1):
            i = Var(self.out_path[m].name)
            pos = i if pos is None else BinOp("+", BinOp("*", pos, Var(self.out_sizes[m].name)), i)
        return pos

    def reserve(self, n: CForall, iters, universe: bool, N) -> list:
        """Grow the innermost output level once per fiber, for every entry the loops can append.

        The bound is the extent under the universe, else the sum of the iterated fibers'
        lengths (each loop iteration appends at most one entry), so appends need no check.
        """
        if self.out_dense or not self.out_path or n.index != self.out_path[-1] or self.producing \
                or self.setup.scattered is not None or self.sorting \
                or self.phase == "compute" or self.par_rows or self.block is not None \
                or self.levels_info[-1].runs is not None:   # (runs: an entry appends up to two, each grown as appended)
            return []
        if self.levels_info[-1].ranged is not None:   # (a band's gaps take room too: grown as it appends)
            return []
        if universe or not iters:
            bound = N
        else:
            bound = None
            for it in iters:
                size = self.fiber_length(it)
                bound = size if bound is None else BinOp("+", bound, size)
        last = self.levels_info[-1]
        total = None if universe else self._total_bound(iters)
        # The up-front allocation covers every loop over a subset of the iterators it counted;
        # any other loop (another lattice point, a tail) reserves per fiber below.
        keys = frozenset(self.it_key(it) for it in iters)
        covered = getattr(self, "reserved_upfront", None)
        if covered is not None and not universe and keys <= covered:
            return []
        if total is not None and covered is None and not getattr(self, "reserved", False):
            # one allocation up front: all entries of the iterated levels, so no fiber needs more
            self.init += [Grow(name, total) for name in self.appended_arrays()]
            self.reserved = True
            self.reserved_upfront = keys
            return []
        room = Var(self.name(("room",), f"n{self.setup.output.tensor}"))
        needed = BinOp("+", Var(last.counter), room)
        self.reserved = True
        return [Declare(room, "int64", bound)] + [Grow(name, needed) for name in self.appended_arrays()]

    def _total_bound(self, iters):
        """Entries of the iterated levels over all their fibers, when their ancestors are all Dense
        and each fiber is visited once (the loops around index the tensor: an outer product
        visits ``z[j]``'s fiber once per ``i``)."""
        total = None
        accesses = {str(a): a for a in expr_accesses(self.setup.program.rhs)}
        for it in iters:
            if not it.compressed:
                return None
            acc = accesses.get(self.it_key(it))
            if acc is None or any(i not in acc.indices for i in self.loop_stack):
                return None
            chain = self.setup.iters[self.it_key(it)][:it.mode]
            if any(c.kind != "dense" for c in chain):
                return None
            count = None
            for c in chain:
                v = Var(c.param("size"))
                count = v if count is None else BinOp("*", count, v)
            n = Load(it.param(it.starts), count if count is not None else Const(0, "int64")) if count is not None \
                else Load(it.param(it.starts), Const(1, "int64"))
            total = n if total is None else BinOp("+", total, n)
        return total

    def case_body(self, index, stmts: list) -> list:
        """Wrap a case body with the assembly of a sparse output level indexed by ``index``."""
        if self.par_rows and stmts and not self.producing and self.row_index() == index:
            if self.block is not None and index == self.out_path[self.block.mode - 1]:
                stmts = self.block_fiber(index, stmts)   # (a sparse vector of blocks: a row's one block)
            return self.row_on_thread(stmts)
        if self.out_dense or not stmts or self.producing or self.setup.scattered is not None or self.sorting:
            return stmts
        if self.block is not None and index == self.out_path[self.block.mode - 1]:
            stmts = self.block_fiber(index, stmts)
            if self.phase == "compute":   # (two-phase: phase 1 assembled the levels above)
                return stmts
        if self.phase == "compute" and not self.drop_in_compute:
            return self.follow_parent(index, stmts)
        for info in self.levels_info[1:]:
            k = info.k
            if info.rows is not None and self.out_path[info.mode - 1] == index:
                return self.row_segment(info, index, stmts)   # (a row of Dense slots: .emit_blocks)
            ranged = info.ranged is not None
            runs = info.runs is not None and not info.runs.located   # (located: closed as entries reach them)
            if not info.level.appends_coordinates and info.slots is None and info.keyed is None \
                    and not ranged and not runs and not info.units:
                continue
            if self.out_path[info.mode - 1] != index:
                continue
            child = Var(self.range_counted(info) if ranged else info.counter)
            begin = Var(self.name(("begin", k), f"{child.name}_begin"))
            pre = [Declare(begin, "int64", child)] + self.fiber_start(info)
            prev_level = self.out_levels[k - 1]
            if prev_level.located_by_coordinate or info.slotted is not None:
                ppos = self.row_position(info) if info.row_parent is not None else self.dense_position(info.mode - 1)
                post = [Store(info.starts, BinOp("+", ppos, 1), cast(BinOp("-", child, begin), "int64", info.index_type))]
                # (the level above keeps the coordinate if the fiber in its slot got entries; a band's
                # values begin where its entries do)
                kept = self.keep_slot(self.levels_info[k - 1], index, ppos) if info.slotted is not None else []
                if ranged and info.ranged == "band":
                    kept += self.range_fiber_end(info, begin, ppos)
                if kept:
                    post.append(If(BinOp(">", child, begin), kept))
                if self.phase == "compute" and self.read_counter is not None:
                    # the next row's coordinates start where phase 1 stored this row's, plus their
                    # count (a case that does not read them, merging, moves the read position too)
                    read = Var(self.read_counter)
                    after = Var(self.name(("read_next", k), f"{self.read_counter}_next"))
                    count = cast(Load(info.starts, BinOp("+", ppos, 1)), info.index_type, "int64")
                    pre.append(Declare(after, "int64", BinOp("+", read, count)))
                    post.append(Assign(read, after))
            elif self.levels_info[k - 1].ranged is not None:   # (a fiber per position of a band or blocks: .emit_ranges)
                post = [If(BinOp(">", child, begin), self.range_keep_fiber(self.levels_info[k - 1], info, begin, index))]
            else:
                pinfo = next(x for x in self.levels_info if x.k == k - 1)
                pc = Var(pinfo.counter)
                post = [If(BinOp(">", child, begin), [
                    *(self.range_fiber_end(info, begin, pc) if ranged else []),
                    *(self.runs_fiber_end(info) if runs else []),   # (:mod:`.emit_run_output`)
                    *(self.keep_key(pinfo) if pinfo.keyed is not None else []),
                    *(self.gap_run(pinfo, info, begin, Var(index.name)) if pinfo.covers is not None else []),
                    *self.keep_coordinate(pinfo, Var(index.name)),
                    CompoundAssign("+", pc, Const(1, "int64")),
                    Grow(info.starts, BinOp("+", pc, 1)),
                    Store(info.starts, pc, Cast(info.index_type, child) if info.index_type != "int64" else child),
                    Assign(Var(info.starts_len), BinOp("+", pc, 1)),
                    *([Assign(Var(pinfo.covers), BinOp("+", Var(index.name), Const(1, "int64")))]
                      if pinfo.covers is not None else []),
                ])]
            return pre + stmts + post
        return stmts

    def reserve_for_scatters(self, emitted) -> list:
        """A sparse output filled from workspaces gets room for one entry per scatter, counted
        first (:mod:`compiler.lattice.reserve`): one allocation instead of doublings."""
        if self.out_dense or not self.levels_info or not self.bitmaps or self.block is not None \
                or self.levels_info[-1].runs is not None:
            return []
        counter = Var(self.name(("reserve",), "n_scatters"))
        inputs = {n for n, p in self.inputs.items() if isinstance(p, Buffer)}
        scalars = {n for n, p in self.inputs.items() if isinstance(p, Scalar)}
        count = count_scatters(emitted, self.bitmaps, inputs, scalars, counter)
        if count is None:
            return []
        self.notes.append(f"{self.setup.output.tensor} reserves one entry per scatter into a workspace, counted first")
        return [Comment(f"room for {self.setup.output.tensor}: at most one entry per scatter into the workspace; "
                        f"count them first"),
                Declare(counter, "int64", Const(0, "int64")), *count,
                *[Grow(name, counter, hint=True) for name in self.appended_arrays()]]

    def scatter_init(self) -> list:
        """Start a scattered-into dense output at the reduction's identity when that is not its fill."""
        s = self.setup
        ident = s.scatter_start()
        if ident is None:
            return []
        q = Var(self.name(("init",), "q"))
        count = self.dense_count(len(self.out_sizes))
        return [For(q, 0, count, [Store(self.val, q, const_of(ident, s.out_dtype))])]

    def entry_value(self, v, dt: str) -> tuple[list, Var]:
        """The statements declaring the output's entry ``v`` (of dtype ``dt``) in the output's dtype,
        and the variable or cast holding it: an expression is computed once into ``v<output>``, as
        the fill test and the store both read it."""
        s = self.setup
        odt = s.out_dtype
        if isinstance(v, Var):
            return [], cast(v, dt, odt)
        val = Var(self.name(("value",), f"v{s.output.tensor}"))
        return [Declare(val, odt, cast(v, dt, odt))], val

    def append(self, v, dt: str) -> list:
        """Append the entry ``v`` (an IR expression of dtype ``dt``) to a sparse output's innermost
        level, at the coordinates the loops around bind; a value equal to the fill is not kept.

        How depends on where room was made: grown here, reserved up front (store, then keep
        the entry if it is not the fill), or assembled by phase 1 of a two-phase kernel (phase 2
        only stores the value), or counted per row on threads.
        """
        s = self.setup
        odt = s.out_dtype
        out, val = self.entry_value(v, dt)
        last = self.levels_info[-1]
        if last.runs is not None:
            return out + self.append_run(last, val)
        counter = Var(last.counter)
        if last.level.coordinate_list:
            coords = [self.out_path[last.mode + j] for j in range(len(last.appended))]
        else:
            coords = [self.out_path[last.mode]]
        if last.ranged is not None:   # (compiler.lattice.emit_ranges)
            return out + self.range_append(last, val, coords[-1])
        reserved = getattr(self, "reserved", False)
        store = [Store(name, counter, cast(Var(i.name), "int64", last.index_type)) for name, i in zip(last.appended, coords)]
        store_val = Store(self.val, counter, val)
        if last.keyed is not None:
            (ptr, pdt), (key, _) = last.keyed
            store += [Store(ptr, counter, cast(counter, "int64", pdt)), Store(key, counter, self.entry_slot(last))]
        one_more = CompoundAssign("+", counter, Const(1, "int64"))
        if last.slots is not None:
            # (a level that marks its slots: the value and the mark in the entry's slot)
            slot = Var(self.name(("slot",), f"{s.output.tensor}_slot"))
            at = Declare(slot, "int64", self.entry_slot(last))
            if self.par_rows and self.phase == "assemble":   # (the row counts its entries; its slots are its own)
                return [one_more]
            if self.phase == "assemble":   # (two-phase: the coordinate listed and its slot marked)
                grow = [] if reserved else [Grow(name, BinOp("+", counter, 1)) for name in self.appended_arrays()]
                return [at, *grow, *store, Store(last.marks, slot, Const(True, "bool")), one_more]
            if self.phase == "compute" and not self.par_rows:   # (a value at the fill is not stored: compacted after)
                return out + [at, If(not_fill(val, odt, s.out_fill), [Store(self.val, slot, val)]), one_more]
            out.append(at)
            store_val = Store(self.val, slot, val)
            # (a value equal to the fill is neither stored nor marked, even where room was made: a -0.0
            # beside a fill of 0.0 stored in its unmarked slot showed in the values, which hold the fill there;
            # a row on a thread stores from its start, room made after phase 1 counted it)
            grow = [] if reserved or self.par_rows else \
                [Grow(name, BinOp("+", counter, 1)) for name in self.appended_arrays()]
            return out + [If(not_fill(val, odt, s.out_fill),
                             grow + store + [store_val, Store(last.marks, slot, Const(True, "bool")),
                                             CompoundAssign("+", counter, Const(1, "int64"))])]
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
        grow = [] if reserved else [Grow(name, BinOp("+", counter, 1)) for name in self.appended_arrays()]
        if self.phase == "assemble":
            # two-phase, assemble: the structure only (every entry the loops produce; a value
            # equal to the fill is dropped by the compute phase, or after it)
            return grow + store + [one_more]
        if reserved and self.out_path and coords[-1] == self.out_path[-1]:
            return out + store + [store_val, keep]
        return out + [If(not_fill(val, odt, s.out_fill), grow + store + [store_val, one_more])]


__all__ = ["OutputAssembly"]
