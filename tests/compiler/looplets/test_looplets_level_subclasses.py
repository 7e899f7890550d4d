"""A subclass of a built-in level inherits its parent's looplets, as an input and as an output.

Strategies ask a level what it can do (``random_write``, ``slot_per_coordinate``,
``starts_array``, ...) and dispatch by class with subclass lookup, never by its name
(issue 29): a SparseBand subclass named otherwise once froze its output over
``C1_pos`` while the kernel took ``C1_ofs``. The oracle is numpy.
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from compiler import Tensor
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseHash,
                             SparseList)
from compiler.looplets import compile_program, loop_program
from compiler.looplets import levels as looplet_levels


def subclass(parent):
    """A subclass of ``parent`` with a name of its own (and nothing else of its own)."""
    cls = dataclass(frozen=True, eq=False, repr=False)(
        type(f"My{parent.__name__}", (parent,), {"__annotations__": {"name": ClassVar[str]},
                                                  "name": f"My{parent.__name__}"}))
    return cls


SUBCLASSES = {p.__name__: subclass(p) for p in (SparseBand, SparseList, SparseBlockList, SparseByteMap,
                                                SparseHash, RunList)}


@loop_program
def copy(C, A):
    C[...] = 0.0
    for i in _:
        for j in _:
            C[i, j] = A[i, j]


M = np.array([[0, 0, 5.0, 0, 0, 7.0, 0], [3.0, 0, 0, 0, 0, 0, 0], [0] * 7, [0, 1.0, 2.0, 0, 0, 0, 4.0]])


@pytest.fixture(params=["inherited", "registered"])
def how(request, monkeypatch):
    """The subclass uses its parent's unfurl by inheritance, or registered for it as the parent is."""
    if request.param == "registered":
        for name, cls in SUBCLASSES.items():
            parent = cls.__mro__[1]
            monkeypatch.setitem(looplet_levels.UNFURL, cls, looplet_levels.UNFURL[parent])
            if parent in looplet_levels.UPDATABLE:
                monkeypatch.setattr(looplet_levels, "UPDATABLE", looplet_levels.UPDATABLE | {cls})
    return request.param


@pytest.mark.parametrize("parent", SUBCLASSES)
def test_a_subclass_is_written_as_its_parent(parent, how):
    cls = SUBCLASSES[parent]
    A = Tensor.from_numpy(M, "csr")
    C = compile_program(copy, C=Dense(cls(Element(0.0))), A=A)(A=A)
    assert type(C.levels[1]) is cls
    np.testing.assert_array_equal(C.to_numpy(), M)


@pytest.mark.parametrize("parent", SUBCLASSES)
def test_a_subclass_is_read_as_its_parent(parent, how):
    cls = SUBCLASSES[parent]
    A = Tensor.from_numpy(M, Dense(cls(Element(0.0))))
    assert type(A.levels[1]) is cls
    C = compile_program(copy, C=Dense(Dense(Element(0.0))), A=A)(A=A)
    np.testing.assert_array_equal(C.to_numpy(), M)


def test_a_band_subclass_in_and_out():
    """The issue's case: a band subclass copied into another freezes over its ofs."""
    cls = SUBCLASSES["SparseBand"]
    A = Tensor.from_numpy(M, Dense(cls(Element(0.0))))
    k = compile_program(copy, C=Dense(cls(Element(0.0))), A=A)
    C = k(A=A)
    assert "C1_pos" not in k.c_source and "C1_ofs" in k.c_source
    np.testing.assert_array_equal(C.to_numpy(), M)
    assert C.levels[1].ofs.tolist() == [0, 4, 5, 5, 11]
