"""Two-phase assembly (assemble the structure, then compute the values) against one-pass assembly."""

from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, evaluate, lower
from compiler.errors import StrategyError
from compiler.format import coo, csf, csr, dcsr, dense, parse_format, sparse_vector
from compiler.lattice import Schedule
from compiler.testing import assert_canonical, assert_same_storage, check_lowered, random_sparse
from tests.compiler.lattice.output_cases import assembled_natively, native_result, row_kept

rand = partial(random_sparse, lo=-3, hi=4)

TWO = {"assembly": "two-phase"}


def both(prog, out, **tensors):
    """Lower one-pass and two-phase; both must agree with the oracle and with each other, array by array."""
    k2 = check_lowered(prog, out=out, options=TWO, **tensors)
    r2 = k2(**tensors)
    assert_same_storage(r2, lower(prog, **tensors, **{prog.split("[")[0]: out})(**tensors))
    assert not np.any(r2.vals == r2.fill), "a value equal to the fill was stored"
    assert "phase 1, assemble" in k2.c_source and "phase 2, compute" in k2.c_source
    return k2, r2


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("prog", ["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, j] * B[i, j]",
                                  "C[i, j] = A[i, k] * B[k, j]"])
def test_matrices(prog, seed):
    rng = np.random.default_rng(seed)
    m, n = (7, 9) if "k" not in prog else (7, 7)
    A = Tensor.from_numpy(rand((m, n), 0.35, rng, empty=(0, 4)), csr(), name="A")
    B = Tensor.from_numpy(rand((m, n) if "k" not in prog else (n, 6), 0.35, rng, empty=(2,)), csr(), name="B")
    both(prog, csr(), A=A, B=B)


def test_cancellation_is_dropped_after_the_compute_phase():
    b = Tensor.from_numpy(np.array([1.0, 2.0, 0.0, 3.0]), sparse_vector(), name="b")
    c = Tensor.from_numpy(np.array([-1.0, 0.0, 5.0, -3.0]), sparse_vector(), name="c")
    k, r = both("a[i] = b[i] + c[i]", sparse_vector(), b=b, c=c)
    assert r.levels[0].idx.tolist() == [1, 2]
    assert "drop the entries whose value is the fill" in k.c_source


def test_spgemm_cancellation_and_empty():
    A = Tensor.from_numpy(np.array([[1.0, 1.0], [0.0, 0.0]]), csr(), name="A")
    B = Tensor.from_numpy(np.array([[2.0, 3.0], [-2.0, 1.0]]), csr(), name="B")
    _, r = both("C[i, j] = A[i, k] * B[k, j]", csr(), A=A, B=B)
    assert r.levels[1].pos.tolist() == [0, 1, 1]
    Z = Tensor.from_numpy(np.zeros((3, 4)), csr(), name="A")
    both("C[i, j] = A[i, j] * B[i, j]", csr(), A=Z, B=Tensor.from_numpy(np.ones((3, 4)), csr(), name="B"))


def test_nonzero_fill():
    rng = np.random.default_rng(9)
    a = rand((5, 6), 0.5, rng)
    A = Tensor.from_numpy(a + 1.0, csr(fill=1.0), name="A")
    B = Tensor.from_numpy(rand((5, 6), 0.5, rng) + 1.0, csr(fill=1.0), name="B")
    both("C[i, j] = A[i, j] * B[i, j]", csr(fill=1.0), A=A, B=B)


def test_with_a_schedule():
    rng = np.random.default_rng(10)
    A = Tensor.from_numpy(rand((9, 7), 0.4, rng), csr(), name="A")
    B = Tensor.from_numpy(rand((9, 7), 0.4, rng), csr(), name="B")
    k = lower("C[i, j] = A[i, j] + B[i, j]", A=A, B=B, C=csr(),
              options={**TWO, "schedule": [("split", "i", "i0", "i1", 4)]})
    want, _ = evaluate("C[i, j] = A[i, j] + B[i, j]", A=A, B=B)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), want)


