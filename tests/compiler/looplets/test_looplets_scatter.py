"""Sparse outputs whose loops run out of their storage order, assembled under looplets by a two-phase
scatter (issue 29): a CSC ``C[i, j] = A[i, j] * 2`` of a CSR ``A`` (loops i, j), a DCSC of a sum, a CSR
output of CSC loops, a transpose into CSR, and reductions into such outputs (SpGEMM into CSC). The loops are lowered twice, a counting pass that touches only the
coordinates, then the storing pass (:mod:`compiler.looplets.scatter`); before, the kernel built the
output in the loops' order and the runtime converted it after each call (``lowered.conversions``).
Each kernel is checked against the dense oracle, the IR interpreter, scipy's ``tocsc``/``tocsr`` and
the storage ``Tensor.from_numpy`` builds.
"""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.format import Format, csc, csr, parse_format
from compiler.looplets.language import loop_program
from compiler.testing import assert_canonical, assert_same_compressed, check_lowered, random_sparse

#: each case: the expression, the input format, the output's format for a fill
CASES = {"csr-to-csc": ("C[i, j] = A[i, j] * 2", "csr", lambda f: csc(fill=f)),
         "dense-to-csc": ("C[i, j] = A[i, j] * 2", "dense", lambda f: csc(fill=f)),
         "csr-sum-to-csc": ("C[i, j] = A[i, j] + B[i, j]", "csr", lambda f: csc(fill=f)),
         "csr-transpose": ("C[j, i] = A[i, j]", "csr", lambda f: csr(fill=f)),
         # (a DCSC: its columns filled as a CSC's, those holding entries listed after)
         "csr-sum-to-dcsc": ("C[i, j] = A[i, j] + B[i, j]", "csr",
                             lambda f: Format(parse_format("dcsr", fill=f).root, (1, 0)))}


def operands(expr, fmt, shape, density, fill, seed, specials=False):
    """A (and B when ``expr`` reads it) of format ``fmt``; NaN and infinities among A's values with
    ``specials``."""
    rng = np.random.default_rng(seed)
    out = {}
    for t in ("A", "B"):
        if f"{t}[" not in expr:
            continue
        a = random_sparse(shape, density, rng, fill=fill)
        if specials and t == "A" and a.size:
            stored = np.argwhere(~((a == fill) | (np.isnan(a) & np.isnan(fill))))
            for (r, c), v in zip(stored[:3], (np.nan, np.inf, -np.inf)):
                a[r, c] = v
        out[t] = Tensor.from_numpy(a, fmt, fill=fill)
    return out


def scattered(k, fmt):
    """The kernel built ``fmt`` itself by a scatter: no conversion, and the trace shows both passes."""
    assert not k.lowered.conversions and k.lowered.output_format == fmt
    assert not k.trace.find("convert")
    (order,) = k.trace.find("output-order")
    assert "by a scatter, not in the loops' order converted" in order.note
    passes = k.trace.find("scatter")
    assert [s.data["phase"] for s in passes] == ["count", "store"]
    assert all(a.kind == "looplet-nest" for s in passes for a in s.artifacts)
    assert "phase 1, count" in k.c_source and "phase 2, scatter" in k.c_source


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_an_output_out_of_its_loops_order_is_scattered(case, fill):
    expr, fmt_in, fmt = CASES[case]
    tensors = operands(expr, fmt_in, (7, 6), 0.4, fill, seed=3, specials=True)
    want, out_fill = ss.evaluate(expr, **tensors)
    fmt = fmt(float(out_fill))
    # (a bounds-checked build of the product: every write counted and stored inside its buffers)
    k = check_lowered(expr, out=fmt, strategy="looplets", checked=case == "csr-to-csc", **tensors)
    scattered(k, fmt)
    got = k(**tensors)
    assert got.format == fmt
    assert_canonical(got, want)


