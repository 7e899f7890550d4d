"""The fast path of a kernel call: what every call of one kernel does, planned once.

Iterative solvers and graph algorithms call one kernel thousands of times on small inputs,
where the general call path (:meth:`compiler.runtime.Kernel.__call__`: binding, conversions,
compression, in-place outputs, write checks) costs more than the kernel. For a kernel with
none of those, :func:`fast_call` generates one Python function per kernel that takes the C
pointers of a tensor in the kernel's format (made and checked when the kernel first meets the
tensor, kept on it) or wraps a contiguous numpy array of an all-Dense format directly, checks
the extents, allocates the output and runs the kernel: on a 5x5 SpMV a call with Tensors costs
fewer instructions than scipy's ``A @ x``, 1.1 times with a numpy vector and 1.4 times with the
scipy matrix itself (``benchmarks/bench_call_path.py --instructions``). Whenever a call is not
that simple (a tensor in another format, values holding more than the kernel assumes, an output
given or too large to allocate unchecked) it returns ``None`` and the general path takes the
call, so both give the same result.

>>> import numpy as np, compiler as ss
>>> A = ss.Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]]), "csr")
>>> k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(2))
>>> fast = fast_call(k)
>>> fast({"A": A.asformat("coo"), "x": np.ones(2)}) is None   # the general path refuses it
True
>>> fast({"A": A, "x": np.ones(2)}).to_numpy()
array([2., 3.])
"""

from __future__ import annotations

import os

import numpy as np

from . import memory, outputs, recheck, sealing, values
from .backend.kernel import python_code
from .binding import array_name, assemble_result
from .compression import COMPRESS_EXTENT
from .reused_outputs import Reused, mark_cleared_off_entries
from .tensor import Tensor

__all__ = ["FastCall", "extents_code", "fast_call"]


def fast_call(kernel, wanted=None):
    """The fast path of ``kernel`` (a :class:`compiler.runtime.Kernel`): a function of the call's
    ``tensors`` dict giving the output tensor, or ``None`` for a call the general path takes (its
    generated source in ``.code``); ``None`` instead of a function when its
    calls need the general path every time (a checked kernel, conversions or copies of inputs,
    an output checked against writes that may reach past it by more than a look at one extent
    tells (an hstack's ``D[i, j + 3]``)); a kernel of shape operators takes a call whose shapes the
    general path checked their premises for before (kept by :meth:`compiler.runtime.Kernel.bind`),
    and one lowered for its tensors' shapes only those shapes (a 300 x 300 row slice spent 25 of its
    170 us in the general path, 6 here); a call whose extent of a compressible index is huge (a hypersparse SpGEMM's columns,
    see :mod:`compiler.compression`) takes the general path, which renumbers it. An output a
    program updates starts at its fill, as in the general path, when the call does not give it (a
    call that gives it, to update in place, takes the general path); an earlier result given as
    ``reuse(...)`` is taken through the output's :class:`compiler.reuse_plans.ReusePlan`, as the
    general path takes it (a Bellman-Ford round's distances and changed set). A loop program's several
    outputs are each allocated and built as one is, and come back in the
    :class:`compiler.outputs.Outputs` named tuple the general path gives; with ``wanted`` (names of
    outputs) the others are None there, and the arrays the kernel grew for them are freed at once
    (an intermediate its caller never reads)."""
    low = kernel.lowered
    if kernel.compiled.checked or low.copies or low.conversions:
        return None
    inputs = set(kernel.formats) - set(kernel.output_names)
    for view in _views(kernel):
        out, plan = view.lowered, view._plan()
        if (not _writes_checked(out.output_writes, plan.shape_from, inputs)
                or out.validate_output or plan.at_most_one or extents_code(out.output_shape, inputs) is None):
            return None
    try:
        return FastCall(kernel, wanted).function
    except _Unplanned:
        return None


