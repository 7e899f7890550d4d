"""A sparse vector reduced from a 3-D tensor over the modes on both sides of its own
(``y[i] = A[j, i, k]``, A stored j, i, k): the loops run j, i, k, so the output's index has
reductions outside and inside it. A listed workspace lists each coordinate as the producer first
sets it and needs its index innermost; the plan gathers the result in a dense workspace over the
output's extent instead, swept once to append (:func:`compiler.lattice.plan_steps.auto_workspace`).
Was refused ("the reduction is not innermost, so it would scatter into y"). Against the dense
oracle, the IR interpreter and a bounds-checked build."""

import numpy as np
import pytest

from compiler import Tensor
from compiler.format import Format, sparse_vector
from compiler.lattice.ordering import wheres
from compiler.levels import Dense, Element, RunList, SparseList
from compiler.levels.sparse_band import SparseBand
from compiler.levels.sparse_byte_map import SparseByteMap
from compiler.levels.sparse_run_list import SparseRunList
from compiler.testing import check_lowered

nan, inf = np.nan, np.inf
SUM = "y[i] = A[j, i, k]"
MAX = "y[i] = max[j, k](A[j, i, k])"
MIN = "y[i] = min[j, k](A[j, i, k])"
PROD = "y[i] = prod[j, k](A[j, i, k])"
INPUTS = {"csf": lambda f: Format(Dense(SparseList(SparseList(Element(f))))),
          "dds": lambda f: Format(Dense(Dense(SparseList(Element(f))))),
          "sss": lambda f: Format(SparseList(SparseList(SparseList(Element(f)))))}
OUTPUTS = {"SparseList": SparseList, "SparseBand": SparseBand, "SparseByteMap": SparseByteMap,
           "SparseRunList": SparseRunList, "RunList": RunList}


def tensor(D, kind, fill=0.0):
    return Tensor.from_numpy(D, INPUTS[kind](fill), name="A")


def D3(fill=0.0):
    """(2, 4, 3): row 2 of the output's mode all fill, NaN and ±inf stored."""
    D = np.full((2, 4, 3), fill)
    D[0, 0, 1], D[1, 0, 2], D[0, 1, 0], D[1, 1, 1] = 2.0, -1.0, nan, 3.0
    D[1, 3, 0], D[0, 3, 2] = inf, -inf
    return D


def workspace_of(kernel):
    """The workspace the plan's precompute step gathered the output in."""
    step = kernel.trace.find("precompute")[0]
    return next(w.temp for w in wheres(step.after) if w.temp.workspace), step.note


def test_a_sum_over_the_modes_around_the_output_gathers_a_dense_workspace():
    A = tensor(D3(), "csf")
    k = check_lowered(SUM, out=sparse_vector(), checked=True, A=A)
    w, note = workspace_of(k)
    assert w.indices and [i.name for i in w.indices] == ["i"] and w.dense
    assert "dense array, swept once" in note and "Gustavson" not in note
    src = k.c_source
    # over the output's extent, allocated once: no bitmap, no list of coordinates, no sort
    assert "alloc_array(A1_size, sizeof *w, true)" in src and "w_set" not in src and "w_list" not in src
    assert src.count("for (int64_t i = 0; i < A1_size; i++)") == 1
    got = k(A=A)
    assert got.levels[0].idx.tolist() == [0, 1, 3]   # (row 2 sums to the fill: not stored)


def test_the_two_dimensional_reduction_keeps_its_listed_workspace():
    """``y[j] = min[i](A[i, j])`` of a CSR: the loop over i runs outside j only, so the listed
    (sparse) workspace it had stays."""
    A = Tensor.from_numpy(np.array([[0.0, 2.0, 0.0], [-1.0, 0.0, 0.0]]), "csr", name="A")
    k = check_lowered("y[j] = min[i](A[i, j])", out=sparse_vector(), A=A)
    w, note = workspace_of(k)
    assert not w.dense and "Gustavson" in note and "w_list" in k.c_source


@pytest.mark.parametrize("prog,kind,fill", [
    (SUM, "csf", 1.0), (SUM, "dds", nan), (SUM, "sss", 0.0), (SUM, "sss", 1.0), (MAX, "csf", -inf),
    (MAX, "sss", 1.0), (MIN, "dds", 0.0), (MIN, "sss", nan), (PROD, "csf", 1.0), (PROD, "dds", -inf),
    (PROD, "sss", 0.0)])
def test_reductions_against_the_oracle(prog, kind, fill):
    """Each missing coordinate of a reduced fiber is the input's fill, once (a sum of fill 1 counts
    them); the output's fill is the result's where nothing is stored."""
    A = tensor(D3(fill), kind, fill)
    check_lowered(prog, out=sparse_vector(), A=A)


@pytest.mark.parametrize("level,out_fill", [("SparseList", 1.0), ("SparseList", nan), ("SparseBand", 0.0),
                                            ("SparseByteMap", nan), ("SparseRunList", 1.0), ("RunList", 0.0),
                                            ("RunList", nan)])
def test_output_formats_and_fills(level, out_fill):
    A = tensor(D3(1.0), "dds", 1.0)
    for prog in (SUM, MAX):
        check_lowered(prog, out=Format(OUTPUTS[level](Element(out_fill))), A=A)


@pytest.mark.parametrize("shape", [(0, 3, 2), (2, 3, 0), (2, 0, 2), (1, 1, 1)])
@pytest.mark.parametrize("fill", [0.0, 1.0])
def test_empty_and_all_fill_inputs(shape, fill):
    A = tensor(np.full(shape, fill), "csf", fill)
    for prog in (SUM, PROD):
        check_lowered(prog, out=sparse_vector(), A=A)


def test_a_product_under_the_reduction():
    """``y[i] = prod[j, k](A[j, i, k] * B[i, k])``: a product with a matrix the output's index
    selects a row of (the array front end's ``prod(a3 * b2, axis=(0, 2))``)."""
    B = Tensor.from_numpy(np.array([[2.0, 0.0, -1.0], [nan, 1.0, 0.0], [0.0, 0.0, 0.0], [inf, 3.0, 1.0]]),
                          "csr", name="B")
    for fill in (0.0, 1.0):
        A = tensor(D3(fill), "csf", fill)
        check_lowered("y[i] = prod[j, k](A[j, i, k] * B[i, k])", out=sparse_vector(), A=A, B=B)
        check_lowered("y[i] = A[j, i, k] * B[i, k]", out=sparse_vector(), A=A, B=B)
