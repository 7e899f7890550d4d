"""Cursors carried across an outer loop (compiler.looplets.carried): a split, a strided slice, a
collapse's read walk their sparse operand once, each row's search starting where the last row's
walk stopped; every kernel against numpy, the dense oracle and the IR interpreter, and the C's row
loop checked to declare no cursor of its own."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.imperative.ir import Declare, For, Load, Var
from compiler.imperative.traverse import walk
from compiler.levels import Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseRunList
from compiler.reference import evaluate

nan, inf = np.nan, np.inf

#: vector formats whose read walks a cursor (and dense, which has none to carry)
VECTORS = ["sparse", "dense", "coo", SparseRunList, RunList, SparseBand, SparseBlockList, SparseByteMap]
FILLS = [0.0, 1.0, nan, inf, -inf]
SLOW = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def vector(fmt, arr, fill):
    """``arr`` stored in vector format ``fmt`` (a shorthand or a level class) of fill ``fill``."""
    if isinstance(fmt, str):
        return ss.Tensor.from_numpy(arr, fmt, fill=fill)
    return ss.Tensor.from_numpy(arr, ss.Format(fmt(Element(fill))))


def check(program, out, want, **tensors):
    """The looplets kernel's result against ``want`` (numpy's), the oracle's and the interpreter's."""
    oracle, fill = evaluate(program, **tensors)
    np.testing.assert_array_equal(oracle, want)
    name = program.split("[")[0].strip()
    fmt = {} if out is None else {name: ss.parse_format(out, ndim=want.ndim, fill=fill.item())}
    k = ss.lower(program, "looplets", **tensors, **fmt)
    np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    return k


def row_loop(k):
    """The kernel's outermost for loop (over the rows)."""
    return next(n for n in walk(k.function.body) if isinstance(n, For))


def cursor_loads(node, array):
    """The cursors ``q`` of the loads ``array[q]`` under ``node``."""
    return {n.index.name for n in walk(node) if isinstance(n, Load) and n.buffer == array
            and isinstance(n.index, Var)}


@pytest.mark.parametrize("out", ["csr", "coo"])
def test_a_split_searches_each_row_from_the_cursor_the_last_row_left(out):
    """Fig. 25a/b: the cursor over c is declared once, before the loop over the rows, which loads no
    c0_pos of its own: row i's search for its first entry starts where row i - 1's walk stopped
    (before, each row declared qc = c0_pos[0] and searched the whole vector)."""
    v = np.zeros(60)
    v[[0, 7, 8, 13, 29, 30, 31, 59]] = [1, 2, 3, 4, 5, 6, 7, 8]
    c = ss.Tensor.from_numpy(v, "sparse", name="c")
    k = check("D[i, j] = split(c[k], k -> (i, j:6))", out, v.reshape(10, 6), c=c)
    rows = row_loop(k)
    assert not any(isinstance(n, Load) and n.buffer == "c0_pos" for n in walk(rows))
    searched = cursor_loads(rows, "c0_idx")
    declared = {n.var.name for n in walk(k.function.body) if isinstance(n, Declare)}
    declared_in_rows = {n.var.name for n in walk(rows) if isinstance(n, Declare)}
    assert "qc" in searched and "qc" in declared and "qc" not in declared_in_rows
    step = next(s for s in k.trace.steps if s.stage == "carry")
    assert "c" in step.note and "on j" in step.note


def test_a_strided_slice_of_a_sparse_vector_carries_its_cursor_up_a_reversed_one_down():
    v = np.array([0, 1.0, 0, 2.0, 3.0, 0, 0, 4.0, 0, 5.0, 6.0, 0])
    a = ss.Tensor.from_numpy(v, "sparse", name="a")
    fwd = check("s[k] = slice(a[j], j -> k, (1, 11, 3))", "sparse", v[1:11:3], a=a)
    assert any(s.stage == "carry" for s in fwd.trace.steps)
    assert not any(isinstance(n, Load) and n.buffer == "a0_pos" for n in walk(row_loop(fwd)))
    # (a negative step: the cursor starts at the fiber's end and gallops down, where each element
    # searched the fiber from its start before)
    back = check("s[k] = slice(a[j], j -> k, (10, 0, -3))", "sparse", v[10:0:-3], a=a)
    assert any(s.stage == "carry" and "(down)" in s.note for s in back.trace.steps)
    assert not any(isinstance(n, Load) and n.buffer == "a0_pos" for n in walk(row_loop(back)))
    assert "qa = seek_back_int64(a0_idx, qa - 1, qa_lo - 1, " in back.c_source


