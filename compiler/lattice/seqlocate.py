"""The sequence CFIR's locators (§7.2; TACO's iterate-and-locate): which operands of a loop's
sequence are located at the coordinate another walks, rather than walked themselves
(:func:`remove_locators`), and a chain's repeated operands taken once (:func:`once_each`).
Used by :class:`compiler.lattice.seqcfir.Compiler`.
"""

from __future__ import annotations

from .sequences import (EMPTIES, LEAVES, Concat, Intersect, Product, Project, Seq, Union, Universe, chain_operands,
                        rebuild, walk)


def once_each(s: Seq) -> Seq:
    """``s`` with each operand of a chain of unions (or of intersections) once: ``x ∪ (x ∪ y) = x ∪ y``.
    An access read twice under unions walks one cursor (:mod:`compiler.lattice.seqreads`), which a
    second operand would locate at its own coordinate, resetting it (a slice's start was lost).

    >>> from compiler.lattice.sequences import Level, Union
    >>> a, b = Level("a", 0, "dense", 4), Level("b", 0, "dense", 4)
    >>> print(once_each(Union(a, Union(a, b))), once_each(Union(a, b)) == Union(a, b))
    i_a ∪ i_b True
    """
    kids = s.children()
    if not kids:
        return s
    if not isinstance(s, (Union, Intersect)):
        new = tuple(once_each(c) for c in kids)
        return s if new == kids else rebuild(s, new)
    kind, ops = type(s), []

    def chain(x):
        if isinstance(x, kind):
            chain(x.a)
            chain(x.b)
        else:
            x = once_each(x)
            if x not in ops:
                ops.append(x)
    chain(s)
    if len(ops) == len(chain_operands(s, kind)):
        new = (once_each(s.a), once_each(s.b))
        return s if new == kids else rebuild(s, new)
    out = ops[0]
    for x in ops[1:]:
        out = kind(out, x)
    return out


def remove_locators(s: Seq) -> tuple[Seq, tuple]:
    """``s`` with the dense operands of its intersections (and one of two dense union operands)
    taken out, and the locators ``(located, iterated)``: each located at the iterated one's
    coordinate (§7.2; TACO's iterate-and-locate). Products and projections are left whole. A universe
    the loop also iterates is not located (:func:`unshared`).

    >>> from compiler.lattice.sequences import Level, Intersect
    >>> a = Level("a", 0, "compressed", 4); b = Level("b", 0, "dense", 4)
    >>> seq, locs = remove_locators(Intersect(a, b))
    >>> print(seq, [(str(x), str(y)) for x, y in locs])
    i_a [('i_b', 'i_a')]
    """
    seq, locs = _located(s)
    walked = seq.iters()
    # (a dense level the loop's union also walks is at every coordinate the loop visits; located at another
    # operand's, its cursor left the coordinate its walk was at: stack([a * b, b * C, C]) of a dense C wrote no
    # row before b's first)
    top = frozenset(x for x in chain_operands(seq, Union)
                    if isinstance(x, LEAVES) and x.dense)
    return seq, tuple((x, at) for x, at in ((unshared(x, walked, top), at) for x, at in locs) if x is not None)


def unshared(located: Seq, walked: frozenset, top: frozenset = frozenset()) -> Seq | None:
    """``located`` without the universes of its unions that the loop iterates (``walked``) and the dense
    levels an operand of the loop's union walks (``top``), None if nothing is left: ``(i_B ∪ U) ∩ i_C ∪ U``
    of a dense ``i_B`` locates ``i_B`` on ``i_C`` and iterates ``U``, whose cursor, located at ``i_C``'s
    coordinate too, stood at ``i_C``'s entries only (a dense operand beside them, and a part of another fill,
    wrote nothing between them). A universe holds no entries, so iterated it is at the coordinate wherever
    the intersection is; a dense level stays located (its cursor positions the levels below it), unless the
    union walks it too, where it is at every coordinate.

    >>> from compiler.lattice.sequences import Level, Universe
    >>> b, u = Level("b", 0, "dense", 4), Universe(4)
    >>> str(unshared(Union(b, u), frozenset([u]))), unshared(u, frozenset([u])), unshared(b, frozenset(), {b})
    ('i_b', None, None)
    """
    if isinstance(located, Universe) and located in walked or located in top:
        return None
    if isinstance(located, Union):
        a, b = unshared(located.a, walked, top), unshared(located.b, walked, top)
        return b if a is None else a if b is None else Union(a, b)
    return located


def _located(s: Seq) -> tuple[Seq, tuple]:
    """:func:`remove_locators`, each leaf located where an intersection or a union puts it."""
    if isinstance(s, (Intersect, Union)) and s.a == s.b:
        # (x ∩ x = x ∪ x = x: an access read twice through one cursor, A + A * B of a dense A whose
        # product walks a union; located at itself, the cursor was reset at each coordinate, for ever)
        return _located(s.a)
    if isinstance(s, Intersect):
        a, la = _located(s.a)
        b, lb = _located(s.b)
        if locatable(s.b):     # (both dense: iterate a, locate b)
            return a, la + ((s.b, a),)
        if locatable(s.a):
            return b, lb + ((s.a, b),)
        return Intersect(a, b), la + lb
    if isinstance(s, Union) and locatable(s.a) and locatable(s.b):
        a, la = _located(s.a)
        return a, la + ((s.b, a),)
    kids = s.children()
    if not kids or isinstance(s, (Product, Project)):
        # not under a product or projection: there the iterated operand moves inside the
        # combinator's next (a row restart, a π1 loop), after the loop's locate
        return s, ()
    new, locs = [], ()
    for c in kids:
        x, lx = _located(c)
        new.append(x)
        locs += lx
    return rebuild(s, tuple(new)), locs


def replaced(s: Seq, subs: dict) -> Seq:
    if s in subs:
        return subs[s]
    kids = s.children()
    return rebuild(s, tuple(replaced(c, subs) for c in kids)) if kids else s


def locatable(s: Seq) -> bool:
    """Dense, and one side throughout: a concatenation's located side would depend on the
    coordinate (its loops are fissioned instead)."""
    return s.dense and not any(isinstance(n, Concat) for n in walk(s))


def at_coordinate(key: Seq, leaves: frozenset) -> bool:
    """Whether the iterated sequence ``key`` of a locator is at the loop's coordinate in the case
    where ``leaves`` are (a union's when either operand is): where what it locates is right."""
    if isinstance(key, LEAVES):
        return key in leaves
    if isinstance(key, Union):
        return at_coordinate(key.a, leaves) or at_coordinate(key.b, leaves)
    if isinstance(key, (Intersect, Product)):
        return at_coordinate(key.a, leaves) and at_coordinate(key.b, leaves)
    if isinstance(key, EMPTIES):
        return False
    return at_coordinate(key.children()[0], leaves)


__all__ = ["at_coordinate", "locatable", "once_each", "remove_locators", "replaced", "unshared"]
