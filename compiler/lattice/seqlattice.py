"""Generalized iteration lattices over sequence expressions (shape-operators.md §6; the paper's
Figs. 12, 13 and 27), and their brute-force check.

A point is a sequence; its edges are the sub-sequences that can run out first (:func:`edges`,
Fig. 13: a product or concatenation only through its left operand, a slice or projection also by
itself). Removing an edge replaces it by ``Ƒ`` when it is dense and ``∅`` otherwise
(:func:`remove`); :func:`simplify` then applies Fig. 27's rules bottom-up, each recorded by name,
with the notes' fix to concatenation (``a ⊔ b`` with ``a`` done is ``|a| + b`` whatever ``a``'s
density; ``Ƒ`` only once both sides are), and one rule of its own: a product over a concatenation
whose right operand holds a union or concatenation (a collapse of a vstack, ``(j_A ⊔ k_B) × (i_A ∪
i_B)``) is distributed, ``(j_A × i_A) ⊔ (k_B × i_B)``, each side's right operand simplified by what
that side binds (``product-over-concat``; exact: the coordinates of the second side are offset by
``|j_A|·|i|``, its first product's size); and a product whose right operand is a concatenation of
parts that each read their own tensors (a collapse of an hstack, ``(i_A ∪ i_B) × (j_A ⊔ k_B)``) is a
union of one product per part, ``(i_A × (j_A + |k_B|)) ∪ (i_B × (|j_A| + k_B))``, each part's outer
leaves its own tensors' (``concat-per-row``: each row's coordinates are A's row, then B's, so no two
parts meet; :mod:`compiler.lattice.seqrows`); under a split, a part of another fill's ``p_B ∪ U_p`` there is
two products, its entries' and its universe's (``fill-per-row``), and a point where the entries' product
outlives its universe's, which covers it, is not built (``remove-covered``). Given the live iterators
``defs`` (bound by enclosing loops), a level whose parent is not live and a π1 whose π0 is not live are
removed too (but a π1 whose π0's operand ran partly out, ``π0(|a| + b, J)`` after ``π0(a ⊔ b, J)``, follows it:
``projection-follows-its-π0``; and inside the group of ``π0(a ∪ b, J)``, once ``a`` ran out, ``b``'s
rest of that group is ``π1(b, J @ a ∪ b)``, a π1 of ``b`` in the union's group:
``projection-stays-in-its-group``). Points
are built top-down, memoized by structural equality (a DAG), laid out in topological order;
the sub-points of a point are its descendants iterating a subset of its iterators that can be at
its coordinate together (:func:`presences`; the point first): a concatenation's ``|a| + b`` is not
one (its edge is dotted in the drawing), nor ``π0(a, J)`` of ``π0(a ∪ b, J)``, whose group is at
its coordinate whichever operand gave it.

A point whose every case writes the result's fill, and every point after it, gets no loop
(:func:`drop_fill_points`, which the CFIR's builder applies once it knows the cases).

:func:`~compiler.lattice.seqcheck.check_seq_lattice` runs the loops, in topological order, each until an edge sequence
runs out, over random leaf data, and checks that every coordinate of the set semantics is
visited once, by the case of the sub-point whose iterators are at it.

>>> from compiler.lattice.sequences import Level, Union
>>> a = Level("a", 0, "compressed", 5); b = Level("b", 0, "compressed", 5)
>>> L = build_seq_lattice(Union(a, b))
>>> print(L.text())
lattice of i_a ∪ i_b
p0 i_a ∪ i_b  (sub-points p0 p1 p2)
  -[i_a]-> p2 i_b
  -[i_b]-> p1 i_a
p1 i_a  (sub-points p1)
  -[i_a]-> ∅
p2 i_b  (sub-points p2)
  -[i_b]-> ∅
>>> from compiler.lattice.seqcheck import check_seq_lattice
>>> check_seq_lattice(L).exact
True
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .. import serialize
from ..trace import Rewrite
from .seqrewind import below_group
from .seqrows import concat_per_row, covered, split_fills_apart, without
from .sequences import (ABSENT, EMPTIES, LEAVES, Concat, Empty, Full, Intersect, Level, Offset, Pad, Product,
                        Project, Seq, SequenceError, Slice, Stride, Union, Universe, rebuild, side_key,
                        walk)


# -- edges and removal ----------------------------------------------------------------------------


def edges(s: Seq) -> list[Seq]:
    """The sub-sequences whose running out changes the state (Fig. 13, with U, offset and pad).

    >>> from compiler.lattice.sequences import Level, Product, Slice
    >>> a = Level("a", 0, "compressed", 4); b = Level("b", 0, "compressed", 2)
    >>> [str(e) for e in edges(Product(Slice(a, 1, 4), b))]
    ['i_a[1:4]', 'i_a']
    """
    out: list[Seq] = []

    def add(xs):
        for x in xs:
            if x not in out:
                out.append(x)

    if isinstance(s, LEAVES):
        add([s])
    elif isinstance(s, (Union, Intersect)):
        add(edges(s.a))
        add(edges(s.b))
    elif isinstance(s, (Product, Concat, Offset, Pad)):
        # the right operand of a product restarts inside the product iterator; a concatenation's
        # right side only starts once its left side is done
        add(edges(s.a))
    elif isinstance(s, (Project, Slice, Stride)):
        add([s])
        add(edges(s.a))
    return out


def remove(sub: Seq, s: Seq) -> Seq:
    """``s`` with every occurrence of ``sub`` replaced by ``Ƒ`` (``sub`` dense) or ``∅``.

    >>> from compiler.lattice.sequences import Level, Union
    >>> a = Level("a", 0, "compressed", 3); d = Level("d", 0, "dense", 3)
    >>> print(remove(d, Union(a, d)), remove(a, Union(a, d)))
    i_a ∪ Ƒ ∅ ∪ i_d
    """
    if s == sub:
        return (Full if sub.dense else Empty)(sub.size(), str(sub))
    kids = s.children()
    return rebuild(s, tuple(remove(sub, c) for c in kids)) if kids else s


def walking_its_rows(sub: Seq, s: Seq) -> list:
    """The other leaves of ``s`` that walk the rows ``sub`` walks (:attr:`Level.rows_of`: each a column of one
    tensor, located in the rows of its first level), which run out with it: the points where some of them outlive
    it, which no loop reaches, are not built.

    >>> a, a1, b = (Level(t, 0, "compressed", 4, rows_of=t.rstrip("'")) for t in ("A", "A'", "B"))
    >>> [str(c) for c in walking_its_rows(a, Union(Intersect(a, b), Intersect(a1, b)))]
    ["i_A'"]
    """
    if not (isinstance(sub, Level) and sub.rows_of):
        return []
    return sorted((x for x in s.iters() if isinstance(x, Level) and (x.rows_of, x.index) == (sub.rows_of, sub.index)
                   and x != sub), key=str)


# -- simplification (Fig. 27) ---------------------------------------------------------------------


def live_keys(s: Seq) -> frozenset:
    """What a loop over ``s`` makes live: its iterated leaves and the groups of its π0s.

    A π0 fixes only its group, not its operand's coordinate (the π1 loop inside walks that),
    so its operand's leaves are not live: a read of them where the π1 is absent is 0.

    >>> from compiler.lattice.sequences import Level
    >>> a = Level("a", 0, "dense", 6, "k"); b = Level("b", 0, "dense", 2)
    >>> sorted(map(str, live_keys(Union(Project(0, a, 3), b))))
    ["('b', 0)", "('π0', Level(tensor='a', mode=0, kind='dense', extent=6, index='k', reverse=False, rows_of=''), 3)"]
    """
    def fixed(x: Seq) -> frozenset:
        if isinstance(x, Project) and x.k == 0:
            # (its own group only: the π0s in its operand are at one group each coordinate of its π1 walks, the
            # loop inside, as that loop's case says: π0(π0(n_A, 3) ⊔ (π0(q_B, 3) ∪ U_p), 2) is at rows of B's
            # part where only U_p is, where π1(q_B, 3) walks nothing)
            return frozenset([x.group_key])
        if isinstance(x, LEAVES):
            return frozenset([x.key])
        # a concatenation's loop iterates its left side only: the right side's π0 is at no group
        kids = (x.a,) if isinstance(x, Concat) else x.children()
        return frozenset().union(*(fixed(c) for c in kids))

    return fixed(s)


def _gone(s: Seq) -> Seq:
    # ∅ even for a dense level (the artifact's Ƒ): an unbound level has no coordinates here, it
    # did not run to its end; as Ƒ it would end a union over it (vstack of CSR and dense rows)
    return Empty(s.size(), str(s))


def _label(side: Seq) -> str:
    return f"|{side.was}|" if side.was else str(side.size())


def _rules(s: Seq):
    """The first applicable Fig. 27 rule of ``s``'s row: (name, result), or None."""
    F, E = Full, EMPTIES
    if isinstance(s, Union):
        if isinstance(s.a, F) or isinstance(s.b, F):
            return "union-full", Full(s.size())
        if isinstance(s.a, Empty):
            return "union-left-empty", s.b
        if isinstance(s.b, Empty):
            return "union-right-empty", s.a
    elif isinstance(s, Intersect):
        if isinstance(s.a, F) or isinstance(s.b, F):
            return "intersect-full", Full(s.size())
        if isinstance(s.a, Empty) or isinstance(s.b, Empty):
            return "intersect-empty", Empty(s.size())
    elif isinstance(s, Product):
        # ordered: a dense inner operand makes an exhausted dense outer one Ƒ, else ∅
        if isinstance(s.a, F) and s.b.dense:
            return "product-full", Full(s.size())
        if isinstance(s.a, E):
            return "product-empty", Empty(s.size())
        if isinstance(s.b, Empty):
            return "product-inner-empty", Empty(s.size())
        if isinstance(s.b, F):
            raise SequenceError(f"{s}: the inner operand of a product ran out for good while the "
                                f"outer one goes on (an inner level shared with another operand)")
    elif isinstance(s, Concat):
        # the notes' fix of Fig. 27's first rule: a done left side leaves the offset right side
        if isinstance(s.a, F) and isinstance(s.b, F):
            return "concat-full", Full(s.size())
        if isinstance(s.a, E) and isinstance(s.b, E):
            return "concat-empty", Empty(s.size())
        if isinstance(s.a, E):
            return "concat-left-done", Offset(s.a.size(), s.b, _label(s.a))
        if isinstance(s.b, E):
            return "concat-right-done", Pad(s.a, s.b.size(), _label(s.b))
    elif isinstance(s, (Offset, Pad)):
        # never dense (a part of the dimension is missing), so ∅ even when a dense X ran out
        if isinstance(s.a, E):
            return ("offset" if isinstance(s, Offset) else "pad") + "-empty", Empty(s.size())
    elif isinstance(s, (Project, Slice, Stride)):
        name = {Project: "projection", Slice: "slice", Stride: "stride"}[type(s)]
        if isinstance(s.a, F):
            return f"{name}-full", Full(s.size())
        if isinstance(s.a, Empty):
            return f"{name}-empty", Empty(s.size())
    return None


