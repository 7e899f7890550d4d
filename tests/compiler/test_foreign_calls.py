"""A kernel called with scipy.sparse or pydata/sparse arrays (issue 31, item 4): an array whose
own format differs from the kernel's only in index dtypes (scipy's int32 indices into a kernel
lowered for "csr", int64) is read in place by a kernel lowered once for its layout, and the next
call takes that kernel's fast path; an array of another layout is converted at each call, and the
kernel's trace says which, once."""

from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
import sparse
from hypothesis import assume, example, given, settings, strategies as st

import compiler as ss
from compiler import binding, lowering, sealing
from compiler.fastcall import fast_call
from compiler.looplets import loop_program

STRATEGIES = ["lattice", "looplets"]
SPMV = "y[i] = A[i, j] * x[j]"


@pytest.fixture(autouse=True)
def _fresh_kernels():
    """Each test's kernels are lowered afresh (their compiled code is cached), so the steps a
    call records in a kernel's trace are this test's (and no kernel a test changed is kept)."""
    lowering.clear_cache()
    yield
    lowering.clear_cache()


def _matrix(m, n, density, seed):
    """An m x n scipy CSR matrix (int32 indices) whose values are 1..9, none of them 0."""
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((m, n)) < density, rng.integers(1, 10, (m, n)).astype(float), 0.0)
    return sp.csr_matrix(a)


def _oracle(program, **tensors):
    dense = {k: v.toarray() if sp.issparse(v) else (v.todense() if isinstance(v, sparse.SparseArray) else v)
             for k, v in tensors.items()}
    return ss.evaluate(program, **dense)[0]


def _notes(kernel) -> list[str]:
    return [s.note for s in kernel.trace.find("foreign-layout")]


def _shares(kernel, name, value) -> bool:
    """Whether the tensor ``kernel`` bound for ``value`` holds every array of ``value`` itself."""
    kept = kernel._plan().inputs[name].kept_foreign(value)
    held = [a for a in vars(value).values() if isinstance(a, np.ndarray)]
    return kept is not None and all(any(np.shares_memory(a, b) for b in
                                        (x for d in kept.level_arrays() for x in d.values())) for a in held)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind, fmt", [("csr_matrix", "csr"), ("csr_array", "csr"), ("csc_matrix", "csc")])
