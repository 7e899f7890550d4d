"""Finch's image case studies (§7.4, Fig 26): erosion of binary images and a masked histogram.

Erosion "turns off a pixel unless all of its neighbors are on". As the paper's best variant does,
a 3x3 box is a two-part stencil: a vertical pass (each pixel and the ones above and below it),
then a horizontal one over its result; a 3x3 cross is the vertical pass and, in the second, the
pixel's left and right neighbours in the image. The neighbours are permissive reads (``~``),
and a read outside the image is on (``coalesce(..., True)``), as in the paper and OpenCV's
``cv2.erode`` (``scipy.ndimage.binary_erosion`` with ``border_value=1``). Stored run-length
(:data:`RUNS`, a ``SparseRunList`` per row), each pass coiterates three rows' runs and does work
only where one of them starts or ends, writing runs; a dense image (:data:`DENSE`) works pixel by
pixel. Both passes are one kernel, the vertical pass's result an output the horizontal pass reads,
where the paper keeps one row of it in a temporary: the looplets strategy allocates Dense
temporaries only, which would visit every pixel. The paper's bit-packed variant is
:mod:`compiler.looplets.bitwise_erosion`.

The masked histogram counts the pixels under a mask by value, OpenCV's ``calcHist`` with a mask:
bin ``b`` counts the masked pixels whose value lies in ``[b * w, (b + 1) * w)``, ``w`` the
range divided by the bins; values outside the range are not counted, as ``numpy.histogram``'s
``range`` and ``calcHist``'s ``ranges`` leave them out. With the mask run-length, the loop over a
row visits only its runs.

>>> import numpy as np
>>> img = np.zeros((5, 6), bool)
>>> img[1:5, 1:5] = True
>>> erode(img).to_numpy().astype(int)
array([[0, 0, 0, 0, 0, 0],
       [0, 0, 0, 0, 0, 0],
       [0, 0, 1, 1, 0, 0],
       [0, 0, 1, 1, 0, 0],
       [0, 0, 1, 1, 0, 0]])
>>> masked_histogram(np.array([[3, 70], [250, 200]]), np.array([[1, 1], [0, 1]]), bins=4).tolist()
[1, 1, 0, 1]
"""

from __future__ import annotations

import numpy as np

from ..errors import UsageError
from ..fastcall import fast_call
from ..format import Format, parse_format
from ..imperative.tables import STACK_LIMIT
from ..levels import Dense, Element, Pattern, SparseRunList
from ..schedule import Schedule
from ..tensor import Tensor
from .compile import compile_program
from .histogram import COPIES, HISTOGRAMS
from .language import LoopProgram, loop_program

__all__ = ["erosion_program", "EROSIONS", "ROW_PASS_READS", "erode_box", "erode_cross", "erode_box_stack",
           "erode_cross_stack", "masked_histogram_step", "masked_histogram_shift",
           "Erosion", "MaskedHistogram", "erode", "masked_histogram", "check_iterations", "RUNS", "DENSE",
           "FOOTPRINTS", "PIXELS", "MASK_RUNS", "MASK_DENSE"]


#: whose left and right neighbours the second (horizontal) pass reads, per structuring element:
#: a box is a column then a row (eroding by it erodes by the column, then that result by the
#: row), a cross their union (a pixel stays on if it survives both, each eroding the image)
ROW_PASS_READS = {"box": "V", "cross": "A"}