def _binds(a: Seq) -> frozenset:
    """What the outer operand ``a`` of a product binds for its inner one: every leaf and π0 group."""
    groups = frozenset(n.group_key for n in walk(a) if isinstance(n, Project) and n.k == 0)
    return live_keys(a) | frozenset(leaf.key for leaf in a.iters()) | groups


def _moved_group(s: Project, defs: frozenset):
    """``π1(X', J)`` when a live π0 group is over ``X'``, what ``X`` became once some of its leaves
    ran out (the loop over ``π0(a ⊔ b, J)`` after ``a``'s end is over ``π0(|a| + b, J)``: a split
    of a concatenation), or simplified where the loops are (a vstack raveled, ``(i_A ⊔ m_B) × (j_A ∪
    j_B)``, is the π0's ``(i_A × j_A) ⊔ (m_B × j_B)``: each row's columns its own operand's), else None."""
    for key in defs:
        if not (isinstance(key, tuple) and len(key) == 3 and key[0] == "π0" and key[2] == s.J):
            continue
        after = key[1]
        gone = s.a.iters() - after.iters()
        rest = without(s.a, gone)
        # (X' was simplified where its loop is, outside the groups that loop binds)
        outside = defs - live_keys(Project(0, after, s.J))
        # (a π1 inside X' follows the group its own π0 walks, ``π1(a ∪ b, 2 @ a ∪ b ∪ c)`` once c ran out in it:
        # the same coordinates as the π1 X has there, which names no group)
        if gone and _ungrouped(_rows_shifted(_per_row(simplify(rest)))) == _ungrouped(_rows_shifted(after)) or \
                _rows_shifted(simplify(rest, outside)) == _rows_shifted(after):
            return Project(1, after, s.J)
    return None


