"""An array expression lowers to ONE index-notation kernel; what cannot be fused is materialized and the
trace says where and why (issue 30)."""

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from compiler import array as xp
from compiler.notation import Reduce, walk
from array_cases import check, make

RNG = np.random.default_rng(13)
A = RNG.integers(0, 3, (4, 5)).astype(float)
X = RNG.integers(0, 3, 5).astype(float)
Y = RNG.integers(0, 3, 4).astype(float)


def _materialized(kernel):
    return [s.note for s in kernel.trace.find("materialize")]


def _computed_apart(kernel):
    """The notes of nodes computed apart (a statement a strategy refused is a retry step)."""
    assert all("materialized" in n for n in _materialized(kernel)), _materialized(kernel)
    return _materialized(kernel)


def _retried(kernel):
    return [s.note for s in kernel.trace.find("retry")]


def test_a_fused_chain_is_one_kernel_with_nothing_materialized():
    a, x, y = xp.asarray(sp.csr_array(A)), xp.asarray(X), xp.asarray(Y)
    expr = (a @ x + y).sum()
    k = ss.lower(expr)
    assert _materialized(k) == []
    assert k.trace.stages().count("compile") == 1
    assert str(k.program) == "out[] = sum[i](sum[j](A[i, j] * B[j]) + C[i])"
    assert k.trace.find("array")[0].after == k.program
    np.testing.assert_array_equal(k().to_numpy(), (A @ X + Y).sum())
    check(expr, (A @ X + Y).sum())


def test_transposes_broadcasts_and_keepdims_are_relabelled_not_materialized():
    a = xp.asarray(make(A, "csr"))
    k = (a.T - a.sum(axis=1)[None, :] + xp.expand_dims(a[:, 0], 0)).lower()
    # (a[:, 0] is a constant index, lowered with the sum inside by looplets: nothing is materialized;
    # before looplets lowered a reduction under an operator, the slice was computed apart)
    assert not _computed_apart(k) and k.strategy == "looplets"
    assert str(k.program) == "out[i, j] = A[j, i] - sum[k](A[j, k]) + A[j, 0]"
    np.testing.assert_array_equal(k().to_numpy(), A.T - A.sum(axis=1)[None, :] + A[:, 0][None, :])


def test_shape_operators_are_materialized_and_named_in_the_trace():
    a, x = xp.asarray(make(A, "csr")), xp.asarray(X)
    # the lattice strategy lowers the vstack SpMV as one kernel (BURRITO's fused kernel)...
    k = (xp.concat([a, 2 * a], axis=0) @ x).lower(strategy="lattice")
    assert k.strategy == "lattice" and _materialized(k) == [] and "concat((" in str(k.program)
    np.testing.assert_array_equal(k().to_numpy(), np.concatenate([A, 2 * A]) @ X)
    # ... and a negative step, walking A's rows from the last (once refused)
    k = (xp.concat([a[::-1], 2 * a], axis=0) @ x).lower(strategy="lattice")
    assert _materialized(k) == [] and "(3, -1, -1)" in str(k.program)
    np.testing.assert_array_equal(k().to_numpy(), np.concatenate([A[::-1], 2 * A]) @ X)
    # ... and a CSC operand sliced along its rows (a walk against its storage order) read as a CSR,
    # converted before each call (it was refused, and the concat materialized)
    c = xp.asarray(make(A, "csc"))
    k = (xp.concat([c[::-1], 2 * a], axis=0) @ x).lower(strategy="lattice")
    assert _materialized(k) == [] and _retried(k) == [] and "concat((slice(" in str(k.program)
    (note,) = [s.note for s in k.trace.find("convert")]
    assert "before level 0" in note and "the kernel reads A as csr, converted before each call" in note, note
    np.testing.assert_array_equal(k().to_numpy(), np.concatenate([A[::-1], 2 * A]) @ X)
    # ... and an operand of fill 1 beside one of fill 0 (once refused, the concat materialized): its part walks
    # every coordinate, writing its fill where it stores nothing
    f = xp.asarray(make(A, "csr", 1.0))
    k = (xp.concat([f[::-1], 2 * a], axis=0) @ x).lower(strategy="lattice")
    assert _materialized(k) == [] and _retried(k) == []
    np.testing.assert_array_equal(k().to_numpy(), np.concatenate([A[::-1], 2 * A]) @ X)
    # ... and its column sum (a sum of fill 2 folds in), the sum's loops around the columns' (once refused:
    # the loops walked the CSR parts' rows inside their columns)
    k = (xp.concat([f, 2 * a], axis=0) * 2).sum(axis=0).lower(strategy="lattice")
    assert _materialized(k) == [] and _retried(k) == [] and k.trace.find("loop-order")
    np.testing.assert_array_equal(k().to_numpy(), (np.concatenate([A, 2 * A]) * 2).sum(axis=0))
    # ... and a ravel of a part of fill 1 after one of fill 0 (its part walks every coordinate: each part's rows
    # walk their own columns, read as stored; it was refused, a union in a product's right operand, and the
    # reshape materialized, then that part was read densely, converted before each call)
    k = (xp.concat([2 * a, f], axis=0) * 2).reshape(-1).lower(strategy="lattice")
    assert _materialized(k) == [] and _retried(k) == [] and k.trace.find("convert") == []
    np.testing.assert_array_equal(k().to_numpy(), (np.concatenate([2 * A, A]) * 2).reshape(-1))


