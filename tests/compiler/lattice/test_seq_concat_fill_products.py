"""Concatenations of parts of different fills under a product or a sum with another operand, and stacks of
splits into every output format, lowered by the lattice strategy: two wrong answers before.

- ``concat((A[i, k], B[i, l]), (k, l) -> j) * C[i, j]`` of a dense ``B``: the loop over ``i`` located ``B``
  at ``A``'s coordinate (a union of two dense levels) and ``A`` at ``C``'s (its cases write the fill where
  ``C`` alone is not), so ``B``'s locator was keyed on a level walked at no point and dropped: ``B``'s part
  was gone from the loop over ``j``, where only ``C`` was the product read ``A``'s fill for ``B``'s stored
  values (seqcfir: the locator is keyed on what ``A`` is located at).
- ``concat((split(A[m], ..), split(B[q], ..)), (l, n) -> k)`` of a NaN-filled ``B``: the loop over the second
  part, ``|π0(m_A, 1)| + (π0(q_B, 1) ∪ U_n)``, stepped the union only where both operands were valid; the π1
  loop inside had walked ``B``'s last group, so ``U_n`` stayed at ``k`` and the loop after wrote ``k`` again
  (a duplicate coordinate of a sparse output, NaN over ``B``'s value in a dense one). An offset, pad or
  concatenation now steps each operand of a union inside as the union does (seqiter.advance, the emitter's).

Each kernel against the dense oracle (compiler.evaluate), the sequence CFIR's interpreter and the IR
interpreter (test_seq_concat_fills.one_kernel), a sparse output validated."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from tests.compiler.lattice.test_seq_concat_fills import one_kernel, tensor

nan, inf = np.nan, np.inf

HSTACK = "concat((A[i, k], B[i, l]), (k, l) -> j)"
VSTACK = "concat((A[k, j], B[l, j]), (k, l) -> i)"
PRODUCT = "c[i, j] = {} * C[i, j]"
SUM = "c[i, j] = {} + C[i, j]"
SPLITS = "c[k, i] = concat((split(A[m], m -> (l:{}, i:{})), split(B[q], q -> (n:{}, i:{}))), (l, n) -> k)"


def test_the_product_of_an_hstack_with_a_dense_part_reads_that_part():
    A = Tensor.from_numpy(np.array([[1.0, 2.0, -3.0]]), "csc", fill=1.0)
    B = Tensor.from_numpy(np.zeros((1, 3)), "dense")
    C = Tensor.from_numpy(np.array([[0.0, 0.0, 1.0, 1.0, 0.0, 0.0]]), "dcsr")
    for out in (None, "csr"):
        k, got = one_kernel(PRODUCT.format(HSTACK), out, A=A, B=B, C=C)
        np.testing.assert_array_equal(got.to_numpy(), [[0.0, 0.0, -3.0, 0.0, 0.0, 0.0]])
    # (B located at C's rows as A is, its part walked after A's: A first, at offset 0)
    text = k.trace.find("cfir")[0].after_text
    assert "with i_B = i_C, i_A = i_C" in text and "(k_A ⊔ l_B) ∪ j_C" in text and "(|k_A| + l_B) ∪ j_C" in text


@pytest.mark.parametrize("op", [PRODUCT, SUM], ids=["times", "plus"])
@pytest.mark.parametrize("cat", [HSTACK, VSTACK], ids=["hstack", "vstack"])
@pytest.mark.parametrize("a, b, c", [
    (("csc", 1.0), ("dense", 0.0), "dcsr"),
    (("csr", nan), ("dense", 1.0), "csr"),
    (("coo", 0.0), ("dense", nan), "dense"),
    (("dense", 1.0), ("csc", 0.0), "coo"),
    (("dcsr", 0.0), ("csr", 1.0), "csc"),
    (("dense", nan), ("dense", 0.0), "dcsr"),
], ids=lambda x: "-".join(map(str, x)) if isinstance(x, tuple) else x)
def test_a_concatenation_of_two_fills_with_another_operand(op, cat, a, b, c):
    shapes = ((2, 3), (2, 2), (2, 5)) if cat == HSTACK else ((3, 2), (1, 2), (4, 2))
    # (NaN and ±inf stored in the parts under the sum; under the product they would write no fill where C
    # stores nothing, so the loop over i would walk the parts' rows rather than locate them at C's)
    sums = op == SUM
    tensors = {"A": tensor(shapes[0], a[0], 1, fill=a[1], odd=(nan, inf) if sums else (5.0,)),
               "B": tensor(shapes[1], b[0], 2, fill=b[1], odd=(-inf,) if sums else (-4.0,)),
               "C": tensor(shapes[2], c, 3, odd=(0.0, inf))}
    for out in (None, "csr"):
        one_kernel(op.format(cat), out, **tensors)


@pytest.mark.parametrize("density", [0.0, 1.0])
@pytest.mark.parametrize("fills", [(1.0, 0.0), (0.0, nan)])
def test_empty_and_all_fill_parts(density, fills):
    # (one part stores nothing or everything, the other operand nothing or everything)
    tensors = {"A": tensor((2, 3), "csc", 4, fill=fills[0], density=density),
               "B": tensor((2, 2), "dense", 5, fill=fills[1], density=1.0 - density),
               "C": tensor((2, 5), "dcsr", 6, density=density)}
    for op in (PRODUCT, SUM):
        one_kernel(op.format(HSTACK), None, **tensors)


def test_the_stack_of_splits_into_a_csc_output_stores_each_coordinate_once():
    A = Tensor.from_numpy(np.array([-3.0]), "dense")
    B = Tensor.from_numpy(np.array([2.0]), "coo", fill=nan)
    program = SPLITS.format(1, 1, 1, 1)
    for out in ("csc", "csr", "coo", None):
        _, got = one_kernel(program, out, A=A, B=B)
        np.testing.assert_array_equal(got.to_numpy(), [[-3.0], [2.0]])


@pytest.mark.parametrize("out", ["csc", "csr", "coo", None])
@pytest.mark.parametrize("fmts, fills", [(("dense", "coo"), (0.0, nan)), (("coo", "dense"), (1.0, 0.0)),
                                         (("coo", "coo"), (nan, 1.0)), (("dense", "dense"), (0.0, 0.0))])
def test_stacks_of_splits(fmts, fills, out):
    # (parts of two rows and one of three columns; NaN and ±inf stored)
    A = tensor((6,), fmts[0], 7, fill=fills[0], odd=(nan,))
    B = tensor((3,), fmts[1], 8, fill=fills[1], odd=(inf, -inf))
    one_kernel(SPLITS.format(2, 3, 1, 3), out, A=A, B=B)


@st.composite
def drawn_kernels(draw):
    """``(program, parts, other, out)``: a product or sum of a stack (either index) with a third operand, or a
    stack of splits; each part ``(format, fill, density, seed)``."""
    splits = draw(st.booleans())
    formats = ["dense", "coo"] if splits else ["csr", "csc", "coo", "dcsr", "dense"]
    parts = [(draw(st.sampled_from(formats)), draw(st.sampled_from([0.0, 1.0, nan])),
              draw(st.sampled_from([0.0, 0.5, 1.0])), draw(st.integers(0, 99))) for _ in range(2)]
    if splits:
        return SPLITS.format(1, 2, 2, 2), parts, None, draw(st.sampled_from(["csc", "csr", "coo", None]))
    program = draw(st.sampled_from([PRODUCT, SUM])).format(draw(st.sampled_from([HSTACK, VSTACK])))
    other = (draw(st.sampled_from(["csr", "dcsr", "dense"])), draw(st.sampled_from([0.0, 0.5, 1.0])))
    return program, parts, other, draw(st.sampled_from([None, "csr"]))


@settings(max_examples=7, deadline=None)
@given(drawn_kernels())
@example((PRODUCT.format(HSTACK), [("csc", 1.0, 1.0, 0), ("dense", 0.0, 0.0, 1)], ("dcsr", 0.5), None))
@example((SPLITS.format(1, 2, 2, 2), [("dense", 0.0, 1.0, 2), ("coo", nan, 0.5, 3)], None, "csc"))
def test_concatenations_of_two_fills_by_property(drawn):
    program, parts, other, out = drawn
    shapes = {SPLITS.format(1, 2, 2, 2): ((2,), (4,)), PRODUCT.format(HSTACK): ((2, 2), (2, 1)),
              SUM.format(HSTACK): ((2, 2), (2, 1))}.get(program, ((2, 2), (1, 2)))
    tensors = {name: tensor(shape, fmt, seed, fill, density, odd=(inf,) if seed % 2 else (nan,))
               for name, shape, (fmt, fill, density, seed) in zip("AB", shapes, parts)}
    if other is not None:
        tensors["C"] = tensor((2, 3) if "(k, l) -> j" in program else (3, 2), other[0], 9, density=other[1])
    one_kernel(program, out, **tensors)
