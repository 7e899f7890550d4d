"""Re-lowering for the explorer's format pickers and schedule editor (no widgets here).

:func:`parse_schedule` turns the schedule editor's text into the list form
``compiler.schedule.as_schedule`` accepts (both strategies' schedule); :func:`rebuild_for` makes the
``rebuild(formats, schedule) -> Trace`` callable the Explorer calls when a picker or the
schedule changes, lowering with ``compiler.lower`` into a fresh trace each time.

>>> parse_schedule("reorder(i, k, j); precompute(j, w)\\nparallelize(i)")
[('reorder', 'i', 'k', 'j'), ('precompute', 'j', 'w'), ('parallelize', 'i')]
>>> parse_schedule("split(i, i0, i1, 32)")
[('split', 'i', 'i0', 'i1', 32)]
>>> parse_schedule("Schedule().reorder(i, j).parallelize(i)  # chained")
[('reorder', 'i', 'j'), ('parallelize', 'i')]
>>> parse_schedule("precompute((i, j), w, C[i, j] + D[i, j]); split(i, i0, i1, 8, direction='up')")
[('precompute', ('i', 'j'), 'w', 'C[i, j] + D[i, j]'), ('split', 'i', 'i0', 'i1', 8, 'up')]
>>> parse_schedule("privatize(bins, copies=2, workspace=False)")
[('privatize', 'bins', 2, False)]
>>> parse_schedule("  # nothing\\n")
[]
>>> parse_schedule("reorder i j")
Traceback (most recent call last):
...
compiler.errors.StrategyError: schedule line 1: cannot read 'reorder i j'; write a command as name(arg, ...), e.g. reorder(i, k, j)
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any, Callable, Mapping

from compiler.errors import StrategyError
from compiler.format import Format, parse_format
from compiler.levels.level import Level
from compiler.trace import Trace

__all__ = ["format_code", "parse_schedule", "program_ndims", "rebuild_for", "schedule_code"]

def _arg(node: ast.expr) -> Any:
    """A command argument: an index or workspace name, an integer, a string, a tuple of
    those, or index notation (``C[i, j] + D[i, j]``, kept as its text)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, str, bool)):
        return node.value   # (privatize's workspace=False a bool, not the text 'False')
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -_arg(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_arg(e) for e in node.elts)
    return ast.unparse(node)


def _command(part: str, lineno: int) -> tuple | None:
    """``name(args...)`` as ``(name, *args)`` (keywords go to their positions), or None for
    a bare ``Schedule()``."""
    from compiler.schedule import Schedule

    def fail(why=""):
        raise StrategyError(f"schedule line {lineno}: cannot read {part!r}{why}; write a command as "
                            f"name(arg, ...), e.g. reorder(i, k, j)")
    try:
        call = ast.parse(part.lstrip(". "), mode="eval").body
    except SyntaxError:
        fail()
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        fail()
    name = call.func.id
    args = [_arg(a) for a in call.args]
    if call.keywords:
        method = getattr(Schedule, name, None)
        params = list(inspect.signature(method).parameters.values())[1:] if callable(method) else []
        names = [p.name for p in params]
        given = len(args)
        for kw in call.keywords:
            if kw.arg not in names:
                fail(f" ({name} has no argument {kw.arg})" if names else "")
            at = names.index(kw.arg)
            args += [None] * (at + 1 - len(args))
            args[at] = _arg(kw.value)
        for at in range(given, len(args)):   # skipped arguments take their defaults
            if args[at] is None:
                if params[at].default is inspect.Parameter.empty:
                    fail(f" (an argument before {call.keywords[0].arg} is missing)")
                args[at] = params[at].default
    if name == "Schedule" and not args:
        return None  # pasted Python: Schedule().reorder(...)
    return (name, *args)


