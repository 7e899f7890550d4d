"""Loop programs whose writes append a sorted sparse output from more than one loop (issue 28, item 5).

A sorted level (SparseList, SparseCOO) is appended in order, each fiber once: two loop nests
writing one (an hstack into CSR, two ``+=`` nests into COO) gave a wrong result or an invalid
tensor, silently without SPARSESCOPE_VALIDATE_OUTPUTS. Now what can never be in order is refused
at lowering, naming the output, the level and the lines; two loops appending one fiber through
windows (a concatenation) are checked at every call. Oracles: numpy.
"""

import numpy as np
import pytest

import compiler as ss
from compiler import Tensor
from compiler.errors import FormatError
from compiler.levels import Dense, Element, SparseByteMap, SparseCOO, SparseHash, SparseList
from compiler.looplets import ProgramError, compile_program, loop_program
from compiler.looplets.gallery import concat
from compiler.testing import assert_canonical

A_ = np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0], [0, 0, 5]])
B_ = np.array([[0.0, 6, 0], [7, 0, 0], [0, 0, 8], [9, 0, 0]])


@loop_program
def hstack(D, A, B):
    D[...] = 0
    for i in _:
        for j in _:
            D[:, :3][i, j] = A[i, j]
    for i in _:
        for j in _:
            D[:, 3:][i, j] = B[i, j]


@loop_program
def hstack_by_rows(D, A, B):
    D[...] = 0
    for i in _:
        for j in _:
            D[:, :3][i, j] = A[i, j]
        for j in _:
            D[:, 3:][i, j] = B[i, j]


@loop_program
def overlapping_rows(D, A, B):
    for i in _:
        for j in _:
            D[:, :3][i, j] = A[i, j]
        for j in _:
            D[:, 2:][i, j] = B[i, j]


@loop_program
def add_twice(C, A, B):
    C[...] = 0
    for i in _:
        for j in _:
            C[i, j] += A[i, j]
    for i in _:
        for j in _:
            C[i, j] += B[i, j]


@loop_program
def add_twice_1d(c, a, b):
    c[...] = 0
    for i in _:
        c[i] += a[i]
    for i in _:
        c[i] += b[i]


@loop_program
def overlapping(c, a, b):
    for i in _:
        c[0:4][i] = a[i]
    for i in _:
        c[2:][i] = b[i]


def lower_both(prog, **tensors):
    """The same program through compile_program (which passes the shapes) and lower()."""
    yield compile_program(prog, **tensors)
    yield ss.lower(prog, strategy="looplets", **tensors)


def matrices():
    return Tensor.from_numpy(A_, "csr", name="A"), Tensor.from_numpy(B_, "csr", name="B")


@pytest.mark.parametrize("how", ["compile_program", "lower"])
def test_an_hstack_into_csr_by_two_loop_nests_is_refused(how):
    A, B = matrices()
    D = Tensor.from_numpy(np.zeros((4, 6)), "csr")
    run = compile_program if how == "compile_program" else lambda p, **t: ss.lower(p, strategy="looplets", **t)
    with pytest.raises(ProgramError, match=r"line 33 of hstack: output D is written by two loop nests \(lines 30 "
                       r"and 33\): each fiber of its SparseList level \(storage level 1\) is appended in order once, "
                       r"inside one loop over i.*Write D in one loop nest, or store D in SparseHash or SparseByteMap"):
        run(hstack, D=D, A=A, B=B)


@pytest.mark.parametrize("out, level", [("coo", r"SparseCOO level \(storage level 0\)"),
                                        ("csr", r"SparseList level \(storage level 1\)")])
def test_two_update_nests_into_a_sorted_output_are_refused(out, level):
    A, B = matrices()
    for run in (compile_program, lambda p, **t: ss.lower(p, strategy="looplets", **t)):
        with pytest.raises(ProgramError, match=r"line 63 of add_twice: output C is written by two loop") as e:
            run(add_twice, C=out, A=A, B=B)
        assert "lines 60 and 63" in str(e.value) and f"{level.replace(chr(92), '')}" in str(e.value)


