"""An array expression computed again takes the kernel chosen for its statement before
(compiler.array.attempts): the same statement over tensors of the same formats, shapes, value facts
and stored counts is not lowered again, and the result is the new operands'."""

from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st

from compiler import array as xp, lowering
from compiler.array import attempts, fuse, nodes
from compiler.capabilities import _CAPABILITIES, capabilities, register_capabilities
from compiler.errors import StrategyError
from compiler.lattice import lower_lattice
from array_cases import make


@pytest.fixture(autouse=True)
def _fresh():
    lowering.clear_cache()
    yield
    lowering.clear_cache()


def _counted(module, name: str):
    """A stand-in for ``module.name`` that counts its calls, each call's first argument kept (the array front end
    imports lower() when it lowers; it calls its emission through its module)."""
    calls = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)
    return calls, mock.patch.object(module, name, counted)


def _lowerings():
    """Counts lower()'s calls."""
    return _counted(lowering, "lower")


A = np.array([[0, 1.0, 0, 2.0], [3.0, 0, 0, 0], [0, 0, 4.0, 5.0]])


def test_an_expression_computed_again_is_not_lowered_again_and_computes_its_new_operands():
    a = xp.asarray(sp.csr_matrix(A))
    first = (a @ xp.asarray(np.arange(4.0)) + 1.0).compute()
    calls, patched = _lowerings()
    with patched:
        for x in (np.ones(4), np.array([2.0, -1.0, 0.5, 3.0])):
            got = (a @ xp.asarray(x) + 1.0).compute()
            np.testing.assert_array_equal(got.to_numpy(), A @ x + 1.0)
    assert calls == [] and first.to_numpy().tolist() == (A @ np.arange(4.0) + 1.0).tolist()
    k1, k2 = (a @ xp.asarray(np.ones(4))).lower(), (a @ xp.asarray(np.ones(4))).lower()
    # (the same kernel, each with its own trace and tensors: the array step says its own expression)
    assert k1.compiled is k2.compiled and k1.trace is not k2.trace and k1.trace.stages() == k2.trace.stages()
    assert str(k2.trace.find("array")[0].after) == str(k2.program)


@pytest.mark.parametrize("change", ["nan in x", "-inf in x", "stored count", "shape", "format", "asked format", "dtype"])
def test_what_the_lowering_reads_of_the_operands_chooses_again(change):
    """Whatever the kernel was chosen for is in the key: values whose facts it did not assume (a NaN
    where x meets A's fill), another stored count (which chooses the output's index dtype), shape,
    format, the format asked, the dtype: each is lowered, and computed right."""
    a, x = sp.csr_matrix(A), np.arange(4.0)
    (xp.asarray(a) * xp.asarray(x)).compute()
    fmt = None
    if change == "nan in x":
        x = np.array([np.nan, 1.0, 2.0, 3.0])
    elif change == "-inf in x":
        x = np.array([1.0, -np.inf, 2.0, 3.0])
    elif change == "stored count":
        a = sp.csr_matrix(A * (A > 1))
    elif change == "shape":
        a, x = sp.csr_matrix(A[:2]), x
    elif change == "format":
        a = sp.csc_matrix(A)
    elif change == "asked format":
        fmt = "coo"
    else:
        a, x = sp.csr_matrix(A.astype(np.float32)), x.astype(np.float32)
    calls, patched = _lowerings()
    with patched, np.errstate(invalid="ignore"):
        got = (xp.asarray(a) * xp.asarray(x)).compute(fmt)
        want = a.toarray() * x
    assert len(calls) == 1
    np.testing.assert_array_equal(got.to_numpy(), want)


def test_clear_cache_forgets_the_choices():
    x = xp.asarray(np.arange(3.0))
    (x * 2.0).compute()
    assert attempts.CHOSEN
    lowering.clear_cache()
    assert not attempts.CHOSEN


def _sparse_refused(program, formats, trace, **options):
    """The lattice's kernels, refusing a sparse output (so the front end retries the statement into a dense result)."""
    out = formats.get(program.lhs.tensor)   # (none given: the strategy's default, dense)
    if out is not None and not out.is_dense:
        raise StrategyError("this strategy writes dense outputs only")
    return lower_lattice(program, formats, trace, **options)


@pytest.fixture
def dense_outputs():
    lowering.register_strategy("dense_outputs", _sparse_refused)
    register_capabilities("dense_outputs", lambda: capabilities("lattice"))
    yield "dense_outputs"
    lowering._STRATEGIES.pop("dense_outputs", None)   # (as test_lowering's strategies are)
    _CAPABILITIES.pop("dense_outputs", None)


