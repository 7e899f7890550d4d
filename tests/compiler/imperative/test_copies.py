"""Copies of locals (compiler.imperative.copies): a local that only copies another, neither ever
changing, is replaced by it; exactly (the IR interpreter as oracle), and in the looplets' kernels
(a walk's end ``qA_end = qA_stop``, a phase's stop ``phase_stop_2 = lastA``)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.imperative import Buffer, Function, interpret
from compiler.imperative.copies import copies, drop_copies
from compiler.imperative.ir import (Assign, BinOp, Block, CompoundAssign, Const, Declare, For, If, Load, Pragma,
                                    Store, Tagged, Var, While)
from compiler.imperative.traverse import walk
from compiler.reference import evaluate

a, b, c, q = Var("a"), Var("b"), Var("c"), Var("q")


def text(stmts):
    return "\n".join(str(s).strip() for s in stmts)


def test_a_copy_read_in_a_loop_and_a_tag_becomes_what_it_copies():
    body = [Declare(a, "int64", Load("pos", 1)),
            Tagged("t", [Declare(b, "int64", a)]),
            Declare(q, "int64", 0),
            While(BinOp("<", q, b), [Store("out", q, b), CompoundAssign("+", q, 1)])]
    assert copies(body) == {"b": "a"}
    out = drop_copies(body)
    assert "b" not in {n.name for n in walk(tuple(out)) if isinstance(n, Var)}
    assert "while (q < a)" in text(out) and "out[q] = a;" in text(out)


@pytest.mark.parametrize("body", [
    [Declare(a, "int64", 1), Declare(b, "int64", a), Assign(a, 2), Store("out", 0, b)],          # a changes
    [Declare(a, "int64", 1), Declare(b, "int64", a), CompoundAssign("+", b, 1)],                  # b changes
    [Declare(a, "int64", 1), Declare(b, "int32", a), Store("out", 0, b)],                         # another type
    [Declare(a, "int64", 1), Declare(b, "int64", a), If(c, [Declare(a, "int64", 3),               # a hidden
                                                            Store("out", 0, b)])],
    [Declare(a, "int64", 1), Declare(b, "int64", a), If(c, [Assign(b, 3)]), Store("out", 0, b)],  # b changes inside
    [Declare(a, "int64", 1), Declare(b, "int64", a), Pragma("omp simd reduction(+:b)")],           # a pragma names it
    [For(a, 0, 4, [Declare(b, "int64", a), Store("out", b, 1)])],                                # a loop's variable
    [Declare(b, "int64", Var("n")), Store("out", 0, b)],                                          # a parameter's type is unknown
], ids=["source-assigned", "copy-assigned", "other-dtype", "source-hidden", "copy-changed-inside", "pragma",
        "loop-variable", "parameter"])
def test_what_is_not_a_copy_stays(body):
    assert copies(body) == {} and drop_copies(body) == body


def test_a_copy_is_a_copy_in_its_own_scope():
    # a changes before the copy (a loop found it), and b and a are declared again in other scopes:
    # a COO row's walk, qA1_stop = qA0_next, and a lattice point's j = jA
    body = [If(c, [Declare(a, "int64", 1), While(BinOp("<", a, 4), [CompoundAssign("+", a, 1)]),
                   Declare(b, "int64", a), Store("out", b, b)],
               [Declare(a, "int64", 2), Declare(b, "int64", a), Store("out", 0, b)]),
            Declare(b, "int64", 5), Store("out", 1, b)]
    out = drop_copies(body)
    assert copies(body) == {"b": "a"} and copies(out) == {}
    assert text(out).count("out[a] = a;") == 1 and "out[0] = a;" in text(out) and "out[1] = b;" in text(out)


def test_a_copy_of_a_copy_is_the_first():
    body = [Declare(a, "int64", 7), Declare(b, "int64", a), Declare(c, "int64", b), Store("out", 0, c)]
    assert copies(body) == {"b": "a", "c": "a"}
    assert text(drop_copies(body)) == "int64 a = 7;\nout[0] = a;"


# --- a property: random programs, run by the IR interpreter before and after

LOCALS = "abcde"


@st.composite
def programs(draw):
    """A list of statements over int64 locals, each read only where C sees it and none hiding
    another (the interpreter keeps one value per name); a name may be declared again in a
    sibling scope. Results go into out[0:4] by +=, each local's as its scope ends too."""
    loops = iter(f"q{k}" for k in range(100))

    def expr(scope, depth=0):
        choices = [Const(draw(st.integers(-3, 5)), "int64")] + [Var(v) for v in scope]
        e = draw(st.sampled_from(choices))
        if depth < 2 and draw(st.booleans()):
            e = BinOp(draw(st.sampled_from(["+", "-", "*"])), e, expr(scope, depth + 1))
        return e

    def block(scope, depth):
        scope = dict(scope)
        out = []
        for _ in range(draw(st.integers(0, 5))):
            kind = draw(st.sampled_from(["copy", "copy", "declare", "assign", "compound", "store"]
                                        + (["if", "for"] if depth < 2 else [])))
            free = [v for v in LOCALS if v not in scope]
            if kind in ("copy", "declare") and free:
                v = draw(st.sampled_from(free))
                if kind == "copy" and scope:
                    init = Var(draw(st.sampled_from(sorted(scope))))
                    dtype = draw(st.sampled_from(["int64", "int64", "int64", "int32"]))
                else:
                    init, dtype = expr(scope), "int64"
                out.append(Declare(Var(v), dtype, init))
                scope[v] = dtype
            elif kind in ("assign", "compound") and any(v in LOCALS for v in scope):
                # (not a loop's variable: the loop would not end)
                v = Var(draw(st.sampled_from(sorted(v for v in scope if v in LOCALS))))
                out.append(Assign(v, expr(scope)) if kind == "assign" else CompoundAssign("+", v, expr(scope)))
            elif kind == "store":
                out.append(Store("out", Const(draw(st.integers(0, 3)), "int64"), expr(scope), "+"))
            elif kind == "if":
                cond = BinOp("<", expr(scope), Const(draw(st.integers(-2, 4)), "int64"))
                out.append(If(cond, block(scope, depth + 1), block(scope, depth + 1) if draw(st.booleans()) else None))
            elif kind == "for":
                v = next(loops)
                out.append(For(Var(v), 0, draw(st.integers(0, 3)), block({**scope, v: "int64"}, depth + 1)))
        # every local read once more as its scope ends: a copy read after its source changed shows
        out += [Store("out", Const(k % 4, "int64"), Var(v), "+") for k, v in enumerate(sorted(scope))]
        return out
    return block({}, 0)


