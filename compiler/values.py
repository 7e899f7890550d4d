"""Facts about values: whether a tensor or an expression may hold NaN, +inf or -inf.

Whether an annihilator really annihilates depends on what the other operands hold:
``0 * y`` is 0 only for a finite ``y``, ``inf + y`` is ``inf`` unless ``y`` is NaN or
``-inf`` (see :class:`compiler.algebra.Annihilator`). A tensor knows :class:`Facts` about
its stored values (:attr:`compiler.tensor.Tensor.value_facts`, computed once); this module
propagates them bottom-up through expressions and holds the facts a lowering assumes
(:func:`assuming`), so that both strategies take the sparse path (intersections, skipped
products) only where the facts allow it, and the exact path otherwise.

>>> from compiler.algebra import lookup
>>> facts = of_array(np.array([1.0, np.inf]))
>>> str(facts), facts.finite
('may hold +inf', False)
>>> str(of_call(lookup("*"), [FINITE, facts]))     # inf * 0 is NaN
'may hold NaN, +inf, -inf'
>>> str(of_call(lookup("+"), [FINITE, FINITE]))    # both under 2^64: their sum is under 2^65
'finite'
>>> big = of_array(np.array([1e200]))                 # 1e200 * 1e200 overflows to inf (and inf * 0 is NaN)
>>> str(big), str(of_call(lookup("*"), [big, big]))
('finite, of magnitude up to 2^1024', 'may hold +inf, -inf')

Rules (sound for every value, with one documented exception):

* integer and boolean values are finite; comparisons and logical operators give booleans;
* ``+ - * min max neg abs choose overwrite`` of finite values are finite unless they may overflow:
  :attr:`Facts.scale` bounds the magnitude of the finite values (``|x| < 2 ** scale``), an array's
  quantized to five steps of its dtype (under 2^64, the common case, 2^128, 2^256, 2^512 or any
  float64; under 2^8, 2^16, 2^32, 2^64 or any float32) so that kernels specialized on facts stay
  few; ``+`` adds one to the larger scale, ``*`` adds the scales, a sum over ``n < 2^64`` values
  adds 64, and a result past the lowering's overflow scale may be ±inf (2^1024, float64's; 2^128 in a
  kernel with a float32 tensor, whose arithmetic overflows there: :func:`assuming`);
* ``/``, ``pow``, ``log``, ``exp``, ``sqrt`` and user functions with a float result may give
  any non-finite value from finite operands (``1 / 0``, ``log(0)``, ``exp(1000)``).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass, replace

import numpy as np

from . import serialize
from .errors import UsageError


@serialize.node
@dataclass(frozen=True)
class Facts:
    """Which non-finite values some values may include (False: surely none)."""

    nan: bool = False
    posinf: bool = False
    neginf: bool = False
    #: the values may be complex: each fact above is of either part, and what keeps a real value finite
    #: need not keep a complex one so (``sin(1000j)`` has an infinite imaginary part)
    complex: bool = False
    #: every finite value (each part of a complex one) is under ``2 ** scale`` in magnitude
    scale: int = 64

    @property
    def finite(self) -> bool:
        return not (self.nan or self.posinf or self.neginf)

    @property
    def small(self) -> bool:
        """Finite and under 2^64 in magnitude (:data:`SMALL`), 2^8 in a kernel with a float32 tensor (a
        sixteenth of its overflow scale, :func:`small_scale`): ``+ - *`` of a few such values stay finite,
        which the lowerings assume of a tensor's values where they fold ``0 * x`` to 0.

        >>> FINITE.small, of_array(np.array([1e300])).small, of_array(np.array([1e300])).finite
        (True, False, True)
        >>> with assuming({}, limit=128):
        ...     FINITE.small, of_array(np.array([100.0], dtype=np.float32)).small
        (False, True)
        """
        return self.finite and self.scale <= small_scale()

    def kinds(self) -> tuple[str, ...]:
        """The non-finite values possible, as :class:`~compiler.algebra.Annihilator` names them."""
        return tuple(k for k, on in (("nan", self.nan), ("+inf", self.posinf), ("-inf", self.neginf)) if on)

    def __or__(self, other: "Facts") -> "Facts":
        return Facts(self.nan or other.nan, self.posinf or other.posinf, self.neginf or other.neginf,
                     self.complex or other.complex, max(self.scale, other.scale))

    def __le__(self, other: "Facts") -> bool:
        """Whether every value these facts allow, ``other``'s allow too."""
        return (not self.nan or other.nan) and (not self.posinf or other.posinf) \
            and (not self.neginf or other.neginf) and self.scale <= other.scale

    def __str__(self) -> str:
        if self.finite:
            # (a scale below float64's largest is an intermediate bound, not worth a word)
            return "finite" if self.scale < LIMIT else f"finite, of magnitude up to 2^{self.scale}"
        return "may hold " + ", ".join({"nan": "NaN"}.get(k, k) for k in self.kinds())


