"""A subexpression read more than once is computed once, into a local (compiler.looplets.notation_program,
issue 30): the expression is a DAG, and the looplets expanded it as a tree, so issue 30's r7 (a ``where``
nested N levels, each reading the level below twice) doubled its C and its lowering with N (37 s of
lowering at N = 9 on main, 161 kB of C at N = 7, most of it one statement). Checked by numpy, the compiled kernel
and the IR interpreter; structure by the operator calls in the C."""

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.lattice.test_cfir_nonfinite_products import stored
from tests.compiler.notation.test_node_provenance import r7

nan, inf = np.nan, np.inf
FILLS = [0.0, 1.0, nan, inf]


def r7_tensors(shape=(1, 1, 1), formats=("coo", "csf", "dense", "coo"), seed=None):
    """Eight tensors of fills 0, 1, NaN, inf in turn (as test_node_provenance's r7, or random entries
    storing NaN, +-inf, -0.0 and the fill where ``seed`` is given)."""
    rng = np.random.default_rng(seed)
    tensors = []
    for k in range(8):
        fill = FILLS[k % 4]
        if seed is None:
            d = np.full(shape, fill)
            d[(0,) * len(shape)] = float(k) - 3.0 if k % 3 else fill
            mask = np.ones(shape, bool)
        else:
            d = rng.choice([-1.0, 2.0, -0.0, nan, inf, -inf, fill], size=shape)
            mask = rng.random(shape) < 0.5
        tensors.append(stored(d, mask, formats[k % len(formats)], fill))
    return tensors


def check(expr, want):
    k = ss.lower(expr, strategy="looplets")
    with np.errstate(all="ignore"):
        got, interpreted = k().to_numpy(), k.interpret().to_numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(interpreted, want)
    return k


def wheres(k) -> int:
    return k.c_source.count("ss_where_bool_float64(") - 1   # (its definition)


@pytest.mark.parametrize("levels", [3, 5, 7])
def test_issue_30_r7_computes_each_level_once(levels):
    # (main, N = 3 / 5 / 7: 50 / 242 / 1,010 calls of where in 40 / 64 / 161 kB of C; now 30 / 58 / 86)
    tensors = r7_tensors()
    with np.errstate(invalid="ignore"):
        want = r7(levels, [t.to_numpy() for t in tensors], np.where)
    k = check(r7(levels, [xp.asarray(t) for t in tensors], xp.where), want)
    cases = k.c_source.count("out_val[out0_nnz] = ")   # (each case of the loops writes the output once)
    assert wheres(k) <= 2 * levels * cases, wheres(k)
    # each level's value is one local, read by the level above: every call of where is on a line of its own
    for line in k.c_source.splitlines():
        assert line.count("ss_where_bool_float64(") <= 3, line


def test_the_lines_of_c_grow_linearly_with_the_levels():
    tensors = r7_tensors()
    size = {n: len(ss.lower(r7(n, [xp.asarray(t) for t in tensors], xp.where), strategy="looplets").c_source)
            for n in (4, 8)}
    assert size[8] - size[4] < size[4], size   # (main: 48 kB at N = 4, 290 kB at N = 8; now 38 and 45)


@pytest.mark.parametrize("formats", [["coo", "csf", "dense", "coo"], ["csf"], ["coo", "dense"]])
@pytest.mark.parametrize("seed", [0, 1])
def test_r7_over_stored_nonfinite_values(formats, seed):
    tensors = r7_tensors((2, 3, 2), formats, seed)
    with np.errstate(invalid="ignore"):
        want = r7(4, [t.to_numpy() for t in tensors], np.where)
    check(r7(4, [xp.asarray(t) for t in tensors], xp.where), want)


def vectors(seed, fmt, n=6):
    rng = np.random.default_rng(seed)
    out = []
    for k, fill in enumerate([0.0, nan, -inf, 1.0]):
        d = rng.choice([1.5, -2.0, -0.0, 0.0, nan, inf, -inf], size=n)
        out.append(stored(d, rng.random(n) < 0.5, fmt, fill))
    return out


@pytest.mark.parametrize("fmt", ["sparse_vector", "dense"])
def test_a_subexpression_built_twice_is_computed_once(fmt):
    # ``exp(a - b)`` built twice, two objects of one structure: one local, which each use reads
    tensors = vectors(3, fmt)
    a, b, c, d = [xp.asarray(t) for t in tensors]
    A, B, C, D = [t.to_numpy() for t in tensors]
    with np.errstate(all="ignore"):
        want = np.where(np.exp(A - B) > C, np.exp(A - B), np.exp(A - B) * D)
    k = check(xp.where(xp.exp(a - b) > c, xp.exp(a - b), xp.exp(a - b) * d), want)
    calls = [line for line in k.c_source.splitlines() if re.search(r"\bexp\(", line)]
    assert calls and all(re.match(r"\s*double sub(_\d+)* = ", line) for line in calls), calls