@pytest.mark.parametrize("out", ["sparse", "coo"])
def test_two_loops_from_the_same_coordinate_into_one_sorted_fiber_are_refused(out):
    a, b = (Tensor.from_numpy(v, "sparse") for v in (np.array([0, 2.0, 2, 0]), np.array([3.0, 3, 0, 0])))
    with pytest.raises(ProgramError, match=r"line 72 of add_twice_1d: output c is written by two loops over i "
                       r"\(lines 70 and 72\) into one fiber of its Sparse\w+ level \(storage level 0\), whose "
                       r"coordinates are appended in increasing order: both loops start at i = 0"):
        compile_program(add_twice_1d, c=out, a=a, b=b)


@pytest.mark.parametrize("out", [SparseHash(Element(0.0)), SparseByteMap(Element(0.0)), "dense"],
                         ids=["hash", "bytemap", "dense"])
def test_the_formats_the_refusal_names_take_two_update_loops(out):
    # (the refusal's advice holds)
    a, b = np.array([0, 2.0, 2, 0]), np.array([3.0, 3, 0, 1])
    ta, tb = Tensor.from_numpy(a, "sparse"), Tensor.from_numpy(b, "sparse")
    for k in lower_both(add_twice_1d, c=out, a=ta, b=tb):
        np.testing.assert_array_equal(k(a=ta, b=tb).to_numpy(), a + b)


@pytest.mark.parametrize("out", [Dense(SparseHash(Element(0.0))), Dense(SparseByteMap(Element(0.0)))],
                         ids=["hash", "bytemap"])
def test_an_hstack_into_a_random_write_level_by_two_nests_is_right(out):
    A, B = matrices()
    D = Tensor.from_numpy(np.zeros((4, 6)), out)
    k = compile_program(hstack, D=D, A=A, B=B)
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), np.hstack([A_, B_]))


@pytest.mark.parametrize("out", ["csr", "coo"])
def test_an_hstack_row_by_row_appends_each_row_in_order(out, monkeypatch):
    # (COO: one fiber, whose (i, j) the two loops over j of one i append in order)
    monkeypatch.delenv("SPARSESCOPE_VALIDATE_OUTPUTS", raising=False)
    A, B = matrices()
    D = Tensor.from_numpy(np.zeros((4, 6)), out)
    k = compile_program(hstack_by_rows, D=D, A=A, B=B)
    assert "lines 41 and 43" in k.lowered.validate_output
    assert_canonical(k(A=A, B=B), np.hstack([A_, B_]))


@pytest.mark.parametrize("out", ["csr", "coo"])
def test_a_row_whose_second_loop_goes_back_is_refused_at_lowering(out):
    # (its windows [0:3] and [2:] overlap: was refused at the call when B stored after A in the overlap,
    # and kept A's entry where B wrote the fill there, the fill dropped: tests/compiler/looplets/test_window_overlaps.py)
    A, B = matrices()
    with pytest.raises(ProgramError, match=r"output D is written by two loops over j \(lines 50 and 52\) .*the "
                       r"window of line 52, \[2:size\(D, 1\)\], may overlap that of line 50, \[0:3\]"):
        compile_program(overlapping_rows, D=Tensor.from_numpy(np.zeros((4, 5)), out), A=A, B=B)