def test_shape_operators_take_the_lattice_strategy_by_default_and_looplets_where_it_refuses():
    a, x = xp.asarray(make(A, "csr")), xp.asarray(X)
    k = (xp.concat([a[::-1], a], axis=0) @ x).lower()
    assert k.strategy == "lattice" and _materialized(k) == []
    step = k.trace.find("strategy")[0]
    assert step.data == {"strategy": "lattice"} and "lowers every shape operator of this statement" in step.note
    np.testing.assert_array_equal(k().to_numpy(), np.concatenate([A[::-1], A]) @ X)
    # a constant index and a negative step: one lattice kernel too
    k = (a[2, ::-1] * x[::-1]).lower()
    assert k.strategy == "lattice" and _materialized(k) == [] and "A[2, " in str(k.program)
    np.testing.assert_array_equal(k().to_numpy(), A[2, ::-1] * X[::-1])
    # a CSC's columns sliced into a row-major result: the lattice walks it against its storage
    # order, and looplets would locate each of its rows in each column (a gather of its extents):
    # the lattice reads it converted, an O(nnz + extent) counting sort (the default result is CSC,
    # its operand's order: a lattice kernel with nothing converted)
    c = xp.asarray(make(A, "csc"))
    k = c[:, ::-2].lower()
    assert k.strategy == "lattice" and not k.trace.find("convert")
    # (into CSR, the lattice's loops walk it in its own order, the CSR scattered: nothing converted)
    k = c[:, ::-2].lower(format="csr")
    assert k.strategy == "lattice" and _materialized(k) == [] and not k.trace.find("convert")
    assert "build out by a scatter" in k.trace.find("loop-order")[0].note
    np.testing.assert_array_equal(k().to_numpy(), A[:, ::-2])
    # a CSC raveled row-major has one loop, which no order walks in its storage order: read converted
    k = c.reshape(-1)[::-2].lower()
    assert k.strategy == "lattice" and _materialized(k) == [] and k.trace.find("convert")
    step = k.trace.find("strategy")[0]
    assert step.data == {"strategy": "lattice"} and "A read as csr, converted before each call" in step.note
    assert "looplets would gather A (A[k, l]: its level 1 (SparseList) is indexed by k, computed at each " \
           "coordinate the loops visit" in step.note, step.note
    np.testing.assert_array_equal(k().to_numpy(), A.reshape(-1)[::-2])
    # the same under looplets: the kept columns' loop outside the rows', the CSR scattered (was a gather)
    k = c[:, ::-2].lower(format="csr", strategy="looplets")
    assert k.strategy == "looplets" and not k.trace.find("gather")
    assert "by a scatter" in k.trace.find("output-order")[0].note
    np.testing.assert_array_equal(k().to_numpy(), A[:, ::-2])
    # a CSC's rows sliced with a step: looplets refused it and the lattice converted A; now looplets walk
    # each column's kept entries under the sum's loop, into a dense workspace copied into a sparse output
    k = (c[::-2] @ x).lower(format="sparse_vector")
    assert k.strategy == "looplets" and _materialized(k) == [] and _retried(k) == []
    assert k.trace.find("workspace") and not k.trace.find("convert")
    np.testing.assert_array_equal(k().to_numpy(), A[::-2] @ X)
    # (by default a product with a dense factor is dense, as scipy's: the output is that workspace)
    k = (c[::-2] @ x).lower()
    assert k.strategy == "looplets" and k().format.is_dense and not k.trace.find("convert")
    np.testing.assert_array_equal(k().to_numpy(), A[::-2] @ X)


