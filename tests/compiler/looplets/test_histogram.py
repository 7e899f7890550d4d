"""The masked histogram of 8-bit images (compiler.looplets.histogram), the Finch paper's case: uint8
pixels read in place, a sparse mask (a list of columns or runs) so the kernel visits only the
masked pixels. Checked against numpy (bincount of the masked pixels' bins), the IR interpreter and,
where installed, OpenCV's calcHist with the mask: by example (all masked, none masked, a 0x0 image,
stacks) and by hypothesis over shapes, densities, mask formats and bin counts."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.errors import UsageError
from compiler.looplets.histogram import (IMAGE_U8, MASK_LIST, MASK_RUNS, MaskedHistogram8, mask_format_for,
                                         masked_histogram_u8)

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = {"list": MASK_LIST, "runs": MASK_RUNS}


def oracle(img, mask, bins):
    """numpy's count: the bin of each masked pixel, ``v * bins // 256``."""
    return np.bincount((img[mask != 0].astype(np.int64) * bins) >> 8, minlength=bins)


def check(img, mask, bins, fmt):
    h = MaskedHistogram8(bins)
    m = mask if fmt == "auto" else Tensor.from_numpy(mask != 0, FORMATS[fmt])
    got = h(img, m)
    assert got.dtype == np.int64 and got.shape == (bins,)
    np.testing.assert_array_equal(got, oracle(img, mask, bins))
    # the kernel the call ran, against the IR interpreter
    (kernel,) = h.kernels.values()
    mt = m if isinstance(m, Tensor) else Tensor.from_numpy(mask != 0, mask_format_for(mask))
    img_t = Tensor.from_numpy(img, IMAGE_U8)
    np.testing.assert_array_equal(kernel.interpret(img=img_t, mask=mt).to_numpy(), got)
    return got


@SETTINGS
@given(st.integers(0, 9), st.integers(0, 13), st.sampled_from([0.0, 0.05, 0.3, 0.8, 1.0]),
       st.sampled_from(["list", "runs", "auto"]), st.integers(1, 256),
       st.integers(0, 2**32 - 1))
@example(0, 0, 1.0, "runs", 16, 0)       # a 0x0 image
@example(4, 0, 1.0, "list", 16, 0)       # rows without columns
@example(5, 7, 1.0, "runs", 16, 1)       # every pixel masked: one run per row
@example(5, 7, 0.0, "list", 16, 1)       # none masked
@example(3, 4, 1.0, "list", 256, 2)      # a bin per value
def test_agrees_with_numpy_and_the_interpreter(rows, cols, density, fmt, bins, seed):
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (rows, cols)).astype(np.uint8)
    img.flat[: min(2, img.size)] = (0, 255)[: min(2, img.size)]   # (both ends of the range)
    mask = rng.random((rows, cols)) < density
    check(img, mask, bins, fmt)


@pytest.mark.parametrize("fmt", ["list", "runs"])
def test_all_masked_none_masked_and_empty(fmt):
    img = np.arange(48, dtype=np.uint8).reshape(6, 8) * 5
    every = check(img, np.ones(img.shape, bool), 16, fmt)
    assert every.sum() == img.size
    assert check(img, np.zeros(img.shape, bool), 16, fmt).tolist() == [0] * 16
    assert check(np.zeros((0, 0), np.uint8), np.zeros((0, 0), bool), 16, fmt).tolist() == [0] * 16


def test_agrees_with_opencv_calchist():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (37, 53)).astype(np.uint8)
    for mask in (rng.random(img.shape) < 0.2, np.ones(img.shape, bool), np.zeros(img.shape, bool)):
        for bins in (16, 10, 256):
            want = cv2.calcHist([img], [0], mask.astype(np.uint8), [bins], [0, 256]).ravel()
            np.testing.assert_array_equal(masked_histogram_u8(img, mask, bins), want)


