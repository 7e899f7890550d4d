"""A small term-rewriting engine over IR trees, shared by both lowering strategies.

Terms are frozen dataclasses. Their children are the fields holding terms or tuples
of terms; any other field is data. A :class:`Rule` is a named function that returns
a replacement for a term, or ``None`` when it does not apply. :func:`rewrite`
applies rules bottom-up (children first) until nothing changes, and records every
application as a :class:`~compiler.trace.Rewrite` (rule, before, after), which is
how the simplifier's steps reach the trace.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Num:
...     v: int
...     def __str__(self): return str(self.v)
>>> @dataclass(frozen=True)
... class Add:
...     a: object
...     b: object
...     def __str__(self): return f"({self.a} + {self.b})"
>>> fold = Rule("fold-add", lambda t: Num(t.a.v + t.b.v)
...             if isinstance(t, Add) and isinstance(t.a, Num) and isinstance(t.b, Num) else None)
>>> log = []
>>> rewrite(Add(Add(Num(1), Num(2)), Num(3)), [fold], log)
Num(v=6)
>>> [(r.rule, r.before, r.after) for r in log]
[('fold-add', '(1 + 2)', '3'), ('fold-add', '(3 + 3)', '6')]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from .trace import Rewrite, printed_later, text_of


@dataclass(frozen=True)
class Rule:
    """A named rewrite: ``fn(term)`` returns the replacement, or ``None`` if it does not apply.

    ``types``, where given, are the term classes ``fn`` can match (it returns ``None`` for any
    other term): :func:`rewrite` then tries it on instances of those alone.
    """

    name: str
    fn: Callable[[Any], Any]
    types: tuple | None = None

    def __call__(self, term):
        return self.fn(term)


def rule(name: str, types: tuple | None = None):
    """Decorator form: ``@rule("mul-by-one")`` over a function ``term -> term | None``."""
    return lambda fn: Rule(name, fn, types)


_FIELDS: dict = {}   # a type -> its dataclass field names, or None (dataclasses.fields builds them per call)


def _field_names(tp):
    names = _FIELDS.get(tp, False)
    if names is False:
        names = _FIELDS[tp] = tuple(f.name for f in dataclasses.fields(tp)) if dataclasses.is_dataclass(tp) else None
    return names


def map_children(term, fn: Callable[[Any], Any]):
    """``term`` with ``fn`` applied to each child term (and each term inside tuple fields).

    Returns ``term`` itself when no child changed, so unchanged trees are shared.
    """
    fields_of = _FIELDS.get
    names = fields_of(type(term), False)
    if names is False:
        names = _field_names(type(term))
    if names is None:
        return term
    changes = None
    for name in names:
        old = getattr(term, name)
        tp = type(old)
        sub = fields_of(tp, False)
        if sub is False:
            sub = _field_names(tp)
        if sub is not None:   # (a term)
            new = fn(old)
        elif isinstance(old, tuple):   # (its terms mapped in order; a list made at the first that changes)
            items = None
            for k, x in enumerate(old):
                sub = fields_of(type(x), False)
                if sub is False:
                    sub = _field_names(type(x))
                if sub is not None:
                    y = fn(x)
                    if y is not x:
                        if items is None:
                            items = list(old)
                        items[k] = y
            if items is None:
                continue
            new = tuple(items)
        else:
            continue
        if new is not old:
            if changes is None:
                changes = {}
            changes[name] = new
    return dataclasses.replace(term, **changes) if changes else term


class RewriteLimitError(RuntimeError):
    """The rules did not reach a fixpoint (two rules undo each other): a bug in the rule set."""


#: the rules' types (each rule's ``types``, in order) -> {a term's type: the positions of the rules
#: that can match it}: the simplifiers call rewrite on small terms thousands of times with the same
#: rules (or rules made afresh with the same types), and the classes alone are kept here
_POSITIONS: dict = {}


def rewrite(term, rules: Iterable[Rule], log: list | None = None, max_steps: int = 100_000, fixed=None):
    """Rewrite ``term`` bottom-up to a fixpoint of ``rules``; append each application to ``log``.

    ``fixed``: the terms known to be at the fixpoint of these rules, ``{id(term): term}``, kept by
    the caller across calls with the same rules (on the terms of one lowering, say); rewrite
    adds the terms it finds there."""
    rules = tuple(rules)
    budget = [max_steps]
    kinds = tuple(r.types for r in rules)
    positions = _POSITIONS.get(kinds)
    if positions is None:
        if len(_POSITIONS) >= 64:
            _POSITIONS.clear()
        positions = _POSITIONS[kinds] = {}
    by_type: dict = {}   # a term's type -> the rules that can match it, in order
    # terms already at the fixpoint (by identity, each kept alive here so no id is reused): a rule's
    # replacement shares its unchanged subtrees, which are not rewritten again
    fixed = {} if fixed is None else fixed

    def applicable(tp):
        at = positions.get(tp)
        if at is None:
            at = positions[tp] = tuple(k for k, types in enumerate(kinds) if types is None or issubclass(tp, types))
        found = by_type[tp] = tuple(rules[k] for k in at)
        return found

    def visit(t):
        if fixed.get(id(t)) is t:
            return t
        t = map_children(t, visit)
        while True:
            tp = type(t)
            candidates = by_type.get(tp)
            if candidates is None:
                candidates = applicable(tp)
            for r in candidates:
                new = r.fn(t)
                if new is not None and new != t:
                    budget[0] -= 1
                    if budget[0] < 0:
                        raise RewriteLimitError(f"rewriting did not terminate; last rule {r.name!r} on {text_of(t)}")
                    if log is not None:
                        log.append(Rewrite(r.name, printed_later(t), printed_later(new)))
                    # the replacement's children may now match rules too
                    t = map_children(new, visit)
                    if fixed.get(id(t)) is t:   # (a subtree at its fixpoint: nothing matches it)
                        return t
                    break
            else:
                fixed[id(t)] = t
                return t

    return visit(term)
