"""The dense oracle on shape operators, against numpy, and shape inference (Fig. 9) with its errors."""

import re

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

from compiler.errors import ShapeError
from compiler.notation import parse
from compiler.notation.ast import Access, Index
from compiler.notation.infer import infer_shapes
from compiler.reference import evaluate

A = np.array([[0, 1.5, 0], [2.0, 0, 3.0]])          # the notes' S1 matrix
R = np.arange(24.0).reshape(4, 6)


def ev(text, **t):
    return evaluate(text, **t)[0]


def test_the_papers_semantics_examples():
    B = np.array([[0, 1.0, 0], [2.0, 0, 3.0]])
    # S1 / S2: row- and column-major collapse
    np.testing.assert_array_equal(ev("c[k] = collapse(B[i, j], (i, j) -> k)", B=B), [0, 1, 0, 2, 0, 3])
    np.testing.assert_array_equal(ev("c[k] = collapse(B[i, j], (j, i) -> k)", B=B), [0, 2, 1, 0, 0, 3])
    b = np.array([0, 7.0, 0, 0, 0, 0])
    # S3 / S4: coordinate 1 goes to (0, 1) row-wise, to (i=1, j=0) column-wise
    assert ev("c[i, j] = split(b[k], k -> (i, j:3))", b=b)[0, 1] == 7
    assert ev("c[i, j] = split(b[k], k -> (j, i:3))", b=b)[1, 0] == 7
    # S5, S7, S8
    np.testing.assert_array_equal(ev("c[i] = slice(b[j], j -> i, (2, 5, 1))", b=np.arange(8.0)), [2, 3, 4])
    C = np.array([[5.0, 6], [7, 8]])
    np.testing.assert_array_equal(ev("D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)", B=B, C=C),
                                  np.hstack([B, C]))
    x = np.zeros(8)
    x[[1, 2, 4, 7]] = [1, 2, 4, 7]
    np.testing.assert_array_equal(ev("c[i] = slice(x[j], j -> i, (1, 8, 3))", x=x), [1, 4, 7])


@pytest.mark.parametrize("text,expected", [
    ("c[k] = collapse(R[i, j], (i, j) -> k)", R.ravel()),
    ("c[k] = collapse(R[i, j], (j, i) -> k)", R.ravel(order="F")),
    ("P[p, q] = split(collapse(R[i, j], (i, j) -> k), k -> (p, q:8))", R.reshape(3, 8)),
    ("P[p, q] = split(collapse(R[i, j], (j, i) -> k), k -> (q, p:3))", R.reshape(3, 8, order="F")),
    ("D[i, l] = concat((R[i, j], R[i, k], R[i, m]), (j, k, m) -> l)", np.hstack([R, R, R])),
    ("D[l, i] = concat((R[j, i], R[k, i]), (j, k) -> l)", np.vstack([R, R])),
    ("B[k, i] = slice(R[j, i], j -> k, (1, 4, 2))", R[1:4:2]),
    ("B[i, k] = slice(R[i, j], j -> k, (5, -1, -2))", R[:, 5::-2]),
    ("B[i, k] = slice(R[i, j], j -> k, (4, 0, -3))", R[:, 4:0:-3]),
    ("B[i, k] = slice(R[i, j], j -> k, (3, 3, 1))", R[:, 3:3]),
    ("y[j] = R[2, j]", R[2]),
    ("s[] = R[3, 5]", R[3, 5]),
    ("Y[l, i] = broadcast(l:3, R[i, 0])", np.broadcast_to(R[:, 0], (3, 4))),
    ("D[l] = sum[i](concat((R[j, i], R[k, i]), (j, k) -> l) * broadcast(l, x[i]))", np.vstack([R, R]) @ np.arange(6.0)),
    ("c[k] = collapse(R[i, j], (i, j) -> k) * b[k]", R.ravel() * np.arange(24.0)),
    ("s[] = sum[m](slice(collapse(R[i, j], (i, j) -> k), k -> m, (23, -1, -5)) * 1)", R.ravel()[23::-5].sum()),
])
def test_against_numpy(text, expected):
    got = ev(text, R=R, x=np.arange(6.0), b=np.arange(24.0))
    np.testing.assert_array_equal(got, expected)


