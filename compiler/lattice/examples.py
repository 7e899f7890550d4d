"""Lowerings set up for the lattice strategy's docstrings, tests and teaching: the plan of a small
statement with its CFIR built (building it fills the plan's lattices).

>>> setup, cfir = sparse_vector_sum()
>>> print(setup.statement)
forall i:
  a[i] = b[i] + c[i]
>>> len(setup.lattices[0].points)
3
"""

from __future__ import annotations

from ..format import dense, sparse_vector
from ..notation import parse
from .cfir_builder import build_cfir
from .plan import Setup


def sparse_vector_sum():
    """``(setup, cfir)`` of ``a[i] = b[i] + c[i]`` with ``b``, ``c`` sparse vectors and ``a`` dense:
    the union lattice of three points (``b c``, ``b``, ``c``) that most examples draw."""
    setup = Setup.create(parse("a[i] = b[i] + c[i]"), {"b": sparse_vector(), "c": sparse_vector(), "a": dense(1)})
    return setup, build_cfir(setup.statement, setup)
