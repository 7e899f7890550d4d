"""The value language of the sequence lowering beyond ``+`` and ``*`` of fill-0 operands: any
elementwise operator of the notation (``x - y``, ``where(c, x, y)``, ``sin(x)``, ``x > y``) and
operands of any one fill per tensor (NaN too).

A sequence walks the coordinates where an operand is stored; elsewhere the operand reads its
fill. So an operator's result can differ from its own fill (the operator of the fills) only where
an operand is stored: its sequence is the union of its operands' (a literal is its own fill
everywhere and adds none), and each sub-point of the lattice computes the operator with the
absent operands' fills in their place (:func:`compiler.lattice.seqcfirvalues.specialize_value`): ``x - y``
where only ``y`` is stored is ``fill_x - y``; a sub-point whose value folds to the result's fill
writes nothing (``x + y`` of NaN fills where only ``x`` is stored), and a lattice point whose every case
writes nothing has no loop (:func:`~compiler.lattice.seqlattice.drop_fill_points`: ``x - y`` of a NaN-filled
``x`` does not walk ``y``'s entries after ``x``'s last). ``+`` and ``*`` of operands of
fill 0 keep the paper's rules (``∪`` and ``∩``, :class:`~compiler.lattice.seqderive.Deriver`); a user
function stating its iteration algebra has the sequences' ``∩`` and ``∪`` it says
(:func:`algebra_sequence`). A sum's fill is its summand's times the coordinates it sums: the loops
count those they sum and fold the fill in for the rest (:class:`~compiler.lattice.seqcfir.Fold`).

>>> from compiler.notation import parse_expr
>>> float(expr_fill(parse_expr("x[i] - y[i]"), {"x": 1.0, "y": 0.0}))
1.0
>>> fills_zero(parse_expr("x[i] * y[i]"), {"x": 0.0, "y": float("nan")})
False
"""

from __future__ import annotations

from contextvars import ContextVar

import numpy as np

from ..algebra import NOVALUE
from ..errors import StrategyError
from ..values import same_value
from ..notation.ast import Access, Call, Literal, Reduce, walk
from ..notation.shape import Concat
from .algebra import Empty as AlgEmpty
from .algebra import Intersect as AlgIntersect
from .algebra import Region, check_stated, de_morgan, expr_facts, parse_algebra, stated
from .algebra import Union as AlgUnion
from .seqreads import map_accesses
from .sequences import Intersect, Union, Universe, chain_operands


def _same(a, b) -> bool:
    return a == b or (a != a and b != b)     # (NaN fills are one fill)


def expr_fill(e, fills: dict, extents: dict | None = None, exact: bool = False):
    """The fill of the notation expression ``e`` (with shape operators), ``fills``: each tensor's
    (None is 0): what ``e`` is where its sequence skips. A shape operator keeps its operand's fill, a
    concatenation its first operand's (as evaluate's: a part of another fill writes its own,
    :mod:`compiler.lattice.seqparts`), an operator computes its operands'
    (:meth:`~compiler.algebra.Operator.fill`), a sum over ``n`` coordinates (``extents``: each
    index's) ``n`` times its summand's (the loops fold it in for the coordinates they skip,
    :class:`~compiler.lattice.seqcfir.Fold`). ``+`` or ``*`` of operands of fill 0 is 0, even with a literal
    added (it is there at every coordinate, so nothing is skipped); ``exact``: its value there (the
    result's fill, which the output holds).

    >>> from compiler.notation import parse_expr
    >>> from compiler.notation.ast import Index
    >>> float(expr_fill(parse_expr("sum[j](x[j] + 1)"), {"x": 0.0}, {Index("j"): 3}, exact=True))
    3.0
    """
    # (each call asks call_kind of a call, which asks the fills of its arguments again: without a memo
    # of the fills found for these ``fills`` and ``extents``, a chain of d operators took 2^d visits)
    active = _MEMO.get()
    if active is not None and active[0] is fills and active[1] is extents:
        memo = active[2]
        key = (id(e), exact)
        if key not in memo:
            memo[key] = (e, _node_fill(e, fills, extents, exact))   # (e kept: its id names no other node)
        return memo[key][1]
    token = _MEMO.set((fills, extents, {}))
    try:
        return expr_fill(e, fills, extents, exact)
    finally:
        _MEMO.reset(token)


