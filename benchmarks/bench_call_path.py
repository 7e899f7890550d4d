"""The cost of calling a compiled kernel, next to scipy's in the same run (issue 31, item 4).

On a 5x5 CSR SpMV, where the kernel itself takes well under a microsecond, it times scipy's
``A @ x`` and a sparsescope kernel's call with its arguments as Tensors, as a numpy vector,
and as scipy matrices, then ``einsum`` and ``lower`` returning a cached kernel, printing each
time and its ratio to scipy's (the targets: a call within 1.5x, einsum and lower within 3x).

On a shared machine the times wander with the other jobs; ``--instructions`` counts each
row's instructions per call instead (valgrind's callgrind, over 2,000 calls less a run of
none), which stays the same whatever else the machine is doing.

    .venv/bin/python benchmarks/bench_call_path.py [--instructions] [--only "scipy A"] [--clock cpu] [--large]

(``--only`` measures the rows whose name holds the text: under callgrind a row takes minutes;
``--clock cpu`` times by the process's CPU time.) Then kernels with sparse outputs on 5x5 operands,
each beside scipy's same operation (scipy.ndimage's binary erosion for the erosions).

Sparse outputs, ``--clock cpu``, three runs alternating with the tree before (d56687f) at a load of
12 on 2 cores, us per call (ranges; scipy's in the same runs):

    ==========================  ===========  ==========  ============
    kernel (5x5)                before        after       scipy
    ==========================  ===========  ==========  ============
    CSR + CSR -> CSR            10.3 - 10.5   6.4 - 7.7    40 - 49
    SpGEMM CSR x CSR -> CSR     35.0 - 36.2   6.9 - 8.1    47 - 55
    COO .* COO -> COO            9.6 - 10.0   8.8 - 9.5   122 - 153
    BFS push round -> byte map  11.5 - 13.5   8.2 - 9.2   4.7 - 5.5 (G.T @ f masked)
    erosion, sparse words       20.5 - 28.3  16.4 - 19.4  6.4 - 8.5 (ndimage)
    erosion, run lists          24.9 - 28.9  17.3 - 18.6  7.5 - 8.5 (ndimage)
    ==========================  ===========  ==========  ============

Then the eroders planned once per image format (their checks, kernel, fast call and padding), the C
caller's out cells pooled: five runs alternating with the tree before (15c2b8b) at a load of about
2, us per call: erosion, sparse words 19.1 - 21.9 -> 14.9 - 16.0; run lists 19.3 - 21.5 -> 15.4 -
16.9 (ndimage 8.1 - 9.3 in the same runs); BFS push round 9.1 - 10.0 -> 9.1 - 9.7 (5.2 - 6.1). These
rows call each kernel on the same input every time; a round whose input is the last round's result
gained more (its binding is planned too): ten chained erosions 54 - 66 -> 22 - 23 us a round.

Then a scipy argument's checks unrolled into the fast call (its C check called there), the kernel's C
function called without the caller's frame, a Kernel's call trying its fast paths first, a loop
program's kernel not packing its tensors twice, the eroders' first pass freed as the kernel returns:
three runs alternating with the tree before (311d4f1) at a load of about 8, us per call (scipy's
``A @ x`` 2.83 - 3.03 before, 2.65 - 3.07 after, in the same runs):

    ======================================  ===========  ===========  ==============
    row                                     before       after        scipy (after)
    ======================================  ===========  ===========  ==============
    lattice, scipy A + numpy x              4.46 - 4.85  4.34 - 4.39
    lattice, scipy A (lowered for csr)      4.65 - 4.85  4.35 - 4.70
    looplets, scipy A + numpy x             5.13 - 5.50  4.71 - 4.96
    looplets, scipy A (lowered for csr)     5.41 - 5.67  4.66 - 4.99
    BFS push round -> byte map              9.05 - 9.68  7.86 - 8.79  4.96 - 5.55
    erosion, sparse words                   14.0 - 14.2  10.3 - 11.7  7.75 - 8.66
    erosion, run lists                      14.7 - 15.6  11.7 - 13.1  7.64 - 9.00
    ======================================  ===========  ===========  ==============

``--large`` times a SpMV over a 20k x 20k CSR of a million entries, where what a call costs beside the kernel
is the passes over the matrix: the check of a matrix whose arrays its owner may write (structure, and whether its
values hold NaN or infinities) reads them once more. Two runs alternating with the tree before (463a6707), ms
(scipy's ``A @ x`` 0.77 - 0.83 in the same runs):

    ================================  ===========  ===========
    row                               before       after
    ================================  ===========  ===========
    call, A sealed (no check)         0.71 - 0.74  0.73 - 0.76
    call, A over scipy's buffers      1.47 - 1.49  1.24 - 1.35
    call, scipy A                     1.46 - 1.50  1.32 - 1.36
    einsum('ij,j->i', A, x)           2.76 - 2.76  1.46 - 1.50
    (asarray(A) @ x).compute()        4.06 - 4.06  2.35 - 2.39
    the check of A's arrays alone     0.67 - 0.68  0.50 - 0.53
    ================================  ===========  ===========

(after: the check reads the index array once; einsum and the array front end check the matrix once per call,
not twice, and take the same tensor over it each time; the front end plans its kernel's fast path once.)

Then the values left unread where the kernel's C does not depend on them (``Kernel.depends_on_values``: a SpMV's
matrix), and einsum leaving the check of a matrix it took before to the kernel's call. Two runs alternating with
the tree before (12fe844b), ms, on a machine where scipy's ``A @ x`` took 0.82 - 1.21:

    ====================================  ===========  ===========
    row                                   before       after
    ====================================  ===========  ===========
    call, A sealed (no check)             0.82 - 0.84  0.88 - 0.90
    call, A over scipy's buffers          1.22 - 1.23  1.00 - 1.07
    call, scipy A                         1.29 - 1.30  1.10 - 1.13
    einsum('ij,j->i', A, x)               1.33 - 1.57  1.18 - 1.30
    the check of A's arrays alone         0.32 - 0.35  0.32 - 0.36
    the check of its index arrays alone                0.12 - 0.14
    ====================================  ===========  ===========

Then the array front end: an expression computed again takes the kernel chosen for its statement before
(``compiler.array.attempts``), shorthand formats are made once per set of arguments, the strategy's capabilities
asked only where a kernel converts an input, and a node's fill is worked out once per operator, dtypes and fills
(``compiler.array.nodes``). Two runs alternating with the tree before (12fe844b), us per call, on a 50 x 50 CSR
``a`` (scipy's ``m``) and a numpy ``x`` (einsum's call over the same: 55 - 63 in both trees):

    ======================================  ===========  ===========
    row                                     before       after
    ======================================  ===========  ===========
    e.compute(), e = a @ asarray(x) built   444 - 455    151 - 160
    (a @ asarray(x)).compute()              773 - 853    344 - 347
    (asarray(m) @ x).compute()              775 - 808    335 - 357
    maximum(a * 2 + 1, a).compute()         707 - 763    282 - 295
    ======================================  ===========  ===========

Then each call of an expression kept by its structure (``compiler.array.attempts.PREPARED``: its nodes' operators,
axes and parameters, its leaves' formats, shapes, value facts and stored counts), shape operators included: an
expression built afresh over new operands of the same facts is neither emitted nor lowered again; and nodes built
cheaper (no numpy broadcast of equal shapes, no permutation checked that is none). ``--clock cpu``, two runs
alternating with the tree before (4fa1eb33) beside a fuzzing job, us per call on 5x5 operands (scipy's in the
same runs):

    ==================================  ===========  ===========  ============
    row                                 before       after        scipy
    ==================================  ===========  ===========  ============
    compute, array expression (lattice) 176 - 195    92.6 - 92.9  2.3 - 2.4 (``A @ x``)
    vstack @ x, array expression        546 - 553    121 - 123    33.6 - 35.7
    A[::-2] @ x, array expression       475 - 507    109 - 116    22.7 - 29.2
    ravel(A) * 2, array expression      357 - 360    57.5 - 62.0  75.6 - 87.6
    ==================================  ===========  ===========  ============
Then a product with a dense factor computed dense by default, as scipy's ``csr @ ndarray`` (it was a CSR, which the
lattice built by a workspace over its operand converted to CSC at each call). ``--clock cpu``, two runs alternating
with the tree before (d3c1326b), us per call, a 5x5 CSR times a 5x2 numpy array:

    ==================================  ===========  ===========  ============
    row                                 before       after        scipy
    ==================================  ===========  ===========  ============
    A @ X (5x2), array expression       522 - 566    107 - 118    3.1 - 3.2
    ==================================  ===========  ===========  ============

On the 20k x 20k CSR of 1M entries times 8 columns: 20.8 ms before, 4.4 ms after (scipy's 2.8 - 3.6 ms).

Then a kernel lowered for a matrix read in place checks each coordinate as it reads it, where its work does not depend
on their order (``compiler.owned_inputs``), and its calls check the positions alone, not a pass over the index array.
``--large``'s matrix, wall time (the kernels run on one thread here), best of 40, two runs alternating with the tree
before (076f2ba4), ms:

    ================================  ===========  ===========  ============
    row                               before       after        scipy
    ================================  ===========  ===========  ============
    call, A sealed (no check)         0.66 - 0.67  0.66 - 0.68  0.70 - 0.74
    call, A over scipy's buffers      0.90 - 0.92  0.72 - 0.72
    call, scipy A                     0.90 - 0.92  0.71 - 0.71
    einsum('ij,j->i', A, x)           0.98 - 0.98  0.78 - 0.81
    (asarray(A) @ x).compute()        1.11 - 1.12  0.90 - 0.92
    call, A.T @ y, scipy A            1.19 - 1.21  0.88 - 0.98  0.98 - 1.03
    einsum A @ X (8 columns)          3.54 - 3.65  3.26 - 3.35  3.19 - 3.30
    ================================  ===========  ===========  ============
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

TARGETS = {"call, Tensors": 1.5, "call, numpy x": 1.5, "call, scipy A + numpy x": 1.5,
           "call, scipy A (lowered for csr)": 1.5,
           "einsum, cached kernel": 3.0, "lower, cached kernel": 3.0}


#: the clock: wall time, or with ``--clock cpu`` the process's CPU time (a loaded machine's waits left out)
TIMER = time.perf_counter


def best(f, number, repeat=7):
    f()
    return min(timeit.repeat(f, number=number, repeat=repeat, timer=TIMER)) / number


def rows(strategy: str):
    """``(what, function)`` for scipy's call (strategy None) or each row of ``strategy``."""
    import compiler as ss

    from compiler import array as xp

    A = sp.random(5, 5, density=0.4, format="csr", random_state=0)
    x = np.arange(5.0)
    if strategy is None:
        return [("scipy A @ x", lambda: A @ x)]
    At, xt = ss.Tensor.from_scipy(A, name="A"), ss.Tensor.from_numpy(x, "dense", name="x")
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=At, x=xt)
    assert np.allclose(k(A=At, x=xt).to_numpy(), A @ x) and np.allclose(k(A=A, x=x).to_numpy(), A @ x)
    # lowered for "csr" (int64 indices) and called with scipy's int32 ones: a kernel for those is
    # lowered on the first call, whose fast path takes the next
    kc = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A="csr", x="dense")
    assert np.allclose(kc(A=A, x=x).to_numpy(), A @ x)
    return [
        ("call, Tensors", lambda: k(A=At, x=xt)),
        ("call, numpy x", lambda: k(A=At, x=x)),
        ("call, scipy A + numpy x", lambda: k(A=A, x=x)),
        ("call, scipy A (lowered for csr)", lambda: kc(A=A, x=x)),
        ("einsum, cached kernel", lambda: ss.einsum("y[i] = A[i, j] * x[j]", strategy=strategy, A=At, x=xt)),
        ("lower, cached kernel", lambda: ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=At, x=xt)),
        # (the array front end: the expression built, emitted as a statement and computed; no target, as the
        # built expression is new at each call, which einsum's string is not)
        ("compute, array expression", lambda: (xp.asarray(At) @ xp.asarray(x)).compute(strategy=strategy)),
    ]