def test_int32_indices_are_read_in_place_and_the_next_call_is_fast(strategy, kind, fmt):
    a = getattr(sp, kind)(_matrix(7, 5, 0.4, 1))
    assert a.indices.dtype == np.int32
    x = np.arange(5.0)
    k = ss.lower(SPMV, strategy=strategy, A=fmt, x="dense")
    np.testing.assert_array_equal(k(A=a, x=x).to_numpy(), _oracle(SPMV, A=a, x=x))
    own = k.for_layouts({"A": a, "x": x})
    assert own is not k and own.formats["A"].levels[1].index_dtype == np.int32
    assert own.formats["A"].mode_order == k.formats["A"].mode_order
    assert _shares(own, "A", a), "A's indptr, indices and data are the kernel's arrays: no copy"
    assert fast_call(own)({"A": a, "x": x}) is not None, "the second call takes the fast path"
    np.testing.assert_array_equal(k(A=a, x=x).to_numpy(), _oracle(SPMV, A=a, x=x))
    (note,) = _notes(k)
    assert note.startswith(f"A: a scipy {kind} {fmt} with int32 indices, this kernel reads {fmt} with int64")
    assert "int32" in _notes(own)[0]
    again = ss.Trace.from_json(k.trace.to_json())   # (the step is saved and shared with the trace)
    assert [s.note for s in again.find("foreign-layout")] == [note]
    # the interpreter (the IR's oracle) runs the same kernel on the same arrays
    np.testing.assert_array_equal(k.interpret(A=a, x=x).to_numpy(), _oracle(SPMV, A=a, x=x))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_matrix_changed_in_place_between_calls_gives_the_right_answer(strategy):
    """Values written in place are read again (NaN among them re-lowers: 0 * NaN is NaN), and a
    matrix whose indices were unsorted (copied when bound) is read right once sort_indices sorts
    them, and shared once scipy knows it canonical (sum_duplicates)."""
    program = "C[i, j] = A[i, j] * z[j]"
    k = ss.lower(program, strategy=strategy, A="csr", z="dense")
    # row 0 holds columns 2, 0 in that order: scipy keeps them so until sort_indices
    a = sp.csr_matrix((np.array([3.0, 1.0, 2.0]), np.array([2, 0, 1], dtype=np.int32),
                       np.array([0, 2, 3], dtype=np.int32)), shape=(2, 3))
    assert not a.has_sorted_indices
    z = np.array([0.0, 1.0, 2.0])
    np.testing.assert_array_equal(k(A=a, z=z).to_numpy(), _oracle(program, A=a, z=z))
    own = k.for_layouts({"A": a, "z": z})
    assert own is not k and own._plan().inputs["A"].kept_foreign(a) is None, "unsorted: copied, not kept"
    a.sort_indices()   # (in place; scipy still does not know the entries are unique: copied again)
    np.testing.assert_array_equal(k(A=a, z=z).to_numpy(), _oracle(program, A=a, z=z))
    a.sum_duplicates()   # (canonical now, in place: shared from here on)
    np.testing.assert_array_equal(k(A=a, z=z).to_numpy(), _oracle(program, A=a, z=z))
    assert _shares(own, "A", a) and fast_call(own)({"A": a, "z": z}) is not None
    a.data[:] = [5.0, 6.0, 7.0]
    np.testing.assert_array_equal(k(A=a, z=z).to_numpy(), _oracle(program, A=a, z=z))
    a.data[0] = np.nan   # (at column 0, where z is 0)
    with np.errstate(invalid="ignore"):
        got, want = k(A=a, z=z).to_numpy(), _oracle(program, A=a, z=z)
    assert np.isnan(got[0, 0])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_int64_indices_are_the_kernels_own(strategy):
    """A scipy matrix with int64 indices (as scipy makes for more than 2**31 entries) is in the
    kernel's own layout: shared by the kernel itself, nothing lowered again, nothing recorded."""
    a = _matrix(6, 4, 0.5, 2)
    a.indices, a.indptr = a.indices.astype(np.int64), a.indptr.astype(np.int64)
    x = np.arange(4.0)
    k = ss.lower(SPMV, strategy=strategy, A="csr", x="dense")
    np.testing.assert_array_equal(k(A=a, x=x).to_numpy(), _oracle(SPMV, A=a, x=x))
    assert k.for_layouts({"A": a, "x": x}) is k and _notes(k) == []
    assert _shares(k, "A", a) and fast_call(k)({"A": a, "x": x}) is not None


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", ["coo_matrix", "csc_matrix", "csr_matrix_float32"])
def test_another_layout_is_converted_at_each_call_and_the_trace_says_so_once(strategy, kind):
    base = _matrix(5, 6, 0.5, 3)
    a = base.astype(np.float32) if kind == "csr_matrix_float32" else getattr(sp, kind)(base)
    x = np.arange(6.0)
    k = ss.lower(SPMV, strategy=strategy, A="csr", x="dense")
    for _ in range(2):
        np.testing.assert_allclose(k(A=a, x=x).to_numpy(), _oracle(SPMV, A=base, x=x))
    assert k.for_layouts({"A": a, "x": x}) is k
    (note,) = _notes(k)
    assert note.startswith(f"A: a scipy {kind.split('_float')[0]} ") and "each call converts it" in note


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_pydata_arrays(strategy):
    """pydata's GCXS with int32 indices is read in place; its COO, into a CSR kernel, converted."""
    base = _matrix(6, 5, 0.4, 4)
    g = sparse.GCXS((base.data, base.indices, base.indptr), shape=base.shape, compressed_axes=[0])
    assert g.indices.dtype == np.int32
    x = np.arange(5.0)
    k = ss.lower(SPMV, strategy=strategy, A="csr", x="dense")
    np.testing.assert_array_equal(k(A=g, x=x).to_numpy(), _oracle(SPMV, A=base, x=x))
    own = k.for_layouts({"A": g, "x": x})
    assert own is not k and _shares(own, "A", g) and fast_call(own)({"A": g, "x": x}) is not None
    c = sparse.COO.from_scipy_sparse(base)
    np.testing.assert_array_equal(k(A=c, x=x).to_numpy(), _oracle(SPMV, A=base, x=x))
    assert [n.split(" ")[:4] for n in _notes(k)] == [["A:", "a", "pydata/sparse", "GCXS"],
                                                      ["A:", "a", "pydata/sparse", "COO"]]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_two_foreign_operands_and_a_sparse_output(strategy):
    """SpGEMM into CSR with one scipy operand of int32 indices and one Tensor: the kernel for
    A's layout builds the same CSR output (its format as asked) as converting A would."""
    program = "C[i, j] = A[i, k] * B[k, j]"
    a, b = _matrix(5, 4, 0.5, 5), _matrix(4, 6, 0.5, 6)
    B = ss.Tensor.from_scipy(b, format="csr").asformat(ss.csr())
    k = ss.lower(program, strategy=strategy, A="csr", B=B, C="csr")
    out = k(A=a, B=B)
    assert out.format == ss.csr()
    np.testing.assert_array_equal(out.to_numpy(), _oracle(program, A=a, B=b))
    own = k.for_layouts({"A": a, "B": B})
    assert own is not k and own.formats["B"] == k.formats["B"] and own.formats["C"] == k.formats["C"]
    assert _shares(own, "A", a)


