"""``Seq(expr, i)``: the sequence of an expression at a loop index by the rules of BURRITO's Fig. 11
(§4.4 of shape-operators.md), each rule that fired recorded in a :class:`Derivation`; the accessed
tensors' levels as sequence levels (:func:`level_kinds`). :mod:`compiler.lattice.seqderive` builds the
CIN from these sequences and lowers it.

>>> print(Derivation("k", [(0, "a[k] + b[k]", "k", "line 4: + is ∪", "k_a ∪ k_b"),
...                         (1, "a[k]", "k", "line 3: level 0 of a (compressed)", "k_a")]).text())
Seq(a[k] + b[k], k) = k_a ∪ k_b   [line 4: + is ∪]
  Seq(a[k], k) = k_a   [line 3: level 0 of a (compressed)]
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field, replace

from .. import values
from ..errors import StrategyError
from ..notation.ast import Access, Call, Index, Literal, Reduce, free_indices
from ..notation.ast import accesses as accesses_of
from ..notation.drawing import node_tag
from ..notation.shape import Broadcast, Collapse, Concat, Slice, Split
from ..tensor import Tensor
from ..trace import Rewrite
from .seqlattice import loop_tag
from .seqnesting import searchable
from .seqrewind import grouped_product
from .sequences import Concat as SeqConcat
from .sequences import Intersect, Product, Project, Seq, Stride, Union, Universe, rebuild, reverse
from .sequences import Slice as SeqSlice
from .seqparts import other_fills, tie, with_fill
from .seqvalues import (algebra_sequence, call_kind, call_sequence, expr_fill, product_sequence, stated_algebra,
                        union_terms, wild_product)


# -- the levels of the accessed tensors ------------------------------------------------------------


def level_kinds(t: Tensor) -> tuple[str, ...]:
    """The sequence kind of each storage mode of ``t``, asked of its levels.

    >>> import numpy as np
    >>> level_kinds(Tensor.from_numpy(np.eye(2), "csr")), level_kinds(Tensor.from_numpy(np.eye(2), "coo"))
    (('dense', 'compressed'), ('compressed', 'singleton'))
    """
    kinds = []
    for lvl in t.levels:
        # (a slot per coordinate is located; every other level iterated, a RunList's runs too, though
        # they cover the fiber: its walk is the iterator's, coordinate by coordinate)
        if lvl.located_by_coordinate:
            kinds += ["dense"] * lvl.nmodes
        else:
            # a level over several modes (COO) is a compressed level over singletons
            kinds += ["compressed"] + ["singleton"] * (lvl.nmodes - 1)
    return tuple(kinds)


@dataclass(frozen=True)
class AccessLevels:
    """How the sequences name an access's tensor and the sequence level of each of its indices;
    ``seqs``: an index's sequence where it differs from its level (constant indices beside it)."""

    name: str
    levels: tuple          # storage order
    by_index: dict = field(hash=False, compare=False)
    seqs: dict = field(default_factory=dict, hash=False, compare=False)


# -- Seq(expr, i) ----------------------------------------------------------------------------------


