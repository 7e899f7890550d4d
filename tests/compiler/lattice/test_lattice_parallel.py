"""parallelize(i) with workspaces and sparse outputs: per-thread workspaces, two-phase assembly on threads."""

from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, evaluate, lower, user_function
from compiler.backend import build
from compiler.errors import StrategyError
from compiler.format import coo, csc, csr, dcsr, dense, sparse_vector
from compiler.lattice import Schedule
from compiler.testing import assert_same_storage, check_lowered, random_sparse

rand = partial(random_sparse, lo=-3, hi=4)
PAR = Schedule().parallelize("i")

pytestmark = pytest.mark.skipif(build.openmp_support() is not None, reason="the C compiler has no OpenMP")


def on_threads(prog, out, schedule=PAR, **tensors):
    """Lower ``prog`` one-pass (sequential) and with ``schedule`` (threads); the threaded kernel,
    its checked build and its IR interpreter must agree with the oracle, and its arrays with
    the sequential kernel's, element for element."""
    par = check_lowered(prog, schedule, out, checked=True, **tensors)
    r2 = par(**tensors)
    assert_same_storage(r2, lower(prog, **tensors, **{prog.split("[")[0]: out})(**tensors))
    assert "#pragma omp parallel for" in par.c_source
    return par, r2


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("prog", ["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, j] * B[i, j]",
                                  "C[i, j] = A[i, k] * B[k, j]"])
def test_csr_outputs_on_threads(prog, seed):
    rng = np.random.default_rng(seed)
    m, n = 40, 30
    A = Tensor.from_numpy(rand((m, n), 0.2, rng, empty=(0, 7)), csr(), name="A")
    B = Tensor.from_numpy(rand((m, n) if "k" not in prog else (n, 25), 0.2, rng, empty=(3,)), csr(), name="B")
    k, _ = on_threads(prog, csr(), A=A, B=B)
    src = k.c_source
    assert "phase 1, count" in src and "phase 2, compute" in src
    assert "int64_t pC1_row = C1_pos[i];" in src
    lower_step = next(s for s in k.trace.steps if s.stage == "lower")
    if "k" in prog:   # Gustavson: a row's scatters into its workspace bound its entries
        assert "each row counts the scatters into its workspace (a bound of its entries)" in lower_step.note
    elif "*" in prog:   # an intersection: the shorter row bounds it, no merge in phase 1
        assert "each row counts the entries of its shortest fiber (a bound of its entries)" in lower_step.note
        phase1 = src[src.index("phase 1, count"):src.index("phase 2, compute")]
        assert "C1_pos[i + 1] = nB1 < nA1 ? nB1 : nA1;" in phase1 and "while" not in phase1
    else:   # a union merges in phase 1 to count exactly
        assert "each row counts its entries" in lower_step.note and "C1_pos[i + 1] = nC1;" in src


def test_spgemm_workspaces_are_per_thread():
    rng = np.random.default_rng(4)
    A = Tensor.from_numpy(rand((60, 50), 0.1, rng), csr(), name="A")
    B = Tensor.from_numpy(rand((50, 70), 0.1, rng), csr(), name="B")
    k, _ = on_threads("C[i, j] = A[i, k] * B[k, j]", csr(), A=A, B=B)
    src = k.c_source
    assert "double *w_all = alloc_array(length_product(B1_size, thread_count())" in src
    assert "double *restrict w = w_all + thread_id() * B1_size;" in src
    step = next(s for s in k.trace.steps if s.stage == "privatize")
    assert "own w, w_set, w_list" in step.note
    # phase 1 only counts each row's products (B's row lengths): no workspace, no sort, no coordinates
    phase1 = src[src.index("phase 1, count"):src.index("phase 2, compute")]
    assert "nC1 += B1_pos[k + 1] - B1_pos[k];" in phase1
    assert "w_set[" not in phase1 and "restrict w_set" not in phase1
    assert "sort" not in phase1 and "C1_idx[" not in phase1
    # phase 2 records where each row's entries end; the rest of the row's room is a gap, closed after
    assert "C1_end[i] = pC1_row;" in src
    assert "pC1_row_rest" not in src


