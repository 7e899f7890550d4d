"""Reduction vectorization: which loops get ``#pragma omp simd reduction``, and the kernels stay right."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from compiler import Tensor, lower
from compiler.format import csr, dense
from compiler.imperative.ir import (Assign, Block, Break, Call, Comment, CompoundAssign, Const, Declare, For, If,
                                    Load, Pragma, Store, Tagged, Var, While)
from compiler.imperative.traverse import walk
from compiler.imperative.vectorize import map_loop, reduction, vectorize

j, q, acc, n = Var("j"), Var("q"), Var("acc"), Var("n")


def pragmas(stmts):
    out = []
    for s in stmts:
        if isinstance(s, Pragma):
            out.append(s.text)
        for field in ("body", "then", "otherwise"):
            b = getattr(s, field, None)
            if isinstance(b, Block):
                out += pragmas(b.body)
    return out


def test_contiguous_sum_and_product_are_marked():
    for op in ("+", "*"):
        loop = For(j, 0, n, [CompoundAssign(op, acc, Load("a", j + 3) * Load("x", j))])
        assert pragmas(vectorize([loop], {"acc": "float64"})) == [f"omp simd reduction({op}:acc)"]
        assert pragmas(vectorize([Declare(acc, "float32", 0.0), loop])) == [f"omp simd reduction({op}:acc)"]


def test_integer_sums_are_marked_and_unknown_types_left_alone():
    loop = For(j, 0, n, [CompoundAssign("+", acc, Load("a", j))])
    assert pragmas(vectorize([Declare(acc, "int64", 0), loop])) == ["omp simd reduction(+:acc)"]
    assert vectorize([Declare(acc, "bool", False), loop]) == [Declare(acc, "bool", False), loop]
    assert vectorize([loop]) == [loop]   # a type it cannot see: left alone
    # the rank sort of Gustavson's coordinate lists counts in int64 (GCC's cost model decides)
    k = lower("C[i, j] = A[i, k] * B[k, j]", A=csr(), B=csr(), C=csr())
    assert "omp simd reduction(+:r_rank)" in k.c_source


def test_index_arithmetic_declarations_and_tags_are_allowed():
    p = Var("p")
    loop = For(j, 0, n, [Tagged("t", [Declare(p, "int64", Var("i") * n + j),
                                      Tagged("u", [CompoundAssign("+", acc, Load("A", p) * Load("x", j))])])])
    assert reduction(loop) is not None
    assert pragmas(vectorize([loop], {"acc": "float64"})) == ["omp simd reduction(+:acc)"]


@pytest.mark.parametrize("body", [
    [CompoundAssign("+", acc, Load("x", Load("idx", j)))],                    # a gather
    [Declare(q, "int64", Load("idx", j)), CompoundAssign("+", acc, Load("x", q))],  # a gather through a local
    [CompoundAssign("+", acc, Call("ss_user", (Load("x", j),)))],            # a helper could do anything
    [CompoundAssign("-", acc, Load("x", j))],                                 # not a reduction C reorders
    [CompoundAssign("+", acc, acc * Load("x", j))],                           # reads the accumulator
    [CompoundAssign("+", acc, Load("x", j)), Store("y", j, Load("x", j))],   # more than the reduction
])
def test_other_loops_are_left_alone(body):
    loop = For(j, 0, n, body)
    assert vectorize([loop], {"acc": "float64"}) == [loop]


i, t, y = Var("i"), Var("t"), Var("y")


@pytest.mark.parametrize("body", [
    [Store("y", j, Load("a", j) + Load("b", j))],                             # elementwise
    [Store("y", j + 3, Load("a", j) * 2.0, "+")],                             # a convolution's scatter
    [Declare(q, "int64", i * n + j), Store("y", q, Load("y", q) * Load("a", j))],  # reads what it stores, in place
    [Declare(t, "float64", Load("a", j)), If(t > 0.0, [Store("y", j, t)], [Store("y", j, -t)])],  # branches
    [Tagged("t", [Store("y", j, Call("sqrt", (Load("a", j),)))]), Store("z", j, 0.0)],  # math, tags, two buffers
])
def test_map_loops_are_marked(body):
    loop = For(j, 0, n, body)
    assert map_loop(loop)
    assert pragmas(vectorize([loop])) == ["omp simd"]


@pytest.mark.parametrize("body", [
    [Store("y", j + 1, Load("y", j))],                     # reads what the previous iteration stored
    [Store("y", j, Load("a", j)), Store("y", j + 1, 0.0)],  # two places in one buffer
    [Store("y", Load("idx", j), Load("a", j))],            # a scatter
    [Store("y", j, Load("x", Load("idx", j)))],            # a gather
    [Declare(q, "int64", Load("idx", j)), Store("y", j, Load("x", q + 1))],  # a gather through a local
    [Declare(q, "int64", Load("idx", j)), Store("y", q, 1.0)],              # a scatter through a local
    [Store("y", i, Load("a", j), "+")],                    # every iteration adds to one place
    [Store("y", j, Load("a", j)), CompoundAssign("+", acc, Load("a", j))],  # carries acc
    [Store("y", j, Load("a", j)), Assign(t, j)],           # assigns a variable of the enclosing code
    [Store("y", j, Call("ss_user", (Load("a", j),)))],      # a helper could do anything
    [Store("y", j, Load("a", j)), If(Load("a", j) > 0.0, [Break()])],  # leaves early
    [For(q, 0, n, [Store("y", q, 0.0)])],                 # not innermost (the inner loop is marked)
    [],                                                    # stores nothing
])
def test_loops_that_are_not_maps(body):
    loop = For(j, 0, n, body)
    assert not map_loop(loop)
    if not any(isinstance(s, For) for s in body):
        assert vectorize([loop], {"acc": "float64"}) == [loop]
    else:
        assert pragmas(vectorize([loop])) == ["omp simd"]


def test_a_bound_read_from_a_stored_buffer_is_not_a_map():
    assert not map_loop(For(j, 0, Load("y", 0), [Store("y", j + 1, 0.0)]))
    assert map_loop(For(j, 0, Load("len", 0), [Store("y", j + 1, 0.0)]))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 70), st.sampled_from(["float64", "float32", "int64"]), st.floats(-3, 3))
def test_dense_elementwise_map_loops_match_numpy(m, dtype, fill):
    """Marked map loops on any length (remainders of the SIMD width included) and fill value."""
    rng = np.random.default_rng(m)
    fill = float(round(fill)) if dtype != "int64" else int(round(fill))
    a, b = (rng.integers(-5, 5, m) for _ in range(2)) if dtype == "int64" else \
        (rng.random(m).astype(dtype) for _ in range(2))
    f = dense(1, fill, dtype)
    k = lower("y[i] = a[i] * b[i] + a[i]", a=f, b=f, y=dense(1, fill * fill + fill, dtype))
    assert "#pragma omp simd\n" in k.c_source
    got = k(a=Tensor.from_numpy(a, f), b=Tensor.from_numpy(b, f)).to_numpy()
    np.testing.assert_allclose(got, a * b + a, rtol=1e-6)


def test_while_loops_are_not_marked_but_searched():
    inner = For(j, 0, n, [CompoundAssign("+", acc, Load("x", j))])
    outer = While(Var("go"), [If(Var("c"), [inner], [inner])])
    assert pragmas(vectorize([outer], {"acc": "float64"})) == ["omp simd reduction(+:acc)"] * 2
    assert vectorize([While(Var("go"), [CompoundAssign("+", acc, Load("x", j))])]) == \
        [While(Var("go"), [CompoundAssign("+", acc, Load("x", j))])]


def test_dense_gemv_is_vectorized_and_traced():
    rng = np.random.default_rng(1)
    A, x = rng.random((37, 53)), rng.random(53)
    k = lower("y[i] = A[i, j] * x[j]", A=dense(2), x=dense(1), y=dense(1))
    assert "#pragma omp simd reduction(+:" in k.c_source
    assert "vectorize" in [s.stage for s in k.trace.steps]
    got = k(A=Tensor.from_numpy(A, dense(2)), x=Tensor.from_numpy(x, dense(1))).to_numpy()
    np.testing.assert_allclose(got, A @ x, rtol=1e-12)


def test_csr_spmv_is_not_vectorized(monkeypatch):
    # GCC would vectorize its gathers (slower) were it not told which loops to vectorize
    from compiler.backend.build import GCC_FLAGS, compiler_flags, is_gcc
    monkeypatch.delenv("SPARSESCOPE_CFLAGS", raising=False)
    assert set(GCC_FLAGS) <= set(compiler_flags()) or not is_gcc()
    k = lower("y[i] = A[i, j] * x[j]", A=csr(), x=dense(1), y=dense(1))
    assert "#pragma" not in k.c_source
    assert "vectorize" not in [s.stage for s in k.trace.steps]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(-3, 3), st.sampled_from(["float64", "float32", "int64"]))
def test_vectorized_loops_match_numpy(m, k_, scale, dtype):
    """Dense reductions in any lane count, lengths not a multiple of the SIMD width included."""
    rng = np.random.default_rng(m * 41 + k_)
    if dtype == "int64":
        A, x, fill = rng.integers(-5, 5, (m, k_)), rng.integers(-5, 5, k_), 0
    else:
        A, x, fill = (rng.random((m, k_)) * 10.0 ** scale).astype(dtype), (rng.random(k_) * 10.0 ** -scale).astype(dtype), 0.0
    fa, fx = dense(2, fill, dtype), dense(1, fill, dtype)
    kern = lower("y[i] = A[i, j] * x[j]", A=fa, x=fx, y=dense(1, fill, dtype))
    assert "#pragma omp simd reduction(+:" in kern.c_source
    got = kern(A=Tensor.from_numpy(A, fa), x=Tensor.from_numpy(x, fx))
    want = A.astype("float64") @ x.astype("float64")
    if dtype == "int64":
        np.testing.assert_array_equal(got.to_numpy(), want)   # integer lanes are exact
    else:
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-5 if dtype == "float32" else 1e-12)


def test_band_spmv_from_looplets_is_vectorized():
    from compiler.levels import Dense, Element, SparseBand
    from compiler.looplets import compile_program
    from compiler.looplets.gallery import spmv
    rng = np.random.default_rng(3)
    M = sp.diags([rng.random(60 - abs(d)) for d in range(-4, 5)], list(range(-4, 5)), shape=(60, 60), format="csr")
    A = Tensor.from_scipy(M, Dense(SparseBand(Element(0.0))))
    x = Tensor.from_numpy(rng.random(60), "dense")
    k = compile_program(spmv, y="dense", A=A, x=x)
    assert "#pragma omp simd reduction(+:" in k.c_source
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), M @ x.to_numpy(), rtol=1e-12)


def test_a_parallel_map_or_sum_loop_runs_in_lanes_in_its_own_pragma():
    """A parallel map loop keeps its one pragma (C takes no second pragma before a for), which
    asks for SIMD lanes too; so does a parallel sum whose accumulator the threads reduce (it ran
    one addition at a time on each thread: a sum over 2 threads took 4x one thread's time)."""
    from compiler.imperative.ir import CompoundAssign, For, Load, Pragma, Store, Tagged, Var
    from compiler.imperative.vectorize import vectorize
    i, t = Var("i"), Var("t")
    loop = For(i, 0, Var("n"), [Store("y", i + 1, Load("p", i + 1) - Load("p", i))])
    assert vectorize([loop])[0] == Pragma("omp simd")
    assert vectorize([Pragma("omp parallel for schedule(guided)"), loop]) == \
        [Pragma("omp parallel for simd schedule(guided)"), loop]
    total = Tagged("loop i", [For(i, 0, Var("n"), [CompoundAssign("+", t, Load("x", i))])])
    assert vectorize([Pragma("omp parallel for reduction(+:t) schedule(guided)"), total], {"t": "float64"}) == \
        [Pragma("omp parallel for simd reduction(+:t) schedule(guided)"), total]
    # a sum the pragma does not reduce, or a scatter, keeps the threads alone
    for pragma, body in (("omp parallel for schedule(guided)", total),
                         ("omp parallel for schedule(guided)", For(i, 0, Var("n"), [Store("y", Load("idx", i), 1.0)]))):
        assert vectorize([Pragma(pragma), body], {"t": "float64"})[0] == Pragma(pragma)


def _running(op, guarded):
    from compiler.imperative.ir import BinOp, Select
    cmp = BinOp(">" if op == "max" else "<", acc, Load("a", j))
    if guarded:
        cmp = BinOp("||", Call("isnan", (acc,)), cmp)
    return For(j, 0, n, [Tagged("lattice:j:a", [Assign(acc, Select(cmp, acc, Load("a", j)))])])


@pytest.mark.parametrize("op", ["max", "min"])
def test_a_running_float_max_runs_in_lanes_with_a_nan_flag(op):
    from compiler.imperative import interpret
    from compiler.imperative.ir import Buffer, Function, Scalar
    out = vectorize([_running(op, True)], {"acc": "float64", "acc_nan": "int64"})
    assert pragmas(out) == [f"omp simd reduction({op}:acc) reduction(|:acc_nan_2)"]   # acc_nan is taken
    assert isinstance(out[-1], If)                                                     # NaN after the loop
    loop = next(s for s in out if isinstance(s, For))
    assert isinstance(loop.body.body[0], Tagged)                                       # the tag stays
    # the same values as the sequential loop, NaN included (the interpreter runs the rewritten IR)
    for a in ([3.0, -1.0, 7.0], [3.0, np.nan, 7.0], [np.nan], []):
        fn = Function("f", (Buffer("a", "float64", "in"), Scalar("n", "int64"), Buffer("r", "float64", "inout")),
                      [Declare(acc, "float64", float("-inf") if op == "max" else float("inf")), *out,
                       Store("r", 0, acc)])
        r = np.zeros(1)
        interpret(fn, a=np.array(a), n=len(a), r=r)
        want = (np.max if op == "max" else np.min)(a) if a else (-np.inf if op == "max" else np.inf)
        np.testing.assert_equal(r[0], want)


def test_the_nan_flag_starts_at_a_constant_when_the_accumulator_was_just_set_to_one():
    # -INFINITY is no NaN: the flag starts at 0, not at isnan(acc); a tag around the loop and a
    # comment between change nothing, and a loop body is not straight after what precedes the loop
    start = Declare(acc, "float64", float("-inf"))
    out = vectorize([start, Tagged("row", [Comment("c"), _running("max", True)])], {"acc": "float64"})
    flag = next(s for s in walk(Block(tuple(out))) if isinstance(s, Declare) and s.var.name == "acc_nan")
    assert flag.init == Const(0, "int64")
    out = vectorize([start, For(Var("r"), 0, n, [_running("max", True)])], {"acc": "float64"})
    flag = next(s for s in walk(Block(tuple(out))) if isinstance(s, Declare) and s.var.name == "acc_nan")
    assert "isnan" in str(flag.init)


def test_a_running_integer_max_runs_in_lanes_and_an_unguarded_float_one_is_left_alone():
    out = vectorize([_running("max", False)], {"acc": "int64"})
    assert pragmas(out) == ["omp simd reduction(max:acc)"]
    assert vectorize([_running("max", False)], {"acc": "float64"}) == [_running("max", False)]   # no NaN guard
    assert vectorize([_running("max", True)], {"acc": "int64"}) == [_running("max", True)]


def test_what_would_leave_a_simd_loop_is_found():
    from compiler.imperative.guard import CheckCoordinate
    from compiler.imperative.ir import Grow
    from compiler.imperative.vectorize import simd_exit
    store = Store("y", j, Const(1.0, "float64"))
    inner_break = While(Var("go"), [Break()])            # (leaves the inner loop only)
    cases = {
        "a break of the loop": [If(Var("stop"), [Break()]), store],
        "the growth of y": [Grow("y", j), store],
        "a computed coordinate's check": [CheckCoordinate(j, n, "y", 0, "y[j]"), store],
    }
    for said, body in cases.items():
        loop = For(j, 0, n, body)
        assert simd_exit([loop]) is None                  # (unmarked: a loop may be left)
        found = simd_exit([Tagged("t", [Pragma("omp simd"), loop])])
        assert found is not None and found.startswith(said)
    assert simd_exit([Pragma("omp simd"), For(j, 0, n, [inner_break, store])]) is None
    assert simd_exit([Pragma("omp simd"), For(j, 0, n, [Grow("y", j, hint=True), store])]) is None


def test_the_c_emitter_refuses_a_simd_loop_that_may_be_left():
    # (GCC refuses it, "invalid branch to/from OpenMP structured block", and a build by another compiler
    # would not see it: the C emitter refuses it for every build; a checked build runs it as written)
    from compiler.backend import emit_c
    from compiler.imperative import Buffer, Function, Scalar
    from compiler.imperative.guard import CheckCoordinate
    y = Buffer("y", "float64", "inout")
    body = [Pragma("omp simd"), For(j, 0, n, [CheckCoordinate(j, Const(4, "int64"), "y", 0, "y[j]"),
                                            Store("y", j, Const(1.0, "float64"))])]
    fn = Function("k", (Scalar("n", "int64"), y), body)
    with pytest.raises(ValueError, match="inside a loop marked omp simd"):
        emit_c(fn)
    assert "checked mode runs this loop in its written order" in emit_c(fn, checked=True)
