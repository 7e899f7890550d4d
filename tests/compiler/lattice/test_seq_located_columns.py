"""Columns read at a loop's index by the lattice's sequence lowering (compiler.lattice.seqlocated, issue 30):
``A[i, 1]`` of a matrix whose rows are located by coordinate (CSR, a Dense first level) is a 1-d stand-in,
located in row ``i`` by each statement reading it, so the loop over ``i`` walks no sequence for it. Before,
each column was ``i_A × 1_A[1:2]``, the rows where that column is stored, and a cross product's six
columns made a lattice of every subset of them that can meet: 73,349 lines of C lowered in 97 s. Checked
against numpy, the kernel's IR interpreter, the sequence CFIR's interpreter and (index notation) the dense
oracle; structure by the trace's lattices and the C's loops and searches."""

import re

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.lattice.seqderive import seq_evaluate
from tests.compiler.constant_read_cases import FILLS, lowered_once, oracle_checked

nan, inf = np.nan, np.inf
#: formats whose first level is located by coordinate (their columns become stand-ins), and two whose is not
ROWS_LOCATED = ["csr", "dense", "Dense(SparseHash(Element({f})))", "Dense(SparseByteMap(Element({f})))",
                "Dense(SparseBand(Element({f})))"]
WALKED = ["coo", "csc", "dcsr"]
VALUES = [-1.0, 2.0, -0.0, nan, inf, -inf, 0.5]
EXPRESSIONS = {
    "a[:, k] * a[:, m]": (lambda a, v, k, m: a[:, k] * a[:, m], lambda a, v, k, m: a[:, k] * a[:, m]),
    "a[:, k] - a[:, m] * v": (lambda a, v, k, m: a[:, k] - a[:, m] * v, lambda a, v, k, m: a[:, k] - a[:, m] * v),
    "a[:, k] * v": (lambda a, v, k, m: a[:, k] * v, lambda a, v, k, m: a[:, k] * v),
    "maximum(a[:, k], v)": (lambda a, v, k, m: xp.maximum(a[:, k], v), lambda a, v, k, m: np.maximum(a[:, k], v)),
    "sum(a[:, k] * a[:, m])": (lambda a, v, k, m: xp.sum(a[:, k] * a[:, m]),
                               lambda a, v, k, m: np.sum(a[:, k] * a[:, m])),
    "where(a[:, k] > v, a[:, m], v)": (lambda a, v, k, m: xp.where(a[:, k] > v, a[:, m], v),
                                       lambda a, v, k, m: np.where(a[:, k] > v, a[:, m], v)),
}


def matrix(values, ncols: int, fmt: str, fill):
    """``values`` (row by row, ``ncols`` a row) stored in ``fmt`` of fill ``fill``, and its array."""
    t = ss.Tensor.from_numpy(np.asarray(values, dtype=float).reshape(-1, ncols), fmt.format(f=fill), fill=fill)
    return t, t.to_numpy()


def check(expr, want):
    """``expr`` lowered by the lattice as one kernel, right by the kernel, the IR interpreter and the sequence
    CFIR's interpreter of its statement; the kernel."""
    k = lowered_once(expr, want, "lattice")
    chosen = k.trace.find("loop-order")
    data = chosen[-1].data if chosen else {}
    order = data.get("order", k.formats[k.program.lhs.tensor].mode_order)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(seq_evaluate(k.program, loop_order=order, hoisted=data.get("hoisted"),
                                                              **k.arguments)), want)
    return k


def lattices(k) -> list:
    """The text of each lattice of the kernel's sequence lowering."""
    return [a.text for s in k.trace.find("lattice") for a in s.artifacts if a.kind == "seq-lattice"]


def test_issue_30_the_cross_product_is_one_loop_over_the_rows():
    rng = np.random.default_rng(7)
    A, B = (np.where(rng.random((9, 3)) < 0.5, rng.standard_normal((9, 3)), 0.0) for _ in range(2))
    a, b = xp.asarray(ss.Tensor.from_numpy(A, "csr")), xp.asarray(ss.Tensor.from_numpy(B, "csr"))
    k = check(xp.linalg.cross(a, b), np.cross(A, B))
    # (main: 73,349 lines; each row's three components, each a loop of one coordinate)
    assert len(k.c_source.splitlines()) < 400, len(k.c_source.splitlines())
    # (the rows' lattice is one point, every row; the stack's is its three parts)
    rows, parts = lattices(k)
    assert rows.count("\np") == 1 and parts.count("\np") == 3, (rows, parts)
    # (six columns, each located once a row, at the top of the loop over the rows, which every part reads; no
    # block copy for the parts' runs of one entry)
    assert len(re.findall(r"lower_bound_int\d+\(", k.c_source)) == 1 + 6, k.c_source
    body = k.c_source.split("while (u_i")[1]
    assert body.index("B_i_2 =") < body.index("while (u_k") and "n_copy" not in body, k.c_source
    assert "A_i_1" in k.trace.find("seq-derive")[0].after_text


