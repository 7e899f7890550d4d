"""A step of three or more sparse-list steppers lowered as its last point, the values of the steppers
not needed for the body picked branch-free (compiler/looplets/point_steps.py; issue 31, the cross
erosion's C): one write under the needed steppers' test, not an arm per set of the steppers ending
there. Each kernel against numpy and the IR interpreter."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Format, Tensor
from compiler.levels import Element, SparseList
from compiler.looplets import compile_program, loop_program
from compiler.looplets.point_steps import required_of
from compiler.looplets.program import Literal

WORDS = Format(SparseList(Element(0, dtype="uint64")))
VALUES = st.sampled_from([0, 1, 6, 2 ** 63, 2 ** 64 - 1, 0x00FF00FF00FF00FF])


@loop_program
def masked_union(y, a, b, c, d):
    for i in _:
        y[i] = a[i] & (b[i] | c[i] | (d[i] >> 1))


@loop_program
def two_masks(y, a, b, c, d):
    for i in _:
        y[i] = a[i] & b[i] & (c[i] | d[i])


@loop_program
def or_of_and(y, a, b, c, d):
    for i in _:
        y[i] = (a[i] & b[i] & c[i]) | d[i]


PROGRAMS = {"masked_union": (masked_union, lambda a, b, c, d: a & (b | c | (d >> np.uint64(1)))),
            "two_masks": (two_masks, lambda a, b, c, d: a & b & (c | d)),
            "or_of_and": (or_of_and, lambda a, b, c, d: (a & b & c) | d)}
_KERNELS: dict = {}


def kernel(name):
    if name not in _KERNELS:
        _KERNELS[name] = compile_program(PROGRAMS[name][0], y=WORDS, a=WORDS, b=WORDS, c=WORDS, d=WORDS)
    return _KERNELS[name]


def test_required_of_keeps_the_steppers_whose_fill_alone_does_nothing():
    assert required_of("abc", lambda s: Literal(0) if s == "b" else Literal(1), lambda e: e == Literal(0)) == ["b"]
    assert required_of("abc", lambda s: Literal(1), lambda e: e == Literal(0)) == []


def notes(k):
    return [s.note for s in k.trace.steps if s.stage == "lower:Stepper" and "one point a step" in s.note]


def test_a_masked_union_is_one_write_under_its_masks_test():
    k = kernel("masked_union")
    # the step over all four: a needed, b, c and d picked (on main: 8 arms, 7 else-ifs)
    assert notes(k) and notes(k)[0].startswith("4 stepper(s), while loop, one point a step: 1 needed"), notes(k)
    assert ("y_val[y0_nnz] = a_val[qa] & ((jb + 1 == step_stop ? b_val[qb] : 0) | (jc + 1 == step_stop ? c_val[qc] : 0)"
            " | ((jd + 1 == step_stop ? d_val[qd] : 0) >> 1));") in k.c_source, k.c_source
    # the steps of a and one other keep one arm, each stepper moving on by its test's 0 or 1 after it
    # (no else-if: 6 before, 366 lines; on main before the point steps: 582 lines, 18 else-ifs)
    assert k.c_source.count("else if") == 0 and len(k.c_source.splitlines()) < 340
    k2 = kernel("two_masks")
    assert any("2 needed" in n for n in notes(k2)), notes(k2)
    assert "else if" not in k2.c_source and len(k2.c_source.splitlines()) < 230   # (main: 254 lines, 2)


def test_a_union_of_the_steppers_keeps_its_arms():
    # (a & b & c) | d needs none of the four: a point where all are at their fill may not write;
    # the step of a, b and c past d's last word needs all three
    k = kernel("or_of_and")
    assert [n.split(", one point")[0] for n in notes(k)] == ["3 stepper(s), while loop"], notes(k)
    assert k.c_source.count("else if") == 2


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(sorted(PROGRAMS)), st.integers(0, 9), st.data())
@example("masked_union", 5, None)
@example("two_masks", 5, None)
def test_the_kernels_agree_with_numpy_and_the_interpreter(name, n, data):
    if data is None:   # (d ends after a: a's last word and d's shifted bits; c empty)
        vs = {"a": [0, 3, 0, 7, 0], "b": [1, 0, 0, 1, 0], "c": [0] * 5, "d": [0, 0, 2, 6, 8]}
    else:
        vs = {t: data.draw(st.lists(VALUES, min_size=n, max_size=n), label=t) for t in "abcd"}
    arrays = {t: np.array(v, dtype=np.uint64) for t, v in vs.items()}
    tensors = {t: Tensor.from_numpy(v, WORDS) for t, v in arrays.items()}
    want = PROGRAMS[name][1](*arrays.values())
    k = kernel(name)
    got = k(**tensors)
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    # a point whose picked values give 0 stores nothing
    assert got.nnz == np.count_nonzero(want) and np.all(got.vals != 0)