def _per_row(s: Seq) -> Seq:
    """``s`` with each product over a concatenation taken per row (:func:`~.seqrows.concat_per_row`), as the
    loops take it, to compare two forms of one sequence."""
    kids = s.children()
    if not kids:
        return s
    s = rebuild(s, tuple(_per_row(c) for c in kids))
    rows = concat_per_row(s.a, s.b) if isinstance(s, Product) else None
    return s if rows is None else simplify(rows)


def _ungrouped(s: Seq) -> Seq:
    """``s`` with no π1 naming the group it follows (to compare two forms of one sequence).

    >>> from compiler.lattice.sequences import Level
    >>> a, b = (Level(t, 0, "compressed", 4) for t in "ab")
    >>> print(_ungrouped(Project(1, a, 2, Union(a, b))))
    π1(i_a, 2)
    """
    kids = s.children()
    if not kids:
        return s
    s = rebuild(s, tuple(_ungrouped(c) for c in kids))
    return replace(s, group=None) if isinstance(s, Project) and s.group is not None else s


def _unmatched_group(s: Project, defs: frozenset):
    """The operand of a live π0 group of ``s``'s size ``J`` over some of ``s``'s leaves, which ``s``
    could not be matched to (:func:`_moved_group`), else None: ``π1(b, J)`` once ``a`` ran out inside the
    loop over ``π0(a ∪ b, J)``'s group is not that group's π1, nor ∅ (only a π0 that ran out is)."""
    mine = s.a.iters()
    for key in defs:
        if not (isinstance(key, tuple) and len(key) == 3 and key[0] == "π0" and key[2] == s.J):
            continue
        group = key[1]
        gone, left = group.iters() - mine, simplify(s.a)
        # (a group straddling the parts of a concatenation the loops fission is visited by each
        # part's loop: its π1 once the part ran out is ∅ there by design)
        if gone and mine < group.iters() and not isinstance(left, EMPTIES) and not _part_ran_out(group, gone) \
                and simplify(without(group, gone)) == left:
            return group
    return None


