"""A collapse or split of a concatenation with a part of another fill than the result's, lowered by the lattice
strategy as one kernel (issue 30). Before, a collapse was refused naming strategy='looplets' ("l_A1 × (j_A1 ∪
U_j#l_A1): a union or concatenation in the right operand of a product is not supported"): that part walks
every coordinate of its own (it writes its fill where it stores nothing), and under a collapse the universe
beside its inner level lands in a product's right operand.

Then that part's tensor was read densely (a ``convert`` step, before each call): its levels hold every
coordinate with no union, the same walk. Now a collapse walks it as stored: in a vstack's ravel, the product
over the parts distributed leaves the union in that part's product, so the loop over the rows nests each
row's loops (compiler.lattice.seqproductnest.over_parts), as in an hstack's ravel, where the union is within
each row; merged with another operand (``* x[m]``, ``+ collapse(B)``), the product factored first, then nested
alike (main read that part converted). A split of the ravel (a reshape) still reads that part converted: a
loop over a split of a product walks groups that straddle its rows, no product to nest (a split of
``collapse(A * (B + C))`` is refused alike). (A split of a vectors'
concatenation lowered before: kept beside them.) Each kernel against the dense oracle (compiler.evaluate),
the sequence CFIR's interpreter and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.errors import StrategyError
from tests.compiler.lattice.test_seq_concat_fills import one_kernel, tensor

nan, inf = np.nan, np.inf

#: (program, the parts' shapes, its sparse output's format)
VRAVEL = ("c[m] = collapse(concat((A[k, j], A1[l, j]), (k, l) -> i), (i, j) -> m)", (2, 3), (1, 3), "sparse_vector")
HRAVEL = ("c[m] = collapse(concat((A[i, k], A1[i, l]), (k, l) -> j), (i, j) -> m)", (2, 3), (2, 2), "sparse_vector")
VSPLIT = ("c[p, q] = split(concat((A[k], A1[l]), (k, l) -> i), i -> (p, q:3))", (4,), (2,), "csr")
RESHAPE = ("c[p, q] = split(collapse(concat((A[k, j], A1[l, j]), (k, l) -> i), (i, j) -> m), m -> (p, q:3))",
           (2, 3), (1, 3), "csr")
PROGRAMS = {"vravel": VRAVEL, "hravel": HRAVEL, "vsplit": VSPLIT, "reshape": RESHAPE}


def parts(case, fa, fb, fill, odd=(inf,), odd1=(-inf,), density=0.5, seed=1):
    _, sa, sb, _ = PROGRAMS[case]
    vec = lambda f, shape: ("sparse_vector" if f != "dense" else "dense") if len(shape) == 1 else f  # noqa: E731
    return {"A": tensor(sa, vec(fa, sa), seed, odd=odd, density=density),
            "A1": tensor(sb, vec(fb, sb), seed + 1, fill=fill, odd=odd1, density=density)}


@pytest.mark.parametrize("sparse_out", [False, True])
@pytest.mark.parametrize("fill", [1.0, nan])
@pytest.mark.parametrize("fa, fb", [("csr", "csr"), ("coo", "dense"), ("dense", "coo")])
@pytest.mark.parametrize("case", sorted(PROGRAMS))
def test_a_collapse_or_split_of_a_concatenation_with_a_part_of_another_fill(case, fa, fb, fill, sparse_out):
    program, _, _, out = PROGRAMS[case]
    k, got = one_kernel(program, out if sparse_out else None, **parts(case, fa, fb, fill))
    converts = [s.note for s in k.trace.find("convert")]
    if case in ("hravel", "vravel"):
        # (each row's loops nested inside the loop over the rows: the part's union in the product's right
        # operand walks within the row, seqproductnest; nothing converted)
        assert converts == [], converts
        nested = "while m_col" in k.trace.find("cfir")[0].after_text
        assert nested == (fb != "dense")
    elif fb != "dense" and case != "vsplit":
        # (the part of fill 1 or NaN read densely, converted before each call; the trace says why)
        assert len(converts) == 1 and converts[0].startswith("A1 is "), converts
        assert "walks every coordinate of its own" in converts[0]


def test_the_first_part_of_another_fill_and_fill_0_parts_are_not_converted():
    # (parts of the result's fill store what they store: nothing is converted)
    k, _ = one_kernel(VRAVEL[0], **parts("vravel", "csr", "csr", 0.0))
    assert k.trace.find("convert") == []
    # the result's fill is the first part's: here 1, and A1 of fill 0 is the part of another fill
    t = {"A": tensor((2, 3), "csr", 3, fill=1.0, odd=(nan,)), "A1": tensor((1, 3), "coo", 4, odd=(inf,))}
    k, got = one_kernel(VRAVEL[0], **t)
    assert got.fill == 1.0 and k.trace.find("convert") == []
    k, _ = one_kernel(RESHAPE[0], **t)
    assert [s.note.split(":")[0] for s in k.trace.find("convert")] == ["A1 is coo"]


def test_empty_and_all_fill_parts():
    for density in (0.0, 1.0):
        one_kernel(VRAVEL[0], "sparse_vector", **parts("vravel", "csr", "coo", 1.0, (), (), density))
        one_kernel(HRAVEL[0], **parts("hravel", "coo", "csr", nan, (), (), density))
    one_kernel(VRAVEL[0], A=tensor((0, 3), "csr", 1), A1=tensor((1, 3), "csr", 2, fill=1.0))


def test_lower_choosing_the_strategy_weighs_the_conversion():
    # (lower() with no strategy: the lattice's refusal carries the conversion, which it weighs against the
    # looplets' kernel; either one is right)
    t = parts("reshape", "csr", "csr", 1.0)
    k = ss.lower(RESHAPE[0], **t)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(k(**t).to_numpy(), ss.evaluate(RESHAPE[0], **t)[0])
    with pytest.raises(StrategyError, match="walks every coordinate of its own") as e:
        from compiler.lattice.seqlower import lower_shape_lattice
        from compiler.trace import Trace
        program = ss.parse(RESHAPE[0])
        lower_shape_lattice(program, {n: v.format for n, v in t.items()}, Trace(),
                            tuple((n, v.shape) for n, v in t.items()), convert=False)
    assert e.value.converts[0] == "A1"


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(sorted(PROGRAMS)), st.sampled_from(["csr", "coo", "dense"]),
       st.sampled_from(["csr", "coo", "dense"]), st.sampled_from([0.0, 1.0, nan]),
       st.sampled_from([(), (nan,), (inf, -inf)]), st.sampled_from([0.0, 0.5, 1.0]), st.integers(0, 50),
       st.booleans())
@example("reshape", "coo", "csr", 1.0, (inf,), 0.5, 7, True)
def test_collapses_and_splits_of_concatenations_by_property(case, fa, fb, fill, odd, density, seed, sparse_out):
    program, _, _, out = PROGRAMS[case]
    one_kernel(program, out if sparse_out else None, **parts(case, fa, fb, fill, odd, odd, density, seed))


THREE = "c[m] = collapse(concat((A[k, j], concat((A1[l, j], A2[n, j]), (l, n) -> o)), (k, o) -> i), (i, j) -> m)"
SUMMED = "c[] = sum[m](collapse(concat((A[k, j], A1[l, j]), (k, l) -> i), (i, j) -> m))"
SWAPPED = "c[m] = collapse(concat((A1[l, j], A[k, j]), (l, k) -> i), (i, j) -> m)"


@pytest.mark.parametrize("program", [VRAVEL[0], THREE, SUMMED, SWAPPED], ids=["two", "three", "summed", "swapped"])
@pytest.mark.parametrize("density", [0.0, 0.5, 1.0])
def test_a_vstack_ravel_walks_its_parts_of_other_fills_as_stored(program, density):
    """Parts of fills 1 and NaN beside one of fill 0 (NaN and ±inf stored, empty or all stored): each part's
    rows walk its own columns, the other parts' levels not live there; nothing is converted."""
    t = {"A": tensor((2, 3), "csr", 1, odd=(inf,), density=density),
         "A1": tensor((1, 3), "csr", 2, fill=1.0, odd=(-inf,), density=density),
         "A2": tensor((2, 3), "coo", 3, fill=nan, odd=(nan,), density=density)}
    k, _ = one_kernel(program, **{n: v for n, v in t.items() if f"{n}[" in program})
    assert k.trace.find("convert") == []
    assert any(r.rule == "product-over-concat-nested" for s in k.trace.find("cfir") for r in s.rewrites)