def test_an_update_starts_from_the_given_output_and_the_fill_follows_the_operand():
    y = np.ones(6)
    got, fill = evaluate("y[k] += collapse(A[i, j], (i, j) -> k)", A=A, y=y)
    np.testing.assert_array_equal(got, 1 + A.ravel())
    from compiler import Tensor
    T = Tensor.from_numpy(np.where(A == 0, 2.0, A), "csr", fill=2.0)
    got, fill = evaluate("c[k] = collapse(T[i, j], (i, j) -> k) + 1", T=T)
    assert fill == 3.0
    np.testing.assert_array_equal(got, np.where(A == 0, 2.0, A).ravel() + 1)


def test_shape_inference_names_every_extent():
    info = infer_shapes(parse("c[k] = a[k] * collapse(B[i, j], (i, j) -> k)"), {"a": (6,), "B": (2, 3)})  # T1
    assert info.extents == {Index("k"): 6, Index("i"): 2, Index("j"): 3}
    assert info.output == (6,)
    # with formats only, extents are the runtime's extent entries
    info = infer_shapes(parse("D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)"), {"B": (("B", 0), ("B", 1)),
                                                                                       "C": (("C", 0), ("C", 1))})
    assert info.output == (("B", 0), ("+", ("B", 1), ("C", 1)))


@pytest.mark.parametrize("text,shapes,message", [  # T2: every premise of Fig. 9 that can fail
    ("c[k] = collapse(B[i, j], (i, k) -> k)", {"B": (2, 3)}, "index k is not an index of the operand"),
    ("c[i, k] = collapse(B[i, j, k], (i, j) -> k)", {"B": (2, 3, 4)},
     "result k is already an index of the operand"),
    ("c[k] = collapse(B[i, j], (i, j) -> k) + a[k]", {"B": (2, 3), "a": (5,)},
     "|k| = |i|·|j| = 2·3 = 6, but k has extent 5 in a[k] (mode 0)"),
    ("c[i] = a[i] + b[i]", {"a": (2,), "b": (3,)}, "index i has extent 2 in a[i] (mode 0) but 3 in b[i] (mode 0)"),
    ("c[i, l] = broadcast(i, a[i])", {"a": (2,)}, "new index i is already an index of the operand"),
    ("D[i, l] = concat((B[i, j], C[m, k]), (j, k) -> l)", {"B": (2, 3), "C": (2, 2)},
     "the operands' other indices differ: i in B[i, j] but m in C[m, k]"),
    ("D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)", {"B": (2, 3), "C": (4, 2)},
     "index i has extent 2 in B[i, j] (mode 0) but 4 in C[i, k] (mode 0)"),
    ("D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l) + E[i, l]", {"B": (2, 3), "C": (2, 2), "E": (2, 6)},
     "|l| = |j| + |k| = 5, but l has extent 6 in E[i, l] (mode 1)"),
    ("D[i, l] = concat((B[i, l], C[i, k]), (l, k) -> l)", {"B": (2, 3), "C": (2, 2)},
     "result l is already an index of the operand"),
    ("c[i, j] = split(b[k], k -> (i, j:4))", {"b": (10,)}, "|k| = 10 is not a multiple of |j| = 4"),
    ("c[i, j] = split(b[k], k -> (i:2, j:4))", {"b": (10,)}, "|k| = 10 but |i|·|j| = 2·4 = 8"),
    ("c[i, j] = split(b[k], k -> (i, j))", {"b": (10,)}, "the extent of j is undetermined"),
    ("c[k, j] = split(b[k], k -> (k, j:2))", {"b": (10,)}, "result k is already an index of the operand"),
    ("c[k] = slice(b[j], j -> k, (2, 11, 1))", {"b": (10,)},
     "the bounds (2, 11, 1) do not fit j, of extent 10: a slice needs normalized bounds, 0 <= start <= stop <= 10"),
    ("c[k] = slice(b[j], j -> k, (10, 2, -1))", {"b": (10,)}, "-1 <= stop <= start <= 9"),
    ("c[k] = slice(b[j], j -> k, (0, 4, 1)) + a[k]", {"b": (10,), "a": (3,)}, "|k| = ceil((4 - 0) / 1) = 4, but k"),
    ("c[l] = broadcast(l, b[j])", {"b": (10,)}, "the extent of l is undetermined"),
    ("y[j] = A[2, j]", {"A": (2, 3)}, "A[2, j]: constant index 2 is outside mode 0 of A (extent 2)"),
])
def test_shape_errors_name_the_operator_the_index_and_the_premise(text, shapes, message):
    with pytest.raises(ShapeError, match=re.escape(message)):
        infer_shapes(parse(text), shapes)


