"""The public entry points: ``lower`` a program by a strategy, call the kernel on tensors.

A *strategy* (``"lattice"``, ``"looplets"``) is a function registered with
:func:`register_strategy` that turns a program and the formats of its tensors into
a :class:`Lowered`: an imperative-IR function whose parameters follow
:mod:`compiler.binding`'s naming, plus what the runtime needs to call it (the output,
its format, shape and fill, and which index extents must agree). This module does
the rest for every strategy: parsing, caching and compiling; :mod:`compiler.runtime`'s
:class:`~compiler.runtime.Kernel` binds tensors to parameters without copies, allocates
outputs and builds the result tensor.

Output conventions a strategy can rely on:

- a fixed-size ``inout`` buffer ``C_val`` (a dense output) arrives PRE-FILLED with
  the output's fill value (or with the given output's values when
  ``Lowered.initial == "output"``, for ``op=`` updates of an existing tensor; or
  uninitialized when ``Lowered.initial == "none"``, for kernels that write every element);
- a fixed-size ``inout`` buffer ``C{k}_pos`` (a SparseList level under Dense levels
  only) arrives zeroed, with one more element than its parent has positions; so do a
  SparseBand level's ``C{k}_ofs``, and its ``C{k}_idx`` (one band end per parent position);
- the sizes ``C{m}_size`` of the output's storage modes are passed as scalars;
- every other output array is a ``Growable``, named by :func:`compiler.binding.array_name`.

The result's fill: an output given a format (or a tensor) keeps that format's fill; a
fresh dense or 0-d output of index notation (no format given, or an array or scalar: every
entry is stored) says the oracle's fill, which for a reduction depends on the extents of the call
(``y[i] = sum[j](A[i, j])`` over an ``A`` of fill 1 has the fill ``n``, the extent of ``j``).
As for the oracle, a tensor passed to the call as a numpy array has the fill 0 and a scalar its
own value, whatever fill the format the kernel was lowered for has (the kernel binds them to it).

A kernel's dtypes are fixed when it is lowered: an array or scalar given at the call is
converted to the dtype compiled for it (a value an integer dtype cannot hold is refused, a float
is rounded). So ``s[] += b[i]`` lowered for a float32 ``b`` answers float32 when called with
``s=5.0``, where the oracle, which types each call afresh, answers float64.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import Callable

import numpy as np

from . import user_function_check, values
from .backend import compile_function, emit_c_with_provenance
from .errors import LATTICE_HINT, DTypeError, FormatError, ShapeError, StrategyError, UsageError, nesting_guard
from .binding import array_name
from .dtypes import result_dtype, typed_scalar
from .format import Format, dense, narrow_index_levels, parse_format
from .imperative.ir import Block
from .imperative.narrow import check_counts
from .imperative.traverse import forget_memos
from .index_fit import fitted_format, open_output
from .imperative.ir_dot import ir_artifact
from .interop import is_foreign, kept, tensors_of, to_tensor
from .levels.level import Level
from .lowering_budget import Abandoned, LoweredInstead, TooLongFused, checked_cfir, too_long
from .reference_fill import expression_fill
from .notation import Assign, accesses, parse
from .notation.dtypes import expr_dtype, type_literals
from .notation.infer import infer_given
from .output_extents import check_walked_together
from .owned_inputs import guard_owned, owned_names
from .recheck import array_facts, checked_now
from .notation.node_provenance import name_nodes
from .notation.shape import ShapeOp, has_shape_operators
from .notation.shapedata import shape_artifact, shape_data
from .notation.subscripts import from_subscripts, is_subscripts, operand_names
from .call_plan import SCALARS
from .runtime import Kernel, Lowered, facts_of  # noqa: F401  (Lowered: what a strategy returns)
from .tensor import Tensor
from .trace import Rewrite, Trace

_STRATEGIES: dict[str, Callable] = {}
_CACHE: dict = {}


#: per strategy, a function that reads a Python function as that strategy's program (the
#: looplets' ``loop_program``), so lower() knows its tensors' ranks before it picks formats
_PROGRAM_READERS: dict[str, Callable] = {}

#: per strategy, a function ``(statement, formats) -> {tensor: why}`` saying which operands of index
#: notation with shape operators its kernel would gather (locate at each coordinate of their
#: extents), raising its StrategyError where it refuses the statement (:func:`_converting`)
_GATHERS: dict[str, Callable] = {}

#: per strategy, the error classes besides StrategyError by which it refuses a statement (the
#: looplets' ProgramError: an output they cannot build); any other error is the user's, raised as is
_REFUSALS: dict[str, tuple] = {}


def register_strategy(name: str, fn: Callable, read_function: Callable | None = None,
                      gathers: Callable | None = None, refusals: tuple = ()) -> None:
    """Make ``fn(program, formats, trace, **options) -> Lowered`` available as ``strategy=name``;
    ``read_function`` turns a plain Python function into the strategy's program; ``gathers`` says
    which operands of a statement with shape operators its kernel would gather; ``refusals``, the
    error classes besides :class:`StrategyError` by which it refuses a statement it cannot lower
    (lower() given no strategy then says which strategies refused it).

    >>> from compiler.looplets.errors import ProgramError
    >>> _load_strategies()
    >>> _REFUSALS["looplets"] == (ProgramError,)
    True
    """
    _STRATEGIES[name] = fn
    if read_function is not None:
        _PROGRAM_READERS[name] = read_function
    if gathers is not None:
        _GATHERS[name] = gathers
    _REFUSALS[name] = tuple(refusals)


def strategies() -> list[str]:
    """The registered strategy names (importing the compiler packages that provide them)."""
    _load_strategies()
    return sorted(_STRATEGIES)


_loaded = False


def _load_strategies() -> None:
    global _loaded
    if _loaded:   # (every lower() asks: a solver's loop calls it thousands of times)
        return
    import importlib

    _loaded = True
    for module in ("compiler.lattice", "compiler.looplets"):
        try:
            importlib.import_module(module)
        except ImportError as e:
            if e.name != module:
                raise


def _ndims(program) -> dict[str, int]:
    if isinstance(program, Assign):
        out = {program.lhs.tensor: len(program.lhs.indices)}
        for acc in accesses(program.rhs):
            out.setdefault(acc.tensor, len(acc.indices))
        return out
    ndims = getattr(program, "tensor_ndims", None)
    return ndims() if callable(ndims) else {}


@functools.lru_cache(maxsize=512)
def _parsed(text: str):
    """``(program, its tensors' ranks, whether it has shape operators)`` of ``text`` parsed and its
    names checked, kept: the AST is immutable, and a program lowered again (a solver's loop calling
    ``einsum``) is parsed and walked once."""
    parsed = parse(text)
    if isinstance(parsed, Assign):
        _check_names(parsed)
    return parsed, _ndims(parsed), isinstance(parsed, Assign) and has_shape_operators(parsed)


def _check_names(program: Assign) -> None:
    """Refuse tensor and index names that the generated C cannot use.

    Index names become loop variables, so a C keyword cannot be one; tensor names only
    prefix array names (``int_val``), so they need only be ASCII identifiers.
    """
    from .imperative.ir import c_name_problem, is_c_name
    from .notation.ast import Access, Reduce, walk
    tensors = [program.lhs.tensor] + [a.tensor for a in accesses(program.rhs)]
    indices = list(program.lhs.indices) + [i for n in walk(program.rhs) if isinstance(n, (Access, Reduce))
                                           for i in n.indices if not isinstance(i, int)]
    # (a shape operator's indices name loops too)
    indices += [i for n in walk(program.rhs) if isinstance(n, ShapeOp)
                for i in n.produced() + tuple(x for k in range(len(n.children())) for x in n.consumed(k))]
    for t in tensors:
        if not is_c_name(t + "_"):
            raise StrategyError(f"tensor name {t!r} cannot prefix a variable of the generated C: use ASCII "
                                f"letters, digits and underscores")
    for i in indices:
        problem = c_name_problem(i.name, tensors)
        if problem:
            raise StrategyError(f"index {i.name!r} cannot name a loop variable of the generated C: {problem}; "
                                f"rename it in the program")


#: what a tensor given as a scalar is (a 0-d tensor whose fill, for the oracle, is its value)
def _as_format(name: str, value, ndim: int | None, statement: bool = True) -> Format:
    if statement and isinstance(value, (Tensor, np.ndarray)) and ndim is not None and value.ndim != ndim:
        # (before either strategy: each would take it for a statement it cannot lower; a loop program's
        # accesses may go through wrappers of another rank, swizzle(A, 1, 0, 2), which it checks by line)
        raise ShapeError(f"tensor {name} has {value.ndim} mode(s) (shape {value.shape}) but the program "
                         f"indexes it with {ndim} index(es)")
    if isinstance(value, Tensor):
        return value.format
    if isinstance(value, (Format, Level, str)):
        try:
            return parse_format(value, ndim=ndim)
        except (FormatError, ShapeError) as e:
            raise type(e)(f"tensor {name}: {e}") from None
    if isinstance(value, (np.ndarray, *SCALARS)):
        arr = np.asarray(value)
        try:
            return dense(arr.ndim, fill=np.zeros((), arr.dtype).item(), dtype=arr.dtype.name)
        except DTypeError as e:
            raise DTypeError(f"tensor {name}: {e}") from None
    hint = f"; options of the lowering go in options={{{name!r}: ...}}" if name in OPTION_NAMES else ""
    raise UsageError(f"tensor {name}: expected a Tensor, a numpy array, a scipy.sparse or pydata/sparse array "
                     f"or a format, "
                     f"not {type(value).__name__}{hint}")


# keywords that name a strategy's option, not a tensor, when given something that is not a tensor
OPTION_NAMES = ("order", "schedule", "assembly", "verify", "name", "max_looplets")


def _cache_key(program, strategy, formats, checked, options):
    try:
        key = (program, strategy, tuple(sorted(formats.items())), checked,
               tuple(sorted(options.items())))
        hash(key)
        return key
    except TypeError:
        return None  # an unhashable option (a schedule object, say): lower every time


def lower(program, strategy: str | None = None, *, checked: bool = False, functions=None,
          trace: Trace | None = None, options: dict | None = None, **tensors) -> Kernel:
    """Lower ``program`` by ``strategy`` for the given tensors (or just their formats) and compile it.

    ``program`` is index notation (a string or a parsed :class:`~compiler.notation.Assign`)
    or a loop program of the looplet language. Each keyword names a tensor and gives
    a :class:`~compiler.tensor.Tensor`, a numpy array, or a format (``"csr"``, a
    :class:`~compiler.format.Format`, a level spec). A second call with the same
    program, strategy and formats returns the cached kernel: it neither lowers nor
    compiles. Pass ``trace`` to record into your own trace (and bypass that cache).

    Without ``strategy``, a loop program is lowered by ``"looplets"`` (the one strategy that lowers
    loop programs; the trace's first step says so) and index notation by ``"lattice"`` where it
    lowers the statement for these tensors, else by ``"looplets"``, the trace's first step quoting
    the lattice's refusal (``strategy="lattice"`` raises it). Given options but ``name`` (a loop
    order, a schedule, ...), which steer the lattice, its refusal is raised. With shape operators
    (``collapse``, ``concat``, slices, constant indices, ...), the lattice's kernel (BURRITO's
    sequence expressions) has a first step saying so, and an input the lattice walks against its
    storage order (a CSC's ravel) it reads converted where looplets would gather it (locate each
    coordinate of its extents) or refuse the statement; a lattice kernel with shape operators longer than
    :data:`LONG_LATTICE` lines of C is left to looplets where theirs is at most half as long.

    >>> k = lower("y[i] = A[i, j] * x[j]", A="csr", x="dense")          # the lattice's kernel
    >>> k.strategy, k.trace.stages()[0]
    ('lattice', 'parse')
    >>> k = lower("y[i] = B[i, i, j]", B="csf")       # a diagonal the lattice finds in no level it searches
    >>> k.strategy, k.trace.steps[0].note.startswith("the lattice strategy refused this statement (B[i, i, j]")
    ('looplets', True)

    ``program`` may also be an array expression (:class:`compiler.array.Array`): the kernel of its
    one statement, over the tensors it was built from (call it with no arguments), computing into
    ``format=`` (or ``out=``) as :meth:`~compiler.array.Array.compute` does; scipy.sparse and
    pydata/sparse arrays are taken as tensors, sharing their buffers.
    """
    probe = _probe_key(program, strategy, tensors) if (
        program.__class__ is str and not checked and functions is None and trace is None and not options) else None
    if probe is not None:
        hit = _PROBE.get(probe[0])
        if hit is not None:
            return hit[0]
    _load_strategies()
    if callable(getattr(program, "lower_array", None)):
        # an array expression (compiler.array): its kernel reads the tensors it was built over
        # (its result's format is format=, as Array.compute takes it; out= as index notation names it)
        formats = {k: tensors.pop(k) for k in ("format", "out") if k in tensors}
        if len(formats) > 1:
            raise UsageError("lower(array, ...) takes the result's format once: format= or out=, not both")
        if tensors:
            raise UsageError(f"an array expression names its own tensors; lower(array, strategy=...) takes "
                             f"no tensors (got {', '.join(tensors)})")
        given = [k for k, v in (("functions", functions), ("trace", trace), ("options", options)) if v is not None]
        if given:
            raise UsageError(f"lower(array, ...) takes strategy=, checked= and format= only, not {', '.join(given)}=")
        return program.lower_array(strategy=strategy, checked=checked, format=next(iter(formats.values()), None))
    tensors = tensors_of(tensors)
    loop = not isinstance(program, (str, Assign)) and (hasattr(program, "tensor_ndims") or callable(program))
    chosen = strategy is None
    # (index notation with shape operators goes to the one strategy that lowers them so far)
    shaped = not loop and chosen and isinstance(program, (str, Assign)) and isinstance(functions, (dict, type(None))) \
        and (_parsed(program)[2] if isinstance(program, str) and not functions else
             has_shape_operators(parse(program, functions) if isinstance(program, str) else program))
    if chosen:
        strategy = "looplets" if loop else "lattice"
    elif loop and strategy != "looplets" and strategy in _STRATEGIES:
        # (a loop program states its loops, if and let: only looplets lower that)
        raise StrategyError(f"strategy={strategy!r} lowers index notation; a loop program is lowered with "
                            f"strategy='looplets' (or give no strategy)")
    if loop and hasattr(program, "__code__") and "looplets" in _PROGRAM_READERS:
        # a plain function: read as a loop program first, or "dense" would not know y's rank
        program = _PROGRAM_READERS["looplets"](program)
    if strategy not in _STRATEGIES:
        known = ", ".join(sorted(_STRATEGIES)) or "none (no strategy is installed)"
        raise UsageError(f"unknown strategy {strategy!r}; known strategies: {known}")
    if not isinstance(program, (str, Assign)) and not hasattr(program, "tensor_ndims") and not callable(program):
        raise UsageError(f"lower() needs index notation (a string or a parsed Assign) or a loop program, "
                         f"not {type(program).__name__}")
    if functions is not None and not isinstance(functions, dict):
        raise UsageError(f"functions must map names to user functions ({{'f': user_function(...)}}), "
                         f"not a {type(functions).__name__}")
    if options is not None and not isinstance(options, dict):
        raise UsageError(f"options must be a dict, not a {type(options).__name__}")
    options = dict(options or {})
    if loop and "shapes" not in options:
        # (an output indexed by a computed coordinate, a histogram's bins, is sized by the tensor given
        # for it: the same option compile_program gives, so both return the one cached kernel)
        shapes = loop_shapes(program, tensors)
        if shapes:
            options["shapes"] = shapes
    tensors, fit = _fit_output(program, functions, tensors) if not loop else (tensors, "")
    if chosen and not loop:
        kernel = _lower_default(program, checked, functions, trace, options, tensors, shaped, fit=fit)
    else:
        kernel = _lower(program, strategy, checked, functions, trace, options, tensors,
                        auto=LOOP_NOTE if chosen else "", fit=fit)
    # (a kernel for any shapes that walks two tensors' extents as one: the tensors given must agree now)
    check_walked_together(kernel.lowered.agree,
                          {n: v for n, v in tensors.items() if isinstance(v, (Tensor, np.ndarray))})
    if probe is not None and not kernel.shape_operators:   # (whose kernels are lowered for the shapes)
        if len(_PROBE) >= 256:
            _PROBE.clear()
        # (the formats are kept beside the kernel, so their ids in the key name no other object)
        _PROBE[probe[0]] = (kernel, probe[1])
    return kernel


def loop_shapes(program, tensors: dict) -> tuple:
    """The ``shapes`` option of the looplets strategy for a loop program: ``(name, shape)`` of each
    of the tensors it writes given as a Tensor or an array (sorted by name), so an output whose
    extent no loop gives (``bins[img[r, c] >> 4] += 1``) takes the one of the tensor given for it.
    An input's shape is left to each call (a kernel serves inputs of any extent, each call checked).

    >>> from compiler.looplets.language import loop_program
    >>> p = loop_program(source="def h(bins, img):\\n    for i in _:\\n        bins[img[i]] += 1\\n")
    >>> loop_shapes(p, {"bins": np.zeros(4, np.int64), "img": np.zeros(3, np.int64), "other": np.zeros(2)})
    (('bins', (4,)),)
    """
    written = program.written() if hasattr(program, "written") else ()
    names = set(written) - {t for t, _ in getattr(program, "temporaries", ())}
    return tuple(sorted((name, tuple(int(n) for n in v.shape)) for name, v in tensors.items()
                        if name in names and isinstance(v, (Tensor, np.ndarray))))


LOOP_NOTE = "a loop program: lowered with looplets (strategy='looplets'), the strategy of loop programs"
LATTICE_NOTE = ("shape operators: lowered with the lattice strategy (BURRITO's sequence expressions), which "
                "lowers every shape operator of this statement for these tensors")


LOOPLETS_HINT = "; lower it with strategy='looplets'"

#: the options every strategy takes; any other (a loop order, a schedule, ...) steers the lattice,
#: so given no strategy its refusal is raised as ``strategy='lattice'`` raises it
SHARED_OPTIONS = ("name",)


def _looplets_note(refusal: StrategyError, shaped: bool) -> str:
    why = str(refusal).removesuffix(LOOPLETS_HINT)
    if shaped:
        return (f"shape operators: the lattice strategy refused this statement ({why}); lowered with looplets "
                f"(strategy='looplets'), which lowers every shape operator")
    return f"the lattice strategy refused this statement ({why}); lowered with looplets (strategy='looplets')"


def _fit_output(program, functions, tensors: dict) -> tuple[dict, str]:
    """``tensors`` with an output whose index dtype is left open (:mod:`compiler.index_fit`) given
    the format with the one scipy would choose for these tensors, and why ("" when none is open)."""
    if isinstance(program, str) and not functions:
        parsed = _parsed(program)[0]
    else:
        parsed = parse(program, functions) if isinstance(program, str) else program
    if not isinstance(parsed, Assign) or parsed.lhs.tensor not in tensors:
        return tensors, ""
    out = parsed.lhs.tensor
    fmt = open_output(tensors[out], len(parsed.lhs.indices))
    if fmt is None:
        return tensors, ""
    fitted, why = fitted_format(parsed, fmt, tensors)
    return {**tensors, out: fitted}, why


def _lower_default(program, checked, functions, trace, options, tensors, shaped, facts=None, fit="") -> Kernel:
    """Index notation given no strategy: the lattice strategy's kernel, or where it refuses the
    statement (a format it does not walk, no loop order that walks every tensor as stored, a fill
    other than 0, values it cannot skip, ...) the looplets', the trace's ``strategy`` step quoting
    the refusal; given options that steer the lattice (:data:`SHARED_OPTIONS`), its refusal.
    With shape operators (``shaped``), the lattice's kernel has a ``strategy`` step too, and an
    input the lattice walks against its storage order it reads converted (``strategy='lattice'``
    does so always) only where looplets would gather that statement (locate each coordinate of an
    operand's extents: :func:`_converting`) or refuse it; where looplets walk every operand as
    stored, they lower it. A kernel called with values (or index dtypes) the lattice's would not
    serve is lowered again the same way."""
    attempt = None if trace is None else Trace()     # (a refused attempt leaves the caller's trace alone)
    # (with shape operators, without converting an input first: where the lattice would read one
    # converted, looplets may walk it as stored)
    first = {**options, "convert": False} if shaped else options
    # (a long lattice kernel's C is given to looplets before it is compiled)
    shorter = functools.partial(_shorter_looplets, program=program, checked=checked, functions=functions, trace=trace,
                                options=options, tensors=tensors, facts=facts, fit=fit, tried={}) \
        if shaped and all(name in SHARED_OPTIONS for name in options) else None
    try:
        kernel = _lower(program, "lattice", checked, functions, attempt, first, tensors,
                        facts, auto=LATTICE_NOTE if shaped else "", fit=fit, default=True, instead=shorter)
    except Abandoned as e:
        raise TooLongFused(str(e)) from None   # (the caller computes the statement's operands apart)
    except StrategyError as e:
        if any(name not in SHARED_OPTIONS for name in options):
            if trace is not None:   # (the caller's trace shows where the lattice stopped)
                trace.steps.extend(attempt.steps)
                e.trace = trace
            raise
        kernel = None
        why = _converting(program, functions, tensors, e)
        if why:
            try:
                attempt = None if trace is None else Trace()
                kernel = _lower(program, "lattice", checked, functions, attempt, options, tensors, facts,
                                auto=why, fit=fit, default=True, instead=shorter)
            except Abandoned as long:
                raise TooLongFused(str(long)) from None
            except StrategyError:
                pass   # (refused converted too: looplets', below)
        if kernel is None:
            return _lower_looplets(program, checked, functions, trace, options, tensors, shaped, facts, fit, e)
    if kernel.strategy == "looplets":
        return kernel   # (the lattice's C was too long: _shorter_looplets)
    if trace is not None:
        trace.steps.extend(attempt.steps)
        kernel.trace = trace
    if getattr(kernel, "falls_back", False):
        return kernel     # (lower()'s cache returned it: its relower falls back already)
    kernel.falls_back = True
    relower = kernel.relower
    given = {name: _format_only(value) for name, value in tensors.items()}

    def again(wider, formats=None, emit=False):
        try:
            return relower(wider, formats, emit)
        except StrategyError as e:
            return _lower(program, "looplets", checked, functions, None, options, {**given, **(formats or {})},
                          wider, auto=_looplets_note(e, shaped), fit=fit, emit=emit)
    kernel.relower = again
    return kernel


#: the lines of C of a lattice kernel with shape operators above which, given no strategy, the looplets' kernel is
#: lowered too, and taken where it is at most half as long: a lattice of many points whose cases each hold loops
#: (linalg.cross of a CSR matrix and a vector, 2,095 lines, looplets' 175; a 4-part hstack reshaped to three axes was
#: 18,591 lines, a lattice of the parts left per axis nested, before its loops merged: 501)
LONG_LATTICE = 4000
#: the lines of a lattice kernel's sequence CFIR (each making a line of C or more: 11 to 33 in the kernels
#: measured) above which the looplets' kernel is lowered before the lattice's C is emitted, and taken where it is
#: at most half as long as the CFIR (so as the C): emitting and cleaning up the C is most of a long lattice
#: kernel's lowering (linalg.cross of a CSR matrix: CFIR 4,089 lines, C 47,345, 9 s; looplets' 173 lines)
LONG_CFIR = 1000


class _NotShorter(Exception):
    """The looplets' kernel, emitted, is not at most half as long as the lattice's (:func:`_shorter_looplets`)."""


def _shorter_looplets(lines, program, checked, functions, trace, options, tensors, facts, fit, tried: dict,
                      cfir: bool = False) -> Kernel | None:
    """The looplets' kernel of a statement with shape operators whose lattice kernel's C, not yet
    compiled, is ``lines`` long, more than :data:`LONG_LATTICE`, where looplets lower it in at most
    half as many (their C too compared before it is compiled); else None. ``cfir``: ``lines`` are those of the
    lattice's sequence CFIR that each make a line of C or more, more than :data:`LONG_CFIR` (its C not yet
    emitted). ``tried``: the looplets' lines once lowered (not lowered again where not shorter)."""
    if lines <= (LONG_CFIR if cfir else LONG_LATTICE) or tried.get("lines", 0) * 2 > lines:
        return None
    what = (f"the lattice strategy's sequence CFIR is {lines:,} lines, each making a line of C or more (more than "
            f"{LONG_CFIR:,}: its C not emitted)" if cfir else
            f"the lattice strategy's kernel is {lines:,} lines of C (more than {LONG_LATTICE:,})")
    note = (f"shape operators: {what}; "
            f"lowered with looplets (strategy='looplets'), whose kernel is at most half as long "
            f"(strategy='lattice' gives the lattice's)")
    try:
        gathered = _looplets_gather(program, functions, tensors) if "looplets" in _GATHERS else {}
    except (StrategyError, *_REFUSALS.get("looplets", ())) as e:
        tried["lines"] = math.inf
        return too_long(lines, cfir, str(e).removesuffix(LATTICE_HINT))   # (looplets refuse it)
    if gathered:
        # (a short compile for a kernel whose time grows with the extents: said, so a user with large inputs
        # takes the lattice's)
        name, why = next(iter(gathered.items()))
        note += (f"; but looplets gather {name} ({why}: each coordinate of its extents located, where the "
                 f"lattice's loops walk the stored entries): for large inputs, strategy='lattice'")

    def not_shorter(theirs):
        tried["lines"] = theirs
        if theirs * 2 > lines:
            raise _NotShorter   # (before GCC builds it: a kernel left unused)
    try:
        other = _lower(program, "looplets", checked, functions, None if trace is None else Trace(), options, tensors,
                       facts, auto=note, fit=fit, instead=not_shorter)
    except _NotShorter:
        return None
    except (StrategyError, *_REFUSALS.get("looplets", ())) as e:
        tried["lines"] = math.inf
        return too_long(lines, cfir, str(e).removesuffix(LATTICE_HINT))
    if trace is not None:
        trace.steps.extend(other.trace.steps)
        other.trace = trace
    return other


