"""The cross product of a sparse n x 3 matrix with a 3-vector (``compiler.array.linalg.cross``, issue 30), beside
what users of the baselines write, in the same run.

``linalg.cross(A, y)`` is one fused kernel: each output column a difference of products of two of A's columns with
y's entries, and its result a sparse n x 3 matrix (CSR). No sparse library has a cross product, so the columns are:

- ``numpy``: ``np.cross(D, y)`` on the dense array ``D`` already made (what a user holding dense data pays);
- ``numpy+toarray``: ``np.cross(A.toarray(), y)``, a scipy user's way to it (the densifying counted);
- ``scipy``: the same formula on scipy's CSC columns, ``hstack``-ed into a CSR (the sparse way with scipy);
- ``pydata``: the formula on pydata/sparse's COO columns, ``stack``-ed (the sparse way with pydata/sparse);
- ``lattice`` and ``looplets``: the kernel each strategy lowers, called on A (lowered and built before timing);
- ``compute``: ``linalg.cross(asarray(A), y).compute()``, what a user calls (planning found in the cache);
- ``bound``: :data:`BOUND_C`, a hand-written C kernel to the same CSR result.

Each round times every column once, one after the other; each column reports its median over the rounds and the
ratio of numpy's time to it (above 1: faster than numpy on the dense array). Every result is checked against numpy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_cross.py [--n 2000000] [--density 0.5] [--rounds 7] [--format coo]

Results (2026-12-05, stop 80, n = 2,000,000, density 0.5: 3M entries; medians of 11 rounds, wall clock, a shared
2-core machine at load 0.9-1.4; ms, then numpy's, scipy's and pydata's time over each column's):

    numpy 45.48  numpy+toarray 67.42  scipy 116.02  pydata 1385.42  lattice 92.28  looplets 90.08  compute 85.09
    bound 24.96
    numpy/lattice 0.49  scipy/lattice 1.26  pydata/lattice 15.01
    numpy/looplets 0.50  scipy/looplets 1.29  pydata/looplets 15.38
    numpy/bound 1.82  scipy/bound 4.65  pydata/bound 55.51

(stop 78's run: lattice 111.13, looplets 91.63, compute 105.01; since, the lattice locates each column read in
a row, six searches a row, where it walked each column's rows as a sequence of its own.)

Both kernels are 15x faster than pydata/sparse's way and 1.26-1.29x faster than scipy's; numpy on a dense array it
already holds is about 2x faster than them. The bound is 1.8x faster than that numpy: the kernels are 3.6x
(looplets) and 3.7x (lattice) from it. What they spent it on (read in the looplets' C): each output entry looked its
two operands up in A's row with a binary search and a test each (six per row, where the bound scatters the row's at
most 3 entries into a 3-vector once), tested each entry's value to store it (the bound stores always and advances by
the test's 0 or 1), and checked the output's room before each entry (the bound reserves 3 a row, which the kernel's
output extents also bound). At density 0.5 those tests go either way at random, which a processor cannot predict.

Since (stop 78): the looplets' kernel searches each row three times, once a column (the ``same-values`` step), and
appends with no branch (``branch-free``). A run the same day, same machine: looplets 88.94 ms, bound 25.16 (3.5x;
scipy/looplets 1.21, pydata/looplets 14.40). The pre-change kernel, timed alternately with it in separate
processes (median of 15 calls, CPU time), took 106-130 ms to its 102-105: within the machine's noise. All of the
call's time is in the C (a profile of the call: 457 of 481 ms over 5 calls); what is left is the searches'
branches and the output's growth by doubling from 16 entries (no room reserved: a product with a constant read of
``y`` is not among what :mod:`compiler.looplets.reserve` bounds).

``--format coo`` (stop 82, 2026-12-06, same sizes, 7 rounds, wall clock; the kernels read A as a COO matrix):

    numpy 56.90  numpy+toarray 74.72  scipy 127.51  pydata 1616.39  lattice 79.42  looplets 98.08  compute 75.33
    scipy/lattice 1.61  pydata/lattice 20.35  scipy/looplets 1.30  pydata/looplets 16.48  numpy/bound 2.34

The lattice reads each column of a COO matrix in the segment of the row its loop's cursor is at (one loop over A's
rows; :func:`compiler.lattice.seqlocated.rows_walked`); before, each column was the rows where it is stored, a
sequence of its own: lattice 102.42 ms and compute 98.19 in a run of the pre-change code the same hour (CSR the same
hour: lattice 76.88, looplets 76.01).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
#: y, all positive: with a negative entry one of pydata/sparse's products has the fill -0.0 and its stack refuses
#: to join arrays of other fills ("requires consistent fill-values")
Y = (1.0, 2.0, 0.5)


#: the bound: each row's (at most 3) entries scattered into a dense 3-vector, the three components computed and
#: stored with no branch (a zero is overwritten by the next stored entry), into arrays of room for 3 per row
BOUND_C = r"""
#include <stdint.h>

