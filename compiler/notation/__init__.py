"""Index notation: the AST, its printer and the parser.

>>> print(parse("y[i] = A[i, j] * x[j]"))
y[i] = sum[j](A[i, j] * x[j])
"""

from .ast import (Access, Assign, Call, Expr, Index, Literal, Reduce, accesses, free_indices,
                  walk)
from .parser import parse, parse_expr
from .shape import Broadcast, Collapse, Concat, ShapeOp, Slice, Split, has_shape_operators

__all__ = ["Access", "Assign", "Call", "Expr", "Index", "Literal", "Reduce", "accesses",
           "free_indices", "walk", "parse", "parse_expr", "Broadcast", "Collapse", "Concat", "ShapeOp", "Slice",
           "Split", "has_shape_operators"]
