"""RunList, SparseRunList, SparseInterval, SparsePoint, SparseByteMap: numpy round trips,
validation with clear FormatErrors, and kernel binding (array_dtypes / with_arrays)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.binding import input_params, output_tensor
from compiler.errors import FormatError
from compiler.levels import (Dense, Element, Pattern, RunList, SparseByteMap, SparseInterval, SparseList,
                             SparsePoint, SparseRunList)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def runny(draw, max_dim=8):
    m = draw(st.integers(0, 5))
    n = draw(st.integers(0, max_dim))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    density = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    vals = rng.integers(1, 3, (m, n)).astype(float) * (rng.random((m, n)) < density)
    if draw(st.booleans()) and n:  # runs of repeated values
        vals = np.repeat(vals[:, ::3], 3, axis=1)[:, :n]
        vals = np.pad(vals, ((0, 0), (0, n - vals.shape[1])))
    return vals


@SETTINGS
@given(runny(), st.sampled_from([RunList, SparseRunList, SparseByteMap]))
def test_round_trip_2d(M, level):
    A = Tensor.from_numpy(M, Dense(level(Element(0.0))))
    A.validate()
    np.testing.assert_array_equal(A.to_numpy(), M)
    np.testing.assert_array_equal(A.asformat("csr").asformat(Dense(level(Element(0.0)))).to_numpy(), M)


@SETTINGS
@given(runny(), st.sampled_from([RunList, SparseRunList, SparseByteMap, SparseList]))
def test_round_trip_outer_level(M, level):
    # the new level above another level (runs of equal sub-fibers are stored per coordinate)
    A = Tensor.from_numpy(M, level(SparseList(Element(0.0))))
    A.validate()
    np.testing.assert_array_equal(A.to_numpy(), M)


@SETTINGS
@given(runny())
def test_point_and_interval(M):
    # keep at most one entry (point) / one run (interval) per row
    P = np.zeros_like(M)
    I = np.zeros_like(M)
    for r in range(M.shape[0]):
        nz = np.flatnonzero(M[r])
        if nz.size:
            P[r, nz[0]] = M[r, nz[0]]
            I[r, nz[0]: nz[0] + 3] = 2.0
    for level, X in ((SparsePoint, P), (SparseInterval, I)):
        A = Tensor.from_numpy(X, Dense(level(Element(0.0))))
        A.validate()
        np.testing.assert_array_equal(A.to_numpy(), X)


def test_runlist_stores_fill_runs():
    A = Tensor.from_numpy(np.array([0, 0, 1.0, 1.0, 0]), RunList(Element(0.0)))
    assert A.levels[0].right.tolist() == [2, 4, 5] and A.vals.tolist() == [0.0, 1.0, 0.0]


def test_sparse_run_list_pattern():
    A = Tensor.from_numpy(np.array([[0, 1, 1, 0, 1]], dtype=bool), Dense(SparseRunList(Pattern())))
    assert A.levels[1].left.tolist() == [1, 4] and A.levels[1].right.tolist() == [3, 5]
    np.testing.assert_array_equal(A.to_numpy(), [[False, True, True, False, True]])


@pytest.mark.parametrize("build,message", [
    (lambda: RunList(Element(0.0, [1.0, 2.0]), 5, pos=[0, 2], right=[3, 4]), "ends at right[1]=4, not at the size 5"),
    (lambda: RunList(Element(0.0, [1.0, 2.0]), 5, pos=[0, 2], right=[3, 3]), "run 1 of fiber 0 is empty"),
    (lambda: SparseRunList(Element(0.0, [1.0, 2.0]), 5, pos=[0, 2], left=[0, 1], right=[2, 3]),
     "runs overlap or are out of order in fiber 0"),
    (lambda: SparseRunList(Element(0.0, [1.0]), 5, pos=[0, 1], left=[3], right=[7]), "outside [0, 5]"),
    (lambda: SparsePoint(Element(0.0, [1.0, 2.0]), 5, pos=[0, 2], idx=[0, 1]), "a SparsePoint fiber stores at most one"),
    (lambda: SparseInterval(Element(0.0, [1.0, 2.0]), 5, pos=[0, 2], left=[0, 3], right=[1, 4]),
     "a SparseInterval fiber stores at most one"),
    (lambda: SparseByteMap(Element(0.0, [0, 1.0, 0]), 3, pos=[0, 1], tbl=[0, 0, 1], srt=[1]),
     "disagrees with srt"),
    (lambda: SparseByteMap(Element(0.0, [0, 1.0, 1.0]), 3, pos=[0, 2], tbl=[0, 1, 1], srt=[2, 1]),
     "srt is not strictly increasing"),
])
def test_validation(build, message):
    with pytest.raises(FormatError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        Tensor(build(), name="A")


@pytest.mark.parametrize("level", [RunList, SparseRunList, SparseInterval, SparsePoint, SparseByteMap])
def test_binding_round_trip(level):
    M = np.array([[0, 2.0, 2.0, 0], [0, 0, 0, 0], [0, 0, 0, 5.0]])
    if level is SparsePoint:
        M[0, 2] = 0
    A = Tensor.from_numpy(M, Dense(level(Element(0.0))))
    params = {p.name for p in input_params("A", A.format)}
    kinds = set(A.levels[1].array_dtypes())
    assert {f"A1_{k}" for k in kinds} <= params
    arrays = {f"A1_{k}": v for k, v in A.levels[1].arrays().items()}
    arrays["A_val"] = A.vals
    back = output_tensor("A", A.format, A.shape, arrays)
    np.testing.assert_array_equal(back.to_numpy(), M)
    assert back.format == A.format and str(back.format) == str(A.format)


def test_a_band_names_its_ofs_array_in_errors():
    from compiler.levels import SparseBand
    with pytest.raises(FormatError, match=r"B: level 1 \(SparseBand\): ofs is not non-decreasing: ofs\[1\]=3 > "
                                          r"ofs\[2\]=2"):
        Tensor(Dense(SparseBand(Element(0.0, np.ones(3)), 4, idx=np.array([2, 3]), ofs=np.array([0, 3, 2])), 2),
               name="B")


def reference_runs(M):
    """A Dense(RunList)'s arrays, fiber by fiber: maximal runs of equal values covering each row."""
    pos, right, vals = [0], [], []
    for row in M:
        n = len(row)
        ends = [q + 1 for q in range(n - 1) if row[q + 1] != row[q]] + ([n] if n else [])
        right += ends
        vals += [row[e - 1] for e in ends]
        pos.append(len(right))
    return pos, right, vals


@SETTINGS
@given(runny())
@example(np.array([[0.0, 1.0, 1.0, 0.0, 2.0], [0.0] * 5, [1.0] * 5]))   # a gap, an all-fill and a full fiber
@example(np.zeros((3, 0)))
def test_runs_are_placed_in_fiber_order(M):
    # RunList.from_entries places the fill runs between stored runs without sorting them
    # (the lexsort took 170 ms of a 2000 x 2000, 200k-entry conversion)
    A = Tensor.from_numpy(M, Dense(RunList(Element(0.0))))
    pos, right, vals = reference_runs(M)
    lvl = A.levels[1]
    assert lvl.pos.tolist() == pos and lvl.right.tolist() == right and A.vals.tolist() == vals
