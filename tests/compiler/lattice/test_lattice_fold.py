"""Reductions whose fill is not the operator's identity fold the fill in instead of sweeping it.

``max[j](A[i, j])`` over a fill-0 matrix: every missing coordinate contributes 0, so a plain
lattice needs the universe (a dense sweep of ``j``). The lattice is built relative to the
value's fill instead, and the fill is folded in after the loop: once for an idempotent
operator if a coordinate ran no case, ``missing * fill`` for ``+``.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.format import coo, csc, csr, dcsr, dense, sparse_vector
from compiler.levels import Element, SparseList
from compiler.lattice.cfir import CFold, CForall, cfir_walk
from compiler.lattice.cfir_interpreter import interpret_cfir
from compiler.lattice.cfir_builder import build_cfir
from compiler.lattice.plan import Setup
from compiler.notation import parse
from compiler.reference import evaluate
from compiler.testing import check_lowered, random_sparse

MATRIX = {"csr": csr, "csc": csc, "dcsr": dcsr, "coo": coo}


def lattices(k):
    return [s for s in k.trace.steps if s.stage == "lattice"]


def test_max_over_a_fill_0_matrix_iterates_only_the_stored_entries():
    a = np.array([[-1.0, 0.0, -2.0], [0.0, 0.0, 0.0], [-3.0, -4.0, -5.0]])
    A = Tensor.from_numpy(a, csr(), name="A")
    k = check_lowered("s[] = max[i, j](A[i, j])", checked=True, A=A)
    assert k(A=A).to_numpy() == 0.0          # row 0 misses a coordinate: the fill 0 is the max
    src = k.c_source
    assert "j < A1_size" not in src          # no dense sweep of j
    # one flat loop over the entries (automatic fuse + pos), then one fold for every missing coordinate
    assert "for (int64_t pA = A1_pos[0]; pA < A1_pos[A0_size]; pA++)" in src
    assert "int64_t ij_missing = A0_size * A1_size - (A1_pos[A0_size] - A1_pos[0]);" in src
    assert "if (ij_missing > 0) {" in src
    # in SIMD lanes, with a flag for NaN (numpy's max keeps one; OpenMP's would pass it over)
    assert "#pragma omp simd reduction(max:t_ij) reduction(|:t_ij_nan)" in src
    nan = Tensor.from_numpy(np.array([[-1.0, np.nan], [0.0, 2.0]]), csr(), name="A")
    assert np.isnan(k(A=nan).to_numpy())
    cfir = next(s for s in k.trace.steps if s.stage == "cfir").after_text
    assert "fold t_ij max= 0.0 if a coordinate of j ran no case" in cfir
    at_j = lattices(k)[-1]
    assert "neutral 0.0" in at_j.after_text
    assert any(r.rule == "fold-fill" and "the fill 0.0 is not the identity of max" in r.before
               for r in at_j.rewrites)
    # all rows full: no coordinate is missing, the fill takes no part
    full = Tensor.from_numpy(np.array([[-1.0, -2.0], [-3.0, -4.0]]), csr(), name="A")
    assert k(A=full).to_numpy() == -1.0


def test_a_sum_over_a_fill_1_matrix_adds_the_count_of_missing_coordinates():
    a = np.array([[2.0, 1.0, 1.0, 5.0], [1.0, 1.0, 1.0, 1.0]])
    A = Tensor.from_numpy(a, csr(fill=1.0), name="A")
    k = check_lowered("y[i] = A[i, j]", checked=True, A=A)
    np.testing.assert_array_equal(k(A=A).to_numpy(), [9.0, 4.0])
    assert "t_j += (double)j_missing;" in k.c_source     # the fill 1 needs no multiply
    B = Tensor.from_numpy(a, csr(fill=1.0, dtype="int64"), name="A")
    k = check_lowered("y[i] = A[i, j] * 3", A=B)
    assert "t_j += j_missing * 3;" in k.c_source.replace("(int64_t)", "")


def test_a_merge_counts_the_coordinates_where_a_case_ran():
    """Two operands: the coordinates come from a merge, so a counter counts the cases that ran."""
    rng = np.random.default_rng(3)
    A = Tensor.from_numpy(random_sparse((6, 8), 0.3, rng, lo=-4, hi=-1), csr(), name="A")
    B = Tensor.from_numpy(random_sparse((6, 8), 0.3, rng, lo=-4, hi=-1), csr(), name="B")
    k = check_lowered("y[i] = max[j](A[i, j] + B[i, j])", checked=True, A=A, B=B)
    src = k.c_source
    assert "int64_t j_ran = 0;" in src and "j_ran += 1;" in src
    assert "int64_t j_missing = A1_size - j_ran;" in src or "int64_t j_missing = B1_size - j_ran;" in src


def test_a_missing_row_folds_its_whole_row_at_once():
    # DCSR: the rows A does not store run the fold alone (no loop over j at all)
    a = np.zeros((5, 4))
    a[1] = [-1.0, -2.0, -3.0, -4.0]
    A = Tensor.from_numpy(a, dcsr(), name="A")
    k = check_lowered("y[i] = max[j](A[i, j])", checked=True, A=A)
    np.testing.assert_array_equal(k(A=A).to_numpy(), [0.0, -1.0, 0.0, 0.0, 0.0])
    cfir = next(s for s in k.trace.steps if s.stage == "cfir").after_text
    assert "U" in cfir.split("forall j")[0]          # i still sweeps the rows (y is dense over i)
    assert "while j <- U" not in cfir


def test_an_extent_too_large_to_sweep():
    """A vector of 10**12 coordinates with two stored: the fold makes it two steps."""
    n = 10 ** 12
    prog = "s[] = max[i](a[i])"
    spec = {"a": sparse_vector(fill=-1.0)}
    setup = Setup.create(parse(prog), spec)
    cfir = build_cfir(setup.statement, setup)
    forall = next(x for x in cfir_walk(cfir) if isinstance(x, CForall))
    assert isinstance(forall.fold, CFold) and not any(loop.universe for loop in forall.loops)
    stored = np.array([5.0, -3.0])
    a = Tensor(SparseList(Element(-1.0, vals=stored), n, pos=np.array([0, 2]), idx=np.array([3, n - 1])), name="a")
    assert lower(prog, a=a)(a=a).to_numpy() == 5.0
    assert lower("s[] = a[i]", a=a)(a=a).to_numpy() == -(n - 2) + stored.sum()


@pytest.mark.parametrize("fmt", [csr, dcsr, coo])
@pytest.mark.parametrize("prog, fill", [("y[j] = max[i](A[i, j])", 0.0), ("y[j] = A[i, j]", 1.0),
                                        ("y[j] = min[i](A[i, j])", np.nan)])
def test_a_reduction_over_rows_into_columns_folds_per_column(fmt, prog, fill):
    """The column max of a fill-0 CSR matrix: the loop over j counts, per column, the rows
    that stored an entry there; a column that missed a row takes the fill after the loop
    (no sweep of every column of every row)."""
    a = np.array([[-1.0, fill, -2.0, fill], [fill, fill, -5.0, fill], [-3.0, fill, -4.0, 7.0]])
    A = Tensor.from_numpy(a, fmt(fill=fill), name="A")
    k = check_lowered(prog, checked=True, A=A)
    src = k.c_source
    assert "j_ran[j] += 1;" in src and "int64_t i_missing = A0_size - j_ran[j];" in src
    assert "j < A1_size &&" not in src and "while (j < A1_size)" not in src   # no sweep of the columns
    cfir = next(st for st in k.trace.steps if st.stage == "cfir").after_text
    assert "for each j where a coordinate of i ran no case (counted per j)" in cfir
    setup = Setup.create(parse(prog), {"A": A.format})
    np.testing.assert_allclose(interpret_cfir(build_cfir(setup.statement, setup), setup, A=A),
                               evaluate(prog, A=A)[0])


@pytest.mark.parametrize("fmt", ["Dense(Dense(SparseList(Element({f}))))", "Dense(SparseList(SparseList(Element({f}))))",
                                 "csf"])
@pytest.mark.parametrize("prog, fill", [("y[k, j] = max[i](A[k, i, j])", 0.0), ("y[k, j] = A[k, i, j]", 1.0),
                                        ("y[k, j] = min[i](A[k, i, j])", np.nan), ("y[j, k] = max[i](A[k, i, j])", 0.0)])
def test_a_reduction_over_the_middle_mode_folds_per_column_of_each_slice(fmt, prog, fill):
    """A 3-D tensor's max over its middle mode: the loop over j counts, per column, the rows of this k that
    stored an entry there, and the fold after the rows starts each count at zero again for the next k."""
    t = np.array([[[-1.0, fill, -2.0, fill], [fill, fill, -5.0, fill]], [[fill] * 4, [-3.0, fill, -4.0, 7.0]],
                  [[fill, 2.0, fill, fill], [fill, fill, fill, fill]]])
    A = Tensor.from_numpy(t, fmt.format(f=fill) if "{f}" in fmt else fmt, fill=fill, name="A")
    k = check_lowered(prog, checked=True, A=A)
    src = k.c_source
    assert "j_ran[j] += 1;" in src and "int64_t i_missing = A1_size - j_ran[j];" in src and "j_ran[j] = 0;" in src, src
    assert "while (j < A2_size)" not in src   # no sweep of the columns
    cfir = next(st for st in k.trace.steps if st.stage == "cfir").after_text
    assert "for each j where a coordinate of i ran no case (counted per j, from zero again)" in cfir
    setup = Setup.create(parse(prog), {"A": A.format})
    np.testing.assert_allclose(interpret_cfir(build_cfir(setup.statement, setup), setup, A=A),
                               evaluate(prog, A=A)[0])


def test_the_cfir_interpreter_folds_too():
    a = np.array([[3.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 7.0, 2.0]])
    A = Tensor.from_numpy(a, csr(fill=2.0), name="A")
    for prog in ("s[] = min[i, j](A[i, j])", "y[i] = A[i, j]", "y[j] = max[i](A[i, j])"):
        setup = Setup.create(parse(prog), {"A": A.format})
        got = interpret_cfir(build_cfir(setup.statement, setup), setup, A=A)
        np.testing.assert_allclose(got, evaluate(prog, A=A)[0])


@pytest.mark.parametrize("schedule", [(("split", "j", "j0", "j1", 2),), (("parallelize", "i"),)])
def test_no_fold_where_the_schedule_changes_the_loop(schedule):
    """A split or a parallel loop over the reduced index iterates it differently: the sweep stays."""
    a = np.array([[1.0, 0.0, -2.0], [0.0, 0.0, 0.0]])
    A = Tensor.from_numpy(a, dense(2) if "split" in str(schedule) else csr(), name="A")
    prog = "s[] = max[i, j](A[i, j])" if "split" in str(schedule) else "y[i] = max[j](A[i, j])"
    k = check_lowered(prog, schedule, A=A)
    assert "fold" not in next(s for s in k.trace.steps if s.stage == "cfir").after_text.split("forall j")[0]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["s[] = max[i, j](A[i, j])", "s[] = min[i, j](A[i, j])", "s[] = A[i, j]",
                        "y[i] = max[j](A[i, j])", "y[i] = A[i, j]", "y[j] = min[i](A[i, j])",
                        "y[i] = max[j](A[i, j] * B[i, j])", "y[i] = A[i, j] + B[i, j]",
                        "s[] = any(A[i, j] > B[i, j])", "y[i] = all(A[i, j] != 0)"]),
       st.sampled_from(list(MATRIX)), st.sampled_from(list(MATRIX)),
       st.sampled_from([0.0, 1.0, -2.0, np.inf, -np.inf, np.nan]), st.sampled_from([0.0, 1.0, -2.0]),
       st.integers(0, 6), st.integers(0, 6), st.sampled_from([0.0, 0.3, 1.0]), st.integers(0, 2 ** 16),
       st.sampled_from(["dense", "sparse", "sparse, two-phase"]))
def test_property_folded_reductions_equal_the_oracle(prog, fa, fb, fill_a, fill_b, m, n, density, seed, out):
    rng = np.random.default_rng(seed)
    if "B" in prog and "csc" in (fa, fb):
        fa = fb = "csc"   # both stored column by column
        if "+" in prog:   # the sum splits into one loop nest per term, each over i first
            fa = fb = "csr"
    tensors = {"A": Tensor.from_numpy(random_sparse((m, n), density, rng, fill=fill_a, lo=-3, hi=4, empty=(0,) if m else ()),
                                      MATRIX[fa](fill=fill_a), name="A")}
    if "B" in prog:
        tensors["B"] = Tensor.from_numpy(random_sparse((m, n), density, rng, fill=fill_b, lo=-3, hi=4),
                                         MATRIX[fb](fill=fill_b), name="B")
    fmt, options = None, None
    if prog.startswith("y") and out != "dense":   # a sparse vector around the result's fill
        fmt = sparse_vector(fill=float(evaluate(prog, **tensors)[1]))
        options = {"assembly": "two-phase"} if "two-phase" in out else None
    check_lowered(prog, out=fmt, options=options, checked=seed % 2 == 0, **tensors)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["s[] = sum[i](b[i])", "s[] = max[i](b[i])", "s[] = min[i](b[i])", "s[] = any(b[i])",
                        "s[] = all(b[i])"]),
       st.sampled_from([("bool", True), ("bool", False), ("int64", 0), ("int64", 3), ("int32", -2),
                        ("float32", 1.5)]),
       st.integers(0, 9), st.sampled_from([0.0, 0.4, 1.0]), st.integers(0, 2 ** 16))
def test_property_folds_in_every_dtype(prog, dtype_fill, n, density, seed):
    """The fold multiplies in the operator's result dtype: a sum of bools counts in int64."""
    dtype, fill = dtype_fill
    rng = np.random.default_rng(seed)
    v = rng.integers(-3, 4, n).astype(dtype)
    v[rng.random(n) >= density] = fill
    b = Tensor.from_numpy(v, sparse_vector(fill=fill, dtype=dtype), name="b")
    check_lowered(prog, checked=seed % 2 == 0, b=b)


