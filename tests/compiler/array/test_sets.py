"""unique_values, unique_counts, unique_inverse and unique_all (compiler.array.sets) against numpy (every
NaN distinct), on dense and sparse operands of fill 0, NaN and 2: the fill counted once per position not
stored, NaN among the stored entries, all-fill and empty arrays (issue 30)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from compiler import Tensor, array as xp
from value_cases import ARRAYS, KINDS, NAN, inputs, operand, same


def check_all(x, a):
    want = np.unique_all(a)
    got = xp.unique_all(x)
    assert got._fields == want._fields
    for g, w in zip(got, want):
        same(g, w)
    # (numpy's unique_values of integers is unsorted since 2.3; the Array API leaves the order open: ours sorts)
    same(xp.unique_values(x), np.unique(a, equal_nan=False))
    counts = xp.unique_counts(x)
    same(counts.values, want.values)
    same(counts.counts, want.counts)
    inverse = xp.unique_inverse(x)
    same(inverse.inverse_indices, want.inverse_indices)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,a,fill", ARRAYS, ids=[n for n, _, _ in ARRAYS])
def test_unique_functions_match_numpy(name, a, fill, kind):
    check_all(operand(a, kind, fill), a)


def test_the_fill_counts_once_per_unstored_position_and_its_index_is_the_first():
    a = np.array([[3.0, 0, 0], [0, 3.0, -1.0]])
    r = xp.unique_all(Tensor.from_numpy(a, "csr"))
    same(r.values, [-1.0, 0.0, 3.0])
    same(r.counts, [1, 3, 2])
    same(r.indices, [5, 1, 0])
    # (a NaN fill: a NaN per unstored position, each its own value)
    n = Tensor.from_numpy(np.array([[1.0, NAN], [NAN, 1.0]]), "coo", fill=NAN)
    same(xp.unique_counts(n).counts, [2, 1, 1])
    same(xp.unique_inverse(n).inverse_indices, [[0, 1], [2, 0]])


def test_unique_of_a_0d_array_has_one_value():
    check_all(np.float64(2.5), np.float64(2.5))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=inputs())
def test_property_unique_all_matches_numpy(case):
    a, x, fill, kind = case
    check_all(x, a)
