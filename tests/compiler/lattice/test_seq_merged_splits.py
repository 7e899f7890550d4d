"""A reshape of an hstack of three or more parts (issue 30), lowered by the lattice strategy as two merged loops.

``concat(parts, axis=1).reshape(9, 3)`` splits the ravel of the hstack, a union of one row walk per part
(``(k_A × (n_A + 7)) ∪ (k_B × ((2 + p_B) + 5)) ∪ (k_C × (4 + q_C))``). The loop over the split's major index walked
``π0`` of that union by its lattice, ``2^n - 1`` points, and each point held the lattice of ``π1`` inside: the
code grew as ``4^n`` (five parts: 25,084 lines of C, 13 s to lower). Both loops are now merged
(:meth:`compiler.lattice.seqcfir.Compiler.merged_split`): the loop over ``π0`` at the group of the least
coordinate of the parts left, the loop over ``π1`` at the least one in that group, each part's case tested on
its own row walk. Each kernel (checked) against numpy, the IR interpreter and the sequence CFIR's interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.lattice.seqstmts import While
from tests.compiler.lattice.test_seq_split_groups import array_kernel

nan, inf = np.nan, np.inf
FILLS = (0.0, 1.0, nan, inf, -inf)


def parts_of(widths, fmts, fill, density, seed, rows=3):
    """Numpy matrices of ``fill`` with ``density`` of their entries stored (NaN and ±inf among them), and each as a
    lazy Array of its format."""
    rng = np.random.default_rng(seed)
    arrays = []
    for n in widths:
        vals = rng.choice([1.0, -2.5, 3.0, nan, inf, -inf, 0.0], size=(rows, n))
        arrays.append(np.where(rng.random((rows, n)) < density, vals, fill))
    return arrays, [xp.asarray(Tensor.from_numpy(a, f, fill=fill)) for a, f in zip(arrays, fmts)]


def loops(s) -> list:
    """The CFIR's loops, outermost first."""
    out = [s] if isinstance(s, While) else []
    for x in s.children():
        out += loops(x)
    return out


def merged_kernel(n, fmt="csr"):
    widths = [2] * (n - 1) + [9 - 2 * (n - 1)]
    arrays, parts = parts_of(widths, [fmt] * n, 0.0, 0.5, n)
    return array_kernel(xp.reshape(xp.concat(parts, axis=1), (9, 3)), np.hstack(arrays).reshape(9, 3))


def test_the_split_of_an_hstack_of_n_parts_is_two_merged_loops_whose_code_grows_by_the_part():
    kernels = {n: merged_kernel(n) for n in (3, 4, 5)}
    for n, k in kernels.items():
        cfir = k.trace.find("cfir")[0].after
        assert [(w.seq.k, w.merged) for w in loops(cfir)] == [(0, True), (1, True)], str(cfir)
        rules = [r.rule for step in k.trace.find("lattice") for r in step.after.rewrites]
        assert rules.count("merged-split") == 2, rules
    lines = {n: len(k.c_source.splitlines()) for n, k in kernels.items()}
    # (each part adds its case, its cursors and its step: the same code; the lattices' grew fourfold a part)
    assert lines[5] - lines[4] == lines[4] - lines[3] > 0, lines
    assert lines[5] < 2 * lines[3], lines


def test_a_split_into_three_and_four_axes_merges_every_loop():
    # (18,591 lines of C for three axes before: the loop over the middle axis, π0(π1(U, 12), 2), was a lattice of the
    # parts left in each group, nested in each point of the outer loop's)
    widths = [2, 2, 2, 2]
    arrays, parts = parts_of(widths, ["csr", "coo", "dcsr", "dense"], 0.0, 0.5, 11)
    for shape in [(2, 6, 2), (2, 2, 3, 2)]:
        k = array_kernel(xp.reshape(xp.concat(parts, axis=1), shape), np.hstack(arrays).reshape(shape))
        cfir = k.trace.find("cfir")[0].after
        assert [w.merged for w in loops(cfir)] == [True] * len(shape), str(cfir)
        assert len(k.c_source.splitlines()) < 700


