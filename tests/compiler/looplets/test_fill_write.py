"""The ``fill-write`` rewrite (compiler/looplets/fill_write.py): a write of the output's fill into a sparse output
is dropped, so loops that only write fills simplify away; also a value of another kind that is stored as the fill
(``false`` into a float64 output of fill 0.0)."""

import numpy as np
import pytest

import compiler as ss
from compiler.reference import evaluate

A_VALUES = np.array([[1.0, 0.0, np.nan, 2.0, 0.0, 0.0, 0.0, 0.0, 5.0, -6.0, np.inf, 8.0]] * 3)


@pytest.mark.parametrize("program", ["C[i, j] = isnan(A[i, j])", "C[i, j] = A[i, j] > 1.5",
                                     "C[i, j] = !(A[i, j] == 0)"])
@pytest.mark.parametrize("out", ["csr", ("bool", False), ("int32", 0), ("float32", 0.0), ("bool", True)])
def test_a_bool_value_stored_as_the_fill_is_not_written(program, out):
    # (a bool expression into C="csr", float64 of fill 0.0, wrote `false` into every gap and filtered it out)
    A = ss.Tensor.from_numpy(A_VALUES, "csr", name="A")
    fmt = out if isinstance(out, str) else ss.parse_format("csr", dtype=out[0], fill=out[1])
    k = ss.lower(program, strategy="looplets", A=A, C=fmt)
    got = k(A=A)
    want, _ = evaluate(program, A=A)
    np.testing.assert_array_equal(got.to_numpy(), want.astype(got.dtype))
    gaps_are_fill = not isinstance(out, tuple) or out[1] is not True
    assert ("= false;" in k.c_source) != gaps_are_fill, k.c_source
