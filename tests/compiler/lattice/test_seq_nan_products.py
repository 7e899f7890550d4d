"""Products of shape operators' sequences whose factors may hold NaN or inf, lowered exactly by the lattice
strategy (issue 30). Before, such a product was refused naming strategy='looplets' ("A may hold NaN or inf,
and the lattice strategy's intersections skip where a factor of * is 0"): the ∩ of ``*`` skips where a
factor is absent, and 0 * inf is NaN.

Now the product walks the ∪ of the factors that may hold NaN or inf, the others beside them (a case of finite
factors alone is 0 and writes nothing); inputs assumed finite keep the ∩. Each kernel against the dense
oracle (compiler.evaluate), the sequence CFIR's interpreter and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, values
from compiler.errors import StrategyError
from compiler.lattice.seqderive import seq_lower
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand
from tests.compiler.lattice.test_seq_concat_fills import one_kernel, tensor

nan, inf = np.nan, np.inf

RAVEL_TIMES = "c[k] = collapse(A[i, j], (i, j) -> k) * b[k]"
VSTACK_TIMES = "c[i, j] = concat((A[k, j], A1[l, j]), (k, l) -> i) * B[i, j]"
SPLIT_TIMES = "c[i, j] = split(b[k], k -> (i, j:4)) * A[i, j]"


@pytest.mark.parametrize("out", [None, "sparse_vector"])
@pytest.mark.parametrize("fa, fb", [("csr", "sparse_vector"), ("coo", "dense"), ("dense", "sparse_vector")])
def test_a_ravel_times_a_vector_computes_inf_times_an_absent_0(fa, fb, out):
    A = tensor((3, 4), fa, 1, odd=(inf, 0.0, nan, -inf))
    b = tensor((12,), fb, 2, density=0.3)
    k, got = one_kernel(RAVEL_TIMES, out, A=A, b=b)
    if b.to_numpy()[0] == 0:
        assert np.isnan(got.to_numpy()[0])      # (inf * an absent 0)
    assert np.isnan(got.to_numpy()[2])


def test_the_trace_says_the_union_walks_more_and_finite_inputs_keep_the_intersection():
    A = tensor((3, 4), "csr", 1, odd=(inf,))
    b = tensor((12,), "sparse_vector", 2, density=0.3)
    with values.assuming({"A": values.ANY, "b": values.FINITE}):
        wild = seq_lower(RAVEL_TIMES, A=A, b=b)
    finite = seq_lower(RAVEL_TIMES, A=A, b=b)       # (outside a lowering's assumptions: finite, as TACO's)
    assert "may hold NaN or inf" in wild.derivations[0].text()
    assert "walks each wild factor to its end" in wild.derivations[0].text()
    assert "line 5: * is ∩" in finite.derivations[0].text()
    assert str(wild.cin).splitlines()[0] == "forall k ∈ (i_A × j_A) ∪ k_b"
    assert str(finite.cin).splitlines()[0] == "forall k ∈ (i_A × j_A) ∩ k_b"
    # (where b alone is stored, 0 * b is 0 for a finite b: no loop walks b after A's last entry)
    loops = [line.strip() for line in wild.cfir.text().splitlines() if line.lstrip().startswith("while")]
    assert loops == ["while k <- (i_A × j_A) ∪ k_b", "while k <- i_A × j_A"], loops
    # ... and where b may hold inf too, that loop is there
    with values.assuming({"A": values.ANY, "b": values.ANY}):
        both = seq_lower(RAVEL_TIMES, A=A, b=b)
    assert "while k <- k_b" in both.cfir.text()
    # the kernel lowered for these tensors (A stores inf) records it in its trace
    kernel = ss.lower(RAVEL_TIMES, strategy="lattice", A=A, b=b)
    assert "(i_A × j_A) ∪ k_b" in kernel.trace.find("lattice")[0].note + str(kernel.trace.find("cfir")[0].after)
    (facts,) = kernel.trace.find("value-facts")
    assert "A: may hold +inf" in facts.note and "1 exact path(s)" in facts.note


@pytest.mark.parametrize("fmts", [("csr", "coo", "dense"), ("dense", "csr", "coo")])
def test_a_vstack_times_a_matrix(fmts):
    A = tensor((2, 3), fmts[0], 3, odd=(-inf, nan))
    A1 = tensor((1, 3), fmts[1], 4, odd=(inf,))
    B = tensor((3, 3), fmts[2], 5, density=0.4)
    one_kernel(VSTACK_TIMES, A=A, A1=A1, B=B)


@pytest.mark.parametrize("fb", ["sparse_vector", "dense"])
def test_a_split_times_a_matrix_both_wild(fb):
    b = tensor((8,), fb, 6, odd=(inf, 0.0, 0.0, 0.0, nan))
    A = tensor((2, 4), "csr", 7, odd=(0.0, -inf, 0.0, 1.0))
    one_kernel(SPLIT_TIMES, "csr", b=b, A=A)


def test_empty_and_all_fill_operands():
    wild = tensor((3, 4), "csr", 1, odd=(inf, nan))
    for b in (tensor((12,), "sparse_vector", 2, density=0.0), Tensor.from_numpy(np.zeros(12), "dense")):
        one_kernel(RAVEL_TIMES, A=wild, b=b)
    one_kernel(RAVEL_TIMES, A=tensor((3, 4), "coo", 1, density=0.0), b=tensor((12,), "sparse_vector", 2, odd=(inf,)))
    one_kernel("c[k] = collapse(A[i, j], (i, j) -> k) * b[k]", A=tensor((0, 4), "csr", 1),
               b=tensor((0,), "sparse_vector", 2))


def test_a_factor_of_another_fill_beside_a_wild_one():
    # (b of fill 1 or NaN: the product was a ∪ already; with A's inf it still is, exact)
    A = tensor((3, 4), "csr", 1, odd=(inf, nan))
    for fill in (1.0, nan):
        one_kernel(RAVEL_TIMES, A=A, b=tensor((12,), "sparse_vector", 2, fill=fill, odd=(-inf,)))


def test_the_array_front_end_lowers_it_as_one_lattice_kernel():
    a, A = operand((3, 4), "csr", 1, odd=(inf, 0.0, nan))
    v, V = operand((12,), "sparse_vector", 2, density=0.3)
    with np.errstate(invalid="ignore"):
        one_lattice_kernel(A.reshape(-1) * V, a.reshape(-1) * v)


@st.composite
def products(draw):
    """A program multiplying a shape operator's result by a tensor, with its operands' (format, fill, density,
    seed, odd values stored first)."""
    program = draw(st.sampled_from([RAVEL_TIMES, VSTACK_TIMES, SPLIT_TIMES]))
    parts = [(draw(st.sampled_from(["csr", "coo", "dense"])), draw(st.sampled_from([0.0, 0.0, 1.0, nan])),
              draw(st.sampled_from([0.0, 0.4, 1.0])), draw(st.integers(0, 99)),
              draw(st.sampled_from([(), (inf,), (nan, -inf), (0.0, inf)]))) for _ in range(3)]
    return program, parts, draw(st.sampled_from([None, "csr"]))


SHAPES = {RAVEL_TIMES: {"A": (3, 4), "b": (12,)}, VSTACK_TIMES: {"A": (2, 3), "A1": (1, 3), "B": (3, 3)},
          SPLIT_TIMES: {"b": (8,), "A": (2, 4)}}


@settings(max_examples=7, deadline=None)
@given(products())
@example((RAVEL_TIMES, [("coo", 0.0, 0.4, 1, (inf,)), ("dense", 0.0, 0.0, 2, ()), ("csr", 0.0, 1.0, 3, ())], None))
@example((SPLIT_TIMES, [("dense", 0.0, 1.0, 4, (nan,)), ("csr", 0.0, 0.4, 5, (-inf,)), ("csr", 0.0, 0, 6, ())], "csr"))
def test_products_of_wild_factors_by_property(drawn):
    program, parts, out = drawn
    tensors = {}
    for (name, shape), (fmt, fill, density, seed, odd) in zip(SHAPES[program].items(), parts):
        fmt = "sparse_vector" if len(shape) == 1 and fmt != "dense" else fmt
        tensors[name] = tensor(shape, fmt, seed, fill, density, odd)
    if out is not None and program == RAVEL_TIMES:
        out = "sparse_vector"
    try:
        one_kernel(program, out, **tensors)
    except StrategyError as e:
        # (an output of another fill than the result's is refused, as for any program)
        assert "has fill" in str(e) and out is not None


@pytest.mark.parametrize("fa, fb", [("dense", "dcsr"), ("csr", "dense"), ("coo", "csr")])
@pytest.mark.parametrize("out", [None, "csc"])
def test_a_product_whose_nan_factor_does_not_vary_with_an_output_index(fa, fb, out):
    # (``b[::2] @ a.T``: along b's row index the NaN-holding a is the same at every row, so every row is
    # visited; the product's sequence was None there and lowering crashed, AttributeError, on main)
    a = np.array([[0.0, -3.0, -3.0, 0.0, 0.0], [0.0, 0.0, nan, 0.0, 0.0]])
    b = np.array([[0.0, 0.0, 0.0, 0.0, 0.5], [0.0, 0.5, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 1.0, -3.0],
                  [0.0, 0.0, -3.0, 0.0, 0.0]])
    A, B = (ss.array.asarray(Tensor.from_numpy(x, f)) for x, f in ((a, fa), (b, fb)))
    with np.errstate(invalid="ignore"):
        want = b[::2] @ a.T
    one_lattice_kernel(B[::2] @ A.T, want, out)
