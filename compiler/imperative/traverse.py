"""Walks over the imperative IR: every node of a tree (or its statements alone), each statement list
inside a statement, the provenance tags' descriptions and origins, and statements with their tags
spliced out.

>>> from compiler.imperative.ir import Break, Var
>>> [type(n).__name__ for n in walk(While(Var("go"), [Break()]))]
['While', 'Var', 'Block', 'tuple', 'Break']
"""

from __future__ import annotations

import math
import re
from dataclasses import fields, replace
from operator import is_
from typing import Any, Iterable

from .ir import (BIT_FUNCTIONS, MATH_FUNCTIONS, SEARCH_FUNCTIONS, THREAD_FUNCTIONS, Allocate, Assign, Block, BufferArg, Call,
                 CompoundAssign, Const, Declare, Expr, For, Grow, Helper, If, Load, Origin, Pragma, Prefetch, Stmt, Store,
                 Tagged, Var, While)
from ..trace import LaterText


def walk(node) -> Iterable[Any]:
    """Every node reachable from ``node`` (pre-order), including ``node`` itself."""
    return _walked(node, _CHILD_KIND, _child_kind)


def statements(node) -> Iterable[Any]:
    """The nodes of ``node`` that :func:`walk` meets outside expressions, in its order: statements,
    their blocks and tuples, not an expression nor anything in one (no statement is inside an
    expression). Most of a kernel's nodes are its expressions' parts, which the passes that look
    for statements (declarations, assignments, pragmas, growths) walked too.

    >>> from compiler.imperative.ir import Assign, Var
    >>> [type(n).__name__ for n in statements(While(Var("go"), [Assign(Var("x"), Var("y") + 1)]))]
    ['While', 'Block', 'tuple', 'Assign']
    """
    return _walked(node, _STMT_KIND, _stmt_kind)


def _walked(node, kinds: dict, kind_of) -> Iterable[Any]:
    """The nodes from ``node`` on (pre-order), going into the field values whose type ``kind_of``
    (remembered in ``kinds``) says to."""
    stack = [node]
    pop, push, names_of = stack.pop, stack.append, _FIELD_NAMES
    while stack:
        n = pop()
        yield n
        names = names_of.get(type(n))
        if names is None:
            names = _field_names(type(n))
        if names is _TUPLE:
            stack.extend(reversed(n))
            continue
        for name in names:
            v = getattr(n, name)
            # (by the value's type, cached: most fields hold names, dtypes or numbers)
            child = kinds.get(type(v))
            if child is None:
                child = kind_of(type(v))
            if child:
                push(v)


def pragma_names(stmts) -> set[str]:
    """The words (C names) that the pragmas in ``stmts`` mention: a pass keeps the locals they name.

    >>> from compiler.imperative.ir import Pragma
    >>> sorted(pragma_names([For(Var("i"), 0, 4, [Pragma("omp simd reduction(+: s)")])]))
    ['omp', 'reduction', 's', 'simd']
    """
    return {w for n in statements(tuple(stmts)) if isinstance(n, Pragma) for w in _WORD.findall(n.text)}


_WORD = re.compile(r"[A-Za-z_]\w*")
#: the types of field values that are never nodes (most fields: names, dtypes, numbers)
_LEAF_TYPES = frozenset((str, int, float, bool, type(None)))
_TUPLE = object()          # (stands for the field names of a tuple type: its items are walked instead)
_FIELD_NAMES: dict = {}    # a type -> its dataclass field names, last first (fields() builds them per call)
_CHILD_KIND: dict = {}     # a field value's type -> whether the walk goes into such a value
_STMT_KIND: dict = {}      # ... and whether the walk of statements goes into it (not into an expression)


def _field_names(tp):
    if issubclass(tp, tuple):
        names = _TUPLE
    elif hasattr(tp, "__dataclass_fields__"):
        names = tuple(f.name for f in reversed(fields(tp)))
    else:
        names = ()
    _FIELD_NAMES[tp] = names
    return names