def test_a_csc_product_matches_scipy_and_computes_no_value_when_counting():
    rng = np.random.default_rng(4)
    a = random_sparse((30, 20), 0.1, rng, empty=(3, 4))
    a[:, 5] = 0.0           # (an empty column)
    a[:, 7] = -a[:, 7]      # (negated: cancels below, its entries all gaps)
    b = random_sparse((30, 20), 0.1, rng)
    b[:, 7] = -a[:, 7]
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy="looplets", A=A, B=B, C=csc())
    scattered(k, csc())
    count, store = k.c_source.split("phase 1, count")[1].split("phase 2, scatter")
    assert "A_val" not in count and "B_val" not in count and "C1_next[" in count
    # (an entry is computed, then tested, then takes its column's next slot: the test does not wait on the slot)
    assert re.search(r"double (vC\w*) = A_val\[\w+\];\n\s*if \(\1 != 0\.0\) \{\n\s*int64_t qC\w* = C1_next\[", store)
    got = k(A=A, B=B).to_scipy("csc")
    want = (A.to_scipy() + B.to_scipy()).tocsc()
    want.eliminate_zeros()
    assert_same_compressed(got, want)


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (4, 3)])
def test_empty_and_all_fill_inputs_are_scattered(shape):
    A = Tensor.from_numpy(np.zeros(shape), "csr")
    k = check_lowered("C[i, j] = A[i, j] * 2", out=csc(), strategy="looplets", A=A)
    scattered(k, csc())
    got = k(A=A).to_scipy("csc")
    assert got.nnz == 0 and list(got.indptr) == [0] * (shape[1] + 1)


def test_a_3d_output_of_dense_levels_over_a_list_is_scattered():
    rng = np.random.default_rng(6)
    t = random_sparse((4, 5, 3), 0.3, rng)
    t[1] = 0.0
    T = Tensor.from_numpy(t, "csf")
    fmt = Format(parse_format("Dense(Dense(SparseList(Element(0.0))))").root, (2, 1, 0))
    k = check_lowered("C[i, j, k] = T[i, j, k] * 3", out=fmt, strategy="looplets", T=T)
    scattered(k, fmt)
    assert_canonical(k(T=T), t * 3)


def test_what_keeps_its_conversion_or_order():
    rng = np.random.default_rng(8)
    A = Tensor.from_numpy(random_sparse((5, 4), 0.4, rng), "csr")
    # a reduction whose loop runs outside the scattered index (A^T B: loops k, i, j) could not
    # combine an entry's updates as its column's last: its loops keep the output's order
    B = Tensor.from_numpy(random_sparse((5, 6), 0.4, rng), "csr")
    k = check_lowered("C[i, j] = A[k, i] * B[k, j]", out=csc(), strategy="looplets", A=A, B=B)
    assert not k.trace.find("scatter") and not k.lowered.conversions
    # a DCSC output (a sparse outer level) is not scattered
    k = check_lowered("C[j, i] = A[i, j]", out=Format(parse_format("dcsr").root, (1, 0)), strategy="looplets", A=A)
    assert not k.trace.find("scatter")
    # a CSR output of row-order loops is appended as before: no scratch array
    k = ss.lower("C[i, j] = A[i, j] * 2", strategy="looplets", A=A, C=csr())
    assert not k.trace.find("scatter") and "_next" not in k.c_source


#: SpGEMM's operands' format and an output format its loops run out of (and that scatters)
PRODUCTS = {"csr-to-csc": ("csr", csc()), "csr-to-dcsc": ("csr", Format(parse_format("dcsr").root, (1, 0))),
            "csc-to-csr": ("csc", csr()), "csc-to-dcsr": ("csc", parse_format("dcsr"))}


def product_operands(fmt, shape, density, seed, specials=False, cancel=False):
    """A (m x n) and B (n x p) of format ``fmt``: NaN and infinities among A's values with
    ``specials``; with ``cancel``, A's row 0 sums B's rows 0 and 1, which cancel (C's row 0 all 0)."""
    rng = np.random.default_rng(seed)
    m, n, p = shape
    a, b = random_sparse((m, n), density, rng), random_sparse((n, p), density, rng)
    if specials and a.size:
        for (r, c), v in zip(np.argwhere(a != 0)[:3], (np.nan, np.inf, -np.inf)):
            a[r, c] = v
    if cancel:
        a[0] = 0.0
        a[0, :2] = 1.0
        b[1] = -b[0]
    return {"A": Tensor.from_numpy(a, fmt), "B": Tensor.from_numpy(b, fmt)}


def combined(k, fmt):
    """The kernel scattered ``fmt``, counting each coordinate once and combining updates."""
    scattered(k, fmt)
    assert "_last[" in k.c_source.split("phase 2, scatter")[0] and "combines with it" in k.c_source
    assert "counts each column's distinct coordinates" in k.trace.find("output-order")[0].note.replace("fiber", "column")