def test_where_the_rows_switch_cases_each_case_locates_its_columns_once():
    # (B's rows are walked: the loop over them switches on which of B's columns are there. Each case taken locates
    # the columns of A it reads once, at its top, not once for each part of the stack reading them: 55 searches, 45)
    rng = np.random.default_rng(7)
    A, B = (np.where(rng.random((9, 3)) < 0.5, rng.standard_normal((9, 3)), 0.0) for _ in range(2))
    a, b = xp.asarray(ss.Tensor.from_numpy(A, "csr")), xp.asarray(ss.Tensor.from_numpy(B, "coo"))
    k = check(xp.linalg.cross(a, b), np.cross(A, B))
    cfir = k.trace.find("cfir")[0].after_text
    assert "switch i" in cfir, cfir
    # (the columns of A each loop over the rows and each case of its switch reads)
    read, at = {}, None
    for n, line in enumerate(cfir.splitlines()):
        if line.startswith(("while", "  case")):
            at = n
        read.setdefault(at, set()).update(re.findall(r"A_i_\d", line))
    assert len(re.findall(r"lower_bound_int\d+\(", k.c_source)) == 1 + sum(map(len, read.values())), k.c_source


def test_a_column_times_a_sparse_vector_walks_the_vector():
    A = np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 3.0], [4.0, 5.0]])
    v_ = np.array([0.0, 0.0, 7.0, 1.0])
    a = xp.asarray(ss.Tensor.from_numpy(A, "csr"))
    v = xp.asarray(ss.Tensor.from_numpy(v_, "sparse"))
    k = check(a[:, 1] * v, A[:, 1] * v_)
    # (the intersection walks v's entries only, A's row located at each: no loop over every row)
    (text,) = lattices(k)
    assert "i_" in text and "U_i" not in text, text


# (each format of located rows with each expression; the walked ones, whose lowering is as before, with three)
@pytest.mark.parametrize("fmt, name", [(f, n) for f in ROWS_LOCATED for n in sorted(EXPRESSIONS)]
                         + [(f, n) for f in WALKED for n in sorted(EXPRESSIONS)[::2]])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_columns_of_each_format(fmt, fill, name):
    values = [1.0, fill, nan, fill, -inf, 2.0, fill, fill, fill, -0.0, 3.0, inf, fill, 0.5, fill]
    t, a_ = matrix(values, 3, fmt, fill)
    vt = ss.Tensor.from_numpy(np.array([fill, 2.0, -1.0, fill, inf]), "sparse", fill=fill)
    build, want = EXPRESSIONS[name]
    with np.errstate(all="ignore"):
        expected = want(a_, vt.to_numpy(), 2, 0)
    k = check(build(xp.asarray(t), xp.asarray(vt), 2, 0), expected)
    stand_ins = "A_i_2" in k.c_source or "_i_2 " in k.c_source
    assert stand_ins == (fmt in ROWS_LOCATED), k.c_source


@pytest.mark.parametrize("program", ["y[i] = A[i, 1] * b[i]", "y[i] = A[i, 2] - A[i, 0] + b[i]",
                                     "out[] = sum[i](A[i, 0] * A[i, 2])", "y[i] = max(A[i, 3], b[i]) - A[i, 3]",
                                     "C[i, j] = A[i, 1] * A[j, 2]"])
@pytest.mark.parametrize("fmt", ["csr", "dense", "coo", "csc"])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_index_notation_against_the_dense_oracle(program, fmt, fill):
    a_ = np.array([[fill, 2.0, nan, -1.0], [0.5, fill, -0.0, fill], [inf, 3.0, fill, fill]])
    A = ss.Tensor.from_numpy(a_, fmt, fill=fill)
    b = ss.Tensor.from_numpy(np.array([1.0, fill, -inf]), "sparse", fill=fill)
    oracle_checked(program, A=A, b=b)


@pytest.mark.parametrize("rows", [slice(None, None, -1), slice(1, 8, 2), slice(7, 0, -3), slice(4, 4), slice(-2, None)],
                         ids=["reversed", "1:8:2", "7:0:-3", "empty", "-2:"])
