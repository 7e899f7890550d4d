"""SpGEMM and other sparse outputs gathered through a dense workspace (taco.md §2.8, E8)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, evaluate, lower, parse
from compiler.format import coo, csc, csr, dcsr, dense, parse_format, sparse_vector
from compiler.lattice.cfir import CWorkspace
from compiler.lattice.cfir_interpreter import interpret_cfir
from compiler.lattice.cfir_builder import build_cfir
from compiler.lattice.plan import Setup
from compiler.lattice.cin import Where
from compiler.testing import random_sparse as rand

SPGEMM = "C[i, j] = A[i, k] * B[k, j]"


def spgemm(A, B, out=csr(), fa=csr(), fb=csr()):
    At, Bt = Tensor.from_numpy(A, fa, name="A"), Tensor.from_numpy(B, fb, name="B")
    k = lower(SPGEMM, A=At, B=Bt, C=out)
    got = k(A=At, B=Bt)
    want, _ = evaluate(SPGEMM, A=At, B=Bt)
    np.testing.assert_allclose(got.to_numpy(), want)
    if out.levels[-1].name != "Dense":
        assert not np.any(got.vals == 0.0), "an explicit zero was stored"
    return k, got


def test_e8_exact_arrays():
    k, C = spgemm(np.array([[1, 0, 2], [0, 3, 0.]]), np.array([[0, 4], [5, 0], [6, 7.]]))
    assert C.levels[1].pos.tolist() == [0, 2, 3]
    assert C.levels[1].idx.tolist() == [0, 1, 0]
    assert C.vals.tolist() == [12, 18, 15]


def test_workspace_is_in_concrete_notation_and_trace():
    k, _ = spgemm(np.eye(3), np.eye(3))
    step = k.trace.find("precompute")[0]
    assert isinstance(step.after.body, Where) and step.after.body.temp.indices
    text = str(step.after)
    assert "w[j] += A[i, k] * B[k, j]" in text and "C[i, j] = w[j]" in text and "workspace" in text
    cfir = k.trace.find("cfir")[0].artifacts[0].text
    assert "alloc workspace w[j]" in cfir and "sort w_list" in cfir and "reset w" in cfir
    src = k.c_source
    assert "w_set[j] = true;" in src and "free(w);" in src
    # allocated once, outside the row loop, and reset per row: in the copy-out loop, which
    # visits every listed coordinate (no second pass over the list)
    assert src.index("alloc_array(B1_size, sizeof *w") < src.index("for (int64_t i = 0;")
    copy_out = src[src.index("for (int64_t pw0 = 0; pw0 < w_n; pw0++)"):]
    copy_out = copy_out[:copy_out.index("\n        }\n")]
    assert "w[j] = 0.0;" in copy_out and "w_set[j] = false;" in copy_out and "j_reset" not in src


@pytest.mark.parametrize("shape", [(7, 5, 9), (1, 1, 1), (0, 3, 4), (4, 0, 3), (3, 4, 0)])
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_spgemm_against_scipy(shape, density):
    rng = np.random.default_rng(sum(shape) + int(10 * density))
    m, n, p = shape
    A, B = rand((m, n), density, rng), rand((n, p), density, rng)
    if m > 2:
        A[1] = 0  # an empty row
    _, C = spgemm(A, B)
    ref = sp.csr_matrix(A) @ sp.csr_matrix(B)
    ref.eliminate_zeros()
    ref.sort_indices()
    np.testing.assert_array_equal(C.levels[1].pos, ref.indptr)
    np.testing.assert_array_equal(C.levels[1].idx, ref.indices)
    np.testing.assert_allclose(C.vals, ref.data)


def test_long_rows_use_heapsort():
    rng = np.random.default_rng(3)
    # rows of ~100 coordinates (under 1/16 of 4000) from ~36 runs (more than MERGE_MAX_RUNS)
    A, B = rand((6, 40), 0.9, rng), rand((40, 4000), 0.0008, rng)
    k, C = spgemm(A, B)
    assert "heapsort" in k.c_source
    ref = sp.csr_matrix(A) @ sp.csr_matrix(B)
    ref.sort_indices()
    np.testing.assert_array_equal(C.levels[1].idx, ref.indices)


@pytest.mark.parametrize("row_nnz", [1, 3, 12, 40])
def test_the_coordinate_list_is_merged_from_sorted_runs(row_nnz):
    # each row of A picks row_nnz rows of B: the list has about row_nnz ascending runs
    rng = np.random.default_rng(row_nnz)
    A = np.zeros((30, 50))
    for r in range(30):
        A[r, rng.choice(50, size=row_nnz, replace=False)] = rng.integers(1, 5, size=row_nnz)
    A[4] = 0
    B = rand((50, 3000), 0.0013, rng)   # ~4 per row: lists stay under 1/16 of the extent (no bitmap scan)
    k, C = spgemm(A, B)
    src = k.c_source
    assert "sort w_list[0:w_n] by rank" in src and "merge the ascending runs" in src and "from the bitmap" in src
    ref = sp.csr_matrix(A) @ sp.csr_matrix(B)
    ref.sort_indices()
    np.testing.assert_array_equal(C.levels[1].pos, ref.indptr)
    np.testing.assert_array_equal(C.levels[1].idx, ref.indices)
    np.testing.assert_allclose(C.vals, ref.data)
    np.testing.assert_allclose(k.interpret(A=Tensor.from_numpy(A, csr(), name="A"),
                                           B=Tensor.from_numpy(B, csr(), name="B")).to_numpy(), A @ B)


def test_dense_rows_are_listed_by_scanning_the_bitmap():
    rng = np.random.default_rng(5)
    A, B = rand((5, 6), 0.8, rng), rand((6, 40), 0.6, rng)   # rows of ~40 of 40 coordinates
    k, C = spgemm(A, B)
    ref = sp.csr_matrix(A) @ sp.csr_matrix(B)
    ref.eliminate_zeros()
    ref.sort_indices()
    np.testing.assert_array_equal(C.levels[1].idx, ref.indices)
    np.testing.assert_allclose(C.vals, ref.data)


def test_cancellation_is_not_stored():
    A = np.array([[1.0, 1.0]])
    B = np.array([[2.0, 3.0], [-2.0, 1.0]])
    _, C = spgemm(A, B)
    assert C.levels[1].idx.tolist() == [1] and C.vals.tolist() == [4.0]


@pytest.mark.parametrize("out", [dcsr(), coo()], ids=["dcsr", "coo"])
def test_other_sparse_outputs(out):
    rng = np.random.default_rng(5)
    A, B = rand((6, 5), 0.3, rng), rand((5, 7), 0.3, rng)
    A[2] = 0
    spgemm(A, B, out=out)


def test_dense_output_needs_no_workspace():
    rng = np.random.default_rng(9)
    A, B = rand((5, 4), 0.5, rng), rand((4, 6), 0.5, rng)
    k, _ = spgemm(A, B, out=dense(2))
    assert not k.trace.find("precompute")


def test_interpreters_agree():
    rng = np.random.default_rng(11)
    A, B = rand((6, 5), 0.4, rng), rand((5, 7), 0.4, rng)
    At, Bt = Tensor.from_numpy(A, csr(), name="A"), Tensor.from_numpy(B, csr(), name="B")
    k = lower(SPGEMM, A=At, B=Bt, C=csr())
    np.testing.assert_allclose(k.interpret(A=At, B=Bt).to_numpy(), A @ B)
    setup = Setup.create(parse(SPGEMM), {"A": csr(), "B": csr(), "C": csr()})
    cfir = build_cfir(setup.statement, setup)
    assert isinstance(cfir.loops[0].cases[0].body, CWorkspace)
    np.testing.assert_allclose(interpret_cfir(cfir, setup, A=At, B=Bt), A @ B)


def test_checked_mode():
    rng = np.random.default_rng(12)
    A, B = rand((6, 5), 0.4, rng), rand((5, 7), 0.4, rng)
    At, Bt = Tensor.from_numpy(A, csr(), name="A"), Tensor.from_numpy(B, csr(), name="B")
    k = lower(SPGEMM, A=At, B=Bt, C=csr(), checked=True)
    np.testing.assert_allclose(k(A=At, B=Bt).to_numpy(), A @ B)


def test_min_plus_workspace_starts_at_infinity():
    inf = math.inf
    rng = np.random.default_rng(4)
    A, B = rand((5, 4), 0.4, rng), rand((4, 6), 0.4, rng)
    A[A == 0], B[B == 0] = inf, inf
    At = Tensor.from_numpy(A, csr(fill=inf), name="A")
    Bt = Tensor.from_numpy(B, csr(fill=inf), name="B")
    prog = "C[i, j] = min[k](A[i, k] + B[k, j])"
    k = lower(prog, A=At, B=Bt, C=csr(fill=inf))
    got = k(A=At, B=Bt)
    want, _ = evaluate(prog, A=At, B=Bt)
    np.testing.assert_allclose(got.to_numpy(), want)
    assert "w[j] = INFINITY;" in k.c_source  # reset to the identity of min in the copy-out loop


@pytest.mark.parametrize("out", [csr(), dcsr(), coo()], ids=["csr", "dcsr", "coo"])
def test_csc_times_csr_reads_a_as_csr_rather_than_gather_the_whole_product(out):
    # A's columns and B's rows share k: with A as given (CSC), k would be the outermost loop (an outer
    # product), and no row of C finished before the last k: the whole product gathered in w[i, j],
    # n x m values. The kernel reads A as CSR instead (converted at each call, O(nnz + n)): Gustavson.
    rng = np.random.default_rng(4)
    A, B = rand((6, 8), 0.3, rng), rand((8, 5), 0.3, rng)
    A[2] = 0
    k, C = spgemm(A, B, out=out, fa=csc())
    ref = sp.csc_matrix(A) @ sp.csr_matrix(B)
    np.testing.assert_allclose(C.to_numpy(), ref.toarray())
    (convert,) = k.trace.find("convert")
    assert convert.note == ("A is csc: C would be gathered in a workspace w[i, j] over all its entries (an outer "
                            "product: the reduction's loop runs outside C's loops); the kernel reads A as csr, "
                            "converted before each call (A.asformat, a counting sort, "
                            "O(nnz + extent))")
    (step,) = [s for s in k.trace.steps if s.stage == "precompute"]
    assert step.note == "the sparse output cannot be appended in this loop order: the result is gathered in a " \
                        "workspace w[j] (Gustavson)"
    assert "for (int64_t i = 0; i < A0_size; i++)" in k.c_source


@pytest.mark.parametrize("out", [csr(), dcsr(), coo()], ids=["csr", "dcsr", "coo"])
def test_the_outer_product_order_gathers_the_whole_product_in_a_matrix_workspace(out):
    # the loop order k, i, j asked for: nothing is converted; w[i, j] gathers the whole product
    rng = np.random.default_rng(4)
    A, B = rand((6, 8), 0.3, rng), rand((8, 5), 0.3, rng)
    At, Bt = Tensor.from_numpy(A, csc(), name="A"), Tensor.from_numpy(B, csr(), name="B")
    k = lower(SPGEMM, A=At, B=Bt, C=out, options={"order": ["k", "i", "j"]})
    np.testing.assert_allclose(k(A=At, B=Bt).to_numpy(), A @ B)
    assert not k.trace.find("convert")
    (step,) = [s for s in k.trace.steps if s.stage == "precompute"]
    assert step.note == ("the sparse output cannot be appended in this loop order: the result is gathered in a "
                         "workspace w[i, j] (the loop over k runs outside them)")
    assert "for (int64_t k = 0; k < A0_size; k++)" in k.c_source


def test_a_workspace_too_large_to_allocate_is_a_memory_error_naming_it():
    # DCSC x DCSR with 2^32 rows and columns: the matrix workspace w[i, j] would hold 2^64 entries,
    # a length that wraps to 0 in int64_t. The kernel refuses it instead of writing past one entry.
    from compiler.format import Format
    from compiler.levels import Element, SparseList

    n = 2 ** 32
    dcsc = Format(SparseList(SparseList(Element(0.0))), mode_order=(1, 0))
    coords = np.array([0, 5, n // 2], np.int64), np.array([3, n // 2, 7], np.int64)
    A = Tensor.from_scipy(sp.coo_array((np.ones(3), coords), shape=(n, n)), dcsc, name="A")
    B = Tensor.from_scipy(sp.coo_array((np.ones(3), coords[::-1]), shape=(n, n)), dcsr(), name="B")
    k = lower(SPGEMM, A=A, B=B, C=dcsr(), options={"order": ["k", "i", "j"]})   # (the outer product)
    assert "alloc_array(length_product(A1_size, B1_size), sizeof *w, true)" in k.c_source
    with pytest.raises(MemoryError, match=r"kernel lattice_C: out of memory: scratch array w needs A1_size \* "
                                          r"B1_size = 4294967296 \* 4294967296 = 18446744073709551616 float64 "
                                          r"elements \(147\.6 EB\), more than an int64 length holds"):
        k(A=A, B=B)
    # the same kernel on small inputs is right
    a = rand((5, 4), 0.5, np.random.default_rng(1))
    small_a, small_b = Tensor.from_numpy(a, dcsc, name="A"), Tensor.from_numpy(a.T.copy(), dcsr(), name="B")
    np.testing.assert_allclose(k(A=small_a, B=small_b).to_numpy(), a @ a.T)


def test_csc_spmv_into_sparse_vector_through_workspace():
    rng = np.random.default_rng(2)
    A = rand((9, 7), 0.3, rng)
    At = Tensor.from_numpy(A, csc(), name="A")
    x = rng.random(7)
    k = lower("y[i] = A[i, j] * x[j]", A=At, x=x, y=sparse_vector())
    np.testing.assert_allclose(k(A=At, x=x).to_numpy(), A @ x)
    assert k.trace.find("precompute")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(st.integers(0, 7), st.integers(0, 7), st.integers(0, 30)),
       st.sampled_from([0.0, 0.1, 0.4, 1.0]), st.sampled_from(["csr", "dcsr", "coo", "csc"]),
       st.sampled_from(["csr", "dcsr", "coo"]), st.integers(0, 2 ** 16))
def test_spgemm_differential(shape, density, fa, fout, seed):
    rng = np.random.default_rng(seed)
    m, n, p = shape
    A, B = rand((m, n), density, rng, lo=-3, hi=4), rand((n, p), density, rng, lo=-3, hi=4)
    fmts = {"csr": csr(), "dcsr": dcsr(), "coo": coo(), "csc": csc()}
    _, C = spgemm(A, B, out=fmts[fout], fa=fmts[fa])
    np.testing.assert_allclose(C.to_numpy(), A @ B)


@pytest.mark.parametrize("row_len", [63, 64, 65, 66])
def test_rank_sort_boundary(row_len):
    # B's rows hold 5 (or fewer) columns each, disjoint; a row of A picking r rows of B lists
    # exactly row_len coordinates in ascending runs: rank-sorted up to 64, merged past it
    n_b = 14
    B = np.zeros((n_b, 2000))
    for k in range(n_b):
        B[k, 7 * k + 101 * np.arange(5)] = k + 1.0
    A = np.zeros((3, n_b))
    full, rest = divmod(row_len, 5)
    A[1, :full] = 1.0
    if rest:
        B[full, 7 * full + 101 * np.arange(rest, 5)] = 0.0   # a shorter last run
        A[1, full] = 1.0
    k, C = spgemm(A, B)
    assert np.diff(C.levels[1].pos).tolist() == [0, row_len, 0]
    assert C.levels[1].idx.tolist() == sorted(C.levels[1].idx.tolist())


def test_a_consumer_that_skips_coordinates_keeps_the_reset_pass():
    """Consuming w[j] intersected with B's row visits only some listed coordinates, so the
    workspace is reset in its own pass over the list; no row sees the previous row's sums."""
    from compiler.lattice.schedule import Schedule
    rng = np.random.default_rng(8)
    mats = {n: rand((6, 9), 0.5, rng) for n in "BCD"}
    T = {n: Tensor.from_numpy(m, csr(), name=n) for n, m in mats.items()}
    prog = "A[i, j] = B[i, j] * (C[i, j] + D[i, j])"
    k = lower(prog, A=csr(), options={"schedule": Schedule().precompute("j", "w", expr="C[i, j] + D[i, j]")},
              checked=True, **T)
    np.testing.assert_allclose(k(**T).to_numpy(), mats["B"] * (mats["C"] + mats["D"]))
    assert "j_reset" in k.c_source


