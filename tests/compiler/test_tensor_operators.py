"""numpy's operators and methods on a Tensor (compiler.tensor_operators): each computed by one kernel of the array
language, a Tensor, against numpy on the Tensor's dense array, over formats, fills (NaN and ±inf among the stored
values too), shapes with empty axes, and all-fill tensors."""

import operator

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st

import compiler
from compiler import Tensor, tensor_operators
from compiler.errors import ShapeError, UsageError

nan, inf = np.nan, np.inf
A = np.array([[0.0, 2.0, 0.0, -1.0], [1.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 5.0]])


def same(got, want):
    """``got`` a Tensor holding numpy's ``want`` (NaN where numpy's is, its shape and dtype)."""
    assert isinstance(got, Tensor), type(got)
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want.shape, want.dtype)
    np.testing.assert_array_equal(got.to_numpy(), want)


#: (name, the operation on a Tensor or a numpy array ``a``, a vector ``v`` of its last extent)
UNARY = [("T", lambda a, v: a.T), ("mT", lambda a, v: a.mT), ("neg", lambda a, v: -a), ("pos", lambda a, v: +a),
         ("abs", lambda a, v: abs(a)), ("row", lambda a, v: a[1]), ("column", lambda a, v: a[:, 2]),
         ("strided", lambda a, v: a[::-2, 1::2]), ("new axis", lambda a, v: a[None, :, -1]),
         ("reshape", lambda a, v: a.reshape(2, 6)), ("reshape tuple", lambda a, v: a.reshape((-1,))),
         ("sum", lambda a, v: a.sum(axis=0)), ("prod", lambda a, v: a.prod(axis=1)),
         ("min", lambda a, v: a.min(axis=1)), ("max", lambda a, v: a.max(axis=0)),
         ("any", lambda a, v: a.any(axis=1)), ("all", lambda a, v: a.all(axis=0)),
         ("astype", lambda a, v: a.astype(np.float32)),
         ("add", lambda a, v: a + v), ("radd", lambda a, v: v + a), ("sub scalar", lambda a, v: a - 2.0),
         ("rsub scalar", lambda a, v: 2.0 - a), ("mul", lambda a, v: a * a), ("truediv", lambda a, v: a / 2.0),
         ("rtruediv", lambda a, v: 1.0 / (a + 3.0)), ("floordiv", lambda a, v: a // 2.0), ("mod", lambda a, v: a % 3.0),
         ("pow", lambda a, v: a ** 2), ("rpow", lambda a, v: 2.0 ** a), ("lt", lambda a, v: a < v),
         ("le", lambda a, v: a <= 0.0), ("gt", lambda a, v: a > v), ("ge", lambda a, v: a >= 1.0),
         ("matmul", lambda a, v: a @ v), ("rmatmul", lambda a, v: v[:3] @ a), ("gram", lambda a, v: a @ a.T)]


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense"])
@pytest.mark.parametrize("name, op", UNARY, ids=[u[0] for u in UNARY])
def test_each_operator_on_a_tensor_is_numpys_as_a_tensor(name, op, fmt):
    t, v = Tensor.from_numpy(A, fmt), np.array([1.0, -1.0, 0.5, 2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        same(op(t, v), op(A, v))


def test_integer_and_boolean_operators():
    m = np.array([[0, 6, 0], [3, 0, -4]], dtype=np.int64)
    t = Tensor.from_numpy(m, "csr")
    for op in (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift):
        same(op(t, 2), op(m, 2))
        if op not in (operator.lshift, operator.rshift):
            same(op(3, t), op(3, m))
    same(~t, ~m)
    b = Tensor.from_numpy(m > 0, "csr")
    same(~b, ~(m > 0))
    same(b & (t < 5), (m > 0) & (m < 5))


def test_a_tensor_with_scipy_and_pydata_operands():
    t = Tensor.from_numpy(A, "csr")
    same(t + sp.csr_matrix(A), A + A)
    same(t * sp.csc_array(A), A * A)
    same(t.T @ sp.csr_array(A), A.T @ A)


def test_equality_is_identity_and_a_tensor_is_not_iterable():
    """== keeps a Tensor usable as a key (compiler.array.equal compares entries); iterating is refused, not run
    past the first axis by the sequence protocol."""
    t, u = Tensor.from_numpy(A, "csr"), Tensor.from_numpy(A, "csr")
    assert t == t and t != u and {t: 1}[t] == 1 and t in [u, t]
    same(compiler.array.equal(t, u).compute(), A == A)
    with pytest.raises(TypeError, match="not iterable"):
        iter(t)
    assert t.size == 12 and Tensor.from_numpy(np.zeros((0, 3)), "csr").size == 0


def test_bad_operands_are_named_in_the_users_terms():
    t = Tensor.from_numpy(A, "csr")
    with pytest.raises(ShapeError, match=r"\(3, 4\) and \(3,\)"):
        t + np.ones(3)
    with pytest.raises(ShapeError, match="matmul"):
        t @ t
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(ShapeError):
        t.reshape(5, 3)
    with pytest.raises(TypeError):
        t + "a"


def test_without_the_array_language_an_operator_says_what_to_import(monkeypatch):
    monkeypatch.setattr(tensor_operators, "ASARRAY", [])
    with pytest.raises(UsageError, match="import compiler.array"):
        Tensor.from_numpy(A, "csr").T


_VALUES = [0.0, 1.0, -2.5, 3.0, nan, inf, -inf]


@st.composite
def tensors(draw):
    """(numpy array, Tensor of it): a format, a fill (NaN and ±inf among them), a shape with empty axes, values
    drawn with NaN and ±inf, and a density from none stored to all."""
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=2, max_size=2)))
    fmt = draw(st.sampled_from(["csr", "csc", "coo", "dcsr", "dense"]))
    fill = 0.0 if fmt == "dense" else draw(st.sampled_from([0.0, 1.0, nan, inf]))
    density = draw(st.sampled_from([0.0, 0.5, 1.0]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    a = np.where(rng.random(shape) < density, rng.choice(_VALUES, size=shape), fill)
    return a, Tensor.from_numpy(a, fmt, fill=fill)


_PROPERTY = [lambda a: a.T, lambda a: -a, lambda a: a * 2.0 + 1.0, lambda a: a[::-1, ::2], lambda a: a.sum(axis=1),
             lambda a: a.max(axis=0) if a.shape[0] else a.sum(axis=0), lambda a: a.reshape(-1), lambda a: a > 0.5,
             lambda a: a @ a.T, lambda a: abs(a) ** 0.5]


@settings(max_examples=40, deadline=None)
@given(tensors(), st.integers(0, len(_PROPERTY) - 1))
@example((np.full((0, 3), nan), Tensor.from_numpy(np.full((0, 3), nan), "csr", fill=nan)), 4)   # (an empty sum)
def test_operators_by_property(case, k):
    a, t = case
    with np.errstate(all="ignore"):
        same(_PROPERTY[k](t), _PROPERTY[k](a))
