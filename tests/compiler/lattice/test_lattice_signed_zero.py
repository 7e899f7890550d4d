"""A product's fill folded to 0.0 under a division (``1 / (b[i] * c[i])``): the lattice's check of
its points holds the annihilator rule up to the sign of zero (``0 * -1`` is ``-0.0``, ``1 / -0.0``
is ``-inf``), as the README says, so it no longer calls the lattice unsound (a LatticeError,
"a bug in sparsescope", instead of a kernel). Each kernel checked against numpy, a zero product
of either sign."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.format import Format
from compiler.lattice.lattice import check_lattice
from compiler.levels import Element, SparseByteMap, SparseHash, SparseList

from test_lattice_points import lattice

STRATEGIES = ["lattice", "looplets"]

#: programs over a, b, c, with numpy's value given the product b * c
PROGRAMS = {
    "y[i] = 1 / (b[i] * c[i])": lambda a, b, c, bc: 1 / bc,
    "y[i] = a[i] / (b[i] * c[i]) + 1": lambda a, b, c, bc: a / bc + 1,
    "y[i] = a[i] / (b[i] * c[i])": lambda a, b, c, bc: a / bc,
}
FORMATS = {"sparse": Format(SparseList(Element(0.0))), "hash": Format(SparseHash(Element(0.0))),
           "bytemap": Format(SparseByteMap(Element(0.0)))}


def test_a_division_by_a_product_of_sparse_operands_is_a_sound_lattice():
    L, e = lattice("y[i] = 1 / (b[i] * c[i])", neutral=np.inf)
    assert check_lattice(L, e).sound
    L, e = lattice("y[i] = a[i] / (b[i] * c[i]) + 1", neutral=np.nan)
    assert check_lattice(L, e).sound


def check(program, strategy, fmt, a, b, c):
    tensors = {n: ss.Tensor.from_numpy(v, FORMATS[fmt]) for n, v in dict(a=a, b=b, c=c).items()
               if n + "[" in program}
    with np.errstate(all="ignore"):
        exact = PROGRAMS[program](a, b, c, b * c)
        unsigned = PROGRAMS[program](a, b, c, b * c + 0.0)   # (-0.0 + 0.0 is 0.0)
        got = ss.lower(program, strategy, **tensors)(**tensors).to_numpy()
    # a skipped product is 0.0; one the kernel computes (where c may hold NaN or inf) keeps its sign
    same = lambda x, y: (x == y) | (np.isnan(x) & np.isnan(y))
    assert got.shape == exact.shape and (same(got, exact) | same(got, unsigned)).all(), (got, exact)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_one_over_a_sparse_product_gives_inf_where_either_is_absent(strategy):
    # the lattice raised "computes wrong values ... inf, -inf" for c = -1 beside an absent b
    b, c = np.array([0.0, 2.0, -1.0, 0.0]), np.array([-1.0, -4.0, 0.0, 0.0])
    got = ss.einsum("y[i] = 1 / (b[i] * c[i])", strategy, b=ss.Tensor.from_numpy(b, "sparse"),
                    c=ss.Tensor.from_numpy(c, "sparse")).to_numpy()
    np.testing.assert_array_equal(got, [np.inf, -0.125, np.inf, np.inf])


@st.composite
def cases(draw):
    n = draw(st.integers(0, 5))
    values = st.lists(st.sampled_from([0.0, 1.0, -1.0, 2.5, -3.0, np.nan, np.inf, -np.inf]), min_size=n, max_size=n)
    return tuple(np.array(draw(values)) for _ in range(3))


@settings(max_examples=7)
@given(program=st.sampled_from(sorted(PROGRAMS)), strategy=st.sampled_from(STRATEGIES),
       fmt=st.sampled_from(sorted(FORMATS)), case=cases())
@example(program="y[i] = a[i] / (b[i] * c[i]) + 1", strategy="lattice", fmt="sparse",
         case=(np.array([2.0, 0.0]), np.array([0.0, 0.0]), np.array([-1.0, 0.0])))
def test_divisions_by_sparse_products_agree_with_numpy(program, strategy, fmt, case):
    check(program, strategy, fmt, *case)