# The environment as the os module keeps it: SPARSESCOPE_VALIDATE_OUTPUTS is read on every call
# (tests set and unset it between calls), and os.environ.get costs 0.6 us, a fifth of a call.
try:
    _ENVIRON, _VALIDATE_KEY = os.environ._data, os.environ.encodekey("SPARSESCOPE_VALIDATE_OUTPUTS")
except AttributeError:   # (another Python's os module)
    _ENVIRON, _VALIDATE_KEY = os.environ, "SPARSESCOPE_VALIDATE_OUTPUTS"


class FastCall:
    """One kernel's planned call: :attr:`function` ``(tensors)`` gives the output tensor or ``None``.

    The call is generated as one Python function per kernel (see :attr:`code`): each input's
    branch is unrolled, a bound Tensor's buffers go to C as the cffi pointers made when it was
    first seen (checked then, as :meth:`compiler.backend.kernel.Kernel.pointer` checks), and
    only a numpy argument and the fresh output buffers are wrapped on every call.
    """

    def __init__(self, kernel, wanted=None):
        plan, views = kernel._plan(), _views(kernel)
        compiled = kernel.compiled
        facts = kernel.facts if kernel.relower is not None else {}
        outs = tuple(view.lowered.output for view in views)
        self.names = frozenset(n for n in kernel.formats if n not in outs)
        g = {"Tensor": Tensor, "ndarray": np.ndarray, "CHECKED": recheck.CHECKED, "RECHECK": recheck.c_check(),
             "FACTS_OF": recheck.FACTS, "of_array": values.of_array, "asarray": np.asarray,
             "zeros": np.zeros, "empty": np.empty, "NAMES": self.names, "RUN": compiled.pointer_caller,
             "ENV": _ENVIRON, "KEY": _VALIDATE_KEY, "FB": compiled.from_buffer}
        # (the inputs an output's fill is worked out from where an array is given: see spoils below)
        zero_fills = {n for view in views if view._plan().fresh_fill is not None
                      for n in view._plan().fresh_fill.zero_fills}
        taken = compiled.pointer_parameters()
        given: set = set()
        # (as many tensors as names, each got by name: a name missing gives None, which no branch takes;
        # a third of the cost of comparing the keys with the names)
        lines = ["def fast(tensors):", f"    if len(tensors) != {len(self.names)}:", "        return None"]
        get = "tensors.get"
        if plan.resets or plan.in_place:
            # (or with outputs given as reuse(earlier result): compiler.reuse_plans)
            g["WITH_REUSED"] = self.names | plan.resets | plan.in_place
            lines[1:] = ["    if tensors.keys() != NAMES:", "        if not NAMES < tensors.keys() <= WITH_REUSED:",
                         "            return None"]
            get = "tensors.__getitem__"
        for name in kernel.formats:
            if name in outs:
                continue
            inp = plan.inputs[name]
            params = tuple(p for _, p in inp.sizes_used) + tuple(p for names in inp.arrays for _, p in names)
            given.update(params)
            g[f"FACTS_{name}"] = facts.get(name)
            # (integer and boolean values are finite whatever they hold: what the kernel assumes of
            # them is checked once, here, not by a look at each call's values)
            looked = facts.get(name) is not None and not _finite_by_dtype(inp.format, facts[name])
            wrap = _numpy_wrapping(inp)
            # (a Dense tensor's float values whose facts are not known yet, a driver's last result: looked
            # at in C over the pointer bound, one pass, where numpy's look takes four)
            counted = wrap[3] if looked and wrap is not None and wrap[3] is not None and \
                recheck.values_facts(wrap[1]) is not None else None
            if counted is not None:
                g[f"HELD_{name}"], g["FACTS_OF"] = recheck.values_facts(wrap[1]).run, recheck.FACTS
            g[f"PLAN_{name}"], g[f"BIND_{name}"] = inp, _binder(compiled, inp, params, counted)
            # (a numpy or foreign argument the oracle gives fill 0 where the format says another:
            # its output's fill is worked out by the general path)
            spoils = name in zero_fills
            lines.append(f"    v = {get}({name!r})")
            lines.append("    if v.__class__ is Tensor:")
            lines += _tensor_branch(name, params, looked, foreign=False, counted=counted,
                                    indexed=any(lvl.array_dtypes() for lvl in inp.format.levels))
            lines.append("    elif v.__class__ is ndarray:")
            if wrap is None or spoils:
                lines.append("        return None")
            else:
                ndim, dtype, sizes, vals = wrap
                g[f"DT_{name}"] = dtype
                lines.append(f"        if v.ndim != {ndim} or v.dtype != DT_{name} or not v.flags.c_contiguous:")
                lines.append("            return None")
                wrapped = []
                held = recheck.values_facts(dtype) if vals is not None else None
                if looked and held is None:
                    wrapped += _facts_check(name, "of_array(v)", "        ")
                wrapped.append(f"        s_{name} = v.shape")
                for m, pname in sizes:
                    wrapped.append(f"        p_{pname} = s_{name}[{m}]")
                if vals is not None:
                    g[f"T_{vals}"] = compiled.pointer_type(vals)
                    wrapped.append(f"        p_{vals} = FB(T_{vals}, v, False)")
                if looked and held is not None:
                    # (the facts of its values, in C over the pointer just made)
                    g[f"HELD_{name}"], g["FACTS_OF"] = held.run, recheck.FACTS
                    wrapped += _facts_check(name, f"FACTS_OF[HELD_{name}(p_{vals}, v.size)]", "        ")
                if set(params) - {p for _, p in sizes} - {vals}:   # (all-Dense: sizes and values only)
                    raise _Unplanned(name)
                lines += wrapped
                if ndim == 0:
                    # a numpy scalar of the input's dtype (``count=np.int64(16)``), as a 0-d array: other
                    # scalars (a Python float for an int64 input) take the general path, which converts them
                    g[f"SC_{name}"] = dtype.type
                    lines.append(f"    elif v.__class__ is SC_{name}:")
                    lines.append("        v = asarray(v)")
                    lines += wrapped
            lines.append("    else:")
            if spoils:
                lines.append("        return None")
            else:
                g[f"KEPT_{name}"], g[f"FOREIGN_{name}"] = inp.kept_foreign_facts, inp.foreign
                g["RECHECK"], g["FACTS_OF"] = recheck.c_check(), recheck.FACTS
                lines += _foreign_branch(name)
                lines += _tensor_branch(name, params, looked, foreign=True)
        for _, uses in plan.extents:
            # (an output's extent, a strategy's own check of an output given, is not an input's)
            uses = [(t, m) for t, m in uses if t in self.names]
            if not uses:
                continue
            (t0, m0), *rest = uses
            for t, m in dict.fromkeys(rest):
                if (t, m) == (t0, m0):
                    continue   # (an index used twice in one mode of a tensor: A[r - 1, c] and A[r, c])
                lines.append(f"    if s_{t}[{m}] != s_{t0}[{m0}]:")
                lines.append("        return None   # (the general path says which index disagrees)")
        for t, shape in kernel.lowered.shapes:
            # (a kernel lowered for its tensors' shapes, the lattice's of shape operators: others are the
            # general path's, which says what differs)
            if t in self.names:
                g[f"SHAPE_{t}"] = tuple(shape)
                lines.append(f"    if s_{t} != SHAPE_{t}:")
                lines.append("        return None")
        if getattr(kernel, "shape_operators", False):
            # (the shapes' premises, |k| = |i|·|j|, a slice inside its extent..., are inferred by the general
            # path once per set of shapes, which it keeps (Kernel.bind): a set it has not checked goes there)
            if plan.resets or plan.in_place:
                raise _Unplanned("an output given to reuse beside shape operators")
            g["HELD"], g["PROGRAM"] = kernel.premises_held, id(kernel.program)
            key = ", ".join(f"({n!r}, s_{n})" for n in kernel.formats if n in self.names)
            lines.append(f"    if (PROGRAM, ({key},)) not in HELD:")
            lines.append("        return None")
        if plan.compression is not None:
            g["COMPRESS_EXTENT"] = COMPRESS_EXTENT
            for _, uses, _ in plan.compression.plans:
                # (an index the general path would renumber for this call: its extent is huge)
                t, _, m = uses[0]
                lines.append(f"    if s_{t}[{m}] > COMPRESS_EXTENT:")
                lines.append("        return None   # (the general path renumbers it by the coordinates stored)")
        made, results, checked, sizing, last, unwanted = [], [], [], [], [], set()
        for k, view in enumerate(views):
            tag = str(k) if len(views) > 1 else ""   # (one output's names as they always were)
            mine = self._output(tag, view, g, lines, last, given)
            made += mine
            if wanted is not None and len(views) > 1 and view.lowered.output not in wanted:
                # (the arrays the kernel grows for it are freed by the caller; it gives no result)
                unwanted |= {pname for names in g[f"OUTPUT{tag}"].arrays for _, pname in names} - set(mine)
                results.append("None")
                checked.append("None")
                continue
            # (the result tensor, its levels built when first asked for, as OUTPUT.result makes it: here
            # without its frame; its sized levels are the last call's when the shape is)
            out = g[f"OUTPUT{tag}"]
            g["DEFERRED"], g["ASSEMBLE"] = Tensor.deferred_result, assemble_result
            g[f"ORDER{tag}"], g[f"NAME{tag}"], g[f"FMT{tag}"] = out.format.mode_order, out.name, out.format
            sizing += [f"    last{tag} = OUTPUT{tag}.last",
                       f"    sized{tag} = last{tag}[1] if last{tag}[0] == shape{tag} else OUTPUT{tag}.sized(shape{tag})"]
            vals = "None" if out.values_array is None else f"made[{out.values_array!r}]"
            result = f"DEFERRED(ASSEMBLE, (sized{tag}, made), shape{tag}, ORDER{tag}, NAME{tag}, FMT{tag}, {vals})"
            check = f"OUTPUT{tag}.tensor(shape{tag}, made, True).seal()"   # (validated, then sealed as assembly seals)
            # (a result the runtime started clear is marked so: a later call may reuse it cheaply)
            if view.lowered.reset:
                g["MARK"] = mark_cleared_off_entries
                out = view.lowered.output
                byte_map = len(view.lowered.output_format.levels) - 1   # (its last level)
                lvl = view.lowered.output_format.levels[byte_map]
                arrays = [array_name(out, *where) for where in ((byte_map, lvl.starts_array), (byte_map, lvl.mark_array),
                                                                (byte_map, lvl.crd_array), (None, "vals"))]
                marks = ', '.join(f'made[{a!r}]' for a in arrays)
                result, check = f"MARK({result}, {marks})", f"MARK({check}, {marks})"
            results.append(result)
            checked.append(check)
        if set(taken) - given:
            raise _Unplanned(sorted(set(taken) - given))
        # (after every check that may hand the call over: a result given to reuse is cleared only then)
        lines += last
        if unwanted:
            g["RUN"] = compiled.pointer_caller_freeing(frozenset(unwanted))
        direct = compiled.direct_call
        if direct is None:
            lines.append(f"    made = RUN({', '.join(f'p_{p}' for p in taken)})")
        else:
            # (a kernel returning only its status: its C function called here, without the caller's frame)
            g["C_FN"], g["FAIL"] = direct
            scalars = [p for p in taken if compiled.pointer_maker(p) is None]
            lines.append("    try:")
            lines.append(f"        status = C_FN({', '.join(f'p_{p}' for p in taken)})")
            lines.append("    except (TypeError, OverflowError):")
            lines.append("        return None   # (the general path names the scalar)")
            lines.append("    if status:")
            lines.append(f"        FAIL(status, {{{', '.join(f'{p!r}: p_{p}' for p in scalars)}}})")
        if direct is None:
            lines += [f"    made[{pname!r}] = b_{pname}" for pname in made]
        else:
            lines.append(f"    made = {{{', '.join(f'{pname!r}: b_{pname}' for pname in made)}}}")
        lines += sizing
        if len(views) > 1:   # (several outputs: the general path's named tuple of them)
            g["OUTPUTS"] = outputs.outputs_type(outs)
            results, checked = [[f"OUTPUTS(({', '.join(rs)}))"] for rs in (results, checked)]
        lines.append("    if ENV.get(KEY):   # (SPARSESCOPE_VALIDATE_OUTPUTS)")
        lines.append(f"        return {checked[0]}")
        lines.append(f"    return {results[0]}")
        #: the generated function's source (what a call runs)
        self.code = "\n".join(lines)
        exec(python_code(self.code, f"<fast call of {compiled.name}>"), g)
        #: the generated function (its ``code`` attribute, its source)
        self.function = g["fast"]
        self.function.code = self.code

    @staticmethod
    def _output(k: str, view, g: dict, lines: list, last: list, given: set) -> list:
        """The generated lines that size and allocate output ``k`` (its tag: ``""`` for a kernel's one
        output, else its number; ``view``, the kernel of that output): its ``shape{k}`` from the
        inputs' shapes, its size parameters and fresh buffers, into ``lines``; into ``last``, those
        that take the arrays of a result given to reuse and make the pointers, which run once no
        check may hand the call to the general path; returns the parameters of the buffers."""
        low, plan = view.lowered, view._plan()
        fresh = plan.fresh_fill
        output = plan.output if fresh is None else fresh.fixed
        if output is None:
            raise _Unplanned("the output's fill depends on the extents of each call")
        g[f"OUTPUT{k}"] = output
        shape = extents_code(low.output_shape, set(view.formats) - set(view.output_names))
        lines.append(f"    shape{k} = ({', '.join(shape)}{',' if len(shape) == 1 else ''})")
        storage = [shape[m] for m in low.output_format.mode_order]
        n = f"n{k}_" if k else "n"
        for s, expr in enumerate(storage):
            lines.append(f"    {n}{s} = {expr}")
        for mode, entry, _ in low.output_writes:
            if entry != plan.shape_from[mode]:
                # (a write whose reach is not the output's extent: the general path says which passes it)
                reach = f"s_{entry[0]}[{entry[1]}]" if isinstance(entry, tuple) else str(int(entry))
                lines.append(f"    if {reach} > shape{k}[{mode}]:")
                lines.append("        return None")
        for _, _, modes, idt in plan.narrow:
            for s in modes:
                lines.append(f"    if {n}{s} - 1 > {np.iinfo(idt).max}:")
                lines.append("        return None")
        for s, pname in plan.output_sizes:
            lines.append(f"    p_{pname} = {n}{s}")
            given.add(pname)
        made, fresh, taken = [], [], []
        for pname, dtype, kind, level in plan.inout:
            g[f"DT_{pname}"] = np.dtype(dtype)
            count = " * ".join(f"{n}{s}" for s in range(len(storage))) or "1"
            size = count if level is None else _length(n, low.output_format, kind, level)
            fresh.append(f"    m = {size}")
            fresh.append(f"    if m * {plan.itemsize[pname]} > {memory.SMALL}:")
            fresh.append("        return None   # (the general path checks the free memory first)")
            if level is not None:
                fresh.append(f"    b_{pname} = zeros(m, DT_{pname})")
            elif low.initial != "none" and _zero_bits(low.fill):
                fresh.append(f"    b_{pname} = zeros(m, DT_{pname})")   # (the fill: one call, not two)
            elif low.initial != "none":
                # (an output a program updates, "output" or "assembled", starts at the fill when it is
                # not given, as in the general path; one given at the call takes that path)
                g[f"FILL_{pname}"] = low.fill
                fresh.append(f"    b_{pname} = empty(m, DT_{pname})")
                fresh.append(f"    b_{pname}.fill(FILL_{pname})")
            else:
                fresh.append(f"    b_{pname} = empty(m, DT_{pname})")
            taken.append(f"        b_{pname} = taken[{kind!r}]")
            made.append(pname)
            given.add(pname)
        if plan.reuse is not None:
            # (an earlier result given as reuse(...): its arrays, cleared of its entries or updated in place,
            # through the plan the general path takes it by; else fresh ones)
            g[f"REUSE{k}"], g["REUSED"] = plan.reuse, Reused
            store = f"({', '.join(f'{n}{s}' for s in range(len(storage)))}{',' if len(storage) == 1 else ''})"
            lines.append(f"    r{k} = tensors.get({low.output!r})")
            lines.append(f"    if r{k} is None:")
            lines += ["    " + line for line in fresh]
            lines.append(f"    elif r{k}.__class__ is not REUSED:")
            lines.append("        return None   # (an output given to update in place: the general path's)")
            last.append(f"    if r{k} is not None:")
            last.append(f"        taken = REUSE{k}.take(r{k}, {store}, tensors)")
            last += taken
        else:
            lines += fresh
        for pname in made:
            g[f"T_{pname}"] = view.compiled.pointer_type(pname)
            last.append(f"    p_{pname} = FB(T_{pname}, b_{pname}, False)")
        return made