def test_refusals():
    A = Tensor.from_numpy(np.eye(3), csr(), name="A")
    with pytest.raises(StrategyError, match="the output C is dense, so it has no structure"):
        lower("C[i, j] = A[i, j] * B[i, j]", A=A, B=A, C=dense(2), options=TWO)


# -- DCSR and COO outputs --------------------------------------------------------------------

MATRIX_PROGRAMS = {"add": ("C[i, j] = A[i, j] + B[i, j]", lambda a, b: a + b),
                   "mul": ("C[i, j] = A[i, j] * B[i, j]", lambda a, b: a.multiply(b)),
                   "spgemm": ("C[i, j] = A[i, k] * B[k, j]", lambda a, b: a @ b)}
OUTPUTS = {"dcsr": dcsr, "coo": coo}


def check_against_scipy(r, ref, out_name):
    """The output's arrays are scipy's (explicit zeros dropped, sorted), level by level."""
    ref = sp.csr_matrix(ref)
    ref.eliminate_zeros()
    ref.sort_indices()
    rows = np.repeat(np.arange(ref.shape[0]), np.diff(ref.indptr))
    if out_name == "csr":
        np.testing.assert_array_equal(r.levels[1].pos, ref.indptr)
        np.testing.assert_array_equal(r.levels[1].idx, ref.indices)
    elif out_name == "coo":
        arrays = r.levels[0].arrays()
        np.testing.assert_array_equal(arrays["pos"], [0, ref.nnz])
        np.testing.assert_array_equal(arrays["idx0"], rows)
        np.testing.assert_array_equal(arrays["idx1"], ref.indices)
    else:
        nonempty = np.flatnonzero(np.diff(ref.indptr))
        np.testing.assert_array_equal(r.levels[0].pos, [0, len(nonempty)])
        np.testing.assert_array_equal(r.levels[0].idx, nonempty)
        np.testing.assert_array_equal(r.levels[1].pos, np.concatenate([[0], ref.indptr[nonempty + 1]]))
        np.testing.assert_array_equal(r.levels[1].idx, ref.indices)
    np.testing.assert_allclose(r.vals, ref.data)


@pytest.mark.parametrize("out_name", OUTPUTS)
@pytest.mark.parametrize("what", MATRIX_PROGRAMS)
@pytest.mark.parametrize("seed", range(3))
def test_dcsr_and_coo_outputs(out_name, what, seed):
    prog, ref = MATRIX_PROGRAMS[what]
    rng = np.random.default_rng(100 + seed)
    m, n = (7, 9) if what != "spgemm" else (7, 7)
    a = rand((m, n), 0.35, rng, empty=(0, 4))
    b = rand((m, n) if what != "spgemm" else (n, 6), 0.35, rng, empty=(2,))
    if what == "add":
        b[3] = -a[3]    # a row that cancels: assembled in phase 1, dropped with its row coordinate
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k, r = both(prog, OUTPUTS[out_name](), A=A, B=B)
    check_against_scipy(r, ref(sp.csr_matrix(a), sp.csr_matrix(b)), out_name)


@pytest.mark.parametrize("out_name", OUTPUTS)
@pytest.mark.parametrize("case", ["empty", "all-fill", "cancels", "full", "no-rows"])
def test_dcsr_and_coo_edge_cases(out_name, case):
    shape = (0, 4) if case == "no-rows" else (3, 4)
    a = np.zeros(shape) if case in ("empty", "no-rows") else np.arange(1.0, 13.0).reshape(shape)
    b = -a if case == "cancels" else np.ones(shape) if case == "full" else a.copy()
    if case == "all-fill":   # every product is the fill: phase 1 assembles 12 entries, all dropped
        b = np.zeros(shape)
        a_fmt, b_fmt = dense(2), dense(2)
    else:
        a_fmt, b_fmt = csr(), csr()
    A, B = Tensor.from_numpy(a, a_fmt, name="A"), Tensor.from_numpy(b, b_fmt, name="B")
    prog = "C[i, j] = A[i, j] * B[i, j]" if case == "all-fill" else "C[i, j] = A[i, j] + B[i, j]"
    k, r = both(prog, OUTPUTS[out_name](), A=A, B=B)
    want = a * b if case == "all-fill" else a + b
    check_against_scipy(r, want, out_name)
    if case in ("empty", "all-fill", "cancels", "no-rows"):
        assert not r.vals.size
    if case == "full":
        assert len(r.vals) == 12


