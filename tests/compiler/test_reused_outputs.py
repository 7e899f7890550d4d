"""Outputs written into an earlier result's arrays (compiler.reused_outputs): a BFS step's next
frontier, declared first thing, is started clear by the runtime, fresh or from an earlier result
whose entries alone are cleared; either way the result is a fresh call's, in both call paths."""

from collections import deque

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st
from scipy.sparse.csgraph import shortest_path

import compiler as ss
from compiler.errors import FormatError, ShapeError, UsageError
from compiler.fastcall import fast_call
from compiler.looplets import compile_program, loop_program
from compiler.looplets.case_studies import (BFS, PARENT_FRONTIER, bfs_pull_parents, bfs_push_parents,
                                            bellman_ford_step, FRONTIER)
from compiler.reused_outputs import reuse

STEPS = {"push": bfs_push_parents, "pull": bfs_pull_parents}


def _graph(G):
    """A BFS's operands of ``G`` (csgraph's convention) as :class:`BFS` builds them."""
    search = BFS(G)
    return search.A, search.AT


def _frontier(n, parents: dict):
    f = np.full(n, -1, dtype=np.int64)
    for k, p in parents.items():
        f[k] = p
    return ss.Tensor.from_numpy(f, PARENT_FRONTIER, name="F")


def _visited(n, vertices):
    v = np.zeros(n, bool)
    v[list(vertices)] = True
    return ss.Tensor.from_numpy(v, "dense", name="V")


def _step(direction, A, AT, F, V):
    k = compile_program(STEPS[direction], _F=PARENT_FRONTIER, F=F, V=V, **({"A": A} if direction == "push" else {"AT": AT}))
    args = {"F": F, "V": V, **({"A": A} if direction == "push" else {"AT": AT})}
    return k, args


def _same(a: ss.Tensor, b: ss.Tensor):
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    la, lb = a.levels[0], b.levels[0]
    np.testing.assert_array_equal(la.pos, lb.pos)
    np.testing.assert_array_equal(la.srt[:la.pos[1]], lb.srt[:lb.pos[1]])
    np.testing.assert_array_equal(la.tbl, lb.tbl)
    np.testing.assert_array_equal(a.vals, b.vals)


@pytest.mark.parametrize("direction", ["push", "pull"])
def test_a_step_declares_its_frontier_in_the_runtime_not_in_c(direction):
    """The step's C no longer fills its n values and clears its n flags at each call (a loop over
    _F0_size before the work): the runtime starts the frontier clear (fails before: both loops)."""
    A, AT = _graph(sp.random(6, 6, density=0.4, format="csr", random_state=0))
    k, _ = _step(direction, A, AT, _frontier(6, {0: 0}), _visited(6, [0]))
    assert k.lowered.reset and k.lowered.initial == "fill"
    assert "_F_val[p] = -1" not in k.c_source and "_F0_tbl[p" not in k.c_source
    assert any("runtime" in step.note for step in k.trace.steps if step.stage == "lower:Declare")


@pytest.mark.parametrize("direction", ["push", "pull"])
@pytest.mark.parametrize("path", ["fast", "general", "interpreter"])
def test_a_reused_frontier_gives_a_fresh_calls_result(direction, path):
    """Round after round on a graph, each step written into the frontier before last (its arrays,
    not copies) gives what a fresh output gives, by each call path."""
    G = sp.random(40, 40, density=0.08, format="csr", random_state=3)
    A, AT = _graph(G)
    n = 40
    F, V = _frontier(n, {0: 0}), _visited(n, [0])
    k, _ = _step(direction, A, AT, F, V)
    k(**_step(direction, A, AT, F, V)[1])   # (binds: the fast path's next calls)
    visited, spare = {0}, k(**_step(direction, A, AT, F, V)[1])   # (a result to write into)
    fast = fast_call(k)
    for _ in range(6):
        args = _step(direction, A, AT, F, _visited(n, visited))[1]
        fresh = k._run(k.compiled, dict(args))
        tbl, given = spare.levels[0].tbl, dict(args, _F=reuse(spare))
        if path == "fast":
            got = fast(given)
            assert got is not None, "a call reusing an output takes the fast path"
        else:
            got = k._run(k.compiled, given) if path == "general" else k.interpret(**given)
        assert got.levels[0].tbl is tbl, "the result is written into the given arrays"
        _same(got, fresh)
        new = np.flatnonzero(got.to_numpy() >= 0)
        if not len(new):
            break
        visited |= set(new.tolist())
        spare, F = F, got


