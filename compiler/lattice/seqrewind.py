"""Rewinding a split's minor walk (issue 30): a loop between a split's major and minor index.

``C[i, j, k] = split(a[l], l -> (i, k)) * b[j]`` looped ``i, j, k`` walks the group of ``i`` (the
loop over ``π0(l_a, K)``) once per coordinate of ``j``: ``π1(l_a, K)`` shares ``a``'s cursor with
``π0``, so after the first ``j`` the cursor stands past the group. The π0 loop saves where each leaf
of its operand is when it enters a group (its *start*), and the loop over the π1 restarts its leaves
there each time its series is entered (the CFIR's ``While.rewind``); π0's next drains the group from
wherever the last walk left it. A loop in between may iterate a Dense level below the split operand
(``split(A[l, j], l -> (i, k))`` in mode order ``i, j, k``, a transpose; kept live by
:func:`below_group`): its position is computed from its parent's at each read, inside the minor
walk. Any other level there is refused (:func:`check_between`): its fiber hangs below one row (the
lowering then runs the loops in another order where the output allows it, :mod:`compiler.lattice.seqgroupsort`).

>>> from compiler.lattice.sequences import Level, Project, Universe
>>> a = Level("a", 0, "compressed", 6, "l"); j = Universe(2, "j")
>>> loops = [("i", Project(0, a, 3)), ("j", j)]
>>> [str(p) for p in rewound(loops, Project(1, a, 3))]
['π1(l_a, 3)']
>>> rewound(loops[:1], Project(1, a, 3))
()
"""

from __future__ import annotations

from ..errors import StrategyError
from ..imperative import ir
from ..imperative.ir import Declare, Var
from .sequences import Level, Product, Project, Seq, walk


class SplitOrder(StrategyError):
    """The loops reach a split's indices in an order its minor walk cannot take (the minor index outside
    the major one, or a sparse level below the split iterated between them): a dense output, which
    takes its entries in any order, can loop in another one."""


def unopened(s: Seq, opened: frozenset = frozenset()):
    """The π1s of ``s`` whose group neither a loop around (``opened``: their π0s' group keys) nor the left
    operand of a product they are in the right one of opens: ``π1(l_a, 3) × π0(l_a, 3)`` (the collapse of
    a split into its minor index first, a transpose) walks the minor index before the group.

    >>> from compiler.lattice.sequences import Level
    >>> a = Level("a", 0, "compressed", 6, "l"); p0, p1 = Project(0, a, 3), Project(1, a, 3)
    >>> [str(x) for x in unopened(Product(p1, p0))], list(unopened(Product(p0, p1)))
    (['π1(l_a, 3)'], [])
    """
    if isinstance(s, Project) and s.k == 1 and s.group_key not in opened:
        yield s
    if isinstance(s, Product):
        yield from unopened(s.a, opened)
        yield from unopened(s.b, opened | {n.group_key for n in walk(s.a) if isinstance(n, Project) and n.k == 0})
        return
    for c in s.children():
        yield from unopened(c, opened)


def between(loops: list, p1: Project, every: bool = False) -> list:
    """The loops of ``loops`` (``(index, sequence, *located)``, outermost first, all around the loop over
    ``p1``) after the last one that moves ``p1``'s group's cursor (the one opening the group, a loop
    over the group's major index of a split of π1, walked or located at the loop's coordinate) that walk
    more than one coordinate (``every``: any).

    >>> from compiler.lattice.sequences import Level, Universe
    >>> a = Level("a", 0, "compressed", 6, "l")
    >>> [i for i, *_ in between([("i", Project(0, a, 3)), ("j", Universe(1, "j")), ("m", Universe(4, "m"))],
    ...                         Project(1, a, 3))]
    ['m']

    A loop over ``j_A`` locating ``π0(π1(l_a, 6), 3)`` moves the cursor into one of the group's inner groups
    (``a.reshape(-1, 2, 3)`` beside a dense ``A``): the loop over the minor index walks from there.

    >>> a = Level("a", 0, "dense", 12, "l"); j = Level("A", 1, "dense", 2, "j")
    >>> between([("i", Project(0, a, 6)), ("j", j, Project(0, Project(1, a, 6), 3))], Project(1, a, 6))
    []
    """
    since = None      # (None until a loop opens the group)
    for j, t, *located in loops:
        if any(isinstance(n, Project) and n.group_key == p1.group_key for x in (t, *located) for n in walk(x)):
            since = []
        elif since is not None and (every or t.size() > 1):
            since.append((j, t))
    return since or []