@settings(max_examples=12, deadline=None)
@given(m=st.integers(0, 6), n=st.integers(0, 6), density=st.sampled_from([0.0, 0.3, 1.0]),
       seed=st.integers(0, 3), strategy=st.sampled_from(STRATEGIES), fmt=st.sampled_from(["csr", "csc"]))
@example(m=0, n=3, density=0.3, seed=0, strategy="lattice", fmt="csr")
def test_int32_calls_agree_with_the_oracle(m, n, density, seed, strategy, fmt):
    """SpMV and a sum of a matrix with itself transposed-free (C = A + A) over scipy matrices of
    int32 indices, empty ones among them, twice each (the second by the fast path)."""
    a = _matrix(m, n, density, seed).asformat(fmt)
    x = np.arange(float(n))
    for program, extra in ((SPMV, {"x": x}), ("C[i, j] = A[i, j] + A[i, j]", {})):
        k = ss.lower(program, strategy=strategy, A=fmt, **{k: "dense" for k in extra})
        want = _oracle(program, A=a, **extra)
        for _ in range(2):
            np.testing.assert_array_equal(k(A=a, **extra).to_numpy(), want)


@pytest.mark.parametrize("make", [lambda m: sp.csr_matrix(m), lambda m: sparse.COO.from_numpy(m)],
                         ids=["scipy", "pydata"])
def test_a_foreign_array_of_a_dtype_kernels_do_not_take_is_refused_naming_the_tensor(make):
    k = ss.lower(SPMV, A="csr", x="dense")
    a = make(np.eye(3, dtype=np.longdouble))
    with pytest.raises(ss.DTypeError, match=rf"A \({type(a).__name__} of shape \(3, 3\)\): dtype {np.dtype(np.longdouble).name} is "
                                            r"not supported; .* convert it with .astype"):
        k(A=a, x=np.ones(3))


def test_a_layout_the_strategy_cannot_lower_is_converted_as_before():
    """Where lowering for the array's own index dtypes is refused, the call converts it (and
    the trace says why) instead of failing a call that converting answers."""
    k = ss.lower(SPMV, A="csr", x="dense")

    def refuse(facts, formats=None):
        raise ss.StrategyError("no int32 levels here")
    k.relower = refuse
    a, x = _matrix(4, 3, 0.5, 7), np.arange(3.0)
    np.testing.assert_array_equal(k(A=a, x=x).to_numpy(), _oracle(SPMV, A=a, x=x))
    assert k.for_layouts({"A": a, "x": x}) is k
    assert "lowers no kernel for" in _notes(k)[-1] and "no int32 levels here" in _notes(k)[-1]


@loop_program
def _split_signs(pos, neg, A):
    for i in _:
        for j in _:
            if A[i, j] > 0:
                pos[i] += A[i, j]
            if A[i, j] < 0:
                neg[i] -= A[i, j]


