"""A dense vector plus a CSC's row-major flatten, ``x + c_csc.reshape(-1)`` (issue 30), under the looplets,
against scipy in the same run.

Columns (``c`` an n x n CSC of ``--density``, ``x`` a dense vector of ``n²``), into a dense vector:

- ``scipy``: ``c.reshape((1, n²)) + x``: the flatten converted (a COO of flat coordinates), then scipy's
  sparse-plus-dense, which copies ``x`` and adds the entries in (a scatter);
- ``numpy``: ``x + c.toarray().reshape(-1)``, for scale;
- ``looplets``: the looplets' one kernel of the array expression (``c`` walked column by column).

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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    matrix_arguments(ap)
    ap.add_argument("--density", type=float, default=0.01, help="c's (its nnz; --nnz is not read)")
    ap.set_defaults(n=2000)
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    rng = np.random.default_rng(0)
    n = args.n
    c = sp.random(n, n, density=args.density, format="csc", random_state=rng, dtype=np.float64)
    c.sort_indices()
    x = rng.random(n * n)
    cols = columns(c, x)
    want = x + c.toarray().reshape(-1)
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
