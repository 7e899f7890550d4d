"""A slice of a collapse under the looplets strategy (issue 30 item 4): ``x.ravel()[a:b:r]`` reads
``x`` at ``k // |j|, k % |j|`` for the slice's ``k = a + r·p`` (let-bound before the statement,
each entry located: a binary search in a sparse level), negative steps and column-major
collapses too; it was refused ('the collapsed index k is ... computed by another shape
operator'), and the array front end materialized the ravel. Against numpy, the dense oracle and
the IR interpreter, through index notation and the array front end."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.reference import evaluate
from tests.compiler.looplets.slice_cases import bounds

FILLS = (0.0, 1.0, np.nan, np.inf, -np.inf)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 3), st.integers(0, 4)), r=st.sampled_from([1, 2, 3, -1, -2, -3]),
       cut=st.tuples(st.integers(-13, 13), st.integers(-13, 13)), column_major=st.booleans(),
       fmt=st.sampled_from(["dense", "csr", "coo"]), fill=st.sampled_from(FILLS),
       out=st.sampled_from(["dense", "sparse_vector"]), seed=st.integers(0, 2 ** 16))
@example(shape=(3, 4), r=3, cut=(1, 11), column_major=False, fmt="csr", fill=0.0, out="sparse_vector",
         seed=0)    # refused before
@example(shape=(2, 3), r=-2, cut=(5, -7), column_major=True, fmt="coo", fill=np.nan, out="dense", seed=1)
@example(shape=(3, 2), r=1, cut=(2, 5), column_major=False, fmt="dense", fill=-np.inf, out="sparse_vector", seed=2)
@example(shape=(0, 3), r=2, cut=(0, 3), column_major=False, fmt="csr", fill=1.0, out="sparse_vector", seed=3)
@example(shape=(3, 3), r=-1, cut=(4, 4), column_major=True, fmt="csr", fill=np.inf, out="dense", seed=4)   # empty
def test_a_slice_of_a_collapse(shape, r, cut, column_major, fmt, fill, out, seed):
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(shape) < 0.5, rng.choice([1.0, -2.0, np.nan, np.inf], shape), fill)
    n = x.size
    a, b = bounds(n, r, *cut)
    order = "(j, i)" if column_major else "(i, j)"
    prog = f"c[p] = slice(collapse(X[i, j], {order} -> k), k -> p, ({a}, {b}, {r}))"
    X = ss.Tensor.from_numpy(x, fmt, fill=fill)
    want = x.ravel(order="F" if column_major else "C")[cut[0]:cut[1]:r]
    oracle, oracle_fill = evaluate(prog, X=X)
    np.testing.assert_array_equal(oracle, want)
    kernel = ss.lower(prog, "looplets", X=X, c=ss.parse_format(out, ndim=1, fill=oracle_fill.item()))
    got = kernel(X=X)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(X=X).to_numpy(), want)


@pytest.mark.parametrize("program, want", [
    # (a sum of two collapses sliced, each read by the gather; a strided read of z at the slice's index)
    ("c[p] = slice(collapse(A[i, j], (i, j) -> k) + collapse(B[i, j], (i, j) -> k), k -> p, (10, -1, -3))",
     lambda a, b, z: (a + b).ravel()[10::-3]),
    ("s[] = sum[p](slice(collapse(A[i, j], (i, j) -> k) * z[k], k -> p, (1, 12, 2)))",
     lambda a, b, z: (a.ravel() * z)[1::2].sum()),
])
def test_a_slice_of_collapses_inside_an_expression(program, want):
    a = np.where(np.arange(12).reshape(3, 4) % 3 == 0, 0, np.arange(12.0).reshape(3, 4))
    b, z = a.T.reshape(3, 4) * 2, np.arange(12.0) % 5
    tensors = {"A": ss.Tensor.from_numpy(a, "csr"), "B": ss.Tensor.from_numpy(b, "coo"),
               "z": ss.Tensor.from_numpy(z, "sparse")}
    tensors = {n: t for n, t in tensors.items() if re.search(rf"\b{n}\[", program)}
    kernel = ss.lower(program, "looplets", **tensors)
    np.testing.assert_array_equal(kernel(**tensors).to_numpy(), want(a, b, z))
    np.testing.assert_array_equal(evaluate(program, **tensors)[0], want(a, b, z))
    np.testing.assert_array_equal(kernel.interpret(**tensors).to_numpy(), want(a, b, z))


@pytest.mark.parametrize("key", [np.s_[1:11:3], np.s_[::-2]])
def test_the_array_front_end_slices_a_ravel_in_one_looplets_kernel(key):
    x = np.where(np.arange(12).reshape(3, 4) % 3 == 0, 0, np.arange(12.0).reshape(3, 4))
    X = xp.asarray(ss.Tensor.from_numpy(x, "csr"))
    kernel = ss.lower(X.reshape(-1)[key], strategy="looplets")
    assert kernel.trace.find("materialize") == [] and "slice(collapse(" in str(kernel.program), kernel.trace
    np.testing.assert_array_equal(kernel().to_numpy(), x.ravel()[key])


@pytest.mark.parametrize("fmt, cut, shape", [("csc", (2, 18, 1), (4, 4)), ("csr", (22, 4, -3), (3, 2))])
def test_a_split_of_a_slice_of_a_collapse(fmt, cut, shape):
    # the split's q + p·|q| sliced to k = start + step·(q + p·|q|), the collapse gathered at k's
    # quotient and remainder (refused before: 'the sliced index m is ... computed by another shape
    # operator'); the lattice walks the collapse in storage order, so refuses a CSC's, naming looplets
    c = np.where(np.arange(24).reshape(6, 4) % 3 == 0, 0.0, np.arange(24.0).reshape(6, 4))
    c[1, 2] = np.nan
    P, Q = shape
    prog = (f"C[p, q] = split(slice(collapse(A[i, j], (i, j) -> k), k -> m, {cut}), m -> (p:{P}, q:{Q}))")
    A, C = ss.Tensor.from_numpy(c, fmt), ss.parse_format("dense", ndim=2)
    want = c.reshape(-1)[slice(*cut)].reshape(shape)
    kernel = ss.lower(prog, "looplets", A=A, C=C)
    np.testing.assert_array_equal(kernel(A=A).to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(A=A).to_numpy(), want)
    np.testing.assert_array_equal(evaluate(prog, A=A)[0], want)
    assert kernel.trace.find("gather"), kernel.trace
    if fmt == "csc":
        # (the lattice reads it as a CSR, converted before each call: it refused it before)
        k = ss.lower(prog, "lattice", A=A, C=C)
        (note,) = [s.note for s in k.trace.find("convert")]
        assert re.search(r"A\[i, j\]: the loops reach its level 1 \(i\) before level 0 \(j\)", note), note
        np.testing.assert_array_equal(k(A=A).to_numpy(), want)
