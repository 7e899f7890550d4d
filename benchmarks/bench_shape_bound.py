"""Figs. 24 and 25 kernel by kernel: scipy, our kernels (looplets and lattice) and a hand-written C bound.

The bound of each row is a small C function doing the row's job in the fewest passes: each
input array read once, each output array written once, whole arrays and CSR rows copied with
memcpy (a COO operand's rows, found as they are copied, in plain loops), row boundaries found by
walking the sorted positions (no divide per entry), outputs with int32 indices as scipy's. Its
outputs are fresh numpy arrays allocated inside the timed call, as scipy's and
ours are, so the bound pays the same first touch of new memory. It stores every entry, as scipy
does; our kernels also leave out entries equal to the fill (the operands here store none), so
theirs is the bound plus a compare per value. Each result is checked against scipy's.

Every round times each column once, one after the other (paired: a slow phase of the shared
machine hits all columns of the round), and each column keeps its minimum over the rounds.

    .venv/bin/python benchmarks/bench_shape_bound.py --clock cpu                        # 20k x 20k, 1M nonzeros
    .venv/bin/python benchmarks/bench_shape_bound.py --clock cpu --n 2000 --nnz 40000   # quick
    .venv/bin/python benchmarks/bench_shape_bound.py --only 25a,25b

Results: see bench_shape.py's docstring (its "Against a hand-written bound" table).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from bench_shape import CLOCK, compressed_vector, coords_of, fig24_25_operands, geomean  # noqa: E402

#: the bound kernels; int32 indices in and out (the operands are scipy's, the outputs fit)
BOUND_C = r"""
#include <stdint.h>
#include <string.h>

/* 24a: a COO matrix (rows sorted) flattened row-major into a compressed vector of length n*m. */
void collapse_coo(int64_t nnz, int64_t m, const int32_t *row, const int32_t *col, const double *val,
                  int32_t *idx, double *out)
{
    for (int64_t p = 0; p < nnz; p++)
        idx[p] = (int32_t)((int64_t)row[p] * m + col[p]);
    memcpy(out, val, nnz * sizeof *val);
}

/* 24b: COO = hstack(COO, COO): per row, b's run then c's run (its columns shifted by mb).
 * (Runs are short, 25 entries here: copied in loops, where a memcpy call per run costs more.) */
void hstack_coo_coo(int64_t nb, const int32_t *brow, const int32_t *bcol, const double *bval,
                    int64_t nc, const int32_t *crow, const int32_t *ccol, const double *cval, int64_t mb,
                    int32_t *row, int32_t *col, double *out)
{
    int64_t pb = 0, pc = 0, q = 0;
    while (pb < nb || pc < nc) {
        int32_t i = pb < nb && (pc >= nc || brow[pb] <= crow[pc]) ? brow[pb] : crow[pc];
        for (; pb < nb && brow[pb] == i; pb++, q++) {
            row[q] = i;
            col[q] = bcol[pb];
            out[q] = bval[pb];
        }
        for (; pc < nc && crow[pc] == i; pc++, q++) {
            row[q] = i;
            col[q] = ccol[pc] + (int32_t)mb;
            out[q] = cval[pc];
        }
    }
}

/* 24c: COO = vstack(COO, COO): b's arrays, then c's with its rows shifted by nrb. */
void vstack_coo_coo(int64_t nb, const int32_t *brow, const int32_t *bcol, const double *bval,
                    int64_t nc, const int32_t *crow, const int32_t *ccol, const double *cval, int64_t nrb,
                    int32_t *row, int32_t *col, double *out)
{
    memcpy(row, brow, nb * sizeof *row);
    for (int64_t p = 0; p < nc; p++) row[nb + p] = crow[p] + (int32_t)nrb;
    memcpy(col, bcol, nb * sizeof *col);
    memcpy(col + nb, ccol, nc * sizeof *col);
    memcpy(out, bval, nb * sizeof *out);
    memcpy(out + nb, cval, nc * sizeof *out);
}

/* 24d: CSR = hstack(CSR, CSR): per row, b's row copied, then c's with columns shifted by mb. */
void hstack_csr_csr(int64_t nr, const int32_t *bpos, const int32_t *bidx, const double *bval,
                    const int32_t *cpos, const int32_t *cidx, const double *cval, int64_t mb,
                    int32_t *pos, int32_t *idx, double *out)
{
    int64_t q = 0;
    pos[0] = 0;
    for (int64_t i = 0; i < nr; i++) {
        int64_t lb = bpos[i + 1] - bpos[i], lc = cpos[i + 1] - cpos[i];
        memcpy(idx + q, bidx + bpos[i], lb * sizeof *idx);
        memcpy(out + q, bval + bpos[i], lb * sizeof *out);
        memcpy(out + q + lb, cval + cpos[i], lc * sizeof *out);
        q += lb;
        for (int64_t p = cpos[i]; p < cpos[i + 1]; p++, q++)
            idx[q] = cidx[p] + (int32_t)mb;
        pos[i + 1] = (int32_t)q;
    }
}

