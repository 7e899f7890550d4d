"""Walks merged at every level of a nest (compiler.looplets.merged_walks, issue 30): nested ``where``s over
3-D operands of COO, CSF and dense formats and different fills. A merged walk's child where it does not
end at a step is an absent fiber, so a step of k walks is one case where a Switch per walk lowered 2^k
of them, again at each level below: issue 30's r7 stopped after 20,000 looplet lowerings. Checked by
numpy (NaN-aware), the compiled kernel and the IR interpreter; structure by the loops and lines of C."""

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.looplets.errors import ProgramError
from tests.compiler.lattice.test_cfir_nonfinite_products import stored

nan, inf = np.nan, np.inf
FILLS = [0.0, 1.0, nan, inf]


def r7_operands(shape, formats, seed=0, density=0.4):
    """Eight 3-D operands, fills 0, 1, NaN, inf in turn, formats ``formats`` in turn, storing NaN, +-inf,
    -0.0 and their fills among their values (the tensors and their dense arrays)."""
    rng = np.random.default_rng(seed)
    tensors, arrays = [], []
    for k in range(8):
        fill = FILLS[k % 4]
        mask = rng.random(shape) < density
        values = rng.choice([-1.0, 2.0, -0.0, nan, inf, -inf, fill], size=shape)
        t = stored(values, mask, formats[k % len(formats)], fill)
        tensors.append(t)
        arrays.append(t.to_numpy())
    return tensors, arrays


def nest(ops, where, levels):
    """r7's expression: ``where(a > b, e, where(c != e, d, f))``, nested ``levels`` times."""
    e = ops[0]
    for lvl in range(levels):
        a, b, c, d, f = (ops[(2 * lvl + n) % 8] for n in range(1, 6))
        e = where(a > b, e, where(c != e, d, f))
    return e


def check(tensors, arrays, levels):
    """The nest lowered by the looplets, its result by the kernel and the IR interpreter against numpy's."""
    expr = nest([xp.asarray(t) for t in tensors], xp.where, levels)
    with np.errstate(all="ignore"):
        want = nest(arrays, np.where, levels)
        k = ss.lower(expr, strategy="looplets")
        np.testing.assert_array_equal(np.asarray(expr.compute(strategy="looplets")), want)
        np.testing.assert_array_equal(k.interpret().to_numpy(), want)
    return k


def merges(k) -> list:
    return [s.note for s in k.trace.steps if s.stage == "lower:Sequence" and "walks merged" in (s.note or "")]


def loops(k) -> int:
    return k.c_source.count("while (") + k.c_source.count("for (")


def lines(k) -> int:
    return len(k.c_source.splitlines())


@pytest.mark.parametrize("levels", [1, 2, 3])
def test_issue_30_r7_over_coo_csf_and_dense(levels):
    # (main: "stopped after 20000 looplet lowerings (the last over j)" for N = 1 and 2; the lattice's C is
    # 19,890 lines for N = 1)
    k = check(*r7_operands((3, 2, 4), ["coo", "csf", "dense", "coo"], seed=levels), levels)
    assert merges(k) and lines(k) < 800 and loops(k) <= 30, (lines(k), loops(k))


@pytest.mark.parametrize("formats", [["coo"], ["csf"], ["csf", "coo"], ["coo", "dense", "csf", "coo", "csf", "dense"]])
def test_nests_of_two_levels_over_format_mixes(formats):
    k = check(*r7_operands((2, 3, 3), formats, seed=len(formats)), 2)
    assert merges(k) and lines(k) < 800 and loops(k) <= 30, (lines(k), loops(k))


def test_merged_walks_at_each_of_three_levels():
    # (all CSF: a merged loop over i, over j inside it and over k inside that; the children of walks that do
    # not end at a step are absent, read as empty fibers: no loop per case)
    k = check(*r7_operands((4, 3, 2), ["csf"], seed=5), 1)
    notes = merges(k)
    assert {re.search(r" on (\w+) over ", n).group(1) for n in notes} == {"i", "j", "k"}, notes
    assert loops(k) <= 8, loops(k)


def test_walks_of_fibers_beside_dense_operands_merge_from_three():
    # (three CSF walks beside three dense operands: the product of their phases at each level was
    # 17,056 lines of C)
    k = check(*r7_operands((3, 2, 4), ["dense", "csf"], seed=2), 1)
    assert merges(k) and lines(k) < 2500, lines(k)


def test_empty_and_all_fill_operands():
    shape = (2, 2, 3)
    tensors, arrays = r7_operands(shape, ["coo", "csf"], seed=3)
    for k in (0, 3):   # (empty)
        tensors[k] = stored(np.zeros(shape), np.zeros(shape, bool), "coo" if k % 2 == 0 else "csf", FILLS[k % 4])
    for k in (1, 4):   # (every entry stored, some of them the fill)
        t = stored(np.full(shape, FILLS[k % 4]), np.ones(shape, bool), "csf" if k % 2 else "coo", FILLS[k % 4])
        tensors[k] = t
    arrays = [t.to_numpy() for t in tensors]
    check(tensors, arrays, 2)


FORMATS = st.lists(st.sampled_from(["coo", "csf", "dense"]), min_size=2, max_size=6)


@settings(max_examples=8, deadline=None)
@given(FORMATS, st.tuples(*[st.integers(1, 4)] * 3), st.integers(0, 2 ** 16), st.sampled_from([0.0, 0.3, 1.0]),
       st.integers(1, 2))
@example(["coo", "csf", "dense", "coo"], (1, 1, 1), 0, 1.0, 1)
def test_nests_by_every_oracle(formats, shape, seed, density, levels):
    # (shapes of one to four a mode, operands empty, half stored or all stored)
    tensors, arrays = r7_operands(shape, formats, seed=seed, density=density)
    check(tensors, arrays, levels)


def test_a_nest_past_the_looplet_limit_names_its_operands_and_the_lattice():
    tensors, _ = r7_operands((2, 2, 2), ["coo", "csf"], seed=4)
    named = {f"t{k}": t for k, t in enumerate(tensors[:6])}
    prog = "y[i, j, k] = t1[i, j, k] * t2[i, j, k] + t3[i, j, k] * t4[i, j, k] + t5[i, j, k]"
    with pytest.raises(ProgramError) as e:
        ss.lower(prog, strategy="looplets", options={"max_looplets": 30}, **named)
    assert "reading t1, t2, t3, t4, t5)" in str(e.value) and "strategy='lattice'" in str(e.value), str(e.value)
