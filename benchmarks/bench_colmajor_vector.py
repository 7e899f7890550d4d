"""A column-major flatten of a CSR matrix beside a sparse vector, ``A.T.reshape(-1) * x`` and ``+ x`` (issue 30),
against scipy and against main.

Rows (``A`` n x n CSR, ``x`` a sparse vector of ``n²`` entries, ``nnz`` nonzeros each), into a sparse vector:

- ``scipy``: ``A.tocsc()``, each entry's flat coordinate ``column·n + row`` computed by numpy (the column-major
  order scipy's CSC gives), a ``csr_array`` row of them, then its ``multiply(x)`` or ``+ x``;
- ``fused``: the lattice's one kernel (compiler.lattice.seqcolmajor: ``x`` re-sorted by row into sparse rows, a
  counting sort, walked beside ``A``'s rows; the entries counted per column, placed, appended); absent on main,
  which refused it;
- ``compute``: the array expression as a user computes it, ``(A.T.reshape(-1) * x).compute(format="sparse")``,
  lowering from the kernel cache included (on main: a retry, the flatten materialized, then a kernel).

Each round times every column once, one after the other; each column keeps its minimum over the rounds.
Results are checked against scipy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_colmajor_vector.py --clock cpu [--rounds 10] [--n 20000]

Results (``--clock cpu``, 20k x 20k, 1M nonzeros each, min of 10 rounds, ms; three runs alternating with the
same script on main at a load of 4 to 5 on 2 cores, median with the range in brackets):

    * x -> sparse vector   scipy 15.9 (15.8-17.0)   fused 21.6 (21.4-22.4)   compute 22.7 (22.3-23.4)
                           main: compute 41.2 (37.4-45.8)
    + x -> sparse vector   scipy 16.1 (15.5-16.2)   fused 28.9 (28.4-29.1)   compute 30.3 (29.8-30.4)
                           main: compute 42.9 (42.8-47.5)

One kernel is about twice as fast as main's materialized plan, and slower than scipy's: scipy sorts once (A by
column, then merges in ``m``'s order), the kernel twice (``x`` by row, then the result by column; its loops run in
A's order), and merges A with ``x`` in both passes of the result's counting sort.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from bench_colmajor import flat_coordinates  # noqa: E402
from bench_shape_order import CLOCK, matrix_arguments, timed  # noqa: E402


def flat_row(A):
    """``A.T.reshape(1, -1)`` as a scipy ``csr_array`` row, through ``A.tocsc()`` (its coordinates in order)."""
    m, v = flat_coordinates(A)
    return sp.csr_array((v, m, np.array([0, len(m)])), shape=(1, A.shape[0] * A.shape[1]))


def columns(A, x, op: str) -> dict:
    """The columns of one row: each a callable computing ``A.T.reshape(-1) op x`` into a sparse vector."""
    import compiler as ss
    from compiler import array as xp
    t = ss.Tensor.from_scipy(A, name="A")
    X = ss.Tensor.from_coords(x.indices[None, :].astype(np.int64), x.data, (x.shape[1],), "sparse")
    a, v = xp.asarray(t), xp.asarray(X)
    expr = (lambda: a.T.reshape(-1) * v) if op == "*" else (lambda: a.T.reshape(-1) + v)
    cols = {"scipy": (lambda: flat_row(A).multiply(x)) if op == "*" else (lambda: flat_row(A) + x)}
    kernel = expr().lower(strategy="lattice", format="sparse")
    if kernel.trace.find("materialize") == []:
        cols["fused"] = lambda: kernel(**kernel.arguments)
    cols["compute"] = lambda: expr().compute(format="sparse")
    return cols


def check(name: str, cols: dict) -> None:
    """Exit unless every column's entries are scipy's."""
    want = sp.csr_array(cols["scipy"]())
    want.sum_duplicates()
    want.eliminate_zeros()
    for col, f in cols.items():
        if col == "scipy":
            continue
        coords, vals = f().to_coords()
        keep = vals != 0
        if not (np.array_equal(coords[0][keep], want.indices) and np.array_equal(vals[keep], want.data)):
            raise SystemExit(f"{name}: {col} differs from scipy")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    matrix_arguments(ap)
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    rng = np.random.default_rng(0)
    n = args.n
    A = sp.random(n, n, density=args.nnz / n / n, format="csr", random_state=rng, dtype=np.float64)
    A.sort_indices()
    x = sp.csr_array(sp.random(1, n * n, density=args.nnz / n / n, format="csr", random_state=rng))
    x.sort_indices()
    for op in ("*", "+"):
        name = f"{op} x -> sparse vector"
        cols = columns(A, x, op)
        check(name, cols)
        best = timed(cols, args.rounds, clock)
        print(f"{name:22s} n={n:<6d} " + "  ".join(f"{col} {best[col] * 1e3:8.2f} ms" for col in cols), flush=True)


if __name__ == "__main__":
    main()
