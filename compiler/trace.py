"""The trace: every intermediate of a lowering, step by step.

A :class:`Trace` is an ordered list of :class:`Step`. A step names its stage
(``parse``, ``concretize``, ``lattice``, ``unfurl``, ``simplify``, ``emit-c``,
``compile``, ...), holds the program before and after as IR objects, the
artifacts the stage built, and, for the simplifier, each rewrite. Every IR
object and artifact also carries its text, so a trace loaded from JSON renders
without re-running the compiler.

>>> t = Trace()
>>> _ = t.record("parse", after="y[i] += A[i, j] * x[j]",
...              artifacts=[Artifact("c", "kernel", "int main(void) { return 0; }")])
>>> Trace.from_json(t.to_json()).steps[0].artifacts[0].text
'int main(void) { return 0; }'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Iterable

from . import serialize
from .errors import UsageError


def text_of(obj: Any) -> str:
    """The readable text of an IR object: its ``pretty()`` if it has one, else ``str``."""
    if obj is None:
        return ""
    pretty = getattr(obj, "pretty", None)
    return pretty() if callable(pretty) else str(obj)


class Later:
    """A value made when first read: given to a :class:`Step`, :class:`Artifact` or
    :class:`Rewrite` field, ``make()`` runs only if something reads the field. Most traces are
    never looked at (a kernel's call does not read them), and printing and drawing the program
    of every step was a tenth of a lowering's time.

    >>> a = Artifact("ir", "k", Later(lambda: "y[i] = 0;"))
    >>> a.text
    'y[i] = 0;'
    """

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


_MISSING = object()


class _Deferred:
    """A dataclass field that may hold a :class:`Later` (made on first read) or, for text
    fields, an IR object (printed by :func:`text_of` on first read)."""

    def __init__(self, default: Any = _MISSING, text: bool = False):
        self.default, self.text = default, text

    def __set_name__(self, owner, name):
        self.name, self.key = name, "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            if self.default is _MISSING:   # (a field without a default, to dataclass)
                raise AttributeError(self.name)
            return self.default
        raw = obj.__dict__[self.key]
        if isinstance(raw, Later):
            raw = raw.make()
        if self.text and not isinstance(raw, str):
            raw = text_of(raw)
        obj.__dict__[self.key] = raw
        return raw

    def __set__(self, obj, value):
        obj.__dict__[self.key] = value


def printed_later(obj: Any) -> Any:
    """``obj`` as a text field takes it: kept to be printed when read if it cannot change (an
    immutable IR node or a :class:`Later`), else its text now.

    >>> printed_later([1, 2])
    '[1, 2]'
    """
    params = getattr(type(obj), "__dataclass_params__", None)
    if isinstance(obj, (str, Later)) or params is not None and params.frozen:
        return obj
    return text_of(obj)


def _once(later: Later) -> Later:
    """``later`` made once for every field given it (a step's program and its text).

    >>> calls = []
    >>> step = Step("s", after=Later(lambda: calls.append(1) or "y = 1"))
    >>> step.after, step.after_text, len(calls)
    ('y = 1', 'y = 1', 1)
    """
    made = []

    def make():
        if not made:
            made.append(later.make())
        return made[0]
    return Later(make)


def _later_parts(make) -> tuple[Later, Later, Later]:
    """Three :class:`Later` values, the parts of one ``make()`` (run once for all three)."""
    made = []

    def part(k):
        if not made:
            made.append(make())
        return made[0][k]
    return Later(lambda: part(0)), Later(lambda: part(1)), Later(lambda: part(2))


def with_parts(data: Mapping | None, programs: Mapping[str, Any]) -> Mapping | None:
    """``data`` with where the parts of each side's program are printed (``before_spans``,
    ``after_spans``: ``{line: [[start, end, about, role]]}``, from its ``printed_parts()``), for
    the explorer to mark them without reading the text back; a side whose printer fails or prints
    otherwise than its text (a subclass printing itself) records none, and ``data`` keeps its own.

    >>> from compiler.notation import parse
    >>> with_parts({"n": 1}, {"after": parse("y[i] = x[i]")})["after_spans"]["1"][1]
    [7, 11, {'tensor': 'x', 'indices': ['i'], 'mode': 'read'}, 'access']
    """
    spans = {}
    for side, program in programs.items():
        try:
            text, where = program.printed_parts()
        except TypeError:   # (a statement its printer does not know: no parts)
            continue
        if where and text == text_of(program):
            spans[side + "_spans"] = where
    return {**spans, **data} if data else spans or data


@serialize.node
@dataclass(frozen=True)
class Artifact:
    """Something a stage built: an iteration graph, a lattice, a looplet nest, C source, ...

    ``kind`` says how to draw it (``"c"``, ``"ir"``, ``"fiber-tree"``, ``"lattice"``, ...);
    ``text`` is always present, ``dot`` is a Graphviz drawing where one makes sense,
    ``data`` is optional structured JSON-able data for richer renderers.
    """

    kind: str
    name: str
    text: str = _Deferred(text=True)
    dot: str | None = _Deferred(None)
    data: Any = _Deferred(None)

    @classmethod
    def deferred(cls, kind: str, name: str, make) -> "Artifact":
        """An artifact whose ``(text, dot, data)`` ``make()`` returns when one of them is first
        read (drawing a large kernel's tree costs more than lowering it).

        >>> a = Artifact.deferred("ir", "k", lambda: ("y = 0;", "digraph {}", None))
        >>> a.dot, a.text
        ('digraph {}', 'y = 0;')
        """
        return cls(kind, name, *_later_parts(make))


@serialize.node
@dataclass(frozen=True)
class LaterText:
    """A text made when first read, for an IR node to hold where a description costs more to make
    than most lowerings ever read (a looplet lowering's tooltip prints the program it lowers):
    given a :class:`Later`, ``make()`` runs once, when ``text`` (or ``str``) is first read. A saved
    trace holds the text.

    >>> calls = []
    >>> t = LaterText(Later(lambda: calls.append(1) or "Stepper on j"))
    >>> len(calls), str(t), t.text, len(calls)
    (0, 'Stepper on j', 'Stepper on j', 1)
    """

    text: str = _Deferred(text=True)

    def __str__(self) -> str:
        return self.text


@serialize.node
@dataclass(frozen=True)
class Rewrite:
    """One application of a rewrite rule: its name and the term before and after."""

    rule: str
    before: str = _Deferred(text=True)   # (the terms, printed when read)
    after: str = _Deferred(text=True)


@serialize.node
@dataclass
class Step:
    """One stage of a lowering; see the module docstring."""

    stage: str
    #: the program before and after: an IR object, a text, or a :class:`Later` text (read as
    #: its text, made once for this field and the ``*_text`` one)
    before: Any = _Deferred(None)
    after: Any = _Deferred(None)
    artifacts: tuple[Artifact, ...] = ()
    rewrites: tuple[Rewrite, ...] = ()
    note: str = ""
    error: str | None = None
    before_text: str = _Deferred("", text=True)
    after_text: str = _Deferred("", text=True)
    #: structured facts about the step for later stages (a looplet lowering's ``{"tag": ...}``);
    #: may be given as a :class:`Later` (where the program's parts are printed, made when read)
    data: Any = _Deferred(None)

    def __post_init__(self):
        self.artifacts = tuple(self.artifacts)
        self.rewrites = tuple(self.rewrites)
        printers = {}
        for side in ("before", "after"):   # (printed when first read, see printed_later)
            program = self.__dict__["_" + side]
            if isinstance(program, Later):   # (the program's text only, made when first read)
                program = _once(program)
                setattr(self, side, program)
            if self.__dict__["_" + side + "_text"] == "":
                kept = printed_later(program)
                setattr(self, side + "_text", kept)
                if kept is program and hasattr(program, "printed_parts"):   # (an IR printed when read)
                    printers[side] = program
        data = self.__dict__["_data"]
        if printers and (data is None or isinstance(data, Mapping)):
            # where the program's parts are printed, made when read (the step holds the program)
            self.data = Later(lambda: with_parts(data, printers))

    @property
    def changed(self) -> bool:
        """Whether the stage changed the program (or built anything)."""
        return bool(self.artifacts or self.rewrites or self.error) or self.before_text != self.after_text

    def artifact(self, kind: str) -> Artifact:
        """The first artifact of ``kind``; ``KeyError`` naming the kinds present otherwise."""
        for a in self.artifacts:
            if a.kind == kind:
                return a
        raise KeyError(f"step {self.stage!r} has no {kind!r} artifact; it has {[a.kind for a in self.artifacts]}")


class Trace:
    """An ordered list of steps recorded by a lowering."""

    def __init__(self, steps: Iterable[Step] = ()):
        self.steps: list[Step] = list(steps)

    def record(self, stage: str, before: Any = None, after: Any = None,
               artifacts: Iterable[Artifact] = (), rewrites: Iterable[Rewrite] = (),
               note: str = "", error: str | None = None, data: Any = None) -> Step:
        """Append a step and return it."""
        step = Step(stage, before, after, tuple(artifacts), tuple(rewrites), note, error, data=data)
        self.steps.append(step)
        return step

    def stages(self) -> list[str]:
        return [s.stage for s in self.steps]

    def find(self, stage: str) -> list[Step]:
        """Every step of ``stage`` (a stage name, or a prefix ending in ``:``)."""
        if stage.endswith(":"):
            return [s for s in self.steps if s.stage.startswith(stage)]
        return [s for s in self.steps if s.stage == stage]

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, i):
        return self.steps[i]

    def __repr__(self) -> str:
        return f"Trace({len(self.steps)} steps: {', '.join(self.stages())})"

    def to_data(self) -> dict:
        return {"format": "sparsescope-trace", "version": 1,
                "steps": [serialize.encode(s) for s in self.steps]}

    @classmethod
    def from_data(cls, data: dict) -> "Trace":
        """A trace from :meth:`to_data`'s dict; anything else is a UsageError saying what is wrong
        (a saved trace may have been edited or cut short)."""
        if not isinstance(data, dict) or data.get("format") != "sparsescope-trace":
            raise UsageError("not a sparsescope trace (missing 'format': 'sparsescope-trace')")
        if not isinstance(data.get("steps"), list):
            raise UsageError("not a sparsescope trace: 'steps' must be a list of steps")
        steps = []
        for k, s in enumerate(data["steps"]):
            try:
                step = serialize.decode(s)
            except (KeyError, TypeError, AttributeError, ValueError, OverflowError, RecursionError) as e:
                raise UsageError(f"not a sparsescope trace: step {k} cannot be read ({type(e).__name__}: {e})") \
                    from None
            problem = _step_problem(step)
            if problem:
                raise UsageError(f"not a sparsescope trace: step {k} {problem}")
            steps.append(step)
        return cls(steps)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_data(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> "Trace":
        try:
            data = json.loads(text)
        except RecursionError:
            raise UsageError("not a sparsescope trace: its JSON nests too deeply") from None
        except ValueError as e:   # (cut short, or a number of thousands of digits)
            raise UsageError(f"not a sparsescope trace: its JSON cannot be read ({e})") from None
        return cls.from_data(data)


def _step_problem(step) -> str:
    """What makes a decoded step unusable, or ``""``."""
    if not isinstance(step, Step):
        return f"is a {type(step).__name__}, not a step"
    texts = {"stage": step.stage, "note": step.note, "before_text": step.before_text, "after_text": step.after_text}
    bad = next((f for f, v in texts.items() if not isinstance(v, str)), None)
    if bad:
        return f"({step.stage!r}) has a {type(texts[bad]).__name__} as its {bad}, not text"
    if step.error is not None and not isinstance(step.error, str):
        return f"({step.stage}) has a {type(step.error).__name__} as its error, not text"
    for a in step.artifacts if isinstance(step.artifacts, (list, tuple)) else [None]:
        if not (isinstance(a, Artifact) and isinstance(a.kind, str) and isinstance(a.name, str)
                and isinstance(a.text, str) and (a.dot is None or isinstance(a.dot, str))):
            return f"({step.stage}) has an artifact that is not one (kind, name and text must be text)"
    for r in step.rewrites if isinstance(step.rewrites, (list, tuple)) else [None]:
        if not isinstance(r, Rewrite):
            return f"({step.stage}) has a rewrite that is not one"
    return ""
