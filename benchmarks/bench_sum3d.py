"""A sum of a stack of 4-D parts over its first axis into a 3-D sparse output (issue 30), the lattice's one kernel
against pydata/sparse and scipy.

Two COO parts of shape ``(8, n, n, n)`` (``nnz`` entries between them) are stacked and summed over their first
axis, alone and doubled plus 1 (a result of fill 1), into a 3-D COO or CSF:

- ``lattice``: ``xp.sum(xp.concat([A, B]), axis=0)`` (``* 2 + 1``) lowered by the lattice strategy as one kernel:
  the terms bucketed by their first coordinate, each bucket sorted by the other two and equal ones summed
  (compiler.lattice.seqsumsort); under the operator the sums kept sparse first, the operator applied as the
  output's loops read them. Run against main's code (``PYTHONPATH`` at a checkout of it) this column is what main
  does: the array front end's retry, the stack computed on its stored entries first.
- ``dense ws``: the stack materialized first (not timed), then ``xp.sum(M, axis=0)`` (``* 2 + 1``) lowered by the
  lattice: the sum added into a dense workspace of the output's every coordinate, scanned after (what main's retry
  did at each call before the sort). ``ratio``: the lattice's median over this one's, in the same run.
- ``pydata``: ``sparse.concatenate([A, B]).sum(axis=0)`` (``* 2 + 1``) on pydata/sparse COOs.
- ``scipy 2-D``: the nearest scipy has: ``coo_matrix((v, (j, m * n + k))).tocsr()`` over the parts' entries, the
  last two coordinates flattened (the same duplicates summed, a 2-D result).

Each round times every column once, one after the other; each keeps its median over the rounds. Results are
checked against pydata's. The lattice's lowering (its kernel built already, loaded) is timed once, wall clock:
main's retry materializes the stack there, once, and its kernel sums the stack at each call.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_sum3d.py --clock cpu [--rounds 7] [--n 100] [--nnz 1000000]

Results (``--clock cpu``, 1M nonzeros, median of 5 rounds, ms; a load of 12 to 16 on 2 cores, two runs of this
branch alternating with two of main's; ``lowering``: wall ms, main's materializing the stack):

    n = 100 (the output's 1M coordinates about 60% stored)
                       this branch            main (retry)                 pydata     scipy 2-D
    sum -> coo         43.5 / 46.3            53.6 / 52.9   (+510 / 912)   108 / 105  32 / 34
    sum -> csf         30.8 / 34.0            47.6 / 51.4   (+898 / 602)   117 / 104  29 / 34
    2 * sum + 1 -> coo 29.1 / 31.5             6.3 /  5.8   (+439 / 514)   148 / 148  32 / 33
    2 * sum + 1 -> csf 30.3 / 34.4             6.9 /  7.4   (+563 / 354)   150 / 153  30 / 34

    n = 400 (64M coordinates, under 2% stored)
    sum -> coo         48.0 / 47.5            56.0 / 58.7   (+574 / 372)   233 / 127  31 / 30
    sum -> csf         35.5 / 35.5            54.2 / 53.1   (+1173 / 413)  122 / 122  29 / 29
    2 * sum + 1 -> coo 36.4 / 36.3           474.9 / 502.8  (+489 / 316)   201 / 207  32 / 32
    2 * sum + 1 -> csf 40.9 / 38.0           412.0 / 418.9  (+389 / 314)   215 / 198  33 / 31

Main's kernel for ``2 * sum + 1`` adds the materialized stack into a dense workspace of the output's every
coordinate (8 MB at n = 100, 512 MB at n = 400) and scans it: faster per call where the output is nearly dense,
ten times slower where it is not; its retry materializes the stack at each lowering (each ``compute()``). This
branch's kernels hold the terms (twice, the sort's scratch) and the first mode's starts.

With each bucket sorted by counting where its keys' span is at most 8 times its terms (at n = 100 a bucket holds
about 10k terms over a span of 10k keys; at n = 400 about 2.5k over 160k: merged as before), the same script, two
runs, ``lattice`` / ``dense ws`` (ms) and their ratio in each run; the merge sort alone (main at 46a0056, this
script run against it) beside it:

    n = 100            counted + merged                       merged only
    sum -> coo         15.2 / 113.0 (0.13)  23.2 / 82.8 (0.28)    34.1 / 68.2 (0.50)
    sum -> csf         13.6 /  49.9 (0.27)  12.8 / 45.9 (0.28)    32.0 / 47.2 (0.68)
    2 * sum + 1 -> coo 13.9 /   7.0 (1.99)  14.3 /  7.2 (2.00)    29.9 /  7.3 (4.10)
    2 * sum + 1 -> csf 13.7 /   6.5 (2.12)  14.3 /  7.4 (1.93)    33.3 /  6.5 (5.13)

    n = 400
    sum -> coo         35.0 /  77.2 (0.45)  35.3 / 82.1 (0.43)    35.8 / 73.5 (0.49)
    sum -> csf         35.5 /  53.8 (0.66)  37.6 / 58.6 (0.64)    36.6 / 54.3 (0.67)
    2 * sum + 1 -> coo 38.0 / 436.7 (0.09)  50.2 / 449.8 (0.11)   37.3 / 418.8 (0.09)
    2 * sum + 1 -> csf 37.5 / 413.8 (0.09)  38.4 / 598.8 (0.06)   39.1 / 453.9 (0.09)

At n = 100 the merge sort was most of the sorted kernel's time (about 16 to 20 of its 30 to 34 ms: 16 ascending
runs per bucket, four merge passes, each copying the bucket back, a mispredicted branch per term); counted, what
is left is the two passes of the sum's loops, placing the terms, the counting and the runs' walk, which the dense
workspace does not do (one pass adding into 8 MB, one scan of it): still about twice its time there.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}


def parts(n: int, nnz: int):
    """``(shape, coords, values)`` of two COO parts of shape ``(8, n, n, n)``, ``nnz`` entries between them."""
    rng = np.random.default_rng(1)
    shape = (8, n, n, n)
    out = []
    for _ in range(2):
        flat = np.unique(rng.integers(0, np.prod(shape), nnz // 2))
        out.append((np.array(np.unravel_index(flat, shape)), rng.random(len(flat))))
    return shape, out


def columns(n: int, nnz: int, operator: bool, out: str) -> dict:
    """Each column's call for the sum (``operator``: doubled plus 1) into ``out`` (``coo`` or ``csf``)."""
    import sparse

    import compiler as ss
    from compiler import array as xp
    shape, made = parts(n, nnz)
    A, B = (xp.asarray(ss.Tensor.from_coords(tuple(c), v, shape, "coo", name=x)) for (c, v), x in zip(made, "AB"))
    pa, pb = (sparse.COO(c, v, shape=shape) for c, v in made)
    expr = xp.sum(xp.concat([A, B]), axis=0)
    expr = expr * 2 + 1 if operator else expr
    stacked = xp.asarray(ss.Tensor.from_coords(tuple(np.concatenate([made[0][0], made[1][0] + [[8], [0], [0], [0]]],
                                                                    axis=1)),
                                               np.concatenate([v for _, v in made]), (16, n, n, n), "coo", name="M"))
    dense = xp.sum(stacked, axis=0)
    dense = (dense * 2 + 1 if operator else dense).lower(out, strategy="lattice")
    expr.lower(out, strategy="lattice")      # (built once: the next lowering loads it)
    t0 = time.perf_counter()
    kernel = expr.lower(out, strategy="lattice")
    # (what a lowering does besides building: main's retry materializes the stack here, once)
    lowered = time.perf_counter() - t0
    j = np.concatenate([c[1] for c, _ in made])
    flat = np.concatenate([c[2] * n + c[3] for c, _ in made])
    v = np.concatenate([v for _, v in made])

    def pydata():
        s = sparse.concatenate([pa, pb]).sum(axis=0)
        return s * 2 + 1 if operator else s

    def scipy_2d():
        s = sp.coo_matrix((v, (j, flat)), shape=(n, n * n)).tocsr()
        if operator:
            s.data = s.data * 2 + 1
        return s

    return {"lattice": lambda: kernel(**kernel.arguments), "dense ws": lambda: dense(**dense.arguments),
            "pydata": pydata, "scipy 2-D": scipy_2d}, lowered


def dense_of(r) -> np.ndarray:
    """A result (the lattice's Tensor or pydata's COO) as a dense array."""
    return r.to_numpy() if hasattr(r, "to_numpy") else r.todense()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    for operator in (False, True):
        for out in ("coo", "csf"):
            cols, lowered = columns(args.n, args.nnz, operator, out)
            for col in ("lattice", "dense ws"):
                if not np.allclose(dense_of(cols[col]()), dense_of(cols["pydata"]())):
                    raise SystemExit(f"{out}: the {col} result differs from pydata's")
            times = {col: [] for col in cols}
            for _ in range(args.rounds):
                for col, f in cols.items():
                    t0 = clock()
                    f()
                    times[col].append(clock() - t0)
            name = f"{'2 * sum + 1' if operator else 'sum'} -> {out}"
            cells = "  ".join(f"{col} {statistics.median(t) * 1e3:8.2f} ms" for col, t in times.items())
            ratio = statistics.median(times["lattice"]) / statistics.median(times["dense ws"])
            print(f"{name:18s} {cells}  ratio {ratio:.2f}  (lowering, built: {lowered * 1e3:.1f} ms)", flush=True)


if __name__ == "__main__":
    main()
