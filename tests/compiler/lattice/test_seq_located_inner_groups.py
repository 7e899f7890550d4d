"""A split of a split whose inner group a loop locates, lowered by the lattice strategy: ``concat([E,
concat([c.reshape(2, 2, 4), c.reshape(2, 2, 4)])], axis=2)`` with a Dense ``E`` (a differential probe's find).

The loop over ``i`` walks the vstack of the reshapes (``π0(s_c, 8) ⊔ π0(s_c', 8)``, not locatable), the loop
over ``j`` locates ``π0(π1(s_c, 8), 4)`` at ``E``'s dense ``j``. Before, the case of that loop had the located
π0 taken out, so :func:`~compiler.lattice.seqrewind.rewound` saw a loop between the ``i`` group's π0 and the
``k`` loop's ``π1(π1(s_c, 8), 4)`` that moved nothing in the group: the ``k`` loop put ``c``'s cursors back at
the ``i`` group's start at each ``j``, over the locate (dropped as a dead store), and walked ``j = 0``'s entries
again for ``j = 1`` (``k`` coordinates -4 and -3: a malformed COO output, wrong values unchecked). The array
front end's kernels against numpy, the statement's against the dense oracle (compiler.evaluate), the sequence
CFIR's interpreter and the IR interpreter; each output validated."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, SparseList
from tests.compiler.lattice.test_seq_concat_fills import one_kernel, tensor

nan, inf = np.nan, np.inf

#: the front end's statement for the probe's expression, ``E`` as ``A``, ``c`` as ``B``
PROGRAM = ("c[i, j, k] = concat((A[i, j, l], concat((split(split(collapse(collapse(B[p, q, r], (p, q) -> t), "
           "(t, r) -> s), s -> (n:2, u:8)), u -> (j:2, m:4)), split(split(collapse(collapse(B[w, i1, j1], "
           "(w, i1) -> l1), (l1, j1) -> k1), k1 -> (v:2, m1:8)), m1 -> (j:2, m:4))), (n, v) -> i)), (l, m) -> k)")


def levels(name: str, fill: float):
    """A 3-d format by its levels' initials (d: Dense, s: SparseList), or the shorthand ``name``."""
    if set(name) <= {"d", "s"} and len(name) == 3:
        lv = Element(fill)
        for c in reversed(name):
            lv = Dense(lv) if c == "d" else SparseList(lv)
        return Format(lv)
    return name


def lazy(a: np.ndarray, fmt: str, fill: float):
    return xp.asarray(Tensor.from_numpy(a, levels(fmt, fill), fill=fill))


def checked(e, want: np.ndarray, out: str, fill: float):
    """``e`` computed by the lattice strategy into ``out``, checked: a well-formed output equal to ``want``."""
    with np.errstate(invalid="ignore"):
        got = e.compute(format=None if out == "dense" else levels(out, fill), strategy="lattice", checked=True)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)


def the_probe(w: int, fill: float = 0.0, odd=()):
    """The probe's expression over an ``E`` of ``w`` columns (fill alone) and its numpy value."""
    C = np.full((8, 2, 1), fill)
    C[0, 0, 0], C[6, 1, 0], C[3, 1, 0] = 1.0, 2.0, 3.0
    C.flat[[1, 4, 13][:len(odd)]] = odd
    E = np.full((4, 2, w), fill)
    c = lazy(C, "ddd", fill)
    e = xp.concat([lazy(E, "ddd", fill), xp.concat([c.reshape(2, 2, 4), c.reshape(2, 2, 4)], axis=0)], axis=2)
    return e, np.concatenate([E, np.concatenate([C.reshape(2, 2, 4)] * 2)], axis=2)


@pytest.mark.parametrize("out", ["coo", "csf", "sds", "dsd", "dense"])
@pytest.mark.parametrize("w", [0, 1])
def test_the_probe(w, out):
    e, want = the_probe(w)
    checked(e, want, out, 0.0)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", ["coo", "csf"])
def test_fills_with_nan_and_infinities_stored(out, fill):
    e, want = the_probe(1, fill, odd=(nan, inf, -inf))
    checked(e, want, out, fill)