def _lower_looplets(program, checked, functions, trace, options, tensors, shaped, facts, fit,
                    refusal: StrategyError) -> Kernel:
    """The looplets' kernel of a statement the lattice strategy refused (``refusal``), or, where
    looplets refuse it too, a StrategyError giving both reasons: looplets' first for a statement with
    shape operators (they lower every one), else the lattice's (the strategy of index notation). Any
    other error of the looplets' (a user function's C body that does not compile, a bad shape) is the
    user's, raised as is, not as both strategies' refusal."""
    try:
        return _lower(program, "looplets", checked, functions, trace, options, tensors, facts,
                      auto=_looplets_note(refusal, shaped), fit=fit)
    except (StrategyError, *_REFUSALS.get("looplets", ())) as both:
        theirs, lattice = str(both).removesuffix(LATTICE_HINT), str(refusal).removesuffix(LOOPLETS_HINT)
        err = StrategyError(f"{theirs}; the lattice strategy refused it too: {lattice}" if shaped else
                            f"{lattice}; the looplets strategy refused it too: {theirs}")
        err.trace = getattr(both, "trace", None)
        raise err from None


def _looplets_gather(program, functions, tensors: dict) -> dict:
    """``{operand: why}`` of the operands the looplets' plan of ``program`` would gather (locate at each coordinate
    of its extents), asked of :data:`_GATHERS` without lowering; a StrategyError where looplets refuse it."""
    parsed = _parsed(program)[0] if isinstance(program, str) and not functions else \
        parse(program, functions) if isinstance(program, str) else program
    ndims = _ndims(parsed)
    formats = {name: _as_format(name, value, ndims.get(name)) for name, value in tensors.items() if name in ndims}
    return _GATHERS["looplets"](parsed, formats)


