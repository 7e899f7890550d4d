"""A sum under an operator whose loops cannot run inside the output's (issue 30, compiler.lattice.seqworkspace):
``c[j] = sum[i](concat((A[k, j], A1[l, j]), (k, l) -> i)) * 2`` of CSR parts is added into a workspace first, its
loops in the parts' order, and a loop over the output's coordinates applies the operator after (TACO's
precompute). On main each was refused ("the loops reach its level 1 (j) before level 0 (k) ... lower it with
strategy='looplets'"), and the array front end materialized the stack (a 'retry' and a 'materialize' step).
Each kernel against the dense oracle (compiler.evaluate), the IR interpreter and the sequence CFIR's
interpreter in the kernel's order (one_kernel), the array expressions against numpy too."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import StrategyError
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand
from tests.compiler.lattice.test_seq_concat_fills import one_kernel, tensor

nan, inf = np.nan, np.inf

STACK_SUM = "sum[i](concat((A[k, j], A1[l, j]), (k, l) -> i))"
TWICE = f"c[j] = {STACK_SUM} * 2"


def two_sums(rows: int) -> str:
    """The difference of the column sums of two parts' first ``rows`` rows, each sum into its own workspace."""
    return (f"c[j] = sum[i](slice(A[k, j], k -> i, (0, {rows}, 1))) - "
            f"sum[i](slice(A1[k, j], k -> i, (0, {rows}, 1)))")


PROGRAMS = [TWICE,
            f"c[j] = {STACK_SUM} * 2 + 1",                  # (the result's fill 1: the sum of nothing, doubled, plus 1)
            f"c[j] = {STACK_SUM} + b[j]",                   # (another operand, read beside the workspace)
            f"c[j] = {STACK_SUM} * b[j]",
            two_sums(3)]                                   # (two sums: two workspaces)


def workspace_kernel(program, out=None, **tensors):
    """``program`` lowered by the lattice into ``out`` (one_kernel: right against evaluate, the IR and the
    CFIR interpreters), its sums into workspaces: the kernel and its ``loop-order`` step."""
    k, _ = one_kernel(program, out, **tensors)
    (step,) = k.trace.find("loop-order")
    assert "under an operator is added into a dense workspace first" in step.note, step.note
    assert "(TACO's precompute)" in step.note
    assert "the loops reach its level 1 (j) before level 0" in step.note
    assert not k.trace.find("convert")
    return k, step


@pytest.mark.parametrize("out", [None, "sparse"])
@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("fills, fmts", [((0.0, 0.0), ("csr", "csr")), ((1.0, 0.0), ("csr", "coo")),
                                         ((0.0, nan), ("coo", "dense")), ((nan, nan), ("dense", "csr"))])
def test_sums_under_operators_go_through_a_workspace(program, fills, fmts, out):
    rows = (3, 2) if STACK_SUM in program else (3, 3)
    A = tensor((rows[0], 5), fmts[0], 1, fills[0], odd=(nan, inf))
    A1 = tensor((rows[1], 5), fmts[1], 2, fills[1], odd=(-inf,))
    b = tensor((5,), "sparse", 3, odd=(inf,))
    reads = {"A": A, "A1": A1, **({"b": b} if "b[j]" in program else {})}
    k, step = workspace_kernel(program, out, **reads)
    assert "is added into a dense workspace first" in step.note and "into w[j] of 5 entries" in step.note
    if program.count("sum[") == 2:
        assert "each sum under an operator" in step.note and "into w2[j] of 5 entries" in step.note


def test_the_workspace_is_plain_c():
    A, A1 = tensor((3, 5), "csr", 4), tensor((2, 5), "csr", 5)
    k, _ = workspace_kernel(TWICE, A=A, A1=A1)
    src = k.c_source
    # (the terms added into the workspace at the columns the rows store, then one loop over it doubles each)
    assert "w_val[j] += A_val[pA1];" in src and "w_val[j] += A1_val[pA11];" in src, src
    assert "c_val[j] = w_val[pw0] * 2.0;" in src, src
    assert "free(w_val);" in src
    # (a sparse vector appends each coordinate where the doubled sum is not the fill)
    k, _ = workspace_kernel(TWICE, "sparse", A=A, A1=A1)
    assert "c0_idx[pc0] = j;" in k.c_source


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
def test_a_summand_of_another_fill_is_folded_in_at_each_coordinate(fill):
    A, A1 = tensor((3, 4), "csr", 6, fill, odd=(inf,)), tensor((2, 4), "coo", 7, fill, odd=(nan,))
    k, _ = workspace_kernel(f"c[j] = {STACK_SUM} * 2 + 1", "sparse", A=A, A1=A1)
    cfir = k.trace.find("cfir")[0].after_text
    assert ("forall j: w(j) += (5 - n_w(j))" in cfir) == (fill != 0.0), cfir