def test_shape_operators_are_fused_into_one_kernel_under_looplets():
    """The same SpMV of a vstack under looplets: one statement with a concat, nothing computed apart
    (BURRITO's fused kernel); slices with steps, a ravel and a stack are fused too."""
    a, x = xp.asarray(make(A, "csr")), xp.asarray(X)
    k = (xp.concat([a, 2 * a], axis=0) @ x).lower(strategy="looplets")
    assert k.strategy == "looplets" and _computed_apart(k) == [] and "concat((" in str(k.program)
    np.testing.assert_array_equal(k().to_numpy(), np.concatenate([A, 2 * A]) @ X)
    for expr, want, op in ((a[::2, ::-1], A[::2, ::-1], "slice("), (a.reshape(20), A.reshape(20), "collapse("),
                           (xp.stack([a, a], axis=1), np.stack([A, A], axis=1), "broadcast(")):
        k = expr.lower(strategy="looplets")
        assert _computed_apart(k) == [] and op in str(k.program), k.program
        np.testing.assert_array_equal(k().to_numpy(), want)


@pytest.mark.parametrize("kind", ["csr", "coo"])
def test_a_shape_operator_inside_a_reduction_is_fused_under_looplets(kind):
    """A sum of a strided slice, of a vstack, of a ravel, under an operator: looplets plan the
    reduction's loops as the statement's (they computed the shape operator apart, the statement
    with it refused)."""
    a, v = xp.asarray(make(A, kind)), xp.asarray(np.arange(20.0))
    for expr, want in ((xp.sum(a[::2] * 2) + 1, (A[::2] * 2).sum() + 1),
                       (xp.sum(xp.concat([a, 2 * a], axis=0), axis=1) + 1, np.concatenate([A, 2 * A]).sum(axis=1) + 1),
                       (xp.sum(a[:, ::-2], axis=1) * Y, A[:, ::-2].sum(axis=1) * Y),
                       ((a.reshape(20) @ v) * 3, (A.reshape(20) @ np.arange(20.0)) * 3),
                       (xp.concat([a, a[:, 1:]], axis=1) @ xp.asarray(np.arange(9.0)) - 1,
                        np.hstack([A, A[:, 1:]]) @ np.arange(9.0) - 1)):
        k = expr.lower(strategy="looplets")
        assert k.strategy == "looplets" and _materialized(k) == [], _materialized(k)
        np.testing.assert_allclose(k().to_numpy(), want)
        check(expr, want, "looplets")


def test_a_broadcast_extent_1_axis_of_a_stored_tensor_is_read_without_it():
    col = xp.asarray(make(A[:, :1], "csr"))
    k = (col * xp.asarray(make(A, "csr"))).lower()
    assert any("broadcast of axes (1,)" in n for n in _materialized(k))
    np.testing.assert_array_equal(k().to_numpy(), A[:, :1] * A)


