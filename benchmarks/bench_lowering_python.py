"""The compiler's own Python time per lowering, GCC left out: a fixed corpus of kernels lowered by
both strategies up to their C source, not built.

Each kernel goes through ``compiler.lower`` (or ``compile_program``, or an array expression's
``compute`` path) as a user's call does; only the backend's build is replaced, for this script's
run, by the emission alone (the C source and the declarations cffi would read, and the ``emit-c``
step), after which the lowering stops. So the time is the parsing, the strategy's passes, the
simplifier, the imperative cleanups and the C emitter, the same work as a cold ``lower`` less
GCC and cffi's loading.

Prints the CPU time (``time.process_time``, best of ``--repeat``) of the corpus per strategy.
``--dump DIR`` writes every kernel's C source (``DIR/<name>.c``) and its trace's step names
(``DIR/<name>.steps``), or a refusal's message (``DIR/<name>.refused``): dump before and after a
change to the compiler and ``diff -r`` the two directories, which must not differ.
``--texts`` adds each step's note, program text before and after and rewrites to its ``.steps``.
``--profile N`` prints cProfile's top N by tottime and by cumtime over one pass of the corpus.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_lowering_python.py [--dump DIR] [--repeat 3]
        [--texts] [--profile 25] [--only looplets|lattice|loops|arrays]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402


class Emitted(Exception):
    """Raised by the stand-in backend once a kernel's C is emitted: the lowering ends there."""

    def __init__(self, source: str, trace):
        super().__init__("emitted")
        self.source, self.trace = source, trace


def emit_only(fn, checked=False, trace=None, flags=None, emitted=None):
    """``compile_function`` up to its build: the C, its declarations and the ``emit-c`` step."""
    from compiler.backend.c_emitter import c_declarations, emit_c_with_provenance
    source, provenance = emitted or emit_c_with_provenance(fn, checked)
    c_declarations(fn, checked)
    if trace is not None:
        trace.record("emit-c", before=fn, after=source, note=f"{'checked ' if checked else ''}C for kernel {fn.name}")
    raise Emitted(source, trace)


def rand(shape, density, seed, low=0.5):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(shape) < density, rng.random(shape) + low, 0.0)


def banded(n, b):
    M = np.zeros((n, n))
    for i in range(n):
        M[i, max(0, i - b):min(n, i + b + 1)] = 1.0 + i
    return M


