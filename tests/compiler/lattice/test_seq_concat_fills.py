"""Concatenations of operands of different fills, and of operands holding a constant or a broadcast, lowered by
the lattice strategy as one kernel (issue 30). Before, both were refused naming strategy='looplets' ("a
concatenation's operands need one fill", "operand B[l, j] + 1 has a part read apart from its l levels").

The result's fill is its first operand's, as evaluate's; a part of another fill walks every coordinate and
writes its fill where it stores nothing (the rest of that part of a dense output, explicit entries of a sparse
one); a part's constants and broadcasts are tied to it (not walked at the other parts). Each kernel against
the dense oracle (compiler.evaluate), the sequence CFIR's interpreter and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.lattice.seqderive import seq_evaluate
from compiler.reference import evaluate
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf

VSTACK = "c[i, j] = concat((A[k, j], A1[l, j]), (k, l) -> i)"
HSTACK = "c[i, j] = concat((A[i, k], A1[i, l]), (k, l) -> j)"


def tensor(shape, fmt, seed, fill=0.0, density=0.5, odd=()):
    """A Tensor of ``fmt`` and ``fill`` (``density`` of its entries stored), ``odd`` values stored first."""
    r = np.random.default_rng(seed)
    a = np.where(r.random(shape) < density, r.choice([1.0, -2.0, 3.5], shape), fill)
    a.flat[:len(odd)] = odd
    return Tensor.from_numpy(a, fmt, fill=fill)


def one_kernel(program, out=None, **tensors):
    """``program`` lowered by the lattice into ``out`` (a format name, of evaluate's fill; None: dense), right
    against evaluate, the sequence CFIR's interpreter (in the kernel's loop order: a sum's loops around the
    output's, tests/compiler/lattice/test_seq_loop_order.py) and the IR interpreter; the kernel and its result."""
    with np.errstate(invalid="ignore"):
        want, fill = evaluate(program, **tensors)
        given = {} if out is None else {"c": ss.parse_format(out, ndim=want.ndim, fill=fill)}
        k = ss.lower(program, strategy="lattice", **tensors, **given)
        got = k(**tensors)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(got.fill, fill)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
        loops = [i for i, _ in k.trace.find("seq-derive")[0].data["loops"]]
        # (an input read converted: the CFIR walks the copy)
        tensors = {t: x.asformat(ss.Format(x.format.root, tuple(range(x.ndim)))) if t in dict(k.lowered.conversions)
                   else x for t, x in tensors.items()}
        chosen = k.trace.find("loop-order")
        hoisted = chosen[-1].data.get("hoisted") if chosen else None
        if hoisted is not None:
            # (a sum's loops around the output's, or a sum under an operator into a workspace first: the
            # output's loops in its order after, tests/compiler/lattice/test_seq_sum_workspace.py)
            order = k.formats[k.program.lhs.tensor].mode_order
            rows = chosen[-1].data.get("sparse_rows", False)      # (a workspace kept in sparse rows)
            np.testing.assert_array_equal(seq_evaluate(program, hoisted=hoisted, loop_order=order, sparse_rows=rows,
                                                       **tensors), want)
        else:
            names = [str(i) for i in k.program.lhs.indices]
            order = [names.index(i) for i in loops if i in names]
            np.testing.assert_array_equal(seq_evaluate(program, loop_order=order, **tensors), want)
    return k, got


@pytest.mark.parametrize("out", [None, "csr", "coo"])
@pytest.mark.parametrize("fmts", [("csr", "csr"), ("coo", "dense"), ("dense", "coo")])
def test_a_vstack_of_two_fills_writes_the_second_fill(fmts, out):
    A = tensor((3, 4), fmts[0], 1, odd=(nan, inf))
    A1 = tensor((2, 4), fmts[1], 2, fill=1.0, odd=(-inf,))
    k, got = one_kernel(VSTACK, out, A=A, A1=A1)
    # (the trace says where A1's fill is written, and A1's rows walk every column: U_j tied to its part, or a
    # dense A1's own levels, which hold every coordinate)
    assert "A1[l, j] has fill 1.0, not the 0.0" in k.trace.find("seq-derive")[0].note
    walk = "while j <- j_A1\n" if fmts[1] == "dense" else "U_j#l_A1"
    assert walk in k.trace.find("cfir")[0].after_text
    if out is not None:
        # (a sparse output of fill 0 stores A1's part whole: its fill 1.0 as explicit entries)
        coords = got.to_coords()[0]
        assert np.sum(coords[0] >= 3) == 2 * 4


@pytest.mark.parametrize("out", [None, "csr", "coo"])
@pytest.mark.parametrize("fills, fmts", [((nan, 0.0), ("csr", "coo")), ((0.0, nan), ("coo", "csr")),
                                         ((1.0, -inf), ("dense", "csr"))])
def test_an_hstack_of_two_fills(fills, fmts, out):
    A = tensor((3, 2), fmts[0], 3, fill=fills[0], odd=(inf,))
    A1 = tensor((3, 3), fmts[1], 4, fill=fills[1], odd=(nan, -inf))
    one_kernel(HSTACK, out, A=A, A1=A1)


@pytest.mark.parametrize("out", [None, "csf"])
@pytest.mark.parametrize("fmts", [("coo", "coo"), ("csr", "coo"), ("dense", "coo")])
def test_a_stack_of_reshaped_parts_of_two_fills(fmts, out):
    # (numpy's concat([a.reshape(1, 4, 3), b.reshape(1, 4, 3)]), b of fill 1: its π1 loop walked the COO b to
    # its end, and the loop over the parts, reading the union of b's π0 and U_n again, did not step U_n: the
    # loop after it wrote b's part again, all 1)
    program = "c[k, i, j] = concat((split(A[m, j], m -> (l:1, i:4)), split(A1[p, j], p -> (n:1, i:4))), (l, n) -> k)"
    A, A1 = tensor((4, 3), fmts[0], 10, odd=(nan, inf)), tensor((4, 3), fmts[1], 11, fill=1.0, odd=(-inf,))
    one_kernel(program, out, A=A, A1=A1)


@pytest.mark.parametrize("density", [0.0, 1.0])
def test_empty_and_all_fill_operands(density):
    # (the second part stores nothing, or everything; the first stores nothing: an all-fill operand)
    A, A1 = tensor((3, 4), "coo", 5, density=0.0), tensor((2, 4), "csr", 6, fill=nan, density=density)
    for out in (None, "coo"):
        one_kernel(VSTACK, out, A=A, A1=A1)
        one_kernel(HSTACK.replace("A[i, k]", "B[i, k]"), out, B=tensor((2, 3), "csr", 7, density=0.0), A1=A1)


@pytest.mark.parametrize("program", [
    # under an elementwise operator: a constant factor, a sum, a maximum and a difference with another matrix
    VSTACK.replace("-> i)", "-> i) * 2"),
    VSTACK.replace("-> i)", "-> i) + B[i, j]"),
    VSTACK.replace("-> i)", "-> i) - B[i, j]"),
    "c[i, j] = max(concat((A[k, j], A1[l, j]), (k, l) -> i), B[i, j])",
    HSTACK.replace("-> j)", "-> j) * 2").replace("A1[i, l]", "A2[i, l]"),
    # a constant, a broadcast and a sum with a broadcast vector in one part; a constant in the first
    "c[i, j] = concat((A[k, j], B2[l, j] + 1), (k, l) -> i)",
    "c[i, j] = concat((A[k, j], broadcast(l:2, x[j])), (k, l) -> i)",
    "c[i, j] = concat((A[k, j], B2[l, j] + x[j]), (k, l) -> i) + 1",
    "c[i, j] = concat((A[k, j] + 1, A1[l, j]), (k, l) -> i)",
    "c[i, j] = concat((A[i, k], A2[i, l] + 1), (k, l) -> j)",
    # nested: the inner concatenation's fill (1.0) is not the outer one's, nor is its second part's
    "c[i, j] = concat((A[k, j], concat((A1[l, j], B2[m, j] + 1), (l, m) -> n)), (k, n) -> i)",
    # a fused matrix-vector product of a vstack of two fills
    "c[i] = sum[j](concat((A[k, j], A1[l, j]), (k, l) -> i) * x[j])",
])
@pytest.mark.parametrize("fmt", ["csr", "coo"])
def test_operators_constants_and_broadcasts(program, fmt):
    tensors = {"A": tensor((3, 4), fmt, 8), "A1": tensor((2, 4), fmt, 9, fill=1.0),
               "A2": tensor((3, 3), "dense" if fmt == "coo" else "coo", 10, fill=1.0, odd=(inf,)),
               "B": tensor((5, 4), "coo", 11, odd=(nan,)), "B2": tensor((2, 4), fmt, 12, odd=(-inf,)),
               "x": tensor((4,), "sparse_vector", 13)}
    if "(A[i, k]" in program:
        tensors["A"] = tensor((3, 2), fmt, 14, odd=(-inf,))
    if "* x[j]" not in program and fmt == "csr":
        tensors["A"] = tensor(tensors["A"].shape, fmt, 15, odd=(nan, inf))
    one_kernel(program, "csr" if "c[i, j]" in program and "+ 1" not in program else None,
               **{n: t for n, t in tensors.items() if f"{n}[" in program})


def test_the_array_front_end_concatenates_parts_of_other_fills_and_constants():
    (x, X), (y, Y) = operand((2, 3), "csr", 16, odd=(nan,)), operand((3, 3), "coo", 17, odd=(inf, -2.0))
    with np.errstate(invalid="ignore"):
        one_lattice_kernel(xp.concat([X, xp.where(Y > 0, Y, 1)]), np.concatenate([x, np.where(y > 0, y, 1)]))
        one_lattice_kernel(xp.concat([X, Y + 1]), np.concatenate([x, y + 1]), "csr")
        (z, Z) = operand((2, 4), "dense", 18, fill=0.0, odd=(-inf,))
        one_lattice_kernel(xp.concat([X, Z + 1], axis=1), np.concatenate([x, z + 1], axis=1), "coo")
        one_lattice_kernel(xp.concat([X, Z + 1], axis=1) * 2, np.concatenate([x, z + 1], axis=1) * 2)


def test_a_product_with_a_factor_of_another_fill_computes_a_stored_nan_times_0():
    # (a wrong answer on main, 0 for NaN: the CFIR's * folded A's NaN times x's absent 0 to 0, which only the ∩ of
    # two fill-0 factors may; with A of fill 1, or a concatenation's part of fill NaN, it is computed now)
    A = Tensor.from_numpy(np.array([[nan, 1.0, 1.0], [2.0, 1.0, 1.0]]), "csr", fill=1.0)
    x = Tensor.from_numpy(np.array([0, 0, 3.5]), "sparse_vector")
    one_kernel("c[m] = collapse(A[i, j] * broadcast(i:2, x[j]), (i, j) -> m)", A=A, x=x)
    An = Tensor.from_numpy(np.array([[2.0, nan, 1.0], [nan, nan, nan]]), "csr", fill=nan)
    one_kernel("c[i] = sum[j](concat((B[k, j], An[l, j]), (k, l) -> i) * x[j])", B=tensor((1, 3), "coo", 23), An=An,
               x=x)


def test_parts_of_one_index_name_walk_apart():
    # (each concatenation's part binds its own index: their universes, U_k and U_k2, are two cursors)
    A = tensor((3, 4), "csr", 22)
    one_kernel("c[i, j] = concat((A[k, j] + 1, A3[k, j] + 1), (k, k) -> i)", A=A, A3=A)


def test_what_was_refused_lowers_as_one_kernel_or_by_the_strategy_lower_picks():
    A, A1 = tensor((3, 4), "csr", 19), tensor((2, 4), "csr", 20, fill=1.0)
    # (a collapse of a part that walks every coordinate reads that part densely:
    # test_seq_concat_fill_collapses.py; given no strategy, the looplets' kernel weighs against it)
    flat = "c[m] = collapse(concat((A[k, j], A1[l, j]), (k, l) -> i), (i, j) -> m)"
    one_kernel(flat, A=A, A1=A1)
    # (a column sum of a concatenation of CSR parts, once refused here, runs its sum's loops around the
    # output's: tests/compiler/lattice/test_seq_loop_order.py; the row sums are a kernel as they were)
    summed = "c[j] = sum[i](concat((A1[l, j], A[k, j]), (l, k) -> i))"
    rows = "c[i] = sum[j](concat((A1[l, j], A[k, j]), (l, k) -> i))"
    one_kernel(rows, A=A, A1=A1)
    for program in (flat, summed):
        k = ss.lower(program, A=A, A1=A1)        # (given no strategy)
        np.testing.assert_array_equal(k(A=A, A1=A1).to_numpy(), evaluate(program, A=A, A1=A1)[0])


OPERATORS = {"plain": "{}", "times-2": "{} * 2", "plus-B": "{} + B[i, j]", "max-B": "max({}, B[i, j])"}


@st.composite
def concatenations(draw):
    """``(program, parts, out)``: a vstack or hstack of two parts under an operator, each part ``(format,
    fill, density, seed, odd values)``, into ``out`` (None: dense)."""
    parts = [(draw(st.sampled_from(["csr", "coo", "dense"])), draw(st.sampled_from([0.0, 1.0, nan])),
              draw(st.sampled_from([0.0, 0.5, 1.0])), draw(st.integers(0, 99)),
              draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for _ in range(2)]
    cat = draw(st.sampled_from([VSTACK, HSTACK])).split(" = ")[1]
    program = "c[i, j] = " + OPERATORS[draw(st.sampled_from(sorted(OPERATORS)))].format(cat)
    return program, parts, draw(st.sampled_from([None, "csr", "coo"]))


@settings(max_examples=7, deadline=None)
@given(concatenations())
@example((f"c[i, j] = max({VSTACK.split(' = ')[1]}, B[i, j])", [("coo", nan, 0.5, 1, (inf,)),
                                                                  ("dense", 0.0, 0.0, 2, ())], "csr"))
@example((f"c[i, j] = {HSTACK.split(' = ')[1]} * 2", [("csr", 1.0, 1.0, 3, (-inf,)), ("coo", nan, 0.5, 4, (nan,))],
          None))
def test_concatenations_of_any_fills_by_property(drawn):
    program, parts, out = drawn
    vstack = "(k, l) -> i" in program
    shapes = [(2, 3), (1, 3)] if vstack else [(2, 2), (2, 1)]
    tensors = {name: tensor(shape, fmt, seed, fill, density, odd)
               for name, shape, (fmt, fill, density, seed, odd) in zip(("A", "A1"), shapes, parts)}
    if "B[" in program:
        tensors["B"] = tensor((3, 3) if vstack else (2, 3), "csr", 21)
    one_kernel(program, out, **tensors)


@pytest.mark.parametrize("fa", ["coo", "csr", "dense"])
@pytest.mark.parametrize("fb", ["coo", "csr", "dense"])
@pytest.mark.parametrize("rows", [(), (0,), (1,)])
def test_a_part_of_another_fill_where_the_first_part_has_no_row(fa, fb, rows):
    # (found by a random check: concat((A + 1, B * 2), axis=1) of a COO A without entries and a CSR B wrote 1, the
    # result's fill, at B's zeros: where A's row is not, whether B's part writes the fill alone was read at A's side
    # of the concatenation, Compiler.fill_sides, which located B's universe on its entries; A holds entries in
    # ``rows`` only. Five of these failed on main)
    a = np.zeros((2, 3))
    a[list(rows), 1] = 5.0
    b = np.array([[0, 7.0], [0, 0]])
    arrays = [xp.asarray(Tensor.from_numpy(v, f)) for v, f in ((a, fa), (b, fb))]
    want = np.concatenate([a + 1, b * 2], axis=1)
    k = one_lattice_kernel(xp.concat([arrays[0] + 1, arrays[1] * 2], axis=1), want, None)
    np.testing.assert_array_equal(seq_evaluate(k.program, **k.arguments), want)
    got = xp.concat([arrays[0] + 1, arrays[1] * 2], axis=1).lower(None, strategy="looplets")()
    np.testing.assert_array_equal(got.to_numpy(), want)


def test_a_later_part_of_another_fill_where_the_first_part_has_no_row():
    # (the case above with a dense part between, found by the same random check: its rows 0 and 1, where COO A
    # stores nothing, got 1 for D * 2's zeros, when Compiler.fill_sides took the other parts' leaves as what their
    # loop iterates, which left out C's dense m_C and the U_m located on it)
    a, b = np.array([[0], [0], [inf]]), np.array([[0], [1.0], [inf]])
    c, d = np.array([[0], [nan], [0]]), np.zeros((3, 1))
    arrays = [xp.asarray(Tensor.from_numpy(v, f)) for v, f in ((a, "coo"), (b, "coo"), (c, "dense"), (d, "csr"))]
    with np.errstate(invalid="ignore"):
        want = np.concatenate([a + 1, b * 2, c + 1, d * 2], axis=1)
        got = xp.concat([arrays[0] + 1, arrays[1] * 2, arrays[2] + 1, arrays[3] * 2], axis=1).lower(
            None, strategy="lattice")()
    np.testing.assert_array_equal(got.to_numpy(), want)


@pytest.mark.parametrize("out", [None, "coo"])
def test_a_part_of_another_fill_beside_a_dense_part_walks_every_row(out):
    # (found by a random check of stacked vector parts: stack([a - 0.5, (b + 1) * c]) of dense a, b and a sparse c
    # wrote only c's rows. The rows are a ∪ ((b ∪ U) ∩ c) ∪ U, U the universe of the second part, of another fill
    # than the result's -0.5; b ∪ U located on c set U's cursor to c's coordinate, where the union walks U too,
    # so no case matched a row without c: seqlocate.unshared)
    a, b, c = np.array([0, 2.0, 0, 1, 3, 0]), np.array([0, 0.5, 0, 0, 0, 0]), np.array([0, 0, 0, -4, 0, -5.0])
    A, B = (xp.asarray(Tensor.from_numpy(v, "dense")) for v in (a, b))
    C = xp.asarray(Tensor.from_numpy(c, "sparse"))
    want = np.stack([a - 0.5, (b + 1) * c], axis=1)
    k = one_lattice_kernel(xp.stack([A - 0.5, (B + 1) * C], axis=1), want, out)
    np.testing.assert_array_equal(seq_evaluate(k.program, **k.arguments), want)