@pytest.mark.parametrize("out", ["coo", "csf", None])
@pytest.mark.parametrize("shape", [(4, 2, 0), (4, 2, 1), (4, 2, 3)])
def test_the_statement_against_every_oracle(shape, out):
    A = tensor(shape, "dense", 1, density=0.0 if shape[2] < 3 else 0.5, odd=(inf,) if shape[2] == 3 else ())
    B = tensor((8, 2, 1), "dense", 2, odd=(nan, -inf))
    k, _ = one_kernel(PROGRAM, out, A=A, B=B)
    # (the loop over j moves into c's inner groups itself, by its locate: no restart of the outer group's)
    assert "group start" not in k.trace.find("cfir")[0].after_text


@pytest.mark.parametrize("out", ["coo", "dense"])
@pytest.mark.parametrize("w", [0, 1])
def test_a_located_group_one_split_deeper(w, out):
    # (the loop over the third index locates π0(π1(π1(s_c, 8), 4), 2) beside E's dense level: c's cursors enter
    # that group there, not rewound to the second split's group start)
    C = np.zeros((8, 2, 1))
    C[0, 0, 0], C[6, 1, 0], C[3, 1, 0], C[1, 0, 0] = 1.0, 2.0, 3.0, inf
    E = np.zeros((4, 2, w, 2))
    c = lazy(C, "ddd", 0.0).reshape(2, 2, 2, 2)
    e = xp.concat([xp.asarray(Tensor.from_numpy(E, "dense")), xp.concat([c, c], axis=0)], axis=2)
    checked(e, np.concatenate([E, np.concatenate([C.reshape(2, 2, 2, 2)] * 2)], axis=2), out, 0.0)


def part(kind: str, fmt: str, fill: float, seed: int, odd: tuple):
    """An operand of shape (2, 2, 4) built as ``kind`` says, and its numpy value."""
    r = np.random.default_rng(seed)

    def data(shape):
        a = np.where(r.random(shape) < 0.5, r.choice([1.0, -2.0, 3.5], shape), fill)
        a.flat[:len(odd)] = odd
        return a
    if kind == "reshape":
        C = data((8, 2, 1))
        return lazy(C, fmt, fill).reshape(2, 2, 4), C.reshape(2, 2, 4)
    if kind == "vector":
        v = data((16,))
        return xp.asarray(Tensor.from_numpy(v, "sparse" if fmt != "ddd" else "dense", fill=fill)).reshape(2, 2, 4), \
            v.reshape(2, 2, 4)
    if kind == "reversed":
        D = data((3, 2, 5))
        return lazy(D, fmt, fill)[:0:-1, :, 4:0:-1], D[:0:-1, :, 4:0:-1]
    B = data((2, 2, 4))
    return lazy(B, fmt, fill), B


@st.composite
def neighbours(draw):
    """The probe's neighbours: ``E`` of any format, empty or not, concatenated on any axis to a concatenation on
    any axis of reshapes, reversed slices or plain operands; any fill, odd values stored, any output."""
    fill = draw(st.sampled_from([0.0, 1.0, nan]))
    kinds = [draw(st.sampled_from(["reshape", "vector", "reversed", "plain"])) for _ in "ab"]
    fmts = [draw(st.sampled_from(["ddd", "dds", "csf"])) for _ in "abE"]
    odd = draw(st.sampled_from([(), (nan,), (inf, -inf)]))
    return (fill, kinds, fmts, odd, draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.integers(0, 2)),
            draw(st.sampled_from([0.0, 0.5])), draw(st.sampled_from(["coo", "csf", "sds", "dsd", "dense"])),
            draw(st.integers(0, 99)))


@settings(max_examples=6, deadline=None)
@given(neighbours())
@example((0.0, ["reshape", "reshape"], ["ddd", "ddd", "ddd"], (), 0, 2, 0, 0.0, "coo", 0))
@example((0.0, ["plain", "reshape"], ["dds", "ddd", "ddd"], (), 0, 2, 0, 0.0, "csf", 1))
def test_neighbours_by_property(drawn):
    fill, kinds, fmts, odd, inner, outer, w, density, out, seed = drawn
    (a, na), (b, nb) = (part(kind, f, fill, seed + n, odd) for n, (kind, f) in enumerate(zip(kinds, fmts)))
    mid = np.concatenate([na, nb], axis=inner)
    shape = list(mid.shape)
    shape[outer] = w
    E = np.where(np.random.default_rng(seed).random(shape) < density, 2.5, fill)
    E.flat[:len(odd)] = odd[:E.size]
    e = xp.concat([lazy(E, fmts[2], fill), xp.concat([a, b], axis=inner)], axis=outer)
    checked(e, np.concatenate([E, mid], axis=outer), out, fill)