@pytest.mark.parametrize("case", list(PRODUCTS))
def test_a_reduction_into_a_scattered_output_combines_the_updates_of_an_entry(case):
    fmt_in, fmt = PRODUCTS[case]
    expr = "C[i, j] = A[i, k] * B[k, j]"
    tensors = product_operands(fmt_in, (6, 5, 7), 0.4, seed=5, specials=True, cancel=True)
    want, _ = ss.evaluate(expr, **tensors)
    # (bounds-checked: the room counted is each column's distinct rows, and every update stays inside it)
    k = check_lowered(expr, out=fmt, strategy="looplets", checked=case == "csr-to-csc", **tensors)
    combined(k, fmt)
    got = k(**tensors)
    assert_canonical(got, want)
    assert not want[0].any() and not got.to_numpy()[0].any()   # (the row that cancels: no entry stored)
    if case == "csr-to-csc":
        # (scipy's SpGEMM sums an entry's products in the same order; it multiplies stored values only,
        # where the oracle's inf times an unstored 0 is NaN: finite values here)
        finite = product_operands(fmt_in, (6, 5, 7), 0.4, seed=5, cancel=True)
        sp = (finite["A"].to_scipy() @ finite["B"].to_scipy()).tocsc()
        sp.eliminate_zeros()
        sp.sort_indices()
        mine = k(**finite).to_scipy("csc")
        for x, y in ((mine.indptr, sp.indptr), (mine.indices, sp.indices), (mine.data, sp.data)):
            np.testing.assert_array_equal(x, y)


#: loop programs whose own loops (i outermost) write a CSC output, with what each computes
PROGRAMS = {"conditional": ("def keep(C, A):\n    C[...] = 0\n    for i in _:\n        for j in _:\n"
                            "            if A[i, j] > 2:\n                C[i, j] = A[i, j] * 2\n",
                            lambda a, b: np.where(a > 2, a * 2, 0.0)),
            "spgemm": ("def mm(C, A, B):\n    C[...] = 0\n    for i in _:\n        for k in _:\n"
                       "            for j in _:\n                C[i, j] += A[i, k] * B[k, j]\n", lambda a, b: a @ b)}


@pytest.mark.parametrize("case", list(PROGRAMS))
def test_a_loop_program_writing_out_of_its_outputs_order_is_scattered(case):
    source, want = PROGRAMS[case]
    tensors = product_operands("csr", (6, 5, 7), 0.4, seed=9, cancel=True)
    a, b = tensors["A"].to_numpy(), tensors["B"].to_numpy()
    if case == "conditional":
        tensors = {"A": tensors["A"]}
    k = ss.lower(loop_program(source=source), strategy="looplets", C=csc(), **tensors)
    scattered(k, csc())   # (its own loops, i outermost: not reordered, and no conversion)
    assert [lp for lp in k.trace.find("output-order")[0].note.split("the loops run ")[1:]][0].startswith("i, ")
    assert_canonical(k(**tensors), want(a, b))
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want(a, b))


@settings(max_examples=7, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(list(PRODUCTS)), shape=st.tuples(*[st.integers(0, 5)] * 3),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), seed=st.integers(0, 2 ** 16), specials=st.booleans())
def test_property_a_reduction_into_a_scattered_output(case, shape, density, seed, specials):
    fmt_in, fmt = PRODUCTS[case]
    expr = "C[i, j] = A[i, k] * B[k, j]"
    tensors = product_operands(fmt_in, shape, density, seed, specials)
    want, _ = ss.evaluate(expr, **tensors)
    k = ss.lower(expr, strategy="looplets", C=fmt, **tensors)
    combined(k, fmt)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    assert_canonical(k(**tensors), want)


@settings(max_examples=7, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(list(CASES)), shape=st.tuples(st.integers(0, 6), st.integers(0, 6)),
       fill=st.sampled_from([0.0, np.nan, np.inf]), density=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       seed=st.integers(0, 2 ** 16), specials=st.booleans())
@example(case="csr-sum-to-csc", shape=(3, 4), fill=np.nan, density=1.0, seed=1, specials=True)
def test_property_an_output_out_of_its_loops_order_is_scattered(case, shape, fill, density, seed, specials):
    expr, fmt_in, fmt = CASES[case]
    tensors = operands(expr, fmt_in, shape, density, fill, seed, specials)
    want, out_fill = ss.evaluate(expr, **tensors)
    fmt = fmt(float(out_fill))
    k = ss.lower(expr, strategy="looplets", C=fmt, **tensors)
    scattered(k, fmt)
    got = k(**tensors)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    assert_canonical(got, want)