def rewound(loops: list, seq: Seq, *forms: list) -> tuple:
    """The π1s of ``seq`` (a loop nested in ``loops``, outermost first) whose group a loop between
    them and their π0 visits more than once: the loop over ``seq`` restarts them at its start (a
    π1 of a π1 rewound restarts its operand's leaves there, the start of the inner group). ``forms``:
    the same loops with other sequences (each case's, with what the case locates, as :func:`between`
    takes them): a π1 rewound under any of them, those under ``loops`` first, in one walk of ``seq``."""
    nests = (loops, *forms)
    out = [[] for _ in nests]

    def visit(n: Seq, active: tuple) -> None:
        if isinstance(n, Project) and n.k == 1:
            hit = [k for k in active if between(nests[k], n)]
            for k in hit:
                if n not in out[k]:
                    out[k].append(n)
            # (a π1 rewound under these loops restarts its operand's leaves: nothing below is rewound there)
            active = tuple(k for k in active if k not in hit)
            if not active:
                return
        for c in n.children():
            visit(c, active)

    visit(seq, tuple(range(len(nests))))
    return tuple(dict.fromkeys(p for found in out for p in found))


def product_rewinds(p: Product) -> tuple:
    """The π1s of ``p``'s right operand that ``p`` restarts within their group, at its start, each time
    it restarts that operand: their π0 is not in the left operand, a loop around opened the group, and
    the product walks it once per coordinate of its left operand (``U_k × π1(l_a, 3)``, np.tile of a
    row of a split vector). ``π0(l_a, 3) × π1(l_a, 3)`` (a split collapsed back) walks each group once,
    from where the π0 entered it: nothing to restart; nor does a left operand walking the π1 itself, a
    π0 of a split of it (``π0(π1(l_a, 6), 2) × π1(π1(l_a, 6), 2)``). A π1 of a π1 restarted puts its
    operand's leaves back at the start of its own, inner, group: the outer π1 is not restarted too (at
    its group's start, the first inner group's: ``U_n × π1(π1(l_a, 6), 2)`` in the second one).

    >>> from compiler.lattice.sequences import Level, Universe
    >>> a = Level("a", 0, "compressed", 6, "l"); p0, p1 = Project(0, a, 3), Project(1, a, 3)
    >>> [str(x) for x in product_rewinds(Product(Universe(2, "k"), p1))]
    ['π1(l_a, 3)']
    >>> product_rewinds(Product(p0, p1)), product_rewinds(Product(Project(0, p1, 3), Project(1, p1, 3)))
    ((), ())
    >>> [str(x) for x in product_rewinds(Product(Universe(2, "k"), Project(1, p1, 3)))]
    ['π1(π1(l_a, 3), 3)']
    """
    left = list(walk(p.a))
    return tuple(dict.fromkeys(minors(p.b, lambda n: n in left or any(
        isinstance(x, Project) and x.k == 0 and x.group_key == n.group_key for x in left))))


def minors(s: Seq, passed=lambda n: False):
    """The π1s of ``s`` not in the operand of another one (but of one ``passed`` says to look into): a π1
    of a π1 walks a group inside one of the outer π1's groups, not the whole of that one.

    >>> from compiler.lattice.sequences import Level, Universe
    >>> a = Level("a", 0, "compressed", 8, "l"); p1 = Project(1, a, 4)
    >>> [str(x) for x in minors(Product(Project(0, p1, 2), Project(1, p1, 2)))]
    ['π1(l_a, 4)', 'π1(π1(l_a, 4), 2)']
    >>> [str(x) for x in minors(Project(1, p1, 2), lambda n: n.a != a)]
    ['π1(l_a, 4)']
    """
    if isinstance(s, Project) and s.k == 1 and not passed(s):
        yield s
        return
    for c in s.children():
        yield from minors(c, passed)


def repeated(s: Seq) -> tuple:
    """The π0s in the products of ``s`` that their product comes back to, whose π1 it does not walk
    itself: in its left operand over its right one's coordinates (``π0(l_a, 3) × U_n``, np.repeat of a
    reshape's rows: each coordinate of ``U_n`` in the same group again), in its right operand for each of
    its left one's (``U_n × π0(l_a, 3)``, np.tile of them). A π1 walking such a group elsewhere moves the
    cursor they share on (to the next group, or past the last), where the product is still at the group.

    >>> from compiler.lattice.sequences import Level, Slice, Universe
    >>> a = Level("a", 0, "compressed", 6, "l"); p0, p1 = Project(0, a, 3), Project(1, a, 3)
    >>> [str(x) for x in repeated(Slice(Product(p0, Universe(2, "n")), 1, 3))], repeated(Product(p0, p1))
    (['π0(l_a, 3)'], ())
    >>> [str(x) for x in repeated(Product(Universe(2, "n"), p0))], repeated(Product(Universe(2, "n"), Product(p0, p1)))
    (['π0(l_a, 3)'], ())
    """
    out = []
    for p in walk(s):
        if isinstance(p, Product):
            walked = {n.group_key for n in walk(p) if isinstance(n, Project) and n.k == 1}
            out += [n for n in walk(p) if isinstance(n, Project) and n.k == 0 and n.group_key not in walked
                    and n not in out]
    return tuple(out)


