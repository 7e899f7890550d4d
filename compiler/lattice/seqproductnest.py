"""A product whose right operand holds a union or a concatenation, its loops nested (issue 30): the
right operand's lattice inside each coordinate of the left one, as TACO nests an inner loop's.

The lattice takes a product's edges from its left operand only (Fig. 13): its right operand restarts
inside the product's iterator, at each coordinate of the left. A union there, as in the collapse
``c[m] = collapse(A[i, j] * (B[i, j] + C[i, j]), (i, j) -> m)`` of CSR matrices, iterating ``(i_A ∩
(i_B ∪ i_C)) × (j_A ∩ (j_B ∪ j_C))``, has operands that run out within a row, one before the other:
one loop over the product would leave the row as soon as either did, skipping the other's rest of it.
So a loop whose sequence is such a product (:func:`nests`) becomes two: one over the left operand
and, inside it, the loops of the right operand's own lattice, built for the leaves the outer loop's
case has there (``j_C`` is not walked in a row where ``C`` stores nothing); the product's coordinate
is ``outer·|b| + inner`` (the CFIR's :class:`~compiler.lattice.seqcfir.Bind`). Each coordinate is
visited once, in increasing order, so the output is appended as before. Inside a loop over a part of a
concatenation, the leaves only another part reads are not walked (``stack([A, B]).reshape(2, -1)``: each
part's rows walk its own operand's entries).

>>> from compiler.lattice.sequences import Level, Product, Union
>>> from compiler.lattice.seqcfir import Add, Assign, Forall, Read, build_cfir
>>> (iB, jB), (iC, jC) = ((Level(t, 0, "dense", 2, "i"), Level(t, 1, "compressed", 3, "j")) for t in "BC")
>>> seq = Product(Union(iB, iC), Union(jB, jC))
>>> print(build_cfir(Forall("m", seq, Assign("c", ("m",), Add(Read("B", (iB, jB)), Read("C", (iC, jC)))))).text())
while m_row <- i_B with i_C = i_B
  while m_col <- j_B ∪ j_C
    m = m_row·3 + m_col
    switch m_col
    case j_B ∪ j_C:
      c(m) = B(i_B, j_B) + C(i_C, j_C)
    case j_B:
      c(m) = B(i_B, j_B)
    case j_C:
      c(m) = C(i_C, j_C)
  while m_col <- j_B
    m = m_row·3 + m_col
    c(m) = B(i_B, j_B)
  while m_col <- j_C
    m = m_row·3 + m_col
    c(m) = C(i_C, j_C)
>>> nests(seq), nests(Product(iB, jB)), nest_names("m", {"m", "m_row"})
(True, False, ('m_row_2', 'm_col'))

Such a product merged with another operand, ``collapse(A * (B + C)) + w[m]``, iterating ``((i_A ∩ (i_B
∪ i_C)) × (j_A ∩ (j_B ∪ j_C))) ∪ m_w``, is one loop over a union whose product has no iterator of its
own to merge with ``m_w``'s. :func:`factored` makes it one product first, ``(i_A ∩ (i_B ∪ i_C) ∪
π0(m_w, 4)) × (j_A ∩ (j_B ∪ j_C) ∪ π1(m_w, 4))``: the other operand split into the product's rows
and columns (its rows merged with the left operand's, each row's columns with the right operand's, as
the split of a vector is walked), then nested as above.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from ..names import FreshNames
from .sequences import Concat, Intersect, Product, Project, Seq, Union, walk


def nests(s: Seq) -> bool:
    """Whether the loop over ``s`` nests its operands' loops: ``s`` a product whose right operand
    holds a union or a concatenation (which one loop over the product cannot walk: see above)."""
    return isinstance(s, Product) and any(isinstance(n, (Union, Concat)) for n in walk(s.b))


def factored(s: Seq) -> Product | None:
    """``s``, a union or intersection of a product that :func:`nests` with other operands, as one
    product that nests: ``(a × b) ∪ x`` is ``(a ∪ π0(x, |b|)) × (b ∪ π1(x, |b|))`` (the same
    coordinates: row ``r`` of ``x`` is at ``r·|b|`` + its columns, and a π1 walks only the group its π0
    is at), ``(a × b) ∪ (c × d)`` of ``|d| = |b|`` is ``(a ∪ c) × (b ∪ d)``, and ``∩`` alike; None
    where no such product is in ``s`` (or two of other row lengths).

    >>> from compiler.lattice.sequences import Level
    >>> (iA, jA), (iB, jB) = ((Level(t, 0, "dense", 2, "i"), Level(t, 1, "compressed", 3, "j")) for t in "AB")
    >>> w = Level("w", 0, "compressed", 6, "m")
    >>> print(factored(Union(Product(iA, Union(jA, jB)), w)))
    (i_A ∪ π0(m_w, 3)) × ((j_A ∪ j_B) ∪ π1(m_w, 3))
    >>> print(factored(Intersect(w, Product(iA, Union(jA, jB)))), factored(Union(Product(iA, jA), w)))
    (π0(m_w, 3) ∩ i_A) × (π1(m_w, 3) ∩ (j_A ∪ j_B)) None
    """
    if nests(s):
        return s
    if not isinstance(s, (Union, Intersect)):
        return None
    sides = (factored(s.a), factored(s.b))
    J = next((f.b.size() for f in sides if f is not None), None)
    if J is None or any(f is not None and f.b.size() != J for f in sides):
        return None
    rows, cols = [], []
    for x, f in zip((s.a, s.b), sides):
        x = f if f is not None else x
        if isinstance(x, Product) and x.b.size() == J:
            rows.append(x.a)
            cols.append(x.b)
        else:
            rows.append(Project(0, x, J))
            cols.append(Project(1, x, J))
    op = type(s)
    return Product(op(*rows), op(*cols))


def over_parts(s: Seq, live: Seq) -> Product | None:
    """``s``, a product over a concatenation (or such a product merged with other operands, as
    :func:`factored` makes it one product), when ``live`` (``s`` simplified, the product distributed
    over the concatenation's parts: ``product-over-concat``) has a part that :func:`nests`; else None.

    The collapse of a vstack whose second part is of another fill than the result's walks every
    column of that part's rows (``U_j`` beside ``j_A1``, tied to that part): ``(k_A ⊔ l_A1) × (j_A ∪
    (j_A1 ∪ U_j))`` is ``(k_A × j_A) ⊔ (l_A1 × (j_A1 ∪ U_j))`` part by part, whose second product no
    lattice takes. Its loops nest instead, as they do for a product that is a loop's whole sequence:
    the outer loop over the parts' rows, the inner one over the columns as each part's rows have them
    (the other part's levels are not live there, its tied universe away). Merged with another operand,
    ``collapse(vstack) * x[m]``, the product is factored first (``π0(m_x, |j|)`` beside the parts' rows,
    ``π1(m_x, |j|)`` beside each row's columns), then nested alike. Under a split of it (a reshape) a
    loop walks ``π0(s, Q)``, a group of ``Q`` consecutive coordinates that can straddle rows: not a
    product, so it does not nest (nor does a split of any product that :func:`nests`).

    >>> from compiler.lattice.sequences import Level, Product, Union, Universe
    >>> kA, jA = Level("A", 0, "dense", 2, "k"), Level("A", 1, "compressed", 3, "j")
    >>> lB, jB = Level("B", 0, "dense", 1, "l"), Level("B", 1, "compressed", 3, "j")
    >>> s = Product(Concat(kA, lB), Union(jA, Union(jB, Universe(3, "j"))))
    >>> print(over_parts(s, Concat(Product(kA, jA), Product(lB, Union(jB, Universe(3, "j"))))))
    (k_A ⊔ l_B) × (j_A ∪ (j_B ∪ U_j))
    >>> over_parts(s, Concat(Product(kA, jA), Product(lB, jB))) is None
    True
    >>> x = Level("x", 0, "compressed", 9, "m")
    >>> print(over_parts(Intersect(s, x), Intersect(Concat(Product(kA, jA), Product(lB, Union(jB, Universe(3, "j")))), x)))
    ((k_A ⊔ l_B) ∩ π0(m_x, 3)) × ((j_A ∪ (j_B ∪ U_j)) ∩ π1(m_x, 3))
    """
    product = factored(s)
    if product is None or not any(isinstance(n, Concat) for n in walk(product.a)):
        return None
    # (the parts of the concatenation, one merged with other operands too: ``(P0 ⊔ P1) ∩ m_x``)
    parts, todo = [], [(live, False)]
    while todo:
        x, in_concat = todo.pop()
        if isinstance(x, (Concat, Union, Intersect)):
            todo += [(c, in_concat or isinstance(x, Concat)) for c in (x.a, x.b)]
        elif in_concat:
            parts.append(x)
    return product if any(nests(p) for p in parts) else None


def nest_names(index: str, taken) -> tuple[str, str]:
    """The names of the loops over the left and the right operand of the product ``index`` walks,
    none of ``taken``."""
    fresh = FreshNames(taken)
    return fresh(f"{index}_row"), fresh(f"{index}_col")


def held(stmt) -> list:
    """The statements ``stmt`` (CIN or CFIR) holds: a loop's body, a block's, a switch's cases'.

    >>> from compiler.lattice.seqcfir import Assign, Block, Lit, Skip
    >>> held(Block((Skip(), Assign("c", (), Lit(1.0)))))
    [Skip(), Assign(out='c', idxs=(), value=Lit(value=1.0))]
    """
    out = []
    for f in fields(stmt) if is_dataclass(stmt) else ():
        if f.name in ("body", "stmts", "cases"):
            v = getattr(stmt, f.name)
            out += [x[1] if isinstance(x, tuple) else x for x in (v if isinstance(v, tuple) else (v,))]
    return out


def index_names(stmt) -> set:
    """Every index name the statement ``stmt`` (CIN or CFIR) loops over or writes at.

    >>> from compiler.lattice.seqcfir import Assign, Forall, Lit
    >>> from compiler.lattice.sequences import Universe
    >>> sorted(index_names(Forall("i", Universe(2, "i"), Assign("c", ("i", "k"), Lit(1.0)))))
    ['i', 'k']
    """
    out = {getattr(stmt, f, None) for f in ("index", "outer", "inner")} - {None}
    out |= set(getattr(stmt, "idxs", ()))
    return out.union(*(index_names(x) for x in held(stmt)))


def writes_at(stmt, index: str) -> bool:
    """Whether ``stmt`` writes an output (or adds into one) at ``index``: a product's coordinate
    nested away is bound only where it is (a sum over it reads none), and a coordinate made of
    ``index`` (the outer loop of a product nested again: ``i = i_row·|j| + i_col`` reads ``i_row``)
    is written at it too.

    >>> from compiler.lattice.seqcfir import Assign, Bind, Block, Lit, Reduce
    >>> writes_at(Block((Reduce("t", (), Lit(1.0)),)), "m"), writes_at(Assign("c", ("m",), Lit(1.0)), "m")
    (False, True)
    >>> writes_at(Bind("i", "i_row", "i_col", 3, Assign("c", ("i",), Lit(1.0))), "i_row")
    True
    """
    return index in getattr(stmt, "idxs", ()) or index in getattr(stmt, "made_of", ()) or \
        any(writes_at(x, index) for x in held(stmt))


__all__ = ["nests", "factored", "over_parts", "nest_names", "held", "index_names", "writes_at"]
