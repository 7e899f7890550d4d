"""The shared runtime of compiler.lower, driven by a hand-written stand-in strategy."""

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import binding, lowering as lower_mod
from compiler.imperative import (Buffer, CompoundAssign, Const, Declare, For, Function, Grow,
                                 Growable, If, OutScalar, Scalar, Var)
from compiler.lowering import Lowered, einsum, lower, register_strategy

CALLS = []


def handwritten(program, formats, trace, **options):
    """Lowers exactly two programs, as a strategy would: SpMV into dense y, and sparsify."""
    CALLS.append(str(program))
    trace.record("lower", before=program, note="hand-written")
    if program.lhs.tensor == "y":
        A, x = formats["A"], formats["x"]
        assert A == ss.csr() and x == ss.dense(1)
        y_fmt = ss.dense(1)
        params = (*binding.input_params("A", A), *binding.input_params("x", x),
                  Scalar("y0_size", "int64"), Buffer("y_val", "float64", "inout"))
        p = {q.name: q for q in params}
        i, pA, acc = Var("i"), Var("pA1"), Var("acc")
        body = For(i, 0, p["A0_size"].var, [
            Declare(acc, "float64", p["y_val"][i]),
            For(pA, p["A1_pos"][i], p["A1_pos"][i + 1], [
                CompoundAssign("+", acc, p["A_val"][pA] * p["x_val"][p["A1_idx"][pA]]),
            ]),
            p["y_val"].store(i, acc),
        ])
        fn = Function("spmv", params, body)
        return Lowered(fn, "y", y_fmt, (("A", 0),), 0.0,
                       extents=(("i", (("A", 0), ("y", 0))), ("j", (("A", 1), ("x", 0)))),
                       initial="output" if options.get("accumulate") else "fill")
    # s[i] = x[i] into a sparse vector, dropping zeros
    x = formats["x"]
    s_fmt = ss.sparse_vector()
    nnz = OutScalar("s0_nnz", "int64")
    params = (*binding.input_params("x", x), Buffer("s0_pos", "int64", "inout"), nnz,
              Growable("s0_idx", "int64", "s0_nnz"), Growable("s_val", "float64", "s0_nnz"))
    p = {q.name: q for q in params}
    i, n = Var("i"), nnz.var
    body = [
        For(i, 0, p["x0_size"].var, [
            If(p["x_val"][i].ne(Const(0.0, "float64")), [
                Grow("s0_idx", n + 1), Grow("s_val", n + 1),
                p["s0_idx"].store(n, i), p["s_val"].store(n, p["x_val"][i]),
                CompoundAssign("+", n, 1),
            ]),
        ]),
        p["s0_pos"].store(1, n),
    ]
    return Lowered(Function("sparsify", params, body), "s", s_fmt, (("x", 0),), 0.0)


@pytest.fixture(autouse=True)
def strategy():
    register_strategy("handwritten", handwritten)
    lower_mod.clear_cache()
    CALLS.clear()
    yield
    lower_mod._STRATEGIES.pop("handwritten", None)


def random_csr(m, n, density, seed):
    return sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float64)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 12), st.integers(0, 12), st.floats(0, 1), st.integers(0, 10_000))
def test_spmv_matches_scipy_and_interpreter(m, n, density, seed):
    S = random_csr(m, n, density, seed)
    A = ss.Tensor.from_scipy(S, "csr").asformat(ss.csr())
    x = np.random.default_rng(seed).random(n)
    kernel = lower("y[i] = A[i, j] * x[j]", "handwritten", A=A, x=x)
    y = kernel(A=A, x=x)
    assert y.format == ss.dense(1) and y.shape == (m,)
    np.testing.assert_allclose(y.to_numpy(), S @ x)
    np.testing.assert_allclose(kernel.interpret(A=A, x=x).to_numpy(), S @ x)
    ref, fill = ss.evaluate("y[i] = A[i, j] * x[j]", A=A, x=x)
    np.testing.assert_allclose(y.to_numpy(), ref)


def test_second_lowering_is_served_from_cache():
    A = ss.Tensor.from_numpy(np.eye(3), ss.csr())
    k1 = lower("y[i] = A[i, j] * x[j]", "handwritten", A=A, x=np.ones(3))
    k2 = lower("y[i] = A[i, j] * x[j]", "handwritten", A=ss.csr(), x="dense")
    assert k1 is k2 and len(CALLS) == 1
    assert k1.trace.stages() == ["parse", "lower", "emit-c", "compile"]
    assert "int spmv(" in k1.c_source


def test_a_fill_of_negative_zero_gets_its_own_kernel():
    # sparse_vector(fill=-0.0) == sparse_vector(fill=0.0), but where every operand is absent the
    # first kernel gives 0.0 and the second -0.0 (fuzz round 6)
    def vecs(fill):
        return {n: ss.Tensor.from_numpy(np.array(v), ss.sparse_vector(fill=fill), name=n)
                for n, v in dict(x=[fill, 1.0], y=[fill, 3.0]).items()}
    k0 = lower("a[i] = x[i] + y[i]", **vecs(0.0))
    neg = vecs(-0.0)
    k1 = lower("a[i] = x[i] + y[i]", **neg)
    assert k1 is not k0 and lower("a[i] = x[i] + y[i]", **neg) is k1
    got = k1(**neg)
    assert np.signbit(got.to_numpy()[0]) and np.signbit(got.fill)
    assert np.signbit(ss.evaluate("a[i] = x[i] + y[i]", **neg)[0][0])
    # (the formats differ, as for any two fills: one's kernel refuses the other's tensors)
    with pytest.raises(ss.FormatError, match=r"tensor x is SparseList\(Element\(-0.0\)\) but this kernel was "
                       r"compiled for SparseList\(Element\(0.0\)\)"):
        k0(**neg)


