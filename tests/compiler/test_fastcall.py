"""The fast path of a kernel call (compiler.fastcall) gives what the general path gives, and
hands every call that is not simple back to it."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import compiler as ss
from compiler.errors import UsageError
from compiler.fastcall import fast_call
from tests.compiler.extent_programs import hstack

STRATEGIES = ["lattice", "looplets"]


def _csr(m, n, density, seed, fill=0.0):
    a = sp.random(m, n, density=density, format="csr", random_state=seed).toarray()
    a[a == 0] = fill
    return a


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_spmv_takes_the_fast_path_and_agrees_with_the_oracle(strategy):
    a = _csr(6, 5, 0.4, 0)
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    x = np.arange(5.0)
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=A, x=x)
    fast = fast_call(k)
    assert fast is not None
    first = fast({"A": A, "x": x})
    assert first is not None, "a tensor in the kernel's format is bound by the fast path"
    np.testing.assert_array_equal(first.to_numpy(), k.interpret(A=A, x=x).to_numpy())
    again = fast({"A": A, "x": x})
    assert again is not None, "a bound tensor and a numpy vector take the fast path"
    np.testing.assert_array_equal(again.to_numpy(), a @ x)
    np.testing.assert_array_equal(first.to_numpy(), again.to_numpy())
    assert again.format == first.format and again.fill == first.fill
    xt = ss.Tensor.from_numpy(x, "dense", name="x")
    k(A=A, x=xt)
    np.testing.assert_array_equal(fast({"A": A, "x": xt}).to_numpy(), a @ x)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_values_holding_more_than_assumed_go_to_the_general_path(strategy):
    """A kernel lowered for finite values re-lowers for NaN: the fast path must not run it."""
    x = ss.Tensor.from_numpy(np.array([0.0, 2.0, 0.0]), "sparse_vector", name="x")
    z = ss.Tensor.from_numpy(np.array([1.0, 3.0, 4.0]), "sparse_vector", name="z")
    k = ss.lower("c[i] = x[i] * z[i]", strategy=strategy, x=x, z=z)
    k(x=x, z=z)
    fast = fast_call(k)
    assert fast({"x": x, "z": z}) is not None
    zn = ss.Tensor.from_numpy(np.array([np.nan, 3.0, np.inf]), "sparse_vector", name="z")
    k(x=x, z=zn)            # binds zn (through the kernel lowered for NaN)
    assert fast({"x": x, "z": zn}) is None
    np.testing.assert_array_equal(k(x=x, z=zn).to_numpy(), [np.nan, 6.0, np.nan])


def test_mismatched_extents_and_given_outputs_take_the_general_path():
    A = ss.Tensor.from_numpy(_csr(4, 3, 0.5, 1), "csr", name="A")
    k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(3))
    k(A=A, x=np.ones(3))
    fast = fast_call(k)
    assert fast({"A": A, "x": np.ones(4)}) is None
    with pytest.raises(ss.ShapeError, match="index j"):
        k(A=A, x=np.ones(4))
    assert fast({"A": A, "x": np.ones(3), "y": np.zeros(4)}) is None
    assert fast({"A": A, "x": np.ones(3, dtype=np.float32)}) is None
    assert fast({"A": A, "x": np.ones((3, 2))[:, 0]}) is None, "a strided view is bound by the general path"


def test_a_kernel_that_needs_the_general_path_has_no_fast_path():
    A = ss.Tensor.from_numpy(_csr(4, 3, 0.5, 2), "csr", name="A")
    assert fast_call(ss.lower("y[i] = A[i, j] * x[j]", checked=True, A=A, x=np.ones(3))) is None
    y = ss.Tensor.from_numpy(np.ones(4), "dense", name="y")
    update = ss.lower("y[i] += A[i, j] * x[j]", A=A, x=np.ones(3), y=y)
    # (an update's output given at the call starts from its values: the general path's; not given,
    # it starts at the fill in both paths)
    assert update.lowered.initial == "output" and fast_call(update)({"A": A, "x": np.ones(3), "y": y}) is None
    np.testing.assert_array_equal(update(A=A, x=np.ones(3), y=y).to_numpy(), 1 + A.to_numpy().sum(axis=1))
    fresh = fast_call(update)({"A": A, "x": np.ones(3)})
    np.testing.assert_array_equal(fresh.to_numpy(), update._run(update.compiled, {"A": A, "x": np.ones(3)}).to_numpy())
    np.testing.assert_array_equal(fresh.to_numpy(), A.to_numpy().sum(axis=1))


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.sampled_from(["csr", "csc", "coo", "dense"]),
       st.sampled_from(["csr", "dense"]), st.sampled_from([0.0, 1.0, np.inf]),
       st.sampled_from(STRATEGIES), st.integers(0, 3))
def test_repeated_calls_on_new_shapes_agree_with_the_oracle(m, n, fa, fc, fill, strategy, seed):
    """Called again and again on tensors of new shapes and values, the kernel (fast path or
    not) gives the dense oracle's answer every time."""
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy=strategy,
                 A=ss.parse_format(fa, ndim=2, fill=fill), B="csr", C=fc)
    for call in range(3):
        a, b = _csr(m + call, n, 0.4, seed + call, fill), _csr(m + call, n, 0.3, seed + 7 * call)
        A = ss.Tensor.from_numpy(a, k.formats["A"], name="A")
        B = ss.Tensor.from_numpy(b, "csr", name="B")
        for _ in range(2):   # the second call of the same tensors takes the fast path
            out = k(A=A, B=B)
            np.testing.assert_array_equal(out.to_numpy(), ss.evaluate("C[i, j] = A[i, j] + B[i, j]", A=A, B=B)[0])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_dense_output_written_sparsely_starts_from_its_fill(strategy):
    """The product of two sparse vectors into a dense output writes only where both are
    stored: every other entry must be the fill, not whatever the allocator returned."""
    n = 4096
    a = np.zeros(n); a[::7] = 2.0
    b = np.zeros(n); b[::5] = 3.0
    A = ss.Tensor.from_numpy(a, "sparse_vector", name="a")
    B = ss.Tensor.from_numpy(b, "sparse_vector", name="b")
    k = ss.lower("y[i] = a[i] * b[i]", strategy=strategy, a=A, b=B, y="dense")
    assert k.lowered.initial == "fill"
    k(a=A, b=B)
    for _ in range(3):
        junk = np.full(n, 7.0)   # freed memory the next allocation may reuse
        del junk
        assert fast_call(k)({"a": A, "b": B}) is not None
        np.testing.assert_array_equal(k(a=A, b=B).to_numpy(), a * b)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", ["csr_matrix", "csc_matrix", "coo_matrix", "csr_array"])
