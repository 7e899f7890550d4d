"""A collapse of a strided slice under the looplets strategy (issue 30 item 4): ``x[a:b:r].ravel()``
into a sparse vector. The strided window reads ``x`` at ``t + (a + r·p)`` in a loop ``t`` of one step
between the slice's loop ``p`` and the columns' ``j``; the output's append check counted that loop
as one the writes must be ordered by (it orders none: the coordinate ``j + p·|j|`` does not read
``t``), so the statement was refused and the array front end materialized the slice. Against numpy,
the dense oracle and the IR interpreter, through index notation and the array front end."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from tests.compiler.looplets.shape_checks import checked_kernel
from tests.compiler.looplets.slice_cases import bounds

FILLS = (0.0, 1.0, np.nan, np.inf, -np.inf)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 5), st.integers(0, 4)), r=st.sampled_from([2, 3, -1, -2]),
       cut=st.tuples(st.integers(-7, 7), st.integers(-7, 7)), fmt=st.sampled_from(["dense", "csr", "coo"]),
       fill=st.sampled_from(FILLS), out=st.sampled_from(["dense", "sparse_vector"]), seed=st.integers(0, 2 ** 16))
@example(shape=(6, 8), r=2, cut=(0, 6), fmt="csr", fill=0.0, out="sparse_vector", seed=0)    # refused before
@example(shape=(5, 3), r=-2, cut=(4, -7), fmt="coo", fill=np.nan, out="sparse_vector", seed=1)
@example(shape=(0, 3), r=3, cut=(0, 3), fmt="csr", fill=1.0, out="sparse_vector", seed=2)     # empty
@example(shape=(4, 4), r=2, cut=(1, 4), fmt="csr", fill=-np.inf, out="dense", seed=3)
def test_a_collapse_of_a_strided_row_slice(shape, r, cut, fmt, fill, out, seed):
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(shape) < 0.5, rng.choice([1.0, -2.0, np.nan, np.inf], shape), fill)
    a, b = bounds(shape[0], r, *cut)
    prog = f"c[k] = collapse(slice(X[l, j], l -> p, ({a}, {b}, {r})), (p, j) -> k)"
    X = ss.Tensor.from_numpy(x, fmt, fill=fill)
    checked_kernel(prog, x[cut[0]:cut[1]:r].ravel(), out, X=X)


@pytest.mark.parametrize("strategy", ["looplets", "lattice"])
@pytest.mark.parametrize("kind", ["csr", "coo"])
def test_the_array_language_fuses_it_in_one_kernel(strategy, kind):
    x = np.where(np.arange(56).reshape(7, 8) % 3 == 0, np.arange(56.0).reshape(7, 8), 0.0)
    a = ss.asarray(x, format=kind)
    for expr, want in [((a[::2] * 2).reshape(32), (x[::2] * 2).reshape(32)), (a[::-3].reshape(24), x[::-3].ravel()),
                       (a[1::3, ::2].reshape(8), x[1::3, ::2].ravel())]:
        kernel = ss.lower(expr, strategy=strategy)
        assert not kernel.trace.find("retry") and not kernel.trace.find("materialize"), kernel.trace.stages()
        np.testing.assert_array_equal(expr.compute(strategy=strategy).to_numpy(), want)
