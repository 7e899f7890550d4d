"""Sums of summands whose fill is not 0, and user functions stating their own iteration algebra, under
shape operators in the lattice strategy (issue 30). Both were refused naming strategy='looplets' ("its summand
has fill 1.0, and the sequence lowering sums the entries its loops walk", "states its own iteration algebra").
A sum counts the coordinates its loops sum and folds its summand's fill in once for each one they skip
(exactly IEEE: a NaN fill makes the sum NaN where any coordinate is skipped, an inf fill beside a stored -inf
NaN); a user function's sequence is the intersection or union its algebra says. Each kernel against the dense
oracle (compiler.evaluate), the IR interpreter and the sequence CFIR's interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.lattice.algebra import AlgebraError
from compiler.lattice.seqderive import seq_evaluate
from compiler.notation import parse
from compiler.user_functions import user_function
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf

BOTH = user_function("both", lambda x, y: x * y, "return x * y;", algebra="x & y", dtype="float64")
MASK = user_function("mask", lambda v, m: 0.0 if m else v, "return y ? 0.0 : x;", algebra="x & !y", dtype="float64")
XOR = user_function("xorish", lambda x, y: x + y if (x != 0) != (y != 0) else 0.0,
                    "return (x != 0) != (y != 0) ? x + y : 0.0;", algebra="(x | y) & !(x & y)", dtype="float64")
# (x * (y - 1), 0 where either is at its fill for y of fill 1: stated so)
KEEP = user_function("keepx", lambda x, y: x * (y - 1), "return x * (y - 1);", algebra=("x & y", {"y": 1}),
                     dtype="float64")
FUNCTIONS = {f.name: f for f in (BOTH, MASK, XOR, KEEP)}


def stored(a, fmt, fill=0.0):
    """``a`` in ``fmt`` of ``fill``, its entries that are not the fill stored (NaN, ±inf too)."""
    return Tensor.from_numpy(np.asarray(a, dtype=float), fmt, fill=fill)


def lattice_kernel(program, out=None, **tensors):
    """``program`` lowered by the lattice strategy (its C kernel), right against the dense oracle, the IR
    interpreter and the sequence CFIR's interpreter; the kernel."""
    given = {} if out is None else {program.split("[")[0]: out}
    with np.errstate(invalid="ignore", over="ignore"):
        want, _ = ss.evaluate(program, functions=FUNCTIONS, **tensors)
        k = ss.lower(program, strategy="lattice", functions=FUNCTIONS, **tensors, **given)
        got = k(**tensors)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want, err_msg=program)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want, err_msg=program)
        order = k.formats[program.split("[")[0]].mode_order
        np.testing.assert_array_equal(seq_evaluate(parse(program, functions=FUNCTIONS), loop_order=order, **tensors),
                                      want, err_msg=program)
    return k


def cfir_text(kernel) -> str:
    return kernel.trace.find("cfir")[0].after_text


V = np.array([1.0, 0, 3, 0, -2, 0, 0, 2, 0, 0, 0, 4])     # (0 where the fill goes)


def vector(fill, odd=(), fmt="sparse"):
    """V with ``fill`` at its zeros and ``odd`` values stored first."""
    a = np.where(V == 0, fill, V)
    a[:len(odd)] = odd
    return stored(a, fmt, fill)


# -- sums of a summand of another fill than 0 --------------------------------------------------------------


@pytest.mark.parametrize("fill, odd", [(1.0, ()), (1.0, (nan,)), (nan, ()), (nan, (inf,)), (inf, (-inf,)),
                                       (-inf, (2.0, -inf))])
@pytest.mark.parametrize("fmt", ["sparse", "coo", "dense"])
def test_a_split_summed_adds_the_fill_for_each_coordinate_it_skips(fill, odd, fmt):
    cfir = cfir_text(lattice_kernel("y[i] = sum[j](split(A[k], k -> (i:3, j:4)))", A=vector(fill, odd, fmt)))
    # (the loops count what they sum; the fill is folded in after them where they skipped any)
    assert "n_t += 1" in cfir and "t += (4 - n_t) * " in cfir, cfir