def test_dcsr_drops_rows_and_keeps_arrays_consistent():
    # row 1 cancels entirely and row 2 partly: level 0 loses row 1, level 1's positions close the gap
    a = np.array([[1.0, 0, 2], [3, 4, 0], [0, 5, 6]])
    b = np.array([[0.0, 1, 0], [-3, -4, 0], [0, -5, 1]])
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k, r = both("C[i, j] = A[i, j] + B[i, j]", dcsr(), A=A, B=B)
    assert r.levels[0].idx.tolist() == [0, 2] and r.levels[1].pos.tolist() == [0, 3, 4]
    assert r.levels[1].idx.tolist() == [0, 1, 2, 2] and r.vals.tolist() == [1, 1, 2, 7]
    assert "then the entries above whose segment became empty" in k.c_source


def test_csf_output():
    rng = np.random.default_rng(7)
    a, b = rand((3, 4, 5), 0.3, rng, empty=(1,)), rand((3, 4, 5), 0.3, rng)
    b[2, 1] = -a[2, 1]
    A, B = Tensor.from_numpy(a, csf(3), name="A"), Tensor.from_numpy(b, csf(3), name="B")
    both("C[i, j, k] = A[i, j, k] + B[i, j, k]", csf(3), A=A, B=B)


def test_coo_three_modes():
    rng = np.random.default_rng(8)
    a, b = rand((3, 4, 5), 0.3, rng), rand((3, 4, 5), 0.3, rng)
    A, B = Tensor.from_numpy(a, csf(3), name="A"), Tensor.from_numpy(b, csf(3), name="B")
    _, r = both("C[i, j, k] = A[i, j, k] * B[i, j, k]", coo(3), A=A, B=B)
    want = a * b
    got = np.zeros_like(want)
    lv = r.levels[0].arrays()
    got[lv["idx0"], lv["idx1"], lv["idx2"]] = r.vals
    np.testing.assert_array_equal(got, want)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 6), st.integers(0, 6), st.floats(0.0, 1.0), st.integers(0, 2 ** 16),
       st.sampled_from(list(OUTPUTS)), st.sampled_from(["add", "mul"]))
def test_property_two_phase_equals_one_pass(m, n, density, seed, out_name, what):
    prog, ref = MATRIX_PROGRAMS[what]
    rng = np.random.default_rng(seed)
    a, b = rand((m, n), density, rng), rand((m, n), density, rng)
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    _, r = both(prog, OUTPUTS[out_name](), A=A, B=B)
    check_against_scipy(r, ref(sp.csr_matrix(a), sp.csr_matrix(b)), out_name)


def test_unknown_assembly():
    A = Tensor.from_numpy(np.eye(3), csr(), name="A")
    with pytest.raises(StrategyError, match="'one-pass' or 'two-phase'"):
        lower("C[i, j] = A[i, j] * B[i, j]", A=A, B=A, C=csr(), options={"assembly": "three"})


