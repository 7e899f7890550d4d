"""Reference iterators over sequence expressions (shape-operators.md §8): the iterator model's
init / reset / valid / eval / equals / next / locate, run in Python over concrete level data.

They are the semantics the C emission of :mod:`compiler.lattice.sequences` will follow, and what
the lattice check (:func:`compiler.lattice.seqcheck.check_seq_lattice`) and the CFIR
interpreter (:func:`compiler.lattice.seqinterp.interpret`) run. All state lives in a
:class:`Cursors`: one position per physical leaf (a tensor's level, a universe), so a π0 loop
and the π1 loop inside it share their operand's cursor, and the loops of one lattice continue
where the previous one stopped (each leaf is initialized once per series of loops, §13.8).

* a level iterates its fiber under its parent's current coordinate; its locate is a lower bound;
* ``∪``/``∩`` evaluate to the minimum, are valid while *both* operands are (drop-out semantics:
  the lattice's next loop picks up the rest), equal ``x`` when both do, and step the operands at
  the current coordinate; an intersection also steps the operand behind until both meet (under
  a projection, slice or product no switch tests it, so it must only stop at common coordinates);
* ``×`` steps its right operand, and on its end steps the left and restarts the right (skipping
  empty fibers, Fig. 20); ``a ⊔ b`` iterates ``a`` (its loop is the pad), ``|a| + b`` iterates
  ``b`` shifted; a slice locates its start and skips to the stride; π0 drains the rest of its
  group on next, π1 is valid while its operand stays in the group its π0 loop is at.

>>> from compiler.lattice.sequences import Level, Product
>>> A0 = Level("A", 0, "dense", 2, "i"); A1 = Level("A", 1, "compressed", 3, "j")
>>> st = Cursors({"A": {(0, 1), (1, 0), (1, 2)}})
>>> it = SeqIterator(Product(A0, A1), st)
>>> it.init(); out = []
>>> while it.valid():
...     out.append(it.eval()); it.next()
>>> out
[1, 3, 5]
"""

from __future__ import annotations

from typing import Mapping

from .seqproductnest import held
from .seqrewind import product_rewinds, restarted, rewind, save_start, walked_again
from .sequences import (ABSENT, EMPTIES, LEAVES, Concat, Intersect, Offset, Pad, Product, Project, Seq,
                        SequenceError, Slice, Stride, Union, leaf_fiber, lower_bound, stride_at, walk)


class Cursors:
    """Iteration state: per leaf key its fiber and position, per π0 its group coordinate.

    ``data`` maps a tensor's name to its stored coordinates (a set of tuples, or a dict from
    coordinates to values); ``env`` binds coordinates fixed outside (an enclosing loop's).
    """

    def __init__(self, data: Mapping, env: Mapping | None = None):
        self.data = data
        self.env = dict(env or {})
        self.fiber: dict = {}
        self.pos: dict = {}
        self.group: dict = {}
        self.leaf: dict = {}          # leaf key -> the leaf started under it (a reversed level's)
        self.absent: frozenset = frozenset()    # leaves not at the coordinate an inner fiber is under
        self.starts: dict = {}        # π0 group key -> its leaves' (fiber, position) on entering the group

    def start(self, leaf) -> None:
        env = dict(self.env)
        if hasattr(leaf, "tensor"):
            for m in range(leaf.mode):
                key = (leaf.tensor, m)
                if key in self.absent:
                    env[key] = ABSENT
                elif key in self.pos:
                    env[key] = self.coord_leaf(key) if self.valid_leaf(key) else ABSENT
        self.fiber[leaf.key] = leaf_fiber(leaf, self.data, env)
        self.pos[leaf.key] = 0
        self.leaf[leaf.key] = leaf

    def valid_leaf(self, key) -> bool:
        if key not in self.pos:
            raise SequenceError(f"iterator {key} used before it was initialized")
        return self.pos[key] < len(self.fiber[key])

    def eval_leaf(self, key) -> int:
        return self.fiber[key][self.pos[key]]

    def coord_leaf(self, key) -> int:
        """The stored coordinate the leaf is at (a reversed level's, not its sequence's)."""
        x = self.eval_leaf(key)
        leaf = self.leaf.get(key)
        return leaf.real(x) if hasattr(leaf, "real") else x