@pytest.mark.parametrize("fmt", ["sparse_vector", "dense"])
def test_zeros_of_other_signs_are_not_one_subexpression(fmt):
    # (each zero's sign as numpy's, by both strategies, built by the suite's quick compiler (tcc) as by any:
    # a report that tcc gave +0.0 here was numpy's sign of a NaN, which no test compares)
    signs = set()
    for seed in range(4):
        tensors = vectors(5 + seed, fmt)
        a, b, _, _ = [xp.asarray(t) for t in tensors]
        A, B, _, _ = [t.to_numpy() for t in tensors]
        with np.errstate(all="ignore"):
            want = np.where(A > B, (A + B) * 0.0, (A + B) * -0.0) * ((A + B) * -0.0)
        expr = xp.where(a > b, (a + b) * 0.0, (a + b) * -0.0) * ((a + b) * -0.0)
        check(expr, want)
        zeros = want == 0
        signs.update(np.signbit(want[zeros]).tolist())
        for strategy in ("looplets", "lattice"):
            with np.errstate(all="ignore"):
                got = expr.lower(strategy=strategy)().to_numpy()
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg=strategy)
    assert signs == {True, False}   # (zeros of both signs were compared)


def test_empty_and_all_fill_operands():
    for shape, seed in [((0, 2, 1), 0), ((2, 2, 2), None)]:
        tensors = r7_tensors(shape, ["csf", "coo"], seed) if seed is not None else \
            [ss.Tensor.from_numpy(np.full(shape, FILLS[k % 4]), "csf" if k % 2 else "coo", fill=FILLS[k % 4])
             for k in range(8)]
        with np.errstate(invalid="ignore"):
            want = r7(3, [t.to_numpy() for t in tensors], np.where)
        check(r7(3, [xp.asarray(t) for t in tensors], xp.where), want)


OPS = {"+": (lambda x, y: x + y), "*": (lambda x, y: x * y), "max": (lambda x, y: (xp if isinstance(x, xp.Array)
                                                                                     else np).maximum(x, y)),
       "where": None}


@st.composite
def dags(draw):
    """A random expression DAG over four vectors: each node an operator over earlier nodes, so later ones
    read earlier ones several times."""
    picks = []
    for _ in range(draw(st.integers(2, 7))):
        op = draw(st.sampled_from(sorted(OPS)))
        picks.append((op, [draw(st.integers(0, 10 ** 6)) for _ in range(3)]))
    return picks


def build(picks, leaves, where, maximum):
    nodes = list(leaves)
    for op, args in picks:
        x, y, z = (nodes[a % len(nodes)] for a in args)
        if op == "where":
            nodes.append(where(x > y, y, z))
        elif op == "max":
            nodes.append(maximum(x, y))
        else:
            nodes.append(OPS[op](x, y))
    return nodes[-1]


@settings(max_examples=20)   # (the suite's time: the default 100 drew 100 kernels)
@given(picks=dags(), seed=st.integers(0, 3), fmt=st.sampled_from(["sparse_vector", "dense", "csr"]))
@example(picks=[("where", [1, 2, 3]), ("where", [4, 4, 0]), ("*", [5, 5, 0]), ("+", [6, 6, 0])], seed=0,
         fmt="sparse_vector")
def test_dags_match_numpy(picks, seed, fmt):
    rng = np.random.default_rng(seed)
    shape = (3, 4) if fmt == "csr" else (6,)
    tensors = []
    for fill in [0.0, nan, inf, 1.0] if seed % 2 else [0.0, nan, -inf, 1.0]:
        d = rng.choice([1.5, -2.0, -0.0, 0.0, nan, inf, -inf], size=shape)
        tensors.append(stored(d, rng.random(shape) < 0.5, fmt, fill))
    with np.errstate(all="ignore"):
        want = build(picks, [t.to_numpy() for t in tensors], np.where, np.maximum)
        got = build(picks, [xp.asarray(t) for t in tensors], xp.where, xp.maximum)
    if not isinstance(got, xp.Array):
        return
    k = ss.lower(got, strategy="looplets")
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(k().to_numpy(), want)
        np.testing.assert_array_equal(k.interpret().to_numpy(), want)
