"""A strided slice beside a collapse making the same index (``x[7::-2] + c.reshape(4)``, index
notation's ``slice(B[j], j -> i, (7, -1, -2)) + collapse(C[k, l], (k, l) -> i)``): the collapse walks
``i`` as two loops, so the slice's one-step loop after ``i`` is gone. The looplets strategy refuses
it, naming the lattice, in either operand order (it raised ``KeyError: 'i'`` when the slice came
first); the array front end computes it (the default strategy and the looplets' retry), against numpy.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import StrategyError

FILLS = (0.0, 1.0, np.nan, -np.inf)


def vector(rng, n, fill):
    return np.where(rng.random(n) < 0.5, rng.choice([1.0, -3.0, 0.5, np.nan, np.inf], n), fill)


@pytest.mark.parametrize("first", ["slice", "collapse"])
@pytest.mark.parametrize("step", [(7, -1, -2), (0, 8, 2), (0, 4, 1), (6, 2, -1)])
def test_looplets_refuses_a_slice_read_where_a_collapse_makes_its_index(first, step):
    B = ss.Tensor.from_numpy(np.arange(8.0), "sparse_vector")
    C = ss.Tensor.from_numpy(np.arange(4.0).reshape(2, 2), "csr")
    sliced, collapsed = f"slice(B[j], j -> i, {step})", "collapse(C[k, l], (k, l) -> i)"
    terms = (sliced, collapsed) if first == "slice" else (collapsed, sliced)
    with pytest.raises(StrategyError, match="computed by another shape operator.*strategy='lattice'"):
        ss.lower(f"out[i] = {terms[0]} + {terms[1]}", strategy="looplets", B=B, C=C, out="dense")


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(step=st.sampled_from([-2, 2, -1, 3]), fills=st.tuples(*[st.sampled_from(FILLS)] * 3),
       fmt=st.sampled_from(["sparse_vector", "dense"]), strategy=st.sampled_from([None, "looplets", "lattice"]),
       out=st.sampled_from([None, "dense"]), seed=st.integers(0, 2 ** 16))
@example(step=-2, fills=(1.0, 0.0, 1.0), fmt="sparse_vector", strategy="looplets", out="dense", seed=235)  # KeyError
@example(step=2, fills=(0.0, np.nan, 0.0), fmt="dense", strategy="looplets", out=None, seed=1)
def test_a_strided_slice_beside_a_reshape_against_numpy(step, fills, fmt, strategy, out, seed):
    rng = np.random.default_rng(seed)
    n = 4
    a, b = vector(rng, n, fills[0]), vector(rng, 3 * n, fills[1])
    c = vector(rng, n, fills[2]).reshape(n, 1, 1)
    start = 3 * n - 1 if step < 0 else 0
    want_sl = slice(start, start + step * n if start + step * n >= 0 else None, step)
    with np.errstate(all="ignore"):
        want = np.where(a > 0, b[want_sl], 0.0) + c.reshape(n)
    x = xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fills[0]))
    y = xp.asarray(ss.Tensor.from_numpy(b, "sparse_vector", fill=fills[1]))
    z = xp.asarray(ss.Tensor.from_numpy(c, "dense", fill=fills[2]))
    got = xp.where(x > 0, y[want_sl], 0.0) + z.reshape(n)
    with np.errstate(all="ignore"):
        res = got.compute(strategy=strategy, format=out, checked=True)
    np.testing.assert_allclose(np.asarray(res), want, equal_nan=True)
