"""The iterator registry: a level class defined outside the package joins the lattice strategy.

Kernels are cached by program and formats, so each test that changes the registry lowers a
program of its own.
"""

from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np
import pytest

from compiler import Tensor, evaluate, lower
from compiler.errors import StrategyError
from compiler.levels import Dense, SparseList
from compiler.lattice.iterators import ITERATORS, ModeIterator, iterator_factory, register_iterator


@dataclass(frozen=True, eq=False, repr=False)
class NotebookList(SparseList):
    """A compressed level as a user would define it in a notebook (same arrays as SparseList)."""

    name: ClassVar[str] = "NotebookList"

    def spec(self):
        return NotebookList(self.child.spec(), index_dtype=self.index_dtype)

    def format_key(self):
        return ("NotebookList",) + SparseList.format_key(self)[1:]


def as_notebook_csr(a):
    A = Tensor.from_numpy(a, "csr")
    row, col = A.levels
    col2 = NotebookList(**{f.name: getattr(col, f.name) for f in fields(col)})
    return Tensor(Dense(col2, row.size), shape=a.shape)


@pytest.fixture
def matrix():
    rng = np.random.default_rng(3)
    a = rng.integers(1, 5, size=(7, 6)).astype(float)
    a[rng.random(a.shape) < 0.6] = 0.0
    a[2] = 0.0
    return a


def test_subclass_dispatches_through_the_mro(matrix):
    assert NotebookList not in ITERATORS
    assert iterator_factory(NotebookList) is ITERATORS[SparseList]
    A, x = as_notebook_csr(matrix), np.arange(1.0, 7.0)
    assert A.levels[1].name == "NotebookList"
    k = lower("y[i] = A[i, j] * x[j]", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), matrix @ x)


def test_registered_factory_is_used(matrix):
    calls = []

    def factory(name, tensor, mode, level, lvl):
        calls.append((tensor, level, type(lvl).__name__))
        return [ModeIterator(name, tensor, mode, level, 0, "SparseList")]

    register_iterator(NotebookList, factory)
    try:
        A, x = as_notebook_csr(matrix), np.arange(1.0, 7.0)
        k = lower("yr[i] = A[i, j] * x[j]", A=A, x=x)
        np.testing.assert_allclose(k(A=A, x=x).to_numpy(), matrix @ x)
        B = as_notebook_csr(np.roll(matrix, 1, axis=0) * 2)
        k2 = lower("Cr[i, j] = A[i, j] + B[i, j]", A=A, B=B, Cr=Tensor.from_numpy(np.zeros((7, 6)), "csr"))
        want, _ = evaluate("C[i, j] = A[i, j] + B[i, j]", A=A, B=B)
        np.testing.assert_allclose(k2(A=A, B=B).to_numpy(), want)
        assert ("A", 1, "NotebookList") in calls
    finally:
        del ITERATORS[NotebookList]


def test_a_refusing_factory_refuses_with_its_message(matrix):
    def refuse(name, tensor, mode, level, lvl):
        raise StrategyError(f"tensor {tensor}: notebook lists are refused here")

    register_iterator(NotebookList, refuse)
    try:
        A, x = as_notebook_csr(matrix), np.ones(6)
        with pytest.raises(StrategyError, match="notebook lists are refused"):
            lower("refused[i] = A[i, j] * x[j]", A=A, x=x, strategy="lattice")
    finally:
        del ITERATORS[NotebookList]


def test_wrong_number_of_iterators_is_an_error(matrix):
    register_iterator(NotebookList, lambda *a: [])
    try:
        A, x = as_notebook_csr(matrix), np.ones(6)
        with pytest.raises(StrategyError, match="gave 0 iterators"):
            lower("wrong[i] = A[i, j] * x[j]", A=A, x=x, strategy="lattice")
    finally:
        del ITERATORS[NotebookList]


def test_register_checks_its_arguments():
    with pytest.raises(TypeError):
        register_iterator("NotebookList", lambda *a: [])
    with pytest.raises(TypeError):
        register_iterator(NotebookList, 3)