def _converting(program, functions, tensors: dict, refusal: StrategyError) -> str:
    """Why the lattice strategy reading an input converted is the kernel to lower, where it refused
    to walk that input as stored (``refusal``): the looplets' kernel would gather an operand (its
    loops locate each coordinate of its extents where the lattice's walk the converted copy's
    entries, an O(nnz + extent) conversion; asked of the looplets' plan, :data:`_GATHERS`), or
    looplets refuse the statement; ``""`` where looplets walk every operand as stored. A refusal
    that ``searches`` each group of a split (a CSC output of a split vector) is the lattice's kernel
    only where looplets refuse the statement."""
    converts, searches = getattr(refusal, "converts", None), getattr(refusal, "searches", None)
    if converts is None and searches is None or "looplets" not in _GATHERS:
        return ""
    try:
        gathered = _looplets_gather(program, functions, tensors)
    except StrategyError as e:
        refused = str(e).removesuffix(LATTICE_HINT)
        if searches is not None:
            return f"shape operators: lowered with the lattice strategy, {searches}: looplets refuse the statement ({refused})"
        tensor, how = converts
        return (f"shape operators: lowered with the lattice strategy, {how}: it walks {tensor} against its "
                f"storage order, and looplets refuse the statement ({refused})")
    if searches is not None or not gathered:
        # (a search of each group per minor coordinate: where looplets lower the statement, theirs)
        return ""
    tensor, how = converts
    name, why = next(iter(gathered.items()))
    return (f"shape operators: lowered with the lattice strategy, {how}: it walks {tensor} against its storage "
            f"order, and looplets would gather {name} ({why}: each coordinate of its extents located, where the "
            f"lattice walks the stored entries)")


