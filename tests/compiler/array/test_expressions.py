"""Random chains of array operators against numpy: whatever mix of fused and materialized nodes a chain
gets, it computes numpy's answer, under both strategies (issue 30)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import array as xp
from array_cases import check, make

_values = st.sampled_from([0.0, 0.0, 1.0, 2.0, -3.0, np.nan, np.inf])


def _matrix(draw, shape):
    fill = draw(st.sampled_from([0.0, 1.0, np.nan]))
    n = int(np.prod(shape))
    a = np.array(draw(st.lists(st.sampled_from([fill, fill, 1.0, 2.0, -3.0, np.inf]), min_size=n, max_size=n)),
                 dtype=float).reshape(shape)
    kind = draw(st.sampled_from(["numpy", "csr", "csc", "coo", "pydata_coo"] if len(shape) == 2 else
                                ["numpy", "dense", "coo", "pydata_coo"]))
    return xp.asarray(make(a, kind, fill)), a


def _step(draw, x, a):
    """One operator applied to the pair (Array, numpy array)."""
    choices = ["scale", "add", "maximum", "where", "transpose", "slice", "matvec", "reduce", "expand", "concat"]
    if a.ndim == 0:
        choices = ["scale", "add", "maximum"]
    what = draw(st.sampled_from(choices))
    if what == "scale":
        c = draw(st.sampled_from([2.0, -1.0, 0.5]))
        return x * c, a * c
    if what in ("add", "maximum", "where"):
        shape = a.shape[draw(st.integers(0, a.ndim)):]      # (broadcast: a suffix of the shape)
        y, b = _matrix(draw, shape) if shape else (xp.asarray(np.float64(2.0)), np.float64(2.0))
        if what == "add":
            return x + y, a + b
        if what == "maximum":
            return xp.maximum(x, y), np.maximum(a, b)
        return xp.where(x > 1, x, y), np.where(a > 1, a, b)
    if what == "transpose":
        if a.ndim > 2:   # (the Array API's .T is for matrices; numpy's reverses every axis)
            return xp.permute_dims(x, tuple(reversed(range(a.ndim)))), a.T
        return x.T, a.T
    if what == "slice":
        step = draw(st.sampled_from([1, 2, -1, -2]))
        start = draw(st.integers(0, max(a.shape[0] - 1, 0)))
        return x[start::step], a[start::step]
    if what == "matvec":
        v = np.arange(a.shape[-1], dtype=float)
        return x @ v, a @ v
    if what == "reduce":
        axis = draw(st.integers(-a.ndim, a.ndim - 1))
        name = draw(st.sampled_from(["sum", "max"]))
        if name == "max" and a.shape[axis] == 0:
            name = "sum"
        keep = draw(st.booleans())
        return getattr(x, name)(axis=axis, keepdims=keep), getattr(a, name)(axis=axis, keepdims=keep)
    if what == "expand":
        return xp.expand_dims(x, 0), np.expand_dims(a, 0)
    return xp.concat([x, x * 2], axis=0), np.concatenate([a, a * 2], axis=0)


@settings(max_examples=12)
@given(st.data())
def test_property_chains_of_operators_match_numpy(data):
    shape = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    x, a = _matrix(data.draw, shape)
    with np.errstate(all="ignore"):
        for _ in range(data.draw(st.integers(1, 4))):
            if a.ndim > 3:
                break
            x, a = _step(data.draw, x, a)
    strategy = data.draw(st.sampled_from(["lattice", "looplets"]))
    check(x, a, strategy)