def large_rows():
    """``(what, function)`` of a SpMV over a 20k x 20k CSR of a million entries (int32 indices), where the call's
    cost is the kernel's and the checks' passes over the matrix: scipy's ``A @ x``, then the lattice's kernel given
    the matrix sealed (its own copy, read with no check), as a Tensor over scipy's buffers or as the scipy matrix
    itself (both checked again at each call, one pass in C: their owner may write them in place), through einsum
    and through the array front end, and that check alone, with the values (whether they hold NaN or infinities)
    and without (a SpMV's C is the same whatever its matrix's values hold: its calls check the index arrays)."""
    import compiler as ss
    from compiler import array as xp
    from compiler.recheck import checker

    A = sp.random(20_000, 20_000, density=1e6 / 4e8, format="csr", random_state=0)
    x = np.random.default_rng(0).random(20_000)
    sealed, shared = ss.Tensor.from_scipy(A, copy=True), ss.Tensor.from_scipy(A)
    k = ss.lower("y[i] = A[i, j] * x[j]", "lattice", A=sealed, x=x)
    want = A @ x
    for got in (k(A=sealed, x=x), k(A=shared, x=x), k(A=A, x=x), ss.einsum("ij,j->i", A, x),
                (xp.asarray(A) @ xp.asarray(x)).compute()):
        assert np.allclose(got.to_numpy(), want)
    check, index_check = checker(shared), checker(shared, facts=False)
    return [("scipy A @ x", lambda: A @ x),
            ("call, A sealed", lambda: k(A=sealed, x=x)),
            ("call, A over scipy's buffers", lambda: k(A=shared, x=x)),
            ("call, scipy A", lambda: k(A=A, x=x)),
            ("einsum('ij,j->i', A, x)", lambda: ss.einsum("ij,j->i", A, x)),
            ("(asarray(A) @ x).compute()", lambda: (xp.asarray(A) @ xp.asarray(x)).compute()),
            ("the check of A's arrays alone", check),
            ("the check of its index arrays alone", index_check)]


