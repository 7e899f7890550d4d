"""A kernel of each kind built at the flags sparsescope ships (-O3), not the suite's -O0.

The rest of the suite builds at ``SPARSESCOPE_OPT=-O0`` (tests/conftest.py: GCC is about half the
suite's time). What the optimizer does (vectorizing, loop peeling, unswitching, inlining) can
expose a fault in the C that an unoptimized build hides, so here each kind of kernel (vectorized
loops, merges, workspaces, threads, galloping, shape operators, runs) is built at the shipped flags
and checked against the dense oracle, over formats, fills (NaN and infinities stored too) and densities.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.backend import build
from compiler.levels import Element
from compiler.looplets.compile import compile_program
from compiler.looplets.gallery import gustavson, triangles_gallop
from compiler.reference import evaluate
from compiler.testing import random_sparse


@pytest.fixture(autouse=True)
def shipped_flags(monkeypatch):
    monkeypatch.delenv("SPARSESCOPE_CFLAGS", raising=False)
    monkeypatch.delenv("SPARSESCOPE_OPT", raising=False)
    assert build.sized_flags(build.compiler_flags(), "int k;")[0] == "-O3"


PROGRAMS = [  # (index notation, output format or None, each operand's format and shape for a size n)
    ("y[i] = A[i, j] * x[j]", None, {"A": ("csr", (0, 1)), "x": ("dense", (1,))}),
    ("s = x[i] * z[i]", None, {"x": ("dense", (0,)), "z": ("dense", (0,))}),
    ("C[i, j] = A[i, j] + B[i, j]", "csr", {"A": ("csr", (0, 1)), "B": ("csr", (0, 1))}),
    ("C[i, j] = A[i, j] * B[i, j]", "coo", {"A": ("coo", (0, 1)), "B": ("csr", (0, 1))}),
    ("C[i, j] = A[i, k] * B[k, j]", "csr", {"A": ("csr", (0, 1)), "B": ("csr", (1, 0))}),
    ("y[i] = max(A[i, j] + x[j])", None, {"A": ("csr", (0, 1)), "x": ("dense", (1,))}),
]
VALUES = st.sampled_from([0.0, 1.5, -2.0, np.nan, np.inf, -np.inf])


def _operands(operands, n, density, seed, special):
    """Each operand in its format, of shape ``n`` (axis 0) or ``n + 1`` (axis 1) per axis, with one stored
    ``special`` value (NaN, an infinity...) where it has room."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, (fmt, axes) in operands.items():
        a = random_sparse(tuple(n + axis for axis in axes), density, rng, lo=-3, hi=4)
        if a.size and special != 0.0:
            a.flat[rng.integers(0, a.size)] = special
        out[name] = a if fmt == "dense" else ss.Tensor.from_numpy(a, fmt)
    return out


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("program, out, operands", PROGRAMS, ids=[p[0] for p in PROGRAMS])
@settings(max_examples=6)
@given(n=st.integers(0, 7), density=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 10**6), special=VALUES)
@example(n=5, density=0.3, seed=1, special=np.nan)
@example(n=0, density=0.3, seed=1, special=0.0)
def test_kernels_built_at_the_shipped_flags_agree_with_the_oracle(strategy, program, out, operands,
                                                                   n, density, seed, special):
    tensors = _operands(operands, n, density, seed, special)
    kw = dict(tensors)
    if out is not None:
        kw[program.split("[")[0]] = out
    want, _ = evaluate(program, **tensors)
    got = ss.lower(program, strategy, **kw)(**tensors)
    np.testing.assert_allclose(got.to_numpy(), want)


def test_threaded_spgemm_and_spmv_at_the_shipped_flags():
    if build.openmp_support() is not None:
        pytest.skip("the C compiler has no OpenMP")
    from compiler.lattice import Schedule
    rng = np.random.default_rng(4)
    a, b = random_sparse((60, 40), 0.2, rng), random_sparse((40, 50), 0.2, rng)
    A, B = ss.Tensor.from_numpy(a, "csr"), ss.Tensor.from_numpy(b, "csr")
    par = {"schedule": Schedule().parallelize("i")}
    C = ss.lower("C[i, j] = A[i, k] * B[k, j]", options=par, A=A, B=B, C="csr")(A=A, B=B)
    np.testing.assert_allclose(C.to_numpy(), a @ b)
    x = rng.random(40)
    y = ss.lower("y[i] = A[i, j] * x[j]", options=par, A=A, x=x)(A=A, x=x)
    np.testing.assert_allclose(y.to_numpy(), a @ x)


def test_loop_programs_at_the_shipped_flags():
    rng = np.random.default_rng(5)
    a, b = random_sparse((30, 20), 0.2, rng), random_sparse((20, 25), 0.2, rng)
    A, B = ss.Tensor.from_numpy(a, "csr"), ss.Tensor.from_numpy(b, "csr")
    np.testing.assert_allclose(compile_program(gustavson, C="csr", A=A, B=B)(A=A, B=B).to_numpy(), a @ b)
    g = np.tril(random_sparse((40, 40), 0.3, rng, lo=1, hi=2), -1)
    G = ss.Tensor.from_numpy(g, "csr")
    count = compile_program(triangles_gallop, C=ss.Tensor.from_numpy(np.zeros(()), Element(0.0)), A=G)(A=G)
    assert float(count) == (g @ g * g).sum()


def test_shape_operators_at_the_shipped_flags():
    rng = np.random.default_rng(6)
    a, b = random_sparse((6, 5), 0.4, rng), random_sparse((4, 5), 0.4, rng)
    x = ss.asarray(a, format="csr")
    y = ss.asarray(b, format="coo")
    for strategy in ("lattice", "looplets"):
        got = xp.concat([x[::2], y[::-1]], axis=0).compute(strategy=strategy)
        np.testing.assert_array_equal(got.to_numpy(), np.vstack([a[::2], b[::-1]]))
    np.testing.assert_array_equal(x.reshape(-1).compute().to_numpy(), a.reshape(-1))


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_user_functions_c_body_is_checked_at_the_shipped_flags(strategy):
    # (the probe's C built by GCC at -O3, as a kernel's is: a trap caught, a wrong value found, a right body kept)
    from compiler.errors import UserCodeError
    from compiler.user_functions import user_function
    a, b = np.array([0, 4, 6], np.int64), np.array([2, 0, 3], np.int64)
    tensors = {"a": ss.Tensor.from_numpy(a, "sparse_vector"), "b": ss.Tensor.from_numpy(b, "sparse_vector")}
    for body, message in (("return x / y;", r"its C body traps \(SIGFPE"), ("return x / 2 + y;", r"gives 0 at \(x=-1")):
        name = f"shipped{len(message)}_{strategy}"
        fn = user_function(name, lambda x, y: x // y if y else 0, body) if "traps" in message else \
            user_function(name, lambda x, y: x // 2 + y, body)
        with pytest.raises(UserCodeError, match=message):
            ss.lower(f"c[i] = {name}(a[i], b[i])", strategy=strategy, functions={name: fn}, **tensors)
    name = f"shipped_ok_{strategy}"
    fn = user_function(name, lambda x, y: x * 2 - y, "return x * 2 - y;")
    k = ss.lower(f"c[i] = {name}(a[i], b[i])", strategy=strategy, functions={name: fn}, **tensors)
    assert name in k.trace.find("user-functions")[0].note
    np.testing.assert_array_equal(k(**tensors).to_numpy(), a * 2 - b)
