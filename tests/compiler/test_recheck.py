"""The C check of shared index arrays (compiler/recheck.py) says what Tensor.validate says: each
level's ``pos`` and coordinates, written in place after the tensor was built, are refused exactly
where validation refuses them (its flat, vectorized order test counts the drops of the whole array
and forgives those where a fiber starts)."""

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from compiler import Tensor
from compiler.errors import FormatError
from compiler.levels import Dense, Element, SparseCOO, SparseList
from compiler.recheck import checker


def _validates(t) -> bool:
    try:
        t.validate()
    except FormatError:
        return False
    return True


def _csr(mask, itype):
    rows, cols = np.nonzero(mask)
    pos = np.zeros(mask.shape[0] + 1, dtype=itype)
    np.add.at(pos, rows + 1, 1)
    pos = np.cumsum(pos).astype(itype)
    idx = cols.astype(itype)
    vals = np.arange(1.0, len(idx) + 1)
    t = Tensor(Dense(SparseList(Element(0.0, vals), mask.shape[1], pos, idx, itype), mask.shape[0]))
    return t, pos, idx


def _coo(mask, itype):
    rows, cols = np.nonzero(mask)
    row, col = rows.astype(itype), cols.astype(itype)
    vals = np.arange(1.0, len(row) + 1)
    t = Tensor(SparseCOO(2, Element(0.0, vals), mask.shape, np.array([0, len(row)], dtype=itype), (row, col), itype),
               shape=mask.shape)
    return t, row, col


@st.composite
def _writes(draw, n):
    """Up to three writes ``(array, position, value)`` in place: a coordinate out of range or
    negative, one moved to its neighbour's (a repeat or a drop), a ``pos`` entry moved."""
    return draw(st.lists(st.tuples(st.sampled_from([0, 1]), st.integers(0, 40), st.integers(-2, n + 2)),
                         max_size=3))


@settings(max_examples=75, deadline=None)
@given(st.integers(0, 6), st.integers(1, 6), st.sampled_from(["int32", "int64"]), st.integers(0, 2**32 - 1),
       st.data())
# a drop at a fiber's start is allowed; empty fibers share that start (counted once)
@example(3, 3, "int32", 5, None)
def test_the_c_check_of_a_csr_says_what_validation_says(m, n, itype, seed, data):
    mask = np.random.default_rng(seed).random((m, n)) < 0.5
    t, pos, idx = _csr(mask, np.dtype(itype))
    check = checker(t)
    assert check() is not None            # (well formed as built)
    writes = data.draw(_writes(n)) if data is not None else [(1, 2, 0), (1, 3, 0)]
    for which, at, value in writes:
        a = pos if which == 0 else idx
        if len(a):
            a[at % len(a)] = value
    if pos[0] != 0 or (np.diff(pos) < 0).any() or pos[-1] != len(idx):
        return   # (pos broken: the check and validation refuse it, tested below without values to index)
    assert (check() is not None) == _validates(t), (pos.tolist(), idx.tolist())


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.sampled_from(["int32", "int64"]), st.integers(0, 2**32 - 1),
       st.lists(st.tuples(st.sampled_from([0, 1]), st.integers(0, 40), st.integers(-1, 6)), max_size=3))
@example(2, 3, "int64", 7, [(1, 1, 0)])          # a repeated pair: (0, 0) after (0, 0)
def test_the_c_check_of_a_coo_says_what_validation_says(m, n, itype, seed, writes):
    mask = np.random.default_rng(seed).random((m, n)) < 0.6
    t, row, col = _coo(mask, np.dtype(itype))
    check = checker(t)
    assert check() is not None
    for which, at, value in writes:
        a = row if which == 0 else col
        if len(a):
            a[at % len(a)] = value
    assert (check() is not None) == _validates(t), (row.tolist(), col.tolist())


@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_each_broken_rule_is_refused(itype):
    mask = np.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 0]], dtype=bool)
    cases = {
        "idx past the extent": lambda pos, idx: idx.__setitem__(0, 4),
        "idx negative": lambda pos, idx: idx.__setitem__(4, -1),
        "idx repeated within a row": lambda pos, idx: idx.__setitem__(2, 2),
        "idx falling within a row": lambda pos, idx: idx.__setitem__(1, 3),
        "pos decreasing": lambda pos, idx: pos.__setitem__(1, 4),
        "pos[0] not 0": lambda pos, idx: pos.__setitem__(0, 1),
    }
    for name, write in cases.items():
        t, pos, idx = _csr(mask, np.dtype(itype))
        check = checker(t)
        assert check() is not None, name
        write(pos, idx)
        assert check() is None, name
        assert not _validates(t), name
    # rows falling from one to the next, and empty rows between: allowed
    t, pos, idx = _csr(np.array([[0, 0, 1], [0, 0, 0], [0, 0, 0], [1, 0, 0]], dtype=bool), np.dtype(itype))
    assert checker(t)() is not None and _validates(t)


def test_a_coordinate_past_the_index_types_range_is_refused_where_the_extent_is_wider():
    # (an int32 level of extent 2^32: every non-negative int32 fits, a negative one is refused)
    pos, idx = np.array([0, 2], dtype=np.int32), np.array([3, 2**31 - 1], dtype=np.int32)
    t = Tensor(Dense(SparseList(Element(0.0, np.ones(2)), 2**32, pos, idx, np.dtype("int32")), 1))
    check = checker(t)
    assert check() is not None
    idx[0] = -5
    assert check() is None and not _validates(t)


def test_arrays_shorter_than_their_levels_say_are_not_read_past_their_ends():
    # (a tensor built unchecked whose values array ends early, or whose keys or positions are short: the C
    # function read the missing entries past the arrays' ends, and what it found there decided whether the
    # tensor was taken, which failed a suite run by chance; now validate names the array at fault)
    from compiler.recheck import check_again
    short_vals = Tensor(Dense(SparseList(Element(0.0, vals=np.array([2.0, 0.0])), pos=np.array([0, 3, 4, 6]),
                                         idx=np.array([0, 1, 2, 1, 0, 2]), size=3), size=3), check=False)
    short_pos = Tensor(Dense(SparseList(Element(0.0, vals=np.ones(6)), pos=np.array([0, 3]),
                                        idx=np.array([0, 1, 2, 1, 0, 2]), size=3), size=3), check=False)
    short_key = Tensor(SparseCOO(2, Element(0.0, np.ones(3)), (3, 3), np.array([0, 3]),
                                 (np.array([0, 1, 2]), np.array([0, 1])), "int64"), check=False)
    dense = Tensor(Dense(Element(0.0, vals=np.array([1.0, 0.0])), size=6), check=False)
    for t in (short_vals, short_pos, short_key, dense):
        assert checker(t) is None
        with pytest.raises(FormatError):
            check_again(t, "M")
