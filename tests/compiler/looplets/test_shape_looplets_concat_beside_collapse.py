"""An index a concat makes in one part of a stack and a collapse (a reshape) in another (issue 30):
``xp.stack([xp.concat([x, y]), C.reshape(n)])`` is ``concat((broadcast(concat((x[m], y[n]) -> j)),
broadcast(collapse(C, ... -> j))) -> i)``. The looplets strategy split ``j``'s loop into one per
concat part and then replaced it by the collapse's two loops, and raised ``KeyError: 'j'`` (with
an empty SparseHash part as with any). The collapse's loops are ``j``'s, and the concat is read where
that index falls in each of its parts. Against numpy, across the strategies."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, SparseHash, SparseList

nan, inf = np.nan, np.inf
VECTORS = {"hash": SparseHash, "list": SparseList, "dense": Dense}


def vector(v, kind, fill):
    return xp.asarray(Tensor.from_numpy(v, Format(VECTORS[kind](Element(fill)))))


def cube(D, fill):
    return xp.asarray(Tensor.from_numpy(D, Format(Dense(SparseList(SparseList(Element(fill)))))))


def check(e, want):
    for strategy in (None, "lattice", "looplets"):
        got = np.asarray(e.compute(strategy=strategy, format="dense", checked=True))
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("first", [True, False])
def test_the_probe_case_an_empty_hash_part(first):
    """The probe's case (r3 'stackempty'): the concat's first part a SparseHash of length 0."""
    x, y, D = np.zeros(0), np.zeros(1), np.full((1, 1, 1), 2.0)
    parts = [xp.concat([vector(x, "hash", 0.0), vector(y, "list", 0.0)]), cube(D, 0.0).reshape(1)]
    want = [np.concatenate([x, y]), D.reshape(1)]
    if not first:
        parts, want = parts[::-1], want[::-1]
    check(xp.stack(parts), np.stack(want))


@settings(max_examples=5)
@given(kinds=st.tuples(*[st.sampled_from(sorted(VECTORS))] * 2), split=st.integers(0, 4),
       fill=st.sampled_from([0.0, 1.0, nan]), first=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(kinds=("hash", "list"), split=0, fill=0.0, first=True, seed=0)
@example(kinds=("dense", "hash"), split=4, fill=nan, first=False, seed=1)
def test_a_stack_of_a_concat_and_a_reshape(kinds, split, fill, first, seed):
    """Parts of any length (0 too), fills 0, 1 and NaN, NaN and ±inf stored, either operand first."""
    rng = np.random.default_rng(seed)

    def draw(shape):
        return np.where(rng.random(shape) < 0.5, rng.choice([2.0, -1.0, nan, inf, -inf], shape), fill)
    x, y, D = draw(split), draw(4 - split), draw((2, 1, 2))
    parts = [xp.concat([vector(x, kinds[0], fill), vector(y, kinds[1], fill)]), cube(D, fill).reshape(4)]
    want = [np.concatenate([x, y]), D.reshape(4)]
    if not first:
        parts, want = parts[::-1], want[::-1]
    check(xp.stack(parts), np.stack(want))
