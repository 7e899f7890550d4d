"""A product that nests its operands' loops (a union in its right operand) merged with another operand, lowered by
the lattice strategy (issue 30). ``c[m] = collapse(A[i, j] * (B[i, j] + C[i, j]), (i, j) -> m) + w[m]`` iterates
``((i_A ∩ (i_B ∪ i_C)) × (j_A ∩ (j_B ∪ j_C))) ∪ m_w``; on main it was refused naming looplets ("a union or
concatenation (j_B ∪ j_C) in the right operand of a product is not supported"), and the array front end retried it
with the product materialized. Now the union is factored into one product, ``(i_A ∩ (i_B ∪ i_C) ∪ π0(m_w, 4)) ×
(j_A ∩ (j_B ∪ j_C) ∪ π1(m_w, 4))`` (w split into the product's rows and columns), whose loops nest
(compiler.lattice.seqproductnest.factored).

The factored CFIR's coordinates against the set semantics of the union; each kernel against the dense oracle
(compiler.evaluate), the CFIR interpreter and the IR interpreter (one_kernel), over CSR/CSC/COO/DCSR/dense inputs,
dense and sparse outputs, fills 0/1/NaN, NaN/±inf stored, empty and all-fill operands, by a property, and through
the array front end as one kernel (no retry, nothing materialized or converted) against numpy.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler.lattice.seqcfir import Assign, Forall, Lit, build_cfir
from compiler.lattice.seqcheck import random_data
from compiler.lattice.seqinterp import interpret
from compiler.lattice.sequences import Intersect, Level, Product, Union, coordinates
from compiler.lattice.seqproductnest import factored, nests
from tests.compiler.lattice.split_kernels import operand
from compiler import Tensor
from tests.compiler.lattice.test_seq_concat_fills import one_kernel, tensor


def tensor_of(values, fmt):
    """``values`` stored in ``fmt`` (fill 0)."""
    return Tensor.from_numpy(np.asarray(values), fmt)

nan, inf = np.nan, np.inf

TIMES_SUM = "collapse(A[i, j] * (B[i, j] + C[i, j]), (i, j) -> m)"
PROGRAMS = {
    "plus a vector": f"c[m] = {TIMES_SUM} + w[m]",
    "times a vector": f"c[m] = {TIMES_SUM} * w[m]",
    "a vector plus": f"c[m] = w[m] + {TIMES_SUM} + 1",
    "plus a product": f"c[m] = ({TIMES_SUM} + w[m] * v[m]) * v[m]",
    "plus a matrix in the collapse": "c[m] = collapse(A[i, j] * (B[i, j] + C[i, j]) + D[i, j], (i, j) -> m)",
    "an hstack times, plus": "c[m] = collapse(A[i, j] * concat((B[i, k], C[i, l]), (k, l) -> j), (i, j) -> m) + w[m]",
    "two nested products": f"c[m] = {TIMES_SUM} - collapse(D[i, j] * (B[i, j] + A[i, j]), (i, j) -> m)",
    "summed": f"c[] = sum[m]({TIMES_SUM} + w[m])",
    "a matrix beside": f"c[m, n] = {TIMES_SUM} + W[m, n]",
    # (E's rows of 6 split into the product's of 4: π0(k_E × l_E, 4))
    "plus a ravel of other rows": f"c[m] = {TIMES_SUM} + collapse(E[k, l], (k, l) -> m)",
}
SHAPES = dict(A=(3, 4), B=(3, 4), C=(3, 4), D=(3, 4), E=(2, 6), w=(12,), v=(12,), W=(12, 2))


# -- the factored sequence, against the set semantics ---------------------------------------------------------


def product(row):
    (iA, jA), (iB, jB), (iC, jC) = ((Level(t, 0, row, 3, "i"), Level(t, 1, "compressed", 4, "j")) for t in "ABC")
    return Product(Intersect(iA, Union(iB, iC)), Intersect(jA, Union(jB, jC)))


def merged(row, name):
    w, v = Level("w", 0, "compressed", 12, "m"), Level("v", 0, row, 12, "m")
    (iD, jD) = Level("D", 0, row, 3, "i"), Level("D", 1, "compressed", 4, "j")
    return {"union": Union(product(row), w), "intersection": Intersect(w, product(row)),
            "union of products": Union(Product(iD, jD), product(row)),
            "nested": Intersect(Union(product(row), w), v)}[name]


@pytest.mark.parametrize("row", ["dense", "compressed"])
@pytest.mark.parametrize("name", ["union", "intersection", "union of products", "nested"])
def test_the_factored_loops_visit_each_coordinate_of_the_union_once_in_order(row, name):
    seq = merged(row, name)
    assert not nests(seq) and nests(factored(seq))
    cf = build_cfir(Forall("m", seq, Assign("c", ("m",), Lit(1.0))))
    assert [r.rule for r in cf.rewrites if r.rule in ("product-factored", "product-nested")] == [
        "product-factored", "product-nested"]
    rng = np.random.default_rng(3)
    for trial in range(15):
        data = random_data(seq, rng)
        got = [key[0] for _, key, _ in interpret(cf, {t: dict.fromkeys(xs, 1.0) for t, xs in data.items()}).writes]
        assert got == sorted(coordinates(seq, data)), (cf.text(), data)


def test_what_is_factored_and_how():
    # (no nesting product: left as it is; a product of other rows split as any other operand; two nesting
    # products of other rows not at all)
    w = Level("w", 0, "compressed", 12, "m")
    iA, jA = Level("A", 0, "dense", 3, "i"), Level("A", 1, "compressed", 4, "j")
    assert factored(Union(Product(iA, jA), w)) is None
    k, l = Level("E", 0, "dense", 2, "k"), Level("E", 1, "compressed", 6, "l")
    assert str(factored(Union(product("dense"), Product(k, l))).a) == "(i_A ∩ (i_B ∪ i_C)) ∪ π0(k_E × l_E, 4)"
    assert factored(Union(product("dense"), Product(k, Union(l, Level("F", 0, "compressed", 6, "l"))))) is None


# -- kernels ----------------------------------------------------------------------------------------------------


def operands(program, formats, seed=1, fill=0.0, odd=(), density=0.5, merged_density=0.5):
    """The program's tensors, of ``formats`` in turn: the operand merged with the product (w, W, E or D) of
    ``fill`` with ``odd`` stored (in A or B, NaN or inf would make ``*`` walk the union of its factors' products,
    no union in a product's right operand: test_seq_product_operands) and ``merged_density`` of its entries stored,
    B's of ``density``."""
    names = [n for n in SHAPES if f"{n}[" in program]
    merged = next(n for n in ("w", "W", "E", "D") if n in names)
    out = {}
    for k, n in enumerate(names):
        fmt = formats[k % len(formats)]
        if len(SHAPES[n]) == 1:
            fmt = {"csr": "sparse_vector", "csc": "coo", "dcsr": "sparse_vector"}.get(fmt, fmt)
        shape = {"B": (3, 1), "C": (3, 3)}.get(n, SHAPES[n]) if "concat((B" in program else SHAPES[n]
        out[n] = tensor(shape, fmt, seed + k, fill=fill if n == merged else 0.0, odd=odd if n == merged else (),
                        density=density if n == "B" else merged_density if n == merged else 0.5)
    return out


def sparse_output(program):
    """The sparse format of the program's output (a scalar: None)."""
    ndim = len([x for x in program[2:program.index("]")].split(",") if x.strip()])
    return {0: None, 1: "sparse_vector", 2: "csr"}[ndim]


FORMATS = [("csr", "csr", "csr", "csr"), ("coo", "dense", "csr", "coo"), ("dcsr", "coo", "dense", "csr"),
           ("csc", "csc", "csc", "csc")]


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("at", [0, 1])
def test_a_nested_product_merged_with_another_operand(name, at):
    # (two of the format sets per program, each set in turn; a CSC is read converted, row-major)
    program, formats = PROGRAMS[name], FORMATS[(list(PROGRAMS).index(name) + 2 * at) % len(FORMATS)]
    k, _ = one_kernel(program, sparse_output(program) if at else None, **operands(program, formats))
    if formats[0] != "csc" and name != "summed":
        step = k.trace.find("cfir")[0]
        assert [r.rule for r in step.rewrites if r.rule == "product-factored"], step.after_text
        assert " = m_row·4 + m_col" in step.after_text


@pytest.mark.parametrize("case", ["fill-1", "fill-nan", "stored-nan-inf", "empty", "all-fill", "empty-merged"])
@pytest.mark.parametrize("name", ["plus a vector", "plus a matrix in the collapse"])
def test_fills_values_and_densities(name, case):
    program = PROGRAMS[name]
    kw = {"fill-1": dict(fill=1.0, odd=(inf,)), "fill-nan": dict(fill=nan, odd=(-inf,)),
          "stored-nan-inf": dict(odd=(nan, inf, -inf)), "empty": dict(density=0.0),
          "all-fill": dict(density=1.0, merged_density=1.0), "empty-merged": dict(merged_density=0.0)}[case]
    t = operands(program, ("coo", "csr", "dcsr", "csr"), seed=5, **kw)
    one_kernel(program, sparse_output(program) if case in ("fill-1", "fill-nan", "empty", "empty-merged") else None, **t)


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(sorted(PROGRAMS)), st.lists(st.sampled_from(["csr", "csc", "coo", "dcsr", "dense"]),
                                                   min_size=4, max_size=4),
       st.sampled_from([0.0, 1.0, nan]), st.sampled_from([0.0, 0.4, 1.0]), st.booleans(), st.integers(0, 99))
