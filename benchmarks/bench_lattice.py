"""Lattice-strategy kernels side by side with scipy.sparse and pydata/sparse, on the same inputs.

Kernels (the issue's sizes): SpMV, CSR+CSR and CSR∘CSR into CSR on a 100k x 100k
matrix with 1M non-zeros, and SpGEMM on a 20k x 20k matrix with 100k non-zeros.
The contenders of one kernel are timed *interleaved*: each round times every contender
(enough calls to take ``min_time``), so a slow phase of the machine hits all of them;
the line shows the median per-call time over the rounds of:

* ``kernel``: the generated C called directly on the arrays (what the compiler controls);
* ``call``: the public ``Kernel(**tensors)`` call, which also builds and validates the
  result Tensor (the runtime's cost);
* scipy.sparse and pydata/sparse (``sparse.GCXS`` in CSR layout; COO where GCXS lacks it),

and the ratios ``kernel / scipy`` and ``call / scipy`` (<= 1.0: as fast as scipy or faster;
the median of the per-round ratios) and ``pydata / call`` (speed-up over pydata).
CSR+CSR, CSR∘CSR and SpGEMM are also timed with each contender alone in a fresh process
(lines "fresh proc"): there the allocator may hand out new memory from the system for each
large output, whose first touch costs page faults (the interleaved lines see memory the
allocator kept). The generated code asks for 2 MB pages under its large outputs, as numpy
does for its arrays, and a first buffer holds just the room reserved for it.
The main lines give every contender int64 indices. scipy itself picks int32 indices for
matrices this size, which makes its SpGEMM faster (and its output smaller: fewer page
faults when the allocator hands memory back to the system between calls), so SpMV and
SpGEMM are also timed with int32 indices on both sides (lines "int32 indices").
scipy's SpGEMM leaves its column indices unsorted; ours are sorted (the format requires it),
by :func:`compiler.imperative.sorting.sort_coordinates_ir`: a row's workspace coordinate
list of more than 16 entries is bit-sorted (marked in a bitmap of 64-bit words, read back
in order) when the columns are at most 4096 per entry, a shorter one is rank-sorted
(branch-free counts), a long one in a wide extent has its ascending runs merged, and one
holding 1/16 of the columns or more is rebuilt by scanning the bitmap. Sorting is a large
part of our SpGEMM's time, so SpGEMM is also timed against scipy followed by
``sort_indices()`` (the same canonical result; line "scipy sorted").
The output's room is reserved once, from a count of the products made before the rows
(:mod:`compiler.lattice.reserve`), instead of doubling as rows are appended. SpGEMM is
also timed with two-phase assembly (``options={"assembly": "two-phase"}``: the loops run
twice, so it is expected to be slower; it allocates the output exactly), and on all cores
(``parallelize(i)``: two-phase on threads, each row counting its products, a bound of its
entries, then filling its entries from its start, a last pass moving the rows down over the
room they left; each thread with its own workspace; scipy and pydata run on one core), as
are CSR+CSR (each row counting its entries exactly by a merge of the two rows) and CSR∘CSR
(each row bounded by its shorter row: no merge to count). Every SpGEMM kernel fetches the
row of B that A's entry 4 places ahead picks (:mod:`compiler.imperative.prefetch`). SpMV
also runs on all cores, with int64 and with int32 indices, and a CSC matrix by columns on all
cores (the threads update the same elements of y: ``races="atomics"``, an atomic add per
entry, and ``races="copies"``, a copy of y per thread added into y after the loop; against
scipy's CSC SpMV). ``A + A^T`` and SpGEMM ``A A^T`` read A twice: as itself and as a copy converted to CSC at each
call (lines "A + A^T", "SpGEMM, A A^T"; "kernel" leaves the conversion out, "call" includes it).
CSC ``y = A x + z`` is a sequence, ``y = z`` then the columns add into ``y``
(no workspace), on one thread and on all with a copy of y per thread, against scipy's ``A @ x + z``;
so is CSC ``y = A x + B z``, ``y = 0`` then each matrix's columns (against ``A @ x + B @ z``). Then SpMV's
effective bandwidth
next to the machine's streaming bandwidth (a large copy, by numpy on one thread and by a
generated parallel copy on all), and the bandwidth 10x over pydata/sparse would need; then
where SpMV's time goes (lines after "SpMV's time by A's pattern"): the same kernel on matrices
whose rows all hold the same number of entries, or whose columns fall in ``[0, 1000)``, or both.
Hypersparse SpGEMM (line "SpGEMM hypersparse"): DCSR matrices of 10^7 rows and columns with
100k entries each, against scipy's CSR (whose row arrays span all 10^7 rows; pydata/sparse's
GCXS product of these did not finish in 4 minutes, so it is not timed); the kernel gallops through B's stored rows, and the call renumbers the columns by
those B stores, so its workspace is not 10^7 long ("kernel" is the call here).
Reductions against scipy's own (``A.sum()``, ``A.max()``, ``A.max(axis=1)``, ``A.max(axis=0)``): the sum
and the max of every entry get one flat loop over A's values by themselves (fuse + pos), the
max folding the fill 0 in once after it, in SIMD lanes with a flag for NaN; the sum also
runs on threads (an OpenMP reduction); the row max folds the fill in once per row that
misses a column, instead of sweeping all 100k columns of every row; the column max counts,
per column, the rows that stored an entry there, and folds the fill into the columns that
missed one (lines "sum of all entries", "max of all entries", "row max", "column max").
A sum of four CSR matrices (3000 x 3000, 200k entries each) into a dense matrix runs as a
sequence, one loop nest per term (line "4 CSR into dense"), on one thread and on all (each
nest's row loop on the threads); against scipy's ``(B + C + D + E).toarray()`` (and pydata/sparse's
``todense()``), and against
the same kernel merged in one loop nest (line "4 CSR, merged": 15 cases per row).

A Bellman-Ford step ``y[i] = min[j](W[i, j] + d[j])`` over a CSR W stored around +inf (20k x 20k,
100k edges) visits only W's edges when d holds no NaN or -inf (``inf + d[j]`` is inf), against
numpy on scipy's arrays (``minimum.reduceat`` of ``W.data + d[W.indices]``), and the same kernel's
exact path, lowered for a d holding NaN, which visits every (i, j) pair (line "BF step, exact path").

Output formats (lines "C = A + B into ..."): CSR + CSR (2000 x 2000, 100k entries each, about 200k
in the sum; for SparsePoint and SparseInterval, which hold one entry per row, 100k x 100k with one
entry per row, in the same column in both) into each output format the lattice strategy once built as a SparseList stand-in
and converted after the call (``Tensor.asformat``): "stand-in" is the kernel into the stand-in
alone (CSR, or DCSR for ``SparseList(Dense)``), "old path" that kernel and the conversion,
"call" the kernel lowered for the format asked (``native``: assembled by the kernel itself,
TACO's ``{sparse, dense}`` blocks for ``SparseList(Dense)``, a SparseByteMap's entries marked and
stored in their slots (under Dense levels, a SparseList or a SparseHash), a SparseHash's keys inserted
in its table after the loops (there too), a SparseBand's gaps filled as it appends, a SparseBlockList's
blocks started at each gap, a RunList's, SparseRunList's or SparseInterval's entries appended as runs, a
SparsePoint's as a SparseList's, a block of Dense slots per position a SparseByteMap, SparseBand or
SparseBlockList keeps over Dense levels (``SparseBand(Dense)``: rows as a band, each stored row a
block of values), a RunList's or SparseRunList's runs under a SparseList (each row's closed as the
row is kept), a SparseHash's block of Dense slots per entry (``SparseHash(Dense)``), a SparseRunList's
rows above a SparseList or Dense, each kept row its own run, a SparseByteMap's rows over a
SparseList, a fiber per slot, a RunList's over a SparseList (its gaps runs of the fill); else the
stand-in and conversion). The lines "... (banded)" add two
banded matrices (2000 x 2000, 51 diagonals, a third of the band's entries the fill) into the band and
block formats, which suit them.

    .venv/bin/python benchmarks/bench_lattice.py [--small] [--only=spmv,add,mul,spgemm,hyper,reduce,sums,bellman,outputs]
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from compiler import Tensor, Trace, binding, lower  # noqa: E402
from compiler.backend.build import openmp_support  # noqa: E402
from compiler.format import csc, csr, dcsr, dense  # noqa: E402


def interleaved(contenders: dict, rounds=9, min_time=0.1) -> dict:
    """Per-call times of each contender, ``{name: [time per round]}``, timed round-robin."""
    numbers = {}
    for name, f in contenders.items():
        f()
        t0 = time.perf_counter()
        f()
        one = time.perf_counter() - t0
        numbers[name] = max(1, int(min_time / max(one, 1e-7)))
    times = {name: [] for name in contenders}
    for r in range(rounds):
        names = list(contenders) if r % 2 == 0 else list(reversed(contenders))
        for name in names:
            f, number = contenders[name], numbers[name]
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            times[name].append((time.perf_counter() - t0) / number)
    return times


def as_int32(m):
    """``m`` with int32 indices, scipy's own choice for matrices of this size."""
    m = m.copy()
    m.indices, m.indptr = m.indices.astype(np.int32), m.indptr.astype(np.int32)
    return m


