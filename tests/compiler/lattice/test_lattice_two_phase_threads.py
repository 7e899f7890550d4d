"""Two-phase assembly on threads (``parallelize(i)``) of the outputs it builds natively beside CSR:
SparseList(Dense) and SparseHash(Dense) (TACO's ``{sparse, dense}``), Dense(SparseByteMap) and
Dense(SparseHash), SparseList(SparseByteMap) and SparseList(SparseHash), byte-map and hash vectors,
and 3-mode outputs fiber by fiber.

Each row counts its entries (or its blocks) in phase 1, a prefix sum gives the rows' starts, and
phase 2 stores each row's entries from its start, skipping the fill; a sequential pass closes
the gaps. These outputs were built as a stand-in (CSR or DCSR) and converted after each call.
"""

from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, evaluate, lower
from compiler.backend import build
from compiler.format import csr, dense, parse_format
from compiler.lattice import Schedule
from compiler.testing import assert_canonical, assert_same_storage, check_lowered, random_sparse
from tests.compiler.lattice.output_cases import assembled_natively, native_result, row_kept

rand = partial(random_sparse, lo=-3, hi=4)
PAR = Schedule().parallelize("i")

pytestmark = pytest.mark.skipif(build.openmp_support() is not None, reason="the C compiler has no OpenMP")

#: the formats a two-phase kernel on threads now assembles itself, and what the lowering step says of each
NATIVE = {"SparseList(Dense)": ("SparseList(Dense(Element({f})))", "block of slots"),
          "Dense(SparseByteMap)": ("Dense(SparseByteMap(Element({f})))", "marked and stored in its slot"),
          "Dense(SparseHash)": ("Dense(SparseHash(Element({f})))", "its table is built after the loops"),
          "SparseHash(Dense)": ("SparseHash(Dense(Element({f})))", "block of slots"),
          # (every row an entry of the outer SparseList until the compaction drops the empty ones, its
          # slots, or keys, i * size + j moving with it)
          "SparseList(SparseByteMap)": ("SparseList(SparseByteMap(Element({f})))", "marked and stored in its slot"),
          "SparseList(SparseHash)": ("SparseList(SparseHash(Element({f})))", "its table is built after the loops")}
EXPRS = {"sum": "C[i, j] = A[i, j] + B[i, j]", "product": "C[i, j] = A[i, j] * B[i, j]",
         "spgemm": "C[i, j] = A[i, k] * B[k, j]"}


def on_threads(expr, out, checked=False, **tensors):
    """Lower ``expr`` with parallelize(i) (two-phase, the default there) into the format ``out``
    names at the oracle's fill: built natively on threads, equal to the oracle in
    Tensor.from_numpy's storage, and so are the IR interpreter's result and the sequential
    two-phase kernel's arrays."""
    want, out_fill = evaluate(expr, **tensors)
    template, how = NATIVE[out]
    fmt = parse_format(template.format(f=float(out_fill)))
    # (the bounds-checked build, with ``checked``, runs its rows on one thread)
    k = check_lowered(expr, PAR, fmt, checked=checked, **tensors)
    got = native_result(k, fmt, want, how, tensors)
    src = k.c_source
    assert "#pragma omp parallel for" in src and "phase 1, count" in src and "phase 2, compute" in src
    return k, got


@pytest.mark.parametrize("fill", [0.0, np.nan])   # (an inf fill: the properties draw it)
@pytest.mark.parametrize("out", NATIVE)
def test_threads_build_the_output_natively(out, fill):
    rng = np.random.default_rng(5)
    a, b = rand((9, 8), 0.35, rng, fill=fill, empty=(1,)), rand((9, 8), 0.35, rng, fill=fill, empty=(1, 6))
    if fill == 0.0:
        b[2] = -a[2]   # (a row phase 1 counts and phase 2 finds all fill: a gap closed after it)
        b[4, :3] = -a[4, :3]
    A, B = Tensor.from_numpy(a, csr(fill=fill), name="A"), Tensor.from_numpy(b, csr(fill=fill), name="B")
    k, got = on_threads("C[i, j] = A[i, j] + B[i, j]", out, checked=fill == 0.0, A=A, B=B)
    if fill == 0.0:   # (the arrays one thread assembles: element for element)
        sequential = lower("C[i, j] = A[i, j] + B[i, j]", strategy="lattice", C=got.format,
                           options={"assembly": "two-phase"}, A=A, B=B)
        assert_same_storage(got, sequential(A=A, B=B))
    if fill == 0.0:   # (row 2 cancels: no block kept for it, or no entry in its fiber)
        assert not row_kept(got, 2) and row_kept(got, 3)
        # (each row's blocks, or entries, from its start)
        assert ("int64_t C1_start = pC0_row * C1_size;" if out.endswith("(Dense)") else
                "int64_t pC1_row = C1_pos[i];") in k.c_source
    if fill == 0.0 and out.endswith("(Dense)"):   # (phase 1 leaves a row's merge at its first entry: one block at most)
        phase1 = k.c_source.split("phase 1, count")[1].split("the rows' starts")[0]
        assert "C1_kept = true;\n                break;" in phase1 and "if (!C1_kept) {" in phase1


