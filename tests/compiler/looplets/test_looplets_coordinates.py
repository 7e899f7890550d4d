"""Coordinates a loop program computes (a scatter ``y[I[i]] += x[i]``, a gather ``y[i] = x[I[i]]``,
a histogram ``bins[v[i] // w] += 1``, an offset by data ``y[i + d[j]]``) are checked against their mode's extent in every build: an
out-of-range one raises a KernelError naming the tensor, the value, the extent and the program's
line, where an unchecked build wrote or read past the buffer (issue 31). Accesses at loop indices
are in bounds by construction and stay unchecked."""

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.errors import KernelError, ShapeError
from compiler.levels import Dense, Element, Pattern, SparseByteMap, SparseList
from compiler.looplets.compile import compile_program
from compiler.looplets.errors import ProgramError
from compiler.looplets.gallery import spmv
from compiler.looplets.language import loop_program


@loop_program
def scatter(y, I, x):
    for i in _:
        y[I[i]] += x[i]


@loop_program
def gather(y, I, x):
    for i in _:
        y[i] = x[I[i]]


@loop_program
def histogram(bins, v):
    for i in _:
        bins[v[i] // 10] += 1


@loop_program
def coo_to_dense(C, I, J, v):
    for k in _:
        C[I[k], J[k]] += v[k]


@loop_program
def at_constant(y, x):
    for i in _:
        y[2] += x[i]


@loop_program
def at_let(y, I, x):
    for i in _:
        k = I[i] + 1
        y[k] += x[i]


@loop_program
def offset_write(y, d, x):
    for j in _:
        for i in _:
            y[i + d[j]] += x[i]


@loop_program
def offset_read(y, d, x):
    for j in _:
        for i in _:
            y[i] += x[i + d[j]]


@loop_program
def masked_scatter(y, M, I):
    for i in _:
        if M[i]:
            y[I[i]] += 1.0


def dense(a):
    return Tensor.from_numpy(np.asarray(a), "dense")


def line_of(program, text):
    """The file line of ``text`` in ``program``'s source, as errors name it."""
    lines = program.source.splitlines()
    return next(k for k, l in enumerate(lines) if text in l) + program.first_line


def expect(program, tensor, mode, value, extent, text):
    return (rf"line {line_of(program, text)} of {program.name} \({re.escape(text)}\): coordinate {value} of "
            rf"{tensor} \(mode {mode}\) is outside its extent \[0, {extent}\)")


CASES = {   # name: (program, output given, inputs, the error's tensor, mode, value, extent, line text)
    "scatter too large": (scatter, {"y": np.zeros(3)}, {"I": np.array([0, 5, 1]), "x": np.ones(3)},
                          "y", 0, 5, 3, "y[I[i]] += x[i]"),
    "scatter negative": (scatter, {"y": np.zeros(3)}, {"I": np.array([0, -1, 1]), "x": np.ones(3)},
                         "y", 0, -1, 3, "y[I[i]] += x[i]"),
    "gather": (gather, {"y": "dense"}, {"I": np.array([2, 3]), "x": np.ones(3)}, "x", 0, 3, 3, "y[i] = x[I[i]]"),
    "gather huge": (gather, {"y": "dense"}, {"I": np.array([2**40]), "x": np.ones(3)},
                    "x", 0, 2**40, 3, "y[i] = x[I[i]]"),
    "histogram": (histogram, {"bins": np.zeros(3, np.int64)}, {"v": np.array([5, 35, 1])},
                  "bins", 0, 3, 3, "bins[v[i] // 10] += 1"),
    "histogram negative": (histogram, {"bins": np.zeros(3, np.int64)}, {"v": np.array([5, -1])},
                           "bins", 0, -1, 3, "bins[v[i] // 10] += 1"),
    "column": (coo_to_dense, {"C": np.zeros((2, 3))}, {"I": np.array([1, 0]), "J": np.array([2, 3]),
                                                       "v": np.ones(2)}, "C", 1, 3, 3, "C[I[k], J[k]] += v[k]"),
    # (the slot y[2] was kept in a local loaded before the loop, ahead of its check)
    "constant": (at_constant, {"y": np.zeros(2)}, {"x": np.ones(3)}, "y", 0, 2, 2, "y[2] += x[i]"),
    # an offset by data is computed too (no loop bounds i + d[j]): it wrote and read past the buffers
    "offset write": (offset_write, {"y": np.zeros(4)}, {"d": np.array([0, 5]), "x": np.ones(3)},
                     "y", 0, 5, 4, "y[i + d[j]] += x[i]"),
    "offset read": (offset_read, {"y": np.zeros(4)}, {"d": np.array([0, 1]), "x": np.ones(4)},
                    "x", 0, 4, 4, "y[i] += x[i + d[j]]"),
    "let": (at_let, {"y": np.zeros(3)}, {"I": np.array([1, 2]), "x": np.ones(2)}, "y", 0, 3, 3, "y[k] += x[i]"),
}


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_computed_coordinate_out_of_range_raises_naming_the_access(case, checked):
    program, outs, ins, tensor, mode, value, extent, text = CASES[case]
    ins = {t: dense(a) for t, a in ins.items()}
    given = {t: dense(a) if isinstance(a, np.ndarray) else a for t, a in outs.items()}
    k = compile_program(program, checked=checked, **given, **ins)
    args = {**{t: v for t, v in given.items() if not isinstance(v, str)}, **ins}
    with pytest.raises(KernelError, match=expect(program, tensor, mode, value, extent, text)):
        k(**args)
    with pytest.raises(KernelError, match=expect(program, tensor, mode, value, extent, text)):
        k.interpret(**args)
    if program is at_constant and not checked:   # nothing reads the slot before its check
        src = k.c_source
        assert src.index("if (2 >= y0_size)") < src.index("y_val[2]")
    # the kernel is usable again after the error, on data in range
    if program is gather:
        fixed = {**args, "I": dense(np.zeros(len(ins["I"].to_numpy()), np.int64))}
        np.testing.assert_array_equal(k(**fixed).to_numpy(), np.ones(len(ins["I"].to_numpy())))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(-4, 8), max_size=8), st.integers(1, 5))
