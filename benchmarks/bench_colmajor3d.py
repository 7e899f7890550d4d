"""A 3-D column-major flatten into a sparse vector, ``xp.permute_dims(a3, (2, 1, 0)).reshape(-1)`` of a CSF ``a3``
(issue 30, compiler.lattice.seqflatsort), timed in fresh processes.

The kernel's workspace is fresh memory at each call where glibc has returned it to the system (it trims the top
of its heap past a threshold that grows with the largest block a process has freed), and each page of it then
faults on its first touch: so each size runs in processes of its own, one per checkout in turn (this one, and
``--against DIR ...``, other checkouts' roots, e.g. a ``git archive`` of main), ``--runs`` times. Each process builds
``a3`` (n³ at a density, its coordinates drawn slab by slab), lowers the kernel (from the cache), checks its result against numpy's and times ``--calls`` calls (CPU clock):
the median call, the first, and the median call's page faults (getrusage's minor faults). ``--trim`` returns the
heap's free memory to the system before each call (``malloc_trim(0)``): every call's workspace is fresh pages,
as where glibc trims it itself. Medians over the runs.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_colmajor3d.py --against /tmp/main [--runs 3] [--trim]

Results (ms, CPU clock; each a median over 3 processes per checkout, the checkouts in turn; the shared 2-core
machine at a load of 15 to 18). now: this change, the counted entries placed straight at their key's slot, int32
flat coordinates and counts; main (4c1261a): placed in the loops' order, then counted into a scratch copy (four
arrays of the entries); before (6aca6f0): a counter per key up to 2^16 keys, merge-sorted past them:

    size, density   median call: now / main / before   first call: now / main / before   faults a call (--trim)
    100³, 5%        0.283 / 0.448 / 0.497              1.20 / 2.10 / 1.62
                    0.294 / 0.413 / 0.404              1.22 / 1.76 / 1.45
      --trim        0.840 / 1.434 / 1.118              1.64 / 2.10 / 1.74                301 / 555 / 362
    300³, 5%        13.2 / 16.9 / 121.6                14.0 / 19.1 / 123.0
                    14.0 / 18.5 / 126.2                14.8 / 18.0 / 126.5
      --trim        17.2 / 25.8 / 129.5                17.7 / 25.3 / 130.3               1120 / 2141 / 1695
    300³, 0.2%      0.489 / 0.604 / 5.41               1.80 / 2.81 / 6.71
                    0.487 / 0.555 / 5.46               1.53 / 2.63 / 6.73
      --trim        1.35 / 2.32 / 6.42                 2.09 / 2.74 / 7.51                405 / 756 / 580

Without ``--trim`` no call after the first faulted in any checkout here (glibc raises its trim threshold to twice
the largest block a process has freed, and building ``a3`` freed blocks of up to 1.2 MB); the faults of ``--trim`` are what each call pays
where the workspace goes back to the system, the output's own pages among them (150 at 100³, 5%).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIZES = ((100, 0.05, 20), (300, 0.05, 7), (300, 0.002, 20))


def child(n: int, density: float, calls: int, trim: bool) -> dict:
    """One process's measurement of the flatten of an n³ CSF at ``density`` (see the module)."""
    import compiler as ss
    from compiler import array as xp
    rng = np.random.default_rng(0)
    slab = n * n
    flat = np.concatenate([s * slab + np.sort(rng.choice(slab, int(slab * density), replace=False))
                           for s in range(n)])
    coords = np.array(np.unravel_index(flat, (n, n, n)))
    vals = rng.standard_normal(len(flat))
    A = ss.Tensor.from_coords(coords, vals, (n, n, n), "csf")
    kernel = xp.permute_dims(xp.asarray(A), (2, 1, 0)).reshape(-1).lower(strategy="lattice", format="sparse")
    args = kernel.arguments
    libc = ctypes.CDLL("libc.so.6")
    times, faults = [], []
    for _ in range(calls):
        if trim:
            libc.malloc_trim(0)
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.process_time()
        got = kernel(**args)
        times.append(time.process_time() - t0)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        if len(times) == 1:
            m = np.ravel_multi_index(coords[::-1], (n, n, n))
            order = np.argsort(m)
            at, values = got.to_coords()
            if not (np.array_equal(at[0], m[order]) and np.array_equal(values, vals[order])):
                raise SystemExit(f"{n}^3 at {density}: the kernel's result differs from numpy's")
        del got
    return {"median": statistics.median(times) * 1e3, "first": times[0] * 1e3, "faults": statistics.median(faults)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", nargs="*", default=[], help="other checkouts' roots, timed in turn with this one")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--trim", action="store_true", help="malloc_trim(0) before each call")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        n, density, calls = args.child
        print(json.dumps(child(int(n), float(density), int(calls), args.trim)))
        return
    here = Path(__file__).resolve().parents[1]
    trees = {"this": here, **{Path(d).name: Path(d).resolve() for d in args.against}}
    env = {**os.environ, "SPARSESCOPE_CACHE_DIR": os.environ.get("SPARSESCOPE_CACHE_DIR")
           or tempfile.mkdtemp(prefix="sparsescope-bench-")}
    for n, density, calls in SIZES:
        runs = {name: [] for name in trees}
        for _ in range(args.runs):
            for name, root in trees.items():
                cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(n), str(density), str(calls)]
                out = subprocess.run(cmd + (["--trim"] if args.trim else []), env={**env, "PYTHONPATH": str(root)},
                                     capture_output=True, text=True, check=True)
                runs[name].append(json.loads(out.stdout.splitlines()[-1]))
        cells = "   ".join(f"{name}: median {statistics.median(r['median'] for r in rs):.3f} ms, first "
                           f"{statistics.median(r['first'] for r in rs):.3f} ms, faults "
                           f"{statistics.median(r['faults'] for r in rs):.0f}" for name, rs in runs.items())
        print(f"{n}^3 at {density:g}{' (trim)' if args.trim else ''}   {cells}", flush=True)


if __name__ == "__main__":
    main()
