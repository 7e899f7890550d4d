"""A split of a union of sparse operands under the lattice strategy (issue 30): ``(x + y).reshape(3, 4)``,
``(x * y + z).reshape(...)``, ``(A + B).reshape(...)`` of CSR matrices, an hstack raveled and split. The rows loop
over ``π0(k_x ∪ k_y, J)``; inside a group, once ``x`` ran out, what is left is ``y``'s rest of that group,
``π1(k_y, J @ k_x ∪ k_y)``, not ``∅`` (the inner loop had lost its sub-points: one case adding both operands, read
where one was not) nor a refusal (the front end computed it another way, the trace's ``retry`` step said so).
Each compiled kernel against numpy, the dense oracle and the IR interpreter, with no retry and no materialized
intermediate."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import array as xp
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf


def test_the_inner_loop_keeps_each_operand_in_its_group():
    (x, X), (y, Y) = operand(12, "sparse_vector", 1), operand(12, "sparse_vector", 2)
    kernel = one_lattice_kernel((X + Y).reshape(3, 4), (x + y).reshape(3, 4))
    cfir = kernel.trace.find("cfir")[0].after_text
    # (one loop per operand for the rest of the group once the other ran out in it)
    assert "while j <- π1(k_A, 4 @ k_A ∪ k_B)" in cfir and "while j <- π1(k_B, 4 @ k_A ∪ k_B)" in cfir, cfir


@pytest.mark.parametrize("case", [
    # (x + y) of a COO vector and a sparse one, NaN and inf stored, into CSR
    "coo+sv",
    # an all-fill sparse vector plus a dense one, into COO
    "empty+dense",
    # x * y + z: the union of an intersection and a vector
    "mul-add",
    # CSR matrices: the union of two products (each a collapse), split
    "csr+csr",
    # a split vector plus a CSR matrix of the result's shape, and (x + y) split in three
    "split+csr",
    "3d",
])
def test_splits_of_unions_are_one_lattice_kernel(case):
    if case == "coo+sv":
        (x, X), (y, Y) = operand(12, "coo", 3), operand(12, "sparse_vector", 4, odd=(nan, inf, -inf))
        with np.errstate(invalid="ignore"):
            want = (x + y).reshape(3, 4)
        one_lattice_kernel((X + Y).reshape(3, 4), want, "csr")
    elif case == "empty+dense":
        (x, X), (y, Y) = operand(12, "sparse_vector", 5, density=0.0), operand(12, "dense", 6)
        one_lattice_kernel((X + Y).reshape(4, 3), (x + y).reshape(4, 3), "coo")
    elif case == "mul-add":
        (x, X), (y, Y), (z, Z) = (operand(12, f, s) for f, s in (("sparse_vector", 7), ("coo", 8), ("sparse_vector", 9)))
        one_lattice_kernel((X * Y + Z).reshape(2, 6), (x * y + z).reshape(2, 6))
    elif case == "csr+csr":
        (a, A), (b, B) = operand((3, 8), "csr", 10), operand((3, 8), "csr", 11, odd=(inf,))
        one_lattice_kernel((A + B).reshape(4, 6), (a + b).reshape(4, 6), "csr")
    elif case == "split+csr":
        (x, X), (b, B) = operand(12, "sparse_vector", 12), operand((3, 4), "csr", 13)
        one_lattice_kernel(X.reshape(3, 4) + B, x.reshape(3, 4) + b, "coo")
    else:
        (x, X), (y, Y) = operand(12, "coo", 14), operand(12, "sparse_vector", 15)
        one_lattice_kernel((X + Y).reshape(2, 3, 2), (x + y).reshape(2, 3, 2))


def test_a_nan_fill_summed_in_a_group_is_one_lattice_kernel():
    # (x + y of NaN fills summed over a split's group: each coordinate the loops skip adds NaN, folded in
    # after them; before, refused: "its summand has fill nan", and computed another way)
    (x, X), (y, Y) = operand(8, "sparse_vector", 16, fill=nan), operand(8, "sparse_vector", 17, fill=nan)
    one_lattice_kernel((X + Y).reshape(2, 4).sum(axis=1), (x + y).reshape(2, 4).sum(axis=1))


@st.composite
def split_unions(draw):
    """``(terms, size, rows, matrix, out)``: ``x + y`` or ``x * y + z`` of operands of ``size`` entries
    (vectors, or 2-row matrices), each ``(format, density, seed, odd values)``, reshaped to ``rows`` rows."""
    size = draw(st.sampled_from([6, 8, 12]))
    matrix = draw(st.booleans())
    fmts = ["csr", "coo", "dense"] if matrix else ["sparse_vector", "coo", "dense"]
    n = draw(st.sampled_from([2, 3]))
    terms = [(draw(st.sampled_from(fmts)), draw(st.sampled_from([0.0, 0.3, 0.7, 1.0])), draw(st.integers(0, 99)),
              draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for _ in range(n)]
    rows = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
    return terms, size, rows, matrix, draw(st.sampled_from([None, "csr", "coo"]))


@settings(max_examples=7, deadline=None)
@given(split_unions())
# (a sparse vector's entries after a dense one's end in a group: every group ends with the dense)
@example(([("dense", 0.3, 1, ()), ("sparse_vector", 0.7, 2, (nan,))], 12, 4, False, "csr"))
# (x * y + z of matrices, z full: the intersection runs out inside each group)
@example(([("csr", 0.7, 3, ()), ("coo", 0.7, 4, ()), ("csr", 1.0, 5, ())], 8, 4, True, "coo"))
def test_splits_of_unions_by_property(drawn):
    terms, size, rows, matrix, out = drawn
    shape = (2, size // 2) if matrix else (size,)
    ops = [operand(shape, fmt, seed, density, odd=odd) for fmt, density, seed, odd in terms]
    with np.errstate(invalid="ignore"):     # (inf - inf, 0 * inf: NaN, as the kernel computes)
        if len(ops) == 2:
            want, expr = ops[0][0] + ops[1][0], ops[0][1] + ops[1][1]
        else:
            want, expr = ops[0][0] * ops[1][0] + ops[2][0], ops[0][1] * ops[1][1] + ops[2][1]
    want = want.reshape(rows, size // rows)
    if len(ops) == 3 and any(odd for *_, odd in terms):
        # (NaN or inf in x * y + z: where a factor is 0 the lattice's intersection would skip what
        # numpy computes as NaN; refused then, with its reason, and computed another way)
        kernel = expr.reshape(rows, size // rows).lower(out, strategy="lattice")
        np.testing.assert_array_equal(kernel().to_numpy(), want)
        return
    one_lattice_kernel(expr.reshape(rows, size // rows), want, out)


@pytest.mark.parametrize("fmts, out, shape", [(("csr", "csr"), None, (-1,)), (("coo", "csr"), None, (-1,)),
                                              (("csr", "coo"), "coo", (3, 10))])
def test_the_hstacks_union_of_products_has_no_case_for_both_operands(fmts, out, shape):
    # (A's columns are 0-3 of each row, B's 4-5: the case where both are at one coordinate never ran, and its
    # C added A's entry to B's; dropped, the rewrite says why)
    (a, A), (b, B) = operand((5, 4), fmts[0], 30, odd=(nan,)), operand((5, 2), fmts[1], 31, odd=(-inf,))
    want = np.concatenate([a, b], axis=1).reshape(shape)
    kernel = one_lattice_kernel(xp.concat([A, B], axis=1).reshape(shape), want, out)
    cfir = kernel.trace.find("cfir")[0]
    assert not any(line.strip().startswith("case") and "∪" in line.split("@")[0] for line in cfir.after_text.splitlines()), \
        cfir.after_text
    assert "disjoint-case" in [r.rule for r in cfir.rewrites], cfir.after_text
    assert "A_val[" not in "".join(line for line in kernel.c_source.splitlines() if "B_val[" in line)
