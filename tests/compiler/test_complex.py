"""complex64 and complex128 as value dtypes (issue 30): Tensors over complex numpy and scipy arrays (shared,
not copied), C99's ``double _Complex`` and ``float _Complex`` in the kernels of both strategies, the IR
interpreter and the dense oracle; complex fills (NaN + NaN j, an infinite part); the standard's promotion;
and the operators the standard leaves undefined for complex numbers refused by name."""

import json

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from compiler import array as xp
from compiler.errors import DTypeError

STRATEGIES = ["lattice", "looplets"]
NAN, INF = float("nan"), float("inf")
CNAN = complex(NAN, NAN)


def cmatrix(rng, shape, density, dtype=np.complex128, fill=0j):
    """A complex array holding small integer parts at about ``density`` of its positions, ``fill`` elsewhere."""
    a = (rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)).astype(dtype)
    a[rng.random(shape) >= density] = fill
    return a


def same(got, want, rtol=None):
    """Equal values (NaN parts where numpy has them) in numpy's dtype; complex64 and float32 results to
    float32's precision (C computes <complex.h>'s functions in double, numpy in float)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if rtol is None:
        rtol = 1e-6 if want.dtype in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)


def test_a_tensor_shares_a_complex_arrays_buffers():
    a = np.array([[1 + 2j, 0], [0, -3j]])
    s = sp.csr_matrix(a)
    t = Tensor.from_scipy(s)
    assert t.dtype == np.complex128 and np.shares_memory(t.vals, s.data)
    same(t.to_numpy(), a)
    assert Tensor.from_numpy(a.astype(np.complex64), "coo").dtype == np.complex64
    # (a fill may be complex, with NaN or infinite parts; a real dtype refuses a complex one)
    n = Tensor.from_numpy(np.array([CNAN, 1j, CNAN]), "sparse", fill=CNAN)
    assert n.nnz == 1 and np.isnan(n.fill)
    assert Tensor.from_numpy(np.array([1j, complex(-INF, 1)]), "sparse", fill=complex(-INF, 1)).nnz == 1
    with pytest.raises(DTypeError, match=r"fill value 1j is complex; float64 values are real"):
        Tensor.from_numpy(np.ones(2), "sparse", fill=1j)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("formats", [("csr", "coo"), ("dense", "csr")])
def test_elementwise_arithmetic_and_equality_match_numpy(strategy, formats):
    rng = np.random.default_rng(3)
    a = cmatrix(rng, (4, 5), 0.5)
    b = cmatrix(rng, (4, 5), 0.5, np.complex64)
    a[0, 1], a[2, 2], b[3, 0] = complex(INF, 1), complex(NAN, 0), complex(2, -INF)   # (non-finite stored values)
    A, B = Tensor.from_numpy(a, formats[0]), Tensor.from_numpy(b, formats[1])
    program = "C[i, j] = (A[i, j] + B[i, j]) * A[i, j] - B[i, j] / (B[i, j] + 2.0)"
    k = ss.lower(program, strategy=strategy, A=A, B=B)
    with np.errstate(all="ignore"):
        want = (a + b) * a - b / (b + np.float64(2.0))   # (a literal is float64 in the notation, not weak)
    assert want.dtype == np.complex128   # (the standard's promotion: complex64 with complex128)
    for got in (k(A=A, B=B).to_numpy(), k.interpret(A=A, B=B).to_numpy(), evaluate(program, A=A, B=B)[0]):
        same(got, want)
    assert "#include <complex.h>" in k.c_source and "const float _Complex *restrict B_val" in k.c_source
    eq = ss.einsum("C[i, j] = A[i, j] == -B[i, j]", A=A, B=B, strategy=strategy)
    same(eq.to_numpy(), a == -b)
    ne = ss.einsum("C[i, j] = A[i, j] != B[i, j]", A=A, B=B, strategy=strategy)
    same(ne.to_numpy(), a != b)


#: real and imaginary parts whose products and quotients take every path of numpy's formulas: zeros of either
#: sign, infinities, NaN, a value that overflows when multiplied, a subnormal
PARTS = (0.0, -0.0, 1.0, -2.5, INF, -INF, NAN, 1e308, 3e-310)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_products_and_quotients_of_infinite_and_nan_parts_are_numpys(strategy, dtype):
    """Every pair of values made of :data:`PARTS`: C's ``*`` rescues a product whose parts came out NaN from an
    infinite operand (``(inf + inf j) * -1j`` was ``inf - inf j``, numpy's ``nan + nan j``) and its ``/`` scales
    otherwise (a third of such quotients differed, 42% of random ones in the last digit); both now numpy's
    formulas (compiler.opimpls.c_cmul_helper, c_cdiv_helper), elementwise, in a product reduction (``*=``), and a
    real number divided by a complex one. A complex value times or over a real one too: the real made complex,
    as numpy's (C99 multiplies each part by it: ``(inf + 0j) * 2.0`` is ``inf + 0j`` in C, ``inf + nan j`` in
    numpy; the kernels and the oracle gave C's)."""
    with np.errstate(all="ignore"):
        values = np.array([complex(r, i) for r in PARTS for i in PARTS], dtype)
    a, b = np.repeat(values, len(values)), np.tile(values, len(values))
    A, B = Tensor.from_numpy(a, "dense"), Tensor.from_numpy(b, "dense")
    r = np.tile(np.array(PARTS), len(a) // len(PARTS))
    R = Tensor.from_numpy(r, "dense")
    with np.errstate(all="ignore"):
        for program, want in [("C[i] = A[i] * B[i]", a * b), ("C[i] = A[i] / B[i]", a / b),
                              ("C[i] = R[i] / A[i]", r / a)]:
            k = ss.lower(program, strategy=strategy, A=A, B=B, R=R)
            for got in (k(A=A, B=B, R=R).to_numpy(), k.interpret(A=A, B=B, R=R).to_numpy()):
                np.testing.assert_array_equal(got, want, err_msg=program)
        # (a real operand times or over a complex one: numpy's, the real made complex; each part of the result)
        for program, want in [("C[i] = A[i] * R[i]", a * r), ("C[i] = R[i] * A[i]", r * a),
                              ("C[i] = A[i] / R[i]", a / r)]:
            k = ss.lower(program, strategy=strategy, A=A, R=R)
            for got in (k(A=A, R=R).to_numpy(), k.interpret(A=A, R=R).to_numpy(), evaluate(program, A=A, R=R)[0]):
                for part in (np.real, np.imag):
                    np.testing.assert_array_equal(part(got), part(want), err_msg=program)
        m = a.reshape(len(values), len(values))[:, :4]
        M = Tensor.from_numpy(m, "dense")
        k = ss.lower("p[i] *= M[i, j]", strategy=strategy, M=M)
        np.testing.assert_array_equal(k(M=M).to_numpy(), np.prod(m, axis=1))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("fill", [1, complex(INF, 0), 0])
def test_a_complex_fill_or_literal_with_no_imaginary_part_times_a_real_infinity(strategy, fill):
    """A complex operand at its fill of ``1 + 0j`` times a real one is numpy's, the real made complex: ``(1 + 0j) *
    inf`` is ``inf + nan j``. The kernels dropped the factor (1 is no identity of a complex product) and spelled the
    constant as ``1.0``, which made the product real: ``inf + 0j``; so did ``inf + 0j``'s ``INFINITY * R``."""
    x = Tensor.from_numpy(np.array([1 + 1j, fill, fill, 2 - 1j, fill]), "sparse", fill=fill)
    r = np.array([2.0, INF, -INF, NAN, 0.0])
    R = Tensor.from_numpy(r, "sparse")
    xs = x.to_numpy()
    with np.errstate(invalid="ignore"):
        # (the literal times R: NaN and infinities of R in its real part, 0 * inf in its imaginary one)
        for program, want in [("y[i] = x[i] * R[i]", xs * r), ("y[i] = R[i] * x[i]", r * xs),
                              ("y[i] = R[i] * (1 + 0j) + x[i] * 0.0", r * (1 + 0j) + xs * 0.0)]:
            k = ss.lower(program, strategy=strategy, x=x, R=R)
            for got in (k(x=x, R=R).to_numpy(), k.interpret(x=x, R=R).to_numpy(), evaluate(program, x=x, R=R)[0]):
                np.testing.assert_array_equal(np.isnan(got.imag), np.isnan(want.imag), err_msg=program)
                np.testing.assert_array_equal(got, want, err_msg=program)


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(STRATEGIES), st.sampled_from([0, 1, complex(INF, 0), complex(NAN, 0), 1j, complex(-INF, 1)]),
       st.sampled_from(["sparse", "dense"]), st.sampled_from(["*", "/", "+", "-"]), st.booleans(),
       st.lists(st.sampled_from([0.0, 1.0, -2.5, INF, -INF, NAN]), min_size=6, max_size=6), st.integers(0, 2 ** 16))
def test_a_complex_operand_of_any_fill_beside_a_real_one_by_property(strategy, fill, fmt, symbol, swap, r, seed):
    """Kernels, their IR's interpreter and the dense oracle agree on a complex operand of any fill (infinite and NaN
    parts among its values and fills) beside a real one with infinities and NaN, either side of the operator."""
    rng = np.random.default_rng(seed)
    parts = np.array([0.0, 1.0, -2.0, INF, NAN])
    xs = np.empty(6, complex)   # (by parts: 1j * inf is nan + inf j)
    xs.real, xs.imag = rng.choice(parts, 6), rng.choice(parts, 6)
    xs[rng.random(6) < 0.4] = fill
    x = Tensor.from_numpy(xs, fmt, fill=fill)
    R = Tensor.from_numpy(np.array(r), "sparse")
    program = f"y[i] = R[i] {symbol} x[i]" if swap else f"y[i] = x[i] {symbol} R[i]"
    with np.errstate(all="ignore"):
        want = evaluate(program, x=x, R=R)[0]
        k = ss.lower(program, strategy=strategy, x=x, R=R)
        for got in (k(x=x, R=R).to_numpy(), k.interpret(x=x, R=R).to_numpy()):
            for part in (np.real, np.imag):
                np.testing.assert_array_equal(part(got), part(want), err_msg=program)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_spmv_and_reductions_of_a_scipy_complex_matrix(strategy):
    rng = np.random.default_rng(7)
    a = cmatrix(rng, (6, 5), 0.4)
    a[4] = 0   # (an empty row)
    S = sp.csr_matrix(a)
    x = (rng.random(5) + 1j * rng.random(5)).astype(np.complex64)
    k = ss.lower("y[i] += A[i, j] * x[j]", strategy=strategy, A=S, x=x)
    same(k(A=S, x=x).to_numpy(), S @ x)
    same(k.interpret(A=S, x=x).to_numpy(), S @ x)
    same(ss.einsum("s[] += A[i, j]", A=S, strategy=strategy).to_numpy(), a.sum())
    same(ss.einsum("p[i] *= A[i, j] + 1.0", A=S, strategy=strategy).to_numpy(), np.prod(a + 1.0, axis=1))
    # a real matrix times a complex vector: float64 with complex64 is complex128
    R = sp.random(6, 5, density=0.5, format="coo", random_state=2)
    same(ss.einsum("y[i] += A[i, j] * x[j]", A=R, x=x, strategy=strategy).to_numpy(), R @ x.astype(np.complex128))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_nan_fill_and_an_all_fill_operand(strategy):
    x = Tensor.from_numpy(np.array([1 + 1j, CNAN, 0, complex(INF, 0), CNAN]), "sparse", fill=CNAN)
    z = Tensor.from_numpy(np.full(5, complex(-INF, 1)), "sparse", fill=complex(-INF, 1))   # (stores nothing)
    assert z.nnz == 0
    xs = x.to_numpy()
    # (numpy makes 2.0 complex first: (inf + 0j) * 2.0 is inf + nan j, where C99's, each part times 2.0, is
    # inf + 0j; the kernels, the oracle, the interpreter and the fills are numpy's)
    with np.errstate(invalid="ignore"):
        twice = xs * 2.0
        assert np.isnan(twice[3].imag)
        cases = [("y[i] = x[i] * 2.0", twice), ("y[i] = x[i] + z[i]", xs + z.to_numpy()),
                 ("y[i] = conj(z[i]) * 1j", np.conj(z.to_numpy()) * 1j)]
    for program, want in cases:
        k = ss.lower(program, strategy=strategy, x=x, z=z)
        got = k(x=x, z=z)
        with np.errstate(all="ignore"):
            same(got.to_numpy(), want)
            same(k.interpret(x=x, z=z).to_numpy(), want)
            same(evaluate(program, x=x, z=z)[0], want)
    empty = Tensor.from_numpy(np.zeros((0, 3), np.complex64), "csr")
    assert ss.einsum("y[j] += A[i, j]", A=empty, strategy=strategy).to_numpy().tolist() == [0j, 0j, 0j]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_parts_abs_and_complex_math_run_complex_h(strategy):
    a = np.array([[1 + 2j, 0, -4 + 0j], [0, complex(NAN, 1), -1j]], dtype=np.complex64)
    A = Tensor.from_numpy(a, "csr")
    program = "C[i, j] = sqrt(A[i, j]) + exp(conj(A[i, j])) * abs(A[i, j]) + log(A[i, j] + 1.0) - imag(A[i, j]) + real(A[i, j])"
    k = ss.lower(program, strategy=strategy, A=A)
    with np.errstate(all="ignore"):
        want = np.sqrt(a) + np.exp(np.conj(a)) * np.abs(a) + np.log(a + np.float64(1.0)) - a.imag + a.real
    same(k(A=A).to_numpy(), want, rtol=1e-6)   # (from complex64 operands)
    same(k.interpret(A=A).to_numpy(), want, rtol=1e-6)
    assert all(f in k.c_source for f in ("csqrt(", "cexp(", "cabs(", "clog(", "cimag(", "creal(", "conj("))
    parts = ss.einsum("C[i, j] = abs(A[i, j]) + real(A[i, j])", A=A, strategy=strategy)
    assert parts.dtype == np.float32   # (a complex64's parts are float32)
    assert [ss.lookup(n).c_expr(["z"], "complex64") for n in ("real", "imag", "conj", "abs", "sqrt")] == \
        ["creal(z)", "cimag(z)", "conj(z)", "cabs(z)", "csqrt(z)"]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_expm1_log1p_log2_log10_and_round_of_complex_values_by_their_parts(strategy, dtype):
    # (<complex.h> has none of them: a helper computes each from the parts, as numpy does; round
    # rounds each part to the nearest, ties to even; a tiny value keeps its digits in expm1 and log1p)
    a = np.array([[1e-9 + 1e-9j, 0, 2.5 - 3.5j], [complex(INF, 1), complex(NAN, 0), -0.5 + 1.5j]], dtype=dtype)
    A = Tensor.from_numpy(a, "csr")
    program = "C[i, j] = expm1(A[i, j]) + log1p(A[i, j]) * 2j + log2(A[i, j] + 1.0) - log10(A[i, j] + 3.0)"
    k = ss.lower(program, strategy=strategy, A=A)
    with np.errstate(all="ignore"):
        # (the literals are double precision: a complex64 operand's sum is complex128, computed in float)
        want = np.expm1(a) + np.log1p(a) * 2j + np.log2(a + np.float64(1)) - np.log10(a + np.float64(3))
    rtol = 1e-6 if dtype == np.complex64 else None
    same(k(A=A).to_numpy(), want, rtol)
    same(k.interpret(A=A).to_numpy(), want, rtol)
    same(evaluate(program, A=A)[0], want, rtol)
    part = "double" if dtype == np.complex128 else "float"
    assert all(f"static inline {part} _Complex ss_{f}_{np.dtype(dtype).name}(" in k.c_source for f in ("expm1", "log1p"))
    assert all(f"static inline double _Complex ss_{f}_complex128(" in k.c_source for f in ("log2", "log10"))
    r = ss.lower("C[i, j] = round(A[i, j])", strategy=strategy, A=A)
    same(r(A=A).to_numpy(), np.round(a))
    assert np.round(a)[0, 2] == 2 - 4j   # (ties to even, each part)
    same(r.interpret(A=A).to_numpy(), np.round(a))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_function_of_finite_complex_values_is_not_taken_as_finite(strategy):
    # (sin(1000j) is 0 + inf j: a 0 of A times it is NaN, so the product cannot skip Z's entries where
    # A holds nothing; it did in both strategies, as for a real sin)
    z, a = np.array([1000j, 0, 1 + 1j, 0]), np.array([0, 0, 2.0, 1.0])
    Z, A = Tensor.from_numpy(z, "sparse"), Tensor.from_numpy(a, "sparse")
    k = ss.lower("y[i] = A[i] * sin(Z[i])", A=A, Z=Z, strategy=strategy)
    got = k(A=A, Z=Z).to_numpy()
    with np.errstate(invalid="ignore"):
        same(got, evaluate("y[i] = A[i] * sin(Z[i])", A=A, Z=Z)[0])
    assert np.isnan(got[0].imag)
    facts = next(s for s in k.trace.steps if s.stage == "value-facts")
    assert any(r.rule == "exact-path" for r in facts.rewrites)
    product = ss.lower("y[i] = A[i] * Z[i]", A=A, Z=Z, strategy=strategy)   # (a product of finite values still skips)
    steps = next(s for s in product.trace.steps if s.stage == "value-facts")
    assert {r.rule for r in steps.rewrites} == {"sparse-path"}
    same(product(A=A, Z=Z).to_numpy(), a * z)


def test_complex_constants_in_c_and_a_trace_round_trip():
    x = Tensor.from_numpy(np.array([1j, 0]), "sparse", fill=complex(NAN, -INF))
    k = ss.lower("y[i] = x[i] * 2j + 1.5", x=x, strategy="lattice")
    assert "CMPLX(0.0, 2.0)" in k.c_source and "1.5;" in k.c_source   # (a real part alone is a real literal)
    y = k(x=x)
    with np.errstate(invalid="ignore"):
        same(y.to_numpy(), x.to_numpy() * 2j + 1.5)
    k = ss.lower("y[i] = x[i] == z[i]", x=x, z=np.array([complex(NAN, -INF), 0]), strategy="looplets")
    assert "CMPLX(NAN, -INFINITY)" in k.c_source and "#include <math.h>" in k.c_source
    back = ss.Trace.from_json(k.trace.to_json())
    assert [s.stage for s in back.steps] == [s.stage for s in k.trace.steps]
    assert json.loads(k.trace.to_json()) == json.loads(back.to_json())   # (complex fills and literals kept)


@pytest.mark.parametrize("program, message", [
    ("C[i] = A[i] < B[i]", r"operator < \(lt\) is not defined for complex128 \(argument 0\)"),
    ("s[] max= A[i]", "operator max is not defined for complex128"),
    ("C[i] = floor(B[i])", "operator floor is not defined for complex64"),
    ("C[i] = A[i] % 2.0", r"operator % \(mod\) is not defined for complex128"),
    ("C[i] = astype(float64)(A[i])", r"astype\(float64\) of complex128: a complex value has no float64"),
])
def test_what_the_standard_leaves_undefined_for_complex_is_refused_by_name(program, message):
    a, b = np.array([1j, 2]), np.array([1, 1j], dtype=np.complex64)
    for strategy in STRATEGIES:
        with pytest.raises(DTypeError, match=message):
            ss.lower(program, strategy=strategy, A=a, B=b)


@settings(max_examples=8)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["csr", "coo", "dense"]), st.sampled_from([0j, CNAN]),
       st.sampled_from(STRATEGIES))
