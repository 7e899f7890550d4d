"""``python -m explorer``: render saved traces, print one artifact, lower an expression.

::

    python -m explorer trace saved.json --html trace.html     # one self-contained page
    python -m explorer trace saved.json --text                # every step as text
    python -m explorer show saved.json --step 3 --artifact lattice --dot
    python -m explorer lower "y[i] = A[i, j] * x[j]" --format A=csr --format x=dense \\
        [--strategy lattice|looplets] [--c | --json | --dot KIND | --html out.html] \\
        [--mtx A=matrix.mtx] [--time]

``lower`` needs ``compiler.lower``; until a lowering strategy is available it says so and exits
with status 2. Tensors are passed to ``compiler.lower`` as format names, or, when Matrix Market
inputs are given with ``--mtx``, as :class:`compiler.Tensor` objects in the requested formats
(with random dense operands sized to match), which ``--time`` then runs the kernel on.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from compiler.errors import SparsescopeError

from .export import export_html, export_text
from .session import explore

__all__ = ["main", "parse_assignments"]

UNAVAILABLE = ("the lowering strategies are not available yet: this build of sparsescope has no "
               "compiler.lower (the lattice and looplet compilers are still being written). "
               "Render a saved trace with 'python -m explorer trace FILE.json' meanwhile.")


class CLIError(Exception):
    """A problem with the command line's input, reported without a traceback."""


def parse_assignments(items: Sequence[str] | None, what: str) -> dict[str, str]:
    """``["A=csr", "x=dense"]`` -> ``{"A": "csr", "x": "dense"}``.

    >>> parse_assignments(["A=csr", "x = dense"], "--format")
    {'A': 'csr', 'x': 'dense'}
    >>> parse_assignments(["A"], "--format")
    Traceback (most recent call last):
    explorer.cli.CLIError: --format expects NAME=VALUE, got 'A'
    """
    out: dict[str, str] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise CLIError(f"{what} expects NAME=VALUE, got {item!r}")
        out[name.strip()] = value.strip()
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m explorer",
                                description="Explore sparsescope lowering traces.")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("trace", help="render a saved trace (JSON) as HTML or text")
    t.add_argument("file")
    g = t.add_mutually_exclusive_group()
    g.add_argument("--html", metavar="OUT", help="write one self-contained HTML page")
    g.add_argument("--text", action="store_true", help="print every step as text (the default)")

    s = sub.add_parser("show", help="print one step's program or one artifact")
    s.add_argument("file")
    s.add_argument("--step", type=int, default=-1, help="step index (negative counts back; default last)")
    s.add_argument("--artifact", metavar="KIND", help="artifact kind (c, lattice, looplet-nest, ...)")
    s.add_argument("--dot", action="store_true", help="print the artifact's DOT instead of its text")

    lo = sub.add_parser("lower", help="lower an index-notation expression")
    lo.add_argument("expr")
    lo.add_argument("--format", action="append", metavar="T=FMT", help="format of tensor T (repeatable)")
    lo.add_argument("--strategy", choices=["lattice", "looplets"], default="lattice")
    out = lo.add_mutually_exclusive_group()
    out.add_argument("--c", action="store_true", help="print the C source (the default)")
    out.add_argument("--json", action="store_true", help="print the trace as JSON")
    out.add_argument("--dot", metavar="KIND", help="print the last artifact of KIND as DOT")
    out.add_argument("--html", metavar="OUT", help="write the trace as one HTML page")
    lo.add_argument("--mtx", action="append", metavar="T=PATH", help="read tensor T from Matrix Market")
    lo.add_argument("--time", action="store_true", help="time the kernel against the dense reference")
    lo.add_argument("--repeats", type=int, default=7)
    lo.add_argument("--seed", type=int, default=0)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {"trace": _trace, "show": _show, "lower": _lower}[args.command](args)
    except CLIError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (OSError, ValueError, SparsescopeError, MemoryError, OverflowError) as e:
        # (a file that cannot be read, a tensor the compiler refuses, a matrix too large for memory)
        print(f"error: {e}", file=sys.stderr)
        return 2


def _trace(args) -> int:
    session = explore(args.file)
    if args.html:
        export_html(session, args.html)
        print(f"wrote {args.html} ({len(session)} steps)")
    else:
        print(export_text(session))
    return 1 if session.error else 0


def _show(args) -> int:
    session = explore(args.file)
    try:
        view = session.step(args.step)
    except IndexError as e:
        raise CLIError(str(e)) from None
    if args.artifact is None:
        if args.dot:
            raise CLIError("--dot needs --artifact KIND")
        print(view.program)
        return 0
    try:
        art = view.step.artifact(args.artifact)
    except KeyError as e:
        raise CLIError(f"step {view.index} ({view.stage}): {e.args[0]}") from None
    if args.dot:
        if not art.dot:
            raise CLIError(f"the {art.kind!r} artifact {art.name!r} of step {view.index} has no DOT drawing")
        print(art.dot)
    else:
        print(art.text)
    return 0


