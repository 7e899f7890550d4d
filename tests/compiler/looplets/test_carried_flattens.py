"""An output written by a flatten of three or four modes (compiler.looplets.carried): the output's
fiber, written at ``out[l + (k + j * K) * L]`` by the loops over ``j``, ``k`` and ``l``, is opened once
before the loop over ``j`` and closed after it. On main it was opened in each ``j`` (carried across
``k`` only): a RunList output restarted its coverage and its run bookkeeping at each ``j``, writing
empty runs and runs out of order (``reshape(-1)`` of a (2, 1, 1) tensor, invalid); a SparseRunList
or a SparseBlockList split a run crossing from one ``j`` into the next in two, and a SparseInterval
refused it. The other appended levels (SparseList, SparseCOO, SparseBand) and the scattered ones
(SparseHash, SparseByteMap) gave valid results there and must stay so. A sparse vector read beside
such a flatten, ``x[l + (k + j * K) * L]``, carries its cursor across ``j`` the same way (on main its
search restarted at each ``j``).

Row-major (``reshape(-1)``) and column-major (``permute_dims(...).reshape(-1)``) flattens of 3 and 4
modes, a 4-mode tensor reshaped to a matrix into a Dense over each level, fills 0, 1, NaN and -inf
with NaN and ±inf stored, an output fill other than the operand's, empty and all-fill operands; each
result validated and checked against numpy, the dense oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler import array as xp
from compiler.format import Format
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseCOO,
                             SparseHash, SparseInterval, SparseList, SparseRunList)
from compiler.reference import evaluate

nan, inf = np.nan, np.inf

#: one-mode output levels, by name
OUTPUTS = {"RunList": RunList, "SparseRunList": SparseRunList, "SparseList": SparseList,
           "SparseCOO": lambda e: SparseCOO(1, e), "SparseHash": SparseHash, "SparseByteMap": SparseByteMap,
           "SparseBand": SparseBand, "SparseBlockList": SparseBlockList, "SparseInterval": SparseInterval}
#: (a SparseInterval stores one run a fiber: the runtime refuses a result of more)
ANY = [name for name in OUTPUTS if name != "SparseInterval"]
#: operand formats of 3 or 4 modes: compressed below a dense root, or dense throughout
OPERANDS = {"sparse": lambda n, f: Format(Dense(_nest(SparseList, n - 1, Element(f)))),
            "dense": lambda n, f: Format(_nest(Dense, n, Element(f)))}
#: how the operand is flattened: numpy's and the array front end's
FLATTENS = {"rows": (lambda a: a.reshape(-1), lambda a: a.reshape(-1)),
            "columns": (lambda a: a.transpose().reshape(-1),
                        lambda a: xp.permute_dims(a, tuple(reversed(range(a.ndim)))).reshape(-1)),
            "matrix": (lambda a: a.reshape(a.shape[0], -1), lambda a: a.reshape(a.shape[0], -1))}


def _nest(level, n, leaf):
    for _ in range(n):
        leaf = level(leaf)
    return leaf


def flattened(arr, operand, fill, flatten, out, out_fill, strategy="looplets"):
    """``arr`` (its fill ``fill``) flattened into output level ``out`` of fill ``out_fill`` (under a
    Dense for a matrix), lowered by ``strategy``, validated and checked against numpy, the dense
    oracle and the interpreter; the kernel."""
    want_of, build = FLATTENS[flatten]
    want = want_of(arr)
    level = OUTPUTS[out](Element(out_fill))
    fmt = Format(Dense(level) if flatten == "matrix" else level)
    return checked(build(xp.asarray(Tensor.from_numpy(arr, OPERANDS[operand](arr.ndim, fill)))).lower(
        fmt, strategy=strategy), want)


def checked(k, want):
    """The kernel ``k``, its result validated and checked against ``want``, the dense oracle and the
    interpreter."""
    got = k()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(evaluate(k.program, **k.arguments)[0], want)
    np.testing.assert_array_equal(k.interpret().to_numpy(), want)
    return k


@pytest.mark.parametrize("strategy", [None, "looplets"])
def test_a_flatten_of_three_modes_into_a_run_list_opens_the_output_once(strategy):
    """The report's case: on main the runs were [0, 1) of 1.0, then an empty one (right = 1 again). A (2, 1, 1)
    tensor's extent-1 modes are now read at their one coordinate (no flatten of three modes): a (2, 2, 2) one
    is flattened."""
    for arr in (np.array([[[1.0]], [[2.0]]]), np.array([[[1.0, 1.0], [1.0, 0.0]], [[2.0, 2.0], [0.0, 2.0]]])):
        k = flattened(arr, "sparse", 0.0, "rows", "RunList", 1.0, strategy)
        src = k.c_source
        # (the run bookkeeping is declared once, before the loop over the first mode)
        assert src.count("int64_t qout_start = ") == 1 and src.index("int64_t qout_start") < src.index("for ("), src
    notes = [s.note for s in k.trace.steps if s.stage == "carry"]
    assert any(n.startswith("cursors carried across j") and "out on l" in n for n in notes), notes


@pytest.mark.parametrize("out", ANY)
def test_each_output_level_of_a_flatten_of_three_modes(out):
    """Values in runs, NaN and ±inf stored, an all-fill and an empty operand (one kernel each level)."""
    a = np.array([[[1.0, 1.0, nan], [nan, 0.0, 0.0]], [[0.0, 2.0, 2.0], [inf, -inf, -inf]]])
    for arr in (a, np.zeros_like(a), np.zeros((2, 0, 3))):
        flattened(arr, "sparse", 0.0, "rows", out, 0.0)


@pytest.mark.parametrize("out, ends", [("SparseInterval", "right"), ("SparseRunList", "right"),
                                        ("SparseBlockList", "idx")])
def test_a_run_across_two_rows_of_the_first_mode_is_one_run(out, ends):
    """A run from the end of ``a[0]`` into ``a[1]`` is stored as one: on main each ``a[j]`` restarted
    the run bookkeeping, so a SparseRunList or a SparseBlockList stored it as two, and a SparseInterval
    output was refused (two runs)."""
    a = np.zeros((2, 2, 3))
    a[0, 1, 1:], a[1, 0, :2] = 2.0, 2.0
    k = flattened(a, "sparse", 0.0, "rows", out, 0.0)
    assert k().levels[0].arrays()[ends].tolist() == [8]


@pytest.mark.parametrize("out", ["RunList", "SparseRunList"])
def test_a_run_level_of_a_four_mode_flatten_by_columns_and_under_a_dense_row(out):
    b = np.array([[[[1.0, 1.0], [1.0, nan]], [[nan, 2.0], [2.0, 2.0]]],
                  [[[0.0, 0.0], [inf, 0.0]], [[0.0, 0.0], [0.0, -inf]]]])
    for arr in (b, np.full_like(b, nan), np.zeros((2, 2, 0, 2))):
        flattened(arr, "dense", nan, "columns", out, nan)
    for arr in (b, np.ones_like(b)):
        flattened(arr, "sparse", 1.0, "matrix", out, 1.0)


def arrays(shape, fill, seed):
    rng = np.random.default_rng(seed)
    return rng.choice([fill, fill, fill, 1.0, 2.0, 0.0, nan, inf, -inf], size=shape)


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(["RunList", "SparseRunList", "SparseList", "SparseByteMap"]),
       st.sampled_from(list(OPERANDS)), st.sampled_from(["rows", "columns"]),
       st.sampled_from([(2, 1, 1), (2, 2, 3), (3, 1, 2), (2, 2, 1, 2), (1, 3, 2, 2)]),
       st.sampled_from([0.0, 1.0, nan, -inf]), st.sampled_from([0.0, 1.0, nan]), st.integers(0, 99))
@example("RunList", "sparse", "rows", (2, 1, 1), 0.0, 1.0, 0)
@example("RunList", "dense", "columns", (2, 2, 3), -inf, nan, 1)
@example("RunList", "sparse", "rows", (2, 2, 1, 2), nan, 0.0, 2)
@example("RunList", "dense", "rows", (3, 1, 2), 1.0, 1.0, 4)
def test_flattens_by_property(out, operand, flatten, shape, fill, out_fill, seed):
    flattened(arrays(shape, fill, seed), operand, fill, flatten, out, out_fill, None if seed % 2 else "looplets")


def beside(arr, operand, fill, x, xfill, flatten):
    """A sparse vector ``x`` (fill ``xfill``) plus ``arr`` (fill ``fill``) flattened, lowered by the
    looplets into a sparse vector, validated and checked against numpy, the dense oracle and the
    interpreter; the kernel."""
    want_of, build = FLATTENS[flatten]
    with np.errstate(invalid="ignore"):
        want = x + want_of(arr)
    X = xp.asarray(Tensor.from_numpy(x, "sparse_vector", fill=xfill))
    return checked((X + build(xp.asarray(Tensor.from_numpy(arr, OPERANDS[operand](arr.ndim, fill))))).lower(
        "sparse_vector", strategy="looplets"), want)


@pytest.mark.parametrize("operand", list(OPERANDS))
def test_a_sparse_vector_read_through_a_flatten_of_three_modes_is_walked_once(operand):
    """``x + a.reshape(-1)``: ``x`` is read at ``l + (k + j * K) * L``; its cursor is declared once,
    before the loop over ``j``, and each window's seek goes on from the last (on main it was declared
    in each ``j``, each ``j``'s first window searched from the vector's start)."""
    a = np.array([[[1.0, 0.0, nan], [0.0, 0.0, 2.0]], [[0.0, inf, 0.0], [-inf, 0.0, 0.0]]])
    x = np.array([0.0, 3.0, 0.0, 0.0, nan, 0.0, 1.0, 0.0, 0.0, -2.0, 0.0, inf])
    k = beside(a, operand, 0.0, x, 0.0, "rows")
    notes = [s.note for s in k.trace.steps if s.stage == "carry"]
    (outer,) = [n for n in notes if n.startswith("cursors carried across j")]
    assert "A on l" in outer, notes
    src = k.c_source.split("int out_kernel", 1)[1]
    assert src.count("int64_t qA = ") == 1 and src.index("int64_t qA = ") < src.index("for ("), src
    for empty in (np.zeros((2, 0, 3)), np.zeros_like(a)):
        beside(empty, operand, 0.0, np.zeros(empty.size), 0.0, "rows")


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(list(OPERANDS)), st.sampled_from([(2, 1, 1), (2, 2, 3), (3, 1, 2), (2, 2, 1, 2)]),
       st.sampled_from([0.0, 1.0, nan, -inf]), st.sampled_from([0.0, nan]), st.integers(0, 99))
@example("sparse", (2, 2, 3), 0.0, 0.0, 0)
@example("dense", (2, 2, 1, 2), nan, 0.0, 1)
@example("sparse", (3, 1, 2), -inf, nan, 2)
def test_a_sparse_vector_beside_a_flatten_by_property(operand, shape, fill, xfill, seed):
    arr = arrays(shape, fill, seed)
    x = arrays(arr.size, xfill, seed + 1)
    beside(arr, operand, fill, x, xfill, "rows")