def test_two_parts_keep_their_lattice():
    # (the lattice of two is three loops, no longer than the merged one, and without its tests)
    k = merged_kernel(2)
    assert not any(w.merged for w in loops(k.trace.find("cfir")[0].after))


@pytest.mark.parametrize("axis", [0, 1])
def test_a_sum_over_a_reshaped_hstack_reads_the_parts_in_the_merged_groups(axis):
    arrays, parts = parts_of([2, 3, 1, 3], ["coo", "csr", "dense", "dcsr"], 0.0, 0.6, 7)
    want = np.hstack(arrays).reshape(9, 3).sum(axis=axis)
    k = array_kernel(xp.sum(xp.reshape(xp.concat(parts, axis=1), (9, 3)), axis=axis), want)
    assert any(w.merged for w in loops(k.trace.find("cfir")[0].after))


def test_a_part_of_another_fill_keeps_the_lattice_and_is_right():
    # (its universe is at every coordinate: no merged split; the result is still right)
    arrays, parts = parts_of([3, 3, 3], ["csr", "csr", "csr"], 0.0, 0.5, 3)
    b = np.where(np.random.default_rng(4).random((3, 3)) < 0.5, 2.0, 1.0)
    arrays[1], parts[1] = b, xp.asarray(Tensor.from_numpy(b, "csr", fill=1.0))
    array_kernel(xp.reshape(xp.concat(parts, axis=1), (9, 3)), np.hstack(arrays).reshape(9, 3))


@st.composite
def reshaped_hstacks(draw):
    """(rows, widths, formats, fill, density, shape, output format)."""
    n = draw(st.integers(3, 5))
    rows = draw(st.integers(0, 4))
    widths = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    size = rows * sum(widths)
    major = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0] or [1]))
    shape = (major, size // major) if size else (rows, 0)
    if size and draw(st.booleans()):     # (a split of the minor axis too: three axes)
        rest = size // major
        middle = draw(st.sampled_from([d for d in range(1, rest + 1) if rest % d == 0]))
        shape = (major, middle, rest // middle)
    return (rows, widths, draw(st.lists(st.sampled_from(["csr", "coo", "dense", "dcsr"]), min_size=n, max_size=n)),
            draw(st.sampled_from(FILLS)), draw(st.sampled_from([0.0, 0.5, 1.0])), shape,
            draw(st.sampled_from([None, "csr", "coo"])))


@settings(max_examples=12, deadline=None)
@given(reshaped_hstacks(), st.integers(0, 2 ** 32 - 1))
@example((3, [2, 2, 5], ["csr", "csr", "csr"], 0.0, 0.5, (9, 3), None), 0)            # the case
@example((2, [3, 0, 2, 1], ["coo", "csr", "dense", "dcsr"], nan, 0.5, (4, 3), "coo"), 1)   # an empty part
@example((3, [1, 2, 3], ["csr", "coo", "csr"], -inf, 0.0, (2, 9), "csr"), 2)           # nothing stored
@example((2, [2, 2, 2, 2, 2], ["coo", "coo", "csr", "coo", "csr"], 1.0, 1.0, (5, 4), None), 3)   # all stored
@example((3, [3, 3, 1, 1], ["dcsr", "csr", "coo", "dense"], nan, 0.5, (2, 6, 2), None), 4)   # three axes
# (fuzz-found: the last part, COO, done before the others, left π0(((m_A ⊔ n_B) ⊔ p_C) + |q_D|, 2), whose group
# straddling the empty parts was refused: only a concatenation directly under the split could straddle)
@example((2, [0, 1, 0, 3], ["csr", "csr", "csr", "coo"], 0.0, 0.5, (2, 2, 2), None), 1)
def test_reshaped_hstacks_by_property(case, seed):
    rows, widths, fmts, fill, density, shape, out = case
    arrays, parts = parts_of(widths, fmts, fill, density, seed, rows)
    want = np.hstack(arrays).reshape(shape)
    out = out if len(shape) == 2 else None if out is None else "coo"    # (a CSR is a matrix)
    k = array_kernel(xp.reshape(xp.concat(parts, axis=1), shape), want, out)
    if out is not None:
        assert k.formats[k.program.lhs.tensor].shorthand == out
