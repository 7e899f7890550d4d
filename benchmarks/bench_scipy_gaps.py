"""The two kernels last measured behind scipy (issue 30), side by side with scipy and a hand-written C bound:
``A.T.reshape(-1) + x`` and ``* x`` (a CSR ``A`` flattened column-major beside a sparse vector ``x``, the lattice's
one kernel, compiler.lattice.seqcolmajor) and ``A_csc[::-1]`` into a CSC (the looplets' walk of each column,
compiler.looplets.stepped).

Columns: ``scipy`` (bench_colmajor_vector's ``A.tocsc()`` flat row ``+ x`` / ``.multiply(x)``; ``A[::-1]`` of the
csc_matrix), ``kernel`` (the lowered kernel's call: bench_colmajor_vector's ``fused``), ``compute`` (the array
expression as a user computes it) and, for the flatten, ``bound``: :data:`BOUND_C`, the fewest passes (count each
column's entries, place each entry at its column's next slot, then one merge of the placed entries, their flat
coordinates computed column by column, with ``x``), writing into numpy arrays allocated in the timed call, every
entry stored (scipy's ``+`` drops a sum that is 0, as the bound does; the operands store none).

Each round times every column once, one after the other; each column reports its median over the rounds, and
the ratios to scipy's of the same run. Results are checked against scipy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_scipy_gaps.py --clock cpu [--rounds 21] [--only flat|reverse]
        [--tree /path/to/another/checkout]

Results (``--clock cpu``, medians of 21 rounds; the flatten 20k x 20k, 1M nonzeros in A and x; the slice
20000 x 2000 at 1% and 10%; three runs of this change (b01ac25, 2a10186) and of main (fde955d, ``--tree``)
alternating, at a load of 10 to 11 on a shared 2-core machine; each cell the median of the three runs' ratios to
the scipy of the same run):

    row                   kernel/scipy main   this     compute/scipy main   this    bound/scipy
    A.T.reshape(-1) + x   1.17                0.88     1.25                 0.96    0.88
    A.T.reshape(-1) * x   0.87                0.83     0.94                 0.91    0.81
    1% A_csc[::-1]        0.93                0.81     1.69                 1.48
    10% A_csc[::-1]       1.75                0.64     1.85                 0.74

``+ x``: the merge of the flatten's re-sorted columns with ``x`` checked each append for room (two tests, and the
buffers' pointers reloaded after each possible growth, which kept the loop from holding them in registers): 5 of
its 22 ms, though the room for every entry was reserved up front. The loops around the store walk stored entries
only, so the entries never pass that room: it is grown for sure and the checks are gone; the kernel is at the
bound (count, place, one merge). ``A_csc[::-1]``: the stepped walk's step per entry (its stop, a test, no block
copy) and an output grown by doubling; now the column's positions are counted down (no test per entry), each
column of 8 entries or more copied as a block, reversed, and room for all of ``A``'s entries reserved.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}

#: the bound of the column-major flatten beside x: int32 indices in and out (the operands are scipy's)
BOUND_C = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* c = A.T.reshape(-1) op x (op: 0 is +, 1 is *) for an n x n CSR A: A's entries counted per column, placed at
 * their column's next slot (rows in order), then merged with x by the flat coordinate j * n + i. Returns the
 * entries written, or -1 when out of memory. */
int64_t colmajor_flat(int64_t n, const int32_t *pos, const int32_t *idx, const double *val, int64_t nx,
                      const int32_t *xi, const double *xv, int op, int32_t *oi, double *ov)
{
    int64_t nnz = pos[n], q = 0, px = 0;
    int64_t *start = calloc(n + 1, sizeof *start);
    int64_t *next = malloc((n > 0 ? n : 1) * sizeof *next);
    int32_t *wi = malloc((nnz > 0 ? nnz : 1) * sizeof *wi);
    double *wv = malloc((nnz > 0 ? nnz : 1) * sizeof *wv);
    if (!start || !next || !wi || !wv) {
        free(start); free(next); free(wi); free(wv);
        return -1;
    }
    for (int64_t p = 0; p < nnz; p++)
        start[idx[p] + 1]++;
    for (int64_t j = 0; j < n; j++)
        start[j + 1] += start[j];
    memcpy(next, start, n * sizeof *next);
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = pos[i]; p < pos[i + 1]; p++) {
            int64_t t = next[idx[p]]++;
            wi[t] = (int32_t)i;
            wv[t] = val[p];
        }
    for (int64_t j = 0; j < n; j++)
        for (int64_t t = start[j]; t < start[j + 1]; t++) {
            int64_t m = j * n + wi[t];
            if (op == 0)
                for (; px < nx && xi[px] < m; px++, q++) {
                    oi[q] = xi[px];
                    ov[q] = xv[px];
                }
            else
                while (px < nx && xi[px] < m)
                    px++;
            if (px < nx && xi[px] == m) {
                oi[q] = (int32_t)m;
                ov[q] = op == 0 ? wv[t] + xv[px] : wv[t] * xv[px];
                q += ov[q] != 0.0;
                px++;
            } else if (op == 0) {
                oi[q] = (int32_t)m;
                ov[q++] = wv[t];
            }
        }
    for (; op == 0 && px < nx; px++, q++) {
        oi[q] = xi[px];
        ov[q] = xv[px];
    }
    free(start); free(next); free(wi); free(wv);
    return q;
}
"""


