"""Which declarations of a vector output are followed by writes in the order of its coordinates.

A byte-map output lists the slots its writes mark, and its freeze sorts that list (the scan of
its table or a sort: :func:`compiler.looplets.level_writers.freeze_listed_byte_map`). When every
write between the declaration and the freeze sits in one loop and writes the element that loop
visits (``for k = _: ... _F[k] = p``, BFS's pull step), the list is already in order: the loop
visits its coordinates in ascending order and each marks its own slot, at most once. Then the
freeze need not sort.

>>> from compiler.looplets.program import Access, Assign, Block, Declare, Freeze, Index, Literal, Loop, TensorRef
>>> F, k, j = TensorRef("F"), Index("k"), Index("j")
>>> write = lambda i: Assign(Access(F, (i,), "update"), None, Literal(1))  # noqa: E731
>>> pull = Block((Declare(F, Literal(0)), Loop(k, None, write(k)), Freeze(F)))
>>> push = Block((Declare(F, Literal(0)), Loop(k, None, Loop(j, None, write(j))), Freeze(F)))
>>> list(written_in_order(pull).values()), list(written_in_order(push).values())
([True], [False])
"""

from __future__ import annotations

from .program import Access, Assign, Block, Declare, Define, Freeze, Loop, Sieve, TensorRef, walk


def written_in_order(body) -> dict:
    """For each declaration in ``body`` followed by its freeze in the same block, whether the
    writes between them come in the ascending order of the output's one coordinate (see the
    module's docstring). A declaration found twice is in order only if both are."""
    out: dict = {}

    def visit(s):
        if isinstance(s, Block):
            stmts = list(s.stmts)
            for a, d in enumerate(stmts):
                if isinstance(d, Declare):
                    end = next((b for b in range(a + 1, len(stmts)) if isinstance(stmts[b], Freeze)
                                and stmts[b].tns == d.tns), None)
                    ok = end is not None and _in_order(d.tns.name, stmts[a + 1:end])
                    out[d] = out.get(d, True) and ok
            for t in stmts:
                visit(t)
        elif isinstance(s, (Loop, Sieve, Define)):
            visit(s.body)

    visit(body)
    return out


def _writes(s, name: str) -> list:
    return [n for n in walk(s) if isinstance(n, Assign) and isinstance(n.lhs.tns, TensorRef)
            and n.lhs.tns.name == name]


def _in_order(name: str, between: list) -> bool:
    """Whether the statements ``between`` write ``name`` only in one loop, each write at the
    loop's own index, with no loop inside binding that index again nor a declaration of it."""
    writing = [s for s in between if _writes(s, name) or any(isinstance(n, Declare) and n.tns.name == name
                                                             for n in walk(s))]
    if len(writing) != 1 or not isinstance(writing[0], Loop):
        return False
    loop = writing[0]
    inner = [n for n in walk(loop.body) if isinstance(n, (Loop, Declare))]
    if any(isinstance(n, Loop) and n.idx == loop.idx or isinstance(n, Declare) and n.tns.name == name
           for n in inner):
        return False
    return all(isinstance(w.lhs, Access) and w.lhs.idxs == (loop.idx,) for w in _writes(loop, name))


__all__ = ["written_in_order"]