def test_unregistered_level_is_refused_naming_the_registry(monkeypatch):
    from compiler.format import Format
    from compiler.lattice.iterators import mode_iterators
    from compiler.levels import Element
    from compiler.levels.run_list import RunList
    monkeypatch.delitem(ITERATORS, RunList)   # (a level no iterator is registered for)
    fmt = Format(Dense(RunList(Element(0.0))))
    with pytest.raises(StrategyError, match="register_iterator"):
        mode_iterators("A", "A", fmt)


def notebook_csr_format():
    from compiler.format import Format
    from compiler.levels import Element
    return Format(Dense(NotebookList(Element(0.0))))


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_subclass_of_sparse_list_reads_and_assembles_as_a_sparse_list(matrix, strategy):
    """A SparseList subclass of its own name, defined here, is what SparseList declares in both
    strategies: SpMV, a sum assembled into a NotebookList output, a product into a dense output and
    a diagonal, against the oracle; under the lattice strategy its kernel is CSR's, line for line."""
    A, x = as_notebook_csr(matrix), np.arange(1.0, 7.0)
    B = as_notebook_csr(np.roll(matrix, 1, axis=0) * 2)
    S = as_notebook_csr(matrix[:6, :6])
    k = lower("ys[i] = A[i, j] * x[j]", strategy=strategy, A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), matrix @ x)
    if strategy == "lattice":
        csr_k = lower("ys[i] = A[i, j] * x[j]", strategy=strategy, A=Tensor.from_numpy(matrix, "csr"), x=x)
        assert k.c_source == csr_k.c_source
    C = lower("Cs[i, j] = A[i, j] + B[i, j]", strategy=strategy, A=A, B=B, Cs=notebook_csr_format())(A=A, B=B)
    assert C.levels[1].name == "NotebookList"
    want, _ = evaluate("C[i, j] = A[i, j] + B[i, j]", A=A, B=B)
    np.testing.assert_allclose(C.to_numpy(), want)
    D = lower("Ds[i, j] = A[i, j] * B[i, j]", strategy=strategy, A=A, B=B, Ds="dense")(A=A, B=B)
    np.testing.assert_allclose(D.to_numpy(), matrix * np.roll(matrix, 1, axis=0) * 2)
    d = lower("ds[i] = S[i, i]", strategy=strategy, S=S)(S=S)
    np.testing.assert_allclose(d.to_numpy(), np.diag(matrix[:6, :6]))


def test_a_subclass_of_sparse_list_takes_a_position_schedule(matrix):
    """pos() walks the positions of a compressed level: a subclass declares it is one."""
    from compiler.lattice.schedule import Schedule
    A, x = as_notebook_csr(matrix), np.arange(1.0, 7.0)
    k = lower("yp[i] = A[i, j] * x[j]", strategy="lattice", A=A, x=x,
              options={"schedule": Schedule().fuse("i", "j", "f").pos("f", "fpos", "A").split("fpos", "f0", "f1", 4)})
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), matrix @ x)
    assert "schedule:pos" in k.trace.stages()


def test_a_level_declaring_itself_compressed_takes_a_position_schedule():
    """SparsePoint is stored as a SparseList (pos, idx) and declares itself compressed, so pos()
    walks its positions flat, as a SparseList's (before, pos() tested the level's name)."""
    from compiler.format import Format
    from compiler.lattice.schedule import Schedule
    from compiler.levels import Element, SparsePoint
    a = np.array([[0, 2.0, 0, 0], [0.0] * 4, [0, 0, 0, 3.0], [1.0, 0, 0, 0], [0, 0, 5.0, 0]])
    A, x = Tensor.from_numpy(a, Format(Dense(SparsePoint(Element(0.0))))), np.arange(1.0, 5.0)
    k = lower("yq[i] = A[i, j] * x[j]", strategy="lattice", A=A, x=x,
              options={"schedule": Schedule().fuse("i", "j", "f").pos("f", "fpos", "A").split("fpos", "f0", "f1", 2)})
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), a @ x)
    np.testing.assert_allclose(k.interpret(A=A, x=x).to_numpy(), a @ x)