def test_evaluate_reports_shape_errors():
    with pytest.raises(ShapeError, match=re.escape("collapse(B[i, j], (i, j) -> k): |k| = |i|·|j|")):
        evaluate("c[k] = collapse(B[i, j], (i, j) -> k) + a[k]", B=np.ones((2, 3)), a=np.ones(5))


# -- properties: every operator against numpy over shapes, steps and empty results ------------------

dims = st.integers(0, 5)


@given(dims, dims, st.integers(-1, 6), st.integers(-1, 6), st.integers(-4, 4).filter(bool),
       st.sampled_from([0.0, 1.0, np.nan, np.inf]))
@example(4, 3, 3, -1, -1, 0.0)   # a full reversal
@example(0, 3, 0, 0, 1, 0.0)     # empty everything
@example(1, 0, -1, -1, -1, 0.0)  # (an empty slice whose start is -1: no wrap-around, where numpy's X[-1::-1] wraps)
def test_slices_match_numpy(n, m, start, stop, step, fill):
    X = np.arange(n * m, dtype=float).reshape(n, m)
    X[X % 3 == 0] = fill
    from compiler.notation.shape import Slice
    try:
        from compiler.notation.infer import check_slice_bounds
        check_slice_bounds(Slice(Access("X", "ji"), "j", "k", start, stop, step), n)
    except ShapeError:
        return     # (not normalized: refused, and said so by the inference tests)
    got = ev(f"B[k, i] = slice(X[j, i], j -> k, ({start}, {stop}, {step}))", X=X)
    # (the notation's bounds are normalized, never wrapped: the rows range(start, stop, step) names)
    want = X[list(range(start, stop, step))].reshape(len(range(start, stop, step)), m)
    np.testing.assert_array_equal(got, want)


@given(dims, dims, dims, st.booleans(), st.booleans())
def test_reshapes_and_concats_match_numpy(n, m, p, column_major, vertical):
    X = np.arange(n * m, dtype=float).reshape(n, m) - 3
    order = "F" if column_major else "C"
    text = "c[k] = collapse(X[i, j], (j, i) -> k)" if column_major else "c[k] = collapse(X[i, j], (i, j) -> k)"
    np.testing.assert_array_equal(ev(text, X=X), X.ravel(order=order))
    if m:
        v = X.ravel()
        np.testing.assert_array_equal(ev(f"Y[i, j] = split(v[k], k -> (i, j:{m}))", v=v), v.reshape(n, m))
    Y = np.arange(p * m, dtype=float).reshape(p, m)
    if vertical:
        got = ev("D[l, i] = concat((X[j, i], Y[k, i]), (j, k) -> l)", X=X, Y=Y)
        np.testing.assert_array_equal(got, np.vstack([X, Y]))
    else:
        got = ev("D[i, l] = concat((X.T[i, j], Y.T[i, k]), (j, k) -> l)".replace(".T", "t"), Xt=X.T, Yt=Y.T)
        np.testing.assert_array_equal(got, np.hstack([X.T, Y.T]))
