"""Finch's masked histogram (§7.4, Fig 26) as the paper runs it: an 8-bit image, a sparse mask.

``bins[b]`` counts the pixels under the mask whose value ``v`` falls in bin ``b = v * bins // 256``
(``(v * bins) >> 8``: the bins split ``[0, 256)`` evenly, so 16 bins are the paper's
``div(img, 16)``), as OpenCV's ``cv2.calcHist([img], [0], mask, [bins], [0, 256])`` counts them.
The mask is stored sparse, so the kernel's loop over a row visits only the masked pixels: as a
list of their columns (:data:`MASK_LIST`, Finch's ``SparseList(Pattern())``: the better for
scattered pixels) or as runs (:data:`MASK_RUNS`, ``SparseRunList(Pattern())``: the better for
regions, each run one loop over consecutive pixels). The image is read as its uint8 bytes, in place
(no per-call conversion); every 8-bit value lies in a bin, so the kernel tests no range, and its
bin count is the counts' extent, fixed when it is compiled, so it checks no bin's index either. The
kernel counts into four tables (:data:`COUNTING`, the looplets schedule's ``privatize``), each of four
consecutive pixels into its own, so a run of pixels in one bin does not wait on its own updates. A stack of
images (3-D: images, rows, columns) with a stack of masks is counted in one kernel call, one
histogram per image (a call's fixed cost is most of a small image's count).

>>> import numpy as np
>>> img = np.array([[3, 70], [250, 200]], np.uint8)
>>> masked_histogram_u8(img, np.array([[1, 1], [0, 1]]), bins=4).tolist()
[1, 1, 0, 1]
>>> MaskedHistogram8(bins=4)(np.stack([img, img]), np.array([[[1, 0], [0, 0]], [[0, 0], [1, 1]]])).tolist()
[[1, 0, 0, 0], [0, 0, 0, 2]]
"""

from __future__ import annotations

import numpy as np

from ..errors import UsageError
from ..fastcall import fast_call
from ..format import Format, parse_format
from ..levels import Dense, Element, Pattern, SparseList, SparseRunList
from ..schedule import Schedule
from ..tensor import Tensor
from .compile import compile_program
from .language import LoopProgram, loop_program

__all__ = ["histogram_program", "BIN_RULES", "HISTOGRAMS", "COPIES", "COUNTING", "masked_histogram_8bit", "masked_histogram_8bit_stack",
           "MaskedHistogram8", "masked_histogram_u8", "IMAGE_U8", "MASK_LIST", "MASK_RUNS", "mask_format_for"]


#: how each kind of image's pixel ``v`` finds its bin: the bin's index, and the test that keeps a
#: value outside the bins from being counted (None: every value has a bin), with the scalars the
#: program takes. ``8bit``: uint8 pixels over ``[0, 256)`` in as many bins as ``bins`` holds (its
#: extent ``{n}``: the count of bins is the output's extent, so a kernel compiled for 16 bins proves
#: each pixel's bin in ``[0, 15]`` and checks none, :mod:`compiler.looplets.ranges`); ``step`` and
#: ``shift``: any integer, in bins ``width`` (or ``2 ** shift``) wide over ``[0, top)``, each bin checked
BIN_RULES = {"8bit": ("({v} * {n}) >> 8", None, ()),
             "step": ("{v} // width", "(v >= 0) & (v < top)", ("width", "top")),
             "shift": ("{v} >> shift", "(v >= 0) & (v < top)", ("shift", "top"))}


def histogram_program(rule: str, stack: bool = False) -> LoopProgram:
    """The masked histogram's loop program (Fig 26: ``bins[bin(v)] += 1`` for each pixel ``v`` where
    ``mask`` is set) for a kind of image (:data:`BIN_RULES`): 8-bit images (this module's
    :class:`MaskedHistogram8`) or integer ones over any range
    (:class:`compiler.looplets.morphology.MaskedHistogram`). With ``stack``, of each image ``img[n]``
    of a stack under its mask ``mask[n]``, into ``bins[n, :]``, in one kernel call for the stack.

    >>> print(histogram_program("8bit"))
    bins .= 0
    for r = _
      for c = _
        if mask[r, c]
          bins[>>(img[r, c] * size(bins, 0), 8)] += 1
    >>> print(histogram_program("shift"))
    bins .= 0
    for r = _
      for c = _
        if mask[r, c]
          let v = img[r, c]
            if (v >= 0) & (v < top[])
              bins[>>(v, shift[])] += 1
    """
    if rule not in BIN_RULES:
        raise UsageError(f"masked histogram: no bin rule {rule!r}; give one of {', '.join(map(repr, BIN_RULES))}")
    index, guard, scalars = BIN_RULES[rule]
    n, loops = ("n, ", ["for n in _:"]) if stack else ("", [])
    extent = "bins.shape[1]" if stack else "len(bins)"
    loops += ["for r in _:", "for c in _:"]
    lines = [f"def masked_histogram_{rule}{'_stack' if stack else ''}(bins, img, mask, {', '.join(scalars)}):",
             "    bins[...] = 0"]
    lines += ["    " * (depth + 1) + loop for depth, loop in enumerate(loops)]
    body = ["if mask[{n}r, c]:".format(n=n)]
    if guard is None:   # (the pixel read where it is binned: no let)
        body.append("    " + f"bins[{n}{index.format(v=f'img[{n}r, c]', n=extent)}] += 1")
    else:
        body += ["    " + f"v = img[{n}r, c]", "    " + f"if {guard}:", "        " + f"bins[{n}{index.format(v='v', n=extent)}] += 1"]
    lines += ["    " * (len(loops) + 1) + line for line in body]
    return loop_program(source="\n".join(lines) + "\n")


