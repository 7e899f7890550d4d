"""Branch-free appends (compiler.imperative.branchfree) and arithmetic identities folded as the lattice's
coordinates are built (compiler.imperative.identities): what each rewrites and what it leaves, and the kernels they change (the cross
product's appends, the lattice's coordinates over extents of 1) against numpy and the IR interpreter, checked
builds catching any write past a buffer's room."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.imperative.branchfree import branch_free_appends
from compiler.imperative.identities import arith
from compiler.imperative.ir import Assign, BinOp, Call, Cast, CompoundAssign, Const, Grow, If, Load, Store, Var

n, j, v = Var("n"), Var("j"), Var("v")
TEST = BinOp("!=", Load("val", n), Const(0.0, "float64"))
APPEND = If(TEST, [Store("idx", n, j), CompoundAssign("+", n, Const(1, "int64"))])


def test_an_append_after_its_growth_is_branch_free():
    out = branch_free_appends([Grow("idx", BinOp("+", n, Const(1, "int64"))), Store("val", n, v), APPEND])
    assert not any(isinstance(s, If) for s in out)
    assert out[-1] == CompoundAssign("+", n, Cast("int64", TEST))


@pytest.mark.parametrize("before, append", [
    ([], APPEND),                                                                       # no room made
    ([Grow("idx", BinOp("+", n, Const(1, "int64"))), CompoundAssign("+", n, Const(1, "int64"))], APPEND),  # n moved
    ([Grow("idx", BinOp("+", n, Const(1, "int64")))],
     If(TEST, [Store("idx", n, Load("cols", j)), CompoundAssign("+", n, Const(1, "int64"))])),   # the coordinate loads
    ([Grow("idx", BinOp("+", n, Const(1, "int64")))],
     If(BinOp("!=", Load("idx", n), Const(0, "int64")),
        [Store("idx", n, j), CompoundAssign("+", n, Const(1, "int64"))])),             # the test reads the buffer
    ([Grow("idx", BinOp("+", n, Const(1, "int64")))],
     If(Call("keep", (v,)), [Store("idx", n, j), CompoundAssign("+", n, Const(1, "int64"))])),   # a helper that does more
    ([Grow("idx", BinOp("+", n, Const(1, "int64")))],
     If(TEST, [Store("idx", n, j), CompoundAssign("+", n, Const(1, "int64")), Assign(Var("dirty"), True)])),
], ids=["no-growth", "count-moved", "coordinate-loads", "test-reads-buffer", "impure-test", "marks-a-flag"])
def test_what_is_not_a_plain_append_keeps_its_branch(before, append):
    assert branch_free_appends(before + [append]) == before + [append]


def test_identities_fold_what_is_exact_for_any_type():
    x = Var("x")
    assert arith("-", arith("/", arith("*", Const(1, "int64"), x), Const(1, "int64")), Const(0, "int64")) == x
    assert arith("+", arith("*", arith("%", x, Const(1, "int64")), Const(1, "int64")), Const(1, "int64")) == \
        Const(1, "int64")
    kept = [BinOp("+", x, Const(0, "int64")),                          # -0.0 + 0 is +0.0
            BinOp("*", x, Const(0, "int64")),                          # NaN * 0 is NaN
            BinOp("%", Call("next_id", (x,)), Const(1, "int64")),       # a call that does more
            BinOp("+", Const(2 ** 62, "int64"), Const(2 ** 62, "int64")),   # C would overflow
            BinOp("/", Const(-7, "int64"), Const(2, "int64"))]          # C truncates: left as written
    assert [arith(e.op, e.left, e.right) for e in kept] == kept
    assert arith("+", Const(2, "int64"), Const(3, "int64")) == Const(5, "int64")


def cross_case(rows, density, seed, specials):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((rows, 3)) < density, rng.choice([1.0, -2.5, 0.5] + specials, (rows, 3)), 0.0)
    y = rng.choice([1.0, -2.0, 0.5, 0.0] + specials, 3)
    return a, y


@example(3, 0.5, 0, [np.nan, np.inf, -np.inf], "looplets")
@example(0, 0.5, 1, [], "lattice")
@example(4, 1.0, 2, [np.inf], "lattice")
@settings(max_examples=10, deadline=None)
@given(st.integers(0, 12), st.sampled_from([0.0, 0.3, 0.6, 1.0]), st.integers(0, 2 ** 16),
       st.sampled_from([[], [np.nan], [np.inf, -np.inf]]), st.sampled_from(["looplets", "lattice"]))
def test_the_cross_product_by_property(rows, density, seed, specials, strategy):
    a, y = cross_case(rows, density, seed, specials)
    expr = xp.linalg.cross(xp.asarray(sp.csr_matrix(a)), xp.asarray(y))
    with np.errstate(invalid="ignore"):
        want = np.cross(a, y)
        kernel = ss.lower(expr, strategy=strategy, checked=True)
        got = kernel()
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)


def test_the_cross_products_appends_have_no_branch_and_its_lattice_no_unit_arithmetic():
    a, y = cross_case(30, 0.5, 3, [])
    expr = xp.linalg.cross(xp.asarray(sp.csr_matrix(a)), xp.asarray(y))
    looplets = ss.lower(expr, strategy="looplets")
    assert "branch-free" in looplets.trace.stages()
    assert looplets.c_source.count("out1_nnz += (int64_t)(") == 3, looplets.c_source
    lattice = ss.lower(expr, strategy="lattice")
    for unit in (" * 1)", " * 1 ", " / 1)", " / 1 ", " % 1"):
        assert unit not in lattice.c_source, unit
    np.testing.assert_array_equal(lattice().to_numpy(), np.cross(a, y))
