"""The merge of two sparse walks: each step of two steppers walking stored positions ends at the
least of their children's stops with no cut at the phase's stop (each child ends by its fiber's
last coordinate, which the phase ends at, or past); in an intersection a stepper moves on by its
test's 0 or 1 (``qA += (int64_t)(jA + 1 == step_stop)``), not in a branch of its own, while a union's
arms (which lists are at the coordinate) each move theirs; a lone stepper's step is its child whole. An elementwise operator of sparse operands reserves its output's room up
front. Checked against the dense reference and the IR interpreter over formats, fills (0, 1, NaN),
NaN and infinities among the stored values, empty and all-fill operands."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.reference import evaluate

PROGRAMS = {"mul": "C[i, j] = A[i, j] * B[i, j]", "add": "C[i, j] = A[i, j] + B[i, j]",
            "max": "C[i, j] = max(A[i, j], B[i, j])"}
VECTORS = {"mul": "z[i] = x[i] * y[i]", "add": "z[i] = x[i] + y[i]", "max": "z[i] = max(x[i], y[i])"}
FILLS = [0.0, 1.0, np.nan]
PAIRS = [("csr", "csr"), ("coo", "csr")]

_KERNELS = {}


def kernel(program, out, **tensors):
    key = (program, out) + tuple((t, v.format) for t, v in sorted(tensors.items()))
    if key not in _KERNELS:
        outname = program.split("[")[0]
        _KERNELS[key] = ss.lower(program, strategy="looplets", **tensors, **{outname: out})
    return _KERNELS[key]


def check(program, out, **arrays_and_formats):
    """The kernel's result on these operands (``name=(array, format, fill)``) against the dense
    reference and the IR interpreter."""
    tensors = {t: ss.Tensor.from_numpy(a, f, fill=fill, name=t) for t, (a, f, fill) in arrays_and_formats.items()}
    k = kernel(program, out, **tensors)
    want = evaluate(program, **{t: a for t, (a, _, _) in arrays_and_formats.items()})[0]
    np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)


def with_fill(a, fill):
    """``a`` with its zeros (the unstored entries) replaced by ``fill``."""
    return np.where(a == 0, fill, a)


# rows: one ending before the other's first entry, one empty in A, one with NaN and infinities
# stored, one where both store the same columns, one empty in both
A0 = np.array([[1.0, 2.0, 0, 0, 0, 0],
               [0, 0, 0, 0, 0, 0],
               [np.nan, 0, np.inf, 0, -np.inf, 3.0],
               [0, 4.0, 0, 5.0, 0, 0],
               [0, 0, 0, 0, 0, 0]])
B0 = np.array([[0, 0, 0, 3.0, 4.0, 0],
               [5.0, 0, 0, 0, 0, 6.0],
               [2.0, np.nan, -np.inf, 0, np.inf, 0],
               [0, 7.0, 0, -1.0, 0, 0],
               [0, 0, 0, 0, 0, 0]])


@pytest.mark.parametrize("fill", FILLS, ids=["0", "1", "nan"])
@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
@pytest.mark.parametrize("op", sorted(PROGRAMS))
def test_merges_of_two_lists_agree_with_the_oracle(op, pair, fill):
    a, b = with_fill(A0, fill), with_fill(B0, fill)
    empty, full = np.full(A0.shape, fill), np.full(A0.shape, fill)
    for x, y in ((a, b), (b, a), (a, empty), (empty, b), (full, full)):
        check(PROGRAMS[op], "csr", A=(x, pair[0], fill), B=(y, pair[1], fill))


@pytest.mark.parametrize("fill", FILLS, ids=["0", "1", "nan"])
@pytest.mark.parametrize("op", sorted(VECTORS))
def test_merges_of_two_sparse_vectors_agree_with_the_oracle(op, fill):
    x = with_fill(np.array([0, np.nan, 2.0, 0, np.inf, 0, -np.inf, 1.0]), fill)
    y = with_fill(np.array([3.0, 1.0, 0, 0, -np.inf, 4.0, np.inf, 0]), fill)
    for out in ("sparse", "dense"):
        for u, v in ((x, y), (y, x), (x, np.full(8, fill))):
            check(VECTORS[op], out, x=(u, "sparse", fill), y=(v, "sparse", fill))
    # a dense operand: a Lookup beside the stepper, whose steps are its children whole
    check(VECTORS[op], "sparse", x=(x, "sparse", fill), y=(y, "dense", fill))


def step_loop(src: str) -> str:
    """The C of the first merge loop of a kernel: from ``while`` to the position's move."""
    start = src.index("int64_t step_stop")
    return src[start:src.index("= step_stop;", start)]


