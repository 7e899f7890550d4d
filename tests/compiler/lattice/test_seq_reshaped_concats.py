"""A split of a concatenation of vectors reshaped and collapsed back, the array front end's
``concat([v.reshape(1, 2, 3), w.reshape(1, 2, 3)]).reshape(3, 4)``, lowered by the lattice strategy (issue 30).

Before, the second collapse of ``collapse(collapse(split(split(A[q], q -> (l:1, r:6)), r -> (m:2, n:3)), (l, m)
-> s), (s, n) -> p)`` took ``(π0(q_A, 6) × π0(π1(q_A, 6), 3)) × π1(π1(q_A, 6), 3)`` for a product repeating
the group of ``π1(q_A, 6)`` over ``m`` and moved ``π1(π1(q_A, 6), 3)`` inside it: the inner product then
rewound ``π1(q_A, 6)`` to its group's start at each ``m``, so its kernel never left the first row (wrong values
checked, an output growing without bound unchecked) and the CFIR's interpreter never ended. Each kernel against
the dense oracle (compiler.evaluate), the sequence CFIR's interpreter and the IR interpreter (one_kernel); the
array front end's against numpy.

A split of a split whose outer split has more than one group, ``v.reshape(2, 1, 3)``, collapsed back was refused,
naming the looplets strategy; it is one kernel too (tests/compiler/lattice/test_seq_split_groups.py)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from tests.compiler.lattice.test_seq_concat_fills import one_kernel
from tests.compiler.lattice.test_seq_split_of_concat_splits import vector

nan, inf = np.nan, np.inf

EXTENTS = [(1, 2, 3), (2, 3), (3, 2), (1, 6, 1), (1, 1, 6)]
MORE_GROUPS = [(3, 1, 2), (2, 1, 3), (2, 3, 1), (2, 2, 2), (6, 1, 1)]


def reshaped(tensor: str, index: str, extents: tuple) -> str:
    """``tensor[index]`` split into ``extents`` (left to right) and collapsed back into ``index + "p"``."""
    names = [f"{index}{d}" for d in range(len(extents))]
    rest, whole, expr = f"{index}r0", int(np.prod(extents)), f"{tensor}[{index}]"
    for d in range(len(extents) - 1):
        inner = names[d + 1] if d == len(extents) - 2 else f"{index}r{d + 1}"
        expr = f"split({expr}, {index if d == 0 else rest} -> ({names[d]}:{extents[d]}, {inner}:{whole // extents[d]}))"
        rest, whole = inner, whole // extents[d]
    major = names[0]
    for d in range(1, len(extents)):
        into = f"{index}p" if d == len(extents) - 1 else f"{index}c{d}"
        expr = f"collapse({expr}, ({major}, {names[d]}) -> {into})"
        major = into
    return expr


def program(extents: tuple, rows: int = 3) -> str:
    """The statement the front end lowers for ``concat([a.reshape(*extents), b.reshape(*extents)]).reshape(rows,
    -1)``."""
    cols = 2 * int(np.prod(extents)) // rows
    return (f"out[i, j] = split(concat(({reshaped('A', 'a', extents)}, {reshaped('B', 'b', extents)}), "
            f"(ap, bp) -> k), k -> (i:{rows}, j:{cols}))")


def test_the_issue_statement():
    A = Tensor.from_numpy(np.array([1.0, 0, 2, 0, 0, 3]), "sparse")
    B = Tensor.from_numpy(np.array([0, 2.0, 0, 0, 5.0, 0]), "sparse")
    k, got = one_kernel(program((1, 2, 3)), A=A, B=B)
    np.testing.assert_array_equal(got.to_numpy(), [[1, 0, 2, 0], [0, 3, 0, 2], [0, 0, 5, 0]])
    # (the minor index of the inner split walks inside the product of the major ones, not rewound by it)
    assert "((π0(a_A, 6) × π0(π1(a_A, 6), 3)) × π1(π1(a_A, 6), 3))" in k.trace.find("cfir")[0].after_text


@pytest.mark.parametrize("extents", EXTENTS)
@pytest.mark.parametrize("fmts", [("sparse", "sparse"), ("sparse", "coo"), ("dense", "sparse"), ("coo", "dense")])
def test_extents_and_formats(extents, fmts):
    n = int(np.prod(extents))
    A = vector(n, fmts[0], n, odd=(nan,))
    B = vector(n, fmts[1], n + 1, odd=(inf, -inf))
    one_kernel(program(extents), A=A, B=B)


@pytest.mark.parametrize("fills", [(0.0, 0.0), (1.0, 1.0), (nan, nan), (0.0, 1.0), (0.0, nan)])
@pytest.mark.parametrize("fmts", [("sparse", "coo"), ("sparse", "sparse")])
def test_fills_with_nan_and_infinities_stored(fmts, fills):
    A = vector(6, fmts[0], 1, fills[0], odd=(nan, -inf))
    B = vector(6, fmts[1], 2, fills[1], odd=(inf,))
    one_kernel(program((1, 2, 3)), A=A, B=B)
    one_kernel(program((1, 6, 1), rows=4), A=A, B=B)


@pytest.mark.parametrize("empty", ["A", "B", "both"])
def test_a_part_storing_nothing_or_all_fill(empty):
    A = vector(6, "sparse", 3, density=0.0 if empty in ("A", "both") else 1.0)
    B = vector(6, "coo", 4, density=0.0 if empty in ("B", "both") else 1.0)
    one_kernel(program((1, 2, 3)), A=A, B=B)


@st.composite
def reshaped_concatenations(draw):
    """``(program, parts)``: extents and rows drawn, each part ``(format, fill, density, seed, odd values)``."""
    extents = draw(st.sampled_from(EXTENTS + [(1, 6), (6, 1)]))
    rows = draw(st.sampled_from([d for d in (1, 2, 3, 4, 6) if 12 % d == 0]))
    parts = [(draw(st.sampled_from(["sparse", "coo", "dense"])), draw(st.sampled_from([0.0, 1.0, nan])),
              draw(st.sampled_from([0.0, 0.5, 1.0])), draw(st.integers(0, 99)),
              draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for _ in "AB"]
    return extents, program(extents, rows), parts


@settings(max_examples=5, deadline=None)
@given(reshaped_concatenations())
@example(((1, 2, 3), program((1, 2, 3)), [("sparse", 0.0, 0.5, 7, (inf,)), ("coo", nan, 0.5, 8, ())]))
def test_reshaped_concatenations_by_property(drawn):
    extents, statement, parts = drawn
    n = int(np.prod(extents))
    tensors = {name: vector(n, fmt, seed, fill, density, odd)
               for name, (fmt, fill, density, seed, odd) in zip("AB", parts)}
    one_kernel(statement, **tensors)


@pytest.mark.parametrize("fmts", [("sparse", "sparse"), ("sparse", "coo"), ("dense", "coo")])
@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("extents", [(1, 2, 3), (2, 3), (3, 2)])
def test_the_array_front_end_against_numpy(extents, fill, fmts):
    a = np.array([1.0, fill, 2.0, fill, -inf, 3.0])
    b = np.array([fill, 2.0, nan, fill, 5.0, fill])
    v, w = (xp.asarray(Tensor.from_numpy(x, f, fill=fill)) for x, f in zip((a, b), fmts))
    e = xp.concat([v.reshape(*extents), w.reshape(*extents)]).reshape(3, 4)
    want = np.concatenate([a.reshape(extents), b.reshape(extents)]).reshape(3, 4)
    for strategy in ("lattice", None):
        np.testing.assert_array_equal(e.compute(strategy=strategy, checked=True).to_numpy(), want)
    np.testing.assert_array_equal(ss.lower(e, strategy="lattice", checked=True)().to_numpy(), want)


@pytest.mark.parametrize("extents", MORE_GROUPS)
def test_splits_of_more_than_one_group_split_again(extents):
    # (refused before, naming the looplets strategy: now one kernel, the reshape alone and the concatenation's)
    a = np.array([1.0, 0.0, 2.0, 0.0, -inf, 3.0, 0.0, 4.0])[:int(np.prod(extents))]
    A = Tensor.from_numpy(a, "sparse")
    k, got = one_kernel(f"c[ap] = {reshaped('A', 'a', extents)}", A=A)
    np.testing.assert_array_equal(got.to_numpy(), a)
    k, _ = one_kernel(program(extents, rows=2), A=A, B=Tensor.from_numpy(a[::-1].copy(), "coo"))
    assert not k.trace.find("convert")
