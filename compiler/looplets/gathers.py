"""Which operands the looplets' kernel of a statement with shape operators reads by locating
each coordinate its loops visit (a gather), asked before lowering it.

The loops a shape operator becomes are its meaning (:mod:`compiler.looplets.shapes`): they are
not reordered. A level that cannot be located (a SparseList's) is walked in order only where
its index is one loop's (an offset of it included) nested inside the loop of its parent level's
index; where that loop runs outside its parent's (a CSC's rows under a row-major walk) or the
index is computed of several loops or let-bound quotients (a gathered collapse), each coordinate
the loops visit is searched for in the level: every coordinate of the operand's extents, not its
entries. :func:`compiler.lowering.lower` weighs that against reading the operand converted
under the lattice strategy.

>>> from compiler.notation import parse
>>> from compiler.format import parse_format
>>> stmt = parse("out[i, j] = concat((A[k, j], B[l, j]), (k, l) -> i)")
>>> gathered(stmt, {"A": parse_format("csc"), "B": parse_format("csr")})
{'A': 'A[k, j]: its level 1 (SparseList) is indexed by k, whose loop runs outside the one over j of its parent level'}
"""

from __future__ import annotations

from ..imperative.ir import Const
from ..notation import ast as N
from .program import Access, Call, Define, Index, IndexModifier, Literal, Loop, Raveled, TensorRef, Variable
from .shapes import shape_program


def gathered(stmt: N.Assign, formats: dict) -> dict:
    """``{tensor: why}`` for each operand of ``stmt`` whose looplets kernel would locate the
    coordinates of a level it cannot walk in order (``{}`` where every operand is walked).
    Raises the looplets' :class:`~compiler.errors.StrategyError` where they refuse ``stmt``."""
    prog, _, _ = shape_program(stmt, formats)
    return gathered_in(prog, formats, stmt.lhs.tensor)


def gathered_in(prog, formats: dict, output: str, discordant_only: bool = False) -> dict:
    """:func:`gathered` of the loop program ``prog`` that writes ``output`` (``discordant_only``:
    only operands a loop outside their parent level's reaches, not those read at computed indices)."""
    found: dict = {}   # tensor -> (whether its level's loop runs outside its parent's, why)
    _visit(prog.body, {}, set(), formats, output, found)
    return {t: why for t, (discordant, why) in found.items() if discordant or not discordant_only}


def _visit(node, depth: dict, lets: set, formats: dict, output: str, out: dict) -> None:
    if isinstance(node, Loop):
        # (a loop of one step stands at a computed coordinate: a strided slice's, located)
        step = _one_step(node.ext)
        inner = {**depth, node.idx.name: (len(depth), step)}
        _visit(node.body, inner, lets, formats, output, out)
        return
    if isinstance(node, Define):
        _visit(node.body, depth, lets | {node.var.name}, formats, output, out)
        return
    if isinstance(node, Access) and isinstance(node.tns, TensorRef) and node.tns.name != output \
            and node.tns.name in formats and node.tns.name not in out:
        why = _gather(node, formats[node.tns.name], depth, lets)
        if why is not None:
            out[node.tns.name] = why
    for child in _children(node):
        _visit(child, depth, lets, formats, output, out)


def _one_step(ext) -> bool:
    if ext is None:
        return False
    a, b = ext.start, ext.stop
    return isinstance(a, (Literal, Const)) and isinstance(b, (Literal, Const)) and b.value == a.value + 1


def _children(node) -> list:
    fields = getattr(node, "__dataclass_fields__", {})
    found = []
    for name in fields:
        value = getattr(node, name)
        for v in value if isinstance(value, tuple) else (value,):
            if hasattr(v, "__dataclass_fields__"):
                found.append(v)
    return found


def _loops_of(expr, depth: dict, lets: set) -> tuple[set, bool]:
    """The loops ``expr`` reads and whether it reads a let-bound variable (computed per entry)."""
    loops, computed = set(), False
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Index) and e.name in depth:
            loops.add(e.name)
        elif isinstance(e, Variable) and e.name in lets:
            computed = True
        stack.extend(_children(e))
    return loops, computed


