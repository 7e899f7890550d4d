"""A column-major flatten of a CSR matrix beside a sparse vector, ``A.T.reshape(-1) * x`` and ``+ x`` (issue 30),
against scipy and against main.

Rows (``A`` n x n CSR, ``x`` a sparse vector of ``n²`` entries, ``nnz`` nonzeros each), into a sparse vector:

- ``scipy``: ``A.tocsc()``, each entry's flat coordinate ``column·n + row`` computed by numpy (the column-major
  order scipy's CSC gives), a ``csr_array`` row of them, then its ``multiply(x)`` or ``+ x``;
- ``fused``: the lattice's one kernel (compiler.lattice.seqcolmajor: ``A``'s entries re-sorted by column into
  sparse rows, a counting sort as ``tocsc``, walked column by column beside ``x`` as stored, each entry appended
  as it comes, ``m`` increasing: one sort);
- ``compute``: the array expression as a user computes it, ``(A.T.reshape(-1) * x).compute(format="sparse")``,
  lowering from the kernel cache included.

Each round times every column once, one after the other; each column keeps its minimum over the rounds.
Results are checked against scipy's. ``--against DIR`` (another checkout's root, main's) times this checkout and
that one in turn, ``--repeats`` child processes each, alternating, and prints each column's median over them and
the ratios (to scipy's, and this checkout's over the other's).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_colmajor_vector.py --clock cpu [--rounds 10] [--n 20000]
        [--against /path/to/main --repeats 3]

Results (``--clock cpu``, 20k x 20k, 1M nonzeros each, min of 10 rounds, ms, median of 3 child processes per
checkout alternating with main, at a load of 5 to 18 on 2 cores):

    * x -> sparse vector   scipy 17.2   fused 15.0 (main 22.6)   compute 16.2 (main 24.0)
                           fused/scipy 0.87 (main 1.35), fused this/main 0.66
    + x -> sparse vector   scipy 16.7   fused 19.5 (main 30.6)   compute 20.7 (main 31.6)
                           fused/scipy 1.16 (main 1.79), fused this/main 0.64

Main's kernel sorted twice (``x`` by row into sparse rows walked beside ``A``'s, then the result by column, its
loops in ``A``'s order, merging ``A`` with ``x`` in both passes of the result's counting sort); this one sorts
``A`` once, as scipy does, and merges once, in ``m``'s order. ``+ x`` was still behind scipy's: its appends' checks
for room, since gone (bench_scipy_gaps.py: 0.88x scipy's time, at its hand-written bound).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from bench_colmajor import flat_coordinates  # noqa: E402
from bench_shape_order import CLOCK, matrix_arguments, timed  # noqa: E402


def flat_row(A):
    """``A.T.reshape(1, -1)`` as a scipy ``csr_array`` row, through ``A.tocsc()`` (its coordinates in order)."""
    m, v = flat_coordinates(A)
    return sp.csr_array((v, m, np.array([0, len(m)])), shape=(1, A.shape[0] * A.shape[1]))


def columns(A, x, op: str) -> dict:
    """The columns of one row: each a callable computing ``A.T.reshape(-1) op x`` into a sparse vector."""
    import compiler as ss
    from compiler import array as xp
    t = ss.Tensor.from_scipy(A, name="A")
    X = ss.Tensor.from_coords(x.indices[None, :].astype(np.int64), x.data, (x.shape[1],), "sparse")
    a, v = xp.asarray(t), xp.asarray(X)
    expr = (lambda: a.T.reshape(-1) * v) if op == "*" else (lambda: a.T.reshape(-1) + v)
    cols = {"scipy": (lambda: flat_row(A).multiply(x)) if op == "*" else (lambda: flat_row(A) + x)}
    kernel = expr().lower(strategy="lattice", format="sparse")
    if kernel.trace.find("materialize") == []:
        cols["fused"] = lambda: kernel(**kernel.arguments)
    cols["compute"] = lambda: expr().compute(format="sparse")
    return cols


def check(name: str, cols: dict) -> None:
    """Exit unless every column's entries are scipy's."""
    want = sp.csr_array(cols["scipy"]())
    want.sum_duplicates()
    want.eliminate_zeros()
    for col, f in cols.items():
        if col == "scipy":
            continue
        coords, vals = f().to_coords()
        keep = vals != 0
        if not (np.array_equal(coords[0][keep], want.indices) and np.array_equal(vals[keep], want.data)):
            raise SystemExit(f"{name}: {col} differs from scipy")


def measured(args) -> dict:
    """``{op: {column: best time}}`` of this process's compiler (``args.tree``'s where given)."""
    if args.tree:
        sys.path.insert(0, args.tree)       # (before compiler is first imported: that tree's)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    rng = np.random.default_rng(0)
    n = args.n
    A = sp.random(n, n, density=args.nnz / n / n, format="csr", random_state=rng, dtype=np.float64)
    A.sort_indices()
    x = sp.csr_array(sp.random(1, n * n, density=args.nnz / n / n, format="csr", random_state=rng))
    x.sort_indices()
    out = {}
    for op in ("*", "+"):
        cols = columns(A, x, op)
        check(f"{op} x", cols)
        out[op] = timed(cols, args.rounds, clock)
    return out


def against(args) -> None:
    """This checkout and ``args.against`` (another's root, main's) timed in turn, ``args.repeats`` child processes
    each, alternating (this, other, other, this, ...): each column's median over them, and the ratios."""
    trees = {"this": str(Path(__file__).resolve().parents[1]), "main": str(Path(args.against).resolve())}
    flags = ["--n", str(args.n), "--nnz", str(args.nnz), "--rounds", str(args.rounds), "--clock", args.clock]
    runs = {t: [] for t in trees}
    for r in range(args.repeats):
        for t in (("this", "main") if r % 2 == 0 else ("main", "this")):
            out = subprocess.run([sys.executable, __file__, *flags, "--tree", trees[t], "--json"], check=True,
                                 capture_output=True, text=True).stdout
            runs[t].append(json.loads(out))
    med = {t: {op: {c: float(np.median([run[op][c] for run in rs])) for c in rs[0][op]} for op in rs[0]}
           for t, rs in runs.items()}
    for op in med["this"]:
        this, main_ = med["this"][op], med["main"][op]
        cells = [f"scipy {this['scipy'] * 1e3:6.2f}"] + [f"{c} {this[c] * 1e3:6.2f} (main {main_[c] * 1e3:6.2f})"
                                                       for c in ("fused", "compute") if c in this and c in main_]
        ratios = [f"{c}/scipy {this[c] / this['scipy']:.2f} (main {main_[c] / main_['scipy']:.2f})"
                  for c in ("fused", "compute") if c in this and c in main_] + \
            [f"{c} this/main {this[c] / main_[c]:.2f}" for c in ("fused", "compute") if c in this and c in main_]
        print(f"{op} x -> sparse vector, ms, median of {args.repeats}: " + "  ".join(cells))
        print("    " + "  ".join(ratios), flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    matrix_arguments(ap)
    ap.add_argument("--against", help="another checkout's root (main's), timed in turn with this one")
    ap.add_argument("--repeats", type=int, default=3, help="child processes per checkout (with --against)")
    ap.add_argument("--tree", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.against:
        against(args)
        return
    best = measured(args)
    if args.json:
        print(json.dumps(best))
        return
    for op, cols in best.items():
        name = f"{op} x -> sparse vector"
        print(f"{name:22s} n={args.n:<6d} " + "  ".join(f"{c} {t * 1e3:8.2f} ms" for c, t in cols.items()),
              flush=True)


if __name__ == "__main__":
    main()