@pytest.mark.parametrize("entries", [3, 20, 39])
def test_a_reused_frontier_of_few_or_many_entries_is_cleared(entries):
    """A frontier given to reuse() is cleared entry by entry when it holds few, every slot at once
    when it holds an eighth of them or more (a BFS's middle rounds): the next step's result is a
    fresh call's either way, the values off its entries at the fill."""
    n = 40
    G = np.zeros((n, n))
    G[0, 1:entries + 1] = 1   # (0's out-neighbours: the first round's frontier, `entries` vertices)
    G[1, 0] = G[entries, n - 1 if entries < n - 1 else 0] = 1
    A, AT = _graph(sp.csr_array(G))
    F, V = _frontier(n, {0: 0}), _visited(n, [0])
    for direction in ("push", "pull"):
        k, args = _step(direction, A, AT, F, V)
        spare = k(**args)
        assert int((spare.to_numpy() >= 0).sum()) == entries
        later = _step(direction, A, AT, _frontier(n, {1: 0, entries: 0}), _visited(n, range(entries + 1)))[1]
        fresh = k._run(k.compiled, dict(later))
        got = k(**later, _F=reuse(spare))
        _same(got, fresh)
        np.testing.assert_array_equal(got.vals[~got.levels[0].tbl], -1)


def _plain_bfs(G, source):
    """Levels by a queue over csgraph's edges (a stored entry is an edge), -1 unreached."""
    C = sp.csr_array(G)
    levels = np.full(G.shape[0], -1)
    levels[source] = 0
    queue = deque([source])
    while queue:
        j = queue.popleft()
        for k in C.indices[C.indptr[j]:C.indptr[j + 1]]:
            if levels[k] < 0:
                levels[k] = levels[j] + 1
                queue.append(k)
    return levels


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 30), st.sampled_from([0.0, 0.05, 0.15, 0.4]), st.integers(0, 2**31), st.booleans(),
       st.sampled_from(["push", "pull", "auto"]))
@example(1, 0.0, 0, False, "push")      # one vertex
@example(6, 0.0, 1, True, "auto")       # no edge: the source alone
@example(8, 0.4, 2, True, "pull")       # self loops
def test_bfs_writing_each_round_into_the_last_but_one_agrees_with_a_plain_bfs(n, density, seed, loops, direction):
    """:class:`BFS` reuses the frontier before last each round: its levels are a plain queue
    BFS's and scipy's, each parent an in-neighbour one level up, on random graphs (disconnected,
    with self loops or not)."""
    rng = np.random.default_rng(seed)
    edges = rng.random((n, n)) < density
    if not loops:
        np.fill_diagonal(edges, False)
    G = sp.csr_array(edges.astype(float))
    source = int(rng.integers(0, n))
    got = BFS(G)(source, direction)
    want = _plain_bfs(G, source)
    np.testing.assert_array_equal(got.levels, want)
    hops = shortest_path(G, unweighted=True, indices=source)
    np.testing.assert_array_equal(got.levels, np.where(np.isinf(hops), -1, hops).astype(int))
    for k in np.flatnonzero(got.levels > 0):
        j = got.parents[k]
        assert edges[j, k] and got.levels[j] == got.levels[k] - 1


def test_a_long_path_reuses_each_frontier():
    """A path of 300 vertices (300 rounds, each writing into the frontier before last) and a
    disconnected part never reached."""
    n = 320
    path = np.arange(299)
    G = sp.csr_array((np.ones(299), (path, path + 1)), shape=(n, n))
    got = BFS(G)(0, "push")
    np.testing.assert_array_equal(got.levels, _plain_bfs(G, 0))
    assert got.levels[299] == 299 and (got.levels[300:] == -1).all()


