"""Coordinates read from arrays their owner may write, checked where a kernel reads them.

A kernel that reads a scipy matrix in place reads arrays that stay scipy's: between two calls their
owner may write any coordinate. Checking the whole index array again before each call is a pass over
it, as long as a SpMV's own read. Where the kernel's work does not depend on the coordinates' order
(nor on each being there once), only on each being inside its extent, the kernel can check each as it
reads it instead, and the call checks the tensor's positions alone (``pos``: a few bytes a fiber).

:func:`guard_coordinates` decides that from the kernel's IR and inserts the checks. A coordinate read
into a local ``j`` (``int64_t j = A1_idx[p];``) may then serve only where a wrong order or a repeat is
harmless: inside the index of a load (``x[j]``), of an update (``y[j] += ...``), or of a local declared
from it (``pD = i * n + j``, used as ``j`` is). A kernel that compares it, steps by it, stores it or
overwrites at it (a merge, a sparse output, ``C[i, j] = ...``) depends on the order, and one that counts a
fiber's entries (``A1_pos[i + 1] - A1_pos[i]``) on their being distinct: its tensor is left to the whole
check.

>>> from compiler.imperative.ir import Block, Buffer, CompoundAssign, Declare, For, Function, Load, Scalar, Var
>>> from compiler.imperative import pretty
>>> body = For(Var("p"), Load("A1_pos", Var("i")), Load("A1_pos", Var("i") + 1), [
...     Declare(Var("j"), "int64", Load("A1_idx", Var("p"))),
...     CompoundAssign("+", Var("t"), Load("A_val", Var("p")) * Load("x_val", Var("j")))])
>>> fn = Function("k", (Buffer("A1_pos", "int64", "in"), Buffer("A1_idx", "int64", "in"),
...                     Buffer("A_val", "float64", "in"), Buffer("x_val", "float64", "in")), [body])
>>> after, guarded = guard_coordinates(fn, [OwnedCoordinates("A1_idx", "A1_size", "A", 1, "A1_pos")])
>>> sorted(guarded), [p.name for p in after.params][-1]
(['A'], 'A1_size')
>>> print(pretty(after.body))
for (int64 p = A1_pos[i]; p < A1_pos[i + 1]; p++) {
    int64 j = A1_idx[p];
    check 0 <= j < A1_size;  // A, mode 1: A's coordinates in A1_idx, as their owner left them
    t += A_val[p] * x_val[j];
}
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .guard import STORED, CheckCoordinate
from .ir import (Assign, BinOp, Block, BufferArg, Call, Cast, CompoundAssign, Const, Declare, Expr, For, Function, If,
                 Load, Pragma, Prefetch, Scalar, Select, Stmt, Store, UnOp, Var, While)
from .traverse import map_bodies, map_children, statements, walk
from .vectorize import simd_exit


@dataclass(frozen=True)
class OwnedCoordinates:
    """One array of stored coordinates of an input an owner may write: the kernel's ``buffer`` (``A1_idx``),
    the scalar parameter holding the extent its entries lie in (``A1_size``), the tensor and its mode."""

    buffer: str
    extent: str
    tensor: str
    mode: int
    #: the level's array of fiber starts (``A1_pos``)
    starts: str = ""


def guard_coordinates(fn: Function, arrays) -> tuple[Function, frozenset]:
    """``fn`` with a check after each read of a coordinate from ``arrays`` (:class:`OwnedCoordinates`) of the
    tensors whose reads it can guard (every coordinate read into a local, used only where order and repeats are
    harmless: the module's rule), and the names of those tensors (with those whose coordinates ``fn`` never
    reads); ``fn`` itself and none where it guards none."""
    by_tensor: dict[str, list] = {}
    for a in arrays:
        by_tensor.setdefault(a.tensor, []).append(a)
    if not by_tensor or any(isinstance(s, Pragma) and "parallel" in s.text.split() for s in statements(fn.body)):
        return fn, frozenset()   # (a return out of a parallel region is no C: those kernels keep the whole check)
    guarded, names = {}, set()
    for tensor, owned in by_tensor.items():
        reads = _coordinate_reads(fn.body, {a.buffer: a for a in owned})
        if reads is not None and _harmless(fn.body, set(reads)) and not _counts(fn.body, {a.starts for a in owned}):
            guarded.update(reads)
            names.add(tensor)   # (one whose coordinates the kernel never reads, a row sum's, needs no check)
    if not guarded:
        return fn, frozenset(names)
    body = Block(tuple(_with_checks(list(fn.body.body), guarded)))
    if simd_exit(body.body) is not None:   # (a check inside a loop marked omp simd: OpenMP lets nothing leave it)
        return fn, frozenset()
    have = {p.name for p in fn.params}
    extents = tuple(dict.fromkeys(Scalar(a.extent, "int64") for a in guarded.values() if a.extent not in have))
    return replace(fn, params=fn.params + extents, body=body), frozenset(names)


def _coordinate_reads(body: Block, owned: dict) -> dict | None:
    """``{local: its OwnedCoordinates}`` of each declaration that reads one of ``owned``'s buffers whole
    (``int64_t j = A1_idx[p];``), or None where a buffer is read otherwise (inside an expression, or
    passed to a search) or a local is declared twice."""
    reads: dict = {}
    loads = 0
    for n in walk(body):
        if isinstance(n, (Load, BufferArg)) and n.buffer in owned:
            if isinstance(n, BufferArg):
                return None
            loads += 1
        elif isinstance(n, Declare) and isinstance(n.init, Load) and n.init.buffer in owned:
            if n.var.name in reads:
                return None
            reads[n.var.name] = owned[n.init.buffer]
    return reads if loads == len(reads) else None


def _counts(body: Block, starts: set) -> bool:
    """Whether ``body`` subtracts positions of the arrays of fiber starts ``starts`` (``A1_pos[i + 1] - A1_pos[i]``,
    ``q_stop - q``): a count of a fiber's entries, which stands for how many coordinates it holds only where
    none repeats (a row's maximum is its fill's where it holds fewer entries than its extent)."""
    positions = set()
    for n in statements(body):
        if isinstance(n, Declare) and isinstance(n.init, Load) and n.init.buffer in starts:
            positions.add(n.var.name)
        elif isinstance(n, For) and isinstance(n.start, Load) and n.start.buffer in starts:
            positions.add(n.var.name)

    def position(x):
        return isinstance(x, Load) and x.buffer in starts or isinstance(x, Var) and x.name in positions
    return any(isinstance(x, BinOp) and x.op == "-" and (position(x.left) or position(x.right)) for x in walk(body))


def _harmless(body: Block, tainted: set) -> bool:
    """Whether the locals ``tainted`` (coordinates, and locals declared from them) serve only in the
    indexes of loads and of updates; ``tainted`` grows by the locals declared from them."""
    changed = True
    while changed:   # (a local declared from a coordinate, before or after in the walk's order)
        changed = False
        for n in statements(body):
            if isinstance(n, Declare) and n.init is not None and n.var.name not in tainted and _exposed(n.init, tainted):
                tainted.add(n.var.name)
                changed = True
    for n in statements(body):
        if isinstance(n, Declare):
            continue
        if isinstance(n, (Assign, CompoundAssign)):
            if n.target.name in tainted or _exposed(n.value, tainted):
                return False
        elif isinstance(n, Store):
            if _exposed(n.value, tainted) or (n.op is None and _exposed(n.index, tainted)):
                return False
        elif isinstance(n, If):
            if _exposed(n.cond, tainted):
                return False
        elif isinstance(n, While):
            if _exposed(n.cond, tainted):
                return False
        elif isinstance(n, For):
            if n.var.name in tainted or _exposed(n.start, tainted) or _exposed(n.stop, tainted):
                return False
        elif isinstance(n, Stmt) and not isinstance(n, (Prefetch, CheckCoordinate)) and _names_exposed(n, tainted):
            return False   # (a statement of another kind whose own expressions use one: a growth, a view's offset)
    return True


def _names_exposed(s: Stmt, tainted: set) -> bool:
    """Whether an expression directly in ``s`` (not in a statement inside it) uses a tainted local outside a
    load's index."""
    found = []

    def look(x):
        if isinstance(x, Expr):
            found.append(_exposed(x, tainted))
        return x
    map_children(s, look)
    return any(found)