@dataclass
class Derivation:
    """The rules :func:`derive_seq` applied for one loop index: ``(depth, node, index, rule,
    result)`` per step, and per step the ident of its node in the program's expression tree
    (:func:`~compiler.notation.drawing.tree_nodes`; None where the deriver was given none).
    ``loops``: the loops the derived sequence becomes, once its lattices are built, each as its
    lattice's sequence and its points, outer point first, each as its sequence and the tag of its loop
    (``lattice:<index>:<sequence>``, as the emitter tags their code) (:meth:`with_loops`)."""

    index: str
    steps: list = field(default_factory=list)
    idents: list = field(default_factory=list)
    loops: list = field(default_factory=list)

    def with_loops(self, lattices) -> "Derivation":
        """This derivation with ``loops`` from ``lattices`` (``(index, lattice)`` of the CFIR's
        foralls): every lattice of its index, a forall over one part of a concatenation
        iterating its part of the sequence.

        >>> from compiler.lattice.seqlattice import build_seq_lattice
        >>> from compiler.lattice.sequences import Level, Concat
        >>> L = build_seq_lattice(Concat(Level("a", 0, "compressed", 3), Level("b", 0, "compressed", 2)))
        >>> Derivation("k").with_loops([("k", L), ("j", L)]).loops
        [('i_a ⊔ i_b', [('i_a ⊔ i_b', 'lattice:k:i_a⊔i_b'), ('|i_a| + i_b', 'lattice:k:|i_a|+i_b')])]
        """
        loops = [(str(L.seq), [(p.seq.text(), loop_tag(str(i), p.seq)) for p in L.points])
                 for i, L in lattices if str(i) == self.index]
        return replace(self, loops=loops)

    def text(self) -> str:
        return "\n".join(line for line, _ in self._printed())

    def _printed(self) -> list[tuple[str, int]]:
        """Each step's line, and where its expression starts in it (one printer for both), then
        each loop the sequence becomes (``-> forall i ∈ k_A ⊔ l_B``), where its head starts."""
        out = []
        for d, node, i, rule, res in self.steps:
            head = f"{'  ' * d}Seq("
            out.append((f"{head}{node}, {i}) = {res}   [{rule}]", len(head)))
        for seq, _ in self.loops:
            out.append((f"-> forall {self.index} ∈ {seq}   [its lattice's loops in the C]", len("-> ")))
        return out

    def node_tags(self) -> dict[str, list[str]]:
        """``{node id: tags}`` of the drawing (:meth:`dot`, whose node ``n<k>`` is step ``k``): the
        tag of the code its expression node produced (``expr:<ident>``), recorded as the
        artifact's ``data["node_tags"]`` so the explorer links a step with that code.

        >>> Derivation("k", [(0, "a[k]", "k", "line 3", "k_a")], ["n2"]).node_tags()
        {'n0': ['expr:n2']}

        Each loop the sequence becomes (node ``loop<m>``) has the tags of its lattice's points'
        loops, the outer point's first; where it has more than one point, each point is a node of its
        own (``loop<m>p<n>``) with its loop's tag, so each loop of the C has its colour.
        """
        tags = {f"n{k}": [node_tag(ident)] for k, ident in enumerate(self.idents) if ident is not None}
        for m, (_, points) in enumerate(self.loops):
            if points:
                tags[f"loop{m}"] = [tag for _, tag in points]
            if len(points) > 1:
                tags.update({f"loop{m}p{n}": [tag] for n, (_, tag) in enumerate(points)})
        return tags

    def line_spans(self) -> dict[str, list[list]]:
        """``{line: [[start, end, tag, "node"]]}`` of :meth:`text`: where each step prints its
        expression node, with the tag of :meth:`node_tags`, recorded as the artifact's
        ``data["line_spans"]`` so the explorer marks the text there, not by reading it.

        >>> d = Derivation("k", [(0, "a[k] + b[k]", "k", "line 4: + is ∪", "k_a ∪ k_b"),
        ...                      (1, "a[k]", "k", "line 3", "k_a")], ["n2", "n3"])
        >>> line = d.text().splitlines()[1]
        >>> [(line[a:b], tag) for a, b, tag, _ in d.line_spans()["2"]]
        [('a[k]', 'expr:n3')]
        """
        out = {}
        printed = self._printed()
        for k, ((_, node, *_), (_, start), ident) in enumerate(zip(self.steps, printed, self.idents)):
            if ident is not None:
                out[str(k + 1)] = [[start, start + len(node), node_tag(ident), "node"]]
        # (each loop's head, with the tag of its lattice's outer point: the loop's C)
        for m, ((seq, points), (line, start)) in enumerate(zip(self.loops, printed[len(self.steps):])):
            if points:
                end = start + len(f"forall {self.index} ∈ {seq}")
                out[str(len(self.steps) + m + 1)] = [[start, end, points[0][1], "loop"]]
        return out

    def dot(self) -> str:
        """The derivation as an expression tree, each node with the rule and the sequence.

        >>> d = Derivation("k", [(0, "a[k] + b[k]", "k", "line 4: + is ∪", "k_a ∪ k_b"),
        ...                      (1, "a[k]", "k", "line 3", "k_a"), (1, "b[k]", "k", "line 3", "k_b")])
        >>> [line.strip() for line in d.dot().splitlines() if "->" in line]
        ['n0 -> n1;', 'n0 -> n2;']
        """
        def q(t):
            return t.replace("\\", "\\\\").replace('"', '\\"')

        def wrapped(t):   # (on lines of 28 characters, an arrow kept with what it points to: on one
            # line each, a derivation of three leaves was wider than a pane at half its size)
            parts = textwrap.wrap(t.replace(" -> ", "\0"), 28, break_long_words=False, break_on_hyphens=False)
            return "\\n".join(q(x.replace("\0", " -> ")) for x in parts) or q(t)

        lines = [f"digraph seq_{q(self.index)} {{", '  node [shape=box, fontname="monospace"];']
        parents: list = []        # the node open at each depth
        for n, (d, node, i, rule, res) in enumerate(self.steps):
            lines.append(f'  n{n} [label="{wrapped(node)}\\n{wrapped(f"Seq(·, {i}) = {res}")}\\n{wrapped(rule)}"];')
            del parents[d:]
            if parents:
                lines.append(f"  {parents[-1]} -> n{n};")
            parents.append(f"n{n}")
        # (the loops the root's sequence becomes, beside it (not ranked below it: on the tree's rank they
        # pushed the root to the right, out of view in a pane): a lattice's loops over its points)
        # (a lattice of several points: a node per point under its loop, each the colour of its own loop in the C)
        for m, (seq, points) in enumerate(self.loops):
            many = len(points) > 1
            count = f"{len(points)} point{'s' if many else ''}"
            lines.append(f'  loop{m} [label="forall {q(self.index)} ∈ {q(seq)}\\n{count}:\\n'
                         f'{"a loop each" if many else "its loops"} in the C", style="rounded"];')
            if self.steps:
                label = ', label="becomes"' if m == 0 else ""   # (the further loops' arcs crossed their labels)
                lines.append(f'  n0 -> loop{m} [style=dashed{label}, constraint=false];')
            for n, (point, _) in enumerate(points if many else ()):
                lines.append(f'  loop{m}p{n} [label="point {n}: {wrapped(point)}", style="rounded"];')
                lines.append(f'  loop{m} -> loop{m}p{n} [style=dashed];')
        lines.append("}")
        return "\n".join(lines)

    def rewrites(self) -> list[Rewrite]:
        return [Rewrite(rule, f"Seq({node}, {i})", res) for _, node, i, rule, res in self.steps]

    def artifact_parts(self) -> tuple[str, str, dict]:
        """The text, drawing and data of the derivation's trace artifact, which the trace makes
        when first read (most traces are never looked at; drawing every derivation was about
        a tenth of a shape operator's lowering).

        >>> text, dot, data = Derivation("k", [(0, "a[k]", "k", "line 3", "k_a")], ["n2"]).artifact_parts()
        >>> text, data
        ('Seq(a[k], k) = k_a   [line 3]', {'node_tags': {'n0': ['expr:n2']}, 'line_spans': {'1': [[4, 8, 'expr:n2', 'node']]}})
        """
        return self.text(), self.dot(), {"node_tags": self.node_tags(), "line_spans": self.line_spans()}


