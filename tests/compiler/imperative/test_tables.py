"""Counting a scatter-reduction into several tables (compiler.imperative.tables), on hand-built IR:
each privatized function against the same function unprivatized, both in the IR interpreter, for
counted loops and ``while (q < stop) { ...; q += 1; }`` loops, every operator it combines, extents
known only at run time, and the refusals."""

import numpy as np
import pytest

from compiler.imperative.interpreter import interpret
from compiler.imperative.ir import (Allocate, Block, Break, Buffer, CompoundAssign, Const, Declare, For, Function, If,
                                    Load, Scalar, Store, Var, While)
from compiler.imperative.tables import NotPrivatizable, privatize_tables
from compiler.imperative.traverse import fresh_namer, walk

i, q, n, c = Var("i"), Var("q"), Var("n"), Var("c")


def scatter(op="+", dtype="int64", value=1):
    """for i in [0, n): bins[v[i]] op= w (w: ``value``, or w[i])."""
    w = Load("w", i) if value is None else Const(value, dtype)
    return [For(i, 0, n, [Store("bins", Load("v", i), w, op)])]


def listed(dtype="int64"):
    """A row's list of columns, as a sparse mask's loop: while (q < stop) { c = idx[q]; bins[v[c]] += 1; q += 1; }"""
    return [Declare(q, "int64", Var("start")),
            While(q < Var("stop"), [Declare(c, "int64", Load("idx", q)),
                                    If(Load("keep", c), [Store("bins", Load("v", c), Const(1, dtype), "+")]),
                                    CompoundAssign("+", q, Const(1, "int64"))])]


def run(stmts, args, dtype="int64", extent=7):
    params = [Scalar("n", "int64"), Scalar("start", "int64"), Scalar("stop", "int64"), Scalar("m", "int64"),
              Buffer("bins", dtype, "inout"), Buffer("v", "int64"), Buffer("w", dtype), Buffer("idx", "int64"),
              Buffer("keep", "bool")]
    bins = np.full(extent, args.pop("init", 0)).astype(dtype)
    return interpret(Function("k", tuple(params), Block(tuple(stmts))), bins=bins, **args)["bins"]


def arguments(rng, size, extent=7, dtype="int64"):
    return dict(n=size, start=0, stop=size, m=extent, v=rng.integers(0, extent, max(size, 1)),
                w=rng.integers(1, 4, max(size, 1)).astype(dtype), idx=np.arange(max(size, 1), dtype=np.int64),
                keep=rng.random(max(size, 1)) < 0.7)


@pytest.mark.parametrize("copies", [2, 3, 4, 5])
def test_privatized_equals_unprivatized_for_any_length(copies):
    rng = np.random.default_rng(copies)
    for build in (scatter, listed):
        stmts = build()
        done, _ = privatize_tables(stmts, "bins", 7, "int64", copies, fresh_namer(stmts))
        for size in (0, 1, copies - 1, copies, copies + 1, 3 * copies + 2):
            args = arguments(rng, size)
            np.testing.assert_array_equal(run(done, dict(args)), run(stmts, dict(args)))


@pytest.mark.parametrize("op, dtype, init", [("+", "float64", 0.5), ("*", "float64", 1.0), ("|", "uint8", 0),
                                             ("^", "int64", 5), ("&", "uint8", 255)])
def test_every_operator_starts_its_tables_at_its_identity(op, dtype, init):
    rng = np.random.default_rng(1)
    stmts = scatter(op, dtype, None)
    done, note = privatize_tables(stmts, "bins", 7, dtype, 4, fresh_namer(stmts))
    (table,) = [s for s in walk(tuple(done)) if isinstance(s, Allocate)]
    assert table.stack and table.init == Const({"+": 0, "*": 1, "|": 0, "^": 0, "&": 255}[op], dtype)
    for size in (0, 3, 10):
        args = arguments(rng, size, dtype=dtype)
        args["init"] = init
        np.testing.assert_array_equal(run(done, dict(args), dtype), run(stmts, dict(args), dtype))
    assert ("added into" if op == "+" else "combined into") in note


def test_an_extent_known_at_run_time_takes_a_workspace_or_is_refused():
    stmts = scatter()
    done, note = privatize_tables(stmts, "bins", Var("m"), "int64", 3, fresh_namer(stmts))
    (table,) = [s for s in walk(tuple(done)) if isinstance(s, Allocate)]
    assert not table.stack and str(table.length) == "2 * m" and "allocated when the kernel runs" in note
    args = arguments(np.random.default_rng(2), 11)
    np.testing.assert_array_equal(run(done, dict(args)), run(stmts, dict(args)))
    with pytest.raises(NotPrivatizable, match="do not fit on the stack .at most 8192. and no workspace is allowed"):
        privatize_tables(stmts, "bins", Var("m"), "int64", 3, fresh_namer(stmts), workspace=False)
    with pytest.raises(NotPrivatizable, match=r"\(12 elements\) do not fit on the stack \(at most 10\)"):
        privatize_tables(stmts, "bins", 4, "int64", 4, fresh_namer(stmts), workspace=False, stack_limit=10)


def test_loops_it_cannot_deal_out_are_refused():
    breaks = [For(i, 0, n, [Store("bins", Load("v", i), 1, "+"), If(Load("keep", i), [Break()])])]
    with pytest.raises(NotPrivatizable, match="assigns i or breaks out"):
        privatize_tables(breaks, "bins", 7, "int64", 4, fresh_namer(breaks))
    moving = [Declare(q, "int64", 0), While(q < Load("v", 0), [Store("bins", Load("v", q), 1, "+"),
                                                                Store("v", 0, Const(0, "int64")),
                                                                CompoundAssign("+", q, Const(1, "int64"))])]
    with pytest.raises(NotPrivatizable, match=r"moves its own end"):
        privatize_tables(moving, "bins", 7, "int64", 4, fresh_namer(moving))
    by_two = [Declare(q, "int64", 0), While(q < n, [Store("bins", Load("v", q), 1, "+"),
                                                    CompoundAssign("+", q, Const(2, "int64"))])]
    with pytest.raises(NotPrivatizable, match=r"does not count up by one"):
        privatize_tables(by_two, "bins", 7, "int64", 4, fresh_namer(by_two))
    outside = [Store("bins", Load("v", 0), 1, "+")]
    with pytest.raises(NotPrivatizable, match="no loop of the kernel runs around the updates of bins"):
        privatize_tables(outside, "bins", 7, "int64", 4, fresh_namer(outside))
    mixed = scatter("+") + scatter("*")
    with pytest.raises(NotPrivatizable, match="updated with \\*= and \\+=: tables combine one operator"):
        privatize_tables(mixed, "bins", 7, "int64", 4, fresh_namer(mixed))
