"""Hypothesis strategies for random sequence expressions (shared by the sequence-layer tests)."""

from hypothesis import strategies as st

from compiler.lattice.sequences import (Concat, Intersect, Level, Offset, Pad, Product, Project, Slice, Union,
                                        Universe)

KINDS = ("compressed", "compressed", "dense", "singleton")


@st.composite
def seqs(draw, size=None, depth=3, inner=False, universe=True):
    """A sequence expression of logical size ``size`` whose leaves are distinct tensors' levels.

    ``inner``: the expression is a product's right operand (no union or concatenation there: the
    lattice takes no edge from it, see seqlattice's refusal).
    """
    names = draw(st.shared(st.just([0]), key="names"))
    n = size if size is not None else draw(st.integers(1, 8))

    def leaf():
        names[0] += 1
        if universe and draw(st.integers(0, 9)) == 0:
            return Universe(n, f"u{names[0]}")
        return Level(f"t{names[0]}", 0, draw(st.sampled_from(KINDS)), n, "i")

    if depth == 0:
        return leaf()
    ops = ["leaf", "leaf", "inter", "prod", "dep", "dep", "slice", "proj"]
    if not inner:
        ops += ["union", "union", "concat", "offset", "pad"]
    op = draw(st.sampled_from(ops))
    sub = lambda m, **kw: draw(seqs(m, depth - 1, kw.pop("inner", inner), universe))  # noqa: E731
    if op == "union":
        return Union(sub(n), sub(n))
    if op == "inter":
        return Intersect(sub(n), sub(n))
    if op == "prod":
        divs = [d for d in range(1, n + 1) if n % d == 0]
        p = draw(st.sampled_from(divs))
        return Product(sub(p), sub(n // p, inner=True))
    if op == "dep":
        # two levels of one tensor: the inner level's fibers depend on the outer coordinate
        divs = [d for d in range(1, n + 1) if n % d == 0]
        p = draw(st.sampled_from(divs))
        names[0] += 1
        t = f"T{names[0]}"
        outer = Level(t, 0, draw(st.sampled_from(KINDS)), p, "i")
        if draw(st.booleans()):
            # the rows of the tensor among other outer coordinates: its inner level has no fiber
            # where its own row is not the one the product is at
            other = sub(p, inner=True)
            outer = Union(outer, other) if draw(st.booleans()) and not inner else Intersect(other, outer)
        return Product(outer, Level(t, 1, draw(st.sampled_from(KINDS)), n // p, "j"))
    if op == "concat" and n >= 2:
        p = draw(st.integers(1, n - 1))
        return Concat(sub(p), sub(n - p))
    if op == "offset" and n >= 2:
        p = draw(st.integers(1, n - 1))
        return Offset(p, sub(n - p))
    if op == "pad" and n >= 2:
        p = draw(st.integers(1, n - 1))
        return Pad(sub(n - p), p)
    if op == "slice":
        r = draw(st.integers(1, 3))
        s = draw(st.integers(0, 2))
        e = s + (n - 1) * r + draw(st.integers(1, r))
        return Slice(sub(e + draw(st.integers(0, 2))), s, e, r)
    if op == "proj":
        J = draw(st.integers(1, 3))
        return Project(0, sub(n * J), J)
    return leaf()
