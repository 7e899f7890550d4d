"""Shape inference for index notation with shape operators (BURRITO's Fig. 9, with the artifact's
extra concat checks): every index gets one extent, and a premise that fails is a
:class:`~compiler.errors.ShapeError` naming the operator, the index and the premise.

Extents are ints, or, when only formats are known, *extent entries* of the runtime
(:func:`compiler.output_extents.extent_value`): ``(tensor, mode)``, ``("+", a, b, ...)``,
``("*", a, b)``, ``("//", a, b)``. A premise between entries that are not both ints is
checked when the kernel is called (with the shapes of its tensors).

>>> from compiler.notation import parse
>>> info = infer_shapes(parse("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]"), {"A": (2, 3), "b": (6,)})
>>> info.text()
'i: 2, j: 3, k: 6'
>>> infer_shapes(parse("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]"), {"A": (2, 3), "b": (5,)})
Traceback (most recent call last):
...
compiler.errors.ShapeError: collapse(A[i, j], (i, j) -> k): |k| = |i|·|j| = 2·3 = 6, but k has extent 5 in b[k] (mode 0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ShapeError
from .ast import Access, Assign, Call, Index, IndexValue, Literal, Reduce, walk
from .shape import Broadcast, Collapse, Concat, Slice, Split


# -- extents: ints, or entries of the runtime's extent language ------------------------------------


def e_add(*xs):
    """The sum of extents (an int when they all are)."""
    if all(isinstance(x, int) for x in xs):
        return sum(xs)
    return ("+",) + tuple(xs)


def e_mul(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return ("*", a, b)


def e_floordiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a // b if b else 0
    return ("//", a, b)


def same(a, b):
    """True, False, or None when it is not known before the shapes are."""
    if a == b:
        return True
    if isinstance(a, int) and isinstance(b, int):
        return False
    return None


def extent_text(x) -> str:
    """``3``, ``A.shape[1]``, ``A.shape[0] * A.shape[1]``..."""
    if isinstance(x, int):
        return str(x)
    if len(x) == 2 and isinstance(x[0], str) and x[0] not in ("+", "*", "//"):
        return f"{x[0]}.shape[{x[1]}]"
    op, *args = x
    parts = [extent_text(a) if isinstance(a, int) or len(a) == 2 and a[0] not in ("+", "*", "//")
             else f"({extent_text(a)})" for a in args]
    return f" {op} ".join(parts)


# -- inference ------------------------------------------------------------------------------------


@dataclass
class ShapeInfo:
    """What inference found: each index's extent (and where it came from), the output's extents."""

    extents: dict = field(default_factory=dict)   # Index -> extent
    sources: dict = field(default_factory=dict)   # Index -> text saying where the extent came from
    output: tuple = ()
    #: shape of every sub-expression (by id of the node): an ordered {Index: extent}
    shapes: dict = field(default_factory=dict)
    #: ``(index, walked, read)``: pairs of extents a lowering walks as one, which each call must find
    #: equal beyond the rules (a strategy's, not inference's: two flattens of one index read at one pair
    #: of loops; :func:`compiler.output_extents.check_walked_together`)
    agree: tuple = ()

    def text(self) -> str:
        return ", ".join(f"{i}: {extent_text(n)}" for i, n in self.extents.items())


def _premise(node, message):
    return ShapeError(f"{node}: {message}")


def infer_shapes(program: Assign, shapes: dict) -> ShapeInfo:
    """Every index's extent in ``program``, given ``shapes`` (tensor name -> tuple of extents; the
    output's too if it is given), checking each rule of Fig. 9.

    >>> from compiler.notation import parse
    >>> infer_shapes(parse("C[i, j] = split(b[k], k -> (i, j:4))"), {"b": (12,)}).text()
    'k: 12, j: 4, i: 3'
    >>> infer_shapes(parse("y[k] = slice(x[j], j -> k, (8, -1, -3))"), {"x": (10,)}).output
    (3,)
    """
    info = ShapeInfo()
    known, sources = info.extents, info.sources

    def access_extents(acc: Access):
        if acc.tensor not in shapes:
            return None
        shape = tuple(shapes[acc.tensor])
        if len(shape) != len(acc.indices):
            raise ShapeError(f"{acc} has {len(acc.indices)} indices but {acc.tensor} has {len(shape)} mode(s) "
                             f"(shape {shape})")
        for mode, (i, n) in enumerate(zip(acc.indices, shape)):
            if isinstance(i, int):
                if isinstance(n, int) and not 0 <= i < n:
                    raise ShapeError(f"{acc}: constant index {i} is outside mode {mode} of {acc.tensor} "
                                     f"(extent {n})")
                continue
            where = f"{acc} (mode {mode})"
            if i in known and same(known[i], n) is False:
                raise ShapeError(f"index {i} has extent {extent_text(known[i])} in {sources[i]} but "
                                 f"{extent_text(n)} in {where}")
            if i not in known or (not isinstance(known[i], int) and isinstance(n, int)):
                known[i], sources[i] = n, where
        return shape

    # every access says the extents of its indices (index names are global, as in evaluate)
    for n in walk(program.rhs):
        if isinstance(n, Access):
            access_extents(n)
    if program.lhs.tensor in shapes:
        access_extents(program.lhs)

    def bind(i: Index, n, node, premise: str):
        if i in known and same(known[i], n) is False:
            raise _premise(node, f"{premise} = {extent_text(n)}, but {i} has extent {extent_text(known[i])} "
                                 f"in {sources[i]}")
        if i not in known or (not isinstance(known[i], int) and isinstance(n, int)):
            known[i], sources[i] = n, str(node)

    def need(node, S, i, role):
        if i not in S:
            have = ", ".join(map(str, S)) or "none"
            raise _premise(node, f"{role} {i} is not an index of the operand (its indices: {have})")

    def fresh(node, S, i, role):
        if i in S:
            raise _premise(node, f"{role} {i} is already an index of the operand; give the result a new index")

    def shape(e) -> dict:
        out = _shape(e)
        info.shapes[id(e)] = out
        return out

    def _shape(e) -> dict:
        if isinstance(e, Access):
            if e.tensor not in shapes:
                raise ShapeError(f"tensor {e.tensor} (in {e}) was not given")
            return {i: known[i] for i in e.loop_indices}
        if isinstance(e, Literal):
            return {}
        if isinstance(e, IndexValue):   # (a coordinate as a value: its index's extent, where one is known)
            return {e.index: known[e.index]} if e.index in known else {}
        if isinstance(e, Call):
            out: dict = {}
            first: dict = {}
            for a in e.args:
                for i, n in shape(a).items():
                    if i in out and same(out[i], n) is False:
                        raise _premise(e, f"the operands' shapes differ: index {i} has extent "
                                          f"{extent_text(out[i])} in {first[i]} but {extent_text(n)} in {a}")
                    out.setdefault(i, n)
                    first.setdefault(i, a)
            return out
        if isinstance(e, Reduce):
            S = shape(e.body)
            for i in e.indices:
                need(e, S, i, "reduced index")
            return {i: n for i, n in S.items() if i not in e.indices}
        if isinstance(e, Collapse):
            S = shape(e.operand)
            (i, j), k = e.indices, e.result
            need(e, S, i, "index")
            need(e, S, j, "index")
            if i == j:
                raise _premise(e, f"collapses {i} with itself; name two different indices")
            fresh(e, S, k, "result")
            n = e_mul(S[i], S[j])
            bind(k, n, e, f"|{k}| = |{i}|·|{j}| = {extent_text(S[i])}·{extent_text(S[j])}")
            return _replace(S, (i, j), {k: n})
        if isinstance(e, Split):
            S = shape(e.operand)
            k, (i, j) = e.index, e.results
            need(e, S, k, "index")
            if i == j:
                raise _premise(e, f"splits {k} into {i} twice; name two different indices")
            fresh(e, S, i, "result")
            fresh(e, S, j, "result")
            sizes = []
            for r, given in zip((i, j), e.sizes):
                if given is not None:
                    bind(r, given, e, f"|{r}| is given as {given}, so |{r}|")
                sizes.append(given if given is not None else known.get(r))
            si, sj = sizes
            nk = S[k]
            if sj is None and si is None:
                raise _premise(e, f"the extent of {j} is undetermined: no access or output gives it; "
                                  f"write it as {k} -> ({i}, {j}:n)")
            if sj is None or si is None:
                other = sj if si is None else si
                if isinstance(nk, int) and isinstance(other, int) and (other == 0 or nk % other):
                    raise _premise(e, f"|{k}| = {nk} is not a multiple of |{j if si is None else i}| = {other}")
                missing = i if si is None else j
                bind(missing, e_floordiv(nk, other), e, f"|{missing}| = |{k}| / {extent_text(other)}")
                si, sj = known[i], known[j]
            if same(e_mul(si, sj), nk) is False:
                raise _premise(e, f"|{k}| = {extent_text(nk)} but |{i}|·|{j}| = {extent_text(si)}·"
                                  f"{extent_text(sj)} = {extent_text(e_mul(si, sj))}")
            return _replace(S, (k,), {i: si, j: sj})
        if isinstance(e, Concat):
            shapes_ = [shape(a) for a in e.operands]
            rests = []
            for a, S, i in zip(e.operands, shapes_, e.indices):
                need(e, S, i, "index")
                fresh(e, S, e.result, "result")
                rests.append({x: n for x, n in S.items() if x != i})
            for a, r in zip(e.operands[1:], rests[1:]):
                if set(r) != set(rests[0]):
                    raise _premise(e, f"the operands' other indices differ: {', '.join(map(str, rests[0])) or 'none'}"
                                      f" in {e.operands[0]} but {', '.join(map(str, r)) or 'none'} in {a}")
                for x, n in r.items():
                    if same(n, rests[0][x]) is False:
                        raise _premise(e, f"index {x} has extent {extent_text(rests[0][x])} in {e.operands[0]} but "
                                          f"{extent_text(n)} in {a}")
            n = e_add(*(S[i] for S, i in zip(shapes_, e.indices)))
            bind(e.result, n, e, f"|{e.result}| = " + " + ".join(f"|{i}|" for i in e.indices))
            return _replace(shapes_[0], (e.indices[0],), {e.result: n})
        if isinstance(e, Slice):
            S = shape(e.operand)
            need(e, S, e.index, "index")
            fresh(e, S, e.result, "result")
            n = S[e.index]
            if isinstance(n, int):
                check_slice_bounds(e, n)
            bind(e.result, e.count, e, f"|{e.result}| = ceil(({e.stop} - {e.start}) / {e.step})")
            return _replace(S, (e.index,), {e.result: e.count})
        if isinstance(e, Broadcast):
            S = shape(e.operand)
            fresh(e, S, e.index, "new index")
            if e.size is not None:
                bind(e.index, e.size, e, f"|{e.index}| is given as {e.size}, so |{e.index}|")
            if e.index not in known:
                raise _premise(e, f"the extent of {e.index} is undetermined: no access or output gives it; "
                                  f"write broadcast({e.index}:n, ...)")
            return {e.index: known[e.index], **S}
        raise TypeError(f"not an index-notation expression: {e!r}")

    rhs = shape(program.rhs)
    lhs = program.lhs
    for i in rhs:
        if i not in lhs.indices:
            raise ShapeError(f"index {i} is free on the right of {program} but not an index of the output {lhs}")
    out = []
    for i in lhs.indices:
        if i in rhs:
            out.append(rhs[i])
        elif i in known:
            out.append(known[i])
        else:
            raise ShapeError(f"output index {i} of {lhs} appears in no access on the right side, so its extent "
                             f"is unknown; pass the output {lhs.tensor}=... to fix the shape")
    info.output = tuple(out)
    return info


def infer_given(program: Assign, shapes: dict, ndims: dict) -> ShapeInfo:
    """:func:`infer_shapes` for the tensors a lowering is given: ``shapes`` where known (arrays and
    tensors), else each mode's size as an entry (``(A, 0)``, checked at each call); the output's
    shape counts only where it is given.

    >>> from compiler.notation import parse
    >>> infer_given(parse("y[l] = concat((a[i], b[j]), (i, j) -> l)"), {"a": (3,)}, {"a": 1, "b": 1}).output
    (('+', 3, ('b', 0)),)
    """
    full = {name: tuple((name, m) for m in range(n)) for name, n in ndims.items() if name != program.lhs.tensor}
    full.update((name, tuple(shape)) for name, shape in shapes.items())
    return infer_shapes(program, full)


def check_slice_bounds(e: Slice, n: int) -> None:
    """Refuse bounds that are not normalized for a mode of extent ``n``: ``0 <= start <= stop <= n``
    for a positive step, ``-1 <= stop <= start <= n - 1`` for a negative one (or an empty slice)."""
    s, t, r = e.start, e.stop, e.step
    if r > 0:
        ok = 0 <= s <= t <= n
        want = f"0 <= start <= stop <= {n}"
    else:
        ok = -1 <= t <= s <= n - 1 or (s == t and -1 <= s <= n)
        want = f"-1 <= stop <= start <= {n - 1}"
    if not ok:
        raise _premise(e, f"the bounds ({s}, {t}, {r}) do not fit {e.index}, of extent {n}: a slice needs "
                          f"normalized bounds, {want} (no wrap-around of negative bounds)")


def _replace(S: dict, gone, new: dict) -> dict:
    """``S`` without ``gone``, ``new`` in the place of the first of them."""
    out: dict = {}
    for i, n in S.items():
        if i in gone:
            if i == gone[0]:
                out.update(new)
            continue
        out[i] = n
    return out


def slice_coordinates(e: Slice) -> range:
    """The operand's coordinates the slice keeps, in the result's order.

    >>> list(slice_coordinates(Slice(None, "j", "k", 8, -1, -3)))
    [8, 5, 2]
    """
    return range(e.start, e.start + e.step * e.count, e.step)


__all__ = ["ShapeInfo", "infer_shapes", "infer_given", "check_slice_bounds", "slice_coordinates", "extent_text", "e_add",
           "e_mul", "e_floordiv", "same"]