def test_sparse_output_through_growable_buffers():
    x = np.array([0.0, 1.5, 0.0, 0.0, -2.0, 3.0])
    s = lower("s[i] = x[i]", "handwritten", x=x)(x=x)
    assert s.format == ss.sparse_vector() and s.nnz == 3
    np.testing.assert_array_equal(s.to_numpy(), x)
    np.testing.assert_array_equal(s.levels[0].idx, [1, 4, 5])


def test_empty_and_all_fill_inputs():
    x = np.zeros(0)
    assert lower("s[i] = x[i]", "handwritten", x=x)(x=x).shape == (0,)
    z = np.zeros(5)
    s = lower("s[i] = x[i]", "handwritten", x=z)(x=z)
    assert s.nnz == 0 and (s.to_numpy() == 0).all()


def test_update_of_a_given_output_starts_from_its_values():
    A = ss.Tensor.from_numpy(np.eye(2), ss.csr())
    kernel = lower("y[i] += A[i, j] * x[j]", "handwritten", options={"accumulate": True},
                   A=A, x=np.ones(2), y=np.array([10.0, 20.0]))
    y = kernel(A=A, x=np.ones(2), y=np.array([10.0, 20.0]))
    np.testing.assert_array_equal(y.to_numpy(), [11.0, 21.0])


def test_einsum_returns_the_output_tensor():
    A = ss.Tensor.from_numpy(np.array([[1.0, 2.0], [0.0, 3.0]]), ss.csr())
    y = einsum("y[i] = A[i, j] * x[j]", "handwritten", A=A, x=np.array([1.0, 1.0]))
    np.testing.assert_array_equal(y.to_numpy(), [3.0, 3.0])


def test_mismatched_extents_name_the_index_and_tensors():
    A = ss.Tensor.from_numpy(np.eye(3), ss.csr())
    kernel = lower("y[i] = A[i, j] * x[j]", "handwritten", A=A, x=np.ones(3))
    with pytest.raises(ss.ShapeError, match=r"index j has extent 3 in A \(mode 1\) but 4 in x \(mode 0\)"):
        kernel(A=A, x=np.ones(4))


def test_wrong_format_at_call_time_is_explained():
    A = ss.Tensor.from_numpy(np.eye(3), ss.csr())
    kernel = lower("y[i] = A[i, j] * x[j]", "handwritten", A=A, x=np.ones(3))
    with pytest.raises(ss.FormatError, match="tensor A is dcsr but this kernel was compiled for csr"):
        kernel(A=A.asformat("dcsr"), x=np.ones(3))


def test_missing_and_unknown_tensors():
    A = ss.Tensor.from_numpy(np.eye(3), ss.csr())
    kernel = lower("y[i] = A[i, j] * x[j]", "handwritten", A=A, x=np.ones(3))
    with pytest.raises(TypeError, match=r"missing tensor x \(compiled for"):
        kernel(A=A)
    with pytest.raises(TypeError, match="this kernel has no tensor B"):
        kernel(A=A, x=np.ones(3), B=A)
    with pytest.raises(TypeError, match="no format or tensor given for x"):
        lower("y[i] = A[i, j] * x[j]", "handwritten", A=A)


@pytest.mark.parametrize("call, message", [
    (lambda: lower(42, x=np.ones(2)), "lower\\(\\) needs index notation .* not int"),
    (lambda: lower(b"y[i] = x[i]", x=np.ones(2)), "not bytes"),
    (lambda: lower("y[i] = x[i]", functions=[ss.user_function("f", min, "return x;")], x=np.ones(2)),
     "functions must map names to user functions .* not a list"),
    (lambda: lower("y[i] = x[i]", options=["schedule"], x=np.ones(2)), "options must be a dict, not a list"),
    (lambda: lower("y[i] = x[i]", x=[1.0, 2.0]), "tensor x: expected a Tensor, a numpy array, a scipy.sparse or pydata/sparse array or a format, not list"),
])
def test_arguments_of_the_wrong_kind_say_which(call, message):
    with pytest.raises(ss.UsageError, match=message):
        call()


