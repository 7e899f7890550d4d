"""Sums of a 3-D tensor whose lattice plan reads the tensor converted (``asformat`` before each call), against the
same sum in one kernel, its terms bucketed by the output's first stored mode (compiler/lattice/bucketed_sums.py):
``bucket`` sums each row's terms in a dense row workspace and sorts its columns
(compiler/lattice/seqsumscatter.py, what the lattice chooses), ``sort`` sorts each row's terms by column and adds
runs of equal columns (compiler/lattice/seqsumsort.py's buckets, taken here for a matrix too).

Columns (CPU ms per call, median of ``--rounds``, the kernels alternated): ``convert``, the plan's kernel reading
``a3`` converted; ``bucket``; ``sort``; then the way ``compute`` chose.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_sum_buckets.py [--rounds 7] [--shape 120 120 360] [--density 0.02]

Results (a3 CSF, ``--clock cpu``, a shared 2-core machine; medians of 7 (5 for the other shapes), three runs of
the first shape alternated, each cell the median of the three):

    a3 120 x 120 x 360 at 2% (311k entries)   convert   bucket   sort    chosen
    sum(a3, axis=0) into csr                    10.7      1.02    1.10    bucket
    sum(a3, axis=0) into csc                    12.2      1.26    1.21    bucket
    sum(a3, axis=0) into coo                    11.4      1.05    1.13    bucket
    sum(a3, axis=1) into csc                    13.8      1.29    1.49    bucket
    sum(a3, axis=0) into dcsr                   12.6      1.90    1.44    bucket (2026-12-02, another load)
    a3 360 x 120 x 120 at 0.2%, axis=0 csr / csc / coo, axis=1 csc:
        convert 2.1 / 2.3 / 1.9 / 1.9, bucket 0.26 / 0.25 / 0.25 / 0.19, sort 0.21 / 0.18 / 0.17 / 0.14
    a3 8 x 3000 x 3000 at 0.2%:
        convert 9.0 / 12.0 / 9.5 / 10.7, bucket 3.5 / 3.9 / 3.9 / 1.6, sort 3.9 / 4.8 / 4.4 / 1.4
    a3 3000 x 3000 x 8 at 0.2%:
        convert 19.0 / 15.6 / 16.5 / 14.4, bucket 3.1 / 1.1 / 2.5 / 1.2, sort 2.7 / 1.6 / 2.1 / 1.1

The conversion (a sort of every entry of ``a3`` in Python's ``asformat``) costs 3 to 14 times either kernel, so
the lattice buckets the terms wherever the sequence lowering takes the statement. Bucketing into a dense row
workspace and sorting the terms by column are within the machine's noise of each other (each wins some), so
a matrix keeps the row workspace it had (:mod:`compiler.lattice.seqsumscatter`). A DCSR has no row workspace:
its ``bucket`` is the sorted buckets too (:func:`compiler.lattice.seqsumsort.sorts_sums`), the same kernel as
``sort`` (the two columns differ by the machine's noise); scipy's n-D ``coo_array.sum(axis=0)`` of the same
``a3`` takes 0.75 ms, into a dense result.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

#: name: (axis, output format)
CASES = {
    "sum(a3, axis=0) into csr": (0, "csr"),
    "sum(a3, axis=0) into csc": (0, "csc"),
    "sum(a3, axis=0) into coo": (0, "coo"),
    "sum(a3, axis=1) into csc": (1, "csc"),
    "sum(a3, axis=0) into dcsr": (0, "dcsr"),
}


def random_tensor(ss, rng, shape, density, fmt):
    """A tensor of ``shape`` with ``density`` of its coordinates stored (standard normal values) in ``fmt``."""
    size = int(np.prod(shape))
    flat = np.sort(rng.choice(size, int(size * density), replace=False))
    return ss.Tensor.from_coords(np.array(np.unravel_index(flat, shape)), rng.standard_normal(len(flat)), shape,
                                 format=fmt)


def kernels(ss, program: str, a3, out: str) -> dict:
    """The three kernels of ``program`` over ``a3`` into ``out``: converting, bucketed, sorted."""
    from compiler.lattice import seqsumsort
    from compiler.trace import Trace
    shapes = {"shapes": (("A", tuple(a3.shape)),)}
    found = {"convert": ss.lower(program, strategy="lattice", A=a3, out=out),
             "bucket": ss.lower(program, strategy="lattice", A=a3, out=out, options=shapes)}
    given = seqsumsort.sorts_sums
    seqsumsort.sorts_sums = lambda fmt: fmt.ndim >= 2 and not fmt.is_dense   # (a matrix's terms sorted too)
    try:
        found["sort"] = ss.lower(program, strategy="lattice", A=a3, out=out, options=shapes, trace=Trace())
    finally:
        seqsumsort.sorts_sums = given
    return found


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    ap.add_argument("--shape", type=int, nargs=3, default=(120, 120, 360))
    ap.add_argument("--density", type=float, default=0.02)
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import compiler as ss
    from compiler import array as xp
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    rng = np.random.default_rng(0)
    a3 = random_tensor(ss, rng, tuple(args.shape), args.density, "csf")
    for name, (axis, out) in CASES.items():
        kept = "ijk".replace("ijk"[axis], "")
        program = f"out[{', '.join(kept)}] = sum[{'ijk'[axis]}](A[i, j, k])"
        found = kernels(ss, program, a3, out)
        want = a3.to_numpy().sum(axis=axis)
        for way, k in found.items():
            if not np.allclose(k(A=a3).to_numpy(), want):
                raise SystemExit(f"{name}: the {way} kernel is wrong")
            if (way == "convert") != bool(k.trace.find("convert")):
                raise SystemExit(f"{name}: the {way} kernel {'does not convert' if way == 'convert' else 'converts'}")
        times = {way: [] for way in found}
        for _ in range(args.rounds):
            for way, k in found.items():
                t0 = clock()
                k(A=a3)
                times[way].append(clock() - t0)
        chosen = xp.sum(xp.asarray(a3), axis=axis).lower(out, strategy="lattice")
        way = "convert" if chosen.trace.find("convert") else "bucket"
        print(f"{name:28s} " + "  ".join(f"{w} {np.median(t) * 1e3:7.2f} ms" for w, t in times.items())
              + f"  chosen {way}", flush=True)


if __name__ == "__main__":
    main()
