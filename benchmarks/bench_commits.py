"""The same kernels compiled by two revisions of the compiler, timed side by side in one run.

Issue 29 asks that the lattice strategy's re-seating (merged as 2616e0d) leave no kernel slower
than before it (9707a85, its parent). This script checks each revision out (``git archive`` into a
directory of its own, or ``worktree``: this checkout as it is on disk, uncommitted changes too),
and for each kernel starts one child process per revision (``PYTHONPATH`` that tree, its own
``SPARSESCOPE_CACHE_DIR``). Each child builds the same inputs from the same seed, lowers and
compiles the kernel, checks its result against scipy/numpy, and then times the public call
(``kernel(**tensors)``: the compiled C with the runtime's binding and output assembly; lowering
and compilation are done before). The parent asks the two children in turn, old then new then new
then old, for rounds of calls, so a slow phase of the shared machine hits both alike; it prints the
minimum and the median time per call of each revision, the ratios new/old of the minima and of the
medians and the median of the rounds' ratios (``paired``: each round's minima, new over old of the
same moment; the steadiest of the three on a loaded machine), their geometric means, and whether the two revisions generated the same C (column
``C``: where it is the same, a difference is the runtime's or the machine's). Only public API that both revisions have is used
(``compiler.lower``, ``Tensor.from_scipy`` / ``from_coords`` / ``asformat``, ``Kernel.__call__``).

Kernels, each by the lattice and the looplets strategy: SpMV, SpMM (dense B of 8 columns), CSR+CSR
and CSR*CSR into CSR, SpGEMM into CSR (1M entries per input; 3000 x 3000 with 15k for looplets,
whose inner products grow as n^2), a 3-mode TTV (CSF into CSR), MTTKRP (CSF, dense factors of
16 columns), SpMV of a DCSR and of a COO matrix, and CSR+CSR into a dense matrix; about 1M non-zeros
per input (``--quick``: tiny inputs, to check that it runs).

A run (9707a85 against a16bbfa, 20 rounds, a load of 3 to 9 on 2 cores), new/old as min, median,
paired: every lattice kernel's C is the same in both revisions (the re-seating changed no kernel),
and its paired ratios run 0.85 (SpGEMM) to 1.02 (CSR*CSR, dense output), geometric mean 0.97; the
looplets' run 0.88 to 1.03, geometric mean 0.99. One kernel is slower: looplets CSR+CSR, whose C
differs by the block copy of a row's tail (1abe612, 291393d; after the re-seating, not part of it):
0.88 / 1.12 / 1.23, and 1.10 / 1.04 / 1.12 in a run of 60 rounds of it alone. Its random rows of
10 entries leave a tail of 8 or more after the merge in 0.35% of rows, so the copy is almost never
taken and its per-row test and the split loop cost about 10%.

After the looplets strategy left a merge's tails to the entry-by-entry loop and stopped emitting a
row's search for coordinate 0 and the cut at min(last, size) (7b52aa5, 9fd6993), CSR + CSR's C is
9707a85's with those dead pieces removed, and no block copy. ``--clock cpu`` (each call's CPU time
in the child's thread; the waits for a core of a loaded machine left out), 40 rounds, CSR + CSR
new/old as min / median / paired: 1.04 / 1.11 / 1.09 at a load of about 10, 1.02 / 1.06 / 1.05 and
0.97 / 1.06 / 1.05 at a load of 1 to 2; the same run of HEAD against itself (the same C, the same
code) gave 1.09 / 1.05 / 1.04, so what is left is within what the harness shows between equals.
Against the commit before (e1d7778) CSR + CSR ran 0.96 / 0.92 / 0.92. CSR * CSR, SpMV and CSR + CSR
into a dense matrix, whose C lost only the dead pieces, ran 0.97-1.08 paired against 9707a85.

    .venv/bin/python benchmarks/bench_commits.py [--old 9707a85] [--new HEAD] [--quick]
        [--rounds 40] [--only spmv,spgemm,...] [--strategies lattice,looplets] [--work DIR] [--clock cpu]
"""

