"""A column-major flatten of a row-major stored matrix under the lattice strategy (issue 30): numpy's
``a.T.reshape(-1)``, ``c[m] = collapse(A[i, j], (j, i) -> m)`` of a CSR/COO/DCSR/dense ``A``, refused on
main (its loop over ``m`` walks ``A``'s columns before its rows). It is one kernel now
(:mod:`compiler.lattice.seqcolmajor`): the collapse undone, the loops run ``i, j`` in ``A``'s order, each
entry at ``m = j·I + i``, at random into a dense output, sorted by ``j`` by a counting sort into a
sparse one; operators, scalars, dense vectors and other such collapses of the same extents fuse in.

Each case against the dense oracle (``compiler.evaluate``), numpy, the IR interpreter and the CFIR
interpreter of the statement with its collapse undone, in the loops' order: CSR/COO/DCSR/dense inputs,
dense/sparse-vector/COO outputs, fills 0/1/NaN, NaN/±inf stored, empty and all-fill operands, and by a
property. The split inverse, ``x.reshape(n, m).T`` of a sparse vector into CSR/CSC/COO, was one kernel
already: pinned here.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from compiler.errors import StrategyError
from compiler.lattice.seqderive import seq_evaluate
from compiler.notation import parse
from tests.compiler.lattice.split_kernels import operand

nan, inf = np.nan, np.inf
FLAT = "c[m] = collapse(A[i, j], (j, i) -> m)"
SUM = "c[m] = collapse(A[i, j], (j, i) -> m) + collapse(B[k, l], (l, k) -> m)"


def lowered(program, tensors, out=None, fill=0.0, order=(1, 0)):
    """``program`` compiled by the lattice into ``out`` (a format name, None: dense) of ``fill``, as one
    kernel that undid its collapse, its loops in ``order`` (of the output's undone indices), against the
    dense oracle, the IR interpreter and the CFIR interpreter of the statement it lowered; its kernel and
    result (dense)."""
    given_ = {} if out is None else {"c": ss.parse_format(out, ndim=1, fill=fill)}
    k = ss.lower(program, strategy="lattice", **tensors, **given_)
    (step,) = k.trace.find("loop-order")
    assert step.data["order"] == list(order) and "flattens column-major" in step.note, step.note
    assert k.trace.find("convert") == []
    result = k(**tensors)
    result.validate()
    got = result.to_numpy()
    with np.errstate(invalid="ignore"):
        want = evaluate(program, **tensors)[0]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), got)
    # (the statement as undone, its loops in its inputs' storage order: a route apart from one that re-sorted them)
    cfir = seq_evaluate(step.data["program"], loop_order=step.data.get("walked", step.data["order"]), **tensors)
    np.testing.assert_array_equal(cfir.reshape(-1), got)
    return k, got


def matrix(shape, fmt, seed, fill=0.0, density=0.5, odd=()):
    a = operand(shape, "dense", seed, density=density, fill=fill, odd=odd)[0]
    return a, Tensor.from_numpy(a, fmt, fill=fill)


@pytest.mark.parametrize("afmt", ["csr", "coo", "dcsr", "dense"])
@pytest.mark.parametrize("out", [None, "sparse", "coo"])
def test_a_column_major_flatten_is_one_kernel(afmt, out):
    a, A = matrix((4, 5), afmt, 1, odd=(nan, inf, -inf))
    k, got = lowered(FLAT, {"A": A}, out)
    np.testing.assert_array_equal(got, a.T.reshape(-1))
    # (the loops walk A's rows, then each row's columns; each entry's place in c from both)
    assert "int64_t m = j * 4 + i;" in k.c_source, k.c_source
    cfir = k.trace.find("cfir")[0].after_text
    assert cfir.index("while i <-") < cfir.index("while j <-"), cfir
    # (a sparse output's entries counted, then placed, by column: two passes over A, one count per column)
    assert ("c_j_count" in k.c_source) == (out is not None)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("density", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_fills_and_empty_or_full_operands(fill, density, out):
    # (positions no entry reaches hold the collapse's fill: the output's, as the oracle says)
    a, A = matrix((3, 4), "csr", 2, fill=fill, density=density, odd=(nan, -inf) if density else ())
    got = lowered(FLAT, {"A": A}, out, fill=fill)[1]
    np.testing.assert_array_equal(got, a.T.reshape(-1))


@pytest.mark.parametrize("out", [None, "sparse"])
@pytest.mark.parametrize("program", [
    "c[m] = collapse(A[i, j], (j, i) -> m) * 2.0",
    "c[m] = collapse(A[i, j], (j, i) -> m) * s[]",
    SUM,
    "c[m] = collapse(A[i, j], (j, i) -> m) * collapse(B[k, l], (l, k) -> m)",
    "c[m] = collapse(A[i, j] * B[i, j], (j, i) -> m)"])
def test_operators_around_the_collapse_fuse_in(program, out):
    a, A = matrix((3, 4), "csr", 3, odd=(inf,))
    b, B = matrix((3, 4), "coo", 4, odd=(0.0, -inf))
    tensors = {"A": A, "B": B, "s": Tensor.from_numpy(np.array(3.0), "dense")}
    tensors = {t: x for t, x in tensors.items() if f"{t}[" in program}
    k, got = lowered(program, tensors, out)
    # (two collapses of equal extents: one statement over (j, i), counted and placed once)
    assert k.c_source.count("phase 1") == (out is not None), k.c_source


def test_a_sum_of_two_flattens_of_another_fill():
    a, A = matrix((3, 2), "csr", 5, fill=1.0, odd=(nan,))
    b, B = matrix((3, 2), "dcsr", 6, fill=1.0, density=0.0)
    got = lowered(SUM, {"A": A, "B": B}, "sparse", fill=2.0)[1]
    np.testing.assert_array_equal(got, (a + b).T.reshape(-1))


@pytest.mark.parametrize("out", ["SparseByteMap(Element(0.0))", "SparseBand(Element(0.0))",
                                 "SparseList(Element(0.0), index_dtype='int32')"])
def test_vectors_the_lattice_emission_assembles(out):
    # (each sorted entry appended by the output's own code, as one iteration of its loop)
    a, A = matrix((3, 4), "csr", 10, odd=(nan, -inf))
    k = ss.lower(FLAT, strategy="lattice", A=A, c=ss.parse_format(out))
    assert [s.stage for s in k.trace if s.stage in ("convert", "loop-order")] == ["loop-order"]
    got = k(A=A)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), a.T.reshape(-1))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 1)])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_empty_extents(shape, out):
    got = lowered(FLAT, {"A": Tensor.from_numpy(np.ones(shape), "csr")}, out)[1]
    np.testing.assert_array_equal(got, np.ones(shape).T.reshape(-1))


def test_the_collapse_undone():
    from compiler.lattice.seqcolmajor import unflattened
    p = parse("c[m] = collapse(A[i, j], (j, i) -> m) * collapse(A[i, j], (j, i) -> m)")
    # (the second collapse binds i, j again: renamed apart first, then to the first's)
    assert str(unflattened(p, {"A": (2, 3)})) == "c[j, i] = A[i, j] * A[i, j]"
    # (extents that differ, a read of m outside a collapse, a sum: no such flatten)
    assert unflattened(parse(SUM), {"A": (2, 3), "B": (3, 2)}) is None
    # (a vector read at m is split back into the pair)
    assert str(unflattened(parse("c[m] = b[m] * collapse(A[i, j], (j, i) -> m)"), {"A": (2, 3), "b": (6,)})) == \
        "c[j, i] = split(b[m], m -> (j:3, i:2)) * A[i, j]"
    assert unflattened(parse("c[m] = collapse(A[i, j], (j, i) -> m) + b[m]"), {"A": (2, 3), "b": (7,)}) is None
    assert unflattened(parse("c[m] = sum[k](collapse(A[i, j, k], (j, i) -> m))"), {"A": (2, 3, 2)}) is None
    assert unflattened(parse("C[m, n] = collapse(A[i, j], (j, i) -> m) * b[n]"), {"A": (2, 3), "b": (2,)}) is None


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("op", ["+", "*"])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_a_dense_vector_beside_it_is_read_a_column_apart(fill, op, out):
    # (b[m] split back into (j, i): each row's loop steps through b four apart, the coordinates of its column)
    a, A = matrix((4, 3), "csr", 11, fill=fill, odd=(nan, inf))
    b = operand(12, "dense", 12, fill=fill, odd=(-inf,))[0]
    program = f"c[m] = collapse(A[i, j], (j, i) -> m) {op} b[m]"
    with np.errstate(invalid="ignore"):
        want = evaluate(program, A=A, b=Tensor.from_numpy(b, "dense", fill=fill))
    k, got = lowered(program, {"A": A, "b": Tensor.from_numpy(b, "dense", fill=fill)}, out, fill=float(want[1]))
    if op == "+" and fill == 0:
        # (a union: b walked, three apart; where the fill annihilates, b is located at A's entries)
        assert "pb0 += 4;" in k.c_source, k.c_source


def test_what_it_cannot_flatten_stays_refused_naming_looplets():
    # (a sum beside it: no flatten to undo, its loops would reach A's columns first)
    a, A = matrix((3, 4), "csr", 7)
    B = Tensor.from_numpy(np.ones((12, 2)), "csr")
    program = "c[m] = collapse(A[i, j], (j, i) -> m) + sum[k](B[m, k])"
    with pytest.raises(StrategyError, match=r"the loops reach its level 1 \(j\) before level 0.*strategy='looplets'"):
        ss.lower(program, strategy="lattice", A=A, B=B)


@pytest.mark.parametrize("out", ["dense", "sparse", "coo"])
def test_looplets_walk_it_in_storage_order_and_lower_picks_the_lattice(out):
    # (the looplets walk A by rows and write c at i + j * |i|: a dense output directly, a sparse one
    # through a dense workspace copied in order; lower() given no strategy keeps the lattice's kernel)
    a, A = matrix((3, 4), "csr", 8, fill=nan, odd=(nan, inf))
    c = ss.parse_format(out, ndim=1, fill=nan)
    k = ss.lower(FLAT, strategy="looplets", A=A, c=c)
    assert [s.stage for s in k.trace.steps if s.stage in ("retry", "materialize", "convert")] == []
    got = k(A=A)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), a.T.reshape(-1))
    np.testing.assert_array_equal(k.interpret(A=A).to_numpy(), a.T.reshape(-1))
    k = ss.lower(FLAT, A=A, c=c)
    assert k.strategy == "lattice"
    np.testing.assert_array_equal(k(A=A).to_numpy(), a.T.reshape(-1))


@pytest.mark.parametrize("out", ["csr", "csc", "coo"])
def test_the_split_inverse_was_one_kernel_already(out):
    # (x.reshape(4, 5).T of a sparse vector: a CSR scattered, a COO sorted, a CSC appended in its order)
    x = operand(20, "dense", 9, odd=(nan, inf))[0]
    X = Tensor.from_numpy(x, "sparse")
    program = "o[i, j] = split(x[k], k -> (j:4, i:5))"
    k = ss.lower(program, strategy="lattice", x=X, o=ss.parse_format(out, ndim=2))
    assert k.trace.find("convert") == []
    got = k(x=X)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), x.reshape(4, 5).T)
    np.testing.assert_array_equal(k.interpret(x=X).to_numpy(), x.reshape(4, 5).T)


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(["csr", "coo", "dcsr", "dense"]), st.sampled_from([0.0, 0.0, 1.0, nan]),
       st.sampled_from([0.0, 0.4, 1.0]), st.sampled_from([(), (nan,), (inf, -inf)]),
       st.sampled_from([(1, 4), (4, 1), (2, 3), (3, 3)]), st.sampled_from([None, "sparse", "coo"]),
       st.sampled_from([FLAT, SUM, "c[m] = collapse(A[i, j], (j, i) -> m) * 2.0"]), st.integers(0, 2**16))
@example("dcsr", nan, 0.4, (inf, -inf), (3, 3), "coo", SUM, 1)
@example("coo", 1.0, 1.0, (nan,), (1, 4), "sparse", FLAT, 2)
def test_column_major_flattens_by_property(afmt, fill, density, odd, shape, out, program, seed):
    a, A = matrix(shape, afmt, seed, fill=fill, density=density, odd=odd)
    b, B = matrix(shape, "csr", seed + 1, fill=fill)
    tensors = {"A": A, "B": B} if "B[" in program else {"A": A}
    with np.errstate(invalid="ignore"):
        want = evaluate(program, **tensors)
    lowered(program, tensors, out, fill=float(want[1]))
