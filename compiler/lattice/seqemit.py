"""C for the sequence CFIR (shape-operators.md §8; the paper's Figs. 18-23): the iterator model
of :mod:`compiler.lattice.seqiter`, emitted to the imperative IR instead of run in Python.

Every operation of the reference iterators (init, valid, eval, equals, next, the conditional
next after a switch, locate, a π0's drain, a slice's stride alignment, a product's restart of
its inner operand) becomes IR here, node for node, so the C does what the CFIR interpreter
(:func:`compiler.lattice.seqinterp.interpret`) does. Each physical leaf has one cursor, declared
where its series of loops starts (a nested series re-initializes it on each entry):

* a Dense level: its coordinate ``pA0`` below an end (its extent; 0 under a parent not there);
  a strided slice of it adds its step (a CSR's row slice goes straight to the kept rows);
* a SparseList level: its position ``pA1`` in ``[A1_pos[P], A1_pos[P + 1])``, ``P`` the
  parent's position, the coordinate ``A1_idx[pA1]``; locate gallops forward;
* a SparseCOO level: a non-last mode walks segments of equal coordinates (``pA0`` to
  ``pA0_seg``), its next mode iterates that segment, the last mode one entry at a time;
* a universe ``U_l``: a counter below the extent;
* a level walked backwards (``rev(i_A)``, a slice with a negative step): a SparseList cursor
  moves down to ``pA1_lo``, one below its fiber, and locates by galloping down; a COO mode walks
  its segments from the last; a Dense level counts up and stands at stored coordinate ``n - 1 - p``.
  Their sequence coordinate is ``n - 1`` minus the stored one, so the loops still see it increase;
* any other level (a band, a block list, a run list, an interval, a byte map, a hash's sorted view):
  as its iterator walks it (:mod:`compiler.lattice.seqwalk`, where every leaf's cursor is laid
  out, started, stepped and located by asking its level's iterator), backwards too (a block list's
  or run list's block or run kept beside the cursor moved down with it).

A π0 and the π1 inside it share their operand's cursor; π0 keeps its group in ``grp``.

>>> from compiler.format import parse_format
>>> from compiler.lattice.seqderive import ShapedFormat, seq_lower
>>> from compiler.lattice.seqfunction import emit_function
>>> v = parse_format("sparse", ndim=1)
>>> low = seq_lower("c[k] = concat((a[i], b[j]), (i, j) -> k)", a=ShapedFormat(v, (3,)), b=ShapedFormat(v, (2,)))
>>> print(low.cfir.text())
while k <- i_a ⊔ j_b
  c(k) = a(i_a)
while k <- |i_a| + j_b
  c(k) = b(j_b)
>>> print(emit_function(low, {"a": v, "b": v}, "cat").body)
int64 pa0;
int64 pa0_end;
int64 pb0;
int64 pb0_end;
pa0 = a0_pos[0];
pa0_end = a0_pos[1];
pb0 = b0_pos[0];
pb0_end = b0_pos[1];
while (pa0 < pa0_end) {
    int64 k = a0_idx[pa0];
    c_val[k] = a_val[pa0];
    pa0 += 1;
}
while (pb0 < pb0_end) {
    int64 k = 3 + b0_idx[pb0];
    c_val[k] = b_val[pb0];
    pb0 += 1;
}
"""

from __future__ import annotations


import numpy as np

from ..binding import array_name
from ..errors import StrategyError
from ..algebra import lookup
from ..imperative import ir
from ..imperative.cints import operands, wrap
from ..imperative.identities import arith
from ..imperative.ir import BinOp, Cast, Const, Declare, If, Load, Var, and_, not_, or_
from ..names import FreshNames
from ..opimpls import real_part_dtype
from . import seqcfir as cf
from .exprs import apply_op, fold_power
from ..notation.node_provenance import computing
from .seqlattice import edges
from .seqassembly import SeqAssembly
from .seqiter import shifts_branches, walked_inside
from .seqoutput import SeqOutput
from .seqstmts import cin_parts
from .seqwhiles import inner_sequences
from .seqmerge import everywhere, merged_split, operand_at, operand_leaves, row_walk, union_operands
from .seqsplitmerge import split_loop
from .seqlocated import RowLocates
from .seqwalk import LeafCode, LeafWalks
from .seqrewind import (cursor_vars, declare_starts, loop_repeats, product_rewinds, restarted, rewind_stmts, save_stmts,
                        walked_again)
from .seqstride import seek, stride_next, stride_start, unstride
from .sequences import (EMPTIES, Concat, Intersect, Level, Offset, Pad, Product, Project, Seq, Slice, Stride,
                        Union, Universe, walk)

I64 = "int64"


def _c(n: int) -> Const:
    return Const(int(n), I64)


