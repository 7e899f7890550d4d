"""max, min, prod, any and all under the sequence lowering (issue 30): a reduction of a constant-index read or a
slice, ``xp.max(a[1])``, is ``t = max(t, v)`` into a scalar started at the operator's identity, with the
summand's fill folded in once where the loops skipped a coordinate (``t = max(t, 0) if n_t < 6``). The lattice
refused them ("the sequence lowering reduces with sum only"; any and all: "its summand is a boolean") and the
array front end computed the index on the stored entries. Each kernel against numpy, the dense oracle, the IR
interpreter and the sequence CFIR's interpreter, and by the looplets too, on CSR, CSC, COO, dense and sparse
vectors, fills 0, 1, NaN and ±inf with NaN and ±inf stored, empty and all-fill operands, and by a property."""

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.lattice.seqderive import seq_evaluate
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf

# (name, the expression of a (5, 6) matrix and a 6-vector, in both numpy and the array language)
CASES = [
    ("max(a[1])", lambda m, a, v: m.max(a[1])),
    ("min(a[:, 2])", lambda m, a, v: m.min(a[:, 2])),
    ("prod(a[:, 2])", lambda m, a, v: m.prod(a[:, 2])),
    ("any(a[1] > 0)", lambda m, a, v: m.any(a[1] > 0)),
    ("all(a[3] != 0)", lambda m, a, v: m.all(a[3] != 0)),
    ("max(a[1] * v)", lambda m, a, v: m.max(a[1] * v)),
    ("min(a[4:0:-2][1] + 1)", lambda m, a, v: m.min(a[4:0:-2][1] + 1.0)),
    ("max(v[::-2])", lambda m, a, v: m.max(v[::-2])),
    ("prod(v[1:5])", lambda m, a, v: m.prod(v[1:5])),
]


def both(name, build, a, A, v, V):
    """``build`` by the lattice (one kernel, nothing materialized, every oracle) and by the looplets, against numpy."""
    with np.errstate(invalid="ignore"):
        want = np.asarray(build(np, a, v))
    kernel = one_lattice_kernel(build(xp, A, V), want)
    got = build(xp, A, V).lower(strategy="looplets")()
    np.testing.assert_array_equal(got.to_numpy(), want)
    return kernel


@pytest.mark.parametrize("fmt, fill", [("csr", 0.0), ("csc", nan), ("coo", 1.0), ("dense", 0.0), ("csr", inf),
                                       ("coo", -inf)])
@pytest.mark.parametrize("name, build", CASES, ids=[c[0] for c in CASES])
def test_a_reduction_of_a_constant_read_is_one_lattice_kernel(name, build, fmt, fill):
    a, A = operand((5, 6), fmt, 11, fill=0.0 if fmt == "dense" else fill, odd=(nan, inf, -inf) if fill != 0 else ())
    v, V = operand(6, "sparse_vector" if fmt != "dense" else "dense", 12, fill=0.0 if fmt == "dense" else fill,
                   odd=(-inf,))
    # (a product of fill -inf, no fixed point, folds -inf to the power of the coordinates skipped)
    kernel = both(name, build, a, A, v, V)
    # (the sequence CFIR's interpreter on the statement: the reduction into its scalar, the fill folded once)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(seq_evaluate(kernel.program, **kernel.arguments), build(np, a, v))


def test_the_fill_is_folded_once_where_a_coordinate_was_skipped():
    a, A = operand((3, 6), "csr", 1, fill=0.0)
    a[1] = [-1.0, 0.0, -2.0, 0.0, 0.0, -3.0]
    kernel = one_lattice_kernel(xp.max(xp.asarray(a, format="csr")[1]), np.max(a[1]))
    cfir = "\n".join(s.artifacts[0].text for s in kernel.trace.find("cfir") if s.artifacts)
    assert "t = max(t, " in cfir and "alloc t = -inf" in cfir, cfir
    # (a stored row, no coordinate skipped: the fold's test is false and the result is the entries' max)
    full = np.array([[-1.0, -2.0, -3.0]])
    one_lattice_kernel(xp.max(xp.asarray(full, format="csr")[0]), np.max(full[0]))