#: the memo of the outermost :func:`expr_fill` in progress: its ``fills``, ``extents`` and the fills found
_MEMO: ContextVar = ContextVar("expr_fill_memo", default=None)


def _node_fill(e, fills: dict, extents: dict | None, exact: bool):
    if isinstance(e, Access):
        f = fills.get(e.tensor)
        return 0.0 if f is None else f
    if isinstance(e, Literal):
        return e.value
    if isinstance(e, Call):
        if call_kind(e, fills, extents) in ("sum", "product") and not exact:
            return 0.0     # (a literal added is there at every coordinate: the loops write it)
        args = [expr_fill(a, fills, extents, exact) for a in e.args]
        dtypes = [_dtype_of(a, fills) for a in e.args]
        if None not in dtypes and e.op.result_dtype(*dtypes).kind in "iu":
            # (in the operands' dtypes, as numpy computes them: an int32 product of fills 50000 wraps)
            with np.errstate(all="ignore"):
                args = [np.asarray(v).astype(d)[()] for v, d in zip(args, dtypes)]
        return np.asarray(e.op.fill(*args)).item()
    if isinstance(e, Reduce):
        f = expr_fill(e.body, fills, extents, exact)
        logical = not e.op.is_user and e.op.name in ("or", "and")     # (any and all reduce booleans)
        if isinstance(f, bool) and not logical:
            raise StrategyError(f"{e}: its summand is a boolean of fill {f}; the sequence lowering sums numbers "
                                f"(any and all reduce booleans); lower it with strategy='looplets'")
        known = extents is not None and all(i in extents for i in e.indices)
        # (over no coordinate at all, the operator's identity: the product of an empty slice is 1, not 0)
        if _same(f, 0) and not logical and not (known and int(np.prod([extents[i] for i in e.indices])) == 0):
            return 0.0
        if not known:
            raise StrategyError(f"{e}: its summand has fill {f}, and the extents of {', '.join(map(str, e.indices))} "
                                f"are not known to count the coordinates the loops skip")
        n = int(np.prod([extents[i] for i in e.indices]))
        return np.asarray(e.op.reduce_fill(f, n)).item()
    # (a concatenation's is its first non-empty operand's, as evaluate's: a part of another fill writes it,
    # compiler.lattice.seqparts; each operand's is computed, a sum in one checked)
    out = [expr_fill(c, fills, extents, exact) for c in e.children()]
    chosen = e.fill_operand(extents) if isinstance(e, Concat) else e.children()[0]
    return next(f for c, f in zip(e.children(), out) if c is chosen)