def test_phase_2_skips_the_fill_and_the_rows_close_the_gaps():
    """On threads, phase 2 keeps an entry only if it is not the fill and records where each
    row's entries end, in one array the threads share (each writes its own row's element);
    a sequential pass then moves the rows down over the gaps."""
    # row 0 cancels to one entry, row 1 cancels entirely, rows 2 and 3 keep theirs and move down
    A = Tensor.from_numpy(np.array([[1.0, 2.0, 0.0], [4.0, 0.0, 0.0], [0.0, 5.0, 6.0], [7.0, 0.0, 8.0]]),
                          csr(), name="A")
    B = Tensor.from_numpy(np.array([[-1.0, 3.0, 0.0], [-4.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
                          csr(), name="B")
    k, r = on_threads("C[i, j] = A[i, j] + B[i, j]", csr(), A=A, B=B)
    assert r.levels[1].pos.tolist() == [0, 1, 1, 3, 5]
    assert r.levels[1].idx.tolist() == [1, 1, 2, 0, 2]
    assert r.vals.tolist() == [5.0, 6.0, 6.0, 7.0, 9.0]
    src = k.c_source
    assert "pC1_row += (int64_t)(vC != 0.0);" in src
    assert "C1_end[i] = pC1_row;" in src
    # one array for all threads: privatize made no part per thread of it
    assert "int64_t *C1_end = alloc_array(C0_size, sizeof *C1_end, false);" in src
    assert "C1_end_all" not in src
    assert "each row's entries end at C1_end[row]: they move down to follow the previous row's" in src
    ir = next(s for s in k.trace.steps if s.stage == "lower").after_text
    assert "int64 C1_end[C0_size];  // one array for all threads" in ir


def test_a_row_whose_scatters_have_no_count_counts_its_entries():
    """The masked SpGEMM scatters inside a merge of B's and D's rows: a merge's trips are no
    difference of bounds, so phase 1 counts each row's entries through the workspace instead."""
    rng = np.random.default_rng(9)
    A = Tensor.from_numpy(rand((30, 20), 0.2, rng, empty=(2,)), csr(), name="A")
    B = Tensor.from_numpy(rand((20, 25), 0.2, rng), csr(), name="B")
    D = Tensor.from_numpy(rand((30, 25), 0.4, rng), csr(), name="D")
    k, _ = on_threads("C[i, j] = A[i, k] * B[k, j] * D[i, j]", csr(), A=A, B=B, D=D)
    assert "each row counts its entries" in k.trace.find("lower")[0].note
    phase1 = k.c_source[k.c_source.index("phase 1, count"):k.c_source.index("phase 2, compute")]
    assert "w_set[j] = true;" in phase1 and "pC1_row_rest" not in k.c_source


def test_against_scipy_on_a_larger_matrix():
    G = sp.random(3000, 2000, density=0.004, format="csr", random_state=5)
    H = sp.random(2000, 2500, density=0.004, format="csr", random_state=6)
    Gt, Ht = Tensor.from_scipy(G, csr(), name="A"), Tensor.from_scipy(H, csr(), name="B")
    k = lower("C[i, j] = A[i, k] * B[k, j]", A=Gt, B=Ht, C=csr(), options={"schedule": PAR})
    want = (G @ H).tocsr()
    want.sort_indices()
    for _ in range(3):   # the threads' schedule varies from run to run; the result must not
        got = k(A=Gt, B=Ht)
        np.testing.assert_array_equal(got.levels[1].pos, want.indptr)
        np.testing.assert_array_equal(got.levels[1].idx, want.indices)
        np.testing.assert_allclose(got.vals, want.data)


def test_cancellation_and_empty_rows():
    A = Tensor.from_numpy(np.array([[1.0, 1.0], [0.0, 0.0], [1.0, 0.0]]), csr(), name="A")
    B = Tensor.from_numpy(np.array([[2.0, 3.0], [-2.0, 1.0]]), csr(), name="B")
    _, r = on_threads("C[i, j] = A[i, k] * B[k, j]", csr(), A=A, B=B)
    assert r.levels[1].pos.tolist() == [0, 1, 1, 3]
    assert not np.any(r.vals == 0.0)
    Z = Tensor.from_numpy(np.zeros((3, 4)), csr(), name="A")
    on_threads("C[i, j] = A[i, j] + B[i, j]", csr(), A=Z, B=Tensor.from_numpy(np.zeros((3, 4)), csr(), name="B"))


def test_nonzero_fill_min_plus():
    rng = np.random.default_rng(8)
    inf = np.inf

    tropical = partial(random_sparse, density=0.3, rng=rng, fill=inf, lo=0, hi=9)
    A = Tensor.from_numpy(tropical((12, 10)), csr(fill=inf), name="A")
    B = Tensor.from_numpy(tropical((10, 11)), csr(fill=inf), name="B")
    on_threads("C[i, j] = min[k](A[i, k] + B[k, j])", csr(fill=inf),
               schedule=Schedule().reorder("i", "k", "j").precompute("j").parallelize("i"), A=A, B=B)


def test_a_workspace_into_a_dense_output():
    rng = np.random.default_rng(3)
    A = Tensor.from_numpy(rand((20, 15), 0.2, rng), csr(), name="A")
    B = Tensor.from_numpy(rand((15, 18), 0.2, rng), csr(), name="B")
    s = Schedule().reorder("i", "k", "j").precompute("j", format="dense").parallelize("i")
    k = check_lowered("C[i, j] = A[i, k] * B[k, j]", s, A=A, B=B, checked=True)
    assert "thread_id()" in k.c_source


@pytest.mark.parametrize("schedule", [
    Schedule().split("i", "i0", "i1", 4).parallelize("i0"),
    Schedule().pos("i", "ip", "A").split("ip", "ip0", "ip1", 3).parallelize("ip0"),
], ids=["split", "pos-split"])
@pytest.mark.parametrize("prog", ["C[i, j] = A[i, j] * B[i, j]", "C[i, j] = A[i, k] * B[k, j]"])
def test_blocks_of_rows_on_threads(prog, schedule):
    rng = np.random.default_rng(12)
    a = rand((23, 19), 0.2, rng)
    a[3], a[10:14] = 0, 0
    # a coordinate split blocks a dense row loop (CSR); a position split, A's stored rows (DCSR)
    A = Tensor.from_numpy(a, dcsr() if "pos" in str(schedule) else csr(), name="A")
    B = Tensor.from_numpy(rand((23, 19) if "k" not in prog else (19, 17), 0.2, rng), csr(), name="B")
    k, _ = on_threads(prog, csr(), schedule=schedule, A=A, B=B)
    assert "phase 1, count" in k.c_source


@pytest.mark.parametrize("schedule", [PAR, Schedule().pos("i", "ip", "A").split("ip", "ip0", "ip1", 3).parallelize("ip0")],
                         ids=["rows", "pos-split"])
@pytest.mark.parametrize("prog", ["C[i, j] = A[i, j] * B[i, j]", "C[i, j] = A[i, k] * B[k, j]"])
def test_dcsr_outputs_on_threads(prog, schedule):
    rng = np.random.default_rng(16)
    a = rand((23, 19), 0.2, rng)
    a[3], a[10:14] = 0, 0
    b = rand((23, 19) if "k" not in prog else (19, 17), 0.2, rng)
    if "k" not in prog:
        b[5] = 0   # a stored row of A whose product row is empty: dropped from C's level 0
    A, B = Tensor.from_numpy(a, dcsr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k, r = on_threads(prog, dcsr(), schedule=schedule, A=A, B=B)
    assert "every row is an entry of C's level 0 for now" in k.c_source
    assert 3 not in r.levels[0].idx.tolist()
    # the counts the compaction sets are the ones returned: none is set twice, none starts unread
    assert "C1_pos_len = C0_size + 1;" not in k.c_source and "int64_t pC1 = 0;" not in k.c_source
    assert "if (1 > C1_pos_cap)" not in k.c_source   # the first growth of an empty buffer tests nothing


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 12), st.integers(0, 9), st.floats(0.0, 1.0), st.integers(0, 2 ** 16),
       st.sampled_from(["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, j] * B[i, j]",
                        "C[i, j] = A[i, k] * B[k, j]"]), st.sampled_from(["csr", "dcsr", "coo"]))
def test_property_threads_equal_one_thread(m, n, density, seed, prog, out):
    rng = np.random.default_rng(seed)
    A = Tensor.from_numpy(rand((m, n), density, rng), csr(), name="A")
    B = Tensor.from_numpy(rand((m, n) if "k" not in prog else (n, 7), density, rng), csr(), name="B")
    on_threads(prog, {"csr": csr(), "dcsr": dcsr(), "coo": coo()}[out], A=A, B=B)


# (a CSF output, C[i, j, k] = T[i, j, k] * 2, was refused here: threads fill it now,
# test_lattice_csf_threads)
@pytest.mark.parametrize("prog, formats, options, message", [
    ("C[i, j] = A[i, j] + B[i, j]", {"A": csr(), "B": csr(), "C": csr()}, {"schedule": PAR, "assembly": "one-pass"},
     r"assembly='one-pass' does not apply with parallelize\(i\): .* each row counts its entries first"),
    ("C[i, j] = A[i, j] * B[i, j]", {"A": dcsr(), "B": csr(), "C": csr()},
     {"schedule": Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "f0", "f1", 5).parallelize("f0")},
     r"fuse\(i, j, f\) does not apply: .* C is sparse"),
])
def test_refusals(prog, formats, options, message):
    from compiler.format import parse_format
    formats = {k: parse_format(v, ndim=3) if isinstance(v, str) else v for k, v in formats.items()}
    with pytest.raises(StrategyError, match=message):
        lower(prog, options=options, **formats)


@pytest.mark.parametrize("schedule", [PAR, Schedule().split("i", "i0", "i1", 4).parallelize("i0")],
                         ids=["rows", "blocks-of-rows"])
@pytest.mark.parametrize("prog", ["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, j] * B[i, j]",
                                  "C[i, j] = A[i, k] * B[k, j]", "C[i, j] = A[i, j] - B[i, j]"])
def test_coo_outputs_on_threads(prog, schedule):
    # a COO level has no row positions: the rows count, and start, in a scratch array
    rng = np.random.default_rng(17)
    a = rand((23, 19), 0.2, rng)
    a[3], a[10:14] = 0, 0
    B = Tensor.from_numpy(a.copy() if "-" in prog else rand((23, 19) if "k" not in prog else (19, 17), 0.2, rng),
                          csr(), name="B")
    if "-" in prog:
        B.vals[::2] += 1.0   # half of A - B cancels to the fill: gaps phase 2 leaves, closed after it
    A = Tensor.from_numpy(a, csr(), name="A")
    k, r = on_threads(prog, coo(), schedule=schedule, A=A, B=B)
    assert "C0_start[i + 1] = " in k.c_source and "C0_pos[1] = " in k.c_source
    assert r.nnz == np.count_nonzero(evaluate(prog, A=A, B=B)[0])


@pytest.mark.parametrize("prog, tensors", [
    ("a[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}),
    ("a[i] = b[i] * c[i]", {"b": sparse_vector(), "c": dense(1)}),   # the loop over i iterates b
    ("a[i] = b[i] + c[i]", {"b": dense(1), "c": dense(1)}),
])
@pytest.mark.parametrize("out", [sparse_vector(), coo(1)], ids=["sparse-vector", "coo"])
def test_sparse_vector_outputs_on_threads(prog, tensors, out):
    # a sparse vector's rows are its coordinates, each one entry at most
    rng = np.random.default_rng(18)
    shapes = {"A": (31, 9), "x": (9,), "b": (31,), "c": (31,)}
    made = {}
    for name, fmt in tensors.items():
        v = rand(shapes[name], 0.4, rng)
        if name == "c" and "+" in prog:
            v = -made["b"].to_numpy() * (rng.random(31) < 0.5)   # cancels b at about half its entries
        made[name] = Tensor.from_numpy(v, fmt, name=name)
    k, _ = on_threads(prog, out, **made)
    assert "each coordinate of a counts" in k.c_source


@pytest.mark.parametrize("prog", ["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, k] * B[k, j]"])
def test_int32_indices_and_a_csc_output(prog):
    rng = np.random.default_rng(11)
    A = Tensor.from_numpy(rand((14, 14), 0.25, rng), csr(index_dtype="int32"), name="A")
    B = Tensor.from_numpy(rand((14, 14), 0.25, rng), csr(index_dtype="int32"), name="B")
    on_threads(prog, csr(index_dtype="int32"), A=A, B=B)
    # CSC output: its outer level runs over j, so parallelize(j) fills it column by column
    Ac = Tensor.from_numpy(A.to_numpy(), csc(), name="A")
    Bc = Tensor.from_numpy(B.to_numpy(), csc(), name="B")
    on_threads(prog, csc(), schedule=Schedule().parallelize("j"), A=Ac, B=Bc)


def test_a_sparse_2d_workspace_per_thread():
    rng = np.random.default_rng(15)
    B = Tensor.from_numpy(rand((30, 6, 7), 0.2, rng, empty=(4,)), "csf", name="B")
    c = Tensor.from_numpy(rand((5, 7), 0.5, rng), csr(), name="c")
    s = Schedule().precompute(("j", "l"), "w", format="sparse").parallelize("i")
    k = check_lowered("A[i, j, l] = B[i, j, k] * c[l, k]", s, B=B, c=c, checked=True)
    assert "int64_t *restrict w_list = w_list_all + thread_id() * (B1_size * c0_size);" in k.c_source


# -- a scalar result: each thread reduces into its own copy ----------------------------------------


REDUCTIONS = [("float64", "s = sum[i, j](A[i, j])", "+"), ("float64", "s = sum[i, j](A[i, j] * A[i, j])", "+"),
              ("float64", "s = prod[i, j](A[i, j] + 1)", "*"), ("float64", "s = sum[i](max[j](A[i, j]))", "+"),
              ("int64", "s = max[i, j](A[i, j])", "max"), ("int64", "s = min[i, j](A[i, j])", "min"),
              ("int32", "s = sum[i, j](A[i, j])", "+"), ("bool", "s = any[i, j](A[i, j])", "||"),
              ("bool", "s = all[i, j](A[i, j])", "&&"), ("float64", "s = max[i, j](A[i, j])", "max_keeping_nan"),
              ("float32", "s = min[i, j](A[i, j] - 1)", "min_keeping_nan")]
def fuses(prog):
    """Whether the entries' positions can be fused: no row max between the loops (a fill that is not
    the reduction's identity, as 0 for max or False for all, is folded in after the flat loop)."""
    return "max[j]" not in prog


SCALAR_SCHEDULES = [PAR, Schedule().split("i", "i0", "i1", 3).parallelize("i0"),
                    Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "f0", "f1", 4).parallelize("f0")]


@pytest.mark.parametrize("schedule", SCALAR_SCHEDULES, ids=["rows", "blocks-of-rows", "blocks-of-entries"])
@pytest.mark.parametrize("dtype, prog, op", REDUCTIONS)
def test_a_scalar_reduction_on_threads(dtype, prog, op, schedule):
    rng = np.random.default_rng(8)
    a = rand((40, 30), 0.2, rng)
    arr = a > 0 if dtype == "bool" else a.astype(dtype)
    A = Tensor.from_numpy(arr, csr(dtype=dtype, fill=np.zeros((), dtype).item()), name="A")
    if schedule is SCALAR_SCHEDULES[2] and not fuses(prog):
        with pytest.raises(StrategyError, match=r"fuse\(i, j, f\) does not apply|pos\(f, fp, A\) does not apply"):
            lower(prog, options={"schedule": schedule}, A=A)
        return
    k = check_lowered(prog, schedule, checked=True, A=A)
    assert f"#pragma omp parallel for reduction({op}:t_" in k.c_source
    assert "binary search" not in k.c_source   # no block needs the row of its first entry
    assert k(A=A).to_numpy() == pytest.approx(lower(prog, A=A)(A=A).to_numpy())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 12), st.integers(0, 9), st.sampled_from([0.0, 0.3, 1.0]), st.integers(0, 2 ** 16),
       st.sampled_from(REDUCTIONS), st.sampled_from(range(len(SCALAR_SCHEDULES))))
