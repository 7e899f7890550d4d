"""Two-phase and threaded kernels write Dense levels between two sparse ones directly
(``SparseList(Dense(SparseList))``, a SparseHash above or below the Dense rows, CSF with a Dense middle):
sequentially, phase 1 appends a row of fibers per entry of the upper level as a one-pass kernel does,
phase 2 the values, and the compaction drops the entries at the fill, then the upper entries whose row
became empty, their row of fibers' ends moving with them (compiler/lattice/emit_two_phase.py,
``move_row``); on threads, the upper list is filled as a Dense level, a row of fibers per coordinate,
and listed after. Main built them in a stand-in and converted after each call (a ``convert`` step).

Each case: no conversion, the lowering step says how; the result and the IR interpreter's equal numpy's
and ``compiler.evaluate``'s, valid, in ``Tensor.from_numpy``'s storage; fills 0, 1, NaN and -inf with
NaN and ±inf stored, empty and all-fill results."""

from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, evaluate, lower
from compiler.backend import build
from compiler.format import parse_format
from compiler.lattice import Schedule
from compiler.testing import random_sparse
from tests.compiler.lattice.output_cases import native_result

rand = partial(random_sparse, lo=-3, hi=4)
TWO = {"assembly": "two-phase"}
THREADS = {"schedule": Schedule().parallelize("i")}
ROWS_NOTE = "each position it appends gets a row of slots"   # (the lowering step's note, sequentially)

#: the 3-mode outputs a sequential two-phase kernel now writes itself
SEQUENTIAL = {"SparseList(Dense(SparseList))": "SparseList(Dense(SparseList(Element({f}))))",
              "SparseHash(Dense(SparseList))": "SparseHash(Dense(SparseList(Element({f}))))",
              "SparseList(Dense(SparseHash))": "SparseList(Dense(SparseHash(Element({f}))))",
              "SparseHash(Dense(SparseHash))": "SparseHash(Dense(SparseHash(Element({f}))))"}
#: ... and on threads (the upper lists filled as Dense levels, listed after), 3 and 4 modes
THREADED = {"SparseList(Dense(SparseList))": "SparseList(Dense(SparseList(Element({f}))))",
            "SparseList(Dense(Dense(SparseList)))": "SparseList(Dense(Dense(SparseList(Element({f})))))",
            "Dense(SparseList(Dense(SparseList)))": "Dense(SparseList(Dense(SparseList(Element({f})))))",
            "SparseList(SparseList(Dense(SparseList)))": "SparseList(SparseList(Dense(SparseList(Element({f})))))"}
NONFINITE = np.array([np.nan, np.inf, -np.inf])


def operands(shape, fill, seed, density=0.4, cancel=True):
    """Two arrays at ``fill`` elsewhere, NaN and ±inf among their stored values; with ``cancel`` (a 0
    fill) the second's slice 1 and a fiber of slice 2 are the first's negated (finite): rows that
    phase 2 finds all fill, dropped by the compaction."""
    rng = np.random.default_rng(seed)
    t, u = rand(shape, density, rng, fill=fill), rand(shape, density, rng, fill=fill)
    for a in (t, u):
        spots = rng.random(shape) < 0.1
        a[spots] = NONFINITE[rng.integers(3, size=int(spots.sum()))]
    if cancel and fill == 0.0 and shape[0] > 2:
        t[1:3] = rand((2, *shape[1:]), density, rng)
        u[1], u[2, 0] = -t[1], -t[2, 0]
    return t, u


def written_directly(expr, template, options, t, u, fill, how):
    """``expr`` over ``t`` and ``u`` (stored as Dense rows of lists at ``fill``) into the format
    ``template`` names at the oracle's fill: written by the kernel itself (no ``convert`` step, the
    lowering step says ``how``), equal to numpy and the oracle, valid."""
    inner = "SparseList(" * (t.ndim - 1) + "Element({f})" + ")" * (t.ndim - 1)
    fmt_in = parse_format(f"Dense({inner})".format(f=float(fill)))
    tensors = {"T": Tensor.from_numpy(t, fmt_in, name="T"), "U": Tensor.from_numpy(u, fmt_in, name="U")}
    want, out_fill = evaluate(expr, **tensors)
    with np.errstate(invalid="ignore"):
        numpy = t + u if "+" in expr else t * u
    np.testing.assert_array_equal(want, numpy)
    fmt = parse_format(template.format(f=float(out_fill)))
    k = lower(expr, strategy="lattice", C=fmt, options=options, **tensors)
    got = native_result(k, fmt, want, how, tensors)
    got.validate()
    assert "phase 2, compute" in k.c_source
    return k, got


