"""The outputs of a loop program: every tensor it writes, in the order its parameters name them.

Finch's programs have several left-hand sides (a BFS step writes the next frontier and the
parents; Bellman-Ford the distances and the changed set): each written tensor is an output,
assembled in its own format from its own fill, and the kernel returns them all (a
:class:`compiler.outputs.Outputs` named tuple, in the order of the program's parameters;
a program with one output returns it alone). What is refused here, naming the tensor and the
line: an output declared (``y[...] = v``) but never written, and ``output=`` naming one of
several outputs.

>>> from compiler.looplets.language import loop_program
>>> @loop_program
... def two(y, z, x):
...     for i in _:
...         y[i] = x[i] * 2
...     z[...] = 0.0
>>> from compiler.looplets import ProgramError, compile_program
>>> try:
...     compile_program(two, y="dense", z="dense", x="dense")
... except ProgramError as e:
...     print(str(e).splitlines()[0])
line 5 of two: output z is declared (reset to 0.0) but never written: write it in the program, or drop it from the parameters
"""

from __future__ import annotations

from .errors import ProgramError
from .program import Access, Declare, TensorRef, show_expr, walk


def output_names(prog, infos) -> list:
    """The tensors ``prog`` writes, in the order of its parameters."""
    return [t for t in prog.tensors if infos[t].role == "output"]


def check_outputs(prog, body, infos, output=None) -> list:
    """The outputs of ``prog`` (its normalized ``body``), after refusing a declared output the
    program never writes and an ``output=`` that is not the program's one output."""
    outs = output_names(prog, infos)
    written = {n.tns.name for n in walk(body) if isinstance(n, Access) and n.mode == "update"
               and isinstance(n.tns, TensorRef)}
    for t in outs:
        if t in written:
            continue
        decl = next((n for n in walk(body) if isinstance(n, Declare) and n.tns.name == t and not n.implicit), None)
        init = f" (reset to {show_expr(decl.init)})" if decl is not None else ""
        raise ProgramError(f"output {t} is declared{init} but never written: write it in the program, or drop it "
                           f"from the parameters", decl.line if decl is not None else 0)
    if not outs:
        raise ProgramError("the program writes no tensor: a kernel needs an output (a tensor the program assigns)")
    if output is not None and outs != [output]:
        if output not in outs:
            raise ProgramError(f"output={output!r}: the program writes {', '.join(outs)}, not {output}")
        raise ProgramError(f"output={output!r}: the program writes {', '.join(outs)}, and its kernel returns "
                           f"them all (a named tuple); call it without output=")
    return outs