def test_a_split_times_a_csr_matrix_skips_rows_and_still_finds_each_rows_entries():
    """The rows the intersection with B skips leave the cursor behind: the next row's search
    starts from it and goes forward."""
    v = np.array([0, 1.0, 0, 2.0, 3.0, 0, 0, 4.0, 0, 5.0, 6.0, 7.0, 0, 0, 8.0, 9.0])
    B = np.array([[1.0, 0, 0, 2.0], [0, 0, 0, 0], [0, 3.0, 0, 4.0], [5.0, 0, 6.0, 7.0]])
    k = check("C[i, j] = split(b[k], k -> (i, j:4)) * B[i, j]", "csr", v.reshape(4, 4) * B,
              b=ss.Tensor.from_numpy(v, "sparse"), B=ss.Tensor.from_numpy(B, "csr"))
    assert any(s.stage == "carry" for s in k.trace.steps)


def test_a_collapse_plus_a_sparse_vector_reads_the_vector_in_one_pass():
    A = np.array([[0, 1.5, 0, 4.0], [2.0, 0, 3.0, 0], [0, 0, 0, 0]])
    v = np.array([0, 1.0, 0, 0, 2.0, 3.0, 0, 0, 0, 4.0, 0, 5.0])
    k = check("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", "sparse", A.ravel() + v,
              A=ss.Tensor.from_numpy(A, "csr"), b=ss.Tensor.from_numpy(v, "sparse"))
    assert any(s.stage == "carry" and "b" in s.note for s in k.trace.steps)


def test_each_row_of_a_matrix_split_restarts_at_its_own_fiber():
    """The cursor over A's row h is carried across i inside h only: it is declared in h's loop."""
    A = np.array([[0, 1.0, 2.0, 0, 0, 3.0], [4.0, 0, 0, 0, 5.0, 0], [0, 0, 0, 0, 0, 0]])
    check("C[h, i, j] = split(A[h, k], k -> (i, j:3))", "dense", A.reshape(3, 2, 3),
          A=ss.Tensor.from_numpy(A, "csr"))


@SLOW
@given(st.data(), st.integers(0, 5), st.integers(1, 5), st.sampled_from(VECTORS), st.sampled_from(FILLS),
       st.sampled_from(["csr", "coo", "dense"]))
@example(data=None, n=3, m=4, fmt="sparse", fill=nan, out="coo")
@example(data=None, n=0, m=3, fmt=SparseRunList, fill=inf, out="csr")
def test_a_split_of_any_vector_in_any_format(data, n, m, fmt, fill, out):
    if data is None:
        v = np.full(n * m, fill)
        v[::3] = np.arange(len(v[::3])) + 1.0
    else:
        cells = data.draw(st.lists(st.sampled_from([fill, fill, 0.0, 1.0, -2.0, nan, inf, -inf, -0.0]),
                                   min_size=n * m, max_size=n * m))
        v = np.array(cells, dtype=float)
    check(f"C[i, j] = split(b[k], k -> (i, j:{m}))", out, v.reshape(n, m), b=vector(fmt, v, fill))


@SLOW
@given(st.data(), st.integers(0, 12), st.sampled_from(VECTORS), st.sampled_from(FILLS), st.sampled_from([-3, -1, 1, 2, 3]))
def test_a_strided_slice_of_any_vector_in_any_format(data, n, fmt, fill, step):
    cells = data.draw(st.lists(st.sampled_from([fill, 0.0, 1.0, -2.0, nan, inf]), min_size=n, max_size=n))
    v = np.array(cells, dtype=float)
    if step > 0:
        start = data.draw(st.integers(0, n))
        stop = data.draw(st.integers(start, n))
    else:
        stop = data.draw(st.integers(-1, max(-1, n - 1)))
        start = data.draw(st.integers(stop, max(stop, n - 1)))
    check(f"s[k] = slice(a[j], j -> k, ({start}, {stop}, {step}))", "sparse", v[list(range(start, stop, step))],
          a=vector(fmt, v, fill))


LOOPS = '''
def k(y, x):
    y[...] = 0
    for i in range(3):
        for j in range(4):
            y[i, j] = x[j + i * STRIDE]
'''
LOOP_BETWEEN = '''
def k(y, x):
    y[...] = 0
    for i in range(3):
        for h in range(2):
            for j in range(4):
                y[i, j] += x[j + i * STRIDE]
'''


@pytest.mark.parametrize("source, stride, carried", [
    (LOOPS, 2, False),         # overlapping windows: row i + 1 rereads what row i walked past
    (LOOPS, 4, True),          # each window starts where the last ended
    (LOOPS, 5, True),          # gaps between the windows
    (LOOPS, 0, False),         # the same window every row
    (LOOP_BETWEEN, 4, False),  # each window walked twice (once per h)
])
def test_a_loop_programs_cursor_is_carried_only_where_the_windows_ascend(source, stride, carried):
    from compiler.looplets import loop_program
    x = np.array([0, 1.0, 0, 2.0, 3.0, 0, 0, 4.0, 5.0, 0, 6.0, 7.0, 0, 8.0])
    X = ss.Tensor.from_numpy(x, "sparse")
    k = ss.lower(loop_program(source=source.replace("STRIDE", str(stride))), strategy="looplets", y="dense", x=X)
    times = 2 if source is LOOP_BETWEEN else 1
    want = np.array([[times * x[j + stride * i] for j in range(4)] for i in range(3)])
    np.testing.assert_array_equal(k(x=X).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(x=X).to_numpy(), want)
    assert any(s.stage == "carry" for s in k.trace.steps) == carried


