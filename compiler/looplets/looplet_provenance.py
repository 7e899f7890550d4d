"""What the looplet lowering records about itself: the text of a trace step and where its loops,
accesses and looplets are printed in it, the tooltip and origin of each looplet lowering's tagged
code (the explorer maps C lines back to them), and the limit on how many looplet lowerings one
program may take.

>>> print(step_text(["a = 1", "b = 2"]))
a = 1
b = 2
"""

from __future__ import annotations

from ..imperative.ir import Origin, Var
from ..imperative.traverse import walk as ir_walk
from ..trace import Later, LaterText
from .fibers import SubFiber
from .looplet_access import style_of
from .looplets import Looplet, unshift
from .program import Access, Index, Loop, Node, show_spans, walk


#: how many looplet lowerings one program may take (each ~0.1 to 0.2 KB of C: the limit stops at a
#: few MB, which GCC takes minutes over, instead of running on)
MAX_LOOPLETS = 20_000


def too_many_looplets(limit: int, i, operands=()) -> str:
    """Why a program was stopped at ``limit`` looplet lowerings, the last of them over ``i``, where it
    read ``operands`` (the program's tensors).

    >>> from compiler.looplets.program import Index
    >>> print(too_many_looplets(100, Index("j"), ["A", "B"]))  # doctest: +NORMALIZE_WHITESPACE
    the looplets strategy stopped after 100 looplet lowerings (the last over j, reading A, B): each
    loop lowers every case of its sparse operands' regions (present here, absent there) separately,
    and the cases multiply with each operand a loop coiterates. Lower index notation with
    strategy='lattice' (its lattices merge them), compute the expression in steps, or give
    options={'max_looplets': N} for more
    """
    reading = f", reading {', '.join(operands)}" if operands else ""
    return (f"the looplets strategy stopped after {limit} looplet lowerings (the last over {i.name}{reading}): "
            f"each loop lowers every case of its sparse operands' regions (present here, absent there) separately, "
            f"and the cases multiply with each operand a loop coiterates. Lower index notation with "
            f"strategy='lattice' (its lattices merge them), compute the expression in steps, or give "
            f"options={{'max_looplets': N}} for more")


def step_text(x):
    """A trace step's text of a program node or a list of statements (None stays None)."""
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return "\n".join(str(s) for s in x)
    return str(x)


def printed(x) -> tuple[str | None, dict[str, list[list]]]:
    """:func:`step_text` of ``x`` and what the printer put where in it: ``{line: [[start, end,
    about, role]]}`` (lines 1-based, as strings; see :func:`part_about`), recorded in a step's
    ``data`` so the explorer marks a text's parts where they are instead of finding them by pattern
    (a matrix named ``Run`` reads as a Run looplet to one).

    >>> from compiler.looplets.program import Assign, TensorRef
    >>> i = Index("i")
    >>> text, spans = printed([Loop(i, None, Assign(Access(TensorRef("y"), (i,), "update"), None,
    ...                                             Access(TensorRef("Run"), (i,))))])
    >>> print(text)
    for i = _
      y[i] = Run[i]
    >>> spans["2"]
    [[2, 6, {'tensor': 'y', 'indices': ['i'], 'mode': 'update'}, 'access'], [9, 15, {'tensor': 'Run', 'indices': ['i'], 'mode': 'read'}, 'access']]
    """
    if x is None:
        return None, {}
    items = x if isinstance(x, (list, tuple)) else [x]
    if not all(isinstance(item, Node) for item in items):   # (imperative code or a text: no parts)
        return step_text(x), {}
    texts, spans, n = [], {}, 1
    for item in items:
        text, where = show_spans(item)
        for k, parts in where.items():
            spans[str(n + k - 1)] = [[a, b, *part_about(node)] for a, b, node in parts]
        texts.append(text)
        n += text.count("\n") + 1
    return "\n".join(texts), spans