@pytest.mark.parametrize("fmt", ["csr", "coo", "csc"])
def test_empty_and_all_fill_rows(fmt):
    for density, fill in ((0.0, 0.0), (0.0, nan), (1.0, 0.0), (0.0, 1.0)):
        a, A = operand((5, 6), fmt, 2, density=density, fill=fill)
        v, V = operand(6, "sparse_vector", 3, density=density, fill=fill)
        for name, build in CASES:
            both(name, build, a, A, v, V)


def refused(expr, want):
    """``expr`` refused by the lattice, the retry step naming the product and the looplets; right all the same."""
    kernel = expr.lower(strategy="lattice")
    why = [s.data["why"] for s in kernel.trace.find("retry")]
    assert why and "mul reduction" in why[0] and "strategy='looplets'" in why[0], why
    np.testing.assert_array_equal(kernel().to_numpy(), want)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr"])
@pytest.mark.parametrize("fill", [2.0, -2.0, 3.0, 0.5, -inf])
def test_a_floating_point_product_of_another_fill_multiplies_it_in_order(fmt, fill):
    # (2 * 2 != 2: the fill folded once was wrong for two skipped coordinates, so the lattice refused it and the
    # front end computed the row apart; then the fill was folded in to the power of the coordinates skipped, after
    # the entries, which is another order than numpy's, and a product of floats is not associative where it
    # overflows. Its loops now walk every coordinate, t = mul(t, 2.0) where nothing is stored, as the plain lattice's)
    a, A = operand((4, 6), fmt, 5, fill=fill, odd=(nan, -0.0, inf))
    a[2] = fill                                   # (a row of the fill only: every coordinate skipped)
    a[3] = [1.0, -2.0, 3.5, 1.0, -0.0, 2.0]       # (a row stored whole: none skipped)
    A = xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill))
    for line in (np.s_[1], np.s_[2], np.s_[3], np.s_[0], np.s_[:, 4], np.s_[1, ::-2]):
        with np.errstate(invalid="ignore"):
            want = np.prod(a[line])
            kernel = one_lattice_kernel(xp.prod(A[line]), np.asarray(want))
            np.testing.assert_array_equal(seq_evaluate(kernel.program, **kernel.arguments), want)
    cfir = "\n".join(s.artifacts[0].text for s in kernel.trace.find("cfir") if s.artifacts)
    assert "t = mul(t, A(" in cfir and "∪ U_i" in cfir and " ** (" not in cfir and "n_t" not in cfir, cfir


@pytest.mark.parametrize("fmt", ["csr", "coo"])
@pytest.mark.parametrize("fill", [0.0, 2.0, 0.5])
def test_a_product_that_overflows_in_another_order_than_numpys_is_numpys(fmt, fill):
    # (found by hand: 1e200 * 1e200 * 0, the fill folded in after the entries, was NaN where numpy's 0 * 1e200 * 1e200
    # is 0; 1e308 * 2 * 1e-10 is inf in numpy's order, 2e298 with the fill's power after)
    a = np.array([[fill, 1e200, 1e200], [1e308, fill, 1e-10], [1e-300, 1e-300, fill], [fill, fill, 3.0]])
    A = xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill))
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        for build in (lambda m, x: m.prod(x[::-1], axis=1), lambda m, x: m.prod(x[:, ::-1], axis=1),
                      lambda m, x: m.prod(x[::-1], axis=0), lambda m, x: m.prod(x[1:]),
                      lambda m, x: m.prod((m.concat if m is xp else np.concatenate)([x, x], axis=1), axis=1)):
            want = np.asarray(build(np, a))
            kernel = one_lattice_kernel(build(xp, A), want)
            hoisted = [s.data["hoisted"] for s in kernel.trace.find("loop-order")]
            np.testing.assert_array_equal(seq_evaluate(kernel.program, **({"hoisted": tuple(hoisted[0])} if hoisted
                                                                           else {}), **kernel.arguments), want)


