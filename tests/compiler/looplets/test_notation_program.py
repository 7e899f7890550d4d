"""Index notation under looplets with reductions anywhere in the right-hand side (each hoisted into a
scalar temporary), and reductions that stop at their annihilator: against the dense oracle and the
IR interpreter (compiler/looplets/notation_program.py)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.levels import Dense, Element, SparseByteMap, SparseList
from compiler.testing import random_sparse
from tests.compiler.early_exit_cases import (FILLS, MATRIX_ANNIHILATING, MATRIX_FORMATS, MATRIX_REDUCTIONS,
                                             VECTOR_REDUCTIONS, annihilating_operands, breaks, interpret_truncated,
                                             over_annihilating_matrices, reference, truncated)

inf, nan = np.inf, np.nan


def check(program, out=None, **tensors):
    """The looplets kernel of ``program`` (its output in format ``out``), compiled and interpreted,
    against the oracle."""
    want, _ = ss.evaluate(program, **tensors)
    given = {} if out is None else {str(program).split("[")[0].strip(): out}
    k = ss.lower(program, strategy="looplets", **tensors, **given)
    np.testing.assert_allclose(k(**tensors).to_numpy(), want, err_msg=f"{program} compiled")
    np.testing.assert_allclose(k.interpret(**tensors).to_numpy(), want, err_msg=f"{program} interpreted")
    return k


A = ss.Tensor.from_numpy(np.array([[0, 2.0, 0, 1.0], [0, 0, 0, 0], [1.0, 0, 3.0, -1.0]]), "csr")
x, b, z = np.array([1.0, 2.0, 3.0, -1.0]), np.array([1.0, -1.0, 4.0]), np.array([0.5, 0.0, 2.0])

# TACO's tests write these throughout; the looplets refused them ("reductions at the top ... split the statement")
TACO_FORMS = [
    "r[i] = b[i] - A[i, j] * x[j]",                                  # a residual
    "y[i] = b[i] + A[i, j] * x[j]",
    "y[i] = 2.0 * sum[j](A[i, j] * x[j])",                             # a scaled SpMV
    "y[i] = 2.0 * sum[j](A[i, j] * x[j]) + 3.0 * z[i]",                # alpha A x + beta z
    "s[] = sum[i](b[i] * sum[j](A[i, j]))",                           # nested reductions
    "s[] = max[i](sum[j](A[i, j] * x[j]))",                           # the max of a sum
    "y[i] += max[j](A[i, j]) + b[i]",                                 # an update of another operator
    "y[i] = sum[j](A[i, j]) * sum[j](A[i, j] * x[j])",                # one index, two reductions
    "y[i] = b[i] * sum[j](x[j])",                                     # a reduction of no free index
    "C[i, k] = A[i, k] * sum[j](A[i, j])",                            # hoisted above the loop over k
    "s[] = sum[i](b[i]) * sum[j](x[j])",
]


@pytest.mark.parametrize("program", TACO_FORMS)
def test_a_reduction_inside_the_right_hand_side_is_lowered(program):
    check(program, A=A, x=x, b=b, z=z)


def test_a_reduction_is_computed_into_a_scalar_where_its_free_indices_are_bound():
    k = check("C[i, k] = A[i, k] * sum[j](A[i, j])", out="csr", A=A)
    step = next(s for s in k.trace.steps if s.stage == "hoist-reductions")
    assert step.note == "t[] = sum[j](A[i, j]) (in the loop over i; Scalar(0.0))"
    assert str(step.after).splitlines()[:4] == ["for i = _", "  t .= 0.0", "  for j = _", "    t[] += A[i, j]"]
    # a reduction of no free index is computed once, before every loop
    k = check("y[i] = b[i] * sum[j](x[j])", b=b, x=x)
    step = next(s for s in k.trace.steps if s.stage == "hoist-reductions")
    assert str(step.after).startswith("t .= 0.0\nfor j = _\n  t[] += x[j]\nfor i = _"), step.after
    assert step.note.endswith("(before the loops; Scalar(0.0))")
    assert "double t" in k.c_source and "C" not in k.c_source


def test_a_temporary_may_hold_what_its_reduction_makes_not_only_what_the_inputs_hold():
    # inf + -inf is NaN, though neither input holds NaN: min(-inf, t) is not -inf where b holds its fill
    M = ss.Tensor.from_numpy(np.array([[inf, -inf, 0], [1.0, 0, 2.0]]), "csr")
    v = ss.Tensor.from_numpy(np.array([-inf, -inf]), "sparse", fill=-inf)
    k = check("y[i] = min(v[i], sum[j](M[i, j]))", M=M, v=v)
    np.testing.assert_array_equal(k(M=M, v=v).to_numpy(), [nan, -inf])
    facts = next(s for s in k.trace.steps if s.stage == "value-facts")
    assert "t: may hold NaN, +inf, -inf" in facts.note


def test_a_reduction_may_bind_an_index_a_loop_around_it_binds_too():
    # (the parser refuses it in text; a tree built in Python may): sum[i] binds its own i, and the
    # loop inside names it apart, i_2, as the oracle reads it
    from compiler.algebra import lookup
    from compiler.notation.ast import Access, Assign, Call, Reduce
    stmt = Assign(Access("Y", ["i", "j"]), None, Call(lookup("+"), (
        Access("b", ["i"]), Reduce(lookup("+"), ["i"], Access("A", ["i", "j"])))))
    k = check(stmt, A=A, b=b)
    step = next(s for s in k.trace.steps if s.stage == "hoist-reductions")
    assert "for i_2 = _" in str(step.after) and "t[] += A[i_2, j]" in str(step.after)


PROGRAMS = TACO_FORMS[:4] + ["y[i] = b[i] * max[j](A[i, j])", "y[i] = min(b[i], sum[j](A[i, j]))",
                             "s[] = min[i](b[i] + sum[j](A[i, j] * x[j]))", "y[i] = b[i] * prod[j](A[i, j])",
                             "y[j] = x[j] + A[i, j] * z[i]",   # (a transposed residual: two loop nests)
                             "y[j] = x[j] - A[i, j] * z[i]", "y[j] = A[i, j] * z[i] - x[j]"]   # (and differences)


@settings(max_examples=17, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=st.sampled_from(PROGRAMS), fmt=st.sampled_from(MATRIX_FORMATS), fill=st.sampled_from(FILLS),
       bfill=st.sampled_from(FILLS), density=st.sampled_from([0.0, 0.3, 1.0]), rows=st.integers(0, 4),
       special=st.sampled_from([None, inf, -inf, nan]), seed=st.integers(0, 3))
@example(program=PROGRAMS[5], fmt="csr", fill=inf, bfill=-inf, density=1.0, rows=2, special=-inf, seed=0)
@example(program=PROGRAMS[0], fmt="csr", fill=0.0, bfill=0.0, density=0.3, rows=0, special=None, seed=0)
def test_reductions_anywhere_agree_with_the_oracle(program, fmt, fill, bfill, density, rows, special, seed):
    rng = np.random.default_rng(seed)
    a = random_sparse((rows, 4), density, rng, fill=fill, lo=-2, hi=3)
    if special is not None and rows:
        a[rows - 1, 0] = special
    bv = random_sparse((rows,), density, rng, fill=bfill, lo=-2, hi=3)
    tensors = dict(A=ss.Tensor.from_numpy(a, fmt, fill=fill), b=ss.Tensor.from_numpy(bv, "sparse", fill=bfill),
                   x=rng.integers(-2, 3, 4).astype(float), z=rng.integers(-2, 3, rows).astype(float))
    check(program, **tensors)


@pytest.mark.parametrize("b_format", ["dense", "sparse"])
def test_a_transposed_residual_adds_its_terms_into_the_output_in_the_order_of_a_rows(b_format):
    # y[j] = b[j] + A[i, j] * x[i], A CSR: a scalar per y[j] searched every row of A for j (n * m
    # searches); now y starts at b and A's rows add into it, as scipy's b + A.T @ x does
    bt = ss.Tensor.from_numpy(np.array([1.0, 0.0, -2.0, 0.0]), b_format)
    k = check("y[j] = b[j] + A[i, j] * x[i]", A=A, b=bt, x=np.array([1.0, 2.0, -1.0]))
    assert "seek" not in k.c_source and not k.trace.find("hoist-reductions")
    step = k.trace.find("residual")[0]
    assert str(step.after).splitlines() == ["for j = _", "  y[j] = b[j]", "for i = _", "  for j = _",
                                            "    y[j] += A[i, j] * x[i]"]
    assert "reading 0 input accesses out of their storage order (1 with one scalar per element of y" in step.note


@pytest.mark.parametrize("strategy", ["looplets", "lattice"])
@pytest.mark.parametrize("program, start, term", [
    ("r[j] = b[j] - A[i, j] * x[i]", "r[j] = b[j]", "r[j] += -(A[i, j] * x[i])"),   # a residual, A CSR
    ("r[j] = A[i, j] * x[i] - b[j]", "r[j] = -b[j]", "r[j] += A[i, j] * x[i]"),
])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_a_residual_written_as_a_difference_adds_its_terms_in_the_order_of_a_rows(program, start, term, fill,
                                                                                   strategy):
    # (b - A x was one scalar per r[j], each searching every row of A for j; now as b + A x: r starts at
    # b and each term of a row of A adds into it negated. With a NaN fill every r[j] meets a NaN)
    a = A.to_numpy()
    At = ss.Tensor.from_numpy(np.where(a == 0, fill, a), "csr", fill=fill)
    tensors = dict(A=At, b=np.array([1.0, 0.0, -2.0, inf]), x=np.array([1.0, 2.0, -1.0]))
    want, _ = ss.evaluate(program, **tensors)
    k = ss.lower(program, strategy=strategy, **tensors)
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)
    if strategy == "lattice":
        return
    np.testing.assert_allclose(k.interpret(**tensors).to_numpy(), want)
    assert "seek" not in k.c_source and not k.trace.find("hoist-reductions")
    step = k.trace.find("residual")[0]
    assert str(step.after).splitlines() == ["for j = _", f"  {start}", "for i = _", "  for j = _", f"    {term}"]
    assert "reading 0 input accesses out of their storage order (1 with one scalar per element of r" in step.note


def test_a_residual_into_a_byte_map_output_takes_the_two_nests():
    # (a byte map is written at random, as a dense vector: r starts at b, A's rows add into it)
    out = SparseByteMap(Element(0.0, dtype="float64"))
    k = check("r[j] = b[j] - A[i, j] * x[i]", out, A=A, b=np.array([1.0, 0.0, -2.0, 0.0]), x=np.array([1.0, 2.0, -1.0]))
    assert k.trace.find("residual") and not k.trace.find("hoist-reductions")


@pytest.mark.parametrize("program, fmt, out", [
    ("y[j] = b[j] + A[i, j] * x[i]", "csc", None),          # the scalar per y[j] walks A's columns already
    ("y[j] = b[j] + A[i, j] * x[i]", "csr", "sparse"),      # a sparse y is appended in order, not added into
    ("y[j] = b[j] - A[i, j] * x[i]", "csr", "sparse"),      # (a difference likewise)
    ("y[j] = b[j] * sum[i](A[i, j] * x[i])", "csr", None),  # (*) is not the sum's operator
])
def test_a_residual_keeps_one_scalar_per_element_where_two_nests_do_not_apply_or_gain(program, fmt, out):
    At = ss.Tensor.from_numpy(A.to_numpy(), fmt)
    k = check(program, out, A=At, b=np.array([1.0, 0.0, -2.0, 0.0]), x=np.array([1.0, 2.0, -1.0]))
    assert not k.trace.find("residual") and k.trace.find("hoist-reductions")


# -- early exit: a reduction by an operator with an annihilator stops once it holds it


@pytest.mark.parametrize("program, vals", VECTOR_REDUCTIONS)
def test_a_reduction_stops_at_its_annihilator(program, vals):
    v = truncated(vals, 6)
    want = reference(program, vals)
    k = ss.lower(program, strategy="looplets", v=v)
    assert k.interpret(v=v).to_numpy() == want        # never read past the annihilator
    assert breaks(k) and "break;" in k.c_source
    step = next(s for s in k.trace.steps if s.stage == "hoist-reductions")
    assert "ShortCircuitScalar" in step.note and "stops at its annihilator" in step.note
    assert any(s.stage == "lower:ShortCircuit" for s in k.trace.steps)


@pytest.mark.parametrize("program, annihilator", MATRIX_REDUCTIONS)
def test_a_reduction_over_a_sparse_matrix_stops_at_its_annihilator(program, annihilator):
    # (an `any` of a comparison is no test of it: C's || does not read the right side once true)
    M = ss.Tensor(Dense(SparseList(Element(0.0, vals=np.array([2.0, annihilator])), pos=np.array([0, 2, 3, 6]),
                                   idx=np.array([0, 2, 1, 0, 1, 2]), size=3), size=3), check=False)
    k = ss.lower(program, strategy="looplets", M=M)
    assert interpret_truncated(k, M=M).to_numpy() == annihilator and breaks(k)
    # a sum runs on, past what the values array holds
    with pytest.raises(ss.KernelError, match="out of bounds"):
        interpret_truncated(ss.lower("s[] = sum[i, j](M[i, j])", strategy="looplets", M=M), M=M)


def test_no_early_exit_where_the_annihilator_is_not_exact_or_never_reached():
    # 0 * NaN is NaN: a product of values that may hold NaN or inf runs to the end
    v = ss.Tensor.from_numpy(np.array([2.0, 0.0, nan]), "dense")
    k = check("s[] = prod[i](v[i])", v=v)
    assert np.isnan(k(v=v).to_numpy()) and not breaks(k)
    # a float min of finite values never reaches -inf: no check on every iteration
    w = np.array([2.0, 0.0, 1.0])
    k = check("s[] = min[i](w[i])", w=w)
    assert not breaks(k)
    # min(-inf, NaN) is NaN, as numpy's: a min whose values may hold NaN runs to the end
    u = np.array([-inf, nan, 1.0])
    k = check("s[] = min[i](u[i])", u=u)
    assert np.isnan(k(u=u).to_numpy()) and not breaks(k)
    # ... and an integer min stops only at the integer extreme, which it does not look for
    assert not breaks(check("s[] = min[i](n[i])", n=np.array([3, -2, 5])))


@over_annihilating_matrices(MATRIX_ANNIHILATING)
def test_reductions_that_may_stop_early_agree_with_the_oracle(program, fmt, fill, density, rows, special, seed):
    check(program, **annihilating_operands(fmt, fill, density, rows, special, seed))


def test_compile_program_lowers_index_notation_for_its_tensors():
    # (it made the loop program first, for no tensors: float64 temporaries that may hold what any input may)
    from compiler.looplets import compile_program
    M = ss.Tensor.from_numpy(np.array([[inf, -inf, 0], [1.0, 0, 2.0]]), "csr")
    v = ss.Tensor.from_numpy(np.array([-inf, -inf]), "sparse", fill=-inf)
    k = compile_program("y[i] = min(v[i], sum[j](M[i, j]))", M=M, v=v)
    np.testing.assert_array_equal(k(M=M, v=v).to_numpy(), [nan, -inf])
    N = ss.Tensor.from_numpy(np.array([[0, 2, 0], [1, 0, 3]], dtype=np.int32), "csr")
    c = np.array([1, 2], dtype=np.int32)
    k = compile_program("y[i] = c[i] * sum[j](N[i, j])", N=N, c=c)
    np.testing.assert_array_equal(k(N=N, c=c).to_numpy(), [2, 8])
    assert "Scalar(0))" in next(s.note for s in k.trace.steps if s.stage == "hoist-reductions")
