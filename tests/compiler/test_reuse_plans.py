"""A call given earlier results to write into (compiler.reuse_plans): Bellman-Ford's rounds, the
distances updated in place and the changed set cleared by its entries, take the kernel's fast
call path, each set of buffers checked once, and agree with fresh calls and with scipy; what does
not fit is still refused, naming the output."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st
from scipy.sparse.csgraph import shortest_path

import compiler as ss
from compiler.errors import FormatError, ShapeError, UsageError
from compiler.fastcall import fast_call
from compiler.looplets import compile_program
from compiler.looplets.case_studies import FRONTIER, bellman_ford_step
from compiler.reused_outputs import reuse
from compiler.values import of_array

N = 9   # (the step is lowered for its distances' shape: one kernel for every graph of N vertices)
WEIGHTS = ss.Format(ss.Dense(ss.SparseList(ss.Element(np.inf))), (1, 0))
DISTANCES = ss.Format(ss.Dense(ss.Element(np.inf)))
_KERNEL = []


def _weights(G) -> ss.Tensor:
    """``G`` (csgraph's convention: ``G[u, v]`` the edge ``u -> v``) as the step reads it, ``A[v, u]``."""
    return ss.Tensor.from_scipy(sp.csr_matrix(G).T.tocsc(), WEIGHTS, fill=np.inf, name="A")


def _start(n, source=0):
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    return (ss.Tensor.from_numpy(dist, DISTANCES, name="D"),
            ss.Tensor.from_numpy(dist == 0, FRONTIER, name="F"))


def _relax():
    """The step, compiled once for N vertices (its first call plans the fast path)."""
    if not _KERNEL:
        D, F = _start(N)
        A = _weights(sp.random(N, N, density=0.3, format="csr", random_state=0))
        k = compile_program(bellman_ford_step, D=D, F=FRONTIER, _D=D, _F=F, A=A)
        k(D=D, _D=D, _F=F, A=A)
        _KERNEL.append(k)
    return _KERNEL[0]


def _general_path_refused(*args, **kwargs):
    raise AssertionError("a call reusing its outputs took the general path")


def _rounds(k, A, D, F, monkeypatch=None):
    """Bellman-Ford's rounds from ``D``, ``F``: the first fresh, each later one written into the
    results two rounds old (the distances brought up to date where the last round lowered them), each
    checked against a fresh call of the general path; the last distances and the number of rounds."""
    first = k(D=D, _D=D, _F=F, A=A)
    spare, (D, F), rounds = (D, F), first, 1
    if monkeypatch is not None:
        monkeypatch.setattr(k, "_call", _general_path_refused)   # (the fast path alone, from here)
    while F.to_numpy().any() and rounds <= N:
        fresh = k._run(k.compiled, {"D": D, "_D": D, "_F": F, "A": A})
        old_D, old_F = spare
        old_D.vals[:] = D.vals   # (the start a round updates: the last distances)
        array, table = old_D.vals, old_F.levels[0].tbl
        got = k(D=reuse(old_D), F=reuse(old_F), _D=D, _F=F, A=A)
        assert got.D.vals is array and got.F.levels[0].tbl is table, "written into the given arrays"
        np.testing.assert_array_equal(got.D.to_numpy(), fresh.D.to_numpy())
        np.testing.assert_array_equal(got.F.to_numpy(), fresh.F.to_numpy())
        spare, (D, F), rounds = (D, F), got, rounds + 1
    return D.to_numpy(), rounds


def test_reused_rounds_take_the_fast_path_and_plan_each_set_of_buffers_once(monkeypatch):
    """Round after round, the distances (a Dense output updated from the value given) and the changed
    set (a byte map declared first thing) written into the results two rounds old go through the
    kernel's planned fast call (the general path is refused here; before, every such call took it),
    agree with fresh calls and with scipy, and each of the two alternating sets of arrays is checked
    once by each output's plan."""
    k = _relax()
    W = np.zeros((N, N))
    for u in range(N - 1):   # (a path 0 -> 1 -> ... -> 8, and a shortcut 0 -> 4 of weight 5)
        W[u, u + 1] = 1.0
    W[0, 4] = 5.0
    A, (D, F) = _weights(W), _start(N)
    plans = {o: k.output_views()[i]._plan().reuse for i, o in enumerate(k.output_names)}
    before = {o: p.planned for o, p in plans.items()}
    dist, rounds = _rounds(k, A, D, F, monkeypatch)
    np.testing.assert_array_equal(dist, shortest_path(sp.csr_matrix(W), indices=0))
    assert rounds == N
    assert {o: p.planned - before[o] for o, p in plans.items()} == {"D": 2, "F": 2}
    monkeypatch.undo()
    fast = fast_call(k)   # (the function the call planned, asked directly)
    D, F = _start(N)
    out = k(D=D, _D=D, _F=F, A=A)
    D2, F2 = _start(N)
    assert fast({"D": reuse(D2), "F": reuse(F2), "_D": out.D, "_F": out.F, "A": A}) is not None


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.05, 0.6), st.integers(0, N - 1), st.booleans())
@example(seed=1, density=0.6, source=3, negative=True)
def test_reused_rounds_agree_with_fresh_calls_and_scipy(seed, density, source, negative):
    """On random graphs (negative weights without a negative cycle: from a potential), each reused
    round gives a fresh round's distances and changed set, and the last distances are scipy's."""
    rng = np.random.default_rng(seed)
    G = sp.random(N, N, density=density, format="csr", random_state=rng)
    G.data = rng.integers(1, 9, G.nnz).astype(float)
    if negative:
        # (w(u, v) + p(u) - p(v) >= 0 for a potential p: no negative cycle, shortest paths unchanged)
        p = rng.integers(0, 5, N).astype(float)
        rows = np.repeat(np.arange(N), np.diff(G.indptr))
        G.data = G.data - p[rows] + p[G.indices] - 0.0
        G.data[G.data == 0] = 0.5   # (csgraph drops stored zeros from a weight)
    k = _relax()
    D, F = _start(N, source)
    dist, _ = _rounds(k, _weights(G), D, F)
    np.testing.assert_allclose(dist, shortest_path(G, indices=source))