def test_looplets_lowers_the_nested_reduction_in_the_one_kernel():
    # (it was computed apart: the looplets refused a reduction under an operator)
    a, x, y = xp.asarray(sp.csr_array(A)), xp.asarray(X), xp.asarray(Y)
    k = (a @ x + y).sum().lower(strategy="looplets")
    assert not _materialized(k)
    reduces = [n for n in walk(k.program.rhs) if isinstance(n, Reduce)]
    assert len(reduces) == 2 and reduces[0] == k.program.rhs
    assert "hoist-reductions" in k.trace.stages()
    np.testing.assert_allclose(k().to_numpy(), (A @ X + Y).sum())


def test_compute_returns_the_format_asked_and_a_sparse_one_by_default():
    a = xp.asarray(make(A, "csc"))
    assert (a * 2).compute().format.shorthand == "csr"
    assert (a * 2).compute(format="coo").format.shorthand == "coo"
    assert (a * 2).compute(format="dense").format.shorthand == "dense"
    assert (xp.asarray(A) * 2).compute().format.shorthand == "dense"
    assert (a[0] * 2).compute().format.shorthand == "sparse_vector"
    check((a * 2).compute(format=ss.csc()), A * 2)


def test_compute_several_and_lower_refuses_tensors_for_an_array():
    a = xp.asarray(A)
    s, t = ss.compute(a.sum(), a.T)
    np.testing.assert_array_equal(s.to_numpy(), A.sum())
    np.testing.assert_array_equal(t.to_numpy(), A.T)
    with pytest.raises(ss.UsageError, match="an array expression names its own tensors"):
        ss.lower(a.sum(), A=A)
    with pytest.raises(ss.UsageError, match=r"lower\(array, ...\) takes strategy=, checked= and format= only, "
                                            r"not options="):
        ss.lower(a.sum(), options={"order": ["i"]})


def test_lower_of_an_array_takes_its_results_format():
    a = xp.asarray(make(A, "csr"))
    for key in ("format", "out"):
        k = ss.lower(a.T * 2, strategy="lattice", **{key: "csc"})
        got = k()
        assert got.format.shorthand == "csc", key
        check(got, A.T * 2)
    with pytest.raises(ss.UsageError, match="format= or out=, not both"):
        ss.lower(a * 2, format="csr", out="csr")


def test_the_trace_of_an_array_kernel_saves_and_reads_back():
    k = (xp.asarray(make(A, "csr")) @ xp.asarray(X)).lower()
    again = ss.Trace.from_json(k.trace.to_json())
    assert again.stages() == k.trace.stages()


def test_tensor_names_that_would_clash_with_an_index_or_the_output_are_renamed():
    a = ss.Tensor.from_numpy(A, "csr", name="i")
    b = ss.Tensor.from_numpy(A, "csr", name="out")
    c = ss.Tensor.from_numpy(A, "csr", name="i")    # (another tensor of the same name)
    k = (xp.asarray(a) + xp.asarray(b) * xp.asarray(c)).lower()
    assert str(k.program) == "out[i, j] = A[i, j] + B[i, j] * C[i, j]"
    np.testing.assert_array_equal(k().to_numpy(), A + A * A)


def test_looplets_build_the_default_sparse_output_of_a_reduction_of_another_fill():
    # (found by test_property_chains_of_operators_match_numpy: looplets refused the default sparse
    # output of a reduction whose fill is not 0, 'out is sparse_vector with fill 2.0: it starts at its fill',
    # and the statement was retried into a dense result; the sum now goes through a scalar)
    ones = xp.asarray(make(np.ones((2, 2)), "csr", 1.0))
    k = ones.sum(axis=0).lower(strategy="looplets")
    assert _retried(k) == [] and _materialized(k) == []
    got = k()
    assert not got.format.is_dense
    np.testing.assert_array_equal(got.to_numpy(), [2.0, 2.0])