#: the masked histograms' programs by bin rule and ``stack``, made once: a kernel is cached for its program
HISTOGRAMS = {(rule, stack): histogram_program(rule, stack) for rule in BIN_RULES for stack in (False, True)}
#: Fig 26's masked histogram of an 8-bit image (``bins[(v * len(bins)) >> 8] += 1``), and of each image
#: of a stack in one call
masked_histogram_8bit, masked_histogram_8bit_stack = HISTOGRAMS["8bit", False], HISTOGRAMS["8bit", True]


#: how many tables the kernels count into
COPIES = 4
#: how the kernels count: into :data:`COPIES` tables, so consecutive pixels in one bin do not wait for
#: each other's update (:mod:`compiler.looplets.schedule`)
COUNTING = Schedule().privatize("bins", copies=COPIES)
#: an 8-bit image, row by row (a C-contiguous uint8 array is read in place)
IMAGE_U8 = Dense(Dense(Element(0, dtype="uint8")))
#: a mask as each row's list of set columns (Finch's ``SparseList(Pattern())``)
MASK_LIST = Dense(SparseList(Pattern()))
#: a mask as each row's runs of set pixels (Finch's ``SparseRunList(Pattern())``)
MASK_RUNS = Dense(SparseRunList(Pattern()))
#: a run this long on average or longer: the mask is stored as runs. Each run costs a step of the
#: run list's loop, each pixel of a list a column read: on a 1111 x 1111 mask 30% set, the list
#: took 0.43 ms whatever the runs' length, the runs 1.09 ms for runs of 2, 0.45 ms of 32, 0.31 of 128
RUN_LENGTH = 48
_COUNTS = {2: Dense(Element(0, dtype="int64")), 3: Dense(Dense(Element(0, dtype="int64")))}
_IMAGE = {2: parse_format(IMAGE_U8, ndim=2), 3: Format(Dense(parse_format(IMAGE_U8, ndim=2).root))}
_MASKS = {2: (parse_format(MASK_LIST, ndim=2), parse_format(MASK_RUNS, ndim=2))}
_MASKS[3] = tuple(Format(Dense(f.root)) for f in _MASKS[2])


def _read_in_place(a: np.ndarray) -> Tensor:
    """A C-contiguous uint8 array as an :data:`IMAGE_U8` Tensor (or a stack of them) over its own
    bytes: ``Tensor.from_numpy`` copies the values (a millisecond for a 1111 x 1111 image, ten times
    the kernel's count of a sparse mask's pixels)."""
    root = Element(0, a.reshape(-1), "uint8")
    for size in reversed(a.shape):
        root = Dense(root, size)
    return Tensor(root, shape=a.shape, name="img", check=False)


def mask_format_for(mask) -> Format:
    """:data:`MASK_RUNS` for a mask (any array, nonzero is set) whose runs of set pixels along its
    rows are :data:`RUN_LENGTH` long or longer on average, else :data:`MASK_LIST`.

    >>> str(mask_format_for(np.ones((2, 64)))) == str(parse_format(MASK_RUNS, ndim=2))
    True
    """
    m = np.asarray(mask) != 0
    ndim = max(m.ndim, 2)
    flat = m.reshape(-1, m.shape[-1]) if m.size else np.zeros((0, 0), bool)
    set_pixels = int(flat.sum())
    # a run starts at a set pixel whose left neighbour (or the row's edge) is not set
    starts = int(flat[:, :1].sum() + (flat[:, 1:] & ~flat[:, :-1]).sum()) if flat.size else 0
    fmt = MASK_RUNS if starts and set_pixels >= RUN_LENGTH * starts else MASK_LIST
    fmt = parse_format(fmt, ndim=2)
    return fmt if ndim == 2 else Format(Dense(fmt.root))