def _child_kind(tp) -> bool:
    """Whether a field value of type ``tp`` is walked into: an IR node or a tuple of them, not a leaf,
    nor an :class:`Origin` or a :class:`~compiler.trace.LaterText` (metadata about the code, not code;
    a description made when read)."""
    child = (tp not in _LEAF_TYPES and not issubclass(tp, (Origin, LaterText))
             and (issubclass(tp, (Expr, Stmt, tuple, Helper)) or hasattr(tp, "__dataclass_fields__")))
    _CHILD_KIND[tp] = child
    return child


def _stmt_kind(tp) -> bool:
    """Whether a field value of type ``tp`` is walked into by :func:`statements`: as by :func:`walk`,
    and not an expression."""
    child = _STMT_KIND[tp] = _child_kind(tp) and not issubclass(tp, Expr)
    return child


def var_names(node) -> frozenset:
    """The names of the :class:`Var` nodes anywhere in ``node`` (all that ``walk`` would meet).

    Remembered by the node's identity (IR nodes are immutable, and a pass that changes nothing in a
    subtree keeps it): the cleanup passes ask it of each loop and scope, and of the same statements
    again in the next pass, which by walks was quadratic in the loops' nesting depth.

    >>> from compiler.imperative.ir import Var
    >>> sorted(var_names(For(Var("j"), 0, Var("n"), [Assign(Var("s"), Var("j"))])))
    ['j', 'n', 's']
    """
    return _summary(node, _VAR_NAMES, _own_var)


def assigned_in(node) -> frozenset:
    """:func:`assigned_names` of ``walk(node)``, remembered as :func:`var_names` is.

    >>> from compiler.imperative.ir import Var
    >>> sorted(assigned_in(For(Var("j"), 0, Var("n"), [Assign(Var("s"), Var("j"))])))
    ['j', 's']
    """
    return _summary(node, _ASSIGNED, _own_assigned, _stmt_children, _STMT_MEMO_LIMIT)


def names_read(node) -> frozenset:
    """The names of the :class:`Var` nodes and of the buffers that loads, stores, growths, prefetches and
    buffer arguments name anywhere in ``node``, remembered as :func:`var_names` is (a lowering asks it
    of a kernel's body after each pass, to keep the parameters the body still names).

    >>> from compiler.imperative.ir import Load, Store, Var
    >>> sorted(names_read(For(Var("j"), 0, Var("n"), [Store("y", Var("j"), Load("x", Var("j")))])))
    ['j', 'n', 'x', 'y']
    """
    return _summary(node, _NAMES_READ, _own_name_read)


def buffers_stored(node) -> frozenset:
    """The buffers that stores name anywhere in ``node``, remembered as :func:`var_names` is.

    >>> from compiler.imperative.ir import Load, Store, Var
    >>> sorted(buffers_stored(For(Var("j"), 0, Var("n"), [Store("y", Var("j"), Load("x", Var("j")))])))
    ['y']
    """
    return _summary(node, _STORED, _own_stored, _stmt_children, _STMT_MEMO_LIMIT)


def slots_stored(node) -> frozenset:
    """The ``(buffer, index)`` of every store anywhere in ``node``, remembered as :func:`var_names` is.

    >>> from compiler.imperative.ir import Store, Var
    >>> slots_stored(For(Var("j"), 0, 4, [Store("y", Var("i"), 1.0)]))
    frozenset({('y', Var(name='i'))})
    """
    return _summary(node, _SLOTS, _own_slot, _stmt_children, _STMT_MEMO_LIMIT)


_EMPTY: frozenset = frozenset()
#: id(node) -> (node, its summary); the node is kept so that no other object takes its id meanwhile
_VAR_NAMES: dict = {}
_STORED: dict = {}
_ASSIGNED: dict = {}
_NAMES_READ: dict = {}
_SLOTS: dict = {}
#: past this many entries a memo starts afresh (one lowering's trees are a few thousand nodes)
_MEMO_LIMIT = 100_000
#: ... and a memo of statements alone: each entry keeps a statement alive with the expressions in it (about 19
#: nodes an entry of the other memos stood for: 24,045 for 1,278 statements), and 100,000 of them held the trees
#: of many past lowerings (two lattice test files in one process: 431 MB at its largest, 403 MB at 5,000)
_STMT_MEMO_LIMIT = 5_000