@pytest.mark.parametrize("fmt", ["csr", "Dense(SparseHash(Element({f})))"])
def test_slices_of_the_rows(rows, fmt):
    # (a slice's rows located at start + step * i: one stand-in a column, shared by the reads of it)
    values = [1.0, 0.0, nan, 0.0, -inf, 2.0, 0.0, 0.0, 0.0, -0.0, 3.0, inf, 0.0, 0.5, 0.0, 4.0, 0.0, -1.0,
              0.0, 0.0, 6.0, 2.0, 2.0, 0.0, 0.0, 1.0, 0.0]
    t, a_ = matrix(values, 3, fmt, 0.0)
    n = len(range(9)[rows])
    other, o_ = matrix(values[::-1][:n * 3], 3, "csr", 0.0)
    a, o = xp.asarray(t), xp.asarray(other)
    with np.errstate(all="ignore"):
        k = check(xp.linalg.cross(a[rows], o), np.cross(a_[rows], o_).reshape(n, 3))
        check(a[rows][:, 2] * a[rows][:, 0] - o[:, 1], a_[rows][:, 2] * a_[rows][:, 0] - o_[:, 1])
    if n:
        assert len(k.c_source.splitlines()) < 400, len(k.c_source.splitlines())
        derived = k.trace.find("seq-derive")[0].after_text
        assert derived.count("A_rev_i_" if (rows.step or 1) < 0 else "A_sl_i_") == 6, derived


def test_index_notation_of_a_sliced_column():
    a_ = np.array([[0.0, 2.0, nan], [0.5, 0.0, -0.0], [inf, 3.0, 0.0], [1.0, 0.0, 0.0]])
    A = ss.Tensor.from_numpy(a_, "csr")
    b = ss.Tensor.from_numpy(np.array([1.0, 0.0, -inf]), "sparse")
    for program in ["y[i] = slice(A[j, 1], j -> i, (3, 0, -1)) * b[i]",
                    "y[i] = slice(A[j, 0], j -> i, (1, 4, 1)) + slice(A[q, 0], q -> i, (0, 3, 1)) - b[i]"]:
        k = oracle_checked(program, A=A, b=b)
        assert "_sl_i_0" in k.c_source or "_rev_i_1" in k.c_source, k.c_source


@pytest.mark.parametrize("rows", [0, 1, 5])
def test_empty_and_all_fill_matrices(rows):
    full = np.where(np.arange(rows * 3).reshape(rows, 3) % 2, 0.0, -2.0)
    for values in (np.zeros((rows, 3)), full):
        a, b = (xp.asarray(ss.Tensor.from_numpy(x, "csr")) for x in (values, full.T[::-1].T))
        check(xp.linalg.cross(a, b), np.cross(values, full.T[::-1].T) + 0.0)


def test_a_3d_tensor_read_at_its_first_index():
    rng = np.random.default_rng(11)
    a_ = np.where(rng.random((4, 3, 5)) < 0.4, rng.choice([1.0, -2.0, nan, inf], (4, 3, 5)), 0.0)
    t = ss.Tensor.from_numpy(a_, "Dense(Dense(SparseList(Element(0.0))))")
    a = xp.asarray(t)
    with np.errstate(all="ignore"):
        k = check(a[:, 1, 4] * a[:, 2, 0] + a[:, 0, 0], a_[:, 1, 4] * a_[:, 2, 0] + a_[:, 0, 0])
    assert "while (u_i" in k.c_source, k.c_source


@given(values=st.lists(st.sampled_from(VALUES + [0.0]), min_size=3, max_size=12),
       fill=st.sampled_from(FILLS), fmt=st.sampled_from(ROWS_LOCATED[:3] + WALKED[:1]),
       name=st.sampled_from(sorted(EXPRESSIONS)), k=st.integers(-3, 2), m=st.integers(-3, 2),
       rows=st.sampled_from([slice(None), slice(None, None, -1), slice(1, None, 2), slice(-1, 0, -2)]))
@example(values=[0.0, 0.0, 0.0], fill=0.0, fmt="csr", name="a[:, k] * a[:, m]", k=0, m=-1, rows=slice(None))
# (a column read twice in one statement, a separate read beside the first: located once, not twice)
@example(values=[-1.0, -1.0, -1.0], fill=0.0, fmt="csr", name="a[:, k] - a[:, m] * v", k=0, m=0, rows=slice(None))
def test_columns_match_numpy(values, fill, fmt, name, k, m, rows):
    values = values[:len(values) // 3 * 3]
    t, a_ = matrix(values, 3, fmt, fill)
    n = len(range(len(values) // 3)[rows])
    vt = ss.Tensor.from_numpy(np.resize(np.array([fill, -1.0, inf, 0.0]), n), "sparse", fill=fill)
    build, want = EXPRESSIONS[name]
    with np.errstate(all="ignore"):
        expected = want(a_[rows], vt.to_numpy(), k, m)
    check(build(xp.asarray(t)[rows], xp.asarray(vt), k, m), expected)
