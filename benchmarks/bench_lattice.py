"""Lattice-strategy kernels side by side with scipy.sparse and pydata/sparse, on the same inputs.

Kernels (the issue's sizes): SpMV, CSR+CSR and CSR∘CSR into CSR on a 100k x 100k
matrix with 1M non-zeros, and SpGEMM on a 20k x 20k matrix with 100k non-zeros.
For each kernel the line shows the best time of:

* ``kernel``: the generated C called directly on the arrays (what the compiler controls);
* ``call``: the public ``Kernel(**tensors)`` call, which also builds and validates the
  result Tensor (the runtime's cost);
* scipy.sparse and pydata/sparse (``sparse.GCXS`` in CSR layout; COO where GCXS lacks it),

and the ratios ``kernel / scipy`` (<= 1.0: as fast as scipy or faster) and
``pydata / kernel`` (speed-up over pydata). Then SpMV's effective bandwidth next to
the machine's streaming bandwidth (a large numpy copy).

    .venv/bin/python benchmarks/bench_lattice.py [--small]
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from compiler import Tensor, binding, lower  # noqa: E402
from compiler.format import csr, dense  # noqa: E402


def best(f, repeat=7, min_time=0.2):
    """Best per-call time of ``f`` over ``repeat`` runs of enough calls to take ``min_time``."""
    f()
    t0 = time.perf_counter()
    f()
    one = time.perf_counter() - t0
    number = max(1, int(min_time / max(one, 1e-7)))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def random_csr(n, nnz, rng):
    rows = rng.integers(0, n, nnz)
    cols = rng.integers(0, n, nnz)
    m = sp.csr_matrix((rng.random(nnz) + 0.5, (rows, cols)), shape=(n, n))
    m.sum_duplicates()
    m.sort_indices()
    m.indices = m.indices.astype(np.int64)
    m.indptr = m.indptr.astype(np.int64)
    return m


def raw_caller(kernel, tensors):
    """Call the compiled C directly with the tensors' arrays (outputs allocated as the runtime does)."""
    low = kernel.lowered
    args = {}
    for name, t in tensors.items():
        args.update(binding.input_args(name, t))
    shape = kernel._output_shape(tensors)
    storage = tuple(shape[m] for m in low.output_format.mode_order)
    for m, n in enumerate(storage):
        args[binding.array_name(low.output, m, "size")] = n
    params = {p.name: p for p in low.function.params}
    inouts = {}
    for p in low.function.params:
        if getattr(p, "intent", None) == "inout":
            n = int(np.prod(storage)) if p.name.endswith("_val") else int(np.prod(storage[:1])) + 1
            inouts[p.name] = (n, p.dtype)
    call_args = {k: v for k, v in args.items() if k in params}
    fn = kernel.compiled

    def run():
        # like scipy, allocate a zeroed output (calloc); the runtime's pre-fill is in "call"
        for name, (n, dt) in inouts.items():
            call_args[name] = np.zeros(n, dtype=dt) if low.fill == 0 or not name.endswith("_val") \
                else np.full(n, low.fill, dtype=dt)
        return fn(**call_args)
    return run


def row(name, kernel_t, call_t, scipy_t, pydata_t):
    ratio = kernel_t / scipy_t
    speedup = pydata_t / kernel_t if pydata_t else float("nan")
    pd = f"{pydata_t * 1e3:9.2f} ms" if pydata_t else "        -   "
    print(f"{name:22s} kernel {kernel_t * 1e3:8.2f} ms  call {call_t * 1e3:8.2f} ms  "
          f"scipy {scipy_t * 1e3:8.2f} ms  pydata {pd}  kernel/scipy {ratio:5.2f}  "
          f"pydata/kernel {speedup:6.1f}x")


