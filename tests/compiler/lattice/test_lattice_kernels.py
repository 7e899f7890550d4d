"""End-to-end kernels of the lattice strategy, each compared with the dense oracle (and scipy)."""

import math
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, evaluate, lower, user_function
from compiler.errors import DTypeError, FormatError, StrategyError, UsageError, UserCodeError
from compiler.format import coo, csc, csf, csr, dcsr, dense, sparse_vector
from compiler.lattice import Schedule

inf = math.inf
MASK = user_function("mask", lambda v, m: 0.0 if m else v, "return y ? 0.0 : x;", algebra="x & !y",
                     dtype="float64")


def rand(shape, density, rng, fill=0.0, dtype=float, lo=1, hi=6, empty_rows=True):
    a = rng.integers(lo, hi, size=shape).astype(dtype)
    a[rng.random(shape) >= density] = fill
    if empty_rows and len(shape) == 2 and shape[0] > 2:
        a[1] = fill  # an empty row
    return a


def run(prog, inputs, out=None, functions=None):
    """Lower, run, and compare with the oracle; return the kernel and the result."""
    kw = dict(inputs)
    if out is not None:
        kw[prog.split("[")[0].split("=")[0].strip()] = out
    k = lower(prog, functions=functions, **kw)
    res = k(**inputs)
    want, _ = evaluate(prog, functions=functions, **inputs)
    np.testing.assert_allclose(res.to_numpy(), want, equal_nan=True)
    if out is not None and not all(lvl.name == "Dense" for lvl in res.levels):
        stored = res.vals
        assert not np.any(stored == res.fill), "a value equal to the fill was stored"
    return k, res


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.mark.parametrize("fmt", [csr(), csc(), coo(), dcsr()], ids=["csr", "csc", "coo", "dcsr"])
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_spmv(fmt, density, rng):
    A = rand((7, 9), density, rng)
    x = rng.random(9)
    At = Tensor.from_numpy(A, fmt, name="A")
    k, y = run("y[i] = A[i, j] * x[j]", {"A": At, "x": x})
    np.testing.assert_allclose(y.to_numpy(), sp.csr_matrix(A) @ x)


def test_spmv_empty_tensor(rng):
    At = Tensor.from_numpy(np.zeros((0, 4)), csr(), name="A")
    run("y[i] = A[i, j] * x[j]", {"A": At, "x": np.ones(4)})
    At = Tensor.from_numpy(np.zeros((3, 0)), dcsr(), name="A")
    run("y[i] = A[i, j] * x[j]", {"A": At, "x": np.ones(0)})


@pytest.mark.parametrize("fmt", [csr, csc, dense])
def test_an_empty_int_max_into_a_float_output_starts_at_the_ints_identity(fmt):
    # whether the loops reduce in a temporary (rows) or into the output (columns), an empty max
    # of int64 values is INT64_MIN, as the oracle has it, then converted to the output's float64
    A = Tensor.from_numpy(np.zeros((3, 0), np.int64), fmt(dtype="int64", fill=0), name="A")
    x = Tensor.from_numpy(np.zeros(0, np.int64), sparse_vector(dtype="int64", fill=0), name="x")
    _, res = run("y[i] = max[j](A[i, j] * x[j])", {"A": A, "x": x}, out=dense(1))
    assert (res.to_numpy() == float(np.iinfo(np.int64).min)).all()


def test_spmspv_into_sparse(rng):
    A = Tensor.from_numpy(rand((8, 6), 0.4, rng), dcsr())
    x = Tensor.from_numpy(rand((6,), 0.5, rng), sparse_vector())
    run("y[i] = A[i, j] * x[j]", {"A": A, "x": x}, out=sparse_vector())


@pytest.mark.parametrize("op", ["+", "*"])
def test_sparse_vectors(op, rng):
    b, c = (Tensor.from_numpy(rand((20,), 0.4, rng), sparse_vector()) for _ in range(2))
    run(f"a[i] = b[i] {op} c[i]", {"b": b, "c": c}, out=sparse_vector())
    run(f"a[i] = b[i] {op} c[i]", {"b": b, "c": c})


def test_b_times_c_plus_d(rng):
    t = {n: Tensor.from_numpy(rand((30,), 0.4, rng), sparse_vector()) for n in "bcd"}
    k, a = run("a[i] = b[i] * (c[i] + d[i])", t, out=sparse_vector())
    step = k.trace.find("lattice")[0]
    pts = [line.split("]")[0] + "]" for line in step.artifacts[0].text.splitlines()[1:4]]
    assert pts == ["[b c d | ]", "[b c | ]", "[b d | ]"]
    assert len(k.trace.find("lattice")[0].artifact("lattice").text.split("loops:")[1].strip().splitlines()) == 3


@pytest.mark.parametrize("op", ["+", "*"])
@pytest.mark.parametrize("fmt", [csr(), dcsr(), coo()], ids=["csr", "dcsr", "coo"])
def test_matrix_elementwise_into_sparse(op, fmt, rng):
    A, B = rand((9, 11), 0.3, rng), rand((9, 11), 0.3, rng)
    t = {"A": Tensor.from_numpy(A, fmt), "B": Tensor.from_numpy(B, fmt)}
    k, C = run(f"C[i, j] = A[i, j] {op} B[i, j]", t, out=fmt)
    ref = sp.csr_matrix(A) + sp.csr_matrix(B) if op == "+" else sp.csr_matrix(A).multiply(sp.csr_matrix(B))
    np.testing.assert_allclose(C.to_numpy(), ref.toarray())


def test_csr_plus_csr_cancelling_values_are_not_stored(rng):
    A = rand((6, 6), 0.5, rng)
    t = {"A": Tensor.from_numpy(A, csr()), "B": Tensor.from_numpy(-A, csr())}
    k, C = run("C[i, j] = A[i, j] + B[i, j]", t, out=csr())
    assert C.nnz == 0


@pytest.mark.parametrize("red", ["sum", "min", "max"])
def test_reductions(red, rng):
    b = Tensor.from_numpy(rand((15,), 0.4, rng, lo=-5), sparse_vector())
    run(f"s = {red}[i](b[i])", {"b": b})
    B = Tensor.from_numpy(rand((6, 8), 0.4, rng, lo=-5), dcsr())
    run(f"y[i] = {red}[j](B[i, j])", {"B": B})
    allfill = Tensor.from_numpy(np.zeros(5), sparse_vector())
    run(f"s = {red}[i](b[i])", {"b": allfill})
    # the values alone: the kernel takes no coordinates it never reads
    k, _ = run(f"s = {red}[i, j](B[i, j])", {"B": B})
    assert "B1_idx" not in k.c_source and "B1_idx" not in {p.name for p in k.function.params}