@pytest.mark.parametrize("out_name", ["csr", "dcsr", "coo"])
def test_spgemm_compute_phase_reads_the_assembled_coordinates(out_name):
    # phase 1 sorted each row's workspace list and stored it; phase 2 reads the coordinates
    # back from the output instead of sorting again (rows of every length: rank sort, merge, scan)
    rng = np.random.default_rng(12)
    a, b = rand((9, 30), 0.3, rng, empty=(2,)), rand((30, 200), 0.05, rng)
    a[5] = 1.0      # a long row: more than 64 coordinates, merged from its runs
    b[:, 7] = 2.0   # a column every row reaches
    out = {"csr": csr, "dcsr": dcsr, "coo": coo}[out_name]()
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k, r = both("C[i, j] = A[i, k] * B[k, j]", out, A=A, B=B)
    src = k.c_source
    assert src.count("by rank") == 1 and "instead of sorting w_list again" in src
    # (a CSR output's phase 2 drops the fill as it stores: it reads where phase 1 stored, qC1,
    # and stores where the kept entries end, pC1)
    read = {"csr": "C1_idx[qC1]", "dcsr": "C1_idx[pC1]", "coo": "C0_idx1[pC0]"}[out_name]
    assert f"int64_t j = {read};" in src
    assert ("drop the entries whose value is the fill" in src) == (out_name != "csr")
    check_against_scipy(r, sp.csr_matrix(a) @ sp.csr_matrix(b), out_name)


@pytest.mark.parametrize("program", ["C[i, j] = A[i, k] * B[k, j]", "C[i, j] = A[i, j] + B[i, j]",
                                     "C[i, j] = A[i, j] - B[i, j]", "C[i, j] = A[i, j] * B[i, j]"])
def test_a_csr_outputs_compute_phase_drops_entries_that_cancel_to_the_fill(program):
    # entries that cancel to the fill (0.0) are dropped by phase 2 as it stores: rows of every
    # kind (all cancel, some cancel, none, empty) keep the one-pass kernel's arrays
    a = np.array([[1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [3.0, -1.0, 4.0, 0.0], [0.0, 5.0, 0.0, 6.0]])
    b = np.array([[-1.0, -2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [3.0, 1.0, -4.0, 0.0], [0.0, 0.0, 0.0, 6.0]])
    if program.startswith("C[i, j] = A[i, j] - "):
        b = a * np.array([[1.0], [1.0], [0.0], [1.0]])   # rows 0 and 3 cancel, row 2 does not
    if "A[i, k]" in program:   # (A B cancels at (2, 0): 3 - 3; and at (3, 1): 30 - 30)
        b = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 6.0, 0.0, 0.0], [-0.75, 0.0, 1.0, 3.0],
                      [1.0, -5.0, 0.0, 0.0]])
    if program.endswith("* B[i, j]"):   # (a product underflows to 0.0)
        a[0, 0], b[0, 0] = 1e-200, 1e-200
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    two = lower(program, A=A, B=B, C=csr(), options={"assembly": "two-phase"})
    assert "drop the entries whose value is the fill" not in two.c_source
    got, one = two(A=A, B=B), lower(program, A=A, B=B, C=csr())(A=A, B=B)
    want, _ = evaluate(program, A=a, B=b)
    np.testing.assert_array_equal(got.to_numpy(), want)
    assert not np.any(got.vals == 0.0) and got.levels[1].pos[-1] == np.count_nonzero(want)
    assert_same_storage(got, one)


@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("factor", [1, 2, 3])
@pytest.mark.parametrize("fmt", ["csr", "coo", "dcsr"])
def test_a_split_over_a_scattered_output_sorts_its_list_again(fmt, factor, direction):
    """Phase 2 reads the coordinates phase 1 stored only where it walks the workspace's list in
    one loop; a split's blocks walk the list itself, so it is sorted again (the values came out
    in the order they were first met, found by fuzzing)."""
    from compiler.format import sparse_vector
    from compiler.lattice import Schedule
    from compiler.testing import check_lowered
    A = Tensor.from_numpy(np.array([[0.0, 0.0, 2.0, 0.0], [1.0, 0.0, 0.0, 3.0], [0.0, 4.0, 5.0, 0.0]]), fmt,
                          name="A")
    check_lowered("y[j] = sum[i](A[i, j])", Schedule().split("j", "j0", "j1", factor, direction),
                  out=sparse_vector(), options={"assembly": "two-phase"}, checked=True, A=A)


