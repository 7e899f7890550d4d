"""Strided slices of a CSC's rows (issue 30), ``A_csc[::2]``, ``A_csc[::-1]``, ..., computed by the looplets
strategy into a CSC, against scipy's ``A[key]`` on the csc_matrix in the same run; ``--axis columns``
slices its columns instead, ``A_csc[:, ::2]``.

Rows: a 20000 x 2000 CSC (``--rows``, ``--cols``) at 1% and 10% density, sliced ``[::2]``, ``[1::3]``,
``[::-1]``, ``[::-2]``. Columns: ``compute``, ``xp.asarray(A)[key].compute(strategy="looplets",
format="csc")`` as a user calls it (the kernel from lower()'s cache, its arguments bound, the call, the
result wrapped; a route that materializes the slice does so here); ``kernel``, the lowered kernel's call
alone; ``scipy``, ``A[key]`` of the csc_matrix; and the ratios ``compute / scipy`` and ``kernel / scipy``.
The stages column says how the array front end lowered it (``retry``/``materialize`` if it did).

Each round times every column once, one after the other; each column keeps its minimum over the rounds.
Results are checked against scipy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_csc_row_slices.py --clock cpu [--rounds 10] [--axis columns]
        [--out csr]

Run it with PYTHONPATH at another checkout (main) for that tree's route: the ratios to scipy, taken in the
same run, compare across runs on a noisy machine.

Results (``--clock cpu``, min of 5 rounds, ms; two runs of this change and of main (46a0056) alternating on
a shared 2-core machine; ``before`` is one run of 2a48502^, whose looplets refused the slice and the array
front end retried and materialized it; ``compute / scipy`` in the same run):

    row          before  main (one-step loop)  stepped walk   scipy        stepped / scipy  main / scipy
    1% A[::2]    15.9    31.6 / 31.0           3.04 / 2.92    3.21 / 2.80  0.95x / 1.04x    10.5x / 10.4x
    1% A[1::3]   14.0    17.3 / 16.5           3.04 / 2.89    2.33 / 2.31  1.30x / 1.25x     7.3x /  7.0x
    1% A[::-1]   23.1    48.4 / 50.8           2.67 / 2.44    1.58 / 1.55  1.69x / 1.57x    29.5x / 29.6x
    1% A[::-2]   20.3    29.5 / 28.9           3.52 / 3.42    3.21 / 3.06  1.10x / 1.12x     9.2x /  9.6x
    10% A[::2]   150     64.4 / 62.3           20.1 / 19.8    25.8 / 25.1  0.78x / 0.79x     2.4x /  2.5x
    10% A[1::3]  132     48.1 / 46.1           19.6 / 18.8    21.3 / 20.3  0.92x / 0.93x     2.4x /  2.3x
    10% A[::-1]  167     99.7 / 98.5           20.5 / 20.8    11.6 / 11.4  1.76x / 1.82x     8.8x /  8.7x
    10% A[::-2]  176     78.4 / 78.0           22.1 / 22.1    25.4 / 25.7  0.87x / 0.86x     3.0x /  3.1x

The one-step loop sought every output row in every column (rows x columns); the walk visits each column's
stored entries once. Of the ``compute`` column about 1 ms is the call path (the kernel alone: 1.5-2.4 ms at
1%). ``A[::-1]`` stayed behind scipy's, which copies each column's arrays reversed without a filter; it now copies
each column as a block too (bench_scipy_gaps.py: 0.64x scipy's time at 10%).

Columns (``--axis columns --clock cpu --rounds 5``, ms, medians of three runs alternating with main
(fde955d), whose looplets refused the CSC output and whose array front end retried and materialized the
slice; its ``kernel`` column is then the copy of the materialized result, not comparable):

    column          main compute  compute  kernel  scipy  main compute / scipy  compute / scipy  kernel / scipy
    1% A[:, ::2]    16.2          1.07     0.22    0.26   26.7x                 4.3x             0.86x
    1% A[:, 1::3]   14.4          0.93     0.14    0.16   29.1x                 5.9x             0.86x
    1% A[:, ::-1]   26.0          1.71     0.62    0.64   28.1x                 2.7x             0.97x
    1% A[:, ::-2]   16.9          0.97     0.18    0.23   35.1x                 4.4x             0.81x
    10% A[:, ::2]   117           4.02     2.54    2.86   55.2x                 1.4x             0.93x
    10% A[:, 1::3]  98.2          2.96     1.70    1.89   68.0x                 1.7x             0.92x
    10% A[:, ::-1]  249           6.15     4.67    5.25   47.4x                 1.2x             0.92x
    10% A[:, ::-2]  154           3.78     2.38    2.74   55.1x                 1.4x             0.87x

The kept columns' loop runs outside the rows': each kept column's entries copied as a block, as scipy's
``A[:, key]`` does; the ``compute`` column's gap to scipy is the call path (about 0.8 ms), not the kernel.

A column window and a CSR result (``--axis columns --out csc|csr``; ``[1:-1]`` added; ms, medians of three runs
of this change (bb4c0ec, 5 rounds) alternating with two of main (4c1261a, 3 rounds); main gathered the window
(each column's rows searched for each row) and every CSR result; scipy's ``A[:, key].tocsr()`` for a CSR):

    into a CSC       compute  kernel  scipy  kernel / scipy  compute / scipy  main compute  main / scipy
    1% A[:, 1:-1]    1.43     0.26    0.75   0.35x           1.91x            586 / 546     119x / 113x
    10% A[:, 1:-1]   7.04     3.49    13.9   0.25x           0.57x            2352 / 2132   59x / 57x
    (the strided keys as above: kernel / scipy 0.73x-1.07x)

    into a CSR       compute  kernel  scipy  kernel / scipy  compute / scipy  main compute  main / scipy
    1% A[:, ::2]     2.59     0.81    1.15   0.70x           1.96x            271 / 259     214x / 142x
    1% A[:, 1::3]    1.60     0.41    0.56   0.73x           2.85x            168 / 159     170x / 151x
    1% A[:, ::-1]    4.66     3.20    3.27   0.99x           1.43x            690 / 609     87x / 87x
    1% A[:, ::-2]    2.37     0.90    1.23   0.80x           1.97x            275 / 248     173x / 152x
    1% A[:, 1:-1]    3.31     2.13    2.20   0.97x           1.51x            641 / 547     76x / 73x
    10% A[:, ::2]    15.6     14.3    16.2   0.88x           0.96x            889 / 837     38x / 15x
    10% A[:, 1::3]   10.5     9.23    10.7   0.87x           0.98x            484 / 448     42x / 43x
    10% A[:, ::-1]   35.2     30.2    38.4   0.79x           0.92x            2301 / 2188   16x / 15x
    10% A[:, ::-2]   15.0     13.8    15.7   0.88x           0.95x            809 / 824     37x / 34x
    10% A[:, 1:-1]   34.6     29.3    41.9   0.70x           0.83x            1967 / 2298   28x / 30x

The window's columns are walked and copied as blocks, as kept columns are; a CSR result is built by the
looplets' two-pass scatter (each kept column counted into its rows, then placed), as scipy's ``tocsr`` does
after its slice, fused with it. (scipy's own times were 2-7x slower in main's runs, after the gathers: the
ratios of main's rows are to those.)
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

KEYS = {"[::2]": np.s_[::2], "[1::3]": np.s_[1::3], "[::-1]": np.s_[::-1], "[::-2]": np.s_[::-2], "[1:-1]": np.s_[1:-1]}


def columns(A, key, out: str = "csc") -> tuple[dict, str]:
    """``({column: callable}, stages)`` for ``A[key]`` of the csc_matrix ``A`` into the format ``out``
    (scipy's ``A[key]``, then ``.tocsr()`` for a CSR)."""
    import compiler as ss
    from compiler import array as xp
    expr = xp.asarray(ss.Tensor.from_scipy(A, name="A"))[key]
    kernel = ss.lower(expr, strategy="looplets", format=out)
    stages = ",".join(s for s in ("retry", "materialize", "convert", "gather") if s in kernel.trace.stages())
    scatter = any("by a scatter" in s.note for s in kernel.trace.find("output-order"))
    return {"compute": lambda: expr.compute(strategy="looplets", format=out),
            "kernel": lambda: kernel(**kernel.arguments),
            "scipy": (lambda: A[key].tocsr()) if out == "csr" else (lambda: A[key])}, \
        stages or ("one kernel, scattered" if scatter else "one kernel")


def check(name: str, cols: dict, want) -> None:
    """Exit unless every column's result is scipy's."""
    for col, f in cols.items():
        got = f()
        got = got if sp.issparse(got) else got.to_scipy()
        if got.shape != want.shape or (got.tocsr() != want.tocsr()).nnz:
            raise SystemExit(f"{name}: {col} differs from scipy")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--cols", type=int, default=2_000)
    ap.add_argument("--densities", type=float, nargs="+", default=[0.01, 0.1])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    ap.add_argument("--axis", choices=["rows", "columns"], default="rows",
                    help="slice the rows (A[::2]) or the columns (A[:, ::2])")
    ap.add_argument("--out", choices=["csc", "csr"], default="csc",
                    help="the result's format (scipy: A[key], then .tocsr())")
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    print(f"{args.rows} x {args.cols} CSC into {args.out}, min of {args.rounds} rounds ({args.clock} clock), ms")
    rng = np.random.default_rng(0)
    for density in args.densities:
        A = sp.random(args.rows, args.cols, density=density, format="csc", random_state=rng, dtype=np.float64)
        A.sort_indices()
        for text, key in KEYS.items():
            if args.axis == "columns":
                text, key = f"[:, {text[1:-1]}]", (slice(None), key)
            name = f"{density:.0%} A{text}"
            cols, stages = columns(A, key, args.out)
            check(name, cols, A[key])
            ms = {col: t * 1e3 for col, t in timed(cols, args.rounds, clock).items()}
            print(f"{name:15s} " + "  ".join(f"{col} {ms[col]:7.2f}" for col in cols) +
                  f"  compute/scipy {ms['compute'] / ms['scipy']:5.2f}x"
                  f"  kernel/scipy {ms['kernel'] / ms['scipy']:5.2f}x"
                  f"  ({stages})", flush=True)


if __name__ == "__main__":
    main()