def test_reduction_with_non_identity_fill(rng):
    b = Tensor.from_numpy(rand((9,), 0.4, rng, fill=2.0), sparse_vector(fill=2.0))
    run("s = sum[i](b[i])", {"b": b})
    run("s = min[i](b[i])", {"b": b})


def test_xor_with_non_zero_fills(rng):
    b = Tensor.from_numpy(rand((20,), 0.4, rng, fill=3, dtype=np.int64), sparse_vector(fill=3, dtype="int64"))
    c = Tensor.from_numpy(rand((20,), 0.4, rng, fill=5, dtype=np.int64), sparse_vector(fill=5, dtype="int64"))
    k, a = run("a[i] = b[i] ^ c[i]", {"b": b, "c": c})
    assert a.fill == 6
    k, a = run("a[i] = b[i] ^ c[i]", {"b": b, "c": c}, out=sparse_vector(fill=6, dtype="int64"))


def test_ldexp_with_non_zero_fills(rng):
    b = Tensor.from_numpy(rand((20,), 0.4, rng, fill=1.0), sparse_vector(fill=1.0))
    c = Tensor.from_numpy(rand((20,), 0.4, rng, fill=2, dtype=np.int64), sparse_vector(fill=2, dtype="int64"))
    run("a[i] = ldexp(b[i], c[i])", {"b": b, "c": c})
    run("a[i] = ldexp(b[i], c[i])", {"b": b, "c": c}, out=sparse_vector(fill=4.0))


@pytest.mark.parametrize("out_fill", [1.0, 0.0])
def test_pow_with_non_zero_result_fill(out_fill, rng):
    b = Tensor.from_numpy(rand((20,), 0.4, rng), sparse_vector())
    c = Tensor.from_numpy(rand((20,), 0.4, rng), sparse_vector())
    run("a[i] = pow(b[i], c[i])", {"b": b, "c": c})
    run("a[i] = pow(b[i], c[i])", {"b": b, "c": c}, out=sparse_vector(fill=out_fill))
    bi = Tensor.from_numpy(rand((20,), 0.4, rng, fill=2, dtype=np.int64), sparse_vector(fill=2, dtype="int64"))
    ci = Tensor.from_numpy(rand((20,), 0.4, rng, fill=3, dtype=np.int64), sparse_vector(fill=3, dtype="int64"))
    run("a[i] = pow(b[i], c[i])", {"b": bi, "c": ci})


@pytest.mark.parametrize("x_fmt", [dense(1, fill=inf), sparse_vector(fill=inf)], ids=["dense", "sparse"])
def test_min_plus_matrix_vector(x_fmt, rng):
    A = Tensor.from_numpy(rand((7, 8), 0.3, rng, fill=inf), csr(fill=inf))
    x = Tensor.from_numpy(rand((8,), 0.5, rng, fill=inf), x_fmt)
    k, y = run("y[i] = min[j](A[i, j] + x[j])", {"A": A, "x": x})
    assert y.fill == inf
    run("y[i] = min[j](A[i, j] + x[j])", {"A": A, "x": x}, out=sparse_vector(fill=inf))


@pytest.mark.parametrize("m_fmt", [dense(1, fill=False, dtype="bool"), sparse_vector(fill=False, dtype="bool")],
                         ids=["dense-mask", "sparse-mask"])
def test_masked_update_with_complement(m_fmt, rng):
    """``y[i] = A[i, j] * x[j] where !m[i]`` is written ``y[i] = mask(A[i, j] * x[j], m[i])``.

    ``mask(v, m)`` is a user function with the explicit algebra ``v & !m``: compute only
    where m is not set. The lattice at i has an omitter at ``A ∩ m``.
    """
    A = Tensor.from_numpy(rand((9, 7), 0.4, rng), csr())
    x = rng.random(7)
    m = Tensor.from_numpy(rng.random(9) < 0.4, m_fmt)
    k, y = run("y[i] = mask(A[i, j] * x[j], m[i])", {"A": A, "x": x, "m": m}, functions={"mask": MASK})
    assert "omit" in k.trace.find("lattice")[0].artifacts[0].text
    np.testing.assert_allclose(y.to_numpy(), np.where(m.to_numpy(), 0.0, A.to_numpy() @ x))
    # the omitted case tests the others' condition: no branch that only holds a comment
    assert "// omitted: A ∩ m\n" in k.c_source and "} else {" not in k.c_source
    assert re.search(r"if \((!\(.*\)|m_val\[i\] == false)\) \{", k.c_source)
    run("y[i] = mask(A[i, j] * x[j], m[i])", {"A": A, "x": x, "m": m}, out=sparse_vector(),
        functions={"mask": MASK})


def test_ttv_and_mttkrp_on_csf(rng):
    B = Tensor.from_numpy(rand((4, 5, 6), 0.3, rng), csf())
    c = Tensor.from_numpy(rand((6,), 0.5, rng), sparse_vector())
    run("A[i, j] = B[i, j, k] * c[k]", {"B": B, "c": c})
    C, D = rng.random((5, 3)), rng.random((6, 3))
    k, A = run("A[i, l] = B[i, j, k] * C[j, l] * D[k, l]", {"B": B, "C": C, "D": D})
    assert [s.note for s in k.trace.find("iteration-graph")][0].startswith("loop order i, j, k, l")


def test_dense_plus_sparse_keeps_the_loop_alive(rng):
    b = rng.random(10)
    c = Tensor.from_numpy(rand((10,), 0.3, rng), sparse_vector())
    k, a = run("a[i] = b[i] + c[i]", {"b": b, "c": c})
    assert k.c_source.count("while") == 2


def test_trace_steps_and_artifacts(rng):
    k = lower("y[i] = A[i, j] * x[j]", A=csr(), x=dense(1))
    stages = k.trace.stages()
    for s in ("parse", "concretize", "iteration-graph", "lattice", "cfir", "lower", "emit-c", "compile"):
        assert s in stages
    g = k.trace.find("iteration-graph")[0].artifact("iteration-graph")
    assert g.dot.startswith("digraph") and "A[i, j]" in g.text
    assert k.trace.find("lattice")[0].artifact("lattice").dot.startswith("digraph lattice")
    from compiler.trace import Trace
    assert Trace.from_json(k.trace.to_json()).stages() == stages


