"""The rows of a collapsed concatenation as a union of products, one per part (issue 30), for the lattice's
simplifier (:func:`compiler.lattice.seqlattice.simplify`).

A collapse of an hstack, ``(i_A ∪ i_B) × (j_A ⊔ k_B)``, holds a concatenation in a product's right operand,
which the lattice takes edges from only on the left (Fig. 13). Each row's coordinates are A's row, then B's,
so the product is a union of one product per part, ``(i_A × (j_A + |k_B|)) ∪ (i_B × (|j_A| + k_B))``
(:func:`concat_per_row`, the rewrite ``concat-per-row``). Under a split (a reshape of the hstack, whose groups
straddle the rows), a part of another fill than the result's, ``p_B ∪ U_p`` (it walks every coordinate of its
own), is two products, its stored entries' and its universe's (:func:`fills_per_row`, the rewrite
``fill-per-row``): a split of a product over a union is no lattice's, a split of a union of products is. Its
universe's product covers its entries' (:func:`covered`): the lattice builds no point where they outlive it.

>>> from compiler.lattice.sequences import Level
>>> kA, nA = Level("A", 0, "dense", 3, "k"), Level("A", 1, "compressed", 4, "n")
>>> kB, pB = Level("B", 0, "dense", 3, "k"), Level("B", 1, "compressed", 4, "p")
>>> print(split_fills_apart(Project(0, Product(Union(kA, kB), Concat(nA, Union(pB, Universe(4, "p")))), 6)))
π0((((k_A ∪ ∅) × (n_A + 4)) ∪ ((∅ ∪ k_B) × (4 + p_B))) ∪ (U_k#p_B × (4 + U_p)), 6)
"""

from __future__ import annotations

from dataclasses import replace

from .sequences import (EMPTIES, LEAVES, Concat, Empty, Full, Level, Offset, Pad, Product, Project, Seq, Union,
                        Universe, rebuild, side_key, walk)


def tensors_of(s: Seq) -> frozenset:
    return frozenset(leaf.tensor for leaf in s.iters() if isinstance(leaf, Level))


def parts_of(s: Seq) -> list:
    return parts_of(s.a) + parts_of(s.b) if isinstance(s, Concat) else [s]


def _placed_parts(b: Seq) -> list | None:
    """The parts of the concatenation ``b`` is, or is shifted or padded from, each part's own shift and pad
    taken out as parts that ran out (∅: ``(p_A ⊔ q_B) + 1`` is what ``(p_A ⊔ q_B) ⊔ r_C`` is once ``r_C``
    ran out, ``(p_A + 1) ⊔ r_C`` once ``q_B`` did), else None.

    >>> from compiler.lattice.sequences import Level
    >>> p, r = Level("A", 1, "compressed", 2), Level("C", 1, "compressed", 3)
    >>> [str(x) for x in _placed_parts(Concat(Pad(p, 1), r))], _placed_parts(Pad(p, 1))
    (['i_A', '∅', 'i_C'], None)
    """
    def flat(x: Seq) -> list:
        if isinstance(x, Concat):
            return flat(x.a) + flat(x.b)
        if isinstance(x, Offset):
            return [Empty(x.n)] + flat(x.a)
        if isinstance(x, Pad):
            return flat(x.a) + [Empty(x.n)]
        return [x]

    inner = b
    while isinstance(inner, (Offset, Pad)):
        inner = inner.a
    return flat(b) if isinstance(inner, Concat) else None


