"""Output extents of loop programs are derived from the program and checked against a given
output's shape before the kernel runs (issue 28 items 1 and 2): no write lands outside the
output, a given output keeps its shape, and a write past it is refused naming the line."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.errors import ShapeError
from compiler.looplets import ProgramError, compile_program, loop_program
from tests.compiler.extent_programs import hstack


@loop_program
def shift_left(y, x):
    for i in _:
        y[i] = x[i + 1]


A = Tensor.from_numpy(np.arange(1.0, 13.0).reshape(4, 3), "dense")


def test_hstack_into_a_given_output_keeps_its_shape():
    D = Tensor.from_numpy(np.zeros((4, 6)), "dense")
    expected = np.hstack([A.to_numpy(), A.to_numpy()])
    for kernel in (ss.lower(hstack, strategy="looplets", D=D, A=A), compile_program(hstack, D=D, A=A)):
        got = kernel(A=A, D=D)
        assert got.shape == (4, 6)
        np.testing.assert_array_equal(got.to_numpy(), expected)


def test_hstack_into_a_fresh_output_is_sized_by_its_writes():
    got = ss.lower(hstack, D="dense", A=A)(A=A)
    np.testing.assert_array_equal(got.to_numpy(), np.hstack([A.to_numpy(), A.to_numpy()]))


def test_hstack_into_a_larger_output_leaves_the_rest():
    D = Tensor.from_numpy(np.full((4, 8), 9.0), "dense")
    got = ss.lower(hstack, D=D, A=A)(A=A, D=D).to_numpy()
    np.testing.assert_array_equal(got[:, :6], np.hstack([A.to_numpy(), A.to_numpy()]))
    np.testing.assert_array_equal(got[:, 6:], 9.0)


def test_hstack_into_a_too_small_output_is_refused_naming_tensor_mode_and_line():
    D = Tensor.from_numpy(np.zeros((4, 5)), "dense")
    line = hstack.first_line + 7
    message = rf"output D has extent 5 in mode 1, but line {line} of hstack \(D\[i, j \+ 3\] = A\[i, j\]\) writes it"
    with pytest.raises(ShapeError, match=message):
        ss.lower(hstack, D=D, A=A)(A=A, D=D)
    with pytest.raises(ProgramError, match=message):
        compile_program(hstack, D=D, A=A)


def test_a_shifted_read_into_an_output_given_a_format_starts_at_zero():
    x = Tensor.from_numpy(np.arange(1.0, 6.0), "dense")
    kernel = ss.lower(shift_left, y="dense", x=x)
    assert "for i = 0:x0_size - 1" in kernel.trace.find("dimensionalize")[0].after
    np.testing.assert_array_equal(kernel(x=x).to_numpy(), x.to_numpy()[1:])


def test_reads_at_two_offsets_run_over_their_intersection():
    @loop_program
    def diff(y, x):
        for i in _:
            y[i] = x[i + 1] - x[i]
    v = np.array([1.0, 4.0, 9.0, 16.0])
    for kernel in (ss.lower(diff, y="dense", x=v), compile_program(diff, y="dense", x=Tensor.from_numpy(v, "dense"))):
        np.testing.assert_array_equal(kernel(x=v).to_numpy(), np.diff(v))


def window_program(lo, hi, off):
    """``y[i + off] = x[lo:hi][i]``, a window of x written at an offset."""
    src = f"def win(y, x):\n    for i in _:\n        y[i + {off}] = x[{lo}:{hi}][i]\n"
    return loop_program(source=src)


@settings(max_examples=15)
@given(n=st.integers(0, 7), bounds=st.tuples(st.integers(0, 7), st.integers(0, 7)), off=st.integers(-3, 3),
       extra=st.integers(-2, 3), fresh=st.booleans(), fmt=st.sampled_from(["dense", "sparse"]))
@example(n=5, bounds=(1, 5), off=-1, extra=0, fresh=True, fmt="dense")
@example(n=5, bounds=(0, 5), off=-2, extra=-1, fresh=False, fmt="sparse")
@example(n=1, bounds=(1, 0), off=-1, extra=0, fresh=True, fmt="dense")   # (a constant extent of -1: the fast
@example(n=1, bounds=(1, 0), off=-1, extra=0, fresh=True, fmt="sparse")  # path allocated it, found merging)
def test_windows_and_offsets_against_numpy(n, bounds, off, extra, fresh, fmt):
    """``y[i + off] = x[lo:hi][i]`` into a fresh or a given output: no write below 0 (a negative
    offset drops the first -off elements), a fresh output as long as the writes reach, a given
    one of any length checked (refused when the writes reach past it)."""
    lo, hi = min(bounds[0], n), min(max(bounds), n)
    x = np.arange(1.0, n + 1.0)
    part = x[lo:hi][max(0, -off):]
    first = max(0, off)
    reach = first + len(part)
    kernel = ss.lower(window_program(lo, hi, off), y=fmt, x=Tensor.from_numpy(x, "dense"))
    X = Tensor.from_numpy(x, "dense")
    if fresh:
        got = kernel(x=X).to_numpy()
        expected = np.zeros(reach)
    else:
        size = reach + extra
        if size < 0:
            return
        y0 = Tensor.from_numpy(np.zeros(size), fmt)
        if size < reach:
            with pytest.raises(ShapeError, match="output y has extent"):
                kernel(x=X, y=y0)
            return
        got = kernel(x=X, y=y0).to_numpy()
        expected = np.zeros(size)
    expected[first:reach] = part
    np.testing.assert_array_equal(got, expected)


@loop_program
def offer_parents(_F, F, A):
    _F[...] = -1
    for j in _:
        for k in _:
            if (F[j] >= 0) and A[k, j]:
                _F[k] <<= choose(-1), j


@loop_program
def per_row_reset(y, A):
    for i in _:
        y[...] = 0.0
        for j in _:
            y[j] += A[i, j]


def test_an_output_the_program_declares_first_is_not_filled_before_the_kernel():
    """BFS's step declares its next frontier first thing (``_F[...] = -1``): the kernel's declaration
    stores every value, so the call allocates the buffer unfilled (it filled it before, then the
    kernel again: twice a round); a byte map's declaration is the runtime's instead (its C fills
    nothing: compiler.reused_outputs), once. The result is the interpreter's whatever the allocator
    returned."""
    from compiler.looplets.case_studies import PARENT_FRONTIER
    rng = np.random.default_rng(1)
    edges = rng.random((9, 9)) < 0.3
    A = Tensor.from_numpy(edges, "csc")
    for fmt in (PARENT_FRONTIER, "dense"):
        F = Tensor.from_numpy(np.where(rng.random(9) < 0.4, 2, -1), fmt)
        k = compile_program(offer_parents, _F=fmt, F=F, A=A)
        byte_map = fmt is PARENT_FRONTIER
        assert (k.lowered.initial, k.lowered.reset) == (("fill", True) if byte_map else ("none", False))
        assert ("_F_val[p] = -1" in k.c_source) is not byte_map
        for _ in range(3):
            junk = np.full(9, 77, np.int64)   # (freed memory the next buffer may reuse)
            del junk
            got = k(F=F, A=A).to_numpy()
            np.testing.assert_array_equal(got, k.interpret(F=F, A=A).to_numpy())
            reached = (edges & (F.to_numpy() >= 0)[None, :]).any(axis=1)
            np.testing.assert_array_equal(got >= 0, reached)
    # a declaration inside a loop may not run (no rows): the buffer starts at the fill
    k = compile_program(per_row_reset, y="dense", A=Tensor.from_numpy(np.ones((2, 3)), "csr"))
    assert k.lowered.initial == "fill"
    empty = Tensor.from_numpy(np.ones((0, 3)), "csr")
    np.testing.assert_array_equal(k(A=empty).to_numpy(), np.zeros(3))
