"""What a step's "diff" and "C" panes show, honestly.

A stage's input and output are not always one representation: ``lattice`` turns index
notation into a lattice printout, ``emit-c`` turns the imperative IR into C. A unified diff
across representations (index notation against a lattice, IR against C) says nothing, so
:func:`diff_view` compares a step's output with the latest earlier output of the *same*
representation, or, when there is none, shows the input the step translated and says so.
:func:`c_view` says which step emitted the C shown, and :func:`c_opening_line` where its pane
opens (not at the ``#include``s, far above the loops).

>>> from compiler import Trace
>>> from explorer.session import explore
>>> t = Trace()
>>> _ = t.record("parse", before="y[i] = A[i]", after="y[i] = A[i]")
>>> _ = t.record("concretize", before="y[i] = A[i]", after="forall i:\\n  y[i] = A[i]")
>>> _ = t.record("lattice", before="forall i:\\n  y[i] = A[i]", after="lattice at i: [A] P")
>>> s = explore(t)
>>> diff_view(s, 1).title
'diff: what concretize changed'
>>> v = diff_view(s, 2)
>>> v.kind, v.title
('input', 'input of lattice, which made a lattice')
"""

from __future__ import annotations

from dataclasses import dataclass

from .provenance import program_marks
from .session import unified_diff

__all__ = ["CView", "DiffView", "c_opening_line", "c_view", "diff_view", "representations"]

NOTATION, LOOP, LATTICE, CFIR, IR, C = ("index notation", "loop program", "lattice", "CFIR",
                                        "imperative IR", "C")
ARRAY, KERNEL, CIN = "array expression", "kernel of its own", "CIN with sequences"
REFUSAL = "refusal"   # (a retry step: the statement a strategy refused, nothing made of it)

#: (input, output) representation of a stage, by exact stage name first, then by family.
#: A stage not listed keeps its representation (its input and output are diffed as before).
_BY_STAGE = {
    "lower": (CFIR, IR),            # the lattice strategy's CFIR to IR
    "lattice": (NOTATION, LATTICE),
    "cfir": (NOTATION, CFIR),
    "emit-c": (IR, C),
    "program": (NOTATION, LOOP),
    "imperative": (LOOP, IR),
    # the array language and shape operators (compiler.array, BURRITO's sequence layer)
    "array": (ARRAY, NOTATION),
    "materialize": (ARRAY, KERNEL),
    "retry": (NOTATION, REFUSAL),
    "shape-operators": (NOTATION, LOOP),
    "seq-derive": (NOTATION, CIN),
}
#: Representations in which a later step's output is a new version of an earlier one's.
_EVOLVING = (NOTATION, LOOP, CFIR, IR, C)
_BY_FAMILY = {
    "lower": (LOOP, IR),            # a looplet lowered: a loop-program fragment to IR
}


def representations(stage: str) -> tuple[str, str] | None:
    """``(input, output)`` representations of ``stage``; ``None`` when both are the same.

    >>> representations("emit-c"), representations("lower:Stepper"), representations("simplify")
    (('imperative IR', 'C'), ('loop program', 'imperative IR'), None)
    >>> representations("array"), representations("seq-derive")
    (('array expression', 'index notation'), ('index notation', 'CIN with sequences'))
    >>> representations("retry")    # (the refused statement; the next attempt is another step)
    ('index notation', 'refusal')
    """
    return _BY_STAGE.get(stage) or _BY_FAMILY.get(stage.split(":", 1)[0])


@dataclass(frozen=True)
class DiffView:
    """The diff pane of one step: ``kind`` is ``"diff"`` (``text`` is a unified diff) or
    ``"input"`` (``text`` is the program the step translated); ``title`` says which."""

    kind: str
    title: str
    text: str
    against: int | None = None   # the step diffed against (None: the step's own input)


