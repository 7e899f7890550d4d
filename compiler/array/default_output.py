"""The format of an array expression's result where none is asked (:func:`output_format`): dense where every
operand is or for a product with a dense factor (:func:`dense_product`, as scipy's ``csr @ ndarray``), else a
sparse one of the result's rank (a sparse vector, CSR, COO), CSC for shape operators over CSC matrices only
(:func:`keeps_column_order`), COO for a stack of matrices not all CSR or all CSC, as scipy's (:func:`stacks_as_coo`).
:mod:`compiler.array.fuse` tries these first, CSR where a kernel cannot write them.

>>> import numpy as np
>>> from compiler.interop import to_tensor
>>> from compiler.array import build
>>> C = Leaf(to_tensor(np.eye(3), "C").asformat("csc"))
>>> output_format(build.getitem(C, slice(None, None, 2)), None, {"C": C.tensor}).format.shorthand
'csr'
>>> keeps_column_order(build.getitem(C, slice(None, None, 2)))
True
"""

from __future__ import annotations

from ..format import Format, parse_format
from ..index_fit import OpenIndex
from .nodes import Broadcast, Leaf, Map, Node, Permute, Reduction, Scalar, ShapeOp


def all_dense(tensors: dict) -> bool:
    """Whether every tensor of ``tensors`` (by name) is stored dense: then so is the default result."""
    return all(t.format.is_dense for t in tensors.values())


def output_format(node: Node, format, tensors: dict):
    """The format asked for the result: ``format`` (a shorthand gets the expression's dtype and fill),
    or by default none (dense) when every operand is dense, else a sparse one of the result's rank.
    A shorthand name (or no format) leaves the index dtype to the lowering, which picks int32 where
    scipy would (an :class:`~compiler.index_fit.OpenIndex`); a Format keeps its own."""
    if format is None:
        if node.ndim == 0 or all_dense(tensors) or dense_product(node):
            return None
        format = {1: "sparse_vector", 2: "csr"}.get(node.ndim, "coo")
    if isinstance(format, str):
        fmt = parse_format(format, ndim=node.ndim, fill=node.fill, dtype=node.dtype.name)
        return fmt if "(" in format else OpenIndex(fmt)
    if isinstance(format, Format):
        return format
    return parse_format(format)


def dense_product(node: Node) -> bool:
    """Whether ``node`` is a sum of products with a stored dense factor (``matmul``, ``tensordot``, ``einsum``,
    ``vecdot`` of a sparse and a dense operand), or an elementwise function of such products, stored dense
    operands and scalars (``A @ x + 1``, ``isnan(A @ x)``, ``A @ x + y``): its default result is dense, as
    scipy's ``csr @ ndarray`` and pydata's ``COO @ ndarray`` are. Each of its rows holds a value wherever the
    sparse operand's row holds an entry, so a sparse result would store nearly every entry, and a CSR one could
    not be appended in the loop order that reads both operands as stored.

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> A = Leaf(to_tensor(np.eye(3), "A").asformat("csr")); X = Leaf(to_tensor(np.ones((3, 2)), "X"))
    >>> dense_product(build.matmul(A, X)), dense_product(build.matmul(A, A))
    (True, False)
    >>> dense_product(build.elementwise("mul", A, A)), dense_product(build.elementwise("add", build.matmul(A, X), X))
    (False, True)
    """
    node = _unplaced(node)
    if isinstance(node, Map):
        arrays = [_unplaced(a) for a in node.args if not isinstance(a, Scalar)]
        return any(dense_product(a) for a in arrays) and all(dense_product(a) or _stored_dense(a) for a in arrays)
    if not (isinstance(node, Reduction) and node.op.name == "add"):
        return False
    product = node.child
    while isinstance(product, Map) and product.op.name == "astype":   # (a float32 sum, made in float64)
        product = product.args[0]
    return isinstance(product, Map) and product.op.name == "mul" and any(_stored_dense(a) for a in product.args)


