"""Which loop orders the sequence lowering walks (:mod:`compiler.lattice.seqderive`): every input's
levels in their storage order (:func:`check_concordant`), a split's minor index inside its major one
unless its groups are searched (:func:`check_split_nesting`, :func:`searchable`); the refusals
(:class:`LoopOrder`, :class:`DiscordantWalk`) are what :func:`~compiler.lattice.seqlower.lower_shape_lattice`
answers with another loop order or a converted input.
"""

from __future__ import annotations

from ..errors import StrategyError
from .seqcfir import Block, Forall
from .seqrewind import SplitOrder, check_between, unopened
from .sequences import Intersect, Level, Project, Seq, Union, Universe, walk


def searchable(s: Seq) -> bool:
    """Whether each group of ``s`` (a split's operand) is searched for a minor coordinate by galloping
    (or stepping a counter): ``s`` is levels and universes under unions and intersections. Under a
    product or a slice the search would step through every entry of ``s`` for each minor coordinate.

    >>> a = Level("a", 0, "compressed", 6, "l")
    >>> from compiler.lattice.sequences import Product
    >>> searchable(Union(a, Universe(6, "l"))), searchable(Product(Level("A", 0, "dense", 2, "r"), a))
    (True, False)
    """
    return all(isinstance(n, (Level, Universe, Union, Intersect)) for n in walk(s))


class LoopOrder(StrategyError):
    """The loops run in an order the sequences cannot walk: an input's level before its parent
    (:class:`DiscordantWalk`), a split's minor index outside its major one; ``walk`` says what the
    loops do, without the advice."""

    def __init__(self, message: str, walk: str = ""):
        super().__init__(message)
        self.walk = walk or message


class DiscordantWalk(LoopOrder):
    """The loops reach a level of ``tensor`` before its parent: read in another mode order than
    it is stored in (a CSC collapsed row-major)."""

    def __init__(self, message: str, tensor: str, walk: str = ""):
        super().__init__(message, walk)
        self.tensor = tensor


def check_concordant(loops: list, access_levels: dict) -> None:
    """Refuse an access whose levels the loops do not reach outer level first (a transposed or
    column-major walk of a sparse tensor: its inner level would be read without its row)."""
    seen: dict = {}
    walked: dict = {}     # level key -> the leaf: one cursor walks a level in one direction
    for _, s in loops:
        for node in walk(s):
            if isinstance(node, Level) and node.key not in seen:
                seen[node.key] = len(seen)
            if isinstance(node, Level) and walked.setdefault(node.key, node).reverse != node.reverse:
                raise StrategyError(
                    f"level {node.mode} of {node.tensor} ({node.index}) is walked forwards in one place and "
                    f"backwards (a slice with a negative step) in another; the sequence layer walks a "
                    f"level with one cursor")
    for acc, al in access_levels.items():
        for lv in al.levels:
            if lv.key not in seen:
                raise StrategyError(f"{acc}: no loop iterates its level {lv.mode} ({lv})")
            if lv.mode and seen[lv.parent_key] > seen[lv.key]:
                said = (f"{acc}: the loops reach its level {lv.mode} ({lv.index}) before level {lv.mode - 1} "
                        f"({al.levels[lv.mode - 1].index}), the order {acc.tensor} is stored in")
                raise DiscordantWalk(f"{said}; store {acc.tensor} in a format concordant with the loop order (or "
                                     f"transpose it)", acc.tensor, said)


def check_split_nesting(loops: list, outputs=None) -> None:
    """Refuse a split whose minor index is looped outside its major one (a CSC output of a row-major
    split) where no :class:`~compiler.lattice.sequences.Stride` searches its groups (:func:`searchable`):
    π1 reads the group π0's loop opened, so it runs inside that loop; and one
    with a loop between them iterating a level below the split one that is not Dense
    (:func:`~.seqrewind.check_between`; the π1 restarts its group for each coordinate of such a loop).
    ``outputs``: the indices whose loops nest in one another (the output's; None: every loop's), the
    loop opening the π1's group whatever its index (a sum's, hoisted around the output's loops).

    >>> from compiler.lattice.sequences import Level
    >>> A0 = Level("A", 0, "compressed", 4, "m"); A1 = Level("A", 1, "compressed", 3, "j")
    >>> check_split_nesting([("i", Project(0, A0, 4)), ("j", A1), ("k", Project(1, A0, 4))], {"j", "k"})
    Traceback (most recent call last):
    ...
    compiler.lattice.seqrewind.SplitOrder: π1(m_A, 4): the loop over j, between a split's major and minor index, iterates level 1 of A (j_A), compressed, below the split level 0 (m_A): ...
    """
    opened: frozenset = frozenset()      # (the groups of the π0s of the loops outside)
    for depth, (i, s) in enumerate(loops):
        for node in unopened(s, opened):
            inside = any(isinstance(n, Project) and n.k == 0 and n.group_key == node.group_key for n in walk(s))
            where, fix = (f"the collapse into {i} takes the split's minor index before its major one", "collapse "
                          "the split major index first") if inside else (
                f"the loop over {i} (a split's minor index) runs outside the one over its major index (the output's "
                f"mode order)", "write the output row-major (a dense output loops in that order)")
            raise SplitOrder(f"{node}: {where}, a transpose; π1 walks the group its π0 opened, sharing the π0's "
                             f"cursor, so it cannot run first, and the sequence layer searches each group for a "
                             f"minor coordinate (l_a[k::J]) only in a split of vectors ({node.a} is not one: the "
                             f"search would step through each entry of it for each minor coordinate) whose indices "
                             f"are two loops of the output (the major one possibly summed) or collapsed: {fix}")
        for node in walk(s):
            if isinstance(node, Project) and node.k == 1:
                # (the loop opening its group kept whatever its index: a sum's, hoisted around the output's)
                check_between([(j, t) for j, t in loops[:depth] if outputs is None or str(j) in outputs
                               or any(isinstance(n, Project) and n.group_key == node.group_key for n in walk(t))],
                              node)
        opened |= {n.group_key for n in walk(s) if isinstance(n, Project) and n.k == 0}


def nest_paths(s) -> list:
    """The chains of loops of the sequence CIN ``s``, each ``(index, sequence)`` pairs from the
    outermost loop to an innermost one: the loops that nest in one another (two sums side by side
    are two chains).

    >>> from compiler.lattice.seqcfir import Assign, Block, Forall, Read
    >>> from compiler.lattice.sequences import Level
    >>> a = Level("a", 0, "compressed", 4)
    >>> r = Assign("c", ("i",), Read("a", (a,)))
    >>> [[i for i, _ in p] for p in nest_paths(Forall("i", a, Block((Forall("j", a, r), Forall("k", a, r)))))]
    [['i', 'j'], ['i', 'k']]
    """
    if isinstance(s, Forall):
        return [[(s.index, s.seq)] + p for p in nest_paths(s.body)] or [[(s.index, s.seq)]]
    if isinstance(s, Block):
        return [p for x in s.stmts for p in nest_paths(x)]
    return []


__all__ = ["DiscordantWalk", "LoopOrder", "check_concordant", "check_split_nesting", "nest_paths", "searchable"]
