"""Strided slices of a CSC's rows (issue 30), ``A_csc[::2]``, ``A_csc[::-1]``, ..., computed by the looplets
strategy into a CSC, against scipy's ``A[key]`` on the csc_matrix in the same run.

Rows: a 20000 x 2000 CSC (``--rows``, ``--cols``) at 1% and 10% density, sliced ``[::2]``, ``[1::3]``,
``[::-1]``, ``[::-2]``. Columns: ``compute``, ``xp.asarray(A)[key].compute(strategy="looplets",
format="csc")`` as a user calls it (the kernel from lower()'s cache, its arguments bound, the call, the
result wrapped; a route that materializes the slice does so here); ``kernel``, the lowered kernel's call
alone; ``scipy``, ``A[key]`` of the csc_matrix; and the ratios ``compute / scipy`` and ``kernel / scipy``.
The stages column says how the array front end lowered it (``retry``/``materialize`` if it did).

Each round times every column once, one after the other; each column keeps its minimum over the rounds.
Results are checked against scipy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_csc_row_slices.py --clock cpu [--rounds 10]

Run it with PYTHONPATH at another checkout (main) for that tree's route: the ratios to scipy, taken in the
same run, compare across runs on a noisy machine.
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
from bench_shape_order import CLOCK, timed  # noqa: E402

KEYS = {"[::2]": np.s_[::2], "[1::3]": np.s_[1::3], "[::-1]": np.s_[::-1], "[::-2]": np.s_[::-2]}


def columns(A, key) -> tuple[dict, str]:
    """``({column: callable}, stages)`` for ``A[key]`` of the csc_matrix ``A``."""
    import compiler as ss
    from compiler import array as xp
    expr = xp.asarray(ss.Tensor.from_scipy(A, name="A"))[key]
    kernel = ss.lower(expr, strategy="looplets", format="csc")
    stages = ",".join(s for s in ("retry", "materialize", "convert") if s in kernel.trace.stages()) or "one kernel"
    return {"compute": lambda: expr.compute(strategy="looplets", format="csc"),
            "kernel": lambda: kernel(**kernel.arguments),
            "scipy": lambda: A[key]}, stages


def check(name: str, cols: dict, want) -> None:
    """Exit unless every column's result is scipy's."""
    for col, f in cols.items():
        got = f()
        got = got if sp.issparse(got) else got.to_scipy()
        if got.shape != want.shape or (got != want).nnz:
            raise SystemExit(f"{name}: {col} differs from scipy")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--cols", type=int, default=2_000)
    ap.add_argument("--densities", type=float, nargs="+", default=[0.01, 0.1])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    print(f"{args.rows} x {args.cols} CSC, min of {args.rounds} rounds ({args.clock} clock), ms")
    rng = np.random.default_rng(0)
    for density in args.densities:
        A = sp.random(args.rows, args.cols, density=density, format="csc", random_state=rng, dtype=np.float64)
        A.sort_indices()
        for text, key in KEYS.items():
            name = f"{density:.0%} A{text}"
            cols, stages = columns(A, key)
            check(name, cols, A[key])
            ms = {col: t * 1e3 for col, t in timed(cols, args.rounds, clock).items()}
            print(f"{name:12s} " + "  ".join(f"{col} {ms[col]:7.2f}" for col in cols) +
                  f"  compute/scipy {ms['compute'] / ms['scipy']:5.2f}x"
                  f"  kernel/scipy {ms['kernel'] / ms['scipy']:5.2f}x"
                  f"  ({stages})", flush=True)


if __name__ == "__main__":
    main()