def _load_inputs(expr: str, formats: dict[str, str], mtx: dict[str, str], seed: int):
    """Tensors for ``lower``: Matrix Market inputs in their formats, random dense operands
    sized from them; ``None`` when no inputs were given (then formats are passed by name)."""
    if not mtx:
        return None
    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    import compiler
    from compiler.notation.ast import accesses

    program = compiler.parse(expr)
    tensors: dict = {}
    extents: dict[str, int] = {}
    for name, path in mtx.items():
        try:
            m = scipy.io.mmread(path)
        except (OSError, ValueError, OverflowError) as e:
            raise CLIError(f"cannot read Matrix Market file {path!r} for tensor {name}: {e}") from None
        try:
            # (straight from the file's coordinates into the format asked: a hypersparse matrix read
            # as dcsr never builds the row array csr would need)
            t = (compiler.Tensor.from_scipy(sp.coo_array(m), formats.get(name, "csr"), name=name)
                 if sp.issparse(m) else compiler.Tensor.from_numpy(np.asarray(m), formats.get(name, "csr"),
                                                                   name=name))
        except (compiler.SparsescopeError, MemoryError, ValueError) as e:
            hint = (f"; --format {name}=dcsr stores only the rows that have entries"
                    if isinstance(e, MemoryError) else "")
            raise CLIError(f"Matrix Market file {path!r} for tensor {name}: {e}{hint}") from None
        tensors[name] = t
    for acc in accesses(program.rhs):
        if acc.tensor in tensors:
            for idx, n in zip(acc.indices, tensors[acc.tensor].shape):
                extents.setdefault(idx.name, n)
    rng = np.random.default_rng(seed)
    for acc in accesses(program.rhs):
        if acc.tensor in tensors:
            continue
        missing = [i.name for i in acc.indices if i.name not in extents]
        if missing:
            raise CLIError(f"cannot size tensor {acc.tensor}: index {missing[0]} appears in no "
                           f"Matrix Market input (give {acc.tensor} with --mtx)")
        data = rng.random(tuple(extents[i.name] for i in acc.indices))
        fmt = formats.get(acc.tensor, "dense")
        tensors[acc.tensor] = compiler.Tensor.from_numpy(data, fmt, name=acc.tensor)
    return tensors


def _replay(trace, partial, exc):
    trace.steps.extend(partial.steps)
    raise exc


def _lower(args) -> int:
    import compiler

    lower = getattr(compiler, "lower", None)
    if not callable(lower):  # absent, or only the submodule compiler/lower.py
        lower = getattr(lower, "lower", None)
    if not callable(lower):
        print(f"error: {UNAVAILABLE}", file=sys.stderr)
        return 2
    formats = parse_assignments(args.format, "--format")
    mtx = parse_assignments(args.mtx, "--mtx")
    tensors = _load_inputs(args.expr, formats, mtx, args.seed)
    if args.time and tensors is None:
        raise CLIError("--time needs inputs: give the sparse operands with --mtx T=PATH")
    operands = tensors if tensors is not None else formats
    try:
        kernel = lower(args.expr, strategy=args.strategy, **operands)
    except Exception as e:  # noqa: BLE001 - report the compiler's message, not a traceback
        print(f"error: lowering failed ({args.strategy}): {type(e).__name__}: {e}", file=sys.stderr)
        partial = getattr(e, "trace", None)
        if args.html and partial is not None:
            session = explore(lambda t, err=e: _replay(t, partial, err))
            export_html(session, args.html, title=f"{args.expr} ({args.strategy}, failed)")
            print(f"wrote {args.html}: the trace up to the failure ({len(session)} steps)", file=sys.stderr)
        return 1
    trace = kernel.trace
    if args.json:
        print(trace.to_json(indent=1))
    elif args.dot:
        arts = [a for s in trace.steps for a in s.artifacts if a.kind == args.dot]
        if not arts:
            kinds = sorted({a.kind for s in trace.steps for a in s.artifacts})
            raise CLIError(f"the {args.strategy} trace has no {args.dot!r} artifact; it has {kinds}")
        if not arts[-1].dot:
            raise CLIError(f"the {args.dot!r} artifact {arts[-1].name!r} has no DOT drawing")
        print(arts[-1].dot)
    elif args.html:
        export_html(trace, args.html, title=f"{args.expr} ({args.strategy})")
        print(f"wrote {args.html} ({len(trace.steps)} steps)")
    else:
        print(kernel.c_source)
    if args.time:
        from .timing import compare

        from .baselines import scipy_baseline

        baselines = {"numpy (reference)": lambda: compiler.evaluate(args.expr, **tensors)[0]}
        scipy_call = scipy_baseline(args.expr, tensors)   # when scipy has the operation
        if scipy_call is not None:
            baselines = {scipy_call[0]: scipy_call[1], **baselines}
        result = compare(lambda: kernel(**tensors), baselines, repeats=args.repeats,
                         name=f"sparsescope ({args.strategy})", check=_agrees)
        print(result.table(), file=sys.stderr if not args.c and (args.json or args.dot) else sys.stdout)
    return 0


def _agrees(result, reference) -> bool:
    """Whether a kernel's result (a Tensor) equals a baseline's (an array or scipy matrix)."""
    import numpy as np
    import scipy.sparse as sp

    got = result.to_numpy() if hasattr(result, "to_numpy") else np.asarray(result)
    want = reference.toarray() if sp.issparse(reference) else np.asarray(reference)
    return got.shape == want.shape and bool(np.allclose(got, want, equal_nan=True))
