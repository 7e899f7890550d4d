"""A level format whose arrays have names of its own, read as an input through the built-in read paths.

``Listed`` stores what a SparseList stores, ``crd[starts[p]:starts[p + 1]]``, under other names and
in no built-in class. Registered with the built-in SparseList iterator (lattice) and unfurls (looplets:
walk and gallop), it reads as a SparseList does only if those paths ask the level for its arrays'
names (``starts_array``, ``crd_array``) instead of spelling ``pos`` and ``idx`` (issue 29, item 1).
The oracles are ``compiler.evaluate`` and the IR interpreter (``compiler.testing.check_lowered``), and
numpy for the loop program.
"""

from typing import ClassVar

import numpy as np
import pytest

from compiler import Tensor
from compiler.format import Format
from compiler.lattice import iterators as lattice_iterators
from compiler.levels import Dense, Element
from compiler.looplets import compile_program, loop_program
from compiler.looplets import gallop_looplets
from compiler.looplets import levels as looplet_levels
from compiler.testing import check_lowered
from tests.compiler.levels.starts_crd import StartsCrd


class Listed(StartsCrd):
    """A compressed level (TACO's): the coordinates of fiber ``p`` are ``crd[starts[p]:starts[p + 1]]``,
    sorted and unique, each entry its own child."""

    name: ClassVar[str] = "Listed"
    compressed: ClassVar[bool] = True


@pytest.fixture
def registered():
    """``Listed`` read by the built-in paths of a compressed level, for this test only."""
    lattice_iterators.register_iterator(Listed, lattice_iterators.level_iterators)
    looplet_levels.register_unfurl(Listed, looplet_levels.unfurl_sparse_list)
    looplet_levels.GALLOP[Listed] = gallop_looplets.unfurl_sparse_list_gallop
    yield Listed
    lattice_iterators.ITERATORS.pop(Listed, None)
    looplet_levels.UNFURL.pop(Listed, None)
    looplet_levels.GALLOP.pop(Listed, None)


M = np.array([[0, 0, 5.0, 0, 0, 7.0, 0], [3.0, 0, 0, 0, 0, 0, 0], [0] * 7, [0, 1.0, 2.0, 0, 0, 0, -1.0]])
LISTED = Format(Dense(Listed(Element(0.0))))


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_spmv_reads_the_levels_arrays(registered, strategy):
    A = Tensor.from_numpy(M, LISTED)
    x = np.arange(1.0, 8.0)
    k = check_lowered("y[i] = A[i, j] * x[j]", strategy=strategy, A=A, x=x)
    assert "A1_starts" in k.c_source and "A1_crd" in k.c_source and "A1_pos" not in k.c_source
    np.testing.assert_array_equal(k(A=A, x=x).to_numpy(), M @ x)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_elementwise_sum_into_csr(registered, strategy):
    """Two operands of the format merged (a union), the result assembled as CSR."""
    B = -M[:, ::-1].copy()
    A, Bt = Tensor.from_numpy(M, LISTED), Tensor.from_numpy(B, LISTED)
    k = check_lowered("C[i, j] = A[i, j] + B[i, j]", out="csr", strategy=strategy, A=A, B=Bt)
    assert "B1_crd" in k.c_source and "B1_idx" not in k.c_source
    np.testing.assert_array_equal(k(A=A, B=Bt).to_numpy(), M + B)


@loop_program
def dot_gallop(s, x, y):
    for i in _:
        s += x[gallop(i)] * y[gallop(i)]


def test_gallop_intersection(registered):
    """Two vectors of the format intersected by galloping (each seeks the other's coordinate)."""
    x = np.array([0, 2.0, 0, 0, 3.0, 0, 0, 0, 1.0, 4.0, 0, 0, 0, 0, 5.0])
    y = np.array([1.0, 2.0, 0, 0, 0, 0, 0, 0, 7.0, 0, 0, 0, 0, 0, 2.0])
    X, Y = Tensor.from_numpy(x, Listed(Element(0.0))), Tensor.from_numpy(y, Listed(Element(0.0)))
    k = compile_program(dot_gallop, s=Element(0.0), x=X, y=Y)
    assert "x0_crd" in k.c_source and "x0_idx" not in k.c_source
    assert float(k(x=X, y=Y)) == float(x @ y)
