"""The loop order the iteration graph picks among the orders the formats allow."""

import numpy as np
import pytest

from compiler import Tensor
from compiler.format import csr, dense, sparse_vector
from compiler.lattice import Schedule
from compiler.lattice.iteration_graph import IterationGraph
from compiler.notation import parse
from compiler.testing import check_lowered, random_sparse as rand


def order_of(prog, loops=None, **formats):
    """The order of ``loops`` (default: every index; the others run inside) the graph of ``prog`` picks."""
    from compiler.notation.ast import Index
    graph = IterationGraph.build(parse(prog), formats)
    chain = [Index(i) for i in loops] if loops else None
    inner = {i for i in graph.variables if chain and i not in chain}
    return [i.name for i in graph.order(chain, inner=inner)]


def test_a_sparse_output_is_appended_before_a_reduction_over_a_sparse_operand():
    # k indexes the sparse x, which put it first: the reduction then scattered into the CSR
    # output C, which was refused ("use a dense output")
    fm = {"T": dense(3), "x": sparse_vector(), "C": csr()}
    assert order_of("C[i, j] = T[i, j, k] * x[k]", **fm) == ["i", "j", "k"]
    rng = np.random.default_rng(1)
    T = Tensor.from_numpy(rand((4, 5, 6), 0.5, rng), dense(3), name="T")
    x = Tensor.from_numpy(rand((6,), 0.5, rng), sparse_vector(), name="x")
    check_lowered("C[i, j] = T[i, j, k] * x[k]", out=csr(), T=T, x=x)
    # a dense output may still be scattered into: the sparse x's loop comes first
    assert order_of("y[i] = T[i, k] * x[k]", T=dense(2), x=sparse_vector(), y=dense(1)) == ["k", "i"]


@pytest.mark.parametrize("schedule", [None, Schedule().split("i", "i0", "i1", 3),
                                      Schedule().split("i", "i0", "i1", 3).parallelize("i0")],
                         ids=["default", "split", "split-parallel"])
def test_a_loop_an_inner_reduction_must_follow_is_bound_last(schedule):
    # j indexes sparse levels, which put it first (loops j, i): B's nested sum over k must come
    # before j, so the reduction ran before both loops into a dense w[j, i] (n*n memory), and a
    # split of i found no automatic workspace and was refused
    p = "C[i, j] = A[i, k] * B[k, j] - D[i, k] * B[k, j]"
    assert order_of(p, "ji", A=csr(), B=csr(), D=csr(), C=dense(2)) == ["i", "j"]   # the loops around the sums
    rng = np.random.default_rng(2)
    A, B, D = (Tensor.from_numpy(rand(s, 0.3, rng), csr(), name=n) for n, s in (("A", (9, 7)), ("B", (7, 8)),
                                                                              ("D", (9, 7))))
    k = check_lowered(p, schedule, out=dense(2), checked=True, A=A, B=B, D=D)
    notes = [s.note for s in k.trace.steps if s.stage == "precompute"]
    assert len(notes) == 2
    assert all(n.endswith(f"(for each i), into a workspace {w}[j]") for n, w in zip(notes, ["w", "w_2"]))


def test_a_loop_that_is_not_outermost_names_the_reorder_that_would_make_it():
    from compiler import lower
    from compiler.errors import StrategyError
    A = Tensor.from_numpy(np.ones((3, 2)), dense(2), name="A")
    with pytest.raises(StrategyError, match=r"parallelize\(i\) does not apply: only the outermost loop can be "
                       r"parallelized, and the loops run j, i; put i first with reorder\(i, j\) before parallelize"):
        lower("y[j] = A[i, j]", A=A, options={"schedule": Schedule().parallelize("i", races="copies")})
    lower("y[j] = A[i, j]", A=A, options={"schedule": Schedule().reorder("i", "j").parallelize("i", races="copies")})


def test_two_nested_reductions_that_need_both_loops_inside_share_their_placement():
    # CSC A needs k before i, CSR B needs k before j: the first workspace was made for each i, and
    # the second then found no loop over i around it
    from compiler.format import csc
    A = Tensor.from_numpy(np.array([[1., 0], [0, 2], [3, 0]]), csc(), name="A")
    B = Tensor.from_numpy(np.array([[1., 0, 2], [0, 3, 0]]), csr(), name="B")
    D = Tensor.from_numpy(np.array([[1., 0], [0, 1], [1, 1]]), csr(), name="D")
    check_lowered("C[i, j] = A[i, k] * B[k, j] - D[i, k] * B[k, j]", out=dense(2), checked=True, A=A, B=B, D=D)


def test_a_promoted_sum_inside_another_reduction_adds_into_the_result():
    # the workspace made for each l left s[] = t_i inside the loop over l, which also reduces into
    # s: only the last l counted (20 for 53)
    B = np.ones((3, 2))
    F = Tensor.from_numpy(np.array([[1., 2], [3, 1], [2, 2]]), csr(), name="F")
    E = Tensor.from_numpy(np.array([[1., 2], [3, 4]]), csr(), name="E")
    k = check_lowered("s = sum[l, i](B[l, i] * sum[j](F[l, j] * E[j, i]))", checked=True, B=B, F=F, E=E)
    assert float(k(B=B, F=F, E=E).to_numpy()) == 53.0
    G = np.random.default_rng(5).random((2, 3, 2))
    check_lowered("y[k] = sum[l, i](G[k, l, i] * sum[j](F[l, j] * E[j, i]))", checked=True, G=G, F=F, E=E)
