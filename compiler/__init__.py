"""sparsescope's compiler: tensors, level formats, front ends, lowering and the C back end.

>>> import numpy as np
>>> A = Tensor.from_numpy(np.array([[0, 1.5], [2.0, 0]]), csr(), name="A")
>>> A
Tensor(A, csr: Dense(SparseList(Element(0.0))), shape=(2, 2), dtype=float64, fill=0.0, nnz=2)
>>> print(parse("y[i] = A[i, j] * x[j]"))
y[i] = sum[j](A[i, j] * x[j])
"""

from . import algebra, array, backend, imperative, notation, reference
from .algebra import Operator, lookup
from .user_functions import user_function
from .array import Array, asarray, compute
from .backend import Kernel, compile_function
from .errors import (AxisError, CompileError, CompilerNotFoundError, DTypeError, FormatError, KernelError,
                     ParseError, ShapeError, SparsescopeError, StrategyError, UsageError, UserCodeError)
from .fibertree import fiber_tree_artifact, fiber_tree_dot, fiber_tree_text
from .format import Format, coo, csc, csf, csr, dcsr, dense, parse_format, sparse_vector
from .levels import Compressed, Dense, Element, Pattern, SparseCOO, SparseList
from .runtime import Kernel as LoweredKernel
from .lowering import einsum, lower, register_strategy, strategies
from .notation import parse
from .reference import evaluate
from .reused_outputs import reuse
from .tensor import Tensor
from .trace import Artifact, Rewrite, Step, Trace

__all__ = [
    "Array", "array", "asarray", "compute", "Artifact", "CompileError", "CompilerNotFoundError", "Compressed", "DTypeError", "Dense",
    "Element", "Format", "FormatError", "Kernel", "KernelError", "Operator", "ParseError",
    "Pattern", "Rewrite", "ShapeError", "AxisError", "SparseCOO", "SparseList", "SparsescopeError", "Step",
    "StrategyError", "Tensor", "Trace", "algebra", "backend", "compile_function", "coo", "csc",
    "csf", "csr", "dcsr", "dense", "einsum", "evaluate", "fiber_tree_artifact", "fiber_tree_dot",
    "fiber_tree_text", "imperative", "lookup", "lower", "LoweredKernel", "notation", "parse",
    "parse_format", "reference", "register_strategy", "reuse", "strategies",
    "sparse_vector", "UsageError", "UserCodeError", "user_function",
]
