"""Where the masked histogram's time goes (issue 31, item 5), on the case-study benchmark's images.

Per image (16 bins of an 8-bit image under a mask stored as runs or as column lists, the case-study
benchmark's ``histogram`` rows), side by side in one run:

* ``call``: ``MaskedHistogram8(16)(image, mask)``, what the benchmark times (binding, the kernel, the
  counts returned as a numpy array);
* ``C kernel``: the generated kernel's C alone, called through cffi on the same arrays;
* ``hand C``: a hand-written loop over the mask's runs (or columns) counting into one table, the
  algorithm the kernel runs, with nothing checked;
* ``hand C x4``: the same counting into four tables, a pixel's table chosen by its place in the run,
  summed at the end. Counting into one table makes each increment wait for the last one of the same
  bin (a store read back by the next load); four tables let four increments run at once. This is the
  bound of the histogram, not of the kernel's algorithm;
* ``OpenCV``: ``cv2.calcHist([image], [0], mask, [16], [0, 256])`` on one thread, and numpy's
  ``np.bincount(image[mask] >> 4)``;
* ``int x1`` and ``int x4``: the integer images' ``compiler.looplets.morphology.MaskedHistogram(16, 256)``
  on the same pixels as int64 (a Tensor made once, the mask in the same format), counting into one
  table (``tables=1``, as it did before it asked for ``privatize``) and into four (its default).

    .venv/bin/python benchmarks/bench_histogram_bound.py [--quick] [--clock cpu]

Every column's counts are checked against numpy's before it is timed.

One run (2-core machine at load 10, CPU clock, min of 20; OpenCV's time over each column's): the
case-study sketches (10 of 1111x1111, masks as column lists, 32k pixels each) call 8.7x, C kernel
14.5x, hand C 17.7x, hand C x4 21.0x; 10% of the pixels scattered: 8.9x, 11.7x, 15.5x, 15.0x; a disk
of 50% (runs): 1.3x, 1.4x, 2.0x, 2.4x (OpenCV's mask test is cheap on a solid region). The paper's
20.8x on sketches is the four-table bound's; our call is 40% kernel overhead on a sketch (the kernel
about 1.2x the one-table bound: a check of each bin's index, whose count is a runtime scalar).

Since the bin count is the counts' extent, fixed when the kernel is compiled, the kernel proves every
bin in range and checks none (issue 31): C kernel / hand C, 3 runs before and 4 after alternating
(--clock cpu --repeat 20, load 8-8.6 on 2 cores, no OpenCV): sketches 1.03-1.08 -> 0.90-0.94, scattered
10% 1.11-1.12 -> 0.77-0.88, scattered 50% 1.41-1.51 -> 0.84-1.29, disk 50% (runs) 1.62-1.86 -> 0.88-1.10.

The kernel now counts into four tables (the looplets schedule's ``privatize("bins", copies=4)``, which
``MaskedHistogram8`` asks for): 6 runs alternating before/after (--clock cpu, --repeat 20 and 40, load
5-8.7 on 2 cores, OpenCV 5.0 from the wheel), C kernel / hand C, then C kernel / hand C x4: sketches
0.88-0.98 -> 0.75-0.84 and 1.25-1.37 -> 1.09-1.18; disk 10% (runs) 0.88-0.97 -> 0.80-0.87 and 1.23-1.38 ->
1.10-1.16; scattered 50% 0.79-1.43 -> 0.70-1.10 and 1.12-2.33 -> 1.10-1.28. The call against OpenCV on
the sketches, 16.5-26.7x before, 19.0-30.4x after (OpenCV's own time 1.0-2.1 ms at this load); against
numpy 7.7-8.8x -> 8.6-10.1x.

The integer images' ``MaskedHistogram`` now counts into four tables as well (it asked for no schedule):
5 runs (--clock cpu, 3 of --repeat 20 and 2 of 40, load 4.9-5.6 on 2 cores, no OpenCV), ``int x4`` over
``int x1`` in the same run: masks as runs (disks) 1% 0.59-0.93, 10% 0.81-1.34 (one run's outlier; the others
0.81-0.92), 50% 0.79-0.96; masks as column lists, sketches 0.86-0.98, sketches x4 0.93-1.16, scattered 1%
0.67-1.10, 10% 0.50-1.12, 50% 0.86-1.10. Its int64 image is eight times the 8-bit one's bytes: scattered
pixels wait on memory more than on the counts (int x1 is 2.5-3x the 8-bit kernel on sketches, 10-20x
on 10% scattered), so the four tables pay on runs and are within the noise on scattered lists.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from bench_erosion_bound import opencv  # noqa: E402

#: the hand-written bounds: each counts ``img``'s pixels under the mask (runs: ``pos``, ``left``,
#: ``right`` of each row; a list: ``pos``, ``idx``) into ``bins`` (16 of them: ``v >> 4``)
BOUND_C = r"""
#include <stdint.h>
#include <string.h>

