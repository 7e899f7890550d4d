"""A vstack raveled and split into rows under the lattice strategy (issue 30): ``split(collapse(concat((A[i, j],
B[m, j]), (i, m) -> k), (k, j) -> l), l -> (r, q))``. Its rows loop over ``π0((i_A ⊔ m_B) × (j_A ∪ j_B), J)``,
simplified to ``π0((i_A × j_A) ⊔ (m_B × j_B), J)`` (the product distributed over the concatenation), and each
row's ``π1`` follows its ``π0`` there. It did not: the π1 of the derived form was taken as bound nowhere and its
loop dropped, so rows that do not straddle the operands came out all fill (by default too), and rows that straddle
them were refused. An hstack raveled and split, whose rows interleave two products, was refused too: each product's π1
now follows the group of the union's π0 once the other ran out in it. Against numpy, the dense oracle and the IR
interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.reference import evaluate

nan = np.nan
VSTACK_ROWS = "C[r, q] = split(collapse(concat((A[i, j], B[m, j]), (i, m) -> k), (k, j) -> l), l -> (r:{R}, q:{J}))"
HSTACK_ROWS = "C[r, q] = split(collapse(concat((A[i, j], B[i, n]), (j, n) -> k), (i, k) -> l), l -> (r:{R}, q:{J}))"


def data(shape, fill, seed, density=0.5):
    r = np.random.default_rng(seed)
    return np.where(r.random(shape) < density, r.choice([1.0, -2.0, 3.5, np.inf], shape), fill)


def check(prog, want, out, strategy="lattice", **tensors):
    oracle, oracle_fill = evaluate(prog, **tensors)
    np.testing.assert_array_equal(oracle, want)
    kernel = ss.lower(prog, strategy, **tensors, C=ss.parse_format(out, ndim=2, fill=oracle_fill.item()))
    got = kernel(**tensors)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(**tensors).to_numpy(), want)
    return kernel


@pytest.mark.parametrize("R, J", [(4, 10), (5, 8)])      # rows of 10 end at A's end; rows of 8 straddle it
def test_a_vstack_raveled_and_split_reads_both_operands(R, J):
    a, b = data((4, 5), 0.0, 1), data((4, 5), 0.0, 2)
    T = dict(A=ss.Tensor.from_numpy(a, "csr"), B=ss.Tensor.from_numpy(b, "csr"))
    want = np.concatenate([a, b]).reshape(R, J)
    kernel = check(VSTACK_ROWS.format(R=R, J=J), want, "csr", **T)
    cfir = kernel.trace.find("cfir")[0].after_text
    # (one loop over A's rows' groups, one over B's, each writing its own operand's entries)
    assert "C(r, q) = A(i_A, j_A)" in cfir and "C(r, q) = B(m_B, j_B)" in cfir, cfir
    default = ss.lower(VSTACK_ROWS.format(R=R, J=J), **T, C=ss.parse_format("csr", ndim=2))
    assert default.strategy == "lattice"
    np.testing.assert_array_equal(default(**T).to_numpy(), want)


@settings(max_examples=6, deadline=None)
@given(rows=st.tuples(st.integers(0, 3), st.integers(0, 3)), cols=st.integers(1, 4),
       fmts=st.tuples(*[st.sampled_from(["csr", "coo", "dense"])] * 2), fill=st.sampled_from([0.0, nan]),
       out=st.sampled_from(["csr", "coo", "dense"]), straddle=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(rows=(3, 2), cols=3, fmts=("csr", "coo"), fill=nan, out="csr", straddle=True, seed=0)      # straddles 9
@example(rows=(0, 2), cols=2, fmts=("coo", "csr"), fill=0.0, out="coo", straddle=False, seed=1)    # an empty part
@example(rows=(2, 2), cols=3, fmts=("dense", "csr"), fill=0.0, out="dense", straddle=False, seed=2)
def test_vstacks_raveled_and_split_by_property(rows, cols, fmts, fill, out, straddle, seed):
    a, b = data((rows[0], cols), fill, seed), data((rows[1], cols), fill, seed + 1)
    size, first = a.size + b.size, a.size
    # rows of the smallest width dividing the size that straddles A's end (or does not), if any
    J = next((w for w in range(2, size + 1) if size % w == 0 and bool(first % w) == straddle), max(size, 1))
    T = dict(A=ss.Tensor.from_numpy(a, fmts[0], fill=fill), B=ss.Tensor.from_numpy(b, fmts[1], fill=fill))
    check(VSTACK_ROWS.format(R=size // J, J=J), np.concatenate([a, b]).reshape(size // J, J), out, **T)


@pytest.mark.parametrize("shapes, J, fmts", [
    (((4, 5), (4, 5)), 8, ("csr", "csr")),      # rows of 8 straddle each row's A and B parts
    (((4, 5), (4, 5)), 10, ("coo", "dense")),   # a row of the result is a row of each
    (((3, 0), (3, 2)), 2, ("csr", "coo")),      # A has no columns: its part of each row is 0 + B's
])
def test_an_hstack_raveled_and_split_is_one_lattice_kernel(shapes, J, fmts):
    # (refused before: a split of a union of products, whose groups interleave the two products; each
    # product's π1 now follows the union's group once the other ran out in it. A without columns:
    # its rows' π1 once A ran out matched no group, "0 + k_B" against "k_B", and B's rows were dropped)
    a, b = data(shapes[0], nan, 3), data(shapes[1], nan, 4)
    T = dict(A=ss.Tensor.from_numpy(a, fmts[0], fill=nan), B=ss.Tensor.from_numpy(b, fmts[1], fill=nan))
    R = (a.size + b.size) // J
    kernel = check(HSTACK_ROWS.format(R=R, J=J), np.concatenate([a, b], axis=1).reshape(R, J), "csr", **T)
    assert "@" in kernel.trace.find("cfir")[0].after_text
