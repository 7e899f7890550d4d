"""Loops in the inputs' storage order where the output's walks one against it (issue 30), against scipy and
against reading the inputs converted to the output's order first.

Rows (20k x 20k, 1M nonzeros by default; ``top``/``bottom`` the CSR halves of the rows, ``C`` the CSC):

- ``vstack csr -> csc``: ``sp.vstack([top, bottom]).tocsc()``; the lattice's kernel scattering the CSC
  (compiler.lattice.seqscatter); the inputs converted to CSC (``Tensor.asformat``, a counting sort each)
  and then stacked in order by the lattice's kernel for CSC inputs.
- ``column sums``: ``sp.vstack([top, bottom]).sum(axis=0)``; the lattice's kernel with the sum's loops
  around the columns' (compiler.lattice.seqhoist), into a dense vector and into a sparse one.
- ``C[:, ::-2] -> csr``: ``C[:, ::-2].tocsr()``; the lattice's scatter; ``C`` converted to CSR, then sliced
  (what the lattice did before).
- ``2 * column sums + 1``: scipy's; the lattice's kernel adding the column sums into a workspace first, the
  operator in a loop over it (compiler.lattice.seqworkspace); the stack computed by the lattice's kernel, then
  the sums of it (main refused the one kernel and materialized the stack).
- ``sum(concat 3-D, axis 0) -> csr``: two COO parts of shape (8, n/4, n/4) summed over their first axis into a
  CSR: scipy's ``coo_matrix((v, (j, m))).tocsr()`` over the parts' entries (duplicates summed); the lattice's
  kernel bucketing the terms by row (compiler.lattice.seqsumscatter); the stack materialized (a COO), then
  summed by the lattice's kernel for it (main refused the one kernel).
- ``2 * sum(concat 3-D) + 1 -> csr``: the same parts' sums doubled plus 1 (a CSR of fill 1): scipy's
  ``coo_matrix(...).tocsr()``, its values doubled plus 1; the lattice's kernel keeping the sums in sparse rows
  (compiler.lattice.seqsumrows: bucketed by row, each row summed and written back in place, the operator applied
  as the output's loops read it). Main refused the one kernel (a dense workspace of the matrix's every entry was
  not taken) and the array front end retried, materializing the stack.

Each round times every column once, one after the other (a slow phase of the shared machine hits all of
a round); each column keeps its minimum over the rounds. Results are checked against scipy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_shape_order.py --clock cpu [--rounds 10] [--n 20000]

Results (``--clock cpu``, 20k x 20k, 1M nonzeros, min of 10 rounds, ms; two runs each way at a load of 4
to 10 on 2 cores). One call of each column per round:

    vstack csr -> csc    scipy 5.04 / 4.68   scatter 4.67 / 4.27          converted 5.05 / 4.12
    column sums          scipy 1.26 / 1.00   hoisted dense 0.78 / 0.63    hoisted sparse 0.70 / 0.57
    C[:, ::-2] -> csr    scipy 2.47 / 1.83   scatter 2.94 / 2.84          converted 9.38 / 8.66

Two runs at a load of 8 to 11 on 2 cores, the rows added since:

    2 * column sums + 1             scipy 3.81 / 2.27    workspace 1.28 / 1.21   materialized 2.19 / 2.18
    sum(concat 3-D, axis 0) -> csr  scipy 28.4 / 27.6    buckets 25.5 / 25.3     materialized 63.6 / 64.9

(The array expressions' kernels on main, timed the same way, min of 10: 1.51 / 1.06 ms and 49.0 / 47.1 ms,
against 0.55 / 0.64 ms and 25.3 / 25.7 ms for one kernel.)

Two runs at a load of 15 to 18 on 2 cores, the row added since:

    2 * sum(concat 3-D) + 1 -> csr  scipy 28.6 / 28.9    rows 25.0 / 24.9

(The array expression's kernel on main, the stack materialized, median of 7 calls, two runs alternating with
this branch's: 174 / 151 ms for COO parts and 153 / 154 ms for CSF parts, against 25.1 / 25.4 ms and
23.5 / 23.5 ms for one kernel; scipy 29.6-30.2 ms.)

``--blocks`` (each column's rounds in a row, its buffers' pages reused):

    vstack csr -> csc    scipy 3.90 / 3.68   scatter 2.72 / 2.98          converted 4.06 / 4.21
    column sums          scipy 0.94 / 0.94   hoisted dense 0.48 / 0.48    hoisted sparse 0.50 / 0.50
    C[:, ::-2] -> csr    scipy 1.26 / 1.24   scatter 1.16 / 1.25          converted 7.69 / 8.36

The scatter does what scipy's ``tocsc`` does (count, prefix sum, place) without the stack before it: in
blocks it beats converting both inputs first (two counting sorts, then the stack), in paired rounds it is
within the machine's noise of it (two later runs at a load of 4 to 6: 5.29 / 5.00 ms against 4.79 / 5.29;
in blocks 4.71 / 3.40 against 5.52 / 5.40), and for a strided slice it is several times faster: the
lattice scatters before it converts. A COO written by a scatter (phase 1 counting only the entries other
than the fill, phase 2 writing both coordinates at random) measured slower than converting its CSC inputs
(``vstack csc -> coo``, 6.5-7.7 ms against 5.0-6.6 ms) and is not done. A sum's loops around the output's are taken only where no input could be
read converted instead: for ``C[::-2] @ x`` of a CSC ``C`` (its rows sliced with a step) the sum outside
walks every row of each column, the step filtering them, and measured 3.85 ms against 3.13 ms converted
(``--blocks``; 4.0 against 4.3 paired), where for the SpMV of a vstack of two CSC it measured 0.64 ms
against 3.1 ms: a choice by the slices' steps is left undone.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}


def rows(n: int, nnz: int):
    """``(name, {column: callable}, check)`` per row; each check compares a column's result with scipy's."""
    import compiler as ss
    from compiler import array as xp
    rng = np.random.default_rng(0)
    A = sp.random(n, n, density=nnz / n / n, format="csr", random_state=rng, dtype=np.float64)
    A.sort_indices()
    top, bottom = A[: n // 2].tocsr(), A[n // 2:].tocsr()
    C = A.tocsc()
    T = ss.Tensor.from_scipy
    t, b, c = T(top, name="A"), T(bottom, name="B"), T(C, name="A")
    out = []

    stack = xp.concat([xp.asarray(t), xp.asarray(b)]).lower(strategy="lattice", format="csc")
    fmt = ss.Format(t.format.root, (1, 0))     # (CSC of the same index dtype)
    in_order = xp.concat([xp.asarray(t.asformat(fmt)), xp.asarray(b.asformat(fmt))]).lower(strategy="lattice",
                                                                                              format="csc")
    out.append(("vstack csr -> csc", {
        "scipy": lambda: sp.vstack([top, bottom]).tocsc(),
        "scatter": lambda: stack(**stack.arguments),
        "converted": lambda: in_order(A=t.asformat(fmt), B=b.asformat(fmt)),
    }, lambda r: sp.csc_matrix(r.to_scipy() if hasattr(r, "to_scipy") else r)))

    sums = xp.sum(xp.concat([xp.asarray(t), xp.asarray(b)]), axis=0)
    dense_sums, sparse_sums = sums.lower(strategy="lattice", format="dense"), sums.lower(strategy="lattice")
    out.append(("column sums", {
        "scipy": lambda: sp.vstack([top, bottom]).sum(axis=0),
        "hoisted dense": lambda: dense_sums(**dense_sums.arguments),
        "hoisted sparse": lambda: sparse_sums(**sparse_sums.arguments),
    }, lambda r: np.asarray(r.to_numpy() if hasattr(r, "to_numpy") else r).ravel()))

    # (a sum under an operator: into a workspace first, the operator in a loop over it; main materialized the stack)
    twice = xp.sum(xp.concat([xp.asarray(t), xp.asarray(b)]), axis=0) * 2 + 1
    workspace = twice.lower(strategy="lattice")
    stacked = xp.concat([xp.asarray(t), xp.asarray(b)]).lower(strategy="lattice", format="csr")
    after = (xp.sum(xp.asarray(stacked()), axis=0) * 2 + 1).lower(strategy="lattice")
    (name,) = after.arguments
    out.append(("2 * column sums + 1", {
        "scipy": lambda: sp.vstack([top, bottom]).sum(axis=0) * 2 + 1,
        "workspace": lambda: workspace(**workspace.arguments),
        "materialized": lambda: after(**{name: stacked(**stacked.arguments)}),
    }, lambda r: np.asarray(r.to_numpy() if hasattr(r, "to_numpy") else r).ravel()))

    sliced = xp.asarray(c)[:, ::-2].lower(strategy="lattice", format="csr")
    crs = c.asformat(ss.Format(c.format.root, (0, 1)))
    before = xp.asarray(crs)[:, ::-2].lower(strategy="lattice", format="csr")
    out.append(("C[:, ::-2] -> csr", {
        "scipy": lambda: C[:, ::-2].tocsr(),
        "scatter": lambda: sliced(**sliced.arguments),
        "converted": lambda: before(A=c.asformat(crs.format)),
    }, lambda r: sp.csr_matrix(r.to_scipy() if hasattr(r, "to_scipy") else r)))

    out.append(sums_of_3d_parts(n, nnz))
    out.append(operator_over_sums_of_3d_parts(n, nnz))
    return out


def timed(columns: dict, rounds: int, clock, blocks: bool = False) -> dict:
    """Each column's minimum time over ``rounds`` calls: one call of each per round, or (``blocks``) each
    column's calls in a row."""
    best = {col: float("inf") for col in columns}
    calls = [(col, f) for col, f in columns.items() for _ in range(rounds)] if blocks else \
        [(col, f) for _ in range(rounds) for col, f in columns.items()]
    for col, f in calls:
        t0 = clock()
        f()
        best[col] = min(best[col], clock() - t0)
    return best