void runs_one(int64_t h, int64_t w, const uint8_t *img, const int64_t *pos, const int64_t *left,
              const int64_t *right, int64_t *bins)
{
    memset(bins, 0, 16 * sizeof *bins);
    for (int64_t r = 0; r < h; r++)
        for (int64_t k = pos[r]; k < pos[r + 1]; k++)
            for (int64_t c = left[k]; c < right[k]; c++)
                bins[img[r * w + c] >> 4] += 1;
}

void runs_four(int64_t h, int64_t w, const uint8_t *img, const int64_t *pos, const int64_t *left,
               const int64_t *right, int64_t *bins)
{
    int64_t t[4][16];
    memset(t, 0, sizeof t);
    for (int64_t r = 0; r < h; r++)
        for (int64_t k = pos[r]; k < pos[r + 1]; k++) {
            const uint8_t *p = img + r * w;
            int64_t c = left[k], e = right[k];
            for (; c + 4 <= e; c += 4) {
                t[0][p[c] >> 4] += 1;
                t[1][p[c + 1] >> 4] += 1;
                t[2][p[c + 2] >> 4] += 1;
                t[3][p[c + 3] >> 4] += 1;
            }
            for (; c < e; c++)
                t[0][p[c] >> 4] += 1;
        }
    for (int b = 0; b < 16; b++)
        bins[b] = t[0][b] + t[1][b] + t[2][b] + t[3][b];
}

void list_one(int64_t h, int64_t w, const uint8_t *img, const int64_t *pos, const int64_t *idx, int64_t *bins)
{
    memset(bins, 0, 16 * sizeof *bins);
    for (int64_t r = 0; r < h; r++)
        for (int64_t k = pos[r]; k < pos[r + 1]; k++)
            bins[img[r * w + idx[k]] >> 4] += 1;
}

void list_four(int64_t h, int64_t w, const uint8_t *img, const int64_t *pos, const int64_t *idx, int64_t *bins)
{
    int64_t t[4][16];
    memset(t, 0, sizeof t);
    for (int64_t r = 0; r < h; r++) {
        const uint8_t *p = img + r * w;
        int64_t k = pos[r], e = pos[r + 1];
        for (; k + 4 <= e; k += 4) {
            t[0][p[idx[k]] >> 4] += 1;
            t[1][p[idx[k + 1]] >> 4] += 1;
            t[2][p[idx[k + 2]] >> 4] += 1;
            t[3][p[idx[k + 3]] >> 4] += 1;
        }
        for (; k < e; k++)
            t[0][p[idx[k]] >> 4] += 1;
    }
    for (int b = 0; b < 16; b++)
        bins[b] = t[0][b] + t[1][b] + t[2][b] + t[3][b];
}
"""

#: the arrays each mask storage passes to the bounds, in order
STORAGE = {"runs": ("pos", "left", "right"), "list": ("pos", "idx")}


def declarations(source: str, returns: str) -> str:
    """The declarations of ``source``'s functions that return ``returns`` (each signature up to its
    ``{``), for cffi's ``cdef``."""
    out, sig = [], None
    for line in source.splitlines():
        if sig is None and line.startswith(returns + " ") and "(" in line:
            sig = line
        elif sig is not None and line.strip() != "{":
            sig += " " + line.strip()
        if sig is not None and line.strip() == "{":
            out.append(sig.replace("restrict ", "") + ";")
            sig = None
    return "\n".join(out)