#: the scale of an array's values under 2^64 (:attr:`Facts.scale`); float64's largest finite value is under 2^1024
SMALL, LIMIT = 64, 1024
FINITE = Facts()
ANY = Facts(True, True, True, scale=LIMIT)
FINITE_COMPLEX = Facts(complex=True)
ANY_COMPLEX = Facts(True, True, True, complex=True, scale=LIMIT)
#: a float32 array's small values: under 2^8 (float32's largest finite value is under 2^128)
FINITE32 = Facts(scale=8)
FINITE32_COMPLEX = Facts(complex=True, scale=8)


def overflow_scale(dtype) -> int:
    """The scale past which arithmetic of ``dtype`` overflows: 128 for float32 (and complex64), else 1024
    (float64's; an integer's wraps, and the facts of an integer result are finite).

    >>> overflow_scale("float32"), overflow_scale(np.complex128), overflow_scale("int8")
    (128, 1024, 1024)
    """
    d = np.dtype(dtype)
    return 128 if d.kind in "fc" and d.itemsize == (4 if d.kind == "f" else 8) else LIMIT


def limit_of(dtypes) -> int:
    """The overflow scale of a kernel computing in ``dtypes`` (None for one not known): its narrowest float's,
    since its arithmetic of that dtype is done in that dtype (a float32 product overflows at 2^128).

    >>> limit_of(["float64", "int32"]), limit_of(["float64", None, "float32"])
    (1024, 128)
    """
    return min((overflow_scale(d) for d in dtypes if d is not None), default=LIMIT)


def small_scale(limit: int | None = None) -> int:
    """The scale of small values (:attr:`Facts.small`) under the overflow scale ``limit`` (the current
    lowering's, :func:`assuming`, by default): a sixteenth of it, so that a product of 15 of them stays finite.

    >>> small_scale(), small_scale(128)
    (64, 8)
    """
    return (current_limit() if limit is None else limit) // 16


def finite_of(dtype=None) -> Facts:
    """The facts a lowering assumes of a tensor of ``dtype`` given by its format alone (as TACO and Finch
    assume): small finite values, under 2^64 for float64 and 2^8 for float32 (:func:`small_scale`); a call
    with larger values lowers again.

    >>> str(finite_of("float32")), finite_of("float32").scale, finite_of(None) is FINITE
    ('finite', 8, True)
    """
    d = None if dtype is None else np.dtype(dtype)
    if d is None or overflow_scale(d) == LIMIT:
        return FINITE_COMPLEX if d is not None and d.kind == "c" else FINITE
    return FINITE32_COMPLEX if d.kind == "c" else FINITE32


def _quantized(magnitude: float, dtype) -> int:
    """The scale of finite values of ``dtype`` whose largest magnitude is ``magnitude``: the least of its five
    steps (its small scale doubled up to its overflow scale) above it."""
    limit = overflow_scale(dtype)
    scale = small_scale(limit)
    while scale < limit and magnitude >= 2.0 ** scale:
        scale *= 2
    return scale


def of_array(values, exact: bool = False) -> Facts:
    """The facts of the values of an array (integer and boolean arrays are finite), their scale quantized to the
    steps of its dtype (:attr:`Facts.scale`), or ``exact``.

    >>> str(of_array(np.array([np.nan, -np.inf]))), of_array(np.arange(3)).finite
    ('may hold NaN, -inf', True)
    >>> of_array(np.array([3e20])).scale, of_array(np.array([3e20]), exact=True).scale
    (128, 69)
    """
    if exact:
        return _exactly(np.asarray(values))
    arr = np.asarray(values)
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return finite_of(arr.dtype) if arr.dtype.kind in "fc" else FINITE
    small = finite_of(arr.dtype)
    parts = arr.reshape(-1).view(arr.real.dtype) if arr.dtype.kind == "c" else arr.reshape(-1)
    largest = _largest(parts, 2.0 ** small.scale)
    if largest is not None:
        return small if largest < 2.0 ** small.scale else replace(small, scale=_quantized(largest, arr.dtype))
    if arr.dtype.kind == "c":
        return replace(ANY_COMPLEX, scale=overflow_scale(arr.dtype))
    # (fmax and fmin skip NaN: three passes without the two temporaries isposinf and isneginf make,
    # a quarter of the time on a distance vector holding inf, which a Bellman-Ford round checks)
    finite = arr[np.isfinite(arr)]
    return Facts(bool(np.isnan(arr).any()), bool(np.fmax.reduce(arr, axis=None) == np.inf),
                 bool(np.fmin.reduce(arr, axis=None) == -np.inf),
                 scale=_quantized(float(np.abs(finite).max()) if finite.size else 0.0, arr.dtype))


