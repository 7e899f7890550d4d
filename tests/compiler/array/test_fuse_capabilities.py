"""The array front end (compiler.array.fuse) asks a strategy's capabilities (compiler.capabilities), never its
name: whether it lowers a statement again for the tensors' shapes where its kernel reads an input converted
(``lowers_for_shapes``: the lattice's bucketed sums), and whether an index of an expression may read a tensor
several times at constants (``shares_constant_reads`` for entries, ``shares_constant_fibers`` for rows)."""

from dataclasses import replace

import numpy as np
import pytest

import compiler as ss
from compiler import array as xp, lowering
from compiler.array import fuse
from compiler.capabilities import capabilities


def said(monkeypatch, **changed):
    """Make the front end read the lattice's capabilities with ``changed`` (the strategy itself unchanged); the
    choices it made under what the strategy said before are forgotten (compiler.array.attempts keeps them)."""
    monkeypatch.setattr(fuse, "capabilities", lambda s: replace(capabilities(s), **changed) if s == "lattice"
                        else capabilities(s))
    lowering.clear_cache()


def summed_csf():
    rng = np.random.default_rng(0)
    d = np.where(rng.random((3, 4, 5)) < 0.3, rng.random((3, 4, 5)), 0.0)
    return xp.asarray(ss.Tensor.from_numpy(d, "csf")), d


def test_a_sum_is_lowered_again_for_the_shapes_where_the_strategy_says_so(monkeypatch):
    # (out[i, j] = sum[k](A[k, i, j]) into a CSR: the plan reads the CSF A converted; lowered again for the
    # shapes, its terms are bucketed in one kernel that converts nothing)
    a, d = summed_csf()
    k = ss.lower(xp.sum(a, axis=0), strategy="lattice", format="csr")
    assert k.lowered.conversions == () and k.trace.find("loop-order")
    np.testing.assert_allclose(np.asarray(k().to_numpy()), d.sum(axis=0))
    said(monkeypatch, lowers_for_shapes=False)
    k = ss.lower(xp.sum(a, axis=0), strategy="lattice", format="csr")
    assert [t for t, _ in k.lowered.conversions] != [] and not k.trace.find("loop-order")
    np.testing.assert_allclose(np.asarray(k().to_numpy()), d.sum(axis=0))


@pytest.mark.parametrize("shares", [True, False])
def test_an_entry_read_again_is_fused_where_the_strategy_shares_it(monkeypatch, shares):
    t = ss.Tensor.from_numpy(np.array([-0.0, np.nan, np.nan, 2.0, -np.inf]), "sparse", fill=np.nan)
    w, w_ = xp.asarray(t), t.to_numpy()
    # (a strategy sharing rows shares their entries too: said to share neither, or entries only)
    said(monkeypatch, shares_constant_reads=shares, shares_constant_fibers=False)
    k = ss.lower(xp.square(xp.sign(w))[1], strategy="lattice")
    assert bool(k.trace.find("materialize")) != shares
    np.testing.assert_array_equal(np.asarray(k().to_numpy()), np.square(np.sign(w_))[1])


@pytest.mark.parametrize("fibers", [True, False])
def test_a_row_read_again_is_fused_where_the_strategy_shares_fibers(monkeypatch, fibers):
    # (said not to, the front end computes the expression apart; said to, as it does, one walk of the row)
    a_ = np.array([[1.0, 0.0, -2.0], [0.0, 0.0, 3.0], [4.0, -0.0, 0.0]])
    a = xp.asarray(ss.Tensor.from_numpy(a_, "csr"))
    said(monkeypatch, shares_constant_fibers=fibers)
    k = ss.lower((xp.sign(a) * a + a)[2], strategy="lattice")
    assert bool(k.trace.find("materialize")) != fibers
    np.testing.assert_array_equal(np.asarray(k().to_numpy()), (np.sign(a_) * a_ + a_)[2])