#: lower()'s first look: (program text, strategy, what each tensor's format and facts are, by the
#: identity of a tensor's format object) -> (the kernel _lower returned, which its cache holds too;
#: those format objects).
#: A solver's loop calling einsum on the same tensors skips the parsing, formats and facts of a call
_PROBE: dict = {}


def _probe_key(program: str, strategy, tensors: dict) -> tuple | None:
    """``(key, formats to keep)`` of :data:`_PROBE` for a call of ``lower(program, strategy, **tensors)``
    with no other argument; None where a tensor is given as something it does not describe (a scipy
    array, a format object, a Python int past int64), which takes the full path."""
    parts: list = [program, strategy]
    keep = []
    finite = values.FINITE
    for name, value in tensors.items():
        cls = value.__class__
        if cls is Tensor:
            held = value.__dict__   # (what the properties keep, read without their calls)
            fmt, facts = held.get("_format") or value.format, held.get("_value_facts") or value.value_facts
            keep.append(fmt)
            parts.append((name, id(fmt), None if facts is finite else facts))
        elif cls is str:
            parts.append((name, value))
        elif cls is np.ndarray or cls is float or cls is bool or (cls is int and -2**63 <= value < 2**63):
            # (an array's or scalar's format is its dtype's dense format, its rank's; its facts its values')
            facts = array_facts(value)
            parts.append((name, cls, value.dtype if cls is np.ndarray else None, value.ndim if cls is np.ndarray else 0,
                          None if facts is finite else facts))
        else:
            return None
    return tuple(parts), keep


