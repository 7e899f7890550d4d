"""A tensor is trusted after it is built: the index arrays the compiler made are sealed read-only,
and arrays it shares with their owner (or a user made writeable again) are checked again at each
call, so no kernel reads outside its buffers (compiler/sealing.py, compiler/recheck.py)."""

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import FormatError
from compiler.levels import Dense, Element, SparseList

#: every level format with index arrays, as a matrix's format
FORMATS = {
    "csr": "csr", "csc": "csc", "coo": "coo", "dcsr": "dcsr",
    "hash": "Dense(SparseHash(Element(0.0)))",
    "bytemap": "Dense(SparseByteMap(Element(0.0)))",
    "band": "Dense(SparseBand(Element(0.0)))",
    "blocklist": "Dense(SparseBlockList(Element(0.0)))",
    "interval": "Dense(SparseInterval(Element(0.0)))",
    "point": "Dense(SparsePoint(Element(0.0)))",
    "sparse_runlist": "Dense(SparseRunList(Element(0.0)))",
    "runlist": "Dense(RunList(Element(0.0)))",
}


def _matrix(name):
    """A 6 x 7 matrix each format stores (one run of equal values a row for the interval, one entry for the point)."""
    m = np.zeros((6, 7))
    if name == "point":
        m[np.arange(6), np.arange(6)] = np.arange(1.0, 7.0)
    elif name in ("band", "interval"):
        m[np.arange(6), np.arange(6)] = 1.0
        m[np.arange(6), np.arange(1, 7)] = 1.0
    else:
        rng = np.random.default_rng(1)
        m = (rng.random((6, 7)) < 0.4) * rng.integers(1, 9, (6, 7)).astype(float)
    return m


def _index_arrays(t):
    return [(k, kind, a) for k, lvl in enumerate(t.levels) for kind, a in lvl.arrays().items()]


@pytest.mark.parametrize("name", FORMATS)
def test_the_index_arrays_of_a_tensor_the_compiler_built_are_read_only(name):
    m = _matrix(name)
    rows, cols = np.nonzero(m)
    built = {"from_numpy": ss.Tensor.from_numpy(m, FORMATS[name], name="A"),
             "from_coords": ss.Tensor.from_coords([rows, cols], m[rows, cols], m.shape, FORMATS[name]),
             "asformat": ss.Tensor.from_numpy(m, "coo").asformat(FORMATS[name])}
    for how, t in built.items():
        arrays = _index_arrays(t)
        assert arrays, (name, how)
        for k, kind, a in arrays:
            with pytest.raises(ValueError, match="read-only"):
                a[0] = 10 ** 6
            with pytest.raises(ValueError, match="WRITEABLE"):   # (a view of a sealed array stays read-only)
                a[:].flags.writeable = True
        t.vals[:] = t.vals * 2   # (values are not sealed: no kernel reads past them)
        np.testing.assert_array_equal(t.to_numpy(), 2 * m, err_msg=f"{name} {how}")


@pytest.mark.parametrize("validate_outputs", [False, True])
@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_the_index_arrays_of_a_kernels_result_are_read_only(validate_outputs, strategy, monkeypatch):
    if validate_outputs:
        monkeypatch.setenv("SPARSESCOPE_VALIDATE_OUTPUTS", "1")
    else:
        monkeypatch.delenv("SPARSESCOPE_VALIDATE_OUTPUTS", raising=False)
    m = _matrix("csr")
    A = ss.Tensor.from_numpy(m, "csr", name="A")
    k = ss.lower("B[i, j] = A[i, j] * 2", A=A, B="csr", strategy=strategy)
    for _ in range(2):   # (the first call plans the fast path, the second takes it)
        B = k(A=A)
        assert B.format.shorthand == "csr"
        for _, _, a in _index_arrays(B):
            with pytest.raises(ValueError, match="read-only"):
                a[0] = 10 ** 6
        np.testing.assert_array_equal(B.to_numpy(), 2 * m)
    # (and a result read by the next kernel before anyone built its levels is sealed when bound)
    y = ss.lower("y[i] += B[i, j] * x[j]", B=k(A=A), x=np.ones(7))
    C = k(A=A)
    np.testing.assert_array_equal(y(B=C, x=np.ones(7)).to_numpy(), (2 * m).sum(axis=1))
    for _, _, a in _index_arrays(C):
        assert not a.flags.writeable


