"""Peephole cleanup (compiler.imperative.cleanup): flags folded and overwritten stores dropped, exactly."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.imperative import Buffer, Function, Scalar, interpret
from compiler.imperative.cleanup import cleanup, drop_overwritten_stores, drop_repeated_conditions, fold_flags
from compiler.imperative.ir import (Assign, BinOp, Break, CompoundAssign, Const, Declare, For, Grow, If, Load, Store,
                                    Tagged, UnOp, Var, While)
from compiler.imperative.traverse import walk

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


def test_only_overwrites_nothing_reads_before_are_dropped():
    v = Const(0.0, "float64")
    assert text(drop_overwritten_stores([Store("c", i, v), Store("c", i, Load("w", i))])) == "c[i] = w[i];"
    kept = [Store("c", i, v), Store("c", i, Load("c", i) + 1.0)]          # the second reads the first
    assert drop_overwritten_stores(kept) == kept
    kept = [Store("c", i, v), Store("c", i, Load("w", i), "+")]             # a reduction keeps the first
    assert drop_overwritten_stores(kept) == kept
    kept = [Store("c", i, v), Store("c", i + 1, Load("w", i))]               # another slot
    assert drop_overwritten_stores(kept) == kept
    kept = [Store("c", i, v), CompoundAssign("+", i, 1), Store("c", i, Load("w", i))]   # the index moved on
    assert drop_overwritten_stores(kept) == kept


def test_a_store_overwritten_after_statements_that_do_not_touch_it_is_dropped():
    """A fiber's end ``C0_pos[1] = C0_nnz;`` stored after each of two loops appending one fiber (a
    concatenation, each loop in its provenance tag): the first is dead, the second counts."""
    nnz, p = Var("nnz"), Var("p")
    first, last = Store("pos", 1, nnz), Store("pos", 1, nnz)
    loop = For(p, 0, n, [Store("idx", nnz, p), CompoundAssign("+", nnz, 1)])
    body = [Tagged("A", [loop, first]), Tagged("B", [loop, last])]
    assert drop_overwritten_stores(body) == [Tagged("A", [loop]), Tagged("B", [loop, last])]
    # kept: what comes between reads the array, grows it, breaks out, or moves the index
    for between in ([Store("w", 0, Load("pos", 1))], [Grow("pos", n)], [If(Load("go", 0), [Break()])],
                    [Assign(i, n)], [For(i, 0, n, [])]):
        kept = [Store("pos", i, nnz), *between, Store("pos", i, nnz)]
        assert drop_overwritten_stores(kept) == kept, between


def test_a_store_overwritten_first_thing_in_a_tag_is_dropped():
    """The statement computing an expression is tagged with the nodes it computes: the fill an
    output's append stored before it is still overwritten (a CSR merge's C kept
    ``C_val[C1_nnz] = 0.0;`` before each computed value)."""
    v = Const(0.0, "float64")
    tagged = Tagged("expr:n0", [Tagged("expr:n2", [Store("c", i, Load("w", i))])])
    assert drop_overwritten_stores([Store("c", i, v), tagged]) == [tagged]
    kept = [Store("c", i, v), Tagged("t", [Store("c", i, Load("c", i) + 1.0)])]   # it reads the first
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


def test_a_local_declared_in_a_tag_or_a_block_and_read_after_it_stays():
    """A tag (provenance) and a block print inline: C sees their declarations after them. The pass
    took each for a scope of its own and dropped a declaration read only after it (C that did not
    compile, found lowering a split under looplets)."""
    from compiler.imperative.cleanup import drop_unused_locals
    from compiler.imperative.ir import Block

    x, y = Var("x"), Var("y")
    declare_x, declare_y = Declare(x, "int64", Load("idx", 0)), Declare(y, "int64", Load("idx", 1))
    read_x = Store("out", 0, x)
    for wrapped in (Tagged("t", [declare_x]), Block((declare_x,)), Tagged("t", [Tagged("u", [declare_x])]),
                    Tagged("t", [Block((declare_x,)), declare_y])):
        got = drop_unused_locals([wrapped, read_x])
        assert declare_x in walk(tuple(got)) and declare_y not in walk(tuple(got))
        assert got[-1] == read_x
    # in a loop's body, what follows the tag in the body reads it; nothing after the loop sees it
    loop = For(i, Const(0, "int64"), Const(3, "int64"), [Tagged("t", [declare_x]), read_x])
    assert drop_unused_locals([loop]) == [loop]
    unread = drop_unused_locals([For(i, Const(0, "int64"), Const(3, "int64"), [Tagged("t", [declare_x])]), read_x])
    assert declare_x not in walk(tuple(unread))
    # unread after the tag too: it goes, as before
    assert declare_x not in walk(tuple(drop_unused_locals([Tagged("t", [declare_x]), Store("out", 0, 1.0)])))


def test_two_phase_compute_declares_no_coordinate_it_does_not_store():
    from compiler import lower
    from compiler.format import csr, dcsr

    # (a DCSR output's phase 2 stores values only, dropping the fill after; a CSR output's
    # stores the coordinate too, as it drops the fill as it goes)
    k = lower("C[i, j] = A[i, j] + B[i, j]", A=csr(), B=csr(), C=dcsr(), options={"assembly": "two-phase"})
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


def test_a_loop_or_an_if_left_with_nothing_in_it_goes():
    from compiler.imperative.cleanup import drop_empty
    from compiler.imperative.ir import Comment
    j, k = Var("j"), Var("k")
    # (the locals the loops declare are read by nothing: once they go, the loops have nothing to do)
    body = [For(i, 0, n, [For(j, 0, 3, [Tagged("looplet:Sequence", [Declare(k, "int64", 0)])])]),
            If(Load("m", 0), [Store("out", 0, 1.0)], [Tagged("t", [Declare(k, "int64", j)])]),
            Store("out", 1, 2.0)]
    assert text(cleanup(body)) == "if (m[0]) {\n    out[0] = 1.0;\n}\nout[1] = 2.0;"
    # a loop that stores, a comment kept in a loop that does something, an if that breaks
    kept = [For(i, 0, n, [Comment("the row"), Store("out", i, 1.0)]), If(d, [Break()])]
    assert drop_empty(kept) == kept
    # the locals only a dropped loop's bound read go too
    stop = Var("stop")
    assert text(cleanup([Declare(stop, "int64", n + 1), For(i, 0, stop, [Declare(k, "int64", 0)]),
                         Store("out", 0, 1.0)])) == "out[0] = 1.0;"


def test_generated_kernels_have_no_empty_block():
    # a 3-part hstack of COO matrices split in three axes: looplets walked a phase of rows holding only the
    # fill as loops whose bodies declared one unread local (27 empty blocks, 1,907 lines of C; now 1,788)
    import re

    from compiler import array as xp
    from compiler import lower
    rng = np.random.default_rng(0)
    values = [np.where(rng.random((3, 3)) < 0.5, rng.random((3, 3)), 0.0) for _ in range(3)]
    e = xp.reshape(xp.concat([xp.asarray(Tensor.from_numpy(v, "coo")) for v in values], axis=1), (3, 3, 3))
    for strategy in ("looplets", "lattice"):
        k = lower(e, strategy=strategy)
        assert not re.search(r"\{\s*\}", k.c_source), strategy
        np.testing.assert_array_equal(k().to_numpy(), np.concatenate(values, axis=1).reshape(3, 3, 3))


def test_a_scratch_array_nothing_reads_goes_with_its_stores_and_the_loops_left_empty():
    from compiler.imperative.cleanup import drop_unread_scratch
    from compiler.imperative.ir import Allocate, View
    q, j = Var("q"), Var("j")
    body = [Allocate("seen", "bool", n, FALSE, [
        For(q, 0, n, [Declare(j, "int64", Load("list", q)), Store("seen", j, TRUE), Store("v", j, 1.0)]),
        For(q, 0, n, [Declare(j, "int64", Load("list", q)), Tagged("reset", [Store("seen", j, FALSE)])])])]
    assert text(drop_unread_scratch(body)) == text([For(q, 0, n, [Declare(j, "int64", Load("list", q)),
                                                                   Store("v", j, 1.0)])])
    # a read anywhere keeps it, and so does a view of it (a thread's part, read under another name)
    read = body + [Store("out", 0, Load("seen", 0))]
    assert drop_unread_scratch(read) == read
    viewed = [Allocate("seen", "bool", n, FALSE, [View("mine", "bool", "seen", 0, n), Store("mine", 0, TRUE)])]
    assert drop_unread_scratch(viewed) == viewed


def test_an_assignment_replaced_before_any_read_goes():
    from compiler.imperative.cleanup import drop_dead_assignments
    from compiler.imperative.ir import Break
    m = Var("m")
    body = [Assign(m, n + 1), Tagged("t", [Store("v", 0, 1.0)]), Assign(m, Var("k") + 1)]
    assert text(drop_dead_assignments(body)) == "v[0] = 1.0;\nm = k + 1;"
    # set in a branch in between: the second replaces that value too
    branch = [If(Load("c", 0), [Assign(m, 0)])]
    assert drop_dead_assignments([Assign(m, n + 1), *branch, Assign(m, 5)]) == [*branch, Assign(m, 5)]
    for between in ([Store("v", 0, m)],                        # read in between
                    [If(Load("c", 0), [CompoundAssign("+", m, 1)])],
                    [If(Load("c", 0), [Break()])]):             # the block may end before the second
        kept = [Assign(m, n + 1), *between, Assign(m, Var("k") + 1)]
        assert drop_dead_assignments(kept) == kept
    # the second reads the first: both stay
    kept = [Assign(m, n + 1), Assign(m, m * 2)]
    assert drop_dead_assignments(kept) == kept


def test_an_empty_outputs_first_growth_is_marked_and_checked_by_the_interpreter():
    from compiler.imperative.cleanup import first_grows
    from compiler.imperative.ir import Grow, Growable, OutScalar
    p = Var("p")
    body = [Grow("out_idx", p + n), Store("out_idx", p, 7), CompoundAssign("+", p, 1),
            For(i, 0, n, [Grow("out_idx", p + 1), Store("out_idx", p, i), CompoundAssign("+", p, 1)])]
    marked = first_grows(body, {"p": 0})
    assert [s.first for s in walk(tuple(marked)) if isinstance(s, Grow)] == [True, False]
    assert marked[0].needed == n          # p is still 0 there
    params = (Scalar("n", "int64"), OutScalar("p", "int64"), Growable("out_idx", "int64", "p"))
    got = interpret(Function("f", params, marked), n=3)
    assert got["out_idx"].tolist() == [7, 0, 1, 2]
    # a growth after another one is not first: the interpreter refuses the claim
    from compiler.imperative.ir import Grow as G
    wrong = [G("out_idx", 4), G("out_idx", 8, first=True)]
    with __import__("pytest").raises(Exception, match="claims to be its first, but it holds 16 elements"):
        interpret(Function("f", params, wrong), n=3)


def test_a_loop_local_that_would_hide_a_dead_one_assigns_it():
    from compiler.imperative.cleanup import reuse_dead_locals
    from compiler.imperative.ir import Pragma
    q = Var("q")

    def loop():
        return For(q, 0, n, [Tagged("t", [Declare(i, "int64", Load("list", q)), Store("v", i, 1.0)])])
    body = [Declare(i, "int64", 0), While(i < n, [CompoundAssign("+", i, 1)]), loop()]
    out = reuse_dead_locals(body)
    assert "int64 i = list[q];" not in text(out) and "i = list[q];" in text(out)
    args = dict(n=4, list=np.array([3, 1, 0, 2]), v=np.zeros(4))
    fn = lambda b: Function("f", (Scalar("n", "int64"), Buffer("list", "int64"), Buffer("v", "float64", "inout")), b)  # noqa: E731
    assert interpret(fn(out), **args)["v"].tolist() == interpret(fn(body), **args)["v"].tolist() == [1.0] * 4
    # read after the loop, of another type, or the loop under a pragma: it keeps its own
    for kept in (body + [Store("v", 0, i)], [Declare(i, "int64", 0), loop(), Store("v", 0, i)],
                 [Declare(i, "int32", 0), loop()], [Declare(i, "int64", 0), Pragma("omp parallel for"), loop()]):
        assert reuse_dead_locals(kept) == kept


def test_a_merge_that_declares_its_coordinate_in_each_case_assigns_the_dead_one():
    # while (...) { if (ib == iw) { int64 i = ib; ... } else { int64 i = iw; ... } }, then a tail
    # loop that declares its own i too: nothing reads the outer i, so every case assigns it
    from compiler.imperative.cleanup import reuse_dead_locals
    ib, iw, p = Var("ib"), Var("iw"), Var("p")
    merge = While(p < n, [Declare(ib, "int64", Load("b", p)), Declare(iw, "int64", Load("w", p)),
                          If(ib < iw, [Declare(i, "int64", ib), Store("v", i, 1.0)],
                             [Declare(i, "int64", iw), Store("v", i, 2.0)]),
                          CompoundAssign("+", p, 1)])
    tail = While(p < Var("m"), [Declare(i, "int64", Load("b", p)), Store("v", i, 3.0), CompoundAssign("+", p, 1)])
    body = [Declare(i, "int64", 0), While(i < n, [CompoundAssign("+", i, 1)]), Declare(p, "int64", 0), merge, tail]
    out = text(reuse_dead_locals(body))
    assert "int64 i = " not in out.split("int64 i = 0;")[1] and out.count("i = ib;") == 1
    args = dict(n=3, m=5, b=np.array([0, 2, 4, 1, 3]), w=np.array([1, 1, 3, 0, 0]), v=np.zeros(5))
    fn = lambda b: Function("f", (Scalar("n", "int64"), Scalar("m", "int64"), Buffer("b", "int64"),  # noqa: E731
                                  Buffer("w", "int64"), Buffer("v", "float64", "inout")), b)
    np.testing.assert_array_equal(interpret(fn(reuse_dead_locals(body)), **args)["v"], interpret(fn(body), **args)["v"])
    # a case that reads i before setting it (the outer value) keeps every declaration
    reads = While(p < n, [If(ib < iw, [Store("v", i, 1.0)], [Declare(i, "int64", iw), Store("v", i, 2.0)])])
    kept = [Declare(i, "int64", 0), reads]
    assert reuse_dead_locals(kept) == kept


# --- the passes that summarize each subtree once, against the walk-everything versions they replaced

def _expr_vars(stmts) -> set:
    """Names read by the expressions of ``stmts`` (not counting assignment targets), walking them whole."""
    from compiler.imperative.cleanup import _reads
    return _reads(walk(tuple(stmts)))


def _reference_drop_unused_locals(stmts):
    from compiler.imperative.cleanup import _drop_locals
    from compiler.imperative.traverse import map_bodies, pure as _pure
    out = [map_bodies(s, _reference_drop_unused_locals) for s in stmts]
    k = len(out) - 1
    while k >= 0:
        s = out[k]
        if isinstance(s, Declare) and _pure(s.init):
            rest, name = out[k + 1:], s.var.name
            if name not in _expr_vars(rest) and all(_pure(x.value) for x in walk(tuple(rest))
                                                    if isinstance(x, Assign) and x.target.name == name):
                out = out[:k] + _drop_locals(rest, {name})
        k -= 1
    return out


def _reference_drop_dead_assignments(stmts):
    # (what each statement reads, and whether it breaks, by walking it whole; the rest is shared)
    from compiler.imperative.cleanup import _dead_positions, _inside_scope, _without_positions
    from compiler.imperative.ir import Break
    from compiler.imperative.traverse import untagged
    out = [_inside_scope(s, _reference_drop_dead_assignments) for s in stmts]
    flat = untagged(out)
    dead = _dead_positions(flat, [_expr_vars([t]) for t in flat],
                           [any(isinstance(x, Break) for x in walk(t)) for t in flat])
    return _without_positions(out, dead)


@st.composite
def _blocks(draw, depth=0):
    from compiler.imperative.ir import BinOp, Break, Call
    names = [Var(x) for x in "abc"]

    def expr():
        v = draw(st.sampled_from(names))
        return draw(st.sampled_from([v, Const(1, "int64"), BinOp("+", v, Const(2, "int64")),
                                     Call("helper", (v,))]))   # (a helper: not pure)
    out = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["declare", "declare", "assign", "compound", "store", "if", "for", "break"]
                                    if depth < 2 else ["declare", "assign", "store"]))
        v = draw(st.sampled_from(names))
        if kind == "declare":
            out.append(Declare(v, "int64", expr()))
        elif kind == "assign":
            out.append(Assign(v, expr()))
        elif kind == "compound":
            out.append(CompoundAssign("+", v, expr()))
        elif kind == "store":
            out.append(Store("buf", Const(0, "int64"), expr()))
        elif kind == "if":
            out.append(If(v, draw(_blocks(depth + 1)), draw(_blocks(depth + 1)) if draw(st.booleans()) else None))
        elif kind == "for":
            out.append(For(Var("q"), Const(0, "int64"), Const(3, "int64"), draw(_blocks(depth + 1))))
        else:
            out.append(Break())
    return out


@settings(max_examples=150, deadline=None)
@given(_blocks())
def test_drop_unused_locals_drops_what_the_walk_everything_version_drops(stmts):
    from compiler.imperative.cleanup import drop_unused_locals
    assert drop_unused_locals(stmts) == _reference_drop_unused_locals(stmts)


@settings(max_examples=150, deadline=None)
@given(_blocks())
def test_drop_dead_assignments_drops_what_the_walk_everything_version_drops(stmts):
    from compiler.imperative.cleanup import drop_dead_assignments
    assert drop_dead_assignments(stmts) == _reference_drop_dead_assignments(stmts)


def test_a_concatenations_first_loop_leaves_no_dead_end_of_the_fiber():
    # (before: C0_pos[1] = C0_nnz; after each of the two loops appending C's one fiber)
    from compiler.looplets import compile_program
    from compiler.looplets.gallery import concat
    a, b = np.array([0, 2.0, 2, 0, 3]), np.array([3.0, 3, 0, 0])
    A, B = Tensor.from_numpy(a, "sparse"), Tensor.from_numpy(b, "sparse")
    k = compile_program(concat, C=Tensor.from_numpy(np.zeros(9), "sparse"), A=A, B=B)
    assert k.c_source.count("C0_pos[1] = C0_nnz;") == 1
    got = k(A=A, B=B)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), np.r_[a, b])
    np.testing.assert_array_equal(k.interpret(A=A, B=B).to_numpy(), np.r_[a, b])


def test_statements_the_cleanup_leaves_as_they_were_are_kept_themselves():
    """What no rewrite changes comes back as the same objects, so each pass's identity memos (what a
    statement reads, assigns, calls) serve the next pass: a loop, a branch, a tag and a block."""
    x, q = Var("x"), Var("q")
    loop = For(q, 0, Var("n"), [If(Load("c", q), [Store("v", q, Load("w", q))], [Store("v", q, 0.0)]),
                                Tagged("t", [Store("w", q, Var("s"))])])
    body = [Declare(x, "int64", Load("w", 0)), loop, Store("v", 0, x)]
    out = cleanup(body)
    assert out[1] is loop and all(a is b for a, b in zip(out, body, strict=True))


def test_an_if_inside_an_if_on_the_same_condition_is_dropped_through_tags():
    # (the looplets tested a row's tail `j < A1_size` twice: the phase's bound, then its looplet's own)
    i, n = Var("i"), Var("n")
    go, other = BinOp("<", i, n), BinOp("<", i, Var("m"))
    inner = If(go, [Store("v", 0, 1.0)], [Store("v", 0, 2.0)])
    out = drop_repeated_conditions([If(go, [Tagged("t", [inner])]), If(go, [If(other, [Store("v", 0, 3.0)])])])
    assert out[0] == If(go, [Tagged("t", [Store("v", 0, 1.0)])])
    assert out[1] == If(go, [If(other, [Store("v", 0, 3.0)])])   # (another condition: kept)
    # (two statements: the first may change what the condition reads)
    two = [If(go, [Assign(i, BinOp("+", i, Const(1, "int64"))), If(go, [Store("v", 0, 1.0)])])]
    assert drop_repeated_conditions(two) == two


def test_a_row_max_by_the_looplets_tests_its_tail_once():
    a = sp.random(30, 40, density=0.1, format="csr", random_state=3)
    A = Tensor.from_scipy(a, name="A")
    k = ss.lower("y[i] = max[j](A[i, j])", strategy="looplets", A=A)
    lines = [line.strip() for line in k.c_source.splitlines()]
    assert not any(x.startswith("if (") and x == y for x, y in zip(lines, lines[1:])), k.c_source
    np.testing.assert_array_equal(k(A=A).to_numpy(), a.toarray().max(axis=1))
