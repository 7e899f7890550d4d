"""The runtime of a lowered kernel: what a strategy hands back (:class:`Lowered`) and the
:class:`Kernel` that calls it on tensors: binding tensors to parameters without copies,
checking extents, allocating outputs, running the compiled function (or the IR interpreter)
and building the result tensors (see :mod:`compiler.lowering` for the conventions a strategy
relies on). The fast path of a call is :mod:`compiler.fastcall`.

>>> import numpy as np, compiler as ss
>>> k = ss.lower("y[i] = A[i, j] * x[j]", A=np.eye(2), x=np.ones(2))
>>> isinstance(k, Kernel), k(A=np.eye(2), x=np.array([1.0, 2.0])).to_numpy()
(True, array([1., 2.]))
"""

from __future__ import annotations

import copy
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import binding, memory, outputs, values
from .call_plan import SCALARS, CallPlan, OutputCall
from .errors import FormatError, ShapeError, SparsescopeError, StrategyError, UsageError
from .fastcall import fast_call
from .format import Format
from .imperative import interpret
from .imperative.ir import Function
from .interop import is_foreign, is_scipy_sparse, to_tensor
from .levels import Element
from .levels.level import is_fill
from .notation.infer import infer_shapes
from .output_extents import check_output_writes, check_walked_together, extent_value
from .recheck import array_facts, check_again, checked_now, validate_as_given
from .reuse_plans import reuse_refused
from .reused_outputs import Reused, mark_cleared_off_entries
from .sealing import index_writers, sealed
from .tensor import Tensor, replace_leaf
from .trace import Trace


@dataclass(frozen=True)
class Lowered:
    """What a strategy hands back: the kernel in the imperative IR and how to call it.

    ``output_shape`` has one entry per output mode: an int, ``(tensor, mode)``
    taking that input's extent, or ``(op, entry, ...)`` combining entries (see
    :func:`compiler.output_extents.extent_value`). ``extents`` lists, per index, the ``(tensor, mode)``
    pairs whose extents must agree. ``initial`` says how the runtime prepares a dense
    output buffer: ``"fill"``, ``"output"`` (the given output's values) or ``"none"``
    (uninitialized); ``"assembled"``: a sparse output a loop program updates without assigning it
    first, which would start from the given output's values but is assembled afresh, so a given
    output that stores entries is refused. ``helpers`` maps helper names to Python
    implementations for :meth:`Kernel.interpret`. ``conversions`` names the inputs the kernel
    reads in another format than the caller gives, converted before each call (and the output
    it builds in another format than asked, converted after).
    """

    function: Function
    output: str
    output_format: Format
    output_shape: tuple
    fill: Any
    extents: tuple = ()
    initial: str = "fill"
    helpers: tuple = field(default=(), compare=False)
    #: ``(tensor, format)`` pairs: inputs the kernel reads in another format, converted at each
    #: call (a CSC ``A`` that the loops must read row by row is read as CSR); the output's, the
    #: format it is built in
    conversions: tuple = ()
    #: ``(copy, tensor)`` pairs: a tensor the program reads in two orders is also read as a copy
    #: under another name (``B_csc`` in ``B[i, j] + B[j, i]``), converted at each call
    copies: tuple = ()
    #: indices the kernel visits only where an operand stores a coordinate, and whose extent
    #: sizes only its workspaces: a call may renumber them by the coordinates stored (an index
    #: of a huge extent, a hypersparse SpGEMM's columns; see :class:`compiler.compression.Compression`)
    compressible: tuple = ()
    #: ``(mode, entry, where)`` per write of a loop program's output: one more than the largest
    #: coordinate the write reaches in that (logical) mode, an entry as in ``output_shape``, and
    #: the program's line. A given output may be larger than ``output_shape`` (an hstack into a
    #: part of it), never smaller than a write's reach: :func:`compiler.output_extents.check_output_writes`
    output_writes: tuple = ()
    #: why every call validates the output, whose order only a call can tell (two loops append
    #: one fiber of a sorted level: a concatenation if the second's coordinates follow the
    #: first's), or "": a FormatError of the output says it
    validate_output: str = ""
    #: a kernel that builds several outputs (a loop program writing several tensors): the
    #: ``Lowered`` of each, in the program's order, this one first; a call returns them in a
    #: :class:`compiler.outputs.Outputs` named tuple. Empty for one output
    outputs: tuple = ()
    #: ``(tensor, shape)`` pairs: the shapes a kernel is specialized to (the lattice strategy's
    #: shape operators hold extents); a call with other shapes is refused
    shapes: tuple = ()
    #: a loop program's byte-map output whose declaration the runtime does: a call starts it clear
    #: (fresh, or an earlier result given as ``reuse(tensor)``, whose entries alone it clears)
    reset: bool = False
    #: why a call may not give an earlier result as ``reuse(tensor)`` for this output, a byte map
    #: declared first thing that the runtime cannot start clear (naming the level), or ""
    reuse_refused: str = ""
    #: ``(index, walked, read)``: extents the kernel walks as one, which a call must give equal
    #: (:func:`compiler.output_extents.check_walked_together`; the looplets' two flattens of one index)
    agree: tuple = ()




