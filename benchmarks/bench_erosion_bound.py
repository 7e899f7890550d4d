"""Where the run-length erosion's time goes (issue 31, item 5), on the case-study benchmark's sketches.

Per image (two iterations of a 3x3 box, the benchmark's erosion row), side by side in one run:

* ``call``: ``Erosion("box", RUNS)(image, 2)``, what the benchmark times (two kernel calls, each
  binding its input, allocating and building the outputs V and B);
* ``C kernel``: the generated kernel's C alone, called from C on the same runs, with the steps
  its loops over runs take counted in a second build;
* ``hand C``: a hand-written run-length erosion (per row, the runs of the rows above, at and below
  intersected by two pairwise merges into a row buffer, then each run shrunk by a pixel at each
  end: the paper's two-part stencil with its one-row temporary), the bound for this algorithm;
* ``OpenCV``: ``cv2.erode(image, box, iterations=2)`` on the uint8 image, on one thread as ours
  (``cv2.setNumThreads(1)``: on the loaded machine its two threads were slower and wandered more).

Then the bitwise erosion (``compiler.looplets.bitwise_erosion``, 64 pixels a uint64 word), per image:
our call on the packed words (dense and sparse words; packed before timing, as OpenCV's uint8 image
is made before its), the generated dense-words kernel's C alone (its V and B allocated per erosion,
as a call does), and a hand-written bound (each row's vertical pass in a one-row temporary padded
with all-ones words, then the shifts: the paper's tmp), against OpenCV. One run (load 11 on 2 cores,
min of 20): sketches call 0.135 ms dense words, 0.327 ms sparse words, C kernel 0.084 ms, hand C
0.068 ms, OpenCV 0.29 ms (0.29-0.65 ms in runs minutes apart); sketches x4 call 0.64 ms dense, 0.63
ms sparse, C kernel 0.66 ms, hand C 0.49 ms, OpenCV 6.3 ms. The bitwise bound is 4-13x OpenCV; the
generated kernel is within 1.3x of it, and a call of a sketch within 2x (its two kernel calls'
fixed cost, 25 us each on a quiet machine through the fast path).

    .venv/bin/python benchmarks/bench_erosion_bound.py [--quick]

On the 2-core machine shared with other jobs (load 7-10; min of 40 repeats), after the stepper and
phase changes (a step's body lowered once, its fill phases passed in one max), per image:
sketches (10, 1111x1111, 7.7k runs each) call 0.5-1.0 ms, C kernel 0.31 ms (45k steps, 7 ns
each), hand C 0.15 ms, OpenCV 0.35 ms; sketches x4 (2, 2800x2800, 16k runs) call 0.86 ms, C
kernel 0.70 ms (128k steps), hand C 0.31 ms, OpenCV 4.4 ms. Before those changes the C kernel
took 0.43 and 0.91 ms. The paper's 19.5x over OpenCV on sketches is out of reach on these: the
hand-written bound itself is only 2.3x faster than OpenCV on the sketches (14x magnified).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

#: what both drivers start with: the clock, and the images' file opened (argv[1]: the count of
#: images, then each image) with its count read, and the repeats (argv[2])
DRIVER_HEAD = r"""
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static FILE *open_images(int argc, char **argv, int *reps, int64_t *count)
{
    FILE *f = argc > 2 ? fopen(argv[1], "rb") : NULL;
    if (!f)
        return NULL;
    if (fread(count, 8, 1, f) != 1) {
        fclose(f);
        return NULL;
    }
    *reps = atoi(argv[2]);
    return f;
}
"""

DRIVER = DRIVER_HEAD + r"""
#ifdef COUNT
static long long steps = 0;
#endif
#include KERNEL
typedef struct { int64_t h, w, n; int64_t *pos, *left, *right; bool *val; } img_t;

