"""Sparse outputs whose loops run out of their storage order, built by a scatter (issue 29, item 3).

A CSC output of loops in row order (``C[i, j] = A[i, j] + B[i, j]``, CSR inputs), a DCSC one, a CSR
output of a transpose, and Dense(Dense(SparseList)) outputs in mode orders the loops do not run are built in
their own order: phase 1 counts each fiber's entries, a prefix sum gives the fibers' starts, phase
2 stores each entry at its fiber's next slot and the gaps the fill left close after
(:mod:`compiler.lattice.scatter_output`). Before, each was built in the loops' order and converted
after each call (the trace's ``convert`` step), or an input was converted before it. Each kernel is
checked against the dense oracle, the IR interpreter and the storage ``Tensor.from_numpy`` builds.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.format import Format, csc, csr, parse_format
from compiler.testing import assert_canonical, assert_same_compressed, check_lowered, random_sparse

#: each case: the expression, the output's format for a fill, and the inputs' formats
CASES = {"csc-sum": ("C[i, j] = A[i, j] + B[i, j]", lambda f: csc(fill=f)),
         "csc-product": ("C[i, j] = A[i, j] * B[i, j]", lambda f: csc(fill=f)),
         "csc-difference": ("C[i, j] = A[i, j] - B[i, j]", lambda f: csc(fill=f)),
         "csr-transpose-sum": ("C[j, i] = A[i, j] + B[i, j]", lambda f: csr(fill=f)),
         # (a DCSC: its columns filled as a CSC's, those holding entries listed after)
         "dcsc-difference": ("C[i, j] = A[i, j] - B[i, j]", lambda f: dcsc(f))}


def dcsc(fill):
    """SparseList(SparseList) stored column-major."""
    return Format(parse_format("dcsr", fill=fill).root, (1, 0))


def matrices(shape, density, fill, seed, specials=False):
    """CSR A and B (B sharing some of A's entries, so a difference cancels them), NaN and infinities
    among the values with ``specials``."""
    rng = np.random.default_rng(seed)
    a = random_sparse(shape, density, rng, fill=fill)
    b = random_sparse(shape, density, rng, fill=fill)
    shared = (rng.random(shape) < 0.5) & (a != fill) & ~np.isnan(a)
    b[shared] = a[shared]
    if specials and a.size:
        stored = np.argwhere(~((a == fill) | (np.isnan(a) & np.isnan(fill))))
        for (r, c), v in zip(stored[:3], (np.nan, np.inf, -np.inf)):
            a[r, c] = v
    return {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "csr", fill=fill)}


def scattered(k, fmt):
    """The kernel built ``fmt`` itself by a scatter: no conversion, and the trace says how."""
    assert not k.lowered.conversions and k.lowered.output_format == fmt
    assert not k.trace.find("convert")
    (step,) = k.trace.find("output-order")
    assert "the kernel builds C in its own order" in step.note and "next slot" in step.note
    assert "phase 2, scatter" in k.c_source


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_an_output_out_of_its_loops_order_is_scattered(case, fill):
    expr, fmt = CASES[case]
    tensors = matrices((7, 6), 0.4, fill, seed=3, specials=True)
    want, out_fill = ss.evaluate(expr, **tensors)
    fmt = fmt(float(out_fill))
    # (a bounds-checked build of the sum: every entry of either operand is counted and scattered)
    k = check_lowered(expr, out=fmt, checked=case == "csc-sum", **tensors)
    scattered(k, fmt)
    got = k(**tensors)
    assert got.format == fmt
    assert_canonical(got, want)


def test_a_csc_sum_of_csr_matrices_matches_scipy_and_counts_per_column():
    rng = np.random.default_rng(4)
    a, b = (random_sparse((30, 20), 0.1, rng, empty=(3, 4)) for _ in range(2))
    a[:, 5] = b[:, 5] = 0.0   # (an empty column)
    b[:, 7] = -a[:, 7]        # (a column that cancels: its entries are all gaps)
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", A=A, B=B, C=csc())
    scattered(k, csc())
    assert "C1_next[j] += 1" in k.c_source.replace("jA", "j").replace("jB", "j")
    got = k(A=A, B=B).to_scipy("csc")   # (shares the kernel's arrays)
    want = (A.to_scipy() + B.to_scipy()).tocsc()
    want.eliminate_zeros()
    assert_same_compressed(got, want)


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (4, 3)])
def test_empty_and_all_fill_outputs_are_scattered(shape):
    A = Tensor.from_numpy(np.zeros(shape), "csr")
    k = check_lowered("C[i, j] = A[i, j] * 2", out=csc(), A=A)
    scattered(k, csc())
    got = k(A=A)
    assert got.to_scipy("csc").nnz == 0 and list(got.to_scipy("csc").indptr) == [0] * (shape[1] + 1)


@pytest.mark.parametrize("order", [(2, 1, 0), (1, 2, 0), (0, 2, 1)])
def test_a_3d_output_of_dense_levels_over_a_list_is_scattered_in_any_mode_order(order):
    rng = np.random.default_rng(6)
    t = random_sparse((4, 5, 3), 0.3, rng)
    t[1] = 0.0   # (an empty slice)
    T = Tensor.from_numpy(t, "csf")
    fmt = Format(parse_format("Dense(Dense(SparseList(Element(0.0))))").root, order)
    k = check_lowered("C[i, j, k] = T[i, j, k] * 3", out=fmt, T=T)
    scattered(k, fmt)
    assert_canonical(k(T=T), t * 3)


def test_a_reduction_inside_the_output_loops_is_scattered():
    # C[j, i] = sum over k of T[i, j, k], CSF T: loops i, j, k, the sum in a scalar; C CSR in order j, i
    rng = np.random.default_rng(7)
    T = Tensor.from_numpy(random_sparse((5, 4, 3), 0.3, rng), "csf")
    k = check_lowered("C[j, i] = T[i, j, k]", out=csr(), checked=True, T=T)
    scattered(k, csr())
    assert_canonical(k(T=T), T.to_numpy().sum(axis=2).T)


def test_what_keeps_its_conversion():
    rng = np.random.default_rng(8)
    A = Tensor.from_numpy(random_sparse((5, 4), 0.4, rng), "csr")
    B = Tensor.from_numpy(random_sparse((4, 6), 0.4, rng), "csr")
    # an output whose fill is not the expression's (the loops would skip coordinates holding 1)
    k = check_lowered("C[i, j] = A[i, j] + 1", out=csc(), A=A)
    assert k.trace.find("convert") and not k.trace.find("output-order")
    # an update of each entry in place (SpGEMM's loops i, k, j), a DCSC in the loops' order, one-pass asked
    for expr, fmt, options in [("C[i, j] = A[i, k] * B[k, j]", csc(), None),
                               ("C[j, i] = A[i, j]", dcsc(0.0), None),
                               ("C[i, j] = A[i, j] * 2", csc(), {"assembly": "one-pass"})]:
        tensors = {t: v for t, v in {"A": A, "B": B}.items() if f"{t}[" in expr}
        k = check_lowered(expr, out=fmt, options=options, **tensors)
        assert not k.trace.find("output-order") and k(**tensors).format == fmt


def test_kernels_in_storage_order_are_unchanged():
    # a CSR output of row-order loops is appended as before: no scatter, no scratch array
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", A="csr", B="csr", C="csr")
    assert not k.trace.find("output-order") and "_next" not in k.c_source


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(list(CASES)), shape=st.tuples(st.integers(0, 6), st.integers(0, 6)),
       fill=st.sampled_from([0.0, np.nan, np.inf]), density=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       seed=st.integers(0, 2 ** 16), specials=st.booleans())
@example(case="csc-difference", shape=(3, 4), fill=np.nan, density=1.0, seed=1, specials=True)
def test_property_an_output_out_of_its_loops_order_is_scattered(case, shape, fill, density, seed, specials):
    expr, fmt = CASES[case]
    tensors = matrices(shape, density, fill, seed, specials)
    want, out_fill = ss.evaluate(expr, **tensors)
    fmt = fmt(float(out_fill))
    k = ss.lower(expr, strategy="lattice", C=fmt, **tensors)
    scattered(k, fmt)
    got = k(**tensors)
    assert got.format == fmt
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    assert_canonical(got, want)