@pytest.mark.parametrize("out", NATIVE)
def test_threads_spgemm(out):
    rng = np.random.default_rng(6)
    a, b = rand((11, 9), 0.3, rng, empty=(3,)), rand((9, 10), 0.3, rng)
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    on_threads("C[i, j] = A[i, k] * B[k, j]", out, checked=True, A=A, B=B)


@pytest.mark.parametrize("out", NATIVE)
def test_threads_empty_and_all_fill_results(out):
    # one kernel: empty operands, then operands that cancel everywhere (phase 1 counts every
    # coordinate, phase 2 keeps none)
    a = np.arange(1.0, 13.0).reshape(3, 4)
    for x, y in ((np.zeros((3, 4)), np.zeros((3, 4))), (a, -a)):
        A, B = Tensor.from_numpy(x, csr(), name="A"), Tensor.from_numpy(y, csr(), name="B")
        _, got = on_threads("C[i, j] = A[i, j] + B[i, j]", out, A=A, B=B)
        assert not any(row_kept(got, row) for row in range(3))


def test_threads_blocks_of_two_levels_and_rows_of_blocks():
    """A block of two Dense levels under the outer SparseList (was refused on threads: its stand-in,
    three SparseLists, is), and a row of blocks under Dense rows."""
    rng = np.random.default_rng(7)
    t, u = rand((5, 4, 6), 0.3, rng), rand((5, 4, 6), 0.3, rng)
    u[1], u[2, 1] = -t[1], -t[2, 1]
    rows = parse_format("Dense(SparseList(SparseList(Element(0.0))))")
    T, U = Tensor.from_numpy(t, rows, name="T"), Tensor.from_numpy(u, rows, name="U")
    for fmt in ("SparseList(Dense(Dense(Element(0.0))))", "Dense(SparseList(Dense(Element(0.0))))"):
        out = parse_format(fmt)
        k = lower("C[i, j, k] = T[i, j, k] + U[i, j, k]", strategy="lattice", C=out, options={"schedule": PAR},
                  T=T, U=U)
        got = k(T=T, U=U)
        assert_canonical(got, t + u)
        np.testing.assert_array_equal(k.interpret(T=T, U=U).to_numpy(), t + u)
        assembled_natively(k, out)
        assert "#pragma omp parallel for" in k.c_source


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 6), st.integers(0, 6), st.floats(0.0, 1.0), st.integers(0, 2 ** 16),
       st.sampled_from(list(NATIVE)), st.sampled_from(list(EXPRS)), st.sampled_from([0.0, np.nan, np.inf]))
@example(0, 3, 0.5, 1, "SparseList(Dense)", "sum", 0.0)   # (no rows: nothing counted, nothing moved)
@example(5, 4, 0.6, 2, "SparseHash(Dense)", "spgemm", np.nan)   # (a hash's entries holding blocks, on threads)
@example(4, 5, 0.5, 3, "Dense(SparseByteMap)", "sum", np.inf)   # (an inf fill, drawn for sure)
def test_property_threads_native_outputs(m, n, density, seed, out, what, fill):
    rng = np.random.default_rng(seed)
    a = rand((m, n), density, rng, fill=fill)
    b = rand((m, n) if what != "spgemm" else (n, m), density, rng, fill=fill)
    if what == "sum" and m and fill == 0.0:
        b[0] = -a[0]   # (a row that cancels)
    A, B = Tensor.from_numpy(a, csr(fill=fill), name="A"), Tensor.from_numpy(b, csr(fill=fill), name="B")
    on_threads(EXPRS[what], out, A=A, B=B)


#: the vectors a two-phase kernel on threads now assembles itself: each coordinate a row of at most one
#: entry, its slot (or key) its own
VECTORS = {"SparseByteMap": "marked and stored in its slot", "SparseHash": "its table is built after the loops"}