#ifdef HAND
static int64_t meet(const int64_t *al, const int64_t *ar, int64_t na, const int64_t *bl, const int64_t *br,
                    int64_t nb, int64_t *ol, int64_t *orr)
{
    int64_t i = 0, j = 0, n = 0;
    while (i < na && j < nb) {
        int64_t l = al[i] > bl[j] ? al[i] : bl[j], r = ar[i] < br[j] ? ar[i] : br[j];
        int64_t ai = ar[i], bj = br[j];
        ol[n] = l; orr[n] = r; n += l < r;
        i += ai <= bj; j += bj <= ai;
    }
    return n;
}
static img_t erode1(img_t a)
{
    img_t b = {a.h, a.w};
    int64_t cap = 3 * a.n + 2, wide = 2 * a.w + 2, full_l = 0, full_r = a.w, n = 0;
    b.pos = malloc(8 * (a.h + 1)); b.left = malloc(8 * cap); b.right = malloc(8 * cap);
    int64_t *tl = malloc(8 * wide), *tr = malloc(8 * wide), *vl = malloc(8 * wide), *vr = malloc(8 * wide);
    b.pos[0] = 0;
    for (int64_t r = 0; r < a.h; r++) {
        const int64_t *ul = r > 0 ? a.left + a.pos[r - 1] : &full_l, *ur = r > 0 ? a.right + a.pos[r - 1] : &full_r;
        int64_t nu = r > 0 ? a.pos[r] - a.pos[r - 1] : 1;
        const int64_t *dl = r + 1 < a.h ? a.left + a.pos[r + 1] : &full_l, *dr = r + 1 < a.h ? a.right + a.pos[r + 1] : &full_r;
        int64_t nd = r + 1 < a.h ? a.pos[r + 2] - a.pos[r + 1] : 1;
        int64_t nt = meet(ul, ur, nu, a.left + a.pos[r], a.right + a.pos[r], a.pos[r + 1] - a.pos[r], tl, tr);
        int64_t nv = meet(tl, tr, nt, dl, dr, nd, vl, vr);
        for (int64_t k = 0; k < nv; k++) {
            int64_t l = vl[k] > 0 ? vl[k] + 1 : 0, e = vr[k] < a.w ? vr[k] - 1 : a.w;
            b.left[n] = l; b.right[n] = e; n += l < e;
        }
        b.pos[r + 1] = n;
    }
    free(tl); free(tr); free(vl); free(vr);
    b.n = n; b.val = NULL;
    return b;
}
#else
static img_t erode1(img_t a)
{
    img_t b = {a.h, a.w};
    int64_t *vpos = calloc(a.h + 1, 8), vn = 0, *vl = 0, *vr = 0, *bl = 0, *br = 0;
    bool *vv = 0, *bv = 0;
    b.pos = calloc(a.h + 1, 8);
    if (erode_box(a.h, a.w, vpos, &vn, &vl, &vr, &vv, a.h, a.w, b.pos, &b.n, &bl, &br, &bv,
                  a.h, a.w, a.pos, a.left, a.right, a.val) != 0) {
        fprintf(stderr, "the kernel failed\n");
        exit(1);
    }
    free(vpos); free(vl); free(vr); free(vv);
    b.left = bl; b.right = br; b.val = bv; b.n = b.pos[a.h];
    return b;
}
#endif

int main(int argc, char **argv)
{
    int reps;
    int64_t count;
    FILE *f = open_images(argc, argv, &reps, &count);
    if (!f) return 1;
    img_t *im = calloc(count, sizeof *im);
    for (int64_t k = 0; k < count; k++) {
        if (fread(&im[k].h, 8, 3, f) != 3) return 1;
        im[k].pos = malloc(8 * (im[k].h + 1)); im[k].left = malloc(8 * im[k].n + 8);
        im[k].right = malloc(8 * im[k].n + 8); im[k].val = malloc(im[k].n + 1);
        memset(im[k].val, 1, im[k].n + 1);
        if (fread(im[k].pos, 8, im[k].h + 1, f) != (size_t)im[k].h + 1 || fread(im[k].left, 8, im[k].n, f) != (size_t)im[k].n
            || fread(im[k].right, 8, im[k].n, f) != (size_t)im[k].n) return 1;
    }
    double best = 1e9;
    long long out = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        out = 0;
        for (int64_t k = 0; k < count; k++) {
            img_t b1 = erode1(im[k]), b2 = erode1(b1);
            out += b2.n;
            free(b1.pos); free(b1.left); free(b1.right); free(b1.val);
            free(b2.pos); free(b2.left); free(b2.right); free(b2.val);
        }
        double t = now() - t0;
        best = t < best ? t : best;
    }
