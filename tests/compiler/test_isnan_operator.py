"""The ``isnan`` operator of the notation: one node, so ``isnan(e)`` of a computed ``e`` computes ``e`` once.
The array front end built ``e != e`` before, which computed ``e`` twice (two reductions for ``isnan(A @ x)``).
Each case against numpy, by the dense oracle, both strategies' kernels and the IR interpreter."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from compiler import array as xp
from compiler.algebra import lookup
from compiler.values import ANY, ANY_COMPLEX, FINITE, of_call

STRATEGIES = ["lattice", "looplets"]
NAN, INF = float("nan"), float("inf")
DTYPES = ["float64", "float32", "complex128", "complex64", "int64", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_isnan_is_a_bool_operator_in_numpys_terms(dtype):
    op = lookup("isnan")
    assert op.arity == 1 and op.result_dtype(dtype) == np.dtype(bool)
    values = np.array([0, 1, 2]).astype(dtype)
    if np.dtype(dtype).kind in "fc":
        values = np.array([0.0, NAN, INF, complex(1, NAN) if np.dtype(dtype).kind == "c" else -INF]).astype(dtype)
    np.testing.assert_array_equal(op(values), np.isnan(values))
    # C's isnan takes no complex value (either part NaN makes v != v), and an integer is never NaN
    want = {"f": "isnan(a)", "c": "(a != a)"}.get(np.dtype(dtype).kind, "false")
    assert op.c_expr(["a"], dtype) == want
    assert of_call(op, [ANY_COMPLEX if np.dtype(dtype).kind == "c" else ANY], result_dtype=bool) == FINITE


def test_isnan_parses_prints_and_is_its_fills_function():
    x = Tensor.from_numpy(np.array([NAN, 1.0, NAN, NAN]), "sparse_vector", fill=NAN, name="x")
    program = "c[i] = isnan(x[i])"
    for strategy in STRATEGIES:
        k = ss.lower(program, strategy=strategy, x=x)
        assert str(k.program) == program
        out = k(x=x)
        assert out.fill == True and out.to_numpy().tolist() == [True, False, True, True]   # noqa: E712


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_isnan_of_a_computed_value_in_every_dtype(strategy, dtype):
    # inf * 0 is NaN: found only by computing the product; an integer product is never NaN
    kind = np.dtype(dtype).kind
    if kind in "fc":
        a = np.array([[INF, 0, 2], [NAN, 1, 0]]).astype(dtype)
        b = np.array([[0, 3, INF], [1, 0, -INF]]).astype(dtype)
    else:
        a, b = np.array([[1, 0, 2], [0, 1, 1]]).astype(dtype), np.array([[0, 3, 1], [1, 0, 1]]).astype(dtype)
    A, B = Tensor.from_numpy(a, "csr", name="A"), Tensor.from_numpy(b, "dense", name="B")
    program = "C[i, j] = isnan(A[i, j] * B[i, j])"
    with np.errstate(all="ignore"):
        want = np.isnan(a * b)
    k = ss.lower(program, strategy=strategy, A=A, B=B)
    for got in (k(A=A, B=B).to_numpy(), k.interpret(A=A, B=B).to_numpy(), evaluate(program, A=A, B=B)[0]):
        assert got.dtype == bool
        np.testing.assert_array_equal(got, want)
    if kind not in "fc":   # (never NaN: no call left in the C)
        assert "isnan(" not in k.c_source


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_isnan_of_a_product_reduces_once(strategy):
    a = sp.random(30, 20, density=0.2, format="csr", random_state=1)
    a.data[:3] = [INF, -INF, NAN]
    x = np.linspace(-1.0, 1.0, 20)
    x[::7] = 0.0   # (inf * 0 in some rows)
    e = xp.isnan(xp.asarray(a) @ xp.asarray(x))
    k = ss.lower(e, strategy=strategy)
    assert str(k.program).count("sum[") == 1, k.program
    with np.errstate(all="ignore"):
        want = np.isnan(a.toarray() @ x)
    assert want.any() and not want.all()
    np.testing.assert_array_equal(e.compute(strategy=strategy).to_numpy(), want)


VALUES = [0.0, 1.0, -2.5, INF, -INF, NAN]
FILLS = [0.0, 1.0, INF, -INF, NAN]
EXPRESSIONS = {
    "x * y": lambda x, y, m: m.isnan(x * y),
    "x - y": lambda x, y, m: m.isnan(x - y),
    "sum(x * y, axis=1)": lambda x, y, m: m.isnan(m.sum(x * y, axis=1)),
    "max(x, axis=0)": lambda x, y, m: m.isnan(m.max(x, axis=0)) if x.shape[0] else m.isnan(x[:, 0] if x.ndim else x),
    "x @ y.T": lambda x, y, m: m.isnan(m.matmul(x, m.permute_dims(y, (1, 0)))),
    "reshape(x)": lambda x, y, m: m.isnan(m.reshape(x, (-1,)) / 2.0),
}


@st.composite
def isnan_cases(draw):
    rows, cols = draw(st.integers(0, 4)), draw(st.integers(1, 4))
    arrays = []
    for _ in range(2):
        fill = draw(st.sampled_from(FILLS))
        density = draw(st.sampled_from([0.0, 0.5, 1.0]))
        vals = draw(st.lists(st.sampled_from(VALUES), min_size=rows * cols, max_size=rows * cols))
        stored = draw(st.lists(st.floats(0, 1), min_size=rows * cols, max_size=rows * cols))
        a = np.array([v if s < density else fill for v, s in zip(vals, stored)], dtype=float).reshape(rows, cols)
        arrays.append((a, draw(st.sampled_from(["dense", "csr", "csc", "coo"])), fill))
    return draw(st.sampled_from(sorted(EXPRESSIONS))), arrays


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=isnan_cases())
@example(case=("sum(x * y, axis=1)", [(np.array([[INF, 1.0]]), "csr", 0.0), (np.array([[0.0, 2.0]]), "coo", 0.0)]))
def test_isnan_of_array_expressions_matches_numpy(strategy, case):
    name, arrays = case
    (a, fa, fill_a), (b, fb, fill_b) = arrays
    x = xp.asarray(Tensor.from_numpy(a, fa, fill=fill_a))
    y = xp.asarray(Tensor.from_numpy(b, fb, fill=fill_b))
    with np.errstate(all="ignore"):
        want = np.asarray(EXPRESSIONS[name](a, b, np))
    got = EXPRESSIONS[name](x, y, xp).compute(strategy=strategy)
    assert got.dtype == bool and got.shape == want.shape
    np.testing.assert_array_equal(got.to_numpy(), want)