def test_reuse_refuses_what_it_cannot_write_into():
    G = sp.random(8, 8, density=0.3, format="csr", random_state=5)
    A, AT = _graph(G)
    F, V = _frontier(8, {0: 0}), _visited(8, [0])
    k, args = _step("push", A, AT, F, V)
    first = k(**args)
    with pytest.raises(UsageError, match="shares its arrays with F"):
        k(**args, _F=reuse(F))        # the frontier the kernel reads
    with pytest.raises(ShapeError, match="shape"):
        k(**args, _F=reuse(_frontier(9, {})))
    with pytest.raises(UsageError, match="format"):
        k(**args, _F=reuse(ss.Tensor.from_numpy(np.full(8, -1.0), "dense")))
    r = reuse(first)
    k(**args, _F=r)
    with pytest.raises(UsageError, match="before"):
        k(**args, _F=r)                # (its arrays hold that call's result)
    # the tensor consumed refuses to be read, by numpy or by a kernel (its list of entries is stale:
    # a kernel would read past it)
    with pytest.raises(UsageError, match="given to reuse"):
        first.to_numpy()
    with pytest.raises(UsageError, match="given to reuse"):
        k(**dict(args, F=first))
    # but it still shows itself, saying why it cannot be read (a notebook cell that prints it)
    assert "unreadable: tensor" in repr(first) and "given to reuse()" in repr(first)
    # values off the entries other than the fill (a tensor not made by a kernel): refused, not misread
    odd = _frontier(8, {})
    odd.vals[3] = 5
    with pytest.raises(FormatError, match="other than its fill"):
        k(**args, _F=reuse(odd))
    with pytest.raises(UsageError, match="an input"):
        k(**dict(args, V=reuse(V)))
    D = ss.Tensor.from_numpy(np.array([0.0, np.inf]), ss.Format(ss.Dense(ss.Element(np.inf))), name="D")
    W = ss.Tensor.from_numpy(np.array([[np.inf, 1.0], [np.inf, np.inf]]).T.copy(),
                             ss.Format(ss.Dense(ss.SparseList(ss.Element(np.inf))), (1, 0)), name="A")
    start = ss.Tensor.from_numpy(np.array([True, False]), FRONTIER, name="F")
    relax = compile_program(bellman_ford_step, D=D, F=FRONTIER, _D=D, _F=start, A=W)
    out = relax(D=D, _D=D, _F=start, A=W)
    # (a Dense output updated from its start is updated in place, but never in the arrays it reads)
    with pytest.raises(UsageError, match="D: the tensor given to reuse.. shares its arrays with _D"):
        relax(D=reuse(out.D), _D=out.D, _F=start, A=W)
    with pytest.raises(UsageError, match="reuse.. is for an output of the kernel; _D is an input"):
        relax(D=D, _D=reuse(out.D), _F=start, A=W)


def test_a_changed_set_beside_another_output_is_reused_in_the_general_path():
    """Bellman-Ford's step writes the distances D (updated, given) and the changed set F (a byte map
    declared first thing): F written into an earlier round's changed set is the fresh one."""
    W = np.array([[0, 4.0, 1.0, 0], [0, 0, 0, 2.0], [0, -2.0, 0, 7.0], [0, 0, 0, 0]])
    A = ss.Tensor.from_numpy(np.where(W != 0, W, np.inf).T.copy(),
                             ss.Format(ss.Dense(ss.SparseList(ss.Element(np.inf))), (1, 0)), name="A")
    D = ss.Tensor.from_numpy(np.array([0.0, np.inf, np.inf, np.inf]), ss.Format(ss.Dense(ss.Element(np.inf))),
                             name="D")
    F = ss.Tensor.from_numpy(np.array([True, False, False, False]), FRONTIER, name="F")
    relax = compile_program(bellman_ford_step, D=D, F=FRONTIER, _D=D, _F=F, A=A)
    spare = relax(D=D, _D=D, _F=F, A=A).F
    for _ in range(4):
        fresh = relax(D=D, _D=D, _F=F, A=A)
        tbl = spare.levels[0].tbl
        got = relax(D=D, _D=D, _F=F, A=A, F=reuse(spare))
        assert got.F.levels[0].tbl is tbl
        _same(got.F, fresh.F)
        np.testing.assert_array_equal(got.D.to_numpy(), fresh.D.to_numpy())
        spare, F, D = F, got.F, got.D


def test_the_distances_are_lowered_in_place_in_an_earlier_rounds_array():
    """Bellman-Ford's distances D, an output the step updates from the value given: given as
    reuse(older), the kernel lowers older's own array (no copy), from older's values."""
    rng = np.random.default_rng(3)
    G = sp.random(12, 12, density=0.3, format="csr", random_state=4)
    G.data = rng.random(G.nnz) * 5
    A = ss.Tensor.from_scipy(G.T.tocsc(), ss.Format(ss.Dense(ss.SparseList(ss.Element(np.inf))), (1, 0)),
                             fill=np.inf, name="A")
    dist = np.full(12, np.inf)
    dist[0] = 0.0
    D = ss.Tensor.from_numpy(dist, ss.Format(ss.Dense(ss.Element(np.inf))), name="D")
    F = ss.Tensor.from_numpy(dist == 0, FRONTIER, name="F")
    relax = compile_program(bellman_ford_step, D=D, F=FRONTIER, _D=D, _F=F, A=A)
    older = None
    for _ in range(6):
        fresh = relax(D=D, _D=D, _F=F, A=A)
        if older is None:
            got = fresh
        else:
            older.vals[:] = D.vals   # (its start: the given distances, as D=D copies them)
            array = older.vals
            got = relax(D=reuse(older), _D=D, _F=F, A=A)
            assert got.D.vals is array
        np.testing.assert_array_equal(got.D.to_numpy(), fresh.D.to_numpy())
        np.testing.assert_array_equal(got.F.to_numpy(), fresh.F.to_numpy())
        older, D, F = D, got.D, got.F