def test_a_stack_counts_each_image_in_one_call_and_any_length():
    rng = np.random.default_rng(5)
    h = MaskedHistogram8(16)
    for n in (3, 5, 1, 0):   # (a longer stack than the first: its counts have their own rows)
        imgs = rng.integers(0, 256, (n, 9, 11)).astype(np.uint8)
        masks = rng.random((n, 9, 11)) < 0.4
        masks[:1] = True
        got = h(imgs, masks)
        assert got.shape == (n, 16)
        np.testing.assert_array_equal(got, np.array([oracle(i, m, 16) for i, m in zip(imgs, masks)]).reshape(n, 16))


def test_the_image_is_read_in_place_and_a_change_to_it_is_seen():
    h = MaskedHistogram8(4)
    img = np.zeros((3, 4), np.uint8)
    mask = np.ones((3, 4), bool)
    assert h(img, mask).tolist() == [12, 0, 0, 0]
    img[0, :2] = 200   # (the same array, changed in place)
    assert h(img, mask).tolist() == [10, 0, 0, 2]
    assert h(np.full((3, 4), 255, np.uint8), mask).tolist() == [0, 0, 0, 12]


def test_a_mask_tensor_given_again_takes_the_fast_call_and_bad_input_is_still_refused(monkeypatch):
    """A call with the last call's mask Tensor and image (a video's frames under one mask) neither checks
    them again (a Format comparison was a tenth of a 16x16 image's call) nor asks the kernel's general path; an image changed in place is read again, and a mask or
    image the checks refuse is refused as before."""
    rng = np.random.default_rng(7)
    img = rng.integers(0, 256, (9, 30)).astype(np.uint8)
    mask = rng.random(img.shape) < 0.3
    M = Tensor.from_numpy(mask, MASK_LIST)
    h = MaskedHistogram8(16)
    np.testing.assert_array_equal(h(img, M), oracle(img, mask, 16))
    (kernel,) = h.kernels.values()

    def general_path(*args, **kwargs):
        raise AssertionError("the call took the kernel's general path")
    monkeypatch.setattr(type(kernel), "_call", general_path)
    monkeypatch.setattr("compiler.looplets.histogram.mask_format_for", general_path)
    monkeypatch.setattr("compiler.format.Format.__eq__", general_path)   # (the mask's format checked again)
    img[:3] = 255   # (the same array, changed in place)
    for _ in range(2):
        np.testing.assert_array_equal(h(img, M), oracle(img, mask, 16))
    monkeypatch.undo()
    with pytest.raises(UsageError, match=r"the image is \(9, 30\) and the mask \(4, 3\)"):
        h(img, Tensor.from_numpy(np.ones((4, 3), bool), MASK_LIST))
    with pytest.raises(UsageError, match="the image must be 8-bit .uint8., not int64"):
        h(img.astype(np.int64), M)
    with pytest.raises(UsageError, match="the mask Tensor must be"):
        h(img, Tensor.from_numpy(mask, "csr"))
    other = rng.integers(0, 256, img.shape).astype(np.uint8)
    np.testing.assert_array_equal(h(other, M), oracle(other, mask, 16))