def test_property_scalar_reductions_on_threads(m, n, density, seed, reduction, schedule):
    dtype, prog, _ = reduction
    rng = np.random.default_rng(seed)
    a = rand((m, n), density, rng)
    if dtype.startswith("float") and a.size and rng.random() < 0.3:
        a[rng.integers(m), rng.integers(n)] = np.nan   # numpy's max keeps it, on any thread
    arr = a > 0 if dtype == "bool" else a.astype(dtype)
    A = Tensor.from_numpy(arr, csr(dtype=dtype, fill=np.zeros((), dtype).item()), name="A")
    if schedule != 2 or fuses(prog):
        check_lowered(prog, SCALAR_SCHEDULES[schedule], checked=True, A=A)


@pytest.mark.parametrize("nan_at", [None, (0, 0), (39, 29), (20, 3)])
@pytest.mark.parametrize("prog", ["s = max[i, j](A[i, j])", "s = min[i, j](A[i, j])", "s = sum[i](max[j](A[i, j]))"])
def test_a_float_max_on_threads_keeps_a_nan(prog, nan_at):
    # OpenMP's own max combines the threads' maxima with >, which passes a NaN over: a reduction
    # declared with a combiner that keeps it, as numpy's max does
    a = rand((40, 30), 0.2, np.random.default_rng(3))
    if nan_at is not None:
        a[nan_at] = np.nan
    A = Tensor.from_numpy(a, csr(), name="A")
    k = check_lowered(prog, PAR, checked=True, A=A)
    assert np.isnan(k(A=A).to_numpy()) == (nan_at is not None)
    declared = "omp declare reduction(" in k.c_source
    assert declared == prog.startswith("s = m")   # a sum of row maxima needs none
    if declared:
        op = prog[4:7]
        assert f"#pragma omp parallel for reduction({op}_keeping_nan:t_" in k.c_source
        assert f"#pragma omp declare reduction({op}_keeping_nan : double : omp_out = isnan(omp_out) || " in k.c_source


