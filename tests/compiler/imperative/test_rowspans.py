"""Row spans (compiler.imperative.rowspans): a CSR vstack copies each operand's entries with one
block copy, then counts the rows from the operand's ``pos``; when that copy met a value the output
drops (a stored fill), the rows are appended again one by one. Both strategies, each kernel against
scipy's ``vstack`` and the IR interpreter, on empty operands, empty rows at the seam, one-row and
all-empty matrices, int32 and int64 indices, stored zeros, NaN and unsorted rows."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st

import compiler as ss
from compiler.format import parse_format
from compiler.imperative.ir import (BinOp, CompoundAssign, Const, Declare, For, Grow, If, Load, Store, Var,
                                    While)
from compiler.imperative.rowspans import row_spans
from compiler.imperative.traverse import walk

nan = np.nan
VST = "D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)"
SPAN = "the rows' entries are one run of positions"
STRATEGIES = ["looplets", "lattice"]


def csr(rows, ncols=6, index_dtype=np.int32):
    """A CSR matrix storing exactly the entries given, ``rows`` a list of rows of (column, value)."""
    pos = np.cumsum([0] + [len(r) for r in rows]).astype(index_dtype)
    idx = np.array([c for r in rows for c, _ in r], dtype=index_dtype)
    val = np.array([v for r in rows for _, v in r], dtype=float)
    m = sp.csr_matrix((val, idx, pos), shape=(len(rows), ncols))
    m.indices, m.indptr = m.indices.astype(index_dtype), m.indptr.astype(index_dtype)   # (scipy may narrow them)
    return m


def vstack(b, c, strategy, out="csr"):
    """The kernel of ``VST`` for the scipy operands ``b`` and ``c`` and its result, checked against
    scipy's vstack (its stored zeros dropped) by the kernel and by the IR interpreter."""
    tb, tc = ss.Tensor.from_scipy(b, name="B"), ss.Tensor.from_scipy(c, name="C")
    k = ss.lower(VST, strategy=strategy, B=tb, C=tc, D=out)
    want = sp.vstack([b, c], format="csr").toarray()
    for got in (k(B=tb, C=tc), k.interpret(B=tb, C=tc)):
        np.testing.assert_array_equal(got.to_numpy(), want)
        vals = got.to_coords()[1]
        assert len(vals) == np.count_nonzero(want != 0) and not np.any(vals == 0.0)
    return k, k(B=tb, C=tc)


ROW = [(0, 1.5), (2, -2.0), (3, 4.0), (5, nan)]
CASES = {
    "plain": ([ROW, [(1, 1.0)]], [[(0, 3.0), (4, 5.0)], ROW]),
    "empty rows at the seam": ([ROW, [], []], [[], [], [(1, 2.0)]]),
    "top has no rows": ([], [ROW, [(2, 1.0)]]),
    "bottom has no rows": ([ROW, [(2, 1.0)]], []),
    "neither has rows": ([], []),
    "all rows empty": ([[], []], [[], [], []]),
    "one row each": ([ROW], [[(5, 7.0)]]),
    "a stored zero in the top": ([ROW, [(0, 0.0), (1, 1.0)]], [ROW]),
    "a stored -0.0 at the seam": ([ROW], [[(0, -0.0)], ROW]),
    "unsorted rows": ([[(3, 1.0), (0, 2.0)], ROW], [[(5, 1.0), (1, -1.0)]]),
}


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_csr_vstack_against_scipy(strategy, case, index_dtype):
    top, bottom = CASES[case]
    b, c = csr(top, index_dtype=index_dtype), csr(bottom, index_dtype=index_dtype)
    if case == "unsorted rows":
        b.has_sorted_indices = c.has_sorted_indices = False
    k, got = vstack(b, c, strategy)
    assert k.c_source.count(SPAN) == 2


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_an_output_of_either_index_dtype(strategy, index_dtype):
    b, c = csr(CASES["plain"][0]), csr(CASES["plain"][1], index_dtype=np.int64)
    k, got = vstack(b, c, strategy, parse_format("csr", index_dtype=index_dtype))
    assert {lvl.index_dtype.name for lvl in k.formats["D"].levels if getattr(lvl, "index_dtype", None)} == {index_dtype}
    assert k.c_source.count(SPAN) == 2