@pytest.mark.parametrize("fmt", ["csr", "coo", "dcsr"])
@pytest.mark.parametrize("fill", [2.0, -2.0, 3.0, -inf])
def test_a_product_into_a_vector_of_a_fill_that_is_no_fixed_point_folds_its_power(fmt, fill):
    # (the loops run around the output's, each column's product into a dense accumulator, then the fill to the power
    # of the rows its loops skipped: forall j: out(j) = mul(out(j), 2.0 ** (5 - n_out(j))); refused before)
    a, A = operand((5, 4), fmt, 5, fill=fill, odd=(nan, -0.0))
    a[:, 2] = fill                                 # (a column of the fill only)
    A = xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill))
    for build in (lambda m, x: m.prod(x[::-1], axis=0), lambda m, x: m.prod(x[:, 1:], axis=1),
                  lambda m, x: m.prod((m.concat if m is xp else np.concatenate)([x, x]), axis=0)):
        with np.errstate(invalid="ignore"):
            want = np.asarray(build(np, a))
            kernel = one_lattice_kernel(build(xp, A), want)
            hoisted = [s.data["hoisted"] for s in kernel.trace.find("loop-order")]
            np.testing.assert_array_equal(seq_evaluate(kernel.program, **({"hoisted": tuple(hoisted[0])} if hoisted
                                                                           else {}), **kernel.arguments), want)


INTEGER_PRODUCTS = [lambda m, x: m.prod(x[::-1], axis=0), lambda m, x: m.prod(x[:, 1:], axis=1),
                    lambda m, x: m.prod(x[:, ::2]), lambda m, x: m.prod(x.reshape(-1)[1:]),
                    lambda m, x: m.prod((m.concat if m is xp else np.concatenate)([x, x], axis=1), axis=1)]


@pytest.mark.parametrize("dtype, fill", [("int64", 2), ("int64", -3), ("int32", 3), ("uint64", 2), ("int64", 0)])
@pytest.mark.parametrize("fmt", ["csr", "coo"])
def test_an_integer_product_of_any_fill_is_one_lattice_kernel(dtype, fill, fmt):
    # (the skipped coordinates fold the fill in to the power of their count, in integers that wrap as numpy's
    # product does: refused before, naming the looplets; a row of the fill only, and one of 40 coordinates whose
    # product wraps past 2**64 for a fill of 3 or -3)
    r = np.random.default_rng(7)
    a = np.where(r.random((4, 40)) < 0.2, r.choice([1, 2, 5, 7], (4, 40)), fill).astype(dtype)
    a[2] = fill
    A = xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill))
    for build in INTEGER_PRODUCTS:
        with np.errstate(over="ignore"):
            want = np.asarray(build(np, a))
        kernel = one_lattice_kernel(build(xp, A), want)
        np.testing.assert_array_equal(build(xp, A).lower(strategy="looplets")().to_numpy(), want)
        if not np.array_equal(np.asarray(build(np, a.astype(float))), want):
            continue   # (the sequence CFIR's interpreter computes in doubles: no wrapped product)
        hoisted = [s.data["hoisted"] for s in kernel.trace.find("loop-order")]
        got = seq_evaluate(kernel.program, **({"hoisted": tuple(hoisted[0])} if hoisted else {}), **kernel.arguments)
        np.testing.assert_array_equal(np.asarray(got).astype(want.dtype), want)


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(["csr", "coo", "dense"]), st.sampled_from(["int64", "int32", "uint64"]),
       st.sampled_from([2, 3, -3, -1, 1, 0]), st.integers(1, 5), st.integers(1, 45),
       st.integers(0, len(INTEGER_PRODUCTS) - 1), st.floats(0.0, 1.0), st.integers(0, 2**16))
@example("coo", "int64", -3, 3, 45, 1, 0.0, 0)   # (every coordinate skipped: the fill to the power 44, wrapped)
@example("csr", "int64", 0, 1, 1, 1, 0.0, 0)   # (an empty slice: its product is 1, not the fill 0's power)
@example("csr", "uint64", 3, 4, 11, 3, 0.0, 0)   # (3 ** 43 wrapped in uint64: computed in int64, it was negative)
def test_integer_products_by_property(fmt, dtype, fill, rows, cols, pick, density, seed):
    if dtype == "uint64" and fill < 0:
        fill = -fill
    r = np.random.default_rng(seed)
    a = np.where(r.random((rows, cols)) < density, r.integers(-4 if dtype != "uint64" else 0, 9, (rows, cols)),
                 fill).astype(dtype)
    A = xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill))
    build = INTEGER_PRODUCTS[pick]
    with np.errstate(over="ignore"):
        want = np.asarray(build(np, a))
    one_lattice_kernel(build(xp, A), want)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(["max", "min", "prod", "any", "all"]), st.sampled_from(["csr", "csc", "coo", "dense"]),
       st.sampled_from([0.0, 1.0, nan, inf, -inf, 2.0]), st.integers(1, 6), st.integers(1, 6), st.data())
