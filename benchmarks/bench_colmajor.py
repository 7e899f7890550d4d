"""A column-major flatten of a CSR matrix, numpy's ``A.T.reshape(-1)`` (issue 30), against scipy and against
main's materialized pipeline.

Rows (``A`` n x n CSR, ``nnz`` nonzeros):

- ``-> sparse vector``: ``scipy reshape``, ``A.T.tocsr().reshape(1, -1)`` (the transpose converted to CSR, then
  scipy's reshape, through COO); ``scipy tocsc``, ``A.tocsc()`` and each entry's flat coordinate
  ``column·n + row`` computed by numpy (the least scipy can do); ``fused``, the lattice's one kernel
  (compiler.lattice.seqcolmajor: A's entries counted per column, placed, then appended); ``materialized``,
  what main ran for the array expression: ``permute_dims`` by its own lattice kernel into a CSR (a scatter),
  the reshape on its stored entries (compiler.array.shapeops), then the kernel copying that vector.
- ``-> dense`` (``--dense-n``, default 4000, the same nnz: a 20k x 20k dense result would take 3.2 GB):
  ``numpy``, ``A.toarray().T.reshape(-1)``; ``fused``, the lattice's kernel writing each entry at its place;
  ``materialized``, main's pipeline into a dense output.

Each round times every column once, one after the other; each column keeps its minimum over the rounds.
Results are checked against scipy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_colmajor.py --clock cpu [--rounds 10] [--n 20000]

Results (``--clock cpu``, min of 10 rounds, ms; three runs at a load of 17 on 2 cores, median first):

    -> sparse vector (20k x 20k, 1M nonzeros)  scipy reshape 9.67 (9.38-9.78)  scipy tocsc 7.42 (7.41-7.59)
                                               fused 6.13 (5.87-6.68)          materialized 36.6 (35.7-42.2)
    -> dense (4k x 4k, 1M nonzeros)            numpy 34.7 (33.8-37.0)          fused 11.4 (10.7-11.6)
                                               materialized 49.4 (47.8-50.7)

The array expression as a user computes it (``A.T.reshape(-1).compute(format="sparse")``, lowering from the
kernel cache included, min of 7, two runs alternating): main 46.1 / 36.1 ms, one kernel 8.3 / 8.3 ms.
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
from bench_shape_order import CLOCK, matrix_arguments, timed  # noqa: E402


def flat_coordinates(A):
    """``A``'s entries in column-major order: their flat coordinates ``column·n + row`` and values."""
    C = A.tocsc()
    cols = np.repeat(np.arange(C.shape[1], dtype=np.int64), np.diff(C.indptr))
    return cols * C.shape[0] + C.indices, C.data


def columns(A, out: str) -> dict:
    """The columns of one row: each a callable computing ``A.T.reshape(-1)`` into ``out`` (sparse or dense)."""
    import compiler as ss
    from compiler import array as xp
    from compiler.array.shapeops import reshape_tensor
    n = A.shape[0]
    t = ss.Tensor.from_scipy(A, name="A")
    fused = xp.asarray(t).T.reshape(-1).lower(strategy="lattice", format=out)
    assert fused.trace.find("materialize") == [], "the flatten was materialized"
    transpose = ss.lower("o[i, j] = A[j, i]", strategy="lattice", A=t, o=ss.parse_format("csr", ndim=2))
    vector = reshape_tensor(transpose(A=t), (n * n,))
    copy = ss.lower("out[i] = A[i]", strategy="lattice", A=vector, out=ss.parse_format(out, ndim=1))
    cols = {"scipy reshape": lambda: A.T.tocsr().reshape(1, -1), "scipy tocsc": lambda: flat_coordinates(A)} \
        if out == "sparse" else {"numpy": lambda: A.toarray().T.reshape(-1)}
    cols["fused"] = lambda: fused(**fused.arguments)
    cols["materialized"] = lambda: copy(A=reshape_tensor(transpose(A=t), (n * n,)))
    return cols


def dense_of(r, size: int) -> np.ndarray:
    """A column's result as a dense vector (a scipy row, flat coordinates and values, or a Tensor)."""
    if isinstance(r, tuple):
        out = np.zeros(size)
        out[r[0]] = r[1]
        return out
    if sp.issparse(r):
        return np.asarray(r.todense()).ravel()
    return np.asarray(r.to_numpy() if hasattr(r, "to_numpy") else r).ravel()


def check(name: str, cols: dict, A, out: str) -> None:
    """Exit unless the kernels' results are scipy's (a sparse vector: its entries in order, the flat
    coordinates scipy's CSC gives) or numpy's (a dense one, where it is at most 10**8 long)."""
    n = A.shape[0]
    if out == "sparse":
        want = flat_coordinates(A)
        wrong = [col for col in ("fused", "materialized") if not all(
            np.array_equal(got, w) for got, w in zip(cols[col]().to_coords(), (want[0][None, :], want[1])))]
    else:
        ref = dense_of(cols["numpy"](), n * n) if n * n <= 10**8 else None
        wrong = [col for col, f in cols.items() if ref is not None and not np.array_equal(dense_of(f(), n * n), ref)]
    if wrong:
        raise SystemExit(f"{name}: {', '.join(wrong)} differ(s) from {'scipy' if out == 'sparse' else 'numpy'}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    matrix_arguments(ap)
    ap.add_argument("--dense-n", type=int, default=4_000)
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    rng = np.random.default_rng(0)
    for name, n, out in (("-> sparse vector", args.n, "sparse"), ("-> dense", args.dense_n, "dense")):
        A = sp.random(n, n, density=args.nnz / n / n, format="csr", random_state=rng, dtype=np.float64)
        A.sort_indices()
        cols = columns(A, out)
        check(name, cols, A, out)
        best = timed(cols, args.rounds, clock)
        print(f"{name:17s} n={n:<6d} " + "  ".join(f"{col} {best[col] * 1e3:8.2f} ms" for col in cols), flush=True)

if __name__ == "__main__":
    main()
