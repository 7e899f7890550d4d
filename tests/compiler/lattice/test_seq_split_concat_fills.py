"""A split of a concatenation whose part has another fill than the result's (issue 30): ``concat([a.reshape(2, 3),
b.reshape(2, 3)]).reshape(2, 2, 3)`` with ``b`` of fill 1 or NaN, lowered by the lattice strategy as one kernel.

Before, such a part (its rows ``π0(q_B, 3) ∪ U_p``, walking every coordinate) was refused under the split and read
converted to a dense level (a ``convert`` step): the loop over a split of the concatenation counted the group of
``π0(q_B, 3)`` as fixed, so where only ``U_p`` was at a row its minor loop walked B's next stored row there; and
the loop's conditional next tested the whole ``π1(|π0(n_A, 3)| + (π0(q_B, 3) ∪ U_p), 2)``, invalid once the row
loop inside had walked B to its end, so ``U_p`` stayed and the next loop wrote its row again. Each kernel (checked)
against numpy, the IR interpreter and the sequence CFIR's interpreter, as one kernel (no retry, materialize or
convert step); the statements against the dense oracle (compiler.evaluate)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from tests.compiler.lattice.test_seq_reshaped_concats import program
from tests.compiler.lattice.test_seq_split_groups import array_kernel, checked_kernel
from tests.compiler.lattice.test_seq_split_of_concat_splits import PROGRAM, vector

nan, inf = np.nan, np.inf

# (each part's shape, the concatenation's shape after the reshape)
SHAPES = [((2, 3), (2, 2, 3)), ((3, 2), (2, 3, 2)), ((4, 3), (2, 4, 3)), ((2, 2, 3), (2, 2, 2, 3)), ((1, 2, 3), (2, 1, 2, 3))]


def parts(shape, fmts, fills, density=0.5, seed=0):
    """The numpy arrays ``a``, ``b`` and them as lazy Arrays: ``b`` holds -inf and NaN, ``a`` inf."""
    r = np.random.default_rng(seed)
    n = int(np.prod(shape))
    out = []
    for fmt, fill, odd in zip(fmts, fills, ((inf,), (-inf, nan))):
        x = np.where(r.random(n) < density, r.choice([1.0, -2.0, 3.5], n), fill)
        if density:
            x[:len(odd)] = odd
        out.append((x.reshape(shape), xp.asarray(Tensor.from_numpy(x, fmt, fill=fill)).reshape(*shape)))
    return out


def test_the_issue_statement():
    a = np.array([2.0, 0, 0, 3, 0, 4])
    b = np.array([1.0, 5, 1, 6, 1, 1])
    v, w = xp.asarray(Tensor.from_numpy(a, "sparse")), xp.asarray(Tensor.from_numpy(b, "coo", fill=1.0))
    k = array_kernel(xp.concat([v.reshape(2, 3), w.reshape(2, 3)]).reshape(2, 2, 3),
                     np.concatenate([a.reshape(2, 3), b.reshape(2, 3)]).reshape(2, 2, 3))
    # (where only the universe is at a row of B's part, the row loop walks no B)
    assert "case π1(|π0(n_A, 3)| + U_p, 2 @ |π0(n_A, 3)| + (π0(q_B, 3) ∪ U_p)):\n      while k <- U_k#q_B\n" in \
        k.trace.find("cfir")[0].after_text


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("fills", [(0.0, 1.0), (0.0, nan), (nan, 0.0), (1.0, 1.0)])
def test_shapes_and_fills(shapes, fills):
    (a, v), (b, w) = parts(shapes[0], ("sparse", "coo"), fills, seed=len(shapes[0]))
    array_kernel(xp.concat([v, w]).reshape(*shapes[1]), np.concatenate([a, b]).reshape(shapes[1]))


@pytest.mark.parametrize("fmts", [("coo", "sparse"), ("sparse", "sparse"), ("dense", "coo"), ("sparse", "dense")])
@pytest.mark.parametrize("density", [0.0, 1.0])
def test_formats_empty_and_all_stored(fmts, density):
    (a, v), (b, w) = parts((2, 3), fmts, (0.0, 1.0), density)
    array_kernel(xp.concat([v, w]).reshape(2, 2, 3), np.concatenate([a, b]).reshape(2, 2, 3))
    (a, v), (b, w) = parts((2, 3), fmts, (nan, 0.0), 0.5 if density else 0.0)
    array_kernel(xp.concat([v, w]).reshape(2, 2, 3), np.concatenate([a, b]).reshape(2, 2, 3))


@pytest.mark.parametrize("fills", [(0.0, 1.0), (0.0, nan)])
def test_statements(fills):
    # (the statements the front end lowers: a split of a concatenation of splits, and of reshapes collapsed back)
    A, B = vector(6, "sparse", 9, fills[0], odd=(inf,)), vector(6, "coo", 10, fills[1], odd=(-inf, nan))
    for R in (1, 2, 3):
        checked_kernel(PROGRAM.format(L=3, N=3, I=2, R=R), A=A, B=B)
    for extents, rows in (((1, 2, 3), 3), ((2, 3), 4), ((2, 2, 2), 2)):
        n = int(np.prod(extents))
        A, B = vector(n, "sparse", 1, fills[0], odd=(nan,)), vector(n, "coo", 2, fills[1], odd=(inf,))
        checked_kernel(program(extents, rows), A=A, B=B)


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(SHAPES), st.sampled_from(["sparse", "coo", "dense"]), st.sampled_from(["sparse", "coo"]),
       st.sampled_from([(0.0, 1.0), (0.0, nan), (1.0, 0.0), (nan, nan)]), st.sampled_from([0.0, 0.5, 1.0]),
       st.integers(0, 99))
@example(((2, 3), (2, 2, 3)), "sparse", "coo", (0.0, 1.0), 0.5, 7)
def test_split_concat_fills_by_property(shapes, fmt_a, fmt_b, fills, density, seed):
    (a, v), (b, w) = parts(shapes[0], (fmt_a, fmt_b), fills, density, seed)
    array_kernel(xp.concat([v, w]).reshape(*shapes[1]), np.concatenate([a, b]).reshape(shapes[1]))