int64_t cross_bound(int64_t n, const int32_t *pos, const int32_t *idx, const double *val, const double *y,
                    int32_t *out_pos, int32_t *out_idx, double *out_val)
{
    int64_t q = 0;
    out_pos[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        double a[3] = {0.0, 0.0, 0.0};
        for (int32_t p = pos[i]; p < pos[i + 1]; p++)
            a[idx[p]] = val[p];
        double c[3] = {a[1] * y[2] - a[2] * y[1], a[2] * y[0] - a[0] * y[2], a[0] * y[1] - a[1] * y[0]};
        for (int k = 0; k < 3; k++) {
            out_idx[q] = k;
            out_val[q] = c[k];
            q += c[k] != 0.0;
        }
        out_pos[i + 1] = (int32_t)q;
    }
    return q;
}
"""


def bound(A, y):
    """The cross product by :data:`BOUND_C`, into numpy arrays allocated in the call, as a CSR matrix."""
    import numpy as np
    import scipy.sparse as sp
    from compiler.backend.build import build_library, load_library
    path, _ = build_library(BOUND_C, name="cross_bound")
    ffi, lib = load_library(path, "int64_t cross_bound(int64_t n, const int32_t *pos, const int32_t *idx, "
                                  "const double *val, const double *y, int32_t *out_pos, int32_t *out_idx, "
                                  "double *out_val);")
    n = A.shape[0]
    pos, idx, val = A.indptr.astype(np.int32), A.indices.astype(np.int32), np.ascontiguousarray(A.data)

    def run():
        out_pos, out_idx, out_val = np.empty(n + 1, np.int32), np.empty(3 * n, np.int32), np.empty(3 * n)
        q = lib.cross_bound(n, *(ffi.from_buffer(f"{t}[]", x) for t, x in (
            ("int32_t", pos), ("int32_t", idx), ("double", val), ("double", y), ("int32_t", out_pos),
            ("int32_t", out_idx), ("double", out_val))))
        return sp.csr_matrix((out_val[:q], out_idx[:q], out_pos), shape=(n, 3))
    return run


def columns(A, y, fmt: str = "csr") -> dict:
    """``{column: callable}``, each returning the cross product of CSR ``A`` (n x 3) with ``y`` as it comes; the
    kernels' columns read ``A`` in ``fmt`` (``"coo"``: converted before timing, as a user holding a COO matrix)."""
    import numpy as np
    import scipy.sparse as sp
    import sparse

    import compiler as ss
    from compiler.array import linalg

    dense = A.toarray()
    csc = sp.csc_matrix(A)
    cols = [csc[:, [k]] for k in range(3)]
    coo = sparse.COO.from_scipy_sparse(A)
    parts = [coo[:, k] for k in range(3)]

    def formula(c, stack):
        return stack([c[1] * y[2] - c[2] * y[1], c[2] * y[0] - c[0] * y[2], c[0] * y[1] - c[1] * y[0]])

    held = A if fmt == "csr" else ss.Tensor.from_scipy(A.tocoo(), fmt)
    expr = linalg.cross(ss.asarray(held), np.asarray(y))
    kernels = {strategy: ss.lower(expr, strategy=strategy) for strategy in ("lattice", "looplets")}
    return {"numpy": lambda: np.cross(dense, y),
            "numpy+toarray": lambda: np.cross(A.toarray(), y),
            "scipy": lambda: formula(cols, lambda cs: sp.hstack(cs, format="csr")),
            "pydata": lambda: formula(parts, lambda cs: sparse.stack(cs, axis=1)),
            "lattice": lambda: kernels["lattice"](),
            "looplets": lambda: kernels["looplets"](),
            "compute": lambda: linalg.cross(ss.asarray(held), np.asarray(y)).compute(),
            "bound": bound(A, y)}


def as_dense(got):
    """A column's result as a numpy array (the sparse ones densified, for the check only)."""
    import numpy as np
    if hasattr(got, "to_numpy"):
        return got.to_numpy()
    if hasattr(got, "todense") and not hasattr(got, "toarray"):
        return np.asarray(got.todense())
    return got.toarray() if hasattr(got, "toarray") else np.asarray(got)


def main(argv=None) -> dict:
    """Time every column; print a row of medians and one of ratios. Returns the medians, ms by column."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2_000_000, help="A's rows")
    ap.add_argument("--density", type=float, default=0.5)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    ap.add_argument("--format", choices=["csr", "coo"], default="csr", help="A's format as the kernels read it")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import numpy as np
    import scipy.sparse as sp

    A = sp.random(args.n, 3, density=args.density, format="csr", random_state=np.random.default_rng(0),
                  dtype=np.float64)
    y = np.array(Y)
    cols = columns(A, y, args.format)
    want = np.cross(A.toarray(), y)
    for name, f in cols.items():
        if not np.array_equal(as_dense(f()), want):
            raise SystemExit(f"{name}: its cross product differs from numpy's")
    clock = CLOCK[args.clock]

    def once(f):
        t0 = clock()
        f()
        return clock() - t0

    # (one call of each column per round: a slow phase of the shared machine hits all of a round)
    rounds = np.array([[once(f) for f in cols.values()] for _ in range(args.rounds)])
    ms = dict(zip(cols, np.median(rounds, axis=0) * 1e3))
    print(f"cross(A, y), A {args.n} x 3 {args.format.upper()} with {A.nnz} entries; medians of {args.rounds} rounds "
          f"({args.clock} clock), ms")
    print("  ".join(f"{name} {t:.2f}" for name, t in ms.items()))
    print("  ".join(f"{base}/{k} {ms[base] / ms[k]:.2f}" for k in ("lattice", "looplets", "bound")
                    for base in ("numpy", "scipy", "pydata")), flush=True)
    return ms


if __name__ == "__main__":
    main()
