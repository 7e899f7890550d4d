"""CFIR for sequence lattices (shape-operators.md §5 and §7; the paper's Fig. 15); its interpreter
(§5.3) is :mod:`compiler.lattice.seqinterp`.

The input is a small concrete index notation over sequences: :class:`Forall` (``forall k ∈ seq``),
:class:`Assign` (``c(k) = e``), :class:`Reduce` (``t += e``, or ``t = max(t, e)``), :class:`Alloc` (a scalar
temporary set to 0, or the reduction's identity, the ``where`` of a sum) and :class:`Block`; values are :class:`Read` (a tensor read
through its level iterators: ``A(i_A, j_A)``; its fill where they are not all there), :class:`Add`,
:class:`Mul`, :class:`Op` (any other elementwise operator), :class:`Cat` (the body of a
concatenation: the side whose levels the loops are at, :mod:`compiler.lattice.seqparts`),
:class:`Temp` and :class:`Lit`.

:func:`build_cfir` lowers each forall to one :class:`While` per lattice point in topological
order (:mod:`compiler.lattice.seqlattice`), each until an edge sequence runs out. Dense operands
of an intersection are located rather than iterated (``with i_b = i_a``, :func:`remove_locators`), and
so is a dense operand of a union where it alone writes the result's fill (:meth:`Compiler.fill_sides`).
A loop's body is specialized per sub-point: reads whose iterators are not live there become their
fill (0 mostly), literals fold (``0 + x = x``, ``0 * x = 0``, ``concat(0, y) = y``, ``NaN - y = NaN``),
a statement writing the result's fill there is dropped (a point where every case does so gets no loop,
:func:`~compiler.lattice.seqlattice.drop_fill_points`), a sum whose producer loop vanished is 0, a
case whose operands never meet (an hstack's columns, :func:`~compiler.lattice.sequences.never_at_one`)
is not tested, and nested foralls get their own lattice under the live iterators (which is how
a concatenation's loops read ``A``'s rows in the first and ``B``'s in the second). A union of three or more
levels whose operands feed parts of the body that read no other is one merged loop, not a lattice of
``2^n - 1`` points (:mod:`compiler.lattice.seqmerge`: a stack of COO matrices along axis 1); so are the loops
over the π0 and π1 of a split of such a union (a reshape of an hstack of three or more parts, whose nested
lattices grew as ``4^n``: :meth:`Compiler.merged_split`). A
:class:`Switch` tests the sub-points, most specific first, when there are several or the
sequence intersects iterated operands.

:func:`~compiler.lattice.seqinterp.interpret` runs the CFIR over concrete data with the reference iterators of
:mod:`compiler.lattice.seqiter`: the iterators of a series of loops are initialized once, a
nested series on each entry; after a switch only the sub-iterators at the coordinate advance.

>>> from compiler.lattice.sequences import Level, Union
>>> a = Level("a", 0, "compressed", 4); b = Level("b", 0, "compressed", 4)
>>> prog = Forall("i", Union(a, b), Assign("c", ("i",), Add(Read("a", (a,)), Read("b", (b,)))))
>>> cf = build_cfir(prog)
>>> print(cf.text())
while i <- i_a ∪ i_b
  switch i
  case i_a ∪ i_b:
    c(i) = a(i_a) + b(i_b)
  case i_a:
    c(i) = a(i_a)
  case i_b:
    c(i) = b(i_b)
while i <- i_a
  c(i) = a(i_a)
while i <- i_b
  c(i) = b(i_b)
>>> from compiler.lattice.seqinterp import interpret
>>> interpret(cf, {"a": {(0,): 1.0, (2,): 2.0}, "b": {(2,): 10.0, (3,): 20.0}}).outputs["c"]
{(0,): 1.0, (2,): 12.0, (3,): 20.0}
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from .. import serialize
from ..trace import Artifact, Later, Rewrite, Trace
from ..lowering_budget import ask
from ..treedot import TreeDot
from ..values import same_value
from .seqcfirvalues import Add, Cat, Lit, Mul, Op, Read, Temp, fold, specialize_value, value_children
from .seqlattice import SeqLattice, SeqPoint, build_seq_lattice, drop_fill_points, live_keys, simplify
from .seqmerge import (everywhere, in_group_cases, merged_split, mergeable, operand_leaves, read_in_group_loops,
                       tested_parts, union_operands)
from .seqstmts import (Alloc, Assign, Bind, Block, Fold, Forall, Reduce, Skip, Stmt, Switch, While, c_lines_at_least,
                       loop_count, loop_spans, printed_lines, reduces_into, while_clauses, while_tag, written)
from .seqlocate import at_coordinate, locatable, once_each, remove_locators, replaced
from .seqproductnest import factored, index_names, nest_names, nests, over_parts, writes_at
from .seqrewind import rewound, walked_below
from .sequences import (EMPTIES, Concat, Empty, Intersect, Level, Product, Project, Seq, Union,
                        Universe, never_at_one, rebuild, side_key, walk)

@dataclass
class Compiler:
    """Builds the CFIR; ``lattices`` (each with its own rewrites) and ``rewrites`` (locators,
    specialization) record what each forall did."""

    lattices: list = field(default_factory=list)
    rewrites: list = field(default_factory=list)
    #: the result's fill: an assignment of it at a sub-point writes nothing
    fill: float = 0.0
    #: the foralls around the one compiled, outermost first (``(index, sequence, the case's sequence, what the
    #: case locates)``)
    enclosing: list = field(default_factory=list)
    #: each counted sum's summand fill (its :class:`Fold`'s): adding it at a sub-point is skipped
    folds: dict = field(default_factory=dict)
    #: the index names taken (a nested product's loops get others: :mod:`compiler.lattice.seqproductnest`)
    names: set = field(default_factory=set)
    #: the leaf keys the merged loops around test (a dense level below one is empty where it is not there)
    tested: frozenset = frozenset()

    def stmt(self, s: Stmt, defs: frozenset, known_temps=None) -> Stmt:
        """``s`` specialized to the live iterators ``defs`` and compiled to CFIR; ``known_temps``:
        the temporaries whose value is known (their sums' loops vanished)."""
        known_temps = known_temps or {}
        if isinstance(s, (Assign, Reduce)):
            v = specialize_value(s.value, defs, known_temps)
            # (a counted sum skips its summand's fill: the fold after its loops adds it)
            skipped = self.fill if isinstance(s, Assign) else self.folds.get(s.out, 0.0) if s.count else s.unchanged
            # (a product in order multiplies by its identity too: (inf + inf j) * (1 + 0j) is nan + nan j)
            ordered = isinstance(s, Reduce) and s.ordered
            unchanged = isinstance(v, Lit) and same_value(v.value, skipped) and not ordered
            out = Skip() if unchanged else replace(s, value=v)
            if v != s.value:
                self.rewrites.append(Rewrite("absent-operands", str(s), str(out)))
            return out
        if isinstance(s, (Alloc, Skip, Fold)):
            return s
        if isinstance(s, Block):
            self.folds.update((x.out, x.fill) for x in s.stmts if isinstance(x, Fold))
            out = [self.stmt(x, defs, known_temps) for x in s.stmts]
            # a temporary nothing sums into any more is 0 where it is read, or the fill folded in
            # for every coordinate of its sum
            folds = {x.out: x for x in out if isinstance(x, Fold)}
            dead = {x.name: Lit(folds[x.name].missed(0) if x.name in folds else x.init) for x in out
                    if isinstance(x, Alloc) and not any(reduces_into(y, x.name) for y in out)}
            if dead:
                self.rewrites.append(Rewrite("empty-sum", ", ".join(sorted(dead)),
                                             ", ".join(str(v) for _, v in sorted(dead.items()))))
                out = [self.stmt(x, defs, {**known_temps, **dead}) for x in s.stmts]
                out = [x for x in out if not (isinstance(x, Alloc) and x.name in dead
                                              or isinstance(x, Fold) and x.out in dead)]
            out = [x for x in out if not isinstance(x, Skip)]
            if not out:
                return Skip()
            return out[0] if len(out) == 1 else Block(tuple(out))
        if isinstance(s, Forall):
            return self.forall(s, defs, known_temps)
        if isinstance(s, Bind):
            body = self.stmt(s.body, defs, known_temps)
            return body if isinstance(body, Skip) else replace(s, body=body)
        raise TypeError(f"cannot compile {s!r}")

    def nested(self, f: Forall, live: Product) -> Forall:
        """The loops of ``f`` over ``live``, a product whose right operand holds a union or a
        concatenation (:func:`~compiler.lattice.seqproductnest.nests`): one over its left operand, inside it
        one over its right, the product's coordinate bound where the body writes at it."""
        outer, inner = nest_names(f.index, self.names)
        self.names |= {outer, inner}
        body = Bind(f.index, outer, inner, live.b.size(), f.body) if writes_at(f.body, f.index) else f.body
        out = Forall(outer, live.a, Forall(inner, live.b, body))
        self.rewrites.append(Rewrite("product-nested", f"forall {f.index} ∈ {live}", f"forall {outer} ∈ {live.a}: "
                                     f"forall {inner} ∈ {live.b}: {f.index} = {outer}·{live.b.size()} + {inner}"))
        return out

    def rekey(self, locs, seq: Seq, defs) -> tuple:
        """The locators of the loop over ``seq``, a point of the lattice: each keyed on what is
        left of its iterated sequence there (``a ∪ b`` once ``b`` ran out is ``a``)."""
        here = seq.iters()
        out = []
        for located, key in locs:
            # a leaf the point no longer has is not there (∅, even a dense one: it need not have
            # run to its end, the point may come from another operand's running out)
            gone = {leaf: Empty(leaf.size(), str(leaf)) for leaf in key.iters() - here}
            key = simplify(replaced(key, gone), defs)
            if not isinstance(key, EMPTIES):
                out.append((located, key))
        return tuple(out)

    def writes_fill_alone(self, defs, body: Stmt, known_temps) -> bool:
        """Whether ``body`` writes only the result's fill with ``defs`` live (compiled there and thrown
        away: its lattices and rewrites are not this program's)."""
        lattices, rewrites = len(self.lattices), len(self.rewrites)
        try:
            return isinstance(self.stmt(body, defs, known_temps), Skip)
        finally:
            del self.lattices[lattices:], self.rewrites[rewrites:]

    def fill_sides(self, s: Seq, body: Stmt, defs, known_temps, tied=(), part=None) -> tuple[Seq, tuple]:
        """``s`` without each dense operand of a union whose cases alone write the result's fill, and
        the locators ``(located, iterated)`` that read it at the other operand's coordinate instead
        (``x[2:10] - y`` of a NaN-filled ``x`` and a dense ``y``: the loop walks ``x``'s entries, not
        ``y``'s). Elsewhere as :func:`remove_locators` (not under a product or a projection). ``defs``
        holds everything the loop can make live, its iterators and what its locators locate: where the
        other operand is not, the body is compiled with all the rest there (``i_t2`` located on ``U ∪
        i_t4`` is read where ``U`` alone is; ``(M0 ∪ M1) ∩ y`` reads ``y`` where ``M0`` alone is), which
        writes the fill if any fewer there does (an absent read only folds more). ``tied``: the loop's
        locators; ``part``: inside one operand of a concatenation, ``defs`` without the other operands'
        leaves and what is located on them, where the body must write the fill too (the loops are in that
        part: concat((A + 1, B * 2)) at B's part where A's row is not writes B's zeros, not A's side's 1)."""
        if isinstance(s, Union):
            for keep, side in ((s.a, s.b), (s.b, s.a)):
                if locatable(side) and not locatable(keep) and \
                        self.writes_fill_alone(defs - live_keys(keep), body, known_temps) and \
                        (part is None or self.writes_fill_alone(part - live_keys(keep), body, known_temps)):
                    rest, locs = self.fill_sides(keep, body, defs, known_temps, tied, part)
                    return rest, locs + ((side, rest),)
        kids = s.children()
        if not kids or isinstance(s, (Product, Project)):
            return s, ()
        new, locs = [], ()
        for c in kids:
            inside = part
            if isinstance(s, Concat):
                # (every leaf of the other parts, not what their loops iterate: the dense m_C of (U_k ⊔ U_l) ⊔ m_C
                # is read in its part, and the U_m located on it is that part's too)
                other = frozenset().union(*(live_keys(k) | {x.key for x in k.iters()} for k in kids if k is not c))
                other |= frozenset(key for a, b in tied if live_keys(b) & other for key in live_keys(a))
                inside = (defs if part is None else part) - other
            x, lx = self.fill_sides(c, body, defs, known_temps, tied, inside)
            new.append(x)
            locs += lx
        return rebuild(s, tuple(new)), locs

    def forall(self, f: Forall, defs: frozenset, known_temps: dict) -> Stmt:
        # (a loop between a split's major and minor index sees the Dense levels below its rows: seqrewind)
        # (the loops around as this case walks them, and this loop's π1s as simplified there: the second part
        # of a concatenation's π0 and π1 are |m_A| + n_B, not m_A ⊔ n_B, and A's rows are not walked below it)
        plain_rewrites = []
        plain = simplify(f.seq, defs, plain_rewrites)
        seen = defs | walked_below([(j, c) for j, _, c, _ in self.enclosing], f.seq, plain)
        # what is live first: the dense j_B of (j_A ∪ j_B) would be located on j_A, gone under B's rows
        once = once_each(f.seq)
        if once != f.seq:
            self.rewrites.append(Rewrite("idempotent", str(f.seq), str(once)))
        again = once != f.seq or seen != defs     # (else the loop's sequence is live as simplified above)
        live = simplify(once, seen, self.rewrites) if again else plain
        self.rewrites.extend([] if again else plain_rewrites)
        if isinstance(live, EMPTIES):
            self.rewrites.append(Rewrite("empty-loop", str(f.seq), "skip"))
            return Skip()
        undone = over_parts(once, live)
        if undone is not None:
            # (a collapse of a vstack whose part of another fill walks every column of its own, U_j beside
            # j_A1: distributed over the parts, that part's product has the union in its right operand,
            # which the lattice does not take; nested, each part's rows walk their own columns)
            self.rewrites.append(Rewrite("product-over-concat-nested", str(live), str(undone)))
            return _bound_once(self.stmt(self.nested(f, undone), defs, known_temps))
        merged = None if nests(live) else factored(live)
        if merged is not None:
            self.rewrites.append(Rewrite("product-factored", str(live), str(merged)))
            live = simplify(merged, seen, self.rewrites)
        # (what only the part of a concatenation the loops are not at reads is not walked: the rows of
        # stack([A, B]).reshape(2, -1) walk A's in the first part, B's in the second, and the loops over
        # the columns of stack([A, B])'s first part walk A's alone, not A's beside B's)
        other = _other_part_reads(f.body, defs)
        gone = {x: Empty(x.size(), str(x)) for x in live.iters() if isinstance(x, Level) and x.tensor in other}
        if gone:
            live = simplify(replaced(live, gone), seen, self.rewrites)
            if isinstance(live, EMPTIES):
                self.rewrites.append(Rewrite("empty-loop", str(f.seq), "skip"))
                return Skip()
        if nests(live):
            return _bound_once(self.stmt(self.nested(f, live), defs, known_temps))
        # (the π1s of what the loops walk or locate, their group visited again by a loop in between)
        # (a π1 may be simplified as its case's π0 is, not as the loop's: the second part of a concatenation's
        # π1 is |m_A| + n_B where the loop around walks m_A ⊔ n_B; its group is opened by either)
        rewind = rewound([(j, t) for j, t, _, _ in self.enclosing], live,
                         [(j, c, *at) for j, _, c, at in self.enclosing])
        if rewind:
            self.rewrites.append(Rewrite("rewind", str(live), ", ".join(f"{p} from its group start" for p in rewind)))
        seq, locs = remove_locators(live)
        located = frozenset(key for a, _ in locs for key in live_keys(a))
        seq, quiet = self.fill_sides(seq, f.body, defs | located | live_keys(seq), known_temps, locs)
        if quiet:
            self.rewrites.append(Rewrite("locate-fill-side", str(live), f"{seq} with " + ", ".join(
                f"{a} = {b}" for a, b in quiet) + ": where only the located side is, each case writes the "
                f"result's fill, {self.fill}"))
        # (i_B = i_A, once i_A = i_C, is i_B = i_C: i_A is walked at no point, i_B would be located nowhere)
        locs = tuple((a, replaced(b, dict(quiet))) for a, b in locs) + quiet
        if locs:
            self.rewrites.append(Rewrite("locate", str(live), f"{seq} with " + ", ".join(
                f"{a} = {b}" for a, b in locs)))
        kept = []
        for located, iterated in locs:
            loc = simplify(located, seen, self.rewrites)
            if not isinstance(loc, EMPTIES) and loc != iterated:
                kept.append((loc, iterated))
        merged = self.merged(f, simplify(seq, seen), kept, defs, seen, known_temps, rewind)
        if merged is not None:
            return merged
        # (a group of a split straddling a concatenation's operands is visited by each operand's
        # loop: right unless the body reduces the group into a temporary)
        L = build_seq_lattice(seq, seen, straddle=not _holds_temporary(f.body) and _splits_concats(f.seq))
        at = len(self.lattices)
        self.lattices.append((f.index, L))
        built, first = [], None
        for p in L.points:
            point_locs = self.rekey(kept, p.seq, seen)
            cases = []
            for k in p.subs:
                sp = L.points[k].seq
                if len(p.subs) > 1 and never_at_one(sp):
                    # (an hstack's ravel: A's columns and B's never meet, so no case for both)
                    self.rewrites.append(Rewrite("disjoint-case", str(sp), "never at one coordinate: no case"))
                    continue
                located = tuple(a for a, b in point_locs if at_coordinate(b, sp.iterated()))
                here = defs | live_keys(sp) | frozenset(key for a in located for key in live_keys(a))
                # (the loops around: the loop's sequence, this case's, simplified as the π1s inside it are, and
                # what the case locates: a π0 located there enters its group as one walked would)
                self.enclosing.append((f.index, f.seq, sp, located))
                try:
                    cases.append((sp, self.stmt(f.body, here, known_temps)))
                finally:
                    self.enclosing.pop()
                # (what the first case's loops and rewrites recorded: all a loop of that case alone needs)
                first = first or (len(self.lattices), len(self.rewrites))
            built.append((point_locs, cases))
        same = self.one_case(f, seq, L, built, kept, rewind)
        if same is not None:
            del self.lattices[first[0]:], self.rewrites[first[1]:]
            self.rewrites.append(same[0].rewrites[-1])
            self.lattices[at] = (f.index, same[0])
            return same[1]
        # (the loop over what is left once the other operands ran out walks entries that change nothing)
        quiet = {n for n, (_, cases) in enumerate(built) if all(isinstance(b, Skip) for _, b in cases)}
        L = drop_fill_points(L, quiet, f"each case writes the result's fill, {self.fill}")
        self.lattices[at] = (f.index, L)
        loops = []
        for p, (point_locs, cases) in zip(L.points, built):
            if p.writes_fill:
                continue
            if len(cases) > 1 or any(isinstance(n, Intersect) for n in walk(p.seq)):
                # (the last cases writing the fill need no test: where they are at the coordinate, no
                # case runs either; one before a case that writes stays, so that case does not run there)
                while cases and isinstance(cases[-1][1], Skip):
                    cases = cases[:-1]
                body = Switch(f.index, tuple(cases))
            else:
                body = cases[0][1] if cases else Skip()   # (each case never at one coordinate: parts of extent 0)
            first = () if loops else (p.seq,) + tuple(a for a, _ in kept)
            loops.append(While(f.index, p.seq, point_locs, body, first, () if loops else rewind))
        if not loops:
            self.rewrites.append(Rewrite("empty-loop", str(f.seq), "skip"))
            return Skip()
        return loops[0] if len(loops) == 1 else Block(tuple(loops))

    def one_case(self, f: Forall, seq: Seq, L: SeqLattice, built: list, kept, rewind) -> tuple | None:
        """The lattice ``L`` of ``f``'s loop over ``seq``, a union of levels (intersections of them) of as many
        tensors and universes, as one merged loop, ``(lattice, loop)``, where every case of every point (``built``:
        each point's locators and cases) is one statement (None: not so). That statement reads nothing the cases
        tell apart: each value it reads is located and tested where it is (a column of a COO matrix, searched in
        the row its walk is at, fill where the walk is not), so the ``2^n - 1`` points' loops run it at each
        coordinate of the union, as one loop does until all its operands ran out (a cross product of two COO
        matrices with a NaN stored: 3 loops, 5 cases, one statement; a column of one plus 1, ``i_A ∪ U_i``: 2
        loops, 3 cases)."""
        ops = union_operands(seq)
        bodies = [b for _, cases in built for _, b in cases]
        if ops is None or len(bodies) < 2 or any(b != bodies[0] or isinstance(b, Skip) for b in bodies) or \
                not all(isinstance(a, (Level, Universe)) and everywhere(a, self.tested) for a, _ in kept):
            return None
        leaves = [leaf.tensor for op in ops for leaf in operand_leaves(op) if isinstance(leaf, Level)]
        if len(leaves) != len(set(leaves)):
            return None
        # (short: the explorer shows a rewrite on one line)
        why = Rewrite("one-case", f"forall {f.index} ∈ {seq}",
                      f"one loop until all ran out: the {len(L.points)} points' cases are one statement")
        lattice = SeqLattice(seq, [SeqPoint(seq, (), (0,))], [*L.rewrites, why], L.defs)
        return lattice, While(f.index, seq, tuple((a, seq) for a, _ in kept), bodies[0],
                              (seq,) + tuple(a for a, _ in kept), rewind, merged=True)

    def merged(self, f: Forall, seq: Seq, kept, defs, seen, known_temps, rewind) -> While | None:
        """The loop of ``f`` over ``seq`` as one merged loop (:mod:`compiler.lattice.seqmerge`), where ``seq`` is a
        union of :data:`~compiler.lattice.seqmerge.MERGE_FROM` or more levels (intersections of them, a tensor's levels
        walked row by row) of as many tensors, each read only in parts of the body that read no other (None: not so);
        ``kept``: its locators,
        dense levels located at each coordinate it visits."""
        if merged_split(seq) is not None:
            return self.merged_split(f, seq, kept, defs, seen, known_temps, rewind)
        levels = mergeable(seq)
        # (what it locates is at every coordinate it visits: a dense level's, or a universe, the rows where a part of
        # another fill writes it, located on a dense level of that part)
        if levels is None or not all(isinstance(a, (Level, Universe)) and everywhere(a, self.tested) for a, _ in kept):
            return None
        # (a universe or a dense level below no tested one is at every coordinate the loop visits: not tested)
        dense = [x for x in union_operands(seq) if everywhere(x, self.tested)]
        located = frozenset(key for a, _ in kept for key in live_keys(a))
        lattices, rewrites = len(self.lattices), len(self.rewrites)
        self.enclosing.append((f.index, f.seq, seq, tuple(a for a, _ in kept)))
        outside, self.tested = self.tested, self.tested | {x.key for x in levels if x not in dense}
        try:
            there = self.stmt(f.body, defs | live_keys(seq) | located, known_temps)
        finally:
            self.enclosing.pop()
            self.tested = outside

        def gone():
            # (what each part computes where its operand is not, its tensor's fill: compiled where a part asks)
            self.enclosing.append((f.index, f.seq, seq, tuple(a for a, _ in kept)))
            try:
                return self.stmt(f.body, defs | frozenset(x.key for x in dense) | located, known_temps)
            finally:
                self.enclosing.pop()
        def alone(part, absent):
            # (a part reading several of them, compiled where only some are there)
            return self.stmt(part, (defs | live_keys(seq) | located) - {x.key for x in levels if x.tensor in absent},
                             known_temps)
        ops = union_operands(seq)
        term_of = {leaf.tensor: op for op in ops for leaf in operand_leaves(op) if leaf not in dense}
        body = tested_parts(there, cache(gone), f.index, {x.tensor: x for x in levels if x not in dense},
                            dense[0] if dense else None, alone, term_of)
        if body is None:
            del self.lattices[lattices:], self.rewrites[rewrites:]
            return None
        n = sum(not isinstance(op, Universe) for op in ops)
        # (short: the explorer shows a rewrite on one line)
        why = Rewrite("merged-union", f"forall {f.index} ∈ {seq}", f"one loop until all ran out: each part reads one of "
                      f"the {n} operands (not the lattice's {2 ** n - 1} points)")
        self.lattices.insert(lattices, (f.index, SeqLattice(seq, [SeqPoint(seq, (), (0,))], [why],
                                                            tuple(sorted(map(str, seen))))))
        self.rewrites.append(why)
        return While(f.index, seq, tuple((a, seq) for a, _ in kept), body, (seq,) + tuple(a for a, _ in kept), rewind,
                     merged=True)

    def merged_split(self, f: Forall, seq: Project, kept, defs, seen, known_temps, rewind) -> While | None:
        """The loop of ``f`` over ``seq``, a π0 or π1 of a union that merges, or of π1s of one
        (:func:`~.seqmerge.merged_split`: the reshape of an hstack of three or more parts into two axes or more), as
        one merged loop: over a π0, at the group of the least coordinate of the operands left, until all ran out,
        its body reading them only in merged loops over that group (which walk each to the group's end); over a
        π1, at the least coordinate in the group of those left, each part tested on its operand there (None: not
        so). Nested lattices would have ``2^n - 1`` points, each with a lattice of ``2^n - 1`` loops inside."""
        union = merged_split(seq)
        levels = mergeable(union)
        ops = union_operands(union)
        if kept:
            return None
        lattices, rewrites = len(self.lattices), len(self.rewrites)
        here = defs | live_keys(seq)
        self.enclosing.append((f.index, f.seq, seq, ()))
        try:
            there = self.stmt(f.body, here, known_temps)
            if seq.k == 0:
                body = there if read_in_group_loops(there, frozenset(x.tensor for x in levels), seq.group_key) \
                    else None
            else:
                def alone(part, absent):
                    # (a part reading several of them, compiled where only some are in the group)
                    return self.stmt(part, here - {x.key for x in levels if x.tensor in absent}, known_temps)
                body = tested_parts(there, lambda: self.stmt(f.body, defs, known_temps), f.index,
                                    {x.tensor: x for x in levels}, None, alone,
                                    {leaf.tensor: op for op in ops for leaf in operand_leaves(op)})
                body = None if body is None else in_group_cases(body, f.index, seq)
        finally:
            self.enclosing.pop()
        if body is None:
            del self.lattices[lattices:], self.rewrites[rewrites:]
            return None
        n = len(ops)
        why = Rewrite("merged-split", f"forall {f.index} ∈ {seq}", f"one loop until all ran out: "
                      f"{'its groups' if seq.k == 0 else 'each part reads one'} of the {n} operands (not the "
                      f"lattice's {2 ** n - 1} points)")
        self.lattices.insert(lattices, (f.index, SeqLattice(seq, [SeqPoint(seq, (), (0,))], [why],
                                                            tuple(sorted(map(str, seen))))))
        self.rewrites.append(why)
        return While(f.index, seq, (), body, (seq,), rewind, merged=True)


def _other_part_reads(s: Stmt, defs) -> frozenset:
    """The tensors ``s`` reads only in the sides of concatenations whose leaves the loops (``defs``) are
    not at (:func:`~compiler.lattice.seqcfirvalues.specialize_value` drops those sides)."""
    live, read, other = frozenset(map(side_key, defs)), set(), set()

    def value(e, into: set):
        if isinstance(e, Cat) and bool(e.left & live) != bool(e.right & live):
            here = bool(e.left & live)
            value(e.a if here else e.b, into)
            value(e.b if here else e.a, other)
            return
        into.update([e.tensor] if isinstance(e, Read) else ())
        for x in value_children(e):
            value(x, into)

    def stmt(x):
        if isinstance(x, (Assign, Reduce)):
            value(x.value, read)
        for y in x.children():
            stmt(y)

    stmt(s)
    return frozenset(other - read)


def _bound_once(s: Stmt) -> Stmt:
    """``s`` with each switch whose every case binds one product coordinate (:class:`Bind`) binding
    it once, before the switch."""
    if isinstance(s, Block):
        return Block(tuple(_bound_once(x) for x in s.stmts))
    if isinstance(s, (While, Bind)):
        return replace(s, body=_bound_once(s.body))
    if isinstance(s, Switch):
        cases = tuple((q, _bound_once(b)) for q, b in s.cases)
        heads = {replace(b, body=Skip()) if isinstance(b, Bind) else None for _, b in cases}
        if len(heads) == 1 and None not in heads:
            return replace(heads.pop(), body=Switch(s.index, tuple((q, b.body) for q, b in cases)))
        return replace(s, cases=cases)
    return s


def _splits_concats(seq: Seq) -> bool:
    """Whether each split (``π0``) in ``seq`` as derived splits a concatenation itself, as a stack's
    ravels concatenated, or a product over one, a vstack raveled (``(i_A ⊔ m_B) × j``, distributed
    over its parts, each π1 following its π0 there)."""
    def splits(a: Seq) -> bool:
        return isinstance(a, Concat) or isinstance(a, Product) and isinstance(a.a, Concat) and splits(a.a)
    return all(not isinstance(n, Project) or n.k != 0 or splits(n.a)
               or not any(isinstance(x, Concat) for x in walk(n.a)) for n in walk(seq))


def _holds_temporary(s: Stmt) -> bool:
    """Whether ``s`` allocates a scalar temporary (a reduction's, reset at each visit)."""
    if isinstance(s, Alloc):
        return True
    if isinstance(s, Block):
        return any(_holds_temporary(x) for x in s.stmts)
    return isinstance(s, Forall) and _holds_temporary(s.body)


@serialize.node
@dataclass
class SeqCFIR:
    """The CFIR of a forall over sequences, with the lattices it was built from."""

    program: Stmt
    cfir: Stmt
    lattices: list
    rewrites: list = field(default_factory=list)
    #: what the lowering assumed each tensor it reads may hold (:class:`compiler.values.Facts`, by the name its
    #: entries are read under), which its intersections rely on; empty where none was recorded (built by hand)
    assumed: dict = field(default_factory=dict)

    def text(self) -> str:
        return str(self.cfir)

    def pretty(self) -> str:
        return self.text()

    def dot(self) -> str:
        """The CFIR as a tree (:meth:`tree`)."""
        return self.tree().source()

    def tree(self) -> TreeDot:
        """The CFIR as a tree laid out as code indents (:mod:`compiler.treedot`): loops, binds and
        switches in rounded boxes, each run of statements in one square box. A loop's box and
        what it runs carry its code's tag (:func:`while_tag`, innermost first), as the emitter
        tags the C, so the explorer links a box and its C lines.

        >>> from compiler.lattice.sequences import Level
        >>> a = Level("a", 0, "compressed", 4)
        >>> SeqCFIR(None, While("i", a, (), Assign("c", ("i",), Read("a", (a,)))), []).tree().node_tags
        {'n0': ['lattice:i:i_a'], 'n1': ['lattice:i:i_a']}
        """
        t = TreeDot("seqcfir")
        roots = _draw(t, self.cfir, None, "", ())
        if len(roots) > 1:   # (the loops of a forall top to bottom in their order: they have no parent)
            t.lines.append(f"  {{ rank=same; {' -> '.join(roots)} [style=invis]; }}")
        return t


def _draw(t: TreeDot, s: Stmt, parent: str | None, edge: str, tags: tuple) -> list[str]:
    """``s`` drawn under ``parent`` (its first box's edge labelled ``edge``), tagged ``tags``;
    returns the boxes drawn right under ``parent``, in order."""
    run: list[str] = []
    made: list[str] = []

    def flush():
        nonlocal edge
        if run:
            made.append(t.statements(list(run), parent, edge, tags))
            run.clear()
            edge = ""

    for x in (s.stmts if isinstance(s, Block) else (s,)):
        if isinstance(x, (While, Bind, Switch)):
            flush()
            inner = (while_tag(x),) + tags if isinstance(x, While) else tags
            # (a loop's locators and its "until all ran out" on lines of their own: one line cut at 40 characters
            # hid them)
            me = t.control(while_clauses(x) if isinstance(x, While) else printed_lines(x, 0)[0], parent, edge, inner)
            made.append(me)
            edge = ""
            for label, body in (x.cases if isinstance(x, Switch) else (("", x.body),)):
                _draw(t, body, me, f"case {label}" if isinstance(x, Switch) else "", inner)
        elif isinstance(x, Block):
            flush()
            made += _draw(t, x, parent, edge, tags)
            edge = ""
        else:
            run.extend(printed_lines(x, 0))
    flush()
    return made


def build_cfir(program: Stmt, defs=(), fill=0.0) -> SeqCFIR:
    """The CFIR of ``program`` (Fig. 15); ``defs``: iterator keys bound outside it; ``fill``: the
    result's, which a sub-point computing it does not write."""
    c = Compiler(fill=fill, names=index_names(program))
    cfir = c.stmt(program, frozenset(defs))
    return SeqCFIR(program, cfir, c.lattices, c.rewrites)


def sequence_trace(program: Stmt, defs=(), trace: Trace | None = None, fill=0.0,
                   built: SeqCFIR | None = None) -> tuple[SeqCFIR, Trace]:
    """Lower ``program`` (or take ``built``, its :func:`build_cfir`) and record it as the strategy
    records its stages: one ``lattice`` step per forall (a ``seq-lattice`` artifact, text and DOT,
    with its rewrites), then ``cfir``.

    >>> from compiler.lattice.sequences import Level, Concat
    >>> a = Level("a", 0, "compressed", 3); b = Level("b", 0, "compressed", 2, "j")
    >>> cf, t = sequence_trace(Forall("k", Concat(a, b), Assign("c", ("k",), Cat(Read("a", (a,)), Read("b", (b,))))))
    >>> t.stages(), [x.kind for x in t[0].artifacts], t[0].rewrites[1].rule
    (['lattice', 'cfir'], ['seq-lattice'], 'concat-left-done')
    """
    t = trace if trace is not None else Trace()
    cf = built if built is not None else build_cfir(program, defs, fill)
    # (the artifacts and the lattices' data are made when first read: most traces are never looked
    # at, and drawing every lattice and CFIR was about a tenth of a shape operator's lowering)
    for index, L in cf.lattices:
        t.record("lattice", before=f"forall {index} ∈ {L.seq}", after=L,
                 artifacts=[Artifact.deferred("seq-lattice", f"forall {index} ∈ {L.seq}",
                                              lambda L=L, index=index: _lattice_artifact(L, index))],
                 rewrites=L.rewrites, note=f"forall {index}: {len(L.points)} point(s)",
                 data=Later(lambda L=L, index=index: _lattice_data(L, index)))
    t.record("cfir", before=program, after=cf.cfir,
             artifacts=[Artifact.deferred("seq-cfir", "cfir", lambda: _cfir_artifact(cf))],
             rewrites=cf.rewrites,
             data={"loops": loop_count(cf.cfir)})
    # (the caller may have a kernel in its place, before this CFIR's C is emitted: compiler.lowering_budget)
    ask(c_lines_at_least(cf.cfir))
    return cf, t


def _cfir_artifact(cf: SeqCFIR) -> tuple[str, str, dict]:
    """The text, drawing and data of the trace's artifact of the CFIR ``cf``."""
    tree = cf.tree()
    return cf.text(), tree.source(), {"line_spans": loop_spans(cf.cfir), "node_tags": tree.node_tags}


def _lattice_artifact(L, index) -> tuple[str, str, dict]:
    """The text, drawing and data of the trace's artifact of ``L``, the lattice of the loop over ``index``."""
    return L.text(), L.dot(), {"index": str(index), "line_spans": L.point_spans(index), "node_tags": L.node_tags(index)}


def _lattice_data(L, index) -> dict:
    """The data of the trace's step of ``L``, the lattice of the loop over ``index``, as the lattice strategy
    records its lattices (the lattice is the step's program): each point's sequence, edges and sub-points,
    where the forall's head, the lattice's heading and its points are printed, and their tags."""
    points = [{"seq": str(p.seq), "subs": list(p.subs), "writes_fill": p.writes_fill,
               "edges": [{"removed": str(e.removed), "to": e.target, "result": str(e.result),
                          "sub_point": e.sub_point} for e in p.edges]} for p in L.points]
    head = f"forall {index}"
    return {"index": str(index), "sequence": str(L.seq), "points": points,
            "before_spans": {"1": [[0, len(head), {"index": str(index)}, "loop"]]},
            "after_spans": L.printed_parts(index)[1]}


__all__ = ["Read", "Lit", "Temp", "Add", "Mul", "Op", "Cat", "fold", "Assign", "Reduce", "Alloc", "Fold",
           "Block", "Skip", "Forall", "While", "Bind", "Switch", "SeqCFIR", "loop_spans", "while_tag", "build_cfir",
           "remove_locators", "specialize_value", "Compiler", "locatable", "at_coordinate",
           "sequence_trace", "written"]
