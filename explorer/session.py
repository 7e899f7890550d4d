"""A session over a trace: the steps, a current step, filters, and a captured failure.

:func:`explore` opens a session on a :class:`~compiler.trace.Trace`, a saved trace (a JSON
path or JSON text), or a callable ``build(trace)`` that fills a fresh trace (a lowering).
When building raises, the session keeps every step recorded so far, marks the failing step
with the error, opens at it and exposes :attr:`Session.error`: someone debugging a new level
format sees where the lowering stopped and the program there.

>>> from compiler import Trace
>>> t = Trace()
>>> _ = t.record("parse", before="y[i] = A[i]", after="y[i] = A[i]")
>>> _ = t.record("simplify", before="a + 0", after="a", rewrites=[])
>>> s = explore(t)
>>> len(s), s.current, s.error is None
(2, 0, True)
>>> s.filter(hide_unchanged=True).visible
[1]
>>> def build(trace):
...     trace.record("parse", after="y[i] = A[i]")
...     raise ValueError("level SparseBand cannot locate")
>>> bad = explore(build)
>>> bad.error, bad.current, bad.steps[bad.current].stage
('ValueError: level SparseBand cannot locate', 1, 'error')
"""

from __future__ import annotations

import difflib
import os
import pathlib
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from compiler.trace import Step, Trace

from .provenance import trace_provenance
from .recipe import is_kernel, kernel_recipe, trace_recipe

__all__ = ["Session", "StepView", "explore", "stage_matches"]


def stage_matches(stage: str, pattern: str) -> bool:
    """Whether ``stage`` matches a filter ``pattern``.

    A pattern is a stage name (``"simplify"``), a prefix ending in ``":"`` (``"lower:"``), or a
    family name matching every ``family:...`` stage (``"schedule"`` matches ``"schedule:split"``).

    >>> stage_matches("lower:Stepper", "lower:"), stage_matches("lower:Stepper", "lower")
    (True, True)
    >>> stage_matches("lowering", "lower")
    False
    """
    if pattern.endswith(":"):
        return stage.startswith(pattern)
    return stage == pattern or stage.split(":", 1)[0] == pattern


@dataclass(frozen=True)
class StepView:
    """One step seen from its session: its index, the step, and the program around it."""

    session: "Session"
    index: int

    @property
    def step(self) -> Step:
        return self.session.steps[self.index]

    @property
    def stage(self) -> str:
        return self.step.stage

    @property
    def program(self) -> str:
        """The program text at this step (see :meth:`Session.program_text`)."""
        return self.session.program_text(self.index)

    @property
    def previous_program(self) -> str:
        """The program this step started from."""
        s = self.step
        if s.before_text:
            return s.before_text
        return self.session.program_text(self.index - 1) if self.index > 0 else ""

    def diff(self, context: int = 3) -> str:
        """The unified diff from the program this step started from to the one it left."""
        return unified_diff(self.previous_program, self.program,
                            f"before {self.stage}", f"after {self.stage}", context)

    @property
    def is_failure(self) -> bool:
        return self.step.error is not None

    def __repr__(self) -> str:
        flag = " FAILED" if self.is_failure else ""
        return f"<step {self.index}: {self.stage}{flag}>"


def unified_diff(a: str, b: str, name_a: str = "a", name_b: str = "b", context: int = 3) -> str:
    """A unified diff of two texts ('' when they are equal).

    >>> print(unified_diff("x = 1\\ny = 2", "x = 1\\ny = 3", context=0))
    --- a
    +++ b
    @@ -2 +2 @@
    -y = 2
    +y = 3
    """
    lines = difflib.unified_diff(a.splitlines(), b.splitlines(), name_a, name_b, n=context,
                                 lineterm="")
    return "\n".join(lines)