def test_calls_on_two_threads_with_their_own_masks_and_images_count_their_own():
    """Two threads calling one histogram, each with its own mask and image, get each its own counts:
    what a call keeps of the last (its mask, image and kernel) is one tuple, never half another's."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(8)
    imgs = [rng.integers(0, 256, (7, 20)).astype(np.uint8) for _ in range(2)]
    masks = [rng.random((7, 20)) < p for p in (0.2, 0.7)]
    tensors = [Tensor.from_numpy(m, MASK_LIST) for m in masks]
    h = MaskedHistogram8(8)
    wants = [oracle(i, m, 8) for i, m in zip(imgs, masks)]

    def run(k):
        return all(np.array_equal(h(imgs[k], tensors[k]), wants[k]) for _ in range(300))
    with ThreadPoolExecutor(2) as pool:
        assert all(pool.map(run, [0, 1, 0, 1]))


def test_the_kernel_visits_only_the_masked_pixels_and_reads_bytes():
    img = np.zeros((4, 5), np.uint8)
    for fmt, loop in (("list", "while (qmas < qmas_stop)"), ("runs", "while (c_2 < phase_stop)")):
        h = MaskedHistogram8(16)
        h(img, Tensor.from_numpy(np.eye(4, 5, dtype=bool), FORMATS[fmt]))
        (kernel,) = h.kernels.values()
        body = kernel.c_source[kernel.c_source.index("int masked_histogram_8bit("):]
        assert "const uint8_t *restrict img_val" in body   # (the image's bytes, no int64 copy)
        assert loop in body   # the mask's entries (or runs) lead the loop over a row ...
        assert "for (int64_t c = 0; c < " not in body   # ... never a loop over every column
        # every bin is in range (a uint8 pixel's, among bins fixed at 16): no check, no error slots
        assert "bins_val[(img_val[r * img1_size + c" in body and "] * bins0_size) >> 8] += 1;" in body
        assert "coordinate_error" not in kernel.c_source and "int64_t *error" not in body


def test_the_mask_format_follows_its_runs():
    wide = np.zeros((4, 100), bool)
    wide[:, 5:90] = True
    assert mask_format_for(wide) == mask_format_for(np.ones((1, 64)))
    assert str(mask_format_for(wide)) == "Dense(SparseRunList(Pattern()))"
    assert str(mask_format_for(wide[:, :30])) == "Dense(SparseList(Pattern()))"   # (runs of 25: short)
    checker = np.indices((6, 6)).sum(axis=0) % 2 == 0
    assert str(mask_format_for(checker)) == "Dense(SparseList(Pattern()))"
    assert str(mask_format_for(np.zeros((0, 0)))) == "Dense(SparseList(Pattern()))"
    assert str(mask_format_for(np.ones((2, 3, 80)))) == "Dense(Dense(SparseRunList(Pattern())))"


def test_bad_input_is_refused_in_the_users_terms():
    h = MaskedHistogram8(16)
    img = np.zeros((3, 4), np.uint8)
    with pytest.raises(UsageError, match="the image must be 8-bit .uint8., not int64"):
        h(np.zeros((3, 4), np.int64), np.ones((3, 4)))
    with pytest.raises(UsageError, match=r"the image is \(3, 4\) and the mask \(4, 3\)"):
        h(img, np.ones((4, 3)))
    with pytest.raises(UsageError, match="the mask must have the image's 2 dimensions"):
        h(img, np.ones(12))
    with pytest.raises(UsageError, match=r"the image must be 2-D .* not of shape \(2, 2, 2, 2\)"):
        h(np.zeros((2, 2, 2, 2), np.uint8), np.ones((2, 2, 2, 2)))
    with pytest.raises(UsageError, match="the mask Tensor must be"):
        h(img, Tensor.from_numpy(np.ones((3, 4), bool), "csr"))
    for bad in (0, 257, 2.5, True):
        with pytest.raises(UsageError, match="bins must be an integer from 1 to 256"):
            MaskedHistogram8(bad)


@pytest.mark.parametrize("stack", [False, True])
@pytest.mark.parametrize("rule", ["8bit", "step", "shift"])
def test_one_generator_writes_each_kind_of_images_histogram(rule, stack):
    """histogram_program writes the 8-bit and the integer images' programs, alone and stacked:
    each kernel against numpy (values outside the range in no bin) and the IR interpreter."""
    from compiler.format import Format
    from compiler.looplets import compile_program
    from compiler.looplets.histogram import HISTOGRAMS, histogram_program
    from compiler.levels import Dense, Element
    rng = np.random.default_rng(3)
    shape = (3, 5, 7) if stack else (5, 7)
    mask = rng.random(shape) < 0.5
    if rule == "8bit":
        img = rng.integers(0, 256, shape).astype(np.uint8)
        scalars, fmt = {}, IMAGE_U8
        want_bins = lambda v: (v.astype(np.int64) * 16) >> 8   # noqa: E731
        kept = mask
    else:
        img = rng.integers(-20, 300, shape)
        scalars = dict(width=np.int64(16)) if rule == "step" else dict(shift=np.int64(4))
        scalars["top"], fmt = np.int64(256), Dense(Dense(Element(0, dtype="int64")))
        want_bins = lambda v: v // 16   # noqa: E731
        kept = mask & (img >= 0) & (img < 256)
    program = histogram_program(rule, stack)
    assert str(program) == str(HISTOGRAMS[rule, stack]) and program.name.startswith(f"masked_histogram_{rule}")
    images = Tensor.from_numpy(img, Format(Dense(fmt)) if stack else fmt)
    masks = Tensor.from_numpy(mask, Format(Dense(MASK_LIST)) if stack else MASK_LIST)
    counts = np.zeros((shape[0], 16) if stack else 16, np.int64)
    k = compile_program(program, bins=Tensor.from_numpy(counts, "dense" if not stack else Dense(Dense(Element(0)))),
                        img=images, mask=masks, **scalars)
    got = k(img=images, mask=masks, **scalars).to_numpy()
    per_image = [(img[i], kept[i]) for i in range(shape[0])] if stack else [(img, kept)]
    want = np.array([np.bincount(want_bins(v[m]), minlength=16) for v, m in per_image])
    np.testing.assert_array_equal(got, want if stack else want[0])
    np.testing.assert_array_equal(k.interpret(img=images, mask=masks, **scalars).to_numpy(), got)


def test_an_unknown_bin_rule_is_refused_naming_the_rules():
    from compiler.looplets.histogram import histogram_program
    with pytest.raises(UsageError, match="no bin rule 'log'; give one of '8bit', 'step', 'shift'"):
        histogram_program("log")


def bin_of_each_value():
    """An image holding each 8-bit value once (so 0 and 255), all masked, as a 16 x 16 image."""
    return np.arange(256, dtype=np.uint8).reshape(16, 16), np.ones((16, 16), bool)


@pytest.mark.parametrize("bins", [1, 2, 3, 5, 16, 100, 128, 255, 256])
def test_each_value_lands_in_numpys_bin_for_bin_counts_from_1_to_256(bins):
    """Without its per-pixel check, every value's bin still lands where numpy's do: the least (0)
    in the first, the greatest (255) in the last, against np.bincount and np.histogram's bins over
    [0, 256) (their edges are exact for these counts: 256 * k / bins is exact in float64)."""
    img, mask = bin_of_each_value()
    got = check(img, mask, bins, "runs")
    assert got[0] >= 1 and got[-1] >= 1 and got.sum() == 256
    np.testing.assert_array_equal(got, np.histogram(img, bins=bins, range=(0, 256))[0])


def test_the_bin_is_proved_in_range_for_every_bin_count_the_api_allows():
    """For each count of bins from 1 to 256 (a kernel is compiled for one: its counts' extent is
    fixed), the range the lowering proves of the 8-bit bin, with its facts, is exactly
    [0, bins - 1]: inside the counts, so it checks no pixel's bin. Worked out without compiling."""
    from compiler.imperative.ir import BinOp, Load, Var
    from compiler.looplets.bounds import IntFacts, assuming
    from compiler.looplets.ranges import value_range, within
    coord = BinOp(">>", BinOp("*", Load("img_val", Var("p")), Var("bins0_size")), 8)
    for bins in range(1, 257):
        facts = IntFacts()
        facts.value_range("img_val", 0, 255, "uint8")
        facts.value_range("bins0_size", bins, bins, "fixed", entries=False)
        with assuming(facts):
            assert value_range(coord) == (0, bins - 1) and within(coord, Var("bins0_size"))
            # (the proof is tight: one past each bin, the greatest value's is outside)
            assert not within(BinOp("+", coord, 1), Var("bins0_size"))