def _format_only(value):
    """What a kernel keeps of a tensor given to lower() to lower again for other values: its
    format (an empty array of a raw array's dtype and rank, which says its fill is the oracle's)."""
    if isinstance(value, Tensor):
        return value.format
    if isinstance(value, (np.ndarray, *SCALARS)):
        arr = np.asarray(value)
        return np.empty((0,) * arr.ndim, dtype=arr.dtype)
    return value


def _lower(program, strategy, checked, functions, trace, options, tensors, facts=None, auto="", fit="",
           default=False, instead: Callable[[int], Kernel | None] | None = None, emit=False,
           owned: frozenset | None = None) -> Kernel | str:
    """``lower()`` once its arguments are checked; ``facts`` (default: the values') are what the
    kernel assumes the values hold; ``auto``: why the strategy was chosen (none given), recorded as
    the trace's first step; ``fit``: why the output has the index dtype chosen for it
    (:func:`_fit_output`), recorded as an ``index-dtype`` step; ``default``: lowered for no strategy
    given (:func:`_lower_default`, whose kernel lowers again by looplets where the lattice refuses:
    not the kernel of ``strategy='lattice'``, which its cache key tells apart); ``instead``: given the
    line count of the kernel's C before it is compiled, another kernel to return (and cache) in its
    place, or None; ``emit``: the kernel's C alone, not compiled nor cached (a cached kernel's); ``owned``: the
    inputs read from arrays another owner may write (default: those of ``tensors``, :func:`owned_names`)."""
    with nesting_guard(program):
        fn_key = tuple(sorted((functions or {}).items()))
        source_key = (program, fn_key) if isinstance(program, str) else program
        if isinstance(program, str) and not functions:
            parsed, ndims, shaped = _parsed(program)
        else:
            parsed = parse(program, functions) if isinstance(program, str) else program
            if isinstance(parsed, Assign):
                _check_names(parsed)
            ndims, shaped = _ndims(parsed), isinstance(parsed, Assign) and has_shape_operators(parsed)
        # tensors the program does not name are ignored (one dict of tensors may serve several
        # programs), but not an option's name given as a keyword: that option would be dropped silently
        misplaced = [name for name in tensors if ndims and name not in ndims and name in OPTION_NAMES]
        if misplaced:
            raise UsageError(f"{misplaced[0]}={tensors[misplaced[0]]!r} is no tensor of the program (its tensors "
                             f"are {', '.join(ndims)}): options of the lowering go in "
                             f"options={{{misplaced[0]!r}: ...}}")
        formats = {name: _as_format(name, value, ndims.get(name), isinstance(parsed, Assign))
                   for name, value in tensors.items()}
        owned = frozenset() if checked else (owned_names(tensors) if owned is None else owned) & set(ndims)
        for name in ndims:
            if name not in formats and not (isinstance(parsed, Assign) and name == parsed.lhs.tensor):
                raise UsageError(f"no format or tensor given for {name}")
        # what the values may hold is part of what the kernel is specialized for (0 * y is 0
        # only for a finite y): a checked lowering looks at the values again
        if facts is None:
            facts = {}
            for name, value in tensors.items():
                if checked and isinstance(value, Tensor):
                    value.validate(as_name=name)
                facts[name] = facts_of(value)
        facts = {name: facts.get(name) or values.finite_of(formats[name].dtype) for name in formats}
        # (the overflow scale of the kernel's arithmetic: a float32 product overflows at 2^128)
        limit = values.limit_of(f.dtype for f in formats.values())
        facts_key = tuple(sorted((n, f) for n, f in facts.items() if f != values.finite_of(formats[n].dtype)))
        # shape operators' premises are checked before lowering (and a cached kernel is returned)
        shape_info = infer_given(parsed, {n: np.shape(v) for n, v in tensors.items() if isinstance(v, (Tensor, np.ndarray))},
                                 {n: len(f.mode_order) for n, f in formats.items()}) if shaped else None

        if shaped and strategy == "lattice" and "shapes" not in options:
            # (its sequences hold extents: the kernel is lowered, and cached, for these shapes)
            options = {**options, "shapes": tuple(sorted((n, tuple(int(x) for x in np.shape(v)))
                                                         for n, v in tensors.items()
                                                         if isinstance(v, (Tensor, np.ndarray))))}
        # an output given as an array or a scalar says no fill of its own: it gets the oracle's, as a
        # fresh output does (and its kernel is not the one of an output given that dense format)
        out_name = parsed.lhs.tensor if isinstance(parsed, Assign) else None
        raw_out = isinstance(tensors.get(out_name), (np.ndarray, *SCALARS))
        # (an index dtype chosen for the output is in its format, so the key holds it; whether it was
        # chosen too, so the trace of a kernel given that format says no choice)
        key = None if trace is not None else _cache_key((source_key, raw_out, facts_key, auto, bool(fit), default,
                                                          owned), strategy, formats, checked, options)
        if key is not None and key in _CACHE:
            return _CACHE[key].compiled.c_source if emit else _CACHE[key]
        # a checked kernel differs from the unchecked one in its C alone: it is built from that
        # kernel's lowering when there is one (a test checks a kernel both ways)
        base = _CACHE.get(key[:3] + (False,) + key[4:]) if checked and key is not None else None
        if base is not None and base.strategy == strategy and not emit:    # (not a kernel given ``instead``)
            trace = Trace(base.trace.steps[:base.trace.stages().index("emit-c")])
            try:
                compiled = compile_function(base.lowered.function, checked=True, trace=trace)
            except Exception as e:
                e.trace = trace  # (as a fresh lowering's error: the explorer shows where it stopped)
                raise
            kernel = _kernel(program, base.program, strategy, formats, base.lowered, compiled, trace, raw_out, shaped,
                             facts, tensors, checked, functions, options, auto, fit, default)
            _CACHE[key] = kernel
            return kernel

        trace = Trace() if trace is None else trace
        if auto:
            trace.record("strategy", note=auto, data={"strategy": strategy})
        if fit:
            trace.record("index-dtype", note=fit, data={"output": out_name, "format": str(formats[out_name])})
        if isinstance(program, str):
            parsed = parse(program, functions, trace=trace)
        parsed = _typed_literals(parsed, formats)
        if shaped:
            data = shape_data(parsed, shape_info)
            trace.record("shapes", before=parsed, after=parsed, note=f"extents: {shape_info.text()}",
                         artifacts=[shape_artifact(data)], data=data)
        # (a long lattice CFIR may have a kernel in its place before its C is emitted: lowering_budget)
        early = None if instead is None or strategy != "lattice" else functools.partial(instead, cfir=True)
        try:
            with values.assuming(facts, limit) as assumed, user_function_check.noting() as applied, checked_cfir(early):
                lowered = _STRATEGIES[strategy](parsed, dict(formats), trace, **options)
            # (each statement computing the expression: tagged by the nodes of the parse step's tree it computes)
            lowered = replace(lowered, function=name_nodes(lowered.function, parsed))
            _record_facts(trace, assumed)
            # (a user function's C body against its py, before a kernel runs it)
            user_function_check.check_noted(applied, lowered.function.helpers, trace, _may_hold(facts, formats))
            lowered = _checked_counts(lowered, trace)
            lowered, guarded = guard_owned(lowered, formats, owned, trace) if owned else (lowered, frozenset())
            if emit:
                return emit_c_with_provenance(lowered.function, checked)[0]
            emitted = None if instead is None else emit_c_with_provenance(lowered.function, checked)
            other = None if emitted is None else instead(emitted[0].count("\n"))
            if other is None:
                compiled = compile_function(lowered.function, checked=checked, trace=trace, emitted=emitted)
        except LoweredInstead as e:
            other = e.kernel
        except Exception as e:
            e.trace = trace  # the explorer shows where lowering stopped
            raise
        if other is not None:
            if key is not None:
                _CACHE[key] = other
            return other
        kernel = _kernel(program, parsed, strategy, formats, lowered, compiled, trace, raw_out, shaped,
                         facts, tensors, checked, functions, options, auto, fit, default, owned)
        kernel.coordinates_checked = guarded
        if key is not None:
            _CACHE[key] = kernel
        return kernel


