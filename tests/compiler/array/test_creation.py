"""The Array API's creation functions against numpy, dense and sparse (issue 30, item 1): a sparse array
of one value stores nothing, its value the fill, and computes with others as any operand."""

import numpy as np
import pytest
import scipy.sparse as sp

from compiler import array as xp
from compiler.errors import DTypeError, ShapeError, SparsescopeError, UsageError
from array_cases import check


@pytest.mark.parametrize("format", [None, "csr", "coo", "dcsr"])
def test_full_zeros_ones_match_numpy_and_store_nothing_when_sparse(format):
    for ours, want in ((xp.full((3, 4), 2.5, format=format), np.full((3, 4), 2.5)),
                       (xp.full((2, 3), np.nan, format=format), np.full((2, 3), np.nan)),
                       (xp.full((2, 2), 7, format=format), np.full((2, 2), 7)),
                       (xp.zeros((3, 2), format=format), np.zeros((3, 2))),
                       (xp.ones((2, 5), dtype=np.int32, format=format), np.ones((2, 5), np.int32)),
                       (xp.zeros((0, 3), format=format), np.zeros((0, 3)))):
        got = check(ours, want)
        if format is not None:
            assert got.nnz == 0 and ours.node.tensor.nnz == 0
            np.testing.assert_array_equal(ours.fill_value, want.flat[0] if want.size else 0)


def test_the_like_functions_take_the_shape_and_dtype():
    a = xp.asarray(sp.csr_array(np.array([[0, 2], [3, 0]], dtype=np.int32)))
    check(xp.zeros_like(a), np.zeros((2, 2), np.int32))
    check(xp.ones_like(a, dtype=np.float32), np.ones((2, 2), np.float32))
    check(xp.full_like(a, -1, format="csr"), np.full((2, 2), -1, np.int32))


@pytest.mark.parametrize("format", [None, "csr", "csc", "coo"])
@pytest.mark.parametrize("shape, k", [((4, 4), 0), ((3, 5), 2), ((5, 3), -1), ((3, 3), 4), ((3, 3), -5),
                                      ((0, 2), 0)])
def test_eye_matches_numpy_and_stores_its_diagonal(format, shape, k):
    got = check(xp.eye(*shape, k=k, format=format), np.eye(*shape, k=k))
    if format is not None:
        assert got.nnz == np.count_nonzero(np.eye(*shape, k=k))
        if -shape[0] < k < shape[1]:   # (scipy refuses a diagonal outside the matrix; numpy's is all zeros)
            assert (xp.eye(*shape, k=k, format=format).to_scipy() != sp.eye_array(*shape, k=k)).nnz == 0


def test_a_sparse_array_of_one_value_computes_with_others():
    # ones in CSR: fill 1, no entries; A * ones is A, A + ones is A + 1 everywhere (fill 1)
    a = np.array([[0.0, 2.0, 0.0], [np.inf, 0.0, -1.0]])
    A = xp.asarray(sp.csr_array(a))
    check(A * xp.ones((2, 3), format="csr"), a)
    out = check(A + xp.ones((2, 3), format="csr"), a + 1)
    assert out.fill == 1.0
    check(xp.eye(2, 3, format="csr") @ xp.asarray(np.arange(3.0)), np.eye(2, 3) @ np.arange(3.0))
    check(xp.sum(xp.full((3, 4), np.nan, format="csr"), axis=0), np.full(4, np.nan))


def test_ranges_and_errors():
    check(xp.arange(5), np.arange(5))
    check(xp.arange(2, 10, 3), np.arange(2, 10, 3))
    check(xp.arange(1.0, step=0.25), np.arange(1.0, step=0.25))
    with pytest.raises(UsageError, match="arange: step cannot be 0"):   # (on main: ZeroDivisionError)
        xp.arange(0, 5, 0)
    check(xp.linspace(0, 1, 5), np.linspace(0, 1, 5))
    with pytest.raises(ShapeError, match="zeros: shape must be non-negative integers"):
        xp.zeros((2, -1))
    with pytest.raises(UsageError, match="dtype datetime64 is no value dtype"):
        xp.full((2,), np.datetime64(1, "D"), dtype="datetime64")


def c_of(array, strategy) -> str:
    return array.lower(strategy=strategy).c_source


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_tril_and_triu_visit_only_the_stored_entries(strategy):
    # (where's branches share the fill 0: the kernel walks A's entries, comparing their coordinates,
    # and never the (i, j) where A stores nothing: no loop over every column)
    s = sp.random_array((30, 20), density=0.2, format="csr", random_state=3)
    d = s.toarray()
    d[3, 4], d[10, 2] = np.nan, -np.inf
    a = xp.asarray(sp.csr_array(d))
    for k in (-3, 0, 5):
        got = xp.tril(a, k=k).compute(strategy=strategy)
        np.testing.assert_array_equal(got.to_numpy(), np.tril(d, k))
        assert got.nnz == np.count_nonzero(np.tril(d, k))
        np.testing.assert_array_equal(xp.triu(a, k=k).compute(strategy=strategy).to_numpy(), np.triu(d, k))
    source = c_of(xp.tril(a), strategy)
    assert "< A1_size" not in source and "j < " not in source.replace("j < lastC", "")


