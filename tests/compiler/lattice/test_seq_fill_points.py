"""A lattice point whose every case writes the result's fill gets no loop (issue 30): ``x - y`` of a NaN-filled ``x``
and a 0-filled ``y`` is NaN wherever ``x`` is absent, so once ``x`` ran out the loop over ``y``'s rest (and, inside
a split's group, over ``y``'s rest of the group) wrote nothing and still walked ``y``'s entries. The point is
dropped (``writes-fill`` in the lattice step, with its reason), after which the loops visit the other coordinates
as before (the brute-force check of :func:`check_seq_lattice`, over random lattices with random points dropped); a
switch's last cases that write the fill are no branches. A dense operand of such a union is not walked at all: it
is located at the other operand's coordinates (``locate-fill-side``). Each kernel against numpy, the dense oracle
and the IR interpreter (``one_lattice_kernel``).

``x * y`` of such operands is no intersection: where only ``x`` is stored it is ``x * 0``, NaN for an infinite
``x``, which the lowering folded to 0 (a wrong entry on main)."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.lattice.seqlattice import build_seq_lattice, drop_fill_points, unsupported
from compiler.lattice.seqcheck import check_seq_lattice
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

from seqgen import seqs

nan, inf = np.nan, np.inf


def lattice_steps(kernel) -> list:
    return kernel.trace.find("lattice")


def dropped(kernel) -> list:
    """``(sequence, why)`` of each point of the kernel's lattices that writes only the fill."""
    return [(r.before, r.after) for step in lattice_steps(kernel) for r in step.rewrites if r.rule == "writes-fill"]


def test_the_loop_over_what_only_writes_the_fill_is_dropped():
    (x, X), (y, Y) = operand(12, "sparse_vector", 21, fill=nan), operand(12, "coo", 22)
    with np.errstate(invalid="ignore"):
        kernel = one_lattice_kernel((X - Y).reshape(3, 4), (x - y).reshape(3, 4), "csr")
    # the group's loop over B's rest of it, the loop over B's groups once A ran out and the one inside it
    why = "no loop: each case writes the result's fill, nan"
    assert sorted(dropped(kernel)) == [("π0(k_B, 4)", why), ("π1(k_B, 4 @ k_A ∪ k_B)", why), ("π1(k_B, 4)", why)]
    cfir = kernel.trace.find("cfir")[0].after_text
    assert "while i <- π0(k_B, 4)" not in cfir and "while j <- π1(k_B" not in cfir and "skip" not in cfir, cfir
    # (the lattice still shows the points, marked, and the explorer's data says which)
    step = lattice_steps(kernel)[0]
    assert "p2 π0(k_B, 4)  (sub-points p2, writes the fill: no loop)" in step.after_text
    assert [p["writes_fill"] for p in step.data["points"]] == [False, False, True]


@pytest.mark.parametrize("fmts", [("sparse_vector", "coo"), ("coo", "dense"), ("csr", "csr")])
def test_a_nan_filled_operand_beside_a_zero_filled_one(fmts):
    shape = (2, 6) if fmts[0] == "csr" else (12,)
    (x, X) = operand(shape, fmts[0], 31, fill=nan, odd=(inf, -inf))
    (y, Y) = operand(shape, fmts[1], 32, density=0.7)
    with np.errstate(invalid="ignore"):
        for f, g in ((np.subtract, lambda a, b: a - b), (np.multiply, lambda a, b: a * b),
                     (np.add, lambda a, b: b + a)):
            kernel = one_lattice_kernel(g(X, Y).reshape(3, 4), f(x, y).reshape(3, 4), "coo")
            assert dropped(kernel), kernel.trace.find("cfir")[0].after_text