@loop_program
def last_positive(M, x):
    M[...] = False
    for i in _:
        M[...] = False       # (declared again each iteration: the kernel's declaration, not the runtime's)
        if x[i] > 0:
            M[i] |= True


@pytest.mark.parametrize("values", [[1.0, 0.0, 2.0, 3.0], [1.0, 2.0, 0.0], [0.0, 0.0], []])
def test_a_declaration_inside_a_loop_stays_the_kernels(values):
    x = ss.Tensor.from_numpy(np.array(values), "dense", name="x")
    k = compile_program(last_positive, M=FRONTIER, x=x)
    assert k.lowered.reset   # (the first, outside the loop, is the runtime's)
    want = np.zeros(len(values), bool)
    if len(values) and values[-1] > 0:
        want[-1] = True
    np.testing.assert_array_equal(k(x=x).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(x=x).to_numpy(), want)
    np.testing.assert_array_equal(k(x=x, M=reuse(k(x=x))).to_numpy(), want)


@loop_program
def split_signs(P, N, x):
    P[...] = False
    N[...] = False
    for i in _:
        if x[i]:
            P[i] |= True
        if not x[i]:
            N[i] |= True


def _signs():
    x = ss.Tensor.from_numpy(np.array([True, False, True]), "dense", name="x")
    k = compile_program(split_signs, P=FRONTIER, N=FRONTIER, x=x)
    assert k.lowered.outputs and all(o.reset for o in k.lowered.outputs)
    return k, x


@pytest.mark.parametrize("path", ["fast", "general"])
def test_reuse_checks_every_array_of_every_argument_outputs_too(path):
    """One tensor given to reuse() for two outputs, a tensor over another's arrays given for the other,
    or an argument that is a view of the tensor (copied for the kernel, but the user's array): each is
    refused before anything is cleared (before, the other outputs given and what the call copied were
    not looked at: two outputs written into one table, or the tensor cleared and then refused)."""
    k, x = _signs()
    first = k(x=x)
    want = first.P.to_numpy().copy()
    run = (lambda **a: fast_call(k)(a) if path == "fast" else k._run(k.compiled, a))
    with pytest.raises(UsageError, match="is given to reuse\\(\\) for N too"):
        run(x=x, P=reuse(first.P), N=reuse(first.P))
    r = reuse(first.P)
    with pytest.raises(UsageError, match="for N too"):
        run(x=x, P=r, N=r)
    alias = ss.Tensor(first.P.root, name="alias")   # (first.P's own arrays, another tensor)
    with pytest.raises(UsageError, match="shares its arrays with N"):
        run(x=x, P=reuse(first.P), N=reuse(alias))
    np.testing.assert_array_equal(first.P.to_numpy(), want)   # (nothing cleared, nothing consumed)
    # a view of the tensor's values given as x: the general path copies it for the kernel, but the
    # kernel would write into the user's array
    flags = k(x=np.array([True, True, False])).P
    view = flags.vals[::-1]
    with pytest.raises(UsageError, match="shares its arrays with x"):
        k(x=view, P=reuse(flags))
    # given apart, each is written into, and agrees with a fresh call and the interpreter
    got = run(x=x, P=reuse(first.P), N=reuse(first.N))
    for name in ("P", "N"):
        _same(getattr(got, name), getattr(k._run(k.compiled, {"x": x}), name))
        _same(getattr(got, name), getattr(k.interpret(x=x), name))


def test_an_argument_checked_before_is_checked_again_against_each_reused_output():
    """A BFS's graph and visited set are checked against each round's reused frontier, their arrays'
    owners kept from the first check: a visited set over the table of a result given to reuse() a
    round later is still refused (the kernel would clear what it reads), one over another's is not."""
    G = sp.random(12, 12, density=0.3, format="csr", random_state=5)
    A, AT = _graph(G)
    n = 12
    F = _frontier(n, {0: 0})
    k, args = _step("push", A, AT, F, _visited(n, [0]))
    one, two, three = (k(**args) for _ in range(3))
    over = ss.Tensor(ss.Dense(ss.Element(False, two.levels[0].tbl, "bool"), n), shape=(n,), name="V", check=False)
    # (first checked against one's arrays: no alias, its owners kept)
    k(F=F, A=A, V=over, _F=reuse(one))
    with pytest.raises(UsageError, match="shares its arrays with V"):
        k(F=F, A=A, V=over, _F=reuse(two))
    got = k(F=F, A=A, V=over, _F=reuse(three))
    _same(got, k._run(k.compiled, {"F": F, "A": A, "V": over}))
