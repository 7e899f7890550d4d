"""Merged unions: the loop over a union whose operands feed independent parts of its body, as one loop.

The lattice of a union of ``n`` operands has ``2^n - 1`` points, and its first point ``2^(n-1)`` cases: a stack
along axis 1 of ``n`` COO matrices walks the union of their rows, and each case holds the parts of the matrices
at that row, so the code grows as ``2^n`` (a stack of six: 137,221 lines of C). Where each operand is read only
in parts of the body that read no other operand, the loop is one (Finch's stepper over the operands of a
union: each step at the least coordinate of the operands left), run until all of them ran out: ``n`` parts of
code, not ``2^(n-1)`` cases of them (:func:`tested_parts`). A part that reads its operand only in loops over the
operand's children (a matrix's row) runs at every step: under an operand not at the coordinate, the children's
fibers are empty (the emitter's and the interpreter's ``absent``), so it computes what it does with a row of
fill, as where the operand is absent. Any other part is tested on its own operand there, a switch case (a part
reading several, ``a + b``, a case for each set of them there, as their own lattice's points), and
where that operand is not runs what the body compiled with no operand there has in its place (nothing, mostly:
a matrix of fill 0 stacked), under the universe the loop walks beside the levels. An operand may also be one
tensor's levels walked row by row (:func:`row_walk`: a part of an hstack's ravel, ``j_B × ((1 + m_B) + 1)``); an
assignment reading every operand is then a case for each where no two are ever at one coordinate (the parts of
a concatenation), not their lattice's ``2^n - 1`` points. A split of such a union (the reshape of an hstack's ravel,
into two axes or more) merges each of its loops (:func:`merged_split`): a π0's at the group of the least coordinate
left, a π1's at the least one in that group, each part tested there (:func:`in_group_cases`), each operand's
coordinate read through the loop's projections (:func:`chained`).

>>> from compiler.lattice.seqcfirvalues import Read
>>> from compiler.lattice.seqstmts import Assign, Block, Skip
>>> from compiler.lattice.sequences import Level, Union
>>> a, b, c = (Level(t, 0, "compressed", 4) for t in "abc")
>>> body = Block(tuple(Assign(f"out{t.tensor}", ("i",), Read(t.tensor, (t,))) for t in (a, b, c)))
>>> print(tested_parts(body, Skip(), "i", {t.tensor: t for t in (a, b, c)}))
switch i
case i_a:
  outa(i) = a(i_a)
switch i
case i_b:
  outb(i) = b(i_b)
switch i
case i_c:
  outc(i) = c(i_c)
"""

from __future__ import annotations

from dataclasses import replace
from functools import reduce
from itertools import combinations

from .seqcfirvalues import Read, value_children
from .seqstmts import Assign, Bind, Block, Reduce, Skip, Stmt, Switch, While
from .sequences import Intersect, Level, Offset, Pad, Product, Project, Seq, Union, Universe, can_meet, walk

#: the fewest operands (levels, intersections of levels) a union merges at: the lattice of two is the paper's
#: three loops (an hstack's rows), no longer than the merged loop and without its tests
MERGE_FROM = 3


def union_operands(s: Seq) -> tuple | None:
    """The operands of ``s``, a union of levels, universes and intersections of levels (None: not one). An
    intersection is one operand: its iterator meets its levels at each coordinate it visits.

    >>> from compiler.lattice.sequences import Intersect, Level, Union
    >>> a, b, c, d = (Level(t, 0, "compressed", 4) for t in "abcd")
    >>> [str(x) for x in union_operands(Union(Union(a, b), c))], union_operands(a)
    (['i_a', 'i_b', 'i_c'], None)
    >>> [str(x) for x in union_operands(Union(Union(Intersect(a, b), c), d))]
    ['i_a ∩ i_b', 'i_c', 'i_d']
    """
    if not isinstance(s, Union):
        return None
    out = []
    for x in (s.a, s.b):
        more = (x,) if isinstance(x, (Level, Universe)) or _met(x) or row_walk(x) else union_operands(x)
        if more is None:
            return None
        out += more
    return tuple(out)


