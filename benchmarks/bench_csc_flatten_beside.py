"""A dense vector plus a CSC's row-major flatten, ``x + c_csc.reshape(-1)`` (issue 30), under the looplets,
against scipy in the same run.

Columns (``c`` an n x n CSC of ``--density``, ``x`` a dense vector of ``n²``; ``--beside csr``: ``x`` the flatten
of a CSR of that density, ``--beside self``: c's own again), into a dense vector:

- ``scipy``: ``c.reshape((1, n²)) + x``: the flatten converted (a COO of flat coordinates), then scipy's
  sparse-plus-dense, which copies ``x`` and adds the entries in (a scatter);
- ``numpy``: ``x + c.toarray().reshape(-1)``, for scale;
- ``looplets``: the looplets' one kernel of the array expression (``c`` walked column by column);
- ``compute`` (beside a matrix): the array expression computed whole, as a user calls it (main's kernel is the
  retry's, which read the flattens materialized at lower(): this column pays for them).

Each round times every column once, one after the other; each column keeps its minimum over the rounds.
Results are checked against numpy's. Run it in two checkouts in turn (this one and main) to compare.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_csc_flatten_beside.py --clock cpu [--rounds 10] [--n 2000] [--density 0.01]

Results (``--clock cpu``, 2000 x 2000 at 1% (40k entries), x of 4M, min of 10 rounds, ms, median of 5 runs
alternating with main, at a load of 10 to 12 on 2 cores):

    main     scipy 3.31   numpy  9.29   looplets 10.48   looplets/scipy 3.23
    branch   scipy 3.88   numpy 11.19   looplets  4.67   looplets/scipy 1.17

Main's kernel visited every coordinate column by column: ``x`` read and ``y`` written at ``k + j·n``, a stride of
``n`` through both (a cache miss each). The branch copies ``x`` into ``y`` in order, then adds ``c``'s stored
entries in, its fill runs skipped (compiler.looplets.flatten_passes): scipy's copy-then-scatter without the
flatten's conversion. What is left of the gap is the runtime's: it fills the output buffer before the call (a
write over ``n²`` values that the copy then overwrites), where scipy's copy is its only write.

The next stop left that buffer unfilled (the copy writes it whole) and lowered a flatten beside a sparse matrix's
flatten or c's own (main: refused, lower() retried with the flattens materialized). ``--rounds 5``, min of the
rounds, median of 3 runs alternating with main, at a load of 3 to 4 on 2 cores:

    --beside vector  main    scipy 2.53  looplets 3.16                   looplets/scipy 1.25
                     branch  scipy 2.52  looplets 2.21                   looplets/scipy 0.88
    --beside csr     main    scipy 4.48  looplets 2.92 (retry)  compute 10.73
                     branch  scipy 6.18  looplets 2.38          compute  3.44
    --beside self    main    scipy 5.74  looplets 2.68 (retry)  compute 13.09
                     branch  scipy 8.05  looplets 3.80          compute  5.08

Main's retried kernel read the flattens materialized at lower(), so its ``looplets`` column leaves them out; the
``compute`` column pays for them. ``c``'s own flatten copied first is written column by column, a stride of ``n``
through ``y`` over every coordinate: slower than the materialized kernel's call, faster whole.
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


def columns(c, x) -> dict:
    """The columns: each a callable computing ``x + c.reshape(-1)`` densely."""
    import compiler as ss
    from compiler import array as xp
    C, X = ss.Tensor.from_scipy(c, name="c"), ss.Tensor.from_numpy(x, "dense", name="x")
    kernel = (xp.asarray(X) + xp.asarray(C).reshape(-1)).lower("dense", strategy="looplets")
    stages = kernel.trace.stages()
    assert "materialize" not in stages and "gather" not in stages, stages
    n2 = x.shape[0]
    return {"scipy": lambda: c.reshape((1, n2)) + x[None, :],
            "numpy": lambda: x + c.toarray().reshape(-1),
            "looplets": lambda: kernel(**kernel.arguments)}


def matrix_columns(c, b) -> dict:
    """The columns beside a matrix: each a callable computing ``b.reshape(-1) + c.reshape(-1)`` (``b`` a
    sparse matrix, or ``c`` itself) densely. The looplets' kernel may be the lowering's retry, which
    materializes the flattens (main's; it says so): its call then reads them materialized at lower(), so
    ``compute`` times the array expression computed whole, the materialization with it."""
    import compiler as ss
    from compiler import array as xp
    C = ss.Tensor.from_scipy(c, name="c")
    B = C if b is c else ss.Tensor.from_scipy(b, name="b")
    def expr():
        return xp.asarray(B).reshape(-1) + xp.asarray(C).reshape(-1)
    kernel = expr().lower("dense", strategy="looplets")
    stages = kernel.trace.stages()
    print("looplets kernel: " + ", ".join(s for s in ("copy-scatter", "retry", "materialize", "gather") if s in stages),
          flush=True)
    n2 = c.shape[0] * c.shape[1]
    return {"scipy": lambda: (b.reshape((1, n2)) + c.reshape((1, n2))).toarray(),
            "numpy": lambda: b.toarray().reshape(-1) + c.toarray().reshape(-1),
            "looplets": lambda: kernel(**kernel.arguments),
            "compute": lambda: expr().compute("dense", strategy="looplets")}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    matrix_arguments(ap)
    ap.add_argument("--density", type=float, default=0.01, help="c's (its nnz; --nnz is not read)")
    ap.add_argument("--beside", choices=("vector", "csr", "self"), default="vector",
                    help="what c's flatten is added to: a dense vector (default), a CSR's flatten of c's density, "
                         "or c's own flatten again")
    ap.set_defaults(n=2000)
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    rng = np.random.default_rng(0)
    n = args.n
    c = sp.random(n, n, density=args.density, format="csc", random_state=rng, dtype=np.float64)
    c.sort_indices()
    if args.beside == "vector":
        x = rng.random(n * n)
        cols = columns(c, x)
        want = x + c.toarray().reshape(-1)
    else:
        b = c if args.beside == "self" else sp.random(n, n, density=args.density, format="csr", random_state=rng)
        cols = matrix_columns(c, b)
        want = b.toarray().reshape(-1) + c.toarray().reshape(-1)
    for name, f in cols.items():
        got = f()
        got = got.to_numpy() if hasattr(got, "to_numpy") else np.asarray(got).reshape(-1)
        if not np.array_equal(got, want):
            raise SystemExit(f"{name} differs from numpy")
    best = timed(cols, args.rounds, CLOCK[args.clock])
    print(f"n={n} density={args.density} " + "  ".join(f"{k} {t * 1e3:7.2f} ms" for k, t in best.items())
          + f"  looplets/scipy {best['looplets'] / best['scipy']:.2f}", flush=True)


if __name__ == "__main__":
    main()