def forget_memos() -> None:
    """Forget what :func:`var_names`, :func:`assigned_in`, :func:`names_read`, :func:`buffers_stored`,
    :func:`slots_stored` and :func:`pure` remembered: each memo keeps its nodes (and so their whole trees)
    alive, up to ``_MEMO_LIMIT`` entries each, long after the lowering that asked.

    >>> from compiler.imperative.ir import Var
    >>> forget_memos(); sorted(var_names(Var("n")))
    ['n']
    """
    for memo in (_VAR_NAMES, _STORED, _ASSIGNED, _NAMES_READ, _SLOTS, _IMPURE):
        memo.clear()


def _own_var(n) -> frozenset:
    return frozenset((n.name,)) if type(n) is Var else _EMPTY


def _own_stored(n) -> frozenset:
    return frozenset((n.buffer,)) if isinstance(n, Store) else _EMPTY


def _own_name_read(n) -> frozenset:
    if type(n) is Var:
        return frozenset((n.name,))
    if isinstance(n, _BUFFER_NODES):
        return frozenset((n.buffer,))
    return _EMPTY


def _own_slot(n) -> frozenset:
    return frozenset(((n.buffer, n.index),)) if isinstance(n, Store) else _EMPTY


def _own_assigned(n) -> frozenset:
    if isinstance(n, Declare):
        return frozenset((n.var.name,))
    if isinstance(n, (Assign, CompoundAssign)):
        return frozenset((n.target.name,))
    if isinstance(n, For):
        return frozenset((n.var.name,))
    return _EMPTY


def _children_by(kinds: dict, kind_of):
    """The function giving what a walk goes into from a node ``n`` (last field first, as a walk pushes them): the
    field values (and, in a tuple, the items) whose type ``kind_of`` says to go into (remembered in ``kinds``).

    :func:`walk` (:func:`_walked`) repeats this loop inline on purpose: it is the lowering's hottest function, and
    walking by a call of this per node took 1.9x its time (150 nodes, 200 walks: 37-39 against 20 ms).
    """
    def children(n) -> list:
        names = _FIELD_NAMES.get(type(n))
        if names is None:
            names = _field_names(type(n))
        if names is _TUPLE:
            return [v for v in n if (kinds[type(v)] if type(v) in kinds else kind_of(type(v)))]
        out = []
        for name in names:   # (a loop of its own, not over a generator of the values: 20% of a summary's time)
            v = getattr(n, name)
            child = kinds.get(type(v))
            if child is None:
                child = kind_of(type(v))
            if child:
                out.append(v)
        return out
    return children


#: what :func:`walk` goes into from a node
_children = _children_by(_CHILD_KIND, _child_kind)
#: what :func:`statements` goes into: no expression. A summary of what only statements have (assignments,
#: stores) went through every expression node of the statements, and remembered each: 24,045 memo entries for
#: 1,278 statements asked about, on the lowering benchmark's kernels
_stmt_children = _children_by(_STMT_KIND, _stmt_kind)


def _summary(node, memo: dict, own, children=_children, limit: int = _MEMO_LIMIT) -> frozenset:
    """The union of ``own(n)`` over the nodes ``n`` of ``node`` (those ``children`` goes into), every inner
    node's kept in ``memo`` (post-order without recursion: expressions nest deeper than Python's stack allows),
    which starts afresh past ``limit`` entries."""
    hit = memo.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    if len(memo) > limit:
        memo.clear()
    get = memo.get
    stack = [[node, None]]
    while stack:
        entry = stack[-1]
        n, kids = entry
        if kids is None:
            kids = entry[1] = children(n)
            missing = False
            for k in kids:
                if type(k) not in _LEAF_NODES:
                    hit = get(id(k))
                    if hit is None or hit[0] is not k:
                        stack.append([k, None])
                        missing = True
            if missing:
                continue
        stack.pop()
        acc = own(n)
        for k in kids:
            part = own(k) if type(k) in _LEAF_NODES else get(id(k))[1]
            if part and not part <= acc:
                acc = part if not acc else acc | part
        memo[id(n)] = (n, acc)
    return memo[id(node)][1]


