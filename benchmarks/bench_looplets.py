"""Looplet-strategy kernels side by side with CSR from this compiler, scipy and numpy.

Prints one line per kernel with the time of each contender and ratios
(baseline time / looplet time: above 1 means the structured format wins):

* SpMV on a banded matrix: SparseBand vs SparseList (CSR) from this compiler vs scipy CSR;
* SpMV on a block-clustered matrix: SparseBlockList vs CSR vs scipy. A band row and a block
  are contiguous, so their sum loops are marked ``#pragma omp simd reduction`` (partial sums
  per SIMD lane); CSR reads ``x`` through its column indices and stays one add at a time;
* symmetric SpMV (``symv``) reading only a stored upper triangle vs SpMV of the full matrix
  in CSR from this compiler and scipy CSR (random symmetric pattern, ~1M nonzeros in full);
* the sparse-list . band dot product (the band is located, the list searched) vs a
  SparseList . SparseList dot and numpy on dense vectors;
* 1-D convolution on a sparse signal: scattering the signal's entries (the single-stepper
  fast path: one pass over the stored positions per filter tap) vs gathering with offsets
  and permissive padding (a search per output) vs the same kernel on a dense signal and
  numpy.correlate;
* 2-D convolution (3x3 filter) of a sparse image, Dense(SparseList) rows, at 1%, 5% and 20%
  density: scattering the stored pixels (``conv2d_scatter``, taps outermost: one pass over the
  stored pixels per tap) vs its whole call (the dense output's allocation included) vs
  gathering with offsets and permissive padding (``conv2d``, a search per output) vs both
  kernels on the dense image (Dense(Dense)) and scipy.signal.correlate2d and
  scipy.ndimage.correlate on the dense image;
* alpha blending of two run-length (RunList) images into a dense image, and into a RunList
  image (a whole call: the runs are written as the inputs' runs meet) vs numpy on the dense images;
* triangle counting on a power-law graph: galloping (``A[j, gallop(k)] * A[i, gallop(k)]``,
  Jumpers with exponential search) vs the two-finger merge (walk) vs scipy ``(L @ L) .* L``;
* SpGEMM three ways: Gustavson with a SparseByteMap workspace row, outer products into
  SparseHash, inner products (dot products of CSR rows, C = A B^T) vs scipy;
* reductions of a CSR matrix stored around 0 (20k x 20k, 1M entries): the sum of all entries, a
  row's sum, max and min, the max of all entries and the column max, by the looplets against the lattice strategy's kernel
  and scipy (``A.sum(axis=1)``, ``A.max(axis=1)``, ...). A row's max folds the gaps' fill in once
  where the row has fewer entries than columns (:mod:`compiler.looplets.idempotent_gaps`) and runs
  over the row's values in SIMD lanes (:mod:`compiler.imperative.counted_loops`); the column max
  updates a different output at each gap: the rows' walks count each column's entries, and one loop
  after them folds the fill into the columns some row did not store (:mod:`compiler.looplets.counted_gaps`;
  it visited every (i, j) before, 82 ms against the lattice's 1.8). The sum and the max of all entries
  walk all of the matrix's stored values as one vector (:mod:`compiler.looplets.flat_reductions`, as the
  lattice's ``fuse(i, j) pos``; a walk per row before: 0.38 and 0.46 ms, now 0.24 and 0.22); a sum of a
  matrix stored around 5 adds 5 once per gap by a count (``(double)missing * 5.0``), by rows or by columns;
  a column's ``any`` walks the rows, each entry updating its column, where a short-circuiting loop over
  the rows inside each column searched each row for the column (179 -> 1.3 ms). Its lattice column reads
  faster only as ``raw`` times it: the lattice's kernel leaves zeroing ``y`` to the runtime, which ``raw``
  runs once, so its repeated calls find every ``y[j]`` true and skip the values; both loops compiled by
  hand with ``y`` zeroed before each call take the same 1.06 ms. A 3-D tensor's max over its middle mode
  counts each outer slice's walks the same way (100 x 200 x 2000 at 1%: 11.3 -> 0.67 ms; pydata 55 ms), and
  so does the lattice's fold per column, its count zeroed again after each slice (32.1 -> 0.68 ms).

Times are of the C call alone (``raw``: arguments bound once through the shared runtime).

Index arrays are int32 for every format, as scipy's, so the SpMV rows compare like with like.

    .venv/bin/python benchmarks/bench_looplets.py [--small]
"""