@pytest.mark.parametrize("out", [SparseList(Element(0.0)), SparseCOO(1, Element(0.0))], ids=["sparse", "coo"])
def test_a_concatenation_through_windows_is_right_and_checked_at_every_call(out, monkeypatch):
    monkeypatch.delenv("SPARSESCOPE_VALIDATE_OUTPUTS", raising=False)
    a, b = np.array([0, 2.0, 2, 0, 3]), np.array([3.0, 3, 0, 0])
    ta, tb = Tensor.from_numpy(a, "sparse"), Tensor.from_numpy(b, "sparse")
    k = compile_program(concat, C=Tensor.from_numpy(np.zeros(9), out), A=ta, B=tb)
    assert_canonical(k(A=ta, B=tb), np.r_[a, b])
    # the second loop's window overlaps the first's: refused when lowered (it was refused at the call
    # when b stored after a in the overlap, and before that returned unsorted)
    a4 = Tensor.from_numpy(a[:4], "sparse")
    with pytest.raises(ProgramError, match=r"output c is written by two loops over i \(lines 78 and 80\) .*may "
                       r"overlap"):
        compile_program(overlapping, c=Tensor.from_numpy(np.zeros(6), out), a=a4, b=tb)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_an_invalid_coo_input_is_refused_not_summed(strategy):
    # the unsorted COO a second nest used to return, given to a kernel: refused when built, and
    # by a checked kernel when built unchecked (never summed with its duplicate counted twice)
    idx = (np.array([0, 1, 0]), np.array([0, 1, 0]))
    with pytest.raises(FormatError, match=r"C: level 0 \(SparseCOO\): coordinates are not in lexicographic order"):
        Tensor(SparseCOO(2, Element(0.0, np.array([1.0, 2, 3])), (2, 2), pos=[0, 3], idx=idx), name="C")
    C = Tensor(SparseCOO(2, Element(0.0, np.array([1.0, 2, 3])), (2, 2), pos=[0, 3], idx=idx), name="C", check=False)
    # (a checked lowering validates the tensors it is given, as a checked call does)
    with pytest.raises(FormatError, match=r"C: level 0 \(SparseCOO\): coordinates are not in lexicographic order"):
        ss.lower("s = sum[i, j](C[i, j])", strategy=strategy, checked=True, C=C)
    k = ss.lower("s = sum[i, j](C[i, j])", strategy=strategy, checked=True, C=C.format)
    with pytest.raises(FormatError, match=r"C: level 0 \(SparseCOO\): coordinates are not in lexicographic order"):
        k(C=C)


@loop_program
def ravel(c, A):
    for i in _:
        for j in _:
            c[j + i * A.shape[1]] = A[i, j]


@loop_program
def overlapping_ravel(c, A):
    for i in _:
        for j in _:
            c[j + i * 2] = A[i, j]


@loop_program
def vstack_rows(D, A, B):
    for j in _:
        for i in _:
            D[j, i] = A[j, i]
    for k in _:
        for i in _:
            D[k + A.shape[0], i] = B[k, i]


def test_a_row_major_ravel_appends_a_sorted_vector_in_order():
    # c[j + i * |j|] grows with (i, j): before, refused ("the loops around this write must be j")
    A = Tensor.from_numpy(A_, "csr")
    got = compile_program(ravel, c=Tensor.from_numpy(np.zeros(12), "sparse"), A=A)(A=A)
    assert_canonical(got, A_.ravel())
    # ... but j + i * 2 with j over 3 columns goes back (i = 0, j = 2 and i = 1, j = 0 both write 2)
    with pytest.raises(ProgramError, match="output c is written out of order"):
        compile_program(overlapping_ravel, c=Tensor.from_numpy(np.zeros(12), "sparse"), A=A)


@pytest.mark.parametrize("order, ok", [("(i, j) -> m), (m, l)", True), ("(i, j) -> m), (l, m)", False)])
def test_a_ravel_of_a_ravel_appends_a_sorted_vector_in_order(order, ok):
    # c[l + (j + i * |j|) * |l|] grows with (i, j, l): a 3-D tensor raveled into a sparse vector (before:
    # refused, "the loops around this write must be l"); the outer collapse column-major does not
    y = np.where(np.arange(24).reshape(2, 3, 4) % 3 == 0, 0.0, np.arange(24.0).reshape(2, 3, 4))
    Y = Tensor.from_numpy(y, "csf")
    prog = f"c[k] = collapse(collapse(Y[i, j, l], {order} -> k)"
    if not ok:
        with pytest.raises(ss.StrategyError, match="output c is written out of order"):
            ss.lower(prog, "looplets", Y=Y, c=ss.parse_format("sparse_vector"))
        return
    assert_canonical(ss.lower(prog, "looplets", Y=Y, c=ss.parse_format("sparse_vector"))(Y=Y), y.ravel())