def test_a_loop_program_with_two_outputs_reads_int32_indices_in_place():
    a = _matrix(5, 4, 0.6, 8)
    a.data -= 5.0   # (values -4..4)
    k = ss.lower(_split_signs, pos="dense", neg="dense", A="csr")
    for _ in range(2):
        out = k(A=a)
        dense = a.toarray()
        np.testing.assert_array_equal(out.pos.to_numpy(), np.where(dense > 0, dense, 0).sum(1))
        np.testing.assert_array_equal(out.neg.to_numpy(), -np.where(dense < 0, dense, 0).sum(1))
    own = k.for_layouts({"A": a})
    assert own is not k and _shares(own, "A", a)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_later_calls_go_straight_to_the_fast_path_of_the_kernel_for_the_layout(strategy):
    """Once a call ran the kernel for a scipy matrix's int32 layout, the next call with it is
    answered by that kernel's fast path without the general path; arrays that kernel did not bind
    (an int64 matrix, a new int32 one) still take the general path, and get the right answer."""
    a, x = _matrix(6, 5, 0.5, 9), np.arange(5.0)
    k = ss.lower(SPMV, strategy=strategy, A="csr", x="dense")
    k(A=a, x=x)

    def general_path(tensors):
        raise AssertionError("the general path was taken")
    k.for_layouts = general_path
    a.data *= 2.0
    np.testing.assert_array_equal(k(A=a, x=x).to_numpy(), _oracle(SPMV, A=a, x=x))
    del k.for_layouts
    wide = a.copy()
    wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
    for other in (wide, a.copy(), sp.csr_matrix(a.toarray() + 1.0)):
        np.testing.assert_array_equal(k(A=other, x=x).to_numpy(), _oracle(SPMV, A=other, x=x))
    a.data[0] = np.nan
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(k(A=a, x=np.zeros(5)).to_numpy(), _oracle(SPMV, A=a, x=np.zeros(5)))


def _csr_lowered_with_the_matrix(strategy, m):
    return ss.lower(SPMV, strategy=strategy, A=m, x=np.ones(m.shape[1]))


def _csr_lowered_for_csr(strategy, m):
    return ss.lower(SPMV, strategy=strategy, A="csr", x="dense")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("lowered", [_csr_lowered_with_the_matrix, _csr_lowered_for_csr])
@pytest.mark.parametrize("array, at, value, problem", [
    # (named as scipy names them: the arrays the user wrote)
    ("indices", 0, 1000, r"^A \(csr_matrix of shape \(5, 4\)\): indices\[0\]=1000 is out of range \[0, 4\)"),
    ("indices", 1, -1, r"indices\[1\]=-1 is out of range"),
    ("indptr", 2, 99, r"indptr is not non-decreasing: indptr\[2\]=99"),
    ("indptr", 0, 1, r"indptr\[0\] must be 0"),
    # (an order scipy does not require of its matrices: the level's own terms)
    ("indices", "swap", None, r"level 1 \(SparseList\): idx is not strictly increasing"),
])
def test_a_matrix_whose_indices_were_written_in_place_is_refused_naming_them(strategy, lowered, array, at, value,
                                                                            problem):
    """The kernel reads a scipy matrix's index arrays in place, checked when first bound: its owner
    may write them between calls (x[1000] would be read past x). Every call that reads them checks
    them again, in C, and a FormatError names the array; set right again, the calls agree again."""
    m = sp.csr_matrix(np.array([[1.0, 0, 2, 0], [0, 3, 4, 0], [5, 0, 0, 6], [0, 0, 0, 7], [8, 9, 0, 0]]))
    x = np.arange(1.0, 5.0)
    k = lowered(strategy, m)
    for _ in range(3):   # (the general path, then the fast path)
        np.testing.assert_array_equal(k(A=m, x=x).to_numpy(), m @ x)
    arr = getattr(m, array)
    saved = arr.copy()
    if at == "swap":   # (row 2 holds columns 0, 3: now 3, 0)
        arr[4], arr[5] = arr[5], arr[4]
        if k.coordinates_checked:   # (a SpMV lowered for the matrix reads its rows in any order: compiler.owned_inputs)
            np.testing.assert_array_equal(k(A=m, x=x).to_numpy(), m @ x)
            np.testing.assert_array_equal(k.interpret(A=m, x=x).to_numpy(), m @ x)
            return
    else:
        arr[at] = value
    with pytest.raises(ss.FormatError, match=problem):
        k(A=m, x=x)
    with pytest.raises(ss.FormatError, match=problem):
        k.interpret(A=m, x=x)
    arr[:] = saved
    np.testing.assert_array_equal(k(A=m, x=x).to_numpy(), m @ x)


