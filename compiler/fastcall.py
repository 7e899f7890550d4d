"""The fast path of a kernel call: what every call of one kernel does, planned once.

Iterative solvers and graph algorithms call one kernel thousands of times on small inputs,
where the general call path (:meth:`compiler.runtime.Kernel.__call__`: binding, conversions,
compression, in-place outputs, write checks) costs more than the kernel. For a kernel with
none of those, :func:`fast_call` builds a :class:`FastCall` that binds the inputs from their
cached parameter maps (a tensor this kernel bound before) or wraps a contiguous numpy array
of an all-Dense format directly, checks the extents, allocates the output and runs the
kernel. Whenever a call is not that simple (a tensor not yet bound, values holding more than
the kernel assumes, an output given or too large to allocate unchecked) it returns ``None``
and the general path takes the call, so both give the same result.

>>> import numpy as np, compiler as ss
>>> A = ss.Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]]), "csr")
>>> k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(2))
>>> fast = fast_call(k)
>>> fast({"A": A, "x": np.ones(2)}) is None        # A not bound by this kernel yet
True
>>> _ = k(A=A, x=np.ones(2))                        # the general path binds it
>>> fast({"A": A, "x": np.ones(2)}).to_numpy()
array([2., 3.])
"""

from __future__ import annotations

import math
import os

import numpy as np

from . import memory, values
from .tensor import Tensor

__all__ = ["FastCall", "fast_call"]


def fast_call(kernel) -> "FastCall | None":
    """The fast path of ``kernel`` (a :class:`compiler.runtime.Kernel`), or ``None`` when its
    calls need the general path every time (a checked kernel, conversions or copies of inputs,
    an output updated in place or checked against its writes, index compression, several outputs,
    shape operators, whose premises each call checks for its shapes)."""
    low, plan = kernel.lowered, kernel._plan()
    if (kernel.compiled.checked or low.copies or low.conversions or low.output_writes or low.outputs
            or getattr(kernel, "shape_operators", False)
            or low.initial not in ("fill", "none") or low.validate_output or plan.compression is not None
            or plan.at_most_one or plan.shape_from is None):
        return None
    return FastCall(kernel)


class FastCall:
    """One kernel's planned call; ``fast(tensors)`` gives the output tensor or ``None``."""

    def __init__(self, kernel):
        low, plan = kernel.lowered, kernel._plan()
        self.runner = kernel.compiled.caller
        self.output, self.fill, self.initial = plan.output, low.fill, low.initial
        self.fresh = plan.fresh_fill   # (a fresh dense output carries the oracle's fill)
        self.names = frozenset(n for n in kernel.formats if n != low.output)
        facts = kernel.facts if kernel.relower is not None else {}
        # (name, input plan, assumed facts, numpy wrapping: (ndim, dtype, size names, value name) or None)
        self.inputs = tuple((name, plan.inputs[name], facts.get(name), _numpy_wrapping(plan.inputs[name]))
                            for name in kernel.formats if name != low.output)
        self.extents = plan.extents
        self.shape_from = plan.shape_from
        self.mode_order = low.output_format.mode_order
        self.narrow = tuple((s, np.iinfo(idt).max) for _, _, modes, idt in plan.narrow for s in modes)
        self.output_sizes = plan.output_sizes
        self.buffers = tuple((pname, np.dtype(dtype), kind, level, plan.itemsize[pname])
                             for pname, dtype, kind, level in plan.inout)
        self.length = kernel._output_length

    def __call__(self, tensors: dict):
        if tensors.keys() != self.names:
            return None
        args, shapes = {}, {}
        for name, plan, assumed, wrap in self.inputs:
            value = tensors[name]
            given = value
            if value.__class__ is not Tensor and value.__class__ is not np.ndarray:
                # (a scipy or pydata array the general path bound before, over the same buffers)
                value = plan.kept_foreign(value) if hasattr(value, "shape") and hasattr(value, "__dict__") else None
                if value is None:
                    return None
            if value.__class__ is Tensor:
                bound = value.__dict__.get("_bound_args")
                if bound is None or bound[0] is not plan:
                    return None   # (the general path binds it and checks its format, once)
                if assumed is not None:
                    # (a foreign array's values are looked at again: its owner may have changed them)
                    held = value.value_facts if given is value else values.of_array(np.asarray(given.data))
                    if held is not assumed and not held <= assumed:
                        return None
                args.update(bound[1])
                shapes[name] = value._shape
            elif value.__class__ is np.ndarray and wrap is not None:
                ndim, dtype, sizes, vals = wrap
                if value.ndim != ndim or value.dtype != dtype or not value.flags.c_contiguous:
                    return None
                if assumed is not None:
                    held = values.of_array(value)
                    if held is not assumed and not held <= assumed:
                        return None
                shape = value.shape
                for m, pname in sizes:
                    args[pname] = shape[m]
                if vals is not None:
                    args[vals] = value.reshape(-1)
                shapes[name] = shape
            else:
                return None
        for _, uses in self.extents:
            seen = None
            for t, m in uses:
                n = shapes[t][m]
                if seen is None:
                    seen = n
                elif n != seen:
                    return None   # (the general path says which index disagrees)
        shape = tuple([shapes[t][m] for t, m in self.shape_from])
        storage = tuple([shape[m] for m in self.mode_order])
        for s, most in self.narrow:
            if storage[s] - 1 > most:
                return None
        for s, pname in self.output_sizes:
            args[pname] = storage[s]
        made = {}
        for pname, dtype, kind, level, itemsize in self.buffers:
            n = math.prod(storage) if kind == "val" else self.length(storage, kind, level)
            if n * itemsize > memory.SMALL:
                return None   # (the general path checks the free memory first)
            if kind != "val":
                buf = np.zeros(n, dtype=dtype)
            else:
                buf = np.empty(n, dtype=dtype)
                if self.initial == "fill":
                    buf.fill(self.fill)
            made[pname] = args[pname] = buf
        output = self.output
        if self.fresh is not None:
            output = self.fresh.fixed_for(tensors)
            if output is None:
                return None
        results = self.runner(**args)
        if results:
            made.update(results)
        check = bool(os.environ.get("SPARSESCOPE_VALIDATE_OUTPUTS"))
        return output.tensor(shape, made, check=check)


def _numpy_wrapping(plan):
    """How a numpy argument is passed for an all-Dense format in storage order: its rank, dtype,
    size parameters and value parameter; ``None`` for other formats."""
    fmt = plan.format
    if plan.dense_dtype is None or tuple(fmt.mode_order) != tuple(range(fmt.ndim)):
        return None
    if any(plan.arrays[:-1]) or len(plan.arrays[-1]) > 1:
        return None
    vals = plan.arrays[-1][0][1] if plan.arrays[-1] else None
    return fmt.ndim, np.dtype(plan.dense_dtype), plan.sizes_used, vals