def _zero_bits(fill) -> bool:
    """Whether ``fill`` is stored as all zero bits (what ``np.zeros`` writes): 0, 0.0, False, not -0.0.

    >>> _zero_bits(0.0), _zero_bits(-0.0), _zero_bits(False), _zero_bits(float("nan")), _zero_bits(1)
    (True, False, True, False, False)
    """
    try:
        return fill == 0 and not np.signbit(fill)
    except TypeError:   # (a fill numpy cannot take the sign of)
        return False


def _length(n: str, fmt, array: str, level: int) -> str:
    """The length of an output's ``array`` of ``level`` of ``fmt`` (``Kernel._output_length``; every
    level above it is located by coordinate, or the runtime would not allocate it) as an expression of
    the storage extents ``{n}0, {n}1, ...``, worked out once by the level's own rule
    (:meth:`~compiler.levels.level.Level.allocated_arrays`) from the positions above it (their
    extents multiplied) and its extent.

    >>> from compiler.format import parse_format
    >>> fmt = parse_format("Dense(SparseByteMap(Element(0.0)))")
    >>> _length("n", fmt, "pos", 1), _length("n", fmt, "tbl", 1)
    ('n0 + 1', 'n0 * n1')
    >>> top = parse_format("SparseByteMap(Element(0.0))")
    >>> _length("n1_", top, "pos", 0), _length("n", top, "tbl", 0)
    ('2', 'n0')
    """
    first = sum(lvl.nmodes for lvl in fmt.levels[:level])
    return fmt.levels[level].allocated_arrays()[array].expression(" * ".join(f"{n}{s}" for s in range(first)),
                                                                 f"{n}{first}")


