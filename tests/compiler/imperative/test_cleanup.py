"""Peephole cleanup (compiler.imperative.cleanup): flags folded and overwritten stores dropped, exactly."""

import numpy as np
import scipy.sparse as sp

from compiler import Tensor
from compiler.imperative import Buffer, Function, Scalar, interpret
from compiler.imperative.cleanup import cleanup, drop_overwritten_stores, fold_flags
from compiler.imperative.ir import (Assign, CompoundAssign, Const, Declare, For, If, Load, Store, Tagged, UnOp,
                                    Var, While, walk)

d, i, n = Var("dirty"), Var("i"), Var("n")
TRUE, FALSE = Const(True, "bool"), Const(False, "bool")


def text(stmts):
    return "\n".join(str(s).strip() for s in stmts)


def test_a_flag_set_then_tested_folds_away_across_tags():
    body = [Tagged("a", [Declare(d, "bool", FALSE)]), Tagged("b", [Store("v", 0, 1.0), Assign(d, TRUE)]),
            Tagged("c", [If(d, [Store("idx", 0, 7)], [Store("idx", 0, 8)])])]
    out = fold_flags(body)
    assert "idx[0] = 7;" in text(out) and "idx[0] = 8" not in text(out) and "dirty" not in text(out)


def test_a_negated_known_flag_takes_the_other_branch():
    out = fold_flags([Declare(d, "bool", FALSE), If(UnOp("!", d), [Store("x", 0, 1)])])
    assert text(out) == "x[0] = 1;"


def test_a_flag_set_in_a_loop_is_not_known_after_it():
    loop = For(i, 0, n, [If(Load("m", i), [Assign(d, TRUE)])])
    body = [Declare(d, "bool", FALSE), loop, If(d, [Store("x", 0, 1)])]
    assert fold_flags(body) == body


def test_a_flag_set_in_one_branch_is_not_known_after_the_if():
    body = [Declare(d, "bool", FALSE), If(Load("m", 0), [Assign(d, TRUE)]), If(d, [Store("x", 0, 1)])]
    assert fold_flags(body) == body


def test_a_flag_known_at_a_loop_entry_is_not_assumed_inside_the_loop():
    # the loop body may run again after it set the flag
    loop = While(Load("go", 0), [If(d, [Store("x", 0, 1)]), Assign(d, TRUE)])
    body = [Declare(d, "bool", FALSE), loop]
    assert fold_flags(body) == body


def test_a_flag_still_read_keeps_its_assignments():
    body = [Declare(d, "bool", FALSE), Assign(d, TRUE), If(d, [Store("x", 0, 1)]), Store("f", 0, d)]
    out = text(fold_flags(body))
    assert "bool dirty = false;" in out and "dirty = true;" in out and "f[0] = dirty;" in out
    assert "if (dirty)" not in out


def test_only_adjacent_overwrites_are_dropped():
    v = Const(0.0, "float64")
    assert text(drop_overwritten_stores([Store("c", i, v), Store("c", i, Load("w", i))])) == "c[i] = w[i];"
    kept = [Store("c", i, v), Store("c", i, Load("c", i) + 1.0)]          # the second reads the first
    assert drop_overwritten_stores(kept) == kept
    kept = [Store("c", i, v), Store("c", i, Load("w", i), "+")]             # a reduction keeps the first
    assert drop_overwritten_stores(kept) == kept
    kept = [Store("c", i, v), Store("c", i + 1, Load("w", i))]               # another slot
    assert drop_overwritten_stores(kept) == kept
    kept = [Store("c", i, v), CompoundAssign("+", n, 1), Store("c", i, Load("w", i))]   # not adjacent
    assert drop_overwritten_stores(kept) == kept


def test_cleanup_preserves_what_the_interpreter_computes():
    m, x, out = Buffer("m", "bool"), Buffer("x", "float64"), Buffer("out", "float64", "inout")
    k = Var("k")
    body = [For(i, 0, n, [
        Declare(d, "bool", FALSE),
        Store("out", i, Const(-1.0, "float64")),
        Store("out", i, Load("x", i)),
        If(Load("m", i), [Assign(d, TRUE)]),
        If(d, [Store("out", i, Load("x", i) * 2.0, "+")]),
        Declare(k, "bool", TRUE),
        If(UnOp("!", k), [Store("out", i, 0.0)], [Store("out", i, 1.0, "+")])])]
    fn = Function("f", (Scalar("n", "int64"), m, x, out), body)
    cleaned = Function("f", fn.params, cleanup(fn.body.body))
    assert sum(isinstance(s, If) for s in walk(cleaned.body)) == 2   # the test on k is gone
    rng = np.random.default_rng(0)
    args = dict(n=9, m=rng.random(9) < 0.5, x=rng.random(9))
    np.testing.assert_array_equal(interpret(fn, **args, out=np.zeros(9))["out"],
                                  interpret(cleaned, **args, out=np.zeros(9))["out"])