def test_a_kernel_takes_scipy_matrices(strategy, kind):
    """A kernel compiled for csr is called with scipy objects (converted as needed; a csr one
    shares its arrays), also for a format whose fill is not scipy's 0."""
    a = sp.random(5, 4, density=0.5, format="csr", random_state=3)
    m = getattr(sp, kind)(a)
    x = np.arange(4.0)
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A="csr", x="dense")
    np.testing.assert_allclose(k(A=m, x=x).to_numpy(), a @ x)
    k1 = ss.lower("C[i, j] = A[i, j] + x[j]", strategy=strategy, A=ss.csr(fill=1.0), x="dense")
    np.testing.assert_allclose(k1(A=m, x=x).to_numpy(), a.toarray() + x)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_scipy_matrix_holding_nan_is_not_taken_as_finite(strategy):
    """0 * NaN is NaN: a kernel lowered for finite values must re-lower for a scipy matrix
    whose stored values hold NaN, as it does for a Tensor."""
    a = sp.csr_matrix(np.array([[np.nan, 0.0], [0.0, 2.0]]))
    z = np.array([0.0, 1.0])
    k = ss.lower("C[i, j] = A[i, j] * z[j]", strategy=strategy, A="csr", z="dense")
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(k(A=a, z=z).to_numpy(), a.toarray() * z)


