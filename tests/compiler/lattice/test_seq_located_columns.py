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
from compiler.lattice.seqlattice import build_seq_lattice
from compiler.lattice.sequences import Intersect, Level, Union
from tests.compiler.constant_read_cases import FILLS, lowered_once, oracle_checked

nan, inf = np.nan, np.inf
#: formats whose first level is located by coordinate (their columns become stand-ins), and two whose is not
ROWS_LOCATED = ["csr", "dense", "Dense(SparseHash(Element({f})))", "Dense(SparseByteMap(Element({f})))",
                "Dense(SparseBand(Element({f})))"]
WALKED = ["coo", "csc", "dcsr"]
#: formats whose first level is walked, with each kind of level under it (its row's column located under the walk)
WALKED_ROWS = ["SparseList(SparseHash(Element({f})))", "SparseList(SparseByteMap(Element({f})))",
               "SparseList(SparseBand(Element({f})))", "SparseList(Dense(Element({f})))",
               "SparseList(RunList(Element({f})))"]
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


def test_where_one_matrix_rows_are_walked_the_loop_walks_them_once():
    # (B's rows are walked, its three columns each a walk of them that runs out with the others: one loop over B's
    # rows, no switch; before, a switch on which of B's columns were there, each case locating A's columns)
    rng = np.random.default_rng(7)
    A, B = (np.where(rng.random((9, 3)) < 0.5, rng.standard_normal((9, 3)), 0.0) for _ in range(2))
    a, b = xp.asarray(ss.Tensor.from_numpy(A, "csr")), xp.asarray(ss.Tensor.from_numpy(B, "coo"))
    k = check(xp.linalg.cross(a, b), np.cross(A, B))
    cfir = k.trace.find("cfir")[0].after_text
    assert cfir.startswith("while i <- i_B\n") and "switch" not in cfir, cfir
    # (each of the six columns located once a row: A's by a search of its row, B's by a search of the segment of
    # its row that the loop's cursor is at, no search for the row)
    assert len(re.findall(r"lower_bound_int\d+\(", k.c_source)) == 1 + 3 + 3, k.c_source
    segment = r"int64_t (end_\d+) = pB0_seg;\n.*lower_bound_int64\(B0_idx1, pB0, \1, 2\)"
    assert re.search(segment, k.c_source), k.c_source


@pytest.mark.parametrize("fmts", [("coo", "coo"), ("dcsr", "coo"), ("coo", "dcsr"), ("dcsr", "dcsr")])
def test_issue_30_the_cross_product_of_two_coo_matrices_walks_their_rows_once(fmts):
    # (each column was the rows where it is stored, i_A × 1_A[1:2]: a lattice of every subset of the six that can
    # meet, 83,242 lines of C lowered in 93 s for two COO matrices; now each column walks its matrix's rows, which
    # run out with its other columns' walks, and the folded walks are A's rows and B's once)
    rng = np.random.default_rng(7)
    A, B = (np.where(rng.random((9, 3)) < 0.5, rng.standard_normal((9, 3)), 0.0) for _ in range(2))
    a, b = (xp.asarray(ss.Tensor.from_numpy(x, f)) for x, f in zip((A, B), fmts))
    k = check(xp.linalg.cross(a, b), np.cross(A, B))
    rows, parts = lattices(k)
    assert rows.splitlines()[:2] == ["lattice of i_A ∩ i_B", "p0 i_A ∩ i_B  (sub-points p0)"], rows
    assert len(k.c_source.splitlines()) < 500, len(k.c_source.splitlines())
    # (a NaN stored: a product of a missing entry is no longer 0, so the rows of either)
    A[2, 1] = B[5, 0] = nan
    a, b = (xp.asarray(ss.Tensor.from_numpy(x, f)) for x, f in zip((A, B), fmts))
    with np.errstate(all="ignore"):
        k = check(xp.linalg.cross(a, b), np.cross(A, B))
    assert lattices(k)[0].startswith("lattice of i_A ∪ i_B\n"), lattices(k)[0]
    # (its three points' cases each the one statement, every column located and tested in its row: one loop until
    # both ran out, not three loops of 5 cases, 863 lines)
    assert "one loop until all ran out" in lattices(k)[0] and len(k.c_source.splitlines()) < 400, lattices(k)[0]


