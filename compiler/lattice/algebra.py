"""The iteration algebra: where an expression can differ from its fill value.

An algebra is a set expression over the *defined* coordinates of the operands
(sparse-array-programming.md §3): :class:`Region` (the coordinates where one
access holds a value other than its fill), :class:`Universe` (every coordinate),
:class:`Empty`, :class:`Union`, :class:`Intersect` and :class:`Complement`.
:func:`derive` computes the algebra of an index-notation expression bottom-up from
the operators' properties and the operands' fill values, in the paper's order:
an explicit algebra of a user function, then annihilator, idempotence, identity,
and the fallback (the union of the arguments with the constant-propagated fill).

>>> from compiler.notation import parse
>>> e = parse("a[i] = b[i] * (c[i] + d[i])").rhs
>>> alg, fill, rules = derive(e, lambda acc: 0.0)
>>> print(alg)
(b[i] ∩ (c[i] ∪ d[i]))
>>> fill, rules
(np.float64(0.0), ['identity: c[i] + d[i]', 'annihilator: b[i] * (c[i] + d[i])'])
>>> holds(alg, {"b[i]", "d[i]"}), holds(alg, {"c[i]", "d[i]"})
(True, False)

Each access is one region, named by its text (``b[i]``); the same access written
twice is one region. Complements come from explicit algebras of user functions
(``algebra="x & !y"``, stated for zero/False fills, or ``("x & !y", {"y": 1})``
with other fills; a mismatch with the actual fills gives the universe, as in the
paper).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import serialize, values
from ..algebra import NOVALUE, Operator
from ..dtypes import typed_scalar
from ..errors import SparsescopeError
from ..notation.ast import Access, Call, IndexValue, Literal, Reduce, cat_parts
from ..notation.shape import ShapeOp
from ..values import same_value


class AlgebraError(SparsescopeError, ValueError):
    """A malformed explicit iteration algebra of a user function."""


class Alg:
    """Base of iteration-algebra nodes."""

    def __str__(self) -> str:
        return _show(self)

    def pretty(self) -> str:
        return str(self)


@serialize.node
@dataclass(frozen=True)
class Region(Alg):
    """The defined coordinates of one access (named by its text)."""

    name: str

    __str__ = Alg.__str__


@serialize.node
@dataclass(frozen=True)
class Universe(Alg):
    """Every coordinate (``U``)."""

    __str__ = Alg.__str__


@serialize.node
@dataclass(frozen=True)
class Empty(Alg):
    """No coordinate (``∅``)."""

    __str__ = Alg.__str__


@serialize.node
@dataclass(frozen=True)
class Union(Alg):
    left: Alg
    right: Alg

    __str__ = Alg.__str__


@serialize.node
@dataclass(frozen=True)
class Intersect(Alg):
    left: Alg
    right: Alg

    __str__ = Alg.__str__


@serialize.node
@dataclass(frozen=True)
class Complement(Alg):
    arg: Alg

    __str__ = Alg.__str__


def _show(a: Alg) -> str:
    return show_algebra(a)[0]


def show_algebra(a: Alg, part_of=None) -> tuple[str, tuple]:
    """The text of ``a`` and, with ``part_of`` (a region's name -> its ``(text, parts)``, or None),
    where the parts of its regions are printed, as :func:`~compiler.notation.ast.show_parts` gives them.

    >>> show_algebra(Intersect(Region("b[i]"), Region("c[i]")), lambda name: (name, ((0, len(name), {}, "access"),)))
    ('(b[i] ∩ c[i])', ((1, 5, {}, 'access'), (8, 12, {}, 'access')))
    """
    if isinstance(a, Region):
        shown = part_of(a.name) if part_of is not None else None
        return shown if shown is not None else (a.name, ())
    if isinstance(a, Universe):
        return "U", ()
    if isinstance(a, Empty):
        return "∅", ()
    if isinstance(a, Complement):
        inner = show_algebra(a.arg, part_of)
        return cat_parts("¬", inner) if not isinstance(a.arg, Complement) else cat_parts("¬(", inner, ")")
    sym = " ∪ " if isinstance(a, Union) else " ∩ "
    return cat_parts("(", show_algebra(a.left, part_of), sym, show_algebra(a.right, part_of), ")")


def union(*parts: Alg) -> Alg:
    """The union of ``parts`` (``∅`` for none), dropping empties and absorbing into ``U``."""
    out: Alg | None = None
    for p in parts:
        if isinstance(p, Empty):
            continue
        if isinstance(p, Universe) or isinstance(out, Universe):
            out = Universe()
            continue
        if out is None:
            out = p
            continue
        # (a part already there is left out: (d ∪ e) ∪ e is d ∪ e)
        have = _members(out, Union)
        new = [m for m in _members(p, Union) if m not in have]
        out = Union(out, p) if len(new) == len(_members(p, Union)) else union(out, *new)
    return Empty() if out is None else out


def _members(a: Alg, kind) -> list:
    """The operands of a chain of ``kind`` (Union or Intersect) nodes, ``a`` itself if it is none."""
    return _members(a.left, kind) + _members(a.right, kind) if isinstance(a, kind) else [a]


def intersect(*parts: Alg) -> Alg:
    """The intersection of ``parts`` (``U`` for none)."""
    out: Alg | None = None
    for p in parts:
        if isinstance(p, Universe):
            continue
        if isinstance(p, Empty) or isinstance(out, Empty):
            out = Empty()
            continue
        out = p if out is None else out if p in _members(out, Intersect) else Intersect(out, p)
    return Universe() if out is None else out


def holds(a: Alg, present) -> bool:
    """Whether a coordinate where exactly the regions ``present`` are defined is in ``a``."""
    if isinstance(a, Region):
        return a.name in present
    if isinstance(a, Universe):
        return True
    if isinstance(a, Empty):
        return False
    if isinstance(a, Union):
        return holds(a.left, present) or holds(a.right, present)
    if isinstance(a, Intersect):
        return holds(a.left, present) and holds(a.right, present)
    if isinstance(a, Complement):
        return not holds(a.arg, present)
    raise TypeError(f"not an iteration algebra: {a!r}")


def regions(a: Alg) -> list[str]:
    """The region names in ``a``, first occurrence first."""
    out: list[str] = []

    def visit(x):
        if isinstance(x, Region):
            if x.name not in out:
                out.append(x.name)
        elif isinstance(x, (Union, Intersect)):
            visit(x.left)
            visit(x.right)
        elif isinstance(x, Complement):
            visit(x.arg)

    visit(a)
    return out


def de_morgan(a: Alg) -> Alg:
    """Push complements down to single regions (the paper's De Morgan pass).

    >>> print(de_morgan(Complement(Intersect(Region("a"), Complement(Region("b"))))))
    (¬a ∪ b)
    """
    if isinstance(a, Complement):
        x = a.arg
        if isinstance(x, Complement):
            return de_morgan(x.arg)
        if isinstance(x, Union):
            return Intersect(de_morgan(Complement(x.left)), de_morgan(Complement(x.right)))
        if isinstance(x, Intersect):
            return Union(de_morgan(Complement(x.left)), de_morgan(Complement(x.right)))
        if isinstance(x, Universe):
            return Empty()
        if isinstance(x, Empty):
            return Universe()
        return a
    if isinstance(a, Union):
        return Union(de_morgan(a.left), de_morgan(a.right))
    if isinstance(a, Intersect):
        return Intersect(de_morgan(a.left), de_morgan(a.right))
    return a


# -- explicit algebras of user functions -------------------------------------------------


def parse_algebra(text: str, params) -> Alg:
    """Parse an explicit algebra over a function's parameter names.

    ``&`` is intersection, ``|`` union, ``!`` complement, ``U`` the universe.

    >>> print(parse_algebra("(x | y) & !(x & y)", ("x", "y")))
    ((x ∪ y) ∩ ¬(x ∩ y))
    >>> parse_algebra("x & z", ("x", "y"))
    Traceback (most recent call last):
    ...
    compiler.lattice.algebra.AlgebraError: iteration algebra 'x & z': z is not a parameter (x, y)
    """
    toks: list[str] = []
    k = 0
    while k < len(text):
        c = text[k]
        if c.isspace():
            k += 1
        elif c in "&|!()∪∩¬~":
            toks.append({"∪": "|", "∩": "&", "¬": "!", "~": "!"}.get(c, c))
            k += 1
        elif c.isalpha() or c == "_":
            j = k
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            toks.append(text[k:j])
            k = j
        else:
            raise AlgebraError(f"iteration algebra {text!r}: unexpected character {c!r}")
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None

    def take():
        t = peek()
        pos[0] += 1
        return t

    def expr():
        a = term()
        while peek() == "|":
            take()
            a = Union(a, term())
        return a

    def term():
        a = factor()
        while peek() == "&":
            take()
            a = Intersect(a, factor())
        return a

    def factor():
        t = take()
        if t == "!":
            return Complement(factor())
        if t == "(":
            a = expr()
            if take() != ")":
                raise AlgebraError(f"iteration algebra {text!r}: missing ')'")
            return a
        if t == "U":
            return Universe()
        if t is None or not (t[0].isalpha() or t[0] == "_"):
            raise AlgebraError(f"iteration algebra {text!r}: expected a parameter, got {t!r}")
        if t not in params:
            raise AlgebraError(f"iteration algebra {text!r}: {t} is not a parameter ({', '.join(params)})")
        return Region(t)

    a = expr()
    if peek() is not None:
        raise AlgebraError(f"iteration algebra {text!r}: unexpected {peek()!r}")
    return a


def _substitute(a: Alg, mapping: dict[str, Alg], complemented: dict[str, Alg] | None = None) -> Alg:
    """``a`` with each parameter region replaced by ``mapping``'s algebra, and each complemented
    one (``a`` has its complements on parameters, after :func:`de_morgan`) by the complement of
    ``complemented``'s (default: ``mapping``'s)."""
    complemented = mapping if complemented is None else complemented
    if isinstance(a, Region):
        return mapping[a.name]
    if isinstance(a, Union):
        return union(_substitute(a.left, mapping, complemented), _substitute(a.right, mapping, complemented))
    if isinstance(a, Intersect):
        return intersect(_substitute(a.left, mapping, complemented), _substitute(a.right, mapping, complemented))
    if isinstance(a, Complement):
        if isinstance(a.arg, Region):
            return Complement(complemented[a.arg.name])
        return Complement(_substitute(a.arg, mapping, complemented))
    return a


# -- derivation ----------------------------------------------------------------------------


def _dtype_of(v):
    return np.asarray(v).dtype


def expr_facts(e, fill_of: Callable[[Access], object]) -> values.Facts:
    """What ``e`` may hold (:class:`compiler.values.Facts`): its accesses' stored values (as the
    lowering assumes them, :func:`compiler.values.assumed`) and fills, propagated bottom-up.

    >>> from compiler.notation import parse
    >>> str(expr_facts(parse("a[i] = b[i] + c[i]").rhs, lambda acc: float("inf") if acc.tensor == "c" else 0.0))
    'may hold +inf'
    >>> str(expr_facts(parse("c[k] = collapse(A[i, j], (i, j) -> k)").rhs, lambda acc: float("nan")))
    'may hold NaN'
    """
    if isinstance(e, Access):
        fill = fill_of(e)
        if fill is not NOVALUE and np.asarray(fill).dtype.kind in "biu":
            return values.FINITE
        return values.assumed(e.tensor) | (values.ANY if fill is NOVALUE else values.of_value(fill))
    if isinstance(e, Literal):
        return values.of_value(e.value)
    if isinstance(e, IndexValue):
        return values.FINITE
    if isinstance(e, Call):
        return values.of_call(e.op, [expr_facts(a, fill_of) for a in e.args])
    if isinstance(e, Reduce):
        body = expr_facts(e.body, fill_of)
        # (an empty reduction is the identity: min's is inf)
        return values.of_reduce(e.op, body) | (values.of_value(e.op.identity)
                                                if e.op.identity is not NOVALUE else values.FINITE)
    if isinstance(e, ShapeOp):
        # (a shape operator moves its operands' values, their fills too, and computes none)
        out = values.FINITE
        for c in e.children():
            out = out | expr_facts(c, fill_of)
        return out
    return values.ANY


def annihilating(e, op: Operator, ann, k: int, args, fill_of) -> bool:
    """Whether ``ann`` at argument ``k`` of ``e`` (a call of ``op`` on ``args``) annihilates,
    given what the other arguments may hold; records the decision for the trace when it
    depends on them (:func:`compiler.values.decide`)."""
    others = [expr_facts(a, fill_of) for n, a in enumerate(args) if n != k]
    ok, why = values.annihilates(op, ann, others)
    if ann.unless:
        values.decide("sparse-path" if ok else "exact-path", e,
                      f"{_py_text(ann.value)} at argument {k + 1} annihilates: {why}" if ok else why)
    return ok


def _py_text(v) -> str:
    if isinstance(v, float) and v != v:
        return "NaN"
    return {math.inf: "inf", -math.inf: "-inf"}.get(v, str(v)) if isinstance(v, float) else str(v)


def derive(e, fill_of: Callable[[Access], object], rules: list | None = None):
    """``(algebra, fill)`` of the index-notation expression ``e``.

    ``fill_of(access)`` gives each access's fill. The names of the rules that fired
    are appended to ``rules`` (and returned as a third element when ``rules`` is None).
    """
    own = rules is None
    log: list[str] = [] if own else rules
    out = _derive(e, fill_of, log)
    return (*out, log) if own else out


def _derive(e, fill_of, log):
    if isinstance(e, Access):
        return Region(str(e)), fill_of(e)
    if isinstance(e, IndexValue):
        # a coordinate: a different value at each, so no fill, and every coordinate may matter
        return Universe(), NOVALUE
    if isinstance(e, Literal):
        # a literal equals its own fill everywhere: it is defined nowhere
        return Empty(), np.asarray(e.value, dtype=e.dtype)[()]
    if isinstance(e, Reduce):
        alg, f = _derive(e.body, fill_of, log)
        ident = e.op.identity_for(_dtype_of(f)) if f is not NOVALUE else NOVALUE
        if f is not NOVALUE and ident is not NOVALUE and same_value(f, ident):
            log.append(f"reduce-identity: {e}")
            return alg, ident
        log.append(f"reduce-universe: {e}")
        if f is NOVALUE or not e.op.reducible:
            return Universe(), NOVALUE
        one, two = e.op.reduce_fill(f, 1), e.op.reduce_fill(f, 2)
        return Universe(), one if same_value(one, two) else NOVALUE
    if isinstance(e, Call):
        parts = [_derive(a, fill_of, log) for a in e.args]
        algs = [p[0] for p in parts]
        fills = [p[1] for p in parts]
        return _derive_call(e, e.op, algs, fills, log, fill_of)
    raise TypeError(f"cannot derive an iteration algebra for {e!r}")


def stated(op: Operator) -> tuple[Alg, dict]:
    """The iteration algebra the user function ``op`` states, complements pushed onto its parameters
    (:func:`de_morgan`), and the fill each parameter is assumed at (0 where not given).

    >>> from compiler.user_functions import user_function
    >>> f = user_function("f", lambda x, y: x * y, "return x * y;", algebra=("x & !y", {"y": 1.0}))
    >>> alg, assumed = stated(f)
    >>> print(alg, assumed)
    (x ∩ ¬y) {'y': 1.0}
    """
    text, assumed = (op.algebra, {}) if isinstance(op.algebra, str) else (op.algebra[0], dict(op.algebra[1]))
    return de_morgan(parse_algebra(text, op.params)), assumed


# -- a stated algebra checked against the function's values ------------------------------------------
#
# A statement ``algebra="x & y"`` says where the function may differ from its fill: outside the stated
# region (where x or y is at its fill) it is one value, the result's fill. Both lattices skip those
# coordinates, so a wrong statement gave wrong values silently. check_stated evaluates the function's
# Python implementation at every pattern of present and absent arguments outside the region: an absent
# argument at its fill, a present one at each probe value that is not its fill (PROBES, the fills, and
# NaN, +inf, -inf where the argument may hold them, as the lowering assumes its values). What is checked
# is the function at those probes only: one leaving its fill at another value alone (x == 7 ? 1 : 0
# stated x & y) is not caught, nor is its C body (the Python implementation is the oracle).

#: the values a present argument is probed at (besides the fills, and the non-finite ones it may hold)
PROBES = (0, 1, -1, 2, 0.5, -0.5)

#: at most this many evaluations per pattern of present arguments (a function of many parameters)
LIMIT = 4096

#: the statements checked, by the function, its statement, the fills and what the arguments may hold
_CHECKED: dict = {}


def check_stated(e, facts: list) -> None:
    """Refuse (:class:`AlgebraError`) the iteration algebra stated by the user function of the call ``e``
    where its values contradict it (the comment above says what is checked); ``facts``: what each argument
    may hold (:class:`compiler.values.Facts`). It is checked at the fills it is stated for
    (:func:`stated`), which the lattices use it at only.

    >>> from compiler.user_functions import user_function
    >>> from compiler.notation import parse_expr
    >>> add = user_function("add2", lambda x, y: x + y, "return x + y;", algebra="x & y")
    >>> check_stated(parse_expr("add2(a[i], b[i])", functions={"add2": add}), [values.FINITE, values.FINITE])
    Traceback (most recent call last):
    ...
    compiler.lattice.algebra.AlgebraError: add2 states the iteration algebra 'x & y' (so that it is its fill 0 wherever its arguments are outside it), but add2(x=1, y=0) is 1: x present at 1, y absent at its fill 0; lower it without algebra= (the lattice takes the union of its arguments), or state where it differs from its fill
    >>> mul = user_function("mul2", lambda x, y: x * y, "return x * y;", algebra="x & y")
    >>> e = parse_expr("mul2(a[i], b[i])", functions={"mul2": mul})
    >>> check_stated(e, [values.FINITE, values.FINITE])
    >>> check_stated(e, [values.Facts(posinf=True), values.FINITE])
    Traceback (most recent call last):
    ...
    compiler.lattice.algebra.AlgebraError: mul2 states the iteration algebra 'x & y' (so that it is its fill 0 wherever its arguments are outside it), but mul2(x=inf, y=0) is NaN: x present at inf, y absent at its fill 0; lower it without algebra= (the lattice takes the union of its arguments), or state where it differs from its fill
    """
    op = e.op
    alg, assumed = stated(op)
    fills = tuple(assumed.get(p, 0) for p in op.params)
    kinds = tuple(f.kinds() for f in facts)
    key = (op.impl_key(), str(op.algebra), repr(fills), kinds)
    if key not in _CHECKED:
        if len(_CHECKED) >= 4096:
            _CHECKED.pop(next(iter(_CHECKED)))
        _CHECKED[key] = _counterexample(op, alg, fills, kinds)
    bad = _CHECKED[key]
    if bad is not None:
        raise AlgebraError(_refusal(op, bad, fills))


def _counterexample(op, alg, fills: tuple, kinds: tuple):
    """The first evaluation outside the stated region that is not the value the others are:
    ``(args, present, value, fill value)``; None where there is none."""
    nonfinite = {"nan": float("nan"), "+inf": float("inf"), "-inf": float("-inf")}
    outside = None      # (the value outside the stated region: the first one found, the fills' when ∅ is out)
    patterns = [frozenset(c) for n in range(len(op.params) + 1) for c in itertools.combinations(op.params, n)]
    for present in patterns:
        if holds(alg, set(present)):
            continue
        choices = []
        for p, fill, k in zip(op.params, fills, kinds):
            if p not in present:
                choices.append((fill,))
                continue
            probes = [*PROBES, *fills, *(nonfinite[x] for x in k)]
            choices.append(tuple(dict.fromkeys(v for v in probes if not same_value(v, fill))))
        for args in itertools.islice(itertools.product(*choices), LIMIT):
            try:
                got = np.asarray(op(*args)).item()
            except Exception:       # (a probe the function does not take, gcd of a float: nothing checked)
                continue
            if outside is None:
                outside = (args, present, got)
            elif not same_value(got, outside[2]):
                return args, present, got, outside
    return None


def _refusal(op, bad, fills: tuple) -> str:
    args, present, got, (first_args, first_present, first) = bad
    if not first_present:
        where = f"its fill {_py_text(first)}"
    else:
        where = f"{_py_text(first)} (as {_call_text(op, first_args)} is)"
    parts = [f"{p} present at {_py_text(v)}" if p in present else f"{p} absent at its fill {_py_text(f)}"
             for p, v, f in zip(op.params, args, fills)]
    return (f"{op.name} states the iteration algebra {_statement(op)!r} (so that it is {where} wherever its "
            f"arguments are outside it), but {_call_text(op, args)} is {_py_text(got)}: {', '.join(parts)}; lower it without "
            f"algebra= (the lattice takes the union of its arguments), or state where it differs from its fill")


def _statement(op):
    return op.algebra if isinstance(op.algebra, str) else op.algebra[0]


def _call_text(op, args) -> str:
    return f"{op.name}({', '.join(f'{p}={_py_text(v)}' for p, v in zip(op.params, args))})"


def _derive_call(e, op: Operator, algs, fills, log, fill_of=None):
    known = all(f is not NOVALUE for f in fills)
    fill = op.fill(*fills)
    if op.algebra is not None:
        alg, assumed = stated(op)   # (complements now on parameters alone)
        for k, p in enumerate(op.params):
            want = assumed.get(p, 0)
            if not known or not same_value(fills[k], typed_scalar(want, _dtype_of(fills[k]))):
                log.append(f"explicit-algebra-fill-mismatch: {e}")
                return Universe(), fill
        check_stated(e, [expr_facts(a, fill_of or (lambda acc: 0.0)) for a in e.args])
        # a derived algebra over-approximates where an argument differs from its fill (c - d may
        # be 0 where both are stored): sound where the parameter is used, not under a complement,
        # which needs where it surely differs; an access is exact, a compound argument gives ∅
        surely = {p: algs[k] if isinstance(e.args[k], Access) else Empty() for k, p in enumerate(op.params)}
        out = de_morgan(_substitute(alg, dict(zip(op.params, algs)), surely))
        if holds(out, set()):
            # the algebra includes coordinates where no argument is defined: it is stated
            # relative to the result's fill, which f(fills) is not
            log.append(f"explicit-algebra-relative: {e}")
            return out, NOVALUE
        log.append(f"explicit-algebra: {e}")
        return out, fill
    n = len(algs)
    at = op.selected_by(fills) if known else None
    if at is not None:
        # where the conditions are all at their fills the result is the argument they pick, so it
        # differs from that one's fill only where that argument does, or where a condition is
        # stored and picks an argument that differs from it there (where(b != c, x, 0.0) is fill
        # 0 wherever neither b nor c is stored, whatever x holds)
        conds = union(*(algs[k] for k in range(n) if k not in op.selects))
        others = union(*(algs[k] if same_value(fills[k], fills[at]) else Universe()
                         for k in op.selects if k != at))
        log.append(f"selection-by-condition: {e}")
        return union(algs[at], intersect(conds, others)), fill
    chosen = op.selected_fill(fills)
    if chosen is not NOVALUE and op.selects:
        # (where the selected arguments are all at their one fill, so is the result: the others,
        # a condition, may be stored anywhere without making a point)
        log.append(f"selection: {e}")
        return union(*(algs[k] for k in op.selects)), chosen
    # (an annihilator needs only its own argument's fill: B * i is 0 wherever B is absent, the
    # index value i having no fill)
    for ann in op.annihilators:
        if n < 1:
            break
        positions = ann.positions or range(n)
        hit = [k for k in positions if fills[k] is not NOVALUE and ann.holds_for(_dtype_of(fills[k]))
               and same_value(fills[k], ann.value_for(_dtype_of(fills[k])))]
        if hit and fill is not NOVALUE and ann.holds_for(_dtype_of(fill)) \
                and same_value(fill, ann.value_for(_dtype_of(fill))):
            # (only where the other arguments cannot hold a value it does not annihilate: 0 * NaN)
            hit = [k for k in hit if annihilating(e, op, ann, k, e.args, fill_of)]
            if hit:
                log.append(f"annihilator: {e}")
                return intersect(*(algs[k] for k in hit)), fill
            log.append(f"annihilator-unsafe: {e}")
    if not known:
        log.append(f"unknown-fill: {e}")
        return Universe(), fill
    if op.idempotent and n >= 2 and all(same_value(f, fills[0]) for f in fills):
        log.append(f"idempotent: {e}")
        return union(*algs), fill
    if op.identity is not NOVALUE and n == 2:
        positions = op.identity_positions or range(2)
        # (a complex fill of 1 is no identity of a product: Operator.neutral_for)
        ident = [k for k in positions if same_value(fills[k], op.neutral_for(_dtype_of(fills[k])))]
        if ident and all(same_value(fill, fills[1 - k]) for k in ident):
            log.append(f"identity: {e}")
            return union(*algs), fill
    log.append(f"union-fallback: {e}")
    return union(*algs), fill


__all__ = ["Alg", "Region", "Universe", "Empty", "Union", "Intersect", "Complement", "show_algebra", "union",
           "intersect", "holds", "regions", "de_morgan", "parse_algebra", "stated", "derive",
           "expr_facts", "annihilating", "check_stated", "PROBES",
           "AlgebraError"]