def _kernel(program, parsed, strategy, formats, lowered, compiled, trace, raw_out, shaped, facts, tensors,
            checked, functions, options, auto, fit, default, owned=frozenset()) -> Kernel:
    """The kernel of a lowering (``lower()``'s arguments, to lower it again for wider integers)."""
    fresh = lowered.output not in formats or raw_out
    formats = dict(formats)
    for out in lowered.outputs or (lowered,):
        formats.setdefault(out.output, out.output_format)
    kernel = Kernel(parsed, strategy, formats, lowered, compiled, trace, fresh_output=fresh)
    kernel.shape_operators = shaped
    kernel.facts = facts
    given = {name: _format_only(value) for name, value in tensors.items()}
    # (and for other formats of some inputs: a scipy matrix's own index dtypes, see Kernel.__call__)
    kernel.relower = lambda wider, formats=None, emit=False: _lower(
        program, strategy, checked, functions, None, options, {**given, **(formats or {})}, wider, auto, fit, default,
        emit=emit, owned=owned)
    return kernel


def count_limit(index_dtype) -> int:
    """One more than the largest entry count an array of ``index_dtype`` holds (2**31 for int32)."""
    return int(np.iinfo(index_dtype).max) + 1


def _checked_counts(lowered: Lowered, trace: Trace) -> Lowered:
    """``lowered`` with each store of an entry count into an output's position array narrower
    than int64 checked (:mod:`compiler.imperative.narrow`), recorded as the trace's
    ``narrow-counts`` step; ``lowered`` itself when no output has such a level."""
    limits = {}
    for out in lowered.outputs or (lowered,):
        for n, lvl, modes, idt in narrow_index_levels(out.output_format):
            mode = out.output_format.mode_order[modes[0]]   # (the first mode the level stores)
            # (the arrays of positions the level names: an output's coordinates are checked against
            # its index dtype before a call, its counts only as they grow)
            for kind in lvl.position_arrays():
                if kind in lvl.array_dtypes():
                    limits[array_name(out.output, n, kind)] = (
                        count_limit(idt), out.output, mode,
                        f"output {out.output}: level {n} ({lvl.name}) counts its entries in {idt.name} {kind}; "
                        f"lower with index_dtype='int64' for {out.output}")
    if not limits:
        return lowered
    fn = lowered.function
    body = Block(tuple(check_counts(list(fn.body.body), limits)))
    if body == fn.body:
        return lowered
    after = replace(fn, body=body)
    trace.record("narrow-counts", before=fn, after=after, artifacts=[ir_artifact(after)],
                 note=f"each count stored into {', '.join(sorted(limits))} checked against its index dtype "
                      f"(at most {min(v[0] for v in limits.values()) - 1} entries), so it cannot wrap")
    return replace(lowered, function=after)


