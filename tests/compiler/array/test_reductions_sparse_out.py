"""A reduction of a 3-D tensor over the axes on both sides of the one kept, into a sparse vector:
``xp.sum(A, axis=(0, 2)).compute(strategy="lattice", format="sparse")`` of a CSF or a
Dense(Dense(SparseList)) A. Found by a differential probe: the lattice refused it ("the reduction is
not innermost, so it would scatter into out"), for every sparse output format, fill and reduction;
it now gathers the result in a dense workspace over the output's extent, in one kernel (no retry,
nothing materialized). Against numpy, NaN and ±inf stored (values whose sums are exact in any
order)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from array_cases import check
from compiler import Tensor, array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, RunList, SparseList
from compiler.levels.sparse_band import SparseBand
from compiler.levels.sparse_byte_map import SparseByteMap
from compiler.levels.sparse_run_list import SparseRunList

nan, inf = np.nan, np.inf
INPUTS = {"csf": lambda f: Format(Dense(SparseList(SparseList(Element(f))))),
          "dds": lambda f: Format(Dense(Dense(SparseList(Element(f)))))}
OUTPUTS = {"sparse": lambda f: "sparse", "SparseList": lambda f: Format(SparseList(Element(f))),
           "SparseBand": lambda f: Format(SparseBand(Element(f))),
           "SparseByteMap": lambda f: Format(SparseByteMap(Element(f))),
           "SparseRunList": lambda f: Format(SparseRunList(Element(f))),
           "RunList": lambda f: Format(RunList(Element(f)))}
REDUCE = {"sum": (xp.sum, np.sum), "max": (xp.max, np.max), "min": (xp.min, np.min), "prod": (xp.prod, np.prod)}


def array(D, kind="csf", fill=0.0):
    return xp.asarray(Tensor.from_numpy(D, INPUTS[kind](fill)))


def D3(fill=0.0):
    D = np.full((2, 4, 3), fill)
    D[0, 0, 1], D[1, 0, 2], D[0, 1, 0], D[1, 1, 1], D[1, 3, 0], D[0, 3, 2] = 2.0, -1.0, nan, 0.5, inf, -inf
    return D


def one_kernel(e, fmt, strategy="lattice"):
    """The kernel computing ``e`` is the lattice's, with no retry and nothing materialized."""
    kernel = e.lower(format=fmt, strategy=strategy)
    assert kernel.strategy == "lattice"
    assert kernel.trace.find("retry") == [] and kernel.trace.find("materialize") == []
    # (a workspace gathering the result; or, for a max, min or prod into a SparseList, the reduction's loops run
    # around the output's into a dense workspace, reading no input converted: compiler.lattice.bucketed_sums)
    notes = [s.note for s in kernel.trace.find("precompute") + kernel.trace.find("loop-order")]
    assert any("workspace" in n for n in notes), notes
    return kernel


@pytest.mark.parametrize("out", sorted(OUTPUTS))
def test_the_probes_sum_into_each_sparse_format(out):
    for fill, kind in ((0.0, "csf"), (1.0, "dds"), (nan, "csf")):
        D = D3(fill)
        e = xp.sum(array(D, kind, fill), axis=(0, 2))
        fmt = OUTPUTS[out](fill)
        if fill == 0.0:
            one_kernel(e, fmt)
        with np.errstate(invalid="ignore"):   # (numpy's inf - inf)
            want = D.sum(axis=(0, 2))
        check(e, want, strategy="lattice", format=fmt)


@pytest.mark.parametrize("name", ["max", "min", "prod"])
def test_the_other_reductions(name):
    xfn, nfn = REDUCE[name]
    for fill, out in ((0.0, "SparseList"), (1.0, "RunList"), (-inf, "SparseByteMap")):
        D = D3(fill)
        e = xfn(array(D, "dds", fill), axis=(0, 2))
        fmt = OUTPUTS[out](fill)
        one_kernel(e, fmt)
        with np.errstate(invalid="ignore"):
            want = nfn(D, axis=(0, 2))
        check(e, want, strategy="lattice", format=fmt)