def test_the_forms_refused_before_the_choice_are_said_again_and_not_tried_again(dense_outputs):
    a = xp.asarray(make(A, "csr"))
    first = (a * 2.0).lower(strategy=dense_outputs)
    retries = [s.note for s in first.trace.find("retry")]
    assert len(retries) == 2 and "into a dense result" in retries[-1], retries
    calls, patched = _lowerings()
    with patched:
        b = xp.asarray(make(A * 3.0, "csr"))   # (as many entries: the same output index dtype)
        again = (b * 2.0).lower(strategy=dense_outputs)
    assert calls == [] and [s.note for s in again.trace.find("retry")] == retries
    np.testing.assert_array_equal(again().to_numpy(), A * 3.0 * 2.0)
    assert again.compiled is first.compiled


_VALUES = st.sampled_from([0.0, 1.0, -2.5, 3.0, np.nan, np.inf, -np.inf])


@settings(max_examples=20, deadline=None)
@given(fmt=st.sampled_from(["csr", "coo", "dense"]), fill=st.sampled_from([0.0, 1.0, np.nan]),
       first=st.lists(_VALUES, min_size=6, max_size=6), second=st.lists(_VALUES, min_size=6, max_size=6),
       strategy=st.sampled_from([None, "lattice", "looplets"]))
@example(fmt="csr", fill=0.0, first=[1.0] * 6, second=[np.nan, 0.0, 1.0, 1.0, 1.0, 1.0], strategy=None)
def test_the_same_expression_over_other_values_agrees_with_numpy(fmt, fill, first, second, strategy):
    """One expression's structure computed over two draws of values, NaN and infinities among them (the
    second takes the first's choice where its operands' facts and counts are the same)."""
    for vals in (first, second):
        m = np.array(vals).reshape(2, 3)
        v = np.array(vals[:3])
        a, x = xp.asarray(make(m, fmt, fill)), xp.asarray(v)
        with np.errstate(all="ignore"):
            want = np.maximum(m * v + 2.0, v) - m.sum(axis=0)
            got = (xp.maximum(a * x + 2.0, x) - a.sum(axis=0)).compute(strategy=strategy).to_numpy()
        np.testing.assert_array_equal(got, want)


def _emissions():
    """Counts the front end's emissions of an expression as a statement."""
    return _counted(fuse, "notation")


B = np.array([[0, 0, 7.0, 0], [1.0, 0, 0, -2.0]])
#: expressions of two matrices a (3 x 4) and b (2 x 4) and a vector x (4), shape operators among them
BUILT = {"matvec plus one": (lambda a, b, x: a @ x + 1.0, lambda a, b, x: a @ x + 1.0),
         "vstack times x": (lambda a, b, x: xp.concat([a, b]) @ x, lambda a, b, x: np.concatenate([a, b]) @ x),
         "strided rows": (lambda a, b, x: a[::-2] * x, lambda a, b, x: a[::-2] * x),
         "ravel": (lambda a, b, x: xp.reshape(a, (-1,)) * 2.0, lambda a, b, x: a.reshape(-1) * 2.0),
         "stack of rows": (lambda a, b, x: xp.stack([a[0], b[1], x]), lambda a, b, x: np.stack([a[0], b[1], x])),
         "new axis": (lambda a, b, x: xp.expand_dims(x, 0) + b, lambda a, b, x: x[None] + b),
         "sum under max": (lambda a, b, x: xp.maximum(xp.sum(a, axis=0), x), lambda a, b, x: np.maximum(a.sum(0), x))}


@pytest.mark.parametrize("name", sorted(BUILT))
def test_an_expression_built_again_is_not_emitted_again_and_its_lower_is_traced(name):
    """An expression built afresh in a loop over new values of the same facts and stored counts takes the call
    kept for its structure (attempts.PREPARED): no emission, no lowering; over a NaN or an infinity it is emitted again; lower() still says
    the array step of its own expression."""
    ours, numpy = BUILT[name]
    draws = [(A, B, np.arange(4.0)), (A * 3.0, B * -2.0, np.ones(4)), (A, B, np.array([2.0, -1.0, 0.5, 3.0]))]
    emitted, patched = _emissions()
    with patched:
        for n, (a, b, x) in enumerate(draws):
            got = ours(xp.asarray(sp.csr_matrix(a)), xp.asarray(sp.coo_matrix(b)), xp.asarray(x)).compute()
            np.testing.assert_array_equal(np.asarray(got.to_numpy()), numpy(a, b, x))
            if n == 0:
                first, emitted[:] = len(emitted), []
        assert first >= 1 and emitted == [], name
        a, b, x = A.copy(), B.copy(), np.array([np.nan, 1.0, 0.0, 2.0])
        a[0, 1], b[0, 2] = np.nan, -np.inf
        with np.errstate(all="ignore"):
            got = ours(xp.asarray(sp.csr_matrix(a)), xp.asarray(sp.coo_matrix(b)), xp.asarray(x)).compute()
            np.testing.assert_array_equal(np.asarray(got.to_numpy()), numpy(a, b, x))
        assert emitted, name
        k = ours(xp.asarray(sp.csr_matrix(a)), xp.asarray(sp.coo_matrix(b)), xp.asarray(x)).lower()
    assert k.trace.find("array") and str(k.trace.find("array")[-1].after) == str(k.program)


