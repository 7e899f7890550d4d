"""Inputs for the functions whose result depends on the values (argmax, sort, unique_*, ...): matrices
with NaN and infinities among the stored entries, all-fill and empty ones, each given dense or sparse
with fill 0, NaN or 2 (a sparse one stores only what differs from its fill), and the hypothesis
strategy drawing such inputs. The results are leaves computed before any kernel: read without one."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from compiler import Tensor
from array_cases import make

INF, NAN = np.inf, np.nan
#: NaN and infinities stored; ties; a row of the fill only
MIXED = np.array([[0.0, 1.5, 0.0, -2.0], [NAN, 0.0, INF, 0.0], [0.0, -INF, 0.0, 0.5], [0.0, 0.0, 0.0, 0.0]])
#: every stored value below the fill 0, so the fill wins argmax (its first unstored position)
BELOW = np.array([[-1.0, 0.0, -3.0], [-2.0, -2.0, -2.0], [0.0, -1.0, 0.0]])
INTS = np.array([[0, 3, 0, -2], [1, 0, 0, 0], [0, 0, 7, 3]], dtype=np.int32)


def with_fill(a: np.ndarray, fill) -> np.ndarray:
    """``a`` with its zeros made ``fill`` (so a sparse operand of that fill stores what ``a`` stores)."""
    return np.where(a == 0, fill, a) if a.dtype.kind == "f" else a


#: (name, numpy array, fill of its sparse kinds)
ARRAYS = [("mixed-0", MIXED, 0.0), ("mixed-nan", with_fill(MIXED, NAN), NAN), ("mixed-2", with_fill(MIXED, 2.0), 2.0),
          ("below-0", BELOW, 0.0), ("ints-0", INTS, 0), ("all-fill-0", np.zeros((2, 3)), 0.0),
          ("all-fill-nan", np.full((2, 3), NAN), NAN), ("empty", np.zeros((0, 3)), 0.0)]
KINDS = ["numpy", "dense", "csr", "coo", "scipy_csr"]


def operand(a: np.ndarray, kind: str, fill):
    """``a`` as ``kind`` (a sparse Tensor with ``fill``; scipy's only for fill 0)."""
    if kind == "scipy_csr" and not (fill == 0):
        kind = "csr"
    return make(a, kind, fill=None if kind in ("numpy", "dense", "scipy_csr") else fill)


def value(array) -> Tensor:
    """The tensor a value-dependent function computed (a leaf: no kernel needed to read it)."""
    return array.node.tensor


def same(array, expected) -> None:
    """``array`` holds numpy's ``expected``: shape, dtype, values (NaN where NaN)."""
    got = value(array)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got.to_numpy(), expected)


POOL = [0.0, 1.0, -2.5, 0.5, INF, -INF, NAN, 2.0]


@st.composite
def inputs(draw, max_rank: int = 3):
    """``(numpy array, operand, fill, kind)``: up to ``max_rank`` axes of extent 0..4, its values from
    ``POOL`` and the fill, given dense or as a sparse Tensor of that fill."""
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=max_rank)))
    fill = draw(st.sampled_from([0.0, NAN, 2.0]))
    size = int(np.prod(shape))
    vals = draw(st.lists(st.one_of(st.just(fill), st.sampled_from(POOL)), min_size=size, max_size=size))
    a = np.array(vals, dtype=float).reshape(shape)
    kind = draw(st.sampled_from(["numpy", "csr", "coo"]))
    if kind == "csr" and a.ndim != 2:
        kind = "coo" if a.ndim > 2 else "csr"
    return a, make(a, kind, fill=None if kind == "numpy" else fill), fill, kind