def _part_ran_out(s: Seq, gone: frozenset) -> bool:
    """Whether ``gone`` is a whole left part of a concatenation whose loops ``s``'s are fissioned
    into (reached through concatenations, offsets, pads and products' outer operands): the rest of
    a group straddling the part's end is the next loop's, over ``π0(|a| + b, J)``, not a union's
    operand to follow in the group (``π1(a ∪ c, J)`` once ``a`` ran out).

    >>> from compiler.lattice.sequences import Level
    >>> a, b, c = (Level(t, 0, "compressed", n) for t, n in zip("abc", (4, 2, 2)))
    >>> _part_ran_out(Concat(b, c), frozenset([b])), _part_ran_out(Union(a, Concat(b, c)), frozenset([b]))
    (True, False)
    """
    if isinstance(s, Concat):
        if isinstance(simplify(without(s.a, gone)), EMPTIES):
            return True
        return _part_ran_out(s.a, gone) or _part_ran_out(s.b, gone)
    if isinstance(s, (Product, Offset, Pad)):
        return _part_ran_out(s.a, gone)
    return False


def _rows_shifted(s: Seq) -> Seq:
    """``s`` with each product of shifted rows written as a shifted product (``(|a| + m) × j`` is
    ``|a|·|j| + (m × j)``, the same coordinates), and no shift by 0 (what follows an empty part of a
    concatenation), to compare two forms of one sequence."""
    kids = s.children()
    if not kids:
        return s
    s = rebuild(s, tuple(_rows_shifted(c) for c in kids))
    if isinstance(s, (Offset, Pad)) and s.n == 0:
        return s.a
    if isinstance(s, Product) and isinstance(s.a, Offset):
        return Offset(s.a.n * s.b.size(), _rows_shifted(Product(s.a.a, s.b)))
    if isinstance(s, Product) and isinstance(s.a, Pad):
        return Pad(_rows_shifted(Product(s.a.a, s.b)), s.a.n * s.b.size())
    return s


def simplify(s: Seq, defs: frozenset | None = None, log: list | None = None) -> Seq:
    """``s`` simplified bottom-up by Fig. 27's rules, each application appended to ``log``.

    ``defs`` are the live iterator keys (:func:`live_keys` of enclosing loops and locators);
    ``None`` means every level is bound.

    >>> from compiler.lattice.sequences import Level, Product, Union, Empty
    >>> a = Level("a", 0, "compressed", 2); b = Level("b", 0, "compressed", 3)
    >>> c = Level("c", 0, "compressed", 6); log = []
    >>> print(simplify(Union(Product(Empty(2), b), c), log=log))
    i_c
    >>> [r.rule for r in log]
    ['product-empty', 'union-left-empty']
    """
    log = [] if log is None else log
    if isinstance(s, Project) and defs is not None:
        apart = split_fills_apart(s)
        if apart != s:
            # (the other parts' leaves taken out of each product's rows: as the trace prints it)
            apart = simplify(apart)
            log.append(Rewrite("fill-per-row", str(s), str(apart)))
            return simplify(apart, defs, log)
    if isinstance(s, Level) and defs is not None and s.mode and s.parent_key not in defs and not (
            s.dense and below_group(s.parent_key) in defs):
        # (a Dense level below a split's rows is at any row the minor walk inside reaches: kept)
        out = _gone(s)
        log.append(Rewrite("level-not-live", str(s), str(out)))
        return out
    if isinstance(s, Universe) and defs is not None and s.away(frozenset(map(side_key, defs)).__contains__):
        # (a constant or a fill of one part of a concatenation: not there where the loops are at another part)
        out = _gone(s)
        log.append(Rewrite("universe-of-another-part", str(s), str(out)))
        return out
    if isinstance(s, Project) and s.k == 1 and defs is not None and s.group_key not in defs:
        moved = _moved_group(s, defs)
        if moved is not None:
            log.append(Rewrite("projection-follows-its-π0", str(s), str(moved)))
            return simplify(moved, defs, log)
        group = _unmatched_group(s, defs)
        if group is not None:
            # (an operand of the group's union ran out inside the group: the rest walks what is
            # left through the rest of that group, not a group of its own)
            out = Project(1, simplify(s.a, defs, log), s.J, group)
            log.append(Rewrite("projection-stays-in-its-group", str(s), str(out)))
            return simplify(out, defs, log)
        out = _gone(s)
        log.append(Rewrite("projection-not-live", str(s), str(out)))
        return out
    kids = s.children()
    if not kids:
        return s
    if isinstance(s, Product):
        a = simplify(s.a, defs, log)
        if isinstance(a, Concat) and defs is not None and any(isinstance(n, (Union, Concat)) for n in walk(s.b)):
            out = Concat(Product(a.a, s.b), Product(a.b, s.b))
            log.append(Rewrite("product-over-concat", str(rebuild(s, (a, s.b))), str(out)))
            return simplify(out, defs, log)
        rows = concat_per_row(a, s.b) if defs is not None else None
        if rows is not None:
            log.append(Rewrite("concat-per-row", str(rebuild(s, (a, s.b))), str(rows)))
            return simplify(rows, defs, log)
        # every leaf of the outer operand binds the inner one somewhere in the product's loops:
        # a concatenation's right side too, though its loop iterates only the left side (and a
        # π0 there binds its π1's group: its π1 was dropped, losing the right side's entries)
        inner = None if defs is None else defs | _binds(a)
        new = (a, simplify(s.b, inner, log))
    else:
        new = tuple(simplify(c, defs, log) for c in kids)
    if new != kids:
        s = rebuild(s, new)
    hit = _rules(s)
    if hit is None:
        return s
    name, out = hit
    log.append(Rewrite(name, str(s), str(out)))
    return simplify(out, defs, log) if out.children() else out