@pytest.mark.parametrize("seed", range(4))
def test_csr_spgemm_compute_phase_takes_its_row_counts_from_phase_1(seed):
    # a CSR output's phase 1 left each row's count at pos[i + 1]: phase 2 scatters values only,
    # without marking or listing the coordinates again, and resets them as it reads them
    rng = np.random.default_rng(seed)
    a, b = rand((12, 25), 0.25, rng, empty=(3,)), rand((25, 40), 0.15, rng)
    b[:, 3] = -b[:, 3]   # (cancellations: entries phase 1 listed that phase 2 finds 0)
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k, r = both("C[i, j] = A[i, k] * B[k, j]", csr(), A=A, B=B)
    phase2 = k.c_source.split("phase 2, compute")[1].split("C1_pos[q + 1] += C1_pos[q]")[0]
    assert "int64_t w_n = C1_pos[i + 1];" in phase2 and "w_set" not in phase2 and "w_list[" not in phase2
    check_against_scipy(r, sp.csr_matrix(a) @ sp.csr_matrix(b), "csr")
    # a fill other than 0, and a term beside the product (both checked against the oracle)
    S = Tensor.from_numpy(b[:, :25], csr(), name="S")
    both("D[i, j] = A[i, k] * S[k, j] + A[i, j]", csr(), A=A, S=S)
    both("C[i, j] = A[i, k] * B[k, j]", csr(fill=0.0), A=A, B=B)


def test_spgemm_phase_one_reserves_room_for_its_scatters_once():
    # phase 1 appends coordinates: counted first (B's row lengths), its arrays are allocated once,
    # not doubled (and copied) as the rows come; an upper bound, so entries that meet are fine
    rng = np.random.default_rng(5)
    a, b = rand((40, 30), 0.2, rng, empty=(3,)), rand((30, 50), 0.2, rng)
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k = lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C=csr(), options={"assembly": "two-phase"})
    src = k.c_source
    assert 0 <= src.index("at most one entry per scatter into the workspace") < src.index("phase 1, assemble")
    assert "C reserves one entry per scatter" in k.trace.steps[[s.stage for s in k.trace.steps].index("lower")].note
    assert_same_storage(k(A=A, B=B), lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C=csr())(A=A, B=B))


@pytest.mark.parametrize("seed", range(4))
def test_rows_that_merge_move_phase_twos_read_position_too(seed):
    # found by fuzzing: where D's row is present, phase 2 merges it with the workspace (sorting the
    # list again); where it is not, it reads the coordinates phase 1 stored. A row of the first kind
    # must move the read position past its coordinates too, or the next rows read an earlier row's
    rng = np.random.default_rng(seed)
    a, b = rand((12, 9), 0.3, rng, empty=(4,)), rand((9, 10), 0.3, rng)
    d = rand((12, 10), 0.3, rng) * (rng.random((12, 1)) < 0.5)    # about half of D's rows empty
    d[0] = [1.0] + [0.0] * 9
    tensors = dict(D=Tensor.from_numpy(d, dcsr(), name="D"), A=Tensor.from_numpy(a, csr(), name="A"),
                   B=Tensor.from_numpy(b, csr(), name="B"))
    prog = "C[i, j] = D[i, j] + A[i, k] * B[k, j]"
    k = lower(prog, **tensors, C=csr(), options={"assembly": "two-phase"})
    assert "instead of sorting w_list again" in k.c_source and "qC1_next" in k.c_source
    got = k(**tensors)
    np.testing.assert_allclose(got.to_numpy(), evaluate(prog, **tensors)[0])
    assert_same_storage(got, lower(prog, **tensors, C=csr())(**tensors))
    np.testing.assert_allclose(k.interpret(**tensors).to_numpy(), got.to_numpy())


# -- outputs two-phase assembly builds natively: SparseList(Dense), byte maps, hashes ----------------