def random_csr(n, nnz, rng):
    rows = rng.integers(0, n, nnz)
    cols = rng.integers(0, n, nnz)
    m = sp.csr_matrix((rng.random(nnz) + 0.5, (rows, cols)), shape=(n, n))
    m.sum_duplicates()
    m.sort_indices()
    m.indices = m.indices.astype(np.int64)
    m.indptr = m.indptr.astype(np.int64)
    return m


def raw_caller(kernel, tensors):
    """Call the compiled C directly with the tensors' arrays (outputs allocated as the runtime does)."""
    low = kernel.lowered
    args = {}
    for name, t in tensors.items():
        args.update(binding.input_args(name, t))
    shape = kernel._output_shape(tensors)
    storage = tuple(shape[m] for m in low.output_format.mode_order)
    for m, n in enumerate(storage):
        args[binding.array_name(low.output, m, "size")] = n
    params = {p.name: p for p in low.function.params}
    inouts = {}
    for p in low.function.params:
        if getattr(p, "intent", None) == "inout":
            n = int(np.prod(storage)) if p.name.endswith("_val") else int(np.prod(storage[:1])) + 1
            inouts[p.name] = (n, p.dtype)
    call_args = {k: v for k, v in args.items() if k in params}
    fn = kernel.compiled

    def run():
        # like scipy, allocate a zeroed output (calloc); the runtime's pre-fill is in "call"
        for name, (n, dt) in inouts.items():
            call_args[name] = np.zeros(n, dtype=dt) if low.fill == 0 or not name.endswith("_val") \
                else np.full(n, low.fill, dtype=dt)
        return fn(**call_args)
    return run


RESULTS = {}


def row(name, contenders: dict):
    """Time ``kernel``, ``call``, ``scipy`` and (optionally) ``pydata`` interleaved and print a line."""
    t = interleaved(contenders)
    med = {k: float(np.median(v)) for k, v in t.items()}
    kr = float(np.median(np.array(t["kernel"]) / np.array(t["scipy"])))
    cr = float(np.median(np.array(t["call"]) / np.array(t["scipy"])))
    pd = med.get("pydata")
    speedup = pd / med["call"] if pd else float("nan")
    pds = f"{pd * 1e3:8.2f} ms" if pd else "       -   "
    print(f"{name:20s} kernel {med['kernel'] * 1e3:7.2f} ms  call {med['call'] * 1e3:7.2f} ms  "
          f"scipy {med['scipy'] * 1e3:7.2f} ms  pydata {pds}  kernel/scipy {kr:5.2f}  call/scipy {cr:5.2f}  "
          f"pydata/call {f'{speedup:6.1f}x' if pd else '     -'}", flush=True)
    RESULTS[name] = dict(med, kernel_over_scipy=kr, call_over_scipy=cr, pydata_over_call=speedup)
    return med