#: node types with nothing inside them to summarize (most of a tree's nodes)
_LEAF_NODES = frozenset((Var, Const))
#: the nodes that name a buffer (``names_read``)
_BUFFER_NODES = (Load, Store, Grow, Prefetch, BufferArg)


def map_bodies(s: Stmt, f) -> Stmt:
    """``s`` with ``f`` (a list of statements to a list) applied to each statement list directly
    inside it: a loop's, an allocation's or a tag's body, an ``if``'s branches, a block.

    >>> from compiler.imperative.ir import Break, Comment, Var
    >>> inner = [Break()]
    >>> loop = While(Var("go"), inner)
    >>> map_bodies(loop, lambda b: [Comment("stop"), *b]).body.body, map_bodies(loop, list) is loop
    ((Comment(text='stop'), Break()), True)
    """
    if isinstance(s, (For, While, Allocate, Tagged)):
        body = same_block(s.body, f(s.body.body))
        return s if body is s.body else replace(s, body=body)
    if isinstance(s, If):
        then = same_block(s.then, f(s.then.body))
        otherwise = None if s.otherwise is None else same_block(s.otherwise, f(s.otherwise.body))
        return s if then is s.then and otherwise is s.otherwise else replace(s, then=then, otherwise=otherwise)
    if isinstance(s, Block):
        return same_block(s, f(s.body))
    return s


def map_children(node, f):
    """``node`` with ``f`` applied to each expression and statement directly inside it (one level: ``f`` recurses
    where it means to), rebuilt only where one changed; anything else as it is.

    >>> from compiler.imperative.ir import BinOp, Var
    >>> print(map_children(BinOp("+", Var("a"), Var("b")), lambda e: Var("c") if e == Var("a") else e))
    c + b
    """
    if not isinstance(node, (Expr, Stmt)):
        return node
    changes = {}
    for fl in fields(node):
        v = getattr(node, fl.name)
        if isinstance(v, (Expr, Stmt)):
            new = f(v)
        elif isinstance(v, tuple) and any(isinstance(x, (Expr, Stmt)) for x in v):
            new = tuple(f(x) for x in v)
        else:
            continue
        if new is not v:
            changes[fl.name] = new
    return replace(node, **changes) if changes else node


def same_block(block: Block, stmts) -> Block:
    """``block`` itself where ``stmts`` are its statements, the same objects (a pass that changed
    nothing leaves the tree shared, and the identity memos of later passes find it), else a new one.

    >>> from compiler.imperative.ir import Break
    >>> b = Block((Break(),))
    >>> same_block(b, list(b.body)) is b, same_block(b, []) is b
    (True, False)
    """
    stmts = tuple(stmts)
    old = block.body
    if len(stmts) == len(old) and all(map(is_, stmts, old)):
        return block
    return Block(stmts)


def tag_descriptions(node) -> dict[str, str]:
    """``{tag: what}`` of the :class:`Tagged` statements in ``node`` that say what they are
    (a tag used more than once joins its distinct descriptions with "; ").

    >>> from compiler.imperative.ir import Break
    >>> tag_descriptions([Tagged("t", [Tagged("u", [Break()], "inner")], "outer"), Tagged("t", [], "again")])
    {'t': 'outer; again', 'u': 'inner'}
    """
    out: dict[str, list[str]] = {}
    for n in walk(tuple(node) if isinstance(node, list) else node):
        if isinstance(n, Tagged) and n.what:
            what = str(n.what)   # (a LaterText is made here)
            for tag in n.tags:
                whats = out.setdefault(tag, [])
                if what not in whats:
                    whats.append(what)
    return {t: "; ".join(w) for t, w in out.items()}