SUMS = ["y[] = sum[k](collapse(B[i, j], (i, j) -> k))",
        "y[] = sum[i, j](split(collapse(B[p, q], (p, q) -> k), k -> (i:2, j:6)))",
        "y[] = sum[k](slice(collapse(B[i, j], (i, j) -> m), m -> k, (1, 11, 3)))",
        "y[] = sum[k](slice(collapse(B[i, j], (i, j) -> m), m -> k, (10, -1, -2)))",
        # (a sum in a sum: the inner one's fill, 4 times its summand's, doubled, is the outer summand's)
        "y[] = sum[i](sum[j](split(collapse(B[p, q], (p, q) -> k), k -> (i:3, j:4))) * 2)"]
# (of B and C, their fills drawn apart too)
TWO_SUMS = ["y[i] = sum[l](concat((B[i, j], C[i, k]), (j, k) -> l))", "y[i] = sum[j](B[i, j] - C[i, j])"]


@pytest.mark.parametrize("program, fills", [(p, f) for p in SUMS for f in [(1.0, 1.0), (nan, nan)]]
                         + [(p, f) for p in TWO_SUMS for f in [(1.0, 1.0), (nan, nan), (1.0, 0.0)]])
@pytest.mark.parametrize("fmts", [("csr", "coo"), ("dense", "csr")])
def test_sums_over_shape_operators_of_fill_1_and_nan(program, fills, fmts):
    b = np.array([[1.0, 0, 0, 2], [0, 0, -3, 0], [inf, 0, 0, 5]])
    c = np.array([[0, -inf, 0, 0], [2.0, 0, 0, 0], [0, 0, 0, 0]])
    tensors = {"B": stored(np.where(b == 0, fills[0], b), fmts[0], fills[0]),
               "C": stored(np.where(c == 0, fills[1], c), fmts[1], fills[1])}
    lattice_kernel(program, **{n: t for n, t in tensors.items() if f"{n}[" in program})


@pytest.mark.parametrize("fill", [1.0, nan, inf])
@pytest.mark.parametrize("empty", ["all-fill", "all-stored"])
def test_an_all_fill_or_full_operand_summed(fill, empty):
    a = np.full(12, fill) if empty == "all-fill" else np.arange(2.0, 14.0)
    A = stored(a, "sparse", fill)
    assert A.nnz == (0 if empty == "all-fill" else 12)
    lattice_kernel("y[i] = sum[j](split(A[k], k -> (i:3, j:4)))", A=A)
    lattice_kernel("y[] = sum[k](slice(A[i], i -> k, (1, 10, 2)))", A=A)


def test_a_sum_into_a_sparse_output_of_the_results_fill():
    # (a row the loops skip is 4 times the fill: the output's fill, which it leaves unstored)
    k = lattice_kernel("y[i] = sum[j](split(A[k], k -> (i:3, j:4)))", out=ss.sparse_vector(fill=4.0),
                       A=vector(1.0))
    assert k.formats["y"].fill == 4.0
    with pytest.raises(ss.StrategyError, match=r"y has fill 0.0, and the result's is 4.0"):
        ss.lower("y[i] = sum[j](split(A[k], k -> (i:3, j:4)))", strategy="lattice", A=vector(1.0),
                 y=ss.sparse_vector())


