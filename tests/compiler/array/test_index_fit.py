"""The index dtype of a result whose format names none: int32 where scipy would choose it, int64
where the extents or the entries could pass int32, a given Format's own (issue 30, compiler.index_fit)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.notation import parse

RNG = np.random.default_rng(30)
FORMATS = ["csr", "csc", "coo", "dense"]
FILLS = [0.0, 1.0, np.nan, np.inf, -np.inf]
OPS = ["slice", "vstack", "hstack", "ravel"]
M = np.where(RNG.random((7, 5)) < 0.4, RNG.integers(1, 9, (7, 5)), 0).astype(float)


def index_dtypes(t) -> set:
    """The index dtypes of a Tensor's or a Format's levels."""
    return {np.dtype(lvl.index_dtype).name for lvl in t.levels if getattr(lvl, "index_dtype", None) is not None}


def check(expr, want: np.ndarray, dtype: str, format=None):
    got = expr.compute(format)
    assert index_dtypes(got) == {dtype}
    np.testing.assert_array_equal(got.to_numpy(), want)
    # (the arrays are of that dtype too, as the format says)
    for arrays in got.level_arrays():
        for name, a in arrays.items():
            if name != "tbl" and isinstance(a, np.ndarray) and a.dtype.kind == "i":
                assert a.dtype == np.dtype(dtype), name
    return got


@pytest.mark.parametrize("kind", ["csr", "csc", "coo"])
def test_shape_operators_and_arithmetic_take_int32_as_scipy_does(kind):
    a = xp.asarray(ss.Tensor.from_numpy(M, kind))
    s = sp.csr_array(M).asformat(kind)
    # scipy's results of the same operators: int32 for these sizes
    assert sp.vstack([s, s]).asformat("csr").indices.dtype == np.int32
    check(xp.concat([a, a]), np.vstack([M, M]), "int32")
    check(xp.concat([a, a], axis=1), np.hstack([M, M]), "int32", format="coo")
    check(a[::-2, 1:], M[::-2, 1:], "int32", format="csr")
    check(a.reshape(-1), M.reshape(-1), "int32")
    check(a[3], M[3], "int32")
    check(a * 2 + a, M * 3, "int32")
    check(xp.stack([a, a]), np.stack([M, M]), "int32")


def test_a_format_given_keeps_its_index_dtype():
    a = xp.asarray(ss.Tensor.from_numpy(M, "csr"))
    check(a[::2], M[::2], "int64", format=ss.csr())
    check(a[::2], M[::2], "int32", format=ss.csr(index_dtype="int32"))
    check(a[::2], M[::2], "int64", format="Dense(SparseList(Element(0.0)))")
    # (a Format built by a shorthand's constructor states int64; the name alone leaves it open)
    check(xp.concat([a, a]), np.vstack([M, M]), "int64", format=ss.coo())
    check(xp.concat([a, a]), np.vstack([M, M]), "int32", format="coo")


def test_the_choice_is_a_trace_step_saying_why():
    a = xp.asarray(ss.Tensor.from_numpy(M, "csr"))
    (step,) = a[::2].lower().trace.find("index-dtype")
    assert step.note.startswith("int32 indices, as scipy chooses them")
    assert "extents (4, 5)" in step.note and str(int(np.count_nonzero(M))) + " entries" in step.note
    assert not a[::2].lower(format=ss.csr()).trace.find("index-dtype")


def wide(rows=2, cols=2 ** 31, seed=0):
    """A CSR of 2**31 columns (its indices can reach past int32) holding a few entries."""
    r = np.random.default_rng(seed)
    n = int(r.integers(1, 5))
    m = sp.coo_array((r.integers(1, 9, n).astype(float),
                      (r.integers(0, rows, n), np.sort(r.choice(cols, n, replace=False)))), shape=(rows, cols))
    m.sum_duplicates()
    return m.tocsr()


def coords(t):
    c, v = t.to_coords()
    order = np.lexsort(c[::-1])
    return c[:, order].tolist(), v[order].tolist()


def test_extents_past_int32_take_int64_and_the_choice_keys_the_cache():
    small = xp.asarray(ss.Tensor.from_numpy(M, "csr"))
    big_m = wide()
    big = xp.asarray(ss.Tensor.from_scipy(big_m))
    # the same statement for the same formats (no shape operator: its kernel serves any shape):
    # int32 for the small operand, and the big one must not get that kernel
    check(small + small, 2 * M, "int32")
    got = (big + big).compute()
    assert index_dtypes(got) == {"int64"}
    assert coords(got) == coords(ss.Tensor.from_scipy(2 * big_m))
    (step,) = (big + big).lower().trace.find("index-dtype")
    assert step.note.startswith("int64 indices") and "> 2147483647" in step.note
    rev = big[::-1].compute()
    assert index_dtypes(rev) == {"int64"}
    assert coords(rev) == coords(ss.Tensor.from_scipy(big_m[::-1]))


def test_more_entries_than_int32_counts_take_int64():
    # x[i] * y[j] over 50000 x 50000 may store 2.5e9 entries: its extents fit int32, its count not
    x = ss.Tensor.from_numpy(np.arange(1.0, 50001.0), "sparse_vector")
    outer = xp.asarray(x)[:, None] * xp.asarray(x)[None, :]
    kernel = outer.lower()
    assert index_dtypes(kernel.formats["out"]) == {"int64"}
    assert "at most 2500000000 entries" in kernel.trace.find("index-dtype")[0].note
    small = xp.asarray(ss.Tensor.from_numpy(np.arange(1.0, 4.0), "sparse_vector"))
    check(small[:, None] * small[None, :], np.outer([1, 2, 3], [1, 2, 3]), "int32")


def test_count_bound_by_expression():
    from compiler.index_fit import count_bound
    stored = {"A": 5, "B": 7, "x": 2}
    assert count_bound(parse("C[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)").rhs, stored, {}) == 12
    # (x[j] lacks i: each of its entries may meet every i)
    assert count_bound(parse("y[i] = A[i, j] * x[j]").rhs, stored, {"i": 3}) == 5 + 2 * 3
    assert count_bound(parse("y[i] = A[i, j] * x[j]").rhs, stored, {}) is None
    assert count_bound(parse("C[i, j] = broadcast(j:10, x[i])").rhs, stored, {}) == 20
    assert count_bound(parse("C[i, j] = A[i, j] * y[j]").rhs, stored, {}) is None   # (y unknown)


def test_index_notation_with_shape_operators_and_a_shorthand_output():
    A = ss.Tensor.from_numpy(M, "csr")
    prog = "C[k, j] = slice(A[i, j], i -> k, (1, 7, 2))"
    k = ss.lower(prog, A=A, C="csr")
    assert index_dtypes(k(A=A)) == {"int32"}
    assert "C" in k.trace.find("index-dtype")[0].note
    np.testing.assert_array_equal(k(A=A).to_numpy(), M[1:7:2])
    assert index_dtypes(ss.lower(prog, A=A, C=ss.csr())(A=A)) == {"int64"}
    # given formats only, the extents are unknown when lowering: int64, saying so
    k = ss.lower(prog, A="csr", C="csr")
    assert "not known when lowering" in k.trace.find("index-dtype")[0].note
    assert index_dtypes(k(A=A)) == {"int64"}


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_index_notation_without_shape_operators_chooses_a_shorthands_index_dtype_too(strategy):
    """``out="csr"`` of a statement with no shape operator got int64 indices; a shorthand name leaves
    the index dtype open there too (``ss.csr()`` names int64 and keeps it)."""
    A = ss.Tensor.from_numpy(M, "csr")
    prog = "C[i, j] = A[i, j] * 2"
    k = ss.lower(prog, strategy, A=A, C="csr")
    (step,) = k.trace.find("index-dtype")
    assert step.note.startswith("int32 indices, as scipy chooses them") and "extents (7, 5)" in step.note
    got = k(A=A)
    assert index_dtypes(got) == {"int32"} and got.levels[1].pos.dtype == np.int32
    np.testing.assert_array_equal(got.to_numpy(), 2 * M)
    # (the choice keys the cache: ss.csr() is another kernel, int64, and the name's is reused)
    k64 = ss.lower(prog, strategy, A=A, C=ss.csr())
    assert k64 is not k and not k64.trace.find("index-dtype") and index_dtypes(k64(A=A)) == {"int64"}
    assert ss.lower(prog, strategy, A=A, C="csr") is k
    # (given formats only: int64, saying why)
    assert "not known when lowering" in ss.lower(prog, strategy, A="csr", C="csr").trace.find("index-dtype")[0].note
    y = ss.einsum("y[i] = A[i, j] * x[j]", A=A, x=ss.Tensor.from_numpy(np.ones(5), "sparse_vector"),
                  y="sparse_vector")
    assert index_dtypes(y) == {"int32"}
    np.testing.assert_array_equal(y.to_numpy(), M.sum(axis=1))


def test_a_cached_kernel_is_returned_before_the_choice_runs(monkeypatch):
    # (the fast call path: a solver's loop lowering the same statement for the same tensors)
    import compiler.lowering as lowering
    A = ss.Tensor.from_numpy(M, "coo")
    k = ss.lower("C[i, j] = A[i, j] + A[i, j]", A=A, C="coo")
    assert index_dtypes(k(A=A)) == {"int32"}

    def no_choice(*args, **kwargs):
        raise AssertionError("the index dtype was chosen again for a cached kernel")

    monkeypatch.setattr(lowering, "fitted_format", no_choice)
    assert ss.lower("C[i, j] = A[i, j] + A[i, j]", A=A, C="coo") is k


def test_fresh_tensors_of_a_lowered_statement_build_no_format_for_the_choice(monkeypatch):
    # (a solver's loop over fresh tensors misses lower()'s first look; the name's format and its
    # int32 copy are built once, not per call: building them doubled such a call's time)
    import compiler.index_fit as index_fit
    k = ss.lower("C[i, j] = A[i, j] * 3", A=ss.Tensor.from_numpy(M, "csr"), C="csr")

    def no_build(*args, **kwargs):
        raise AssertionError("a format was built again for the index dtype's choice")

    monkeypatch.setattr(index_fit, "parse_format", no_build)
    monkeypatch.setattr(index_fit, "with_index_dtype", no_build)
    fresh = ss.Tensor.from_numpy(M, "csr")
    again = ss.lower("C[i, j] = A[i, j] * 3", A=fresh, C="csr")
    assert again is k and index_dtypes(again(A=fresh)) == {"int32"}


@settings(max_examples=6, deadline=None)
@given(rows=st.integers(0, 5), cols=st.integers(0, 4), fill=st.sampled_from(FILLS), kind=st.sampled_from(FORMATS),
       out=st.sampled_from(["csr", "coo", "dcsr", "csc"]), strategy=st.sampled_from(["lattice", "looplets"]),
       prog=st.sampled_from(["C[i, j] = A[i, j] * 2", "C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, k] * B[k, j]"]),
       seed=st.integers(0, 2 ** 16))
@example(rows=0, cols=3, fill=np.nan, kind="coo", out="dcsr", strategy="looplets", prog="C[i, j] = A[i, j] * 2", seed=0)
@example(rows=4, cols=4, fill=-np.inf, kind="csc", out="csr", strategy="lattice", prog="C[i, j] = A[i, j] + B[i, j]",
         seed=1)
def test_a_shorthand_output_without_shape_operators_is_int32_and_computes_as_int64(rows, cols, fill, kind, out,
                                                                                 strategy, prog, seed):
    """The int32 kernel's result is the int64 kernel's (``ss.parse_format(out)``), and the oracle's."""
    r = np.random.default_rng(seed)
    shape = (rows, rows) if "k" in prog else (rows, cols)
    dense = [np.where(r.random(shape) < 0.5, r.integers(1, 5, shape).astype(float), fill) for _ in "AB"]
    A, B = (ss.Tensor.from_numpy(d, kind, fill=fill) for d in dense)
    try:
        wide = ss.lower(prog, strategy, A=A, B=B, C=ss.parse_format(out))(A=A, B=B)
    except ss.StrategyError:
        with pytest.raises(ss.StrategyError):
            ss.lower(prog, strategy, A=A, B=B, C=out)
        return
    kernel = ss.lower(prog, strategy, A=A, B=B, C=out)
    got = kernel(A=A, B=B)
    assert index_dtypes(got) == {"int32"} and index_dtypes(wide) == {"int64"}
    np.testing.assert_array_equal(got.to_numpy(), wide.to_numpy())
    oracle, _ = ss.evaluate(kernel.program, A=A, B=B)
    np.testing.assert_array_equal(got.to_numpy(), oracle)


