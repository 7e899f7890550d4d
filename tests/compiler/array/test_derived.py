"""The Array API's functions made of others (``compiler.array.derived``) against numpy, on dense and sparse
inputs holding NaN and infinities, each one kernel with what surrounds it (issue 30, item 1)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import array as xp
from compiler.errors import ShapeError
from array_cases import check, make

INF, NAN = np.inf, np.nan
A = np.array([[0.0, 1.5, 0.0, -2.0], [NAN, 0.0, INF, 0.0], [0.0, -INF, 0.0, 0.5]])
B = np.array([[1.0, 0.0, 0.0, -1.0], [0.0, 0.0, 2.0, 0.0], [3.0, 0.0, 0.0, 0.25]])
I = np.array([[0, 3, 0, -2], [1, 0, 0, 0], [0, 0, 7, 0]], dtype=np.int32)


def materialized(array) -> list:
    return [s.note for s in array.lower().trace.find("materialize")]


CASES = {
    "mean": (lambda a: xp.mean(a, axis=0), lambda a: np.mean(a, axis=0)),
    "mean_all": (lambda a: xp.mean(a), np.mean),
    "mean_keepdims": (lambda a: xp.mean(a, axis=1, keepdims=True), lambda a: np.mean(a, axis=1, keepdims=True)),
    "vecdot": (lambda a: xp.vecdot(a, B), lambda a: np.sum(a * B, axis=-1)),
    "count_nonzero": (lambda a: xp.count_nonzero(a, axis=1), lambda a: np.count_nonzero(a, axis=1)),
    "square": (xp.square, np.square),
    "reciprocal": (lambda a: xp.reciprocal(a), lambda a: np.reciprocal(a.astype(float))),
    "isnan": (xp.isnan, np.isnan),
    "isinf": (xp.isinf, np.isinf),
    "isfinite": (xp.isfinite, np.isfinite),
    "sign": (xp.sign, np.sign),
    "clip": (lambda a: xp.clip(a, -1, 1), lambda a: np.clip(a, -1, 1)),
    "clip_low": (lambda a: xp.clip(a, min=0.25), lambda a: np.clip(a, 0.25, None)),
    "logical_xor": (lambda a: xp.logical_xor(a, B), lambda a: np.logical_xor(a, B)),
    "flip": (xp.flip, np.flip),
    "flip_axis": (lambda a: xp.flip(a, axis=-1), lambda a: np.flip(a, axis=-1)),
    "moveaxis": (lambda a: xp.moveaxis(xp.stack([a, a * 2]), 0, 2), lambda a: np.moveaxis(np.stack([a, a * 2]), 0, 2)),
    "squeeze": (lambda a: xp.squeeze(xp.expand_dims(a, axis=0), axis=0), lambda a: a),
    "positive": (xp.positive, np.positive),
    "signbit": (xp.signbit, np.signbit),
    "logaddexp": (lambda a: xp.logaddexp(a, B), lambda a: np.logaddexp(a, B)),
    "diff": (lambda a: xp.diff(a, axis=0), lambda a: np.diff(a, axis=0)),
    "diff2": (lambda a: xp.diff(a, n=2, prepend=B[:, :1], append=0.5),
              lambda a: np.diff(a, n=2, prepend=B[:, :1], append=0.5)),
    "imag": (xp.imag, np.imag),
    "real": (xp.real, np.real),
    "conj": (xp.conj, np.conj),
    "bitwise_invert": (lambda a: xp.bitwise_invert(a > 0), lambda a: np.invert(a > 0)),
}


@pytest.mark.parametrize("kind", ["numpy", "csr"])
@pytest.mark.parametrize("name", list(CASES))
def test_derived_functions_match_numpy_on_floats_and_ints(kind, name):
    ours, theirs = CASES[name]
    # (integers once, dense: numpy's reciprocal of an integer is integer division, the Array API's of floats)
    for values in (A, I) if kind == "numpy" and name != "reciprocal" else (A,):
        with np.errstate(all="ignore"):
            want = theirs(values)
        check(ours(xp.asarray(make(values, kind))), want)


@pytest.mark.parametrize("name", ["mean", "vecdot", "count_nonzero", "isnan", "isinf", "isfinite", "sign", "clip",
                                  "flip", "logical_xor", "signbit", "logaddexp", "diff", "imag"])
def test_derived_functions_fuse_into_one_kernel(name):
    # each is the expression a user would write: one kernel with what surrounds it, nothing materialized
    a = xp.asarray(make(A, "csr"))
    expr = CASES[name][0](a) * 2
    assert materialized(expr) == []
    with np.errstate(all="ignore"):
        check(expr, CASES[name][1](A) * 2)


def test_mean_of_integers_is_float64_and_of_float32_stays_float32():
    check(xp.mean(xp.asarray(I), axis=1), np.mean(I, axis=1))
    f = A.astype(np.float32)
    check(xp.mean(xp.asarray(make(f, "csr")), axis=0), np.mean(f, axis=0))


def test_mean_of_an_empty_axis_is_nan_and_var_over_too_few_entries_is_nan():
    e = np.zeros((0, 3))
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        want = np.mean(e, axis=0)
    check(xp.mean(xp.asarray(e), axis=0), want)
    got = xp.var(xp.asarray(np.ones((1, 3))), axis=0, correction=1).compute().to_numpy()
    assert np.isnan(got).all() and got.shape == (3,)


@pytest.mark.parametrize("kind", ["numpy", "csr"])
@pytest.mark.parametrize("correction", [0, 1])
def test_var_and_std_match_numpy_in_one_kernel(kind, correction):
    a = xp.asarray(make(B, kind))
    check(xp.var(a, axis=0, correction=correction), np.var(B, axis=0, ddof=correction))
    np.testing.assert_allclose(xp.std(a, axis=1, correction=correction).todense(),
                               np.std(B, axis=1, ddof=correction), rtol=1e-14)
    np.testing.assert_allclose(float(xp.var(a)), np.var(B), rtol=1e-14)
    # (the mean under the subtraction is a reduction nested in the kernel: a workspace over the columns)
    assert materialized(xp.var(a, axis=0, correction=correction)) == []


def test_imag_of_a_sparse_array_stores_nothing_and_unstack_gives_its_slices():
    got = xp.imag(xp.asarray(make(A, "csr"))).compute()
    assert got.nnz == 0 and got.to_numpy().dtype == np.float64 and not got.to_numpy().any()
    t = np.arange(24.0).reshape(2, 3, 4)
    for axis in (0, 1, -1):
        parts = xp.unstack(xp.asarray(make(t, "coo")), axis=axis)
        want = [np.take(t, k, axis=axis) for k in range(t.shape[axis])]
        assert len(parts) == len(want)
        for g, w in zip(parts, want):
            check(g, w)


def test_diff_of_integers_booleans_and_too_many_steps():
    check(xp.diff(xp.asarray(I), axis=1, n=3), np.diff(I, axis=1, n=3))
    check(xp.diff(xp.asarray(I), axis=1, n=7), np.diff(I, axis=1, n=7))   # (past the extent: empty)
    flags = np.array([True, False, False, True])
    check(xp.diff(xp.asarray(flags)), np.diff(flags))
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        xp.diff(xp.asarray(I), n=-1)
    with pytest.raises(ShapeError, match="diff needs at least one dimension"):
        xp.diff(xp.asarray(np.float64(2.0)))


def test_broadcast_arrays_and_the_shape_errors():
    x = np.arange(4.0)
    got = xp.broadcast_arrays(xp.asarray(make(B, "csr")), x, 2.0 * np.ones((3, 1)))
    for g, w in zip(got, np.broadcast_arrays(B, x, 2.0 * np.ones((3, 1)))):
        check(g, w)
    with pytest.raises(ShapeError, match="broadcast_arrays"):
        xp.broadcast_arrays(B, np.ones(3))
    with pytest.raises(ShapeError, match=r"squeeze: axis 1 of shape \(3, 4\) has extent 4, not 1"):
        xp.squeeze(xp.asarray(B), axis=1)
    with pytest.raises(ShapeError, match="moveaxis: 2 source axes but 1 destinations"):
        xp.moveaxis(xp.asarray(B), (0, 1), 0)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_math_functions_of_the_array_language_by_both_strategies(strategy):
    a = xp.asarray(make(A, "csr"))
    with np.errstate(all="ignore"):
        for ours, theirs in ((xp.tanh(a) + xp.log1p(xp.abs(a)), np.tanh(A) + np.log1p(np.abs(A))),
                             (xp.atan2(a, B) * xp.hypot(a, B), np.arctan2(A, B) * np.hypot(A, B))):
            got = ours.compute(strategy=strategy).to_numpy()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(theirs))
            np.testing.assert_array_max_ulp(np.nan_to_num(got), np.nan_to_num(theirs), maxulp=8)


VALUES = st.sampled_from([0.0, 1.0, -2.5, 0.5, INF, -INF, NAN])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
@example(data=None)
def test_property_derived_functions_on_random_sparse_inputs(data):
    if data is None:   # (an all-fill input, its fill NaN: every derived function of a NaN fill)
        rows, cols, vals, fill, kind, name, axis = 2, 3, [NAN] * 6, NAN, "coo", "isfinite", 0
    else:
        rows, cols = data.draw(st.integers(0, 4)), data.draw(st.integers(1, 4))
        fill = data.draw(st.sampled_from([0.0, NAN, 1.0]))
        vals = data.draw(st.lists(st.one_of(st.just(fill), VALUES), min_size=rows * cols, max_size=rows * cols))
        kind = data.draw(st.sampled_from(["numpy", "csr", "coo"]))
        name = data.draw(st.sampled_from(["mean", "isnan", "isinf", "isfinite", "sign", "clip", "flip", "square",
                                          "count_nonzero", "signbit", "diff", "imag"]))
        axis = data.draw(st.sampled_from([None, 0, 1]))
    a = np.array(vals, dtype=float).reshape(rows, cols)
    x = xp.asarray(make(a, kind, fill=None if kind == "numpy" else fill))
    fns = {"mean": (lambda v: xp.mean(v, axis=axis), lambda v: np.mean(v, axis=axis)),
           "count_nonzero": (lambda v: xp.count_nonzero(v, axis=axis),
                             lambda v: np.asarray(np.count_nonzero(v, axis=axis), dtype=np.int64)),
           "flip": (lambda v: xp.flip(v, axis=axis), lambda v: np.flip(v, axis=axis)),
           "diff": (lambda v: xp.diff(v, axis=-1 if axis is None else axis),
                    lambda v: np.diff(v, axis=-1 if axis is None else axis))}
    ours, theirs = fns.get(name, CASES[name])
    if name == "mean" and a.size == 0 or (name == "mean" and axis == 0 and rows == 0):
        return   # (numpy warns of an empty mean; the empty case has its own test)
    with np.errstate(all="ignore"):
        want = theirs(a)
    check(ours(x), want)


def test_unsigned_sign_and_invert_moveaxis_order_and_vecdot_extents():
    # (sign and ~ of an unsigned array put -1 in its dtype: a DTypeError before)
    for dt in ("uint8", "uint16", "uint64"):
        a = np.array([0, 1, 200, 3], dtype=dt)
        np.testing.assert_array_equal(np.asarray(xp.sign(xp.asarray(a))), np.sign(a))
        np.testing.assert_array_equal(np.asarray(~xp.asarray(a)), ~a)
        assert xp.bitwise_invert(xp.asarray(a)).dtype == a.dtype
    # (moveaxis pairs source and destination by place: they were sorted first, so (0, 1) -> (1, 0) moved nothing)
    a = np.zeros((2, 3, 4))
    for src, dst in [((0, 1), (1, 0)), ((2, 0), (0, 1)), (-1, 0), ((0, 2), (-1, -3))]:
        assert xp.moveaxis(xp.asarray(a), src, dst).shape == np.moveaxis(a, src, dst).shape
    # (vecdot's axis is not broadcast, as numpy's: an extent 1 against 0 was summed)
    with pytest.raises(ShapeError, match="vecdot: axis -1 has extent 0 in the first operand"):
        xp.vecdot(xp.asarray(np.zeros(0)), xp.asarray(np.zeros(1)))
    assert complex(xp.vecdot(xp.asarray(np.array([1j, 2j])), xp.asarray(np.array([1, 2j])))) == 4 - 1j


def test_an_axis_out_of_range_is_an_index_error_too():
    from compiler import AxisError
    for call in (lambda: xp.expand_dims(xp.asarray(1.0), axis=-2), lambda: xp.sum(xp.asarray(np.zeros(2)), axis=1),
                 lambda: xp.stack([xp.asarray(np.zeros(2))], axis=3)):
        with pytest.raises(IndexError, match="out of range") as e:
            call()
        assert isinstance(e.value, (AxisError, ShapeError, ValueError))