_WRITTEN = """
import sys, numpy as np, scipy.sparse as sp
import compiler as ss
from compiler import array as xp
from compiler.errors import SparsescopeError
sys.path.insert(0, {tests!r})
from test_sealing import FORMATS, _matrix, _index_arrays
for name in sys.argv[1:]:
    print("===", name, flush=True)
    m, x = _matrix(name), np.arange(7.0)
    t = ss.Tensor.from_numpy(m, FORMATS[name], name="A")
    calls = {{
        "lower+call": lambda: ss.lower("y[i] += A[i, j] * x[j]", A=t, x=x)(A=t, x=x).to_numpy(),
        "looplets": lambda: ss.lower("y[i] += A[i, j] * x[j]", A=t, x=x, strategy="looplets")(A=t, x=x).to_numpy(),
        "compute": lambda: (xp.asarray(t) @ x).compute().to_numpy(),
        "einsum": lambda: ss.einsum("ij,j->i", t, x).to_numpy(),
        "evaluate": lambda: ss.evaluate("y[i] += A[i, j] * x[j]", A=t, x=x)[0],
    }}
    kernel = ss.lower("y[i] += A[i, j] * x[j]", A=t, x=x)
    calls["same kernel"] = lambda: kernel(A=t, x=x).to_numpy()
    for f in calls.values():
        f(); f()   # (the fast paths planned and the tensor bound, as in a loop)
    for k, kind, a in _index_arrays(t):
        saved = a.copy()
        for at, bad in ((0, 10 ** 6), (-1, 10 ** 6), (0, -3), (-1, 2 ** 31 - 1)):
            w = a
            while isinstance(w.base, np.ndarray):
                w = w.base
            w.flags.writeable = True
            a.flags.writeable = True   # (the user's choice: the arrays are checked at each call from now on)
            a[at] = bad
            try:
                t.validate()
                want = None
            except SparsescopeError:
                want = "refused"
            for call, f in calls.items():
                try:
                    got = f()
                except SparsescopeError as e:
                    if want != "refused" or "A" not in str(e):
                        print("WRONG ERROR", name, k, kind, at, bad, call, e)
                    continue
                if want == "refused" or not np.allclose(got, t.to_numpy() @ x):
                    print("WRONG", name, k, kind, at, bad, call, got)
            a[:] = saved
    print("done", name, flush=True)
"""


@pytest.fixture(scope="module")
def written_run():
    """One subprocess writes each format's arrays in turn (a process each spent most of its time
    starting Python and importing numpy, scipy and the compiler); its output, and each format's part."""
    import pathlib
    script = _WRITTEN.format(tests=str(pathlib.Path(__file__).parent))
    r = subprocess.run([sys.executable, "-c", script, *FORMATS], capture_output=True, text=True, timeout=1200)
    parts = dict(part.partition("\n")[::2] for part in r.stdout.split("=== ")[1:])
    return r, parts


@pytest.mark.parametrize("name", FORMATS)
def test_index_arrays_made_writeable_and_written_are_refused_by_every_entry_point(name, written_run):
    """A user who makes a sealed array writeable again and writes it out of range: every entry point
    (a kernel planned and called before, lower and call, both strategies, compute, einsum, evaluate)
    refuses it naming the tensor, or computes what the tensor now holds; never reads past a buffer
    (main: a segfault on the first CSR write; run in a subprocess, which a crash ends at that format)."""
    r, parts = written_run
    out = parts.get(name)
    assert out is not None and out.strip().endswith(f"done {name}"), \
        f"exit status {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    assert "WRONG" not in out, out[-3000:]


_SHARED = """
import numpy as np, scipy.sparse as sp
import compiler as ss
from compiler.errors import FormatError
m = sp.csr_matrix(np.arange(1.0, 13.0).reshape(3, 4))
A = ss.Tensor.from_scipy(m, name="A")                    # (shares indptr, indices and data with m)
x = np.arange(4.0)
k = ss.lower("y[i] += A[i, j] * x[j]", A=A, x=x)
for _ in range(2):
    assert np.allclose(k(A=A, x=x).to_numpy(), m.toarray() @ x)
for array, at, bad in (("indices", 3, 10 ** 6), ("indptr", 1, 10 ** 6), ("indices", 0, -1)):
    saved = getattr(m, array)[at]
    getattr(m, array)[at] = bad                          # (the owner writes its own arrays)
    for call in (lambda: k(A=A, x=x), lambda: ss.einsum("ij,j->i", A, x), lambda: A.to_numpy(),
                 lambda: A.asformat("csc")):
        try:
            call()
            print("RAN", array)
        except FormatError as e:
            # (einsum names its operand as it took it: "T1 (tensor A)")
            assert (str(e).startswith("A") or "(tensor A)" in str(e)) and "level 1 (SparseList)" in str(e), e
    getattr(m, array)[at] = saved
assert np.allclose(k(A=A, x=x).to_numpy(), m.toarray() @ x)
print("done")
"""