def test_a_new_axis_keeps_the_one_all_true_vector_of_its_extent():
    """The factor of an axis no operand has is the emitter's all-true vector of that extent, one per extent and kept
    read-only (nodes.all_true): a kept call holds it by identity, and no caller can change what it multiplies by."""
    x = np.arange(4.0)
    got = (xp.broadcast_to(xp.asarray(x), (2, 4)) * 2.0).compute()
    np.testing.assert_array_equal(got.to_numpy(), np.broadcast_to(x, (2, 4)) * 2.0)
    [kept] = attempts.PREPARED.values()
    ones = [t for _, t in kept.tensors if not isinstance(t, int)]
    assert len(ones) == 1 and ones[0] is nodes.all_true(2, ones[0].name) and nodes.is_all_true(ones[0])
    with pytest.raises(ValueError):
        ones[0].vals[0] = False
    # (a dense bool vector of trues the user gives is a leaf, not the emitter's)
    assert not nodes.is_all_true(make(np.ones(2, dtype=bool), "dense"))


def test_an_expression_with_a_part_computed_apart_is_not_kept():
    """A tensor made from an operand's (here a column's extent-1 axis read away, squeeze_tensor) is a value no
    other call's leaves give: the call is not kept, and each call reads its own column."""
    m = xp.asarray(make(A, "csr"))
    for col in (A[:, :1], A[:, 3:] - 1.0):
        assert (xp.asarray(make(col, "csr")) * m).lower().trace.find("materialize")
        got = (xp.asarray(make(col, "csr")) * m).compute()
        np.testing.assert_array_equal(got.to_numpy(), col * A)
    assert not attempts.PREPARED


def test_the_structure_tells_apart_a_tensor_read_twice_and_a_node_read_twice():
    """``x + y``, ``y + x``, ``x + x`` (one tensor twice), ``s + s`` (one node twice) and ``2x + 2x`` over
    tensors of one format, shape and name: each its own statement, each computed right."""
    m, n = np.array([1.0, 0.0, 3.0]), np.array([0.0, 5.0, -1.0])
    x, y = xp.asarray(make(m, "csr")), xp.asarray(make(n, "csr"))   # (sparse vectors, named alike)
    s = x * 2.0
    cases = [(lambda: x + y, m + n), (lambda: y + x, n + m), (lambda: x + x, m + m), (lambda: s + s, 4 * m),
             (lambda: x * 2.0 + x * 2.0, 4 * m), (lambda: x - y, m - n), (lambda: y - x, n - m)]
    for _ in range(2):   # (the second round takes each kept statement)
        for build, want in cases:
            np.testing.assert_array_equal(build().compute().to_numpy(), want)


@settings(max_examples=30, deadline=None)
@given(picks=st.lists(st.integers(0, 2), min_size=3, max_size=3),
       fmts=st.lists(st.sampled_from(["csr", "dense"]), min_size=3, max_size=3),
       values=st.lists(_VALUES, min_size=9, max_size=9))
@example(picks=[0, 0, 1], fmts=["csr", "csr", "dense"], values=[1.0] * 9)
def test_one_structure_over_each_choice_of_leaves_agrees_with_numpy(picks, fmts, values):
    """``max(u * v, w) - u`` for u, v, w each one of three vectors (one read twice or thrice): computed
    for each choice after every other, so a statement kept for one choice is asked for the others."""
    vecs = [np.array(values[3 * k:3 * k + 3]) for k in range(3)]
    arrays = [xp.asarray(make(v, f)) for v, f in zip(vecs, fmts)]
    choices = [picks, picks[::-1], [picks[0]] * 3, [0, 1, 2], picks]
    for u, v, w in choices:
        with np.errstate(all="ignore"):
            want = np.maximum(vecs[u] * vecs[v], vecs[w]) - vecs[u]
            got = (xp.maximum(arrays[u] * arrays[v], arrays[w]) - arrays[u]).compute().to_numpy()
        np.testing.assert_array_equal(got, want)