# (v dense, read inside the product of w, which holds NaN, and outside it: one cursor, walked beside w only, so where
# only the collapse was, v read as absent and its product written as 0)
@example(name="plus a product", formats=["dense", "csr", "csr", "csr"], fill=0.0, density=0.0, sparse_out=False,
         seed=1)
def test_random_nested_products_merged_with_other_operands(name, formats, fill, density, sparse_out, seed):
    program = PROGRAMS[name]
    one_kernel(program, sparse_output(program) if sparse_out else None,
               **operands(program, formats, seed, fill=fill, odd=(nan, inf, -inf)[:seed % 4], density=density,
                          merged_density=(0.0, 0.4, 1.0)[seed % 3]))


@pytest.mark.parametrize("stored", [nan, inf])
@pytest.mark.parametrize("fa", ["csr", "coo", "dense"])
def test_a_dense_factor_read_inside_and_outside_a_product_of_wild_factors(fa, stored):
    # ((x + w * v) * v, w holding NaN or inf: each product walks the ∪ of its wild factors, v beside them; v's two
    # reads shared one cursor, walked beside w only, so where only x was, v was read as absent, its product 0)
    a = np.array([[0.0, 1.5, 0.0, -2.0], [1.0, 0.0, 0.0, 3.0], [0.0, 0.0, 0.5, 0.0]])
    w = np.array([stored, 0.0, 0.0, 3.5, 0.0, 3.5, 0.0, -2.0, 0.0, 0.0, 0.0, 0.0])
    v = np.array([0.0, 0.0, 0.0, 3.5, 1.0, 3.5, 3.5, 3.5, 1.0, 0.0, 2.0, -2.0])
    tensors = dict(A=tensor_of(a, fa), w=tensor_of(w, "sparse_vector"), v=tensor_of(v, "dense"))
    k, got = one_kernel("c[m] = (collapse(A[i, j], (i, j) -> m) + w[m] * v[m]) * v[m]", **tensors)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got.to_numpy(), (a.ravel() + w * v) * v)
    # (the second read of v through a cursor of its own, intersected with the ∪)
    assert k.trace.find("seq-derive")[0].after_text.splitlines()[0].endswith("∩ m_v'")


