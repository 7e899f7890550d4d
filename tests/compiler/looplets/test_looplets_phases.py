"""A Sequence's phase cut short by the loop's extent: a Spike in it loses its tail.

A level whose fiber is ``Sequence(Phase(stop, Spike(fill, entry)), Phase(fill))`` (notebook 08's
SparsePoint, a format of the user's) read on a diagonal, ``y[i] = A[i, i]``, runs each row's loop
over ``[i, i + 1)``: the first phase ends at ``min(stop, i + 1)``, and where that is short of its
own stop the Spike's tail (the entry at ``stop - 1``) is not in the loop. Before, the phase body
was lowered untruncated, and row 0 of a matrix with its entry at column 2 read that entry as its
diagonal (``[2, 0, 0, 1.5]`` for ``[0, 0, 0, 1.5]``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import compiler as ss
from compiler.imperative.ir import BinOp, Const, Declare, Load, Select, Var
from compiler.levels import Dense, Element, SparseList
from compiler.looplets import extents as X
from compiler.looplets import levels as looplet_levels
from compiler.looplets.levels import SubFiber, fill_value
from compiler.looplets.looplets import Fill, Phase, Sequence, Spike, Thunk


@dataclass(frozen=True, eq=False, repr=False)
class OnePoint(SparseList):
    """At most one stored coordinate per fiber, stored as a SparseList (pos, idx)."""

    name = "OnePoint"

    def spec(self):
        return OnePoint(self.child.spec(), index_dtype=self.index_dtype)

    def format_key(self):
        return ("OnePoint-test", self.index_dtype.name, self.child.format_key())

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        built = SparseList.from_entries(self, parent_count, parent_pos, coords, vals, sizes)
        return OnePoint(built.child, built.size, built.pos, built.idx)


def unfurl_point(f, ctx, mode):
    """Fill up to the fiber's one coordinate, its entry as a Spike's tail, then fill."""
    info, k = f.tensor, f.level
    pos, idx = info.array(k, "pos"), info.array(k, "idx")
    q, stop = Var(ctx.fresh("qP")), Var(ctx.fresh("stopP"))
    pre = (Declare(q, "int64", Load(pos, f.pos)),
           Declare(stop, "int64", Select(BinOp("<", q, Load(pos, X.add(f.pos, 1))),
                                         X.add(Load(idx, q), 1), Const(0, "int64"))))
    fill = Fill(fill_value(info))
    entry = SubFiber(f.tensor, f.level + 1, q, f.mode, f.dirty)
    return Thunk(pre, Sequence((Phase(stop, Spike(fill, entry)), Phase(None, fill))))


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(looplet_levels.UNFURL, OnePoint, unfurl_point)


def _one_per_row(n, cols, values):
    """An n x n matrix with the entry ``values[r]`` at column ``cols[r]`` of row r (none for None)."""
    m = np.zeros((n, n))
    for r, (c, v) in enumerate(zip(cols, values)):
        if c is not None:
            m[r, c % n] = v
    return m


@st.composite
def matrices(draw):
    n = draw(st.integers(1, 6))
    cols = draw(st.lists(st.one_of(st.none(), st.integers(0, n - 1)), min_size=n, max_size=n))
    values = draw(st.lists(st.sampled_from([1.0, 2.5, -3.0]), min_size=n, max_size=n))
    return _one_per_row(n, cols, values)


ONEHOT = np.array([[0, 0, 2.0, 0], [0, 0, 0, 0], [5.0, 0, 0, 0], [0, 0, 0, 1.5]])


@given(matrices())
@example(ONEHOT)    # row 0's entry at column 2 was read as its diagonal
def test_a_phase_cut_by_a_diagonal_drops_its_spike_tail(m):
    A = ss.Tensor.from_numpy(m, Dense(OnePoint(Element(0.0))), name="A")
    kernel = ss.lower("y[i] = A[i, i]", strategy="looplets", A=A)
    assert np.array_equal(kernel(A=A).to_numpy(), np.diag(m))
    want, _ = ss.evaluate("y[i] = A[i, i]", A=A)
    assert np.array_equal(kernel(A=A).to_numpy(), want)


@given(matrices())
@example(ONEHOT)
def test_a_phase_that_ends_inside_the_extent_keeps_its_spike_tail(m):
    A = ss.Tensor.from_numpy(m, Dense(OnePoint(Element(0.0))), name="A")
    x = np.arange(1.0, m.shape[1] + 1)
    kernel = ss.lower("y[i] = A[i, j] * x[j]", strategy="looplets", A=A, x=x)
    assert np.allclose(kernel(A=A, x=x).to_numpy(), m @ x)