def tag_origins(node) -> dict[str, "Origin"]:
    """``{tag: origin}`` of the :class:`Tagged` statements in ``node`` that carry one (the
    first origin of a tag used more than once).

    >>> from compiler.imperative.ir import Break
    >>> tag_origins([Tagged("t", [Break()], "", Origin("looplet", "i", ("x",), "Lookup"))])["t"].index
    'i'
    """
    out: dict[str, Origin] = {}
    for n in walk(tuple(node) if isinstance(node, list) else node):
        if isinstance(n, Tagged) and n.origin is not None:
            for tag in n.tags:
                out.setdefault(tag, n.origin)
    return out


def untagged(stmts) -> list:
    """``stmts`` as one straight list: provenance tags (the explorer's colours) and blocks
    spliced into their place, so passes see the statements themselves.

    >>> from compiler.imperative.ir import Break, Comment
    >>> untagged([Tagged("t", [Break()]), Block((Comment("c"),))])
    [Break(), Comment(text='c')]
    """
    out = []
    for s in stmts:
        if isinstance(s, Tagged):
            out += untagged(s.body.body)
        elif isinstance(s, Block):
            out += untagged(s.body)
        else:
            out.append(s)
    return out


def sets_fresh(s, name: str) -> bool:
    """Whether ``s`` is a plain assignment to the local ``name`` whose value does not read it: what the local held
    before it is read by nothing in it (a loop's turn that starts so needs no value from the turn before).

    >>> from compiler.imperative.ir import Var, BinOp
    >>> p = Var("p")
    >>> sets_fresh(Assign(p, 1), "p"), sets_fresh(Assign(p, BinOp("+", p, 1)), "p")
    (True, False)
    """
    return isinstance(s, Assign) and s.target.name == name and name not in var_names(s.value)


def pure(e) -> bool:
    """Whether evaluating the expression ``e`` (or None) only computes a value: it calls no helper
    that might do more. (Passes drop an assignment nothing reads only when it is pure.)

    >>> from compiler.imperative.ir import Call, Var
    >>> pure(Call("fmin", (Var("a"), Var("b")))), pure(Call("merge_op", (Var("a"),)))
    (True, False)
    """
    # (remembered as var_names is: the cleanup passes ask it of the same assignments in pass after pass)
    return e is None or not _summary(e, _IMPURE, _own_impure)


#: the helpers an expression may call that only compute a value (a search only reads)
_PURE_FUNCTIONS = frozenset(MATH_FUNCTIONS + BIT_FUNCTIONS + THREAD_FUNCTIONS + SEARCH_FUNCTIONS)
_IMPURE: dict = {}   # (id(node) -> (node, the helpers it calls that may do more), as _VAR_NAMES)


def _own_impure(n) -> frozenset:
    return frozenset((n.function,)) if isinstance(n, Call) and n.function not in _PURE_FUNCTIONS else _EMPTY


def assigned_names(nodes) -> set[str]:
    """The locals the IR ``nodes`` (a walk, say) declare, assign or loop over.

    >>> from compiler.imperative.ir import Var
    >>> sorted(assigned_names(walk(For(Var("j"), 0, Var("n"), [Assign(Var("s"), Var("j"))]))))
    ['j', 's']
    """
    out = set()
    for n in nodes:
        if isinstance(n, Declare):
            out.add(n.var.name)
        elif isinstance(n, (Assign, CompoundAssign)):
            out.add(n.target.name)
        elif isinstance(n, For):
            out.add(n.var.name)
    return out


def fresh_namer(stmts, taken=()):
    """A function giving fresh local names: ``base``, else ``base_2``, ... (none that the IR ``stmts``
    use, nor ``taken``, nor one it gave before).

    >>> from compiler.imperative.ir import Var
    >>> fresh = fresh_namer([Assign(Var("q"), Var("n"))], taken={"q_2"})
    >>> fresh("q"), fresh("q"), fresh("p")
    ('q_3', 'q_4', 'p')
    """
    used = set(var_names(tuple(stmts))) | set(taken)   # (remembered per statement: passes ask it of the same ones)

    def fresh(base: str) -> str:
        name, k = base, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        return name
    return fresh


def uses_nan_or_inf(node) -> bool:
    return any(isinstance(n, Const) and isinstance(n.value, float) and not math.isfinite(n.value)
               for n in walk(node))
