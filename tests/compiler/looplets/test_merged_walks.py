"""Four sparse walks or more coiterated by one loop run in one merged loop (compiler.looplets.merged_walks,
issue 30): each walks on past its entries to the end of the last, where the product of their two phases
(entries, then fill) lowered 2^k combinations, 3^k step cases in all; where that product is more than seven
regions (an intersection, (a & b & c) | d, keep theirs). Checked by the dense oracle, the
compiled kernel and the IR interpreter; structure by the looplet lowerings and the loops of the C."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler import evaluate
from compiler.looplets import compile_program, loop_program
from tests.compiler.lattice.test_cfir_nonfinite_products import stored
from tests.compiler.lattice.test_lattice_merged_loops import unions

nan, inf = np.nan, np.inf


def check(prog, out="sparse_vector", **tensors):
    """``prog`` lowered by the looplets, checked by every oracle: its kernel."""
    outs = {} if prog.startswith("y[]") else {"a": out}
    with np.errstate(all="ignore"):
        want = evaluate(prog, **tensors)[0]
        k = ss.lower(prog, strategy="looplets", **outs, **tensors)
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    return k


def vector(values, mask, fill=0.0, fmt="sparse_vector"):
    return stored(np.array(values, dtype=float), np.array(mask, dtype=bool), fmt, fill)


def merges(k) -> list:
    return [s.note for s in k.trace.steps if s.stage == "lower:Sequence" and "walks merged" in (s.note or "")]


def loops(k) -> int:
    return k.c_source.count("while (") + k.c_source.count("for (")


B = ([1.0, 0.0, 2.0, 0.0, 3.0], [True, False, True, False, True])
C = ([0.0, 4.0, 5.0, 0.0, 0.0], [False, True, True, False, False])
D = ([6.0, 0.0, 0.0, 0.0, 7.0], [True, False, False, False, True])
E = ([0.0, 0.0, -1.0, 0.0, 8.0], [False, False, True, False, True])


def test_a_sum_of_four_sparse_vectors_walks_them_in_one_loop():
    k = check("a[i] = b[i] + c[i] + d[i] + e[i]", b=vector(*B), c=vector(*C), d=vector(*D), e=vector(*E))
    assert len(merges(k)) == 1 and "4 walks merged" in merges(k)[0]
    # one merged walk (and the C's buffer growth): the product of phases had a loop per combination, 17 in all
    assert loops(k) <= 3, k.c_source


def test_three_keep_the_product_of_their_phases():
    k = check("a[i] = b[i] + c[i] + d[i]", b=vector(*B), c=vector(*C), d=vector(*D))
    assert not merges(k)


def test_the_where_of_issue_30_over_five_vectors_of_four_fills():
    # where(a != b, where(c == d, d, e), 0.0): e's fill -inf, d's NaN; a and b run out before c, d and e
    a = vector([1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [True] + [False] * 5)
    b = vector([0.0, 2.0, 0.0, 0.0, 0.0, 0.0], [False, True, False, False, False, False])
    c = vector([0.0, 0.0, 3.0, nan, 0.0, -0.0], [False, False, True, True, False, True])
    d = vector([nan, 2.0, 3.0, 1.0, nan, 0.0], [False, True, True, True, False, True], fill=nan)
    e = vector([-inf, 5.0, -inf, inf, 9.0, -inf], [False, True, False, True, True, False], fill=-inf)
    ts = [a, b, c, d, e]
    xa, xb, xc, xd, xe = (xp.asarray(t) for t in ts)
    expr = xp.where(xa != xb, xp.where(xc == xd, xd, xe), 0.0)
    na, nb, nc, nd, ne = (t.to_numpy() for t in ts)
    with np.errstate(all="ignore"):
        want = np.where(na != nb, np.where(nc == nd, nd, ne), 0.0)
        np.testing.assert_array_equal(np.asarray(expr.compute(strategy="looplets")), want)
    k = ss.lower(expr, strategy="looplets")
    assert merges(k)
    # (the product of phases: 32 combinations, 33 loops and 4,376 lines of C; merged, one walk and its cases)
    assert loops(k) <= 3 and len(k.c_source.splitlines()) < 1500, k.c_source


@pytest.mark.parametrize("prog", ["a[i] = max(b[i], max(c[i], max(d[i], e[i])))",
                                  "a[i] = b[i] * c[i] + d[i] * e[i]", "y[] = sum[i](b[i] + c[i] + d[i] + e[i])"])
def test_exhausted_walks_and_non_finite_values(prog):
    # b runs out first, then c; d and e hold inf, -inf and NaN; e's fill is 1
    b = vector([nan, 0.0, 0.0, 0.0, 0.0, 0.0], [True] + [False] * 5)
    c = vector([0.0, -inf, 2.0, 0.0, 0.0, 0.0], [False, True, True, False, False, False])
    d = vector([1.0, 0.0, inf, 0.0, -0.0, 3.0], [True, False, True, False, True, True])
    e = vector([1.0, 2.0, 1.0, -inf, 1.0, 1.0], [False, True, False, True, False, False], fill=1.0)
    assert merges(check(prog, b=b, c=c, d=d, e=e))


def test_rows_of_one_tensor_beside_a_vector_in_one_loop():
    # (the bitwise erosion's rows, added: each combination of their phases does something of its own;
    # ANDed beside their padding most are the padding alone, a few regions of point steps that stay)
    prog = loop_program(source="def rows(V, A, d):\n    for r in _:\n        for c in _:\n            V[r, c] = "
                               "coalesce(A[~(r - 1), c], 0.0) + A[r, c] + coalesce(A[~(r + 1), c], 0.0) + d[c]\n")
    a = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 3.0, 0.0, 0.0], [4.0, 0.0, 0.0, 5.0]])
    A = ss.Tensor.from_numpy(a, "csr")
    d = ss.Tensor.from_numpy(np.array([0.0, 0.0, 0.0, 7.0]), "sparse_vector")
    k = compile_program(prog, V="csr", A=A, d=d)
    rows = np.vstack([np.zeros(4), a, np.zeros(4)])
    want = rows[:-2] + rows[1:-1] + rows[2:] + d.to_numpy()
    np.testing.assert_array_equal(k(A=A, d=d).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(A=A, d=d).to_numpy(), want)
    assert merges(k) and len(k.c_source.splitlines()) < 1800, len(k.c_source.splitlines())   # (2,478 unmerged)


def test_intersections_and_unions_of_them_keep_their_few_regions():
    # b * c * d * e does something where all four are stored only; (b * c) * d + e where b, c and d are or
    # where e is: three regions, one loop each (their steps points: test_point_steps, test_phase_order)
    for prog in ["a[i] = b[i] * c[i] * d[i] * e[i]", "a[i] = b[i] * c[i] * d[i] + e[i]"]:
        assert not merges(check(prog, b=vector(*B), c=vector(*C), d=vector(*D), e=vector(*E))), prog


def test_empty_and_all_fill_vectors():
    empty = vector([0.0] * 4, [False] * 4)
    full = vector([1.0, 2.0, 3.0, 4.0], [True] * 4)
    k = check("a[i] = b[i] + c[i] + d[i] + e[i]", b=empty, c=full, d=empty, e=vector([0.0] * 4, [False] * 4, fill=2.0))
    assert merges(k)


@settings(max_examples=5, deadline=None)
@given(unions().filter(lambda drawn: len(drawn[1]) >= 4), st.sampled_from(["sparse_vector", "dense"]))
def test_walks_of_several_operands_by_every_oracle(drawn, out):
    # (the lattice's merged loops' operands: four or five vectors of drawn formats, fills and values)
    prog, tensors = drawn
    check(prog, out=out, **tensors)


# -- a concatenation's parts: two walks or more, each in a part of its own, merge from three parts

def joined(fmts, values, ops, axis=1):
    """The concatenation of ``ops[k]`` of each of ``values`` (stored as ``fmts``) along ``axis`` by the
    looplets, checked against numpy by the kernel and the IR interpreter: its kernel."""
    arrays = [xp.asarray(v if f == "dense" else ss.Tensor.from_numpy(v, f)) for v, f in zip(values, fmts)]
    with np.errstate(all="ignore"):
        want = np.concatenate([op(v) for op, v in zip(ops, values)], axis=axis)
        k = ss.lower(xp.concat([op(a) for op, a in zip(ops, arrays)], axis=axis), strategy="looplets")
        np.testing.assert_array_equal(np.asarray(k().to_numpy()), want)
        np.testing.assert_array_equal(np.asarray(k.interpret().to_numpy()), want)
    return k


def fills_of_two(k):
    return lambda v: v * 2 if k % 2 == 0 else v + 1


M = [np.array([[1.0, 0.0, -3.0], [0.5, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 4.0, 0.0]]) * (k + 1) for k in range(4)]
M = [np.roll(m, k, axis=0) for k, m in enumerate(M)]


def test_an_hstack_of_coo_csr_and_coo_parts_walks_the_coo_rows_once():
    # (A * 2, B + 1, C * 2): B's CSR rows are dense, so only A's and C's rows are walks; their product, 4
    # combinations and a step case per set of them, lowered B's row 9 times: 1,868 lines of C
    k = joined(["coo", "csr", "coo"], M[:3], [fills_of_two(n) for n in range(3)])
    assert [n for n in merges(k) if n.startswith("2 walks merged")], merges(k)
    assert len(k.c_source.splitlines()) < 800, len(k.c_source.splitlines())


def test_two_parts_keep_the_product_of_their_phases():
    # (as the lattice keeps the paper's lattice of two operands, compiler.lattice.seqmerge)
    k = joined(["coo", "coo"], M[:2], [fills_of_two(n) for n in range(2)])
    assert not merges(k)


def test_a_walk_read_by_two_parts():
    # A's rows read by the first part and the last: two walks, merged, each part lowered once (1,866 lines of C as
    # the product of the two walks' phases)
    a, b = (ss.Tensor.from_numpy(m, "coo") for m in M[:2])
    xa, xb, xd = xp.asarray(a), xp.asarray(b), xp.asarray(M[3])
    with np.errstate(all="ignore"):
        want = np.concatenate([M[0] * 2, M[1] + 1, M[3], M[0] - 3], axis=1)
        k = ss.lower(xp.concat([xa * 2, xb + 1, xd, xa - 3], axis=1), strategy="looplets")
        np.testing.assert_array_equal(np.asarray(k().to_numpy()), want)
        np.testing.assert_array_equal(np.asarray(k.interpret().to_numpy()), want)
    assert [n for n in merges(k) if n.startswith("2 walks merged")], merges(k)
    assert len(k.c_source.splitlines()) < 800, len(k.c_source.splitlines())


@settings(max_examples=15, deadline=None)
@given(fmts=st.lists(st.sampled_from(["coo", "coo", "csr", "dense"]), min_size=3, max_size=5),
       rows=st.integers(0, 4), cols=st.integers(1, 3), seed=st.integers(0, 2 ** 16),
       density=st.sampled_from([0.0, 0.3, 1.0]), ops=st.lists(st.integers(0, 3), min_size=5, max_size=5))
def test_hstacks_of_parts_against_numpy(fmts, rows, cols, seed, density, ops):
    # (parts of fills 0 and others, NaN and ±inf among the stored values, empty matrices and all-fill ones)
    rng = np.random.default_rng(seed)
    values = [np.where(rng.random((rows, cols)) < density, rng.choice([1.0, -2.0, nan, inf, -inf], (rows, cols)), 0.0)
              for _ in fmts]
    funcs = [lambda v: v * 2, lambda v: v + 1, lambda v: v - 3, lambda v: v * 0.5]
    joined(fmts, values, [funcs[o] for o in ops[:len(fmts)]])
