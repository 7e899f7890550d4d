"""Emission, locating and positions: the iterators of a CFIR loop in the imperative IR.

A mixin of :class:`~compiler.lattice.emitter.Emitter`: each level iterator gets its position
variable (``pA1``), its fiber bounds (``A1_pos[i]`` to ``A1_pos[i + 1]``), its parent position
(the located or iterated level above), and a locate where the lattice locates it instead of
iterating it (a Dense level: ``pB1 = i * B1_size + j``; a SparseByteMap tests its table, a
SparseHash probes it; a diagonal's sparse last level is searched for ``i``).

Example: ``y[i] = A[i, j] * B[i, j]`` with A CSR and B ``Dense(SparseByteMap)`` iterates A's row
and locates B's entry at ``j``, ``pB1 = i * B1_size + j``, testing ``B1_tbl[pB1]``.
"""

from __future__ import annotations

from dataclasses import replace


from ..imperative.ir import BinOp, Comment, CompoundAssign, Const, Declare, Select, Var, While, and_
from .cfir import CCase, CForall, CSkip
from .diagonal import Found
from .iterators import ModeIterator, hash_capacity_stmts


class Locating:
    """Positions, bounds and locates of the level iterators (a mixin of the emitter)."""

    def it_key(self, it) -> str:
        for key, name in self.setup.names.items():
            if name == it.name:
                return key
        raise KeyError(it.name)

    def parent_of(self, it: ModeIterator):
        key = self.it_key(it)
        return self.parent[(key, it.mode)] if it.mode > 0 else Const(0, "int64")

    def pvar(self, it: ModeIterator) -> Var:
        base = f"p{it.name}{it.level}" + (f"_{it.sub}" if it.sub else "")
        return Var(self.name(("p", it.name, it.mode), base))

    def coord(self, it: ModeIterator, p):
        """IR of ``it``'s coordinate at position ``p`` of its current fiber (and block)."""
        return it.coord(p, self.parent_of(it), self.block_var(it))

    def block_var(self, it) -> Var | None:
        """The variable of the block ``it`` is in (``rA1``), for a level that keeps one, else None."""
        if not getattr(it, "keeps_block", False):
            return None
        return Var(self.name(("r", it.name, it.mode), f"r{it.name}{it.level}"))

    def block_decl(self, it) -> list:
        """Declare ``it``'s block variable at its fiber's first block (nothing for most levels)."""
        r = self.block_var(it)
        return [] if r is None else [Declare(r, "int64", it.block_start(self.parent_of(it)))]

    def block_sync(self, it, p) -> list:
        """Bring ``it``'s block variable up to position ``p`` (within the fiber) before a coordinate is read."""
        r = self.block_var(it)
        return [] if r is None else it.block_sync(p, r)

    def cvar(self, it: ModeIterator, index) -> Var:
        return Var(self.name(("c", it.name, it.mode), f"{index.name}{it.name}"))

    def bounds(self, it: ModeIterator, start=None):
        """IR ``(lo, hi)`` of ``it``'s fiber; under an outer merged loop's one case, where the operand is
        not at the coordinate above, ``hi`` is ``start`` (the variable holding ``lo``, else ``lo``): empty."""
        lo, hi = it.bounds(self.parent_of(it))
        cond = self.empty_unless.get((self.it_key(it), it.mode))
        return (lo, hi) if cond is None else (lo, Select(cond, hi, lo if start is None else start))

    def fiber_length(self, it: ModeIterator):
        """The number of positions of ``it``'s current fiber (``hi - lo``; ``hi`` from 0)."""
        lo, hi = self.bounds(it)
        return hi if isinstance(lo, Const) and lo.value == 0 else BinOp("-", hi, lo)

    def hash_capacity(self, it: ModeIterator) -> Var:
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
        for up in self.setup.iters[self.it_key(it)][:it.mode]:
            if up.fibers_by_size:
                size = Var(self.param(up.param("size")))
                fibers = size if isinstance(fibers, Const) else BinOp("*", fibers, size)
            else:   # SparseList, SparseHash, SparseBand ...: their stored count
                fibers = up.stored_count(fibers)
        self.init += [Comment(f"{it.tensor}'s level {it.level} (SparseHash): its table's capacity, "
                              f"the smallest power of two holding twice its keys")]
        self.init += hash_capacity_stmts(cap, it.stored_count(fibers))
        return cap

    def locate_bytemaps(self, n: CForall) -> CForall:
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
            key = self.it_key(bm)
            ok = True
            for loop in n.loops:
                if bm not in loop.iterated:
                    continue
                others = {self.it_key(it) for it in loop.iterated if it != bm and it not in chosen}
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
            how = "probing its hash table" if it.probed else "testing its table"
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

    def has_entry(self, it):
        """``p < p_end``: whether iterator ``it`` has an entry left."""
        p = self.pvar(it)
        return BinOp("<", p, Var(p.name + "_end"))

    def segend(self, it, coord_var) -> tuple[Var, list]:
        p = self.pvar(it)
        s = Var(self.name(("s", it.name, it.mode), f"s{it.name}{it.level}" + (f"_{it.sub}" if it.sub else "")))
        end = Var(p.name + "_end")
        return s, [Declare(s, "int64", BinOp("+", p, 1)),
                   While(and_(BinOp("<", s, end), BinOp("==", self.coord(it, s), coord_var)),
                         [CompoundAssign("+", s, Const(1, "int64"))])]

    def find_on_diagonal(self, loc: Found, parent, i) -> tuple[Var, list]:
        """Search a diagonal's sparse last level ``loc`` for ``i`` under ``parent``: its position, or -1."""
        pv = self.pvar(loc.it)
        fresh = lambda base: Var(self.name(("find", loc.name, loc.mode, base),  # noqa: E731
                                           f"{base}{loc.name}{loc.level}"))
        cap = self.hash_capacity(loc.it) if loc.it.probed else None
        if not loc.it.located_by_coordinate:   # (a Dense level's slot is always stored: no -1 to test)
            self.found.add(self.it_key(loc))
        return pv, loc.find_stmts(pv, parent, i, fresh, cap)

    def set_parents(self, iterated, segs, located, case: CCase, i=None):
        for it in iterated:
            key = self.it_key(it)
            p = self.pvar(it)
            if it.children_by_coordinate:   # children are located by coordinate
                self.parent[(key, it.mode + 1)] = it.locate(self.parent_of(it), i)
                continue
            self.parent[(key, it.mode + 1)] = it.child(p, segs.get(it), self.parent_of(it), self.block_var(it))
        for key, (pv, mode) in located.items():
            self.parent[(key, mode)] = pv



__all__ = ["Locating"]
