"""What a call keeps between calls (issue 31 item 4): lower()'s first look at its arguments
(compiler.lowering's probe) and a kernel's result built when first read; each kept thing gives
what the full path gives when the inputs change."""

import numpy as np
import pytest

import compiler as ss
from compiler import lowering
from compiler.binding import OutputPlan

SPMV = "y[i] = A[i, j] * x[j]"


def _matrix(seed=0, shape=(5, 4)):
    rng = np.random.default_rng(seed)
    a = rng.random(shape)
    a[a < 0.5] = 0
    return a


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_probed_kernel_answers_for_values_changed_in_place(strategy):
    a, x = _matrix(), np.arange(4.0)
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    k = ss.lower(SPMV, strategy=strategy, A=A, x=x)
    assert ss.lower(SPMV, strategy=strategy, A=A, x=x) is k, "the second lower() is the probe's"
    np.testing.assert_allclose(ss.einsum(SPMV, strategy=strategy, A=A, x=x).to_numpy(), a @ x)
    A.vals[:] = np.arange(1.0, A.nnz + 1)   # (in place: the same tensor, and its format object)
    x[:] = [4.0, -1.0, 2.0, 0.5]
    got = ss.einsum(SPMV, strategy=strategy, A=A, x=x).to_numpy()
    np.testing.assert_allclose(got, ss.evaluate(SPMV, A=A, x=x)[0])


def test_a_nan_in_a_numpy_argument_misses_the_probe_and_gets_the_kernel_for_nan():
    A = ss.Tensor.from_numpy(_matrix(), "csr", name="A")
    x = np.arange(4.0)
    k = ss.lower(SPMV, A=A, x=x)
    x[1] = np.nan
    other = ss.lower(SPMV, A=A, x=x)
    assert other is not k and not other.facts["x"].finite
    np.testing.assert_array_equal(ss.einsum(SPMV, A=A, x=x).to_numpy(), ss.evaluate(SPMV, A=A, x=x)[0])
    x[1] = 1.0
    assert ss.lower(SPMV, A=A, x=x) is k


def test_another_format_or_dtype_misses_the_probe():
    a, x = _matrix(), np.arange(4.0)
    csr, csc = ss.Tensor.from_numpy(a, "csr", name="A"), ss.Tensor.from_numpy(a, "csc", name="A")
    k = ss.lower(SPMV, A=csr, x=x)
    kc = ss.lower(SPMV, A=csc, x=x)
    assert kc is not k and kc.formats["A"] == csc.format
    assert ss.lower(SPMV, A=csr, x=x.astype(np.float32)).formats["x"].dtype == np.float32
    assert ss.lower(SPMV, A="csc", x=x) is kc
    for A in (csr, csc):
        np.testing.assert_allclose(ss.einsum(SPMV, A=A, x=x).to_numpy(), a @ x)
    # another shape, the same format: one kernel takes every shape
    b = _matrix(1, (3, 6))
    B = ss.Tensor.from_numpy(b, "csr", name="A")
    np.testing.assert_allclose(ss.einsum(SPMV, A=B, x=np.ones(6)).to_numpy(), b @ np.ones(6))


def test_a_kernel_specialized_to_shapes_is_not_probed():
    """The lattice strategy lowers shape operators for the shapes given: another shape is another kernel."""
    prog = "y[l] = concat((a[j], b[k]), (j, k) -> l)"
    k3 = ss.lower(prog, strategy="lattice", a=np.ones(3), b=np.ones(2))
    k4 = ss.lower(prog, strategy="lattice", a=np.ones(4), b=np.ones(2))
    assert k3 is not k4
    np.testing.assert_array_equal(ss.einsum(prog, strategy="lattice", a=np.arange(4.0), b=np.ones(2)).to_numpy(),
                                  [0, 1, 2, 3, 1, 1])