def parse_schedule(text: str) -> list[tuple]:
    """The commands in ``text`` (one per line or separated by ``;``; ``#`` starts a comment)
    as ``[(name, *args)]``; unreadable text raises :class:`~compiler.errors.StrategyError`."""
    out: list[tuple] = []
    for lineno, line in enumerate((text or "").splitlines(), 1):
        line = line.split("#", 1)[0]
        line = re.sub(r"\)\s*\.\s*(?=[A-Za-z_])", ");", line)  # chained calls a(..).b(..)
        for part in line.split(";"):
            part = part.strip()
            if part:
                command = _command(part, lineno)
                if command is not None:
                    out.append(command)
    return out


def schedule_code(text: str) -> str:
    """The schedule text as Python for ``options={"schedule": ...}``.

    >>> schedule_code("reorder(i, k, j)")
    "[('reorder', 'i', 'k', 'j')]"
    """
    return repr(parse_schedule(text))


def program_ndims(program) -> dict[str, int]:
    """The order of every tensor a program of index notation accesses (``{}`` for others)."""
    from compiler.notation import Assign, accesses, parse
    try:
        parsed = parse(program) if isinstance(program, str) else program
    except Exception:
        return {}
    if not isinstance(parsed, Assign):
        return {}
    out: dict[str, int] = {}
    for a in [parsed.lhs, *accesses(parsed)]:
        out.setdefault(a.tensor, len(a.indices))
    return out


def format_code(fmt: Format) -> str:
    """Python that rebuilds ``fmt`` (``Format(<level spec>, mode_order)``).

    >>> from compiler.format import csc
    >>> format_code(csc())
    'Format(Dense(SparseList(Element(0.0))), (1, 0))'
    """
    root = repr(fmt.root).replace(", None)", ")")
    order = fmt.mode_order
    return f"Format({root})" if order == tuple(range(len(order))) else f"Format({root}, {order})"


def rebuild_for(program, strategy: str = "lattice", *, checked: bool = False,
                options: Mapping[str, Any] | None = None, **fixed) -> Callable[[dict, str], Trace]:
    """``rebuild(formats, schedule) -> Trace``: lower ``program`` by ``strategy`` for the given
    formats (``{tensor: Format | shorthand}``, over ``fixed`` ones) and schedule text.

    Lowering errors keep the partial trace on the exception (``e.trace``), so the explorer
    stops at the failing step.
    """
    import compiler
    from compiler.lowering import loop_shapes

    base_options = dict(options or {})
    shapes = loop_shapes(program, fixed)
    if shapes and "shapes" not in base_options:
        # (a loop program's output indexed by a computed coordinate is sized by the tensor fixed for
        # it, which a picker's format given for it would otherwise hide)
        base_options["shapes"] = shapes

    def rebuild(formats: Mapping[str, Any], schedule: str = "") -> Trace:
        trace = Trace()
        opts = dict(base_options)
        try:
            commands = parse_schedule(schedule)
        except StrategyError as e:
            e.trace = trace
            raise
        if commands:
            opts["schedule"] = commands
        tensors = {**fixed, **dict(formats)}
        compiler.lower(program, strategy, checked=checked, trace=trace, options=opts or None, **tensors)
        return trace

    rebuild.__qualname__ = "rebuild"
    rebuild.program, rebuild.strategy = program, strategy  # for copy-as-code, which also needs
    rebuild.checked, rebuild.options, rebuild.fixed = checked, base_options, fixed  # the rest
    return rebuild


def initial_format(value: Any, ndim: int | None) -> Format:
    """A Format for a picker's start: from a Tensor, a shorthand, a level spec or a Format."""
    fmt = getattr(value, "format", None)
    if isinstance(fmt, Format):
        return fmt
    if isinstance(value, (str, Format, Level)):
        return parse_format(value, ndim=ndim)
    shape = getattr(value, "shape", None)  # a numpy array (or scalar): dense, of its dtype
    dtype = getattr(value, "dtype", None)
    return parse_format("dense", ndim=len(shape) if shape is not None else ndim,
                        **({"dtype": dtype.name} if dtype is not None else {}))
