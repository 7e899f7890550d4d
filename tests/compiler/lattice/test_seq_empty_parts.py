"""Concatenations with parts of extent 0 (issue 30): ``concat([A, concat([B + 1, C], axis=0)], axis=1)``
with ``B`` and ``C`` of no columns raised ``IndexError`` in the lattice (and so in the default
strategy): the loop over the columns of the inner concat, in a case where neither of its parts is at
the row, had every case "never at one coordinate" (two parts of extent 0 never meet) and no body.
Such a loop runs nowhere, and does nothing. Against numpy, across the strategies."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.format import Format, coo, csr, dcsr
from compiler.levels import Dense, Element, SparseBand, SparseBlockList, SparseList

nan, inf = np.nan, np.inf
FORMATS = {
    "dense": lambda f: Format(Dense(Dense(Element(f)))),
    "csr": lambda f: csr(fill=f),
    "dcsr": lambda f: dcsr(fill=f),
    "coo": lambda f: coo(fill=f),
    "band": lambda f: Format(Dense(SparseBand(Element(f)))),
}


def T(D, fmt, fill=0.0):
    return xp.asarray(Tensor.from_numpy(D, FORMATS[fmt](fill)))


def check(e, want, strategies=(None, "lattice", "looplets")):
    for strategy in strategies:
        got = np.asarray(e.compute(strategy=strategy, format="dense", checked=True))
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_the_probe_case():
    """The probe's case (r3 'emptyconcat'): a sum over an axis of extent 0 beside a slice, then a
    concat of a (0, 0) DCSR plus 1 and a ``where`` of (4, 0) parts."""
    F3 = Format(Dense(Dense(SparseList(Element(0.0)))))
    left = xp.concat([xp.sum(xp.asarray(Tensor.from_numpy(np.zeros((2, 4, 0)), F3)), axis=0),
                      xp.asarray(Tensor.from_numpy(np.zeros((4, 1, 4)), Format(Dense(Dense(Dense(Element(0.0)))))))[:, 0]],
                     axis=1)
    cond = xp.asarray(Tensor.from_numpy(np.zeros((4, 0)), Format(Dense(SparseBand(Element(0.0))))))
    val = xp.asarray(Tensor.from_numpy(np.zeros((4, 0)), Format(Dense(SparseBlockList(Element(0.0))))))
    right = xp.concat([T(np.zeros((0, 0)), "dcsr") + 1.0, xp.where(cond > 0, val, 0.0)], axis=0)
    check(xp.concat([left, right], axis=1), np.zeros((4, 4)))


@pytest.mark.parametrize("rows", [0, 1])
@pytest.mark.parametrize("fmt", ["dcsr", "csr", "dense"])
def test_a_column_concat_beside_a_row_concat_of_no_columns(rows, fmt):
    """The smallest form: ``B + 1`` (fill 1, not the result's 0) and ``C`` share no column."""
    B, C = np.zeros((rows, 0)), np.zeros((4 - rows, 0))
    A = np.array([[1.0, nan], [inf, 0.0], [-inf, 2.0], [0.0, 0.0]])
    e = xp.concat([T(A, "csr"), xp.concat([T(B, fmt) + 1.0, T(C, "dense")], axis=0)], axis=1)
    check(e, np.concatenate([A, np.concatenate([B + 1.0, C], 0)], 1))


@settings(max_examples=6)
@given(widths=st.tuples(st.integers(0, 2), st.integers(0, 2)), split=st.integers(0, 3),
       fmts=st.tuples(*[st.sampled_from(sorted(FORMATS))] * 3), fill=st.sampled_from([0.0, 1.0, nan]),
       shift=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(widths=(2, 0), split=0, fmts=("csr", "dcsr", "dense"), fill=0.0, shift=True, seed=0)
@example(widths=(0, 0), split=1, fmts=("dense", "coo", "band"), fill=nan, shift=True, seed=1)
def test_nested_concats_with_parts_of_extent_zero(widths, split, fmts, fill, shift, seed):
    """``concat([A, concat([B (+ 1), C], axis=0)], axis=1)`` with any of the widths or the rows of
    ``B`` (and so of ``C``) 0, NaN and ±inf stored, fills 0, 1 and NaN."""
    rng = np.random.default_rng(seed)

    def draw(shape):
        return np.where(rng.random(shape) < 0.5, rng.choice([2.0, -1.0, nan, inf, -inf], shape), fill)
    A, B, C = draw((3, widths[0])), draw((split, widths[1])), draw((3 - split, widths[1]))
    Bx = T(B, fmts[1], fill) + 1.0 if shift else T(B, fmts[1], fill)
    e = xp.concat([T(A, fmts[0], fill), xp.concat([Bx, T(C, fmts[2], fill)], axis=0)], axis=1)
    check(e, np.concatenate([A, np.concatenate([B + 1.0 if shift else B, C], 0)], 1), (None, "lattice"))