@pytest.mark.parametrize("prog, clauses", [
    ("s = sum[i, j](A[i, j]) + sum[i, j](B[i, j])", ["+", "+"]),
    ("s = prod[i, j](A[i, j] + 1) + max[i, j](B[i, j])", ["*", "max_keeping_nan"]),
    ("s = max[i, j](A[i, j]) - min[i, j](B[i, j])", ["max_keeping_nan", "min_keeping_nan"]),
    ("s = max[i, j](A[i, j]) * max[i, j](B[i, j])", ["max_keeping_nan", "max_keeping_nan"]),
])
def test_two_scalar_reductions_on_threads_each_reduce_their_own_accumulator(prog, clauses):
    # both parallel loops had the clause of one accumulator: the other was a race, and a float
    # max's declared reduction was declared twice (a C error)
    rng = np.random.default_rng(4)
    a, b = rand((300, 20), 0.3, rng), rand((300, 20), 0.3, rng)
    b[150, 3] = np.nan
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k = check_lowered(prog, PAR, checked=True, A=A, B=B)
    loops = [line.strip() for line in k.c_source.splitlines() if "#pragma omp parallel for" in line]
    assert sorted(line.split("reduction(")[1].split(":")[0] for line in loops) == sorted(clauses)
    assert len({line.split(":")[1] for line in loops}) == 2   # two accumulators, one per loop
    declared = [line for line in k.c_source.splitlines() if "omp declare reduction" in line]
    assert len(declared) == len(set(c for c in clauses if "nan" in c))