def main(small=False):
    import sparse as pydata
    rng = np.random.default_rng(0)
    n, nnz = (10_000, 100_000) if small else (100_000, 1_000_000)
    gn, gnnz = (4_000, 20_000) if small else (20_000, 100_000)
    A = random_csr(n, nnz, rng)
    B = random_csr(n, nnz, rng)
    x = rng.random(n)
    At, Bt = Tensor.from_scipy(A, csr(), name="A"), Tensor.from_scipy(B, csr(), name="B")
    xt = Tensor.from_numpy(x, dense(1), name="x")
    Ap, Bp = pydata.GCXS.from_scipy_sparse(A), pydata.GCXS.from_scipy_sparse(B)
    Ac, Bc = pydata.COO.from_scipy_sparse(A), pydata.COO.from_scipy_sparse(B)
    print(f"inputs: {n} x {n}, {A.nnz} and {B.nnz} non-zeros; SpGEMM {gn} x {gn}, {gnnz} non-zeros")

    # SpMV
    k = lower("y[i] = A[i, j] * x[j]", A=At, x=xt)
    np.testing.assert_allclose(k(A=At, x=xt).to_numpy(), A @ x)
    kt = best(raw_caller(k, {"A": At, "x": xt}))
    ct = best(lambda: k(A=At, x=xt))
    st = best(lambda: A @ x)
    pt = best(lambda: Ap @ x, repeat=3)
    row("SpMV (CSR)", kt, ct, st, pt)
    spmv_kernel_t = kt

    # CSR + CSR and CSR ∘ CSR into CSR
    for prog, ref, pyd in (("C[i, j] = A[i, j] + B[i, j]", lambda: A + B, lambda: Ac + Bc),
                           ("C[i, j] = A[i, j] * B[i, j]", lambda: A.multiply(B), lambda: Ac * Bc)):
        k = lower(prog, A=At, B=Bt, C=csr())
        got, want = k(A=At, B=Bt), ref().tocsr()
        want.sort_indices()
        np.testing.assert_array_equal(got.levels[1].pos, want.indptr)
        np.testing.assert_array_equal(got.levels[1].idx, want.indices)
        np.testing.assert_allclose(got.vals, want.data)
        kt = best(raw_caller(k, {"A": At, "B": Bt}))
        ct = best(lambda: k(A=At, B=Bt))
        st = best(ref)
        pt = best(pyd, repeat=3)
        row("CSR+CSR" if "+" in prog else "CSR∘CSR", kt, ct, st, pt)

    # SpGEMM through a dense workspace
    G = random_csr(gn, gnnz, rng)
    H = random_csr(gn, gnnz, rng)
    Gt, Ht = Tensor.from_scipy(G, csr(), name="A"), Tensor.from_scipy(H, csr(), name="B")
    try:
        k = lower("C[i, j] = A[i, k] * B[k, j]", A=Gt, B=Ht, C=csr())
    except Exception as e:  # noqa: BLE001
        print(f"{'SpGEMM':22s} not available: {e}")
    else:
        got = k(A=Gt, B=Ht)
        ref = G @ H
        assert got.nnz == ref.nnz
        np.testing.assert_allclose(got.to_scipy("csr").data, ref.data)
        Gp, Hp = pydata.GCXS.from_scipy_sparse(G), pydata.GCXS.from_scipy_sparse(H)
        kt = best(raw_caller(k, {"A": Gt, "B": Ht}))
        ct = best(lambda: k(A=Gt, B=Ht))
        st = best(lambda: G @ H)
        pt = best(lambda: Gp @ Hp, repeat=3)
        row("SpGEMM (workspace)", kt, ct, st, pt)

    # bandwidth
    big = np.ones(64 * 2 ** 20 // 8 * 4)  # 256 MB
    out = np.empty_like(big)
    copy_t = best(lambda: np.copyto(out, big), repeat=5)
    stream = 2 * big.nbytes / copy_t
    spmv_bytes = (A.indptr.nbytes + A.indices.nbytes + A.data.nbytes + x.nbytes + n * 8)
    print(f"SpMV effective bandwidth {spmv_bytes / spmv_kernel_t / 1e9:6.2f} GB/s "
          f"(bytes = pos + idx + vals + x + y = {spmv_bytes / 1e6:.1f} MB); "
          f"streaming bandwidth (numpy copy, read + write) {stream / 1e9:6.2f} GB/s")


if __name__ == "__main__":
    main(small="--small" in sys.argv)