class Kernel:
    """A lowered and compiled program; call it with tensors to get the output tensor (a loop
    program writing several tensors: an :class:`~compiler.outputs.Outputs` named tuple of them,
    in the order of its parameters)."""

    def __init__(self, program, strategy: str, formats: dict[str, Format], lowered: Lowered,
                 compiled, trace: Trace, fresh_output: bool = False):
        self.program = program
        #: the output was given no format (nor tensor) to lower for: the strategy chose it
        self.fresh_output = fresh_output
        self.strategy = strategy
        self.formats = formats
        self.lowered = lowered
        self.compiled = compiled
        self.trace = trace

    @property
    def c_source(self) -> str:
        return self.compiled.c_source

    @property
    def premises_held(self) -> set:
        """The ``(id(program), shapes)`` whose shape-operator premises a call checked (:meth:`bind`), which
        the fast call path takes without checking them again (a copy of this kernel shares the set)."""
        return self.__dict__.setdefault("_premises_held", set())

    @property
    def function(self) -> Function:
        return self.lowered.function

    @property
    def output(self) -> str:
        return self.lowered.output

    def __repr__(self) -> str:
        formats = ", ".join(f"{k}={v.shorthand or v}" for k, v in self.formats.items())
        return f"<Kernel {self.strategy}: {self.program} ({formats})>"

    #: what the kernel assumes each tensor's stored values hold (:class:`compiler.values.Facts`)
    facts: dict = {}
    #: lowers the same program for wider facts (set by :func:`lower`), or None
    relower: Callable | None = None
    #: the program has shape operators: each call checks their premises for its tensors' shapes
    shape_operators: bool = False
    #: the inputs whose coordinates the kernel checks as it reads them, for which a call checks the positions
    #: alone where their arrays' owner may have written them (:mod:`compiler.owned_inputs`)
    coordinates_checked: frozenset = frozenset()

    #: the tensors a kernel of an array expression reads, which a call without tensors takes
    arguments: dict = {}

    def __call__(self, *given, **tensors) -> Tensor:
        try:
            if not given:
                # the fast path planned for this kernel (and the one for a foreign array's layout that a
                # call took, asked first): one attribute and one call before it answers
                out = self._first(tensors)
                if out is not None:
                    return out
            return self._call(given, tensors)
        except FormatError:
            self._stored_fault(tensors)
            raise

    def _stored_fault(self, tensors: dict) -> None:
        """Raise the FormatError that validating an input whose coordinates this kernel checks itself gives
        (which level, array and entry: the kernel saw a coordinate out of range, and says no more)."""
        for name in sorted(self.coordinates_checked):
            value = tensors.get(name, self.arguments.get(name))
            if isinstance(value, Tensor) or is_foreign(value):
                validate_as_given(value if isinstance(value, Tensor) else to_tensor(value, name, checked=False), name)

    @staticmethod
    def _first(tensors):
        """The fast paths a call tries first (none until the first call plans them, see :meth:`_call`)."""
        return None

    def _call(self, given: tuple, tensors: dict):
        """A call the fast paths did not answer: the first (which plans them), or the general path's."""
        if given:
            raise UsageError(f"pass the kernel's tensors by name: kernel({', '.join(f'{t}=...' for t in self.formats)})")
        if not tensors:
            tensors = dict(self.arguments)
        fast = self._planned_fast()
        routed = self.__dict__.get("_routed_fast")
        if routed is not None:
            # the fast path of the kernel for a foreign array's layout that a call took: it answers
            # only for the arrays it bound itself (the same buffers), which are this program's; asked
            # first, as a kernel called with such an array is called with it again
            out = routed(tensors)
            if out is not None:
                return out
        if fast is not None:
            out = fast(tensors)
            if out is not None:
                return out
        own = self.for_layouts(tensors)
        if own is not self:
            out = own(**tensors)
            self._routed_fast = own.__dict__.get("_fast")   # (made by that call)
            self._first = _first_of(self._routed_fast, fast)
            return out
        with checked_now(self._shared_checked(tensors)):
            kernel = self.for_values(tensors)
            return kernel._run(kernel.compiled, tensors)

    def interpret(self, **tensors) -> Tensor:
        """Run the kernel's IR in the Python interpreter instead (a test oracle)."""
        try:
            return self._interpreted(tensors)
        except FormatError:
            self._stored_fault(tensors)
            raise

    def _interpreted(self, tensors: dict) -> Tensor:
        tensors = tensors or dict(self.arguments)
        own = self.for_layouts(tensors)
        if own is not self:
            return own.interpret(**tensors)
        with checked_now(self._shared_checked(tensors)):
            kernel = self.for_values(tensors)
            helpers = dict(kernel.lowered.helpers)
            return kernel._run(lambda **args: interpret(kernel.function, helpers=helpers, **args), tensors)

    def _shared_checked(self, tensors: dict) -> list:
        """The Tensors among ``tensors`` whose index arrays an owner may have written (not sealed: a
        scipy matrix's under ``Tensor.from_scipy``), checked again now, which takes their values' facts
        anew (:func:`~compiler.recheck.check_again`): :meth:`for_values` chooses the kernel for what
        their values hold now, not for what they held when last looked at, and the call does not
        check them again (:class:`~compiler.recheck.checked_now`)."""
        if self.compiled.checked:
            return []   # (for_values validates each)
        outs = self._plan().output_names
        shared = [(name, value) for name, value in tensors.items() if value.__class__ is Tensor
                  and name in self.formats and name not in outs and not sealed(index_writers(value))]
        for name, value in shared:
            check_again(value, name)
        return [value for _, value in shared]

    def for_values(self, tensors: dict) -> "Kernel":
        """This kernel, or the one lowered for what ``tensors``' values hold when this one assumed
        less: a kernel that skips ``0 * y`` for a finite ``y`` is not run on a ``y`` holding NaN
        (the other is lowered once and kept in :func:`lower`'s cache).

        >>> import compiler as ss
        >>> x = ss.Tensor.from_numpy(np.array([0.0, 2.0]), "sparse_vector")
        >>> k = ss.lower("c[i] = x[i] * z[i]", x=x, z="sparse_vector")      # z assumed finite
        >>> z = ss.Tensor.from_numpy(np.array([np.nan, 3.0]), "sparse_vector")
        >>> k.for_values({"x": x, "z": z}) is k, k(x=x, z=z).to_numpy()
        (False, array([nan,  6.]))
        """
        if self.relower is None:
            return self
        wider = None   # (built only when some value holds more than assumed: calls are a hot path)
        for name, value in tensors.items():
            assumed = self.facts.get(name)
            if assumed is None:
                continue
            if self.compiled.checked and isinstance(value, Tensor):
                value.validate(as_name=name)   # (and so takes its facts again)
            held = facts_of(value)
            if held is assumed or held <= assumed:
                continue
            wider = dict(self.facts) if wider is None else wider
            wider[name] = assumed | held
        return self if wider is None else self.relower(wider)

    def depends_on_values(self, name: str) -> bool:
        """Whether this kernel's C depends on what ``name``'s stored values hold (NaN, +inf, -inf):
        the C lowered again with them taken to hold anything, compared (once per name, kept; nothing is
        compiled). A kernel that does not, a SpMV's matrix, is right whatever they hold, and a call does
        not look at them (a scipy matrix's, rechecked at every call: :mod:`compiler.recheck`).

        >>> import compiler as ss
        >>> k = ss.lower("y[i] = A[i, j] * x[j]", A="csr", x="dense")
        >>> k.depends_on_values("A"), k.depends_on_values("x")      # (0 * x[j] skipped: x finite)
        (False, True)
        """
        known = self.__dict__.setdefault("_depends_on_values", {})
        depends = known.get(name)
        if depends is None:
            assumed = self.facts.get(name)
            if self.relower is None or assumed is None or self.compiled.checked:
                depends = True    # (a kernel lowered for no facts, or checking each value anyway)
            else:
                wider = assumed | values.ANY
                try:
                    depends = wider != assumed and self.relower({**self.facts, name: wider}, emit=True) != \
                        self.compiled.c_source
                except SparsescopeError:   # (a strategy that lowers no kernel for any values: this one needs them)
                    depends = True
            known[name] = depends
        return depends

    def for_layouts(self, tensors: dict) -> "Kernel":
        """This kernel, or the one lowered for the index dtypes of the scipy or pydata arrays among
        ``tensors`` where they are all that differ from this kernel's formats: a kernel lowered for
        ``csr`` (int64 indices) called with a scipy matrix's int32 ones reads them in place rather
        than converting the matrix at every call. It is lowered once per layout (and kept); the
        decision is recorded in this kernel's trace (a ``foreign-layout`` step), as is a layout that
        stays converted at every call (a COO or CSC matrix for a CSR kernel).

        >>> import scipy.sparse as sp, compiler as ss
        >>> k = ss.lower("y[i] = A[i, j] * x[j]", A="csr", x="dense")
        >>> m = sp.csr_matrix(np.array([[0, 2.0], [3.0, 0]]))          # int32 indices
        >>> own = k.for_layouts({"A": m, "x": np.ones(2)})
        >>> own is k, own.formats["A"].levels[1].index_dtype.name, own(A=m, x=np.ones(2)).to_numpy()
        (False, 'int32', array([2., 3.]))
        """
        if self.relower is None:
            return self
        layouts = None
        for name, value in tensors.items():
            if value.__class__ is Tensor or value.__class__ is np.ndarray or not is_foreign(value):
                continue
            layouts = (layouts or ()) + ((name, binding.foreign_layout(value)),)
        if layouts is None:
            return self
        routes = self.__dict__.setdefault("_layout_routes", {})
        own = routes.get(layouts)
        if own is None:
            own = self._lowered_for_layouts(tensors, layouts)
            if len(routes) >= 16:   # (a kernel called with many layouts keeps the last few)
                routes.clear()
            routes[layouts] = own
        return own

    def _lowered_for_layouts(self, tensors: dict, layouts: tuple) -> "Kernel":
        """The kernel for ``layouts`` (``(name, foreign_layout)`` pairs of ``tensors``' foreign
        arrays): lowered for each array's own format where only index dtypes differ, else this one."""
        plan = self._plan()
        own = {}
        for name, _ in layouts:
            fmt = self.formats.get(name)
            if fmt is None or name in plan.output_names or name in plan.converted:
                continue   # (an unknown name is refused by the call; the kernel converts some inputs itself)
            value = tensors[name]
            theirs = to_tensor(value, name).format
            if theirs == fmt or theirs.ndim != fmt.ndim:
                continue   # (shared as it is; or refused by the call, naming the ranks)
            what = f"{name}: a {_foreign_name(value)} {_index_words(theirs)}"
            if binding.same_but_index_dtypes(theirs, fmt):
                own[name] = theirs
                self.trace.record("foreign-layout", note=(
                    f"{what}, this kernel reads {_index_words(fmt)}: calls with it run the kernel lowered for "
                    f"{theirs} (lowered once, kept), which reads its arrays in place"))
            else:
                self.trace.record("foreign-layout", note=(
                    f"{what} is {theirs} but this kernel reads {fmt}: each call converts it, a copy of its "
                    f"entries ({name}.asformat); pass it converted once, or lower the program for its format"))
        if not own:
            return self
        try:
            kernel = self.relower(self.facts, own)
        except StrategyError as e:   # (this kernel converts them, as before)
            self.trace.record("foreign-layout", note=(
                f"{', '.join(own)}: the {self.strategy} strategy lowers no kernel for "
                f"{', '.join(str(f) for f in own.values())} ({e}); each call converts them"))
            return self
        if kernel is self:
            return self
        for name, fmt in own.items():
            kernel.trace.record("foreign-layout", note=(
                f"{name}: lowered for {fmt}, the layout of the {_foreign_name(tensors[name])} a kernel for "
                f"{self.formats[name]} was called with, to read its arrays in place"))
        return kernel

    # --- binding -------------------------------------------------------------------------

    def _inputs(self, tensors: dict) -> dict[str, Tensor]:
        out_names = self._plan().output_names
        if not tensors.keys() <= self.formats.keys():
            unknown = sorted(set(tensors) - set(self.formats))
            raise UsageError(f"this kernel has no tensor {', '.join(unknown)}; "
                            f"it takes {', '.join(self.formats)}")
        bound = {}
        plan = self._plan()
        for name, fmt in self.formats.items():
            if name not in tensors:
                if name in out_names:
                    continue
                raise UsageError(f"missing tensor {name} (compiled for {fmt.shorthand or fmt})")
            value = tensors[name]
            if value.__class__ is Reused:
                if name not in plan.resets and name not in plan.in_place:
                    raise UsageError(reuse_refused(name, out_names, plan.resets | plan.in_place, plan.refusals))
                bound[name] = value   # (its arrays are taken when the output is allocated)
                continue
            if not isinstance(value, Tensor):
                value = plan.inputs[name].tensor(name, value)   # (checked as it was taken)
            elif plan.inputs[name].has_bound(value) and not self.compiled.checked:
                # (bound by this kernel before: its format was checked then; its index arrays, where
                # they are not sealed, are checked again: compiler.sealing)
                if not sealed(plan.inputs[name].writers(value)):
                    check_again(value, name)
            # (a tensor already in the format the kernel reads, converting it, is taken as it is)
            elif value.format != fmt and value.format != plan.converted.get(name) and value.format != compiled_spec(fmt):
                got, want = _describe_formats(value.format, compiled_spec(fmt))
                raise FormatError(
                    f"tensor {name} is {got} but this kernel was compiled for {want}; convert it "
                    f"with {name}.asformat(...) or lower the program again for this format")
            elif self.compiled.checked:
                value.validate(as_name=name)
            elif name not in out_names and not sealed(plan.inputs[name].writers(value) if value.format == fmt
                                                      else index_writers(value)):
                check_again(value, name)   # (before a conversion reads them too)
            bound[name] = value
        return bound

    def _check_extents(self, inputs: dict[str, Tensor]) -> None:
        for index, uses in self._plan().extents:
            first = None
            for t, m in uses:
                tensor = inputs.get(t)
                if tensor is None:
                    continue
                if first is None:
                    first = (t, m, tensor.shape[m])
                elif tensor.shape[m] != first[2]:
                    t0, m0, n0 = first
                    source = dict(self.lowered.copies)   # (a converted copy is named as the tensor it copies)
                    raise ShapeError(f"index {index} has extent {n0} in {source.get(t0, t0)} (mode {m0}) "
                                     f"but {tensor.shape[m]} in {source.get(t, t)} (mode {m})")

    def _output_shape(self, inputs) -> tuple[int, ...]:
        simple = self._plan().shape_from
        if simple is not None:
            try:
                return tuple([e if e.__class__ is int else inputs[e[0]]._shape[e[1]] for e in simple])
            except KeyError:
                pass   # (extent_value says which tensor is missing)
        return tuple(extent_value(entry, inputs) for entry in self.lowered.output_shape)

    def _plan(self) -> "CallPlan":
        try:
            return self._call_plan
        except AttributeError:
            self._call_plan = CallPlan(self)
            return self._call_plan

    def _output_length(self, storage: tuple, kind: str, level: int | None) -> int:
        """The length of the output's array ``kind`` of ``level`` (None: the values), by the level's
        own rule (:meth:`~compiler.levels.level.Level.allocated_arrays`) over the positions of the
        levels located by coordinate above it."""
        if level is None:
            return math.prod(storage)
        rule, first = self._plan().rules[kind, level]
        return rule.length(math.prod(storage[:first]), storage[first])

    def _output_array_words(self, shape, dtype, kind: str, level: int) -> tuple[str, str]:
        """What an output array too large for memory is, and what to do instead."""
        out_name, out_fmt = self.lowered.output, self.lowered.output_format
        storage = tuple(shape[m] for m in out_fmt.mode_order)
        what = "value array" if level is None else f"level {level} {kind} array"
        hint = (f"a sparse format for {out_name} stores only its entries" if level is None else
                f"a format with no dense level above level {level} (dcsr or coo for a matrix) stores "
                f"only the fibers that have entries")
        return (f"output {out_name} ({out_fmt.shorthand or out_fmt}, shape {shape}): its {what} of "
                f"{self._output_length(storage, kind, level)} {np.dtype(dtype).name} entries"), hint

    def _output_buffer(self, inputs: dict, storage: tuple, dtype, kind: str, level: int) -> np.ndarray:
        """An output array the kernel fills in place: a dense output's values (from the fill, or
        the given output's) or a level's array over the dense levels above it."""
        low, out_name = self.lowered, self.lowered.output
        if level is not None and low.initial == "output" and out_name in inputs and \
                self._plan().rules[kind, level][0].kept:
            # an update of a given output starts from its entries: a byte map's marks, which slots hold one, too
            return np.array(inputs[out_name].levels[level].arrays()[kind], dtype=dtype)
        if level is not None:
            return np.zeros(self._output_length(storage, kind, level), dtype=dtype)
        if low.initial == "output" and out_name in inputs:
            init = inputs[out_name].to_numpy().transpose(low.output_format.mode_order)
            return np.ascontiguousarray(init, dtype=dtype).ravel()
        if low.initial == "none":
            return np.empty(math.prod(storage), dtype=dtype)
        buf = np.empty(math.prod(storage), dtype=dtype)   # (np.full's own checks cost a call's microsecond)
        buf.fill(low.fill)
        return buf

    def _run(self, runner, tensors: dict) -> Tensor:
        if self.lowered.outputs:   # (several outputs: a named tuple of them)
            return outputs.run(self, runner, tensors)
        inputs = self.bind(tensors)
        inputs, state = self.prepare_output(inputs, tensors)
        args = self.input_args(inputs)
        args.update(state.args)
        results = runner(**args)   # (the plans bind only the kernel's parameters)
        return self.build_output(state, results, inputs, tensors)

    # --- the phases of a call (run in this order; compiler.outputs runs them per output) ---------

    @property
    def output_names(self) -> tuple:
        """The kernel's outputs, in the program's order (one but for a loop program writing several)."""
        return self.__dict__.get("_siblings") or tuple(o.output for o in self.lowered.outputs or (self.lowered,))

    def _planned_fast(self):
        """This kernel's fast path (:func:`compiler.fastcall.fast_call`, None where it has none), planned at its
        first call and kept."""
        fast = self.__dict__.get("_fast", self)
        if fast is self:
            fast = self._fast = fast_call(self)
            self._first = _first_of(None, fast)
        return fast

    def retraced(self, trace: Trace, arguments: dict) -> "Kernel":
        """This kernel with another ``trace`` and ``arguments`` (an array expression's, whose statement lower()
        cached), sharing its planned call: the fast path is planned once, on this kernel, not on each copy.

        >>> import compiler as ss
        >>> k = ss.lower("y[i] = x[i] * 2", x=np.ones(3))
        >>> c = k.retraced(Trace(), {"x": np.arange(3.0)})
        >>> c is not k, c.trace is not k.trace, c().to_numpy()
        (True, True, array([0., 2., 4.]))
        """
        self._planned_fast()
        self.__dict__.setdefault("_depends_on_values", {})   # (shared too: each copy asks once per kernel)
        out = copy.copy(self)
        out.trace, out.arguments = trace, arguments
        return out

    def output_views(self) -> list:
        """For a kernel with several outputs, a kernel per output in the program's order (sharing
        this one's compiled function, formats and trace; its ``lowered`` that output's), built once."""
        views = self.__dict__.get("_views")
        if views is None:
            views = []
            for out in self.lowered.outputs:
                view = copy.copy(self)
                for kept in ("_call_plan", "_views", "_fast", "_first", "_routed_fast"):
                    view.__dict__.pop(kept, None)
                view.lowered, view._siblings = out, self.output_names
                views.append(view)
            self._views = views
        return views

    def bind(self, tensors: dict) -> dict:
        """The call's tensors bound to the kernel's formats (copies and conversions made), extents checked."""
        low = self.lowered
        inputs = self._inputs(tensors)
        for dup, source in low.copies:
            inputs[dup] = inputs[source]
        for name, fmt in low.conversions:
            if name != low.output and name in inputs and inputs[name].format != fmt:
                inputs[name] = inputs[name].asformat(fmt)
        self._check_extents(inputs)
        for name, shape in low.shapes:
            if name in inputs and tuple(inputs[name].shape) != tuple(shape):
                raise ShapeError(f"tensor {name} has shape {tuple(inputs[name].shape)}, but this kernel was lowered "
                                 f"for shape {tuple(shape)} (strategy={self.strategy!r} specializes shape operators "
                                 f"to the shapes); lower the program again for these tensors")
        if self.shape_operators:
            # (the premises of the shape operators, for these shapes: |k| = |i|·|j|, slice bounds...;
            # once per set of shapes: inferring them again was a third of a small call's time)
            # (a copy of this kernel shares the set: the program is in the key)
            shapes = tuple((t, tuple(v.shape)) for t, v in inputs.items())
            held = self.premises_held
            if (id(self.program), shapes) not in held:
                infer_shapes(self.program, dict(shapes))
                # (held, a set the fast path takes unchecked: the extents walked as one agree too)
                check_walked_together(low.agree, inputs)
                if len(held) < 64:
                    held.add((id(self.program), shapes))
        return inputs

    def input_args(self, inputs: dict) -> dict:
        """The kernel's arguments from the bound tensors: every input's arrays, and an output's
        only where the kernel starts from its values."""
        plan = self._plan()
        skip = plan.fresh_outputs
        args = {}
        for name, t in inputs.items():
            # (an output given to reuse(): its arrays are taken as the output's, its sizes are the output's)
            if name not in skip and t.__class__ is not Reused:
                args.update(plan.inputs[name].args(t))
        return args

    def prepare_output(self, inputs: dict, arguments: dict | None = None) -> tuple:
        """``(inputs, OutputCall)`` for one call: the output's shape checked against its writes,
        its size parameters and buffers allocated (``arguments``: what the caller gave, which an
        earlier result given to reuse may share no array with, as it may not with ``inputs``)."""
        low, plan = self.lowered, self._plan()
        out_name, out_fmt = low.output, low.output_format
        restore = None
        if plan.compression is not None and out_name not in inputs:
            inputs, restore = plan.compression.apply(inputs)
        if low.initial == "assembled" and out_name in inputs:
            given = inputs[out_name]
            if not np.all(is_fill(given.vals, given.fill)):
                raise UsageError(
                    f"output {out_name} ({low.output_format.shorthand or low.output_format}) is given with entries, "
                    f"but the program updates it without assigning it first ({out_name}[...] = v), so it would "
                    f"start from them; a sparse output is assembled afresh: give {out_name} a dense format to "
                    f"update it in place, or assign it in the program")
        # (an earlier result given to reuse() is written into as a fresh output would be: its shape is the
        # call's, which the reuse plan checks it against)
        kept = out_name in inputs and inputs[out_name].__class__ is not Reused
        if low.output_writes:
            # (a loop program keeps a given output's shape; every write must land inside it)
            shape = inputs[out_name].shape if kept else tuple(max(0, e) for e in self._output_shape(inputs))
            check_output_writes(out_name, shape, low.output_writes, inputs)
        else:
            shape = self._output_shape(inputs)
        if kept and inputs[out_name].shape != shape:
            raise ShapeError(f"output {out_name} has shape {inputs[out_name].shape}, expected {shape}")
        storage = tuple(shape[m] for m in out_fmt.mode_order)
        for n, level, modes, idt in plan.narrow:
            for s in modes:
                if storage[s] - 1 > np.iinfo(idt).max:
                    raise FormatError(f"output {out_name}: level {n} ({level.name}) stores coordinates up to "
                                      f"{storage[s] - 1} (mode {out_fmt.mode_order[s]} has extent {storage[s]}), more "
                                      f"than its index_dtype {idt.name} holds (at most {np.iinfo(idt).max}); use "
                                      f"index_dtype='int64' for {out_name}")

        args = {}
        for s, pname in plan.output_sizes:
            args[pname] = storage[s]
        given = inputs.get(out_name)
        if given.__class__ is Reused:   # (an earlier result's arrays, its entries cleared)
            taken = plan.reuse.take(given, storage, inputs, arguments or {})
            for pname, dtype, kind, level in plan.inout:
                args[pname] = taken[kind]
            return inputs, OutputCall(shape, restore, args)
        for pname, dtype, kind, level in plan.inout:
            nbytes = self._output_length(storage, kind, level) * plan.itemsize[pname]
            if nbytes > memory.SMALL:
                # (the kernel writes every element: an array past the free memory would get the process killed)
                memory.require(nbytes, *self._output_array_words(shape, dtype, kind, level))
            try:
                buf = self._output_buffer(inputs, storage, dtype, kind, level)
            except (MemoryError, ValueError) as e:   # numpy: too large for memory, or for an index
                what, hint = self._output_array_words(shape, dtype, kind, level)
                raise MemoryError(f"{what} cannot be allocated ({e}); {hint}") from None
            args[pname] = buf
        return inputs, OutputCall(shape, restore, args)

    def build_output(self, state: "OutputCall", results: dict, inputs: dict, tensors: dict) -> Tensor:
        """The output tensor from the kernel's ``results`` and the buffers ``state`` allocated."""
        plan = self._plan()
        shape, restore = state.shape, state.restore
        out_name = self.lowered.output
        arrays = {**state.args, **results}
        # Checked kernels (and the test suite, via SPARSESCOPE_VALIDATE_OUTPUTS) validate outputs; every
        # kernel whose output has a level holding at most one entry or run per fiber (SparsePoint,
        # SparseInterval) checks that level's counts (below): a program can write more, and that must
        # be an error.
        why = self.lowered.validate_output
        check = (self.compiled.checked or bool(why) or bool(os.environ.get("SPARSESCOPE_VALIDATE_OUTPUTS")))
        output = plan.output if plan.fresh_fill is None else plan.fresh_fill.output(inputs, tensors)
        try:
            out = output.tensor(shape, arrays, check=check)
        except FormatError as e:
            if not why:
                raise
            raise FormatError(f"{e} ({why}; every call checks its output)") from None
        if plan.at_most_one and not check:
            binding.check_at_most_one(out_name, out)
        if tensors.get(out_name).__class__ in (type(None), Reused):
            out.seal()   # (arrays the kernel made, or the runtime's again: compiler.sealing)
        if self.lowered.reset:
            mark_cleared_off_entries(out)
        if restore is not None:
            out = restore(out)
        # (an output built in another mode order than asked, as no loop order appends it in its own)
        return out.asformat(self.formats[out_name]) if out_name in plan.converted else out


