"""The rule by which a kernel checks the coordinates it reads of an input another owner may write
(compiler/imperative/owned_coordinates.py): guarded where a wrong order or a repeat is harmless, left to
the whole check where the kernel depends on them."""

import numpy as np
import pytest

from compiler.imperative import interpret
from compiler.imperative.guard import CheckCoordinate
from compiler.imperative.ir import (Assign, BinOp, BufferArg, Buffer, Call, CompoundAssign, Const, Declare, For, Function,
                                    If, Load, Pragma, Scalar, Store, Var, While)
from compiler.imperative.owned_coordinates import OwnedCoordinates, guard_coordinates
from compiler.imperative.traverse import walk

A = [OwnedCoordinates("A1_idx", "A1_size", "A", 1, "A1_pos")]
PARAMS = (Scalar("n", "int64"), Buffer("A1_pos", "int64", "in"), Buffer("A1_idx", "int64", "in"),
          Buffer("A_val", "float64", "in"), Buffer("x_val", "float64", "in"), Buffer("y_val", "float64", "inout"))
i, p, j = Var("i"), Var("p"), Var("j")


def _rows(*inner) -> Function:
    """for each row i, for each entry p of row i: int64 j = A1_idx[p]; inner..."""
    fiber = For(p, Load("A1_pos", i), Load("A1_pos", i + 1), [Declare(j, "int64", Load("A1_idx", p)), *inner])
    return Function("k", PARAMS, [For(i, 0, Var("n"), [fiber])])


def _checks(fn):
    return [n for n in walk(fn.body) if isinstance(n, CheckCoordinate)]


SPMV = (CompoundAssign("+", Var("t"), Load("A_val", p) * Load("x_val", j)),)


@pytest.mark.parametrize("inner", [
    SPMV,
    (Store("y_val", j, Load("A_val", p) * Load("x_val", i), op="+"),),   # (a scatter: y[j] += ...)
    (Declare(Var("pD"), "int64", i * Var("m") + j), CompoundAssign("+", Var("t"), Load("x_val", Var("pD")))),
], ids=["gather", "scatter-update", "position-declared-from-it"])
def test_an_order_free_read_is_checked_where_it_is_read(inner):
    after, guarded = guard_coordinates(_rows(*inner), A)
    assert guarded == {"A"}
    [check] = _checks(after)
    assert check.value == j and check.extent == Var("A1_size") and check.tensor == "A"
    assert after.params[-1] == Scalar("A1_size", "int64")


@pytest.mark.parametrize("inner", [
    (Store("y_val", j, Load("A_val", p)),),                                  # (overwritten at it: the last repeat wins)
    (Store("y_val", i, BinOp("+", j, Const(0, "int64"))),),                   # (stored as a value)
    (If(BinOp("<", j, Var("jB")), [Assign(Var("t"), Const(1.0, "float64"))]),),   # (compared: a merge)
    (Assign(Var("last"), j),),                                               # (stepped by)
    (Declare(Var("k"), "int64", j + 1), While(BinOp("<", Var("k"), Var("n")), [CompoundAssign("+", Var("k"), 1)])),
], ids=["overwrite", "stored-value", "compared", "assigned", "loop-bound-through-a-local"])
def test_a_kernel_that_depends_on_the_order_is_left_to_the_whole_check(inner):
    fn = _rows(*inner)
    assert guard_coordinates(fn, A) == (fn, frozenset())


def test_reads_inside_expressions_searches_counts_and_parallel_loops_are_not_guarded():
    # (a coordinate read inside an expression: the last of a row, to step to)
    inside = Function("k", PARAMS, [For(i, 0, Var("n"), [
        Declare(Var("last"), "int64", Load("A1_idx", Load("A1_pos", i + 1) - 1) + 1)])])
    search = Function("k", PARAMS, [Declare(Var("q"), "int64", Call("seek", (BufferArg("A1_idx"), Const(0, "int64"))))])
    count = _rows(*SPMV, Declare(Var("c"), "int64", Load("A1_pos", i + 1) - Load("A1_pos", i)))
    fn = _rows(*SPMV)
    parallel = Function("k", PARAMS, [Pragma("omp parallel for"), *fn.body.body])
    for f in (inside, search, count, parallel):
        assert guard_coordinates(f, A) == (f, frozenset())
    # (a check would leave a loop marked omp simd, which OpenMP forbids)
    simd = Function("k", PARAMS, [For(i, 0, Var("n"), [Pragma("omp simd"), fn.body.body[0].body.body[0]])])
    assert guard_coordinates(simd, A) == (simd, frozenset())


def test_a_tensor_whose_coordinates_are_never_read_needs_no_check():
    fn = Function("k", PARAMS, [For(i, 0, Var("n"), [For(p, Load("A1_pos", i), Load("A1_pos", i + 1), [
        Store("y_val", i, Load("A_val", p), op="+")])])])
    assert guard_coordinates(fn, A) == (fn, frozenset({"A"}))


def test_the_guarded_kernel_interpreted_stops_at_a_coordinate_out_of_range():
    after, _ = guard_coordinates(_rows(Store("y_val", i, Load("A_val", p) * Load("x_val", j), op="+")), A)
    pos, vals, x = np.array([0, 2, 3]), np.array([1.0, 2.0, 3.0]), np.array([1.0, 10.0, 100.0])
    y = np.zeros(2)
    interpret(after, n=2, A1_pos=pos, A1_idx=np.array([2, 0, 1]), A_val=vals, x_val=x, y_val=y, A1_size=3)
    assert y.tolist() == [102.0, 30.0]   # (a row's coordinates out of order: the same sum)
    with pytest.raises(Exception, match="stored coordinate 3 is outside"):
        interpret(after, n=2, A1_pos=pos, A1_idx=np.array([2, 3, 1]), A_val=vals, x_val=x, y_val=np.zeros(2), A1_size=3)
