"""The BURRITO paper's shape-operator kernels (Figs. 24-26) against scipy.sparse and pydata/sparse.

Each kernel is index notation with shape operators, lowered once by the looplets strategy and
once by the lattice strategy (BURRITO's own pipeline; compile time excluded, as the paper excludes
it) and timed as the minimum of ``--repeat`` calls next to the libraries' own calls in the same
run; every result is checked against scipy's. The geometric means are the looplets kernels'; the
lattice column's ratio is scipy's time over the lattice kernel's.
A library call past ``--timeout`` seconds (or failing) counts as that many seconds, as the
paper caps its geometric means. Fig. 26 also times the unfused form: two kernels through a
materialized intermediate.

    .venv/bin/python benchmarks/bench_shape.py                 # 20k x 20k, 1M nonzeros
    .venv/bin/python benchmarks/bench_shape.py --n 2000 --nnz 40000 --repeat 3   # quick
    .venv/bin/python benchmarks/bench_shape.py --clock cpu     # CPU time: steadier on a shared machine
    .venv/bin/python benchmarks/bench_shape.py --shared        # operands sharing scipy's arrays
    .venv/bin/python benchmarks/bench_shape.py --shared --sealed   # ... sealed read-only: no check per call

The operands are the tensors' own copies of the scipy matrices (``Tensor.from_scipy(m, copy=True)``:
sealed index arrays, read with no check per call), as scipy's side reads its own; ``--shared``
times tensors over scipy's arrays instead (``from_scipy(m)``), which each call checks again in one
pass (the owner may have written them in place): at 20k x 20k that pass is 0.2-0.5 ms an operand,
most of 24f's time. (Stop 59's tensors shared scipy's arrays when those checks began: its Fig. 24
geometric mean fell to 0.67x.) Stop 60, a quiet host, wall time, with pydata: Fig. 24 1.88x scipy and
41.3x pydata (every row at or above scipy's: 24e 1.07x, 24f 1.24x), Fig. 25 3.19x and 63.8x, fused over
unfused 3.59x / 2.11x / 1.55x; with ``--shared`` Fig. 24 1.04x (24f 0.37x: the check of the shared arrays).
Stop 94, ``--clock cpu --no-pydata``: ``--shared`` Fig. 24 1.44x, Fig. 25 3.41x (24b 0.94x, 24f 0.62x: 0.15 ms of
24f's 0.32 is the pass over the shared index arrays, which the row slice copies into its output); ``--shared
--sealed`` (scipy's index arrays made read-only, ``Tensor.from_scipy(m).seal()``: no call checks them again) Fig. 24
2.08x, Fig. 25 4.31x, every row at or above scipy's (24b 1.44x, 24f 1.01x), fused over unfused 6.02x / 2.17x / 1.31x.

Results (20k x 20k, 1M nonzeros, min of 10, ``--clock cpu``; a 2-core VM shared with other jobs,
so times wander by 20-50% between runs; the looplets kernels against scipy 1.17.1 and pydata/sparse
0.19.3). Before (b397de3) and after the block copy of :mod:`compiler.imperative.blockcopy` (a run
of entries copied unchanged is counted for dropped fills, then copied in one SIMD loop), run one
after the other at a load of 4:

    fig  kernel                    vs scipy before -> after   vs pydata before -> after
    24a  C = collapse(COO)              3.29x -> 3.57x             4.20x -> 4.19x
    24b  COO = hstack(COO, COO)         1.33x -> 1.15x             5.60x -> 5.58x
    24c  COO = vstack(COO, COO)         1.76x -> 1.36x             0.76x -> 0.75x
    24d  CSR = hstack(CSR, CSR)         2.12x -> 1.99x              184x -> 3071x (pydata capped at 5 s)
    24e  CSR = vstack(CSR, CSR)         0.65x -> 0.73x             2.06x -> 1.88x
    24f  CSR = slice(CSR)               0.78x -> 0.82x             9523x -> 9807x (capped)
    25a  COO = split(C)                 0.84x -> 1.38x            35.7x  -> 63.1x
    25b  CSR = split(C)                 2.43x -> 3.04x            51.5x  -> 62.7x
    25c  CSR = hstack(COO, COO)         3.72x -> 3.58x            20.5x  -> 18.9x
    25d  COO = hstack(CSR, CSR)         1.89x -> 2.07x             190x  -> 220x
    25e  COO = vstack(CSR, CSR)         2.22x -> 2.96x            8.17x  -> 9.46x
    25f  COO = slice(CSR)               1.09x -> 1.34x            12.1x  -> 13.5x
    Fig. 24 geometric mean              1.42x -> 1.37x            20.0x  -> 31.6x   (paper 1.66x-15.3x, 1.67x-651x)
    Fig. 25 geometric mean              1.81x -> 2.23x            29.8x  -> 35.8x   (paper 7.29x-13.0x, 21.3x-511x)
    fused over unfused: 26a 1.69x -> 1.31x, 26b 4.15x -> 2.98x, 26c 1.30x -> 1.10x; fused over scipy 2.51x -> 2.51x

A second such pair: Fig. 24 1.39x -> 1.41x, Fig. 25 1.86x -> 2.18x, fused over unfused 1.83x / 3.78x /
1.17x -> 1.35x / 3.82x / 1.27x. With runs under 8 entries appended entry by entry (as the block copy
does now): Fig. 24 1.52x, Fig. 25 2.42x against scipy, 23.1x and 36.8x against pydata, the CSR
vstack 0.86x, fused over unfused 1.36x / 2.69x / 1.19x. The COO operands (24a-c, 25c) and 26a's product are not run copies:
their differences are the machine's noise. The block copy gains on the splits and the CSR to COO
kernels; on a quiet machine the CSR vstack (1.5-1.6 ms both) and hstack stay as they were: they are
bound by memory (a profile: the count loop's first read of each row, then the copy, which GCC makes
a memcpy per row). At a load of 8 to 14 they gained (CSR vstack 3.6 -> 2.7 ms, hstack 4.1 -> 2.2 ms).
The CSR vstack stays below scipy's because it writes 8-byte column indices where scipy's
concatenation keeps its 4-byte ones, and copies row by row where scipy copies each operand's
arrays whole (glibc's large memcpy streams past the cache): closing it needs whole-operand copies
in the concatenation, or int32 output indices.

The outputs now take int32 indices (``--index fit``, the default: int32 where the output's extents and the
operands' entries fit, as scipy's ``get_index_dtype`` picks, and the compressed vectors read with
int32 indices as scipy's 1 x n^2 row holds them; ``--index int64`` for the shorthands' int64).
Figs. 24 and 25 give their outputs as shorthand names, so ``lower()`` makes that choice itself
(:mod:`compiler.index_fit`); the script stops if it differs from the rule here. Their generated C is
the one the int32 formats given gave before (the same text for the 14 lattice and looplets kernels of
the hstack, vstack, slice and collapse, checked), so their times are too: one run of each at
20k x 20k (``--repeat 5 --no-pydata --clock cpu``, a load of 6 to 9) gave Fig. 24 1.23x and 1.52x,
Fig. 25 2.32x and 1.87x against scipy, the machine's noise. Two before/after pairs run alternately (before: 42b67eb, int64 outputs; after: int32 outputs,
each count stored into an int32 ``pos`` checked by the kernel), ``--clock cpu``, no pydata, at a load
of 8 to 10 on 2 cores (CPU times about twice a quiet machine's; the ratios wander by 20-30%):

    fig  kernel                    vs scipy, pair 1        pair 2
    24a  C = collapse(COO)         2.71x -> 3.07x          3.16x -> 2.95x
    24b  COO = hstack(COO, COO)    1.62x -> 1.59x          1.38x -> 1.88x
    24c  COO = vstack(COO, COO)    1.25x -> 1.70x          2.08x -> 1.65x
    24d  CSR = hstack(CSR, CSR)    1.58x -> 2.15x          2.47x -> 3.66x
    24e  CSR = vstack(CSR, CSR)    0.77x -> 0.89x          0.84x -> 1.06x
    24f  CSR = slice(CSR)          0.52x -> 0.62x          0.73x -> 0.79x
    25a  COO = split(C)            1.33x -> 1.59x          1.79x -> 1.36x
    25b  CSR = split(C)            2.72x -> 3.31x          3.22x -> 2.84x
    25c  CSR = hstack(COO, COO)    3.48x -> 3.56x          3.41x -> 2.93x
    25d  COO = hstack(CSR, CSR)    1.93x -> 3.73x          2.04x -> 3.30x
    25e  COO = vstack(CSR, CSR)    1.63x -> 3.88x          2.52x -> 2.40x
    25f  COO = slice(CSR)          1.49x -> 1.65x          1.82x -> 1.65x
    Fig. 24 geometric mean         1.23x -> 1.47x          1.55x -> 1.75x
    Fig. 25 geometric mean         1.97x -> 2.77x          2.38x -> 2.30x

(In these runs scipy's side of 24b, 24c and 25c still converted its CSR operands to COO inside its
timed call; the COO operands are now made before timing for scipy as for us, so those three ratios,
and the geometric means, are lower than shown.)

The CSR vstack against hand-written C of the same job (20k x 20k, CPU time, one process timing
each in turn): scipy 1.04-1.16 ms; pos with an offset and idx and val memcpy'd, int32 out, 0.91-0.93
ms (the bound), int64 out 1.06-1.27 ms; each row's dropped values counted then the row copied (what
the kernels do), int32 out, 1.01-1.11 ms; the lattice kernel into int32 CSR 1.08-1.22 ms, of which
0.13 ms is the call and the output's pos (its call on empty operands). Copying each operand whole
while counting its dropped values in the same pass reaches the bound in C (0.90-0.93 ms), but as a
pass over the lattice kernel's rows it measured no faster than the row copies (1.13-1.26 ms against
1.11-1.21 ms): what remains is the fresh output's first touch (a numpy array of the same 12 MB,
allocated and filled: 0.58 ms), which scipy pays too, the count of dropped values (scipy's
concatenation keeps stored zeros; an output here stores none) and the call.

Fig. 26's fused kernels stay at least 1.2x their unfused forms except 26c (1.10x-1.30x): its
slice costs 0.48 ms and the multiply on the materialized slice 2.67 ms, so even a fused kernel as
fast as that multiply alone would be (0.48 + 2.67) / 2.67 = 1.18x its unfused form; the fused one
takes 2.8-3.1 ms, 0.2-0.3 ms more than the multiply, as it reads every other row of A rather than
one contiguous array. The block copy made the unfused kernels' stack, slice and collapse faster,
which lowered each fused/unfused ratio; the fused kernels' own times did not change.

Against a hand-written bound (``bench_shape_bound.py``: per row scipy, both strategies and a small C
function doing the job in the fewest passes, fresh outputs, int32 indices; 20k x 20k, 1M nonzeros,
``--clock cpu``, min of 10 paired rounds, load 10-11 on 2 cores). Two runs of e1d7778 and three after
the lattice split's strength reduction (99072d2: a compare against the row's end and a subtract per
entry, where it divided and took a modulo), ranges in ms (the looplets C is the same in both: its
spread is the machine's):

    fig  scipy        looplets     lattice before -> after   bound       scipy/bound  looplets/bound
    24a  9.2-10.7     3.3-3.5      4.2       -> 4.1-4.4      2.0-2.1     4.6-5.0      1.5-1.8
    24b  4.3-5.7      3.5-4.5      2.6-2.9   -> 2.7-3.6      2.3-2.6     1.6-2.2      1.5-1.9
    24c  3.5-5.5      3.0-4.1      2.5-3.3   -> 2.2-3.4      1.5-2.2     2.1-2.7      1.5-1.9
    24d  4.7-6.0      1.9-2.9      2.3-2.6   -> 2.1-2.6      1.7-1.8     2.5-3.5      1.1-1.7
    24e  1.2-2.5      1.3-2.8      1.8-1.9   -> 1.2-2.5      0.9-1.8     1.2-1.4      1.4-1.7
    24f  0.45-0.50    0.46-0.50    0.52-0.60 -> 0.51-0.52    0.30-0.31   1.4-1.7      1.5
    25a  5.1-7.5      4.0-4.9      3.8-4.2   -> 2.8-3.5      2.3-3.1     2.1-2.5      1.4-1.7
    25b  11.2-13.1    4.2-5.7      4.0-4.1   -> 3.4-3.5      2.3-2.4     4.4-5.6      1.7-1.9
    25c  12.0-13.2    3.9-5.4      3.0-4.1   -> 3.2-3.7      2.7-3.1     4.2-5.3      1.3-1.7
    25d  7.0-8.4      2.7-3.9      2.4-4.2   -> 2.4-3.2      2.4-3.2     2.6-3.2      1.1-1.4
    25e  6.6-9.9      2.3-3.9      2.5-4.3   -> 2.1-3.0      1.8-2.8     2.8-3.6      1.1-1.4
    25f  1.05-1.15    0.55-0.66    0.65-0.70 -> 0.63-0.68    0.36-0.54   2.0-3.2      1.0-1.8
    Fig. 24 geomean over scipy: looplets 1.37-1.53x, lattice 1.40-1.58x, bound 2.09-2.33x (paper 1.66x)
    Fig. 25 geomean over scipy: looplets 2.17-2.50x, lattice 2.38-2.71x, bound 3.12-3.42x (paper 7.29x)

So on this machine the paper's Fig. 25 ratio is out of reach: the hand-written C, which does no
more than read each operand once and write each output once, is 3.1-3.4x scipy's time, not 7.29x
(scipy's calls take 2-5.6x the copy here, not 7-13x). Fig. 24's 1.66x is within the bound's
2.1-2.3x. Where ours stays above the bound: the looplets split (25a, 25b) seeks each row's start by
a binary search of the whole vector and gallops to its end (the profile: about 35% and 20% of the
kernel's samples); carrying the cursor from one row to the next (the next window starts where the
last ended) would remove both (since done: below). The collapse of a COO (24a) walks it through a
stepper per row and entry where the bound is one loop computing i * n + j; the CSR vstack (24e) and
the COO stacks (24b, 24c) copy row by row or entry by entry where the bound copies whole arrays; the
slices (24f, 25f) are 0.15-0.2 ms over it, about a call's fixed cost (0.1 ms over the bound
at 300 x 300). The lattice split is now
1.1-1.5x its bound (callgrind, the kernels alone: 38.5M -> 30.7M instructions for 25a, 41.8M ->
31.9M for 25b; the bound's 12M and 10M), the rest its per-entry fill test and room checks.
Storing a sparse vector's count once after the loops (where ``pos[1] += 1`` per entry loaded what
the entry before stored) took the lattice 24a from 3.4-3.6 to 2.8-2.9 ms in three pairs at a load
of 6-7 (bound 1.1 ms there; the looplets 24a, unchanged, 2.6-3.0 ms). A CSR output keeps its
``pos[row + 1] += 1``: the block copy adds it up a run at a time, and a store of the row's end
instead (tried) lost the block copies of 24e, 24f and 25c.

The looplets split now carries its cursor from row to row (:mod:`compiler.looplets.carried`: c's
cursor declared before the rows, each row's walk starting where the last stopped), and a COO
operand's rows are walked by their positions, so the block copy copies each as a run (24a-c, 25c;
before, entry by entry). Instructions of each kernel alone (callgrind on a C harness calling the
kernel's C, 2000 x 2000, 40k entries, ``-march=x86-64-v3`` as valgrind runs no AVX-512), before
(d56687f) -> after, and the bound: 24a 1.37M -> 0.96M (0.60M), 24b 1.64M -> 1.30M (0.51M), 24c
1.52M -> 0.96M (0.68M), 25a 1.62M -> 1.19M (0.77M), 25b 1.42M -> 0.98M (0.71M). Two paired runs
of each, alternating (``bench_shape_bound.py --clock cpu``, 20k x 20k, load 11-14 on 2 cores), ms:

    fig  looplets before -> after   bound        looplets/bound before -> after
    24a  3.27-4.21 -> 2.30-3.16     1.92-2.33    1.68-1.81 -> 1.20-1.41
    24b  4.13-5.74 -> 2.78-3.00     1.93-3.76    1.53-1.77 -> 1.11-1.44
    24c  3.80-4.73 -> 2.92-3.86     1.55-3.36    1.84-2.45 -> 1.15-1.52
    25a  4.32-5.43 -> 2.15-2.26     1.93-3.70    1.47-1.63 -> 0.88-1.11
    25b  4.09-4.52 -> 1.98-2.43     1.59-2.48    1.82-1.89 -> 1.15-1.25
    25c  4.79-5.81 -> 2.45-3.17     1.37-2.81    1.86-2.07 -> 1.29-1.79
    (the other rows, and every lattice kernel, have the same C before and after)
    Fig. 24 geomean over scipy: looplets 1.43-1.51x -> 1.67-1.74x, lattice 1.55-1.66x, bound 2.27-2.41x
    Fig. 25 geomean over scipy: looplets 2.10-2.28x -> 2.84-2.91x, lattice 2.55-2.79x, bound 3.29-3.77x

What stays over the bound: the looplets 24a and the COO stacks still find each row's end by a
scan of the row coordinates before copying it, and count its values equal to the fill (one more
pass over them); the lattice COO stacks and collapse still append entry by entry.

The same on a quiet machine (load about 1), e1d7778 then after both lattice changes, ms:

    fig  scipy      looplets   lattice before -> after   bound   scipy/bound
    24a  6.3-7.1    2.0-2.2    2.68 -> 2.37-2.43         1.0     6.4-6.8
    25a  4.1-4.2    2.8-2.9    2.46 -> 1.77-1.97         1.4-1.6 2.6-3.0
    25b  8.7-8.8    2.8-3.4    2.47 -> 2.21-2.52         1.2-1.4 6.3-7.4
    25c  7.9-8.7    2.6-2.9    1.80 -> 1.86-1.96         1.1-1.2 6.9-7.4
    (24b-f, 25d-f: within 10% before and after)
    Fig. 24 geomean over scipy: looplets 1.45-1.47x, lattice 1.61x -> 1.64-1.69x, bound 2.48-2.50x
    Fig. 25 geomean over scipy: looplets 2.47-2.52x, lattice 2.87x -> 2.99-3.16x, bound 3.93-4.22x

The block copy in one pass (:mod:`compiler.imperative.blockcopy`: the copy loop counts the run's
dropped values as it goes, and a run holding one is appended again entry by entry from the same
count; before, a count loop read the values, then the copy read them again). Four pairs run
alternately (7fbe54f, then after; ``bench_shape_bound.py --clock cpu --only 24a,...,24f``, 20k x 20k,
min of 10 paired rounds, load 2-8 on 2 cores), ranges of each kernel over its bound:

    fig  looplets/bound before -> after   lattice/bound before -> after
    24a  1.34-1.50 -> 0.99-1.29           1.21-1.59 -> 0.92-1.06
    24b  1.54-1.90 -> 1.24-1.38           1.52-2.03 -> 1.15-1.34
    24c  1.13-1.35 -> 1.09-1.28           1.21-1.40 -> 0.92-1.04
    24d  1.25-1.52 -> 1.01-1.43           1.28-1.43 -> 0.98-1.30
    24e  1.12-1.46 -> 1.12-1.48           1.09-1.45 -> 1.05-1.43
    24f  1.11-1.57 -> 0.96-1.53           1.19-1.71 -> 1.64-1.91 (0.3-1.8 ms: see below)
    Fig. 24 geomean over scipy: looplets 1.57-1.61x -> 1.69-1.91x, lattice 1.45-1.59x -> 1.70-1.92x,
    bound 2.08-2.25x -> 2.12-2.22x (paper 1.66x)

Two pairs of Fig. 25 (load 8) moved within the machine's noise (lattice 2.60-2.76x -> 2.48-2.61x,
the bound's own ratio 3.04-3.69x -> 3.07-3.10x). What stays over the bound in Fig. 24: the COO hstack
(24b) scans each part's row for its end before copying it, and its rows of 25 entries pay the
vector loop's set-up and tail; the slices (24f, 0.3-1.3 ms) pay about a call's fixed cost. A CSR
output of a COO vstack (not a figure's row) needs no flat copy: against a hand-written C that
finds each row's end by walking the row coordinates and copies idx and val whole, the lattice
kernel is 0.91-1.05x it and the looplets 0.82-0.85x (three runs after, load 6-7; one before: 1.07x
both). The slice rows (24f) take 0.3-1.8 ms, so their ratios are the machine's noise: the lattice slice's
own times were lower after in each pair. A fifth pair (load 10-11): Fig. 24 over scipy, looplets 1.53x
-> 1.81x, lattice 1.48x -> 2.00x, bound 2.09x -> 2.34x; 24c lattice/bound 1.27x -> 0.85x.
Fig. 26 (``bench_shape.py --no-pydata --clock cpu``, two pairs at load 8-10): fused over unfused,
looplets, 26a 1.29x, 1.14x -> 1.13x, 1.10x; 26b 2.02x, 3.04x -> 2.49x, 2.58x; 26c 1.32x, 1.37x ->
1.32x, 1.31x. 26a's looplets fused kernel (8.3-9.8 ms, the lattice's 4.4-5.4 ms) is under 1.2x its
unfused form in three of the four runs, before as after: the block copy sped up its unfused collapse.
Its cause: b's cursor is carried across A's rows, and each row's seek bisected the rest of b (about
20 cache-missing probes per row). Seeks gallop from the cursor now (``compiler/looplets/searching.py``):
``--no-pydata --clock cpu --repeat 5``, load 6.5, before then after twice: 26a looplets fused 8.24 ms
-> 6.77, 5.70 ms (lattice 4.43 -> 5.76, 4.30 ms), fused over unfused 1.22x -> 1.59x, 1.81x; 26b, 26c
unchanged within noise. A 26a-only script, three alternating pairs at load 7-8: fused 8.2-10.6 ms ->
5.9-6.6 ms, over unfused 1.04-1.25x -> 1.75-1.92x, lattice 5.4-7.6 ms.

The CSR vstack and row slice (24e, 24f). A profile of the looplets slice put 30% of its kernel's
samples on one load: each row's ``lastA = qA < qA_stop ? A1_idx[qA_stop - 1] + 1 : 0``, the row's
last coordinate read (a cache miss) before its copy reads the row from its start, only to test
``0 < lastA``. The looplets now enter a fiber's first phase from 0 by ``qA < qA_stop``
(:meth:`compiler.looplets.bounds.IntFacts.positive_when`), and a vstack's second part is no longer
cut at the first part's column count (the call's shape inference checks them equal:
``shape_equal_sizes``; its ``seek`` and ``lastC`` went). A shape-operator kernel also infers its
premises once per set of shapes (0.04-0.06 ms a call). Before (70c1c09) and after, one process
timing both kernels in turn (min of 60 rounds, ``--clock cpu`` alike, load 9): looplets 24f 1.29
-> 0.85 ms (scipy 0.67), 24e 2.28 -> 2.22 ms (before the vstack's second part changed; scipy 2.64).
``bench_shape.py --no-pydata --clock cpu``, two alternated pairs at a load of 9 (scipy's own 24f
time moved 0.33-1.42 ms between runs: the ratios are the machine's noise as much as ours):

    run                    24e looplets  24f looplets  24e lattice  24f lattice  Fig. 24 looplets  lattice
    before, pair 1         1.03x         2.29x         1.10x        2.12x        2.03x             2.30x
    after,  pair 1         1.04x         0.69x         1.16x        1.18x        1.82x             2.11x
    before, pair 2         0.92x         0.85x         0.92x        0.67x        1.76x             1.76x
    after,  pair 2         1.22x         0.37x         1.05x        1.26x        1.67x             2.17x

In paired rounds the looplets 24f (0.74-0.91 ms) stays behind the lattice's (0.46-0.62 ms), with
the same C copy loop dominating both profiles; reserving as the lattice does (all of A's entries,
tried) and hugepages for 1 MB buffers (tried) did not change it: not found.
``bench_shape_bound.py --clock cpu --only 24e,24f`` (paired rounds against scipy and the hand-written
memcpy bound), two alternated pairs before (70c1c09) and after, load 12, ratios over scipy:

    fig  looplets before -> after   lattice before -> after   bound (scipy/bound)
    24e  0.98-0.99x -> 1.13-1.20x   0.95x      -> 1.02-1.15x  1.25-1.30x
    24f  0.68-1.00x -> 1.05-1.20x   0.78-0.88x -> 1.03-1.06x  1.40-1.62x

The strided row slice again (24f). Both strategies' copy loops compile to the same instructions
(``gcc -O3 -S`` with the kernels' flags: one AVX2 loop of 8 entries, values and indices loaded and
stored 32 bytes at a time, a compare counting the zeros; only the order of two stores differs).
The kernels' C alone, from a C driver (20k x 20k, 1M entries, 249,836 kept, CPU time, min of 60):
looplets 0.165-0.187 ms, lattice 0.187-0.202 ms (either reservation), the looplets' C with each
row's copy a memcpy and no zero count 0.160-0.175 ms (the bound's form); a 64 MB sweep before
each call, looplets 0.55-0.60 ms, lattice 0.59-0.67 ms. Through Python in paired rounds: looplets
0.22-0.29 ms, lattice 0.24-0.30 ms (load 3); ``bench_shape_bound.py --only 24e,24f`` on main
(c4f7458) at load 11, looplets 0.29-0.34 ms, lattice 0.33-0.36 ms. So the looplets' 24f is not
slower and the 1.2-1.5x above did not reproduce: its C is at the memcpy bound (the lattice's is
1.1x it; its rows stepped by 2 rather than by a skip loop, tried in the C, took 5 us of the 20
off). What does move these kernels is
the output's first touch: with glibc's mmap threshold pinned (``MALLOC_MMAP_THRESHOLD_=131072``)
each call's 3 MB output is fresh memory, about 730 page faults and 2.6-3.4 ms a call, ten times
the usual; whether freed outputs are reused depends on the process's allocations before.
The lattice now reserves a row slice's output from the kept rows' entries (:mod:`compiler.kept_rows`,
as the looplets do): 3 MB, where it reserved A's 12 MB (94-105 page faults a call in paired
rounds before, 0.1 after). 24f stays about scipy's time: scipy's row slice is itself one pass of
row copies into exactly sized arrays, and its call (77 us on an empty 20k x 20k matrix) costs
more than ours (62 us looplets, 68 us lattice); the bound is 1.3-1.6x scipy, ours 1.1-1.5x the
bound, the rest the call (the bound times its C call on arrays made before). ``bench_shape.py
--no-pydata --clock cpu``, two pairs alternated, main (c4f7458) then after, load 11-13 (ratios
over scipy; the 24e lattice, whose C did not change, moved 1.41x -> 0.67x: the machine's noise):

    run              24f loop  24f latt  Fig.24 loop  latt   Fig.25 loop  latt   26 fused/unfused    26 vs scipy
    main, pair 1     1.14x     0.90x     1.97x        2.09x  3.92x        3.30x  1.48 2.60 1.21x     2.37x
    after, pair 1    0.96x     0.64x     1.88x        1.71x  4.23x        3.41x  1.59 2.54 1.29x     2.56x
    main, pair 2     0.95x     0.83x     1.94x        2.04x  4.16x        3.01x  1.57 2.63 1.29x     2.66x
    after, pair 2    1.22x     1.09x     1.83x        1.91x  3.97x        3.29x  1.53 2.18 1.18x     2.57x

``bench_shape_bound.py --clock cpu --only 24e,24f``, the same alternation (load 11-13), 24f over
scipy: looplets 1.18x, 1.03x -> 0.97x, 1.12x; lattice 0.99x, 0.98x -> 1.20x, 1.15x; the lattice
over the bound 1.33x, 1.41x -> 1.19x, 1.35x.

The looplets' merge of two sparse lists (issue 30). A step of two steppers was cut at its phase's
stop (``min(min(jA + 1, jB + 1), phase_stop)``, though each child ends by its fiber's last, which
the phase ends at) and moved each stepper in a branch of a three-way ``if / else if``, mispredicted
about once an entry where the lists' coordinates fall at random. Now the cut is gone, an
intersection's steppers move on branch-free (``qA += (int64_t)(jA + 1 == step_stop)``, as the
lattice's intersection) and a union keeps its arms (as the lattice's, and scipy's merge); an
elementwise operator of sparse operands reserves their entries' sum (as the lattice does). Five
runs before (084cd2d) and two to five after, alternated, ``--no-pydata --clock cpu``, load 3-15,
medians (ms):

    fig  fused before -> after   unfused before -> after   lattice
    26a  3.12 -> 1.57            5.52 -> 6.21              2.1
    26b  0.50 -> 0.60            1.29 -> 1.31              0.54
    26c  2.89 -> 1.26            3.23 -> 1.54              1.8

26a's fused step keeps its arms: its output is written through a shifted Lookup (the collapse's
``j + i * |j|``), which the test for an intersection (with one list at its fill the body writes
only fills) does not see through; on its data (``b`` is ``A`` shifted two columns, so the merge
takes A, b, A, b, ... and every branch is predicted) the branches are 3.5x faster than the
branch-free form (5.3 ms), which its unfused form's plain intersection of two vectors takes (5.5
-> 6.2 ms). The kernels alone (20k x 20k, 1M entries each, min of 10, median of 3, load 3-6):
CSR .* CSR 11.2 -> 4.9 ms (lattice 4.9), CSR + CSR 21.6 -> 10.3 ms (lattice 11.2).

The rows below scipy (24b, 24e, 24f). The CSR vstack now copies each operand's entries whole
(:mod:`compiler.imperative.rowspans`, both strategies: one SIMD copy counting dropped values, then
the rows counted from the operand's ``pos``; the rows appended one by one only when a value was
dropped): its C alone, from a C driver, 0.54-0.59 -> 0.47-0.53 ms (its memcpy bound 0.45-0.51
ms). And a shape-operator kernel's call takes the fast path (:mod:`compiler.fastcall`) once the general path
has checked its shapes' premises: 23-25 us -> 5-8 us a call, which was 15% of the row slice's time.
Three alternated pairs, main (5d1253b) then after, ``bench_shape_bound.py --clock cpu --only
24a,...,24f --repeat 10`` at a load of 6-7 on 2 cores (ratios over scipy measured in the same run):

    fig  looplets before -> after    lattice before -> after    looplets/bound before -> after
    24a  4.40-4.71x -> 4.64-4.81x    5.25-6.06x -> 5.79-6.55x   1.35-1.45 -> 1.13-1.34
    24b  1.35-1.64x -> 1.22-1.74x    1.37-1.70x -> 1.21-1.83x   1.22-1.42 -> 1.17-1.40
    24c  1.57-1.97x -> 1.74-1.95x    1.88-2.18x -> 2.06-2.39x   1.21-1.51 -> 1.00-1.26
    24d  2.34-2.83x -> 3.00-3.24x    2.31-3.04x -> 3.24-3.26x   0.69-1.41 -> 1.10-1.16
    24e  0.97-1.06x -> 1.08-1.19x    0.98-1.04x -> 1.10-1.23x   1.44-1.51 -> 1.17-1.37
    24f  0.98-1.07x -> 1.22-1.40x    0.95-1.24x -> 1.14-1.38x   1.12-1.37 -> 1.14-1.24
    Fig. 24 geomean over scipy: looplets 1.78-1.81x -> 1.92-2.04x, lattice 1.90-1.95x -> 2.08-2.23x,
    bound 2.03-2.53x -> 2.21-2.50x (paper 1.66x)

(24a-24d have the same C before and after: their moves are the call's 15-20 us and the machine.)
``bench_shape.py --no-pydata --clock cpu --repeat 7``, four alternated pairs at the same load: Fig. 24
looplets 1.55-1.82x (median 1.69x) -> 1.88-2.05x (median 1.97x), lattice 1.28-1.86x -> 1.80-2.38x; its
single rows wander by 2x between runs (24f's scipy 0.14-0.52 ms). On this loaded machine main's
geometric mean is itself above the paper's 1.66x; the quiet-host runs of the last stop (1.49-1.51x)
were not repeated. What stays over the bound: the COO hstack (24b) scans each part's row for its end,
then copies it (rows of 25 entries: the scan's exit and the vector loop's set-up and tail per row);
the row slice (24f) the count of the kept rows' entries and the call.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

#: the clock ``timed`` reads: wall time (the paper's), or with ``--clock cpu`` this process's CPU time,
#: which a shared machine's other jobs disturb far less (they still share its caches)
CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCK["wall"]


def timed(f, repeat: int, timeout: float):
    """(seconds, result): the minimum of ``repeat`` calls after one warm-up; ``timeout`` (and
    no result) when a call fails or the first takes longer than that."""
    try:
        t0 = clock()
        out = f()
        first = clock() - t0
    except Exception as e:  # a library that cannot do it counts as the cap, as in the paper
        return timeout, f"failed: {type(e).__name__}: {str(e)[:60]}"
    if first > timeout:
        return timeout, out
    best = first
    for _ in range(repeat - 1):
        t0 = clock()
        f()
        best = min(best, clock() - t0)
    return best, out


def coords_of(x):
    """(coordinates as rows, values) of a result's stored nonzeros, sorted, without densifying:
    a Tensor, a scipy matrix (a 1 x n row stands for a vector) or a pydata array."""
    if hasattr(x, "to_coords"):
        coords, vals = x.to_coords()
        coords = np.asarray(coords).reshape(len(x.shape), -1)
    elif isinstance(x, np.ndarray):
        nz = np.nonzero(x)
        coords, vals = np.array(nz), x[nz]
    else:
        m = sp.coo_matrix(x)
        coords, vals = (np.array([m.col]) if m.shape[0] == 1 else np.array([m.row, m.col])), m.data
    keep = vals != 0
    coords, vals = coords[:, keep], vals[keep]
    order = np.lexsort(coords[::-1]) if coords.size else np.arange(0)
    return coords[:, order], vals[order]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--no-pydata", action="store_true")
    ap.add_argument("--shared", action="store_true",
                    help="operands over scipy's arrays (checked again at each call), not their own copies")
    ap.add_argument("--sealed", action="store_true",
                    help="with --shared: scipy's index arrays sealed read-only (Tensor.seal), so no call checks "
                         "them again")
    ap.add_argument("--index", choices=["fit", "int64"], default="fit",
                    help="output index dtype: int32 where the output's extents and entries fit, as scipy "
                         "picks (default), or always int64 (the shorthands' default)")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall",
                    help="wall time (default, as the paper) or this process's CPU time (steadier on a shared machine)")
    args = ap.parse_args(argv)
    if args.sealed and not args.shared:
        ap.error("--sealed seals the scipy arrays the operands share: give --shared too")
    global clock
    clock = CLOCK[args.clock]
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))

    import compiler as ss
    try:
        import sparse as pydata
    except ImportError:
        pydata = None
    if args.no_pydata:
        pydata = None

    n = args.n
    rng, (A, Acoo, half, left, right, top, bottom, left_coo, right_coo, top_coo, bottom_coo, vec) = \
        fig24_25_operands(n, args.nnz)
    shifted = sp.csr_matrix((A.data, (A.tocoo().row, (A.tocoo().col + 2) % n)), shape=A.shape)
    x = rng.standard_normal(n)
    s, e, r = 0, (n + 1) // 2, 2
    # scipy keeps int32 indices where the shape and the entries fit (its get_index_dtype): the
    # outputs here do the same, so both write 4-byte indices; each kernel checks its counts
    narrow = args.index == "fit" and n * n <= np.iinfo(np.int32).max and 2 * A.nnz <= np.iinfo(np.int32).max
    idt = "int32" if narrow else "int64"

    def fmt(shorthand):
        return ss.parse_format(shorthand, index_dtype=idt)

    def auto(shorthand):
        # (a shorthand name lets lower() choose the index dtype, as scipy does; --index int64 fixes it)
        return shorthand if args.index == "fit" else fmt(shorthand)

    print(f"A: {n} x {n}, {A.nnz} nonzeros; min of {args.repeat} calls ({args.clock} time); cap {args.timeout} s; "
          f"pydata {'yes' if pydata else 'no'}; {idt} output indices")

    def tensor(m, name):
        t = ss.Tensor.from_scipy(m, name=name, copy=not args.shared)
        return t.seal() if args.sealed else t   # (--shared --sealed: scipy's own index arrays made read-only)

    print("operands: " + ("their own copies" if not args.shared else
                          "over scipy arrays, sealed read-only" if args.sealed else
                          "over scipy arrays (checked at each call)"))
    ten = {
        "A_csr": tensor(A, "A"), "A_coo": tensor(Acoo, "A"),
        "L_csr": tensor(left, "B"), "R_csr": tensor(right, "C"),
        "L_coo": tensor(left_coo, "B"), "R_coo": tensor(right_coo, "C"),
        "T_csr": tensor(top, "B"), "B_csr": tensor(bottom, "C"),
        "T_coo": tensor(top_coo, "B"), "B_coo": tensor(bottom_coo, "C"),
        "shift": tensor(shifted, "B"),
    }
    cv = compressed_vector(ss, vec, n * n, idt)
    pd = {}
    if pydata is not None:
        pd = {"A": pydata.COO.from_scipy_sparse(A), "Ag": pydata.GCXS.from_scipy_sparse(A),
              "L": pydata.COO.from_scipy_sparse(left), "R": pydata.COO.from_scipy_sparse(right),
              "Lg": pydata.GCXS.from_scipy_sparse(left), "Rg": pydata.GCXS.from_scipy_sparse(right),
              "T": pydata.COO.from_scipy_sparse(top), "B": pydata.COO.from_scipy_sparse(bottom),
              "Tg": pydata.GCXS.from_scipy_sparse(top), "Bg": pydata.GCXS.from_scipy_sparse(bottom),
              "v": pydata.GCXS.from_scipy_sparse(vec)}

    def kernel(program, out, strategy="looplets", **tensors):
        try:
            k = ss.lower(program, strategy=strategy, **tensors, **{program.split("[")[0]: out})
        except ss.StrategyError as e:
            return f"refused: {e}"
        chosen = {lvl.index_dtype.name for lvl in k.formats[program.split("[")[0]].levels
                  if getattr(lvl, "index_dtype", None) is not None}
        if chosen and chosen != {idt}:   # (lower()'s choice for a shorthand name is the rule above)
            raise SystemExit(f"{program}: output indices {chosen}, not {idt}")
        return lambda: k(**tensors)

    lattice = {}     # figure -> the lattice strategy's kernel of the same row

    def both(fig, program, out, **tensors):
        lattice[fig] = kernel(program, out, "lattice", **tensors)
        return kernel(program, out, **tensors)

    hst = "D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)"
    vst = "D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)"
    slc = f"D[k, i] = slice(A[j, i], j -> k, ({s}, {e}, {r}))"
    col = "c[k] = collapse(A[i, j], (i, j) -> k)"
    spl = f"D[i, j] = split(c[k], k -> (i, j:{n}))"
    rows = [
        # (figure, name, ours, scipy, pydata)
        ("24a", "C = collapse(COO)", both("24a", col, auto("sparse_vector"), A=ten["A_coo"]),
         lambda: Acoo.reshape(1, n * n).tocsr(), lambda: pd["A"].reshape((n * n,))),
        ("24b", "COO = hstack(COO, COO)", both("24b", hst, auto("coo"), B=ten["L_coo"], C=ten["R_coo"]),
         lambda: sp.hstack([left_coo, right_coo], format="coo"),
         lambda: pydata.concatenate([pd["L"], pd["R"]], axis=1)),
        ("24c", "COO = vstack(COO, COO)", both("24c", vst, auto("coo"), B=ten["T_coo"], C=ten["B_coo"]),
         lambda: sp.vstack([top_coo, bottom_coo], format="coo"),
         lambda: pydata.concatenate([pd["T"], pd["B"]], axis=0)),
        ("24d", "CSR = hstack(CSR, CSR)", both("24d", hst, auto("csr"), B=ten["L_csr"], C=ten["R_csr"]),
         lambda: sp.hstack([left, right], format="csr"),
         lambda: pydata.concatenate([pd["Lg"], pd["Rg"]], axis=1)),
        ("24e", "CSR = vstack(CSR, CSR)", both("24e", vst, auto("csr"), B=ten["T_csr"], C=ten["B_csr"]),
         lambda: sp.vstack([top, bottom], format="csr"),
         lambda: pydata.concatenate([pd["Tg"], pd["Bg"]], axis=0)),
        ("24f", "CSR = slice(CSR)", both("24f", slc, auto("csr"), A=ten["A_csr"]),
         lambda: A[s:e:r, :], lambda: pd["Ag"][s:e:r, :]),
        ("25a", "COO = split(C)", both("25a", spl, auto("coo"), c=cv),
         lambda: vec.reshape(n, n).tocoo(), lambda: pd["v"].reshape((n, n)).asformat("coo")),
        ("25b", "CSR = split(C)", both("25b", spl, auto("csr"), c=cv),
         lambda: vec.reshape(n, n).tocsr(), lambda: pd["v"].reshape((n, n)).asformat("gcxs")),
        ("25c", "CSR = hstack(COO, COO)", both("25c", hst, auto("csr"), B=ten["L_coo"], C=ten["R_coo"]),
         lambda: sp.hstack([left_coo, right_coo], format="csr"),
         lambda: pydata.concatenate([pd["L"], pd["R"]], axis=1).asformat("gcxs")),
        ("25d", "COO = hstack(CSR, CSR)", both("25d", hst, auto("coo"), B=ten["L_csr"], C=ten["R_csr"]),
         lambda: sp.hstack([left, right], format="coo"),
         lambda: pydata.concatenate([pd["Lg"], pd["Rg"]], axis=1).asformat("coo")),
        ("25e", "COO = vstack(CSR, CSR)", both("25e", vst, auto("coo"), B=ten["T_csr"], C=ten["B_csr"]),
         lambda: sp.vstack([top, bottom], format="coo"),
         lambda: pydata.concatenate([pd["Tg"], pd["Bg"]], axis=0).asformat("coo")),
        ("25f", "COO = slice(CSR)", both("25f", slc, auto("coo"), A=ten["A_csr"]),
         lambda: A[s:e:r, :].tocoo(), lambda: pd["Ag"][s:e:r, :].asformat("coo")),
    ]
    ratios = {"24": ([], []), "25": ([], [])}
    print(f"{'fig':4s} {'kernel':26s} {'sparsescope':>12s} {'scipy':>10s} {'pydata':>10s} "
          f"{'vs scipy':>9s} {'vs pydata':>9s} {'lattice':>10s} {'vs scipy':>9s}")
    for fig, name, ours, theirs, pyd in rows:
        t_ours, out = timed(ours, args.repeat, args.timeout)
        t_sp, ref = timed(theirs, args.repeat, args.timeout)
        _check(name, out, ref)
        t_pd = timed(pyd, max(1, min(args.repeat, 3)), args.timeout)[0] if pydata else math.nan
        ratios[fig[:2]][0].append(t_sp / t_ours)
        if pydata:
            ratios[fig[:2]][1].append(t_pd / t_ours)
        print(f"{fig:4s} {name:26s} {t_ours * 1e3:10.2f}ms {t_sp * 1e3:8.2f}ms {t_pd * 1e3:8.2f}ms "
              f"{t_sp / t_ours:8.2f}x {t_pd / t_ours:8.2f}x {_lattice_column(lattice[fig], ref, name, args, t_sp)}")
    for fig, paper in (("24", "1.66x-15.3x vs scipy, 1.67x-651x vs pydata"),
                       ("25", "7.29x-13.0x vs scipy, 21.3x-511x vs pydata")):
        gs, gp = (geomean(v) for v in ratios[fig])
        print(f"Fig. {fig} geometric mean: {gs:.2f}x vs scipy, {gp:.2f}x vs pydata   (paper: {paper})")

    # Fig. 26: fused against unfused (two kernels through a materialized intermediate) and scipy
    b_cv = compressed_vector(ss, shifted.reshape(1, n * n).tocsr(), n * n, idt)
    fused = [
        ("26a", "C = collapse(CSR) * C",
         both("26a", "c[k] = collapse(A[i, j], (i, j) -> k) * b[k]", fmt("sparse_vector"), A=ten["A_csr"], b=b_cv),
         _unfused(ss, col, fmt("sparse_vector"), dict(A=ten["A_csr"]), "c", "e[k] = c[k] * b[k]", fmt("sparse_vector"),
                  dict(b=b_cv)),
         lambda: A.reshape(1, n * n).multiply(shifted.reshape(1, n * n))),
        ("26b", "D = vstack(CSR, CSR) @ D",
         both("26b", "y[l] = sum[i](concat((B[j, i], C[k, i]), (j, k) -> l) * x[i])", "dense",
                B=ten["T_csr"], C=ten["B_csr"], x=x),
         _unfused(ss, vst, fmt("csr"), dict(B=ten["T_csr"], C=ten["B_csr"]), "D", "y[l] = D[l, i] * x[i]", "dense",
                  dict(x=x)),
         lambda: sp.vstack([top, bottom], format="csr") @ x),
        ("26c", "CSR = slice(CSR) * CSR",
         both("26c", f"E[k, i] = slice(A[j, i], j -> k, ({s}, {e}, {r})) * B[k, i]", fmt("csr"),
                A=ten["A_csr"], B=tensor(shifted[:len(range(s, e, r))], "B")),
         _unfused(ss, slc, fmt("csr"), dict(A=ten["A_csr"]), "D", "E[k, i] = D[k, i] * B[k, i]", fmt("csr"),
                  dict(B=tensor(shifted[:len(range(s, e, r))], "B"))),
         lambda: A[s:e:r, :].multiply(shifted[:len(range(s, e, r))])),
    ]
    print(f"{'fig':4s} {'kernel':26s} {'fused':>10s} {'unfused':>10s} {'scipy':>10s} {'vs unfused':>10s} "
          f"{'vs scipy':>9s} {'lattice':>10s} {'vs scipy':>9s}")
    vs_unfused, vs_scipy = [], []
    for fig, name, f_fused, f_unfused, f_scipy in fused:
        t_f, out = timed(f_fused, args.repeat, args.timeout)
        t_u, out_u = timed(f_unfused, args.repeat, args.timeout)
        t_s, ref = timed(f_scipy, args.repeat, args.timeout)
        _check(name, out, ref)
        _check(name + " (unfused)", out_u, ref)
        vs_unfused.append(t_u / t_f)
        vs_scipy.append(t_s / t_f)
        print(f"{fig:4s} {name:26s} {t_f * 1e3:8.2f}ms {t_u * 1e3:8.2f}ms {t_s * 1e3:8.2f}ms "
              f"{t_u / t_f:9.2f}x {t_s / t_f:8.2f}x {_lattice_column(lattice[fig], ref, name, args, t_s)}")
    print(f"Fig. 26 geometric mean: {geomean(vs_unfused):.2f}x vs unfused, {geomean(vs_scipy):.2f}x vs scipy "
          f"(paper: 1.22x-2.23x vs unfused)")


def _lattice_column(f, ref, name, args, t_scipy) -> str:
    """The lattice strategy's time and its ratio to scipy's, or why it was refused."""
    if isinstance(f, str):
        return f"{'refused':>10s} {'':>9s}   ({f[:70]})"
    t, out = timed(f, args.repeat, args.timeout)
    _check(name + " (lattice)", out, ref)
    return f"{t * 1e3:8.2f}ms {t_scipy / t:8.2f}x"


def fig24_25_operands(n: int, nnz: int):
    """The generator after drawing them, and Figs. 24-25's operands: an n x n CSR matrix ``A`` of about
    ``nnz`` entries (sorted), its COO, the column split ``half``, its left and right halves and its top
    and bottom halves as CSR and as COO, and ``vec``, A's entries as a 1 x n^2 CSR (a compressed vector
    of length n*n). The COO operands are made here, before timing, for scipy as for us: a baseline
    converting inside its call would time a conversion our kernel does not do.

    >>> rng, ops = fig24_25_operands(4, 6)
    >>> ops[0].shape, ops[-1].shape
    ((4, 4), (1, 16))
    """
    rng = np.random.default_rng(0)
    A = sp.random(n, n, density=nnz / n / n, format="csr", random_state=rng, dtype=np.float64)
    A.sort_indices()
    half = n // 2
    left, right = A[:, :half].tocsr(), A[:, half:].tocsr()
    top, bottom = A[:half].tocsr(), A[half:].tocsr()
    return rng, (A, A.tocoo(), half, left, right, top, bottom, left.tocoo(), right.tocoo(), top.tocoo(),
                 bottom.tocoo(), A.reshape(1, n * n).tocsr())


def compressed_vector(ss, row, length, index_dtype="int64"):
    """A 1 x length CSR's one row as a compressed vector Tensor (SparseList(Element)) with
    ``index_dtype`` indices (scipy's own row holds int32 ones where they fit)."""
    return ss.Tensor.from_coords(row.indices.astype(np.int64)[None, :], row.data, (length,),
                                 format=ss.parse_format("sparse_vector", index_dtype=index_dtype), name="c")


def _unfused(ss, first, first_fmt, first_in, name, second, second_fmt, second_in):
    k1 = ss.lower(first, strategy="looplets", **first_in, **{first.split("[")[0]: first_fmt})
    mid = k1(**first_in)
    k2 = ss.lower(second, strategy="looplets", **{name: mid}, **second_in,
                  **{second.split("[")[0]: second_fmt})

    def run():
        return k2(**{name: k1(**first_in)}, **second_in)
    return run


def _check(name, out, ref) -> None:
    if isinstance(out, str) or isinstance(ref, str):
        return
    (gc, gv), (wc, wv) = coords_of(out), coords_of(ref)
    if gc.shape != wc.shape or not np.array_equal(gc, wc) or not np.allclose(gv, wv):
        raise AssertionError(f"{name}: sparsescope's result differs from scipy's")


def geomean(v) -> float:
    v = [x for x in v if x == x and x > 0]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else math.nan


if __name__ == "__main__":
    main()
