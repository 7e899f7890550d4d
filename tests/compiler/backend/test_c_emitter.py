import re

from compiler.backend import c_arguments, c_declarations, compile_function, emit_c
from compiler.imperative import (Assign, Call, CompoundAssign, Const, Declare, For, Function, OutScalar, Scalar,
                                 Var)
from compiler.imperative.examples import csr_spmv, filter_nonzeros


def test_spmv_is_readable():
    src = emit_c(csr_spmv())
    lines = src.splitlines()
    # indentation is four spaces per level, no tabs
    assert "\t" not in src
    assert all((len(l) - len(l.lstrip(" "))) % 4 == 0 for l in lines)
    assert "    const int64_t *restrict A_pos," in lines
    assert "    double *y)" in lines
    assert "        for (int64_t pA = A_pos[i]; pA < A_pos[i + 1]; pA++) {" in lines
    assert "            acc += A_val[pA] * x[A_idx[pA]];" in lines
    # no dead code: nothing for checks, growth or freeing when the kernel needs none
    for unused in ("check_index", "grow_buffer", "free", "setjmp", "math.h", "stdlib.h"):
        assert unused not in src
    assert src.count("{") == src.count("}")


def test_checked_spmv_checks_every_access():
    src = emit_c(csr_spmv(), checked=True)
    assert "x[check_index(&check, READ, ID_x, A_idx[check_index(&check, READ, ID_A_idx, pA, A_idx_len)], x_len)]" in src
    assert "y[check_index(&check, WRITE, ID_y, i, y_len)] = acc;" in src
    assert "enum { ID_A_pos, ID_A_idx, ID_A_val, ID_x, ID_y };" in src
    assert [a.kind for a in c_arguments(csr_spmv(), checked=True)] == [
        "scalar", "buffer", "length", "buffer", "length", "buffer", "length", "buffer", "length",
        "buffer", "length", "error"]


def test_growables_use_out_pointers_and_export_free():
    src = emit_c(filter_nonzeros())
    assert "int64_t **B_idx_out" in src and "double **B_val_out" in src
    assert "void sparsify_free(void *p)" in src
    assert "*B_nnz_out = B_nnz;" in src
    assert "            if (B_nnz + 1 > B_idx_cap) {" in src
    decls = c_declarations(filter_nonzeros())
    assert "restrict" not in decls and "void sparsify_free(void *p);" in decls


def test_large_growables_ask_for_2mb_pages():
    """Past 4 MB a grown buffer is advised onto 2 MB pages (Linux), from the page it starts in."""
    src = emit_c(filter_nonzeros())
    assert src.index("#define _DEFAULT_SOURCE") < src.index("#include <sys/mman.h>") < src.index("#include <stdbool.h>")
    assert "void *grown = resize(buf, (size_t)cap * size);" in src
    assert "if (grown != NULL && bytes >= ((size_t)1 << 22)) {" in src
    assert "madvise((void *)start, (uintptr_t)grown + bytes - start, MADV_HUGEPAGE);" in src
    assert "madvise" not in emit_c(csr_spmv()) and "sys/mman.h" not in emit_c(csr_spmv())


def test_fresh_names_avoid_user_names():
    # a user variable called check_index must not collide with the checker
    n, r = Scalar("n", "int64"), OutScalar("r", "float64")
    v = Var("check_index")
    fn = Function("f", (n, r), [For(v, 0, n.var, [Assign(r.var, r.var + Call("sqrt", (v,)))])])
    src = emit_c(fn, checked=True)
    assert "for (int64_t check_index = 0;" in src
    assert "static int64_t check_index_2(" not in src  # no loads or stores: no checker at all
    assert "#include <math.h>" in src


def test_literals():
    r = OutScalar("r", "float32")
    fn = Function("f", (r,), [Declare(Var("big"), "int64", Const(2 ** 40, "int64")),
                              Assign(r.var, Const(0.5, "float32") + Const(float("inf"), "float64") + r.var)])
    src = emit_c(fn)
    assert "INT64_C(1099511627776)" in src
    assert "0.5f + INFINITY" in src
    assert re.search(r"float r = 0\.0f;", src)   # its start is read


def test_an_out_scalar_set_before_any_read_is_declared_without_its_start():
    r = OutScalar("r", "int64", 7)
    fn = Function("f", (Scalar("n", "int64"), r), [Declare(Var("m"), "int64", Var("n") * 2),
                                                   Assign(r.var, Var("m") + 1), CompoundAssign("+", r.var, 1)])
    src = emit_c(fn)
    assert "int64_t r;  // set below, before anything reads it" in src and "= 7" not in src
    assert compile_function(fn)(n=3)["r"] == 8
    # a read first (here by the assignment itself) keeps the start
    fn = Function("f", (r,), [Assign(r.var, r.var + 1)])
    assert "int64_t r = 7;" in emit_c(fn) and compile_function(fn)()["r"] == 8
