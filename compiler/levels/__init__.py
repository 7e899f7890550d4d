"""Level formats. A level with no arrays is a format spec; with arrays it stores a tensor.

>>> Dense(SparseList(Element(0.0))).spec_str()
'Dense(SparseList(Element(0.0)))'
>>> Compressed is SparseList
True
"""

from .dense import Dense
from .element import Element
from .level import Level, flatten, level_class
from .pattern import Pattern
from .sparse_coo import SparseCOO
from .sparse_list import SparseList
from .sparse_band import SparseBand
from .sparse_block_list import SparseBlockList

#: TACO's name for SparseList (DESIGN.md accepts the older names as aliases)
Compressed = SparseList

__all__ = ["Compressed", "Dense", "Element", "Level", "Pattern", "SparseBand", "SparseBlockList",
           "SparseCOO", "SparseList",
           "flatten", "level_class"]