import argparse
import gc
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ("spmv", "spmm", "add", "mul", "spgemm", "ttv", "mttkrp", "dcsr_spmv", "coo_spmv", "dense_out")
STRATEGIES = ("lattice", "looplets")
WORKTREE = "worktree"


# ---------------------------------------------------------------------------------------------
# the child: runs in the revision's tree, so it imports nothing of this checkout's compiler

def _random_csr(rows, cols, nnz, rng):
    """A CSR matrix with about ``nnz`` entries in sorted rows, int64 indices (the format's own)."""
    import numpy as np
    import scipy.sparse as sp
    m = sp.csr_matrix((rng.random(nnz) + 0.5, (rng.integers(0, rows, nnz), rng.integers(0, cols, nnz))),
                      shape=(rows, cols))
    m.sum_duplicates()
    m.sort_indices()
    m.indices, m.indptr = m.indices.astype(np.int64), m.indptr.astype(np.int64)
    return m


def _random_csf(n, nnz, rng):
    """A 3-mode n x n x n CSF tensor of about ``nnz`` entries, and its dense-free (coords, values)."""
    import numpy as np
    import compiler as ss
    flat = np.unique(rng.integers(0, n ** 3, nnz))
    coords = np.stack([flat // (n * n), (flat // n) % n, flat % n])
    values = rng.random(len(flat)) + 0.5
    return ss.Tensor.from_coords(coords, values, shape=(n, n, n), format="csf", name="B"), coords, values


def _case(kernel: str, strategy: str, quick: bool):
    """``(expression, tensors with output formats, oracle)`` of one kernel; the oracle gives the
    expected result as a numpy array (dense) or a scipy matrix."""
    import numpy as np
    import compiler as ss
    rng = np.random.default_rng(0)
    n, nnz = (300, 3_000) if quick else (100_000, 1_000_000)
    if kernel in ("spmv", "spmm", "add", "mul", "dcsr_spmv", "coo_spmv"):
        A = _random_csr(n, n, nnz, rng)
        At = ss.Tensor.from_scipy(A, ss.csr(), name="A")
        if kernel == "spmm":
            X = rng.random((n, 8))
            return "C[i, k] = A[i, j] * B[j, k]", dict(A=At, B=X, C="dense"), lambda: A @ X
        if kernel in ("add", "mul"):
            B = _random_csr(n, n, nnz, rng)
            Bt = ss.Tensor.from_scipy(B, ss.csr(), name="B")
            op, oracle = ("+", lambda: A + B) if kernel == "add" else ("*", lambda: A.multiply(B))
            return f"C[i, j] = A[i, j] {op} B[i, j]", dict(A=At, B=Bt, C="csr"), oracle
        x = rng.random(n)
        if kernel == "dcsr_spmv":
            At = At.asformat(ss.dcsr())
        elif kernel == "coo_spmv":
            At = At.asformat(ss.coo())
        return "y[i] = A[i, j] * x[j]", dict(A=At, x=x), lambda: A @ x
    if kernel == "spgemm":
        # 5 entries a row: the product has about 25 a row (5M for the full size). The looplets
        # strategy runs C = A B of two CSR matrices as inner products (i, j, k: each row of A
        # against every column of B), whose time grows as n^2: it gets 3000 rows.
        n2 = 600 if quick else 200_000 if strategy == "lattice" else 3_000
        A, B = _random_csr(n2, n2, 5 * n2, rng), _random_csr(n2, n2, 5 * n2, rng)
        return ("C[i, j] = A[i, k] * B[k, j]",
                dict(A=ss.Tensor.from_scipy(A, ss.csr(), name="A"), B=ss.Tensor.from_scipy(B, ss.csr(), name="B"),
                     C="csr"), lambda: A @ B)
    if kernel == "dense_out":
        n3, nnz3 = (100, 2_000) if quick else (3_000, 1_000_000)
        A, B = _random_csr(n3, n3, nnz3, rng), _random_csr(n3, n3, nnz3, rng)
        return ("C[i, j] = A[i, j] + B[i, j]",
                dict(A=ss.Tensor.from_scipy(A, ss.csr(), name="A"), B=ss.Tensor.from_scipy(B, ss.csr(), name="B"),
                     C="dense"), lambda: (A + B).toarray())
    n4 = 30 if quick else 1_000
    Bt, coords, values = _random_csf(n4, 3_000 if quick else nnz, rng)
    if kernel == "ttv":
        import scipy.sparse as sp
        c = rng.random(n4)
        want = sp.csr_matrix((values * c[coords[2]], (coords[0], coords[1])), shape=(n4, n4))
        return "A[i, j] = B[i, j, k] * c[k]", dict(B=Bt, c=c, A="csr"), lambda: want
    if kernel == "mttkrp":
        C, D = rng.random((n4, 16)), rng.random((n4, 16))

        def oracle():
            out = np.zeros((n4, 16))
            np.add.at(out, coords[0], values[:, None] * C[coords[1]] * D[coords[2]])
            return out
        return "A[i, j] = B[i, k, l] * C[k, j] * D[l, j]", dict(B=Bt, C=C, D=D, A="dense"), oracle
    raise ValueError(f"unknown kernel {kernel!r}; known: {', '.join(KERNELS)}")


def _dense(result):
    import numpy as np
    return result.toarray() if hasattr(result, "toarray") else np.asarray(result)


def child(kernel: str, strategy: str, quick: bool, clock: str = "wall") -> None:
    """Lower, compile, check, then answer ``run <calls>`` lines with the time of each call (``clock``:
    ``wall``, or ``cpu``, this thread's CPU time, which a loaded machine's waits for a core leave out)."""
    now = time.thread_time if clock == "cpu" else time.perf_counter
    import numpy as np
    import compiler as ss

    def say(**message):
        print(json.dumps(message), flush=True)
    try:
        expr, tensors, oracle = _case(kernel, strategy, quick)
        k = ss.lower(expr, strategy=strategy, **tensors)
        args = {name: t for name, t in tensors.items() if not isinstance(t, str)}
        got, want = k(**args), oracle()
        if hasattr(want, "tocsr"):   # (a sparse result of 100k x 100k is compared sparse)
            got, want = got.to_scipy("csr"), want.tocsr()
            assert got.shape == want.shape, (got.shape, want.shape)
            off = abs(got - want)
            assert off.nnz == 0 or off.max() <= 1e-9 * max(abs(want).max(), 1.0), f"off by {off.max()}"
        else:
            np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-9, atol=1e-12)
        digest = float(abs(want).sum())
    except Exception as e:   # (the parent reports it for this revision and goes on)
        say(error=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300])
        return
    once = []
    for _ in range(5):
        t0 = now()
        k(**args)
        once.append(now() - t0)
    calls = max(1, int(0.1 / max(min(once), 1e-6)))   # a round takes about 0.1 s unloaded
    say(ready=True, compiler=ss.__file__, calls=calls, digest=digest,
        c_source=hashlib.sha256(k.c_source.encode()).hexdigest())
    for line in sys.stdin:
        if not line.startswith("run"):
            break
        gc.collect()
        times = []
        for _ in range(int(line.split()[1])):
            t0 = now()
            k(**args)
            times.append(now() - t0)
        say(times=times)