class SeqEmitter(LeafWalks, RowLocates):
    """Emits the CFIR of one :class:`~compiler.lattice.seqderive.SeqLowering` to the imperative IR."""

    def __init__(self, formats: dict, names: dict, dtype: str, taken=()):
        self.formats = formats        # real tensor name -> Format
        self.names = names            # sequence tensor name (A, A') -> real tensor name
        self.dtype = dtype
        self.fresh = FreshNames(set(taken))
        self.out: SeqOutput | SeqAssembly | None = None
        self.known: frozenset = frozenset()   # leaf keys known valid here (the enclosing loops')
        #: leaf key -> where it is not at its merged loop's coordinate (its children's fibers are empty there)
        self.maybe_absent: dict = {}
        #: the universes and dense levels merged loops around walk (at the coordinate wherever the loop is)
        self.stepped: frozenset = frozenset()
        self.leaves: dict = {}        # leaf key -> LeafCode (the cursors declared in scope)
        self.its: dict = {}           # real tensor name -> its levels' iterators, per storage mode
        self.groups: dict = {}        # π0 group key -> Var
        self.rewinding: frozenset = frozenset()   # the group keys a minor walk restarts (seqrewind)
        self.starts: dict = {}        # such a group key -> leaf key -> [(cursor variable, its start)]
        self.closed: frozenset = frozenset()      # the group keys of π0s past their last group (no start)
        self.temps: dict = {}         # CFIR temporary -> C name
        self.temp_dtypes: dict = {}   # CFIR temporary -> the dtype it reduces in (its Alloc's, else the output's)
        self.summed: dict = {}        # CFIR temporary -> the tensors its sum's summand reads
        self.helpers: dict = {}       # C helper name -> (source, operator): user functions, integer pow
        self.workspaces: dict = {}    # a sum's workspace -> its code (compiler.lattice.seqworkspace)
        self.located: dict = {}       # an entry's 0-d stand-in -> the variable it was located into (seqlocated)
        self.row_located: dict = {}   # a 1-d stand-in, A_i_1[i] -> (LocatedRead, its tensor's format)
        self.row_walks: dict = {}     # a tensor whose rows its columns walk -> those walks' Levels (seqlocated)
        self.hoisted: list = []       # per loop emitting its body, the stand-ins it located once a coordinate

    # -- cursors ----------------------------------------------------------------------------------

    def declare(self, seqs) -> list:
        """Declare the cursors of the leaves of ``seqs`` not in scope yet (and π0 groups)."""
        out = []
        for s in seqs:
            for node in walk(s):
                if isinstance(node, Universe) and node.key not in self.leaves:
                    p = Var(self.fresh("u_" + node.index))
                    self.leaves[node.key] = LeafCode("universe", p, _c(node.extent))
                    out.append(Declare(p, I64))
                elif isinstance(node, Level) and node.key not in self.leaves:
                    code = self.layout(node)
                    self.leaves[node.key] = code
                    # (set by the series' init, on every path)
                    out += [Declare(v, I64) for v in cursor_vars(code)]
                elif isinstance(node, Project) and node.k == 0 and node.group_key not in self.groups:
                    g = Var(self.fresh("grp"))
                    self.groups[node.group_key] = g
                    out.append(Declare(g, I64, _c(-1)))
        for s in seqs:
            out += [x for n in walk(s) if isinstance(n, Project) and n.k == 0 and n.group_key in self.rewinding
                    for x in declare_starts(self, n)]
        return out

    def group(self, s: Project) -> Var:
        """The variable holding the group of ``s``'s π0, opened by a loop around (else refused: a
        case of a loop at another π0, ``π0(a, J)`` inside the loop over ``π0(a ∪ b, J)``)."""
        try:
            return self.groups[s.group_key]
        except KeyError:
            raise StrategyError(f"{s} is read where no loop is at the group of π0({s.a}, {s.J})") from None

    # -- the iterator model (seqiter's functions, as code) ------------------------------------------

    def valid(self, s: Seq) -> ir.Expr:
        if isinstance(s, (Level, Universe)):
            return self.leaf_valid(s.key)
        if isinstance(s, EMPTIES):
            return Const(False, "bool")
        if isinstance(s, (Union, Intersect, Product)):
            return and_(self.valid(s.a), self.valid(s.b))
        if isinstance(s, Project):
            if s.k == 0:
                return self.valid(s.a)
            return and_(self.valid(s.a), self.in_group(self.eval(s.a), self.group(s), s.J))
        if isinstance(s, Slice):
            return and_(self.valid(s.a), BinOp("<", self.eval(s.a), _c(s.stop)))
        if isinstance(s, (Stride, Offset, Pad, Concat)):
            return self.valid(s.a)
        raise TypeError(f"not a sequence expression: {s!r}")

    def eval(self, s: Seq) -> ir.Expr:
        if isinstance(s, (Level, Universe)):
            return self.coord(s)
        if isinstance(s, (Union, Intersect)):
            a, b = self.eval(s.a), self.eval(s.b)
            return ir.Select(BinOp("<", a, b), a, b)
        if isinstance(s, Product):
            return arith("+", arith("*", self.eval(s.a), _c(s.b.size())), self.eval(s.b))
        if isinstance(s, Project):
            if s.k == 1:   # (read in its group, whose first coordinate is grp * J: no modulo per entry)
                return arith("-", self.eval(s.a), arith("*", self.group(s), _c(s.J)))
            return arith("/", self.eval(s.a), _c(s.J))
        if isinstance(s, Slice):
            d = arith("-", self.eval(s.a), _c(s.start)) if s.start else self.eval(s.a)
            return d if s.step == 1 else arith("/", d, _c(s.step))
        if isinstance(s, Stride):
            return arith("/", self.eval(s.a), _c(s.J))
        if isinstance(s, Offset):
            return arith("+", _c(s.n), self.eval(s.a))
        if isinstance(s, (Pad, Concat)):
            return self.eval(s.a)
        raise StrategyError(f"{s} has no current coordinate")

    def equals(self, s: Seq, x) -> ir.Expr:
        if isinstance(s, EMPTIES):
            return Const(False, "bool")
        if isinstance(s, (Union, Intersect)):
            return and_(self.equals(s.a, x), self.equals(s.b, x))
        if isinstance(s, Product) and row_walk(s):
            # (one tensor's row walk: its coordinate compared whole, a multiply and an add, not x split by a divide)
            return and_(self.valid(s), self.eval(s).eq(x))
        if isinstance(s, Product):
            n = _c(s.b.size())
            return and_(self.equals(s.a, arith("/", x, n)), self.equals(s.b, arith("%", x, n)))
        if isinstance(s, Slice):
            return self.equals(s.a, arith("+", arith("*", x, _c(s.step)), _c(s.start)))
        if isinstance(s, Stride):
            return self.equals(s.a, unstride(self, s, x))
        if isinstance(s, Offset):
            return and_(BinOp(">=", x, _c(s.n)), self.equals(s.a, arith("-", x, _c(s.n))))
        if isinstance(s, Pad):
            return self.equals(s.a, x)
        if isinstance(s, Concat):
            return and_(BinOp("<", x, _c(s.a.size())), self.equals(s.a, x))
        if isinstance(s, Project) and s.k == 1 and any(
                isinstance(n, Union) or isinstance(n, Intersect) and s.group is not None for n in walk(s.a)):
            # (each operand of the union at x of the group: the union evaluates to their minimum; so
            # does an intersection left of one, π1(k_a ∩ k_c @ (k_a ∪ k_b) ∩ k_c), a case of the loop
            # over the group where its operands need not be at one coordinate)
            return self.equals(s.a, arith("+", arith("*", self.group(s), _c(s.J)), x))
        return and_(self.valid(s), self.eval(s).eq(x))

    @staticmethod
    def in_group(x, group, J: int) -> ir.Expr:
        """Whether the coordinate ``x`` of a projection's operand is in ``group`` (``x / J == group``),
        where ``x`` is at least the group's first coordinate ``group * J``: the operand's coordinates
        increase from the entry that gave the group. So a compare against the group's end replaces a
        divide per entry (the split of a compressed vector tests it on each entry).

        >>> from compiler.imperative import pretty
        >>> print(pretty(SeqEmitter.in_group(Var("x"), Var("grp"), 200)))
        x < grp * 200 + 200
        """
        return BinOp("<", x, arith("+", arith("*", group, _c(J)), _c(J)))

    def bound(self, value, base: str = "x") -> tuple[list, Var]:
        """``value`` held in a fresh local (it is read after the cursors it comes from move), unless it is a
        constant or a variable no cursor moves. A cursor itself is held too: π0(m_A, 1) of a dense ``A`` is its
        position ``pA0``, and the group its drain ends must not move on with it."""
        if isinstance(value, Const) or isinstance(value, Var) and not any(
                value in cursor_vars(code) for code in self.leaves.values()):
            return [], value
        v = Var(self.fresh(base))
        return [Declare(v, I64, value)], v

    def init(self, s: Seq, absent: dict) -> list:
        if isinstance(s, (Level, Universe)):
            return self.start(s, absent)
        if isinstance(s, (Union, Intersect, Concat)):
            out = self.init(s.a, absent) + self.init(s.b, absent)
            return out + (self.meet(s, absent) if isinstance(s, Intersect) else [])
        if isinstance(s, Product):
            return self.init(s.a, absent) + self.restart(s, absent) + self.skip_empty(s, absent)
        if isinstance(s, Project):
            return self.init(s.a, absent) if s.k == 0 else []
        if isinstance(s, Slice):
            if self.jumps(s):
                # (a fresh counter is at 0: the first kept coordinate is the start itself)
                return self.init(s.a, absent) + ([ir.Assign(self.code(s.a).p, _c(s.start))] if s.start else [])
            return self.init(s.a, absent) + self.align(s.a, s, absent, seek=True)
        if isinstance(s, Stride):
            return self.init(s.a, absent) + stride_start(self, s, absent)
        if isinstance(s, (Offset, Pad)):
            return self.init(s.a, absent)
        return []

    def jumps(self, s: Slice | Stride) -> bool:
        """Whether the slice ``s`` steps its operand straight to the next kept coordinate: a Dense
        level or a universe, whose cursor is its coordinate (a row slice of a CSR locates row
        ``start + step·k``, where a SparseList's cursor would step over the stored coordinates
        between). Its cursor is then always at a kept coordinate: init places it at the start, next
        adds the step, and every other move of it ends in an alignment."""
        return isinstance(s.a, (Level, Universe)) and self.code(s.a).kind in ("dense", "universe")

    def restart(self, s: Product, absent: dict) -> list:
        """The inner operand (re)started under the outer one's coordinate (``seqiter._restart``)."""
        inner = dict(absent)
        if not _always_at(s.a):
            needed = {(leaf.tensor, m) for leaf in s.b.iters() if isinstance(leaf, Level) for m in range(leaf.mode)}
            pre, x = self.bound(self.eval(s.a))
            at = self.at(s.a, x)
            for leaf in s.a.iters():
                if leaf.key in needed:
                    gone = not_(at[leaf.key]) if leaf.key in at else Const(True, "bool")
                    inner[leaf.key] = or_(absent[leaf.key], gone) if leaf.key in absent else gone
        else:
            pre = []
        enter = self.enter(s.a)
        groups = [ir.Assign(self.group(n), _c(-1)) for n in walk(s.a) if isinstance(n, Project) and n.k == 0]
        # (a π1 of a group a loop around opened walks it again from its start: seqrewind)
        again = [x for p in product_rewinds(s) if p.group_key not in self.closed for x in rewind_stmts(self, p)]
        if not (pre or enter or groups or again):
            # (the inner operand starts the same whether the outer one is valid: its start tests its parent)
            return self.init(s.b, absent)
        # (where the outer operand ran out, a product inside restarts no π1 of its groups: no start was saved
        # for a group never entered, π0(l_A, 3) × (U_k × π1(l_A, 3)) of an empty A)
        outside, self.closed = self.closed, self.closed | {n.group_key for n in walk(s.a)
                                                           if isinstance(n, Project) and n.k == 0}
        try:
            past = groups + self.init(s.b, absent)
        finally:
            self.closed = outside
        return [If(self.valid(s.a), pre + enter + again + self.init(s.b, inner), past)]

    def at(self, s: Seq, x) -> dict:
        """Per leaf key of ``s``, whether that leaf is at ``s``'s coordinate ``x`` (``at_leaves``)."""
        if isinstance(s, (Level, Universe)):
            return {s.key: self.equals(s, x)}
        if isinstance(s, Union):
            a, b = self.at(s.a, x), self.at(s.b, x)
            return {k: or_(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k)) for k in {**a, **b}}
        if isinstance(s, (Intersect, Product)):
            n = _c(s.b.size()) if isinstance(s, Product) else None
            a = self.at(s.a, arith("/", x, n) if n is not None else x)
            b = self.at(s.b, arith("%", x, n) if n is not None else x)
            if not a or not b:
                return {}
            any_a, any_b = or_(*a.values()), or_(*b.values())
            return {**{k: and_(v, any_b) for k, v in a.items()}, **{k: and_(v, any_a) for k, v in b.items()}}
        if isinstance(s, Project):
            if s.k == 0:
                eq = self.equals(s, x)
                return {leaf.key: eq for leaf in s.a.iters()}
            return self.at(s.a, arith("+", arith("*", self.group(s), _c(s.J)), x))
        if isinstance(s, Slice):
            return self.at(s.a, arith("+", arith("*", x, _c(s.step)), _c(s.start)))
        if isinstance(s, Stride):
            return self.at(s.a, unstride(self, s, x))
        if isinstance(s, Offset):
            return {k: and_(BinOp(">=", x, _c(s.n)), v) for k, v in self.at(s.a, arith("-", x, _c(s.n))).items()}
        if isinstance(s, (Pad, Concat)):
            return {k: and_(BinOp("<", x, _c(s.a.size())), v) for k, v in self.at(s.a, x).items()}
        return {}

    def skip_empty(self, s: Product, absent: dict) -> list:
        return [ir.While(and_(self.valid(s.a), not_(self.valid(s.b))),
                         self.next(s.a, absent) + self.restart(s, absent))]

    def meet(self, s: Intersect, absent: dict) -> list:
        a, b = self.eval(s.a), self.eval(s.b)

        def behind(side, x):
            # (an operand that is no union or intersection is at its own coordinate: it just steps)
            return self.advance(side, x, absent) if isinstance(side, (Union, Intersect)) else self.next(side, absent)
        return [ir.While(and_(self.valid(s.a), self.valid(s.b), a.ne(b)),
                         [If(BinOp("<", a, b), behind(s.a, a), behind(s.b, b))])]

    def drain(self, s: Seq, in_group, absent: dict) -> list:
        if isinstance(s, (Union, Intersect)):
            out = self.drain(s.a, in_group, absent) + self.drain(s.b, in_group, absent)
            return out + (self.meet(s, absent) if isinstance(s, Intersect) else [])
        if isinstance(s, Project) and s.k == 0:
            return self.drain(s.a, lambda e: in_group(arith("/", e, _c(s.J))), absent)
        if isinstance(s, Offset):
            return self.drain(s.a, lambda e: in_group(arith("+", e, _c(s.n))), absent)
        if isinstance(s, (Pad, Concat)):
            return self.drain(s.a, in_group, absent)
        if isinstance(s, Slice):
            def keep(e):
                d = arith("-", e, _c(s.start)) if s.start else e
                return and_(BinOp("<", e, _c(s.stop)), in_group(d if s.step == 1 else arith("/", d, _c(s.step))))
            return self.drain(s.a, keep, absent) + self.align(s.a, s, absent)
        if isinstance(s, Stride):
            return self.drain(s.a, lambda e: in_group(arith("/", e, _c(s.J))), absent) + seek(self, s.a, s, absent)
        return [ir.While(and_(self.valid(s), in_group(self.eval(s))), self.next(s, absent))]

    def align(self, a: Seq, s: Slice, absent: dict, seek: bool = False) -> list:
        """Move ``a`` to a coordinate the slice ``s`` keeps (or past its stop)."""
        if isinstance(a, Union):
            return self.align(a.a, s, absent, seek) + self.align(a.b, s, absent, seek)
        out = []
        x = self.eval(a)
        if seek and isinstance(a, (Level, Universe)) and s.start:
            # (a walked level's seek needs no guard but this one's)
            found = self.leaf_seek(a, _c(s.start)) if self.code(a).kind == "walk" else None
            out.append(If(and_(self.valid(a), BinOp("<", x, _c(s.start))),
                          self.leaf_locate(a, _c(s.start)) if found is None else found))
        off = [BinOp("<", x, _c(s.start))] if s.start else []
        if s.step != 1:
            off.append(arith("%", arith("-", x, _c(s.start)) if s.start else x, _c(s.step)).ne(_c(0)))
        if off:
            out.append(ir.While(and_(self.valid(a), BinOp("<", x, _c(s.stop)), or_(*off)), self.to_kept(a, s, absent)))
        return out

    def to_kept(self, a: Seq, s: Slice, absent: dict) -> list:
        """From a coordinate of ``a`` the slice ``s`` does not keep, on to the next: a level that
        stores contiguous coordinates (a band, a block list, a run list, an interval) seeks the
        next kept one where its iterator can, stepping would visit each coordinate between; any
        other operand steps (a list's next entry is as likely kept as any)."""
        x = self.eval(a) if isinstance(a, Level) and self.code(a).kind == "walk" else None
        if x is None or self.leaf_seek(a, x) is None:
            return self.next(a, absent)
        if s.step == 1:
            return self.leaf_seek(a, _c(s.start))
        # (the start, or the next multiple of the step past it)
        skipped, target = Var(self.fresh("skipped")), Var(self.fresh("kept"))
        past = arith("-", skipped, _c(s.start)) if s.start else skipped
        kept = arith("+", skipped, arith("-", _c(s.step), arith("%", past, _c(s.step))))
        at = ir.Select(BinOp("<", skipped, _c(s.start)), _c(s.start), kept) if s.start else kept
        return [Declare(skipped, "int64", x), Declare(target, "int64", at)] + self.leaf_seek(a, target)

    def resume(self, s: Seq, absent: dict) -> list:
        out = []
        for node in reversed(list(walk(s))):
            if isinstance(node, Product):
                out.append(If(and_(self.valid(node.a), not_(self.valid(node.b))),
                              self.restart(node, absent) + self.skip_empty(node, absent)))
            elif isinstance(node, Slice):
                out += self.align(node.a, node, absent)
            elif isinstance(node, Stride) and not self.jumps(node):
                out += seek(self, node.a, node, absent)
            elif isinstance(node, Intersect):
                out += self.meet(node, absent)
        return out

    def enter(self, s: Seq) -> list:
        """Record the group of each π0 of ``s`` (for the π1 loops inside), and where it starts (but
        where a product's restart keeps that: :func:`~compiler.lattice.seqrewind.restarted`)."""
        moved = restarted(s)
        return [If(self.valid(n), [ir.Assign(self.group(n), self.eval(n))]
                   + ([] if n.group_key in moved else save_stmts(self, n)))
                for n in walk(s) if isinstance(n, Project) and n.k == 0]

    def next(self, s: Seq, absent: dict) -> list:
        if isinstance(s, (Level, Universe)):
            return self.leaf_next(s)
        if isinstance(s, (Union, Intersect)):
            pre, x = self.bound(self.eval(s))
            return pre + self.advance(s, x, absent)
        if isinstance(s, Product):
            # (the left operand repeats the group the right one walks: back to its start where the right one runs
            # out, so the left operand is where it was; else a cursor they share may have moved it on)
            back = walked_again(s)
            shared = s.a.iters() & s.b.iters() - {leaf for p in back for leaf in p.a.iters()}
            pre, x = self.bound(self.eval(s.a), "outer") if shared else ([], None)
            out = pre + self.next(s.b, absent)
            if back:
                out.append(If(not_(self.valid(s.b)), [y for p in back for y in rewind_stmts(self, p)]
                              + self.next(s.a, absent) + self.restart(s, absent)))
            if x is not None:
                # the inner operand shares the outer one's cursor (π0(X, J) × π1(X, J)) and moved it on
                out.append(If(and_(self.valid(s.a), not_(self.valid(s.b)), self.eval(s.a).ne(x)),
                              self.restart(s, absent)))
            return out + self.skip_empty(s, absent)
        if isinstance(s, Project):
            if s.k == 1:
                return self.next(s.a, absent)
            pre, g = self.bound(self.eval(s), "group")
            return pre + self.drain(s.a, lambda e: self.in_group(e, g, s.J), absent)
        if isinstance(s, Slice):
            if self.jumps(s):
                return [ir.CompoundAssign("+", self.code(s.a).p, _c(s.step))]
            return self.next(s.a, absent) + self.align(s.a, s, absent)
        if isinstance(s, Stride):
            return stride_next(self, s, absent)
        if isinstance(s, (Offset, Pad, Concat)):
            return self.next(s.a, absent)
        raise TypeError(f"cannot step {s!r}")

    def advance(self, s: Seq, x, absent: dict, moved: frozenset = frozenset()) -> list:
        """The conditional next: step only what is at ``x`` (``moved``: the leaves the loop's body walks)."""
        if isinstance(s, (Union, Intersect)):
            pre, x = self.bound(x)
            out = pre + self.advance(s.a, x, absent, moved) + self.advance(s.b, x, absent, moved)
            return out + (self.meet(s, absent) if isinstance(s, Intersect) else [])
        if shifts_branches(s, moved):
            # (each operand at x on its own: the body may have moved one away, seqiter.advance)
            if isinstance(s, Project):
                return self.advance(s.a, arith("+", arith("*", self.group(s), _c(s.J)), x), absent, moved)
            if isinstance(s, Slice):
                at = x if s.step == 1 else arith("*", x, _c(s.step))
                at = arith("+", at, _c(s.start)) if s.start else at
                return self.advance(s.a, at, absent, moved) + self.align(s.a, s, absent)
            return self.advance(s.a, arith("-", x, _c(s.n)) if isinstance(s, Offset) else x, absent, moved)
        return [If(and_(self.valid(s), self.eval(s).eq(x)), self.next(s, absent))]

    def locate(self, s: Seq, x, absent: dict) -> list:
        if isinstance(s, (Level, Universe)):
            return self.leaf_locate(s, x)
        if isinstance(s, (Union, Intersect)):
            return self.locate(s.a, x, absent) + self.locate(s.b, x, absent)
        if isinstance(s, Product):
            n = _c(s.b.size())
            return (self.locate(s.a, arith("/", x, n), absent) + self.restart(s, absent)
                    + self.locate(s.b, arith("%", x, n), absent))
        if isinstance(s, Project):
            if s.k == 0:
                g = self.group(s)
                return self.locate(s.a, arith("*", x, _c(s.J)), absent) + [ir.Assign(g, x)] + save_stmts(self, s)
            return self.locate(s.a, arith("+", arith("*", self.group(s), _c(s.J)), x), absent)
        if isinstance(s, Slice):
            return self.locate(s.a, arith("+", arith("*", x, _c(s.step)), _c(s.start)), absent)
        if isinstance(s, Stride):
            return self.locate(s.a, unstride(self, s, x), absent)
        if isinstance(s, Offset):
            return self.locate(s.a, arith("-", x, _c(s.n)), absent)
        if isinstance(s, Pad):
            return self.locate(s.a, x, absent)
        if isinstance(s, Concat):
            n = _c(s.a.size())
            return [If(BinOp("<", x, n), self.locate(s.a, x, absent), self.locate(s.b, arith("-", x, n), absent))]
        return []

    # -- statements -----------------------------------------------------------------------------

    def value(self, e) -> ir.Expr:
        return self.typed(e)[0]

    def typed(self, e) -> tuple:
        """``(IR expression, dtype)`` of the CFIR value ``e``; an operator's C is the lattice
        strategy's (:func:`~compiler.lattice.exprs.apply_op`), its helpers kept in ``helpers``."""
        if isinstance(e, cf.Read):
            real = self.names[e.tensor]
            dt = np.dtype(self.formats[real].dtype).name
            if real in self.located:
                return self.located[real], dt
            if not e.levels:
                return Load(array_name(real, None, "val"), _c(0)), dt
            last = e.levels[-1]
            return Load(array_name(real, None, "val"), self.position(last.tensor, last.mode)), dt
        if isinstance(e, cf.Lit):
            if isinstance(e.value, bool):
                return Const(e.value, "bool"), "bool"
            if isinstance(e.value, int):
                return Const(e.value, e.typed or "int64"), e.typed or "int64"
            if isinstance(e.value, complex):
                return Const(e.value, "complex128"), "complex128"
            return Const(float(e.value), "float64"), "float64"
        if isinstance(e, cf.Temp):
            return Var(self.temps[e.name]), self.temp_dtype(e.name)
        if isinstance(e, cf.Cat):
            (a, da), (b, db) = self.typed(e.a), self.typed(e.b)
            return arith("+", a, b), lookup("add").result_dtype(da, db).name
        if isinstance(e, (cf.Add, cf.Mul)):
            return self.arithmetic(e)
        if isinstance(e, cf.Op):
            args = [self.typed(x) for x in e.args]
            return apply_op(e.op, [a for a, _ in args], [d for _, d in args], self.helpers)
        raise TypeError(f"not a value: {e!r}")

    def temp_dtype(self, name: str) -> str:
        """The dtype the temporary ``name`` reduces in."""
        return self.temp_dtypes.get(name, self.dtype)

    def arithmetic(self, e) -> tuple:
        """``(IR, dtype)`` of the CFIR's ``a + b`` or ``a * b``: integers in numpy's dtype (an int32 times
        the literal 2 in int64, where C multiplies in 32 bits; int8 times int8 wrapping at 8 bits), other
        values as C converts them (an int32 times 2.0 in double)."""
        (a, da), (b, db) = self.typed(e.a), self.typed(e.b)
        symbol, name = ("+", "add") if isinstance(e, cf.Add) else ("*", "mul")
        want = lookup(name).result_dtype(da, db)
        if want.kind not in "iu":
            return BinOp(symbol, a, b), want.name
        a, b = operands([a, b], [da, db], want.name)
        return wrap(BinOp(symbol, a, b), want.name), want.name

    def statement(self, s) -> list:
        if isinstance(s, cf.Block):
            return [x for part in s.stmts for x in self.stmt(part)]
        if isinstance(s, cf.Skip):
            return []
        if isinstance(s, cf.Alloc):
            name = self.temps.setdefault(s.name, self.fresh(s.name))
            dt = self.temp_dtypes.setdefault(s.name, s.dtype or self.dtype)
            init = s.init if s.init != 0 else 0
            if np.dtype(dt).kind in "iu" and not np.isfinite(init):   # (max's identity in an integer)
                init = int(np.iinfo(dt).min if init < 0 else np.iinfo(dt).max)
            out = [Declare(Var(name), dt, Const(init, dt))]
            if s.count:
                out.append(Declare(Var(self.temps.setdefault(s.count, self.fresh(s.count))), I64, _c(0)))
            return out
        if isinstance(s, cf.Reduce):
            if s.idxs:     # (a sum whose loops run around the output's: compiler.lattice.seqhoist)
                into = self.workspaces.get(s.out, self.out)
                if s.op is not None:    # (a max, min or prod into a vector's accumulator)
                    if not hasattr(into, "reduce_into"):
                        raise StrategyError(f"{s.op.name} into {s.out}: the loops of a max, min or prod run around "
                                            f"the output's into a vector or a dense output only")
                    v, dt = self.typed(s.value)
                    return self.computing(s, into.reduce_into(s.idxs, v, dt, s.count, s.op, self.helpers), into.tensor)
                return self.computing(s, into.accumulate(s.idxs, self.value(s.value), s.count), into.tensor)
            if s.op is not None:    # (max, min or a product into a scalar: t = max(t, v), the operator's C)
                t = Var(self.temps[s.out])
                v, dt = self.typed(s.value)
                new = apply_op(s.op, [t, v], [self.temp_dtype(s.out), dt], self.helpers)[0]
                out = self.computing(s, [ir.Assign(t, new)], None)
            else:
                out = self.computing(s, [ir.CompoundAssign("+", Var(self.temps[s.out]), self.value(s.value))], None)
            self.summed.setdefault(s.out, set()).update(self.reads(s))
            return out + ([ir.CompoundAssign("+", Var(self.temps[s.count]), _c(1))] if s.count else [])
        if isinstance(s, cf.Fold) and s.idxs:
            return self.workspaces.get(s.out, self.out).fold_each(s)
        if isinstance(s, cf.Fold) and s.op is not None:
            # (the fill, a fixed point of the operator, once where the loops skipped any coordinate; a product's
            # other fill to the power of the coordinates skipped)
            t, dt = Var(self.temps[s.out]), self.temp_dtype(s.out)
            fill = Const(s.fill, dt)
            if s.power:
                fill = fold_power(fill, arith("-", _c(s.extent), Var(self.temps[s.count])), dt, self.helpers)
            folded = apply_op(s.op, [t, fill], [dt, dt], self.helpers)[0]
            return computing([If(BinOp("<", Var(self.temps[s.count]), _c(s.extent)), [ir.Assign(t, folded)])],
                             (), None, fills=self.summed.get(s.out, ()))
        if isinstance(s, cf.Fold):
            # (the summand's fill once for each coordinate the loops skipped, where they skipped any)
            n, extent, dt = Var(self.temps[s.count]), _c(s.extent), self.temp_dtype(s.out)
            missed = arith("-", extent, n)
            # (the fill added once a coordinate missed: a complex one's parts each times the count, as their sum,
            # C's real times complex, where a complex count's product would make inf * 0 of inf + 0j)
            missed = missed if dt == I64 else Cast(real_part_dtype(dt).name, missed)
            if s.fill != 1:
                missed = arith("*", missed, Const(s.fill, dt))
            # (it computes the summand with its tensors' fills: tagged as the summand's nodes)
            return computing([If(BinOp("<", n, extent), [ir.CompoundAssign("+", Var(self.temps[s.out]), missed)])],
                             (), None, fills=self.summed.get(s.out, ()))
        if isinstance(s, cf.Assign):
            v = self.value(s.value)
            if self.out.kind == "dense" or isinstance(v, (Var, Const)):
                return self.computing(s, self.out.store(s.idxs, v), self.out.tensor)
            local = Var(self.fresh("v"))      # (tested against the fill, then stored)
            return self.computing(s, [Declare(local, self.dtype, v)] + self.out.store(s.idxs, local), self.out.tensor)
        if isinstance(s, cf.Switch):
            x = Var(s.index)
            chain = None
            for seq, body in reversed(s.cases):
                if chain is None and isinstance(seq, (Level, Universe)) and seq.key in self.stepped:
                    # (a merged loop's default: its universe or dense level is at every coordinate the loop visits)
                    chain = self.scoped(lambda b=body: self.in_case(s.index, b, lambda: self.stmt(b)))
                    continue
                case = self.scoped(lambda b=body, q=seq: self.in_case(s.index, b, lambda: self.case(q, b), q))
                chain = [If(self.equals(seq, x), case, chain)]
            return chain or []
        if isinstance(s, cf.While):
            return self.loop(s)
        if isinstance(s, cf.Bind):
            # (a product's coordinate, its operands' loops nested: compiler.lattice.seqproductnest)
            at = arith("+", arith("*", Var(s.outer), _c(s.size)), Var(s.inner))
            return [Declare(Var(s.index), I64, at)] + self.body_of(s.index, s.body)
        raise TypeError(f"cannot emit {s!r}")

    def case(self, seq, body) -> list:
        """The code of a switch's case ``body``, run where ``seq`` is at the coordinate (a level there is valid:
        the merged loop's test of a part, :attr:`~compiler.lattice.seqcfir.While.merged`)."""
        # (a merged loop's case of several of its operands: each of them there)
        there = {seq.key} if isinstance(seq, Level) else \
            {x.key for x in seq.iters() if isinstance(x, Level) and x.key in self.maybe_absent}
        self.known = self.known | there
        self.maybe_absent = {k: v for k, v in self.maybe_absent.items() if k not in there}
        return self.stmt(body)

    def body_of(self, index: str, body) -> list:
        """The code of ``body``, a loop's over ``index``, closing the segment of the output level ``index``
        indexes; none in the loops of a sum into a workspace (:mod:`compiler.lattice.seqworkspace`), which write
        no entry of the output: there its levels' counters never move, and the segment's code never runs."""
        stmts = self.stmt(body)
        into = cf.written(body)
        if into and into <= self.workspaces.keys():
            return stmts
        return self.out.case(index, stmts)

    def computing(self, s, stmts: list, writes: str | None) -> list:
        """``stmts``, the code of ``s`` (an assignment or a sum into a temporary), tagged with the
        tensors it reads and the output it writes (``None``: a temporary), so the expression
        tree's nodes it computes are linked with it (:mod:`compiler.notation.node_provenance`)."""
        return computing(stmts, self.reads(s), writes)

    def reads(self, s) -> set:
        """The tensors the assignment or sum ``s`` reads."""
        return {self.names[v.tensor] for v in cin_parts(s)[0] if isinstance(v, cf.Read)}

    def scoped(self, fn) -> list:
        """``fn()`` with the cursors and temporaries it declares forgotten after (a C block)."""
        leaves, groups, temps, known = dict(self.leaves), dict(self.groups), dict(self.temps), self.known
        starts, absent, stepped = dict(self.starts), self.maybe_absent, self.stepped
        try:
            return fn()
        finally:
            self.leaves, self.groups, self.temps, self.known, self.starts = leaves, groups, temps, known, starts
            self.maybe_absent, self.stepped = absent, stepped

    def loop(self, w: cf.While) -> list:
        # (a loop between the split's major index and this one walked the group: back to its start)
        out = [x for p in w.rewind for x in rewind_stmts(self, p)]
        if w.init:
            out += self.declare(w.init)
            for s in w.init:
                # (under a merged loop, a fiber under an operand not at its coordinate is empty)
                out += self.init(s, dict(self.maybe_absent))
        else:
            # (a later loop's π0 over what its operand became, π0(|a| + b, J) after π0(a ⊔ b, J):
            # its group is set on entering the loop, as the first loop's)
            out += self.declare([n for n in walk(w.seq) if isinstance(n, Project) and n.k == 0])
        x = Var(w.index)

        # (a merged loop over a π0 or π1 of a union: seqcfir.Compiler.merged_split)
        split = merged_split(w.seq) if w.merged else None
        if split is not None:
            return out + split_loop(self, w, split)

        def body():
            outside = self.known
            if not _moved_inside(w) and not w.merged:
                # (the loop's condition holds in its body, where nothing else moves its cursors,
                # until the loop steps them)
                self.known = self.known | _implied_valid(w.seq)
            inner = (self.least(w.seq, x) if w.merged else [Declare(x, I64, self.eval(w.seq))]) + self.enter(w.seq)
            if w.merged:
                ops = union_operands(w.seq)
                tested = frozenset(self.maybe_absent)
                # (an intersection's levels are absent together: where one of them is at x and the other is not)
                self.maybe_absent = {**self.maybe_absent,
                                     **{leaf.key: not_(self.equals(op, x)) for op in ops
                                        if not everywhere(op, tested) for leaf in operand_leaves(op)}}
                # (a universe or a dense level of no parent, the longest operands, is valid wherever the loop is, and
                # at its coordinate)
                self.stepped = self.stepped | {op.key for op in ops if everywhere(op, tested)}
                self.known = self.known | self.stepped
            inner += self.rows_at(w)
            for located, iterated in w.locs:
                # (a merged loop's located at its coordinate: the least of its operands left)
                at = self.locate(located, x if w.merged else self.eval(iterated), {})
                # (the loop's own sequence is valid in its body; a part of it may have run out)
                inner += at if iterated == w.seq else [If(self.valid(iterated), at)]
            inner += self.body_of(w.index, w.body)
            self.known = outside
            for real in self.hoisted.pop():
                del self.located[real]
            # (a group the loop repeats, walked by a π1 loop inside: back to its start for the next coordinate)
            inner += [y for p in loop_repeats(w.seq, inner_sequences(w)) for y in rewind_stmts(self, p)]
            switched = w.body.body if isinstance(w.body, cf.Bind) else w.body
            if isinstance(switched, cf.Switch) or isinstance(w.seq, (Union, Intersect)) or _moved_inside(w):
                return inner + self.advance(w.seq, x, {}, walked_inside(w.body))
            # (nothing in the body moved the loop's cursors: it is still at x)
            return inner + self.next(w.seq, {})

        more = or_(*(self.valid(op) for op in union_operands(w.seq))) if w.merged else self.valid(w.seq)
        loop = [ir.While(more, self.scoped(body))]
        # (the first loop of a series starts where init left its cursors: nothing to resume)
        resume = [] if w.init else self.resume(w.seq, {})
        if resume:
            # an edge of this loop ran out in the loops before: not the state this loop is for
            loop = [If(and_(*(self.valid(e) for e in edges(w.seq))), resume + loop)]
        # (tagged as the lattice strategy's other loops, so the explorer links the C to the lattice point)
        operands = tuple(sorted({self.names[leaf.tensor] for leaf in w.seq.iters() if isinstance(leaf, Level)}))
        return out + [ir.Tagged(cf.while_tag(w), loop, f"while {w.index} <- {w.seq}",
                                ir.Origin("lattice", w.index, operands))]

    def least(self, s, x: Var) -> list:
        """``x`` declared the least coordinate of the operands of the union ``s`` not yet run out (a merged
        loop's: each is tested, not the minimum of all of them, which reads past an operand's end)."""
        # (an intersection's levels met: its coordinate is its first level's)
        return self.least_of([(self.valid(op), self.eval(operand_at(op))) for op in union_operands(s)], x, s.size())

    @staticmethod
    def least_of(terms, x: Var, size: int) -> list:
        """``x`` declared the least of the coordinates ``at`` of ``terms`` (``(valid, at)``) where ``valid`` holds,
        else ``size``."""
        return [Declare(x, I64, _c(size))] + [If(and_(valid, BinOp("<", at, x)), [ir.Assign(x, at)])
                                              for valid, at in terms]


