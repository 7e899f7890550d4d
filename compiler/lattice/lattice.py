"""Generalized iteration lattices, one per forall, and their brute-force check.

At a forall over index ``i`` the *operands* are the accesses whose next storage
level is indexed by ``i``: sparse levels are iterated, Dense levels located. A
*region* is a set of operands present at a coordinate. The lattice is built from
the iteration algebra (:mod:`compiler.lattice.algebra`) by enumerating regions
(the construction the notes recommend over the paper's Algorithm 2, whose
literal form misses regions such as ``(a ∩ b) ∪ ¬b``, sparse-array-programming.md §4.6):

* a region is a **producer** if the algebra holds on it. An operand at an inner
  level (its subtree continues below ``i``) is present when its subtree is not
  empty, so a region with it is a producer if the algebra holds for *some*
  subset of such operands; accesses not indexed by ``i`` may be present or not;
* a region that is not a producer but contains one is an **omitter**: its case
  explicitly does nothing (xor at ``a ∩ b``);
* the lattice needs the **universe** (a dense sweep of ``i``) when a producer
  has no sparse operand.

Simplifications, each recorded as a named rule: points lacking a Dense operand
are dropped when presence is structural (``dense-always-present``), producers
whose case simplifies to the fill become skips (``case-is-fill``), loops are one
per distinct set of sparse iterators (``same-iterators``), loops with only
omitter cases and trailing omitter cases are dropped, and more than seven loops are merged
into one that runs while any of them would (``merged-loops``, where the forall allows it:
:func:`merge_loops`). Each case's expression is
the statement with absent operands replaced by their fill, simplified by the
shared rewrite engine.

:func:`check_lattice` enumerates every presence combination with random values
and checks that each combination whose value can differ from the fill is
handled by a producer computing the right value.

>>> from compiler.notation import parse
>>> from compiler.format import sparse_vector
>>> prog = parse("a[i] = b[i] * (c[i] + d[i])")
>>> ops = [Operand(acc, "sparse", True, 0.0, "float64") for acc in expr_accesses(prog.rhs)]
>>> L = build_lattice(Index("i"), prog.rhs, ops, neutral=0.0)
>>> print(L.text())
lattice at i: algebra (b[i] ∩ (c[i] ∪ d[i])), neutral 0.0
[b c d | ] P  b[i] * (c[i] + d[i])
[b c | ] P  b[i] * c[i]
[b d | ] P  b[i] * d[i]
loops:
  while i <- b ∩ c ∩ d: b c d, b c, b d
  while i <- b ∩ c: b c
  while i <- b ∩ d: b d
>>> check_lattice(L, prog.rhs).exact
True
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import serialize
from ..algebra import NOVALUE, Operator
from ..dtypes import typed_scalar
from ..errors import DTypeError, SparsescopeError, UserCodeError
from ..notation.ast import Access, Call, Index, IndexValue, Literal, Reduce, cat_parts, parts_record, show_parts, walk
from ..notation.dtypes import expr_dtype, reduce_dtype
from ..rewrite import Rule, rewrite
from ..trace import Rewrite
from ..values import same_value
from .algebra import Universe, annihilating, derive, holds, show_algebra
from .cin import expr_accesses


class LatticeError(SparsescopeError, AssertionError):
    """A lattice that misses a region the brute-force enumeration needs (a compiler bug)."""


@serialize.node
@dataclass(frozen=True)
class Operand:
    """An access at one forall: ``kind`` is ``sparse`` (iterated) or ``dense`` (located).

    ``leaf`` says whether its values are reached at this level.
    """

    access: Access
    kind: str
    leaf: bool
    fill: Any
    dtype: str
    name: str = ""

    @property
    def key(self) -> str:
        return str(self.access)

    @property
    def label(self) -> str:
        return self.name or self.access.tensor


@serialize.node
@dataclass
class Point:
    """A region of the lattice: the operands present, producer or omitter, and its case expression."""

    present: frozenset
    producer: bool
    expr: Any = None
    note: str = ""


@serialize.node
@dataclass
class Loop:
    """One while loop of a lattice: the sparse operands it iterates and its cases, most specific first.

    ``any_of``: empty for a loop that runs while every iterated operand has entries; else the loops it
    stands for (:func:`merge_loops`), each a tuple of operands: it runs while one of them has all its
    operands' entries left, an operand out of entries absent at every coordinate.
    """

    iterated: tuple
    cases: list
    any_of: tuple = ()


@serialize.node
@dataclass
class Lattice:
    """The iteration lattice at one forall; see the module docstring."""

    index: Index
    operands: list
    algebra: Any
    neutral: Any
    points: list
    loops: list
    universe: bool
    value_tests: bool
    rewrites: list = field(default_factory=list)
    free: tuple = ()
    fixed: tuple = ()

    def operand(self, key: str) -> Operand:
        for op in self.operands:
            if op.key == key:
                return op
        raise KeyError(key)

    def _names(self, keys) -> str:
        return " ".join(op.label for op in self.operands if op.key in keys)

    def point_label(self, p: Point) -> str:
        sparse = [op.label for op in self.operands if op.key in p.present and op.kind == "sparse"]
        dense = [op.label for op in self.operands if op.key in p.present and op.kind == "dense"]
        if self.universe:
            sparse.append("U")
        return f"[{' '.join(sparse)} | {' '.join(dense)}]"

    def text(self) -> str:
        """``[iterated | located] P/O  case expression`` per point, then the loops."""
        return "\n".join(line for line, _ in self._lines(False))

    def printed_parts(self) -> tuple[str, dict]:
        """The text and where its heading (``lattice at i``, ``role`` ``lattice``) and the accesses
        of its algebra and case expressions are printed (:func:`~compiler.notation.ast.parts_record`),
        printed in one walk with the text, so the explorer need not find them in it. Its points'
        and loops' heads are recorded with their tags (:func:`~.cfir_dot.lattice_line_spans`).

        >>> from compiler.lattice.examples import sparse_vector_sum
        >>> text, parts = sparse_vector_sum()[0].lattices[0].printed_parts()
        >>> line = text.splitlines()[0]
        >>> [(line[a:b], role) for a, b, _, role in parts["1"]]
        [('lattice at i', 'lattice'), ('b[i]', 'access'), ('c[i]', 'access')]
        """
        return parts_record(self._lines(True))

    def _lines(self, spans: bool) -> list[tuple[str, tuple]]:
        neutral = "?" if self.neutral is NOVALUE else repr(_py(self.neutral))
        head = f"lattice at {self.index}"
        if spans:
            # (a region is named by its access's text; one not at this forall is read by a case)
            accessed = {str(a): a for p in self.points if p.producer for a in walk(p.expr) if isinstance(a, Access)}
            accessed.update({op.key: op.access for op in self.operands})
            algebra = show_algebra(self.algebra, lambda k: show_parts(accessed[k]) if k in accessed else None)
            lines = [cat_parts((head, ((0, len(head), {"index": self.index.name}, "lattice"),)), ": algebra ",
                               algebra, f", neutral {neutral}")]
        else:
            lines = [(f"{head}: algebra {self.algebra}, neutral {neutral}", ())]
        for p in self.points:
            label = f"{self.point_label(p)} {'P' if p.producer else 'O'}  "
            case = (show_parts(p.expr) if spans else (str(p.expr), ())) if p.producer else ("omit", ())
            lines.append(cat_parts(label, case, f"  ({p.note})" if p.note else ""))
        lines.append(("loops:", ()))
        for loop in self.loops:
            cases = ", ".join(self._names(c.present) or "∅" for c in loop.cases)
            lines.append((f"  {self._loop_head(loop)}: {cases}", ()))
        return lines

    def _loop_head(self, loop) -> str:
        seq = " ∩ ".join(self.operand(k).label for k in loop.iterated)
        if loop.any_of:
            alone = [" ∩ ".join(self.operand(k).label for k in part) for part in loop.any_of]
            seq = "U" if self.universe else " ∪ ".join(f"({x})" if len(part) > 1 else x
                                                       for x, part in zip(alone, loop.any_of))
            seq += f", merging {' '.join(self.operand(k).label for k in loop.iterated)}"
        elif self.universe:
            seq = f"U ∩ {seq}" if seq else "U"
        return f"while {self.index} <- {seq}"

    def text_spans(self) -> dict[int, tuple[int, int]]:
        """Where :meth:`text` prints each point's label (a producer's with its ``P``) and each
        loop's head: ``{1-based line: (start, end)}`` columns, so a reader need not parse them
        out of the text (an operand's label may hold any character).

        >>> from compiler.lattice.examples import sparse_vector_sum
        >>> setup, _ = sparse_vector_sum()
        >>> L = setup.lattices[0]
        >>> lines = L.text().splitlines()
        >>> [lines[n - 1][a:b] for n, (a, b) in L.text_spans().items()][::3]
        ['[b c | ] P', 'while i <- b ∩ c']
        """
        out = {}
        for n, p in enumerate(self.points):
            out[n + 2] = (0, len(self.point_label(p)) + (2 if p.producer else 0))
        first_loop = len(self.points) + 3   # (the header, the points, then "loops:")
        for m, loop in enumerate(self.loops):
            out[first_loop + m] = (2, 2 + len(self._loop_head(loop)))
        return out

    def pretty(self) -> str:
        return self.text()

    def dot(self) -> str:
        """The Hasse diagram: producers filled, omitters crossed out, edges to the next smaller points."""
        lines = ["digraph lattice {", '  node [shape=box, fontname="monospace"];']
        ids = {}
        for n, p in enumerate(self.points):
            ids[p.present] = f"p{n}"
            label = self.point_label(p) + "\\n" + (str(p.expr) if p.producer else "omit")
            style = 'style=filled, fillcolor="#dbeafe"' if p.producer else 'color="#dc2626", fontcolor="#dc2626"'
            label = label.replace('"', '\\"')
            lines.append(f'  p{n} [label="{label}", {style}];')
        for p in self.points:
            for q in self.points:
                if q.present < p.present and not any(q.present < r.present < p.present for r in self.points):
                    removed = self._names(p.present - q.present)
                    lines.append(f'  {ids[p.present]} -> {ids[q.present]} [label="{removed}"];')
        lines.append("}")
        return "\n".join(lines)


def _py(v):
    return v.item() if hasattr(v, "item") else v


# -- expression simplification --------------------------------------------------------------


def literal(value) -> Literal:
    """A literal of ``value``, keeping a numpy scalar's dtype (an int32 fill stays int32)."""
    # (a 0-d array, as an operator's result, keeps its dtype too: a folded uint64 0 stays uint64)
    return Literal(_py(value), value.dtype.name if isinstance(value, (np.generic, np.ndarray)) else None)


def typed_fill(op: "Operand"):
    """The fill of an absent operand as a scalar of its dtype, for :func:`remove_operands`."""
    return typed_scalar(op.fill, op.dtype)


def simplify_rules(dtype_of, fill_of=None) -> list[Rule]:
    """Rewrite rules for case expressions: constant folding, annihilators, identities.

    An annihilator fires only where the other arguments cannot hold a value it does not
    annihilate (``0 * inf`` is NaN): their fills and stored values as the lowering assumes them
    (:func:`compiler.lattice.algebra.annihilating`).
    """

    def lit_value(x):
        return typed_scalar(x.value, x.dtype)

    def fold(t):
        if isinstance(t, Call) and t.args and all(isinstance(a, Literal) for a in t.args):
            try:
                return literal(t.op(*[lit_value(a) for a in t.args]))
            except Exception:  # a user function without a Python implementation, say
                return None
        return None

    def annihilate(t):
        if not isinstance(t, Call):
            return None
        # the annihilator of the call's dtype: True is max's annihilator over bools, not over ints
        rdt = None
        for ann in t.op.annihilators:
            positions = ann.positions or range(t.op.arity)
            for k in positions:
                a = t.args[k]
                if not isinstance(a, Literal):
                    continue
                rdt = expr_dtype(t, dtype_of) if rdt is None else rdt
                value = ann.value_for(rdt)
                if ann.holds_for(rdt) and same_value(lit_value(a), value) \
                        and annihilating(t, t.op, ann, k, t.args, fill_of or _no_fill):
                    return literal(typed_scalar(value, rdt))
        return None

    def identity(t):
        if not isinstance(t, Call) or t.op.identity is NOVALUE or t.op.arity != 2:
            return None
        positions = t.op.identity_positions or (0, 1)
        for k in positions:
            a, other = t.args[k], t.args[1 - k]
            # the identity of the call's dtype: False is max's identity over bools, not over ints
            rdt = expr_dtype(t, dtype_of)
            # (a complex 1 is no identity of a product: Operator.neutral_for)
            if isinstance(a, Literal) and same_value(lit_value(a), t.op.identity_for(rdt)) and \
                    t.op.neutral_for(np.asarray(lit_value(a)).dtype) is not NOVALUE:
                if expr_dtype(other, dtype_of) == rdt:
                    return other
        return None

    def select(t):
        # where(true, x, y) is x (a case where a condition's operands are absent folds it), and
        # where(c, 0.0, 0.0) is 0.0 whatever c is (the sign of a zero told apart)
        if not isinstance(t, Call) or not t.op.selects:
            return None
        at = t.op.selected_by([lit_value(a) if isinstance(a, Literal) else NOVALUE for a in t.args])
        chosen = [t.args[k] for k in t.op.selects]
        if at is None and all(isinstance(a, Literal) and identical(lit_value(a), lit_value(chosen[0]))
                              for a in chosen):
            at = t.op.selects[0]
        if at is None:
            return None
        rdt = expr_dtype(t, dtype_of)
        if isinstance(t.args[at], Literal):
            return literal(typed_scalar(lit_value(t.args[at]), rdt))
        return t.args[at] if expr_dtype(t.args[at], dtype_of) == rdt else None

    def reduce_identity(t):
        if isinstance(t, Reduce) and isinstance(t.body, Literal):
            ident = t.op.identity_for(t.body.dtype)
            if ident is not NOVALUE and same_value(lit_value(t.body), ident):
                return t.body
        return None

    return [Rule("constant-fold", fold, (Call,)), Rule("annihilator", annihilate, (Call,)),
            Rule("identity", identity, (Call,)), Rule("select", select, (Call,)),
            Rule("reduce-identity", reduce_identity, (Reduce,))]


def identical(a, b) -> bool:
    """Whether two scalars are one value, NaN being NaN and the sign of a zero told apart.

    >>> identical(np.float64(-0.0), np.float64(0.0)), identical(np.float64("nan"), np.float64("nan"))
    (False, True)
    """
    signed = [np.asarray(v).dtype.kind in "fc" for v in (a, b)]
    return same_value(a, b) and (not all(signed) or bool(np.signbit(np.real(a)) == np.signbit(np.real(b))))


def _no_fill(acc):
    return NOVALUE


def nonfinite_fill(f) -> bool:
    """Whether the fill ``f`` is a NaN or an infinity, or a complex with such a part (NOVALUE, an unknown
    fill, is not).

    >>> nonfinite_fill(float("inf")), nonfinite_fill(complex(float("nan"), 0)), nonfinite_fill(1j), nonfinite_fill(0)
    (True, True, False, False)
    """
    return f is not NOVALUE and np.asarray(f).dtype.kind in "fc" and not np.isfinite(f)


def nonfinite_literal(e) -> bool:
    if isinstance(e, Literal):   # (a complex literal too: a NaN part makes 0 * x NaN)
        return isinstance(e.value, (float, complex)) and not np.isfinite(e.value)
    if isinstance(e, Call):
        return any(nonfinite_literal(a) for a in e.args)
    if isinstance(e, Reduce):
        return nonfinite_literal(e.body)
    return False


def remove_operands(e, absent: dict):
    """``e`` with each access in ``absent`` (access -> fill) replaced by its fill literal."""
    if isinstance(e, Access):
        return literal(absent[e]) if e in absent else e
    if isinstance(e, Call):
        if e.op.is_user and e.op.cases:
            # a user function's case for the arguments that are present (paper §4.3, `x,0 => ...`)
            present = tuple(k for k, a in enumerate(e.args) if a not in absent)
            if len(present) < len(e.args):
                op = e.op.specialize(present, {k: absent[a] for k, a in enumerate(e.args) if a in absent})
                if op is not None:
                    return Call(op, tuple(remove_operands(e.args[k], absent) for k in present))
        return Call(e.op, tuple(remove_operands(a, absent) for a in e.args))
    if isinstance(e, Reduce):
        return Reduce(e.op, e.indices, remove_operands(e.body, absent))
    return e


# -- construction ----------------------------------------------------------------------------


def _subsets(items):
    items = list(items)
    for r in range(len(items) + 1):
        for c in itertools.combinations(items, r):
            yield frozenset(c)


def _derivation_rewrites(expr, fill_fn, rules_fired: list[str]) -> list[Rewrite]:
    """The trace's rows of a derivation: ``derive:<rule>`` from each sub-expression the rule
    fired on to the iteration algebra it derived for it (the explorer showed a bare arrow)."""
    subs = {str(n): n for n in walk(expr) if isinstance(n, (Call, Reduce))}
    out = []
    for r in rules_fired:
        rule, _, text = r.partition(": ")
        node = subs.get(text)
        after = str(derive(node, fill_fn, [])[0]) if node is not None else ""
        out.append(Rewrite(f"derive:{rule}", text, after))
    return out


def _has_unknown_fill(expr, fill_fn) -> bool:
    """Whether ``expr`` holds a reduction or an index value of no single fill (a sum of fill 1.0
    over j): work the lattice cannot skip by its algebra, only by a value test.

    >>> from compiler.notation import parse
    >>> fills = {"B[i, j]": 1.0, "w[i]": float("inf")}
    >>> _has_unknown_fill(parse("y[i] = max(w[i], sum[j](B[i, j]))").rhs, lambda a: fills[str(a)])
    True
    """
    return any(isinstance(n, (Reduce, IndexValue)) and derive(n, fill_fn, [])[1] is NOVALUE for n in walk(expr))


def build_lattice(index: Index, expr, operands: list[Operand], *, neutral, free=(), fixed=(),
                  fill_of=None, dtype_of=None, force_value_tests: bool = False,
                  merge_above: int | None = None) -> Lattice:
    """The lattice at ``index`` for the value ``expr`` of the statement under it.

    ``operands`` are the accesses at this level; ``free`` the accesses that may be
    present or not (inner levels not indexed by ``index``); ``fixed`` those known
    present (bound outside). ``neutral`` is the value a coordinate may be skipped
    at: the output's fill, or the identity of the reduction. A lattice of more than ``merge_above``
    loops has them merged into one (:func:`merge_loops`; None: never).
    """
    ops = {op.key: op for op in operands}
    fills = {op.key: op.fill for op in operands}
    dtypes = {op.key: op.dtype for op in operands}
    fill_fn = fill_of or (lambda acc: fills[str(acc)])
    dtype_fn = dtype_of or (lambda acc: dtypes[str(acc)])
    rules_fired: list[str] = []
    alg, fill = derive(expr, fill_fn, rules_fired)
    log: list[Rewrite] = _derivation_rewrites(expr, fill_fn, rules_fired)
    # an algebra that holds where no argument is stored ("x | !y") is stated relative to the
    # value the arguments are absent as: usable where the neutral value is that one (not under
    # prod, whose neutral is 1, of arguments with fill 0)
    relative = fill is NOVALUE and neutral is not NOVALUE and isinstance(expr, Call) and \
        any(r == f"explicit-algebra-relative: {expr}" for r in rules_fired) and \
        all(same_value(derive(a, fill_fn, [])[1], neutral) for a in expr.args)
    if relative:
        log.append(Rewrite("explicit-algebra-relative", str(alg), f"relative to the fill {_py(neutral)!r}"))
    elif not same_value(fill, neutral) or neutral is NOVALUE:
        log.append(Rewrite("fill-mismatch", str(alg), "U"))
        alg = Universe()
    free_keys = [str(a) for a in free]
    fixed_keys = frozenset(str(a) for a in fixed)
    complete = [k for k, op in ops.items() if op.leaf]
    partial = [k for k, op in ops.items() if not op.leaf]
    always = {k for k, op in ops.items() if op.kind == "dense" and not op.leaf}

    def producer(S) -> bool:
        base = frozenset(k for k in complete if k in S) | fixed_keys
        for sub in _subsets([k for k in partial if k in S]):
            for fr in _subsets(free_keys):
                if holds(alg, base | sub | fr):
                    return True
        return False

    regions = [S for S in _subsets(ops) if always <= S]
    if always:
        log.append(Rewrite("dense-always-present", f"{2 ** len(ops)} regions",
                           f"{len(regions)} regions containing {', '.join(sorted(always))}"))
    prod = {S: producer(S) for S in regions}
    dense_leaf = {k for k, op in ops.items() if op.kind == "dense" and op.leaf}
    skips_work = _has_unknown_fill(expr, fill_fn)
    points = []
    for S in regions:
        if prod[S]:
            points.append(Point(S, True))
        elif any(prod[R] and R < S for R in regions):
            points.append(Point(S, False))
        elif skips_work and any(prod.get(S | {d}) for d in dense_leaf - S):
            # a dense operand at its fill, where the algebra does not hold (a max's workspace
            # still at inf), skips work of unknown fill (a nested sum): a value test omits it
            log.append(Rewrite("dense-at-fill", "[" + " ".join(sorted(S)) + "]", "omit"))
            points.append(Point(S, False, note="a dense operand at its fill"))
    # case expressions
    rules = simplify_rules(dtype_fn, fill_fn)
    for p in points:
        if not p.producer:
            continue
        absent = {ops[k].access: typed_fill(ops[k]) for k in ops if k not in p.present}
        p.expr = rewrite(remove_operands(expr, absent), rules, log)
        if isinstance(p.expr, Literal) and neutral is not NOVALUE and same_value(
                typed_scalar(p.expr.value, p.expr.dtype), neutral):
            log.append(Rewrite("case-is-fill", "[" + " ".join(sorted(p.present)) + "]", "omit"))
            p.producer = False
            p.note = "computes the fill"
    has_omitters = any(not p.producer for p in points)
    value_tests = force_value_tests or has_omitters
    if not value_tests and dense_leaf:
        kept = [p for p in points if dense_leaf <= p.present]
        if len(kept) != len(points):
            log.append(Rewrite("dense-always-present", f"{len(points)} points",
                               f"{len(kept)} points containing {', '.join(sorted(dense_leaf))}"))
        points = kept
    points.sort(key=lambda p: (-len(p.present), sorted(p.present)))
    sparse = [k for k, op in ops.items() if op.kind == "sparse"]
    universe = any(p.producer and not (p.present & set(sparse)) for p in points)
    # loops: one per distinct set of sparse iterators
    parts: list[frozenset] = []
    for p in points:
        part = p.present & frozenset(sparse)
        if part not in parts:
            parts.append(part)
        elif p.producer:
            log.append(Rewrite("same-iterators", "[" + " ".join(sorted(p.present)) + "]",
                               "case of the loop over " + (" ".join(sorted(part)) or "U")))
    parts.sort(key=lambda s: (-len(s), sorted(s)))
    loops = []
    for part in parts:
        if not part and not universe:
            continue
        cases = [p for p in points if (p.present & frozenset(sparse)) <= part]
        while cases and not cases[-1].producer:
            log.append(Rewrite("trailing-omitter", " ".join(sorted(cases[-1].present)), "dropped"))
            cases = cases[:-1]
        if not cases:
            log.append(Rewrite("omitter-only-loop", " ".join(sorted(part)), "dropped"))
            continue
        order = [k for k in ops if k in part]
        loops.append(Loop(tuple(order), cases))
    if merge_above is not None and len(loops) > merge_above:
        loops = [merge_loops(loops, points, list(ops), log)]
    return Lattice(index, list(operands), alg, neutral, points, loops, universe, value_tests, log,
                   tuple(free_keys), tuple(sorted(fixed_keys)))


#: a lattice of more loops than this has them merged into one (:func:`merge_loops`) where its forall
#: allows it: seven are a union of three operands' (b + c + d: all, each pair, each alone), TACO's
#: textbook form, which a student compares with the paper; four and more operands are merged
MERGE_ABOVE = 7


def merge_loops(loops: list, points: list, order: list, log: list) -> Loop:
    """One loop for ``loops``: it iterates every operand they do and runs while one of them would
    (while each of its operands has entries), an operand out of entries absent at each coordinate
    after, so its cases are every point's, each once. The lattice's loops repeat each point's case
    in every loop over a superset of its operands: up to 2^n - 1 loops over n sparse operands, most
    of them tails after one operand ran out (``where(a != b, where(c == d, d, e), 0.0)`` over five
    sparse vectors had 18 loops and 1,495 lines of C). The merged loop visits the coordinates they
    did, once each.

    >>> from compiler.notation import parse
    >>> prog = parse("a[i] = b[i] + c[i] + d[i] + e[i]")
    >>> ops = [Operand(acc, "sparse", True, 0.0, "float64") for acc in expr_accesses(prog.rhs)]
    >>> L = build_lattice(Index("i"), prog.rhs, ops, neutral=0.0, merge_above=MERGE_ABOVE)
    >>> print(L.text().split("loops:")[1].strip())
    while i <- b ∪ c ∪ d ∪ e, merging b c d e: b c d e, b c d, b c e, b d e, c d e, b c, b d, b e, c d, c e, d e, b, c, d, e
    """
    parts = [frozenset(lp.iterated) for lp in loops]
    # (a loop over a superset of another's operands runs only while that one would)
    least = [p for p in parts if not any(q < p for q in parts)]
    iterated = tuple(k for k in order if any(k in p for p in parts))
    any_of = tuple(tuple(k for k in order if k in p) for p in least)
    cases = [p for p in points if (p.present & frozenset(iterated)) <= frozenset(iterated)]
    while cases and not cases[-1].producer:
        cases = cases[:-1]
    log.append(Rewrite("merged-loops", f"{len(loops)} loops",
                       "one loop while " + " or ".join(" ∩ ".join(p) or "U" for p in any_of) + " has entries"))
    return Loop(iterated, cases, any_of)


# -- brute-force check --------------------------------------------------------------------------


@dataclass
class CheckResult:
    """What :func:`check_lattice` found: regions needed, covered, and the over-approximation."""

    needed: list
    extra: list
    missing: list
    wrong: list

    @property
    def exact(self) -> bool:
        return not (self.extra or self.missing or self.wrong)

    @property
    def sound(self) -> bool:
        return not (self.missing or self.wrong)


_POOL = {"f": [0.0, 1.0, -1.0, 2.0, 0.5, -2.5, 3.0, 1.5], "i": [0, 1, -1, 2, 3, -2, 5],
         "b": [False, True]}


def _sample(op_fill, dtype, rng) -> Any:
    dt = np.dtype(dtype)
    pool = _POOL["b" if dt.kind == "b" else "i" if dt.kind in "iu" else "f"]
    choices = [v for v in pool if not same_value(typed_scalar(v, dt), op_fill)]
    return typed_scalar(choices[rng.integers(len(choices))], dt)


def evaluate_expr(e, values: dict):
    """Evaluate ``e`` on scalar values by access text; a reduction takes its body once. A zero an
    operator computes is unsigned: the annihilator and identity rules hold up to the sign of zero
    (``0 * y`` is 0.0 for a negative ``y`` too, a product's fill folds to 0.0), so ``1 / (0 * -1)``
    is taken as ``inf``, as the lattice computes it.

    >>> from compiler.notation import parse
    >>> evaluate_expr(parse("y[] = 1 / (b[] * c[])").rhs, {"b[]": np.float64(0.0), "c[]": np.float64(-1.0)})
    np.float64(inf)
    """
    if isinstance(e, Access):
        return values[str(e)]
    if isinstance(e, Literal):
        return typed_scalar(e.value, e.dtype)
    if isinstance(e, IndexValue):   # (a coordinate: verify draws one, by the index's name)
        return values[f"index {e.index.name}"]
    if isinstance(e, Call):
        v = np.asarray(e.op(*[evaluate_expr(a, values) for a in e.args]))[()]
        return v + v.dtype.type(0) if v.dtype.kind in "fc" else v   # (-0.0 + 0.0 is 0.0)
    if isinstance(e, Reduce):
        return evaluate_expr(e.body, values)
    raise TypeError(f"cannot evaluate {e!r}")


def _is_nan(v) -> bool:
    return v is not NOVALUE and np.asarray(v).dtype.kind == "f" and bool(np.isnan(v))


def dispatch(L: Lattice, present: frozenset):
    """The point whose case handles a coordinate where ``present`` operands are defined, or None."""
    always = {op.key for op in L.operands if op.kind == "dense" and (not op.leaf or not L.value_tests)}
    seen = present | always
    sparse = {op.key for op in L.operands if op.kind == "sparse"}
    loop = next((lp for lp in L.loops if frozenset(lp.iterated) == (seen & sparse)), None)
    if loop is None:
        # a loop over more iterators also handles this region (it is a case of that loop)
        candidates = [lp for lp in L.loops if (seen & sparse) <= frozenset(lp.iterated)]
        loop = candidates[-1] if candidates else None
    if loop is None:
        return None
    for case in loop.cases:
        if case.present <= seen:
            return case
    return None


def check_lattice(L: Lattice, expr, *, trials: int = 12, seed: int = 0, free_dtypes=None,
                  free_fills=None, as_written: bool = False) -> CheckResult:
    """Check ``L`` against enumeration of every presence combination of its operands.

    A combination is *needed* when, for some presence of the free accesses and some
    random values, the expression differs from the lattice's neutral value. Each
    needed combination must reach a producer case whose expression gives the same
    value (``missing`` / ``wrong`` otherwise); producers never needed are ``extra``.

    ``as_written``: the loops' cases compute ``expr`` as written (a merged loop's one case), not
    the points' expressions, so what can go wrong is a needed combination reaching no producer:
    only the combinations that reach none are enumerated, each until one draw needs it (``needed``
    and ``extra`` list those alone). Over the seven 3-D operands of a nested ``where`` (3^7
    presences of their levels below, six draws each) the full check took seconds per level.
    """
    rng = np.random.default_rng(seed)
    ops = {op.key: op for op in L.operands}
    free_accesses = {str(a): a for a in expr_accesses(expr) if str(a) in L.free}
    free_dtypes = free_dtypes or {}
    free_fills = free_fills or {}
    fixed_vals = {}
    for a in expr_accesses(expr):
        k = str(a)
        if k in L.fixed and k not in fixed_vals:
            fixed_vals[k] = _sample(free_fills.get(k, 0), free_dtypes.get(k, "float64"), rng)
    always = {k for k, op in ops.items() if op.kind == "dense" and not op.leaf}
    coordinates = sorted({n.index.name for n in walk(expr) if isinstance(n, IndexValue)})
    # rounding is that of the narrowest float an operand holds, whatever the result's dtype
    operand_dtypes = [np.dtype(op.dtype) for op in ops.values()] + [np.dtype(d) for d in free_dtypes.values()]
    needed, extra, missing, wrong = [], [], [], []
    for S in _subsets(ops):
        if not always <= S:
            continue
        partial_in = [k for k in S if not ops[k].leaf]
        is_needed = False
        point = dispatch(L, S)
        if as_written and point is not None and point.producer:
            continue
        for sub in _subsets(partial_in):
            if as_written and is_needed:
                break
            for fr in _subsets(list(free_accesses)):
                if as_written and is_needed:
                    break
                present = {k for k in S if ops[k].leaf} | set(sub)
                for _ in range(trials):
                    vals = dict(fixed_vals)
                    for n in coordinates:   # (a coordinate is never negative: min(0, i) is 0 of any i)
                        vals[f"index {n}"] = np.int64(rng.integers(0, 8))
                    for k, op in ops.items():
                        vals[k] = _sample(op.fill, op.dtype, rng) if k in present else typed_fill(op)
                    for k in free_accesses:
                        f = free_fills.get(k, 0)
                        dt = free_dtypes.get(k, "float64")
                        vals[k] = _sample(f, dt, rng) if k in fr else typed_scalar(f, dt)
                    with np.errstate(all="ignore"):
                        try:
                            v = evaluate_expr(expr, vals)
                        except UserCodeError:   # (a user function's Python leaving its integer dtype)
                            continue
                        if _wraps(expr, vals, v):
                            # INT32_MIN * -1 wraps in int32: operator properties (the annihilator
                            # and identity rules) assume no overflow
                            continue
                    if _is_nan(v) and not _is_nan(L.neutral):
                        continue  # operator properties are stated for non-NaN values (0 * inf)
                    if L.neutral is NOVALUE or not same_value(v, L.neutral):
                        is_needed = True
                        if as_written:
                            break
                    if point is not None and point.producer:
                        with np.errstate(all="ignore"):
                            try:
                                got = evaluate_expr(point.expr, vals)
                            except UserCodeError:
                                continue
                        if not _agrees(got, v, operand_dtypes) \
                                and not (np.isnan(np.float64(got)) if np.asarray(got).dtype.kind == "f" else False):
                            wrong.append((S, v, got))
        label = " ".join(sorted(S)) or "∅"
        if is_needed:
            needed.append(label)
            if point is None or not point.producer:
                missing.append(label)
        elif point is not None and point.producer:
            extra.append(label)
    return CheckResult(needed, extra, missing, wrong)


def _wraps(expr, vals: dict, v) -> bool:
    """Whether ``expr`` overflowed a narrow integer: its value differs from the one computed
    with every narrow integer operand widened to int64 (unsigned ones to uint64, so ``uint8 & uint64``
    still computes); False where the widened operands do not go together (``uint64 & int64``)."""
    wide = {k: (np.uint64 if np.asarray(x).dtype.kind == "u" else np.int64)(x)
            if np.asarray(x).dtype.kind in "iu" and np.asarray(x).dtype.itemsize < 8 else x for k, x in vals.items()}
    if all(wide[k] is vals[k] for k in vals):
        return False
    try:
        w = evaluate_expr(expr, wide)
    except DTypeError:
        return False
    return np.asarray(v).dtype.kind in "iu" and not same_value(typed_scalar(w, np.int64),
                                                               typed_scalar(v, np.int64))


def _agrees(got, want, operand_dtypes=()) -> bool:
    """A case's value against the whole expression's: equal, or for floats equal up to the
    rounding of the precision either, or an operand, was computed in (a simplified case may
    fold its fills in float64 where the expression computes in float32, or the other way round:
    ``e / d * 2.0`` divides in float32 before the float64 literal widens it)."""
    g, w = np.asarray(got), np.asarray(want)
    if same_value(g.astype(w.dtype)[()], w[()]):
        return True
    if g.dtype.kind == "f" or w.dtype.kind == "f":
        eps = max(np.finfo(d).eps for d in (g.dtype, w.dtype, *operand_dtypes) if d.kind == "f")
        with np.errstate(all="ignore"):
            return bool(np.isclose(g.astype(np.float64), w.astype(np.float64), rtol=64 * eps, atol=0.0))
    return False


#: sound lattices already checked, by the text of the lattice, its expression and the check's
#: arguments (with the objects, so no address in a text is reused while it is kept here):
#: a kernel lowered for other formats or another output builds the same lattices again, and
#: checking one took about a third of a lattice lowering's time
_VERIFIED: dict[tuple, tuple] = {}


def verify(L: Lattice, expr, **kw) -> CheckResult:
    """:func:`check_lattice`, raising :class:`LatticeError` when the lattice is unsound. The
    check is deterministic (its draws are seeded), so a lattice seen before is not checked again."""
    key = (_lattice_key(L), repr(expr), repr(sorted(kw.items())))
    seen = _VERIFIED.get(key)
    if seen is not None:
        return seen[-1]
    res = check_lattice(L, expr, **kw)
    if not res.sound:
        stated = {f"{n.op.name} ({n.op.algebra if isinstance(n.op.algebra, str) else n.op.algebra[0]!r})"
                  for n in walk(expr) if isinstance(n, Call) and n.op.algebra is not None}
        hint = (f"; an explicit iteration algebra may leave out a region where its function's Python "
                f"implementation differs from the fill: check {', '.join(sorted(stated))}" if stated else
                "; this is a bug in sparsescope: please report it")
        raise LatticeError(f"the lattice at {L.index} for {expr} misses regions {res.missing} "
                           f"or computes wrong values {res.wrong[:3]}{hint}:\n{L.text()}")
    if len(_VERIFIED) >= 4096:
        _VERIFIED.pop(next(iter(_VERIFIED)))
    _VERIFIED[key] = (L, expr, kw, res)
    return res


def _lattice_key(L: Lattice) -> tuple:
    """What :func:`check_lattice` reads of ``L`` (all but its rewrites, which say how it was built)."""
    return (repr(L.index), repr(L.operands), repr(L.algebra), repr(L.neutral), repr(L.points), repr(L.loops),
            L.universe, L.value_tests, repr(L.free), repr(L.fixed))


__all__ = ["Operand", "Point", "Loop", "Lattice", "LatticeError", "build_lattice", "merge_loops", "MERGE_ABOVE",
           "check_lattice",
           "verify", "dispatch", "remove_operands", "simplify_rules", "expr_dtype", "reduce_dtype", "evaluate_expr",
           "CheckResult", "literal", "Index", "expr_accesses", "Operator"]