class Fills(dict):
    """Each tensor's fill (``{"A": 0.0}``), and its values' dtype where known (``dtypes``), in which an integer
    operator of the fills computes (:func:`expr_fill`).

    >>> from compiler.notation import parse_expr
    >>> fills = Fills({"x": 50000, "y": 50000}, dtypes={"x": np.dtype("int32"), "y": np.dtype("int32")})
    >>> expr_fill(parse_expr("x[i] * y[i]"), fills, exact=True), expr_fill(parse_expr("x[i] * y[i]"), dict(fills), exact=True)
    (-1794967296, 2500000000)
    """

    def __init__(self, *args, dtypes: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.dtypes = dict(dtypes or {})

    def with_fills(self, more: dict) -> "Fills":
        """These fills and ``more``'s (their dtypes unknown)."""
        return Fills({**self, **more}, dtypes=self.dtypes)


def _dtype_of(e, fills):
    """The dtype of the notation expression ``e``'s values, where ``fills`` (:class:`Fills`) tell its tensors' and
    it is an operator of those and literals (None otherwise)."""
    if isinstance(e, Access):
        return getattr(fills, "dtypes", {}).get(e.tensor)
    if isinstance(e, Literal):
        return getattr(e, "dtype", None)
    if isinstance(e, Call) and not e.op.is_user:
        dts = [_dtype_of(a, fills) for a in e.args]
        return None if None in dts else e.op.result_dtype(*dts)
    if isinstance(e, Concat):
        dts = {_dtype_of(a, fills) for a in e.children()}
        return dts.pop() if len(dts) == 1 else None
    if not isinstance(e, (Reduce, Call)) and len(e.children()) == 1:   # (a shape operator: its operand's values)
        return _dtype_of(e.children()[0], fills)
    return None


def fills_zero(e, fills: dict, extents: dict | None = None) -> bool:
    """Whether every operand of the call ``e`` but a literal has fill 0: then ``+`` is ``∪`` and
    ``*`` is ``∩`` (the paper's rules, a literal there at every coordinate). Not where an operand
    concatenates a part of a fill that is not finite: walked, it is no 0 for ``∩`` to skip (``inf * 0``);
    nor where it reduces over a concatenation whose parts' fills fold to another value (:func:`_parts_fill`)."""
    return all(isinstance(a, Literal) or _zero(expr_fill(a, fills, extents)) and _finite_parts(a, fills, extents)
               and _zero_parts(a, fills, extents) for a in e.args)


def reduction_fill(e: Reduce, fills: dict, extents: dict):
    """The fill of the reduction ``e`` computed on its own (into a workspace an operator reads): where it
    reduces over a concatenation of parts of other fills, those folded (:func:`_parts_fill`), else
    :func:`expr_fill`'s.

    >>> from compiler.notation import parse
    >>> e = parse("c[j] = sum[i](concat((A[k, j], B[l, j]), (k, l) -> i))").rhs
    >>> ext = {i: 2 for i in e.indices + e.body.indices}
    >>> reduction_fill(e, {"A": 0.0, "B": float("nan")}, ext), expr_fill(e, {"A": 0.0, "B": float("nan")}, ext)
    (nan, 0.0)
    """
    parted = _parts_fill(e, fills, extents)
    return expr_fill(e, fills, extents) if parted is None else parted


def _zero_parts(e, fills: dict, extents: dict | None) -> bool:
    return extents is None or all(_zero(f) for r in walk(e) if isinstance(r, Reduce)
                                  for f in [_parts_fill(r, fills, extents)] if f is not None)


def _parts_fill(e: Reduce, fills: dict, extents: dict):
    """The fill of a reduction over the index a concatenation in its body makes, where its parts' fills differ:
    each part's fill reduced over that part's coordinates, folded in order; else None. The body's fill is its
    first part's, and the loops write the other parts whole, so a statement's output takes the reduction's fill
    for that one; an operator of it must not: ``sum[i](concat((A[k, j], A1[l, j]), (k, l) -> i)) * B[0, j]`` of
    ``A``'s fill 0, ``A1``'s NaN and an all-fill ``B`` is NaN at every ``j``, and walked as ``∩`` it was 0."""
    cats = [c for c in walk(e.body) if isinstance(c, Concat) and c.result in e.indices]
    if len(cats) != 1 or any(i not in extents for i in e.indices) or any(j not in extents for j in cats[0].indices):
        return None
    cat = cats[0]
    rest = int(np.prod([extents[i] for i in e.indices if i != cat.result]))
    parts = [(expr_fill(_with_part(e.body, cat, x), fills, extents), rest * extents[j])
             for x, j in zip(cat.operands, cat.indices)]
    if all(same_value(f, parts[0][0]) for f, _ in parts):
        return None
    total = None
    for f, n in parts:
        v = np.asarray(e.op.reduce_fill(f, n))
        total = v if total is None else np.asarray(e.op(total, v))
    return total.item()


def _with_part(e, cat: Concat, part):
    """``e`` with the concatenation ``cat`` replaced by one of its operands, ``part``."""
    return part if e is cat else map_accesses(e, lambda x: x, lambda s: part if s is cat else None)


def _finite_parts(e, fills: dict, extents: dict | None = None) -> bool:
    return all(np.isfinite(expr_fill(x, fills, extents)) for n in walk(e) if isinstance(n, Concat)
               for x in n.operands)


def _zero(f) -> bool:
    return not isinstance(f, bool) and f == 0


def call_kind(e, fills: dict, extents: dict | None = None) -> str:
    """How the call ``e`` iterates: ``sum`` (``+`` of fill-0 operands: ``∪``), ``product`` (``*``:
    ``∩``, its literals finite: ``0 * inf`` is NaN), ``intersection`` (an IEEE operator of NaN-fill
    operands: NaN wherever one is absent), ``algebra`` (a user function stating its iteration
    algebra for these fills, with an intersection in it: :func:`algebra_sequence`) or ``union``
    (any other: where an operand may differ from its fill). ``extents``: each index's, for the fill of
    a sum in an operand (:func:`expr_fill`)."""
    if not e.op.is_user and e.op.name in ("add", "mul") and fills_zero(e, fills, extents):
        if e.op.name == "add":
            return "sum"
        if all(np.isfinite(n.value) for a in e.args for n in walk(a) if isinstance(n, Literal)
               and not isinstance(n.value, bool)) and not nonfinite_factors(e, fills):
            return "product"
    if e.op.name in NAN_PROPAGATING and not e.op.is_user and all(
            isinstance(a, Literal) or _nan(expr_fill(a, fills, extents)) for a in e.args):
        return "intersection"
    if stated_algebra(e, fills, extents) is not None:
        return "algebra"
    return "union"


def nonfinite_factors(e, fills: dict) -> list:
    """The arguments of the call ``e`` (not literals) that may hold NaN or inf: their stored values as
    the lowering assumes them (:func:`compiler.values.assumed`), their fills. Where a factor of ``*`` of
    fill 0 is absent and another holds inf, the product is NaN, not 0: an ``∩`` would skip it, so such a
    product is exact in a ``∪`` (``union``), the cases of finite factors alone folding to 0.

    >>> from compiler import values
    >>> from compiler.notation import parse_expr
    >>> e = parse_expr("collapse(A[i, j], (i, j) -> k) * b[k]")
    >>> with values.assuming({"A": values.ANY, "b": values.FINITE}):
    ...     [str(a) for a in nonfinite_factors(e, {})]
    ['collapse(A[i, j], (i, j) -> k)']
    """
    return [a for a in e.args if not isinstance(a, Literal) and not expr_facts(a, _fill_of(fills)).finite]


def stated_algebra(e, fills: dict, extents: dict | None = None):
    """The iteration algebra the user function of the call ``e`` states (:mod:`compiler.lattice.algebra`'s,
    complements pushed onto its parameters), where its arguments have the fills it is stated for
    and it has an intersection (a union of the arguments is what any function gets); else None.

    >>> from compiler.notation import parse_expr
    >>> from compiler.user_functions import user_function
    >>> both = user_function("both", lambda x, y: x * y, "return x * y;", algebra="x & y")
    >>> e = parse_expr("both(a[i], b[i])", functions={"both": both})
    >>> print(stated_algebra(e, {"a": 0.0, "b": 0.0}), stated_algebra(e, {"a": 1.0, "b": 0.0}))
    (x ∩ y) None
    """
    op = e.op
    if not op.is_user or op.algebra is None:
        return None
    alg, assumed = stated(op)
    for p, a in zip(op.params, e.args):
        # (its value where the loops skip it: x[k] + 1 is 1 there, not the 0 its sequence's fill says)
        if not _same(expr_fill(a, fills, extents, exact=True), assumed.get(p, 0)):
            return None
    if not any(isinstance(n, AlgIntersect) for n in _alg_nodes(alg)):
        return None
    # (its values checked at probes of what its arguments may hold: a wrong statement is refused)
    check_stated(e, [expr_facts(a, _fill_of(fills)) for a in e.args])
    return alg


def _fill_of(fills: dict):
    return lambda acc: 0.0 if fills.get(acc.tensor) is None else fills[acc.tensor]


def _alg_nodes(a):
    yield a
    for c in (getattr(a, "left", None), getattr(a, "right", None), getattr(a, "arg", None)):
        if c is not None:
            yield from _alg_nodes(c)


def algebra_sequence(e, alg, seqs: list, size: int, index: str):
    """The sequence of the call ``e`` of a user function stating the iteration algebra ``alg``
    (:func:`stated_algebra`) along ``index``, its arguments' sequences ``seqs`` (None: not varying
    with it): a parameter is its argument's sequence, ``∩`` and ``∪`` the sequences'. A complement
    (where an argument is *not* stored) is no sequence: it constrains nothing (under ``∩``) or is
    everywhere (under ``∪``), as is an argument that does not vary with ``index``; a literal, its
    fill everywhere, is nowhere. An argument read under complements only is walked too (intersected
    where dense, else in a union): the loops read a tensor through its iterators. So they visit a
    superset of where the function may differ from its fill, computing it there. None: no argument
    varies with ``index``.

    >>> from compiler.notation import parse_expr
    >>> from compiler.lattice.sequences import Level
    >>> from compiler.user_functions import user_function
    >>> f = user_function("f", lambda x, y: x * y, "return x * y;", algebra="x & y")
    >>> x, y = Level("x", 0, "compressed", 4, "i"), Level("y", 0, "compressed", 4, "i")
    >>> e = parse_expr("f(x[i], y[i])", functions={"f": f})
    >>> print(algebra_sequence(e, parse_algebra("x & y", ("x", "y")), [x, y], 4, "i"))
    i_x ∩ i_y
    >>> print(algebra_sequence(e, de_morgan(parse_algebra("(x | y) & !(x & y)", ("x", "y"))), [x, y], 4, "i"))
    i_x ∪ i_y
    >>> print(algebra_sequence(e, parse_algebra("x & !y", ("x", "y")), [x, y], 4, "i"))
    i_x ∪ i_y
    """
    by_param = dict(zip(e.op.params, zip(e.args, seqs)))
    nowhere = object()

    def seq(a):
        # (None: everywhere; nowhere: no coordinate)
        if isinstance(a, Region):
            arg, s = by_param[a.name]
            return nowhere if isinstance(arg, Literal) else s
        if isinstance(a, AlgIntersect):
            x, y = seq(a.left), seq(a.right)
            if nowhere in (x, y):
                return nowhere
            return y if x is None else x if y is None or x == y else Intersect(x, y)
        if isinstance(a, AlgUnion):
            x, y = seq(a.left), seq(a.right)
            if x is None or y is None:
                return None
            return y if x is nowhere else x if y is nowhere or x == y else Union(x, y)
        if isinstance(a, AlgEmpty):
            return nowhere
        return None     # (U, a complement)

    out = seq(alg)
    out = Universe(size, index) if out is None else out
    for a, s in zip(e.args, seqs):
        if s is None or isinstance(a, Literal) or out is not nowhere and s.iters() <= out.iters():
            continue
        # (an argument read under a complement only, or nowhere: the loops read a tensor through
        # its iterators, so they walk its sequence too, located where it is dense)
        out = s if out is nowhere else Intersect(out, s) if s.dense else Union(out, s)
    return None if out is nowhere else out


def _nan(f) -> bool:
    return isinstance(f, (float, np.floating)) and f != f


def call_sequence(e, seqs: list, size: int, index: str, intersect: bool = False):
    """The sequence of the elementwise call ``e`` along ``index`` (``size`` coordinates), its
    arguments' sequences ``seqs`` (None: not varying with it): where any argument that is not a
    literal may differ from its fill, the union of theirs (one not varying with ``index`` is there
    at every coordinate of it); None where no argument varies with it. A sequence two arguments
    share is walked once (one cursor per level). ``intersect``: where every argument but a literal
    is stored (their intersection; one not varying with ``index`` constrains nothing).

    >>> from compiler.notation import parse_expr
    >>> from compiler.lattice.sequences import Level
    >>> x, y = Level("x", 0, "compressed", 4, "i"), Level("y", 0, "compressed", 4, "i")
    >>> print(call_sequence(parse_expr("x[i] - y[i]"), [x, y], 4, "i"))
    i_x ∪ i_y
    >>> print(call_sequence(parse_expr("x[i] - sin(x[i])"), [x, x], 4, "i"), call_sequence(parse_expr("x[i] - 1"), [x, None], 4, "i"))
    i_x i_x
    >>> print(call_sequence(parse_expr("(x[i] - y[i]) - y[i]"), [Union(x, y), y], 4, "i"))
    i_x ∪ i_y
    """
    return merged(e.args, seqs, size, index, intersect)


def merged(args, seqs: list, size: int, index: str, intersect: bool = False):
    """The ∪ (``intersect``: ∩) of the sequences ``seqs`` of ``args`` along ``index``, as
    :func:`call_sequence` takes them."""
    if all(s is None for s in seqs):
        return None
    merge = Intersect if intersect else Union
    parts: list = []

    def add(s):
        # (an argument's own ∪ (∩) is flattened into this one, each operand once: ``(x - y) - y`` is
        # ``i_x ∪ i_y``; nested, ``((i_x ∪ i_y) ∪ i_y) ∪ ...`` grew the kernel's C 1.8x per operator)
        if isinstance(s, merge):
            add(s.a)
            add(s.b)
        elif s not in parts:
            parts.append(s)

    for a, s in zip(args, seqs):
        if intersect and s is None:
            continue
        if not isinstance(a, Literal):
            add(Universe(size, index) if s is None else s)
    if not parts:
        return None
    out = parts[0]
    for s in parts[1:]:
        out = merge(out, s)
    return out


def wild_product(e, fills: dict, extents: dict | None = None) -> list:
    """The factors of ``e``, a ``*`` of fill-0 factors, that may hold NaN or inf (:func:`nonfinite_factors`), whose
    ∪ its loops walk (:func:`product_sequence`, the others walked beside them); ``[]`` for any other call."""
    if e.op.is_user or e.op.name != "mul" or not fills_zero(e, fills, extents):
        return []
    return nonfinite_factors(e, fills)


def product_sequence(e, wild: list, seqs: list, size: int, index: str):
    """The sequence of ``*`` (the call ``e``, of fill-0 factors) where the factors ``wild`` may hold NaN or
    inf (:func:`nonfinite_factors`), its arguments' sequences ``seqs`` (None: not varying with ``index``):
    the product differs from 0 where every factor is stored or where one that may be inf is (another
    absent: ``0 * inf`` is NaN), so the ∪ of the wild factors' sequences (one not varying with ``index``
    is there at every coordinate of it), the others walked beside them (located where dense, else in a
    union: their cases alone are 0 and write nothing, :func:`~compiler.lattice.seqcfirvalues.fold`).

    >>> from compiler.notation import parse_expr
    >>> from compiler.lattice.sequences import Level
    >>> x, y = Level("x", 0, "compressed", 4, "i"), Level("y", 0, "dense", 4, "i")
    >>> e = parse_expr("x[i] * y[i]")
    >>> print(product_sequence(e, [e.args[0]], [x, y], 4, "i"), product_sequence(e, list(e.args), [x, y], 4, "i"))
    i_x ∩ i_y i_x ∪ i_y
    """
    if all(s is None for s in seqs):
        return None
    picked = [k for k, a in enumerate(e.args) if any(a is w for w in wild)]
    # (wild factors none of which varies with ``index``: one may be inf at every coordinate of it)
    out = merged([e.args[k] for k in picked], [seqs[k] for k in picked], size, index) or Universe(size, index)
    for k, (a, s) in enumerate(zip(e.args, seqs)):
        # (a factor walked at every coordinate of the wild factors' ∪ already, in each of its operands; one walked in
        # some (v of (x + w * v) * v, beside w only) is walked beside them all, or x's cases read v as absent)
        if k in picked or s is None or isinstance(a, Literal) or \
                all(s.iters() <= op.iters() for op in chain_operands(out, Union)):
            continue
        out = Intersect(out, s) if s.dense else Union(out, s)
    return out


def union_terms(e, fills: dict, extents: dict | None = None) -> list:
    """The operands of the union calls nested in ``e`` (a literal, its fill everywhere, aside):
    ``[A, B, C]`` for ``(A - B) - sin(C)``; ``[e]`` for any other node. A
    collapse of ``e`` is the union of their collapses (a union in a product's right operand is
    not a sequence the lattice takes)."""
    if not isinstance(e, Call) or call_kind(e, fills, extents) != "union":
        return [e]
    return [t for a in e.args if not isinstance(a, Literal) for t in union_terms(a, fills, extents)]


#: the operators whose result is NaN whenever an argument is (IEEE arithmetic)
NAN_PROPAGATING = frozenset({"add", "sub", "mul", "div"})

__all__ = ["expr_fill", "fills_zero", "call_kind", "nonfinite_factors", "wild_product", "stated_algebra",
           "algebra_sequence", "call_sequence", "merged", "product_sequence", "union_terms", "NAN_PROPAGATING",
           "fill_fold", "real_constant", "in_order"]


def in_order(op, fill) -> bool:
    """Whether reduction ``op`` (None: a sum) of a body of fill ``fill`` visits every coordinate, multiplying the fill
    in numpy's order where nothing is stored, instead of folding it in after its loops: a product of floating-point
    values whose fill is not 1, or of complex values. Such a product is not associative: ``1e200 * 1e200 * 0`` is NaN
    where numpy's ``0 * 1e200 * 1e200`` is 0; ``(1e308 * 2) * 0.5`` is inf and ``1e308 * 0.5 * 2`` is not; and of
    complex values even 1 is no identity once a value is infinite (``(inf + inf j) * (1 + 0j)`` is ``nan + nan j``).
    The plain lattice walks every coordinate of such a product too. An integer product wraps, in any order alike.

    >>> from compiler.algebra import lookup
    >>> mul = lookup("mul")
    >>> in_order(mul, 0.0), in_order(mul, 2.0), in_order(mul, 1.0), in_order(mul, 1 + 0j), in_order(mul, 2)
    (True, True, False, True, False)
    >>> in_order(None, 1.0), in_order(lookup("max"), 0.0)
    (False, False)
    """
    if op is None or op.is_user or op.name != "mul":
        return False
    dtype = np.asarray(fill).dtype
    # (no value of the fill's type to skip: a complex product's, Operator.neutral_for, as the plain lattice asks)
    return op.neutral_for(dtype) is NOVALUE or dtype.kind == "f" and not same_value(fill, 1.0)


def fill_fold(op, fill, e) -> tuple[bool, bool, object]:
    """How reduction ``e`` by ``op`` (None: a sum) folds in the fill ``fill`` of the coordinates its loops skip
    (:class:`~compiler.lattice.seqstmts.Fold`), into a scalar or a vector: whether its loops count them (a sum's
    fill not 0, another reduction's not its identity), whether the fill is raised to the power of their count (an
    integer product's that is not its fixed point, 2 or -3, which wraps as numpy's product does), and the fill as
    the CFIR's constant (an integer kept; else :func:`real_constant`). A fill no fold computes is a
    StrategyError naming the looplets: another operator's that is not its fixed point. A floating-point product's
    of another fill than 1, and a complex one's, is multiplied in order at every coordinate (:func:`in_order`): none
    skipped, nothing counted or folded.

    >>> from compiler.algebra import lookup
    >>> fill_fold(None, 0.0, "e"), fill_fold(None, 2, "e"), fill_fold(lookup("mul"), -2, "e")
    ((False, False, 0.0), (True, False, 2), (True, True, -2))
    >>> fill_fold(lookup("max"), -np.inf, "e"), fill_fold(lookup("max"), 1.0, "e")
    ((False, False, -inf), (True, False, 1.0))
    """
    if in_order(op, fill):
        return False, False, real_constant(fill, e)
    power = op is not None and not same_value(op(fill, fill).item(), fill)
    if power and (op.name != "mul" or np.asarray(fill).dtype.kind not in "fiu"):
        raise StrategyError(f"{e}: the sequence lowering folds the fill {fill} of the coordinates a {op.name} "
                            f"reduction's loops skip once, which is {op.name} of it as many times only where "
                            f"{op.name}(fill, fill) is the fill, or a product's of a real or integer fill (to "
                            f"the power of the coordinates skipped); lower it with strategy='looplets'")
    if op is None:
        counted = fill is not None and (isinstance(fill, (bool, np.bool_)) or fill != 0)
    else:
        counted = not same_value(fill, op.identity)
    return counted, power, fill if np.asarray(fill).dtype.kind in "iu" else real_constant(fill, e)


def real_constant(value, e):
    """``value``, a constant of ``e`` (a literal, a concatenation's or a summand's fill), as the CFIR's number
    (or boolean: a comparison's fill): a float, or a complex where its imaginary part is not 0 (a complex
    tensor's fill ``0j`` is its real part, which C widens where it is written).

    >>> real_constant(0j, "A[i]"), real_constant(True, "A[i] > 0"), real_constant(2 - 1j, "A[i] + (2-1j)")
    (0.0, True, (2-1j))
    """
    if np.iscomplexobj(value):
        return float(np.real(value)) if np.imag(value) == 0 else complex(value)
    return bool(value) if isinstance(value, (bool, np.bool_)) else float(value)