def test_tril_triu_of_stacks_integers_and_errors():
    t = np.arange(-12, 12).reshape(2, 3, 4)
    check(xp.tril(xp.asarray(t), k=1), np.tril(t, 1))
    check(xp.triu(xp.asarray(t.astype(bool)), k=-1), np.triu(t.astype(bool), -1))
    with pytest.raises(ShapeError, match="tril needs at least 2 dimensions"):
        xp.tril(xp.asarray(np.ones(3)))
    with pytest.raises(UsageError, match="triu: k must be an integer"):
        xp.triu(xp.asarray(np.ones((2, 2))), k=0.5)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy(indexing):
    xs = [np.arange(2.0), np.array([5, 6, 7]), np.linspace(0, 1, 4)]
    for n in (1, 2, 3):
        got = xp.meshgrid(*[xp.asarray(x) for x in xs[:n]], indexing=indexing)
        want = np.meshgrid(*xs[:n], indexing=indexing)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w)
    with pytest.raises(ShapeError, match="meshgrid: argument 1 has shape"):
        xp.meshgrid(xp.arange(2), xp.asarray(np.ones((2, 2))))
    with pytest.raises(UsageError, match="indexing must be"):
        xp.meshgrid(xp.arange(2), indexing="yx")


def test_empty_is_zeros_of_the_shape_and_dtype():
    check(xp.empty((2, 3), dtype=np.int32), np.zeros((2, 3), np.int32))
    got = xp.empty_like(xp.asarray(sp.csr_array(np.eye(3))), format="csr").compute()
    assert got.nnz == 0 and got.shape == (3, 3)


def test_dlpack_both_ways():
    x = np.arange(6.0).reshape(2, 3)
    got = xp.from_dlpack(x)
    check(got, x)
    assert np.shares_memory(got.node.tensor.vals, x)   # (shared, as numpy's from_dlpack)
    a = xp.asarray(sp.csr_array(np.eye(3))) * 2
    np.testing.assert_array_equal(np.from_dlpack(a), 2 * np.eye(3))
    assert a.__dlpack_device__() == (1, 0)
    with pytest.raises(UsageError, match="the only device is 'cpu'"):
        xp.from_dlpack(x, device="cuda")


# -- bad arguments: an error of the library's own, naming the function and argument, never numpy's --------

_BAD_ARGUMENTS = [
    ("linspace", lambda: xp.linspace(0, 1, "5"), UsageError, "linspace: num must be an integer"),
    ("linspace", lambda: xp.linspace(0, 1, -1), UsageError, "linspace: num must be at least 0, got -1"),
    ("linspace", lambda: xp.linspace(0, 1, 2.5), UsageError, "linspace: num must be an integer, got 2.5"),
    ("linspace", lambda: xp.linspace("a", 1, 5), UsageError, "linspace: start must be a real number"),
    ("linspace", lambda: xp.linspace(0, 1, 5, dtype="nope"), UsageError, "linspace: dtype 'nope' is not a dtype"),
    ("arange", lambda: xp.arange("a"), UsageError, "arange: start must be a real number"),
    ("arange", lambda: xp.arange(None), UsageError, "arange: start must be a real number, got None"),
    ("arange", lambda: xp.arange(0, 5, 1j), UsageError, "arange: step must be a real number"),
    ("arange", lambda: xp.arange(np.inf), UsageError, "arange: start must be finite"),
    ("arange", lambda: xp.arange(0, np.nan), UsageError, "arange: stop must be finite"),
    ("arange", lambda: xp.arange(5, dtype="nope"), UsageError, "arange: dtype 'nope'"),
    ("full", lambda: xp.full(2 ** 62, 1.0), MemoryError, r"full: an array of shape \(4611686018427387904,\) is too large"),
    ("zeros", lambda: xp.zeros((2 ** 40, 2 ** 40)), MemoryError, r"zeros: an array of shape \(1099511627776, 1099511627776\)"),
    ("ones", lambda: xp.ones((1,) * 70), ShapeError, "ones: shape .* has 70 dimensions; an array has at most 64"),
    ("full", lambda: xp.full(None, 1.0), ShapeError, "full: shape must be an integer or a tuple of integers, got None"),
    ("full", lambda: xp.full(2.5, 1.0), ShapeError, "full: shape must be an integer or a tuple of integers, got 2.5"),
    ("full", lambda: xp.full((2,), 300, dtype="int8"), DTypeError, "full: fill value 300 does not fit dtype int8"),
    ("full", lambda: xp.full((2,), 1.0, dtype="nope"), UsageError, "full: dtype 'nope' is not a dtype"),
    ("zeros", lambda: xp.zeros((2,), dtype="nope"), UsageError, "zeros: dtype 'nope' is not a dtype"),
    ("eye", lambda: xp.eye(3, k=1.5), UsageError, "eye: k must be an integer, got 1.5"),
    ("eye", lambda: xp.eye(3, k="1"), UsageError, "eye: k must be an integer, got '1'"),
    ("eye", lambda: xp.eye(3, dtype="nope"), UsageError, "eye: dtype 'nope'"),
    ("from_dlpack", lambda: xp.from_dlpack([1, 2]), UsageError, "from_dlpack: a list is no DLPack producer"),
    ("asarray", lambda: xp.asarray([[1, 2], [3]]), ShapeError, "nested lists of different lengths"),
    ("zeros_like", lambda: xp.zeros_like([[1], [1, 2]]), ShapeError, "nested lists of different lengths"),
]


