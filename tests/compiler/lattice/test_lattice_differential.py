"""Random differential tests: compiled lattice kernels against the dense oracle.

Expressions, formats, shapes, densities (empty, all-fill, full) and fill values are drawn
by hypothesis; every kernel is also checked by the lattice brute-force verification that
runs during lowering.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, evaluate, lower
from compiler.format import Format, coo, csr, dcsr, dense, sparse_vector
from compiler.levels import Dense, Element, SparseByteMap

VEC = {"sv": sparse_vector, "dense": lambda **kw: dense(1, **kw),
       "bytemap": lambda fill=0.0: Format(SparseByteMap(Element(fill)))}
MAT = {"csr": csr, "dcsr": dcsr, "coo": coo, "dense": lambda **kw: dense(2, **kw),
       "bytemap": lambda fill=0.0: Format(Dense(SparseByteMap(Element(fill))))}


@st.composite
def vector_expr(draw, depth=2):
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(["b[i]", "c[i]", "d[i]"]))
    op = draw(st.sampled_from(["+", "*", "-", "min", "max"]))
    a, b = draw(vector_expr(depth=depth - 1)), draw(vector_expr(depth=depth - 1))
    return f"({a} {op} {b})" if op in "+*-" else f"{op}({a}, {b})"


def data(rng, shape, density, fill):
    a = rng.integers(-3, 5, size=shape).astype(float)
    a[rng.random(shape) >= density] = fill
    return a


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vector_expr(), st.fixed_dictionaries({t: st.sampled_from(list(VEC)) for t in "bcd"}),
       st.sampled_from([0.0, 1.0]), st.sampled_from([0, 1, 7]), st.sampled_from([0.0, 0.3, 1.0]),
       st.booleans(), st.integers(0, 2 ** 16))
def test_vector_expressions(expr, fmts, fill, n, density, sparse_out, seed):
    rng = np.random.default_rng(seed)
    prog = f"a[i] = {expr}"
    names = [t for t in "bcd" if f"{t}[i]" in expr]
    tensors = {t: Tensor.from_numpy(data(rng, (n,), density, fill), VEC[fmts[t]](fill=fill), name=t)
               for t in names}
    want, wfill = evaluate(prog, **tensors)
    kw = dict(tensors)
    if sparse_out:
        kw["a"] = sparse_vector(fill=float(wfill))
    # half the examples run checked, so an out-of-bounds write fails the test instead of crashing it
    got = lower(prog, checked=seed % 2 == 0, **kw)(**tensors)
    np.testing.assert_allclose(got.to_numpy(), want)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, j] * B[i, j]",
                        "C[i, j] = max(A[i, j], B[i, j])", "y[i] = A[i, j] * x[j]",
                        "y[i] = sum[j](A[i, j]) + x[i]", "y[i] = max[j](A[i, j] * B[i, j])"]),
       st.sampled_from(list(MAT)), st.sampled_from(list(MAT)), st.sampled_from(list(VEC)),
       st.tuples(st.integers(0, 6), st.integers(0, 6)), st.sampled_from([0.0, 0.2, 1.0]),
       st.booleans(), st.integers(0, 2 ** 16))
def test_matrix_expressions(prog, fa, fb, fx, shape, density, sparse_out, seed):
    rng = np.random.default_rng(seed)
    m, n = shape
    tensors = {"A": Tensor.from_numpy(data(rng, (m, n), density, 0.0), MAT[fa](), name="A")}
    if "B[" in prog:
        tensors["B"] = Tensor.from_numpy(data(rng, (m, n), density, 0.0), MAT[fb](), name="B")
    if "x[" in prog:
        size = n if "x[j]" in prog else m
        tensors["x"] = Tensor.from_numpy(data(rng, (size,), 0.5, 0.0), VEC[fx](), name="x")
    want, _ = evaluate(prog, **tensors)
    kw = dict(tensors)
    out = prog.split("[")[0]
    if sparse_out:
        kw[out] = fa if out == "C" and fa not in ("dense", "bytemap") else ("sv" if out == "y" else "dense")
        kw[out] = {"sv": sparse_vector()}.get(kw[out], kw[out])
        kw[out] = MAT[kw[out]]() if kw[out] in MAT else kw[out]
    # half the examples run checked, so an out-of-bounds write fails the test instead of crashing it
    got = lower(prog, checked=seed % 2 == 0, **kw)(**tensors)
    np.testing.assert_allclose(got.to_numpy(), want)