def test_what_does_not_fit_a_reused_output_is_refused_naming_it():
    """A tensor of another shape, dtype or format, values in a read-only array, a
    reuse given twice, or the distances the call reads: refused naming the output, nothing written;
    a graph larger than the distances the step was lowered for is refused, naming them, too."""
    k = _relax()
    A, (D, F) = _weights(sp.random(N, N, density=0.3, format="csr", random_state=2)), _start(N)
    out = k(D=D, _D=D, _F=F, A=A)
    args = {"_D": out.D, "_F": out.F, "A": A}
    for run in (lambda **a: k(**a), lambda **a: k._run(k.compiled, a)):   # (the fast path, the general path)
        # (a larger one too: the result is a fresh call's, of the call's shape; the general path took its shape)
        with pytest.raises(ShapeError, match=r"output D has shape \(9,\) in this call, but the tensor given to "
                                             r"reuse\(\) has shape \(10,\)"):
            run(**args, D=reuse(_start(N + 1)[0]))
    with pytest.raises(UsageError, match="output D: reuse.. of a tensor of format"):
        k(**args, D=reuse(ss.Tensor.from_numpy(np.zeros(N, np.float32), ss.Format(ss.Dense(ss.Element(np.inf,
                                                                                                       dtype="float32"))))))
    with pytest.raises(UsageError, match="output D: reuse.. of a tensor of format"):
        k(**args, D=reuse(ss.Tensor.from_numpy(np.zeros(N), "sparse_vector")))
    with pytest.raises(UsageError, match="output F: reuse.. of a tensor of format"):
        k(**args, F=reuse(ss.Tensor.from_numpy(np.zeros(N, bool), "dense")))
    frozen = np.zeros(N)
    frozen.flags.writeable = False   # (a tensor over a user's read-only array: the kernel would write into it)
    with pytest.raises(UsageError, match="output D: the values of the tensor given to reuse.. are not a writeable "
                                         "contiguous float64 array"):
        k(**args, D=reuse(ss.Tensor(ss.Dense(ss.Element(np.inf, frozen, "float64"), N), shape=(N,), check=False)))
    with pytest.raises(UsageError, match="output D: the tensor given to reuse.. shares its arrays with _D"):
        k(**dict(args, D=reuse(out.D)))
    r = reuse(_start(N)[0])
    k(**args, D=r)
    with pytest.raises(UsageError, match="output D: this reuse.. was given to a call before"):
        k(**args, D=r)
    fresh = k._run(k.compiled, {"D": D, "_D": D, "_F": F, "A": A})
    np.testing.assert_array_equal(out.D.to_numpy(), fresh.D.to_numpy())
    big = _weights(sp.random(N + 1, N + 1, density=0.3, format="csr", random_state=2))
    D1, F1 = _start(N + 1)
    with pytest.raises(ShapeError, match="output D has extent 9 in mode 0, but line .* writes it up to coordinate 9"):
        k(D=reuse(_start(N)[0]), _D=D1, _F=F1, A=big)


def test_the_facts_of_a_dense_tensors_values_are_taken_once_on_the_fast_path():
    """A Dense float tensor met by the fast path for the first time has the facts of its values taken
    (in C) and kept; values holding more than the kernel assumed go to the general path, which
    lowers for them: each result is numpy's."""
    x = ss.Tensor.from_numpy(np.array([1.0, 2.0, 3.0]), "dense", name="x")
    k = ss.lower("y[i] = x[i] * z[i]", x=x, z=x)
    fast = fast_call(k)
    for values in ([1.0, -2.0, 0.5], [np.inf, 0.0, 1.0], [np.nan, 1.0, -np.inf], [0.0, -np.inf, 2.0]):
        z = ss.Tensor.from_numpy(np.array(values), "dense", name="z")
        assert "_value_facts" not in z.__dict__ or z.__dict__["_value_facts"] is None
        got = fast({"x": x, "z": z})
        assert z.__dict__["_value_facts"] == of_array(np.array(values))
        assert (got is None) == (not z.value_facts.finite)
        np.testing.assert_array_equal(k(x=x, z=z).to_numpy(), np.array([1.0, 2.0, 3.0]) * np.array(values))
