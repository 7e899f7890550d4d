"""The loops of the sequence CFIR (:mod:`compiler.lattice.seqcfir`): every ``while`` a statement holds
(:func:`whiles`), and what a loop asks of those in its body (:func:`inner_sequences`: the sequences they walk,
:func:`~compiler.lattice.seqrewind.loop_repeats`).

>>> from compiler.lattice.seqcfir import Assign, Block, Lit, While
>>> from compiler.lattice.sequences import Universe
>>> inner = While("j", Universe(3, "j"), (), Assign("c", ("i", "j"), Lit(1.0)))
>>> outer = While("i", Universe(2, "i"), (), Block((inner,)))
>>> [w.index for w in whiles(outer)], [str(s) for s in inner_sequences(outer)]
(['i', 'j'], ['U_j'])
"""

from __future__ import annotations

from .seqcfir import Bind, Block, Switch, While


def whiles(s):
    """Every ``while`` of the CFIR ``s``, outer ones first."""
    if isinstance(s, While):
        yield s
        yield from whiles(s.body)
    elif isinstance(s, Bind):
        yield from whiles(s.body)
    elif isinstance(s, Block):
        for x in s.stmts:
            yield from whiles(x)
    elif isinstance(s, Switch):
        for _, body in s.cases:
            yield from whiles(body)


def inner_sequences(w: While) -> tuple:
    """The sequences the loops in the body of the loop ``w`` walk."""
    return tuple(x.seq for x in whiles(w.body))


__all__ = ["inner_sequences", "whiles"]
