"""A CSC's rows sliced or stacked: the default result is CSC, its operands' order (as scipy's
``csc[::3]`` is), one lattice kernel writing it; CSR where that kernel is refused, the trace saying
why; a stack of matrices neither all CSR nor all CSC is COO, as scipy's ``sp.vstack([csc, csr])``
and ``sp.vstack([csr, coo])`` are (issue 30)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp

M = np.array([[0, 1.5, 0, 2], [3, 0, 0, 0], [0, 0, 4, 0], [5, 0, 0, 6], [0, 7, 0, 0]])


def materialized(kernel) -> list:
    return [s.note for s in kernel.trace.find("materialize")]


def retried(kernel) -> list:
    return [s.note for s in kernel.trace.find("retry")]


def csc(a, fill=None):
    return xp.asarray(ss.Tensor.from_numpy(a, "csc", fill=fill))


@pytest.mark.parametrize("key", [np.s_[::3], np.s_[::-2, 1:], np.s_[1:4], np.s_[4:0:-3, ::2]])
def test_a_csc_row_slice_is_csc_by_default(key):
    c = csc(M)
    assert sp.csc_array(M)[key].format == "csc"   # (scipy's answer)
    kernel = c[key].lower()
    out = kernel()
    assert out.format.shorthand == "csc"
    assert kernel.strategy == "lattice" and materialized(kernel) == []
    np.testing.assert_array_equal(out.to_numpy(), M[key])
    oracle, _ = ss.evaluate(kernel.program, **kernel.arguments)
    np.testing.assert_array_equal(out.to_numpy(), oracle)


def test_stacks_and_arithmetic_of_csc_slices_stay_csc():
    c = csc(M)
    for expr, want in ((xp.concat([c[::2], c]), np.vstack([M[::2], M])),
                       (xp.concat([c, c[:, ::-1]], axis=1), np.hstack([M, M[:, ::-1]])),
                       (c[::-2] * 3, M[::-2] * 3)):
        kernel = expr.lower()
        out = kernel()
        assert out.format.shorthand == "csc" and materialized(kernel) == []
        np.testing.assert_array_equal(out.to_numpy(), want)


def test_other_orders_stay_csr():
    c, r = csc(M), xp.asarray(ss.Tensor.from_numpy(M, "csr"))
    assert (c[::2] + r[::2]).compute().format.shorthand == "csr"      # (operands of both orders)
    assert c.T[::2].compute().format.shorthand == "csr"               # (a transpose: rows first)
    assert (c * 2).compute().format.shorthand == "csr"                # (no shape operator)
    assert c[::2].compute(format="csr").format.shorthand == "csr"     # (asked for)


def test_a_split_into_csc_is_scattered_not_refused():
    # a split of a concat of two ravels: once refused into CSC (and CSR), so CSR, each shape operator
    # materialized; the lattice reads the CSC converted (the ravels walk it row-major) and builds the
    # CSC by a scatter from loops in the split's order (compiler.lattice.seqscatter)
    c = csc(M)
    expr = xp.concat([c.reshape(-1), c.reshape(-1)]).reshape(8, 5)
    kernel = expr.lower()
    out = kernel()
    assert out.format.shorthand == "csc" and retried(kernel) == [] and materialized(kernel) == []
    assert "build out by a scatter" in kernel.trace.find("loop-order")[0].note
    np.testing.assert_array_equal(out.to_numpy(), np.concatenate([M.reshape(-1)] * 2).reshape(8, 5))


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(0, 6), cols=st.integers(0, 4), start=st.integers(-7, 7), stop=st.integers(-7, 7),
       step=st.sampled_from([1, 2, 3, -1, -2, -3]), fill=st.sampled_from([0.0, 1.0, np.nan, np.inf, -np.inf]),
       stack=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(rows=0, cols=3, start=0, stop=0, step=-1, fill=np.nan, stack=True, seed=0)
@example(rows=5, cols=4, start=-1, stop=-7, step=-3, fill=0.0, stack=False, seed=3)
@example(rows=0, cols=0, start=0, stop=0, step=1, fill=0.0, stack=False, seed=0)
def test_csc_row_slices_by_property(rows, cols, start, stop, step, fill, stack, seed):
    r = np.random.default_rng(seed)
    dense = np.where(r.random((rows, cols)) < 0.5, r.integers(1, 5, (rows, cols)).astype(float), fill)
    c = csc(dense, fill)
    expr, want = c[start:stop:step], dense[start:stop:step]
    if stack:
        expr, want = xp.concat([expr, c]), np.vstack([want, dense])
    kernel = expr.lower()
    out = kernel()
    # (a slice of every row is the operand itself, no shape operator: CSR as for (c * 2))
    assert out.format.shorthand == ("csr" if expr.node is c.node else "csc") and materialized(kernel) == []
    np.testing.assert_array_equal(out.to_numpy(), want)
    oracle, _ = ss.evaluate(kernel.program, **kernel.arguments)
    np.testing.assert_array_equal(out.to_numpy(), oracle)
    # (the storage is what from_numpy builds: sorted, no fill stored)
    ref = ss.Tensor.from_numpy(want, out.format)
    for got_arrays, ref_arrays in zip(out.level_arrays(), ref.level_arrays()):
        for name in ref_arrays:
            np.testing.assert_array_equal(got_arrays[name], ref_arrays[name])
    np.testing.assert_array_equal(out.vals, ref.vals)


def operand(a, kind, fill):
    """``a`` as the array front end takes it: a Tensor of ``kind`` (fill ``fill``) or the numpy array."""
    return xp.asarray(a if kind == "numpy" else ss.Tensor.from_numpy(a, kind, fill=fill))


def scipy_operand(a, kind):
    return a if kind == "numpy" else sp.csr_matrix(a).asformat(kind)


@pytest.mark.parametrize("strategy", [None, "lattice", "looplets"])
@pytest.mark.parametrize("kinds", [("csc", "csr"), ("csr", "csc"), ("csc", "coo"), ("csc", "numpy"),
                                   ("csr", "coo"), ("coo", "csr"), ("csr", "numpy"), ("coo", "coo")])
def test_a_stack_of_mixed_formats_is_coo_as_scipys(kinds, strategy):
    """(a CSR stacked with a COO, a numpy array or a CSC was CSR, where scipy's is COO)"""
    parts = [M, M[::-2]]
    for axis, stack in ((0, sp.vstack), (1, sp.hstack)):
        pieces = [p if axis == 0 else p.T for p in parts]
        assert stack([scipy_operand(p, k) for p, k in zip(pieces, kinds)]).format == "coo"   # (scipy's answer)
        expr = xp.concat([operand(p, k, 0.0) for p, k in zip(pieces, kinds)], axis=axis)
        kernel = expr.lower(strategy=strategy)
        out = kernel()
        assert out.format.shorthand == "coo"
        want = np.concatenate(pieces, axis=axis)
        np.testing.assert_array_equal(out.to_numpy(), want)
        oracle, _ = ss.evaluate(kernel.program, **kernel.arguments)
        np.testing.assert_array_equal(out.to_numpy(), oracle)
        if strategy != "lattice":   # (which walks every operand in one order: it materializes the stack)
            assert materialized(kernel) == []


def test_a_mixed_stack_under_the_lattice_reads_the_csc_converted_into_coo():
    # the lattice walks every operand in one order: the CSC is read as a CSR, converted before each
    # call (it was refused, and the stack materialized into COO)
    expr = xp.concat([csc(M), xp.asarray(ss.Tensor.from_numpy(M, "csr"))])
    kernel = expr.lower(strategy="lattice")
    out = kernel()
    assert out.format.shorthand == "coo" and retried(kernel) == [] and materialized(kernel) == []
    (note,) = [s.note for s in kernel.trace.find("convert")]
    assert note.startswith("A is csc") and "the kernel reads A as csr" in note, note
    np.testing.assert_array_equal(out.to_numpy(), np.vstack([M, M]))


KINDS = ["csc", "csr", "coo", "numpy"]


@settings(max_examples=15, deadline=None)
@given(rows=st.lists(st.integers(0, 4), min_size=2, max_size=3), cols=st.integers(0, 4),
       kinds=st.lists(st.sampled_from(KINDS), min_size=3, max_size=3), axis=st.sampled_from([0, 1]),
       step=st.sampled_from([1, 2, -1, -3]), fill=st.sampled_from([0.0, 1.0, np.nan, np.inf, -np.inf]),
       strategy=st.sampled_from([None, "lattice", "looplets"]), seed=st.integers(0, 2 ** 16))
@example(rows=[3, 0], cols=4, kinds=["csc", "numpy", "csc"], axis=0, step=-1, fill=0.0, strategy=None, seed=0)
@example(rows=[2, 3], cols=3, kinds=["csr", "coo", "csr"], axis=0, step=2, fill=0.0, strategy=None, seed=1)  # (was CSR)
@example(rows=[2, 4, 1], cols=3, kinds=["coo", "csc", "csr"], axis=1, step=-3, fill=np.nan, strategy="looplets",
         seed=5)
def test_stacks_of_mixed_formats_by_property(rows, cols, kinds, axis, step, fill, strategy, seed):
    """A stack of parts of CSC, CSR, COO and numpy (one sliced with a step): the values numpy's and
    the oracle's; with fill 0 the format scipy's where a part is sparse (COO mixed, CSR or CSC
    alone)."""
    r = np.random.default_rng(seed)
    kinds = kinds[:len(rows)]
    fills = [0.0 if k == "numpy" else fill for k in kinds]
    shapes = [(n, cols) if axis == 0 else (cols, n) for n in rows]
    parts = [np.where(r.random(sh) < 0.5, r.integers(1, 5, sh).astype(float), f) for sh, f in zip(shapes, fills)]
    ops = [operand(p, k, f) for p, k, f in zip(parts, kinds, fills)]
    ops[0] = ops[0][::step] if axis == 0 else ops[0][:, ::step]
    parts[0] = parts[0][::step] if axis == 0 else parts[0][:, ::step]
    kernel = xp.concat(ops, axis=axis).lower(strategy=strategy)
    out = kernel()
    want = np.concatenate(parts, axis=axis)
    np.testing.assert_array_equal(np.asarray(out.to_numpy()), want)
    oracle, _ = ss.evaluate(kernel.program, **kernel.arguments)
    np.testing.assert_array_equal(out.to_numpy(), oracle)
    if fill == 0.0 and set(kinds) != {"numpy"}:
        scipys = (sp.vstack if axis == 0 else sp.hstack)([scipy_operand(p, k) for p, k in zip(parts, kinds)]).format
        if scipys != "csc" or strategy != "looplets":   # (looplets write no CSC: CSR)
            assert out.format.shorthand == scipys
