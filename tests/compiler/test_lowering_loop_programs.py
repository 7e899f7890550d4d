"""Loop programs through ``compiler.lower`` with tensors (issue 31): the looplets strategy's
``shapes`` option is derived from the tensors given (``compiler.lowering.loop_shapes``), as
``compile_program`` gives it, so an output indexed by a computed coordinate needs no option."""

import numpy as np
import pytest
import scipy.sparse as sp

import compiler
from compiler import Tensor
from compiler.looplets import compile_program, loop_program
from compiler.looplets.case_studies import BY_COLUMNS, FRONTIER, bfs_push
from compiler.looplets.errors import ProgramError
from compiler.looplets.histogram import histogram_program
from compiler.format import Format
from compiler.levels import Dense, Pattern, SparseList


@loop_program
def spmv(y, A, x):
    for i in _:
        for j in _:
            y[i] += A[i, j] * x[j]


def test_an_spmv_loop_program_lowered_with_scipy_and_numpy_tensors_agrees_with_numpy():
    rng = np.random.default_rng(3)
    M = sp.random(7, 5, density=0.4, random_state=rng, format="csr")
    x = rng.standard_normal(5)
    kernel = compiler.lower(spmv, y="dense", A=M, x=x)
    np.testing.assert_allclose(kernel(A=M, x=x).to_numpy(), M @ x)


SHIFT, TOP = np.int64(4), np.int64(64)


def _histogram_want(img, mask, nbins):
    return np.bincount(img[mask & (img >= 0) & (img < TOP)] >> SHIFT, minlength=nbins)


def test_a_histogram_lowered_with_tensors_is_sized_by_its_bins_and_counts_as_numpy():
    """On main: ``cannot size bins: storage mode 0 is indexed by >>(v, shift[])`` unless
    ``options={"shapes": ...}`` was given; bins's extent is now the tensor's given for it."""
    program = histogram_program("shift")
    img = np.array([[1, 17, 17, 40, 300, 2], [63, 64, -1, 0, 33, 48]])
    mask = np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 1]], bool)
    bins = np.zeros(4, np.int64)
    kernel = compiler.lower(program, bins=bins, img=img, mask=mask, shift=SHIFT, top=TOP)
    got = kernel(bins=bins, img=img, mask=mask, shift=SHIFT, top=TOP).to_numpy()
    assert got.tolist() == _histogram_want(img, mask, 4).tolist() == [2, 2, 1, 2]
    # compile_program gives the same option: the same kernel
    assert compile_program(program, bins=bins, img=img, mask=mask, shift=SHIFT, top=TOP).c_source == kernel.c_source
    # bins given as a Tensor of another extent: its own kernel, sized by it
    wide = Tensor.from_numpy(np.zeros(8, np.int64), "dense")
    got = compiler.lower(program, bins=wide, img=img, mask=mask, shift=np.int64(3), top=TOP)(
        bins=wide, img=img, mask=mask, shift=np.int64(3), top=TOP).to_numpy()
    assert got.tolist() == np.bincount(img[mask & (img >= 0) & (img < TOP)] >> 3, minlength=8).tolist()


def test_a_histogram_given_only_the_format_of_its_bins_says_to_give_the_tensor():
    program = histogram_program("shift")
    img, mask = np.zeros((2, 3), np.int64), np.ones((2, 3), bool)
    with pytest.raises(ProgramError, match=r"cannot size bins: storage mode 0 is indexed by >>\(v, shift\[\]\), "
                                           r"not by a loop's index; give bins as a tensor or an array"):
        compiler.lower(program, bins="dense", img=img, mask=mask, shift=SHIFT, top=TOP)


def test_a_bfs_push_step_lowered_with_tensors_finds_the_next_frontier_and_parents():
    n = 6
    edges = np.zeros((n, n), bool)     # edges[u, v]: u -> v
    for u, v in [(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (4, 5), (3, 0)]:
        edges[u, v] = True
    frontier = np.array([False, False, True, False, False, False])
    visited = np.array([True, False, True, False, False, False])
    pattern = Format(Dense(SparseList(Pattern())), BY_COLUMNS)
    A = Tensor.from_numpy(edges.T.copy(), pattern)    # A[k, j]: the edge j -> k
    F = Tensor.from_numpy(frontier, FRONTIER)
    P = np.full(n, -1, np.int64)
    kernel = compiler.lower(bfs_push, _F=FRONTIER, P=P, F=F, A=A, V=visited)
    got = kernel(P=P, F=F, A=A, V=visited)
    found = (edges & frontier[:, None]).any(axis=0) & ~visited
    np.testing.assert_array_equal(got._F.to_numpy(), found)
    np.testing.assert_array_equal(got.P.to_numpy(), np.where(found, 2, -1))
