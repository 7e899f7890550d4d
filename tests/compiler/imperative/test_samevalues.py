"""Values computed again (compiler.imperative.samevalues): a local declared with a load or a search an earlier local
still holds becomes a copy of it; exactly (the IR interpreter as oracle, over random programs that store to and
change what the values read), and in the kernels of ``linalg.cross``, whose components each searched a row of A
for two columns (six searches a row, three distinct)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.imperative import Buffer, Function, interpret
from compiler.imperative.ir import (Assign, BinOp, Block, Call, CompoundAssign, Const, Declare, For, If, Load, Store,
                                    Var)
from compiler.imperative.samevalues import same_values
from compiler.imperative.search import lower_bound_call
from compiler.imperative.traverse import walk

a, b, c, i, n = Var("a"), Var("b"), Var("c"), Var("i"), Var("n")


def copied(stmts) -> dict:
    """``{local: the local it is declared a copy of}`` of ``stmts``."""
    return {d.var.name: d.init.name for d in walk(Block(tuple(stmts))) if isinstance(d, Declare)
            and isinstance(d.init, Var)}


def test_a_second_load_and_search_read_the_first():
    body = [Declare(a, "int64", Load("pos", i)), Declare(b, "int64", Load("pos", i)),
            Declare(c, "int64", lower_bound_call("idx", a, n, 2)), Declare(Var("d"), "int64", lower_bound_call("idx", b, n, 2)),
            Store("out", 0, Var("d"))]
    assert copied(same_values(body)) == {"b": "a", "d": "c"}


@pytest.mark.parametrize("between", [
    [Store("pos", 0, 1)],                                   # the buffer is stored to
    [Assign(i, 2)],                                         # a local the value reads changes
    [Assign(a, 2)],                                         # the earlier local changes
    [Store("out", 0, Call("merge_op", (Var("pos"),)))],     # a helper that may write the buffer is handed it
], ids=["stored", "index-assigned", "source-assigned", "impure-call"])
def test_what_may_have_changed_is_computed_again(between):
    body = [Declare(a, "int64", Load("pos", i)), *between, Declare(b, "int64", Load("pos", i)), Store("out", 1, b)]
    assert copied(same_values(body)) == {}


def test_a_loop_sees_only_what_its_iterations_do_not_change():
    body = [Declare(a, "int64", Load("pos", i)),
            For(Var("k"), 0, 3, [Declare(b, "int64", Load("pos", i)), Store("out", 0, b), CompoundAssign("+", i, 1)]),
            For(Var("m"), 0, 3, [Declare(c, "int64", Load("pos", i)), Store("out", 1, c)])]
    # (the first loop moves i: neither loop's load is a's value any more)
    assert copied(same_values(body)) == {}
    body = [Declare(a, "int64", Load("pos", i)), For(Var("m"), 0, 3, [Declare(c, "int64", Load("pos", i)),
                                                                       Store("out", 1, c)])]
    assert copied(same_values(body)) == {"c": "a"}


def test_what_a_branch_declares_is_gone_after_it():
    body = [If(BinOp("<", i, n), [Declare(a, "int64", Load("pos", i)), Store("out", 0, a)]),
            Declare(b, "int64", Load("pos", i)), Store("out", 1, b)]
    assert copied(same_values(body)) == {}


# --- a property: random programs over two buffers, run by the IR interpreter before and after

@st.composite
def programs(draw):
    """Statements declaring locals from loads and searches of ``pos`` and ``idx`` at indexes made of other locals,
    storing to either buffer, changing locals, in loops and branches; every local added into ``out`` as its scope
    ends."""
    names = iter(f"v{k}" for k in range(200))
    loops = iter(f"q{k}" for k in range(100))

    def index(scope):
        # (few indexes, so that values repeat)
        e = draw(st.sampled_from([Const(0, "int64"), Const(1, "int64")] + [Var(v) for v in sorted(scope)][:2]))
        return BinOp("&", e, Const(3, "int64"))      # (within the buffers: 4 entries)

    def value(scope):
        kind = draw(st.sampled_from(["load", "load", "search", "plain"]))
        if kind == "load":
            return Load(draw(st.sampled_from(["pos", "idx"])), index(scope))
        if kind == "search":
            return lower_bound_call("idx", Const(0, "int64"), Const(4, "int64"), index(scope))
        return index(scope)

    def block(scope, depth):
        scope = set(scope)
        out = []
        for _ in range(draw(st.integers(0, 6))):
            kind = draw(st.sampled_from(["declare", "declare", "declare", "declare", "assign", "store"]
                                        + (["if", "for"] if depth < 2 else [])))
            if kind == "declare":
                v = next(names)
                out.append(Declare(Var(v), "int64", value(scope)))
                scope.add(v)
            elif kind == "assign" and scope - {v for v in scope if v.startswith("q")}:
                v = draw(st.sampled_from(sorted(v for v in scope if not v.startswith("q"))))
                out.append(Assign(Var(v), value(scope)))
            elif kind == "store":
                out.append(Store(draw(st.sampled_from(["pos", "idx", "out", "out", "out"])), index(scope), value(scope)))
            elif kind == "if":
                out.append(If(BinOp("<", index(scope), Const(2, "int64")), block(scope, depth + 1),
                              block(scope, depth + 1) if draw(st.booleans()) else None))
            elif kind == "for":
                v = next(loops)
                out.append(For(Var(v), 0, draw(st.integers(0, 3)), block(scope | {v}, depth + 1)))
        return out + [Store("out", Const(k % 4, "int64"), Var(v), "+") for k, v in enumerate(sorted(scope))]
    return block(set(), 0)


def run(stmts):
    fn = Function("f", (Buffer("out", "int64", "inout"), Buffer("pos", "int64", "inout"),
                        Buffer("idx", "int64", "inout")), Block(tuple(stmts)))
    got = interpret(fn, out=np.zeros(4, dtype=np.int64), pos=np.array([0, 2, 2, 3]), idx=np.array([0, 1, 1, 3]))
    return got["out"], got["pos"], got["idx"]


# (a load of pos declared again after a store to idx: pos unchanged, so the first holds)
@example([Declare(Var("v0"), "int64", Load("pos", Const(1, "int64"))), Store("idx", Const(0, "int64"), 5),
          Declare(Var("v1"), "int64", Load("pos", Const(1, "int64")))])
# (an index assigned between two loads: the second reads another entry)
@example([Declare(Var("v0"), "int64", Const(0, "int64")), Declare(Var("v1"), "int64", Load("pos", Var("v0"))),
          Assign(Var("v0"), Const(1, "int64")), Declare(Var("v2"), "int64", Load("pos", Var("v0"))),
          Store("out", Const(0, "int64"), Var("v2"), "+")])
# (a loop that changes the index after its load: the next iteration's load reads another entry)
@example([Declare(Var("v0"), "int64", Const(0, "int64")), Declare(Var("v1"), "int64", Load("pos", Var("v0"))),
          For(Var("q0"), 0, 2, [Declare(Var("v2"), "int64", Load("pos", Var("v0"))),
                                 Store("out", Const(0, "int64"), Var("v2"), "+"), Assign(Var("v0"), Const(1, "int64"))])])
@settings(max_examples=150, deadline=None)
@given(programs())
def test_same_values_keep_what_the_interpreter_computes(stmts):
    after = same_values(stmts)
    for x, y in zip(run(after), run(stmts)):
        np.testing.assert_array_equal(x, y)


# --- the kernels

def test_the_cross_products_kernel_searches_each_column_of_a_row_once():
    A = sp.random(40, 3, density=0.5, format="csr", random_state=5)
    y = np.array([1.0, -2.0, 0.5])
    expr = xp.linalg.cross(xp.asarray(A), xp.asarray(y))
    kernel = ss.lower(expr, strategy="looplets", checked=True)
    want = np.cross(A.toarray(), y)
    np.testing.assert_array_equal(kernel().to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
    searches = [x for x in walk(kernel.function.body) if isinstance(x, Call) and x.function == "lower_bound"]
    assert sorted(str(x.args[3]) for x in searches) == ["0", "1", "2"], kernel.c_source
    assert "same-values" in kernel.trace.stages()
