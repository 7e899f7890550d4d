"""A slice of a split under the looplets strategy (issue 30 item 4): ``x.reshape(n, m)[a:b:r, c:d:s]``
reads ``x[j + i·|j|]`` with each of ``i`` and ``j`` an offset (a window) or a strided read of its
loop, so the slice is an offset of the split's read, negative steps too; it was refused ('here it is
computed by another shape operator'), and the array front end materialized the reshape. Against
numpy, the dense oracle and the IR interpreter, through index notation and the array front end."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import StrategyError
from compiler.reference import evaluate
from tests.compiler.looplets.slice_cases import bounds

FILLS = (0.0, 1.0, np.nan, np.inf, -np.inf)


def program(rows, cols, J):
    (a, b, r), (c, d, s) = rows, cols
    return (f"C[p, q] = slice(slice(split(x[k], k -> (i, j:{J})), i -> p, ({a}, {b}, {r})), "
            f"j -> q, ({c}, {d}, {s}))")


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(0, 4), J=st.integers(1, 4), r=st.sampled_from([1, 2, -1, -3]), s=st.sampled_from([1, 1, 2, -1]),
       cut=st.tuples(st.integers(-5, 5), st.integers(-5, 5), st.integers(-5, 5), st.integers(-5, 5)),
       fmt=st.sampled_from(["dense", "sparse"]), fill=st.sampled_from(FILLS),
       out=st.sampled_from(["dense", "csr", "coo"]), seed=st.integers(0, 2 ** 16))
@example(n=3, J=4, r=1, s=1, cut=(1, 3, 0, 4), fmt="sparse", fill=0.0, out="csr", seed=0)     # refused before
@example(n=4, J=3, r=-3, s=-1, cut=(3, -5, 2, -5), fmt="dense", fill=np.nan, out="coo", seed=1)
@example(n=0, J=2, r=2, s=1, cut=(0, 0, 0, 2), fmt="sparse", fill=-np.inf, out="dense", seed=2)
def test_a_slice_of_a_split(n, J, r, s, cut, fmt, fill, out, seed):
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n * J) < 0.5, rng.choice([1.0, -2.0, np.nan, np.inf], n * J), fill)
    a, b = bounds(n, r, *cut[:2])
    c, d = bounds(J, s, *cut[2:])
    prog = program((a, b, r), (c, d, s), J)
    X = ss.Tensor.from_numpy(x, fmt, fill=fill)
    want = x.reshape(n, J)[cut[0]:cut[1]:r, cut[2]:cut[3]:s]
    oracle, oracle_fill = evaluate(prog, x=X)
    np.testing.assert_array_equal(oracle, want)
    kernel = ss.lower(prog, "looplets", x=X, C=ss.parse_format(out, ndim=2, fill=oracle_fill.item()))
    got = kernel(x=X)
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(x=X).to_numpy(), want)


@pytest.mark.parametrize("key", [np.s_[1:3], np.s_[::-2], np.s_[::2, 1:], np.s_[2:0:-1, ::-3]])
def test_the_array_front_end_slices_a_split_in_one_looplets_kernel(key):
    x = np.where(np.arange(12) % 3 == 0, 0, np.arange(12.0))
    X = xp.asarray(ss.Tensor.from_numpy(x, "sparse"))
    expr = X.reshape(3, 4)[key]
    kernel = ss.lower(expr, strategy="looplets")
    assert kernel.trace.find("materialize") == [] and "slice(split(" in str(kernel.program)
    np.testing.assert_array_equal(kernel().to_numpy(), x.reshape(3, 4)[key])


def test_a_slice_of_a_split_walked_column_major_is_still_refused():
    # (the minor index's loop outside the major one's: no offset of the split's read)
    x = ss.Tensor.from_numpy(np.arange(12.0), "sparse")
    prog = "C[j, p] = slice(split(x[k], k -> (i, j:4)), i -> p, (0, 3, 2))"
    with pytest.raises(StrategyError, match=re.escape("so j's must be inside")):
        ss.lower(prog, "looplets", x=x)
