"""A split of a concatenation of splits, ``split(concat(split A, split B), k -> (p, r))`` (the array front end's
``concat([a.reshape(2, 2), b.reshape(2, 2)]).reshape(2, 2, 2)``), lowered by the lattice strategy.

Before, the loop over ``p ∈ π0(π0(m_A) ⊔ π0(q_B), J)`` took B's group as bound although it walks A's part only
(B's is the loop after it), so the minor loop inside was ``π1(m_A) ∪ π1(q_B)``: B's rows were added into A's, and
the loop after found B walked to its end. Each kernel against the dense oracle (compiler.evaluate), the sequence
CFIR's interpreter and the IR interpreter (one_kernel); the array front end's against numpy."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from tests.compiler.lattice.test_seq_concat_fills import one_kernel

nan, inf = np.nan, np.inf

PROGRAM = ("c[p, r, i] = split(concat((split(A[m], m -> (l:{L}, i:{I})), split(B[q], q -> (n:{N}, i:{I}))), "
           "(l, n) -> k), k -> (p, r:{R}))")


def vector(n, fmt, seed, fill=0.0, density=0.5, odd=()):
    """A vector Tensor of ``n`` entries in ``fmt`` and ``fill``, ``odd`` values stored first."""
    r = np.random.default_rng(seed)
    a = np.where(r.random(n) < density, r.choice([1.0, -2.0, 3.5], n), fill)
    a[:len(odd)] = odd[:n]
    return Tensor.from_numpy(a, fmt, fill=fill)


def test_the_first_part_walks_its_own_rows_only():
    # (the repro: B's rows were added into A's, and B's own groups wrote nothing)
    program = PROGRAM.format(L=2, N=2, I=2, R=2)
    A = Tensor.from_numpy(np.array([1.0, 0.0, 2.0, 3.0]), "sparse")
    B = Tensor.from_numpy(np.array([0.0, 4.0, 5.0, 0.0]), "sparse")
    k, got = one_kernel(program, A=A, B=B)
    np.testing.assert_array_equal(got.to_numpy(), [[[1, 0], [2, 3]], [[0, 4], [5, 0]]])
    first = k.trace.find("cfir")[0].after_text.split("while p <- π0(|")[0]
    assert "π1(q_B, 2)" not in first and "while i <- π1(m_A, 2)\n" in first


@pytest.mark.parametrize("fmts", [("sparse", "sparse"), ("dense", "sparse"), ("coo", "dense"), ("coo", "coo")])
@pytest.mark.parametrize("L, N, I, R", [(2, 2, 2, 2), (3, 1, 2, 2), (1, 2, 3, 3), (3, 3, 1, 2), (2, 1, 2, 1)])
def test_groups_straddling_the_parts_or_not(L, N, I, R, fmts):
    # (L % R: a group of r straddles A's end, visited by each part's loop)
    A = vector(L * I, fmts[0], L + R, odd=(nan,))
    B = vector(N * I, fmts[1], N + I, odd=(inf, -inf))
    one_kernel(PROGRAM.format(L=L, N=N, I=I, R=R), A=A, B=B)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("fmts", [("sparse", "coo"), ("dense", "sparse")])
def test_fills_with_nan_and_infinities_stored(fmts, fill):
    A = vector(6, fmts[0], 1, fill, odd=(nan, -inf))
    B = vector(4, fmts[1], 2, fill, odd=(inf,))
    one_kernel(PROGRAM.format(L=3, N=2, I=2, R=5), A=A, B=B)
    one_kernel(PROGRAM.format(L=3, N=2, I=2, R=1), A=A, B=B)


@pytest.mark.parametrize("empty", ["A", "B", "both"])
def test_a_part_storing_nothing(empty):
    A = vector(4, "sparse", 3, density=0.0 if empty in ("A", "both") else 1.0)
    B = vector(4, "coo", 4, density=0.0 if empty in ("B", "both") else 1.0)
    one_kernel(PROGRAM.format(L=2, N=2, I=2, R=2), A=A, B=B)
    one_kernel(PROGRAM.format(L=2, N=2, I=2, R=4), A=A, B=B)


@pytest.mark.parametrize("fills", [(0.0, 1.0), (1.0, nan), (nan, 0.0)])
def test_a_part_of_another_fill_is_walked_as_stored(fills):
    # (such a part's rows walk every coordinate, π0(q_B) ∪ U_n: it was read converted to a dense level, its loops
    # having written its stored groups at the rows of the universe only; one kernel now,
    # tests/compiler/lattice/test_seq_split_concat_fills.py)
    A, B = vector(6, "sparse", 9, fills[0], odd=(inf,)), vector(6, "sparse", 10, fills[1], odd=(-inf,))
    for R in (1, 2, 3):
        k, _ = one_kernel(PROGRAM.format(L=3, N=3, I=2, R=R), A=A, B=B)
        assert not k.lowered.conversions


def test_into_a_sparse_output():
    A, B = vector(6, "sparse", 5, odd=(nan,)), vector(4, "sparse", 6)
    one_kernel(PROGRAM.format(L=3, N=2, I=2, R=5), "coo", A=A, B=B)


@st.composite
def splits_of_concatenations(draw):
    """``(program, parts)``: the family's program of group sizes drawn, each part ``(extent, format, fill,
    density, seed, odd values)``."""
    L, N, I = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    R = draw(st.sampled_from([d for d in range(1, L + N + 1) if (L + N) % d == 0]))
    parts = [(n * I, draw(st.sampled_from(["sparse", "coo", "dense"])), draw(st.sampled_from([0.0, 1.0, nan])),
              draw(st.sampled_from([0.0, 0.5, 1.0])), draw(st.integers(0, 99)),
              draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for n in (L, N)]
    return PROGRAM.format(L=L, N=N, I=I, R=R), parts


@settings(max_examples=7, deadline=None)
@given(splits_of_concatenations())
@example((PROGRAM.format(L=3, N=3, I=2, R=2), [(6, "dense", 0.0, 0.5, 7, (inf,)), (6, "sparse", 1.0, 0.5, 8, ())]))
@example((PROGRAM.format(L=1, N=1, I=1, R=1), [(1, "sparse", 0.0, 0.0, 0, ()), (1, "sparse", 0.0, 0.0, 0, (inf, -inf))]))
def test_splits_of_concatenations_by_property(drawn):
    program, parts = drawn
    tensors = {name: vector(n, fmt, seed, fill, density, odd)
               for name, (n, fmt, fill, density, seed, odd) in zip("AB", parts)}
    one_kernel(program, **tensors)


@pytest.mark.parametrize("fmt", ["sparse", "dense", "coo"])
@pytest.mark.parametrize("rows, shape", [((2, 2), (2, 2, 2)), ((3, 1), (2, 2, 2)), ((2, 2), (1, 4, 2)),
                                         ((3, 1), (4, 1, 2))])
def test_the_array_front_end_against_numpy(rows, shape, fmt):
    # (a concat of reshaped vectors reshaped again: the same program; (3, 1) rows in groups of 2 straddle)
    a = np.array([1.0, 0.0, 2.0, 3.0, 0.0, -inf])[:rows[0] * 2]
    b = np.array([0.0, 4.0, nan, 0.0])[:rows[1] * 2]
    A, B = (xp.asarray(Tensor.from_numpy(x, fmt)) for x in (a, b))
    e = xp.concat([A.reshape(rows[0], 2), B.reshape(rows[1], 2)]).reshape(*shape)
    k = ss.lower(e, strategy="lattice")
    want = np.concatenate([a.reshape(rows[0], 2), b.reshape(rows[1], 2)]).reshape(shape)
    np.testing.assert_array_equal(k().to_numpy(), want)
    np.testing.assert_array_equal(e.compute().to_numpy(), want)
    stacked = xp.stack([A.reshape(rows[0], 2), B.reshape(rows[1], 2)]) if rows[0] == rows[1] else None
    if stacked is not None:
        np.testing.assert_array_equal(stacked.reshape(*shape).compute().to_numpy(),
                                      np.stack([a.reshape(rows[0], 2), b.reshape(rows[1], 2)]).reshape(shape))