def run(stmts):
    fn = Function("f", (Buffer("out", "int64", "inout"),), Block(tuple(stmts)))
    return interpret(fn, out=np.zeros(4, dtype=np.int64))["out"]


# (a copy whose source a later sibling declares again: two declarations, so no copy; a copy in a loop
# of a local assigned after the loop: no copy either)
@example([If(BinOp("<", Const(0, "int64"), Const(1, "int64")), [Declare(a, "int64", 2), Declare(b, "int64", a),
                                                                   Store("out", 0, b, "+")]),
          Declare(a, "int64", 5), Store("out", 1, a, "+")])
@example([Declare(a, "int64", 3), For(Var("q0"), 0, 3, [Declare(b, "int64", a), Store("out", 0, b, "+")]),
          CompoundAssign("+", a, 1), Store("out", 1, a, "+")])
# (found when the source's assignments were not looked at: b read after a changed)
@example([Declare(a, "int64", 0), Declare(b, "int64", a), Assign(a, 1), Store("out", 0, a, "+"),
          Store("out", 1, b, "+")])
@settings(max_examples=150, deadline=None)
@given(programs())
def test_dropping_copies_keeps_what_the_interpreter_computes(stmts):
    after = drop_copies(stmts)
    np.testing.assert_array_equal(run(after), run(stmts))
    assert copies(after) == {}


# --- the looplets' kernels

S = sp.random(9, 11, density=0.3, format="csr", random_state=11)
T = sp.random(9, 11, density=0.3, format="csr", random_state=12)
X = np.arange(11.0)


def kernels():
    A, B = ss.Tensor.from_scipy(S, "csr"), ss.Tensor.from_scipy(T, "csr")
    Ac, Bc = ss.Tensor.from_scipy(S, "coo"), ss.Tensor.from_scipy(T, "coo")
    x = ss.Tensor.from_numpy(S.toarray()[0], "sparse")
    y = ss.Tensor.from_numpy(T.toarray()[0], "sparse")
    return [("C[i, j] = A[i, j] + B[i, j]", dict(A=A, B=B, C="csr")),
            ("C[i, j] = A[i, j] * B[i, j]", dict(A=A, B=B, C="csr")),
            ("y[i] += A[i, j] * x[j]", dict(A=A, x=X)),
            ("C[i, j] = A[i, j] + B[i, j]", dict(A=Ac, B=Bc, C="coo")),
            ("s[] += x[i] * y[i]", dict(x=x, y=y))]


