"""The loop order of index notation under looplets when the output is written at random (a dense one,
issue 31): the loops read the inputs in their storage order. Column sums ``y[j] = A[i, j]`` and the
transposed SpMV ``y[j] = A[i, j] * x[i]`` of a CSR ``A`` walk A's rows and add each entry into
``y[j]`` (O(nnz), as scipy's ``A.sum(axis=0)``); before, ``j`` ran outermost and every row was
searched for ``j`` (O(rows x cols x log)). A loop program keeps its own loops."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.imperative.ir import SEARCH_FUNCTIONS, Call
from compiler.imperative.traverse import walk
from compiler.looplets.language import loop_program
from compiler.testing import check_lowered as check, random_sparse as rand


def searches(kernel) -> list:
    """The calls of the search helpers into a coordinate array in the kernel's final IR."""
    fn = kernel.trace.find("imperative")[0].after
    return [n for n in walk(fn.body) if isinstance(n, Call) and n.function in SEARCH_FUNCTIONS
            and re.search(r"_idx\d*$", n.args[0].buffer)]


def order_note(kernel) -> str:
    return " ".join(s.note for s in kernel.trace.steps if s.stage == "output-order")


@pytest.mark.parametrize("prog, fmt, note", [
    ("y[j] = A[i, j]", "csr", "the loops run i, j"),
    ("y[j] = A[i, j] * x[i]", "csr", "the loops run i, j"),
    ("y[j] = A[i, j]", "dcsr", "the loops run i, j"),
    ("y[i] = A[i, j] * x[j]", "csc", "the loops run j, i"),   # a CSC SpMV scatters its columns into y
])
def test_a_dense_output_takes_the_loops_in_the_inputs_storage_order(prog, fmt, note):
    rng = np.random.default_rng(31)
    a = rand((13, 9), 0.3, rng)
    a[3:6] = 0
    a[:, 2] = 0
    tensors = {"A": ss.Tensor.from_numpy(a, fmt, name="A")}
    if "x" in prog:
        tensors["x"] = rng.random(9 if "x[j]" in prog else 13)
    k = check(prog, strategy="looplets", checked=True, **tensors)
    assert searches(k) == [], k.c_source
    assert note in order_note(k) and "reading 0 input accesses out of their storage order" in order_note(k)


def test_an_input_read_in_order_keeps_the_outputs_indices_outermost():
    # CSR SpMV reads A in order with i outermost: nothing to reorder, no note
    rng = np.random.default_rng(4)
    k = check("y[i] = A[i, j] * x[j]", strategy="looplets", A=ss.Tensor.from_numpy(rand((6, 5), 0.4, rng), "csr"),
              x=rng.random(5))
    assert order_note(k) == ""


def test_a_loop_program_keeps_its_own_loops():
    # the user's loops are the program: j outside i, so A's rows are searched for j
    prog = loop_program(source="def colsum(y, A):\n    y[...] = 0\n    for j in _:\n        for i in _:\n"
                               "            y[j] += A[i, j]\n")
    rng = np.random.default_rng(5)
    a = rand((7, 6), 0.4, rng)
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    k = ss.lower(prog, strategy="looplets", A=A, y="dense")
    assert searches(k) != [] and order_note(k) == ""
    np.testing.assert_allclose(k(A=A).to_numpy(), a.sum(axis=0))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prog=st.sampled_from(["y[j] = A[i, j]", "y[j] = A[i, j] * x[i]", "y[i] = A[i, j] * x[j]",
                             "y[j] = max[i](A[i, j])", "C[j, i] = A[i, j]"]),
       fmt=st.sampled_from(["csr", "csc", "dcsr", "dense"]), shape=st.tuples(st.integers(0, 9), st.integers(0, 9)),
       density=st.sampled_from([0.0, 0.2, 1.0]), seed=st.integers(0, 2 ** 16))
@example(prog="y[j] = max[i](A[i, j])", fmt="csr", shape=(5, 4), density=0.2, seed=0)
def test_property_reordered_loops_agree_with_the_oracle(prog, fmt, shape, density, seed):
    rng = np.random.default_rng(seed)
    tensors = {"A": ss.Tensor.from_numpy(rand(shape, density, rng), fmt, name="A")}
    if "x" in prog:
        tensors["x"] = rng.random(shape[1] if "x[j]" in prog else shape[0])
    check(prog, strategy="looplets", **tensors)
