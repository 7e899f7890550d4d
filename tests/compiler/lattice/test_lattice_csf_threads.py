"""Two-phase assembly on threads (``parallelize(i)``) of CSF outputs whose outermost level is sparse,
``SparseList(SparseList(SparseList))`` (was refused: "would be appended through one counter the threads
share"), and of deeper CSF outputs.

The upper lists are filled on the threads as Dense levels (every fiber ``i * n + j`` of the innermost
list counted in phase 1 and filled from its own start in phase 2 by its row), and a sequential pass
then lists them bottom-up: a ``j`` is kept if its fiber got entries, an ``i`` if some ``j`` of it was.
Each kernel is checked against the dense oracle and the IR interpreter, and its arrays against the
same kernel without the schedule (one thread, one pass). The threads are forced to three (two cores
would give two): OpenMP's thread count is set through its runtime before the kernels run.
"""

import ctypes
import ctypes.util
from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, evaluate, lower
from compiler.backend import build
from compiler.errors import StrategyError
from compiler.format import csr, parse_format
from compiler.lattice import Schedule
from compiler.testing import assert_same_storage, check_lowered
from compiler.testing import random_sparse
from tests.compiler.lattice.output_cases import native_result

rand = partial(random_sparse, lo=-3, hi=4)
PAR = Schedule().parallelize("i")

pytestmark = pytest.mark.skipif(build.openmp_support() is not None, reason="the C compiler has no OpenMP")


def lists(n: int, fill: float, dense_top: bool = False):
    """``n`` SparseList levels at ``fill`` (CSF), or under a Dense level with ``dense_top`` (CSF rows)."""
    spec = f"Element({float(fill)})"
    for _ in range(n - 1 if dense_top else n):
        spec = f"SparseList({spec})"
    return parse_format(f"Dense({spec})" if dense_top else spec)


@pytest.fixture(autouse=True, scope="module")
def three_threads():
    """Run the kernels on three OpenMP threads (more than one, whatever the machine's cores)."""
    gomp = ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")
    before = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(3)
    assert gomp.omp_get_max_threads() == 3
    yield
    gomp.omp_set_num_threads(before)


def csf_on_threads(expr, n=3, **tensors):
    """``expr`` on threads into an ``n``-mode CSF at the oracle's fill: built natively (no stand-in, the
    lowering says the upper lists are listed after), equal to the oracle and the interpreter, and
    stored as the same kernel without the schedule stores it."""
    want, out_fill = evaluate(expr, **tensors)
    fmt = lists(n, out_fill)
    k = check_lowered(expr, PAR, fmt, **tensors)
    got = native_result(k, fmt, want, "listed after", tensors)
    src = k.c_source
    assert "#pragma omp parallel for" in src and "phase 1, count" in src and "phase 2, compute" in src
    one = lower(expr, strategy="lattice", C=fmt, **tensors)
    assert "#pragma omp parallel" not in one.c_source
    assert_same_storage(got, one(**tensors))
    return k, got


def operands(what, t, u, fill):
    """The expression ``what`` names and its operands: ``t`` as a CSF (and ``u`` as CSF rows, or dense)."""
    csf, rows = lists(3, fill), lists(3, fill, dense_top=True)
    if what == "scale":
        return "C[i, j, k] = T[i, j, k] * 2.0", {"T": Tensor.from_numpy(t, csf, name="T")}
    if what == "product":
        # (T's i iterated, U's located, where T's fill annihilates the product: 0 without non-finite
        # values; else the loop over i is a union, a while loop threads cannot share, so T's i is Dense)
        annihilates = fill == 0.0 and np.isfinite(t).all() and np.isfinite(u).all()
        return "C[i, j, k] = T[i, j, k] * U[i, j, k]", {
            "T": Tensor.from_numpy(t, csf if annihilates else rows, name="T"), "U": Tensor.from_numpy(u, rows, name="U")}
    if what == "sum":   # (a union over i: each operand's i located, so both are CSF rows)
        return "C[i, j, k] = T[i, j, k] + U[i, j, k]", {"T": Tensor.from_numpy(t, rows, name="T"),
                                                         "U": Tensor.from_numpy(u, rows, name="U")}
    return "C[i, j, k] = T[i, j, k] + U[i, j, k]", {"T": Tensor.from_numpy(t, rows, name="T"), "U": u}


