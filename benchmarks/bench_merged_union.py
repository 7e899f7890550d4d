"""hstack and stack(axis=1) of ``n`` COO matrices into CSR (issue 30), whose lattice loop over the union of the
parts' rows had ``2^n - 1`` points (compiler.lattice.seqmerge merges it into one loop), and the looplets' product of
the parts' row walks (compiler.looplets.merged_walks merges them), against scipy.sparse.

Per ``n`` and kind: scipy's ``sp.hstack(parts, format="csr")`` (for the stack along axis 1 raveled to rows x n*cols
too), then for each strategy its lowering time and lines of C (once, cold), its kernel's time and the ratio scipy /
kernel; each time the minimum over the rounds (ms). "mixed" alternates COO and CSR parts (a CSR part's rows are
dense: the looplets walk only the COO parts' rows). The kernels' results are checked against scipy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_merged_union.py [--rows 20000] [--cols 4000] [--density 0.001]

Results (20000 x 4000 parts, 0.1%: 80k entries each, min of 5 rounds, on the shared 2-core machine, freed memory
reused (:func:`reuse_freed_memory`); the stack raveled is the hstack's kernel, cached):

    n=3 hstack  scipy 1.66 ms | lattice 362 lines 1.35 ms 1.22x | looplets 331 lines 1.13 ms 1.46x
    n=4 hstack  scipy 2.21 ms | lattice 451 lines 2.05 ms 1.08x | looplets 408 lines 1.78 ms 1.24x
    n=6 hstack  scipy 3.41 ms | lattice 629 lines 3.12 ms 1.09x | looplets 562 lines 2.81 ms 1.21x
    n=3 mixed   scipy 1.84 ms | lattice 346 lines 1.18 ms 1.56x | looplets 431 lines 1.06 ms 1.73x
    n=4 mixed   scipy 2.63 ms | lattice 419 lines 1.55 ms 1.69x | looplets 592 lines 1.45 ms 1.81x
    n=6 mixed   scipy 3.96 ms | lattice 581 lines 2.53 ms 1.56x | looplets 830 lines 2.24 ms 1.76x
    n=3 stack   scipy 1.67 ms | lattice 362 lines 1.38 ms 1.22x | looplets 331 lines 1.17 ms 1.43x
    n=6 stack   scipy 3.40 ms | lattice 629 lines 3.14 ms 1.08x | looplets 562 lines 2.79 ms 1.22x

Before the lattice's merge (its 2^n - 1 points), hstack of COO into COO lowered in 1.9 s (n=3, 2,064 lines), 10.9 s
(n=5, 28,162 lines) and 90 s (n=6, 100,083 lines). Before the looplets merged the walks of a concatenation's parts
(merged_walks.walks_of_parts), "mixed" kept the product of its two COO walks' phases: n=3 1,288 lines, 1.13 ms;
n=4 2,021 lines, 1.51 ms (the merged loop 1.07 and 1.43 ms in the same session).
"""

from __future__ import annotations

import argparse
import ctypes
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


def reuse_freed_memory() -> None:
    """glibc's malloc set to keep freed memory for the next call (up to 32 MB a block, never given back): a fresh
    process's first ``sp.hstack`` of three parts took 2.8 ms a call, each output's pages faulted in anew, where
    the same call took 1.7 ms once the allocator had raised its mmap threshold (bench_shape.py's docstring saw the
    same). Both sides then run in the second regime from the first row on. Elsewhere than glibc: nothing."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(-3, 32 << 20)   # M_MMAP_THRESHOLD
    libc.mallopt(-1, 1 << 30)    # M_TRIM_THRESHOLD


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--cols", type=int, default=4000)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, nargs="*", default=[3, 4, 6])
    args = ap.parse_args(argv)
    reuse_freed_memory()
    for kind in ("hstack", "mixed", "stack"):
        for n in args.n:
            parts = [sp.random(args.rows, args.cols, args.density, format="coo", random_state=k) for k in range(n)]
            for p in parts:
                p.sum_duplicates()
            # ("mixed": every other part CSR, whose rows are dense: the looplets walk only the COO parts' rows)
            fmts = ["csr" if kind == "mixed" and k % 2 else "coo" for k in range(n)]
            parts = [p.tocsr() if f == "csr" else p for p, f in zip(parts, fmts)]
            arrays = [xp.asarray(Tensor.from_scipy(p, f)) for p, f in zip(parts, fmts)]
            if kind in ("hstack", "mixed"):
                expr = xp.concat(arrays, axis=1)

                def scipy_way():
                    return sp.hstack(parts, format="csr")
            else:
                # (row i of the stack along axis 1, raveled, is each part's row i in turn: scipy's hstack)
                expr = xp.reshape(xp.stack(arrays, axis=1), (args.rows, n * args.cols))

                def scipy_way():
                    return sp.hstack(parts, format="csr")
            want = scipy_way()
            s = best(scipy_way, args.rounds)
            line = f"n={n} {kind:6}  scipy {s:6.2f} ms"
            for strategy in ("lattice", "looplets"):
                t = time.perf_counter()
                kernel = expr.lower("csr", strategy=strategy)
                lowering = time.perf_counter() - t
                got = kernel().to_scipy()
                assert (abs(got - want) > 0).nnz == 0 and got.nnz == want.nnz, (kind, n, strategy)
                k = best(kernel, args.rounds)
                line += (f"  | {strategy} lower {lowering:5.2f} s {len(kernel.c_source.splitlines()):5} lines "
                         f"{k:6.2f} ms {s / k:5.2f}x")
            print(line, flush=True)

if __name__ == "__main__":
    main()
