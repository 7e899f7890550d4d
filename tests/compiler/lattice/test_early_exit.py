"""The lattice strategy breaks out of a scalar reduction's loops once it holds its annihilator
(compiler/lattice/early_exit.py), where that is exact for what the values may hold."""

import numpy as np
import pytest

import compiler as ss
from compiler.levels import Dense, Element, SparseList
from tests.compiler.early_exit_cases import (MATRIX_ANNIHILATING, MATRIX_REDUCTIONS, VECTOR_REDUCTIONS,
                                             annihilating_operands, breaks, interpret_truncated,
                                             over_annihilating_matrices, reference, truncated)

inf, nan = np.inf, np.nan


def lattice(program, **tensors):
    return ss.lower(program, strategy="lattice", **tensors)


def early_exit_note(k) -> str:
    return next((s.note for s in k.trace.steps if s.stage == "early-exit"), "")


@pytest.mark.parametrize("program, vals", VECTOR_REDUCTIONS)
def test_a_scalar_reduction_stops_at_its_annihilator(program, vals):
    v = truncated(vals, 6)
    want = reference(program, vals)
    k = lattice(program, v=v)
    assert k.interpret(v=v).to_numpy() == want        # never read past the annihilator
    assert breaks(k) and "break;" in k.c_source
    assert "stops its loops early" in early_exit_note(k)


@pytest.mark.parametrize("program, annihilator", MATRIX_REDUCTIONS)
def test_the_loops_over_a_sparse_matrix_stop_at_the_annihilator(program, annihilator):
    # row 0 holds the annihilator second: nothing after it is read (the values array ends there)
    M = ss.Tensor(Dense(SparseList(Element(0.0, vals=np.array([2.0, annihilator])), pos=np.array([0, 3, 4, 6]),
                                   idx=np.array([0, 1, 2, 1, 0, 2]), size=3), size=3), check=False)
    k = lattice(program, M=M)
    assert interpret_truncated(k, M=M).to_numpy() == annihilator and breaks(k)
    with pytest.raises(ss.KernelError, match="out of bounds"):   # a sum reads on
        interpret_truncated(lattice("s[] = sum[i, j](M[i, j])", M=M), M=M)


def test_each_row_of_a_row_wise_reduction_stops_on_its_own():
    M = ss.Tensor.from_numpy(np.array([[2.0, inf, 9.0], [0, 1.0, 0], [inf, 0, 1.0]]), "csr")
    k = lattice("y[i] = max[j](M[i, j] + 1)", M=M)
    np.testing.assert_array_equal(k(M=M).to_numpy(), [inf, 2.0, inf])
    np.testing.assert_array_equal(k.interpret(M=M).to_numpy(), [inf, 2.0, inf])
    assert breaks(k) and "t_j stops its loops early: max stops at its annihilator inf" in early_exit_note(k)


def test_no_early_exit_where_the_annihilator_is_not_exact_or_never_reached():
    v = ss.Tensor.from_numpy(np.array([2.0, 0.0, nan]), "dense")
    k = lattice("s[] = prod[i](v[i])", v=v)
    assert np.isnan(k(v=v).to_numpy()) and not breaks(k)
    assert "does not stop early: a value may hold NaN, and 0 * NaN is not 0" in early_exit_note(k)
    w = np.array([2.0, 0.0, 1.0])
    k = lattice("s[] = min[i](w[i])", w=w)
    assert not breaks(k) and "the values hold no -inf, so min never reaches its annihilator -inf" in early_exit_note(k)
    u = np.array([-inf, nan, 1.0])
    k = lattice("s[] = min[i](u[i])", u=u)
    assert np.isnan(k(u=u).to_numpy()) and not breaks(k)
    k = lattice("s[] = min[i](n[i])", n=np.array([3, -2, 5]))
    assert not breaks(k) and "the extreme of int64" in early_exit_note(k)
    k = lattice("s[] = sum[i](w[i])", w=w)
    assert not breaks(k) and not early_exit_note(k)


def test_a_parallel_loop_does_not_break_but_the_loops_inside_it_do():
    # (OpenMP refuses a break out of a parallel for: each thread's row loop stops instead)
    M = ss.Tensor.from_numpy(np.array([[0, 3.0, 0, 1.0], [1.0, 0, 0, 0], [0, 0, 0, 5.0]]), "csr")
    program = "s[] = any[i, j](M[i, j] > 2)"
    k = ss.lower(program, strategy="lattice", M=M, options={"schedule": [("parallelize", "i")]})
    assert bool(k(M=M).to_numpy()) and breaks(k)
    lines = k.c_source.splitlines()
    at = next(n for n, line in enumerate(lines) if "omp parallel for" in line)
    assert "break;" not in "\n".join(lines[at:at + 4]) and "break;" in "\n".join(lines[at + 4:])


@over_annihilating_matrices(MATRIX_ANNIHILATING + ["s[] = max[i](sum[j](M[i, j]))"])
def test_reductions_that_may_stop_early_agree_with_the_oracle(program, fmt, fill, density, rows, special, seed):
    tensors = annihilating_operands(fmt, fill, density, rows, special, seed)
    want, _ = ss.evaluate(program, **tensors)
    k = lattice(program, **tensors)
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)
    np.testing.assert_allclose(k.interpret(**tensors).to_numpy(), want)
