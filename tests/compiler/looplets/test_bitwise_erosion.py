"""Finch's bitwise erosion (compiler.looplets.bitwise_erosion): images packed 64 pixels to a uint64
word, eroded by a 3x3 box or cross, against scipy.ndimage.binary_erosion (outside the image on),
the run-length erosion of compiler.looplets.morphology and OpenCV's cv2.erode, by example (0-size,
one row, widths around multiples of 64, sketches) and by hypothesis; each kernel against the IR
interpreter."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy import ndimage

from compiler import Tensor
from compiler.errors import UsageError
from compiler.fastcall import fast_call
from compiler.looplets.bitwise_erosion import (BITWISE_EROSIONS, PAD, SPARSE_WORDS, WORDS, BitImage,
                                               BitwiseErosion, erode_bitwise, pack_bits, unpack_bits)
from compiler.looplets.morphology import FOOTPRINTS, erode
from compiler.testing import assert_canonical, sketch

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = {"dense": WORDS, "sparse": SPARSE_WORDS}


def reference(img, footprint, iterations):
    if img.size == 0:       # (scipy refuses an empty image)
        return img.astype(bool)
    return ndimage.binary_erosion(img, FOOTPRINTS[footprint], iterations=iterations, border_value=1)


@st.composite
def images(draw):
    """Binary images up to 6 rows, of widths around the word boundaries: noise, or strokes."""
    h = draw(st.integers(0, 6))
    w = draw(st.one_of(st.integers(0, 10), st.sampled_from([63, 64, 65, 127, 128, 129]), st.integers(0, 150)))
    if draw(st.booleans()):
        p = draw(st.sampled_from([0.5, 0.9, 1.0]))
        bits = draw(st.lists(st.floats(0, 1, exclude_max=True), min_size=h * w, max_size=h * w))
        return (np.array(bits).reshape(h, w) < p) if h * w else np.zeros((h, w), bool)
    img = np.zeros((h, w), bool)
    for r in range(h if w else 0):
        for start, length in draw(st.lists(st.tuples(st.integers(0, w - 1), st.integers(1, w)), max_size=3)):
            img[r, start:start + length] = True
    return img


ONES_70 = np.ones((3, 70), bool)
ONES_70[0, 69] = False   # the last pixel of a row off, on the top border: the padding bits must read as on
EDGE = np.ones((2, 128), bool)
EDGE[1, 63] = False      # off at the top bit of a word: its right neighbour is bit 0 of the next word


@SETTINGS
@given(images(), st.sampled_from(sorted(FOOTPRINTS)), st.sampled_from(sorted(FORMATS)), st.integers(1, 3))
@example(np.zeros((0, 0), bool), "box", "dense", 1)
@example(np.zeros((0, 70), bool), "box", "sparse", 1)
@example(np.zeros((4, 0), bool), "cross", "dense", 2)
@example(np.ones((1, 1), bool), "box", "dense", 1)
@example(np.ones((1, 100), bool), "cross", "sparse", 3)       # one row: above and below are outside
@example(np.ones((3, 70), bool), "box", "sparse", 2)          # all on stays on, the padding too
@example(ONES_70, "box", "dense", 2)
@example(ONES_70, "cross", "sparse", 1)
@example(EDGE, "box", "dense", 1)
@example(EDGE, "cross", "sparse", 1)
@example(np.eye(5, 66, 61, dtype=bool) | np.eye(5, 66, 60, dtype=bool), "box", "sparse", 1)
def test_bitwise_erosion_matches_scipy(img, footprint, fmt, iterations):
    got = erode_bitwise(img, iterations, footprint, FORMATS[fmt])
    assert got.dtype == bool and got.shape == img.shape
    np.testing.assert_array_equal(got, reference(img, footprint, iterations))


@SETTINGS
@given(images())
def test_packing_round_trips(img):
    packed = pack_bits(img)
    assert packed.width == img.shape[1] and packed.words.shape == (img.shape[0], -(-img.shape[1] // 64))
    np.testing.assert_array_equal(packed.to_numpy(), img)
    np.testing.assert_array_equal(unpack_bits(packed.words.to_numpy(), img.shape[1]), img)


def test_pixel_order_in_the_words():
    img = np.zeros((1, 130), bool)
    img[0, [0, 63, 64, 129]] = True
    assert pack_bits(img).words.to_numpy().tolist() == [[1 | (1 << 63), 1, 2]]


def sketches():
    """A sketch and a magnified sketch (runs four pixels wide)."""
    rng = np.random.default_rng(7)
    return [sketch(90, 200, 6, rng), np.kron(sketch(40, 50, 4, rng), np.ones((4, 4), bool))]


@pytest.mark.parametrize("footprint", sorted(FOOTPRINTS))
def test_sketches_and_a_magnified_sketch_agree_with_the_run_length_erosion(footprint):
    for img in sketches():
        want = erode(img, 2, footprint).to_numpy()
        np.testing.assert_array_equal(want, reference(img, footprint, 2))
        for fmt in FORMATS.values():
            np.testing.assert_array_equal(erode_bitwise(img, 2, footprint, fmt), want)


@pytest.mark.parametrize("footprint", sorted(FOOTPRINTS))
def test_sketches_agree_with_opencv(footprint):
    """(OpenCV comes with the benchmark extra, not the test one: without it this test skips)"""
    cv2 = pytest.importorskip("cv2")
    for img in sketches():
        cv = cv2.erode(img.astype(np.uint8), FOOTPRINTS[footprint].astype(np.uint8), iterations=2)
        np.testing.assert_array_equal(erode_bitwise(img, 2, footprint), cv.astype(bool))


@pytest.mark.parametrize("footprint", sorted(FOOTPRINTS))
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_kernel_agrees_with_the_interpreter_and_keeps_garbage_padding_out(footprint, fmt):
    rng = np.random.default_rng(3)
    img = rng.random((5, 100)) < 0.9
    eroder = BitwiseErosion(footprint, FORMATS[fmt])
    packed = eroder.pack(img)
    # the bits past the last pixel hold anything: the kernel takes them as on all the same
    words = packed.words.to_numpy()
    words[:, -1] |= rng.integers(0, 2 ** 64, size=5, dtype=np.uint64) & ~np.uint64((1 << 36) - 1)
    messy = BitImage(Tensor.from_numpy(words, eroder.format), 100)
    out = eroder(messy)
    np.testing.assert_array_equal(out.to_numpy(), reference(img, footprint, 1))
    pad = Tensor.from_numpy(np.array([0, ~np.uint64((1 << 36) - 1)], np.uint64), PAD)
    interpreted = eroder.kernel.interpret(A=messy.words, pad=pad)
    np.testing.assert_array_equal(interpreted.B.to_numpy(), out.words.to_numpy())
    # no phase below the first row: reading the row under it, ``r + 1 < 0`` never holds for r >= 0
    # (each pass once had a `phase_stop = -1 < A0_size ? -1 : A0_size` and its empty loop nest)
    assert not re.search(r"= -1 < \w+ \? -1", eroder.kernel.c_source), eroder.kernel.c_source[:3000]
    if fmt == "sparse":
        # a step of three or more steppers is its last point, their values picked (point_steps):
        # the cross's C was 4,874 lines and the box's 1,569 (16 arms a step over five steppers); then
        # 3,653 and 1,510 with each seek an 18-line gallop inline, 2,264 and 1,189 with a helper's call
        lines = len(eroder.kernel.c_source.splitlines())
        assert lines < {"box": 1200, "cross": 2300}[footprint], lines
        assert eroder.kernel.c_source.count("step = step * 2") == 1   # (the one helper's)
        assert any("one point a step" in s.note for s in eroder.kernel.trace.steps)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_fast_call_frees_the_first_pass_and_gives_the_second(fmt):
    """The eroder's fast call wants B only: V, the first pass, is None among its outputs (the arrays the
    kernel grew for it freed as it returns), and B is the general path's B, array by array."""
    img = np.random.default_rng(5).random((4, 70)) < 0.8
    eroder = BitwiseErosion("box", FORMATS[fmt])
    packed = eroder.pack(img)
    eroder(packed)   # (compiles the kernel)
    pad = Tensor.from_numpy(np.array([0, ~np.uint64((1 << 6) - 1)], np.uint64), PAD)
    fast = fast_call(eroder.kernel, wanted=("B",))
    for _ in range(2):   # (the pooled cells, once more)
        out = fast({"A": packed.words, "pad": pad})
        general = eroder.kernel(A=packed.words, pad=pad)
        assert out.V is None and general.V is not None
        for got, want in zip(out.B.level_arrays(), general.B.level_arrays()):
            assert got.keys() == want.keys()
            for kind in got:
                np.testing.assert_array_equal(got[kind], want[kind])
    np.testing.assert_array_equal(unpack_bits(out.B.to_numpy(), 70), reference(img, "box", 1))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_eroded_words_are_stored_as_from_numpy_stores_them(fmt):
    """A sparse eroder's result stores its nonzero words only (a word eroded to 0 is not kept)."""
    img = sketch(30, 300, 5, np.random.default_rng(11))
    out = erode_bitwise(img, 1, "box", FORMATS[fmt])
    got = BitwiseErosion("box", FORMATS[fmt])(img)
    np.testing.assert_array_equal(got.to_numpy(), out)
    assert_canonical(got.words, got.words.to_numpy())
    assert got.words.format == BitwiseErosion("box", FORMATS[fmt]).format


