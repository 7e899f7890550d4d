"""A split of a split's minor index walked in more than one group of it (issue 30): ``v.reshape(2, 2, 2)``
collapsed back (``.reshape(-1)``, ``.reshape(2, 4)``), repeated by a broadcast, or concatenated and reshaped,
lowered by the lattice strategy as one kernel.

Before, a collapse ``(π0(l_A, 4) × π0(π1(l_A, 4), 2)) × π1(π1(l_A, 4), 2)`` was refused naming the looplets
strategy (the array front end then computed the reshape apart); ``.reshape(2, 4)``, whose loop over ``j`` walks
``π0(π1(l_A, 4), 2) × π1(π1(l_A, 4), 2)``, ran away: that product restarted ``π1(l_A, 4)`` at its group's start each
time it restarted its right operand, though its left operand walks that group itself (the checked kernel ran out
of memory, the CFIR's interpreter never ended). A product repeating the inner groups (``U_l × π1(π1(l_A, 4), 2)``,
a broadcast between them) restarted the outer group too, at its first inner group; a repeat of the rows
(``U_k × π0(l_A, 4)`` on the left) put the cursor back at the outer group's start where the inner walk ran out
(a runaway); and a split of a concatenation of such parts, of another fill, walked B's tied universe in A's
part (``π0(π1(n_A, 4), 2) ∪ U_k#r_B``: A's entries written at B's coordinates). Each kernel (checked) against
the dense oracle (compiler.evaluate), the IR interpreter and the sequence CFIR's interpreter; the array front
end's against numpy, as one kernel (no retry, materialize or convert step)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.lattice.seqderive import seq_evaluate
from compiler.reference import evaluate
from tests.compiler.lattice.test_seq_reshaped_concats import program, reshaped
from tests.compiler.lattice.test_seq_split_of_concat_splits import vector

nan, inf = np.nan, np.inf

GROUPS = [(2, 2, 2), (2, 3, 2), (1, 2, 3), (3, 2, 2), (2, 1, 3), (2, 2, 1, 2)]
APART = ("retry", "materialize", "convert")
FORMATS = ["sparse", "coo", "dense"]


def checked_kernel(statement, **tensors):
    """``statement`` lowered by the lattice, checked, right against evaluate, the IR interpreter and the
    sequence CFIR's interpreter (the compiled kernel first: a runaway one stops at its checked bounds)."""
    with np.errstate(invalid="ignore"):
        want = evaluate(statement, **tensors)[0]
        k = ss.lower(statement, strategy="lattice", checked=True, **tensors)
        got = k(**tensors)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
        assert not any(s.stage in APART for s in k.trace.steps)
        np.testing.assert_array_equal(seq_evaluate(statement, **tensors), want)
    return k


def array_kernel(expr, want, format=None):
    """``expr`` lowered by the lattice as one checked kernel (into ``format``, or the lattice's choice), right
    against numpy's ``want``, the IR interpreter and the sequence CFIR's interpreter of its statement."""
    with np.errstate(invalid="ignore"):
        k = expr.lower(strategy="lattice", checked=True, **({} if format is None else {"format": format}))
        assert not any(s.stage in APART for s in k.trace.steps), [s.note for s in k.trace.steps if s.stage in APART]
        got = k()
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(k.interpret().to_numpy(), want)
        chosen = k.trace.find("loop-order")
        data = chosen[-1].data if chosen else {}
        order = data.get("order", k.formats[k.program.lhs.tensor].mode_order)
        np.testing.assert_array_equal(seq_evaluate(k.program, loop_order=order, hoisted=data.get("hoisted"),
                                                   **k.arguments), want)
    return k


def rows_of(extents: tuple) -> str:
    """The statement of ``v.reshape(*extents).reshape(extents[0], -1)``: the splits of the split's minor index
    collapsed back into ``j``."""
    k, n = len(extents) - 1, int(np.prod(extents))
    expr, rest, whole = f"split(A[q], q -> (i:{extents[0]}, r1:{n // extents[0]}))", "r1", n // extents[0]
    for d in range(1, k):
        inner = f"m{k}" if d == k - 1 else f"r{d + 1}"
        expr = f"split({expr}, {rest} -> (m{d}:{extents[d]}, {inner}:{whole // extents[d]}))"
        rest, whole = inner, whole // extents[d]
    major = "m1"
    for d in range(2, k + 1):
        into = "j" if d == k else f"c{d}"
        expr = f"collapse({expr}, ({major}, m{d}) -> {into})"
        major = into
    return f"c[i, j] = {expr}"


def test_the_issue_statements():
    a = np.array([1.0, 0.0, 2.0, 0.0, -inf, 3.0, 0.0, 4.0])
    A = Tensor.from_numpy(a, "sparse")
    k = checked_kernel(f"c[ap] = {reshaped('A', 'a', (2, 2, 2))}", A=A)
    assert "(π0(a_A, 4) × π0(π1(a_A, 4), 2)) × π1(π1(a_A, 4), 2)" in k.trace.find("cfir")[0].after_text
    np.testing.assert_array_equal(k(A=A).to_numpy(), a)
    # (the split's rows kept: ran away on main)
    k = checked_kernel(rows_of((2, 2, 2)), A=A)
    np.testing.assert_array_equal(k(A=A).to_numpy(), a.reshape(2, 4))
    v = xp.asarray(A)
    for expr, want in ((v.reshape(2, 2, 2).reshape(-1), a), (v.reshape(2, 2, 2).reshape(2, 4), a.reshape(2, 4)),
                       (xp.concat([v.reshape(2, 2, 2), v.reshape(2, 2, 2)]).reshape(4, 4),
                        np.concatenate([a.reshape(2, 2, 2)] * 2).reshape(4, 4))):
        array_kernel(expr, want)


