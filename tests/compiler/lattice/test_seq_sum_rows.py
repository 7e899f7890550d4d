"""A sum under an operator over both indices of a sparse matrix output (issue 30, compiler.lattice.seqsumrows):
``c[j, m] = sum[i](concat((A[k, j, m], A1[l, j, m]), (k, l) -> i)) * 2 + 1`` into CSR, CSC or COO (numpy's
``sum(concat(3-D parts), axis=0) * 2 + 1``) has the sum's terms bucketed by the output's row, each row summed in
a row workspace and written back in place: a CSR workspace the output's loops read, applying the operator. On
main each was refused ("the loops reach its level 1 (j) before level 0 (k) ... lower it with
strategy='looplets'": a dense workspace of the matrix's every entry was not taken), and the array front end
materialized the stack (a 'retry' and a 'materialize' step). A sum whose loops run around a sparse output of 3
or more modes has its terms sorted by key instead: tests/compiler/lattice/test_seq_sum3d.py. Each kernel
against the dense oracle (compiler.evaluate), the IR interpreter and the sequence CFIR's interpreter
(one_kernel), the array expressions against numpy too."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand
from tests.compiler.lattice.test_seq_concat_fills import one_kernel, tensor

nan, inf = np.nan, np.inf

STACK_SUM = "sum[i](concat((A[k, j, m], A1[l, j, m]), (k, l) -> i))"


def two_sums(rows: int) -> str:
    """The difference of the sums of two 3-D tensors' first ``rows`` slices, each sum into its own workspace."""
    return (f"c[j, m] = sum[i](slice(A[k, j, m], k -> i, (0, {rows}, 1))) - "
            f"sum[i](slice(A1[k, j, m], k -> i, (0, {rows}, 1)))")


PROGRAMS = [f"c[j, m] = {STACK_SUM} * 2",
            f"c[j, m] = {STACK_SUM} * 2 + 1",           # (the result's fill 1: the sum of nothing, doubled, plus 1)
            f"c[j, m] = {STACK_SUM} + B[j, m]",         # (another operand, co-iterated with the workspace's rows)
            f"c[j, m] = {STACK_SUM} * B[j, m]",
            two_sums(2)]                               # (two sums: two workspaces)


def rows_kernel(program, out, **tensors):
    """``program`` lowered by the lattice into the sparse matrix ``out`` (one_kernel: right against evaluate, the
    IR and the CFIR interpreters), its sums kept in sparse rows, never a dense workspace; the kernel and result."""
    k, got = one_kernel(program, out, **tensors)
    (step,) = k.trace.find("loop-order")
    assert "is added into sparse rows first" in step.note and "compiler.lattice.seqsumrows" in step.note, step.note
    assert "dense workspace" not in step.note and step.data["sparse_rows"]
    assert not k.trace.find("convert")
    # (no value equal to the output's fill is stored: where no term lands, the operator of the sum's fill)
    fill = np.asarray(got.fill)
    vals = got.to_coords()[1]
    assert not np.any(np.isnan(vals) if np.isnan(fill) else vals == fill), (vals, fill)
    return k, got


CASES = [((0.0, 0.0), ("csf", "csf")), ((1.0, 0.0), ("coo", "csf")), ((nan, nan), ("csf", "dense")),
         ((0.0, 2.0), ("dense", "coo"))]


@pytest.mark.parametrize("out", ["csr", "csc", "coo"])
@pytest.mark.parametrize("n, program", list(enumerate(PROGRAMS)))
def test_a_sum_under_an_operator_into_a_sparse_matrix(n, program, out):
    fills, fmts = CASES[(n + len(out)) % len(CASES)]
    shapes = ((2, 3, 4), (3, 3, 4)) if STACK_SUM in program else ((3, 3, 4), (3, 3, 4))
    A = tensor(shapes[0], fmts[0], 40 + n, fills[0], odd=(nan, inf))
    A1 = tensor(shapes[1], fmts[1], 50 + n, fills[1], odd=(-inf,))
    B = tensor((3, 4), out, 60 + n, odd=(inf, nan))     # (stored in the output's order: read as it walks)
    reads = {"A": A, "A1": A1, **({"B": B} if "B[j, m]" in program else {})}
    with np.errstate(invalid="ignore"):
        if ss.evaluate(program, **reads)[1] != 0 and out == "coo" and "B[j" in program:
            out = "csr"
    k, _ = rows_kernel(program, out, **reads)
    if program.count("sum[") == 2:
        assert "w2[j, m]" in k.trace.find("loop-order")[0].note or "w2[m, j]" in k.trace.find("loop-order")[0].note