def test_a_product_under_the_reduction():
    """The probe's ``xp.prod(a3 * b2, axis=(0, 2))``, b2 broadcast over the first axis."""
    B = np.array([[2.0, 0.0, -1.0], [nan, 1.0, 0.0], [0.0, 0.0, 0.0], [inf, 0.5, 1.0]])
    b = xp.asarray(Tensor.from_numpy(B, "csr"))
    for fill in (0.0, 1.0):
        D = D3(fill)
        e = xp.prod(array(D, "csf", fill) * b, axis=(0, 2))
        one_kernel(e, "sparse")
        with np.errstate(invalid="ignore"):
            want = np.prod(D * B, axis=(0, 2))
        check(e, want, strategy="lattice", format="sparse")


def test_given_no_strategy_the_lattice_computes_it():
    D = D3()
    e = xp.max(array(D), axis=(0, 2))
    fmt = Format(RunList(Element(0.0)))
    one_kernel(e, fmt, strategy=None)
    check(e, D.max(axis=(0, 2)), format=fmt)


@pytest.mark.parametrize("shape", [(0, 4, 3), (2, 4, 0), (2, 0, 3)])
def test_empty_and_all_fill_inputs(shape):
    for fill in (0.0, 1.0):
        D = np.full(shape, fill)
        check(xp.sum(array(D, "csf", fill), axis=(0, 2)), D.sum(axis=(0, 2)), strategy="lattice", format="sparse")
    D = np.full((2, 3, 2), nan)
    check(xp.min(array(D, "dds", nan), axis=(0, 2)), D.min(axis=(0, 2)), strategy="lattice",
          format=Format(SparseList(Element(nan))))


@settings(max_examples=7)
@given(name=st.sampled_from(sorted(REDUCE)), axes=st.sampled_from([(0, 2), (2, 0), (0, 1), (1, 2), (-3, -1)]),
       kind=st.sampled_from(sorted(INPUTS)), out=st.sampled_from(sorted(OUTPUTS)),
       fills=st.tuples(st.sampled_from([0.0, 1.0, nan, -inf]), st.sampled_from([0.0, 1.0, nan, -inf])),
       density=st.sampled_from([0.0, 0.4, 1.0]), seed=st.integers(0, 2 ** 16))
@example(name="sum", axes=(0, 2), kind="dds", out="RunList", fills=(1.0, 0.0), density=0.4, seed=0)
@example(name="prod", axes=(0, 2), kind="csf", out="SparseBand", fills=(nan, nan), density=0.0, seed=1)
def test_reductions_over_two_axes_into_sparse_vectors(name, axes, kind, out, fills, density, seed):
    """Any of the four reductions over two axes of a 3-D tensor, into any sparse vector format,
    the input's and the output's fills 0, 1, NaN or -inf, NaN and ±inf stored: numpy's result."""
    fill, out_fill = fills
    rng = np.random.default_rng(seed)
    D = np.where(rng.random((2, 3, 2)) < density, rng.choice([2.0, -1.0, 0.5, nan, inf, -inf], (2, 3, 2)), fill)
    xfn, nfn = REDUCE[name]
    e = xfn(array(D, kind, fill), axis=axes)
    with np.errstate(invalid="ignore"):
        want = nfn(D, axis=axes)
    check(e, want, strategy="lattice", format=OUTPUTS[out](out_fill))


def test_looplets_reduce_into_run_lists_of_another_fill():
    """The probe's ``xp.min(A_csr, axis=0)`` into RunList(Element(0.0)) and ``xp.sum(A3, axis=1)`` into
    Dense(RunList(Element(1.0))) by looplets: refused ("out is RunList(Element(0.0)) with fill 0.0: it
    starts at its fill, not at inf") where SparseList outputs of the same fill computed them."""
    M = np.array([[0.0, 2.0, 0.0, nan], [-1.0, 0.0, 0.0, 0.5], [inf, 0.0, 0.0, 0.5]])
    m = xp.asarray(Tensor.from_numpy(M, "csr"))
    for name in ("min", "max", "prod"):
        xfn, nfn = REDUCE[name]
        with np.errstate(invalid="ignore"):   # (numpy's 0 * inf)
            want = nfn(M, axis=0)
        check(xfn(m, axis=0), want, strategy="looplets", format=Format(RunList(Element(0.0))))
    D = D3()
    check(xp.sum(array(D), axis=1), D.sum(axis=1), strategy="looplets", format=Format(Dense(RunList(Element(1.0)))))
