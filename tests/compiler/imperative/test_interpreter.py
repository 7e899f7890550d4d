import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.errors import DTypeError, KernelError
from compiler.imperative import (Assign, BinOp, Break, Call, Cast, CompoundAssign, Const, Function, Helper,
                                 If, OutScalar, Select, While, interpret)
from compiler.imperative.examples import csr_spmv, filter_nonzeros


@st.composite
def csr_matrices(draw):
    m = draw(st.integers(0, 7))
    n = draw(st.integers(1, 7))
    density = draw(st.sampled_from([0.0, 0.2, 0.6, 1.0]))
    seed = draw(st.integers(0, 2 ** 16))
    return sp.random(m, n, density=density, format="csr", random_state=seed)


@settings(max_examples=40, deadline=None)
@given(csr_matrices(), st.sampled_from(["int32", "int64"]), st.sampled_from(["float32", "float64"]))
def test_spmv_matches_scipy(A, index, value):
    x = np.linspace(-1, 1, A.shape[1]).astype(value)
    y = np.full(A.shape[0], 7, value)
    out = interpret(csr_spmv(index, value), m=A.shape[0], A_pos=A.indptr.astype(index),
                    A_idx=A.indices.astype(index), A_val=A.data.astype(value), x=x, y=y)
    assert out["y"] is y
    np.testing.assert_allclose(y, A.astype(value) @ x, rtol=1e-5, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.0, 1.5, -2.0, 3.0]), max_size=40))
def test_filter_nonzeros_matches_numpy(values):
    x = np.array(values, dtype=np.float64)
    out = interpret(filter_nonzeros(), n=len(x), x=x)
    nz = np.flatnonzero(x)
    assert out["B_nnz"] == len(nz)
    np.testing.assert_array_equal(out["B_idx"], nz)
    np.testing.assert_array_equal(out["B_val"], x[nz])


def _eval(expr, dtype):
    r = OutScalar("r", dtype)
    fn = Function("f", (r,), [Assign(r.var, expr)])
    return interpret(fn)["r"]


def test_c_integer_semantics():
    assert _eval(Const(-7, "int64") / 2, "int64") == -3       # truncation, not floor
    assert _eval(Const(-7, "int64") % 2, "int64") == -1       # sign of the dividend
    assert _eval(Const(7, "int64") / Const(2.0, "float64"), "float64") == 3.5
    assert _eval(Const(2 ** 31 - 1, "int32") + Const(1, "int32"), "int64") == -2 ** 31  # wraps
    assert _eval(Cast("int32", Const(2.9, "float64")), "int32") == 2
    assert _eval(Const(True, "bool") + Const(True, "bool"), "int64") == 2  # bools promote to int
    assert _eval(Select(Const(1, "int64") < 2, 10, Const(1, "int64") / 0), "int64") == 10  # lazy
    assert _eval(Call("fmax", (Const(1.0, "float64"), Const(3.0, "float64"))), "float64") == 3.0
    with pytest.raises(KernelError, match="integer division by zero"):
        _eval(Const(1, "int64") / 0, "int64")


def test_loops_break_and_helpers():
    s = OutScalar("s", "int64")
    body = [While(Const(True, "bool"), [
        If(s.var >= 10, [Break()]),
        CompoundAssign("+", s.var, Call("twice", (Const(1, "int64"),))),
    ])]
    fn = Function("f", (s,), body, helpers=(Helper("twice", "static inline int64_t twice(int64_t v) { return 2 * v; }"),))
    assert interpret(fn, helpers={"twice": lambda v: 2 * v})["s"] == 10
    with pytest.raises(ValueError, match="helper twice"):
        interpret(fn)


def test_out_of_bounds_names_buffer_and_index():
    A = sp.csr_matrix(np.eye(3))
    idx = A.indices.astype(np.int64)
    idx[1] = 12
    with pytest.raises(KernelError, match=r"read of x\[12\] is out of bounds \(length 3\)"):
        interpret(csr_spmv(), m=3, A_pos=A.indptr.astype(np.int64), A_idx=idx, A_val=A.data,
                  x=np.ones(3), y=np.zeros(3))


def test_argument_errors():
    with pytest.raises(DTypeError, match="argument x must have dtype float64"):
        interpret(filter_nonzeros(), n=2, x=np.ones(2, np.float32))
    with pytest.raises(TypeError, match="missing argument 'x'"):
        interpret(filter_nonzeros(), n=2)


def test_narrow_and_unsigned_integers_convert_as_c_does():
    def run(expr, dtype="int64"):
        o = OutScalar("r", dtype)
        return interpret(Function("f", (o,), [Assign(o.var, expr)]))["r"]

    # uint8 operands compute as int (250 + 10 is 260), and a cast back wraps as numpy's uint8
    assert run(BinOp("+", Const(250, "uint8"), Const(10, "uint8"))) == 260
    assert run(Cast("uint8", BinOp("+", Const(250, "uint8"), Const(10, "uint8")))) == 4
    # an int32 beside a uint32 converts to unsigned: -1 < 1u is false in C
    assert not run(BinOp("<", Const(-1, "int32"), Const(1, "uint32")), "bool")
    # int64 beside uint32 stays signed (int64 holds every uint32)
    assert run(BinOp("<", Const(-1, "int64"), Const(1, "uint32")), "bool")
    # a negative value assigned to a uint64 wraps modulo 2^64
    assert run(Const(-1, "int64"), "uint64") == 2 ** 64 - 1
