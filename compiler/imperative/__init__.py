"""The imperative IR every lowering ends in, its printer and its interpreter.

>>> from compiler.imperative import Var, Buffer, For, pretty
>>> i, y = Var("i"), Buffer("y", "float64", "inout")
>>> print(pretty(For(i, 0, 4, [y.store(i, 0.0)])))
for (int64 i = 0; i < 4; i++) {
    y[i] = 0.0;
}
"""

from .interpreter import interpret
from .ir import (Allocate, Tagged, BINARY_OPS, COMPOUND_OPS, MATH_FUNCTIONS, UNARY_OPS, Assign, BinOp, Block, Break,
                 Buffer, Call, Cast, Comment, CompoundAssign, Const, Declare, Expr, For, Function, Grow, Growable,
                 BufferArg, Helper, If, Load, Origin, OutScalar, Pragma, Prefetch, Scalar, Select, Stmt, Store, UnOp, Var, View,
                 While, and_, as_expr, block, call, const, fmax, fmin, not_, or_)
from .traverse import tag_origins, walk
from .printer import pretty

__all__ = [
    "Allocate", "Tagged", "BINARY_OPS", "COMPOUND_OPS", "MATH_FUNCTIONS", "UNARY_OPS", "Assign", "BinOp", "Block", "Break",
    "Buffer", "Call", "Cast", "Comment", "CompoundAssign", "Const", "Declare", "Expr", "For",
    "BufferArg", "Function", "Grow", "Growable", "Helper", "If", "Load", "Origin", "OutScalar", "Pragma", "Prefetch", "Scalar", "Select",
    "Stmt", "Store", "UnOp", "Var", "View", "While", "and_", "as_expr", "block", "call", "const", "fmax", "fmin",
    "interpret", "not_", "or_", "pretty", "tag_origins", "walk",
]
