"""Finch's image case studies (compiler.looplets.morphology): erosion of binary images by a 3x3 box
or cross, run-length and dense, against scipy.ndimage.binary_erosion (pixels outside the image on,
as OpenCV and the paper take them), by example (all off, all on, borders, thin strokes) and by
hypothesis; the masked histogram against numpy.histogram of the masked values. Each kernel is also
checked against the IR interpreter, and a run-length output is stored canonically (maximal runs)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy import ndimage

from compiler import Tensor
from compiler.errors import UsageError
from compiler.looplets import compile_program
from compiler.looplets.morphology import (DENSE, EROSIONS, FOOTPRINTS, MASK_DENSE, MASK_RUNS, PIXELS, RUNS, Erosion,
                                          MaskedHistogram, erode, masked_histogram, masked_histogram_shift,
                                          masked_histogram_step)
from compiler.schedule import Schedule
from compiler.testing import assert_canonical
from compiler.testing import sketch as draw_sketch

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = {"runs": RUNS, "dense": DENSE}
MASKS = {"runs": MASK_RUNS, "dense": MASK_DENSE}


@pytest.fixture(scope="module")
def kernel():
    """``kernel(footprint, format, stack=False)``: the erosion kernel for images (``stack``: stacks of
    them) in ``format``, compiled once for the module (each is thousands of lines of C). It is
    compiled for the formats, as an :class:`Erosion` compiles, so erode() and every eroder of that
    footprint and format share it."""
    made = {}

    def get(footprint, fmt, stack=False):
        key = footprint, str(fmt), stack
        if key not in made:
            eroder = Erosion(footprint, fmt)
            f = eroder.stack_format if stack else eroder.format
            made[key] = compile_program(EROSIONS[footprint, stack], V=f, B=f, A=f)
        return made[key]
    return get


def reference(img, footprint, iterations):
    return ndimage.binary_erosion(img, FOOTPRINTS[footprint], iterations=iterations, border_value=1)


def check_erosion(img, footprint, fmt, iterations):
    got = erode(img, iterations, footprint, FORMATS[fmt])
    assert_canonical(got, reference(img, footprint, iterations))


@st.composite
def images(draw, max_side=9):
    """Small binary images: noise, or runs (strokes) of on pixels in each row."""
    h, w = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
    if draw(st.booleans()):
        cells = draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w))
        return np.array(cells, bool).reshape(h, w)
    img = np.zeros((h, w), bool)
    for r in range(h):
        for start, length in draw(st.lists(st.tuples(st.integers(0, w - 1), st.integers(1, w)), max_size=3)):
            img[r, start:start + length] = True
    return img


BORDER = np.ones((4, 5), bool)
BORDER[0, 2] = False   # an off pixel on the top border: only its neighbours go


@SETTINGS
@given(images(), st.sampled_from(sorted(FOOTPRINTS)), st.sampled_from(sorted(FORMATS)), st.integers(1, 3))
@example(np.zeros((3, 4), bool), "box", "runs", 1)
@example(np.ones((3, 4), bool), "box", "runs", 2)          # all on stays on: the border counts as on
@example(np.ones((1, 1), bool), "cross", "runs", 1)
@example(np.ones((1, 7), bool), "box", "dense", 1)
@example(np.ones((6, 1), bool), "cross", "runs", 3)
@example(BORDER, "box", "runs", 1)
@example(BORDER, "cross", "dense", 2)
def test_erosion_matches_scipy(img, footprint, fmt, iterations):
    check_erosion(img, footprint, fmt, iterations)


def sketch(h, w, strokes, seed):
    """:func:`compiler.testing.sketch` from a fixed seed."""
    return draw_sketch(h, w, strokes, np.random.default_rng(seed))


@pytest.mark.parametrize("footprint", sorted(FOOTPRINTS))
def test_erosion_of_sketches_and_a_magnified_digit(footprint):
    img = sketch(60, 80, 12, 3)
    for fmt in FORMATS:
        check_erosion(img, footprint, fmt, 2)
    digit = np.kron(np.arange(64).reshape(8, 8) % 5 > 1, np.ones((6, 6), bool))   # blocks of 6x6
    check_erosion(digit, footprint, "runs", 2)


def test_each_erosion_kernel_agrees_with_the_interpreter(kernel):
    img = sketch(12, 17, 4, 1)
    up = np.pad(img, ((1, 0), (0, 0)), constant_values=True)[:-1]
    down = np.pad(img, ((0, 1), (0, 0)), constant_values=True)[1:]
    for fmt in (RUNS, DENSE):
        A = Tensor.from_numpy(img, fmt)
        for footprint in ("box", "cross"):
            k = kernel(footprint, fmt)
            got, interpreted = k(A=A), k.interpret(A=A)
            for a, b in zip(got, interpreted):
                np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
            np.testing.assert_array_equal(got.V.to_numpy(), up & img & down)   # the vertical pass
            np.testing.assert_array_equal(got.B.to_numpy(), reference(img, footprint, 1))


def test_a_run_length_erosion_works_only_at_the_runs(kernel):
    # each row's loop walks runs (a stepper over left/right), never a pixel at a time
    c = kernel("box", RUNS).c_source
    assert "A1_left[" in c and "A1_right[" in c and "V1_left[" in c


def test_an_eroder_keeps_its_kernel_and_takes_tensors_of_another_format():
    e = Erosion("cross", RUNS)
    img = sketch(20, 20, 3, 5)
    first = e(img)
    kernel = e.kernels[2]
    again = e(Tensor.from_numpy(img, DENSE), iterations=1)   # converted to run-length
    assert e.kernels == {2: kernel}
    assert_canonical(again, first.to_numpy())
    np.testing.assert_array_equal(first.to_numpy(), reference(img, "cross", 1))
    # its result, whose format the eroder planned for, eroded again (numpy's integers count too)
    assert_canonical(e(e(first), iterations=np.int64(2)), reference(img, "cross", 4))
    with pytest.raises(UsageError, match="iterations must be a positive integer, not 0"):
        e(first, iterations=0)
    # another eroder of the footprint and format, given an image of another shape, lowers nothing:
    # the kernel is compiled for the formats (it was lowered anew for each image shape)
    other = Erosion("cross", RUNS)
    np.testing.assert_array_equal(other(sketch(7, 9, 1, 1)).to_numpy(), reference(sketch(7, 9, 1, 1), "cross", 1))
    assert other.kernels[2].trace is kernel.trace


@st.composite
def stacks(draw):
    """Stacks of 1 to 4 small images of one shape (noise, strokes, all off, all on)."""
    h, w = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    count = draw(st.integers(1, 4))
    out = []
    for _ in range(count):
        kind = draw(st.sampled_from(["noise", "off", "on"]))
        if kind == "noise":
            out.append(np.array(draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w)), bool).reshape(h, w))
        else:
            out.append(np.full((h, w), kind == "on"))
    return np.array(out)


@SETTINGS
@given(stacks(), st.sampled_from(sorted(FOOTPRINTS)), st.sampled_from(sorted(FORMATS)), st.integers(1, 2))
@example(np.array([np.ones((3, 3), bool), np.zeros((3, 3), bool), np.eye(3, dtype=bool)]), "box", "runs", 1)
def test_a_stack_erodes_each_image_alone(stack, footprint, fmt, iterations):
    # (an image's border is its own: the image above or below in the stack is no neighbour)
    got = erode(stack, iterations, footprint, FORMATS[fmt])
    assert got.shape == stack.shape
    expected = np.array([reference(img, footprint, iterations) for img in stack])
    np.testing.assert_array_equal(got.to_numpy(), expected)


def test_a_stack_of_digits_in_one_call_and_the_interpreter(kernel):
    digit = np.kron(np.arange(64).reshape(8, 8) % 5 > 1, np.ones((3, 3), bool))
    stack = np.array([digit, digit.T, ~digit, sketch(24, 24, 3, 7)])
    e = Erosion("box", RUNS)
    got = e(stack, 2)
    np.testing.assert_array_equal(got.to_numpy(), [reference(img, "box", 2) for img in stack])
    assert set(e.kernels) == {3}
    A = Tensor.from_numpy(stack[:, :6, :7], e.stack_format)
    for footprint in ("box", "cross"):
        k = kernel(footprint, RUNS, stack=True)
        for a, b in zip(k(A=A), k.interpret(A=A)):
            np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def test_bad_erosions_are_refused_in_the_users_terms():
    with pytest.raises(UsageError, match="footprint 'disk'"):
        erode(np.ones((3, 3)), footprint="disk")
    with pytest.raises(UsageError, match="iterations must be a positive integer, not 0"):
        erode(np.ones((3, 3)), 0)
    with pytest.raises(UsageError, match=r"image must be 2-D \(rows, columns\) or 3-D \(images, rows, columns\), "
                                         r"not of shape \(3,\)"):
        erode(np.ones(3))
    with pytest.raises(UsageError, match="image must be 2-D"):
        erode(Tensor.from_numpy(np.ones(3), "dense"))
    with pytest.raises(UsageError, match=r"not of shape \(1, 2, 2, 2\)"):
        erode(np.ones((1, 2, 2, 2)))
    with pytest.raises(UsageError, match="store rows outermost"):
        Erosion("box", "csc")


# --------------------------------------------------------------------------- the masked histogram

def histogram_reference(img, mask, bins, value_range):
    # (numpy's last bin is closed, [240, 256] for 16 bins; OpenCV's ranges and ours are half-open)
    v = img[mask != 0]
    return np.histogram(v[v < value_range], bins, (0, value_range))[0]


@st.composite
def histogram_cases(draw):
    h, w = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    img = np.array(draw(st.lists(st.integers(-20, 300), min_size=h * w, max_size=h * w))).reshape(h, w)
    mask = np.array(draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w))).reshape(h, w)
    # (bins a power of two wide shift, others divide)
    bins, value_range = draw(st.sampled_from([(1, 256), (2, 256), (16, 256), (256, 256), (16, 240), (3, 300), (7, 7)]))
    return img, mask, bins, value_range


@SETTINGS
@given(histogram_cases(), st.sampled_from(["runs", "dense"]))
@example((np.array([[255, 256, -1, 0]]), np.ones((1, 4), bool), 16, 256), "runs")   # the range's ends
@example((np.array([[239, 240, -1, 0]]), np.ones((1, 4), bool), 16, 240), "runs")
@example((np.zeros((3, 3), int), np.zeros((3, 3), bool), 16, 256), "dense")          # nothing masked
def test_masked_histogram_matches_numpy(case, mask_format):
    img, mask, bins, value_range = case
    got = MaskedHistogram(bins, value_range, MASKS[mask_format])(img, mask)
    np.testing.assert_array_equal(got, histogram_reference(img, mask, bins, value_range))
    kept = mask & (img >= 0) & (img < value_range)
    np.testing.assert_array_equal(got, np.bincount(img[kept] // (value_range // bins), minlength=bins))


def test_masked_histogram_on_a_sketch_mask_and_the_interpreter():
    rng = np.random.default_rng(2)
    img = rng.integers(0, 256, (40, 50))
    mask = sketch(40, 50, 6, 2)
    np.testing.assert_array_equal(masked_histogram(img, mask), histogram_reference(img, mask, 16, 256))
    I, M = Tensor.from_numpy(img, PIXELS), Tensor.from_numpy(mask, MASK_RUNS)
    bins = Tensor.from_numpy(np.zeros(16, np.int64), "dense")
    for program, scalar in ((masked_histogram_step, dict(width=np.int64(16))),
                            (masked_histogram_shift, dict(shift=np.int64(4)))):
        args = dict(img=I, mask=M, top=np.int64(256), **scalar)
        k = compile_program(program, bins=bins, **args)
        np.testing.assert_array_equal(k(**args).to_numpy(), histogram_reference(img, mask, 16, 256))
        np.testing.assert_array_equal(k(**args).to_numpy(), k.interpret(**args).to_numpy())
    assert "mask_val" not in k.c_source and ">>" in k.c_source   # (a run-length mask's runs need no value)


@pytest.mark.parametrize("program,scalar", [(masked_histogram_step, dict(width=np.int64(16))),
                                            (masked_histogram_shift, dict(shift=np.int64(4)))])
def test_an_out_of_range_value_is_not_counted_and_not_written(program, scalar):
    # unguarded, bins[v // w] wrote bins_val[62] past a 16-bin array for v = 999 (a checked build
    # says so; an unchecked one corrupts memory)
    img = Tensor.from_numpy(np.array([[999, 5, -7, 300, 256]]), PIXELS)
    args = dict(img=img, mask=Tensor.from_numpy(np.ones((1, 5), bool), MASK_DENSE), top=np.int64(256), **scalar)
    k = compile_program(program, bins=Tensor.from_numpy(np.zeros(16, np.int64), "dense"), checked=True,
                        schedule=Schedule().privatize("bins", copies=4), **args)   # (as MaskedHistogram counts)
    np.testing.assert_array_equal(k(**args).to_numpy(), np.eye(16, dtype=np.int64)[0])
    assert "each updating its own table of bins" in k.c_source


def test_the_integer_histogram_counts_into_four_tables():
    # (it compiled with no schedule: only MaskedHistogram8 asked for privatize; the transformation
    # applies to the integer programs as they are, the range test and the bin's check in each lane)
    rng = np.random.default_rng(5)
    img = np.concatenate([np.full((3, 9), 37), rng.integers(-5, 70, (3, 9))])   # runs in one bin, and not
    img[1, 4] = 64                                                               # (out of the range)
    mask = np.ones(img.shape, bool)
    mask[4, 2] = mask[5, 7:] = False
    h = MaskedHistogram(4, 64)
    assert h.schedule == Schedule().privatize("bins", copies=4)
    got = h(img, mask)
    np.testing.assert_array_equal(got, histogram_reference(img, mask, 4, 64))
    np.testing.assert_array_equal(got, np.bincount(img[mask & (img >= 0) & (img < 64)] >> 4, minlength=4))
    assert "4 iterations a step, each updating its own table of bins" in h.kernel.c_source
    assert "bins: 1 loop unrolled by 4" in h.kernel.trace.find("privatize")[0].note
    args = dict(img=Tensor.from_numpy(img, PIXELS), mask=Tensor.from_numpy(mask, MASK_RUNS), shift=np.int64(4),
                top=np.int64(64))
    np.testing.assert_array_equal(h.kernel.interpret(**args).to_numpy(), got)
    # one table asked for, or too many bins for the tables on the stack: no privatize, the same counts
    one = MaskedHistogram(4, 64, tables=1)
    assert one.schedule is None
    np.testing.assert_array_equal(one(img, mask), got)
    assert "own table" not in one.kernel.c_source
    assert MaskedHistogram(2731, 2731).schedule is None and MaskedHistogram(2730, 2730).schedule is not None
    with pytest.raises(UsageError, match="tables must be an integer from 1 to 16, not 0"):
        MaskedHistogram(4, 64, tables=0)


def test_bad_histograms_are_refused_in_the_users_terms():
    with pytest.raises(UsageError, match="value_range 256 is not a multiple of bins 10"):
        masked_histogram(np.zeros((2, 2), int), np.ones((2, 2)), bins=10)
    with pytest.raises(UsageError, match="the image is .2, 2. and the mask .2, 3."):
        masked_histogram(np.zeros((2, 2), int), np.ones((2, 3)))
    with pytest.raises(UsageError, match="image must hold integers, not float64"):
        masked_histogram(np.zeros((2, 2)), np.ones((2, 2)))
    with pytest.raises(UsageError, match="bins must be a positive integer"):
        masked_histogram(np.zeros((2, 2), int), np.ones((2, 2)), bins=0)
