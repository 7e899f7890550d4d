"""A CSC's rows sliced or stacked: the default result is CSC, its operands' order (as scipy's
``csc[::3]`` is), one lattice kernel writing it; CSR where that kernel is refused, the trace saying
why (issue 30)."""

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
    assert xp.concat([c, r]).compute().format.shorthand == "csr"      # (operands of both orders)
    assert c.T[::2].compute().format.shorthand == "csr"               # (a transpose: rows first)
    assert (c * 2).compute().format.shorthand == "csr"                # (no shape operator)
    assert c[::2].compute(format="csr").format.shorthand == "csr"     # (asked for)


def test_a_refused_csc_result_falls_back_to_csr_saying_why():
    # a split into CSC would run its minor index outside its major one: refused, so CSR
    c = csc(M)
    expr = c.reshape(-1)[:20].reshape(4, 5)
    kernel = expr.lower()
    out = kernel()
    assert out.format.shorthand == "csr"
    (note,) = [n for n in materialized(kernel) if "into CSC (its operands' order)" in n]
    assert note.endswith("the default CSR instead")
    np.testing.assert_array_equal(out.to_numpy(), M.reshape(-1)[:20].reshape(4, 5))


@settings(max_examples=30, deadline=None)
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
