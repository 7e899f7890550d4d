"""Reversed slices of run lists and block lists (issue 30): the lattice's kernel walking the level from its end
against the looplets' kernel and numpy's copy of the reversed dense vector.

Rows (n = 1e6 by default): a RunList of about 1e4 runs (half of them of the fill), the SparseRunList of the
same values (its runs of the fill not stored), a SparseBlockList of about 1e4 blocks; each sliced ``[::-1]``,
``[::-3]``, ``[n-2:0:-2]`` and fused, ``x[::-1] * 2 + y`` (``y`` a SparseList of 1e4 entries); and
``A[:, ::-1]`` of a 1000 x 1000 Dense(RunList) of about 1e4 runs. Columns: ``lattice`` (its kernel as
``Array.lower`` builds it, called with its arguments: a ``convert`` step, if it has one, runs in each call),
``looplets``, and numpy's ``x[::-1].copy()`` (and the fused expression) of the dense array.

Each round times every column once, one after the other (a slow phase of the shared machine hits all of
a round); each column reports the median over the rounds. Results are checked against numpy's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_reverse_slices.py --clock cpu [--rounds 10] [--n 1000000]

Run with PYTHONPATH at a checkout of main for the lattice's kernels there (each reads its level converted to
a SparseList: the ``convert`` column says so).

Results (``--clock cpu``, n = 1e6, ms; each cell the median of three runs of the median of 10 rounds, runs
of main and of this change alternating, at a load of 8 to 14 on 2 cores; both strategies write their default
output, a SparseList of int32 coordinates; looplets and numpy: the median of all six runs):

    row                                 lattice on main (convert)  lattice  looplets  numpy
    RunList x[::-1]                     22.81                      1.14     3.73      0.40
    RunList x[::-3]                     21.04                      1.34     1.38      0.27
    RunList x[n-2:0:-2]                 21.14                      1.39     1.92      0.30
    RunList x[::-1] * 2 + y             22.18                      1.87     4.28      1.13
    SparseRunList x[::-1]                6.84                      0.85     2.80      0.40
    SparseRunList x[::-3]               13.45                      0.86     1.68      0.28
    SparseRunList x[n-2:0:-2]           15.74                      1.05     2.41      0.31
    SparseRunList x[::-1] * 2 + y        7.44                      1.24     4.34      1.15
    SparseBlockList x[::-1]             18.57                      0.70     3.40      0.40
    SparseBlockList x[::-3]             14.76                      0.92     1.40      0.29
    SparseBlockList x[n-2:0:-2]         16.79                      1.13     1.81      0.30
    SparseBlockList x[::-1] * 2 + y      8.14                      1.53     5.14      1.12
    Dense(RunList) 1000x1000 A[:, ::-1] 22.14                      1.50     2.63      1.04

The walk down reads the level as it is stored, so the conversion main ran in each call (a sort of the
entries) is gone: 5-27x faster, and faster than the looplets' kernel in every row (x[::-3] of a RunList
alike). numpy's copy of the dense reversed array stays 1.4-5x faster than the sparse kernels writing a
SparseList; at n = 1e6 the walk of a RunList visits every coordinate, the run kept beside it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}


def runs_of(n: int, runs: int, rng) -> np.ndarray:
    """A vector of ``n`` of about ``runs`` runs, every other one of the fill 0, the others of one value each."""
    cuts = np.sort(rng.choice(np.arange(1, n), size=runs - 1, replace=False))
    values = np.where(np.arange(runs) % 2 == 0, 0.0, rng.integers(1, 9, size=runs).astype(float))
    return np.repeat(values, np.diff(np.r_[0, cuts, n]))


def blocks_of(n: int, blocks: int, rng) -> np.ndarray:
    """A vector of ``n`` of about ``blocks`` blocks of contiguous stored coordinates (random values)."""
    x = runs_of(n, 2 * blocks, rng)
    return np.where(x != 0, rng.random(n) + 0.5, 0.0)


def rows(n: int):
    """``(name, {column: callable}, want)`` per row."""
    import compiler as ss
    from compiler import array as xp
    from compiler.format import Format
    from compiler.levels import Dense, Element, RunList, SparseBlockList, SparseRunList
    rng = np.random.default_rng(0)
    x_runs, x_blocks = runs_of(n, 10_000, rng), blocks_of(n, 10_000, rng)
    y = np.zeros(n)
    y[rng.choice(n, 10_000, replace=False)] = rng.random(10_000)
    Y = xp.asarray(ss.Tensor.from_numpy(y, "sparse"))
    m = int(round(n ** 0.5))
    a = runs_of(m * m, 10_000, rng).reshape(m, m)
    operands = [("RunList", x_runs, Format(RunList(Element(0.0)))),
                ("SparseRunList", x_runs, Format(SparseRunList(Element(0.0)))),
                ("SparseBlockList", x_blocks, Format(SparseBlockList(Element(0.0))))]
    exprs = [("[::-1]", lambda v, w: v[::-1]), ("[::-3]", lambda v, w: v[::-3]),
             ("[n-2:0:-2]", lambda v, w: v[n - 2:0:-2]), ("[::-1] * 2 + y", lambda v, w: v[::-1] * 2 + w)]
    out = []
    for level, x, fmt in operands:
        X = xp.asarray(ss.Tensor.from_numpy(x, fmt))
        for name, f in exprs:
            out.append((f"{level} x{name}", columns(f(X, Y), lambda f=f, x=x: f(x, y).copy()), f(x, y)))
    A = xp.asarray(ss.Tensor.from_numpy(a, Format(Dense(RunList(Element(0.0))))))
    out.append((f"Dense(RunList) {m}x{m} A[:, ::-1]", columns(A[:, ::-1], lambda: a[:, ::-1].copy()), a[:, ::-1]))
    return out


def columns(expr, dense) -> dict:
    """The lattice's and the looplets' kernels of ``expr`` (None where a strategy refuses it) and numpy's."""
    cols = {}
    for strategy in ("lattice", "looplets"):
        try:
            k = expr.lower(strategy=strategy)
        except Exception as e:   # (a strategy that refuses the expression: its column says so)
            cols[strategy] = (None, f"refused: {type(e).__name__}")
            continue
        note = "convert" if k.trace.find("convert") else ""
        cols[strategy] = (lambda k=k: k(**k.arguments), note)
    cols["numpy"] = (dense, "")
    return cols


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    print(f"n = {args.n}, median of {args.rounds} rounds ({args.clock} clock), ms")
    for name, cols, want in rows(args.n):
        times = {c: [] for c, (f, _) in cols.items() if f is not None}
        for c, (f, _) in cols.items():    # (checked once, and built outside the timing)
            if f is not None:
                got = f()
                got = got.to_numpy() if hasattr(got, "to_numpy") else got
                np.testing.assert_array_equal(got, want, err_msg=f"{name}: {c}")
        for _ in range(args.rounds):
            for c, (f, _) in cols.items():
                if f is not None:
                    t0 = clock()
                    f()
                    times[c].append(clock() - t0)
        cells = [f"{c} {np.median(times[c]) * 1e3:8.2f}" + (f" ({note})" if note else "") if f is not None
                 else f"{c} {note}" for c, (f, note) in cols.items()]
        print(f"{name:40s} " + "   ".join(cells), flush=True)


if __name__ == "__main__":
    main()
