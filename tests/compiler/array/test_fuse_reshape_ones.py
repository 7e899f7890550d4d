"""A reshape whose result or operand has extent-1 axes (``v.reshape(1, -1)``, ``c.reshape(1, 6, 1)``,
``A.reshape(12)`` of a 3x1x4 ``A``): an extent-1 axis is in no group of the reshape, a result's broadcast and an
operand's read at its one coordinate (``out[i, j] = A[0, j]``), so ``(6,) -> (1, 6, 1)`` is no split into three
axes, two of one coordinate each. The lattice built the nested groups of such a split: 3,614 lines of C for
``concat([A, B, C], axis=1).reshape(1, 6, 1)`` of three 2x1 matrices, 965 now, and 1,851 for ``(1, 6)`` against
799. Against numpy in both strategies, and the dense oracle."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from tests.compiler.array.test_fuse_reshapes import data, fused

nan, inf = np.nan, np.inf


def notation(kernel) -> str:
    return str(kernel.trace.find("shapes")[0].after)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("shape", [(1, 6, 1), (1, 6), (6, 1), (2, 1, 3), (1, 1, 6)])
def test_a_concatenation_reshaped_with_extent_one_axes(strategy, shape):
    values = [np.array([[0.0], [2.0]]), np.array([[-2.0], [nan]]), np.array([[inf], [0.0]])]
    parts = [xp.asarray(Tensor.from_numpy(v, f)) for v, f in zip(values, ["csr", "coo", "dense"])]
    want = np.concatenate(values, axis=1).reshape(shape)
    kernel = fused(xp.reshape(xp.concat(parts, axis=1), shape), want, strategy)
    # (no split: the axes longer than 1 are the concatenation's raveled, (6,), or the concatenation's own)
    assert "split" not in notation(kernel) and "broadcast" in notation(kernel), notation(kernel)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("fmt", ["csr", "coo", "dense"])
def test_an_operand_axis_of_extent_one_is_read_at_its_coordinate(strategy, fmt):
    a = data((1, 6), 0.0, seed=3)
    kernel = fused(xp.reshape(xp.asarray(Tensor.from_numpy(a, fmt)), (2, 3)), a.reshape(2, 3), strategy)
    text = notation(kernel)
    assert "collapse" not in text and "[0, " in text, text


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_csf_tensor_with_a_middle_axis_of_one_raveled(strategy):
    a = data((3, 1, 4), nan, seed=5)
    kernel = fused(xp.reshape(xp.asarray(Tensor.from_numpy(a, "csf", fill=nan)), (-1,)), a.reshape(-1), strategy)
    assert "0, " in notation(kernel), notation(kernel)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.lists(st.integers(0, 3), min_size=1, max_size=2),
       st.sampled_from(["csr", "coo", "dense"]), st.sampled_from([0.0, nan, -inf]), st.integers(0, 2 ** 16),
       st.sampled_from(["lattice", "looplets"]))
def test_ones_inserted_anywhere_against_numpy(sizes, ones, fmt, fill, seed, strategy):
    # (a 2-D operand of n entries, reshaped to ``sizes`` with extent-1 axes inserted at ``ones``)
    n = int(np.prod(sizes))
    a = data((1, n) if seed % 2 else (n, 1), fill, seed)
    shape = list(sizes)
    for at in ones:
        shape.insert(min(at, len(shape)), 1)
    A = xp.asarray(Tensor.from_numpy(a, fmt, fill=fill) if fmt != "dense" else a)
    fused(xp.reshape(A, tuple(shape)), a.reshape(shape), strategy)