def test_bad_bitwise_erosions_are_refused_in_the_users_terms():
    with pytest.raises(UsageError, match="footprint 'disk'"):
        erode_bitwise(np.ones((2, 2)), footprint="disk")
    with pytest.raises(UsageError, match="iterations must be a positive integer"):
        erode_bitwise(np.ones((2, 2)), iterations=0)
    with pytest.raises(UsageError, match="must be 2-D"):
        erode_bitwise(np.ones(5))
    with pytest.raises(UsageError, match="must be 2-D .rows, columns. or 3-D"):
        erode_bitwise(np.ones((1, 2, 3, 4)))
    with pytest.raises(UsageError, match="uint64 values"):
        BitwiseErosion("box", "csr")
    with pytest.raises(UsageError, match="2 words a row cannot hold 200 pixels"):
        BitwiseErosion("box")(BitImage(pack_bits(np.ones((2, 100), bool)).words, 200))
    # an eroder that planned its call for these words (their format, shape and width) still checks
    # what differs: another width, iterations not a positive integer
    eroder, packed = BitwiseErosion("box"), pack_bits(np.ones((2, 100), bool))
    assert eroder(eroder(packed), iterations=np.int64(2)).to_numpy().all()
    with pytest.raises(UsageError, match="2 words a row cannot hold 200 pixels"):
        eroder(BitImage(packed.words, 200))
    with pytest.raises(UsageError, match="iterations must be a positive integer, not True"):
        eroder(packed, iterations=True)
    assert {f for f, _ in BITWISE_EROSIONS} == set(FOOTPRINTS)


