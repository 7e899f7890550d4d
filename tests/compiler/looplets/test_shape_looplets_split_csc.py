"""A split of a column-major matrix's row index under the looplets strategy (issue 30): ``out[i, k, j] =
split(A[l, j], l -> (i, k:K))`` of a CSC ``A`` into a CSF runs its loops i, k, j (the output's order),
so A's row level is read at ``k + i·K``, an offset of indices already bound, under the loop over j of
its column level. It was refused as "access offset(A.lvl1[j], ${i} * 2)[${k}] is not fully indexed";
now it is read through a loop of length one, as any bound coordinate is (concordization), each row
located in each column (the trace's ``gather`` step says so), and the array front end's reshape of a
CSC is that statement, not a retry as a split of the whole ravel. Against numpy, the dense oracle and
the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, SparseCOO, SparseList

from tests.compiler.looplets.shape_checks import checked_kernel, one_kernel

SPLIT = "out[i, k, j] = split(A[l, j], l -> (i, k:{K}))"


def column_major(name: str, fill: float):
    """Formats storing columns first: CSC, a DCSC, a COO sorted by columns, a SparseList of Dense columns."""
    levels = {"csc": lambda: Dense(SparseList(Element(fill))), "dcsc": lambda: SparseList(SparseList(Element(fill))),
              "coo": lambda: SparseCOO(2, Element(fill)), "sparse_dense": lambda: SparseList(Dense(Element(fill)))}
    return Format(levels[name](), mode_order=(1, 0))


def matrix(shape, density, fill, seed):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(shape) < density, rng.choice([1.0, -2.0, np.nan, np.inf, -np.inf], shape), fill)


@pytest.mark.parametrize("out", ["csf", "coo", "dense"])
def test_the_split_of_a_csc_into_3d(out):
    a = np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0], [0, 0, 5], [0, 0, 0], [6, 7, 0]])
    A = ss.Tensor.from_numpy(a, "csc", name="A")
    kernel, _ = checked_kernel(SPLIT.format(K=2), a.reshape(3, 2, 3), out, A=A)
    (note,) = [s.note for s in kernel.trace.find("gather")]
    assert note.startswith("A[k + i * 2, j]: its level 1 (SparseList) is indexed by k + i * 2") and \
        note.endswith("A located at each coordinate the loops visit"), note
    # (the loops are the output's, A's rows read at a loop of length one inside its columns')
    program = str(next(s.after for s in kernel.trace.steps if s.stage == "program"))
    assert program.splitlines()[:3] == ["for i = 0:A1_size / 2", "  for k = 0:2", "    for j = 0:A0_size"], program


@pytest.mark.parametrize("fmt", ["dcsc", "coo", "sparse_dense"])
def test_the_split_of_other_column_major_formats(fmt):
    a = matrix((4, 3), 0.5, 0.0, seed=3)
    A = ss.Tensor.from_numpy(a, column_major(fmt, 0.0), name="A")
    checked_kernel(SPLIT.format(K=2), a.reshape(2, 2, 3), "csf", A=A)


def test_the_array_front_ends_reshape_of_a_csc_is_the_split_itself():
    # (before: refused, then retried as a split of the whole ravel, each entry located through it)
    a = matrix((6, 4), 0.5, 0.0, seed=4)
    expr = xp.asarray(ss.Tensor.from_numpy(a, "csc")).reshape(2, 3, 4)
    kernel = one_kernel(expr)
    assert "split(A[l, k], l -> (i:2, j:3))" in str(kernel.program), kernel.program
    got = kernel()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), a.reshape(2, 3, 4))
    np.testing.assert_array_equal(np.asarray(expr.compute(strategy="looplets", format="csf")), a.reshape(2, 3, 4))


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 6), cols=st.integers(0, 4), K=st.sampled_from([1, 2, 3]),
       density=st.sampled_from([0.0, 0.5, 1.0]), fill=st.sampled_from([0.0, 1.0, np.nan]),
       fmt=st.sampled_from(["csc", "dcsc", "coo", "sparse_dense"]), out=st.sampled_from(["csf", "coo", "dense"]),
       seed=st.integers(0, 2 ** 16))
@example(rows=4, cols=3, K=2, density=0.5, fill=0.0, fmt="csc", out="csf", seed=0)       # refused before
@example(rows=0, cols=3, K=3, density=0.5, fill=np.nan, fmt="csc", out="csf", seed=1)    # no rows
@example(rows=6, cols=0, K=2, density=0.5, fill=1.0, fmt="dcsc", out="coo", seed=2)      # no columns
@example(rows=6, cols=2, K=3, density=0.0, fill=1.0, fmt="csc", out="dense", seed=3)     # all fill
@example(rows=3, cols=4, K=1, density=1.0, fill=np.nan, fmt="coo", out="csf", seed=4)    # all stored
def test_a_split_of_a_column_major_matrix(rows, cols, K, density, fill, fmt, out, seed):
    rows -= rows % K
    a = matrix((rows, cols), density, fill, seed)
    A = ss.Tensor.from_numpy(a, column_major(fmt, fill), name="A")
    checked_kernel(SPLIT.format(K=K), a.reshape(rows // K, K, cols), out, A=A)