def test_generated_c_is_readable():
    k = lower("C[i, j] = A[i, j] + B[i, j]", A=csr(), B=csr(), C=csr())
    src = k.c_source
    for name in ("pA1", "pB1", "jA", "jB", "pC1"):
        assert name in src
    assert "if (jA == jB) {" in src and "} else if (jA < jB) {" in src and "pB1 += 1;" in src
    # room is reserved up front, so appends are branch-free
    assert "pC1 += (int64_t)(vC != 0.0);" in src
    body = src[src.index("lattice_C("):]
    assert "\n    for (int64_t i = 0; i < A0_size; i++) {\n        int64_t pC1_begin = pC1;" in body


def test_errors_name_the_problem():
    # reading B as CSC would let the loops run i, j, but the fused loop cannot append to C
    with pytest.raises(StrategyError, match=r"j before i \(from B\[j, i\]\); i before j \(from C\[i, j\], "
                                            r"A\[i, j\]\)\. Tensors A\[i, j\], B\[j, i\], C\[i, j\] disagree.*"
                                            r"\(reading B as csc would remove the disagreement, but then: schedule: "
                                            r"fuse\(i, j, f\) does not apply: .*C is sparse\)"):
        lower("C[i, j] = A[i, j] + B[j, i]", A=csr(), B=csr(), C=csr(),
              options={"schedule": [("fuse", "i", "j", "f")]})
    with pytest.raises(DTypeError, match="\\^"):
        lower("a[i] = b[i] ^ c[i]", b=sparse_vector(), c=sparse_vector())
    with pytest.raises(StrategyError, match="output index k"):
        lower("A[i, k] = B[i, j]", B=csr())


@pytest.mark.parametrize("out, converted, first", [
    (dense(2), "B", "(from C[j, i]); i before j (from B[i, j])"),   # a dense A takes either order: B, the first
    (csr(), "C", "(from C[j, i]); i before j (from A[i, j], B[i, j])"),
    (coo(), "C", "(from C[j, i]); i before j (from A[i, j], B[i, j])")], ids=["dense", "csr", "coo"])
def test_an_input_no_loop_order_reads_in_storage_order_is_converted(out, converted, first):
    # taco.md E17: B[i, j] + C[j, i] with both CSR has no concordant loop order; the kernel reads one
    # of them as CSC, converted at each call, and says so in the trace
    rng = np.random.default_rng(3)
    b, c = rand((5, 6), 0.4, rng), rand((6, 5), 0.4, rng)
    B, C = Tensor.from_numpy(b, csr(), name="B"), Tensor.from_numpy(c, csr(), name="C")
    k = lower("A[i, j] = B[i, j] + C[j, i]", B=B, C=C, A=out)
    (step,) = k.trace.find("convert")
    assert step.note == (f"{converted} is csr: no loop order visits every tensor in storage order: j before i "
                         f"{first}; the kernel reads {converted} as csc, converted before each call "
                         f"({converted}.asformat, a counting sort, O(nnz + extent))")
    as_csc = {**dict(B=B, C=C), converted: {"B": B, "C": C}[converted].asformat(csc())}
    for kw in (dict(B=B, C=C), dict(B=b, C=c), as_csc):
        np.testing.assert_allclose(k(**kw).to_numpy(), b + c.T)
    np.testing.assert_allclose(k.interpret(B=B, C=C).to_numpy(), b + c.T)
    assert B.format == C.format == csr()   # the caller's tensors are not changed
    with pytest.raises(FormatError, match=f"tensor {converted} is coo but this kernel was compiled for csr"):
        k(**{**dict(B=B, C=C), converted: {"B": B, "C": C}[converted].asformat(coo())})


@pytest.mark.parametrize("out", [csr(), dense(2), coo()], ids=["csr", "dense", "coo"])
def test_a_tensor_read_in_two_orders_is_also_read_as_a_converted_copy(out):
    # A + A^T: no conversion of B reads both B[i, j] and B[j, i] in storage order; the kernel
    # reads B[j, i] from B_csc, a copy of B converted at each call
    rng = np.random.default_rng(11)
    b = rand((6, 6), 0.4, rng)
    B = Tensor.from_numpy(b, csr(), name="B")
    k = lower("A[i, j] = B[i, j] + B[j, i]", B=B, A=out)
    (step,) = k.trace.find("convert")
    assert str(step.after) == "A[i, j] = B[i, j] + B_csc[j, i]"
    assert step.note.endswith("the kernel reads B[j, i] from B_csc, a copy of B in csc, converted before each call "
                              "(B.asformat, a counting sort, O(nnz + extent))")
    assert k.lowered.copies == (("B_csc", "B"),) and "B_csc" in k.c_source
    for run in (k, k.interpret, lower("A[i, j] = B[i, j] + B[j, i]", B=B, A=out, checked=True)):
        for given in (B, b):
            A = run(B=given)
            assert A.format == out
            np.testing.assert_allclose(A.to_numpy(), b + b.T)
    assert B.format == csr()
    with pytest.raises(UsageError, match="this kernel has no tensor B_csc; it takes B, A"):
        k(B=B, B_csc=B.asformat(csc()))
    # a name taken by another tensor is not reused
    c = rand((6, 6), 0.3, rng)
    k = lower("A[i, j] = B[i, j] * B[j, i] + B_csc[i, j]", B=B, B_csc=Tensor.from_numpy(c, csr()), A=out)
    assert k.lowered.copies == (("B_csc2", "B"),)
    np.testing.assert_allclose(k(B=B, B_csc=c).to_numpy(), b * b.T + c)


def test_reads_in_one_order_share_a_copy_and_each_other_order_gets_its_own(rng):
    b = rand((5, 5), 0.5, rng)
    k = lower("A[i, j] = B[i, j] * B[j, i] + B[j, i]", B=Tensor.from_numpy(b, csr(), name="B"), A=csr())
    assert str(k.trace.find("convert")[0].after) == "A[i, j] = B[i, j] * B_csc[j, i] + B_csc[j, i]"
    np.testing.assert_allclose(k(B=b).to_numpy(), b * b.T + b.T)
    t = rand((4, 4, 4), 0.5, rng)
    prog = "s = sum[i, j, k](T[i, j, k] * T[j, k, i] * T[k, i, j])"
    k = lower(prog, T=Tensor.from_numpy(t, csf(3), name="T"))
    assert k.lowered.copies == (("T_201", "T"), ("T_120", "T"))
    assert str(k.trace.find("convert")[0].after) == "s[] = sum[i, j, k](T[i, j, k] * T_201[j, k, i] * T_120[k, i, j])"
    np.testing.assert_allclose(k(T=t).to_numpy(), evaluate(prog, T=t)[0])


