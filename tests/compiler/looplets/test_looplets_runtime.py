"""The looplet strategy through the shared runtime (compiler.lowering)."""

import numpy as np
import pytest

lowering = pytest.importorskip("compiler.lowering")

from compiler import Tensor  # noqa: E402
from compiler.levels import Dense, Element, SparseBand  # noqa: E402
from compiler.looplets import loop_program  # noqa: E402
from compiler.reference import evaluate  # noqa: E402

rng = np.random.default_rng(3)
a = rng.random((5, 7)) * (rng.random((5, 7)) < 0.4)
x = rng.random(7)


def test_registered():
    assert "looplets" in lowering.strategies()


@pytest.mark.parametrize("expr", ["y[i] = A[i, j] * x[j]", "y[i] += A[i, j] * x[j]",
                                  "C[i, j] = A[i, j] * A[i, j]", "s[] = A[i, j]"])
def test_index_notation(expr):
    A = Tensor.from_numpy(a, "csr")
    X = Tensor.from_numpy(x, "dense")
    args = {"A": A, "x": X} if "x[" in expr else {"A": A}
    k = lowering.lower(expr, strategy="looplets", **args)
    got = k(**args)
    ref, _ = evaluate(expr, **{n: t.to_numpy() for n, t in args.items()})
    np.testing.assert_allclose(got.to_numpy(), ref)


def test_loop_program_with_band():
    @loop_program
    def spmv(y, A, x):
        for i in _:
            for j in _:
                y[i] += A[i, j] * x[j]
    A = Tensor.from_numpy(a, Dense(SparseBand(Element(0.0))))
    X = Tensor.from_numpy(x, "dense")
    k = lowering.lower(spmv, strategy="looplets", y="dense", A=A, x=X)
    np.testing.assert_allclose(k(A=A, x=X).to_numpy(), a @ x)
    assert "lower:Sequence" in k.trace.stages()