def load_bounds():
    """(ffi, lib) of :data:`BOUND_C`, built with the kernels' own compiler flags."""
    from compiler.backend.build import build_library, load_library
    return load_library(build_library(BOUND_C, name="histogram_bound")[0], declarations(BOUND_C, "void"))


def bound_counts(ffi, lib, variant: str, img: np.ndarray, mask) -> np.ndarray:
    """The 16 counts of ``img`` (uint8, C order) under ``mask`` (a Tensor in a
    ``compiler.looplets.histogram`` mask format) by the hand-written bound ``variant`` (``one``,
    ``four``); its call alone is what :func:`main` times (see :func:`bound_call`)."""
    out = np.zeros(16, np.int64)
    bound_call(ffi, lib, variant, img, mask, out)()
    return out


def bound_call(ffi, lib, variant: str, img: np.ndarray, mask, out: np.ndarray):
    """A function of no arguments calling the bound ``variant`` on the arrays, counting into ``out``."""
    kind = "runs" if "Run" in str(mask.format) else "list"
    arrays = [np.ascontiguousarray(getattr(mask.levels[1], a), np.int64) for a in STORAGE[kind]]
    f = getattr(lib, f"{kind}_{variant}")
    args = [*img.shape, ffi.from_buffer("uint8_t[]", img), *(ffi.from_buffer("int64_t[]", a) for a in arrays),
            ffi.from_buffer("int64_t[]", out)]
    return lambda: f(*args)