import os
import sys
import tempfile
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402


def best(f, number=None, repeat=5):
    if number is None:
        t = timeit.timeit(f, number=1)
        number = max(1, int(0.05 / max(t, 1e-7)))
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def raw(kernel, **tensors):
    """The C call alone on the arguments the shared runtime binds once (no tensor conversion,
    no output assembly): the runtime runs the kernel once with a runner that keeps them."""
    captured = {}

    def capture(**args):
        captured.update(args)
        return kernel.compiled(**args)
    kernel._run(capture, tensors)
    # (the outputs the run assembled are sealed read-only now, as every result's index arrays:
    # the replays write into copies)
    for name, value in captured.items():
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            captured[name] = value.copy()
    return lambda: kernel.compiled(**captured)


def row(name, contenders):
    base = contenders[0][1]
    parts = [f"{n} {t * 1e3:8.3f} ms" for n, t in contenders]
    ratios = [f"{n}/{contenders[0][0]} = {t / base:5.2f}x" for n, t in contenders[1:]]
    print(f"{name:34s} " + " | ".join(parts) + "   " + ", ".join(ratios))


def main(small=False):
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    from compiler import Tensor
    from compiler.levels import Dense, Element, RunList, SparseBand, SparseBlockList, SparseList
    from compiler.looplets import compile_program, loop_program
    from compiler.looplets.gallery import spmv

    rng = np.random.default_rng(0)
    n = 2000 if small else 20000

    def spmv_row(label, M):
        x = Tensor.from_numpy(rng.random(M.shape[1]), "dense")
        times, kernels = [], {}
        structured = SparseBand if label.startswith("band") else SparseBlockList
        for name, level in ((structured.name, structured), ("SparseList (CSR)", SparseList)):
            A = Tensor.from_scipy(M, Dense(level(Element(0.0), index_dtype="int32")), copy=True)
            k = compile_program(spmv, y="dense", A=A, x=x)
            kernels[name] = k(A=A, x=x).to_numpy()
            times.append((name, best(raw(k, A=A, x=x))))
        xs = x.to_numpy()
        times.append(("scipy CSR", best(lambda: M @ xs)))
        assert np.allclose(kernels[structured.name], M @ xs)
        row(f"SpMV {label} ({M.nnz} nnz)", times)

    # banded: bandwidth 50 on each side
    b = 50
    diags = [rng.random(n - abs(d)) + 0.5 for d in range(-b, b + 1)]
    band = sp.diags(diags, list(range(-b, b + 1)), shape=(n, n), format="csr")
    spmv_row("band, width 101", band)

    # block-clustered: each row holds 4 blocks of 16 consecutive nonzeros
    rows, cols = [], []
    for i in range(n):
        for s in rng.choice(n // 16, 4, replace=False) * 16:
            rows += [i] * 16
            cols += list(range(s, s + 16))
    blocks = sp.csr_array((rng.random(len(rows)) + 0.5, (rows, cols)), shape=(n, n))
    blocks.sum_duplicates()
    spmv_row("blocks of 16", blocks)

    symmetric_spmv_row(small, best, raw, row)

    # dot of a sparse list with a band: the band is located, not walked
    @loop_program
    def dot(C, A, B):
        for i in _:
            C += A[i] * B[i]
    m = 2_000_000 if not small else 200_000
    a = rng.random(m) * (rng.random(m) < 0.01)
    bvec = np.zeros(m)
    bvec[m // 2: m // 2 + 1000] = rng.random(1000) + 0.5
    A = Tensor.from_numpy(a, SparseList(Element(0.0)))
    B = Tensor.from_numpy(bvec, SparseBand(Element(0.0)))
    B2 = Tensor.from_numpy(bvec, SparseList(Element(0.0)))
    k1 = compile_program(dot, C=Element(0.0), A=A, B=B)
    k2 = compile_program(dot, C=Element(0.0), A=A, B=B2)
    assert np.isclose(k1(A=A, B=B), a @ bvec) and np.isclose(k2(A=A, B=B2), a @ bvec)
    row(f"dot list . band (n={m})", [("SparseBand", best(raw(k1, A=A, B=B))),
                                     ("SparseList", best(raw(k2, A=A, B=B2))),
                                     ("numpy dense", best(lambda: a @ bvec))])

    # 1-D convolution with offsets and zero padding, sparse signal at 1% density
    @loop_program
    def conv(Y, A, F):
        for i in _:
            for j in _:
                Y[i] += coalesce(A[~(i + j - 5)], 0.0) * F[j]
    @loop_program
    def conv_scatter(Y, A, F):
        for j in _:
            for i in _:
                Y[i + 10 - j] += A[i] * F[j]
    f = rng.random(11)
    for density in (0.01, 0.05, 0.2):
        s = rng.random(m // 10) * (rng.random(m // 10) < density)
        S = Tensor.from_numpy(s, SparseList(Element(0.0)))
        F = Tensor.from_numpy(f, "dense")
        Y = Tensor.from_numpy(np.zeros(len(s)), "dense")
        Yp = Tensor.from_numpy(np.zeros(len(s) + 10), "dense")
        ref = np.correlate(np.pad(s, 5), f, mode="valid")
        ks = compile_program(conv_scatter, Y=Yp, A=S, F=F)
        assert np.allclose(ks(A=S, F=F).to_numpy()[5:len(s) + 5], ref)
        k = compile_program(conv, Y=Y, A=S, F=F)
        assert np.allclose(k(A=S, F=F).to_numpy(), ref)
        Sd = Tensor.from_numpy(s, "dense")
        kd = compile_program(conv, Y=Y, A=Sd, F=F)
        row(f"conv 1-D, {density:.0%} dense (n={len(s)})",
            [("sparse scatter", best(raw(ks, A=S, F=F))), ("sparse gather", best(raw(k, A=S, F=F))),
             ("dense looplets", best(raw(kd, A=Sd, F=F))),
             ("numpy.correlate", best(lambda: np.correlate(np.pad(s, 5), f, mode="valid")))])

    conv2d_rows(small, best, raw, row)

    # alpha blending of two run-length images (runs of 50-200 equal pixels)
    @loop_program
    def blend(C, A, B):
        for i in _:
            for j in _:
                C[i, j] = 0.3 * A[i, j] + 0.7 * B[i, j]

    def rle_image(h, w):
        img = np.zeros((h, w))
        for r in range(h):
            c = 0
            while c < w:
                run = int(rng.integers(50, 200))
                img[r, c:c + run] = rng.integers(0, 255)
                c += run
        return img
    h, w = (200, 2000) if small else (1000, 4000)
    a, b = rle_image(h, w), rle_image(h, w)
    A = Tensor.from_numpy(a, Dense(RunList(Element(0.0), index_dtype="int32")))
    B = Tensor.from_numpy(b, Dense(RunList(Element(0.0), index_dtype="int32")))
    Ad, Bd = Tensor.from_numpy(a, "dense"), Tensor.from_numpy(b, "dense")
    kr = compile_program(blend, C="dense", A=A, B=B)
    kd = compile_program(blend, C="dense", A=Ad, B=Bd)
    # the output in runs too (AcceptRun: one write per region where both inputs are constant);
    # timed as a whole call, since its arrays grow inside the kernel and become a Tensor
    krr = compile_program(blend, C=Dense(RunList(Element(0.0), index_dtype="int32")), A=A, B=B)
    assert np.allclose(kr(A=A, B=B).to_numpy(), 0.3 * a + 0.7 * b)
    assert np.allclose(krr(A=A, B=B).to_numpy(), 0.3 * a + 0.7 * b)
    row(f"alpha blend RunList ({h}x{w})", [("RunList out, whole call", best(lambda: krr(A=A, B=B))),
                                           ("dense out", best(raw(kr, A=A, B=B))),
                                           ("dense looplets", best(raw(kd, A=Ad, B=Bd))),
                                           ("numpy dense", best(lambda: 0.3 * a + 0.7 * b))])

    graphs_and_spgemm(small, rng, best, raw, row)
    reduction_rows(small, best, raw, row)


def symmetric_spmv_row(small, best, raw, row):
    """``y = A x`` for a symmetric A from its stored upper triangle (``symv``: each stored
    ``A[i, j]``, ``i < j``, serves ``y[i]`` and ``y[j]``) vs SpMV of the full matrix."""
    from compiler import Tensor
    from compiler.levels import Dense, Element, SparseList
    from compiler.looplets import compile_program
    from compiler.looplets.gallery import spmv, symv

    rng = np.random.default_rng(1)  # its own stream: the other rows' data stay as they were
    n, nnz = (10_000, 100_000) if small else (100_000, 1_000_000)
    pairs = (nnz - n) // 2  # off-diagonal pairs (i, j) and (j, i), plus a full diagonal
    r, c = rng.integers(0, n, pairs), rng.integers(0, n, pairs)
    M = sp.csr_matrix((rng.random(pairs) + 0.5, (r, c)), shape=(n, n))
    S = (M + M.T + sp.diags(rng.random(n) + 0.5)).tocsr()
    S.sum_duplicates()
    S.sort_indices()
    U = sp.triu(S, format="csr")
    U.sort_indices()
    csr = Dense(SparseList(Element(0.0), index_dtype="int32"))
    Ut, St = Tensor.from_scipy(U, csr, copy=True), Tensor.from_scipy(S, csr, copy=True)
    x = Tensor.from_numpy(rng.random(n), "dense")
    xs = x.to_numpy()
    ks = compile_program(symv, y="dense", A=Ut, x=x)
    kc = compile_program(spmv, y="dense", A=St, x=x)
    ref = S @ xs
    assert np.allclose(ks(A=Ut, x=x).to_numpy(), ref), "symv from the upper triangle is wrong"
    assert np.allclose(kc(A=St, x=x).to_numpy(), ref), "CSR SpMV of the full matrix is wrong"
    row(f"SpMV symmetric (n={n}, {S.nnz} nnz, {U.nnz} in triu)",
        [("symv (triu)", best(raw(ks, A=Ut, x=x))), ("CSR full", best(raw(kc, A=St, x=x))),
         ("scipy CSR full", best(lambda: S @ xs))])


def conv2d_rows(small, best, raw, row):
    """2-D convolution of a sparse image with a 3x3 filter: scatter and gather, sparse and
    dense image, vs scipy.signal.correlate2d and scipy.ndimage.correlate."""
    import scipy.ndimage
    import scipy.signal

    from compiler import Tensor
    from compiler.levels import Dense, Element, SparseList
    from compiler.looplets import compile_program
    from compiler.looplets.gallery import conv2d, conv2d_scatter

    rng = np.random.default_rng(2)  # its own stream: the other rows' data stay as they were
    h = w = 500 if small else 2000
    f = rng.random((3, 3))
    F = Tensor.from_numpy(f, "dense")
    G = Tensor.from_numpy(np.ascontiguousarray(f[::-1, ::-1]), "dense")  # scatter: convolution
    B = Tensor.from_numpy(np.zeros((h, w)), "dense")
    Bp = Tensor.from_numpy(np.zeros((h + 2, w + 2)), "dense")  # full: one pixel more each side
    for density in (0.01, 0.05, 0.2):
        a = np.where(rng.random((h, w)) < density, rng.random((h, w)) + 0.5, 0.0)
        S = Tensor.from_numpy(a, Dense(SparseList(Element(0.0), index_dtype="int32")))
        Sd = Tensor.from_numpy(a, "dense")
        ref = scipy.signal.correlate2d(a, f, mode="same")
        assert np.allclose(scipy.ndimage.correlate(a, f, mode="constant"), ref)
        ks = compile_program(conv2d_scatter, B=Bp, A=S, F=G)
        kds = compile_program(conv2d_scatter, B=Bp, A=Sd, F=G)
        kg = compile_program(conv2d, B=B, A=S, F=F)
        kdg = compile_program(conv2d, B=B, A=Sd, F=F)
        for label, k, A, filt, crop in (("sparse scatter", ks, S, G, 1), ("dense scatter", kds, Sd, G, 1),
                                        ("sparse gather", kg, S, F, 0), ("dense gather", kdg, Sd, F, 0)):
            got = k(A=A, F=filt).to_numpy()[crop:crop + h, crop:crop + w]
            assert np.allclose(got, ref), f"conv 2-D {label} at {density:.0%} is wrong"
        row(f"conv 2-D 3x3, {density:.0%} dense ({h}x{w})",
            [("sparse scatter", best(raw(ks, A=S, F=G))),
             ("sparse scatter+alloc", best(lambda: ks(A=S, F=G))),
             ("sparse gather", best(raw(kg, A=S, F=F), repeat=3)),
             ("dense scatter", best(raw(kds, A=Sd, F=G))), ("dense gather", best(raw(kdg, A=Sd, F=F))),
             ("scipy correlate2d", best(lambda: scipy.signal.correlate2d(a, f, mode="same"))),
             ("ndimage.correlate", best(lambda: scipy.ndimage.correlate(a, f, mode="constant")))])


def power_law_lower(n, m, rng, alpha=0.9):
    """The strict lower triangle of a symmetric graph with heavy-tailed degrees (Chung-Lu
    style weights ``k ** -alpha``, vertices shuffled so hubs are spread over the rows)."""
    w = 1.0 / np.arange(1, n + 1) ** alpha
    p = w / w.sum()
    a, b = rng.choice(n, m, p=p), rng.choice(n, m, p=p)
    perm = rng.permutation(n)
    a, b = perm[a], perm[b]
    keep = a != b
    a, b = np.maximum(a[keep], b[keep]), np.minimum(a[keep], b[keep])
    L = sp.csr_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    L.sum_duplicates()
    L.data[:] = 1.0
    return L


def graphs_and_spgemm(small, rng, best, raw, row):
    """Galloping triangle counting vs the two-finger merge; SpGEMM three ways vs scipy."""
    from compiler import Tensor
    from compiler.looplets import compile_program
    from compiler.looplets.gallery import gustavson, inner, outer, triangles_gallop, triangles_walk

    n, m = (3000, 30000) if small else (20000, 300000)
    L = power_law_lower(n, m, rng)
    A = Tensor.from_scipy(L, "csr", copy=True)
    kw, kg = compile_program(triangles_walk, C="dense", A=A), compile_program(triangles_gallop, C="dense", A=A)
    ref = float((L @ L).multiply(L).sum())
    assert kw(A=A) == ref and kg(A=A) == ref, (kw(A=A), kg(A=A), ref)
    deg = np.diff(L.indptr)
    row(f"triangles, power law (n={n}, {L.nnz} edges, max row {deg.max()}, {int(ref)} triangles)",
        [("gallop", best(raw(kg, A=A), repeat=3)), ("two-finger", best(raw(kw, A=A), repeat=3)),
         ("scipy (L@L).*L", best(lambda: (L @ L).multiply(L).sum(), repeat=3))])

    from compiler.levels import Dense, Element, SparseHash
    N = 500 if small else 2000
    Sa = sp.random(N, N, density=0.005, format="csr", random_state=1)
    Sb = sp.random(N, N, density=0.005, format="csr", random_state=2)
    A, B = Tensor.from_numpy(Sa.toarray(), "csr"), Tensor.from_numpy(Sb.toarray(), "csr")
    Ac, Bt = Tensor.from_numpy(Sa.toarray(), "csc"), Tensor.from_numpy(Sb.T.toarray(), "csr")
    kg = compile_program(gustavson, C="csr", A=A, B=B)
    ko = compile_program(outer, C=Dense(SparseHash(Element(0.0))), A=Ac, B=B)
    ki = compile_program(inner, C="csr", A=A, B=Bt)
    ref = (Sa @ Sb).toarray()
    for got in (kg(A=A, B=B), ko(A=Ac, B=B), ki(A=A, B=Bt)):
        assert np.allclose(got.to_numpy(), ref)
    row(f"SpGEMM {N}x{N} at 0.5% ({(Sa @ Sb).nnz} nnz out)",
        [("Gustavson+ByteMap", best(raw(kg, A=A, B=B))), ("outer+SparseHash", best(raw(ko, A=Ac, B=B))),
         ("inner (dot rows)", best(raw(ki, A=A, B=Bt), repeat=3)), ("scipy", best(lambda: Sa @ Sb))])


def reduction_rows(small, best, raw, row):
    """A row's sum, max and min, the max of every entry and the column max over a CSR matrix, by both
    strategies, against scipy."""
    from compiler import Tensor, lower
    n, nnz = (2000, 10_000) if small else (20_000, 1_000_000)
    M = sp.random(n, n, density=nnz / n / n, format="csr", random_state=1, dtype=np.float64)
    A = Tensor.from_scipy(M, "csr", name="A", copy=True)
    # (stored around 5: scipy's side adds 5 for each coordinate a row or column does not store)
    A5 = Tensor.from_scipy(M, "csr", fill=5.0, name="A", copy=True)
    missing_per_column = n - np.bincount(M.indices, minlength=n)
    for name, program, ref, A in (
            ("sum of all entries", "s[] = A[i, j]", lambda: M.sum(), A),
            ("sum of all entries (fill 5)", "s[] = A[i, j]", lambda: M.sum() + 5.0 * (n * n - M.nnz), A5),
            ("row sum", "y[i] = A[i, j]", lambda: M.sum(axis=1), A),
            ("row max (fill 0)", "y[i] = max[j](A[i, j])", lambda: M.max(axis=1), A),
            ("row min (fill 0)", "y[i] = min[j](A[i, j])", lambda: M.min(axis=1), A),
            ("max of all entries", "s[] = max[i, j](A[i, j])", lambda: M.max(), A),
            ("column max (fill 0)", "y[j] = max[i](A[i, j])", lambda: M.max(axis=0), A),
            ("column sum (fill 5)", "y[j] = A[i, j]", lambda: np.ravel(M.sum(axis=0)) + 5.0 * missing_per_column, A5),
            ("column any (A > 0.5)", "y[j] = any[i](A[i, j] > 0.5)", lambda: np.ravel((M > 0.5).sum(axis=0)) > 0, A)):
        want = ref()
        want = np.ravel(want.toarray() if hasattr(want, "toarray") else want)
        times = []
        for strategy in ("looplets", "lattice"):
            k = lower(program, strategy=strategy, A=A)
            assert np.allclose(np.ravel(k(A=A).to_numpy()), want)
            times.append((strategy, best(raw(k, A=A))))
        times.append(("scipy", best(ref)))
        row(f"{name} ({M.nnz} nnz)", times)
    partial_reduction_rows(small, best, raw, row)


def partial_reduction_rows(small, best, raw, row):
    """A 3-D tensor's max and sum over its middle mode, ``y[k, j] = max[i](A[k, i, j])``, stored
    Dense(Dense(SparseList)) around 0, by both strategies, against pydata/sparse and numpy's dense
    reduction: the looplets count each ``k``'s walks per column and fold the fill in after them."""
    import sparse
    from compiler import Tensor, lower
    shape = (10, 100, 500) if small else (100, 200, 2000)
    S = sparse.random(shape, density=0.01, random_state=1)
    D = S.todense()
    A = Tensor.from_numpy(D, "Dense(Dense(SparseList(Element(0.0))))", name="A")
    for name, program, ref, dense in (("3-D max over i", "y[k, j] = max[i](A[k, i, j])", lambda: S.max(axis=1),
                                       lambda: D.max(axis=1)),
                                      ("3-D sum over i", "y[k, j] = A[k, i, j]", lambda: S.sum(axis=1),
                                       lambda: D.sum(axis=1))):
        want = ref().todense()
        times = []
        for strategy in ("looplets", "lattice"):
            k = lower(program, strategy=strategy, A=A)
            assert np.allclose(k(A=A).to_numpy(), want)
            times.append((strategy, best(raw(k, A=A))))
        times += [("pydata", best(ref, repeat=3)), ("numpy dense", best(dense, repeat=3))]
        row(f"{name} {shape} ({S.nnz} nnz)", times)


if __name__ == "__main__":
    main(small="--small" in sys.argv)
