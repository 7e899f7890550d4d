"""sparsescope's compiler: tensors, level formats, front ends, lowering and the C back end."""

from .errors import (CompileError, CompilerNotFoundError, DTypeError, FormatError, KernelError,
                     ParseError, ShapeError, SparsescopeError, StrategyError)
from .trace import Artifact, Rewrite, Step, Trace

__all__ = [
    "Artifact", "CompileError", "CompilerNotFoundError", "DTypeError", "FormatError",
    "KernelError", "ParseError", "Rewrite", "ShapeError", "SparsescopeError", "Step",
    "StrategyError", "Trace",
]
