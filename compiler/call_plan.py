"""What every call of one kernel needs that depends only on the kernel, worked out on its first call:
the parameter names and how to bind each input (:class:`compiler.binding.InputPlan`), the output's
buffers to allocate and how its arrays become the result (:class:`CallPlan`), the fill of a fresh
dense output where it depends on the call (:class:`FreshFill`), and what one call prepared for its
output (:class:`OutputCall`). :class:`compiler.runtime.Kernel` and :mod:`compiler.fastcall` read them.

>>> import numpy as np, compiler as ss
>>> k = ss.lower("y[i] = A[i, j] * x[j]", A="csr", x="dense")
>>> plan = CallPlan(k)
>>> sorted(plan.inputs), plan.fresh_outputs, plan.shape_from
(['A', 'x', 'y'], frozenset({'y'}), (('A', 0),))
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from . import binding, outputs
from .algebra import NOVALUE
from .compression import Compression
from .dtypes import typed_scalar
from .format import Format, narrow_index_levels
from .imperative.ir import Buffer, Scalar
from .levels import Element
from .levels.level import fill_key
from .notation import Assign, accesses
from .notation.ast import Reduce, walk
from .notation.infer import infer_shapes
from .notation.shape import Concat
from .output_extents import EXTENT_OPS
from .reference_fill import NeedsExtents, expression_fill
from .reuse_plans import ReusePlan
from .tensor import Tensor, replace_leaf

__all__ = ["CallPlan", "FreshFill", "OutputCall", "SCALARS", "first_mode", "level_array", "with_leaf_fill"]

#: the Python and numpy scalars a kernel takes for a tensor (a 0-d one, or a fill: see FreshFill)
SCALARS = (bool, int, float, np.generic)


class OutputCall(NamedTuple):
    """What one call prepared for one output: its logical ``shape``, what maps it back after a
    renumbering (``restore``, or None), and its arguments (sizes, the buffers allocated).
    (A named tuple: built on every call, cheaper than a frozen dataclass.)"""

    shape: tuple
    restore: Any
    args: dict


class CallPlan:
    """What a kernel's every call needs that depends only on the kernel: parameter names,
    the output's buffers to allocate, and how to bind each input; built on the first call."""

    def __init__(self, kernel):
        low = kernel.lowered
        out_name = low.output
        self.converted = dict(low.conversions)
        self.params = frozenset(p.name for p in low.function.params if isinstance(p, (Scalar, Buffer)))
        self.inputs = {name: binding.InputPlan(name, self.converted.get(name, fmt) if name != out_name else fmt,
                                               self.params)
                       for name, fmt in kernel.formats.items()}
        self.inputs.update((copy, binding.InputPlan(copy, self.converted[copy], self.params))
                           for copy, _ in low.copies)
        for name in kernel.facts:
            if name in self.inputs and name != out_name:
                self.inputs[name].values_matter = functools.partial(kernel.depends_on_values, name)
        for name in kernel.coordinates_checked:
            if name in self.inputs and name not in self.converted:
                self.inputs[name].coordinates_checked = True
        self.output = binding.OutputPlan(out_name, low.output_format)
        outs = low.outputs or (low,)
        self.output_names = frozenset(kernel.output_names)
        # (outputs whose arrays a call allocates, rather than binding a given tensor's)
        self.fresh_outputs = frozenset(o.output for o in outs if o.initial != "output")
        #: the outputs a call may give an earlier result of to write into (compiler.reused_outputs)
        self.resets = frozenset(o.output for o in outs if o.reset)
        #: and the Dense outputs a program updates from the value given, updated in place when reused
        self.in_place = frozenset(o.output for o in outs if o.initial == "output" and not o.reset and all(
            lvl.located_by_coordinate for lvl in o.output_format.levels))
        self.refusals = {o.output: o.reuse_refused for o in outs if o.reuse_refused}
        # (index, its uses): each index's extent in every tensor that has it must agree
        self.extents = tuple((index, tuple(uses)) for index, uses in low.extents if len(uses) > 1)
        # each output extent an input's, (tensor, mode), or a constant (a histogram's 16 bins; not a negative
        # one, an empty window's, which the general path says is refused): read directly (else by extent_value)
        self.shape_from = tuple(int(e) if isinstance(e, (int, np.integer)) else e for e in low.output_shape) if all(
            isinstance(e, (int, np.integer)) and not isinstance(e, bool) and e >= 0
            or isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str) and e[0] not in EXTENT_OPS
            for e in low.output_shape) else None
        self.output_sizes = tuple((s, pname) for s, pname in enumerate(
            binding.array_name(out_name, m, "size") for m in range(low.output_format.ndim)) if pname in self.params)
        # the output's levels whose index dtype is narrower than int64: an extent past it is refused
        self.narrow = narrow_index_levels(low.output_format)
        self.at_most_one = any(lvl.at_most_one for lvl in low.output_format.levels)
        self.inout = []
        for p in low.function.params:
            if not (isinstance(p, Buffer) and p.intent == "inout"):
                continue
            if p.name == binding.array_name(out_name, None, "val"):
                self.inout.append((p.name, p.dtype, "val", None))
                continue
            level, kind = level_array(out_name, p.name, low.output_format)
            if level is None and outputs.owner(p.name, self.output_names - {out_name}):
                continue   # (another output's array: its own plan allocates it)
            if level is None or binding.dense_parent_count(low.output_format, level,
                                                           (1,) * low.output_format.ndim) is None:
                raise TypeError(f"kernel parameter {p.name} is an inout buffer the runtime "
                                f"cannot allocate (a bug in the {kernel.strategy} strategy)")
            self.inout.append((p.name, p.dtype, kind, level))
        self.itemsize = {pname: np.dtype(dtype).itemsize for pname, dtype, _, _ in self.inout}
        #: how a call takes an earlier result given as reuse(...) for the output, or None (compiler.reuse_plans)
        self.reuse = ReusePlan(out_name, low.output_format, low.fill, next(
            (d for _, d, kind, level in self.inout if kind == "val" and level is None), low.output_format.dtype),
            clears=out_name in self.resets) if out_name in self.resets | self.in_place else None
        #: ``{(array, level): (ArrayLength, first storage mode)}``: each allocated array's rule, asked of
        #: its level once per kernel (a call's asking cost a microsecond a buffer); the levels above it
        #: are located by coordinate (checked above), one mode each, so its parents are the extents before
        self.rules = {(kind, level): (low.output_format.levels[level].allocated_arrays()[kind],
                                      first_mode(low.output_format, level))
                      for _, _, kind, level in self.inout if level is not None}
        self.compression = None
        if low.compressible and isinstance(kernel.program, Assign) and not low.conversions and not low.copies:
            self.compression = Compression(kernel)
            if not self.compression.plans:
                self.compression = None
        fmt = low.output_format
        self.fresh_fill = FreshFill(kernel.program, kernel.formats, self.output) if (
            kernel.fresh_output and isinstance(kernel.program, Assign) and isinstance(fmt.leaf, Element)
            and fmt.is_dense) else None