A34 = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("strategy", [None, "lattice", "looplets"])
@pytest.mark.parametrize("prog, tensors, message", [
    # on main: looplets' IndexError (tuple index out of range) after the lattice's refusal
    ("y[i] += A[i] * x[i]", {"A": A34, "x": np.ones(3)}, r"tensor A has 2 mode\(s\) \(shape \(3, 4\)\) but the "
     r"program indexes it with 1 index\(es\)"),
    ("y[i] += A[i, j, k] * x[i]", {"A": ss.Tensor.from_numpy(A34, "csr"), "x": np.ones(3)}, "tensor A has 2 mode.* with 3"),
    ("y[i] = A[i, j]", {"A": np.ones(3)}, r"tensor A has 1 mode\(s\) \(shape \(3,\)\) .* with 2 index"),
    ("y[i, j] = A[i, j] * x[j]", {"A": A34, "x": np.ones(4), "y": np.zeros(3)}, "tensor y has 1 mode.* with 2"),
])
def test_a_tensor_indexed_with_other_than_its_modes_is_refused_naming_it(strategy, prog, tensors, message):
    with pytest.raises(ss.ShapeError, match=message):
        lower(prog, strategy, **tensors)
    with pytest.raises(ss.ShapeError, match=message):
        einsum(prog, **tensors)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("prog, formats, message", [
    ("y[int] = A[int, j] * x[j]", {"A": "csr", "x": "dense"},
     "index 'int' cannot name a loop variable of the generated C: it is a keyword of C; rename it"),
    ("y[i] = A[i, for] * x[for]", {"A": "csr", "x": "dense"}, "index 'for' .* keyword of C"),
    # names the generated C already uses: a C type, a tensor's array
    ("y[int64_t] = A[int64_t, j] * x[j]", {"A": "csr", "x": "dense"},
     r"index 'int64_t' cannot name a loop variable of the generated C: the generated C uses int64_t \(a name of "
     r"C's headers or of the kernel's runtime\); rename it in the program"),
    ("y[A1_pos] = A[A1_pos, j] * x[j]", {"A": "csr", "x": "dense"},
     r"index 'A1_pos' cannot name a loop variable of the generated C: the generated C names A's arrays so "
     r"\(A<level>_<kind>: A_val, A1_pos, A0_size\)"),
    ("a[i] = bé[i]", {"bé": "sparse_vector"}, "tensor name 'bé' cannot prefix a variable of the generated C: "
     "use ASCII letters"),
])
def test_names_the_generated_c_cannot_use_are_refused(strategy, prog, formats, message):
    with pytest.raises(ss.StrategyError, match=message):
        lower(prog, strategy, **formats)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_kernel_name_must_be_a_c_identifier(strategy):
    with pytest.raises(ss.StrategyError, match=r"name='bad name;': the kernel's name must be a C identifier"):
        lower("a[i] = b[i]", strategy, b="sparse_vector", options={"name": "bad name;"})
    with pytest.raises(ss.StrategyError, match=r"name='malloc': the kernel's name must be a C identifier: the "
                                               r"generated C uses malloc"):
        lower("a[i] = b[i]", strategy, b="sparse_vector", options={"name": "malloc"})


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("tensor, index", [("f", "i"), ("o", "d"), ("nt", "i"), ("int", "j")])
def test_names_that_join_into_a_c_keyword_are_made_fresh(strategy, tensor, index):
    # the coordinate of f[i] in a merge is i + f: "if" is taken by C, so it becomes "if_2"
    f = ss.Tensor.from_numpy(np.array([1.0, 0, 2]), ss.sparse_vector(), name=tensor)
    b = ss.Tensor.from_numpy(np.array([0, 1.0, 2]), ss.sparse_vector(), name="b")
    k = lower(f"a[{index}] = {tensor}[{index}] + b[{index}]", strategy, **{tensor: f, "b": b})
    assert k(**{tensor: f, "b": b}).to_numpy().tolist() == [1.0, 1.0, 4.0]


def test_unknown_strategy_lists_the_known_ones():
    with pytest.raises(ss.UsageError, match="unknown strategy 'nope'; known strategies: .*handwritten"):
        lower("y[i] = x[i]", "nope", x=np.ones(2))


def test_checked_kernel_validates_inputs_and_bounds():
    A = ss.Tensor.from_numpy(np.eye(3), ss.csr())
    kernel = lower("y[i] = A[i, j] * x[j]", "handwritten", checked=True, A=A, x=np.ones(3))
    np.testing.assert_array_equal(kernel(A=A, x=np.ones(3)).to_numpy(), [1.0, 1.0, 1.0])
    A.levels[1].idx.flags.writeable = True   # (sealed when built: the user's choice to write it)
    A.levels[1].idx[1] = 7  # corrupt after validation: the checked kernel must catch it
    with pytest.raises(ss.FormatError, match=r"idx\[1\]=7 is out of range"):
        kernel(A=A, x=np.ones(3))


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_checked_kernel_is_built_from_the_unchecked_ones_lowering(strategy):
    """A test checks a kernel both ways: the checked one is lowered once, not twice; only its C
    (and its trace's emit-c and compile steps) are its own, and it still catches a bad index."""
    A = ss.Tensor.from_numpy(np.eye(3) * 2.0, ss.csr())
    k = lower("y[i] = A[i, j] * x[j] + 1.5", strategy, A=A, x=np.ones(3))
    stages = k.trace.stages()
    kc = lower("y[i] = A[i, j] * x[j] + 1.5", strategy, checked=True, A=A, x=np.ones(3))
    assert kc.lowered is k.lowered and kc.program is k.program and kc.c_source != k.c_source
    assert kc.trace.stages() == stages and k.trace.stages() == stages   # (the unchecked trace untouched)
    assert kc.trace[-1] is not k.trace[-1] and kc.trace[-3] is k.trace[-3]
    assert kc.formats == k.formats and kc.fresh_output == k.fresh_output
    np.testing.assert_array_equal(kc(A=A, x=np.ones(3)).to_numpy(), [3.5, 3.5, 3.5])
    A.levels[1].idx.flags.writeable = True   # (sealed when built: the user's choice to write it)
    A.levels[1].idx[1] = 7
    with pytest.raises(ss.FormatError, match=r"idx\[1\]=7 is out of range"):
        kc(A=A, x=np.ones(3))
    # (the same formats given by name are the same kernels)
    assert lower("y[i] = A[i, j] * x[j] + 1.5", strategy, checked=True, A="csr", x="dense") is kc