def test_an_intersection_steps_without_a_cut_and_moves_without_a_branch():
    A = ss.Tensor.from_scipy(sp.random(8, 9, density=0.4, format="csr", random_state=1))
    B = ss.Tensor.from_scipy(sp.random(8, 9, density=0.4, format="csr", random_state=2))
    k = kernel(PROGRAMS["mul"], "csr", A=A, B=B)
    step = step_loop(k.c_source)
    # (before: min(jA + 1, jB + 1) cut at phase_stop, and a branch per stepper moving it on)
    assert "int64_t step_stop = jA + 1 < jB + 1 ? jA + 1 : jB + 1;" in step, step
    assert "phase_stop" not in step
    assert "qA += (int64_t)(jA + 1 == step_stop);" in step and "qB += (int64_t)(jB + 1 == step_stop);" in step
    assert "else" not in step
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), A.to_numpy() * B.to_numpy())


def test_a_union_steps_without_a_cut_and_moves_its_lists_in_its_arms():
    A = ss.Tensor.from_scipy(sp.random(8, 9, density=0.4, format="csr", random_state=1))
    B = ss.Tensor.from_scipy(sp.random(8, 9, density=0.4, format="csr", random_state=2))
    k = kernel(PROGRAMS["add"], "csr", A=A, B=B)
    step = step_loop(k.c_source)
    assert "int64_t step_stop = jA + 1 < jB + 1 ? jA + 1 : jB + 1;" in step and "phase_stop" not in step, step
    # (as scipy's merge, and the lattice's union: a branch on which lists are at the coordinate)
    # (the cursors move in the arms; only the append counts its test's 0 or 1: the branch-free step)
    assert "} else if (jA + 1 == step_stop) {" in step and "qA += (int64_t)(" not in step
    assert "qB += (int64_t)(" not in step
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), A.to_numpy() + B.to_numpy())


def test_a_lone_stepper_steps_its_child_whole():
    x = ss.Tensor.from_numpy(np.array([0, 1.0, 0, 2.0, 0]), "sparse")
    k = kernel("y[i] = x[i]", "dense", x=x)
    step = step_loop(k.c_source)
    assert "int64_t step_stop = jx + 1;" in step and "==" not in step, step
    np.testing.assert_array_equal(k(x=x).to_numpy(), x.to_numpy())


def test_an_elementwise_operator_of_sparse_operands_reserves_its_output():
    A = ss.Tensor.from_numpy(A0, "csr")
    B = ss.Tensor.from_numpy(B0, "csr")
    k = kernel(PROGRAMS["add"], "csr", A=A, B=B)
    notes = [s.note for s in k.trace.find("reserve")]
    assert len(notes) == 1 and "A1_pos[A0_size] + (int64)B1_pos[B0_size]" in notes[0], notes
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), evaluate(PROGRAMS["add"], A=A0, B=B0)[0])
    # a constant writes where no operand stores: no room reserved
    k1 = kernel("C[i, j] = A[i, j] + 1", "csr", A=A)
    assert not k1.trace.find("reserve")


@st.composite
def operands(draw):
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 7))
    fill = draw(st.sampled_from(FILLS))
    values = st.sampled_from([1.0, -2.0, np.nan, np.inf, -np.inf, 0.0])

    def matrix():
        density = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
        mask = np.array(draw(st.lists(st.floats(0, 1), min_size=n * m, max_size=n * m))).reshape(n, m) < density
        vals = np.array(draw(st.lists(values, min_size=n * m, max_size=n * m))).reshape(n, m)
        return np.where(mask, vals, fill)
    return matrix(), matrix(), fill, draw(st.sampled_from(PAIRS)), draw(st.sampled_from(sorted(PROGRAMS)))


@example((with_fill(A0, np.nan)[:2], with_fill(B0, np.nan)[:2], np.nan, ("csr", "csr"), "max"))
@settings(max_examples=15, deadline=None)
@given(operands())
def test_merges_agree_with_the_oracle_on_random_operands(drawn):
    a, b, fill, pair, op = drawn
    check(PROGRAMS[op], "csr", A=(a, pair[0], fill), B=(b, pair[1], fill))
