"""The sequence lowering's loops in the inputs' storage order where the output's order walks one against it
(issue 30): a sum's loops around the output's (compiler.lattice.seqhoist: the column sums of CSR parts, added
into a dense output or a sparse vector's workspace) and a CSC written by a scatter (compiler.lattice.seqscatter:
a vstack of CSR parts). On main each was refused ("the loops reach its level 1 (j) before level 0"; a split's
minor index "runs outside the one over its major index"). Each kernel against the dense oracle
(compiler.evaluate), the IR interpreter and the sequence CFIR's interpreter in the order the kernel took."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.reference import evaluate
from tests.compiler.lattice.test_seq_concat_fills import HSTACK, VSTACK, one_kernel, tensor

nan, inf = np.nan, np.inf

COLUMN_SUMS = "c[j] = sum[i](concat((A[k, j], A1[l, j]), (k, l) -> i))"
ROW_SUMS = "c[i] = sum[j](concat((A[k, j], A1[l, j]), (k, l) -> i))"
ALL_SUM = "c[] = sum[i, j](concat((A[k, j], A1[l, j]), (k, l) -> i))"
SPLIT_SUMS = "c[j] = sum[i](split(b[k], k -> (i, j:4)))"


def lattice_kernel(program, out=None, **tensors):
    """``program`` lowered by the lattice into ``out`` (as one_kernel: against evaluate, the IR interpreter and
    the sequence CFIR's interpreter in the order the kernel took); the kernel and its ``loop-order`` step."""
    k, _ = one_kernel(program, out, **tensors)
    (step,) = k.trace.find("loop-order") or [None]
    return k, step


@pytest.mark.parametrize("out", [None, "sparse", "coo"])
@pytest.mark.parametrize("fills, fmts", [((0.0, 0.0), ("csr", "csr")), ((1.0, 0.0), ("csr", "coo")),
                                         ((0.0, nan), ("coo", "csr")), ((0.0, 0.0), ("dense", "csr"))])
def test_column_sums_of_row_major_parts_run_the_sum_outside(fills, fmts, out):
    A = tensor((3, 5), fmts[0], 1, fills[0], odd=(nan, inf))
    A1 = tensor((2, 5), fmts[1], 2, fills[1], odd=(-inf,))
    k, step = lattice_kernel(COLUMN_SUMS, out, A=A, A1=A1)
    into = "into c at each coordinate" if out is None else "into a dense workspace of c's extent"
    assert step is not None and "they run i, j instead, the sum accumulated " + into in step.note, step
    assert "the loops reach its level 1 (j) before level 0" in step.note
    assert not k.trace.find("convert")
    if fills[0] != 0.0:
        # (a summand of another fill than 0: counted at each coordinate, the fill folded in for the rest)
        assert "forall j: c(j) += (5 - n_c(j))" in k.trace.find("cfir")[0].after_text


def test_the_hoisted_sum_is_plain_c():
    A, A1 = tensor((3, 5), "csr", 1), tensor((2, 5), "csr", 2)
    k, _ = lattice_kernel(COLUMN_SUMS, "sparse", A=A, A1=A1)
    src = k.c_source
    # (the terms added into the workspace at the columns the rows store, then appended in order)
    assert "w[j] += A_val[pA1];" in src and "w[j] += A1_val[pA11];" in src, src
    k, _ = lattice_kernel(COLUMN_SUMS, None, A=A, A1=A1)
    assert "c_val[j] += A_val[pA1];" in k.c_source


@pytest.mark.parametrize("program", [ROW_SUMS, ALL_SUM, COLUMN_SUMS])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense"])
def test_sums_along_each_axis_of_each_format(program, fmt):
    A, A1 = tensor((3, 4), fmt, 3, odd=(nan,)), tensor((2, 4), fmt, 4, fill=1.0, odd=(inf, -inf))
    k, step = lattice_kernel(program, A=A, A1=A1)
    # (the column sums walk the row-major parts against their order: the sum's loop runs outside; the row sums
    # walk the CSC's: it is read converted, as before, a conversion the sum outside does not always beat)
    assert (step is not None) == (fmt != "csc" and program == COLUMN_SUMS), (fmt, program, step)
    assert bool(k.trace.find("convert")) == (fmt == "csc" and program != COLUMN_SUMS)


@pytest.mark.parametrize("shapes", [((0, 4), (2, 4)), ((3, 4), (0, 4)), ((0, 4), (0, 4))])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_empty_parts(shapes, out):
    A, A1 = tensor(shapes[0], "csr", 5), tensor(shapes[1], "csr", 6, fill=2.0)
    lattice_kernel(COLUMN_SUMS, out, A=A, A1=A1)
    B, B1 = tensor(shapes[0], "csr", 5, density=0.0), tensor(shapes[1], "coo", 6, density=0.0)
    lattice_kernel(COLUMN_SUMS, out, A=B, A1=B1)     # (all fill)


@pytest.mark.parametrize("fill, odd", [(0.0, ()), (1.0, (nan,)), (nan, (inf, -inf))])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_column_sums_of_a_split_vector(fill, odd, out):
    # (the split's minor index is the output's: its loop ran outside the split's major one, refused)
    b = tensor((12,), "sparse", 7, fill, odd=odd)
    k, step = lattice_kernel(SPLIT_SUMS, out, b=b)
    # (in the output's order, the split's minor loop outside its major one searches each group for its coordinate)
    assert "search each group of a split" in step.note and "the sum's inside (j, i)" in step.note, step.note


@pytest.mark.parametrize("program", [VSTACK, HSTACK])
@pytest.mark.parametrize("fmts", [("csr", "csr"), ("coo", "csr"), ("csr", "dense"), ("csc", "csc")])
@pytest.mark.parametrize("out", ["csc", "csr"])
def test_stacks_into_the_other_order_are_scattered(program, fmts, out):
    shapes = ((3, 4), (2, 4)) if program == VSTACK else ((3, 4), (3, 2))
    A, A1 = tensor(shapes[0], fmts[0], 8, odd=(nan, inf)), tensor(shapes[1], fmts[1], 9, odd=(-inf,))
    k, step = lattice_kernel(program, out, A=A, A1=A1)
    row_major = {fmts[0], fmts[1]} != {"csc"}
    # (loops in the output's order walk a part against its own: the loops run the parts' order, scattered)
    assert (step is not None) == ((out == "csc") == row_major), (out, fmts, step)
    if step is not None:
        assert f"c is {out}, and loops in its storage order walk an input against its own" in step.note
        assert "by a scatter" in step.note and not k.trace.find("convert")
        src = k.c_source
        assert "phase 1, count" in src and "phase 2, place" in src


@pytest.mark.parametrize("fills", [(0.0, 1.0), (nan, 0.0), (1.0, 1.0)])
def test_a_scattered_stack_of_fills(fills):
    A = tensor((3, 4), "csr", 10, fills[0], odd=(inf,))
    A1 = tensor((2, 4), "csr", 11, fills[1], odd=(nan,))
    _, step = lattice_kernel(VSTACK, "csc", A=A, A1=A1)
    assert step is not None


def test_entries_equal_to_the_fill_leave_gaps_that_close():
    # (stored zeros of scipy matrices are copies of the fill: phase 2 skips them, the columns after move down)
    a = sp.csr_matrix((np.array([0.0, 2.0, 0.0, 3.0]), np.array([0, 1, 3, 3]), np.array([0, 2, 3, 4])), shape=(3, 4))
    b = sp.csr_matrix((np.array([0.0, 5.0]), np.array([2, 0]), np.array([0, 1, 2])), shape=(2, 4))
    A, A1 = Tensor.from_scipy(a), Tensor.from_scipy(b)
    assert A.nnz == 4 and A1.nnz == 2
    k, step = lattice_kernel(VSTACK, "csc", A=A, A1=A1)
    got = k(A=A, A1=A1)
    assert got.nnz == 3 and "gaps it leaves close after" in step.note
    np.testing.assert_array_equal(got.to_scipy().toarray(), sp.vstack([a, b]).toarray())


def test_a_split_into_csc_is_scattered():
    b = tensor((8,), "sparse", 12, odd=(nan,))
    _, step = lattice_kernel("c[i, j] = split(b[k], k -> (i, j:2))", "csc", b=b)
    assert "search each group of a split" in step.note and "they run i, j" in step.note, step.note


def test_what_no_order_walks_stays_refused_or_converted():
    # (a CSC raveled row-major has one loop: no other order; it is read converted, as before)
    C = tensor((3, 4), "csc", 13)
    k = ss.lower("c[m] = collapse(A[i, j], (i, j) -> m)", strategy="lattice", A=C)
    assert k.trace.find("convert") and not k.trace.find("loop-order")
    # (a sum under an operator is added into a workspace first, the operator applied in a loop over it after:
    # tests/compiler/lattice/test_seq_sum_workspace.py; it was refused)
    A = tensor((3, 4), "csr", 14)
    _, step = lattice_kernel("c[j] = sum[i](concat((A[k, j], A1[l, j]), (k, l) -> i)) * 2", A=A, A1=A)
    assert "added into a dense workspace first" in step.note and "into w[j] of 4 entries" in step.note
    # (one over both indices of a sparse matrix is kept in sparse rows, not a dense workspace of its every entry:
    # tests/compiler/lattice/test_seq_sum_rows.py; it was refused. Of a sparse output of 3 modes, in sparse fibers,
    # each row's terms sorted by key: tests/compiler/lattice/test_seq_sum3d.py; it was refused)
    A3 = tensor((2, 3, 4), "csf", 14)
    _, step = lattice_kernel("c[j, m] = sum[i](concat((A[k, j, m], A1[l, j, m]), (k, l) -> i)) * 2", "csr",
                             A=A3, A1=A3)
    assert "into sparse rows first" in step.note
    A4 = tensor((2, 2, 3, 4), "csf", 14)
    _, step = lattice_kernel("c[j, m, n] = sum[i](concat((A[k, j, m, n], A1[l, j, m, n]), (k, l) -> i)) * 2", "csf",
                             A=A4, A1=A4)
    assert "into sparse fibers first" in step.note
    # (a COO stored column-major is not scattered: it is appended in its order, each group of the split
    # searched for the column's coordinate, compiler.lattice.seqstride; it was refused)
    k, _ = lattice_kernel("c[i, j] = split(b[k], k -> (i, j:2))", ss.Format(ss.parse_format("coo", ndim=2).root, (1, 0)),
                          b=tensor((8,), "sparse", 15))


@st.composite
def stacks(draw):
    """``(program, A, A1, out)``: a column sum, a row sum or a stack of two parts of drawn formats, fills,
    densities and odd values, into a dense, sparse, CSR or CSC output."""
    program = draw(st.sampled_from([COLUMN_SUMS, ROW_SUMS, VSTACK]))
    rows = [draw(st.integers(0, 3)) for _ in range(2)]
    parts = [tensor((n, 4), draw(st.sampled_from(["csr", "csc", "coo", "dense"])), draw(st.integers(0, 99)),
                    draw(st.sampled_from([0.0, 1.0, nan])), draw(st.sampled_from([0.0, 0.4, 1.0])),
                    draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for n in rows]
    outs = [None, "sparse"] if program != VSTACK else [None, "csr", "csc"]
    return program, parts[0], parts[1], draw(st.sampled_from(outs))


@settings(max_examples=7, deadline=None)
@given(stacks())
def test_any_order_of_stacks_and_sums(case):
    program, A, A1, out = case
    with np.errstate(invalid="ignore"):
        fill = evaluate(program, A=A, A1=A1)[1]
    if out is not None and program == VSTACK and not (fill == 0 or A.fill != A.fill and A1.fill != A1.fill):
        out = None    # (a sparse output of a stack takes the first part's fill: dense otherwise)
    lattice_kernel(program, out, A=A, A1=A1)
