"""A concatenation of 3-D CSF parts into a COO stored with the concatenated mode after another (issue 30):
``permute_dims(concat([a, b], axis=0), perm)`` into the default COO, every entry sorted by the lattice's kernel
(compiler.lattice.seqentrysort), against what the array front end did before and numpy/pydata.

Columns (parts of ``shape`` each, ``density`` of them stored: 2 · density · prod(shape) entries):

- ``lattice kernel``: the lattice's kernel called (the loops in the parts' order, each entry bucketed by the
  output's first stored mode, each bucket sorted by the others); absent where the lattice has no such kernel;
- ``lattice compute``: ``expr.compute(strategy="lattice")`` end to end (lowering from lower()'s cache, then the
  call); before this change the array front end retried the statement with its concatenation materialized, an
  input converted (``retry``, ``materialize``, ``convert`` steps): run with ``PYTHONPATH`` at such a checkout to
  time that route;
- ``default compute``: ``expr.compute()`` end to end (before: the looplets' kernel);
- ``numpy lexsort``: the parts' coordinates concatenated, permuted and lexsorted (what a hand-written route does);
- ``pydata``: ``sparse.concatenate`` + ``transpose`` + ``asformat("gcxs")`` (pydata's COO transpose leaves its
  entries unsorted; GCXS compressed on the first axis sorts them as the COO is).

Each round times every column once; each column keeps its minimum over the rounds. The results are checked
against numpy's (entries in order).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_entry_sort.py --clock cpu [--perm 2 0 1]

Results (parts of 50 × 200 × 1000, 5%: 1M entries, ``--clock cpu``, min of 3 rounds, ms; median of 3 runs each,
the checkout before this change and after alternated, on the shared 2-core machine at a load of 20; numpy and
pydata: median of all 6 runs):

    perm (2, 0, 1) (each bucket filled in key order)  before: lattice compute 225 (retry/materialize/convert),
        default compute 620 (looplets); after: lattice kernel 10.4, lattice compute 26.2, default compute 26.0
        (the lattice's); numpy lexsort 143, pydata 168
    perm (2, 1, 0) (each bucket merge-sorted)         before: lattice compute 227, default compute 2272;
        after: lattice kernel 56.3, lattice compute 73.5, default compute 73.2; numpy lexsort 137, pydata 190

The kernel is 3x (2, 1, 0) to 9x (2, 0, 1) faster than the array front end's retry with the concatenation
materialized and an input converted, end to end, and 2x to 6x faster than numpy's lexsort or pydata.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}


def part(rng, shape, density):
    """Sorted unique coordinates (3 × nnz) and values of a random 3-D tensor of ``shape``."""
    size = int(np.prod(shape))
    flat = np.sort(rng.choice(size, int(size * density), replace=False))
    return np.array(np.unravel_index(flat, shape)), rng.standard_normal(len(flat))


def lexsorted(parts, axis, perm):
    """The entries of ``transpose(concatenate(parts, axis), perm)``, as (coordinates, values) in storage order."""
    coords, offset = [], 0
    for c, _, shape in parts:
        c = c.copy()
        c[axis] += offset
        offset += shape[axis]
        coords.append(c)
    c = np.concatenate(coords, axis=1)[list(perm)]
    v = np.concatenate([p[1] for p in parts])
    order = np.lexsort(c[::-1])
    return c[:, order], v[order]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", type=int, nargs=3, default=[50, 200, 1000])
    ap.add_argument("--density", type=float, default=0.05)
    ap.add_argument("--perm", type=int, nargs=3, default=[2, 0, 1])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-pydata", action="store_true")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = ap.parse_args(argv)
    clock, perm, shape = CLOCK[args.clock], tuple(args.perm), tuple(args.shape)
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import compiler as ss
    from compiler import array as xp
    rng = np.random.default_rng(0)
    raw = [(*part(rng, shape, args.density), shape) for _ in range(2)]
    csf = ss.parse_format("csf", ndim=3)
    a, b = (ss.Tensor.from_coords(c, v, s, format=csf) for c, v, s in raw)
    expr = xp.permute_dims(xp.concat([xp.asarray(a), xp.asarray(b)], axis=0), perm)
    want = lexsorted(raw, 0, perm)
    k = expr.lower(strategy="lattice")
    stages = set(k.trace.stages())
    columns = {}
    if not {"retry", "materialize", "convert"} & stages:
        columns["lattice kernel"] = k
    columns["lattice compute"] = lambda: expr.compute(strategy="lattice")
    columns["default compute"] = lambda: expr.compute()
    for name, f in columns.items():
        got = f()
        if got.nnz != len(want[1]) or not np.array_equal(np.asarray(got.vals)[:got.nnz], want[1]):
            raise SystemExit(f"{name} differs from numpy")
    columns["numpy lexsort"] = lambda: lexsorted(raw, 0, perm)
    if not args.no_pydata:
        import sparse
        pa, pb = (sparse.COO(c, v, shape=s) for c, v, s in raw)
        columns["pydata"] = lambda: sparse.concatenate([pa, pb], axis=0).transpose(perm).asformat(
            "gcxs", compressed_axes=[0])
    best = dict.fromkeys(columns, float("inf"))
    for _ in range(args.rounds):
        for name, f in columns.items():
            t0 = clock()
            f()
            best[name] = min(best[name], clock() - t0)
    route = "direct" if "lattice kernel" in columns else "retry/materialize"
    print(f"{len(want[1])} entries, perm {perm}, lattice route {route}: "
          + "  ".join(f"{n} {t * 1e3:8.2f} ms" for n, t in best.items()), flush=True)


if __name__ == "__main__":
    main()
