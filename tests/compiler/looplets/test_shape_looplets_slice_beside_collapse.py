"""A strided slice beside a collapse making the same index (``x[7::-2] + c.reshape(4)``, index
notation's ``slice(B[j], j -> i, (7, -1, -2)) + collapse(C[k, l], (k, l) -> i)``): the collapse walks
``i`` as two loops, so the slice's one-step loop after ``i`` is gone. The looplets strategy refused it
('computed by another shape operator'; it raised ``KeyError: 'i'`` when the slice came first) and the
array front end materialized both. Now the slice is read at ``t + (s + r·(l + k·|l|))`` under a one-step
loop ``t`` after the collapse's inner loop ``l``, as a split's index: its cursor carried from ``l`` to
``l`` (down ``B`` for a negative step); a window (step 1) is an offset of ``l``. In either operand order,
against numpy, the dense oracle and the IR interpreter, through the notation and the array front end.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.looplets.shape_checks import checked_kernel, one_kernel

FILLS = (0.0, 1.0, np.nan, -np.inf)


def vector(rng, n, fill):
    return np.where(rng.random(n) < 0.5, rng.choice([1.0, -3.0, 0.5, np.nan, np.inf], n), fill)


@pytest.mark.parametrize("first", ["slice", "collapse"])
@pytest.mark.parametrize("step", [(7, -1, -2), (0, 8, 2), (0, 4, 1), (6, 2, -1), (0, 10, 3)])
@pytest.mark.parametrize("fmt", ["sparse_vector", "dense"])
def test_looplets_lower_a_slice_read_where_a_collapse_makes_its_index(first, step, fmt):
    rng = np.random.default_rng(sum(step) + len(first))
    b, c = vector(rng, 10, 0.0), vector(rng, 4, 0.0).reshape(2, 2)
    B = ss.Tensor.from_numpy(b, fmt, name="B")
    C = ss.Tensor.from_numpy(c, "csr", name="C")
    sliced, collapsed = f"slice(B[j], j -> i, {step})", "collapse(C[k, l], (k, l) -> i)"
    terms = (sliced, collapsed) if first == "slice" else (collapsed, sliced)
    s, e, r = step
    with np.errstate(all="ignore"):
        want = b[s:e if e >= 0 else None:r] + c.reshape(4)
    kernel, _ = checked_kernel(f"out[i] = {terms[0]} + {terms[1]}", want, "dense", B=B, C=C)
    assert not kernel.trace.find("gather"), kernel.trace
    # (a sparse B walked once, its cursor carried across the collapse's inner loop: down B for r < 0)
    carried = [st.note for st in kernel.trace.find("carry") if "B" in st.note]
    assert bool(carried) == (fmt == "sparse_vector"), kernel.trace
    assert all(("(down)" in n) == (r < 0) for n in carried), carried


@pytest.mark.parametrize("key", [np.s_[7::-2], np.s_[:8:2], np.s_[1:5], np.s_[9:5:-1], np.s_[::3]])
@pytest.mark.parametrize("fmts", [("sparse_vector", "csr"), ("dense", "coo"), ("sparse_vector", "dense")])
def test_the_array_front_end_adds_them_in_one_looplets_kernel(key, fmts):
    x = np.array([0, 1.0, np.nan, 0, -np.inf, 2.0, 0, 3.0, np.inf, 0])
    c = np.array([[0, -1.0], [2.0, 0]])
    X = xp.asarray(ss.Tensor.from_numpy(x, fmts[0]))
    C = xp.asarray(ss.Tensor.from_numpy(c, fmts[1]))
    with np.errstate(all="ignore"):
        cases = ((X[key] + C.reshape(4), x[key] + c.reshape(4)), (C.reshape(4) * X[key], c.reshape(4) * x[key]))
        for expr, want in cases:
            kernel = one_kernel(expr)
            for got in (kernel(), kernel.interpret()):
                np.testing.assert_array_equal(got.to_numpy(), want)


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
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
    if strategy == "looplets":
        one_kernel(got)
    with np.errstate(all="ignore"):
        res = got.compute(strategy=strategy, format=out, checked=True)
    np.testing.assert_allclose(np.asarray(res), want, equal_nan=True)