def flat_rows(n: int, nnz: int) -> list:
    """``(name, columns, want)`` of ``A.T.reshape(-1) + x`` and ``* x``: each column a callable returning the result
    as a scipy row (or what converts to one)."""
    import numpy as np
    import scipy.sparse as sp
    from bench_colmajor_vector import columns as flat_columns
    from bench_colmajor_vector import flat_row
    from compiler.backend.build import build_library, load_library
    path, _ = build_library(BOUND_C, name="scipy_gaps_bound")
    ffi, lib = load_library(path, "int64_t colmajor_flat(int64_t n, const int32_t *pos, const int32_t *idx, "
                                  "const double *val, int64_t nx, const int32_t *xi, const double *xv, int op, "
                                  "int32_t *oi, double *ov);")
    rng = np.random.default_rng(0)
    A = sp.random(n, n, density=nnz / n / n, format="csr", random_state=rng, dtype=np.float64)
    A.sort_indices()
    x = sp.csr_array(sp.random(1, n * n, density=nnz / n / n, format="csr", random_state=rng))
    x.sort_indices()

    def bound(op):
        def run():
            oi, ov = np.empty(A.nnz + x.nnz, np.int32), np.empty(A.nnz + x.nnz)
            q = lib.colmajor_flat(n, ffi.from_buffer("int32_t[]", A.indptr), ffi.from_buffer("int32_t[]", A.indices),
                                  ffi.from_buffer("double[]", A.data), x.nnz, ffi.from_buffer("int32_t[]", x.indices),
                                  ffi.from_buffer("double[]", x.data), op, ffi.from_buffer("int32_t[]", oi),
                                  ffi.from_buffer("double[]", ov))
            if q < 0:
                raise MemoryError("the bound's scratch arrays")
            return sp.csr_array((ov[:q], oi[:q], np.array([0, q])), shape=(1, n * n))
        return run

    out = []
    for op, code in (("+", 0), ("*", 1)):
        cols = flat_columns(A, x, op)
        cols = {"scipy": cols["scipy"], "kernel": cols["fused"], "compute": cols["compute"], "bound": bound(code)}
        want = flat_row(A) + x if op == "+" else flat_row(A).multiply(x)
        out.append((f"A.T.reshape(-1) {op} x", cols, want))
    return out


def reverse_rows(rows: int, cols: int) -> list:
    """``(name, columns, want)`` of ``A_csc[::-1]`` at 1% and 10%."""
    import numpy as np
    import scipy.sparse as sp
    from bench_csc_row_slices import columns as slice_columns
    rng = np.random.default_rng(0)
    out = []
    for density in (0.01, 0.1):
        A = sp.random(rows, cols, density=density, format="csc", random_state=rng, dtype=np.float64)
        A.sort_indices()
        got, _ = slice_columns(A, np.s_[::-1])
        out.append((f"{density:.0%} A_csc[::-1]", {"scipy": got["scipy"], "kernel": got["kernel"],
                                                  "compute": got["compute"]}, A[::-1]))
    return out


def same(got, want) -> bool:
    """Whether ``got`` (a scipy matrix or a Tensor, a vector being ``want``'s one row) holds ``want``'s entries."""
    import numpy as np
    import scipy.sparse as sp
    if not sp.issparse(got):
        if len(got.shape) == 1:
            (m,), v = got.to_coords()
            got = sp.csr_array((v, m, np.array([0, len(m)])), shape=want.shape)
        else:
            got = got.to_scipy()
    return got.shape == want.shape and abs(sp.csr_array(got) - sp.csr_array(want)).sum() == 0


def call_time(f, clock) -> float:
    """How long one call of ``f`` takes on ``clock``."""
    t0 = clock()
    f()
    return clock() - t0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000, help="the flattened matrix's rows and columns")
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--rows", type=int, default=20_000, help="the sliced CSC's rows")
    ap.add_argument("--cols", type=int, default=2_000)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    ap.add_argument("--only", choices=["flat", "reverse"])
    ap.add_argument("--tree", help="another checkout's root (main's): its compiler timed instead of this one's")
    args = ap.parse_args(argv)
    sys.path.insert(0, args.tree or str(Path(__file__).resolve().parents[1]))
    import compiler  # noqa: F401  (that tree's, before the benchmarks imported put this one's first on the path)
    import numpy as np
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    table = ([] if args.only == "reverse" else flat_rows(args.n, args.nnz)) + \
        ([] if args.only == "flat" else reverse_rows(args.rows, args.cols))
    print(f"medians of {args.rounds} rounds ({args.clock} clock), ms; ratios to scipy's")
    for name, cols, want in table:
        for col, f in cols.items():
            if not same(f(), want):
                raise SystemExit(f"{name}: {col} differs from scipy")
        # (one call of each column per round: a slow phase of the shared machine hits all of a round)
        rounds = np.array([[call_time(f, clock) for f in cols.values()] for _ in range(args.rounds)])
        ms = dict(zip(cols, np.median(rounds, axis=0) * 1e3))
        print(f"{name:22s} " + "  ".join(f"{col} {t:7.2f}" for col, t in ms.items()) + "   " +
              "  ".join(f"{col}/scipy {ms[col] / ms['scipy']:.2f}" for col in ms if col != "scipy"), flush=True)


if __name__ == "__main__":
    main()
