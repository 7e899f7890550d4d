"""A product nested in the left operand of another (issue 30): the collapse of a collapse of an
elementwise operator whose union sits in the innermost product, ``xp.minimum(A, B).reshape(3)`` of a
CSF ``A`` and a dense ``B`` of shape (1, 3, 1) as the front end lowers it. The outer product's loops
are ``i_row``, ``i_col``; ``i_row`` is itself a product whose loops nest (``i_row_row``, ``i_row_col``),
and its coordinate must be bound where the inner body writes at ``i = i_row·|l| + i_col``: on main the
kernel read an undeclared ``i_row`` and the C compiler rejected it. Against the dense oracle, the CFIR
and IR interpreters (one_kernel), and through the array front end against numpy, over fills and
formats.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.lattice.test_seq_concat_fills import one_kernel

nan, inf = np.nan, np.inf
CSF, DENSE3 = "Dense(SparseList(SparseList(Element(0.0))))", "Dense(Dense(Dense(Element(0.0))))"
PROGRAM = ("c[i] = collapse(collapse(split(collapse(min(A[m, n, p], B[m, n, p]), (m, n) -> j), p -> (k:1, l:1)), "
           "(j, k) -> q), (q, l) -> i)")


def operand(shape, fmt, fill, seed, odd=()):
    r = np.random.default_rng(seed)
    a = np.where(r.random(shape) < 0.5, r.choice([1.0, -2.0, 0.5, nan, inf, -inf], shape), fill)
    a.flat[:len(odd)] = odd
    return a, ss.Tensor.from_numpy(a, fmt, fill=fill)


@pytest.mark.parametrize("out", [None, "sparse_vector"])
@pytest.mark.parametrize("shape", [(1, 3, 1), (2, 3, 1), (2, 2, 1)])
def test_a_collapse_of_a_collapse_of_an_operator_with_a_union(shape, out):
    (_, A), (_, B) = operand(shape, "csf", 0.0, 1, odd=(0.0, -inf)), operand(shape, "dense", 0.0, 2)
    program = PROGRAM.replace("(k:1, l:1)", f"(k:1, l:{shape[2]})")
    one_kernel(program, out, A=A, B=B)


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2)),
       formats=st.tuples(st.sampled_from(["csf", "dense", "coo"]), st.sampled_from(["csf", "dense", "coo"])),
       fills=st.tuples(st.sampled_from([0.0, 1.0, nan]), st.sampled_from([0.0, -inf])),
       op=st.sampled_from(["minimum", "maximum", "add", "multiply"]), out=st.sampled_from([None, "sparse"]),
       seed=st.integers(0, 2 ** 16))
@example(shape=(1, 3, 1), formats=("csf", "dense"), fills=(0.0, 0.0), op="minimum", out="sparse", seed=248)
def test_the_array_front_ends_ravel_of_an_operator_of_3d_operands(shape, formats, fills, op, out, seed):
    (a, A), (b, B) = operand(shape, formats[0], fills[0], seed), operand(shape, formats[1], fills[1], seed + 1)
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, b).reshape(shape[0] * shape[1], shape[2], 1).reshape(-1)
        got = getattr(xp, op)(xp.asarray(A), xp.asarray(B)).reshape(shape[0] * shape[1], shape[2], 1).reshape(-1)
        res = got.compute(strategy="lattice", format=out, checked=True)
    res.validate()
    np.testing.assert_array_equal(np.asarray(res), want)
