"""Dead stores (compiler.imperative.deadstores): an assignment to a local that nothing reads before
its scope ends or it is set again goes; exactly (the IR interpreter as oracle), and in the kernels
(a merge's last ``i = phase_stop;``, a tail's ``j = lastB;``, a block copy's position past its run)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.imperative import Buffer, Function, interpret
from compiler.imperative.deadstores import drop_dead_stores
from compiler.imperative.ir import (Assign, BinOp, Block, Break, Call, CompoundAssign, Const, Declare, For, If, Pragma,
                                    Store, Tagged, Var, While)
from compiler.imperative.traverse import walk
from compiler.reference import evaluate

a, b, c, i, n = Var("a"), Var("b"), Var("c"), Var("i"), Var("n")


def assigns(stmts) -> list:
    return [s for s in walk(tuple(stmts)) if isinstance(s, (Assign, CompoundAssign))]


def test_a_store_nothing_reads_before_its_scope_ends_goes():
    body = [Declare(i, "int64", 0), If(BinOp("<", i, n), [Store("out", i, 1.0), Assign(i, n)]),
            Declare(a, "int64", 1), Tagged("t", [Assign(a, 2), CompoundAssign("+", a, 3)])]
    assert assigns(drop_dead_stores(body)) == []


def test_a_store_set_again_before_a_read_goes():
    body = [Declare(a, "int64", 0), Assign(a, n), Store("out", 0, 1.0), Assign(a, 5), Store("out", 1, a)]
    assert assigns(drop_dead_stores(body)) == [Assign(a, 5)]


@pytest.mark.parametrize("body", [
    [Declare(a, "int64", 0), If(c, [Assign(a, 1)]), Store("out", 0, a)],                     # read after the branch
    [Declare(a, "int64", 0), While(BinOp("<", a, 4), [Store("out", a, 1.0), Assign(a, BinOp("+", a, 1))])],  # next turn
    [Declare(a, "int64", 0), For(i, 0, 4, [Store("out", i, a), Assign(a, i)])],               # next iteration
    [Declare(a, "int64", 0), While(c, [Assign(a, 3), If(c, [Break()]), Assign(a, 4)]),        # read past a break
     Store("out", 0, a)],
    [Assign(n, 1)],                                                                          # a parameter
    [Declare(a, "int64", 0), Assign(a, Call("helper", (n,)))],                                # a helper may do more
    [Declare(a, "int64", 0), Pragma("omp simd reduction(+:a)"), Assign(a, 1)],               # a pragma names it
    # an inner local of the same name hides a only inside its own scope: a = 1 is read after it
    [Declare(a, "int64", 0), Assign(a, 1), If(c, [Declare(a, "int64", 2), Store("out", 0, a)],
                                               [Declare(a, "int64", 3), Store("out", 1, a)]), Store("out", 2, a)],
], ids=["read-after-branch", "while-next-turn", "for-next-iteration", "break", "parameter", "helper", "pragma",
        "hidden-inside"])
def test_a_store_that_may_be_read_stays(body):
    assert drop_dead_stores(body) == body


def test_a_store_before_a_loop_that_sets_the_local_before_reading_it_goes():
    # (a gather's position: pC0 = 0; then each turn pC0 = idx[p]; read x[pC0]; its start value read by nothing)
    p, q = Var("p"), Var("q")
    body = [Declare(p, "int64", 0), Declare(a, "int64", 0), Assign(a, 0),
            While(BinOp("<", p, n), [Assign(a, BinOp("+", p, 2)), Store("out", p, a), CompoundAssign("+", p, 1)])]
    assert assigns(drop_dead_stores(body)) == [Assign(a, BinOp("+", p, 2)), CompoundAssign("+", p, 1)]
    # (read after the loop, which may run no turn: it stays; set only under a branch in the loop: it stays)
    after = body + [Store("out", 0, a)]
    assert drop_dead_stores(after) == after
    branch = [Declare(a, "int64", 0), Assign(a, 1),
              For(q, 0, n, [If(c, [Assign(a, q)]), Store("out", q, a)])]
    assert drop_dead_stores(branch) == branch


# --- a property: random programs, run by the IR interpreter before and after

LOCALS = "abcde"


@st.composite
def programs(draw):
    """Statements over int64 locals, each read only where C sees it and none hiding another (the
    interpreter keeps one value per name); a name may be declared again in a sibling scope. Loops
    (for, and while loops over a counter of their own that a break may leave), branches, stores
    into out[0:4], and sometimes every local read into out as its scope ends."""
    counters = iter(f"q{k}" for k in range(100))

    def expr(scope, depth=0):
        e = draw(st.sampled_from([Const(draw(st.integers(-3, 5)), "int64")] + [Var(v) for v in sorted(scope)]))
        if depth < 2 and draw(st.booleans()):
            e = BinOp(draw(st.sampled_from(["+", "-", "*"])), e, expr(scope, depth + 1))
        return e

    def block(scope, depth, in_loop):
        scope = set(scope)
        out = []
        for _ in range(draw(st.integers(0, 5))):
            kind = draw(st.sampled_from(["declare", "assign", "assign", "compound", "store"]
                                        + (["if", "for", "while"] if depth < 2 else [])
                                        + (["break"] if in_loop else [])))
            free = [v for v in LOCALS if v not in scope]
            mine = sorted(v for v in scope if v in LOCALS)   # (not a loop's counter: it would not end)
            if kind == "declare" and free:
                v = draw(st.sampled_from(free))
                out.append(Declare(Var(v), "int64", expr(scope)))
                scope.add(v)
            elif kind in ("assign", "compound") and mine:
                v = Var(draw(st.sampled_from(mine)))
                out.append(Assign(v, expr(scope)) if kind == "assign" else CompoundAssign("+", v, expr(scope)))
            elif kind == "store":
                out.append(Store("out", Const(draw(st.integers(0, 3)), "int64"), expr(scope), "+"))
            elif kind == "if":
                cond = BinOp("<", expr(scope), Const(draw(st.integers(-2, 4)), "int64"))
                out.append(If(cond, block(scope, depth + 1, in_loop),
                              block(scope, depth + 1, in_loop) if draw(st.booleans()) else None))
            elif kind == "for":
                q = next(counters)
                out.append(For(Var(q), 0, draw(st.integers(0, 3)), block(scope | {q}, depth + 1, True)))
            elif kind == "while":
                q = Var(next(counters))
                out += [Declare(q, "int64", 0),
                        While(BinOp("<", q, draw(st.integers(0, 3))),
                              [CompoundAssign("+", q, 1), *block(scope | {q.name}, depth + 1, True)])]
            elif kind == "break":
                out.append(If(BinOp("<", expr(scope), Const(draw(st.integers(-2, 4)), "int64")), [Break()]))
        if draw(st.booleans()):
            out += [Store("out", Const(k % 4, "int64"), Var(v), "+") for k, v in enumerate(sorted(scope))]
        return out
    return block(set(), 0, False)


def run(stmts):
    fn = Function("f", (Buffer("out", "int64", "inout"),), Block(tuple(stmts)))
    return interpret(fn, out=np.zeros(4, dtype=np.int64))["out"]


# (a store before a break, read after the loop; a store read by the loop's next turn, of a for and of a while)
@example([Declare(a, "int64", 0), Declare(Var("q0"), "int64", 0),
          While(BinOp("<", Var("q0"), 3), [CompoundAssign("+", Var("q0"), 1), Assign(a, Var("q0")),
                                            If(BinOp("<", 1, Var("q0")), [Break()]), Assign(a, 7)]),
          Store("out", 0, a, "+")])
@example([Declare(a, "int64", 1), For(Var("q0"), 0, 3, [Store("out", 0, a, "+"), Assign(a, BinOp("*", a, 2))])])
@example([Declare(a, "int64", 1), Declare(Var("q0"), "int64", 0),
          While(BinOp("<", Var("q0"), 3), [CompoundAssign("+", Var("q0"), 1),
                                            Store("out", 0, BinOp("+", Var("q0"), a), "+"), Assign(a, 5)])])
# (a store before a loop whose turns set the local first, read after a loop of no turn)
@example([Declare(a, "int64", 1), Assign(a, 5), For(Var("q0"), 0, 0, [Assign(a, Var("q0")), Store("out", 0, a, "+")]),
          Store("out", 1, a, "+")])
@settings(max_examples=20, deadline=None)
@given(programs())
def test_dropping_dead_stores_keeps_what_the_interpreter_computes(stmts):
    np.testing.assert_array_equal(run(drop_dead_stores(stmts)), run(stmts))


# --- the kernels

S = sp.random(9, 11, density=0.3, format="csr", random_state=11)
T = sp.random(9, 11, density=0.3, format="csr", random_state=12)


def lowered(program, **tensors):
    kernel = ss.lower(program, strategy="looplets", **tensors)
    inputs = {k: v for k, v in tensors.items() if not isinstance(v, str)}
    got = kernel(**inputs)
    got = got.to_numpy() if hasattr(got, "to_numpy") else got
    np.testing.assert_allclose(got, evaluate(program, **inputs)[0])
    return kernel.trace.find("imperative")[0].after


def test_a_two_list_dot_product_ends_with_no_store_to_its_coordinate():
    x, y = (ss.Tensor.from_numpy(M.toarray()[0], "sparse") for M in (S, T))
    fn = lowered("s[] += x[i] * y[i]", x=x, y=y)
    assert not [s for s in assigns(fn.body.body) if s.target == i], str(fn)


def test_csr_plus_csr_ends_its_last_tail_with_no_store_to_its_coordinate():
    A, B = ss.Tensor.from_scipy(S, "csr"), ss.Tensor.from_scipy(T, "csr")
    fn = lowered("C[i, j] = A[i, j] + B[i, j]", A=A, B=B, C="csr")
    assert Assign(Var("j"), Var("lastA")) in assigns(fn.body.body)      # (read by the B tail's test)
    assert Assign(Var("j"), Var("lastB")) not in assigns(fn.body.body), str(fn)


def test_coo_plus_coo_keeps_no_store_past_its_last_phase_nor_its_rows():
    A, B = ss.Tensor.from_scipy(S, "coo"), ss.Tensor.from_scipy(T, "coo")
    fn = lowered("C[i, j] = A[i, j] + B[i, j]", A=A, B=B, C="coo")
    stores = {(s.target.name, str(s.value)) for s in assigns(fn.body.body) if isinstance(s, Assign)}
    # B's tail is each merge's last phase: nothing reads the coordinate it ends at (i = lastB0, j_5 = lastB1_2)
    assert ("i", "lastA0") in stores and not [s for s in stores if s[1].startswith("lastB")], stores
    # a block copy leaves its row's position at the row's end, which nothing reads (qA1 = qA0_next);
    # the rows' stepper moves on to it (qA0 = qA0_next)
    assert ("qA0", "qA0_next") in stores and not [s for s in stores if s[1].endswith("_next")
                                                  and s[0] not in ("qA0", "qB0")], stores


def test_statements_with_nothing_dropped_are_kept_themselves():
    """A scope with no dead store is returned as the same objects (later passes' identity memos find
    them); one with a dead store is rebuilt around it only."""
    loop = For(i, 0, n, [If(BinOp("<", i, a), [Store("out", i, 1.0)], [Store("out", i, 2.0)]),
                         While(BinOp("<", b, n), [CompoundAssign("+", b, 1), Store("out", b, 3.0)])])
    kept = [Declare(b, "int64", 0), loop]
    out = drop_dead_stores(kept)
    assert all(x is y for x, y in zip(out, kept, strict=True))
    dead = If(BinOp("<", a, n), [Store("out", a, 1.0), Assign(c, a)])
    out = drop_dead_stores([Declare(c, "int64", 0), loop, dead])
    assert out[1] is loop and out[2] is not dead and assigns([out[2]]) == []
