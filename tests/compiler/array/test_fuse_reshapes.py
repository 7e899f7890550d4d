"""Reshapes of any rank fused by the array front end (issue 30): ``T.reshape(6, 4)`` of a 3-D ``T``,
``A.reshape(2, 3, 4)``, ``T.reshape(-1)``, ``v.reshape(2, 3, 4)`` are one kernel, each group of
axes a collapse, a split or a split of a collapse (:mod:`compiler.array.reshapes`), and a split of a
slice of a collapse (``c.reshape(-1)[2:18].reshape(4, 4)``) is one kernel too. Against numpy's
``reshape`` and ``compiler.evaluate`` (the dense oracle of the statement the kernel lowered).

On main every reshape with three or more dimensions on either side was materialized (its own
kernel or numpy), and a split of a slice of a collapse under looplets too: every test here fails
there but the identity and error tests, the 2-D ``(1, 6) -> (6,)`` case and the CSR split of a
slice of a collapse under the lattice."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import ShapeError
from compiler.reference import evaluate

FILLS = (0.0, np.nan, np.inf)
#: a sparse format of each rank, and a dense one
SPARSE = {1: "sparse_vector", 2: "csr", 3: "csf"}


def data(shape, fill, seed=0):
    r = np.random.default_rng(seed)
    return np.where(r.random(shape) < 0.5, r.choice([1.0, -2.0, np.nan, np.inf, -0.0], shape), fill)


def fused(expr, want, strategy=None, out=None):
    """``expr`` lowered as one kernel (no ``materialize`` step), right against numpy and against the
    dense oracle of the statement it lowered; the kernel."""
    kernel = expr.lower(out, strategy=strategy)
    assert kernel.trace.find("materialize") == [], [s.note for s in kernel.trace.find("materialize")]
    got = kernel()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(evaluate(kernel.program, **kernel.arguments)[0], want)
    return kernel


@pytest.mark.parametrize("old, new, fmt, fill, strategy, form", [
    # (3-D -> 2-D: the first two axes collapsed, the last kept as a loop of its own)
    ((2, 3, 4), (6, 4), "csf", 0.0, "lattice", "collapse(T[k, l, j], (k, l) -> i)"),
    ((2, 3, 4), (4, 6), "dense", np.inf, "looplets", "split(collapse(collapse("),
    # (3-D -> 1-D: a collapse of a collapse; into a sorted sparse vector under looplets too)
    ((2, 3, 4), (-1,), "csf", np.nan, "looplets", "collapse(collapse("),
    ((2, 3, 4), (-1,), "coo", 0.0, "lattice", "collapse(collapse("),
    # (2-D -> 3-D: the rows split, the columns kept; or all axes at once)
    ((6, 4), (2, 3, 4), "csr", 0.0, "looplets", "split(T[l, k], l -> (i:2, j:3))"),
    ((6, 4), (2, 3, 4), "coo", np.inf, "lattice", "split(T[l, k]"),
    ((4, 6), (2, 3, 4), "dense", np.nan, "lattice", "split(split(collapse("),
    # (1-D -> 3-D: a split of a split; 3-D -> 3-D)
    ((24,), (2, 3, 4), "sparse_vector", np.inf, "looplets", "split(split(T[l]"),
    ((24,), (2, 3, 4), "dense", 0.0, "lattice", "split(split("),
    ((2, 3, 4), (3, 2, 4), "csf", 0.0, "lattice", "split(collapse("),
    ((2, 3, 4), (4, 3, 2), "coo", np.nan, "looplets", "split(split(collapse(collapse("),
])
def test_a_reshape_of_three_dimensions_is_one_kernel(old, new, fmt, fill, strategy, form):
    x = data(old, fill)
    T = ss.Tensor.from_numpy(x, fmt, fill=fill, name="T")
    kernel = fused(xp.asarray(T).reshape(new), x.reshape(new), strategy)
    assert form in str(kernel.program), kernel.program


@pytest.mark.parametrize("old, new, fmt, strategy", [
    # (arrays of no entries: the operand's axes collapsed into a result axis of extent 0, the
    # other result axes broadcast; no split dividing by an extent 0)
    ((0, 3), (3, 0), "csr", "lattice"),
    ((3, 0, 2), (0,), "csf", "looplets"),
    ((0,), (2, 0, 3), "sparse_vector", "lattice"),
    # (extent-1 axes join the group beside them)
    ((1, 6), (6,), "coo", "looplets"),
    ((6,), (1, 6, 1), "sparse_vector", "lattice"),
    ((2, 1, 3), (3, 2), "coo", "looplets"),
    ((), (1, 1), "dense", "lattice"),
])
def test_empty_arrays_and_extent_one_axes(old, new, fmt, strategy):
    x = data(old, np.nan, seed=1)
    T = ss.Tensor.from_numpy(x, fmt, fill=np.nan)
    fused(xp.asarray(T).reshape(new), x.reshape(new), strategy)


@pytest.mark.parametrize("old, fmt, fill, new, strategy", [
    # (a reshape to 0-d is its one entry, A[0, 0]: the lattice walks to it in a loop of one
    # coordinate; it refused it before, 'every index is a constant', and it was materialized)
    ((1, 1), "csr", 0.0, (), "lattice"),
    ((1, 1), "csc", np.nan, [], "lattice"),
    ((1, 1), "coo", np.inf, (), "lattice"),
    ((1, 1), "dense", np.nan, (), "lattice"),
    ((1,), "sparse_vector", np.inf, [], "lattice"),
    ((1,), "dense", 0.0, (), "lattice"),
    ((1, 1, 1), "csf", np.nan, (), "lattice"),
    ((1, 1), "csc", np.inf, (), "looplets"),
])
def test_a_reshape_to_0d_is_its_one_entry(old, fmt, fill, new, strategy):
    for stored_value in (True, False):     # (an entry not stored reads the fill)
        x = np.full(old, -2.5 if stored_value else fill)
        T = ss.Tensor.from_numpy(x, fmt, fill=fill)
        kernel = fused(xp.asarray(T).reshape(new), x.reshape(new), strategy)
        assert kernel.strategy == strategy and str(kernel.program) == f"out[] = A[{', '.join('0' * len(old))}]"


@pytest.mark.parametrize("fmt, fill, stored, strategy, expr, form", [
    ("csr", 0.0, True, None, lambda A: A * 2, "out[] = A[0, 0] * 2.0"),
    ("coo", np.nan, False, None, lambda A: A * 2, "out[] = A[0, 0] * 2.0"),
    ("dense", 0.0, True, "lattice", lambda A: A.T + A, "out[] = A[0, 0] + A[0, 0]"),
    ("csc", np.inf, False, "looplets", lambda A: A * 2, "out[] = A[0, 0] * 2.0"),
    ("csr", np.nan, True, "looplets", lambda A: A.sum(axis=1) * 3, "out[] = sum[i](A[0, i]) * 3.0"),
    ("coo", 0.0, False, "lattice", lambda A: A.sum(axis=1) * 3, "out[] = sum[i](A[0, i]) * 3.0"),
])
def test_a_reshape_to_0d_of_an_expression_is_one_kernel(fmt, fill, stored, strategy, expr, form):
    # ((A * 2).reshape(()) of a 1x1 A: each tensor read at the constant 0 of each axis, through the
    # operators, a transpose and a reduction; its axes were squeezed away first, a materialize step)
    a = np.full((1, 1), -2.5 if stored else fill)     # (an entry not stored reads the fill)
    A = xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill))
    kernel = fused(expr(A).reshape(()), expr(a).reshape(()), strategy)
    assert str(kernel.program) == form, kernel.program


def test_a_reshape_to_its_own_shape_is_the_operand():
    T = xp.asarray(ss.Tensor.from_numpy(data((2, 3, 4), 0.0), "csf"))
    assert T.reshape(2, 3, -1).node is T.node


def test_a_reshape_inside_an_expression_is_fused_with_it():
    # the matrix-vector product of a 3-D tensor seen as a matrix, and a 3-D view of a sum
    y, v = data((2, 3, 4), 0.0, seed=2), np.arange(1.0, 5.0)
    Y = xp.asarray(ss.Tensor.from_numpy(y, "csf"))
    fused(Y.reshape(6, 4) @ xp.asarray(v), y.reshape(6, 4) @ v, "looplets")
    a = data((6, 4), np.inf, seed=3)
    A = xp.asarray(ss.Tensor.from_numpy(a, "csr", fill=np.inf))
    fused((A * 2).reshape(2, 3, 4) + Y, (a * 2).reshape(2, 3, 4) + y, "looplets")


@settings(max_examples=5, deadline=None)
@given(n=st.sampled_from([0, 1, 6, 12, 24]), ranks=st.tuples(st.integers(0, 3), st.integers(0, 3)),
       sparse=st.booleans(), fill=st.sampled_from(FILLS), strategy=st.sampled_from(["lattice", "looplets"]),
       data_=st.data())
@example(n=24, ranks=(3, 3), sparse=True, fill=np.nan, strategy="looplets", data_=None)   # materialized on main
@example(n=0, ranks=(2, 3), sparse=True, fill=0.0, strategy="lattice", data_=None)
@example(n=1, ranks=(2, 0), sparse=True, fill=np.nan, strategy="lattice", data_=None)   # materialized on main
def test_reshapes_by_property(n, ranks, sparse, fill, strategy, data_):
    def factor(rank):
        # a shape of `rank` extents whose product is n (n = 0: one extent 0, the others up to 3;
        # rank 0, a 0-d array, where n is 1, else rank 1)
        if rank == 0:
            return () if n == 1 else (n,)
        if data_ is None:
            return {(24, 3): (2, 3, 4), (0, 2): (0, 3), (0, 3): (2, 0, 2)}.get((n, rank), (n,) + (1,) * (rank - 1))
        shape, left = [], n
        for k in range(rank - 1):
            if n == 0:
                shape.append(data_.draw(st.integers(0, 3)))
            else:
                shape.append(data_.draw(st.sampled_from([d for d in range(1, left + 1) if left % d == 0])))
                left //= shape[-1]
        shape.append(left if n else 0)
        return tuple(data_.draw(st.permutations(shape)))

    old, new = factor(ranks[0]), factor(ranks[1])
    assert math.prod(old) == math.prod(new) == n
    x = data(old, fill, seed=n)
    T = ss.Tensor.from_numpy(x, SPARSE[len(old)] if sparse and old else "dense", fill=fill)
    fused(xp.asarray(T).reshape(new), x.reshape(new), strategy)


@pytest.mark.parametrize("fmt, key, shape, strategy", [
    ("csr", np.s_[2:18], (4, 4), "lattice"),
    ("coo", np.s_[1:19:3], (2, 3), "looplets"),
    # (given no strategy: the lattice, reading it converted, where looplets would gather it into CSC)
    ("csc", np.s_[2:18], (4, 4), None),
    ("dense", np.s_[22:4:-3], (3, 2), "looplets"),
    # (the lattice reads a CSC collapsed row-major as a CSR, converted before each call; it refused it)
    ("csc", np.s_[2:18], (4, 4), "lattice"),
    ("csc", np.s_[22:4:-3], (3, 2), "lattice"),
])
def test_a_split_of_a_slice_of_a_collapse_is_one_kernel(fmt, key, shape, strategy):
    c = data((6, 4), np.nan, seed=4)
    C = xp.asarray(ss.Tensor.from_numpy(c, fmt, fill=np.nan))
    kernel = fused(C.reshape(-1)[key].reshape(shape), c.reshape(-1)[key].reshape(shape), strategy)
    assert "split(slice(collapse(" in str(kernel.program)
    if kernel.trace.find("shape-operators"):   # (looplets: the collapse read at start + step·(q + p·|q|))
        assert kernel.trace.find("gather"), kernel.trace
    assert bool(kernel.trace.find("convert")) == (fmt == "csc" and strategy != "looplets"), kernel.trace
    if strategy is None:
        # (the CSC result its operand's order asks for: the lattice reads the CSC converted and scatters the
        # split into CSC, where it was lowered by looplets only, gathering, and set aside for a CSR)
        assert not kernel.trace.find("retry") and kernel.strategy == "lattice"
        assert "build out by a scatter" in kernel.trace.find("loop-order")[0].note
        assert "looplets would gather A" in kernel.trace.find("strategy")[0].note


@pytest.mark.parametrize("fill", FILLS)
def test_the_lattice_converts_a_csc_for_a_split_of_a_slice_of_its_ravel(fill):
    # into each output format, an empty slice too; the convert step names the walk it avoids
    c = data((6, 4), fill, seed=5)
    C = xp.asarray(ss.Tensor.from_numpy(c, "csc", fill=fill))
    for key, shape, out in ((np.s_[1:19:3], (2, 3), "coo"), (np.s_[5:5], (0, 3), "csr"),
                            (np.s_[::-1], (6, 4), "dense")):
        kernel = fused(C.reshape(-1)[key].reshape(shape), c.reshape(-1)[key].reshape(shape), "lattice",
                       ss.parse_format(out, ndim=2, fill=fill))
        (note,) = [s.note for s in kernel.trace.find("convert")]
        assert note.startswith("A is csc: A[") and "the loops reach its level 1" in note and \
            "the kernel reads A as csr, converted before each call" in note, note


def test_a_csc_reshaped_with_an_axis_kept_is_read_converted_by_the_lattice():
    # its rows split while its columns stay a loop: both strategies walk the columns inside the
    # rows, against its storage order; looplets would locate each row in each column (a gather of
    # its extents), so the lattice reads it converted (before: the split of its whole ravel, which
    # looplets gathered, after a retry)
    a = data((6, 4), 0.0, seed=6)
    kernel = fused(xp.asarray(ss.Tensor.from_numpy(a, "csc")).reshape(2, 3, 4), a.reshape(2, 3, 4))
    assert kernel.trace.find("retry") == [] and kernel.strategy == "lattice"
    assert "split(A[l, k], l -> (i:2, j:3))" in str(kernel.program) and kernel.trace.find("convert")
    note = kernel.trace.find("strategy")[0].note
    assert "looplets would gather A (A[j + i * 3, k]: its level 1 (SparseList) is indexed by j + i * 3, whose loop " \
           "runs outside the one over k of its parent level" in note, note
    # looplets given the strategy: the statement itself, each row located in each column (the trace
    # says so; before, refused as 'not fully indexed' and retried as a split of its whole ravel)
    kernel = fused(xp.asarray(ss.Tensor.from_numpy(a, "csc")).reshape(2, 3, 4), a.reshape(2, 3, 4), "looplets")
    assert kernel.trace.find("retry") == [] and "split(A[l, k], l -> (i:2, j:3))" in str(kernel.program)
    assert "A located at each coordinate the loops visit" in kernel.trace.find("gather")[0].note


@pytest.mark.parametrize("fa, fb, fill, out", [
    ("csr", "csr", 0.0, "coo"), ("csr", "coo", np.nan, "dense"), ("csc", "csr", np.inf, None),
    ("coo", "dense", 0.0, "csr"), ("dense", "csc", np.nan, "coo"),
])
def test_a_stack_whose_rows_straddle_two_operands_is_one_lattice_kernel(fa, fb, fill, out):
    # stack([A, B]).reshape(5, 8) of 4x5 matrices: row 2 of the result is the end of A's ravel and
    # the start of B's. A split of the concatenation of the ravels whose groups straddle the
    # boundary: each operand's loop visits its own part of row 2 (materialized before, both
    # strategies refusing); by default and given the lattice, into every output format
    a, b = data((4, 5), fill, seed=21), data((4, 5), fill, seed=22)
    A, B = (xp.asarray(ss.Tensor.from_numpy(x, f, fill=fill)) for x, f in ((a, fa), (b, fb)))
    want = np.stack([a, b]).reshape(5, 8)
    kernel = fused(xp.stack([A, B]).reshape(5, 8), want)
    assert kernel.strategy == "lattice" and kernel.trace.find("retry") == []
    assert "split(concat((collapse(A[" in str(kernel.program), kernel.program
    # (a CSC read converted: looplets refuse the statement)
    assert bool(kernel.trace.find("convert")) == ("csc" in (fa, fb))
    if out is not None:
        fused(xp.stack([A, B]).reshape(5, 8), want, "lattice", ss.parse_format(out, ndim=2, fill=fill))
    if fa == fb:
        # three operands, a group spanning the whole middle one
        c = data((4, 5), fill, seed=23)
        C = xp.asarray(ss.Tensor.from_numpy(c, fa, fill=fill))
        fused(xp.stack([A[:1], B[:1], C[:1]]).reshape(1, 15), np.stack([a[:1], b[:1], c[:1]]).reshape(1, 15),
              "lattice")


def test_a_straddled_stack_is_one_looplets_kernel_and_a_reduced_one_theirs_by_default():
    a, b = data((4, 5), 0.0, seed=24), data((4, 5), 0.0, seed=25)
    A, B = (xp.asarray(ss.Tensor.from_numpy(x, "csr")) for x in (a, b))
    # looplets read each operand's ravel where row 2's columns fall in it (refused before, and
    # materialized), each operand's entries walked in storage order (they were each located)
    kernel = fused(xp.stack([A, B]).reshape(5, 8), np.stack([a, b]).reshape(5, 8), "looplets")
    assert kernel.trace.find("retry") == [] and kernel.trace.find("gather") == []
    assert len(kernel.trace.find("walk-ravel")) == 2
    # a row reduced: each operand's loop would reduce its own part of row 2 into the temporary and
    # store it, the second overwriting the first: the lattice refuses it, saying so, and looplets
    # lower it (it was materialized)
    kernel = fused(xp.stack([A, B]).reshape(5, 8).sum(axis=1), np.stack([a, b]).reshape(5, 8).sum(axis=1))
    note = kernel.trace.find("strategy")[0].note
    assert kernel.strategy == "looplets" and "straddle position 20" in note and "where a group is reduced" in note


@pytest.mark.parametrize("fa, fb, fill", [("csr", "csr", 0.0), ("coo", "dense", np.nan), ("csc", "csr", 0.0)])
def test_a_vstack_split_into_rows_straddling_its_operands_is_one_lattice_kernel(fa, fb, fill):
    # concat([A, B]).reshape(5, 7) of 4x5 and 3x5 matrices: row 2 is the end of A's ravel and the
    # start of B's. The ravel of a vstack is the concatenation of its operands' ravels, which the
    # lattice splits into straddling rows as a stack's (a collapse of the concat, the product
    # (i_A ⊔ i_B) × j, was refused and materialized); sliced too, and reshaped twice
    a, b = data((4, 5), fill, seed=28), data((3, 5), fill, seed=29)
    A, B = (xp.asarray(ss.Tensor.from_numpy(x, f, fill=fill)) for x, f in ((a, fa), (b, fb)))
    want = np.concatenate([a, b]).reshape(5, 7)
    kernel = fused(xp.concat([A, B]).reshape(5, 7), want, "lattice")
    assert "split(concat((collapse(A[" in str(kernel.program) and kernel.trace.find("retry") == []
    assert bool(kernel.trace.find("convert")) == ("csc" in (fa, fb))
    fused(xp.concat([A, B]).reshape(-1).reshape(5, 7)[1:4], want[1:4], "lattice")
    # a negative step walks A's rows backwards where the ravel walks them forwards: refused, saying
    # so, and materialized, still right
    kernel = xp.concat([A, B]).reshape(5, 7)[::-2].lower(strategy="lattice")
    (note,) = [s.note for s in kernel.trace.find("retry")]
    assert "is walked forwards in one place and backwards" in note, note
    np.testing.assert_array_equal(kernel().to_numpy(), want[::-2])


def test_an_hstack_split_into_rows_is_one_lattice_kernel():
    # concat([A, B], axis=1).reshape(5, 8): the lattice's split of a union of products (each row of
    # A followed by B's; rows of 8 straddle them) crashed its emitter with a KeyError, then was refused
    # and given to looplets (which read each entry by a search); now each product's π1 follows the
    # group of the union's π0 once the other product ran out inside it: one lattice kernel, by default too
    a, b = data((4, 5), 0.0, seed=26), data((4, 5), 0.0, seed=27)
    A, B = (xp.asarray(ss.Tensor.from_numpy(x, "csr")) for x in (a, b))
    expr, want = xp.concat([A, B], axis=1).reshape(5, 8), np.concatenate([a, b], axis=1).reshape(5, 8)
    kernel = fused(expr, want, "lattice")
    assert kernel.trace.find("retry") == [] and "@" in kernel.trace.find("cfir")[0].after_text
    assert fused(expr, want).strategy == "lattice"


STACK_CASES = [
    # (a stack's new axis collapsed with the next: the operands one after the other along the
    # result axis, a vstack; both strategies lowered a collapse of a concat of broadcasts by
    # neither, and the reshape was materialized)
    (2, (5, 4), 0, (10, 4), "csr", 0.0, "lattice", "concat((A[k, j], B[l, j]), (k, l) -> i)"),
    (2, (5, 4), 0, (10, 4), "coo", np.nan, "looplets", "concat((A[k, j], B[l, j]), (k, l) -> i)"),
    (2, (5, 4), 0, (10, 4), "csc", np.inf, "lattice", "concat((A[k, j], B[l, j]), (k, l) -> i)"),
    (2, (5, 4), 1, (5, 8), "csr", np.inf, "looplets", "concat((A[i, k], B[i, l]), (k, l) -> j)"),
    # (with every axis after it: a concatenation of the operands' ravels, which the lattice walks;
    # a split of it where its groups do not straddle an operand)
    (2, (5, 4), 0, (-1,), "dense", np.nan, "lattice", "concat((collapse(A[j, k], (j, k) -> l), collapse("),
    # (rows of 20, each one operand's ravel: the collapse of the stack, whose loop over each part walks
    # its own operand's entries, compiler.lattice.seqproductnest; before, refused and retried as a split
    # of the ravels)
    (2, (5, 4), 0, (2, 20), "coo", 0.0, "lattice", "collapse(concat((broadcast(m:1, A[k, l]), broadcast("),
    (3, (4,), 0, (-1,), "sparse_vector", np.inf, "looplets", "concat((A[j], B[k], C[l]), (j, k, l) -> i)"),
    (2, (2, 3, 2), 0, (12, 2), "csf", 0.0, "lattice", "concat((collapse(A[k, l, j], (k, l) -> m), collapse("),
    (1, (5, 4), 0, (5, 4), "csr", 0.0, "looplets", "out[i, j] = A[i, j]"),
]


@pytest.mark.parametrize("parts, shape, axis, new, fmt, fill, strategy, form", STACK_CASES)
def test_a_stack_reshaped_is_a_concatenation_of_its_operands(parts, shape, axis, new, fmt, fill, strategy, form):
    xs = [data(shape, fill, seed=8 + n) for n in range(parts)]
    names = "ABC"
    arrays = [xp.asarray(ss.Tensor.from_numpy(x, fmt, fill=fill, name=names[n])) for n, x in enumerate(xs)]
    kernel = fused(xp.stack(arrays, axis=axis).reshape(new), np.stack(xs, axis=axis).reshape(new), strategy)
    assert kernel.strategy == strategy and form in str(kernel.program), kernel.program


def test_a_stack_of_no_entries_reshaped():
    # (its operands' ravels concatenated, which the lattice walks; looplets refuse a concat of
    # collapses, and it is materialized, still right)
    e = np.zeros((0, 3))
    E = xp.asarray(ss.Tensor.from_numpy(e, "csr"))
    fused(xp.stack([E, E]).reshape(0, 3), np.stack([e, e]).reshape(0, 3), "lattice")
    got = xp.stack([E, E], axis=2).reshape(3, 0).lower(strategy="looplets")()
    assert got.shape == (3, 0) and got.to_numpy().shape == (3, 0)


def test_a_stack_along_a_new_last_axis_reshaped_builds_int32_csr():
    # (the empty rows' counts of its int32 pos were checked inside a loop marked omp simd, which
    # GCC refused: "invalid branch to/from OpenMP structured block")
    a, b = data((5, 4), 0.0, 1), data((5, 4), 0.0, 2)
    A, B = (xp.asarray(ss.Tensor.from_numpy(x, "csr")) for x in (a, b))
    fused(xp.stack([A, B], axis=2).reshape(20, 2), np.stack([a, b], axis=2).reshape(20, 2), "looplets")


def test_a_stack_of_one_array():
    # (the stack of one operand is it broadcast along the new axis: it raised TypeError, 'concat
    # takes two or more operands')
    v = np.array([0, 1.5, 0, -2.0])
    V = xp.asarray(ss.Tensor.from_numpy(v, "sparse_vector"))
    fused(xp.stack([V], axis=1), np.stack([v], axis=1), "looplets")
    fused(xp.stack([V]).reshape(2, 2), np.stack([v]).reshape(2, 2), "lattice")


def test_looplets_walk_the_ravel_of_a_stack_of_matrices_and_refuse_a_csc_naming_the_lattice():
    a = data((5, 4), 0.0, seed=9)
    A = xp.asarray(ss.Tensor.from_numpy(a, "csr"))
    expr = xp.stack([A, A]).reshape(-1)
    # each operand's rows then columns, in storage order (refused before, and materialized)
    kernel = fused(expr, np.stack([a, a]).reshape(-1), "looplets")
    assert kernel.trace.find("gather") == [] and "concat((collapse(A[" in str(kernel.program)
    # given no strategy, the lattice's one kernel
    assert expr.lower().strategy == "lattice"
    # a CSC's ravel is a discordant walk: refused naming the lattice, materialized, still right
    C = xp.asarray(ss.Tensor.from_numpy(a, "csc"))
    kernel = xp.stack([C, A]).reshape(-1).lower(strategy="looplets")
    (note,) = [s.note for s in kernel.trace.find("retry")]
    assert "discordant walk" in note and "or lower it with strategy='lattice'" in note, note
    np.testing.assert_array_equal(kernel().to_numpy(), np.stack([a, a]).reshape(-1))


@settings(max_examples=7, deadline=None)
@given(parts=st.integers(1, 3), shape=st.sampled_from([(3, 2), (0, 2), (4,), (2, 1, 3)]), axis=st.integers(0, 2),
       whole=st.sampled_from([False, True, "rows"]), fmt=st.sampled_from(["dense", "sparse"]),
       fill=st.sampled_from(FILLS), strategy=st.sampled_from(["lattice", "looplets", None]))
# (materialized on main)
@example(parts=2, shape=(3, 2), axis=0, whole=False, fmt="sparse", fill=np.nan, strategy="looplets")
# (rows of 4 straddling the operands' boundary at 6: materialized on main)
@example(parts=2, shape=(3, 2), axis=0, whole="rows", fmt="sparse", fill=np.inf, strategy=None)
# (the operands' extent-1 axis collapsed with the stack's and the last, not kept as the result's: refused by the
# lattice, materialized)
@example(parts=2, shape=(2, 1, 3), axis=2, whole=False, fmt="sparse", fill=0.0, strategy="lattice")
def test_stacks_reshaped_by_property(parts, shape, axis, whole, fmt, fill, strategy):
    # the stack's new axis collapsed with the next (or with every axis after it, or all its axes
    # split again into rows of the smallest width dividing its size but not an operand's, which
    # straddle two operands): against numpy and the oracle, one kernel where a strategy lowers it
    axis = min(axis, len(shape)) if whole != "rows" else 0
    xs = [data(shape, fill, seed=parts + n) for n in range(parts)]
    stacked = np.stack(xs, axis=axis)
    sh = stacked.shape
    size = math.prod(sh)
    if whole == "rows":
        part = math.prod(shape)
        width = next((w for w in range(2, size + 1) if size % w == 0 and part and part % w),
                     next((w for w in range(3, size + 1) if size % w == 0), 1))
        new = (size // width, width)
    elif axis + 1 < stacked.ndim:
        new = sh[:axis] + ((math.prod(sh[axis:]),) if whole else (sh[axis] * sh[axis + 1],) + sh[axis + 2:])
    else:   # (the new axis last, collapsed with the one before it: the operands interleaved)
        new = sh[:axis - 1] + (sh[axis - 1] * sh[axis],)
    fmt = SPARSE[len(shape)] if fmt == "sparse" else "dense"
    expr = xp.stack([xp.asarray(ss.Tensor.from_numpy(x, fmt, fill=fill)) for x in xs], axis=axis).reshape(new)
    kernel = expr.lower(strategy=strategy)
    want = stacked.reshape(new)
    got = kernel()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(evaluate(kernel.program, **kernel.arguments)[0], want)
    if not whole and axis + 1 < stacked.ndim and 0 not in shape:
        # (the operands concatenated along their own axis: a concat both strategies lower)
        assert kernel.trace.find("materialize") == [], [s.note for s in kernel.trace.find("materialize")]
    if whole == "rows" and strategy != "looplets" and 0 not in shape:
        # (a split of the concatenated ravels, straddling or not: the lattice's one kernel)
        assert kernel.strategy == "lattice" and kernel.trace.find("materialize") == [], kernel.trace


def test_a_reshape_of_another_size_is_refused_naming_the_shapes():
    T = xp.asarray(ss.Tensor.from_numpy(np.zeros((2, 3, 4)), "csf"))
    with pytest.raises(ShapeError, match=r"cannot reshape shape \(2, 3, 4\) \(24 entries\) into \(5, 5\)"):
        T.reshape(5, 5)
    with pytest.raises(ShapeError, match=r"cannot reshape shape \(2, 3, 4\) \(24 entries\) into \(-1, 5\)"):
        T.reshape(-1, 5)
