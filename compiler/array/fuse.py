"""An array expression as ONE index-notation statement: its kernel, computed.

The expression graph of :mod:`compiler.array.nodes` becomes one :class:`~compiler.notation.Assign`:
an elementwise operator is a :class:`~compiler.notation.Call`, a reduction (and the sum of a
``matmul``, ``tensordot`` or ``einsum``) a :class:`~compiler.notation.Reduce` over fresh indices (over a
stack's new axis alone, the operator between its operands: :func:`stack_reduced`),
a transpose or ``expand_dims`` a relabelling of indices, and broadcasting leaves an extent-1 axis
out of the access. Shape operators become the notation's (BURRITO's): ``concat`` a ``Concat``,
``stack`` a ``Concat`` of operands broadcast along the new axis (reshaped with that axis merged
into the next, a ``Concat`` of the operands themselves: :meth:`Emitter.emit_stack_ravel`), a
slice with steps a ``Slice``, an integer index of a stored tensor a constant index, and a
``reshape`` of any rank ``Collapse`` and ``Split`` chains, one per group of axes it reshapes
(:mod:`compiler.array.reshapes`). What the notation cannot say, or a strategy refuses, is
materialized, each in the trace's ``materialize`` steps with the node and why (a statement a
strategy refuses is a ``retry`` step, saying what was tried instead, which may still be one kernel):

- other shape operators (an integer index of an expression over a shape operator: of operators,
  transposes, reductions and other indexes over tensors it is their tensors' constant index, a slice's start and
  step composed with it, :func:`takes_constants`), or all of them when the statement
  with its shape operators is refused (both strategies refuse a stack reshaped with a row
  straddling two operands and each row summed, for instance; a reshape with an axis kept as a
  loop of its own is first tried as a split of its operand's whole ravel, which looplets
  gather): computed on their operands'
  entries by :mod:`compiler.array.shapeops` (an operand that is itself an expression is computed
  first, by its own kernel);

The default result of shape operators over CSC matrices only (no transpose) is CSC, their order
(:func:`keeps_column_order`); of a stack whose matrices are neither all CSR nor all CSC, COO, as
scipy's ``sp.vstack([csr, coo])`` and ``sp.hstack([csc, csr])`` (:func:`stacks_as_coo`); where that
statement is refused, CSR, the refusal in the trace (and, given no strategy, where its kernel
gathers an operand and the CSR one does not: a ``retry`` step says so). A statement whose lattice
kernel reads an input converted before each call is lowered once more where that may read none: a
sum, for the tensors' shapes (:mod:`compiler.lattice.bucketed_sums`), and a reshape of several axes
to several, each axis split first into the pieces both shapes' axes divide, then collapsed
(:func:`~compiler.array.reshapes.refined_group`: a concatenation with a part of another fill,
reshaped); the other kernel is kept where it converts an input too. A refused reshape of an elementwise
operator is tried as the operator of its operands reshaped (:mod:`compiler.array.pushed_reshapes`:
``(a3 + 1).reshape(4, 6)`` as ``a3.reshape(4, 6) + 1``) before its shape operators are computed apart.
- an extent-1 axis of a stored tensor broadcast against a longer one: that tensor without the axis
  (``squeeze_tensor``);
- a reduction inside an elementwise operator when the strategy refuses it there (looplets, where
  no wrapper expresses a shape operator inside the reduction): computed by its own kernel.

>>> import numpy as np
>>> from compiler.interop import to_tensor
>>> from compiler.array import build
>>> A = Leaf(to_tensor(np.eye(2), "A")); x = Leaf(to_tensor(np.ones(2), "x"))
>>> expr = build.reduce("sum", build.elementwise("add", build.matmul(A, x), x))
>>> print(notation(expr)[0])
out[] = sum[i](sum[j](A[i, j] * x[j]) + x[i])
"""

from __future__ import annotations

import contextlib
import math

from ..algebra import astype, lookup
from ..capabilities import capabilities
from ..errors import CompileError, CompilerNotFoundError, KernelError, SparsescopeError
from ..format import parse_format
from ..lowering_budget import splittable
from ..notation import Broadcast as NBroadcast
from ..notation.dtypes import expr_dtype, reduce_dtype
from ..notation import (Access, Assign, Call, Collapse, Concat, Index, Literal, Reduce, Slice, Split,
                        accesses, free_indices)
from ..tensor import Tensor
from ..values import same_value
from ..trace import Trace
from .attempts import (FILL_ROWS_WHY, PUSHED_WHY, REFINED_WHY, RESHAPES_AS, Chosen, attempt_text, called_key,
                       chosen, chosen_key, keep_chosen, keep_prepared, prepared, structure)
from .default_output import ORDER_WHY, has_shape_ops, keeps_column_order, output_format, stacks_as_coo
from .exprtree import expression_artifact, expression_text
from .nodes import Broadcast, Leaf, Map, Node, Permute, Reduction, Scalar, ShapeOp, all_true, describe
from .pushed_reshapes import reshapes_pushed
from .pushed_slices import slices_pushed
from .reshapes import groups_apart_from_ones, refined_group
from .shapeops import MATERIALIZE, squeeze_tensor

_INDEX_NAMES = "ijklmnpqrstuvw"
_TENSOR_NAMES = "ABCDEFGHKLMNPQRSTUVWXYZ"