def test_a_reduction_without_the_parallel_loop_runs_on_one_thread():
    rng = np.random.default_rng(5)
    A = Tensor.from_numpy(rand((30, 20), 0.3, rng), csr(), name="A")
    c = Tensor.from_numpy(rand((5,), 0.8, rng) + 0.5, sparse_vector(), name="c")
    k = check_lowered("s = sum[i, j](A[i, j]) + prod[k](c[k])", PAR, checked=True, A=A, c=c)
    assert [line.strip() for line in k.c_source.splitlines() if "omp parallel" in line] == \
        ["#pragma omp parallel for reduction(+:t_ij) schedule(guided)"]
    with pytest.raises(StrategyError, match=r"parallelize\(i\) does not apply: only the outermost loop of the "
                                            r"reduction into s can be parallelized, and its loops run j, i"):
        lower("s = sum[i, j](A[i, j]) + sum[i, j](B[i, j])", options={"schedule": PAR}, A=csr(), B=csc())


def test_a_numpy_split_factor_and_a_loop_with_nothing_to_run_on_threads():
    A = Tensor.from_numpy(np.array([[1, 0, 2], [0, 3, 0]]), dense(2, dtype="int64"), name="A")
    check_lowered("s = sum[i, j](A[i, j])", Schedule().split("i", "i0", "i1", np.int64(2)), A=A)
    # A * 0 leaves the loop over i nothing to run: it was refused as "merges  in a while loop"
    check_lowered("y[i] = sum[j](A[i, j] * 0)", PAR, A=A)


