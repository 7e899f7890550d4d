"""The Array API's Fourier transform extension, ``xp.fft`` (issue 30), against numpy.fft: every transform on
numpy, Tensor, scipy.sparse and pydata/sparse operands (NaN and infinities among the values, a NaN fill,
empty and all-fill arrays), their dtypes (single precision kept), ``n``/``s``/``axes``/``norm``; the shifts
fused with the expression around them and sparse; the trace saying where a transform materialized; and
clear errors for what does not fit."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.array.nodes import Leaf
from compiler.errors import DTypeError, ShapeError, UsageError
from array_cases import make

NAN, INF = float("nan"), float("inf")
A = np.array([[0, 1.5, 0, -2.0, 0], [0, 0, 0, 0, 0], [3.0, 0, 0.5, 0, 1.0], [0, -1.0, 0, 0, 4.0]])


def close(result, expected, rtol=1e-12):
    """``result`` computed has numpy's shape and dtype, and its values to ``rtol`` (NaN where numpy's)."""
    expected = np.asarray(expected)
    got = result.compute()
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, got.dtype, expected.dtype)
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=rtol, atol=1e-12, equal_nan=True)
    return got


@pytest.mark.parametrize("kind", ["numpy", "csr", "coo", "scipy_csr", "pydata_coo"])
def test_every_transform_matches_numpy(kind):
    x = xp.asarray(make(A, kind))
    close(xp.fft.fft(x), np.fft.fft(A))
    close(xp.fft.ifft(x, axis=0), np.fft.ifft(A, axis=0))
    close(xp.fft.fftn(x), np.fft.fftn(A))
    close(xp.fft.ifftn(x, s=(3, 6), axes=(0, 1), norm="ortho"), np.fft.ifftn(A, s=(3, 6), axes=(0, 1), norm="ortho"))
    close(xp.fft.rfft(x, n=8, norm="forward"), np.fft.rfft(A, n=8, norm="forward"))
    close(xp.fft.rfftn(x, axes=(1, 0)), np.fft.rfftn(A, axes=(1, 0)))
    half = np.fft.rfft(A)
    close(xp.fft.irfft(xp.fft.rfft(x)), np.fft.irfft(half))
    close(xp.fft.irfftn(xp.fft.rfftn(x), s=(4, 5)), np.fft.irfftn(np.fft.rfftn(A), s=(4, 5), axes=(0, 1)))
    close(xp.fft.hfft(x[0]), np.fft.hfft(A[0]))
    close(xp.fft.ihfft(x, axis=0), np.fft.ihfft(A, axis=0))


def test_single_precision_is_kept_and_integers_are_transformed_in_double():
    f = A.astype(np.float32)
    close(xp.fft.fft(xp.asarray(make(f, "csr"))), np.fft.fft(f), rtol=1e-5)   # (complex64)
    close(xp.fft.irfft(xp.asarray(np.fft.rfft(f))), np.fft.irfft(np.fft.rfft(f)), rtol=1e-5)   # (float32)
    i = A.astype(np.int32)
    close(xp.fft.rfft(xp.asarray(make(i, "coo"))), np.fft.rfft(i))   # (complex128)


def test_nan_infinities_a_nan_fill_empty_and_all_fill_arrays():
    v = np.array([0, NAN, 0, INF, 1.0, 0])
    with np.errstate(invalid="ignore"):
        close(xp.fft.fft(xp.asarray(make(v, "csr"))), np.fft.fft(v))
    w = np.array([NAN, 2.0, NAN, NAN])
    close(xp.fft.fft(xp.asarray(make(w, "csr", fill=NAN))), np.fft.fft(w))
    close(xp.fft.fft(xp.zeros(4, format="sparse")), np.zeros(4, complex))
    close(xp.fft.rfft(xp.full((2, 3), 2.0, format="csr")), np.fft.rfft(np.full((2, 3), 2.0)))
    close(xp.fft.fft(xp.asarray(make(np.zeros((0, 4)), "csr"))), np.zeros((0, 4), complex))


def test_a_transform_computes_its_operand_as_one_kernel_and_the_trace_says_it_materialized():
    x = xp.asarray(make(A, "csr"))
    y = xp.fft.fft(x * 2 + 1, axis=0)
    assert isinstance(y.node, Leaf) and "its own kernel" in y.node.origin and "numpy's FFT" in y.node.origin
    close(xp.real(y) * 3, np.fft.fft(A * 2 + 1, axis=0).real * 3)   # (and the expression after it fuses)


def test_the_shifts_are_rolls_fused_and_sparse():
    x = xp.asarray(make(A, "csr"))
    for axes in (None, 1, (0,), (-1, 0)):
        for shift, ref in ((xp.fft.fftshift, np.fft.fftshift), (xp.fft.ifftshift, np.fft.ifftshift)):
            s = shift(x * 2, axes=axes)
            assert not isinstance(s.node, Leaf)   # (lazy: one kernel with what surrounds it)
            got = close(s, ref(A * 2, axes=axes))
            assert not got.format.is_dense and got.nnz == np.count_nonzero(A)
    v = np.arange(7.0)
    assert xp.fft.ifftshift(xp.fft.fftshift(xp.asarray(v))).todense().tolist() == v.tolist()


def test_the_sample_frequencies():
    close(xp.fft.fftfreq(7, d=0.25), np.fft.fftfreq(7, d=0.25))
    close(xp.fft.rfftfreq(8), np.fft.rfftfreq(8))
    close(xp.fft.fftfreq(4, dtype=xp.float32), np.fft.fftfreq(4).astype(np.float32))


@pytest.mark.parametrize("call, error, message", [
    (lambda x: xp.fft.fft(x, norm="unitary"), UsageError, r"fft.fft: norm is one of 'backward', 'ortho', 'forward'"),
    (lambda x: xp.fft.rfft(x * 1j), DTypeError, r"fft.rfft transforms a real array, not complex128"),
    (lambda x: xp.fft.fft(x, n=0), UsageError, r"fft.fft: n is a positive int, not 0"),
    (lambda x: xp.fft.fft(x, axis=2), ShapeError, r"fft.fft: axis 2 is out of range"),
    (lambda x: xp.fft.fftn(x, axes=(0, -2)), ShapeError, r"fft.fftn: axes \(0, -2\) name an axis twice"),
    (lambda x: xp.fft.fftn(x, s=(3,), axes=(0, 1)), ShapeError, r"fft.fftn: s has 1 entries for 2 axes"),
    (lambda x: xp.fft.fft(xp.sum(x)), ShapeError, r"fft.fft: a 0-d array has no axis"),
    (lambda x: xp.fft.irfft(x[:, :1]), ShapeError, r"fft.irfft: axis 1 of length 1 gives no output points"),
    (lambda x: xp.fft.fft(x > 0), None, None),   # (bool: transformed as numbers, as numpy's)
    (lambda x: xp.fft.fftfreq(0), UsageError, r"fft.fftfreq: n is a positive int, not 0"),
    (lambda x: xp.fft.rfftfreq(4, dtype=xp.int64), DTypeError, r"the frequencies are real floats, not int64"),
])
def test_what_does_not_fit_is_refused_in_the_users_terms(call, error, message):
    x = xp.asarray(make(A, "csr"))
    if error is None:
        close(call(x), np.fft.fft(A > 0))
        return
    with pytest.raises(error, match=message):
        call(x)


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["numpy", "csr", "coo", "pydata_coo"]),
       st.tuples(st.integers(1, 5), st.integers(1, 6)), st.sampled_from([0.0, NAN]), st.sampled_from([0, 1, -1]),
       st.sampled_from(["backward", "ortho", "forward"]))
@example(0, "csr", (1, 1), NAN, 1, "ortho")
def test_property_transforms_and_shifts_of_a_fused_expression_match_numpy(seed, kind, shape, fill, axis, norm):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape).astype(float)
    a[rng.random(shape) < 0.5] = fill
    a[rng.random(shape) < 0.1] = rng.choice([NAN, INF, -INF])
    x = xp.asarray(make(a, kind, fill if kind != "numpy" else None))
    with np.errstate(invalid="ignore", over="ignore"):
        close(xp.fft.fft(x - 1, axis=axis, norm=norm), np.fft.fft(a - 1, axis=axis, norm=norm))
        close(xp.fft.rfftn(x, norm=norm), np.fft.rfftn(a, norm=norm))
        close(xp.fft.fftshift(x * 2, axes=axis), np.fft.fftshift(a * 2, axes=axis))
