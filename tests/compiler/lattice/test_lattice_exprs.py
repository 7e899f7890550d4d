"""Operators applied to IR expressions (compiler.lattice.exprs): min and max fold what a bound decides."""

import numpy as np
import pytest

from compiler import Tensor
from compiler.algebra import lookup
from compiler.format import coo, csr, sparse_vector
from compiler.imperative.ir import Call, Cast, Const, Select, Var
from compiler.imperative.traverse import walk
from compiler.lattice.exprs import apply_op
from compiler.testing import check_lowered

t = Var("t")


@pytest.mark.parametrize("op, dtype, bound", [("min", "bool", False), ("max", "bool", True),
                                              ("min", "int32", np.iinfo(np.int32).min),
                                              ("max", "int64", np.iinfo(np.int64).max)])
def test_min_or_max_with_the_dtypes_bound_is_the_bound(op, dtype, bound):
    for args in ((t, Const(bound, dtype)), (Const(bound, dtype), t)):
        e, rdt = apply_op(lookup(op), list(args), [dtype, dtype], {})
        assert e == Const(bound, dtype) and rdt == dtype


def test_a_float_min_with_minus_infinity_still_compares_a_nan_wins():
    e, _ = apply_op(lookup("min"), [t, Const(-np.inf, "float64")], ["float64", "float64"], {})
    assert isinstance(e, Select) and any(isinstance(n, Call) and n.function == "isnan" for n in walk(e))
    # a constant first operand is no NaN: no isnan(0.0) to test
    e, _ = apply_op(lookup("max"), [Const(0.0, "float64"), t], ["float64", "float64"], {})
    assert not any(isinstance(n, Call) and n.function == "isnan" for n in walk(e))


def test_max_of_zero_and_a_bool_is_the_bool():
    e, rdt = apply_op(lookup("max"), [Const(0, "int64"), t], ["int64", "bool"], {})
    assert rdt == "int64" and isinstance(e, Cast) and e.value == t
    e, _ = apply_op(lookup("min"), [t, Const(0, "int64")], ["bool", "int64"], {})
    assert e == Const(0, "int64")
    e, _ = apply_op(lookup("max"), [Const(1, "int64"), t], ["int64", "bool"], {})
    assert isinstance(e, Select)   # 1 is not below every bool
    e, _ = apply_op(lookup("max"), [t, Const(-0.0, "float64")], ["bool", "float64"], {})
    assert isinstance(e, Select)   # max(false, -0.0) is -0.0 by the comparison: kept


def test_kernels_with_folded_bounds_match_the_oracle():
    rng = np.random.default_rng(3)
    A = Tensor.from_numpy(rng.random((6, 5)) < 0.4, csr(fill=False, dtype="bool"), name="A")
    D = Tensor.from_numpy(rng.random((6, 4)) < 0.6, csr(fill=True, dtype="bool"), name="D")
    k = check_lowered("C[i, k] = max(sum[j](A[i, j] * B[j, k]), D[i, k])", out=csr(), checked=True,
                      A=A, B=rng.random((5, 4)) < 0.5, D=D)
    assert "0 > (int64_t)D_val" not in k.c_source
    A2 = Tensor.from_numpy(rng.random((6, 5)) < 0.4, coo(fill=False, dtype="bool"), name="A")
    k = check_lowered("y[i] = min(min[j](A[i, j] * x[j]), min[k](A[i, k]))", out=sparse_vector(), checked=True,
                      A=A2, x=(rng.random(5) * 4 - 2).astype("float32"))
    assert "< false ?" not in k.c_source