@example([0, 5, 1], 3)        # issue 31: wrote past y
@example([-1], 3)
@example([], 2)
@example([2, 2, 0, 1], 3)
def test_scatter_and_gather_over_any_index_array_agree_with_numpy_or_raise(idx, n):
    I = dense(np.array(idx, np.int64))
    x = dense(np.arange(1.0, len(idx) + 1))
    src = dense(np.arange(10.0, 10.0 + n))
    y0 = dense(np.zeros(n))
    ks = compile_program(scatter, y=y0, I=I, x=x)
    kg = compile_program(gather, y="dense", I=I, x=src)
    bad = next((v for v in idx if not 0 <= v < n), None)
    if bad is None:
        want = np.zeros(n)
        np.add.at(want, np.array(idx, np.int64), x.to_numpy())
        np.testing.assert_array_equal(ks(y=y0, I=I, x=x).to_numpy(), want)
        np.testing.assert_array_equal(ks.interpret(y=y0, I=I, x=x).to_numpy(), want)
        np.testing.assert_array_equal(kg(I=I, x=src).to_numpy(), src.to_numpy()[np.array(idx, np.int64)])
        np.testing.assert_array_equal(kg.interpret(I=I, x=src).to_numpy(), src.to_numpy()[np.array(idx, np.int64)])
    else:   # the first index out of range, in the loop's order
        with pytest.raises(KernelError, match=rf"coordinate {bad} of y \(mode 0\) is outside its extent \[0, {n}\)"):
            ks(y=y0, I=I, x=x)
        with pytest.raises(KernelError, match=rf"coordinate {bad} of x \(mode 0\) is outside its extent \[0, {n}\)"):
            kg(I=I, x=src)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-25, 45), max_size=8), st.integers(1, 4))
