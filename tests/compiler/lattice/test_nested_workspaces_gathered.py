"""A sparse output gathered whole in a dense workspace where a reduction runs outside its index over one nested
inside it (compiler.lattice.nested_workspaces.gather_output, through plan_steps.auto_workspace): numpy's
``xp.prod(a3 @ b, axis=(0, 2))`` into a sparse vector, ``out[i] = prod[j, k](sum[l](A[j, i, l] * B[l, k]))``.

On main the lattice refused it ("the reduction is not innermost, so it would scatter into out"): the loops run
``j, i`` (A's order), the sum is gathered in ``w[k]`` per ``(j, i)``, and no precompute reaches past that
workspace. Now the product is gathered in ``v[i]`` (starting at 1), swept once to append. Against the dense
oracle, the IR and the CFIR interpreters, with fills 0, 1 and NaN, NaN, ±inf and -0.0 stored (a NaN anywhere in a
product is NaN), empty and all-fill tensors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp, values
from compiler.lattice import Setup, build_cfir
from compiler.lattice.cfir_interpreter import interpret_cfir
from compiler.notation import parse
from compiler.runtime import facts_of
from tests.compiler.lattice.test_seq_split_straddle_sort import part

nan, inf = np.nan, np.inf
PRODSUM = "out[i] = prod[j, k](sum[l](A[j, i, l] * B[l, k]))"


def gathered(A, B, checked=False):
    """``PRODSUM`` into a sparse vector (of the result's fill) by the lattice, gathered in a dense workspace (a
    ``precompute`` step saying so, no retry), right against evaluate, the IR and the CFIR interpreters."""
    with np.errstate(all="ignore"):
        want, fill = ss.evaluate(PRODSUM, A=A, B=B)
        out = ss.parse_format("sparse_vector", ndim=1, fill=fill)
        k = ss.lower(PRODSUM, strategy="lattice", checked=checked, A=A, B=B, out=out)
        assert any("a dense array, swept once" in s.note for s in k.trace.find("precompute")), k.trace.stages()
        got = k(A=A, B=B)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(A=A, B=B).to_numpy(), want)
        # (planned as the kernel was: under what the stored values may hold, NaN and inf here)
        with values.assuming({"A": facts_of(A), "B": facts_of(B)}):
            setup = Setup.create(parse(PRODSUM), {"A": A.format, "B": B.format, "out": out})
            cfir = build_cfir(setup.statement, setup)
        np.testing.assert_array_equal(interpret_cfir(cfir, setup, A=A, B=B), want)
    return k


@pytest.mark.parametrize("fill", [0.0, 1.0, nan], ids=["fill0", "fill1", "fillnan"])
@pytest.mark.parametrize("fa, fb", [("csf", "csr"), ("csf", "coo"), ("coo", "dense")])
def test_the_product_of_sums_into_a_sparse_vector(fa, fb, fill):
    A = part((2, 3, 4), fa, fill, 1, odd=(nan, -inf), density=0.7)
    B = part((4, 2), fb, fill, 2, odd=(inf, -0.0), density=0.7)
    gathered(A, B, checked=(fa, fb, fill) == ("csf", "csr", 0.0))


@pytest.mark.parametrize("fill", [0.0, 1.0, nan], ids=["fill0", "fill1", "fillnan"])
def test_signed_zeros_and_no_nan(fill):
    # (-0.0 stored: a product of terms that are each a -0.0 or a 1.0 keeps its sign)
    a = np.full((2, 3, 2), fill)
    a[:, :, 0] = 1.0
    a[1, 2, 0] = -0.0
    A = Tensor.from_numpy(a, ss.parse_format("csf", ndim=3, fill=fill))
    B = Tensor.from_numpy(np.array([[1.0, 1.0], [fill, fill]]), ss.parse_format("csr", fill=fill))
    gathered(A, B)


@pytest.mark.parametrize("shape", [(0, 3, 4), (2, 0, 4), (2, 3, 0)], ids=["no-j", "no-i", "no-l"])
def test_empty_extents(shape):
    A = Tensor.from_numpy(np.zeros(shape), "csf")
    gathered(A, Tensor.from_numpy(np.ones((shape[2], 2)), "csr"))


@pytest.mark.parametrize("fill", [0.0, 1.0, nan], ids=["fill0", "fill1", "fillnan"])
@pytest.mark.parametrize("density", [0.0, 1.0], ids=["all-fill", "full"])
def test_all_fill_and_full_tensors(fill, density):
    gathered(part((2, 3, 4), "csf", fill, 5, density=density), part((4, 3), "csr", fill, 6, density=density))


def test_the_array_form():
    a = part((2, 3, 4), "csf", 0.0, 3, odd=(-inf,), density=0.9)
    b = part((4, 2), "csr", 0.0, 4, odd=(nan,), density=0.9)
    with np.errstate(all="ignore"):
        want = np.prod(np.einsum("jil,lk->jik", a.to_numpy(), b.to_numpy()), axis=(0, 2))
        k = xp.prod(xp.asarray(a) @ xp.asarray(b), axis=(0, 2)).lower(ss.parse_format("sparse_vector", ndim=1),
                                                                     strategy="lattice")
        assert "retry" not in k.trace.stages()
        np.testing.assert_array_equal(k().to_numpy(), want)


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(["csf", "coo", "dense"]), st.sampled_from(["csr", "coo", "dense"]),
       st.sampled_from([0.0, 1.0, nan]), st.sampled_from([0.0, 0.5, 0.9, 1.0]),
       st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)), st.integers(0, 2 ** 16))
def test_property(fa, fb, fill, density, shape, seed):
    j, i, l, k = shape
    A = part((j, i, l), fa, fill, seed, odd=(nan, -inf, -0.0), density=density)
    B = part((l, k), fb, fill, seed + 1, odd=(inf,), density=density)
    with np.errstate(all="ignore"):
        want, f = ss.evaluate(PRODSUM, A=A, B=B)
        kernel = ss.lower(PRODSUM, strategy="lattice", A=A, B=B, out=ss.parse_format("sparse_vector", ndim=1, fill=f))
        np.testing.assert_array_equal(kernel(A=A, B=B).to_numpy(), want)
        np.testing.assert_array_equal(kernel.interpret(A=A, B=B).to_numpy(), want)
