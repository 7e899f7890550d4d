"""An outer merged loop runs one case too (cfir_builder._one_case with the loops below, ``_empty_below``): over
3-D operands every level merges, each operand descending into its fiber where it is at the coordinate and
empty below where it is not, so the nest is one loop per level rather than one per lattice point per level.

A nested ``where`` over 1x1x1 tensors of COO, CSF and dense formats and fills 0, 1, NaN and inf (r7, N=1) had
a nest of cases per region at i and at j: 19,890 lines of C and 745 loops, 12 s to lower; N=2 57,195 lines,
100 s. A COO matmul divided by a ``where`` of a NaN fill set up its workspace over j once per case of i: 3,559
lines at 6x5x4. Where a level below an operand is Dense (located, not iterated) or the loop reads an operand's
value at its own level, the lattice's points stay. Each kernel is checked by the dense oracle, the CFIR
interpreter, the compiled kernel and the IR interpreter (``check``)."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import evaluate, values
from compiler.array.build import WHERE
from compiler.lattice.cfir_builder import build_cfir
from compiler.lattice.cfir_interpreter import cfir_evaluate
from compiler.lattice.plan import Setup
from compiler.notation import parse
from tests.compiler.lattice.test_cfir_nonfinite_products import stored
from tests.compiler.lattice.test_lattice_one_case import check

nan, inf = np.nan, np.inf

#: 3-D formats by name, each for a fill: sparse at every level, dense, and Dense above or between sparse levels
FORMATS = {
    "coo": lambda f: "coo",
    "csf": lambda f: "csf",
    "dense": lambda f: "dense",
    "dense-csf": lambda f: f"Dense(SparseList(SparseList(Element({f!r}))))",
    "csf-dense": lambda f: f"SparseList(Dense(SparseList(Element({f!r}))))",
    "csf-coo": lambda f: f"SparseList(SparseCOO(2, Element({f!r})))",
}
NAMES = "ABCDEFGH"


def operand(values, mask, fmt, fill):
    return stored(np.asarray(values, dtype=float), np.asarray(mask, dtype=bool), FORMATS[fmt](fill), fill)


def nested(n: int, names=NAMES) -> str:
    """r7's statement: ``A`` under ``n`` levels of ``where(x > y, e, where(z != e, u, v))``, operands in turn."""
    x = [f"{c}[i, j, k]" for c in names]
    e = x[0]
    for lvl in range(n):
        at = [x[(2 * lvl + d) % len(x)] for d in range(1, 6)]
        e = f"where({at[0]} > {at[1]}, {e}, where({at[2]} != {e}, {at[3]}, {at[4]}))"
    return f"out[i, j, k] = {e}"


def r7(n: int):
    """The tensors of r7: 1x1x1, formats COO, CSF, dense, COO and fills 0, 1, NaN, inf in turn."""
    fills, fmts = [0.0, 1.0, nan, inf], ["coo", "csf", "dense", "coo"]
    tensors = {}
    for k, name in enumerate(NAMES[:min(2 * n + 4, len(NAMES))]):
        value = float(k) - 3.0 if k % 3 else fills[k % 4]
        tensors[name] = operand([[[value]]], [[[True]]], fmts[k % 4], fills[k % 4])
    return nested(n), tensors


def loops(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if line.strip().startswith(("while (", "for ("))]


def test_r7_nests_one_loop_per_level():
    text, tensors = r7(1)
    k = check(text, "coo", **tensors)
    # one loop at each of i, j and k (main: 745 loops and 19,890 lines), the segments of the COO A, D, E at
    # each level and the output's growth
    merged = [x for x in loops(k.c_source) if " || " in x]
    assert len(merged) == 3, merged
    assert len(loops(k.c_source)) <= 14, loops(k.c_source)
    assert len(k.c_source.splitlines()) <= 400, len(k.c_source.splitlines())
    # where an operand is not at i its fiber below is empty: the CSF B's and the COO A's segment
    assert "int64_t pB1_end = iB == i ? B1_pos[pB0 + 1] : pB1;" in k.c_source
    assert "int64_t pA0_1_end = iA == i ? sA0 : pA0_1;" in k.c_source
    cfir = k.trace.find("cfir")[-1].artifact("cfir").text
    assert "(one case: an operand not at i is empty below it)" in cfir
    assert "(one case: an operand not at k reads its fill)" in cfir
    assert "switch" not in cfir and cfir.count("while ") == 3, cfir


def test_r7_nested_twice_is_as_long_as_once():
    # N=2: 57,195 lines and 1,916 loops on main; eight operands now, the same three merged loops
    text, tensors = r7(2)
    k = check(text, "coo", **tensors)
    assert len([x for x in loops(k.c_source) if " || " in x]) == 3
    assert len(k.c_source.splitlines()) <= 450, len(k.c_source.splitlines())


def test_nonfinite_and_signed_zero_stored_values_over_every_format():
    # 2x3x2 operands of six formats, fills NaN, inf, -inf, 0, 1, -0.0 ... stored beside their own fill
    rng = np.random.default_rng(7)
    values = [1.0, -2.0, 0.0, -0.0, nan, inf, -inf]
    fills = {"A": nan, "B": 0.0, "C": inf, "D": -inf, "E": 1.0, "F": -0.0}
    fmts = dict(zip("ABCDEF", ["coo", "csf", "csf-coo", "dense-csf", "coo", "csf"]))
    tensors = {n: operand(rng.choice(values + [f], size=(2, 3, 2)), rng.random((2, 3, 2)) < 0.5, fmts[n], f)
               for n, f in fills.items()}
    k = check(nested(1, "ABCDEF"), "csf", **tensors)
    # A's NaN fill: every coordinate is visited (U), one loop a level
    cfir = k.trace.find("cfir")[-1].artifact("cfir").text
    assert "switch" not in cfir and cfir.count("while ") == 3, cfir
    assert len(k.c_source.splitlines()) <= 400, len(k.c_source.splitlines())