# -- races: threads that update one element of a dense output -------------------------------------
# 'atomics' makes each update atomic; 'copies' gives each thread its own copy of the output


def racing_kernels(races):
    return [
        # SpMV of a CSC matrix by columns: every column adds into y's rows
        ("y[i] = A[i, j] * x[j]", "csc", Schedule().parallelize("j", races=races)),
        # column sums of a CSR matrix by rows
        ("y[j] = A[i, j]", "csr", Schedule().parallelize("i", races=races)),
        # nnz-balanced SpMV: blocks of A's positions, which may start or end inside a row
        ("y[i] = A[i, j] * x[j]", "csr",
         Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "f0", "f1", 16).parallelize("f0", races=races)),
        # no race: each row's sum is assigned once (scalar promotion), so no update needs either
        ("y[i] = A[i, j] * x[j]", "csr", Schedule().split("i", "i0", "i1", 8).parallelize("i0", races=races)),
    ]


ATOMIC_KERNELS = racing_kernels("atomics") + racing_kernels("copies")


# (float32 sums in another order round apart; each kernel in two of the three types, each type with five or six
# kernels: all 24 were 12 s of the suite, most of it GCC's)
RACE_DTYPES = ["float64", "int64", "int32"]
RACING = [(*kernel, RACE_DTYPES[(k + d) % 3]) for k, kernel in enumerate(ATOMIC_KERNELS) for d in (0, 1)]