#: a vstack's ravel merged with another operand: ``(P0 ⊔ P1) ∩ m_x``, the part of another fill's product P1
#: holding the union (main: "l_A1 × (j_A1 ∪ U_j#l_A1): a union or concatenation ... in the right operand of a
#: product is not supported", then A1 read converted)
MERGED = {"times x": f"{VRAVEL[0]} * x[m]", "plus x": f"{VRAVEL[0]} + x[m]",
          "x minus": "c[m] = x[m] - collapse(concat((A[k, j], A1[l, j]), (k, l) -> i), (i, j) -> m)",
          "plus a collapse": f"{VRAVEL[0]} + collapse(B[i, j], (i, j) -> m)",
          "times a collapse": f"{VRAVEL[0]} * collapse(B[i, j], (i, j) -> m)"}


def merged_operands(fb, fill, density, seed=1, odd=(-inf, nan)):
    return {"A": tensor((2, 3), "csr", seed, odd=(inf,), density=density),
            "A1": tensor((1, 3), fb, seed + 1, fill=fill, odd=odd, density=density),
            "x": tensor((9,), "sparse_vector", seed + 2, odd=(nan,), density=density),
            "B": tensor((3, 3), "coo", seed + 3, odd=(-inf,), density=density)}


def merged_kernel(name, out, t):
    """The kernel of ``MERGED[name]`` (checked by :func:`one_kernel`): nothing converted, the loops nested."""
    program = MERGED[name]
    k, _ = one_kernel(program, out, **{n: v for n, v in t.items() if f"{n}[" in program})
    assert k.trace.find("convert") == [], [s.note for s in k.trace.find("convert")]
    rules = [r.rule for s in k.trace.find("cfir") for r in s.rewrites]
    assert "product-over-concat-nested" in rules or "product-nested" in rules, rules
    return k


@pytest.mark.parametrize("out", [None, "sparse_vector"])
@pytest.mark.parametrize("fill", [1.0, nan])
@pytest.mark.parametrize("fb", ["csr", "coo"])
@pytest.mark.parametrize("name", sorted(MERGED))
def test_a_vstack_ravel_merged_with_another_operand_walks_its_part_as_stored(name, fb, fill, out):
    merged_kernel(name, out, merged_operands(fb, fill, 0.5))


@pytest.mark.parametrize("density", [0.0, 1.0])
def test_merged_with_empty_and_all_stored_operands(density):
    for name in ("times x", "plus a collapse"):
        merged_kernel(name, "sparse_vector", merged_operands("csr", 1.0, density, odd=()))


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(sorted(MERGED)), st.sampled_from(["csr", "coo"]), st.sampled_from([1.0, nan, -inf]),
       st.sampled_from([(), (nan,), (inf, -inf)]), st.sampled_from([0.0, 0.5, 1.0]), st.integers(0, 50),
       st.booleans())
def test_merged_by_property(name, fb, fill, odd, density, seed, sparse_out):
    merged_kernel(name, "sparse_vector" if sparse_out else None, merged_operands(fb, fill, density, seed, odd))