def test_fitted_format_of_an_output_without_index_arrays():
    from compiler.index_fit import fitted_format
    fmt, why = fitted_format(parse("C[i, j] = A[i, j]"), ss.parse_format("dense"), {"A": M})
    assert fmt == ss.parse_format("dense") and why == ""




def shape_case(op, a, dense, step):
    return {"slice": lambda: (a[::step], dense[::step]),
            "vstack": lambda: (xp.concat([a, a[::step]]), np.vstack([dense, dense[::step]])),
            "hstack": lambda: (xp.concat([a, a], axis=1), np.hstack([dense, dense])),
            "ravel": lambda: (a.reshape(-1), dense.reshape(-1))}[op]()


@settings(max_examples=12, deadline=None)
@given(rows=st.integers(0, 5), cols=st.integers(0, 4), fill=st.sampled_from(FILLS), kind=st.sampled_from(FORMATS),
       step=st.sampled_from([1, 2, -1, -3]), op=st.sampled_from(OPS), out=st.sampled_from([None, "coo", "csr"]),
       seed=st.integers(0, 2 ** 16))
@example(rows=0, cols=3, fill=np.nan, kind="coo", step=-3, op="vstack", out=None, seed=0)
@example(rows=4, cols=4, fill=-np.inf, kind="csc", step=-1, op="slice", out="coo", seed=1)
def test_results_of_shape_operators_hold_scipys_index_dtype(rows, cols, fill, kind, step, op, out, seed):
    r = np.random.default_rng(seed)
    dense = np.where(r.random((rows, cols)) < 0.5, r.integers(1, 5, (rows, cols)).astype(float), fill)
    a = xp.asarray(ss.Tensor.from_numpy(dense, kind, fill=fill))
    expr, want = shape_case(op, a, dense, step)
    if want.ndim == 1 and out is not None:
        out = "sparse_vector"
    if kind == "dense" and out is None:
        return   # (dense operands, dense result: no index arrays)
    got = check(expr, want, "int32", format=out)
    kernel = expr.lower(format=out)
    oracle, _ = ss.evaluate(kernel.program, **kernel.arguments)
    np.testing.assert_array_equal(got.to_numpy(), oracle)
