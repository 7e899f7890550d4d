"""A reduction of a reduction read against a tensor's storage order, in nested dense workspaces
(compiler.lattice.nested_workspaces, issue 30): ``out[i] = max[j](min[k](A[j, k, i]))`` of a
Dense(Dense(SparseList)) A and ``max[j](prod[k](sum[l](A[k, j, l] * B[l, i])))`` of a blocked B
were refused by the lattice ("A is stored in the order j, k, i, so k must be iterated before i").
Against the dense oracle, the IR and the CFIR interpreters, with fills 0, 1 and NaN, NaN and ±inf
stored, empty and all-fill tensors."""

from functools import partial

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.format import Format, csc, dense
from compiler.lattice import Setup
from compiler.lattice.cfir_interpreter import cfir_evaluate
from compiler.lattice.nested_workspaces import read_against_storage
from compiler.levels import Dense, Element, SparseBlockList, SparseList
from compiler.notation import parse
from compiler.reference import evaluate
from compiler.testing import check_lowered

nan, inf = np.nan, np.inf
check = partial(check_lowered, checked=True)
MAXMIN = "out[i] = max[j](min[k](A[j, k, i]))"
PRODSUM = "out[i] = max[j](prod[k](sum[l](A[k, j, l] * B[l, i])))"
STORED = [2.0, -1.0, 0.0, nan, inf, -inf]


def dds(fill):
    return Format(Dense(Dense(SparseList(Element(fill)))))


def tensor3(shape, fill, density, seed, fmt=dds):
    rng = np.random.default_rng(seed)
    D = np.where(rng.random(shape) < density, rng.choice(STORED, shape), fill)
    return Tensor.from_numpy(D, fmt(fill), name="A")


def note(k):
    (step,) = [s for s in k.trace.find("precompute") if "nested workspaces" in s.note]
    return step.note


def against_cfir(prog, **tensors):
    # (the CFIR built for what the tensors hold, as lower() builds it: NaN, inf)
    np.testing.assert_allclose(cfir_evaluate(parse(prog), **tensors), evaluate(prog, **tensors)[0])


@pytest.mark.parametrize("fill", [0.0, 1.0, nan], ids=["fill0", "fill1", "fillnan"])
def test_the_max_of_mins_runs_a_workspace_per_row(fill):
    D = np.full((3, 2, 4), fill)
    D[0, 1, 0], D[1, 0, 1], D[2, 0, 1], D[2, 1, 2], D[1, 1, 3] = 2, -inf, -3, nan, inf
    A = Tensor.from_numpy(D, dds(fill), name="A")
    k = check(MAXMIN, A=A)
    assert "A[j, k, i] is stored in the order j, k, i, so the min over k cannot run inside the loop over i: " \
           "for each j, it runs first into a dense workspace" in note(k)
    assert "retry" not in k.trace.stages()
    against_cfir(MAXMIN, A=A)


@pytest.mark.parametrize("out", [dense(1), Format(SparseList(Element(1.0)))], ids=["dense", "sparse"])
def test_the_output_may_be_dense_or_sparse(out):
    A = tensor3((2, 3, 5), 1.0, 0.5, 3)
    check(MAXMIN, out=out, A=A)


@pytest.mark.parametrize("shape", [(0, 2, 3), (2, 0, 3), (2, 3, 0)], ids=["no-j", "no-k", "no-i"])
def test_empty_extents(shape):
    A = tensor3(shape, 1.0, 0.5, 0)
    check(MAXMIN, A=A)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan], ids=["fill0", "fill1", "fillnan"])
def test_all_fill(fill):
    check(MAXMIN, A=tensor3((2, 3, 2), fill, 0.0, 0))


@pytest.mark.parametrize("fill", [0.0, 1.0, nan], ids=["fill0", "fill1", "fillnan"])
def test_three_nested_reductions_each_a_workspace(fill):
    """max over j of the product over k of a sum over l: B (blocked) is stored l, i; the product
    and the sum each get a dense workspace over i, the sum's inside the product's producer."""
    a = np.array([[[-3.0, 0.0, 0.0], [nan, nan, 1.0]], [[2.0, 1.0, -1.0], [inf, 0.5, 1.0]]])
    b = np.array([[-inf, fill, fill, inf], [fill, 2.0, fill, fill], [fill, fill, -3.0, -inf]])
    A = Tensor.from_numpy(a, dense(3), name="A")
    B = Tensor.from_numpy(b, Format(Dense(SparseBlockList(Element(fill)))), name="B")
    k = check(PRODSUM, A=A, B=B)
    text = note(k)
    assert "the prod over k cannot run inside the loop over i: for each j, it runs first into a dense " \
           "workspace w[i]" in text
    assert "the sum over l cannot run inside the loop over i: for each j, k, it runs first into a dense " \
           "workspace w_2[i]" in text
    against_cfir(PRODSUM, A=A, B=B)


def test_what_lowered_before_reads_nothing_against_storage():
    """The check that lets the nesting in: a statement the lattice lowers reads nothing against
    its storage, CSC summed over its rows (a precompute) included."""
    A = Tensor.from_numpy(np.eye(3), csc(), name="A")
    setup = Setup.create(parse("y[i] = A[i, j]"), {"A": A.format})
    assert read_against_storage(setup.statement, {"A": A.format}) is None
    k = check("y[i] = A[i, j] + 1", A=A)
    assert not [s for s in k.trace.find("precompute") if "nested" in s.note]



@settings(max_examples=7)
@given(ops=st.tuples(st.sampled_from(["min", "max"]), st.sampled_from(["min", "max", "sum"])),
       fill=st.sampled_from([0.0, 1.0, nan]), density=st.sampled_from([0.0, 0.3, 1.0]),
       shape=st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(1, 4)),
       perm=st.sampled_from(["A[j, k, i]", "A[k, i, j]", "A[j, i, k]"]), seed=st.integers(0, 2 ** 16))
@example(ops=("max", "min"), fill=1.0, density=0.3, shape=(3, 2, 4), perm="A[j, k, i]", seed=0)
@example(ops=("min", "sum"), fill=nan, density=1.0, shape=(2, 3, 2), perm="A[j, k, i]", seed=1)
def test_reductions_of_reductions_against_storage(ops, fill, density, shape, perm, seed):
    """Two reductions over a 3-D tensor read against its storage, any fill, NaN and ±inf stored:
    the lattice's kernel, compiled, interpreted and checked, is the oracle's."""
    A = tensor3(shape, fill, density, seed)
    check(f"out[i] = {ops[0]}[j]({ops[1]}[k]({perm}))", A=A)