@pytest.mark.parametrize("odd", [(-1.0, 6.0), (nan, -inf)])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_walks_of_rows_under_a_union_and_where_they_do_not_fold(fill, odd):
    # (a walk of A's rows on both sides of a union, i_A ∪ (i_B ∩ i_A): folded to A's rows; walked twice by one loop,
    # it moved its cursor twice a row)
    values = [[1.0, fill, 2.0], [fill, fill, fill], [odd[0], 3.0, odd[1]], [fill, 4.0, fill], [0.5, fill, 1.0]]
    (ta, a_), (tb, b_), (tc, c_) = (matrix(np.roll(values, r, axis=0).ravel(), 3, f, fill)
                                    for r, f in ((0, "coo"), (2, "dcsr"), (3, "coo")))
    a, b, c = xp.asarray(ta), xp.asarray(tb), xp.asarray(tc)
    with np.errstate(all="ignore"):
        k = check(a[:, 0] + b[:, 1] * a[:, 2], a_[:, 0] + b_[:, 1] * a_[:, 2])
        # ((i_A ∩ i_B) ∪ (i_A ∩ i_C): no ∪ or ∩ folds it to one walk of A's rows: two, which run out together)
        k2 = check(a[:, 0] * b[:, 1] + a[:, 2] * c[:, 0], a_[:, 0] * b_[:, 1] + a_[:, 2] * c_[:, 0])
    if fill == 0.0 and odd[0] == -1.0:    # (NaN and inf stored: a product of a missing entry is not 0)
        assert lattices(k)[0].startswith("lattice of i_A\n"), lattices(k)
        assert lattices(k2)[0].startswith("lattice of (i_A ∩ i_B) ∪ (i_A' ∩ i_C)\n"), lattices(k2)
        # (each case of its points is one statement, each column located and tested in its row: one loop until
        # all ran out)
        assert lattices(k2)[0].splitlines()[1].endswith("(sub-points p0; one loop until all ran out)"), lattices(k2)
        assert "switch" not in k2.trace.find("cfir")[0].after_text


def test_the_walks_of_one_matrix_run_out_together_in_its_lattice():
    # (the points where one of A's walks outlives the other are not built: three points, not five)
    a, a2 = (Level(name, 0, "compressed", 5, rows_of="A") for name in ("A", "A'"))
    b, c = (Level(name, 0, "compressed", 5) for name in "BC")
    text = build_seq_lattice(Union(Intersect(a, b), Intersect(a2, c))).text()
    assert "-[i_A]-> ∅" in text and "-[i_A']-> ∅" in text and text.count("\np") == 3, text


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
    # (a COO's and a DCSR's columns too, their rows walked: not a CSC's, whose columns are its first level)
    assert stand_ins == (fmt != "csc"), k.c_source


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


