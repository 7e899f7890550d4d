"""The dense reference evaluator against hand-written numpy, and its fill inference."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.user_functions import user_function
from compiler.errors import DTypeError, ShapeError
from compiler.notation import accesses, parse
from compiler.notation.ast import Index
from compiler.reference import EvaluationError, evaluate

rng = np.random.default_rng(0)
INF = math.inf


class FakeTensor:
    """What compiler.tensor.Tensor looks like to the oracle."""

    def __init__(self, array, fill):
        self.array, self.fill = np.asarray(array), fill
        self.dtype, self.shape = self.array.dtype, self.array.shape

    def to_numpy(self):
        return self.array


def sparse(shape, density=0.4, fill=0.0, dtype=float):
    a = rng.integers(-5, 6, size=shape).astype(dtype)
    mask = rng.random(shape) < density
    return np.where(mask, a, np.asarray(fill, dtype=dtype))


def test_spmv_and_spgemm():
    A, x, B = sparse((4, 5)), sparse((5,)), sparse((5, 3))
    y, f = evaluate("y[i] = A[i, j] * x[j]", A=A, x=x)
    np.testing.assert_allclose(y, A @ x)
    assert f == 0.0
    C, f = evaluate("C[i, j] = A[i, k] * B[k, j]", A=A, B=B)
    np.testing.assert_allclose(C, A @ B)
    Ct, _ = evaluate("C[j, i] = A[i, k] * B[k, j]", A=A, B=B)
    np.testing.assert_allclose(Ct, (A @ B).T)


def test_mttkrp_and_ttv():
    B, C, D = sparse((3, 4, 5)), sparse((5, 2)), sparse((4, 2))
    A, _ = evaluate("A[i, j] = B[i, k, l] * C[l, j] * D[k, j]", B=B, C=C, D=D)
    np.testing.assert_allclose(A, np.einsum("ikl,lj,kj->ij", B, C, D))
    c = sparse((5,))
    T, _ = evaluate("A[i, j] = B[i, j, k] * c[k]", B=B, c=c)
    np.testing.assert_allclose(T, np.einsum("ijk,k->ij", B, c))


def test_reductions():
    A = sparse((4, 6), density=0.8)
    np.testing.assert_allclose(evaluate("y[i] = sum(A[i, j])", A=A)[0], A.sum(1))
    np.testing.assert_allclose(evaluate("y[j] = min(A[i, j])", A=A)[0], A.min(0))
    np.testing.assert_allclose(evaluate("s = max(A[i, j])", A=A)[0], A.max())
    np.testing.assert_allclose(evaluate("s[] max= A[i, j]", A=A)[0], A.max())
    np.testing.assert_allclose(evaluate("y[i] = prod[j](A[i, j])", A=A)[0], A.prod(1))
    np.testing.assert_allclose(evaluate("m = max[i](min[j](A[i, j]))", A=A)[0], A.min(1).max())
    b = A > 0
    assert evaluate("y[i] = any(b[i, j])", b=b)[0].tolist() == b.any(1).tolist()
    assert evaluate("y[i] = all(b[i, j])", b=b)[0].tolist() == b.all(1).tolist()
    assert evaluate("y[i] |= b[i, j]", b=b)[0].tolist() == b.any(1).tolist()
    y, f = evaluate("s = sum(b[i, j])", b=b)
    assert y == b.sum() and y.dtype == np.int64 and f == 0


def test_min_plus_with_fill_inf():
    # E-T7 MinPlusRing from the sparse-array-programming note
    B = np.full((5, 4), INF)
    for (i, j), v in {(0, 1): 3, (1, 1): 4, (1, 2): 2, (3, 2): 5, (4, 3): 1}.items():
        B[i, j] = v
    c = np.full(4, INF)
    c[1], c[2] = 1, 6
    a, f = evaluate("a[i] = min[j](B[i, j] + c[j])", B=FakeTensor(B, INF), c=FakeTensor(c, INF))
    assert a.tolist() == [4, 5, INF, 11, INF] and f == INF
    a2, _ = evaluate("a[i] min= B[i, j] + c[j]", B=FakeTensor(B, INF), c=FakeTensor(c, INF))
    assert a2.tolist() == a.tolist()


def test_elementwise_with_nonzero_fills():
    a = np.array([3, 0, 4, 0, 2]); b = np.array([1, 5, 4, 1, 2])
    r, f = evaluate("c[i] = a[i] ^ b[i]", a=FakeTensor(a, 0), b=FakeTensor(b, 1))
    assert r.tolist() == (a ^ b).tolist() and f == 1
    m = np.array([1.5, 2.0, 2.0]); e = np.array([1, 3, 0])
    r, f = evaluate("c[i] = ldexp(m[i], e[i])", m=FakeTensor(m, 2.0), e=FakeTensor(e, 3))
    assert r.tolist() == np.ldexp(m, e).tolist() and f == 16.0
    r, f = evaluate("c[i] = pow(m[i], e[i])", m=FakeTensor(m, 2.0), e=FakeTensor(e, 3))
    assert r.tolist() == (m ** e).tolist() and f == 8.0
    # masked power with output fill (E-C4)
    B = np.array([0, 2, 0, 3, 0, 2]); C = np.array([0, 3, 2, 0, 0, 2]); D = np.array([0, 0, 0, 0, 1, 1])
    r, f = evaluate("A[i] = pow(B[i], C[i]) * !D[i]", B=B, C=C, D=D)
    assert r.tolist() == [1, 8, 0, 1, 0, 0] and f == 1
    # max with identity fill (E-C3): result fill 42
    A = np.array([-INF, 50, -INF, 10, -INF]); B2 = np.array([42.0, 42, 7, 42, 100])
    r, f = evaluate("c[i] = max(A[i], B[i])", A=FakeTensor(A, -INF), B=FakeTensor(B2, 42.0))
    assert r.tolist() == [42, 50, 7, 42, 100] and f == 42.0


def test_einsum_per_term_rule():
    A, x, d = sparse((3, 4)), sparse((4,)), np.array([10.0, 20.0, 30.0])
    y, _ = evaluate("y[i] = A[i, j] * x[j] + d[i]", A=A, x=x, d=d)
    np.testing.assert_allclose(y, A @ x + d)  # d added once, not once per j
    y, _ = evaluate("y[i] = A[i, j] - d[i]", A=A, d=d)
    np.testing.assert_allclose(y, A.sum(1) - d)
    y, _ = evaluate("y[i] = (A[i, j] - d[i]) * 1", A=A, d=d)
    np.testing.assert_allclose(y, (A - d[:, None]).sum(1))


def test_broadcasting_and_diagonal():
    A, x = sparse((3, 4)), sparse((4,))
    B, _ = evaluate("B[i, j] = A[i, j] + x[j]", A=A, x=x)
    np.testing.assert_allclose(B, A + x)
    S = sparse((4, 4))
    t, _ = evaluate("t = S[i, i]", S=S)
    assert t == np.trace(S)
    out, _ = evaluate("Y[i, j] = x[i]", x=x, Y=np.zeros((4, 2)))  # the given output fixes j
    np.testing.assert_allclose(out, np.repeat(x[:, None], 2, 1))
    lit, f = evaluate("y[i] = x[i] * 0 + 2.5", x=x)
    assert lit.tolist() == [2.5] * 4 and f == 2.5


def test_zero_d_outputs_and_updates():
    x = np.arange(5)
    assert evaluate("s = x[i]", x=x)[0].shape == ()
    s, f = evaluate("s[] += x[i] * x[i]", x=x, s=np.int64(100))
    assert s == 100 + (x * x).sum() and f == 100
    y, f = evaluate("y[i] *= x[i]", x=x, y=FakeTensor(np.full(5, 2), 2))
    assert y.tolist() == (2 * x).tolist() and f == 0
    y, f = evaluate("y[i] *= x[i]", x=FakeTensor(x, 1))
    assert y.tolist() == x.tolist() and f == 1  # starts at the identity
    y, _ = evaluate("y[i] <<choose(0)>>= B[i, j] * j1[j]", B=np.array([[0, 2, 3], [0, 0, 0]]), j1=np.array([1, 1, 1]))
    assert y.tolist() == [2, 0]
    with pytest.raises(EvaluationError, match="needs an initial y: operator overwrite has no identity"):
        evaluate("y[i] <<overwrite>>= x[i]", x=x)
    y, _ = evaluate("y[i] <<overwrite>>= x[i]", x=x, y=np.zeros(5, dtype=np.int64))
    assert y.tolist() == x.tolist()


def test_user_functions():
    gcd = user_function("gcd", math.gcd, "return 0;", identity=0, commutative=True, associative=True)
    b = np.array([0, 12, 0, 7, 0, 0, 9, 0]); c = np.array([0, 18, 5, 0, 0, 0, -6, 0])
    d = np.array([0, 15, 15, 0, 0, 0, 1, 0])
    r, f = evaluate("a[i] = gcd(b[i], c[i]) & d[i]", functions={"gcd": gcd}, b=b, c=c, d=d)
    assert r.tolist() == [0, 6, 5, 0, 0, 0, 1, 0] and f == 0  # E-C1
    A = np.array([[12, 18, 30], [7, 14, 0]])
    r, f = evaluate("y[i] = gcd(A[i, j])", functions={"gcd": gcd}, A=A)
    assert r.tolist() == [6, 7] and f == 0


def test_shape_errors():
    with pytest.raises(ShapeError, match=r"index j has extent 4 in A\[i, j\] \(mode 1\) but 5 in x\[j\] \(mode 0\)"):
        evaluate("y[i] = A[i, j] * x[j]", A=np.ones((3, 4)), x=np.ones(5))
    with pytest.raises(ShapeError, match=r"index i has extent 3 in A\[i, i\] \(mode 0\) but 4 in A\[i, i\] \(mode 1\)"):
        evaluate("t = A[i, i]", A=np.ones((3, 4)))
    with pytest.raises(ShapeError, match=r"A\[i, j, k\] has 3 indices but A has 2 mode\(s\) \(shape \(3, 4\)\)"):
        evaluate("y[i] = A[i, j, k]", A=np.ones((3, 4)))
    with pytest.raises(ShapeError, match=r"output index j of y\[i, j\] appears in no access on the right side"):
        evaluate("y[i, j] = x[i]", x=np.ones(3))
    with pytest.raises(ShapeError, match=r"index i has extent 3 in x\[i\] \(mode 0\) but 4 in y\[i\]"):
        evaluate("y[i] += x[i]", x=np.ones(3), y=np.ones(4))
    with pytest.raises(EvaluationError, match="tensor z .* was not given; given tensors: A, x"):
        evaluate("y[i] = A[i, j] * z[j]", A=np.ones((3, 4)), x=np.ones(4))


def test_dtype_errors_name_the_tensor():
    with pytest.raises(DTypeError, match=r"operator \^ \(bitxor\) does not accept float64 \(argument 1\).*tensor b has dtype float64"):
        evaluate("c[i] = a[i] ^ b[i]", a=np.ones(3, dtype=int), b=np.ones(3))
    with pytest.raises(DTypeError, match=r"ldexp .*tensor e has dtype float64"):
        evaluate("c[i] = ldexp(m[i], e[i])", m=np.ones(3), e=np.ones(3))
    with pytest.raises(DTypeError, match="tensor a: dtype float16 is not supported"):
        evaluate("c[i] = a[i]", a=np.ones(3, dtype=np.float16))
    with pytest.raises(DTypeError, match="tensor a: fill value inf does not fit its dtype int64"):
        evaluate("c[i] = a[i]", a=FakeTensor(np.ones(3, dtype=np.int64), INF))
    with pytest.raises(DTypeError, match=r"bitor.*float64 .*in the update of y\[i\]"):
        evaluate("y[i] |= x[i]", x=np.ones(3, dtype=bool), y=np.ones(3))


def test_dtypes_follow_operators():
    i32 = np.ones(3, dtype=np.int32)
    assert evaluate("c[i] = a[i] + a[i]", a=i32)[0].dtype == np.int32
    assert evaluate("c[i] = a[i] / a[i]", a=i32)[0].dtype == np.float64
    assert evaluate("c[i] = a[i] < 2", a=i32)[0].dtype == np.bool_
    assert evaluate("c[i] = a[i] * 2", a=i32)[0].dtype == np.int64  # literals are int64
    f32 = np.ones(3, dtype=np.float32)
    r, f = evaluate("c[i] = sqrt(a[i])", a=f32)
    assert r.dtype == np.float32 and f.dtype == np.float32


def test_accepts_parsed_program_and_empty_extent():
    a = parse("y[i] = A[i, j]")
    y, f = evaluate(a, A=np.ones((2, 0)))
    assert y.tolist() == [0.0, 0.0] and f == 0.0
    y, f = evaluate("y[i] = min(A[i, j])", A=np.ones((2, 0)))
    assert y.tolist() == [INF, INF] and f == INF


# -- fill inference agrees with evaluating on all-fill inputs -------------------------

PROGRAMS = [
    "y[i] = A[i, j] * x[j] + d[i]",
    "y[i] = min[j](A[i, j] + x[j])",
    "y[i] = max(A[i, j]) - x[i]",
    "y[i] = A[i, j] / (x[j] + 1)",
    "y[i] = pow(d[i], 2) * sum(A[i, j])",
    "s = prod(x[j]) + max(A[i, j])",
    "y[i] = min(d[i], x[i]) + 1.5",
    "y[i] = (A[i, j] < x[j]) or d[i] == 0",
]
fills = st.one_of(st.sampled_from([0.0, 1.0, -1.0, INF, -INF, 2.5]),
                  st.floats(-4, 4, allow_nan=False))


@pytest.mark.parametrize("program", PROGRAMS)
@settings(max_examples=25, deadline=None)
@given(fa=fills, fx=fills, fd=fills, n=st.integers(0, 3), m=st.integers(0, 3))
def test_fill_inference_matches_all_fill_inputs(program, fa, fx, fd, n, m):
    ext = max(n, 1)
    tensors = dict(A=FakeTensor(np.full((ext, m), fa), fa), x=FakeTensor(np.full(m if "x[j]" in program else ext, fx), fx),
                   d=FakeTensor(np.full(ext, fd), fd))
    if "x[i]" in program:
        tensors["x"] = FakeTensor(np.full(ext, fx), fx)
        tensors["A"] = FakeTensor(np.full((ext, m), fa), fa)
    used = {a.tensor for a in accesses(parse(program).rhs)}
    tensors = {k: v for k, v in tensors.items() if k in used}
    result, fill = evaluate(program, **tensors)
    expected = np.full(result.shape, fill)
    if result.dtype.kind == "f":
        # sums of fills are computed as count * fill, numpy sums pairwise
        np.testing.assert_allclose(result, expected, rtol=1e-12, equal_nan=True)
    else:
        assert (result == expected).all()


def test_reduction_with_zero_extents_everywhere():
    import numpy as np

    from compiler.reference import evaluate as ev

    y, fill = ev("y[i] = A[i, j] * x[j]", A=np.zeros((0, 0)), x=np.zeros(0))
    assert y.shape == (0,)
    y, fill = ev("y[i] = A[i, j] * x[j]", A=np.zeros((3, 0)), x=np.zeros(0))
    assert (y == 0).all() and y.shape == (3,)


def test_expression_fill_without_extents_is_the_fill_whatever_the_extents_or_says_it_needs_them():
    from compiler.reference import NeedsExtents, expression_fill
    rhs = parse("y[i] = max[j](A[i, j])").rhs
    assert expression_fill(rhs, {"A": -np.inf}, None) == -np.inf      # the identity, over any count
    with pytest.raises(NeedsExtents, match=r"has a fill only for given extents of j"):
        expression_fill(rhs, {"A": 1.0}, None)                        # 1 over rows, the identity over none
    with pytest.raises(NeedsExtents):
        expression_fill(parse("y[i] = A[i, j]").rhs, {"A": 2.0}, None)
    assert expression_fill(parse("y[i] = A[i, j]").rhs, {"A": 2.0}, {Index("j"): 3}) == 6.0
