"""A max of a workspace whose fill is inf (a min it reduced into, inf where a row stores nothing) and a
value of unknown fill (a sum of fill 1.0 over a row): inf is the max's annihilator, so a row whose
workspace entry is still at its fill is skipped, its sum never computed, by a value test
``w[i] != INFINITY`` (the min of a max, with -inf, likewise). The test was lost when the fill algebra
let an annihilator fire beside an unknown fill (index values): the workspace, a dense operand, then
counted as present everywhere. It must not change a result when the tensors store NaN or inf: a NaN
sum beats the workspace's inf (numpy's maximum propagates NaN), so no row may be skipped then."""

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.format import csc, csr
from compiler.testing import check_lowered

#: (program, the workspace's fill, its value test in the C)
PROGRAMS = {"max": ("y[i] = max(min[j](A[i, j]), sum[j](B[i, j]))", np.inf, "if (w[i] != INFINITY)"),
            "min": ("y[i] = min(max[j](A[i, j]), sum[j](B[i, j]))", -np.inf, "if (w[i] != (-INFINITY))")}


def operands(op, a, b):
    fill = PROGRAMS[op][1]
    return (Tensor.from_numpy(np.asarray(a, float), csc(fill=fill), name="A"),
            Tensor.from_numpy(np.asarray(b, float), csr(fill=1.0), name="B"))


def numpy_result(op, a, b):
    inner, outer = (np.min, np.maximum) if op == "max" else (np.max, np.minimum)
    with np.errstate(invalid="ignore"):   # (inf + -inf in a sum is NaN, as in the kernel)
        return outer(inner(np.asarray(a, float), axis=1), np.sum(np.asarray(b, float), axis=1))


def test_an_untouched_workspace_row_is_skipped_by_a_value_test():
    a = [[1.0, np.inf], [np.inf, np.inf]]
    A, B = operands("max", a, [[2.0, 0.0], [0.0, 0.0]])
    k = check_lowered(PROGRAMS["max"][0], checked=True, A=A, B=B)
    assert k(A=A, B=B).to_numpy().tolist() == [2.0, np.inf]
    # the row's sum is inside the test: nothing is summed for a row A stores nothing in
    c = k.c_source
    assert PROGRAMS["max"][2] in c and c.index(PROGRAMS["max"][2]) < c.index("t_j_3 += B_val[")
    assert any(r.rule == "dense-at-fill" for s in k.trace.find("lattice") for r in s.rewrites)


def test_the_min_of_a_max_workspace_is_tested_against_minus_infinity():
    A, B = operands("min", [[1.0, -np.inf], [-np.inf, -np.inf]], [[2.0, 0.0], [0.0, 0.0]])
    k = check_lowered(PROGRAMS["min"][0], checked=True, A=A, B=B)
    assert k(A=A, B=B).to_numpy().tolist() == [1.0, -np.inf]
    assert PROGRAMS["min"][2] in k.c_source


def test_a_nan_the_sum_may_hold_keeps_every_row():
    # the workspace is at inf in row 1, where the sum is NaN: max(inf, NaN) is NaN, not the fill
    A, B = operands("max", [[1.0, np.inf], [np.inf, np.inf]], [[2.0, 0.0], [np.nan, 0.0]])
    k = check_lowered(PROGRAMS["max"][0], A=A, B=B)
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), [2.0, np.nan])
    assert "!= INFINITY" not in k.c_source


VALUES = st.sampled_from([1.0, -2.0, 0.0, np.nan, np.inf, -np.inf])


@st.composite
def cases(draw):
    op = draw(st.sampled_from(sorted(PROGRAMS)))
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    fill = PROGRAMS[op][1]
    # A: mostly its fill (rows the workspace never touches), B: mostly its fill 1.0
    a = [[draw(st.one_of(st.just(fill), VALUES)) for _ in range(cols)] for _ in range(rows)]
    b = [[draw(st.one_of(st.just(1.0), VALUES)) for _ in range(cols)] for _ in range(rows)]
    return op, a, b


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
@example(("max", [[np.inf, np.inf]], [[np.nan, 1.0]]))        # the NaN sum in a skipped row
@example(("max", [[np.inf], [np.nan]], [[np.inf], [-np.inf]]))   # inf sums; a NaN min
@example(("min", [[-np.inf, -np.inf]], [[np.nan, 1.0]]))
@example(("max", [[-np.inf, np.inf]], [[1.0, 1.0]]))   # a stored -inf: the workspace leaves its fill
def test_the_value_test_never_changes_a_result(case):
    op, a, b = case
    A, B = operands(op, a, b)
    k = check_lowered(PROGRAMS[op][0], A=A, B=B)   # against the oracle and the IR interpreter
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), numpy_result(op, a, b))
    # the kernel is specialized for what B stores: finite values, the test; a NaN, none
    stored = np.asarray(b, float)[np.asarray(b, float) != 1.0]
    if np.isfinite(stored).all():
        assert PROGRAMS[op][2] in k.c_source
    if np.isnan(stored).any():
        assert "INFINITY)" not in k.c_source.split("w[w_k] =")[1]