def erosion_program(footprint: str, stack: bool = False) -> LoopProgram:
    """The loop program of one erosion by a 3x3 ``footprint`` (``"box"`` or ``"cross"``), in two
    passes: ``V``, each pixel and its neighbours above and below all on (outside the image counts
    as on), then ``B``, each pixel of ``V`` and its neighbours left and right, in ``V`` for a box
    and in the image ``A`` for a cross (:data:`ROW_PASS_READS`). With ``stack``, of each image
    ``A[n]`` of a stack, in one kernel call for the whole stack. ``V`` is an output because the
    looplets strategy allocates only Dense temporaries.

    >>> print(erosion_program("cross"))
    for r = _
      for c = _
        V[r, c] = coalesce(A[permit(r - 1), c], true) & A[r, c] & coalesce(A[permit(r + 1), c], true)
    for r = _
      for c = _
        B[r, c] = coalesce(A[r, permit(c - 1)], true) & V[r, c] & coalesce(A[r, permit(c + 1)], true)
    """
    if footprint not in ROW_PASS_READS:
        raise UsageError(f"erode: footprint {footprint!r}: give one of {', '.join(map(repr, ROW_PASS_READS))}")
    row = ROW_PASS_READS[footprint]
    n, loops = ("n, ", ["for n in _:"]) if stack else ("", [])
    loops += ["for r in _:", "for c in _:"]
    passes = (f"V[{n}r, c] = coalesce(A[{n}~(r - 1), c], True) & A[{n}r, c] & "
              f"coalesce(A[{n}~(r + 1), c], True)",
              f"B[{n}r, c] = coalesce({row}[{n}r, ~(c - 1)], True) & V[{n}r, c] & "
              f"coalesce({row}[{n}r, ~(c + 1)], True)")
    lines = [f"def erode_{footprint}{'_stack' if stack else ''}(V, B, A):"]
    for assignment in passes:
        lines += ["    " * (depth + 1) + loop for depth, loop in enumerate(loops)]
        lines.append("    " * (len(loops) + 1) + assignment)
    return loop_program(source="\n".join(lines) + "\n")


#: the erosion programs by footprint and ``stack``, made once: a kernel is cached for its program
EROSIONS = {(footprint, stack): erosion_program(footprint, stack) for footprint in ROW_PASS_READS
            for stack in (False, True)}
#: one erosion by a 3x3 box or cross, of an image or (``_stack``) of each image of a stack
erode_box, erode_cross = EROSIONS["box", False], EROSIONS["cross", False]
erode_box_stack, erode_cross_stack = EROSIONS["box", True], EROSIONS["cross", True]


#: Fig 26's masked histogram of integer images (this module's :class:`MaskedHistogram`):
#: ``bins[img // width] += 1`` where ``mask`` is set and ``0 <= img < top`` (a value outside is in
#: no bin, and never indexes past ``bins``), and the same for bins ``2 ** shift`` wide, a shift, not
#: a division, per pixel (the paper's ``div(img, 16)``); one generator writes them and the 8-bit
#: images' (:func:`compiler.looplets.histogram.histogram_program`)
masked_histogram_step, masked_histogram_shift = HISTOGRAMS["step", False], HISTOGRAMS["shift", False]


#: a binary image stored run-length: rows of runs of on pixels (Finch's SparseRunList)
RUNS = Dense(SparseRunList(Element(False, dtype="bool")))
#: a binary image stored pixel by pixel
DENSE = Dense(Dense(Element(False, dtype="bool")))
#: the structuring elements :class:`Erosion` takes (3x3 each)
FOOTPRINTS = {"box": np.ones((3, 3), bool),
              "cross": np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool)}
#: a histogram's image: int64 values, dense
PIXELS = Dense(Dense(Element(0, dtype="int64")))
#: a histogram's mask, run-length (runs of set pixels, no values: each run's pixels are set) or dense
MASK_RUNS, MASK_DENSE = Dense(SparseRunList(Pattern())), DENSE
_COUNTS = Dense(Element(0, dtype="int64"))
_PIXELS = parse_format(PIXELS, ndim=2)


def _image(image, fmt: Format, what: str, name: str, stacks: Format | None = None) -> Tensor:
    """``image`` (a 2-D array, nonzero is on, or a Tensor) as a Tensor in ``fmt`` (parsed once by
    the caller: parsing a format costs more than a small image's kernel call); with ``stacks``, a 3-D
    one (a stack of images) in that format."""
    ndim = image.ndim if isinstance(image, Tensor) else np.ndim(image)
    if ndim == 3 and stacks is not None:
        fmt = stacks
    elif ndim != 2:
        shape = tuple(image.shape) if isinstance(image, Tensor) else np.shape(image)
        kinds = "2-D (rows, columns) or 3-D (images, rows, columns)" if stacks else "2-D (rows, columns)"
        raise UsageError(f"{what}: {name} must be {kinds}, not of shape {shape}")
    if isinstance(image, Tensor):
        return image if image.format == fmt else image.asformat(fmt)
    a = np.asarray(image)
    if fmt == _PIXELS:
        if a.dtype.kind not in "biu" or (a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size
                                         and a.max() > np.iinfo(np.int64).max):
            raise UsageError(f"{what}: {name} must hold integers, not {a.dtype}")
        return Tensor.from_numpy(a.astype(np.int64), fmt, name=name)
    return Tensor.from_numpy(a != 0, fmt, name=name)