def _spans(function):
    """The ``if (n_dropped == 0)`` of each row span in ``function``'s IR: the rows counted, else appended."""
    return [n for n in walk(function.body) if isinstance(n, If) and n.otherwise is not None
            and isinstance(n.cond, BinOp) and n.cond.op == "==" and isinstance(n.cond.left, Var)
            and n.cond.left.name.startswith("n_dropped")]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_each_operand_is_copied_with_one_block_copy(strategy):
    b, c = csr([ROW] * 3), csr([[(1, 2.0)]] * 4)
    k, _ = vstack(b, c, strategy)
    fn = k.lowered.function
    spans = _spans(fn)
    assert len(spans) == 2
    for branch, operand in zip(spans, "BC"):
        # the counting branch copies nothing (a loop over the rows, no loop over entries, no store of a value
        # or index); the other appends the rows one by one
        stores = {n.buffer for n in walk(branch.then) if isinstance(n, Store)}
        assert stores <= {"D1_pos"}
        assert not any(isinstance(n, While) and "1_pos" not in str(n.cond) and n.cond.right != Var(f"{operand}0_size")
                       for n in walk(branch.then))
        assert any(isinstance(n, Store) and n.buffer == "D_val" for n in walk(branch.otherwise))
    # one SIMD loop per operand reads its values and indices from the operand's first position on
    c_src = k.c_source
    for operand in "BC":
        copy = re.findall(rf"D_val\[\w+ \+ t(?:_\d+)?\] = {operand}_val\[(\w+)_first \+ t(?:_\d+)?\];", c_src)
        assert len(copy) == 1, copy
        assert re.search(rf"D1_idx\[\w+ \+ t(?:_\d+)?\] = (?:\(int32_t\)\(int64_t\))?{operand}1_idx\[{copy[0]}_first", c_src)
    assert any(s.stage == "row-spans" for s in k.trace.steps)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_coo_output_stores_each_rows_coordinate_and_keeps_its_rows(strategy):
    # (each entry stores its row: the entries' stores read the row, so no span)
    k, _ = vstack(csr([ROW, []]), csr([[(1, 1.0)]]), strategy, "coo")
    assert SPAN not in k.c_source and not _spans(k.lowered.function)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_hstack_and_a_strided_slice_keep_their_rows(strategy):
    b = ss.Tensor.from_scipy(csr([ROW, [(1, 1.0)]]), name="B")
    for program, tensors in (("D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)", dict(B=b, C=b)),
                             ("D[k, i] = slice(B[j, i], j -> k, (0, 2, 2))", dict(B=b))):
        k = ss.lower(program, strategy=strategy, D="csr", **tensors)
        assert SPAN not in k.c_source


@settings(max_examples=15, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([0.0, -0.0, 1.0, -2.5, nan])), max_size=6),
                max_size=6),
       st.integers(0, 6), st.sampled_from(STRATEGIES))
@example([[(0, 1.0)] * 1, [(2, 0.0), (3, 1.0)]], 1, "looplets")    # (a stored zero in the second operand)
@example([[], [(1, 1.0)], []], 0, "lattice")                       # (the top empty, empty rows about the seam)
def test_a_vstack_of_random_rows(rows, cut, strategy):
    rows = [sorted(dict(r).items()) for r in rows]      # (one entry a column, sorted)
    cut = min(cut, len(rows))
    vstack(csr(rows[:cut]), csr(rows[cut:]), strategy)


# --- the pass itself, on the IR --------------------------------------------------------------

Q, N, J = Var("qB"), Var("n"), Var("j")
DTYPES = {"D_val": "float64", "B_val": "float64"}


def _append(*, row_read=False):
    stored = Var("j") if row_read else Load("B_val", Q)
    return While(BinOp("<", Q, Var("qB_stop")), [Grow("D_val", N + 1), Store("D_val", N, stored),
                                                  If(Load("D_val", N).ne(0.0), [CompoundAssign("+", N, 1)]),
                                                  CompoundAssign("+", Q, 1)])


def _rows(start=0, extra=(), append=None):
    return For(J, start, Var("B0_size"), [Declare(Q, "int64", Load("B1_pos", J)),
                                          Declare(Var("qB_stop"), "int64", Load("B1_pos", BinOp("+", J, Const(1, "int64")))),
                                          *extra, append or _append(), Store("D1_pos", J + 1, N)])


def test_the_pass_spans_rows_and_keeps_them_for_a_dropped_value():
    out = row_spans([_rows()], DTYPES)
    assert len(out) == 1 + 2 + 4 + 1 and isinstance(out[-1], If)   # (the count, the grow, the SIMD loop)
    assert out[-1].otherwise.body == (_rows(),)
    assert str(out[1]) == "int64 qB_first = B1_pos[0];"
    assert str(out[2]) == "int64 n_span = (0 < B0_size ? B1_pos[B0_size] : qB_first) - qB_first;"


@pytest.mark.parametrize("loop", [
    _rows(start=1),                                                       # (not from the first row)
    _rows(extra=[Store("E", J, Const(1.0, "float64"))]),                  # (something else a row does)
    _rows(append=_append(row_read=True)),                                 # (an entry stores its row)
    For(J, 0, Var("B0_size"), [Declare(Q, "int64", Load("B1_pos", J + 2)),   # (rows not consecutive)
                               Declare(Var("qB_stop"), "int64", Load("B1_pos", J + 3)), _append()]),
    For(J, 0, Var("B0_size"), [Declare(Q, "int64", Load("B1_pos", J)),       # (a count stored where the append
                               Declare(Var("qB_stop"), "int64", Load("B1_pos", J + 1)),   # left its position)
                               _append(), Store("D1_pos", Q, N)]),
])
def test_what_is_no_run_of_rows_is_left_as_it_is(loop):
    assert row_spans([loop], DTYPES) == [loop]


def test_a_loop_the_caller_leaves_is_left_as_it_is():
    assert row_spans([_rows()], DTYPES, leave={"qB_stop"}) == [_rows()]
