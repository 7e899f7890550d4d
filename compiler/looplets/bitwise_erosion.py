"""Finch's bitwise erosion (§7.4, Fig 26, right): binary images packed 64 pixels to a ``uint64``
word along each row, eroded by a 3x3 box or cross with word-wide ANDs and shifts.

Pixel ``c`` of a row is bit ``c % 64`` of the row's word ``c // 64`` (numpy's
``packbits(..., bitorder="little")`` read as little-endian words). As in
:mod:`compiler.looplets.morphology`, an erosion is a vertical pass ``V`` (each word and the words
above and below it), then a horizontal one: a pixel's left neighbour is the bit below it
(``t << 1``), carried across words by the left word's top bit (``tl >> 63``), and its right
neighbour the bit above it (``t >> 1``), carried by the right word's bit 0 (``tr << 63``). A read
outside the image is all ones (``coalesce(..., 0xFFFF...)``): outside the image is on, as in
OpenCV and the paper. The bits past a row's last pixel in its last word are outside too, so the
vertical pass ORs them in (``| pad[c]``, ``pad`` a vector of words with only those bits set),
whatever the input holds there: a packed image needs no padding of its own, and an erosion's
result is the next one's input.

Stored :data:`WORDS` (Finch's ``Dense(Element(UInt64))``), every word is visited; stored
:data:`SPARSE_WORDS` (a ``SparseList`` of the nonzero words of each row), the vertical pass visits
only words stored in all three rows and the horizontal one only the words ``V`` stores: the role
of the paper's mask of nonzero words (an eroded word is nonzero only where the image's is).

>>> import numpy as np
>>> img = np.zeros((4, 70), bool)
>>> img[:, 60:69] = True
>>> out = erode_bitwise(img)
>>> np.flatnonzero(out[0]).tolist()        # the run 60..68 loses its two end pixels
[61, 62, 63, 64, 65, 66, 67]
>>> packed = pack_bits(img)
>>> packed.words.shape, packed.width
((4, 2), 70)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import UsageError
from ..fastcall import fast_call
from ..format import Format, parse_format
from ..levels import Dense, Element, SparseList
from ..tensor import Tensor
from .compile import compile_program
from .language import LoopProgram, loop_program
from .morphology import check_iterations

__all__ = ["bitwise_erosion_program", "BITWISE_EROSIONS", "WORDS", "SPARSE_WORDS", "PAD", "BitImage",
           "pack_bits", "unpack_bits", "BitwiseErosion", "erode_bitwise"]

#: pixels per word
WORD_BITS = 64
#: a binary image packed in words: each row a dense vector of uint64 words
WORDS = Dense(Dense(Element(0, dtype="uint64")))
#: each row's nonzero words only (a word of 64 off pixels is not stored)
SPARSE_WORDS = Dense(SparseList(Element(0, dtype="uint64")))
#: the bits past a row's last pixel, per word: only the last word of a row may have any
PAD = Format(SparseList(Element(0, dtype="uint64")))
_ONES = "0xFFFFFFFFFFFFFFFF"


def bitwise_erosion_program(footprint: str, stack: bool = False) -> LoopProgram:
    """The loop program of one bitwise erosion by a 3x3 ``footprint`` (``"box"`` or ``"cross"``) of
    ``A``, rows of uint64 words: ``V``, each word ANDed with the words above and below it (ones
    outside the image, and in the padding bits ``pad``), then ``B``: for a box, each word of ``V``
    ANDed with itself shifted a bit either way, the shifted-in bits taken from the words left and
    right of it (Fig 26's ``tl``, ``t``, ``tr``); for a cross, ``V`` ANDed with the image's words
    shifted so (their padding bits set too). With ``stack``, of each image ``A[n]`` of a stack, in
    one kernel call for the stack (many small images pay one call's fixed cost, not one each).

    >>> print(bitwise_erosion_program("box"))
    for r = _
      for c = _
        V[r, c] = coalesce(A[permit(r - 1), c], 18446744073709551615) & A[r, c] & coalesce(A[permit(r + 1), c], 18446744073709551615) | pad[c]
    for r = _
      for c = _
        let tl = coalesce(V[r, permit(c - 1)], 18446744073709551615)
          let t = V[r, c]
            let tr = coalesce(V[r, permit(c + 1)], 18446744073709551615)
              B[r, c] = (<<(tr, 63) | >>(t, 1)) & t & (<<(t, 1) | >>(tl, 63))
    """
    if footprint not in ("box", "cross"):
        raise UsageError(f"erode_bitwise: footprint {footprint!r}: give 'box' or 'cross'")
    # (a box shifts the vertical pass's words; a cross the image's, its centre being V's word)
    n = "n, " if stack else ""
    row, centre = ("V", "t") if footprint == "box" else ("A", f"V[{n}r, c]")
    t = f"V[{n}r, c]" if footprint == "box" else f"A[{n}r, c] | pad[c]"
    top = WORD_BITS - 1
    passes = (f"V[{n}r, c] = (coalesce(A[{n}~(r - 1), c], {_ONES}) & A[{n}r, c] & "
              f"coalesce(A[{n}~(r + 1), c], {_ONES})) | pad[c]",
              f"tl = coalesce({row}[{n}r, ~(c - 1)], {_ONES})\n"
              f"t = {t}\n"
              f"tr = coalesce({row}[{n}r, ~(c + 1)], {_ONES})\n"
              f"B[{n}r, c] = ((tr << {top}) | (t >> 1)) & {centre} & ((t << 1) | (tl >> {top}))")
    loops = (["for n in _:"] if stack else []) + ["for r in _:", "for c in _:"]
    lines = [f"def erode_bits_{footprint}{'_stack' if stack else ''}(V, B, A, pad):"]
    for body in passes:
        lines += ["    " * (depth + 1) + loop for depth, loop in enumerate(loops)]
        lines += ["    " * (len(loops) + 1) + line for line in body.split("\n")]
    return loop_program(source="\n".join(lines) + "\n")


#: the bitwise erosion programs by footprint and ``stack``, made once: a kernel is cached for its program
BITWISE_EROSIONS = {(footprint, stack): bitwise_erosion_program(footprint, stack) for footprint in ("box", "cross")
                    for stack in (False, True)}


class BitImage(NamedTuple):
    """A binary image packed in words: ``words`` (rows of uint64 words, a Tensor) holds the
    ``width`` pixels of each row, pixel ``c`` in bit ``c % 64`` of word ``c // 64`` (the bits
    past ``width`` are not the image's)."""

    words: Tensor
    width: int

    def to_numpy(self) -> np.ndarray:
        """The image (bool, rows by ``width``)."""
        return unpack_bits(self.words.to_numpy(), self.width)


def pack_bits(image, format=WORDS) -> BitImage:
    """A binary image (2-D, nonzero is on) packed 64 pixels to a word, as a :class:`BitImage`
    whose words are stored in ``format``; the bits past the last pixel are 0. A 3-D array is a stack
    of images, its words stored under a Dense level of images.

    >>> pack_bits(np.array([[1, 0, 1]])).words.to_numpy().tolist()
    [[5]]
    """
    a = np.asarray(image)
    if a.ndim not in (2, 3):
        raise UsageError(f"pack_bits: the image must be 2-D (rows, columns) or 3-D (images, rows, columns), "
                         f"not of shape {a.shape}")
    *lead, w = a.shape
    h, n = int(np.prod(lead)), -(-w // WORD_BITS)
    bits = np.zeros((h, n * WORD_BITS), bool)
    bits[:, :w] = a.reshape(h, w) != 0
    packed = np.packbits(bits, axis=1, bitorder="little")   # (h, 8 n) bytes, the first pixel lowest
    words = np.ascontiguousarray(packed).view("<u8").astype(np.uint64, copy=False).reshape(*lead, n)
    fmt = parse_format(format, ndim=2)
    if a.ndim == 3:
        fmt = Format(Dense(fmt.root))
    return BitImage(Tensor.from_numpy(words, fmt, name="image"), w)


def unpack_bits(words, width: int) -> np.ndarray:
    """The ``width`` pixels of each row of ``words`` (a 2-D uint64 array, or 3-D: a stack), as a bool image.

    >>> unpack_bits(np.array([[5]], np.uint64), 3).astype(int).tolist()
    [[1, 0, 1]]
    """
    w = np.ascontiguousarray(words, dtype=np.uint64)
    *lead, n = w.shape
    raw = w.astype("<u8", copy=False).view(np.uint8).reshape(int(np.prod(lead)), 8 * n)
    return np.unpackbits(raw, axis=1, count=width, bitorder="little").astype(bool).reshape(*lead, width)


def _pad(words: int, width: int) -> Tensor:
    """The padding bits of a row of ``words`` words holding ``width`` pixels (in its last word)."""
    pad = np.zeros(words, np.uint64)
    if width % WORD_BITS:
        pad[-1] = ~np.uint64((1 << (width % WORD_BITS)) - 1)
    return Tensor.from_numpy(pad, PAD, name="pad")


_new_image = tuple.__new__


class BitwiseErosion:
    """Bitwise erosion by a 3x3 ``footprint`` (``"box"`` or ``"cross"``) of images packed in words
    stored in ``format`` (:data:`WORDS` or :data:`SPARSE_WORDS`), or of stacks of them (3-D: images,
    rows, words); its kernels are compiled once, on the first call, for the formats (every eroder of
    them shares them).

    >>> eroder = BitwiseErosion("cross")
    >>> img = eroder.pack(np.ones((3, 100), bool))
    >>> bool(eroder(img, iterations=3).to_numpy().all())
    True
    """

    def __init__(self, footprint: str = "box", format=WORDS):
        if (footprint, False) not in BITWISE_EROSIONS:
            raise UsageError(f"erode_bitwise: footprint {footprint!r}: give 'box' or 'cross'")
        self.footprint, self.format = footprint, parse_format(format, ndim=2)
        if self.format.mode_order != (0, 1) or np.dtype(self.format.dtype) != np.uint64:
            raise UsageError(f"erode_bitwise: the words' format must store rows outermost and uint64 values, "
                             f"not {self.format}")
        #: a stack of images: each stored as one is, under a Dense level of images
        self.stack_format = Format(Dense(self.format.root))
        #: the kernels of one erosion (both passes) of an image and of a stack (by ``ndim``), once compiled
        self.kernels: dict = {}
        self._pads: dict = {}
        self._fast: dict = {}
        self._plans: dict = {}
        self._last: tuple = (None, None, None, None)   # (format, shape, width, plan) of the last call

    @property
    def kernel(self):
        """The kernel of an image's erosion, once the first call compiled it (else None)."""
        return self.kernels.get(2)

    def pack(self, image) -> BitImage:
        """``image`` (2-D, or 3-D: a stack; nonzero is on) packed in this eroder's format."""
        return pack_bits(image, self.format)

    def __call__(self, image, iterations: int = 1) -> BitImage:
        """``image`` (a :class:`BitImage`, or a 2-D or 3-D array packed first) eroded ``iterations`` times."""
        if iterations.__class__ is not int or iterations < 1:
            check_iterations(iterations, "erode_bitwise")
        # (words of a format object, shape and width checked before, a kernel's result: the kernel, its
        # fast call and the padding at once; an iteration calls an eroder thousands of times)
        plan = None
        if image.__class__ is BitImage:
            words, width = image
            if words.__class__ is Tensor:
                fmt, shape, last = words.format, words.shape, self._last
                # (the last call's plan compared first: no key tuple to build and hash)
                if last[0] is fmt and last[2] == width and last[1] == shape:
                    plan = last[3]
                else:
                    plan = self._plans.get((id(fmt), shape, width))
                    if plan is not None and plan[0] is not fmt:
                        plan = None
                    elif plan is not None:
                        self._last = (fmt, shape, width, plan)
        if plan is None:
            plan, words, width = self._plan(image)
        _, kernel, fast, pad = plan
        for _ in range(iterations):
            out = fast({"A": words, "pad": pad}) if fast is not None else None
            words = (out if out is not None else kernel(A=words, pad=pad)).B
        return _new_image(BitImage, (words, width))   # (a named tuple's __new__ is a Python frame)

    def _plan(self, image) -> tuple:
        """``(plan, words, width)`` for ``image`` (a :class:`BitImage`, or an array packed first), checked
        and its words converted to the eroder's format: the plan is ``(format, kernel, fast call, pad)``,
        the kernel compiled on first use, kept for the format object, shape and width of words already
        in the eroder's format."""
        if not isinstance(image, BitImage):
            image = self.pack(image)
        words, width = image
        if not isinstance(words, Tensor) or len(words.shape) not in (2, 3):
            raise UsageError("erode_bitwise: a BitImage's words must be a 2-D (or 3-D: a stack) Tensor of "
                             "uint64 words")
        ndim, n = len(words.shape), words.shape[-1]
        if n != -(-width // WORD_BITS):
            raise UsageError(f"erode_bitwise: {n} words a row cannot hold {width} pixels "
                             f"(that takes {-(-width // WORD_BITS)})")
        fmt = self.format if ndim == 2 else self.stack_format
        given = words
        if words.format is not fmt and words.format != fmt:
            words = words.asformat(fmt)
        kernel = self.kernels.get(ndim)
        if kernel is None:
            kernel = self.kernels[ndim] = compile_program(BITWISE_EROSIONS[self.footprint, ndim == 3],
                                                          V=fmt, B=fmt, A=fmt, pad=PAD)
            self._fast[ndim] = fast_call(kernel, wanted=("B",))   # (V, the first pass, freed at once)
        key = (n, width % WORD_BITS)
        if key not in self._pads:
            self._pads[key] = _pad(*key)
        plan = (words.format, kernel, self._fast[ndim], self._pads[key])
        if words is given:
            if len(self._plans) >= 16:   # (an eroder given many shapes or formats keeps the last few)
                self._plans.clear()
            self._plans[id(words.format), words.shape, width] = plan
        return plan, words, width


_ERODERS: dict = {}


def erode_bitwise(image, iterations: int = 1, footprint: str = "box", format=WORDS) -> np.ndarray:
    """A binary image (2-D, nonzero is on; 3-D: a stack of images, each eroded alone, in one kernel
    call) eroded ``iterations`` times by a 3x3 ``footprint``, by
    the bitwise kernel on its words packed in ``format``: the same result as
    :func:`compiler.looplets.morphology.erode` (outside the image is on), as a bool array."""
    key = (footprint, str(parse_format(format, ndim=2)))
    if key not in _ERODERS:
        _ERODERS[key] = BitwiseErosion(footprint, format)
    return _ERODERS[key](image, iterations).to_numpy()