#: the formats a sequential two-phase kernel assembles itself (was: a stand-in, converted after each
#: call), and what the lowering step says of each; the last three: a hash's entries holding blocks of
#: slots, and a byte map's slots or a hash's keys under a SparseList that drops its rows that cancel
NATIVE = {"SparseList(Dense)": ("SparseList(Dense(Element({f})))", "block of slots"),
          "Dense(SparseByteMap)": ("Dense(SparseByteMap(Element({f})))", "marked and stored in its slot"),
          "Dense(SparseHash)": ("Dense(SparseHash(Element({f})))", "its table is built after the loops"),
          "SparseHash(Dense)": ("SparseHash(Dense(Element({f})))", "block of slots"),
          "SparseList(SparseByteMap)": ("SparseList(SparseByteMap(Element({f})))", "marked and stored in its slot"),
          "SparseList(SparseHash)": ("SparseList(SparseHash(Element({f})))", "its table is built after the loops")}

NATIVE_EXPRS = {"sum": "C[i, j] = A[i, j] + B[i, j]", "product": "C[i, j] = A[i, j] * B[i, j]",
                "spgemm": "C[i, j] = A[i, k] * B[k, j]"}


def native_two_phase(expr, out, checked=False, **tensors):
    """Lower ``expr`` two-phase into the format ``out`` names (at the oracle's fill): built natively,
    equal to the oracle in Tensor.from_numpy's storage, and so is the IR interpreter's result."""
    want, out_fill = evaluate(expr, **tensors)
    template, how = NATIVE[out]
    fmt = parse_format(template.format(f=float(out_fill)))
    k = lower(expr, strategy="lattice", C=fmt, options=TWO, checked=checked, **tensors)
    got = native_result(k, fmt, want, how, tensors)
    assert "phase 1, assemble" in k.c_source and "phase 2, compute" in k.c_source
    return k, got


@pytest.mark.parametrize("fill", [0.0, np.nan, np.inf])
@pytest.mark.parametrize("out", NATIVE)
def test_two_phase_builds_a_block_or_byte_map_output_natively(out, fill):
    rng = np.random.default_rng(3)
    a, b = rand((6, 7), 0.4, rng, fill=fill, empty=(1,)), rand((6, 7), 0.4, rng, fill=fill, empty=(1, 4))
    if fill == 0.0:
        b[2] = -a[2]   # (a row phase 1 assembles and phase 2 finds all fill: dropped)
    A, B = Tensor.from_numpy(a, csr(fill=fill), name="A"), Tensor.from_numpy(b, csr(fill=fill), name="B")
    k, got = native_two_phase("C[i, j] = A[i, j] + B[i, j]", out, checked=fill == 0.0, A=A, B=B)
    if fill == 0.0:   # (row 2 cancels: no block kept for it, no entry in its fiber)
        assert not row_kept(got, 2) and row_kept(got, 3)


@pytest.mark.parametrize("out", NATIVE)
@pytest.mark.parametrize("case", ["empty", "all-fill"])
def test_two_phase_native_outputs_of_empty_and_all_fill_results(out, case):
    # all-fill: dense operands, so phase 1 assembles every coordinate and phase 2 drops them all
    a = np.zeros((3, 4)) if case == "empty" else np.arange(1.0, 13.0).reshape(3, 4)
    b = np.zeros((3, 4))
    fmt = csr() if case == "empty" else dense(2)
    A, B = Tensor.from_numpy(a, fmt, name="A"), Tensor.from_numpy(b, fmt, name="B")
    k, got = native_two_phase("C[i, j] = A[i, j] * B[i, j]", out, A=A, B=B)
    assert not any(row_kept(got, row) for row in range(3))
    assert "drop the entries whose value is the fill" in k.c_source


def test_two_phase_blocks_under_several_levels():
    """A block of two Dense levels under a SparseList, and blocks under a SparseList under a
    SparseList (whose rows that became empty are dropped too)."""
    rng = np.random.default_rng(4)
    t, u = rand((3, 4, 5), 0.3, rng), rand((3, 4, 5), 0.3, rng)
    u[1] = -t[1]
    T, U = Tensor.from_numpy(t, csf(3), name="T"), Tensor.from_numpy(u, csf(3), name="U")
    for fmt in ("SparseList(Dense(Dense(Element(0.0))))", "SparseList(SparseList(Dense(Element(0.0))))"):
        out = parse_format(fmt)
        k = lower("C[i, j, k] = T[i, j, k] + U[i, j, k]", strategy="lattice", C=out, options=TWO, T=T, U=U)
        assert_canonical(k(T=T, U=U), t + u)
        assembled_natively(k, out)