class Erosion:
    """Erosion by a 3x3 ``footprint`` (``"box"`` or ``"cross"``) of binary images stored in ``format``
    (:data:`RUNS` or :data:`DENSE`), or of stacks of them (3-D: images, rows, columns), its kernels
    compiled once for that footprint and format (on the first call; other eroders of them share them).

    >>> import numpy as np
    >>> img = Tensor.from_numpy(np.ones((3, 4), bool), RUNS)
    >>> bool(Erosion("cross")(img, iterations=2).to_numpy().all())
    True
    """

    def __init__(self, footprint: str = "box", format=RUNS):
        if footprint not in FOOTPRINTS:
            raise UsageError(f"erode: footprint {footprint!r}: give one of {', '.join(map(repr, FOOTPRINTS))}")
        self.footprint, self.format = footprint, parse_format(format, ndim=2)
        if self.format.mode_order != (0, 1):
            raise UsageError(f"erode: the image format must store rows outermost, not {self.format}")
        #: a stack of images: each stored as one is, under a Dense level of images
        self.stack_format = Format(Dense(self.format.root))
        #: the kernels of one erosion (both passes) of an image and of a stack, once compiled
        self.kernels = {}
        self._fast: dict = {}
        self._plans: dict = {}

    def __call__(self, image, iterations: int = 1) -> Tensor:
        """``image`` eroded ``iterations`` times, in this eroder's format."""
        if iterations.__class__ is not int or iterations < 1:
            check_iterations(iterations, "erode")
        # (an image of a format object checked before, a kernel's result: its kernel and fast call at
        # once; an iteration calls an eroder thousands of times on small images)
        plan = self._plans.get(id(image.format)) if image.__class__ is Tensor else None
        if plan is None or plan[0] is not image.format:
            plan, image = self._plan(image)
        _, kernel, fast = plan
        A = image
        for _ in range(iterations):
            out = fast({"A": A}) if fast is not None else None
            A = (out if out is not None else kernel(A=A)).B
        return A

    def _plan(self, image) -> tuple:
        """``(plan, image as a Tensor)`` for ``image`` (a 2-D or 3-D array or Tensor), checked and
        converted to the eroder's format: the plan is ``(format, kernel, fast call)``, the kernel
        compiled on first use, kept for the format object of a Tensor already in the eroder's format
        (its next call checks nothing)."""
        A = _image(image, self.format, "erode", "image", self.stack_format)
        ndim = len(A.shape)
        if ndim not in self.kernels:
            fmt = self.format if ndim == 2 else self.stack_format
            # (for the formats, not the image's shape: every eroder of them shares the kernel)
            self.kernels[ndim] = compile_program(EROSIONS[self.footprint, ndim == 3], V=fmt, B=fmt, A=fmt)
        kernel = self.kernels[ndim]
        if ndim not in self._fast:
            self._fast[ndim] = fast_call(kernel, wanted=("B",))   # (V, the first pass, freed at once)
        plan = (A.format, kernel, self._fast[ndim])
        if A is image:
            if len(self._plans) >= 16:   # (an eroder given many tensors' formats keeps the last few)
                self._plans.clear()
            self._plans[id(A.format)] = plan
        return plan, A


def check_iterations(iterations, what: str) -> None:
    """Refuse ``iterations`` unless it is a positive integer (a numpy one too), naming ``what``
    (the function) in the message.

    >>> check_iterations(np.int64(2), "erode")
    >>> check_iterations(0, "erode")
    Traceback (most recent call last):
    ...
    compiler.errors.UsageError: erode: iterations must be a positive integer, not 0
    """
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise UsageError(f"{what}: iterations must be a positive integer, not {iterations!r}")


_ERODERS: dict = {}


def erode(image, iterations: int = 1, footprint: str = "box", format=RUNS) -> Tensor:
    """A binary image (a 2-D array, nonzero is on, or a Tensor) eroded ``iterations`` times by a 3x3
    ``footprint`` (``"box"`` or ``"cross"``), as a Tensor in ``format`` (run-length by default);
    pixels outside the image count as on. A 3-D array is a stack of images, each eroded alone, in
    one kernel call for the stack (many small images cost one call's overhead, not one each). The eroders are kept per footprint and format, so a
    second call compiles nothing."""
    key = (footprint, str(parse_format(format, ndim=2)))
    if key not in _ERODERS:
        _ERODERS[key] = Erosion(footprint, format)
    return _ERODERS[key](image, iterations)