def corpus():
    """``[(name, strategy, thunk)]``: each thunk lowers one kernel (index notation is lowered by
    both strategies, loop programs by looplets)."""
    import compiler as ss
    from compiler import Tensor
    from compiler.lattice.schedule import Schedule
    from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseHash)
    from compiler.looplets import compile_program
    from compiler.looplets import case_studies as cs
    from compiler.looplets.gallery import gustavson, inner, outer, spmv as spmv_prog

    A = Tensor.from_numpy(rand((12, 10), 0.3, 1), "csr")
    B = Tensor.from_numpy(rand((12, 10), 0.3, 2), "csr")
    Ac = Tensor.from_numpy(rand((12, 10), 0.3, 3), "csc")
    Bsq = Tensor.from_numpy(rand((10, 9), 0.3, 4), "csr")
    Co = Tensor.from_numpy(rand((12, 10), 0.2, 5), "coo")
    Do = Tensor.from_numpy(rand((12, 10), 0.2, 6), "coo")
    x = rand(10, 1.0, 7)
    u = Tensor.from_numpy(rand(20, 0.3, 8), "sparse_vector")
    v = Tensor.from_numpy(rand(20, 0.3, 9), "sparse_vector")
    band = Tensor.from_numpy(banded(10, 2), Dense(SparseBand(Element(0.0))))
    block = Tensor.from_numpy(banded(10, 1), Dense(SparseBlockList(Element(0.0))))
    runs = Tensor.from_numpy(np.repeat(rand((10, 4), 0.5, 10), 3, axis=1)[:, :10], Dense(RunList(Element(0.0))))
    bmap = Tensor.from_numpy(rand((12, 10), 0.3, 11), Dense(SparseByteMap(Element(0.0))))
    hashed = Tensor.from_numpy(rand((12, 10), 0.3, 12), Dense(SparseHash(Element(0.0))))
    T3 = Tensor.from_numpy(rand((4, 5, 6), 0.3, 13), "csf")
    P = Tensor.from_numpy(rand((3, 4), 0.5, 14), "csr")
    Q = Tensor.from_numpy(rand((2, 4), 0.5, 15), "coo")
    v12 = Tensor.from_numpy(rand(12, 0.5, 16), "sparse")

    notation = [
        ("spmv", "y[i] = A[i, j] * x[j]", dict(A=A, x=x)),
        ("spmv_csc", "y[i] = A[i, j] * x[j]", dict(A=Ac, x=x)),
        ("csr_add", "C[i, j] = A[i, j] + B[i, j]", dict(A=A, B=B, C="csr")),
        ("csr_mul", "C[i, j] = A[i, j] * B[i, j]", dict(A=A, B=B, C="csr")),
        ("csr_mul_dense_out", "C[i, j] = A[i, j] * B[i, j]", dict(A=A, B=B)),
        ("spgemm", "C[i, j] = A[i, k] * B[k, j]", dict(A=A, B=Bsq, C="csr")),
        ("coo_add", "C[i, j] = A[i, j] + B[i, j]", dict(A=Co, B=Do, C="coo")),
        ("dot", "s[] = u[i] * v[i]", dict(u=u, v=v)),
        ("dot_dense", "s[] = u[i] * x[i]", dict(u=u, x=rand(20, 1.0, 17))),
        ("vec_add", "w[i] = u[i] + v[i]", dict(u=u, v=v, w="sparse_vector")),
        ("rowsum", "y[i] = A[i, j]", dict(A=A)),
        ("band_spmv", "y[i] = A[i, j] * x[j]", dict(A=band, x=x)),
        ("block_spmv", "y[i] = A[i, j] * x[j]", dict(A=block, x=x)),
        ("runlist_spmv", "y[i] = A[i, j] * x[j]", dict(A=runs, x=x)),
        ("runlist_add", "C[i, j] = A[i, j] + B[i, j]", dict(A=runs, B=band)),
        ("bytemap_add", "C[i, j] = A[i, j] + B[i, j]", dict(A=bmap, B=A, C="csr")),
        ("hash_spmv", "y[i] = A[i, j] * x[j]", dict(A=hashed, x=x)),
        ("sddmm", "C[i, j] = A[i, j] * D[i, k] * E[k, j]",
         dict(A=A, D=rand((12, 3), 1.0, 18), E=rand((3, 10), 1.0, 19), C="csr")),
        ("max_plus", "y[i] = max[j](A[i, j] + x[j])", dict(A=A, x=x)),
        ("vstack", "D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", dict(A=P, B=Q, D="csr")),
        ("hstack", "D[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)", dict(A=A, B=B)),
        ("ravel", "c[k] = collapse(A[i, j], (i, j) -> k)", dict(A=P)),
        ("reshape", "C[i, j] = split(b[k], k -> (i, j:4))", dict(b=v12)),
        ("slice", "S[k, i] = slice(A[j, i], j -> k, (0, 3, 1))", dict(A=P)),
        ("slice_step", "S[k, i] = slice(A[j, i], j -> k, (2, -1, -2))", dict(A=P)),
    ]
    if T3 is not None:
        notation.append(("ttv", "y[i, j] = T[i, j, k] * x[k]", dict(T=T3, x=rand(6, 1.0, 20))))

    cases = []
    for name, expr, tensors in notation:
        for strategy in ("lattice", "looplets"):
            cases.append((f"{name}.{strategy}", strategy,
                          lambda expr=expr, strategy=strategy, tensors=tensors: ss.lower(expr, strategy, **tensors)))

    # the lattice strategy's schedules (TACO's)
    spmm = (Schedule().split("i", "i0", "i1", 16).pos("j", "jpos", "A").split("jpos", "jpos0", "jpos1", 8)
            .reorder("i0", "i1", "jpos0", "k", "jpos1"))
    scheduled = [
        ("sched_spmm", "C[i, k] = A[i, j] * B[j, k]", dict(A="csr", B="dense", C="dense"), spmm),
        ("sched_precompute", "a[i] = b[i] * (c[i] + d[i])",
         dict(b="sparse_vector", c="sparse_vector", d="sparse_vector"),
         Schedule().precompute("i", "w", expr="c[i] + d[i]")),
        ("sched_gustavson_ws", "C[i, j] = A[i, k] * B[k, j]", dict(A=A, B=Bsq, C="csr"),
         Schedule().reorder("i", "k", "j").precompute("j", "w", format="dense")),
        ("sched_split", "y[i] = x[i] * 2", dict(x=rand(10, 1.0, 21), y="sparse_vector"),
         Schedule().split("i", "i0", "i1", 4)),
    ]
    for name, expr, tensors, sched in scheduled:
        cases.append((f"{name}.lattice", "lattice",
                      lambda expr=expr, tensors=tensors, sched=sched: ss.lower(expr, "lattice",
                                                                               options={"schedule": sched}, **tensors)))

    # loop programs (looplets only)
    G = (rand((16, 16), 0.2, 22) != 0).astype(float)
    bfs = cs.BFS(G)
    HASH = Dense(SparseHash(Element(0.0)))
    Ad, Bd = rand((8, 6), 0.3, 23), rand((6, 7), 0.3, 24)
    Acsc, Bcsr = Tensor.from_numpy(Ad, "csc"), Tensor.from_numpy(Bd, "csr")
    Acsr = Tensor.from_numpy(Ad, "csr")
    Bt = Tensor.from_numpy(Bd.T.copy(), "csr")
    F = Tensor.from_numpy(np.eye(16, dtype=bool)[0], cs.FRONTIER)
    V = Tensor.from_numpy(np.eye(16, dtype=bool)[0], "dense")
    loops = [
        ("prog_spmv_band", lambda: compile_program(spmv_prog, y="dense", A=band, x=Tensor.from_numpy(x, "dense"))),
        ("prog_spmv_block", lambda: compile_program(spmv_prog, y="dense", A=block, x=Tensor.from_numpy(x, "dense"))),
        ("prog_spmv_runs", lambda: compile_program(spmv_prog, y="dense", A=runs, x=Tensor.from_numpy(x, "dense"))),
        ("prog_outer_hash", lambda: compile_program(outer, C=HASH, A=Acsc, B=Bcsr)),
        ("prog_gustavson", lambda: compile_program(gustavson, C="csr", A=Acsr, B=Bcsr)),
        ("prog_inner", lambda: compile_program(inner, C="csr", A=Acsr, B=Bt)),
        ("prog_bfs_push", lambda: compile_program(cs.bfs_push_parents, _F=cs.PARENT_FRONTIER, F=F, A=bfs.A, V=V)),
        ("prog_bfs_pull", lambda: compile_program(cs.bfs_pull_parents, _F=cs.PARENT_FRONTIER, F=F, AT=bfs.AT, V=V)),
    ]
    for name, thunk in loops:
        cases.append((f"{name}.looplets", "loops", thunk))

    # array expressions (fused into one kernel by the array front end)
    from compiler import array as xp
    a, b = xp.asarray(A), xp.asarray(B)
    arrays = [
        ("array_matvec", lambda: ss.lower(a @ xp.asarray(x), strategy="looplets")),
        ("array_sum_axis", lambda: ss.lower((a * b).sum(axis=1), strategy="lattice")),
        ("array_vstack", lambda: ss.lower(xp.concat([a, b], axis=0) * 2.0, strategy="looplets")),
    ]
    for name, thunk in arrays:
        cases.append((f"{name}", "arrays", thunk))
    return cases