def test_two_phase_byte_map_or_hash_under_lists_in_three_modes():
    """A byte map under two SparseLists and a hash under Dense rows' SparseList: the compaction drops
    the lists' entries whose fiber cancels (a whole row, and one fiber of a row), and the slots move
    (the keys are computed again) to follow their parent's new position."""
    rng = np.random.default_rng(4)
    t, u = rand((4, 5, 6), 0.3, rng), rand((4, 5, 6), 0.3, rng)
    u[1], u[2, 3] = -t[1], -t[2, 3]
    T, U = Tensor.from_numpy(t, csf(3), name="T"), Tensor.from_numpy(u, csf(3), name="U")
    for fmt, how in (("SparseList(SparseList(SparseByteMap(Element(0.0))))", "marked and stored in its slot"),
                     ("Dense(SparseList(SparseHash(Element(0.0))))", "its table is built after the loops")):
        out = parse_format(fmt)
        k = lower("C[i, j, k] = T[i, j, k] + U[i, j, k]", strategy="lattice", C=out, options=TWO, T=T, U=U)
        native_result(k, out, t + u, how, {"T": T, "U": U})


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 5), st.integers(0, 5), st.floats(0.0, 1.0), st.integers(0, 2 ** 16),
       st.sampled_from(list(NATIVE)), st.sampled_from(list(NATIVE_EXPRS)), st.sampled_from([0.0, np.nan, np.inf]))
@example(4, 5, 0.6, 11, "SparseHash(Dense)", "sum", 0.0)   # (the new native outputs, each drawn at least once)
@example(5, 4, 0.5, 12, "SparseList(SparseByteMap)", "spgemm", np.nan)
@example(3, 5, 0.7, 13, "SparseList(SparseHash)", "product", np.inf)
def test_property_two_phase_native_outputs(m, n, density, seed, out, what, fill):
    rng = np.random.default_rng(seed)
    a = rand((m, n), density, rng, fill=fill)
    b = rand((m, n) if what != "spgemm" else (n, m), density, rng, fill=fill)
    if what == "sum" and m and fill == 0.0:
        b[0] = -a[0]   # (a row that cancels)
    A, B = Tensor.from_numpy(a, csr(fill=fill), name="A"), Tensor.from_numpy(b, csr(fill=fill), name="B")
    native_two_phase(NATIVE_EXPRS[what], out, A=A, B=B)


@pytest.mark.parametrize("fill", [0.0, np.nan])
@pytest.mark.parametrize("level", ["SparseByteMap", "SparseHash"])
def test_two_phase_builds_a_byte_map_or_hash_vector_natively(level, fill):
    # the output's only level (its fiber's one segment): entries that cancel to the fill dropped
    b = Tensor.from_numpy(np.array([1.0, 2.0, fill, 3.0, -0.0, fill]), sparse_vector(fill=fill), name="b")
    c = Tensor.from_numpy(np.array([-1.0, fill, 5.0, -3.0, 0.0, fill]), sparse_vector(fill=fill), name="c")
    want, out_fill = evaluate("a[i] = b[i] + c[i]", b=b, c=c)
    fmt = parse_format(f"{level}(Element({float(out_fill)}))")
    k = lower("a[i] = b[i] + c[i]", strategy="lattice", a=fmt, options=TWO, b=b, c=c)
    got = k(b=b, c=c)
    assert_canonical(got, want)
    np.testing.assert_array_equal(k.interpret(b=b, c=c).to_numpy(), want)
    assert not k.lowered.conversions and "drop the entries whose value is the fill" in k.c_source