#ifdef COUNT
    printf("%g %lld %lld\n", best / count, out, steps / reps / count);
#else
    printf("%g %lld 0\n", best / count, out);
#endif
    return 0;
}
"""


#: the bitwise erosion's driver: each image's words (h rows of n uint64), two erosions of a 3x3 box by
#: the generated dense-words kernel (full V and B arrays, as a call allocates them) or by hand (HAND:
#: one row of the vertical pass in a temporary, the paper's tmp, padded with all-ones words either side)
BITS_DRIVER = DRIVER_HEAD + r"""
#include KERNEL
typedef struct { int64_t h, n, width; uint64_t *w, pad; } bits_t;
static const uint64_t ONES = ~(uint64_t)0;

#ifdef HAND
static uint64_t *erode1(const bits_t *im, const uint64_t *a)
{
    int64_t h = im->h, n = im->n;
    uint64_t *b = malloc(8 * (h * n) + 8), *v = malloc(8 * (n + 2));
    v[0] = v[n + 1] = ONES;
    for (int64_t r = 0; r < h; r++) {
        const uint64_t *up = r > 0 ? a + (r - 1) * n : NULL, *at = a + r * n, *down = r + 1 < h ? a + (r + 1) * n : NULL;
        for (int64_t c = 0; c < n; c++)
            v[c + 1] = (up ? up[c] : ONES) & at[c] & (down ? down[c] : ONES);
        if (n > 0)
            v[n] |= im->pad;
        uint64_t *out = b + r * n;
        for (int64_t c = 0; c < n; c++) {
            uint64_t t = v[c + 1];
            out[c] = ((v[c + 2] << 63) | (t >> 1)) & t & ((t << 1) | (v[c] >> 63));
        }
    }
    free(v);
    return b;
}
#else
static uint64_t *erode1(const bits_t *im, const uint64_t *a)
{
    int64_t h = im->h, n = im->n, pos[2] = {0, im->pad != 0}, idx[1] = {n - 1};
    uint64_t *v = malloc(8 * (h * n) + 8), *b = malloc(8 * (h * n) + 8);
    if (erode_bits_box(h, n, v, h, n, b, h, n, a, pos, idx, &im->pad) != 0) {
        fprintf(stderr, "the kernel failed\n");
        exit(1);
    }
    free(v);
    return b;
}
#endif

int main(int argc, char **argv)
{
    int reps;
    int64_t count;
    FILE *f = open_images(argc, argv, &reps, &count);
    if (!f) return 1;
    bits_t *im = calloc(count, sizeof *im);
    for (int64_t k = 0; k < count; k++) {
        if (fread(&im[k].h, 8, 3, f) != 3 || fread(&im[k].pad, 8, 1, f) != 1) return 1;
        im[k].w = malloc(8 * im[k].h * im[k].n + 8);
        if (fread(im[k].w, 8, im[k].h * im[k].n, f) != (size_t)(im[k].h * im[k].n)) return 1;
    }
    double best = 1e9;
    long long on = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        uint64_t **outs = malloc(count * sizeof *outs);
        for (int64_t k = 0; k < count; k++) {
            uint64_t *b1 = erode1(&im[k], im[k].w);
            outs[k] = erode1(&im[k], b1);
            free(b1);
        }
        double t = now() - t0;
        best = t < best ? t : best;
        on = 0;   /* the pixels left on (the padding bits left out), to check against the compiled kernel */
        for (int64_t k = 0; k < count; k++) {
            for (int64_t p = 0; p < im[k].h * im[k].n; p++)
                on += __builtin_popcountll(outs[k][p] & ((p % im[k].n == im[k].n - 1) ? ~im[k].pad : ONES));
            free(outs[k]);
        }
        free(outs);
    }
    printf("%g %lld\n", best / count, on);
    return 0;
}
"""

def build(tmp: Path, kernel_c: str, variant: str, driver: str = DRIVER, stem: str = "") -> Path:
    """The driver built around the kernel's C (``plain``, ``count``: steps counted) or the hand C."""
    from compiler.backend.build import DEFAULT_FLAGS
    src = kernel_c
    if variant == "count":   # (a step: one trip of a loop over runs, `while (c_k < phase_stop...)`)
        import re
        src = re.sub(r"(\n\s*while \(c_\d+ < phase_stop\w*\) \{)", r"\1 steps++;", src)
    (tmp / f"{stem}kernel_{variant}.c").write_text(src)
    (tmp / f"{stem}driver.c").write_text(driver)
    exe = tmp / f"{stem}drive_{variant}"
    flags = [f for f in DEFAULT_FLAGS if f not in ("-shared", "-fPIC")]
    defs = [f'-DKERNEL="{stem}kernel_{variant}.c"'] + (["-DCOUNT"] if variant == "count" else []) + \
        (["-DHAND"] if variant == "hand" else [])
    subprocess.run(["cc", *flags, *defs, "-o", str(exe), str(tmp / f"{stem}driver.c")], check=True, cwd=tmp)
    return exe