@example("max", "csr", 0.0, 4, 6, None)
def test_reductions_of_a_row_or_a_column_by_property(op, fmt, fill, rows, cols, data):
    axis = data.draw(st.integers(0, 1)) if data is not None else 0
    k = data.draw(st.integers(0, (rows, cols)[axis] - 1)) if data is not None else 1
    step = data.draw(st.sampled_from([1, 2, -1, -3])) if data is not None else 1
    seed = data.draw(st.integers(0, 2**16)) if data is not None else 0
    a, A = operand((rows, cols), fmt, seed, fill=0.0 if fmt == "dense" else fill, odd=(inf, nan)[:seed % 3])

    def build(m, x, _):
        line = x[k, ::step] if axis == 0 else x[::step, k]
        if op in ("any", "all"):
            return getattr(m, op)(line > 1.0)
        return getattr(m, op)(line)
    both(op, build, a, A, None, None)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integers_start_at_their_own_identity(dtype):
    # (max's identity -inf is INT64_MIN or INT32_MIN in C; a row whose entries are all below its fill 0)
    a = np.array([[-3, 0, -1, 0], [0, 0, 0, 0], [5, 0, 7, 2]], dtype=dtype)
    A = xp.asarray(a, format="csr")
    for expr, want in ((xp.max(A[0]), np.max(a[0])), (xp.min(A[:, 3]), np.min(a[:, 3])), (xp.max(A[1]), np.max(a[1])),
                       (xp.prod(A[2, ::2]), np.prod(a[2, ::2]))):
        kernel = one_lattice_kernel(expr, np.asarray(want))
        assert "INFINITY" not in kernel.c_source


COLUMNS = {"max": np.max, "min": np.min, "prod": np.prod, "any": np.any, "all": np.all}


def reduced_along_rows(op, e, w, out, looplets=False):
    """``op`` (a key of COLUMNS) of the array ``e`` along its first axis (of ``any`` and ``all``: of ``e > 1``) into
    ``out``: one lattice kernel, its loops run around the output's, right against numpy's of ``w`` by every oracle
    and the sequence CFIR's interpreter (and by the looplets where ``looplets``)."""
    if op in ("any", "all"):
        e, w = e > 1.0, w > 1.0
    with np.errstate(invalid="ignore"):
        want = np.asarray(COLUMNS[op](w, axis=0))
        kernel = one_lattice_kernel(getattr(xp, op)(e, axis=0), want, out)
        (order,) = [s.data["hoisted"] for s in kernel.trace.find("loop-order")]
        np.testing.assert_array_equal(seq_evaluate(kernel.program, hoisted=tuple(order), **kernel.arguments), want)
        if looplets:
            np.testing.assert_array_equal(getattr(xp, op)(e, axis=0).lower(out, strategy="looplets")().to_numpy(), want)


@pytest.mark.parametrize("out", [None, "dense"])
@pytest.mark.parametrize("op, fmt, fill", [(op, fmt, fill) for op in COLUMNS for fmt, fill in (
    ("csr", 0.0), ("csr", nan), ("coo", 1.0), ("dcsr", -inf), ("csr", inf))])
def test_column_reductions_over_shape_operators_are_one_lattice_kernel(op, fmt, fill, out):
    # (the loops run around the output's, each term reduced into a dense accumulator started at the operator's
    # identity, the fill folded in where a column's loops skipped a row: they refused it, naming the looplets;
    # a product of fill -inf or 2, no fixed point, to the power of the rows skipped)
    a, A = operand((4, 6), fmt, 9, fill=fill, odd=(nan, inf, -inf) if fill != 0 else ())
    b, B = operand((3, 6), fmt, 10, fill=fill)
    for expr in (lambda m, x, y: (m.concat if m is xp else np.concatenate)([x, y]), lambda m, x, y: x[::-2],
                 lambda m, x, y: x[1:4] * 2.0):
        reduced_along_rows(op, expr(xp, A, B), expr(np, a, b), out)