#: schedules whose loops run in the output's storage order: a two-phase kernel builds the formats of
#: NATIVE itself under them (they were built as a stand-in, converted after each call)
SCHEDULED = {"split-sum": (Schedule().split("i", "i0", "i1", 4), "sum", [0.0, np.inf]),
             "precompute-spgemm": (Schedule().reorder("i", "k", "j").precompute("j"), "spgemm", [np.nan])}


@pytest.mark.parametrize("out", NATIVE)
@pytest.mark.parametrize("case", SCHEDULED)
def test_two_phase_builds_native_outputs_under_a_schedule(case, out):
    schedule, what, fills = SCHEDULED[case]
    for fill in fills:
        rng = np.random.default_rng(8)
        a = rand((9, 7), 0.35, rng, fill=fill, empty=(2,))
        b = rand((9, 7) if what == "sum" else (7, 8), 0.35, rng, fill=fill, empty=(5,))
        if what == "sum" and fill == 0.0:
            b[3] = -a[3]   # (a row phase 1 assembles and phase 2 finds all fill)
        A, B = Tensor.from_numpy(a, csr(fill=fill), name="A"), Tensor.from_numpy(b, csr(fill=fill), name="B")
        want, out_fill = evaluate(NATIVE_EXPRS[what], A=A, B=B)
        template, how = NATIVE[out]
        fmt = parse_format(template.format(f=float(out_fill)))
        k = lower(NATIVE_EXPRS[what], strategy="lattice", C=fmt, options={**TWO, "schedule": schedule},
                  checked=fill == 0.0, A=A, B=B)
        native_result(k, fmt, want, how, {"A": A, "B": B})
        assert any(s.stage.startswith("schedule:") for s in k.trace.steps)


def test_two_phase_loops_out_of_the_outputs_order_keep_the_stand_in():
    # the loops run j before i (A read as CSC): the output is built in that order and converted
    # after the call
    A = Tensor.from_numpy(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]), csr(), name="A")
    fmt = parse_format("SparseList(Dense(Element(0.0)))")
    k = lower("C[i, j] = A[i, j] * 2", strategy="lattice", C=fmt, options={**TWO, "order": ["j", "i"]}, A=A)
    assert [t for t, *_ in k.lowered.conversions] == ["A", "C"]
    assert any(s.stage == "convert" and s.note.startswith("C is ") for s in k.trace.steps)
    assert_canonical(k(A=A), A.to_numpy() * 2)


@pytest.mark.parametrize("options", [TWO, {"schedule": Schedule().parallelize("i")}], ids=["one-thread", "threads"])
@pytest.mark.parametrize("prog, fill", [("y[i] = A[i, j] * x[j]", 0.0), ("y[i] = z[i] * sum[j](A[i, j])", 1.0)])
def test_phase_one_computes_no_value_it_never_reads(prog, fill, options):
    """Phase 1 places the entries only: a row's reduction over j (SpMV into a sparse vector, a sum
    whose fill 1 is folded in) is computed in phase 2 alone. Phase 1 summed ``t_j`` too, over the
    whole row, and never read it."""
    rng = np.random.default_rng(3)
    a = rand((7, 5), 0.4, rng, fill=fill, empty=(2,))
    a[4] = -a[4] if fill == 0.0 else a[4]
    tensors = {"A": Tensor.from_numpy(a, csr(fill=fill), name="A"), "x": np.arange(1.0, 6.0),
               "z": Tensor.from_numpy(rand((7,), 0.5, rng, fill=fill), dense(1, fill=fill), name="z")}
    tensors = {n: t for n, t in tensors.items() if f"{n}[" in prog}
    k = check_lowered(prog, out=sparse_vector(fill=evaluate(prog, **tensors)[1]), options=options, **tensors)
    phase1, phase2 = k.c_source.split("// phase 1")[1].split("// phase 2", 1)
    assert "t_j" not in phase1 and "A_val" not in phase1
    assert "t_j +=" in phase2