class Session:
    """Steps of one trace with a current index, filters and the failure if building failed.

    ``current`` is an index into :attr:`steps` (all steps); :attr:`visible` lists the indices
    that pass the filters. Navigation (:meth:`next`, :meth:`prev`, :meth:`goto`) moves over
    visible steps only.
    """

    def __init__(self, trace: Trace, error: str | None = None, exception: BaseException | None = None,
                 recipe: str | None = None, name: str = "", builder: Callable | None = None):
        self.trace = trace
        self.error = error
        self.exception = exception
        self.recipe = recipe
        self.name = name
        self.builder = builder
        self.stage_filter: tuple[str, ...] = ()
        self.rule_filter: tuple[str, ...] = ()
        self.hide_unchanged = False
        self._visible: list[int] | None = None
        failed = self.failed_index
        if self.error is None and failed is not None:
            self.error = self.steps[failed].error  # a saved failed trace reopens as failed
        self.current = failed if failed is not None else 0

    # --- the steps -------------------------------------------------------------------------
    @property
    def steps(self) -> list[Step]:
        return self.trace.steps

    def __len__(self) -> int:
        return len(self.trace.steps)

    def __repr__(self) -> str:
        state = f", failed at step {self.failed_index}: {self.error}" if self.error else ""
        return f"<Session {self.name or 'trace'}: {len(self)} steps{state}>"

    @property
    def failed_index(self) -> int | None:
        """The index of the first step that carries an error, if any."""
        for i, s in enumerate(self.steps):
            if s.error is not None:
                return i
        return None

    def step(self, i: int | None = None) -> StepView:
        """A view of step ``i`` (the current step by default; negative indices count back)."""
        if i is None:
            i = self.current
        n = len(self.steps)
        if not -n <= i < n:
            raise IndexError(f"step {i} out of range: this trace has {n} steps")
        return StepView(self, i % n)

    def stages(self) -> list[str]:
        """The stage of each step, in step order, as ``Trace.stages()`` gives them: ``stages()[i]``
        is step ``i``'s and ``stages().index(name)`` the first step of ``name``, so it can be given
        to :meth:`goto` and :meth:`step` (a stage may repeat: a lattice per index, a ``lower:*``
        per looplet). The distinct names are :meth:`stage_names`, the steps of one stage
        :meth:`indices`.

        >>> from compiler import Trace
        >>> t = Trace()
        >>> for stage in ("parse", "lattice", "lattice", "cfir"):
        ...     _ = t.record(stage)
        >>> s = explore(t)
        >>> s.stages(), s.stages().index("cfir"), s.step(s.stages().index("cfir")).stage
        (['parse', 'lattice', 'lattice', 'cfir'], 3, 'cfir')
        >>> s.stage_names(), s.indices("lattice")
        (['parse', 'lattice', 'cfir'], [1, 2])
        """
        return [s.stage for s in self.steps]

    def stage_names(self) -> list[str]:
        """Distinct stage names in order of first appearance (no step indices: :meth:`stages`)."""
        return list(dict.fromkeys(s.stage for s in self.steps))

    def indices(self, stage: str) -> list[int]:
        """The indices of the steps of ``stage`` (a name, or a family ending in ``:``, as
        ``lower:``), in order; ``[]`` when there is none."""
        if stage.endswith(":"):
            return [i for i, s in enumerate(self.steps) if s.stage.startswith(stage)]
        return [i for i, s in enumerate(self.steps) if s.stage == stage]

    def stage_families(self) -> list[str]:
        """Distinct stage families (``lower`` for ``lower:Stepper``) in order of appearance."""
        return list(dict.fromkeys(s.stage.split(":", 1)[0] for s in self.steps))

    def rules(self) -> list[str]:
        """Distinct rewrite rule names in order of first appearance."""
        return list(dict.fromkeys(r.rule for s in self.steps for r in s.rewrites))

    def program_text(self, i: int) -> str:
        """The program at step ``i``: what it left (``after``), else what it started from,
        else the program of the step before (stages such as ``compile`` carry no program)."""
        while i >= 0:
            s = self.steps[i]
            if s.after_text:
                return s.after_text
            if s.before_text:
                return s.before_text
            i -= 1
        return ""

    def provenance(self):
        """The trace's :class:`~explorer.provenance.Provenance` (tags, their C lines, what each
        names); computed once per session (a session's trace is complete once it is opened)."""
        key = len(self.steps)
        if getattr(self, "_provenance", (None, None))[0] != key:
            self._provenance = (key, trace_provenance(self.steps))
        return self._provenance[1]

    def artifacts(self, kind: str | None = None) -> list[tuple[int, Any]]:
        """``(step index, artifact)`` for every artifact (of ``kind``) in the trace."""
        return [(i, a) for i, s in enumerate(self.steps) for a in s.artifacts
                if kind is None or a.kind == kind]

    def last_artifact(self, kind: str, upto: int | None = None):
        """The latest artifact of ``kind`` at or before step ``upto`` (all steps by default)."""
        found = [a for i, a in self.artifacts(kind) if upto is None or i <= upto]
        return found[-1] if found else None

    # --- filters ----------------------------------------------------------------------------
    def filter(self, stage: str | Sequence[str] | None = None, rule: str | Sequence[str] | None = None,
               hide_unchanged: bool | None = None) -> "Session":
        """Set the filters (``None`` leaves one as is, ``()`` clears it); returns the session.

        ``stage`` patterns follow :func:`stage_matches`; ``rule`` keeps steps that applied a
        rewrite rule of that name. The current step moves to the nearest visible one.
        """
        if stage is not None:
            self.stage_filter = (stage,) if isinstance(stage, str) else tuple(stage)
        if rule is not None:
            self.rule_filter = (rule,) if isinstance(rule, str) else tuple(rule)
        if hide_unchanged is not None:
            self.hide_unchanged = bool(hide_unchanged)
        self._visible = None
        vis = self.visible
        if vis and self.current not in vis:
            after = [i for i in vis if i >= self.current]
            self.current = after[0] if after else vis[-1]
        return self

    def clear_filters(self) -> "Session":
        return self.filter(stage=(), rule=(), hide_unchanged=False)

    def passes(self, i: int) -> bool:
        s = self.steps[i]
        if s.error is not None:
            return True  # the failure is always shown
        if self.hide_unchanged and not s.changed:
            return False
        if self.stage_filter and not any(stage_matches(s.stage, p) for p in self.stage_filter):
            return False
        if self.rule_filter and not any(r.rule in self.rule_filter for r in s.rewrites):
            return False
        return True

    @property
    def visible(self) -> list[int]:
        """Indices of the steps that pass the filters."""
        if self._visible is None:
            self._visible = [i for i in range(len(self.steps)) if self.passes(i)]
        return list(self._visible)

    # --- navigation -------------------------------------------------------------------------
    def goto(self, i: int) -> StepView:
        """Make step ``i`` (an index into all steps) current and return its view."""
        view = self.step(i)
        self.current = view.index
        return view

    def next(self) -> StepView:
        """Move to the next visible step (stays at the last one)."""
        later = [i for i in self.visible if i > self.current]
        if later:
            self.current = later[0]
        return self.step()

    def prev(self) -> StepView:
        """Move to the previous visible step (stays at the first one)."""
        earlier = [i for i in self.visible if i < self.current]
        if earlier:
            self.current = earlier[-1]
        return self.step()

    def __iter__(self):
        return (self.step(i) for i in self.visible)