def test_a_dense_level_below_keeps_the_points():
    # C's middle level is Dense: located under i, not iterated, so an empty fiber cannot make C absent below
    # a coordinate C is not at; the loop over i keeps a case per point, each correct
    rng = np.random.default_rng(1)
    fills = {"A": 0.0, "B": 1.0, "C": inf, "D": 2.0}
    fmts = {"A": "coo", "B": "csf", "C": "csf-dense", "D": "coo"}
    tensors = {n: operand(rng.choice([1.0, -1.0, nan, f], size=(3, 2, 2)), rng.random((3, 2, 2)) < 0.4,
                          fmts[n], f) for n, f in fills.items()}
    prog = parse(nested(1, "ABCD"), {"where": WHERE})
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(cfir_evaluate(prog, **tensors), evaluate(prog, **tensors)[0])
    # (its CFIR, as lower() builds it: the C of a case per point, 4,627 lines, is not compiled here)
    with values.assuming({n: t.value_facts for n, t in tensors.items()}):
        setup = Setup.create(prog, {n: t.format for n, t in tensors.items()})
        cfir = str(build_cfir(setup.statement, setup))
    assert "merging" in cfir and "(one case: an operand not at i is empty below it)" not in cfir, cfir


def test_a_coo_matmul_over_a_where_sets_its_workspace_up_once():
    # r4 at 6x5x4: A @ B / where(C > 1, D, E) with D's fill NaN (every coordinate visited), A a COO matrix; main
    # set the workspace over j up in each of the 16 cases of i: 3,559 lines and 370 loops
    rng = np.random.default_rng(0)

    def matrix(shape, fill=0.0):
        return np.where(rng.random(shape) < 0.5, rng.choice([1.0, 2.0, -1.0, 0.0, -0.0, nan, inf], size=shape), fill)
    tensors = {"A": ss.Tensor.from_numpy(matrix((6, 5)), "coo"), "B": ss.Tensor.from_numpy(matrix((5, 4)), "dense"),
               "C": ss.Tensor.from_numpy(matrix((6, 4)), "dcsr"),
               "D": ss.Tensor.from_numpy(matrix((6, 4), nan), "dcsr", fill=nan),
               "E": ss.Tensor.from_numpy(matrix((6, 4)), "dcsr")}
    k = check("out[i, j] = sum[k](A[i, k] * B[k, j]) / where(C[i, j] > 1.0, D[i, j], E[i, j])", "csr", **tensors)
    assert len(k.c_source.splitlines()) <= 450, len(k.c_source.splitlines())
    assert len(loops(k.c_source)) <= 30, loops(k.c_source)
    assert sum("i < A0_size" in x for x in loops(k.c_source)) == 1


FILLS = [0.0, 1.0, -1.0, nan, inf, -inf, -0.0]
VALUES = [1.0, -2.0, 0.0, -0.0, nan, inf, -inf]


@st.composite
def nested_wheres(draw):
    """Four to six 3-D operands of drawn formats and fills, 1-4 per mode (some all fill, some empty: a mask of
    none), NaN, +-inf and -0.0 stored, under a nested ``where`` of one or two levels."""
    shape = tuple(draw(st.integers(1, 4)) for _ in range(3))
    names = NAMES[:draw(st.integers(4, 6))]
    tensors = {}
    for name in names:
        fill = draw(st.sampled_from(FILLS))
        fmt = draw(st.sampled_from(sorted(set(FORMATS) - {"csf-dense"})))
        size = int(np.prod(shape))
        values = draw(st.lists(st.sampled_from(VALUES + [fill]), min_size=size, max_size=size))
        density = draw(st.sampled_from([0.0, 0.5, 1.0]))
        mask = draw(st.lists(st.booleans(), min_size=size, max_size=size)) if density == 0.5 else [density > 0] * size
        tensors[name] = operand(np.reshape(values, shape), np.reshape(mask, shape), fmt, fill)
    return nested(draw(st.integers(1, 2)), names), tensors


@settings(max_examples=6, deadline=None)
@given(nested_wheres())
@example((nested(1, "ABCD"), {n: operand(np.full((2, 1, 3), v), np.ones((2, 1, 3), bool), fmt, f)
                              for n, v, fmt, f in zip("ABCD", [1.0, nan, -0.0, inf], ["coo", "csf", "csf-coo", "coo"],
                                                      [nan, 0.0, inf, 1.0])}))
def test_nested_wheres_over_drawn_formats_and_fills(drawn):
    text, tensors = drawn
    k = check(text, "coo", **tensors)
    # every merged loop runs one case, at the outer levels too (no level below is Dense): a nest per point before
    cfir = k.trace.find("cfir")[-1].artifact("cfir").text
    merged = [line for line in cfir.splitlines() if "merging" in line]
    assert all("(one case: " in line for line in merged), cfir
    if len(merged) == 3:   # (a lattice of seven loops or fewer, three operands' at most, keeps TACO's form)
        assert len(k.c_source.splitlines()) <= 400, len(k.c_source.splitlines())