def rotated(combos: list) -> list:
    """``(op, *combo)``: each operator with three combos in a row, counted back from the end (formats alternate, so
    it meets both; a product gets a fill of 2, which it multiplies at every coordinate), each combo with two or three
    operators (all 30 pairs of the two tests below were 28 s of the suite)."""
    ops = sorted(COLUMNS)
    return [(op, *combos[(d - k) % len(combos)]) for k, op in enumerate(ops) for d in range(3)]


@pytest.mark.parametrize("op, fmt, fill, out", rotated([
    ("coo", 0.0, "coo"), ("csf", nan, "csr"), ("coo", 2.0, "csc"), ("csf", -inf, "coo"), ("coo", 1.0, "csr"),
    ("csf", inf, "csr")]))
def test_a_reduction_into_a_sparse_matrix_runs_its_loops_around_the_outputs(op, fmt, fill, out):
    # (the terms bucketed by row, as a sum's are, each row's reduced into a row workspace started at the operator's
    # identity, the fill folded in where a coordinate's loops skipped one (a product of 2 at every coordinate in order),
    # then appended where not the result's fill: refused before, "but those of max only into a vector, a scalar or a
    # dense output", and the front end computed the concatenation apart; one 3-D operand of the fill only)
    t, T = operand((3, 4, 5), fmt, 13, fill=fill, odd=(nan, -0.0, inf))
    u, U = operand((2, 4, 5), fmt, 14, fill=fill)
    e_, E_ = np.full((2, 4, 5), fill), xp.asarray(ss.Tensor.from_numpy(np.full((2, 4, 5), fill), fmt, fill=fill))
    for build in (lambda m, x, y, z: (m.concat if m is xp else np.concatenate)([x, y]), lambda m, x, y, z: x[::-2],
                  lambda m, x, y, z: (m.concat if m is xp else np.concatenate)([z, y, z])):
        reduced_along_rows(op, build(xp, T, U, E_), build(np, t, u, e_), out, looplets=True)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(sorted(COLUMNS)), st.sampled_from(["coo", "csf"]), st.sampled_from(["csr", "csc", "coo"]),
       st.sampled_from([0.0, 1.0, 2.0, nan, inf, -inf]), st.tuples(st.integers(0, 3), st.integers(0, 3),
                                                                  st.integers(1, 4)),
       st.floats(0.0, 1.0), st.integers(0, 2**16))
@example("prod", "coo", "csc", 2.0, (2, 0, 3), 0.5, 0)     # (an empty part: a product of the fill alone)
@example("max", "csf", "csr", nan, (1, 2, 2), 0.0, 1)      # (every operand all fill)
def test_reductions_into_a_sparse_matrix_by_property(op, fmt, out, fill, parts, density, seed):
    assume(parts[0] + parts[1] > 0 or op not in ("max", "min"))   # (numpy's max of no value is an error)
    r = np.random.default_rng(seed)
    shapes = [(parts[0], 3, parts[2]), (parts[1], 3, parts[2])]
    arrays = [np.where(r.random(sh) < density, r.choice([1.5, -2.0, 0.0, nan, inf], sh), fill) for sh in shapes]
    operands = [xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill)) for a in arrays]
    e, w = xp.concat(operands), np.concatenate(arrays)
    if op in ("any", "all"):
        e, w = e > 1.0, w > 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.asarray(COLUMNS[op](w, axis=0))
        if w.shape[0] == 0:   # (nothing to reduce: the lattice's kernel, right all the same, may read no operand)
            np.testing.assert_array_equal(getattr(xp, op)(e, axis=0).lower(out, strategy="lattice")().to_numpy(), want)
        else:
            one_lattice_kernel(getattr(xp, op)(e, axis=0), want, out)


@pytest.mark.parametrize("op, fmt, fill, out", rotated([
    ("coo", 0.0, "coo"), ("csf", nan, "csf"), ("coo", 2.0, "csf"), ("csf", -inf, "coo"), ("coo", 1.0, "dcsr"),
    ("csf", inf, "csf")]))