def sum_or_product(ndim: int, what: str = "sum") -> str:
    idx = ", ".join("ijkl"[:ndim])
    return f"C[{idx}] = T[{idx}] {'+' if what == 'sum' else '*'} U[{idx}]"


@pytest.mark.parametrize("out, fill", [(out, f) for out in SEQUENTIAL for f in (0.0, np.nan)]
                         + [("SparseList(Dense(SparseList))", 1.0), ("SparseHash(Dense(SparseHash))", -np.inf)])
def test_two_phase_writes_rows_of_fibers_directly(out, fill):
    t, u = operands((4, 3, 5), fill, 1)
    k, got = written_directly(sum_or_product(3), SEQUENTIAL[out], TWO, t, u, fill, ROWS_NOTE)
    if fill == 0.0:   # (slice 1 cancels: its entry of level 0 dropped, its row moved over)
        assert "c_fiber2" in k.c_source and not np.any(got.to_numpy()[1]) and np.any(got.to_numpy()[3])


@pytest.mark.parametrize("out", ["SparseList(SparseList(Dense(SparseList(Element({f})))))",
                                 "SparseList(Dense(Dense(SparseHash(Element({f})))))"])
def test_two_phase_four_modes(out):
    # (a list's entries, and a row's, that cancel: the compaction drops both, the rows moving down)
    t, u = operands((4, 2, 3, 3), 0.0, 3)
    u[3, 1, 2] = -t[3, 1, 2]
    written_directly(sum_or_product(4), out, TWO, t, u, 0.0, ROWS_NOTE)


@pytest.mark.skipif(build.openmp_support() is not None, reason="the C compiler has no OpenMP")
@pytest.mark.parametrize("out, fill", [(out, 0.0) for out in THREADED] + [("SparseList(Dense(SparseList))", np.nan)])
def test_threads_write_rows_of_fibers_directly(out, fill):
    shape = (4, 3, 5) if out.count("(") == 2 else (4, 2, 3, 2)
    t, u = operands(shape, fill, 2)
    k, got = written_directly(sum_or_product(len(shape)), THREADED[out], THREADS, t, u, fill,
                              "a row of fibers of level")
    assert "#pragma omp parallel for" in k.c_source
    if fill == 0.0:
        assert not np.any(got.to_numpy()[1]) and np.any(got.to_numpy()[3])


@pytest.mark.parametrize("options", [TWO, THREADS], ids=["two-phase", "threads"])
def test_empty_and_all_fill_results(options):
    if options is THREADS and build.openmp_support() is not None:
        pytest.skip("the C compiler has no OpenMP")
    how = ROWS_NOTE if options is TWO else "a row of fibers of level"
    t = np.arange(1.0, 61.0).reshape(4, 3, 5)
    for a, b in ((np.zeros_like(t), np.zeros_like(t)), (t, -t)):   # (nothing stored; everything cancels)
        rows = SEQUENTIAL["SparseList(Dense(SparseList))"]
        _, got = written_directly(sum_or_product(3), rows, options, a, b, 0.0, how)
        assert got.levels[0].arrays()["idx"].size == 0 and got.vals.size == 0


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(out=st.sampled_from(sorted(SEQUENTIAL)), what=st.sampled_from(["sum", "product"]),
       shape=st.tuples(st.integers(0, 4), st.integers(1, 3), st.integers(0, 4)),
       density=st.sampled_from([0.0, 0.4, 1.0]),
       fill=st.sampled_from([0.0, np.nan, -np.inf]), threads=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_property(out, what, shape, density, fill, threads, seed):
    if threads and (out not in THREADED or build.openmp_support() is not None):
        threads = False
    t, u = operands(shape, fill, seed, density)
    written_directly(sum_or_product(3, what), SEQUENTIAL[out], THREADS if threads else TWO, t, u, fill,
                     "a row of fibers of level" if threads else ROWS_NOTE)
