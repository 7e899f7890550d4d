"""Stacks of parts whose values where they store nothing differ (issue 30), lowered by the lattice strategy.

``concat((broadcast(k:1, A[j] + 0.5), broadcast(l:1, B[j])), (k, l) -> i)`` of an ``A`` and a ``B`` of fill 0 has
fill 0.5 (its first part's value where ``A`` stores nothing), and ``B``'s part is 0 where ``B`` stores nothing. On
main the parts were compared by the fill their sequences skip (0 for ``A[j] + 0.5``, whose ``U_j`` skips nothing),
so ``B``'s part walked only the stored coordinates and left the output's 0.5 elsewhere (a wrong answer, into
dense, CSR and COO outputs, of ``xp.stack`` too). Now a part whose value where it stores nothing is not the result's
walks every coordinate of its own and writes it there. Each kernel against the dense oracle (compiler.evaluate), the
sequence CFIR's interpreter and the IR interpreter (``one_kernel``)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.array.build import WHERE
from compiler.format import Format
from compiler.levels import Dense, Element, RunList, SparseBand, SparseHash, SparseList
from tests.compiler.lattice.split_kernels import one_lattice_kernel
from tests.compiler.lattice.test_seq_concat_fills import one_kernel

nan, inf = np.nan, np.inf

LEVELS = {"list": SparseList, "band": SparseBand, "hash": SparseHash, "runs": RunList, "dense": Dense}

#: each part's expression of its vector ``{t}``
PARTS = {"plain": "{t}[j]", "plus": "{t}[j] + 0.5", "times": "{t}[j] * 2",
         "where": "where({t}[j] > 0.0, {t}[j], 1.0)"}


def vector(values, level, fill=0.0):
    return Tensor.from_numpy(np.asarray(values, float), Format(LEVELS[level](Element(fill))))


def drawn_vector(n, level, fill, density, seed, odd=(), hole=True):
    """A vector of ``n`` entries of ``level`` and ``fill``, ``density`` of them stored, ``odd`` stored first;
    ``hole``: none at the last coordinate (where no part stores one, the loops walk a part of another fill)."""
    r = np.random.default_rng(seed)
    a = np.where(r.random(n) < density, r.choice([1.0, -2.0, 0.5], n), fill)
    a[:len(odd)] = odd
    if hole:
        a[-1] = fill
    return vector(a, level, fill)


def stack(*parts):
    """The stack of the vector expressions ``parts`` (``A``'s, ``B``'s, ...) into the rows of ``c``, parsed
    (``where`` is the array front end's)."""
    names = ["k", "l", "m"][:len(parts)]
    operands = ", ".join(f"broadcast({n}:1, {p})" for n, p in zip(names, parts))
    return ss.parse(f"c[i, j] = concat(({operands}), ({', '.join(names)}) -> i)", functions={"where": WHERE})


ISSUE = stack("A[j] + 0.5", "B[j]")


@pytest.mark.parametrize("out", [None, "csr", "coo"])
def test_the_second_part_writes_its_fill_where_it_stores_nothing(out):
    # (a wrong answer on main: the second row [0, 0, 0.5, 0.5])
    A, B = vector([0.5, 0.5, 0, 0], "list"), vector([0, 0, 0, 0], "list")
    k, got = one_kernel(ISSUE, out, A=A, B=B)
    np.testing.assert_array_equal(got.to_numpy(), [[1, 1, 0.5, 0.5], [0, 0, 0, 0]])
    assert "broadcast(l:1, B[j]) has fill 0.0, not the 0.5" in k.trace.find("seq-derive")[0].note
    # (B's part walks U_j, tied to it; A's part walks A's levels as before: its U_j writes the result's fill)
    assert "U_j#l" in k.trace.find("cfir")[0].after_text


@pytest.mark.parametrize("out", [None, "csr", "coo"])
def test_an_hstack_after_a_part_with_a_constant(out):
    # (the same along the concatenated index: B's columns walk every coordinate of l)
    A = Tensor.from_numpy(np.array([[0.5, 0, nan], [0, 0, 0]]), "csr")
    B = Tensor.from_numpy(np.array([[0, 2.0], [0, 0]]), "coo")
    one_kernel("c[i, j] = concat((A[i, k] + 0.5, B[i, l]), (k, l) -> j)", out, A=A, B=B)


@pytest.mark.parametrize("out", [None, "csr", "coo"])
@pytest.mark.parametrize("parts, levels, fills", [
    (("plus", "plain"), ("band", "hash"), (0.0, 0.0)),
    (("plus", "times"), ("runs", "list"), (0.0, 0.0)),
    (("plus", "where"), ("list", "band"), (0.0, 0.0)),
    (("times", "plus"), ("hash", "list"), (1.0, 0.0)),
    (("where", "plain"), ("list", "runs"), (0.0, nan)),
    (("plus", "plain", "plain"), ("list", "hash", "band"), (0.0, 0.0, 1.0)),
    (("plus", "plain", "plus"), ("band", "list", "runs"), (nan, 0.0, 0.0)),
    (("times", "plus", "where"), ("list", "dense", "hash"), (0.0, nan, 0.0)),
])
def test_two_and_three_parts_of_operators(parts, levels, fills, out):
    names = "ABC"[:len(parts)]
    tensors = {t: drawn_vector(5, lv, f, 0.5, 7 + m, odd=(nan, inf) if m else (-inf,))
               for m, (t, lv, f) in enumerate(zip(names, levels, fills))}
    one_kernel(stack(*(PARTS[p].format(t=t) for p, t in zip(parts, names))), out, **tensors)


@pytest.mark.parametrize("out", [None, "csr"])
def test_a_part_at_the_values_but_not_at_the_fill_a_sum_folds_in(out):
    # (A1's fill 1 is A[k, j] + 1's value where A stores nothing, not the 0 its sequence skips, which the row
    # sums fold in for the coordinates the loops skip: A1's part still walks every coordinate)
    A = Tensor.from_numpy(np.array([[0, 2.0, 0], [0, 0, nan]]), "csr")
    A1 = Tensor.from_numpy(np.array([[1, 1, 3.0], [1, 1, 1], [inf, 1, 1]]), "coo", fill=1.0)
    one_kernel("c[i] = sum[j](concat((A[k, j] + 1, A1[l, j]), (k, l) -> i))", None, A=A, A1=A1)
    one_kernel("c[i, j] = concat((A[k, j] + 1, A1[l, j]), (k, l) -> i)", out, A=A, A1=A1)


@pytest.mark.parametrize("density", [0.0, 1.0])
def test_empty_and_full_parts(density):
    # (a part storing nothing, or every coordinate, after one of another value where it stores nothing)
    A = drawn_vector(4, "list", 0.0, density, 1, hole=False)
    B = drawn_vector(4, "band", 0.0, 1.0 - density, 2, hole=False)
    for out in (None, "coo"):
        one_kernel(ISSUE, out, A=A, B=B)
        one_kernel(stack("B[j] * 2", "A[j] + 0.5", "B[j]"), out, A=A, B=B)


@st.composite
def stacks(draw):
    """``(parts, vectors, out)``: 2 or 3 parts, each ``(expression kind, level, fill, density, seed, odd)``."""
    n = draw(st.integers(2, 3))
    parts = [(draw(st.sampled_from(sorted(PARTS))), draw(st.sampled_from(sorted(LEVELS))),
              draw(st.sampled_from([0.0, 1.0, nan])), draw(st.sampled_from([0.0, 0.5, 1.0])),
              draw(st.integers(0, 99)), draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for _ in range(n)]
    return parts, draw(st.sampled_from([None, "csr", "coo"]))


@settings(max_examples=6, deadline=None)
@given(stacks())
@example(([("plus", "list", 0.0, 0.5, 1, ()), ("plain", "list", 0.0, 0.5, 2, ())], None))
@example(([("plus", "band", nan, 0.5, 3, (inf,)), ("where", "hash", 0.0, 0.0, 4, ()),
           ("plain", "runs", 1.0, 1.0, 5, (nan,))], "csr"))
def test_stacks_of_any_parts_by_property(drawn):
    parts, out = drawn
    names = "ABC"[:len(parts)]
    tensors = {t: drawn_vector(4, level, fill, density, seed, odd)
               for t, (_, level, fill, density, seed, odd) in zip(names, parts)}
    one_kernel(stack(*(PARTS[p[0]].format(t=t) for p, t in zip(parts, names))), out, **tensors)


def test_the_array_front_end_stacks_them():
    def arr(values, level, fill=0.0):
        return xp.asarray(vector(values, level, fill))

    v1, v2 = arr([0.5, 0.5, 0, 0], "band"), arr([0.0] * 4, "list")
    v3, v4, v5 = arr([0, 0, 2.0, 0], "hash"), arr([-3.0, 0.5, -3.0], "runs"), arr([1.0], "band", 1.0)
    e = xp.stack([v1 + 0.5, xp.where(v2 > 0, v3, 0.0), xp.concat([v4, v5])])
    want = np.array([[1, 1, 0.5, 0.5], [0, 0, 0, 0], [-3.0, 0.5, -3.0, 1.0]])
    for out in (None, "dense", "csr", "coo"):
        one_lattice_kernel(e, want, out)
        # (the default strategy's choice, as a user computes it)
        np.testing.assert_array_equal(np.asarray(e.compute(**({} if out is None else {"format": out}))), want)
    one_lattice_kernel(xp.stack([v1 + 0.5, v2]), np.array([[1, 1, 0.5, 0.5], [0, 0, 0, 0]]), "csr")
    # (the default strategy lowers the issue's statement right too)
    A, B = vector([0.5, 0.5, 0, 0], "list"), vector([0, 0, 0, 0], "list")
    np.testing.assert_array_equal(ss.lower(ISSUE, A=A, B=B)(A=A, B=B).to_numpy(), [[1, 1, 0.5, 0.5], [0, 0, 0, 0]])