def init(s: Seq, st: Cursors) -> None:
    """Initialize ``s``'s iterators: locate the first coordinate (a π1 keeps its shared cursor)."""
    if isinstance(s, LEAVES):
        st.start(s)
    elif isinstance(s, (Union, Intersect, Concat)):
        init(s.a, st)
        init(s.b, st)
        if isinstance(s, Intersect):
            _meet(s, st)
    elif isinstance(s, Product):
        init(s.a, st)
        _restart(s, st)
        _skip_empty(s, st)
    elif isinstance(s, Project):
        if s.k == 0:
            init(s.a, st)
        elif s.group_key not in st.group:
            raise SequenceError(f"{s} is iterated outside a loop over {Project(0, s.group_key[1], s.J)}")
    elif isinstance(s, Slice):
        init(s.a, st)
        _align(s.a, s, st, seek=True)
    elif isinstance(s, Stride):
        init(s.a, st)
        _stride(s.a, s, st)
    elif isinstance(s, (Offset, Pad)):
        init(s.a, st)


reset = init


def _skip_empty(s: Product, st: Cursors) -> None:
    # an exhausted inner fiber moves the outer operand on and restarts the inner one there
    while valid(s.a, st) and not valid(s.b, st):
        next_(s.a, st)
        _restart(s, st)


def _restart(s: Product, st: Cursors) -> None:
    """(Re)initialize the inner operand under the outer one's coordinate: the fiber of a level
    whose parent is an outer leaf not at that coordinate (``(i_A ∪ i_b) × j_A`` where only
    ``b`` has the row) is empty, not the row the parent's cursor is at."""
    outside = st.absent
    if valid(s.a, st):
        x = eval_(s.a, st)
        st.absent = outside | frozenset(leaf.key for leaf in s.a.iters()) - at_leaves(s.a, st, x)
        # a π1 on the right runs in the group of the π0 on the left (π0(X, J) × π1(X, J)); one of a
        # group a loop around opened walks it again from its start (U_k × π1(X, J))
        enter(s.a, st)
        for p in product_rewinds(s):
            rewind(p, st)
    else:
        # the outer operand ran out: no group, so such a π1 is not valid either
        st.group.update((n.group_key, None) for n in walk(s.a) if isinstance(n, Project) and n.k == 0)
    try:
        init(s.b, st)
    finally:
        st.absent = outside


