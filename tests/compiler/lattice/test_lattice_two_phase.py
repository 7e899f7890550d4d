"""Two-phase assembly (assemble the structure, then compute the values) against one-pass assembly."""

import numpy as np
import pytest

from compiler import Tensor, evaluate, lower
from compiler.errors import StrategyError
from compiler.format import coo, csr, dcsr, dense, sparse_vector

TWO = {"assembly": "two-phase"}


def rand(shape, density, rng, empty=()):
    a = rng.integers(-3, 4, size=shape).astype(float)
    a[rng.random(shape) >= density] = 0.0
    for r in empty:
        a[r] = 0.0
    return a


def both(prog, out, **tensors):
    """Lower one-pass and two-phase; both must agree with the oracle and with each other, array by array."""
    name = prog.split("[")[0]
    k1 = lower(prog, **tensors, **{name: out})
    k2 = lower(prog, **tensors, **{name: out}, options=TWO)
    r1, r2 = k1(**tensors), k2(**tensors)
    want, _ = evaluate(prog, **tensors)
    np.testing.assert_allclose(r2.to_numpy(), want)
    np.testing.assert_allclose(k2.interpret(**tensors).to_numpy(), want)
    for l1, l2 in zip(r1.levels, r2.levels):
        for kind, arr in l1.arrays().items():
            np.testing.assert_array_equal(arr, l2.arrays()[kind])
    np.testing.assert_array_equal(r1.vals, r2.vals)
    assert not np.any(r2.vals == r2.fill), "a value equal to the fill was stored"
    assert "phase 1, assemble" in k2.c_source and "phase 2, compute" in k2.c_source
    return k2, r2


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("prog", ["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, j] * B[i, j]",
                                  "C[i, j] = A[i, k] * B[k, j]"])
def test_matrices(prog, seed):
    rng = np.random.default_rng(seed)
    m, n = (7, 9) if "k" not in prog else (7, 7)
    A = Tensor.from_numpy(rand((m, n), 0.35, rng, empty=(0, 4)), csr(), name="A")
    B = Tensor.from_numpy(rand((m, n) if "k" not in prog else (n, 6), 0.35, rng, empty=(2,)), csr(), name="B")
    both(prog, csr(), A=A, B=B)


def test_cancellation_is_dropped_after_the_compute_phase():
    b = Tensor.from_numpy(np.array([1.0, 2.0, 0.0, 3.0]), sparse_vector(), name="b")
    c = Tensor.from_numpy(np.array([-1.0, 0.0, 5.0, -3.0]), sparse_vector(), name="c")
    k, r = both("a[i] = b[i] + c[i]", sparse_vector(), b=b, c=c)
    assert r.levels[0].idx.tolist() == [1, 2]
    assert "drop the entries whose value is the fill" in k.c_source


def test_spgemm_cancellation_and_empty():
    A = Tensor.from_numpy(np.array([[1.0, 1.0], [0.0, 0.0]]), csr(), name="A")
    B = Tensor.from_numpy(np.array([[2.0, 3.0], [-2.0, 1.0]]), csr(), name="B")
    _, r = both("C[i, j] = A[i, k] * B[k, j]", csr(), A=A, B=B)
    assert r.levels[1].pos.tolist() == [0, 1, 1]
    Z = Tensor.from_numpy(np.zeros((3, 4)), csr(), name="A")
    both("C[i, j] = A[i, j] * B[i, j]", csr(), A=Z, B=Tensor.from_numpy(np.ones((3, 4)), csr(), name="B"))


def test_nonzero_fill():
    rng = np.random.default_rng(9)
    a = rand((5, 6), 0.5, rng)
    A = Tensor.from_numpy(a + 1.0, csr(fill=1.0), name="A")
    B = Tensor.from_numpy(rand((5, 6), 0.5, rng) + 1.0, csr(fill=1.0), name="B")
    both("C[i, j] = A[i, j] * B[i, j]", csr(fill=1.0), A=A, B=B)


def test_with_a_schedule():
    rng = np.random.default_rng(10)
    A = Tensor.from_numpy(rand((9, 7), 0.4, rng), csr(), name="A")
    B = Tensor.from_numpy(rand((9, 7), 0.4, rng), csr(), name="B")
    k = lower("C[i, j] = A[i, j] + B[i, j]", A=A, B=B, C=csr(),
              options={**TWO, "schedule": [("split", "i", "i0", "i1", 4)]})
    want, _ = evaluate("C[i, j] = A[i, j] + B[i, j]", A=A, B=B)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), want)


@pytest.mark.parametrize("out, message", [(dense(2), "dense"), (dcsr(), "one SparseList level under Dense"),
                                          (coo(), "one SparseList level under Dense")])
def test_refusals(out, message):
    A = Tensor.from_numpy(np.eye(3), csr(), name="A")
    with pytest.raises(StrategyError, match=message):
        lower("C[i, j] = A[i, j] * B[i, j]", A=A, B=A, C=out, options=TWO)


def test_unknown_assembly():
    A = Tensor.from_numpy(np.eye(3), csr(), name="A")
    with pytest.raises(StrategyError, match="'one-pass' or 'two-phase'"):
        lower("C[i, j] = A[i, j] * B[i, j]", A=A, B=A, C=csr(), options={"assembly": "three"})