/* 24e: CSR = vstack(CSR, CSR): pos of b, then c's shifted by b's count; idx and val copied whole. */
void vstack_csr_csr(int64_t nrb, const int32_t *bpos, const int32_t *bidx, const double *bval,
                    int64_t nrc, const int32_t *cpos, const int32_t *cidx, const double *cval,
                    int32_t *pos, int32_t *idx, double *out)
{
    int64_t nb = bpos[nrb], nc = cpos[nrc];
    memcpy(pos, bpos, (nrb + 1) * sizeof *pos);
    for (int64_t i = 1; i <= nrc; i++) pos[nrb + i] = cpos[i] + (int32_t)nb;
    memcpy(idx, bidx, nb * sizeof *idx);
    memcpy(idx + nb, cidx, nc * sizeof *idx);
    memcpy(out, bval, nb * sizeof *out);
    memcpy(out + nb, cval, nc * sizeof *out);
}

/* 24f: CSR = A[s:e:r] (rows): each kept row copied. */
void slice_csr(int64_t s, int64_t r, int64_t nk, const int32_t *apos, const int32_t *aidx, const double *aval,
               int32_t *pos, int32_t *idx, double *out)
{
    int64_t q = 0;
    pos[0] = 0;
    for (int64_t k = 0; k < nk; k++) {
        int64_t i = s + k * r, len = apos[i + 1] - apos[i];
        memcpy(idx + q, aidx + apos[i], len * sizeof *idx);
        memcpy(out + q, aval + apos[i], len * sizeof *out);
        q += len;
        pos[k + 1] = (int32_t)q;
    }
}

/* 25a: COO = split(c, k -> (i, j:m)): rows found by walking the sorted positions. */
void split_coo(int64_t nnz, int64_t m, const int32_t *cidx, const double *cval,
               int32_t *row, int32_t *col, double *out)
{
    int64_t i = 0, base = 0;
    for (int64_t p = 0; p < nnz; p++) {
        while (cidx[p] >= base + m) { i++; base += m; }
        row[p] = (int32_t)i;
        col[p] = (int32_t)(cidx[p] - base);
    }
    memcpy(out, cval, nnz * sizeof *out);
}

/* 25b: CSR = split(c, k -> (i, j:m)): each row's end found by walking the positions. */
void split_csr(int64_t nr, int64_t nnz, int64_t m, const int32_t *cidx, const double *cval,
               int32_t *pos, int32_t *idx, double *out)
{
    int64_t p = 0;
    pos[0] = 0;
    for (int64_t i = 0; i < nr; i++) {
        int64_t base = i * m, lim = base + m;
        for (; p < nnz && cidx[p] < lim; p++) idx[p] = (int32_t)(cidx[p] - base);
        pos[i + 1] = (int32_t)p;
    }
    memcpy(out, cval, nnz * sizeof *out);
}

/* 25c: CSR = hstack(COO, COO): per row, b's run then c's (columns shifted by mb); pos as it goes. */
void hstack_coo_csr(int64_t nr, int64_t nb, const int32_t *brow, const int32_t *bcol, const double *bval,
                    int64_t nc, const int32_t *crow, const int32_t *ccol, const double *cval, int64_t mb,
                    int32_t *pos, int32_t *idx, double *out)
{
    int64_t pb = 0, pc = 0, q = 0;
    pos[0] = 0;
    for (int64_t i = 0; i < nr; i++) {
        for (; pb < nb && brow[pb] == i; pb++, q++) {
            idx[q] = bcol[pb];
            out[q] = bval[pb];
        }
        for (; pc < nc && crow[pc] == i; pc++, q++) {
            idx[q] = ccol[pc] + (int32_t)mb;
            out[q] = cval[pc];
        }
        pos[i + 1] = (int32_t)q;
    }
}