# -- the lattice -----------------------------------------------------------------------------------


@serialize.node
@dataclass(frozen=True)
class SeqEdge:
    """An edge: ``removed`` ran out; the state goes to point ``target`` (or ends, ``result`` ∅/Ƒ),
    by the Fig. 27 ``rules`` that simplified what was left (in the order they first applied)."""

    removed: Seq
    target: int | None
    result: Seq
    sub_point: bool
    rules: tuple = ()


@serialize.node
@dataclass(frozen=True)
class SeqPoint:
    """A lattice point: its sequence, its edges, its sub-points (itself first, most specific first);
    ``writes_fill``: every case of it and of the points after it writes the result's fill, so it
    gets no loop (:func:`drop_fill_points`)."""

    seq: Seq
    edges: tuple
    subs: tuple
    writes_fill: bool = False


def loop_tag(index, seq) -> str:
    """The provenance tag of the code of the loop over ``index`` iterating ``seq``, and of its
    lattice point: ``lattice:<index>:<sequence>`` with no spaces (a part's tags are a list
    separated by spaces: ``k_A ⊔ l_B`` made three tags of one).

    >>> from compiler.lattice.sequences import Level, Union
    >>> loop_tag("i", Union(Level("a", 0, "compressed", 4), Level("b", 0, "compressed", 4)))
    'lattice:i:i_a∪i_b'
    """
    return f"lattice:{index}:{''.join(str(seq).split())}"