def row_walk(s: Seq) -> bool:
    """Whether ``s`` is one tensor's levels walked as one sequence, row by row: a product of its levels, each
    maybe shifted (``j_B × ((1 + m_B) + 1)``: the part B of a concatenation's ravel), whose iterator steps
    through its coordinates in increasing order as a level's does (a merged loop's operand).

    >>> from compiler.lattice.sequences import Level, Offset, Product
    >>> j, l = Level("a", 0, "compressed", 3), Level("a", 1, "compressed", 2, "j")
    >>> row_walk(Product(j, Offset(2, l))), row_walk(Product(j, Level("b", 0, "compressed", 2)))
    (True, False)
    """
    if not isinstance(s, Product):
        return False
    leaves = []

    def shifted(x) -> bool:
        while isinstance(x, (Offset, Pad)):
            x = x.a
        if isinstance(x, Product):
            return shifted(x.a) and shifted(x.b)
        leaves.append(x)
        return isinstance(x, Level)
    return shifted(s) and len({x.tensor for x in leaves}) == 1 and len({x.mode for x in leaves}) == len(leaves)


def _met(s: Seq) -> bool:
    """Whether ``s`` is an intersection of levels (nested ones too)."""
    return isinstance(s, Intersect) and all(isinstance(x, Level) or _met(x) for x in (s.a, s.b))


def operand_leaves(op: Seq) -> tuple:
    """The leaves of a merged loop's operand (an intersection's levels; a level or universe itself).

    >>> from compiler.lattice.sequences import Intersect, Level
    >>> a, b = (Level(t, 0, "compressed", 4) for t in "ab")
    >>> [str(x) for x in operand_leaves(Intersect(a, b))], [str(x) for x in operand_leaves(a)]
    (['i_a', 'i_b'], ['i_a'])
    """
    if isinstance(op, Intersect):
        return operand_leaves(op.a) + operand_leaves(op.b)
    if row_walk(op):   # (outermost first)
        return tuple(sorted((x for x in op.iters() if isinstance(x, Level)), key=lambda x: x.mode))
    return (op,)


def operand_at(op: Seq) -> Seq:
    """The sequence whose coordinate is the merged loop's operand ``op``'s: an intersection's first level (its
    levels met), else ``op`` itself."""
    return operand_leaves(op)[0] if isinstance(op, Intersect) else op


def everywhere(x: Seq, tested=frozenset()) -> bool:
    """Whether the operand ``x`` of a merged loop is at every coordinate the loop visits: a universe, or a dense
    level none of whose parent levels is ``tested`` (the leaf keys the merged loops around test: a dense level
    below one of them is empty where it is not there).

    >>> from compiler.lattice.sequences import Level
    >>> j = Level("a", 1, "dense", 4, "j")
    >>> everywhere(Level("a", 0, "dense", 4)), everywhere(j), everywhere(j, {("a", 0)})
    (True, True, False)
    """
    if isinstance(x, (Intersect, Product)):
        return False    # (its levels meet where the loop visits, a row walk's step through rows: tested, a case)
    return isinstance(x, Universe) or x.kind == "dense" and not any((x.tensor, m) in tested for m in range(x.mode))


def mergeable(s: Seq) -> tuple | None:
    """The levels of ``s`` if its loop may merge (:data:`MERGE_FROM` or more operands, levels or intersections of
    them, of as many tensors as levels; the universes beside them, the broadcasts of parts whose fill is not the
    result's, the loop walks as levels, and the first is its default case, or else the first dense level); else
    None."""
    ops = union_operands(s)
    if ops is None:
        return None
    levels = tuple(x for op in ops for x in operand_leaves(op) if isinstance(x, Level))
    # (each tensor one operand's, once in an intersection; a row walk's levels are all one tensor's)
    tensors = [{x.tensor for x in operand_leaves(op)} for op in ops if not isinstance(op, Universe)]
    if len(tensors) < MERGE_FROM or sum(map(len, tensors)) > len(set().union(*tensors)) or \
            any(isinstance(op, Intersect) and len(operand_leaves(op)) > len(t) for op, t in
                zip((op for op in ops if not isinstance(op, Universe)), tensors)):
        return None
    return levels