def _first_of(routed, fast):
    """The function a kernel's call tries first: the fast path of the kernel for a foreign layout
    (``routed``), then the kernel's own (``fast``), either None; it gives None for a call neither takes.

    >>> _first_of(None, None)({}) is None, _first_of(lambda t: None, lambda t: 3)({})
    (True, 3)
    """
    if routed is None:
        return fast if fast is not None else _no_call

    def first(tensors):
        out = routed(tensors)
        return out if out is not None or fast is None else fast(tensors)
    return first


def _no_call(tensors):
    return None


def _foreign_name(value) -> str:
    """``scipy csr_matrix``, ``pydata/sparse GCXS``: a foreign array's library and type, for messages."""
    return f"{'scipy' if is_scipy_sparse(value) else 'pydata/sparse'} {type(value).__name__}"


def _index_words(fmt: Format) -> str:
    """``csr with int32 indices``: a format's shorthand (or spelling) and its levels' index dtypes."""
    dtypes = sorted({np.dtype(lvl.index_dtype).name for lvl in fmt.levels if getattr(lvl, "index_dtype", None) is not None})
    return f"{fmt.shorthand or fmt}" + (f" with {' and '.join(dtypes)} indices" if dtypes else "")


def compiled_spec(fmt: Format) -> Format:
    """The format a kernel lowered for ``fmt`` reads: a spec that names no value dtype is compiled
    for float64, as a tensor built from such a spec with float data is.

    >>> from compiler.levels import Dense, Element
    >>> compiled_spec(Format(Dense(Element(0)))) == Format(Dense(Element(0.0, dtype="float64")))
    True
    """
    leaf = fmt.leaf
    if isinstance(leaf, Element) and leaf.dtype is None:
        return Format(replace_leaf(fmt.root, Element(leaf.fill, dtype="float64")), fmt.mode_order)
    return fmt


def _describe_formats(got: Format, want: Format) -> tuple[str, str]:
    """Short names for two formats that differ, detailed enough to show how they differ."""
    short = (got.shorthand or str(got), want.shorthand or str(want))
    if short[0] != short[1]:
        return short
    # same shape of levels: the difference is in index dtypes, value dtype or fill, which the
    # spelling of a float64 format (or of a spec naming no dtype) leaves out
    if str(got) == str(want):
        return f"{got} (values {_dtype_name(got)})", f"{want} (values {_dtype_name(want)})"
    return str(got), str(want)


def _dtype_name(fmt: Format) -> str:
    dt = fmt.leaf.dtype
    return "of any dtype" if dt is None else np.dtype(dt).name


def facts_of(value):
    """The facts of a tensor's stored values as given to lower() or a kernel: a format says
    nothing of values and is taken as finite (a call with other values re-lowers)."""
    if isinstance(value, Tensor):
        return value.value_facts
    if isinstance(value, (np.ndarray, *SCALARS)):
        return array_facts(value)
    if is_foreign(value):   # (a scipy or pydata array's stored values)
        return values.of_array(np.asarray(value.data))
    return values.finite_of(getattr(value, "dtype", None))