def diff_view(session, i: int, context: int = 3) -> DiffView:
    """The diff pane of step ``i`` of ``session`` (see the module docstring)."""
    step = session.steps[i]
    reps = representations(step.stage)
    after = session.program_text(i)
    if reps is None:
        view = session.step(i)
        return DiffView("diff", f"diff: what {step.stage} changed",
                        unified_diff(view.previous_program, after, f"before {step.stage}",
                                     f"after {step.stage}", context))
    # the latest earlier step whose output is the whole program in this step's representation
    # (a looplet's IR fragment is no whole program; two lattices are of two indices)
    whole = ":" not in step.stage and reps[1] in _EVOLVING
    for j in range(i - 1, -1, -1):
        other = session.steps[j]
        out = (representations(other.stage) or (None, None))[1]
        if whole and out == reps[1] and ":" not in other.stage and other.after_text:
            return DiffView("diff", f"diff from step {j} ({other.stage}), the last {reps[1]}",
                            unified_diff(other.after_text, after, f"step {j} ({other.stage})",
                                         f"step {i} ({step.stage})", context), against=j)
    return DiffView("input", f"input of {step.stage}, which made {_article(reps[1])}",
                    step.before_text or (session.program_text(i - 1) if i > 0 else ""))


def _article(what: str) -> str:
    """``"a lattice"``, ``"an imperative IR"``, ``"C"`` (a mass noun)."""
    if what in (C, CFIR):
        return what
    return ("an " if what[0] in "aeiou" else "a ") + what


@dataclass(frozen=True)
class CView:
    """The C pane of one step: ``emitted_at`` is the step that emitted the C shown (None: no
    C yet), ``title`` says whether it is this step's, an earlier step's or the final kernel's."""

    title: str
    text: str
    emitted_at: int | None


def c_view(session, i: int) -> CView:
    """Which C step ``i`` shows: its own, else the latest emitted before it, else the final
    kernel's (emitted later, and said so).

    >>> from compiler import Trace, Artifact
    >>> from explorer.session import explore
    >>> t = Trace()
    >>> _ = t.record("parse", after="y[i] = A[i]")
    >>> _ = t.record("emit-c", after="int k;", artifacts=[Artifact("c", "k", "int k;")])
    >>> c_view(explore(t), 0).title
    'C of the final kernel, emitted later, at step 1 (emit-c)'
    """
    found = [(j, a) for j, a in session.artifacts("c")]
    upto = [(j, a) for j, a in found if j <= i]
    if upto:
        j, art = upto[-1]
        title = (f"C emitted at this step ({session.steps[j].stage})" if j == i
                 else f"C as it stands at this step: emitted at step {j} ({session.steps[j].stage})")
        return CView(title, art.text, j)
    if found:
        j, art = found[-1]
        return CView(f"C of the final kernel, emitted later, at step {j} ({session.steps[j].stage})",
                     art.text, j)
    return CView("C", "", None)


def c_opening_line(session, i: int) -> int | None:
    """The C line step ``i``'s C pane opens at: the first C line of the tags the step shows (the
    looplets it lowers, else the tagged parts of its program and the nodes of its drawings),
    else the first tagged line of the kernel (inside the kernel's function, below the
    ``#include``s and helpers); ``None`` without provenance.

    >>> from compiler import Trace, Artifact
    >>> from explorer.session import explore
    >>> t = Trace()
    >>> _ = t.record("lattice", artifacts=[Artifact("lattice", "j", "p0", dot="digraph { p0 }",
    ...                                             data={"node_tags": {"p0": ["lattice:j:B"]}})])
    >>> c = "#include <x.h>\\nvoid k(void) {\\n  a();\\n  b();\\n}"
    >>> _ = t.record("emit-c", after=c, artifacts=[Artifact("c", "k", c, data={"provenance": {
    ...     "lattice:j:A": [3], "lattice:j:B": [4]}})])
    >>> c_opening_line(explore(t), 0), c_opening_line(explore(t), 1)
    (4, 3)
    """
    prov = session.provenance()
    if not prov:
        return None
    tags = prov.lowered_at(i)
    if not tags:
        tags = [t for m in program_marks(session.program_text(i), prov, i) for t in m.tags]
        for a in session.steps[i].artifacts:
            if a.kind != "c" and a.dot:
                tags += [t for ts in ((a.data or {}).get("node_tags") or {}).values() for t in ts]
    lines = [n for t in tags for n in prov.get(t, ())] or [n for ls in prov.values() for n in ls]
    return min(lines) if lines else None
