"""Tensor.from_numpy builds a run of NaN as one run of a RunList or SparseRunList (before, ``==``
started a run at each NaN), as the kernels of both strategies now write it
(tests/compiler/looplets/test_looplets_nan_runs.py, tests/compiler/lattice/test_lattice_nan_runs.py)."""

import numpy as np
import pytest

from compiler import Tensor
from compiler.format import Format
from compiler.levels import Dense, Element, RunList, SparseRunList


@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_runs_of_nan_from_numpy(fill):
    v = np.array([np.nan, np.nan, np.nan, 1.0, 0.0, -0.0, np.inf, np.inf])
    t = Tensor.from_numpy(v, Format(RunList(Element(fill))))
    assert t.levels[0].right.tolist() == [3, 4, 6, 8]
    np.testing.assert_array_equal(t.to_numpy(), v)
    s = Tensor.from_numpy(v, Format(SparseRunList(Element(fill))))
    runs = list(zip(s.levels[0].left.tolist(), s.levels[0].right.tolist()))
    assert runs == ([(0, 3), (3, 4), (6, 8)] if fill == 0.0 else [(3, 4), (4, 6), (6, 8)])
    np.testing.assert_array_equal(s.to_numpy(), v)
    m = Tensor.from_numpy(np.array([v, v]), Format(Dense(RunList(Element(fill)))))   # (runs stop at a row's end)
    assert m.levels[1].right.tolist() == [3, 4, 6, 8] * 2