def walked_again(p: Product) -> tuple:
    """The π0s :func:`repeated` in ``p``'s left operand whose group a π1 of its right operand walks:
    where the right operand runs out, ``p`` puts their cursors back at the group's start, where the left
    operand's next coordinate is (``(π0(l_a, 3) × U_n)[1:5] × π1(l_a, 3)``, a repeat of a reshape's rows
    sliced, raveled): the π1 moved the cursor they share past the group, and the left operand would have
    left the group, its repeats not walked. Not the group of a π1 whose π1 the right operand walks: that
    walks one of its inner groups, ``((U_k × π0(l_a, 4)) × π0(π1(l_a, 4), 2)) × π1(π1(l_a, 4), 2)``
    (the start of the outer group is that of its first inner group, not of the one the left operand is at).

    >>> from compiler.lattice.sequences import Level, Slice, Universe
    >>> a = Level("a", 0, "compressed", 6, "l"); p0, p1 = Project(0, a, 3), Project(1, a, 3)
    >>> [str(x) for x in walked_again(Product(Slice(Product(p0, Universe(2, "n")), 1, 3), p1))]
    ['π0(l_a, 3)']
    """
    keys = {n.group_key for n in minors(p.b)}
    return tuple(n for n in repeated(p.a) if n.group_key in keys)


def loop_repeats(seq: Seq, inside: tuple) -> tuple:
    """The π0s :func:`repeated` in ``seq``, a loop's sequence, whose group a π1 of a loop in its body (of those
    loops' sequences, ``inside``: :func:`~compiler.lattice.seqwhiles.inner_sequences`) walks (none ``seq`` walks
    itself: :func:`walked_again`): after each coordinate the loop puts their cursors back at the group's start
    (``collapse(broadcast(n, split(a)), (i, n) -> k)`` looped ``k, l``: the loop over ``l``, ``π1(l_a, 3)``,
    moved the cursor past the group, and the loop over ``k`` would take the next group at its next coordinate,
    still in this one).

    >>> from compiler.lattice.sequences import Level, Universe
    >>> a = Level("a", 0, "compressed", 6, "l"); p0, p1 = Project(0, a, 3), Project(1, a, 3)
    >>> [str(x) for x in loop_repeats(Product(p0, Universe(2, "n")), (p1,))]
    ['π0(l_a, 3)']
    """
    own = {n.group_key for n in walk(seq) if isinstance(n, Project) and n.k == 1}
    walked = {n.group_key for s in inside for n in walk(s) if isinstance(n, Project) and n.k == 1}
    return tuple(n for n in repeated(seq) if n.group_key in walked - own)


def restarted(s: Seq) -> frozenset:
    """The group keys of the π0s in the left operand of a product in ``s``: that product saves where
    such a group starts as it moves the π0 into it (its restart), not the loop over ``s`` at each of
    its coordinates, where a π1 on the right may have walked on (``π0(l_a, 3) × (U_n × π1(l_a, 3))``).

    >>> from compiler.lattice.sequences import Level, Universe
    >>> a = Level("a", 0, "compressed", 6, "l")
    >>> [k[0] for k in restarted(Product(Project(0, a, 3), Universe(2, "n")))], restarted(Project(0, a, 3))
    (['π0'], frozenset())
    """
    return frozenset(n.group_key for p in walk(s) if isinstance(p, Product) for n in walk(p.a)
                     if isinstance(n, Project) and n.k == 0)