def merged_split(s: Seq) -> Seq | None:
    """The union under ``s`` where ``s`` is a projection (π0 or π1) of a union that merges (:func:`mergeable`) none
    of whose operands is at every coordinate, or of π1s of one (a split of a split's minor index): a split of the
    ravel of an hstack of three or more parts, into two axes or more, whose loops each merge (the least coordinate
    of the operands left, divided into the split's groups), not a lattice of ``2^n - 1`` points each, nested; else
    None.

    >>> from compiler.lattice.sequences import Level, Project, Universe
    >>> a, b, c = (Level(t, 0, "compressed", 12) for t in "abc")
    >>> u = Union(Union(a, b), c)
    >>> print(merged_split(Project(0, u, 3)), "/", merged_split(Project(0, Project(1, u, 6), 3)))
    (i_a ∪ i_b) ∪ i_c / (i_a ∪ i_b) ∪ i_c
    >>> merged_split(Project(1, Union(Union(a, b), Universe(12)), 3)) is None
    True
    """
    if not isinstance(s, Project):
        return None
    base = s.a
    while isinstance(base, Project):
        if base.k != 1:
            return None
        base = base.a
    if mergeable(base) is None:
        return None
    return None if any(everywhere(op) for op in union_operands(base)) else base


def chained(s: Seq, op: Seq) -> Seq:
    """``s``, a projection of a union or of π1s of one (:func:`merged_split`), with the union replaced by its
    operand ``op``, each π1 in the group of the union's: the coordinate ``op`` is at in ``s``'s loop.

    >>> from compiler.lattice.sequences import Level, Project
    >>> a, b = (Level(t, 0, "compressed", 12) for t in "ab")
    >>> print(chained(Project(0, Project(1, Union(a, b), 6), 3), a))
    π0(π1(i_a, 6 @ i_a ∪ i_b), 3)
    """
    if not isinstance(s, Project):
        return op
    inner = chained(s.a, op)
    if s.k == 0:
        return Project(0, inner, s.J)
    return Project(1, inner, s.J, s.group if s.group is not None else s.a)


def in_group_cases(s: Stmt, index: str, p: Project) -> Stmt:
    """``s``, the body of a merged loop over ``p`` (a π1 of a union, :func:`merged_split`), with each case of its
    switches over ``index``, an operand of the union, tested in the group: ``π1(op, J @ union)``
    (:func:`chained`)."""
    if isinstance(s, Switch) and s.index == index:
        return replace(s, cases=tuple((chained(p, q), in_group_cases(b, index, p)) for q, b in s.cases))
    if isinstance(s, Switch):
        return replace(s, cases=tuple((q, in_group_cases(b, index, p)) for q, b in s.cases))
    if isinstance(s, Block):
        return Block(tuple(in_group_cases(x, index, p) for x in s.stmts))
    if isinstance(s, While):
        return replace(s, body=in_group_cases(s.body, index, p))
    return s


def read_in_group_loops(s: Stmt, tensors: frozenset, key) -> bool:
    """Whether ``s`` reads or walks ``tensors`` only inside merged loops over a π1 of the group ``key``: the body of
    a merged loop over that group's π0, whose operands the π1 loops inside walk to the group's end."""
    if _group_loop(s, key):
        return True
    if isinstance(s, Block):
        return all(read_in_group_loops(x, tensors, key) for x in s.stmts)
    # (a loop's head, a switch's cases: what it walks or tests itself)
    head = replace(s, body=Skip()) if isinstance(s, (While, Bind)) else \
        replace(s, cases=tuple((q, Skip()) for q, _ in s.cases)) if isinstance(s, Switch) else s
    return not _tensors_read(head) & tensors and all(read_in_group_loops(x, tensors, key) for x in s.children())


def walks_group(s: Stmt, ops: tuple, key) -> bool:
    """Whether ``s`` runs, unconditionally, a merged loop over a π1 of the group ``key`` (or over a projection of
    one: a split of the group) walking every operand of ``ops``: after it, none of them is left in the group."""
    if isinstance(s, Block):
        return any(walks_group(x, ops, key) for x in s.stmts)
    return _group_loop(s, key) and set(ops) <= set(union_operands(merged_split(s.seq)))


def _group_loop(s: Stmt, key) -> bool:
    """Whether ``s`` is a merged loop over a π1 of the group ``key``, or a projection of one: it runs until none of
    its operands is left in that group."""
    return isinstance(s, While) and s.merged and merged_split(s.seq) is not None and \
        any(isinstance(n, Project) and n.k == 1 and n.group_key == key for n in walk(s.seq))


