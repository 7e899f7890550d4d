"""A concatenation into a sparse output stored in another order than its parts (issue 30): the loops run in the
parts' order and the output's entries are sorted (compiler/lattice/seqgroupsort.py), where the sort takes the
output's order.

``c[l, j] = concat((A[m, j], B[n, j]), (m, n) -> l)`` into a COO or DCSR stored ``j, l``, and the 3-D concatenation
into a COO or CSF stored ``l, k, j`` (its two innermost modes swapped): loops in the output's order walk the
row-major parts against their storage order, and no part can be read converted (they are stored in their natural
order). On main the lattice refused them (the default lowering took the looplets'); now each part is walked as
stored and the entries sorted (all at once, or each group of ``l``) before the output appends them. An output
stored ``k, l, j`` (the concatenated mode in the middle, or last: modes (2, 0, 1), (1, 2, 0), ...) has its entries
sorted whole, bucketed by its first stored mode (compiler/lattice/seqentrysort.py, test_seq_entry_sort.py; Dense
levels over one SparseList are scattered in any order). Each kernel is built
bounds-checked, then checked against evaluate, the IR and the CFIR interpreters (run_all)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, SparseList
from tests.compiler.lattice.test_seq_split_straddle_sort import part
from tests.compiler.lattice.test_seqemit import run_all

nan, inf = np.nan, np.inf

VSTACK = "c[l, j] = concat((A[m, j], B[n, j]), (m, n) -> l)"
CONCAT3 = "c[l, j, k] = concat((A[m, j, k], B[n, j, k]), (m, n) -> l)"
PARTS = ["dense", "csr", "coo", "hash"]


def sorted_kernel(program, out, order, checked=False, **tensors):
    """``program`` into ``out`` (a format name, of the result's fill) stored in mode ``order`` by the lattice,
    the loops in the parts' order (a ``loop-order`` step), right against evaluate, the IR and CFIR interpreters."""
    with np.errstate(invalid="ignore"):
        want, fill = ss.evaluate(program, **tensors)
        fmt = Format(ss.parse_format(out, ndim=want.ndim, fill=fill).root, order)
        k = ss.lower(program, strategy="lattice", checked=checked, **tensors, c=fmt)
        assert "sort" in k.trace.find("loop-order")[0].note and "convert" not in k.trace.stages()
        np.testing.assert_array_equal(run_all(program, tensors, checked=checked, out=fmt), want)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", ["coo", "dcsr"])
@pytest.mark.parametrize("fa, fb", [(PARTS[x], PARTS[(x + 1) % len(PARTS)]) for x in range(len(PARTS))])
def test_a_vstack_stored_column_major(fa, fb, out, fill):
    A = part((3, 4), fa, fill, 1, odd=(nan, -inf))
    B = part((2, 4), fb, fill, 2, odd=(inf,))
    sorted_kernel(VSTACK, out, (1, 0), checked=(fa, out, fill) == ("dense", "coo", 0.0), A=A, B=B)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", ["coo", "csf"])
@pytest.mark.parametrize("fa, fb", [("dense", "coo"), ("csf", "dense"), ("coo", "csf")])
def test_a_3d_concat_stored_with_its_inner_modes_swapped(fa, fb, out, fill):
    A = part((2, 3, 4), fa, fill, 3, odd=(nan,))
    B = part((3, 3, 4), fb, fill, 4, odd=(inf, -inf))
    sorted_kernel(CONCAT3, out, (0, 2, 1), checked=(fa, out, fill) == ("dense", "csf", 0.0), A=A, B=B)


@pytest.mark.parametrize("out, order", [("coo", (1, 0)), ("dcsr", (1, 0)), ("csf", (0, 2, 1))])
def test_empty_and_all_fill_parts(out, order):
    shape = (3, 4) if len(order) == 2 else (2, 3, 4)
    program = VSTACK if len(order) == 2 else CONCAT3
    z, full = np.zeros(shape), np.arange(1.0, 1 + np.prod(shape)).reshape(shape)
    for x, y in ((z, z), (z, full), (full, z)):
        sorted_kernel(program, out, order, A=Tensor.from_numpy(x, "coo"), B=Tensor.from_numpy(y, "dense"))
    ones = ss.parse_format("dense", ndim=len(shape), fill=1.0)
    sorted_kernel(program, out, order, A=Tensor.from_numpy(np.ones(shape), ones),
                  B=Tensor.from_numpy(np.ones(shape), ones))


@pytest.mark.parametrize("order", [(2, 0, 1), (1, 2, 0), (2, 1, 0), (1, 0, 2)])
def test_the_concatenated_mode_stored_after_another_sorts_every_entry_or_is_scattered(order):
    A, B = part((2, 3, 4), "csf", 0.0, 5), part((3, 3, 4), "dense", 0.0, 6)
    want = np.concatenate([A.to_numpy(), B.to_numpy()])
    for out in ("coo", "csf"):
        # (every entry bucketed by the first stored mode, each bucket sorted: tests/compiler/lattice/
        # test_seq_entry_sort.py; it was refused)
        fmt = Format(ss.parse_format(out, ndim=3).root, order)
        k = ss.lower(CONCAT3, strategy="lattice", A=A, B=B, c=fmt)
        assert "sort every entry" in k.trace.find("loop-order")[0].note
        np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), want)
    # (the scatter takes any order)
    fmt = Format(Dense(Dense(SparseList(Element(0.0)))), order)
    k = ss.lower(CONCAT3, strategy="lattice", A=A, B=B, c=fmt)
    assert "scatter" in k.trace.find("loop-order")[0].note
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), want)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([(VSTACK, (1, 0), "coo"), (VSTACK, (1, 0), "dcsr"), (CONCAT3, (0, 2, 1), "coo"),
                        (CONCAT3, (0, 2, 1), "csf")]),
       st.sampled_from(PARTS[:3]), st.sampled_from(PARTS[:3]), st.integers(1, 3), st.integers(1, 3),
       st.sampled_from([0.0, 1.0, nan]), st.sampled_from([0.0, 0.4, 1.0]), st.integers(0, 2 ** 16))
def test_property(case, fa, fb, ra, rb, fill, density, seed):
    program, order, out = case
    rest = (3,) if len(order) == 2 else (2, 3)
    fa, fb = ({"csr": "csf"}.get(f, f) if rest == (2, 3) else f for f in (fa, fb))
    A = part((ra, *rest), fa, fill, seed, odd=(nan,), density=density)
    B = part((rb, *rest), fb, fill, seed + 1, odd=(inf, -inf), density=density)
    sorted_kernel(program, out, order, A=A, B=B)


@pytest.mark.parametrize("order", [(0, 2, 1), (1, 0)])
def test_the_array_form(order):
    shape = (2, 3, 4)[:len(order)]
    a = part(shape, "coo", 0.0, 7, odd=(nan, -inf))
    b = part((3, *shape[1:]), "dense", 0.0, 8, odd=(inf,))
    want = np.concatenate([a.to_numpy(), b.to_numpy()])
    fmt = Format(ss.parse_format("csf" if len(order) == 3 else "dcsr", ndim=len(order)).root, order)
    k = xp.concat([xp.asarray(a), xp.asarray(b)], axis=0).lower(fmt, strategy="lattice")
    assert not {"retry", "materialize", "convert"} & set(k.trace.stages()), k.trace.stages()
    got = k()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret().to_numpy(), want)
