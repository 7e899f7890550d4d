"""Issue 29's "done when", whole, in one place: every level format lowers by both strategies for
SpMV, an elementwise sum into CSR, an elementwise product into a dense output and a diagonal
``y[i] = A[i, i]``, as the rows' level of a matrix (``Dense(L)``) and as its outer level over dense
rows (``L(Dense)``), and a coordinate list (``SparseCOO``) as the whole matrix; and (item 3) every
output format by both strategies for a copy and a sum, nested as the levels allow: each level under
Dense rows, in storage order and transposed, TACO's ``{sparse, dense}`` (a SparseList of dense
rows), DCSR, CSF, a hash of hashes, CSC, COO and sparse 3-D outputs stored in the order (2, 1, 0).

Each cell's compiled kernel is checked against the dense oracle (:func:`compiler.evaluate`), and an
output's storage against the one :meth:`Tensor.from_numpy` builds for its format (a hash's table
order aside: it follows the order its keys were inserted in). The strategies' own files test each
format further (properties, fill values, schedules); this file says the matrix has no hole.

The cells that failed before this file: a diagonal of a matrix whose outer level is sparse over
dense rows under the lattice strategy (``SparseList(Dense)``: refused, "locates only as a Dense
level under a Dense one"), and a transposed output whose level holds at most one entry per fiber
under looplets (``Dense(SparsePoint)`` in mode order (1, 0): built in the loops' order in the same
levels, where a row may hold two, so the kernel's output failed its check).
"""

import numpy as np
import pytest

from compiler import Tensor, evaluate, lower
from compiler.format import Format, coo, csc, csf, csr, dcsr, dense
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap,
                             SparseHash, SparseInterval, SparseList, SparsePoint, SparseRunList)
from compiler.testing import assert_same_storage

STRATEGIES = ("lattice", "looplets")
#: every level format of one mode (the rows' level of a matrix, or its outer level)
LEVELS = (Dense, SparseList, SparseHash, SparseByteMap, SparseBand, SparseBlockList, SparseInterval, SparsePoint,
          RunList, SparseRunList)
#: program -> the output's format (None: the strategy's default, a dense vector)
PROGRAMS = {
    "y[i] = A[i, j] * x[j]": None,
    "C[i, j] = A[i, j] + B[i, j]": csr(),
    "C[i, j] = A[i, j] * B[i, j]": dense(2),
    "y[i] = A[i, i]": None,
}
SHAPE = (5, 6)   # (square for the diagonal)


def fitting(shape, at_most_one: bool, runs: bool, seed: int) -> np.ndarray:
    """A matrix whose rows a level fits: any entries, or for a level of at most one entry per fiber
    one entry per row, one run of equal values where the level stores runs (some columns then hold
    two); otherwise some rows empty, and a run three entries long (a band, a block, a run)."""
    rng = np.random.default_rng(seed)
    m, n = shape
    a = np.zeros(shape)
    if at_most_one:
        for r in range(0, m, 2):
            c = 1 if r % 4 == 0 else 3   # (rows 0 and 4 share their columns: a column holds two)
            a[r, c:c + (2 if runs else 1)] = r + 1
        return a
    a[:] = rng.integers(1, 4, size=shape) * (rng.random(shape) < 0.4)
    a[1] = 0
    a[2, 1:4] = 2.0
    return a


def operand(level, placement: str, shape) -> Tensor:
    """A matrix with ``level`` as its rows' level (``inner``) or its outer level (``outer``)."""
    lvl = level(Element(0.0))
    if placement == "inner":
        a = fitting(shape, lvl.at_most_one, lvl.appends_runs, 1)
        return Tensor.from_numpy(a, Format(Dense(lvl)))
    # (an outer level of at most one entry holds one row: a run of rows stores each row its own run)
    a = fitting(shape, False, False, 2)
    if lvl.at_most_one:
        a[np.arange(shape[0]) != 3] = 0
    return Tensor.from_numpy(a, Format(level(Dense(Element(0.0)))))


def run_cell(prog: str, strategy: str, A: Tensor, out=None, **others):
    """Lower ``prog`` by ``strategy`` (the output in ``out``) and check its kernel against the oracle;
    returns the result."""
    tensors = {"A": A, **others}
    want, _ = evaluate(prog, **tensors)
    name = prog.split("[")[0].strip()
    k = lower(prog, strategy, **tensors, **({name: out} if out is not None else {}))
    got = k(**tensors)
    np.testing.assert_allclose(got.to_numpy(), want, err_msg=f"{prog} by {strategy}")
    return got, want


