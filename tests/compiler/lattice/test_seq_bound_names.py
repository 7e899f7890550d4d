"""Two shape operators binding one index name (issue 30): each is local to its operand, so
``slice(A[j], j -> k, (0, 8, 2)) + slice(A[j], j -> k, (1, 8, 2))`` reads A through two iterators.
The lattice read both through one (pA0) and added A's even entries to themselves; the looplets and
the array front end (which names each operand's indices apart) were right. A slice backwards
beside one forwards, under one name, was refused (one cursor walked both ways); it is lowered."""

import numpy as np
import pytest

import compiler as ss
from compiler.format import coo, csr, dense
from compiler.notation import parse
from compiler.notation.shape import distinct_bindings

PROGRAMS = [
    "D[k, i] = slice(A[j, i], j -> k, (0, 10, 2)) + slice(A[j, i], j -> k, (1, 10, 2))",
    "D[k, i] = slice(A[j, i], j -> k, (0, 10, 2)) * slice(A[j, i], j -> k, (9, -1, -2))",
    "D[l, i] = concat((A[j, i], A[j, i]), (j, j) -> l)",
    "D[k, i] = slice(A[j, i], j -> k, (9, -1, -1)) + slice(A[j, i], j -> k, (0, 10, 1))",   # (it was refused)
    "D[k, i] = slice(A[j, i], j -> k, (0, 5, 1)) + slice(slice(A[j, i], j -> m, (1, 10, 1)), m -> k, (0, 9, 2))",
]


def matrix(fill, finite=False):
    rng = np.random.default_rng(5)
    a = np.where(rng.random((10, 4)) < 0.5, rng.integers(1, 9, (10, 4)).astype(float), fill)
    a[3] = fill   # (a row of the fill)
    if not finite:   # (the lattice refuses NaN or inf under *, naming looplets)
        a[[0, 7], 1] = [np.nan, np.inf]
    return a


@pytest.mark.parametrize("fmt, out", [("csr", "csr"), ("csr", "dense"), ("dense", "coo")])
@pytest.mark.parametrize("program, fill", [(p, f) for p in PROGRAMS for f in [0.0, np.nan]
                                           # (the lattice computes + and * at a fill of 0 only: it refuses,
                                           # naming looplets)
                                           if f == 0.0 or "concat" in p])
def test_one_tensor_under_two_operators_binding_one_name(program, fill, fmt, out):
    A = ss.Tensor.from_numpy(matrix(fill, finite="*" in program), (csr if fmt == "csr" else dense)(fill=fill), name="A")
    want, _ = ss.evaluate(program, A=A)
    k = ss.lower(program, "lattice", A=A, D={"csr": csr, "coo": coo, "dense": dense}[out](fill=fill))
    np.testing.assert_array_equal(k(A=A).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(A=A).to_numpy(), want)
    assert not any(s.stage == "retry" for s in k.trace.steps)


def test_the_numpy_meaning():
    a = matrix(0.0)
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    got = ss.lower(PROGRAMS[0], "lattice", A=A, D="csr")(A=A).to_numpy()
    np.testing.assert_array_equal(got, a[0::2] + a[1::2])


def test_distinct_bindings_renames_the_later_binding_only():
    e = parse(PROGRAMS[2]).rhs
    assert str(distinct_bindings(e, {"l", "i"})) == "concat((A[j, i], A[j2, i]), (j, j2) -> l)"
    once = parse("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]").rhs
    assert distinct_bindings(once) == once