def sparse_rows():
    """``(what, ours, scipy's)`` per kernel with a sparse output on 5x5 operands (5 vertices, a
    5x5 image): each call builds its output tensor, as scipy's builds its matrix."""
    import compiler as ss
    from compiler.looplets.bitwise_erosion import SPARSE_WORDS, BitwiseErosion
    from compiler.looplets.case_studies import BFS, PARENT_FRONTIER, bfs_push_parents
    from compiler.looplets.compile import compile_program
    from compiler.looplets.morphology import RUNS, Erosion
    from scipy import ndimage

    A = sp.random(5, 5, density=0.4, format="csr", random_state=0)
    B = sp.random(5, 5, density=0.4, format="csr", random_state=1)
    At, Bt = ss.Tensor.from_scipy(A, name="A"), ss.Tensor.from_scipy(B, name="B")
    add = ss.lower("C[i, j] = A[i, j] + B[i, j]", A=At, B=Bt, C="csr")
    gemm = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=At, B=Bt, C="csr")
    Ac, Bc = A.tocoo(), B.tocoo()
    Act, Bct = At.asformat("coo"), Bt.asformat("coo")
    mul = ss.lower("C[i, j] = A[i, j] * B[i, j]", A=Act, B=Bct, C="coo")
    # a BFS push round (a byte-map output) from vertex 0; scipy: the out-neighbours of the frontier
    # not yet visited, G.T @ f masked
    G = (A + B).tocsr()
    search = BFS(G)
    first = np.full(5, -1, dtype=np.int64)
    first[0] = 0
    F = ss.Tensor.from_numpy(first, PARENT_FRONTIER, name="F")
    visited = np.zeros(5, bool)
    visited[0] = True
    V = ss.Tensor.from_numpy(visited, ss.Format(ss.Dense(ss.Element(False, dtype="bool"))), name="V")
    push = compile_program(bfs_push_parents, _F=PARENT_FRONTIER, F=F, A=search.A, V=V)
    GT, f = G.T.tocsr(), (first >= 0)
    image = np.ones((5, 5), bool)
    image[2, 2] = False
    words, runs = BitwiseErosion("box", SPARSE_WORDS), Erosion("box", RUNS)
    packed, run_image = words.pack(image), ss.Tensor.from_numpy(image, RUNS)
    checks = [(add(A=At, B=Bt), A + B), (gemm(A=At, B=Bt), A @ B), (mul(A=Act, B=Bct), Ac.multiply(Bc)),
              (runs(run_image), ndimage.binary_erosion(image, np.ones((3, 3)), border_value=1))]
    for ours, theirs in checks:
        assert np.array_equal(ours.to_numpy(), theirs.toarray() if sp.issparse(theirs) else theirs)
    assert np.array_equal(push(F=F, A=search.A, V=V).to_numpy() >= 0, (GT @ f > 0) & ~visited)
    # (the array front end's shape operators, each expression built afresh at each call over scipy's matrices)
    from compiler import array as xp
    x = np.arange(5.0)
    stacked = lambda: (xp.concat([xp.asarray(A), xp.asarray(B)]) @ xp.asarray(x)).compute()
    strided = lambda: (xp.asarray(A)[::-2] @ xp.asarray(x)).compute()
    raveled = lambda: (xp.reshape(xp.asarray(A), (-1,)) * 2.0).compute()
    X = np.arange(10.0).reshape(5, 2)
    product = lambda: (xp.asarray(A) @ xp.asarray(X)).compute()   # (dense, as scipy's: no CSR built by a workspace)
    for ours, theirs in ((stacked, sp.vstack([A, B]) @ x), (strided, A[::-2] @ x), (product, A @ X),
                         (raveled, (A.reshape((1, -1)) * 2.0).toarray()[0])):
        np.testing.assert_allclose(ours().to_numpy(), theirs)
    return [
        ("vstack @ x, array expression", stacked, lambda: sp.vstack([A, B]) @ x),
        ("A[::-2] @ x, array expression", strided, lambda: A[::-2] @ x),
        ("ravel(A) * 2, array expression", raveled, lambda: A.reshape((1, -1)) * 2.0),
        ("A @ X (5x2), array expression", product, lambda: A @ X),
        ("CSR + CSR -> CSR", lambda: add(A=At, B=Bt), lambda: A + B),
        ("SpGEMM CSR x CSR -> CSR", lambda: gemm(A=At, B=Bt), lambda: A @ B),
        ("COO .* COO -> COO", lambda: mul(A=Act, B=Bct), lambda: Ac.multiply(Bc)),
        ("BFS push round -> byte map", lambda: push(F=F, A=search.A, V=V), lambda: (GT @ f > 0) & ~visited),
        ("erosion, sparse words", lambda: words(packed),
         lambda: ndimage.binary_erosion(image, np.ones((3, 3)), border_value=1)),
        ("erosion, run lists", lambda: runs(run_image),
         lambda: ndimage.binary_erosion(image, np.ones((3, 3)), border_value=1)),
    ]