def small_value(v) -> bool:
    """Whether the scalar ``v`` (a fill, a literal) is finite and small (:attr:`Facts.small`: under 2^64, or 2^8 in
    a kernel with a float32 tensor), without building its facts.

    >>> small_value(1e19), small_value(-2e19), small_value(float("nan")), small_value(1 + 1j)
    (True, False, False, True)
    """
    return bool(abs(v) < 2.0 ** small_scale())


def _largest(v, bound: float) -> float | None:
    """The largest magnitude of the real vector ``v``, or 0 where every value is under ``bound`` in magnitude; None
    where it holds a NaN or an infinity. Float64's common case in one pass: a sum of squares under ``bound ** 2``
    holds only then (a NaN, an infinity or one value past ``bound`` puts it past, rounding too, as a rounded sum of
    squares is never below its largest). Else, and for float32 (whose bound, 2^8, a long vector's squares pass),
    a maximum and a minimum, which a NaN makes NaN."""
    if v.size <= 16:   # (a kernel call checks a small vector argument every time: a list beats numpy calls)
        vals = v.tolist()
        if sum(map(abs, vals)) < bound:
            return 0.0
        largest = max(map(abs, vals))
        return largest if math.isfinite(largest) and all(x == x for x in vals) else None
    if v.dtype.itemsize == 8:
        with np.errstate(all="ignore"):   # (an overflow of the squares is the answer, not a warning)
            if np.dot(v, v) < bound * bound:
                return 0.0
    largest = max(float(v.max()), -float(v.min()))
    return largest if math.isfinite(largest) else None


def _exactly(arr) -> Facts:
    """:func:`of_array`'s facts of ``arr`` with the least scale of its finite values."""
    quantized = of_array(arr)
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return quantized
    parts = arr.reshape(-1).view(arr.real.dtype) if arr.dtype.kind == "c" else arr.reshape(-1)
    finite = np.abs(parts[np.isfinite(parts)])
    # (|v| < 2 ** e where v = m * 2 ** e, 0.5 <= |m| < 1)
    return replace(quantized, scale=max(1, math.frexp(float(finite.max()))[1]) if finite.size else 1)