def _typed_literals(parsed, formats: dict):
    """``parsed`` with its int literals beside unsigned operands typed as those operands (see
    :func:`compiler.notation.dtypes.type_literals`), once the tensors' dtypes are known."""
    if not isinstance(parsed, Assign) or any(a.tensor not in formats for a in accesses(parsed.rhs)):
        return parsed
    rhs = type_literals(parsed.rhs, lambda a: formats[a.tensor].dtype)
    return parsed if rhs is parsed.rhs else Assign(parsed.lhs, parsed.op, rhs)


def _may_hold(facts: dict, formats: dict) -> values.Facts:
    """What any value of a kernel's tensors may hold: their stored values' ``facts`` and their fills."""
    out = values.FINITE
    for f in facts.values():
        out = out | f
    for fmt in formats.values():
        out = out | values.of_value(fmt.fill)
    return out


def _record_facts(trace: Trace, assumed) -> None:
    """A ``value-facts`` step: what the kernel assumes the values hold, and where that took the
    sparse path (an annihilator skips) or the exact one (it cannot: ``0 * NaN`` is NaN)."""
    if not assumed.decisions:
        return
    held = [f"{name}: {f}" for name, f in assumed.facts.items()]
    exact = sum(1 for d in assumed.decisions if d[0] == "exact-path")
    trace.record("value-facts", rewrites=[Rewrite(rule, expr, why) for rule, expr, why in assumed.decisions],
                 note=f"stored values: {'; '.join(held)}; {exact} exact path(s), "
                      f"{len(assumed.decisions) - exact} sparse path(s) by an annihilator")


