"""Emission, two-phase assembly: assemble a sparse output's structure, then compute its values.

A mixin of :class:`~compiler.lattice.emitter.Emitter`. With ``assembly="two-phase"`` the loops run
twice: phase 1 stores the coordinates (or, rows on threads, counts each row's entries), phase 2
the values, dropping the fill as it stores (one sparse level) or in a compaction pass after it
(several, a block of Dense slots under a SparseList, a byte map's slots). On threads, each row
counts then fills its own entries from its start.

Example: ``lower("A[i, j] = B[i, j] + C[i, j]", assembly="two-phase", ...)`` emits
``// phase 1, assemble: ...`` then ``// phase 2, compute: ...`` around the same loops.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import StrategyError
from ..format import Format
from ..levels import Dense
from ..imperative.ir import (Assign, BinOp, Buffer, Cast, Comment, CompoundAssign, Const, Declare, For, Grow, If, Load,
                             Select, Store, Var, While)
from ..imperative.traverse import walk as ir_walk
from .cfir import CAlloc, CAssign, CCase, CDenseWorkspace, CForall, CSeq, CWorkspace, cfir_walk
from .exprs import cast, is_fill, not_fill
from .output_build import listed_after_threads, rows_of_blocks, under_lists
from .output_level import OutputLevel
from .reserve import count_scatters


class TwoPhase:
    """Two-phase assembly, sequential and on threads (a mixin of the emitter)."""

    def assembled_consumer(self, n: CWorkspace, consumer: list):
        """In a two-phase compute phase, the output's coordinate of its next entry (a Load), if the
        consumer appends exactly one entry per coordinate of the list, at the output's innermost
        coordinate; else None (the list is sorted as in phase 1)."""
        if self.phase != "compute" or self.par_rows or not self.consumes_listed(n, consumer):
            return None
        last = self.levels_info[-1]
        if self.drop_in_compute:   # (the stores drop the fill: they lag behind where phase 1 stored)
            if self.read_counter is None:
                raise StrategyError(f"workspace {n.temp}: phase 2 reads the coordinates phase 1 stored, but no "
                                    f"read position was made for them (a bug in the lattice strategy)")
            return Load(last.appended[-1], Var(self.read_counter))
        return Load(last.appended[-1], Var(last.counter))

    def assembly_alloc_body(self, n: CAlloc):
        """The body of the scalar temporary ``n`` to emit: in phase 1 of a two-phase kernel, without
        the statements that only compute the temporary when no case tests its value (phase 1 places
        the entries, and only phase 2 reads their values: SpMV into a sparse vector summed each row's
        ``t_j`` in phase 1 too, and never read it); else all of it."""
        if self.phase != "assemble" or n.temp in self.value_tested or not isinstance(n.body, CSeq):
            return n.body
        kept = tuple(x for x in n.body.stmts if not only_sets(x, n.temp))
        return n.body if len(kept) == len(n.body.stmts) else CSeq(kept)

    def reads_assembled(self, cfir) -> bool:
        """Whether a two-phase compute phase reads coordinates phase 1 stored (some workspace's
        consumer is one :meth:`assembled_consumer` takes)."""
        return any(isinstance(n, CWorkspace) and self.consumes_listed(
            n, list(n.body.stmts)[1:] if isinstance(n.body, CSeq) else []) for n in cfir_walk(cfir))

    def assembled_count(self):
        """In a two-phase compute phase, the count of this row's entries that phase 1 stored at
        ``pos[row + 1]`` (the prefix sum comes after phase 2), when the output's last level is a
        SparseList under Dense levels only; else None (it is counted again by listing)."""
        last = self.levels_info[-1]
        # (a two-phase output appends only SparseList levels as lists, blocks of Dense slots filled
        # after: output_build.assembles)
        if self.block is not None or last.k == 0 or not last.level.appends_coordinates or not last.starts_buffer:
            return None
        row = self.dense_position(last.mode - 1)
        return cast(Load(last.starts, BinOp("+", row, Const(1, "int64"))), last.index_type, "int64")

    def row_index(self):
        """The index at which each fiber of a two-phase kernel on threads counts, then stores, its
        entries: the row's (the parallel loop's), or under several Dense levels the one above the
        sparse level (``j`` of ``Dense(Dense(SparseList))``: a fiber per ``(i, j)``)."""
        return self.out_path[max(self.row_info.mode - 1, 0)]

    def row_on_thread(self, stmts: list) -> list:
        """A row of a two-phase kernel on threads: phase 1 counts its entries into ``pos[i + 1]``;
        phase 2 stores them from the row's start ``starts[i]`` (after the prefix sum), and where
        they end (it drops the fill) into ``end[i]``."""
        info = self.row_info
        counter, row = Var(info.counter), self.dense_position(max(info.mode - 1, 0))
        end = BinOp("+", row, 1)
        if self.phase == "assemble":
            if self.row_fibers is not None:
                # each step of the row's one loop appends at most one entry, and the loop stops
                # when its shortest fiber does: that fiber's length bounds the row (no merge)
                lengths, named = [], []
                for it in self.row_fibers.loops[0].iterated:
                    n = Var(self.name(("fiber", it.name, it.mode), f"n{it.label}"))
                    named.append(Declare(n, "int64", self.fiber_length(it)))
                    lengths.append(n)
                bound = lengths[0]
                for length in lengths[1:]:
                    bound = Select(BinOp("<", length, bound), length, bound)
                what = "its one fiber" if len(lengths) == 1 else "the shortest of its fibers"
                if len(lengths) == 1:
                    named, bound = [], named[0].init
                return [Comment(f"at most one entry per step of the row's loop: {what} bounds them"),
                        *named, Store(info.starts, end, cast(bound, "int64", info.index_type))]
            if self.bounded_rows:
                bound = self._count_row_scatters(stmts, counter)
                if bound is None:
                    self.bounded_rows = False
                else:
                    stmts = [Comment("at most one entry per scatter into the workspace: count those"), *bound]
            return [Declare(counter, "int64", Const(0, "int64")), *stmts,
                    Store(info.starts, end, cast(counter, "int64", info.index_type))]
        return [Declare(counter, "int64", cast(Load(info.starts, row), info.index_type, "int64")), *stmts,
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
        return self.one_entry_per_listed(n, parts[1:])

    def _row_loop(self, cfir):
        """The forall over a CSR output's columns when each row runs it as one loop (an
        intersection, or one fiber) appending at most one entry per step, else None."""
        inner = self._row_body(cfir) if len(self.out_path) == 2 else None
        if not isinstance(inner, CForall) or inner.index != self.out_path[1]:
            return None
        if inner.fold is not None or len(inner.loops) != 1:
            return None
        loop = inner.loops[0]
        if loop.universe or loop.any_of or not loop.iterated or not all(it.unique for it in loop.iterated):
            return None   # (a merged loop's entries are bounded by the sum of its fibers, not the shortest)
        if not all(isinstance(c.body, CAssign) and c.body.output for c in loop.cases if not c.omit):
            return None
        return inner

    def parallel_two_phase(self, cfir) -> list:
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

        A byte map's or hash's rows (under the rows' Dense level) count and store the same way, the
        values in their slots (a byte map's: only its coordinates move as the gaps close) or beside
        their keys (a hash's, its table built after the gaps close); a SparseList's blocks of Dense
        slots count one entry each, phase 2 fills a row's blocks from its start (room made at the
        fill) and keeps a block if a slot got another value, and a block moves with its coordinate.
        """
        s, yes = self.setup, Const(True, "bool")
        self.value_tested = value_tested_temps(cfir)
        last = self.levels_info[-1]
        shared, k, out = last.counter, last.k, s.output.tensor
        one_level = len(self.levels_info) == 1
        if one_level:
            # a COO or sparse-vector output has no row positions: the rows count and start in a
            # scratch array (a sparse vector's rows are its coordinates, each one entry at most)
            rows = Var(self.out_sizes[0].name)
            starts_name = self.name(("rowstart", k), f"{out}{k}_start")
            self.allocs.append((starts_name, "int64", BinOp("+", rows, 1), Const(0, "int64")))
            self.shared_allocs.add(starts_name)
            self.row_info = replace(last, starts=starts_name, index_type="int64")
        else:
            # under Dense levels only, each fiber of the sparse level counts and fills its own entries
            # (row i's are i * n + j, ...: output_build.on_fibers); under a DCSR's rows, the rows' level
            top = self.levels_info[0].level.located_by_coordinate
            self.row_info = next(x for x in self.levels_info if not x.level.located_by_coordinate) if top \
                else self.levels_info[1]
            rows = self.dense_count(self.row_info.mode)
        # (a row of blocks counts the blocks that get entries: neither bound counts blocks; a row's
        # fibers under Dense levels count one by one)
        by_row = self.row_info.mode <= 1
        self.bounded_rows = self.block is None and by_row and self._rows_from_one_workspace(cfir)
        self.row_fibers = None if self.bounded_rows or self.block is not None or not by_row else self._row_loop(cfir)
        self.row_ends = self.name(("rowend", k), f"{out}{k}_end")
        self.allocs.append((self.row_ends, "int64", rows, None))
        self.shared_allocs.add(self.row_ends)
        compact = self.compaction()
        # (the values' length is set as the compaction ends, with the blocks it kept)
        self.final = [st for st in self.final if self.block is None or st is not self.block.final]
        # each row appends with its own counter (a COO level's scratch row starts name it too)
        last.counter = self.row_info.counter = self.name(("rowcount", k), f"n{out}{k}")
        self.phase = "assemble"
        first = self.emit(cfir)
        last.counter = self.row_info.counter = self.name(("rowpos", k), f"{shared}_row")
        self.phase = "compute"
        second = self.emit(cfir)
        self.phase, last.counter, self.row_info.counter = None, shared, shared
        total = cast(Load(self.row_info.starts, rows), self.row_info.index_type, "int64")
        fibers = "each row" if by_row else f"each fiber of its level {self.row_info.k} (a row's are its own)"
        self.notes.append(f"parallelize({s.parallel}) with the sparse output {out}: {fibers} counts "
                          + ("the scatters into its workspace (a bound of its entries)" if self.bounded_rows
                             else "the entries of its shortest fiber (a bound of its entries)"
                             if self.row_fibers is not None else "its entries")
                          + ", then fills them from its start (two-phase, on threads)")
        if one_level:
            staging, starts, final = [], [self.prefix_sum(self.row_info, rows)], []
        elif not self.levels_info[0].level.located_by_coordinate:   # DCSR
            # the rows are counted by row number, as in CSR; the compaction then drops the empty ones
            top, row = self.levels_info[0], Var(self.name(("rows", k), "row"))
            staging = [Comment(f"{out}'s rows count their entries at {last.starts}[row + 1], as in CSR"),
                       Grow(last.starts, BinOp("+", rows, 1)),
                       For(row, 0, rows, [Store(last.starts, BinOp("+", row, 1), Const(0, last.index_type))])]
            starts = [self.prefix_sum(last, rows)]
            every_row = [Comment(f"every row is an entry of {out}'s level 0 for now: the compaction keeps the "
                                 f"non-empty ones"),
                         Grow(top.appended[0], rows),
                         For(row, 0, rows, [Store(top.appended[0], row, cast(row, "int64", top.index_type))]),
                         Assign(Var(top.counter), rows), Assign(Var(last.starts_len), BinOp("+", rows, 1))]
            final = every_row + self.final
        else:
            staging, starts, final = [], self.final, []
        if self.bounded_rows:
            counted, room = "its products (at most one entry each)", "room for that many"
        elif self.row_fibers is not None:
            counted, room = "the steps of its loop (at most one entry each)", "room for that many"
        else:
            counted, room = "its entries", "room for exactly their entries"
        # (a sparse vector's "rows" are its coordinates; under several Dense levels, the fibers)
        row = "coordinate" if len(self.out_sizes) == 1 else "row" if by_row else "fiber"
        if self.block is not None:
            counted = f"its blocks of {self.block_size_text()} slots that get entries"
            room = "room for that many, at the fill"
        room_made = [Grow(name, total) for name in self.appended_arrays() if self.block is None or name != self.val]
        threads = f"{row}s run on threads" if by_row else f"the rows of {self.out_path[0]} run on threads"
        return staging + [
            Comment(f"phase 1, count: each {row} of {out} counts {counted} ({threads})"),
            If(yes, first),
            Comment(f"the {row}s' starts, and {room}"),
            *starts, *room_made, *(self.blocks_on_rows(total) if self.block is not None else []),
            Comment(f"phase 2, compute: each {row} stores its entries from its start, skipping the fill, and records "
                    f"where they end ({threads})"),
            If(yes, second)] + final + compact + (self.final if one_level else [])

    def middle_as_dense(self):
        """On threads, an output of SparseList levels under Dense levels only, two or more of them, or
        three or more outermost (CSF rows, CSF: :func:`~compiler.lattice.output_build.listed_after_threads`),
        is filled as if the lists above the innermost one were Dense: every fiber ``i * n + j`` of the
        innermost list is counted and filled by its row, as under Dense levels, in a ``pos`` of one
        element per fiber the kernel grows; the kernel keeps the output's own parameters, and
        :meth:`list_middle` lists the upper levels after."""
        s = self.setup
        fmt = s.output_format
        k = listed_after_threads(tuple(fmt.levels)) if s.parallel is not None and s.scattered is None else None
        if k is None:
            return
        # (Dense levels between the last two lists stay Dense: a row of fibers of the innermost per coordinate)
        lists = [x for x in self.levels_info[k:] if not x.level.located_by_coordinate]
        params, root = list(self.out_params), fmt.leaf
        for q, lvl in reversed(list(enumerate(fmt.levels))):
            root = Dense(root) if k <= q < len(fmt.levels) - 1 else replace(lvl, child=root)
        self.out_params, self.init, self.final, self.notes = [], [], [], []   # (the notes too: it is built as this)
        self.setup_output(Format(root, fmt.mode_order))
        self.out_params = params   # (the same arrays by name, but the innermost list's pos, grown here)
        fibers = self.dense_count(lists[-1].mode)
        q = Var(self.name(("middle", "q"), "q"))
        # (a list under a list starts its pos as the kernel would have: the listing appends to it)
        self.init = [st for x in lists[1:-1] for st in (Grow(x.starts, Const(1, "int64")),
                                                        Store(x.starts, 0, Const(0, x.index_type)))]
        self.init += [Grow(lists[-1].starts, BinOp("+", fibers, 1)),
                      For(q, 0, BinOp("+", fibers, 1), [Store(lists[-1].starts, q, Const(0, lists[-1].index_type))])]
        self.middle = lists
        upper = len(lists) - 1
        ks = [str(x.k) for x in lists[:-1]]
        named = f"level {k}" if upper == 1 else f"levels {', '.join(ks[:-1])} and {ks[-1]}"
        kinds = ", ".join(x.level.name for x in lists[:-1])
        fiber = "a row of fibers" if lists[-1].row_parent is not None else "a fiber"
        self.notes.append(f"{s.output.tensor}'s {named} ({kinds}) {'is' if upper == 1 else 'are'} filled on threads as "
                          f"{'a Dense level' if upper == 1 else 'Dense levels'}, every coordinate {fiber} of level "
                          f"{lists[-1].k}, and listed after: the coordinates whose {fiber[2:]} got entries")

    def list_middle(self) -> list:
        """After a kernel on threads filled CSF rows, or a CSF, with Dense levels for its upper lists
        (:meth:`middle_as_dense`): keep, level by level, the coordinates whose fiber got entries, the
        innermost list's fibers' ends moving down to their kept positions (written at or before
        where they are read), each upper list's ends appended as its children are kept: a CSF's
        ``C1_idx[pC1] = m_j1`` where fiber ``(m_i0, m_j1)`` got entries, then ``C0_idx[pC0] = m_i0``
        and ``C1_pos[pC0 + 1] = pC1`` where row ``m_i0`` kept some ``m_j1``."""
        *upper, lower = self.middle
        out, top = self.setup.output.tensor, upper[0]
        lo = Var(self.name(("middle", "lo"), f"m_lo{upper[-1].k}"))
        fiber = "a row of fibers" if lower.row_parent is not None else "a fiber"
        head = [Comment(f"{out}'s level{'s' * (len(upper) > 1)} {', '.join(str(x.k) for x in upper)}: every "
                        f"coordinate held {fiber} of level {lower.k} on the threads; keep those whose {fiber[2:]} got "
                        f"entries"
                        + (" (a coordinate above, those with one kept below)" if len(upper) > 1 else "")),
                Declare(lo, "int64", Const(0, "int64"))]
        at = Var(top.counter)
        if top.k == 0:   # (the outermost level: one segment)
            body = head + self._list_level(upper, lower, 0, None, lo) + [
                Store(top.starts, 1, cast(at, "int64", top.index_type))]
        else:
            r = Var(self.name(("middle", "row"), f"m_row{top.k}"))
            body = head + [For(r, 0, self.dense_count(top.mode), [
                *self._list_level(upper, lower, 0, r, lo),
                Store(top.starts, BinOp("+", r, 1), cast(at, "int64", top.index_type))])]
        lens = [Assign(Var(child.starts_len), BinOp("+", self.row_fiber_count(child) if child.row_parent is not None
                                                     else Var(parent.counter), 1))
                for parent, child in zip(self.middle, self.middle[1:])]
        return body + lens

    def _list_level(self, upper: list, lower: OutputLevel, t: int, parent, lo: Var) -> list:
        """The loop over the coordinates of the upper list ``upper[t]`` (its fiber at the Dense position
        ``parent``, None at the root) keeping those whose fiber below got entries: of the innermost
        list (``lower``, its end ``hi`` past the previous end ``lo``), or of the next upper list (its
        counter moved on)."""
        info = upper[t]
        k, size = info.k, Var(self.out_sizes[info.mode].name)
        c = Var(self.name(("middle", "crd", k), f"m_{self.out_path[info.mode].name}{k}"))
        at = Var(info.counter)
        fiber = c if parent is None else BinOp("+", BinOp("*", parent, size), c)
        keep = self.keep_coordinate(info, c)
        if t == len(upper) - 1 and lower.row_parent is not None:
            # (a row of fibers of the innermost list per coordinate: it ends where its last fiber does,
            # and its fibers' ends move with it)
            hi, idt = Var(self.name(("middle", "hi"), f"m_hi{k}")), lower.index_type
            end = BinOp("*", BinOp("+", fiber, 1), self.row_size(lower))
            body = [Declare(hi, "int64", cast(Load(lower.starts, end), idt, "int64")),
                    If(BinOp(">", hi, lo), [*keep, *self.move_row(lower, fiber, at),
                                            CompoundAssign("+", at, Const(1, "int64"))]),
                    Assign(lo, hi)]
        elif t == len(upper) - 1:
            hi, idt = Var(self.name(("middle", "hi"), f"m_hi{k}")), lower.index_type
            body = [Declare(hi, "int64", cast(Load(lower.starts, BinOp("+", fiber, 1)), idt, "int64")),
                    If(BinOp(">", hi, lo), [*keep, Store(lower.starts, BinOp("+", at, 1), cast(hi, "int64", idt)),
                                            CompoundAssign("+", at, Const(1, "int64"))]),
                    Assign(lo, hi)]
        else:
            child = upper[t + 1]
            below, begin = Var(child.counter), Var(self.name(("middle", "begin", k), f"m_begin{child.k}"))
            body = [Declare(begin, "int64", below), *self._list_level(upper, lower, t + 1, fiber, lo),
                    If(BinOp(">", below, begin), [
                        *keep, Grow(child.starts, BinOp("+", at, 2)),
                        Store(child.starts, BinOp("+", at, 1), cast(below, "int64", child.index_type)),
                        CompoundAssign("+", at, Const(1, "int64"))])]
        return [For(c, 0, size, body)]

    def two_phase_check(self):
        """Refuse outputs two-phase assembly does not cover.

        It covers Dense levels followed by SparseList levels (CSR, DCSR, CSF, sparse vectors),
        one SparseCOO level (COO), blocks of Dense slots under the last SparseList, or under a
        SparseHash under Dense levels (TACO's ``{sparse, dense}``: phase 1 appends a coordinate whose
        block gets entries, phase 2 fills the block) and a SparseByteMap or SparseHash under Dense
        levels or a SparseList (phase 1 lists and marks the coordinates in their slots, or keeps their
        keys, phase 2 stores the values); the compaction then drops blocks all at the fill and unmarks
        slots at the fill (under a SparseList, the slots move, or the keys are computed again, as it
        drops the list's empty entries). On threads, each fiber counts its entries (or blocks) and
        stores them from its start, skipping the fill: the blocks' SparseList or SparseHash is the only
        sparse level (under Dense levels only) or under a DCSR's rows, a byte map or hash is under Dense
        levels only or a DCSR's rows (each row an entry of the outer SparseList until the compaction drops
        the empty ones: its slots move, its keys are computed again; ``check_parallel`` refuses others).
        """
        s = self.setup
        out = s.output.tensor
        if self.out_dense:
            raise StrategyError(f"assembly='two-phase' does not apply: the output {out} is dense, so it has no "
                                f"structure to assemble")
        # (sequentially, a block of Dense slots under a SparseList, and a byte map's slots under Dense
        # levels, are counted in phase 1 and filled in phase 2: output_build.assembles)
        last = self.levels_info[-1]
        keys = last.keyed is not None and last.starts_buffer
        blocks = self.block is not None and (last.level.appends_nested or keys) and last.covers is None
        # (sequentially, a byte map or hash under a SparseList too: its slots or keys follow their
        # parent's position through the compaction, :meth:`follow_parent`)
        listed = (s.parallel is None or last.k == 1) and self.block is None and self._under_list(last)
        # (a hash over, or under, rows of fibers: its keys move, or are computed again, in the compaction)
        keys = keys or (last.keyed is not None and (listed or last.row_parent is not None))
        anchors = [x.row_parent for x in self.levels_info if x.row_parent is not None]
        slots = last.slots is not None and (last.starts_buffer or listed) and self.block is None
        if s.parallel is not None and self.block is not None:   # (fibers of blocks: output_build.rows_of_blocks)
            blocks = blocks and rows_of_blocks(tuple(self.out_levels))
        if (self.block is not None and not blocks) or any(x.ranged is not None for x in self.levels_info) \
                or any(x.slots is not None and not (x is last and slots) for x in self.levels_info) \
                or any(x.keyed is not None and not (x is last and keys) and not any(x is a for a in anchors)
                       for x in self.levels_info):
            raise StrategyError(f"assembly='two-phase' does not apply to the output {out}: it places Dense levels "
                                f"under a sparse one only under a SparseList (on threads, the only sparse level "
                                f"under Dense levels only, or a DCSR's), and a level that marks its slots or keeps "
                                f"its keys only as the innermost level under Dense ones; "
                                f"levels that store ranges are assembled in one pass")

    def slots_under_list(self):
        """The output's innermost level when it marks its slots ``parent * size + i`` under a
        SparseList (its slots follow that parent's position), else None."""
        last = self.levels_info[-1]
        if last.slots is None or last.starts_buffer or last.slotted is not None or self.block is not None:
            return None
        return last if self._under_list(last) else None

    def follow_parent(self, index, stmts: list) -> list:
        """In a two-phase compute phase, ``stmts`` at the index of the SparseList above a level that
        marks its slots (:meth:`slots_under_list`): the list's position moves on after a fiber that
        got entries, as in phase 1 (phase 2 appends the same entries, fill or not), so each entry
        finds the slot phase 1 marked."""
        last = self.slots_under_list()
        if last is None or self.out_path[last.mode - 1] != index:
            return stmts
        parent, child = Var(self.levels_info[last.k - 1].counter), Var(last.counter)
        begin = Var(self.name(("begin", last.k), f"{last.counter}_begin"))
        return [Declare(begin, "int64", child), *stmts,
                If(BinOp(">", child, begin), [CompoundAssign("+", parent, Const(1, "int64"))])]

    def _under_list(self, info: OutputLevel) -> bool:
        """Whether the output level ``info`` is under a SparseList under Dense levels or SparseLists
        only (:func:`~compiler.lattice.output_build.under_lists`)."""
        return under_lists(tuple(self.out_levels), info.k)

    def compaction(self) -> list:
        """Drop the entries phase 1 assembled whose computed value is the fill, bottom-up.

        The innermost level keeps its non-fill entries; each level above then keeps
        the entries whose child segment is still non-empty (as one-pass assembly
        never appends an empty segment), so the arrays equal one-pass assembly's.
        Each level is compacted in place, segment by segment of its parent. When the rows
        ran on threads, phase 2 already skipped the fill: the innermost level only closes
        the gaps (:meth:`_close_gaps`).
        """
        s = self.setup
        sparse = [x for x in self.levels_info if not x.level.located_by_coordinate]
        fill = s.out_fill_value
        if self.par_rows:
            head = f"phase 2 skipped the entries whose value is the fill ({fill!r}): close the gaps they left"
        else:
            head = f"drop the entries whose value is the fill ({fill!r}): it is not stored"
        out = [Comment(head + ("; then the entries above whose segment became empty" if len(sparse) > 1 else ""))]
        for t in range(len(sparse) - 1, -1, -1):
            info = sparse[t]
            k, idt, cnt = info.k, info.index_type, Var(info.counter)
            r, q, start, end, kept = (Var(self.name(("compact", k, x), f"{x}{k}"))
                                      for x in ("c_row", "c_q", "c_start", "c_end", "c_kept"))
            as_pos = (lambda v: v) if idt == "int64" else (lambda v: Cast(idt, v))  # noqa: E731
            as_int = (lambda v: v) if idt == "int64" else (lambda v: Cast("int64", v))  # noqa: E731
            if t == 0:
                parents = self.dense_count(info.mode)
            elif info.row_parent is not None:   # (a row of fibers per entry above: .emit_blocks)
                parents = self.row_fiber_count(info)
            else:
                parents = Var(sparse[t - 1].counter)
            moves = [Store(name, kept, Load(name, q)) for name in info.appended]
            if info.keyed is not None and t < len(sparse) - 1:   # (a hash over rows of fibers: its key moves too)
                (ptr, pdt), (key, _) = info.keyed
                moves += [Store(key, kept, Load(key, q)), Store(ptr, kept, cast(kept, "int64", pdt))]
            more = CompoundAssign("+", kept, Const(1, "int64"))
            if t == len(sparse) - 1 and self.par_rows:
                if info.k == 0:   # the output's only level: its rows start in the scratch row_info
                    info, parents = replace(self.row_info, counter=info.counter), Var(self.out_sizes[0].name)
                out += self.close_gaps(info, parents, kept)
                continue
            if t == len(sparse) - 1:
                root = isinstance(parents, Const) and parents.value == 1
                body = self._keep_stored(info, r, q, kept, moves + [more], root)
                pre, post = [], []
            else:
                # an entry is kept when its (already compacted) child segment [lo, hi) is not
                # empty; it carries the segment's end along
                child = sparse[t + 1]
                cpos, cidt = child.starts, child.index_type
                lo, hi = (Var(self.name(("compact", k, x), f"{x}{k}")) for x in ("c_lo", "c_hi"))
                if child.row_parent is not None:   # (a row of its fibers per entry: their ends move with it)
                    size = self.row_size(child)
                    read = Load(cpos, BinOp("*", BinOp("+", q, 1), size))
                    ends = self.move_row(child, q, kept)
                    post = [Assign(Var(child.starts_len), BinOp("+", BinOp("*", kept, size), Const(1, "int64")))]
                else:
                    read = Load(cpos, BinOp("+", q, 1))
                    ends = [Store(cpos, BinOp("+", kept, 1), hi if cidt == "int64" else Cast(cidt, hi))]
                    post = [Assign(Var(child.starts_len), BinOp("+", kept, 1))]
                if child is self.slots_under_list():   # (its slots, a block per entry, move with the entry)
                    moves += self._move_slots(child, q, kept)
                body = [Declare(hi, "int64", read if cidt == "int64" else Cast("int64", read)),
                        If(BinOp(">", hi, lo), moves + ends + [more]),
                        Assign(lo, hi)]
                pre = [Declare(lo, "int64", Const(0, "int64"))]
                if child is self.slots_under_list():   # (the slots counted anew: a block per entry kept here)
                    post.append(Assign(Var(child.slots), BinOp("*", kept, Var(self.out_sizes[child.mode].name))))
            out += pre + [Declare(kept, "int64", Const(0, "int64"))]
            if isinstance(parents, Const) and parents.value == 1:
                # the root level: one segment
                out += [For(q, 0, as_int(Load(info.starts, 1)), body), Store(info.starts, 1, as_pos(kept))]
            else:
                out += [Declare(start, "int64", Const(0, "int64")),
                        For(r, 0, parents, [
                            Declare(end, "int64", as_int(Load(info.starts, BinOp("+", r, 1)))),
                            For(q, start, end, body),
                            Assign(start, end), Store(info.starts, BinOp("+", r, 1), as_pos(kept))])]
            out += [Assign(cnt, kept)] + post
        if self.block is not None:   # (the values: a block per kept position)
            out.append(Assign(Var(self.block.length), BinOp("*", Var(sparse[-1].counter), self.block_size())))
        if len(sparse) > 1 and sparse[-1].keyed is not None:
            out += self._keys_again(sparse[-2], sparse[-1])
        return out

    def move_row(self, info: OutputLevel, q: Var, kept: Var) -> list:
        """Move the ends of the row of fibers of the SparseList ``info`` (under Dense levels under the
        entry ``q`` of its upper level) to the row of ``kept``: the compaction drops the upper level's
        entries whose row became empty, and the listing after threads its coordinates whose row got
        none (a row ends where its last fiber does)."""
        size, pos = self.row_size(info), info.starts
        y = Var(self.name(("compact", info.k, "c_fiber"), f"c_fiber{info.k}"))
        to, at = (BinOp("+", BinOp("+", BinOp("*", x, size), y), Const(1, "int64")) for x in (kept, q))
        return [If(BinOp("!=", kept, q), [For(y, 0, size, [Store(pos, to, Load(pos, at))])])]

    def _move_slots(self, info: OutputLevel, q: Var, kept: Var) -> list:
        """Move the block of slots (marks and values) of the level ``info`` that marks them from its
        parent's position ``q`` to ``kept`` (the compaction drops the parent's empty entries; a
        dropped entry's slots are all unmarked, at the fill)."""
        size = Var(self.out_sizes[info.mode].name)
        y = Var(self.name(("compact", info.k, "c_move"), f"c_move{info.k}"))
        to, at = BinOp("+", BinOp("*", kept, size), y), BinOp("+", BinOp("*", q, size), y)
        return [If(BinOp("!=", kept, q), [For(y, 0, size, [Store(info.marks, to, Load(info.marks, at)),
                                                           Store(self.val, to, Load(self.val, at))])])]

    def _keys_again(self, parent: OutputLevel, info: OutputLevel) -> list:
        """The keys ``parent * size + i`` of a level that keeps them (``info``) under a SparseList
        (``parent``), computed again after the compaction: it dropped the parent's entries whose
        fiber became empty, so the entries after them have new positions."""
        k, idt = info.k, info.index_type
        p, q = (Var(self.name(("rekey", k, x), f"{x}{k}")) for x in ("r_parent", "r_q"))
        key = info.keyed[1][0]
        size = Var(self.out_sizes[info.mode].name)
        i = cast(Load(info.appended[0], q), idt, "int64")
        fibers = self.row_fiber_count(info) if info.row_parent is not None else Var(parent.counter)
        return [Comment(f"the keys of {self.setup.output.tensor}'s level {k} again: their parents moved down over "
                        f"the dropped ones"),
                For(p, 0, fibers, [
                    For(q, cast(Load(info.starts, p), idt, "int64"), cast(Load(info.starts, BinOp("+", p, 1)), idt, "int64"),
                        [Store(key, q, BinOp("+", BinOp("*", p, size), i))])])]

    def tables_last(self, body: list) -> list:
        """``body`` (a two-phase kernel's, its compaction last) with the key tables of the levels
        that keep their keys in one built at its end, from the entries the compaction kept."""
        tables = [st for info in self.levels_info for st in (info.table_stmts or ())]
        return [st for st in body if not any(st is t for t in tables)] + tables

    def _keep_stored(self, info: OutputLevel, r: Var, q: Var, kept: Var, keep: list, root: bool) -> list:
        """The compaction's test of the innermost sparse level's entry ``q`` (``keep`` moves it to
        ``kept``): its value is not the fill; under it a block of Dense slots (TACO's ``{sparse,
        dense}``), some slot of the block is not, the block moving with it; a level that marks its
        slots (its values in the slot ``row * size + i``, ``i`` the entry's coordinate), its slot's
        value is not, and a dropped entry's slot is unmarked (phase 2 left the fill in it)."""
        s, k = self.setup, info.k
        is_kept = lambda v: not_fill(v, s.out_dtype, s.out_fill)   # noqa: E731
        if info.keyed is not None:   # (each entry its own child; its key moves with it: the table is built after)
            (ptr, pdt), (key, _) = info.keyed
            moves = [Store(key, kept, Load(key, q)), Store(ptr, kept, cast(kept, "int64", pdt))]
            if self.block is not None:   # (its child a block of Dense slots, tested and moved as a SparseList's)
                return self._keep_block(k, q, kept, keep[:-1] + moves + [keep[-1]])
            moves.append(Store(self.val, kept, Load(self.val, q)))
            return [If(is_kept(Load(self.val, q)), keep[:-1] + moves + [keep[-1]])]
        if info.slots is not None:
            slot = Var(self.name(("compact", k, "c_slot"), f"c_slot{k}"))
            i = cast(Load(info.appended[0], q), info.index_type, "int64")
            at = i if root else BinOp("+", BinOp("*", r, Var(self.out_sizes[info.mode].name)), i)
            return [Declare(slot, "int64", at),
                    If(is_kept(Load(self.val, slot)), keep, [Store(info.marks, slot, Const(False, "bool"))])]
        if self.block is None:
            return [If(is_kept(Load(self.val, q)), keep[:-1] + [Store(self.val, kept, Load(self.val, q)), keep[-1]])]
        return self._keep_block(k, q, kept, keep)

    def _keep_block(self, k: int, q: Var, kept: Var, keep: list) -> list:
        """The compaction's test of entry ``q`` of the innermost sparse level ``k``, over a block of
        Dense slots: kept (``keep`` moves its coordinate to ``kept``) if some slot of its block is
        not at the fill, the block moving with it."""
        s = self.setup
        # (the block is kept from its first slot not at the fill: the scan stops there; a block
        # moves only after the first one dropped)
        size = self.block_size()
        x = Var(self.name(("compact", k, "c_slot"), f"c_slot{k}"))
        start, end, y = (Var(self.name(("compact", k, n), f"{n}{k}")) for n in ("c_block", "c_block_end", "c_move"))
        to = BinOp("*", kept, size)
        move = For(y, 0, size, [Store(self.val, BinOp("+", to, y), Load(self.val, BinOp("+", start, y)))])
        return [Declare(start, "int64", BinOp("*", q, size)), Declare(end, "int64", BinOp("+", start, size)),
                Declare(x, "int64", start),
                While(BinOp("&&", BinOp("<", x, end), is_fill(Load(self.val, x), s.out_dtype, s.out_fill)),
                      [CompoundAssign("+", x, Const(1, "int64"))]),
                If(BinOp("<", x, end), keep[:-1] + [If(BinOp("!=", kept, q), [move]), keep[-1]])]

    def close_gaps(self, info: OutputLevel, rows, kept: Var, row: str = "row") -> list:
        """Move each row's entries (phase 2 on threads left them at the row's start, up to
        its end in ``row_ends``) down to follow the previous row's; nothing moves before
        the first gap.

        A row without room has no entries (phase 2 may not have visited it, as a row a
        ``pos`` loop skips, so its ``row_ends`` element is unset and not read).
        """
        k, idt = info.k, info.index_type
        r, q, start, stop, end = (Var(self.name(("compact", k, x), f"{x}{k}"))
                                  for x in ("c_row", "c_q", "c_start", "c_stop", "c_end"))
        after = BinOp("+", r, 1)
        # (a level that marks its slots keeps its values in them: its coordinates move; a hash's
        # entry is its own child, its key moving with it)
        moves = [Store(name, kept, Load(name, q)) for name in (*info.appended, *(() if info.slots is not None or self.block
                                                                              else (self.val,)))]
        if self.block is not None:   # (a block of slots per entry moves with it)
            size, y = self.block_size(), Var(self.name(("compact", k, "c_move"), f"c_move{k}"))
            moves.append(For(y, 0, size, [Store(self.val, BinOp("+", BinOp("*", kept, size), y),
                                                Load(self.val, BinOp("+", BinOp("*", q, size), y)))]))
        if info.keyed is not None:
            (ptr, pdt), (key, _) = info.keyed
            moves += [Store(key, kept, Load(key, q)), Store(ptr, kept, cast(kept, "int64", pdt))]
        return [Comment(f"each {row}'s entries end at {self.row_ends}[{row}]: they move down to follow the previous "
                        f"{row}'s (nothing moves before the first gap)"),
                Declare(kept, "int64", Const(0, "int64")), Declare(start, "int64", Const(0, "int64")),
                For(r, 0, rows, [
                    Declare(stop, "int64", cast(Load(info.starts, after), idt, "int64")),
                    Declare(end, "int64", Select(BinOp(">", stop, start), Load(self.row_ends, r), start)),
                    If(BinOp("==", kept, start), [Assign(kept, end)],
                       [For(q, start, end, moves + [CompoundAssign("+", kept, Const(1, "int64"))])]),
                    Assign(start, stop),
                    Store(info.starts, after, cast(kept, "int64", idt))]),
                Assign(Var(info.counter), kept)]