def _views(kernel) -> list:
    """The kernel of each output (one for a kernel of one output; see ``Kernel.output_views``)."""
    return kernel.output_views() if kernel.lowered.outputs else [kernel]


def extents_code(extents: tuple, inputs) -> list[str] | None:
    """The Python expression of each output extent (``Lowered.output_shape``: a constant, an input's
    mode ``(tensor, mode)``, or a sum, product, max or min of such, as
    :func:`compiler.runtime.extent_value` evaluates them) over the generated call's shapes ``s_<tensor>``,
    or None when one is something else (the general path works it out).

    >>> extents_code((("B", 0), ("+", ("B", 1), ("C", 1)), 3), {"B", "C"})
    ['s_B[0]', '(s_B[1] + s_C[1])', '3']
    >>> extents_code((("//", ("B", 0), 2),), {"B"}) is None
    True
    """
    def code(e):
        if isinstance(e, (int, np.integer)) and not isinstance(e, bool):
            return str(int(e)) if e >= 0 else None
        if not isinstance(e, tuple) or not e:
            return None
        if len(e) == 2 and isinstance(e[0], str) and e[0] in inputs and isinstance(e[1], (int, np.integer)):
            return f"s_{e[0]}[{int(e[1])}]"
        parts = [code(x) for x in e[1:]] if e[0] in ("+", "*", "max", "min") else [None]
        if not parts or None in parts:
            return None
        return f"({f' {e[0]} '.join(parts)})" if e[0] in ("+", "*") else f"{e[0]}({', '.join(parts)})"
    out = [code(e) for e in extents]
    return None if None in out else out