def opencv():
    """OpenCV's cv2 on one thread, as ours runs (None, said once, when it is not installed)."""
    try:
        import cv2
    except ImportError:
        print("(opencv-python-headless is not installed: its column is skipped)")
        return None
    cv2.setNumThreads(1)
    return cv2


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 sketches of 400x400 and 2 of 800x800")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import compiler as ss
    from compiler.looplets.morphology import RUNS, Erosion
    from compiler.testing import sketch
    cv2 = opencv()
    rng = np.random.default_rng(0)
    canvas, count, small, mag, big = (400, 3, 200, 4, 2) if args.quick else (1111, 10, 700, 4, 2)
    sets = [(f"sketches ({count}, {canvas}x{canvas})", [sketch(canvas, canvas, 20, rng) for _ in range(count)]),
            (f"sketches x{mag} ({big}, {small * mag}x{small * mag})",
             [np.kron(sketch(small, small, 20, rng), np.ones((mag, mag), bool)) for _ in range(big)])]
    erosion = Erosion("box", RUNS)
    erosion(sets[0][1][0], 1)
    kernel_c = erosion.kernels[2].c_source
    assert "int erode_box(\n    int64_t V0_size," in kernel_c, "the driver calls erode_box(V..., B..., A...)"
    box = np.ones((3, 3), np.uint8)
    print("per image, two iterations of a 3x3 box (min of the repeats):")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        exes = {v: build(tmp, kernel_c, v) for v in ("plain", "count", "hand")}
        for label, imgs in sets:
            runs = [ss.Tensor.from_numpy(m, RUNS) for m in imgs]
            data = tmp / "runs.bin"
            with open(data, "wb") as f:
                np.array([len(runs)], np.int64).tofile(f)
                for R, m in zip(runs, imgs):
                    lvl = R.levels[1]
                    np.array([m.shape[0], m.shape[1], int(lvl.pos[-1])], np.int64).tofile(f)
                    for a in (lvl.pos, lvl.left, lvl.right):
                        np.asarray(a, np.int64).tofile(f)
            want = sum(int(erosion(R, 2).levels[1].pos[-1]) for R in runs)
            out = {}
            for v, exe in exes.items():
                t, n, steps = subprocess.run([str(exe), str(data), str(args.repeat)], capture_output=True,
                                             text=True, check=True).stdout.split()
                assert int(n) == want, f"{v}: {n} runs after two erosions, the compiled kernel {want}"
                out[v] = (float(t), int(steps))
            best = np.inf
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                for R in runs:
                    erosion(R, 2)
                best = min(best, (time.perf_counter() - t0) / len(runs))
            cv = np.inf
            if cv2 is not None:
                u8 = [m.astype(np.uint8) for m in imgs]
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    for m in u8:
                        cv2.erode(m, box, iterations=2)
                    cv = min(cv, (time.perf_counter() - t0) / len(u8))
            nruns = sum(int(R.levels[1].pos[-1]) for R in runs) // len(runs)
            steps = out["count"][1]
            print(f"  {label:32s} {nruns:6d} runs  call {best * 1e3:7.3f} ms  C kernel {out['plain'][0] * 1e3:7.3f} ms "
                  f"({steps} steps, {out['plain'][0] / max(steps, 1) * 1e9:4.1f} ns each)  "
                  f"hand C {out['hand'][0] * 1e3:7.3f} ms  OpenCV {cv * 1e3:7.3f} ms", flush=True)
        bitwise(tmp, sets, args.repeat, cv2)


