"""CFIR: the control-flow IR between lattices and imperative code (shape-operators.md §5, §7).

::

    cfir ::= forall i (while i <- seq with (located = i) switch)*
           | switch i (case seq: cfir)+ | cfir; cfir | a(I) = e | a(I) op= e | alloc t in cfir

A :class:`CForall` holds one :class:`CLoop` per loop of its lattice, run one
after the other with drop-out semantics: a loop runs while every iterator it
iterates has coordinates left (and, with the universe, while ``i`` is in range),
resolves ``i`` as the least coordinate, locates into Dense levels and runs the
first case of its switch whose iterators are all at ``i`` (most specific first).
:func:`~compiler.lattice.cfir_builder.build_cfir` builds it from concrete index notation and
the lattices; :func:`~compiler.lattice.cfir_interpreter.interpret_cfir` runs it on tensors (a test oracle for the lowering).

>>> from compiler.notation import parse
>>> from compiler.format import sparse_vector, dense
>>> from compiler.lattice.plan import Setup
>>> from compiler.lattice.cfir_builder import build_cfir
>>> prog = parse("a[i] = b[i] + c[i]")
>>> setup = Setup.create(prog, {"b": sparse_vector(), "c": sparse_vector(), "a": dense(1)})
>>> print(build_cfir(setup.statement, setup))
forall i:
  while i <- b0 ∩ c0:
    switch i:
      case b0 c0: a[i] = b[i] + c[i]
      case b0: a[i] = b[i]
      case c0: a[i] = c[i]
  while i <- b0:
    a[i] = b[i]
  while i <- c0:
    a[i] = c[i]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import serialize
from ..algebra import NOVALUE, Operator
from ..notation.ast import Access, Index, accesses, assign_spelling, cat_parts, parts_record, show_parts
from .diagonal import Found
from .iterators import ModeIterator, WorkspaceIterator
from .lattice import literal

INDENT = "  "

serialize.node(ModeIterator)
serialize.node(WorkspaceIterator)
serialize.node(Found)


# -- nodes ----------------------------------------------------------------------------------


class CNode:
    def __str__(self) -> str:
        return "\n".join(line for line, _ in _lines(self, 0))

    def pretty(self) -> str:
        return str(self)

    def printed_parts(self) -> tuple[str, dict]:
        """The text and where its forall heads and accesses are printed
        (:func:`~compiler.notation.ast.parts_record`: ``role`` ``loop`` or ``access``), printed in
        one walk with the text, so the explorer need not find them in it. Its loops' and cases'
        heads, which name lattice points, are recorded with their tags (:mod:`.cfir_dot`).

        >>> from compiler.lattice.examples import sparse_vector_sum
        >>> text, parts = sparse_vector_sum()[1].printed_parts()
        >>> line = text.splitlines()[3]
        >>> line, [line[a:b] for a, b, _, _ in parts["4"]]
        ('      case b0 c0: a[i] = b[i] + c[i]', ['a[i]', 'b[i]', 'c[i]'])
        """
        return parts_record(_lines(self, 0, True))


def headline(node: CNode) -> str:
    """A CFIR loop's or case's first line (with a case's statement when it fits on one
    line): what the C it produced computes, for the explorer's tooltips, e.g.
    ``while i <- A0 ∩ B0`` or ``case A0 B0: y[i] = A[i] * B[i]``."""
    lines = [x.strip() for x in str(node).splitlines() if x.strip()]
    if not lines:
        return ""
    head = lines[0]
    if head.startswith("switch") and len(lines) > 1:
        head = lines[1]
    return head[:-1] if head.endswith(":") else head


@serialize.node
@dataclass(frozen=True)
class FlatLocator:
    """A tensor whose levels are all Dense, located once all its indices are bound."""

    key: str
    name: str
    tensor: str

    @property
    def label(self) -> str:
        return self.name


@serialize.node
@dataclass(frozen=True)
class CCase(CNode):
    """``case present: body``; ``tests`` are compared with ``i``, ``value_tests`` against their fill.

    ``fill_absent``: the one case of a merged loop (:func:`~compiler.lattice.cfir_builder.build_cfir`):
    these iterated accesses read their stored value where their iterator is at ``i`` and their fill
    elsewhere; it runs where one of the loop's ``any_of`` tuples is at ``i`` (everywhere over U). Where
    the body is a nest of loops (an outer level), an access not at ``i`` has an empty fiber below.
    """

    present: tuple[str, ...]       # access keys present in this region
    tests: tuple[ModeIterator, ...]
    value_tests: tuple[str, ...]   # access keys whose value is compared with the fill
    body: Any
    omit: bool = False
    fill_absent: tuple[str, ...] = ()

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CLoop(CNode):
    """``while index <- iterated [∩ U] with (located = index): switch``.

    ``any_of``: the lattice merged its loops into this one (:func:`~compiler.lattice.lattice.merge_loops`):
    it runs while one of these tuples of iterators has entries in each (U: over the dense range), an
    iterator out of entries at no coordinate after.
    """

    index: Index
    iterated: tuple[ModeIterator, ...]
    located: tuple
    universe: bool
    cases: tuple[CCase, ...]
    any_of: tuple = ()

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CFold(CNode):
    """After a reduction's loops: every coordinate where no case ran holds the fill ``fill``
    of the reduced value; fold them into ``lhs`` at once instead of visiting them.

    An idempotent operator (max, min, or, and) takes the fill once if any coordinate is
    missing; ``+`` takes ``missing * fill`` (sparse-array-programming.md §5.2).
    """

    index: Index
    lhs: Access
    op: Operator
    fill: Any
    dtype: str        # the dtype the reduction accumulates in (a sum of int32 or bool is int64, as in numpy)
    output: bool
    per: Index | None = None   # a dense output's index under the reduction: one count per coordinate
    #: (with ``per``) the fold runs once per iteration of loops around it (``y[k, j] max= A[k, i, j]``):
    #: each count starts at zero again after it is folded in
    again: bool = False

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CForall(CNode):
    """The loops of one forall over ``index`` (extent: the size parameter ``extent``), and
    the fold of the coordinates they skip (a :class:`CFold`, or None)."""

    index: Index
    extent: str
    loops: tuple[CLoop, ...]
    fold: CFold | None = None
    tally: Index | None = None   # counts, per coordinate, the cases that ran for the fold over ``tally``

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CSeq(CNode):
    stmts: tuple

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CAlloc(CNode):
    """``alloc temp = init in body``: a scalar temporary of a ``where``."""

    temp: str
    dtype: str
    init: Any
    body: Any

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CWorkspace(CNode):
    """``alloc workspace[index] = init in body``: a dense workspace of a ``where``.

    ``body`` is the producer then the consumer; ``ordered`` says whether the
    consumer needs the coordinates in order (the list is sorted between them).
    ``once`` says the producer sets each coordinate at most once, in ascending order
    (one forall over ``index`` around one assignment), so its list needs neither the
    bitmap's test for a coordinate already listed nor sorting.
    The workspace is reset after the consumer, for the next enclosing iteration.
    """

    temp: str
    dtype: str
    init: Any
    index: Index
    extent: str
    ordered: bool
    body: Any
    inner: tuple = ()           # further indices, over several (row-major after ``index``)
    inner_extents: tuple = ()
    once: bool = False

    @property
    def indices(self) -> tuple:
        return (self.index, *self.inner)

    @property
    def extents(self) -> tuple:
        return (self.extent, *self.inner_extents)

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CDenseWorkspace(CNode):
    """``alloc workspace[indices] = init in body``: a dense workspace over several indices.

    ``body`` is the producer then the consumer, which locates into it; every entry
    is reset to ``init`` after the consumer, for the next enclosing iteration.
    """

    temp: str
    dtype: str
    init: Any
    indices: tuple
    extents: tuple
    body: Any

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CAssign(CNode):
    """``lhs = rhs`` or ``lhs op= rhs``; ``output`` says whether ``lhs`` is the output tensor."""

    lhs: Access
    op: Operator | None
    rhs: Any
    output: bool

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CSkip(CNode):
    __str__ = CNode.__str__


def _labels(items) -> str:
    return " ∩ ".join(x.label for x in items)


def loop_head(n: CLoop) -> str:
    """How a loop's line of the CFIR's text starts (before its colon): ``while i <- b0 ∩ c0``,
    with what it locates (``with (x = i)``)."""
    seq = _labels(n.iterated)
    if n.any_of:
        seq = "U" if n.universe else " ∪ ".join(f"({_labels(p)})" if len(p) > 1 else _labels(p) for p in n.any_of)
        seq += f", merging {' '.join(x.label for x in n.iterated)}"
        if any(c.fill_absent and isinstance(c.body, CAssign) for c in n.cases):
            seq += f" (one case: an operand not at {n.index} reads its fill)"
        elif any(c.fill_absent for c in n.cases):
            seq += f" (one case: an operand not at {n.index} is empty below it)"
    elif n.universe:
        seq = f"U ∩ {seq}" if seq else "U"
    head = f"while {n.index} <- {seq}"
    if n.located:
        head += " with (" + ", ".join(f"{x.label} = {n.index}" for x in n.located) + ")"
    return head


def case_head(n: CCase) -> str:
    """How a case's line starts (before its colon): ``case b0 c0``, ``case m0 (values m[i])``."""
    names = " ".join(t.label for t in n.tests)
    if n.value_tests:
        names += " (values " + ", ".join(n.value_tests) + ")"
    return f"case {names.strip() or 'else'}"