@pytest.mark.parametrize("prog, fmt, schedule, dtype", RACING, ids=[
    f"{k}-{r}-{RACE_DTYPES[(n + d) % 3]}" for n, (r, k) in enumerate(
        (r, k) for r in ("atomics", "copies") for k in ("csc-spmv", "column-sums", "nnz-balanced", "no-race"))
    for d in (0, 1)])
def test_racing_updates_on_threads(prog, fmt, schedule, dtype):
    rng = np.random.default_rng(21)
    a = rand((300, 200), 0.1, rng)
    a[7], a[:, 9] = 0, 0
    conv = (lambda v: v.astype(dtype)) if dtype.startswith("float") else (lambda v: (v * 10).astype(dtype))
    f = csc(dtype=dtype) if fmt == "csc" else csr(dtype=dtype)
    A = Tensor.from_numpy(conv(a), f, name="A")
    x = Tensor.from_numpy(conv(rng.random(200)), dense(1, dtype=dtype), name="x")
    tensors = {"A": A, "x": x} if "x" in prog else {"A": A}
    k = check_lowered(prog, schedule, checked=True, **tensors)
    lines = [line.strip() for line in k.c_source.splitlines()]
    racing = "i0" not in str(schedule)
    if "atomics" in str(schedule):
        stores = [n for n, line in enumerate(lines) if line.startswith("y_val[")]
        assert [lines[n - 1] == "#pragma omp atomic" for n in stores] == ["+=" in lines[n] for n in stores]
        assert any("+=" in lines[n] for n in stores) == racing
    else:
        assert any(line.startswith("y_copy[") for line in lines) == racing
        assert ("// add the threads' copies of y into y, element by element" in lines) == racing
    want = evaluate(prog, **tensors)[0]
    for _ in range(5):   # a lost update would show in some run
        np.testing.assert_allclose(k(**tensors).to_numpy(), want, rtol=1e-5)


def test_copies_give_the_same_float_sums_at_every_call():
    # with copies, each thread adds its blocks into its own copy: a static split gives each copy
    # the same blocks at every call, so float32 column sums repeat bit for bit (guided did not)
    rng = np.random.default_rng(8)
    a = (rng.standard_normal((2000, 3000)) * (rng.random((2000, 3000)) < 0.01)).astype("float32")
    A = Tensor.from_numpy(a, csr(dtype="float32"), name="A")
    s = Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "f0", "f1", 7).parallelize("f0", races="copies")
    k = lower("y[j] = sum[i](A[i, j])", A=A, options={"schedule": s})
    assert "#pragma omp parallel for schedule(static)" in k.c_source
    runs = [k(A=A).to_numpy() for _ in range(5)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r, runs[0])
    np.testing.assert_allclose(runs[0], a.sum(axis=0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("races", ["atomics", "copies"])
@pytest.mark.parametrize("prog, dtype", [("y[i] += A[i, j] * x[j]", "float64"), ("y[i] |= A[i, j]", "bool"),
                                         ("y[i] max= A[i, j]", "float64")])
def test_an_update_of_rows_each_thread_owns_needs_no_race_strategy(prog, dtype, races):
    # y[i] op= t_j of a given y: each thread updates its own rows (an update by | of a bool was
    # refused as having no atomic form; += got an atomic per row)
    rng = np.random.default_rng(23)
    a = rand((60, 40), 0.2, rng)
    A = Tensor.from_numpy(a.astype(dtype), csr(dtype=dtype), name="A")
    y = Tensor.from_numpy((rng.random(60) < 0.3).astype(dtype), dense(1, dtype=dtype), name="y")
    tensors = {"A": A, "y": y, **({"x": rng.random(40)} if "x[" in prog else {})}
    k = check_lowered(prog, Schedule().parallelize("i", races=races), checked=True, **tensors)
    assert "#pragma omp atomic" not in k.c_source and "y_copy" not in k.c_source


@pytest.mark.parametrize("prog", ["y[j] max= A[i, j]", "y[j] = min[i](A[i, j] - 1)", "y[j] = any[i](A[i, j] > 0.5)"])
def test_copies_combine_updates_without_an_atomic_form(prog):
    rng = np.random.default_rng(22)
    a = rand((200, 30), 0.2, rng)
    a[5, 3] = np.nan   # kept by the combination, as numpy's max keeps it
    A = Tensor.from_numpy(a, csr(), name="A")
    with pytest.raises(StrategyError, match="races='atomics'"):
        lower(prog, options={"schedule": Schedule().parallelize("i", races="atomics")}, A=A)
    check_lowered(prog, Schedule().parallelize("i", races="copies"), checked=True, A=A)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 40), st.integers(0, 30), st.sampled_from([0.0, 0.1, 0.5, 1.0]), st.integers(0, 2 ** 16),
       st.sampled_from(range(len(ATOMIC_KERNELS))))
