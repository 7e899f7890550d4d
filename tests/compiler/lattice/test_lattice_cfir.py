"""CFIR: construction from lattices, printing, and its interpreter against the oracle."""

import numpy as np
import pytest

from compiler import Tensor, evaluate, parse
from compiler.format import coo, csc, csf, csr, dcsr, dense, sparse_vector
from compiler.lattice.cfir import CForall, CLoop
from compiler.lattice.cfir_interpreter import interpret_cfir
from compiler.lattice.cfir_builder import build_cfir
from compiler.lattice.plan import Setup

CASES = [
    ("y[i] = A[i, j] * x[j]", {"A": (csr(), (5, 6)), "x": (dense(1), (6,))}),
    ("y[i] = A[i, j] * x[j]", {"A": (csc(), (5, 6)), "x": (dense(1), (6,))}),
    ("y[i] = A[i, j] * x[j]", {"A": (coo(), (5, 6)), "x": (sparse_vector(), (6,))}),
    ("y[i] = A[i, j] * x[j] + d[i]", {"A": (dcsr(), (5, 6)), "x": (sparse_vector(), (6,)),
                                      "d": (sparse_vector(), (5,))}),
    ("a[i] = b[i] * (c[i] + d[i])", {k: (sparse_vector(), (12,)) for k in "bcd"}),
    ("C[i, j] = A[i, j] + B[i, j]", {"A": (dcsr(), (5, 6)), "B": (coo(), (5, 6))}),
    ("A[i, j] = B[i, j, k] * c[k]", {"B": (csf(), (3, 4, 5)), "c": (sparse_vector(), (5,))}),
    ("s = max[i](b[i])", {"b": (sparse_vector(), (9,))}),
]


@pytest.mark.parametrize("prog,spec", CASES, ids=[c[0] for c in CASES])
def test_interpreter_matches_oracle(prog, spec):
    rng = np.random.default_rng(3)
    p = parse(prog)
    tensors = {}
    for name, (fmt, shape) in spec.items():
        a = rng.integers(1, 5, size=shape).astype(float)
        a[rng.random(shape) > 0.4] = 0
        tensors[name] = Tensor.from_numpy(a, fmt, name=name)
    setup = Setup.create(p, {n: t.format for n, t in tensors.items()})
    cfir = build_cfir(setup.statement, setup)
    got = interpret_cfir(cfir, setup, **tensors)
    want, _ = evaluate(p, **tensors)
    np.testing.assert_allclose(got, want)


def test_union_cfir_shape():
    p = parse("a[i] = b[i] + c[i]")
    setup = Setup.create(p, {"b": sparse_vector(), "c": sparse_vector()})
    cfir = build_cfir(setup.statement, setup)
    assert isinstance(cfir, CForall) and len(cfir.loops) == 3
    top = cfir.loops[0]
    assert isinstance(top, CLoop) and [c.present for c in top.cases] == [("b[i]", "c[i]"), ("b[i]",), ("c[i]",)]
    text = str(cfir)
    assert "while i <- b0 ∩ c0:" in text and "case b0 c0: a[i] = b[i] + c[i]" in text


def test_dense_locators_are_printed_with():
    p = parse("a[i] = b[i] * c[i]")
    setup = Setup.create(p, {"b": dense(1), "c": sparse_vector()})
    assert "while i <- c0 with (b = i):" in str(build_cfir(setup.statement, setup))