class FreshFill:
    """The output plans of a fresh dense (or 0-d) output, which carries the oracle's fill.

    Where the program's output was given no format, the strategy makes it dense and
    stores every entry; its fill is then only what the tensor says its unstored
    entries would hold, and that is the oracle's (:func:`compiler.reference.expression_fill`):
    ``y[i] = sum[j](A[i, j])`` over an ``A`` of fill 1 has the fill ``n``, the extent
    of ``j``, known at the call. An output given a format keeps that format's fill.
    """

    def __init__(self, program: Assign, formats: dict, output: binding.OutputPlan):
        self.program, self.output_name = program, program.lhs.tensor
        # (each fill a numpy scalar of its tensor's dtype, as the oracle's: an int32 min over no
        # element is int32's largest, not int64's)
        self.fills = {name: typed_scalar(fmt.fill, fmt.dtype) if fmt.dtype is not None else fmt.fill
                      for name, fmt in formats.items()}
        # (the fill an array given at the call has, 0, where the kernel's format says another)
        zeros = {name: typed_scalar(0, np.asarray(f).dtype) for name, f in self.fills.items()}
        self.zero_fills = {name: z for name, z in zeros.items() if fill_key(z) != fill_key(self.fills[name])}
        self.dtype = output.format.dtype
        self.default = output
        self.plans: dict = {}
        # (index, tensor, mode): where each reduced index's extent is read
        # (and each concatenated part's: its fill is the first non-empty part's)
        reduced = {i for n in walk(program.rhs) if isinstance(n, (Reduce, Concat)) for i in n.indices}
        uses = {}
        for acc in accesses(program.rhs):
            for mode, i in enumerate(acc.indices):
                if i in reduced:
                    uses.setdefault(i, (acc.tensor, mode))
        self.uses = tuple((i, t, m) for i, (t, m) in uses.items())
        # (a concatenated part's index that no access reads, collapse(A[i, j], (i, j) -> k)'s k: each call's
        # extents are inferred from its tensors' shapes)
        self.inferred = any(i not in uses for n in walk(program.rhs) if isinstance(n, Concat) for i in n.indices)
        try:   # (most fills depend on no extent: SpMV's is 0 whatever the row length)
            self.fixed = self._plan(self._fill(None))
        except NeedsExtents:
            self.fixed = None

    def output(self, inputs: dict, given: dict) -> binding.OutputPlan:
        """The output's plan for a call on ``inputs`` (bound tensors), ``given`` the caller's values."""
        raw = self._raw_fills(given)
        init = inputs.get(self.output_name)   # (an update's output given at the call starts from it)
        if init is None and not raw and self.fixed is not None:
            return self.fixed
        shapes = {name: t._shape for name, t in inputs.items() if name != self.output_name} if self.inferred else None
        key = (tuple(inputs[t]._shape[m] for _, t, m in self.uses) if shapes is None else tuple(sorted(shapes.items())),
               None if init is None else fill_key(raw.get(self.output_name, init.fill)),
               tuple((name, fill_key(f)) for name, f in raw.items()))
        plan = self.plans.get(key)
        if plan is None:
            fills = {**self.fills, **raw}
            start = None if init is None else raw.get(self.output_name, init.fill)
            extents = {i: inputs[t]._shape[m] for i, t, m in self.uses} if shapes is None else \
                infer_shapes(self.program, shapes).extents
            plan = self._plan(self._fill(extents, start, fills))
            if len(self.plans) >= 16:   # (a kernel called on many shapes keeps the last few)
                self.plans.clear()
            self.plans[key] = plan
        return plan

    def fixed_for(self, given: dict) -> "binding.OutputPlan | None":
        """The output's plan when it depends on nothing of a call with ``given`` (no update of a
        given output, every fill the format's, no extent in the fill), else ``None``."""
        if self.fixed is None or self.output_name in given or self._raw_fills(given):
            return None
        return self.fixed

    def _raw_fills(self, given: dict) -> dict:
        """The fills the oracle gives the tensors passed as arrays (0) or scalars (their value),
        where they differ from the kernel's formats' (which bound them). A list binds as an array."""
        raw = {}
        for name, value in given.items():
            if isinstance(value, Tensor):
                continue
            if not isinstance(value, SCALARS):   # an array (or array-like)
                if name in self.zero_fills:
                    raw[name] = self.zero_fills[name]
                continue
            fill = self.fills[name]
            own = typed_scalar(value, np.asarray(fill).dtype)
            if fill_key(own) != fill_key(fill):
                raw[name] = own
        return raw

    def _plan(self, fill) -> binding.OutputPlan:
        fmt = self.default.format
        if fill_key(fill) == fill_key(fmt.fill):
            return self.default
        return binding.OutputPlan(self.output_name, with_leaf_fill(fmt, fill))

    def _fill(self, extents: dict | None, start=None, fills=None):
        """The oracle's fill of the output for ``extents``, an update starting from ``start`` (the
        given output's fill; None: the operator's identity), the tensors' ``fills`` (the formats')."""
        op = self.program.op
        with np.errstate(all="ignore"):
            try:
                fill = expression_fill(self.program.rhs, self.fills if fills is None else fills, extents)
                if op is not None:
                    start = start if start is not None else op.identity_for(self.dtype)
                    fill = op.fill(start, fill)
            except NeedsExtents:
                raise
            except Exception:   # (a user function's Python may refuse these values: the format's fill then)
                return self.default.format.fill
            if fill is NOVALUE:
                return self.default.format.fill
            return typed_scalar(fill, self.dtype)