def test_sparse_output_kernels_read_without_dirty_flags():
    from compiler.levels import Dense, Element, SparseList
    from compiler.looplets import compile_program
    from compiler.looplets.gallery import gustavson
    S = sp.random(40, 40, density=0.1, format="csr", random_state=3)
    A = Tensor.from_scipy(S, Dense(SparseList(Element(0.0))))
    k = compile_program(gustavson, C="csr", A=A, B=A)
    assert "dirty" not in k.c_source
    assert "cleanup" in [s.stage for s in k.trace.steps]
    np.testing.assert_allclose(k(A=A, B=A).to_numpy(), (S @ S).toarray())


def test_unused_locals_are_looked_for_in_their_own_block():
    from compiler.imperative.cleanup import drop_unused_locals
    from compiler.imperative.ir import Call

    j = Var("j")
    reads = If(Var("a"), [Declare(j, "int64", Load("idx", 0)), Store("out", 0, j)])
    unread = If(Var("b"), [Declare(j, "int64", Load("idx", 1)), Store("val", 0, 1.0)])
    got = drop_unused_locals([reads, unread])
    assert got[0] == reads                                        # the same name, read in its block
    assert got[1].then.body == (Store("val", 0, 1.0),)            # not read in this one
    helper = Declare(i, "float64", Call("ss_user", (Const(1.0, "float64"),)))
    assert drop_unused_locals([helper]) == [helper]               # a helper might do more than compute


def test_two_phase_compute_declares_no_coordinate_it_does_not_store():
    from compiler import lower
    from compiler.format import csr

    k = lower("C[i, j] = A[i, j] + B[i, j]", A=csr(), B=csr(), C=csr(), options={"assembly": "two-phase"})
    compute = k.c_source[k.c_source.index("phase 2, compute"):]
    assert "int64_t j = " not in compute and "if (true)" not in k.c_source
    assert "cleanup" in [s.stage for s in k.trace.steps]


def test_a_block_of_its_own_prints_as_a_scope():
    from compiler.imperative import pretty

    printed = pretty(If(TRUE, [Declare(Var("x"), "int64", 1)]))
    assert printed.splitlines() == ["{", "    int64 x = 1;", "}"]


def test_a_second_declaration_in_one_scope_becomes_an_assignment():
    from compiler.imperative.cleanup import reuse_declared
    from compiler.imperative.ir import Allocate, Assign, Const, Declare, For, Store, Tagged, Var, While
    i, j = Var("i"), Var("j")
    loop = [Declare(i, "int64", Const(0, "int64")), While(i < 3, [Store("y", i, 1.0), Assign(i, i + 1)])]
    # the second loop sits in a tag and a scratch array's body: the same C scope
    body = [*loop, Tagged("t", [Allocate("w", "int64", 4, None, loop)])]
    got = reuse_declared(body)
    tag = got[2]
    second = tag.body.body[0].body.body   # the scratch array's body
    assert second[0] == Assign(i, Const(0, "int64"))
    assert got[0] == body[0]
    # a loop body is a scope of its own: it may declare the name again (shadowing)
    nested = [Declare(j, "int64", Const(1, "int64")), For(i, 0, 2, [Declare(j, "int64", Const(2, "int64"))])]
    assert reuse_declared(nested) == nested
    # another type is left alone (the C compiler reports it)
    other = [Declare(j, "int64", Const(1, "int64")), Declare(j, "float64", Const(2.0, "float64"))]
    assert reuse_declared(other) == other


def test_a_loop_that_only_advances_an_unread_local_is_dropped():
    from compiler.imperative.cleanup import drop_idle_loops
    j, idle = Var("j"), lambda: While(j < n, [Tagged("lattice:j", [CompoundAssign("+", j, 1)])])
    before = [Declare(j, "int64", 0), Store("out", 0, j)]
    assert drop_idle_loops(before + [idle()]) == before
    # j read after the loop: it is what the loop computes
    kept = before + [idle(), Store("out", 1, j)]
    assert drop_idle_loops(kept) == kept
    # j declared outside this block (a loop around may read it in its next iteration)
    kept = [For(i, 0, n, [idle()])]
    assert drop_idle_loops([Declare(j, "int64", 0)] + kept) == [Declare(j, "int64", 0)] + kept
    # a loop that stores, or calls a helper, does something
    kept = before + [While(j < n, [Store("out", j, 1.0), CompoundAssign("+", j, 1)])]
    assert drop_idle_loops(kept) == kept


def test_generated_kernels_have_no_idle_loop():
    # the rest of j's universe where x has no entry does nothing: no loop walks it
    import re

    from compiler import evaluate, lower
    a = np.zeros((3, 4), np.int64)
    a[0, 1], a[2, 3] = 5, -2
    A = Tensor.from_numpy(a, "csc", name="A")
    x = Tensor.from_numpy(np.array([0, 2, 0, 1], np.int64), "sparse", name="x")
    k = lower("y[i] = max[j](A[i, j] * x[j])", A=A, x=x, y="dense")
    assert not re.search(r"while \([^)]*\) \{\s*\w+ \+= 1;\s*\}", k.c_source)
    np.testing.assert_array_equal(k(A=A, x=x).to_numpy(), evaluate("y[i] = max[j](A[i, j] * x[j])", A=A, x=x)[0])