@pytest.mark.parametrize("prog", ["y[i] = max[j](A[i, j])", "y[i] = sum[j](A[i, j])"])
def test_a_row_reduction_over_fused_positions_is_refused_not_folded_into_one_row(prog):
    # one fold after the flat loop serves a scalar; a row's result would get every row's missing fill
    from compiler.errors import StrategyError
    from compiler.lattice import Schedule
    A = Tensor.from_numpy(np.array([[4.0, 2.0, 1.0], [2.0, 2.0, 2.0]]), csr(fill=2.0), name="A")
    with pytest.raises(StrategyError, match=r"pos\(f, fp, A\) does not apply: the loop over j must follow A's "
                                            r"positions alone"):
        lower(prog, A=A, options={"schedule": Schedule().fuse("i", "j", "f").pos("f", "fp", "A")})


@pytest.mark.parametrize("prog, dtype, fill", [("s = max[i, j](A[i, j] * 0)", "int64", 2),
                                               ("s = sum[i, j](A[i, j] * 0)", "int64", 0),
                                               ("s = all[i, j](A[i, j] or true)", "bool", False),
                                               ("s = any[i, j](A[i, j] and false)", "bool", False)])
def test_a_scalar_that_ignores_the_entries_gets_no_flat_loop(prog, dtype, fill):
    # no positions to follow: the automatic fuse + pos would be refused (it was, as an error)
    a = np.array([[1, 2, 2], [2, 3, 2]]).astype(dtype)
    A = Tensor.from_numpy(a, csr(fill=np.asarray(fill).astype(dtype).item(), dtype=dtype), name="A")
    k = check_lowered(prog, checked=True, A=A)
    assert not any("automatic" in s.note for s in k.trace.steps if s.stage.startswith("schedule:"))