def test_property_racing_updates(m, n, density, seed, kernel):
    prog, fmt, schedule = ATOMIC_KERNELS[kernel]
    rng = np.random.default_rng(seed)
    A = Tensor.from_numpy(rand((m, n), density, rng), csc() if fmt == "csc" else csr(), name="A")
    x = Tensor.from_numpy(rng.random(n), dense(1), name="x")
    check_lowered(prog, schedule, checked=True, **({"A": A, "x": x} if "x" in prog else {"A": A}))


@pytest.mark.parametrize("prog, formats, schedule, message", [
    ("y[i] = A[i, j] * x[j]", {"A": csc(), "x": dense(1)}, Schedule().parallelize("j"),
     r"iterations of j add into the same elements of y \(a race\); parallelize\(j, races='atomics'\) makes each "
     r"update of y atomic"),
    ("y[j] max= A[i, j]", {"A": csr()}, Schedule().parallelize("i", races="atomics"),
     r"parallelize\(i\) does not apply: with races='atomics' each update of y is atomic, which OpenMP has for \+, "
     r"\*, &, \| and \^ of numbers; y is updated by max \(float64\) in y\[j\] max= A\[i, j\]"),
    ("y[j] = any[i](A[i, j])", {"A": csr(dtype="bool")}, Schedule().parallelize("i", races="atomics"),
     r"y is updated by or \(bool\)"),
    ("C[i, j] = A[i, j] + B[i, j]", {"A": csr(), "B": csr(), "C": csr()}, Schedule().parallelize("i", races="atomics"),
     r"races='atomics' updates the elements of a dense output; the output C is sparse"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().parallelize("i", races="atomic"),
     r"parallelize\(i, atomic\) does not apply: races is one of 'none', 'atomics', 'copies', not 'atomic'"),
    ("C[i, j] = A[i, j] + B[i, j]", {"A": csr(), "B": csr(), "C": csr()}, Schedule().parallelize("i", races="copies"),
     r"races='copies' gives each thread a copy of a dense output; the output C is sparse"),
    ("y[i] = A[i, j] * x[j]", {"A": csc(dtype="float32"), "x": dense(1), "y": dense(1, dtype="float32")},
     Schedule().parallelize("j", races="atomics"),
     r"the update of y by add computes in float64 and rounds to y's float32, which one atomic update cannot do; "
     r"give y a float64 format, or use races='copies'"),
    # (races='copies' of a scalar is its reduction clause, and 'atomics' makes each update atomic:
    # test_schedule_races.py; an update OpenMP has no atomic form of says so)
    ("s = max[i, j](A[i, j])", {"A": csr()}, Schedule().parallelize("i", races="atomics"),
     r"with races='atomics' each update of the result s is atomic, which OpenMP has for \+, \*, &, \| and \^ of "
     r"numbers; s is a reduction by max of float64 values"),
    ("y[j] <<maxu>>= A[i, j]", {"A": csr()}, Schedule().parallelize("i", races="copies"),
     r"with races='copies' each thread's copy of y starts at the identity of its update, and maxu in "
     r"y\[j\] <<maxu>>= A\[i, j\] has none"),
])
def test_racing_refusals(prog, formats, schedule, message):
    maxu = user_function("maxu", lambda a, b: max(a, b), "return x > y ? x : y;", idempotent=True,
                         commutative=True, associative=True)
    with pytest.raises(StrategyError, match=message):
        lower(prog, options={"schedule": schedule}, functions={"maxu": maxu}, **formats)