@pytest.mark.parametrize("n", range(len(GROUPS)))
def test_group_shapes_and_formats(n):
    # (each group shape with two of the formats, in turn)
    extents, fmts = GROUPS[n], FORMATS[n % 3:] + FORMATS[:n % 3]
    size = int(np.prod(extents))
    A = vector(size, fmts[0], size, odd=(nan, inf))
    checked_kernel(f"c[ap] = {reshaped('A', 'a', extents)}", A=A)
    checked_kernel(rows_of(extents), A=A)
    checked_kernel(program(extents, rows=2), A=A, B=vector(size, fmts[1], size + 1, odd=(-inf,)))


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("density", [0.0, 0.5, 1.0])
def test_fills_empty_and_all_stored(fill, density):
    A = vector(8, "sparse", 3, fill, density, odd=(nan, -inf) if density else ())
    B = vector(8, "coo", 4, fill, density, odd=(inf,) if density else ())
    checked_kernel(rows_of((2, 2, 2)), A=B)
    checked_kernel(program((2, 2, 2), rows=4), A=A, B=B)


@pytest.mark.parametrize("fills", [(0.0, 1.0), (0.0, nan), (nan, 0.0)])
@pytest.mark.parametrize("fmts", [("sparse", "sparse"), ("coo", "sparse"), ("sparse", "dense")])
def test_a_concatenation_of_parts_of_other_fills(fmts, fills):
    # (main wrote A's entries at the coordinates of B's tied universe: π0(π1(n_A, 4), 2) ∪ U_k#r_B)
    f, g = fills
    a = np.array([f, f, 3.5, f, nan, f, -inf, f])
    b = np.array([g, g, 2.0, g, -inf, -2.0, g, inf])
    v, w = (xp.asarray(Tensor.from_numpy(x, f, fill=g)) for x, f, g in zip((a, b), fmts, fills))
    for shape in ((4, -1), (-1,), (2, -1)):
        array_kernel(xp.concat([v.reshape(2, 2, 2), w.reshape(2, 2, 2)]).reshape(*shape),
                     np.concatenate([a.reshape(2, 2, 2), b.reshape(2, 2, 2)]).reshape(*shape))


@pytest.mark.parametrize("where", range(4))
@pytest.mark.parametrize("fmt", ["sparse", "coo"])
def test_repeated_by_a_broadcast(where, fmt):
    # (a broadcast before, between or after the split's indices: a product repeating a group walks it again)
    a = np.array([1.0, 0.0, 2.0, 0.0, -inf, 3.0, 0.0, nan])
    v = xp.asarray(Tensor.from_numpy(a, fmt))
    shape = [2, 2, 2]
    shape.insert(where, 1)
    wide = list(shape)
    wide[where] = 3
    for rows in ((-1,), (2, -1), (3, -1)):
        want = np.broadcast_to(a.reshape(shape), wide).reshape(rows)
        array_kernel(xp.broadcast_to(v.reshape(*shape), tuple(wide)).reshape(*rows), want)


@pytest.mark.parametrize("fmt", ["sparse", "coo"])
def test_an_empty_operand_repeated(fmt):
    # (the outer operand of a product empty: the product inside restarts no π1 of a group never entered, whose
    # start was never saved)
    v = xp.asarray(Tensor.from_numpy(np.zeros(6), fmt))
    for shape, wide in (((2, 1, 3), (2, 3, 3)), ((2, 1, 1, 3), (2, 3, 1, 3)), ((1, 2, 1, 3), (3, 2, 2, 3))):
        array_kernel(xp.broadcast_to(v.reshape(*shape), wide).reshape(-1), np.zeros(int(np.prod(wide))))


@st.composite
def grouped(draw):
    """``(statement, tensors)``: a group shape, a statement over it and its operands drawn."""
    extents = draw(st.sampled_from(GROUPS))
    n = int(np.prod(extents))
    parts = [vector(n, draw(st.sampled_from(["sparse", "coo", "dense"])), draw(st.integers(0, 99)),
                    draw(st.sampled_from([0.0, 1.0, nan])), draw(st.sampled_from([0.0, 0.5, 1.0])),
                    draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for _ in "AB"]
    kind = draw(st.sampled_from(["ravel", "rows", "concat"]))
    if kind == "ravel":
        return f"c[ap] = {reshaped('A', 'a', extents)}", {"A": parts[0]}
    if kind == "rows":
        return rows_of(extents), {"A": parts[0]}
    return program(extents, rows=draw(st.sampled_from([d for d in (1, 2, 4) if 2 * n % d == 0]))), dict(zip("AB", parts))


@settings(max_examples=5, deadline=None)
@given(grouped())
@example((rows_of((2, 3, 2)), {"A": vector(12, "coo", 5, nan, 0.5, (inf,))}))
def test_split_groups_by_property(drawn):
    statement, tensors = drawn
    checked_kernel(statement, **tensors)