def _writes_checked(writes: tuple, shape_from, inputs) -> bool:
    """Whether each write of a loop program's output (``Lowered.output_writes``) reaches no further
    than the output's extent in its mode, whatever the call's shapes (the write's reach is the very
    extent the output takes: a write at a loop index, ``_F[k]`` of BFS's step, whose output is as
    long as ``A``'s mode 0), or can be checked so by a look at one extent, a constant or a mode of
    one of ``inputs`` (Bellman-Ford's distances, lowered for the shape they were given: each call
    checks ``A``'s extent against it). A call whose write reaches past it takes the general path,
    which says so.

    >>> write = (0, ("A", 0), "line 3")
    >>> _writes_checked((write,), (("A", 0),), {"A"}), _writes_checked((write,), (5,), {"A"})
    (True, True)
    >>> _writes_checked(((1, ("+", ("A", 1), 3), "line 7"),), (4, 5), {"A"})   # (an hstack's D[i, j + 3])
    False
    """
    if not writes:
        return True
    if shape_from is None:
        return False
    return all(entry == shape_from[mode] or isinstance(entry, (int, np.integer))
               or isinstance(entry, tuple) and len(entry) == 2 and entry[0] in inputs for mode, entry, _ in writes)


class _Unplanned(Exception):
    """A C argument no part of the fast path provides (the general path takes every call)."""


