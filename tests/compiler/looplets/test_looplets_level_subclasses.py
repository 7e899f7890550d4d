"""A subclass of a built-in level inherits its parent's looplets, as an input and as an output.

Strategies ask a level what it can do (``random_write``, ``slot_per_coordinate``,
``starts_array``, ...) and dispatch by class with subclass lookup, never by its name
(issue 29): a SparseBand subclass named otherwise once froze its output over
``C1_pos`` while the kernel took ``C1_ofs``. Its unfurl (``looplets.levels``) and its output
writer (``looplets.level_writers``) are its parent's, inherited or registered for it: every
level the looplets write natively writes the same C through a subclass. The oracles are numpy
and ``compiler.evaluate``.
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

import compiler as ss
from compiler import Tensor
from compiler.format import Format
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseCOO,
                             SparseHash, SparseInterval, SparseList, SparsePoint, SparseRunList)
from compiler.looplets import compile_program, loop_program
from compiler.looplets import level_writers
from compiler.looplets import levels as looplet_levels


def subclass(parent):
    """A subclass of ``parent`` with a name of its own (and nothing else of its own)."""
    cls = dataclass(frozen=True, eq=False, repr=False)(
        type(f"My{parent.__name__}", (parent,), {"__annotations__": {"name": ClassVar[str]},
                                                  "name": f"My{parent.__name__}"}))
    return cls


SUBCLASSES = {p.__name__: subclass(p) for p in (SparseBand, SparseList, SparseBlockList, SparseByteMap,
                                                SparseHash, RunList)}
#: every level the looplet strategy writes natively (a writer of its own in looplets.level_writers)
WRITTEN = {p.__name__: subclass(p) for p in (SparseList, SparsePoint, SparseCOO, SparseBand, SparseBlockList,
                                             RunList, SparseRunList, SparseInterval, SparseHash, SparseByteMap)}


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
        for cls in (*SUBCLASSES.values(), *WRITTEN.values()):
            parent = cls.__mro__[1]
            monkeypatch.setitem(looplet_levels.UNFURL, cls, looplet_levels.UNFURL[parent])
            if parent in looplet_levels.UPDATABLE:
                monkeypatch.setattr(looplet_levels, "UPDATABLE", looplet_levels.UPDATABLE | {cls})
            if parent in level_writers.WRITERS:
                monkeypatch.setitem(level_writers.WRITERS, cls, level_writers.WRITERS[parent])
    return request.param


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


#: at most one entry per row (a SparsePoint's, a SparseInterval's one run), so every level holds it
ONE_PER_ROW = np.array([[0, 0, 5.0, 0, 0, 0, 0], [3.0, 0, 0, 0, 0, 0, 0], [0] * 7, [0, 0, 0, 0, 0, 0, 4.0]])


def output_of(cls):
    """A matrix output whose second level is ``cls`` (SparseCOO's subclass stores both modes)."""
    return Format(cls(2, Element(0.0)) if issubclass(cls, SparseCOO) else Dense(cls(Element(0.0))))


@pytest.mark.parametrize("parent", WRITTEN)
def test_a_subclass_writes_its_parents_c(parent, how):
    """Written through a subclass (its writer inherited or registered), an output level's kernel is
    its parent's, name for name, and its result the oracle's."""
    cls = WRITTEN[parent]
    m = ONE_PER_ROW if cls.at_most_one else M
    A, B = Tensor.from_numpy(m, "csr"), Tensor.from_numpy(3 * m, "dcsr")
    expr = "C[i, j] = A[i, j] + B[i, j]"
    theirs = ss.lower(expr, strategy="looplets", C=output_of(cls.__mro__[1]), A=A, B=B)
    ours = ss.lower(expr, strategy="looplets", C=output_of(cls), A=A, B=B)
    assert ours.c_source.replace(cls.name, parent) == theirs.c_source
    C = ours(A=A, B=B)
    assert type(C.levels[-1]) is cls
    np.testing.assert_array_equal(C.to_numpy(), ss.evaluate(expr, A=m, B=3 * m)[0])


def test_a_subclass_with_a_read_only_unfurl_of_its_own_is_written_as_its_parent(monkeypatch):
    """Notebook 08's case: a SparseList subclass registers an unfurl that only reads (a SparsePoint
    written from scratch). Written, it is its parent's storage, so the parent's update unfurl and
    writer write it; the strategy called the read-only unfurl in update mode and crashed
    (``'Literal' object has no attribute 'tns'``)."""
    cls = subclass(SparseList)
    calls = []

    def read_only(f, ctx, mode):
        calls.append(mode)
        return looplet_levels.unfurl_sparse_list(f, ctx, "read")
    monkeypatch.setitem(looplet_levels.UNFURL, cls, read_only)
    A = Tensor.from_numpy(M, Dense(cls(Element(0.0))))
    k = ss.lower("C[i, j] = A[i, j] * 2", strategy="looplets", C=Format(Dense(cls(Element(0.0)))), A=A)
    assert calls == ["read"]
    C = k(A=A)
    assert type(C.levels[1]) is cls
    np.testing.assert_array_equal(C.to_numpy(), 2 * M)