@example([5, 35, 1], 3)
@example([-1, 0], 3)
def test_a_histogram_agrees_with_bincount_or_raises(values, nbins):
    v = dense(np.array(values, np.int64))
    bins = dense(np.zeros(nbins, np.int64))
    k = compile_program(histogram, bins=bins, v=v)
    which = np.array(values, np.int64) // 10
    bad = next((int(b) for b in which if not 0 <= b < nbins), None)
    if bad is None:
        want = np.bincount(which, minlength=nbins)
        np.testing.assert_array_equal(k(bins=bins, v=v).to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(bins=bins, v=v).to_numpy(), want)
    else:
        with pytest.raises(KernelError, match=rf"coordinate {bad} of bins \(mode 0\) is outside"):
            k(bins=bins, v=v)


def test_only_the_coordinates_an_entry_reaches_are_checked():
    # a masked-out index is never used: no error for it, as numpy's y[I[M]] would give none
    m = np.array([True, False, True])
    M = Tensor.from_numpy(m, SparseList(Pattern()))
    I = dense(np.array([0, 99, 1]))
    y0 = dense(np.zeros(2))
    k = compile_program(masked_scatter, y=y0, M=M, I=I)
    np.testing.assert_array_equal(k(y=y0, M=M, I=I).to_numpy(), [1.0, 1.0])
    with pytest.raises(KernelError, match="coordinate 99 of y"):
        k(y=y0, M=Tensor.from_numpy(np.ones(3, bool), SparseList(Pattern())), I=I)


def test_the_loop_index_mode_of_a_write_with_a_computed_coordinate_is_checked_against_the_output():
    # bins[n, v[n, i]]: mode 1 is checked at each write, and mode 0 (the loop's n) by the call
    # against the output's shape; it was not checked, and a kernel compiled for 3 rows counted
    # 50 into a 3-row buffer (glibc: "corrupted double-linked list"; found by a stack of histograms)
    @loop_program
    def per_row(bins, v):
        bins[...] = 0
        for n in _:
            for i in _:
                bins[n, v[n, i]] += 1
    rows = Dense(Dense(Element(0, dtype="int64")))
    bins = Tensor.from_numpy(np.zeros((3, 4), np.int64), rows)
    k = compile_program(per_row, bins=bins, v=Tensor.from_numpy(np.zeros((3, 6), np.int64), rows))
    v = np.array([[0, 1, 1], [3, 3, 3], [2, 0, 1]])
    np.testing.assert_array_equal(k(v=Tensor.from_numpy(v, rows)).to_numpy(), [np.bincount(r, minlength=4) for r in v])
    with pytest.raises(ShapeError, match=r"output bins has extent 3 in mode 0, but line \d+ of per_row "
                                         r"\(bins\[n, v\[n, i\]\] \+= 1\) writes it up to coordinate 49"):
        k(v=Tensor.from_numpy(np.zeros((50, 6), np.int64), rows))


def test_a_scatter_into_a_byte_map_is_checked_too():
    @loop_program
    def hist(H, img):
        for i in _:
            for j in _:
                H[img[i, j]] += 1.0
    img = dense(np.array([[1, 2], [9, 0]]))
    H0 = Tensor.from_numpy(np.zeros(4), SparseByteMap(Element(0.0)))
    k = compile_program(hist, H=H0, img=img)
    with pytest.raises(KernelError, match=r"coordinate 9 of H \(mode 0\) is outside its extent \[0, 4\)"):
        k(H=H0, img=img)
    ok = dense(np.array([[1, 2], [3, 1]]))
    np.testing.assert_array_equal(k(H=H0, img=ok).to_numpy(), [0.0, 2.0, 1.0, 1.0])