@pytest.mark.parametrize("prog, converted", [("C[i, j] = A[i, k] * B[j, k]", "B"),
                                              ("C[i, j] = A[i, k] * A[j, k]", "A_csc")])
def test_an_inner_product_reads_an_operand_converted(prog, converted):
    # A B^T (or A A^T), all CSR: loops i, j, k would visit every (i, j) pair, n * m merges of
    # two rows however sparse C is; with B (or a copy of A) read as CSC, the loops run i, k, j
    # (Gustavson, a workspace over j)
    rng = np.random.default_rng(13)
    a, b = rand((7, 5), 0.4, rng), rand((6, 5), 0.4, rng)
    tensors = {"A": Tensor.from_numpy(a, csr(), name="A"), "B": Tensor.from_numpy(b, csr(), name="B")}
    tensors = {t: v for t, v in tensors.items() if f"{t}[" in prog}
    k = lower(prog, C=csr(), **tensors)
    (step,) = k.trace.find("convert")
    assert "reduces over k: C would be computed pair by pair over all (i, j), an inner product" in step.note
    assert [name for name, _ in k.lowered.conversions] == [converted]
    assert k.trace.find("iteration-graph")[0].note.startswith("loop order i, k, j")
    want = a @ (b if "B" in prog else a).T
    for run in (k, k.interpret):
        np.testing.assert_allclose(run(**tensors).to_numpy(), want)
    # the loop order given is kept: the inner product, no conversion
    k = lower(prog, C=csr(), options={"order": ["i", "j", "k"]}, **tensors)
    assert not k.trace.find("convert") and not k.lowered.conversions
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)
    # a dense output too: each pair would merge a row of A with a row of B (reading A as CSC, the
    # loops run j, k, i: C by columns, as good)
    k = lower(prog, C=dense(2), **tensors)
    assert len(k.lowered.conversions) == 1 and not k.trace.find("iteration-graph")[0].note.startswith("loop order i, j")
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)


def test_a_given_loop_order_takes_the_conversion_that_makes_the_formats_agree(rng):
    # k, i, j reads B (DCSR) in order; A (CSR) disagrees with it, and read as CSC it agrees: the
    # outer product the order asks for gathers C in a workspace, as the user chose
    a, b = rand((5, 4), 0.4, rng), rand((4, 6), 0.4, rng)
    tensors = {"A": Tensor.from_numpy(a, csr(), name="A"), "B": Tensor.from_numpy(b, dcsr(), name="B")}
    k = lower("C[i, j] = B[k, i] * A[j, k]", C=coo(), options={"order": ["k", "i", "j"]}, **tensors)
    assert [(t, f.shorthand) for t, f in k.lowered.conversions] == [("A", "csc")]
    np.testing.assert_allclose(k(**tensors).to_numpy(), b.T @ a.T)


def test_a_converted_format_with_no_short_name_is_named_by_its_mode_order(rng):
    a = rand((5, 5), 0.4, rng)
    k = lower("C[i, j] = A[i, j] + A[j, i]", A=Tensor.from_numpy(a, dcsr(), name="A"), C=dcsr())
    assert "the kernel reads A[j, i] from A_10, a copy of A in dcsr in mode order 1, 0, converted before each " \
        "call (A.asformat, a sort of its entries, O(nnz log nnz))" in k.trace.find("convert")[0].note
    np.testing.assert_allclose(k(A=a).to_numpy(), a + a.T)


FORMATS_2D = {"csr": csr, "csc": csc, "dcsr": dcsr, "coo": coo, "dense": lambda: dense(2)}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(orders=st.lists(st.booleans(), min_size=4, max_size=4),
       names=st.lists(st.sampled_from("BC"), min_size=3, max_size=3),
       ops=st.lists(st.sampled_from("+*"), min_size=2, max_size=2),
       fmts=st.lists(st.sampled_from(sorted(FORMATS_2D)), min_size=3, max_size=3),
       n=st.integers(0, 5), density=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 2**16))
def test_any_access_orders_agree_with_the_oracle(orders, names, ops, fmts, n, density, seed):
    """Accesses in any mode order, a tensor possibly read in both: compiled (with the conversions
    and copies it needs), interpreted and oracle results agree, in the output format asked for."""
    rng = np.random.default_rng(seed)
    acc = [f"{t}[{'j, i' if flip else 'i, j'}]" for t, flip in zip(names, orders)]
    out = f"A[{'j, i' if orders[3] else 'i, j'}]"
    prog = f"{out} = {acc[0]} {ops[0]} {acc[1]} {ops[1]} {acc[2]}"
    arrays = {t: rand((n, n), density, rng) for t in set(names)}
    tensors = {t: Tensor.from_numpy(a, FORMATS_2D[f](), name=t) for (t, a), f in zip(sorted(arrays.items()), fmts)}
    k = lower(prog, A=FORMATS_2D[fmts[2]](), **tensors)
    want, _ = evaluate(prog, **arrays)
    for result in (k(**tensors), k.interpret(**tensors)):
        assert result.format == FORMATS_2D[fmts[2]]()
        result.validate()
        np.testing.assert_allclose(result.to_numpy(), want)


def test_the_fewest_tensors_are_converted():
    # loop i, j reads B and E in storage order and C, D against it; loop j, i would convert B, E and
    # the CSR output: the kernel converts C and D
    rng = np.random.default_rng(7)
    arrays = {t: rand((5, 6) if t in "BE" else (6, 5), 0.4, rng) for t in "BCDE"}
    tensors = {t: Tensor.from_numpy(a, csr(), name=t) for t, a in arrays.items()}
    k = lower("A[i, j] = B[i, j] + C[j, i] + D[j, i] + E[i, j]", A=csr(), **tensors)
    assert [s.note.split(":")[0] for s in k.trace.find("convert")] == ["C is csr", "D is csr"]
    assert [name for name, _ in k.lowered.conversions] == ["C", "D"]
    expected = arrays["B"] + arrays["C"].T + arrays["D"].T + arrays["E"]
    for run in (k, k.interpret):
        A = run(**tensors)
        assert A.format == csr()
        np.testing.assert_allclose(A.to_numpy(), expected)
    # a given loop order decides which: j, i converts B, E and builds A as CSC
    k = lower("A[i, j] = B[i, j] + C[j, i] + D[j, i] + E[i, j]", A=csr(), options={"order": ["j", "i"]}, **tensors)
    assert [name for name, _ in k.lowered.conversions] == ["B", "E", "A"]
    np.testing.assert_allclose(k(**tensors).to_numpy(), expected)