def _summand(expr, name: str) -> bool:
    """Whether ``expr`` is the index ``name`` plus terms of other loops (an offset of its loop)."""
    if isinstance(expr, Index):
        return expr.name == name
    if isinstance(expr, IndexModifier):
        return _summand(expr.index, name)
    if isinstance(expr, Call) and getattr(expr.op, "name", None) in ("+", "add"):
        return any(_summand(a, name) for a in expr.args)
    return False


def _strided_walk(index, step: str, depth: dict) -> bool:
    """Whether ``index`` is a strided slice's ``t + (s + r·k)`` for the one-step loop ``t``, a
    positive step ``r`` and ``k`` the loop just outside ``t``: the level's cursor stays outside
    ``k``'s loop and each step seeks forward from it (a walk with a stride, ``csr[:, ::2]``); a
    negative step restarts the cursor at every ``k``, each coordinate searched from the start.

    >>> from compiler.looplets.program import Index, Literal, Call
    >>> from compiler.algebra import lookup
    >>> add, mul = lookup("+"), lookup("*")
    >>> at = lambda r: Call(add, (Index("t"), Call(add, (Literal(0), Call(mul, (Index("k"), Literal(r)))))))
    >>> depth = {"k": (0, False), "t": (1, True)}
    >>> _strided_walk(at(2), "t", depth), _strided_walk(at(-2), "t", depth)
    (True, False)
    """
    if not (isinstance(index, Call) and getattr(index.op, "name", None) in ("+", "add") and len(index.args) == 2):
        return False
    t, rest = index.args
    if t != Index(step) or not (isinstance(rest, Call) and getattr(rest.op, "name", None) in ("+", "add")):
        return False
    start, scaled = rest.args
    if not (isinstance(start, Literal) and isinstance(scaled, Call)
            and getattr(scaled.op, "name", None) in ("*", "mul")):
        return False
    k, r = scaled.args
    outer = max((d for x, d in depth.items() if d[0] < depth[step][0]), default=None)
    return isinstance(r, Literal) and isinstance(r.value, int) and r.value > 0 and isinstance(k, Index) \
        and outer is not None and depth.get(k.name) == outer


def _gather(acc: Access, fmt, depth: dict, lets: set) -> tuple[bool, str] | None:
    """``(discordant, why)`` where ``acc`` locates a level it cannot walk (``discordant``: its loop
    runs outside its parent level's, not at computed coordinates), else None."""
    if isinstance(acc.tns, Raveled):
        # (its entries walked in raveled order, seeking once per unfurl: a gather where that is per entry)
        index = acc.idxs[0]
        loops, computed = _loops_of(index, depth, lets)
        walked = max(loops, key=lambda x: depth[x][0], default=None)
        if computed or walked is None or depth[walked][1] or not _summand(index, walked):
            return False, f"ravel({acc.tns.name})[{index}]: computed at each coordinate the loops visit"
        return None
    parent = -1           # (the depth of the loop its parent level is walked in)
    # (a level of several modes, COO's, stores them one under the other)
    levels = [(n, lvl) for n, lvl in enumerate(fmt.levels) for _ in range(lvl.nmodes)]
    for s, mode in enumerate(fmt.mode_order):
        n, lvl = levels[s]
        index = acc.idxs[mode]
        loops, computed = _loops_of(index, depth, lets)
        at = max((depth[x][0] for x in loops), default=-1)
        if not lvl.locatable and (loops or computed):
            text = f"{acc.tns.name}[{', '.join(str(i) for i in acc.idxs)}]: its level {n} ({lvl.name}) is indexed by " \
                   f"{index}"
            walked = next((x for x in loops if depth[x][0] == at), None)
            if computed or depth[walked][1] and not _strided_walk(index, walked, depth) \
                    or not _summand(index, walked):
                return False, f"{text}, computed at each coordinate the loops visit"
            if at < parent:
                outer = next(x for x, d in depth.items() if d[0] == parent)
                return True, f"{text}, whose loop runs outside the one over {outer} of its parent level"
        parent = max(parent, at)
    return None


__all__ = ["gathered", "gathered_in"]