def at_leaves(s: Seq, st: Cursors, x: int) -> frozenset:
    """The keys of the leaves of ``s`` that are at its coordinate ``x``."""
    if isinstance(s, LEAVES):
        return frozenset([s.key]) if equals(s, st, x) else frozenset()
    if isinstance(s, Union):
        return at_leaves(s.a, st, x) | at_leaves(s.b, st, x)
    if isinstance(s, (Intersect, Product)):
        n = s.b.size() if isinstance(s, Product) else None
        a = at_leaves(s.a, st, x // n if n else x)
        b = at_leaves(s.b, st, x % n if n else x)
        return a | b if a and b else frozenset()
    if isinstance(s, Project):
        if s.k == 0:
            return frozenset(leaf.key for leaf in s.a.iters()) if equals(s, st, x) else frozenset()
        return at_leaves(s.a, st, st.group[s.group_key] * s.J + x)
    if isinstance(s, Slice):
        return at_leaves(s.a, st, x * s.step + s.start)
    if isinstance(s, Stride):
        return at_leaves(s.a, st, x * s.J + _residue(s, st))
    if isinstance(s, Offset):
        return at_leaves(s.a, st, x - s.n) if x >= s.n else frozenset()
    if isinstance(s, (Pad, Concat)):
        return at_leaves(s.a, st, x) if x < s.a.size() else frozenset()
    return frozenset()


def _meet(s: Intersect, st: Cursors) -> None:
    # step the operand behind until both are at one coordinate: an intersection under a
    # projection, slice or product is evaluated as a whole there, where no switch tests it
    while valid(s.a, st) and valid(s.b, st):
        x, y = eval_(s.a, st), eval_(s.b, st)
        if x == y:
            return
        advance(s.a if x < y else s.b, st, min(x, y))


def _drain(s: Seq, st: Cursors, in_group) -> None:
    # each operand of a union or intersection (or of a projection of one) separately: one
    # running out must not leave the other in the group (the loop after this one iterates it)
    if isinstance(s, (Union, Intersect)):
        _drain(s.a, st, in_group)
        _drain(s.b, st, in_group)
        if isinstance(s, Intersect):
            _meet(s, st)
        return
    if isinstance(s, Project) and s.k == 0:
        _drain(s.a, st, lambda x: in_group(x // s.J))
        return
    if isinstance(s, Offset):
        _drain(s.a, st, lambda x: in_group(x + s.n))
        return
    if isinstance(s, (Pad, Concat)):
        _drain(s.a, st, in_group)
        return
    if isinstance(s, Slice):
        _drain(s.a, st, lambda x: x < s.stop and in_group((x - s.start) // s.step))
        _align(s.a, s, st)
        return
    if isinstance(s, Stride):
        _drain(s.a, st, lambda x: in_group(x // s.J))
        _stride(s.a, s, st)
        return
    while valid(s, st) and in_group(eval_(s, st)):
        next_(s, st)


def _align(a: Seq, s: Slice, st: Cursors, seek: bool = False) -> None:
    # each operand of a union on its own: the loop over one operand's slice that follows the
    # union's must find it in the slice too
    if isinstance(a, Union):
        _align(a.a, s, st, seek)
        _align(a.b, s, st, seek)
        return
    if seek and isinstance(a, LEAVES) and valid(a, st) and eval_(a, st) < s.start:
        locate(a, st, s.start)
    while valid(a, st) and eval_(a, st) < s.stop and (
            eval_(a, st) < s.start or (eval_(a, st) - s.start) % s.step):
        next_(a, st)


def _residue(s: Stride, st: Cursors) -> int:
    """The coordinate the residue of ``s`` is: its universe's, or the loop's around (``Cursors.env``)."""
    return stride_at(s, st.env) if s.over is None else eval_(s.over, st)


def _stride(a: Seq, s: Stride, st: Cursors) -> None:
    # (each operand of a union on its own, as a slice's) to the next coordinate in the residue class of
    # the loop around: a sparse leaf seeks it, the first at or after it of its next group
    if isinstance(a, Union):
        _stride(a.a, s, st)
        _stride(a.b, s, st)
        return
    if s.over is not None and not valid(s.over, st):
        return      # (the product's left operand ran out: no residue to seek)
    k = _residue(s, st)
    while valid(a, st) and eval_(a, st) % s.J != k:
        x = eval_(a, st)
        if isinstance(a, LEAVES):
            locate(a, st, x + (k - x % s.J) % s.J)
        else:
            next_(a, st)


def resume(s: Seq, st: Cursors) -> None:
    """Enter the next loop of a lattice: a product whose outer operand moved on when the loop
    before stopped (an operand of ``a ∪ b`` ran out) restarts its inner operand there, and a
    slice skips to its stride in what it iterates now (the offset side of a concatenation)."""
    for node in reversed(list(walk(s))):      # operands before the nodes over them
        if isinstance(node, Product) and valid(node.a, st) and not valid(node.b, st):
            _restart(node, st)
            _skip_empty(node, st)
        elif isinstance(node, Slice):
            # the right side of a concatenation under it starts its own stride
            _align(node.a, node, st)
        elif isinstance(node, Stride):
            _stride(node.a, node, st)
        elif isinstance(node, Intersect):
            # the operand that ran out took the other out of step with the one left
            _meet(node, st)


def valid(s: Seq, st: Cursors) -> bool:
    """Whether none of ``s``'s edge sequences has run out."""
    if isinstance(s, LEAVES):
        return st.valid_leaf(s.key)
    if isinstance(s, EMPTIES):
        return False
    if isinstance(s, (Union, Intersect, Product)):
        return valid(s.a, st) and valid(s.b, st)
    if isinstance(s, Project):
        if s.k == 0:
            return valid(s.a, st)
        return valid(s.a, st) and eval_(s.a, st) // s.J == st.group.get(s.group_key)
    if isinstance(s, Slice):
        return valid(s.a, st) and eval_(s.a, st) < s.stop
    if isinstance(s, (Stride, Offset, Pad, Concat)):
        return valid(s.a, st)
    raise TypeError(f"not a sequence expression: {s!r}")


def eval_(s: Seq, st: Cursors) -> int:
    """The current coordinate of ``s`` (valid ``s`` only)."""
    if isinstance(s, LEAVES):
        return st.eval_leaf(s.key)
    if isinstance(s, (Union, Intersect)):
        return min(eval_(s.a, st), eval_(s.b, st))
    if isinstance(s, Product):
        return eval_(s.a, st) * s.b.size() + eval_(s.b, st)
    if isinstance(s, Project):
        x = eval_(s.a, st)
        return x // s.J if s.k == 0 else x % s.J
    if isinstance(s, Slice):
        return (eval_(s.a, st) - s.start) // s.step
    if isinstance(s, Stride):
        return eval_(s.a, st) // s.J
    if isinstance(s, Offset):
        return s.n + eval_(s.a, st)
    if isinstance(s, (Pad, Concat)):
        return eval_(s.a, st)
    raise SequenceError(f"{s} has no current coordinate")


def equals(s: Seq, st: Cursors, x: int) -> bool:
    """Whether ``s`` is at ``x``: for ``∪``/``∩`` both operands are (a switch case's test)."""
    if isinstance(s, EMPTIES):
        return False
    if isinstance(s, (Union, Intersect)):
        return equals(s.a, st, x) and equals(s.b, st, x)
    if isinstance(s, Product):
        n = s.b.size()
        return equals(s.a, st, x // n) and equals(s.b, st, x % n)
    if isinstance(s, Slice):
        return equals(s.a, st, x * s.step + s.start)
    if isinstance(s, Stride):
        return equals(s.a, st, x * s.J + _residue(s, st))
    if isinstance(s, Offset):
        return x >= s.n and equals(s.a, st, x - s.n)
    if isinstance(s, Pad):
        return equals(s.a, st, x)
    if isinstance(s, Concat):
        return x < s.a.size() and equals(s.a, st, x)
    if isinstance(s, Project) and s.k == 1:
        # at x of its group, each operand of a union in it (its evaluation is their minimum)
        g = st.group.get(s.group_key)
        return g is not None and equals(s.a, st, g * s.J + x)
    return valid(s, st) and eval_(s, st) == x


def next_(s: Seq, st: Cursors) -> None:
    """Step ``s`` to its next coordinate (``∪``/``∩``: the operands at the current one)."""
    if isinstance(s, LEAVES):
        st.pos[s.key] += 1
    elif isinstance(s, (Union, Intersect)):
        advance(s, st, eval_(s, st))
    elif isinstance(s, Product):
        x = eval_(s.a, st)
        next_(s.b, st)
        back = walked_again(s)
        if back and not valid(s.b, st):
            # (the left operand repeats the group the right one walked: back to its start, where the left
            # operand's next coordinate is, seqrewind; the right one restarts there)
            for p in back:
                rewind(p, st)
            next_(s.a, st)
            _restart(s, st)
        elif valid(s.a, st) and not valid(s.b, st) and eval_(s.a, st) != x:
            # the inner operand shares the outer one's cursor (π0(X, J) × π1(X, J)) and moved it
            # to the next group already: start there, do not step past it
            _restart(s, st)
        _skip_empty(s, st)
    elif isinstance(s, Project):
        if s.k == 0:
            # drain the rest of the group, or the inner π1 loop's leftovers repeat the row
            g = eval_(s, st)
            _drain(s.a, st, lambda x: x // s.J == g)
        else:
            next_(s.a, st)
    elif isinstance(s, Slice):
        next_(s.a, st)
        _align(s.a, s, st)
    elif isinstance(s, Stride):
        next_(s.a, st)
        _stride(s.a, s, st)
    elif isinstance(s, (Offset, Pad, Concat)):
        next_(s.a, st)


def shifts_branches(s: Seq, moved: frozenset = frozenset()) -> bool:
    """Whether ``s`` only maps the coordinates of a union or intersection one to one (an Offset, a Pad,
    a concatenation's first part, a slice: ``|π0(A, J)| + (π0(B, J) ∪ U_n)``): the conditional next
    then steps each of its operands at the mapped ``x`` on its own. Testing the whole at ``x`` would
    ask every operand to be valid and recompute their minimum, but the loop's body may have moved
    one of them (a π1 loop walked its group, to the end) while another is still at ``x``: that one
    would stay, and the lattice's next loop would visit ``x`` again.

    A π1 of such a sequence does so where the body walks one of its leaves (``moved``, their keys:
    ``π1(|π0(A, 3)| + (π0(B, 3) ∪ U_p), 2)`` over a loop walking ``π1(B, 3)``, a row of a split part of
    another fill).

    >>> from compiler.lattice.sequences import Universe
    >>> u, v = Universe(2, "n"), Universe(2, "m")
    >>> shifts_branches(Offset(3, u)), shifts_branches(Slice(Offset(3, Union(u, v)), 1, 4, 1))
    (False, True)
    >>> p1 = Project(1, Offset(3, Union(u, v)), 1)
    >>> shifts_branches(p1), shifts_branches(p1, frozenset([u.key]))
    (False, True)
    """
    if isinstance(s, (Offset, Pad, Concat, Slice)):
        return isinstance(s.a, (Union, Intersect)) or shifts_branches(s.a, moved)
    if isinstance(s, Project) and s.k == 1:
        return (isinstance(s.a, (Union, Intersect)) or shifts_branches(s.a, moved)) and any(
            leaf.key in moved for leaf in s.a.iters())
    return False


def walked_inside(body) -> frozenset:
    """The keys of the leaves the loops in ``body`` (CFIR) walk."""
    out, stack = set(), [body]
    while stack:
        x = stack.pop()
        if hasattr(x, "seq"):
            out |= {leaf.key for leaf in x.seq.iters()}
        stack += held(x)
    return frozenset(out)


def advance(s: Seq, st: Cursors, x: int, moved: frozenset = frozenset()) -> None:
    """The conditional next after a switch: step only the sub-iterators that are at ``x`` (``moved``: the
    leaves the loop's body walks, :func:`shifts_branches`)."""
    if isinstance(s, (Union, Intersect)):
        advance(s.a, st, x, moved)
        advance(s.b, st, x, moved)
        if isinstance(s, Intersect):
            _meet(s, st)
    elif shifts_branches(s, moved):
        if isinstance(s, Project):
            advance(s.a, st, st.group[s.group_key] * s.J + x, moved)
        elif isinstance(s, Slice):
            advance(s.a, st, x * s.step + s.start, moved)
            _align(s.a, s, st)
        else:
            advance(s.a, st, x - s.n if isinstance(s, Offset) else x, moved)
    elif valid(s, st) and eval_(s, st) == x:
        next_(s, st)


def locate(s: Seq, st: Cursors, x: int) -> None:
    """Move ``s``'s iterators to coordinate ``x`` (a level: the first stored coordinate >= x)."""
    if isinstance(s, LEAVES):
        st.pos[s.key] = lower_bound(st.fiber[s.key], x)
    elif isinstance(s, (Union, Intersect)):
        locate(s.a, st, x)
        locate(s.b, st, x)
    elif isinstance(s, Product):
        n = s.b.size()
        locate(s.a, st, x // n)
        _restart(s, st)     # the inner fiber is the one under the located outer coordinate
        locate(s.b, st, x % n)
    elif isinstance(s, Project):
        if s.k == 0:
            locate(s.a, st, x * s.J)
            # a located π0 (dense, beside an iterated operand) is at group x for the π1 loops inside
            st.group[s.group_key] = x
            save_start(s, st)
        else:
            locate(s.a, st, st.group[s.group_key] * s.J + x)
    elif isinstance(s, Slice):
        locate(s.a, st, x * s.step + s.start)
    elif isinstance(s, Stride):
        locate(s.a, st, x * s.J + _residue(s, st))
    elif isinstance(s, Offset):
        locate(s.a, st, x - s.n)
    elif isinstance(s, Pad):
        locate(s.a, st, x)
    elif isinstance(s, Concat):
        if x < s.a.size():
            locate(s.a, st, x)
        else:
            locate(s.b, st, x - s.a.size())


def enter(s: Seq, st: Cursors) -> None:
    """Record the group each valid π0 in ``s`` is at, and where it starts, for the π1 loops in the body."""
    moved = restarted(s)
    for node in walk(s):
        if isinstance(node, Project) and node.k == 0 and valid(node, st):
            st.group[node.group_key] = eval_(node, st)
            if node.group_key not in moved:
                save_start(node, st)


class SeqIterator:
    """The iterator-model interface over one sequence and shared :class:`Cursors`."""

    def __init__(self, seq: Seq, state: Cursors):
        self.seq = seq
        self.state = state

    def init(self):
        init(self.seq, self.state)

    reset = init

    def valid(self) -> bool:
        return valid(self.seq, self.state)

    def eval(self) -> int:
        return eval_(self.seq, self.state)

    def equals(self, x: int) -> bool:
        return equals(self.seq, self.state, x)

    def next(self, at: int | None = None):
        """Unconditional next, or with ``at`` the conditional one (only what is at ``at``)."""
        if at is None:
            next_(self.seq, self.state)
        else:
            advance(self.seq, self.state, at)

    def locate(self, x: int):
        locate(self.seq, self.state, x)


__all__ = ["Cursors", "SeqIterator", "init", "reset", "valid", "eval_", "equals", "next_", "advance",
           "shifts_branches", "walked_inside", "locate", "enter", "resume", "at_leaves"]