@example(0, "coo", CNAN, "looplets")
def test_a_fused_complex_expression_matches_numpy(seed, fmt, fill, strategy):
    rng = np.random.default_rng(seed)
    a = cmatrix(rng, (3, 4), 0.5, fill=fill)
    b = cmatrix(rng, (3, 4), 0.5, np.complex64)
    A, B = Tensor.from_numpy(a, fmt, fill=fill), Tensor.from_numpy(b, "csr")
    got = ss.einsum("y[i] += A[i, j] * conj(B[i, j]) - B[i, j]", A=A, B=B, strategy=strategy).to_numpy()
    with np.errstate(invalid="ignore"):
        same(got, (a * np.conj(b) - b).sum(axis=1))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_zero_times_a_complex_fill_with_a_nan_part_is_nan(strategy):
    """``a * (b - 1j)`` with a's fill 0 and b's ``nan + 0j``: where a is 0 and b its fill the product is
    ``0 * (nan - 1j)``, NaN. The looplets' simplifier took a complex literal for finite (only a float's
    NaN was looked at) and wrote 0 there."""
    a = np.array([[0, 0], [2.0, 0]], dtype=complex)
    b = np.array([[NAN, 3.0], [NAN, NAN]], dtype=complex)
    A, B = Tensor.from_numpy(a, "coo", fill=0j), Tensor.from_numpy(b, "coo", fill=complex(NAN, 0))
    with np.errstate(invalid="ignore"):
        got = np.asarray((xp.asarray(A) * (xp.asarray(B) - 1j)).compute(strategy=strategy))
        np.testing.assert_array_equal(got, a * (b - 1j))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_temporary_of_a_complex_nan_fill_is_not_annihilated(strategy):
    """``prod(A, axis=0) * sum(B, axis=0)`` with A's fill ``nan + 0j``: the product's workspace holds NaN
    where A is its fill, and ``nan * 0`` is NaN. The lattice looked for a float NaN or infinity among the
    fills (and literals) only, took the workspace for finite and wrote 0 where B's sum is 0."""
    a = np.array([[NAN, NAN, 0.5j]], dtype=complex)
    b = np.array([[-2.5, 0, 0]], dtype=complex)
    A, B = Tensor.from_numpy(a, "coo", fill=complex(NAN, 0)), Tensor.from_numpy(b, "csr", fill=0j)
    with np.errstate(invalid="ignore"):
        got = np.asarray((xp.prod(xp.asarray(A), axis=0) * xp.sum(xp.asarray(B), axis=0)).compute(strategy=strategy))
        np.testing.assert_array_equal(got, a.prod(axis=0) * b.sum(axis=0))