def test_a_vstack_by_two_nests_appends_each_row_once():
    # the second nest's rows start where the first's end: other fibers (before: refused as two nests)
    A, B = Tensor.from_numpy(A_, "csr"), Tensor.from_numpy(B_, "csr")
    got = compile_program(vstack_rows, D=Tensor.from_numpy(np.zeros((8, 3)), "csr"), A=A, B=B)(A=A, B=B)
    assert_canonical(got, np.vstack([A_, B_]))


@loop_program
def stacked_ravels(c, A, B):
    for j in range(4):
        for i in range(3):
            c[i + j * 3] = A[j, i]
    for p in range(4):
        for i in range(3):
            c[i + (p + 4) * 3] = B[p, i]


@loop_program
def overlapping_stacked_ravels(c, A, B):
    for j in range(4):
        for i in range(3):
            c[i + j * 3] = A[j, i]
    for p in range(4):
        for i in range(3):
            c[i + (p + 1) * 3] = B[p, i]


def test_a_vstacks_ravel_by_two_nests_is_proven_in_order():
    # the second nest's rows p + 4 start where the first's end, each row's i within [0, 3):
    # not checked at each call (before: validated at every call); rows that overlap still are
    A, B = Tensor.from_numpy(A_, "csr"), Tensor.from_numpy(B_, "coo")
    c = Tensor.from_numpy(np.zeros(24), "sparse")
    k = compile_program(stacked_ravels, c=c, A=A, B=B)
    assert not k.lowered.validate_output
    assert_canonical(k(A=A, B=B), np.vstack([A_, B_]).ravel())
    k = compile_program(overlapping_stacked_ravels, c=Tensor.from_numpy(np.zeros(15), "sparse"), A=A, B=B)
    assert "the second loop must write only coordinates after the first's" in k.lowered.validate_output
    with pytest.raises(FormatError):
        k(A=A, B=B)


@loop_program
def hstack_rows(D, A, B):
    for i in _:
        for j in _:
            D[i, j] = A[i, j]
        for k in _:
            D[i, k + A.shape[1]] = B[i, k]


def test_a_second_loop_provably_after_the_first_is_not_checked_at_each_call():
    # k + |A|_1 >= every j < |A|_1: the row's coordinates are in order whatever the call's tensors
    # (before: the output was validated at every call, as a window's concatenation is)
    A, B = Tensor.from_numpy(A_, "csr"), Tensor.from_numpy(B_, "csr")
    k = compile_program(hstack_rows, D=Tensor.from_numpy(np.zeros((4, 6)), "csr"), A=A, B=B)
    assert not k.lowered.validate_output
    assert_canonical(k(A=A, B=B), np.hstack([A_, B_]))


def test_a_write_at_a_computed_coordinate_of_a_sorted_level_is_refused_by_name():
    # a histogram's scatter into a sparse vector: its bins cannot be appended in order (this raised
    # AttributeError while it built the message, which named each coordinate as a loop index)
    from compiler.looplets.histogram import histogram_program
    img = Tensor.from_numpy(np.arange(12, dtype=np.uint8).reshape(3, 4), "dense")
    mask = Tensor.from_numpy(np.ones((3, 4), bool), "dense")
    with pytest.raises(ProgramError, match=r"output bins is written at a computed coordinate, "
                       r">>\(img\[r, c\] \* size\(bins, 0\), 8\), of its SparseList level \(storage level 0\), which "
                       r"is appended in index order.*Store bins with a Dense level there, or in SparseHash or "
                       r"SparseByteMap"):
        ss.lower(histogram_program("8bit"), strategy="looplets", bins="sparse", img=img, mask=mask)