@st.composite
def stacks(draw):
    """1 to 3 images of one shape (noise of a drawn density), widths around a word."""
    count, h = draw(st.integers(1, 3)), draw(st.integers(0, 4))
    w = draw(st.sampled_from([0, 1, 5, 63, 64, 65, 100]))
    p = draw(st.sampled_from([0.5, 0.9, 1.0]))
    seed = draw(st.integers(0, 2 ** 16))
    return np.random.default_rng(seed).random((count, h, w)) < p


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stacks(), st.sampled_from(sorted(FOOTPRINTS)), st.sampled_from(sorted(FORMATS)), st.integers(1, 3))
@example(np.ones((2, 3, 70), bool), "box", "dense", 2)
@example(np.stack([ONES_70, ~ONES_70]), "cross", "sparse", 1)
def test_a_stack_erodes_each_image_alone_in_one_call(stack, footprint, fmt, iterations):
    got = erode_bitwise(stack, iterations, footprint, FORMATS[fmt])
    assert got.shape == stack.shape
    for g, img in zip(got, stack):
        np.testing.assert_array_equal(g, reference(img, footprint, iterations))


@pytest.mark.parametrize("footprint", sorted(FOOTPRINTS))
def test_the_stack_kernel_agrees_with_the_interpreter(footprint):
    rng = np.random.default_rng(5)
    stack = rng.random((3, 4, 80)) < 0.85
    eroder = BitwiseErosion(footprint, SPARSE_WORDS)
    packed = eroder.pack(stack)
    assert packed.words.format == eroder.stack_format
    out = eroder(packed)
    pad = Tensor.from_numpy(np.array([0, ~np.uint64((1 << 16) - 1)], np.uint64), PAD)
    interpreted = eroder.kernels[3].interpret(A=packed.words, pad=pad)
    np.testing.assert_array_equal(interpreted.B.to_numpy(), out.words.to_numpy())
    np.testing.assert_array_equal(out.to_numpy(), [reference(img, footprint, 1) for img in stack])