def test_clear_cache_forgets_the_probe():
    A = ss.Tensor.from_numpy(_matrix(), "csr", name="A")
    k = ss.lower(SPMV, A=A, x=np.ones(4))
    assert ss.lower(SPMV, A=A, x=np.ones(4)) is k
    lowering.clear_cache()
    assert ss.lower(SPMV, A=A, x=np.ones(4)) is not k
    assert len(lowering._PROBE) == 1


def test_a_result_builds_its_levels_when_first_read():
    y = np.array([1.0, 0.0, 2.0])
    t = OutputPlan("y", ss.dense(1)).tensor((3,), {"y_val": y})
    assert "_root" not in t.__dict__
    assert t.shape == (3,) and t.format == ss.dense(1)
    assert t.levels[0].size == 3 and t.vals is y and t.nnz == 3
    np.testing.assert_array_equal(t.to_numpy(), y)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        t.nope
    with pytest.raises(KeyError, match="returned no y_val for output y"):
        OutputPlan("y", ss.dense(1)).tensor((3,), {})


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_result_is_an_input_of_the_next_call(strategy):
    """An iterative method: each call's result, built lazily, is the next call's tensor."""
    a = _matrix(2, (4, 4))
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    x = ss.Tensor.from_numpy(np.ones(4), "dense", name="x")
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=A, x=x)
    want = np.ones(4)
    for _ in range(4):
        x = k(A=A, x=x)
        want = a @ want
        np.testing.assert_allclose(x.to_numpy(), want)


def test_a_shape_operators_kernel_checks_their_premises_once_per_set_of_shapes(monkeypatch):
    from compiler import runtime
    inferred = []
    real = runtime.infer_shapes
    monkeypatch.setattr(runtime, "infer_shapes", lambda prog, shapes: inferred.append(shapes) or real(prog, shapes))
    vstack = "D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)"
    b, c = _matrix(1, (3, 4)), _matrix(2, (2, 4))
    B, C = ss.Tensor.from_numpy(b, "csr", name="B"), ss.Tensor.from_numpy(c, "csr", name="C")
    k = ss.lower(vstack, strategy="looplets", B=B, C=C, D="csr")
    for _ in range(3):
        np.testing.assert_array_equal(k(B=B, C=C).to_numpy(), np.vstack([b, c]))
    assert len(inferred) == 1
    # other shapes are checked (and those that break a premise refused), every time
    c2 = _matrix(3, (4, 4))
    np.testing.assert_array_equal(k(B=B, C=ss.Tensor.from_numpy(c2, "csr", name="C")).to_numpy(), np.vstack([b, c2]))
    assert len(inferred) == 2
    wide = ss.Tensor.from_numpy(_matrix(4, (2, 5)), "csr", name="C")
    for _ in range(2):
        with pytest.raises(ss.ShapeError, match="extent"):
            k(B=B, C=wide)
    assert len(inferred) == 4


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_concatenation_s_fill_follows_which_parts_each_call_finds_empty(strategy):
    # (the fill is the first non-empty part's; k, the collapse's index, is read by no access: each call's
    # extents are inferred from its shapes)
    program = "c[m] = concat((collapse(A[i, j], (i, j) -> k), B[l]), (k, l) -> m) * 2"
    B = ss.Tensor.from_numpy(np.array([0.0, 2.0, 0.0]), "sparse_vector")
    empty = ss.Tensor.from_numpy(np.zeros((0, 3)), "csr", fill=np.nan)
    full = ss.Tensor.from_numpy(np.array([[np.nan, 1.0, np.nan]]), "csr", fill=np.nan)
    for A in (empty, full, empty):
        # (the looplets' kernel is lower()'s cached one each time; the lattice's is specialized to the shapes)
        got = ss.lower(program, strategy=strategy, A=A, B=B)(A=A, B=B)
        want, fill = ss.evaluate(program, A=A, B=B)
        np.testing.assert_array_equal(got.to_numpy(), want)
        assert np.array_equal(got.fill, fill, equal_nan=True) and np.array_equal(fill, np.nan if A is full else 0.0,
                                                                                  equal_nan=True)