def only_sets(n, temp: str) -> bool:
    """Whether the CFIR statement ``n`` does nothing but compute the scalar temporary ``temp`` (its
    assignments, folds included, set ``temp`` or temporaries allocated inside it; no workspace).

    >>> from compiler.notation import parse
    >>> from compiler.format import csr, dense, sparse_vector
    >>> from compiler.lattice.plan import Setup
    >>> from compiler.lattice.cfir_builder import build_cfir
    >>> setup = Setup.create(parse("y[i] = A[i, j] * x[j]"), {"A": csr(), "x": dense(1), "y": sparse_vector()})
    >>> alloc = next(x for x in cfir_walk(build_cfir(setup.statement, setup)) if isinstance(x, CAlloc))
    >>> [only_sets(x, alloc.temp) for x in alloc.body.stmts]   # (the sum over j, then y[i] = t_j)
    [True, False]
    """
    nodes = list(cfir_walk(n))
    temps = {temp} | {x.temp for x in nodes if isinstance(x, CAlloc)}
    sets = False
    for x in nodes:
        if isinstance(x, (CWorkspace, CDenseWorkspace)):
            return False
        if isinstance(x, CForall) and x.fold is not None and (x.fold.output or x.fold.lhs.tensor not in temps):
            return False
        if isinstance(x, CAssign):
            if x.output or x.lhs.tensor not in temps:
                return False
            sets = True
    return sets


def value_tested_temps(cfir) -> set:
    """Names of the temporaries whose values some case tests (the assemble phase must compute them)."""
    return {k.split("[")[0] for c in cfir_walk(cfir) if isinstance(c, CCase) for k in c.value_tests}


__all__ = ["TwoPhase", "only_sets", "value_tested_temps"]