def test_a_checked_build_that_fails_carries_its_trace(monkeypatch):
    """A checked kernel built from the unchecked one's lowering carries its trace on a compile error,
    as a fresh lowering does (the explorer shows where it stopped)."""
    k = lower("y[i] = A[i, j] * x[j] - 0.5", "looplets", A="csr", x="dense")
    real = lower_mod.compile_function

    def failing(function, checked=False, trace=None):
        if checked:
            raise ss.CompileError("the checked build failed")
        return real(function, checked=checked, trace=trace)

    monkeypatch.setattr(lower_mod, "compile_function", failing)
    with pytest.raises(ss.CompileError) as info:
        lower("y[i] = A[i, j] * x[j] - 0.5", "looplets", checked=True, A="csr", x="dense")
    assert info.value.trace.stages() == k.trace.stages()[:k.trace.stages().index("emit-c")]


def test_failed_lowering_carries_its_trace():
    def broken(program, formats, trace, **options):
        trace.record("concretize", before=program)
        raise ss.StrategyError("the broken strategy cannot iterate A")

    register_strategy("broken", broken)
    try:
        with pytest.raises(ss.StrategyError) as info:
            lower("y[i] = x[i]", "broken", x=np.ones(2))
        assert info.value.trace.stages() == ["parse", "concretize"]
    finally:
        lower_mod._STRATEGIES.pop("broken")


def test_format_mismatch_in_index_dtype_is_shown():
    A32 = ss.Tensor.from_scipy(sp.identity(3, format="csr", dtype=np.float64))  # int32 indices
    A64 = A32.asformat(ss.csr())
    kernel = lower("y[i] = A[i, j] * x[j]", "handwritten", A=A64, x=np.ones(3))
    with pytest.raises(ss.FormatError, match="index_dtype='int32'.*but this kernel was compiled for"):
        kernel(A=A32, x=np.ones(3))


@pytest.mark.parametrize("out", ["dense", "csr", "dcsr", "coo"])
def test_unvalidated_output_path_builds_the_same_tensor(monkeypatch, out):
    """Kernel calls outside checked mode assemble the result without re-validating it
    (compiler.binding.OutputPlan); it must give the tensor the validating path gives,
    also when a second call changes the shape."""
    k = lower("C[i,j] = A[i,j] + B[i,j]", A="csr", B="dcsr", C=out)
    for shape, seed in (((5, 7), 0), ((5, 7), 1), ((3, 9), 2), ((0, 4), 3)):
        a = sp.random(*shape, density=0.4, format="csr", random_state=seed)
        b = sp.random(*shape, density=0.4, format="csr", random_state=seed + 10)
        A, B = ss.Tensor.from_numpy(a.toarray(), "csr"), ss.Tensor.from_numpy(b.toarray(), "dcsr")
        monkeypatch.setenv("SPARSESCOPE_VALIDATE_OUTPUTS", "1")
        checked = k(A=A, B=B)
        monkeypatch.delenv("SPARSESCOPE_VALIDATE_OUTPUTS")
        fast = k(A=A, B=B)
        fast.validate()
        assert fast.shape == checked.shape == shape
        assert fast.format == checked.format
        assert repr(fast) == repr(checked)
        np.testing.assert_array_equal(fast.to_numpy(), (a + b).toarray())


def test_input_plan_binds_what_input_args_binds():
    for fmt in ("csr", "coo", "dcsr", "dense"):
        A = ss.Tensor.from_scipy(sp.random(4, 6, density=0.5, format="csr", random_state=1), fmt)
        plan = binding.InputPlan("A", A.format)
        got, want = plan.args(A), binding.input_args("A", A)
        assert got.keys() == want.keys()
        for name in want:
            assert got[name] is want[name] or got[name] == want[name]


