"""A cursor carried down a block list's or a run list's fiber (compiler.looplets.carried, the steppers'
``Descent`` in compiler.looplets.levels): a slice with a negative step reads descending windows, and each
window's seek gallops down the blocks' or runs' ends from where the last one stopped. On main only a
SparseList's stepper said how to seek down: these levels searched each window from the fiber's start
(``x[::-1]`` of a RunList of 10^6 coordinates: 136 ms, 4-19 ms carried). A band and an interval hold no
stepper (random access, one run): carried on main already. The forward seek of each is a gallop from the
cursor (a band's a lookup).

Vectors and matrices' rows of each level, steps -1, -2, -5 (and forward ones), fills 0, 1 and NaN with NaN
and ±inf stored, empty and all-fill operands; every kernel against numpy, the dense oracle and the IR
interpreter. (A loop program's descending windows over these levels: test_shape_carried.)"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.format import Format
from compiler.imperative.ir import For, Load
from compiler.imperative.traverse import walk
from compiler.levels import Dense, Element, RunList, SparseBand, SparseBlockList, SparseInterval, SparseRunList
from compiler.reference import evaluate
from tests.compiler.looplets.slice_cases import bounds

nan, inf = np.nan, np.inf

#: the levels whose looplets step over blocks or runs, and the array of their ends a seek gallops over
STEPPED = {SparseBlockList: "idx", RunList: "right", SparseRunList: "right"}
LEVELS = list(STEPPED) + [SparseBand, SparseInterval]


def vector_of(v, level, fill):
    return ss.Tensor.from_numpy(v, Format(level(Element(fill))))


def runs(n, seed, fill, odd=(), level=RunList):
    """A vector of ``n`` in runs of a few values (one run of one value, for an interval; a stretch of values
    for a band), ``odd`` stored first in it."""
    rng = np.random.default_rng(seed)
    v = np.full(n, fill)
    if n == 0:
        return v
    lo, hi = sorted(int(x) for x in rng.integers(0, n + 1, 2))
    hi = max(hi, lo + 1) if lo < n else hi
    if level is SparseInterval:
        x = odd[0] if odd else 2.5
        v[lo:lo + 1 if np.isnan(x) else hi] = x
        return v
    if level is SparseBand:
        v[lo:hi] = rng.choice([1.0, -2.0, 3.5], hi - lo)
    else:
        cuts = sorted(int(c) for c in rng.integers(0, n + 1, 4))
        for s, e, x in zip([0] + cuts, cuts + [n], rng.choice([fill, 1.0, -2.0, fill, 3.5], 5)):
            v[s:e] = x
    k = min(len(odd), max(hi - lo, 0))
    v[lo:lo + k] = odd[:k]
    return v


def check(program, out, want, **tensors):
    """The looplets kernel of ``program`` against ``want`` (numpy's), the oracle's and the interpreter's."""
    with np.errstate(invalid="ignore"):
        oracle, fill = evaluate(program, **tensors)
    np.testing.assert_array_equal(oracle, want)
    name = program.split("[")[0].strip()
    k = ss.lower(program, "looplets", **tensors, **{name: ss.parse_format(out, ndim=want.ndim, fill=fill.item())})
    np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    return k


def sliced(v, level, fill, start, stop, step):
    """``v[start:stop:step]`` (python's) of ``v`` stored in ``level``, lowered by the looplets and checked."""
    lo, hi = bounds(len(v), step, start, stop)
    return check(f"s[k] = slice(a[j], j -> k, ({lo}, {hi}, {step}))", "sparse", v[start:stop:step],
                 a=vector_of(v, level, fill))


def carried_down(k) -> bool:
    return any(s.stage == "carry" and "(down)" in s.note for s in k.trace.steps)


@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_a_reversed_slice_carries_the_cursor_down(level):
    v = runs(40, 1, 0.0, (nan, inf), level)
    for start, stop, step in [(None, None, -1), (30, 3, -2), (37, None, -5), (12, 11, -1)]:
        k = sliced(v, level, 0.0, start, stop, step)
        assert carried_down(k), [s.note for s in k.trace.steps if s.stage == "carry"]
        # (the element loop declares no cursor of its own: it reads no a0_pos)
        rows = next(n for n in walk(k.function.body) if isinstance(n, For))
        assert not any(isinstance(n, Load) and n.buffer == "a0_pos" for n in walk(rows)), k.c_source
        if level in STEPPED:
            assert f"ra = seek_back_int64(a0_{STEPPED[level]}, ra - 1, ra_lo - 1, " in k.c_source, k.c_source


@pytest.mark.parametrize("level", list(STEPPED), ids=lambda L: L.__name__)
def test_a_forward_seek_gallops_over_the_ends(level):
    v = runs(40, 2, 0.0, (), level)
    k = sliced(v, level, 0.0, 5, None, 7)
    assert f"ra = seek_int64(a0_{STEPPED[level]}, ra, ra_stop, " in k.c_source, k.c_source


@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
@pytest.mark.parametrize("fill, odd", [(1.0, (-inf,)), (nan, (inf, nan))])
def test_fills_and_odd_values(level, fill, odd):
    v = runs(17, 3, fill, odd, level)
    for start, stop, step in [(None, None, -1), (15, 2, -5), (4, None, 2)]:
        sliced(v, level, fill, start, stop, step)


@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_empty_and_all_fill_vectors(level):
    for v, fill in [(np.zeros(9), 0.0), (np.full(9, 2.0), 0.0), (np.full(9, nan), nan), (np.zeros(0), 0.0)]:
        sliced(v, level, fill, None, None, -2)


@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_the_rows_of_a_matrix_reversed(level):
    """Each row's cursor is carried down its own fiber (declared in the loop over the rows)."""
    a = np.stack([runs(11, s, 0.0, (nan,) if s == 1 else (), level) for s in range(4)])
    A = xp.asarray(ss.Tensor.from_numpy(a, Format(Dense(level(Element(0.0))))))
    for op in (lambda x: x[:, ::-1], lambda x: x[::-1, 9:1:-2]):
        k = op(A).lower(None, strategy="looplets")
        np.testing.assert_array_equal(k().to_numpy(), op(a))
        np.testing.assert_array_equal(evaluate(k.program, **k.arguments)[0], op(a))
        np.testing.assert_array_equal(k.interpret().to_numpy(), op(a))
        assert carried_down(k), [s.note for s in k.trace.steps if s.stage == "carry"]


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(LEVELS), st.integers(0, 14), st.integers(0, 99), st.sampled_from([0.0, 1.0, nan]),
       st.sampled_from([(), (nan,), (inf, -inf)]), st.sampled_from([-5, -2, -1, 1, 2, 5]), st.data())
@example(SparseRunList, 9, 4, nan, (inf,), -2, None)
def test_slices_by_property(level, n, seed, fill, odd, step, data):
    v = runs(n, seed, fill, odd, level)
    start, stop = (None, None) if data is None else (data.draw(st.one_of(st.none(), st.integers(0, n))),
                                                      data.draw(st.one_of(st.none(), st.integers(0, n))))
    sliced(v, level, fill, start, stop, step)
