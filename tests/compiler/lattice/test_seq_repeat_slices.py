"""The groups of a split repeated (np.repeat of a reshape's rows, ``π0 × U_n``) or tiled (np.tile of them, ``U_n × π0``)
by a product whose π1 is walked elsewhere, sliced or not, lowered by the lattice strategy (issue 30).

On main, ``c[j] = collapse(slice(collapse(broadcast(n:2, split(A[m], m -> (i:3, l:3))), (i, n) -> k), k -> q, (1, 5,
1)), (q, l) -> j)`` (``(π0 × U_n)[1:5] × π1``: a repeat nested under a slice) was refused ("the product repeats each
group of a split's major index over another index inside ... and restarts its minor index (π1) there"), and the array
front end retried it materialized; and every form whose π1 is walked by a loop inside the product's
(``c[k, l] = collapse(broadcast(n, split(A[m], m -> (i, l))), (i, n) -> k)``, its slices, the tiles) was lowered
WRONG: the π1 moved the cursor it shares with the π0 past the group, and the product took the next group (or ended)
where it was still at this one. Now the loop (or the product whose right operand walks the π1) puts the cursor back
at the group's start (compiler.lattice.seqrewind.loop_repeats, walked_again).

The reference iterators against the set semantics; each kernel against the dense oracle (compiler.evaluate), the
CFIR interpreter and the IR interpreter (one_kernel), over SparseList/COO/dense vectors, with matrices of other
formats beside, dense and sparse outputs, fills 0/1/NaN, NaN/±inf stored, empty and all-fill operands, by a
property, and through the array front end as one kernel (no retry, nothing materialized or converted) against numpy.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.lattice.seqiter import SeqIterator, Cursors
from compiler.lattice.sequences import Level, Product, Project, Slice, Universe, coordinates
from tests.compiler.lattice.split_kernels import operand
from tests.compiler.lattice.test_seq_concat_fills import one_kernel

nan, inf = np.nan, np.inf

REPEAT = "collapse(broadcast(n:{N}, split(A[m], m -> (i:{I}, l:{L}))), (i, n) -> k)"
TILE = "collapse(broadcast(n:{N}, split(A[m], m -> (i:{I}, l:{L}))), (n, i) -> k)"
PROGRAMS = {
    "repeated rows": ("c[k, l] = " + REPEAT, 2),
    "repeated rows sliced": ("c[q, l] = slice(" + REPEAT + ", k -> q, ({s}, {e}, {r}))", 2),
    "repeated rows sliced, raveled": ("c[j] = collapse(slice(" + REPEAT + ", k -> q, ({s}, {e}, {r})), (q, l) -> j)", 1),
    "repeated rows raveled, sliced": ("c[j] = slice(collapse(" + REPEAT + ", (k, l) -> p), p -> j, ({s}, {e}, {r}))", 1),
    "repeated rows times B": ("c[k, l] = " + REPEAT + " * B[k, l]", 2),
    "repeated rows plus B": ("c[k, l] = " + REPEAT + " + B[k, l]", 2),
    "repeated rows summed": ("c[k] = sum[l](" + REPEAT + ")", 1),
    "tiled rows": ("c[k, l] = " + TILE, 2),
    "tiled rows raveled": ("c[j] = collapse(" + TILE + ", (k, l) -> j)", 1),
    "tiled rows sliced": ("c[q, l] = slice(" + TILE + ", k -> q, ({s}, {e}, {r}))", 2),
    "tiled rows sliced, raveled": ("c[j] = collapse(slice(" + TILE + ", k -> q, ({s}, {e}, {r})), (q, l) -> j)", 1),
    "tiled rows plus B, summed": ("c[k] = sum[l](" + TILE + " + B[k, l])", 1),
}


# -- the reference iterators, against the set semantics ---------------------------------------------------------


def sequences(kind):
    a = Level("A", 0, kind, 12, "m")
    p0, p1, u = Project(0, a, 4), Project(1, a, 4), Universe(3, "n")
    return [Product(Slice(Product(p0, u), 1, 8, 2), p1), Product(Slice(Product(u, p0), 2, 9), p1),
            Product(Product(u, p0), p1), Slice(Product(Product(p0, u), p1), 3, 31, 3)]


@pytest.mark.parametrize("kind", ["compressed", "dense"])
def test_a_product_walking_a_repeated_group_visits_each_coordinate_once_in_order(kind):
    rng = np.random.default_rng(11)
    for seq in sequences(kind):
        for trial in range(12):
            data = {"A": {(int(x),) for x in np.flatnonzero(rng.random(12) < 0.4)}} if kind != "dense" else {"A": set()}
            it, got = SeqIterator(seq, Cursors(data)), []
            it.init()
            while it.valid() and len(got) <= seq.size():
                got.append(it.eval())
                it.next()
            assert got == sorted(coordinates(seq, data)), (str(seq), data)


# -- kernels ----------------------------------------------------------------------------------------------------


def vector(n, fmt, seed, fill=0.0, density=0.5, odd=()):
    a, _ = operand(n, "dense", seed, density=density, fill=fill, odd=odd[:n])
    return Tensor.from_numpy(a, fmt, fill=fill)


def program(name, N=2, I=3, L=2, s=1, e=5, r=1):
    text, ndim = PROGRAMS[name]
    e = min(e, N * I)
    s = min(s, e)
    if "raveled, sliced" in name:
        s, e = s * L, min(e * L, N * I * L)
    return text.format(N=N, I=I, L=L, s=s, e=e, r=r), ndim


def tensors(text, I, L, afmt, bfmt="csr", seed=1, fill=0.0, density=0.5, odd=()):
    t = {"A": vector(I * L, afmt, seed, fill, density, odd)}
    if "B[" in text:
        rows = int(text.split("n:")[1].split(",")[0]) * I
        b, _ = operand((rows, L), "dense", seed + 1, odd=odd[::-1])
        t["B"] = Tensor.from_numpy(b, bfmt)
    return t


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("afmt, bfmt", [("sparse_vector", "coo"), ("coo", "dcsr"), ("dense", "csr")])
def test_repeated_and_tiled_groups(name, afmt, bfmt):
    text, ndim = program(name, r=2 if afmt == "coo" else 1)
    t = tensors(text, 3, 2, afmt, bfmt)
    for out in (None, {1: "sparse_vector", 2: "csr"}[ndim]) if "summed" not in name else (None,):
        one_kernel(text, out, **t)


@pytest.mark.parametrize("case", ["fill-1", "fill-nan", "stored-nan-inf", "empty", "all-fill", "one-repeat"])
@pytest.mark.parametrize("name", ["repeated rows sliced, raveled", "tiled rows plus B, summed", "repeated rows plus B"])
def test_fills_values_and_densities(name, case):
    kw = {"fill-1": dict(fill=1.0, odd=(inf,)), "fill-nan": dict(fill=nan, odd=(-inf,)),
          "stored-nan-inf": dict(odd=(nan, inf, -inf)), "empty": dict(density=0.0), "all-fill": dict(density=1.0),
          "one-repeat": {}}[case]
    text, ndim = program(name, N=1 if case == "one-repeat" else 3, I=2, L=3, s=1, e=5, r=2)
    with np.errstate(invalid="ignore"):
        one_kernel(text, None if "summed" in name or case == "all-fill" else {1: "sparse_vector", 2: "csr"}[ndim],
                   **tensors(text, 2, 3, "coo", "coo", seed=4, **kw))


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(sorted(PROGRAMS)), st.sampled_from(["sparse_vector", "coo", "dense"]),
       st.sampled_from(["csr", "coo", "dcsr", "dense"]), st.tuples(*[st.integers(1, 3)] * 3),
       st.sampled_from([0.0, 1.0, nan]), st.sampled_from([0.0, 0.5, 1.0]), st.booleans(), st.integers(0, 99))
@example("repeated rows", "dense", "csr", (1, 2, 1), 0.0, 0.5, False, 0)   # (a dense vector in groups of 1: its last row)
def test_random_repeats_and_tiles(name, afmt, bfmt, sizes, fill, density, sparse_out, seed):
    N, I, L = sizes
    r = np.random.default_rng(seed)
    s = int(r.integers(0, N * I))
    text, ndim = program(name, N, I, L, s, int(r.integers(s, N * I + 1)), int(r.integers(1, 4)))
    out = {1: "sparse_vector", 2: "csr"}[ndim] if sparse_out and "summed" not in name else None
    with np.errstate(invalid="ignore"):
        one_kernel(text, out, **tensors(text, I, L, afmt, bfmt, seed, fill, density, (nan, inf, -inf)[:seed % 4]))


# -- the array front end: one kernel ------------------------------------------------------------------------------


def test_the_array_front_ends_repeats_and_tiles_of_rows_sliced_are_one_kernel():
    x, X = operand(6, "sparse_vector", 1, odd=(nan, inf))
    rep, tile = (3, 1, 2), (1, 3, 2)
    cases = [(lambda b, s: b(s.reshape(*rep), (3, 2, 2)).reshape(6, 2), None),
             (lambda b, s: b(s.reshape(*rep), (3, 2, 2)).reshape(6, 2)[1:5], "csr"),
             (lambda b, s: b(s.reshape(*rep), (3, 2, 2)).reshape(6, 2)[1:6:2].reshape(-1), "sparse_vector"),
             (lambda b, s: b(s.reshape(*tile), (3, 3, 2)).reshape(9, 2), "csr"),
             (lambda b, s: b(s.reshape(*tile), (3, 3, 2)).reshape(9, 2)[2:8:3], None),
             (lambda b, s: b(s.reshape(*tile), (3, 3, 2)).reshape(-1), "sparse_vector")]
    for build, out in cases:
        k = build(xp.broadcast_to, X).lower(out, strategy="lattice")
        assert not {"retry", "materialize", "convert"} & set(k.trace.stages()), k.trace.stages()
        want = build(np.broadcast_to, x)
        got = k()
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(k.interpret().to_numpy(), want)