@pytest.mark.parametrize("fill", [0.0, np.nan])
@pytest.mark.parametrize("what", ["scale", "product", "sum", "dense"])
def test_threads_build_a_csf_output(what, fill):
    rng = np.random.default_rng(11)
    t = rand((6, 5, 4), 0.4, rng, fill=fill, empty=(3,))
    u = rand((6, 5, 4), 0.5, rng, fill=fill if what != "dense" else 0.0)
    t[0, 0, 0], u[0, 0, 1], t[4, 1, 2] = np.nan, np.inf, -np.inf   # (non-finite values among the entries)
    if fill == 0.0 and what in ("sum", "dense"):
        u[1], u[2, 3], u[3] = -t[1], -t[2, 3], 0.0   # (a row, and a fiber, that cancel; a row of neither)
    if fill == 0.0 and what == "product":
        u[1] = 0.0   # (a row of T's whose products are all 0)
    if fill == 0.0 and what == "scale":
        t[1] = 0.0
    expr, tensors = operands(what, t, u, fill)
    k, got = csf_on_threads(expr, **tensors)
    if fill == 0.0:
        i_kept = got.levels[0].arrays()[got.levels[0].crd_of(0)].tolist()
        assert 1 not in i_kept and 3 not in i_kept and 0 in i_kept
    # (each fiber (i, j) from its own start; then j kept where its fiber got entries, i where a j was)
    assert "int64_t pC2_row = C2_pos[i * C1_size + j];" in k.c_source
    assert "if (pC1 > m_begin1) {" in k.c_source and "C0_idx[pC0] = m_i0;" in k.c_source


def test_threads_csf_of_empty_and_all_fill_results():
    t = np.arange(1.0, 25.0).reshape(2, 3, 4)
    for x, y in ((np.zeros((2, 3, 4)), np.zeros((2, 3, 4))), (t, -t)):   # (nothing stored; all cancels)
        expr, tensors = operands("sum", x, y, 0.0)
        _, got = csf_on_threads(expr, **tensors)
        assert got.levels[0].arrays()["pos"].tolist() == [0, 0] and not got.vals.size


def test_threads_csf_with_a_reduction_inside():
    """``C[i, j, l] = A[i, j, k] * B[l, k]`` into a CSF (a test_lattice_schedule refusal until now):
    each fiber ``(i, j)`` sums over ``k`` for each ``l``."""
    rng = np.random.default_rng(3)
    A = Tensor.from_numpy(rand((5, 4, 6), 0.4, rng, empty=(2,)), lists(3, 0.0), name="A")
    B = Tensor.from_numpy(rand((3, 6), 0.5, rng), csr(), name="B")
    csf_on_threads("C[i, j, l] = A[i, j, k] * B[l, k]", A=A, B=B)


@pytest.mark.parametrize("dense_top", [False, True], ids=["SparseList^4", "Dense(SparseList^3)"])
def test_threads_build_four_mode_csf(dense_top):
    """Three upper lists listed after the threads (two under CSF rows' Dense level)."""
    rng = np.random.default_rng(4)
    t = rand((4, 3, 3, 5), 0.4, rng, empty=(1,))
    u = rand((4, 3, 3, 5), 0.4, rng)
    u[2, 1] = -t[2, 1]
    T, U = (Tensor.from_numpy(x, lists(4, 0.0, dense_top=True), name=n) for x, n in ((t, "T"), (u, "U")))
    expr = "C[i, j, k, l] = T[i, j, k, l] + U[i, j, k, l]"
    want, _ = evaluate(expr, T=T, U=U)
    fmt = lists(4, 0.0, dense_top)
    k = check_lowered(expr, PAR, fmt, T=T, U=U)
    got = native_result(k, fmt, want, "listed after", {"T": T, "U": U})
    assert_same_storage(got, lower(expr, strategy="lattice", C=fmt, T=T, U=U)(T=T, U=U))
    assert "#pragma omp parallel for" in k.c_source and "m_begin2" in k.c_source