def test_the_rows_are_plain_c():
    A, A1 = tensor((2, 3, 4), "csf", 70), tensor((1, 3, 4), "csf", 71)
    k, _ = rows_kernel(f"c[j, m] = {STACK_SUM} * 2 + 1", "csr", A=A, A1=A1)
    src = k.c_source
    # (phase 1 counts each row's terms, phase 2 places them, each row is summed and written back in place: the
    # workspace's CSR, which the output's loops read, applying the operator)
    assert "w_next[j] += 1;" in src and "w1_idx[t] = m;" in src and "w_row[m] += w_val[p];" in src, src
    assert "w1_idx[kept] = m;" in src and "w1_pos[j] = kept;" in src
    assert "w_val[pw1] * 2 + 1" in src.replace("_2]", "]"), src
    # (no array of the matrix's every entry: 3 x 4 = 12)
    assert "alloc_array(12," not in src
    # (a CSC output's workspace is stored by column: w[m, j])
    k, _ = rows_kernel(f"c[j, m] = {STACK_SUM} * 2 + 1", "csc", A=A, A1=A1)
    assert "into w[m, j], bucketed by m" in k.trace.find("loop-order")[0].note
    assert "w_next[m] += 1;" in k.c_source


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
def test_a_summand_of_another_fill_is_folded_in_at_each_column_a_term_reached(fill):
    A = tensor((2, 3, 4), "csf", 72, fill, odd=(inf,))
    A1 = tensor((3, 3, 4), "coo", 73, fill, density=0.2, odd=(nan,))
    k, _ = rows_kernel(f"c[j, m] = {STACK_SUM} * 2 + 1", "csr", A=A, A1=A1)
    assert ("w_row_count[m] += 1;" in k.c_source) == (fill != 0.0)


@pytest.mark.parametrize("out", ["csr", "coo"])
@pytest.mark.parametrize("shapes", [((0, 3, 4), (2, 3, 4)), ((2, 3, 4), (0, 3, 4)), ((0, 3, 4), (0, 3, 4))])
def test_empty_and_all_fill_parts(shapes, out):
    rows_kernel(f"c[j, m] = {STACK_SUM} * 2 + 1", out, A=tensor(shapes[0], "csf", 74),
                A1=tensor(shapes[1], "coo", 75))
    rows_kernel(f"c[j, m] = {STACK_SUM} * 2", out, A=tensor(shapes[0], "csf", 76, density=0.0),
                A1=tensor(shapes[1], "csf", 77, fill=1.0, density=0.0))


def test_a_sum_over_a_middle_level_under_an_operator():
    # (a CSF's middle level summed: the loops j, i, m walk it; the terms still come bucketed by row)
    A = tensor((3, 4, 5), "csf", 78, odd=(nan, -inf))
    rows_kernel("c[j, m] = sum[i](slice(A[j, k, m], k -> i, (1, 4, 2))) * 3 - 1", "csr", A=A)
    rows_kernel("c[j, m] = sum[i](slice(A[j, k, m], k -> i, (0, 4, 1))) / 2", "coo", A=A)


# -- the array front end: one kernel, no retry, no materialized stack ---------------------------------------


@pytest.mark.parametrize("out", ["csr", "csc", "coo"])
@pytest.mark.parametrize("fill, odd", [(0.0, (nan, inf)), (1.0, (-inf,)), (nan, (inf,))])
def test_an_operator_over_the_sums_of_a_3d_vstack(fill, odd, out):
    a, A = operand((2, 3, 4), "csf", 80, fill=fill, odd=odd)
    b, B = operand((3, 3, 4), "coo" if out == "csc" else "csf", 81, fill=fill)
    with np.errstate(invalid="ignore"):
        want = np.concatenate([a, b]).sum(axis=0) * 2 + 1
        k = one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=0) * 2 + 1, want, out)
    assert k().format.shorthand == out
    (step,) = k.trace.find("loop-order")
    assert "into sparse rows first" in step.note