def test_a_coo_matrix_written_in_place_is_refused_too():
    m = sp.coo_matrix(np.array([[1.0, 0, 2], [0, 3, 0]]))
    m.sum_duplicates()   # (canonical: shared)
    k = ss.lower(SPMV, A="coo", x="dense")
    x = np.ones(3)
    for _ in range(3):
        np.testing.assert_array_equal(k(A=m, x=x).to_numpy(), m @ x)
    own = k.for_layouts({"A": m, "x": x})
    assert _shares(own, "A", m)
    m.col[1] = 3
    with pytest.raises(ss.FormatError, match=r"idx1\[1\]=3 is out of range \[0, 3\)"):
        k(A=m, x=x)


def test_a_matrix_given_new_index_arrays_or_a_new_shape_in_place_is_bound_again():
    """Between calls a scipy COO's ``col`` may be given a new array (scipy keeps row and col in one
    tuple, ``coords``, which it replaces) and a CSR resized in place to more columns (only its
    shape changes): the next call reads the new arrays and shape, not the ones bound before.
    Before, the COO's stale col was read (a wrong answer, no error)."""
    x3, x4 = np.array([1.0, 10.0, 100.0]), np.array([1.0, 10.0, 100.0, 5.0])
    coo = sp.coo_matrix(np.array([[1.0, 0, 2], [0, 3, 0]]))
    coo.sum_duplicates()   # (canonical: shared)
    csr = sp.csr_matrix(coo)
    k = ss.lower(SPMV, A="coo", x="dense")
    kc = ss.lower(SPMV, A="csr", x="dense")
    for _ in range(3):   # (the general path, then the fast path)
        np.testing.assert_array_equal(k(A=coo, x=x3).to_numpy(), coo @ x3)
        np.testing.assert_array_equal(kc(A=csr, x=x3).to_numpy(), csr @ x3)
    coo.col = np.array([1, 1, 2], dtype=coo.col.dtype)
    csr.resize((2, 4))
    np.testing.assert_array_equal(k(A=coo, x=x3).to_numpy(), coo @ x3)
    np.testing.assert_array_equal(kc(A=csr, x=x4).to_numpy(), csr @ x4)
    with pytest.raises(ss.ShapeError):
        kc(A=csr, x=x3)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_matrix_with_duplicates_is_summed_at_each_call_until_summed_in_place(strategy):
    """A CSR holding one entry twice (not canonical) is copied and summed at each call, as scipy's
    ``A @ x`` sums it; once ``sum_duplicates`` made it canonical in place it is shared, and the fast
    path reads it (its values written in place are read too)."""
    a = sp.csr_matrix((np.array([1.0, 2.0, 4.0]), np.array([1, 1, 0], np.int32), np.array([0, 2, 3], np.int32)),
                      shape=(2, 3))
    assert not a.has_canonical_format
    x = np.array([1.0, 10.0, 100.0])
    k = ss.lower(SPMV, strategy=strategy, A="csr", x="dense")
    for _ in range(3):
        np.testing.assert_array_equal(k(A=a, x=x).to_numpy(), [30.0, 4.0])
    a.sum_duplicates()
    for _ in range(3):
        np.testing.assert_array_equal(k(A=a, x=x).to_numpy(), [30.0, 4.0])
    own = k.for_layouts({"A": a, "x": x})
    assert _shares(own, "A", a) and fast_call(own)({"A": a, "x": x}) is not None
    a.data[0] = 5.0
    np.testing.assert_array_equal(k(A=a, x=x).to_numpy(), a @ x)


