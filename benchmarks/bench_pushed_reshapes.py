"""A reshape of an elementwise operator over 3-D sparse tensors (compiler/array/pushed_reshapes.py): the lattice
refuses ``(a3 + b3).reshape(p, q)`` as written (a split of a product over a union), so ``apart`` computes
``a3 + b3`` by its own kernel and reshapes its stored entries in Python (compiler.array.shapeops), where ``one``
lowers it as ``a3.reshape(p, q) + b3.reshape(p, q)``, one kernel reading both as stored; ``scipy`` is scipy's
n-D ``coo_array``, ``(a + b).reshape((p, q))`` (COO in and out). ``(a3 + 1).reshape(p, q)`` the same way, no
scipy column (a sparse array plus a scalar is dense there).

Columns (CPU ms per call of ``compute()`` into COO, everything it does included, the kernels cached; ``kernel``:
a call of ``one``'s lowered kernel alone, without the front end's ~3 ms of building and looking up the statement;
median of ``--rounds``, the ways alternated):

    PYTHONPATH=. .venv/bin/python benchmarks/bench_pushed_reshapes.py [--rounds 9] [--shape 60 200 300] [--density 0.01]

Results (a3, b3 CSF, 60 x 200 x 300 at 1% (36k entries each) reshaped to 8000 x 450, ``--clock cpu``, a shared
2-core machine under load; the medians of three runs alternated):

    (a3 + b3).reshape    apart 8.2   one 4.8   kernel 1.22   scipy 1.16
    (a3 + 1).reshape     apart 6.3   one 3.3   kernel 0.47

One kernel halves the call (the materialized sum and the Python reshape of its entries gone); its kernel is as
fast as scipy's COO add and reshape, the rest of ``one`` is the front end's per-call overhead.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from bench_sum_buckets import random_tensor


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    ap.add_argument("--shape", type=int, nargs=3, default=(60, 200, 300))
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--new", type=int, nargs=2, default=(8000, 450),
                    help="the shape reshaped to (one whose axes no pieces of the old shape's make, which "
                         "compiler.array.reshapes.refined_group would split first)")
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import scipy.sparse as sp
    import compiler as ss
    from compiler import array as xp
    from compiler.array import fuse
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    rng = np.random.default_rng(0)
    shape = tuple(args.shape)
    new = tuple(args.new)
    a3, b3 = (random_tensor(ss, rng, shape, args.density, "csf") for _ in range(2))
    A, B = xp.asarray(a3), xp.asarray(b3)
    a, b = a3.to_numpy(), b3.to_numpy()
    sa, sb = sp.coo_array(a), sp.coo_array(b)
    pushed = fuse.reshapes_pushed
    cases = {"(a3 + b3).reshape": (lambda: (A + B).reshape(new), (a + b).reshape(new),
                                   lambda: (sa + sb).reshape(new)),
             "(a3 + 1).reshape": (lambda: (A + 1.0).reshape(new), (a + 1.0).reshape(new), None)}
    for name, (expr, want, scipy_way) in cases.items():
        def apart(expr=expr):
            fuse.reshapes_pushed = lambda node: None      # (as before compiler/array/pushed_reshapes.py)
            try:
                return expr().compute("coo", strategy="lattice")
            finally:
                fuse.reshapes_pushed = pushed
        kernel = expr().lower("coo", strategy="lattice")
        ways = {"apart": apart, "one": lambda expr=expr: expr().compute("coo", strategy="lattice"),
                "kernel": kernel}
        if scipy_way is not None:
            ways["scipy"] = scipy_way
        fuse.reshapes_pushed = lambda node: None
        try:
            materialized = bool(expr().lower("coo", strategy="lattice").trace.find("materialize"))
        finally:
            fuse.reshapes_pushed = pushed
        if not materialized or expr().lower("coo", strategy="lattice").trace.find("materialize"):
            raise SystemExit(f"{name} to {new}: the lattice takes it as written, or refuses it pushed too")
        for way, f in ways.items():
            got = f()
            got = got.toarray() if way == "scipy" else got.to_numpy()
            if not np.allclose(got, want):
                raise SystemExit(f"{name}: {way} is wrong")
        times = {way: [] for way in ways}
        for _ in range(args.rounds):
            for way, f in ways.items():
                t0 = clock()
                f()
                times[way].append(clock() - t0)
        print(f"{name:20s} " + "  ".join(f"{w} {np.median(t) * 1e3:7.2f} ms" for w, t in times.items()), flush=True)


if __name__ == "__main__":
    main()
