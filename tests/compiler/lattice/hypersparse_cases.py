"""Two sparse vectors over 2^40 coordinates with two entries each, for the tests of loops that must
skip empty blocks (split, parallel blocks): visiting every block of such a loop is a hang.

>>> x, y = hypersparse_pair()
>>> x.shape == (2 ** 40,), x.levels[0].idx.tolist()
(True, [0, 1099511627775])
"""

import numpy as np

from compiler import Tensor
from compiler.levels import Element, SparseList

N = 2 ** 40


def hypersparse_pair():
    """``x`` stores 2.0 at 0 and 3.0 at ``N - 1``; ``y`` stores 1.0 at 0 and at 5."""
    x = Tensor(SparseList(Element(0.0, vals=np.array([2.0, 3.0])), size=N, pos=np.array([0, 2]),
                          idx=np.array([0, N - 1])), name="x")
    y = Tensor(SparseList(Element(0.0, vals=np.array([1.0, 1.0])), size=N, pos=np.array([0, 2]),
                          idx=np.array([0, 5])), name="y")
    return x, y