def test_numpy_arguments_for_dense_formats_bind_like_tensors():
    a = sp.random(5, 3, density=0.5, format="csr", random_state=4)
    A = ss.Tensor.from_numpy(a.toarray(), "csr")
    k = lower("y[i] += A[i,j] * x[j]", A="csr", x="dense")
    for x in (np.arange(3.0), np.arange(3, dtype=np.float32), [1, 2, 3], np.arange(6.0)[::2]):
        np.testing.assert_allclose(k(A=A, x=x).to_numpy(), a @ np.asarray(x, dtype=float))
    # a dense matrix stored column-major goes through the same plan
    kt = lower("y[i] += B[i,j] * x[j]", B=ss.Format(ss.dense(2).root, (1, 0)), x="dense")
    b = np.arange(15.0).reshape(5, 3)
    np.testing.assert_allclose(kt(B=b, x=np.ones(3)).to_numpy(), b @ np.ones(3))
    with pytest.raises(ss.ShapeError, match="index j"):
        k(A=A, x=np.ones(4))


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_an_output_too_large_to_allocate_is_a_memory_error_naming_it(strategy):
    from compiler.format import csr, dcsr, dense

    def hypersparse(n):
        coords = np.array([0, 5, n // 2], np.int64), np.array([3, n // 2, 7], np.int64)
        return ss.Tensor.from_scipy(sp.coo_array((np.ones(3), coords), shape=(n, n)), dcsr(), name="A")

    A = hypersparse(2 ** 32)   # a dense C would hold 2^64 entries: more than numpy can index
    k = lower("C[i, j] = A[i, j] * 2", strategy=strategy, A=A, C=dense(2))
    with pytest.raises(MemoryError, match=r"output C \(dense, shape \(4294967296, 4294967296\)\): its value array of "
                                          r"18446744073709551616 float64 entries (needs .* of memory available|cannot be "
                                          r"allocated \(.*\)); a sparse "
                                          r"format for C stores only its entries"):
        k(A=A)
    A = hypersparse(2 ** 40)   # CSR's row positions alone: 8.8 TB
    k = lower("C[i, j] = A[i, j] * 2", strategy=strategy, A=A, C=csr())
    with pytest.raises(MemoryError, match=r"output C \(csr, shape \(1099511627776, 1099511627776\)\): its level 1 "
                                          r"pos array of 1099511627777 int64 entries (needs .* of memory available|cannot "
                                          r"be allocated \(.*\)); a "
                                          r"format with no dense level above level 1 \(dcsr or coo for a matrix\)"):
        k(A=A)
    k = lower("C[i, j] = A[i, j] * 2", strategy=strategy, A=A, C=dcsr())   # (both strategies assemble DCSR)
    assert k(A=A).nnz == 3


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_an_output_extent_past_its_int32_index_is_refused(strategy):
    # z's coordinate 2^32 - 1 came back as -1
    from compiler.levels import Element, SparseList

    n = 2 ** 32
    x = ss.Tensor(SparseList(Element(0.0, vals=np.array([2.0, 3.0])), size=n, pos=np.array([0, 2]),
                             idx=np.array([0, n - 1])), name="x")
    k = lower("z[i] = x[i] + y[i]", strategy=strategy, x=x, y=x, z=ss.sparse_vector(index_dtype="int32"))
    with pytest.raises(ss.FormatError, match=r"output z: level 0 \(SparseList\) stores coordinates up to 4294967295 "
                                             r"\(mode 0 has extent 4294967296\), more than its index_dtype int32 holds "
                                             r"\(at most 2147483647\); use index_dtype='int64' for z"):
        k(x=x, y=x)
    small = ss.Tensor(SparseList(Element(0.0, vals=np.array([2.0])), size=9, pos=np.array([0, 1]),
                                 idx=np.array([8])), name="x")
    k = lower("z[i] = x[i] + y[i]", strategy=strategy, x=small, y=small, z=ss.sparse_vector(index_dtype="int32"))
    assert k(x=small, y=small).to_numpy()[8] == 4.0


def test_a_program_nested_hundreds_deep_is_refused_by_lower_and_evaluate():
    with pytest.raises(ss.UsageError, match=r"y\[i\] = (x\[i\] \+ ){4}x\[\.\.\.: the program nests "
                                         r"too deeply for the compiler's recursive passes"):
        lower("y[i] = " + " + ".join(["x[i]"] * 400), x=np.ones(3))
    from compiler.notation import parse
    program = parse("y[i] = x[i] + x[i]")
    for _ in range(3000):   # (deeper than the parser takes)
        program = replace(program, rhs=replace(program.rhs, args=(program.rhs, program.rhs.args[1])))
    with pytest.raises(ss.UsageError, match=r"Assign: the program nests too deeply"):
        ss.evaluate(program, x=np.ones(3))


def test_an_array_the_kernel_cannot_read_exactly_is_refused_naming_the_tensor():
    A = ss.Tensor.from_numpy(np.eye(2), "csr", name="A")
    k = lower("y[i] = A[i, j] * x[j]", A="csr", x="dense")
    for x, dtype in [(np.array([1 + 5j, 2j]), "complex128"), (np.array(["2020-01-01"] * 2, dtype="datetime64[D]"),
                                                               r"datetime64\[D\]"), (np.array([1.0, 2.0], dtype=object), "object")]:
        with pytest.raises(ss.DTypeError, match=f"x: {dtype} values cannot be stored as float64"):
            k(A=A, x=x)
    np.testing.assert_array_equal(k(A=A, x=np.array([1, 2], dtype=np.int8)).to_numpy(), [1.0, 2.0])
    ki = lower("y[i] = A[i, j] * x[j]", A=ss.Tensor.from_numpy(np.eye(2, dtype=np.int32), "csr"),
               x=np.ones(2, dtype=np.int32))
    Ai = np.eye(2, dtype=np.int32)
    with pytest.raises(ss.DTypeError, match=r"x: value 1.5 \(float64\) cannot be stored as int32 exactly"):
        ki(A=Ai, x=np.array([1.5, 2.0]))
    with pytest.raises(ss.DTypeError, match=r"x: value 1099511627776 \(int64\) cannot be stored as int32 exactly"):
        ki(A=Ai, x=np.array([2 ** 40, 1]))
    np.testing.assert_array_equal(ki(A=Ai, x=np.array([3.0, 1.0])).to_numpy(), [3, 1])
    with pytest.raises(ss.DTypeError, match="tensor b: dtype float16 is not supported"):
        lower("y[i] = a[i] + b[i]", a=np.arange(3.0), b=np.arange(3, dtype=np.float16))


def test_lowering_options_given_as_tensors_are_pointed_to_options():
    from compiler.lattice import Schedule
    with pytest.raises(ss.UsageError, match=r"^schedule=Schedule\(\) is no tensor of the program \(its tensors are "
                                         r"y, x\): options of the lowering go in options=\{'schedule': ...\}$"):
        lower("y[i] = x[i]", schedule=Schedule(), x=np.ones(3))
    # a value that could be a tensor (it was taken for an unused one, and the option dropped)
    with pytest.raises(ss.UsageError, match=r"^max_looplets=5 is no tensor of the program \(its tensors are y, x\): "
                                         r"options of the lowering go in options=\{'max_looplets': ...\}$"):
        lower("y[i] = x[i]", strategy="looplets", x=np.ones(3), max_looplets=5, z=np.ones(3))
    # a tensor the program does not name is no option: ignored, so one dict can serve several programs
    k = lower("y[i] = x[i]", x=np.ones(3), z=np.ones(3))
    np.testing.assert_array_equal(k(x=np.ones(3), z=np.ones(3)).to_numpy(), 1.0)
    with pytest.raises(ss.StrategyError, match=r"order=5: give the loop order as a list of index names"):
        lower("y[i] = x[i]", options={"order": 5}, x=np.ones(3))
    with pytest.raises(ss.StrategyError, match=r"order='i': give the loop order as a list of index names"):
        lower("y[i] = x[i]", options={"order": "i"}, x=np.ones(3))


def test_a_checked_kernel_names_the_argument_an_invalid_tensor_was_given_as():
    from compiler.levels import Dense, Element, SparseList
    bad = ss.Tensor(Dense(SparseList(Element(0.0, np.ones(2)), 3, pos=np.array([0, 1, 2]), idx=np.array([0, 9])), 2),
                    check=False)
    k = lower("y[i] = A[i, j] * x[j]", A="csr", x="dense", checked=True)
    with pytest.raises(ss.FormatError, match=r"^A: level 1 \(SparseList\)"):
        k(A=bad, x=np.ones(3))
    bad.name = "B"
    with pytest.raises(ss.FormatError, match=r"^A \(tensor B\): level 1 \(SparseList\)"):
        k(A=bad, x=np.ones(3))


def test_an_extent_mismatch_names_the_tensor_a_converted_copy_was_made_of():
    A = ss.Tensor.from_numpy(np.ones((3, 4)), "csr", name="A")
    with pytest.raises(ss.ShapeError, match=r"index i has extent 3 in A \(mode 0\) but 4 in A \(mode 1\)"):
        einsum("C[i, j] = A[i, j] + A[j, i]", A=A)


def test_a_tensor_bound_before_is_read_afresh_and_checked_against_each_kernel():
    # the kernel keeps the names-to-arrays map of a tensor it bound; the arrays' contents are read
    # at each call, and another kernel still checks the tensor's format against its own
    A = ss.Tensor.from_numpy(np.array([[1.0, 0], [0, 2]]), "csr", name="A")
    k = lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(2))
    np.testing.assert_array_equal(k(A=A, x=np.ones(2)).to_numpy(), [1.0, 2.0])
    A.vals[1] = 5.0
    np.testing.assert_array_equal(k(A=A, x=np.ones(2)).to_numpy(), [1.0, 5.0])
    other = lower("y[i] = A[i, j] * x[j]", A="csc", x=np.ones(2))
    with pytest.raises(ss.FormatError, match="tensor A is csr but this kernel was compiled for csc"):
        other(A=A, x=np.ones(2))


def test_a_kernel_called_with_positional_tensors_says_to_name_them():
    k = lower("y[i] = A[i, j] * x[j]", A="csr", x="dense")
    with pytest.raises(ss.UsageError, match=r"pass the kernel's tensors by name: kernel\(A=\.\.\., x=\.\.\., y=\.\.\.\)"):
        k(ss.Tensor.from_numpy(np.eye(2), "csr"), np.ones(2))


# --- the fill of a fresh dense output: the oracle's -----------------------------------------------


def _same_fill(a, b) -> bool:
    return bool(a == b) or (a != a and b != b)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_fresh_dense_output_of_a_reduction_has_the_oracles_fill_for_each_extent(strategy):
    # y[i] = sum[j](A[i, j]) over A of fill 2: where A holds only its fill, y holds 2 n, n the
    # extent of j, known only at the call
    def A(n):
        return ss.Tensor.from_numpy(np.where(np.eye(3, n) > 0, 5.0, 2.0), "csr", fill=2.0)
    k = ss.lower("y[i] = A[i, j]", strategy=strategy, A=A(4))
    for n in (4, 7, 0):
        y = k(A=A(n))
        want, fill = ss.evaluate("y[i] = A[i, j]", A=A(n))
        np.testing.assert_array_equal(y.to_numpy(), want)
        assert y.fill == fill == 2.0 * n and y.format == ss.dense(1, fill=2.0 * n), (n, y.format)
    s = ss.lower("s[] = max[i, j](A[i, j])", strategy=strategy, A=A(4))(A=A(4))
    assert s.fill == 2.0 and s.to_numpy() == 5.0


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_fresh_output_of_an_update_has_the_fill_of_its_start_updated_by_the_right_sides(strategy):
    A = ss.Tensor.from_numpy(np.array([[1.0, 3.0], [3.0, 3.0]]), "csr", fill=3.0)
    k = ss.lower("y[i] max= A[i, j]", strategy=strategy, A=A)
    assert k(A=A).fill == 3.0                # max(-inf, 3): the identity updated by A's fill
    y = ss.Tensor.from_numpy(np.array([0.0, 9.0]), k.formats["y"])
    got = k(A=A, y=y)                        # an output given at the call starts from it
    want, fill = ss.evaluate("y[i] max= A[i, j]", A=A, y=y)
    np.testing.assert_array_equal(got.to_numpy(), want)
    assert got.fill == fill == 3.0


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_an_output_given_a_format_keeps_its_fill(strategy):
    A = ss.Tensor.from_numpy(np.array([[1.0, 2.0], [2.0, 2.0]]), "csr", fill=2.0)
    y = ss.lower("y[i] = A[i, j]", strategy=strategy, A=A, y=ss.dense(1, fill=-1.0))(A=A)
    np.testing.assert_array_equal(y.to_numpy(), [3.0, 4.0])
    assert y.fill == -1.0



@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_tensors_given_as_arrays_or_scalars_have_the_oracles_fills(strategy):
    # the kernel binds an array to the format it was lowered for (here fill 3), but the array
    # itself says fill 0, and a scalar output is its own fill: the result's fill follows the call
    dense_A = np.array([[1.0, 3.0], [3.0, 2.0]])
    A = ss.Tensor.from_numpy(dense_A, "csr", fill=3.0)
    k = ss.lower("y[i] = A[i, j]", strategy=strategy, A=A)
    assert k(A=A).fill == 6.0
    got = k(A=dense_A)
    np.testing.assert_array_equal(got.to_numpy(), [4.0, 5.0])
    assert got.fill == ss.evaluate("y[i] = A[i, j]", A=dense_A)[1] == 0.0
    assert k(A=A).fill == 6.0                        # (the tensor's fill again)
    assert k(A=dense_A.tolist()).fill == 0.0         # (a list binds as an array)
    s = ss.lower("s[] += A[i, j]", strategy=strategy, A=A)
    for start in (5.0, np.float64(-1.0)):
        got = s(A=A, s=start)
        want, fill = ss.evaluate("s[] += A[i, j]", A=A, s=start)
        assert got.to_numpy() == want and got.fill == fill == start + 12.0


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_an_output_given_at_lowering_as_an_array_or_scalar_has_the_oracles_fill(strategy):
    # (einsum lowers with every argument: an array or scalar output says no fill, as at the call)
    A = ss.Tensor.from_numpy(np.array([[1.0, 3.0], [3.0, 2.0]]), "csr", fill=3.0)
    for program, out in [("s[] += A[i, j]", 5.0), ("y[i] += A[i, j]", np.array([1.0, 1.0])),
                         ("y[i] = A[i, j]", np.zeros(2))]:
        name = program[0]
        want, fill = ss.evaluate(program, A=A, **{name: out})
        for got in (ss.lower(program, strategy=strategy, A=A, **{name: out})(A=A, **{name: out}),
                    ss.einsum(program, strategy=strategy, A=A, **{name: out})):
            np.testing.assert_array_equal(got.to_numpy(), want)
            assert got.fill == fill and fill != 0.0, (program, got.fill, fill)
    # an output given the dense format itself keeps its fill: another kernel
    y = ss.lower("y[i] += A[i, j]", strategy=strategy, A=A, y=ss.dense(1))(A=A, y=np.array([1.0, 1.0]))
    assert y.fill == 0.0


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_fresh_output_of_an_update_has_the_updates_dtype(strategy):
    # y starts at the identity; y + b over bools counts in int64 (as the oracle's, numpy's sum)
    b = np.array([True, False, True])
    for program, dtype in [("y[i] += b[i]", "int64"), ("y[i] max= b[i]", "bool"), ("s[] += b[i]", "int64")]:
        got = ss.lower(program, strategy=strategy, b=b)(b=b)
        want, fill = ss.evaluate(program, b=b)
        assert got.dtype == want.dtype == np.dtype(dtype), program
        np.testing.assert_array_equal(got.to_numpy(), want)
        assert got.fill == fill

FRESH_PROGRAMS = ["y[i] = A[i, j] * x[j]", "y[i] = max[j](A[i, j])", "y[i] = min[j](A[i, j] + x[j])",
                  "y[j] = A[i, j]", "s[] = A[i, j]", "s[] = max[i, j](A[i, j] * 2)", "y[i] += A[i, j]",
                  "y[i] min= A[i, j] - x[j]", "Z[i, j] = A[i, j] * x[j] + 1"]


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(FRESH_PROGRAMS), st.sampled_from([0.0, 1.0, -2.0, np.inf, np.nan]),
       st.integers(0, 4), st.integers(0, 4), st.sampled_from([0.0, 0.4, 1.0]),
       st.sampled_from(["lattice", "looplets"]), st.integers(0, 2**31))