@pytest.mark.parametrize("case", ["reshape-plus-1", "reshape-fill-1", "hstack-fill-1", "reshape-nan", "ravel-inf"])
def test_array_sums_are_one_lattice_kernel(case):
    # (each was computed another way before: the trace's retry step, the lattice refusing the sum)
    with np.errstate(invalid="ignore"):
        if case == "reshape-plus-1":
            (x, X) = operand((3, 4), "csr", 1, odd=(inf,))
            one_lattice_kernel(xp.sum(X.reshape(4, 3) + 1, axis=1), np.sum(x.reshape(4, 3) + 1, axis=1))
        elif case == "reshape-fill-1":
            (x, X) = operand((3, 4), "coo", 2, fill=1.0, odd=(-2.0, nan))
            one_lattice_kernel(xp.sum(X.reshape(2, 6), axis=1), np.sum(x.reshape(2, 6), axis=1))
        elif case == "hstack-fill-1":
            (x, X), (y, Y) = operand((3, 4), "csr", 3, fill=1.0), operand((3, 2), "csr", 4, fill=1.0)
            one_lattice_kernel(xp.sum(xp.concat([X, Y], axis=1), axis=1),
                               np.sum(np.concatenate([x, y], axis=1), axis=1))
        elif case == "reshape-nan":
            (x, X) = operand(12, "sparse_vector", 5, density=0.9, fill=nan)
            one_lattice_kernel(xp.sum(X.reshape(3, 4), axis=1), np.sum(x.reshape(3, 4), axis=1))
        else:
            (x, X) = operand((2, 6), "csr", 6, fill=inf, odd=(-inf,))
            one_lattice_kernel(xp.sum(X.reshape(4, 3), axis=1), np.sum(x.reshape(4, 3), axis=1))


def test_a_product_with_an_infinite_literal_is_not_an_intersection():
    # (0 * inf is NaN: the entries x does not store are NaN, so the loops walk x's and the rest is the
    # result's fill, NaN; on main the kernel wrote 0 there)
    k = lattice_kernel("y[i, j] = split(A[k], k -> (i:3, j:4)) * inf", A=vector(0.0))
    assert k.formats["y"].fill != k.formats["y"].fill
    lattice_kernel("y[i] = sum[j](split(A[k], k -> (i:3, j:4)) * inf)", A=vector(0.0))


# -- user functions stating their iteration algebra --------------------------------------------------------


W = np.array([0, 2.0, 0, -1, 0, 0, 5, 0, 3, 0, 0, 1])


@pytest.mark.parametrize("fn, loop", [("both", "∩"), ("mask", "∪"), ("xorish", "∪")])
@pytest.mark.parametrize("fmts", [("sparse", "coo"), ("coo", "dense"), ("dense", "sparse")])
def test_a_user_functions_algebra_under_a_split(fn, loop, fmts):
    # (both(NaN, 0) is NaN, which x & y leaves out: the algebra is the user's word, so A stores no NaN for it)
    A, B = vector(0.0, (nan,) if fn != "both" else (), fmts[0]), stored(W, fmts[1])
    k = lattice_kernel(f"y[i, j] = {fn}(split(A[k], k -> (i:3, j:4)), split(B[k], k -> (i:3, j:4)))", A=A, B=B)
    head = cfir_text(k).splitlines()[0]
    if "dense" not in fmts:
        # (both: where both are stored; a complement constrains nothing, its operand read where the other is)
        assert loop in head, head


@pytest.mark.parametrize("program", [
    "y[k] = both(collapse(M[i, j], (i, j) -> k), x[k])",
    "y[k] = collapse(both(M[i, j], M[i, j]), (i, j) -> k)",
    "y[k] = mask(collapse(M[i, j], (i, j) -> k), x[k])",
    "y[i] = sum[j](both(split(x[k], k -> (i:3, j:4)), M[i, j]))",
    "y[] = sum[k](xorish(collapse(M[i, j], (i, j) -> k), x[k]))",
    # (an argument of another fill than stated: the union, as any function)
    "y[k] = both(collapse(M[i, j], (i, j) -> k), x[k] + 1)",
    # (a literal argument of the stated fill: the function is its fill wherever it is)
    "y[k] = both(collapse(M[i, j], (i, j) -> k), 0)",
])
@pytest.mark.parametrize("fmt", ["csr", "coo", "dense"])
def test_a_user_functions_algebra_under_collapses_and_sums(program, fmt):
    M = stored(np.array([[1.0, 0, 0, 2], [0, 0, -3, 0], [inf, 0, 0, 5]]), fmt)
    if "both(" in program and "x[k] + 1" not in program:
        # (both(inf, 0) is NaN, not its fill: the statement x & y is refused for an M storing inf, and taken for a
        # finite one; test_stated_algebra_checked.py)
        with pytest.raises(AlgebraError, match=r"both states the iteration algebra 'x & y'"):
            lattice_kernel(program, M=M, x=stored(W, "sparse"))
        M = stored(np.array([[1.0, 0, 0, 2], [0, 0, -3, 0], [7.0, 0, 0, 5]]), fmt)
    lattice_kernel(program, M=M, x=stored(W, "sparse"))