def banded_csr(n, half, rng):
    """An n x n CSR matrix with entries on the ``2 * half + 1`` diagonals around the main one, a
    third of them left out (the fill inside a band; gaps between blocks)."""
    rows = np.repeat(np.arange(n), 2 * half + 1)
    cols = rows + np.tile(np.arange(-half, half + 1), n)
    keep = (cols >= 0) & (cols < n) & (rng.random(len(cols)) >= 1 / 3)
    return sp.csr_matrix((rng.random(int(keep.sum())) + 1.0, (rows[keep], cols[keep])), shape=(n, n))


def output_format_rows(small=False):
    """Kernel and output time of CSR + CSR into each format once built through a stand-in."""
    from compiler.format import Format
    from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseHash,
                                 SparseInterval, SparseList, SparsePoint, SparseRunList)
    rng = np.random.default_rng(1)
    n, nnz = (500, 6_000) if small else (2_000, 100_000)
    Ap, Bp = (Tensor.from_scipy(random_csr(n, nnz, rng), csr(), name=name, copy=True) for name in "AB")
    e = Element(0.0)
    formats = {"SparseList(Dense)": (SparseList(Dense(e)), dcsr()), "RunList": (Dense(RunList(e)), csr()),
               "SparseBand": (Dense(SparseBand(e)), csr()), "SparseBlockList": (Dense(SparseBlockList(e)), csr()),
               "SparseRunList": (Dense(SparseRunList(e)), csr()), "SparseHash": (Dense(SparseHash(e)), csr()),
               "SparseByteMap": (Dense(SparseByteMap(e)), csr()),
               "SparsePoint": (Dense(SparsePoint(e)), csr()), "SparseInterval": (Dense(SparseInterval(e)), csr()),
               "SparseList(SparseHash)": (SparseList(SparseHash(e)), dcsr()),
               "SparseHash(SparseHash)": (SparseHash(SparseHash(e)), dcsr()),
               "SparseList(SparseByteMap)": (SparseList(SparseByteMap(e)), dcsr()),
               "SparseByteMap(Dense)": (SparseByteMap(Dense(e)), dcsr()),
               "SparseBand(Dense)": (SparseBand(Dense(e)), dcsr()),
               "SparseBlockList(Dense)": (SparseBlockList(Dense(e)), dcsr()),
               "SparseList(RunList)": (SparseList(RunList(e)), dcsr()),
               "SparseList(SparseRunList)": (SparseList(SparseRunList(e)), dcsr()),
               "SparseHash(Dense)": (SparseHash(Dense(e)), dcsr()),
               "SparseRunList(SparseList)": (SparseRunList(SparseList(e)), dcsr()),
               "SparseRunList(Dense)": (SparseRunList(Dense(e)), Format(SparseList(Dense(e)))),
               "SparseByteMap(SparseList)": (SparseByteMap(SparseList(e)), dcsr()),
               "RunList(SparseList)": (RunList(SparseList(e)), dcsr())}
    # (a point or an interval holds one entry or run per row: the sum of two matrices of one entry per
    # row, in the same column, with as many entries as the others)
    m = nnz
    cols = rng.integers(0, m, size=m)
    Pt, Qt = (Tensor.from_scipy(sp.csr_matrix((rng.random(m) + 1.0, cols, np.arange(m + 1)), shape=(m, m)),
                                csr(), name=name, copy=True) for name in "AB")
    cases = [(name, root, standin, *((Pt, Qt) if root.child.at_most_one else (Ap, Bp)))
             for name, (root, standin) in formats.items()]
    Ab, Bb = (Tensor.from_scipy(banded_csr(n, 25, rng), csr(), name=name, copy=True) for name in "AB")
    cases += [(f"{name} (banded)", formats[name][0], csr(), Ab, Bb) for name in ("SparseBand", "SparseBlockList")]
    expr = "C[i, j] = A[i, j] + B[i, j]"
    for name, root, standin, A, B in cases:
        fmt = Format(root)
        k = lower(expr, strategy="lattice", A=A, B=B, C=fmt)
        ks = lower(expr, strategy="lattice", A=A, B=B, C=standin)
        assert (k(A=A, B=B).to_scipy() != A.to_scipy() + B.to_scipy()).nnz == 0, name
        how = "native" if not k.lowered.conversions else "stand-in"
        t = interleaved({"stand-in": lambda: ks(A=A, B=B), "old path": lambda: ks(A=A, B=B).asformat(fmt),
                         "call": lambda: k(A=A, B=B)}, rounds=5, min_time=0.05)
        med = {c: float(np.median(v)) * 1e3 for c, v in t.items()}
        label = f"C = A + B into {name}"
        print(f"{label:40s} stand-in {med['stand-in']:7.2f} ms  old path {med['old path']:7.2f} ms  "
              f"call ({how}) {med['call']:7.2f} ms  old/call {med['old path'] / med['call']:5.2f}", flush=True)
        RESULTS[label] = dict(med, how=how)