def grouped_product(a: Seq, b: Seq) -> Product:
    """``a × b`` (a collapse), with a product in ``a`` that repeats the group of a π1 of ``b`` over
    its right operand taken into ``b`` instead: ``(π0(l_a, 3) × U_n) × π1(l_a, 3)`` (each group of a
    split repeated over ``n``, np.repeat of a reshape's rows, then collapsed with its minor index) is
    ``π0(l_a, 3) × (U_n × π1(l_a, 3))``, the same coordinates (a product is associative), where the
    inner product restarts the π1 at its group's start for each ``n`` (:func:`product_rewinds`): in the
    first form the π1 moved the cursor it shares with the π0 past the group, and the π0 took the next
    one. A product repeating it deeper (under a slice: ``(π0(l_a, 3) × U_n)[1:5] × π1(l_a, 3)``) is kept: the
    outer product puts the π0's cursor back at the group's start when the π1 runs out (:func:`walked_again`).
    So is one walking the splits of a π1 (``v.reshape(2, 2, 2)`` collapsed back,
    ``(π0(l_a, 4) × π0(π1(l_a, 4), 2)) × π1(π1(l_a, 4), 2)``): its groups are walked in order, each inner
    group's minor walk from where the π0 of the split of the π1 entered it.

    >>> from compiler.lattice.sequences import Level, Universe
    >>> a = Level("a", 0, "compressed", 6, "l")
    >>> print(grouped_product(Product(Project(0, a, 3), Universe(2, "n")), Project(1, a, 3)))
    π0(l_a, 3) × (U_n × π1(l_a, 3))
    >>> b = Project(1, Level("b", 0, "compressed", 8, "m"), 4)
    >>> print(grouped_product(Product(Project(0, b.a, 4), Project(0, b, 2)), Project(1, b, 2)))
    (π0(m_b, 4) × π0(π1(m_b, 4), 2)) × π1(π1(m_b, 4), 2)
    """
    for key in {n.group_key for n in walk(b) if isinstance(n, Project) and n.k == 1}:
        inside = [n for n in walk(a) if isinstance(n, Project) and n.k == 0 and n.group_key == key]
        # (a product with the π0 on its left repeats each group over its right operand's coordinates,
        # unless that operand walks into the group itself: the major index of a split of its π1)
        if any(isinstance(n, Product) and n.b.size() > 1 and any(x in inside for x in walk(n.a))
               and not _walks_group(n.b, key) for n in walk(a)):
            if isinstance(a, Product):
                return grouped_product(a.a, grouped_product(a.b, b))
    return Product(a, b)


def _walks_group(s: Seq, key) -> bool:
    """Whether ``s`` walks into the group ``key`` (a π1 of it, under a further split's π0)."""
    return any(isinstance(n, Project) and n.k == 1 and n.group_key == key for n in walk(s))


def check_between(loops: list, p1: Project) -> None:
    """Refuse a loop between ``p1``'s major and minor index that iterates a level below a leaf of
    the split operand (``split(A[l, j], l -> (i, k))`` in mode order ``i, j, k``, a transpose) that
    is not Dense: its fiber would be the one below the group's first row only. A Dense level's
    position follows its parent's at each read, wherever the minor walk has moved it.

    >>> from compiler.lattice.sequences import Level
    >>> A0 = Level("A", 0, "dense", 6, "l"); A1 = Level("A", 1, "compressed", 4, "j")
    >>> check_between([("i", Project(0, A0, 3)), ("j", A1)], Project(1, A0, 3))
    Traceback (most recent call last):
    ...
    compiler.lattice.seqrewind.SplitOrder: π1(l_A, 3): the loop over j, between a split's major and minor index, iterates level 1 of A (j_A), compressed, below the split level 0 (l_A): its coordinates are the union of the fibers of the group's rows, which the minor walk visits one after the other with one cursor (merging them takes a cursor per row); store that level Dense, or the output dense (its loops then run j after the minor index) or with j after the minor index in its mode order
    >>> check_between([("i", Project(0, A0, 3)), ("j", Level("A", 1, "dense", 4, "j"))], Project(1, A0, 3))
    """
    splits = {leaf.key: leaf for leaf in p1.a.iters() if isinstance(leaf, Level)}
    # (a loop of one coordinate too: its level's fiber is the group's first row's, which may lack it)
    for j, t in between(loops, p1, every=True):
        for node in walk(t):
            parents = [splits[(node.tensor, m)] for m in range(node.mode) if (node.tensor, m) in splits] \
                if isinstance(node, Level) and not node.dense else []
            if parents:
                raise SplitOrder(
                    f"{p1}: the loop over {j}, between a split's major and minor index, iterates level "
                    f"{node.mode} of {node.tensor} ({node}), {node.kind}, below the split level {parents[0].mode} "
                    f"({parents[0]}): its coordinates are the union of the fibers of the group's rows, which the "
                    f"minor walk visits one after the other with one cursor (merging them takes a cursor per "
                    f"row); store that level Dense, or the output dense (its loops then run {j} after the minor "
                    f"index) or with {j} after the minor index in its mode order")


def below_group(key) -> tuple:
    """The live key that says the rows of leaf ``key`` are walked by a π1 inside (a loop over a π0
    of it is around): a Dense level below it is iterated between the split's indices.

    >>> below_group(("A", 0))
    ('below π0', ('A', 0))
    """
    return ("below π0", key)


