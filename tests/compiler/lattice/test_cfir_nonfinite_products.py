"""A sum of products ``y[i] = sum[l](A[l] * B[l, i])`` whose factors store inf, -inf, NaN, 0.0 or -0.0 beside
another factor's fill (0, 1 or NaN), by the lattice's CFIR interpreters (the CFIR's and the sequence CFIR's),
the compiled kernel and the IR interpreter, against the dense oracle (compiler.evaluate); also with a
concatenation, a slice or a ravel of A before the product.

Two helpers saw the CFIR interpreter leave out ``inf * 0`` (NaN) once. The interpreter and the lowering agree
with the oracle wherever the CFIR is built for what the tensors hold (a sweep of every format pair and fill,
stored values drawn from the seven above, found no disagreement): the CFIR built as the tests built it,
``Setup.create`` outside ``values.assuming``, assumes finite values (as TACO does), so its intersection skips
where ``B`` stores nothing, and run on an ``A`` storing inf it answered 0 where the oracle and the kernel answer
NaN. Now the interpreter refuses values its CFIR was not built for, naming the tensor, and
``cfir_evaluate`` builds the CFIR for the tensors' values, as ``lower()`` does."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, UsageError, evaluate, parse
from compiler.entries import from_entries
from compiler.lattice.cfir_builder import build_cfir
from compiler.lattice.cfir_interpreter import cfir_evaluate, interpret_cfir
from compiler.lattice.plan import Setup
from tests.compiler.lattice.test_seq_concat_fills import one_kernel

nan, inf = np.nan, np.inf

PRODUCT = "y[i] = sum[l](A[l] * B[l, i])"
#: the product with a shape operator before it, A's parts named as in the drawn operands
SEQUENCES = {
    "concat": "y[i] = sum[l](concat((A[p], A1[q]), (p, q) -> l) * B[l, i])",
    "slice": "y[i] = sum[l](slice(A[p], p -> l, (1, {stop}, 2)) * B[l, i])",
    "ravel": "y[i] = sum[l](collapse(A[p, q], (p, q) -> l) * B[l, i])",
}
VALUES = [1.0, 2.0, -0.0, 0.0, inf, -inf, nan]


def stored(values, mask, fmt, fill) -> Tensor:
    """A tensor of ``fmt`` and ``fill`` storing ``values`` exactly where ``mask`` is (a stored value may equal
    the fill: an explicit 0.0 or NaN); a dense format stores everything, the fill where ``mask`` is not."""
    values = np.asarray(values, dtype=float)
    f = ss.parse_format(fmt, ndim=values.ndim, fill=fill)
    if f.is_dense:
        return Tensor.from_numpy(np.where(mask, values, fill), f)
    keep, vals = np.transpose(mask, f.mode_order), np.transpose(values, f.mode_order)
    root = from_entries(f, [c.astype(np.int64) for c in np.nonzero(keep)], vals[keep], list(keep.shape), "t")
    return Tensor(root, shape=values.shape, mode_order=f.mode_order)


def check_product(**tensors):
    """``PRODUCT`` by the CFIR interpreter, the compiled kernel and the IR interpreter, against the oracle."""
    with np.errstate(invalid="ignore"):
        want = evaluate(PRODUCT, **tensors)[0]
        np.testing.assert_array_equal(cfir_evaluate(parse(PRODUCT), **tensors), want)
        k = ss.lower(PRODUCT, strategy="lattice", **tensors)
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)


def finite_setup(**tensors):
    """The Setup and CFIR of ``PRODUCT`` built outside ``values.assuming``: for finite values."""
    setup = Setup.create(parse(PRODUCT), {n: t.format for n, t in tensors.items()})
    return setup, build_cfir(setup.statement, setup)


#: the case found: A stores inf at l = 0, where B's row stores nothing at i = 0 (0 there): inf * 0 is NaN
FOUND = dict(A=([inf], [True], "sparse_vector", 0.0), B=([[0.0, 2.0]], [[False, True]], "csr", 0.0))


def test_inf_times_an_absent_0_is_nan_in_the_cfir_interpreter():
    tensors = {name: stored(*spec) for name, spec in FOUND.items()}
    assert evaluate(PRODUCT, **tensors)[0].tolist()[1] == inf and np.isnan(evaluate(PRODUCT, **tensors)[0][0])
    check_product(**tensors)
    # the CFIR built for finite values intersects A with B's row: run on A's inf it answered [0, inf] (on main);
    # now it is refused, naming A and what it holds
    setup, cfir = finite_setup(**tensors)
    with pytest.raises(UsageError, match=r"A may hold \+inf, but the CFIR was built assuming A finite"):
        interpret_cfir(cfir, setup, **tensors)
    # ... and serves finite values as before
    finite = {"A": stored([3.0], [True], "sparse_vector", 0.0), "B": tensors["B"]}
    np.testing.assert_array_equal(interpret_cfir(cfir, setup, **finite), [0.0, 6.0])


def test_a_nan_fill_beside_stored_zeros_and_negative_zeros():
    # (B's NaN fill meets A's stored 0.0 and -0.0; A's fill 1 meets B's stored inf: both NaN or inf, not skipped)
    A = stored([0.0, -0.0, 2.0, 1.0], [True, True, False, True], "coo", 1.0)
    B = stored([[inf, -0.0], [nan, 1.0], [2.0, -inf], [0.0, 0.0]],
               [[True, False], [False, True], [True, True], [False, False]], "csc", nan)
    check_product(A=A, B=B)


@st.composite
def operands(draw):
    """A product (``PRODUCT`` or one of ``SEQUENCES``) and its tensors: each of a drawn format and fill (0, 1,
    NaN), extents up to 4, each entry stored or not, stored values from ``VALUES``."""
    kind = draw(st.sampled_from(["product", "product", *SEQUENCES]))
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    fill = st.sampled_from([0.0, 1.0, nan])

    def tensor(shape, formats, fill):
        size = int(np.prod(shape))
        values = draw(st.lists(st.sampled_from(VALUES), min_size=size, max_size=size))
        mask = draw(st.lists(st.booleans(), min_size=size, max_size=size))
        return stored(np.reshape(values, shape), np.reshape(mask, shape), draw(st.sampled_from(formats)), fill)

    vector, matrix = ["dense", "sparse_vector", "coo"], ["dense", "csr", "csc", "coo", "dcsr"]
    a_fill = draw(fill)
    if kind == "concat":
        n = max(n, 2)
        cut = draw(st.integers(1, n - 1))
        parts = {"A": tensor((cut,), vector, a_fill), "A1": tensor((n - cut,), vector, a_fill)}
    elif kind == "slice":
        parts = {"A": tensor((2 * n,), vector, a_fill)}      # (A[1:2n:2]: n entries)
    elif kind == "ravel":
        rows = draw(st.sampled_from([r for r in (1, 2) if n % r == 0]))
        parts = {"A": tensor((rows, n // rows), ["dense", "csr", "coo", "dcsr"], a_fill)}
    else:
        parts = {"A": tensor((n,), vector, a_fill)}
    return kind, {**parts, "B": tensor((n, m), matrix, draw(fill))}


@settings(max_examples=6, deadline=None)
@given(operands())
@example(("product", {name: stored(*spec) for name, spec in FOUND.items()}))
@example(("concat", {"A": stored([inf], [True], "sparse_vector", 0.0), "A1": stored([nan], [True], "dense", 0.0),
                     "B": stored([[1.0, 0.0], [2.0, -0.0]], [[False, True], [True, False]], "csr", 0.0)}))
def test_products_of_non_finite_values_by_every_oracle(drawn):
    kind, tensors = drawn
    if kind == "product":
        check_product(**tensors)
        # (the CFIR built for finite values is refused where a tensor holds more, else agrees)
        setup, cfir = finite_setup(**tensors)
        with np.errstate(invalid="ignore"):
            want = evaluate(PRODUCT, **tensors)[0]
        if all(t.value_facts.finite for t in tensors.values()):
            np.testing.assert_array_equal(interpret_cfir(cfir, setup, **tensors), want)
        else:
            with pytest.raises(UsageError, match="the CFIR was built assuming"):
                interpret_cfir(cfir, setup, **tensors)
    else:
        # (the sequence CFIR's interpreter, in the kernel's loop order, the kernel and the IR interpreter)
        one_kernel(SEQUENCES[kind].format(stop=2 * tensors["B"].shape[0]), **tensors)