def tested_parts(s: Stmt, gone, index: str, leaf_of: dict, default: Seq | None = None, alone=None,
                 term_of: dict | None = None) -> Stmt | None:
    """The body of a merged loop over ``index``: ``s`` (compiled with every operand there) with each part that
    reads one operand, ``leaf_of``'s tensors, run where that operand's leaf is at ``index`` (a switch case);
    else what ``gone()`` (the body compiled with none of them there, a :class:`Stmt` or a function making one)
    has in its place, under the ``default`` case (the universe the loop walks), if it has anything. A part that
    reads its operand only in loops over its children is not tested. An assignment reading several of them
    (``a + b`` of vectors stacked) has a case for each set of them there, most first, as their lattice's points:
    ``alone(s, absent)`` is ``s`` compiled without the tensors ``absent``. ``term_of``: each tensor's operand of
    the union where it is not its leaf (an intersection's, tested as one). None: the body is not made of such
    parts (a statement reads several of them and is not an assignment, or none and differs from ``gone``'s)."""
    read = _tensors_read(s) & leaf_of.keys()
    if read and _under_children(s, leaf_of, frozenset()):
        # (it reads them only in loops over their children, a concatenation's columns or a merged loop inside:
        # a child's fiber is empty under a leaf not at index, where the part computes what it does with its
        # tensor's row empty, its fill)
        return s
    gone = gone() if callable(gone) else gone
    if not read:
        return s if s == gone else None
    if isinstance(s, While) and not _tensors_read(replace(s, body=Skip())) & leaf_of.keys():
        # (a loop over none of them, a stack's dense axis, runs as it did, its body tested: the later loops of
        # its series continue the cursors the first one set)
        if isinstance(gone, While) and replace(gone, body=Skip()) == replace(s, body=Skip()):
            gone = gone.body
        elif not isinstance(gone, Skip):
            return None
        body = tested_parts(s.body, gone, index, leaf_of, default, alone, term_of)
        return None if body is None else replace(s, body=body)
    # (a part reading all of them is no part: the body is their lattice's, whose loops test less as they run out)
    # (an intersection's tensors are one operand, tested as one: its levels are at one coordinate or it is not)
    term_of = term_of or leaf_of
    terms = {term_of[t] for t in read}
    # (a part reading them all where no two are ever at one coordinate, the parts of a concatenation's ravel, is a
    # case for each: not their lattice's)
    apart = all(not can_meet(a, b) for a, b in combinations(terms, 2))
    if len(terms) == 1 or isinstance(s, (Assign, Reduce)) and alone is not None and _read_at(s.value, leaf_of) and \
            (len(terms) < len(set(term_of.values())) or apart):
        ops = sorted(terms, key=lambda op: sorted(leaf.tensor for leaf in operand_leaves(op)))
        cases = []
        for n in range(len(ops), 0, -1):
            for there in combinations(ops, n):
                if n > 1 and any(not can_meet(a, b) for a, b in combinations(there, 2)):
                    continue   # (never at one coordinate: no case)
                absent = frozenset(leaf.tensor for op in ops if op not in there for leaf in operand_leaves(op))
                body = s if n == len(ops) else alone(s, absent)
                if not isinstance(body, Skip):
                    cases.append((reduce(Union, there), body))
        if isinstance(gone, Skip):
            return Switch(index, tuple(cases)) if cases else Skip()
        if default is None or _tensors_read(gone) & leaf_of.keys():
            return None
        return Switch(index, tuple(cases) + ((default, gone),))
    if isinstance(s, Block):
        return _tested_block(s, gone, index, leaf_of, default, alone, term_of)
    return None


tested_parts.__test__ = False   # (not a test, for pytest given this file: its name starts with "test")


def _read_at(e, leaf_of: dict) -> bool:
    """Whether each read in the value ``e`` of a tensor of ``leaf_of`` is at its leaf, no level below it."""
    if isinstance(e, Read) and e.tensor in leaf_of and (not e.levels or e.levels[-1] != leaf_of[e.tensor]):
        return False
    return all(_read_at(x, leaf_of) for x in value_children(e))