def test_the_issue_example_with_another_operand_is_one_kernel():
    a, A = operand((4, 3, 5), "csf", 82, odd=(nan,))
    b, B = operand((3, 3, 5), "coo", 83)
    x, X = operand((3, 5), "csr", 84, odd=(inf,))
    with np.errstate(invalid="ignore"):
        one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=0) * X, np.concatenate([a, b]).sum(axis=0) * x, "csr")
        one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=0) - X, np.concatenate([a, b]).sum(axis=0) - x, "coo")


@pytest.mark.parametrize("out", ["csr", "csc"])
@pytest.mark.parametrize("fmts, fills", [(("csr", "csr"), (0.0, 0.0)), (("csr", "coo"), (0.0, 1.0)),
                                         (("coo", "dense"), (nan, nan))])
def test_an_operator_over_the_sums_of_a_stack_of_reshaped_2d_parts(fmts, fills, out):
    # (numpy's sum(concat([a.reshape(1, 4, 3), b.reshape(1, 5, 3)[:, :4]]), axis=0) * 2 + 1 of 2-D parts)
    a, A = operand((4, 3), fmts[0], 89, fill=fills[0], odd=(nan, inf))
    b, B = operand((5, 3), fmts[1], 90, fill=fills[1], odd=(-inf,))
    e = xp.sum(xp.concat([A.reshape(1, 4, 3), B.reshape(1, 5, 3)[:, :4]]), axis=0) * 2 + 1
    with np.errstate(invalid="ignore"):
        k = one_lattice_kernel(e, (a + b[:4]) * 2 + 1, out)
    assert k().format.shorthand == out
    # (each part's extent-1 axis is a broadcast, not a split of its rows: no loop order to undo a split's)
    assert "broadcast(" in str(k.trace.find("shapes")[0].after) and k.trace.find("materialize") == []


def test_integer_sums_and_a_comparison_keep_their_dtypes():
    r = np.random.default_rng(91)
    a, b = (r.integers(-2, 3, shape) * (r.random(shape) < 0.4) for shape in ((2, 3, 4), (3, 3, 4)))
    A, B = (xp.asarray(ss.Tensor.from_numpy(x, "csf")) for x in (a, b))
    sums = np.concatenate([a, b]).sum(axis=0)
    one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=0) * 2 + 1, sums * 2 + 1, "csr")      # (int64 rows)
    one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=0) > 1, sums > 1, "coo")


# -- any formats, fills, operators and outputs --------------------------------------------------------------


@st.composite
def sums_into_sparse_matrices(draw):
    """``(program, A, A1, B, out)``: an operator over the sums of a stack of two 3-D parts (or the difference of
    two parts' sums) of drawn formats, fills, densities and odd values, into CSR, CSC or COO."""
    program = draw(st.sampled_from(PROGRAMS + [f"c[j, m] = {STACK_SUM} / 2 - B[j, m]"]))
    depth = [draw(st.integers(0, 3)) for _ in range(2)]
    if STACK_SUM not in program:
        depth[1] = depth[0]
        program = two_sums(depth[0])
    parts = [tensor((n, 2, 3), draw(st.sampled_from(["csf", "coo", "dense"])), draw(st.integers(0, 99)),
                    draw(st.sampled_from([0.0, 1.0, nan])), draw(st.sampled_from([0.0, 0.4, 1.0])),
                    draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for n in depth]
    out = draw(st.sampled_from(["csr", "csc", "coo"]))
    # (B stored in the output's order, which the output's loops walk it in)
    B = tensor((2, 3), "csc" if out == "csc" else draw(st.sampled_from(["csr", "coo"])), draw(st.integers(0, 99)),
               0.0, draw(st.sampled_from([0.0, 0.5])), (inf,))
    return program, parts[0], parts[1], B, out


@settings(max_examples=7, deadline=None)
@given(sums_into_sparse_matrices())
def test_any_sum_under_an_operator_into_a_sparse_matrix(case):
    program, A, A1, B, out = case
    reads = {"A": A, "A1": A1, **({"B": B} if "B[j, m]" in program else {})}
    with np.errstate(invalid="ignore"):
        fill = ss.evaluate(program, **reads)[1]
    if fill == fill and fill != 0 and out == "coo":
        out = "csr"     # (a COO output of another fill than 0 the lattice writes as evaluate does: CSR here)
    rows_kernel(program, out, **reads)
