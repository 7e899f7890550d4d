"""A reshape of an hstack whose second part has another fill than the result's (issue 30):
``concat([a, b], axis=1).reshape(4, 6)`` of two 3x4 matrices, ``b`` of fill 1, NaN or -inf, lowered by the
lattice strategy as one kernel that reads ``b`` as stored.

Before, ``b`` was read densely, converted before each call (a ``convert`` step): its part walks every
coordinate of its own, ``p_B ∪ U_p``, and the split of the ravel walks ``π0((k_A ∪ k_B) × (n_A ⊔ (p_B ∪ U_p)),
6)``, a split of a product over a union, which the lattice refuses (a group straddling two rows would be left
half drained when one operand ran out). Now that part is two products, its stored entries' and its universe's,
``π0((k_A × (n_A + 4)) ∪ (k_B × (4 + p_B)) ∪ (U_k#p_B × (4 + U_p)), 6)`` (the trace's ``fill-rows`` step):
a union of products, which a split's groups walk; the points where ``B``'s entries outlive its universe,
which covers them, are not built. With three parts, the cases multiply: a part of another fill is still read
converted there, the note says why. A reshape whose axes divide each other (``(3, 12) -> (6, 6)``) keeps its
axes split first, no group straddling rows. Also: a split of a three-part hstack, each of fill 1, once the
first part ran out mid-group left the rest of the loops empty (their π1 was not matched to the loop's π0:
an empty part had no product), the last rows at the fill. Each kernel (checked) against numpy, the dense
oracle (compiler.evaluate), the IR interpreter and the sequence CFIR's interpreter."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.reference import evaluate
from tests.compiler.lattice.test_seq_split_groups import array_kernel

nan, inf = np.nan, np.inf


def part(fmt, fill, seed, density=0.5, odd=(), shape=(3, 4)):
    """A numpy matrix of ``fill`` with ``density`` of its entries stored (``odd`` stored first), and it as a
    lazy Array of ``fmt``."""
    r = np.random.default_rng(seed)
    x = np.where(r.random(shape) < density, r.choice([1.0, -2.0, 3.5], shape), fill)
    x.flat[:len(odd)] = odd
    return x, xp.asarray(Tensor.from_numpy(x, fmt, fill=fill))


def hstack_kernel(parts, shape, format=None, walked=True):
    """``concat(parts, axis=1).reshape(*shape)`` by one lattice kernel, right against numpy, the dense oracle,
    the IR interpreter and the sequence CFIR's interpreter; ``walked``: its part of another fill walked as
    stored (the ``fill-rows`` step)."""
    want = np.concatenate([x for x, _ in parts], axis=1).reshape(shape)
    e = xp.concat([v for _, v in parts], axis=1).reshape(*shape)
    k = array_kernel(e, want) if format is None else None
    if format is not None:
        with np.errstate(invalid="ignore"):
            k = e.lower(format=format, strategy="lattice", checked=True)
            got = k()
            got.validate()
            np.testing.assert_array_equal(got.to_numpy(), want)
            np.testing.assert_array_equal(k.interpret().to_numpy(), want)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(evaluate(k.program, **k.arguments)[0], want)
    assert bool(k.trace.find("fill-rows")) == walked, [s.stage for s in k.trace.steps]
    return k


def test_the_issue_statement():
    a, b = part("csr", 0.0, 1, odd=(inf,)), part("csr", 1.0, 2, odd=(nan, -inf))
    k = hstack_kernel([a, b], (4, 6))
    cfir = k.trace.find("cfir")[0].after_text
    head = "while i <- π0(((k_A × (n_A + 4)) ∪ (k_B × (4 + p_B))) ∪ (U_k#p_B × (4 + U_p)), 6)\n"
    assert cfir.startswith(head), cfir
    # (B's entries never outlive its universe: no loop where only they are left)
    assert "while i <- π0(k_B × (4 + p_B), 6)" not in cfir
    assert k.trace.find("convert") == []


@pytest.mark.parametrize("fmts, fills, shape, format", [
    (("coo", "csr"), (0.0, nan), (8, 3), None),
    (("csr", "coo"), (0.0, 1.0), (2, 12), "coo"),
    (("dense", "coo"), (nan, 0.0), (4, 6), "csr"),
    (("coo", "coo"), (1.0, -inf), (4, 6), "dense"),
    (("csr", "csr"), (-inf, inf), (8, 3), None),
])
def test_formats_fills_and_outputs(fmts, fills, shape, format):
    a = part(fmts[0], fills[0], 3, odd=(nan, inf))
    b = part(fmts[1], fills[1], 4, odd=(-inf, nan, 0.0))
    hstack_kernel([a, b], shape, format)


@pytest.mark.parametrize("densities", [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)])
def test_empty_and_all_stored_parts(densities):
    a, b = part("csr", 0.0, 5, densities[0]), part("coo", nan, 6, densities[1])
    hstack_kernel([a, b], (4, 6))


def test_three_parts_read_a_part_of_another_fill_converted_and_split_right():
    # (a part of another fill beside two: read converted, the note says why; main wrote the rest of the
    # groups once the first part ran out as the fill here too)
    parts = [part("csr", 0.0, 1), part("csr", 0.0, 2), part("coo", 1.0, 3)]
    want = np.concatenate([x for x, _ in parts], axis=1).reshape(4, 9)
    k = xp.concat([v for _, v in parts], axis=1).reshape(4, 9).lower(strategy="lattice", checked=True)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(k().to_numpy(), want)
        np.testing.assert_array_equal(k.interpret().to_numpy(), want)
    assert [s.note.split(":")[0] for s in k.trace.find("convert")] == ["C is coo"]
    assert "only beside one other part, of the result's fill" in k.trace.find("convert")[0].note
    # (axes that divide each other split first: no group straddles the rows, nothing converted)
    k = hstack_kernel(parts, (6, 6), walked=False)
    assert k.trace.find("convert") == [] and "split into the pieces" in k.trace.find("array")[0].note


def test_a_split_of_three_parts_of_fill_one_once_the_first_ran_out():
    rows = [[[1.0, 3.0, 3.0], [3.0, 1.0, 1.0]], [[1.0, 1.0, 2.0], [1.0, 3.0, 3.0]], [[3.0, 2.0, 1.0], [2.0, 1.0, 1.0]]]
    parts = [(np.array(x), xp.asarray(Tensor.from_numpy(np.array(x), "csr", fill=1.0))) for x in rows]
    hstack_kernel(parts, (3, 6), walked=False)


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(["csr", "coo", "dense"]), st.sampled_from(["csr", "coo"]),
       st.sampled_from([(0.0, 1.0), (0.0, nan), (nan, 0.0), (1.0, -inf), (inf, 1.0)]),
       st.sampled_from([(4, 6), (8, 3), (2, 12)]), st.sampled_from([0.0, 0.5, 1.0]), st.integers(0, 99))
def test_hstack_reshapes_by_property(fmt_a, fmt_b, fills, shape, density, seed):
    a = part(fmt_a, fills[0], seed, density, odd=(nan,) if density else ())
    b = part(fmt_b, fills[1], seed + 1, density, odd=(inf, -inf) if density else ())
    hstack_kernel([a, b], shape)