# programs over a CSR matrix A, the other operands' formats, and whether the kernel's C depends on
# what A's stored values hold (NaN, infinities): a product with a dense vector does not (each entry
# is multiplied, NaN or not), a product with another sparse operand does (0 * NaN is NaN where it holds 0)
_VALUES_CASES = [
    (SPMV, {"x": "dense"}, False),
    ("C[i, j] = A[i, j] * B[i, j]", {"B": "csr"}, True),
    ("C[i, j] = A[i, j] + B[i, j]", {"B": "csr"}, False),
    ("y[i] = A[i, j] * x[j]", {"x": "sparse_vector"}, True),
    ("y[i] = A[i, j]", {}, False),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("program, others, depends", _VALUES_CASES)
def test_a_kernel_says_whether_its_c_depends_on_a_matrix_values(strategy, program, others, depends):
    k = ss.lower(program, strategy=strategy, A="csr", **others)
    assert k.depends_on_values("A") is depends
    steps = len(k.trace.steps)
    assert k.depends_on_values("A") is depends and len(k.trace.steps) == steps   # (asked once, kept; no step)


def _operand(fmt, shape, rng):
    a = np.where(rng.random(shape) < 0.5, rng.integers(1, 10, shape).astype(float), 0.0)
    return a if fmt == "dense" else ss.Tensor.from_numpy(a, fmt)


@settings(max_examples=16, deadline=None)
@given(case=st.sampled_from(range(len(_VALUES_CASES))), strategy=st.sampled_from(STRATEGIES),
       m=st.integers(0, 5), n=st.integers(1, 5), seed=st.integers(0, 3),
       written=st.lists(st.sampled_from([np.nan, np.inf, -np.inf, 2.0]), min_size=1, max_size=3),
       shared=st.booleans(), sealed=st.booleans())
@example(case=0, strategy="lattice", m=3, n=3, seed=0, written=[np.nan], shared=False, sealed=False)
@example(case=1, strategy="looplets", m=3, n=3, seed=1, written=[np.nan, -np.inf], shared=True, sealed=False)
@example(case=3, strategy="lattice", m=4, n=3, seed=2, written=[np.inf, np.nan], shared=False, sealed=True)
def test_values_written_in_place_are_computed_right_whether_or_not_a_call_looks_at_them(case, strategy, m, n, seed,
                                                                                      written, shared, sealed):
    """A scipy matrix (or a Tensor over its arrays, ``shared``) whose owner writes NaN or infinities into its
    values between two calls of a kernel lowered while they were finite: where the kernel's C does not
    depend on them, the call does not look at them (every matrix taken so, as if large:
    ``VALUES_ASKED_FROM`` is 0) and the kernel computes them right; where it does, the call sees them
    and runs the kernel lowered for them. The same where the matrix's index arrays were ``sealed`` read-only
    (no call reads them again; its values are). (A Tensor over sealed arrays is one whose facts were taken
    once, as any sealed tensor's, ``Tensor.value_facts``: not drawn.)"""
    assume(not (shared and sealed))
    program, others, _ = _VALUES_CASES[case]
    rng = np.random.default_rng(seed)
    a = _matrix(m, n, 0.6, seed)
    if sealed:
        ss.Tensor.from_scipy(a).seal()
    given = {name: _operand(fmt, (m, n) if fmt == "csr" else (n,), rng) for name, fmt in others.items()}
    with mock.patch.object(binding, "VALUES_ASKED_FROM", 0):
        A = ss.Tensor.from_scipy(a) if shared else a   # (int32 indices: lowered for them)
        k = ss.lower(program, strategy=strategy, A=A.format if shared else "csr", **others)
        dense = {name: v.to_numpy() if isinstance(v, ss.Tensor) else v for name, v in given.items()}
        np.testing.assert_array_equal(k(A=A, **given).to_numpy(), ss.evaluate(program, A=a.toarray(), **dense)[0])
        a.data[:len(written)] = written[:a.nnz]   # (in place, as the matrix's owner may)
        with np.errstate(invalid="ignore"):
            want = ss.evaluate(program, A=a.toarray(), **dense)[0]
            for _ in range(2):   # (the second by the fast path)
                np.testing.assert_array_equal(k(A=A, **given).to_numpy(), want)


def test_a_large_matrix_values_are_not_looked_at_by_a_call_whose_kernel_does_not_depend_on_them():
    """A SpMV over a matrix of VALUES_ASKED_FROM entries: its recheck at each call reads the index arrays
    alone (half the pass: ``check`` gives no facts of the values), the NaN its owner writes still computed."""
    n = 1024
    a = sp.random(n, n, binding.VALUES_ASKED_FROM / n ** 2, format="csr", random_state=np.random.default_rng(0))
    assert a.nnz == binding.VALUES_ASKED_FROM
    x = np.ones(n)
    k = ss.lower(SPMV, A=a, x=x)
    k(A=a, x=x)
    kept = k._plan().inputs["A"].foreign[id(a)]
    # (one compressed level, (1, dtype, parents, pos, stored, nkeys): its positions alone, the kernel checking each
    # coordinate as it reads it: compiler.owned_inputs)
    assert k.coordinates_checked == {"A"} and kept.ops[1] == 6
    a.data[7] = np.nan
    assert str(kept.check()) == "finite"
    row = np.searchsorted(a.indptr, 7, side="right") - 1
    got = k(A=a, x=x).to_numpy()
    assert np.isnan(got[row]) and np.isnan(got).sum() == 1
    a.indices[7] = n    # (its index arrays are still checked)
    with pytest.raises(ss.FormatError, match=r"A \(csr_matrix of shape \(1024, 1024\)\): indices\[7\]"):
        k(A=a, x=x)


def test_a_kernel_whose_strategy_lowers_nothing_for_any_values_depends_on_them():
    """Where lowering again for values that hold anything is refused, the kernel is taken to depend on them (the
    call looks at them), and the question does not fail the call that asked it."""
    k = ss.lower(SPMV, A="csr", x="dense")

    def refused(wider, formats=None, emit=False):
        raise ss.StrategyError("no kernel for these values")
    k.relower = refused
    assert k.depends_on_values("A") is True


def _sealed_matrix(seed=4):
    m = _matrix(7, 6, 0.5, seed)
    ss.Tensor.from_scipy(m).seal()   # (the matrix's own index arrays, and the arrays they are views of)
    return m


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_matrix_whose_index_arrays_were_sealed_is_read_with_no_check_of_them_until_made_writeable(strategy):
    """A scipy matrix whose index arrays its owner sealed read-only (``Tensor.from_scipy(m).seal()``) is read in
    place by a kernel given the matrix, the fast path too, with no check of its index arrays (a row slice keeps
    the whole check otherwise: it copies the coordinates into its output), its values still looked at where the
    kernel's C depends on them; made writeable again and written out of range, the next call refuses it."""
    m = _sealed_matrix()
    k = ss.lower("D[k, i] = slice(A[j, i], j -> k, (0, 7, 2))", strategy=strategy, A=m, D="csr")
    b = _matrix(7, 6, 0.9, 5)
    product = ss.lower("C[i, j] = A[i, j] * B[i, j]", strategy=strategy, A=m, B=b)
    with mock.patch.object(binding, "VALUES_ASKED_FROM", 0):   # (values looked at where the C depends on them)
        for _ in range(3):   # (the general path, then the fast path)
            np.testing.assert_array_equal(k(A=m).to_numpy(), m.toarray()[0:7:2])
        kept = k._plan().inputs["A"].foreign[id(m)]
        assert kept.sealed and kept.ops[1] == 0   # (nothing to read: its values do not matter to this kernel)
        with pytest.raises(ValueError, match="read-only"):
            m.indices[0] = 5
        for _ in range(2):
            np.testing.assert_array_equal(product(A=m, B=b).to_numpy(), m.toarray() * b.toarray())
        assert product._plan().inputs["A"].foreign[id(m)].ops[1] == 4   # (its values alone)
        m.data[0] = np.inf   # (values stay writeable: 0 * inf is NaN where B does not store the entry)
        with np.errstate(invalid="ignore"):
            for _ in range(2):
                np.testing.assert_array_equal(product(A=m, B=b).to_numpy(), m.toarray() * b.toarray())
    sealing.unseal([m.indices, m.indptr])
    m.indices[1] = 60
    for call in (lambda: k(A=m), lambda: product(A=m, B=b)):
        with pytest.raises(ss.FormatError, match=r"indices\[1\]=60 is out of range \[0, 6\)"):
            call()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_array_expression_over_a_sealed_matrix_checks_its_index_arrays_only_once_made_writeable(strategy):
    """``compute()`` of an array expression over a scipy matrix checks its arrays again first, unless its index
    arrays are sealed read-only: then its values alone, where they matter; unsealed and written out of range, the
    next ``compute()`` refuses it naming the array."""
    from compiler import array as xp
    from compiler import recheck

    m = _sealed_matrix()
    a = xp.asarray(m)
    with mock.patch.object(recheck, "kept_checker", wraps=recheck.kept_checker) as made:
        np.testing.assert_array_equal(a[::2].compute(strategy=strategy).to_numpy(), m.toarray()[::2])
    # (no check of its index arrays: structure=False where its values are looked at, and they are not here)
    assert not [c for c in made.call_args_list if len(c.args) < 4 or c.args[3]], made.call_args_list
    m.data[2] = np.nan
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal((a * 0.0).sum(axis=1).compute(strategy=strategy).to_numpy(),
                                      (m.toarray() * 0.0).sum(axis=1))
    sealing.unseal([m.indices, m.indptr])
    m.indptr[3] = 99
    with pytest.raises(ss.FormatError, match=r"indptr"):
        a[::2].compute(strategy=strategy)
