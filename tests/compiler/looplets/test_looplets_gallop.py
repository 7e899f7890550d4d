"""The gallop protocol on every level stored as sorted segments: entries (SparseList,
SparseHash's sorted view, SparseByteMap's ``srt``), runs (SparseRunList) and blocks
(SparseBlockList). Each kernel is checked against numpy."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.errors import StrategyError
from compiler.levels import (Dense, Element, RunList, SparseBlockList, SparseByteMap, SparseHash, SparseList,
                             SparseRunList)
from compiler.looplets import compile_program, loop_program

GALLOPING = {"SparseList": SparseList, "SparseHash": SparseHash, "SparseByteMap": SparseByteMap,
             "SparseRunList": SparseRunList, "SparseBlockList": SparseBlockList}
ANY = {**GALLOPING, "Dense": Dense, "RunList": RunList}


@loop_program
def dot_both(s, x, y):
    for i in _:
        s += x[gallop(i)] * y[gallop(i)]


@loop_program
def dot_leader(s, x, y):
    for i in _:
        s += x[gallop(i)] * y[i]


@loop_program
def add_leader(z, x, y):
    for i in _:
        z[i] = x[gallop(i)] + y[i]


def clustered(rng, n, density, fill):
    """A vector with runs and blocks of equal values, so every level has real segments."""
    v = np.full(n, fill)
    i = 0
    while i < n:
        length = int(rng.integers(1, 4))
        if rng.random() < density:
            v[i:i + length] = rng.integers(1, 3) if rng.random() < 0.5 else rng.integers(1, 9, size=len(v[i:i + length]))
        i += length + int(rng.integers(0, 3))
    return v


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(GALLOPING)), st.sampled_from(list(ANY)), st.integers(0, 40),
       st.sampled_from([0.0, 0.1, 0.5, 1.0]), st.sampled_from([0.0, 2.0]), st.integers(0, 2**31 - 1),
       st.booleans())
def test_gallop_matches_numpy(lx, ly, n, density, fill, seed, checked):
    rng = np.random.default_rng(seed)
    x, y = clustered(rng, n, density, fill), clustered(rng, n, density, fill)
    X = Tensor.from_numpy(x, GALLOPING[lx](Element(fill)))
    Y = Tensor.from_numpy(y, ANY[ly](Element(fill)))
    k = compile_program(dot_leader, s=Element(0.0), x=X, y=Y, checked=checked)
    assert float(k(x=X, y=Y)) == pytest.approx(float(x @ y))
    k = compile_program(add_leader, z="dense", x=X, y=Y, checked=checked)
    np.testing.assert_allclose(k(x=X, y=Y).to_numpy(), x + y)
    if ly in GALLOPING:  # two leaders: a mutual lookahead intersection
        k = compile_program(dot_both, s=Element(0.0), x=X, y=Y, checked=checked)
        assert float(k(x=X, y=Y)) == pytest.approx(float(x @ y))


@pytest.mark.parametrize("level", list(GALLOPING))
def test_gallop_is_a_jumper_with_exponential_search(level):
    x = np.zeros(50)
    x[[3, 4, 20, 41]] = [1.0, 1.0, 2.0, 5.0]
    X = Tensor.from_numpy(x, GALLOPING[level](Element(0.0)))
    k = compile_program(dot_both, s=Element(0.0), x=X, y=X)
    assert re.search(r" = seek_int(32|64)\(x0_\w+, ", k.c_source)   # the galloping seek, its helper called
    # (every seek gallops now: the Jumper is what only the protocol lowers)
    assert any(s.stage == "lower:Jumper" for s in k.trace.steps)
    assert float(k(x=X, y=X)) == pytest.approx(float(x @ x))


def test_gallop_on_a_level_without_the_protocol_names_the_levels_that_have_it():
    X = Tensor.from_numpy(np.ones(4), RunList(Element(0.0)))
    with pytest.raises(StrategyError, match=r"tensor x: level 0 \(RunList\) has no gallop protocol; gallop works on "
                                            r"SparseList, SparseHash, SparseByteMap, SparseRunList, SparseBlockList"):
        compile_program(dot_leader, s=Element(0.0), x=X, y=np.ones(4))