def of_value(value) -> Facts:
    """The facts of one value (a fill, a literal), its scale exact (one value makes no kernel of its own); an
    unknown one (not a number) may be anything.

    >>> of_value(100.0).scale, of_value(-0.5 + 3j).scale, str(of_value(float("inf"))), of_value(0.0).scale
    (7, 2, 'may hold +inf', 1)
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        return ANY
    return of_array(arr, exact=True)


# operators whose result is finite where their operands are (overflow aside, see the module doc)
_CLOSED = {"add", "sub", "mul", "min", "max", "neg", "abs", "choose", "overwrite"}
_BOOLEAN = {"not", "isnan", "lt", "le", "gt", "ge", "eq", "ne", "and", "or", "bitand", "bitor", "bitxor"}


def of_call(op, args: list[Facts], result_dtype=None) -> Facts:
    """The facts of ``op(args...)`` from its arguments' facts (``result_dtype``, when known,
    makes an integer or boolean result finite).

    >>> from compiler.algebra import lookup
    >>> str(of_call(lookup("+"), [Facts(posinf=True), Facts(neginf=True)]))   # inf + -inf is NaN
    'may hold NaN, +inf, -inf'
    >>> str(of_call(lookup("min"), [Facts(nan=True), FINITE])), str(of_call(lookup("neg"), [Facts(posinf=True)]))
    ('may hold NaN', 'may hold -inf')
    """
    if result_dtype is not None and np.dtype(result_dtype).kind in "biu":
        return FINITE
    if op.is_user:
        if op.dtype is not None and np.dtype(op.dtype).kind in "biu":
            return FINITE
        return ANY_COMPLEX if any(f.complex for f in args) else ANY
    name = op.name
    if name in _BOOLEAN or name == "astype" and np.dtype(op.param).kind in "biu":
        return FINITE
    out = _of_float_call(op, name, args)
    limit = current_limit() if result_dtype is None else min(current_limit(), overflow_scale(result_dtype))
    scale = _SCALE.get(name, _ANY_SIZE)([a.scale for a in args]) if args else SMALL
    if out.complex and name in _BOUNDED or out.nan and out.posinf and out.neginf:
        scale = LIMIT   # (bounded for real values only: sin(1000j) is about 1e434j; anything is of any size)
    if name == "astype" and np.dtype(op.param).kind in "fc" and scale > np.finfo(op.param).maxexp:
        scale = LIMIT + 1   # (1e300 as a float32 is inf)
    if scale > limit:   # (an overflow: past the largest float the kernel computes in, to an infinity of either sign)
        return Facts(out.nan, True, True, out.complex, LIMIT)
    return replace(out, scale=scale)


def _ANY_SIZE(scales) -> int:
    return LIMIT


#: functions whose finite real results are bounded whatever their operands, and the scale of that bound
_BOUNDED = {"sin": 2, "cos": 2, "atan": 2, "tanh": 2, "asin": 2, "acos": 2, "atan2": 2,   # (under pi)
            "log": 11, "log1p": 11, "log2": 11, "log10": 11,   # (log2 of the least subnormal is -1074)
            "tan": SMALL}   # (tan of the float next to pi/2 is about 1.6e16)
#: the scale of each operator's finite results from its operands' (:attr:`Facts.scale`); any other's, any value's
_SCALE = {"add": lambda s: max(s) + 1, "sub": lambda s: max(s) + 1, "mul": lambda s: sum(s) + 1,
          "hypot": lambda s: max(s) + 1, "sqrt": lambda s: s[0] // 2 + 1,
          **{name: max for name in ("min", "max", "choose", "overwrite", "neg", "abs", "floor", "ceil", "trunc",
                                    "round", "asinh", "copysign", "real", "imag", "conj", "astype")},
          **{name: (lambda bound: lambda s: bound)(bound) for name, bound in _BOUNDED.items()}}


def _of_float_call(op, name: str, args: list[Facts]) -> Facts:
    """:func:`of_call`'s non-finite values of a built-in operator of float (or complex) operands."""
    union = FINITE
    for f in args:
        union = union | f
    if union.complex or name == "astype" and np.dtype(op.param).kind == "c":
        return _of_complex_call(name, args, union)
    if name in ("min", "max", "choose", "overwrite"):
        return union
    if name == "neg":
        return Facts(args[0].nan, args[0].neginf, args[0].posinf)
    if name == "abs":
        return Facts(args[0].nan, args[0].posinf or args[0].neginf, False)
    if name == "add" or name == "sub":
        a, b = args
        if name == "sub":
            b = Facts(b.nan, b.neginf, b.posinf)
        nan = a.nan or b.nan or (a.posinf and b.neginf) or (a.neginf and b.posinf)
        return Facts(nan, a.posinf or b.posinf, a.neginf or b.neginf)
    if name == "mul":
        # an infinity times anything (0 gives NaN, a negative flips the sign) may be anything
        return ANY if (union.posinf or union.neginf) else union
    if name == "sqrt":
        return Facts(True, args[0].posinf, False)
    if name == "exp":
        return Facts(args[0].nan, True, False)
    if name in ("sin", "cos", "tan"):
        # finite in, finite out (tan of a float never reaches a pole); an infinity gives NaN
        return Facts(not args[0].finite, False, False)
    if name in ("floor", "ceil", "trunc", "round", "asinh"):
        return args[0]
    if name in ("atan", "tanh"):   # bounded: only NaN gives NaN
        return Facts(args[0].nan, False, False)
    if name in ("sinh", "cosh", "expm1"):   # overflow: sinh(710.0) is inf
        a = args[0]
        return Facts(a.nan, True, name == "sinh")
    if name in ("asin", "acos"):   # NaN outside [-1, 1]
        return Facts(True, False, False)
    if name == "atan2":
        return Facts(args[0].nan or args[1].nan, False, False)
    if name == "hypot":   # hypot(inf, nan) is inf; an overflow gives inf
        return Facts(args[0].nan or args[1].nan, True, False)
    if name == "copysign":
        a = args[0]
        return Facts(a.nan, a.posinf or a.neginf, a.posinf or a.neginf)
    if name == "nextafter":   # the largest finite float's next toward an infinity is that infinity
        return Facts(args[0].nan or args[1].nan, True, True)
    return ANY   # div, pow, log, ldexp, acosh, atanh, log1p, log2, log10: non-finite from finite operands