def _lines(n, depth: int, spans: bool = False) -> list[tuple[str, tuple]]:
    """The lines of ``n`` and, with ``spans``, the parts printed in each (see :meth:`CNode.printed_parts`)."""
    pad = INDENT * depth

    def shown(e, mode="read"):
        return show_parts(e, mode) if spans else (str(e), ())
    if isinstance(n, CForall):
        head = f"forall {n.index}"
        own = ((len(pad), len(pad) + len(head), {"index": n.index.name}, "loop"),) if spans else ()
        out = [(f"{pad}{head}" + (f" (counting, per {n.index}, the cases that ran for the fold over "
                                  f"{n.tally})" if n.tally is not None else "") + ":", own)]
        for loop in n.loops:
            out += _lines(loop, depth + 1, spans)
        if n.fold is not None:
            out += _lines(n.fold, depth + 1, spans)
        return out
    if isinstance(n, CFold):
        f, lhs = value_text(n.fill), _access(n.lhs, spans)
        start = (f"{pad}fold ", lhs, f" {assign_spelling(n.op)} {f}")
        if n.per is not None:
            return [cat_parts(*start, (" once" if n.op.idempotent else " * (the coordinates of " + n.index.name
                                       + " that ran no case)")
                              + f", for each {n.per} where a coordinate of {n.index} ran no case (counted per {n.per}"
                              + (", from zero again" if n.again else "") + ")")]
        if n.op.idempotent:
            return [cat_parts(*start, f" if a coordinate of {n.index} ran no case")]
        return [cat_parts(*start, f" * (the coordinates of {n.index} that ran no case)")]
    if isinstance(n, CLoop):
        head = pad + loop_head(n)
        if len(n.cases) == 1 and not n.cases[0].tests and not n.cases[0].value_tests:
            return [(head + ":", ())] + _lines(n.cases[0].body, depth + 1, spans)
        out = [(head + ":", ()), (f"{pad}{INDENT}switch {n.index}:", ())]
        # (a case tests the values of accesses its loop's cases read: an omitted one reads none)
        reads = _reads(*(c.body for c in n.cases)) if spans else {}
        for c in n.cases:
            out += _case_lines(c, depth + 2, spans, reads)
        return out
    if isinstance(n, CCase):
        return _case_lines(n, depth, spans, _reads(n.body) if spans else {})
    if isinstance(n, CSeq):
        return [line for s in n.stmts for line in _lines(s, depth, spans)]
    if isinstance(n, CAlloc):
        return [(f"{pad}alloc {n.temp} = {value_text(n.init)}", ())] + _lines(n.body, depth, spans)
    if isinstance(n, CWorkspace):
        parts = n.body.stmts if isinstance(n.body, CSeq) else (n.body,)
        over = ", ".join(i.name for i in n.indices)
        out = [cat_parts(pad, "alloc workspace ", _access(Access(n.temp, n.indices), spans),
                         f" = {value_text(n.init)} (dense over {over}, bitmap {n.temp}_set, list {n.temp}_list"
                         + (" of row-major positions)" if n.inner else ")"))]
        out += _lines(parts[0], depth, spans)
        if n.ordered and n.once:
            out.append((f"{pad}({n.temp}_list is in order: the producer sets each coordinate once, ascending)", ()))
        elif n.ordered:
            out.append((f"{pad}sort {n.temp}_list", ()))
        for x in parts[1:]:
            out += _lines(x, depth, spans)
        return out + [(f"{pad}reset {n.temp} at {n.temp}_list", ())]
    if isinstance(n, CDenseWorkspace):
        over = ", ".join(i.name for i in n.indices)
        return ([cat_parts(pad, "alloc workspace ", _access(Access(n.temp, tuple(n.indices)), spans),
                           f" = {value_text(n.init)} (dense over {over})")]
                + _lines(n.body, depth, spans) + [(f"{pad}reset {n.temp}", ())])
    if isinstance(n, CAssign):
        if not spans:   # (most prints: kept plain)
            return [(f"{pad}{_access(n.lhs)} {assign_spelling(n.op)} {n.rhs}", ())]
        return [cat_parts(pad, _access(n.lhs, True), f" {assign_spelling(n.op)} ", shown(n.rhs))]
    if isinstance(n, CSkip):
        return [(f"{pad}skip", ())]
    raise TypeError(f"not a CFIR node: {n!r}")