def _moved_inside(w: cf.While) -> bool:
    """Whether a loop nested in ``w``'s body moves a cursor of ``w`` (a π1 loop inside its π0's)."""
    mine = w.seq.iters()

    def visit(x) -> bool:
        if isinstance(x, cf.While):
            return bool(x.seq.iters() & mine) or visit(x.body)
        if isinstance(x, cf.Bind):
            return visit(x.body)
        if isinstance(x, cf.Block):
            return any(visit(y) for y in x.stmts)
        if isinstance(x, cf.Switch):
            return any(visit(b) for _, b in x.cases)
        return False

    return visit(w.body)


def _implied_valid(s: Seq) -> frozenset:
    """The keys of the leaves that are valid wherever ``s`` is (its conjunction's operands)."""
    if isinstance(s, (Level, Universe)):
        return frozenset([s.key])
    if isinstance(s, (Union, Intersect, Product)):
        return _implied_valid(s.a) | _implied_valid(s.b)
    if isinstance(s, (Project, Slice, Stride, Offset, Pad, Concat)):
        return _implied_valid(s.a)
    return frozenset()


def _always_at(s: Seq) -> bool:
    """Whether every leaf of a valid ``s`` is at its coordinate (no leaf of it is ever absent)."""
    if isinstance(s, (Level, Universe)):
        return True
    if isinstance(s, Project):
        return s.k == 0 or _always_at(s.a)
    if isinstance(s, (Intersect, Product)):
        return _always_at(s.a) and _always_at(s.b)
    if isinstance(s, (Slice, Stride, Pad)):
        return _always_at(s.a)
    return False


__all__ = ["SeqEmitter"]