def _tensor_branch(name: str, params: tuple, facts: bool, foreign: bool, counted: str | None = None,
                   indexed: bool = False) -> list[str]:
    """The generated lines that take a Tensor argument ``v``: its pointers, kept on the tensor
    for this input's plan, and its shape; ``g`` is the foreign array it stands for. With ``counted``
    (the parameter of its values, all its stored values), facts not known yet are taken in C. With
    ``indexed`` (the kernel reads index arrays of it), a tensor whose index arrays are not sealed
    (:mod:`compiler.sealing`) goes to the general path, which checks them again."""
    lines = ["        c = v.__dict__.get('_fast_pointers')",
             f"        if c is None or c[0] is not PLAN_{name}:",
             f"            c = BIND_{name}(v)",
             "            if c is None:",
             "                return None"]
    if indexed:
        # (arrays it shares with an owner, or a user made writeable again: checked again in C, once per
        # compute() that checked them already; the general path says what is wrong, or takes new facts)
        lines += ["        for w in c[3]:",
                  "            if w.flags.writeable:",
                  "                if id(v) in CHECKED.ids:",
                  "                    break",
                  "                ops = c[4]",
                  "                if ops is None:",
                  "                    return None",
                  "                r = RECHECK(ops[0], ops[1])",
                  "                if r < 0:",
                  "                    return None",
                  "                h = FACTS_OF[r]   # (the facts objects are shared: most calls compare identities)",
                  "                if h is not v.__dict__.get('_value_facts') and not h <= v.value_facts:",
                  "                    return None",
                  "                break"]
    if params:
        lines.append(f"        {', '.join(f'p_{p}' for p in params)}{',' if len(params) == 1 else ''} = c[1]")
    if facts and counted is not None:
        lines += ["        h = v.__dict__.get('_value_facts')",
                  "        if h is None:",
                  f"            h = v._value_facts = FACTS_OF[HELD_{name}(p_{counted}, c[2])]"]
        lines += _facts_check(name, "h", "        ")
    elif facts:
        # (a foreign array's values are looked at again, h, as its owner may have changed them)
        lines += _facts_check(name, "h" if foreign else "v.__dict__.get('_value_facts') or v.value_facts", "        ")
    lines.append(f"        s_{name} = v._shape")
    return lines