def test_arrays_shared_with_a_scipy_matrix_are_checked_again_at_each_call():
    """``Tensor.from_scipy`` shares the matrix's arrays, which their owner may write: each call checks
    them again (main: a kernel planned for the tensor read ``x[10**6]``; run in a subprocess)."""
    r = subprocess.run([sys.executable, "-c", _SHARED], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "done", (r.stdout[-2000:], r.stderr[-3000:])


def test_arrays_a_user_passed_to_the_levels_are_checked_again_at_each_call():
    idx = np.array([1, 0, 2])
    A = ss.Tensor(Dense(SparseList(Element(0.0, np.array([1.0, 2.0, 3.0])), 3, np.array([0, 1, 3]), idx), 2),
                  name="A")
    assert idx.flags.writeable   # (the user's array: not sealed)
    x = np.array([1.0, 10.0, 100.0])
    k = ss.lower("y[i] += A[i, j] * x[j]", A=A, x=x)
    assert k(A=A, x=x).to_numpy().tolist() == [10.0, 302.0]
    k(A=A, x=x)
    idx[2] = 5
    with pytest.raises(FormatError, match=r"A: level 1 \(SparseList\): idx\[2\]=5 is out of range \[0, 3\)"):
        k(A=A, x=x)
    idx[2] = 0                   # (in range, but no longer increasing in row 1)
    # (this kernel checks each coordinate as it reads it, and a sum does not depend on their order: a repeat
    # is added twice, as scipy adds a non-canonical matrix's; compiler.owned_inputs)
    assert k.coordinates_checked == {"A"} and k(A=A, x=x).to_numpy().tolist() == [10.0, 5.0]
    merge = ss.lower("C[i, j] = A[i, j] + B[i, j]", A=A, B="csr")   # (a merge, which depends on the order)
    assert not merge.coordinates_checked
    with pytest.raises(FormatError, match="A: level 1 .*not strictly increasing"):
        merge(A=A, B=ss.Tensor.from_numpy(np.eye(2, 3), "csr"))
    idx[2] = 2
    assert k(A=A, x=x).to_numpy().tolist() == [10.0, 302.0]


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_nan_its_owner_wrote_into_a_shared_tensor_is_computed_by_the_next_call(strategy):
    """main: the call whose check found the NaN went to the general path, which chose the kernel for
    the facts the tensor held before (finite: A's entry skipped where B holds its fill 0) and only
    then checked the tensor again: 0 where numpy gives NaN."""
    m = sp.csr_matrix(np.array([[1.0, 0, 2.0], [0, 3.0, 0]]))
    A = ss.Tensor.from_scipy(m, name="A")
    B = ss.Tensor.from_numpy(np.array([[0, 5.0, 1.0], [0, 0, 0]]), "csr")
    k = ss.lower("C[i, j] = A[i, j] * B[i, j]", strategy=strategy, A=A, B=B)
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), [[0, 0, 2.0], [0, 0, 0]])
    m.data[0] = np.nan
    with np.errstate(invalid="ignore"):
        want = m.toarray() * B.to_numpy()
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(A=A, B=B).to_numpy(), want)
    m.data[0] = 1.0   # (and back: the kernel for finite values serves it again)
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), [[0, 0, 2.0], [0, 0, 0]])