def walked_below(loops: list, seq: Seq, *forms: Seq) -> frozenset:
    """:func:`below_group` of each leaf of the π0s' operands of ``loops`` (around the loop over ``seq``,
    ``(index, sequence)``) whose group ``seq`` does not walk: the loop over ``seq`` is between them and
    their π1s (a loop walking the group reads its rows through its own π1). ``forms``: ``seq`` as
    simplified where the loops around are (a π1 there names its group as their π0 does).

    >>> from compiler.lattice.sequences import Level
    >>> A0 = Level("A", 0, "dense", 6, "l"); p0 = Project(0, A0, 3)
    >>> walked_below([("i", p0)], Level("A", 1, "dense", 4, "j")), walked_below([("i", p0)], Project(1, A0, 3))
    (frozenset({('below π0', ('A', 0))}), frozenset())
    """
    walks = {n.group_key for x in (seq, *forms) for n in walk(x) if isinstance(n, Project)}
    return frozenset(below_group(leaf.key) for _, s in loops for n in walk(s)
                     if isinstance(n, Project) and n.k == 0 and n.group_key not in walks for leaf in n.a.iters())


# -- the reference iterators' state (seqiter.Cursors) -------------------------------------------------


def save_start(p0: Project, st) -> None:
    """Keep where each leaf of ``p0``'s operand is, the π0 entering a group (its first entry)."""
    st.starts[p0.group_key] = {leaf.key: (st.fiber[leaf.key], st.pos[leaf.key]) for leaf in p0.a.iters()
                               if leaf.key in st.pos}


def rewind(p1: Project, st) -> None:
    """Put ``p1``'s leaves back where its group started (none where its π0 ran out: no group to walk)."""
    if st.group.get(p1.group_key) is None:
        return
    saved = st.starts.get(p1.group_key, {})
    for leaf in p1.a.iters():
        if leaf.key in saved:
            st.fiber[leaf.key], st.pos[leaf.key] = saved[leaf.key]


# -- C (seqemit.SeqEmitter's cursors) ------------------------------------------------------------------


def cursor_vars(code) -> list:
    """The variables of a leaf's cursor (a :class:`~compiler.lattice.seqwalk.LeafCode`) set as it starts."""
    return [v for v in (code.p, code.end, code.seg, code.block, code.up)
            if isinstance(v, Var) and v is not code.size]


def _moving(em, leaf, keys) -> list:
    # (a fiber's end, and the parent it hangs under, move only with its parent, when that parent is
    # walked in the group too)
    code = em.leaves[leaf.key]
    inner = isinstance(leaf, Level) and leaf.mode > 0 and (leaf.tensor, leaf.mode - 1) in keys
    return [v for v in cursor_vars(code) if v is not code.end and v is not code.up or inner]


def declare_starts(em, p0: Project) -> list:
    """Declare the variables holding where the leaves of ``p0``'s operand are on entering a group
    (``pA0_start``), in ``em.starts`` under its group key."""
    saved = em.starts.setdefault(p0.group_key, {})
    keys = {leaf.key for leaf in p0.a.iters()}
    out = []
    for leaf in sorted(p0.a.iters(), key=str):
        if leaf.key in em.leaves and leaf.key not in saved:
            saved[leaf.key] = [(v, Var(em.fresh(v.name + "_start"))) for v in _moving(em, leaf, keys)]
            out += [Declare(s, "int64") for _, s in saved[leaf.key]]
    return out


def save_stmts(em, p0: Project) -> list:
    """``pA0_start = pA0`` for each leaf of ``p0``'s operand (a group the minor walk restarts)."""
    saved = em.starts.get(p0.group_key, {})
    return [ir.Assign(s, v) for leaf in sorted(p0.a.iters(), key=str) for v, s in saved.get(leaf.key, ())]


def rewind_stmts(em, p1: Project) -> list:
    """``pA0 = pA0_start`` for each leaf of ``p1``'s operand."""
    saved = em.starts.get(p1.group_key)
    if saved is None:
        raise StrategyError(f"{p1} restarts its group where no loop around saved its start")
    return [ir.Assign(v, s) for leaf in sorted(p1.a.iters(), key=str) for v, s in saved.get(leaf.key, ())]


__all__ = ["SplitOrder", "unopened", "between", "rewound", "product_rewinds", "minors", "repeated", "walked_again",
           "loop_repeats", "restarted", "grouped_product",
           "check_between", "save_start", "rewind", "cursor_vars", "declare_starts", "save_stmts", "rewind_stmts"]