def _case_lines(n: CCase, depth: int, spans: bool, reads: dict) -> list[tuple[str, tuple]]:
    head = cat_parts(INDENT * depth, _case_head(n, spans, reads))
    if n.omit:
        return [cat_parts(head, ": omit")]
    body = _lines(n.body, depth + 1, spans)
    if len(body) == 1:   # (one statement, printed on the case's line: its parts move there)
        text, parts = body[0]
        cut = len(text) - len(text.lstrip())
        return [cat_parts(head, ": ", (text[cut:], tuple((a - cut, b - cut, about, role)
                                                        for a, b, about, role in parts)))]
    return [cat_parts(head, ":")] + body


def _reads(*bodies) -> dict:
    """``{text: access}`` of every access the statements of ``bodies`` read."""
    return {str(a): a for b in bodies for x in cfir_walk(b) if isinstance(x, CAssign) for a in accesses(x.rhs)}


def _case_head(n: CCase, spans: bool, reads: dict) -> tuple[str, tuple]:
    """:func:`case_head` with, under ``spans``, the accesses whose values it tests as parts (a
    test names an access by its text, ``reads``' key)."""
    if not spans or not n.value_tests:
        return case_head(n), ()
    labels = " ".join(t.label for t in n.tests)
    pieces = [f"case {labels} (values " if labels else "case (values "]
    for k, key in enumerate(n.value_tests):
        pieces += ([", "] if k else []) + [show_parts(reads[key]) if key in reads else key]
    return cat_parts(*pieces, ")")


