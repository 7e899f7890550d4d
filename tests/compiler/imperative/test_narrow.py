"""Entry counts stored into an output's int32 position arrays are checked, so they cannot wrap
(compiler.imperative.narrow, the lowering's narrow-counts step).

A real int32 overflow needs 2**31 entries; the tests lower with a smaller limit in place of
int32's (lowering.count_limit), so a kernel of a few dozen entries passes it, and check that
the kernel stops with an error naming the output and the index dtype to use, in both
strategies and for CSR and COO outputs, and that below the limit it computes scipy's result.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from compiler import lowering
from compiler.errors import KernelError
from compiler.imperative.ir import Cast, Const, For, Load, Pragma, Store, Var
from compiler.imperative.traverse import walk
from compiler.imperative.guard import CheckCoordinate
from compiler.imperative.narrow import check_counts
from compiler.trace import Trace

VSTACK = "D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)"
HSTACK = "D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)"


def _operands(fmt="csr", index_dtype=np.int32):
    a = sp.random(10, 10, density=0.4, format="csr", random_state=3)
    a.indices, a.indptr = a.indices.astype(index_dtype), a.indptr.astype(index_dtype)
    top, bottom = a[:5].asformat(fmt), a[5:].asformat(fmt)
    return a, ss.Tensor.from_scipy(top, name="B"), ss.Tensor.from_scipy(bottom, name="C")


@pytest.mark.parametrize("strategy", ["looplets", "lattice"])
@pytest.mark.parametrize("out", ["csr", "coo"])
@pytest.mark.parametrize("program, stack", [(VSTACK, sp.vstack), (HSTACK, sp.hstack)])
def test_int32_output_counts_are_checked(strategy, out, program, stack, monkeypatch):
    a, B, C = _operands()
    fmt = ss.parse_format(out, index_dtype="int32")
    monkeypatch.setattr(lowering, "count_limit", lambda dt: a.nnz - 3)   # (int32's 2**31, scaled down)
    k = ss.lower(program, strategy=strategy, trace=Trace(), B=B, C=C, D=fmt)
    assert "narrow-counts" in k.trace.stages()
    checks = [n for n in walk(k.function.body) if isinstance(n, CheckCoordinate)]
    assert checks and all(n.extent == Const(a.nnz - 3, "int64") for n in checks)
    assert f">= {a.nnz - 3})" in k.c_source
    with pytest.raises(KernelError, match="output D: level [01] .* counts its entries in int32 pos; lower with "
                                          "index_dtype='int64' for D: entry count .* is outside"):
        k(B=B, C=C)
    monkeypatch.setattr(lowering, "count_limit", lambda dt: a.nnz + 1)   # room for every entry: it runs
    k = ss.lower(program, strategy=strategy, trace=Trace(), B=B, C=C, D=fmt)
    d = k(B=B, C=C)
    assert d.format == fmt
    np.testing.assert_array_equal(d.to_numpy(), stack([a[:5], a[5:]]).toarray())


@pytest.mark.parametrize("strategy", ["looplets", "lattice"])
def test_int64_output_has_no_count_check(strategy):
    _, B, C = _operands()
    k = ss.lower(HSTACK, strategy=strategy, B=B, C=C, D=ss.csr())   # (int64: "csr" leaves it open)
    assert "narrow-counts" not in k.trace.stages()
    assert not any(isinstance(n, CheckCoordinate) for n in walk(k.function.body))


def test_int32_count_check_in_the_interpreter(monkeypatch):
    a, B, C = _operands()
    monkeypatch.setattr(lowering, "count_limit", lambda dt: 4)
    k = ss.lower(VSTACK, strategy="looplets", trace=Trace(), B=B, C=C, D=ss.csr(index_dtype="int32"))
    with pytest.raises(KernelError, match="entry count [0-9]+ is outside \\[0, 4\\)"):
        k.interpret(B=B, C=C)


def test_a_copy_of_a_stored_count_is_not_checked():
    fill_up = Store("D1_pos", Var("p") + 1, Load("D1_pos", Var("p")))
    count = Store("D1_pos", Var("p") + 1, 1, op="+")
    out = check_counts([fill_up, count], {"D1_pos": (8, "D", 1, "output D, level 1")})
    assert out[0] == fill_up and isinstance(out[1], CheckCoordinate) and out[2] == count
    assert str(out[1].value) == "(int64)D1_pos[p + 1] + 1"


def test_a_converted_count_is_checked_before_its_conversion():
    count = Store("C1_pos", Var("i") + 1, Cast("int32", Var("nC1")))
    out = check_counts([count], {"C1_pos": (8, "C", 1, "output C, level 1")})
    assert isinstance(out[0], CheckCoordinate) and out[0].value == Var("nC1")


def test_no_check_leaves_a_parallel_loop():
    """No branch may leave an OpenMP region (GCC: invalid branch from an OpenMP structured block):
    its per-row counts go unchecked, the serial prefix sum after it is checked."""
    rows = For(Var("i"), 0, Var("n"), [Store("C1_pos", Var("i") + 1, Var("nC1"))])
    prefix = Store("C1_pos", Var("q") + 1, Load("C1_pos", Var("q")), op="+")
    out = check_counts([Pragma("omp parallel for schedule(guided)"), rows, prefix], {"C1_pos": (8, "C", 1, "output C")})
    assert out[:2] == [Pragma("omp parallel for schedule(guided)"), rows]
    assert isinstance(out[2], CheckCoordinate) and out[3] == prefix



def test_a_checked_count_in_a_simd_loop_leaves_it_unmarked():
    """No branch may leave a SIMD loop either: a loop whose counts are checked runs as written (the
    pragma over it made GCC refuse the kernel), one whose stores need no check keeps its pragma."""
    fill = For(Var("j"), 0, Var("n"), [Store("C1_pos", Var("j") + 1, Var("nC1"))])
    copy = For(Var("j"), 0, Var("n"), [Store("C1_pos", Var("j") + 1, Load("C1_pos", Var("j")))])
    limits = {"C1_pos": (8, "C", 1, "output C")}
    out = check_counts([Pragma("omp simd"), fill, Pragma("omp simd"), copy], limits)
    assert isinstance(out[0], For)   # (its pragma dropped)
    assert isinstance(out[0].body.body[0], CheckCoordinate)
    assert out[1:] == [Pragma("omp simd"), copy]


def test_the_check_names_the_output_and_its_mode():
    """An output named D2 (its arrays D21_pos, ...) is D2's mode 1, not D's mode 21."""
    _, B, C = _operands()
    k = ss.lower(VSTACK.replace("D[", "D2["), strategy="lattice", B=B, C=C, D2=ss.csr(index_dtype="int32"))
    checks = [n for n in walk(k.function.body) if isinstance(n, CheckCoordinate)]
    assert checks and {(n.tensor, n.mode) for n in checks} == {("D2", 1)}
    assert "// D2, mode 1: output D2: level 1 (SparseList)" in k.c_source


def test_a_constant_count_is_not_checked():
    """``pos[0] = 0`` cannot pass any limit: a check of it (``if (0 >= 2147483648)``) was dead code in
    every kernel writing an int32 output's positions; a count that grows is still checked."""
    body = check_counts([Store("C1_pos", Const(0, "int64"), Const(0, "int32")),
                         Store("C1_pos", Const(1, "int64"), Cast("int32", Var("nC1")))],
                        {"C1_pos": (2 ** 31, "C", 0, "counts")})
    assert [type(s).__name__ for s in body] == ["Store", "CheckCoordinate", "Store"]
    assert body[1].value == Var("nC1")
    A = ss.Tensor.from_numpy(np.array([[0.0, 1.0], [2.0, 0.0]]), "csr", name="A")
    for strategy in ("lattice", "looplets"):
        k = ss.lower("C[i, j] = A[i, j] * 2", strategy, A=A, C=ss.parse_format("csr", index_dtype="int32"))
        assert "if (0 >= INT64_C(2147483648))" not in k.c_source
        np.testing.assert_array_equal(k(A=A).to_numpy(), [[0.0, 2.0], [4.0, 0.0]])