LOOPS_DOWN = '''
def k(y, x):
    y[...] = 0
    for i in range(3):
        for j in range(4):
            y[i, j] = x[j + (2 - i) * STRIDE]
'''


@pytest.mark.parametrize("stride, carried", [
    (4, True),    # each window ends where the next one (the last row's) starts: walked down the fiber
    (5, True),    # gaps between them
    (2, False),   # overlapping windows: row i + 1 rereads what row i's walk passed
])
@pytest.mark.parametrize("fmt", ["sparse", "coo", SparseByteMap, SparseBlockList, RunList, SparseRunList])
def test_a_loop_programs_cursor_is_carried_down_where_the_windows_descend(stride, carried, fmt):
    # (COO and byte map fibers say no way down: each window searched from the fiber's start; a block list's
    # and a run list's gallop down their ends, test_carried_levels)
    x = np.array([0, 1.0, nan, 2.0, 3.0, 0, 0, 4.0, -inf, 0, 6.0, 7.0, 0, 8.0])
    X = vector(fmt, x, 0.0)
    from compiler.looplets import loop_program
    k = ss.lower(loop_program(source=LOOPS_DOWN.replace("STRIDE", str(stride))), strategy="looplets", y="dense", x=X)
    want = np.array([[x[j + (2 - i) * stride] for j in range(4)] for i in range(3)])
    np.testing.assert_array_equal(k(x=X).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(x=X).to_numpy(), want)
    assert any(s.stage == "carry" for s in k.trace.steps) == (carried and fmt not in ("coo", SparseByteMap)), k.trace


@pytest.mark.parametrize("fmt", ["dcsr", "coo", "csr"])
@pytest.mark.parametrize("rows, fill", [([[1.0, 2.0]], 1.0), ([[0.0, 0.0, 0.0, -3.0]], 0.0),
                                        ([[0.0, 5.0], [0.0, 0.0], [7.0, 0.0]], 0.0)])
def test_a_reversed_slice_of_sparse_rows_seeks_down_before_its_first_row(fmt, rows, fill):
    # (the rows' cursor is carried down from the fiber's end; the first window starts at coordinate 0,
    # where a cursor from the fiber's start needs no seek: that skip read one past A0_idx on main,
    # and max(a[::-1]) of the one-row [[1, 2]] stored at fill 1 gave 1)
    a = np.array(rows)
    A = ss.array.asarray(ss.Tensor.from_numpy(a, ss.parse_format(fmt, ndim=2, fill=fill)))
    for got, want in ((ss.array.max(A[::-1], axis=1), a[::-1].max(axis=1)), (A[::-1] * 2, a[::-1] * 2)):
        k = got.lower(strategy="looplets")
        np.testing.assert_array_equal(k().to_numpy(), want)
        np.testing.assert_array_equal(k.interpret().to_numpy(), want)


@pytest.mark.parametrize("level", [RunList, SparseRunList, "csr"])
@pytest.mark.parametrize("fill", [0.0, 1.0])
def test_an_output_fiber_written_through_a_strided_slice_is_carried_across_its_windows(level, fill):
    # (``a[:, ::2] * 2`` writes ``out[i, t + j]`` in a one-step loop t under j: the output's fiber was
    # opened and closed at every j, and a RunList's fill run up to the row's end was appended each time,
    # an invalid tensor (run 2 empty) on main. The fiber is now carried across j, as a read's cursor is)
    a = np.array([[1.0, 1.0, 1.0, 4.0, 0.0], [-3.0, 1.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    A = ss.array.asarray(ss.Tensor.from_numpy(a, "csr", fill=fill))
    fmt = ss.parse_format(level, ndim=2) if isinstance(level, str) else ss.Format(ss.levels.Dense(level(Element(0.0))))
    for got, want in ((A[:, ::2] * 2, a[:, ::2] * 2), (A[:, 1::3] + 1, a[:, 1::3] + 1)):
        k = got.lower(fmt, strategy="looplets")
        assert any(s.stage == "carry" and "out" in s.note for s in k.trace.steps), k.trace.stages()
        t = k()
        t.validate()
        np.testing.assert_array_equal(t.to_numpy(), want)


@pytest.mark.parametrize("fmt", ["sparse", SparseBlockList, RunList, SparseRunList])
@pytest.mark.parametrize("x", [[5.0], [0.0, 3.0], [2.0, 0.0, 0.0]])
def test_a_reversed_vector_whose_first_window_is_at_0_seeks_down_first(fmt, x):
    # (as the rows above, for each level that carries its cursor down)
    x = np.array(x)
    X = ss.array.asarray(vector(fmt, x, 0.0))
    k = (X[::-1] * 2).lower(strategy="looplets")
    np.testing.assert_array_equal(k().to_numpy(), x[::-1] * 2)