/* 25d: COO = hstack(CSR, CSR): per row, b's row then c's (columns shifted by mb), the row written out. */
void hstack_csr_coo(int64_t nr, const int32_t *bpos, const int32_t *bidx, const double *bval,
                    const int32_t *cpos, const int32_t *cidx, const double *cval, int64_t mb,
                    int32_t *row, int32_t *col, double *out)
{
    int64_t q = 0;
    for (int64_t i = 0; i < nr; i++) {
        int64_t lb = bpos[i + 1] - bpos[i], lc = cpos[i + 1] - cpos[i];
        for (int64_t t = 0; t < lb + lc; t++)
            row[q + t] = (int32_t)i;
        memcpy(col + q, bidx + bpos[i], lb * sizeof *col);
        memcpy(out + q, bval + bpos[i], lb * sizeof *out);
        memcpy(out + q + lb, cval + cpos[i], lc * sizeof *out);
        q += lb;
        for (int64_t p = cpos[i]; p < cpos[i + 1]; p++, q++)
            col[q] = cidx[p] + (int32_t)mb;
    }
}

/* 25e: COO = vstack(CSR, CSR): rows expanded from pos, idx and val copied whole. */
void vstack_csr_coo(int64_t nrb, const int32_t *bpos, const int32_t *bidx, const double *bval,
                    int64_t nrc, const int32_t *cpos, const int32_t *cidx, const double *cval,
                    int32_t *row, int32_t *col, double *out)
{
    int64_t nb = bpos[nrb], nc = cpos[nrc];
    for (int64_t i = 0; i < nrb; i++)
        for (int64_t p = bpos[i]; p < bpos[i + 1]; p++) row[p] = (int32_t)i;
    for (int64_t i = 0; i < nrc; i++)
        for (int64_t p = cpos[i]; p < cpos[i + 1]; p++) row[nb + p] = (int32_t)(nrb + i);
    memcpy(col, bidx, nb * sizeof *col);
    memcpy(col + nb, cidx, nc * sizeof *col);
    memcpy(out, bval, nb * sizeof *out);
    memcpy(out + nb, cval, nc * sizeof *out);
}

/* 25f: COO = A[s:e:r] (rows): each kept row copied, its new row number written out. */
void slice_coo(int64_t s, int64_t r, int64_t nk, const int32_t *apos, const int32_t *aidx, const double *aval,
               int32_t *row, int32_t *col, double *out)
{
    int64_t q = 0;
    for (int64_t k = 0; k < nk; k++) {
        int64_t i = s + k * r, len = apos[i + 1] - apos[i];
        for (int64_t t = 0; t < len; t++) row[q + t] = (int32_t)k;
        memcpy(col + q, aidx + apos[i], len * sizeof *col);
        memcpy(out + q, aval + apos[i], len * sizeof *out);
        q += len;
    }
}
"""


def _cdef(source: str) -> str:
    """The declarations of ``source``'s functions (each signature up to its ``{``)."""
    out, sig = [], None
    for line in source.splitlines():
        if line.startswith("void "):
            sig = line
        elif sig is not None and line != "{":
            sig += " " + line.strip()
        if sig is not None and line == "{":
            out.append(sig + ";")
            sig = None
    return "\n".join(out)


