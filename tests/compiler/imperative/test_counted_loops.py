"""compiler.imperative.counted_loops: a while loop that only counts its position up to a fixed end, and would
run in SIMD lanes as a for loop, becomes one; anything else stays a while loop. Each rewritten function is run by
the IR interpreter against the original, and whole kernels against scipy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from compiler.imperative.counted_loops import counted_loops
from compiler.imperative.interpreter import interpret
from compiler.imperative.ir import (Assign, BinOp, Break, Buffer, Call, CompoundAssign, Declare, For, Function, If,
                                    Load, Scalar, Select, Store, Var, While)
from compiler.imperative.traverse import statements
from compiler.imperative.vectorize import vectorize

q, end, acc, i = Var("q"), Var("q_end"), Var("acc"), Var("i")
POS, VAL = Buffer("pos", "int64"), Buffer("val", "float64")
OUT, ROWS = Buffer("out", "float64", intent="inout"), Scalar("rows", "int64")


def fresh(base):
    return base


def rows_of(walk, after=()):
    """``for i in rows: q = pos[i]; q_end = pos[i + 1]; acc = 0; <walk>; <after>; out[i] = acc``."""
    return [For(i, 0, ROWS.var, [Declare(q, "int64", Load("pos", i)), Declare(end, "int64", Load("pos", i + 1)),
                                 Declare(acc, "float64", 0.0), walk, *after, Store("out", i, acc)])]


def loops(stmts):
    return [type(s).__name__ for s in statements(tuple(stmts)) if isinstance(s, (For, While))]


def same_results(before, after):
    """Both bodies, as functions, give the same ``out`` on a CSR-like input."""
    pos, val = np.array([0, 3, 3, 7]), np.array([1.0, -2.0, 4.0, 8.0, np.nan, 0.5, -1.0])
    got = []
    for body in (before, after):
        fn = Function("f", (ROWS, POS, VAL, OUT), body)
        got.append(interpret(fn, rows=3, pos=pos, val=val, out=np.zeros(3))["out"])
    np.testing.assert_array_equal(*got)
    return got[0]


def test_a_sum_over_a_rows_positions_becomes_a_for_loop_in_simd_lanes():
    body = rows_of(While(q < end, [CompoundAssign("+", acc, Load("val", q)), CompoundAssign("+", q, 1)]))
    out = counted_loops(body, fresh)
    assert loops(out) == ["For", "For"]
    inner = [s for s in statements(tuple(out)) if isinstance(s, For)][1]
    assert (inner.start, inner.stop) == (q, end)
    assert [str(s) for s in inner.body.body] == [f"acc += val[{inner.var.name}];"]
    assert "omp simd reduction(+:acc)" in "\n".join(str(s) for s in vectorize(out, {"acc": "float64"}))
    same_results(body, out)


def test_a_running_max_becomes_a_for_loop():
    # (the max as the looplets write it: a NaN kept, as numpy keeps it)
    running = Assign(acc, Select(BinOp("||", Call("isnan", (acc,)), BinOp(">", acc, Load("val", q))), acc,
                                 Load("val", q)))
    body = rows_of(While(q < end, [running, CompoundAssign("+", q, 1)]))
    out = counted_loops(body, fresh)
    assert loops(out) == ["For", "For"]
    text = "\n".join(str(s) for s in vectorize(out, {"acc": "float64"}))
    assert "reduction(max:acc)" in text and "acc_nan" in text
    assert np.isnan(same_results(body, out)[2])


@pytest.mark.parametrize("why, walk, after", [
    ("its cursor is read after it", While(q < end, [CompoundAssign("+", acc, Load("val", q)), CompoundAssign("+", q, 1)]),
     [CompoundAssign("+", acc, q)]),
    ("it breaks out", While(q < end, [If(Load("val", q) > 5.0, [Break()]), CompoundAssign("+", acc, Load("val", q)),
                                      CompoundAssign("+", q, 1)]), []),
    ("it moves its end", While(q < end, [CompoundAssign("+", acc, Load("val", q)), CompoundAssign("-", end, 1),
                                         CompoundAssign("+", q, 1)]), []),
    ("it moves its cursor by two", While(q < end, [CompoundAssign("+", acc, Load("val", q)),
                                                   CompoundAssign("+", q, 2)]), []),
    ("it gathers, no SIMD lanes", While(q < end, [CompoundAssign("+", acc, Load("val", Load("pos", q))),
                                                  CompoundAssign("+", q, 1)]), []),
])
def test_what_stays_a_while_loop(why, walk, after):
    body = rows_of(walk, after)
    assert counted_loops(body, fresh) == body, why


def test_a_cursor_carried_to_the_next_row_stays_a_while_loop():
    # q is declared once, before the rows, and each row's walk goes on from where the last one stopped
    body = [Declare(q, "int64", 0),
            For(i, 0, ROWS.var, [Declare(end, "int64", Load("pos", i + 1)), Declare(acc, "float64", 0.0),
                                 While(q < end, [CompoundAssign("+", acc, Load("val", q)), CompoundAssign("+", q, 1)]),
                                 Store("out", i, acc)])]
    assert counted_loops(body, fresh) == body


@pytest.mark.parametrize("strategy", ["looplets", "lattice"])
@pytest.mark.parametrize("program, reference", [
    ("y[i] = A[i, j]", lambda A: np.asarray(A.sum(axis=1)).ravel()),
    ("y[i] = max[j](A[i, j])", lambda A: np.asarray(A.max(axis=1).toarray()).ravel()),
    ("y[i] = min[j](A[i, j])", lambda A: np.asarray(A.min(axis=1).toarray()).ravel()),
])
def test_row_reductions_run_in_simd_lanes_by_both_strategies(strategy, program, reference):
    A = sp.random(40, 30, density=0.2, format="csr", random_state=3)
    A.data[5] = np.nan
    k = ss.lower(program, strategy=strategy, A=A)
    np.testing.assert_allclose(k(A=A).to_numpy(), reference(A))
    assert "#pragma omp simd reduction(" in k.c_source, k.c_source
    if strategy == "looplets":
        assert any(s.stage == "counted-loops" for s in k.trace.steps)
    # where the values may hold an infinity, a max may stop at +inf (its annihilator) and keeps its while loop
    A.data[[0, 7]] = [np.inf, -np.inf]
    k = ss.lower(program, strategy=strategy, A=A)
    np.testing.assert_allclose(k(A=A).to_numpy(), reference(A))