@pytest.mark.parametrize("function, call, error, message", _BAD_ARGUMENTS,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(_BAD_ARGUMENTS)])
def test_a_bad_argument_of_a_creation_function_is_refused_naming_it(function, call, error, message):
    # (numpy's TypeError, ValueError, OverflowError or DTypePromotionError came through on main)
    with pytest.raises(error, match=message) as refused:
        call()
    assert isinstance(refused.value, (SparsescopeError, MemoryError))


def test_creation_functions_still_take_numpy_integers_and_scalars():
    np.testing.assert_array_equal(xp.linspace(np.float32(0), np.int64(1), np.int64(3)).todense(), np.linspace(0, 1, 3))
    np.testing.assert_array_equal(xp.arange(np.int32(5)).todense(), np.arange(5))
    np.testing.assert_array_equal(xp.arange(np.array(1.5), 4).todense(), np.arange(1.5, 4))
    np.testing.assert_array_equal(xp.eye(3, k=np.int64(-1)).todense(), np.eye(3, k=-1))
    np.testing.assert_array_equal(xp.full(np.int64(2), np.int8(-3), dtype="int8").todense(), np.full(2, -3, np.int8))
    np.testing.assert_array_equal(xp.zeros((), dtype="int32").todense(), np.zeros((), np.int32))


def test_asarray_takes_the_array_api_s_dtype_and_device():
    # (the Array API's asarray(obj, /, *, dtype=None, device=None, copy=None): a TypeError before)
    assert xp.asarray([1, 2], dtype=xp.float32).dtype == np.float32
    assert xp.asarray(3, dtype="uint8").dtype == np.uint8 and xp.asarray(2.5).dtype == np.float64
    assert xp.asarray([True, False]).dtype == np.bool_ and xp.asarray([1 + 2j]).dtype == np.complex128
    np.testing.assert_array_equal(np.asarray(xp.asarray([2 ** 63 + 1], dtype="uint64")), [2 ** 63 + 1])
    m = sp.csr_array(np.array([[0, 1.5], [2.5, 0]]))
    cast = xp.asarray(m, dtype="int32")
    assert cast.dtype == np.int32 and cast.to_scipy().nnz == 2
    np.testing.assert_array_equal(np.asarray(cast), [[0, 1], [2, 0]])
    same = xp.asarray(m)
    assert xp.asarray(same, dtype="float64") is same                 # (nothing to cast: the same Array)
    assert xp.asarray(same, dtype=np.float64, copy=False) is same
    with pytest.raises(ValueError, match="copy=False, but dtype=float32 converts its float64 values"):
        xp.asarray(m, dtype="float32", copy=False)
    assert xp.asarray(m, device="cpu").device == "cpu"
    with pytest.raises(ValueError, match="asarray: the only device is 'cpu', not 'cuda'"):
        xp.asarray(m, device="cuda")


@pytest.mark.parametrize("make", [
    lambda device: xp.zeros(2, device=device), lambda device: xp.ones(2, device=device),
    lambda device: xp.empty(2, device=device), lambda device: xp.full(2, 3, device=device),
    lambda device: xp.eye(2, device=device), lambda device: xp.arange(3, device=device),
    lambda device: xp.linspace(0, 1, 3, device=device), lambda device: xp.zeros_like(xp.ones(2), device=device),
    lambda device: xp.ones_like(xp.ones(2), device=device), lambda device: xp.empty_like(xp.ones(2), device=device),
    lambda device: xp.full_like(xp.ones(2), 5, device=device)])
def test_every_creation_function_takes_a_device(make):
    assert make(None).device == make("cpu").device == "cpu"
    with pytest.raises(ValueError, match="the only device is 'cpu', not 'gpu'"):
        make("gpu")
    assert make("cpu").dtype == make(None).dtype
