"""One entry of a sorted output level appended by two statements (issue 30): a concatenation inside
each row of a DCSR, a CSF or a SparseList(Dense), the hstack of a loop program row by row or of index
notation's ``concat``. Each loop over j appended row i to the output's sorted row level, so two loops
writing one row were refused ("output D is written by two statements ... in one fiber of its
SparseList level (storage level 0), over i"; index notation's said "lines 0 and 0", and the array
front end materialized the concatenation). Now the row's entry is appended once, its fiber written by
each statement in turn (:meth:`compiler.looplets.lowerers.Lowerer.unfurl_accesses`), and the order
of the fiber's coordinates is checked as a CSR row's is (:mod:`compiler.looplets.appends`): proven,
checked at each call, or refused naming the lines, a second loop provably before the first too.
Oracles: numpy, the IR interpreter, a dense output, the dense oracle for index notation."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler import array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, SparseList
from compiler.looplets import ProgramError, compile_program, loop_program
from compiler.testing import assert_canonical, random_sparse

from tests.compiler.looplets.shape_checks import checked_kernel
from tests.compiler.looplets.test_looplets_appends import A_, B_, hstack_rows
from tests.compiler.looplets.test_output_formats import hstack_by_rows


@loop_program
def hstack_3d(D, X, Y):
    for i in _:
        for j in _:
            for l in _:
                D[i, j, l] = X[i, j, l]
            for m in _:
                D[i, j, m + X.shape[2]] = Y[i, j, m]


@loop_program
def hstack_backwards(D, A, B):
    for i in _:
        for k in _:
            D[i, k + A.shape[1]] = B[i, k]
        for j in _:
            D[i, j] = A[i, j]


@loop_program
def concat_backwards(c, a, b):
    for j in _:
        c[j + a.shape[0]] = b[j]
    for i in _:
        c[i] = a[i]


def sparse_over_dense(fill=0.0):
    return Format(SparseList(Dense(Element(fill))))


def output(name, fill, ndim=2):
    """An output format of fill ``fill``: a shorthand, or ``sparse_dense`` (SparseList(Dense))."""
    return sparse_over_dense(fill) if name == "sparse_dense" else ss.parse_format(name, ndim=ndim, fill=fill)


@pytest.mark.parametrize("out", ["dcsr", "sparse_dense", "csr", "coo"])
def test_an_hstack_row_by_row_appends_each_row_once(out):
    A, B = Tensor.from_numpy(A_, "csr"), Tensor.from_numpy(B_, "coo")
    want = np.hstack([A_, B_])
    k = compile_program(hstack_rows, D=Tensor.from_numpy(np.zeros((4, 6)), output(out, 0.0)), A=A, B=B)
    assert not k.lowered.validate_output   # (k + |j| follows every j: proven, as into CSR)
    assert_canonical(k(A=A, B=B), want)
    assert_canonical(k.interpret(A=A, B=B), want)
    # through windows of D, each call checks the row's order; and a row written backwards is refused
    assert_canonical(compile_program(hstack_by_rows, D=Tensor.from_numpy(np.zeros((4, 6)), output(out, 0.0)),
                                     A=A, B=B)(A=A, B=B), want)
    if out != "sparse_dense":   # (a dense row takes its columns in any order)
        with pytest.raises(ProgramError, match=r"line \d+ of hstack_backwards: output D is written by two loops "
                           r"over \w \(lines \d+ and \d+\) into one fiber .* the loop of line \d+ writes only "
                           r"coordinates before those of line \d+"):
            compile_program(hstack_backwards, D=output(out, 0.0), A=A, B=B)


def test_an_hstack_of_3d_tensors_into_csf():
    rng = np.random.default_rng(5)
    x, y = random_sparse((2, 3, 4), 0.4, rng, empty=(1,)), random_sparse((2, 3, 2), 0.4, rng)
    X, Y = Tensor.from_numpy(x, "csf"), Tensor.from_numpy(y, "coo")
    for out in ("csf", Format(SparseList(SparseList(Dense(Element(0.0)))))):
        k = compile_program(hstack_3d, D=Tensor.from_numpy(np.zeros((2, 3, 6)), out), X=X, Y=Y)
        assert_canonical(k(X=X, Y=Y), np.concatenate([x, y], axis=2))
        assert_canonical(k.interpret(X=X, Y=Y), np.concatenate([x, y], axis=2))


@pytest.mark.parametrize("out", ["dcsr", "csf", "sparse_dense"])
def test_index_notations_hstack_into_nested_sparse_levels(out):
    # (before: refused as written by two statements "(lines 0 and 0)"; the array front end materialized it)
    rng = np.random.default_rng(6)
    if out == "csf":
        x, y = random_sparse((2, 3, 4), 0.4, rng, empty=(0,)), random_sparse((2, 3, 2), 0.4, rng)
        X, Y = Tensor.from_numpy(x, "csf"), Tensor.from_numpy(y, "csf")
        checked_kernel("D[i, j, l] = concat((X[i, j, m], Y[i, j, n]), (m, n) -> l)", np.concatenate([x, y], axis=2),
                       out, X=X, Y=Y)
        return
    a, b = random_sparse((4, 3), 0.5, rng, fill=np.nan, empty=(1,)), random_sparse((4, 2), 0.5, rng, fill=np.nan)
    A, B = Tensor.from_numpy(a, "csr", fill=np.nan), Tensor.from_numpy(b, "coo", fill=np.nan)
    fmt = output(out, np.nan)
    k = ss.lower("D[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)", "looplets", A=A, B=B, D=fmt)
    for got in (k(A=A, B=B), k.interpret(A=A, B=B)):
        assert_canonical(got, np.hstack([a, b]))
    kernel = ss.lower(xp.concat([xp.asarray(A), xp.asarray(B)], axis=1), strategy="looplets", format=fmt)
    assert not kernel.trace.find("retry") and not kernel.trace.find("materialize"), kernel.trace.stages()
    assert_canonical(kernel(), np.hstack([a, b]))


def test_a_concatenation_written_backwards_is_refused_naming_the_lines():
    # (before: lowered, and refused at the call when both parts stored an entry)
    a, b = (Tensor.from_numpy(v, "sparse") for v in (np.array([0, 2.0, 2]), np.array([3.0, 0, 4])))
    with pytest.raises(ProgramError, match=r"line \d+ of concat_backwards: output c is written by two loops over "
                       r"i \(lines (\d+) and (\d+)\) into one fiber of its SparseList level \(storage level 0\), whose "
                       r"coordinates are appended in increasing order: the loop of line \2 writes only coordinates "
                       r"before those of line \1, so it would go back over them"):
        compile_program(concat_backwards, c="sparse", a=a, b=b)


FORMATS = ["csr", "coo", "dcsr", "dense", "sparse_sparse"]


def operand(a, fmt, fill):
    if fmt == "sparse_sparse":   # (a SparseList of SparseLists: a DCSR spelled in levels)
        return Tensor.from_numpy(a, Format(SparseList(SparseList(Element(fill)))))
    return Tensor.from_numpy(a, fmt, fill=fill)


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 4), cols=st.tuples(st.integers(0, 3), st.integers(0, 3)),
       density=st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0])),
       fmts=st.tuples(st.sampled_from(FORMATS), st.sampled_from(FORMATS)), fill=st.sampled_from([0.0, 1.0, np.nan]),
       out=st.sampled_from(["dcsr", "sparse_dense", "csr"]), windows=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(rows=4, cols=(3, 3), density=(0.5, 0.5), fmts=("csr", "csr"), fill=0.0, out="dcsr", windows=True,
         seed=0)   # refused before
@example(rows=3, cols=(2, 0), density=(1.0, 0.5), fmts=("coo", "dense"), fill=np.nan, out="dcsr", windows=False,
         seed=1)   # no columns in the second part
@example(rows=3, cols=(2, 3), density=(0.0, 1.0), fmts=("dcsr", "sparse_sparse"), fill=1.0, out="sparse_dense",
         windows=False, seed=2)   # the first part all fill
@example(rows=0, cols=(2, 2), density=(0.5, 0.5), fmts=("csr", "coo"), fill=0.0, out="dcsr", windows=True, seed=3)
def test_an_hstack_by_rows_into_sorted_rows(rows, cols, density, fmts, fill, out, windows, seed):
    rng = np.random.default_rng(seed)
    a, b = (np.where(rng.random((rows, n)) < d, rng.choice([1.5, -2.0, np.nan, np.inf, -np.inf], (rows, n)), fill)
            for n, d in zip(cols, density))
    A, B = (operand(x, f, fill) for x, f in zip((a, b), fmts))
    D = Tensor.from_numpy(np.full((rows, sum(cols)), fill), output(out, fill))
    prog = hstack_by_rows if windows and cols == (3, 3) else hstack_rows
    k = compile_program(prog, D=D, A=A, B=B)
    want = np.hstack([a, b])
    for got in (k(A=A, B=B), k.interpret(A=A, B=B)):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
    # (a dense output, whose rows take writes in any order, agrees)
    dense = compile_program(prog, D=Tensor.from_numpy(np.full((rows, sum(cols)), fill), "dense", fill=fill), A=A, B=B)
    np.testing.assert_array_equal(dense(A=A, B=B).to_numpy(), want)