class MaskedHistogram8:
    """The histogram of 8-bit images (uint8) under masks, in ``bins`` bins over ``[0, 256)`` (1 to
    256 of them), as ``cv2.calcHist`` with a mask counts; a kernel is compiled for each mask format
    (and for stacks) on its first call.

    A mask may be an array (nonzero is set; stored as runs or as a list of columns, whichever
    :func:`mask_format_for` finds cheaper) or a Tensor in :data:`MASK_LIST` or :data:`MASK_RUNS`
    (used as it is: build it once to count many images under one mask).

    >>> h = MaskedHistogram8(bins=2)
    >>> h(np.array([[0, 1, 200, 255]], np.uint8), np.array([[1, 0, 1, 1]])).tolist()
    [1, 2]
    """

    def __init__(self, bins: int = 16):
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or not 1 <= bins <= 256:
            raise UsageError(f"masked_histogram_u8: bins must be an integer from 1 to 256, not {bins!r}")
        self.bins = int(bins)
        #: the kernels compiled so far: by mask format, and for a stack by its length too
        self.kernels = {}
        self._last = (None, None)   # (the last image array given, its Tensor)
        # (the last call's mask Tensor and image Tensor, which passed the checks, and their kernel: a
        # call with both again, a video's frames under one mask, checks and looks up nothing)
        self._ready = (None, None, None, None)
        self._fast = {}   # (each kernel's fast call, by the kernels' key: see __call__)

    def _image(self, image) -> Tensor:
        if isinstance(image, Tensor):
            ndim = len(image.shape)
            if ndim in _IMAGE and image.format == _IMAGE[ndim]:
                return image
            raise UsageError(f"masked_histogram_u8: the image Tensor must be {_IMAGE.get(ndim, _IMAGE[2])}, "
                             f"not {image.format}")
        a = np.asarray(image)
        if a.dtype != np.uint8:
            raise UsageError(f"masked_histogram_u8: the image must be 8-bit (uint8), not {a.dtype}: for other "
                             "integers use compiler.looplets.morphology.masked_histogram")
        if a.ndim not in _IMAGE:
            raise UsageError(f"masked_histogram_u8: the image must be 2-D (rows, columns) or 3-D (images, "
                             f"rows, columns), not of shape {a.shape}")
        last = self._last
        if a is not last[0]:
            # (a first-seen Tensor costs a call more than the count of a sparse mask's pixels: the
            # last image's is kept; it views the array, so a change in place is still read. Read
            # once into a local: another thread's call may replace it meanwhile)
            last = self._last = (a, _read_in_place(np.ascontiguousarray(a)))
        return last[1]

    def _mask(self, mask, ndim: int) -> Tensor:
        if isinstance(mask, Tensor):
            allowed = _MASKS[ndim]
            if len(mask.shape) != ndim or mask.format not in allowed:
                raise UsageError(f"masked_histogram_u8: the mask Tensor must be {' or '.join(map(str, allowed))}"
                                 f", not {mask.format}")
            return mask
        m = np.asarray(mask)
        if m.ndim != ndim:
            raise UsageError(f"masked_histogram_u8: the mask must have the image's {ndim} dimensions, not "
                             f"shape {m.shape}")
        return Tensor.from_numpy(m != 0, mask_format_for(m), name="mask")

    def __call__(self, image, mask) -> np.ndarray:
        """The counts (int64): one per bin, or for a stack one row per image."""
        img = self._image(image)
        ready = self._ready
        if mask is ready[0] and img is ready[1]:
            # (the kernel's fast call itself, when it has one: a Kernel's call packs its tensors and
            # asks it; anything it does not take, the kernel's general path takes and checks)
            out = None if ready[3] is None else ready[3]({"img": img, "mask": mask})
            return (ready[2](img=img, mask=mask) if out is None else out).to_numpy()
        ndim = len(img.shape)
        m = self._mask(mask, ndim)
        if tuple(img.shape) != tuple(m.shape):
            raise UsageError(f"masked_histogram_u8: the image is {tuple(img.shape)} and the mask "
                             f"{tuple(m.shape)}: give them the same shape")
        # (a stack's counts are shaped for its number of images: one kernel per stack length)
        key = (m.format,) if ndim == 2 else (m.format, img.shape[0])
        if key not in self.kernels:
            shape = (self.bins,) if ndim == 2 else (img.shape[0], self.bins)
            counts = Tensor.from_numpy(np.zeros(shape, np.int64), _COUNTS[ndim], name="bins")
            program = masked_histogram_8bit if ndim == 2 else masked_histogram_8bit_stack
            self.kernels[key] = compile_program(program, bins=counts, img=img, mask=m, schedule=COUNTING)
        kernel = self.kernels[key]
        if m is mask:   # (a Tensor given: the next call may give it again; a Tensor's format and shape are fixed)
            if key not in self._fast:
                self._fast[key] = fast_call(kernel)
            self._ready = (m, img, kernel, self._fast[key])
        return kernel(img=img, mask=m).to_numpy()


_HISTOGRAMS: dict = {}


def masked_histogram_u8(image, mask, bins: int = 16) -> np.ndarray:
    """How many pixels of an 8-bit ``image`` (uint8) where ``mask`` is set (nonzero) fall in each of
    ``bins`` equal bins over ``[0, 256)``: ``cv2.calcHist([image], [0], mask, [bins], [0, 256])``
    as int64 counts. The kernels are kept per number of bins, so a second call compiles nothing."""
    if bins not in _HISTOGRAMS:
        _HISTOGRAMS[bins] = MaskedHistogram8(bins)
    return _HISTOGRAMS[bins](image, mask)
