"""Typing index notation, and the output dtype check both strategies share."""

import numpy as np
import pytest

import compiler as ss
from compiler.algebra import lookup
from compiler.errors import DTypeError
from compiler.format import dense
from compiler.notation import parse
from compiler.notation.dtypes import check_output_dtype, expr_dtype, reduce_dtype

STRATEGIES = ["lattice", "looplets"]


def test_expression_dtypes_follow_the_operators():
    dtypes = {"b": "bool", "i": "int32", "f": "float32"}
    of = lambda a: dtypes[a.tensor]  # noqa: E731
    assert expr_dtype(parse("y[k] = b[k] + b[k]").rhs, of) == np.dtype("int64")   # bools add as integers
    assert expr_dtype(parse("y[k] = i[k] * f[k]").rhs, of) == np.dtype("float64")
    assert expr_dtype(parse("y[] = sum[k](i[k])").rhs, of) == np.dtype("int64")  # a sum counts in 64 bits
    assert expr_dtype(parse("y[] = max[k](i[k])").rhs, of) == np.dtype("int32")
    assert reduce_dtype(lookup("|"), np.dtype("bool")) == np.dtype("bool")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_bool_output_updated_by_plus_is_refused(strategy):
    # numpy refuses y += x for bool y too: + of bools is an integer count, not a bool
    x = ss.Tensor.from_numpy(np.array([True, False]), "dense", name="x")
    y = ss.Tensor.from_numpy(np.array([True, True]), "dense", name="y")
    with pytest.raises(DTypeError, match=r"output y's format holds bool, but the update y\[i\] \+= x\[i\] computes "
                                         r"int64, which it cannot hold without losing values; give y an int64 format"):
        ss.lower("y[i] += x[i]", strategy=strategy, x=x, y=y)
    # an update a bool holds is fine, and agrees with the oracle
    for program in ["y[i] |= x[i]", "y[i] max= x[i]", "y[i] &= x[i]"]:
        got = ss.lower(program, strategy=strategy, x=x, y=y)(x=x, y=y).to_numpy()
        np.testing.assert_array_equal(got, ss.evaluate(program, x=x, y=y)[0])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_float_is_not_truncated_into_an_int_output(strategy):
    x = ss.Tensor.from_numpy(np.array([0.5, 1.5]), "dense", name="x")
    y = ss.Tensor.from_numpy(np.array([1, 2]), "dense", name="y")
    for program in ["y[i] = x[i]", "y[i] += x[i]"]:
        with pytest.raises(DTypeError, match=r"output y's format holds int64, but x\[i\] is float64, which it "
                                             r"cannot hold without losing values; give y a float64 format"):
            ss.lower(program, strategy=strategy, x=x, y=y)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_narrowing_within_a_kind_is_allowed_as_numpy_allows_it(strategy):
    # numpy's y += x with int32 y and int64 x keeps y int32 (same_kind)
    x = ss.Tensor.from_numpy(np.array([3, -4], dtype=np.int64), "dense", name="x")
    y = ss.Tensor.from_numpy(np.array([1, 2], dtype=np.int32), "dense", name="y")
    got = ss.lower("y[i] += x[i]", strategy=strategy, x=x, y=y)(x=x, y=y).to_numpy()
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [4, -2])


def test_the_rhs_dtype_is_returned_and_an_operator_given_the_wrong_dtype_is_named():
    assert check_output_dtype(parse("y[i] = x[i] + x[i]"), {"x": dense(1, dtype="bool")}) == np.dtype("int64")
    with pytest.raises(DTypeError, match=r"in y\[i\] = x\[i\] & z\[i\]: operator & \(bitand\) does not "
                                         r"accept float64 \(argument 0\): it needs integer or bool operands"):
        check_output_dtype(parse("y[i] = x[i] & z[i]"), {"x": dense(1), "z": dense(1)})


def test_an_int_literal_beside_an_unsigned_operand_takes_its_dtype():
    from compiler.notation.dtypes import type_literals
    of = {"u": np.dtype("uint64"), "b": np.dtype("uint8"), "i": np.dtype("int32")}
    typed = type_literals(parse("y[k] = (u[k] & 1) + (b[k] * 2) + (i[k] + 1)").rhs, lambda a: of[a.tensor])
    # (u & 1) stays uint64 (an int64 1 would make it float64), b * 2 uint8; beside int32 the literal is int64
    assert expr_dtype(typed.args[0].args[0], lambda a: of[a.tensor]) == np.dtype("uint64")
    assert expr_dtype(typed.args[0].args[1], lambda a: of[a.tensor]) == np.dtype("uint8")
    assert expr_dtype(typed.args[1], lambda a: of[a.tensor]) == np.dtype("int64")
    # a value the unsigned dtype cannot hold stays int64
    assert type_literals(parse("y[k] = b[k] + 256").rhs, lambda a: of[a.tensor]).args[1].dtype == np.dtype("int64")
    assert type_literals(parse("y[k] = b[k] + -1").rhs, lambda a: of[a.tensor]).args[1].dtype == np.dtype("int64")


def test_an_int_literal_past_int64_is_uint64_as_numpy_types_it():
    prog = parse("y[k] = u[k] & 18446744073709551615")
    assert prog.rhs.args[1].dtype == np.dtype("uint64")
    assert np.asarray(2 ** 64 - 1).dtype == prog.rhs.args[1].dtype
