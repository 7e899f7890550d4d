"""Band, block and run levels whose arrays have names of their own, lowered by both strategies.

``Banded``, ``Blocked``, ``Runs`` and ``SparseRuns`` (tests/compiler/levels/renamed_levels.py) are
subclasses of SparseBand, SparseBlockList, RunList and SparseRunList that store the same arrays under
other names, so they inherit their parents' lattice iterators, looplet unfurls and writers: each
kernel here is right only if those paths ask the level for its arrays' names (issue 29). Each is
checked against ``compiler.evaluate`` and the IR interpreter (``compiler.testing.check_lowered``),
as an input (SpMV, an elementwise sum into CSR, an elementwise product into a dense output, the
diagonal ``y[i] = A[i, i]``, a reversed slice walking the fibers down) and as an output (an elementwise
sum assembled in the format).
"""

import numpy as np
import pytest

from compiler import Tensor
from compiler import array as xp
from compiler.format import Format
from compiler.levels import Dense, Element
from compiler.testing import check_lowered
from tests.compiler.lattice.split_kernels import one_lattice_kernel
from tests.compiler.levels.renamed_levels import Banded, Blocked, Runs, SparseRuns

FORMATS = {cls.name: cls for cls in (Banded, Blocked, Runs, SparseRuns)}
STRATEGIES = ["lattice", "looplets"]

M = np.array([[0, 0, 5.0, 5.0, 0, 7.0, 0], [3.0, 0, 0, 0, 0, 0, 0], [0] * 7,
              [0, 1.0, 2.0, 2.0, 0, 0, -1.0], [0, 0, 0, 0, 4.0, 4.0, 0], [1.0] * 7, [0, 0, 0, 0, 0, 0, 6.0]])
B = np.array([[1.0, 0, 5.0, 0, 0, 0, 0], [0] * 7, [0, 0, 2.0, 2.0, 2.0, 0, 0],
              [0, 0, 0, 3.0, 0, 0, -1.0], [0, 0, 0, 0, -4.0, 0, 0], [0] * 7, [6.0, 0, 0, 0, 0, 0, -6.0]])


def tensor(m, fmt):
    t = Tensor.from_numpy(m, Format(Dense(FORMATS[fmt](Element(0.0)))))
    assert type(t.levels[1]) is FORMATS[fmt]
    return t


def assert_own_names(k, tensor_name, fmt):
    """The kernel takes the level's arrays by its names, none of its parent's."""
    cls = FORMATS[fmt]
    for new in cls.index_arrays:
        assert f"{tensor_name}1_{new}" in k.c_source, (tensor_name, new)
    for old in cls.renames:
        assert f"{tensor_name}1_{old}" not in k.c_source, (tensor_name, old)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_spmv(fmt, strategy):
    A = tensor(M, fmt)
    k = check_lowered("y[i] = A[i, j] * x[j]", strategy=strategy, A=A, x=np.arange(1.0, 8.0))
    assert_own_names(k, "A", fmt)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_elementwise_sum_into_csr(fmt, strategy):
    A, Bt = tensor(M, fmt), tensor(B, fmt)
    k = check_lowered("C[i, j] = A[i, j] + B[i, j]", out="csr", strategy=strategy, A=A, B=Bt)
    assert_own_names(k, "B", fmt)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_elementwise_product_into_dense(fmt, strategy):
    A = tensor(M, fmt)
    k = check_lowered("C[i, j] = A[i, j] * B[i, j]", out="dense", strategy=strategy, A=A, B=B)
    assert_own_names(k, "A", fmt)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_diagonal(fmt, strategy):
    A = tensor(M, fmt)
    k = check_lowered("y[i] = A[i, i]", strategy=strategy, A=A)
    assert_own_names(k, "A", fmt)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_elementwise_sum_assembled_in_the_format(fmt, strategy):
    cls = FORMATS[fmt]
    A, Bt = tensor(M, fmt), Tensor.from_numpy(B, "csr")
    k = check_lowered("C[i, j] = A[i, j] + B[i, j]", out=Format(Dense(cls(Element(0.0)))), strategy=strategy,
                      A=A, B=Bt)
    C = k(A=A, B=Bt)
    assert type(C.levels[1]) is cls
    assert_own_names(k, "C", fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_reversed_slice_walks_the_level_down_by_its_names(fmt):
    """The lattice's walk down a fiber (a slice with a negative step), its block or run moved down beside
    the position, asks the level for its arrays' names too (on main a block or run level was converted)."""
    k = one_lattice_kernel(xp.asarray(tensor(M, fmt))[:, ::-2], M[:, ::-2])
    assert not k.trace.find("convert")
    assert_own_names(k, "A", fmt)
