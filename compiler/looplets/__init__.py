"""The looplet compiler (strategy B): loop programs, looplets, levels as looplets, the simplifier.

Public API:

* :func:`loop_program` (decorator): a Python function as a Finch-style loop program;
* :func:`compile_program`: lower and compile a loop program (or index notation) for
  tensors and output formats, returning a kernel that returns the output Tensor;
* the 0-D formats :class:`Scalar`, :class:`SparseScalar` and :class:`ShortCircuitScalar`
  (outputs, or temporaries given as a parameter's default);
* the IR in :mod:`.program`, the looplets in :mod:`.looplets`, level unfurls in
  :mod:`.levels`, the lowering in :mod:`.lowerers` (its rules in :mod:`.looplet_rules`), the simplifier in
  :mod:`.simplify`, the normal-form passes in :mod:`.passes`, index notation as a loop program
  (its reductions hoisted into scalars) in :mod:`.notation_program`.

>>> import numpy as np
>>> from compiler import Tensor
>>> @loop_program
... def total(s, A):
...     for i in _:
...         for j in _:
...             s += A[i, j]
>>> A = Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]]), "csr")
>>> float(compile_program(total, s="dense", A=A)(A=A))
5.0
"""

from .compile import compile_program, register
from .notation_program import from_index_notation
from .errors import ProgramError
from .language import LoopProgram, loop_program
from .scalars import Scalar, ShortCircuitScalar, SparseScalar

__all__ = ["LoopProgram", "ProgramError", "Scalar", "ShortCircuitScalar", "SparseScalar", "compile_program",
           "from_index_notation", "loop_program"]

register()
