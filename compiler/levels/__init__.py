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
from .run_list import RunList
from .sparse_run_list import SparseRunList
from .sparse_interval import SparseInterval
from .sparse_point import SparsePoint
from .sparse_byte_map import SparseByteMap
from .sparse_hash import SparseHash

#: TACO's name for SparseList (DESIGN.md accepts the older names as aliases)
Compressed = SparseList

#: the Looplets paper's names
RepeatRLE = RunList
SparseVBL = SparseBlockList
#: newer Finch's name for SparseHash
SparseDict = SparseHash

__all__ = ["Compressed", "Dense", "Element", "Level", "Pattern", "RepeatRLE", "RunList", "SparseBand",
           "SparseBlockList", "SparseByteMap", "SparseCOO", "SparseDict", "SparseHash", "SparseInterval",
           "SparseList", "SparsePoint", "SparseRunList", "SparseVBL",
           "flatten", "level_class"]