@pytest.mark.parametrize("out", [coo(), dcsr()], ids=["coo", "dcsr"])
def test_an_output_no_loop_order_appends_is_converted_or_scattered(out):
    # C[j, i] = A[i, j] + B[i, j], all CSR: the loops run i, j as A and B are stored; a COO C is built
    # with j inside (as CSC) and converted to the format asked for after each call; a DCSR C is
    # scattered, its rows filled as a CSR's, those holding entries listed after (as a CSR C is:
    # test_lattice_output_scatter.py)
    rng = np.random.default_rng(5)
    a, b = rand((5, 6), 0.4, rng), rand((5, 6), 0.4, rng)
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k = lower("C[j, i] = A[i, j] + B[i, j]", A=A, B=B, C=out)
    if out.shorthand == "dcsr":
        assert not k.trace.find("convert") and not k.lowered.conversions and "next slot" in k.trace.find(
            "output-order")[0].note
    else:
        (step,) = k.trace.find("convert")
        assert step.note.startswith(f"C is {out.shorthand}: no loop order visits every tensor in storage order: i "
                                    f"before j (from A[i, j], B[i, j]); j before i (from C[j, i]); the kernel builds C as ")
        assert f"converted to {out.shorthand} after each call" in step.note
    for run in (k, k.interpret):
        C = run(A=A, B=B)
        assert C.format == out
        C.validate()
        np.testing.assert_allclose(C.to_numpy(), (a + b).T)


def test_kernels_are_cached():
    k1 = lower("a[i] = b[i] * c[i]", b=sparse_vector(), c=sparse_vector())
    k2 = lower("a[i] = b[i] * c[i]", b=sparse_vector(), c=sparse_vector())
    assert k1 is k2


def test_interpreted_ir_agrees(rng):
    A = Tensor.from_numpy(rand((6, 7), 0.4, rng), dcsr())
    B = Tensor.from_numpy(rand((6, 7), 0.4, rng), dcsr())
    k = lower("C[i, j] = A[i, j] + B[i, j]", A=A, B=B, C=dcsr())
    np.testing.assert_allclose(k.interpret(A=A, B=B).to_numpy(), k(A=A, B=B).to_numpy())


@pytest.mark.parametrize("out", [coo(), csr(), dcsr()], ids=["coo", "csr", "dcsr"])
@pytest.mark.parametrize("m, n", [(5, 5), (9, 30), (0, 4), (40, 1)])
def test_an_outer_product_reserves_room_per_row(out, m, n):
    """z's fiber is visited once per i: its length bounds one row's entries, not the output's
    (the room reserved up front held 16 entries of a 25-entry COO result, found by fuzzing)."""
    from compiler.testing import check_lowered
    x = Tensor.from_numpy(np.arange(1.0, m + 1), "sparse_vector", name="x")
    z = Tensor.from_numpy(np.arange(1.0, n + 1), "sparse_vector", name="z")
    k = check_lowered("C[i, j] = x[i] * z[j]", out=out, checked=True, x=x, z=z)
    assert k(x=x, z=z).nnz == m * n


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_and_bool_min_max_start_at_their_own_identity(dtype):
    """min over integers starts at the dtype's largest value, not inf cast to an integer."""
    from compiler.testing import check_lowered
    v = np.array([0, -2, 0, 3]).astype(dtype)
    for fmt in ("dense", sparse_vector(dtype=dtype, fill=v.dtype.type(0))):
        b = Tensor.from_numpy(v, fmt, name="b")
        for prog in ("s = min[i](b[i])", "s = max[i](b[i])", "y[i] = min[j](b[j] * b[i])"):
            check_lowered(prog, checked=True, b=b)
    empty = Tensor.from_numpy(np.zeros(0, dtype), sparse_vector(dtype=dtype), name="b")
    got = lower("s = min[i](b[i])", b=empty)(b=empty).to_numpy()
    assert got == (np.iinfo(dtype).max if dtype != "bool" else True)
    assert "INFINITY" not in lower("s = min[i](b[i])", b=empty).c_source


def test_a_bool_literal_is_no_identity_of_an_integer_operator():
    """max(b > 0, c) with c int64: False is max's identity over bools only (the lattice was
    refused as unsound); b & true over int64 is b & 1."""
    from compiler.testing import check_lowered
    b = Tensor.from_numpy(np.array([0, 3, 2]), "sparse_vector", name="b")
    np.testing.assert_array_equal(check_lowered("a[i] = b[i] & true", b=b)(b=b).to_numpy(), [0, 1, 0])
    c = Tensor.from_numpy(np.array([3, 0, -4]), "sparse_vector", name="c")
    b2 = Tensor.from_numpy(np.array([0, 3, 0]), "sparse_vector", name="b")
    np.testing.assert_array_equal(check_lowered("a[i] = max(b[i] > 0, c[i])", b=b2, c=c)(b=b2, c=c).to_numpy(),
                                  [3, 1, 0])
    check_lowered("a[i] = min(c[i] > 0, b[i])", b=b2, c=c)


def test_float32_cases_may_round_differently_from_the_whole_expression():
    """The lattice check compares a case (its fills folded, perhaps in float64) with the float32
    expression up to float32 rounding instead of refusing the kernel."""
    from compiler.testing import check_lowered
    c = Tensor.from_numpy(np.array([1.0, 0.0, 3.0], np.float32), sparse_vector(dtype="float32"), name="c")
    d = Tensor.from_numpy(np.array([3.0, -1.0, -1.0], np.float32), sparse_vector(dtype="float32", fill=-1.0),
                          name="d")
    check_lowered("a[i] = c[i] - d[i] / (d[i] - c[i])", checked=True, c=c, d=d)
    check_lowered("a[i] = pow(c[i] + 1.1, d[i])", c=c, d=d)
    # a float64 result of float32 operands: the division rounds in float32 before 2.0 widens it
    d3 = Tensor.from_numpy(np.array([3.0, 3.0, 3.0], np.float32), sparse_vector(dtype="float32", fill=3.0), name="d")
    check_lowered("a[i] = c[i] / d[i] * 2.0", c=c, d=d3)
    e = Tensor.from_numpy(np.array([1.0, 2.0], np.float32), sparse_vector(dtype="float32", fill=2.0), name="e")
    check_lowered("a[i] = sqrt(e[i]) * f[i]", e=e, f=Tensor.from_numpy(np.array([1.5, 0.0]), sparse_vector(), name="f"))


