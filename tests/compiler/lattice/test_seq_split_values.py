"""The value language under a split (issue 30): ``(x - y).reshape(3, 4)``, ``where(x > 0, x, y).reshape(2, 6)``,
unary functions and comparisons of sparse vectors and CSR matrices, and operands whose fill is NaN, lowered by
the lattice as one kernel. Before, the sequence lowering took ``+`` and ``*`` of fill-0 operands only: these were
refused and computed another way (the trace's ``retry`` step). An operator's sequence is the union of its
operands' (an absent operand reads its fill: ``x - y`` where only ``y`` is stored is ``fill_x - y``), an IEEE
operator of NaN-fill operands their intersection. Each kernel against numpy, the dense oracle and the IR
interpreter, with no retry."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import array as xp
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf


def test_x_minus_y_reads_the_absent_operands_fill():
    (x, X), (y, Y) = operand(12, "sparse_vector", 1), operand(12, "sparse_vector", 2, fill=0.0)
    kernel = one_lattice_kernel((X - Y).reshape(3, 4), (x - y).reshape(3, 4), "csr")
    cfir = kernel.trace.find("cfir")[0].after_text
    # (where only y is stored, x reads its fill: 0 - y)
    assert "0 - B(" in cfir and "A(k_A) - B(k_B)" in cfir.replace("π1", ""), cfir


def test_a_chain_of_operators_walks_each_operand_once():
    """(x - y - y - ...) under a split: each operator's sequence flattens its argument's union, so the loop
    walks x's and y's entries once (a nested (((x ∪ y) ∪ y) ∪ y ...) grew the C 1.8x per operator: 16 of them
    took 45 s to lower)."""
    (x, X), (y, Y) = operand(12, "sparse_vector", 1, fill=1.0), operand(12, "sparse_vector", 2, fill=1.0)
    e, want = X, x
    for _ in range(12):
        e, want = e - Y, want - y
    kernel = one_lattice_kernel(e.reshape(3, 4), want.reshape(3, 4), "csr")
    loops = [str(s) for _, s in kernel.trace.find("seq-derive")[0].data["loops"]]
    assert all(s.count("∪") <= 1 for s in loops), loops


@pytest.mark.parametrize("case", [
    # x - y of a COO vector and a sparse one, NaN and ±inf stored, into CSR
    "sub-coo",
    # where(x > 0, x, y) into COO and dense
    "where",
    "where-dense",
    # unary functions: -x, sin(x), cos(x) (whose fill is 1: dense result), abs of a CSR split
    "neg", "sin", "cos", "abs-csr",
    # comparisons: bool results
    "gt", "ne-csr",
    # CSR matrices: (A - B).reshape, a collapse of the difference (a union of products), split
    "csr-sub",
    # an all-fill operand and a dense one
    "empty-sub-dense",
    # max of a split vector and a CSR matrix of the result's shape
    "split-max-csr",
    # a summed group of a difference, and a product over a difference or a sum: (x + y) * z was lowered on main
    # and wrong (a case π1(k_x ∩ k_z) of the group's loop tested the minimum of x and z, with x ahead)
    "sum-group", "product-over-sub", "product-over-add",
    # an hstack's straddling split inside a union (A's and B's rows meet in a group: their π0s may be at one i)
    "straddle-plus", "straddle-minus",
])
def test_operators_under_a_split_are_one_lattice_kernel(case):
    with np.errstate(invalid="ignore"):
        if case == "sub-coo":
            (x, X), (y, Y) = operand(12, "coo", 3), operand(12, "sparse_vector", 4, odd=(nan, inf, -inf))
            one_lattice_kernel((X - Y).reshape(3, 4), (x - y).reshape(3, 4), "csr")
        elif case in ("where", "where-dense"):
            (x, X), (y, Y) = operand(12, "sparse_vector", 5, odd=(-inf,)), operand(12, "coo", 6)
            out = "coo" if case == "where" else None
            one_lattice_kernel(xp.where(X > 0, X, Y).reshape(2, 6), np.where(x > 0, x, y).reshape(2, 6), out)
        elif case in ("neg", "sin", "cos"):
            (x, X) = operand(12, "sparse_vector", 7, odd=(nan, inf))
            f = {"neg": (np.negative, xp.negative), "sin": (np.sin, xp.sin), "cos": (np.cos, xp.cos)}[case]
            one_lattice_kernel(f[1](X).reshape(4, 3), f[0](x).reshape(4, 3))
        elif case == "abs-csr":
            (a, A) = operand((3, 4), "csr", 8, odd=(-inf,))
            one_lattice_kernel(xp.abs(A).reshape(2, 6), np.abs(a).reshape(2, 6), "csr")
        elif case == "gt":
            (x, X), (y, Y) = operand(12, "sparse_vector", 9, odd=(nan,)), operand(12, "sparse_vector", 10)
            one_lattice_kernel((X > Y).reshape(3, 4), (x > y).reshape(3, 4))
        elif case == "ne-csr":
            (a, A), (b, B) = operand((2, 6), "csr", 11), operand((2, 6), "csr", 12)
            one_lattice_kernel((A != B).reshape(3, 4), (a != b).reshape(3, 4))
        elif case == "csr-sub":
            (a, A), (b, B) = operand((3, 8), "csr", 13), operand((3, 8), "csr", 14, odd=(inf,))
            one_lattice_kernel((A - B).reshape(4, 6), (a - b).reshape(4, 6), "csr")
        elif case == "empty-sub-dense":
            (x, X), (y, Y) = operand(12, "sparse_vector", 15, density=0.0), operand(12, "dense", 16)
            one_lattice_kernel((X - Y).reshape(4, 3), (x - y).reshape(4, 3), "coo")
        elif case.startswith("straddle"):
            (a, A), (b, B), (c, C) = operand((5, 4), "csr", 26), operand((5, 4), "coo", 27), operand((5, 8), "csr", 28)
            h, H = np.concatenate([a, b], axis=1).reshape(4, 10), xp.concat([A, B], axis=1).reshape(4, 10)
            if case == "straddle-plus":
                one_lattice_kernel(H + C.reshape(4, 10), h + c.reshape(4, 10), "csr")
            else:
                one_lattice_kernel(H - C.reshape(4, 10), h - c.reshape(4, 10))
        elif case == "split-max-csr":
            (x, X), (b, B) = operand(12, "sparse_vector", 17), operand((3, 4), "csr", 18)
            one_lattice_kernel(xp.maximum(X.reshape(3, 4), B), np.maximum(x.reshape(3, 4), b), "coo")
        else:
            (x, X), (y, Y), (z, Z) = (operand(12, f, s) for f, s in (("sparse_vector", 23), ("coo", 24),
                                                                     ("sparse_vector", 25)))
            if case == "sum-group":
                one_lattice_kernel((X - Y).reshape(3, 4).sum(axis=1), (x - y).reshape(3, 4).sum(axis=1))
            elif case == "product-over-add":
                one_lattice_kernel(((X + Y) * Z).reshape(2, 6), ((x + y) * z).reshape(2, 6))
            else:
                one_lattice_kernel(((X - Y) * Z).reshape(2, 6), ((x - y) * z).reshape(2, 6), "csr")


@pytest.mark.parametrize("fmts, out", [(("sparse_vector", "sparse_vector"), None), (("coo", "dense"), None),
                                       (("csr", "csr"), None)])
def test_nan_fills_under_plus_in_a_split(fmts, out):
    # (NaN + y is NaN: the result is stored where both are, an intersection; before, refused: "has fill nan")
    shape = (2, 6) if fmts[0] == "csr" else (12,)
    (x, X), (y, Y) = (operand(shape, f, s, fill=nan, odd=o) for f, s, o in zip(fmts, (19, 20), ((inf,), (-inf, 2.0))))
    with np.errstate(invalid="ignore"):
        kernel = one_lattice_kernel((X + Y).reshape(3, 4), (x + y).reshape(3, 4), out)
    cfir = kernel.trace.find("cfir")[0].after_text
    # (the loops walk the intersection: no loop where only one operand is stored)
    assert "∩" in cfir.splitlines()[0] and "∪" not in cfir, cfir


def test_a_nan_fill_beside_a_zero_fill():
    # x of fill NaN minus y of fill 0: NaN where x is absent, x - 0 where only x is stored
    (x, X), (y, Y) = operand(12, "sparse_vector", 21, fill=nan), operand(12, "coo", 22)
    one_lattice_kernel((X - Y).reshape(3, 4), (x - y).reshape(3, 4))
    one_lattice_kernel((X * Y).reshape(2, 6), (x * y).reshape(2, 6))


OPS = {
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "where": (lambda a, b: np.where(a > 0, a, b), lambda a, b: xp.where(a > 0, a, b)),
    "max": (np.maximum, xp.maximum),
    "gt": (lambda a, b: a > b, lambda a, b: a > b),
    "neg-add": (lambda a, b: -a + b, lambda a, b: -a + b),
}


@st.composite
def split_values(draw):
    """``(op, terms, size, rows, matrix, out)``: ``op`` of two operands of ``size`` entries (vectors, or 2-row
    matrices), each ``(format, density, seed, fill, odd values)``, reshaped to ``rows`` rows."""
    size = draw(st.sampled_from([6, 8, 12]))
    matrix = draw(st.booleans())
    fmts = ["csr", "coo", "dense"] if matrix else ["sparse_vector", "coo", "dense"]
    terms = [(draw(st.sampled_from(fmts)), draw(st.sampled_from([0.0, 0.3, 0.7, 1.0])), draw(st.integers(0, 99)),
              draw(st.sampled_from([0.0, nan])), draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for _ in range(2)]
    rows = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
    return draw(st.sampled_from(sorted(OPS))), terms, size, rows, matrix, draw(st.sampled_from([None, "csr", "coo"]))


@settings(max_examples=7, deadline=None)
@given(split_values())
@example(("sub", [("dense", 0.3, 1, nan, ()), ("sparse_vector", 0.7, 2, 0.0, (nan,))], 12, 4, False, "csr"))
@example(("where", [("csr", 0.7, 3, 0.0, (-inf,)), ("coo", 0.0, 4, 0.0, ())], 8, 4, True, "coo"))
def test_operators_under_a_split_by_property(drawn):
    name, terms, size, rows, matrix, out = drawn
    shape = (2, size // 2) if matrix else (size,)
    (a, A), (b, B) = (operand(shape, fmt, seed, density, fill, odd) for fmt, density, seed, fill, odd in terms)
    with np.errstate(invalid="ignore"):
        want = OPS[name][0](a, b).reshape(rows, size // rows)
    one_lattice_kernel(OPS[name][1](A, B).reshape(rows, size // rows), want, out)