def concat_per_row(a: Seq, b: Seq) -> Seq | None:
    """A product over a concatenation in its right operand, ``(i_A ∪ i_B) × (j_A ⊔ k_B)`` (a collapse
    of an hstack: each row's coordinates are A's row then B's), as a union of one product per part,
    ``(i_A × (j_A + |k_B|)) ∪ (i_B × (|j_A| + k_B))``: A's entries of row ``i`` at
    ``i·(|j|+|k|) + j``, B's at ``i·(|j|+|k|) + |j| + k``, so no two parts meet, and the union
    merges them in order. Each part's product keeps only the outer leaves of its own tensors; None
    where an outer leaf is of no part or of two (a broadcast, one tensor in two parts), or a part
    holds a union of its own. A concatenation shifted or padded (a part of it ran out) is taken as one.

    >>> from compiler.lattice.sequences import Level
    >>> iA, jA = Level("A", 0, "dense", 2, "i"), Level("A", 1, "compressed", 3, "j")
    >>> iB, kB = Level("B", 0, "dense", 2, "i"), Level("B", 1, "compressed", 4, "k")
    >>> from compiler.lattice.seqlattice import simplify
    >>> print(simplify(concat_per_row(Union(iA, iB), Concat(jA, kB))))
    (i_A × (j_A + 4)) ∪ (i_B × (3 + k_B))
    >>> print(simplify(concat_per_row(Union(iA, iB), Pad(Concat(jA, kB), 2))))
    (i_A × (j_A + 6)) ∪ (i_B × ((3 + k_B) + 2))
    """
    parts = _placed_parts(b)
    if parts is None:
        return None
    if any(isinstance(n, (Union, Concat)) for p in parts for n in walk(p)):
        return None
    outer = a.iters()
    if not outer or not all(isinstance(leaf, Level) for leaf in outer):
        return None
    owners = [tensors_of(p) for p in parts]
    # (a part that ran out, its π1 followed to the loop after, has no product: its offset stays)
    spent = [isinstance(p, EMPTIES) for p in parts]
    if not all(o or gone for o, gone in zip(owners, spent)) or all(spent) or \
            sum(map(len, owners)) != len(frozenset().union(*owners)):
        return None
    if any(leaf.tensor not in frozenset().union(*owners) for leaf in outer):
        return None
    out, before, total = None, 0, b.size()
    for part, mine, gone in zip(parts, owners, spent):
        if gone:
            before += part.size()
            continue
        placed = part if before == 0 else Offset(before, part)
        after = total - before - part.size()
        placed = placed if after == 0 else Pad(placed, after)
        side = Product(without(a, frozenset(leaf for leaf in outer if leaf.tensor not in mine)), placed)
        out = side if out is None else Union(out, side)
        before += part.size()
    return out


def without(s: Seq, leaves: frozenset) -> Seq:
    """``s`` with each of ``leaves`` run out (∅, as the lattice's removal of a sparse one)."""
    if s in leaves:
        return Empty(s.size(), str(s))
    kids = s.children()
    return rebuild(s, tuple(without(c, leaves) for c in kids)) if kids else s


#: the most products :func:`fills_per_row` makes: a split's loops have a case per subset of them that can meet,
#: each with the loops of its group inside (two parts, one of another fill: 17 loops, 1,124 lines of C for
#: ``concat([A, B], axis=1).reshape(4, 6)``; three parts, one of another fill: 4,499 lines, compiled in 23 s by
#: GCC -O3, where reading that part densely, converted, takes 1,178)
FILL_ROW_PRODUCTS = 3


def _fill_universe(part: Seq):
    """``(stored, U)`` where ``part`` is ``stored ∪ U_index``, a part of another fill than the result's walking
    every coordinate of its own (:func:`~compiler.lattice.seqparts.with_fill`); else None.

    >>> p = Level("B", 1, "compressed", 4, "p")
    >>> [str(x) for x in _fill_universe(Union(p, Universe(4, "p")))], _fill_universe(p)
    (['p_B', 'U_p'], None)
    """
    if isinstance(part, Union) and isinstance(part.b, Universe) and not part.b.ties and \
            not any(isinstance(n, (Union, Concat, Universe)) for n in walk(part.a)):
        return part.a, part.b
    return None