def main(small=False, only=None):
    only = set(only or ("spmv", "add", "mul", "spgemm", "hyper", "reduce", "sums", "bellman", "bandwidth", "outputs"))
    if "outputs" in only:
        output_format_rows(small)
        if only == {"outputs"}:
            return
    import sparse as pydata
    rng = np.random.default_rng(0)
    n, nnz = (10_000, 100_000) if small else (100_000, 1_000_000)
    gn, gnnz = (4_000, 20_000) if small else (20_000, 100_000)
    A = random_csr(n, nnz, rng)
    B = random_csr(n, nnz, rng)
    x = rng.random(n)
    At, Bt = Tensor.from_scipy(A, csr(), name="A", copy=True), Tensor.from_scipy(B, csr(), name="B", copy=True)
    xt = Tensor.from_numpy(x, dense(1), name="x")
    Ap = pydata.GCXS.from_scipy_sparse(A)
    Ac, Bc = pydata.COO.from_scipy_sparse(A), pydata.COO.from_scipy_sparse(B)
    print(f"inputs: {n} x {n}, {A.nnz} and {B.nnz} non-zeros; SpGEMM {gn} x {gn}, {gnnz} non-zeros")

    spmv_kernel_t = None
    if "spmv" in only:
        k = lower("y[i] = A[i, j] * x[j]", A=At, x=xt)
        np.testing.assert_allclose(k(A=At, x=xt).to_numpy(), A @ x)
        med = row("SpMV (CSR)", {"kernel": raw_caller(k, {"A": At, "x": xt}), "call": lambda: k(A=At, x=xt),
                                 "scipy": lambda: A @ x, "pydata": lambda: Ap @ x})
        spmv_kernel_t = med["kernel"]
        A32 = as_int32(A)
        At32 = Tensor.from_scipy(A32, csr(index_dtype="int32"), name="A", copy=True)
        k32 = lower("y[i] = A[i, j] * x[j]", A=At32, x=xt)
        np.testing.assert_allclose(k32(A=At32, x=xt).to_numpy(), A32 @ x)
        row("SpMV, int32 indices", {"kernel": raw_caller(k32, {"A": At32, "x": xt}), "call": lambda: k32(A=At32, x=xt),
                                    "scipy": lambda: A32 @ x, "pydata": lambda: Ap @ x})
        if openmp_support() is None:
            par = {"schedule": (("parallelize", "i"),)}
            kp = lower("y[i] = A[i, j] * x[j]", A=At, x=xt, options=par)
            np.testing.assert_allclose(kp(A=At, x=xt).to_numpy(), A @ x)
            row(f"SpMV parallel({os.cpu_count()})", {"kernel": raw_caller(kp, {"A": At, "x": xt}),
                                                     "call": lambda: kp(A=At, x=xt), "scipy": lambda: A @ x,
                                                     "pydata": lambda: Ap @ x})
            kp32 = lower("y[i] = A[i, j] * x[j]", A=At32, x=xt, options=par)
            np.testing.assert_allclose(kp32(A=At32, x=xt).to_numpy(), A32 @ x)
            row(f"SpMV par({os.cpu_count()}), int32", {"kernel": raw_caller(kp32, {"A": At32, "x": xt}),
                                                     "call": lambda: kp32(A=At32, x=xt), "scipy": lambda: A32 @ x,
                                                     "pydata": lambda: Ap @ x})
        # a CSC matrix by columns; y = A x + z is a sequence, y = z then y += A x (no workspace)
        Acsc = A.tocsc()
        Acsc.indices, Acsc.indptr = Acsc.indices.astype(np.int64), Acsc.indptr.astype(np.int64)
        Act, Acp = Tensor.from_scipy(Acsc, csc(), name="A", copy=True), pydata.GCXS.from_scipy_sparse(Acsc)
        z = rng.random(n)
        zt = Tensor.from_numpy(z, dense(1), name="z")
        plus = "y[i] = A[i, j] * x[j] + z[i]"
        for label, opts in (("", {}), (", 2 thr copies", {"schedule": (("parallelize", "j", "copies"),)})):
            if opts and openmp_support() is not None:
                continue
            kz = lower(plus, A=Act, x=xt, z=zt, options=opts)
            np.testing.assert_allclose(kz(A=Act, x=xt, z=zt).to_numpy(), Acsc @ x + z)
            row(f"CSC A x + z{label}", {"kernel": raw_caller(kz, {"A": Act, "x": xt, "z": zt}),
                                        "call": lambda: kz(A=Act, x=xt, z=zt), "scipy": lambda: Acsc @ x + z,
                                        "pydata": lambda: Acp @ x + z})
        # two CSC matrices: y = 0, then each one's columns add into y (no workspace for either)
        Bcsc = B.tocsc()
        Bcsc.indices, Bcsc.indptr = Bcsc.indices.astype(np.int64), Bcsc.indptr.astype(np.int64)
        Bct, Bcp = Tensor.from_scipy(Bcsc, csc(), name="B", copy=True), pydata.GCXS.from_scipy_sparse(Bcsc)
        kab = lower("y[i] = A[i, j] * x[j] + B[i, k] * z[k]", A=Act, B=Bct, x=xt, z=zt)
        np.testing.assert_allclose(kab(A=Act, B=Bct, x=xt, z=zt).to_numpy(), Acsc @ x + Bcsc @ z)
        row("CSC A x + B z", {"kernel": raw_caller(kab, {"A": Act, "B": Bct, "x": xt, "z": zt}),
                              "call": lambda: kab(A=Act, B=Bct, x=xt, z=zt),
                              "scipy": lambda: Acsc @ x + Bcsc @ z, "pydata": lambda: Acp @ x + Bcp @ z})
        if openmp_support() is None:
            # the threads update the same elements of y
            for races in ("atomics", "copies"):
                kr = lower("y[i] = A[i, j] * x[j]", A=Act, x=xt,
                           options={"schedule": (("parallelize", "j", races),)})
                np.testing.assert_allclose(kr(A=Act, x=xt).to_numpy(), Acsc @ x)
                row(f"SpMV CSC par, {races}", {"kernel": raw_caller(kr, {"A": Act, "x": xt}),
                                               "call": lambda: kr(A=Act, x=xt), "scipy": lambda: Acsc @ x})

    # CSR + CSR and CSR ∘ CSR into CSR
    for what, prog, ref, pyd in (("add", "C[i, j] = A[i, j] + B[i, j]", lambda: A + B, lambda: Ac + Bc),
                                 ("mul", "C[i, j] = A[i, j] * B[i, j]", lambda: A.multiply(B), lambda: Ac * Bc)):
        if what not in only:
            continue
        k = lower(prog, A=At, B=Bt, C=csr())
        got, want = k(A=At, B=Bt), ref().tocsr()
        want.sort_indices()
        np.testing.assert_array_equal(got.levels[1].pos, want.indptr)
        np.testing.assert_array_equal(got.levels[1].idx, want.indices)
        np.testing.assert_allclose(got.vals, want.data)
        name = "CSR+CSR" if "+" in prog else "CSR∘CSR"
        row(name, {"kernel": raw_caller(k, {"A": At, "B": Bt}), "call": lambda: k(A=At, B=Bt), "scipy": ref,
                   "pydata": pyd})
        fresh_process_row(what, small)
        if openmp_support() is None:
            kp = lower(prog, A=At, B=Bt, C=csr(), options={"schedule": (("parallelize", "i"),)})
            gotp = kp(A=At, B=Bt)
            np.testing.assert_array_equal(gotp.levels[1].pos, want.indptr)
            np.testing.assert_array_equal(gotp.levels[1].idx, want.indices)
            row(f"{name} parallel({os.cpu_count()})",
                {"kernel": raw_caller(kp, {"A": At, "B": Bt}), "call": lambda: kp(A=At, B=Bt), "scipy": ref,
                 "pydata": pyd})

    # A + A^T: A is read twice, as itself and as a copy converted to CSC at each call ("kernel"
    # times the addition alone, "call" the conversion too), as scipy converts A.T itself
    if "add" in only:
        k = lower("C[i, j] = A[i, j] + A[j, i]", A=At, C=csr())
        assert k.lowered.copies == (("A_csc", "A"),)
        want = (A + A.T).tocsr()
        want.sort_indices()
        got = k(A=At)
        np.testing.assert_array_equal(got.levels[1].idx, want.indices)
        np.testing.assert_allclose(got.vals, want.data)
        row("A + A^T", {"kernel": raw_caller(k, {"A": At, "A_csc": At.asformat(csc())}), "call": lambda: k(A=At),
                        "scipy": lambda: A + A.T, "pydata": lambda: Ac + Ac.T})

    # SpGEMM through a dense workspace
    if "spgemm" in only:
        G = random_csr(gn, gnnz, rng)
        H = random_csr(gn, gnnz, rng)
        Gt, Ht = Tensor.from_scipy(G, csr(), name="A", copy=True), Tensor.from_scipy(H, csr(), name="B", copy=True)
        k = lower("C[i, j] = A[i, k] * B[k, j]", A=Gt, B=Ht, C=csr())
        got = k(A=Gt, B=Ht)
        ref = G @ H
        ref.sort_indices()
        assert got.nnz == ref.nnz
        np.testing.assert_array_equal(got.levels[1].idx, ref.indices)
        np.testing.assert_allclose(got.vals, ref.data)
        Gp, Hp = pydata.GCXS.from_scipy_sparse(G), pydata.GCXS.from_scipy_sparse(H)
        row("SpGEMM (workspace)", {"kernel": raw_caller(k, {"A": Gt, "B": Ht}), "call": lambda: k(A=Gt, B=Ht),
                                   "scipy": lambda: G @ H, "pydata": lambda: Gp @ Hp})
        fresh_process_row("spgemm", small)
        # CSC A: the kernel reads A as CSR (converted at each call: "kernel" times the product alone,
        # "call" the conversion too), as scipy converts A itself
        Gc = G.tocsc()
        Gct = Tensor.from_scipy(Gc, csc(), name="A", copy=True)
        kc = lower("C[i, j] = A[i, k] * B[k, j]", A=Gct, B=Ht, C=csr())
        assert [s.stage for s in kc.trace.steps].count("convert") == 1
        gotc = kc(A=Gct, B=Ht)
        np.testing.assert_array_equal(gotc.levels[1].idx, ref.indices)
        np.testing.assert_allclose(gotc.vals, ref.data)
        Gcp = pydata.GCXS.from_scipy_sparse(Gc)
        row("SpGEMM, CSC x CSR", {"kernel": raw_caller(kc, {"A": Gct.asformat(csr()), "B": Ht}),
                                  "call": lambda: kc(A=Gct, B=Ht), "scipy": lambda: Gc @ H,
                                  "pydata": lambda: Gcp @ Hp})
        G32, H32 = as_int32(G), as_int32(H)
        i32 = csr(index_dtype="int32")
        Gt32, Ht32 = Tensor.from_scipy(G32, i32, name="A", copy=True), Tensor.from_scipy(H32, i32, name="B", copy=True)
        k32 = lower("C[i, j] = A[i, k] * B[k, j]", A=Gt32, B=Ht32, C=i32)
        np.testing.assert_array_equal(k32(A=Gt32, B=Ht32).levels[1].idx, ref.indices)
        row("SpGEMM, int32 indices", {"kernel": raw_caller(k32, {"A": Gt32, "B": Ht32}),
                                      "call": lambda: k32(A=Gt32, B=Ht32), "scipy": lambda: G32 @ H32})

        def scipy_sorted():
            C = G @ H
            C.sort_indices()
            return C
        row("SpGEMM, scipy sorted", {"kernel": raw_caller(k, {"A": Gt, "B": Ht}), "call": lambda: k(A=Gt, B=Ht),
                                     "scipy": scipy_sorted})
        if openmp_support() is None:
            kp = lower("C[i, j] = A[i, k] * B[k, j]", A=Gt, B=Ht, C=csr(),
                       options={"schedule": (("parallelize", "i"),)})
            gotp = kp(A=Gt, B=Ht)
            np.testing.assert_array_equal(gotp.levels[1].idx, ref.indices)
            np.testing.assert_allclose(gotp.vals, ref.data)
            row(f"SpGEMM parallel({os.cpu_count()})", {"kernel": raw_caller(kp, {"A": Gt, "B": Ht}),
                                                       "call": lambda: kp(A=Gt, B=Ht), "scipy": lambda: G @ H,
                                                       "pydata": lambda: Gp @ Hp})
        # A A^T: loops i, j, k would merge rows for all n^2 pairs; the kernel reads A[j, k] from a
        # copy of A converted to CSC, and runs Gustavson (as scipy converts A.T to CSR itself)
        kt = lower("C[i, j] = A[i, k] * A[j, k]", A=Gt, C=csr())
        assert kt.lowered.copies == (("A_csc", "A"),)
        reft = G @ G.T
        reft.sort_indices()
        gott = kt(A=Gt)
        np.testing.assert_array_equal(gott.levels[1].idx, reft.indices)
        np.testing.assert_allclose(gott.vals, reft.data)
        row("SpGEMM, A A^T", {"kernel": raw_caller(kt, {"A": Gt, "A_csc": Gt.asformat(csc())}),
                             "call": lambda: kt(A=Gt), "scipy": lambda: G @ G.T, "pydata": lambda: Gp @ Gp.T})
        k2 = lower("C[i, j] = A[i, k] * B[k, j]", A=Gt, B=Ht, C=csr(), options={"assembly": "two-phase"})
        got2 = k2(A=Gt, B=Ht)
        np.testing.assert_array_equal(got2.levels[1].idx, ref.indices)
        row("SpGEMM (two-phase)", {"kernel": raw_caller(k2, {"A": Gt, "B": Ht}), "call": lambda: k2(A=Gt, B=Ht),
                                   "scipy": lambda: G @ H})

    # hypersparse SpGEMM: DCSR matrices of 10^7 rows and columns, 100k entries each. The k loop
    # gallops through B's stored rows for each row of A (a merge would scan all of them per row),
    # and the call renumbers j by the columns B stores, so the workspace spans those, not 10^7
    if "hyper" in only:
        hn, hnnz = (10 ** 6, 10_000) if small else (10 ** 7, 100_000)
        ra, ca = rng.integers(0, hn, hnnz), rng.integers(0, hn, hnnz)
        rb = np.concatenate([ca[:hnnz // 2], rng.integers(0, hn, hnnz - hnnz // 2)])
        HA = sp.csr_matrix((rng.random(hnnz), (ra, ca)), shape=(hn, hn))
        HB = sp.csr_matrix((rng.random(hnnz), (rb, rng.integers(0, hn, hnnz))), shape=(hn, hn))
        for m in (HA, HB):
            m.indices, m.indptr = m.indices.astype(np.int64), m.indptr.astype(np.int64)
        HAt, HBt = Tensor.from_scipy(HA, dcsr(), name="A", copy=True), Tensor.from_scipy(HB, dcsr(), name="B", copy=True)
        kh = lower("C[i, j] = A[i, k] * B[k, j]", A=HAt, B=HBt, C=dcsr())
        ref = HA @ HB
        ref.sort_indices()
        goth = kh(A=HAt, B=HBt).to_scipy("csr")
        np.testing.assert_array_equal(goth.indices, ref.indices)
        np.testing.assert_allclose(goth.data, ref.data)
        print(f"hypersparse SpGEMM: {hn} x {hn}, {HA.nnz} and {HB.nnz} entries, {ref.nnz} in the product "
              f"(DCSR; scipy takes CSR; pydata/sparse's GCXS product did not finish in 4 minutes: not timed)")
        row("SpGEMM hypersparse", {"kernel": lambda: kh(A=HAt, B=HBt), "call": lambda: kh(A=HAt, B=HBt),
                                   "scipy": lambda: HA @ HB})

    # reductions: a sum or max of every entry runs over A's values in one flat loop (fuse + pos,
    # chosen by itself); a max over a fill-0 matrix folds the fill in (after the flat loop, per row,
    # or per column for the column max) instead of sweeping every coordinate
    if "reduce" in only:
        for name, prog, ref in (("sum of all entries", "s[] = A[i, j]", lambda: A.sum()),
                                ("max of all entries", "s[] = max[i, j](A[i, j])", lambda: A.max()),
                                ("row max (fill 0)", "y[i] = max[j](A[i, j])", lambda: A.max(axis=1)),
                                ("column max (fill 0)", "y[j] = max[i](A[i, j])", lambda: A.max(axis=0))):
            k = lower(prog, A=At)
            want = ref()
            want = want.todense() if hasattr(want, "todense") else want   # scipy's max(axis=...) is sparse
            np.testing.assert_allclose(np.ravel(k(A=At).to_numpy()), np.ravel(np.asarray(want)))
            row(name, {"kernel": raw_caller(k, {"A": At}), "call": lambda: k(A=At), "scipy": ref})
        if openmp_support() is None:
            flat = (("fuse", "i", "j", "f"), ("pos", "f", "fp", "A"), ("split", "fp", "f0", "f1", 4096),
                    ("parallelize", "f0"))
            k = lower("s[] = A[i, j]", A=At, options={"schedule": flat})
            np.testing.assert_allclose(k(A=At).to_numpy(), A.sum())
            row(f"sum of all entries parallel({os.cpu_count()})", {"kernel": raw_caller(k, {"A": At}),
                                                                  "call": lambda: k(A=At), "scipy": lambda: A.sum()})

    # a sum of sparse terms into a dense output: one loop nest per term (a sequence), or merged
    if "sums" in only:
        from compiler.lattice import plan_steps
        sn, snnz = (1000, 20_000) if small else (3000, 200_000)
        mats = [random_csr(sn, snnz, rng) for _ in range(4)]
        ts = {name: Tensor.from_scipy(m, csr(), name=name, copy=True) for name, m in zip("BCDE", mats)}
        prog = "A[i, j] = B[i, j] + C[i, j] + D[i, j] + E[i, j]"
        ks = lower(prog, **ts)
        saved, plan_steps.SEQUENCE_TERMS = plan_steps.SEQUENCE_TERMS, 10 ** 9   # (the rewrite off)
        try:
            km = lower(prog, **ts, trace=Trace())   # (a trace of its own: not the cached kernel)
        finally:
            plan_steps.SEQUENCE_TERMS = saved
        assert ks.trace.find("sequence") and not km.trace.find("sequence")

        pds = [pydata.GCXS.from_scipy_sparse(m) for m in mats]

        def ref():
            return (mats[0] + mats[1] + mats[2] + mats[3]).toarray()

        def pd_ref():
            return (pds[0] + pds[1] + pds[2] + pds[3]).todense()
        np.testing.assert_allclose(pd_ref(), ref())
        for k in (ks, km):
            np.testing.assert_allclose(k(**ts).to_numpy(), ref())
        print(f"sum of 4 CSR matrices into dense: {sn} x {sn}, {mats[0].nnz} entries each; C: "
              f"{len(ks.c_source) // 1024} KB as a sequence, {len(km.c_source) // 1024} KB merged")
        row("4 CSR into dense", {"kernel": raw_caller(ks, ts), "call": lambda: ks(**ts), "scipy": ref,
                                 "pydata": pd_ref})
        row("4 CSR, merged", {"kernel": raw_caller(km, ts), "call": lambda: km(**ts), "scipy": ref})
        if openmp_support() is None:
            kp = lower(prog, **ts, options={"schedule": (("parallelize", "i"),)})
            assert kp.trace.find("sequence")
            np.testing.assert_allclose(kp(**ts).to_numpy(), ref())
            row(f"4 CSR into dense, {os.cpu_count()} thr", {"kernel": raw_caller(kp, ts), "call": lambda: kp(**ts),
                                                            "scipy": ref})

    if "bellman" in only:
        # one Bellman-Ford step, y = min_j (W[i, j] + d[j]), W stored around +inf: with d free of
        # NaN and -inf, inf + d[j] is inf, so only W's edges are visited (the exact path, lowered
        # for a d that may hold NaN, walks every (i, j) pair)
        W = random_csr(gn, gnnz, rng)
        Wt = Tensor.from_scipy(W, csr(), fill=np.inf, name="W", copy=True)
        d = rng.random(gn)
        dt = Tensor.from_numpy(d, dense(1), name="d")
        prog = "y[i] = min[j](W[i, j] + d[j])"
        kb = lower(prog, W=Wt, d=dt)
        d_nan = d.copy()
        d_nan[0] = np.nan
        kx = kb.for_values({"W": Wt, "d": Tensor.from_numpy(d_nan, dense(1))})
        assert kx is not kb and any(r.rule == "exact-path" for r in kx.trace.find("value-facts")[0].rewrites)

        def ref():
            vals = W.data + d[W.indices]
            out = np.full(gn, np.inf)
            nonempty = np.diff(W.indptr) > 0
            out[nonempty] = np.minimum.reduceat(vals, W.indptr[:-1][nonempty])
            return out
        np.testing.assert_allclose(kb(W=Wt, d=dt).to_numpy(), ref())
        print(f"Bellman-Ford step: {gn} x {gn}, {W.nnz} edges, W's fill +inf")
        fast = row("Bellman-Ford step", {"kernel": raw_caller(kb, {"W": Wt, "d": dt}), "call": lambda: kb(W=Wt, d=dt),
                                         "scipy": ref})
        exact = row("BF step, exact path", {"kernel": raw_caller(kx, {"W": Wt, "d": dt}),
                                            "call": lambda: kx(W=Wt, d=dt), "scipy": ref})
        print(f"Bellman-Ford step: the sparse path is {exact['kernel'] / fast['kernel']:.0f}x faster than the exact one")

    # bandwidth
    if spmv_kernel_t is not None:
        spmv_bandwidth(A, x, spmv_kernel_t)
        spmv_anatomy(A, x, rng)
    return RESULTS


def streaming_bandwidth() -> dict:
    """Read + write bytes per second of a 256 MB copy: numpy's (one thread), and a generated
    ``y[i] = x[i]`` on every thread (``parallelize(i)``) into a kept output."""
    big = np.ones(64 * 2 ** 20 // 8 * 4)
    out = np.empty_like(big)
    contenders = {"one thread": lambda: np.copyto(out, big)}
    if openmp_support() is None:
        bt = Tensor.from_numpy(big, dense(1), name="x")
        k = lower("y[i] = x[i]", x=bt, options={"schedule": (("parallelize", "i"),)})
        args = {**binding.input_args("x", bt), binding.array_name("y", 0, "size"): big.size,
                binding.array_name("y", None, "val"): out}
        params = {p.name for p in k.lowered.function.params}
        assert params <= set(args), params - set(args)
        fn, call = k.compiled, {a: v for a, v in args.items() if a in params}
        contenders[f"{os.cpu_count()} threads"] = lambda: fn(**call)
    t = interleaved(contenders, rounds=5)
    return {name: 2 * big.nbytes / float(np.median(v)) for name, v in t.items()}


def cached_read_bandwidth(nbytes: int) -> dict:
    """Bytes read per second by a generated ``s = sum[i](x[i])`` over ``nbytes`` of doubles, read
    again and again (so the array stays in the cache when it fits, as SpMV's arrays do when the
    benchmark calls it again and again), on one thread and on every thread."""
    x = Tensor.from_numpy(np.ones(nbytes // 8), dense(1), name="x")
    contenders = {}
    schedules = {"one thread": None}
    if openmp_support() is None:
        schedules[f"{os.cpu_count()} threads"] = (("parallelize", "i"),)
    for name, schedule in schedules.items():
        k = lower("s[] = x[i]", x=x, options={"schedule": schedule} if schedule else None)
        contenders[name] = raw_caller(k, {"x": x})
    t = interleaved(contenders, rounds=5)
    return {name: nbytes / float(np.median(v)) for name, v in t.items()}


def spmv_bandwidth(A, x, kernel_t):
    """SpMV's effective bandwidth, and the bandwidth 10x over pydata/sparse would need, next to
    the machine's streaming bandwidth (a copy larger than any cache) and the bandwidth of reading
    an array of SpMV's size again and again (from the cache, where it fits: SpMV's arrays are
    read again on every call). Each entry's index and value are read once, so no SpMV moves its
    bytes faster than those reads."""
    stream = streaming_bandwidth()
    n = A.shape[0]
    for name, index_bytes, t, pd in (
            ("SpMV (CSR)", 8, kernel_t, RESULTS.get("SpMV (CSR)", {}).get("pydata")),
            ("int32 indices", 4, None, RESULTS.get("SpMV, int32 indices", {}).get("pydata"))):
        nbytes = (n + 1 + A.nnz) * index_bytes + A.data.nbytes + x.nbytes + n * 8
        cached = cached_read_bandwidth(nbytes)
        if t is not None:
            print(f"SpMV effective bandwidth {nbytes / t / 1e9:6.2f} GB/s (bytes = pos + idx + vals + x + y = "
                  f"{nbytes / 1e6:.1f} MB); streaming bandwidth (copy, read + write): "
                  + ", ".join(f"{name} {b / 1e9:6.2f} GB/s" for name, b in stream.items()))
        print(f"reading {nbytes / 1e6:.1f} MB again and again (a generated sum): "
              + ", ".join(f"{name} {b / 1e9:6.2f} GB/s" for name, b in cached.items()))
        if pd:
            need = 10 * nbytes / pd
            reach = [f"{what} on {name}" for what, got in (("streaming", stream), ("reading again", cached))
                     for name, b in got.items() if need <= b]
            print(f"10x over pydata/sparse SpMV ({pd * 1e3:.2f} ms), {name}: {nbytes / 1e6:.1f} MB in "
                  f"{pd / 10 * 1e3:.3f} ms needs {need / 1e9:6.2f} GB/s: "
                  + (f"below {', '.join(reach)}" if reach else "above streaming and reading again on every "
                     "thread count"))


def spmv_anatomy(A, x, rng):
    """Where SpMV's time goes: the fastest generated SpMV (int32 indices, on every thread where
    OpenMP is there) on four matrices with A's rows and about its entries, next to pydata/sparse's
    time over 10 (what 10x needs).

    Two costs come from A's pattern, not from the code: each row's loop ends after a random
    number of entries (a mispredicted branch per row), and each entry reads ``x`` at a random
    column (800 KB of ``x``: more than a core's L2 here, so most reads miss it). Each variant
    takes one or both away: rows of equal length (the loop's end is predicted), and columns in
    ``[0, 1000)`` (``x``'s part in L1). The same kernel runs on all four.
    """
    n = A.shape[0]
    per = max(1, round(A.nnz / n))

    def equal_rows(width):
        # ``per`` distinct, sorted columns a row: one in each of ``per`` bins of ``width // per``
        bins = width // per
        cols = np.tile(np.arange(per) * bins, n) + rng.integers(0, bins, n * per)
        pos = np.arange(n + 1) * per
        return sp.csr_matrix((rng.random(n * per) + 0.5, cols, pos), shape=A.shape)

    narrow = A.copy()
    narrow.indices = narrow.indices % 1000
    narrow.sum_duplicates()
    narrow.sort_indices()
    variants = {"A itself": A, "rows of equal length": equal_rows(n),
                "columns < 1000": narrow, "both": equal_rows(1000)}
    fmt = csr(index_dtype="int32")
    xt = Tensor.from_numpy(x, dense(1), name="x")
    par = openmp_support() is None
    options = {"schedule": (("parallelize", "i"),)} if par else None
    tensors = {name: Tensor.from_scipy(as_int32(m), fmt, name="A", copy=True) for name, m in variants.items()}
    k = lower("y[i] = A[i, j] * x[j]", A=tensors["A itself"], x=xt, options=options)
    for name, m in variants.items():
        np.testing.assert_allclose(k(A=tensors[name], x=xt).to_numpy(), m @ x)
    t = interleaved({name: raw_caller(k, {"A": tensors[name], "x": xt}) for name in variants})
    pd = RESULTS.get("SpMV, int32 indices", {}).get("pydata")
    where = f"{os.cpu_count()} threads" if par else "one thread"
    print(f"SpMV's time by A's pattern (the generated int32 kernel, {where}; "
          + (f"10x over pydata/sparse needs {pd / 10 * 1e3:.3f} ms):" if pd else "no pydata time):"))
    for name, m in variants.items():
        med = float(np.median(t[name]))
        print(f"  {name:22s} {m.nnz:8d} entries {med * 1e3:7.3f} ms"
              + (f"  ({pd / med:4.1f}x over pydata)" if pd else ""), flush=True)


FRESH = {"add": ("CSR+CSR", "C[i, j] = A[i, j] + B[i, j]", lambda A, B: A + B),
         "mul": ("CSR∘CSR", "C[i, j] = A[i, j] * B[i, j]", lambda A, B: A.multiply(B)),
         "spgemm": ("SpGEMM", "C[i, j] = A[i, k] * B[k, j]", lambda A, B: A @ B)}


def fresh_process_time(kernel: str, what: str, small: bool) -> float:
    """Per-call time of ``kernel`` (a key of FRESH) by ``what`` ("ours": the public call; "scipy"),
    in this process, whose allocator has handed out nothing large yet (see :func:`fresh_process_row`)."""
    rng = np.random.default_rng(0)
    n, nnz = (10_000, 100_000) if small else (100_000, 1_000_000)
    if kernel == "spgemm":
        n, nnz = (4_000, 20_000) if small else (20_000, 100_000)
    A, B = random_csr(n, nnz, rng), random_csr(n, nnz, rng)
    _, prog, ref = FRESH[kernel]
    if what == "ours":
        At, Bt = Tensor.from_scipy(A, csr(), name="A", copy=True), Tensor.from_scipy(B, csr(), name="B", copy=True)
        k = lower(prog, A=At, B=Bt, C=csr())
        f = lambda: k(A=At, B=Bt)  # noqa: E731
    else:
        f = lambda: ref(A, B)  # noqa: E731
    return float(np.median(interleaved({what: f})[what]))


def fresh_process_row(kernel: str, small: bool):
    """``kernel`` with each contender alone in a fresh Python process.

    Large outputs are fresh memory from the system on every call until the allocator keeps
    freed memory (which other large arrays in the same process make it do): the interleaved
    lines see the warm case; a user's first kernels in a session may see this one.
    """
    import subprocess
    times = {}
    for what in ("ours", "scipy"):
        r = subprocess.run([sys.executable, __file__, f"--fresh={kernel},{what}"] + (["--small"] if small else []),
                           capture_output=True, text=True, check=True)
        times[what] = float(r.stdout.split()[-1])
    name = f"{FRESH[kernel][0]}, fresh proc"
    print(f"{name:20s} kernel       -   call {times['ours'] * 1e3:7.2f} ms  "
          f"scipy {times['scipy'] * 1e3:7.2f} ms  pydata        -     kernel/scipy     -  "
          f"call/scipy {times['ours'] / times['scipy']:5.2f}  pydata/call      -", flush=True)


if __name__ == "__main__":
    small = "--small" in sys.argv
    fresh = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--fresh=")), None)
    if fresh:
        print(fresh_process_time(*fresh.split(","), small))
    else:
        only = next((a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")), None)
        main(small=small, only=only)
