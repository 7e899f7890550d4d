"""Index notation: the AST, its printer and the parser.

>>> print(parse("y[i] = A[i, j] * x[j]"))
y[i] = sum[j](A[i, j] * x[j])
"""

from .ast import (Access, Assign, Call, Expr, Index, Literal, Reduce, accesses, free_indices,
                  walk)
from .parser import parse, parse_expr

__all__ = ["Access", "Assign", "Call", "Expr", "Index", "Literal", "Reduce", "accesses",
           "free_indices", "walk", "parse", "parse_expr"]
