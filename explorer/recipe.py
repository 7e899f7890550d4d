"""The Python that recreates a session ("copy as code"), in a few readable lines.

A kernel knows the program, the strategy and the formats it was lowered for, so the recipe of
``explore(kernel)`` is the ``compiler.lower`` call itself, not the trace's JSON (58 KB for the
tour's SpMV). A bare trace carries no such record: its recipe saves it and reopens the file.

>>> import compiler
>>> print(kernel_recipe(compiler.lower("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense")))
import compiler
from compiler.format import Format
from compiler.levels import *
from explorer import explore
<BLANKLINE>
kernel = compiler.lower('y[i] = sum[j](A[i, j] * x[j])', 'lattice',
                        A=Format(Dense(SparseList(Element(0.0)))),
                        x=Format(Dense(Element(0.0))))
session = explore(kernel)
<BLANKLINE>
"""

from __future__ import annotations

from typing import Any

from .rebuild import format_code

__all__ = ["is_kernel", "kernel_recipe", "trace_recipe"]


def is_kernel(obj: Any) -> bool:
    """Whether ``obj`` is a compiled kernel (``compiler.lower``'s result): it has a trace, a
    program, a strategy and the formats it was lowered for."""
    return all(hasattr(obj, a) for a in ("trace", "program", "strategy", "formats")) and not isinstance(obj, type)


def kernel_recipe(kernel) -> str:
    """The ``compiler.lower`` call that made ``kernel``, opened in the explorer.

    The output's format is given only when the call gave it (a fresh output's format is the
    strategy's choice). Options such as ``checked=`` or a schedule leave no record on a kernel:
    a recipe from :meth:`Explorer.for_program` (which knows them) carries them instead.
    """
    from compiler.notation import Assign

    program = kernel.program
    if not isinstance(program, (str, Assign)):   # a loop program's text is no lower() argument
        return trace_recipe(len(kernel.trace)).replace(
            "# (explore(kernel) keeps one)", f"# (a loop program's kernel: lower your program again, "
            f"strategy={kernel.strategy!r})")
    output = getattr(kernel, "output", None)
    fresh = getattr(kernel, "fresh_output", False)
    args = [f"{name}={format_code(fmt)}" for name, fmt in kernel.formats.items()
            if not (fresh and name == output)]
    call = f"kernel = compiler.lower({str(program)!r}, {kernel.strategy!r}"
    indent = " " * len("kernel = compiler.lower(")
    lines = [call + ("," if args else ")")]
    for k, a in enumerate(args):
        lines.append(indent + a + ("," if k + 1 < len(args) else ")"))
    return ("import compiler\nfrom compiler.format import Format\nfrom compiler.levels import *\n"
            "from explorer import explore\n\n" + "\n".join(lines) + "\nsession = explore(kernel)\n")


def trace_recipe(steps: int) -> str:
    """The recipe of a bare trace of ``steps`` steps: save it, reopen the file."""
    return ("from explorer import explore\n"
            f"# this trace ({steps} steps) has no record of the lower() call that made it\n"
            "# (explore(kernel) keeps one); save it once with\n"
            "#   open('trace.json', 'w').write(trace.to_json())\n"
            "session = explore('trace.json')\n")