# -- the array front end: one kernel ------------------------------------------------------------------------------


def one_fused_kernel(expr, want, out=None):
    """``expr`` lowered by the lattice as one kernel: no retry, nothing materialized or converted; right against
    numpy and the IR interpreter."""
    k = expr.lower(out, strategy="lattice")
    assert not {"retry", "materialize", "convert"} & set(k.trace.stages()), k.trace.stages()
    got = k()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret().to_numpy(), want)
    return k


@pytest.mark.parametrize("out", [None, "sparse_vector"])
def test_the_array_front_ends_ravel_of_a_product_plus_a_vector_is_one_kernel(out):
    (a, A), (b, B), (c, C) = operand((3, 4), "csr", 1), operand((3, 4), "coo", 2), operand((3, 4), "csr", 3)
    (w, W), (v, V) = operand(12, "sparse_vector", 4, odd=(nan, -inf)), operand(12, "coo", 5, odd=(inf,))
    one_fused_kernel((A * (B + C)).reshape(-1) + W, (a * (b + c)).reshape(-1) + w, out)
    with np.errstate(invalid="ignore"):
        one_fused_kernel((W - (A * (B + C)).reshape(-1)) * V, (w - (a * (b + c)).reshape(-1)) * v, out)
    one_fused_kernel((A * (B + C) + C).reshape(-1), (a * (b + c) + c).reshape(-1), out)
    d, D = operand((2, 6), "coo", 6, odd=(inf,))
    one_fused_kernel((A * (B + C)).reshape(-1) + D.reshape(-1), (a * (b + c)).reshape(-1) + d.reshape(-1), out)