@pytest.mark.parametrize("prog", ["c[i] max= a[i]", "c[i] min= a[i]", "c[i] *= a[i]", "y[i] max= A[i, j]"])
def test_a_fresh_output_of_an_update_starts_at_the_identity(prog):
    """``c[i] max= a[i]`` without a given c starts from max's identity, as the oracle does (it
    started from the fill 0, so a negative entry came out 0)."""
    from compiler.testing import check_lowered
    a = Tensor.from_numpy(np.array([-1.0, 2.0, 0.0]), sparse_vector(), name="a")
    A = Tensor.from_numpy(np.array([[-1.0, 0.0, -3.0], [0.0, 0.0, 0.0], [-2.0, -1.0, -5.0]]), csr(), name="A")
    k = check_lowered(prog, checked=True, **({"A": A} if "A" in prog else {"a": a}))
    if prog == "c[i] max= a[i]":
        np.testing.assert_array_equal(k(a=a).to_numpy(), [-1.0, 2.0, 0.0])
    # an output format with another fill changes nothing, whatever the input's fill
    for fill in (0.0, -2.0, -np.inf):
        b = Tensor.from_numpy(np.array([1.0, -3.0, 2.0]), dense(1, fill=fill), name="a")
        for out_fill in (1.0, -2.0):
            if "A" not in prog:
                check_lowered(prog, out=dense(1, fill=out_fill), a=b)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr", "dense"])
@pytest.mark.parametrize("prog", ["y[i] += A[i, j] * x[j]", "y[i] max= A[i, j]", "y[i] *= A[i, j] + 1",
                                  "y[i] min= A[i, j] - x[j]", "s += A[i, j] * x[j]", "s max= A[i, j]"])
def test_an_update_of_a_given_output_starts_from_its_values(prog, fmt):
    """``y[i] += A[i, j] * x[j]`` adds into the given y: the row's sum, promoted to a scalar, is added
    to y[i], not assigned (a row-major A gave A x, dropping y; found by fuzzing)."""
    from compiler.testing import check_lowered
    fmts = {"csr": csr(), "csc": csc(), "coo": coo(2), "dcsr": dcsr(), "dense": dense(2)}
    A = Tensor.from_numpy(np.array([[1.0, 0, -2], [0, 0, 0], [3, 4, 0], [0, -5, 0]]), fmts[fmt], name="A")
    x = np.array([1.0, 2.0, -1.0])
    out = {"y": Tensor.from_numpy(np.array([4.0, -2.0, 5.0, 0.5]), dense(1), name="y")} if prog[0] == "y" \
        else {"s": np.array(10.0)}
    tensors = {"A": A, **({"x": x} if "x[" in prog else {}), **out}
    k = check_lowered(prog, checked=True, **tensors)
    want = {"y[i] += A[i, j] * x[j]": [7.0, -2.0, 16.0, -9.5], "y[i] max= A[i, j]": [4.0, 0.0, 5.0, 0.5],
            "y[i] *= A[i, j] + 1": [-8.0, -2.0, 100.0, -2.0], "y[i] min= A[i, j] - x[j]": [-2.0, -2.0, 1.0, -7.0],
            "s += A[i, j] * x[j]": 14.0, "s max= A[i, j]": 10.0}[prog]
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)


def test_reading_the_output_suggests_an_update():
    with pytest.raises(StrategyError, match=r"output y is also read on the right-hand side; the lattice strategy "
                                            r"writes a fresh output. To combine y's values with the rest, write an "
                                            r"update, which starts from them: y\[i\] \+= \.\.\."):
        lower("y[i] = y[i] + A[i, j] * x[j]", A=csr(), x=dense(1), y=dense(1))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["+=", "max=", "min=", "*="]), st.sampled_from(["y[i] {op} A[i, j] * x[j]",
                                                                      "y[j] {op} A[i, j] + x[i]", "s {op} A[i, j]",
                                                                      "y[i] {op} sum[j](A[i, j]) + x[i]"]),
       st.sampled_from(["csr", "csc", "coo", "dcsr", "dense"]), st.sampled_from([0.0, 1.0]),
       st.integers(0, 5), st.integers(0, 5), st.sampled_from([0.0, 0.4, 1.0]), st.booleans(), st.integers(0, 2 ** 16))
def test_property_updates_of_given_outputs(op, form, fa, fill, m, n, density, parallel, seed):
    from compiler.testing import check_lowered, random_sparse
    rng = np.random.default_rng(seed)
    prog = form.format(op=op)
    a = random_sparse((m, n), density, rng, lo=-3, hi=4)
    a[a == 0] = fill
    fmts = {"csr": csr, "csc": csc, "coo": lambda **k: coo(2, **k), "dcsr": dcsr, "dense": lambda **k: dense(2, **k)}
    tensors = {"A": Tensor.from_numpy(a, fmts[fa](fill=fill), name="A")}
    if "x[" in prog:
        tensors["x"] = rng.integers(-2, 3, n if "x[j]" in prog else m).astype(float)
    if prog[0] == "y":
        tensors["y"] = Tensor.from_numpy(rng.integers(-3, 4, m if "y[i]" in prog else n).astype(float), dense(1),
                                         name="y")
    else:
        tensors["s"] = np.array(float(rng.integers(-3, 4)))
    schedule = None
    if parallel and fa in ("csr", "dense") and prog.startswith("y[i]"):
        schedule = Schedule().parallelize("i")
    check_lowered(prog, schedule, **tensors)


