"""Shape operators (reshape, concat, stack, slicing and integer indexing, transposes, expand_dims,
broadcast_to) against numpy; the sparse ones computed on stored entries, never densified (issue 30)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.array import shapeops
from array_cases import check, kinds_for, make

RNG = np.random.default_rng(11)
A = RNG.integers(0, 3, (3, 4)).astype(float)
T = RNG.integers(0, 3, (2, 3, 4)).astype(float)
V = RNG.integers(0, 3, 4).astype(float)


@pytest.mark.parametrize("kind", ["numpy", "dense", "csr", "csc", "coo", "scipy_csr", "pydata_coo"])
def test_transposes_expand_dims_and_broadcast_to(kind):
    a = xp.asarray(make(A, kind))
    check(a.T, A.T)
    check(xp.permute_dims(a, (1, 0)) + a.T, A.T + A.T)
    check(xp.expand_dims(a, 1), np.expand_dims(A, 1))
    check(xp.expand_dims(a, -1) * 2, np.expand_dims(A, -1) * 2)
    check(xp.broadcast_to(a[:1], (2, 3, 4)), np.broadcast_to(A[:1], (2, 3, 4)))
    check(xp.broadcast_to(xp.asarray(V), (3, 4)) - a, np.broadcast_to(V, (3, 4)) - A)


@pytest.mark.parametrize("kind", ["numpy", "csr", "csc", "coo", "scipy_coo", "pydata_gcxs"])
def test_reshape_concat_stack(kind):
    a = xp.asarray(make(A, kind))
    check(a.reshape(2, 6), A.reshape(2, 6))
    check(a.reshape(-1), A.reshape(-1))
    check(xp.reshape(a, (4, 1, 3)), A.reshape(4, 1, 3))
    check(xp.concat([a, a * 2], axis=0), np.concatenate([A, A * 2]))
    check(xp.concatenate([a, A], axis=-1), np.concatenate([A, A], axis=1))
    check(xp.concat([a, a.T], axis=None), np.concatenate([A, A.T], axis=None))
    check(xp.stack([a, a + 1], axis=1), np.stack([A, A + 1], axis=1))
    check(xp.stack([a, a], axis=-1), np.stack([A, A], axis=-1))


@pytest.mark.parametrize("kind", ["numpy", "csr", "csc", "coo", "pydata_coo"])
def test_basic_indexing(kind):
    a, t = xp.asarray(make(A, kind)), xp.asarray(make(T, "coo" if kind in ("csr", "csc") else kind))
    for key in [2, -1, (1, 2), (-1, -2), slice(1, 9, 2), (slice(None), slice(None, None, -1)),
                (slice(1, 9, 2), slice(None, None, -1)), (None, slice(None)), (slice(None), None),
                (Ellipsis, 1), (slice(2, 1),), (slice(None, None, -2), slice(3, 0, -2)), (0, None, slice(1, 3))]:
        check(a[key], A[key])
    check(t[..., 1], T[..., 1])
    check(t[1, ::-1, 1:3], T[1, ::-1, 1:3])
    check(t[None, :, 2], T[None, :, 2])


def test_sparse_shape_operators_stay_sparse():
    # (each computed on the stored entries: a result as sparse as its operand)
    big = np.zeros((1000, 1000))
    big[3, 7], big[999, 0] = 1.0, 2.0
    t = ss.Tensor.from_numpy(big, "csr")
    for out, want in [(shapeops.reshape_tensor(t, (10, 100000)), big.reshape(10, 100000)),
                      (shapeops.index_tensor(t, ((999, 2, -3), (0, 1000, 7))), big[999:2:-3, ::7]),
                      (shapeops.concat_tensors([t, t], 1), np.concatenate([big, big], 1)),
                      (shapeops.stack_tensors([t, t], 0), np.stack([big, big]))]:
        assert out.format.shorthand in ("csr", "coo") and out.nnz <= 4
        np.testing.assert_array_equal(out.to_numpy(), want)


def test_concat_of_operands_with_other_fills_keeps_the_first_fill():
    a = ss.Tensor.from_numpy(np.array([[1.0, 0]]), "csr")
    b = ss.Tensor.from_numpy(np.array([[1.0, 2.0]]), "csr", fill=1.0)
    out = check(xp.concat([a, b]), np.array([[1.0, 0], [1.0, 2.0]]))
    assert out.fill == 0.0


@pytest.mark.parametrize("strategy", ["lattice", "looplets", None])
@pytest.mark.parametrize("fmt", ["csr", "coo", "dense"])
def test_an_empty_first_operand_s_fill_is_not_the_concatenation_s(fmt, strategy):
    """An empty operand's fill is no value of the result: the first non-empty operand's is its fill, as
    the notation's concat's (``Concat.fill_operand``), computed fused or apart."""
    empty = xp.asarray(ss.Tensor.from_numpy(np.zeros((0, 2)), fmt, fill=np.nan))
    b = ss.Tensor.from_numpy(np.array([[1.0, 2.0], [2.0, 2.0]]), "csr", fill=2.0)
    joined = xp.concat([empty, b, empty])
    assert joined.fill_value == 2.0
    with np.errstate(invalid="ignore"):
        out = joined.compute(strategy=strategy) if strategy else joined.compute()
        apart = shapeops.concat_tensors([empty.compute(), b], 0)
    for t in (out, apart):
        np.testing.assert_array_equal(t.to_numpy(), b.to_numpy())
        assert t.fill == 2.0


@pytest.mark.parametrize("fill", [1.0, np.nan, -np.inf])
def test_shape_operators_of_one_fill_are_one_lattice_kernel_keeping_it(fill):
    """A concat of operands of equal fills, a slice (negative steps too), a ravel: the lattice
    strategy copies their entries into a result of that fill (it refused every fill but 0, and
    looplets lowered them)."""
    a = np.where(A == 0, fill, A)
    x, y = (xp.asarray(ss.Tensor.from_numpy(v, f, fill=fill)) for v, f in ((a, "csr"), (a[::-1], "coo")))
    for expr, want in ((xp.concat([x, y], axis=0), np.concatenate([a, a[::-1]])),
                       (xp.concat([x, y[:, ::-1]], axis=1), np.concatenate([a, a[::-1, ::-1]], axis=1)),
                       (x[::-2, 1:], a[::-2, 1:]), (x.reshape(-1), a.reshape(-1)), (y[1], a[::-1][1])):
        k = expr.lower()
        assert k.strategy == "lattice" and not k.trace.find("materialize"), k.trace.find("strategy")[0].note
        out = check(expr, want)
        np.testing.assert_array_equal(out.fill, fill)
        assert out.format.shorthand in ("csr", "coo", "sparse_vector")


def test_shape_errors_name_the_operator_and_the_shapes():
    a = xp.asarray(A)
    with pytest.raises(ss.ShapeError, match=r"reshape: cannot reshape shape \(3, 4\) \(12 entries\) into \(5, -1\)"):
        a.reshape(5, -1)
    with pytest.raises(ss.ShapeError, match=r"concat along axis 0: shapes \(3, 4\) and \(4, 3\) differ"):
        xp.concat([a, a.T])
    with pytest.raises(ss.ShapeError, match=r"stack: all arrays need one shape; got \(3, 4\), \(4, 3\)"):
        xp.stack([a, a.T])
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with extent 3"):
        a[3]
    with pytest.raises(IndexError, match="too many indices: 3 for an array of 2"):
        a[0, 0, 0]
    with pytest.raises(IndexError, match="advanced indexing is not supported"):
        a[[0, 1]]
    # (a numpy array in the key was compared with ... by ``in``: numpy's "truth value ... is ambiguous")
    with pytest.raises(IndexError, match="got ndarray for axis 0 .advanced indexing is not supported"):
        a[np.array([0, 1])]
    with pytest.raises(IndexError, match="got ndarray for axis 1 .advanced indexing is not supported"):
        a[..., np.array([0, 1])]
    with pytest.raises(ss.ShapeError, match=r"broadcast_to: shapes \(3, 4\) and \(4, 4\) do not broadcast"):
        xp.broadcast_to(a, (4, 4))
    with pytest.raises(ss.ShapeError, match="permute_dims: axes"):
        xp.permute_dims(a, (0, 0))
    with pytest.raises(ss.ShapeError, match="expand_dims: axis 3 is out of range"):
        xp.expand_dims(a, 3)


@pytest.mark.parametrize("call, message", [
    # on main: 2.5 taken as 2 ("cannot reshape ... into (2, 4)"), "3", 3.0 and True taken as extents
    (lambda a: a.reshape(2.5, 4), r"reshape: a shape is a tuple of ints, not \(2.5, 4\)"),
    (lambda a: a.reshape("3", 4), r"reshape: a shape is a tuple of ints, not \('3', 4\)"),
    (lambda a: xp.reshape(a, (True, 12)), "reshape: a shape is a tuple of ints"),
    (lambda a: a.reshape(None), "reshape: a shape is a tuple of ints, not None"),
    (lambda a: xp.broadcast_to(a, (3.5, 4)), r"broadcast_to: a shape is a tuple of ints, not \(3.5, 4\)"),
    # on main: Python's TypeErrors about slices and tuple indices
    (lambda a: xp.expand_dims(a, axis=1.0), "expand_dims: an axis is an int, not 1.0"),
    (lambda a: xp.permute_dims(a, (1.0, 0)), r"permute_dims: axes are ints, not \(1.0, 0\)"),
])
def test_shapes_and_axes_that_are_not_ints_are_refused_naming_the_function(call, message):
    with pytest.raises(ss.UsageError, match=message):
        call(xp.asarray(A))


@settings(max_examples=10, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["numpy", "csr", "coo"]),
       step=st.sampled_from([1, 2, 3, 4, 5, 2**62, 2**63 - 1, 2**63, 2**70]), sign=st.sampled_from([1, -1]))
@example(data=None, kind="csr", step=2**70, sign=-1)
def test_property_a_slice_step_past_the_extent_takes_one_entry_as_numpy(data, kind, step, sign):
    # on main a step past int64 failed lowering ("constant 1180591620717411303424 does not fit in int64")
    a = A if data is None else data.draw(st.sampled_from([A, A[:0], A[:1], V.reshape(1, 4)]))
    start = None if data is None else data.draw(st.sampled_from([None, 0, 1, -1, 2**70, -2**70]))
    x = xp.asarray(make(a, kind))
    check(x[start::sign * step], a[start::sign * step])
    check(x[:, start::sign * step], a[:, start::sign * step])


JOINED = ["float32", "float64", "int32", "int64", "bool"]


@settings(max_examples=7, deadline=None)
@given(sdt=st.sampled_from(JOINED), vdt=st.sampled_from(JOINED), scalar=st.sampled_from([0.1, -2.0, 0.0, np.nan]),
       values=st.lists(st.sampled_from([0.1, 3.0, 0.0, -np.inf]), min_size=0, max_size=3),
       join=st.sampled_from(["concat", "stack"]), first=st.booleans(),
       strategy=st.sampled_from([None, "lattice", "looplets"]))
@example(sdt="float32", vdt="float64", scalar=0.1, values=[0.1, 3.0], join="stack", first=True, strategy=None)
@example(sdt="bool", vdt="float32", scalar=0.1, values=[0.1], join="concat", first=True, strategy="looplets")
@example(sdt="int32", vdt="float32", scalar=-2.0, values=[], join="concat", first=False, strategy="lattice")
def test_a_join_computed_apart_is_in_its_operands_promoted_dtype(sdt, vdt, scalar, values, join, first, strategy):
    # (a 0-d operand broadcast is joined on the stored entries, by compiler.array.shapeops: the dense result
    # took the first operand's dtype, float32 beside a float64, so 0.1 came out 0.10000000149011612)
    def typed(a, dt):   # (an integer or bool has no NaN or infinity: 7 there)
        a = np.asarray(a, dtype=float)
        return (a if np.dtype(dt).kind == "f" else np.where(np.isfinite(a), a, 7)).astype(dt)
    s, v = typed(scalar, sdt), typed(values, vdt)
    parts = [np.broadcast_to(s, v.shape), v] if first else [v, np.broadcast_to(s, v.shape)]
    arrays = [xp.broadcast_to(xp.asarray(s), v.shape), xp.asarray(v)]
    arrays = arrays if first else arrays[::-1]
    if join == "concat":
        check(xp.concat(arrays), np.concatenate(parts), strategy)
    else:
        check(xp.stack(arrays, axis=1), np.stack(parts, axis=1), strategy)


_slices = st.builds(slice, st.none() | st.integers(-5, 5), st.none() | st.integers(-5, 5),
                    st.none() | st.integers(-3, 3).filter(lambda s: s != 0))


@settings(max_examples=12)
@given(st.data())
def test_property_slicing_and_reshaping_match_numpy(data):
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(0, 4)) for _ in range(ndim))
    fill = data.draw(st.sampled_from([0.0, 1.5, np.nan]))
    n = int(np.prod(shape))
    a = np.array(data.draw(st.lists(st.sampled_from([fill, 2.0, -1.0, np.inf]), min_size=n, max_size=n)),
                 dtype=float).reshape(shape)
    kind = data.draw(st.sampled_from([k for k in kinds_for(ndim) if not k.startswith("scipy")]))
    x = xp.asarray(make(a, kind, fill))
    key = tuple(data.draw(_slices) for _ in range(ndim))
    check(x[key], a[key])
    dims = data.draw(st.permutations(range(ndim)))
    check(xp.permute_dims(x, dims), a.transpose(dims))
    if n:
        check(x.reshape(-1, *shape[:1]), a.reshape(-1, *shape[:1]))
    check(xp.concat([x, x], axis=-1), np.concatenate([a, a], axis=-1))