def _exposed(e: Expr, tainted: set) -> bool:
    """Whether ``e`` uses a local of ``tainted`` outside the index of a load (its value, not an address)."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Var):
            if x.name in tainted:
                return True
        elif isinstance(x, Load):
            continue   # (an address: the load's value is no coordinate)
        elif isinstance(x, BinOp):
            stack += [x.left, x.right]
        elif isinstance(x, UnOp):
            stack.append(x.operand)
        elif isinstance(x, Cast):
            stack.append(x.value)
        elif isinstance(x, Select):
            stack += [x.cond, x.then, x.otherwise]
        elif isinstance(x, Call):
            stack += list(x.args)
        elif not isinstance(x, (Const, BufferArg)):
            return any(isinstance(v, Var) and v.name in tainted for v in walk(x))   # (any other node: as if all of it)
    return False


def _with_checks(stmts: list, reads: dict) -> list:
    """``stmts`` with a :class:`CheckCoordinate` after each declaration of ``reads``."""
    out = []
    for s in stmts:
        s = map_bodies(s, lambda inner: _with_checks(list(inner), reads))
        out.append(s)
        if isinstance(s, Declare) and s.var.name in reads and isinstance(s.init, Load):
            a = reads[s.var.name]
            out.append(CheckCoordinate(s.var, Var(a.extent), a.tensor, a.mode,
                                       f"{a.tensor}'s coordinates in {a.buffer}, as their owner left them", noun=STORED))
    return out


__all__ = ["OwnedCoordinates", "guard_coordinates"]