def run_case(thunk, texts=False):
    """``(C source or None, step names, refusal message or None)`` of one lowering; with ``texts``,
    each step's name is followed by its note, its program's text before and after, its rewrites."""
    from compiler.errors import StrategyError
    try:
        kernel = thunk()
    except Emitted as e:
        return e.source, _steps(e.trace, texts), None
    except StrategyError as e:
        trace = getattr(e, "trace", None)
        return None, _steps(trace, texts) if trace is not None else [], str(e)
    raise RuntimeError(f"the kernel was not emitted afresh (a cache returned {kernel!r})")


def _steps(trace, texts: bool) -> list[str]:
    if not texts:
        return [s.stage for s in trace.steps]
    out = []
    for s in trace.steps:
        out += [f"== {s.stage}: {s.note}", s.before_text or "", "--", s.after_text or ""]
        out += [f"   {r.rule}: {r.before} -> {r.after}" for r in s.rewrites]
    return out


@contextlib.contextmanager
def emission_only():
    """Within: ``lower`` stops at the C (:func:`emit_only` in the backend's place), restored after."""
    import compiler.lowering as lowering
    built = lowering.compile_function
    lowering.compile_function = emit_only
    try:
        yield
    finally:
        lowering.compile_function = built


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dump", help="write each kernel's C and step names into this directory")
    p.add_argument("--texts", action="store_true", help="with --dump: each step's note and program texts too")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--profile", type=int, default=0, help="print cProfile's top N (tottime and cumtime)")
    p.add_argument("--only", help="one group: lattice, looplets, loops or arrays")
    args = p.parse_args(argv)
    os.environ.setdefault("SPARSESCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="sparsescope-bench-"))
    with emission_only():
        run(args)


def run(args):
    cases = [c for c in corpus() if args.only is None or c[1] == args.only]
    groups = sorted({g for _, g, _ in cases})

    if args.dump:
        out = Path(args.dump)
        out.mkdir(parents=True, exist_ok=True)
        for name, _, thunk in cases:
            source, steps, refused = run_case(thunk, texts=args.texts)
            (out / f"{name}.steps").write_text("\n".join(steps) + "\n")
            if refused is not None:
                (out / f"{name}.refused").write_text(refused + "\n")
            else:
                (out / f"{name}.c").write_text(source)
        print(f"wrote {len(cases)} kernels to {out}")

    t0 = time.process_time()
    for _, _, thunk in cases:   # (a warm-up: imports, lazily built tables and checked lattices are not timed)
        run_case(thunk)
    print(f"first pass {len(cases)} kernels  {time.process_time() - t0:7.3f} s CPU")
    best = {g: float("inf") for g in groups}
    for _ in range(args.repeat):
        for g in groups:
            t0 = time.process_time()
            for _, group, thunk in cases:
                if group == g:
                    run_case(thunk)
            best[g] = min(best[g], time.process_time() - t0)
    for g in groups:
        n = sum(1 for c in cases if c[1] == g)
        print(f"{g:9s} {n:3d} kernels  {best[g]:7.3f} s CPU  ({best[g] / n * 1e3:6.1f} ms per kernel)")
    print(f"{'total':9s} {len(cases):3d} kernels  {sum(best.values()):7.3f} s CPU")

    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _, _, thunk in cases:
            run_case(thunk)
        prof.disable()
        for key in ("tottime", "cumulative"):
            s = io.StringIO()
            stats = pstats.Stats(prof, stream=s).sort_stats(key)
            stats.print_stats(args.profile)
            print(s.getvalue())
        print(f"function calls: {pstats.Stats(prof).total_calls}")


if __name__ == "__main__":
    main()
