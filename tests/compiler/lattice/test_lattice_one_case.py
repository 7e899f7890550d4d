"""A merged loop (lattice.merge_loops) whose operands are read at its index runs one case (cfir_builder._one_case):
each operand reads its stored value where its iterator is at the coordinate and its fill elsewhere, and the
statement computes every region's value as written, where one of the merged loops would have run a case.

A case per region repeated the statement's expression, specialised, once per region: ``where(b != c, where(d == e,
e, f), where(x > g, g, h))`` over seven sparse vectors and a dense one had up to 128 regions, 786 lines of C; over
1x1x1 tensors of the differential test, 8,393 lines. Levels of repeated coordinates (COO) and
workspaces are merged too: a batched matmul of a COO tensor divided by a where (a NaN fill, so every coordinate
is visited) took 41,550 lines over 1x1x3 tensors, its loops over k 16 per case of j.
Checked by the dense oracle, the CFIR interpreter, the compiled kernel and the IR interpreter."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import evaluate
from compiler.array.build import WHERE
from compiler.lattice.cfir_interpreter import cfir_evaluate
from compiler.notation import parse
from tests.compiler.lattice.test_cfir_nonfinite_products import stored

nan, inf = np.nan, np.inf


def check(text, out="sparse_vector", **tensors):
    """``text`` (``where`` allowed) into its output of format ``out`` by every oracle; its kernel."""
    prog = parse(text, {"where": WHERE})
    outs = {prog.lhs.tensor: out}
    with np.errstate(all="ignore"):
        want = evaluate(prog, **tensors)[0]
        given = {prog.lhs.tensor: ss.Tensor.from_numpy(np.zeros(np.shape(want)), out)}
        np.testing.assert_array_equal(cfir_evaluate(prog, **given, **tensors), want)
        k = ss.lower(prog, strategy="lattice", **outs, **tensors)
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    return k


def vector(values, mask, fill=0.0, fmt="sparse_vector"):
    return stored(np.array(values, dtype=float), np.array(mask, dtype=bool), fmt, fill)


SELECT = "a[i] = where(b[i] != c[i], where(d[i] == e[i], e[i], f[i]), where(x[i] > g[i], g[i], h[i]))"


def test_seven_sparse_operands_of_different_fills_run_one_case():
    fills = {"b": 0.0, "c": 1.0, "d": nan, "e": 0.0, "f": -inf, "g": inf, "h": 2.0}
    values = [1.0, -2.0, 0.0, -0.0, nan, inf, -inf, 3.0]
    rng = np.random.default_rng(3)
    tensors = {n: vector(rng.permutation(values + [f]), rng.random(9) < 0.5, f) for n, f in fills.items()}
    tensors["x"] = vector(rng.permutation(values + [0.0]), np.ones(9, dtype=bool), 0.0, "dense")
    k = check(SELECT, **tensors)
    source = k.c_source
    # one store of a's value (a case per region: 128), and C of a size set by the operands, not the regions
    assert source.count("a_val[pa0] =") == 1
    assert len(source.splitlines()) <= 90 + 10 * len(tensors), len(source.splitlines())
    # each operand read once, as its value or its fill (b stored where ib == i, else b's fill 0.0)
    assert "double vb = ib == i ? b_val[pb0] : 0.0;" in source
    assert "double vg = ig == i ? g_val[pg0] : INFINITY;" in source
    assert "one-case" in {r.rule for s in k.trace.steps for r in s.rewrites}
    cfir = k.trace.find("cfir")[-1].artifact("cfir").text
    assert "(one case: an operand not at i reads its fill)" in cfir


def test_the_one_case_runs_where_a_merged_loop_would():
    # a * (b + c + d + e): four loops a ∩ b, a ∩ c, ... merged; where b alone is stored a is absent, 0 * b
    # is not computed (b's inf would make a NaN the lattice's regions never store), as in the regions' cases
    a = vector([2.0, 0.0, -1.0, 0.0, 3.0], [True, False, True, False, True])
    b = vector([1.0, 5.0, 0.0, 0.0, 2.0], [True, True, False, False, True])
    c = vector([0.0, 0.0, 4.0, 1.0, 0.0], [False, False, True, True, False])
    d = vector([0.0, 0.0, 0.0, 6.0, -2.0], [False, False, False, True, True])
    e = vector([1.0, 0.0, 0.0, 0.0, 0.0], [True, False, False, False, False])
    k = check("a[i] = y[i] * (b[i] + c[i] + d[i] + e[i])", y=a, b=b, c=c, d=d, e=e)
    assert "if ((iy == i && ib == i) || (iy == i && ic == i) || (iy == i && id == i) || (iy == i && ie == i))" \
        in k.c_source


def test_a_union_of_every_operand_tests_no_case():
    # b + c + d + e: each operand alone is a merged loop, one is always at i; a test would always hold
    vals = [[1.0, -0.0, nan, 0.0], [0.0, 2.0, 0.0, inf], [-inf, 0.0, 0.0, 1.0], [0.0, 0.0, 4.0, -0.0]]
    masks = [[True, True, True, False], [False, True, False, True], [True, False, False, True],
             [False, False, True, True]]
    tensors = {n: vector(v, m) for n, v, m in zip("bcde", vals, masks)}
    k = check("a[i] = b[i] + c[i] + d[i] + e[i]", **tensors)
    loop = k.c_source[k.c_source.index("while (pb0 < pb0_end"):]
    assert "double vb = ib == i ? b_val[pb0] : 0.0;" in loop
    assert "if (" not in loop[:loop.index("\n    }\n")], loop


def test_the_least_coordinate_is_one_comparison_a_line():
    # (nested, the least of seven coordinates repeated the first 64 times)
    k = ss.lower(parse(SELECT, {"where": WHERE}), strategy="lattice", a="sparse_vector",
                 **{n: "sparse_vector" for n in "bcdefgh"}, x="dense")
    assert "int64_t i = ib;\n" in k.c_source and "i = ih < i ? ih : i;" in k.c_source
    assert max(len(line) for line in k.c_source.splitlines()) < 250


def test_a_coo_matmul_over_a_where_of_a_nan_fill_merges_its_loops():
    # A @ B / where(C > 1, D, E): 0 / 0 is the fill, NaN, so each coordinate is visited (U); A is a COO matrix
    # (rows repeated), A @ B a workspace over j. Both were refused by the merge: 1,063 loops, 16 over i, 336 over j
    P = np.array([[2.0, 0.0], [0.0, 0.0], [1.0, 3.0]])
    C = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    D = np.array([[nan, 0.0, 2.0], [1.0, nan, nan], [nan, -0.0, inf]])
    E = np.array([[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [0.0, 0.0, 0.0]])
    B = np.array([[1.0, 0.0, -inf], [0.0, 0.0, 1.0]])
    tensors = {"A": ss.Tensor.from_numpy(P, "coo"), "B": ss.Tensor.from_numpy(B, "dense"),
               "C": ss.Tensor.from_numpy(C, "dcsr"), "D": ss.Tensor.from_numpy(D, "dcsr", fill=nan),
               "E": ss.Tensor.from_numpy(E, "dcsr")}
    k = check("out[i, j] = sum[k](A[i, k] * B[k, j]) / where(C[i, j] > 1.0, D[i, j], E[i, j])", "csr", **tensors)
    # one merged loop over i (A's rows and C, D, E each stored or not: 16 cases), at most three loops over j
    # in each (the TACO form of w and the operands of the where stored in that case)
    loops = [line.strip() for line in k.c_source.splitlines() if line.strip().startswith("while (")]
    assert sum("i < A0_size" in line for line in loops) == 1
    assert sum("j < B1_size" in line for line in loops) <= 3 * 16


VALUES = [1.0, -2.0, 0.0, -0.0, nan, inf, -inf]
FILLS = [0.0, 1.0, -1.0, 2.0, nan, inf, -inf]


@st.composite
def many_fills(draw):
    """Four to seven vectors of distinct drawn fills with NaN and ±inf among their stored values, and a
    statement over them: a where of comparisons, a sum, or a product of sums with a min."""
    n = draw(st.integers(0, 5))
    names = "bcdefgh"[:draw(st.integers(4, 7))]
    fills = draw(st.permutations(FILLS))
    tensors = {}
    for name, fill in zip(names, fills):
        values = draw(st.lists(st.sampled_from(VALUES + [fill]), min_size=n, max_size=n))
        mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        tensors[name] = vector(values, mask, fill)
    x = [f"{v}[i]" for v in names]
    form = draw(st.sampled_from(["where", "+", "mix"]))
    if form == "where":
        rhs = f"where({x[0]} != {x[1]}, where({x[2]} > {x[3]}, {x[2]}, {x[-1]}), {x[-2]})"
    elif form == "+":
        rhs = " + ".join(x)
    else:
        rhs = f"({x[0]} + {x[1]}) * min({' + '.join(x[2:-1])}, {x[-1]})"
    return f"a[i] = {rhs}", tensors


@settings(max_examples=8, deadline=None)
@given(many_fills())
def test_operands_of_distinct_fills_by_every_oracle(drawn):
    text, tensors = drawn
    check(text, **tensors)