class Deriver:
    """``Seq`` over one program: its accesses' levels and its indices' extents."""

    def __init__(self, access_levels: dict, extents: dict, fills: dict | None = None, idents: dict | None = None):
        self.access_levels = access_levels        # Access -> AccessLevels
        self.extents = extents                    # Index -> int
        self.fills = fills or {}                  # tensor -> fill (absent: 0)
        self.idents = idents or {}                # id(expression node) -> its ident in the program's tree
        self.depth: dict = {}                     # an output index -> its loop's depth (the loop order)
        self.consumed: frozenset = frozenset()    # the indices the shape operators around consume
        self.located_rows: dict = {}              # a stand-in located at each coordinate -> its LocatedRead
        self.row_walks: dict = {}                 # such a stand-in whose tensor's rows are walked -> their Level

    def size(self, i: Index) -> int:
        return self.extents[i]

    def fill(self, e):
        """The fill of expression ``e`` (:func:`~compiler.lattice.seqvalues.expr_fill`)."""
        return expr_fill(e, self.fills, self.extents)

    def filled_parts(self, e: Concat) -> list:
        """``(operand, fill, result's fill)`` of each part of ``e`` whose fill is not the result's (its first
        operand's): :func:`~compiler.lattice.seqparts.other_fills`."""
        return other_fills(e, self.fills, self.extents)

    def walks_whole(self, x) -> bool:
        """Whether the part ``x`` of a concatenation holds every coordinate of its own: it reads tensors
        whose levels are all dense (one read densely, :func:`~compiler.lattice.seqparts.walked_whole`)."""
        reads = list(accesses_of(x))
        return bool(reads) and all(lv.dense for a in reads for lv in self.access_levels[a].levels)

    def concat_parts(self, e: Concat) -> list:
        """Each part's sequence along its concatenated index, walking every coordinate where its fill
        is not the result's (:func:`~compiler.lattice.seqparts.with_fill`)."""
        filled = {x for x, *_ in self.filled_parts(e)}
        out = []
        for x, j in zip(e.operands, e.indices):
            s = self.seq(x, j)
            if s is None:
                raise StrategyError(f"{e}: operand {x} does not vary with {j}")
            out.append(with_fill(s, str(j)) if x in filled and not self.walks_whole(x) else s)
        return out

    def seq(self, e, i: Index, log: Derivation | None = None, depth: int = 0) -> Seq | None:
        """``Seq(e, i)``; None when ``e`` does not vary with ``i``."""
        slot = None
        if log is not None:
            slot = len(log.steps)
            log.steps.append(None)
            log.idents.append(self.idents.get(id(e)))
        rule, out = self._seq(e, i, log, depth + 1)
        if log is not None:
            log.steps[slot] = (depth, str(e), str(i), rule, "-" if out is None else str(out))
        return out

    def minor_first(self, major: Index, minor: Index) -> bool:
        """Whether the loops over a split's indices (neither consumed by an operator around it, as the
        split's of a collapse) run the ``minor`` one outside the ``major`` one: the minor an output index
        looped before the major, or the major a reduction index (its loops run inside the output's)."""
        d = self.depth
        return not {str(major), str(minor)} & self.consumed and str(minor) in d and (
            str(major) not in d or d[str(minor)] < d[str(major)])

    def _either(self, op, a, b, i):
        if a is None and b is None:
            return None
        if op is Intersect:
            # U_i holds every coordinate: intersected with it, a sequence is itself (a broadcast
            # operand of * is read where the other one is, as the notes' fused SpMV iterates)
            a = None if isinstance(a, Universe) and a.index == str(i) else a
            b = None if isinstance(b, Universe) and b.index == str(i) else b
            if a is None and b is None:
                return Universe(self.size(i), str(i))
            return b if a is None else a if b is None else Intersect(a, b)
        # what does not vary with i is there at every coordinate of it
        u = Universe(self.size(i), str(i))
        return Union(u if a is None else a, u if b is None else b)

    def _broadcast_product(self, x, j: Index, k: Index, sub) -> Product:
        """The collapse of ``x`` over ``(j, k)`` where ``x`` does not vary with one of them (or
        either): that index's universe in its place, ``U_j × k_b`` for ``b[k]``."""
        a, b = sub(x, j), sub(x, k)
        return grouped_product(Universe(self.size(j), str(j)) if a is None else a,
                               Universe(self.size(k), str(k)) if b is None else b)

    def _seq(self, e, i: Index, log, d):
        """``(rule, Seq(e, i))``, the indices ``e`` consumes :attr:`consumed` in its operands."""
        before = self.consumed
        if isinstance(e, (Collapse, Concat)):
            self.consumed = before | {str(j) for j in e.indices}
        elif isinstance(e, (Split, Slice)):
            self.consumed = before | {str(e.index)}
        try:
            return self._node_seq(e, i, log, d)
        finally:
            self.consumed = before

    def _node_seq(self, e, i: Index, log, d):
        sub = lambda x, j=i: self.seq(x, j, log, d)  # noqa: E731
        if isinstance(e, Access):
            acc = self.access_levels[e]
            if i not in e.indices:
                return "not an index of the access", None
            if e.tensor in self.located_rows:
                r = self.located_rows[e.tensor]
                step = r.index if abs(r.step) == 1 else f"{abs(r.step)}·{r.index}"
                row = step if not r.start and r.step > 0 else f"{r.start} {'-' if r.step < 0 else '+'} {step}"
                if e.tensor in self.row_walks:
                    lv = replace(self.row_walks[e.tensor], index=str(i))
                    # (short: the explorer's table of rewrites shows a rule on one line)
                    return (f"{r.tensor}[{', '.join([row] + [str(c) for c in r.coords[1:]])}] located in the row "
                            f"level 0 of {r.tensor} ({lv.kind}) walks", lv)
                return (f"{r.tensor}[{', '.join([row] + [str(c) for c in r.coords[1:]])}] located in its row at each "
                        f"coordinate: it constrains nothing", None)
            lv = acc.by_index[i]
            if i in acc.seqs:
                consts = ", ".join(f"{c} at level {m}" for m, c in enumerate(e.indices) if isinstance(c, int))
                return (f"line 3: level {lv.mode} of {e.tensor} ({lv.kind}), with its constant index ({consts}) "
                        f"a length-1 slice in a product", acc.seqs[i])
            return f"line 3: level {lv.mode} of {e.tensor} ({lv.kind})", lv
        if isinstance(e, Literal):
            return "a constant", None
        if isinstance(e, Call):
            kind = call_kind(e, self.fills, self.extents)
            if kind == "algebra":
                seqs = [sub(a) for a in e.args]
                alg = stated_algebra(e, self.fills, self.extents)
                return (f"{e.op.name} states its iteration algebra {alg}: its sequences' ∩ and ∪ (a complement "
                        f"constrains nothing)", algebra_sequence(e, alg, seqs, self.size(i), str(i)))
            if kind == "intersection":
                seqs = [sub(a) for a in e.args]
                return (f"{e.op.name} of NaN fills: the ∩ of its operands' (NaN where one is absent)",
                        call_sequence(e, seqs, self.size(i), str(i), intersect=True))
            if kind == "union":
                seqs = [sub(a) for a in e.args]
                wild = wild_product(e, self.fills, self.extents)
                if wild:
                    values.decide("exact-path", e, f"{', '.join(map(str, wild))} may hold NaN or inf, and 0 * inf "
                                                   f"is NaN: the loops walk the ∪ of those factors, not the ∩")
                    return (f"* of {', '.join(map(str, wild))}, which may hold NaN or inf: the ∪ of those factors' "
                            f"(where another is absent, 0 * inf is NaN), the others walked beside them (their cases "
                            f"alone are 0 and write nothing); this walks each wild factor to its end, where ∩ "
                            f"stopped at the first factor to run out",
                            product_sequence(e, wild, seqs, self.size(i), str(i)))
                return (f"{e.op.name}: the ∪ of its operands' (where one may differ from its fill; an absent one "
                        f"reads its fill)", call_sequence(e, seqs, self.size(i), str(i)))
            a, b = sub(e.args[0]), sub(e.args[1])
            if e.op.name == "add":
                return "line 4: + is ∪", self._either(Union, a, b, i)
            if any(isinstance(x, Universe) and x.index == str(i) for x in (a, b)):
                return f"line 5: * is ∩, and U_{i} ∩ X = X", self._either(Intersect, a, b, i)
            return "line 5: * is ∩", self._either(Intersect, a, b, i)
        if isinstance(e, Reduce):
            if i in e.indices:
                return "reduced here", None
            return "line 6: a sum takes its summand's", sub(e.body)
        if isinstance(e, Broadcast):
            if e.index == i:
                return "line 7: broadcast along it is U", Universe(self.size(i), str(i))
            return "line 8: broadcast along another index", sub(e.operand)
        if isinstance(e, Collapse):
            j, k = e.indices
            summed = isinstance(e.operand, Call) and call_kind(e.operand, self.fills, self.extents) == "sum"
            terms = _terms(e.operand) if summed else union_terms(e.operand, self.fills, self.extents)
            if e.result == i and len(terms) > 1:
                # (a collapse of a + b is collapse(a) ∪ collapse(b): a union of products, where
                # (i_A ∪ i_B) × (j_A ∪ j_B) would be a union in a product's right operand; a term
                # constant along j or k, a broadcast, is there at every coordinate of that index,
                # collapse(b[k]) is U_j × k_b; nested sums are flattened, so (x[k] + y[k]) + A
                # is three products, not x's and y's union in one product's right operand)
                sides = [sub(replace(e, operand=x)) if set(free_indices(x)) >= {j, k}
                         else self._broadcast_product(x, j, k, sub) for x in terms]
                out = _owned(sides[0], "1")
                for m, side in enumerate(sides[1:], 2):
                    out = Union(out, _owned(side, str(m)))
                return "line 9 over line 4: a collapse of + is the ∪ of the collapses", out
            if e.result == i:
                a, b = sub(e.operand, j), sub(e.operand, k)
                if a is None or b is None:
                    raise StrategyError(f"{e}: its operand does not vary with {j if a is None else k}")
                if isinstance(a, Project) and isinstance(b, Project) and (a.k, b.k) == (1, 0) \
                        and a.group is None and a.group_key == b.group_key and searchable(b.a):
                    # (a transpose: every coordinate of the minor index, each group searched for it)
                    u = Universe(a.J, str(j))
                    return (f"line 9: collapse into {i} is ×, of a split's minor index first: its universe, "
                            f"each group searched for its coordinate", Product(u, Stride(b.a, a.J, str(j), u)))
                return f"line 9: collapse into {i} is ×", grouped_product(a, b)
            if i in e.indices:
                return "consumed here", None
            return "line 10: collapse into another index", sub(e.operand)
        if isinstance(e, Concat):
            filled = self.filled_parts(e)
            why = "".join(f"; {x} has fill {f}, not the result's {r}: its part walks every coordinate "
                          f"(U), writing its fill where it stores nothing" for x, f, r in filled)
            if e.result == i:
                for x, j in zip(e.operands, e.indices):
                    sub(x, j)     # (each part's derivation, logged)
                parts = self.concat_parts(e)
                out = parts[0]
                for p in parts[1:]:
                    out = SeqConcat(out, p)
                return f"line 11: concat into {i} is ⊔{why}", out
            if i in e.indices:
                return "consumed here", None
            # (each part's universes, its constants' and its fill's, are tied to it: where the loops
            # are at another part, they are not there)
            parts, sides = self.concat_parts(e), []
            for x, p in zip(e.operands, parts):
                s = sub(x)
                if s is None:
                    s = Universe(self.size(i), str(i))
                elif x in {p for p, *_ in filled} and not self.walks_whole(x):
                    s = with_fill(s, str(i))
                sides.append(tie(s, p, parts))
            out = sides[0]
            for s in sides[1:]:
                out = Union(out, s)
            return f"line 12: concat along another index is ∪{why}", out
        if isinstance(e, Split):
            a_, b_ = e.results
            if i in (a_, b_):
                a = sub(e.operand, e.index)
                if a is None:
                    raise StrategyError(f"{e}: its operand does not vary with {e.index}")
                if self.minor_first(a_, b_) and searchable(a):
                    # (a transpose: the minor loop walks every coordinate, and inside it the major one
                    # searches each group for the coordinate the minor loop is at)
                    if i == b_:
                        return (f"line 14, its loop outside the one over {a_}: every coordinate, each group "
                                f"searched for it inside", Universe(self.size(b_), str(b_)))
                    return (f"line 13 inside the loop over {b_}: the coordinates of the operand at {b_} "
                            f"modulo {self.size(b_)}, each group searched", Stride(a, self.size(b_), str(b_)))
                k = 0 if i == a_ else 1
                return f"line {13 + k}: split into {i} is π{k}", Project(k, a, self.size(b_))
            if i == e.index:
                return "consumed here", None
            return "line 15: split of another index", sub(e.operand)
        if isinstance(e, Slice):
            if e.result == i:
                a = sub(e.operand, e.index)
                if a is None:
                    raise StrategyError(f"{e}: its operand does not vary with {e.index}")
                if e.step > 0:
                    return f"line 16: slice into {i}", SeqSlice(a, e.start, e.stop, e.step)
                if e.count == 0:
                    return f"line 16: slice into {i}, empty", SeqSlice(a, 0, 0, 1)
                # walked backwards: stored coordinate x is n - 1 - x of the reversed operand, whose
                # levels iterate from their ends, so k still increases along the loop
                n = a.size()
                rule = f"line 16: slice into {i} with step {e.step}: the reversed operand sliced"
                return rule, SeqSlice(reverse(a), n - 1 - e.start, n - 1 - e.stop, -e.step)
            if i == e.index:
                return "consumed here", None
            return "line 17: slice of another index", sub(e.operand)
        raise StrategyError(f"{e}: the sequence lowering does not take this node")


def _terms(e) -> list:
    """The terms of a sum, nested sums flattened: ``[a, b, c]`` for ``(a + b) + c``."""
    if isinstance(e, Call) and e.op.name == "add" and not e.op.is_user:
        return [t for x in e.args for t in _terms(x)]
    return [e]


def _owned(s: Seq, owner: str) -> Seq:
    """``s`` with its universes owned by ``owner`` (a term of a collapsed sum): two terms'
    ``U_j × k_x`` and ``U_j × k_y`` walk ``j`` apart, each skipping the rows its vector leaves
    empty, so each needs a cursor of its own (one shared cursor was advanced by both products).

    >>> from compiler.lattice.sequences import Level
    >>> print(_owned(Product(Universe(2, "j"), Level("x", 0, "compressed", 3, "k")), "2"))
    U_j#2 × k_x
    """
    if isinstance(s, Universe):
        return replace(s, owner=f"{owner}.{s.owner}" if s.owner else owner)
    kids = s.children()
    return rebuild(s, tuple(_owned(c, owner) for c in kids)) if kids else s


__all__ = ["AccessLevels", "Derivation", "Deriver", "level_kinds"]