def timed(f, repeat: int, clock) -> float:
    """The least time of ``repeat`` calls of ``f``."""
    best = np.inf
    for _ in range(repeat):
        t0 = clock()
        f()
        best = min(best, clock() - t0)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small images (a test's run)")
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = ap.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    import compiler as ss
    from compiler.backend.build import build_library, load_library
    from compiler.looplets.histogram import MaskedHistogram8, mask_format_for
    from compiler.looplets.morphology import PIXELS, MaskedHistogram
    from compiler.testing import sketch
    cv2 = opencv()
    ffi, bounds = load_bounds()
    rng = np.random.default_rng(0)
    canvas, count, small, mag, big = (120, 2, 60, 4, 1) if args.quick else (1111, 10, 700, 4, 2)
    gray = lambda m: np.where(m, 96 + (np.add.outer(np.arange(m.shape[0]), np.arange(m.shape[1])) % 160),  # noqa: E731
                              0).astype(np.uint8)
    sets = [(f"sketches ({count}, {canvas}x{canvas})", [sketch(canvas, canvas, 20, rng) for _ in range(count)]),
            (f"sketches x{mag} ({big}, {small * mag}x{small * mag})",
             [np.kron(sketch(small, small, 20, rng), np.ones((mag, mag), bool)) for _ in range(big)])]
    img = rng.integers(0, 256, (canvas, canvas)).astype(np.uint8)
    ys, xs = np.indices(img.shape)
    for density in (0.01, 0.1, 0.5):
        sets.append((f"scattered {density:.0%} of {canvas}x{canvas}", [rng.random(img.shape) < density]))
        disk = (ys - canvas / 2) ** 2 + (xs - canvas / 2) ** 2 < density * img.size / np.pi
        sets.append((f"disk {density:.0%} of {canvas}x{canvas}", [disk]))
    hist = MaskedHistogram8(16)
    ints = {}   # (the integer histograms by mask format and tables: each compiles its kernel once)
    print("per image, 16 bins (min of the repeats; ratio: OpenCV's time / this column's):")
    for label, masks in sets:
        images = [gray(m) for m in masks] if label.startswith("sketches") else [img] * len(masks)
        cols = {"call": [], "C kernel": [], "hand C": [], "hand C x4": [], "OpenCV": [], "numpy": [],
                "int x1": [], "int x4": []}
        kinds = set()
        for im, m in zip(images, masks):
            want = np.bincount(im[m] >> 4, minlength=16)
            M = ss.Tensor.from_numpy(m, mask_format_for(m))
            kind = "runs" if "Run" in str(M.format) else "list"
            kinds.add(kind)
            assert np.array_equal(hist(im, M), want)
            cols["call"].append(timed(lambda: hist(im, M), args.repeat, clock))
            # the generated kernel's C alone, on the same arrays (its own library: its exports declared)
            kernel = next(k for key, k in hist.kernels.items() if key[0] == M.format)
            kffi, klib = load_library(build_library(kernel.c_source, name="histogram_kernel")[0],
                                      declarations(kernel.c_source, "int"))
            fn = getattr(klib, kernel.compiled.name)
            out, err = np.zeros(16, np.int64), np.zeros(3, np.int64)
            kp = lambda a, t="int64_t[]": kffi.from_buffer(t, a)  # noqa: E731
            arrays = [np.ascontiguousarray(getattr(M.levels[1], a), np.int64) for a in STORAGE[kind]]
            # (by the kernel's parameters: it takes only the extents its body reads)
            given = {"bins0_size": 16, "bins_val": kp(out), "img_val": kp(im, "uint8_t[]"),
                     **{f"img{d}_size": n for d, n in enumerate(im.shape)},
                     **{f"mask{d}_size": n for d, n in enumerate(m.shape)},
                     **{f"mask1_{a}": kp(arr) for a, arr in zip(STORAGE[kind], arrays)}}
            # (the error slots, where a kernel checks an index: the 8-bit bins checks none)
            kargs = [given[p.name] for p in kernel.function.params] + \
                ([kp(err)] if "int64_t *error)" in kernel.c_source else [])
            assert fn(*kargs) == 0 and np.array_equal(out, want), f"{label}: the kernel's C alone"
            cols["C kernel"].append(timed(lambda: fn(*kargs), args.repeat, clock))
            for col, name in (("hand C", "one"), ("hand C x4", "four")):
                call = bound_call(ffi, bounds, name, im, M, out)
                call()
                assert np.array_equal(out, want), f"{label}: {col}"
                cols[col].append(timed(call, args.repeat, clock))
            cols["numpy"].append(timed(lambda: np.bincount(im[m] >> 4, minlength=16), args.repeat, clock))
            wide = ss.Tensor.from_numpy(im.astype(np.int64), PIXELS)
            for tables in (1, 4):
                key = (str(M.format), tables)
                if key not in ints:
                    ints[key] = MaskedHistogram(16, 256, mask_format=M.format, tables=tables)
                h = ints[key]
                assert np.array_equal(h(wide, M), want), f"{label}: int x{tables}"
                cols[f"int x{tables}"].append(timed(lambda: h(wide, M), args.repeat, clock))
            if cv2 is not None:
                u8 = m.astype(np.uint8)
                assert np.array_equal(cv2.calcHist([im], [0], u8, [16], [0, 256]).ravel(), want)
                cols["OpenCV"].append(timed(lambda: cv2.calcHist([im], [0], u8, [16], [0, 256]), args.repeat, clock))
        per = {k: sum(v) / len(v) for k, v in cols.items() if v}
        cv = per.get("OpenCV")
        cells = "  ".join(f"{k} {t * 1e3:7.3f} ms" + (f" ({cv / t:5.1f}x)" if cv and k != "OpenCV" else "")
                          for k, t in per.items())
        pixels = sum(int(m.sum()) for m in masks) // len(masks)
        print(f"  {label:30s} {'/'.join(sorted(kinds)):4s} {pixels:7d} px  {cells}", flush=True)


if __name__ == "__main__":
    main()