def test_a_scipy_matrix_called_again_is_bound_once_and_its_values_are_read_each_call():
    """A csr_matrix in the kernel's own layout is wrapped once (its buffers shared) and taken by
    the fast path on later calls; values changed in place are seen, NaN among them re-lowers,
    and a matrix whose buffers were replaced is wrapped again."""
    a = sp.random(6, 5, density=0.5, format="csr", random_state=4)
    x = np.arange(5.0)
    k = ss.lower("y[i] = A[i, j] * x[j]", A=ss.Tensor.from_scipy(a, name="A"), x=x)
    np.testing.assert_allclose(k(A=a, x=x).to_numpy(), a @ x)
    plan = k._plan().inputs["A"]
    kept = plan.kept_foreign(a)
    assert kept is not None and np.shares_memory(kept.vals, a.data)
    assert fast_call(k)({"A": a, "x": x}) is not None
    a.data[:] = 2.0
    np.testing.assert_allclose(k(A=a, x=x).to_numpy(), a @ x)
    a.data[0] = np.nan
    assert fast_call(k)({"A": a, "x": x}) is None, "values holding NaN go to the general path"
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(k(A=a, x=np.zeros(5)).to_numpy(), a @ np.zeros(5))
    a.data = a.data.copy()   # new buffers: wrapped again
    assert plan.kept_foreign(a) is None
    np.testing.assert_allclose(k(A=a, x=x).to_numpy(), a @ x)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_numpy_argument_changed_in_place_is_looked_at_again(strategy):
    """The fast path keeps a bound tensor's pointers, but a numpy argument's values are read on
    every call: a vector that now holds NaN must reach the kernel lowered for NaN (0 * NaN)."""
    a = _csr(4, 3, 0.5, 5)
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    x = np.arange(3.0)
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=A, x=x)
    k(A=A, x=x)
    assert fast_call(k)({"A": A, "x": x}) is not None
    x[1] = np.nan
    assert fast_call(k)({"A": A, "x": x}) is None
    np.testing.assert_array_equal(k(A=A, x=x).to_numpy(), ss.evaluate("y[i] = A[i, j] * x[j]", A=A, x=x)[0])
    x.flags.writeable = False   # (read-only inputs are read through their pointers too)
    np.testing.assert_array_equal(k(A=A, x=x).to_numpy(), ss.evaluate("y[i] = A[i, j] * x[j]", A=A, x=x)[0])


def test_the_fast_path_is_generated_code_a_reader_can_follow():
    A = ss.Tensor.from_numpy(_csr(4, 3, 0.5, 6), "csr", name="A")
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy="lattice", A=A, x=np.ones(3))
    code = fast_call(k).code
    assert code.startswith("def fast(tensors):")
    assert "v = tensors.get('A')" in code and "v = tensors.get('x')" in code
    assert "return OUTPUT.tensor(shape, made" in code


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_tensor_missing_or_one_too_many_goes_to_the_general_path_which_names_it(strategy):
    """The fast path counts a call's tensors and takes each by name (rather than comparing the names):
    a name missing, another in its place or one too many gives None, and the kernel's call says which."""
    A = ss.Tensor.from_numpy(_csr(4, 3, 0.5, 6), "csr", name="A")
    x = np.arange(3.0)
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=A, x=x)
    k(A=A, x=x)
    fast = fast_call(k)
    np.testing.assert_array_equal(fast({"A": A, "x": x}).to_numpy(), A.to_numpy() @ x)
    for tensors in ({"A": A}, {"A": A, "z": x}, {"z": A, "x": x}, {"A": A, "x": x, "z": x}, {}):
        assert fast(tensors) is None, sorted(tensors)
    with pytest.raises(UsageError, match="this kernel has no tensor z; it takes A, x, y"):
        k(A=A, z=x)
    with pytest.raises(UsageError, match="missing tensor x"):
        k(A=A)
    with pytest.raises(UsageError, match="this kernel has no tensor z"):
        k(A=A, x=x, z=x)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("held", [np.nan, np.inf, -np.inf])
def test_a_numpy_argument_holding_a_non_finite_value_is_seen_in_c(dtype, held):
    """A numpy argument's facts are found in C over the pointer the kernel takes: each kind of
    non-finite value, at the last element too, sends the call to the kernel lowered for it."""
    a = _csr(4, 5, 0.5, 7).astype(dtype)
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    x = np.arange(5.0, dtype=dtype)
    k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=x)
    k(A=A, x=x)
    assert fast_call(k)({"A": A, "x": x}) is not None
    x[-1] = held
    assert fast_call(k)({"A": A, "x": x}) is None
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(k(A=A, x=x).to_numpy(), ss.evaluate("y[i] = A[i, j] * x[j]", A=A, x=x)[0])