@pytest.mark.parametrize("dtype, want", [("int32", "int64"), ("bool", "int64"), ("float32", "float32")])
def test_a_sum_of_narrow_integers_counts_in_64_bits(dtype, want):
    """As numpy's sum: int32 values add up in int64 (the kernel's int32 sum wrapped around)."""
    from compiler.testing import check_lowered
    v = np.array([100, 100, 100, 0, 1]).astype(dtype) if dtype != "bool" else np.array([1, 1, 0, 1], bool)
    big = np.full(50, np.iinfo(dtype).max // 2 if dtype[0] in "iu" else 1, dtype=dtype) if dtype != "bool" else v
    for values in (v, big):
        x = Tensor.from_numpy(values, sparse_vector(dtype=dtype, fill=values.dtype.type(0)), name="x")
        k = check_lowered("s = sum[i](x[i])", checked=True, x=x)
        got = k(x=x).to_numpy()
        assert got.dtype == np.dtype(want)
        assert got == evaluate("s = sum[i](x[i])", x=x)[0]
    assert lower("s = max[i](x[i])", x=x)(x=x).to_numpy().dtype == np.dtype(dtype)   # max does not widen


def test_a_narrow_fill_put_in_for_an_absent_operand_wraps_as_the_operand_would():
    # c stores nothing: its fill 1 (int32) goes into the case b[i] + 1, computed in int32 as
    # numpy computes b + c; and an int32 fill folded in after the loop is counted in int64
    from compiler.testing import check_lowered
    b = Tensor.from_numpy(np.array([2 ** 31 - 1, 7], dtype="int32"), "dense", name="b")
    c = Tensor.from_numpy(np.array([1, 1], dtype="int32"), "sparse", fill=1, name="c")
    k = check_lowered("s[] = sum[i](b[i] + c[i])", b=b, c=c)
    assert k(b=b, c=c).to_numpy() == -2147483640 == evaluate("s[] = sum[i](b[i] + c[i])", b=b, c=c)[0]
    top = 2 ** 31 - 1
    d = Tensor.from_numpy(np.array([top, top, 5], dtype="int32"), "sparse", fill=top, name="d")
    assert check_lowered("s[] = sum[i](d[i])", d=d)(d=d).to_numpy() == 2 * top + 5
    A = Tensor.from_numpy(np.array([[top, top], [5, top]], dtype="int32"), "csr", fill=top, name="A")
    np.testing.assert_array_equal(check_lowered("y[i] = sum[j](A[i, j])", A=A)(A=A).to_numpy(),
                                  [2 * top, top + 5])


def test_a_user_function_whose_python_leaves_int64_does_not_break_the_lattice_check():
    # the check samples large values, where this Python overflows int64: those samples are skipped
    big = user_function("big", lambda a, b: int(a) * 2 ** 40 + int(b), "return x * 1099511627776 + y;",
                        dtype="int64")
    b = Tensor.from_numpy(np.array([1, 0, 3]), "sparse", name="b")
    assert lower("a[i] = big(b[i], b[i])", functions={"big": big}, b=b)(b=b).to_numpy().tolist() == \
        [2 ** 40 + 1, 0, 3 * 2 ** 40 + 3]
    with pytest.raises(UserCodeError, match="user function big: its Python implementation returned a value int64 "
                                            "cannot hold"):
        evaluate("a[i] = big(b[i], b[i])", functions={"big": big}, b=np.array([2 ** 40, 0]))


def test_a_reduction_into_the_output_starts_at_its_identity_not_at_the_fill():
    """max over j of t + B[i, j] where t is itself a sum: the value of an all-fill row is 5 (B's
    fill), but a row whose entries are all below 5 must not start from it (it gave 5 for -7)."""
    from compiler.testing import check_lowered
    A = Tensor.from_numpy(np.array([[-10.0, 0, 0], [0, 0, 0]]), csr(), name="A")
    B = Tensor.from_numpy(np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]]), csr(fill=5.0), name="B")
    k = check_lowered("y[i] = max[j](sum[k](A[i, k]) + B[i, j])", checked=True, A=A, B=B)
    assert k(A=A, B=B).to_numpy().tolist() == [-7.0, 5.0]


@pytest.mark.parametrize("fa, fb", [("csr", "csr"), ("coo", "coo"), ("csc", "csr"), ("csr", "csc")])
@pytest.mark.parametrize("out", [None, sparse_vector()], ids=["dense", "sparse"])
def test_a_reduction_over_an_index_bound_outside_it_is_its_own_variable(fa, fb, out):
    # max[j] inside the implicit sum over j: the inner j is renamed apart (it crashed the lowering);
    # into a sparse output, the sum over j goes through a scalar (it appended y[i] once per j)
    from compiler.testing import check_lowered
    rng = np.random.default_rng(6)
    a, b = rng.integers(-3, 4, (5, 4)).astype(float), rng.integers(-3, 4, (5, 4)).astype(float)
    a[rng.random(a.shape) < 0.5] = 0
    b[rng.random(b.shape) < 0.5] = 0
    fmts = {"csr": csr(), "csc": csc(), "coo": coo(2)}
    A, B = Tensor.from_numpy(a, fmts[fa], name="A"), Tensor.from_numpy(b, fmts[fb], name="B")
    k = check_lowered("y[i] = max[j](A[i, j]) * B[i, j]", out=out, checked=True, A=A, B=B)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), (a.max(axis=1)[:, None] * b).sum(axis=1))
    concretize = next(s for s in k.trace.steps if s.stage == "concretize")
    assert "renamed apart: sum[j](max[j_2](A[i, j_2]) * B[i, j])" in concretize.note


def test_an_output_format_that_cannot_hold_the_values_is_refused():
    # as numpy's same_kind rule for out=: 0.5 would become 0 in an int64 output, then be dropped as fill
    with pytest.raises(DTypeError, match=r"output a's format holds int64, but b\[i\] \+ b\[i\] is float64, which "
                                         r"it cannot hold without losing values; give a a float64 format"):
        lower("a[i] = b[i] + b[i]", b=sparse_vector(), a=sparse_vector(dtype="int64", fill=0))
    # narrowing within a kind is allowed, as numpy allows it
    from compiler.testing import check_lowered
    b = Tensor.from_numpy(np.array([0.5, 0.0, 2.0]), sparse_vector(), name="b")
    check_lowered("a[i] = b[i] + b[i]", out=sparse_vector(dtype="float32"), b=b)


def test_a_row_reduction_is_computed_once_per_row_not_once_per_entry():
    # max[j_2](A[i, j_2]) does not use j: it moves out of the loop over j (it ran once per entry of B)
    from compiler.testing import check_lowered
    rng = np.random.default_rng(9)
    a, b = rng.integers(-3, 4, (6, 5)).astype(float), rng.integers(-3, 4, (6, 5)).astype(float)
    a[rng.random(a.shape) < 0.5] = 0
    b[rng.random(b.shape) < 0.5] = 0
    A, B = Tensor.from_numpy(a, csr(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k = check_lowered("y[i] = max[j](A[i, j]) * B[i, j]", checked=True, A=A, B=B)
    (hoist,) = [s for s in k.trace.steps if s.stage == "hoist"]
    assert "computed once, outside that loop" in hoist.note
    src = k.c_source
    assert src.count("for (int64_t pA1 = A1_pos[i]") == 1
    assert src.index("for (int64_t pA1 = A1_pos[i]") < src.index("for (int64_t pB1 = B1_pos[i]")
    assert "j < B1_size" not in src          # the fill-0 product is skipped: no sweep of j


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["csr", "coo", "dcsr", "csc"]), st.sampled_from(["csr", "dense"]),
       st.sampled_from([0.0, 1.0, -2.0]), st.sampled_from([0.0, 2.0]),
       st.sampled_from(["sum", "max", "min"]), st.sampled_from(["*", "+", "max"]),
       st.integers(0, 5), st.integers(0, 5), st.sampled_from([0.0, 0.4, 1.0]),
       st.sampled_from([None, "sparse"]), st.integers(0, 2 ** 16))