def test_threads_refuse_a_merge_of_csf_rows_clearly():
    """Two CSF operands merge their level 0 (i) in a while loop: its iterations cannot run on threads
    (the output is not the reason; CSF rows, whose i is Dense, are what threads take)."""
    t = Tensor.from_numpy(np.ones((2, 2, 2)), lists(3, 0.0), name="T")
    with pytest.raises(StrategyError, match=r"parallelize\(i\) does not apply: the loop over i merges T's level 0 "
                                            r"\(SparseList\) and U's level 0 \(SparseList\) in a while loop"):
        lower("C[i, j, k] = T[i, j, k] * U[i, j, k]", strategy="lattice", C=lists(3, 0.0), T=t,
              U=Tensor.from_numpy(np.ones((2, 2, 2)), lists(3, 0.0), name="U"), options={"schedule": PAR})


@pytest.mark.parametrize("op", ["+", "*"])
def test_threads_merge_csf_operands_by_the_split_the_refusal_names(op):
    """The refusal above names a schedule that does run on threads: blocks of i, each finding both
    operands' first positions by binary search; CSF + CSF into a CSF, checked as above."""
    rng = np.random.default_rng(8)
    t, u = rand((9, 4, 5), 0.3, rng, empty=(2, 7)), rand((9, 4, 5), 0.3, rng, empty=(7, 8))
    t[0, 1, 2], u[5, 0, 0] = np.nan, -np.inf
    u[4] = -t[4] if op == "+" else u[4]   # (a row that cancels)
    T, U = (Tensor.from_numpy(x, lists(3, 0.0), name=n) for x, n in ((t, "T"), (u, "U")))
    expr = f"C[i, j, k] = T[i, j, k] {op} U[i, j, k]"
    with pytest.raises(StrategyError, match=r"split it and run its blocks on threads.*"
                                            r"split\(i, i0, i1, 256\)\.parallelize\(i0\)"):
        lower(expr, strategy="lattice", C=lists(3, 0.0), T=T, U=U, options={"schedule": PAR})
    want, _ = evaluate(expr, T=T, U=U)
    k = check_lowered(expr, Schedule().split("i", "i0", "i1", 2).parallelize("i0"), lists(3, 0.0), T=T, U=U)
    assert "#pragma omp parallel for" in k.c_source and "lower_bound_int64(T0_idx" in k.c_source
    assert_same_storage(native_result(k, lists(3, 0.0), want, "listed after", {"T": T, "U": U}),
                        lower(expr, strategy="lattice", C=lists(3, 0.0), T=T, U=U)(T=T, U=U))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(st.integers(0, 5), st.integers(0, 4), st.integers(0, 5)), st.floats(0.0, 1.0),
       st.integers(0, 2 ** 16), st.sampled_from(["scale", "product", "sum", "dense"]),
       st.sampled_from([0.0, np.nan, np.inf]))
@example((0, 3, 2), 0.5, 1, "sum", 0.0)   # (no rows: nothing counted, nothing listed)
@example((3, 0, 4), 0.5, 2, "scale", np.nan)   # (rows of no fibers)
@example((4, 3, 0), 0.5, 3, "product", np.inf)   # (fibers of no coordinates)
def test_property_threads_csf_outputs(shape, density, seed, what, fill):
    rng = np.random.default_rng(seed)
    t = rand(shape, density, rng, fill=fill)
    u = rand(shape, density, rng, fill=fill if what != "dense" else 0.0)
    if what == "sum" and shape[0] and fill == 0.0:
        u[0] = -t[0]   # (a row that cancels)
    expr, tensors = operands(what, t, u, fill)
    csf_on_threads(expr, **tensors)
