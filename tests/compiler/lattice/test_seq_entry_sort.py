"""A concatenation into a sparse output of three modes or more stored with the concatenated mode after another
(modes (2, 0, 1), (1, 2, 0), (2, 1, 0), (1, 0, 2)), every entry sorted before the output appends it
(compiler/lattice/seqentrysort.py; issue 30).

``c[l, j, k] = concat((A[m, j, k], B[n, j, k]), (m, n) -> l)`` into a COO or CSF stored ``k, l, j``: loops in that
order walk the row-major parts against their storage order, and swapping the two innermost loops
(seqgroupsort) does not give the parts' order. On main the lattice refused every case here ("would need a sort
of every entry by k, then l, j") and the array front end retried the statement with its concatenation
materialized and an input converted. Now the loops run in the parts' order, each entry is bucketed by the
output's first stored mode and each bucket sorted by the others. Each kernel is built (bounds-checked for some),
then checked against evaluate, the IR interpreter and the CFIR interpreter in the kernel's loop order (run_all)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.format import Format
from tests.compiler.lattice.test_seq_product_unions import one_fused_kernel
from tests.compiler.lattice.test_seq_split_straddle_sort import part
from tests.compiler.lattice.test_seqemit import run_all

nan, inf = np.nan, np.inf

#: the concatenation along each axis of 3-D parts, and the shapes of its parts (the concatenated extent first)
CONCATS = {
    0: ("c[l, j, k] = concat((A[m, j, k], B[n, j, k]), (m, n) -> l)", lambda r: (r, 3, 4)),
    1: ("c[i, l, k] = concat((A[i, m, k], B[i, n, k]), (m, n) -> l)", lambda r: (2, r, 4)),
    2: ("c[i, j, l] = concat((A[i, j, m], B[i, j, n]), (m, n) -> l)", lambda r: (2, 3, r)),
}
ORDERS = [(2, 0, 1), (1, 2, 0), (2, 1, 0), (1, 0, 2)]
PARTS = ["dense", "csf", "coo"]


def entry_sorted(program, out, order, checked=False, **tensors):
    """``program`` into ``out`` (a format name, of the result's fill) stored in mode ``order`` by the lattice, every
    entry sorted (a ``loop-order`` step saying so, no conversion), right against evaluate, the IR and CFIR
    interpreters; the result."""
    with np.errstate(invalid="ignore"):
        want, fill = ss.evaluate(program, **tensors)
        fmt = Format(ss.parse_format(out, ndim=want.ndim, fill=fill).root, order)
        k = ss.lower(program, strategy="lattice", checked=checked, **tensors, c=fmt)
        assert "sort every entry" in k.trace.find("loop-order")[0].note and "convert" not in k.trace.stages()
        got = run_all(program, tensors, checked=checked, out=fmt)
    np.testing.assert_array_equal(got, want)
    return k


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", ["coo", "csf"])
@pytest.mark.parametrize("order", ORDERS)
def test_a_3d_vstack_stored_in_each_order(order, out, fill):
    x = ORDERS.index(order)
    program, shape = CONCATS[0]
    A = part(shape(2), PARTS[x % 3], fill, x, odd=(nan, -inf))
    B = part(shape(3), PARTS[(x + 1) % 3], fill, x + 1, odd=(inf,))
    entry_sorted(program, out, order, checked=(out, fill) == ("csf", 0.0), A=A, B=B)


@pytest.mark.parametrize("axis", [1, 2])
@pytest.mark.parametrize("order", ORDERS)
def test_the_other_axes(order, axis):
    program, shape = CONCATS[axis]
    A = part(shape(2), "csf", 0.0, axis, odd=(nan,))
    B = part(shape(1), "coo", 0.0, axis + 1, odd=(-inf,))
    entry_sorted(program, "coo" if sum(order[:axis]) % 2 else "csf", order, A=A, B=B)


@pytest.mark.parametrize("out, order", [("coo", (2, 1, 0)), ("csf", (1, 2, 0)), ("csf", (2, 0, 1))])
def test_empty_and_all_fill_parts(out, order):
    program, shape = CONCATS[0]
    z, full = np.zeros(shape(2)), np.arange(1.0, 25.0).reshape(shape(2))
    for x, y in ((z, z), (z, full), (full, z)):
        entry_sorted(program, out, order, A=Tensor.from_numpy(x, "coo"), B=Tensor.from_numpy(y, "dense"))
    ones = ss.parse_format("dense", ndim=3, fill=1.0)
    entry_sorted(program, out, order, A=Tensor.from_numpy(np.ones(shape(2)), ones),
                 B=Tensor.from_numpy(np.ones(shape(2)), ones))


def test_each_entry_is_kept_as_it_is_not_summed():
    # (one entry per key: a sum would start from 0.0 and turn -0.0 into 0.0)
    program, shape = CONCATS[0]
    a = np.ones(shape(2))
    a[1, 2, 3] = -0.0
    A = Tensor.from_numpy(a, ss.parse_format("csf", ndim=3, fill=1.0))
    B = Tensor.from_numpy(np.full(shape(1), -0.0), ss.parse_format("dense", ndim=3, fill=1.0))
    k = entry_sorted(program, "coo", (2, 1, 0), A=A, B=B)
    got = k(A=A, B=B)
    assert got.nnz == 13 and np.signbit(got.to_numpy()[[1, 2, 2, 2], [2, 0, 1, 2], [3, 0, 1, 3]]).all()


def test_four_modes():
    program = "c[l, j, k, x] = concat((A[m, j, k, x], B[n, j, k, x]), (m, n) -> l)"
    A = part((2, 2, 3, 2), "csf", 0.0, 1, odd=(nan,))
    B = part((1, 2, 3, 2), "coo", 0.0, 2, odd=(inf, -inf))
    for out, order in (("coo", (3, 0, 2, 1)), ("csf", (2, 3, 0, 1))):
        entry_sorted(program, out, order, checked=out == "csf", A=A, B=B)


def test_modes_after_the_first_spanning_more_than_an_int64_key_are_refused_saying_why():
    program = CONCATS[0][0]
    big = 2 ** 61
    A = Tensor.from_coords([[0, 1], [2, 0], [5, big - 1]], [1.0, 2.0], (2, 3, big), format="coo")
    B = Tensor.from_coords([[1], [1], [7]], [3.0], (3, 3, big), format="coo")
    fmt = Format(ss.parse_format("coo", ndim=3).root, (1, 2, 0))
    with pytest.raises(ss.StrategyError, match=r"sorts every entry by j, then k, l as one int64 key, where those "
                                               r"span at most 2\*\*62 coordinates"):
        ss.lower(program, strategy="lattice", A=A, B=B, c=fmt)


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(sorted(CONCATS)), st.sampled_from(ORDERS), st.sampled_from(["coo", "csf"]),
       st.sampled_from(PARTS), st.sampled_from(PARTS), st.integers(1, 3), st.integers(1, 3),
       st.sampled_from([0.0, 1.0, nan]), st.sampled_from([0.0, 0.4, 1.0]), st.integers(0, 2 ** 16))
def test_property(axis, order, out, fa, fb, ra, rb, fill, density, seed):
    program, shape = CONCATS[axis]
    A = part(shape(ra), fa, fill, seed, odd=(nan,), density=density)
    B = part(shape(rb), fb, fill, seed + 1, odd=(inf, -inf), density=density)
    with np.errstate(invalid="ignore"):
        want, fill = ss.evaluate(program, A=A, B=B)
        fmt = Format(ss.parse_format(out, ndim=3, fill=fill).root, order)
        np.testing.assert_array_equal(run_all(program, {"A": A, "B": B}, out=fmt), want)


@pytest.mark.parametrize("axis, perm", [(0, (2, 0, 1)), (0, (1, 2, 0)), (1, (2, 1, 0)), (2, (1, 0, 2)),
                                        (0, (2, 1, 0))])
def test_the_array_form_permuted_into_the_default_coo_or_a_csf(axis, perm):
    shape = CONCATS[axis][1]
    a = part(shape(2), "csf", 0.0, 7, odd=(nan, -inf))
    b = part(shape(3), "coo", 0.0, 8, odd=(inf,))
    want = np.transpose(np.concatenate([a.to_numpy(), b.to_numpy()], axis=axis), perm)
    expr = xp.permute_dims(xp.concat([xp.asarray(a), xp.asarray(b)], axis=axis), perm)
    for fmt in (None, ss.parse_format("csf", ndim=3)):
        k = one_fused_kernel(expr, want, fmt)
        assert "sort every entry" in k.trace.find("loop-order")[0].note


@pytest.mark.parametrize("order", [(2, 0, 1), (1, 0, 2)])
def test_the_array_form_into_a_format_stored_in_that_order(order):
    a = part((2, 3, 4), "dense", 0.0, 9, odd=(nan,))
    b = part((1, 3, 4), "csf", 0.0, 10, odd=(-inf,))
    want = np.concatenate([a.to_numpy(), b.to_numpy()])
    fmt = Format(ss.parse_format("coo", ndim=3).root, order)
    expr = xp.concat([xp.asarray(a), xp.asarray(b)], axis=0)
    k = expr.lower(fmt, strategy="lattice")
    assert not {"retry", "materialize", "convert"} & set(k.trace.stages()), k.trace.stages()
    got = expr.compute(format=fmt, strategy="lattice")
    got.validate()
    assert tuple(got.format.mode_order) == order
    np.testing.assert_array_equal(got.to_numpy(), want)
