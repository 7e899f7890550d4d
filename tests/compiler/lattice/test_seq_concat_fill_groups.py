"""A concatenation of split parts of different fills, lowered by the lattice strategy: the part whose fill is
not the result's walks every group (``|π0(A, J)| + (π0(B, J) ∪ U_n)``), and the π1 loop in its case walks
B's group to its end. Before, the loop's conditional next tested the whole shifted union at k: with B run
out (or moved to its next group) it stepped nothing, so the universe stayed at k and the lattice's next
loop (``|π0(A, J)| + U_n``) visited k again: B's stored values overwritten by its fill, or a sum over the
concatenated index adding the fill twice. The emitter and the CFIR interpreter now step each operand of a
shifted (or sliced) union at k on its own (``seqiter.shifts_branches``).

Each kernel against the dense oracle (compiler.evaluate), the sequence CFIR's interpreter and the IR
interpreter (``test_seq_concat_fills.one_kernel``); the array front end's against numpy."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand
from tests.compiler.lattice.test_seq_concat_fills import one_kernel

nan, inf = np.nan, np.inf

#: (program with the split's group J, the parts' numbers of groups L and N, whether the parts are matrices,
#: the output's order): the parts A of fill 0 and B of another fill, stacked as groups of J
SPLITS = "concat((split(A[m{j}], m -> (l:{L}, i:{J})), split(B[q{j}], q -> (n:{N}, i:{J}))), (l, n) -> k)"
BROADCAST = "concat((broadcast(l:{L}, A[i{j}]), split(B[q{j}], q -> (n:{N}, i:{J}))), (l, n) -> k)"
PROGRAMS = {
    "stack": ("c[k, i] = " + SPLITS, False, 2),
    "broadcast": ("c[k, i] = " + BROADCAST, False, 2),
    "sum": ("c[i] = sum[k](" + SPLITS + ")", False, 1),
    "matrices": ("c[k, i, j] = " + SPLITS, True, 3),
    "matrix-sum": ("c[i, j] = sum[k](" + SPLITS + ")", True, 2),
    # (the loop's next maps k through the slice to the union's coordinate)
    "slice": ("c[k2, i] = slice(" + SPLITS + ", k -> k2, (1, {K}, 1))", False, 2),
    "strided": ("c[k2, i] = slice(" + SPLITS + ", k -> k2, (0, {K}, 2))", False, 2),
}
OUTPUTS = {1: (None, "sparse_vector"), 2: (None, "csr", "coo"), 3: (None,)}
VECTORS = ("sparse", "coo", "dense")
MATRICES = ("csr", "dcsr", "coo", "dense")


def parts(case, J, fa, fb, fill, L=1, N=2, density=0.5, seed=0, odd=(inf,), odd1=(nan, -inf)):
    """The program of ``case`` and its parts: A of ``fa`` and fill 0, B of ``fb`` and ``fill`` (``density`` of
    their entries stored, ``odd`` values stored first)."""
    template, matrix, _ = PROGRAMS[case]
    program = template.format(L=L, N=N, J=J, K=L + N, j=", j" if matrix else "")
    sa = (J if case == "broadcast" else L * J,) + ((2,) if matrix else ())
    sb = (N * J,) + ((2,) if matrix else ())
    r = np.random.default_rng(seed)
    a = np.where(r.random(sa) < density, r.choice([1.0, -2.0, 3.5], sa), 0.0)
    b = np.where(r.random(sb) < density, r.choice([0.5, 0.0, -2.0], sb), fill)
    if density:
        a.flat[:len(odd)] = odd
        b.flat[:len(odd1)] = odd1
    return program, {"A": Tensor.from_numpy(a, fa), "B": Tensor.from_numpy(b, fb, fill=fill)}


def test_the_reported_stack_keeps_the_second_parts_stored_values():
    # (B's π1 walk ran it out: its 0.5 was overwritten by its fill 1 in the loop after)
    a, b = np.array([0.0, 0.0]), np.array([0.5, 1.0])
    tensors = {"A": Tensor.from_numpy(a, "sparse"), "B": Tensor.from_numpy(b, "sparse", fill=1.0)}
    for program in (PROGRAMS["stack"][0], PROGRAMS["broadcast"][0]):
        program = program.format(L=1, N=1, J=2, j="")
        for out in OUTPUTS[2]:
            k, got = one_kernel(program, out, **tensors)
            np.testing.assert_array_equal(got.to_numpy(), [[0.0, 0.0], [0.5, 1.0]])
    # (the loop's next steps the universe at k whether B is still in its group)
    assert "int64_t x = k - 1;" in k.c_source


@pytest.mark.parametrize("case, J, fa, fb, fill", [
    ("stack", 1, "sparse", "sparse", 1.0), ("stack", 2, "dense", "coo", nan), ("stack", 3, "coo", "sparse", 1.0),
    ("broadcast", 2, "sparse", "coo", 1.0), ("broadcast", 3, "dense", "sparse", nan),
    ("sum", 1, "coo", "coo", nan), ("sum", 2, "sparse", "sparse", 1.0), ("sum", 3, "dense", "coo", 1.0),
    ("matrices", 2, "csr", "dcsr", 1.0), ("matrices", 1, "dcsr", "coo", nan),
    ("matrix-sum", 2, "coo", "dcsr", 1.0), ("matrix-sum", 3, "csr", "coo", nan),
    ("slice", 2, "sparse", "sparse", 1.0), ("slice", 1, "dense", "coo", nan), ("strided", 2, "coo", "sparse", 1.0)])
def test_split_parts_of_two_fills(case, J, fa, fb, fill):
    program, tensors = parts(case, J, fa, fb, fill, seed=J)
    for out in OUTPUTS[PROGRAMS[case][2]]:
        one_kernel(program, out, **tensors)


@pytest.mark.parametrize("density", [0.0, 1.0])
@pytest.mark.parametrize("case, fa, fb", [("stack", "sparse", "coo"), ("sum", "coo", "sparse"),
                                           ("matrices", "dcsr", "dcsr"), ("matrix-sum", "csr", "coo")])
def test_empty_all_fill_and_full_parts(case, fa, fb, density):
    # (density 0: A stores nothing and B is all its fill; 1: both store every entry)
    program, tensors = parts(case, 2, fa, fb, 1.0, N=3, density=density)
    one_kernel(program, None, **tensors)


@st.composite
def programs(draw):
    case = draw(st.sampled_from(sorted(PROGRAMS)))
    fmts = MATRICES if PROGRAMS[case][1] else VECTORS
    fa, fb = draw(st.sampled_from(fmts)), draw(st.sampled_from(fmts))
    program, tensors = parts(case, draw(st.integers(1, 3)), fa, fb, draw(st.sampled_from([1.0, nan, -inf])),
                             L=draw(st.integers(1, 2)), N=draw(st.integers(1, 3)),
                             density=draw(st.sampled_from([1.0, 0.5, 0.0])), seed=draw(st.integers(0, 9)))
    return program, tensors, draw(st.sampled_from(OUTPUTS[PROGRAMS[case][2]]))


@settings(max_examples=7, deadline=None)
@given(programs())
@example(parts("stack", 2, "sparse", "sparse", 1.0, N=1, density=0.0) + ("csr",))
@example(parts("sum", 2, "coo", "sparse", 1.0, L=2, N=1, density=1.0, odd1=(0.5,)) + ("sparse_vector",))
def test_split_parts_of_two_fills_property(drawn):
    program, tensors, out = drawn
    one_kernel(program, out, **tensors)


# -- the array front end: a sum over the concatenated axis of 3-D parts ---------------------------------


def test_the_reported_sum_over_a_concatenation_adds_the_fill_once():
    a = xp.asarray(Tensor.from_numpy(np.zeros((2, 1)), "csr"))
    b = xp.asarray(Tensor.from_numpy(np.array([[0.5], [1.0], [1.0]]), "dcsr", fill=1.0))
    e = xp.sum(xp.concat([a.reshape(1, 2, 1), b.reshape(1, 3, 1)[:, :2]]), axis=0)
    one_lattice_kernel(e, np.array([[0.5], [1.0]]))


@pytest.mark.parametrize("fb, fill, rows, axis", [
    ("dcsr", 1.0, slice(1, None), 0), ("coo", nan, slice(None, None, 2), 0), ("dcsr", nan, slice(None), None),
    ("coo", 1.0, slice(1, 3), None), ("dcsr", 1.0, slice(0, 2), "stack")])
def test_array_sums_over_concatenated_parts_of_two_fills(fb, fill, rows, axis):
    x, X = operand((2, 2), "dcsr", 1, odd=(inf,))
    y, Y = operand((3, 2), fb, 2, fill=fill, odd=(-inf, 0.0))
    parts, want = [X.reshape(1, 2, 2), Y.reshape(1, 3, 2)[:, rows]], [x.reshape(1, 2, 2), y.reshape(1, 3, 2)[:, rows]]
    n = min(p.shape[1] for p in want)
    e, want = xp.concat([p[:, :n] for p in parts]), np.concatenate([p[:, :n] for p in want])
    if axis == "stack":
        one_lattice_kernel(e, want)
        return
    with np.errstate(invalid="ignore"):
        one_lattice_kernel(xp.sum(e, axis=axis), np.sum(want, axis=axis))