def vector_on_threads(level, checked, **tensors):
    """``a[i] = b[i] + c[i]`` on threads into a ``level`` vector at the oracle's fill: built natively,
    and element for element as the sequential two-phase kernel builds it."""
    want, out_fill = evaluate("a[i] = b[i] + c[i]", **tensors)
    fmt = parse_format(f"{level}(Element({float(out_fill)}))")
    k = check_lowered("a[i] = b[i] + c[i]", PAR, fmt, checked=checked, **tensors)
    got = native_result(k, fmt, want, VECTORS[level], tensors)
    assert "#pragma omp parallel for" in k.c_source and "phase 1, count" in k.c_source
    sequential = lower("a[i] = b[i] + c[i]", strategy="lattice", a=fmt, options={"assembly": "two-phase"}, **tensors)
    assert_same_storage(got, sequential(**tensors))
    return got


@pytest.mark.parametrize("fill", [0.0, np.nan, np.inf])
@pytest.mark.parametrize("level", VECTORS)
def test_threads_build_a_byte_map_or_hash_vector_natively(level, fill):
    # (dense operands: the loop over i is a for loop the threads share; was a SparseList stand-in)
    b = np.array([1.0, 2.0, fill, 3.0, -0.0, fill, 4.0])
    c = np.array([-1.0, fill, 5.0, -3.0, 0.0, fill, 1.0])   # (entries 0 and 3 cancel when the fill is 0)
    got = vector_on_threads(level, fill == 0.0, b=Tensor.from_numpy(b, dense(1, fill=fill), name="b"),
                            c=Tensor.from_numpy(c, dense(1, fill=fill), name="c"))
    if fill == 0.0:
        assert got.levels[0].arrays()[got.levels[0].crd_of(0)].tolist() == [1, 2, 6]
    for x, y in ((np.full(7, fill), np.full(7, fill)), (b, -b)):   # (empty, and all-fill when it cancels)
        x = np.where(np.isnan(x), 0.0, x) if fill == 0.0 else x
        got = vector_on_threads(level, False, b=Tensor.from_numpy(x, dense(1, fill=fill), name="b"),
                                c=Tensor.from_numpy(y, dense(1, fill=fill), name="c"))
        if fill == 0.0:
            assert got.levels[0].arrays()["pos"][-1] == 0


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 9), st.floats(0.0, 1.0), st.integers(0, 2 ** 16), st.sampled_from(list(VECTORS)),
       st.sampled_from([0.0, np.nan, np.inf]))
def test_property_threads_vectors(n, density, seed, level, fill):
    rng = np.random.default_rng(seed)
    b, c = rand((n,), density, rng, fill=fill), rand((n,), density, rng, fill=fill)
    if fill == 0.0:
        c[::2] = -b[::2]   # (entries that cancel)
    vector_on_threads(level, False, b=Tensor.from_numpy(b, dense(1, fill=fill), name="b"),
                      c=Tensor.from_numpy(c, dense(1, fill=fill), name="c"))


#: the 3-mode formats a two-phase kernel on threads now assembles itself, fiber by fiber (each
#: (i, j) of a row i under Dense levels counts, then stores, its own entries; a DCSR's rows hold
#: blocks), and what the lowering step says of each. Each was refused on threads before: its
#: stand-in (three SparseLists, or Dense(Dense(SparseList))) was.
FIBERS = {"Dense(Dense(SparseList))": ("Dense(Dense(SparseList(Element({f}))))", "each fiber of its level 2"),
          "Dense(Dense(SparseByteMap))": ("Dense(Dense(SparseByteMap(Element({f}))))", "marked and stored in its slot"),
          "Dense(Dense(SparseHash))": ("Dense(Dense(SparseHash(Element({f}))))", "its table is built after the loops"),
          "SparseList(SparseList(Dense))": ("SparseList(SparseList(Dense(Element({f}))))", "block of slots"),
          "Dense(SparseHash(Dense))": ("Dense(SparseHash(Dense(Element({f}))))", "block of slots"),
          "SparseHash(Dense(Dense))": ("SparseHash(Dense(Dense(Element({f}))))", "block of slots"),
          # (CSF rows: level 1 filled as Dense on the threads, its coordinates whose fiber got entries listed after)
          "Dense(SparseList(SparseList))": ("Dense(SparseList(SparseList(Element({f}))))", "listed after")}
EXPRS3 = {"sum": "C[i, j, k] = T[i, j, k] + U[i, j, k]", "product": "C[i, j, k] = T[i, j, k] * U[i, j, k]"}
CSF_ROWS = "Dense(SparseList(SparseList(Element({f}))))"


