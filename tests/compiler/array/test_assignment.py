"""compiler.array.assignment: ``x[mask]`` and ``x[key] = value`` as numpy's, on dense and sparse arrays, by
example and by property (random shapes, keys of ints, slices with negative steps and ``...``, boolean masks,
scalar and array values broadcast, dtypes cast). Before, ``__setitem__`` did not exist and a boolean mask was
refused ("an array of dtype bool is no index"): the Array API test suite's first failures."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import array as xp
from compiler.errors import DTypeError, ShapeError

FORMATS = [None, "csr", "coo"]


def as_array(a, fmt):
    return xp.asarray(a.copy(), format=fmt) if fmt and a.ndim == 2 else xp.asarray(a.copy())


def dense(x):
    return np.asarray(x.todense())


@st.composite
def basic_keys(draw, shape):
    """A basic index of ``shape``: per axis an int (negative too) or a slice (any step but 0), maybe an ``...``."""
    items = []
    for n in shape:
        if n and draw(st.booleans()):
            items.append(draw(st.integers(-n, n - 1)))
        else:
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            items.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3, -1, -2]))))
    if items and draw(st.booleans()):
        cut = draw(st.integers(0, len(items)))
        items = items[:cut] + [Ellipsis] + items[cut + draw(st.integers(0, len(items) - cut)):]
    return tuple(items)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(["float64", "int32", "bool", "complex64"]), fmt=st.sampled_from(FORMATS),
       scalar=st.booleans())
def test_an_assignment_by_a_basic_index_is_numpys(data, shape, dtype, fmt, scalar):
    rng = np.random.default_rng(data.draw(st.integers(0, 100)))
    a = (rng.random(shape) * 10 - 3).astype(dtype) * (rng.random(shape) < 0.6)
    key = data.draw(basic_keys(shape))
    region = a[key].shape
    if scalar:
        value = data.draw(st.sampled_from([7, -2.5, True, 0]))
        value = np.asarray(value).astype(dtype)[()] if dtype in ("bool", "int32") else value
    else:   # (an array of the region's shape, or of its last axes: broadcast)
        cut = data.draw(st.integers(0, len(region)))
        value = (rng.random(region[cut:]) * 5).astype(dtype)
    want = a.copy()
    with np.errstate(all="ignore"):
        want[key] = value
    x = as_array(a, fmt)
    x[key] = value if scalar else xp.asarray(value)
    assert x.dtype == a.dtype and x.shape == a.shape
    np.testing.assert_array_equal(dense(x), want)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple),
       fmt=st.sampled_from(FORMATS), lead=st.integers(0, 3))
def test_a_boolean_mask_reads_and_writes_as_numpys(data, shape, fmt, lead):
    rng = np.random.default_rng(data.draw(st.integers(0, 100)))
    a = rng.random(shape) * (rng.random(shape) < 0.5)
    mask = rng.random(shape[:min(lead, len(shape))]) < 0.5
    x = as_array(a, fmt)
    np.testing.assert_array_equal(dense(x[mask]), a[mask])
    np.testing.assert_array_equal(dense(x[xp.asarray(mask)]), a[mask])   # (an Array mask: computed first)
    want = a.copy()
    if data.draw(st.booleans()):
        want[mask] = -1.0
        x[mask] = -1.0
    else:
        value = rng.random(a[mask].shape)
        want[mask] = value
        x[mask] = xp.asarray(value)
    np.testing.assert_array_equal(dense(x), want)


def test_a_zero_dimensional_mask_adds_an_axis():
    a = np.arange(6.0).reshape(2, 3)
    x = xp.asarray(a)
    assert dense(x[True]).shape == (1, 2, 3) and dense(x[False]).shape == (0, 2, 3)
    np.testing.assert_array_equal(dense(x[np.True_]), a[np.True_])
    x[True] = 5.0
    np.testing.assert_array_equal(dense(x), np.full((2, 3), 5.0))


def test_an_assignment_leaves_arrays_made_before_as_they_were():
    a = np.arange(4.0)
    x = xp.asarray(a)
    y = x * 2
    x[0] = 100.0
    np.testing.assert_array_equal(dense(y), [0, 2, 4, 6])
    np.testing.assert_array_equal(dense(x), [100, 1, 2, 3])
    np.testing.assert_array_equal(a, [0, 1, 2, 3])   # (the numpy array it was made from is not written)
    x[1:3] += 10   # (an augmented assignment: read, add, write)
    np.testing.assert_array_equal(dense(x), [100, 11, 12, 3])


def test_a_sparse_array_stays_sparse_where_a_mask_picks_its_entries():
    import scipy.sparse as sp
    m = sp.random(50, 40, density=0.05, format="csr", random_state=3)
    x = xp.asarray(m)
    rows = np.zeros(50, dtype=bool)
    rows[[3, 7, 30]] = True
    picked = x[rows].compute()
    assert picked.format.shorthand == "csr" and picked.nnz == m[rows].nnz
    np.testing.assert_array_equal(picked.to_numpy(), m.toarray()[rows])


@pytest.mark.parametrize("do, error, message", [
    (lambda x: x.__setitem__(slice(1, 3), np.ones(2)), ShapeError, r"value of shape \(2,\) into the region of shape \(2, 3\)"),
    (lambda x: x.__getitem__(np.ones((3, 3), dtype=bool)), IndexError, r"boolean index of shape \(3, 3\)"),
    (lambda x: x.__setitem__(np.ones(5, dtype=bool), 1.0), IndexError, r"boolean index of shape \(5,\)"),
    (lambda x: x.__setitem__((0, None), 1.0), IndexError, "None adds an axis to read, not one to assign to"),
    (lambda x: x.__setitem__((4, 0), 1.0), IndexError, "index 4 is out of bounds for axis 0 with extent 4"),
    (lambda x: x.__setitem__(0, 1j), DTypeError, "cannot assign 1j into an array of dtype float64"),
])
def test_a_bad_index_or_value_is_refused_naming_it(do, error, message):
    x = xp.asarray(np.zeros((4, 3)))
    with pytest.raises(error, match=message):
        do(x)
    np.testing.assert_array_equal(dense(x), np.zeros((4, 3)))   # (nothing assigned)


def test_a_scalar_is_assigned_as_numpy_assigns_it():
    x = xp.asarray(np.zeros(3, dtype=np.int8))
    with pytest.raises(DTypeError, match="cannot assign 300 into an array of dtype int8"):
        x[0] = 300
    with pytest.raises(DTypeError, match="cannot assign nan"):
        x[1] = float("nan")
    x[2] = 2.9   # (truncated, as numpy's)
    assert dense(x).tolist() == [0, 0, 2]
