"""hstack and stack(axis=1) of ``n`` COO matrices into CSR (issue 30), whose lattice loop over the union of the
parts' rows had ``2^n - 1`` points (compiler.lattice.seqmerge merges it into one loop), against scipy.sparse.

Columns, per ``n``: the lattice's lowering time and lines of C (once, cold), then per kernel the minimum over the
rounds (ms) of scipy's ``sp.hstack(parts, format="csr")`` (for the stack along axis 1 raveled to rows x n*cols
too) and of the lattice's kernel, and the ratio scipy / lattice. The kernels' results are checked against scipy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_merged_union.py [--rows 20000] [--cols 4000] [--density 0.001]

Results (20000 x 4000 parts, 0.1%: 80k entries each, min of 5 rounds, on the shared 2-core machine while the test
suite ran on the other core; the stack raveled is the hstack's kernel, cached):

    n=3 hstack  lower 0.45 s     362 lines  scipy 1.70 ms  lattice 1.37 ms  1.24x
    n=4 hstack  lower 0.14 s     451 lines  scipy 2.15 ms  lattice 2.15 ms  1.00x
    n=6 hstack  lower 0.07 s     629 lines  scipy 3.46 ms  lattice 3.09 ms  1.12x
    n=3 stack   lower 0.02 s     362 lines  scipy 1.63 ms  lattice 1.48 ms  1.10x
    n=4 stack   lower 0.00 s     451 lines  scipy 2.26 ms  lattice 2.06 ms  1.10x

Before the merge (the lattice's 2^n - 1 points), hstack of COO into COO lowered in 1.9 s (n=3, 2,064 lines), 10.9 s
(n=5, 28,162 lines) and 90 s (n=6, 100,083 lines).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scipy.sparse as sp  # noqa: E402

from compiler import Tensor, array as xp  # noqa: E402


def best(fn, rounds: int) -> float:
    """The minimum over ``rounds`` calls of ``fn``, in ms."""
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e3)
    return min(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--cols", type=int, default=4000)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, nargs="*", default=[3, 4, 6])
    args = ap.parse_args(argv)
    for kind in ("hstack", "stack"):
        for n in args.n:
            parts = [sp.random(args.rows, args.cols, args.density, format="coo", random_state=k) for k in range(n)]
            for p in parts:
                p.sum_duplicates()
            arrays = [xp.asarray(Tensor.from_scipy(p, "coo")) for p in parts]
            if kind == "hstack":
                expr = xp.concat(arrays, axis=1)

                def scipy_way():
                    return sp.hstack(parts, format="csr")
            else:
                # (row i of the stack along axis 1, raveled, is each part's row i in turn: scipy's hstack)
                expr = xp.reshape(xp.stack(arrays, axis=1), (args.rows, n * args.cols))

                def scipy_way():
                    return sp.hstack(parts, format="csr")
            t = time.perf_counter()
            kernel = expr.lower("csr", strategy="lattice")
            lowering = time.perf_counter() - t
            want = scipy_way()
            got = kernel().to_scipy()
            assert (abs(got - want) > 0).nnz == 0 and got.nnz == want.nnz, (kind, n)
            s, k = best(scipy_way, args.rounds), best(kernel, args.rounds)
            print(f"n={n} {kind:6}  lower {lowering:.2f} s  {len(kernel.c_source.splitlines()):6} lines  "
                  f"scipy {s:.2f} ms  lattice {k:.2f} ms  {s / k:.2f}x", flush=True)


if __name__ == "__main__":
    main()
