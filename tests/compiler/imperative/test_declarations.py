"""Declarations where their local is first set (compiler.imperative.declarations): ``int64_t p; ...; p = pos[i];``
becomes ``int64_t p = pos[i];`` where nothing between mentions ``p``; exactly (the IR interpreter as oracle), and
in the kernels of both strategies."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.imperative.declarations import declare_where_set
from compiler.imperative.ir import Assign, BinOp, Declare, For, If, Load, Pragma, Store, Tagged, Var, While
from compiler.imperative.traverse import map_bodies, walk
from tests.compiler.imperative.test_deadstores import programs, run

p, q, n = Var("p"), Var("q"), Var("n")


def test_a_declaration_moves_to_its_first_assignment():
    body = [Declare(p, "int64"), Declare(q, "int64"), Store("out", 0, 1.0), Assign(p, Load("pos", 0)),
            While(BinOp("<", p, n), [Assign(q, p), Assign(p, BinOp("+", p, 1))])]
    # (q's first mention is the loop, which sets it first in each turn: declared there)
    assert declare_where_set(body) == [Store("out", 0, 1.0), Declare(p, "int64", Load("pos", 0)),
                                       While(BinOp("<", p, n), [Declare(q, "int64", p), Assign(p, BinOp("+", p, 1))])]


def test_a_declaration_moves_into_a_provenance_tag_that_sets_it_first():
    # (a tag is no C scope: the statements after it see the declaration)
    body = [Declare(p, "int64"), Tagged("t", [Store("out", 1, 2.0), Assign(p, 1)]), Store("out", 0, p)]
    assert declare_where_set(body) == [Tagged("t", [Store("out", 1, 2.0), Declare(p, "int64", 1)]), body[-1]]


def test_a_declaration_moves_into_the_loop_that_sets_it_first_in_each_turn():
    loop = While(BinOp("<", n, 4), [Assign(p, Load("idx", n)), Store("out", p, 1.0), Assign(n, BinOp("+", n, 1))])
    moved = declare_where_set([Declare(p, "int64"), loop])
    assert moved == [While(loop.cond, [Declare(p, "int64", Load("idx", n)), *loop.body.body[1:]])]
    # (and the interpreter computes the same, each turn's value its own)
    a, q0 = Var("a"), Var("q0")
    prog = [Declare(a, "int64", 0), Declare(p, "int64"),
            For(q0, 0, 3, [Assign(p, BinOp("*", q0, 2)), Store("out", 0, p, "+"), Assign(a, BinOp("+", a, p))]),
            Store("out", 1, a, "+")]
    moved = declare_where_set(prog)
    assert isinstance(moved[1].body.body[0], Declare) and np.array_equal(run(moved), run(prog))
    # (read after the loop, or by its condition: it stays outside)
    for body in ([Declare(p, "int64"), loop, Store("out", 0, p)],
                 [Declare(p, "int64"), While(BinOp("<", p, 4), loop.body.body)]):
        assert declare_where_set(body) == body


def test_a_declaration_stays_where_its_first_mention_is_no_plain_assignment():
    cases = [[Declare(p, "int64"), If(n, [Assign(p, 1)], [Assign(p, 2)]), Store("out", 0, p)],   # set in branches
             [Declare(p, "int64"), Store("out", 0, p), Assign(p, 1)],                           # read first
             [Declare(p, "int64"), Assign(p, BinOp("+", p, 1))],                                # its value reads it
             [Declare(p, "int64"), Pragma("omp simd reduction(+:p)"), Assign(p, 1)]]            # a pragma names it
    for body in cases:
        assert declare_where_set(body) == body


def _split(stmts, rng) -> list:
    """``stmts`` with some declarations split into a declaration of no value and an assignment."""
    out = []
    for s in stmts:
        s = map_bodies(s, lambda body: _split(body, rng))
        if isinstance(s, Declare) and s.init is not None and rng.random() < 0.7 and \
                s.var.name not in {v.name for v in walk(s.init) if isinstance(v, Var)}:
            out += [Declare(s.var, s.dtype), Assign(s.var, s.init)]
        else:
            out.append(s)
    return out


@settings(max_examples=25, deadline=None)
@given(programs(), st.integers(0, 2 ** 16))
def test_moving_declarations_keeps_what_the_interpreter_computes(stmts, seed):
    split = _split(stmts, np.random.default_rng(seed))
    moved = declare_where_set(split)
    np.testing.assert_array_equal(run(moved), run(stmts))
    # (each split declaration met its assignment again: none is left with no value)
    assert not any(isinstance(s, Declare) and s.init is None for s in walk(tuple(moved)))


def test_the_kernels_declare_their_cursors_where_they_are_set():
    a = sp.random(6, 5, density=0.4, format="csr", random_state=0)
    for strategy in ("lattice", "looplets"):
        k = ss.lower("y[i] = A[i, j] * x[j]", strategy, A=ss.Tensor.from_scipy(a), x=np.ones(5))
        np.testing.assert_allclose(k(A=ss.Tensor.from_scipy(a), x=np.ones(5)).to_numpy(), a @ np.ones(5))
        lines = [line.strip() for line in k.c_source.splitlines()]
        # (no declaration of a cursor with no value whose next line sets it)
        assert not any(x.startswith("int64_t ") and x.endswith(";") and "=" not in x and
                       y.startswith(x[len("int64_t "):-1] + " = ") for x, y in zip(lines, lines[1:])), k.c_source