# ---------------------------------------------------------------------------------------------
# the parent

def resolve(rev: str) -> tuple[str, str]:
    """``(commit hash, subject)`` of a revision, or ``(worktree, ...)`` for this checkout on disk."""
    if rev == WORKTREE:
        return WORKTREE, f"this checkout as it is on disk ({ROOT})"
    out = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%H %s", rev, "--"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"bench_commits: {rev!r} is no revision of {ROOT}: {out.stderr.strip()}")
    commit, _, subject = out.stdout.strip().partition(" ")
    return commit, subject


def tree_of(commit: str, root: Path) -> Path:
    """The source tree of ``commit``, unpacked once under ``root`` by ``git archive``."""
    if commit == WORKTREE:
        return ROOT
    tree = root / commit
    if not (tree / ".unpacked").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "compiler"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        (tree / ".unpacked").touch()
    return tree


class Child:
    """One revision's child process for one kernel."""

    def __init__(self, side: str, tree: Path, cache: Path, kernel: str, strategy: str, quick: bool,
                 clock: str = "wall"):
        self.side = side
        env = dict(os.environ, PYTHONPATH=str(tree), SPARSESCOPE_CACHE_DIR=str(cache))
        args = [sys.executable, str(Path(__file__).resolve()), "--child", kernel, "--strategies", strategy,
                "--clock", clock]
        self.proc = subprocess.Popen(args + (["--quick"] if quick else []), env=env, cwd=str(tree),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.hello = self._read()
        if self.hello.get("ready") and Path(self.hello["compiler"]).resolve().parents[1] != tree.resolve():
            # (an installed sparsescope, found where the tree has none, would time the wrong code)
            self.hello = {"error": f"the child imported {self.hello['compiler']}, not the tree {tree}'s compiler"}

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            return {"error": f"the child process ended (exit status {self.proc.wait()})"}
        return json.loads(line)

    def run(self, calls: int) -> list:
        self.proc.stdin.write(f"run {calls}\n")
        self.proc.stdin.flush()
        message = self._read()
        if "times" not in message:
            raise RuntimeError(f"{self.side}: {message.get('error', message)}")
        return message["times"]

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


@dataclass
class Row:
    kernel: str
    strategy: str
    rounds: dict = field(default_factory=dict)   # {"old" | "new": [[seconds per call] per round]}
    error: str = ""
    same_c: bool = False   # both revisions generated the same C source
    compilers: dict = field(default_factory=dict)   # {"old" | "new": the compiler package each child imported}

    @property
    def times(self) -> dict:
        """``{side: [seconds per call]}`` over all rounds."""
        return {side: [t for r in rounds for t in r] for side, rounds in self.rounds.items()}

    def stat(self, side, how):
        times = sorted(self.times[side])
        return times[0] if how == "min" else times[len(times) // 2]

    def ratio(self, how="min") -> float:
        """new/old of the minima (``min``) or medians (``med``) over all calls, or (``paired``) the
        median over the rounds of new/old of each round's minima: a round of each revision runs next
        to the other's, so a slow phase of the machine cancels out."""
        if how == "paired":
            ratios = sorted(min(n) / min(o) for o, n in zip(self.rounds["old"], self.rounds["new"]))
            return ratios[len(ratios) // 2]
        return self.stat("new", how) / self.stat("old", how)


def measure(kernel, strategy, trees, caches, quick, rounds, clock="wall") -> Row:
    row = Row(kernel, strategy)
    children = {}
    try:
        for side in ("old", "new"):
            children[side] = Child(side, trees[side], caches[side], kernel, strategy, quick, clock)
            if "error" in children[side].hello:
                row.error = f"{side}: {children[side].hello['error']}"
                return row
        if children["old"].hello["digest"] != children["new"].hello["digest"]:
            row.error = "the two revisions were given different inputs"
            return row
        row.same_c = children["old"].hello["c_source"] == children["new"].hello["c_source"]
        row.compilers = {side: c.hello["compiler"] for side, c in children.items()}
        calls = min(c.hello["calls"] for c in children.values())
        timed = {"old": [], "new": []}
        for r in range(rounds):
            for side in (("old", "new") if r % 2 == 0 else ("new", "old")):
                timed[side].append(children[side].run(calls))
        row.rounds = timed
        return row
    except RuntimeError as e:   # (a child that died while timed: the others still run)
        row.error = str(e)
        return row
    finally:
        for c in children.values():
            c.close()


def geometric_mean(values) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def report(rows, out=None):
    out = out or sys.stdout
    head = f"{'kernel':12s} {'strategy':9s} {'old min':>10s} {'new min':>10s} {'old med':>10s} {'new med':>10s}" \
           f" {'new/old min':>11s} {'new/old med':>11s} {'paired':>7s}  C"
    print(head, file=out)
    for r in rows:
        if r.error:
            print(f"{r.kernel:12s} {r.strategy:9s} not timed: {r.error}", file=out)
            continue
        ms = [r.stat(side, how) * 1e3 for how in ("min", "med") for side in ("old", "new")]
        flag = "  <- slower" if r.ratio("paired") > 1.05 and r.ratio("med") > 1.05 else ""
        print(f"{r.kernel:12s} {r.strategy:9s} {ms[0]:8.3f}ms {ms[1]:8.3f}ms {ms[2]:8.3f}ms {ms[3]:8.3f}ms"
              f" {r.ratio('min'):11.3f} {r.ratio('med'):11.3f} {r.ratio('paired'):7.3f}"
              f"  {'same' if r.same_c else 'differs'}{flag}", file=out)
    timed = [r for r in rows if not r.error]
    for strategy in sorted({r.strategy for r in timed}) + ["all"]:
        some = [r for r in timed if strategy in ("all", r.strategy)]
        print(f"geometric mean new/old ({strategy}, {len(some)} kernels): "
              f"min {geometric_mean([r.ratio('min') for r in some]):.3f}, "
              f"median {geometric_mean([r.ratio('med') for r in some]):.3f}, "
              f"paired {geometric_mean([r.ratio('paired') for r in some]):.3f}", file=out)


def main(argv=None) -> list:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", default="9707a85")
    p.add_argument("--new", default="HEAD", help=f"a revision, or {WORKTREE!r} for this checkout on disk")
    p.add_argument("--quick", action="store_true", help="tiny inputs: checks that it runs")
    p.add_argument("--rounds", type=int, default=40, help="rounds of calls per revision")
    p.add_argument("--only", default=",".join(KERNELS))
    p.add_argument("--strategies", default=",".join(STRATEGIES))
    p.add_argument("--work", help="where the revisions' trees and caches go (default: a temporary directory)")
    p.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                   help="time each call by the wall clock, or by the CPU time of the thread calling it")
    p.add_argument("--child", metavar="KERNEL", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        child(a.child, a.strategies, a.quick, a.clock)
        return []
    kernels, strategies = a.only.split(","), a.strategies.split(",")
    for k in kernels:
        if k not in KERNELS:
            raise SystemExit(f"bench_commits: unknown kernel {k!r}; known: {', '.join(KERNELS)}")
    revs = {"old": resolve(a.old), "new": resolve(a.new)}
    with tempfile.TemporaryDirectory(prefix="ss-bench-commits-") as tmp:
        work = Path(a.work) if a.work else Path(tmp)
        trees = {side: tree_of(commit, work / "trees") for side, (commit, _) in revs.items()}
        caches = {side: work / "caches" / commit for side, (commit, _) in revs.items()}
        for side, (commit, subject) in revs.items():
            print(f"{side}: {commit[:10]} {subject[:90]}")
        print(f"{'tiny' if a.quick else 'full-size'} inputs; {a.rounds} rounds of calls per revision, interleaved; "
              f"{a.clock} time")
        rows = []
        for strategy in strategies:
            for k in kernels:
                rows.append(measure(k, strategy, trees, caches, a.quick, a.rounds, a.clock))
                print(f"  measured {k} ({strategy})", flush=True)
        report(rows)
    return rows


if __name__ == "__main__":
    main()
