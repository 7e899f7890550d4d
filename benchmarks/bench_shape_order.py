"""Loops in the inputs' storage order where the output's walks one against it (issue 30), against scipy and
against reading the inputs converted to the output's order first.

Rows (20k x 20k, 1M nonzeros by default; ``top``/``bottom`` the CSR halves of the rows, ``C`` the CSC):

- ``vstack csr -> csc``: ``sp.vstack([top, bottom]).tocsc()``; the lattice's kernel scattering the CSC
  (compiler.lattice.seqscatter); the inputs converted to CSC (``Tensor.asformat``, a counting sort each)
  and then stacked in order by the lattice's kernel for CSC inputs.
- ``column sums``: ``sp.vstack([top, bottom]).sum(axis=0)``; the lattice's kernel with the sum's loops
  around the columns' (compiler.lattice.seqhoist), into a dense vector and into a sparse one.
- ``C[:, ::-2] -> csr``: ``C[:, ::-2].tocsr()``; the lattice's scatter; ``C`` converted to CSR, then sliced
  (what the lattice did before).
- ``C[::-2] @ x``: scipy's; the lattice's sum around the output's loop (into a dense vector); ``C`` converted
  to CSR, then the row dot products (what it did before).

Each round times every column once, one after the other (a slow phase of the shared machine hits all of
a round); each column keeps its minimum over the rounds. Results are checked against scipy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_shape_order.py --clock cpu [--rounds 10] [--n 20000]

Results (``--clock cpu``, 20k x 20k, 1M nonzeros, min of 10 rounds, the median of three runs at a load of
11 to 14 on 2 cores; ms):

    vstack csr -> csc    scipy 6.29   scatter 6.32         converted 7.55
    column sums          scipy 1.82   hoisted dense 1.15   hoisted sparse 0.89
    C[:, ::-2] -> csr    scipy 3.51   scatter 5.16         converted 11.88
    C[::-2] @ x          scipy 7.30   hoisted 4.85         converted 8.11

The scatter does what scipy's ``tocsc`` does (count, prefix sum, place) without the stack before it, and
beats converting both inputs first (two counting sorts, then the stack); the kernels marked ``converted``
are what the lattice lowered before for the last two rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}


def rows(n: int, nnz: int):
    """``(name, {column: callable}, check)`` per row; each check compares a column's result with scipy's."""
    import compiler as ss
    from compiler import array as xp
    rng = np.random.default_rng(0)
    A = sp.random(n, n, density=nnz / n / n, format="csr", random_state=rng, dtype=np.float64)
    A.sort_indices()
    top, bottom = A[: n // 2].tocsr(), A[n // 2:].tocsr()
    C = A.tocsc()
    x = rng.standard_normal(n)
    T = ss.Tensor.from_scipy
    t, b, c = T(top, name="A"), T(bottom, name="B"), T(C, name="A")
    out = []

    stack = xp.concat([xp.asarray(t), xp.asarray(b)]).lower(strategy="lattice", format="csc")
    fmt = ss.Format(t.format.root, (1, 0))     # (CSC of the same index dtype)
    in_order = xp.concat([xp.asarray(t.asformat(fmt)), xp.asarray(b.asformat(fmt))]).lower(strategy="lattice",
                                                                                              format="csc")
    out.append(("vstack csr -> csc", {
        "scipy": lambda: sp.vstack([top, bottom]).tocsc(),
        "scatter": lambda: stack(**stack.arguments),
        "converted": lambda: in_order(A=t.asformat(fmt), B=b.asformat(fmt)),
    }, lambda r: sp.csc_matrix(r.to_scipy() if hasattr(r, "to_scipy") else r)))

    sums = xp.sum(xp.concat([xp.asarray(t), xp.asarray(b)]), axis=0)
    dense_sums, sparse_sums = sums.lower(strategy="lattice", format="dense"), sums.lower(strategy="lattice")
    out.append(("column sums", {
        "scipy": lambda: sp.vstack([top, bottom]).sum(axis=0),
        "hoisted dense": lambda: dense_sums(**dense_sums.arguments),
        "hoisted sparse": lambda: sparse_sums(**sparse_sums.arguments),
    }, lambda r: np.asarray(r.to_numpy() if hasattr(r, "to_numpy") else r).ravel()))

    sliced = xp.asarray(c)[:, ::-2].lower(strategy="lattice", format="csr")
    crs = c.asformat(ss.Format(c.format.root, (0, 1)))
    before = xp.asarray(crs)[:, ::-2].lower(strategy="lattice", format="csr")
    out.append(("C[:, ::-2] -> csr", {
        "scipy": lambda: C[:, ::-2].tocsr(),
        "scatter": lambda: sliced(**sliced.arguments),
        "converted": lambda: before(A=c.asformat(crs.format)),
    }, lambda r: sp.csr_matrix(r.to_scipy() if hasattr(r, "to_scipy") else r)))

    xs = ss.Tensor.from_numpy(x, "dense", name="B")
    spmv = (xp.asarray(c)[::-2] @ xp.asarray(xs)).lower(strategy="lattice", format="dense")
    spmv_before = (xp.asarray(crs)[::-2] @ xp.asarray(xs)).lower(strategy="lattice", format="dense")
    out.append(("C[::-2] @ x", {
        "scipy": lambda: C[::-2] @ x,
        "hoisted": lambda: spmv(**spmv.arguments),
        "converted": lambda: spmv_before(A=c.asformat(crs.format), B=xs),
    }, lambda r: np.asarray(r.to_numpy() if hasattr(r, "to_numpy") else r).ravel()))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    table = rows(args.n, args.nnz)
    for name, columns, as_ref in table:
        ref = as_ref(columns["scipy"]())
        for col, f in columns.items():
            got = as_ref(f())
            same = (abs(got - ref)).max() < 1e-9 if sp.issparse(got) else np.allclose(got, ref)
            if not same:
                raise SystemExit(f"{name}: {col} differs from scipy")
        best = {col: float("inf") for col in columns}
        for _ in range(args.rounds):
            for col, f in columns.items():
                t0 = clock()
                f()
                best[col] = min(best[col], clock() - t0)
        cells = "  ".join(f"{col} {best[col] * 1e3:7.2f} ms" for col in columns)
        print(f"{name:20s} {cells}", flush=True)


if __name__ == "__main__":
    main()