class MaskedHistogram:
    """Counts of an image's values (int64, :data:`PIXELS`) where a mask (bool, ``mask_format``) is set,
    in ``bins`` bins of equal width over ``[0, value_range)``; the kernel is compiled on the first call.

    The kernel counts into ``tables`` tables (the looplets schedule's ``privatize``, as
    :class:`~compiler.looplets.histogram.MaskedHistogram8` does), so consecutive pixels in one bin
    do not wait for each other's update; by default 4 while the extra tables fit on the stack
    (``compiler.imperative.tables.STACK_LIMIT``: up to 2730 bins), else 1 (tables allocated at each
    call would cost more than the waits they save among so many bins). ``tables=1`` counts into
    ``bins`` alone.

    >>> import numpy as np
    >>> h = MaskedHistogram(bins=2, value_range=4)
    >>> h(np.array([[0, 1, 3, 3]]), np.array([[1, 0, 1, 1]])).tolist()
    [1, 2]
    >>> h.schedule, MaskedHistogram(bins=4096, value_range=4096).schedule
    (Schedule(privatize(bins, 4)), None)
    """

    def __init__(self, bins: int = 16, value_range: int = 256, mask_format=MASK_RUNS, tables: int | None = None):
        for what, v in (("bins", bins), ("value_range", value_range)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise UsageError(f"masked_histogram: {what} must be a positive integer, not {v!r}")
        if tables is not None and (isinstance(tables, bool) or not isinstance(tables, (int, np.integer))
                                   or not 1 <= tables <= 16):
            raise UsageError(f"masked_histogram: tables must be an integer from 1 to 16, not {tables!r}")
        if value_range % bins:
            raise UsageError(f"masked_histogram: value_range {value_range} is not a multiple of bins {bins} "
                             "(the bins have equal integer widths)")
        self.bins, self.value_range = int(bins), int(value_range)
        self.mask_format = parse_format(mask_format, ndim=2)
        width = value_range // bins
        if width & (width - 1):
            self._program, self._scalars = masked_histogram_step, dict(width=np.int64(width))
        else:
            self._program, self._scalars = masked_histogram_shift, dict(shift=np.int64(width.bit_length() - 1))
        self._scalars["top"] = np.int64(value_range)
        if tables is None:
            tables = COPIES if (COPIES - 1) * bins <= STACK_LIMIT else 1
        #: how the kernel counts (None: into ``bins`` alone). The update ``bins[v >> shift] += 1`` (or
        #: ``v // width``) sits under the mask's test and the range's, which each unrolled lane keeps,
        #: with the check of its bin's index: the bins' count is a runtime extent here, not proved
        self.schedule = Schedule().privatize("bins", copies=int(tables)) if tables > 1 else None
        #: the kernel, once the first call compiled it
        self.kernel = None

    def __call__(self, image, mask) -> np.ndarray:
        """The counts (int64, one per bin)."""
        img = _image(image, _PIXELS, "masked_histogram", "image")
        m = _image(mask, self.mask_format, "masked_histogram", "mask")
        if tuple(img.shape) != tuple(m.shape):
            raise UsageError(f"masked_histogram: the image is {tuple(img.shape)} and the mask "
                             f"{tuple(m.shape)}: give them the same shape")
        if self.kernel is None:
            counts = Tensor.from_numpy(np.zeros(self.bins, np.int64), _COUNTS, name="bins")
            self.kernel = compile_program(self._program, bins=counts, img=img, mask=m, schedule=self.schedule,
                                          **self._scalars)
        return self.kernel(img=img, mask=m, **self._scalars).to_numpy()


def masked_histogram(image, mask, bins: int = 16, value_range: int = 256) -> np.ndarray:
    """How many pixels of ``image`` (integers) where ``mask`` is set (nonzero) fall in each of ``bins``
    bins of equal width over ``[0, value_range)``; values outside are not counted. This is
    ``numpy.histogram(image[mask], bins, (0, value_range))[0]`` but for ``value_range`` itself, which
    numpy counts in its last bin (closed) and ``cv2.calcHist``, as here, in none."""
    return MaskedHistogram(bins, value_range)(image, mask)