def with_leaf_fill(fmt: Format, fill) -> Format:
    """``fmt`` with its leaf's fill replaced: ``Dense(Element(0.0))`` to ``Dense(Element(4.0))``."""
    return Format(replace_leaf(fmt.root, replace(fmt.leaf, fill=fill)), fmt.mode_order)


def level_array(tensor: str, pname: str, fmt: Format) -> tuple[int | None, str | None]:
    """``(level, array)`` of an inout buffer ``{tensor}{level}_{array}`` that level ``level`` of
    ``fmt`` says a call allocates (:meth:`~compiler.levels.level.Level.allocated_arrays`: the level
    names and sizes its arrays, the runtime never reads a rule off a name), else ``(None, None)``.

    >>> from compiler.format import parse_format
    >>> band = parse_format("Dense(SparseBand(Element(0.0)))")
    >>> level_array("C", "C1_ofs", band), level_array("C", "C1_idx", band), level_array("C", "C0_pos", band)
    ((1, 'ofs'), (1, 'idx'), (None, None))
    >>> level_array("C", "C1_pos", band), level_array("C", "C_val", band), level_array("C", "C9_pos", band)
    ((None, None), (None, None), (None, None))
    """
    level, _, array = pname[len(tensor):].partition("_")
    if not pname.startswith(tensor) or not level.isdigit() or int(level) >= len(fmt.levels):
        return None, None
    return (int(level), array) if array in fmt.levels[int(level)].allocated_arrays() else (None, None)


def first_mode(fmt: Format, level: int) -> int:
    """The storage mode of ``level``'s first coordinate (the modes of the levels above it)."""
    return sum(lvl.nmodes for lvl in fmt.levels[:level])