#: expressions of the columns of two matrices: on the lazy arrays and on numpy's
TWO = {"cross": (lambda a, b, k, m: xp.linalg.cross(a, b), lambda a, b, k, m: np.cross(a, b)),
       "a[:, k] * b[:, m] + a[:, m]": (lambda a, b, k, m: a[:, k] * b[:, m] + a[:, m],
                                       lambda a, b, k, m: a[:, k] * b[:, m] + a[:, m]),
       "maximum(a[:, k], b[:, m]) - a[:, m]": (lambda a, b, k, m: xp.maximum(a[:, k], b[:, m]) - a[:, m],
                                               lambda a, b, k, m: np.maximum(a[:, k], b[:, m]) - a[:, m]),
       "where(a[:, k] > b[:, m], a[:, m], b[:, k])": (lambda a, b, k, m: xp.where(a[:, k] > b[:, m], a[:, m], b[:, k]),
                                                      lambda a, b, k, m: np.where(a[:, k] > b[:, m], a[:, m], b[:, k])),
       "sum(a[:, k] * b[:, m])": (lambda a, b, k, m: xp.sum(a[:, k] * b[:, m]),
                                  lambda a, b, k, m: np.sum(a[:, k] * b[:, m])),
       # (two loops, each walking rows: a column at each)
       "outer(a[:, k], b[:, m])": (lambda a, b, k, m: a[:, k][:, None] * b[:, m][None, :],
                                   lambda a, b, k, m: a[:, k][:, None] * b[:, m][None, :]),
       "outer(a[:, k], a[:, m]) - b[:, m]": (lambda a, b, k, m: a[:, k][:, None] * a[:, m][None, :] - b[:, m],
                                             lambda a, b, k, m: a[:, k][:, None] * a[:, m][None, :] - b[:, m])}


@given(values=st.lists(st.sampled_from(VALUES + [0.0, 0.0]), min_size=0, max_size=24),
       fill=st.sampled_from([0.0, nan, 1.0]),
       fmts=st.tuples(*[st.sampled_from(WALKED + WALKED_ROWS + ["csr", "dense"])] * 2),
       name=st.sampled_from(sorted(TWO)), k=st.integers(0, 2), m=st.integers(0, 2), flip=st.booleans())
@example(values=[1.0, 0.0, 2.0, nan, 3.0, 0.0], fill=0.0, fmts=("coo", "coo"), name="cross", k=0, m=0, flip=False)
# (a walk of A's rows beside B's column, (i_A ∪ (1_B[1:2] × i_B)) ∩ i_A': not folded to i_A, which walks no B)
@example(values=[], fill=nan, fmts=("coo", "csc"), name="maximum(a[:, k], b[:, m]) - a[:, m]", k=0, m=1, flip=False)
@example(values=[1.0, 0.0, 2.0, nan, 3.0, 0.0, 4.0, 5.0, 6.0], fill=0.0, fmts=("coo", "coo"),
         name="outer(a[:, k], a[:, m]) - b[:, m]", k=1, m=2, flip=False)   # (each loop's column in its own walk)
def test_columns_of_two_matrices_whose_rows_are_walked_by_property(values, fill, fmts, name, k, m, flip):
    values = values[:len(values) // 3 * 3]
    (ta, a_), (tb, b_) = matrix(values, 3, fmts[0], fill), matrix(values[::-1] if flip else values, 3, fmts[1], fill)
    build, want = TWO[name]
    with np.errstate(all="ignore"):
        check(build(xp.asarray(ta), xp.asarray(tb), k, m), want(a_, b_, k, m))


@pytest.mark.parametrize("fmt", ["coo", "dcsr"])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_a_column_beside_every_row_is_one_loop(fmt, fill):
    # (a column of a matrix whose rows are walked, plus 1: the rows where the column may be stored and every row,
    # i_A ∪ U_i, whose two points' cases are one statement, the column located and tested where its walk is: one
    # merged loop until both ran out, not a loop over both and one over the rest)
    values = [1.0, fill, nan, fill, fill, fill, -inf, 2.0, fill, fill, 3.0, fill, fill, fill, 0.5]
    t, a_ = matrix(values, 3, fmt, fill)
    a = xp.asarray(t)
    with np.errstate(all="ignore"):
        k = check(a[:, 2] + 1, a_[:, 2] + 1)
    (text, *_) = lattices(k)
    # (of fill NaN, the result's fill is NaN + 1: the rows A does not walk are the result's fill, no loop)
    merged = ["lattice of i_A ∪ U_i", "p0 i_A ∪ U_i  (sub-points p0; one loop until all ran out)"]
    want = merged if fill == 0.0 else ["lattice of i_A", "p0 i_A  (sub-points p0)", "  -[i_A]-> ∅"]
    assert text.splitlines() == want, text
