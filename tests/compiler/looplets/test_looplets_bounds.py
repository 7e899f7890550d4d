"""The integer facts of the looplet lowering (compiler.looplets.bounds): stored coordinates are in
[0, size), a fiber's last is at most its size, a minimum is at most each of its terms; and the dead
code they remove from common kernels (issue 29: a search for coordinate 0 at each row's start, a
gallop under ``stop < last`` where the stop is ``min(last, size)``)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st

import compiler as ss
from compiler.imperative import ir, traverse
from compiler.imperative.ir import BinOp, Const, Declare, If, Load, Select, Var
from compiler.looplets import extents as X
from compiler.looplets.bounds import IntFacts, assuming, input_facts
from compiler.imperative.search import seek_call
from compiler.looplets.searching import search_stmts
from compiler.reference import evaluate

a, b, c, n, q = (Var(s) for s in ("a", "b", "c", "n", "q"))
idx = Load("A1_idx", q)


def csr_facts():
    facts = IntFacts()
    facts.coordinate_array("A1_idx", Var("A1_size"), "A.lvl1 stores coordinates")
    facts.bound(Var("lastA"), 0, Var("A1_size"), "one past A's last coordinate")
    facts.define(Var("B1_size"), Var("A1_size"), "the call checks j's extents agree")
    return facts


# --------------------------------------------------------------------------- the rules


def test_a_minimum_is_at_most_each_term_and_a_maximum_at_least():
    assert X.prove_le(X.imin(a, b), a) and X.prove_le(X.imin(a, b), b)
    assert X.prove_le(a, X.imax(a, b)) and X.prove_le(b, X.imax(a, b))
    assert X.prove_le(X.imin(a, b), X.imax(a, c))
    assert X.prove_le(X.imin(X.sub(a, 1), b), a)        # min(a - 1, b) <= a - 1 <= a
    assert X.prove_le(a, X.imin(a, X.add(a, 2)))         # both terms at least a


def test_the_min_max_rules_do_not_fire_on_unknown_terms():
    assert not X.prove_le(X.imin(a, b), c)               # min(a, b) <= c: unknown
    assert not X.prove_le(a, X.imin(a, b))               # a <= min(a, b) needs a <= b
    assert not X.prove_le(X.imax(a, b), a)
    assert not X.prove_le(X.imin(a, b), X.sub(a, 1))
    assert not X.prove_lt(X.imin(a, b), a)               # at most, not below
    assert X.imin(a, b) != a and X.imin(a, n) != n       # nothing folds without facts


def test_sums_of_terms_times_constants_are_compared_term_by_term():
    # (a part's window end s + |A| - 3·j spelled two ways, as a concatenation's offsets make it)
    j, size = Var("j"), Var("A1_size")
    three_j = BinOp("*", j, Const(3, "int64"))
    assert X.difference(X.sub(size, three_j), X.neg(X.sub(three_j, size))) == 0
    assert X.prove_le(X.sub(size, three_j), X.neg(X.sub(three_j, size)))
    assert X.difference(X.add(three_j, 1), BinOp("*", X.add(j, 1), Const(3, "int64"))) == -2
    # (j * 3 and j * 4 differ by j, not a constant)
    assert X.difference(three_j, BinOp("*", j, Const(4, "int64"))) is None


def test_a_term_at_least_zero_bounds_a_difference_by_its_sign():
    j, s, size = Var("j"), Var("s"), Var("A1_size")
    start, end = X.sub(s, BinOp("*", j, Const(3, "int64"))), X.add(X.sub(s, BinOp("*", j, Const(3, "int64"))), size)
    assert not X.prove_le(start, end)          # (no facts: A1_size may be negative)
    facts = IntFacts()
    facts.bound(size, 0, None, "an extent of a concatenation's part")
    with assuming(facts):
        assert X.prove_le(start, end) and not X.prove_le(end, start)
        assert X.prove_le(X.sub(start, idx), start) is False    # (A1_idx is no coordinate array here)
    facts.coordinate_array("A1_idx", size, "A.lvl1 stores coordinates")
    with assuming(facts):
        assert X.prove_le(X.sub(start, idx), start)              # (a stored coordinate is at least 0)


def test_a_stored_coordinate_is_at_least_zero_and_below_its_size():
    with assuming(csr_facts()):
        assert X.prove_le(0, idx) and X.prove_le(-3, idx)
        assert X.prove_le(idx, X.sub(Var("A1_size"), 1)) and X.prove_lt(idx, Var("A1_size"))
        assert X.prove_le(1, X.add(idx, 1))


def test_the_coordinate_fact_is_about_raw_stored_coordinates_only():
    with assuming(csr_facts()):
        assert not X.prove_le(1, idx)                            # a coordinate may be 0
        assert not X.prove_le(0, X.sub(idx, 1))                  # shifted: may be -1 (A[i, j - 1])
        assert not X.prove_le(0, BinOp("-", n, idx))             # mirrored: n - idx (a negative step)
        assert not X.prove_le(0, X.add(idx, b))                  # shifted by an unknown
        assert not X.prove_le(0, Load("A_val", q))               # values are no coordinates
        assert not X.prove_le(0, Load("B1_idx", q))              # an array no level vouched for
        assert not X.prove_le(idx, X.sub(Var("A1_size"), 2))
    assert not X.prove_le(0, idx)                                # outside the lowering: no facts


def test_a_fiber_last_is_at_most_its_size_so_the_cut_at_min_last_size_is_last():
    lastA, size = Var("lastA"), Var("A1_size")
    with assuming(csr_facts()):
        assert X.imin(lastA, size) == lastA
        assert X.prove_le(lastA, X.imin(lastA, size))
        assert X.prove_le(lastA, Var("B1_size"))                 # B1_size is A1_size (the call checks)
        assert not X.prove_le(X.add(lastA, 1), size)             # shifted past it: unknown
        assert not X.prove_le(lastA, X.sub(size, 1))
        assert not X.prove_le(lastA, Var("C1_size"))
        assert X.imin(lastA, Var("C1_size")) != lastA
    assert X.imin(lastA, size) != lastA


def test_a_search_for_coordinate_zero_is_no_search():
    with assuming(csr_facts()):
        assert search_stmts(q, "A1_idx", Var("q_stop"), Const(0, "int64"), str) == []
        assert search_stmts(q, "A1_idx", Var("q_stop"), Const(1, "int64"), str) != []
        assert search_stmts(q, "A1_idx", Var("q_stop"), Var("j"), str) != []
        assert search_stmts(q, "B1_idx", Var("q_stop"), Const(0, "int64"), str) != []
    assert search_stmts(q, "A1_idx", Var("q_stop"), Const(0, "int64"), str) != []


def test_input_facts_come_from_what_each_level_says():
    from compiler.format import parse_format
    from compiler.looplets.fibers import TensorInfo
    infos = {"A": TensorInfo.from_format("A", parse_format("coo")),
             "D": TensorInfo.from_format("D", parse_format("dense", ndim=2)),
             "C": TensorInfo.from_format("C", parse_format("csr"), "output")}
    facts = input_facts(infos)
    assert set(facts.coordinates) == {"A0_idx0", "A0_idx1"}       # dense stores none; outputs are written
    assert facts.coordinates["A0_idx1"][0] == Var("A1_size")
    assert "validated when A is built" in facts.table()


# --------------------------------------------------------------------------- the kernels


def dead_pieces(fn, coordinate_arrays) -> list:
    """The searches of a coordinate array for a value known to be 0 or less (a constant, or a local
    declared so in the same block and not assigned since), and the tests ``stop < last`` of a stop
    declared as ``last`` or ``min(last, ...)``."""
    found = []
    decls = {n.var.name: n.init for n in traverse.walk(fn.body) if isinstance(n, Declare)}

    def assigns(s):
        return {t.target.name for t in traverse.walk(s) if isinstance(t, (ir.Assign, ir.CompoundAssign))
                and isinstance(t.target, Var)}

    def min_terms(e):
        if isinstance(e, Select) and isinstance(e.cond, BinOp) and e.cond.op == "<" and e.cond.left == e.then \
                and e.cond.right == e.otherwise:
            return min_terms(e.then) + [e.otherwise]
        return [e]

    def block(stmts):
        zero = set()

        def at_most_zero(e):
            return isinstance(e, Const) and e.value <= 0 or isinstance(e, Var) and e.name in zero
        for s in traverse.untagged(list(stmts)):
            if isinstance(s, Declare) and isinstance(s.init, Const) and s.init.value == 0:
                zero.add(s.var.name)
            # (a search: a call of a search helper into a coordinate array, seek(A1_idx, q, stop, target))
            if isinstance(s, (ir.Assign, Declare)) and isinstance(getattr(s, "value", getattr(s, "init", None)), ir.Call):
                call = s.value if isinstance(s, ir.Assign) else s.init
                if call.function in ir.SEARCH_FUNCTIONS and call.args[0].buffer in coordinate_arrays and at_most_zero(
                        call.args[-1]):
                    found.append(f"search for 0: {call}")
            if isinstance(s, If) and isinstance(s.cond, BinOp) and s.cond.op == "<":
                left, right = s.cond.left, s.cond.right
                if isinstance(left, Load) and left.buffer in coordinate_arrays and at_most_zero(right):
                    found.append(f"search for 0: {s.cond}")
                if isinstance(left, Var) and isinstance(right, Var) and right.name.startswith("last") \
                        and right in min_terms(decls.get(left.name)):
                    found.append(f"cut of a walk to its last: {s.cond}")
            zero -= assigns(s)
            for body in (getattr(s, f, None) for f in ("body", "then", "otherwise")):
                if isinstance(body, ir.Block):
                    block(body.body)
    block(fn.body.body)
    return found


def csr(m, name):
    return ss.Tensor.from_scipy(sp.csr_matrix(m), name=name)


def matrices(rows=6, cols=9):
    """Row shapes that reach every phase: empty rows, full rows, a last coordinate at the end."""
    rng = np.random.default_rng(3)
    A = rng.random((rows, cols)) * (rng.random((rows, cols)) < 0.4)
    B = rng.random((rows, cols)) * (rng.random((rows, cols)) < 0.4)
    A[0], B[1] = 0, 0
    A[2], B[3, :] = rng.random(cols) + 0.5, 0
    A[4, -1] = B[5, -1] = 2.0
    return A, B


KERNELS = {
    "csr + csr": ("C[i, j] = A[i, j] + B[i, j]", dict(C="csr"), ("A1_idx", "B1_idx")),
    "csr * csr": ("C[i, j] = A[i, j] * B[i, j]", dict(C="csr"), ("A1_idx", "B1_idx")),
    "csr + dense": ("C[i, j] = A[i, j] + D[i, j]", dict(C="dense"), ("A1_idx",)),
    "spmv": ("y[i] = A[i, j] * x[j]", {}, ("A1_idx",)),
    "coo spmv": ("y[i] = A[i, j] * x[j]", {}, ("A0_idx0", "A0_idx1")),
    "coo + coo": ("C[i, j] = A[i, j] + B[i, j]", dict(C="dense"), ("A0_idx0", "A0_idx1", "B0_idx0", "B0_idx1")),
}


def operands(kernel, A, B):
    fmt = "coo" if kernel.startswith("coo") else "csr"
    out = {"A": ss.Tensor.from_numpy(A, fmt, name="A"), "B": ss.Tensor.from_numpy(B, fmt, name="B"),
           "D": B + 1.0, "x": np.arange(A.shape[1], dtype=float) - 2.0}
    expr = KERNELS[kernel][0]
    return {t: v for t, v in out.items() if f"{t}[" in expr}


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_common_kernels_have_no_dead_search_nor_cut(kernel):
    expr, outs, arrays = KERNELS[kernel]
    A, B = matrices()
    tensors = operands(kernel, A, B)
    k = ss.lower(expr, strategy="looplets", **outs, **tensors)
    assert dead_pieces(k.function, arrays) == []
    want, _ = evaluate(expr, **tensors)
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)
    np.testing.assert_allclose(k.interpret(**tensors).to_numpy(), want)


def test_the_checker_finds_the_dead_pieces_it_looks_for():
    """(what the kernels above had: a search for 0 and a cut under ``min(last, size) < last``)"""
    j, last, stop = Var("j_2"), Var("lastA"), Var("phase_stop")
    body = ir.Block((Declare(last, "int64", Const(3, "int64")),
                     Declare(stop, "int64", X.imin(last, Var("A1_size"))),
                     Declare(j, "int64", Const(0, "int64")),
                     If(BinOp("<", idx, j), [ir.Assign(q, Const(1, "int64"))]),
                     If(BinOp("<", stop, last), [ir.Assign(q, Const(2, "int64"))]),
                     ir.Assign(q, seek_call("A1_idx", q, Var("q_stop"), j)),
                     ir.Assign(j, Const(4, "int64")),
                     If(BinOp("<", idx, j), [ir.Assign(q, Const(1, "int64"))]),
                     ir.Assign(q, seek_call("A1_idx", q, Var("q_stop"), j))))
    fn = ir.Function("f", (), body)
    assert len(dead_pieces(fn, ("A1_idx",))) == 3     # (the search by comparison, the seek's call, the cut)


def test_a_shifted_read_still_searches_for_its_shifted_start():
    """``A[1:8][i]`` (a window: ``A[i + 1]``): the walk starts at coordinate 1 of A, which a stored
    coordinate may be below."""
    from compiler.looplets import compile_program, loop_program
    prog = loop_program(source="def shifted(y, A):\n    for i in _:\n        y[i] = A[1:8][i]\n")
    a = np.array([4.0, 0, 2, 0, 0, 7, 0, 1])
    A = ss.Tensor.from_numpy(a, "sparse_vector", name="A")
    k = compile_program(prog, y="dense", A=A)
    assert "qA = seek_int64(A0_idx, qA, qA_stop, 1);" in k.c_source   # (the search for coordinate 1)
    np.testing.assert_allclose(k(A=A).to_numpy(), a[1:])


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["csr + csr", "csr * csr", "coo + coo"]))
@example(0, "csr + csr")
def test_kernels_agree_with_the_oracle_on_any_rows(seed, kernel):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(0, 5)), int(rng.integers(0, 7)))
    A = rng.random(shape) * (rng.random(shape) < rng.random())
    B = rng.random(shape) * (rng.random(shape) < rng.random())
    expr, outs, _ = KERNELS[kernel]
    tensors = operands(kernel, A, B)
    k = ss.lower(expr, strategy="looplets", **outs, **tensors)
    want, _ = evaluate(expr, **tensors)
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)