def test_property_loop_invariant_reductions(fa, fb, fill_a, fill_b, r, op, m, n, density, out, seed):
    """A reduction that does not use the loops around it, hoisted, against the oracle."""
    from compiler.testing import check_lowered, random_sparse
    rng = np.random.default_rng(seed)
    a, b = (random_sparse((m, n), density, rng, lo=-3, hi=4) for _ in "ab")
    a[a == 0], b[b == 0] = fill_a, fill_b
    fmts = {"csr": csr, "csc": csc, "coo": lambda **k: coo(2, **k), "dcsr": dcsr, "dense": lambda **k: dense(2, **k)}
    A = Tensor.from_numpy(a, fmts[fa](fill=fill_a), name="A")
    B = Tensor.from_numpy(b, fmts[fb](fill=fill_b), name="B")
    combine = f"{r}[k](A[i, k]) {op} B[i, j]" if op != "max" else f"max({r}[k](A[i, k]), B[i, j])"
    for prog in (f"y[i] = sum[j]({combine})", f"C[i, j] = {combine}"):
        o = None
        if out == "sparse":
            fill = float(evaluate(prog, A=A, B=B)[1])
            o = sparse_vector(fill=fill) if prog[0] == "y" else csr(fill=fill)
        check_lowered(prog, out=o, A=A, B=B)


@pytest.mark.parametrize("prog", ["y[i] = maxu[j](A[i, j])", "y[i] = maxu[j](A[i, j]) * 2",
                                  "s = sum[i](maxu[j](A[i, j]))"])
def test_a_reduction_by_a_function_without_identity_is_refused(prog):
    # it started at the output's fill (0, so the max of negative rows came out 0), or crashed
    maxu = user_function("maxu", lambda a, b: max(a, b), "return x > y ? x : y;", idempotent=True,
                         commutative=True, associative=True)
    with pytest.raises(StrategyError, match=r"maxu\[j\]\(A\[i, j\]\) reduces by maxu, which has no identity, so it "
                                            r"has no value to start from; declare one"):
        lower(prog, functions={"maxu": maxu}, A=csr())
    # an update starts from the output's own values: nothing else is needed
    lower("y[i] <<maxu>>= A[i, j]", functions={"maxu": maxu}, A=csr(), y=dense(1))


@pytest.mark.parametrize("prog, fill, dtype", [("y[i] = min(sum[k](T[j, k]), B[i, j])", -inf, "float64"),
                                               ("y[i] = any[k](T[j, k]) or B[i, j]", True, "bool")])
def test_a_nested_reduction_the_case_no_longer_reads_is_dropped(prog, fill, dtype):
    # where B is its fill (min's or or's annihilator) the value is the fill: the nested loops over T
    # went on, reading a fiber of T the case does not locate (a C error)
    from compiler.testing import check_lowered
    t = np.array([[1, 0], [2, 3]]).astype(dtype)
    b = np.array([[1, fill], [2, 3], [fill, fill]]).astype(dtype)
    zero = np.zeros((), dtype).item()
    Tt = Tensor.from_numpy(t, dcsr(dtype=dtype, fill=zero), name="T")
    B = Tensor.from_numpy(b, dcsr(dtype=dtype, fill=np.asarray(fill).astype(dtype).item()), name="B")
    check_lowered(prog, checked=True, T=Tt, B=B)


def test_an_int32_workspace_beside_int64_operands():
    # the lattice check folded the workspace's INT32_MIN in int64 in one place and int32 in another
    from compiler.testing import check_lowered
    D = Tensor.from_numpy(np.array([[0, 5], [0, 0]], "int32"), csc(dtype="int32"), name="D")
    x = Tensor.from_numpy(np.array([1, 2], "int32"), sparse_vector(dtype="int32"), name="x")
    G = Tensor.from_numpy(np.array([1, 0]), sparse_vector(dtype="int64"), name="G")
    k = check_lowered("y[i] = max[l](D[i, l]) * x[i] + G[i]", out=sparse_vector(dtype="int64"), D=D, x=x, G=G)
    assert k(D=D, x=x, G=G).to_numpy().tolist() == [6, 0]


def test_a_sparse_outputs_final_position_is_cast_only_to_another_index_dtype():
    k = lower("C[i, j] = A[i, j] + B[i, j]", A=csr(), B=csr(), C=dcsr())
    assert "C0_pos[1] = pC0;" in k.c_source
    k = lower("C[i, j] = A[i, j] + B[i, j]", A=csr(), B=csr(), C=dcsr(index_dtype="int32"))
    assert "C0_pos[1] = (int32_t)pC0;" in k.c_source


def test_a_loop_program_given_to_the_lattice_strategy_is_refused_by_name():
    # (issue 28, item 9's neighbours) the default strategy took a loop program, or the Python
    # function of one, for index notation: AttributeError 'LoopProgram' object has no attribute 'rhs'
    from compiler import einsum
    from compiler.looplets import loop_program

    def rowsum(y, A):
        for i in _:  # noqa: F821 (the loop language's extent)
            for j in _:  # noqa: F821
                y[i] += A[i, j]

    A = Tensor.from_numpy(np.eye(3), csr(), name="A")
    message = r"^strategy='lattice' lowers index notation; a loop program is lowered with strategy='looplets'"
    for prog in (loop_program(rowsum), rowsum):
        with pytest.raises(StrategyError, match=message):
            lower(prog, "lattice", y="dense", A=A)
        with pytest.raises(StrategyError, match=message):
            einsum(prog, "lattice", y="dense", A=A)
        # given no strategy, a loop program is lowered with looplets
        assert einsum(prog, y="dense", A=A).to_numpy().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(StrategyError, match=r"^verify='no': give True .* or False$"):
        lower("y[i] = A[i, j]", A=A, options={"verify": "no"})   # (taken as True)
    assert lower(loop_program(rowsum), "looplets", y="dense", A=A)(A=A).to_numpy().tolist() == [1.0, 1.0, 1.0]