def test_a_loop_program_writing_at_its_loop_indices_takes_the_fast_path():
    """A loop program's writes are checked against its output's shape; where a write reaches
    exactly the extent the output takes (``y[i]`` of a loop over ``A``'s rows: BFS's step,
    called once a round), that check cannot fail and the fast path takes the call."""
    from compiler.looplets import compile_program, loop_program

    @loop_program
    def row_max(y, A):
        y[...] = 0.0
        for i in _:
            for j in _:
                y[i] <<= max, A[i, j]

    a = _csr(7, 5, 0.4, 3)
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    k = compile_program(row_max, y="dense", A=A)
    assert k.lowered.output_writes, "the write's reach is recorded"
    fast = fast_call(k)
    assert fast is not None
    first = k(A=A)
    again = fast({"A": A})
    assert again is not None, "a bound tensor takes the fast path"
    np.testing.assert_array_equal(again.to_numpy(), a.max(axis=1))
    np.testing.assert_array_equal(first.to_numpy(), again.to_numpy())
    B = ss.Tensor.from_numpy(_csr(3, 5, 0.6, 4), "csr", name="A")   # another shape: sized by its rows
    k(A=B)
    np.testing.assert_array_equal(fast({"A": B}).to_numpy(), B.to_numpy().max(axis=1))


def test_a_write_that_may_reach_past_the_output_keeps_the_general_path():
    """An hstack writes ``D[i, j + 3]``: its output's width is its writes' reach, and a given
    output must be wide enough, which the general path checks each call."""
    A = ss.Tensor.from_numpy(np.arange(1.0, 13.0).reshape(4, 3), "dense", name="A")
    D = ss.Tensor.from_numpy(np.zeros((4, 6)), "dense", name="D")
    k = ss.lower(hstack, D=D, A=A)
    assert fast_call(k) is None
    for _ in range(2):
        np.testing.assert_array_equal(k(A=A, D=D).to_numpy(), np.hstack([A.to_numpy(), A.to_numpy()]))
    with pytest.raises(ss.ShapeError, match="extent 5 in mode 1"):
        k(A=A, D=ss.Tensor.from_numpy(np.zeros((4, 5)), "dense", name="D"))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_each_call_on_the_last_calls_output_takes_the_fast_path(strategy):
    """An iteration feeds each call's output to the next (a power iteration here, a BFS's frontier
    round after round): a Tensor the kernel has not met, in its format, is bound by the fast path;
    one in another format goes to the general path, which refuses it naming both formats."""
    a = _csr(6, 6, 0.5, 5)
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    x0 = ss.Tensor.from_numpy(np.ones(6), "dense", name="x")
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=A, x=x0)
    fast = fast_call(k)
    x, want = x0, np.ones(6)
    for _ in range(4):
        y = fast({"A": A, "x": x})
        assert y is not None, "the last call's output is taken by the fast path"
        want = a @ want
        np.testing.assert_allclose(y.to_numpy(), want)
        x = y
    sparse_x = ss.Tensor.from_numpy(np.ones(6), "sparse_vector", name="x")
    assert fast({"A": A, "x": sparse_x}) is None
    with pytest.raises(ss.FormatError, match="tensor x is"):
        k(A=A, x=sparse_x)


