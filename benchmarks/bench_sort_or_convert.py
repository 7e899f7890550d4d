"""A permuted 3-D product into a CSF or COO, the lattice's two ways to build it when no loop order walks every
tensor as stored: read one input in another mode order (converted before each call, ``asformat``) and append the
output in its own order, or run the loops in the inputs' order and sort the output's entries in the kernel
(compiler/lattice/sorted_output.py). The plan picks the sort where it costs less (``sort_over_converting``).

Columns (CPU ms per call, median of ``--rounds``, the two kernels alternated): ``convert``, the loop order that
reads an input converted; ``sort``, the loop order that sorts the output; then the way the plan chose.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_sort_or_convert.py [--out coo] [--rounds 5]

Results (a3 120 x 120 x 360 CSF at 2%, b 360 x 360 at 2%, c3 dense and finite; ``--out csf``, shared 2-core
machine, medians of 5; coo alike):

    permute_dims(a3 @ b, (2, 0, 1)), b csr    convert 271 (b as csc: all of a3 walked at every i)  sort 34  chosen sort
    permute_dims(a3 @ b, (2, 0, 1)), b coo    convert 272                                          sort 46  chosen sort
    permute_dims(a3 @ b, (1, 0, 2)), b csr    convert 11 (a3 as its (1, 0, 2))                      sort 16  chosen convert
    permute_dims(a3 @ b, (1, 0, 2)), b coo    convert 25                                           sort 41  chosen convert
    permute_dims(a3 * c3, (2, 0, 1))          convert 9.5                                          sort 2.2 chosen sort
    permute_dims(a3 * c3, (1, 0, 2))          convert 7.3                                          sort 1.3 chosen sort
    permute_dims(a3 + c3, (1, 0, 2))          convert 33 (5.2M entries, every one of out's)        sort 134 chosen convert
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

P201, P102 = "out[i, j, k] = sum[l](A[j, k, l] * B[l, i])", "out[i, j, k] = sum[l](A[j, i, l] * B[l, k])"
#: name: (program, second operand, the loop order converting an input, the loop order sorting the output)
CASES = {
    "permute_dims(a3 @ b, (2, 0, 1)), b csr": (P201, "csr", "ijkl", "jkli"),
    "permute_dims(a3 @ b, (2, 0, 1)), b coo": (P201, "coo", "ijkl", "jkli"),
    "permute_dims(a3 @ b, (1, 0, 2)), b csr": (P102, "csr", "ijlk", "jilk"),
    "permute_dims(a3 @ b, (1, 0, 2)), b coo": (P102, "coo", "ijlk", "jilk"),
    "permute_dims(a3 * c3, (2, 0, 1))": ("out[i, j, k] = A[j, k, i] * C[j, k, i]", "dense", "ijk", "jki"),
    "permute_dims(a3 * c3, (1, 0, 2))": ("out[i, j, k] = A[j, i, k] * C[j, i, k]", "dense", "ijk", "jik"),
    "permute_dims(a3 + c3, (1, 0, 2))": ("out[i, j, k] = A[j, i, k] + C[j, i, k]", "dense", "ijk", "jik"),
}


def random_tensor(ss, rng, shape, density, fmt):
    """A tensor of ``shape`` with ``density`` of its coordinates stored (standard normal values) in ``fmt``."""
    size = int(np.prod(shape))
    flat = np.sort(rng.choice(size, int(size * density), replace=False))
    return ss.Tensor.from_coords(np.array(np.unravel_index(flat, shape)), rng.standard_normal(len(flat)), shape,
                                 format=fmt)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", choices=["csf", "coo"], default="csf")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import compiler as ss
    rng = np.random.default_rng(0)
    a = random_tensor(ss, rng, (120, 120, 360), 0.02, "csf")
    b = random_tensor(ss, rng, (360, 360), 0.02, "csr")
    seconds = {"csr": b, "coo": ss.Tensor.from_numpy(b.to_numpy(), "coo"),
               "dense": ss.Tensor.from_numpy(rng.standard_normal((120, 120, 360)), "dense")}
    out = ss.parse_format(args.out, ndim=3)
    for name, (program, second, converting, sorting) in CASES.items():
        tensors = {"A": a, ("B" if "B[" in program else "C"): seconds[second]}
        kernels = {way: ss.lower(program, strategy="lattice", options={"order": list(order)}, out=out, **tensors)
                   for way, order in (("convert", converting), ("sort", sorting))}
        chosen = ss.lower(program, strategy="lattice", out=out, **tensors)
        results = [k(**tensors) for k in kernels.values()]
        if not np.array_equal(results[0].to_numpy(), results[1].to_numpy()):
            raise SystemExit(f"{name}: the two kernels differ")
        times = {way: [] for way in kernels}
        for _ in range(args.rounds):
            for way, k in kernels.items():
                t0 = time.process_time()
                k(**tensors)
                times[way].append(time.process_time() - t0)
        way = "convert" if "convert" in chosen.trace.stages() else "sort"
        print(f"{name:42s} " + "  ".join(f"{w} {np.median(t) * 1e3:7.1f} ms" for w, t in times.items())
              + f"  chosen {way}", flush=True)


if __name__ == "__main__":
    main()
