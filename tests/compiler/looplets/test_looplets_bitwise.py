"""Finch's bitwise erosion: a loop program over uint64 words, 64 pixels each, with all-ones
padding (``coalesce(..., 2^64 - 1)``) and shifts by 63; against numpy and the IR interpreter."""

import numpy as np
import pytest

from compiler import Format, Tensor
from compiler.levels import Dense, Element, SparseList
from compiler.looplets import compile_program, loop_program

ONES = np.uint64(2 ** 64 - 1)


@loop_program
def erode_words(out, img, mask):
    """One pass of the bitwise erosion where ``mask`` has a word (row-major: x outer)."""
    for x in _:
        for y in _:
            if mask[x, y]:
                t = img[x, y] & coalesce(img[x, ~(y - 1)], 18446744073709551615) & \
                    coalesce(img[x, ~(y + 1)], 18446744073709551615)
                tl = coalesce(img[~(x - 1), y], 18446744073709551615)
                tr = coalesce(img[~(x + 1), y], 18446744073709551615)
                out[x, y] = ((tr << 63) | (t >> 1)) & t & ((t << 1) | (tl >> 63))


def erode_reference(w):
    pad = np.full((w.shape[0] + 2, w.shape[1] + 2), ONES, np.uint64)
    pad[1:-1, 1:-1] = w
    t = w & pad[1:-1, :-2] & pad[1:-1, 2:]
    tl, tr = pad[:-2, 1:-1], pad[2:, 1:-1]
    one, top = np.uint64(1), np.uint64(63)
    res = ((tr << top) | (t >> one)) & t & ((t << one) | (tl >> top))
    return np.where(w != 0, res, np.uint64(0))


@pytest.mark.parametrize("shape,seed", [((5, 4), 0), ((1, 1), 1), ((3, 7), 2)])
@pytest.mark.parametrize("mask_format", ["dense", Dense(SparseList(Element(False, dtype="bool")))])
def test_bitwise_erosion_of_uint64_words(shape, seed, mask_format):
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 2 ** 64, size=shape, dtype=np.uint64)
    w[0, 0] = ONES        # all ones: only its neighbours' words clear bits
    if shape[0] > 1:
        w[1, :] = 0       # an empty row: the mask skips it
    img = Tensor.from_numpy(w, "dense")
    mask = Tensor.from_numpy(w != 0, mask_format if mask_format == "dense" else Format(mask_format))
    out = Tensor.from_numpy(np.zeros_like(w), "dense")
    k = compile_program(erode_words, out=out, img=img, mask=mask)
    got = k(img=img, mask=mask).to_numpy()
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, erode_reference(w))
    np.testing.assert_array_equal(k.interpret(img=img, mask=mask).to_numpy(), erode_reference(w))
    # the all-ones literal is a uint64 constant of the C, not a double or a signed overflow
    assert "UINT64_C(18446744073709551615)" in k.c_source