# A workspace's values hold what its operands' fills make, not only their stored values: with A of
# fill -inf, every term A[j, l] * B[l, k] where B is absent is -inf * 0 = NaN. The workspace w[k]
# is then NaN where present, and w[k] * C[j, k] is NaN where C is absent (C's fill 0 does not
# annihilate it). Found by a differential probe: the lattice wrote 0 there into a sparse output,
# and in 3-D dropped a locate of A (a C compile error).
MASKED = "out[j, k] = sum[l](A[j, l] * B[l, k]) * C[j, k]"


def masked_operands(a_fill, b_fill=0.0, nd=2):
    A = np.full((2,) * (nd - 1) + (3,), a_fill); A[..., 0, 1] = 2.0
    B = np.zeros((3, 2)); B[1, 0] = 1.0; B[2, 1] = b_fill
    C = np.zeros((2,) * (nd - 1) + (2,)); C[..., 0, 0] = 3.0
    return A, B, C


@pytest.mark.parametrize("a_fill", [-math.inf, math.nan, 1.0])
@pytest.mark.parametrize("out", ["coo", "csr", "dcsr", "dense"])
@pytest.mark.parametrize("c_format", ["coo", "csr"])
def test_a_workspace_of_non_finite_fill_terms_is_not_annihilated(a_fill, out, c_format):
    A, B, C = masked_operands(a_fill)
    fa = csr(fill=a_fill)
    ta, tb, tc = Tensor.from_numpy(A, fa), Tensor.from_numpy(B, csr()), Tensor.from_numpy(C, parse_format(c_format))
    want, fill = evaluate(MASKED, A=ta, B=tb, C=tc)
    ofmt = parse_format(out, ndim=2, fill=fill)
    k = lower(MASKED, strategy="lattice", A=ta, B=tb, C=tc, out=ofmt)
    got = k(A=ta, B=tb, C=tc)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(A=ta, B=tb, C=tc).to_numpy(), want)


@pytest.mark.parametrize("a_fill", [-math.inf, math.nan])
def test_a_three_dimensional_masked_product_compiles_and_agrees(a_fill):
    from compiler.format import Format
    from compiler.levels import Dense, Element, SparseCOO, SparseList
    A, B, C = masked_operands(a_fill, nd=3)
    ta = Tensor.from_numpy(A, Format(Dense(Dense(SparseList(Element(a_fill))))))
    tb, tc = Tensor.from_numpy(B, csr()), Tensor.from_numpy(C, Format(SparseCOO(3, Element(0.0))))
    prog = "out[i, j, k] = sum[l](A[i, j, l] * B[l, k]) * C[i, j, k]"
    want, fill = evaluate(prog, A=ta, B=tb, C=tc)
    k = lower(prog, strategy="lattice", checked=True, A=ta, B=tb, C=tc, out=Format(SparseCOO(3, Element(fill))))
    np.testing.assert_array_equal(k(A=ta, B=tb, C=tc).to_numpy(), want)