def test_a_fresh_dense_outputs_fill_is_the_oracles_under_any_fill_and_shape(program, fill, m, n, density,
                                                                             strategy, seed):
    rng = np.random.default_rng(seed)
    A = ss.Tensor.from_numpy(np.where(rng.random((m, n)) < density, rng.integers(1, 5, (m, n)), fill),
                             "csr", fill=fill)
    x = rng.random(n)
    tensors = {"A": A, "x": x} if "x[" in program else {"A": A}
    want, fill_want = ss.evaluate(program, **tensors)
    got = ss.lower(program, strategy=strategy, **tensors)(**tensors)
    np.testing.assert_allclose(got.to_numpy(), want, equal_nan=True)
    assert _same_fill(got.fill, fill_want), (got.fill, fill_want)
    # the same kernel called with A as an array: its fill is the array's, 0
    tensors["A"] = A.to_numpy()
    want, fill_want = ss.evaluate(program, **tensors)
    got = ss.lower(program, strategy=strategy, A=A, x=x)(**tensors) if "x[" in program else \
        ss.lower(program, strategy=strategy, A=A)(**tensors)
    np.testing.assert_allclose(got.to_numpy(), want, equal_nan=True)
    assert _same_fill(got.fill, fill_want), (got.fill, fill_want)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_the_fill_of_an_integer_reduction_over_no_element_is_its_dtypes_identity(strategy):
    # an int32 min over an extent of 0 is int32's largest (not int64's, wrapped)
    A = ss.Tensor.from_numpy(np.ones((2, 0), dtype="int32"), "csr", fill=1)
    for program in ["y[j] = min[k](A[j, k])", "y[j] = max[k](A[j, k])", "y[] = min[j, k](A[j, k])"]:
        want, fill = ss.evaluate(program, A=A)
        got = ss.lower(program, strategy=strategy, A=A)(A=A)
        np.testing.assert_array_equal(got.to_numpy(), want)
        assert got.fill == fill and fill in (np.iinfo(np.int32).max, np.iinfo(np.int32).min)