#: the operations drawn: complex products and quotients of two operands, with a complex constant
CPLX_OPS = [lambda a, b: a * b, lambda a, b: a / b, lambda a, b: a * b + a, lambda a, b: (a + 1j) / (b * (2 + 0.5j)),
            lambda a, b: a * (b - 1j)]


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.lists(st.sampled_from(["csr", "coo", "dense"]), min_size=2, max_size=2),
       st.lists(st.sampled_from([0j, 1j, complex(NAN, 0)]), min_size=2, max_size=2), st.integers(0, 3),
       st.integers(1, 3), st.integers(0, len(CPLX_OPS) - 1), st.sampled_from(STRATEGIES))
@example(1, ["coo", "coo"], [0j, complex(NAN, 0)], 2, 3, 4, "looplets")
def test_products_and_quotients_with_special_parts_and_fills_match_numpy(seed, fmts, fills, rows, cols, op, strategy):
    """Parts drawn from :data:`PARTS` (infinities, NaN, signed zeros, an overflowing one), fills 0j, 1j or
    ``nan + 0j``, empty matrices: each kernel against numpy (a complex with a NaN part is NaN, as numpy's
    isnan and the fills say)."""
    rng = np.random.default_rng(seed)
    vals = []
    for fill in fills:
        v = np.empty((rows, cols), complex)
        v.real, v.imag = rng.choice(PARTS, (rows, cols)), rng.choice(PARTS, (rows, cols))
        v[rng.random((rows, cols)) < 0.4] = fill
        vals.append(v)
    arrays = [xp.asarray(v if f == "dense" else Tensor.from_numpy(v, f, fill=fill))
              for v, f, fill in zip(vals, fmts, fills)]
    with np.errstate(all="ignore"):
        want = CPLX_OPS[op](*vals)
        got = np.asarray(CPLX_OPS[op](*arrays).compute(strategy=strategy))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(np.where(np.isnan(want), 0, got), np.where(np.isnan(want), 0, want), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_powers_are_numpys(dtype, strategy):
    # (C's cpow is exp(b log a): glibc's gives NaN for 0 ** 0 where numpy's is 1, and numpy multiplies out
    # an integer exponent under 100, to the last bit, where cpow rounds otherwise)
    x = np.array([0, 0, 0, 0, 1 + 2j, -0.5 + 0.25j, 3, 1.5 - 2j, 2j, 0.7 + 0.1j, 1 + 1j, 5 + 5j], dtype)
    z = np.array([0, 2, -1, 1j, 3, -2, 0.5, 7, -5, 1 + 1j, 1, 99], dtype)
    with np.errstate(all="ignore"):
        want = np.power(x, z)
    tensors = {"x": Tensor.from_numpy(x, "sparse"), "z": Tensor.from_numpy(z, "dense")}
    kernel = ss.lower("y[i] = pow(x[i], z[i])", strategy, **tensors)
    for got in (kernel(**tensors).to_numpy(), kernel.interpret(**tensors).to_numpy(), evaluate("y[i] = pow(x[i], z[i])", **tensors)[0]):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("fmt", ["csr", "coo", "dense"])
def test_a_product_of_fill_one_multiplies_by_one_where_a_value_is_infinite(strategy, fmt):
    """Of complex values, 1 is no identity of a product once a value is infinite: numpy's product of a row
    ``[1e200, 1e200 + 1e200 j, 1]`` reaches ``inf + inf j``, and times ``1 + 0j`` that is ``nan + nan j``. Both
    strategies skipped a fill of 1 + 0j, and gave ``inf + inf j``; each product now multiplies at every coordinate
    (Operator.neutral_for), by rows, over a transpose, a reversal, a concatenation and every entry, as numpy does."""
    x = np.array([[1e200 + 0j, complex(1e200, 1e200), 1], [1, 1, 1], [complex(INF, 1), 2j, 1]], complex)
    a = xp.asarray(Tensor.from_numpy(x, fmt, fill=1 + 0j))
    cat = lambda m, p, q: (m.concat if m is xp else np.concatenate)([p, q], axis=1)   # noqa: E731
    with np.errstate(invalid="ignore", over="ignore"):
        for build in (lambda m, y: m.prod(y, axis=1), lambda m, y: m.prod(y), lambda m, y: m.prod(y.T, axis=0),
                      lambda m, y: m.prod(y[::-1], axis=1), lambda m, y: m.prod(cat(m, y, y), axis=1)):
            want = np.asarray(build(np, x))
            k = build(xp, a).lower(strategy=strategy)
            np.testing.assert_array_equal(k().to_numpy(), want)
            np.testing.assert_array_equal(k.interpret().to_numpy(), want)
    # (and in index notation, against the dense oracle)
    A = Tensor.from_numpy(x, fmt, fill=1 + 0j)
    with np.errstate(invalid="ignore", over="ignore"):
        k = ss.lower("y[i] = prod[j](A[i, j])", strategy, A=A)
        np.testing.assert_array_equal(k(A=A).to_numpy(), evaluate("y[i] = prod[j](A[i, j])", A=A)[0])
        np.testing.assert_array_equal(k(A=A).to_numpy(), np.prod(x, axis=1))


@pytest.mark.parametrize("strategy", STRATEGIES)
# (after nan + 0j, -inf + nan j and nan + 1j: their kernels took nan + 0j's from the cache, a NaN part keyed as one
# NaN, and summed to nan + 0j)
@pytest.mark.parametrize("fill", [complex(INF, 0), complex(NAN, 0), complex(1, INF), 2 + 1j, complex(-INF, -2),
                                  complex(-INF, NAN), complex(NAN, 1)])
def test_a_sum_over_a_complex_fill_adds_its_copies(strategy, fill):
    """The coordinates a sum skips add the fill once each: ``n`` times each part, as ``n`` copies added (numpy's sum of
    ``inf + 0j`` three times is ``inf + 0j``). The lattice multiplied the fill by the count made complex and the
    looplets, once a product with a real operand was numpy's, did too: ``(3 + 0j) * (inf + 0j)`` is ``inf + nan j``."""
    x = Tensor.from_numpy(np.array([1 + 1j, fill, fill, 2 - 1j, fill]), "sparse", fill=fill)
    v = Tensor.from_numpy(np.array([1 + 1j, fill, 2.0]), "sparse", fill=fill)
    A = Tensor.from_numpy(np.array([[1 + 1j, fill, fill], [2 - 1j, fill, 3]]), "csr", fill=fill)
    xs, vs, a = x.to_numpy(), v.to_numpy(), A.to_numpy()
    with np.errstate(all="ignore"):
        cases = [("y[] = sum[i](x[i])", dict(x=x), xs.sum()), ("y[i] = sum[j](A[i, j])", dict(A=A), a.sum(axis=1)),
                 ("y[j] = sum[i](A[i, j] * 2.0)", dict(A=A), (a * 2.0).sum(axis=0)),
                 ("y[i] = sum[j](A[i, j] * v[j])", dict(A=A, v=v), (a * vs).sum(axis=1))]
        for program, args, want in cases:
            k = ss.lower(program, strategy=strategy, **args)
            for got in (k(**args).to_numpy(), k.interpret(**args).to_numpy(), evaluate(program, **args)[0]):
                for part in (np.real, np.imag):
                    np.testing.assert_array_equal(part(got), part(want), err_msg=program)