#: what keeps a complex value finite (overflow aside, as for real values)
_COMPLEX_CLOSED = {"add", "sub", "mul", "neg", "conj", "choose", "overwrite", "round", "astype"}


def _of_complex_call(name: str, args: list[Facts], union: Facts) -> Facts:
    """The facts of ``name`` applied to operands one of which may be complex: a part (``real``, ``imag``)
    or the magnitude keep what the value held, a closed operator keeps finite values finite, and every
    other function (``sin``, ``exp``, ``sqrt``, ``/``, ...) may give any non-finite part.

    >>> str(_of_complex_call("sin", [FINITE_COMPLEX], FINITE_COMPLEX)), str(_of_complex_call("real", [ANY_COMPLEX], ANY_COMPLEX))
    ('may hold NaN, +inf, -inf', 'may hold NaN, +inf, -inf')
    """
    a = args[0]
    if name in ("real", "imag"):   # (a real result: the flag goes)
        return Facts(a.nan, a.posinf or a.neginf, a.posinf or a.neginf)
    if name == "abs":
        return Facts(a.nan, a.posinf or a.neginf, False)
    if name in _COMPLEX_CLOSED and union.finite:
        return FINITE_COMPLEX
    return ANY_COMPLEX


def of_reduce(op, body: Facts, result_dtype=None) -> Facts:
    """The facts of a reduction by ``op`` of values with ``body``'s facts (the identity of an
    empty reduction is its fill, known exactly, so it is not counted here): a sum of fewer than 2^64
    values is 64 past its terms' scale; a float product of any count may overflow.

    >>> from compiler.algebra import lookup
    >>> of_reduce(lookup("+"), FINITE).scale, str(of_reduce(lookup("*"), FINITE))
    (128, 'may hold +inf, -inf')
    """
    once = of_call(op, [body, body], result_dtype) if op.arity == 2 else ANY
    out = once | of_call(op, [once, once], result_dtype) if op.arity == 2 else once
    if op.is_user or result_dtype is not None and np.dtype(result_dtype).kind in "biu":
        return out
    if op.name == "add":   # (fewer than 2^64 terms: one + of a term 2^63 times the body's largest, overflow checked)
        return of_call(op, [replace(body, scale=body.scale + SMALL - 1), body], result_dtype) | out
    if op.name == "mul":
        return out | Facts(posinf=True, neginf=True, scale=LIMIT)
    return out


# -- the facts a lowering assumes ------------------------------------------------------------

_ASSUMED: contextvars.ContextVar = contextvars.ContextVar("sparsescope_value_facts", default=None)


@dataclass
class Assumptions:
    """The facts a lowering assumes of each tensor's stored values, and what they decided.

    ``decisions`` collects ``(rule, expression, why)``: ``sparse-path`` where an annihilator
    was used, ``exact-path`` where the facts did not allow it.
    """

    facts: dict
    decisions: list
    #: the scale past which the kernel's arithmetic overflows (:func:`limit_of` its dtypes)
    limit: int = LIMIT

    def of(self, tensor: str) -> Facts:
        """The facts of ``tensor``'s stored values; a tensor the lowering made (a converted copy,
        a workspace) is taken to hold whatever any given tensor may."""
        if tensor in self.facts:
            return self.facts[tensor]
        out = FINITE
        for f in self.facts.values():
            out = out | f
        return out

    def decide(self, rule: str, expr, why: str) -> None:
        entry = (rule, str(expr), why)
        if entry not in self.decisions:
            self.decisions.append(entry)


@contextlib.contextmanager
def assuming(facts: dict, limit: int = LIMIT):
    """Lower under the facts ``{tensor: Facts}`` and the overflow scale ``limit`` (:func:`limit_of` the kernel's
    dtypes: 128 where it computes in float32); yields the :class:`Assumptions`.

    >>> from compiler.algebra import lookup
    >>> with assuming({}, limit=128):     # (a float32 product of values under 2^64 may pass float32's largest)
    ...     str(of_call(lookup("*"), [FINITE, FINITE]))
    'may hold +inf, -inf'
    """
    a = Assumptions(dict(facts), [], limit)
    token = _ASSUMED.set(a)
    try:
        yield a
    finally:
        _ASSUMED.reset(token)


