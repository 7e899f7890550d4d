"""The transpose of a split's groups into a sparse output (issue 30): ``out[i, j, k] = split(A[l, j], l -> (i:I, k:K))``
of a CSR ``A`` (``permute_dims(A.reshape(I, K, J), (0, 2, 1))``) into a COO stored ``i, j, k``, against numpy/scipy.

Columns (``A`` n x n, ``nnz`` nonzeros, ``K`` rows per group):

- ``numpy``: ``A.tocoo()``, its rows split into ``i, k``, the entries lexsorted by ``(i, j, k)`` (the transpose of
  the reshaped matrix as a COO);
- ``scipy groups``: ``A[rows].T.tocoo()`` for each group's rows (a Python loop; only where there are at most 2000
  groups);
- ``lattice coo`` / ``lattice csf``: the lattice's kernel, its loops ``i, k, j`` and each group sorted by ``j``
  before it is appended (compiler.lattice.seqgroupsort);
- ``looplets coo``: the looplets' kernel.

Each round times every column once; each column keeps its minimum over the rounds. The lattice's results are checked
against numpy's (entries and values in order).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_split_transpose.py --clock cpu [--rounds 7] [--n 20000]

Results (``--clock cpu``, 20k x 20k, 1M nonzeros, min of 5 rounds (K=100: 3), ms; on the shared 2-core
machine under heavy load; a second run of K=2 gave 10.2 / 11.2 for the lattice's):

    K=2    numpy 149.3   lattice coo 10.3   lattice csf 11.2   looplets coo 2372.8
    K=16   numpy 166.8   scipy groups 73.7   lattice coo 11.5   lattice csf 13.0   looplets coo 2420.7
    K=100  numpy 166.6   scipy groups 17.6   lattice coo 10.8   lattice csf 17.5   looplets coo 2419.5

The workspace sized by the largest group's entries (a first pass counting them) instead of a group's K·J block:
the lattice's columns alone, ``--clock cpu``, min of 5 rounds, median of 4 runs alternated with main's, ms:

    main   K=2 coo 9.73 csf 10.49   K=16 coo 10.90 csf 12.16   K=100 coo 9.24 csf 10.49
    count  K=2 coo 9.30 csf 10.46   K=16 coo 10.77 csf 12.02   K=100 coo 9.16 csf 10.24

With two modes, ``C[i, k] = split(a[l], l -> (i:400, k:500))`` of a sparse vector of 200000 (1%) into a COO
stored ``k, i`` (a script outside this file, min of 30 rounds, two runs): main's kernel searching each group
for k's coordinate 1.23 / 1.24 ms, the sorted output's 0.024 / 0.023 ms, scipy's ``coo_matrix(...).tocsc()``
0.08 ms.
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

PROGRAM = "out[i, j, k] = split(A[l, j], l -> (i:{I}, k:{K}))"


def lexsorted(A, K: int):
    """The entries of ``A`` as ``(i, j, k, value)`` arrays in ``i, j, k`` order."""
    c = A.tocoo()
    i, k = c.row // K, c.row % K
    order = np.lexsort((k, c.col, i))
    return i[order], c.col[order], k[order], c.data[order]


def per_group(A, K: int):
    return [A[g * K:(g + 1) * K].T.tocoo() for g in range(A.shape[0] // K)]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--K", type=int, nargs="+", default=[2, 16, 100])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import compiler as ss
    rng = np.random.default_rng(0)
    A = sp.random(args.n, args.n, density=args.nnz / args.n / args.n, format="csr", random_state=rng,
                  dtype=np.float64)
    A.sort_indices()
    t = ss.Tensor.from_scipy(A, name="A")
    for K in args.K:
        program = PROGRAM.format(I=args.n // K, K=K)
        kernels = {f"lattice {f}": ss.lower(program, strategy="lattice", A=t, out=ss.parse_format(f, ndim=3))
                   for f in ("coo", "csf")}
        kernels["looplets coo"] = ss.lower(program, strategy="looplets", A=t, out=ss.parse_format("coo", ndim=3))
        columns = {"numpy": lambda: lexsorted(A, K)}
        if args.n // K <= 2000:
            columns["scipy groups"] = lambda: per_group(A, K)
        columns.update({name: (lambda k=k: k(A=t)) for name, k in kernels.items()})
        cells = checked_times(columns, kernels, lexsorted(A, K), args.rounds, clock, f"K={K}: {{}} differs from numpy")
        print(f"K={K:<4d} {cells}", flush=True)


def checked_times(columns: dict, kernels: dict, want: tuple, rounds: int, clock, differs: str) -> str:
    """Each column's minimum time over ``rounds`` (ms, as a line's cells), after checking each kernel's result
    against ``want`` (``lexsorted``'s arrays; ``differs``: the message, the kernel's name in its braces)."""
    for name in kernels:
        got = columns[name]()
        if got.nnz != len(want[3]) or not np.array_equal(np.asarray(got.vals)[:got.nnz], want[3]):
            raise SystemExit(differs.format(name))
    best = timed(columns, rounds, clock)
    return "  ".join(f"{col} {best[col] * 1e3:8.2f} ms" for col in columns)


if __name__ == "__main__":
    main()