@pytest.mark.parametrize("k", range(5), ids=["csr+csr", "csr*csr", "spmv", "coo+coo", "dot"])
def test_looplets_kernels_keep_no_copy_and_agree_with_the_oracle(k):
    program, tensors = kernels()[k]
    kernel = ss.lower(program, strategy="looplets", **tensors)
    fn = kernel.trace.find("imperative")[0].after
    assert copies(fn.body.body) == {}, kernel.c_source
    inputs = {n: v for n, v in tensors.items() if not isinstance(v, str)}
    got = kernel(**inputs)
    got = got.to_numpy() if hasattr(got, "to_numpy") else got
    np.testing.assert_allclose(got, evaluate(program, **inputs)[0])


def test_csr_plus_csr_walks_each_tail_to_its_fibers_stop():
    A, B = ss.Tensor.from_scipy(S, "csr"), ss.Tensor.from_scipy(T, "csr")
    kernel = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy="looplets", A=A, B=B, C="csr")
    fn = kernel.trace.find("imperative")[0].after
    loops = [n.cond for n in walk(fn.body) if isinstance(n, While)]
    assert BinOp("<", Var("qA"), Var("qA_stop")) in loops and BinOp("<", Var("qB"), Var("qB_stop")) in loops
    assert "copies" in kernel.trace.stages()


def test_coo_plus_coo_walks_each_row_to_its_segments_end_by_one_name():
    # a row's walk ran to qA1_stop = qA0_next: the segment's end, found by a loop that advanced qA0_next
    A, B = ss.Tensor.from_scipy(S, "coo"), ss.Tensor.from_scipy(T, "coo")
    program = "C[i, j] = A[i, j] + B[i, j]"
    kernel = ss.lower(program, strategy="looplets", A=A, B=B)     # (the COO output is in the kernels above)
    declared = [d for d in walk(kernel.function.body) if isinstance(d, Declare)]
    assert not [d for d in declared if isinstance(d.init, Var) and d.init.name.endswith("_next")], kernel.c_source
    assert copies(kernel.function.body.body) == {}
    np.testing.assert_allclose(kernel(A=A, B=B).to_numpy(), evaluate(program, A=A, B=B)[0])


def lattice_kernels():
    A, B = ss.Tensor.from_scipy(S, "csr"), ss.Tensor.from_scipy(T, "csr")
    Ac, Bc = ss.Tensor.from_scipy(S, "coo"), ss.Tensor.from_scipy(T, "coo")
    Bt = ss.Tensor.from_scipy(T.T.tocsr(), "csr")
    return [("y[i] += A[i, j] * x[j]", dict(A=A, x=X), set()),
            ("C[i, j] = A[i, j] + B[i, j]", dict(A=A, B=B, C="csr"), {("j", "jA"), ("j", "jB")}),
            ("C[i, j] = A[i, j] * B[i, j]", dict(A=A, B=B, C="csr"), set()),
            ("C[i, j] = A[i, j] + B[i, j]", dict(A=Ac, B=Bc, C="coo"),
             {("j", "jA"), ("j", "jB"), ("pA0_1_end", "sA0"), ("pB0_1_end", "sB0")}),
            ("C[i, j] = A[i, k] * B[k, j]", dict(A=A, B=Bt, C="csr"), {("nC", "w_n")})]


@pytest.mark.parametrize("k", range(5), ids=["spmv", "csr+csr", "csr*csr", "coo+coo", "spgemm"])
def test_lattice_kernels_keep_no_copy_and_agree_with_the_oracle(k):
    # the copies each kernel had: a merge case's coordinate j = jA, a row's end pA0_1_end = sA0 (the
    # segment's end, found by a loop), the room a row of SpGEMM needs nC = w_n (the workspace's count)
    program, tensors, had = lattice_kernels()[k]
    kernel = ss.lower(program, strategy="lattice", **tensors)
    fn = kernel.function
    assert copies(fn.body.body) == {}, kernel.c_source
    declared = {(d.var.name, d.init.name) for d in walk(fn.body) if isinstance(d, Declare) and isinstance(d.init, Var)}
    assert not had & declared, kernel.c_source
    assert ("copies" in kernel.trace.stages()) == bool(had)
    inputs = {n: v for n, v in tensors.items() if not isinstance(v, str)}
    got = kernel(**inputs)
    got = got.to_numpy() if hasattr(got, "to_numpy") else got
    np.testing.assert_allclose(got, evaluate(program, **inputs)[0])