def instructions(strategy, row: int, calls: int) -> int:
    """Instructions callgrind counts for a run making ``calls`` calls of one row."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
           "--run", str(strategy), str(row), str(calls)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    refs = [line for line in out.splitlines() if "refs:" in line]
    return int(refs[0].split("refs:")[1].replace(",", ""))


def per_call(strategy, row: int, calls: int = 2000) -> float:
    return (instructions(strategy, row, calls) - instructions(strategy, row, 0)) / calls


def main():
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    if sys.argv[1:2] == ["--run"]:   # (one row, under valgrind)
        strategy, row, calls = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        if strategy in ("sparse", "sparse-scipy"):   # (a sparse output's row: ours, or scipy's)
            f = sparse_rows()[row][1 if strategy == "sparse" else 2]
        else:
            f = rows(None if strategy == "None" else strategy)[row][1]
        f()
        for _ in range(calls):
            f()
        return
    import compiler as ss

    global TIMER
    if "--clock" in sys.argv and sys.argv[sys.argv.index("--clock") + 1] == "cpu":
        TIMER = time.process_time
    counting = "--instructions" in sys.argv
    if counting and shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind (Debian's valgrind package)")
    if "--large" in sys.argv:
        table = large_rows()
        base = best(table[0][1], 20) * 1e3
        print(f"SpMV, 20k x 20k CSR of 1M entries: scipy A @ x {base:7.3f} ms")
        for what, f in table[1:]:
            t = best(f, 20) * 1e3
            print(f"  {what:31s} {t:7.3f} ms  {t / base:5.2f}x scipy")
        return
    unit = "instructions" if counting else "us"
    measure = (lambda strategy, k, f: per_call(strategy, k)) if counting else \
        (lambda strategy, k, f: best(f, 5_000) * 1e6)
    base = measure(None, 0, rows(None)[0][1])
    print(f"scipy A @ x (5x5): {base:9.2f} {unit}")
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    for strategy in ss.strategies():
        for k, (what, f) in enumerate(rows(strategy)):
            if only not in what:
                continue
            t = measure(strategy, k, f)
            target = f"  (target {TARGETS[what]}x)" if what in TARGETS else ""
            print(f"  {strategy:8s} {what:31s} {t:9.2f} {unit}  {t / base:5.2f}x scipy{target}")
    print("sparse outputs (5x5; scipy's row: the same operation, scipy.ndimage's for an erosion):")
    for k, (what, ours, theirs) in enumerate(sparse_rows()):
        if only not in what:
            continue
        t, s = measure("sparse", k, ours), measure("sparse-scipy", k, theirs)
        print(f"  {what:31s} {t:9.2f} {unit}  scipy {s:9.2f} {unit}  {t / s:5.2f}x scipy")


if __name__ == "__main__":
    main()