def others_of(prog: str, shape) -> dict:
    rng = np.random.default_rng(3)
    b = rng.integers(1, 4, size=shape) * (rng.random(shape) < 0.5)
    return {**({"B": Tensor.from_numpy(b.astype(float), csr())} if "B[" in prog else {}),
            **({"x": np.arange(1.0, shape[1] + 1)} if "x[" in prog else {})}


def shape_of(prog: str):
    return (SHAPE[0], SHAPE[0]) if "A[i, i]" in prog else SHAPE


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("prog", PROGRAMS)
@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.name)
def test_every_level_as_the_rows_level(level, prog, strategy):
    shape = shape_of(prog)
    run_cell(prog, strategy, operand(level, "inner", shape), PROGRAMS[prog], **others_of(prog, shape))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("prog", PROGRAMS)
@pytest.mark.parametrize("level", LEVELS[1:], ids=lambda c: c.name)
def test_every_level_as_the_outer_level(level, prog, strategy):
    shape = shape_of(prog)
    run_cell(prog, strategy, operand(level, "outer", shape), PROGRAMS[prog], **others_of(prog, shape))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("prog", PROGRAMS)
def test_a_coordinate_list_as_the_whole_matrix(prog, strategy):
    shape = shape_of(prog)
    A = Tensor.from_numpy(fitting(shape, False, False, 4), coo())
    run_cell(prog, strategy, A, PROGRAMS[prog], **others_of(prog, shape))


E = Element(0.0, dtype="float64")
#: item 3's output formats: id -> format (2-D unless it stores three modes)
OUTPUTS = {
    **{f"Dense({c.name})": Format(Dense(c(E))) for c in LEVELS[1:]},
    **{f"Dense({c.name}) transposed": Format(Dense(c(E)), (1, 0)) for c in LEVELS[1:]},
    "SparseList(Dense)": Format(SparseList(Dense(E))),
    "dcsr": dcsr(),
    "SparseHash(SparseHash)": Format(SparseHash(SparseHash(E))),
    "csc": csc(),
    "coo": coo(),
    "csf": csf(3),
    "csf (2, 1, 0)": Format(csf(3).root, (2, 1, 0)),
    "Dense(Dense(SparseList)) (2, 1, 0)": Format(Dense(Dense(SparseList(E))), (2, 1, 0)),
}


def output_inputs(fmt: Format):
    """Inputs A and B (CSR, or CSF for three modes) whose sum the fibers of ``fmt`` fit: for a level
    of at most one entry (or run) per fiber, one per fiber in its storage order and more in the
    other (a transposed output built in the loops' order and converted must not keep the levels)."""
    if fmt.ndim == 3:
        rng = np.random.default_rng(5)
        a, b = (rng.integers(1, 4, size=(3, 4, 2)) * (rng.random((3, 4, 2)) < 0.5) for _ in range(2))
        return Tensor.from_numpy(a.astype(float), csf(3)), Tensor.from_numpy(b.astype(float), csf(3))
    if any(lvl.at_most_one for lvl in fmt.levels):
        stored = tuple(SHAPE[m] for m in fmt.mode_order)
        a = fitting(stored, True, any(lvl.appends_runs for lvl in fmt.levels), 0).transpose(np.argsort(fmt.mode_order))
        assert (np.count_nonzero(a, axis=fmt.mode_order[0]) > 1).any()   # (more than one in a fiber the other way)
        return Tensor.from_numpy(a, csr()), Tensor.from_numpy(2 * a, csr())
    return (Tensor.from_numpy(fitting(SHAPE, False, False, seed), csr()) for seed in (6, 7))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("what", ["copy", "sum"])
@pytest.mark.parametrize("out", OUTPUTS)
def test_every_output_format(out, what, strategy):
    fmt = OUTPUTS[out]
    A, B = output_inputs(fmt)
    idx = "i, j, k" if fmt.ndim == 3 else "i, j"
    prog = f"C[{idx}] = A[{idx}]" + (f" + B[{idx}]" if what == "sum" else "")
    got, want = run_cell(prog, strategy, A, fmt, **({"B": B} if what == "sum" else {}))
    assert got.format == fmt
    if not any(lvl.hashed for lvl in fmt.levels):   # (a table's layout follows its insertions)
        assert_same_storage(got, Tensor.from_numpy(want, fmt))
