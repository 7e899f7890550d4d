"""Products of bool (Pattern) operands skip the fill under looplets as float ones do: ``false`` is
``*``'s and ``&``'s annihilator where the other operands cannot hold NaN or an infinity (issue 31:
triangle counting over ``Dense(SparseList(Pattern()))`` took 23 s against 52 ms with float values,
its kernel walking every fill region of the intersections to add ``false``)."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.levels import Dense, Element, Pattern, SparseList
from compiler.looplets.compile import compile_program
from compiler.looplets.gallery import triangles_walk
from compiler.looplets.language import loop_program


@loop_program
def triangles_and(C, A):
    for i in _:
        for j in _:
            for k in _:
                C |= A[i, j] & A[j, k] & A[i, k]


@loop_program
def masked_product(y, M, x):
    for i in _:
        for j in _:
            y[i] += M[i, j] * x[j]


def loops(source: str) -> int:
    return source.count("for (") + source.count("while (")


def lower_triangle(n=9, density=0.4, seed=0):
    a = np.tril(np.random.default_rng(seed).random((n, n)) < density, -1)
    return a, Tensor.from_numpy(a, Dense(SparseList(Pattern()))), Tensor.from_numpy(a.astype(float), "csr")


def test_a_pattern_triangle_count_skips_the_fill_as_a_float_one_does():
    # before, the Pattern kernel had a loop over each fill region of the k intersection adding false
    a, P, F = lower_triangle()
    C = Tensor.from_numpy(np.zeros(()), Element(0.0))
    kp = compile_program(triangles_walk, C=C, A=P)
    kf = compile_program(triangles_walk, C=C, A=F)
    assert loops(kp.c_source) == loops(kf.c_source)
    ai = a.astype(np.int64)
    want = (ai @ ai * ai).sum()
    assert float(kp(A=P)) == want == float(kf(A=F))
    assert float(kp.interpret(A=P)) == want
    assert any(r.rule == "annihilator" and "false" in r.before.lower()
               for s in kp.trace.steps for r in (s.rewrites or ()))


def test_a_pattern_triangle_written_with_and_skips_the_fill():
    a, P, _ = lower_triangle(seed=3)
    _, _, F = lower_triangle(seed=3)
    C = Tensor.from_numpy(np.zeros((), bool), Element(False))
    k = compile_program(triangles_and, C=C, A=P)
    kf = compile_program(triangles_walk, C=Tensor.from_numpy(np.zeros(()), Element(0.0)), A=F)
    assert loops(k.c_source) == loops(kf.c_source)
    ai = a.astype(np.int64)
    assert bool(k(A=P)) == bool((ai @ ai * ai).any()) == bool(k.interpret(A=P))
    # the lattice strategy intersects the same operands (an intersection, no loop over the fill)
    lat = lower("C[] |= A[i, j] & B[j, k] & D[i, k]", strategy="lattice", A=P, B=P, D=P)
    assert bool(lat(A=P, B=P, D=P).to_numpy()) == bool((ai @ ai * ai).any())


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**32 - 1),
       st.sampled_from([0.0, 1.0, np.nan, np.inf, -np.inf]))
@example(2, 3, 0, np.nan)     # false * NaN is NaN in numpy: a row with no entries is NaN too
@example(2, 3, 0, np.inf)
def test_a_masked_product_skips_the_fill_only_where_no_nan_or_inf_is_read(m, n, seed, special):
    rng = np.random.default_rng(seed)
    mask = rng.random((m, n)) < 0.4
    x = rng.integers(-3, 4, n).astype(float)
    if special != 0.0:
        x[rng.integers(0, n)] = special
    M = Tensor.from_numpy(mask, Dense(SparseList(Pattern())))
    X = Tensor.from_numpy(x, "dense")
    k = compile_program(masked_product, y="dense", M=M, x=X)
    with np.errstate(invalid="ignore"):
        want = mask.astype(float) @ x
    np.testing.assert_array_equal(k(M=M, x=X).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(M=M, x=X).to_numpy(), want)
    finite = Tensor.from_numpy(np.ones(n), "dense")
    skips = compile_program(masked_product, y="dense", M=M, x=finite)
    floats = compile_program(masked_product, y="dense", M=Tensor.from_numpy(mask.astype(float), "csr"), x=finite)
    assert loops(skips.c_source) == loops(floats.c_source)
    if np.isfinite(x).all():
        assert loops(k.c_source) == loops(floats.c_source)
    else:   # (the exact path: every j, the fill included)
        assert loops(k.c_source) > loops(floats.c_source)