def _recipe_for(source: Any, kwargs: dict) -> str:
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    head = "from explorer import explore\n"
    if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("{"):
        return f"{head}session = explore({os.fspath(source)!r}{extra})\n"
    if callable(source) and not isinstance(source, Trace):
        module = getattr(source, "__module__", None)
        qual = getattr(source, "__qualname__", None)
        if module and qual and "<" not in qual:
            if module == "__main__":
                return f"{head}session = explore({qual}{extra})  # {qual} is defined in your notebook\n"
            return f"{head}from {module} import {qual.split('.')[0]}\nsession = explore({qual}{extra})\n"
        return f"{head}session = explore(build{extra})  # build(trace) fills a trace\n"
    return ""


def explore(source: Any, *, name: str = "", recipe: str | None = None) -> Session:
    """Open a :class:`Session` on ``source``.

    ``source`` is a kernel (``compiler.lower``'s result: its trace, and a recipe that lowers
    it again), a :class:`~compiler.trace.Trace`, a :class:`Session` (returned as is), a path
    to a saved trace, JSON text, or a callable ``build(trace)`` that records into the trace it is
    given. If ``build`` raises, the steps recorded so far are kept; the failing step is marked
    with the error (a step of stage ``error`` is added unless the last step already carries the
    error), and the session opens at it. ``recipe`` is the Python that recreates the session
    (what the widget's "copy as code" shows); a sensible one is derived when not given.
    """
    if isinstance(source, Session):
        return source
    if isinstance(source, Trace):
        # (not the trace's JSON inline: 58 KB for an SpMV; explore(kernel) knows its lower() call)
        return Session(source, recipe=recipe or trace_recipe(len(source)), name=name)
    if is_kernel(source) and isinstance(source.trace, Trace):
        return Session(source.trace, recipe=recipe or kernel_recipe(source), name=name)
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if isinstance(source, str) and text.lstrip()[:1] in ("{", "["):   # (JSON text, not a path)
            trace = Trace.from_json(text)
            recipe = recipe or ("from compiler import Trace\nfrom explorer import explore\n"
                                f"session = explore({text!r})\n")
        else:
            path = pathlib.Path(text)
            if not path.exists():
                raise FileNotFoundError(f"no saved trace at {text!r}")
            try:
                trace = Trace.from_json(path.read_text())
            except ValueError as e:   # (Trace.from_json says what is wrong; this names the file)
                raise type(e)(f"{text!r}: {e}") from None
            recipe = recipe or _recipe_for(source, {})
        return Session(trace, recipe=recipe, name=name or pathlib.Path(text).stem)
    if callable(source):
        trace = Trace()
        try:
            result = source(trace)
        except Exception as e:  # noqa: BLE001 - the failure is what the session shows
            message = f"{type(e).__name__}: {e}"
            partial = getattr(e, "trace", None)  # compiler.lower attaches the trace it recorded
            if isinstance(partial, Trace) and partial is not trace and not trace.steps:
                trace.steps.extend(partial.steps)
            _mark_failure(trace, e, message)
            return Session(trace, error=message, exception=e, recipe=recipe or _recipe_for(source, {}),
                           name=name, builder=source)
        if isinstance(result, Trace) and result is not trace and not trace.steps:
            trace = result  # build returned its own trace instead of filling ours
        return Session(trace, recipe=recipe or _recipe_for(source, {}), name=name, builder=source)
    raise TypeError(f"explore() needs a kernel, a Trace, a saved trace (path or JSON) or a build(trace) "
                    f"callable, not {type(source).__name__}")


def _mark_failure(trace: Trace, exc: BaseException, message: str) -> None:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    last = trace.steps[-1] if trace.steps else None
    if last is not None and last.error is not None:
        if not last.note:
            last.note = tb
        return
    before = ""
    for s in reversed(trace.steps):
        if s.after_text or s.before_text:
            before = s.after_text or s.before_text
            break
    stage = getattr(exc, "stage", None) or "error"
    step = Step(str(stage), error=message, note=tb, before_text=before)
    trace.steps.append(step)

