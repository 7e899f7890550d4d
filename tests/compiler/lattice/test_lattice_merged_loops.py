"""A lattice of more than seven loops (a union of four sparse operands and more) lowers to one merged loop (lattice.merge_loops): it runs while one of the
loops it stands for would, an operand out of entries absent after, so each point's case is emitted once.

TACO's form repeats a point's case in every loop over a superset of its operands, up to 2^n - 1 loops over n
sparse operands: ``where(a != b, where(c == d, d, e), 0.0)`` over five sparse vectors took 18 loops (1,495 lines
of C before its algebra was bounded by the condition, 29 loops); over 1x1x1 tensors, 4,051 lines. Checked by
the dense oracle, the CFIR interpreter, the compiled kernel and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import evaluate, parse
from compiler.lattice.cfir_interpreter import cfir_evaluate
from tests.compiler.lattice.test_cfir_nonfinite_products import stored

nan, inf = np.nan, np.inf


def check(prog, out="sparse_vector", **tensors):
    """``prog`` by every oracle, into a sparse vector ``a`` (a dense one is written by one loop per
    operand of a sum); its kernel's C and the lattice's text."""
    outs = {} if prog.startswith("y[]") else {"a": out}
    with np.errstate(all="ignore"):
        want = evaluate(prog, **tensors)[0]
        shape = np.shape(want)
        given = {n: ss.Tensor.from_numpy(np.zeros(shape), f) for n, f in outs.items()}
        np.testing.assert_array_equal(cfir_evaluate(parse(prog), **given, **tensors), want)
        k = ss.lower(prog, strategy="lattice", **outs, **tensors)
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    return k.c_source, k.trace.find("lattice")[-1].artifact("lattice").text


def vector(values, mask, fill=0.0, fmt="sparse_vector"):
    return stored(np.array(values, dtype=float), np.array(mask, dtype=bool), fmt, fill)


def test_a_sum_of_four_sparse_vectors_is_one_loop_over_their_union():
    b = vector([1.0, 0.0, 2.0, 0.0, 3.0], [True, False, True, False, True])
    c = vector([0.0, 4.0, 5.0, 0.0, 0.0], [False, True, True, False, False])
    d = vector([6.0, 0.0, 0.0, 0.0, 7.0], [True, False, False, False, True])
    e = vector([0.0, 0.0, -1.0, 0.0, 8.0], [False, False, True, False, True])
    prog = "a[i] = b[i] + c[i] + d[i] + e[i]"
    source, lattice = check(prog, b=b, c=c, d=d, e=e)
    # fifteen regions, one case each, in one loop (TACO's form: 15 loops, 32 cases)
    loops = lattice.split("loops:")[1].strip().splitlines()
    assert len(loops) == 1 and loops[0].strip().startswith("while i <- b ∪ c ∪ d ∪ e, merging b c d e:"), lattice
    assert source.count("while (") == 1 + 1   # (and the one in the C's buffer growth)
    k = ss.lower(prog, strategy="lattice", a="sparse_vector", b=b, c=c, d=d, e=e)
    assert "merged-loops" in {r.rule for s in k.trace.steps for r in s.rewrites}


def test_a_sum_of_three_keeps_tacos_seven_loops():
    # (the textbook lattice of b + c + d, as the TACO paper draws it and a student compares)
    b = vector([1.0, 0.0, 2.0, 0.0, 3.0], [True, False, True, False, True])
    c = vector([0.0, 4.0, 5.0, 0.0, 0.0], [False, True, True, False, False])
    d = vector([6.0, 0.0, 0.0, 0.0, 7.0], [True, False, False, False, True])
    source, lattice = check("a[i] = b[i] + c[i] + d[i]", b=b, c=c, d=d)
    assert len(lattice.split("loops:")[1].strip().splitlines()) == 7 and "merging" not in lattice


def test_two_loops_and_a_union_of_two_keep_their_form():
    b = vector([1.0, 0.0, 2.0], [True, False, True])
    c = vector([0.0, 4.0, 5.0], [False, True, True])
    source, lattice = check("a[i] = b[i] + c[i]", b=b, c=c)
    assert len(lattice.split("loops:")[1].strip().splitlines()) == 3 and "merging" not in lattice


def test_a_dense_operand_beside_three_sparse_ones_sweeps_once():
    # (x dense: a producer without sparse operands, so every loop sweeps U; eight loops became one)
    x = stored(np.array([1.0, 2.0, 3.0, 4.0]), np.ones(4, dtype=bool), "dense", 0.0)
    b = vector([0.0, 1.0, 0.0, 2.0], [False, True, False, True])
    c = vector([3.0, 0.0, 0.0, 4.0], [True, False, False, True])
    d = vector([0.0, 5.0, 6.0, 0.0], [False, True, True, False])
    source, lattice = check("a[i] = x[i] + b[i] * 2.0 + c[i] + d[i]", x=x, b=b, c=c, d=d)
    assert "while i <- U, merging" in lattice
    assert source.count("while (") + source.count("for (") <= 2


@pytest.mark.parametrize("prog", ["a[i] = max(b[i], max(c[i], d[i]))", "a[i] = b[i] * c[i] + d[i] * e[i]",
                                  "y[] = sum[i](b[i] + c[i] + d[i])"])
def test_exhausted_operands_and_non_finite_values(prog):
    # b runs out first, then c; d and e hold inf, -inf and NaN; e's fill is 1 (b * c + d * e: d alone computes)
    b = vector([nan, 0.0, 0.0, 0.0, 0.0, 0.0], [True] + [False] * 5)
    c = vector([0.0, -inf, 2.0, 0.0, 0.0, 0.0], [False, True, True, False, False, False])
    d = vector([1.0, 0.0, inf, 0.0, -0.0, 3.0], [True, False, True, False, True, True])
    e = vector([1.0, 2.0, 1.0, -inf, 1.0, 1.0], [False, True, False, True, False, False], fill=1.0)
    tensors = {"b": b, "c": c, "d": d, "e": e}
    check(prog, **{n: t for n, t in tensors.items() if f"{n}[" in prog})


VALUES = [1.0, -2.0, 0.0, -0.0, nan, inf, -inf]


@st.composite
def unions(draw):
    """Three to five vectors of drawn formats, fills (0, 1, NaN, ±inf) and stored values, and a sum, min or
    product-of-sums over them."""
    n = draw(st.integers(0, 6))
    count = draw(st.integers(3, 5))
    names = "bcdef"[:count]
    tensors = {}
    for name in names:
        fill = draw(st.sampled_from([0.0, 1.0, nan, inf, -inf]))
        values = draw(st.lists(st.sampled_from(VALUES + [fill]), min_size=n, max_size=n))
        mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        tensors[name] = vector(values, mask, fill, draw(st.sampled_from(["sparse_vector", "sparse_vector", "dense"])))
    form = draw(st.sampled_from(["+", "min", "mix"]))
    if form == "+":
        rhs = " + ".join(f"{x}[i]" for x in names)
    elif form == "min":
        rhs = f"{names[0]}[i]"
        for x in names[1:]:
            rhs = f"min({rhs}, {x}[i])"
    else:
        rhs = f"({names[0]}[i] + {names[1]}[i]) * ({' + '.join(f'{x}[i]' for x in names[2:])})"
    return f"a[i] = {rhs}", tensors


@settings(max_examples=6, deadline=None)
@given(unions())
def test_unions_of_several_operands_by_every_oracle(drawn):
    prog, tensors = drawn
    check(prog, **tensors)