class Emitter:
    """Builds one statement from an expression graph, naming tensors and indices freshly.

    ``split_reductions``: a reduction under an elementwise operator is materialized (for a strategy
    that refuses it there). ``fuse_shapes``: shape operators are the notation's (``"whole"``: each
    reshape one collapse of all its operand's axes and one split, for a strategy that refuses an
    axis kept as a loop of its own; ``"refined"``: a group of several axes to several split into the
    pieces both sides' axes divide, then collapsed, where it can be: :func:`refined_group`).
    ``materialized`` caches the tensors computed apart, by node, across attempts; ``notes`` lists
    ``(node, why)`` for the trace.
    """

    def __init__(self, strategy, checked: bool, split_reductions: bool = False, materialized=None,
                 fuse_shapes: bool = False):
        self.strategy = strategy
        self.fuse_shapes = fuse_shapes
        self.whole_reshapes = fuse_shapes == "whole"
        self.refined_reshapes = fuse_shapes == "refined"
        self.checked = checked
        self.split_reductions = split_reductions
        self.materialized = {} if materialized is None else materialized
        self.names: dict[int, str] = {}      # id(tensor) -> name
        self.tensors: dict[str, Tensor] = {}  # name -> tensor, for every name given
        self.next_index = 0
        self.reducing = 0   # (how many reductions the node being emitted is summed by)
        self.notes: list[tuple[str, str, object]] = []
        #: what became of each node (by id): the notation it was emitted as, and why it was
        #: materialized where it was (the ``array`` step's drawing shows both)
        self.emitted: dict[int, object] = {}
        self.fates: dict[int, str] = {}

    # -- names -------------------------------------------------------------------------------

    def index(self) -> Index:
        k = self.next_index
        self.next_index += 1
        base = _INDEX_NAMES[k % len(_INDEX_NAMES)]
        return Index(base if k < len(_INDEX_NAMES) else f"{base}{k // len(_INDEX_NAMES)}")

    def name(self, tensor: Tensor) -> str:
        key = id(tensor)
        if key not in self.names:
            given = tensor.name
            ok = (isinstance(given, str) and given.isidentifier() and given.isascii() and given != "out"
                  and given not in self.tensors and given.rstrip("0123456789") not in _INDEX_NAMES
                  and not given.startswith(("one_", "_")))
            if not ok:
                k = len(self.tensors)
                given = _TENSOR_NAMES[k % len(_TENSOR_NAMES)] + (str(k // len(_TENSOR_NAMES)) if k >= len(_TENSOR_NAMES) else "")
                while given in self.tensors:
                    k += 1
                    given = _TENSOR_NAMES[k % len(_TENSOR_NAMES)] + str(k // len(_TENSOR_NAMES))
            self.names[key] = given
            self.tensors[given] = tensor
        return self.names[key]

    # -- emission ----------------------------------------------------------------------------

    def emit(self, node: Node, idx: tuple, top: bool = True):
        """The index-notation expression of ``node`` with its axes indexed by ``idx`` (None for an
        extent-1 axis broadcast away). ``top``: no elementwise operator encloses it."""
        out = self._emit(node, idx, top)
        self.emitted.setdefault(id(node), out)
        return out

    def _emit(self, node: Node, idx: tuple, top: bool):
        if isinstance(node, Leaf):
            return self.access(self.leaf(node), idx)
        if isinstance(node, Scalar):
            return Literal(node.value, node.dtype.name)
        if isinstance(node, Map):
            args = []
            for a in node.args:
                lead = node.ndim - a.ndim
                sub = tuple(_broadcast_axis(idx[lead + k]) if a.shape[k] == 1 and node.shape[lead + k] != 1
                            else idx[lead + k] for k in range(a.ndim))
                args.append(self.emit(a, sub, top=False))
            return Call(node.op, tuple(args))
        if isinstance(node, Reduction):
            if not top and self.split_reductions:
                return self.access(self.apart(node, "the strategy refused the statement with the reduction "
                                                    "under an operator"), idx)
            return self.reduction(node, idx, top)
        if isinstance(node, Permute):
            sub = [None] * node.ndim
            for k, a in enumerate(node.axes):
                sub[a] = idx[k]
            return self.emit(node.child, tuple(sub), top)
        if isinstance(node, Broadcast):
            sub = tuple(_broadcast_axis(idx[a]) if c == 1 and node.shape[a] != 1 else idx[a]
                        for c, a in zip(node.child.shape, node.axes))
            return self.emit(node.child, sub, top)
        if isinstance(node, ShapeOp):
            return getattr(self, f"emit_{node.kind}")(node, idx)
        raise TypeError(f"not an array node: {node!r}")

    def leaf(self, node: Leaf) -> Tensor:
        """A leaf's tensor; one a value-dependent function computed (``origin``) noted once."""
        if node.origin is not None and id(node) not in self.fates:
            self.notes.append((describe(node), node.origin, None))
            self.fates[id(node)] = f"materialized: {node.origin}"
        return node.tensor

    def reduction(self, node: Reduction, idx: tuple, top: bool):
        child = node.child
        if not node.keepdims and len(node.axes) == child.ndim:
            # (a reduction over every axis takes its operand's entries in any order: a reshape or a transpose below
            # moves none in or out, so it reduces the tensor under them, walked as stored: sum(a.T.reshape(-1)))
            inner = unviewed(child)
            if inner is not child:
                whole = Reduction(node.op, inner, tuple(range(inner.ndim)), False, node.dtype)
                out = self.reduction(whole, idx, top)
                self.emitted.setdefault(id(child), out)
                return out
        if stack_reduced(node):
            # (the reduction over a stack's new axis is the operator between its operands, in order: no stack to
            # build, no loop over two coordinates; a CSC flattened row-major in it is walked as beside a vector)
            parts = [self.emit(a, idx, top=False) for a in child.args]
            out = parts[0]
            for part in parts[1:]:
                out = Call(node.op, (out, part))
            self.emitted.setdefault(id(child), out)
            return out
        fresh = {a: self.index() for a in node.axes}
        sub, k = [], 0
        for a in range(child.ndim):
            if a in fresh:
                sub.append(fresh[a])
                k += node.keepdims
            else:
                sub.append(idx[k])
                k += 1
        self.reducing += 1
        body = self.emit(child, tuple(sub), top)
        self.reducing -= 1
        # (an axis the operand only broadcasts, expand_dims's or broadcast_to's, is in no access: a
        # broadcast gives the reduction's index its extent, so sum of n copies is n times the value)
        # (one copy, or max, min, any and all of copies, is the value: no reduction at all)
        used = set(free_indices(body))
        for a, i in list(fresh.items()):
            if i not in used and (child.shape[a] == 1 or node.op.idempotent and child.shape[a] > 1):
                del fresh[a]
            elif i not in used:
                body = NBroadcast(i, body, child.shape[a])
        if child.dtype != node.dtype:
            # numpy sums an int32 or bool array in int64: each term cast first (times a typed 1)
            body = Call(lookup("mul"), (body, Literal(1, node.dtype.name)))
        indices = tuple(fresh[a] for a in node.axes if a in fresh)
        summed = lookup("mul").result_dtype(child.dtype, node.dtype) if child.dtype != node.dtype else child.dtype
        if indices and (not top or self.reducing) and reduce_dtype(node.op, summed) != node.dtype:
            # (numpy's matmul of int32 sums in int32, wrapping, where the notation's sum counts in int64: under
            # an operator, or summed again, the sum is cast to int32 first, as numpy's; a result is written
            # into an output of its dtype, lower_node)
            return Call(astype(node.dtype.name), (Reduce(node.op, indices, body),))
        if isinstance(body, Reduce) and body.op == node.op:   # (sum of a sum: one reduction)
            return Reduce(node.op, indices + body.indices, body.body)
        return Reduce(node.op, indices, body) if indices else body

    # -- the shape operators: one method each builds its lowering. With ``fuse_shapes`` each emits
    # the notation's shape operator (Collapse/Split, Concat, Slice, constant indices), so the
    # whole expression stays one kernel; what it cannot say (or what a strategy then refuses)
    # is computed on the operands' entries by compiler.array.shapeops, as the trace notes.

    def emit_reshape(self, node: ShapeOp, idx: tuple):
        """``reshape`` of any rank, row-major: each group of axes (:func:`groups_apart_from_ones`) that is
        reshaped a ``Collapse`` of its operand axes into one index (a chain, outer pairs first), a
        ``Split`` of that index into the result's axes (a chain, major first), or both; an empty
        array's axes one collapsed index standing for a result axis of extent 0, the others
        broadcast; a 0-d operand broadcast to the extent-1 axes. ``(6, 4) -> (2, 3, 4)`` is
        ``split(A[k, l], k -> (p:2, q:3))``, ``(2, 3, 4) -> (24,)`` ``collapse(collapse(T[i, j, l],
        (i, j) -> m), (m, l) -> k)``."""
        (child,) = node.args
        if not self.fuse_shapes:
            return self.access(self.shape_op(node), idx)
        old, new = child.shape, node.shape
        # (a result axis broadcast away by the expression around it is extent 1: left out)
        kept = tuple(a for a in range(node.ndim) if idx[a] is not None)
        if math.prod(old) == 0:
            return self.reshape_empty(child, new, kept, idx)
        # (an extent-1 axis is no part of a group: a result's is broadcast, an operand's read at its one
        # coordinate, so (6,) -> (1, 6, 1) is no split in three, whose lattice walks two groups of one)
        # (an operand with shape operators keeps its axes: a ravel of a stack collapses a run of them,
        # emit_stack_ravel, and a concatenation read at a constant index is not fused)
        axes, grouped, groups = groups_apart_from_ones(old, new, has_shape_ops(child), kept)
        ones, kept = tuple(a for a in kept if a not in grouped), grouped
        shape = tuple(new[a] for a in kept)
        groups = tuple((tuple(axes[x] for x in olds), news) for olds, news in groups)
        if groups and self.whole_reshapes:
            groups = ((axes, tuple(range(len(shape)))),)
        if not groups:
            if not old:        # (a 0-d operand: each result axis is extent 1)
                expr = self.emit(child, (), top=False)
                for a in kept:
                    expr = NBroadcast(idx[a], expr, 1)
                return expr
            # (every operand axis is extent 1 and no result axis is kept: entry 0 of each)
            return self.emit_extent_one(child)
        sub = [None if a in axes else 0 for a in range(len(old))]
        wrap = []    # (each group's collapse and split chains, applied to the operand in turn)
        splits = []  # (a refined group's split chains, then its collapse chains)
        raveled = None   # (the group collapsing a stack's new axis with the axes after it)
        for olds, news in groups:
            outs = [idx[kept[b]] for b in news]
            if len(olds) == 1 and len(news) == 1:
                sub[olds[0]] = outs[0]
                continue
            if len(olds) > 1 and isinstance(child, ShapeOp) and child.kind in ("stack", "concat") and \
                    olds[0] == child.params[0]:
                # (the concatenation emit_stack_ravel makes is the collapse: its axes' indices are its own;
                # a concat's axis is its operands' own, a stack's new)
                k = outs[0] if len(news) == 1 else self.index()
                raveled = (len(olds) - (child.kind == "stack"), k)
                wrap.append(([k], k, outs, [shape[b] for b in news]))
                continue
            ins = [self.index() for _ in olds]
            for a, i in zip(olds, ins):
                sub[a] = i
            refined = self.refined_reshapes and len(olds) > 1 and len(news) > 1 and \
                refined_group(tuple(old[a] for a in olds), tuple(shape[b] for b in news))
            if refined:
                splits.append(self.refined_pieces(refined, ins, outs))
                continue
            k = outs[0] if len(news) == 1 else ins[0] if len(olds) == 1 else self.index()
            wrap.append((ins, k, outs, [shape[b] for b in news]))
        if raveled is None:
            expr = self.emit(child, tuple(sub), top=False)
        else:
            expr = self.emit_stack_ravel(child, tuple(sub), *raveled)
        # (an axis the operand broadcasts, np.tile's and np.repeat's new one, is in no access: a
        # broadcast gives the collapse its index)
        used = set(free_indices(expr))
        for a, i in enumerate(sub):
            if i is not None and i not in used and any(i in ins for ins, *_ in wrap):
                expr = NBroadcast(i, expr, old[a])
        for ins, k, outs, sizes in wrap:
            expr = collapse_chain(expr, ins, k, self.index)
            expr = split_chain(expr, k, outs, sizes, self.index)
        for chains, collapses in splits:
            for k, outs, sizes in chains:
                expr = split_chain(expr, k, outs, sizes, self.index)
            for ins, k in collapses:
                expr = collapse_chain(expr, ins, k, self.index)
        for a in ones:
            expr = NBroadcast(idx[a], expr, 1)
        return expr

    def refined_pieces(self, refined: tuple, ins: list, outs: list) -> tuple:
        """``(splits, collapses)`` of a group refined (:func:`refined_group`: its pieces and which each old and
        new axis holds), its old axes indexed ``ins``, its new ``outs``: each old axis of several pieces split
        into them (``(index, pieces' indices, extents)``), then each new axis of several collapsed from them
        (``(pieces' indices, index)``); a piece that is a whole axis is indexed as that axis."""
        pieces, olds, news = refined
        at = [None] * len(pieces)
        for i, held in zip(ins, olds):
            if len(held) == 1:
                at[held[0]] = i
        for o, held in zip(outs, news):
            if len(held) == 1:
                at[held[0]] = o     # (never a whole old axis too: the group would have ended there)
        at = [self.index() if x is None else x for x in at]
        splits = [(i, [at[p] for p in held], [pieces[p] for p in held]) for i, held in zip(ins, olds) if len(held) > 1]
        return splits, [([at[p] for p in held], o) for o, held in zip(outs, news) if len(held) > 1]

    def emit_stack_ravel(self, node: ShapeOp, sub: tuple, count: int, k: Index, first: int | None = None):
        """A stack with its new axis collapsed (row-major) with the ``count`` axes after it into
        ``k``, or a concat with its axis and the ``count - 1`` after it: the operands one after the
        other along ``k``, so a ``Concat`` of each operand's ``count`` axes collapsed (``sub``: the
        stack's or concat's indices, those axes' unused; ``first``: the operands' first axis
        collapsed, if not the stack's axis: a stack of no entries, whose every order is the same).
        ``stack([A, B]).reshape(10, 4)`` of 5x4 matrices is ``concat((A[p, j], B[q, j]), (p, q) -> i)``,
        a vstack; ``stack([A, B]).reshape(-1)`` and ``concat([A, B]).reshape(-1)`` are
        ``concat((collapse(A[p, l], (p, l) -> m), ...), ...)``, a concatenation of ravels, which a
        split into rows straddling two operands reads directly (a collapse of a concat would be a
        product over the concatenation)."""
        (axis,) = node.params
        first = axis if first is None else first
        rest = list(sub) if node.kind == "concat" else list(sub[:axis] + sub[axis + 1:])
        parts, fresh = [], []
        for a in node.args:
            own = [self.index() for _ in range(count)]
            at = list(rest)
            at[first:first + count] = own
            # (one operand: its collapse is k itself)
            kt = k if len(node.args) == 1 else own[0] if count == 1 else self.index()
            if count == 1 and len(node.args) == 1:
                at[first] = own[0] = k
            parts.append(collapse_chain(self.emit(a, tuple(at), top=False), own, kt, self.index))
            fresh.append(kt)
        out = parts[0] if len(parts) == 1 else Concat(tuple(parts), tuple(fresh), k)
        self.emitted.setdefault(id(node), out)
        return out

    def reshape_empty(self, child: Node, new: tuple, kept: tuple, idx: tuple):
        """A reshape of an array of no entries: the operand's axes collapsed into the index of a
        result axis of extent 0, the other result axes broadcast (no split: its divisor could be
        an extent 0, and every order of no entries is the same)."""
        zero = next(a for a in kept if new[a] == 0)   # (an axis broadcast away is extent 1, not 0)
        k = idx[zero]
        if isinstance(child, ShapeOp) and child.kind == "stack":
            # (its operands' ravels one after the other: no collapse of a stack's broadcasts)
            expr = self.emit_stack_ravel(child, (None,) * child.ndim, child.ndim - 1, k, first=0)
        else:
            ins = [self.index() for _ in child.shape] if child.ndim > 1 else [k]
            expr = collapse_chain(self.emit(child, tuple(ins), top=False), ins, k, self.index)
        for a in kept:
            if a != zero:
                expr = NBroadcast(idx[a], expr, new[a])
        return expr

    def emit_extent_one(self, child: Node):
        """``child``, all of whose axes are extent 1, read at its one entry: a stored tensor at
        the constant index 0 of each axis, and so is each tensor of an expression of no shape
        operator (``(A * 2).reshape(())`` of a 1x1 ``A`` is ``out[] = A[0, 0] * 2``); an expression
        with shape operators with each axis broadcast away."""
        if isinstance(child, Leaf):
            return Access(self.name(self.leaf(child)), (0,) * child.ndim)
        if not has_shape_ops(child):
            # (the constants pass through operators, transposes and broadcasts to each tensor's axes)
            return self.emit(child, (0,) * child.ndim, top=False)
        return self.emit(child, (None,) * child.ndim, top=False)

    def emit_concat(self, node: ShapeOp, idx: tuple):
        """``concat``: ``Concat`` of the operands along the axis; else ``concat_tensors``."""
        (axis,) = node.params
        if self.fuse_shapes and None not in idx:
            parts, fresh = [], []
            for a in node.args:
                j = self.index()
                sub = list(idx)
                sub[axis] = j
                parts.append(self.emit(a, tuple(sub), top=False))
                fresh.append(j)
            return Concat(tuple(parts), tuple(fresh), idx[axis])
        return self.access(self.shape_op(node), idx)

    def emit_stack(self, node: ShapeOp, idx: tuple):
        """``stack``: a ``Concat`` of the operands, each broadcast along the new axis for one
        coordinate; else ``stack_tensors``."""
        (axis,) = node.params
        if self.fuse_shapes and None not in idx:
            rest = idx[:axis] + idx[axis + 1:]
            if len(node.args) == 1:      # (a concat takes two or more operands)
                return NBroadcast(idx[axis], self.emit(node.args[0], rest, top=False), 1)
            fresh = [self.index() for _ in node.args]
            parts = tuple(NBroadcast(j, self.emit(a, rest, top=False), 1) for j, a in zip(fresh, node.args))
            return Concat(parts, tuple(fresh), idx[axis])
        return self.access(self.shape_op(node), idx)

    def emit_index(self, node: ShapeOp, idx: tuple):
        """Slicing and integer indexing: a ``Slice`` per sliced axis and a constant index per integer
        (of a stored tensor, or of an expression whose every path to its tensors passes through no
        shape operator, :func:`takes_constants`: ``square(v)[3]`` is ``A[3] * A[3]``); else
        ``index_tensor``."""
        (child,), (items,) = node.args, node.params
        ints = any(not isinstance(it, tuple) for it in items) or any(isinstance(i, int) for i in idx)
        # (a strategy that locates a constant read once for all its reads: a tensor may be read several times,
        # where each read is an entry (every index a constant, none under a sum's loop) if the strategy shares
        # no fiber read under a loop, the lattice)
        caps = None if self.strategy is None else capabilities(self.strategy)
        entries = caps is not None and caps.shares_constant_reads and all(isinstance(i, int) for i in idx)
        repeated = caps is not None and caps.shares_constant_fibers or entries
        if self.fuse_shapes and None not in idx and \
                (not ints or takes_constants(child, repeated, reduced=caps is not None and caps.shares_constant_fibers)):
            sub, slices, k = [], [], 0
            for it in items:
                if not isinstance(it, tuple):
                    sub.append(it)
                    continue
                out = idx[k]
                k += 1
                if it == (0, child.shape[len(sub)], 1):
                    sub.append(out)
                    continue
                if isinstance(out, int):
                    # (an integer index of this slice, from an index around it: one coordinate of the
                    # operand, ``a[1:5:2][1]`` is ``A[3, j]``)
                    sub.append(it[0] + out * it[2])
                    continue
                j = self.index()
                sub.append(j)
                start, stop, step = it if len(range(*it)) else (0, 0, 1)
                slices.append((j, out, start, stop, step))
            expr = (Access(self.name(self.leaf(child)), tuple(sub)) if isinstance(child, Leaf)
                    else self.emit(child, tuple(sub), top=False))
            for j, out, start, stop, step in slices:
                expr = Slice(expr, j, out, start, stop, step)
            return expr
        return self.access(self.shape_op(node), idx)

    def emit_broadcast(self, tensor: Tensor, idx: tuple):
        """A stored tensor's extent-1 axes broadcast (None in ``idx``): later ``Broadcast``; now
        the tensor without those axes (``squeeze_tensor``)."""
        axes = tuple(a for a, i in enumerate(idx) if i is None)
        key = ("squeeze", id(tensor), axes)
        if key not in self.materialized:
            self.materialized[key] = (squeeze_tensor(tensor, axes), tensor)
        self.notes.append((f"broadcast of axes {axes} of {self.name(tensor)}{tensor.shape}",
                           "index notation has no Broadcast yet: the tensor without those extent-1 "
                           "axes (squeeze_tensor)", None))
        return self.access(self.materialized[key][0], tuple(i for i in idx if i is not None))

    def access(self, tensor: Tensor, idx: tuple):
        if any(i is None for i in idx):
            return self.emit_broadcast(tensor, idx)
        # (a 0-d tensor is read as s[], so one kernel serves every value of it)
        return Access(self.name(tensor), idx)

    def apart(self, node: Node, why: str) -> Tensor:
        """``node`` computed by its own kernel (once per node), noted with ``why``."""
        key = ("apart", id(node))
        if key not in self.materialized:
            kernel, args = lower_node(node, None, self.strategy, self.checked, self.materialized)
            self.materialized[key] = (kernel(**args), kernel, node)
        tensor, kernel = self.materialized[key][:2]
        self.notes.append((describe(node), f"{why}; computed by its own kernel: {kernel.program}", kernel))
        self.fates.setdefault(id(node), f"own kernel: {why}")
        return tensor

    def shape_op(self, node: ShapeOp) -> Tensor:
        """``node`` computed on its operands' stored entries (an expression operand by its own kernel)."""
        key = ("shape", id(node))
        if key not in self.materialized:
            operands = [self.leaf(a) if isinstance(a, Leaf) else self.apart(a, f"an operand of {node.kind}")
                        for a in node.args]
            self.materialized[key] = (MATERIALIZE[node.kind](operands, node.params), node)
        why = ("no shape operator of index notation says it" if self.fuse_shapes else
               "the statement with its shape operators was refused")
        self.notes.append((describe(node), f"{why}: computed on the stored entries ({node.kind} in "
                                           f"compiler.array.shapeops)", None))
        self.fates.setdefault(id(node), f"materialized: {why}")
        return self.materialized[key][0]


def stack_reduced(node: Reduction) -> bool:
    """Whether ``node`` reduces a ``stack`` over its new axis alone, in the stack's own dtype, by an operator
    that combines two values elementwise (sum, prod, max, min, any, all): numpy's reduction along that axis
    is then the operator between the operands, first to last (``sum(stack([p, q]), axis=0)`` is ``p + q``).

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> p, q = (Leaf(to_tensor(np.ones(3), name)) for name in "pq")
    >>> stack_reduced(build.reduce("sum", build.stack([p, q], 0), 0)), stack_reduced(build.reduce("sum", p))
    (True, False)
    >>> stack_reduced(build.reduce("sum", build.stack([p, q], 1), 0))
    False
    """
    child = node.child
    # (operands of one fill: the stack's, and so the reduction's, is theirs; of several, it is the first's, which
    # the operator between them would not give its result)
    return isinstance(child, ShapeOp) and child.kind == "stack" and node.axes == (child.params[0],) and \
        not node.keepdims and child.dtype == node.dtype and not node.op.is_user and \
        node.op.name in ("add", "mul", "max", "min", "or", "and") and \
        all(same_value(a.fill, child.args[0].fill) for a in child.args)


def _broadcast_axis(at):
    """How an operand's extent-1 axis broadcast against a longer one is read where the result's axis is
    read at ``at``: left out (None) at a loop index, at its one coordinate 0 at a constant (an integer
    index of the broadcast: ``broadcast_to(v, (4, 6))[2]`` of a ``(1, 6)`` ``v`` is ``V[0, j]``)."""
    return 0 if isinstance(at, int) else None


def unviewed(node: Node) -> Node:
    """``node`` without the reshapes and transposes that only move its entries, under an elementwise operator of
    one array operand too (``a.T.reshape(-1) > 1`` is ``a > 1`` moved): what a reduction over every axis of it
    reduces. ``node`` itself where there are none.

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> a = Leaf(to_tensor(np.eye(2), "a"))
    >>> unviewed(build.reshape(build.permute_dims(a, (1, 0)), (4,))) is a
    True
    """
    inner = node
    while isinstance(inner, Permute) or isinstance(inner, ShapeOp) and inner.kind == "reshape":
        inner = inner.children()[0]
    if isinstance(inner, Map):
        arrays = [k for k, x in enumerate(inner.args) if not isinstance(x, Scalar)]
        if len(arrays) == 1 and inner.args[arrays[0]].shape == inner.shape:
            moved = unviewed(inner.args[arrays[0]])
            if moved is not inner.args[arrays[0]]:
                args = list(inner.args)
                args[arrays[0]] = moved
                return Map(inner.op, tuple(args))
    return inner


def takes_constants(node: Node, repeated: bool = False, reduced: bool = True) -> bool:
    """Whether ``node`` emitted at constant indices puts them into its tensors' accesses: it is a tensor,
    a scalar, or elementwise operators, transposes, broadcasts, reductions and indexes of such (another
    shape operator below would take its indices as loop indices; an index composes with the constants,
    a slice's start and step mapping one to its operand's), each tensor read once unless ``repeated``
    (and, where not ``reduced``, unless no reduction is below: a tensor read again under a sum's loop is
    a fiber, a row, not an entry).
    (Both strategies locate an entry read at constants once for all its reads: ``square(sign(v))[1]``
    reads ``v[1]`` six times, one search. Both walk a fiber at a constant coordinate once for its reads
    too, ``(sign(a) * a + a)[2]``: the looplets' follow; the lattice's one cursor, where each read's own
    multiplied the cases, 3,201 lines of C and 18 s of lowering for a CSR of NaN fill, now 152 and 1 s,
    :func:`compiler.lattice.seqreads.separate_reads`.)

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> v, w = (Leaf(to_tensor(np.ones(3), name)) for name in "vw")
    >>> takes_constants(build.elementwise("mul", v, w)), takes_constants(build.getitem(v, slice(None, None, 2)))
    (True, True)
    >>> takes_constants(build.reshape(v, (3, 1)))
    False
    >>> takes_constants(build.elementwise("mul", v, v)), takes_constants(build.elementwise("mul", v, v), repeated=True)
    (False, True)
    >>> twice = build.reduce("sum", build.elementwise("mul", v, v), None)
    >>> takes_constants(twice, repeated=True), takes_constants(twice, repeated=True, reduced=False)
    (True, False)
    """
    seen, read, todo = set(), set(), [node]   # (each node once: a shared subexpression is one node of a DAG)
    again = reduces = False
    while todo:
        n = todo.pop()
        if isinstance(n, Leaf):
            if id(n.tensor) in read and not repeated:
                return False
            again = again or id(n.tensor) in read
            read.add(id(n.tensor))
            continue
        if isinstance(n, Scalar) or id(n) in seen and repeated:
            again = again or id(n) in seen
            continue
        if id(n) in seen:   # (a shared subexpression reads its tensors again)
            return False
        # (an index below composes with the constants: a slice's start and step map one to its operand's)
        composes = isinstance(n, ShapeOp) and n.kind == "index"
        if not (composes or isinstance(n, (Map, Permute, Broadcast, Reduction))):
            return False
        reduces = reduces or isinstance(n, Reduction)
        seen.add(id(n))
        todo.extend(n.children())
    return reduced or not (again and reduces)


def collapse_chain(expr, ins: list, k: Index, fresh):
    """``expr`` with its indices ``ins`` collapsed row-major into ``k``: ``collapse(collapse(E, (i, j)
    -> m), (m, l) -> k)`` for three (``expr`` itself for one, ``k`` then being ``ins[0]``)."""
    at = ins[0]
    for n, i in enumerate(ins[1:], 2):
        to = k if n == len(ins) else fresh()
        expr = Collapse(expr, (at, i), to)
        at = to
    return expr


def split_chain(expr, k: Index, outs: list, sizes: list, fresh):
    """``expr`` with its index ``k`` split row-major into ``outs`` of extents ``sizes``, the major
    result first: ``split(split(E, k -> (p:2, m:12)), m -> (q:3, r:4))`` for three (``expr``
    itself for one, ``k`` then being ``outs[0]``). Both extents of each split are given, so no
    strategy divides extents to find one."""
    at = k
    for n in range(len(outs) - 1):
        last = n == len(outs) - 2
        rest = outs[n + 1] if last else fresh()
        expr = Split(expr, at, (outs[n], rest), (sizes[n], sizes[n + 1] if last else math.prod(sizes[n + 1:])))
        at = rest
    return expr


def notation(node: Node, emitter: Emitter | None = None) -> tuple[Assign, dict, Emitter]:
    """``node`` as ``out[...] = ...``, the tensors it reads by name, and the emitter (its notes)."""
    em = Emitter("lattice", False) if emitter is None else emitter
    out_idx = tuple(em.index() for _ in range(node.ndim))
    rhs = em.emit(node, out_idx)
    used = set(free_indices(rhs))   # (a shape operator's result index is free; its operand's are bound)
    for i, n in zip(out_idx, node.shape):
        if i not in used:
            # an output axis no operand has (a new axis of expand_dims, one broadcast_to adds): a
            # dense all-true vector gives its extent (x * true is x, NaN and -0.0 included)
            ones = all_true(n, f"one_{i.name}")
            em.tensors[ones.name] = ones
            rhs = _times(rhs, Access(ones.name, (i,)), lookup("and" if node.dtype.kind == "b" else "mul"))
    assign = Assign(Access("out", out_idx), None, rhs)
    names = {a.tensor for a in accesses(rhs)}
    return assign, {k: v for k, v in em.tensors.items() if k in names}, em


def _times(rhs, factor, op):
    """``rhs`` times ``factor`` (which does not depend on the reduced indices), inside the reductions
    at the top, so a strategy that lowers reductions only at the top still lowers it."""
    if isinstance(rhs, Reduce):
        return Reduce(rhs.op, rhs.indices, _times(rhs.body, factor, op))
    return Call(op, (rhs, factor))


def lower_node(node: Node, format=None, strategy=None, checked: bool = False, materialized=None,
               traced: bool = True, found=None):
    """Lower ``node`` as one kernel: ``(kernel, tensors)``; ``kernel(**tensors)`` computes it. If the
    strategy refuses the fused statement, reductions under operators are computed apart (and a
    default sparse output is made dense, which looplets needs for a sparse output whose fill is not 0), as
    the trace's ``retry`` steps (each refusal and what was tried instead) and ``materialize`` steps
    (each node computed apart) say. Given no strategy, lower() lowers each form by the lattice, or
    by looplets where the lattice refuses it (its kernel's trace quotes the refusal). Not ``traced`` (for a
    call, not a look at its kernel): the kernel of an expression of the same structure over tensors of the
    same facts is taken again, with no trace of its own, not emitted again (:data:`~.attempts.PREPARED`);
    ``found``: its :func:`~.attempts.structure`, where the caller has it (:func:`prepared_call`)."""
    if found is None:
        found = structure(node, format, strategy, checked) if not traced and not materialized else None
    if found is None:
        return _lowered(node, format, strategy, checked, materialized)
    key = called_key(found)
    kept = prepared(key)
    if kept is not None:
        return kept.kernel, kept.arguments(found[1])
    made: dict = {}
    kernel, tensors = _lowered(node, format, strategy, checked, made)
    if not made:   # (nothing computed apart: a value no other call's leaves would give)
        keep_prepared(key, kernel, found[1], tensors)
    return kernel, tensors


def prepared_call(node: Node, format=None, strategy=None, checked: bool = False) -> tuple:
    """``(found, key, call)``: ``node``'s :func:`~.attempts.structure` (for :func:`lower_node`), its
    :func:`~.attempts.called_key` (None without a structure), and the ``(kernel, tensors)`` :func:`lower_node`
    would take again for it (not traced), as its tensors are now, or None where it would lower it."""
    found = structure(node, format, strategy, checked)
    key = None if found is None else called_key(found)
    kept = None if key is None else prepared(key)
    return found, key, None if kept is None else (kept.kernel, kept.arguments(found[1]))


def checks_itself(kernel, tensors: dict) -> set:
    """The ids of the tensors of ``tensors`` whose coordinates ``kernel`` checks as it reads them
    (:mod:`compiler.owned_inputs`), not converted first."""
    converted = dict(kernel.lowered.conversions)
    return {id(t) for name, t in tensors.items() if name in kernel.coordinates_checked and name not in converted}


def _lowered(node: Node, format, strategy, checked: bool, materialized) -> tuple:
    """:func:`lower_node`'s ``(kernel, tensors)``, traced."""
    from ..lowering import lower
    materialized = {} if materialized is None else materialized
    refused = []
    attempts = [(False, True, False, None), (True, True, False, None), (True, False, False, None)]
    pushed: dict = {}   # (an attempt's name -> the node with shape operators moved onto their operands)
    if has_shape_ops(node):
        attempts.insert(0, (False, True, True, None))   # (first fused, shape operators and all)
        if _has_grouped_reshape(node):
            # (a CSC's rows split with its columns kept as a loop walks it against its storage
            # order; a split of its whole ravel is gathered by looplets)
            attempts.insert(1, (False, True, "whole", None))
        if _has_refinable_reshape(node):
            # (a split after a collapse that reads an input converted, or is refused: each axis split first)
            attempts.insert(1, (False, True, "refined", None))
        # (a slice of a concatenation, or a reshape of an elementwise operator, refused: the slice on the parts,
        # the reshape on the operator's operands, before the forms that compute the shape operators apart)
        pushed = {k: moved for k, moved in (("sliced", slices_pushed(node)), ("pushed", reshapes_pushed(node)))
                  if moved is not None}
        for k in pushed:
            attempts.insert(next(n for n, a in enumerate(attempts) if not a[2]), (False, True, k, None))
        if format is None and stacks_as_coo(node):
            # (scipy's sp.vstack([csr, coo]) is COO, fused or not)
            attempts = [(split, sparse, fuse, "coo" if sparse else None) for split, sparse, fuse, _ in attempts]
        elif format is None and keeps_column_order(node):
            # (a CSC's rows sliced or stacked: the result in the operands' order first, one kernel
            # writing CSC; where that is refused, CSR as for any other operand)
            attempts.insert(0, (False, True, True, "csc"))
    held = None   # (a kernel into the operands' order that gathers: kept if the next form does no better)
    key = None    # (of the choice made for the first form's statement, where it is kept: compiler.array.attempts)
    for n, (split, default_sparse, fuse, order) in enumerate(attempts):
        if held is not None and not fuse:
            return held
        em = Emitter(strategy, checked, split_reductions=split, materialized=materialized, fuse_shapes=fuse)
        assign, tensors, em = notation(pushed.get(fuse, node), em)
        if n == 0 and not materialized and not em.notes:
            key = chosen_key(node, assign, tensors, format, strategy, checked)
            kept = chosen(key)
            if kept is not None:
                return _chosen_again(node, format, strategy, checked, attempts, kept, assign, tensors, em)
        out = output_format(node, order or format, tensors) if (format is not None or default_sparse) else None
        if out is None and _computes_wider(assign, tensors, node.dtype):
            # (numpy's einsum or matmul of int32 is int32, its sum wrapping in 32 bits; the statement's
            # sum counts in int64, so the result is written into int32: the same value, wrapped)
            out = parse_format("dense", ndim=node.ndim, fill=node.fill, dtype=node.dtype.name)
        refined = PUSHED_WHY[fuse] if fuse in PUSHED_WHY else "" if fuse != "refined" or held is None else \
            REFINED_WHY if _converts_input(held[0]) else REFINED_WHY.replace("read an input converted before each call",
                                                                            FILL_ROWS_WHY)
        trace = _attempt_trace(node, format, attempts, refused, em, assign, refined)
        extra = {} if out is None else {"out": out}
        try:
            # (lower()'s cache: the same statement for the same formats is lowered once)
            # (given no strategy, a fused form whose kernel is too long to be worth lowering is refused: the
            # forms after it compute its operands apart, compiler.lowering_budget.TOO_LONG_CFIR)
            with splittable() if fuse and strategy is None else contextlib.nullcontext():
                kernel = lower(assign, strategy, checked=checked, **tensors, **extra)
            # (the strategy asked last: its capabilities are made afresh at each question)
            if _converts_input(kernel) and not kernel.shape_operators \
                    and capabilities(kernel.strategy).lowers_for_shapes:
                # (lowered again for the tensors' shapes, where the strategy says that may read no input
                # converted: the lattice's sum's terms bucketed in one kernel, compiler.lattice.bucketed_sums;
                # kept where it converts none)
                shapes = tuple(sorted((t, tuple(v.shape)) for t, v in tensors.items() if isinstance(v, Tensor)))
                shaped = lower(assign, strategy, checked=checked, options={"shapes": shapes}, **tensors, **extra)
                kernel = kernel if _converts_input(shaped) else shaped
        except (CompileError, CompilerNotFoundError, KernelError):
            raise
        except SparsescopeError as e:
            # (the statement is well formed, its shapes checked when built: the strategy refuses it,
            # as a StrategyError, or as looplets' ProgramError for an output format it cannot build)
            if split and (format is not None or not default_sparse):
                raise
            if fuse == "refined" and held is not None:
                return held
            what = "the statement with its shape operators" if fuse else "the fused statement"
            if fuse in RESHAPES_AS:
                what += f" ({RESHAPES_AS[fuse]})"
            by = f"the {strategy} strategy" if strategy else "both strategies"
            if order is not None:
                what += f" into {order.upper()} ({ORDER_WHY[order]})"
            refused.append((what, by, str(e), assign))
            continue
        if key is not None and not em.notes and not materialized:
            # (the choice, kept where no form tried materialized anything: each form before it was refused)
            keep_chosen(key, Chosen(n, tuple(refused), kernel))
        # (the cached kernel keeps its own trace and tensors)
        kernel = kernel.retraced(Trace(trace.steps + kernel.trace.steps), tensors)
        if fuse == "refined" and held is not None:
            return held if _converts_input(kernel) else (kernel, tensors)
        if held is None and fuse is True and attempts[n + 1:n + 2] == [(split, default_sparse, "refined", order)] \
                and (_converts_input(kernel) or kernel.trace.find("fill-rows")):
            # (kept unless the reshapes refined read nothing converted; a part of another fill walked as a union
            # of products under a split is many more loops than the refined reshape's, whose groups keep to rows)
            held = (kernel, tensors)
            continue
        gathers = strategy is None and bool(kernel.trace.find("gather"))
        if held is not None and gathers:
            return held
        if order is not None and gathers and n + 1 < len(attempts) and attempts[n + 1][2]:
            # (given no strategy, a kernel writing the operands' order that gathers an operand, locating
            # each coordinate of its extents, is kept only where the default result's does no better)
            held = (kernel, tensors)
            refused.append((f"the statement with its shape operators into {order.upper()} ({ORDER_WHY[order]})",
                            f"the default choice of strategy (the {kernel.strategy} kernel gathers)",
                            "an operand located at each coordinate of its extents: "
                            + "; ".join(s.note for s in kernel.trace.find("gather")), assign))
            continue
        return kernel, tensors
    if held is not None:
        return held
    raise AssertionError("unreachable")


def _attempt_trace(node: Node, format, attempts: list, refused: list, em: Emitter, assign: Assign,
                   refined: str = "") -> Trace:
    """The trace of the form of ``node`` that ``em`` emitted as ``assign``, before its kernel's steps: a
    ``retry`` step per form ``refused`` before it, a ``materialize`` step per node computed apart, and the
    ``array`` step (``refined``: what it adds of the reshapes)."""
    trace = Trace()
    for (what, by, why, statement), instead in zip(refused, attempts[1:]):
        # (a refused form is no materialization: the next form may still be one kernel; the
        # first line says what was tried instead, the explorer's step header shows it)
        instead = attempt_text(node, format, *instead)
        trace.record("retry", before=statement, note=f"{what}: refused by {by}; tried instead: {instead}\n{why}",
                     data={"refused": what, "by": by, "why": why, "instead": instead})
    for what, why, kernel in em.notes:
        trace.record("materialize", after=kernel.program if kernel is not None else None,
                     note=f"{what} materialized: {why}")
    shown = expression_text(node, em.name)
    trace.record("array", before=shown, after=assign, note=f"the array expression {shown} as one statement{refined}",
                 artifacts=[expression_artifact(node, em, assign)])
    return trace


def _chosen_again(node: Node, format, strategy, checked: bool, attempts: list, chosen: Chosen, assign: Assign,
                  tensors: dict, em: Emitter) -> tuple:
    """``(kernel, tensors)`` of :func:`lower_node` where the first form of ``node``, emitted as ``assign`` over
    ``tensors`` by ``em``, is a statement whose choice was kept (``chosen``): that attempt's form emitted
    again where it was not the first, and its kernel with the trace it had then (its refusals, the array step)."""
    if chosen.attempt:
        split, _, fuse, _ = attempts[chosen.attempt]
        em = Emitter(strategy, checked, split_reductions=split, fuse_shapes=fuse)
        assign, tensors, em = notation(node, em)
    trace = _attempt_trace(node, format, attempts, list(chosen.refused), em, assign)
    kernel = chosen.kernel
    return kernel.retraced(Trace(trace.steps + kernel.trace.steps), tensors), tensors


def _computes_wider(assign: Assign, tensors: dict, dtype) -> bool:
    """Whether ``assign``'s right side is of another dtype than the array expression's ``dtype``
    (a sum of int32 terms counts in int64, numpy's einsum of int32 arrays is int32)."""
    try:
        return expr_dtype(assign.rhs, lambda a: tensors[a.tensor].dtype) != dtype
    except (KeyError, AttributeError, SparsescopeError):
        return False


def _converts_input(kernel) -> bool:
    """Whether ``kernel`` reads an input converted before each call.

    >>> from compiler import lower
    >>> _converts_input(lower("y[i] = A[j, i]", A="csr", y="dense"))
    False
    """
    return any(name != kernel.lowered.output for name, _ in kernel.lowered.conversions)


def _reshape_groups(node: ShapeOp) -> tuple:
    """The groups of a reshape as :meth:`Emitter.emit_reshape` fuses it (no extent-1 axis in one), each
    group's axes numbered as in the operand and the result."""
    (child,) = node.args
    olds, news, groups = groups_apart_from_ones(child.shape, node.shape, has_shape_ops(child))
    return tuple((tuple(olds[x] for x in a), tuple(news[y] for y in b)) for a, b in groups)


def _has_grouped_reshape(node: Node) -> bool:
    """Whether ``node`` has a reshape of more than one group of axes (``(6, 4) -> (2, 3, 4)``)."""
    if isinstance(node, ShapeOp) and node.kind == "reshape" and len(_reshape_groups(node)) > 1:
        return True
    return any(_has_grouped_reshape(c) for c in node.children())


def _has_refinable_reshape(node: Node) -> bool:
    """Whether ``node`` has a reshape with a group of several axes to several that splits each axis into pieces
    both sides' axes divide (:func:`refined_group`: ``(2, 12) -> (6, 4)``)."""
    if isinstance(node, ShapeOp) and node.kind == "reshape":
        old, new = node.args[0].shape, node.shape
        if any(len(a) > 1 and len(b) > 1 and refined_group(tuple(old[x] for x in a), tuple(new[y] for y in b))
               for a, b in _reshape_groups(node)):
            return True
    return any(_has_refinable_reshape(c) for c in node.children())


__all__ = ["Emitter", "collapse_chain", "split_chain", "notation", "lower_node", "output_format", "keeps_column_order",
           "stack_reduced"]
