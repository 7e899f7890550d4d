"""A byte-map output under Dense levels (a 2-d mask, a batch of frontiers: ``Dense(SparseByteMap)``)
declared first thing is started clear by the runtime, as a one-level byte map is
(compiler.looplets.reset_outputs): fresh, or an earlier result given as ``reuse(...)`` whose entries
alone are cleared, row by row. Either way the result is a fresh call's, the interpreter's and
numpy's, in both call paths; what cannot be so reused is refused naming the tensor and level."""

import functools

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import compiler as ss
from compiler.errors import FormatError, UsageError
from compiler.fastcall import fast_call
from compiler.format import Format
from compiler.levels import Dense, Element, Pattern, SparseByteMap, SparseList
from compiler.looplets import compile_program, loop_program
from compiler.looplets.fibers import TensorInfo
from compiler.looplets.reset_outputs import reset_refusal
from compiler.reused_outputs import reuse


@loop_program
def nonzeros(M, x):
    M[...] = -1
    for i in _:
        for j in _:
            if x[i, j] != 0:
                M[i, j] = x[i, j]


def _mask_format(order):
    return Format(Dense(SparseByteMap(Element(-1, dtype="int64"))), order)


X = Format(Dense(Dense(Element(0, dtype="int64"))))


@functools.lru_cache(maxsize=None)
def _kernel(order):
    """The 2-d kernel into rows (order (0, 1)) or columns (1, 0) of byte maps: one per order, for
    every shape and value drawn."""
    x = ss.Tensor.from_numpy(np.zeros((2, 3), np.int64), X, name="x")
    return compile_program(nonzeros, M=_mask_format(order), x=x)


def _x(a):
    return ss.Tensor.from_numpy(np.asarray(a, np.int64).reshape(np.shape(a)), X, name="x")


def _same(a: ss.Tensor, b: ss.Tensor):
    """The same result, array by array (the byte map's entries listed alike, row by row)."""
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    la, lb = a.levels[-1], b.levels[-1]
    np.testing.assert_array_equal(la.pos, lb.pos)
    np.testing.assert_array_equal(la.srt[:la.pos[-1]], lb.srt[:lb.pos[-1]])
    np.testing.assert_array_equal(la.tbl, lb.tbl)
    np.testing.assert_array_equal(a.vals, b.vals)


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_a_mask_under_a_dense_level_is_declared_by_the_runtime_not_in_c(order):
    """Its C no longer fills every value and clears every flag at each call (fails before: the
    runtime left it to the kernel, two loops over all the slots)."""
    k = _kernel(order)
    assert k.lowered.reset and not k.lowered.reuse_refused
    assert "M_val[p] = -1" not in k.c_source and "M1_tbl[p" not in k.c_source
    assert any("runtime" in step.note for step in k.trace.steps if step.stage == "lower:Declare")


_VALUES = st.sampled_from([0, 0, -1, 1, 7])


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([(0, 1), (1, 0)]), st.integers(0, 4), st.integers(0, 5), st.data())
@example((0, 1), 0, 3, None)     # no rows
@example((1, 0), 3, 0, None)     # no columns
@example((0, 1), 3, 4, "fill")   # every result all fill: nothing stored, nothing to clear
def test_each_call_writing_into_an_earlier_result_gives_a_fresh_calls(order, rows, cols, data):
    """Three rounds of results, each written into the result before last, by the fast path, the
    general path and the interpreter (one after the other, so each path reuses what another built):
    each is the fresh call's array by array, numpy's, and valid; -1 written is the fill (no entry)."""
    k = _kernel(order)
    fast = fast_call(k)

    def draw():
        if data is None:
            return np.arange(rows * cols).reshape(rows, cols) % 3 - 1
        if data == "fill":
            return np.where(np.arange(rows * cols).reshape(rows, cols) % 2, 0, -1)
        return np.array(data.draw(st.lists(_VALUES, min_size=rows * cols, max_size=rows * cols)),
                        np.int64).reshape(rows, cols)

    older = k(x=_x(draw()))
    last = k(x=_x(draw()))
    for path in ("fast", "general", "interpreter"):
        a = draw()
        x = _x(a)
        fresh = k._run(k.compiled, {"x": x})
        tbl, args = older.levels[-1].tbl, {"x": x, "M": reuse(older)}
        if path == "fast":
            got = fast(args)
            assert got is not None, "a call reusing an output under Dense levels takes the fast path"
        else:
            got = k._run(k.compiled, args) if path == "general" else k.interpret(**args)
        assert got.levels[-1].tbl is tbl, "the result is written into the given arrays"
        _same(got, fresh)
        np.testing.assert_array_equal(got.to_numpy(), np.where(a != 0, a, -1))
        got.validate()
        older, last = last, got


def test_a_tensor_made_from_numpy_is_cleared_of_its_entries_when_reused():
    """A tensor not built by the kernel is checked once (its values off its entries at the fill) and
    its entries, row by row, cleared."""
    k = _kernel((0, 1))
    a = np.array([[0, 5, 0, 2], [0, 0, 0, 0], [3, 0, 0, 4]])
    given = ss.Tensor.from_numpy(np.array([[9, -1, -1, -1], [-1, -1, 8, -1], [-1, -1, -1, 6]]),
                                 _mask_format((0, 1)), name="M")
    got = k(x=_x(a), M=reuse(given))
    np.testing.assert_array_equal(got.to_numpy(), np.where(a != 0, a, -1))
    _same(got, k(x=_x(a)))
    odd = ss.Tensor.from_numpy(np.full((3, 4), -1), _mask_format((0, 1)), name="M")
    odd.vals[5] = 3   # (a value off the entries other than the fill)
    with pytest.raises(FormatError, match="other than its fill"):
        k(x=_x(a), M=reuse(odd))


@loop_program
def blocks(M, x):
    M[...] = False
    for i in _:
        for j in _:
            if x[i, j] > 0:
                M[i, j] |= True


def test_a_byte_map_with_a_level_below_is_refused_naming_the_tensor_and_level():
    """A byte map holding a Dense block per entry (``SparseByteMap(Dense)``): the kernel declares it,
    and reuse() says why not."""
    x = _x([[1, 0], [0, 2]])
    fmt = Format(SparseByteMap(Dense(Element(False, dtype="bool"))))
    k = compile_program(blocks, M=fmt, x=x)
    assert not k.lowered.reset
    first = k(x=x)
    np.testing.assert_array_equal(first.to_numpy(), x.to_numpy() > 0)
    message = ("output M: its level 0 (SparseByteMap) has level 1 (Dense) below it: the runtime clears a "
               "byte map's entries only where it is the output's last level")
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        k(x=x, M=reuse(first))
    np.testing.assert_array_equal(first.to_numpy(), x.to_numpy() > 0)   # (untouched)


@pytest.mark.parametrize("root, words", [
    (SparseList(SparseByteMap(Element(False))), "its level 0 (SparseList) above its byte map (level 1) is not Dense"),
    (Dense(SparseByteMap(Dense(Element(False)))), "its level 1 (SparseByteMap) has level 2 (Dense) below it"),
    (Dense(SparseByteMap(Pattern())), "its byte map (level 1) holds a Pattern, not values"),
])
def test_each_byte_map_the_runtime_cannot_start_clear_says_why(root, words):
    assert reset_refusal(TensorInfo("M", Format(root), "output")).startswith(f"output M: {words}")
    assert reset_refusal(TensorInfo("M", Format(Dense(Dense(SparseByteMap(Element(False))))), "output")) is None