def test_a_reduction_into_a_sparse_output_of_three_modes_runs_its_loops_around_the_outputs(op, fmt, fill, out):
    # (the terms bucketed by the output's first mode and sorted by key, as a sum's are, each run of equal keys reduced
    # from its first term, the fill folded in where the key's loops skipped one (a product of 2 at every coordinate in
    # order), appended where not the result's fill: refused before, "but those of max only into a vector, a scalar, a
    # dense output or a CSR, CSC or COO matrix", and the looplets lowered it instead; a DCSR of the sum of 3-D parts as
    # a matrix output sorted by key too)
    if out == "dcsr":
        t, T = operand((3, 4, 5), fmt, 13, fill=fill, odd=(nan, -0.0, inf))
        u, U = operand((2, 4, 5), fmt, 14, fill=fill)
    else:
        t, T = operand((3, 4, 5, 2), fmt, 13, fill=fill, odd=(nan, -0.0, inf))
        u, U = operand((2, 4, 5, 2), fmt, 14, fill=fill)
    for build in (lambda m, x, y: (m.concat if m is xp else np.concatenate)([x, y]), lambda m, x, y: x[::-2]):
        reduced_along_rows(op, build(xp, T, U), build(np, t, u), out, looplets=op == "max")


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(sorted(COLUMNS)), st.sampled_from(["coo", "csf"]), st.sampled_from(["coo", "csf"]),
       st.sampled_from([0.0, 1.0, 2.0, nan, inf, -inf]), st.tuples(st.integers(0, 3), st.integers(0, 3),
                                                                  st.integers(1, 3)),
       st.floats(0.0, 1.0), st.integers(0, 2**16))
@example("max", "coo", "coo", 0.0, (3, 2, 2), 0.4, 13)     # (the refused case of before)
@example("prod", "csf", "coo", 2.0, (0, 2, 2), 0.5, 0)     # (one part empty: a product of the fill to a power)
@example("min", "coo", "csf", nan, (1, 2, 1), 0.0, 1)      # (every operand all fill)
def test_reductions_into_a_sparse_output_of_three_modes_by_property(op, fmt, out, fill, parts, density, seed):
    assume(parts[0] + parts[1] > 0 or op not in ("max", "min"))   # (numpy's max of no value is an error)
    r = np.random.default_rng(seed)
    shapes = [(parts[0], 3, parts[2], 2), (parts[1], 3, parts[2], 2)]
    arrays = [np.where(r.random(sh) < density, r.choice([1.5, -2.0, 0.0, -0.0, nan, inf], sh), fill) for sh in shapes]
    operands = [xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill)) for a in arrays]
    e, w = xp.concat(operands), np.concatenate(arrays)
    if op in ("any", "all"):
        e, w = e > 1.0, w > 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.asarray(COLUMNS[op](w, axis=0))
        if w.shape[0] == 0:
            np.testing.assert_array_equal(getattr(xp, op)(e, axis=0).lower(out, strategy="lattice")().to_numpy(), want)
        else:
            one_lattice_kernel(getattr(xp, op)(e, axis=0), want, out)


@pytest.mark.parametrize("op", sorted(COLUMNS))
@pytest.mark.parametrize("fmt, fill", [("coo", 0.0), ("csf", nan), ("coo", 2.0), ("csf", -inf), ("coo", 1.0)])
def test_a_reduction_into_a_dense_matrix_runs_its_loops_around_the_outputs(op, fmt, fill):
    # (each term reduced into the dense output at its coordinate, started at the operator's identity, the fill folded in
    # where a coordinate's loops skipped one (a product of 2 at every coordinate in order): refused before, "but those
    # of max only into a vector or a scalar")
    t, T = operand((3, 4, 5), fmt, 13, fill=fill, odd=(nan, -0.0, inf))
    u, U = operand((2, 4, 5), fmt, 14, fill=fill)
    for build in (lambda m, x, y: (m.concat if m is xp else np.concatenate)([x, y]), lambda m, x, y: x[::-2]):
        reduced_along_rows(op, build(xp, T, U), build(np, t, u), "dense")
