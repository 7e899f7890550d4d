"""A union or concatenation in a product's right operand, and a product repeating a split's group over another
index, lowered by the lattice strategy (issue 30). Both were refused on main:

* ``c[m] = collapse(A[i, j] * (B[i, j] + C[i, j]), (i, j) -> m)`` iterates
  ``(i_A ∩ (i_B ∪ i_C)) × (j_A ∩ (j_B ∪ j_C))``: "a union or concatenation (j_B ∪ j_C) in the right operand of a
  product is not supported (the lattice takes edges only from the left operand)". Likewise a product with an
  hstack along the inner index, and two hstacks multiplied. Now a loop over such a product nests its operands'
  loops: the right operand's own lattice inside each coordinate of the left one, as TACO nests an inner loop's
  (compiler.lattice.seqproductnest), the product's coordinate bound in the body (``m = m_row·4 + m_col``).
* ``c[j] = collapse(collapse(broadcast(n:2, split(A[m], m -> (i:2, l:3))), (i, n) -> k), (k, l) -> j)`` (each row
  of a reshaped vector repeated, np.repeat): ``(π0 × U_n) × π1`` "repeats each group of a split's major index over
  another index". Now it is ``π0 × (U_n × π1)`` (a product is associative), whose inner product restarts the π1 at
  the group's start the π0 saved, for each ``n`` (compiler.lattice.seqrewind).

Each lattice the nesting builds is checked against brute force (each coordinate visited once, in order, by the case
of the leaves there; the inner one under each coordinate of the outer), the whole CFIR's coordinates against the
set semantics, and each kernel against the dense oracle (compiler.evaluate), the CFIR interpreter and the IR
interpreter, over CSR/CSC/COO/DCSR/dense inputs, dense and sparse outputs, fills 0/1/NaN, NaN/±inf stored, empty
and all-fill operands, by a property, and through the array front end as one kernel (no retry, nothing
materialized).
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.lattice.seqcfir import Assign, Forall, Lit, build_cfir
from compiler.lattice.seqcheck import check_seq_lattice, random_data
from compiler.lattice.seqinterp import interpret
from compiler.lattice.sequences import Concat, Intersect, Level, Product, Union, bind, coordinates
from compiler.lattice.seqproductnest import nests
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand
from tests.compiler.lattice.test_seq_concat_fills import one_kernel, tensor

nan, inf = np.nan, np.inf

TIMES_SUM = "c[m] = collapse(A[i, j] * (B[i, j] + C[i, j]), (i, j) -> m)"
TIMES_HSTACK = "c[m] = collapse(A[i, j] * concat((B[i, k], C[i, l]), (k, l) -> j), (i, j) -> m)"
HSTACKS = ("c[m] = collapse(concat((A[i, k], B[i, l]), (k, l) -> j) * concat((C[i, k], D[i, l]), (k, l) -> j), "
           "(i, j) -> m)")
REPEAT = "c[j] = collapse(collapse(broadcast(n:{N}, split(A[m], m -> (i:{I}, l:{L}))), (i, n) -> k), (k, l) -> j)"
SHAPES = {TIMES_SUM: dict(A=(3, 4), B=(3, 4), C=(3, 4)), TIMES_HSTACK: dict(A=(3, 5), B=(3, 2), C=(3, 3)),
          HSTACKS: dict(A=(2, 2), B=(2, 3), C=(2, 2), D=(2, 3))}


# -- the lattices, against brute force -----------------------------------------------------------------------


def levels(t, row, col="compressed", rows=3, cols=4, index="j"):
    return Level(t, 0, row, rows, "i"), Level(t, 1, col, cols, index)


def sequences(row):
    """Products with a union or concatenation in their right operand, the rows of ``row`` kind."""
    (iA, jA), (iB, jB), (iC, jC) = (levels(t, row) for t in "ABC")
    (iB2, kB), (iC2, lC) = levels("B", row, cols=2, index="k"), levels("C", row, cols=2, index="l")
    return {"product of sums": Product(Intersect(iA, Union(iB, iC)), Intersect(jA, Union(jB, jC))),
            "sums": Product(Union(iA, iB), Union(jA, jB)),
            "times a concatenation": Product(Intersect(iA, Union(iB2, iC2)), Intersect(jA, Concat(kB, lC))),
            "a product plus": Product(Union(Union(iA, iB), iC), Union(Intersect(jA, jB), jC))}


@pytest.mark.parametrize("row", ["dense", "compressed"])
@pytest.mark.parametrize("name", ["product of sums", "sums", "times a concatenation", "a product plus"])
def test_each_nested_lattice_visits_each_coordinate_once_in_order(row, name):
    seq = sequences(row)[name]
    assert nests(seq)
    cf = build_cfir(Forall("m", seq, Assign("c", ("m",), Lit(1.0))))
    (outer, L), (inner, _) = cf.lattices[0], cf.lattices[-1]
    assert (outer, inner) == ("m_row", "m_col")
    rng = np.random.default_rng(7)
    for trial in range(12):
        data = random_data(seq, rng)
        # the outer lattice on its own, and each inner one under each coordinate of the outer
        assert check_seq_lattice(L, data=data).exact, (L.text(), data)
        for r in sorted(coordinates(seq.a, data)):
            for _, lattice in cf.lattices[1:]:
                res = check_seq_lattice(lattice, data=data, env=bind(seq.a, r, data, {}))
                assert not (res.extra or res.repeated or res.unordered or res.wrong_case), (lattice.text(), r, data)
        # the whole CFIR: every coordinate of the product once, in increasing order
        got = [key[0] for _, key, _ in interpret(cf, {t: dict.fromkeys(xs, 1.0) for t, xs in data.items()}).writes]
        assert got == sorted(coordinates(seq, data)), (cf.text(), data)


# -- kernels ------------------------------------------------------------------------------------------------


def operands(program, formats, seed=1, fill=0.0, odd=(), density=0.5):
    shapes = SHAPES[program]
    return {n: tensor(s, f, seed + k, fill=fill if k == 0 else 0.0, odd=odd if k == 0 else (), density=density)
            for k, ((n, s), f) in enumerate(zip(shapes.items(), formats))}


@pytest.mark.parametrize("out", [None, "sparse_vector"])
@pytest.mark.parametrize("formats", [("csr", "csr", "csr"), ("csc", "csc", "csc"), ("coo", "dense", "csr"),
                                     ("dense", "coo", "dcsr")])
def test_a_product_of_a_sum_raveled(formats, out):
    k, _ = one_kernel(TIMES_SUM, out, **operands(TIMES_SUM, formats))
    cfir = k.trace.find("cfir")[0].after_text
    assert "  while m_col <- " in cfir and "m = m_row·4 + m_col" in cfir, cfir
    assert "int64_t m = m_row * 4 + m_col;" in k.c_source
    # (A may hold NaN or inf: * walks the ∪ of the products then, exactly, no union in a product's right operand)
    one_kernel(TIMES_SUM, out, **operands(TIMES_SUM, formats, odd=(nan, inf, -inf)))


def test_the_trace_records_the_nesting_and_each_lattice():
    k, _ = one_kernel(TIMES_SUM, **operands(TIMES_SUM, ("csr",) * 3))
    step = k.trace.find("cfir")[0]
    nested = [r for r in step.rewrites if r.rule == "product-nested"]
    assert [r.after for r in nested] == [
        "forall m_row ∈ i_A ∩ (i_B ∪ i_C): forall m_col ∈ j_A ∩ (j_B ∪ j_C): m = m_row·4 + m_col"]
    assert [s.data["index"] for s in k.trace.find("lattice")] == ["m_row", "m_col"]
    # (each row's loops: the union's, then what is left of it once B's or C's row ran out)
    loops = [x.strip() for x in step.after_text.splitlines() if x.lstrip().startswith("while")]
    assert loops == ["while m_row <- i_A with i_B ∪ i_C = i_A", "while m_col <- j_A ∩ (j_B ∪ j_C)",
                     "while m_col <- j_A ∩ j_B", "while m_col <- j_A ∩ j_C"], loops


@pytest.mark.parametrize("case", ["fill-1", "fill-nan", "empty", "all-fill", "hstack-coo", "hstacks-csr",
                                  "hstacks-dcsr", "3-d", "summed", "column-major-csc"])
def test_products_with_a_union_or_concatenation_on_the_right(case):
    if case in ("fill-1", "fill-nan"):
        one_kernel(TIMES_SUM, "sparse_vector", **operands(TIMES_SUM, ("csr", "coo", "csr"),
                                                          fill=1.0 if case == "fill-1" else nan, odd=(inf,)))
    elif case in ("empty", "all-fill"):
        one_kernel(TIMES_SUM, "sparse_vector", **operands(TIMES_SUM, ("csr", "csr", "coo"),
                                                          density=0.0 if case == "empty" else 1.0))
    elif case == "hstack-coo":
        one_kernel(TIMES_HSTACK, "sparse_vector", **operands(TIMES_HSTACK, ("coo", "csr", "coo")))
        one_kernel(TIMES_HSTACK, None, **operands(TIMES_HSTACK, ("csr", "coo", "dense"), odd=(-inf, nan)))
    elif case.startswith("hstacks"):
        f = case.split("-")[1]
        one_kernel(HSTACKS, None if f == "csr" else "sparse_vector", **operands(HSTACKS, (f, "coo", f, "csr")))
    elif case == "3-d":
        t = {n: tensor((2, 3, 2), f, k) for k, (n, f) in enumerate(zip("ABC", ("csf", "coo", "dense")))}
        for out in ("csr", "dcsr"):
            one_kernel("c[m, k] = collapse(A[i, j, k] * (B[i, j, k] + C[i, j, k]), (i, j) -> m)", out, **t)
    elif case == "summed":
        one_kernel("c[] = sum[m](collapse(A[i, j] * (B[i, j] + C[i, j]), (i, j) -> m))",
                   **operands(TIMES_SUM, ("csr", "dcsr", "coo")))
    else:
        one_kernel(TIMES_SUM.replace("(i, j) -> m", "(j, i) -> m"), "sparse_vector",
                   **operands(TIMES_SUM, ("csc", "csc", "csc")))


def test_a_product_walked_beside_another_operand_is_factored_into_one_product():
    # (a union around the product, refused before: w split into its rows and columns, one product that nests,
    # tests/compiler/lattice/test_seq_product_unions.py)
    t = {**operands(TIMES_SUM, ("csr",) * 3), "w": tensor((12,), "sparse_vector", 9)}
    k, _ = one_kernel("c[m] = collapse(A[i, j] * (B[i, j] + C[i, j]), (i, j) -> m) + w[m]", **t)
    assert "while m_row <- i_A ∪ π0(m_w, 4)" in k.trace.find("cfir")[0].after_text


# -- a split's group repeated over another index -----------------------------------------------------------


def vector(a, fmt, fill=0.0):
    return Tensor.from_numpy(a, fmt, fill=fill)


@pytest.mark.parametrize("afmt", ["sparse_vector", "coo", "dense"])
@pytest.mark.parametrize("out", [None, "sparse_vector"])
def test_each_group_of_a_split_repeated_walks_it_once_per_repeat(afmt, out):
    a = np.array([1.0, 0, 3, 4, 5, 0, 0, 0, -2.0])
    k, got = one_kernel(REPEAT.format(N=2, I=3, L=3), out, A=vector(a, afmt))
    np.testing.assert_array_equal(got.to_numpy(), np.repeat(a.reshape(3, 1, 3), 2, axis=1).ravel())
    assert "while j <- π0(m_A, 3) × (U_n × π1(m_A, 3))" in k.trace.find("cfir")[0].after_text
    if afmt != "dense":
        # (saved where the π0 enters a group, restored as the inner product restarts the π1)
        assert "pA0_start = pA0;" in k.c_source and "pA0 = pA0_start;" in k.c_source, k.c_source


@pytest.mark.parametrize("N, I", [(1, 2), (3, 2), (2, 3)])
def test_a_dense_vector_split_into_groups_of_one_and_repeated_walks_every_group(N, I):
    # (π0(m_A, 1) of a dense A is A's cursor itself: its group's end moved on with the cursor, and the
    # loop stopped after the first group, [1, 1, 1, 0, 0, 0] for [1, 1, 1, 2, 2, 2])
    a = np.arange(1.0, I + 1)
    k, got = one_kernel(REPEAT.format(N=N, I=I, L=1), None, A=vector(a, "dense"))
    np.testing.assert_array_equal(got.to_numpy(), np.repeat(a, N))


@pytest.mark.parametrize("case", ["fill-1", "fill-nan", "stored-nan-inf", "empty", "all-fill", "one-repeat",
                                  "one-column", "times-b"])
def test_a_repeated_split_with_fills_values_and_operands(case):
    program = REPEAT.format(N=3, I=2, L=4)
    if case in ("fill-1", "fill-nan"):
        f = 1.0 if case == "fill-1" else nan
        one_kernel(program, "sparse_vector", A=vector(operand(8, "dense", 1, fill=f)[0], "sparse_vector", f))
    elif case == "stored-nan-inf":
        one_kernel(program, "sparse_vector", A=vector(operand(8, "dense", 2, odd=(nan, inf, -inf))[0], "coo"))
    elif case in ("empty", "all-fill"):
        f = 0.0 if case == "empty" else 2.0
        one_kernel(program, None, A=vector(np.full(8, f), "sparse_vector", f))
    elif case == "one-repeat":
        one_kernel(REPEAT.format(N=1, I=4, L=2), "sparse_vector", A=vector(operand(8, "dense", 3)[0], "sparse_vector"))
    elif case == "one-column":
        one_kernel(REPEAT.format(N=2, I=5, L=1), None, A=vector(operand(5, "dense", 4)[0], "coo"))
    else:
        b = vector(operand(24, "dense", 5, odd=(inf,))[0], "sparse_vector")
        one_kernel(f"{program} * b[j]", "sparse_vector", A=vector(operand(8, "dense", 6)[0], "sparse_vector"), b=b)


# -- the array front end: one kernel -----------------------------------------------------------------------


def test_the_array_front_ends_ravels_and_repeats_are_one_lattice_kernel():
    (a, A), (b, B), (c, C) = operand((3, 4), "csr", 1, odd=(inf,)), operand((3, 4), "csc", 2), operand((3, 4), "coo", 3)
    one_lattice_kernel((A * (B + C)).reshape(-1), (a * (b + c)).reshape(-1))
    one_lattice_kernel((A * (B + C)).reshape(-1), (a * (b + c)).reshape(-1), "sparse_vector")
    hstack = lambda x, y: np.concatenate([x, y], axis=1)  # noqa: E731
    one_lattice_kernel((xp.concat([A, B], axis=1) * xp.concat([C, A], axis=1)).reshape(-1),
                       (hstack(a, b) * hstack(c, a)).reshape(-1), "sparse_vector")
    x, X = operand(6, "sparse_vector", 4, odd=(-inf,))
    one_lattice_kernel(xp.broadcast_to(X.reshape(2, 1, 3), (2, 2, 3)).reshape(-1),
                       np.broadcast_to(x.reshape(2, 1, 3), (2, 2, 3)).reshape(-1), "sparse_vector")


# -- a property ------------------------------------------------------------------------------------------------


@settings(max_examples=7, deadline=None)
@given(st.sampled_from([TIMES_SUM, TIMES_HSTACK, "repeat"]),
       st.lists(st.sampled_from(["csr", "csc", "coo", "dcsr", "dense"]), min_size=3, max_size=3),
       st.sampled_from([0.0, 1.0, nan]), st.sampled_from([0.0, 0.4, 1.0]), st.booleans(), st.integers(0, 99))
@example("repeat", ["dense", "csr", "csr"], 0.0, 0.0, False, 86)   # (a dense [nan, inf] split into groups of 1)
def test_random_products_with_a_union_on_the_right(program, formats, fill, density, sparse_out, seed):
    odd = (nan, inf, -inf)[:seed % 4]
    if program == "repeat":
        r = np.random.default_rng(seed)
        n, i, l = (int(x) for x in r.integers(1, 4, 3))
        a = vector(operand(i * l, "dense", seed, fill=fill, density=density, odd=odd[:i * l])[0],
                   "dense" if formats[0] == "dense" else "coo" if formats[0] == "coo" else "sparse_vector", fill)
        one_kernel(REPEAT.format(N=n, I=i, L=l), "sparse_vector" if sparse_out else None, A=a)
    else:
        one_kernel(program, "sparse_vector" if sparse_out else None,
                   **operands(program, formats, seed, fill=fill, odd=odd, density=density))


def test_a_stack_raveled_into_rows_walks_each_operand_in_its_own_part():
    # (stack([A, B]).reshape(2, -1): each row's loops walk its own operand's entries, the other part's reads
    # dropped; before, refused and retried as a split of the operands' ravels)
    (a, A), (b, B) = operand((5, 4), "coo", 11), operand((5, 4), "csr", 12, odd=(nan,))
    k = one_lattice_kernel(xp.stack([A, B], axis=0).reshape(2, 20), np.stack([a, b]).reshape(2, 20), "csr")
    loops = [x.strip() for x in k.trace.find("cfir")[0].after_text.splitlines() if x.lstrip().startswith("while")]
    assert loops == ["while i <- U_m ⊔ U_n", "while j <- k_A × l_A", "while i <- |U_m| + U_n",
                     "while j <- k_B × l_B"], loops