def parts_3d(n: int, nnz: int):
    """``(shape, (A, B), (j, m, v))``: two COO parts of ``shape`` ``(8, n / 4, n / 4)`` (``nnz`` entries between
    them) as lazy arrays, and their entries' last two coordinates and values, concatenated."""
    import compiler as ss
    from compiler import array as xp
    rng = np.random.default_rng(1)
    shape = (8, n // 4, n // 4)
    parts, coords = [], []
    for k in range(2):
        flat = np.unique(rng.integers(0, np.prod(shape), nnz // 2))
        at = np.unravel_index(flat, shape)
        vals = rng.random(len(flat))
        parts.append(xp.asarray(ss.Tensor.from_coords(at, vals, shape, "coo", name="AB"[k])))
        coords.append((at[1], at[2], vals))
    return shape, parts, tuple(np.concatenate(x) for x in zip(*coords))


def operator_over_sums_of_3d_parts(n: int, nnz: int):
    """The row ``2 * sum(concat 3-D) + 1 -> csr``: the parts of :func:`parts_3d` summed over their first axis,
    doubled, plus 1, into a CSR (of fill 1): scipy's ``coo_matrix(...).tocsr()`` over their entries, its values
    doubled plus 1; the lattice's kernel keeping the sum in sparse rows (compiler.lattice.seqsumrows: bucketed
    by row, each row summed and written back in place, the operator applied as the output's loops read it)."""
    from compiler import array as xp
    shape, (A, B), (j, m, v) = parts_3d(n, nnz)
    rows = (xp.sum(xp.concat([A, B]), axis=0) * 2 + 1).lower(strategy="lattice", format="csr")

    def scipy_way():
        S = sp.coo_matrix((v, (j, m)), shape=shape[1:]).tocsr()
        S.data = S.data * 2 + 1
        return S

    def entries(r):
        """The stored entries (of a kernel's result of fill 1, or scipy's) as a scipy CSR."""
        if sp.issparse(r):
            return r
        c, vals = r.to_coords()
        return sp.csr_matrix((vals, (c[0], c[1])), shape=shape[1:])

    return ("2 * sum(concat 3-D) + 1 -> csr", {
        "scipy": scipy_way,
        "rows": lambda: rows(**rows.arguments),
    }, entries)


def sums_of_3d_parts(n: int, nnz: int):
    """The row ``sum(concat 3-D, axis 0) -> csr``: two COO parts of shape ``(8, n / 4, n / 4)`` (``nnz`` entries
    between them), summed over their first axis into a CSR: scipy's ``coo_matrix(...).tocsr()`` over their
    entries' coordinates (duplicates summed); the lattice's kernel bucketing the terms by row
    (compiler.lattice.seqsumscatter); the stack materialized by the lattice's concat kernel, then summed by
    the lattice's kernel for it (what main did, reading the COO stack converted)."""
    from compiler import array as xp
    shape, (A, B), (j, m, v) = parts_3d(n, nnz)
    bucketed = xp.sum(xp.concat([A, B]), axis=0).lower(strategy="lattice", format="csr")
    stacked = xp.concat([A, B]).lower(strategy="lattice", format="coo")
    after = xp.sum(xp.asarray(stacked()), axis=0).lower(strategy="lattice", format="csr")
    (name,) = after.arguments
    return ("sum(concat 3-D, axis 0) -> csr", {
        "scipy": lambda: sp.coo_matrix((v, (j, m)), shape=shape[1:]).tocsr(),
        "buckets": lambda: bucketed(**bucketed.arguments),
        "materialized": lambda: after(**{name: stacked(**stacked.arguments)}),
    }, lambda r: sp.csr_matrix(r.to_scipy() if hasattr(r, "to_scipy") else r))


def matrix_arguments(ap, rounds: int = 10) -> None:
    """The options of a benchmark on one random n x n CSR matrix: ``--n``, ``--nnz``, ``--rounds``, ``--clock``."""
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    matrix_arguments(ap)
    ap.add_argument("--blocks", action="store_true",
                    help="time each column in a block of its own rounds (a freed buffer's pages are reused by "
                         "the next call of the same kernel), not one call of each column per round")
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    table = rows(args.n, args.nnz)
    for name, columns, as_ref in table:
        ref = as_ref(columns["scipy"]())
        for col, f in columns.items():
            got = as_ref(f())
            same = (abs(got - ref)).max() < 1e-9 if sp.issparse(got) else np.allclose(got, ref)
            if not same:
                raise SystemExit(f"{name}: {col} differs from scipy")
        best = timed(columns, args.rounds, clock, args.blocks)
        cells = "  ".join(f"{col} {best[col] * 1e3:7.2f} ms" for col in columns)
        print(f"{name:20s} {cells}", flush=True)


if __name__ == "__main__":
    main()