def fibers_on_threads(expr, out, t, u, fill, checked=False, sequential=False):
    """``expr`` on threads into the 3-mode format ``out`` names, from ``t`` and ``u`` stored as rows of
    lists at ``fill``: built natively, fiber by fiber, equal to the oracle (and the interpreter) in
    Tensor.from_numpy's storage; with ``sequential``, element for element as one thread's two-phase
    kernel builds it."""
    tensors = {"T": Tensor.from_numpy(t, parse_format(CSF_ROWS.format(f=float(fill))), name="T"),
               "U": Tensor.from_numpy(u, parse_format(CSF_ROWS.format(f=float(fill))), name="U")}
    want, out_fill = evaluate(expr, **tensors)
    template, how = FIBERS[out]
    fmt = parse_format(template.format(f=float(out_fill)))
    k = check_lowered(expr, PAR, fmt, checked=checked, **tensors)
    got = native_result(k, fmt, want, how, tensors)
    assert "#pragma omp parallel for" in k.c_source and "phase 1, count" in k.c_source
    if sequential:
        one = lower(expr, strategy="lattice", C=fmt, options={"assembly": "two-phase"}, **tensors)
        assert_same_storage(got, one(**tensors))
    return k, got


# (NaN for a byte map and for blocks; the property draws NaN and inf for all)
@pytest.mark.parametrize("out, fill", [(out, 0.0) for out in FIBERS] + [("Dense(Dense(SparseByteMap))", np.nan),
                                                                         ("SparseList(SparseList(Dense))", np.nan),
                                                                         ("Dense(SparseList(SparseList))", np.nan)])
def test_threads_build_three_mode_outputs_fiber_by_fiber(out, fill):
    rng = np.random.default_rng(8)
    t, u = rand((5, 4, 6), 0.35, rng, fill=fill, empty=(3,)), rand((5, 4, 6), 0.35, rng, fill=fill, empty=(3,))
    if fill == 0.0:
        u[1], u[2, 1], u[4, 2, :3] = -t[1], -t[2, 1], -t[4, 2, :3]   # (a row, a fiber, part of one cancel)
    k, got = fibers_on_threads(EXPRS3["sum"], out, t, u, fill, checked=fill == 0.0, sequential=fill == 0.0)
    if fill == 0.0:
        assert not row_kept3(got, 1) and row_kept3(got, 2) and not row_kept3(got, 3)
    if out.startswith(("Dense(Dense(", "Dense(SparseList(")):   # (each fiber (i, j) from its own start, phase 1 its count)
        assert "int64_t pC2_row = C2_pos[i * C1_size + j" in k.c_source


def row_kept3(got, row) -> bool:
    """Whether the 3-mode result ``got`` stores an entry in slice ``row``."""
    return bool(np.any(got.to_numpy()[row] != 0.0))


@pytest.mark.parametrize("out", FIBERS)
def test_threads_fibers_of_empty_and_all_fill_results(out):
    t = np.arange(1.0, 25.0).reshape(2, 3, 4)
    for x, y in ((np.zeros((2, 3, 4)), np.zeros((2, 3, 4))), (t, -t)):   # (nothing stored; all cancels)
        _, got = fibers_on_threads(EXPRS3["sum"], out, x, y, 0.0)
        assert not np.any(got.to_numpy())


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(st.integers(0, 5), st.integers(0, 4), st.integers(0, 5)), st.floats(0.0, 1.0),
       st.integers(0, 2 ** 16), st.sampled_from(list(FIBERS)), st.sampled_from(list(EXPRS3)),
       st.sampled_from([0.0, np.nan, np.inf]))
@example((0, 3, 2), 0.5, 1, "SparseList(SparseList(Dense))", "sum", 0.0)   # (no rows: nothing counted, nothing moved)
@example((3, 0, 4), 0.5, 2, "Dense(Dense(SparseByteMap))", "sum", np.nan)   # (rows of no fibers)
@example((4, 3, 0), 0.5, 3, "Dense(SparseList(SparseList))", "product", np.inf)   # (fibers of no coordinates)
def test_property_threads_three_mode_outputs(shape, density, seed, out, what, fill):
    rng = np.random.default_rng(seed)
    t, u = rand(shape, density, rng, fill=fill), rand(shape, density, rng, fill=fill)
    if what == "sum" and shape[0] and fill == 0.0:
        u[0] = -t[0]   # (a row that cancels)
    fibers_on_threads(EXPRS3[what], out, t, u, fill)