# (each was materialized: its operand computed by its own kernel, then indexed on its stored entries;
# found by a differential probe of array expressions against numpy)
INDEXED = [("exp(v)[-3]", lambda a, v, b: xp.exp(v)[-3], lambda a, v, b: np.exp(v)[-3], "A[2]"),
           ("(a * 2)[1] + 1", lambda a, v, b: (a * 2.0)[1] + 1, lambda a, v, b: (a * 2.0)[1] + 1, "A[1, "),
           ("(a @ b)[1]", lambda a, v, b: (a @ b)[1], lambda a, v, b: (a @ b)[1], "A[1, "),
           ("sum(a, axis=1)[2]", lambda a, v, b: xp.sum(a, axis=1)[2], lambda a, v, b: a.sum(axis=1)[2], "A[2, "),
           ("(a + 1)[1, ::-2]", lambda a, v, b: (a + 1)[1, ::-2], lambda a, v, b: (a + 1)[1, ::-2], "A[1, "),
           ("(a.T * v)[:, 2]", lambda a, v, b: (a.T * xp.expand_dims(v, 1))[:, 2],
            lambda a, v, b: (a.T * v[:, None])[:, 2], "A[2, "),
           ("(a > 0)[2, 3]", lambda a, v, b: (a > 0)[2, 3], lambda a, v, b: (a > 0)[2, 3], "A[2, 3]")]


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("kind, fill", [("csr", 0.0), ("coo", 1.0), ("csc", 0.0), ("dense", 0.0)])
@pytest.mark.parametrize("name, build, want, access", INDEXED, ids=[c[0] for c in INDEXED])
def test_an_integer_index_of_operators_over_tensors_is_their_constant_index(name, build, want, access, kind,
                                                                            fill, strategy):
    a_ = np.where(RNG.random((4, 5)) < 0.5, np.array([1.0, -2.0, np.nan, np.inf])[RNG.integers(0, 4, (4, 5))], fill)
    v_ = np.array([0.0, 0.0, 0.0, 0.0, -2.0])
    b_ = A.T[:, :3].copy()
    a = xp.asarray(make(a_, kind, None if kind == "dense" else fill))
    v, b = xp.asarray(make(v_, kind if kind != "csc" else "csr")), xp.asarray(make(b_, kind))
    expr = build(a, v, b)
    kernel = expr.lower(strategy=strategy)
    assert _materialized(kernel) == [] and _retried(kernel) == [], kernel.trace
    assert access in str(kernel.program), kernel.program
    with np.errstate(invalid="ignore"):
        expected = np.asarray(want(a_, v_, b_))
    got = kernel()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.to_numpy(), expected)


def test_an_integer_index_of_an_expression_over_a_shape_operator_is_still_materialized():
    a = xp.asarray(make(A, "csr"))
    kernel = (xp.concat([a, a]) * 3.0)[1].lower()
    assert any(n.startswith("index (8, 5) -> (5,) materialized") for n in _materialized(kernel))
    np.testing.assert_array_equal(kernel().to_numpy(), A[1] * 3.0)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("at", [0, 1, 4, -1, -5])
@pytest.mark.parametrize("fill", [np.inf, -np.inf, np.nan, 0.0])
def test_an_integer_index_of_an_expression_reading_a_tensor_twice(strategy, at, fill):
    # square(sign(w))[at] reads w[at] six times (sign is three cases of its operand). Both strategies fuse it:
    # one search of w's entries for all six reads (each a search of its own, nested in the others' cases,
    # took minutes by the looplets; the lattice's own iterator per read, 3,001 lines of C for a NaN fill,
    # made the front end compute the whole expression, then its entry: compiler.lattice.seqlocated).
    w_ = np.array([-1.0, 0.5, np.nan, -0.0, 0.5])
    w_ = np.where(w_ == 0.5, fill, w_)
    w = xp.asarray(ss.Tensor.from_numpy(w_, "sparse", fill=fill))
    kernel = xp.square(xp.sign(w))[at].lower(strategy=strategy)
    assert _materialized(kernel) == [] and _retried(kernel) == [], kernel.trace
    assert len(kernel.c_source.splitlines()) < 50 and kernel.c_source.count("lower_bound_int64(") == 2, \
        kernel.c_source   # (the search's definition and its one call)
    with np.errstate(invalid="ignore"):
        expected = np.square(np.sign(w_))[at]
    np.testing.assert_array_equal(np.asarray(kernel().to_numpy()), expected)