def test_the_kernel_records_why_it_checks_no_bin():
    h = MaskedHistogram8(16)
    img, mask = bin_of_each_value()
    h(img, mask)
    (kernel,) = h.kernels.values()
    (step,) = kernel.trace.find("coordinate-ranges")
    assert "bins, mode 0: line 6 of masked_histogram_8bit" in step.after
    assert "in [0, 15], bins0_size >= 16" in step.after
    facts = {r["fact"]: r for r in kernel.trace.find("int-facts")[0].data["facts"]}
    assert facts["0 <= img_val[_] <= 255"]["kind"] == "range"
    assert facts["16 <= bins0_size <= 16"]["reason"] == "bins's extent of storage mode 0, fixed when the kernel is compiled"


def _bins_kernel(program, img, **scalars):
    """``program``'s histogram (a loop program's source, or the program) of ``img`` (any integer
    dtype) into 16 bins, all pixels masked."""
    from compiler.format import Format
    from compiler.levels import Dense, Element
    from compiler.looplets import compile_program
    from compiler.looplets.language import loop_program
    if isinstance(program, str):
        program = loop_program(source=f"def hist(bins, img, mask{''.join(', ' + k for k in scalars)}):\n"
                                      "    bins[...] = 0\n    for r in _:\n"
                                      "        for c in _:\n            if mask[r, c]:\n"
                                      f"                bins[{program}] += 1\n")
    I = Tensor.from_numpy(img, Dense(Dense(Element(0, dtype=img.dtype.name))))
    M = Tensor.from_numpy(np.ones(img.shape, bool), MASK_LIST)
    bins = Tensor.from_numpy(np.zeros(16, np.int64), Format(Dense(Element(0, dtype="int64"))))
    kernel = compile_program(program, bins=bins, img=I, mask=M, **scalars)
    return kernel, dict(img=I, mask=M, **scalars)


