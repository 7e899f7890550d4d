"""The cost of calling a compiled kernel, next to scipy's in the same run (issue 31, item 4).

On a 5x5 CSR SpMV, where the kernel itself takes well under a microsecond, it times scipy's
``A @ x`` and a sparsescope kernel's call with its arguments as Tensors, as a numpy vector,
and as scipy matrices, then ``einsum`` and ``lower`` returning a cached kernel, printing each
time and its ratio to scipy's (the targets: a call within 1.5x, einsum and lower within 3x).

    .venv/bin/python benchmarks/bench_call_path.py
"""

import os
import sys
import tempfile
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402


def best(f, number, repeat=7):
    f()
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def main():
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import compiler as ss

    A = sp.random(5, 5, density=0.4, format="csr", random_state=0)
    x = np.arange(5.0)
    At, xt = ss.Tensor.from_scipy(A, name="A"), ss.Tensor.from_numpy(x, "dense", name="x")
    scipy_call = best(lambda: A @ x, 50_000)
    print(f"scipy A @ x (5x5, {A.nnz} nnz): {scipy_call * 1e6:6.2f} us")
    for strategy in ss.strategies():
        k = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=At, x=xt)
        assert np.allclose(k(A=At, x=xt).to_numpy(), A @ x) and np.allclose(k(A=A, x=x).to_numpy(), A @ x)
        rows = [
            ("call, Tensors", best(lambda: k(A=At, x=xt), 20_000), 1.5),
            ("call, numpy x", best(lambda: k(A=At, x=x), 20_000), 1.5),
            ("call, scipy A + numpy x", best(lambda: k(A=A, x=x), 5_000), 1.5),
            ("einsum, cached kernel", best(lambda: ss.einsum("y[i] = A[i, j] * x[j]", strategy=strategy,
                                                             A=At, x=xt), 2_000), 3.0),
            ("lower, cached kernel", best(lambda: ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy,
                                                           A=At, x=xt), 2_000), 3.0),
        ]
        for what, t, target in rows:
            ratio = t / scipy_call
            print(f"  {strategy:8s} {what:26s} {t * 1e6:7.2f} us  {ratio:5.2f}x scipy  (target {target}x)")


if __name__ == "__main__":
    main()