def _foreign_branch(name: str) -> list[str]:
    """The generated lines that take a scipy or pydata argument ``v`` its plan bound in place before
    (:meth:`compiler.binding.InputPlan.kept_foreign_facts`, unrolled: a scipy matrix is an iterative
    solver's usual argument): the same object holding the same arrays and shape, its arrays checked
    again in C (the facts of its values, ``h``), ``v`` the tensor over them; anything else, or a
    check that fails, goes to the general path, which binds it or says what is wrong."""
    return [f"        e = FOREIGN_{name}.get(id(v))",
            "        if e is None or e[0]() is not v:",
            "            return None",
            "        d = v.__dict__",
            "        for key, held in e[1]:",
            "            if d.get(key) is not held:",
            "                return None",
            "        if not e[2] and v.shape != e[3]:",
            "            return None",
            "        for w in e[7]:   # (index arrays sealed when bound: still read-only, else bound again)",
            "            if w.flags.writeable:",
            "                return None",
            "        ops = e[6]",
            "        if ops is None:   # (a level the C check cannot read: validated whole)",
            f"            k = KEPT_{name}(v)",
            "            if k is None:",
            "                return None",
            "            v, h = k",
            "        else:",
            "            r = RECHECK(ops[0], ops[1])   # (its arrays checked again, the facts of its values)",
            "            if r < 0:",
            "                return None",
            "            h = FACTS_OF[r]",
            "            v = e[4]"]