def _lifted():
    """A histogram whose bin is a user function's result (a C body: its range is unknown)."""
    from compiler.user_functions import user_function
    from compiler.looplets.language import loop_program
    lift = user_function("lift", lambda x: x // 16 + 4 * (x >= 250), "return x / 16 + (x >= 250 ? 4 : 0);",
                         arity=1, dtype="int64")

    @loop_program
    def hist(bins, img, mask):
        bins[...] = 0
        for r in _:
            for c in _:
                if mask[r, c]:
                    bins[lift(img[r, c])] += 1
    return hist


@pytest.mark.parametrize("source, dtype, scalars, bad", [
    ("(img[r, c] * len(bins)) >> 8", "int32", {}, 256),    # an int32 pixel may be past 255
    ("(img[r, c] * 16) >> 8", "int8", {}, -1),             # an int8 one below 0
    ("(img[r, c] * count) >> 8", "uint8", {"count": np.int64(16)}, 255),   # a runtime bin count
    (None, "uint8", {}, 250),                              # a user function's result: anything
])
def test_a_bin_not_provably_in_range_keeps_its_check_and_its_clear_error(source, dtype, scalars, bad):
    """Where the bin's range is unknown or reaches past the counts, every pixel's bin is still
    checked, against numpy on values in range, and a bin outside raises the error naming the line."""
    from compiler.errors import KernelError
    img = np.array([[0, 15, 16, 127], [120, 17, 3, 100]], dtype)
    kernel, args = _bins_kernel(_lifted() if source is None else source, img, **scalars)
    body = kernel.c_source[kernel.c_source.index("int hist("):]
    assert body.count("coordinate_error(") == 1 and "coord >= bins0_size" in body
    assert kernel.trace.find("coordinate-ranges") == []
    want = np.bincount(np.minimum((img.astype(np.int64) * 16) >> 8, 15).ravel(), minlength=16)
    np.testing.assert_array_equal(kernel(**args).to_numpy(), want)
    img[1, 0] = bad
    args["img"] = Tensor.from_numpy(img, args["img"].format)
    if "count" in args:   # (twice the bins: the greatest value's bin is past them)
        args["count"] = np.int64(32)
    with pytest.raises(KernelError, match=r"line \d+ of hist \(bins\[.*\] \+= 1\): coordinate -?\d+ of bins \(mode 0\) "
                                          r"is outside its extent \[0, 16\)"):
        kernel(**args)
