"""Sums of a 3-D tensor whose lattice plan reads it converted, lowered as one kernel instead (issue 30,
compiler.lattice.bucketed_sums): ``xp.sum(a3, axis=0)`` into a CSR, CSC, COO or DCSR and ``xp.sum(a3, axis=1)``
into a CSC, ``a3`` a CSF, have their terms bucketed by the output's first stored mode in the sequence lowering, no
input converted. On main each kernel read ``a3`` in another mode order, converted before each call (a ``convert``
step). Each against numpy, the dense oracle of its statement (compiler.evaluate) and the IR interpreter, its
output validated; fills 0, 1, NaN and -inf, NaN and ±inf stored, empty and all-fill inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import ShapeError
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf

#: (axis, output format): the sums the plan read converted on main
CONVERTED = [(0, "csr"), (0, "csc"), (0, "coo"), (1, "csc"), (0, "dcsr")]
#: the module that buckets the terms of a sum into each output: a DCSR's rows sorted by column and appended
#: level by level (as a CSF's), the others' summed in a row workspace
BUCKETS = {"dcsr": "compiler.lattice.seqsumsort"}
FILLS = [(0.0, (nan, inf)), (1.0, (-inf, nan)), (nan, (inf,)), (-inf, (nan, inf))]


def bucketed(axis: int, out: str, shape=(3, 4, 5), fmt="csf", fill=0.0, odd=(), density=0.4, seed=0):
    """``sum(a3, axis)`` into ``out`` as one lattice kernel right against numpy (one_lattice_kernel), its input
    read as stored: no ``convert`` step; the kernel."""
    a, A = operand(shape, fmt, seed, density=density, fill=fill, odd=odd)
    with np.errstate(invalid="ignore"):
        k = one_lattice_kernel(xp.sum(A, axis=axis), a.sum(axis=axis), out)
    assert k.trace.find("convert") == [], [s.note for s in k.trace.find("convert")]
    assert k.lowered.conversions == ()
    return k


@pytest.mark.parametrize("fill, odd", FILLS)
@pytest.mark.parametrize("axis, out", CONVERTED)
def test_a_sum_of_a_3d_tensor_reads_it_as_stored(axis, out, fill, odd):
    k = bucketed(axis, out, fill=fill, odd=odd)
    note = k.trace.find("loop-order")[0].note
    assert "rather than reading A as csf in mode order" in note, note
    assert BUCKETS.get(out, "compiler.lattice.seqsumscatter") in note, note


@pytest.mark.parametrize("axis, out", CONVERTED)
def test_empty_and_all_fill_inputs(axis, out):
    for density in (0.0, 1.0):
        bucketed(axis, out, fill=1.0, density=density)
    bucketed(axis, out, shape=(0, 4, 5))
    bucketed(axis, out, shape=(3, 0, 5), fill=nan)


def test_the_kernel_is_lowered_for_its_shapes():
    k = bucketed(0, "csr")
    assert dict(k.lowered.shapes) == {"A": (3, 4, 5)}
    other = ss.Tensor.from_numpy(np.ones((2, 4, 5)), "csf")
    with pytest.raises(ShapeError, match="lowered for shape"):
        k(A=other)


def test_index_notation_without_shapes_still_converts():
    # (lower() of the statement alone is not lowered for shapes: the plan's conversion stays, its C as before)
    a = ss.Tensor.from_numpy(operand((3, 4, 5), "csf", 1)[0], "csf")
    k = ss.lower("c[i, j] = sum[k](A[k, i, j])", strategy="lattice", A=a, c="csr")
    assert [s.note.split(":")[0] for s in k.trace.find("convert")] == ["A is csf"]


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(CONVERTED), st.sampled_from(["csf", "coo"]), st.sampled_from(FILLS),
       st.sampled_from([0.0, 0.3, 1.0]), st.sampled_from([(2, 3, 4), (0, 2, 3), (3, 1, 2)]), st.integers(0, 99))
def test_sums_of_3d_tensors_by_property(case, fmt, fills, density, shape, seed):
    axis, out = case
    a, A = operand(shape, fmt, seed, density=density, fill=fills[0], odd=fills[1])
    with np.errstate(invalid="ignore"):
        k = one_lattice_kernel(xp.sum(A, axis=axis), a.sum(axis=axis), out)
    assert k.lowered.conversions == (), k.lowered.conversions