@pytest.mark.parametrize("program", ["y[i] = A[i, j] * A[i, j]", "s[] = A[i, j] * 3", "y[i] = max[j](A[i, j] + A[i, j])"])
def test_a_float32_fill_is_folded_as_float32_arithmetic_rounds_it(program):
    # 0.1f * 0.1f in float32 is not the float64 product of the same numbers: the fold's fill (and
    # the lattice's check of it) must round as the kernel does
    A = Tensor.from_numpy(np.full((2, 3), 0.1, dtype="float32"), "csr", fill=float(np.float32(0.1)))
    want, fill = evaluate(program, A=A)
    got = lower(program, A=A)(A=A)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-6)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("program", ["y[j] = max[i](A[i, j] * sum[k](B[j] * A[j, k]))",
                                     "y[j] = max[i](A[i, j] * sum[k](B[j] + A[j, k]))",
                                     "y[j] = sum[i](A[i, j] * max[k](B[j] - A[j, k]))"])
@pytest.mark.parametrize("fill", [np.nan, np.inf])
def test_a_temporary_computed_from_a_non_finite_fill_is_not_annihilated(program, fill):
    # B[1] is B's fill; the inner reduction's value there is not finite, and 0 * it is NaN:
    # A's fill 0 must not annihilate it (stored values are assumed finite; fills are not)
    A = Tensor.from_numpy(np.array([[0.0, 0.0], [3.0, 0.0]]), "csc", fill=0.0)
    B = Tensor.from_numpy(np.array([2.0, fill]), "sparse", fill=fill)
    want, _ = evaluate(program, A=A, B=B)
    k = lower(program, A=A, B=B)
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(A=A, B=B).to_numpy(), want)