def test_a_loop_program_is_lowered_with_looplets_by_default():
    """Issue 28 item 9: a loop program given no strategy raised AttributeError ('LoopProgram' object
    has no attribute 'rhs') in the lattice strategy; loop programs use looplets, and the trace says so."""
    from compiler.looplets import loop_program

    @loop_program
    def copy(a, b):
        for i in _:
            a[i] = b[i] * 2

    b = np.array([3.0, 0, 4, 0, 2])
    kernel = lower(copy, a="dense", b=b)
    assert kernel.strategy == "looplets"
    assert kernel.trace.steps[0].stage == "strategy" and "looplets" in kernel.trace.steps[0].note
    np.testing.assert_array_equal(kernel(b=b).to_numpy(), b * 2)
    # index notation keeps the lattice strategy by default
    assert lower("a[i] = b[i] * 2", a="dense", b=b).strategy == "lattice"


def test_a_loop_program_given_the_lattice_strategy_is_refused_naming_looplets():
    from compiler.looplets import loop_program

    @loop_program
    def copy(a, b):
        for i in _:
            a[i] = b[i]

    with pytest.raises(ss.StrategyError, match="strategy='looplets'"):
        lower(copy, strategy="lattice", a="dense", b=np.ones(3))


def test_a_kernel_lowered_for_a_spec_naming_no_dtype_takes_a_tensor_built_from_that_spec():
    # (the spec's Element has no dtype: the kernel reads float64, as the tensor built from it holds)
    from compiler.levels import Dense, Element, SparseList
    spec = ss.Format(Dense(SparseList(Element(0.0))))
    kernel = ss.lower("y[i] = sum[j](A[i, j])", A=spec)
    A = ss.Tensor.from_numpy(np.eye(3), spec)
    np.testing.assert_array_equal(kernel(A=A).to_numpy(), [1.0, 1.0, 1.0])
    # another value dtype is refused, and the message says which dtype each holds
    with pytest.raises(ss.FormatError, match=r"dtype='int64'.*compiled for Dense\(SparseList\(Element\(0.0\)\)\)"):
        kernel(A=ss.Tensor.from_numpy(np.eye(3, dtype=np.int64), spec))


def test_formats_differing_only_in_a_dtype_their_spelling_leaves_out_are_told_apart():
    from compiler.levels import Dense, Element
    kernel = ss.lower("y[i] = A[i] * 2", A=ss.Format(Dense(Element(0.0, dtype="float32"))))
    with pytest.raises(ss.FormatError, match="float32"):
        kernel(A=ss.Tensor.from_numpy(np.arange(3.0), ss.Format(Dense(Element(0.0)))))