def test_a_coordinate_of_floats_is_refused_when_lowering():
    with pytest.raises(ProgramError, match=r"coordinate I\[i\] of x \(mode 0\) is float64; index a tensor with "
                                           r"integers"):
        compile_program(gather, y="dense", I=dense(np.array([0.0, 1.0])), x=dense(np.ones(3)))


def test_accesses_at_loop_indices_stay_unchecked():
    A = Tensor.from_numpy(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]), "csr")
    x = dense(np.array([1.0, 2.0, 3.0]))
    src = compile_program(spmv, y="dense", A=A, x=x).c_source
    assert "coordinate_error" not in src and "int64_t *error" not in src
    # a scatter's C checks its one computed coordinate, once, before the access
    src = compile_program(scatter, y=dense(np.zeros(3)), I=dense(np.array([0])), x=dense(np.ones(1))).c_source
    body = src[src.index("int scatter("):]
    assert body.count("return coordinate_error(error, 0, coord, y0_size);") == 1
    assert body.index("if (coord < 0 || coord >= y0_size)") < body.index("y_val[coord] += x_val[i];")


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_a_check_inside_a_scratch_array_frees_it_and_reports(checked):
    # the imperative IR a workspace scatter lowers to: the check leaves through the scratch array's
    # scope, which must free it first (as an out-of-memory exit does)
    from compiler import backend
    from compiler.imperative import Allocate, Buffer, For, Function, Load, Scalar, Store, Var, interpret
    from compiler.imperative.guard import CheckCoordinate
    n, m, i = Scalar("n", "int64"), Scalar("m", "int64"), Var("i")
    I, y = Buffer("I", "int64"), Buffer("y", "float64", "inout")
    body = Allocate("w", "float64", Var("m"), 0.0, [
        For(i, 0, Var("n"), [CheckCoordinate(Load("I", i), Var("m"), "w", 0, "line 3 of k (w[I[i]] += 1)"),
                             Store("w", Load("I", i), 1.0, "+")]),
        For(i, 0, Var("m"), [y.store(i, Load("w", i))])])
    fn = Function("k", (n, m, I, y), [body])
    kernel = backend.compile_function(fn, checked=checked)
    src = kernel.c_source
    guard = src[src.index("// w, mode 0"):]
    assert guard.index("free(w);") < guard.index("return coordinate_error(")
    args = dict(n=3, m=2, I=np.array([0, 1, 1]), y=np.zeros(2))
    np.testing.assert_array_equal(kernel(**args)["y"], [1.0, 2.0])
    np.testing.assert_array_equal(interpret(fn, **{**args, "y": np.zeros(2)})["y"], [1.0, 2.0])
    message = r"kernel k: line 3 of k \(w\[I\[i\]\] \+= 1\): coordinate 2 of w \(mode 0\) is outside its extent \[0, 2\)"
    with pytest.raises(KernelError, match=message):
        kernel(**{**args, "I": np.array([0, 2, 1])})
    with pytest.raises(KernelError, match=message):
        interpret(fn, **{**args, "I": np.array([0, 2, 1]), "y": np.zeros(2)})


def test_an_offset_by_data_in_range_agrees_with_numpy():
    d, x = dense(np.array([0, 2, 1])), dense(np.arange(1.0, 4.0))
    y0 = dense(np.zeros(5))
    k = compile_program(offset_write, y=y0, d=d, x=x)
    want = np.zeros(5)
    for s in (0, 2, 1):
        want[s:s + 3] += np.arange(1.0, 4.0)
    np.testing.assert_array_equal(k(y=y0, d=d, x=x).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(y=y0, d=d, x=x).to_numpy(), want)
    d = dense(np.array([0, 1]))
    r = compile_program(offset_read, y=dense(np.zeros(2)), d=d, x=x)
    np.testing.assert_array_equal(r(y=dense(np.zeros(2)), d=d, x=x).to_numpy(), [1.0 + 2.0, 2.0 + 3.0])