@serialize.node
@dataclass
class SeqLattice:
    """The lattice of a sequence: points in topological order (point 0 is the root)."""

    seq: Seq
    points: list
    rewrites: list = field(default_factory=list)
    defs: tuple = ()

    @property
    def merged(self) -> bool:
        """Whether its one point is a merged union's loop, or a merged loop over a π0 or π1 of one, run until all
        its operands ran out (:meth:`compiler.lattice.seqcfir.Compiler.merged` and
        :meth:`~compiler.lattice.seqcfir.Compiler.merged_split`, which record the rewrite)."""
        return any(getattr(r, "rule", None) in ("merged-union", "merged-split", "one-case") for r in self.rewrites)

    def text(self, ascii: bool = False) -> str:
        lines = [f"lattice of {self.seq.text(ascii)}"]
        until = "; one loop until all ran out" if self.merged else ""
        for n, p in enumerate(self.points):
            subs = " ".join(f"p{k}" for k in p.subs)
            quiet = (", writes the fill: no loop" if p.writes_fill else "") + until
            lines.append(f"p{n} {p.seq.text(ascii)}  (sub-points {subs}{quiet})")
            for e in p.edges:
                to = f"p{e.target} {e.result.text(ascii)}" if e.target is not None else e.result.text(ascii)
                arrow = "->" if e.sub_point or e.target is None else "..>"
                lines.append(f"  -[{e.removed.text(ascii)}]{arrow} {to}")
        return "\n".join(lines)

    def pretty(self) -> str:
        return self.text()

    def printed_parts(self, index: str) -> tuple[str, dict]:
        """The text (of the lattice of loop ``index``) and where its heading is printed
        (``{line: [[start, end, about, role]]}``, role ``lattice``, as a trace step records it);
        its points are recorded with their tags (:meth:`point_spans`).

        >>> from compiler.lattice.sequences import Level
        >>> text, parts = build_seq_lattice(Level("a", 0, "compressed", 4)).printed_parts("i")
        >>> parts
        {'1': [[0, 14, {'index': 'i'}, 'lattice']]}
        """
        text = self.text()
        return text, {"1": [[0, len(text.splitlines()[0]), {"index": str(index)}, "lattice"]]}

    def point_spans(self, index: str) -> dict[str, list[list]]:
        """``{line: [[start, end, tag, "point"]]}``: where each point's sequence is printed, with the
        tag of the loop that iterates it (``lattice:<index>:<sequence>``, as the emitter tags it)."""
        out, n = {}, 1
        for k, p in enumerate(self.points):
            n += 1
            start = len(f"p{k} ")
            out[str(n)] = [[start, start + len(p.seq.text()), loop_tag(index, p.seq), "point"]]
            n += len(p.edges)
        return out

    def node_tags(self, index: str) -> dict[str, list[str]]:
        """``{node id: tags}`` of the drawing (:meth:`dot`, whose node ``p<n>`` is point ``n``): the
        tag of the loop that iterates each point (``lattice:<index>:<sequence>``, as the emitter
        tags its code), recorded as the artifact's ``data["node_tags"]`` so the explorer colours a
        point by the C it produced and links the two without reading its label.

        >>> from compiler.lattice.sequences import Level, Concat
        >>> a, b = Level("a", 0, "compressed", 3), Level("b", 0, "compressed", 2)
        >>> build_seq_lattice(Concat(a, b)).node_tags("k")
        {'p0': ['lattice:k:i_a⊔i_b'], 'p1': ['lattice:k:|i_a|+i_b']}
        """
        return {f"p{n}": [loop_tag(index, p.seq)] for n, p in enumerate(self.points)}

    def dot(self) -> str:
        """Points labelled with their order and sequence; edges with the removed sequence and the
        Fig. 27 rules that simplified what was left, dotted to a point that is not a sub-point (a
        concatenation's offset side); what simplified to ∅ or Ƒ is no point (no loop runs it),
        drawn crossed out as a lattice's omitted points are.

        >>> from compiler.lattice.sequences import Level, Concat
        >>> a, b = Level("a", 0, "compressed", 3), Level("b", 0, "compressed", 2)
        >>> print("\\n".join(line.strip() for line in build_seq_lattice(Concat(a, b)).dot().splitlines() if "->" in line))
        p0 -> p1 [label="i_a\\nconcat-left-done", style=dotted];
        p1 -> empty [label="i_b\\noffset-empty"];
        """
        def q(t):
            return t.replace("\\", "\\\\").replace('"', '\\"')

        def label(e: SeqEdge) -> str:
            return q(str(e.removed)) + "".join(f"\\n{q(r)}" for r in e.rules)

        lines = ["digraph seqlattice {", '  node [shape=box, fontname="monospace"];']
        ends = set()
        until = "\\nuntil all ran out" if self.merged else ""
        for n, p in enumerate(self.points):
            # (a point that writes only the fill has no loop: drawn dashed)
            look = 'style=dashed' if p.writes_fill else 'style=filled, fillcolor="#dbeafe"'
            lines.append(f'  p{n} [label="{n}: {q(str(p.seq))}{until}", {look}];')
        for n, p in enumerate(self.points):
            for e in p.edges:
                if e.target is None:
                    end = "full" if isinstance(e.result, Full) else "empty"
                    if end not in ends:
                        ends.add(end)
                        lines.append(f'  {end} [label="{e.result}\\nno loop", style=dashed, color="#dc2626", '
                                     f'fontcolor="#dc2626"];')
                    lines.append(f'  p{n} -> {end} [label="{label(e)}"];')
                else:
                    style = "" if e.sub_point else ", style=dotted"
                    lines.append(f'  p{n} -> p{e.target} [label="{label(e)}"{style}];')
        lines.append("}")
        return "\n".join(lines)


