"""The array language: lazy arrays with the Array API's names, each expression computed as one kernel.

>>> import numpy as np
>>> from compiler import array as xp
>>> A = xp.asarray(np.array([[1.0, 0], [0, 2.0]]), format="csr")
>>> (A @ xp.asarray(np.array([1.0, 1.0])) + 1).compute().to_numpy().tolist()
[2.0, 3.0]

Modules: :mod:`~compiler.array.nodes` (the expression graph), :mod:`~compiler.array.build` (the
operators' shape and dtype rules), :mod:`~compiler.array.lazy` (the ``Array`` API),
:mod:`~compiler.array.derived` (the API's functions made of others: ``mean``, ``flip``, ``isinf``, ...),
:mod:`~compiler.array.creation` (``zeros``, ``full``, ``eye``, ...: a sparse one stores only what differs from its fill),
:mod:`~compiler.array.data_types` (the dtypes, constants and their functions: ``result_type``, ``finfo``, ...),
:mod:`~compiler.array.linalg` (the linear algebra extension: norms, diagonals, traces),
:mod:`~compiler.array.fft` (the Fourier transform extension: numpy's FFT of the computed operand; shifts fused),
:mod:`~compiler.array.fuse` (one index-notation statement per expression),
:mod:`~compiler.array.default_output` (the result's format where none is asked),
:mod:`~compiler.array.reshapes` (a reshape's groups of axes), :mod:`~compiler.array.shapeops`
(the shape operators computed on stored entries, where a statement cannot say them), and the functions
whose result depends on the values, computed on the stored entries before the expression around them
(:mod:`~compiler.array.lanes`, what they read): :mod:`~compiler.array.searching` (``argmax``, ``nonzero``,
``searchsorted``), :mod:`~compiler.array.sets` (``unique_*``), :mod:`~compiler.array.sorting` (``sort``,
``argsort``), :mod:`~compiler.array.statistics` (``cumulative_sum``), :mod:`~compiler.array.indexing`
(``take``, ``take_along_axis``) and :mod:`~compiler.array.assignment` (``x[mask]``, ``x[key] = value``).
"""

from .lazy import *  # noqa: F401,F403
from .lazy import __all__ as _lazy_all
from .derived import *  # noqa: F401,F403
from .derived import __all__ as _derived_all
from .creation import *  # noqa: F401,F403
from .creation import __all__ as _creation_all
from .data_types import *  # noqa: F401,F403
from .data_types import __all__ as _data_types_all
from .indexing import take, take_along_axis
from . import assignment   # (x[mask] and x[key] = value: installed into Array)
from .searching import *  # noqa: F401,F403
from .searching import __all__ as _searching_all
from .sets import *  # noqa: F401,F403
from .sets import __all__ as _sets_all
from .sorting import *  # noqa: F401,F403
from .sorting import __all__ as _sorting_all
from .statistics import *  # noqa: F401,F403
from .statistics import __all__ as _statistics_all
from . import linalg   # (the Array API's extension: ``xp.linalg.vector_norm``, ...)
from . import fft   # (the Fourier transform extension: ``xp.fft.fft``, ``xp.fft.fftshift``, ...)

__all__ = list(_lazy_all) + list(_derived_all) + list(_creation_all) + list(_data_types_all) + \
    ["take", "take_along_axis"] + \
    list(_searching_all) + list(_sets_all) + list(_sorting_all) + list(_statistics_all) + ["linalg", "fft"]
