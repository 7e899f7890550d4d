"""roll, tile and repeat (compiler.array.derived): shape operators made of others, each one kernel with
what surrounds it, nothing materialized (a concatenation of two slices; a ravel of a broadcast), against
numpy on CSR, COO and dense mixes, by both strategies where the sequence algebra allows (issue 30)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.errors import ShapeError, UsageError
from array_cases import check, make

NAN = np.nan
A = np.array([[0.0, 1.5, 0.0, -2.0], [NAN, 0.0, 3.0, 0.0], [0.0, -1.0, 0.0, 0.5]])
V = np.array([0.0, 2.0, 0.0, NAN, 1.0])


def materialized(array, strategy=None) -> list:
    return [s.note for s in array.lower(strategy=strategy).trace.find("materialize")]


CASES = {
    "roll": (lambda a: xp.roll(a, 2), lambda a: np.roll(a, 2)),
    "roll_axis": (lambda a: xp.roll(a, -5, axis=-1), lambda a: np.roll(a, -5, axis=-1)),
    "roll_axes": (lambda a: xp.roll(a, (1, 7), axis=(0, 0)), lambda a: np.roll(a, (1, 7), axis=(0, 0))),
    "tile": (lambda a: xp.tile(a, 2), lambda a: np.tile(a, 2)),
    "tile_lead": (lambda a: xp.tile(a, (2, 1, 2)), lambda a: np.tile(a, (2, 1, 2))),
    "repeat": (lambda a: xp.repeat(a, 2), lambda a: np.repeat(a, 2)),
    "repeat_axis": (lambda a: xp.repeat(a, 3, axis=0), lambda a: np.repeat(a, 3, axis=0)),
}


@pytest.mark.parametrize("kind", ["numpy", "csr", "coo"])
@pytest.mark.parametrize("name", list(CASES))
def test_shape_functions_match_numpy_in_one_kernel(name, kind):
    ours, theirs = CASES[name]
    for values in (A, V) if kind != "coo" else (A,):   # (a 1-D COO's slices are concatenated apart: below)
        expr = ours(xp.asarray(make(values, kind)))
        assert materialized(expr) == [], name
        check(expr, theirs(values))


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_tile_and_repeat_of_a_csr_by_both_strategies(strategy):
    a, v = xp.asarray(make(A, "csr")), xp.asarray(make(V, "csr"))
    cases = [(xp.tile(a, (2, 2)), np.tile(A, (2, 2))), (xp.repeat(a, 2, axis=1), np.repeat(A, 2, axis=1)),
             (xp.roll(v, -3) + xp.tile(v, 1), np.roll(V, -3) + V),
             # (a part of one row: looplets computed it apart, a one-step loop writing CSR rows before another)
             (xp.roll(a, 1, axis=0) + xp.asarray(make(A, "coo")), np.roll(A, 1, axis=0) + A)]
    for expr, want in cases:
        assert materialized(expr, strategy) == []
        check(expr, want, strategy=strategy)


@pytest.mark.parametrize("axis, shift", [(0, 1), (0, -1), (0, 2), (1, 1), (1, -3)])
def test_roll_of_a_csr_is_one_looplets_kernel_for_any_shift(axis, shift):
    # (issue 29: a part of one row or column, a one-step loop, was computed apart under looplets
    # when it wrote whole rows of the CSR before the other part's: roll(A, 1, axis=0))
    a = xp.asarray(make(A, "csr"))
    expr = xp.roll(a, shift, axis=axis)
    assert materialized(expr, "looplets") == []
    assert check(expr, np.roll(A, shift, axis=axis), strategy="looplets").format.shorthand == "csr"


def test_tile_of_a_vector_into_rows_is_one_kernel_in_either_strategy():
    # (the lattice refuses a broadcast restarting a split's minor index, so the kernel is looplets'; the
    # lattice's own kernel read each group once: the second copy of the row was missing)
    v = xp.asarray(Tensor.from_numpy(np.array([0.0, 0.0, NAN]), "dense"))
    rows = xp.reshape(xp.broadcast_to(xp.reshape(v, (1, 3))[:, None, :], (1, 2, 3)), (1, 6))
    check(rows, np.tile(np.array([0.0, 0.0, NAN]), (1, 2)))
    assert materialized(rows) == []
    check(rows, np.tile(np.array([0.0, 0.0, NAN]), (1, 2)), strategy="lattice")   # (materialized, right)


def test_errors_say_what_is_wrong():
    with pytest.raises(ShapeError, match="tile: reps \\(2, -1\\) has a negative count"):
        xp.tile(V, (2, -1))
    with pytest.raises(ShapeError, match="repeat: repeats -1 is negative"):
        xp.repeat(V, -1)
    with pytest.raises(UsageError, match="roll: shift must be an int, not 1.5"):
        xp.roll(V, 1.5)
    with pytest.raises(ShapeError, match="roll: 2 shifts and 3 axes do not broadcast"):
        xp.roll(np.zeros((2, 2, 2)), (1, 2), axis=(0, 1, 2))
    with pytest.raises(ShapeError, match="roll: axis 2 is out of range"):
        xp.roll(A, 1, axis=2)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
@example(data=None)
def test_property_roll_tile_repeat_match_numpy(data):
    if data is None:   # (an all-NaN COO of fill NaN rolled by more than its extent, then tiled)
        shape, vals, fill, kind, shift, axis, reps, r = (2, 3), [NAN] * 6, NAN, "coo", -7, 1, (1, 2), 2
    else:
        shape = tuple(data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=2)))
        fill = data.draw(st.sampled_from([0.0, NAN]))
        size = int(np.prod(shape))
        vals = data.draw(st.lists(st.sampled_from([fill, 1.0, -2.0, NAN]), min_size=size, max_size=size))
        kind = data.draw(st.sampled_from(["numpy", "csr", "coo"] if len(shape) == 2 else ["numpy", "csr"]))
        shift = data.draw(st.integers(-7, 7))
        axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
        reps = tuple(data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=3)))
        r = data.draw(st.integers(0, 3))
    a = np.array(vals, dtype=float).reshape(shape)
    x = xp.asarray(make(a, kind, fill=None if kind == "numpy" else fill))
    for ours, want in ((xp.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis)),
                       (xp.tile(x, reps), np.tile(a, reps)),
                       (xp.repeat(x, r, axis=axis), np.repeat(a, r, axis=axis))):
        assert materialized(ours) == []
        check(ours, want)


def test_a_dense_matrix_rolled_as_its_ravel_plus_one_is_right_by_either_strategy():
    # (its rows straddle the two slices of the ravel: the lattice's kernel for the split in a union with
    # `+ 1` dropped the second slice's part of the straddling row; it refuses it now, and it is materialized)
    b = np.nan_to_num(A)
    expr = xp.roll(xp.asarray(b), 2) + 1
    check(expr, np.roll(b, 2) + 1)
    check(expr, np.roll(b, 2) + 1, strategy="lattice")


def test_unstack_signbit_and_bitwise_invert_match_numpy():
    a = xp.asarray(make(A, "csr"))
    for axis in (0, -1):
        parts = xp.unstack(a, axis=axis)
        assert len(parts) == A.shape[axis] and materialized(parts[1]) == []
        check(parts[1], np.take(A, 1, axis=axis))
    f = np.array([-0.0, 0.0, -NAN, NAN, -np.inf, 2.5])
    check(xp.signbit(f), np.signbit(f))   # (dense: a CSR of fill 0 stores no -0.0)
    check(xp.signbit(xp.asarray(make(f, "csr"))), np.signbit(make(f, "csr").to_numpy()))
    i = np.array([-3, 0, 5], dtype=np.int32)
    check(xp.signbit(i), np.signbit(i))
    check(xp.bitwise_invert(i), np.bitwise_invert(i))
    check(xp.bitwise_invert(np.array([True, False])), np.array([False, True]))
    assert (xp.e, xp.pi, xp.inf, xp.newaxis) == (np.e, np.pi, np.inf, None) and np.isnan(xp.nan)
