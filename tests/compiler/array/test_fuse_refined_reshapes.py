"""A reshape of several axes to several over a part of another fill, lowered by the lattice as one kernel reading
every input as stored (issue 30): ``concat([a, b], axis=1).reshape(6, 4)`` of a CSR ``a`` of fill 0 and ``b`` of
fill 1 (or NaN, -inf) was ``split(collapse(concat(...)))``, a split over the collapse's product, which walks
``b``'s every coordinate with a union the split cannot drain, so ``b`` was read densely, converted before each
call (a ``convert`` step). Where each axis splits into pieces both shapes' axes divide
(compiler.array.reshapes.refined_group: ``(2, 12) -> (2, 3, 4) -> (6, 4)``), the array front end splits the
concatenation's axis first and collapses after, as the sequence lowering walks it; the ``array`` step says so. One it cannot refine walks ``b`` as stored too
(compiler.lattice.seqrows.fills_per_row: its part two products under the split).
Each against numpy, the dense oracle of the statement (compiler.evaluate) and the IR interpreter, the output
validated; NaN and ±inf stored, empty and all-fill parts."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import array as xp
from compiler.array.reshapes import refined_group
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf
FILLS = [(1.0, (nan, -inf)), (nan, (inf,)), (-inf, (nan, inf))]


def hstack(fill, odd, density=0.4, seed=0, rows=2, fmt="csr"):
    """``concat([a, b], axis=1)`` of a ``rows`` x 6 ``a`` of fill 0 (±inf stored) and ``b`` of ``fill``, as numpy
    and as a lazy array."""
    a, A = operand((rows, 6), fmt, seed, density=density, odd=(inf, -inf))
    b, B = operand((rows, 6), fmt, seed + 1, density=density, fill=fill, odd=odd)
    return np.concatenate([a, b], axis=1), xp.concat([A, B], axis=1)


def read_as_stored(expr, want, out):
    """``expr`` as one lattice kernel right against numpy (one_lattice_kernel), nothing converted; the kernel."""
    with np.errstate(invalid="ignore"):
        k = one_lattice_kernel(expr, want, out)
    assert k.trace.find("convert") == [], [s.note for s in k.trace.find("convert")]
    assert k.lowered.conversions == ()
    return k


@pytest.mark.parametrize("out", [None, "csr", "coo", "dense"])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (12, 2)])
@pytest.mark.parametrize("fill, odd", FILLS)
def test_a_reshape_of_an_hstack_with_a_part_of_another_fill(fill, odd, shape, out):
    h, H = hstack(fill, odd)
    k = read_as_stored(H.reshape(shape), h.reshape(shape), out)
    (step,) = k.trace.find("array")
    assert "split into the pieces" in step.note, step.note
    assert str(k.program.rhs).startswith("collapse(split("), k.program


@pytest.mark.parametrize("shape", [(6, 1, 4), (1, 6, 4), (6, 4, 1), (1, 2, 1, 12)])
@pytest.mark.parametrize("fill, odd", FILLS[:2])
def test_a_reshape_with_extent_1_axes_is_refined_as_the_one_without(fill, odd, shape):
    # (the extent-1 axes are broadcasts, in no group: (2, 12) -> (6, 1, 4) refines as (2, 12) -> (6, 4) does,
    # where the group with the extent-1 axis in was not refined, its split after the collapse walking b's part
    # as a union of products: 1,364 lines of C for (6, 1, 4) where the refined kernel is 638)
    # ((1, 2, 1, 12) is (2, 12) itself, broadcast: no split, no collapse)
    h, H = hstack(fill, odd)
    k = read_as_stored(H.reshape(shape), h.reshape(shape), "coo")
    (step,) = k.trace.find("array")
    if shape == (1, 2, 1, 12):
        assert "split" not in str(k.program.rhs) and "collapse" not in str(k.program.rhs), k.program
        return
    assert "split into the pieces" in step.note, step.note
    assert "collapse(split(" in str(k.program.rhs) and not k.trace.find("fill-rows"), k.program


@pytest.mark.parametrize("density", [0.0, 1.0])
def test_empty_and_all_fill_parts(density):
    h, H = hstack(1.0, (), density=density)
    read_as_stored(H.reshape((6, 4)), h.reshape(6, 4), "csr")
    h, H = hstack(nan, (), density=density, rows=0)
    with np.errstate(invalid="ignore"):
        one_lattice_kernel(H.reshape((0, 4)), h.reshape(0, 4), "coo")


def test_a_reshape_it_cannot_refine_walks_the_part_as_stored():
    # ((2, 12) -> (3, 8): 8 divides no piece of 12, so the split follows the collapse; b's part walked as its
    # entries' product and its universe's, tests/compiler/lattice/test_seq_split_hstack_fills.py)
    assert refined_group((2, 12), (3, 8)) is None
    h, H = hstack(1.0, (nan,))
    k = read_as_stored(H.reshape((3, 8)), h.reshape(3, 8), "csr")
    assert k.trace.find("fill-rows") and str(k.program.rhs).startswith("split(collapse("), k.program


def test_parts_of_one_fill_lower_as_before():
    # (nothing converted by the split after the collapse: the statement is not refined)
    h, H = hstack(0.0, ())
    k = read_as_stored(H.reshape((6, 4)), h.reshape(6, 4), "csr")
    assert str(k.program.rhs).startswith("split(collapse("), k.program


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(FILLS + [(0.0, (nan,))]), st.sampled_from([(6, 4), (4, 6), (12, 2), (2, 12)]),
       st.sampled_from([None, "csr", "coo"]), st.sampled_from(["csr", "coo"]), st.sampled_from([0.0, 0.4, 1.0]),
       st.integers(0, 99))
def test_reshapes_of_hstacks_by_property(fills, shape, out, fmt, density, seed):
    h, H = hstack(*fills, density=density, seed=seed, fmt=fmt)
    read_as_stored(H.reshape(shape), h.reshape(shape), out)