def test_a_result_fed_to_the_next_call_is_bound_from_its_arrays_and_read_later(monkeypatch):
    """A round's result bound by the next round's call is taken from the arrays the kernel made, its
    levels not built (no one reads them; building them cost a fifth of a round), and integer values
    are not looked at for facts (they are finite); each result still reads as the oracle's after."""
    monkeypatch.delenv("SPARSESCOPE_VALIDATE_OUTPUTS", raising=False)   # (validating builds the levels)
    a = np.array([[0, 2, 0], [1, 0, 3], [0, 0, 1]], np.int64)
    A = ss.Tensor.from_numpy(a, ss.Format(ss.Dense(ss.SparseList(ss.Element(0, dtype="int64")))), name="A")
    x0 = ss.Tensor.from_numpy(np.array([1, -1, 2], np.int64), ss.Format(ss.Dense(ss.Element(0, dtype="int64"))),
                              name="x")
    k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=x0)
    fast = fast_call(k)
    assert "of_array" not in fast.code.split("v = tensors.get('x')")[1].split("v = tensors")[0]
    results, x = [], x0
    for _ in range(4):
        y = fast({"A": A, "x": x})
        assert y is not None
        results.append(y)
        x = y
    assert all("_root" not in y.__dict__ for y in results), "bound from the arrays, levels not built"
    want = np.array([1, -1, 2])
    for y in results:
        want = a @ want
        np.testing.assert_array_equal(y.to_numpy(), want)
        y.validate()


def test_a_constant_output_extent_and_a_numpy_scalar_take_the_fast_path():
    """The masked histogram's counts are 16 long whatever the image (a constant extent, not an
    input's), and the bin width of an integer image's histogram comes as ``np.int64(16)``: both
    took the general path, at 40 us a call against the kernel's 3 (bench_histogram_bound.py)."""
    from compiler.format import Format
    from compiler.looplets import compile_program
    from compiler.looplets.histogram import HISTOGRAMS, MASK_LIST, MaskedHistogram8, mask_format_for
    rng = np.random.default_rng(5)
    img = rng.integers(0, 256, (9, 70)).astype(np.uint8)
    m = rng.random(img.shape) < 0.3
    M = ss.Tensor.from_numpy(m, mask_format_for(m))
    h = MaskedHistogram8(16)
    want = np.bincount(img[m] >> 4, minlength=16)
    np.testing.assert_array_equal(h(img, M), want)
    (k,) = h.kernels.values()
    fast = fast_call(k)
    assert fast is not None, "a constant extent is planned once"
    I = ss.Tensor(ss.Dense(ss.Dense(ss.Element(0, img.reshape(-1), "uint8"), 70), 9), shape=img.shape)
    np.testing.assert_array_equal(fast({"img": I, "mask": M}).to_numpy(), want)
    # an integer image's bins, ``v >> shift`` below ``top``: its scalars as numpy scalars
    wide = ss.Tensor.from_numpy(img.astype(np.int64), ss.Dense(ss.Dense(ss.Element(0, dtype="int64"))))
    L = ss.Tensor.from_numpy(m, MASK_LIST)
    bins = ss.Tensor.from_numpy(np.zeros(16, np.int64), Format(ss.Dense(ss.Element(0, dtype="int64"))))
    k = compile_program(HISTOGRAMS["shift", False], bins=bins, img=wide, mask=L, shift=np.int64(4), top=np.int64(256))
    fast = fast_call(k)
    for shift in (np.int64(4), np.array(4)):
        got = fast({"img": wide, "mask": L, "shift": shift, "top": np.int64(256)})
        assert got is not None, f"a {type(shift).__name__} of the input's dtype is wrapped"
        np.testing.assert_array_equal(got.to_numpy(), want)
    # another scalar type goes to the general path, which converts it
    assert fast({"img": wide, "mask": L, "shift": np.int32(4), "top": np.int64(256)}) is None
    np.testing.assert_array_equal(k(img=wide, mask=L, shift=4, top=256).to_numpy(), want)
    # a bin past the 16 counts (each bin's index checked: the shift is a runtime scalar) is still
    # caught, now on the fast path
    with pytest.raises(ss.KernelError, match="bins"):
        fast({"img": wide, "mask": L, "shift": np.int64(3), "top": np.int64(256)})


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_dense_result_is_read_without_building_its_levels(strategy, monkeypatch):
    """``to_numpy`` of an all-Dense result reads its values array (building the levels cost 10 us of
    an 18 us call); a copy, in the logical mode order, also for an output stored column-major."""
    monkeypatch.delenv("SPARSESCOPE_VALIDATE_OUTPUTS", raising=False)   # (validating builds the levels)
    from compiler.format import Format
    a = _csr(5, 4, 0.5, 6)
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=A, x=np.ones(4))
    k(A=A, x=np.arange(4.0))
    y = k(A=A, x=np.arange(4.0))   # (the fast path's result: the first call bound A)
    got = y.to_numpy()
    np.testing.assert_array_equal(got, a @ np.arange(4.0))
    assert "_root" not in y.__dict__
    got[0] = 99.0
    np.testing.assert_array_equal(y.to_numpy(), a @ np.arange(4.0))
    column_major = Format(ss.dense(2).root, (1, 0))
    k = ss.lower("B[i, j] = A[i, j] * 2", strategy=strategy, A=A, B=column_major)
    k(A=A)
    B = k(A=A)
    np.testing.assert_array_equal(B.to_numpy(), 2 * a)
    np.testing.assert_array_equal(B.to_numpy(), k.interpret(A=A).to_numpy())