def test_an_algebra_stated_for_another_fill():
    # keepx(x, y) = x * (y - 1), stated as x & y for y of fill 1; with y of fill 0 it is -x where y is absent:
    # the fills do not match the statement, and the loops take the union
    A = vector(0.0)
    for fill in (1.0, 0.0):
        B = stored(np.where(W == 0, fill, W), "sparse", fill)
        k = lattice_kernel("y[i, j] = keepx(split(A[k], k -> (i:3, j:4)), split(B[k], k -> (i:3, j:4)))", A=A, B=B)
        head = cfir_text(k).splitlines()[0]
        assert ("∩" if fill == 1.0 else "∪") in head, head
    (derive,) = k.trace.find("seq-derive")
    assert "states its iteration algebra" not in derive.artifacts[0].text
    B = stored(np.where(W == 0, 1.0, W), "sparse", 1.0)
    k = ss.lower("y[i, j] = keepx(split(A[k], k -> (i:3, j:4)), split(B[k], k -> (i:3, j:4)))", strategy="lattice",
                 functions=FUNCTIONS, A=A, B=B)
    assert "keepx states its iteration algebra (x ∩ y)" in k.trace.find("seq-derive")[0].artifacts[0].text


# -- by property --------------------------------------------------------------------------------------------


OPERATORS = {"+": "{a} + {b}", "-": "{a} - {b}", "max": "max({a}, {b})", "both": "both({a}, {b})",
             "mask": "mask({a}, {b})", "xorish": "xorish({a}, {b})"}


@st.composite
def sums(draw):
    """``(program, tensors)``: a sum over a row or all of ``op(split(a), B)``, a vector of 12 and a 3x4 matrix of
    drawn formats, fills (0, 1, NaN), densities (empty to full) and stored odd values (NaN, ±inf)."""
    op = draw(st.sampled_from(sorted(OPERATORS)))
    reduce = draw(st.sampled_from(["y[i] = sum[j]", "y[] = sum[i, j]"]))
    terms = []
    for shape, fmts in (((12,), ["sparse", "coo", "dense"]), ((3, 4), ["csr", "coo", "dense"])):
        fill = draw(st.sampled_from([0.0, 1.0, nan]))
        density = draw(st.sampled_from([0.0, 0.4, 1.0]))
        # (both(inf, 0) is NaN, which its algebra x & y leaves out: the user's word, so no odd value for it)
        odd = draw(st.sampled_from([(), (nan,), (inf,), (-inf, inf)] if op != "both" else [()]))
        seed = draw(st.integers(0, 99))
        r = np.random.default_rng(seed)
        a = np.where(r.random(shape) < density, r.choice([1.0, -2.0, 3.5], shape), fill)
        a.flat[:len(odd)] = odd
        terms.append(stored(a, draw(st.sampled_from(fmts)), fill))
    body = OPERATORS[op].format(a="split(a[k], k -> (i:3, j:4))", b="B[i, j]")
    return f"{reduce}({body})", {"a": terms[0], "B": terms[1]}


@settings(max_examples=7, deadline=None)
@given(sums())
@example(("y[i] = sum[j](split(a[k], k -> (i:3, j:4)) - B[i, j])",
          {"a": stored(np.where(V == 0, 1.0, V), "sparse", 1.0), "B": stored(np.full((3, 4), nan), "csr", nan)}))
@example(("y[] = sum[i, j](both(split(a[k], k -> (i:3, j:4)), B[i, j]))",
          {"a": stored(V, "coo"), "B": stored(W.reshape(3, 4), "csr")}))
def test_sums_and_user_functions_by_property(drawn):
    program, tensors = drawn
    lattice_kernel(program, **tensors)