def test_a_sum_over_a_level_declaring_itself_compressed_walks_its_positions_flat():
    """A sum over every entry walks the positions of a compressed level flat (the plan's own pos()
    schedule), asked of the level's properties, so SparsePoint's is walked as a SparseList's (before,
    the plan tested the level's class and kept a loop per row)."""
    from compiler.format import Format
    from compiler.levels import Element, SparsePoint
    a = np.array([[0, 2.0, 0, 0], [0.0] * 4, [0, 0, 0, 3.0], [1.0, 0, 0, 0], [0, 0, 5.0, 0]])
    A = Tensor.from_numpy(a, Format(Dense(SparsePoint(Element(0.0)))))
    k = lower("s = A[i, j]", strategy="lattice", A=A)
    assert "schedule:pos" in k.trace.stages()
    assert k(A=A).to_numpy() == k.interpret(A=A).to_numpy() == a.sum()


def _subclass(level):
    """A subclass of ``level`` of its own name, as a user would write it (no registration)."""
    return dataclass(frozen=True, eq=False, repr=False)(type(f"My{level.__name__}", (level,), {
        "__annotations__": {"name": ClassVar[str]}, "name": f"My{level.name}"}))


@pytest.mark.parametrize("level_name", ["SparseList", "SparseHash", "SparseByteMap", "SparseBand", "SparseBlockList",
                                        "SparsePoint", "SparseInterval", "RunList", "SparseRunList"])
@pytest.mark.parametrize("prog", ["y[i] = A[i, j] * x[j]", "y[i] = A[i, i]"])
@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_subclass_of_every_level_lowers_as_its_base(level_name, prog, strategy):
    """Each level format's subclass, of its own name, reads as its base in both strategies: its
    kernels agree with the oracle, and under the lattice strategy its C is its base's but for the name."""
    from compiler import levels
    from compiler.format import Format
    from compiler.levels import Element
    base = getattr(levels, level_name)
    sub = _subclass(base)
    a = np.array([[0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    x = np.arange(1.0, 5.0)
    kernels = {}
    for cls in (base, sub):
        A = Tensor.from_numpy(a, Format(Dense(cls(Element(0.0)))))
        assert type(A.levels[1]) is cls
        tensors = {"A": A, "x": x} if "x[" in prog else {"A": A}
        k = lower(prog, strategy=strategy, **tensors)
        want, _ = evaluate(prog, **tensors)
        np.testing.assert_allclose(k(**tensors).to_numpy(), want)
        kernels[cls] = k.c_source
    if strategy == "lattice":
        assert kernels[sub].replace(sub.name, base.name) == kernels[base]


def test_a_coordinate_list_of_one_mode_is_still_read_and_assembled_as_coo():
    """SparseCOO declares itself a coordinate list whatever its number of modes: of one mode above
    another level it is refused as before, and as a sparse vector output on threads it is filled as
    COO outputs are (asking for a level of several modes instead changed both)."""
    from compiler.format import Format
    from compiler.lattice.schedule import Schedule
    from compiler.levels import Element, SparseCOO
    A = Tensor.from_numpy(np.array([[0, 1.0], [2, 0]]), Format(SparseCOO(1, SparseList(Element(0.0)))))
    with pytest.raises(StrategyError, match="supports SparseCOO only as the innermost level"):
        lower("yc[i] = A[i, j] * x[j]", strategy="lattice", A=A, x=np.ones(2))
    B = Tensor.from_numpy(np.array([[0, 1.0], [2, 0]]), "csr")
    k = lower("yc[i] = B[i, j] * x[j]", strategy="lattice", B=B, x=np.ones(2), yc=Format(SparseCOO(1, Element(0.0))),
              options={"schedule": Schedule().parallelize("i")})
    np.testing.assert_array_equal(k(B=B, x=np.ones(2)).to_numpy(), [1.0, 2.0])