SHAPE_PROGRAMS = {
    "vstack": "D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)",
    "hstack": "D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)",
    "row slice": "D[k, i] = slice(B[j, i], j -> k, (1, 5, 2))",
}


@pytest.mark.parametrize("program", sorted(SHAPE_PROGRAMS))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_shape_operator_kernel_takes_the_fast_path_for_shapes_checked_before(strategy, program):
    # (the general path infers the shapes' premises once per set of shapes; the fast path takes a call
    # only for a set it checked: a 300 x 300 row slice's call cost 25 us there, 6 here)
    prog = SHAPE_PROGRAMS[program]
    b, c = (ss.Tensor.from_numpy(_csr(6, 5, 0.5, s), "csr", name=n) for s, n in ((3, "B"), (4, "C")))
    tensors = {"B": b, "C": c} if "C[" in prog else {"B": b}
    k = ss.lower(prog, strategy=strategy, D="csr", **tensors)
    want = ss.evaluate(prog, **tensors)[0]
    assert fast_call(k)(tensors) is None, "shapes whose premises no call checked go to the general path"
    np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
    fast = fast_call(k)
    assert fast is not None
    got = fast(tensors)
    assert got is not None
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
    # other shapes: the general path's, which says what is wrong (or lowers them, in the looplets' case)
    short = {t: ss.Tensor.from_numpy(_csr(3, 5, 0.5, 5), "csr", name=t) for t in tensors}
    if program == "hstack":
        short["B"] = ss.Tensor.from_numpy(_csr(6, 2, 0.5, 5), "csr", name="B")
        short["C"] = ss.Tensor.from_numpy(_csr(5, 2, 0.5, 6), "csr", name="C")   # (rows differ)
    elif program == "vstack":
        short["C"] = ss.Tensor.from_numpy(_csr(3, 4, 0.5, 6), "csr", name="C")   # (columns differ)
    assert fast(short) is None
    with pytest.raises(ss.ShapeError):
        k(**short)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 4)), min_size=1, max_size=5),
       st.sampled_from(sorted(SHAPE_PROGRAMS)))
def test_calls_of_a_shape_kernel_on_shapes_old_and_new_agree_with_the_oracle(shapes, program):
    # (one looplets kernel, which any shapes suit, called on a sequence of shapes: each call's result is the
    # oracle's, or the ShapeError of shapes its premises refuse, whichever path takes it)
    prog = SHAPE_PROGRAMS[program]
    b0 = ss.Tensor.from_numpy(_csr(6, 5, 0.5, 1), "csr", name="B")
    k = ss.lower(prog, strategy="looplets", D="csr", B=b0, C=b0) if "C[" in prog else \
        ss.lower(prog, strategy="looplets", D="csr", B=b0)
    for m, c, seed in shapes * 2:          # (each set of shapes again: the second time the fast path's)
        b = ss.Tensor.from_numpy(_csr(m, c, 0.5, seed), "csr", name="B")
        other = ss.Tensor.from_numpy(_csr(m if program == "hstack" else m + 1, c, 0.5, seed + 1), "csr", name="C")
        tensors = {"B": b, "C": other} if "C[" in prog else {"B": b}
        try:
            want = ss.evaluate(prog, **tensors)[0]
        except ss.ShapeError:
            with pytest.raises(ss.ShapeError):
                k(**tensors)
            continue
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