@pytest.mark.parametrize("op", ["sub", "add", "mul", "rsub"])
@pytest.mark.parametrize("yfmt", ["dense", "sparse_vector"])
def test_a_dense_operand_that_alone_writes_the_fill_is_located(op, yfmt):
    # x[2:10] - y of a NaN-filled x and a dense y is NaN wherever x is absent: the loop walks x's entries and
    # reads y at each (with i_B = j_A[2:10]), where it walked every coordinate of y; a sparse y is still merged
    (x, X) = operand(12, "sparse_vector", 51, fill=nan, odd=(inf,))
    (y, Y) = operand(8, yfmt, 52)
    f = {"sub": lambda a, b: a - b, "add": lambda a, b: a + b, "mul": lambda a, b: a * b,
         "rsub": lambda a, b: b - a}[op]
    with np.errstate(invalid="ignore"):
        kernel = one_lattice_kernel(f(X[2:10], Y), f(x[2:10], y), "sparse")
        one_lattice_kernel(f(X[2:10], Y), f(x[2:10], y))
    cfir = kernel.trace.find("cfir")[0]
    located = [r for r in cfir.rewrites if r.rule == "locate-fill-side"]
    if yfmt == "dense":
        # (x is A, or B where it is read second)
        assert re.fullmatch(r"while i <- j_(\w)\[2:10\] with i_\w = j_\1\[2:10\]", cfir.after_text.splitlines()[0]), \
            cfir.after_text
        assert located and located[0].after.endswith("each case writes the result's fill, nan")
    else:
        assert not located and "∪" in cfir.after_text.splitlines()[0]


def test_an_infinite_entry_times_an_absent_zero_is_nan():
    x = np.array([inf, nan, 1.0, nan, 2.0, -inf])
    y = np.array([0.0, 1.0, 0.0, 0.0, 3.0, 0.0])
    X = xp.asarray(Tensor.from_numpy(x, "sparse", fill=nan))
    Y = xp.asarray(Tensor.from_numpy(y, "sparse"))
    with np.errstate(invalid="ignore"):
        kernel = one_lattice_kernel((X * Y).reshape(2, 3), (x * y).reshape(2, 3))
    assert "A(k_A) * 0" in kernel.trace.find("cfir")[0].after_text


def test_a_fill_case_before_a_writing_one_stays():
    # (x ∪ y's case where both are stored writes the fill, NaN + NaN; the case of x alone after it must not run
    # there, so it stays a branch: the loops are right against numpy)
    (x, X) = operand(12, "sparse_vector", 41, fill=nan, odd=(nan, nan))
    (y, Y) = operand(12, "sparse_vector", 42, odd=(nan,))
    with np.errstate(invalid="ignore"):
        one_lattice_kernel((X - Y).reshape(4, 3), (x - y).reshape(4, 3), "csr")


@settings(max_examples=75, deadline=None, suppress_health_check=list(HealthCheck))
@given(seqs(), st.data())
def test_lattices_without_the_fill_points_visit_the_rest_once(s, data):
    assume(unsupported(s) is None)
    L = build_seq_lattice(s)
    quiet = data.draw(st.sets(st.integers(0, max(0, len(L.points) - 1))))
    D = drop_fill_points(L, quiet, "drawn")
    # (a point is dropped only with every point after it)
    for p in D.points:
        assert not p.writes_fill or all(D.points[e.target].writes_fill for e in p.edges if e.target is not None)
    res = check_seq_lattice(D, trials=6)
    assert res.exact, (str(s), sorted(quiet), res.missing[:1], res.extra[:1], res.repeated[:1], res.wrong_case[:1],
                       D.text())


OPS = {"sub": (np.subtract, lambda a, b: a - b), "add": (np.add, lambda a, b: a + b),
       "mul": (np.multiply, lambda a, b: a * b), "max": (np.maximum, xp.maximum),
       "where": (lambda a, b: np.where(a > 0, a, b), lambda a, b: xp.where(a > 0, a, b))}


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(sorted(OPS)), st.lists(st.tuples(st.sampled_from(["sparse_vector", "coo", "dense"]),
                                                        st.sampled_from([0.0, nan]), st.sampled_from([0.0, 0.4, 1.0]),
                                                        st.integers(0, 99)), min_size=2, max_size=2),
       st.sampled_from([None, "sparse"]))
def test_sliced_operands_of_either_fill_by_property(name, terms, out):
    # x[2:10] op y: the points writing the fill dropped, a dense side writing it alone located; against numpy
    (x, X), (y, Y) = (operand(n, fmt, seed, density, fill, (inf,) if fill != fill else ())
                      for n, (fmt, fill, density, seed) in zip((12, 8), terms))
    with np.errstate(invalid="ignore"):
        one_lattice_kernel(OPS[name][1](X[2:10], Y), OPS[name][0](x[2:10], y), out)
