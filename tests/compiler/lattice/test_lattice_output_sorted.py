"""A sparse output of three modes whose loops cannot follow its storage order, every entry sorted in the kernel
(compiler/lattice/sorted_output.py, emit_sorted.py): numpy's ``permute_dims(a3 @ b, (1, 2, 0))`` and
``permute_dims(a3 * c3, perm)`` into a CSF or a COO.

On main the lattice found no loop order walking every tensor as stored and built the output in the loops' mode
order, converted after each call (a ``convert`` step, ``out.asformat`` in Python). Now the loops run in the
inputs' order, each entry is bucketed by the output's first stored mode and each bucket sorted by the others as
one int64 key, then appended level by level (an ``output-order`` step saying so, no conversion). Each kernel is
checked against evaluate (the dense reference) and the IR interpreter, one bounds-checked.

Where the plan reads one input in another mode order instead (converted before each call), the output is sorted
when that costs less (compiler/lattice/sorted_output.py, ``sort_over_converting``): ``permute_dims(a3 @ b, (2, 0,
1))``, whose converted ``b`` made the loops walk all of ``a3`` at every ``i``, and a product with a dense operand,
each of whose entries is one of ``a3``'s; ``permute_dims(a3 @ b, (1, 0, 2))`` (more entries than ``a3``) and a
union with a dense operand keep converting ``a3``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.errors import KernelError
from tests.compiler.lattice.test_seq_split_straddle_sort import part

nan, inf = np.nan, np.inf

#: ``permute_dims(a3 @ b, perm)`` and ``permute_dims(a3 * c3, perm)`` as index notation, by perm: the output
#: ``out[i, j, k]`` of ``A`` (3-D, stored ``(r0, r1, l)``) and ``B`` (a matrix ``l, r2``), or ``C`` (as ``A``)
PRODUCTS = {
    (1, 2, 0): "out[i, j, k] = sum[l](A[k, i, l] * B[l, j])",
    (0, 2, 1): "out[i, j, k] = sum[l](A[i, k, l] * B[l, j])",
    (2, 1, 0): "out[i, j, k] = sum[l](A[k, j, l] * B[l, i])",
    (2, 0, 1): "out[i, j, k] = sum[l](A[j, k, l] * B[l, i])",
}
#: ``permute_dims(a3 @ b, (1, 0, 2))``: ``A`` read as stored ``j, i, l`` (converted) costs less than sorting
#: ``out``, whose entries outnumber ``A``'s (the plan's choice kept)
CONVERTING = "out[i, j, k] = sum[l](A[j, i, l] * B[l, k])"
ELEMENTWISE = {
    (1, 2, 0): "out[i, j, k] = A[k, i, j] * C[k, i, j]",
    (2, 0, 1): "out[i, j, k] = A[j, k, i] * C[j, k, i]",
    (0, 2, 1): "out[i, j, k] = A[i, k, j] * C[i, k, j]",
    (1, 0, 2): "out[i, j, k] = A[j, i, k] + C[j, i, k]",
    (2, 1, 0): "out[i, j, k] = A[k, j, i] * C[k, j, i]",
}


def sorted_kernel(program, out, checked=False, **tensors):
    """``program`` into ``out`` (a format name of the result's fill) by the lattice, every entry sorted in the
    kernel (an ``output-order`` step saying so, no conversion), right against evaluate and the IR interpreter;
    the kernel."""
    with np.errstate(invalid="ignore", over="ignore"):
        want, fill = ss.evaluate(program, **tensors)
        fmt = ss.parse_format(out, ndim=3, fill=fill)
        k = ss.lower(program, strategy="lattice", checked=checked, **tensors, out=fmt)
        assert "convert" not in k.trace.stages(), [s.note for s in k.trace.find("convert")]
        assert "sort every entry" in k.trace.find("output-order")[0].note
        got = k(**tensors)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    return k


def operands(program, fill, seed, fa="csf", fb="csr", density=0.5):
    """``A`` (3-D, NaN and -inf stored) and ``B`` (a matrix, +inf and -0.0 stored) or ``C`` (3-D) of ``program``."""
    A = part((2, 3, 4), fa, fill, seed, odd=(nan, -inf), density=density)
    if "B[" in program:
        return {"A": A, "B": part((4, 3 if "B[l, j]" in program else 2), fb, fill, seed + 1, odd=(inf, -0.0),
                                  density=density)}
    return {"A": A, "C": part((2, 3, 4), fa if fb == "csr" else fb, fill, seed + 1, odd=(inf, -0.0),
                              density=density)}


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", ["csf", "coo"])
@pytest.mark.parametrize("perm", sorted(PRODUCTS))
def test_a_permuted_matrix_product(perm, out, fill):
    program = PRODUCTS[perm]
    k = sorted_kernel(program, out, checked=(out, fill) == ("csf", 0.0), **operands(program, fill, sum(perm)))
    # (the plan read B as a CSC instead, walking A again at every i: the sort costs less)
    assert ("sorted rather than reading B as csc" in k.trace.find("output-order")[0].note) == (perm == (2, 0, 1))


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", ["csf", "coo"])
@pytest.mark.parametrize("perm", sorted(ELEMENTWISE))
def test_a_permuted_elementwise_product(perm, out, fill):
    program = ELEMENTWISE[perm]
    sorted_kernel(program, out, **operands(program, fill, 3 * perm[0] + perm[1], fb="coo"))


@pytest.mark.parametrize("program", [PRODUCTS[(1, 2, 0)], ELEMENTWISE[(2, 1, 0)]])
def test_empty_and_all_fill_inputs(program):
    z = np.zeros((2, 3, 4))
    full = np.arange(1.0, 25.0).reshape(2, 3, 4)
    second = (lambda a: a.reshape(-1)[:12].reshape(4, 3)) if "B[" in program else (lambda a: a)
    # (beside a dense C, A may be converted instead: test_sorted_rather_than_converting_an_input_with_as_many_entries)
    name, other = ("B", "dense") if "B[" in program else ("C", "csf")
    for x, y in ((z, z), (z, full), (full, z), (full, full)):
        sorted_kernel(program, "csf", A=Tensor.from_numpy(x, "csf"), **{name: Tensor.from_numpy(second(y), other)})
    ones = ss.parse_format("csf", ndim=3, fill=1.0)
    sorted_kernel(program, "coo", A=Tensor.from_numpy(np.ones((2, 3, 4)), ones),
                  **{name: Tensor.from_numpy(second(np.ones((2, 3, 4))), ss.parse_format(
                      other, ndim=second(z).ndim, fill=1.0))})


def test_sorted_rather_than_an_input_walked_again_per_coordinate():
    # (main read B as a CSC (test_a_permuted_matrix_product) or a COO stored i, l, converted before each call,
    # its loops i, j, k, l walking all of A at every i: 270 ms against 35 ms sorted, a3 of 120 x 120 x 360 and
    # b of 360 x 360 at 2%)
    program = PRODUCTS[(2, 0, 1)]
    note = sorted_kernel(program, "coo", **operands(program, nan, 5, fb="coo")).trace.find("output-order")[0].note
    assert "sorted rather than reading B as coo in mode order 1, 0" in note
    assert "at every i the loops walk A[j, k, l] again" in note


@pytest.mark.parametrize("perm, out", [((2, 0, 1), "csf"), ((1, 0, 2), "coo")])
def test_sorted_rather_than_converting_an_input_with_as_many_entries(perm, out):
    # (a dense C of finite values at a fill of 0: each of out's entries is one of A's, sorted in the kernel
    # rather than A converted before each call, 9 ms against 2 ms on the sizes above; at a NaN fill, or
    # beside an inf, the product has entries where A has none: A is converted)
    program = ELEMENTWISE[perm].replace("+", "*")
    c = np.arange(2.0, 26.0).reshape(2, 3, 4)
    a = part((2, 3, 4), "csf", 0.0, 7, odd=(nan, -inf))
    k = sorted_kernel(program, out, A=a, C=Tensor.from_numpy(c, "dense"))
    assert "each of out's entries is one of A's" in k.trace.find("output-order")[0].note
    c[1, 2, 3] = inf
    converted_kernel(program, out, "A", A=a, C=Tensor.from_numpy(c, "dense"))
    a = part((2, 3, 4), "csf", nan, 7, odd=(-inf,))
    converted_kernel(program, out, "A", A=a, C=Tensor.from_numpy(c, ss.parse_format("dense", ndim=3, fill=nan)))


def converted_kernel(program, out, converted, **tensors):
    """``program`` into ``out`` by the lattice with the input ``converted`` read in another mode order
    (converted before each call, the plan's choice), right against evaluate and the IR interpreter."""
    with np.errstate(invalid="ignore", over="ignore"):
        want, fill = ss.evaluate(program, **tensors)
        k = ss.lower(program, strategy="lattice", **tensors, out=ss.parse_format(out, ndim=3, fill=fill))
        assert [s.note.split(" is ")[0] for s in k.trace.find("convert")] == [converted]
        assert not k.trace.find("output-order")
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)


@pytest.mark.parametrize("fb", ["csr", "coo"])
def test_an_input_converted_where_it_costs_less(fb):
    # (permute_dims(a3 @ b, (1, 0, 2)): out has more entries than A, 11 ms converting A against 16 ms sorted;
    # B a COO is merged at its first loop, l, at each (i, j), as a CSR's row is looked up: not walked whole
    # again; a union with a dense C fills every entry of out: 33 ms converting against 134 ms sorted)
    converted_kernel(CONVERTING, "csf", "A", **operands(CONVERTING, 0.0, 9, fb=fb))
    a = part((2, 3, 4), "csf", 0.0, 10, odd=(nan, -inf))
    c = Tensor.from_numpy(np.arange(2.0, 26.0).reshape(2, 3, 4), "dense")
    converted_kernel(ELEMENTWISE[(1, 0, 2)], "coo", "A", A=a, C=c)


def test_each_entry_is_kept_as_it_is():
    # (one entry per coordinate: -0.0 beside a fill of 1.0 stays -0.0, as the output appends it)
    a = np.ones((2, 3, 4))
    a[1, 2, 3] = -0.0
    A = Tensor.from_numpy(a, ss.parse_format("csf", ndim=3, fill=1.0))
    C = Tensor.from_numpy(np.full((2, 3, 4), 2.0), ss.parse_format("csf", ndim=3, fill=1.0))
    k = sorted_kernel(ELEMENTWISE[(1, 2, 0)], "coo", A=A, C=C)
    got = k(A=A, C=C)
    assert np.signbit(got.to_numpy()[2, 3, 1]) and got.to_numpy()[0, 0, 0] == 2.0


def test_the_array_form_into_csf_and_coo():
    a = part((3, 4, 5), "csf", 0.0, 1, odd=(nan,))
    b = part((5, 6), "csr", 0.0, 2, odd=(-inf,))
    c = part((3, 4, 5), "coo", 0.0, 3, odd=(inf,))
    with np.errstate(invalid="ignore"):
        for expr, want in ((xp.permute_dims(xp.asarray(a) @ xp.asarray(b), (1, 2, 0)),
                            np.transpose(np.einsum("kil,lj->kij", a.to_numpy(), b.to_numpy()), (1, 2, 0))),
                           (xp.permute_dims(xp.asarray(a) @ xp.asarray(b), (2, 0, 1)),   # (was b converted)
                            np.transpose(np.einsum("kil,lj->kij", a.to_numpy(), b.to_numpy()), (2, 0, 1))),
                           (xp.permute_dims(xp.asarray(a) * xp.asarray(c), (2, 0, 1)),
                            np.transpose(a.to_numpy() * c.to_numpy(), (2, 0, 1)))):
            for out in ("csf", "coo"):
                k = expr.lower(ss.parse_format(out, ndim=3), strategy="lattice")
                assert "convert" not in k.trace.stages() and k.trace.find("output-order")
                np.testing.assert_array_equal(k().to_numpy(), want)


def test_a_key_spanning_more_than_an_int64_is_refused_as_the_kernel_runs():
    # (the kernel's extents are its arguments: it checks them before it sorts)
    big = 2 ** 40
    A = Tensor.from_coords([[0, big - 1], [1, 0], [5, 7]], [1.0, 2.0], (big, 2, big), format="csf")
    C = Tensor.from_coords([[0], [1], [5]], [3.0], (big, 2, big), format="csf")
    fmt = ss.parse_format("coo", ndim=3)
    k = ss.lower(ELEMENTWISE[(1, 2, 0)], strategy="lattice", A=A, C=C, out=fmt)
    with pytest.raises(KernelError, match=r"sorts every entry by its modes after the first as one int64 key"):
        k(A=A, C=C)


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(sorted(PRODUCTS.items()) + sorted(ELEMENTWISE.items()) + [((1, 0, 2), CONVERTING)]),
       st.sampled_from(["csf", "coo"]),
       st.sampled_from(["csf", "coo", "dense"]), st.sampled_from(["csr", "coo", "dense"]),
       st.sampled_from([0.0, 1.0, nan]), st.sampled_from([0.0, 0.4, 1.0]), st.integers(0, 2 ** 16))
def test_property(case, out, fa, fb, fill, density, seed):
    _, program = case
    tensors = operands(program, fill, seed, fa, fb if "B[" in program else fa, density)
    with np.errstate(invalid="ignore", over="ignore"):
        want, f = ss.evaluate(program, **tensors)
        k = ss.lower(program, strategy="lattice", **tensors, out=ss.parse_format(out, ndim=3, fill=f))
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
