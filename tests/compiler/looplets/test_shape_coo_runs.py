"""A COO operand's last mode walked by its positions, as a SparseList's (compiler.looplets.levels):
the entries of one of its rows are a run of positions, so a collapse or a concatenation of COO
matrices (Figs. 24a-c, 25c) copies each row as a block (compiler.imperative.blockcopy) where it
appended entry by entry. Each kernel against numpy, the dense oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.reference import evaluate

nan, inf = np.nan, np.inf
VST = "D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)"
HST = "D[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)"
COLLAPSE = "c[k] = collapse(A[i, j], (i, j) -> k)"
# (rows of 8 entries or more are copied as blocks, shorter ones entry by entry: both kinds here)
A = np.array([[0, 1.5, 0, 4.0, 1, 2, 3, 4, 5, 6, 7, 8], [2.0, 0, 3.0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0.0] * 12])
B = np.array([[7.0, 0, 0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0], [0.0] * 12, [9, 5.0, nan, 1, 2, 3, 4, 5, 6, 7, 8, 9]])


def run(program, out, want, fill=0.0, fmt="coo", **arrays):
    """The looplets kernel of ``program`` for operands stored in ``fmt``, against ``want`` (numpy's),
    the oracle's and the interpreter's result."""
    tensors = {n: ss.Tensor.from_numpy(a, fmt, fill=fill) for n, a in arrays.items()}
    oracle, wfill = evaluate(program, **tensors)
    np.testing.assert_array_equal(oracle, want)
    k = ss.lower(program, "looplets", **tensors,
                 **{program.split("[")[0]: ss.parse_format(out, ndim=want.ndim, fill=wfill.item())})
    np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    return k


@pytest.mark.parametrize("program, out, want", [
    (COLLAPSE, "sparse", A.ravel()),
    (HST, "coo", np.hstack([A, B])), (HST, "csr", np.hstack([A, B])),
    (VST, "coo", np.vstack([A, B])), (VST, "csr", np.vstack([A, B]))])
def test_the_rows_of_a_coo_operand_are_copied_as_blocks(program, out, want):
    """(Before, a COO's last mode had no positions to walk: every entry was appended on its own.)"""
    k = run(program, out, want, A=A, **({} if program == COLLAPSE else {"B": B}))
    assert any(s.stage == "block-copy" for s in k.trace.steps)
    # (a block copy of each operand's rows; an hstack's loop over the rows has a case per operand
    # holding the row, and one for both)
    assert k.c_source.count("copied as a block") == (1 if program == COLLAPSE else 6 if program == HST else 2)
    assert "A0_idx1[qA1 + t" in k.c_source and (program == COLLAPSE or "B0_idx1[qB1 + t" in k.c_source)


def coo_matrices(rows, cols, fill):
    cells = st.sampled_from([fill, fill, 0.0, 1.0, -2.0, nan, inf, -inf, -0.0])
    return st.lists(cells, min_size=rows * cols, max_size=rows * cols).map(
        lambda c: np.array(c, dtype=float).reshape(rows, cols))


SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SLOW
@given(st.data(), st.integers(0, 3), st.integers(0, 10), st.sampled_from([0.0, 1.0, nan, inf, -inf]),
       st.sampled_from(["coo", "csr", "dense"]), st.sampled_from([COLLAPSE, HST, VST]))
@example(data=None, n=2, m=9, fill=nan, out="coo", program=HST)
def test_collapses_and_concats_of_any_coo_matrices(data, n, m, fill, out, program):
    if data is None:
        a = np.full((n, m), fill)
        a[0] = np.arange(m)
        b = a[::-1].copy()
    else:
        a, b = data.draw(coo_matrices(n, m, fill)), data.draw(coo_matrices(n, m, fill))
    if program == COLLAPSE:
        run(program, "sparse" if out != "dense" else "dense", a.ravel(), fill, A=a)
    else:
        run(program, out, (np.hstack if program == HST else np.vstack)([a, b]), fill, A=a, B=b)