def fills_per_row(a: Seq, b: Seq) -> Seq | None:
    """:func:`concat_per_row` where a part walks every coordinate of its own, ``p_B ∪ U_p`` (its fill is not
    the result's): that part is two products, its stored entries and its universe under one of the rows,
    ``(k_A ∪ k_B) × (n_A ⊔ (p_B ∪ U_p))`` is ``(k_A × (n_A + 4)) ∪ (k_B × (4 + p_B)) ∪ (U_k#p_B × (4 +
    U_p))``. A product over a union is no split's operand (:func:`unsupported`: a group would be left half
    drained when the union's operands run out apart), and a split of it is no product to nest; a union of
    products is, each visit of a group merging them in order. A universe of the rows tied to that part (a
    COO's, whose rows it stores none of still walk its fill) is the universe product's rows; None where
    another part holds such a universe or a union of its own, or :func:`concat_per_row` would not take the
    rest.

    >>> from compiler.lattice.sequences import Level
    >>> from compiler.lattice.seqlattice import simplify
    >>> iA, jA = Level("A", 0, "dense", 2, "i"), Level("A", 1, "compressed", 3, "j")
    >>> iB, kB = Level("B", 0, "dense", 2, "i"), Level("B", 1, "compressed", 4, "k")
    >>> print(simplify(fills_per_row(Union(iA, iB), Concat(jA, Union(kB, Universe(4, "k")))), frozenset()))
    ((i_A × (j_A + 4)) ∪ (i_B × (3 + k_B))) ∪ (U_i#k_B × (3 + U_k))
    """
    if not isinstance(b, Concat):
        return None
    parts = parts_of(b)
    apart = [_fill_universe(p) for p in parts]
    if not any(apart) or len(parts) + sum(x is not None for x in apart) > FILL_ROW_PRODUCTS:
        return None
    stored = [x[0] if x else p for p, x in zip(parts, apart)]
    universes = frozenset(u for u in a.iters() if isinstance(u, Universe))
    for u in universes:
        # (a universe of the rows tied to parts of another fill only: their fill's rows)
        at = [not u.away(part_keys.__contains__) for part_keys in
              (frozenset(side_key(leaf.key) for leaf in p.iters()) for p in parts)]
        if not u.ties or any(here and x is None for here, x in zip(at, apart)):
            return None
    levels = without(a, universes)
    out = concat_per_row(levels, _chained(stored))
    if out is None:
        return None
    rows = next((x.index for x in levels.iters() if isinstance(x, Level)), "i")
    before, total = 0, b.size()
    for part, x in zip(stored, apart):
        if x is not None:
            placed = x[1] if before == 0 else Offset(before, x[1])
            after = total - before - part.size()
            name = str(next((y for y in walk(part) if isinstance(y, Level)), part)).replace(" ", "")
            out = Union(out, Product(Universe(a.size(), rows, name), placed if after == 0 else Pad(placed, after)))
        before += part.size()
    return out


def split_fills_apart(s: Seq) -> Seq:
    """``s`` with each product :func:`fills_per_row` takes made that union of products (a split's operand:
    there the product's own loops cannot nest, and the split's groups walk the union of the parts' rows)."""
    if isinstance(s, Product):
        out = fills_per_row(s.a, s.b)
        if out is not None:
            return out
    kids = s.children()
    if isinstance(s, Project) and s.group is not None:
        group = split_fills_apart(s.group)
        return replace(s, a=split_fills_apart(s.a), group=group)
    new = tuple(split_fills_apart(c) for c in kids)
    return rebuild(s, new) if new != kids else s


def _chained(parts: list) -> Seq:
    # (the parts concatenated again from the right, as the front end nests them)
    out = parts[-1]
    for p in reversed(parts[:-1]):
        out = Concat(p, out)
    return out


def _outline(s: Seq) -> Seq:
    # (where a sequence's coordinates can be: each leaf as Ƒ of its extent)
    kids = s.children()
    return rebuild(s, tuple(map(_outline, kids))) if kids else Full(s.size())


def covered(sub: Seq, s: Seq) -> list:
    """The leaves that run out with ``sub`` in point ``s``: ``sub`` is the rows of a product of universes
    (a part of another fill's, :func:`fills_per_row`), and each is the rows of a product of the same outline
    (offsets and pads) read nowhere else, whose coordinates are all that product's; past its last coordinate
    they are spent too. Removed with it, the points where the part's stored entries outlive its universe,
    which no loop reaches, are not built.

    >>> from compiler.lattice.sequences import Level
    >>> kB, pB = Level("B", 0, "dense", 2, "k"), Level("B", 1, "compressed", 4, "p")
    >>> u = Universe(2, "k", "p_B")
    >>> s = Union(Product(kB, Offset(3, pB)), Product(u, Offset(3, Universe(4, "p"))))
    >>> [str(c) for c in covered(u, s)], covered(kB, s)
    (['k_B'], [])
    """
    whole = [n for n in walk(s) if isinstance(n, Product) and n.a == sub]
    if len(whole) != 1 or not all(isinstance(x, Universe) for x in whole[0].iters()):
        return []
    shape = _outline(whole[0])
    leaves = [n for n in walk(s) if isinstance(n, LEAVES)]
    return [n.a for n in walk(s) if isinstance(n, Product) and n is not whole[0] and isinstance(n.a, LEAVES)
            and n.a != sub and leaves.count(n.a) == 1 and _outline(n) == shape]


__all__ = ["FILL_ROW_PRODUCTS", "concat_per_row", "covered", "fills_per_row", "parts_of", "split_fills_apart",
           "tensors_of", "without"]