def test_compute_checks_a_shared_tensor_once_however_many_operands_read_it():
    import compiler.recheck as recheck
    m = sp.csr_matrix(np.arange(1.0, 13.0).reshape(3, 4))
    a = xp.asarray(m)
    ((a * 2.0) + a).compute()   # (lowered and planned)
    t = a.node.tensor
    check, runs = recheck.kept_checker(t), []

    def counted():
        runs.append(t)
        return check()
    counted.ops = check.ops
    t.__dict__["_checker"] = counted
    b = xp.asarray(m)
    # (the matrix taken again is the same tensor, not checked until the expression is computed)
    assert b.node.tensor is t and not runs
    got = ((b * 2.0) + b).compute().to_numpy()
    np.testing.assert_array_equal(got, 3 * m.toarray())
    assert len(runs) == 1   # (the Leaf's check; the call's own check would be a second)
    m.indices[0] = 9        # (written in place between asarray and compute: compute's check says so)
    c = xp.asarray(m)
    with pytest.raises(FormatError, match=r"\(csr_matrix of shape \(3, 4\)\): indices\[0\]=9 is out of range"):
        (c * 2.0).compute()


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["csr", "csc", "coo", "dcsr", "hash", "bytemap"]), st.data())
@example("csr", None)
def test_a_write_to_a_forced_writeable_index_array_is_refused_or_computed_right(name, data):
    """Any value written anywhere in any index array of a tensor whose arrays a user made writeable:
    a call of a kernel planned for it refuses it (FormatError naming ``A``) exactly where validation
    does, and otherwise computes what the tensor holds now (the dense oracle of its entries)."""
    m = _matrix(name)
    t = ss.Tensor.from_numpy(m, FORMATS[name], name="A")
    x = np.arange(7.0)
    k = ss.lower("y[i] += A[i, j] * x[j]", A=t, x=x)
    k(A=t, x=x)
    k(A=t, x=x)
    arrays = _index_arrays(t)
    if data is None:   # (the first SparseList's pos past the stored count)
        level, _, a = arrays[0]
        at, bad = -1, 10 ** 6
    else:
        level, _, a = data.draw(st.sampled_from(arrays))
        at = data.draw(st.integers(0, len(a) - 1))
        bad = data.draw(st.one_of(st.integers(-5, 12), st.sampled_from([2 ** 31 - 1, -2 ** 31, 10 ** 9])))
    owner = a if a.base is None else a.base
    owner.flags.writeable = True
    a.flags.writeable = True
    a[at] = bad
    try:
        t.validate()
    except FormatError:
        with pytest.raises(FormatError, match="^A: level"):
            k(A=t, x=x)
        return
    np.testing.assert_allclose(k(A=t, x=x).to_numpy(), t.to_numpy() @ x)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_a_result_handed_to_scipy_takes_scipys_in_place_methods(fmt):
    # to_scipy shares the result's arrays: scipy's eliminate_zeros/sort_indices/sum_duplicates write them
    # ("WRITEBACKIFCOPY base is read-only" while sealed); the tensor then checks them again at each call
    S = sp.random(30, 20, density=0.3, format="csr", random_state=3)
    S.data[::4] = 0.0
    A, B = ss.Tensor.from_scipy(S, name="A"), ss.Tensor.from_scipy(-2.0 * S, name="B")
    C = ss.lower("C[i, j] = A[i, j] + B[i, j]", A=A, B=B, C=fmt)(A=A, B=B)
    m = C.to_scipy(fmt)
    if fmt == "coo":
        m.sum_duplicates()
    else:
        m.eliminate_zeros()
        m.sort_indices()
    np.testing.assert_array_equal(m.toarray(), -S.toarray())
    assert not ss.sealing.sealed(ss.sealing.index_writers(C))
    y = ss.lower("y[i] = C[i, j]", C=C)(C=C)
    np.testing.assert_allclose(y.to_numpy(), -S.toarray().sum(axis=1))


@pytest.mark.parametrize("name", FORMATS)
def test_a_copy_holds_its_own_sealed_arrays(name):
    """``Tensor.copy`` (what ``asarray(..., copy=True)`` and ``from_scipy(..., copy=True)`` make): the
    same entries and format, no array shared with the original, every index array read-only."""
    m = _matrix(name)
    t = ss.Tensor.from_numpy(m, FORMATS[name])
    c = t.copy()
    assert c.format == t.format and np.array_equal(c.to_numpy(), m)
    for (_, kind, a), (_, _, b) in zip(_index_arrays(t), _index_arrays(c)):
        assert a.size == 0 or not np.shares_memory(a, b), kind
        assert not b.flags.writeable, kind
    assert not np.shares_memory(c.vals, t.vals)