def printed_step(before=None, after=None, data=None) -> dict:
    """The ``before``, ``after`` and ``data`` of a trace step showing programs ``before`` and
    ``after``: their texts (:func:`step_text`), and ``data`` (a mapping, or None) with where their
    parts are printed (``before_spans``, ``after_spans``: see :func:`printed`) where they have any.
    A program's text and its spans are made when first read (most traces never are; program nodes
    are immutable, and a list is copied as it may grow later), the spans kept only if printed as
    the text was; the step holds the program until then, as steps given other IR do.

    >>> from compiler.trace import Trace
    >>> from compiler.looplets.program import TensorRef
    >>> step = Trace().record("unfurl", **printed_step(after=Access(TensorRef("A"), (Index("i"),)), data={"index": "i"}))
    >>> step.after_text, step.data
    ('A[i]', {'index': 'i', 'after_spans': {'1': [[0, 4, {'tensor': 'A', 'indices': ['i'], 'mode': 'read'}, 'access']]}})
    """
    sides = [tuple(x) if isinstance(x, list) else x for x in (before, after)]
    sides = [x if isinstance(x, Node) or isinstance(x, tuple) and x and all(isinstance(n, Node) for n in x) else None
             for x in sides]
    # (imperative code and texts have no parts: printed now, as they may change)
    texts = [step_text(x) if program is None else Later(lambda program=program: step_text(program))
             for x, program in zip((before, after), sides)]
    if sides == [None, None]:
        return {"before": texts[0], "after": texts[1], "data": data}

    def made():
        spans = {}
        for key, x in zip(("before_spans", "after_spans"), sides):
            text, where = printed(x)
            if where and text == step_text(x):
                spans[key] = where
        return {**(data or {}), **spans} if spans else data
    return {"before": texts[0], "after": texts[1], "data": Later(made)}


def part_about(node) -> tuple[dict, str]:
    """What a printed part is, in the terms the explorer links by, and its role: a loop's index
    (``loop``); a looplet's style, the index it waits on and the tensor it reads (``looplet``); an
    access's tensor, its mode and the indices it is at, its fiber's position's among them
    (``access``: ``y.lvl1[i][]`` is y's fiber at i)."""
    if isinstance(node, Loop):
        return {"index": node.idx.name}, "loop"
    tns = node.tns
    # (a shift pushed down onto a fiber still to be unfurled is read as that fiber's access)
    if isinstance(tns, Looplet) and isinstance(unshift(tns), Looplet):
        first = next((n.name for n in walk(node.idxs[0]) if isinstance(n, Index)), None) if node.idxs else None
        return {"style": style_of(tns), "index": first, "tensor": node.source}, "looplet"
    indices = [n.name for i in node.idxs for n in walk(i) if isinstance(n, Index)]
    name = node.source or getattr(tns, "name", None)
    if isinstance(tns, SubFiber):
        indices = [v.name for v in ir_walk(tns.pos) if isinstance(v, Var)] + indices
        name = name or tns.tensor.name
    return {"tensor": name, "indices": list(dict.fromkeys(indices)), "mode": node.mode}, "access"


def looplet_what(style: str, i, body) -> LaterText:
    """What a looplet lowering's code stands for, in the user's terms (the explorer's tooltip):
    the rule, the index, each looplet with the tensor it reads and the statement they are in,
    e.g. ``Stepper on j: Stepper of A, Lookup of x in y.lvl1[i][] += Stepper[j] * ...``. Made
    when the explorer first reads it (it prints ``body``, which cannot change: program nodes are
    immutable), as most lowerings' tooltips never are.

    >>> from compiler.looplets.program import Assign, TensorRef
    >>> i = Index("i")
    >>> what = looplet_what("Run", i, Assign(Access(TensorRef("y"), (i,), "update"), None, Access(TensorRef("x"), (i,))))
    >>> str(what)
    'Run on i:  in y[i] = x[i]'
    """
    return LaterText(Later(lambda: _what_text(style, i, body)))


def _what_text(style: str, i, body) -> str:
    parts = []
    for n in walk(body):
        if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet):
            head = type(unshift(n.tns)).__name__
            parts.append(f"{head} of {n.source}" if n.source else head)
    text = " ".join(step_text(body).split())
    text = text if len(text) <= 100 else text[:99] + "…"
    return f"{style} on {i.name}: {', '.join(dict.fromkeys(parts))} in {text}"


def looplet_origin(style: str, i, body):
    """The :class:`~compiler.imperative.ir.Origin` of a looplet lowering: its style, its index
    and the tensors whose looplet on ``i`` that rule lowers (``Stepper`` of ``A``, not ``x``'s
    ``Lookup``)."""
    operands = [n.source for n in walk(body)
                if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet)
                and n.source and style_of(n.tns) == style]
    return Origin("looplet", i.name, tuple(dict.fromkeys(operands)), style)