def einsum(expr, *operands, strategy: str | None = None, checked: bool = False, functions=None,
           **tensors) -> Tensor:
    """Evaluate index notation on tensors: ``einsum("y[i] += A[i, j] * x[j]", A=A, x=x)``; or numpy's
    call, subscripts and operands in order: ``einsum("ij,j->i", A, x)``. Tensors may be numpy,
    scipy.sparse or pydata/sparse arrays, or arrays of :mod:`compiler.array` (an expression computed first:
    ``compiler.array.einsum`` fuses it instead). Give the output too (as a tensor or a format, named
    ``out`` in numpy's call) to choose its format. Given no strategy, the lattice's kernel computes
    it, or the looplets' where the lattice refuses the statement.

    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> einsum("ij,j->i", A, np.array([1.0, 10.0])).to_numpy()
    array([20.,  3.])
    >>> einsum("y[i] = A[i, j] * x[j]", "looplets", A=A, x=np.array([1.0, 10.0])).to_numpy()
    array([20.,  3.])
    """
    made: list = []   # (Tensors made now over scipy or pydata arrays: checked as they were made)
    if isinstance(expr, str) and is_subscripts(expr):
        if not operands:
            raise UsageError(f"einsum {expr!r}: numpy's subscripts take their operands in order, as "
                             f"einsum('ij,j->i', A, x); index notation names them, as "
                             f"einsum('y[i] = A[i, j] * x[j]', A=A, x=x)")
        ordered = dict(zip(operand_names(len(operands)), operands))
        named, made = _taken(ordered)
        dtypes = {k: _operand_dtype(x) for k, x in named.items()}
        known = None not in dtypes.values()
        expr = from_subscripts(expr, tuple(np.ndim(x) if not hasattr(x, "ndim") else x.ndim for x in operands),
                               tuple(dtypes.values()) if known else None)
        if "out" not in tensors and known:
            out = _numpy_einsum_output(parse(expr), named, dtypes)
            if out is not None:
                tensors = {**tensors, "out": out}
        tensors = {**named, **tensors}
    elif operands:
        # (index notation's second positional argument is the strategy)
        if len(operands) > 1 or not (operands[0] is None or isinstance(operands[0], str)) or strategy is not None:
            raise UsageError("einsum: index notation names its tensors (einsum('y[i] = A[i, j] * x[j]', A=A, x=x)); "
                             "numpy's subscripts take them in order (einsum('ij,j->i', A, x))")
        strategy = operands[0]
    tensors, more = _taken(tensors)
    # (a scipy or pydata array made a Tensor over its arrays just now was checked as it was made: the call does not
    # read them again; one pass over a SpMV's matrix of a million entries less, half a millisecond)
    made += more
    kernel = lower(expr, strategy, checked=checked, functions=functions, **tensors)
    with checked_now(made):
        for v in tensors.values():
            if isinstance(v, (str, Format, Level)):   # (formats choose the kernel; the call takes the values)
                return kernel(**{k: v for k, v in tensors.items() if not isinstance(v, (str, Format, Level))})
        return kernel(**tensors)


def _taken(tensors: dict) -> tuple[dict, list]:
    """``tensors`` with each scipy or pydata array a Tensor (:func:`~compiler.interop.to_tensor`), and the
    Tensors made now, which were checked as they were made. One taken before is not checked here: the
    kernel's call checks its arrays again, and its values only where the kernel's C depends on them
    (:meth:`~compiler.runtime.Kernel.depends_on_values`); the kernel lowered for the facts its values held
    when last looked at is one the call serves or hands over to the kernel for what they hold now."""
    taken, anew = dict(tensors), []
    for k, v in tensors.items():
        if v.__class__ is Tensor or v.__class__ is np.ndarray or v.__class__ is str:
            continue
        if is_foreign(v):
            t = kept(v, k)
            if t is None:
                t = to_tensor(v, k)
                anew.append(t)
            taken[k] = t
        elif hasattr(v, "operand_tensor"):   # (an array of compiler.array: its tensor, or the expression computed)
            taken[k] = v.operand_tensor()
    return taken, anew


def _operand_dtype(x):
    """The dtype of an operand of numpy's einsum call (an array, a Tensor, a scalar), or None (a format,
    which gives no values)."""
    if isinstance(x, (str, Format, Level)):
        return None
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


def _numpy_einsum_output(program: Assign, operands: dict, dtypes: dict):
    """The fresh output of numpy's einsum ``program`` where its dtype is not the notation's: numpy's
    einsum sums in its operands' dtype (int32's sum wraps at 2^31, as numpy's), where ``=`` sums
    integers narrower than 64 bits in 64 (as ``np.sum``). The sum is written into a dense output of
    numpy's dtype, which wraps it as numpy's does; its fill the oracle's, cast. None where they agree."""
    try:
        want = result_dtype(*dtypes.values())
        if expr_dtype(program.rhs, lambda a: dtypes[a.tensor]) == want:
            return None
    except DTypeError:   # (operands no operator takes together: lower() says so, naming the statement)
        return None
    fills = {k: typed_scalar(x.fill if isinstance(x, Tensor) else 0, dtypes[k]) for k, x in operands.items()}
    extents = {i: np.shape(operands[a.tensor])[k] for a in accesses(program.rhs) for k, i in enumerate(a.indices)}
    with np.errstate(all="ignore"):
        fill = typed_scalar(expression_fill(program.rhs, fills, extents), want)
    return parse_format("dense", ndim=len(program.lhs.indices), fill=fill.item(), dtype=want.name)


def clear_cache() -> None:
    """Forget lowered kernels (compiled libraries stay in the backend's caches), and the IR the cleanup
    passes' memos keep alive (:func:`compiler.imperative.traverse.forget_memos`), and what other
    modules keep of lowered kernels (:func:`forget_with_cache`)."""
    _CACHE.clear()
    _PROBE.clear()
    forget_memos()
    for forget in _FORGETTERS:
        forget()


#: what :func:`clear_cache` calls too
_FORGETTERS: list = []


def forget_with_cache(forget: Callable[[], None]) -> None:
    """Have :func:`clear_cache` call ``forget`` too: for a module that keeps kernels lower() made (the array
    front end's choices, :mod:`compiler.array.attempts`), which would outlive the cache otherwise."""
    _FORGETTERS.append(forget)