#: the generated dense-words kernel's parameters, as BITS_DRIVER's call passes them
BITS_SIGNATURE = ("int erode_bits_box( int64_t V0_size, int64_t V1_size, uint64_t *V_val, int64_t B0_size, "
                  "int64_t B1_size, uint64_t *B_val, int64_t A0_size, int64_t A1_size, "
                  "const uint64_t *restrict A_val, const int64_t *restrict pad0_pos, "
                  "const int64_t *restrict pad0_idx, const uint64_t *restrict pad_val")


def bitwise(tmp: Path, sets, repeat: int, cv2):
    """The bitwise erosion's rows: our call on packed words (dense and sparse), the generated dense-words
    kernel's C alone, hand-written C, OpenCV; each image packed before timing, as OpenCV's is made uint8."""
    from compiler.looplets.bitwise_erosion import SPARSE_WORDS, WORDS, BitwiseErosion
    eroders = {"dense": BitwiseErosion("box", WORDS), "sparse": BitwiseErosion("box", SPARSE_WORDS)}
    eroders["dense"](sets[0][1][0], 1)
    kernel_c = eroders["dense"].kernel.c_source
    # (the driver's call spells the kernel's parameters: a change of them must fail here, by name)
    signature = " ".join(kernel_c[kernel_c.index("int erode_bits_box("):].split(")", 1)[0].split())
    assert signature == BITS_SIGNATURE, f"the driver calls erode_bits_box with other parameters: {signature}"
    exes = {v: build(tmp, kernel_c, v, BITS_DRIVER, "bits_") for v in ("plain", "hand")}
    box = np.ones((3, 3), np.uint8)
    print("bitwise (64 pixels a uint64 word), per image, two iterations of a 3x3 box:")
    for label, imgs in sets:
        packed = {k: [e.pack(m) for m in imgs] for k, e in eroders.items()}
        data = tmp / "bits.bin"
        with open(data, "wb") as f:
            np.array([len(imgs)], np.int64).tofile(f)
            for P in packed["dense"]:
                words = P.words.to_numpy()
                pad = np.uint64(0) if P.width % 64 == 0 else ~np.uint64((1 << (P.width % 64)) - 1)
                np.array([words.shape[0], words.shape[1], P.width], np.int64).tofile(f)
                np.array([pad], np.uint64).tofile(f)
                words.tofile(f)
        want = sum(int(eroders["dense"](P, 2).to_numpy().sum()) for P in packed["dense"])
        out = {}
        for v, exe in exes.items():
            t, n = subprocess.run([str(exe), str(data), str(repeat)], capture_output=True, text=True,
                                  check=True).stdout.split()
            assert int(n) == want, f"{v}: {n} pixels on after two erosions, the compiled kernel {want}"
            out[v] = float(t)
        calls = {}
        for k, e in eroders.items():
            best = np.inf
            for _ in range(repeat):
                t0 = time.perf_counter()
                for P in packed[k]:
                    e(P, 2)
                best = min(best, (time.perf_counter() - t0) / len(imgs))
            calls[k] = best
        cv = np.inf
        if cv2 is not None:
            u8 = [m.astype(np.uint8) for m in imgs]
            for P, m in zip(packed["dense"], u8):
                assert np.array_equal(eroders["dense"](P, 2).to_numpy(), cv2.erode(m, box, iterations=2).astype(bool))
            for _ in range(repeat):
                t0 = time.perf_counter()
                for m in u8:
                    cv2.erode(m, box, iterations=2)
                cv = min(cv, (time.perf_counter() - t0) / len(u8))
        print(f"  {label:32s} call dense {calls['dense'] * 1e3:7.3f} ms, sparse {calls['sparse'] * 1e3:7.3f} ms  "
              f"C kernel {out['plain'] * 1e3:7.3f} ms  hand C {out['hand'] * 1e3:7.3f} ms  OpenCV {cv * 1e3:7.3f} ms "
              f"(OpenCV / hand C {cv / out['hand']:5.1f}x, / dense call {cv / calls['dense']:5.1f}x)", flush=True)


if __name__ == "__main__":
    main()