@pytest.mark.parametrize("shapes", [((0, 4), (2, 4)), ((3, 4), (0, 4)), ((0, 4), (0, 4))])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_empty_and_all_fill_parts(shapes, out):
    A, A1 = tensor(shapes[0], "csr", 8), tensor(shapes[1], "csr", 9, fill=2.0)
    workspace_kernel(f"c[j] = {STACK_SUM} * 2 + 1", out, A=A, A1=A1)
    B, B1 = tensor(shapes[0], "csr", 8, density=0.0), tensor(shapes[1], "coo", 9, density=0.0)
    workspace_kernel(TWICE, out, A=B, A1=B1)     # (all fill)


@pytest.mark.parametrize("out", [None, "sparse"])
def test_column_sums_of_a_split_vector_under_an_operator(out):
    b = tensor((12,), "sparse", 10, odd=(nan, -inf))
    k, _ = one_kernel("c[j] = sum[i](split(b[k], k -> (i, j:4))) * 3 - 1", out, b=b)
    (step,) = k.trace.find("loop-order")
    assert "into w[j] of 4 entries" in step.note, step.note


def test_a_dense_matrix_output_takes_a_workspace_of_its_own_size():
    A, A1 = tensor((2, 3, 4), "csf", 11, odd=(nan,)), tensor((1, 3, 4), "coo", 12, odd=(inf,))
    k, _ = one_kernel("c[j, m] = sum[i](concat((A[k, j, m], A1[l, j, m]), (k, l) -> i)) * 2", A=A, A1=A1)
    (step,) = k.trace.find("loop-order")
    assert "into w[j, m] of 12 entries" in step.note, step.note


def test_a_sparse_matrix_output_is_not_given_a_dense_workspace():
    # (a workspace over both its indices would hold every entry of the matrix: refused, as before)
    A = tensor((2, 3, 4), "csf", 13)
    with pytest.raises(StrategyError, match=r"before level 0.*strategy='looplets'"):
        ss.lower("c[j, m] = sum[i](concat((A[k, j, m], A1[l, j, m]), (k, l) -> i)) * 2", strategy="lattice",
                 A=A, A1=A, c=ss.parse_format("csr", ndim=2))


# -- the array front end: one kernel, no retry, no materialized stack ---------------------------------------


@pytest.mark.parametrize("out", [None, "sparse_vector"])
@pytest.mark.parametrize("fill, odd", [(0.0, (nan, inf)), (1.0, (-inf,)), (nan, (inf,))])
@pytest.mark.parametrize("fmts", [("csr", "csr"), ("coo", "csr"), ("dense", "coo")])
def test_an_operator_over_the_sums_of_a_vstack(fmts, fill, odd, out):
    a, A = operand((3, 5), fmts[0], 1, fill=fill, odd=odd)
    b, B = operand((2, 5), fmts[1], 2, fill=fill)
    with np.errstate(invalid="ignore"):
        want = np.concatenate([a, b]).sum(axis=0) * 2 + 1
    k = one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=0) * 2 + 1, want, out)
    (step,) = k.trace.find("loop-order")
    assert "(TACO's precompute)" in step.note


def test_the_issue_example_is_one_kernel():
    a, A = operand((4, 6), "csr", 3, odd=(nan,))
    b, B = operand((3, 6), "csr", 4)
    x, X = operand((6,), "sparse_vector", 5)
    with np.errstate(invalid="ignore"):
        one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=0) * 2, np.concatenate([a, b]).sum(axis=0) * 2)
        one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=0) * X, np.concatenate([a, b]).sum(axis=0) * x)


# -- any formats, fills and operators ------------------------------------------------------------------------


@st.composite
def sums_under_operators(draw):
    """``(program, A, A1, b, out)``: an operator over the column sums of a stack of two parts (or the difference of
    two parts' column sums) of drawn formats, fills, densities and odd values, into a dense or a sparse vector."""
    program = draw(st.sampled_from(PROGRAMS + [f"c[j] = {STACK_SUM} / 2 - b[j]"]))
    rows = [draw(st.integers(0, 3)) for _ in range(2)]
    if STACK_SUM not in program:
        rows[1] = rows[0]
        program = two_sums(rows[0])
    fmts = ["csr", "coo", "dense"]
    parts = [tensor((n, 4), draw(st.sampled_from(fmts)), draw(st.integers(0, 99)), draw(st.sampled_from([0.0, 1.0, nan])),
                    draw(st.sampled_from([0.0, 0.4, 1.0])), draw(st.sampled_from([(), (nan,), (inf, -inf)])))
             for n in rows]
    b = tensor((4,), "sparse", draw(st.integers(0, 99)), 0.0, draw(st.sampled_from([0.0, 0.5])), (inf,))
    return program, parts[0], parts[1], b, draw(st.sampled_from([None, "sparse"]))


@settings(max_examples=15, deadline=None)
@given(sums_under_operators())
def test_any_sum_under_an_operator(case):
    program, A, A1, b, out = case
    workspace_kernel(program, out, A=A, A1=A1, **({"b": b} if "b[j]" in program else {}))
