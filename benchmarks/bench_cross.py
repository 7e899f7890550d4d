"""The cross product of a sparse n x 3 matrix with a 3-vector (``compiler.array.linalg.cross``, issue 30), beside
what users of the baselines write, in the same run.

``linalg.cross(A, y)`` is one fused kernel: each output column a difference of products of two of A's columns with
y's entries, and its result a sparse n x 3 matrix (CSR). No sparse library has a cross product, so the columns are:

- ``numpy``: ``np.cross(D, y)`` on the dense array ``D`` already made (what a user holding dense data pays);
- ``numpy+toarray``: ``np.cross(A.toarray(), y)``, a scipy user's way to it (the densifying counted);
- ``scipy``: the same formula on scipy's CSC columns, ``hstack``-ed into a CSR (the sparse way with scipy);
- ``pydata``: the formula on pydata/sparse's COO columns, ``stack``-ed (the sparse way with pydata/sparse);
- ``lattice`` and ``looplets``: the kernel each strategy lowers, called on A (lowered and built before timing);
- ``compute``: ``linalg.cross(asarray(A), y).compute()``, what a user calls (planning found in the cache).

Each round times every column once, one after the other; each column reports its median over the rounds and the
ratio of numpy's time to it (above 1: faster than numpy on the dense array). Every result is checked against numpy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_cross.py [--n 2000000] [--density 0.5] [--rounds 7]

RESULTS PENDING
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


def columns(A, y) -> dict:
    """``{column: callable}``, each returning the cross product of CSR ``A`` (n x 3) with ``y`` as it comes."""
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

    expr = linalg.cross(ss.asarray(A), np.asarray(y))
    kernels = {strategy: ss.lower(expr, strategy=strategy) for strategy in ("lattice", "looplets")}
    return {"numpy": lambda: np.cross(dense, y),
            "numpy+toarray": lambda: np.cross(A.toarray(), y),
            "scipy": lambda: formula(cols, lambda cs: sp.hstack(cs, format="csr")),
            "pydata": lambda: formula(parts, lambda cs: sparse.stack(cs, axis=1)),
            "lattice": lambda: kernels["lattice"](),
            "looplets": lambda: kernels["looplets"](),
            "compute": lambda: linalg.cross(ss.asarray(A), np.asarray(y)).compute()}


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
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import numpy as np
    import scipy.sparse as sp

    A = sp.random(args.n, 3, density=args.density, format="csr", random_state=np.random.default_rng(0),
                  dtype=np.float64)
    y = np.array(Y)
    cols = columns(A, y)
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
    print(f"cross(A, y), A {args.n} x 3 CSR with {A.nnz} entries; medians of {args.rounds} rounds "
          f"({args.clock} clock), ms")
    print("  ".join(f"{name} {t:.2f}" for name, t in ms.items()))
    print("  ".join(f"{base}/{k} {ms[base] / ms[k]:.2f}" for k in ("lattice", "looplets")
                    for base in ("numpy", "scipy", "pydata")), flush=True)
    return ms


if __name__ == "__main__":
    main()