def _tested_block(s: Block, gone: Stmt, index: str, leaf_of: dict, default, alone, term_of) -> Stmt | None:
    """:func:`tested_parts` of a block: each statement beside the one of ``gone`` in its place (a loop with the
    same head; Skip where ``gone`` has none: its compiler drops what writes the fill)."""
    left = list(gone.stmts if isinstance(gone, Block) else () if isinstance(gone, Skip) else (gone,))
    parts = []
    for x in s.stmts:
        mine = next((y for y in left if y == x or isinstance(x, While) and isinstance(y, While)
                     and replace(y, body=Skip()) == replace(x, body=Skip())), Skip())
        if not isinstance(mine, Skip):
            left.remove(mine)
        part = tested_parts(x, mine, index, leaf_of, default, alone, term_of)
        if part is None:
            return None
        parts.append(part)
    # (a statement only where none of them is, unmatched: not a part of one)
    return None if left else Block(tuple(parts))


def _under_children(s: Stmt, leaf_of: dict, walked: frozenset) -> bool:
    """Whether every statement of ``s`` reads each tensor of ``leaf_of`` only inside a loop of ``s`` that walks a
    level below its leaf, not dense (``walked``: the tensors the loops around do), none located, and reads some tensor or is
    inside such a loop (a fill written where a child is not); the other tensors are at every coordinate of the
    merged loop (a dense level's, a located one's)."""
    if isinstance(s, (Assign, Reduce)):
        read = _tensors_read(s)
        return bool(read or walked) and not read & leaf_of.keys() - walked
    if isinstance(s, Block):
        # (a later loop of a lattice's series, over what is left of a part once its entries ran out, U_n alone,
        # continues the cursors of the series' first loop: it is below what that loop walks)
        series = frozenset()
        for x in s.stmts:
            if isinstance(x, While) and x.init:
                series = frozenset(leaf.tensor for leaf in _children(x, leaf_of))
            if not _under_children(x, leaf_of, walked | (series if isinstance(x, While) and not x.init else set())):
                return False
        return True
    if isinstance(s, While):
        if any(leaf.tensor in leaf_of for pair in s.locs for leaf in pair[0].iters() if isinstance(leaf, Level)):
            return False
        below = _children(s, leaf_of)
        # (a dense child is taken as full where the loop is compiled, its empty fiber is not: a lattice's loop over
        # j_A ∪ j_B of a dense j_A has no point for j_B alone; a merged loop's operand is tested)
        if any(leaf.kind == "dense" and not (s.merged and leaf in union_operands(s.seq)) for leaf in below):
            return False
        return _under_children(s.body, leaf_of, walked | {leaf.tensor for leaf in below})
    if isinstance(s, Switch):
        return all(_under_children(b, leaf_of, walked) for _, b in s.cases)
    # (a loop whose body writes nothing, what is left of a part of the result's fill once its entries ran out)
    return isinstance(s, Skip) and bool(walked)


def _children(w: While, leaf_of: dict) -> list:
    """The levels below ``leaf_of``'s leaves that the loop ``w`` walks or its series starts."""
    return [leaf for q in (w.seq, *w.init) for leaf in q.iters()
            if isinstance(leaf, Level) and leaf.tensor in leaf_of and leaf.mode > leaf_of[leaf.tensor].mode]


def _tensors_read(s: Stmt) -> set:
    """The tensors ``s`` reads or walks."""
    out = set()

    def value(e):
        if isinstance(e, Read):
            out.add(e.tensor)
        for x in value_children(e):
            value(x)

    def visit(x):
        if isinstance(x, (Assign, Reduce)):
            value(x.value)
        if isinstance(x, While):
            out.update(leaf.tensor for q in (x.seq, *x.init, *(y for pair in x.locs for y in pair))
                       for leaf in q.iters() if isinstance(leaf, Level))
        if isinstance(x, Switch):
            out.update(leaf.tensor for q, _ in x.cases for leaf in q.iters() if isinstance(leaf, Level))
        for y in x.children():
            visit(y)

    visit(s)
    return out


__all__ = ["MERGE_FROM", "everywhere", "mergeable", "operand_at", "operand_leaves", "row_walk", "tested_parts",
           "union_operands"]