def _access(a: Access, spans: bool = False):
    """How an assignment prints the access it writes (a scalar by its name); with ``spans``,
    with its part."""
    if not spans:
        return a.tensor if not a.indices else str(a)
    return (a.tensor, ()) if not a.indices else show_parts(a, "update")


def value_text(v) -> str:
    return "?" if v is NOVALUE else str(literal(v))




def cfir_walk(n):
    """The CFIR nodes of ``n`` in pre-order: foralls, their cases, sequences, allocations."""
    yield n
    if isinstance(n, CForall):
        for loop in n.loops:
            for case in loop.cases:
                yield case
                yield from cfir_walk(case.body)
    elif isinstance(n, CSeq):
        for x in n.stmts:
            yield from cfir_walk(x)
    elif isinstance(n, (CAlloc, CWorkspace, CDenseWorkspace)):
        yield from cfir_walk(n.body)


def loop_tag(loop: CLoop) -> str:
    """The provenance tag of a lattice loop's code, ``lattice:<index>:<iterated>`` (``U``: the
    dense range), as the emitter tags it and the CFIR drawing names the loop's box.

    >>> from compiler.notation.ast import Index
    >>> loop_tag(CLoop(Index("i"), (), (), True, ()))
    'lattice:i:U'
    """
    return iterated_tag(loop.index, [it.name for it in loop.iterated], loop.universe)


def iterated_tag(index, names, universe: bool) -> str:
    """The tag of the lattice loop over ``index`` iterating the accesses ``names`` (and the dense
    range, with ``universe``): :func:`loop_tag` of its CFIR loop, and of its point in the lattice.

    >>> iterated_tag("j", ["A", "B"], False), iterated_tag("j", [], True)
    ('lattice:j:A∩B', 'lattice:j:U')
    """
    names = list(names) + (["U"] if universe else [])
    return f"lattice:{index}:{'∩'.join(dict.fromkeys(names)) or 'U'}"


def case_tag(index, names) -> str:
    """The provenance tag of a case's code, ``lattice:<index>:<present operands>`` (``names``:
    the generated names of the accesses present; ``∅`` for none).

    >>> case_tag("j", ["A", "x"])
    'lattice:j:A∩x'
    """
    return f"lattice:{index}:{'∩'.join(names) or '∅'}"


def one_case_always(loop: CLoop) -> bool:
    """Whether ``loop`` has one case that runs at every step: no test of a value or of a located level."""
    if len(loop.cases) != 1:
        return False
    case = loop.cases[0]
    return not (case.omit or case.value_tests or any(getattr(loc, "locatable", False) for loc in loop.located))


__all__ = ["case_tag", "iterated_tag", "loop_tag", "CForall", "CFold", "CLoop", "CCase", "CSeq", "CAlloc", "CWorkspace", "CDenseWorkspace", "CAssign",
           "CSkip", "FlatLocator", "case_head", "cfir_walk", "headline", "loop_head", "one_case_always", "value_text"]
