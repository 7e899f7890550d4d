"""A split whose groups straddle a concatenation's parts, into a COO stored ``i, j, k`` (issue 30):
``out[i, j, k] = split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:I, k:K))`` of two CSR parts
(``permute_dims(concat([a, b]).reshape(I, K, J), (0, 2, 1))``), against numpy/scipy.

Columns (``A`` of ``rows`` rows, ``B`` of ``2n - rows``, both ``n`` columns, ``density`` of them stored):

- ``scipy``: ``sp.vstack([A, B], format="coo")``, its rows split into ``i, k``, the entries lexsorted by
  ``(i, j, k)``;
- ``lattice coo`` / ``lattice csf``: the lattice's kernel; where ``rows % K`` a group straddles the parts and the
  output holds every group across them (compiler.lattice.seqstraddlesort), else each part's groups are sorted
  as its loop reaches them (compiler.lattice.seqgroupsort): ``--rows n`` times the latter on the same sizes;
- ``looplets coo``: the looplets' kernel (what the default lowering took where the lattice refused).

Each round times every column once; each column keeps its minimum over the rounds. The kernels' results are
checked against scipy's (entries and values in order).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_straddle.py --clock cpu [--n 2000] [--rows 2001]

Results (2000-column parts of 2001 + 1999 rows (a straddle at 2001) or 2000 + 2000 (none), 1%: 80k entries,
K=2, ``--clock cpu``, min of 7 rounds, ms; median of 3 runs, the two alternated, on the shared 2-core machine at
a load of 11):

    rows=2001 (groups held across the parts)  scipy 9.84  lattice coo 2.73  lattice csf 3.12  looplets coo 43.16
    rows=2000 (each part sorts its groups)    scipy 9.64  lattice coo 1.72  lattice csf 1.68  looplets coo 43.33

Holding every group in one workspace of all the entries costs 1.6x (COO) to 1.9x (CSF) the group sort of
each part's groups in a workspace of the largest group's (which stays in cache), and is 3.6x faster than
scipy's vstack and lexsort and 16x faster than the looplets' kernel, which the default lowering took before.
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
from bench_shape_order import CLOCK  # noqa: E402
from bench_split_transpose import checked_times  # noqa: E402

PROGRAM = "out[i, j, k] = split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:{I}, k:{K}))"


def lexsorted(A, B, K: int):
    """The entries of ``vstack([A, B])`` split as ``(i, j, k, value)`` arrays in ``i, j, k`` order."""
    c = sp.vstack([A, B], format="coo")
    i, k = c.row // K, c.row % K
    order = np.lexsort((k, c.col, i))
    return i[order], c.col[order], k[order], c.data[order]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rows", type=int, help="A's rows (B has 2n - rows); default n + 1, a straddle at K = 2")
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--K", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-looplets", action="store_true")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import compiler as ss
    rng = np.random.default_rng(0)
    rows = args.n + 1 if args.rows is None else args.rows
    A, B = (sp.random(r, args.n, density=args.density, format="csr", random_state=rng, dtype=np.float64)
            for r in (rows, 2 * args.n - rows))
    tensors = {"A": ss.Tensor.from_scipy(A, name="A"), "B": ss.Tensor.from_scipy(B, name="B")}
    K = args.K
    program = PROGRAM.format(I=2 * args.n // K, K=K)
    kernels = {f"lattice {f}": ss.lower(program, strategy="lattice", **tensors, out=ss.parse_format(f, ndim=3))
               for f in ("coo", "csf")}
    if not args.no_looplets:
        kernels["looplets coo"] = ss.lower(program, strategy="looplets", **tensors, out=ss.parse_format("coo", ndim=3))
    held = "straddle" in kernels["lattice coo"].trace.stages()
    columns = {"scipy": lambda: lexsorted(A, B, K)}
    columns.update({name: (lambda k=k: k(**tensors)) for name, k in kernels.items()})
    cells = checked_times(columns, kernels, lexsorted(A, B, K), args.rounds, clock, "{} differs from scipy")
    print(f"rows={rows} ({'groups held across the parts' if held else 'each part sorts its groups'}) {cells}",
          flush=True)


if __name__ == "__main__":
    main()