def _unplaced(node: Node) -> Node:
    """``node`` under its transposes and broadcasts (``einsum("ij,jk->ki", ...)``: the product transposed)."""
    while isinstance(node, (Broadcast, Permute)):
        node = node.child
    return node


def _stored_dense(node: Node) -> bool:
    node = _unplaced(node)
    return isinstance(node, Leaf) and node.tensor.ndim > 0 and node.tensor.format.is_dense


#: why a default result is first tried in a format other than CSR (:func:`compiler.array.fuse.lower_node`)
ORDER_WHY = {"csc": "its operands' order", "coo": "as scipy stacks matrices not all CSR or all CSC"}


def stacks_as_coo(node: Node) -> bool:
    """Whether ``node`` is a matrix that stacks sparse matrices that are neither all CSR nor all CSC
    (a CSR with a COO, a CSC or a numpy array; COOs; a DCSR): scipy's ``sp.vstack`` and
    ``sp.hstack`` keep CSR only when every block is CSR and CSC only when every block is CSC, and
    make every other stack COO, so its default result is COO (where a kernel writes it). An
    operand transposed is left to the default (scipy's ``csc.T`` is CSR), as is a stack of numpy
    arrays only (dense).

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> C = Leaf(to_tensor(np.eye(3), "C").asformat("csc")); R = Leaf(to_tensor(np.eye(3), "R").asformat("csr"))
    >>> O = Leaf(to_tensor(np.eye(3), "O").asformat("coo"))
    >>> stacks_as_coo(build.concat([C, R], 0)), stacks_as_coo(build.concat([R, O], 0))
    (True, True)
    >>> stacks_as_coo(build.concat([C, C], 1)), stacks_as_coo(build.concat([R, R], 1))
    (False, False)
    >>> stacks_as_coo(build.elementwise("add", C, R))   # (not a stack: scipy's csc + csr is CSC)
    False
    """
    if node.ndim != 2:
        return False

    def kinds(n: Node, into: set) -> bool:
        if isinstance(n, Permute):
            return False
        if isinstance(n, Leaf) and n.tensor.ndim == 2:
            t = n.tensor
            sparse = not t.format.is_dense
            short = t.format.shorthand if sparse else None
            into.add((short if short in ("csr", "csc") else "other", sparse))
        return all(kinds(c, into) for c in n.children())

    def mixed(n: Node) -> bool:
        if isinstance(n, Permute):
            return False
        if isinstance(n, ShapeOp) and n.kind in ("concat", "stack"):
            found: set = set()
            if kinds(n, found) and any(sparse for _, sparse in found) and \
                    {kind for kind, _ in found} not in ({"csr"}, {"csc"}):
                return True
        return any(mixed(c) for c in n.children())

    return mixed(node)


def keeps_column_order(node: Node) -> bool:
    """Whether ``node``'s default result keeps its operands' column-major order: a matrix made by
    shape operators with no transpose from sparse matrices that are all stored columns first (CSC);
    it is computed into CSC where a kernel writes that, as scipy's ``csc[::2]`` is CSC.

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> A = Leaf(to_tensor(np.eye(3), "A").asformat("csc"))
    >>> keeps_column_order(build.getitem(A, slice(None, None, 2))), keeps_column_order(A)
    (True, False)
    >>> keeps_column_order(build.getitem(build.permute_dims(A, (1, 0)), slice(None, None, 2)))
    False
    """
    if node.ndim != 2 or not has_shape_ops(node):
        return False
    orders = set()

    def visit(n: Node) -> bool:
        if isinstance(n, Permute):
            return False
        if isinstance(n, Leaf):
            t = n.tensor
            if t.ndim == 2 and not t.format.is_dense:
                orders.add(t.mode_order)
            return True
        return all(visit(c) for c in n.children())

    return visit(node) and orders == {(1, 0)}


def has_shape_ops(node: Node) -> bool:
    return isinstance(node, ShapeOp) or any(has_shape_ops(c) for c in node.children())


__all__ = ["ORDER_WHY", "all_dense", "dense_product", "has_shape_ops", "keeps_column_order", "output_format",
           "stacks_as_coo"]