def _finite_by_dtype(fmt, assumed) -> bool:
    """Whether the values of a tensor of ``fmt`` hold no more than ``assumed`` (the kernel's facts
    of them) by their dtype alone: integers and booleans are finite.

    >>> from compiler import Dense, Element, Format, dense
    >>> _finite_by_dtype(Format(Dense(Element(0, dtype="uint64"))), values.FINITE), _finite_by_dtype(dense(1), values.FINITE)
    (True, False)
    """
    dtype = fmt.dtype
    return dtype is not None and np.dtype(dtype).kind in "biu" and values.FINITE <= assumed


def _facts_check(name: str, held: str, indent: str) -> list[str]:
    return ([] if held == "h" else [f"{indent}h = {held}"]) + [
        f"{indent}if h is not FACTS_{name} and not h <= FACTS_{name}:",
        f"{indent}    return None"]


def _binder(compiled, plan, params: tuple, counted: str | None = None):
    """The function that gives a Tensor's ``(plan, pointers, count)`` for this kernel and keeps it on the
    tensor, or ``None`` for one in another format, which the general path binds or refuses. A tensor
    of the kernel's format is bound here as the general path would bind it (the fast path serves no
    checked kernel, which validates each): an iteration's last output read by the next call (a BFS
    round's frontier) is a new Tensor every call."""
    buffers = set(compiled.pointer_parameters())
    fmt = plan.format
    # (each buffer's pointer maker, its type and checks looked up once: a round's result is a new
    # tensor bound at the next round's call)
    makers = tuple((p, compiled.pointer_maker(p) if p in buffers else None) for p in params)

    def bind(tensor: Tensor):
        if not plan.has_bound(tensor) and tensor.format is not fmt and tensor.format != fmt:
            return None
        args = plan.args(tensor)
        try:
            pointers = tuple(make(args[p]) if make is not None and args[p].__class__ is np.ndarray else args[p]
                             for p, make in makers)
        except (TypeError, ValueError):
            return None   # (the general path raises naming the parameter)
        # (the length of the values array ``counted``, which the facts of the values are taken over)
        chain = plan.writers(tensor)
        check = None if sealing.sealed(chain) else recheck.kept_checker(tensor, plan.checks_values(tensor),
                                                                         not plan.coordinates_checked)
        tensor._fast_pointers = bound = (plan, pointers, None if counted is None else len(args[counted]),
                                         chain, None if check is None else check.ops)
        return bound
    return bind


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
