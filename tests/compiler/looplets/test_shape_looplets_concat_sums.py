"""A sum over a concatenated index under the looplets strategy: the concatenation is one loop per
part, and each part's loop wrote the output's entry (``for k: y[i] += A[k, i]``, then ``for l:
y[i] += B[l, i]``). A sparse output appended that entry once per part: the second part's loop
reset it, and the column sums of a vstack of parts of fills 0 and 1 lost the first part's values
(found by a differential probe of array expressions against numpy). The reduction now goes
through a scalar, the entry written once. A loop program writing one entry of a sorted output
from two statements is refused, naming the lines. Against numpy, the dense oracle and the IR
interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.format import Format
from compiler.levels import Element, SparseByteMap, SparseHash
from compiler.looplets import ProgramError, compile_program, loop_program

from tests.compiler.looplets.shape_checks import checked_kernel, one_kernel

COLUMN_SUMS = "y[i] = sum[j](concat((A[k, i], B[l, i]), (k, l) -> j))"


def test_column_sums_of_parts_of_two_fills_into_a_sparse_vector():
    # the probe's case: a's -3 was lost (the kernel gave 2, numpy -1)
    a = np.array([[0.0, 0.0, -3.0]])
    b = np.array([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0]])
    A, B = ss.Tensor.from_numpy(a, "csr", fill=0.0), ss.Tensor.from_numpy(b, "csr", fill=1.0)
    want = np.vstack([a, b]).sum(axis=0)
    kernel, _ = checked_kernel(COLUMN_SUMS, want, "sparse_vector", A=A, B=B)
    # (one write of y per i, after both parts' loops)
    assert len([s for s in kernel.trace.steps if s.stage == "program"]) == 1
    program = str(next(s.after for s in kernel.trace.steps if s.stage == "program"))
    assert program.count("y[i]") == 1, program


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.tuples(st.integers(0, 3), st.integers(0, 3)), cols=st.integers(1, 4),
       fmts=st.tuples(st.sampled_from(["csr", "coo", "dense"]), st.sampled_from(["csr", "coo", "dense"])),
       fills=st.tuples(st.sampled_from([0.0, 1.0, np.nan]), st.sampled_from([0.0, 1.0, -np.inf])),
       out=st.sampled_from(["dense", "sparse_vector"]), seed=st.integers(0, 2 ** 16))
@example(rows=(1, 3), cols=2, fmts=("coo", "csr"), fills=(0.0, 1.0), out="sparse_vector", seed=0)   # wrong before
@example(rows=(2, 3), cols=5, fmts=("csr", "csr"), fills=(0.0, 1.0), out="sparse_vector", seed=1)   # wrong before
@example(rows=(0, 2), cols=3, fmts=("dense", "coo"), fills=(np.nan, 0.0), out="sparse_vector", seed=2)
@example(rows=(2, 0), cols=3, fmts=("csr", "dense"), fills=(1.0, -np.inf), out="dense", seed=3)
def test_column_sums_of_a_vstack(rows, cols, fmts, fills, out, seed):
    rng = np.random.default_rng(seed)
    a, b = (np.where(rng.random((n, cols)) < 0.5, rng.choice([1.0, -3.0, np.nan, np.inf], (n, cols)), f)
            for n, f in zip(rows, fills))
    A, B = (ss.Tensor.from_numpy(x, f, fill=fill) for x, f, fill in zip((a, b), fmts, fills))
    with np.errstate(invalid="ignore"):
        want = np.vstack([a, b]).sum(axis=0)
    checked_kernel(COLUMN_SUMS, want, out, A=A, B=B)


@pytest.mark.parametrize("fills", [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0)])
def test_the_array_expression_is_one_kernel(fills):
    rng = np.random.default_rng(7)
    a, b = (np.where(rng.random((n, 5)) < 0.4, rng.choice([2.0, -3.0], (n, 5)), f) for n, f in zip((3, 4), fills))
    A, B = (xp.asarray(ss.Tensor.from_numpy(x, "csr", fill=f)) for x, f in zip((a, b), fills))
    expr = xp.sum(xp.concat([A, B]), axis=0)
    one_kernel(expr)
    np.testing.assert_array_equal(np.asarray(expr.compute(strategy="looplets")), np.vstack([a, b]).sum(axis=0))


@loop_program
def column_sums_in_two(y, A, B):
    for j in _:
        for i in _:
            y[j] += A[i, j]
        for k in _:
            y[j] += B[k, j]


def test_a_loop_program_writing_one_entry_from_two_statements():
    a = np.array([[0.0, 0.0, -3.0]])
    b = np.array([[1.0, 0.0, 1.0], [1.0, 5.0, 0.0]])
    A, B = ss.Tensor.from_numpy(a, "csc"), ss.Tensor.from_numpy(b, "csc")
    want = a.sum(axis=0) + b.sum(axis=0)
    # (a sorted output appended y[j] from each statement: [2, 5, 1] before, silently)
    with pytest.raises(ProgramError, match=r"output y is written by two statements \(lines \d+ and \d+\) at one "
                                           r"entry of its SparseList level \(storage level 0\)"):
        compile_program(column_sums_in_two, y="sparse", A=A, B=B)
    # (outputs that take writes anywhere, and dense ones, add the two)
    for out in ("dense", Format(SparseHash(Element(0.0))), Format(SparseByteMap(Element(0.0)))):
        kernel = compile_program(column_sums_in_two, y=out, A=A, B=B)
        np.testing.assert_array_equal(np.asarray(kernel(A=A, B=B)), want)


ROW_MAXIMA = "y[j] = max[i](concat((A[k, i], B[l, i]), (k, l) -> j))"


@pytest.mark.parametrize("op, rows", [("max", (2, 4)), ("prod", (0, 4)), ("min", (3, 1))])
def test_row_reductions_of_a_vstack_into_a_sparse_vector(op, rows):
    # a reduction over each row of a vstack, into a sparse output, goes through a dense workspace
    # written by each part's loop (w[k], then w[l + size(A, 0)]): it was allocated for the first part's
    # rows only, and the second part's wrote past it (the heap corrupted: "free(): invalid next size"),
    # found by a differential probe of array expressions against numpy
    rng = np.random.default_rng(3)
    a, b = (np.where(rng.random((n, 3)) < 0.5, rng.choice([2.0, -3.0, 0.5], (n, 3)), 0.0) for n in rows)
    A, B = ss.Tensor.from_numpy(a, "coo"), ss.Tensor.from_numpy(b, "coo")
    want = getattr(np, op)(np.vstack([a, b]), axis=1)
    prog = ROW_MAXIMA.replace("max", op)
    # (checked first: the unchecked kernel's writes past the workspace would crash the process)
    checked = ss.lower(prog, "looplets", checked=True, A=A, B=B, y="sparse_vector")
    np.testing.assert_array_equal(checked(A=A, B=B).to_numpy(), want)
    checked_kernel(prog, want, "sparse_vector", A=A, B=B)
    expr = getattr(xp, op)(xp.concat([xp.asarray(A), xp.asarray(B)]), axis=1)
    np.testing.assert_array_equal(np.asarray(expr.compute(strategy="looplets")), want)