def current_limit() -> int:
    """The overflow scale of the current lowering (:func:`assuming`), float64's outside one."""
    a = _ASSUMED.get()
    return LIMIT if a is None else a.limit


def assumed(tensor: str) -> Facts:
    """The facts assumed of ``tensor``'s stored values: finite outside :func:`assuming` (a
    strategy called on formats alone, as TACO and Finch assume)."""
    a = _ASSUMED.get()
    return FINITE if a is None else a.of(tensor)


def assume(tensor: str, facts: Facts) -> None:
    """Record, in the current lowering's assumptions (if any), the facts of a tensor the lowering
    made itself: a temporary holding a reduction may hold what its values may, and its identity
    (``max`` of no values is ``-inf``), not what the given tensors may.

    >>> with assuming({"A": FINITE}) as a:
    ...     assume("t", Facts(neginf=True))
    >>> str(a.of("t"))
    'may hold -inf'
    """
    a = _ASSUMED.get()
    if a is not None:
        a.facts[tensor] = facts


def check_assumed(name: str, held: Facts, facts: Facts, built: str, remedy: str) -> None:
    """Refuse values a lowering was not built for: ``name``'s stored values hold ``held``, beyond the ``facts``
    ``built`` (what the lowering made, e.g. "the CFIR") assumed of them; ``remedy`` says what to do instead.

    >>> check_assumed("A", FINITE, ANY, "the CFIR", "...")     # (fewer values than assumed: served)
    >>> check_assumed("A", Facts(posinf=True), FINITE, "the CFIR", "call cfir_evaluate")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    compiler.errors.UsageError: A may hold +inf, but the CFIR was built assuming A finite (...); call cfir_evaluate
    """
    if (facts | held) != facts:
        raise UsageError(f"{name} {held}, but {built} was built assuming {name} {facts} (outside values.assuming, "
                         f"stored values are taken as finite): its intersections would leave out what {name}'s "
                         f"non-finite values make of another tensor's fill (inf * 0 is NaN); {remedy}")


def decide(rule: str, expr, why: str) -> None:
    """Record an annihilation decision in the current lowering's assumptions (if any)."""
    a = _ASSUMED.get()
    if a is not None:
        a.decide(rule, expr, why)


def annihilates(op, ann, others: list[Facts]) -> tuple[bool, str]:
    """Whether :class:`~compiler.algebra.Annihilator` ``ann`` of ``op`` annihilates, the other
    arguments having the facts ``others``; and why (for the trace).

    >>> from compiler.algebra import lookup
    >>> ok, why = annihilates(lookup("*"), lookup("*").annihilators[0], [Facts(nan=True)])
    >>> ok, why
    (False, 'another operand may hold NaN, and 0 * NaN is not 0')
    """
    bad = [k for f in others for k in f.kinds() if k in ann.unless]
    if not bad:
        return True, ("the other operands hold no " + "/".join({"nan": "NaN"}.get(k, k) for k in ann.unless)) if ann.unless else "always"
    kinds = sorted(set(bad), key=["nan", "+inf", "-inf"].index)
    shown = ", ".join({"nan": "NaN"}.get(k, k) for k in kinds)
    return False, (f"another operand may hold {shown}, and {_text(ann.value)} {op.symbol} "
                   f"{shown.split(', ')[0]} is not {_text(ann.value)}")


def same_value(a, b) -> bool:
    """``a == b`` where NaN equals NaN (a NaN fill is one fill; a complex with a NaN part is NaN, as
    numpy's ``isnan`` says); values that cannot be compared (arrays) are not the same.

    >>> same_value(float("nan"), np.float32("nan")), same_value(0.0, -0.0), same_value(1, 1.0)
    (True, True, True)
    >>> same_value(np.array([1.0]), np.array([1.0, 2.0]))
    False
    """
    try:
        if a != a and b != b:
            return True
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _text(v) -> str:
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, float) and abs(v) == float("inf"):
        return "inf" if v > 0 else "-inf"
    return str(v)


__all__ = ["Facts", "FINITE", "FINITE32", "ANY", "SMALL", "LIMIT", "small_value", "small_scale", "overflow_scale",
           "limit_of", "finite_of", "current_limit", "of_array", "of_value", "of_call", "of_reduce", "same_value",
           "Assumptions", "assuming", "assumed", "assume", "check_assumed", "decide", "annihilates"]
