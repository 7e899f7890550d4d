"""Overhead of the C back end on CSR SpMV written directly in the imperative IR.

Prints: the first compile (emit + compile + load, cold cache), the cached
lookup (compile_function again), the disk-cache load in a fresh memory cache,
the per-call overhead on a 4x4 matrix next to scipy's ``csr @ x``, and SpMV on
a 100k x 100k matrix with 1M nonzeros next to scipy.

    .venv/bin/python benchmarks/bench_overhead.py
"""

import os
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402


def best(f, number, repeat=5):
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def main():
    os.environ["SPARSESCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="sparsescope-bench-")
    from compiler import backend
    from compiler.imperative.examples import csr_spmv

    fn = csr_spmv("int32", "float64")  # scipy's own index dtype, so neither side converts
    t = time.perf_counter()
    kernel = backend.compile_function(fn)
    first = time.perf_counter() - t
    lookup = best(lambda: backend.compile_function(fn), 10_000)
    backend.clear_memory_cache()
    t = time.perf_counter()
    backend.compile_function(fn)
    disk = time.perf_counter() - t
    print(f"first compile (emit + cc + load, cold cache): {first * 1e3:8.1f} ms   (target < 1000 ms)")
    print(f"cached lookup (compile_function again):       {lookup * 1e6:8.1f} us   (target < 1000 us)")
    print(f"disk cache load (fresh memory cache):         {disk * 1e3:8.1f} ms")
    print(f"stats: {backend.stats()}")

    A = sp.random(4, 4, density=0.5, format="csr", random_state=0, dtype=np.float64)
    x, y = np.ones(4), np.zeros(4)
    args = dict(m=4, A_pos=A.indptr, A_idx=A.indices, A_val=A.data, x=x, y=y)
    ours = best(lambda: kernel(**args), 100_000)
    theirs = best(lambda: A @ x, 100_000)
    print(f"tiny 4x4 SpMV per call: sparsescope {ours * 1e6:6.2f} us, scipy {theirs * 1e6:6.2f} us, "
          f"ratio {ours / theirs:5.2f}   (target < 20 us)")

    n, nnz = 100_000, 1_000_000
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
    B = sp.csr_matrix((rng.standard_normal(nnz), (rows, cols)), shape=(n, n))
    B.sum_duplicates()
    x, y = rng.standard_normal(n), np.zeros(n)
    args = dict(m=n, A_pos=B.indptr, A_idx=B.indices, A_val=B.data, x=x, y=y)
    kernel(**args)
    assert np.allclose(y, B @ x)
    ours = best(lambda: kernel(**args), 20)
    theirs = best(lambda: B @ x, 20)
    print(f"SpMV {n}x{n}, {B.nnz} nnz: sparsescope {ours * 1e3:6.2f} ms, scipy {theirs * 1e3:6.2f} ms, "
          f"ratio {ours / theirs:5.2f}")

    # The whole public path: compiler.lower (parse, lower, emit, cc, load), then Kernel(**tensors),
    # which binds tensors, allocates the output and returns a Tensor.
    import compiler

    A = sp.random(4, 4, density=0.5, format="csr", random_state=0, dtype=np.float64)
    At, x = compiler.Tensor.from_scipy(A), np.ones(4)
    for strategy in compiler.strategies():
        t0 = time.perf_counter()
        k = compiler.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=At, x=x)
        first = time.perf_counter() - t0
        again = best(lambda: compiler.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=At, x=x), 1000)
        assert np.allclose(k(A=At, x=x).to_numpy(), A @ x)
        xt = compiler.Tensor.from_numpy(x, "dense")
        call = best(lambda: k(A=At, x=xt), 20_000)
        theirs = best(lambda: A @ x, 100_000)
        print(f"lower() {strategy:8s}: first call {first * 1e3:7.1f} ms (target < 1000 ms), "
              f"cached {again * 1e6:6.1f} us (target < 1000 us), "
              f"tiny call {call * 1e6:6.1f} us vs scipy {theirs * 1e6:5.2f} us (target < 20 us)")


if __name__ == "__main__":
    main()
