"""Outputs of a scheduled one-pass kernel, assembled by the lattice kernel itself (issue 29, item 3).

A ``reorder`` command chooses the loops' order, as ``order=`` does, and leaves them the loops a
one-pass kernel runs (``compiler.lattice.conversions.assembled_in_one_pass``): TACO's ``{sparse,
dense}`` (a SparseList of Dense rows, a block of slots per row kept), a SparseHash or SparseByteMap
under Dense levels and a SparseHash of SparseHashes are assembled as the levels say, as without a
schedule. So are they under a ``split`` (its loops bind the output's coordinates as the loop they
derive from) and a ``precompute`` (the workspace's consumer stores them as the loops would). Before,
any schedule but ``reorder`` sent them through a SparseList stand-in converted after each call (the
trace's ``convert`` step); ``parallelize`` makes the kernel two-phase, which builds the first three
itself (test_lattice_two_phase_threads.py). Each kernel is checked against the dense oracle, the IR
interpreter and the storage ``Tensor.from_numpy`` builds, by example and by property.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.format import Format
from compiler.lattice import Schedule
from compiler.levels import Dense, SparseByteMap, SparseHash, SparseList
from compiler.testing import assert_canonical, check_lowered, random_sparse
from tests.compiler.lattice.output_cases import FILLS, leaf

#: each output format, for a fill, with what the lowering step says of how the kernel assembles it
FORMATS = {"SparseList(Dense)": (lambda fill: Format(SparseList(Dense(leaf(fill)))), "block of slots"),
           "Dense(SparseHash)": (lambda fill: Format(Dense(SparseHash(leaf(fill)))),
                                 "its table is built after the loops"),
           "Dense(SparseByteMap)": (lambda fill: Format(Dense(SparseByteMap(leaf(fill)))),
                                    "marked and stored in its slot"),
           "SparseHash(SparseHash)": (lambda fill: Format(SparseHash(SparseHash(leaf(fill)))),
                                      "its table is built after the loops")}
#: each expression with the loop order its schedule gives (the inputs' storage order: CSR and DCSR)
EXPRS = {"sum": ("C[i, j] = A[i, j] + B[i, j]", ("i", "j")), "product": ("C[i, j] = A[i, j] * B[i, j]", ("i", "j")),
         "spmm": ("C[i, k] = A[i, j] * D[j, k]", ("i", "j", "k"))}


def inputs(shape, density, fill, seed):
    rng = np.random.default_rng(seed)
    n, m = shape
    a, b = (random_sparse((n, m), density, rng, fill=fill) for _ in range(2))
    d = random_sparse((m, 3), density, rng, fill=fill)
    return {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "dcsr", fill=fill),
            "D": Tensor.from_numpy(d, "csr", fill=fill)}


#: schedules beyond reorder, for an expression's loop order: a split of the rows' loop, and (a
#: reduction's) the output's rows precomputed in a workspace
SCHEDULES = {"split": lambda order: Schedule().reorder(*order).split("i", "i0", "i1", 2),
             "precompute": lambda order: Schedule().reorder(*order).precompute(order[-1])}


def assembled_with_reorder(k, fmt, order, how, command="reorder"):
    """The kernel applied the schedule's ``command`` and built ``fmt`` itself: nothing converted,
    the lowering says how."""
    assert not k.lowered.conversions and k.lowered.output_format == fmt
    assert not any(s.stage == "convert" for s in k.trace.steps)
    assert any(s.stage == f"schedule:{command}" for s in k.trace.steps)
    assert any(how in s.note for s in k.trace.steps if s.stage == "lower")


@pytest.mark.parametrize("out", list(FORMATS))
@pytest.mark.parametrize("what", ["sum", "spmm"])
def test_a_reordered_kernel_assembles_its_output(out, what):
    expr, order = EXPRS[what]
    tensors = {t: v for t, v in inputs((6, 5), 0.4, 0.0, seed=21).items() if f"{t}[" in expr}
    fmt, how = FORMATS[out][0](0.0), FORMATS[out][1]
    # (a bounds-checked build of the sum: every entry of either operand reaches the output's assembly)
    k = check_lowered(expr, out=fmt, checked=what == "sum", options={"schedule": [("reorder", *order)]}, **tensors)
    assembled_with_reorder(k, fmt, order, how)
    got = k(**tensors)
    assert got.format == fmt
    assert_canonical(got, ss.evaluate(expr, **tensors)[0])


@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(FORMATS)), what=st.sampled_from(list(EXPRS)),
       shape=st.tuples(st.integers(1, 6), st.integers(1, 6)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), seed=st.integers(0, 2 ** 16),
       command=st.sampled_from(["reorder", "split"]))
def test_property_a_reordered_kernel_assembles_its_output(out, what, shape, fill, density, seed, command):
    expr, order = EXPRS[what]
    tensors = {t: v for t, v in inputs(shape, density, fill, seed).items() if f"{t}[" in expr}
    want, out_fill = ss.evaluate(expr, **tensors)
    fmt, how = FORMATS[out][0](float(out_fill)), FORMATS[out][1]
    schedule = [("reorder", *order)] if command == "reorder" else SCHEDULES[command](order)
    k = ss.lower(expr, strategy="lattice", options={"schedule": schedule}, C=fmt, **tensors)
    assembled_with_reorder(k, fmt, order, how, command)
    got = k(**tensors)
    assert got.format == fmt
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    assert_canonical(got, want)


@pytest.mark.parametrize("out", list(FORMATS))
@pytest.mark.parametrize("what, command, fill", [("sum", "split", 0.0), ("spmm", "precompute", np.nan)])
def test_a_split_or_precomputing_kernel_assembles_its_output(out, what, command, fill):
    # before: built as a SparseList stand-in and converted after each call (the convert step)
    expr, order = EXPRS[what]
    tensors = {t: v for t, v in inputs((7, 5), 0.4, fill, seed=22).items() if f"{t}[" in expr}
    want, out_fill = ss.evaluate(expr, **tensors)
    fmt, how = FORMATS[out][0](float(out_fill)), FORMATS[out][1]
    k = check_lowered(expr, SCHEDULES[command](order), fmt, checked=what == "sum", **tensors)
    assembled_with_reorder(k, fmt, order, how, command)
    assert_canonical(k(**tensors), want)