def load_bounds():
    """(ffi, lib) of :data:`BOUND_C`, built with the kernels' own compiler flags."""
    from compiler.backend.build import build_library, load_library
    path, _ = build_library(BOUND_C, name="shape_bound")
    return load_library(path, _cdef(BOUND_C))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=10, help="rounds; each column keeps its minimum")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    ap.add_argument("--only", default="", help="comma-separated figures (24a,25b,...): only these rows")
    args = ap.parse_args(argv)
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))

    import compiler as ss
    ffi, lib = load_bounds()

    n = args.n
    if n * n > np.iinfo(np.int32).max:
        raise SystemExit("the bounds take int32 indices: n * n must fit (n <= 46340)")
    _, (A, Acoo, half, left, right, top, bottom, left_coo, right_coo, top_coo, bottom_coo, vec) = \
        fig24_25_operands(n, args.nnz)
    s, e, r = 0, (n + 1) // 2, 2
    nk = len(range(s, e, r))
    fmt = lambda shorthand: ss.parse_format(shorthand, index_dtype="int32")  # noqa: E731
    # (the tensors' own copies, sealed: read with no check per call, as bench_shape.py's)
    T = ss.Tensor
    ten = {"A_csr": T.from_scipy(A, name="A", copy=True), "A_coo": T.from_scipy(Acoo, name="A", copy=True),
           "L_csr": T.from_scipy(left, name="B", copy=True), "R_csr": T.from_scipy(right, name="C", copy=True),
           "L_coo": T.from_scipy(left_coo, name="B", copy=True), "R_coo": T.from_scipy(right_coo, name="C", copy=True),
           "T_csr": T.from_scipy(top, name="B", copy=True), "B_csr": T.from_scipy(bottom, name="C", copy=True),
           "T_coo": T.from_scipy(top_coo, name="B", copy=True), "B_coo": T.from_scipy(bottom_coo, name="C", copy=True)}
    cv = compressed_vector(ss, vec, n * n, "int32")

    def ptr(a, t="int32_t[]"):
        return ffi.from_buffer(t, a)

    def d(a):
        return ffi.from_buffer("double[]", a)

    def ours(program, out, strategy, **tensors):
        try:
            k = ss.lower(program, strategy=strategy, **tensors, **{program.split("[")[0]: fmt(out)})
        except ss.StrategyError:
            return None
        return lambda: k(**tensors)

    # each bound returns a scipy matrix (built after its C call; the check reads it)
    def coo_out(nnz, shape, call):
        def run():
            row, col, val = np.empty(nnz, np.int32), np.empty(nnz, np.int32), np.empty(nnz)
            call(ptr(row), ptr(col), d(val))
            return lambda: sp.coo_matrix((val, (row, col)), shape=shape)
        return run

    def csr_out(nrows, nnz, shape, call):
        def run():
            pos, idx, val = np.empty(nrows + 1, np.int32), np.empty(nnz, np.int32), np.empty(nnz)
            call(ptr(pos), ptr(idx), d(val))
            return lambda: sp.csr_matrix((val, idx, pos), shape=shape)
        return run

    def ops_coo(m):
        return m.nnz, ptr(m.row), ptr(m.col), d(m.data)

    def ops_csr(m):
        return ptr(m.indptr), ptr(m.indices), d(m.data)

    nnz = A.nnz
    knnz = int(sum(A.indptr[i + 1] - A.indptr[i] for i in range(s, e, r)))

    def vec_out():
        idx, val = np.empty(nnz, np.int32), np.empty(nnz)
        lib.collapse_coo(nnz, n, ptr(Acoo.row), ptr(Acoo.col), d(Acoo.data), ptr(idx), d(val))
        return lambda: sp.csr_matrix((val, idx, np.array([0, nnz], np.int32)), shape=(1, n * n))

    hst = "D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)"
    vst = "D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)"
    slc = f"D[k, i] = slice(A[j, i], j -> k, ({s}, {e}, {r}))"
    col = "c[k] = collapse(A[i, j], (i, j) -> k)"
    spl = f"D[i, j] = split(c[k], k -> (i, j:{n}))"
    vi, vv = ptr(vec.indices), d(vec.data)
    rows = [
        ("24a", "C = collapse(COO)", (col, "sparse_vector", dict(A=ten["A_coo"])),
         lambda: Acoo.reshape(1, n * n).tocsr(), vec_out),
        ("24b", "COO = hstack(COO, COO)", (hst, "coo", dict(B=ten["L_coo"], C=ten["R_coo"])),
         lambda: sp.hstack([left_coo, right_coo], format="coo"),
         coo_out(nnz, A.shape, lambda *o: lib.hstack_coo_coo(*ops_coo(left_coo), *ops_coo(right_coo), half, *o))),
        ("24c", "COO = vstack(COO, COO)", (vst, "coo", dict(B=ten["T_coo"], C=ten["B_coo"])),
         lambda: sp.vstack([top_coo, bottom_coo], format="coo"),
         coo_out(nnz, A.shape, lambda *o: lib.vstack_coo_coo(*ops_coo(top_coo), *ops_coo(bottom_coo), half, *o))),
        ("24d", "CSR = hstack(CSR, CSR)", (hst, "csr", dict(B=ten["L_csr"], C=ten["R_csr"])),
         lambda: sp.hstack([left, right], format="csr"),
         csr_out(n, nnz, A.shape, lambda *o: lib.hstack_csr_csr(n, *ops_csr(left), *ops_csr(right), half, *o))),
        ("24e", "CSR = vstack(CSR, CSR)", (vst, "csr", dict(B=ten["T_csr"], C=ten["B_csr"])),
         lambda: sp.vstack([top, bottom], format="csr"),
         csr_out(n, nnz, A.shape, lambda *o: lib.vstack_csr_csr(half, *ops_csr(top), n - half, *ops_csr(bottom), *o))),
        ("24f", "CSR = slice(CSR)", (slc, "csr", dict(A=ten["A_csr"])), lambda: A[s:e:r, :],
         csr_out(nk, knnz, (nk, n), lambda *o: lib.slice_csr(s, r, nk, *ops_csr(A), *o))),
        ("25a", "COO = split(C)", (spl, "coo", dict(c=cv)), lambda: vec.reshape(n, n).tocoo(),
         coo_out(nnz, A.shape, lambda *o: lib.split_coo(nnz, n, vi, vv, *o))),
        ("25b", "CSR = split(C)", (spl, "csr", dict(c=cv)), lambda: vec.reshape(n, n).tocsr(),
         csr_out(n, nnz, A.shape, lambda *o: lib.split_csr(n, nnz, n, vi, vv, *o))),
        ("25c", "CSR = hstack(COO, COO)", (hst, "csr", dict(B=ten["L_coo"], C=ten["R_coo"])),
         lambda: sp.hstack([left_coo, right_coo], format="csr"),
         csr_out(n, nnz, A.shape, lambda *o: lib.hstack_coo_csr(n, *ops_coo(left_coo), *ops_coo(right_coo), half, *o))),
        ("25d", "COO = hstack(CSR, CSR)", (hst, "coo", dict(B=ten["L_csr"], C=ten["R_csr"])),
         lambda: sp.hstack([left, right], format="coo"),
         coo_out(nnz, A.shape, lambda *o: lib.hstack_csr_coo(n, *ops_csr(left), *ops_csr(right), half, *o))),
        ("25e", "COO = vstack(CSR, CSR)", (vst, "coo", dict(B=ten["T_csr"], C=ten["B_csr"])),
         lambda: sp.vstack([top, bottom], format="coo"),
         coo_out(nnz, A.shape, lambda *o: lib.vstack_csr_coo(half, *ops_csr(top), n - half, *ops_csr(bottom), *o))),
        ("25f", "COO = slice(CSR)", (slc, "coo", dict(A=ten["A_csr"])), lambda: A[s:e:r, :].tocoo(),
         coo_out(knnz, (nk, n), lambda *o: lib.slice_coo(s, r, nk, *ops_csr(A), *o))),
    ]
    only = {f.strip() for f in args.only.split(",") if f.strip()}
    print(f"A: {n} x {n}, {nnz} nonzeros; min over {args.repeat} paired rounds ({args.clock} time); int32 indices")
    print(f"{'fig':4s} {'kernel':24s} {'scipy':>9s} {'looplets':>9s} {'lattice':>9s} {'bound':>9s}   "
          f"{'scipy/ours':>10s} {'scipy/latt':>10s} {'scipy/bound':>11s} {'ours/bound':>10s} {'latt/bound':>10s}")
    ratios = {}
    for fig, name, (program, out, tensors), theirs, bound in rows:
        if only and fig not in only:
            continue
        cols = {"scipy": theirs, "looplets": ours(program, out, "looplets", **tensors),
                "lattice": ours(program, out, "lattice", **tensors), "bound": bound}
        ref = theirs()
        for label in ("looplets", "lattice"):
            if cols[label] is not None:
                _same(f"{fig} {label}", cols[label](), ref)
        _same(f"{fig} bound", bound()(), ref)
        best = {k: math.inf for k in cols}
        for _ in range(args.repeat):
            for label, f in cols.items():
                if f is None:
                    continue
                t0 = clock()
                f()
                best[label] = min(best[label], clock() - t0)
        t = best
        ratios.setdefault(fig[:2], []).append((t["scipy"] / t["looplets"], t["scipy"] / t["lattice"],
                                               t["scipy"] / t["bound"]))
        print(f"{fig:4s} {name:24s} " + " ".join(f"{t[k] * 1e3:7.2f}ms" for k in ("scipy", "looplets", "lattice", "bound"))
              + f"   {t['scipy'] / t['looplets']:9.2f}x {t['scipy'] / t['lattice']:9.2f}x {t['scipy'] / t['bound']:10.2f}x"
              f" {t['looplets'] / t['bound']:9.2f}x {t['lattice'] / t['bound']:9.2f}x", flush=True)
    for fig, v in ratios.items():
        g = [geomean([x[c] for x in v]) for c in range(3)]
        print(f"Fig. {fig} geometric mean over scipy ({len(v)} rows): looplets {g[0]:.2f}x, lattice {g[1]:.2f}x, "
              f"bound {g[2]:.2f}x")


def _same(name, got, ref) -> None:
    """Raise unless ``got`` (a Tensor, a scipy matrix or a thunk making one) stores scipy's entries."""
    got = got() if callable(got) else got
    (gc, gv), (wc, wv) = coords_of(got), coords_of(ref)
    if gc.shape != wc.shape or not np.array_equal(gc, wc) or not np.array_equal(gv, wv):
        raise AssertionError(f"{name}: the result differs from scipy's")


if __name__ == "__main__":
    main()