def boundaries(s: Seq) -> list:
    """``(position, concatenation)`` for each place, in ``s``'s coordinates, where the loops
    over a concatenation inside ``s`` change from its first operand to its second.

    >>> from compiler.lattice.sequences import Level, Concat, Slice
    >>> a, b = Level("a", 0, "compressed", 3), Level("b", 0, "compressed", 4)
    >>> [at for at, _ in boundaries(Slice(Concat(a, b), 1, 7, 2))]
    [1]
    """
    if isinstance(s, Concat):
        n = s.a.size()
        return [(n, s)] + boundaries(s.a) + [(n + x, c) for x, c in boundaries(s.b)]
    if isinstance(s, (Union, Intersect)):
        return boundaries(s.a) + boundaries(s.b)
    if isinstance(s, Slice):
        return [(-(-(x - s.start) // s.step), c) for x, c in boundaries(s.a) if s.start < x < s.stop]
    if isinstance(s, Offset):
        return [(x + s.n, c) for x, c in boundaries(s.a)]
    if isinstance(s, Pad):
        return boundaries(s.a)
    if isinstance(s, Product):
        return [(x * s.b.size(), c) for x, c in boundaries(s.a)]
    if isinstance(s, Project) and s.k == 0:
        return [(x // s.J, c) for x, c in boundaries(s.a)]
    return []


def unsupported(seq: Seq, straddle: bool = False) -> str | None:
    """Why the lattice of ``seq`` cannot be iterated by the paper's loops, or None (``straddle``:
    a group may straddle a concatenation's operands, see below).

    * a union or concatenation inside a product's right operand (unless its left operand is a
      concatenation, which :func:`simplify` distributes the product over (a part left with a union
      there, the loop's product nests: :func:`~compiler.lattice.seqproductnest.over_parts`), or the right operand is a
      concatenation of parts reading their own tensors, which it makes a union of one product per
      part; a product that is a loop's whole sequence, or is merged with its other operands into one
      first, never comes here: the CFIR nests its operands' loops, :mod:`compiler.lattice.seqproductnest`):
      edges come only from the left operand (Fig. 13), so the right one's operands running out
      separately is no state of the lattice, and the drop-out loop would skip the other operand's rest
      of the fiber;
    * a projection ``π0(a ⊔ b, J)`` with ``J`` not dividing ``|a|``: a group straddles the two
      fissioned loops and is visited by both, each over its own part of the group: right where
      the loop's body writes the group's entries one by one (``straddle``: the caller found no
      temporary in it, and the concatenation is the projection's operand, or a part of one, or what
      a lattice point leaves of one: ``stack([A, B]).reshape(5, 8)`` of 4x5 matrices), wrong where
      it reduces them into a temporary first, which the second visit would start again from its
      identity (and not supported under a product or a slice);
      likewise ``π0((a ∪ b) × c, J)``, whose group the loop after ``a`` runs out would visit again,
      and a straddling split in a union (``stack([A, B]).reshape(5, 8) + 1``), whose group the first
      part's loop writes whole;

    >>> from compiler.lattice.sequences import Level, Product, Union
    >>> a, b, c = (Level(t, 0, "compressed", 2) for t in "abc")
    >>> print(unsupported(Product(a, Union(b, c))))
    i_a × (i_b ∪ i_c): a union or concatenation (i_b ∪ i_c) in the right operand of a product is not supported (the lattice takes edges only from the left operand)
    """
    for node in walk(seq):
        if isinstance(node, Product):
            for inner in walk(node.b):
                if isinstance(inner, (Union, Concat)):
                    return (f"{node}: a union or concatenation ({inner}) in the right operand of a product "
                            f"is not supported (the lattice takes edges only from the left operand)")
        if isinstance(node, Stride) and any(isinstance(x, Concat) for x in walk(node.a)):
            return (f"{node}: a split's major index walked inside the loop over its minor one, of a "
                    f"concatenation, is not supported (each group is searched in one walk of its operand)")
        if isinstance(node, Project) and node.k == 0:
            # (the concatenations the group's loops fission directly: a concat of concats, or what is
            # left of one once an operand is done, as a point of its lattice is)
            top, stack = [], [node.a]
            while stack:
                x = stack.pop()
                if isinstance(x, Concat):
                    top.append(x)
                    stack += [x.a, x.b]
                elif isinstance(x, (Pad, Offset)):
                    stack.append(x.a)
            inside = {id(x) for x in walk(node.a)}
            # (a union around the split, with a universe for `+ 1` or another operand, is there at each
            # coordinate of the group: the first part's loop writes the whole group, and the second
            # part's loop, finding the union moved past it, drops its own part of the group)
            around = next((x for x in walk(seq) if isinstance(x, Union) and id(x) not in inside
                           and any(y is node for y in walk(x))), None)
            for at, cat in boundaries(node.a):
                if at % node.J and not (straddle and any(cat is c for c in top)):
                    return (f"{node}: the groups of {node.J} straddle position {at}, where {cat} moves "
                            f"on to its second operand; such a split of a concatenation is not supported "
                            f"where a group is reduced (each loop would reduce its own part of it)")
                if at % node.J and around is not None:
                    return (f"{node}: the groups of {node.J} straddle position {at}, where {cat} moves "
                            f"on to its second operand, and the split is in a union ({around}): such a split "
                            f"of a concatenation is not supported there (the first part's loop writes the "
                            f"whole group, and the union has moved past it when the second part's loop "
                            f"comes to the group)")
            for inner in walk(node.a):
                if isinstance(inner, Product) and any(isinstance(u, Union) for u in walk(inner.a)):
                    return (f"{node}: a split of a product over a union ({inner}) is not supported (a "
                            f"group would be left half drained when an operand of the union runs out)")
    return None


def build_seq_lattice(seq: Seq, defs=frozenset(), straddle: bool = False) -> SeqLattice:
    """The lattice of ``seq`` (Fig. 12), top-down, with memoized points.

    ``defs``: the live iterator keys of enclosing loops (a level below one of them, or a π1 of
    their π0, is bound there); None: every level is taken as bound. ``straddle``: the loop writes
    each entry of a group as it visits it (:func:`unsupported`).
    """
    why = unsupported(seq, straddle)
    if why:
        raise SequenceError(why)
    log: list = []
    defs = None if defs is None else frozenset(defs)
    root = simplify(seq, defs, log)
    found: dict = {}      # sequence -> discovery number
    raw: list = []        # per discovered point: [(removed, child sequence)]

    def construct(s: Seq) -> int:
        if s in found:
            return found[s]
        found[s] = len(raw)
        raw.append((s, []))
        me = found[s]
        for sub in edges(s):
            r = remove(sub, s)
            log.append(Rewrite("remove-" + ("full" if sub.dense else "empty"), f"{sub} from {s}", str(r)))
            for c in covered(sub, s):
                r = remove(c, r)
                log.append(Rewrite("remove-covered", f"{c} with {sub}", str(r)))
            for c in walking_its_rows(sub, s):
                r = remove(c, r)
                log.append(Rewrite("remove-same-rows", f"{c} with {sub}", str(r)))
            before = len(log)
            t = simplify(r, defs, log)
            raw[me][1].append((sub, t, tuple(dict.fromkeys(w.rule for w in log[before:]))))
            if not isinstance(t, EMPTIES):
                construct(t)
        return me

    if isinstance(root, EMPTIES):
        return SeqLattice(seq, [], log, tuple(sorted(map(str, defs or ()))))
    construct(root)
    # topological order: reverse post-order, children in edge order
    order: list = []
    seen: set = set()

    def visit(n: int):
        seen.add(n)
        for _, t, _ in raw[n][1]:
            if not isinstance(t, EMPTIES) and found[t] not in seen:
                visit(found[t])
        order.append(n)

    visit(0)
    order.reverse()
    pos = {n: k for k, n in enumerate(order)}

    def descendants(n: int) -> set:
        out, todo = set(), [n]
        while todo:
            m = todo.pop()
            for _, t, _ in raw[m][1]:
                if not isinstance(t, EMPTIES) and found[t] not in out:
                    out.add(found[t])
                    todo.append(found[t])
        return out

    points = []
    for n in order:
        s, outs = raw[n]
        mine = s.iterated()
        below = sorted((d for d in descendants(n) if d != n and raw[d][0].iterated() <= mine), key=pos.get)
        # (a case only for what can be at the loop's coordinate: inside the loop over π0(a ∪ b, J)
        # the group is there whichever operand is, so π0(a, J) is no case of it, only the loop after)
        can = presences(s)
        subs = [n] + [d for d in below if raw[d][0].iterated() in can]
        es = tuple(SeqEdge(sub, None if isinstance(t, EMPTIES) else pos[found[t]], t,
                           not isinstance(t, EMPTIES) and found[t] in below, rules)
                   for sub, t, rules in outs)
        points.append(SeqPoint(s, es, tuple(pos[d] for d in subs)))
    return SeqLattice(seq, points, log, tuple(sorted(map(str, defs or ()))))


def drop_fill_points(L: SeqLattice, quiet, why: str = "") -> SeqLattice:
    """``L`` with no loop for each point of ``quiet`` (positions) that writes only the result's fill,
    every point after it too (a union's operand whose every case is the fill once the others ran out:
    ``x - y`` of a NaN-filled ``x`` where only ``y`` is left); each recorded (``writes-fill``, with
    ``why``). A point with a point after it that writes more keeps its loop (the loops after it start
    where it ends). The loops run as before minus those points' (:func:`~compiler.lattice.seqcheck.check_seq_lattice` checks that
    they visit every other coordinate once, with the same case).

    >>> from compiler.lattice.sequences import Level, Union
    >>> a = Level("a", 0, "compressed", 5); b = Level("b", 0, "compressed", 5)
    >>> print(drop_fill_points(build_seq_lattice(Union(a, b)), {2}).text().splitlines()[-2])
    p2 i_b  (sub-points p2, writes the fill: no loop)
    """
    points = list(L.points)
    log = list(L.rewrites)
    for n in reversed(range(len(points))):
        p = points[n]
        after = [e.target for e in p.edges if e.target is not None]
        if n in quiet and all(points[t].writes_fill for t in after):
            points[n] = replace(p, writes_fill=True)
            log.append(Rewrite("writes-fill", str(p.seq), "no loop" + (f": {why}" if why else "")))
    return replace(L, points=points, rewrites=log)


def presences(s: Seq) -> frozenset:
    """The sets of iterated leaves that can be at a coordinate of ``s`` together (what
    :func:`present_leaves` can give): the cases a loop over ``s`` may need. A π0's group is at
    its coordinate whichever of its operand's leaves gave it, so it has one, all of them.

    >>> from compiler.lattice.sequences import Level, Union
    >>> a, b = Level("a", 0, "compressed", 8), Level("b", 0, "compressed", 8)
    >>> sorted(sorted(str(x) for x in p) for p in presences(Union(a, b)))
    [['i_a'], ['i_a', 'i_b'], ['i_b']]
    >>> [sorted(str(x) for x in p) for p in presences(Project(0, Union(a, b), 4))]
    [['i_a', 'i_b']]
    """
    if isinstance(s, LEAVES):
        return frozenset([frozenset([s])])
    if isinstance(s, EMPTIES):
        return frozenset()
    if isinstance(s, Project) and s.k == 0:
        return frozenset([s.a.iterated()])
    if isinstance(s, (Union, Intersect, Product)):
        a, b = presences(s.a), presences(s.b)
        both = frozenset(x | y for x in a for y in b)
        return a | b | both if isinstance(s, Union) else both
    # (a concatenation's loop, a slice, an offset or pad, a π1: what their operand's can be)
    return presences(s.a)




__all__ = ["edges", "remove", "simplify", "live_keys", "loop_tag", "SeqEdge", "SeqPoint", "SeqLattice",
           "build_seq_lattice", "drop_fill_points", "presences", "unsupported", "boundaries", "ABSENT"]
